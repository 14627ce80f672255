"""Aligning an original and an edited clip (pure numpy, no models): offsets, and what was added, removed or
replaced, in place or by insertion and cut, on signals whose edit is known by construction."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind.judges.align import align

SR = 16000
rng = np.random.default_rng(0)


def tone(f: float, s: float, a: float = 0.3) -> np.ndarray:
    t = np.arange(int(s * SR)) / SR
    return a * np.sin(2 * np.pi * f * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))


def noise(s: float, a: float = 0.1) -> np.ndarray:
    return a * rng.standard_normal(int(s * SR))


def gap(s: float) -> np.ndarray:
    return np.zeros(int(s * SR))


@pytest.fixture(scope="module")
def voice() -> np.ndarray:
    """A 'voice': a wobbling chirp with pauses (distinct at every offset, like speech)."""
    t = np.arange(int(3.0 * SR)) / SR
    y = 0.3 * np.sin(2 * np.pi * (150 * t + 40 * np.sin(2 * np.pi * 0.7 * t)))
    y[int(1.0 * SR):int(1.3 * SR)] = 0.0
    return y


def kinds(y0: np.ndarray, y1: np.ndarray) -> list[tuple[str, float]]:
    al, _, _ = align(y0, y1)
    assert al.aligned
    return [(c.kind, round(c.start_s, 1)) for c in al.changes]


def test_identical_clips_change_nothing(voice):
    al, added, removed = align(voice, voice.copy())
    assert al.identical and not al.changes and not added.any() and not removed.any()


def test_an_appended_sound_is_added_where_it_starts(voice):
    assert kinds(voice, np.concatenate([voice, gap(0.3), tone(880, 0.5)])) == [("added", 3.3)]


def test_an_insertion_at_the_start_shifts_the_rest(voice):
    al, added, _ = align(voice, np.concatenate([noise(1.0), gap(0.2), voice]))
    assert [(c.kind, round(c.start_s, 1)) for c in al.changes] == [("added", 0.0)]
    assert al.offsets_s == [1.2] and al.kept_share > 0.99
    assert np.abs(added[int(1.3 * SR):]).max() < 1e-6  # nothing new after the insertion


def test_a_cut_in_the_middle_is_removed_there(voice):
    y0 = np.concatenate([voice[:SR], tone(500, 0.8), voice[SR:]])
    al, _, removed = align(y0, voice)
    assert [(c.kind, round(c.orig_start_s or 0, 1)) for c in al.changes] == [("removed", 1.0)]
    assert np.abs(removed[int(1.1 * SR):int(1.7 * SR)]).max() > 0.1


def test_in_place_add_remove_and_replace(voice):
    base = np.concatenate([voice, gap(1.5)])
    ev1 = np.concatenate([gap(2.0), noise(1.5), gap(1.0)])[: len(base)]
    ev2 = np.concatenate([gap(2.0), tone(1200, 1.5), gap(1.0)])[: len(base)]
    assert kinds(base, base + ev1) == [("added", 2.0)]
    assert kinds(base + ev1, base) == [("removed", 2.0)]
    assert kinds(base + ev1, base + ev2) == [("replaced", 2.0)]


def test_unrelated_clips_are_not_aligned(voice):
    al, _, _ = align(voice, noise(3.0, 0.3))
    assert not al.aligned and not al.changes
