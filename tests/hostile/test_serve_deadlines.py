"""`serve`'s read deadlines (issue 35, point 3): a client that drips its request headers (slowloris) is
disconnected after `header_timeout_s` (h11 has none, and uvicorn's keep-alive timer is cancelled by every
byte: 60 such sockets were all still open after 131 s), and one that drips its body gets a 408 after
`body_timeout_s` (a 1-byte-a-second multipart body got no answer in 130 s). A live server (uvicorn on
127.0.0.1 with the protocol `serve` runs, audiomind.http_bounds.uvicorn_config) and raw sockets; every
wait is bounded."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from audiomind.config import AgentConfig
from audiomind.http_bounds import uvicorn_config
from audiomind.serve import ServeSettings, create_app

from .live_http import drip_headers, reply_while_dripping, serving

pytestmark = pytest.mark.timeout(60)

HEADER_S, BODY_S = 1.0, 1.5


@pytest.fixture
def port(tmp_path):
    settings = ServeSettings(agent=AgentConfig(trace_dir=str(tmp_path / "traces")), warmup=False,
                             header_timeout_s=HEADER_S, body_timeout_s=BODY_S)
    with serving(uvicorn_config(create_app(settings), header_timeout_s=settings.header_timeout_s,
                                log_level="warning", lifespan="on")) as p:
        yield p


def test_slowloris_sockets_are_closed_after_the_header_deadline(port):
    still_open, took = drip_headers(port, b"POST /v1/ask HTTP/1.1\r\n", 20, HEADER_S + 3)
    assert not still_open, f"{still_open} of 20 dripping sockets still open after {took:.1f} s"
    assert took >= HEADER_S * 0.8, f"closed after {took:.1f} s: before the deadline"
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:  # an honest client still
        assert client.get("/healthz").status_code == 200
        time.sleep(HEADER_S + 0.5)  # a keep-alive connection idle past the header deadline: a fresh one
        assert client.get("/healthz").status_code == 200


def test_a_dripping_body_gets_408_after_the_body_deadline(port):
    boundary = "b0undary"
    head = (f"POST /v1/ask HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
            f"Content-Length: 100000\r\n\r\n").encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(head + f"--{boundary}\r\nContent-Disposition: form-data; name=\"question\"\r\n\r\n".encode())
    reply, took = reply_while_dripping(s, BODY_S + 5, b"a")  # a byte every 0.2 s, far short of the 100 kB announced
    s.close()
    assert reply.startswith(b"HTTP/1.1 408"), (reply[:300], f"{took:.1f} s")
    assert b"did not arrive within 1.5 s" in reply and b"connection: close" in reply.lower()
    assert BODY_S * 0.8 <= took < BODY_S + 3, f"{took:.1f} s"
