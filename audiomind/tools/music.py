"""acoustic_music_features: pitch, tempo and beats, key, chords and note events.

These are measurements of musical structure (how high, how fast, which tonal centre, which triads, which
notes). None of them says what instrument or voice makes the sound, who is singing, or what the music
means; their claims stay with pitch, time and harmony.

Methods: pYIN (librosa) refined by YIN for pitch; librosa's onset envelope, tempo estimate and dynamic-
programming beat tracker for tempo; Krumhansl-Schmuckler profile correlation of CQT chroma for key;
triad templates on CQT chroma with a Viterbi smoother for chords; the basic-pitch ONNX model (Spotify,
Apache-2.0, carried by the `basic-pitch` package, installed --no-deps) for notes, with its note decoding
ported here so neither TensorFlow nor its MIDI dependencies are needed.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from audiomind.tools.base import Claim, TimeSpan, ToolArgs, ToolContext, ToolOutput, ToolResult

SR = 16000  # librosa analyses run on the shared 16 kHz decode (CQT up to B7 ~ 3.95 kHz fits under 8 kHz)
PITCH_CLASSES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
MAX_LISTED = 200  # notes / segments listed in an output; counts are always exact
MAX_CURVE_POINTS = 100


class WindowArgs(ToolArgs):
    """An optional analysis window inside the artifact; output times stay relative to the artifact."""

    start_s: float = Field(0.0, ge=0.0, description="analyse from this time (s)")
    end_s: float | None = Field(None, gt=0.0, description="analyse up to this time (s); default: the end")

    @model_validator(mode="after")
    def _ordered(self) -> WindowArgs:
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError("end_s must be greater than start_s")
        return self


def _excerpt(
    ctx: ToolContext, args: WindowArgs, sr: int = SR, min_s: float = 0.1
) -> tuple[np.ndarray, float, float]:
    """(samples of the window, its start, its end) in seconds of the artifact."""
    y = ctx.audio(args.artifact).samples(sr=sr, mono=True)
    duration = len(y) / sr
    end = duration if args.end_s is None else min(args.end_s, duration)
    if end - args.start_s < min_s:
        raise ValueError(
            f"analysis window {args.start_s:g}-{end:g} s is shorter than {min_s:g} s "
            f"(clip is {duration:.2f} s)"
        )
    return y[round(args.start_s * sr) : round(end * sr)].astype(np.float32), args.start_s, end


def _rms_db(y: np.ndarray, hop: int, frame: int = 2048) -> np.ndarray:
    import librosa

    rms = librosa.feature.rms(y=y, frame_length=frame, hop_length=hop, center=True)[0]
    return 20 * np.log10(np.maximum(rms, 1e-10))


# ------------------------------------------------------------------------------------------------- pitch

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


class PitchOutput(ToolOutput):
    window_s: tuple[float, float] = Field(description="analysed window [start, end] (s)")
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

    pYIN's HMM decides voicing and picks the octave on a 1/3-semitone grid (fast); where YIN's
    parabolic-interpolated estimate lies within one grid step of that, YIN's finer value is used."""
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
    return np.where(voiced, f0, np.nan), voiced, prob


def _trend(t: np.ndarray, semis: np.ndarray, trend_st: float, vary_st: float) -> dict:
    if len(t) < 3:
        return {"trend": "too_short", "change_semitones": 0.0, "residual_std_semitones": 0.0}
    slope, icpt = np.polyfit(t, semis, 1)
    change = float(slope * (t[-1] - t[0]))
    spread = float(np.std(semis - (slope * t + icpt)))
    if abs(change) >= trend_st and abs(change) >= 2 * spread:
        trend = "rising" if change > 0 else "falling"
    elif spread >= vary_st:
        trend = "varying"
    else:
        trend = "flat"
    return {"trend": trend, "change_semitones": round(change, 2), "residual_std_semitones": round(spread, 2)}


def _note(hz: float) -> str:
    import librosa

    return str(librosa.hz_to_note(hz, unicode=False))


