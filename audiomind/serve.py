"""`audiomind serve`: the agent as a warm HTTP service (FastAPI on uvicorn).

One `AudioMind` per worker process is built at start-up (and, with warm-up, asked one question so the
embedded models are loaded before the first request); every request shares it, and so shares the
process-wide model sessions and the tool-result cache. Endpoints:

- `POST /v1/ask`: multipart form: `question`, repeated `choices`, and either an `audio` upload or a `path`
  inside one of the served roots (`--root`; checked with audiomind.paths.resolve_under). Optional
  `planner` / `frontend` specs must be on the server's allow-list. Returns the answer and the trace id.
- `GET /v1/traces/{id}` (the trace JSON) and `GET /v1/traces/{id}/html` (the static viewer,
  audiomind.audit.html, as one self-contained page).
- `POST /v1/judge/NAME`: one route per registered judge (edit, rubric, aura, and any a plugin adds), its form
  fields and response model derived from the judge's spec (audiomind.judges.spec).
- `GET /healthz`, `GET /metrics` (Prometheus text format), OpenAPI docs at `/docs`.

Concurrency is bounded: at most `concurrency` runs at once, at most `queue` more waiting; a request
beyond that is answered 429 at once (with Retry-After) instead of piling up. Uploaded audio is stored
content-addressed (`<trace_dir>/uploads/<sha256>.<ext>`), so the same clip uploaded twice is one file
and hits the tool cache.

Hostile input (issue 25): a request body is counted as it arrives, chunked or not, and reading stops at
`max_upload_mb` (so no form field, used or unused, is spooled past it); a path longer than
audiomind.paths.MAX_PATH_CHARS is refused before anything resolves it, and resolving runs off the event
loop; audio longer than `max_duration_s` (default DEFAULT_MAX_DURATION_S) is refused before it runs; a run
whose client disconnects is cancelled; unknown form fields and control characters in text fields are
refused; error bodies never name a server path (refusals say "outside the allowed folders"); a trace the
disk will not take leaves the answer returned with a warning; the /docs page loads its Swagger UI from this
server (the fastapi-offline package's copy), not from a CDN. Issue 35 (audiomind.serve_guards): a path is
opened once and checked as opened, and the run reads a copy made from that descriptor (no swap of the name
reaches outside the roots); every route refuses audio over the cap from its header (audiomind.limits);
headers and bodies have read deadlines; traces are served with folders by role (`<root>`, `<uploads>`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import os
import re
import tempfile
import threading
import time
import unicodedata
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from audiomind.config import AgentConfig
from audiomind.http_bounds import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    ReadDeadline,
    SizeLimitMiddleware,
)
from audiomind.limits import DEFAULT_MAX_DURATION_S, InputFolder, inputs_limits_from_env
from audiomind.serve_guards import check_upload, readable_trace, slot_audio, trace_state

if TYPE_CHECKING:
    from audiomind.judges.spec import JudgeSpec

SETTINGS_ENV = "AUDIOMIND_SERVE_SETTINGS"
TRACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_SUFFIX = re.compile(r"^\.[a-z0-9]{1,8}$")
CANCEL_GRACE_S = 2.0
"""How long a cancelled run keeps its slot while its thread stops (Service._let_go)."""
CONTROLS_ALLOWED_IN_QUESTION = {"\n", "\t"}
"""A question may span lines; any other control character (ESC, CR, NUL, DEL, C1, Unicode line separators) is
refused, as it is in a choice: a trace shows the question on a terminal."""
ASK_FIELDS = frozenset({"question", "choices", "audio", "path", "planner", "frontend", "item_id"})


class ServeSettings(BaseModel):
    """Everything a worker process needs to build its app (serialisable: `--workers N` passes it on)."""

    model_config = ConfigDict(extra="forbid")

    agent: AgentConfig = Field(default_factory=AgentConfig, description="the default agent of every request")
    roots: list[str] = Field(default_factory=list, description="folders whose files a request may name by path")
    allow_planners: list[str] = Field(default_factory=list, description="planner specs a request may choose "
                                                                         "(the default one is always allowed)")
    allow_frontends: list[str] = Field(default_factory=list, description="front-end specs a request may choose")
    concurrency: int = Field(2, ge=1, le=64, description="runs at once per worker")
    queue: int = Field(16, ge=0, le=10_000, description="requests waiting beyond those; more get 429")
    max_upload_mb: float = Field(100.0, gt=0, description="largest accepted request body")
    warmup: bool = Field(True, description="ask one question at start-up so the models are loaded")
    html_spectrograms: bool = Field(True, description="draw spectrograms in the HTML viewer")
    header_timeout_s: float = Field(DEFAULT_HEADER_TIMEOUT_S, gt=0, description="a request's headers are due in")
    body_timeout_s: float = Field(DEFAULT_BODY_TIMEOUT_S, gt=0, description="a request's body is due in (408)")
    inputs_max_mb: float = Field(default_factory=lambda: inputs_limits_from_env()[0], gt=0, description="MB the "
                                 "uploads folder may hold; past it the least recently used copies are deleted")
    inputs_max_age_h: float = Field(default_factory=lambda: inputs_limits_from_env()[1], gt=0, description="hours "
                                    "an input copy is kept after its last use")

    @model_validator(mode="after")
    def _duration_cap(self) -> ServeSettings:
        """A service always has a duration cap: the agent's `max_duration_s`, else DEFAULT_MAX_DURATION_S."""
        if self.agent.max_duration_s is None:
            self.agent = self.agent.model_copy(update={"max_duration_s": DEFAULT_MAX_DURATION_S})
        return self

    @property
    def trace_dir(self) -> Path:
        return Path(self.agent.trace_dir).resolve()

    @property
    def upload_dir(self) -> Path:
        return self.trace_dir / "uploads"

    def planners(self) -> list[str]:
        return list(dict.fromkeys([self.agent.planner, *self.allow_planners]))

    def frontends(self) -> list[str]:
        return list(dict.fromkeys([self.agent.frontend, *self.allow_frontends]))


# ---- metrics ------------------------------------------------------------------------------------------

