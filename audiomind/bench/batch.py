"""Batch at half price for one-call-per-item runs: `audiomind bench run --mode direct --batch ...`.

In direct mode a model front end answers each item in one call, so a whole run can go through the
provider's batch API (OpenAI's Batch API, Gemini's batch mode) at the batch price:

1. Build: each item still to run goes through the direct graph with a capture front end
   (audiomind.backends.frontends.batch_replay): the graph renders the answer prompt as usual, and the real front
   end's own request building makes the request (OpenAIFrontEnd.build_messages, GeminiFrontEnd.build_contents);
   the request is kept instead of sent. Requests are packed into jobs under the provider's size limits.
2. Submit: each job is written down before anything is sent (RUN_DIR/batch.json, atomically), its input file
   (OpenAI) uploaded, then the batch created; its id is written at once. A create whose reply was lost (a
   kill -9 at that moment) is found again by the job's tag (`create_sent` is written before the create), so
   the same command never submits a job twice.
3. Poll: every unfinished batch, with exponential backoff (capped, jittered), until it has ended. A kill (or
   Ctrl-C) and the same command resume polling the same batches.
4. Collect: the replies (OpenAI output and error files, Gemini inlined responses), one BatchReply per line,
   kept in RUN_DIR/batch/job-NNN.replies.jsonl.
5. Score: the usual batch runner (audiomind.bench.runner) runs every item through the direct graph with a
   front end that answers from its batch reply: format check, trace, results.jsonl and the task's scorer
   as in any run. The trace's ModelCall says `batch=True` (priced at the batch share, half by default), with
   the usage the batch line reported and the batch and line ids. An item whose line failed is an `error`.

Files: RUN_DIR/batch.json (the jobs and their state), RUN_DIR/batch/job-NNN.input.jsonl (OpenAI's upload),
job-NNN.requests.jsonl (each request as the trace records it, audio by hash), job-NNN.replies.jsonl.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
import uuid
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from audiomind.backends.base import AnswerRequest, BackendError
from audiomind.backends.frontends.batch_replay import (
    BatchReplayFrontEnd,
    BatchReply,
    BatchRequest,
    Captured,
    CaptureFrontEnd,
)
from audiomind.backends.retry import backoff_delay
from audiomind.bench.batch_providers import BatchJob, BatchProvider, make_provider
from audiomind.bench.items import BenchItem
from audiomind.bench.prices import PriceTable
from audiomind.bench.runner import RunSummary, _lock_run_dir, load_results
from audiomind.config import AgentConfig
from audiomind.fsutil import atomic_path, atomic_write_text

BATCH_FILE = "batch.json"
BATCH_DIR = "batch"
BATCH_KINDS = ("openai", "gemini")

Say = Callable[[str], None]
MAX_POLL_FAILURES = 10
"""Poll rounds in a row whose status request failed (after its retries) before the wait gives up."""


class BatchError(RuntimeError):
    """A batch step failed; batch.json keeps where the run stands, and the same command resumes there."""


class PollPolicy(BaseModel):
    """How often a batch is polled: exponential backoff from `first_s` up to `max_s` (equal jitter)."""

    first_s: float = Field(10.0, gt=0)
    max_s: float = Field(300.0, gt=0)
    timeout_s: float | None = Field(None, description="give up polling after this long (None: until it ends; a "
                                    "rerun of the same command resumes)")

    @classmethod
    def from_env(cls) -> PollPolicy:
        """The defaults, or Settings.batch_poll_s / batch_poll_max_s (AUDIOMIND_BATCH_POLL_S / _MAX_S)."""
        from audiomind.config import settings

        st = settings()
        given = {"first_s": st.batch_poll_s, "max_s": st.batch_poll_max_s}
        return cls(**{k: v for k, v in given.items() if v is not None})

    def delay(self, n: int) -> float:
        """Seconds before poll round n+1 (n counts from 0)."""
        return backoff_delay(n + 1, self.first_s, max(self.first_s, self.max_s))


class BatchManifest(BaseModel):
    """RUN_DIR/batch.json: the run's batches, each written before it is sent and updated as it goes."""

    version: int = 1
    provider: str
    frontend: str
    created_at: str
    jobs: list[BatchJob] = Field(default_factory=list)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def check_batch(config: AgentConfig, ray_address: str | None = None, task: Any = None) -> None:
    """ValueError unless a run can go through a batch API: direct mode, an openai: or gemini: front end,
    threads (not Ray), an agent task (not a judge task)."""
    from audiomind.backends.registry import parse_spec

    if config.mode != "direct":
        raise ValueError("--batch sends each item's one answer call as a batch line: it needs --mode direct "
                         f"(this run is --mode {config.mode})")
    kind = parse_spec(config.frontend).kind
    if kind not in BATCH_KINDS:
        raise ValueError(f"--batch needs an openai: or gemini: front end with a batch API, not {config.frontend!r}")
    if ray_address:
        raise ValueError("--batch runs its one batch from here: drop --ray")
    if task is not None and hasattr(task, "agent_factory"):
        raise ValueError(f"--batch answers agent tasks; the {getattr(task, 'name', '?')} task runs a judge")


