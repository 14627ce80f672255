"""MiniLM sentence embeddings (the packaged all-MiniLM-L6-v2, offline): shape, unit norm, meaning, the
bounded cache, and one model load per process through the session cache."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind.embedded import models, sessions, text

pytestmark = pytest.mark.skipif(not models.check("minilm")[0], reason="MiniLM carrier package not installed")


def test_embeddings_are_unit_vectors_of_384_dimensions():
    e = text.embed(["a dog barks", "a telephone rings", "a dog barks"])
    assert e.shape == (3, 384) and e.dtype == np.float32
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(e[0], e[2])  # a repeated text gets the same (cached) vector
    assert text.embed([]).shape == (0, 384)


def test_similarity_follows_meaning():
    sim = text.similarity(["a dog is barking"], ["dog bark", "telephone ringing", "piano music"])
    assert sim.shape == (1, 3)
    assert int(np.argmax(sim[0])) == 0
    assert sim[0, 0] > sim[0, 1] + 0.2


def test_the_model_is_loaded_once_through_the_session_cache():
    text.embed(["warm up"])
    assert text._model() is text._model()
    assert "minilm" in sessions.SESSIONS.loaded()
    assert [r.key for r in sessions.SESSIONS.records()].count("minilm") == 1