class Metrics:
    """The service's Prometheus metrics, in a registry of their own (one per app)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = r = CollectorRegistry()
        fast = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
        self.requests = Counter("audiomind_requests", "HTTP requests by endpoint, method and status",
                                ["endpoint", "method", "status"], registry=r)
        self.latency = Histogram("audiomind_request_seconds", "HTTP request latency (s) by endpoint",
                                 ["endpoint"], buckets=fast, registry=r)
        self.runs = Counter("audiomind_runs", "finished agent and judge runs by kind and outcome",
                            ["kind", "outcome"], registry=r)
        self.run_seconds = Histogram("audiomind_run_seconds", "wall time of a run (s), queueing excluded",
                                     ["kind"], buckets=fast, registry=r)
        self.queue_seconds = Histogram("audiomind_queue_wait_seconds", "time a request waited for a run slot (s)",
                                       buckets=fast, registry=r)
        self.node_seconds = Histogram("audiomind_node_seconds", "graph node wall time (s)", ["node"],
                                      buckets=fast, registry=r)
        self.tool_seconds = Histogram("audiomind_tool_seconds", "tool call time (s) as the trace records it",
                                      ["tool"], buckets=fast, registry=r)
        self.tool_calls = Counter("audiomind_tool_calls", "tool calls by tool and status", ["tool", "status"],
                                  registry=r)
        self.cache_hits = Counter("audiomind_tool_cache_hits", "tool calls answered from the tool cache",
                                  registry=r)
        self.model_seconds = Histogram("audiomind_model_call_seconds", "planner / front-end model request "
                                       "latency (s)", ["role"], buckets=fast, registry=r)
        self.in_flight = Gauge("audiomind_runs_in_flight", "runs executing now", registry=r)
        self.queued = Gauge("audiomind_runs_queued", "requests waiting for a run slot", registry=r)
        self.rejected = Counter("audiomind_rejected", "requests refused because the queue was full", registry=r)
        self.model_load = Gauge("audiomind_model_load_seconds", "embedded model load time (s) in this worker",
                                ["model"], registry=r)

    def observe_state(self, kind: str, st: Any) -> None:
        """Per-run figures from a finished run's trace state."""
        self.runs.labels(kind, st.outcome.status if st.outcome else "unfinished").inc()
        for t in st.timings:
            self.node_seconds.labels(t.node).observe(t.duration_s)
        for c in st.tool_calls:
            status = getattr(c.status, "value", str(c.status))
            self.tool_calls.labels(c.tool, status).inc()
            if status == "cached":
                self.cache_hits.inc()
            elif c.duration_s is not None:
                self.tool_seconds.labels(c.tool).observe(c.duration_s)
        for m in st.model_calls:
            if m.latency_s is not None:
                self.model_seconds.labels(m.role).observe(m.latency_s)

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        from audiomind.embedded import sessions

        for key, seconds in sessions.load_times().items():
            self.model_load.labels(key).set(seconds)
        return generate_latest(self.registry)


# ---- bounded concurrency ----------------------------------------------------------------------------

class Busy(Exception):
    """Every run slot is taken and the queue is full."""


class Gate:
    """At most `concurrency` runs at once and `queue` waiting (event-loop state: no locks needed)."""

    def __init__(self, concurrency: int, queue: int, metrics: Metrics):
        self.concurrency, self.queue = concurrency, queue
        self._slots = asyncio.Semaphore(concurrency)
        self.admitted = 0
        self.running = 0
        self.metrics = metrics

    @property
    def waiting(self) -> int:
        return self.admitted - self.running

    def _gauges(self) -> None:
        self.metrics.in_flight.set(self.running)
        self.metrics.queued.set(self.waiting)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.admitted >= self.concurrency + self.queue:
            self.metrics.rejected.inc()
            raise Busy
        self.admitted += 1
        self._gauges()
        t0 = time.perf_counter()
        try:
            async with self._slots:
                self.metrics.queue_seconds.observe(time.perf_counter() - t0)
                self.running += 1
                self._gauges()
                try:
                    yield
                finally:
                    self.running -= 1
        finally:
            self.admitted -= 1
            self._gauges()


# ---- cancelling a run whose client has gone ---------------------------------------------------------

class RunCancelled(KeyboardInterrupt):
    """Raised inside a run's thread when its client disconnected. A KeyboardInterrupt, so no `except
    Exception` on the way (a tool wrapper, a retry loop) swallows it, and AudioMind.ask writes the trace
    of what the run found as a stopped run, as it does for Ctrl-C."""

    def __init__(self) -> None:
        super().__init__("cancelled: the client closed the connection before the answer was ready")


class ClientGone(Exception):
    """A run was cancelled because its client disconnected (what the pool's future carries)."""


def _async_raise(thread_id: int, exc_type: type[BaseException] | None) -> None:
    """Raise `exc_type` in thread `thread_id` at its next Python instruction (None: withdraw a pending one)."""
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                                ctypes.py_object(exc_type) if exc_type is not None else None)


class Cancellable:
    """`fn` to run on a pool thread, cancellable from the event loop: `cancel()` raises RunCancelled in that
    thread at its next Python instruction (a model request or a tool call in C code finishes first: each
    is bounded by its own timeout). At most one exception is ever raised, and only while `fn` runs: a
    pending one is withdrawn under the lock when `fn` returns, so it can never hit the pool's own loop."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn = fn
        self._lock = threading.Lock()
        self._thread: int | None = None
        self.cancelled = False

    def __call__(self) -> Any:
        try:
            try:
                with self._lock:
                    if self.cancelled:
                        raise RunCancelled
                    self._thread = threading.get_ident()
                return self.fn()
            finally:
                with self._lock:
                    if self._thread is not None:
                        self._thread = None
                        _async_raise(threading.get_ident(), None)
        except RunCancelled as exc:
            raise ClientGone(str(exc)) from None

    def cancel(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.cancelled = True
            if self._thread is not None:
                _async_raise(self._thread, RunCancelled)


async def _disconnected(request: Request) -> None:
    """Returns once the client of `request` (whose body has been read) has closed its connection."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


# ---- storage --------------------------------------------------------------------------------------------

