"""Sentence embeddings with the packaged all-MiniLM-L6-v2 (offline): routing questions to tools and
matching evidence to answer choices by meaning. The encoder is audiomind.embedded.minilm (NumPy), so a
question needs neither torch nor sentence-transformers."""

from __future__ import annotations

import threading

import numpy as np

from audiomind.embedded import sessions
from audiomind.embedded.models import minilm_dir

_lock = threading.Lock()  # guards the embedding cache and serialises encoding


def _load():
    from audiomind.embedded.minilm import MiniLM

    return MiniLM(minilm_dir())


def _model():
    """The process-wide MiniLM model, loaded once."""
    return sessions.get("minilm", _load)


_cache: dict[str, np.ndarray] = {}
_CACHE_MAX = 8192


def embed(texts: list[str]) -> np.ndarray:
    """Unit-normalised embeddings, shape (n, 384). Texts not seen before are encoded in one batch; repeated
    texts (prototypes, choices, tag labels) come from a bounded cache."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    with _lock:
        missing = [t for t in dict.fromkeys(texts) if t not in _cache]
        if missing:
            vecs = _encode_batch(missing)
            if len(_cache) + len(missing) > _CACHE_MAX:
                _cache.clear()
            for t, v in zip(missing, vecs):
                _cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([_cache[t] for t in texts])


DISK_BATCH_MIN = 16
"""Batches of at least this many new texts (the router's family prototypes, tag-label lists) are kept on
disk, keyed by the model's weights and the exact texts: a fresh process loads them instead of encoding
them again (the prototypes took ~0.45 s of every cold question)."""


def _encode_batch(texts: list[str]) -> np.ndarray:
    if len(texts) < DISK_BATCH_MIN:
        return _model().encode(texts, normalize_embeddings=True, show_progress_bar=False, batch_size=64)
    path = _batch_file(texts)
    try:
        vecs = np.load(path, allow_pickle=False)
        if vecs.shape == (len(texts), 384) and vecs.dtype == np.float32:
            return vecs
    except (OSError, ValueError):
        pass
    vecs = np.asarray(_model().encode(texts, normalize_embeddings=True, show_progress_bar=False, batch_size=64),
                      dtype=np.float32)
    try:
        import io

        from audiomind.fsutil import atomic_write

        buf = io.BytesIO()
        np.save(buf, vecs, allow_pickle=False)
        atomic_write(path, buf.getvalue())
    except OSError:  # a read-only cache only costs the next process the encoding
        pass
    return vecs


def _batch_file(texts: list[str]):
    import hashlib
    import json

    from audiomind.embedded.models import cache_dir

    weights = minilm_dir() / "model.safetensors"
    st = weights.stat()
    key = hashlib.sha256(json.dumps([str(weights), st.st_size, st.st_mtime_ns, texts]).encode()).hexdigest()
    return cache_dir() / "minilm-batches" / f"{key[:32]}.npy"


def similarity(a: list[str], b: list[str]) -> np.ndarray:
    """Cosine similarity matrix (len(a), len(b))."""
    return embed(a) @ embed(b).T
