"""`bench run --mode direct --batch`: whole runs through OpenAI's Batch API and Gemini's batch mode, against
loopback stand-ins of the batch endpoints (tests/backends/standins/batch_standin.py) that validate every
request with the installed SDKs' types. Scored as usual (results.jsonl, traces, the task's scorer); a kill -9
after submitting, then the same command, polls the same batch (exactly one created); a failed line is an
error, not a wrong answer."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind.bench.batch import BATCH_FILE, PollPolicy, check_batch, load_manifest, run_task_batch
from audiomind.bench.cli import agent_factory
from audiomind.bench.prices import Price
from audiomind.bench.runner import load_results
from audiomind.bench.tasks import make_task
from audiomind.config import AgentConfig
from tests.backends.standins.batch_standin import (
    GeminiBatchStandIn,
    OpenAIBatchStandIn,
    gemini_prompt_text,
    prompt_text,
)

REPO = Path(__file__).resolve().parents[2]
CHOICES = ["A low tone", "A high tone", "Silence"]
GOLD = {"i0": "A low tone", "i1": "A high tone", "i2": "A low tone"}
# what the stand-in "model" answers for the question about clip N (clip 2 is answered wrong)
REPLY_FOR_CLIP = {"0": "A low tone", "1": "A high tone", "2": "Silence"}
FAST = PollPolicy(first_s=0.01, max_s=0.05)


def _reply(text: str) -> str:
    m = re.search(r"Which tone is in clip (\d)\?", text)
    assert m, f"the question did not reach the batch request: {text[:300]!r}"
    return json.dumps({"answer": REPLY_FOR_CLIP[m.group(1)], "rationale": "heard it", "confidence": 0.9})


def openai_answer(custom_id: str, body: dict) -> str:
    return _reply(prompt_text(body["messages"]))


def gemini_answer(custom_id: str, request: dict) -> str:
    return _reply(gemini_prompt_text(request))


@pytest.fixture
def items_file(tmp_path: Path) -> Path:
    rows = []
    t = np.arange(8000) / 16000
    for i in range(3):
        freq = 300 if GOLD[f"i{i}"] == "A low tone" else 1200
        aio.write_wav(tmp_path / f"c{i}.wav", (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), 16000)
        rows.append({"id": f"i{i}", "question": f"Which tone is in clip {i}?", "choices": CHOICES,
                     "answer": GOLD[f"i{i}"], "audio": f"c{i}.wav"})
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(items: Path, out: Path, frontend: str, **kw):
    task = make_task("items")
    loaded = task.load_items(items)
    config = AgentConfig(mode="direct", frontend=frontend)
    kw.setdefault("poll", FAST)
    kw.setdefault("say", lambda m: None)
    return run_task_batch(task, loaded, out, agent_factory(out, config), progress=False, **kw)


def _trace(out: Path, item_id: str) -> dict:
    return json.loads((out / "traces" / f"{item_id}.json").read_text(encoding="utf-8"))


def _check_scored_run(out: Path, backend: str, batch_ids: list[str]) -> None:
    rows = load_results(out)
    assert sorted(rows) == ["i0", "i1", "i2"]
    assert {k: r["status"] for k, r in rows.items()} == {"i0": "answered", "i1": "answered", "i2": "answered"}
    assert {k: r["correct"] for k, r in rows.items()} == {"i0": True, "i1": True, "i2": False}
    assert rows["i2"]["prediction"] == "Silence"
    for item_id in rows:
        tr = _trace(out, item_id)
        (call,) = tr["model_calls"]
        assert call["backend"] == backend and call["role"] == "frontend" and call["purpose"] == "answer"
        assert call["batch"] is True and call["output"]["transport"] == "batch"
        assert call["output"]["batch_id"] in batch_ids and call["output"]["custom_id"] == item_id
        assert (call["input_tokens"], call["output_tokens"], call["audio_input_tokens"]) == (1000, 20, 800)
        assert f"Which tone is in clip {item_id[1]}?" in call["input"][-1]["content"]
        assert [a["artifact_id"] for a in call["input_audio"]] == ["a0"]
        assert [a["transport"] for a in call["input_audio"]] == ["batch"]
        assert tr["outcome"]["status"] == "answered" and tr["run"]["mode"] == "direct"
        # no log-probabilities in these replies: the confidence the reply states, as the live front ends keep it
        assert tr["final_answer"]["confidence"] == 0.9
        assert tr["final_answer"]["confidence_source"] == "self_reported"
        # the price: 1000 input and 20 output tokens at 2 / 8 USD per 1M, half for a batch line
        assert rows[item_id]["cost_usd"] == pytest.approx((1000 * 2.0 + 20 * 8.0) / 1e6 * 0.5)
    manifest = load_manifest(out)
    assert manifest is not None and all(j.done and j.collected for j in manifest.jobs)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["config"]["batch"]["batch_ids"] == batch_ids


def test_openai_batch_run_scored_as_usual(items_file: Path, tmp_path: Path) -> None:
    spec_model = "gpt-audio"
    with OpenAIBatchStandIn(openai_answer, polls_to_finish=3) as s:
        spec = f"openai:{spec_model}@{s.url}"
        out = tmp_path / "run"
        summary, _ = _run(items_file, out, spec, prices={spec: Price(input_per_m=2.0, output_per_m=8.0)})
        assert s.invalid == []
        assert len(s.creates) == 1 and s.creates[0]["endpoint"] == "/v1/chat/completions"
        assert s.creates[0]["completion_window"] == "24h"
        (bid,) = s.batches
        assert s.polls[bid] >= 3  # validating -> in_progress -> completed
        rows = s.files[s.batches[bid]["input_file_id"]]["rows"]
        assert [r["custom_id"] for r in rows] == ["i0", "i1", "i2"]
        body = rows[0]["body"]
        assert body["model"] == spec_model and body["temperature"] == 0
        assert body["logprobs"] is True  # an answer among choices asks for log-probabilities, as live
        parts = body["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["text", "text", "input_audio"]
        assert "A low tone" in parts[0]["text"] and "A high tone" in parts[0]["text"]
        _check_scored_run(out, spec, [bid])
        assert summary.correct == 2 and summary.scored == 3
        # the same command again: nothing new is built, sent or answered
        _run(items_file, out, spec)
        assert len(s.creates) == 1 and len(load_results(out)) == 3


def test_gemini_batch_run_scored_as_usual(items_file: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaTEST-not-a-real-key-0123456789")
    with GeminiBatchStandIn(gemini_answer, polls_to_finish=3) as s:
        spec = f"gemini:gemini-2.5-flash@{s.url}"
        out = tmp_path / "run"
        summary, _ = _run(items_file, out, spec, prices={spec: Price(input_per_m=2.0, output_per_m=8.0)})
        assert s.invalid == []
        (create,) = s.creates
        reqs = create["batch"]["inputConfig"]["requests"]["requests"]
        assert [r["metadata"]["key"] for r in reqs] == ["i0", "i1", "i2"]
        gen = reqs[0]["request"]["generationConfig"]
        assert gen["temperature"] == 0 and gen["responseMimeType"] == "application/json"
        assert gen["responseLogprobs"] is True
        (name,) = s.batches
        assert create["batch"]["displayName"] == load_manifest(out).jobs[0].tag
        _check_scored_run(out, spec, [name])
        assert summary.correct == 2


def test_failed_line_is_an_error_and_retry_sends_it_again(items_file: Path, tmp_path: Path) -> None:
    with OpenAIBatchStandIn(openai_answer, polls_to_finish=2, fail={"i1"}) as s:
        spec = f"openai:m@{s.url}"
        out = tmp_path / "run"
        _run(items_file, out, spec)
        rows = load_results(out)
        assert rows["i1"]["status"] == "error" and rows["i1"]["correct"] is None
        assert "batch" in rows["i1"]["error"] and "server had an error" in rows["i1"]["error"]
        assert (rows["i0"]["correct"], rows["i2"]["correct"]) == (True, False)
        (call,) = _trace(out, "i1")["model_calls"]  # the failed line is on the record
        assert call["batch"] and call["errors"] and "batch line failed" in call["errors"][0]
        # a plain rerun sends nothing; --retry error sends the failed item alone, in a new batch
        _run(items_file, out, spec)
        assert len(s.creates) == 1
        s.fail.clear()
        _run(items_file, out, spec, retry_statuses=("error",))
        assert len(s.creates) == 2 and s.invalid == []
        second = s.batches[list(s.batches)[1]]
        assert [r["custom_id"] for r in s.files[second["input_file_id"]]["rows"]] == ["i1"]
        rows = load_results(out)
        assert rows["i1"]["status"] == "answered" and rows["i1"]["correct"] is True


def test_lost_create_reply_is_found_again_not_sent_twice(items_file: Path, tmp_path: Path) -> None:
    """A kill between the create and writing its id: the job (create_sent, no id) is found by its tag."""
    with OpenAIBatchStandIn(openai_answer, polls_to_finish=1) as s:
        spec = f"openai:m@{s.url}"
        out = tmp_path / "run"
        _run(items_file, out, spec)
        data = json.loads((out / BATCH_FILE).read_text())
        bid = data["jobs"][0]["batch_id"]
        data["jobs"][0].update(batch_id=None, state=None, done=False, collected=False)
        assert data["jobs"][0]["create_sent"] is True
        (out / BATCH_FILE).write_text(json.dumps(data))
        (out / "results.jsonl").unlink()
        _run(items_file, out, spec)
        assert len(s.creates) == 1
        assert load_manifest(out).jobs[0].batch_id == bid
        assert len(load_results(out)) == 3


def test_kill_after_submit_then_resume_polls_the_same_batch(items_file: Path, tmp_path: Path) -> None:
    with OpenAIBatchStandIn(openai_answer, polls_to_finish=2) as s:
        s.hold = True  # the batch stays in_progress until the first process is gone
        out = tmp_path / "run"
        cmd = [sys.executable, "-m", "audiomind", "bench", "run", "--task", "items", "--source", str(items_file),
               "--out", str(out), "--mode", "direct", "--frontend", f"openai:m@{s.url}", "--batch",
               "--no-progress"]
        env = {**os.environ, "AUDIOMIND_BATCH_POLL_S": "0.02", "AUDIOMIND_BATCH_POLL_MAX_S": "0.05"}
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                m = load_manifest(out) if (out / BATCH_FILE).exists() else None
                if m and m.jobs and m.jobs[0].batch_id and s.polls.get(m.jobs[0].batch_id, 0) >= 2:
                    break
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
            else:
                pytest.fail("the batch was never submitted")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        assert not (out / "results.jsonl").exists()
        s.hold = False
        done = subprocess.run(cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert len(s.creates) == 1 and sum(f["purpose"] == "batch" for f in s.files.values()) == 1
        assert s.invalid == []
        rows = load_results(out)
        assert {k: r["correct"] for k, r in rows.items()} == {"i0": True, "i1": True, "i2": False}


def test_batch_is_refused_where_it_cannot_apply(items_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--mode direct"):
        check_batch(AgentConfig(mode="agent", frontend="openai:m@http://127.0.0.1:9/v1"))
    with pytest.raises(ValueError, match="openai: or gemini:"):
        check_batch(AgentConfig(mode="direct", frontend="cascade"))
    with pytest.raises(ValueError, match="--ray"):
        check_batch(AgentConfig(mode="direct", frontend="openai:m@http://127.0.0.1:9/v1"), "local")
    done = subprocess.run([sys.executable, "-m", "audiomind", "bench", "run", "--task", "items", "--source",
                           str(items_file), "--out", str(tmp_path / "r"), "--frontend", "openai:m@http://127.0.0.1:9/v1",
                           "--batch", "--no-progress"], check=False, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--mode direct" in done.stderr
    assert not (tmp_path / "r" / BATCH_FILE).exists()


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_failed_create_then_rerun_creates_once(provider: str, items_file: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A create that fails: the run stops with the job kept; the same command looks for it, finds none, and
    creates it (Gemini: its inlined requests built again from the items)."""
    from audiomind.bench.batch import BatchError

    monkeypatch.setenv("GEMINI_API_KEY", "AIzaTEST-not-a-real-key-0123456789")
    standin = OpenAIBatchStandIn(openai_answer) if provider == "openai" else GeminiBatchStandIn(gemini_answer)
    with standin as s:
        spec = f"openai:m@{s.url}" if provider == "openai" else f"gemini:gemini-2.5-flash@{s.url}"
        out = tmp_path / "run"
        s.fail_creates = 1
        with pytest.raises(BatchError, match="rerun the same command"):
            _run(items_file, out, spec)
        job = load_manifest(out).jobs[0]
        assert job.create_sent and job.batch_id is None and not s.batches
        _run(items_file, out, spec)
        assert len(s.creates) == 1 and s.invalid == []
        assert {k: r["correct"] for k, r in load_results(out).items()} == {"i0": True, "i1": True, "i2": False}


