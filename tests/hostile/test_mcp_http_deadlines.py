"""`audiomind mcp --http` has `serve`'s read bounds (issue 35: one mechanism for every route): a client that
drips its request headers is disconnected after the header deadline, one that drips its body gets a 408 after
the body deadline, and a chunked body past MAX_BODY_MB gets a 413 before it is read whole (the MCP SDK's own
limit did that already). Before, a probe's dripping client still held its connection after 25 s and a dripping
body never got an answer. A live server
(the config `serve_http` runs, on 127.0.0.1) and raw sockets; an honest MCP client is served afterwards."""

from __future__ import annotations

import contextlib
import select
import socket

import anyio
import pytest

from audiomind.tools import mcp_transport
from audiomind.tools.mcp_server import ToolServer, build_server

from .live_http import drip_headers, reply_while_dripping, serving

pytestmark = pytest.mark.timeout(90)

HEADER_S, BODY_S = 1.0, 1.5


@pytest.fixture
def port(tmp_path):
    core = ToolServer([tmp_path], runs_dir=tmp_path / "runs", use_cache=False)
    with serving(mcp_transport.http_config(core, build_server, header_timeout_s=HEADER_S, body_timeout_s=BODY_S,
                                           log_level="warning")) as p:
        yield p


def _honest_client_is_served(port: int) -> None:
    from mcp import Client

    async def main() -> None:
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
            assert "count_events" in {t.name for t in (await client.list_tools()).tools}

    anyio.run(main)


def test_dripping_headers_are_cut_off_at_the_header_deadline(port):
    still_open, took = drip_headers(port, b"POST /mcp HTTP/1.1\r\n", 10, HEADER_S + 5)
    assert not still_open, f"{still_open} of 10 dripping sockets still open after {took:.1f} s"
    assert took >= HEADER_S * 0.8, f"closed after {took:.1f} s: before the deadline"
    _honest_client_is_served(port)


def test_a_dripping_body_gets_408_at_the_body_deadline(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{")
    reply, took = reply_while_dripping(s, BODY_S + 8, b" ")
    s.close()
    assert reply.startswith(b"HTTP/1.1 408"), (took, reply[:200])
    assert BODY_S * 0.8 <= took <= BODY_S + 5, took
    _honest_client_is_served(port)


def test_a_chunked_body_past_the_limit_gets_413_before_it_is_read_whole(port):
    """A chunked body that never ends: the 413 must come while the client is still sending. `sent` counts what
    the kernel accepted, read or still buffered on loopback (several MB under load), so the bound is the
    32 MB the client would send, not the 4 MB limit. (The MCP SDK refuses past its own 4 MB limit too; this
    pins the bound, whichever layer keeps it.)"""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b" " * 65536
    sent, limit = 0, int(mcp_transport.MAX_BODY_MB * 1048576)
    reply = b""
    while sent < 8 * limit and not reply:
        try:
            s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        except OSError:
            break
        sent += len(chunk)
        if select.select([s], [], [], 0)[0]:
            reply += s.recv(65536)
    s.settimeout(5)
    with contextlib.suppress(OSError):
        reply += s.recv(65536)
    s.close()
    assert reply.startswith(b"HTTP/1.1 413"), (sent, reply[:200])
    assert sent < 8 * limit, f"no answer until all {sent} bytes were sent"
    _honest_client_is_served(port)
