"""Sentence embeddings with the packaged all-MiniLM-L6-v2 (offline): routing questions to tools and
matching evidence to answer choices by meaning."""

from __future__ import annotations

import os
import threading

import numpy as np

from audiomind.embedded import sessions
from audiomind.embedded.models import minilm_dir

_lock = threading.Lock()  # guards the embedding cache and serialises encoding


def _load():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_dir()), device="cpu")


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
            vecs = _model().encode(missing, normalize_embeddings=True, show_progress_bar=False, batch_size=64)
            if len(_cache) + len(missing) > _CACHE_MAX:
                _cache.clear()
            for t, v in zip(missing, vecs):
                _cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([_cache[t] for t in texts])


def similarity(a: list[str], b: list[str]) -> np.ndarray:
    """Cosine similarity matrix (len(a), len(b))."""
    return embed(a) @ embed(b).T
