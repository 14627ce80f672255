"""speech_and_speaker: voice embeddings (Resemblyzer d-vectors), speaker counting with a simple
diarization, and same/different-voice verification.

A voice embedding says how alike two stretches of speech *sound*; nothing here identifies a person,
and the clusters are anonymous labels (S1, S2, ...) ordered by first appearance. Thresholds were
calibrated on the flite voices (slt, awb, rms, kal; 4 sentences each) at 16 kHz, voiced audio
normalised to -20 dBFS RMS:
- whole utterances: same voice 0.86-0.96 cosine (mean 0.91), different voices 0.41-0.73 (mean 0.57;
  the closest pair is awb/rms, two male voices);
- 1.5 s windows: same voice mean 0.85 (5th percentile 0.76), different voices mean 0.52, max 0.72;
- centroids of 1.5 s windows: same voice, different sentences >= 0.85; different voices <= 0.72.
Real recordings (other microphones, noise, overlap) spread both distributions; the outputs report
the similarities so a reader can judge the margin.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.embedded import sessions
from audiomind.embedded.dsp import scipy_module
from audiomind.embedded.voice import VoiceEncoder
from audiomind.state import Coverage
from audiomind.tools.base import Claim, TimeSpan, ToolArgs, ToolContext, ToolOutput, ToolResult, coverage
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowEnd, WindowStart

SR = 16000
NORM_DBFS = -20.0  # a typical speech-corpus level; see _normalize
VAD_FRAME_S = 0.03


# --- model ------------------------------------------------------------------------------------------


@dataclass
class _Encoder:
    model: VoiceEncoder
    lock: threading.Lock


def _encoder() -> _Encoder:
    """The process-wide model, loaded once even when several threads ask at the same time."""
    return sessions.get("resemblyzer", _load)


def _load() -> _Encoder:
    """Resemblyzer's pretrained d-vector model run in NumPy (audiomind.embedded.voice): the same weights
    and outputs as resemblyzer's torch VoiceEncoder, without importing torch."""
    from audiomind.embedded import models
    from audiomind.embedded.voice import VoiceEncoder

    return _Encoder(VoiceEncoder(models.resemblyzer_weights()), threading.Lock())


def _normalize(y: np.ndarray, target_dbfs: float = NORM_DBFS) -> np.ndarray:
    """Scale to a fixed RMS level. The encoder reads linear (not log) mel power, so level changes the
    embedding; a fixed level makes it loudness-invariant. -20 dBFS separated the flite voices better
    than Resemblyzer's own -30 dBFS (different-voice maximum 0.73 vs 0.79 at equal same-voice minimum)."""
    rms = float(np.sqrt(np.mean(np.square(y, dtype=np.float64)))) if len(y) else 0.0
    if rms < 1e-6:
        return y
    return (y * (10 ** (target_dbfs / 20) / rms)).astype(np.float32)


def embed_windows(chunks: list[np.ndarray]) -> np.ndarray:
    """One L2-normalised 256-d embedding per chunk (each chunk is level-normalised, run as one sequence)."""
    from audiomind.embedded.voice import wav_to_mel_spectrogram

    if not chunks:
        return np.zeros((0, 256), dtype=np.float32)
    enc = _encoder()
    mels = [wav_to_mel_spectrogram(_normalize(np.asarray(c, dtype=np.float32))) for c in chunks]
    out = np.zeros((len(mels), 256), dtype=np.float32)
    by_len: dict[int, list[int]] = {}
    for i, m in enumerate(mels):
        by_len.setdefault(m.shape[0], []).append(i)
    with enc.lock:  # the model runs BLAS on SMALL_MODEL_THREADS (audiomind.embedded.voice)
        for idx in by_len.values():
            out[idx] = enc.model.forward(np.stack([mels[i] for i in idx]))
    return out


