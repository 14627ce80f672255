"""The MCP server's transports: stdio (`audiomind mcp`) and streamable HTTP (`audiomind mcp --http PORT`),
over the server audiomind.tools.mcp_server.build_server makes.

On stdio the client's messages pass through a relay; when stdin ends (the client closed it, or went away),
calls still running get EOF_GRACE_S to answer and then the process exits (issue 35: a tool call still
running held the server until it finished, as Python joins the executor's thread pool at exit).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from typing import Any

from audiomind.config import apply_process_env

ToolServer = Any  # audiomind.tools.mcp_server.ToolServer (which imports this module: named, not imported)

EOF_GRACE_S = 2.0
"""After stdin ends, calls still running get this long to answer; then the server exits, whatever runs."""


def serve_stdio(core: ToolServer, build_server: Callable[[ToolServer], Any]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    apply_process_env(quiet=True)  # OpenMP, hub and progress-bar variables, before any model loads
    server = build_server(core)

    async def main() -> None:
        from mcp.shared._context_streams import create_context_streams

        async with stdio_server() as (read_stream, write_stream):
            relay_in, relayed = create_context_streams[Any](0)

            async def relay() -> None:  # the client's messages, passed on until stdin ends
                async with relay_in:
                    async for message in read_stream:
                        if isinstance(message, Exception):  # a line that is no JSON-RPC message: answered
                            await write_stream.send(unreadable_message(message))
                            continue
                        await relay_in.send(message)
                await anyio.sleep(EOF_GRACE_S)  # calls that finish within it still answer
                _leave_now()  # a call still running is abandoned: its client has gone

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay)
                await server.run(relayed, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()

    anyio.run(main)
    _leave_now()


_LEADING_ID = re.compile(  # "id" among the first few top-level members of a request's text
    r'\s*\{\s*(?:"(?:[^"\\]|\\.){0,64}"\s*:\s*(?:"(?:[^"\\]|\\.){0,256}"|[-+.\w]{1,32})\s*,\s*){0,4}'
    r'"id"\s*:\s*(-?\d{1,15}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")')


def unreadable_message(exc: Exception) -> Any:
    """The JSON-RPC error answering a line the transport could not read as a message (not JSON, nested too
    deeply, a number out of range, not a JSON-RPC message): -32700 or -32600, with the request's id when it
    can be read off the line's start (else null, as JSON-RPC says). The SDK passes such a line on as an
    exception and answers nothing: its client would wait for ever (issue 35)."""
    import json

    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from audiomind.paths import clip_text

    errors: list[Any] = []
    with contextlib.suppress(Exception):
        errors = list(getattr(exc, "errors")())  # noqa: B009 - pydantic's ValidationError has errors()
    first = errors[0] if errors else {}
    parse = first.get("type") == "json_invalid" or not errors
    given = first.get("input")
    rid: int | str | None = None
    if isinstance(given, dict) and isinstance(given.get("id"), (int, str)) and not isinstance(given.get("id"), bool):
        rid = given["id"]
    elif isinstance(given, str) and (m := _LEADING_ID.match(given[:4096])):
        with contextlib.suppress(ValueError):
            rid = json.loads(m.group(1))
    why = clip_text(str(first.get("msg") or exc), 200)
    code = types.PARSE_ERROR if parse else types.INVALID_REQUEST
    what = "Parse error" if parse else "Invalid request"
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid,
                                             error=types.ErrorData(code=code, message=f"{what}: {why}")))


def _leave_now() -> None:
    """Exit at once: stdin reached its end, so the client is gone (issue 35). A call still running (a tool
    in the executor's thread pool, the `ask` agent) would otherwise hold the process until it finished:
    concurrent.futures joins its threads at exit. Nobody is left to read its answer."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


MAX_BODY_MB = 4.0
"""The largest MCP request body over HTTP (the MCP SDK's own message limit): JSON-RPC messages name audio by
path, they never carry it."""


def http_config(core: ToolServer, build_server: Callable[[ToolServer], Any], *, host: str = "127.0.0.1",
                header_timeout_s: float | None = None, body_timeout_s: float | None = None, **kwargs: Any) -> Any:
    """uvicorn's Config for the streamable HTTP app with `serve`'s read bounds (audiomind.http_bounds): headers
    due within header_timeout_s (a client that drips them is disconnected), the body within body_timeout_s (408)
    and no larger than MAX_BODY_MB (413). Before this a dripping client held its connection for as long as it
    dripped (25 s and counting in a probe) and a dripping body never got an answer."""
    from audiomind import http_bounds as guards

    app = guards.bounded_reads(build_server(core).streamable_http_app(host=host),
                               limit_bytes=int(MAX_BODY_MB * 1048576),
                               body_timeout_s=body_timeout_s or guards.DEFAULT_BODY_TIMEOUT_S)
    return guards.uvicorn_config(app, header_timeout_s=header_timeout_s or guards.DEFAULT_HEADER_TIMEOUT_S,
                                 host=host, **kwargs)


def serve_http(core: ToolServer, build_server: Callable[[ToolServer], Any], port: int,
               host: str = "127.0.0.1") -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only; DNS-rebinding protection on; read bounds)."""
    import uvicorn

    apply_process_env(quiet=True)  # OpenMP, hub and progress-bar variables, before any model loads
    uvicorn.Server(http_config(core, build_server, host=host, port=port, log_level="warning")).run()