def check_storage(settings: ServeSettings) -> None:
    """Make the trace and upload folders and prove they take a file; StorageError (one line) otherwise.
    `serve` calls it before starting, so a read-only or full `--trace-dir` is one clear error, not a
    traceback from inside the server."""
    from audiomind.fsutil import atomic_write, is_storage_error, storage_error

    probe = settings.upload_dir / f".write-probe-{os.getpid()}"
    try:
        settings.upload_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(probe, b"audiomind serve: can this folder be written?\n")
        probe.unlink()
    except OSError as exc:
        if is_storage_error(exc):
            raise storage_error(exc, settings.trace_dir, "write traces and uploads under") from None
        raise


# ---- the service --------------------------------------------------------------------------------------

class Service:
    """What one worker holds: its settings, agents (one per allowed planner/front-end pair, made on first
    use; the default one at start-up), the run pool, the gate and the metrics."""

    def __init__(self, settings: ServeSettings, agent: Any = None):
        self.settings = settings
        self.metrics = Metrics()
        # a thread per slot, and one per slot for a cancelled run still stopping (Service._let_go)
        self.pool = ThreadPoolExecutor(max_workers=2 * settings.concurrency, thread_name_prefix="audiomind-run")
        self.stopping = 0
        self.gate: Gate | None = None  # made inside the event loop
        self._agents: dict[tuple[str, str], Any] = {}
        self._agents_lock = threading.Lock()
        self._html_lock = threading.Lock()
        if agent is not None:
            self._agents[(settings.agent.planner, settings.agent.frontend)] = agent
        check_storage(settings)
        self.roots = [Path(os.path.realpath(r)) for r in settings.roots]
        self.ready = False
        self.startup_error: str | None = None
        self._held: dict[str, int] = {}  # clip name -> the descriptor a run reads it through
        self.inputs = InputFolder(settings.upload_dir, max_bytes=settings.inputs_max_mb * 1024 * 1024,
                                  max_age_s=settings.inputs_max_age_h * 3600)
        self.inputs.prune()  # input copies: kept for the traces naming them, bounded in size and age (as mcp's)
        # server-side folders an error message must never show, longest first (a message names them by role)
        where = {str(settings.upload_dir): "<uploads>", str(settings.trace_dir): "<traces>",
                 tempfile.gettempdir(): "<tmp>", os.getcwd(): "<server>"}
        for r in [*settings.roots, *map(str, self.roots)]:
            where[str(r)] = "<root>"
        self._hidden = sorted(((k, v) for k, v in where.items() if len(k) > 1), key=lambda kv: -len(kv[0]))

    def public(self, text: object, html: bool = False) -> str:
        """`text` with every server folder (traces, uploads, roots, temp, working folder) replaced by its role
        (`html`: also as HTML-escaped and URL-quoted in a page, the role escaped)."""
        out = str(text)
        if not html:
            for folder, role in self._hidden:
                out = out.replace(folder, role)
            return out
        from html import escape
        from urllib.parse import quote

        for folder, role in self._hidden:
            for form in dict.fromkeys((escape(folder), quote(folder), folder)):
                out = out.replace(form, escape(role))
        return out

    def public_trace(self, trace_id: str) -> str:
        """A trace's JSON as a client sees it: uploads, roots and artifacts by their roles (`<uploads>/sha.wav`,
        `<root>/a.wav`, `<traces>/RUN.artifacts`), no server folder; unreadable: 422 (serve_guards)."""
        return self.public(readable_trace(self.trace_file(trace_id), trace_id)[0])

    # -- agents
    def agent(self, planner: str | None = None, frontend: str | None = None) -> Any:
        s = self.settings
        planner, frontend = planner or s.agent.planner, frontend or s.agent.frontend
        if planner not in s.planners() or frontend not in s.frontends():
            from audiomind.audit.otel import redact_userinfo  # a URL's user and password are never repeated
            which, given, allowed = (("planner", planner, s.planners()) if planner not in s.planners()
                                     else ("front end", frontend, s.frontends()))
            raise HTTPException(400, redact_userinfo(f"{which} {given!r} is not allowed here; allowed: {', '.join(allowed)}"))
        key = (planner, frontend)
        with self._agents_lock:
            if key not in self._agents:
                from audiomind.api import AudioMind

                self._agents[key] = AudioMind(s.agent.model_copy(update={"planner": planner, "frontend": frontend}))
            return self._agents[key]

    def warm_up(self) -> None:
        """Ask the default agent about a short synthetic clip (speech when flite is here, beeps): the models of
        the speech and sound passes load before the first request."""
        from audiomind import synth

        agent = self.agent()
        with tempfile.TemporaryDirectory(prefix="audiomind-warmup-") as tmp:
            t = Path(tmp)
            parts: list[str | Path] = [synth.beeps(3, t / "beeps.wav")]
            with contextlib.suppress(Exception):  # no flite: the sound pass still warms up
                parts.insert(0, synth.speech("Good morning, the train leaves at nine.", t / "speech.wav"))
            clip = synth.concat(parts, t / "warmup.wav") if len(parts) > 1 else parts[0]
            agent.ask(clip, "How many beeps are there, and what does the speaker say?", write=False)
        self.ready = True

    # -- inputs
    async def resolve_path(self, path: str, field: str = "path", suffix: str = ".bin") -> Path:
        """The file `path` names under a served root, opened once and checked as opened, refused over the
        duration cap from its header, and copied from that descriptor into the uploads folder
        (audiomind.serve_guards.snapshot_under: the run reads that copy, never the name again, so swapping
        the name for a symlink cannot reach outside the roots); off the event loop, after a length check
        that needs no resolving. A refusal never says where anything is on this machine."""
        from audiomind.audio import AudioError
        from audiomind.paths import (
            MissingPathError,
            OutsideRootsError,
            PathPolicyError,
            check_path_length,
            clip_text,
            public_message,
        )
        from audiomind.serve_guards import snapshot_under

        if not self.roots:
            raise HTTPException(403, "this server serves no folders (start it with --root DIR to ask by path)")
        shown = repr(clip_text(path, 120))
        try:
            check_path_length(path)
            clip, held = await asyncio.get_running_loop().run_in_executor(None, lambda: snapshot_under(
                path, self.roots, self.settings.upload_dir, suffix, self.settings.agent.max_duration_s, shown))
            if held is not None:  # no room for the copy: the run reads the open file (release() closes it)
                self._held[str(clip)] = held
            self.inputs.use(clip)
            return clip
        except PathPolicyError as exc:
            code = 403 if isinstance(exc, OutsideRootsError) else 404 if isinstance(exc, MissingPathError) else 400
            raise HTTPException(code, f"{field} {public_message(exc)}") from None
        except AudioError as exc:
            raise HTTPException(400, self.public(exc)) from None  # names the file as the client did
        except OSError as exc:
            raise self.storage_refusal(exc, "a copy of the audio") from None

    def release(self, clips: Any) -> None:
        """After their run: close the descriptors held for these clips; the input folder prunes (InputFolder.done)."""
        clips = [c for c in clips if c is not None]
        for fd in [self._held.pop(str(c), None) for c in clips]:
            if fd is not None:
                os.close(fd)
        self.inputs.done(clips)

    def storage_refusal(self, exc: OSError, what: str) -> HTTPException:
        """507 for a write the disk refused (full, read-only, ...): what failed and why, no server path."""
        import errno as _errno

        from audiomind.fsutil import _STORAGE_ERRNOS

        why = _STORAGE_ERRNOS.get(exc.errno or 0) or "the file system refused the write"
        code = _errno.errorcode.get(exc.errno or 0)
        return HTTPException(507, f"the server could not store {what}: {why}" + (f" ({code})" if code else ""))

    async def store_upload(self, upload: UploadFile) -> Path:
        """Copy an upload to `uploads/<sha256><ext>` (content-addressed) and check that it is audio (and not
        longer than the duration cap) before it takes a run slot."""
        limit = int(self.settings.max_upload_mb * 1024 * 1024)
        suffix = Path(upload.filename or "").suffix.lower()
        suffix = suffix if _SUFFIX.match(suffix) else ".bin"
        h, size = hashlib.sha256(), 0
        tmp: Path | None = None
        try:
            fd, tmp_name = tempfile.mkstemp(dir=self.settings.upload_dir, prefix=".upload-", suffix=suffix)
            tmp = Path(tmp_name)
            with os.fdopen(fd, "wb") as out:
                while chunk := await upload.read(1 << 20):
                    size += len(chunk)
                    if size > limit:
                        raise HTTPException(413, f"upload larger than {self.settings.max_upload_mb:g} MB")
                    h.update(chunk)
                    out.write(chunk)
            if size == 0:
                raise HTTPException(400, f"the uploaded file {_shown(upload.filename)} is empty")
            dest = self.settings.upload_dir / f"{h.hexdigest()}{suffix}"
            os.replace(tmp, dest)  # the same bytes if it was there: the copy counts as used now
        except OSError as exc:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            raise self.storage_refusal(exc, "the upload") from None
        except BaseException:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
            raise
        self.inputs.use(dest)  # kept while the request runs (released with its clips: release())
        try:
            await asyncio.get_running_loop().run_in_executor(None, check_upload, dest, _shown(upload.filename),
                                                             self.settings.agent.max_duration_s)
        except BaseException:
            self.inputs.done([dest])
            raise
        return dest

    async def audio_input(self, upload: UploadFile | None, path: str | None, name: str = "audio",
                          path_field: str = "path") -> tuple[Path, str]:
        """The audio a request names (an upload, or a path under a root) and how to name it back to the client
        (the upload's file name or the path as given, cut to 120 characters: never where it is stored)."""
        from audiomind.paths import clip_text

        if (upload is None) == (not path):
            raise HTTPException(400, f"give either an upload ({name!r} file) or a path ({path_field!r}), "
                                     "not both and not neither")
        if upload is not None:
            return await self.store_upload(upload), clip_text(upload.filename or "(unnamed)", 120)
        suffix = Path(path or "").suffix.lower()
        return (await self.resolve_path(path or "", path_field, suffix if _SUFFIX.match(suffix) else ".bin"),
                clip_text(path, 120))

    # -- running
    async def run(self, kind: str, fn: Callable[[], Any], request: Request | None = None) -> Any:
        """`fn` on the run pool under the gate; its wall time is recorded per kind. With `request`, a client
        that disconnects before the answer cancels the run (Cancellable): the slot is freed once the run's
        thread has stopped, or after CANCEL_GRACE_S while one in C code finishes that call (_let_go), and the
        run counts as outcome "cancelled"."""
        assert self.gate is not None
        try:
            async with self.gate.slot():
                t0 = time.perf_counter()
                job = Cancellable(fn)
                future = asyncio.get_running_loop().run_in_executor(self.pool, job)
                watcher = asyncio.ensure_future(_disconnected(request)) if request is not None else None
                try:
                    if watcher is not None:
                        await asyncio.wait({future, watcher}, return_when=asyncio.FIRST_COMPLETED)
                        if not future.done():
                            job.cancel()
                            await self._let_go(future)  # ClientGone: the slot is free within CANCEL_GRACE_S
                    return await future
                except ClientGone:
                    self.metrics.runs.labels(kind, "cancelled").inc()
                    raise HTTPException(499, "the client closed the connection; the run was cancelled") from None
                finally:
                    if watcher is not None:
                        watcher.cancel()
                    self.metrics.run_seconds.labels(kind).observe(time.perf_counter() - t0)
        except Busy:
            raise HTTPException(429, f"busy: {self.gate.running} run(s) in progress and {self.gate.waiting} "
                                     f"waiting (queue limit {self.gate.queue}); retry later",
                                headers={"Retry-After": "1"}) from None

    async def _let_go(self, future: asyncio.Future) -> None:
        """Past CANCEL_GRACE_S a cancelled run still in a long C call (a 1-hour clip: 20 s) frees its slot
        anyway (ClientGone; the pool has a spare thread per slot for it); at most `concurrency` such runs."""
        done, _ = await asyncio.wait({future}, timeout=CANCEL_GRACE_S)
        if done or self.stopping >= self.settings.concurrency:
            return
        self.stopping += 1

        def stopped(f: asyncio.Future) -> None:
            self.stopping -= 1
            _ = f.cancelled() or f.exception()  # retrieved: ClientGone, as expected

        future.add_done_callback(stopped)
        raise ClientGone("the client closed the connection; the run is stopping")

    def trace_file(self, trace_id: str) -> Path:
        from audiomind.paths import PathPolicyError, resolve_under

        if not TRACE_ID.match(trace_id):
            raise HTTPException(400, f"not a trace id: {trace_id[:80]!r}")
        try:
            return resolve_under(self.settings.trace_dir / f"{trace_id}.json", [self.settings.trace_dir])
        except PathPolicyError:
            raise HTTPException(404, f"no trace {trace_id!r}") from None

    def render_html(self, trace_id: str) -> Path:
        """The viewer page of a trace (rendered once, again only when the trace file changed)."""
        from audiomind.audit.audit import Auditor
        from audiomind.audit.html import render_page

        f = self.trace_file(trace_id)
        out_dir = self.settings.trace_dir / "html"
        allow = [self.settings.upload_dir, *self.roots]
        with self._html_lock:
            st = trace_state(f, trace_id)
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", st.run.run_id) or "trace"
            page = out_dir / f"{stem}.html"
            if page.exists() and page.stat().st_mtime >= f.stat().st_mtime:
                return page
            report = Auditor(confine_files=True, allow=allow).audit_file(f)
            return render_page(st, out_dir, f, report, embed=True, spectrograms=self.settings.html_spectrograms,
                               index_href=None, allow=allow)


