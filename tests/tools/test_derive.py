"""audio_derivation tools on audio whose content is known by construction: exact crop lengths, gains and
loudness targets, filter attenuation, exact resampling, channel routing, HPSS parts, denoising, and that
every derived file keeps the source's rate and channels and carries its provenance but no claims."""

from __future__ import annotations

import importlib.util
import math
import typing

import numpy as np
import pydantic
import pytest
import soundfile as sf

from audiomind import audio as aio
from audiomind.tools import derive

SR44 = 44100
QUANT = 2.0 / 32768  # 16-bit PCM output: per-sample error of the written file, with headroom
DB_TOL = 0.05  # level targets after 16-bit quantisation


def tone_at(freq: float, dur: float, sr: int, amp: float) -> np.ndarray:
    return (amp * np.sin(2 * np.pi * freq * np.arange(round(dur * sr)) / sr)).astype(np.float32)


def amplitude_at(y: np.ndarray, sr: int, freq: float) -> float:
    """Amplitude of the `freq` sinusoid in y (projection on a complex exponential, edges left out)."""
    y = np.asarray(y, dtype=np.float64)
    cut = len(y) // 8
    y = y[cut: len(y) - cut]
    t = np.arange(len(y)) / sr
    return float(2 * abs(np.sum(y * np.exp(-2j * np.pi * freq * t))) / len(y))


def db(x: float) -> float:
    return 20 * math.log10(max(x, 1e-12))


def read(path: str) -> tuple[np.ndarray, int]:
    """(samples as (channels, n), rate) of a derived file, exactly as written."""
    y, sr = sf.read(path, dtype="float32", always_2d=True)
    return y.T, sr


@pytest.fixture(scope="session")
def stereo44(audio_dir):
    """2.0 s at 44.1 kHz: left 440 Hz at amplitude 0.5, right 1 kHz at 0.25."""
    y = np.stack([tone_at(440, 2.0, SR44, 0.5), tone_at(1000, 2.0, SR44, 0.25)])
    return aio.write_wav(audio_dir / "stereo44.wav", y, SR44)


@pytest.fixture(scope="session")
def two_tones(audio_dir, helpers):
    """16 kHz mono, 2 s: 200 Hz + 3 kHz, amplitude 0.3 each."""
    y = tone_at(200, 2.0, 16000, 0.3) + tone_at(3000, 2.0, 16000, 0.3)
    return helpers.write(y, audio_dir / "two_tones.wav")


# ---- crop ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("start,end", [(0.5, 0.7), (0.0, 1.0), (1.234, 2.9), (0.0001, 0.0123)])
def test_crop_is_sample_exact_and_equals_the_source_slice(start, end, beeps_clip, tool_runner):
    res = tool_runner(derive.crop, {"start_s": start, "end_s": end}, beeps_clip)
    y, sr = read(res.derived[0].path)
    src = aio.load(beeps_clip, sr=16000)
    i0, i1 = round(start * 16000), round(end * 16000)
    assert sr == 16000 and y.shape == (1, i1 - i0)  # exact length: end - start to one sample
    assert np.max(np.abs(y[0] - src[i0:i1])) <= QUANT
    meta = res.output["derived"][0]
    assert abs(meta["duration_s"] - (end - start)) <= 1 / 16000
    assert res.derived[0].parameters == {"start_s": round(i0 / 16000, 6), "end_s": round(i1 / 16000, 6)}


def test_crop_keeps_rate_and_channels_of_a_44k_stereo_source(stereo44, tool_runner):
    res = tool_runner(derive.crop, {"start_s": 0.1, "end_s": 0.35}, stereo44)
    y, sr = read(res.derived[0].path)
    assert sr == SR44 and y.shape == (2, round(0.35 * SR44) - round(0.1 * SR44))
    assert abs(amplitude_at(y[0], sr, 440) - 0.5) < 0.01 and abs(amplitude_at(y[1], sr, 1000) - 0.25) < 0.01