def pitch(args: PitchArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _excerpt(ctx, args)
    f0, voiced, prob = f0_track(y, args.fmin_hz, args.fmax_hz)
    times = t0 + np.arange(len(f0)) * PITCH_HOP / SR
    v = voiced & np.isfinite(f0)
    out: dict = {
        "window_s": [round(t0, 3), round(t1, 3)],
        "frame_s": PITCH_HOP / SR,
        "voiced_ratio": round(float(np.mean(v)), 4) if len(v) else 0.0,
        "method": "pYIN voicing/tracking (1/3-semitone grid) refined by YIN",
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


# ------------------------------------------------------------------------------------------------- tempo

TEMPO_HOP = 128  # 8 ms onset-envelope frames


class TempoArgs(WindowArgs):
    start_bpm: float = Field(
        120.0,
        ge=30.0,
        le=300.0,
        description="prior centre of the tempo estimate; moves half/double-tempo choices",
    )
    max_beats: int = Field(
        32, ge=0, le=1000, description="beat times listed in the output (the count is exact)"
    )
    min_pulse_clarity: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="below this onset-envelope autocorrelation at the beat period "
        "the clip is reported as having no clear beat (noise scores "
        "< 0.1, speech syllables up to ~0.35, click and drum tracks > 0.6)",
    )


class TempoCandidate(ToolOutput):
    bpm: float = Field(description="tempo of an onset-autocorrelation peak (BPM)")
    strength: float = Field(description="autocorrelation at that period (0-1)")


class TempoOutput(ToolOutput):
    bpm: float = Field(description="estimated tempo (BPM)")
    bpm_method: str = Field(description="how bpm was obtained")
    autocorrelation_bpm: float = Field(description="the autocorrelation tempo estimate (BPM)")
    pulse_clarity: float = Field(description="onset autocorrelation at the beat period (0-1)")
    clear_beat: bool = Field(description="pulse_clarity reaches min_pulse_clarity and at least 4 beats")
    n_beats: int = Field(description="beats tracked (exact)")
    beat_times_s: list[float] = Field(description="beat times (s; at most max_beats)")
    beats_truncated: bool = Field(description="more beats than listed")
    mean_beat_interval_s: float | None = Field(description="mean time between beats (s); None under 2 beats")
    beat_interval_cv: float | None = Field(description="coefficient of variation of the beat intervals")
    regularity: Literal["regular", "somewhat irregular", "irregular"] | None = Field(
        description="from the beat-interval CV (< 0.05 regular, < 0.15 somewhat irregular)")
    candidates: list[TempoCandidate] = Field(description="strongest autocorrelation tempi, 30-300 BPM")
    window_s: tuple[float, float] = Field(description="analysed window [start, end] (s)")
    start_bpm: float = Field(description="prior centre of the tempo estimate (BPM)")


def onset_autocorrelation(oenv: np.ndarray, max_lag: int) -> np.ndarray:
    """Autocorrelation of the mean-removed onset envelope, 1.0 at lag 0. Removing the mean matters: a
    steady noise floor correlates with itself at every lag, a pulse only at its period and multiples."""
    import librosa

    o = oenv - oenv.mean()
    ac = librosa.autocorrelate(o, max_size=min(len(o), max_lag + 1))
    return ac / ac[0] if ac[0] > 0 else np.zeros_like(ac)


def global_tempo(ac: np.ndarray, start_bpm: float) -> float:
    """librosa.feature.tempo's rule (autocorrelation peak weighted by a log-normal prior, one octave wide,
    centred on start_bpm) applied to the whole-clip autocorrelation: the same choice on periodic signals at
    a tenth of the cost of averaging a windowed tempogram."""
    lags = np.arange(1, len(ac))
    bpm = 60.0 * SR / TEMPO_HOP / lags
    prior = np.exp(-0.5 * (np.log2(bpm) - np.log2(start_bpm)) ** 2)
    score = np.where((bpm >= 30) & (bpm <= 300), np.maximum(ac[1:], 0) * prior, -1.0)
    return float(bpm[int(np.argmax(score))])


def _tempo_candidates(ac: np.ndarray, k: int = 3) -> list[dict]:
    """The strongest autocorrelation peaks between 30 and 300 BPM (parabolic-interpolated lag)."""
    lo, hi = round(60 / 300 * SR / TEMPO_HOP), min(len(ac) - 2, round(60 / 30 * SR / TEMPO_HOP))
    peaks = [i for i in range(max(lo, 1), hi + 1) if ac[i] >= ac[i - 1] and ac[i] > ac[i + 1] and ac[i] > 0]
    peaks.sort(key=lambda i: -ac[i])
    out = []
    for i in peaks[:k]:
        a, b, c = ac[i - 1], ac[i], ac[i + 1]
        shift = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0.0
        out.append(
            {"bpm": round(float(60 * SR / TEMPO_HOP / (i + shift)), 1), "strength": round(float(b), 3)}
        )
    return out


def tempo(args: TempoArgs, ctx: ToolContext) -> ToolResult:
    import librosa

    y, t0, t1 = _excerpt(ctx, args, min_s=1.0)
    oenv = librosa.onset.onset_strength(y=y, sr=SR, hop_length=TEMPO_HOP)
    ac = onset_autocorrelation(oenv, round(60 / 30 * SR / TEMPO_HOP) + 2)
    global_bpm = global_tempo(ac, args.start_bpm)
    _, beats = librosa.beat.beat_track(
        onset_envelope=oenv,
        sr=SR,
        hop_length=TEMPO_HOP,
        start_bpm=args.start_bpm,
        bpm=global_bpm,
        units="time",
    )
    beats = np.asarray(beats, dtype=float)
    bpm, method = global_bpm, "autocorrelation tempo estimate"
    ibi = np.diff(beats)
    if len(beats) >= 4:
        # period by a line through the beat times (index counts a skipped beat as two periods): finer than
        # the autocorrelation lag grid, which is 2-4% coarse at 150 BPM
        med = float(np.median(ibi))
        idx = np.concatenate([[0], np.cumsum(np.maximum(1, np.round(ibi / med)))])
        period = float(np.polyfit(idx, beats, 1)[0])
        if period > 0 and abs(60.0 / period / global_bpm - 1) < 0.1:
            bpm, method = 60.0 / period, "line fit through tracked beat times"
    lag = round(60.0 / bpm * SR / TEMPO_HOP)
    clarity = max(0.0, float(ac[max(1, lag - 2) : lag + 3].max())) if 0 < lag < len(ac) - 1 else 0.0
    cv = float(np.std(ibi) / np.mean(ibi)) if len(ibi) >= 2 else None
    regularity = (
        None
        if cv is None
        else ("regular" if cv < 0.05 else "somewhat irregular" if cv < 0.15 else "irregular")
    )
    out = {
        "bpm": round(bpm, 2),
        "bpm_method": method,
        "autocorrelation_bpm": round(global_bpm, 2),
        "pulse_clarity": round(clarity, 3),
        "clear_beat": clarity >= args.min_pulse_clarity and len(beats) >= 4,
        "n_beats": len(beats),
        "beat_times_s": [round(float(b) + t0, 3) for b in beats[: args.max_beats]],
        "beats_truncated": len(beats) > args.max_beats,
        "mean_beat_interval_s": round(float(np.mean(ibi)), 4) if len(ibi) else None,
        "beat_interval_cv": round(cv, 4) if cv is not None else None,
        "regularity": regularity,
        "candidates": _tempo_candidates(ac),
        "window_s": [round(t0, 3), round(t1, 3)],
        "start_bpm": args.start_bpm,
    }
    if not out["clear_beat"]:
        guess = (
            f"; the tracker's best guess would be {bpm:.0f} BPM" if clarity >= 0.1 and len(beats) >= 2 else ""
        )
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No clear steady beat between {t0:.2f} and {t1:.2f} s (pulse clarity {clarity:.2f} < "
                        f"{args.min_pulse_clarity:g} or fewer than 4 beats){guess}."
                    ),
                    confidence=round(clarity, 3),
                    data={"bpm": out["bpm"], "pulse_clarity": out["pulse_clarity"]},
                )
            ],
        )
    claims = [
        Claim(
            text=(
                f"Tempo about {bpm:.1f} BPM between {t0:.2f} and {t1:.2f} s ({len(beats)} beats tracked, "
                f"mean interval {out['mean_beat_interval_s']:.3f} s); half or double ({bpm / 2:.0f} / "
                f"{bpm * 2:.0f} BPM) are the usual alternative readings of the same pulse."
            ),
            confidence=round(clarity, 3),
            data={"bpm": out["bpm"], "n_beats": out["n_beats"], "pulse_clarity": out["pulse_clarity"]},
        ),
        Claim(
            text=(
                f"The beat is {regularity} (beat-interval coefficient of variation {cv:.3f}); first beats at "
                + ", ".join(f"{b:.2f}" for b in out["beat_times_s"][:8])
                + " s."
            ),
            data={"beat_interval_cv": out["beat_interval_cv"], "beat_times_s": out["beat_times_s"][:8]},
        ),
    ]
    return ToolResult(output=out, claims=claims)


