"""The bounds on reading an HTTP request, one mechanism for every HTTP surface (`serve`, `mcp --http`; issue 35).

- `ReadDeadline`: an ASGI middleware that bounds the whole read of a request body (a 1-byte-a-second
  multipart body got no answer in 130 s): past `body_timeout_s` the request is answered 408 and its
  connection closed.
- `HeaderDeadlineH11`: uvicorn's h11 protocol with a deadline on reading a request's headers (h11 has
  none, and uvicorn's keep-alive timer is cancelled by every byte: 60 slowloris sockets were still open
  after 131 s); past `header_timeout_s` the connection is closed.
- `SizeLimitMiddleware`: 413 for a body over the limit (`serve`'s `max_upload_mb`), counted as it arrives
  (issue 25).
- `uvicorn_config`: the uvicorn configuration with the header deadline; `bounded_reads` wraps an app in the
  two body bounds. `serve` adds the same two as middleware (audiomind.serve); `mcp --http` runs its app with
  `bounded_reads` (audiomind.tools.mcp_transport).

It sits in the lowest layer (like audiomind.limits) so that the MCP transport shares it with `serve`.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any

import h11
from fastapi import HTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 120.0


async def _refuse(send: Callable, status: int, detail: str) -> None:
    """A JSON error reply that closes the connection."""
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _run_refusing(app: Any, scope: dict, receive: Callable, send: Callable,
                        refused: type[HTTPException]) -> None:
    """Run `app`; a `refused` exception that no handler answered becomes its JSON reply, unless the response
    had already started."""
    started = False

    async def watched(message: dict) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, watched)
    except refused as exc:
        if not started:
            await _refuse(send, exc.status_code, exc.detail)


class BodyTimeout(HTTPException):
    """The request body did not arrive within the deadline (FastAPI's body parser passes it on; 408)."""

    def __init__(self, seconds: float):
        super().__init__(408, f"the request body did not arrive within {seconds:g} s",
                         headers={"Connection": "close"})


class ReadDeadline:
    """An ASGI middleware: the whole body of a request must arrive within `body_timeout_s` of its headers;
    past it the request is answered 408 (Connection: close). Once the body is in, receive() is left alone
    (a run waits on it to learn that its client went away)."""

    def __init__(self, app: Any, body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S):
        self.app, self.timeout = app, body_timeout_s

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        read = False

        async def bounded() -> dict:
            nonlocal read
            if read:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0.001))
            except TimeoutError:
                raise BodyTimeout(self.timeout) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                read = True
            return message

        return await _run_refusing(self.app, scope, bounded, send, BodyTimeout)


class BodyTooLarge(HTTPException):
    """The request body went past the limit while it was being read (an HTTPException: FastAPI's body
    parser passes it on as it is, and the app answers 413)."""

    def __init__(self, shown_mb: float):
        super().__init__(413, f"request body larger than {shown_mb:g} MB", headers={"Connection": "close"})


class SizeLimitMiddleware:
    """413 for a request body over the limit: before reading when Content-Length says so, else as soon as
    the bytes received (a chunked body) pass it. Reading stops there, so the form parser never spools more
    than the limit to the temporary folder, however the bytes are shared among fields, used or not."""

    def __init__(self, app: Any, limit_bytes: int, shown_mb: float | None = None):
        self.app, self.limit = app, limit_bytes
        self.shown_mb = shown_mb if shown_mb is not None else limit_bytes / 1048576

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for k, v in scope.get("headers", []):
            if k == b"content-length" and v.isdigit() and int(v) > self.limit:
                return await _refuse(send, 413, f"request body larger than {self.shown_mb:g} MB")
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.shown_mb)
            return message

        return await _run_refusing(self.app, scope, counted, send, BodyTooLarge)


class HeaderDeadlineH11(H11Protocol):
    """uvicorn's h11 protocol, with the headers of each request due within `header_timeout_s` of the
    connection (or of the previous response): a client that drips them is disconnected. A module-level
    class, so `serve --workers N` can hand it to its worker processes."""

    def __init__(self, *args: Any, header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.header_timeout_s = header_timeout_s
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # this request's headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # the next request's headers are due too


def header_deadline_protocol(header_timeout_s: float) -> Any:
    """What uvicorn's `http=` takes: HeaderDeadlineH11 with this deadline (a picklable partial)."""
    return functools.partial(HeaderDeadlineH11, header_timeout_s=header_timeout_s)


def bounded_reads(app: Any, *, limit_bytes: int, body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S) -> Any:
    """`app` behind the two read bounds of every HTTP surface, in `serve`'s order: the body's deadline
    (ReadDeadline, outer) and its size (SizeLimitMiddleware). `serve` adds the same two as middleware;
    `mcp --http` wraps its app with this."""
    return ReadDeadline(SizeLimitMiddleware(app, limit_bytes), body_timeout_s)


def uvicorn_config(app: Any, *, header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S, **kwargs: Any) -> Any:
    """uvicorn's Config for `app` with the header deadline (HeaderDeadlineH11); kwargs go to uvicorn."""
    import uvicorn

    return uvicorn.Config(app, http=header_deadline_protocol(header_timeout_s), **kwargs)
