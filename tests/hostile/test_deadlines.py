"""Deadlines, not just timeouts: a model server that hangs, drips its reply one byte a second, or drips for
ever can hold a request only as long as the request's own timeout and the run's time budget allow; when the
budget runs out the run ends with `bound_hit="time_budget"`, a clear line and a written trace.

Real clients (openai SDK, LangChain ChatOpenAI) against raw-socket loopback servers (slow_servers.py); the
end-to-end runs are real `audiomind ask` subprocesses, started together so the module takes ~30 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiomind.backends.base import BackendError, ListenRequest
from audiomind.backends.deadline import BudgetExhausted, CallTimeout, call_with_deadline, run_budget
from audiomind.backends.frontends.openai import OpenAIFrontEnd
from audiomind.backends.registry import make_planner
from audiomind.backends.retry import call_with_retries
from audiomind.state import Artifact

from .slow_servers import SlowServer


@pytest.fixture
def tone(tmp_path) -> Path:
    t = np.arange(16000) / 16000
    path = tmp_path / "tone.wav"
    sf.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)
    return path


def _artifact(path: Path) -> Artifact:
    return Artifact(id="a0", path=str(path), sha256="0" * 64, duration_s=1.0, sample_rate=16000, channels=1)


def _listen(fe: OpenAIFrontEnd, path: Path):
    return fe.listen(ListenRequest(kind="perception", artifacts=[_artifact(path)], prompt="Listen.",
                                   prompt_id="t@0", question="What is it?"))


@pytest.fixture
def slow():
    servers: list[SlowServer] = []

    def make(mode: str, interval: float = 1.0) -> SlowServer:
        s = SlowServer(mode, interval)  # type: ignore[arg-type]
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def _released_within(server: SlowServer, seconds: float) -> bool:
    """Every connection the client opened is closed by it within `seconds` from now."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if server.connections and all(c.closed is not None for c in server.connections):
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------- one request, in process


def test_call_with_deadline_gives_control_back():
    t0 = time.monotonic()
    with pytest.raises(CallTimeout, match=r"no complete reply within 0.3 s"):
        call_with_deadline(lambda: time.sleep(5), 0.3)
    assert time.monotonic() - t0 < 1.0
    assert call_with_deadline(lambda: 42, 1.0) == 42
    with pytest.raises(ZeroDivisionError):
        call_with_deadline(lambda: 1 / 0, 1.0)


def test_an_abandoned_llamacpp_generation_stops_at_its_next_token():
    """In-process llama.cpp generation gets no per-request cap (a slow CPU is no hung server), but one the run's
    budget abandoned stops at its next token (its stopping criterion sees the deadline) and frees the model.
    A real generation: tests/backends/test_llamacpp.py."""
    from audiomind.backends.planners.llamacpp import _past_deadline

    assert _past_deadline(None, None) is False  # no deadline: generation goes on
    seen = []

    def generate():
        seen.append(_past_deadline(None, None))  # within its deadline
        time.sleep(0.4)  # still generating when the caller gives up
        seen.append(_past_deadline(None, None))

    with pytest.raises(CallTimeout):
        call_with_deadline(generate, 0.1)
    time.sleep(0.6)
    assert seen == [False, True], "the abandoned generation did not stop"


def test_a_dripping_reply_is_cut_at_the_request_timeout(slow, tone):
    server = slow("drip")
    fe = OpenAIFrontEnd("m", base_url=server.url, api_key="EMPTY", timeout_s=3, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(BackendError) as info:
        _listen(fe, tone)
    took = time.monotonic() - t0
    assert took < 6, f"a 3 s request took {took:.1f} s"
    call = info.value.model_call
    assert call.latency_s < 3.5
    assert call.attempts == 1 and "no complete reply within 3.0 s" in call.errors[0]
    assert _released_within(server, 2.5), "the abandoned request still holds its connection"


def test_a_hanging_server_costs_each_attempt_its_timeout_only(slow, tone):
    server = slow("hang")
    fe = OpenAIFrontEnd("m", base_url=server.url, api_key="EMPTY", timeout_s=1.5, max_retries=1, base_delay_s=0.1)
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="after 2 attempts") as info:
        _listen(fe, tone)
    assert time.monotonic() - t0 < 7
    assert info.value.model_call.latency_s < 4.5  # 2 x 1.5 s and a short back-off
    assert len(server.connections) == 2


def test_the_run_budget_caps_requests_and_retries(slow, tone):
    server = slow("drip_forever")
    fe = OpenAIFrontEnd("m", base_url=server.url, api_key="EMPTY", timeout_s=120, max_retries=3)
    t0 = time.monotonic()
    with run_budget(3), pytest.raises(BudgetExhausted) as info:
        _listen(fe, tone)
    assert time.monotonic() - t0 < 5
    assert "time budget of 3 s spent" in str(info.value) and server.url in str(info.value)
    assert info.value.model_call.attempts == 1
    assert _released_within(server, 2.5)


