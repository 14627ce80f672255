"""Bounded retries with backoff for model backend calls, recorded as a `ModelCall`.

Every client library here is built with its own retries switched off (openai `max_retries=0`,
google-genai without `retry_options`, LangChain `max_retries=0`), so this one wrapper owns the policy
(run by tenacity) and the record: transient failures (HTTP 429, 5xx, timeouts, refused or dropped
connections) are retried with exponential backoff and jitter, honouring a rate limit's Retry-After;
anything else (400, 401, 403, 404...) fails at once, because asking again cannot help. Every failed attempt's error goes into `ModelCall.errors`, with
anything that looks like an API key masked, so a trace never carries a secret.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

import tenacity

from audiomind.backends.base import BackendError
from audiomind.backends.cache import Codec, request_key
from audiomind.backends.deadline import BudgetExhausted, call_limit, call_with_deadline, current_budget
from audiomind.backends.policy import DEFAULT_POLICY, CallPolicy
from audiomind.backends.ratelimit import limiter_for
from audiomind.backends.usage import reply_facts
from audiomind.state import ModelCall

T = TypeVar("T")

__all__ = [
    "BackendError",
    "call_with_retries",
    "classify",
    "describe_error",
    "merge_calls",
    "redact",
]

# Patterns of credentials that servers echo back in error bodies ("Incorrect API key provided: sk-...").
_KEY_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-*]{6,}"),  # OpenAI and most OpenAI-compatible servers
    re.compile(r"AIza[0-9A-Za-z_\-]{10,}"),  # Google API keys
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|key|token)=)[^&\s\"']+"),
    re.compile(r"(?i)(x-goog-api-key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"),
]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Mask known secret values and anything shaped like an API key."""
    for s in secrets:
        if s and len(s) >= 4 and s not in ("EMPTY", "none", "None"):
            text = text.replace(s, "***")
    for pat in _KEY_PATTERNS:
        text = pat.sub(lambda m: m.group(1) + "***", text) if pat.groups else pat.sub("***", text)
    return text


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (LangChain and SDKs wrap the transport error)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < 8:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def _status_code(exc: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):
        v = getattr(exc, attr, None)
        if isinstance(v, int) and 100 <= v <= 599:
            return v
    resp = getattr(exc, "response", None)
    v = getattr(resp, "status_code", None)
    if isinstance(v, int) and 100 <= v <= 599:
        return v
    return None


_TRANSPORT_NAMES = {
    # openai / httpx / httpx2 / httpcore / requests / aiohttp transport failures, matched by class name so
    # that every vendored or forked HTTP stack (openai 3 ships on httpx2) is covered without importing it.
    "APIConnectionError",
    "APITimeoutError",
    "TimeoutException",
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "ConnectError",
    "ReadError",
    "WriteError",
    "RemoteProtocolError",
    "NetworkError",
    "TransportError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "ConnectionAbortedError",
    "TimeoutError",
    "ServerDisconnectedError",
    "ClientConnectorError",
}

ErrorKind = Literal["rate_limit", "server", "timeout", "connection", "client", "other"]


def classify(exc: BaseException) -> tuple[ErrorKind, bool]:
    """(kind, retryable) for an exception raised by a client library or a wrapper around one."""
    chain = _chain(exc)
    for e in chain:
        code = _status_code(e)
        if code is not None:
            if code == 429:
                return "rate_limit", True
            if code == 408:
                return "timeout", True
            if code >= 500:
                return "server", True
            if 400 <= code < 500:
                return "client", False
    for e in chain:
        names = {c.__name__ for c in type(e).__mro__}
        if names & _TRANSPORT_NAMES:
            timeout = any("Timeout" in n for n in names)
            return ("timeout" if timeout else "connection"), True
        if isinstance(e, (TimeoutError, ConnectionError)):
            return ("timeout" if isinstance(e, TimeoutError) else "connection"), True
    return "other", False


def describe_error(exc: BaseException) -> str:
    """One line: the exception class and message, plus the innermost transport cause when it adds detail."""
    chain = _chain(exc)
    head = f"{type(exc).__name__}: {str(exc).strip() or type(exc).__name__}"
    code = next((c for c in map(_status_code, chain) if c is not None), None)
    if code is not None:
        head = f"HTTP {code} {head}"
    body = getattr(exc, "body", None)  # openai keeps the error body; its message may omit it (422 'detail')
    if body is not None:
        try:
            import json

            b = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"), default=str)
        except (TypeError, ValueError):
            b = str(body)
        if b and b not in head:
            head += f" body={b[:300]}"
    inner = chain[-1]
    if inner is not exc:
        detail = str(inner).strip()
        if detail and detail not in head:
            head += f" ({type(inner).__name__}: {detail})"
    head = " ".join(head.split())
    return head[:600]


