"""Pitch and amplitude modulation of a held sound: steady, vibrato (rate and depth), tremolo, glide up or down.

f0 by YIN (64 ms frames, 5 ms hop) and the level (dB) over the frames that hold the sound. The f0 track in
semitones is fitted with a line: a total change of >= GLIDE_ST semitones explaining most of its variance is a
glide. What is left after the fit is searched for a periodic wobble between 3 and 12 Hz: a spectral peak
holding >= PEAK_SHARE of the detrended track's power with a depth (half peak-to-peak) >= VIBRATO_ST semitones
is vibrato; the same test on the level track with a depth >= TREMOLO_DB dB is tremolo (amplitude modulation).
Neither: steady. Meant for a held tone, note or sung vowel, not for running speech or a melody of notes."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.common import within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME, HOP = 1024, 80
RATE_HZ = (3.0, 12.0)
GLIDE_ST = 1.5
VIBRATO_ST = 0.12
TREMOLO_DB = 1.5
PEAK_SHARE = 0.3
MAX_S = 30.0


class ModulationArgs(WindowArgs):
    fmin_hz: float = Field(60.0, ge=30.0, le=1000.0, description="lowest f0 searched (Hz)")
    fmax_hz: float = Field(2000.0, ge=100.0, le=4000.0, description="highest f0 searched (Hz)")


class PitchModulationOutput(CoveredOutput):
    label: Literal["steady", "vibrato", "tremolo", "glide_up", "glide_down", "unpitched"] = Field(
        description="the modulation heard (vibrato wins over tremolo when both are present)")
    median_f0_hz: float | None = Field(description="median f0 (Hz)")
    glide_semitones: float | None = Field(description="fitted f0 change over the sound (semitones; + upward)")
    vibrato_rate_hz: float | None = Field(description="rate of the strongest f0 wobble (Hz)")
    vibrato_depth_st: float | None = Field(description="its depth, half peak-to-peak (semitones)")
    tremolo_rate_hz: float | None = Field(description="rate of the strongest level wobble (Hz)")
    tremolo_depth_db: float | None = Field(description="its depth, half peak-to-peak (dB)")
    voiced_s: float = Field(description="seconds of pitched sound analysed")
    analysed_s: AnalysedWindow


def _wobble(x: np.ndarray, fs: float) -> tuple[float | None, float | None, float]:
    """(rate Hz, depth as half peak-to-peak, share of power in the peak) of the strongest 3-12 Hz periodicity."""
    if len(x) < int(fs * 0.6):
        return None, None, 0.0
    x = x - x.mean()
    n = 1 << int(np.ceil(np.log2(len(x) * 4)))
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x)), n)) ** 2
    f = np.fft.rfftfreq(n, 1 / fs)
    band = (f >= RATE_HZ[0]) & (f <= RATE_HZ[1])
    if not band.any() or spec[f > 0.5].sum() <= 0:
        return None, None, 0.0
    k = np.flatnonzero(band)[int(np.argmax(spec[band]))]
    width = max(1, round(1.0 / (f[1] - f[0])))  # +-1 Hz around the peak
    share = float(spec[max(0, k - width):k + width + 1].sum() / spec[f > 0.5].sum())
    # depth of the periodic part: amplitude of a sinusoid holding that power = sqrt(2 x its variance)
    depth = float(np.sqrt(2 * share * np.var(x)))
    return float(f[k]), depth, share


def pitch_modulation(args: ModulationArgs, ctx: ToolContext) -> ToolResult:
    import librosa

    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    # YIN's frame matrix grows with the length, so the budget is 30 s
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, "a held sound")
    f0 = librosa.yin(y, fmin=args.fmin_hz, fmax=args.fmax_hz, sr=SR, frame_length=FRAME, hop_length=HOP, center=True)
    rms = librosa.feature.rms(y=y, frame_length=FRAME, hop_length=HOP, center=True)[0]
    n = min(len(f0), len(rms))
    f0, level = f0[:n], 20 * np.log10(rms[:n] + 1e-9)
    loud = level >= level.max() - 20.0
    # the longest stretch of loud frames is the held sound
    edges = np.flatnonzero(np.diff(np.concatenate([[0], loud.astype(int), [0]])))
    pairs = list(zip(edges[::2], edges[1::2]))
    a, b = max(pairs, key=lambda p: p[1] - p[0]) if pairs else (0, 0)
    trim = int(0.05 * SR / HOP)  # leave out the attack and release
    a, b = a + trim, b - trim
    base = {"analysed_s": (round(t0, 3), round(t1, 3))}
    if b - a < int(0.4 * SR / HOP):
        out = {**base, "label": "unpitched", "median_f0_hz": None, "glide_semitones": None, "vibrato_rate_hz": None,
               "vibrato_depth_st": None, "tremolo_rate_hz": None, "tremolo_depth_db": None, "voiced_s": 0.0}
        return ToolResult(output=out, claims=[Claim(text="No held sound long enough (0.4 s) to judge its modulation.",
                                                    data={"label": "unpitched"})])
    hz = f0[a:b]
    st = 12 * np.log2(hz / np.median(hz))
    st = np.where(np.abs(st - np.median(st)) > 6, np.median(st), st)  # octave slips of the tracker
    fs = SR / HOP
    t = np.arange(len(st)) / fs
    slope, icpt = np.polyfit(t, st, 1)
    fit = slope * t + icpt
    glide = float(slope * (t[-1] - t[0]))
    explained = 1 - float(np.var(st - fit) / max(np.var(st), 1e-9))
    v_rate, v_depth, v_share = _wobble(st - fit, fs)
    lv = level[a:b]
    lv_fit = np.polyval(np.polyfit(t, lv, 1), t)
    tr_rate, tr_depth, tr_share = _wobble(lv - lv_fit, fs)
    vibrato = v_depth is not None and v_share >= PEAK_SHARE and v_depth >= VIBRATO_ST
    tremolo = tr_depth is not None and tr_share >= PEAK_SHARE and tr_depth >= TREMOLO_DB
    if abs(glide) >= GLIDE_ST and explained >= 0.6:
        label = "glide_up" if glide > 0 else "glide_down"
    elif vibrato:
        label = "vibrato"
    elif tremolo:
        label = "tremolo"
    else:
        label = "steady"
    def r(v: Any, d: int = 2) -> float | None:
        return None if v is None else round(float(v), d)

    out = {**base, "label": label, "median_f0_hz": r(np.median(hz), 1), "glide_semitones": r(glide),
           "vibrato_rate_hz": r(v_rate), "vibrato_depth_st": r(v_depth, 3), "tremolo_rate_hz": r(tr_rate),
           "tremolo_depth_db": r(tr_depth), "voiced_s": round((b - a) / fs, 2)}
    words = {"steady": "steady (no vibrato, tremolo or glide)", "glide_up": f"gliding up {glide:+.1f} semitones",
             "glide_down": f"gliding down {glide:+.1f} semitones",
             "vibrato": f"with vibrato ({v_rate:.1f} Hz, +-{v_depth:.2f} semitones)" if vibrato else "",
             "tremolo": f"with tremolo ({tr_rate:.1f} Hz, +-{tr_depth:.1f} dB)" if tremolo else ""}[label]
    text = (f"The held sound ({out['voiced_s']:.2f} s around {out['median_f0_hz']:.0f} Hz) is {words} "
            f"(glide >= {GLIDE_ST:g} st, vibrato >= {VIBRATO_ST:g} st, tremolo >= {TREMOLO_DB:g} dB at 3-12 Hz).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label})])
