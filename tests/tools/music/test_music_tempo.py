"""tempo: on click tracks and General MIDI drum patterns at known tempi, noise and speech."""

from __future__ import annotations

import pytest

from audiomind import synth
from audiomind.tools.music.tempo import tempo

BPMS = (66, 90, 120, 150)


@pytest.fixture(scope="module")
def clicks(audio_dir):
    return {b: synth.click_track(b, 6.0, audio_dir / f"click{b}.wav") for b in BPMS}


@pytest.fixture(scope="module")
def drums(audio_dir):
    """GM drum kit (channel 10): kick/snare alternating on the beat, closed hi-hat on every beat."""
    return {b: synth.drum_pattern(b, 6.0, audio_dir / f"drums{b}.wav") for b in BPMS}


@pytest.mark.parametrize("bpm", BPMS)
def test_tempo_click_track_within_4_percent(clicks, tool_runner, bpm):
    res = tool_runner(tempo, {}, clicks[bpm])
    out = res.output
    assert abs(out["bpm"] - bpm) / bpm <= 0.04
    assert out["clear_beat"] and out["regularity"] == "regular"
    # tracked beats fall on the clicks (every 60/bpm s from 0) within 50 ms
    period = 60.0 / bpm
    assert all(abs(b / period - round(b / period)) * period <= 0.05 for b in out["beat_times_s"])


@pytest.mark.parametrize("bpm", BPMS)
def test_tempo_drum_pattern_within_4_percent(drums, tool_runner, bpm):
    out = tool_runner(tempo, {}, drums[bpm]).output
    assert abs(out["bpm"] - bpm) / bpm <= 0.04
    assert out["clear_beat"]


def test_tempo_noise_and_speech_have_no_clear_beat(noise, fox_clip, tool_runner):
    for path in (noise, fox_clip.path):
        res = tool_runner(tempo, {}, path)
        assert not res.output["clear_beat"]
        assert res.claims[0].text.startswith("No clear steady beat")
