"""key and chords: the tonal centre and the triads of a stretch of music, from CQT chroma.

Key: Krumhansl-Schmuckler profile correlation of log-compressed chroma. Chords: major/minor triad
templates on the same chroma with a Viterbi smoother. Both measure harmony only.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, TimeSpan, ToolContext, ToolOutput, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import MAX_LISTED, PITCH_CLASSES, SR
from audiomind.tools.text import listed
from audiomind.tools.window import WindowArgs, excerpt


def _rms_db(y: np.ndarray, hop: int, frame: int = 2048) -> np.ndarray:
    import librosa

    rms = librosa.feature.rms(y=y, frame_length=frame, hop_length=hop, center=True)[0]
    return 20 * np.log10(np.maximum(rms, 1e-10))


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


class KeyOutput(CoveredOutput):
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
    window_s: AnalysedWindow


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
    y, t0, t1 = excerpt(ctx, args, min_s=0.5)
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


class ChordsOutput(CoveredOutput):
    segments: list[ChordSegment] = Field(description="chord segments in time order (N included; at most 200)")
    segments_truncated: bool = Field(description="more segments than listed")
    n_segments: int = Field(description="number of segments (exact)")
    sequence: list[str] = Field(description="chords in order, N left out")
    distinct_chords: list[str] = Field(description="distinct chords in order of first appearance")
    n_chord_changes: int = Field(description="changes between successive chords")
    chord_time_ratio: float = Field(description="share of the window covered by a chord (0-1)")
    vocabulary: str = Field(description="the chord vocabulary")
    window_s: AnalysedWindow


def chords(args: ChordsArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, min_s=0.5)
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
    shown = listed(chord_segs, 16, lambda s: f"{s['chord']} {s['start_s']:.2f}-{s['end_s']:.2f} s")
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"Chord sequence (major/minor triads by chroma templates): {shown}; "
                    f"{len(out['distinct_chords'])} distinct chord(s), {out['n_chord_changes']} change(s)."
                ),
                confidence=round(float(np.mean([s["score"] for s in chord_segs])), 3),
                data={"segments": [[s["start_s"], s["end_s"], s["chord"]] for s in chord_segs[:MAX_LISTED]]},
            )
        ],
    )

