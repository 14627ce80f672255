"""LangGraph Studio: `langgraph dev` serves the compiled graph from langgraph.json, offline; its form asks
for the question only, and a run started through its API with only a `question` as input (and no context:
the run context is built from the default AgentConfig) answers from the embedded stack."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from audiomind.graph.build import NODES
from audiomind.resources import examples_dir

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url: str, body: dict | None = None, method: str = "GET", timeout: float = 600):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b"null")


@pytest.fixture(scope="module")
def studio(tmp_path_factory):
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed (pip install '.[dev]')")
    work = tmp_path_factory.mktemp("studio")
    for name in ("langgraph.json",):
        shutil.copy(REPO / name, work / name)
    config = json.loads((work / "langgraph.json").read_text())
    config["graphs"] = {"audiomind": str(REPO / "audiomind/graph/studio.py") + ":graph"}
    config["dependencies"] = [str(REPO)]
    (work / "langgraph.json").write_text(json.dumps(config))
    port = _port()
    proc = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)],
        cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "LANGGRAPH_NO_ANALYTICS": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _call(base + "/ok", timeout=2)
                break
            except (OSError, ValueError) as exc:  # not listening yet, or not answering JSON yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("langgraph dev did not start") from exc
                time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_studio_serves_every_node(studio):
    assistants = _call(studio + "/assistants/search", {}, "POST")
    assert [a["graph_id"] for a in assistants] == ["audiomind"]
    graph = _call(f"{studio}/assistants/{assistants[0]['assistant_id']}/graph")
    names = {n["id"] for n in graph["nodes"]}
    assert set(NODES) <= names


def test_studio_form_shows_the_inputs_only(studio):
    """The graph's input schema is the question (text, choices, audio path), not the evidence state's fields;
    the context form shows the AgentConfig (the collaborators are built from it)."""
    assistant = _call(studio + "/assistants/search", {}, "POST")[0]["assistant_id"]
    schemas = _call(f"{studio}/assistants/{assistant}/schemas")
    assert list(schemas["input_schema"]["properties"]) == ["question"]
    question = schemas["input_schema"]["$defs"]["Question"]
    assert {"text", "choices", "audio_path"} <= set(question["properties"])
    assert set(question["required"]) == {"text", "audio_path"}
    assert list(schemas["context_schema"]["properties"]) == ["config"]
    assert "outcome" in schemas["output_schema"]["properties"]


def test_studio_run_answers_with_only_a_question(studio):
    clip = examples_dir() / "beeps.wav"
    question = {"text": "How many beeps are there in the recording?", "choices": ["3", "4", "5", "6"],
                "audio_path": str(clip)}
    out = _call(studio + "/runs/wait", {"assistant_id": "audiomind", "input": {"question": question}}, "POST")
    assert out["final_answer"]["choice"] == "5"
    assert out["outcome"]["status"] == "answered"
