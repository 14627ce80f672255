"""Clicks and pops: none, one, a few, or a crackle of many, with their times.

A pop is a broadband impulse a few samples long. The first difference of the signal (it lifts the highs, where
a pop's energy lies and most sounds have little) is squared and summed over 1 ms frames; each frame is compared
with the median of the frames within +-LOCAL_S (the local level). A frame IMPULSE_DB or more above the local
level, the loudest within +-2 ms, whose excess has died away (under IMPULSE_DB - DECAY_DB over the local
level) within WIDTH_MS on both sides, is an impulse: a plosive, a drum hit or a piano attack stays high for
longer. The local level is at least the clip's 20th-percentile frame (digital silence is no reference).
CRACKLE_COUNT or more impulses at CRACKLE_RATE per second or more is a crackle; 2 to CRACKLE_COUNT - 1 is a few.
Frames are computed 30 s at a time: memory stays bounded on long clips (at most the 600 s feature budget)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME = 16                 # 1 ms
LOCAL_S = 0.025            # local level: median of the frames within +-25 ms
IMPULSE_DB = 10.0          # a frame this far above the local level (median) may be an impulse ...
ISOLATION_DB = 6.0         # ... when it also stands this far above the loudest frame on either side
SIDE_MS = (3, 15)          # ... 3-15 ms away (a pulse train: glottal pulses, a sawtooth edge every period, fails)
MIN_GAP_S = 0.01           # impulses closer than this are one
CRACKLE_COUNT = 5
CRACKLE_RATE = 1.0         # impulses per second of analysed audio
BLOCK_S = 30.0


class ImpulsesArgs(WindowArgs):
    pass


class ImpulsesOutput(CoveredOutput):
    label: Literal["none", "one", "few", "crackle"] = Field(
        description=f"crackle: >= {CRACKLE_COUNT} impulses at >= {CRACKLE_RATE:g} per second; few: 2 or more; one; none")
    count: int = Field(description="impulses found")
    rate_per_s: float = Field(description="impulses per second of analysed audio")
    times_s: list[float] = Field(description="times of the impulses (s, artifact time; the first 50)")
    peak_excess_db: list[float] = Field(description="how far each rose above its local level (dB; the first 50)")
    analysed_s: AnalysedWindow


def _frames(y: np.ndarray) -> np.ndarray:
    """Energy (float64) of the first difference in consecutive 1 ms frames, BLOCK_S seconds at a time."""
    n = len(y) // FRAME
    out = np.empty(n)
    step = int(BLOCK_S * SR) // FRAME
    for a in range(0, n, step):
        b = min(n, a + step)
        seg = y[a * FRAME: b * FRAME + 1].astype(np.float64)
        d = np.diff(seg, prepend=seg[0])[: (b - a) * FRAME]
        out[a:b] = (d * d).reshape(b - a, FRAME).sum(axis=1)
    return out


def find_impulses(y: np.ndarray) -> list[tuple[float, float]]:
    """[(time s from the start of y, excess dB over the local level)] of the impulses in y."""
    from scipy.ndimage import maximum_filter1d, median_filter

    e = _frames(y)
    if len(e) < 2 * SIDE_MS[1] + 2:
        return []
    db = 10 * np.log10(e + 1e-14)
    floor = float(np.percentile(db, 20))
    local = np.maximum(median_filter(db, size=2 * round(LOCAL_S * 1000) + 1, mode="nearest"), max(floor, -100.0))
    # the loudest frame 3-15 ms before and 3-15 ms after each frame (a periodic pulse has one on both sides)
    span = SIDE_MS[1] - SIDE_MS[0] + 1
    side = maximum_filter1d(db, span, mode="nearest")
    shift = SIDE_MS[0] + span // 2
    before = np.concatenate([np.full(shift, -300.0), side[:-shift]])
    after = np.concatenate([side[shift:], np.full(shift, -300.0)])
    excess = db - local
    isolated = db - np.maximum(before, after)
    cand = np.flatnonzero((excess >= IMPULSE_DB) & (isolated >= ISOLATION_DB) & (db >= maximum_filter1d(db, 5)))
    found: list[tuple[float, float]] = []
    for k in cand:
        t = (k + 0.5) * FRAME / SR
        if found and t - found[-1][0] < MIN_GAP_S:
            if excess[k] > found[-1][1]:
                found[-1] = (t, float(excess[k]))
            continue
        found.append((t, float(excess[k])))
    return found


def impulses(args: ImpulsesArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.2)
    found = find_impulses(y)
    n = len(found)
    rate = n / max(t1 - t0, 1e-9)
    label = ("crackle" if n >= CRACKLE_COUNT and rate >= CRACKLE_RATE else "few" if n >= 2 else "one" if n == 1
             else "none")
    out: dict[str, Any] = {"label": label, "count": n, "rate_per_s": round(rate, 2),
           "times_s": [round(float(t0 + t), 3) for t, _ in found[:50]],
           "peak_excess_db": [round(float(x), 1) for _, x in found[:50]],
           "analysed_s": (round(t0, 3), round(t1, 3))}
    if n == 0:
        text = f"No click or pop: no broadband impulse rises {IMPULSE_DB:g} dB over its local level."
    else:
        shown = ", ".join(f"{t:.2f}" for t in out["times_s"][:8]) + (f" (+{n - 8} more)" if n > 8 else "")
        words = {"one": "one pop", "few": f"{n} pops", "crackle": f"a crackle of {n} pops ({rate:.1f} per second)"}[label]
        text = f"Broadband impulses far above the local level: {words}, at {shown} s."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "count": n,
                                                                 "times_s": out["times_s"][:8]})])
