"""Issue 35's residual items: one display escape for every command (cli_common.one_line is paths.visible),
the bounded reader behind every file `bench mmar-score` and its siblings read, judges with a time budget and
a trace when cancelled, the input copies of `serve` and `mcp` kept bounded, and the batch endpoints against
a dripping and a hanging server."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from typer.testing import CliRunner

from audiomind.cli_common import cell, one_line
from audiomind.paths import markdown_text, visible

HOSTILE_TEXT = ["\x1b[2J", "\x1b]8;;http://evil/\x07link\x1b]8;;\x07", "\x1bP+q\x1b\\", "\x9b31m", "a\rb",
                "x\x00y", "\u202eevil", "line\u2028sep", "tab\there", "two\nlines", "del\x7f"]
RAW = [chr(c) for c in [*range(0x20), *range(0x7f, 0xa0), 0x2028, 0x2029, 0x202e, 0x2066]]


# ---------------------------------------------------------------- 1. one display escape


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_one_line_is_the_one_escape_in_its_one_line_form(text):
    shown = one_line(text)
    assert shown == visible(text, one_line=True)
    assert not any(ch in shown for ch in RAW), repr(shown)
    assert cell(text) == cell(shown)  # escaping twice changes nothing more than once (no raw control left)
    multi = visible(text)
    assert not any(ch in multi for ch in RAW if ch not in "\n\t"), repr(multi)
    assert "\n" not in markdown_text(text)


def test_one_line_names_line_breaks_as_python_does():
    assert one_line("missing\nfile.wav") == "missing\\nfile.wav"
    assert one_line("a\tb\rc") == "a\\tb\\rc"
    assert one_line("\x1b[31m") == "\\x1b[31m" and one_line("\x9b") == "\\x9b" and one_line("\u2028") == "\\u2028"
    assert visible("keep\nlines\tand tabs") == "keep\nlines\tand tabs"


def test_a_models_text_reaches_the_terminal_through_the_one_escape():
    """What a model server wrote (ask's answer and rationale, a judge's reasoning) is shown, never obeyed: the
    commands print it through cli_common.markup (paths.visible, then rich's markup escape)."""
    from types import SimpleNamespace

    from rich.console import Console

    import audiomind.cli as main_cli
    import audiomind.judges.cli as judge_cli
    from audiomind.cli_common import markup

    assert main_cli.escape is markup and judge_cli.escape is markup
    evil = "yes\x1b]0;owned\x07 \x1b[2J\x9b31m [link=http://evil/]x[/link]"
    r = SimpleNamespace(score=0.5, llm_category=2, llm_source=evil, llm_reasoning=evil, hypothesis=evil,
                        entailment=SimpleNamespace(status="skipped", reason=evil))
    console = Console(record=True, force_terminal=True, width=400)
    for line in judge_cli.aura_lines(r):
        console.print(line)
    shown = console.export_text()
    assert "\\x1b]0;owned\\x07" in shown and "\\x9b31m" in shown and "[link=http://evil/]" in shown
    assert not any(ch in shown for ch in RAW if ch != "\n"), repr(shown)


def _prediction_rows(category: str) -> list[dict]:
    return [{"id": f"x{i}", "audio_path": f"./audio/x{i}.wav", "question": "q?", "choices": ["Yes", "No"],
             "answer": "Yes", "modality": "speech", "category": "Semantic Layer", "sub-category": category,
             "answer_prediction": "Yes" if i % 2 else "No"} for i in range(4)]


def test_mmar_score_and_bad_rows_show_escape_sequences_as_text(tmp_path):
    from audiomind.bench.cli import bench_app

    evil = "Sem\x1b]8;;http://evil/\x07antic\x1b]8;;\x07 \x1b[2J\x9b31m[bold]x[/bold]"
    path = tmp_path / "pred\x1b[1A.jsonl"
    rows = [json.dumps(r) for r in _prediction_rows(evil)]
    path.write_text("\n".join([*rows, '{"id": "bad\x1b[2J", "question": 1}']) + "\n", encoding="utf-8")
    res = CliRunner().invoke(bench_app, ["mmar-score", str(path), "--skip-malformed"], terminal_width=300)
    assert res.exit_code == 0, res.output
    out = res.output
    assert not any(ch in out for ch in RAW if ch != "\n"), repr(out)
    assert "\\x1b]8;;http://evil/\\x07" in out and "\\x9b31m" in out and "[bold]x[/bold]" in out


# ---------------------------------------------------------------- 2. every file the CLI reads, bounded


def _hostile_file(tmp_path, kind: str, name: str):
    """A name behind which is a named pipe, /dev/zero (through a symlink) or a sparse file over the input cap."""
    from audiomind.fsutil import MAX_INPUT_BYTES

    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as f:  # sparse: costs no disk, but its size is over the cap
            f.truncate(MAX_INPUT_BYTES + 1)
    return path


def _refused_cleanly(res, *needles: str) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, res.stderr[-3000:]
    text = res.stderr
    assert all(n in text for n in needles), text
    return text


@pytest.mark.parametrize("kind, why", [("fifo", "FIFO"), ("zero", "character device"), ("huge", "more than")])
def test_mmar_score_refuses_a_pipe_a_device_and_a_huge_file_at_once(tmp_path, kind, why):
    from .conftest import cli

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in _prediction_rows("x")) + "\n", encoding="utf-8")
    for args in ([str(_hostile_file(tmp_path, kind, "pred.jsonl"))],
                 [str(good), "--meta", str(_hostile_file(tmp_path, kind, "meta.jsonl"))],
                 [str(_hostile_file(tmp_path, kind, "pred.json"))]):
        t0 = time.monotonic()
        res = cli("bench", "mmar-score", *args, cwd=tmp_path, timeout=60)
        assert time.monotonic() - t0 < 30
        _refused_cleanly(res, why)