def test_crop_of_a_file_only_ffmpeg_reads_is_sample_exact(stereo44, audio_dir, tool_runner):
    """AAC in MP4 is not a libsndfile format: the crop decodes through FFmpeg and is still exact."""
    import subprocess

    m4a = audio_dir / "stereo44.m4a"
    subprocess.run([aio.ffmpeg_binary(), "-v", "error", "-y", "-i", str(stereo44), "-c:a", "aac", str(m4a)],
                   check=True)
    res = tool_runner(derive.crop, {"start_s": 0.25, "end_s": 1.5}, m4a)
    y, sr = read(res.derived[0].path)
    assert sr == SR44 and y.shape == (2, round(1.5 * SR44) - round(0.25 * SR44))
    assert abs(amplitude_at(y[0], sr, 440) - 0.5) < 0.02 and abs(amplitude_at(y[1], sr, 1000) - 0.25) < 0.02


def test_crop_clamps_past_the_end_and_rejects_empty_spans(beeps_clip, tool_runner):
    dur = sf.info(str(beeps_clip)).duration
    res = tool_runner(derive.crop, {"start_s": 2.0, "end_s": dur + 5}, beeps_clip)
    assert res.output["end_clamped"] is True
    assert abs(res.output["derived"][0]["duration_s"] - (dur - 2.0)) <= 1 / 16000
    with pytest.raises(ValueError, match="past the end"):
        tool_runner(derive.crop, {"start_s": dur + 1}, beeps_clip)
    with pytest.raises(pydantic.ValidationError, match="end_s must be greater"):
        derive.CropArgs(start_s=2.0, end_s=1.0)
    with pytest.raises(pydantic.ValidationError, match="start_s"):
        derive.CropArgs(start_s=-1.0)


# ---- gain / normalise --------------------------------------------------------------------------------
@pytest.mark.parametrize("gain_db", [-20.0, -6.0, 3.0])
def test_gain_scales_by_the_requested_decibels(gain_db, tone_clip, tool_runner):
    res = tool_runner(derive.gain, {"gain_db": gain_db}, tone_clip)
    y, _ = read(res.derived[0].path)
    src = aio.load(tone_clip, sr=16000)
    change = db(float(np.sqrt(np.mean(y[0].astype(np.float64) ** 2)))) - db(float(np.sqrt(np.mean(src ** 2))))
    assert abs(change - gain_db) <= DB_TOL
    assert res.output["derived"][0]["clipped_ratio"] == 0.0


def test_gain_reports_clipping_when_pushed_past_full_scale(tone_clip, tool_runner):
    res = tool_runner(derive.gain, {"gain_db": 20.0}, tone_clip)  # 0.3 * 10 = 3.0 peak
    meta = res.output["derived"][0]
    assert meta["clipped_ratio"] > 0.5 and meta["peak_dbfs"] == pytest.approx(0.0, abs=0.01)


def test_normalize_peak_hits_the_target(beeps_clip, tool_runner):
    res = tool_runner(derive.normalize, {"mode": "peak", "target_peak_dbfs": -3.0}, beeps_clip)
    y, _ = read(res.derived[0].path)
    assert abs(db(float(np.max(np.abs(y)))) - (-3.0)) <= DB_TOL


@pytest.mark.parametrize("target", [-30.0, -23.0, -16.0])
def test_normalize_lufs_hits_the_target_on_remeasurement(target, fox_clip, tool_runner):
    res = tool_runner(derive.normalize, {"mode": "lufs", "target_lufs": target}, fox_clip.path)
    y, sr = read(res.derived[0].path)
    assert abs(derive.integrated_lufs(y, sr) - target) <= 0.1  # measured again on the written 16-bit file
    assert res.output["derived"][0]["lufs"] == pytest.approx(target, abs=0.1)


def test_normalize_refuses_digital_silence(silence_clip, tool_runner):
    with pytest.raises(ValueError, match="silent"):
        tool_runner(derive.normalize, {"mode": "peak"}, silence_clip)


