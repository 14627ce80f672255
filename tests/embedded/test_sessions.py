"""The one model-session cache: load once per key (also under concurrency), a failed load stores
nothing, per-key use locks, family bounds, recorded load times; and the thread counts set in one place."""

from __future__ import annotations

import threading
import time

import pytest

from audiomind.embedded import sessions
from audiomind.embedded.sessions import SessionCache


def test_a_key_is_loaded_once_and_its_load_time_recorded():
    cache = SessionCache()
    calls = []

    def loader():
        calls.append(1)
        time.sleep(0.01)
        return object()

    first = cache.get("m", loader)
    assert cache.get("m", loader) is first
    assert len(calls) == 1
    assert cache.loaded() == ["m"]
    (rec,) = cache.records()
    assert rec.key == "m" and rec.seconds >= 0.01
    assert cache.load_times() == {"m": rec.seconds}


def test_threads_asking_at_once_share_one_load_and_other_keys_are_not_held_up():
    cache = SessionCache()
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow():
        calls.append("slow")
        started.set()
        release.wait(5)
        return "slow model"

    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("slow", slow))) for _ in range(4)]
    for t in threads:
        t.start()
    assert started.wait(5)
    # while "slow" is loading, another key loads at once
    assert cache.get("fast", lambda: "fast model") == "fast model"
    release.set()
    for t in threads:
        t.join(5)
    assert results == ["slow model"] * 4 and calls == ["slow"]


def test_a_failed_load_stores_nothing_and_the_next_call_loads_again():
    cache = SessionCache()
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("weights missing")
        return "model"

    with pytest.raises(RuntimeError, match="weights missing"):
        cache.get("m", flaky)
    assert cache.loaded() == [] and cache.records() == []
    assert cache.get("m", flaky) == "model" and len(attempts) == 2


def test_keep_bounds_a_family_least_recently_used_first():
    cache = SessionCache()
    cache.get("demucs:a:cpu", lambda: "a", keep=2)
    cache.get("demucs:b:cpu", lambda: "b", keep=2)
    cache.get("other", lambda: "o")
    cache.get("demucs:a:cpu", lambda: "a2", keep=2)  # a hit: a becomes the most recently used
    cache.get("demucs:c:cpu", lambda: "c", keep=2)
    assert sorted(cache.loaded()) == ["demucs:a:cpu", "demucs:c:cpu", "other"]
    assert cache.get("demucs:a:cpu", lambda: "never") == "a"


def test_use_locks_are_one_per_key():
    cache = SessionCache()
    assert cache.lock("whisper-tiny.en") is cache.lock("whisper-tiny.en")
    assert cache.lock("whisper-tiny.en") is not cache.lock("whisper-base")


def test_clear_forgets_models_and_records():
    cache = SessionCache()
    cache.get("m", lambda: 1)
    cache.clear()
    assert cache.loaded() == [] and cache.load_times() == {}
    assert cache.get("m", lambda: 2) == 2


def test_intra_op_threads_from_the_environment(monkeypatch):
    monkeypatch.delenv(sessions.THREADS_ENV, raising=False)
    assert sessions.intra_op_threads() == sessions.DEFAULT_INTRA_OP_THREADS == 2
    monkeypatch.setenv(sessions.THREADS_ENV, "3")
    assert sessions.intra_op_threads() == 3
    for bad in ("0", "-1", "two"):
        monkeypatch.setenv(sessions.THREADS_ENV, bad)
        with pytest.raises(ValueError, match=sessions.THREADS_ENV):
            sessions.intra_op_threads()


def test_onnx_sessions_get_the_thread_counts_set_here(monkeypatch):
    pytest.importorskip("onnxruntime")
    from audiomind.embedded import models

    path = models.silero_vad_path()
    monkeypatch.setenv(sessions.THREADS_ENV, "3")
    whole = sessions.onnx_session(path)
    small = sessions.onnx_session(path, small=True)
    assert whole.get_session_options().intra_op_num_threads == 3
    assert small.get_session_options().intra_op_num_threads == sessions.SMALL_MODEL_THREADS == 1
    for s in (whole, small):
        assert s.get_session_options().inter_op_num_threads == 1
        assert s.get_providers() == ["CPUExecutionProvider"]


def test_torch_threads_sets_and_restores():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with sessions.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_the_embedded_tools_load_through_the_shared_cache():
    """Silero VAD (a tool's model) is loaded once, under its catalog name, with its load time recorded."""
    from audiomind.tools.vad import _session

    sess = _session()
    assert _session() is sess
    assert "silero-vad" in sessions.SESSIONS.loaded()
    assert sessions.load_times()["silero-vad"] >= 0.0
