"""The tool executor: validates every call against the tool's manifest and argument model, runs
independent calls in parallel with per-tool timeouts, isolates errors to their call, validates every
result (fresh or cached) against the manifest's output model, caches results on disk, registers derived
artifacts with provenance, and turns claims into evidence items.

Nothing a planner asks for reaches a tool unvalidated; every rejection is recorded with a reason the
planner can read on its next step.
"""

from __future__ import annotations

import atexit
import contextvars
import functools
import hashlib
import inspect
import json
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from audiomind.artifacts import make_artifact
from audiomind.audio import DecodeDeadline, decode_deadline
from audiomind.embedded.dsp import numba_compiles
from audiomind.embedded.models import cache_dir
from audiomind.fsutil import atomic_write
from audiomind.state import Artifact, Coverage, EvidenceItem, ToolCall, ToolCallRequest, ToolCallStatus
from audiomind.tools.base import ToolContext, ToolResult
from audiomind.tools.manifest import ToolManifest, ToolRegistry
from audiomind.tools.text import listed


class OutputMismatch(ValueError):
    """A tool's output does not fit the output model its manifest names."""


def check_output(manifest: ToolManifest, output: dict[str, Any]) -> dict[str, Any]:
    """The output validated against the manifest's output model and dumped as JSON-ready data (unchanged
    for a manifest without one); OutputMismatch, with the first three problems, when it does not fit."""
    model = manifest.output_class
    if model is None:
        return output
    try:
        return model.model_validate(output).model_dump(mode="json")
    except ValidationError as exc:
        errors = exc.errors()
        problems = listed(errors, 3, lambda e: f"{'.'.join(str(x) for x in e['loc']) or 'output'}: {e['msg']}",
                          sep="; ")
        raise OutputMismatch(f"output does not match {model.__name__}: {problems}") from None


TIMEOUT_REFERENCE_S = 600.0
"""A manifest's timeout_s is for audio up to this long; a longer artifact scales it in proportion (the tools
walk the audio in windows, so their time is linear in its length). The timeout used is on the call."""


def effective_timeout(manifest: ToolManifest, arguments: dict[str, Any] | None,
                      artifacts: dict[str, Artifact]) -> float:
    """The call's timeout: the manifest's, times the longest input artifact's length over
    TIMEOUT_REFERENCE_S when that is above 1."""
    longest = max((artifacts[v].duration_s or 0.0 for k, v in (arguments or {}).items()
                   if (k == "artifact" or k.endswith("_artifact")) and isinstance(v, str) and v in artifacts),
                  default=0.0)
    return float(manifest.timeout_s) * max(1.0, longest / TIMEOUT_REFERENCE_S)


class TimeBudget(Protocol):
    """What the executor reads of a run's time budget (audiomind.backends.deadline.Budget is one): its total
    and what is left of it, in seconds."""

    seconds: float

    def remaining(self) -> float: ...


def _limit(own: float, budget: TimeBudget | None) -> tuple[float, bool]:
    """(seconds a call may run, whether the budget is what limits it): min(its timeout, the budget left)."""
    left = budget.remaining() if budget is not None else None
    return (own, False) if left is None or own < left else (left, True)


class ExecutionResult(BaseModel):
    tool_calls: list[ToolCall] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)