# -------------------------------------------------------------------------------------------------- key

CHROMA_HOP = 512  # 32 ms
# Krumhansl & Kessler (1982) probe-tone ratings, and Temperley's (1999) revision; index 0 = tonic
PROFILES = {
    "krumhansl": (
        np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88]),
        np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17]),
    ),
    "temperley": (
        np.array([5.0, 2.0, 3.5, 2.0, 4.5, 4.0, 2.0, 4.5, 2.0, 3.5, 1.5, 4.0]),
        np.array([5.0, 2.0, 3.5, 4.5, 2.0, 4.0, 2.0, 4.5, 3.5, 2.0, 1.5, 4.0]),
    ),
}


def log_chroma(y: np.ndarray, silence_db: float = 50.0) -> tuple[np.ndarray, np.ndarray]:
    """(12 x frames log-compressed CQT chroma, mask of frames within silence_db of the loudest).

    Chroma is not normalised per frame (decays and silences would add a flat floor) but log-compressed
    against the clip maximum, which keeps weak thirds from being swamped by a loud root and its overtones."""
    import warnings

    import librosa

    with warnings.catch_warnings():  # short windows: the CQT's low octaves run on few downsampled samples
        warnings.filterwarnings("ignore", message="n_fft=.* is too large", category=UserWarning)
        c = librosa.feature.chroma_cqt(y=y, sr=SR, hop_length=CHROMA_HOP, norm=None)
    db = _rms_db(y, CHROMA_HOP)[: c.shape[1]]
    if len(db) < c.shape[1]:
        db = np.pad(db, (0, c.shape[1] - len(db)), constant_values=-200.0)
    active = db >= max(float(db.max()) - silence_db, -80.0)
    top = float(c.max())
    c = np.log1p(100.0 * c / top) if top > 0 else c
    return c, active


