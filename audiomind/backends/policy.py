"""How every model request of a run is sent: retries, back-off, the server's Retry-After, the client-side
rate limit and the model-call cache, as one value handed to each backend when it is built.

`retries` means retries: a request is sent at most `retries + 1` times. Back-off is exponential with equal
jitter, capped at `max_delay_s`; a 429's Retry-After is honoured up to `retry_after_cap_s` (a server that
asks for longer gets the cap, and the wait is on the record). `rate_limits` maps a backend spec (with or
without its `@URL`) or `*` to requests / tokens per minute (audiomind.backends.ratelimit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from audiomind.backends.cache import CacheMode, ModelCallCache
from audiomind.backends.ratelimit import RateLimit

if TYPE_CHECKING:
    from audiomind.config import AgentConfig


def spec_names(backend: str) -> list[str]:
    """The names a spec may be given by, most specific first: 'openai:gpt-4o-mini@http://h/v1' is also
    'openai:gpt-4o-mini'; then '*'."""
    names = [backend]
    kind, sep, rest = backend.partition(":")
    if sep and "@" in rest:
        names.append(f"{kind}:{rest.rsplit('@', 1)[0]}")
    names.append("*")
    return names


@dataclass(frozen=True)
class CallPolicy:
    retries: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    retry_after_cap_s: float = 120.0
    rate_limits: dict[str, RateLimit] = field(default_factory=dict)
    cache: ModelCallCache | None = None

    @property
    def attempts(self) -> int:
        return max(0, int(self.retries)) + 1

    def rate_limit_for(self, backend: str) -> RateLimit:
        for name in spec_names(backend):
            if name in self.rate_limits:
                return self.rate_limits[name]
        return RateLimit()


def make_policy(*, retries: int = 3, retry_after_cap_s: float = 120.0, max_delay_s: float = 30.0,
                rpm: float | None = None, tpm: float | None = None, rate_limits: dict[str, str] | None = None,
                cache_mode: CacheMode = "off", cache_dir: str | None = None) -> CallPolicy:
    """A policy from plain settings (AgentConfig, the CLI): `rpm`/`tpm` apply to every backend not named in
    `rate_limits` ({'SPEC': 'RPM/TPM'})."""
    limits = {k: RateLimit.parse(v) for k, v in (rate_limits or {}).items()}
    if (rpm or tpm) and "*" not in limits:
        limits["*"] = RateLimit(rpm=rpm, tpm=tpm)
    cache = ModelCallCache(cache_dir, cache_mode) if cache_mode != "off" else None
    return CallPolicy(retries=retries, retry_after_cap_s=retry_after_cap_s, max_delay_s=max_delay_s,
                      rate_limits=limits, cache=cache)


def policy_of(config: AgentConfig) -> CallPolicy:
    """How every model request of an agent built from `config` is sent."""
    return make_policy(retries=config.max_retries, retry_after_cap_s=config.retry_after_cap_s, rpm=config.rpm,
                       tpm=config.tpm, rate_limits=config.rate_limits, cache_mode=config.model_cache,
                       cache_dir=config.model_cache_dir)


DEFAULT_POLICY = CallPolicy()
