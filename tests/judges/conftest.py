"""Shared fixtures for the judge tests: real audio true by construction (generated once per session) and a
scripted OpenAI-compatible chat server on loopback (http.server in a thread) that records every request
and answers from a script, with token log-probabilities where asked."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth

# ---------------------------------------------------------------- audio


@pytest.fixture(scope="session")
def judge_audio(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("judge_audio")


@pytest.fixture(scope="session")
def edit_pairs(judge_audio: Path) -> dict[str, Any]:
    """Real edited pairs: a telephone added, paper crumpling removed, a telephone replaced by paper crumpling,
    and an edit that did nothing (the edited file is a byte copy of the original)."""
    from audiomind.judges import pairs

    bgs, evs = pairs.default_sources(judge_audio / "src")
    fox = bgs[0]
    phone, paper = evs[0], evs[1]
    out = judge_audio / "pairs"
    made = {
        "add": pairs.make_pair("add", fox, phone, out, pair_id="add", offset_s=3.0, gain_db=-3),
        "delete": pairs.make_pair("delete", fox, paper, out, pair_id="delete", offset_s=2.8, gain_db=-3),
        "replace": pairs.make_pair("replace", fox, phone, out, pair_id="replace", new_event=paper, offset_s=3.0,
                                   gain_db=-3),
    }
    noop = pairs.make_pair("delete", fox, phone, out, pair_id="noop", offset_s=3.0, gain_db=-3)
    shutil.copy(noop.original_path, out / "noop_copy.wav")
    made["noop"] = noop.model_copy(update={"edited_path": str(out / "noop_copy.wav")})
    return made


@pytest.fixture(scope="session")
def rubric_clips(judge_audio: Path) -> dict[str, Path]:
    """A female voice saying a sentence, then a telephone ringing; three beeps; a male voice alone."""
    d = judge_audio / "rubric"
    d.mkdir(exist_ok=True)
    woman = synth.speech("good morning everyone", d / "woman.wav", voice="slt")
    phone = synth.sound_file("phone-incoming-call", d / "phone.wav", repeat=2)
    return {
        "woman_then_phone": synth.concat([woman, phone], d / "woman_then_phone.wav", gap_s=0.4),
        "beeps3": synth.beeps(3, d / "beeps3.wav"),
        "man": synth.speech("the train leaves at nine", d / "man.wav", voice="rms"),
    }


# ---------------------------------------------------------------- scripted OpenAI-compatible server


def chat_reply(content: str, logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None) -> dict:
    """An OpenAI chat.completion body; `logprobs`: [(token, logprob, [(alt token, alt logprob), ...]), ...]."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()),
             "top_logprobs": [{"token": a, "logprob": alp, "bytes": list(a.encode())} for a, alp in alts]}
            for t, lp, alts in logprobs]}
    return {"id": "chatcmpl-judge", "object": "chat.completion", "created": int(time.time()), "model": "m",
            "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}


class ScriptedChat:
    """ThreadingHTTPServer on 127.0.0.1 answering POST /v1/chat/completions with `responder(body)`."""

    def __init__(self, responder: Callable[[dict], dict]):
        self.requests: list[dict] = []
        self.responder = responder
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                server.requests.append({"path": self.path, "body": body})
                data = json.dumps(server.responder(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def prompt_text(body: dict) -> str:
    """All text parts of the request's messages."""
    out = []
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, list):
            out += [p.get("text", "") for p in c if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(out)


def audio_parts(body: dict) -> list[dict]:
    return [p for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for p in m["content"] if isinstance(p, dict) and p.get("type") == "input_audio"]


@pytest.fixture
def scripted_chat():
    servers: list[ScriptedChat] = []

    def start(responder: Callable[[dict], dict]) -> ScriptedChat:
        s = ScriptedChat(responder)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.close()


@pytest.fixture(scope="session")
def judge_helpers():
    from types import SimpleNamespace

    return SimpleNamespace(chat_reply=chat_reply, prompt_text=prompt_text, audio_parts=audio_parts)


def rms_db(path: str | Path) -> float:
    y = aio.load(path, sr=16000)
    return float(20 * np.log10(np.sqrt(np.mean(y ** 2)) + 1e-12))