# ---- filters -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args,kept,removed",
    [({"kind": "lowpass", "high_hz": 1000}, 200, 3000),
     ({"kind": "highpass", "low_hz": 1000}, 3000, 200),
     ({"kind": "bandpass", "low_hz": 2000, "high_hz": 4500}, 3000, 200),
     ({"kind": "bandstop", "low_hz": 2000, "high_hz": 4500}, 200, 3000)],
)
def test_filter_keeps_the_pass_band_and_removes_the_stop_band(args, kept, removed, two_tones, tool_runner):
    """Order-4 Butterworth run forward and backward: >= 40 dB down a factor 3 past the edge, kept tones
    within 0.5 dB."""
    res = tool_runner(derive.filter_audio, args, two_tones)
    y, sr = read(res.derived[0].path)
    assert abs(db(amplitude_at(y[0], sr, kept)) - db(0.3)) <= 0.5
    assert db(amplitude_at(y[0], sr, removed)) - db(0.3) <= -40.0


def test_filter_is_zero_phase(beeps_clip, tool_runner):
    """A high-pass well below the 1 kHz beeps moves nothing in time: cross-correlation peaks at lag 0."""
    res = tool_runner(derive.filter_audio, {"kind": "highpass", "low_hz": 100}, beeps_clip)
    y, _ = read(res.derived[0].path)
    src = aio.load(beeps_clip, sr=16000)
    lags = np.arange(-40, 41)
    xc = [float(np.dot(np.roll(y[0], k), src)) for k in lags]
    assert lags[int(np.argmax(xc))] == 0


def test_filter_arguments_are_checked(beeps_clip, tool_runner):
    with pytest.raises(pydantic.ValidationError, match="low_hz"):
        derive.FilterArgs(kind="highpass")
    with pytest.raises(pydantic.ValidationError, match="low_hz must be below high_hz"):
        derive.FilterArgs(kind="bandpass", low_hz=3000, high_hz=1000)
    with pytest.raises(ValueError, match="Nyquist"):
        tool_runner(derive.filter_audio, {"kind": "lowpass", "high_hz": 9000}, beeps_clip)  # 16 kHz: 8 kHz max


# ---- resample ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [8000, 22050, 44100, 48000])
def test_resample_gives_the_exact_rate_same_duration_and_pitch(target, tone_clip, tool_runner):
    res = tool_runner(derive.resample, {"target_rate": target}, tone_clip)
    y, sr = read(res.derived[0].path)
    assert sr == target
    assert abs(y.shape[1] / sr - 3.0) <= 1.0 / target + 1e-9  # same duration to one output sample
    spec = np.abs(np.fft.rfft(y[0][:target]))  # 1 s: 1 Hz bins
    assert abs(int(np.argmax(spec)) - 440) <= 1
    assert abs(amplitude_at(y[0], sr, 440) - 0.3) <= 0.005


def test_resample_keeps_channels(stereo44, tool_runner):
    res = tool_runner(derive.resample, {"target_rate": 16000}, stereo44)
    y, sr = read(res.derived[0].path)
    assert sr == 16000 and y.shape[0] == 2
    assert abs(amplitude_at(y[1], sr, 1000) - 0.25) <= 0.005


# ---- channels ---------------------------------------------------------------------------------------------
def test_channel_split_gives_one_mono_artifact_per_channel(stereo44, tool_runner):
    res = tool_runner(derive.channel_split, {}, stereo44)
    src = aio.load(stereo44, sr=SR44, mono=False)
    assert [d.parameters["label"] for d in res.derived] == ["left", "right"]
    for k, d in enumerate(res.derived):
        y, sr = read(d.path)
        assert sr == SR44 and y.shape == (1, src.shape[1])
        assert np.max(np.abs(y[0] - src[k])) <= QUANT
        assert d.operation == "channel_split" and d.source_artifact == "a0"
    only_right = tool_runner(derive.channel_split, {"channels": [1]}, stereo44)
    assert [d.parameters["channel"] for d in only_right.derived] == [1]


