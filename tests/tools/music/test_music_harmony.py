"""key and chords: on FluidR3 piano triad progressions in known keys, and noise."""

from __future__ import annotations

import pydantic
import pytest

from audiomind import synth
from audiomind.tools.music.harmony import ChordsArgs, chords, key

# -------------------------------------------------------------------------------------------------- key

PROGRESSIONS = {
    ("C", "major"): ["C", "F", "G", "C"],
    ("G", "major"): ["G", "C", "D", "G"],
    ("A", "minor"): ["Am", "Dm", "Em", "Am"],
    ("E", "minor"): ["Em", "Am", "Bm", "Em"],
    ("D", "minor"): ["Dm", "Gm", "Am", "Dm"],
}


@pytest.fixture(scope="module")
def progressions(audio_dir):
    """I-IV-V-I (major) and i-iv-v-i (minor) block triads on FluidR3 piano, 1 s each, root doubled below."""
    return {k: synth.triads(p, audio_dir / f"prog_{k[0]}_{k[1]}.wav") for k, p in PROGRESSIONS.items()}


@pytest.mark.parametrize("expected", list(PROGRESSIONS), ids=[f"{t}_{m}" for t, m in PROGRESSIONS])
def test_key_of_triad_progressions(progressions, tool_runner, expected):
    res = tool_runner(key, {}, progressions[expected])
    out = res.output
    assert out["mode"] == expected[1]  # the brief's requirement: the mode is right
    assert out["tonic"] == expected[0]
    assert out["key"] == f"{expected[0]} {expected[1]}" and out["clear_key"]
    assert out["runner_up"]["correlation"] < out["correlation"]
    assert res.claims[0].text.startswith(f"Estimated key {expected[0]} {expected[1]}")


def test_key_noise_has_no_clear_key(noise, tool_runner):
    res = tool_runner(key, {}, noise)
    assert not res.output["clear_key"] and res.claims[0].text.startswith("No clear key")


# ----------------------------------------------------------------------------------------------- chords


@pytest.fixture(scope="module")
def cfgc(audio_dir):
    """C, F, G, C triads spanning [0.5, 1.5), [1.5, 2.5), [2.5, 3.5), [3.5, 4.5) s."""
    return synth.triads(["C", "F", "G", "C"], audio_dir / "cfgc.wav", chord_s=1.0, lead_s=0.5)


def test_chords_c_f_g_c_segments_within_half_a_second(cfgc, tool_runner):
    out = tool_runner(chords, {}, cfgc).output
    segs = [s for s in out["segments"] if s["chord"] != "N"]
    assert [s["chord"] for s in segs] == ["C", "F", "G", "C"]
    for s, start in zip(segs, (0.5, 1.5, 2.5, 3.5)):
        assert abs(s["start_s"] - start) <= 0.5
        assert abs(s["end_s"] - (start + 1.0)) <= 0.5
    assert out["distinct_chords"] == ["C", "F", "G"] and out["n_chord_changes"] == 3
    assert out["segments"][0]["chord"] == "N"  # the 0.5 s lead silence is no chord


def test_chords_minor_triads(progressions, tool_runner):
    out = tool_runner(chords, {}, progressions[("A", "minor")]).output
    assert out["sequence"] == ["Am", "Dm", "Em", "Am"]


def test_chords_window_and_unpitched_audio(cfgc, noise, tool_runner):
    out = tool_runner(chords, {"start_s": 1.6, "end_s": 2.4}, cfgc).output
    assert out["sequence"] == ["F"]
    res = tool_runner(chords, {}, noise)
    assert res.output["sequence"] == [] and res.claims[0].text.startswith("No triad-like harmony")


def test_chords_args_bounds():
    with pytest.raises(pydantic.ValidationError):
        ChordsArgs(switch_penalty=-1)