def key_scores(profile: np.ndarray, which: str = "krumhansl") -> list[tuple[float, str, str]]:
    """[(correlation, tonic, mode)] for all 24 keys, best first."""
    major, minor = PROFILES[which]
    scores = []
    for mode, prof in (("major", major), ("minor", minor)):
        for k in range(12):
            r = float(np.corrcoef(profile, np.roll(prof, k))[0, 1]) if np.std(profile) > 0 else 0.0
            scores.append((r, PITCH_CLASSES[k], mode))
    return sorted(scores, key=lambda s: -s[0])


class KeyCorrelation(ToolOutput):
    key: str = Field(description="key name, e.g. 'A minor'")
    correlation: float = Field(description="correlation of the chroma profile with the key profile (-1..1)")


class KeyOutput(ToolOutput):
    tonic: str = Field(description="tonic pitch class of the best key")
    mode: Literal["major", "minor"] = Field(description="mode of the best key")
    key: str = Field(description="best key, e.g. 'C major' (claimed only when clear_key)")
    correlation: float = Field(description="its correlation with the key profile")
    runner_up: KeyCorrelation = Field(description="second-best key")
    margin: float = Field(description="best minus runner-up correlation")
    relative_key: KeyCorrelation = Field(description="the relative major/minor of the best key")
    clear_key: bool = Field(description="a key is claimed (see why_no_clear_key)")
    why_no_clear_key: list[str] = Field(description="reasons no key is claimed; empty when clear")
    pitch_classes_present: int = Field(description="pitch classes at >= half the strongest")
    chroma_contrast: float = Field(description="1 - weakest / strongest pitch class (0 = flat chroma)")
    profile: str = Field(description="key profiles used (krumhansl or temperley)")
    chroma_profile: dict[str, float] = Field(description="pitch class -> chroma energy relative to the strongest")
    top_keys: list[KeyCorrelation] = Field(description="the five best keys")
    window_s: tuple[float, float] = Field(description="analysed window [start, end] (s)")


class KeyArgs(WindowArgs):
    profile: Literal["krumhansl", "temperley"] = Field(
        "krumhansl", description="key profiles correlated with the chroma (Krumhansl-Kessler or Temperley)"
    )
    min_correlation: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="below this best correlation no key is claimed (weak tonality); "
        "a key also needs >= 3 pitch classes and a non-flat chroma",
    )


def key(args: KeyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _excerpt(ctx, args, min_s=0.5)
    c, active = log_chroma(y)
    profile = c[:, active].sum(axis=1) if active.any() else np.zeros(12)
    scores = key_scores(profile, args.profile)
    (r, tonic, mode), (r2, tonic2, mode2) = scores[0], scores[1]
    rel = PITCH_CLASSES[(PITCH_CLASSES.index(tonic) + (9 if mode == "major" else 3)) % 12]
    rel_mode = "minor" if mode == "major" else "major"
    rel_r = next(s[0] for s in scores if s[1] == rel and s[2] == rel_mode)
    norm = profile / profile.max() if profile.max() > 0 else profile
    n_pcs = int(np.sum(norm >= 0.5))
    contrast = float(1.0 - norm.min()) if profile.max() > 0 else 0.0
    why_not = []
    if r < args.min_correlation:
        why_not.append(f"best correlation {r:.2f} < {args.min_correlation:g}")
    if n_pcs < 3:
        why_not.append(f"only {n_pcs} pitch class(es) at >= half the strongest (a key needs at least 3)")
    if contrast < 0.2:
        why_not.append(f"chroma nearly flat (contrast {contrast:.2f} < 0.2: unpitched sound)")
    out = {
        "tonic": tonic,
        "mode": mode,
        "key": f"{tonic} {mode}",
        "correlation": round(r, 3),
        "runner_up": {"key": f"{tonic2} {mode2}", "correlation": round(r2, 3)},
        "margin": round(r - r2, 3),
        "relative_key": {"key": f"{rel} {rel_mode}", "correlation": round(rel_r, 3)},
        "clear_key": not why_not,
        "why_no_clear_key": why_not,
        "pitch_classes_present": n_pcs,
        "chroma_contrast": round(contrast, 3),
        "profile": args.profile,
        "chroma_profile": {pc: round(float(v), 3) for pc, v in zip(PITCH_CLASSES, norm)},
        "top_keys": [{"key": f"{t} {m}", "correlation": round(s, 3)} for s, t, m in scores[:5]],
        "window_s": [round(t0, 3), round(t1, 3)],
    }
    if why_not:
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No clear key between {t0:.2f} and {t1:.2f} s ({'; '.join(why_not)}); the best key-profile "
                        f"match would be {out['key']} ({r:.2f})."
                    ),
                    confidence=round(max(r, 0.0), 3),
                    data={"key": out["key"], "correlation": out["correlation"], "why_no_clear_key": why_not},
                )
            ],
        )
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"Estimated key {out['key']} between {t0:.2f} and {t1:.2f} s (chroma correlation with the "
                    f"{args.profile} key profile {r:.2f}; runner-up {out['runner_up']['key']} {r2:.2f}, relative "
                    f"{out['relative_key']['key']} {rel_r:.2f})."
                ),
                confidence=round(r, 3),
                data={k: out[k] for k in ("tonic", "mode", "key", "correlation", "runner_up", "margin")},
            )
        ],
    )