def test_channel_split_refuses_mono_and_bad_indices(stereo44, tone_clip, tool_runner):
    with pytest.raises(ValueError, match="mono"):
        tool_runner(derive.channel_split, {}, tone_clip)
    with pytest.raises(ValueError, match="out of range"):
        tool_runner(derive.channel_split, {"channels": [2]}, stereo44)


def test_mixdown_mid_is_the_channel_mean_and_side_the_half_difference(stereo44, tool_runner):
    src = aio.load(stereo44, sr=SR44, mono=False)
    mid, _ = read(tool_runner(derive.mixdown, {"mode": "mid"}, stereo44).derived[0].path)
    side, sr = read(tool_runner(derive.mixdown, {"mode": "side"}, stereo44).derived[0].path)
    assert sr == SR44 and mid.shape == side.shape == (1, src.shape[1])
    assert np.max(np.abs(mid[0] - src.mean(axis=0))) <= QUANT
    assert np.max(np.abs(side[0] - (src[0] - src[1]) / 2)) <= QUANT


def test_mixdown_side_of_identical_channels_is_silent_and_needs_stereo(audio_dir, tone_clip, tool_runner):
    y = tone_at(440, 1.0, 16000, 0.4)
    dual = aio.write_wav(audio_dir / "dual_mono.wav", np.stack([y, y]), 16000)
    side, _ = read(tool_runner(derive.mixdown, {"mode": "side"}, dual).derived[0].path)
    assert np.max(np.abs(side)) == 0.0
    with pytest.raises(ValueError, match="stereo"):
        tool_runner(derive.mixdown, {"mode": "side"}, tone_clip)
    mono = tool_runner(derive.mixdown, {"mode": "mid"}, tone_clip)
    assert mono.output["already_mono"] is True


# ---- HPSS ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def tone_and_clicks(audio_dir, helpers):
    """4 s: a steady 440 Hz tone (0.3) plus 16 noise-burst clicks (5 ms, decaying, std 0.2) every 0.25 s."""
    rng = np.random.default_rng(7)
    sr = 16000
    y = tone_at(440, 4.0, sr, 0.3).astype(np.float64)
    clicks = np.zeros_like(y)
    onsets = [int((0.125 + 0.25 * k) * sr) for k in range(16)]
    for i in onsets:
        clicks[i: i + 80] += 0.2 * rng.standard_normal(80) * np.exp(-np.arange(80) / 20)
    return helpers.write((y + clicks).astype(np.float32), audio_dir / "tone_clicks.wav"), onsets


def test_hpss_puts_the_tone_in_the_harmonic_part_and_the_clicks_in_the_percussive(tone_and_clicks, tool_runner):
    from scipy import signal

    path, onsets = tone_and_clicks
    res = tool_runner(derive.hpss, {}, path)
    assert [d.parameters["part"] for d in res.derived] == ["harmonic", "percussive"]
    (h, sr), (p, _) = read(res.derived[0].path), read(res.derived[1].path)
    src = aio.load(path, sr=16000)
    assert h.shape == p.shape == (1, len(src))
    assert abs(db(amplitude_at(h[0], sr, 440)) - db(0.3)) <= 0.5  # tone kept in the harmonic part
    assert db(amplitude_at(p[0], sr, 440)) - db(0.3) <= -30.0  # and >= 30 dB down in the percussive part
    hp = signal.butter(4, 2000, "highpass", fs=sr, output="sos")  # click energy lives above the tone

    def click_energy(y):
        z = signal.sosfiltfilt(hp, y.astype(np.float64))
        return sum(float(np.sum(z[i: i + 80] ** 2)) for i in onsets)

    assert click_energy(p[0]) >= 0.6 * click_energy(src)
    assert click_energy(h[0]) <= 0.01 * click_energy(src)
    assert res.output["derived"][1]["clipped_ratio"] == 0.0
    assert np.max(np.abs(h[0] + p[0] - src)) <= 2e-3  # margin 1: soft masks sum to one
    assert res.output["derived"][0]["energy_share"] > res.output["derived"][1]["energy_share"]


