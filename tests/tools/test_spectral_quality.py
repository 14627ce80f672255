"""spectral (shape numbers) and speech_quality (DNSMOS) on signals whose spectra / degradations are set by
construction."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pydantic
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.quality import speech_quality
from audiomind.tools.spectral import SpectralArgs, spectral

SR = synth.SR


def white(seconds: float, amplitude: float = 0.1, seed: int = 0, sr: int = SR) -> np.ndarray:
    return (amplitude * np.random.default_rng(seed).standard_normal(int(seconds * sr))).astype(np.float32)


def band_noise(lo: float, hi: float, seconds: float = 2.0, seed: int = 1) -> np.ndarray:
    """White noise with everything outside [lo, hi) Hz zeroed in the spectrum."""
    y = white(seconds, seed=seed)
    spec = np.fft.rfft(y)
    f = np.fft.rfftfreq(len(y), 1 / SR)
    spec[(f < lo) | (f >= hi)] = 0
    out = np.fft.irfft(spec, len(y))
    return (0.3 * out / np.max(np.abs(out))).astype(np.float32)


# --------------------------------------------------------------------------------------------- spectral


@pytest.mark.parametrize("freq", [440, 1000, 3000])
def test_spectral_sine_centroid_within_3_percent_and_flatness_near_zero(
    audio_dir, helpers, tool_runner, freq
):
    out = tool_runner(
        spectral, {}, helpers.write(synth.tone(freq, 2.0, 0.3), audio_dir / f"sp_tone{freq}.wav")
    ).output
    assert abs(out["centroid_hz"]["median"] - freq) / freq <= 0.03
    assert out["flatness"]["median"] < 0.01
    assert (
        abs(out["zero_crossing_rate"]["median"] - 2 * freq / SR) <= 0.01
    )  # a sine crosses zero twice a period


def test_spectral_white_noise_is_flat_with_half_its_energy_above_4_khz(audio_dir, helpers, tool_runner):
    """White noise at 16 kHz: flat 0-8 kHz, so 4-8 kHz holds ~50% of the energy, <250 Hz ~3%; the centroid is
    ~4 kHz; a power-spectrum flatness of one periodogram frame is ~0.56 (e^-gamma)."""
    out = tool_runner(spectral, {}, helpers.write(white(3.0), audio_dir / "sp_white.wav")).output
    bands = out["band_energy_ratio"]
    assert abs(bands["high_above_4000_hz"] - 0.5) <= 0.03
    assert abs(bands["low_below_250_hz"] - 250 / 8000) <= 0.01
    assert abs(out["centroid_hz"]["median"] - 4000) <= 200
    assert 0.45 <= out["flatness"]["median"] <= 0.65


def test_spectral_band_ratios_follow_where_the_energy_is(audio_dir, helpers, tool_runner):
    low = tool_runner(spectral, {}, helpers.write(band_noise(50, 200), audio_dir / "sp_low.wav")).output
    high = tool_runner(spectral, {}, helpers.write(band_noise(5000, 7000), audio_dir / "sp_high.wav")).output
    assert low["band_energy_ratio"]["low_below_250_hz"] >= 0.95
    assert high["band_energy_ratio"]["high_above_4000_hz"] >= 0.95
    assert low["centroid_hz"]["median"] < 250
    assert high["centroid_hz"]["median"] > 5000
    assert low["rolloff_hz"]["median"] < high["rolloff_hz"]["median"]


def test_spectral_custom_band_edges_and_centroid_change_over_time(audio_dir, helpers, tool_runner):
    path = helpers.write(
        np.concatenate([synth.tone(500, 1.0, 0.3), synth.tone(2000, 1.0, 0.3)]), audio_dir / "sp_step.wav"
    )
    out = tool_runner(spectral, {"low_mid_hz": 1000, "mid_high_hz": 1500}, path).output
    bands = out["band_energy_ratio"]
    assert abs(bands["low_below_1000_hz"] - 0.5) <= 0.05 and abs(bands["high_above_1500_hz"] - 0.5) <= 0.05
    assert out["centroid_first_quarter_hz"] < 600 and out["centroid_last_quarter_hz"] > 1900


def test_spectral_uses_the_files_own_rate(audio_dir, tool_runner):
    """A 44.1 kHz stereo file is analysed at 44.1 kHz (energy at 15 kHz is seen, not resampled away)."""
    t = np.arange(2 * 44100) / 44100
    y = (0.3 * np.sin(2 * np.pi * 15000 * t)).astype(np.float32)
    path = aio.write_wav(audio_dir / "sp_15k.wav", np.stack([y, y]), 44100)
    out = tool_runner(spectral, {}, path).output
    assert out["analysis_sr"] == 44100 and out["nyquist_hz"] == 22050
    assert abs(out["centroid_hz"]["median"] - 15000) <= 300


def test_spectral_silence_and_bounds(silence_clip, tool_runner):
    res = tool_runner(spectral, {}, silence_clip)
    assert res.output["silent"] and "silent" in res.claims[0].text
    with pytest.raises(pydantic.ValidationError):
        SpectralArgs(low_mid_hz=2000, mid_high_hz=1000)


def test_spectral_claims_are_numbers_never_sound_sources(fox_clip, tool_runner):
    """A numeric descriptor must never support a sound-source claim: no source labels, no adjectives."""
    res = tool_runner(spectral, {}, fox_clip.path)
    json.dumps(res.model_dump(), allow_nan=False)  # plain JSON, no numpy scalars
    banned = (
        "speech",
        "voice",
        "music",
        "instrument",
        "bird",
        "engine",
        "cymbal",
        "hiss",
        "bright",
        "dark",
        "warm",
        "harsh",
        "muffled",
    )
    for claim in res.claims:
        assert not any(w in claim.text.lower() for w in banned), claim.text
        assert any(ch.isdigit() for ch in claim.text)


# --------------------------------------------------------------------------------------- speech_quality

needs_speechmos = pytest.mark.skipif(
    importlib.util.find_spec("speechmos") is None,
    reason="speechmos (the DNSMOS model carrier) is not installed",
)


@pytest.fixture(scope="module")
def clean_and_noisy(audio_dir, fox_clip):
    """The fox sentence clean, and the same with white noise mixed in at -6 dB relative to the noise file's
    full level (noise RMS ~0.1 vs speech RMS ~0.1: SNR about 6 dB)."""
    noise_path = aio.write_wav(audio_dir / "q_noise.wav", white(fox_clip.duration_s, seed=3), SR)
    noisy = synth.mix(fox_clip.path, noise_path, audio_dir / "q_noisy.wav", b_gain_db=-6.0)
    return fox_clip.path, noisy


@needs_speechmos
def test_speech_quality_orders_clean_above_noisy(clean_and_noisy, tool_runner):
    clean, noisy = (tool_runner(speech_quality, {}, p).output for p in clean_and_noisy)
    assert clean["ovrl_mos"] > noisy["ovrl_mos"] + 0.3
    assert clean["bak_mos"] > noisy["bak_mos"] + 0.5  # the added noise shows up as background intrusiveness
    assert clean["p808_mos"] > noisy["p808_mos"]
    for out in (clean, noisy):
        assert all(1.0 <= out[k] <= 5.0 for k in ("ovrl_mos", "sig_mos", "bak_mos", "p808_mos"))
        assert out["clip_repeated_to_fill_window"]  # the clip is under 9 s


@needs_speechmos
def test_speech_quality_long_clip_windows_are_bounded(audio_dir, clean_and_noisy, tool_runner):
    """20 s (clean then noisy twice): several 9 s windows, at most max_windows, and the worst window lies
    where the noise is."""
    clean = aio.load(clean_and_noisy[0], sr=SR)
    noisy = aio.load(clean_and_noisy[1], sr=SR)
    y = np.concatenate([clean, clean, clean, noisy, noisy, noisy])[: 20 * SR]
    path = aio.write_wav(audio_dir / "q_long.wav", y, SR)
    res = tool_runner(speech_quality, {"max_windows": 4}, path)
    out = res.output
    assert not out["clip_repeated_to_fill_window"]
    assert 2 <= out["n_windows"] <= 4 and out["hop_s"] >= 1.0
    assert out["worst_window"]["start_s"] >= 5.0
    assert len(res.claims) == 2 and "Lowest-rated" in res.claims[1].text


@needs_speechmos
def test_speech_quality_claim_stays_within_its_boundary(clean_and_noisy, tool_runner):
    res = tool_runner(speech_quality, {}, clean_and_noisy[0])
    json.dumps(res.model_dump(), allow_nan=False)
    text = res.claims[0].text
    assert "DNSMOS" in text and "1-5" in text and "speech" in text
    assert fox_words_absent(text)


def fox_words_absent(text: str) -> bool:
    """The quality claim must not carry content (what is said)."""
    return not any(w in text.lower() for w in ("fox", "dog", "quick", "lazy"))