# ---------------------------------------------------------------- the run folder's batch files


def load_manifest(run_dir: Path) -> BatchManifest | None:
    path = run_dir / BATCH_FILE
    if not path.exists():
        return None
    from audiomind.fsutil import read_input_text

    return BatchManifest.model_validate_json(read_input_text(path))  # bounded: no FIFO, device or huge file


def save_manifest(run_dir: Path, manifest: BatchManifest) -> None:
    atomic_write_text(run_dir / BATCH_FILE, manifest.model_dump_json(indent=2) + "\n")


def _job_file(run_dir: Path, job: BatchJob, what: str) -> Path:
    return run_dir / BATCH_DIR / f"job-{job.index:03d}.{what}.jsonl"


def _read_lines(path: Path, model: type[BaseModel]) -> list[Any]:
    if not path.exists():
        return []
    from audiomind.fsutil import InputFileError, input_lines

    out = []
    for n, raw in input_lines(path):  # bounded, streamed
        if raw is None:
            raise InputFileError(f"{path.name}:{n}: a line longer than the row cap", path)
        if raw.strip():
            out.append(model.model_validate_json(raw))
    return out


def job_requests(run_dir: Path, job: BatchJob) -> list[BatchRequest]:
    return cast(list[BatchRequest], _read_lines(_job_file(run_dir, job, "requests"), BatchRequest))


def job_replies(run_dir: Path, job: BatchJob) -> list[BatchReply]:
    return cast(list[BatchReply], _read_lines(_job_file(run_dir, job, "replies"), BatchReply))


# ---------------------------------------------------------------- building requests


class _Capture:
    """Items' answer requests, built by the direct graph with the capture front end (made on first use)."""

    def __init__(self, config: AgentConfig, provider: BatchProvider):
        self.config = config
        self.provider = provider
        self.agent: Any = None
        self.failures: list[str] = []

    def request(self, item: BenchItem) -> tuple[BatchRequest, Any] | None:
        """(request, payload) of an item; None when its run fails before the answer call (the scoring run
        meets the same failure and records it)."""
        if self.agent is None:
            from audiomind.api import AudioMind

            self.agent = AudioMind(self.config, frontend=CaptureFrontEnd(self.provider.frontend, self._prepare))
        more = {"extra_audio": list(item.extra_audio)} if item.extra_audio else {}
        try:  # the arguments the batch runner's execute_item gives, so the graph renders the same prompt
            self.agent.ask(item.audio_path, item.question, item.choices or None, item_id=item.id,
                           ground_truth=item.answer, metadata=item.metadata, write=False, **more)
        except Captured as c:
            return c.request.model_copy(update={"custom_id": item.id}), c.payload
        except Exception as exc:  # noqa: BLE001 - this item is left out; the scoring run records its error
            self.failures.append(f"{item.id}: {type(exc).__name__}: {str(exc)[:300]}")
        return None

    def _prepare(self, request: AnswerRequest) -> tuple[BatchRequest, Any]:
        return self.provider.prepare(request)


def _sendable(item: BenchItem) -> bool:
    return item.error is None and all(Path(p).is_file() for p in [item.audio_path, *item.extra_audio])


