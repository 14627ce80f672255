"""Helpers shared by the descriptors: frame levels, active stretches, and the recognised words and onset-aligned
tags of a clip (through the run's executor when there is one, so its result cache answers a repeated call)."""

from __future__ import annotations

import numpy as np

from audiomind.state import ToolCallRequest
from audiomind.tools.base import ToolContext

SR = 16000
FLOOR_DB = -100.0


def frame_db(y: np.ndarray, frame: int, hop: int | None = None) -> np.ndarray:
    """RMS level (dBFS) of consecutive frames (no padding; a trailing partial frame is dropped), computed in
    float64 one chunk at a time so a long excerpt needs no second full-length copy."""
    hop = hop or frame
    n = 1 + (len(y) - frame) // hop if len(y) >= frame else 0
    out = np.empty(n, dtype=np.float64)
    step = max(1, (SR * 30) // hop)  # ~30 s of frames per chunk
    for a in range(0, n, step):
        b = min(n, a + step)
        idx = np.arange(a, b)[:, None] * hop + np.arange(frame)[None, :]
        x = y[idx].astype(np.float64)
        out[a:b] = 10 * np.log10(np.mean(x * x, axis=1) + 1e-12)
    return np.maximum(out, FLOOR_DB)


def active_frames(db: np.ndarray, above_floor_db: float = 12.0, absolute_min_db: float = -60.0) -> tuple[np.ndarray, float]:
    """(mask of frames holding a sound, the noise floor): a frame is active when it is at least
    `above_floor_db` over the floor (the 10th percentile of frame levels) and above `absolute_min_db`."""
    if not len(db):
        return np.zeros(0, dtype=bool), FLOOR_DB
    floor = float(np.percentile(db, 10))
    return (db >= floor + above_floor_db) & (db >= absolute_min_db), floor


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) index runs where mask is True."""
    if not len(mask):
        return []
    m = np.concatenate([[False], mask.astype(bool), [False]])
    d = np.diff(m.astype(np.int8))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def asr_output(ctx: ToolContext, artifact: str):
    """The asr tool's output (AsrOutput) on the whole artifact: through the run's executor (its cache answers
    when the perception pass already transcribed it), or the tool itself when called without one."""
    from audiomind.tools.asr import AsrArgs, AsrOutput, asr

    if ctx.executor is not None:
        res = ctx.executor.run([ToolCallRequest(tool="asr", arguments={"artifact": artifact},
                                                reason="words for a descriptor")],
                               [ctx.audio(artifact).artifact], step=0, issued_by="frontend")
        call = res.tool_calls[0]
        if call.status.value not in ("ok", "cached") or not call.output:
            raise RuntimeError(f"asr, which this descriptor reads, failed: {call.error}")
        return AsrOutput.model_validate(call.output)
    return AsrOutput.model_validate(asr(AsrArgs(artifact=artifact), ctx).output)


def words_of(ctx: ToolContext, artifact: str) -> tuple[list[tuple[str, float, float, float]], str]:
    """[(word, start, end, probability)] in time order and the ASR model that heard them."""
    out = asr_output(ctx, artifact)
    words = [(w.word.strip(), float(w.start), float(w.end), float(w.probability))
             for s in out.segments for w in (s.words or []) if w.word.strip()]
    return words, out.model


def tags_at(ctx: ToolContext, artifact: str, start_s: float, end_s: float, top_k: int = 3) -> list[tuple[str, float]]:
    """The tagger's (label, strength) for one onset-aligned window, strongest first (strength = max(mean,
    0.8 x patch max), as the facts layer reads a tag window)."""
    from audiomind.tools.tagging import TaggingArgs, TaggingOutput, tagging

    arguments = {"artifact": artifact, "start_s": round(start_s, 3), "end_s": round(end_s, 3), "top_k": 10,
                 "min_score": 0.05, "event_min_score": 0.2}
    if ctx.executor is not None:
        res = ctx.executor.run([ToolCallRequest(tool="tagging", arguments=arguments, reason="tag a short sound")],
                               [ctx.audio(artifact).artifact], step=0, issued_by="frontend")
        call = res.tool_calls[0]
        if call.status.value not in ("ok", "cached") or not call.output:
            return []
        out = TaggingOutput.model_validate(call.output)
    else:
        out = TaggingOutput.model_validate(tagging(TaggingArgs(**arguments), ctx).output)
    peak = {t.label: t.max for t in out.peak_tags}
    scored = {t.label: max(t.score, 0.8 * t.max) for t in out.tags}
    for lab, m in peak.items():
        scored[lab] = max(scored.get(lab, 0.0), 0.8 * m)
    return sorted(((k, round(v, 3)) for k, v in scored.items()), key=lambda kv: -kv[1])[:top_k]


def within_budget(ctx: ToolContext, y: np.ndarray, t0: float, t1: float, max_s: float,
                  why: str = "", sr: int = SR) -> tuple[np.ndarray, float]:
    """The excerpt `y` (t0..t1 s, at `sr`) cut to its first `max_s` seconds, with the coverage recorded when it is cut
    (`why` says why a stretch suffices, in the coverage note); the end time of what is analysed."""
    if t1 - t0 <= max_s:
        return y, t1
    ctx.record_coverage([(t0, t0 + max_s)], (t0, t1), 1, None,
                        f"budget: the first {max_s:g} s from {t0:g} s were analysed{f' ({why})' if why else ''}; "
                        "name start_s and end_s to analyse another stretch")
    return y[: int(max_s * sr)], t0 + max_s


def speech_probability(ctx: ToolContext, artifact: str, t0: float, n: int) -> np.ndarray:
    """Silero speech probability per 512-sample window of an excerpt of `n` samples from `t0` s (16 kHz; the
    vad tool caches the whole file's probabilities)."""
    from audiomind.tools.vad import WINDOW, cached_speech_probabilities

    audio = ctx.audio(artifact)
    probs = cached_speech_probabilities(audio.path, audio.samples(sr=SR, mono=True))
    a = round(t0 * SR) // WINDOW
    m = int(np.ceil(n / WINDOW))
    out = np.asarray(probs[a:a + m], dtype=np.float64)
    return np.pad(out, (0, max(0, m - len(out))))
