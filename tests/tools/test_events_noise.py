"""count_events in steady background noise: the noise floor is measured (a low percentile of the frame
levels) and an event is a burst that rises clearly above it, so beeps under white or pink noise are counted
one by one instead of as one event spanning the clip. Clean clips (digital silence between sounds) keep the
clip-peak rule and their counts.

All audio is generated: five 0.15 s 1 kHz beeps with gaps of 0.25-0.7 s, under white or pink (1/f) noise
from `synth.noise` (the benchmark's noise) at a set SNR (beep RMS over noise RMS), at a set beep level, at 8,
16, 44.1 or 48 kHz."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.events import CountEventsOutput, count_events

BEEP_S = 0.15
GAPS_S = (0.25, 0.7, 0.4, 0.55)  # between the five beeps
LEAD_S = TAIL_S = 0.6
ONSET_TOL_S = 0.04


def onsets_truth() -> list[float]:
    t, out = LEAD_S, []
    for k in range(5):
        out.append(round(t, 3))
        t += BEEP_S + (GAPS_S[k] if k < 4 else 0.0)
    return out


def noisy_beeps(path: Path, *, sr: int = 16000, noise: str = "white", snr_db: float | None = None,
                noise_rms: float | None = None, beep_amp: float = 0.5, seed: int = 0,
                gains_db: tuple[float, ...] = (0.0,) * 5) -> Path:
    """The five beeps (sine amplitude beep_amp, each changed by its gains_db, 5 ms ramps) plus noise at
    snr_db re the beep RMS (or at a given noise RMS), written at rate sr."""
    rng = np.random.default_rng(seed)
    total = LEAD_S + 5 * BEEP_S + sum(GAPS_S) + TAIL_S
    y = np.zeros(round(total * sr))
    t = np.arange(round(BEEP_S * sr)) / sr
    ramp = int(0.005 * sr)
    env = np.ones_like(t)
    env[:ramp], env[-ramp:] = np.linspace(0, 1, ramp), np.linspace(1, 0, ramp)
    beep = beep_amp * np.sin(2 * np.pi * 1000.0 * t) * env
    for onset, g in zip(onsets_truth(), gains_db):
        i = round(onset * sr)
        y[i : i + len(beep)] += beep * 10 ** (g / 20)
    rms = noise_rms if noise_rms is not None else beep_amp / np.sqrt(2) / 10 ** (snr_db / 20)
    y += rms * synth.noise(noise, len(y), rng, sr)
    return aio.write_wav(path, np.clip(y, -1.0, 1.0).astype(np.float32), sr)


def _count(path: Path, tool_runner, **args) -> CountEventsOutput:
    return CountEventsOutput.model_validate(tool_runner(count_events, args, path).output)


def _assert_five_beeps(out: CountEventsOutput) -> None:
    assert out.count == 5, (out.count, out.threshold_dbfs, out.noise_floor_dbfs, [e.start_s for e in out.events])
    for ev, t in zip(out.events, onsets_truth()):
        assert abs(ev.start_s - t) <= ONSET_TOL_S and abs(ev.end_s - (t + BEEP_S)) <= ONSET_TOL_S


@pytest.mark.parametrize("beep_amp", [0.2, 0.3, 0.5])
def test_five_beeps_under_white_noise_at_minus_40_dbfs(beep_amp, tmp_path, tool_runner):
    """The reported case: beeps under white noise of RMS 0.01 (-40 dBFS). The old rule (clip peak - 30 dB)
    put the threshold on the noise for beeps of amplitude 0.2 and 0.3 and found one event spanning the
    clip."""
    path = noisy_beeps(tmp_path / "n.wav", noise_rms=0.01, beep_amp=beep_amp)
    out = _count(path, tool_runner)
    _assert_five_beeps(out)
    assert out.threshold_from == "noise_floor"
    assert abs(out.noise_floor_dbfs - (-40.0)) <= 1.5
    assert out.threshold_dbfs >= out.noise_floor_dbfs + 6.0
    claim = tool_runner(count_events, {}, path).claims[0].text
    assert "noise floor" in claim and f"{out.noise_floor_dbfs:.1f} dBFS" in claim


@pytest.mark.parametrize("noise", ["white", "pink"])
@pytest.mark.parametrize("snr_db", [10.0, 20.0, 30.0])
def test_five_beeps_at_snr_10_20_30_db(snr_db, noise, tmp_path, tool_runner):
    for seed in range(4):  # four noise draws each
        out = _count(noisy_beeps(tmp_path / f"n{seed}.wav", noise=noise, snr_db=snr_db, seed=seed), tool_runner)
        _assert_five_beeps(out)
        assert out.threshold_from == "noise_floor"


@pytest.mark.parametrize("noise", ["white", "pink"])
@pytest.mark.parametrize("level_dbfs", [-40.0, -30.0, -20.0, -10.0, -3.0])
def test_five_beeps_at_levels_minus_40_to_minus_3_dbfs(level_dbfs, noise, tmp_path, tool_runner):
    """Beep peak level from -40 to -3 dBFS, noise 20 dB below the beeps' RMS."""
    path = noisy_beeps(tmp_path / "n.wav", noise=noise, snr_db=20.0, beep_amp=10 ** (level_dbfs / 20))
    _assert_five_beeps(_count(path, tool_runner))