def _short_reason(exc: BaseException) -> str:
    """The most specific human reason ('Connection refused', 'HTTP 401 ...') for the final message."""
    chain = _chain(exc)
    for e in reversed(chain):
        s = str(e)
        m = re.search(r"(Connection refused|Name or service not known|timed out|Connection reset[^)]*)", s,
                      re.IGNORECASE)
        if m:
            return m.group(1)
    return describe_error(exc)


def _retry_after_s(exc: BaseException) -> float | None:
    """The server's Retry-After (seconds), where a rate-limit response carried one."""
    for e in _chain(exc):
        resp = getattr(e, "response", None)
        headers = getattr(resp, "headers", None)
        if not headers:
            continue
        try:
            ms = headers.get("retry-after-ms")
            if ms is not None:
                return float(ms) / 1000.0
            s = headers.get("retry-after")
            if s is not None:
                return float(s)
        except (TypeError, ValueError):
            return None
    return None


def backoff_delay(attempt: int, base_delay_s: float, max_delay_s: float) -> float:
    """Exponential backoff with 'equal jitter': between half and all of base * 2**(attempt-1), capped."""
    cap = min(max_delay_s, base_delay_s * (2 ** max(0, attempt - 1)))
    return cap / 2 + random.uniform(0, cap / 2)


def _kind_of(exc: BaseException, give_up_if: Callable[[BaseException], bool] | None) -> tuple[ErrorKind, bool]:
    """(kind, retryable) of a failed attempt: a spent budget is a timeout not retried; `give_up_if` marks
    errors that are never retried whatever their kind."""
    if isinstance(exc, BudgetExhausted):
        return "timeout", False
    kind, retryable = classify(exc)
    if retryable and give_up_if is not None and give_up_if(exc):
        return "client", False
    return kind, retryable


def _failure(exc: BaseException, kind: ErrorKind, retryable: bool, call: ModelCall, *, endpoint: str | None,
             secrets: list[str | None]) -> BackendError:
    """The error to raise for a request that failed (`call`: its failed attempts, kept as `.model_call`):
    BudgetExhausted when the run's time budget ran out, else a BackendError saying why (unreachable, not
    retried, or failed after its attempts), with secrets redacted."""
    role, purpose, backend, n, errors = call.role, call.purpose, call.backend, call.attempts, call.errors
    err: BackendError
    if isinstance(exc, BudgetExhausted):
        budget = current_budget()
        where = f" at {endpoint}" if endpoint and endpoint not in backend else ""
        last = f"; last error: {errors[-1].split(': ', 1)[-1]}" if errors else ""
        msg = (f"time budget of {budget.seconds:g} s spent: the {role} {purpose} request to {backend}{where} "
               f"got no complete reply ({n} attempt{'s' * (n != 1)} in {call.latency_s:.1f} s{last})"
               if budget is not None else f"{backend} {purpose}: {exc}")
        err = BudgetExhausted(redact(msg, secrets))
    else:
        if kind in ("connection", "timeout") and endpoint:
            msg = f"could not reach {endpoint} after {n} attempt{'s' * (n > 1)}: {_short_reason(exc)}"
        elif not retryable:
            msg = f"{backend} {purpose} failed ({kind} error, not retried): {describe_error(exc)}"
        else:
            msg = f"{backend} {purpose} failed after {n} attempts: {describe_error(exc)}"
        err = BackendError(redact(msg, secrets))
    err.model_call = call  # type: ignore[attr-defined]
    return err


def _estimate_tokens(request: dict[str, Any] | None) -> int:
    """A request's input tokens for the rate limiter, about 4 characters a token of its JSON (audio parts
    are hashes there, so they count little: a tokens-per-minute limit is about text)."""
    if not request:
        return 0
    return len(json.dumps(request, default=str, separators=(",", ":"))) // 4


def _from_cache(policy: CallPolicy, key: str | None, codec: Codec | None, *, role: Literal["planner", "frontend"],
                purpose: str, backend: str) -> tuple[Any, ModelCall] | None:
    if policy.cache is None or key is None or codec is None:
        return None
    entry = policy.cache.get(key)
    if entry is None:
        return None
    try:
        result = codec.decode(entry["reply"])
    except Exception:  # noqa: BLE001 - an entry the codec no longer reads is a miss, asked again
        return None
    facts = reply_facts(result)
    return result, ModelCall(role=role, purpose=purpose, backend=backend, attempts=0, cache_hit=True,
                             cache_key=key, latency_s=0.0, **facts.model_dump())