def test_jobs_are_split_at_the_provider_limit(items_file: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from audiomind.bench.batch_providers import OpenAIBatch

    monkeypatch.setattr(OpenAIBatch, "max_lines", 2)
    with OpenAIBatchStandIn(openai_answer, polls_to_finish=1) as s:
        out = tmp_path / "run"
        _run(items_file, out, f"openai:m@{s.url}")
        assert [len(s.files[b["input_file_id"]]["rows"]) for b in s.batches.values()] == [2, 1]
        assert [j.item_ids for j in load_manifest(out).jobs] == [["i0", "i1"], ["i2"]]
        assert {k: r["correct"] for k, r in load_results(out).items()} == {"i0": True, "i1": True, "i2": False}


def test_poll_backoff_grows_capped_and_jittered() -> None:
    poll = PollPolicy(first_s=2.0, max_s=60.0)
    for n in range(12):
        cap = min(60.0, 2.0 * 2 ** n)
        delays = {poll.delay(n) for _ in range(20)}
        assert all(cap / 2 <= d <= cap for d in delays)
        assert len(delays) > 1  # jittered


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_a_batch_line_asks_what_the_live_answer_call_asks(provider: str, items_file: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same items answered live (direct mode, one call each) and through the batch: each batch line's
    request is the live request's JSON body, the answers and scores are the same, the cost is half."""
    from audiomind.bench.tasks import run_task

    monkeypatch.setenv("GEMINI_API_KEY", "AIzaTEST-not-a-real-key-0123456789")
    standin = OpenAIBatchStandIn(openai_answer) if provider == "openai" else GeminiBatchStandIn(gemini_answer)
    with standin as s:
        spec = f"openai:m@{s.url}" if provider == "openai" else f"gemini:gemini-2.5-flash@{s.url}"
        prices = {spec: Price(input_per_m=2.0, output_per_m=8.0)}
        task = make_task("items")
        live_dir = tmp_path / "live"
        run_task(task, task.load_items(items_file), live_dir,
                 agent_factory(live_dir, AgentConfig(mode="direct", frontend=spec)), progress=False, prices=prices)
        _run(items_file, tmp_path / "batch", spec, prices=prices)
        assert s.invalid == [] and len(s.live) == 3
        if provider == "openai":
            (batch,) = s.batches.values()
            lines = [r["body"] for r in s.files[batch["input_file_id"]]["rows"]]
        else:
            lines = [r["request"] for r in s.creates[0]["batch"]["inputConfig"]["requests"]["requests"]]
        def question(body: dict) -> str:
            t = prompt_text(body["messages"]) if provider == "openai" else gemini_prompt_text(body)
            return re.search(r"clip \d", t).group(0)

        assert sorted(s.live, key=question) == sorted(lines, key=question)
        live, batch_rows = load_results(live_dir), load_results(tmp_path / "batch")
        for item_id, row in live.items():
            assert (row["prediction"], row["correct"]) == (batch_rows[item_id]["prediction"],
                                                           batch_rows[item_id]["correct"])
            assert batch_rows[item_id]["cost_usd"] == pytest.approx(row["cost_usd"] / 2)
