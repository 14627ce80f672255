"""A client-side rate limiter per model backend: requests per minute and tokens per minute, shared by every
worker thread of the process, plus a backend-wide pause when the server says it is rate limiting.

Each backend (a spec as recorded in `ModelCall.backend`) has one limiter. `acquire(tokens)` blocks until a
request of about `tokens` input tokens fits both sliding one-minute windows and no server pause is in force,
and returns how long it waited. A 429 with Retry-After (`pause_for`) stops every worker's requests to that
backend until the server's time is up, so a burst of workers does not turn one 429 into a storm.

Waits never outlast the run's time budget (audiomind.backends.deadline): `BudgetExhausted` instead.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from audiomind.backends.deadline import BudgetExhausted, current_budget
from audiomind.config import RATE_LIMIT

WINDOW_S = 60.0


@dataclass(frozen=True)
class RateLimit:
    """Requests and tokens per minute for one backend (None: no limit of that kind)."""

    rpm: float | None = None
    tpm: float | None = None

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """'RPM', 'RPM/TPM' or '/TPM' (e.g. '500/200000'): the syntax AgentConfig validates (config.RATE_LIMIT)."""
        m = RATE_LIMIT.fullmatch(text.strip())
        if m is None or (m.group(1) is None and m.group(2) is None):
            raise ValueError(f"bad rate limit {text!r}: expected RPM, RPM/TPM or /TPM")
        rpm, tpm = (float(g) if g is not None else None for g in m.groups())
        if rpm == 0 or tpm == 0:
            raise ValueError(f"bad rate limit {text!r}: limits must be positive")
        return cls(rpm=rpm, tpm=tpm)

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None


class Limiter:
    """Sliding one-minute windows of request starts and their tokens, and a server-imposed pause."""

    def __init__(self, limit: RateLimit):
        self.limit = limit
        self._lock = threading.Condition()
        self._starts: deque[tuple[float, int]] = deque()  # (monotonic time, tokens)
        self._paused_until = 0.0
        self.max_in_window = 0  # the most requests ever seen in one window (for tests and reports)

    def _trim(self, now: float) -> None:
        while self._starts and now - self._starts[0][0] >= WINDOW_S:
            self._starts.popleft()

    def _wait_needed(self, now: float, tokens: int) -> float:
        wait = max(0.0, self._paused_until - now)
        if self.limit.rpm is not None and len(self._starts) + 1 > self.limit.rpm:
            k = len(self._starts) - int(self.limit.rpm)  # the start that must leave the window first
            wait = max(wait, self._starts[max(0, k)][0] + WINDOW_S - now)
        if self.limit.tpm is not None and self._starts:
            total = sum(t for _, t in self._starts) + min(tokens, int(self.limit.tpm))
            if total > self.limit.tpm:
                excess = total - self.limit.tpm
                for t0, t in self._starts:
                    excess -= t
                    if excess <= 0:
                        wait = max(wait, t0 + WINDOW_S - now)
                        break
        return wait

    def acquire(self, tokens: int = 0) -> float:
        """Block until a request of `tokens` may start; returns the seconds waited."""
        t_start = time.monotonic()
        with self._lock:
            while True:
                now = time.monotonic()
                self._trim(now)
                wait = self._wait_needed(now, max(0, tokens))
                if wait <= 0:
                    self._starts.append((now, max(0, tokens)))
                    self.max_in_window = max(self.max_in_window, len(self._starts))
                    return round(now - t_start, 3)
                budget = current_budget()
                if budget is not None:
                    if budget.remaining() <= 0:
                        raise BudgetExhausted("the run's time budget ran out waiting for the rate limiter")
                    wait = min(wait, budget.remaining())
                self._lock.wait(timeout=min(wait, 5.0) + 0.001)

    def pause_for(self, seconds: float) -> None:
        """The server asked every client to wait `seconds` (a 429's Retry-After)."""
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + max(0.0, seconds))
            self._lock.notify_all()



_LIMITERS: dict[str, Limiter] = {}
_LIMITERS_LOCK = threading.Lock()


def limiter_for(backend: str, limit: RateLimit) -> Limiter:
    """The process's limiter of `backend` (made on first use; a changed limit replaces its numbers)."""
    with _LIMITERS_LOCK:
        lim = _LIMITERS.get(backend)
        if lim is None:
            lim = _LIMITERS[backend] = Limiter(limit)
        elif lim.limit != limit:
            lim.limit = limit
        return lim


def reset_limiters() -> None:
    """Forget every backend's windows and pauses (tests; a new benchmark in the same process)."""
    with _LIMITERS_LOCK:
        _LIMITERS.clear()
