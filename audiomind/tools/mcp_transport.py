"""The MCP server's transports: stdio (`audiomind mcp`) and streamable HTTP (`audiomind mcp --http PORT`),
over the server audiomind.tools.mcp_server.build_server makes.

On stdio the client's messages pass through a relay; when stdin ends (the client closed it, or went away),
calls still running get EOF_GRACE_S to answer and then the process exits (issue 35: a tool call still
running held the server until it finished, as Python joins the executor's thread pool at exit).
"""

from __future__ import annotations

import contextlib
import os
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
                        await relay_in.send(message)
                await anyio.sleep(EOF_GRACE_S)  # calls that finish within it still answer
                _leave_now()  # a call still running is abandoned: its client has gone

            async with anyio.create_task_group() as tg:
                tg.start_soon(relay)
                await server.run(relayed, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()

    anyio.run(main)
    _leave_now()


def _leave_now() -> None:
    """Exit at once: stdin reached its end, so the client is gone (issue 35). A call still running (a tool
    in the executor's thread pool, the `ask` agent) would otherwise hold the process until it finished:
    concurrent.futures joins its threads at exit. Nobody is left to read its answer."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def serve_http(core: ToolServer, build_server: Callable[[ToolServer], Any], port: int,
               host: str = "127.0.0.1") -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only; DNS-rebinding protection on)."""
    import uvicorn

    apply_process_env(quiet=True)  # OpenMP, hub and progress-bar variables, before any model loads
    app = build_server(core).streamable_http_app(host=host)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
