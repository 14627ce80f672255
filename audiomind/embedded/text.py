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
    from audiomind.embedded.models import cache_dir

    try:
        weights = cache_dir() / "minilm-weights"  # the prepared weights (audiomind.embedded.minilm.load_weights)
    except OSError:  # no cache folder: the weights are read from the safetensors
        return MiniLM(minilm_dir())
    return MiniLM(minilm_dir(), weights_cache=weights)


def _model():
    """The process-wide MiniLM model, loaded once."""
    return sessions.get("minilm", _load)


_cache: dict[str, np.ndarray] = {}
_CACHE_MAX = 8192


def embed(texts: list[str]) -> np.ndarray:
    """Unit-normalised embeddings, shape (n, 384). Texts not seen before are encoded in one batch; repeated
    texts (prototypes, choices, tag labels) come from a bounded cache, and lists of DISK_BATCH_MIN or more
    texts from the disk cache."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    with _lock:
        unique = list(dict.fromkeys(texts))
        missing = [t for t in unique if t not in _cache]
        if missing:
            if len(unique) >= DISK_BATCH_MIN:
                new = dict(zip(unique, _disk_batch(unique, missing)))
            else:
                new = dict(zip(missing, _encode(missing)))
            if len(_cache) + len(new) > _CACHE_MAX:
                _cache.clear()
            for t, v in new.items():
                _cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([_cache[t] for t in texts])


DISK_BATCH_MIN = 16
"""Lists of at least this many distinct texts (the router's family prototypes, the property vocabulary's phrases,
the competence bank, tag-label lists) are kept on disk, keyed by the model's weights and the exact list asked
for (not by the part of it this process had not yet encoded, which depends on what the process embedded
before): a fresh process loads them instead of encoding them again (the competence bank alone took 2-7 s of
a cold question). `audiomind models install` fills them (audiomind.warm)."""


def _encode(texts: list[str]) -> np.ndarray:
    return np.asarray(_model().encode(texts, normalize_embeddings=True, show_progress_bar=False, batch_size=64),
                      dtype=np.float32)


def _disk_batch(texts: list[str], missing: list[str]) -> np.ndarray:
    """The embeddings of `texts` (distinct), from the disk cache, else encoded (only `missing`: the others are in
    the process cache) and stored."""
    path = _batch_file(texts)
    try:
        vecs = np.load(path, allow_pickle=False)
        if vecs.shape == (len(texts), 384) and vecs.dtype == np.float32:
            return vecs
    except (OSError, ValueError):
        pass
    fresh = dict(zip(missing, _encode(missing)))
    vecs = np.stack([fresh[t] if t in fresh else _cache[t] for t in texts]).astype(np.float32)
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
