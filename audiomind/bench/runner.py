"""The resumable, concurrent batch runner: many BenchItems through AudioMind agents, one commit per item.

Durability contract (what makes `kill -9` then the same command lose and duplicate nothing):

- Each finished item is committed as (1) its trace, written once, atomically (temp file in the same
  folder, fsync, rename) at its final place `RUN_DIR/traces/<item id>.json` (by the agent itself when it
  runs in a thread here; by the driver from the text a Ray worker sends back, so RUN_DIR need not be on
  shared storage), then (2) one JSON line (an `ItemResult`, naming that trace) appended to
  `RUN_DIR/results.jsonl` with flush + fsync under a lock. A result line therefore never points at a
  trace that is not on disk. (A kill between the two leaves a trace without a line: the item runs again
  on resume and its new trace replaces that one.)
- On start, committed ids are read back and skipped. A kill can only tear the LAST line (appends are
  serialised); that torn tail is cut off before anything new is appended, and its item runs again.
- Items are isolated: whatever one item raises becomes `status="error"` with the message; a missing audio
  file becomes `status="missing_audio"` without calling the agent, and an item refused when it was read
  (`BenchItem.error`: a bad input row, an audio path outside the root) becomes `status="error"` with
  `input_error` set, also without calling the agent. None of these stops the batch.

Concurrency: `workers` threads, each with its own `AudioMind` from `make_agent` (the embedded models are
process-wide singletons behind locks, so threads share one copy of the weights; a process pool would load
them once per process). `ray_address` distributes items to Ray actors instead (one agent per actor, spread
over the cluster's nodes, items dispatched as they free up); the driver still does every commit, so RUN_DIR
need not be on shared storage, and each result records its node and actor (`ItemResult.worker`). An actor
that dies mid-item (its node lost, its process killed) loses only that item's try: the item runs again on
another actor (up to RAY_MAX_ATTEMPTS tries), and a replacement actor starts where the cluster has room.

Relative paths: `ItemResult.trace_path` is relative to RUN_DIR, so a run directory can be moved.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from hashlib import sha1
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.bench.items import BenchItem, ItemResult, WorkerInfo
from audiomind.bench.prices import Price, PriceTable, cost_of
from audiomind.bench.progress import Progress as _Progress
from audiomind.config import apply_process_env
from audiomind.fsutil import StorageError, atomic_write_text, storage_error
from audiomind.prompts import letter_index
from audiomind.trace import dump_trace

RESULTS_FILE = "results.jsonl"
TRACES_DIR = "traces"
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.json"

Scorer = Callable[[BenchItem, ItemResult], "bool | None"]

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}")


# ---------------------------------------------------------------- prices and cost accounting
# audiomind.bench.prices: the price table, a call's cost by token kind, unpriced backends.

# ---------------------------------------------------------------- summaries


class RunSummary(BaseModel):
    """What one `run_batch` call did, and where the run now stands over the items it was given."""

    run_dir: str
    backend: str = Field(description="threads | ray")
    workers: int
    total: int = Field(description="items given")
    already_done: int = Field(description="committed by an earlier session, skipped")
    ran: int = Field(description="committed by this session")
    remaining: int = Field(description="given items still without a result (interrupted run)")
    statuses: dict[str, int] = Field(default_factory=dict, description="over every committed given item")
    scored: int = 0
    correct: int = 0
    accuracy: float | None = None
    wall_time_s: float = 0.0
    items_per_min: float = 0.0
    mean_item_s: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = Field(None, description="USD of every committed item's calls; None when a billed "
                                   "backend had no price (see `unpriced`): unknown, never $0")
    cost_by_role: dict[str, float] = Field(default_factory=dict, description="USD per model role, priced calls")
    unpriced: list[str] = Field(default_factory=list, description="backends with billed tokens and no price: "
                                "the run's cost is unknown")
    cache_hits: int = Field(0, description="model calls answered from the model-call cache (nothing sent)")
    errors: int = Field(0, description="items whose model calls failed (status error): kept out of accuracy")
    error_retry_rounds: int = Field(0, description="end-of-run rounds that ran the errored items again")
    partial: bool = Field(False, description="errors remain: the accuracy covers only the items that ran")
    interrupted: bool = False


# ---------------------------------------------------------------- the on-disk log


def trace_name(item_id: str) -> str:
    """File name of an item's trace: the id itself when it is filesystem-safe, else a safe form + hash."""
    if _SAFE_ID.fullmatch(item_id) and item_id not in (".", ".."):
        return f"{item_id}.json"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", item_id).strip("._")[:100] or "item"
    return f"{safe}-{sha1(item_id.encode()).hexdigest()[:10]}.json"


