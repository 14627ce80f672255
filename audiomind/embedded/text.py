"""Sentence embeddings with the packaged all-MiniLM-L6-v2 (offline): routing questions to tools and
matching evidence to answer choices by meaning."""

from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

from audiomind.embedded.models import minilm_dir

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_dir()), device="cpu")


@lru_cache(maxsize=4096)
def _embed_one(text: str) -> np.ndarray:
    with _lock:
        vec = _model().encode([text], normalize_embeddings=True, show_progress_bar=False)[0]
    return np.asarray(vec, dtype=np.float32)


def embed(texts: list[str]) -> np.ndarray:
    """Unit-normalised embeddings, shape (n, 384); repeated texts come from a small cache."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([_embed_one(t) for t in texts])


def similarity(a: list[str], b: list[str]) -> np.ndarray:
    """Cosine similarity matrix (len(a), len(b))."""
    return embed(a) @ embed(b).T