def items_to_send(items: list[BenchItem], run_dir: Path, manifest: BatchManifest,
                  retry_statuses: Collection[str] = ()) -> list[BenchItem]:
    """The items no batch holds yet: not committed (or committed with a status to retry) and in no job, or
    retried after every job that held them failed to answer them."""
    committed = load_results(run_dir)
    in_job: set[str] = set()
    answered: set[str] = set()
    open_ids: set[str] = set()
    for job in manifest.jobs:
        in_job.update(job.item_ids)
        if not job.collected:
            open_ids.update(job.item_ids)
        answered.update(r.custom_id for r in job_replies(run_dir, job) if r.ok)
    out = []
    for it in items:
        row = committed.get(it.id)
        retrying = row is not None and row.get("status") in retry_statuses
        if not _sendable(it) or (row is not None and not retrying):
            continue
        if it.id not in in_job or (retrying and it.id not in answered and it.id not in open_ids):
            out.append(it)
    return out


# ---------------------------------------------------------------- submitting


def _write_job_files(run_dir: Path, job: BatchJob, provider: BatchProvider, reqs: list[BatchRequest],
                     payloads: dict[str, Any]) -> None:
    atomic_write_text(_job_file(run_dir, job, "requests"), "".join(r.model_dump_json() + "\n" for r in reqs))
    if provider.needs_upload:
        path = _job_file(run_dir, job, "input")
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
            f.writelines(provider.line(r.custom_id, payloads[r.custom_id]) + "\n" for r in reqs)
        job.input_file = path.relative_to(run_dir).as_posix()


def submit_job(run_dir: Path, manifest: BatchManifest, provider: BatchProvider, job: BatchJob,
               payloads: dict[str, Any] | None, rebuild: Callable[[list[str]], dict[str, Any]], say: Say) -> None:
    """Send one job that has no batch id yet: adopt the batch an earlier create made (its reply lost), else
    upload its input (OpenAI) and create it. Every step is written to batch.json as it happens."""
    if job.create_sent:
        found = provider.find(job)
        if found is not None:
            job.batch_id, job.state = found
            save_manifest(run_dir, manifest)
            say(f"batch {job.batch_id}: found again (job {job.tag}); not submitted twice")
            return
    if provider.needs_upload and not job.input_file_id:
        try:
            job.input_file_id = provider.upload(run_dir / (job.input_file or ""))
        except BackendError as exc:  # retried already (each attempt ended at the front end's timeout)
            raise BatchError(f"uploading the input of job {job.tag} failed: {str(exc)[:500]}; rerun the same "
                             "command to upload it again") from exc
        save_manifest(run_dir, manifest)
    if payloads is None and not provider.needs_upload:
        payloads = rebuild(job.item_ids)
    job.create_sent = True
    save_manifest(run_dir, manifest)  # before the create: a lost reply is looked for, never created again
    try:
        job.batch_id, job.state = provider.create(job, payloads or {})
    except Exception as exc:
        raise BatchError(f"creating the batch of job {job.tag} ({len(job.item_ids)} items) failed: "
                         f"{type(exc).__name__}: {str(exc)[:500]}; {run_dir / BATCH_FILE} keeps the job: rerun the "
                         "same command (a batch that was created after all is found by its tag, not sent again)"
                         ) from exc
    job.created_at = _now()
    save_manifest(run_dir, manifest)
    say(f"batch {job.batch_id}: {len(job.item_ids)} item(s) submitted ({job.state})")