def embed_utterance(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(embedding, partial embeddings, voiced seconds) for one stretch of (presumably) one voice.

    Long silences are dropped first (the VAD below), then the voiced audio is cut into Resemblyzer's
    1.6 s partials (about 1.3 per second) whose mean, renormalised, is the utterance embedding."""
    voiced = voiced_audio(y)
    if len(voiced) < int(0.3 * SR):
        raise ValueError(f"too little voiced audio to embed ({len(voiced) / SR:.2f} s; need 0.3 s)")
    enc = _encoder()
    with enc.lock:
        emb, partials, _ = enc.model.embed_utterance(_normalize(voiced), return_partials=True)
    return emb.astype(np.float32), partials.astype(np.float32), len(voiced) / SR


# --- voice activity (webrtcvad, a Resemblyzer dependency) --------------------------------------------


class _WebRtcVad:
    """webrtcvad.Vad over the package's C module `_webrtcvad`, the same calls in the same order. The package's
    Python module imports pkg_resources for its version string: 0.2-0.3 s of a fresh process's CPU (the whole
    of `speaker_count`'s start-up beyond its model), for nothing the tool uses."""

    def __init__(self, module, mode: int):
        self._m = module
        self._vad = module.create()
        module.init(self._vad)
        module.set_mode(self._vad, mode)

    def is_speech(self, buf: bytes, sample_rate: int) -> bool:
        return self._m.process(self._vad, sample_rate, buf, len(buf) // 2)


def _webrtc_vad(mode: int):
    """A WebRTC VAD at `mode` (0-3): `_WebRtcVad` over `_webrtcvad`, or webrtcvad.Vad where the C module is not
    importable on its own (another build of the package)."""
    try:
        import _webrtcvad
    except ImportError:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # webrtcvad imports the deprecated pkg_resources
            import webrtcvad
        return webrtcvad.Vad(mode)
    return _WebRtcVad(_webrtcvad, mode)


def voiced_regions(
    y: np.ndarray, aggressiveness: int = 3, min_region_s: float = 0.25, merge_gap_s: float = 0.2
) -> list[tuple[float, float]]:
    """Voiced stretches [(start_s, end_s)] from WebRTC VAD on 30 ms frames, lightly smoothed.

    Only used to keep silence out of the speaker windows; the dedicated VAD tool (Silero) is the one
    to cite for speech timing."""
    n = int(VAD_FRAME_S * SR)
    frames = len(y) // n
    if frames == 0:
        return []
    peak = max(float(np.max(y)), -float(np.min(y))) if len(y) else 0.0  # no full-size temporary of a long clip
    if peak < 1e-4:
        return []
    vad = _webrtc_vad(aggressiveness)
    flags = np.empty(frames, dtype=float)
    energy = np.empty(frames, dtype=np.float64)
    per = 2000  # frames per 60 s window: the int16 and float64 copies are of one window, never the clip
    for f0 in range(0, frames, per):
        f1 = min(frames, f0 + per)
        w = y[f0 * n : f1 * n]
        pcm = np.clip(np.round(w / max(peak, 1e-9) * 0.9 * 32767), -32768, 32767).astype(np.int16)
        flags[f0:f1] = [vad.is_speech(pcm[i * n : (i + 1) * n].tobytes(), SR) for i in range(f1 - f0)]
        energy[f0:f1] = np.sqrt(np.mean(w.reshape(f1 - f0, n).astype(np.float64) ** 2, axis=1))
    # frames far below the clip's loudest part are never speech (webrtcvad fires on faint noise once normalised)
    flags *= energy > peak * 10 ** (-45 / 20)
    smooth = np.convolve(flags, np.ones(5) / 5, mode="same") >= 0.4
    regions: list[list[float]] = []
    i = 0
    while i < frames:
        if not smooth[i]:
            i += 1
            continue
        j = i
        while j + 1 < frames and smooth[j + 1]:
            j += 1
        start, end = i * VAD_FRAME_S, (j + 1) * VAD_FRAME_S
        if regions and start - regions[-1][1] <= merge_gap_s:
            regions[-1][1] = end
        else:
            regions.append([start, end])
        i = j + 1
    return [(round(a, 3), round(b, 3)) for a, b in regions if b - a >= min_region_s]


def voiced_audio(y: np.ndarray) -> np.ndarray:
    regions = voiced_regions(y)
    if not regions:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate([y[int(a * SR) : int(b * SR)] for a, b in regions]).astype(np.float32)


# --- shared helpers -------------------------------------------------------------------------------


def _segment(
    ctx: ToolContext, artifact: str, start_s: float, end_s: float | None
) -> tuple[np.ndarray, float]:
    y = ctx.audio(artifact).samples(sr=SR)
    a = round(start_s * SR)
    b = len(y) if end_s is None else min(len(y), round(end_s * SR))
    if b <= a:
        raise ValueError(f"empty analysis window {start_s}-{end_s} s (clip is {len(y) / SR:.2f} s)")
    return y[a:b], a / SR


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))


# --- speaker_embedding ------------------------------------------------------------------------------