# ----------------------------------------------------------------------------------------------- chords


def _triad_templates() -> tuple[list[str], np.ndarray]:
    labels, rows = [], []
    for quality, intervals in (("", (0, 4, 7)), ("m", (0, 3, 7))):
        for root in range(12):
            t = np.zeros(12)
            t[[(root + i) % 12 for i in intervals]] = 1.0
            rows.append(t / np.linalg.norm(t))
            labels.append(PITCH_CLASSES[root] + quality)
    return labels, np.array(rows)


def viterbi_labels(scores: np.ndarray, switch_penalty: float) -> np.ndarray:
    """Best label path through (labels x frames) scores where each change of label costs switch_penalty."""
    k, n = scores.shape
    dp = scores[:, 0].copy()
    back = np.zeros((k, n), dtype=np.int32)
    ar = np.arange(k)
    for t in range(1, n):
        best = int(np.argmax(dp))
        switch = dp[best] - switch_penalty
        back[:, t] = np.where(dp >= switch, ar, best)
        dp = np.maximum(dp, switch) + scores[:, t]
    path = np.empty(n, dtype=np.int32)
    path[-1] = int(np.argmax(dp))
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[path[t], t]
    return path


class ChordsArgs(WindowArgs):
    switch_penalty: float = Field(
        1.0,
        ge=0.0,
        le=50.0,
        description="cost of a chord change (in summed per-frame template similarity); "
        "higher = fewer, longer segments",
    )
    no_chord_score: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="similarity a frame must beat for a chord rather than N (no chord); "
        "flat, unpitched chroma scores about 0.5",
    )
    min_segment_s: float = Field(
        0.25, ge=0.0, le=10.0, description="shorter segments are merged into a neighbour"
    )


class ChordSegment(TimeSpan):
    chord: str = Field(description="triad label (C, Am, ...) or N for no chord")
    score: float = Field(description="mean template similarity over the segment (0-1)")


class ChordsOutput(ToolOutput):
    segments: list[ChordSegment] = Field(description="chord segments in time order (N included; at most 200)")
    segments_truncated: bool = Field(description="more segments than listed")
    n_segments: int = Field(description="number of segments (exact)")
    sequence: list[str] = Field(description="chords in order, N left out")
    distinct_chords: list[str] = Field(description="distinct chords in order of first appearance")
    n_chord_changes: int = Field(description="changes between successive chords")
    chord_time_ratio: float = Field(description="share of the window covered by a chord (0-1)")
    vocabulary: str = Field(description="the chord vocabulary")
    window_s: tuple[float, float] = Field(description="analysed window [start, end] (s)")


def chords(args: ChordsArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _excerpt(ctx, args, min_s=0.5)
    c, active = log_chroma(y, silence_db=40.0)
    cn = c / (np.linalg.norm(c, axis=0, keepdims=True) + 1e-9)
    labels, templates = _triad_templates()
    labels = [*labels, "N"]
    scores = np.vstack([templates @ cn, np.full(cn.shape[1], args.no_chord_score)])
    scores[:, ~active] = 0.0
    scores[-1, ~active] = 1.0
    path = viterbi_labels(scores, args.switch_penalty)
    frame_s = CHROMA_HOP / SR
    runs: list[list[int]] = []  # [start frame, end frame, label]
    for i, lab in enumerate(path.tolist()):
        if runs and runs[-1][2] == lab:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1, lab])
    min_frames = round(args.min_segment_s / frame_s)
    changed = True
    while changed and len(runs) > 1:  # fold the shortest too-short segment into its better-matching neighbour
        changed = False
        short = [j for j, r in enumerate(runs) if r[1] - r[0] < min_frames]
        if short:
            j = min(short, key=lambda j: runs[j][1] - runs[j][0])
            a, b = runs[j][0], runs[j][1]
            nbrs = [x for x in (j - 1, j + 1) if 0 <= x < len(runs)]
            best = max(nbrs, key=lambda x: scores[runs[x][2], a:b].sum())
            if best < j:
                runs[best][1] = b
            else:
                runs[best][0] = a
            del runs[j]
            merged = [runs[0]]
            for r in runs[1:]:
                if r[2] == merged[-1][2]:
                    merged[-1][1] = r[1]
                else:
                    merged.append(r)
            runs = merged
            changed = True
    n_total = len(y) / SR
    segments = []
    for a, b, lab in runs:
        segments.append(
            {
                "start_s": round(t0 + a * frame_s, 2),
                "end_s": round(t0 + min(b * frame_s, n_total), 2),
                "chord": labels[lab],
                "score": round(float(scores[lab, a:b].mean()), 3),
            }
        )
    chord_segs = [s for s in segments if s["chord"] != "N"]
    sequence = [s["chord"] for s in chord_segs]
    out = {
        "segments": segments[:MAX_LISTED],
        "segments_truncated": len(segments) > MAX_LISTED,
        "n_segments": len(segments),
        "sequence": sequence[:MAX_LISTED],
        "distinct_chords": sorted(set(sequence), key=sequence.index),
        "n_chord_changes": max(0, len(sequence) - 1),
        "chord_time_ratio": round(sum(s["end_s"] - s["start_s"] for s in chord_segs) / max(t1 - t0, 1e-9), 3),
        "vocabulary": "24 major/minor triads + N (no chord); sevenths and inversions map to their triad",
        "window_s": [round(t0, 3), round(t1, 3)],
    }
    if not chord_segs:
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=f"No triad-like harmony found between {t0:.2f} and {t1:.2f} s (every frame scored as no chord).",
                    data={"n_segments": len(segments)},
                )
            ],
        )
    shown = ", ".join(f"{s['chord']} {s['start_s']:.2f}-{s['end_s']:.2f} s" for s in chord_segs[:16])
    more = f" (+{len(chord_segs) - 16} more)" if len(chord_segs) > 16 else ""
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"Chord sequence (major/minor triads by chroma templates): {shown}{more}; "
                    f"{len(out['distinct_chords'])} distinct chord(s), {out['n_chord_changes']} change(s)."
                ),
                confidence=round(float(np.mean([s["score"] for s in chord_segs])), 3),
                data={"segments": [[s["start_s"], s["end_s"], s["chord"]] for s in chord_segs[:MAX_LISTED]]},
            )
        ],
    )