class ToolCache:
    """Results on disk keyed by (tool, tool version, validated arguments, input content sha256)."""

    def __init__(self, root: Path | None = None):
        self.root = root or cache_dir() / "tool-results"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            pass  # an unwritable cache is an empty one: every lookup misses, nothing is stored (see put)

    @staticmethod
    def key(manifest: ToolManifest, arguments: dict[str, Any], input_hashes: dict[str, str]) -> str:
        blob = json.dumps(
            {"tool": manifest.name, "version": manifest.version, "args": arguments, "inputs": input_hashes},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> ToolResult | None:
        path = self.root / key[:2] / f"{key}.json"
        if not path.exists():
            return None
        try:
            return ToolResult.model_validate_json(path.read_text())
        except Exception:  # noqa: BLE001 - a corrupt entry is a miss, never a crash
            return None

    def put(self, key: str, result: ToolResult) -> None:
        """Store a result; a cache that cannot be written (disk full, read-only) only misses next time."""
        try:
            atomic_write(self.root / key[:2] / f"{key}.json", result.model_dump_json())
        except OSError:
            pass


class ToolExecutor:
    def __init__(
        self,
        registry: ToolRegistry,
        derived_dir: Path,
        cache: ToolCache | None = None,
        max_workers: int = 4,
        allowed: set[str] | None = None,
    ):
        self.registry = registry
        self.derived_dir = Path(derived_dir)
        self.cache = cache
        self.max_workers = max_workers
        self.allowed = allowed  # None = every available tool

    # ---- validation -------------------------------------------------------------------------------
    def _validate(
        self, req: ToolCallRequest, artifacts: dict[str, Artifact]
    ) -> tuple[ToolManifest | None, dict[str, Any] | None, str | None]:
        if req.tool not in self.registry:
            known = ", ".join(sorted(m.name for m in self.registry.available()))
            return None, None, f"unknown tool {req.tool!r}; available tools: {known}"
        manifest = self.registry.get(req.tool)
        if self.allowed is not None and req.tool not in self.allowed:
            return manifest, None, f"tool {req.tool!r} is not enabled for this run"
        ok, why = self.registry.availability(req.tool)
        if not ok:
            return manifest, None, f"tool {req.tool!r} is unavailable here: {why}"
        try:
            args = manifest.args_model.model_validate(req.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return manifest, None, f"invalid arguments for {req.tool!r}: {problems}"
        dumped = args.model_dump(mode="json")
        for name, value in dumped.items():
            if ((name == "artifact" or name.endswith("_artifact")) and isinstance(value, str)
                    and value not in artifacts):
                return manifest, None, f"unknown artifact {value!r} for {name}; known: {sorted(artifacts)}"
        return manifest, dumped, None

    # ---- execution --------------------------------------------------------------------------------
    def run(
        self,
        requests: list[ToolCallRequest],
        artifacts: list[Artifact],
        step: int,
        issued_by: str = "planner",
        *,
        budget: TimeBudget | None = None,
    ) -> ExecutionResult:
        """Run independent calls in parallel; the result lists calls in request order. With the run's time
        `budget`, no call starts once it is spent and none is waited for past it (see `_run_all`)."""
        by_id = {a.id: a for a in artifacts}
        prepared: list[tuple[ToolCall, ToolManifest | None, dict[str, Any] | None]] = []
        for req in requests:
            manifest, args, problem = self._validate(req, by_id)
            call = ToolCall(
                step=step,
                tool=req.tool,
                tool_version=manifest.version if manifest else None,
                category=manifest.category if manifest else None,
                requested_arguments=req.arguments,
                arguments=args,
                status=ToolCallStatus.rejected if problem else ToolCallStatus.ok,
                error=problem,
                issued_by=issued_by,
            )
            prepared.append((call, manifest if not problem else None, args))

        runnable = [(c, m, a) for c, m, a in prepared if m is not None and a is not None]
        results = self._run_all(runnable, by_id, budget) if runnable else {}

        out = ExecutionResult()
        next_num = max((int(a.id[1:]) for a in artifacts if a.id[1:].isdigit()), default=-1) + 1
        for call, _, _ in prepared:
            out.tool_calls.append(call)
            result = results.get(call.id)
            if result is None:
                continue
            for derived in result.derived:
                art = make_artifact(
                    f"a{next_num}",
                    derived.path,
                    derived_from=derived.source_artifact,
                    operation=derived.operation,
                    parameters=derived.parameters,
                    created_by=call.id,
                )
                next_num += 1
                call.derived_artifact_ids.append(art.id)
                out.artifacts.append(art)
            for claim in result.claims:
                out.evidence.append(
                    EvidenceItem(
                        claim=claim.text,
                        source_type="tool_call",
                        source_id=call.id,
                        tool=call.tool,
                        category=call.category,
                        artifact_id=(call.arguments or {}).get("artifact"),
                        confidence=claim.confidence,
                        data=claim.data,
                    )
                )
        return out

    def _run_all(self, runnable: list[tuple[ToolCall, ToolManifest, dict[str, Any]]],
                 by_id: dict[str, Artifact], budget: TimeBudget | None) -> dict[str, ToolResult]:
        """Run the validated calls, each in its own daemon thread (a timeout counts from the call's own start;
        an abandoned call never holds the process open at exit), each bounded by min(its timeout, what is left
        of the run's time `budget`). A call the budget leaves no time for is not
        started; one still running at its deadline is abandoned, and its decoding stops at the next block
        (audiomind.audio.decode_deadline). Updates the calls; returns the results of the calls that ran."""
        results: dict[str, ToolResult] = {}
        t0 = time.monotonic()
        started: list[tuple[ToolCall, ToolManifest, float, bool, _Running]] = []
        gate = threading.BoundedSemaphore(max(1, min(max(self.max_workers, len(runnable)), 32)))  # pathological steps
        for call, manifest, args in runnable:
            own = effective_timeout(manifest, args, by_id)
            limit, by_budget = _limit(own, budget)
            call.timeout_s = round(own, 1)
            if limit <= 0 and budget is not None:
                call.status, call.duration_s = ToolCallStatus.timeout, 0.0
                call.error = f"skipped: the run's time budget of {budget.seconds:g} s was spent before it could start"
                continue
            expires = t0 + limit
            started.append((call, manifest, limit, by_budget, _Running(self._run_one, expires, gate, call,
                                                                       manifest, args, by_id)))
        for call, manifest, limit, by_budget, running in started:
            try:
                result, cached, key, duration = running.result(max(0.0, running.expires - time.monotonic()))
                results[call.id] = result
                call.status = ToolCallStatus.cached if cached else ToolCallStatus.ok
                call.cache_key = key
                call.duration_s = round(duration, 4)
                call.output = result.output
                if isinstance(result.output.get("coverage"), dict):
                    call.coverage = Coverage.model_validate(result.output["coverage"])
            except (TimeoutError, DecodeDeadline):
                running.abandon()
                call.status = ToolCallStatus.timeout
                call.duration_s = round(time.monotonic() - t0, 4)
                call.error = _timeout_reason(call.tool, manifest, limit, budget if by_budget else None)
            except OutputMismatch as exc:  # the tool ran but broke its declared output contract
                call.status = ToolCallStatus.error
                call.error = str(exc)
            except Exception as exc:  # noqa: BLE001 - isolated to this call, recorded in the trace
                call.status = ToolCallStatus.error
                call.error = f"{type(exc).__name__}: {exc}"
        return results

    def _run_one(
        self, call: ToolCall, manifest: ToolManifest, arguments: dict[str, Any], artifacts: dict[str, Artifact]
    ) -> tuple[ToolResult, bool, str | None, float]:
        input_hashes = {
            k: artifacts[v].sha256
            for k, v in arguments.items()
            if (k == "artifact" or k.endswith("_artifact")) and isinstance(v, str) and v in artifacts
        }
        key = None
        use_cache = self.cache is not None and manifest.cacheable and not manifest.derives_audio
        if use_cache:
            hashed_args = {k: v for k, v in arguments.items() if k not in input_hashes}
            key = ToolCache.key(manifest, hashed_args, input_hashes)
            t_lookup = time.monotonic()
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None:
                try:
                    hit.output = check_output(manifest, hit.output)
                    return hit, True, key, time.monotonic() - t_lookup
                except OutputMismatch:
                    pass  # an entry written before the output model changed: a miss, run the tool again
        ctx = ToolContext(artifacts, self.derived_dir, executor=self)
        args = manifest.args_model.model_validate(arguments)
        t0 = time.monotonic()
        if calls_numba(manifest.callable):  # its first run per process holds the numba-cache lock (dsp)
            with numba_compiles(manifest.name):
                result = manifest.callable(args, ctx)
        else:
            result = manifest.callable(args, ctx)
        duration = time.monotonic() - t0
        if not isinstance(result, ToolResult):
            raise TypeError(f"{manifest.entry} returned {type(result).__name__}, expected ToolResult")
        model = manifest.output_class
        if (ctx.coverage is not None and "coverage" not in result.output and model is not None
                and "coverage" in model.model_fields):
            result.output["coverage"] = ctx.coverage  # what the tool recorded it analysed (tools.window.excerpt)
        result.output = check_output(manifest, result.output)  # a mismatch is never cached
        if use_cache and key:
            self.cache.put(key, result)  # type: ignore[union-attr]
        return result, False, key, duration


@functools.cache
def calls_numba(fn) -> bool:
    """Whether a tool's module imports librosa (whose kernels numba compiles and caches on disk)."""
    module = sys.modules.get(getattr(fn, "__module__", ""))
    try:
        return module is not None and "import librosa" in inspect.getsource(module)
    except (OSError, TypeError):
        return False


def _timeout_reason(tool: str, manifest: ToolManifest, limit: float, budget: TimeBudget | None) -> str:
    """Why a call was abandoned: the run's time budget (when that is what limited it), or the tool's own
    (length-scaled) timeout."""
    if budget is not None:
        return (f"{tool} was stopped after {limit:.1f} s: the run's time budget of {budget.seconds:g} s ran out "
                "while it ran")
    return (f"{tool} exceeded its {limit:.0f} s timeout"
            + (f" (manifest {manifest.timeout_s:.0f} s, scaled to the audio's length)"
               if limit > manifest.timeout_s else ""))


class _Running:
    """`fn(*args)` started at once in a daemon thread with a copy of the caller's context, holding `gate` while
    it runs, with `expires` as its decode deadline; `result(wait)` gives its value or raises what it
    raised, or TimeoutError when it is not over within `wait` seconds (it is then left to end on its own)."""

    def __init__(self, fn: Any, expires: float, gate: threading.BoundedSemaphore, *args: Any):
        self.expires = expires
        self._box: dict[str, Any] = {}
        self._done = threading.Event()
        ctx = contextvars.copy_context()

        def target() -> None:
            try:
                with gate, decode_deadline(expires):
                    self._box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                self._box["error"] = exc
            finally:
                self._done.set()

        self._thread = threading.Thread(target=lambda: ctx.run(target), name="audiomind-tool", daemon=True)
        self._thread.start()

    def abandon(self) -> None:
        """No one waits for it any more: it is joined (briefly) at exit, see `_join_abandoned`."""
        if self._thread.is_alive():
            _ABANDONED.add(self._thread)

    def result(self, wait: float) -> Any:
        if not self._done.wait(wait):
            raise TimeoutError("not over in time")
        if "error" in self._box:
            raise self._box["error"]
        return self._box["value"]


_ABANDONED: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
ABANDONED_EXIT_WAIT_S = 10.0
"""How long the process waits at exit, in all, for tool calls it stopped waiting for: they stop at their next
window or block (audiomind.audio.check_deadline), and a native library (onnxruntime) still running in a thread
while the interpreter shuts down can abort the process ("terminate called without an active exception")."""


@atexit.register
def _join_abandoned() -> None:
    until = time.monotonic() + ABANDONED_EXIT_WAIT_S
    for thread in list(_ABANDONED):
        thread.join(max(0.0, until - time.monotonic()))