def _shown(name: str | None) -> str:
    """A client-given file name or path as a message shows it: quoted, control characters escaped, cut."""
    from audiomind.paths import clip_text

    return repr(clip_text(name, 120)) if name else "(unnamed)"


def _trace_links(trace_path: str | None) -> dict[str, Any]:
    if not trace_path:
        return {"trace_id": None, "trace_url": None, "html_url": None}
    tid = Path(trace_path).stem
    return {"trace_id": tid, "trace_url": f"/v1/traces/{tid}", "html_url": f"/v1/traces/{tid}/html"}


class AskResponse(BaseModel):
    """The answer of one run, with where its trace is."""

    run_id: str
    answer: str
    choice: str | None
    choice_index: int | None
    rationale: str
    confidence: float | None
    confidence_reason: str
    outcome: dict[str, Any]
    wall_time_s: float | None
    tool_calls: int
    cached_tool_calls: int
    trace_id: str | None
    trace_url: str | None
    html_url: str | None
    warnings: list[str] = Field(default_factory=list, description="what went wrong around a finished run, e.g. "
                                "a trace the disk would not take (the answer is still this one)")


class ErrorBody(BaseModel):
    """Every error answer: `detail` is one sentence (or, for a failed model backend, an object with the
    error and the failed run's trace links). No server path appears in it."""

    detail: str | dict[str, Any]


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "bad input: not audio, too long, empty question, control characters, "
                                             "an unknown field, a spec not allowed"},
    403: {"model": ErrorBody, "description": "the path is outside the allowed folders"},
    404: {"model": ErrorBody, "description": "no such file, trace or judge"},
    413: {"model": ErrorBody, "description": "the request body is larger than --max-upload-mb"},
    429: {"model": ErrorBody, "description": "every run slot and the queue are taken (see Retry-After)"},
    502: {"model": ErrorBody, "description": "a model backend failed (the failed run's trace is still written)"},
    507: {"model": ErrorBody, "description": "the server's disk would not take the upload or the trace"},
}
"""Documented error answers (FastAPI adds 422 for a field of the wrong type)."""