def build_and_submit(run_dir: Path, manifest: BatchManifest, provider: BatchProvider, todo: list[BenchItem],
                     capture: _Capture, say: Say) -> None:
    """Build the requests of `todo` and send them, one job per provider-sized chunk."""
    reqs: list[BatchRequest] = []
    payloads: dict[str, Any] = {}
    size = 0

    def flush() -> None:
        nonlocal reqs, payloads, size
        if not reqs:
            return
        job = BatchJob(index=len(manifest.jobs), tag=f"audiomind-{uuid.uuid4().hex[:16]}",
                       item_ids=[r.custom_id for r in reqs])
        _write_job_files(run_dir, job, provider, reqs, payloads)
        manifest.jobs.append(job)
        save_manifest(run_dir, manifest)
        submit_job(run_dir, manifest, provider, job, payloads, capture_payloads(capture, {}), say)
        reqs, payloads, size = [], {}, 0

    for item in todo:
        got = capture.request(item)
        if got is None:
            continue
        req, payload = got
        line = provider.line(req.custom_id, payload)
        n = len(line.encode("utf-8")) + 1 if line else req.size_bytes
        if n > provider.max_bytes:
            say(f"warning: the request of {item.id} is {n / 1e6:.1f} MB, over the {provider.max_bytes / 1e6:.0f} MB "
                f"a {provider.kind} batch takes: it goes alone, and the provider may refuse it")
        if reqs and (size + n > provider.max_bytes or len(reqs) >= provider.max_lines):
            flush()
        reqs.append(req.model_copy(update={"size_bytes": n}))
        payloads[req.custom_id] = payload
        size += n
    flush()
    for failure in capture.failures:
        say(f"not sent (fails before its answer call; recorded when scored): {failure}")


def capture_payloads(capture: _Capture, items: dict[str, BenchItem]) -> Callable[[list[str]], dict[str, Any]]:
    """Rebuilds the payloads of a job's items (a Gemini job whose create was never sent, after a kill)."""

    def rebuild(ids: list[str]) -> dict[str, Any]:
        out = {}
        for cid in ids:
            got = capture.request(items[cid]) if cid in items else None
            if got is not None:
                out[cid] = got[1]
        missing = [cid for cid in ids if cid not in out]
        if missing:
            raise BatchError(f"cannot rebuild the batch requests of {', '.join(missing[:5])} (not in this run's "
                               "items, or failing now)")
        return out

    return rebuild


# ---------------------------------------------------------------- polling and collecting


def wait_for_batches(run_dir: Path, manifest: BatchManifest, provider: BatchProvider, poll: PollPolicy,
                     say: Say, sleep: Callable[[float], None] = time.sleep) -> None:
    """Poll every sent, unfinished batch until each has ended (backoff between rounds); state changes are
    written to batch.json."""
    pending = [j for j in manifest.jobs if j.batch_id and not j.done]
    t0 = time.monotonic()
    n = failures = 0
    while pending:
        for job in pending:
            try:
                state, done, detail = provider.status(job.batch_id or "")
            except BackendError as exc:  # transient (retried already): the next round asks again
                failures += 1
                if failures >= MAX_POLL_FAILURES * len(pending):
                    raise BatchError(f"polling the batch {job.batch_id} failed {failures} times: {exc}; rerun the "
                                     "same command to resume polling it") from exc
                say(f"batch {job.batch_id}: poll failed ({str(exc)[:200]}); asking again later")
                continue
            failures = 0
            job.polls += 1
            changed = (state, detail) != (job.state, job.detail)
            job.state, job.detail, job.done = state, detail, done
            if done:
                job.finished_at = _now()
            if changed or done:
                save_manifest(run_dir, manifest)
                say(f"batch {job.batch_id}: {state}" + (f" ({detail})" if detail else ""))
        pending = [j for j in pending if not j.done]
        if not pending:
            break
        if poll.timeout_s is not None and time.monotonic() - t0 > poll.timeout_s:
            raise BatchError(f"{len(pending)} batch(es) still running after {poll.timeout_s:g} s; their ids are "
                               f"in {run_dir / BATCH_FILE}: rerun the same command to resume polling them")
        sleep(poll.delay(n))
        n += 1


def collect_batches(run_dir: Path, manifest: BatchManifest, provider: BatchProvider, say: Say) -> None:
    """Read the replies of every ended batch not read yet into job-NNN.replies.jsonl."""
    for job in manifest.jobs:
        if not job.done or job.collected:
            continue
        try:
            replies = provider.collect(job)
        except BackendError as exc:  # retried already (each attempt ended at the front end's timeout)
            raise BatchError(f"downloading the replies of batch {job.batch_id} failed: {str(exc)[:500]}; "
                             f"{run_dir / BATCH_FILE} keeps it: rerun the same command to read them again") from exc
        atomic_write_text(_job_file(run_dir, job, "replies"), "".join(r.model_dump_json() + "\n" for r in replies))
        job.collected = True
        save_manifest(run_dir, manifest)
        failed = sum(1 for r in replies if not r.ok)
        say(f"batch {job.batch_id}: {len(replies) - failed} answered, {failed} failed")


