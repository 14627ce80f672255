"""The one obvious Python entry point: `AudioMind(...).ask(audio, question, choices=[...])`."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, cast

from pydantic import BaseModel

from audiomind.audio import AudioError
from audiomind.backends.base import FrontEnd, Planner
from audiomind.backends.deadline import BudgetExhausted
from audiomind.backends.policy import policy_of
from audiomind.backends.readers import make_question_reader
from audiomind.config import AgentConfig, apply_process_env
from audiomind.fsutil import storage_error
from audiomind.graph.build import build_graph, recursion_limit
from audiomind.graph.context import Context, GraphInput
from audiomind.graph.nodes import elapsed_s
from audiomind.prompts import all_prompt_hashes
from audiomind.state import (
    EvidenceState,
    Outcome,
    Question,
    RunInfo,
    new_run_id,
    package_versions,
    stable_ids,
    utcnow,
)
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolRegistry
from audiomind.trace import write_trace

FrontendFactory = Callable[[ToolExecutor], FrontEnd]
"""Makes a run's front end from that run's tool executor (the cascade listens through it)."""
PlannerArg = str | Planner
FrontendArg = str | FrontEnd | FrontendFactory


class AskResult(BaseModel):
    """What `ask` returns: the answer, why, how the run ended, and the whole typed trace."""

    answer: str
    choice: str | None
    choice_index: int | None
    rationale: str
    confidence: float | None = None
    confidence_reason: str = ""
    outcome: Outcome
    trace_path: str | None
    state: EvidenceState


class AudioMind:
    """An agent configured once (planner, front end, tools, bounds) and asked many questions."""

    def __init__(self, config: AgentConfig | None = None, /, *, planner: PlannerArg | None = None,
                 frontend: FrontendArg | None = None, **settings: Any):
        """`AudioMind(AgentConfig(...))`, or the same settings as keywords: `AudioMind(planner="rules",
        trace_dir="traces")`; keywords override the config's values. `planner` and `frontend` are spec
        strings, or backends already built: a Planner, a FrontEnd, or a factory making a run's FrontEnd
        from that run's ToolExecutor (then the config records the instance's spec)."""
        from audiomind.backends import registry as backends

        apply_process_env()  # OpenMP's wait policy before this agent's models load (importing sets nothing)
        if not isinstance(planner, (str, type(None))):
            settings["planner"] = planner.spec().spec
        elif planner is not None:
            settings["planner"] = planner
        if isinstance(frontend, str):
            settings["frontend"] = frontend
        elif isinstance(frontend, FrontEnd):
            settings["frontend"] = frontend.spec().spec
        given = {k: v for k, v in settings.items() if v is not None}
        self.config = cfg = AgentConfig.model_validate({**(config or AgentConfig()).model_dump(), **given})
        self.planner_spec, self.frontend_spec = cfg.planner, cfg.frontend
        self.registry = ToolRegistry.load([Path(d) for d in cfg.tools_dirs])
        self.trace_dir = Path(cfg.trace_dir)
        self.mode = cfg.mode
        self.window_s, self.timeout_s, self.max_retries = cfg.window_s, cfg.timeout_s, cfg.max_retries
        self.policy = policy_of(cfg)  # retries, rate limit, model-call cache: every model request of the agent
        self.cache = ToolCache(Path(cfg.cache_dir) if cfg.cache_dir else None) if cfg.use_cache else None
        # one question reader per agent (AgentConfig.reader), shared by the rules planner and the cascade
        self.reader = make_question_reader(cfg.reader, timeout_s=cfg.timeout_s, max_retries=cfg.max_retries)
        if planner is None or isinstance(planner, str):
            planner = backends.make_planner(cfg.planner, registry=self.registry, timeout_s=cfg.timeout_s,
                                            max_retries=cfg.max_retries, reader=self.reader, policy=self.policy)
        self.planner: Planner = planner
        # A front end is either shared by every run (a model front end: stateless, one HTTP client per
        # agent, made on first use) or made per run from the run's executor (the cascade).
        self._shared_frontend: FrontEnd | None = frontend if isinstance(frontend, FrontEnd) else None
        self._frontend_factory: FrontendFactory | None = None  # per run
        self._make_shared_frontend: FrontendFactory | None = None  # once, on first use
        if frontend is None or isinstance(frontend, str):
            def make(executor: ToolExecutor) -> FrontEnd:
                return backends.make_frontend(cfg.frontend, executor=executor, window_s=cfg.window_s,
                                              timeout_s=cfg.timeout_s, max_retries=cfg.max_retries,
                                              reader=self.reader, policy=self.policy,
                                              options=cfg.frontend_options)

            if backends.kind_of(cfg.frontend).per_run_frontend:
                self._frontend_factory = make
            else:
                self._make_shared_frontend = make
        elif self._shared_frontend is None:
            self._frontend_factory = cast("FrontendFactory", frontend)  # not a spec, not a FrontEnd: a factory

    def close(self) -> None:
        """Release what the agent's shared front end holds at its provider (Gemini's uploaded files); safe to
        call twice. A benchmark run closes its agents when it ends; `ask` when it has answered."""
        if self._make_shared_frontend is None:  # a front end the caller passed in is the caller's to close
            return
        fe, self._shared_frontend = self._shared_frontend, None  # made again on next use
        closer = getattr(fe, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def frontend_for(self, executor: ToolExecutor) -> FrontEnd:
        """The front end of a run that uses `executor`."""
        if self._frontend_factory is not None:
            return self._frontend_factory(executor)
        if self._shared_frontend is None:
            assert self._make_shared_frontend is not None
            self._shared_frontend = self._make_shared_frontend(executor)
        return self._shared_frontend

    def compiled_graph(self) -> Any:
        """The LangGraph graph of this agent's runs, compiled on first use and shared by every run: its shape
        depends only on the mode, and each run brings its own collaborators and limits as LangGraph's run
        context (see audiomind.graph.context)."""
        graph = self.__dict__.get("_compiled_graph")
        if graph is None:
            graph = self._compiled_graph = compile_shared(self.mode)
        return graph

    def new_state(self, audio: str | Path, question: str, choices: list[str] | None = None,
                  extra_audio: list[str | Path] | None = None, **meta: Any) -> EvidenceState:
        run_id = new_run_id()
        artifact_dir = (self.trace_dir / f"{run_id}.artifacts").resolve()
        return EvidenceState(
            run=RunInfo(
                run_id=run_id, started_at=utcnow(), prompt_hashes=all_prompt_hashes(), versions=package_versions(),
                max_steps=self.config.max_steps, time_budget_s=self.config.time_budget_s,
                frontend_window_s=self.window_s, artifact_dir=str(artifact_dir), mode=self.mode,
            ),
            question=Question(
                text=question, choices=list(choices or []), audio_path=_absolute(audio),
                extra_audio=[_absolute(p) for p in extra_audio or []],
                item_id=meta.get("item_id"), ground_truth=meta.get("ground_truth"), metadata=meta.get("metadata") or {},
            ),
        )

    def ask(
        self,
        audio: str | Path,
        question: str,
        choices: list[str] | None = None,
        *,
        extra_audio: list[str | Path] | None = None,
        item_id: str | None = None,
        ground_truth: str | None = None,
        metadata: dict[str, Any] | None = None,
        write: bool = True,
        trace_path: str | Path | None = None,
        progress: Callable[[Any], None] | None = None,
    ) -> AskResult:
        """Answer one question about one audio file (with `extra_audio`, about several clips: a multi-clip
        item's further clips, ingested as a1, a2, ... and heard with a0); the trace is written (atomically,
        durably; at `trace_path` when given) even when the run fails. A run that fails inside the loop raises
        with its final state attached as `exc.audiomind_state`, so a caller with `write=False` can still keep it."""
        from audiomind.inputs import check_question

        check_question(question, list(choices) if choices is not None else None)  # ValueError: one clear line
        from audiomind.limits import check_clips

        # --max-duration: every clip refused from its header before anything decodes it
        check_clips([audio, *(extra_audio or [])], self.config.max_duration_s)
        from audiomind.audio import probe

        for clip in [audio, *(extra_audio or [])]:
            probe(clip)  # missing / empty / non-audio input fails here with a clear AudioError
        state = self.new_state(audio, question, choices, extra_audio, item_id=item_id, ground_truth=ground_truth,
                               metadata=metadata)
        executor = ToolExecutor(self.registry, Path(state.run.artifact_dir), cache=self.cache)
        frontend = self.frontend_for(executor)
        direct = self.mode == "direct"
        state.run.models = [frontend.spec()] if direct else [self.planner.spec(), frontend.spec()]
        context = Context(config=self.config, planner=None if direct else self.planner, frontend=frontend,
                          executor=executor)
        graph = self.compiled_graph()  # compiled once per agent; its nodes read this run's context
        path = Path(trace_path) if trace_path else self.trace_dir / f"{state.run.run_id}.json"
        last: dict[str, Any] | EvidenceState = state
        try:
            run_input = GraphInput(question=state.question, run=state.run)
            with stable_ids(_id_seed(state, self.config)):  # the same item gives the same prompts: cacheable
                for values in graph.stream(run_input, {"recursion_limit": recursion_limit(context)},
                                           context=context, stream_mode="values"):
                    last = values
                    if progress is not None:  # the CLI's terminal progress line: the state after each node
                        progress(values)
        except AudioError:
            raise
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM in the CLI: what the run found is still put on record
            _record_interrupted(_as_state(last), path, write)
            raise
        except Exception as exc:
            _record_failure(exc, _as_state(last), path, write)
            raise
        final = _as_state(last)
        result = _result_of(final, str(path) if write else None)
        if write:
            _write_answered(final, result, path)
        return result


_OPEN_FILE = re.compile(r"^/(proc/(self|\d+)|dev)/fd/\d+$")


def _absolute(path: str | Path) -> str:
    """The path a run records and reads: resolved, except the name of an open descriptor (`/proc/PID/fd/N`:
    `serve` hands a run the file it opened and checked that way). Resolving that name would give back the
    file's name, which a client may have swapped for a symlink since the check (issue 35)."""
    text = os.path.abspath(path)
    return text if _OPEN_FILE.match(text) else str(Path(path).resolve())


