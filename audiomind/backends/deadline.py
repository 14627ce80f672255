"""Deadlines for model calls: a total cap on every request, and the run's time budget across all of them.

HTTP client timeouts bound the connect and each single read, but not a whole request: a server that
answers one byte every second never trips a 30 s read timeout and can hold a request for ever. So:

- `call_with_deadline(fn, seconds)` runs one request in a worker thread and stops waiting for it once
  `seconds` have passed (`CallTimeout`, a `TimeoutError`: retried like any timeout). Whatever the client
  library does inside (streaming, SDK-internal polling, an in-process llama.cpp generation), the caller
  gets control back on time. The HTTP clients built by audiomind.backends.openai_compat also bound every
  socket operation by the same deadline (`bound_sockets`), so an abandoned request closes its
  connection within a moment instead of lingering in the background.
- `run_budget(seconds)` sets the time budget of one run (AudioMind.ask: `--time-budget`) for everything
  that runs inside it (a context variable: LangGraph nodes and worker threads inherit it). Each request
  may take min(its own timeout, the budget left); retries and their back-off sleeps stop when it is
  spent, and the request ends with `BudgetExhausted` (a BackendError), which the run records as
  `Outcome(status="failed", bound_hit="time_budget")` with its trace written.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from audiomind.backends.base import BackendError

T = TypeVar("T")

__all__ = [
    "Budget",
    "BudgetExhausted",
    "CallTimeout",
    "bound_sockets",
    "call_limit",
    "call_with_deadline",
    "current_budget",
    "request_deadline",
    "run_budget",
]


class CallTimeout(TimeoutError):
    """One request had no complete reply within its deadline (a timeout: retried if attempts are left)."""


class BudgetExhausted(BackendError):
    """The run's time budget ran out during (or before) a model request; never retried."""


@dataclass
class Budget:
    """A run's time budget: `seconds` from `started` (time.monotonic())."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    @property
    def expires_at(self) -> float:
        return self.started + self.seconds

    def remaining(self) -> float:
        return self.expires_at - time.monotonic()

    def spent(self) -> bool:
        return self.remaining() <= 0

    def elapsed(self) -> float:
        return time.monotonic() - self.started


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("audiomind_run_budget", default=None)
_REQUEST_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "audiomind_request_deadline", default=None)


@contextlib.contextmanager
def run_budget(seconds: float | None, *, elapsed: float = 0.0) -> Iterator[Budget | None]:
    """Give everything run inside (this thread, and the threads it starts with a copy of its context) a time
    budget of `seconds` (None: none), of which `elapsed` seconds are already spent."""
    budget = Budget(float(seconds), time.monotonic() - max(0.0, elapsed)) if seconds and seconds > 0 else None
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def current_budget() -> Budget | None:
    """The time budget of the run this code is part of, if any."""
    return _BUDGET.get()


def call_limit(timeout_s: float | None) -> tuple[float | None, bool]:
    """(seconds the next request may take, whether the run's budget is what limits it): min(its own
    timeout, the budget left); (None, False) when neither applies. The budget may already be spent
    (a limit <= 0)."""
    budget = current_budget()
    left = budget.remaining() if budget is not None else None
    if left is None:
        return (timeout_s if timeout_s and timeout_s > 0 else None), False
    if timeout_s and timeout_s > 0 and timeout_s < left:
        return timeout_s, False
    return left, True


def call_with_deadline(fn: Callable[[], T], seconds: float | None) -> T:
    """`fn()`, but give up waiting after `seconds` with `CallTimeout` (None: wait as long as it takes).

    The call runs in a daemon thread with a copy of this context; on expiry it is abandoned (Python cannot
    kill a thread), and it ends on its own shortly after: sockets opened by the clients of
    audiomind.backends.openai_compat fail their next operation, and an in-process llama.cpp generation
    stops at its next token (`request_deadline`)."""
    if seconds is None:
        return fn()
    if seconds <= 0:
        raise CallTimeout("no time left for this request")
    expires = time.monotonic() + seconds
    ctx = contextvars.copy_context()
    box: dict[str, Any] = {}
    done = threading.Event()

    def bounded() -> Any:
        _REQUEST_DEADLINE.set(expires)
        return fn()

    def target() -> None:
        try:
            box["value"] = ctx.run(bounded)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=target, name="audiomind-model-call", daemon=True)
    worker.start()
    if not done.wait(max(0.0, expires - time.monotonic())):
        raise CallTimeout(f"no complete reply within {seconds:.1f} s (the request was abandoned)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def request_deadline() -> float | None:
    """The monotonic time by which the request running in this thread must be over (None: no deadline)."""
    return _REQUEST_DEADLINE.get()


# ---------------------------------------------------------------- sockets that keep the deadline


def _clamp(timeout: float | None) -> float | None:
    deadline = request_deadline()
    if deadline is None:
        return timeout
    left = max(0.001, deadline - time.monotonic())  # > 0: the library's own timeout error is raised
    return left if timeout is None else min(timeout, left)


class _BoundedStream:
    """A network stream whose reads and writes never wait past the request's deadline."""

    def __init__(self, stream: Any):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return self._stream.write(buffer, _clamp(timeout))

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> Any:
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, _clamp(timeout)))

    def __getattr__(self, name: str) -> Any:  # close, get_extra_info, ...
        return getattr(self._stream, name)


class _BoundedBackend:
    """Wraps an httpcore (or httpcore2) network backend: connects, reads and writes honour the deadline."""

    def __init__(self, backend: Any):
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> Any:
        return _BoundedStream(self._backend.connect_tcp(host, port, _clamp(timeout), local_address,
                                                        socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        return _BoundedStream(self._backend.connect_unix_socket(path, _clamp(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def bound_sockets(http_client: Any) -> Any:
    """Make every socket operation of an httpx / httpx2 `Client` honour the deadline of the request running
    in its thread (see `call_with_deadline`). Best effort: a client whose transports do not have the usual
    httpcore pool is returned unchanged (the thread deadline still bounds the caller's wait)."""
    transports = [getattr(http_client, "_transport", None), *getattr(http_client, "_mounts", {}).values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _BoundedBackend):
            pool._network_backend = _BoundedBackend(backend)
    return http_client