class ResultLog:
    """RUN_DIR/results.jsonl + RUN_DIR/traces/: append-only, one fsynced line per committed item."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / RESULTS_FILE
        self.traces = self.run_dir / TRACES_DIR
        self._lock = threading.Lock()

    def repair(self) -> int:
        """Cut a torn last line (a kill mid-append) so the next append starts on a fresh line.
        Returns the number of bytes dropped."""
        if not self.path.exists():
            return 0
        with self._lock, open(self.path, "rb+") as f:
            data = f.read()
            if not data or data.endswith(b"\n"):
                return 0
            keep = data.rfind(b"\n") + 1
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
            return len(data) - keep

    def load(self) -> dict[str, dict[str, Any]]:
        """id -> the last committed result line for it; unparsable lines (a torn tail) are ignored."""
        return load_results(self.run_dir)

    def trace_file(self, item_id: str) -> Path:
        """Where an item's trace lives: RUN_DIR/traces/<safe name>.json (absolute)."""
        return (self.traces / trace_name(item_id)).resolve()

    def commit(self, result: ItemResult, trace_text: str | None = None) -> ItemResult:
        """The result line (flush + fsync under the lock), after its trace is on disk: either already
        written by the agent at `result.trace_path` (recorded relative to RUN_DIR), or written here from
        `trace_text` (a Ray worker's), atomically."""
        if trace_text is not None:
            name = trace_name(result.id)
            atomic_write_text(self.traces / name, trace_text)
            result = result.model_copy(update={"trace_path": f"{TRACES_DIR}/{name}"})
        elif result.trace_path:
            result = result.model_copy(update={"trace_path": self._relative(result.trace_path)})
        data = (result.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            try:
                self.run_dir.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            except OSError as exc:
                raise storage_error(exc, self.path) from exc
            try:
                start = os.fstat(fd).st_size
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            except OSError as exc:  # disk full mid-line: cut what was written, so no torn line is left
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
                raise storage_error(exc, self.path) from exc
            finally:
                os.close(fd)
        return result

    def _relative(self, path: str) -> str:
        p = Path(path)
        try:
            return p.resolve().relative_to(self.run_dir.resolve()).as_posix()
        except ValueError:
            return str(p)  # outside RUN_DIR (a caller's choice): kept as given


def load_results(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Committed results of a run directory (last line per id wins), in commit order. Read by the bounded reader
    (audiomind.fsutil): a results.jsonl that is a FIFO, a device or over the size cap is refused (InputFileError,
    a ValueError); a line that is torn, too long, too deep or not an object with an id is skipped
    (`read_results` counts them)."""
    return read_results(run_dir)[0]


def read_results(run_dir: str | Path) -> tuple[dict[str, dict[str, Any]], int]:
    """(`load_results`, how many non-blank lines it skipped)."""
    from audiomind.fsutil import InputFileError, input_lines, loads_json

    path = Path(run_dir) / RESULTS_FILE
    out: dict[str, dict[str, Any]] = {}
    skipped = 0
    if not path.exists():
        return out, skipped
    for _, raw in input_lines(path):
        if not raw or not raw.strip():
            continue
        try:
            row = loads_json(raw.decode("utf-8", errors="replace"))
        except InputFileError:
            skipped += 1
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            out.pop(row["id"], None)
            out[row["id"]] = row
        else:
            skipped += 1
    return out, skipped


# ---------------------------------------------------------------- one item


def default_score(item: BenchItem, result: ItemResult) -> bool | None:
    """Exact-option scoring for benchmarks without their own rule: the prediction equals the answer text
    (case and surrounding space ignored), or the answer is an option letter and the chosen index matches.
    None when the item has no ground truth or produced no answer."""
    if item.answer is None or result.status in ("missing_audio", "error") or result.input_error:
        return None
    pred = (result.prediction or "").strip().casefold()
    gold = item.answer.strip().casefold()
    if pred == gold and pred:
        return True
    idx = letter_index(gold) if item.choices and result.choice_index is not None else None
    if idx is not None and idx < len(item.choices):  # an option letter: A..Z, then AA, AB, ...
        return idx == result.choice_index
    return False


def _stats_from_state(state: Any, prices: PriceTable | None) -> dict[str, Any]:
    """Behaviour and cost numbers of one run, from its EvidenceState (or its trace dict)."""
    if state is None:
        return {}
    d = state if isinstance(state, dict) else state.model_dump(mode="json")
    calls = d.get("tool_calls") or []
    mcs = d.get("model_calls") or []
    tin = sum(int(m.get("input_tokens") or 0) for m in mcs)
    tout = sum(int(m.get("output_tokens") or 0) for m in mcs)
    cost = cost_of(mcs, prices)
    return {
        "tool_calls": sum(1 for c in calls if c.get("issued_by", "planner") == "planner"),
        "frontend_tool_calls": sum(1 for c in calls if c.get("issued_by") == "frontend"),
        "relistens": sum(1 for o in d.get("observations") or [] if o.get("kind") == "relisten"),
        "steps": len(d.get("decisions") or []),
        "model_calls": len(mcs),
        "input_tokens": tin,
        "output_tokens": tout,
        "cost_usd": None if cost.cost_usd is None else round(cost.cost_usd, 8),
        "cost_by_role": cost.by_role,
        "unpriced": cost.unpriced,
        "cache_hits": cost.cache_hits,
        "cached_input_tokens": cost.cached_input_tokens,
        "audio_input_tokens": cost.audio_input_tokens,
        "reasoning_tokens": cost.reasoning_tokens,
    }


def execute_item(agent: Any, item: BenchItem, prices: PriceTable | None = None,
                 trace_path: str | Path | None = None) -> tuple[ItemResult, str | None]:
    """Run one item on one agent and never raise: (result without score, trace JSON text or None).

    With `trace_path` the agent writes the trace there itself, once and atomically (also for a run that
    fails inside the loop); the result names it (`trace_path`, as given) and no text is returned. Without
    it nothing is written: the trace comes back as JSON text for the caller to write (a Ray worker's
    trace travels to the driver this way)."""
    t0 = time.monotonic()
    base: dict[str, Any] = {"id": item.id, "benchmark": item.benchmark, "answer": item.answer,
                            "metadata": item.metadata,
                            "started_at": datetime.now(UTC).isoformat(timespec="milliseconds")}
    if item.error is not None:  # refused when read (bad row, audio path outside the root): never asked
        return ItemResult(**base, status="error", error=item.error, input_error=True), None
    for p in [item.audio_path, *item.extra_audio]:
        if not Path(p).is_file():
            return ItemResult(**base, status="missing_audio", error=f"audio file not found: {p}",
                              wall_time_s=round(time.monotonic() - t0, 3)), None
    write = trace_path is not None
    fields: dict[str, Any] = {}
    state: Any = None  # the run's EvidenceState: from the answer, or carried by the exception of a failed run
    try:
        more = {"extra_audio": list(item.extra_audio)} if item.extra_audio else {}  # every clip reaches the agent
        r = agent.ask(item.audio_path, item.question, item.choices or None, item_id=item.id,
                      ground_truth=item.answer, metadata=item.metadata, write=write, trace_path=trace_path, **more)
        fields = {"status": r.outcome.status, "prediction": r.answer or None, "choice_index": r.choice_index,
                  "rationale": r.rationale or "", "confidence": r.confidence,
                  "confidence_reason": r.confidence_reason or "",
                  "confidence_source": r.state.final_answer.confidence_source
                  if r.state is not None and r.state.final_answer is not None else None,
                  "error": r.outcome.reason if r.outcome.status != "answered" and r.outcome.reason else None}
        state = r.state
    except StorageError:
        raise  # the run directory refuses writes (disk full, read-only): no item could be committed, so stop
    except Exception as exc:  # noqa: BLE001 - isolation: one item never stops the batch
        fields = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:2000], "error_kind": _error_kind(exc)}
        state = getattr(exc, "audiomind_state", None)  # None: it failed before the loop (no trace)
    trace_text = None
    if state is not None:
        if write:
            fields["trace_path"] = str(trace_path)
        else:
            trace_text = dump_trace(state)
    stats = _stats_from_state(state, prices)
    result = ItemResult(**base, **fields, **stats, wall_time_s=round(time.monotonic() - t0, 3))
    return result, trace_text


def _error_kind(exc: BaseException) -> str:
    """model: the item's model calls failed (worth asking again later); time_budget: its run's budget ran out;
    input: its audio or question was refused; other: anything else (a bug, recorded as it is)."""
    from audiomind.audio import AudioError
    from audiomind.backends.base import BackendError
    from audiomind.backends.deadline import BudgetExhausted

    if isinstance(exc, BudgetExhausted):
        return "time_budget"
    if isinstance(exc, BackendError):
        return "model"
    if isinstance(exc, (AudioError, ValueError)):
        return "input"
    return "other"


UNSCORED_STATUSES = frozenset({"error", "missing_audio"})
"""Statuses that never get a verdict, whatever the task's scorer says: the item's model calls failed (an API
error is not a wrong answer) or its audio was missing."""


def _scored(item: BenchItem, result: ItemResult, score: Scorer | None) -> ItemResult:
    if result.status in UNSCORED_STATUSES or result.input_error:
        return result.model_copy(update={"correct": None})
    try:
        correct = (score or default_score)(item, result)
    except Exception as exc:  # noqa: BLE001 - a scorer bug must not lose the result
        return result.model_copy(update={"correct": None, "score_error": f"{type(exc).__name__}: {exc}"})
    return result.model_copy(update={"correct": correct})


# ---------------------------------------------------------------- progress


# ---------------------------------------------------------------- the batch


def run_batch(
    items: list[BenchItem],
    run_dir: Path,
    make_agent: Callable[[], Any],
    workers: int = 1,
    ray_address: str | None = None,
    progress: bool = True,
    *,
    prices: PriceTable | None = None,
    score: Scorer | None = None,
    retry_statuses: Collection[str] = (),
    config: dict[str, Any] | None = None,
    on_result: Callable[[ItemResult], None] | None = None,
    error_retries: int = 1,
) -> RunSummary:
    """Run `items` through agents made by `make_agent`, committing each result as it finishes; resumable.

    items: BenchItems with unique ids; `audio_path` (and `extra_audio`) must be paths that exist here (or on
        the Ray workers), else the item is committed as `missing_audio`.
    run_dir: RUN_DIR, created if needed: results.jsonl, traces/<id>.json, run.json, summary.json.
    make_agent: zero-argument factory of an `AudioMind` (called once per worker thread or Ray actor; with
        Ray it must be picklable, e.g. `functools.partial(AudioMind, AgentConfig(planner=..., frontend=...))`).
    workers: worker threads (or Ray actors) answering concurrently.
    ray_address: None for threads; "local" to start a local Ray instance; an existing cluster by its head's
        "HOST:PORT" (GCS, from a node of the cluster), "auto" (the cluster this machine is in, or RAY_ADDRESS)
        or "ray://HOST:10001" (Ray Client). When Ray is already initialised in this process, that instance is
        used as is (and left running). Audio paths must exist on every node that may run an item.
    progress: show a rich progress bar on stderr.
    prices: optional price table (see `PriceTable`) for `cost_usd`.
    score: `(item, result) -> True/False/None`, stored as `ItemResult.correct`; default `default_score`.
    retry_statuses: committed statuses to run again (e.g. {"error"}); their new line supersedes the old.
    config: what produced this run (planner, front end, ...), recorded in run.json.
    on_result: called in the driver after each commit.
    error_retries: rounds, at the end of the run, that run again the items committed as `error` (their model
        calls failed: a rate-limit storm, a server down for a while); each round's new line supersedes.

    Items committed earlier are skipped. Ctrl-C stops dispatching; what finished is kept.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    ids = [it.id for it in items]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    if dup:
        raise ValueError(f"item ids must be unique; repeated: {', '.join(dup[:5])}")
    if workers < 1:
        raise ValueError("workers must be >= 1")

    lock = _lock_run_dir(run_dir)
    try:
        return _run_locked(items, run_dir, make_agent, workers, ray_address, progress, prices, score,
                           retry_statuses, config, on_result, error_retries)
    finally:
        lock.close()


def _lock_run_dir(run_dir: Path) -> Any:
    """An exclusive lock on RUN_DIR/.lock: two runners on one directory would duplicate items. The OS
    drops the lock when its process dies, so a `kill -9` never leaves a stale lock behind."""
    f = open(run_dir / ".lock", "a+")  # noqa: SIM115 - held for the whole run
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, as before
        return f
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        f.close()
        raise RuntimeError(f"another run is already writing to {run_dir} (lock held on {run_dir / '.lock'})") from exc
    return f


def _run_locked(items: list[BenchItem], run_dir: Path, make_agent: Callable[[], Any], workers: int,
                ray_address: str | None, progress: bool, prices: PriceTable | None, score: Scorer | None,
                retry_statuses: Collection[str], config: dict[str, Any] | None,
                on_result: Callable[[ItemResult], None] | None, error_retries: int = 1) -> RunSummary:
    log = ResultLog(run_dir)
    log.repair()
    committed = log.load()
    retry = set(retry_statuses)
    todo = [it for it in items if it.id not in committed or committed[it.id].get("status") in retry]
    already = len(items) - len(todo)
    backend = "ray" if ray_address else "threads"
    session = {"started_at": datetime.now(UTC).isoformat(timespec="seconds"), "backend": backend,
               "workers": workers, "items": len(items), "to_run": len(todo)}
    _record_session(run_dir, config, session)

    bar = _Progress(progress, len(items), already, run_dir.name or "run", bool(prices))
    by_id = {it.id: it for it in items}
    ran = 0
    interrupted = False
    t0 = time.monotonic()

    def commit(result: ItemResult, trace_text: str | None) -> None:
        nonlocal ran
        result = _scored(by_id[result.id], result, score)
        result = log.commit(result, trace_text)
        ran += 1
        bar.update(result)
        if on_result is not None:
            on_result(result)

    def run(batch: list[BenchItem]) -> None:
        if ray_address:
            _run_ray(batch, make_agent, workers, ray_address, prices, commit)
        else:
            _run_threads(batch, make_agent, workers, prices, commit, log.trace_file)

    rounds = 0
    try:
        if todo:
            run(todo)
        for _ in range(max(0, error_retries)):  # API failures are not answers: ask those items again
            rows = log.load()
            again = [it for it in todo if (rows.get(it.id) or {}).get("error_kind") == "model"]
            if not again:
                break
            rounds += 1
            bar.note(f"running {len(again)} errored item(s) again (round {rounds} of {error_retries})", len(again))
            run(again)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
    wall = time.monotonic() - t0

    summary = summarize(run_dir, items, backend=backend, workers=workers, already=already, ran=ran,
                        wall_time_s=wall, interrupted=interrupted)
    summary.error_retry_rounds = rounds
    session.update(finished_at=datetime.now(UTC).isoformat(timespec="seconds"), ran=ran,
                   wall_time_s=round(wall, 3), interrupted=interrupted)
    _record_session(run_dir, config, session)
    atomic_write_text(run_dir / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    if interrupted:
        raise KeyboardInterrupt
    return summary


def summarize(run_dir: Path, items: Iterable[BenchItem] | None = None, *, backend: str = "threads",
              workers: int = 1, already: int = 0, ran: int = 0, wall_time_s: float = 0.0,
              interrupted: bool = False) -> RunSummary:
    """Where a run directory stands over `items` (all committed ids when None)."""
    rows = load_results(run_dir)
    wanted = [it.id for it in items] if items is not None else list(rows)
    got = [rows[i] for i in wanted if i in rows]
    scored = [r for r in got if r.get("correct") is not None]
    correct = sum(1 for r in scored if r.get("correct"))
    times = [float(r.get("wall_time_s") or 0) for r in got if r.get("status") != "missing_audio"]
    unpriced = sorted({b for r in got for b in r.get("unpriced") or []})
    by_role: dict[str, float] = {}
    for r in got:
        for role, usd in (r.get("cost_by_role") or {}).items():
            by_role[role] = round(by_role.get(role, 0.0) + float(usd), 10)
    errors = sum(1 for r in got if r.get("status") == "error" and not r.get("input_error"))
    cost = None if unpriced else round(sum(by_role.values()), 8)
    return RunSummary(
        run_dir=str(run_dir), backend=backend, workers=workers, total=len(wanted), already_done=already,
        ran=ran, remaining=len(wanted) - len(got), statuses=dict(Counter(r.get("status", "?") for r in got)),
        scored=len(scored), correct=correct, accuracy=(correct / len(scored)) if scored else None,
        wall_time_s=round(wall_time_s, 3), items_per_min=round(60.0 * ran / wall_time_s, 3) if wall_time_s > 0 else 0.0,
        mean_item_s=round(statistics.fmean(times), 3) if times else None,
        input_tokens=sum(int(r.get("input_tokens") or 0) for r in got),
        output_tokens=sum(int(r.get("output_tokens") or 0) for r in got),
        cost_usd=cost, cost_by_role=by_role, unpriced=unpriced,
        cache_hits=sum(int(r.get("cache_hits") or 0) for r in got), errors=errors, partial=errors > 0,
        interrupted=interrupted,
    )


def _record_session(run_dir: Path, config: dict[str, Any] | None, session: dict[str, Any]) -> None:
    """run.json: the config of the first session (later differing configs are kept too) and every session."""
    path = run_dir / RUN_FILE
    try:
        from audiomind.fsutil import load_json_file

        data = load_json_file(path) if path.exists() else {}  # bounded (no FIFO, device or huge file)
    except ValueError:  # not JSON, or refused (InputFileError): the sessions start again
        data = {}
    if not isinstance(data, dict):
        data = {}
    data.setdefault("created_at", session["started_at"])
    if config is not None:
        if "config" not in data:
            data["config"] = config
        elif data["config"] != config:
            session["config"] = config  # a resume with other settings: on the record, not refused
    sessions = data.setdefault("sessions", [])
    if sessions and sessions[-1].get("started_at") == session["started_at"] and "finished_at" not in sessions[-1]:
        sessions[-1] = dict(session)
    else:
        sessions.append(dict(session))
    atomic_write_text(path, json.dumps(data, indent=2, default=str) + "\n")


# ---------------------------------------------------------------- executors


def _run_threads(todo: list[BenchItem], make_agent: Callable[[], Any], workers: int,
                 prices: PriceTable | None, commit: Callable[[ItemResult, str | None], None],
                 trace_file: Callable[[str], Path]) -> None:
    """Thread pool; agents are pooled (one per concurrently running item), made on first need. Each agent
    writes its item's trace straight to RUN_DIR/traces/ (`trace_file`)."""
    agents: queue.SimpleQueue = queue.SimpleQueue()

    def task(item: BenchItem) -> tuple[ItemResult, str | None]:
        try:
            agent = agents.get_nowait()
        except queue.Empty:
            try:
                agent = make_agent()
            except Exception as exc:  # noqa: BLE001 - a factory failure is this item's error
                return ItemResult(id=item.id, benchmark=item.benchmark, answer=item.answer, metadata=item.metadata,
                                  status="error", error=f"agent construction failed: {type(exc).__name__}: {exc}"), None
        try:
            return execute_item(agent, item, prices, trace_path=trace_file(item.id))
        finally:
            agents.put(agent)

    pool = ThreadPoolExecutor(max_workers=min(workers, len(todo)), thread_name_prefix="bench")
    pending: set[Future] = set()
    it = iter(todo)
    finished = False
    try:
        for item in it:  # keep at most `workers` items in flight so Ctrl-C leaves little running
            pending.add(pool.submit(task, item))
            if len(pending) >= workers:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                commit(*fut.result())
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(task, nxt))
        finished = True
    finally:
        # On Ctrl-C do not wait: items still running are simply not committed and run again on resume.
        pool.shutdown(wait=finished, cancel_futures=True)
        _close_agents(agents)


def _close_agents(agents: queue.SimpleQueue) -> None:
    """Each pooled agent releases what its front end holds at the provider (uploaded files)."""
    while True:
        try:
            agent = agents.get_nowait()
        except queue.Empty:
            return
        closer = getattr(agent, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                closer()


RAY_MAX_ATTEMPTS = 3
"""Tries per item on Ray: a try whose worker dies under it (its node lost, the actor process killed) is run
again on another worker; after this many such losses the item is committed as an error."""
RAY_START_TIMEOUT_S = 300.0
"""How long a Ray run waits for a worker to start when none is running (e.g. the only node with free CPUs
was lost): past it the run stops with an error, the committed items kept for a resume."""


def _ray_worker_class(ray: Any) -> Any:
    @ray.remote(max_restarts=0)
    class BenchWorker:
        """One agent per actor, made on the first item; models load once per actor process."""

        def __init__(self, make_agent: Callable[[], Any], prices: dict[str, dict] | None):
            apply_process_env(quiet=True)  # an actor process: OpenMP, hub and tqdm variables before models load
            self.make_agent = make_agent
            self.prices = {k: Price(**v) for k, v in prices.items()} if prices else None
            self.agent = None

        def where(self) -> str:
            """This worker's node and process (a WorkerInfo as JSON); answering it also says the actor is up."""
            import socket

            ctx = ray.get_runtime_context()
            return WorkerInfo(node_id=ctx.get_node_id(), node_ip=ray.util.get_node_ip_address(),
                              hostname=socket.gethostname(), pid=os.getpid(),
                              actor_id=ctx.get_actor_id() or "").model_dump_json()

        def run(self, item_json: str) -> tuple[str, str | None]:
            item = BenchItem.model_validate_json(item_json)
            if self.agent is None:
                try:
                    self.agent = self.make_agent()
                except Exception as exc:  # noqa: BLE001
                    r = ItemResult(id=item.id, benchmark=item.benchmark, answer=item.answer, metadata=item.metadata,
                                   status="error", error=f"agent construction failed: {type(exc).__name__}: {exc}")
                    return r.model_dump_json(), None
            result, trace = execute_item(self.agent, item, self.prices)
            return result.model_dump_json(), trace

    return BenchWorker


class _Slot:
    """One Ray actor of a run: its handle, and where it runs once it has answered `where`."""

    def __init__(self, handle: Any):
        self.handle = handle
        self.info: WorkerInfo | None = None


def _run_ray(todo: list[BenchItem], make_agent: Callable[[], Any], workers: int, ray_address: str,
             prices: PriceTable | None, commit: Callable[[ItemResult, str | None], None]) -> None:
    """Items to `workers` Ray actors (spread over the cluster's nodes), each fed its next item as soon as it
    returns one. A worker that dies (with its node, or killed) loses only its in-flight item: that item goes
    back to the front of the queue for a surviving or replacement worker (up to RAY_MAX_ATTEMPTS tries), and
    a replacement actor is started wherever the cluster has room. Only the driver commits, once per item."""
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("--ray needs the `ray` package (pip install 'ray>=2.9')") from exc
    started = False
    if not ray.is_initialized():
        if ray_address == "local":
            ray.init(num_cpus=max(workers, os.cpu_count() or 1), include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=ray_address, log_to_driver=False, configure_logging=False)
        started = True
    slots: list[_Slot] = []
    try:
        _RayPool(ray, todo, make_agent, workers, prices, commit, slots).run()
    finally:
        for slot in slots:  # also replacements still waiting for room: their creation is cancelled
            with contextlib.suppress(Exception):
                ray.kill(slot.handle)
        if started:
            ray.shutdown()


class _RayPool:
    """The driver's loop over the Ray actors: start them, feed each its next item, commit what returns, and
    put an item lost with its worker back in the queue (a replacement worker is started)."""

    def __init__(self, ray: Any, todo: list[BenchItem], make_agent: Callable[[], Any], workers: int,
                 prices: PriceTable | None, commit: Callable[[ItemResult, str | None], None], slots: list[_Slot]):
        self.ray = ray
        self.make_agent = make_agent
        self.commit = commit
        self.slots = slots  # every actor started, for the caller to kill at the end
        self.worker_class = _ray_worker_class(ray)
        self.price_dump = {k: v.model_dump() for k, v in prices.items()} if prices else None
        cpus = int(ray.cluster_resources().get("CPU", 0) or 0)
        self.n = max(1, min(workers, len(todo), cpus or workers))  # an actor beyond the cluster's CPUs would never start
        self.pending = list(reversed(todo))  # next item last; a lost item is pushed back to run next
        self.inflight: dict[Any, tuple[_Slot, BenchItem]] = {}
        self.starting: dict[Any, _Slot] = {}  # `where` calls of actors not yet known to be up
        self.idle: list[_Slot] = []
        self.lost: dict[str, list[str]] = {}  # item id -> why its earlier tries were lost
        self.failed_starts = 0
        self.last_loss = ""

    def start_actor(self) -> None:
        slot = _Slot(self.worker_class.options(num_cpus=1, scheduling_strategy="SPREAD").remote(
            self.make_agent, self.price_dump))
        self.slots.append(slot)
        self.starting[slot.handle.where.remote()] = slot

    def retire(self, slot: _Slot) -> None:
        with contextlib.suppress(Exception):
            self.ray.kill(slot.handle)
        if slot in self.slots:
            self.slots.remove(slot)

    def dispatch(self) -> None:
        while self.idle and self.pending:
            slot, item = self.idle.pop(), self.pending.pop()
            self.inflight[slot.handle.run.remote(item.model_dump_json())] = (slot, item)

    def where(self, slot: _Slot | None, item: BenchItem) -> WorkerInfo | None:
        if slot is None or slot.info is None:
            return None
        tries = self.lost.get(item.id, [])
        return slot.info.model_copy(update={"attempt": len(tries) + 1, "lost": list(tries)})

    def run(self) -> None:
        for _ in range(self.n):
            self.start_actor()
        waiting_since = time.monotonic()
        while self.pending or self.inflight:
            if self.inflight or self.idle:
                waiting_since = time.monotonic()  # the start timeout counts only while nothing can run
            refs = [*self.inflight, *self.starting]
            if not refs:
                raise RuntimeError(f"no Ray worker is left to run the {len(self.pending)} remaining item(s) "
                                   f"({self.last_loss}); committed items are kept: rerun the same command to resume")
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=5.0)
            if not ready:
                if time.monotonic() - waiting_since < RAY_START_TIMEOUT_S:
                    continue
                raise RuntimeError(f"no Ray worker started within {RAY_START_TIMEOUT_S:.0f} s for the "
                                   f"{len(self.pending)} remaining item(s) (does the cluster have a free CPU?); "
                                   "committed items are kept: rerun the same command to resume")
            if ready[0] in self.starting:
                self.actor_up(ready[0])
            else:
                self.item_back(ready[0])
            self.dispatch()

    def actor_up(self, ref: Any) -> None:
        """An actor's `where` call returned: it is idle now, or it never came up and is replaced."""
        slot = self.starting.pop(ref)
        try:
            slot.info = WorkerInfo.model_validate_json(self.ray.get(ref))
            self.idle.append(slot)
        except self.ray.exceptions.RayError as exc:  # it never came up (node lost while placing it, ...)
            self.failed_starts += 1
            self.last_loss = f"a worker failed to start: {type(exc).__name__}: {str(exc)[:300]}"
            self.retire(slot)
            if self.failed_starts <= self.n + RAY_MAX_ATTEMPTS:
                self.start_actor()

    def item_back(self, ref: Any) -> None:
        """An item's run returned: commit its result; a worker that died under it is replaced and the item
        runs again (at most RAY_MAX_ATTEMPTS times, then it is committed as an error)."""
        exceptions = self.ray.exceptions
        slot, item = self.inflight.pop(ref)
        try:
            res_json, trace = self.ray.get(ref)
            result = ItemResult.model_validate_json(res_json)
            self.commit(result.model_copy(update={"worker": self.where(slot, item)}), trace)
            self.idle.append(slot)
        except (exceptions.RayActorError, exceptions.ObjectLostError, exceptions.NodeDiedError,
                exceptions.WorkerCrashedError) as exc:
            # The worker died under the item (or its answer was lost with its node): the item never
            # reached the log, so it simply runs again elsewhere; the dead actor is replaced.
            node = slot.info.node_id if slot.info else "?"
            self.last_loss = f"node {node}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            tries = self.lost.setdefault(item.id, [])
            tries.append(self.last_loss)
            self.retire(slot)
            if len(tries) < RAY_MAX_ATTEMPTS:
                self.pending.append(item)
            else:
                self.commit(ItemResult(id=item.id, benchmark=item.benchmark, answer=item.answer,
                                       metadata=item.metadata, status="error", worker=self.where(slot, item),
                                       error=f"ray worker died {len(tries)} times running this item; last: "
                                             f"{self.last_loss}"[:2000]), None)
            self.start_actor()
        except exceptions.RayError as exc:
            self.commit(ItemResult(id=item.id, benchmark=item.benchmark, answer=item.answer, metadata=item.metadata,
                                   status="error", worker=self.where(slot, item),
                                   error=f"ray: {type(exc).__name__}: {str(exc)[:500]}"), None)
            self.idle.append(slot)