def _id_seed(state: EvidenceState, config: AgentConfig) -> str:
    """What decides a run's ids (audiomind.state.stable_ids): the question, its clips by content, the
    settings that shape the run."""
    q = state.question
    return json.dumps([q.text, q.choices, q.item_id, q.audio_path, q.extra_audio, config.planner, config.frontend,
                       config.mode, config.max_steps], default=str)


def compile_shared(mode: str) -> Any:
    """The compiled graph for every run of an agent in this mode (one per agent; evals/overhead_benchmark.py
    times it under this name)."""
    return build_graph("direct" if mode == "direct" else "agent")


def _as_state(values: dict[str, Any] | EvidenceState) -> EvidenceState:
    return values if isinstance(values, EvidenceState) else EvidenceState.model_validate(values)


def _record_interrupted(stopped: EvidenceState, path: Path, write: bool) -> None:
    """An interrupted run's state as 'stopped', its trace written when it can be (the interrupt goes on)."""
    stopped.outcome = Outcome(status="stopped", reason="interrupted (Ctrl-C or SIGTERM) before it finished")
    stopped.run.finished_at = utcnow()
    stopped.run.wall_time_s = round(elapsed_s(stopped), 3)
    if write:
        with contextlib.suppress(OSError):
            write_trace(stopped, path)


