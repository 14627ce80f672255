"""pitch: how high a voice, tone or melody is, and whether it rises or falls.

pYIN (librosa) decides voicing and tracks f0 on a fine grid; YIN's parabolic-interpolated estimate
refines it where the two agree. Claims stay with pitch and time: nothing here says who or what makes the
sound.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import SR
from audiomind.tools.trend import fit_trend
from audiomind.tools.window import WindowArgs, excerpt

MAX_CURVE_POINTS = 100
PITCH_HOP = 256  # 16 ms
PITCH_FRAME = 2048  # 128 ms: room for two periods down to 30 Hz
PYIN_RESOLUTION = 0.2  # semitones; a 1/3 grid loses voicing on band-limited low voices (flite kal: 0% voiced vs 58%)


class PitchArgs(WindowArgs):
    fmin_hz: float = Field(50.0, ge=30.0, le=1000.0, description="lowest fundamental to search (Hz)")
    fmax_hz: float = Field(2000.0, ge=100.0, le=4000.0, description="highest fundamental to search (Hz)")
    trend_semitones: float = Field(
        2.0,
        ge=0.25,
        le=24.0,
        description="a fitted change of at least this many semitones over the voiced "
        "span counts as rising/falling",
    )
    varying_semitones: float = Field(
        2.0,
        ge=0.25,
        le=24.0,
        description="without a trend, a residual spread above this (semitones) "
        "counts as varying rather than flat",
    )

    @model_validator(mode="after")
    def _range(self) -> PitchArgs:
        if self.fmax_hz <= self.fmin_hz * 1.5:
            raise ValueError("fmax_hz must be at least 1.5 x fmin_hz")
        return self


class NoteShare(ToolOutput):
    note: str = Field(description="note name (scientific pitch, e.g. A4)")
    share: float = Field(description="share of the voiced frames nearest this note (0-1)")


class PitchContour(ToolOutput):
    hop_s: float = Field(description="time between contour points (s)")
    time_s: list[float] = Field(description="frame times (s)")
    f0_hz: list[float | None] = Field(description="fundamental frequency (Hz); None where unvoiced")


class PitchOutput(CoveredOutput):
    window_s: AnalysedWindow
    frame_s: float = Field(description="pitch frame hop (s)")
    voiced_ratio: float = Field(description="share of frames with a pitch (0-1)")
    method: str = Field(description="pitch tracking method")
    median_f0_hz: float | None = Field(description="median fundamental frequency (Hz); None when unvoiced")
    trend: Literal["rising", "falling", "flat", "varying", "too_short", "unvoiced"] = Field(
        description="pitch over time by a linear fit (unvoiced: fewer than 3 voiced frames)")
    # set only when the window is voiced
    median_note: str | None = Field(None, description="note nearest the median f0")
    mean_f0_hz: float | None = Field(None, description="mean fundamental frequency (Hz)")
    range_hz: tuple[float, float] | None = Field(None, description="lowest and highest f0 (Hz)")
    p5_p95_hz: tuple[float, float] | None = Field(None, description="5th and 95th percentile f0 (Hz)")
    range_semitones_p5_p95: float | None = Field(None, description="5-95% f0 range (semitones)")
    start_f0_hz: float | None = Field(None, description="median f0 of the first fifth of the voiced frames (Hz)")
    end_f0_hz: float | None = Field(None, description="median f0 of the last fifth of the voiced frames (Hz)")
    voiced_span_s: tuple[float, float] | None = Field(None, description="first and last voiced time (s)")
    mean_voiced_prob: float | None = Field(None, description="mean pYIN voicing probability of voiced frames")
    main_notes: list[NoteShare] | None = Field(None, description="notes held in at least 5% of voiced frames")
    change_semitones: float | None = Field(None, description="fitted pitch change over the voiced span")
    residual_std_semitones: float | None = Field(None, description="spread around the fit (semitones)")
    trend_rule: str | None = Field(None, description="the rule that named the trend")
    contour: PitchContour | None = Field(None, description="pitch over time (at most 100 points)")


def f0_track(y: np.ndarray, fmin: float, fmax: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f0 Hz with NaN where unvoiced, voiced flag, voiced probability) per 16 ms frame.

    pYIN's HMM decides voicing and picks the octave on a 0.2-semitone grid (fast); where YIN's
    parabolic-interpolated estimate lies within one grid step of that, YIN's finer value is used. When
    pYIN leaves the audible frames (almost) all unvoiced, clearly periodic frames by normalised
    autocorrelation are used there (probability AC_PROB)."""
    import librosa

    f0, voiced, prob = librosa.pyin(
        y,
        fmin=fmin,
        fmax=fmax,
        sr=SR,
        frame_length=PITCH_FRAME,
        hop_length=PITCH_HOP,
        resolution=PYIN_RESOLUTION,
    )
    fine = librosa.yin(y, fmin=fmin, fmax=fmax, sr=SR, frame_length=PITCH_FRAME, hop_length=PITCH_HOP)
    n = min(len(f0), len(fine))
    f0, voiced, prob, fine = f0[:n], voiced[:n], prob[:n], fine[:n]
    with np.errstate(invalid="ignore", divide="ignore"):
        close = voiced & (np.abs(12 * np.log2(fine / f0)) <= PYIN_RESOLUTION)
    f0 = np.where(close, fine, f0)
    f0 = np.where(voiced, f0, np.nan)
    # pYIN's HMM can leave a whole low, band-limited voice unvoiced (flite kal at 8 kHz: 0 voiced frames,
    # its f0 near 90 Hz), also when another, higher voice in the clip is tracked well: in each audible
    # stretch that pYIN left (almost) unvoiced, clearly periodic frames by normalised autocorrelation count
    stretches = [(a, b) for a, b in _stretches(_loud_frames(y, n)) if b - a >= 10 and voiced[a:b].mean() < 0.1]
    if stretches:
        ac_f0 = autocorrelation_f0(y, fmin, min(fmax, SPEECH_FMAX_HZ), n)
        use = np.zeros(n, bool)
        for a, b in stretches:
            use[a:b] = True
        use &= ~voiced & np.isfinite(ac_f0)
        f0 = np.where(use, ac_f0, f0)
        prob = np.where(use, AC_PROB, prob)
        voiced = voiced | use
    return f0, voiced, prob