def answers_of(run_dir: Path, manifest: BatchManifest) -> tuple[list[BatchRequest], dict[str, BatchReply]]:
    """Every request sent and the reply to each line (a later answer over an earlier failure)."""
    requests: list[BatchRequest] = []
    replies: dict[str, BatchReply] = {}
    for job in manifest.jobs:
        requests += job_requests(run_dir, job)
        for r in job_replies(run_dir, job):
            if r.custom_id not in replies or r.ok or not replies[r.custom_id].ok:
                replies[r.custom_id] = r
    return requests, replies


# ---------------------------------------------------------------- the run


def prepare_batches(items: list[BenchItem], run_dir: Path, config: AgentConfig, frontend: Any, *,
                    retry_statuses: Collection[str] = (), poll: PollPolicy | None = None,
                    say: Say = _stderr) -> BatchManifest:
    """Steps 1-4 of the module doc, under the run folder's lock: build and send what no batch holds, resume
    sending and polling what an earlier session left, collect what has ended."""
    provider = make_provider(frontend)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = _lock_run_dir(run_dir)
    try:
        manifest = load_manifest(run_dir) or BatchManifest(provider=provider.kind, frontend=frontend.name,
                                                           created_at=_now())
        if manifest.frontend != frontend.name:
            raise ValueError(f"{run_dir / BATCH_FILE} holds batches of {manifest.frontend}, not {frontend.name}: "
                             "use another --out")
        capture = _Capture(config, provider)
        by_id = {it.id: it for it in items}
        for job in manifest.jobs:  # sent by an earlier session up to a point (a kill): finish sending it
            if not job.batch_id:
                submit_job(run_dir, manifest, provider, job, None, capture_payloads(capture, by_id), say)
        todo = items_to_send(items, run_dir, manifest, retry_statuses)
        if todo:
            build_and_submit(run_dir, manifest, provider, todo, capture, say)
        wait_for_batches(run_dir, manifest, provider, poll or PollPolicy.from_env(), say)
        collect_batches(run_dir, manifest, provider, say)
        return manifest
    finally:
        lock.close()


def run_task_batch(task: Any, loaded: Any, run_dir: str | Path, make_agent: Callable[[], Any], *,
                   workers: int = 1, ray_address: str | None = None, progress: bool = True,
                   prices: PriceTable | None = None, retry_statuses: Collection[str] = (),
                   config: dict[str, Any] | None = None, poll: PollPolicy | None = None,
                   say: Say = _stderr, **more: Any) -> tuple[RunSummary, dict[str, Path]]:
    """`audiomind.bench.tasks.run_task` through a batch API (same arguments, same results): the batches
    first (prepare_batches), then the usual runner with every answer read from its batch reply."""
    from audiomind.api import AudioMind
    from audiomind.bench.tasks import run_task

    run_dir = Path(run_dir)
    agent = make_agent()
    cfg: AgentConfig = agent.config
    check_batch(cfg, ray_address, task)
    frontend = agent.frontend_for(cast(Any, None))  # a model front end is shared: it takes no executor
    manifest = prepare_batches(loaded.items, run_dir, cfg, frontend, retry_statuses=retry_statuses, poll=poll,
                               say=say)
    requests, replies = answers_of(run_dir, manifest)
    replay = BatchReplayFrontEnd(frontend.spec(), requests, replies, make_provider(frontend).confidence)
    make_replay = functools.partial(AudioMind, cfg, frontend=replay)
    if "error_retries" in inspect.signature(run_task).parameters:
        more["error_retries"] = 0  # a failed line fails again when replayed: asking again needs a new batch
    run_config = {**(config or {}), "batch": {"provider": manifest.provider, "file": BATCH_FILE,
                                              "batch_ids": [j.batch_id for j in manifest.jobs]}}
    return run_task(task, loaded, run_dir, make_replay, workers=workers, ray_address=None, progress=progress,
                    prices=prices, retry_statuses=retry_statuses, config=run_config, **more)
