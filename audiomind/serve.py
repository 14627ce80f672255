"""`audiomind serve`: the agent as a warm HTTP service (FastAPI on uvicorn).

One `AudioMind` per worker process is built at start-up (and, with warm-up, asked one question so the
embedded models are loaded before the first request); every request shares it, and so shares the
process-wide model sessions and the tool-result cache. Endpoints:

- `POST /v1/ask`: multipart form: `question`, repeated `choices`, and either an `audio` upload or a `path`
  inside one of the served roots (`--root`; checked with audiomind.paths.resolve_under). Optional
  `planner` / `frontend` specs must be on the server's allow-list. Returns the answer and the trace id.
- `GET /v1/traces/{id}` (the trace JSON) and `GET /v1/traces/{id}/html` (the static viewer,
  audiomind.audit.html, as one self-contained page).
- `POST /v1/judge/edit|rubric|aura`: the judges' public functions (audiomind.judges).
- `GET /healthz`, `GET /metrics` (Prometheus text format), OpenAPI docs at `/docs`.

Concurrency is bounded: at most `concurrency` runs at once, at most `queue` more waiting; a request
beyond that is answered 429 at once (with Retry-After) instead of piling up. Uploaded audio is stored
content-addressed (`<trace_dir>/uploads/<sha256>.<ext>`), so the same clip uploaded twice is one file
and hits the tool cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, File, Form, HTTPException, UploadFile
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from audiomind.config import AgentConfig

SETTINGS_ENV = "AUDIOMIND_SERVE_SETTINGS"
TRACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_SUFFIX = re.compile(r"^\.[a-z0-9]{1,8}$")
JUDGES = ("edit", "rubric", "aura")


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


# ---- the service --------------------------------------------------------------------------------------

class Service:
    """What one worker holds: its settings, agents (one per allowed planner/front-end pair, made on first
    use; the default one at start-up), the run pool, the gate and the metrics."""

    def __init__(self, settings: ServeSettings, agent: Any = None):
        self.settings = settings
        self.metrics = Metrics()
        self.pool = ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="audiomind-run")
        self.gate: Gate | None = None  # made inside the event loop
        self._agents: dict[tuple[str, str], Any] = {}
        self._agents_lock = threading.Lock()
        self._html_lock = threading.Lock()
        if agent is not None:
            self._agents[(settings.agent.planner, settings.agent.frontend)] = agent
        settings.trace_dir.mkdir(parents=True, exist_ok=True)
        settings.upload_dir.mkdir(parents=True, exist_ok=True)
        self.roots = [Path(os.path.realpath(r)) for r in settings.roots]
        self.ready = False

    # -- agents
    def agent(self, planner: str | None = None, frontend: str | None = None) -> Any:
        s = self.settings
        planner, frontend = planner or s.agent.planner, frontend or s.agent.frontend
        if planner not in s.planners():
            raise HTTPException(400, f"planner {planner!r} is not allowed here; allowed: {', '.join(s.planners())}")
        if frontend not in s.frontends():
            raise HTTPException(400, f"front end {frontend!r} is not allowed here; allowed: "
                                     f"{', '.join(s.frontends())}")
        key = (planner, frontend)
        with self._agents_lock:
            if key not in self._agents:
                from audiomind.api import AudioMind

                self._agents[key] = AudioMind(s.agent.model_copy(update={"planner": planner, "frontend": frontend}))
            return self._agents[key]

    def warm_up(self) -> None:
        """Ask the default agent one question about a short synthetic clip (speech when flite is here, and
        beeps), so the models of the speech and sound passes are loaded before the first request."""
        from audiomind import synth

        agent = self.agent()
        with tempfile.TemporaryDirectory(prefix="audiomind-warmup-") as tmp:
            t = Path(tmp)
            parts = [synth.beeps(3, t / "beeps.wav")]
            with contextlib.suppress(Exception):  # no flite: the sound pass still warms up
                parts.insert(0, synth.speech("Good morning, the train leaves at nine.", t / "speech.wav"))
            clip = synth.concat(parts, t / "warmup.wav") if len(parts) > 1 else parts[0]
            agent.ask(clip, "How many beeps are there, and what does the speaker say?", write=False)
        self.ready = True

    # -- inputs
    def resolve_path(self, path: str) -> Path:
        from audiomind.paths import (
            MissingPathError,
            NotRegularFileError,
            OutsideRootsError,
            PathPolicyError,
            resolve_under,
        )

        if not self.roots:
            raise HTTPException(403, "this server serves no folders (start it with --root DIR to ask by path)")
        try:
            return resolve_under(path, self.roots, base=self.roots[0])
        except OutsideRootsError as exc:
            raise HTTPException(403, str(exc)) from None
        except MissingPathError as exc:
            raise HTTPException(404, str(exc)) from None
        except (NotRegularFileError, PathPolicyError) as exc:
            raise HTTPException(400, str(exc)) from None

    async def store_upload(self, upload: UploadFile) -> Path:
        """Copy an upload to `uploads/<sha256><ext>` (content-addressed) and check that it is audio."""
        limit = int(self.settings.max_upload_mb * 1024 * 1024)
        suffix = Path(upload.filename or "").suffix.lower()
        suffix = suffix if _SUFFIX.match(suffix) else ".bin"
        h, size = hashlib.sha256(), 0
        fd, tmp_name = tempfile.mkstemp(dir=self.settings.upload_dir, prefix=".upload-", suffix=suffix)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                while chunk := await upload.read(1 << 20):
                    size += len(chunk)
                    if size > limit:
                        raise HTTPException(413, f"upload larger than {self.settings.max_upload_mb:g} MB")
                    h.update(chunk)
                    out.write(chunk)
            if size == 0:
                raise HTTPException(400, f"the uploaded file {upload.filename or '(unnamed)'!r} is empty")
            dest = self.settings.upload_dir / f"{h.hexdigest()}{suffix}"
            if dest.exists():
                tmp.unlink()
            else:
                os.replace(tmp, dest)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        await asyncio.get_running_loop().run_in_executor(None, _check_audio, dest, upload.filename)
        return dest

    async def audio_input(self, upload: UploadFile | None, path: str | None, name: str = "audio") -> Path:
        if (upload is None) == (not path):
            raise HTTPException(400, f"give either an upload ({name!r} file) or a path ({name}_path / path), "
                                     "not both and not neither")
        return await self.store_upload(upload) if upload is not None else self.resolve_path(path or "")

    # -- running
    async def run(self, kind: str, fn: Callable[[], Any]) -> Any:
        """`fn` on the run pool under the gate; its wall time is recorded per kind."""
        assert self.gate is not None
        try:
            async with self.gate.slot():
                t0 = time.perf_counter()
                try:
                    return await asyncio.get_running_loop().run_in_executor(self.pool, fn)
                finally:
                    self.metrics.run_seconds.labels(kind).observe(time.perf_counter() - t0)
        except Busy:
            raise HTTPException(429, f"busy: {self.gate.running} run(s) in progress and {self.gate.waiting} "
                                     f"waiting (queue limit {self.gate.queue}); retry later",
                                headers={"Retry-After": "1"}) from None

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
        from audiomind.trace import load_trace

        f = self.trace_file(trace_id)
        out_dir = self.settings.trace_dir / "html"
        allow = [self.settings.upload_dir, *self.roots]
        with self._html_lock:
            st = load_trace(f)
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", st.run.run_id) or "trace"
            page = out_dir / f"{stem}.html"
            if page.exists() and page.stat().st_mtime >= f.stat().st_mtime:
                return page
            report = Auditor(confine_files=True, allow=allow).audit_file(f)
            return render_page(st, out_dir, f, report, embed=True, spectrograms=self.settings.html_spectrograms,
                               index_href=None, allow=allow)


def _check_audio(path: Path, name: str | None) -> None:
    from audiomind.audio import AudioError, probe

    try:
        probe(path)
    except AudioError as exc:
        path.unlink(missing_ok=True)
        reason = str(exc).replace(str(path), "").strip(" :()") or "unreadable"
        raise HTTPException(400, f"the uploaded file {name or '(unnamed)'!r} is not usable audio: {reason}") from None


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


class SizeLimitMiddleware:
    """413 before the body is read when Content-Length is over the limit (the upload copy enforces the
    limit again for bodies sent without a length)."""

    def __init__(self, app: Any, limit_bytes: int):
        self.app, self.limit = app, limit_bytes

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            for k, v in scope.get("headers", []):
                if k == b"content-length" and v.isdigit() and int(v) > self.limit:
                    body = json.dumps({"detail": f"request body larger than {self.limit / 1048576:.0f} MB"}).encode()
                    await send({"type": "http.response.start", "status": 413,
                                "headers": [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})
                    return
        await self.app(scope, receive, send)


def create_app(settings: ServeSettings | None = None, *, agent: Any = None) -> FastAPI:
    """The ASGI app of one worker. `agent`: an AudioMind to use as the default agent (tests inject one)."""
    from audiomind import __version__
    from audiomind.cli_common import quiet_libraries

    quiet_libraries()
    settings = settings or ServeSettings()
    service = Service(settings, agent)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service.gate = Gate(settings.concurrency, settings.queue, service.metrics)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(service.pool, service.agent)  # build the default agent (loads manifests)
        if settings.warmup:
            await loop.run_in_executor(service.pool, service.warm_up)
        service.ready = True
        yield
        service.pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="audiomind", version=__version__, lifespan=lifespan,
        description="Auditable agentic audio question answering: ask questions about audio, get the answer with "
                    "its typed evidence trace; run the judges. Every run writes a trace you can fetch as JSON or "
                    "as the HTML viewer.",
    )
    app.state.service = service

    @app.get("/healthz", summary="liveness and load")
    async def healthz() -> dict[str, Any]:
        from audiomind.embedded import sessions

        gate = service.gate
        return {
            "status": "ok", "ready": service.ready, "version": __version__,
            "planner": settings.agent.planner, "frontend": settings.agent.frontend,
            "in_flight": gate.running if gate else 0, "queued": gate.waiting if gate else 0,
            "concurrency": settings.concurrency, "queue_limit": settings.queue,
            "models_loaded": sessions.SESSIONS.loaded(),
        }

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response)
    async def metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST

        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/ask", response_model=AskResponse, summary="answer a question about an audio clip",
              responses={400: {"description": "bad input (not audio, empty question, spec not allowed)"},
                         403: {"description": "path outside the served roots"}, 404: {"description": "no such file"},
                         413: {"description": "upload too large"}, 429: {"description": "queue full"},
                         502: {"description": "a model backend failed (the trace is still written)"}})
    async def ask(
        question: Annotated[str, Form(description="the question about the audio")],
        choices: Annotated[list[str] | None, Form(description="answer options (repeat the field; 0 or >= 2)")] = None,
        audio: Annotated[UploadFile | None, File(description="the audio file (any format FFmpeg reads)")] = None,
        path: Annotated[str | None, Form(description="instead of an upload: a file under a served root")] = None,
        planner: Annotated[str | None, Form(description="planner spec (must be allowed by the server)")] = None,
        frontend: Annotated[str | None, Form(description="front-end spec (must be allowed by the server)")] = None,
        item_id: Annotated[str | None, Form(description="your id for this question (kept in the trace)")] = None,
    ) -> AskResponse:
        from audiomind.audio import AudioError
        from audiomind.backends.base import BackendError
        from audiomind.inputs import choices_problem, question_problem

        chosen = [c for c in (choices or [])]
        problem = question_problem(question) or (choices_problem(chosen) if chosen else None)
        if len(chosen) == 1:
            problem = "a multiple-choice question needs at least 2 choices (got 1)"
        if problem:
            raise HTTPException(400, problem)
        agent = service.agent(planner, frontend)
        clip = await service.audio_input(audio, path)
        meta = {"served_by": "audiomind serve", "upload_name": audio.filename if audio is not None else None}

        def work() -> Any:
            return agent.ask(clip, question, chosen or None, item_id=item_id, metadata=meta)

        try:
            result = await service.run("ask", work)
        except AudioError as exc:
            raise HTTPException(400, str(exc)) from None
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        except BackendError as exc:
            st = getattr(exc, "audiomind_state", None)
            if st is not None:
                service.metrics.observe_state("ask", st)
            tid = st.run.run_id if st is not None else None
            raise HTTPException(502, {"error": f"model backend failed: {exc}", **_trace_links(
                str(settings.trace_dir / f"{tid}.json") if tid else None)}) from None
        st = result.state
        service.metrics.observe_state("ask", st)
        return AskResponse(
            run_id=st.run.run_id, answer=result.answer, choice=result.choice, choice_index=result.choice_index,
            rationale=result.rationale, confidence=result.confidence, confidence_reason=result.confidence_reason,
            outcome=result.outcome.model_dump(mode="json"), wall_time_s=st.run.wall_time_s,
            tool_calls=len(st.tool_calls),
            cached_tool_calls=sum(1 for c in st.tool_calls if getattr(c.status, "value", c.status) == "cached"),
            **_trace_links(result.trace_path),
        )

    @app.get("/v1/traces/{trace_id}", summary="a trace as JSON", response_class=FileResponse)
    async def trace_json(trace_id: str) -> FileResponse:
        return FileResponse(service.trace_file(trace_id), media_type="application/json")

    @app.get("/v1/traces/{trace_id}/html", summary="a trace in the HTML viewer", response_class=HTMLResponse)
    async def trace_html(trace_id: str) -> FileResponse:
        page = await asyncio.get_running_loop().run_in_executor(None, service.render_html, trace_id)
        return FileResponse(page, media_type="text/html; charset=utf-8")

    @app.post("/v1/judge/{kind}", summary="run a judge (edit | rubric | aura)",
              responses={400: {"description": "bad input"}, 429: {"description": "queue full"}})
    async def judge(
        kind: str,
        instruction: Annotated[str | None, Form(description="edit / rubric: the instruction")] = None,
        original_description: Annotated[str | None, Form(description="edit: caption of the original")] = None,
        target_description: Annotated[str | None, Form(description="edit: caption the edit should fit")] = None,
        question: Annotated[str | None, Form(description="aura: the question")] = None,
        reference: Annotated[str | None, Form(description="aura: the reference answer")] = None,
        response: Annotated[str | None, Form(description="aura: the answer to score")] = None,
        mode: Annotated[str, Form(description="aura: paper | two_threshold")] = "paper",
        threshold: Annotated[float, Form(ge=0.0, le=1.0, description="rubric: aligned at this mean p(yes)")] = 0.75,
        llm: Annotated[str | None, Form(description="text model spec (an allowed planner spec)")] = None,
        frontend: Annotated[str | None, Form(description="edit / rubric: front-end spec (allowed)")] = None,
        audio: Annotated[UploadFile | None, File(description="rubric / aura: the audio")] = None,
        audio_path: Annotated[str | None, Form(description="rubric / aura: the audio under a served root")] = None,
        original: Annotated[UploadFile | None, File(description="edit: the original audio")] = None,
        original_path: Annotated[str | None, Form(description="edit: the original under a served root")] = None,
        edited: Annotated[UploadFile | None, File(description="edit: the edited audio")] = None,
        edited_path: Annotated[str | None, Form(description="edit: the edited audio under a served root")] = None,
    ) -> JSONResponse:
        from audiomind.audio import AudioError
        from audiomind.backends.base import BackendError

        if kind not in JUDGES:
            raise HTTPException(404, f"no judge {kind!r}; judges: {', '.join(JUDGES)}")
        agent = service.agent(llm, frontend)  # checks both specs against the allow-lists
        llm_spec, fe_spec = llm or settings.agent.planner, frontend or settings.agent.frontend
        common = {"trace_dir": settings.trace_dir, "registry": agent.registry, "timeout_s": settings.agent.timeout_s,
                  "max_retries": settings.agent.max_retries}
        if kind == "edit":
            from audiomind.judges.edit import judge_edit

            if not (instruction or target_description):
                raise HTTPException(400, "the edit judge needs an instruction or a target_description")
            a = await service.audio_input(original, original_path, "original")
            b = await service.audio_input(edited, edited_path, "edited")

            def work() -> Any:
                return judge_edit(a, b, instruction=instruction, original_description=original_description,
                                  target_description=target_description, llm=llm_spec, frontend=fe_spec,
                                  cache=agent.cache, **common)
        elif kind == "rubric":
            from audiomind.judges.rubric import judge_rubric

            if not instruction:
                raise HTTPException(400, "the rubric judge needs an instruction")
            a = await service.audio_input(audio, audio_path)

            def work() -> Any:
                return judge_rubric(a, instruction, llm=llm_spec, frontend=fe_spec, threshold=threshold,
                                    cache=agent.cache, **common)
        else:
            from audiomind.judges.aura import aura_score

            if not (question and reference and response):
                raise HTTPException(400, "the aura judge needs question, reference and response")
            if mode not in ("paper", "two_threshold"):
                raise HTTPException(400, "mode must be paper or two_threshold")
            a = await service.audio_input(audio, audio_path) if (audio is not None or audio_path) else None

            def work() -> Any:
                return aura_score(question, reference, response, a, llm=llm_spec, mode=mode, **common)

        try:
            result = await service.run(f"judge_{kind}", work)
        except (AudioError, ValueError) as exc:
            raise HTTPException(400, str(exc)) from None
        except BackendError as exc:
            raise HTTPException(502, f"model backend failed: {exc}") from None
        service.metrics.runs.labels(f"judge_{kind}", "answered").inc()
        body = result.model_dump(mode="json")
        body.update(_trace_links(getattr(result, "trace_path", None)))
        return JSONResponse(body)

    # outermost last: metrics see every response (413 and 429 included) with its route and status
    app.add_middleware(SizeLimitMiddleware, limit_bytes=int(settings.max_upload_mb * 1048576) + 65536)
    app.add_middleware(MetricsMiddleware, metrics=service.metrics)
    return app


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

    from audiomind.embedded.sessions import THREADS_ENV

    os.environ.setdefault(THREADS_ENV, str(intra_op_threads_for(settings.concurrency, workers)))
    os.environ[SETTINGS_ENV] = settings.model_dump_json()
    uvicorn.run("audiomind.serve:app_from_env", factory=True, host=host, port=port, workers=workers,
                log_level=log_level, timeout_graceful_shutdown=30)