def call_with_retries(
    fn: Callable[[], T],
    *,
    role: Literal["planner", "frontend"],
    purpose: str,
    backend: str,
    policy: CallPolicy = DEFAULT_POLICY,
    endpoint: str | None = None,
    secrets: Iterable[str | None] = (),
    sleep: Callable[[float], None] = time.sleep,
    give_up_if: Callable[[BaseException], bool] | None = None,
    timeout_s: float | None = None,
    request: dict[str, Any] | None = None,
    codec: Codec | None = None,
    max_attempts: int | None = None,
    base_delay_s: float | None = None,
    max_delay_s: float | None = None,
) -> tuple[T, ModelCall]:
    """Run `fn()` under `policy` (retries, back-off, Retry-After, rate limit, cache); return (result,
    ModelCall) or raise BackendError.

    `request` describes the whole request (JSON-able; audio by content hash) and `codec` turns the reply
    into JSON and back: with both and a cache in the policy, an identical request is answered from the
    cache (`ModelCall.cache_hit`, no request sent) and every new reply is stored. The ModelCall carries
    what the reply says of itself (audiomind.backends.usage: token kinds, served model, finish reason),
    each retry's wait and the rate limiter's.

    `give_up_if(exc)` marks errors that must not be retried whatever their status (some servers answer
    a request they cannot parse with HTTP 500). The raised BackendError carries the ModelCall of the
    failed attempts as `.model_call`, so the caller can still put the failure on the record.

    Deadlines (audiomind.backends.deadline): each attempt may take min(`timeout_s`, the run's time budget
    left) in all, however its server trickles the reply; back-off sleeps and rate-limit waits never
    outlast the budget, and once it is spent no attempt starts: `BudgetExhausted` (a BackendError).

    `max_attempts` (sends at most, i.e. retries + 1), `base_delay_s` and `max_delay_s` override the policy's.
    """
    policy = _overridden(policy, max_attempts, base_delay_s, max_delay_s)
    secrets = list(secrets)
    key = request_key({"backend": backend, "request": request}) if request is not None else None
    hit = _from_cache(policy, key, codec, role=role, purpose=purpose, backend=backend)
    if hit is not None:
        return hit
    limit = policy.rate_limit_for(backend)
    attempts = _Attempts(fn, policy, limiter_for(backend, limit) if limit.active else None,
                         _estimate_tokens(request), timeout_s, secrets, give_up_if, sleep)
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.attempts),
        retry=tenacity.retry_if_exception(
            lambda e: not isinstance(e, NotImplementedError) and _kind_of(e, give_up_if)[1]),
        wait=attempts.wait,
        sleep=attempts.pause,
        reraise=True,  # the last attempt's own exception, classified below
    )
    try:
        result = retrying(attempts.attempt)
    except NotImplementedError:
        raise
    except Exception as exc:  # classified, never swallowed
        kind, retryable = _kind_of(exc, give_up_if)
        call = attempts.record(role=role, purpose=purpose, backend=backend, attempts=len(attempts.errors),
                               cache_key=key)
        raise _failure(exc, kind, retryable, call, endpoint=endpoint, secrets=secrets) from exc
    call = attempts.record(role=role, purpose=purpose, backend=backend, attempts=len(attempts.errors) + 1,
                           cache_key=key, **reply_facts(result).model_dump())
    _to_cache(policy, key, codec, result, backend=backend, purpose=purpose)
    return result, call


