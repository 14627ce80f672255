"""Audio as model front ends receive it: 16 kHz mono 16-bit WAV, cut into labelled windows where a model
truncates long audio, and the OpenAI `input_audio` content parts (standard base64 WAV) built from them.

Qwen-family models silently drop audio after ~30 s, so an artifact longer than `window_s` is sent as
consecutive windows, each labelled in the text ("[artifact a0, window 2: 30.0-60.0 s]"); the windows are
returned so the trace says exactly what the model heard. Used by the OpenAI and Gemini front ends and by
the judges' audio yes/no questions.

A server may take fewer audio parts per request than a clip's windows (vLLM's `--limit-mm-per-prompt`
allows one audio by default): `pack` joins the segments into at most that many parts, each part's
segments back to back (with a short silence between different clips), and `concat_label` says in text
which span of the part is which span of which clip. `sent_audio` is what the trace records of each
segment (artifact, content hash, span), never the bytes.
"""

from __future__ import annotations

import base64
import io
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from audiomind import audio as aio
from audiomind.state import Artifact, AudioWindow, SentAudio

SAMPLE_RATE = 16000
CLIP_GAP_S = 1.0  # silence between two different clips joined into one audio part

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


@dataclass(frozen=True)
class Segment:
    """One span of one artifact, as sent: the whole clip (`window` None) or one of its windows."""

    artifact: Artifact
    start_s: float
    end_s: float
    label: str
    window: AudioWindow | None = None

    @property
    def duration_s(self) -> float:
        return round(self.end_s - self.start_s, 3)

    def wav(self) -> bytes:
        if self.window is None:
            return encode_wav(self.artifact)
        return encode_wav(self.artifact, self.start_s, self.end_s)

    def key(self) -> dict[str, Any]:
        """How a request names this audio (for the model-call cache): content hash and span, no bytes."""
        return {"sha256": self.artifact.sha256, "start_s": self.start_s, "end_s": self.end_s}


def plan_segments(artifacts: list[Artifact], window_s: float | None) -> tuple[list[Segment], list[AudioWindow]]:
    """One segment per artifact or per window, in order, plus the windows (as `audio_segments`)."""
    segments: list[Segment] = []
    sent: list[AudioWindow] = []
    for art in artifacts:
        wins = plan_windows(art, window_s)
        if wins is None:
            segments.append(Segment(art, 0.0, round(float(art.duration_s), 3),
                                    f"[artifact {art.id}: {art.duration_s:.1f} s]"))
            continue
        for i, w in enumerate(wins, start=1):
            label = f"[artifact {art.id}, window {i}: {w.start_s:.1f}-{w.end_s:.1f} s]"
            segments.append(Segment(art, w.start_s, w.end_s, label, w))
            sent.append(w)
    return segments, sent


def audio_segments(
    artifacts: list[Artifact], window_s: float | None
) -> tuple[list[tuple[str, bytes]], list[AudioWindow]]:
    """(label, wav bytes) per artifact or per window, in order, plus the windows actually sent."""
    segments, sent = plan_segments(artifacts, window_s)
    return [(seg.label, seg.wav()) for seg in segments], sent


def sent_audio(segment: Segment, transport: str = "inline") -> SentAudio:
    """What the trace records of one segment sent: artifact, content hash, span and duration."""
    return SentAudio(artifact_id=segment.artifact.id, sha256=segment.artifact.sha256, start_s=segment.start_s,
                     end_s=segment.end_s, duration_s=segment.duration_s, transport=transport)


