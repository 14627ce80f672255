"""Loopback HTTP servers that misbehave in time, for the deadline tests: one that reads the request and never
answers (`hang`), one that sends a whole valid reply one byte per `interval` (`drip`: headers included, so
no read timeout ever fires), and one that sends its headers at once and then a body of spaces for ever, one
byte per `interval` (`drip_forever`). Each records when a connection opened and when the client let go."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["hang", "drip", "drip_forever"]

REPLY_BODY = json.dumps({
    "id": "chatcmpl-slow", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": '{"answer": "yes", "rationale": "slow"}'}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}).encode()


@dataclass
class Connection:
    opened: float
    closed: float | None = None  # when the client closed it (or the server gave up on it)
    sent: int = 0


@dataclass
class SlowServer:
    mode: Mode
    interval: float = 1.0
    connections: list[Connection] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            record = Connection(opened=time.monotonic())
            self.connections.append(record)
            threading.Thread(target=self._serve, args=(conn, record), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> bool:
        data = b""
        conn.settimeout(10)
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            body += chunk
        return True

    def _closed_by_peer(self, conn: socket.socket) -> bool:
        conn.settimeout(0.0)
        try:
            return conn.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def _serve(self, conn: socket.socket, record: Connection) -> None:
        try:
            if not self._read_request(conn):
                return
            if self.mode == "hang":
                while not self._stop.wait(0.1):
                    if self._closed_by_peer(conn):
                        return
                return
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            if self.mode == "drip":
                payload = head + f"Content-Length: {len(REPLY_BODY)}\r\n\r\n".encode() + REPLY_BODY
            else:
                conn.sendall(head + b"Connection: close\r\n\r\n")
                payload = None
            i = 0
            while not self._stop.is_set():
                byte = payload[i:i + 1] if payload is not None else b" "
                if not byte:
                    break
                if self._closed_by_peer(conn):
                    return
                conn.settimeout(5)
                try:
                    conn.sendall(byte)
                except OSError:
                    return
                record.sent += 1
                i += 1
                self._stop.wait(self.interval)
        except OSError:
            return
        finally:
            record.closed = time.monotonic()
            try:
                conn.close()
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