@pytest.mark.parametrize("noise", ["white", "pink"])
@pytest.mark.parametrize("sr", [8000, 44100, 48000])
def test_five_beeps_at_8_44_1_48_khz(sr, noise, tmp_path, tool_runner):
    path = noisy_beeps(tmp_path / "n.wav", sr=sr, noise=noise, snr_db=20.0)
    assert aio.probe(path).sample_rate == sr
    _assert_five_beeps(_count(path, tool_runner))


def test_clean_beeps_and_clicks_keep_the_clip_peak_rule(tmp_path, tool_runner):
    """Between digital silences the floor rule never decides: the threshold is clip peak + threshold_db."""
    out = _count(synth.beeps(5, tmp_path / "b.wav"), tool_runner)
    assert out.count == 5 and out.threshold_from == "clip_peak" and out.noise_floor_dbfs <= -150
    assert out.threshold_dbfs == pytest.approx(out.clip_peak_dbfs - 30.0, abs=0.11)
    clicks = synth.click_track(120.0, 3.0, tmp_path / "c.wav", lead_s=0.25)
    out = _count(clicks, tool_runner)
    assert out.count == 6 and out.threshold_from == "clip_peak"
    assert out.mean_inter_onset_s == pytest.approx(0.5, abs=0.02)


def test_a_steady_sound_is_one_event(tmp_path, tool_runner):
    """Nothing rises above_floor_db over the floor: the floor rule is left out and one sustained sound
    stays one event, as before."""
    y = np.concatenate([synth.tone(440.0, 2.0, 0.3)])
    out = _count(aio.write_wav(tmp_path / "t.wav", y, synth.SR), tool_runner)
    assert out.count == 1 and out.above_floor_db is None and out.threshold_from == "clip_peak"


def test_above_floor_db_and_floor_range_share_set_how_far_an_event_rises(tmp_path, tool_runner):
    """Beeps 1, 3, 5 are 24 dB over white noise, beeps 2 and 4 only 16 dB: the default rise (the larger of
    6 dB and half the ~24 dB floor-to-peak range) counts all five; a 20 dB rise, or 80% of the range, only
    the loud three."""
    path = noisy_beeps(tmp_path / "n.wav", snr_db=24.0, gains_db=(0.0, -8.0, 0.0, -8.0, 0.0))
    out = _count(path, tool_runner)
    _assert_five_beeps(out)
    assert 11.0 <= out.above_floor_db <= 13.5
    loud = [onsets_truth()[k] for k in (0, 2, 4)]
    for args in ({"above_floor_db": 20.0}, {"floor_range_share": 0.8}):
        out = _count(path, tool_runner, **args)
        assert out.count == 3 and all(abs(e.start_s - t) <= ONSET_TOL_S for e, t in zip(out.events, loud))