def test_an_llm_planner_request_is_cut_too(slow):
    server = slow("drip")
    planner = make_planner(f"openai:m@{server.url}", timeout_s=2, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(BackendError) as info:
        planner.complete_text("Say yes.")
    assert time.monotonic() - t0 < 6  # (a first call also imports LangChain's message classes)
    assert info.value.model_call.latency_s < 2.5
    assert "no complete reply within 2.0 s" in info.value.model_call.errors[0]


def test_back_off_never_sleeps_past_the_budget():
    slept: list[float] = []

    def refused():
        raise ConnectionRefusedError("Connection refused")

    t0 = time.monotonic()
    with run_budget(0.5), pytest.raises(BudgetExhausted) as info:
        call_with_retries(refused, role="planner", purpose="decide", backend="b", max_attempts=5,
                          base_delay_s=30, max_delay_s=30, sleep=lambda s: (slept.append(s), time.sleep(s)))
    assert time.monotonic() - t0 < 1.5
    assert slept and max(slept) <= 0.5
    assert info.value.model_call.attempts == 1  # the second attempt never started: no time was left


# ---------------------------------------------------------------- whole runs: `audiomind ask` against each server


CASES = [(role, mode) for role in ("planner", "frontend") for mode in ("hang", "drip", "drip_forever")]
BUDGET = 20


@pytest.fixture(scope="module")
def runs(tmp_path_factory, model_server):
    """Every (role, server) case as a real `ask` subprocess with --time-budget 20, all started at once. The
    other role is played by the cooperative loopback server, so nothing but the slow server takes time."""
    root = tmp_path_factory.mktemp("deadline_runs")
    t = np.arange(16000) / 16000
    clip = root / "tone.wav"
    sf.write(clip, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)
    servers, procs = [], {}
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-deadline-0123456789"}
    for role, mode in CASES:
        server = SlowServer(mode)  # type: ignore[arg-type]
        servers.append(server)
        spec = f"openai:m@{server.url}"
        trace_dir = root / f"{role}-{mode}"
        args = ["ask", str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--time-budget",
                str(BUDGET), "--trace-dir", str(trace_dir), "--no-cache"]
        args += (["--planner", spec, "--frontend", model_server.spec] if role == "planner"
                 else ["--planner", model_server.spec, "--frontend", spec])
        procs[(role, mode)] = (time.monotonic(), trace_dir, subprocess.Popen(
            [sys.executable, "-m", "audiomind", *args], cwd=root, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True))
    results = {}
    for key, (t0, trace_dir, proc) in procs.items():
        try:
            out, err = proc.communicate(timeout=BUDGET + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        results[key] = {"wall": time.monotonic() - t0, "code": proc.returncode, "out": out, "err": err,
                        "traces": sorted(trace_dir.glob("*.json"))}
    yield results
    for s in servers:
        s.close()


@pytest.mark.parametrize("role,mode", CASES)
def test_ask_ends_within_its_budget_with_a_trace_saying_why(runs, role, mode):
    r = runs[(role, mode)]
    assert r["code"] == 3, r["err"]
    assert "Traceback" not in r["err"] + r["out"]
    lines = [ln for ln in r["err"].splitlines() if ln.strip()]
    assert len(lines) == 1 and "time budget of 20 s spent" in lines[0], r["err"]
    assert len(r["traces"]) == 1, "the run that hit its budget leaves its trace"
    trace = json.loads(r["traces"][0].read_text())
    assert trace["outcome"]["status"] == "failed" and trace["outcome"]["bound_hit"] == "time_budget"
    assert "time budget of 20 s spent" in trace["outcome"]["reason"]
    assert trace["run"]["wall_time_s"] <= BUDGET + 5, trace["run"]["wall_time_s"]
    assert trace["model_calls"][-1]["role"] == role
    assert str(r["traces"][0]) in lines[0]  # the line says where the trace is


def test_a_terminated_run_still_leaves_its_trace(tmp_path, model_server):
    """SIGTERM (a scheduler, `timeout`, `kill`) in the middle of a hanging request: the run stops at once,
    exit 130, one line, and its trace says it was interrupted."""
    import signal

    server = SlowServer("hang")
    try:
        clip = tmp_path / "tone.wav"
        t = np.arange(16000) / 16000
        sf.write(clip, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)
        proc = subprocess.Popen(
            [sys.executable, "-m", "audiomind", "ask", str(clip), "Is there a tone?", "-c", "yes", "-c", "no",
             "--planner", model_server.spec, "--frontend", f"openai:m@{server.url}", "--trace-dir",
             str(tmp_path / "t"), "--time-budget", "600", "--timeout", "600", "--no-cache"],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 120
        while not server.connections and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.1)
        assert server.connections, "the front end request never started"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 10
    finally:
        server.close()
    assert proc.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in err + out
    trace = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    assert trace["outcome"]["status"] == "stopped" and "interrupted" in trace["outcome"]["reason"]
