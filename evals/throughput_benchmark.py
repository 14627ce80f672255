"""Throughput of the batch runner against a slow model endpoint: does concurrency scale?

A loopback OpenAI-compatible server (http.server on 127.0.0.1, its own process) answers every
/v1/chat/completions request after a fixed delay (default 0.5 s, like a remote LLM) with valid JSON for
whichever prompt it got: the planner's perception prompt, plan and decision (recognised by the
JSON-schema `response_format` the planner sends), the summary (plain text), and the front end's listen
and final answer (requests carrying input_audio). Nothing is mocked inside audiomind: the real openai /
langchain clients talk HTTP to it.

The benchmark runs `audiomind bench run` (the `items` task) over ~32 short clips with 1, 4 and 16
workers using `--planner openai:x@http://127.0.0.1:P/v1 --frontend openai:x@http://127.0.0.1:P/v1`, reads
each run's summary.json (batch wall time, so process start-up is excluded) and prints items/minute and the
speed-up over 1 worker. Ideal scaling is linear while the server is the bottleneck.

    .venv/bin/python evals/throughput_benchmark.py [--items 32] [--workers 1 --workers 4 --workers 16]
        [--delay 0.5]
    .venv/bin/python evals/throughput_benchmark.py --serve 8765          # just the server

Tests import `FakeLLMServer` from here, so the server cannot rot unnoticed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import typer

_CHOICE_LINE = re.compile(r"^\s*(?:[A-Z][.)]|-)\s+(.+?)\s*$")


def _texts(body: dict[str, Any]) -> tuple[str, bool]:
    """All text of the request's messages, and whether any part carries audio."""
    out, audio = [], False
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    out.append(part.get("text", ""))
                elif part.get("type") == "input_audio":
                    audio = True
    return "\n".join(out), audio


def _choices(text: str) -> list[str]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("Choices:"):
            found = []
            for nxt in lines[i + 1:]:
                m = _CHOICE_LINE.match(nxt)
                if not m:
                    break
                found.append(m.group(1))
            return found
    return []


def reply_content(body: dict[str, Any], answer_index: int = 0) -> str:
    """The assistant text for one chat-completions request (see the module docstring)."""
    text, audio = _texts(body)
    rf = body.get("response_format") or {}
    props = (((rf.get("json_schema") or {}).get("schema") or {}).get("properties") or {}) if isinstance(rf, dict) else {}
    if "prompt" in props:
        return json.dumps({"prompt": "Listen to the whole clip and describe every sound event in order.",
                           "auditory_targets": ["sound events", "their count"]})
    if "intent" in props:
        return json.dumps({"intent": "identify the answer from what is heard", "answer_format": "one choice",
                           "focus": ["events"], "candidate_operations": [], "claims_to_verify": [],
                           "directly_answerable": ["the front end's description"], "rationale": "short clip"})
    if "action" in props:
        return json.dumps({"action": "ANSWER", "rationale": "the first observation suffices", "tool_calls": [],
                           "relisten_artifact_ids": [], "relisten_prompt": "", "stop_reason": ""})
    choices = _choices(text)
    pick = choices[min(answer_index, len(choices) - 1)] if choices else "a tone"
    if audio and '"provisional_answer"' in text:
        return json.dumps({"description": "a short steady tone", "focus": "one tone", "provisional_answer": pick,
                           "open_needs": [], "uncertainty": "low"})
    if audio:
        return json.dumps({"answer": pick, "rationale": "the clip is a single steady tone"})
    return "The front end heard a short steady tone; no tool was called."


class FakeLLMServer:
    """Threaded loopback OpenAI-compatible server; every reply waits `delay_s` and reports fixed usage."""

    def __init__(self, delay_s: float = 0.5, port: int = 0, prompt_tokens: int = 1000, completion_tokens: int = 50):
        self.delay_s = delay_s
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.requests = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with server._lock:
                    server.requests += 1
                time.sleep(server.delay_s)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                content = reply_content(body)
                self._send(200, {
                    "id": f"chatcmpl-{server.requests}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "x"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": server.prompt_tokens, "completion_tokens": server.completion_tokens,
                              "total_tokens": server.prompt_tokens + server.completion_tokens},
                })

            def _send(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def make_items(folder: Path, n: int) -> Path:
    """n one-second tones (distinct frequencies, so no cache hit) and an items.jsonl for `bench run`."""
    import numpy as np

    from audiomind import audio as aio

    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        f = 300.0 + 25.0 * i
        t = np.arange(16000) / 16000
        aio.write_wav(folder / f"tone{i:03d}.wav", (0.3 * np.sin(2 * np.pi * f * t)).astype(np.float32), 16000)
        lines.append(json.dumps({"id": f"tone{i:03d}", "audio": f"tone{i:03d}.wav",
                                 "question": "What is heard in the clip?",
                                 "choices": ["A steady tone", "A dog barking", "Speech", "Silence"],
                                 "answer": "A steady tone", "category": "throughput"}))
    path = folder / "items.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_once(items: Path, out: Path, url: str, workers: int) -> dict[str, Any]:
    spec = f"openai:x@{url}"
    cmd = [sys.executable, "-m", "audiomind.bench.cli", "run", "--items", str(items), "--out", str(out),
           "--planner", spec, "--frontend", spec, "--workers", str(workers), "--no-progress", "--retries", "1"]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    total = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"bench run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    summary = json.loads((out / "summary.json").read_text())
    summary["process_wall_s"] = round(total, 2)
    return summary


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    items: int = typer.Option(32, min=1, help="clips per run"),
    workers: list[int] = typer.Option([1, 4, 16], "--workers", help="worker counts to compare (repeatable)"),
    delay: float = typer.Option(0.5, min=0, help="server seconds per request"),
    serve: int | None = typer.Option(None, help="only serve on this port (Ctrl-C to stop)"),
) -> None:
    """Batch-runner throughput against a slow loopback model endpoint: items/minute by worker count."""
    if serve is not None:
        s = FakeLLMServer(delay, port=serve)
        print(f"serving {s.url} (delay {delay} s)", flush=True)
        s.httpd.serve_forever()
        return
    with tempfile.TemporaryDirectory(prefix="throughput-") as tmp:
        tmp_p = Path(tmp)
        items_file = make_items(tmp_p / "clips", items)
        # The server runs in its own process, so its threads never compete with the runner for the GIL.
        server = subprocess.Popen([sys.executable, __file__, "--serve", "0", "--delay", str(delay)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            line = server.stdout.readline() if server.stdout else ""
            m = re.search(r"serving (\S+)", line)
            if not m:
                raise SystemExit(f"the loopback server did not start: {line!r}")
            url = m.group(1)
            rows = []
            for w in workers:
                s = run_once(items_file, tmp_p / f"run_w{w}", url, w)
                rows.append((w, s))
                print(f"workers {w:>3}: {s['ran']} items in {s['wall_time_s']:.1f} s -> "
                      f"{s['items_per_min']:.1f} items/min (statuses {s['statuses']}; process {s['process_wall_s']} s)",
                      flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    base = rows[0][1]["items_per_min"] or 1e-9
    print("\nworkers | items/min | speed-up | efficiency")
    for w, s in rows:
        sp = s["items_per_min"] / base
        print(f"{w:>7} | {s['items_per_min']:>9.1f} | {sp:>7.2f}x | {100 * sp / (w / rows[0][0]):>8.1f} %")


if __name__ == "__main__":
    app()