class SpeakerEmbeddingArgs(ToolArgs):
    start_s: float = Field(0.0, ge=0.0, description="embed from this time (s)")
    end_s: float | None = Field(None, gt=0.0, description="embed up to this time (s); default: the end")
    include_vector: bool = Field(False, description="include the 256-d vector (rounded to 4 decimals)")


class CosineSummary(ToolOutput):
    min: float = Field(description="lowest partial-to-mean cosine similarity")
    mean: float = Field(description="mean partial-to-mean cosine similarity")


class SpeakerEmbeddingOutput(ToolOutput):
    model: str = Field(description="embedding model")
    dims: int = Field(description="embedding dimensions")
    norm: float = Field(description="L2 norm of the embedding")
    voiced_s: float = Field(description="voiced audio embedded (s)")
    analysed_s: AnalysedWindow
    n_partials: int = Field(description="1.6 s partial embeddings averaged")
    partial_to_mean_cosine: CosineSummary = Field(description="how consistent the partials are")
    vector: list[float] | None = Field(None, description="the embedding (include_vector only)")


def speaker_embedding(args: SpeakerEmbeddingArgs, ctx: ToolContext) -> ToolResult:
    """A voice embedding of the voiced audio, plus how consistent its 1.6 s partials are."""
    y, offset = _segment(ctx, args.artifact, args.start_s, args.end_s)
    emb, partials, voiced_s = embed_utterance(y)
    sims = partials @ emb / (np.linalg.norm(partials, axis=1) * np.linalg.norm(emb) + 1e-12)
    out = {
        "model": "Resemblyzer VoiceEncoder (GE2E d-vector)",
        "dims": int(emb.shape[0]),
        "norm": round(float(np.linalg.norm(emb)), 4),
        "voiced_s": round(voiced_s, 2),
        "analysed_s": [round(offset, 3), round(offset + len(y) / SR, 3)],
        "n_partials": len(partials),
        "partial_to_mean_cosine": {
            "min": round(float(sims.min()), 3),
            "mean": round(float(sims.mean()), 3),
        },
    }
    if args.include_vector:
        out["vector"] = [round(float(v), 4) for v in emb]
    text = (
        f"Voice embedding computed over {voiced_s:.1f} s of voiced audio ({len(partials)} partials; "
        f"partial-to-mean cosine min {sims.min():.2f}, mean {sims.mean():.2f}). An embedding describes how a "
        f"voice sounds, not who it is."
    )
    return ToolResult(
        output=out,
        claims=[
            Claim(text=text, data={k: out[k] for k in ("voiced_s", "n_partials", "partial_to_mean_cosine")})
        ],
    )


# --- speaker_verify ---------------------------------------------------------------------------------


class SpeakerVerifyArgs(ToolArgs):
    other_artifact: str | None = Field(
        None,
        description="id of the second audio artifact; default: `artifact` itself (compare two windows of it)",
    )
    start_s: float = Field(0.0, ge=0.0, description="window start in `artifact` (s)")
    end_s: float | None = Field(None, gt=0.0, description="window end in `artifact` (s)")
    other_start_s: float = Field(0.0, ge=0.0, description="window start in `other_artifact` (s)")
    other_end_s: float | None = Field(None, gt=0.0, description="window end in `other_artifact` (s)")
    threshold: float = Field(
        0.80, ge=0.3, le=0.99, description="cosine at or above which the voices count as the same"
    )
    margin: float = Field(
        0.04, ge=0.0, le=0.2, description="within +-margin of the threshold the verdict is 'uncertain'"
    )


class SpeakerVerifyOutput(ToolOutput):
    cosine_similarity: float = Field(description="cosine similarity of the two voice embeddings (-1..1)")
    verdict: Literal["same", "different", "uncertain"] = Field(description="same/different voice, or too close")
    threshold: float = Field(description="cosine at or above which the voices count as the same")
    margin: float = Field(description="+- band around the threshold that is 'uncertain'")
    voiced_s: tuple[float, float] = Field(description="voiced audio embedded from each input (s)")
    calibration: str = Field(description="where the threshold comes from")
    compared: tuple[str, str] = Field(description="the two inputs (artifact [window])")


def _where(artifact: str, start_s: float, end_s: float | None) -> str:
    if (start_s, end_s) == (0.0, None):
        return artifact
    return f"{artifact} [{start_s:.1f}-{'end' if end_s is None else f'{end_s:.1f}'} s]"