def _judge_response_model(spec: JudgeSpec) -> type[BaseModel]:
    """A judge's result with the trace links the service adds (the OpenAPI schema of /v1/judge/NAME)."""
    from pydantic import create_model

    links: dict[str, Any] = {"trace_id": (str | None, None), "trace_url": (str | None, None),
                             "html_url": (str | None, None), "warnings": (list[str], Field(default_factory=list))}
    base = spec.result_model()
    return create_model(f"{base.__name__}Response", __base__=base, **links)


_BOUNDS = ("ge", "gt", "le", "lt")


def _judge_form(spec: JudgeSpec) -> list[inspect.Parameter]:
    """The form of POST /v1/judge/NAME, from the judge's spec: per audio slot an upload field and its path
    field(s); per args field a form field of its type (numeric bounds included: 422 outside them, as FastAPI
    answers a wrong type); `llm` and, for a judge with a front end, `frontend`. A required args field is
    optional in the form so that its absence is a 400 with a sentence, as every other bad input is."""
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("request", kw, annotation=Request)]
    for slot in spec.audio:
        params.append(inspect.Parameter(slot.name, kw, default=None, annotation=Annotated[
            UploadFile | None, File(description=slot.help + ("" if slot.required else " (optional)"))]))
        first, *others = slot.paths()
        params.append(inspect.Parameter(first, kw, default=None, annotation=Annotated[
            str | None, Form(description=f"instead of an upload: {slot.help}, a file under a served root")]))
        params += [inspect.Parameter(p, kw, default=None, annotation=Annotated[
            str | None, Form(description=f"another name of {first!r}")]) for p in others]
    for name, field in spec.args.model_fields.items():
        required = field.is_required()
        bounds = {k: getattr(m, k) for m in field.metadata for k in _BOUNDS if hasattr(m, k)}
        params.append(inspect.Parameter(
            name, kw, default=None if required else field.get_default(call_default_factory=True),
            annotation=Annotated[field.annotation | None if required else field.annotation,  # type: ignore[operator]
                                 Form(description=(field.description or "") + (" (required)" if required else ""),
                                      **bounds)]))
    taken = spec.options()
    params += [inspect.Parameter(o, kw, default=None, annotation=Annotated[str | None, Form(description=help_)])
               for o, help_ in (("llm", "text model spec (an allowed planner spec)"),
                                ("frontend", "front-end spec (an allowed one)")) if o in taken]
    return params


