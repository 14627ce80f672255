"""What the audio front ends behind a remote API (OpenAI-compatible, Gemini) share: who they are, how they
decode, how they window audio, and the retry and timeout policy every request goes through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypedDict, TypeVar

from audiomind.backends.cache import Codec
from audiomind.backends.policy import DEFAULT_POLICY, CallPolicy
from audiomind.backends.retry import call_with_retries
from audiomind.state import ModelCall, ModelSpec

T = TypeVar("T")


class CallSettings(TypedDict, total=False):
    """The keyword arguments every remote front end takes for its requests; the defaults are those of
    `RemoteFrontEnd._settings` (120 s timeout, the default CallPolicy: 3 retries, backoff, no rate limit, no
    cache; temperature 0). `max_retries` / `base_delay_s` / `max_delay_s`, when given, override the policy's."""

    timeout_s: float
    policy: CallPolicy
    max_retries: int
    base_delay_s: float
    max_delay_s: float
    temperature: float | None


class RemoteFrontEnd:
    """Base of a front end that calls a model over HTTP. A subclass sets `kind` and `base_url`, takes
    `**CallSettings` in its constructor and hands them to `_settings`, and sends each request through
    `_retry`."""

    kind: str = ""
    model: str
    name: str
    base_url: str | None
    window_s: float | None
    timeout_s: float
    policy: CallPolicy
    temperature: float | None
    _key: str | None

    def _settings(self, model: str, name: str, key: str | None, window_s: float | None, *, timeout_s: float = 120.0,
                  policy: CallPolicy | None = None, max_retries: int | None = None, base_delay_s: float | None = None,
                  max_delay_s: float | None = None, temperature: float | None = 0.0) -> None:
        self.model = model
        self.name = name
        self._key = key
        self.window_s = window_s
        self.timeout_s = timeout_s
        p = policy or DEFAULT_POLICY
        overrides = {k: v for k, v in (("retries", max_retries), ("base_delay_s", base_delay_s),
                                       ("max_delay_s", max_delay_s)) if v is not None}
        self.policy = replace(p, **overrides) if overrides else p  # type: ignore[arg-type]
        self.temperature = temperature

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt (the policy's)."""
        return self.policy.retries

    def _model_spec(self, token_limit: tuple[str, int | None], **decoding: Any) -> ModelSpec:
        """This front end's ModelSpec: temperature, window, the subclass's own decoding settings, and its
        reply-length limit (named as its API names it) when one is set."""
        settings: dict[str, Any] = {"temperature": self.temperature, "window_s": self.window_s, **decoding}
        limit_name, limit = token_limit
        if limit:
            settings[limit_name] = limit
        return ModelSpec(role="frontend", spec=self.name, kind=self.kind, model=self.model, base_url=self.base_url,
                         decoding=settings)

    @property
    def _endpoint(self) -> str | None:
        """The endpoint named in a failed call's errors."""
        return self.base_url

    def _retry(self, fn: Callable[[], T], purpose: str, *, request: dict[str, Any] | None = None,
               codec: Codec | None = None) -> tuple[T, ModelCall]:
        """`fn()` under this front end's call policy (retries, rate limit, cache) and timeout; the API key is
        masked in any error kept. `request` (the whole request as JSON, audio by hash) and `codec` (the
        reply to JSON and back) make the call cacheable (audiomind.backends.cache)."""
        return call_with_retries(
            fn, role="frontend", purpose=purpose, backend=self.name, policy=self.policy, endpoint=self._endpoint,
            secrets=[self._key], timeout_s=self.timeout_s, request=request, codec=codec,
        )