class _Attempts:
    """The attempts of one request: each waits for the rate limiter and runs under its deadline; the waits
    between them honour Retry-After (and pause the whole backend) or back off; all of it is recorded."""

    def __init__(self, fn: Callable[[], Any], policy: CallPolicy, limiter: Any, tokens: int,
                 timeout_s: float | None, secrets: list[str | None],
                 give_up_if: Callable[[BaseException], bool] | None, sleep: Callable[[float], None]):
        self.fn, self.policy, self.limiter, self.tokens = fn, policy, limiter, tokens
        self.timeout_s, self.secrets, self.give_up_if, self.sleep = timeout_s, secrets, give_up_if, sleep
        self.errors: list[str] = []  # one line per failed attempt, in order
        self.waits: list[float] = []
        self.limited = 0.0
        self.t0 = time.perf_counter()

    def attempt(self) -> Any:
        limit_s, by_budget = call_limit(self.timeout_s)
        if by_budget and limit_s is not None and limit_s <= 0:
            raise BudgetExhausted("no time left in the run's time budget")  # before any request: not an attempt
        if self.limiter is not None:
            self.limited += self.limiter.acquire(self.tokens)
            limit_s, by_budget = call_limit(self.timeout_s)
        try:
            return call_with_deadline(self.fn, limit_s)
        except NotImplementedError:
            raise  # a capability the backend lacks (e.g. structured output): the caller picks another way
        except Exception as exc:
            self.errors.append(redact(f"attempt {len(self.errors) + 1}: {describe_error(exc)}", self.secrets))
            budget = current_budget()
            if by_budget and budget is not None and budget.spent() and classify(exc)[0] == "timeout":
                raise BudgetExhausted(f"the run's time budget ran out during attempt {len(self.errors)}") from exc
            raise

    def pause(self, seconds: float) -> None:
        budget = current_budget()
        self.sleep(seconds if budget is None else max(0.0, min(seconds, budget.remaining())))

    def wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        p = self.policy
        delay = backoff_delay(state.attempt_number, p.base_delay_s, p.max_delay_s)
        ra = _retry_after_s(exc) if exc is not None and _kind_of(exc, self.give_up_if)[0] == "rate_limit" else None
        if ra is not None:
            delay = min(p.retry_after_cap_s, max(delay, ra))
            if self.limiter is not None:
                self.limiter.pause_for(delay)  # every worker waits out the server's rate limit, not just this one
        self.waits.append(round(delay, 3))
        return delay

    def record(self, **fields: Any) -> ModelCall:
        return ModelCall(errors=self.errors, latency_s=round(time.perf_counter() - self.t0, 3),
                         retry_waits_s=self.waits, rate_limit_wait_s=round(self.limited, 3), **fields)


def _overridden(policy: CallPolicy, max_attempts: int | None, base_delay_s: float | None,
                max_delay_s: float | None) -> CallPolicy:
    overrides: dict[str, Any] = {}
    if max_attempts is not None:
        overrides["retries"] = max(1, int(max_attempts)) - 1
    if base_delay_s is not None:
        overrides["base_delay_s"] = base_delay_s
    if max_delay_s is not None:
        overrides["max_delay_s"] = max_delay_s
    return dataclasses.replace(policy, **overrides) if overrides else policy


def _to_cache(policy: CallPolicy, key: str | None, codec: Codec | None, result: Any, *, backend: str,
              purpose: str) -> None:
    if policy.cache is None or key is None or codec is None:
        return
    try:
        encoded = codec.encode(result)
    except Exception:  # noqa: BLE001 - a reply the codec cannot write is simply not cached
        return
    policy.cache.put(key, {"backend": backend, "purpose": purpose, "reply": encoded})


def merge_calls(calls: list[ModelCall], *, output: Any = None, extra_errors: Iterable[str] = ()) -> ModelCall:
    """One ModelCall for a logical request that took several rounds (e.g. a format retry)."""
    first = calls[0]

    def _sum(vals: list[int | None]) -> int | None:
        nums = [v for v in vals if v is not None]
        return sum(nums) if nums else None

    return ModelCall(
        id=first.id,
        role=first.role,
        purpose=first.purpose,
        backend=first.backend,
        attempts=sum(c.attempts for c in calls),
        errors=[e for c in calls for e in c.errors] + list(extra_errors),
        latency_s=round(sum(c.latency_s for c in calls), 3),
        input_tokens=_sum([c.input_tokens for c in calls]),
        output_tokens=_sum([c.output_tokens for c in calls]),
        cached_input_tokens=_sum([c.cached_input_tokens for c in calls]),
        audio_input_tokens=_sum([c.audio_input_tokens for c in calls]),
        reasoning_tokens=_sum([c.reasoning_tokens for c in calls]),
        served_model=calls[-1].served_model,
        fingerprint=calls[-1].fingerprint,
        finish_reason=calls[-1].finish_reason,
        cache_hit=all(c.cache_hit for c in calls),
        cache_key=calls[-1].cache_key,
        retry_waits_s=[w for c in calls for w in c.retry_waits_s],
        rate_limit_wait_s=round(sum(c.rate_limit_wait_s for c in calls), 3),
        input_audio=calls[-1].input_audio,
        decoding=calls[-1].decoding,
        output=output,
        input=calls[-1].input,  # what the last round sent (a format retry resends the prompt and the fix)
    )
