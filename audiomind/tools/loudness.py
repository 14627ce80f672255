"""acoustic_music_features: perceived level (ITU-R BS.1770 / EBU R 128) and how it changes over time.

Loudness is a measurement of level, so it can support "gets louder", "is quiet", "peaks at 3.2 s"; it
cannot say what makes the sound or whether it sounds good.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from audiomind import audio as audio_io
from audiomind.embedded import iir
from audiomind.state import Coverage
from audiomind.tools.base import (
    ANALYSIS_WINDOW_S,
    Claim,
    ToolArgs,
    ToolContext,
    ToolOutput,
    ToolResult,
    coverage,
)
from audiomind.tools.trend import fit_trend

MAX_CURVE_POINTS = 120  # the curve in the output is decimated to at most this many points
LRA_MIN_S = 10.0  # EBU LRA uses 3 s blocks; on shorter clips it depends on block alignment more than content
ABS_GATE_LUFS = -70.0  # BS.1770 absolute gate: windows below this are treated as silence


class LoudnessArgs(ToolArgs):
    window_s: float = Field(0.4, ge=0.1, le=10.0,
                            description="loudness window (0.4 s = EBU momentary, 3 s = short-term)")
    hop_s: float = Field(0.1, ge=0.01, le=5.0, description="hop between loudness windows (s)")
    trend_db: float = Field(3.0, ge=0.5, le=40.0,
                            description="a linear-fit change of at least this many dB over the active span "
                                        "counts as increasing/decreasing")
    fluctuation_db: float = Field(4.0, ge=0.5, le=40.0,
                                  description="residual standard deviation (dB) above which a clip without a "
                                              "trend counts as fluctuating rather than steady")
    active_range_db: float = Field(30.0, ge=10.0, le=80.0,
                                   description="windows more than this far below the loudest window (or below "
                                               "-70 LUFS) are treated as silence and left out of the trend")

    @model_validator(mode="after")
    def _hop_within_window(self) -> LoudnessArgs:
        if self.hop_s > self.window_s:
            raise ValueError("hop_s must not exceed window_s")
        return self


class TimedLoudness(ToolOutput):
    time_s: float = Field(description="centre of the loudness window (s)")
    lufs: float = Field(description="loudness of that window (LUFS)")


class LoudnessCurve(ToolOutput):
    hop_s: float = Field(description="time between curve points (s; the hop, widened by decimation)")
    time_s: list[float] = Field(description="window centres (s)")
    lufs: list[float | None] = Field(description="window loudness (LUFS); None below the -70 LUFS gate")


class LoudnessOutput(ToolOutput):
    integrated_lufs: float | None = Field(description="ITU-R BS.1770 integrated loudness (LUFS); None when silent")
    loudness_range_lu: float | None = Field(description="EBU loudness range (LU); None under 10 s or when too quiet")
    channels_measured: int = Field(description="channels measured (1 = mono or a downmix)")
    window_s: float = Field(description="loudness window (s)")
    hop_s: float = Field(description="hop between windows (s)")
    trend: Literal["increasing", "decreasing", "steady", "fluctuating", "too_short", "silent"] = Field(
        description="level over time, by a linear fit over the active windows")
    change_db: float = Field(description="fitted level change over the active span (dB)")
    slope_db_per_s: float = Field(description="fitted slope (dB/s)")
    residual_std_db: float = Field(description="spread of the windows around the fit (dB)")
    trend_rule: str = Field(description="the rule that named the trend")
    active_ratio: float = Field(description="share of windows that count as active (0-1)")
    loudest: TimedLoudness | None = Field(None, description="the loudest window; None when nothing is active")
    quietest_active: TimedLoudness | None = Field(None, description="the quietest active window")
    active_span_s: tuple[float, float] | None = Field(None, description="first and last active window centre (s)")
    curve: LoudnessCurve = Field(description="loudness over time (at most 120 points)")
    coverage: Coverage | None = Field(None, description="the stretches measured, streamed from the file in 60 s "
                                                        "windows at the measuring rate")


def _k_weighted(y: np.ndarray, rate: int) -> np.ndarray:
    """K-weighting (BS.1770 pre-filter + RLB high-pass) per channel; y is (n, channels)."""
    z = y.astype(np.float64, copy=True)
    for stage in iir.k_weighting(rate):  # the two biquads pyloudnorm's Meter designs and applies
        for ch in range(z.shape[1]):
            z[:, ch] = iir.lfilter(stage, z[:, ch])[0]
    return z


def loudness_curve(y: np.ndarray, rate: int, window_s: float, hop_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(window centre times, loudness in LUFS) of K-weighted audio, channel powers summed (gain 1.0, as
    BS.1770 weights L/R/C)."""
    z = _k_weighted(y, rate)
    power = np.sum(z**2, axis=1)
    csum = np.concatenate([[0.0], np.cumsum(power)])
    win, hop = max(1, round(window_s * rate)), max(1, round(hop_s * rate))
    if len(power) <= win:
        starts = np.array([0])
        win = len(power)
    else:
        starts = np.arange(0, len(power) - win + 1, hop)
    ms = (csum[starts + win] - csum[starts]) / win
    with np.errstate(divide="ignore"):
        lufs = -0.691 + 10 * np.log10(np.maximum(ms, 1e-20))
    return (starts + win / 2) / rate, lufs