# ------------------------------------------------------------------------------------------------ notes
# basic-pitch (ICASSP 2022) constants: 22.05 kHz input, 2 s windows (43844 samples) with 30 overlapping
# 256-sample frames, 88 piano-key note bins starting at A0 (MIDI 21).
BP_SR = 22050
BP_HOP = 256
BP_WINDOW = BP_SR * 2 - BP_HOP
BP_OVERLAP_FRAMES = 30
BP_OVERLAP = BP_OVERLAP_FRAMES * BP_HOP
BP_STEP = BP_WINDOW - BP_OVERLAP
BP_MIDI_OFFSET = 21
BP_MAX_FREQ_IDX = 87
BP_ENERGY_TOL = 11
BP_BATCH = 8


def basic_pitch_model_path() -> Path:
    """The ONNX model inside the `basic-pitch` wheel (located without importing the package, whose
    __init__ probes for TensorFlow/CoreML and logs warnings)."""
    spec = importlib.util.find_spec("basic_pitch")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package 'basic-pitch' is not installed (pip install --no-deps basic-pitch)")
    path = Path(next(iter(spec.submodule_search_locations))) / "saved_models" / "icassp_2022" / "nmp.onnx"
    if not path.exists():
        raise RuntimeError(f"basic-pitch is installed but has no ONNX model at {path}")
    return path


_BP_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _bp_session():
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(
        str(basic_pitch_model_path()), sess_options=opts, providers=["CPUExecutionProvider"]
    )