def pack(segments: list[Segment], max_parts: int) -> list[list[Segment]]:
    """The segments in at most `max_parts` consecutive groups, each to be sent as one audio part. Each clip
    starts as one group (its windows joined are the clip again); parts to spare go to splitting the
    longest groups at a window boundary, so each part stays as short as the limit allows (a model that
    truncates long audio hears more); with more clips than parts, neighbouring clips share a part, as
    evenly as their count allows."""
    by_clip: list[list[Segment]] = []
    for seg in segments:
        if by_clip and by_clip[-1][0].artifact.id == seg.artifact.id:
            by_clip[-1].append(seg)
        else:
            by_clip.append([seg])
    n = max(1, int(max_parts))
    if len(by_clip) <= n:
        while len(by_clip) < n:
            i = max(range(len(by_clip)), key=lambda j: sum(seg.duration_s for seg in by_clip[j]))
            if len(by_clip[i]) < 2:
                break
            half = (len(by_clip[i]) + 1) // 2
            by_clip[i:i + 1] = [by_clip[i][:half], by_clip[i][half:]]
        return by_clip
    groups: list[list[Segment]] = []
    for g in range(n):
        lo, hi = (g * len(by_clip)) // n, ((g + 1) * len(by_clip)) // n
        groups.append([seg for clip in by_clip[lo:hi] for seg in clip])
    return [g for g in groups if g]


def _layout(group: list[Segment], gap_s: float) -> list[tuple[float, float, Segment]]:
    """(start, end) of each segment within the joined part: back to back, `gap_s` of silence between clips."""
    out: list[tuple[float, float, Segment]] = []
    t = 0.0
    for i, seg in enumerate(group):
        if i and seg.artifact.id != group[i - 1].artifact.id:
            t += gap_s
        out.append((round(t, 3), round(t + seg.duration_s, 3), seg))
        t += seg.duration_s
    return out


def part_seconds(group: list[Segment], gap_s: float = CLIP_GAP_S) -> float:
    """How long the audio part made of `group` is (its segments and the silences between clips)."""
    return _layout(group, gap_s)[-1][1] if group else 0.0


def concat_wav(group: list[Segment], gap_s: float = CLIP_GAP_S) -> bytes:
    """One 16-bit mono 16 kHz WAV of the segments back to back (silence of `gap_s` between clips)."""
    import soundfile as sf

    pieces: list[np.ndarray] = []
    for i, seg in enumerate(group):
        if i and seg.artifact.id != group[i - 1].artifact.id and gap_s > 0:
            pieces.append(np.zeros(round(gap_s * SAMPLE_RATE), dtype=np.float32))
        y = _samples(seg.artifact)
        a = max(0, round(seg.start_s * SAMPLE_RATE))
        b = len(y) if seg.window is None else min(len(y), round(seg.end_s * SAMPLE_RATE))
        pieces.append(np.asarray(y[a:b], dtype=np.float32))
    buf = io.BytesIO()
    joined = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)
    sf.write(buf, np.clip(joined, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def concat_label(group: list[Segment], gap_s: float = CLIP_GAP_S) -> str:
    """The text that goes before a joined part: which span of it is which span of which clip."""
    lay = _layout(group, gap_s)
    spans = "; ".join(f"{a:.1f}-{b:.1f} s = artifact {seg.artifact.id} {seg.start_s:.1f}-{seg.end_s:.1f} s"
                      for a, b, seg in lay)
    gap = f", {gap_s:g} s of silence between clips" if len({seg.artifact.id for seg in group}) > 1 else ""
    return f"[one audio part of {lay[-1][1]:.1f} s{gap}: {spans}]"


def input_audio_part(wav: bytes) -> dict[str, Any]:
    """An OpenAI `input_audio` content part: standard base64 of WAV bytes."""
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(wav).decode("ascii"), "format": "wav"}}


def input_audio_parts(prompt: str, artifacts: list[Artifact], window_s: float | None
                      ) -> tuple[list[dict[str, Any]], list[AudioWindow]]:
    """OpenAI chat content: the prompt, then a text label and an `input_audio` part per clip or window."""
    segments, windows = audio_segments(artifacts, window_s)
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    for label, wav in segments:
        content.append({"type": "text", "text": label})
        content.append(input_audio_part(wav))
    return content, windows
