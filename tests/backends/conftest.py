"""Loopback HTTP servers that record what the real client libraries send and reply with scripted JSON.

No client library is mocked: the openai SDK, google-genai and langchain talk HTTP to a real
`ThreadingHTTPServer` on 127.0.0.1, which records each request (method, path, headers, JSON body) and
answers from a script (OpenAI chat.completion or Gemini generateContent shapes), optionally failing
with 429/500 a given number of times first.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind.state import (
    Artifact,
    EvidenceItem,
    EvidenceState,
    Observation,
    Question,
    RunInfo,
    ToolCall,
    ToolCallStatus,
    ToolCategory,
)

SR = 16000


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class RecordingServer:
    """A scripted HTTP server: `queue()` replies in order; when the queue is empty, `default` answers."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.default: Callable[[Recorded], Reply] = lambda req: Reply(404, {"error": {"message": "no script"}})
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else None
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = None
                req = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                with server._lock:
                    server.requests.append(req)
                    reply = server._queue.popleft() if server._queue else None
                if reply is None:
                    reply = server.default(req)
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_POST = _handle
            do_GET = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def queue(self, status: int, body: Any, headers: dict[str, str] | None = None, times: int = 1) -> None:
        for _ in range(times):
            self._queue.append(Reply(status, body, headers or {}))

    def posts(self, suffix: str = "") -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0].endswith(suffix)]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = RecordingServer()
    yield s
    s.close()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------- reply shapes


def openai_chat(content: str, prompt_tokens: int = 11, completion_tokens: int = 7, model: str = "m") -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def gemini_reply(text: str, prompt_tokens: int = 13, out_tokens: int = 5) -> dict:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": out_tokens,
                          "totalTokenCount": prompt_tokens + out_tokens},
        "modelVersion": "gemini-test",
    }


def openai_error(status: int, message: str) -> dict:
    return {"error": {"message": message, "type": "test_error", "code": status}}


# ---------------------------------------------------------------- audio and state


def _write_tone(path: Path, seconds: float, freq: float) -> Path:
    t = np.arange(round(seconds * SR)) / SR
    y = 0.3 * np.sin(2 * np.pi * freq * t).astype(np.float32)
    return aio.write_wav(path, y, SR)


def artifact_for(path: Path, artifact_id: str = "a0") -> Artifact:
    info = aio.probe(path)
    return Artifact(id=artifact_id, path=str(path), sha256=aio.sha256_file(path), duration_s=info.duration_s,
                    sample_rate=info.sample_rate, channels=info.channels, format=info.format)


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> dict[str, Path]:
    """Tones whose durations are known by construction: 3 s at 44.1 kHz stereo-free, 2 s, and 70 s."""
    d = tmp_path_factory.mktemp("backend_clips")
    short = d / "short_44k.wav"
    t = np.arange(int(3.0 * 44100)) / 44100
    aio.write_wav(short, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 44100)
    return {
        "short": short,  # 3.0 s, 44.1 kHz: the front end must resample to 16 kHz
        "other": _write_tone(d / "other.wav", 2.0, 660.0),
        "long": _write_tone(d / "long.wav", 70.0, 220.0),
    }


def make_state(artifacts: list[Artifact], question: str = "How many beeps are there?",
               choices: list[str] | None = None, with_evidence: bool = True) -> EvidenceState:
    run = RunInfo(run_id="run_test", max_steps=6, time_budget_s=300, frontend_window_s=30.0, artifact_dir="/tmp")
    q = Question(text=question, choices=choices or ["2", "3", "4"], audio_path=artifacts[0].path)
    state = EvidenceState(run=run, question=q, artifacts=artifacts)
    if with_evidence:
        obs = Observation(frontend="openai:test", artifact_ids=["a0"], prompt_id="p@x", prompt="listen",
                          text="{}", description="several short beeps", provisional_answer="3",
                          open_needs=["exact count"], uncertainty="medium")
        call = ToolCall(step=0, tool="vad", arguments={"artifact": "a0"}, status=ToolCallStatus.ok,
                        duration_s=0.12)
        ev = EvidenceItem(claim="3 activity segments between 0.0 and 3.0 s", source_type="tool_call",
                          source_id=call.id, tool="vad", category=ToolCategory.temporal_segmentation,
                          artifact_id="a0", confidence=0.9)
        state = state.model_copy(update={"observations": [obs], "tool_calls": [call], "evidence": [ev]})
    return state
