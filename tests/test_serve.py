"""`audiomind serve` over real HTTP: a uvicorn server on a free loopback port, driven with httpx.

Asking with an upload and with a path under the served root, a path outside the root refused, a file that
is not audio refused with a clear 400, the trace fetched as JSON and as the HTML viewer, a judge, the
Prometheus counters, and 429 when every run slot and the queue are taken. No timing is asserted."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from audiomind.config import AgentConfig
from audiomind.serve import ServeSettings, create_app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PHONE = EXAMPLES / "phone_ring.wav"
QUESTION = "What is the source of the sound in this clip?"
CHOICES = ["A dog barking", "A telephone ringing", "A car engine", "Rain falling"]


@contextlib.contextmanager
def running(app) -> Iterator[str]:
    """Serve `app` with uvicorn on a loopback port the OS picked; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server for the module: uploads and paths under `root`, traces under `traces`."""
    base = tmp_path_factory.mktemp("serve")
    root = base / "root"
    root.mkdir()
    shutil.copy(PHONE, root / "phone.wav")
    (base / "outside.wav").write_bytes(PHONE.read_bytes())
    settings = ServeSettings(agent=AgentConfig(trace_dir=str(base / "traces")), roots=[str(root)], warmup=False)
    with running(create_app(settings)) as url, httpx.Client(base_url=url, timeout=600) as client:
        yield client, root, base


def _ask(client: httpx.Client, **data) -> httpx.Response:
    files = data.pop("files", None)
    return client.post("/v1/ask", data={"question": QUESTION, "choices": CHOICES, **data}, files=files)


def test_ask_with_an_upload_then_the_trace_as_json_and_html(served):
    client, _, base = served
    r = _ask(client, files={"audio": ("phone ring.wav", PHONE.read_bytes(), "audio/wav")})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] in CHOICES and body["outcome"]["status"] == "answered"
    assert body["trace_url"] == f"/v1/traces/{body['trace_id']}" and body["run_id"] == body["trace_id"]

    trace = client.get(body["trace_url"])
    assert trace.status_code == 200 and trace.headers["content-type"].startswith("application/json")
    st = trace.json()
    assert st["run"]["run_id"] == body["run_id"] and st["question"]["text"] == QUESTION
    stored = Path(st["question"]["audio_path"])  # the uploads folder by its role, not where it is (issue 35)
    assert stored.parent == Path("<uploads>") and stored.suffix == ".wav"
    assert st["run"]["artifact_dir"] == f"<traces>/{body['run_id']}.artifacts"
    assert st["question"]["metadata"]["upload_name"] == "phone ring.wav"
    assert str(base) not in trace.text and str(base.resolve()) not in trace.text

    page = client.get(body["html_url"])
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert body["run_id"] in page.text and "<audio" in page.text  # the upload plays: it is an allowed folder
    assert str(base) not in page.text and str(base.resolve()) not in page.text


def test_ask_with_a_path_under_the_root_and_again_from_the_cache(served):
    client, root, _ = served
    first = _ask(client, path="phone.wav")
    assert first.status_code == 200, first.text
    st = client.get(first.json()["trace_url"]).json()
    # the run read a copy made from the file it checked (issue 35), shown by role; the path as given
    digest = hashlib.sha256((root / "phone.wav").read_bytes()).hexdigest()
    assert st["question"]["audio_path"] == f"<uploads>/{digest}.wav"
    assert st["question"]["metadata"]["path"] == "phone.wav"
    again = _ask(client, path=str(root / "phone.wav"))
    assert again.status_code == 200 and again.json()["answer"] == first.json()["answer"]
    shown = client.get(again.json()["trace_url"]).text  # the path as given, the root by its role
    assert str(root) not in shown and str(root.resolve()) not in shown and "<root>/phone.wav" in shown
    assert again.json()["cached_tool_calls"] > 0


def test_paths_outside_the_root_are_refused(served):
    client, root, base = served
    for path in ("../outside.wav", str(base / "outside.wav"), str(PHONE)):
        r = _ask(client, path=path)
        assert r.status_code == 403, (path, r.text)
        assert "outside the allowed folder" in r.json()["detail"]
    missing = _ask(client, path="nope.wav")
    assert missing.status_code == 404 and "no such file" in missing.json()["detail"]
    (root / "sub").mkdir(exist_ok=True)
    assert _ask(client, path="sub").status_code == 400  # a directory is not a file


def test_bad_input_gets_a_400_with_a_clear_message(served):
    client, _, _ = served
    r = _ask(client, files={"audio": ("notes.wav", b"this is a text file, not audio\n" * 20, "audio/wav")})
    assert r.status_code == 400
    assert "'notes.wav' is not usable audio" in r.json()["detail"]
    assert _ask(client, files={"audio": ("empty.wav", b"", "audio/wav")}).status_code == 400
    both = _ask(client, path="phone.wav", files={"audio": ("p.wav", PHONE.read_bytes(), "audio/wav")})
    assert both.status_code == 400 and "not both" in both.json()["detail"]
    assert _ask(client).status_code == 400  # neither
    one_choice = client.post("/v1/ask", data={"question": QUESTION, "choices": ["only"], "path": "phone.wav"})
    assert one_choice.status_code == 400 and "at least 2 choices" in one_choice.json()["detail"]
    spec = _ask(client, path="phone.wav", planner="openai:gpt-x@http://127.0.0.1:9")
    assert spec.status_code == 400 and "not allowed" in spec.json()["detail"]
    assert client.get("/v1/traces/no-such-run").status_code == 404
    assert client.get("/v1/traces/..%2Fsecret").status_code in (400, 404)


def test_a_judge_runs_and_writes_a_trace(served):
    client, _, _ = served
    r = client.post("/v1/judge/aura", data={"question": "What rings?", "reference": "a telephone",
                                            "response": "a phone is ringing"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert 0.0 <= body["score"] <= 1.0 and body["trace_id"]
    assert client.get(body["trace_url"]).json()["run"]["run_id"] == body["trace_id"]
    assert client.post("/v1/judge/nope", data={}).status_code == 404
    assert client.post("/v1/judge/rubric", data={"audio_path": "phone.wav"}).status_code == 400


def test_health_docs_and_metrics(served):
    client, _, _ = served
    # audio no other test has seen (the session's tool cache is shared): its tools run ("ok"), a repeat is cached
    import io

    import numpy as np
    import soundfile as sf

    t = np.arange(32000) / 16000
    buf = io.BytesIO()
    sf.write(buf, (0.3 * np.sin(2 * np.pi * (700 + time.time_ns() % 500) * t)).astype(np.float32), 16000, format="WAV")
    fresh = ("fresh.wav", buf.getvalue(), "audio/wav")
    assert _ask(client, files={"audio": fresh}).status_code == 200
    assert _ask(client, files={"audio": fresh}).status_code == 200
    assert _ask(client).status_code == 400  # a refused request of its own: the test does not rely on test order
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["ready"] is True and health["in_flight"] == 0
    assert "/v1/ask" in client.get("/openapi.json").json()["paths"]
    assert client.get("/docs").status_code == 200
    m = client.get("/metrics")
    assert m.status_code == 200 and m.headers["content-type"].startswith("text/plain")
    text = m.text
    for needle in ('audiomind_requests_total{endpoint="/v1/ask",method="POST",status="200"}',
                   'audiomind_requests_total{endpoint="/v1/ask",method="POST",status="400"}',
                   'audiomind_request_seconds_bucket{endpoint="/v1/ask"',
                   'audiomind_runs_total{kind="ask",outcome="answered"}',
                   'audiomind_node_seconds_count{node="perceive"}',
                   'audiomind_tool_calls_total{status="ok",tool="tagging"}',
                   'audiomind_tool_calls_total{status="cached",tool="tagging"}',
                   "audiomind_tool_cache_hits_total", 'audiomind_tool_seconds_bucket{le="0.1",tool="tagging"}',
                   'audiomind_model_load_seconds{model="yamnet"}', "audiomind_runs_in_flight 0.0"):
        assert needle in text, needle


def test_429_when_every_slot_and_the_queue_are_taken(tmp_path):
    from audiomind.api import AudioMind
    from audiomind.backends.planners.rules import RulesPlanner
    from audiomind.tools.manifest import ToolRegistry

    release = threading.Event()

    class HeldPlanner(RulesPlanner):
        def perception_prompt(self, state):
            release.wait(300)
            return super().perception_prompt(state)

    cfg = AgentConfig(trace_dir=str(tmp_path / "traces"))
    agent = AudioMind(cfg, planner=HeldPlanner(ToolRegistry.load()))
    settings = ServeSettings(agent=cfg, roots=[str(EXAMPLES)], concurrency=1, queue=1, warmup=False)
    results: list[httpx.Response] = []
    with running(create_app(settings, agent=agent)) as url, httpx.Client(base_url=url, timeout=600) as client:
        def ask() -> None:
            results.append(_ask(client, path="phone_ring.wav"))

        held = [threading.Thread(target=ask) for _ in range(2)]
        for t in held:
            t.start()
        deadline = time.monotonic() + 120
        while (h := client.get("/healthz").json())["in_flight"] != 1 or h["queued"] != 1:
            assert time.monotonic() < deadline, h
            time.sleep(0.02)
        busy = _ask(client, path="phone_ring.wav")
        release.set()
        for t in held:
            t.join(300)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
        assert "busy" in busy.json()["detail"]
        assert [r.status_code for r in results] == [200, 200]
        metrics = client.get("/metrics").text
        assert "audiomind_rejected_total 1.0" in metrics
        assert 'audiomind_requests_total{endpoint="/v1/ask",method="POST",status="429"} 1.0' in metrics


def test_the_cli_starts_a_real_server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "audiomind", "serve", "--port", str(port), "--no-warmup", "--trace-dir",
         str(tmp_path / "traces"), "--root", str(EXAMPLES), "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the server did not come up"
            with contextlib.suppress(httpx.TransportError):
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                if health.status_code == 200:
                    break
            time.sleep(0.2)
        assert health.json()["ready"] is True and health.json()["planner"] == "rules"
        paths = httpx.get(f"http://127.0.0.1:{port}/openapi.json").json()["paths"]
        assert {"/v1/judge/edit", "/v1/judge/rubric", "/v1/judge/aura"} <= set(paths)  # one route per judge
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_an_upload_over_the_limit_gets_413(tmp_path):
    settings = ServeSettings(agent=AgentConfig(trace_dir=str(tmp_path / "traces")), max_upload_mb=0.01, warmup=False)
    with running(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        r = _ask(client, files={"audio": ("big.wav", b"\0" * 200_000, "audio/wav")})
        assert r.status_code == 413 and "larger than" in r.json()["detail"]
        assert not list((tmp_path / "traces" / "uploads").iterdir())


def test_intra_op_threads_share_the_cores_among_the_runs(monkeypatch):
    from audiomind.serve import intra_op_threads_for

    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: set(range(8)), raising=False)
    assert intra_op_threads_for(2) == 4 and intra_op_threads_for(2, workers=2) == 2
    assert intra_op_threads_for(16) == 1 and intra_op_threads_for(1) == 8