def basic_pitch_activations(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(note activations, onset activations, frame times s) for 22.05 kHz mono audio, windowed and
    unwrapped as basic_pitch.inference.run_inference does; times are exact for the kept frames."""
    with _BP_LOCK:
        sess = _bp_session()
    n = len(y)
    padded = np.concatenate([np.zeros(BP_OVERLAP // 2, dtype=np.float32), y.astype(np.float32)])
    starts = list(range(0, len(padded), BP_STEP))
    windows = np.zeros((len(starts), BP_WINDOW, 1), dtype=np.float32)
    for i, s in enumerate(starts):
        chunk = padded[s : s + BP_WINDOW]
        windows[i, : len(chunk), 0] = chunk
    notes, onsets = [], []
    for b in range(0, len(windows), BP_BATCH):
        note, onset = sess.run(
            ["StatefulPartitionedCall:1", "StatefulPartitionedCall:2"],
            {"serving_default_input_2:0": windows[b : b + BP_BATCH]},
        )
        notes.append(note)
        onsets.append(onset)
    half = BP_OVERLAP_FRAMES // 2

    def unwrap(parts: list[np.ndarray]) -> np.ndarray:  # drop half the overlap at each end, then concatenate
        arr = np.concatenate(parts)[:, half:-half, :]
        return arr.reshape(-1, arr.shape[2])

    note_act, onset_act = unwrap(notes), unwrap(onsets)
    keep = notes[0].shape[1] - 2 * half  # frames kept per window (142 of 172)
    n_frames = min(len(note_act), int(np.floor(n * (BP_SR // BP_HOP) / BP_SR)))
    idx = np.arange(n_frames)
    times = (idx // keep) * BP_STEP / BP_SR + (idx % keep) * BP_HOP / BP_SR
    return note_act[:n_frames], onset_act[:n_frames], times


def _infer_onsets(onsets: np.ndarray, frames: np.ndarray, n_diff: int = 2) -> np.ndarray:
    diffs = []
    for n in range(1, n_diff + 1):
        padded = np.concatenate([np.zeros((n, frames.shape[1])), frames])
        diffs.append(padded[n:, :] - padded[:-n, :])
    frame_diff = np.min(diffs, axis=0)
    frame_diff[frame_diff < 0] = 0
    frame_diff[:n_diff, :] = 0
    top = np.max(frame_diff)
    if top > 0:
        frame_diff = np.max(onsets) * frame_diff / top
    return np.max([onsets, frame_diff], axis=0)


def decode_notes(
    frames: np.ndarray,
    onsets: np.ndarray,
    onset_thresh: float,
    frame_thresh: float,
    min_note_len: int,
    min_midi: int | None = None,
    max_midi: int | None = None,
    melodia_trick: bool = True,
) -> list[tuple[int, int, int, float]]:
    """basic-pitch's polyphonic note decoding (note_creation.output_to_notes_polyphonic, Apache-2.0),
    ported: onset peaks start notes that last while the frame activation stays above frame_thresh; the
    'melodia trick' then picks up sustained notes without a clear onset. Returns (start frame, end frame,
    MIDI pitch, mean activation)."""
    import scipy.signal

    frames, onsets = frames.astype(np.float64).copy(), onsets.astype(np.float64).copy()
    n_frames = frames.shape[0]
    if max_midi is not None:
        frames[:, max_midi - BP_MIDI_OFFSET + 1 :] = 0
        onsets[:, max_midi - BP_MIDI_OFFSET + 1 :] = 0
    if min_midi is not None:
        frames[:, : max(0, min_midi - BP_MIDI_OFFSET)] = 0
        onsets[:, : max(0, min_midi - BP_MIDI_OFFSET)] = 0
    onsets = _infer_onsets(onsets, frames)
    peaks = np.zeros(onsets.shape)
    where = scipy.signal.argrelmax(onsets, axis=0)
    peaks[where] = onsets[where]
    on_t, on_f = np.where(peaks >= onset_thresh)
    remaining = frames.copy()
    events: list[tuple[int, int, int, float]] = []

    def clear(i: int, f: int) -> None:
        remaining[i, f] = 0
        if f < BP_MAX_FREQ_IDX:
            remaining[i, f + 1] = 0
        if f > 0:
            remaining[i, f - 1] = 0

    for start, f in zip(on_t[::-1], on_f[::-1]):  # backwards in time
        if start >= n_frames - 1:
            continue
        i, k = start + 1, 0
        while i < n_frames - 1 and k < BP_ENERGY_TOL:
            k = k + 1 if remaining[i, f] < frame_thresh else 0
            i += 1
        i -= k
        if i - start <= min_note_len:
            continue
        remaining[start:i, f] = 0
        if f < BP_MAX_FREQ_IDX:
            remaining[start:i, f + 1] = 0
        if f > 0:
            remaining[start:i, f - 1] = 0
        events.append((int(start), int(i), int(f) + BP_MIDI_OFFSET, float(np.mean(frames[start:i, f]))))
    if melodia_trick:
        while np.max(remaining) > frame_thresh:
            i_mid, f = np.unravel_index(np.argmax(remaining), remaining.shape)
            remaining[i_mid, f] = 0
            i, k = i_mid + 1, 0
            while i < n_frames - 1 and k < BP_ENERGY_TOL:
                k = k + 1 if remaining[i, f] < frame_thresh else 0
                clear(i, f)
                i += 1
            i_end = i - 1 - k
            i, k = i_mid - 1, 0
            while i > 0 and k < BP_ENERGY_TOL:
                k = k + 1 if remaining[i, f] < frame_thresh else 0
                clear(i, f)
                i -= 1
            i_start = i + 1 + k
            if i_end - i_start <= min_note_len:
                continue
            events.append(
                (int(i_start), int(i_end), int(f) + BP_MIDI_OFFSET, float(np.mean(frames[i_start:i_end, f])))
            )
    return events


def merge_reonsets(
    events: list[tuple[int, int, int, float]], frames: np.ndarray, rise: float = 0.05
) -> list[tuple[int, int, int, float]]:
    """Join a note to the same-pitch note that ends where it starts when the frame activation does not rise
    at the join: an onset leaking in from another note while this one still rings, not a re-attack."""
    merged: list[list] = []
    for a, b, m, amp in sorted(events, key=lambda e: (e[2], e[0])):
        if merged and merged[-1][2] == m and 0 <= a - merged[-1][1] <= 1 and a > 0:
            f = m - BP_MIDI_OFFSET
            if float(frames[a : a + 3, f].max()) <= float(frames[a - 1, f]) + rise:
                pa, pb = merged[-1][0], merged[-1][1]
                merged[-1][3] = (merged[-1][3] * (pb - pa) + amp * (b - a)) / max(1, b - pa)
                merged[-1][1] = b
                continue
        merged.append([a, b, m, amp])
    return [(a, b, m, amp) for a, b, m, amp in merged]


def _midi_name(m: int) -> str:
    return f"{PITCH_CLASSES[m % 12]}{m // 12 - 1}"


class NotesArgs(WindowArgs):
    onset_threshold: float = Field(0.5, ge=0.05, le=0.95, description="onset activation that starts a note")
    frame_threshold: float = Field(0.3, ge=0.05, le=0.95, description="frame activation that keeps a note on")
    min_note_ms: float = Field(127.7, ge=20.0, le=2000.0, description="drop notes shorter than this (ms)")
    min_note: str | None = Field(
        None, pattern=r"^[A-Ga-g][#b]?-?\d$", description="lowest note kept, e.g. 'C2'"
    )
    max_note: str | None = Field(
        None, pattern=r"^[A-Ga-g][#b]?-?\d$", description="highest note kept, e.g. 'C7'"
    )
    melodia_trick: bool = Field(True, description="also recover sustained notes without a detected onset")
    merge_reonsets: bool = Field(
        True,
        description="join a same-pitch note that starts where another ends without "
        "a new attack (an onset leaking in from a different note)",
    )


def _parse_note(name: str | None) -> int | None:
    if name is None:
        return None
    import librosa

    return round(librosa.note_to_midi(name))


class NoteEvent(TimeSpan):
    pitch_midi: int = Field(description="MIDI pitch number (60 = C4)")
    note: str = Field(description="note name (scientific pitch, e.g. C4)")
    activation: float = Field(description="mean basic-pitch frame activation over the note (0-1)")


class NotesOutput(ToolOutput):
    count: int = Field(description="notes transcribed (exact)")
    notes: list[NoteEvent] = Field(description="notes by onset (at most 200)")
    notes_truncated: bool = Field(description="more notes than listed")
    sequence: list[str] = Field(description="note names by onset")
    max_polyphony: int = Field(description="most notes sounding at once")
    lowest: str | None = Field(description="lowest note; None without notes")
    highest: str | None = Field(description="highest note; None without notes")
    model: str = Field(description="transcription model")
    window_s: tuple[float, float] = Field(description="analysed window [start, end] (s)")


def notes(args: NotesArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _excerpt(ctx, args, sr=BP_SR, min_s=0.2)
    frames, onsets, times = basic_pitch_activations(y)
    min_len = round(args.min_note_ms / 1000 * (BP_SR / BP_HOP))
    events = decode_notes(
        frames,
        onsets,
        args.onset_threshold,
        args.frame_threshold,
        min_len,
        _parse_note(args.min_note),
        _parse_note(args.max_note),
        args.melodia_trick,
    )
    if args.merge_reonsets:
        events = merge_reonsets(events, frames)
    found = []
    for a, b, m, amp in events:
        end_t = times[b] if b < len(times) else times[-1] + BP_HOP / BP_SR
        found.append(
            {
                "start_s": round(float(times[a]) + t0, 3),
                "end_s": round(float(end_t) + t0, 3),
                "pitch_midi": m,
                "note": _midi_name(m),
                "activation": round(amp, 3),
            }
        )
    found.sort(key=lambda n: (n["start_s"], n["pitch_midi"]))
    # maximum number of notes sounding at once (sweep over start/end events)
    marks = sorted([(n["start_s"], 1) for n in found] + [(n["end_s"], -1) for n in found])
    cur = poly = 0
    for _, d in marks:
        cur += d
        poly = max(poly, cur)
    out = {
        "count": len(found),
        "notes": found[:MAX_LISTED],
        "notes_truncated": len(found) > MAX_LISTED,
        "sequence": [n["note"] for n in found[:MAX_LISTED]],
        "max_polyphony": poly,
        "lowest": min(found, key=lambda n: n["pitch_midi"])["note"] if found else None,
        "highest": max(found, key=lambda n: n["pitch_midi"])["note"] if found else None,
        "model": "basic-pitch ICASSP 2022 (ONNX)",
        "window_s": [round(t0, 3), round(t1, 3)],
    }
    if not found:
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No pitched note events found between {t0:.2f} and {t1:.2f} s (basic-pitch, onset threshold "
                        f"{args.onset_threshold:g}, frame threshold {args.frame_threshold:g})."
                    ),
                    data={"count": 0},
                )
            ],
        )
    shown = ", ".join(f"{n['note']} {n['start_s']:.2f}-{n['end_s']:.2f} s" for n in found[:24])
    more = f" (+{len(found) - 24} more)" if len(found) > 24 else ""
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"{len(found)} note event(s) transcribed (basic-pitch): {shown}{more}; at most {poly} sounding at "
                    f"once; range {out['lowest']}-{out['highest']}."
                ),
                confidence=round(float(np.mean([n["activation"] for n in found])), 3),
                data={
                    "count": len(found),
                    "notes": [[n["start_s"], n["end_s"], n["note"]] for n in found[:MAX_LISTED]],
                },
            )
        ],
    )
