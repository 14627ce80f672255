"""Time structure: a silence map (where and how long each silence is) and a tempo trend (accelerating,
decelerating or steady) from onset intervals.

Silence map: 20 ms frames are silent when they are less than 12 dB over the clip's noise floor (10th
percentile of frame levels) or below -60 dBFS; runs of at least `min_silence_s` are silences. Each is placed
in the clip's first, middle or last third by its midpoint. With steady background noise a silence is a
stretch with nothing over the noise.

Tempo trend: onsets (librosa onset strength, peak picking; peaks under 35% of the strong ones, or that raise the
level by under 8 dB over the 100 ms before, dropped) give inter-onset intervals; a local tempo per onset is
60 / the median interval around it (5 intervals), and a line (Theil-Sen, robust to a stray onset) fitted to
log tempo over time gives the
tempo change from start to end: >= +TREND_PCT % accelerating, <= -TREND_PCT % decelerating."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import active_frames, frame_db, runs
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME = 320
TREND_PCT = 10.0
ONSET_RISE_DB = 8.0  # an onset raises the level (20 ms frames) this much over the median of the 100 ms before
WEAK_ONSET = 0.35  # onsets weaker than this share of the strong ones (90th percentile) are left out


class SilenceMapArgs(WindowArgs):
    min_silence_s: float = Field(0.3, ge=0.05, le=10.0, description="shortest silence reported (s)")


class Silence(ToolOutput):
    start_s: float = Field(description="start (s)")
    end_s: float = Field(description="end (s)")
    length_s: float = Field(description="length (s)")
    where: Literal["beginning", "middle", "end"] = Field(description="third of the analysed window holding its midpoint")
    edge: bool = Field(description="it touches the start or the end of the analysed window")


class SilenceMapOutput(CoveredOutput):
    silences: list[Silence] = Field(description="silences in time order")
    longest: int | None = Field(description="index of the longest silence between sounds (else the longest)")
    total_silence_s: float = Field(description="seconds of silence")
    noise_floor_dbfs: float = Field(description="noise floor (10th percentile of 20 ms frame levels)")
    analysed_s: AnalysedWindow


def silence_map(args: SilenceMapArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.2)
    db = frame_db(y, FRAME)
    act, floor = active_frames(db, 12.0, -60.0)
    dur = t1 - t0
    sil = []
    for a, b in runs(~act):
        s, e = t0 + a * FRAME / SR, t0 + b * FRAME / SR
        if b >= len(act):
            e = t1
        if e - s < args.min_silence_s:
            continue
        mid = ((s + e) / 2 - t0) / max(dur, 1e-9)
        sil.append({"start_s": round(s, 3), "end_s": round(e, 3), "length_s": round(e - s, 3),
                    "where": "beginning" if mid < 1 / 3 else "middle" if mid <= 2 / 3 else "end",
                    "edge": bool(a == 0 or b >= len(act))})
    inner = [i for i, s in enumerate(sil) if not s["edge"]]
    pool = inner or list(range(len(sil)))
    longest = max(pool, key=lambda i: sil[i]["length_s"]) if pool else None
    out = {"silences": sil, "longest": longest, "total_silence_s": round(sum(s["length_s"] for s in sil), 3),
           "noise_floor_dbfs": round(floor, 1), "analysed_s": (round(t0, 3), round(t1, 3))}
    if longest is None:
        text = f"No silence of {args.min_silence_s:g} s or more between {t0:.2f} and {t1:.2f} s."
    else:
        L = sil[longest]
        text = (f"{len(sil)} silence(s) of >= {args.min_silence_s:g} s between {t0:.2f} and {t1:.2f} s "
                f"({out['total_silence_s']:.2f} s in all); the longest"
                + (" between sounds" if inner else "") + f" is {L['length_s']:.2f} s at {L['start_s']:.2f}-"
                f"{L['end_s']:.2f} s, in the {L['where']} of the clip.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"longest": sil[longest] if longest is not None else None})])


class TempoTrendArgs(WindowArgs):
    pass


class TempoTrendOutput(CoveredOutput):
    label: Literal["accelerating", "decelerating", "steady", "too_few_onsets"] = Field(description="the trend")
    onsets: int = Field(description="onsets found")
    start_bpm: float | None = Field(description="median local tempo over the first third (BPM)")
    end_bpm: float | None = Field(description="median local tempo over the last third (BPM)")
    change_pct: float | None = Field(description="tempo change from start to end (%)")
    onset_times_s: list[float] = Field(description="onset times (s, at most 200)")
    analysed_s: AnalysedWindow


def _onset_envelope(y: np.ndarray, hop: int = 160) -> np.ndarray:
    """librosa's onset strength (10 ms hop) computed one 60 s block at a time with 0.5 s of context on each
    side, so memory stays bounded on long excerpts (one pass over 600 s held ~800 MB of spectrogram)."""
    import librosa

    block, ctx_n = 60 * SR, SR // 2
    out = []
    for a in range(0, len(y), block):
        lo, hi = max(0, a - ctx_n), min(len(y), a + block + ctx_n)
        env = librosa.onset.onset_strength(y=y[lo:hi], sr=SR, hop_length=hop)
        first = (a - lo) // hop
        out.append(env[first: first + (min(len(y), a + block) - a + hop - 1) // hop])
    return np.concatenate(out) if out else np.zeros(0)


def _local_tempo(env: np.ndarray, hop: int = 160) -> np.ndarray:
    """Tempo (BPM) per onset-envelope frame from librosa's windowed autocorrelation (4 s windows, its
    log-normal prior around 120 BPM against octave slips), one 60 s block at a time (the tempogram of a whole
    600 s excerpt would hold ~200 MB)."""
    import librosa

    block = 60 * SR // hop
    out = [librosa.feature.tempo(onset_envelope=env[a:a + block], sr=SR, hop_length=hop, aggregate=None, ac_size=4.0)
           for a in range(0, len(env), block) if len(env[a:a + block]) >= 50]
    return np.concatenate(out) if out else np.array([120.0])


def tempo_trend(args: TempoTrendArgs, ctx: ToolContext) -> ToolResult:
    import librosa

    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    env = _onset_envelope(y)
    frames = librosa.onset.onset_detect(onset_envelope=env, sr=SR, hop_length=160, units="frames", backtrack=False)
    if len(frames):  # weak peaks of the onset strength, or peaks with no rise in level, are noise, not events
        frames = frames[env[frames] >= WEAK_ONSET * np.percentile(env[frames], 90)]
        level = frame_db(np.concatenate([np.zeros(160, np.float32), y]), 320, 160)
        rise = np.array([level[min(f + 1, len(level) - 1):f + 4].max(initial=-100.0)
                         - np.median(level[max(0, f - 10):f + 1]) for f in frames])
        frames = frames[rise >= ONSET_RISE_DB]
    on = np.asarray(librosa.frames_to_time(frames, sr=SR, hop_length=160), dtype=float) + t0
    base = {"onsets": len(on), "onset_times_s": [round(float(x), 3) for x in on[:200]],
            "analysed_s": (round(t0, 3), round(t1, 3))}
    if len(on) < 6:
        out = {**base, "label": "too_few_onsets", "start_bpm": None, "end_bpm": None, "change_pct": None}
        return ToolResult(output=out, claims=[Claim(text=f"Only {len(on)} onsets: too few for a tempo trend.",
                                                    data={"label": "too_few_onsets"})])
    tempo = _local_tempo(env)
    third = max(1, len(tempo) // 3)
    start_bpm, end_bpm = float(np.median(tempo[:third])), float(np.median(tempo[-third:]))
    change = 100 * (end_bpm / start_bpm - 1)
    label = "accelerating" if change >= TREND_PCT else "decelerating" if change <= -TREND_PCT else "steady"
    out = {**base, "label": label, "start_bpm": round(start_bpm, 1), "end_bpm": round(end_bpm, 1),
           "change_pct": round(change, 1)}
    words = {"accelerating": "speeds up", "decelerating": "slows down", "steady": "keeps a steady pace"}[label]
    text = (f"The pulse {words}: {len(on)} onsets, local tempo {start_bpm:.0f} -> {end_bpm:.0f} BPM (first vs last third) "
            f"({change:+.0f}%; a trend needs +-{TREND_PCT:g}%).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "change_pct": out["change_pct"]})])