# ---- denoise ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("noise_db", [-50.0, -40.0, -30.0])
def test_denoise_lowers_steady_noise_and_keeps_the_tone(noise_db, audio_dir, helpers, tool_runner):
    """1 s noise, 2 s tone (0.3) + noise, 1 s noise: with the estimated floor, nr=20 takes the noise-only
    stretch down >= 12 dB while the tone level moves < 0.5 dB."""
    sr = 16000
    rng = np.random.default_rng(3)
    y = np.zeros(4 * sr)
    y[sr: 3 * sr] = tone_at(440, 2.0, sr, 0.3)
    y = (y + rng.standard_normal(4 * sr) * 10 ** (noise_db / 20)).astype(np.float32)
    path = helpers.write(y, audio_dir / f"noisy_tone{int(noise_db)}.wav")
    res = tool_runner(derive.denoise, {"noise_reduction_db": 20}, path)
    z, zsr = read(res.derived[0].path)
    assert zsr == sr and z.shape == (1, len(y))

    def rms_db(x):
        return db(float(np.sqrt(np.mean(np.asarray(x, dtype=np.float64) ** 2))))

    quiet = slice(int(3.2 * sr), int(3.9 * sr))
    assert rms_db(z[0][quiet]) - rms_db(y[quiet]) <= -12.0
    tone = slice(int(1.2 * sr), int(2.8 * sr))
    assert abs(db(amplitude_at(z[0][tone], sr, 440)) - db(amplitude_at(y[tone], sr, 440))) <= 0.5
    assert res.output["noise_floor_estimated"] is True
    assert abs(res.output["noise_floor_db"] - (noise_db + derive.NOISE_MARGIN_DB)) <= 3.0


# ---- every derivation tool: rate/channels kept, provenance, no claims --------------------------------------
ALL_DERIVATIONS = [
    (derive.crop, {"start_s": 0.2, "end_s": 1.2}, 1),
    (derive.gain, {"gain_db": -3.0}, 1),
    (derive.normalize, {"mode": "lufs"}, 1),
    (derive.filter_audio, {"kind": "lowpass", "high_hz": 5000}, 1),
    (derive.hpss, {}, 2),
    (derive.denoise, {}, 1),
]


@pytest.mark.parametrize("fn,args,n_out", ALL_DERIVATIONS, ids=[f.__name__ for f, _, _ in ALL_DERIVATIONS])
def test_derivations_keep_rate_and_channels_and_make_no_claims(fn, args, n_out, stereo44, helpers, tmp_path):
    """On artifact a1 (44.1 kHz stereo) every output is 44.1 kHz stereo WAV, registered as derived from a1
    with its operation, and the tool states no claim: derived audio is not evidence by itself."""
    ctx = helpers.make_context({"a0": stereo44, "a1": stereo44}, tmp_path)
    model = typing.get_type_hints(fn)["args"]
    res = fn(model.model_validate({**args, "artifact": "a1"}), ctx)
    assert res.claims == [] and len(res.derived) == n_out
    for d, meta in zip(res.derived, res.output["derived"]):
        info = sf.info(d.path)
        assert info.samplerate == SR44 and info.channels == 2 and info.subtype == "PCM_16"
        assert d.source_artifact == "a1" and d.path.startswith(str(tmp_path / "derived"))
        assert d.operation and "artifact" not in d.parameters
        assert meta["sample_rate"] == SR44 and abs(meta["duration_s"] - info.duration) <= 1 / SR44


# ---- Demucs separation (optional) ------------------------------------------------------------------------
def test_separate_is_unavailable_with_a_reason_without_demucs():
    from audiomind.tools.manifest import ToolRegistry

    reg = ToolRegistry.load()
    ok, why = reg.availability("separate")
    if importlib.util.find_spec("demucs") is None:
        assert not ok and "demucs" in why
        assert "separate" not in {m.name for m in reg.available()}
    args = derive.SeparateArgs(stems=["vocals"])  # the argument model itself does not need demucs
    assert args.device == "auto" and args.model == "htdemucs"
    with pytest.raises(pydantic.ValidationError, match="stems"):
        derive.SeparateArgs(stems=["kazoo"])
