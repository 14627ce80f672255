"""pitch, tempo, key, chords, notes: on audio whose musical content is true by construction (sine tones,
click tracks, General MIDI drum patterns and piano chords/melodies rendered by fluidsynth)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools.music import (
    ChordsArgs,
    PitchArgs,
    chords,
    key,
    notes,
    pitch,
    tempo,
)

SR = synth.SR
BPMS = (66, 90, 120, 150)


def chirp(f0: float, f1: float, seconds: float, amplitude: float = 0.3) -> np.ndarray:
    """Sine whose frequency glides exponentially from f0 to f1."""
    t = np.arange(int(seconds * SR)) / SR
    k = np.log(f1 / f0) / seconds
    return (amplitude * np.sin(2 * np.pi * f0 * (np.exp(k * t) - 1) / k)).astype(np.float32)


@pytest.fixture(scope="module")
def sines(audio_dir, helpers):
    return {
        f: helpers.write(synth.tone(f, 2.0, amplitude=0.3), audio_dir / f"sine{f}.wav")
        for f in (220, 440, 880)
    }


@pytest.fixture(scope="module")
def melody(audio_dir):
    """FluidR3 piano C4, E4, G4, C5, each 0.5 s, starting at 0.5, 1.0, 1.5 and 2.0 s."""
    return synth.melody(["C4", "E4", "G4", "C5"], audio_dir / "melody_ceg.wav", note_s=0.5, lead_s=0.5)


@pytest.fixture(scope="module")
def noise(audio_dir, helpers):
    rng = np.random.default_rng(7)
    return helpers.write(
        (0.1 * rng.standard_normal(4 * SR)).astype(np.float32), audio_dir / "white_noise.wav"
    )


# ------------------------------------------------------------------------------------------------ pitch


@pytest.mark.parametrize("freq", [220, 440, 880])
def test_pitch_sine_within_2_percent(sines, tool_runner, freq):
    res = tool_runner(pitch, {}, sines[freq])
    out = res.output
    assert abs(out["median_f0_hz"] - freq) / freq <= 0.02
    assert out["voiced_ratio"] >= 0.9
    assert out["trend"] == "flat"
    assert out["median_note"] == {220: "A3", 440: "A4", 880: "A5"}[freq]


def test_pitch_glides_read_as_rising_and_falling(audio_dir, helpers, tool_runner):
    up = tool_runner(pitch, {}, helpers.write(chirp(200, 400, 2.0), audio_dir / "glide_up.wav")).output
    down = tool_runner(pitch, {}, helpers.write(chirp(400, 200, 2.0), audio_dir / "glide_down.wav")).output
    assert up["trend"] == "rising" and abs(up["change_semitones"] - 12) <= 1.5  # one octave up
    assert down["trend"] == "falling" and abs(down["change_semitones"] + 12) <= 1.5
    assert up["start_f0_hz"] < up["end_f0_hz"]


def test_pitch_window_selects_the_second_tone(audio_dir, helpers, tool_runner):
    path = helpers.write(
        np.concatenate([synth.tone(220, 1.0, 0.3), synth.tone(440, 1.0, 0.3)]), audio_dir / "two.wav"
    )
    out = tool_runner(pitch, {"start_s": 1.1, "end_s": 2.0}, path).output
    assert abs(out["median_f0_hz"] - 440) / 440 <= 0.02
    assert out["window_s"] == [1.1, 2.0]
    assert out["contour"]["time_s"][0] >= 1.1  # times stay relative to the artifact


def test_pitch_melody_rises_through_its_notes(melody, tool_runner):
    res = tool_runner(pitch, {}, melody)
    assert res.output["trend"] == "rising"
    assert {n["note"] for n in res.output["main_notes"]} >= {"C4", "E4", "G4", "C5"}
    assert "rises" in res.claims[1].text


def test_pitch_on_noise_and_silence_claims_no_pitch(noise, silence_clip, tool_runner):
    for path in (noise, silence_clip):
        res = tool_runner(pitch, {}, path)
        assert res.output["median_f0_hz"] is None
        assert res.claims[0].text.startswith("No stable pitch")


def test_pitch_rejects_bad_ranges_and_windows():
    with pytest.raises(pydantic.ValidationError):
        PitchArgs(fmin_hz=400, fmax_hz=500)
    with pytest.raises(pydantic.ValidationError):
        PitchArgs(start_s=2.0, end_s=1.0)


# ------------------------------------------------------------------------------------------------ tempo


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


# ------------------------------------------------------------------------------------------------ notes

needs_basic_pitch = pytest.mark.skipif(
    importlib.util.find_spec("basic_pitch") is None,
    reason="basic-pitch (the notes model carrier) is not installed",
)


@needs_basic_pitch
def test_notes_exact_on_c4_e4_g4_c5(melody, tool_runner):
    res = tool_runner(notes, {}, melody)
    out = res.output
    assert out["sequence"] == ["C4", "E4", "G4", "C5"]  # exact: no missed, extra or wrong notes
    for n, start in zip(out["notes"], (0.5, 1.0, 1.5, 2.0)):
        assert abs(n["start_s"] - start) <= 0.05  # onsets within 50 ms
        assert n["end_s"] - n["start_s"] >= 0.3
    assert [n["pitch_midi"] for n in out["notes"]] == [60, 64, 67, 72]
    assert out["lowest"] == "C4" and out["highest"] == "C5"
    assert "C4 0.49" in res.claims[0].text or "C4 0.5" in res.claims[0].text


@needs_basic_pitch
def test_notes_window_and_range_filter(melody, noise, tool_runner):
    out = tool_runner(notes, {"start_s": 0.9, "end_s": 2.0}, melody).output
    assert {"E4", "G4"} <= set(out["sequence"]) and "C5" not in out["sequence"]  # C4 may still ring at 0.9 s
    assert all(n["start_s"] >= 0.9 for n in out["notes"])
    out = tool_runner(notes, {"max_note": "F4"}, melody).output
    assert out["sequence"] == ["C4", "E4"]
    assert tool_runner(notes, {}, noise).output["count"] == 0


# ------------------------------------------------------------------------------------------- boundaries


def test_music_claims_stay_within_their_boundary_and_outputs_are_plain_json(melody, tool_runner):
    """Pitch/tempo/key/chords describe musical structure; none names an instrument, a person or a mood.
    Outputs are plain JSON (no numpy scalars), as traces and the tool cache need."""
    banned = ("piano", "instrument", "speaker", "singer", "male", "female", "happy", "sad", "emotion")
    fns = [pitch, tempo, key, chords] + ([notes] if importlib.util.find_spec("basic_pitch") else [])
    for fn in fns:
        res = tool_runner(fn, {}, melody)
        json.dumps(res.model_dump(), allow_nan=False)
        for claim in res.claims:
            assert not any(w in claim.text.lower() for w in banned), (fn.__name__, claim.text)
