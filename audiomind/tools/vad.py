"""temporal_segmentation: where speech is active (Silero VAD via onnxruntime, no torch).

The VAD says *when* someone speaks. It cannot say what was said, by whom, or how many people spoke, so
its claims are limited to speech activity and timing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
from pydantic import Field

from audiomind.audio import DecodeCache, check_deadline
from audiomind.embedded import models, sessions
from audiomind.state import Coverage
from audiomind.tools.base import Claim, TimeSpan, ToolArgs, ToolContext, ToolOutput, ToolResult, coverage
from audiomind.tools.text import listed

SR = 16000
WINDOW = 512  # samples per Silero step at 16 kHz (32 ms)
CONTEXT = 64  # samples of the previous window the v5/v6 ONNX graph expects in front of each window
FRAME_S = WINDOW / SR


def _session():
    """One ONNX session per process; onnxruntime's run() is thread-safe and state is passed explicitly."""
    return sessions.get("silero-vad", lambda: sessions.onnx_session(models.silero_vad_path(), small=True))


def _sequential_probabilities(y: np.ndarray) -> np.ndarray:
    """Silero speech probability per 32 ms window of 16 kHz mono audio (as silero_vad's OnnxWrapper does)."""
    sess = _session()
    n = int(np.ceil(len(y) / WINDOW)) if len(y) else 0
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    full = len(y) // WINDOW  # the frames read straight from y (no padded copy of a long clip)
    x = np.asarray(y[: full * WINDOW], dtype=np.float32).reshape(full, WINDOW)
    if n > full:
        tail = np.zeros((1, WINDOW), dtype=np.float32)
        tail[0, : len(y) - full * WINDOW] = y[full * WINDOW :]
    else:
        tail = None
    state = np.zeros((2, 1, 128), dtype=np.float32)
    context = np.zeros((1, CONTEXT), dtype=np.float32)
    sr = np.array(SR, dtype=np.int64)
    probs = np.empty(n, dtype=np.float32)
    for i in range(n):
        frame = x[i] if i < len(x) else tail[0]  # type: ignore[index]
        chunk = np.concatenate([context, frame[None]], axis=1)
        out, state = sess.run(None, {"input": chunk, "state": state, "sr": sr})
        probs[i] = float(out.reshape(-1)[0])
        context = chunk[:, -CONTEXT:]
    return probs


WINDOW_FRAMES = 1875  # 60 s of 32 ms frames: a long clip is scanned as independent windows of this many frames
WARMUP_FRAMES = 63  # about 2 s of the audio before a window runs through the model first (its state), unscored
BATCH = 32  # windows scanned side by side in one model call (the graph takes a batch)