def classify_trend(t: np.ndarray, lufs: np.ndarray, trend_db: float, fluctuation_db: float) -> dict:
    """Fit a line to the active windows: a change (slope x span) of at least trend_db that also exceeds
    twice the residual spread is a trend; otherwise a residual spread above fluctuation_db is
    'fluctuating', else 'steady'."""
    if len(t) < 3:
        return {"trend": "too_short" if len(t) else "silent", "change_db": 0.0, "slope_db_per_s": 0.0,
                "residual_std_db": 0.0}
    fit = fit_trend(t, lufs, trend_db, fluctuation_db)
    words = {"up": "increasing", "down": "decreasing", "varying": "fluctuating", "flat": "steady"}
    return {"trend": words[fit.direction], "change_db": round(fit.change, 2), "slope_db_per_s": round(fit.slope, 3),
            "residual_std_db": round(fit.spread, 2)}


G_CHANNEL = [1.0, 1.0, 1.0, 1.41, 1.41]  # BS.1770 channel gains (L, R, C, Ls, Rs), as pyloudnorm applies them


def _block_bounds(n: int, rate: int, block_s: float, overlap: float) -> tuple[np.ndarray, np.ndarray]:
    """pyloudnorm's gating blocks [l, u) (samples) for a signal of n samples, as Meter.integrated_loudness
    computes them."""
    step = 1.0 - overlap
    total = n / rate
    count = int(np.round((total - block_s) / (block_s * step))) + 1
    j = np.arange(max(count, 0))
    lo = np.array([int(block_s * (k * step) * rate) for k in j], dtype=np.int64)
    hi = np.array([int(block_s * (k * step + 1) * rate) for k in j], dtype=np.int64)
    return lo, hi


