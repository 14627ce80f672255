"""Bandwidth and band-limiting: which frequency band carries the sound (telephone 300-3400 Hz, muffled /
low-passed, full band).

Each one-third-octave band's level is followed over 128 ms frames. A band *carries* the sound when its
90th-percentile level is within BAND_RANGE_DB of the strongest band's and it moves with the sound (90th minus
10th percentile at least MOVE_DB over what stationary noise shows by chance in that band): stationary noise
fills bands a filtered voice left empty, but it does not move. The upper edge allows BAND_RANGE_DB, the lower
edge LOW_RANGE_DB. For a steady sound (nothing moves) the level criterion alone decides. The edges are the
lowest and highest carrying bands; the label follows documented edge ranges below."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult, plan_windows
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
N_FFT = 2048
HOP = 512
BAND_RANGE_DB = 55.0   # upper edge: a band this far below the strongest one carries nothing audible
LOW_RANGE_DB = 40.0    # lower edge (speech's own spectrum falls steeply below its f0: a tighter range)
MOVE_DB = 6.0          # a band the sound drives moves this much more than stationary noise would
TELEPHONE_LOW_HZ = 125.0          # a telephone channel passes ~300-3400 Hz (edges read at 1/3-octave steps)
TELEPHONE_HIGH_HZ = (2600.0, 4700.0)
MUFFLED_HIGH_HZ = 2600.0          # nothing above this: low-passed, muffled
FULL_HIGH_HZ = 5600.0             # energy up to at least this: full band (at the 16 kHz analysis rate, 8 kHz max)
BLOCK = 60 * SR  # samples per analysis block (blocks overlap by one FFT frame)
CENTRES = [float(c) for c in 1000.0 * 2.0 ** (np.arange(-14, 10) / 3.0) if 50.0 <= c <= 7200.0]


class BandLimitsArgs(WindowArgs):
    pass


class BandLimitsOutput(CoveredOutput):
    label: Literal["telephone", "muffled", "full", "band_limited", "silent"] = Field(
        description="telephone: ~300-3400 Hz; muffled: nothing above ~2.6 kHz; full: energy up to >= 5.6 kHz; "
                    "band_limited: other edges")
    low_edge_hz: float | None = Field(description="lower edge of the carrying bands (Hz)")
    high_edge_hz: float | None = Field(description="upper edge of the carrying bands (Hz)")
    stationary: bool = Field(description="no band moves with the sound: level criterion alone")
    band_centres_hz: list[float] = Field(description="1/3-octave band centres (Hz)")
    band_levels_db: list[float] = Field(description="90th-percentile band level, dB re the strongest band")
    band_motion_db: list[float] = Field(description="90th minus 10th percentile level per band (dB)")
    analysed_s: AnalysedWindow


def _noise_spread_db() -> np.ndarray:
    """Per band, the 90th minus 10th percentile level (dB) that stationary noise shows by chance over 128 ms
    frames: a chi-square power with 2 x bandwidth x frame length degrees of freedom (halved for the Hann
    window). Narrow low bands fluctuate by over 10 dB; wide high bands by about 1."""
    from scipy.stats import chi2

    dof = np.array([max(2.0, (c * (2 ** (1 / 6) - 2 ** (-1 / 6))) * N_FFT / SR) for c in CENTRES])
    return 10 * np.log10(chi2.ppf(0.9, dof) / chi2.ppf(0.1, dof))


def _bands(freqs: np.ndarray) -> list[np.ndarray]:
    return [(freqs >= c / 2 ** (1 / 6)) & (freqs < c * 2 ** (1 / 6)) for c in CENTRES]


def band_limits(args: BandLimitsArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.embedded.dsp import scipy_signal

    stft = scipy_signal().stft
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    base: dict[str, Any] = {"band_centres_hz": [round(c, 1) for c in CENTRES], "analysed_s": (round(t0, 3), round(t1, 3))}
    freqs = np.fft.rfftfreq(N_FFT, 1 / SR)
    bands = _bands(freqs)
    parts = []
    for a, b in plan_windows(0, len(y), BLOCK):  # one 60 s block at a time: memory stays bounded
        seg = y[int(a): int(min(len(y), b + N_FFT))]
        if len(seg) < N_FFT:
            continue
        _, _, z = stft(seg, fs=SR, nperseg=N_FFT, noverlap=N_FFT - HOP, boundary=None, padded=False)
        p = np.abs(z).astype(np.float64) ** 2  # (freq, frames)
        parts.append(np.array([10 * np.log10(p[m].mean(axis=0) + 1e-14) for m in bands]))
    lv = np.concatenate(parts, axis=1) if parts else np.zeros((len(bands), 0))
    if lv.shape[1] < 2 or float(np.max(lv)) < -100.0:
        out = {**base, "label": "silent", "low_edge_hz": None, "high_edge_hz": None, "stationary": True,
               "band_levels_db": [], "band_motion_db": []}
        return ToolResult(output=out, claims=[Claim(text=f"No band limits: {t0:.2f}-{t1:.2f} s is silent.")])
    lv_loud = np.percentile(lv, 90, axis=1)
    lv_quiet = np.percentile(lv, 10, axis=1)
    rel = lv_loud - lv_loud.max()
    motion = lv_loud - lv_quiet
    excess = motion - _noise_spread_db()
    stationary = float(np.max(excess)) < MOVE_DB
    moving = stationary | (excess >= MOVE_DB)

    def edges(range_db: float) -> tuple[float, float]:
        carry = (rel >= -range_db) & moving
        # a carrying band needs a carrying neighbour (a lone band is a hum or a whistle, not the sound's band)
        solid = carry & (np.roll(carry, 1) | np.roll(carry, -1))
        idx = np.flatnonzero(solid) if solid.any() else np.flatnonzero(carry)
        return CENTRES[idx[0]] / 2 ** (1 / 6), min(CENTRES[idx[-1]] * 2 ** (1 / 6), SR / 2)

    hi = edges(BAND_RANGE_DB)[1]
    lo = edges(LOW_RANGE_DB)[0]
    if hi < MUFFLED_HIGH_HZ:
        label = "muffled"
    elif TELEPHONE_HIGH_HZ[0] <= hi <= TELEPHONE_HIGH_HZ[1] and lo >= TELEPHONE_LOW_HZ:
        label = "telephone"
    elif hi >= FULL_HIGH_HZ:
        label = "full"
    else:
        label = "band_limited"
    out = {**base, "label": label, "low_edge_hz": round(float(lo), 1), "high_edge_hz": round(float(hi), 1),
           "stationary": bool(stationary), "band_levels_db": [round(float(v), 1) for v in rel],
           "band_motion_db": [round(float(v), 1) for v in motion]}
    words = {"telephone": "narrowband, the ~300-3400 Hz band of a voice channel", "muffled": "low-passed (muffled)",
             "full": "full band", "band_limited": "band-limited"}[label]
    text = (f"Between {t0:.2f} and {t1:.2f} s the sound occupies {lo:.0f}-{hi:.0f} Hz: {words} "
            f"(carrying 1/3-octave bands within {BAND_RANGE_DB:g} / {LOW_RANGE_DB:g} dB of the strongest"
            + ("" if stationary else f" that move with the sound by >= {MOVE_DB:g} dB") + ").")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "low_edge_hz": out["low_edge_hz"],
                                                                 "high_edge_hz": out["high_edge_hz"]})])