def speaker_verify(args: SpeakerVerifyArgs, ctx: ToolContext) -> ToolResult:
    """Cosine similarity of two voice embeddings and a same/different/uncertain verdict."""
    y1, _ = _segment(ctx, args.artifact, args.start_s, args.end_s)
    other = args.other_artifact or args.artifact
    if other == args.artifact and (args.start_s, args.end_s) == (args.other_start_s, args.other_end_s):
        raise ValueError("speaker_verify needs two different inputs: another artifact or another time window")
    y2, _ = _segment(ctx, other, args.other_start_s, args.other_end_s)
    e1, _, v1 = embed_utterance(y1)
    e2, _, v2 = embed_utterance(y2)
    sim = _cos(e1, e2)
    if sim >= args.threshold + args.margin:
        verdict = "same"
    elif sim <= args.threshold - args.margin:
        verdict = "different"
    else:
        verdict = "uncertain"
    # distance from the threshold, mapped to (0.5, 1): 0.5 at the threshold, ~0.95 at 0.15 away
    confidence = round(float(0.5 + 0.5 * np.tanh(abs(sim - args.threshold) / 0.075)), 3)
    out = {
        "cosine_similarity": round(sim, 4),
        "verdict": verdict,
        "threshold": args.threshold,
        "margin": args.margin,
        "voiced_s": [round(v1, 2), round(v2, 2)],
        "calibration": "flite voices: same voice 0.86-0.96, different voices 0.41-0.73",
    }
    phrase = {
        "same": "sound like the same voice",
        "different": "sound like different voices",
        "uncertain": "are too close to the threshold to call",
    }[verdict]
    out["compared"] = [
        _where(args.artifact, args.start_s, args.end_s),
        _where(other, args.other_start_s, args.other_end_s),
    ]
    text = (
        f"Voices in {out['compared'][0]} and {out['compared'][1]} {phrase} (embedding cosine {sim:.2f}; "
        f"threshold {args.threshold:.2f}). This compares how the voices sound; it does not identify anyone."
    )
    return ToolResult(output=out, claims=[Claim(text=text, confidence=confidence, data=out)])


# --- speaker_count (with a simple diarization) ----------------------------------------------------


class SpeakerCountArgs(ToolArgs):
    start_s: WindowStart = 0.0
    end_s: WindowEnd = None
    window_s: float = Field(1.5, ge=0.8, le=4.0, description="embedding window length (s)")
    hop_s: float = Field(0.75, ge=0.2, le=2.0, description="embedding window hop (s)")
    cluster_threshold: float = Field(
        0.72,
        ge=0.3,
        le=0.95,
        description="average-linkage cosine similarity at or above which windows join one voice",
    )
    merge_threshold: float = Field(
        0.80, ge=0.3, le=0.99, description="voices whose centroids are at least this similar are merged"
    )
    min_speaker_s: float = Field(
        1.0,
        ge=0.0,
        le=30.0,
        description="voices with less speech than this are folded into the nearest voice",
    )
    max_speakers: int = Field(10, ge=1, le=20, description="upper bound on the count")
    merge_gap_s: float = Field(
        1.0, ge=0.0, le=10.0, description="same-voice stretches closer than this form one turn"
    )


class SpeakerSummary(ToolOutput):
    speaker: str = Field(description="anonymous voice label (S1, S2, ... by first appearance)")
    speech_s: float = Field(description="time in this voice's turns (s)")
    n_turns: int = Field(description="turns of this voice")
    n_windows: int = Field(description="embedding windows assigned to it")
    window_to_centroid_cosine: float = Field(description="mean cosine of its windows to its centroid")


class SpeakerTurn(TimeSpan):
    speaker: str = Field(description="anonymous voice label")


class SpeakerCountParams(ToolOutput):
    window_s: float = Field(description="embedding window (s)")
    hop_s: float = Field(description="embedding hop (s)")
    cluster_threshold: float = Field(description="clustering cosine threshold")
    merge_threshold: float = Field(description="centroid merge cosine threshold")
    min_speaker_s: float = Field(description="least speech a voice needs (s)")


