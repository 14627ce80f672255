"""The batch runner: kill -9 mid-run then resume (nothing lost or duplicated), per-item isolation, token and
cost accounting, retries of chosen statuses, and distribution over a local Ray instance.

Agents are real: the offline stack (rule planner + cascade) on synthetic clips, or the OpenAI-compatible
backends talking HTTP to the loopback server of evals/throughput_benchmark.py (real openai/langchain
clients, fixed token usage per reply so costs are known exactly)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.api import AudioMind
from audiomind.bench.items import BenchItem
from audiomind.bench.runner import Price, load_results, run_batch, trace_name

REPO = Path(__file__).resolve().parents[2]


def _load_benchmark_module():
    spec = importlib.util.spec_from_file_location("throughput_benchmark", REPO / "evals" / "throughput_benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


tb = _load_benchmark_module()


@pytest.fixture(scope="module")
def llm():
    """Loopback OpenAI-compatible server: no delay, 1000 prompt + 50 completion tokens per reply."""
    s = tb.FakeLLMServer(delay_s=0.0, prompt_tokens=1000, completion_tokens=50).start()
    yield s
    s.close()


def tone_items(folder: Path, n: int, prefix: str = "t") -> list[BenchItem]:
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(n):
        t = np.arange(8000) / 16000
        path = aio.write_wav(folder / f"{prefix}{i}.wav", (0.3 * np.sin(2 * np.pi * (400 + 40 * i) * t)).astype(np.float32),
                             16000)
        items.append(BenchItem(id=f"{prefix}{i}", benchmark="unit", audio_path=str(path), question="What is heard?",
                               choices=["A steady tone", "Speech", "Silence"], answer="A steady tone",
                               metadata={"category": "tones"}))
    return items


def llm_agent(url: str, trace_dir: Path):
    spec = f"openai:x@{url}"
    return partial(AudioMind, planner=spec, frontend=spec, trace_dir=str(trace_dir), max_retries=1)


# ---------------------------------------------------------------- kill -9, then resume


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_kill_9_then_rerun_loses_and_duplicates_nothing(tmp_path):
    clips = tmp_path / "clips"
    clips.mkdir()
    rows = []
    for i in range(8):
        synth.beeps(2 + i % 4, clips / f"b{i}.wav", freq_hz=500.0 + 60 * i, beep_s=0.12, gap_s=0.3)
        rows.append({"id": f"beeps_{i}", "audio": f"b{i}.wav", "question": "How many beeps are there?",
                     "choices": ["2", "3", "4", "5"], "answer": str(2 + i % 4), "category": "counting"})
    items = clips / "items.jsonl"  # relative audio paths are resolved from the items file's folder
    items.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "audiomind.bench.cli", "run", "--items", str(items), "--out", str(out),
           "--workers", "2", "--no-progress"]
    results = out / "results.jsonl"

    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    try:
        while len(_lines(results)) < 3:
            assert proc.poll() is None, f"the run ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no 3 results within 300 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = [json.loads(x) for x in _lines(results)]
    assert 3 <= len(before) < 8, "the kill came too late to test anything"
    for r in before:  # a committed line always has its trace on disk
        assert r["status"] == "answered", r
        assert (out / r["trace_path"]).is_file()

    # Simulate the worst case too: the kill tore the last line of an item that was being committed.
    pending = next(r["id"] for r in rows if r["id"] not in {b["id"] for b in before})
    with open(results, "a") as f:
        f.write(json.dumps({"id": pending, "status": "answered"})[:25])

    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = _lines(results)
    parsed = [json.loads(x) for x in lines]  # every line parses: the torn tail was cut, not kept
    ids = [r["id"] for r in parsed]
    assert sorted(ids) == sorted(r["id"] for r in rows), "every id exactly once"
    assert parsed[: len(before)] == before  # earlier commits untouched
    for r in parsed:
        trace = out / r["trace_path"]
        assert trace == out / "traces" / f"{r['id']}.json" and trace.is_file()
        assert json.loads(trace.read_text())["question"]["item_id"] == r["id"]
        assert r["status"] == "answered"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["already_done"] == len(before) and summary["ran"] == 8 - len(before)
    assert summary["remaining"] == 0
    sessions = json.loads((out / "run.json").read_text())["sessions"]
    assert len(sessions) == 2 and "finished_at" not in sessions[0] and sessions[1]["ran"] == 8 - len(before)


# ---------------------------------------------------------------- isolation with the offline stack


@pytest.mark.slow
def test_one_bad_item_never_stops_the_batch(tmp_path):
    good = synth.beeps(4, tmp_path / "four.wav", freq_hz=700.0, beep_s=0.15, gap_s=0.4)
    bad = tmp_path / "not_audio.wav"
    bad.write_text("this is not a wav file")
    q, ch = "How many beeps are there?", ["3", "4", "5", "6"]
    items = [
        BenchItem(id="good", benchmark="unit", audio_path=str(good), question=q, choices=ch, answer="4"),
        BenchItem(id="missing", benchmark="unit", audio_path=str(tmp_path / "nope.wav"), question=q, choices=ch, answer="4"),
        BenchItem(id="corrupt", benchmark="unit", audio_path=str(bad), question=q, choices=ch, answer="4"),
        BenchItem(id="scorer_bug", benchmark="unit", audio_path=str(good), question=q, choices=ch, answer="4"),
    ]

    def score(item, result):
        if item.id == "scorer_bug":
            raise RuntimeError("scorer exploded")
        return None if result.status != "answered" else result.prediction == item.answer

    out = tmp_path / "run"
    summary = run_batch(items, out, partial(AudioMind, trace_dir=str(tmp_path / "art")), workers=2, progress=False,
                        score=score)
    res = load_results(out)
    assert res["good"]["status"] == "answered" and res["good"]["correct"] is True
    assert res["good"]["frontend_tool_calls"] > 0 and res["good"]["steps"] >= 1
    assert res["missing"]["status"] == "missing_audio" and res["missing"]["trace_path"] is None
    assert res["corrupt"]["status"] == "error" and res["corrupt"]["error"]
    assert res["scorer_bug"]["status"] == "answered" and res["scorer_bug"]["correct"] is None
    assert "scorer exploded" in res["scorer_bug"]["score_error"]
    assert summary.statuses == {"answered": 2, "missing_audio": 1, "error": 1}
    assert (summary.scored, summary.correct, summary.remaining) == (1, 1, 0)
    assert (out / "traces" / "good.json").is_file()


# ---------------------------------------------------------------- each trace written once


def test_each_trace_is_written_once_straight_to_the_run_folder(llm, tmp_path, monkeypatch):
    """The agent writes each trace itself, once, atomically, at RUN_DIR/traces/<id>.json; the runner only
    records its path (no temp copy read back and written again). A run that fails inside the loop keeps
    its trace the same way."""
    import audiomind.api as api_mod
    from audiomind.bench import runner

    agent_writes: list[Path] = []
    runner_writes: list[Path] = []
    real_trace, real_atomic = api_mod.write_trace, runner.atomic_write_text
    monkeypatch.setattr(api_mod, "write_trace", lambda state, path: (agent_writes.append(Path(path)),
                                                                      real_trace(state, path))[1])
    monkeypatch.setattr(runner, "atomic_write_text", lambda path, text: (runner_writes.append(Path(path)),
                                                                         real_atomic(path, text))[1])
    items = tone_items(tmp_path / "clips", 3)
    dead = items[2].model_copy(update={"id": "dead"})  # a model that cannot be reached: fails in the loop
    run = tmp_path / "run"
    summary = run_batch(items[:2], run, llm_agent(llm.url, tmp_path / "art"), workers=2, progress=False)
    assert summary.statuses == {"answered": 2}
    failed = run_batch([dead], run, partial(AudioMind, planner="openai:x@http://127.0.0.1:9/v1",
                                            frontend=f"openai:x@{llm.url}", trace_dir=str(tmp_path / "art"),
                                            max_retries=1, timeout_s=5), progress=False,
                       error_retries=0)  # (an end-of-run round for the errored item would write its trace again)
    assert failed.statuses == {"error": 1}
    ids = [it.id for it in items[:2]] + ["dead"]
    assert sorted(agent_writes) == sorted((run / "traces" / f"{i}.json").resolve() for i in ids)  # once each
    assert not [p for p in runner_writes if p.parent.name == "traces"]  # never written again by the runner
    res = load_results(run)
    for i in ids:
        assert res[i]["trace_path"] == f"traces/{i}.json"
        assert json.loads((run / res[i]["trace_path"]).read_text())["question"]["item_id"] == i
    assert json.loads((run / "traces" / "dead.json").read_text())["outcome"]["status"] == "failed"
    assert res["dead"]["model_calls"] >= 1  # counted from the failed run's state
    assert sorted(p.name for p in (run / "traces").iterdir()) == sorted(f"{i}.json" for i in ids)  # no temp files


# ---------------------------------------------------------------- tokens, cost, retries


def test_token_and_cost_accounting_with_threads(llm, tmp_path):
    items = tone_items(tmp_path / "clips", 6)
    prices = {"*": Price(input_per_m=0.15, output_per_m=0.6)}
    summary = run_batch(items, tmp_path / "run", llm_agent(llm.url, tmp_path / "art"), workers=4, progress=False,
                        prices=prices)
    res = load_results(tmp_path / "run")
    assert summary.statuses == {"answered": 6} and summary.accuracy == 1.0
    per_call = (1000 * 0.15 + 50 * 0.6) / 1e6
    for r in res.values():
        trace = json.loads((tmp_path / "run" / r["trace_path"]).read_text())
        n = len(trace["model_calls"])
        assert n >= 5 and r["model_calls"] == n  # perception prompt, listen, plan, decide, summary, answer
        assert (r["input_tokens"], r["output_tokens"]) == (1000 * n, 50 * n)
        assert r["cost_usd"] == pytest.approx(n * per_call, rel=1e-9)
    assert summary.input_tokens == sum(r["input_tokens"] for r in res.values())
    assert summary.cost_usd == pytest.approx(sum(r["cost_usd"] for r in res.values()), rel=1e-6)


def test_per_model_prices_and_unpriced_backends(llm, tmp_path):
    items = tone_items(tmp_path / "clips", 1)
    spec = f"openai:x@{llm.url}"
    # the front end priced, the planner not: only front-end calls cost
    run_batch(items, tmp_path / "run", llm_agent(llm.url, tmp_path / "art"), progress=False,
              prices={spec: Price(input_per_m=1.0, output_per_m=2.0)})
    r = next(iter(load_results(tmp_path / "run").values()))
    trace = json.loads((tmp_path / "run" / r["trace_path"]).read_text())
    priced = [m for m in trace["model_calls"] if m["backend"] == spec]
    assert priced and r["cost_usd"] == pytest.approx(len(priced) * (1000 * 1.0 + 50 * 2.0) / 1e6)


def test_resume_skips_committed_and_retries_chosen_statuses(llm, tmp_path):
    items = tone_items(tmp_path / "clips", 3)
    late = items[2].model_copy(update={"audio_path": str(tmp_path / "late.wav")})
    items = items[:2] + [late]
    make = llm_agent(llm.url, tmp_path / "art")
    first = run_batch(items, tmp_path / "run", make, workers=2, progress=False)
    assert first.statuses == {"answered": 2, "missing_audio": 1}
    again = run_batch(items, tmp_path / "run", make, workers=2, progress=False)
    assert (again.ran, again.already_done) == (0, 3)
    shutil.copy(items[0].audio_path, tmp_path / "late.wav")  # the audio arrives later
    third = run_batch(items, tmp_path / "run", make, workers=2, progress=False, retry_statuses={"missing_audio"})
    assert third.ran == 1 and third.statuses == {"answered": 3}
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4  # the superseded line stays on the record; the last one per id wins
    assert load_results(tmp_path / "run")[late.id]["status"] == "answered"


def test_duplicate_ids_are_refused(tmp_path):
    it = BenchItem(id="same", benchmark="unit", audio_path="/nonexistent.wav", question="q")
    with pytest.raises(ValueError, match="unique"):
        run_batch([it, it], tmp_path / "run", AudioMind, progress=False)


def test_a_second_runner_on_the_same_dir_is_refused(tmp_path):
    from audiomind.bench.runner import _lock_run_dir

    held = _lock_run_dir(tmp_path)
    try:
        it = BenchItem(id="x", benchmark="unit", audio_path="/nonexistent.wav", question="q")
        with pytest.raises(RuntimeError, match="another run"):
            run_batch([it], tmp_path, AudioMind, progress=False)
    finally:
        held.close()
    assert run_batch([it], tmp_path, AudioMind, progress=False).statuses == {"missing_audio": 1}


def test_trace_names_are_filesystem_safe():
    assert trace_name("qx8hrhBZJ98_00-01-32_00-02-02") == "qx8hrhBZJ98_00-01-32_00-02-02.json"
    odd = {trace_name(x) for x in ("a/b", "a b", "a?b", "../x", "..")}
    assert len(odd) == 5 and all("/" not in n and not n.startswith(".") for n in odd)


def test_cli_run_with_loopback_models_and_prices(llm, tmp_path):
    from typer.testing import CliRunner

    from audiomind.cli import app

    clips = tmp_path / "clips"
    tone_items(clips, 2)
    rows = [{"id": f"t{i}", "audio": f"t{i}.wav", "question": "What is heard?",
             "choices": ["A steady tone", "Speech"], "answer": "A steady tone", "category": "tones"} for i in range(2)]
    (clips / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    spec = f"openai:x@{llm.url}"
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["bench", "run", "--items", str(clips / "items.jsonl"), "--out", str(out),
                                   "--planner", spec, "--frontend", spec, "--workers", "2", "--no-progress",
                                   "--price-in", "0.15", "--price-out", "0.6"])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["statuses"] == {"answered": 2} and summary["cost_usd"] > 0
    assert load_results(out)["t0"]["metadata"] == {"category": "tones"}
    bad = CliRunner().invoke(app, ["bench", "run", "--items", str(clips / "items.jsonl"), "--out", str(out),
                                   "--planner", "nonsense"])
    assert bad.exit_code == 2 and "bad backend spec" in bad.output


# ---------------------------------------------------------------- Ray


def test_ray_local_distributes_items(llm, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="ray is not installed: the --ray path cannot be tested here")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must stay < 108 chars
    ray.init(num_cpus=2, _temp_dir=temp, include_dashboard=False, log_to_driver=False)
    try:
        items = tone_items(tmp_path / "clips", 4)
        summary = run_batch(items, tmp_path / "run", llm_agent(llm.url, tmp_path / "art"), workers=2,
                            ray_address="local", progress=False, prices={"*": Price(input_per_m=1, output_per_m=1)})
        assert summary.backend == "ray" and summary.statuses == {"answered": 4}
        res = load_results(tmp_path / "run")
        assert sorted(res) == sorted(i.id for i in items)
        for r in res.values():
            assert (tmp_path / "run" / r["trace_path"]).is_file() and r["input_tokens"] > 0 and r["cost_usd"] > 0
            w = r["worker"]  # where it ran: this one node, an actor process of its own, first try
            assert w["node_id"] == ray.get_runtime_context().get_node_id() and w["pid"] not in (0, os.getpid())
            assert w["attempt"] == 1 and w["lost"] == [] and w["actor_id"]
        assert ray.is_initialized()  # an instance we did not start is left running for its owner
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