def test_mmar_score_replaces_a_pipe_at_its_output_instead_of_blocking(tmp_path):
    from .conftest import cli

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in _prediction_rows("x")) + "\n", encoding="utf-8")
    out = _hostile_file(tmp_path, "fifo", "scores.json")
    res = cli("bench", "mmar-score", str(good), "-o", str(out), cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr[-2000:]
    assert out.is_file() and json.loads(out.read_text())["correct"] == 2


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_the_bench_folders_own_files_are_read_bounded(tmp_path, kind):
    """What `bench rubrics` resumes from, a batch run's manifest and job files, a run's run.json and a probe
    run's traces (bench estimate): each refused (or skipped) by the bounded reader, never read or waited on."""
    from audiomind.bench import batch, estimate, rubrics, runner
    from audiomind.fsutil import InputFileError

    done = _hostile_file(tmp_path, kind, "evaluated.jsonl")
    with pytest.raises(InputFileError):
        rubrics.load_done(done)
    with pytest.raises(InputFileError):
        rubrics.read_predictions(done)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    _hostile_file(run_dir, kind, batch.BATCH_FILE)
    with pytest.raises(InputFileError):
        batch.load_manifest(run_dir)
    with pytest.raises(InputFileError):
        batch._read_lines(_hostile_file(tmp_path, kind, "job.jsonl"), batch.BatchManifest)
    _hostile_file(run_dir, kind, "trace.json")
    assert estimate._calls_of(run_dir, {"trace_path": "trace.json"}) == []
    _hostile_file(run_dir, kind, runner.RUN_FILE)
    runner._record_session(run_dir, {"a": 1}, {"started_at": "now"})  # refused, then replaced (not written into)
    assert json.loads((run_dir / runner.RUN_FILE).read_text())["config"] == {"a": 1}


# ---------------------------------------------------------------- 6. batch endpoints: a dripping and a hanging server

BATCH_TIMEOUT_S = 1.0


def _batch_run(items, out, frontend: str, poll_timeout_s: float | None = None):
    from audiomind.bench.batch import PollPolicy, run_task_batch
    from audiomind.bench.cli import agent_factory
    from audiomind.bench.tasks import make_task
    from audiomind.config import AgentConfig

    task = make_task("items")
    config = AgentConfig(mode="direct", frontend=frontend, timeout_s=BATCH_TIMEOUT_S, max_retries=0)
    poll = PollPolicy(first_s=0.01, max_s=0.05, timeout_s=poll_timeout_s)
    return run_task_batch(task, task.load_items(items), out, agent_factory(out, config), progress=False,
                          poll=poll, say=lambda m: None)


OPENAI_STEPS = {"upload": ("POST", r"/v1/files"), "create": ("POST", r"/v1/batches"),
                "poll": ("GET", r"/v1/batches/[^/]+"), "download": ("GET", r"/v1/files/[^/]+/content")}
GEMINI_STEPS = {"create": ("POST", r"/v1beta/models/[^/:]+:batchGenerateContent"),
                "poll": ("GET", r"/v1beta/batches/[^/]+")}


def _stalled(steps: dict, step: str, how: str):
    import re

    method, pattern = steps[step]
    return lambda m, path: how if m == method and re.fullmatch(pattern, path) else None


def _ends_with_an_error(run, step: str, how: str) -> float:
    from audiomind.bench.batch import BatchError

    t0 = time.monotonic()
    with pytest.raises(BatchError) as info:
        run()
    took = time.monotonic() - t0
    words = {"upload": "uploading", "create": "creating", "poll": "still running", "download": "downloading"}[step]
    assert words in str(info.value), str(info.value)
    # one request's deadline (+ the poll deadline for polling), then out: no hang, whatever the server does
    assert took < 10, f"{step} against a {how} server took {took:.1f} s"
    print(f"{step} {how}: ended in {took:.2f} s with: {str(info.value)[:160]}")
    return took


@pytest.mark.parametrize("how", ["drip", "hang"])
@pytest.mark.parametrize("step", list(OPENAI_STEPS))
def test_openai_batch_steps_end_at_their_deadline_against_a_dripping_or_hanging_server(
        items_file, tmp_path, step, how):
    from audiomind.bench.batch import load_manifest
    from tests.backends.standins.batch_standin import OpenAIBatchStandIn
    from tests.bench.test_batch import openai_answer

    with OpenAIBatchStandIn(openai_answer, polls_to_finish=1) as s:
        s.stall = _stalled(OPENAI_STEPS, step, how)
        out = tmp_path / "run"
        _ends_with_an_error(lambda: _batch_run(items_file, out, f"openai:gpt-audio@{s.url}", poll_timeout_s=2.0),
                            step, how)
        manifest = load_manifest(out)  # where the run stands is on record: the same command resumes there
        assert manifest is not None and len(manifest.jobs) == 1
        if step in ("poll", "download"):
            assert manifest.jobs[0].batch_id and len(s.creates) == 1
        s.stall = None  # the server recovers: the same command finishes the run, one batch created in all
        summary, _ = _batch_run(items_file, out, f"openai:gpt-audio@{s.url}")
        assert summary.scored == 3 and len(s.batches) == 1


@pytest.mark.parametrize("how", ["drip", "hang"])
@pytest.mark.parametrize("step", list(GEMINI_STEPS))
def test_gemini_batch_steps_end_at_their_deadline_against_a_dripping_or_hanging_server(
        items_file, tmp_path, monkeypatch, step, how):
    from tests.backends.standins.batch_standin import GeminiBatchStandIn
    from tests.bench.test_batch import gemini_answer

    monkeypatch.setenv("GEMINI_API_KEY", "AIzaTEST-not-a-real-key-0123456789")
    with GeminiBatchStandIn(gemini_answer, polls_to_finish=1) as s:
        s.stall = _stalled(GEMINI_STEPS, step, how)
        _ends_with_an_error(lambda: _batch_run(items_file, tmp_path / "run", f"gemini:gemini-2.5-flash@{s.url}",
                                               poll_timeout_s=2.0), step, how)


@pytest.fixture
def items_file(tmp_path):
    from tests.bench.test_batch import items_file as make

    return make.__wrapped__(tmp_path)


# ---------------------------------------------------------------- 4 and 5: judges have a time budget and leave a trace


@pytest.fixture
def hanging_tools(monkeypatch):
    """Every tool call hangs (until the test ends): what a tool stuck in a network read or a C loop does. The
    tool-result cache misses (a result cached by an earlier run of the same clip would not hang)."""
    from audiomind.tools.executor import ToolCache, ToolExecutor

    release = threading.Event()
    started: list[str] = []

    def hang(self, call, *args, **kw):
        started.append(call.tool)
        release.wait(300)
        raise RuntimeError("released at the end of the test")

    monkeypatch.setattr(ToolExecutor, "_run_one", hang)
    monkeypatch.setattr(ToolCache, "get", lambda self, key: None)
    yield started
    release.set()


def _one_trace(folder) -> dict:
    traces = sorted(folder.glob("*.json"))
    assert len(traces) == 1, traces
    return json.loads(traces[0].read_text(encoding="utf-8"))


def test_judge_timeout_ends_the_judge_and_writes_its_trace_even_when_every_tool_hangs(tmp_path, hanging_tools):
    from audiomind.cli import app
    from tests.hostile.conftest import write_tone

    tone = write_tone(tmp_path / "tone.wav")
    longer = write_tone(tmp_path / "longer.wav", seconds=1.5)  # an edit that differs: the judge must listen
    timeout = 2.0
    t0 = time.monotonic()
    res = CliRunner().invoke(app, ["judge", "edit", str(tone), str(longer), "--instruction", "make it longer",
                                   "--timeout", str(timeout), "--trace-dir", str(tmp_path / "traces")])
    took = time.monotonic() - t0
    print(f"judge edit --timeout {timeout:g} with every tool hanging: ended in {took:.1f} s (exit {res.exit_code})")
    assert took < timeout + 10, took  # budget --timeout + 4 s, then 3 s to stop
    assert hanging_tools, "no tool was started: the test proves nothing"
    assert res.exit_code in (0, 3) and "Traceback" not in res.output, res.output
    trace = _one_trace(tmp_path / "traces")
    assert trace["run"]["time_budget_s"] == timeout + 4
    calls = trace["tool_calls"]
    ran = [c for c in calls if c["tool"] != "judge_edit"]
    # every hung tool is on record as timed out by the budget, whether the judge then stopped or judged without them
    assert ran and all(c["status"] == "timeout" for c in ran), [(c["tool"], c["status"]) for c in ran]
    assert all("time budget of 6 s" in c["error"] for c in ran if c["error"]), ran
    if res.exit_code == 3:  # stopped: the trace says by what, and the command names it
        assert trace["outcome"]["status"] == "stopped" and trace["outcome"]["bound_hit"] == "time_budget"
        assert calls[-1]["tool"] == "judge_edit" and calls[-1]["status"] == "timeout"
        assert str(tmp_path / "traces") in res.output


def test_a_judge_run_ended_by_an_exception_or_cancelled_leaves_a_trace_of_what_ran(tmp_path):
    """judge_run: the budget is ask's (run_budget: model requests and tool calls see it) and a judge that ends
    by an exception, a cancellation (serve's RunCancelled is a KeyboardInterrupt) or its budget is on record."""
    from audiomind.backends.deadline import BudgetExhausted, current_budget
    from audiomind.judges.base import JudgeSession, judge_run
    from tests.hostile.conftest import write_tone

    tone = write_tone(tmp_path / "tone.wav")
    for exc, status, bound, words in [
            (KeyboardInterrupt("cancelled: the client closed the connection before the answer was ready"),
             "stopped", None, "cancelled: the client closed"),
            (BudgetExhausted("no time left in the run's time budget"), "stopped", "time_budget", "timeout"),
            (RuntimeError("boom"), "failed", None, "RuntimeError: boom")]:
        folder = tmp_path / type(exc).__name__
        with pytest.raises(type(exc)) as info, judge_run(30.0):
            assert current_budget() is not None and current_budget().seconds == 30.0
            session = JudgeSession("test", "a task", [tone], trace_dir=folder)
            session.note("measured something")
            raise exc
        trace = _one_trace(folder)
        assert trace["outcome"] == {"status": status, "reason": trace["outcome"]["reason"], "bound_hit": bound}
        assert words in trace["outcome"]["reason"], trace["outcome"]
        assert any("measured something" in e["claim"] for e in trace["evidence"])
        assert info.value.audiomind_trace_path == str(next(folder.glob("*.json")))
    assert current_budget() is None  # the budget ends with the judge run


def test_a_served_judge_whose_client_leaves_is_cancelled_and_leaves_a_trace(model_server, tmp_path, hanging_tools):
    import httpx

    from audiomind.serve import create_app
    from tests.hostile.conftest import running_app
    from tests.hostile.test_serve_hostile import _settings

    settings = _settings(model_server, tmp_path, agent={"time_budget_s": 4.0})
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as client:
        with pytest.raises(httpx.ReadTimeout), httpx.Client(base_url=url, timeout=1.5) as impatient:
            impatient.post("/v1/judge/edit", data={"original_path": "tone.wav", "edited_path": "tone.wav",
                                                   "instruction": "make it louder"})
        left = time.monotonic()
        while client.get("/healthz").json()["in_flight"] != 0:
            assert time.monotonic() - left < 20, "the judge went on after its client left"
            time.sleep(0.05)
        assert 'audiomind_runs_total{kind="judge_edit",outcome="cancelled"} 1.0' in client.get("/metrics").text
        deadline = time.monotonic() + 15  # the judge's thread stops at its next Python instruction: the budget's end
        while not list((tmp_path / "traces").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"served judge: slot free {time.monotonic() - left:.1f} s after the client left")
    assert hanging_tools
    trace = _one_trace(tmp_path / "traces")
    assert trace["outcome"]["status"] == "stopped", trace["outcome"]
    assert trace["outcome"]["reason"].startswith("cancelled"), trace["outcome"]
    assert trace["tool_calls"][-1]["tool"] == "judge_edit"


# ---------------------------------------------------------------- 3. the input copies of serve and mcp, bounded

DAY = 86400.0


def _aged(path, size: int, age_s: float):
    path.write_bytes(b"\0" * size)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_the_input_folder_keeps_what_runs_use_and_drops_the_old_and_the_least_recently_used(tmp_path):
    from audiomind.limits import InputFolder

    folder = tmp_path / "uploads"
    folder.mkdir()
    kb = 1024
    old = _aged(folder / "old.wav", 10 * kb, 8 * DAY)  # past the age limit
    lru = [_aged(folder / f"lru{i}.wav", 10 * kb, (5 - i) * 3600) for i in range(5)]  # lru0 least recently used
    busy = _aged(folder / "busy.wav", 10 * kb, 9 * DAY)  # a run is reading it: kept whatever its age
    fresh = _aged(folder / "fresh.wav", 10 * kb, 10)  # just copied: a run may be about to read it
    stale_tmp = _aged(folder / ".upload-abc.wav", kb, 2 * 3600)  # a crash's leftover
    live_tmp = _aged(folder / ".snapshot-def.wav", kb, 5)  # being written now
    store = InputFolder(folder, max_bytes=50 * kb, max_age_s=7 * DAY)
    store.use(busy)
    removed, freed = store.prune()
    assert not old.exists() and not stale_tmp.exists()
    assert busy.exists() and fresh.exists() and live_tmp.exists()
    # kept: busy + fresh (20 KB) and the most recently used copies up to 50 KB in all: lru2, lru3, lru4
    assert [p.exists() for p in lru] == [False, False, True, True, True]
    assert (removed, freed) == (4, 10 * kb + kb + 2 * 10 * kb)
    store.done([busy])  # its run ended; used just now (use() marks it), so it stays until it is old again
    assert busy.exists()
    _aged(busy, 10 * kb, 8 * DAY)
    store.prune()
    assert not busy.exists() and fresh.exists()


def test_serve_keeps_the_copy_a_trace_names_and_bounds_its_uploads_folder(model_server, tmp_path):
    import httpx

    from audiomind.serve import create_app
    from tests.hostile.conftest import running_app, write_tone
    from tests.hostile.test_serve_hostile import QUESTION, _settings

    settings = _settings(model_server, tmp_path, inputs_max_mb=0.05, inputs_max_age_h=24)  # 50 KB, a day
    uploads = settings.upload_dir
    uploads.mkdir(parents=True, exist_ok=True)
    old = _aged(uploads / ("0" * 64 + ".wav"), 1000, 3 * DAY)
    lru = [_aged(uploads / (f"{i}" * 64 + ".wav"), 20_000, (9 - i) * 3600) for i in range(1, 4)]
    clip = write_tone(tmp_path / "up.wav", seconds=0.5)  # 16 KB
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert not old.exists()  # the start-up prune: past the age limit
        with clip.open("rb") as f:
            r = client.post("/v1/ask", data=QUESTION, files={"audio": ("up.wav", f, "audio/wav")})
        assert r.status_code == 200, r.text
        r2 = client.post("/v1/ask", data={**QUESTION, "path": "tone.wav"})  # a checked copy of a root's file
        assert r2.status_code == 200, r2.text
    trace = json.loads((tmp_path / "traces" / f"{r.json()['trace_id']}.json").read_text())
    trace2 = json.loads((tmp_path / "traces" / f"{r2.json()['trace_id']}.json").read_text())
    named = [trace["question"]["audio_path"], trace2["question"]["audio_path"]]
    assert all(os.path.dirname(p) == str(uploads) and os.path.isfile(p) for p in named), named  # kept: traces need them
    # after the first run: its 16 KB copy + 3 x 20 KB = 76 KB > 50 KB: the two least recently used copies go
    # (the second run's prune falls within InputFolder.interval_s of the first: skipped)
    assert [p.exists() for p in lru] == [False, False, True], [p.exists() for p in lru]


def test_mcp_bounds_its_input_copies_by_the_same_mechanism(tmp_path):
    from audiomind.tools.mcp_server import ToolServer
    from tests.hostile.conftest import write_tone

    root = tmp_path / "root"
    root.mkdir()
    write_tone(root / "a.wav", seconds=0.5)
    runs = tmp_path / "runs"
    (runs / "inputs").mkdir(parents=True)
    old = _aged(runs / "inputs" / ("0" * 64 + ".wav"), 1000, 3 * DAY)
    server = ToolServer([root], runs_dir=runs, inputs_max_mb=1, inputs_max_age_h=24)
    assert not old.exists()
    out = server.call("loudness", {"audio": "a.wav"})
    from pathlib import Path

    trace = json.loads(Path(out.trace_path).read_text())
    copy = trace["artifacts"][0]["path"]
    assert os.path.dirname(copy) == str(runs / "inputs") and os.path.isfile(copy)
    assert server.inputs._in_use == {}  # the call ended: nothing held


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_load_trace_refuses_a_pipe_a_device_and_a_huge_file(tmp_path, kind):
    """load_trace (the served viewer, `--frontend replay:TRACE`, the judging tasks) reads through the bounded
    reader: a refusal at once, never a hang or gigabytes read."""
    from audiomind.backends.base import BackendError
    from audiomind.backends.recording import load_recording
    from audiomind.fsutil import InputFileError
    from audiomind.trace import load_trace

    path = _hostile_file(tmp_path, kind, "trace.json")
    t0 = time.monotonic()
    with pytest.raises(InputFileError):
        load_trace(path)
    with pytest.raises(BackendError):
        load_recording(path)
    assert time.monotonic() - t0 < 5
