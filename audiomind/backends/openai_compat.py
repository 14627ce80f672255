"""One setup for every OpenAI-compatible client (the planner's ChatOpenAI, the audio front end, the judges'
log-probability calls): the default URL, the API key rule and the timeouts, defined once.

The key rule: api.openai.com needs OPENAI_API_KEY; any other server (vLLM, llama.cpp server, ...) takes
the key when one is set and "EMPTY" otherwise, because local servers accept any key. Client retries are
off (`max_retries=0`): retries are ours (audiomind.backends.retry), so every attempt is on the record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from audiomind.backends.base import BackendError

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class OpenAIEndpoint:
    """Where requests go and with which key (`custom`: not api.openai.com)."""

    base_url: str
    api_key: str
    custom: bool

    def client(self, timeout_s: float) -> Any:
        """An `openai.OpenAI` client without its own retries; its connect and every read or write wait
        `timeout_s` at most, and never past the deadline of the request (audiomind.backends.deadline)."""
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - core dependency
            raise BackendError("the openai package is not installed (pip install openai)") from exc
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=timeout_s,
                             http_client=bounded_http_client(timeout_s))

    def chat_model(self, model: str, *, timeout_s: float, temperature: float = 0.0,
                   max_tokens: int | None = None) -> Any:
        """A LangChain `ChatOpenAI` without its own retries (the same timeouts as `client`)."""
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as exc:
            raise BackendError(f"langchain_openai is not importable ({exc}); install it with: "
                               "pip install langchain-openai") from exc
        return ChatOpenAI(model=model, base_url=self.base_url, api_key=self.api_key, timeout=timeout_s,
                          max_retries=0, temperature=temperature, max_tokens=max_tokens,
                          http_client=bounded_http_client(timeout_s))


def bounded_http_client(timeout_s: float) -> Any:
    """The openai SDK's default HTTP client (its limits and redirects), with `timeout_s` for the connect
    and each read and write, whose sockets honour the deadline of the request that uses them."""
    import openai

    from audiomind.backends.deadline import bound_sockets

    return bound_sockets(openai.DefaultHttpxClient(timeout=timeout_s))


def openai_endpoint(base_url: str | None = None, api_key: str | None = None) -> OpenAIEndpoint:
    """The endpoint for a spec's base URL (None: api.openai.com); BackendError when no key can be used."""
    url = (base_url or OPENAI_DEFAULT_URL).rstrip("/")
    custom = base_url is not None and url != OPENAI_DEFAULT_URL
    key = api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if custom else None)
    if not key:
        raise BackendError(
            "OPENAI_API_KEY is not set: export it for api.openai.com, or give a local server as "
            "openai:MODEL@http://HOST:PORT/v1"
        )
    return OpenAIEndpoint(base_url=url, api_key=key, custom=custom)
