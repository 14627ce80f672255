"""Loaded models, once per process: one keyed, thread-safe, load-once cache for every embedded model
(Whisper, YAMNet, Silero VAD, Resemblyzer, basic-pitch, DNSMOS, MiniLM) and the optional hub models, plus
the thread counts their runtimes use.

`get(key, loader)` returns the model stored under `key`, calling `loader()` the first time only; threads
asking for the same key at once wait for one load, threads asking for other keys are not held up. A
loader that raises stores nothing (the next call tries again). Each load's wall time is recorded, so a
benchmark can report what the models cost to start (`load_times()`).

Keys are the embedded catalog's names (`whisper-tiny.en`, `yamnet`, `silero-vad`, `resemblyzer`,
`basic-pitch`, `dnsmos`, `minilm`), with `:`-separated qualifiers where one family holds several models
(`demucs:htdemucs:cpu`).

Thread counts (the reference machine has 2 cores, shared by the tool calls the executor runs in
parallel), set here and nowhere else:
- `intra_op_threads()`: intra-op threads of the models that work on whole clips (basic-pitch, DNSMOS,
  Whisper's CTranslate2 workers): the setting `intra_op_threads` (`audiomind.config.Settings`, env
  `AUDIOMIND_INTRA_OP_THREADS`), default 2 (one per core).
- `SMALL_MODEL_THREADS` (1): models called on many small inputs (Silero's 32 ms windows, YAMNet's
  0.96 s patches, Resemblyzer's LSTM batches), where spreading one small input over threads costs more
  than it gives and, on a busy 2-core machine, OpenMP spin-waiting made them 2-10x slower.
- inter-op threads are always 1: the graphs here have no parallel branches worth a second pool.
- OpenMP threads wait passively (`OMP_WAIT_POLICY=PASSIVE`, set by `audiomind.config.apply_process_env()`,
  which entry points call before any model loads; a value already in the environment wins): Whisper's CTranslate2 pool uses OpenMP, and its
  spinning second thread on the busy 2-core machine doubled the CPU of a 10 s transcription (1.0-1.2 s of
  CPU, 1.0-1.6 s wall, against 0.6 s and 0.75-0.95 s passive).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from audiomind import config

T = TypeVar("T")

THREADS_ENV = config.env_name("intra_op_threads")
DEFAULT_INTRA_OP_THREADS: int = config.Settings.model_fields["intra_op_threads"].default
SMALL_MODEL_THREADS = 1


def intra_op_threads(value: int | None = None) -> int:
    """Intra-op threads for whole-clip models: `value`, else the setting `intra_op_threads` (a positive
    integer; env AUDIOMIND_INTRA_OP_THREADS), else 2."""
    if value is None:
        return config.settings().intra_op_threads
    if value < 1:
        raise ValueError(f"intra-op threads must be a positive integer, got {value!r}")
    return value


def onnx_session(path: str | Path, *, small: bool = False) -> Any:
    """A CPU ONNX Runtime session with this module's thread counts (`small`: SMALL_MODEL_THREADS intra-op
    threads, else `intra_op_threads()`); warnings below error level are not logged."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = SMALL_MODEL_THREADS if small else intra_op_threads()
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


@contextlib.contextmanager
def torch_threads(n: int = SMALL_MODEL_THREADS) -> Iterator[None]:
    """Run torch on `n` threads for the duration and restore the previous count afterwards (callers hold
    their model's lock: the count is process-wide)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


_BLAS_CONTROLLER: Any = None
_BLAS_GUARD = threading.Lock()


@contextlib.contextmanager
def blas_threads(n: int = SMALL_MODEL_THREADS) -> Iterator[None]:
    """Run NumPy's BLAS on `n` threads for the duration (threadpoolctl; process-wide like torch_threads,
    restored afterwards). For the NumPy models (MiniLM, the voice encoder): their products are small, and
    on the busy 2-core machine OpenBLAS's spinning second thread made them 5-10x slower."""
    global _BLAS_CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn (a librosa dependency)
        yield
        return
    with _BLAS_GUARD:
        if _BLAS_CONTROLLER is None:
            _BLAS_CONTROLLER = ThreadpoolController()
        controller = _BLAS_CONTROLLER
    with controller.limit(limits=n, user_api="blas"):
        yield


@dataclass(frozen=True)
class LoadRecord:
    """One model load: its key and how long the loader took (wall seconds)."""

    key: str
    seconds: float


class SessionCache:
    """Models by key, each loaded once; see the module docstring."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._models: OrderedDict[str, Any] = OrderedDict()
        self._load_locks: dict[str, threading.Lock] = {}
        self._use_locks: dict[str, threading.Lock] = {}
        self._records: list[LoadRecord] = []

    def get(self, key: str, loader: Callable[[], T], *, keep: int | None = None) -> T:
        """The model under `key`, loading it with `loader()` the first time. `keep`: at most this many
        models of the key's family (the part before the first ':') stay loaded; the least recently used
        others are dropped first."""
        with self._guard:
            if key in self._models:
                self._models.move_to_end(key)
                return self._models[key]
            load_lock = self._load_locks.setdefault(key, threading.Lock())
        with load_lock:
            with self._guard:
                if key in self._models:
                    self._models.move_to_end(key)
                    return self._models[key]
            t0 = time.perf_counter()
            model = loader()
            seconds = time.perf_counter() - t0
            with self._guard:
                self._models[key] = model
                self._records.append(LoadRecord(key, round(seconds, 4)))
                if keep is not None:
                    self._trim(key, keep)
            return model

    def _trim(self, key: str, keep: int) -> None:
        family = key.split(":", 1)[0]
        same = [k for k in self._models if k.split(":", 1)[0] == family]  # oldest first
        for k in same[: max(0, len(same) - max(1, keep))]:
            del self._models[k]

    def lock(self, key: str) -> threading.Lock:
        """One lock per key, for models that one thread at a time must use (a model with a single worker,
        or one whose calls are not thread-safe)."""
        with self._guard:
            return self._use_locks.setdefault(key, threading.Lock())

    def loaded(self) -> list[str]:
        with self._guard:
            return list(self._models)

    def records(self) -> list[LoadRecord]:
        """Every load so far, in order (a key dropped and loaded again appears twice)."""
        with self._guard:
            return list(self._records)

    def load_times(self) -> dict[str, float]:
        """{key: seconds} of the loads so far (the latest load of each key)."""
        return {r.key: r.seconds for r in self.records()}

    def clear(self) -> None:
        """Forget every model and record (the next `get` loads again)."""
        with self._guard:
            self._models.clear()
            self._records.clear()


SESSIONS = SessionCache()


def get(key: str, loader: Callable[[], T], *, keep: int | None = None) -> T:
    """`SESSIONS.get`: the process-wide model under `key`, loaded once."""
    return SESSIONS.get(key, loader, keep=keep)


def lock(key: str) -> threading.Lock:
    """`SESSIONS.lock`: the process-wide use lock of `key`."""
    return SESSIONS.lock(key)


def load_times() -> dict[str, float]:
    """`SESSIONS.load_times`: {model key: load seconds} in this process."""
    return SESSIONS.load_times()
