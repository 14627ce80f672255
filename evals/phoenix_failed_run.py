"""Arize Phoenix receives a failed `ask --otlp` run live (issue 25, point 12), on loopback, offline.

Starts `phoenix serve` (the binary of an environment where `pip install arize-phoenix` ran; it is not a
dependency of audiomind) on 127.0.0.1 with a throw-away working folder, starts the cooperative loopback
model server of the hostile suite as the front end, and runs

    audiomind ask tone.wav "Is there a tone?" --planner openai:m@<a closed port> ... --otlp PHOENIX
                                               [--otlp-include-content]

so the planner's first request fails. Then it reads the project's spans back from Phoenix's REST API
(`/v1/projects/audiomind/spans`) and checks what a user would look at: the root in ERROR, the failing node's
span (perception_prompt) in ERROR under the root, the failed `chat` span under that node carrying the prompt
that was sent (input.value, llm.input_messages.*) with --include-content and none of it without, and the
successful spans OK. Prints one JSON report; exit 1 when a check fails.

    python evals/phoenix_failed_run.py --phoenix /path/to/venv/bin/phoenix
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hostile"))
from model_server import ModelServer


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def start_phoenix(binary: str, work: Path) -> tuple[subprocess.Popen, str, float]:
    port, grpc = free_port(), free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = open(work / "phoenix.log", "w")  # noqa: SIM115 - the server writes it until it stops
    proc = subprocess.Popen([binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    url, t0 = f"http://127.0.0.1:{port}", time.monotonic()
    while time.monotonic() - t0 < 300:
        if proc.poll() is not None:
            raise SystemExit(f"phoenix exited with {proc.returncode}: see {work / 'phoenix.log'}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{url}/healthz", timeout=2).read()
            return proc, url, time.monotonic() - t0
        time.sleep(1)
    proc.kill()
    raise SystemExit("phoenix did not start in 300 s")


def failed_run(phoenix: str, model: ModelServer, work: Path, include_content: bool) -> dict:
    clip = work / "tone.wav"
    sf.write(clip, (0.3 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)).astype(np.float32), 16000)
    dead = f"openai:m@http://127.0.0.1:{free_port()}/v1"
    cmd = [sys.executable, "-m", "audiomind", "ask", str(clip), "Is there a tone?", "--choice", "yes", "--choice",
           "no", "--planner", dead, "--frontend", model.spec, "--retries", "1", "--no-cache",
           "--trace-dir", str(work / "traces"), "--otlp", phoenix] + (["--otlp-include-content"] * include_content)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    run_id = next((work / "traces").glob("*.json")).stem
    spans: list[dict] = []
    while time.monotonic() - t0 < 60:  # Phoenix ingests asynchronously
        every = get(f"{phoenix}/v1/projects/audiomind/spans?limit=1000")["data"]
        traces = {s["context"]["trace_id"] for s in every if s["attributes"].get("audiomind.run_id") == run_id}
        spans = [s for s in every if s["context"]["trace_id"] in traces]
        if spans:
            break
        time.sleep(1)
    by_id = {s["context"]["span_id"]: s for s in spans}
    root = next((s for s in spans if s["parent_id"] is None), None)
    chat = next((s for s in spans if s["span_kind"] == "LLM" and s["status_code"] == "ERROR"), None)
    node = by_id.get(chat["parent_id"]) if chat else None
    prompt = (chat or {}).get("attributes", {}).get("input.value", "")
    checks = {
        "ask exits 3 (backend failed)": proc.returncode == 3,
        "Phoenix has the failed run": bool(spans),
        "root span ERROR": bool(root) and root["status_code"] == "ERROR",
        "failed chat span under the failing node": bool(node) and node["name"] == "perception_prompt"
        and node["parent_id"] == (root or {}).get("context", {}).get("span_id"),
        "failing node ERROR": bool(node) and node["status_code"] == "ERROR",
        "other spans OK": all(s["status_code"] == "OK" for s in spans if s is not root and s is not chat
                              and s is not node),
        ("prompt on the chat span" if include_content else "no prompt without content"):
            ("Is there a tone?" in prompt) if include_content else prompt == "",
    }
    return {"include_content": include_content, "run_id": run_id, "spans": len(spans),
            "seconds_to_visible": round(time.monotonic() - t0, 1), "prompt_chars": len(prompt), "checks": checks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phoenix", default="phoenix", help="the `phoenix` executable (pip install arize-phoenix)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="audiomind-phoenix-"))
    proc, url, startup = start_phoenix(args.phoenix, work)
    model = ModelServer()
    try:
        runs = []
        for content in (False, True):
            sub = work / f"run-{int(content)}"
            sub.mkdir()
            runs.append(failed_run(url, model, sub, content))
    finally:
        model.close()
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
    ok = all(all(r["checks"].values()) for r in runs)
    print(json.dumps({"phoenix": url, "startup_s": round(startup, 1), "runs": runs, "ok": ok}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
