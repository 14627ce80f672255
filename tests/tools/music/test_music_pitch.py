"""pitch: on sine tones, glides, a piano melody, noise and silence (true by construction)."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools.music.pitch import PitchArgs, pitch

SR = synth.SR


def chirp(f0: float, f1: float, seconds: float, amplitude: float = 0.3) -> np.ndarray:
    """Sine whose frequency glides exponentially from f0 to f1."""
    t = np.arange(int(seconds * SR)) / SR
    k = np.log(f1 / f0) / seconds
    return (amplitude * np.sin(2 * np.pi * f0 * (np.exp(k * t) - 1) / k)).astype(np.float32)



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


def test_a_low_band_limited_voice_gets_a_pitch(tmp_path, tool_runner):
    """flite's kal voice at 8 kHz, f0 near 90 Hz: pYIN's HMM leaves every frame unvoiced; the autocorrelation
    fallback finds the voice, in the male band, and says it was used (noise stays unpitched: see above)."""
    import subprocess

    wav = tmp_path / "kal.wav"
    subprocess.run(["flite", "-voice", "kal", "-t", "The parking lot is full today.", "-o", str(wav)], check=True)
    res = tool_runner(pitch, {}, wav)
    assert res.output["median_f0_hz"] is not None and 70 <= res.output["median_f0_hz"] <= 130, res.output
    assert "autocorrelation" in res.output["method"]
