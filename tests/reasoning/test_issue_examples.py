"""The five questions that exposed the old keyword policy, rebuilt from the commands in the issue that
reported them (wording, voices and noise as given there, not as the policy was written for)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from audiomind import audio as audio_io
from audiomind import synth

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("issue-examples")
    out = {}
    for name, text in {
        "camera": "Please bring your camera. The meeting has been moved to Thursday afternoon.",
        "laptop": "Please remember to bring your laptop. The meeting has been moved to Saturday afternoon.",
    }.items():
        subprocess.run(["flite", "-voice", "rms", "-t", text, "-o", str(d / f"{name}.wav")], check=True)
        out[name] = d / f"{name}.wav"
    # five 0.15 s 1 kHz beeps, gaps 0.25-0.7 s, white noise at amplitude 0.01 (about -40 dBFS)
    rng = np.random.default_rng(3)
    parts = [synth.silence(0.4)]
    for gap in (0.25, 0.7, 0.4, 0.55, 0.3):
        parts += [synth.tone(1000.0, 0.15), synth.silence(gap)]
    y = np.concatenate(parts)
    y = y + 0.01 * rng.standard_normal(len(y))
    out["beeps"] = audio_io.write_wav(d / "beeps.wav", y.astype(np.float32), synth.SR)
    text = "The committee will review every application before the end of the month."
    for label, wpm in (("slow", 95), ("fast", 280)):
        subprocess.run(["espeak-ng", "-s", str(wpm), "-w", str(d / f"{label}.wav"), text], check=True)
        out[label] = d / f"{label}.wav"
    out["up"] = synth.melody(["C4", "G4"], d / "up.wav", note_s=0.8, gap_s=0.3)
    out["down"] = synth.melody(["A4", "D4"], d / "down.wav", note_s=0.8, gap_s=0.3)
    return out


def _check(r, expected):
    assert r.outcome.status == "answered", r.outcome
    assert r.choice == expected, f"{r.choice!r} != {expected!r}: {r.rationale}"
    assert r.confidence is not None and r.confidence_reason


def test_spoken_day_is_read_from_the_transcript(agent, clips):
    r = agent.ask(clips["camera"], "To which day has the meeting been moved?",
                  ["Monday", "Tuesday", "Thursday", "Saturday"])
    _check(r, "Thursday")


def test_requested_object_is_read_from_the_transcript(agent, clips):
    r = agent.ask(clips["laptop"], "What should the listener bring?", ["umbrella", "bicycle", "camera", "laptop"])
    _check(r, "laptop")


def test_beeps_are_counted_above_the_noise_floor(agent, clips):
    r = agent.ask(clips["beeps"], "How many beeps can you hear?", ["3", "4", "5", "6"])
    _check(r, "5")


@pytest.mark.parametrize("label,expected", [("slow", "Slow"), ("fast", "Fast")])
def test_speech_rate_is_measured_not_tag_matched(agent, clips, label, expected):
    r = agent.ask(clips[label], "Is the speaker talking fast or slowly?",
                  ["Fast", "Slow", "There is no speech", "Whispered"])
    _check(r, expected)


@pytest.mark.parametrize("clip,expected", [("up", "The second note is higher"), ("down", "The second note is lower")])
def test_two_notes_are_compared_by_pitch(agent, clips, clip, expected):
    r = agent.ask(clips[clip], "How does the second compare with the first?",
                  ["The second note is higher", "The second note is lower", "Both notes have the same pitch",
                   "The second note is louder"])
    _check(r, expected)
    assert not any(c.tool == "crop" for c in r.state.tool_calls), "'the first' names a note, not a time span"
