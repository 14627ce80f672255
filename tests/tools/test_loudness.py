"""loudness: BS.1770 level and its change over time on signals whose level is set by construction."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.loudness import LoudnessArgs, loudness

SR = synth.SR


def sine(peak_dbfs: float, seconds: float, freq: float = 997.0, sr: int = SR) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (10 ** (peak_dbfs / 20) * np.sin(2 * np.pi * freq * t)).astype(np.float32)


@pytest.fixture(scope="module")
def sines(audio_dir, helpers):
    return {db: helpers.write(sine(db, 3.0), audio_dir / f"sine{db}.wav") for db in (-20, -10)}


def test_loudness_10_db_gain_gives_10_lu_within_1_lu(sines, tool_runner):
    quiet = tool_runner(loudness, {}, sines[-20]).output["integrated_lufs"]
    loud = tool_runner(loudness, {}, sines[-10]).output["integrated_lufs"]
    assert abs((loud - quiet) - 10.0) <= 1.0


def test_loudness_absolute_997_hz_sine_within_0_5_lu(sines, tool_runner):
    """BS.1770: a mono 997 Hz sine at -20 dBFS peak reads -23.0 LUFS (0 dBFS peak sine = -3.01 LUFS)."""
    assert abs(tool_runner(loudness, {}, sines[-20]).output["integrated_lufs"] - (-23.01)) <= 0.5


def test_loudness_stereo_44k1_sums_channels_within_0_5_lu(audio_dir, tool_runner):
    """Identical L/R at -20 dBFS peak: the two channel powers add, giving -20.0 LUFS."""
    y = sine(-20, 3.0, sr=44100)
    path = aio.write_wav(audio_dir / "stereo.wav", np.stack([y, y]), 44100)
    out = tool_runner(loudness, {}, path).output
    assert out["channels_measured"] == 2
    assert abs(out["integrated_lufs"] - (-20.0)) <= 0.5


@pytest.fixture(scope="module")
def step_up(audio_dir, helpers):
    """2 s at -26 dBFS peak, then 2 s at -10 dBFS peak (16 dB louder in the second half)."""
    return helpers.write(np.concatenate([sine(-26, 2.0, 440), sine(-10, 2.0, 440)]), audio_dir / "step_up.wav")


def test_loudness_louder_second_half_is_increasing(step_up, tool_runner):
    res = tool_runner(loudness, {}, step_up)
    out = res.output
    assert out["trend"] == "increasing" and out["change_db"] >= 3.0
    assert out["loudest"]["time_s"] >= 2.0  # loudest moment lies in the louder half
    assert out["quietest_active"]["time_s"] <= 2.0
    assert "gets louder" in res.claims[1].text


def test_loudness_quieter_second_half_is_decreasing(audio_dir, helpers, tool_runner):
    path = helpers.write(np.concatenate([sine(-10, 2.0, 440), sine(-26, 2.0, 440)]), audio_dir / "step_down.wav")
    out = tool_runner(loudness, {}, path).output
    assert out["trend"] == "decreasing" and out["change_db"] <= -3.0


def test_loudness_constant_tone_is_steady(tone_clip, tool_runner):
    out = tool_runner(loudness, {}, tone_clip).output
    assert out["trend"] == "steady" and abs(out["change_db"]) < 1.0


def test_loudness_alternating_loud_and_quiet_is_fluctuating(audio_dir, helpers, tool_runner):
    """0.5 s alternations 20 dB apart, no net change: fluctuating, not a trend."""
    y = np.concatenate([np.concatenate([sine(-10, 0.5, 440), sine(-30, 0.5, 440)]) for _ in range(4)])
    out = tool_runner(loudness, {}, helpers.write(y, audio_dir / "alternating.wav")).output
    assert out["trend"] == "fluctuating"


def test_loudness_silence_says_silent(silence_clip, tool_runner):
    res = tool_runner(loudness, {}, silence_clip)
    assert res.output["integrated_lufs"] is None
    assert "silent" in res.claims[0].text


def test_loudness_curve_is_compact_and_range_needs_10_s(audio_dir, helpers, tool_runner):
    path = helpers.write(sine(-20, 30.0, 440), audio_dir / "long30.wav")
    out = tool_runner(loudness, {}, path).output
    assert len(out["curve"]["time_s"]) <= 120 and len(out["curve"]["lufs"]) == len(out["curve"]["time_s"])
    assert out["loudness_range_lu"] is not None and out["loudness_range_lu"] < 1.0  # a steady tone
    short = tool_runner(loudness, {}, helpers.write(sine(-20, 2.0, 440), audio_dir / "short2.wav")).output
    assert short["loudness_range_lu"] is None


def test_loudness_args_are_bounded():
    with pytest.raises(pydantic.ValidationError):
        LoudnessArgs(window_s=0.01)
    with pytest.raises(pydantic.ValidationError):
        LoudnessArgs(window_s=0.4, hop_s=1.0)
