"""Clipping and distortion per segment: flat-topped samples, the share of samples piled up near the peak, and
the crest factor of each separate sound (stretches of sound split by >= 0.45 s of quiet).

An overdriven signal is cut at a level: its samples pile up just under that level (natural speech peaks
rarely: at most 0.5% of its samples lie within 10% of its peak, in noise too) and its crest factor (peak over RMS) drops
from speech's 15-20 dB toward 5-10 dB. Flat tops (>= 3 consecutive samples within 1% of each other near the
peak) show hard clipping in a clean recording; added noise hides them, while the pile-up remains. A pure tone
piles up near its peak too, so a segment whose strongest FFT bin holds most of its energy needs flat tops."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import active_frames, frame_db, runs
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
FRAME = 320
MIN_GAP_S = 0.45      # a comma's pause (0.3-0.4 s) stays inside its sentence
MIN_SEG_S = 0.15
NEAR_PEAK = 0.9
NEAR_SHARE = 0.012    # >= 1.2% of samples within 10% of the peak: piled up (speech: <= 0.5%)
FLAT_SHARE = 0.005    # >= 0.5% of samples in flat tops
CREST_MAX_DB = 11.0   # a clipped (non-tonal) segment's crest factor is at most this
TONAL_SHARE = 0.5     # the strongest FFT bin (+-2 bins) holding this much of the energy: a tone


class ClippingArgs(WindowArgs):
    pass


class ClipSegment(ToolOutput):
    start_s: float = Field(description="segment start (s)")
    end_s: float = Field(description="segment end (s)")
    peak_dbfs: float = Field(description="sample peak (dBFS)")
    crest_db: float = Field(description="crest factor: peak over RMS (dB)")
    near_peak_share: float = Field(description="share of samples within 10% of the segment's peak")
    flat_top_share: float = Field(description="share of samples in flat tops (>= 3 equal samples near the peak)")
    clipped: bool = Field(description="the segment is clipped / overdriven by the documented thresholds")


class ClippingOutput(CoveredOutput):
    clipped: bool = Field(description="any segment is clipped")
    clipped_share: float = Field(description="share of all analysed samples in flat tops")
    segments: list[ClipSegment] = Field(description="the separate sounds in time order")
    most_clipped: int | None = Field(description="index of the most clipped segment (None when none is)")
    analysed_s: AnalysedWindow


def _flat_share(x: np.ndarray, peak: float) -> float:
    a = np.abs(x)
    near = a >= 0.95 * peak
    flat = np.zeros(len(x), dtype=bool)
    flat[1:] = np.abs(np.diff(x)) <= 0.01 * peak
    cand = near & flat
    total = sum(b - s + 1 for s, b in runs(cand) if b - s + 1 >= 3)
    return total / max(1, len(x))


def _tonal(x: np.ndarray) -> bool:
    p = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
    k = int(np.argmax(p))
    return float(p[max(0, k - 2):k + 3].sum() / max(p.sum(), 1e-20)) >= TONAL_SHARE


def segments_of(y: np.ndarray) -> list[tuple[int, int]]:
    """Sample ranges of the separate sounds: active 20 ms frames, gaps under MIN_GAP_S bridged."""
    db = frame_db(y, FRAME)
    act, _ = active_frames(db, 15.0, -55.0)
    spans: list[list[int]] = []
    for a, b in runs(act):
        if spans and (a - spans[-1][1]) * FRAME / SR < MIN_GAP_S:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    return [(a * FRAME, b * FRAME) for a, b in spans if (b - a) * FRAME / SR >= MIN_SEG_S]


def clipping(args: ClippingArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.2)
    segs = []
    flat_total = 0
    for a, b in segments_of(y):
        x = y[a:b].astype(np.float64)
        peak = float(np.max(np.abs(x)))
        rms = float(np.sqrt(np.mean(x * x)))
        if peak <= 0 or rms <= 0:
            continue
        crest = 20 * np.log10(peak / rms)
        near = float(np.mean(np.abs(x) >= NEAR_PEAK * peak))
        flat = _flat_share(x, peak)
        flat_total += flat * len(x)
        piled = near >= NEAR_SHARE and crest <= CREST_MAX_DB and not _tonal(x)
        segs.append({"start_s": round(t0 + a / SR, 3), "end_s": round(t0 + b / SR, 3),
                     "peak_dbfs": round(float(20 * np.log10(peak)), 2), "crest_db": round(float(crest), 2),
                     "near_peak_share": round(near, 4), "flat_top_share": round(flat, 4),
                     "clipped": bool(flat >= FLAT_SHARE or piled)})
    clipped = [i for i, s in enumerate(segs) if s["clipped"]]
    most = max(clipped, key=lambda i: (segs[i]["flat_top_share"], segs[i]["near_peak_share"])) if clipped else None
    out = {"clipped": bool(clipped), "clipped_share": round(flat_total / max(1, len(y)), 5), "segments": segs,
           "most_clipped": most, "analysed_s": (round(t0, 3), round(t1, 3))}
    if not segs:
        text = f"No separate sounds between {t0:.2f} and {t1:.2f} s to check for clipping."
    elif clipped:
        text = (f"Clipping / overdrive in {len(clipped)} of {len(segs)} sound segment(s): "
                + "; ".join(f"{segs[i]['start_s']:.2f}-{segs[i]['end_s']:.2f} s (crest {segs[i]['crest_db']:.1f} dB, "
                            f"{100 * segs[i]['near_peak_share']:.1f}% of samples near the peak, "
                            f"{100 * segs[i]['flat_top_share']:.1f}% flat-topped)" for i in clipped[:6]) + ".")
    else:
        text = (f"No clipping in {len(segs)} sound segment(s) between {t0:.2f} and {t1:.2f} s (crest factors "
                f"{min(s['crest_db'] for s in segs):.1f}-{max(s['crest_db'] for s in segs):.1f} dB, no flat tops).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"clipped": out["clipped"], "most_clipped": most})])