def vad_windows(n_samples: int) -> int:
    """How many windows `speech_probabilities` scans a clip of n_samples in (1: one sequential pass)."""
    n = -(-n_samples // WINDOW)
    return 1 if n <= 2 * WINDOW_FRAMES else -(-n // WINDOW_FRAMES)


def speech_probabilities(y: np.ndarray) -> np.ndarray:
    """Silero speech probability per 32 ms frame of 16 kHz mono audio. Up to two minutes: one sequential pass
    (as silero_vad's OnnxWrapper does). Longer: 60 s windows, each after about 2 s of warm-up audio, run
    BATCH at a time as one batch (the state after 2 s of audio no longer depends on what came before), so a
    long clip takes a few thousand model calls instead of one per frame."""
    n = int(np.ceil(len(y) / WINDOW)) if len(y) else 0
    if n <= 2 * WINDOW_FRAMES:
        return _sequential_probabilities(y)
    sess = _session()
    full = len(y) // WINDOW
    frames = np.asarray(y[: full * WINDOW], dtype=np.float32).reshape(full, WINDOW)
    zero = np.zeros(WINDOW, dtype=np.float32)
    tail = zero.copy()
    tail[: len(y) - full * WINDOW] = y[full * WINDOW :]

    def frame(i: int) -> np.ndarray:
        return frames[i] if i < full else (tail if i < n else zero)

    probs = np.empty(n, dtype=np.float32)
    sr = np.array(SR, dtype=np.int64)
    starts = list(range(0, n, WINDOW_FRAMES))
    for b0 in range(0, len(starts), BATCH):
        group = starts[b0 : b0 + BATCH]
        first = [max(0, w0 - WARMUP_FRAMES) for w0 in group]  # where each stream starts reading
        steps = max(min(n, w0 + WINDOW_FRAMES) - f for w0, f in zip(group, first))
        state = np.zeros((2, len(group), 128), dtype=np.float32)
        context = np.zeros((len(group), CONTEXT), dtype=np.float32)
        first_a, lo = np.array(first), np.array(group)
        hi = np.minimum(n, lo + WINDOW_FRAMES)
        for k in range(steps):
            if k % 512 == 0:
                check_deadline("VAD")  # an abandoned call stops here (audiomind.audio.decode_deadline)
            x = np.stack([frame(f + k) for f in first])
            chunk = np.concatenate([context, x], axis=1)
            out, state = sess.run(None, {"input": chunk, "state": state, "sr": sr})
            i = first_a + k
            scored = (i >= lo) & (i < hi)  # warm-up frames and frames past a window's end are not kept
            probs[i[scored]] = out.reshape(-1)[scored]
            context = chunk[:, -CONTEXT:]
    return probs


_PROBS: OrderedDict[tuple, np.ndarray] = OrderedDict()
_PROBS_LOCK = threading.Lock()


def cached_speech_probabilities(path: str, y: np.ndarray, a: int = 0, b: int | None = None) -> np.ndarray:
    """`speech_probabilities(y[a:b])` of the 16 kHz decode of `path`, computed once per file version and
    stretch in this process (the vad tool, asr and speaker tools ask for the same frames of a long clip)."""
    b = len(y) if b is None else b
    try:
        key = (DecodeCache.key(path, SR, True), a, b)
    except Exception:  # noqa: BLE001 - not a file on disk: no caching
        return speech_probabilities(y[a:b])
    with _PROBS_LOCK:
        hit = _PROBS.get(key)
        lock = _PROBS_BUSY.setdefault(key, threading.Lock())
    if hit is not None:
        return hit
    with lock:
        with _PROBS_LOCK:
            hit = _PROBS.get(key)
        if hit is None:
            hit = speech_probabilities(y[a:b])
            with _PROBS_LOCK:
                _PROBS[key] = hit
                while len(_PROBS) > 16:
                    _PROBS.popitem(last=False)
    return hit


_PROBS_BUSY: dict[tuple, threading.Lock] = {}


def segments_from_probs(probs: np.ndarray, n_samples: int, threshold: float = 0.5, min_speech_ms: int = 250,
                        min_silence_ms: int = 100, pad_ms: int = 30) -> list[tuple[int, int]]:
    """Hysteresis segmentation as in silero_vad.get_speech_timestamps (enter >= threshold, leave below
    threshold-0.15 for min_silence_ms), then padding; returns sample ranges."""
    neg = max(threshold - 0.15, 0.01)
    min_speech = SR * min_speech_ms / 1000
    min_silence = SR * min_silence_ms / 1000
    pad = int(SR * pad_ms / 1000)
    segs: list[list[int]] = []
    triggered, start, temp_end = False, 0, 0
    for i, p in enumerate(probs):
        cur = i * WINDOW
        if p >= threshold and temp_end:
            temp_end = 0
        if p >= threshold and not triggered:
            triggered, start = True, cur
            continue
        if triggered and p < neg:
            if not temp_end:
                temp_end = cur
            if cur - temp_end < min_silence:
                continue
            if temp_end - start > min_speech:
                segs.append([start, temp_end])
            triggered, temp_end = False, 0
    if triggered and n_samples - start > min_speech:
        segs.append([start, n_samples])
    # pad, splitting any overlap between neighbours (silero does the same)
    for k, s in enumerate(segs):
        if k == 0:
            s[0] = max(0, s[0] - pad)
        if k + 1 < len(segs):
            gap = segs[k + 1][0] - s[1]
            if gap < 2 * pad:
                s[1] += gap // 2
                segs[k + 1][0] = max(0, segs[k + 1][0] - gap // 2)
            else:
                s[1] = min(n_samples, s[1] + pad)
                segs[k + 1][0] = max(0, segs[k + 1][0] - pad)
        else:
            s[1] = min(n_samples, s[1] + pad)
    return [(a, b) for a, b in segs]


class VadArgs(ToolArgs):
    threshold: float = Field(0.5, ge=0.05, le=0.95, description="speech probability that starts a segment")
    min_speech_ms: int = Field(250, ge=0, le=5000, description="drop speech segments shorter than this")
    min_silence_ms: int = Field(100, ge=0, le=5000, description="silence needed to end a segment")


class SpeechSegment(TimeSpan):
    mean_prob: float = Field(description="mean Silero speech probability over the segment (0-1)")


class VadOutput(ToolOutput):
    segments: list[SpeechSegment] = Field(description="speech segments in time order")
    n_segments: int = Field(description="number of speech segments")
    speech_s: float = Field(description="total speech time (s)")
    speech_ratio: float = Field(description="speech share of the clip (0-1)")
    duration_s: float = Field(description="clip duration (s)")
    max_prob: float = Field(description="highest speech probability anywhere (0-1)")
    frame_s: float = Field(description="Silero frame length (s)")
    threshold: float = Field(description="speech probability that starts a segment")
    coverage: Coverage | None = Field(None, description="the stretches scanned (Silero runs frame by frame, "
                                                        "32 ms at a time, over the whole clip)")


def vad(args: VadArgs, ctx: ToolContext) -> ToolResult:
    audio = ctx.audio(args.artifact)
    y = audio.samples(sr=SR, mono=True)
    probs = cached_speech_probabilities(audio.path, y)
    segs = segments_from_probs(probs, len(y), args.threshold, args.min_speech_ms, args.min_silence_ms)
    duration = len(y) / SR
    out_segs = []
    for a, b in segs:
        fa, fb = a // WINDOW, max(a // WINDOW + 1, int(np.ceil(b / WINDOW)))
        out_segs.append({
            "start_s": round(a / SR, 3),
            "end_s": round(b / SR, 3),
            "mean_prob": round(float(np.mean(probs[fa:fb])), 3),
        })
    speech_s = sum(s["end_s"] - s["start_s"] for s in out_segs)
    out = {
        "segments": out_segs,
        "n_segments": len(out_segs),
        "speech_s": round(speech_s, 3),
        "speech_ratio": round(speech_s / duration, 4) if duration else 0.0,
        "duration_s": round(duration, 3),
        "max_prob": round(float(probs.max()), 3) if len(probs) else 0.0,
        "frame_s": FRAME_S,
        "threshold": args.threshold,
        "coverage": coverage([(0.0, duration)], (0.0, duration), vad_windows(len(y)),
                             WINDOW_FRAMES * FRAME_S if vad_windows(len(y)) > 1 else None),
    }
    if not out_segs:
        claims = [Claim(
            text=f"No speech detected (Silero VAD, threshold {args.threshold}; highest speech probability "
                 f"{out['max_prob']:.2f}).",
            confidence=round(1.0 - out["max_prob"], 3),
            data={"n_segments": 0, "speech_s": 0.0},
        )]
    else:
        shown = listed(out_segs, 12, lambda s: f"{s['start_s']:.2f}-{s['end_s']:.2f} s")
        claims = [Claim(
            text=(f"Speech activity detected in {len(out_segs)} segment(s): {shown}; "
                  f"{speech_s:.2f} s of speech ({100 * out['speech_ratio']:.0f}% of the clip)."),
            confidence=round(float(np.mean([s["mean_prob"] for s in out_segs])), 3),
            data={"segments": [[s["start_s"], s["end_s"]] for s in out_segs], "speech_s": out["speech_s"]},
        )]
    return ToolResult(output=out, claims=claims)
