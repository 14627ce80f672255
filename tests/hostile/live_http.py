"""A live uvicorn server on 127.0.0.1 in a thread, and the raw-socket clients the read-deadline tests drip
with: `serve`'s and `mcp --http`'s deadlines are tested the same way (tests/hostile/test_serve_deadlines.py,
test_mcp_http_deadlines.py). Every wait is bounded."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn


@contextlib.contextmanager
def serving(config: Any) -> Iterator[int]:
    """Run uvicorn with `config` (a uvicorn.Config) on a free loopback port until the block ends; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def closed(s: socket.socket) -> bool:
    """The server closed `s` (EOF or reset); False while it is still open."""
    s.setblocking(False)
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def drip_headers(port: int, request_line: bytes, n: int, within_s: float) -> tuple[int, float]:
    """Open `n` connections that send `request_line` and then one more header byte each 0.2 s (so a keep-alive
    timer alone never fires): (how many are still open after `within_s`, seconds until the last was closed)."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(request_line + b"Host: 127.0.0.1\r\n")
        socks.append(s)
    t0, open_ = time.monotonic(), list(socks)
    while open_ and time.monotonic() - t0 < within_s:
        for s in list(open_):
            try:
                s.setblocking(True)
                s.sendall(b"X")
            except OSError:
                open_.remove(s)
                continue
            if closed(s):
                open_.remove(s)
        time.sleep(0.2)
    took = time.monotonic() - t0
    for s in socks:
        s.close()
    return len(open_), took


def reply_while_dripping(s: socket.socket, within_s: float, drip: bytes) -> tuple[bytes, float]:
    """Send `drip` every 0.2 s on `s` and collect what the server answers, for at most `within_s`: (the reply,
    the seconds it took). Stops at EOF or once a whole JSON reply is in."""
    t0, reply = time.monotonic(), b""
    while time.monotonic() - t0 < within_s:
        try:
            s.sendall(drip)
        except OSError:
            break
        s.settimeout(0.2)
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not chunk:
            break
        reply += chunk
        if b"\r\n\r\n" in reply and b"}" in reply:
            break
    return reply, time.monotonic() - t0
