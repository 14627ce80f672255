"""Reverberation and echo: a decay-time estimate, a direct(+early)-to-late energy ratio and distinct echo delays.

- Decay time: the level (dB, 20 ms frames, 5 ms hop, smoothed over 35 ms) is followed down from each peak
  until the next sound starts; a room bounds how fast any sound can die away, so the fast end of the implied
  decay times (25th percentile) estimates T60. On flite speech convolved with exponential-decay impulse
  responses of T60 0.3 / 0.6 / 1.2 / 2.0 s it reads about 0.4 / 0.6 / 0.9 / 1.7 s, and 0.25 s for the dry voice
  (it underestimates long decays that the next word interrupts).
- Direct-to-reverberant ratio: the late-reverberation estimate of Lebart et al. (the power 50 ms earlier,
  attenuated by the fitted decay) split from the rest: 10 log10(early energy / late energy). A blind estimate.
- Echo: a delayed copy y(t) + g y(t - D) puts a peak at quefrency D in the real cepstrum (about g / 2). The
  cepstra of 4 s windows are averaged and searched from 40 ms to 1 s; a peak ECHO_Z robust z-scores above the
  rest, positive and not followed by a stronger one at 2D (a periodic sound's repetition) is an echo."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import active_frames, frame_db
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME, HOP = 320, 80          # 20 ms frames, 5 ms hop
SMOOTH_FRAMES = 7             # level smoothed over 35 ms
ABOVE_FLOOR_DB = 15.0
RISE_DB = 6.0
MIN_FALL_DB = 8.0
DRY_T60_S = 0.3               # decay-time bands for the label
REVERB_T60_S = 0.55
EARLY_S = 0.05
ECHO_RANGE_S = (0.04, 1.0)
ECHO_WINDOW_S = 4.0
ECHO_Z = 9.0
ECHO_MIN_GAIN = 0.12


class RoomArgs(WindowArgs):
    pass


class Echo(ToolOutput):
    delay_s: float = Field(description="delay of the echo (s)")
    gain: float = Field(description="estimated echo amplitude relative to the direct sound (2 x cepstral peak)")
    z: float = Field(description="robust z-score of the cepstral peak")


class RoomOutput(CoveredOutput):
    label: Literal["dry", "room", "reverberant", "echo", "unknown"] = Field(
        description=f"echo: a distinct echo; reverberant: T60 >= {REVERB_T60_S} s; dry: T60 < {DRY_T60_S} s; room: between")
    t60_s: float | None = Field(description="decay-time estimate (s); None when no decay could be fitted")
    drr_db: float | None = Field(description="blind direct(+first 50 ms)-to-late energy ratio (dB)")
    decays_fitted: int = Field(description="free decays (after level peaks) the estimate rests on")
    echoes: list[Echo] = Field(description="distinct echoes, strongest first")
    analysed_s: AnalysedWindow


def _t60(db: np.ndarray) -> tuple[float | None, int]:
    """(T60 estimate, decays measured): from every level peak (the loudest frame within +-100 ms, 20 dB over
    the floor) the level is followed until it rises again by RISE_DB (a new sound) or has fallen 25 dB; a fall
    of at least MIN_FALL_DB gives a decay rate, and the 25th percentile of the implied T60s (the fast ones: a
    room bounds how fast any sound dies away) is the estimate."""
    from scipy.ndimage import maximum_filter1d, uniform_filter1d

    sm = 10 * np.log10(uniform_filter1d(10 ** (db / 10), SMOOTH_FRAMES) + 1e-12)
    _, floor = active_frames(sm, ABOVE_FLOOR_DB)
    w = int(0.1 * SR / HOP)
    peaks = np.flatnonzero((sm == maximum_filter1d(sm, 2 * w + 1)) & (sm >= floor + 20.0))
    ests = []
    for p in peaks:
        depth = min(25.0, sm[p] - floor - 5.0)
        low, at = sm[p], p
        for j in range(p + 1, len(sm)):
            if sm[j] < low:
                low, at = sm[j], j
            if sm[j] > low + RISE_DB or sm[j] <= sm[p] - depth:
                break
        fall = sm[p] - low
        if fall >= MIN_FALL_DB:
            ests.append(60.0 / fall * (at - p) * HOP / SR)
    if len(ests) < 3:
        return None, len(ests)
    return float(min(5.0, np.percentile(ests, 25))), len(ests)


def _drr(db: np.ndarray, t60: float) -> float | None:
    lam = 10 ** (db / 10)
    lag = round(EARLY_S * SR / HOP)
    if len(lam) <= lag:
        return None
    late = np.zeros_like(lam)
    late[lag:] = lam[:-lag] * 10 ** (-6.0 * EARLY_S / t60)  # power falls 60 dB per t60
    late = np.minimum(late, lam)
    early = lam - late
    return float(10 * np.log10(early.sum() / max(late.sum(), 1e-12)))


def _echoes(y: np.ndarray) -> list[dict]:
    n = int(ECHO_WINDOW_S * SR)
    if len(y) < int(2.2 * ECHO_RANGE_S[0] * SR) + 1024:
        return []
    n = min(n, len(y))
    nfft = 1 << int(np.ceil(np.log2(2 * n)))
    starts = list(range(0, max(1, len(y) - n + 1), n // 2))[:30]
    acc = np.zeros(nfft // 2 + 1)
    used = 0
    win = np.hanning(n)
    for s in starts:
        seg = y[s:s + n].astype(np.float64)
        if np.sqrt(np.mean(seg ** 2)) < 1e-4:
            continue
        spec = np.abs(np.fft.rfft(seg * win, nfft))
        cep = np.fft.irfft(np.log(spec + 1e-6 * spec.max()), nfft)
        acc += cep[: nfft // 2 + 1]
        used += 1
    if not used:
        return []
    c = acc / used
    lo, hi = int(ECHO_RANGE_S[0] * SR), min(int(ECHO_RANGE_S[1] * SR), n // 2, len(c) - 1)
    if hi - lo < 100:
        return []
    part = c[lo:hi]
    med = float(np.median(part))
    mad = float(np.median(np.abs(part - med))) * 1.4826 + 1e-9
    z = (part - med) / mad
    found: list[dict] = []
    for i in np.argsort(-z)[:20]:
        if z[i] < ECHO_Z or part[i] <= 0 or 2 * part[i] < ECHO_MIN_GAIN:
            break
        d = lo + int(i)
        if any(abs(d - round(e["delay_s"] * SR)) < 0.01 * SR or abs(d - 2 * round(e["delay_s"] * SR)) < 0.01 * SR
               for e in found):
            continue
        two = 2 * d
        if two < len(c) and c[max(0, two - 3):two + 4].max() > 0.8 * c[d]:
            continue  # repeats as strongly at twice the delay: a periodic sound, not an echo
        found.append({"delay_s": round(d / SR, 3), "gain": round(float(min(1.0, 2 * c[d])), 3),
                      "z": round(float(z[i]), 1)})
        if len(found) >= 3:
            break
    return found


def room(args: RoomArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    db = frame_db(y, FRAME, HOP)
    t60, n = _t60(db)
    drr = _drr(db, t60) if t60 else None
    echoes = _echoes(y)
    if echoes:
        label = "echo"
    elif t60 is None:
        label = "unknown"
    else:
        label = "dry" if t60 < DRY_T60_S else "reverberant" if t60 >= REVERB_T60_S else "room"
    out = {"label": label, "t60_s": round(t60, 3) if t60 else None, "drr_db": round(drr, 1) if drr is not None else None,
           "decays_fitted": n, "echoes": echoes, "analysed_s": (round(t0, 3), round(t1, 3))}
    parts = []
    if t60:
        parts.append(f"decay-time estimate T60 {t60:.2f} s from {n} free decays"
                     + (f", direct-to-late ratio {drr:+.1f} dB" if drr is not None else ""))
    else:
        parts.append(f"no decay could be fitted ({n} decaying stretches)")
    if echoes:
        parts.append("distinct echo " + ", ".join(f"{e['delay_s'] * 1000:.0f} ms after the sound (gain {e['gain']:.2f})"
                                                   for e in echoes))
    words = {"dry": "dry (little reverberation)", "room": "some room reverberation", "reverberant": "strongly reverberant",
             "echo": "with a distinct echo", "unknown": "of unknown acoustics"}[label]
    text = f"Between {t0:.2f} and {t1:.2f} s the sound is {words}: " + "; ".join(parts) + "."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "t60_s": out["t60_s"],
                                                                 "drr_db": out["drr_db"], "echoes": echoes})])
