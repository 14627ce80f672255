"""The tool executor: validates every call against the tool's manifest and argument model, runs
independent calls in parallel with per-tool timeouts, isolates errors to their call, validates every
result (fresh or cached) against the manifest's output model, caches results on disk, registers derived
artifacts with provenance, and turns claims into evidence items.

Nothing a planner asks for reaches a tool unvalidated; every rejection is recorded with a reason the
planner can read on its next step.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import inspect
import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from audiomind.artifacts import make_artifact
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
    ) -> ExecutionResult:
        """Run independent calls in parallel; the result lists calls in request order."""
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
                issued_by=issued_by,  # type: ignore[arg-type]
            )
            prepared.append((call, manifest if not problem else None, args))

        results: dict[str, ToolResult] = {}
        runnable = [(c, m, a) for c, m, a in prepared if m is not None and a is not None]
        if runnable:
            # Every call of a step gets its own thread, so each timeout counts from that call's own start
            # (a queued call must never time out before it ran); max_workers only caps pathological steps.
            pool = cf.ThreadPoolExecutor(max_workers=max(1, min(max(self.max_workers, len(runnable)), 32)))
            try:
                t0 = time.monotonic()
                futures = {
                    c.id: (pool.submit(self._run_one, c, m, a, by_id), m) for c, m, a in runnable
                }
                for call, _manifest, args in runnable:
                    fut, m = futures[call.id]
                    limit = effective_timeout(m, args, by_id)
                    call.timeout_s = round(limit, 1)
                    try:
                        remaining = max(0.0, limit - (time.monotonic() - t0))
                        result, cached, key, duration = fut.result(timeout=remaining)
                        results[call.id] = result
                        call.status = ToolCallStatus.cached if cached else ToolCallStatus.ok
                        call.cache_key = key
                        call.duration_s = round(duration, 4)
                        call.output = result.output
                        if isinstance(result.output.get("coverage"), dict):
                            call.coverage = Coverage.model_validate(result.output["coverage"])
                    except cf.TimeoutError:
                        call.status = ToolCallStatus.timeout
                        call.duration_s = round(time.monotonic() - t0, 4)
                        call.error = (f"{call.tool} exceeded its {limit:.0f} s timeout"
                                      + (f" (manifest {m.timeout_s:.0f} s, scaled to the audio's length)"
                                         if limit > m.timeout_s else ""))
                    except OutputMismatch as exc:  # the tool ran but broke its declared output contract
                        call.status = ToolCallStatus.error
                        call.error = str(exc)
                    except Exception as exc:  # noqa: BLE001 - isolated to this call, recorded in the trace
                        call.status = ToolCallStatus.error
                        call.error = f"{type(exc).__name__}: {exc}"
            finally:
                pool.shutdown(wait=False, cancel_futures=True)

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