def _stretches(mask: np.ndarray, bridge: int = 10) -> list[tuple[int, int]]:
    """[start, end) runs of True frames, bridging gaps shorter than `bridge` frames (160 ms)."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return []
    breaks = np.flatnonzero(np.diff(idx) > bridge)
    starts = np.concatenate([[idx[0]], idx[breaks + 1]])
    ends = np.concatenate([idx[breaks], [idx[-1]]]) + 1
    return list(zip(starts.tolist(), ends.tolist()))


SPEECH_FMAX_HZ = 500.0
AC_CLARITY = 0.75  # normalised autocorrelation peak a frame needs to count as periodic (noise stays below)
AC_PROB = 0.5  # the voicing probability recorded for a frame found by the fallback
AC_FRAME = 640  # 40 ms: two periods down to 50 Hz, short enough for a speaking voice's moving pitch


def _frames(y: np.ndarray, n: int) -> np.ndarray:
    """n frames of AC_FRAME samples, PITCH_HOP apart, centred like librosa's (a strided view)."""
    pad = np.pad(y.astype(np.float32), (AC_FRAME // 2, AC_FRAME + n * PITCH_HOP))
    return np.lib.stride_tricks.sliding_window_view(pad, AC_FRAME)[::PITCH_HOP][:n]


def _loud_frames(y: np.ndarray, n: int) -> np.ndarray:
    """Frames within 30 dB of the loudest: where a pitch could be heard."""
    if n == 0:
        return np.zeros(0, bool)
    rms = np.sqrt(np.mean(_frames(y, n).astype(np.float64) ** 2, axis=1) + 1e-12)
    return 20 * np.log10(rms / rms.max()) >= -30


def autocorrelation_f0(y: np.ndarray, fmin: float, fmax: float, n: int, chunk: int = 2048) -> np.ndarray:
    """f0 per frame (PITCH_HOP apart, centred) from the normalised autocorrelation peak in [SR/fmax, SR/fmin];
    NaN where the peak is below AC_CLARITY (not clearly periodic). Frames in chunks, by FFT."""
    lo, hi = int(SR / fmax), min(int(SR / fmin), AC_FRAME - 2)
    out = np.full(n, np.nan)
    if hi <= lo + 2:
        return out
    frames = _frames(y, n)
    lags = np.arange(lo, hi + 1)
    for a in range(0, n, chunk):
        x = frames[a: a + chunk].astype(np.float64)
        x = x - x.mean(axis=1, keepdims=True)
        spec = np.fft.rfft(x, 2 * AC_FRAME, axis=1)
        ac = np.fft.irfft(spec * np.conj(spec), axis=1)[:, : AC_FRAME]
        sq = np.cumsum(x ** 2, axis=1)
        e = sq[:, -1:]
        tail = e - np.concatenate([np.zeros((len(x), 1)), sq[:, :-1]], axis=1)  # energy of x[k:]
        r = ac[:, lags] / np.sqrt(e * tail[:, lags] + 1e-12)
        r[e[:, 0] <= 1e-9] = 0.0
        k = np.argmax(r, axis=1)
        rows = np.arange(len(x))
        ok = (r[rows, k] >= AC_CLARITY) & (k > 0) & (k < len(lags) - 1)
        km, kp = np.clip(k - 1, 0, len(lags) - 1), np.clip(k + 1, 0, len(lags) - 1)
        p, b, c = r[rows, km], r[rows, k], r[rows, kp]
        den = p - 2 * b + c
        shift = np.where(den != 0, 0.5 * (p - c) / np.where(den != 0, den, 1), 0.0)
        out[a: a + len(x)] = np.where(ok, SR / (lo + k + shift), np.nan)
    return out


def _trend(t: np.ndarray, semis: np.ndarray, trend_st: float, vary_st: float) -> dict:
    if len(t) < 3:
        return {"trend": "too_short", "change_semitones": 0.0, "residual_std_semitones": 0.0}
    fit = fit_trend(t, semis, trend_st, vary_st)
    words = {"up": "rising", "down": "falling", "varying": "varying", "flat": "flat"}
    return {"trend": words[fit.direction], "change_semitones": round(fit.change, 2),
            "residual_std_semitones": round(fit.spread, 2)}


def _note(hz: float) -> str:
    import librosa

    return str(librosa.hz_to_note(hz, unicode=False))


def pitch(args: PitchArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args)
    f0, voiced, prob = f0_track(y, args.fmin_hz, args.fmax_hz)
    times = t0 + np.arange(len(f0)) * PITCH_HOP / SR
    v = voiced & np.isfinite(f0)
    out: dict = {
        "window_s": [round(t0, 3), round(t1, 3)],
        "frame_s": PITCH_HOP / SR,
        "voiced_ratio": round(float(np.mean(v)), 4) if len(v) else 0.0,
        "method": "pYIN voicing/tracking (0.2-semitone grid) refined by YIN"
        + ("; autocorrelation (40 ms frames) where pYIN found no voicing" if bool(np.any(prob[v] == AC_PROB)) else ""),
    }
    if v.sum() < 3:
        out.update({"median_f0_hz": None, "trend": "unvoiced"})
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No stable pitch found between {t0:.2f} and {t1:.2f} s (pYIN voiced in "
                        f"{100 * out['voiced_ratio']:.0f}% of frames, {args.fmin_hz:g}-{args.fmax_hz:g} Hz searched)."
                    ),
                    data={"voiced_ratio": out["voiced_ratio"]},
                )
            ],
        )
    fv, tv = f0[v], times[v]
    semis = 12 * np.log2(fv / 440.0) + 69  # MIDI pitch numbers (fractional)
    med = float(np.median(fv))
    p5, p95 = (float(x) for x in np.percentile(fv, [5, 95]))
    q = max(1, len(fv) // 5)
    trend = _trend(tv, semis, args.trend_semitones, args.varying_semitones)
    midi_vals, counts = np.unique(np.round(semis).astype(int), return_counts=True)
    order = np.argsort(-counts)[:6]
    main_notes = [
        {
            "note": _note(440.0 * 2 ** ((int(midi_vals[i]) - 69) / 12)),
            "share": round(float(counts[i] / len(fv)), 3),
        }
        for i in order
        if counts[i] / len(fv) >= 0.05
    ]
    step = max(1, math.ceil(len(f0) / MAX_CURVE_POINTS))
    out.update(
        {
            "median_f0_hz": round(med, 2),
            "median_note": _note(med),
            "mean_f0_hz": round(float(np.mean(fv)), 2),
            "range_hz": [round(float(fv.min()), 2), round(float(fv.max()), 2)],
            "p5_p95_hz": [round(p5, 2), round(p95, 2)],
            "range_semitones_p5_p95": round(12 * math.log2(p95 / p5), 2),
            "start_f0_hz": round(float(np.median(fv[:q])), 2),
            "end_f0_hz": round(float(np.median(fv[-q:])), 2),
            "voiced_span_s": [round(float(tv[0]), 3), round(float(tv[-1] + PITCH_HOP / SR), 3)],
            "mean_voiced_prob": round(float(np.mean(prob[v])), 3),
            "main_notes": main_notes,
            **trend,
            "trend_rule": (
                f"linear fit of pitch (semitones) over voiced frames: |change| >= {args.trend_semitones:g} "
                f"(and >= 2x residual std) is rising/falling; else residual std >= "
                f"{args.varying_semitones:g} is varying; else flat"
            ),
            "contour": {
                "hop_s": round(step * PITCH_HOP / SR, 4),
                "time_s": [round(float(x), 2) for x in times[::step]],
                "f0_hz": [round(float(x), 1) if np.isfinite(x) else None for x in f0[::step]],
            },
        }
    )
    span = out["voiced_span_s"]
    claims = [
        Claim(
            text=(
                f"Median fundamental frequency {med:.1f} Hz (about {out['median_note']}); 5-95% range "
                f"{p5:.1f}-{p95:.1f} Hz ({out['range_semitones_p5_p95']:.1f} semitones); pitched (voiced) in "
                f"{100 * out['voiced_ratio']:.0f}% of frames between {t0:.2f} and {t1:.2f} s."
            ),
            confidence=out["mean_voiced_prob"],
            data={k: out[k] for k in ("median_f0_hz", "median_note", "p5_p95_hz", "voiced_ratio")},
        ),
    ]
    words = {
        "rising": "rises",
        "falling": "falls",
        "flat": "stays level",
        "varying": "moves up and down without an overall trend",
        "too_short": "is too short to judge",
    }
    claims.append(
        Claim(
            text=(
                f"Between {span[0]:.2f} and {span[1]:.2f} s the pitch {words[trend['trend']]} (fitted change "
                f"{trend['change_semitones']:+.1f} semitones, spread {trend['residual_std_semitones']:.1f}; starts "
                f"near {out['start_f0_hz']:.0f} Hz, ends near {out['end_f0_hz']:.0f} Hz)."
            ),
            data={
                k: out[k]
                for k in ("trend", "change_semitones", "residual_std_semitones", "start_f0_hz", "end_f0_hz")
            },
        )
    )
    return ToolResult(output=out, claims=claims)