class SpeakerCountOutput(ToolOutput):
    count: int = Field(description="distinct voices (0 without voiced speech)")
    speakers: list[SpeakerSummary] = Field(description="the voices by first appearance")
    turns: list[SpeakerTurn] = Field(description="who-spoke-when turns (at most 200)")
    n_turns: int = Field(0, description="number of turns (exact)")
    centroid_similarity: dict[str, float] = Field(description="'S1-S2' -> cosine of the two voice centroids")
    voiced_s: float = Field(description="voiced audio analysed (s)")
    n_windows: int = Field(0, description="embedding windows")
    params: SpeakerCountParams = Field(description="the clustering parameters used")
    note: str | None = Field(None, description="how to read the labels and turn edges")
    coverage: Coverage | None = Field(None, description="the voiced stretches whose voices were compared "
                                                        "(WebRTC VAD scanned the whole window to find them)")


def _windows(regions: list[tuple[float, float]], win: float, hop: float) -> list[tuple[float, float]]:
    """Embedding windows inside voiced regions (never across a pause); the last one is end-aligned."""
    out = []
    for a, b in regions:
        if b - a <= win * 1.25:
            out.append((a, b))
            continue
        t = a
        while t + win < b:
            out.append((t, t + win))
            t += hop
        out.append((max(a, b - win), b))
    return out


def _cluster(emb: np.ndarray, threshold: float, max_k: int) -> np.ndarray:
    """Average-linkage agglomerative clustering on cosine distance, cut at 1 - threshold."""
    if len(emb) == 1:
        return np.zeros(1, dtype=int)
    hierarchy = scipy_module("cluster.hierarchy")  # one tool thread at a time imports scipy (dsp.scipy_module)
    distance = scipy_module("spatial.distance")
    z = hierarchy.linkage(distance.pdist(emb, metric="cosine"), method="average")
    labels = hierarchy.fcluster(z, t=1.0 - threshold, criterion="distance")
    if labels.max() > max_k:
        labels = hierarchy.fcluster(z, t=max_k, criterion="maxclust")
    return labels - 1


def _centroids(emb: np.ndarray, labels: np.ndarray) -> dict[int, np.ndarray]:
    cents = {}
    for k in np.unique(labels):
        c = emb[labels == k].mean(axis=0)
        cents[int(k)] = c / (np.linalg.norm(c) + 1e-12)
    return cents