class MetricsMiddleware:
    """Counts every HTTP request by route template, method and status, and times it."""

    def __init__(self, app: Any, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0, status = time.perf_counter(), 500

        async def send_wrapper(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            endpoint = getattr(scope.get("route"), "path", None) or "(unmatched)"
            self.metrics.requests.labels(endpoint, scope.get("method", ""), str(status)).inc()
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - t0)


class StartupMessage:
    """Turns a failed start-up (a warm-up whose planner is unreachable, ...) into the one line the service
    recorded in `startup_error`, instead of the traceback Starlette would hand uvicorn to log."""

    def __init__(self, app: Any, service: Service):
        self.app, self.service = app, service

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def one_line(message: dict) -> None:
            if message["type"] == "lifespan.startup.failed" and self.service.startup_error:
                message = {**message, "message": self.service.startup_error}
            await send(message)

        await self.app(scope, receive, one_line)


def create_app(settings: ServeSettings | None = None, *, agent: Any = None) -> FastAPI:
    """The ASGI app of one worker. `agent`: an AudioMind to use as the default agent (tests inject one)."""
    from fastapi_offline import FastAPIOffline

    from audiomind import __version__
    from audiomind.cli_common import quiet_libraries

    quiet_libraries()
    settings = settings or ServeSettings()
    service = Service(settings, agent)
    # Swagger UI and ReDoc from this server (fastapi-offline ships their files), so /docs renders offline
    app = FastAPIOffline(
        title="audiomind", version=__version__, lifespan=_lifespan(service, settings), static_url="/docs-assets",
        description="Auditable agentic audio question answering: ask questions about audio, get the answer with "
                    "its typed evidence trace; run the judges. Every run writes a trace you can fetch as JSON or "
                    "as the HTML viewer.",
    )
    app.state.service = service
    # the routes, in the order the OpenAPI schema lists them
    _status_routes(app, service, settings)
    _ask_route(app, service, settings)
    _trace_routes(app, service)
    _judge_routes(app, service)
    # outermost last: metrics see every response (413 and 429 included) with its route and status
    app.add_middleware(SizeLimitMiddleware, limit_bytes=int(settings.max_upload_mb * 1048576) + 65536,
                       shown_mb=settings.max_upload_mb)
    app.add_middleware(ReadDeadline, body_timeout_s=settings.body_timeout_s)  # 408 for a body that drips
    app.add_middleware(MetricsMiddleware, metrics=service.metrics)
    app.add_middleware(StartupMessage, service=service)
    _with_trace_schema(app)
    return app


def _lifespan(service: Service, settings: ServeSettings) -> Callable[[FastAPI], Any]:
    """The app's lifespan: the admission gate, the default agent built (and warmed up) before it serves."""
    from audiomind.cli_common import one_line

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.gate = Gate(settings.concurrency, settings.queue, service.metrics)
        loop = asyncio.get_running_loop()
        step = "building the default agent"
        try:
            await loop.run_in_executor(service.pool, service.agent)  # build the default agent (loads manifests)
            if settings.warmup:
                step = "warm-up (one question to load the models)"
                await loop.run_in_executor(service.pool, service.warm_up)
        except Exception as exc:  # one line for the log (StartupMessage), not a traceback
            service.startup_error = one_line(f"audiomind serve could not start: {step} failed: "
                                             f"{type(exc).__name__}: {clip(str(exc), 400)}")
            raise
        service.ready = True
        yield
        service.pool.shutdown(wait=False, cancel_futures=True)

    return lifespan


async def _form_fields(request: Request, allowed: frozenset[str]) -> None:
    """400 for a form field this endpoint does not read (a typo would otherwise be silently ignored)."""
    form = await request.form()  # already parsed (and cached) for the parameters
    unknown = sorted({k for k in form if k not in allowed})
    if unknown:
        raise HTTPException(400, f"unknown form field(s): {', '.join(_shown(k) for k in unknown[:10])}; "
                                 f"this endpoint reads: {', '.join(sorted(allowed))}")


def _text_problem(name: str, value: str | None, allowed_controls: set[str] | frozenset[str] = frozenset()
                 ) -> str | None:
    """What is wrong with a text field (a control or other non-printable character), or None."""
    from audiomind.inputs import _BAD_CATEGORIES

    for i, ch in enumerate(value or ""):
        kind = _BAD_CATEGORIES.get(unicodedata.category(ch))
        if kind is not None and ch not in allowed_controls:
            return (f"the {name} contains {kind} ({ch!r} at position {i}); it must be printable text"
                    + (" (line breaks and tabs allowed)" if allowed_controls else ""))
    return None


def _status_routes(app: FastAPI, service: Service, settings: ServeSettings) -> None:
    """GET /healthz (liveness and load) and /metrics (Prometheus)."""
    from audiomind import __version__

    @app.get("/healthz", summary="liveness and load")
    async def healthz() -> dict[str, Any]:
        from audiomind.embedded import sessions

        gate = service.gate
        return {
            "status": "ok", "ready": service.ready, "version": __version__,
            "planner": settings.agent.planner, "frontend": settings.agent.frontend,
            "in_flight": gate.running if gate else 0, "queued": gate.waiting if gate else 0,
            "concurrency": settings.concurrency, "queue_limit": settings.queue,
            "max_duration_s": settings.agent.max_duration_s, "max_upload_mb": settings.max_upload_mb,
            "models_loaded": sessions.SESSIONS.loaded(),
        }

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)


def _ask_problem(question: str | None, chosen: list[str], item_id: str | None) -> str | None:
    """What is wrong with an ask request's question, choices or item id (the 400's message), or None."""
    from audiomind.inputs import choices_problem, question_problem

    problem = (question_problem(question if question is not None else "")
               or _text_problem("question", question, CONTROLS_ALLOWED_IN_QUESTION)
               or _text_problem("item_id", item_id)
               or (choices_problem(chosen) if chosen else None))
    if len(chosen) == 1:
        problem = "a multiple-choice question needs at least 2 choices (got 1)"
    return problem


