"""Real end-to-end offline runs on real audio: the default stack (rule planner + cascade front end +
embedded models) answers each kind of question correctly. Audio is synthesised here, true by
construction, and differs from the shipped examples (which are checked separately)."""

from __future__ import annotations

import json

import pytest

from audiomind import synth
from audiomind.api import AudioMind
from audiomind.resources import examples_dir


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    return AudioMind(trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def audio(tmp_path_factory):
    d = tmp_path_factory.mktemp("e2e")
    return {
        "speech": synth.speech("Please remember to water the plants on Friday morning.", d / "speech.wav", voice="rms"),
        "sound": synth.concat([synth.sound_file("phone-incoming-call", d / "ring.wav")] * 2, d / "ring2.wav"),
        "three_voices": synth.conversation(
            [("slt", "I think we should leave early tomorrow to avoid the traffic."),
             ("awb", "That sounds sensible, the roads are always busy on Mondays."),
             ("rms", "I can drive if you want, my car has plenty of room."),
             ("slt", "Great, then we will meet at seven in the morning.")],
            d / "three.wav"),
        "knocks": synth.beeps(7, d / "seven.wav", freq_hz=440.0, beep_s=0.15, gap_s=0.45),
    }


def check(result, expected: str) -> None:
    assert result.outcome.status == "answered", result.outcome
    assert result.choice == expected, f"{result.choice!r} != {expected!r}: {result.rationale}"
    assert result.rationale and result.state.final_answer.cited_evidence_ids


def test_speech_content(agent, audio):
    r = agent.ask(audio["speech"], "What does the speaker ask the listener to do?",
                  ["Water the plants on Friday", "Call the doctor on Monday", "Buy bread this evening",
                   "Close the windows at night"])
    check(r, "Water the plants on Friday")
    assert any(c.tool == "asr" for c in r.state.successful_calls())


def test_sound_event(agent, audio):
    r = agent.ask(audio["sound"], "Which sound can be heard in the recording?",
                  ["Church bells", "A phone ringing", "A barking dog", "Applause"])
    check(r, "A phone ringing")


def test_speaker_count(agent, audio):
    r = agent.ask(audio["three_voices"], "How many different people speak in this clip?", ["1", "2", "3", "4"])
    check(r, "3")
    assert any(c.tool == "speaker_count" for c in r.state.successful_calls())


def test_counting(agent, audio):
    r = agent.ask(audio["knocks"], "How many times does the tone sound?", ["5", "6", "7", "8"])
    check(r, "7")


@pytest.mark.parametrize("item", [json.loads(x) for x in (examples_dir() / "questions.jsonl").read_text().splitlines()],
                         ids=lambda i: i["id"])
def test_shipped_examples(agent, item):
    r = agent.ask(examples_dir() / item["audio"], item["question"], item["choices"])
    check(r, item["answer"])


def test_cached_rerun_reuses_tool_results(agent, audio):
    q = ("How many times does the tone sound?", ["5", "6", "7", "8"])
    agent.ask(audio["knocks"], *q)
    again = agent.ask(audio["knocks"], *q)
    statuses = {c.status.value for c in again.state.tool_calls}
    assert statuses == {"cached"}, statuses


def test_relisten_on_a_crop_for_a_time_focused_question(agent, tmp_path):
    """'At the beginning' -> the rule planner crops the opening, the front end re-listens to the crop,
    and the answer rests on what the crop contains (a ring), not on the whole clip (mostly speech)."""
    ring = synth.sound_file("phone-incoming-call", tmp_path / "ring.wav")
    talk = synth.speech("Hello, this is the front desk. Your table is ready whenever you are.", tmp_path / "t.wav",
                        voice="awb")
    clip = synth.concat([ring, talk], tmp_path / "ring_then_talk.wav", gap_s=0.3)
    r = agent.ask(clip, "What sound is heard at the beginning of the recording?",
                  ["A person speaking", "A telephone ringing", "A dog barking"])
    st = r.state
    crops = [c for c in st.successful_calls("crop") if c.issued_by == "planner"]
    assert crops and crops[0].derived_artifact_ids
    crop_id = crops[0].derived_artifact_ids[0]
    crop = st.artifact(crop_id)
    assert crop.derived_from == "a0" and crop.operation and crop.duration_s < st.original.duration_s
    assert [o.artifact_ids for o in st.observations if o.kind == "relisten"] == [[crop_id]]
    check(r, "A telephone ringing")
