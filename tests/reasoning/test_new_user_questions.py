"""Questions asked the way a new user would, on real audio (flite, espeak-ng and a freedesktop sound), that
the policy answered with a guess before its verifiers covered them: a number said aloud as the answer, and
a sound placed before or after a voice with choices that state only the relation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from audiomind.state import CONFIDENT_AT

pytestmark = pytest.mark.slow

CHIME = Path("/usr/share/sounds/freedesktop/stereo/complete.oga")


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    if not CHIME.exists():
        pytest.skip(f"{CHIME} is not installed (Debian package sound-theme-freedesktop)")
    d = tmp_path_factory.mktemp("new-user")
    run = lambda *cmd: subprocess.run(cmd, check=True, capture_output=True)  # noqa: E731
    run("flite", "-voice", "slt", "-t", "The library will close at eight tonight because of the holiday.", "-o",
        str(d / "library.wav"))
    run("espeak-ng", "-v", "en-us+m3", "-w", str(d / "talk.wav"), "Attention please, the store closes in ten minutes.")
    run("sox", str(CHIME), "-r", "22050", "-c", "1", str(d / "chime.wav"))
    run("sox", str(d / "talk.wav"), str(d / "chime.wav"), str(d / "talk_then_chime.wav"))
    run("sox", str(d / "chime.wav"), str(d / "talk.wav"), str(d / "chime_then_talk.wav"))
    run("flite", "-voice", "kal", "-t", "The parking lot is full today.", "-o", str(d / "man8k.wav"))
    run("flite", "-voice", "slt", "-t", "Then we will park on the street.", "-o", str(d / "woman.wav"))
    run("sox", str(d / "man8k.wav"), "-r", "16000", str(d / "man.wav"))
    run("sox", str(d / "woman.wav"), "-r", "16000", str(d / "woman16.wav"))
    run("sox", str(d / "man.wav"), str(d / "woman16.wav"), str(d / "man_then_woman.wav"))
    run("sox", "-n", "-r", "16000", str(d / "hi.wav"), "synth", "0.6", "sine", "659", "gain", "-6")
    run("sox", "-n", "-r", "16000", str(d / "lo.wav"), "synth", "0.6", "sine", "392", "gain", "-6")
    run("sox", "-n", "-r", "16000", str(d / "gap.wav"), "trim", "0", "0.4")
    run("sox", str(d / "hi.wav"), str(d / "gap.wav"), str(d / "lo.wav"), str(d / "high_then_low.wav"))
    return d


def test_a_spoken_hour_is_read_from_the_transcript(agent, clips):
    r = agent.ask(clips / "library.wav", "Until what hour is the library open today?",
                  ["six", "seven", "eight", "nine"])
    assert r.choice == "eight" and r.confidence >= CONFIDENT_AT, r.rationale


@pytest.mark.parametrize("clip,question,choices,want", [
    ("talk_then_chime", "Is the chime played ahead of the spoken message or after it?",
     ["Ahead of it", "After it", "There is no chime"], "After it"),
    ("chime_then_talk", "Does the person start talking before the chime or after it?",
     ["Before it", "After it", "At the same moment"], "After it"),
    ("chime_then_talk", "What comes first, the chime or the voice?", ["The chime", "The voice"], "The chime"),
    ("talk_then_chime", "Which is heard last: the jingle or the speaker?", ["The jingle", "The speaker", "Neither"],
     "The jingle"),
])
def test_a_sound_placed_against_the_voice(agent, clips, clip, question, choices, want):
    r = agent.ask(clips / f"{clip}.wav", question, choices)
    assert r.choice == want, r.rationale
    assert r.confidence >= CONFIDENT_AT, r.confidence_reason


def test_the_opening_voice_a_low_voice_pyin_misses(agent, clips):
    """flite kal (8 kHz, f0 near 90 Hz) then flite slt: 'opening' names the first voice, and the pitch tool's
    autocorrelation fallback hears the low voice pYIN leaves unvoiced."""
    r = agent.ask(clips / "man_then_woman.wav", "Is the opening speaker a man or a woman?",
                  ["A man", "A woman", "Nobody speaks"])
    assert r.choice == "A man" and r.confidence >= CONFIDENT_AT, r.rationale


def test_compared_with_the_first_the_subject_is_the_other(agent, clips):
    r = agent.ask(clips / "high_then_low.wav", "Compared with the opening tone, is the closing one higher or lower?",
                  ["Higher", "Lower", "Identical"])
    assert r.choice == "Lower" and r.confidence >= CONFIDENT_AT, r.rationale