def _ask_route(app: FastAPI, service: Service, settings: ServeSettings) -> None:
    """POST /v1/ask: one question about an uploaded or served clip, answered with its trace's links."""

    @app.post("/v1/ask", response_model=AskResponse, summary="answer a question about an audio clip",
              responses={k: ERRORS[k] for k in (400, 403, 404, 413, 429, 502, 507)})
    async def ask(
        request: Request,
        question: Annotated[str | None, Form(description="the question about the audio (required; line breaks "
                                                         "allowed, no other control characters)")] = None,
        choices: Annotated[list[str] | None, Form(description="answer options (repeat the field; 0 or >= 2)")] = None,
        audio: Annotated[UploadFile | None, File(description="the audio file (any format FFmpeg reads)")] = None,
        path: Annotated[str | None, Form(description="instead of an upload: a file under a served root")] = None,
        planner: Annotated[str | None, Form(description="planner spec (must be allowed by the server)")] = None,
        frontend: Annotated[str | None, Form(description="front-end spec (must be allowed by the server)")] = None,
        item_id: Annotated[str | None, Form(description="your id for this question (kept in the trace)")] = None,
    ) -> AskResponse:
        await _form_fields(request, ASK_FIELDS)
        chosen = list(choices or [])
        problem = _ask_problem(question, chosen, item_id)
        if problem:
            raise HTTPException(400, problem)
        agent = service.agent(planner, frontend)
        clip_path, shown = await service.audio_input(audio, path)
        meta = {"served_by": "audiomind serve", "upload_name": audio.filename if audio is not None else None,
                "path": shown if path else None}  # as given: the run reads a checked copy (resolve_path)

        def work() -> Any:
            return agent.ask(clip_path, question, chosen or None, item_id=item_id, metadata=meta)

        try:
            result, st, warnings = await _run_ask(service, settings, request, work, clip_path, shown)
        finally:
            service.release([clip_path])
        return AskResponse(
            run_id=st.run.run_id, answer=result.answer, choice=result.choice, choice_index=result.choice_index,
            rationale=result.rationale, confidence=result.confidence, confidence_reason=result.confidence_reason,
            outcome=result.outcome.model_dump(mode="json"), wall_time_s=st.run.wall_time_s,
            tool_calls=len(st.tool_calls),
            cached_tool_calls=sum(1 for c in st.tool_calls if getattr(c.status, "value", c.status) == "cached"),
            warnings=warnings, **_trace_links(result.trace_path),
        )


async def _run_ask(service: Service, settings: ServeSettings, request: Request, work: Callable[[], Any],
                   clip_path: Path, shown: str) -> tuple[Any, Any, list[str]]:
    """(result, state, warnings) of an ask run; its failures as HTTP errors: 400 for the audio or the input,
    502 for a model backend, 507 for storage (a run whose trace could not be written still answers, warned)."""
    from audiomind.audio import AudioError
    from audiomind.backends.base import BackendError
    from audiomind.fsutil import is_storage_error

    warnings: list[str] = []
    try:
        result = await service.run("ask", work, request)
    except (AudioError, ValueError) as exc:
        raise HTTPException(400, service.public(str(exc).replace(str(clip_path), repr(shown)))) from None
    except BackendError as exc:
        st = getattr(exc, "audiomind_state", None)
        if st is not None:
            service.metrics.observe_state("ask", st)
        tid = st.run.run_id if st is not None else None
        raise HTTPException(502, {"error": service.public(f"model backend failed: {exc}"), **_trace_links(
            str(settings.trace_dir / f"{tid}.json") if tid else None)}) from None
    except OSError as exc:
        if not is_storage_error(exc):
            raise
        found = getattr(exc, "audiomind_result", None)
        st = getattr(exc, "audiomind_state", None)
        if st is not None:
            service.metrics.observe_state("ask", st)
        if found is None:  # the run failed and its trace was not written either: both causes
            run_error = getattr(exc, "audiomind_run_error", None)
            cause = f"; the run itself failed: {clip(str(run_error), 300)}" if run_error is not None else ""
            raise HTTPException(507, service.storage_refusal(exc, "the trace").detail
                                + service.public(cause)) from None
        result = found
        warnings.append(service.storage_refusal(exc, "this run's trace").detail
                        + "; the answer is not on record")
    else:
        st = result.state
        service.metrics.observe_state("ask", st)
    return result, st, warnings


def _trace_routes(app: FastAPI, service: Service) -> None:
    """GET /v1/traces/{id} (the trace as JSON) and /v1/traces/{id}/html (the viewer)."""
    trace_schema = {"application/json": {"schema": {"$ref": "#/components/schemas/EvidenceState"}}}

    @app.get("/v1/traces/{trace_id}", summary="a trace as JSON (audiomind.state.EvidenceState)",
             response_class=Response,
             responses={200: {"content": trace_schema, "description": "the trace"}, 400: ERRORS[400],
                        404: ERRORS[404]})
    async def trace_json(trace_id: str) -> Response:
        text = await asyncio.get_running_loop().run_in_executor(None, service.public_trace, trace_id)
        return Response(text, media_type="application/json")

    @app.get("/v1/traces/{trace_id}/html", summary="a trace in the HTML viewer", response_class=HTMLResponse,
             responses={400: ERRORS[400], 404: ERRORS[404], 507: ERRORS[507]})
    async def trace_html(trace_id: str) -> HTMLResponse:
        try:
            page = await asyncio.get_running_loop().run_in_executor(None, service.render_html, trace_id)
        except OSError as exc:
            from audiomind.fsutil import is_storage_error

            if not is_storage_error(exc):
                raise
            raise service.storage_refusal(exc, "the rendered page") from None
        return HTMLResponse(service.public(page.read_text(encoding="utf-8"), html=True))


def _judge_routes(app: FastAPI, service: Service) -> None:
    """POST /v1/judge/NAME for every registered judge (from its spec), and a 404 naming them for any other."""
    from audiomind.judges.spec import loaded_judges

    for spec in (specs := loaded_judges()):  # in order; a plugin judge that does not load gets none (doctor: why)
        _judge_route(app, service, spec, _form_fields, _text_problem)

    @app.post("/v1/judge/{kind}", include_in_schema=False)
    async def no_such_judge(kind: str) -> None:
        raise HTTPException(404, f"no judge {_shown(kind)}; judges: {', '.join(s.name for s in specs)}")


def _with_trace_schema(app: FastAPI) -> None:
    """The app's OpenAPI schema gets the trace's own (EvidenceState), which /v1/traces/{id} returns."""
    original_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        """The generated schema plus the trace's own (EvidenceState), which /v1/traces/{id} returns."""
        if app.openapi_schema is None:
            from audiomind.state import EvidenceState

            schema = original_openapi()
            defs = EvidenceState.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for name, sub in defs.pop("$defs", {}).items():
                components.setdefault(name, sub)
            components["EvidenceState"] = defs
        return app.openapi_schema or schema

    app.openapi = openapi  # type: ignore[method-assign]