def _record_failure(exc: Exception, failed: EvidenceState, path: Path, write: bool) -> None:
    """A failed run's state (its failed model call, a 'failed' outcome) attached to `exc` and written as its
    trace; a trace that cannot be written raises a storage error that carries both."""
    failed_call = getattr(exc, "model_call", None)  # BackendError carries its failed attempts
    if failed_call is not None:
        failed.model_calls.append(failed_call)
    bound = "time_budget" if isinstance(exc, BudgetExhausted) else None  # the budget, not the model
    failed.outcome = Outcome(status="failed", reason=f"{type(exc).__name__}: {exc}", bound_hit=bound)
    failed.run.finished_at = utcnow()
    failed.run.wall_time_s = round(elapsed_s(failed), 3)
    exc.audiomind_state = failed  # type: ignore[attr-defined]  # the failed run's evidence, for callers that keep it
    exc.audiomind_trace_path = None  # type: ignore[attr-defined]
    if write:
        try:
            write_trace(failed, path)
        except OSError as werr:  # disk full, read-only, ...: say both, keep the run's own error inside
            lost = storage_error(werr, path)
            lost.audiomind_state, lost.audiomind_run_error = failed, exc  # type: ignore[attr-defined]
            raise lost from exc
        exc.audiomind_trace_path = str(path)  # type: ignore[attr-defined]
    exc.add_note(f"audiomind trace of the failed run: {path if write else '(not written)'}")


def _result_of(final: EvidenceState, trace_path: str | None) -> AskResult:
    """The answer of a finished run as the caller gets it."""
    fa = final.final_answer
    return AskResult(
        # a multiple-choice run whose answer failed the format check has no answer: its prose is not one
        answer=(fa.choice or ("" if final.question.choices else fa.text)) if fa else "",
        choice=fa.choice if fa else None,
        choice_index=fa.choice_index if fa else None,
        rationale=fa.rationale if fa else (final.outcome.reason if final.outcome else ""),
        confidence=fa.confidence if fa else None,
        confidence_reason=fa.confidence_reason if fa else "",
        outcome=final.outcome or Outcome(status="failed", reason="run ended without an outcome"),
        trace_path=trace_path,
        state=final,
    )


def _write_answered(final: EvidenceState, result: AskResult, path: Path) -> None:
    """The finished run's trace; a write that fails raises a storage error carrying the answer."""
    try:
        write_trace(final, path)
    except OSError as werr:  # the answer is not lost: it travels with the error
        lost = storage_error(werr, path)
        lost.audiomind_state = final  # type: ignore[attr-defined]
        lost.audiomind_result = result.model_copy(update={"trace_path": None})  # type: ignore[attr-defined]
        raise lost from werr