class _Cells:
    """Sums of a per-sample power over the cells between sorted boundaries, accumulated block by block;
    `between(l, u)` is then the sum over [l, u) for any two boundaries (no per-sample array is kept)."""

    def __init__(self, bounds: np.ndarray):
        self.bounds = np.unique(np.concatenate([[0], bounds.astype(np.int64)]))
        self.cells = np.zeros(len(self.bounds), dtype=np.float64)
        self.n = 0

    def add(self, p: np.ndarray) -> None:
        g, m = self.n, len(p)
        if m:
            k0 = int(np.searchsorted(self.bounds, g, side="right")) - 1
            k1 = int(np.searchsorted(self.bounds, g + m, side="left"))
            inner = self.bounds[k0 + 1 : k1] - g
            self.cells[k0 : k0 + 1 + len(inner)] += np.add.reduceat(p, np.concatenate([[0], inner]).astype(np.intp))
        self.n = g + m

    def between(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        prefix = np.concatenate([[0.0], np.cumsum(self.cells)])
        return prefix[np.searchsorted(self.bounds, hi)] - prefix[np.searchsorted(self.bounds, lo)]


def _plans(n: int, rate: int, window_s: float, hop_s: float) -> dict:
    """Every boundary the measurements need for a signal of n samples: integrated (0.4 s, 75 %), LRA (3 s,
    97 %, on the signal with 1.5 s of silence appended) and the curve's windows."""
    il, iu = _block_bounds(n, rate, 0.4, 0.75)
    ll, lu = _block_bounds(n + int(1.5 * rate), rate, 3.0, 0.97)
    win, hop = max(1, round(window_s * rate)), max(1, round(hop_s * rate))
    if n <= win:
        starts, win = np.array([0], dtype=np.int64), n
    else:
        starts = np.arange(0, n - win + 1, hop, dtype=np.int64)
    return {"integrated": (il, iu), "lra": (ll, lu), "curve": (starts, starts + win), "win": win}


def _stream_powers(path: str, rate: int, channels: int, n_guess: int, window_s: float, hop_s: float):
    """K-weighted power of the file streamed at `rate` (measured channels, or the mono downmix when
    channels == 1) into cell sums: (n samples, plans, gain-weighted cells, unweighted cells)."""
    stages = iir.k_weighting(rate)  # the two biquads pyloudnorm's Meter.integrated_loudness applies
    plans = _plans(n_guess, rate, window_s, hop_s)
    bounds = np.concatenate([v for k, pair in plans.items() if k != "win" for v in pair])
    weighted, plain = _Cells(bounds), _Cells(bounds)
    state = [[np.zeros(2) for _ in range(channels)] for _ in stages]
    gains = np.array(G_CHANNEL[:channels])[:, None]
    min_n = int(0.4 * rate) + 1  # gating needs 0.4 s: a shorter clip is measured with zeros appended

    def blocks():
        n = 0
        for block in audio_io.iter_blocks(path, sr=rate, mono=channels == 1, block_s=ANALYSIS_WINDOW_S):
            n += block.shape[-1]
            yield np.atleast_2d(block)
        if n < 0.4 * rate:  # the filters ring on into the appended zeros
            yield np.zeros((channels, min_n - n), dtype=np.float32)

    for block in blocks():
        x = block.astype(np.float64)  # (channels, m)
        for si, st in enumerate(stages):
            for ch in range(channels):
                x[ch], state[si][ch] = iir.lfilter(st, x[ch], state[si][ch])
        sq = x * x
        weighted.add(np.sum(sq * gains, axis=0))
        plain.add(np.sum(sq, axis=0))
    return weighted.n, plans, weighted, plain


def _gated(block_sums: np.ndarray, block_samples: float) -> tuple[list[float], float]:
    """pyloudnorm's blockwise loudness and gated integrated loudness from the gain-weighted block sums."""
    z = block_sums / block_samples
    with np.errstate(divide="ignore", invalid="ignore"):
        lj = -0.691 + 10.0 * np.log10(z)
        keep = lj >= -70.0
        gamma_r = -0.691 + 10.0 * np.log10(np.mean(z[keep])) - 10.0 if keep.any() else np.nan
        keep = (lj > gamma_r) & (lj > -70.0)
        avg = float(np.mean(z[keep])) if keep.any() else 0.0
        lufs = -0.691 + 10.0 * np.log10(avg) if avg > 0 else -math.inf
    return lj.tolist(), float(lufs)


def _lra(blockwise: list[float]) -> float:
    """pyloudnorm's Meter.loudness_range from its 3 s blockwise loudness."""
    if not blockwise:
        raise ValueError("No blockwise loudness found")
    absg = [x for x in blockwise if x >= -70]
    if not absg:
        return math.nan
    integ = 10 * np.log10(np.sum(np.power(10, np.divide(absg, 10))) / len(absg))
    rel = [x for x in absg if x >= integ - 20]
    if not rel:
        return math.nan
    return float(np.percentile(rel, 95) - np.percentile(rel, 10))


def measure_stream(path: str, rate: int, channels: int, duration_s: float, window_s: float, hop_s: float):
    """(integrated LUFS, LRA or None, curve times, curve LUFS, samples measured) of the file streamed in
    windows: the numbers pyloudnorm and `loudness_curve` give on the whole signal, without holding it."""
    n_guess = math.ceil((duration_s * 1.02 + 2.0) * rate)
    n, plans, weighted, plain = _stream_powers(path, rate, channels, n_guess, window_s, hop_s)
    if n > n_guess:  # the container understated its length: measure again with the real one
        n, plans, weighted, plain = _stream_powers(path, rate, channels, n, window_s, hop_s)
    plans = _plans(n, rate, window_s, hop_s)  # a prefix of the boundaries measured (n <= n_guess)
    il, iu = plans["integrated"]
    _, integrated = _gated(weighted.between(il, iu), 0.4 * rate)
    lra = None
    if n / rate >= LRA_MIN_S:
        ll, lu = plans["lra"]
        blockwise, _ = _gated(weighted.between(ll, lu), 3.0 * rate)
        try:
            lra = _lra(blockwise)
        except (ValueError, IndexError, ZeroDivisionError):
            lra = None
    starts, ends = plans["curve"]
    win = plans["win"]
    ms = plain.between(starts, ends) / win
    with np.errstate(divide="ignore"):
        lufs = -0.691 + 10 * np.log10(np.maximum(ms, 1e-20))
    return integrated, lra, (starts + win / 2) / rate, lufs, n


def loudness(args: LoudnessArgs, ctx: ToolContext) -> ToolResult:
    a = ctx.audio(args.artifact)
    rate = int(a.artifact.sample_rate) if 8000 <= a.artifact.sample_rate <= 48000 else 48000
    channels = int(a.artifact.channels)
    measured = channels if 1 < channels <= 5 else 1  # more channels than BS.1770's five: the downmix
    integrated, lra, t, lufs, n = measure_stream(a.path, rate, measured, float(a.artifact.duration_s or 0.0),
                                                 args.window_s, args.hop_s)
    duration = min(n / rate, float(a.artifact.duration_s or n / rate))
    peak = float(np.max(lufs)) if len(lufs) else -math.inf
    active = (lufs > ABS_GATE_LUFS) & (lufs >= peak - args.active_range_db)
    trend = classify_trend(t[active], lufs[active], args.trend_db, args.fluctuation_db)

    def _fin(x: float | None) -> float | None:
        return round(x, 2) if x is not None and math.isfinite(x) else None

    out: dict = {
        "integrated_lufs": _fin(integrated),
        "loudness_range_lu": _fin(lra),
        "channels_measured": measured,
        "window_s": args.window_s,
        "hop_s": args.hop_s,
        **trend,
        "trend_rule": (f"linear fit over windows above -70 LUFS and within {args.active_range_db:g} dB of the "
                       f"loudest: |change| >= {args.trend_db:g} dB (and >= 2x residual std) is a trend; "
                       f"else residual std >= {args.fluctuation_db:g} dB is fluctuating; else steady"),
        "active_ratio": round(float(np.mean(active)), 4) if len(active) else 0.0,
    }
    if active.any():
        i_max = int(np.argmax(np.where(active, lufs, -np.inf)))
        i_min = int(np.argmin(np.where(active, lufs, np.inf)))
        out["loudest"] = {"time_s": round(float(t[i_max]), 2), "lufs": round(float(lufs[i_max]), 2)}
        out["quietest_active"] = {"time_s": round(float(t[i_min]), 2), "lufs": round(float(lufs[i_min]), 2)}
        out["active_span_s"] = [round(float(t[active][0]), 2), round(float(t[active][-1]), 2)]
    out["coverage"] = coverage([(0.0, duration)], (0.0, duration), max(1, math.ceil(duration / ANALYSIS_WINDOW_S)),
                               ANALYSIS_WINDOW_S)
    step = max(1, math.ceil(len(t) / MAX_CURVE_POINTS))
    out["curve"] = {
        "hop_s": round(args.hop_s * step, 3),
        "time_s": [round(float(x), 2) for x in t[::step]],
        "lufs": [round(float(x), 1) if x > ABS_GATE_LUFS else None for x in lufs[::step]],
    }

    claims: list[Claim] = []
    if out["integrated_lufs"] is None or not active.any():
        claims.append(Claim(text="The clip is silent for loudness purposes (nothing above -70 LUFS).",
                            data={"integrated_lufs": out["integrated_lufs"]}))
        return ToolResult(output=out, claims=claims)
    lra_txt = f", loudness range {out['loudness_range_lu']:.1f} LU" if out["loudness_range_lu"] is not None else ""
    claims.append(Claim(
        text=f"Integrated loudness {out['integrated_lufs']:.1f} LUFS (ITU-R BS.1770){lra_txt}.",
        data={"integrated_lufs": out["integrated_lufs"], "loudness_range_lu": out["loudness_range_lu"]},
    ))
    trend_words = {
        "increasing": f"gets louder over time (fitted change {trend['change_db']:+.1f} dB)",
        "decreasing": f"gets quieter over time (fitted change {trend['change_db']:+.1f} dB)",
        "steady": f"is steady (fitted change {trend['change_db']:+.1f} dB, "
                  f"spread {trend['residual_std_db']:.1f} dB)",
        "fluctuating": f"fluctuates without an overall trend (spread {trend['residual_std_db']:.1f} dB, "
                       f"fitted change {trend['change_db']:+.1f} dB)",
        "too_short": "cannot be judged (under 3 active windows)",
        "silent": "cannot be judged (too little active audio for a trend)",
    }
    span = out["active_span_s"]
    claims.append(Claim(
        text=f"Between {span[0]:.1f} and {span[1]:.1f} s the level {trend_words[trend['trend']]}.",
        data={k: trend[k] for k in ("trend", "change_db", "slope_db_per_s", "residual_std_db")},
    ))
    claims.append(Claim(
        text=(f"Loudest moment around {out['loudest']['time_s']:.1f} s ({out['loudest']['lufs']:.1f} LUFS "
              f"over {args.window_s:g} s); quietest non-silent moment around "
              f"{out['quietest_active']['time_s']:.1f} s ({out['quietest_active']['lufs']:.1f} LUFS)."),
        data={"loudest": out["loudest"], "quietest_active": out["quietest_active"]},
    ))
    return ToolResult(output=out, claims=claims)