def _judge_route(app: FastAPI, service: Service, spec: JudgeSpec, form_fields: Callable[..., Any],
                 text_problem: Callable[..., str | None]) -> None:
    """POST /v1/judge/NAME for one judge: its form, checks and response model from its spec."""
    from audiomind.judges.spec import JudgeOptions, input_problem

    settings = service.settings
    params = _judge_form(spec)
    allowed = frozenset(p.name for p in params[1:])
    texts = [n for n, f in spec.args.model_fields.items() if f.annotation in (str, str | None)]

    async def endpoint(**kw: Any) -> JSONResponse:
        from pydantic import ValidationError

        from audiomind.audio import AudioError
        from audiomind.backends.base import BackendError
        from audiomind.fsutil import is_storage_error

        request: Request = kw.pop("request")
        await form_fields(request, allowed)
        paths: dict[str, tuple[str | None, str]] = {}  # slot -> (the path given, the field it came in)
        for slot in spec.audio:
            values = {f: kw.pop(f) for f in slot.paths()}
            given = [f for f, v in values.items() if v]
            if len(given) > 1:
                first, *others = slot.paths()
                raise HTTPException(400, f"give the {slot.name}'s path once: {first!r} (or its other name "
                                         f"{' / '.join(map(repr, others))}), not both")
            paths[slot.name] = (values[given[0]], given[0]) if given else (None, slot.paths()[0])
        for name in texts:
            problem = text_problem(name, kw.get(name), CONTROLS_ALLOWED_IN_QUESTION)
            if problem:
                raise HTTPException(400, problem)
        agent = service.agent(kw.get("llm"), kw.get("frontend"))  # checks both specs against the allow-lists
        try:
            args = spec.args.model_validate({n: kw[n] for n in spec.args.model_fields if kw[n] is not None})
        except ValidationError as exc:
            raise HTTPException(400, input_problem(spec, exc)) from None
        audio, shown = await slot_audio(service, spec.audio, kw, paths)
        options = JudgeOptions(llm=kw.get("llm") or settings.agent.planner,
                               frontend=kw.get("frontend") or settings.agent.frontend, trace_dir=settings.trace_dir,
                               registry=agent.registry, cache=agent.cache, timeout_s=settings.agent.timeout_s,
                               max_retries=settings.agent.max_retries,
                               time_budget_s=settings.agent.time_budget_s)  # ask's budget, one mechanism

        def public(text: object) -> str:
            out = str(text)
            for where, name in shown.items():
                out = out.replace(where, repr(name))
            return service.public(out)

        kind = f"judge_{spec.name}"
        try:
            result = await service.run(kind, lambda: spec.call(args, audio, options), request)
        except (AudioError, ValueError) as exc:
            raise HTTPException(400, public(exc)) from None
        except BackendError as exc:
            raise HTTPException(502, public(f"model backend failed: {exc}")) from None
        except OSError as exc:
            if not is_storage_error(exc):
                raise
            raise service.storage_refusal(exc, "the judge's trace") from None
        finally:
            service.release(audio.values())
        service.metrics.runs.labels(kind, "answered").inc()
        body = _public_paths(result.model_dump(mode="json"), shown)
        body.update(_trace_links(getattr(result, "trace_path", None)))
        body["trace_path"] = None  # a server path: the links above say where the trace is
        return JSONResponse(body)

    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]  # FastAPI reads the form here
    endpoint.__name__ = f"judge_{spec.name.replace('-', '_')}"
    app.post(f"/v1/judge/{spec.name}", summary=f"judge {spec.name}: {spec.summary}",
             response_model=_judge_response_model(spec),
             responses={k: ERRORS[k] for k in (400, 403, 404, 413, 429, 502, 507)})(endpoint)


def clip(text: str, limit: int) -> str:
    from audiomind.paths import clip_text

    return clip_text(text, limit)


def _public_paths(value: Any, shown: dict[str, str]) -> Any:
    """A judge's result with every server path of its audio replaced by the name the client gave it."""
    if isinstance(value, str):
        return shown.get(value, value)
    if isinstance(value, dict):
        return {k: _public_paths(v, shown) for k, v in value.items()}
    if isinstance(value, list):
        return [_public_paths(v, shown) for v in value]
    return value


def app_from_env() -> FastAPI:
    """The app factory uvicorn calls in each worker process (`--workers N`): settings from the environment."""
    raw = os.environ.get(SETTINGS_ENV)
    return create_app(ServeSettings.model_validate_json(raw) if raw else ServeSettings())


def intra_op_threads_for(concurrency: int, workers: int = 1) -> int:
    """Intra-op threads per model call when `workers` x `concurrency` runs share the machine's cores: the
    cores divided among the runs, at least 1. Oversubscribed OpenMP pools are pathological: on the busy
    2-core machine, Whisper with 2 threads per call took 5-18 s for a 10-second clip in a process that also
    ran other tools, and 1.8-3 s with 1 thread (audiomind.embedded.sessions: AUDIOMIND_INTRA_OP_THREADS)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, concurrency * workers))


def serve(settings: ServeSettings, *, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
          log_level: str = "info") -> None:
    """Run uvicorn with one app (one AudioMind) per worker process. Unless AUDIOMIND_INTRA_OP_THREADS is
    set, the models' intra-op threads are the cores shared out among the concurrent runs."""
    import uvicorn

    from audiomind.cli_common import fail
    from audiomind.embedded.sessions import THREADS_ENV
    from audiomind.http_bounds import header_deadline_protocol

    try:
        check_storage(settings)  # a read-only or full --trace-dir: one line and exit 4, before uvicorn starts
    except OSError as exc:
        fail(f"{exc}", code=4)
    os.environ.setdefault(THREADS_ENV, str(intra_op_threads_for(settings.concurrency, workers)))
    os.environ[SETTINGS_ENV] = settings.model_dump_json()
    uvicorn.run("audiomind.serve:app_from_env", factory=True, host=host, port=port, workers=workers,
                log_level=log_level, timeout_graceful_shutdown=30,
                http=header_deadline_protocol(settings.header_timeout_s))