def speaker_count(args: SpeakerCountArgs, ctx: ToolContext) -> ToolResult:
    """How many distinct voices speak, when each one talks, and how alike the voices are."""
    y, offset = _segment(ctx, args.artifact, args.start_s, args.end_s)
    regions = voiced_regions(y)
    wins = _windows(regions, args.window_s, args.hop_s)
    wins = [(a, b) for a, b in wins if b - a >= 0.4]
    params = {
        "window_s": args.window_s,
        "hop_s": args.hop_s,
        "cluster_threshold": args.cluster_threshold,
        "merge_threshold": args.merge_threshold,
        "min_speaker_s": args.min_speaker_s,
    }
    if not wins:
        out = {
            "count": 0,
            "speakers": [],
            "turns": [],
            "centroid_similarity": {},
            "voiced_s": 0.0,
            "params": params,
            "coverage": coverage([], (offset, offset + len(y) / SR), 0, None,
                                 "no voiced stretch long enough to compare voices"),
        }
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text="No voiced speech long enough to compare voices was found (count 0).",
                    data={"count": 0},
                )
            ],
        )

    emb = embed_windows([y[int(a * SR) : int(b * SR)] for a, b in wins])
    durations = np.array([b - a for a, b in wins])
    labels = _cluster(emb, args.cluster_threshold, args.max_speakers)

    # merge voices whose centroids are near-identical, then fold voices with too little speech
    while True:
        cents = _centroids(emb, labels)
        keys = sorted(cents)
        best = None
        for i, ka in enumerate(keys):
            for kb in keys[i + 1 :]:
                s = float(cents[ka] @ cents[kb])
                if s >= args.merge_threshold and (best is None or s > best[0]):
                    best = (s, ka, kb)
        if best is None:
            break
        labels[labels == best[2]] = best[1]
    while True:
        cents = _centroids(emb, labels)
        if len(cents) <= 1:
            break
        speech = {k: float(durations[labels == k].sum()) for k in cents}
        small = min(speech, key=speech.get)
        if speech[small] >= args.min_speaker_s:
            break
        others = {k: c for k, c in cents.items() if k != small}
        target = max(others, key=lambda k: float(cents[small] @ others[k]))
        labels[labels == small] = target
    # final assignment of each window to its nearest centroid (cleans up average-linkage stragglers)
    cents = _centroids(emb, labels)
    keys = sorted(cents)
    sim_to = emb @ np.stack([cents[k] for k in keys]).T
    labels = np.array([keys[i] for i in np.argmax(sim_to, axis=1)])
    cents = _centroids(emb, labels)

    # name voices S1, S2, ... by first appearance
    order: list[int] = []
    for k in labels:
        if int(k) not in order:
            order.append(int(k))
    name = {k: f"S{i + 1}" for i, k in enumerate(order)}

    # each window owns the time around its centre (up to the midpoints with its region neighbours)
    pieces: list[tuple[float, float, str]] = []
    for a_r, b_r in regions:
        idx = [i for i, (a, b) in enumerate(wins) if a >= a_r - 1e-6 and b <= b_r + 1e-6]
        for n_, i in enumerate(idx):
            centre = (wins[i][0] + wins[i][1]) / 2
            lo = a_r if n_ == 0 else (centre + (wins[idx[n_ - 1]][0] + wins[idx[n_ - 1]][1]) / 2) / 2
            hi = (
                b_r
                if n_ == len(idx) - 1
                else (centre + (wins[idx[n_ + 1]][0] + wins[idx[n_ + 1]][1]) / 2) / 2
            )
            pieces.append((lo, hi, name[int(labels[i])]))
    pieces.sort()
    turns: list[dict] = []
    for lo, hi, spk in pieces:
        if turns and turns[-1]["speaker"] == spk and lo - turns[-1]["end_s"] <= args.merge_gap_s:
            turns[-1]["end_s"] = hi
        else:
            turns.append({"speaker": spk, "start_s": lo, "end_s": hi})
    for t in turns:
        t["start_s"] = round(t["start_s"] + offset, 2)
        t["end_s"] = round(t["end_s"] + offset, 2)

    speakers = []
    for k in order:
        mask = labels == k
        speakers.append(
            {
                "speaker": name[k],
                "speech_s": round(
                    sum(t["end_s"] - t["start_s"] for t in turns if t["speaker"] == name[k]), 2
                ),
                "n_turns": sum(1 for t in turns if t["speaker"] == name[k]),
                "n_windows": int(mask.sum()),
                "window_to_centroid_cosine": round(float(np.mean(emb[mask] @ cents[k])), 3),
            }
        )
    pair = {}
    for i, ka in enumerate(order):
        for kb in order[i + 1 :]:
            pair[f"{name[ka]}-{name[kb]}"] = round(float(cents[ka] @ cents[kb]), 3)
    count = len(order)
    max_pair = max(pair.values()) if pair else None
    # heuristic confidence from the separation margin: how far the closest pair is below the merge threshold
    if max_pair is None:
        within = float(np.mean(emb @ cents[order[0]]))
        confidence = float(np.clip(0.5 + (within - args.cluster_threshold) * 3, 0.3, 0.95))
    else:
        confidence = float(np.clip(0.5 + (args.merge_threshold - max_pair) * 2.5, 0.3, 0.95))
    out = {
        "count": count,
        "speakers": speakers,
        "turns": turns[:200],
        "n_turns": len(turns),
        "centroid_similarity": pair,
        "voiced_s": round(sum(b - a for a, b in regions), 2),
        "n_windows": len(wins),
        "params": params,
        "note": "S1, S2, ... are anonymous voice clusters, not identities; turn edges are accurate to about half a hop",
        "coverage": coverage([(offset + a, offset + b) for a, b in wins], (offset, offset + len(y) / SR), len(wins),
                             args.window_s, "voices compared only in the voiced stretches WebRTC VAD found"),
    }
    sims_txt = "; centroid cosine " + ", ".join(f"{k} {v:.2f}" for k, v in pair.items()) if pair else ""
    claims = [
        Claim(
            text=(
                f"{count} distinct voice{'s' if count != 1 else ''} (voice-embedding clusters): "
                + ", ".join(f"{s['speaker']} {s['speech_s']:.1f} s of speech" for s in speakers)
                + sims_txt
                + "."
            ),
            confidence=round(confidence, 3),
            data={"count": count, "speakers": speakers, "centroid_similarity": pair},
        )
    ]
    shown = turns[:12]
    claims.append(
        Claim(
            text="Speaker turns (diarization by clustering, anonymous labels): "
            + ", ".join(f"{t['speaker']} {t['start_s']:.1f}-{t['end_s']:.1f} s" for t in shown)
            + (f", ... ({len(turns)} turns in all)" if len(turns) > len(shown) else "")
            + ".",
            confidence=round(confidence, 3),
            data={"turns": shown},
        )
    )
    return ToolResult(output=out, claims=claims)
