"""Intonation range of speech: monotone, natural or exaggerated, from the spread of f0 over voiced speech.

f0 by YIN (64 ms frames, 10 ms hop, 60-500 Hz). A frame counts as voiced when it is within 30 dB of the
loudest frame and its normalised autocorrelation at the YIN period is >= VOICED_R (a periodic frame; noise and
unvoiced consonants fall below it, so pink noise at 10-20 dB SNR does not widen the spread). f0 in semitones
from the median; frames further than an octave from it (tracker octave slips) are left out. The spread is the
10th-90th percentile range (semitones), which ignores the few frames a tracker gets wrong:

- monotone: spread < MONOTONE_ST (1.5 st). flite voices with their f0 target deviation set to 0 read 0.4-1.3;
  any human or synthetic reading with an intonation model reads more.
- exaggerated: spread >= EXAGGERATED_ST (9 st). Default flite voices read 2.5-5.6 st (slt, rms, kal, awb on
  one sentence); ordinary read speech sits around 3-8 st; 'singsong' or swooping speech reaches 10-20.
- natural: in between.

YIN's frame matrix grows with the length, so at most MAX_S seconds are analysed (coverage says so)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.common import within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME, HOP = 1024, 160
FMIN_HZ, FMAX_HZ = 60.0, 500.0
VOICED_R = 0.7          # normalised autocorrelation at the period that makes a frame voiced
LEVEL_RANGE_DB = 30.0   # voiced frames lie within this of the loudest frame
MONOTONE_ST = 1.5       # 10-90 percentile f0 range below this: monotone
EXAGGERATED_ST = 9.0    # ... at or above this: exaggerated
MIN_VOICED_S = 0.5      # less voiced speech than this says nothing
MAX_S = 60.0


class IntonationArgs(WindowArgs):
    pass


class IntonationRangeOutput(CoveredOutput):
    label: Literal["monotone", "natural", "exaggerated", "no_voice"] = Field(
        description=f"monotone: f0 10-90% range < {MONOTONE_ST} st; exaggerated: >= {EXAGGERATED_ST} st; "
                    "no_voice: too little voiced speech")
    range_st: float | None = Field(description="10th-90th percentile range of f0 over voiced frames (semitones)")
    sd_st: float | None = Field(description="standard deviation of f0 over voiced frames (semitones)")
    median_f0_hz: float | None = Field(description="median f0 of the voiced frames (Hz)")
    voiced_s: float = Field(description="seconds of voiced frames measured")
    analysed_s: AnalysedWindow


def periodicity(y: np.ndarray, f0: np.ndarray, sr: int = SR, frame: int = FRAME, hop: int = HOP) -> np.ndarray:
    """Normalised autocorrelation of each (centred) frame at the lag of its f0: ~1 for a periodic frame, low for
    noise. Frames are taken in blocks so memory stays at a few MB whatever the length."""
    pad = np.pad(y.astype(np.float64), (frame // 2, frame // 2 + 1))
    lags = np.clip(np.round(sr / np.maximum(f0, 1.0)).astype(int), 1, frame // 2)
    out = np.zeros(len(f0))
    win = frame // 2
    for a in range(0, len(f0), 512):
        idx = np.arange(a, min(len(f0), a + 512))
        base = idx[:, None] * hop + np.arange(win)[None, :]
        x = pad[base]
        z = pad[np.minimum(base + lags[idx][:, None], len(pad) - 1)]
        num = (x * z).sum(1)
        den = np.sqrt((x * x).sum(1) * (z * z).sum(1)) + 1e-12
        out[idx] = num / den
    return out


def voiced_f0(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f0 Hz, level dB, voiced mask) per 10 ms frame of 16 kHz audio: YIN f0, frame RMS level, and the frames
    that are periodic (autocorrelation at the period >= VOICED_R) within LEVEL_RANGE_DB of the loudest frame.
    The one pitch tracker of the speech-melody descriptors (intonation_range, sentence_melody)."""
    import librosa

    f0 = librosa.yin(y, fmin=FMIN_HZ, fmax=FMAX_HZ, sr=SR, frame_length=FRAME, hop_length=HOP, center=True)
    rms = librosa.feature.rms(y=y, frame_length=FRAME, hop_length=HOP, center=True)[0]
    n = min(len(f0), len(rms))
    f0, level = f0[:n], 20 * np.log10(rms[:n] + 1e-9)
    r = periodicity(y, f0)[:n]
    voiced = (level >= level.max() - LEVEL_RANGE_DB) & (r >= VOICED_R) & (f0 > FMIN_HZ * 1.05) & (f0 < FMAX_HZ * 0.95)
    return f0, level, voiced


def intonation_range(args: IntonationArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    f0, _, voiced = voiced_f0(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    hz = f0[voiced]
    st = 12 * np.log2(hz / np.median(hz)) if len(hz) else np.zeros(0)
    st = st[np.abs(st) <= 12.0]
    voiced_s = round(len(st) * HOP / SR, 2)
    if voiced_s < MIN_VOICED_S:
        out = {**base, "label": "no_voice", "range_st": None, "sd_st": None, "median_f0_hz": None,
               "voiced_s": voiced_s}
        return ToolResult(output=out, claims=[Claim(
            text=f"Too little voiced speech ({voiced_s:.2f} s < {MIN_VOICED_S:g} s) to judge the intonation.",
            data={"label": "no_voice"})])
    spread = float(np.percentile(st, 90) - np.percentile(st, 10))
    label = "monotone" if spread < MONOTONE_ST else "exaggerated" if spread >= EXAGGERATED_ST else "natural"
    out = {**base, "label": label, "range_st": round(spread, 2), "sd_st": round(float(np.std(st)), 2),
           "median_f0_hz": round(float(np.median(hz)), 1), "voiced_s": voiced_s}
    text = (f"The speech melody is {label}: f0 spans {spread:.1f} semitones (10th-90th percentile) over "
            f"{voiced_s:.1f} s of voiced speech around {out['median_f0_hz']:.0f} Hz (monotone < {MONOTONE_ST:g}, "
            f"exaggerated >= {EXAGGERATED_ST:g} semitones).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "range_st": out["range_st"]})])
