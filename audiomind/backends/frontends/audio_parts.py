"""Audio as model front ends receive it: 16 kHz mono 16-bit WAV, cut into labelled windows where a model
truncates long audio, and the OpenAI `input_audio` content parts (standard base64 WAV) built from them.

Qwen-family models silently drop audio after ~30 s, so an artifact longer than `window_s` is sent as
consecutive windows, each labelled in the text ("[artifact a0, window 2: 30.0-60.0 s]"); the windows are
returned so the trace says exactly what the model heard. Used by the OpenAI and Gemini front ends and by
the judges' audio yes/no questions.
"""

from __future__ import annotations

import base64
import io
import math
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from audiomind import audio as aio
from audiomind.state import Artifact, AudioWindow

SAMPLE_RATE = 16000

_decoded: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_decoded_lock = threading.Lock()


def _samples(artifact: Artifact) -> np.ndarray:
    """16 kHz mono float32 samples of an artifact, decoded once (small LRU keyed by path and hash)."""
    key = (artifact.path, artifact.sha256)
    with _decoded_lock:
        if key in _decoded:
            _decoded.move_to_end(key)
            return _decoded[key]
    y = aio.load(artifact.path, sr=SAMPLE_RATE, mono=True)
    with _decoded_lock:
        _decoded[key] = y
        while len(_decoded) > 8:
            _decoded.popitem(last=False)
    return y


def plan_windows(artifact: Artifact, window_s: float | None) -> list[AudioWindow] | None:
    """Consecutive windows of at most `window_s` covering the artifact, or None when it fits whole."""
    dur = float(artifact.duration_s)
    if not window_s or window_s <= 0 or dur <= window_s + 1e-6:
        return None
    n = math.ceil(dur / window_s - 1e-9)
    wins = []
    for i in range(n):
        start = i * window_s
        end = min(dur, (i + 1) * window_s)
        if end - start < 0.05:  # a rounding sliver, not audio worth sending
            continue
        wins.append(AudioWindow(artifact_id=artifact.id, start_s=round(start, 3), end_s=round(end, 3)))
    return wins


def encode_wav(artifact: Artifact, start_s: float = 0.0, end_s: float | None = None) -> bytes:
    """16-bit mono 16 kHz WAV bytes of (a window of) an artifact: the form every audio model accepts."""
    import soundfile as sf

    y = _samples(artifact)
    a = max(0, round(start_s * SAMPLE_RATE))
    b = len(y) if end_s is None else min(len(y), round(end_s * SAMPLE_RATE))
    buf = io.BytesIO()
    sf.write(buf, np.clip(y[a:b], -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def audio_segments(
    artifacts: list[Artifact], window_s: float | None
) -> tuple[list[tuple[str, bytes]], list[AudioWindow]]:
    """(label, wav bytes) per artifact or per window, in order, plus the windows actually sent."""
    segments: list[tuple[str, bytes]] = []
    sent: list[AudioWindow] = []
    for art in artifacts:
        wins = plan_windows(art, window_s)
        if wins is None:
            segments.append((f"[artifact {art.id}: {art.duration_s:.1f} s]", encode_wav(art)))
            continue
        for i, w in enumerate(wins, start=1):
            label = f"[artifact {art.id}, window {i}: {w.start_s:.1f}-{w.end_s:.1f} s]"
            segments.append((label, encode_wav(art, w.start_s, w.end_s)))
            sent.append(w)
    return segments, sent


def input_audio_parts(prompt: str, artifacts: list[Artifact], window_s: float | None
                      ) -> tuple[list[dict[str, Any]], list[AudioWindow]]:
    """OpenAI chat content: the prompt, then a text label and an `input_audio` part per clip or window."""
    segments, windows = audio_segments(artifacts, window_s)
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    for label, wav in segments:
        content.append({"type": "text", "text": label})
        content.append({
            "type": "input_audio",
            "input_audio": {"data": base64.b64encode(wav).decode("ascii"), "format": "wav"},
        })
    return content, windows
