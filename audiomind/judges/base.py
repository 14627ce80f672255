"""What every judge shares: a typed record of its run that is an ordinary audiomind trace.

A judge run is written as an `EvidenceState`: the question is the judge task, the artifacts are the clips
it judged, the tool calls and front-end observations are the perception it used, every model request is
a `ModelCall`, each reasoning step of the judge is an evidence item sourced from the judge's own call
(tool `judge_<kind>`, category `evaluation`, whose output is the whole typed result), and the final answer
is the verdict. So `audiomind trace validate`, the auditor and any trace viewer read judge runs unchanged.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field

from audiomind import config
from audiomind.artifacts import make_artifact
from audiomind.backends.deadline import BudgetExhausted, current_budget, run_budget
from audiomind.config import Settings
from audiomind.prompts import all_prompt_hashes
from audiomind.state import (
    Action,
    Artifact,
    EvidenceItem,
    EvidenceState,
    FinalAnswer,
    ModelCall,
    ModelSpec,
    Observation,
    Outcome,
    PlannerDecision,
    Question,
    RunInfo,
    ToolCall,
    ToolCallRequest,
    ToolCallStatus,
    ToolCategory,
    new_id,
    new_run_id,
    package_versions,
    utcnow,
)
from audiomind.trace import write_trace

if TYPE_CHECKING:
    from audiomind.judges.llm import AudioJudge, JudgeLLM
    from audiomind.tools.executor import ToolExecutor

R = TypeVar("R", bound=BaseModel)


class JudgeStep(BaseModel):
    """One step of a judge's reasoning, as text plus its machine-readable data."""

    number: int
    name: str
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class JudgeModels(BaseModel):
    """Which models a judge used: a text LLM (or the transparent rules) and an audio front end."""

    llm: str = "rules"
    frontend: str = "cascade"


def default_models(settings: Settings | None = None) -> JudgeModels:
    """The judges' models from the settings `judge_llm` / `judge_frontend` (default: the active ones; env
    AUDIOMIND_JUDGE_LLM / AUDIOMIND_JUDGE_FRONTEND): the tool entry points take no model arguments, so the
    agent's planner cannot point them at arbitrary endpoints."""
    s = settings or config.settings()
    return JudgeModels(llm=s.judge_llm, frontend=s.judge_frontend)


def _shared_registry():
    from audiomind.tools.manifest import ToolRegistry

    return ToolRegistry.load()


class JudgeSession:
    """The scaffold every judge runs on: it opens the judge's evidence state (the judged clips as a0, a1, ...)
    and its models, runs tools through an executor, records each reasoning step and model call, and writes
    the whole run as a trace. A judge function holds its method only:

        session = JudgeSession("rubric", task, [audio], models=..., trace_dir=..., executor=...)
        text_llm, audio_judge = session.open_models(fallback_frontend_spec)
        ... session.run_tools(...), session.add(JudgeStep(...)), session.note(...) ...
        return session.conclude(verdict, rationale, result)

    `executor`: the run's executor when the judge is called as a tool (its registry, cache and policy
    apply to the judge's own tool calls); without one the session builds its own over `registry` (default:
    the shipped manifests) and `cache`."""

    def __init__(
        self,
        kind: str,
        task: str,
        audio_paths: list[str | Path],
        *,
        trace_dir: str | Path | None = "traces",
        models: JudgeModels | None = None,
        registry: Any = None,
        cache: Any = None,
        executor: ToolExecutor | None = None,
        inputs: dict[str, Any] | None = None,
        timeout_s: float = 120,
        max_retries: int = 3,
    ):
        from audiomind.tools.executor import ToolExecutor

        config.apply_process_env()  # OpenMP's wait policy before the judge's models load (importing sets nothing)
        self.kind = kind
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.steps: list[JudgeStep] = []
        self.substitutes: dict[str, str] = {}
        self.t0 = time.monotonic()
        self.models = models or JudgeModels()
        run_id = new_run_id(f"judge-{kind}", hex_chars=6)
        self.trace_dir = Path(trace_dir) if trace_dir is not None else None
        base = self.trace_dir if self.trace_dir is not None else Path(os.environ.get("TMPDIR", "/tmp")) / "audiomind-judges"
        artifact_dir = (base / f"{run_id}.artifacts").resolve()
        self.artifacts: list[Artifact] = []
        for i, p in enumerate(audio_paths):
            self.artifacts.append(make_artifact(f"a{i}", p, operation="input"))
        first = str(Path(audio_paths[0]).resolve()) if audio_paths else ""
        self.state = EvidenceState(
            run=RunInfo(run_id=run_id, started_at=utcnow(), prompt_hashes=all_prompt_hashes(),
                        versions=package_versions(), max_steps=8, time_budget_s=600.0, frontend_window_s=30.0,
                        artifact_dir=str(artifact_dir)),
            question=Question(text=task, audio_path=first, item_id=None,
                              metadata={"judge": kind, "inputs": inputs or {}}),
            artifacts=list(self.artifacts),
        )
        if executor is not None:
            self.registry, self.executor = executor.registry, executor
        else:
            self.registry = registry or _shared_registry()
            self.executor = ToolExecutor(self.registry, artifact_dir, cache=cache)
        self.judge_call = ToolCall(step=0, tool=f"judge_{kind}", tool_version="1", category=ToolCategory.evaluation,
                                   requested_arguments=inputs or {}, arguments=inputs or {},
                                   status=ToolCallStatus.ok, issued_by="planner")
        self._decisions = 0
        self.finished = False
        self._record_lock = threading.Lock()
        budget = current_budget()
        if budget is not None:  # the trace says which budget the judge ran under
            self.state.run.time_budget_s = budget.seconds
        opened = _OPEN_SESSIONS.get()
        if opened is not None:  # judge_run: a judge that does not finish still leaves its trace
            opened.append(self)

    # -- perception
    def tool_available(self, name: str) -> bool:
        return name in self.registry and self.registry.availability(name)[0]

    def run_tools(self, requests: list[ToolCallRequest], rationale: str, issued_by: str = "frontend"):
        """Run tool calls in parallel through the executor; they go on the record with a decision."""
        self._decide(Action.CALL_TOOLS, rationale, requests)
        # the judge run's time budget (judge_run, as ask's --time-budget): no tool call starts once it is spent,
        # and none is waited for past it (a hanging tool is abandoned, recorded as a timeout)
        budget = current_budget()
        res = self.executor.run(requests, self.state.artifacts, step=self._decisions - 1, issued_by=issued_by,
                                **({"budget": budget} if budget is not None else {}))
        self.state.tool_calls.extend(res.tool_calls)
        self.state.evidence.extend(res.evidence)
        self.state.artifacts.extend(res.artifacts)
        return res

    def add_observation(self, obs: Observation) -> None:
        self.state.observations.append(obs)

    def add_model_call(self, call: ModelCall | None) -> None:
        if call is not None:
            self.state.model_calls.append(call)

    def set_model_specs(self, specs: list[ModelSpec]) -> None:
        self.state.run.models = specs

    def open_models(self, fallback_frontend: ModelSpec, *, listen: bool = True
                    ) -> tuple[JudgeLLM | None, AudioJudge | None]:
        """The judge's text LLM and (when `listen`) audio front end from `self.models`, None for the offline
        rules / cascade; recorded as the run's models, the LLM first, then the front end or, without one,
        `fallback_frontend` (what perceives the audio instead)."""
        from audiomind.judges.llm import make_audio_judge, make_llm

        text_llm = make_llm(self.models.llm, timeout_s=self.timeout_s, max_retries=self.max_retries)
        audio = (make_audio_judge(self.models.frontend, timeout_s=self.timeout_s, max_retries=self.max_retries)
                 if listen else None)
        specs = [text_llm.model_spec()] if text_llm is not None else []
        specs.append(audio.model_spec() if audio is not None else fallback_frontend)
        self.set_model_specs(specs)
        return text_llm, audio

    def _decide(self, action: Action, rationale: str, requests: list[ToolCallRequest] | None = None) -> None:
        self.state.decisions.append(PlannerDecision(step=self._decisions, action=action, rationale=rationale,
                                                    tool_calls=list(requests or []), planner=f"judge:{self.kind}"))
        self._decisions += 1

    # -- reasoning steps
    def step(self, step: JudgeStep) -> EvidenceItem:
        item = EvidenceItem(claim=f"[{self.kind} judge, step {step.number}: {step.name}] {step.text}",
                            source_type="tool_call", source_id=self.judge_call.id, tool=self.judge_call.tool,
                            category=ToolCategory.evaluation, data={"step": step.number, "name": step.name,
                                                                    **step.data})
        self.state.evidence.append(item)
        return item

    def add(self, step: JudgeStep) -> None:
        """Record a step both in the judge's result (`self.steps`) and on the trace."""
        self.steps.append(step)
        self.step(step)

    def note(self, text: str, data: dict[str, Any] | None = None, confidence: float | None = None) -> EvidenceItem:
        """A judge-internal measurement or declaration (e.g. a substitute metric), sourced from the judge."""
        item = EvidenceItem(claim=f"[{self.kind} judge] {text}", source_type="tool_call", source_id=self.judge_call.id,
                            tool=self.judge_call.tool, category=ToolCategory.evaluation, confidence=confidence,
                            data=data or {})
        self.state.evidence.append(item)
        return item

    # -- the end
    def finish(self, verdict: str, rationale: str, result: BaseModel, *, status: str = "answered",
               reason: str = "", write: bool = True) -> Path | None:
        """Record the verdict and the whole typed result; write the trace (atomic) unless write is False. A
        verdict reached after the judge run's time budget ran out says so (`bound_hit` time_budget)."""
        with self._record_lock:
            if self.finished:  # stopped already (abandoned at its deadline): that trace stands
                return None
            self.finished = True
        budget = current_budget()
        bound = "time_budget" if budget is not None and budget.spent() else None
        if budget is not None and bound and not reason:
            reason = (f"the time budget of {budget.seconds:g} s ran out before the judge finished; it concluded "
                      "from what it had")
        self.judge_call.duration_s = round(time.monotonic() - self.t0, 3)
        self.judge_call.output = result.model_dump(mode="json", exclude={"trace_path"})
        self.state.tool_calls.append(self.judge_call)
        self._decide(Action.ANSWER if status == "answered" else Action.STOP, rationale[:2000])
        cited = [e.id for e in self.state.evidence if e.source_id == self.judge_call.id]
        self.state.final_answer = FinalAnswer(text=verdict, rationale=rationale, cited_evidence_ids=cited,
                                              answered_by=f"judge:{self.kind}")
        self.state.evidence_summary = rationale
        self.state.outcome = Outcome(status=status, reason=reason, bound_hit=bound)  # type: ignore[arg-type]
        self.state.run.finished_at = utcnow()
        self.state.run.wall_time_s = round(time.monotonic() - self.t0, 3)
        if not write or self.trace_dir is None:
            return None
        path = self.trace_dir / f"{self.state.run.run_id}.json"
        write_trace(self.state, path)
        return path

    def stop(self, reason: str, *, status: str = "stopped", bound_hit: str | None = None,
             failed_call: ModelCall | None = None) -> Path | None:
        """The trace of a judge run that did not reach a verdict (cancelled, out of time, failed): what ran so far
        (tool calls, model calls, steps), the judge's own call marked stopped, and the outcome saying why.
        Written once (a later `finish` or `stop` does nothing); None when not written (no trace folder, or the
        disk would not take it: the run's own error is what the caller reports)."""
        with self._record_lock:
            if self.finished:
                return None
            self.finished = True
            self.judge_call.duration_s = round(time.monotonic() - self.t0, 3)
            self.judge_call.status = ToolCallStatus.timeout if bound_hit else ToolCallStatus.error
            self.judge_call.error = reason[:2000]
            if failed_call is not None:
                self.state.model_calls.append(failed_call)
            self.state.tool_calls.append(self.judge_call)
            self._decide(Action.STOP, reason[:2000])
            self.state.outcome = Outcome(status=status, reason=reason[:2000], bound_hit=bound_hit)  # type: ignore[arg-type]
            self.state.run.finished_at = utcnow()
            self.state.run.wall_time_s = round(time.monotonic() - self.t0, 3)
            if self.trace_dir is None:
                return None
            path = self.trace_dir / f"{self.state.run.run_id}.json"
            for _ in range(3):  # the judge's thread may still be appending (a run abandoned at its deadline)
                try:
                    write_trace(self.state, path)
                    return path
                except RuntimeError:
                    continue
                except OSError:
                    return None
            return None

    def conclude(self, verdict: str, rationale: str, result: R, *, write: bool = True) -> R:
        """`finish` an answered run and return `result` with its `trace_path` set (None when not written)."""
        path = self.finish(verdict, rationale, result, write=write)
        result.trace_path = str(path) if path else None  # type: ignore[attr-defined]
        return result


def observation_id() -> str:
    return new_id("obs")


# ---- a judge run: its time budget, and a trace whatever ends it ----------------------------------------

_OPEN_SESSIONS: contextvars.ContextVar[list[JudgeSession] | None] = contextvars.ContextVar(
    "audiomind_judge_sessions", default=None)


def stop_reason(exc: BaseException | None, budget_s: float | None) -> tuple[str, str, str | None]:
    """(status, reason, bound_hit) of a judge run ended by `exc` (None: its caller stopped waiting for it)."""
    if exc is None or isinstance(exc, BudgetExhausted | TimeoutError):
        limit = f" of {budget_s:g} s" if budget_s else ""
        what = f" ({type(exc).__name__}: {exc})" if exc is not None else " (still running: abandoned)"
        return "stopped", f"timeout: the judge's time budget{limit} ran out before its verdict{what}", "time_budget"
    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C, SIGTERM, or serve's RunCancelled (the client left)
        text = str(exc) or "interrupted (Ctrl-C or SIGTERM)"
        return "stopped", text if text.startswith("cancelled") else f"cancelled: {text}", None
    return "failed", f"{type(exc).__name__}: {exc}", None


@contextlib.contextmanager
def judge_run(time_budget_s: float | None = None, sessions: list[JudgeSession] | None = None
              ) -> Iterator[list[JudgeSession]]:
    """Run a judge under a time budget of `time_budget_s` (the one mechanism of ask's --time-budget,
    audiomind.backends.deadline.run_budget: each model request takes at most what is left, and the tool
    executor starts no call once it is spent and abandons one still running then) and keep every
    JudgeSession it opens: one that ends by an exception (the budget spent, a cancellation, a failure) has its
    trace written as stopped or failed, with what ran so far, and the exception names that trace. `sessions`:
    the list to keep them in (a caller that may stop waiting for the judge stops them itself: `stop`)."""
    if sessions is None:  # inside another judge_run (a caller that watches the judge): the same list
        sessions = _OPEN_SESSIONS.get()
    if sessions is None:
        sessions = []
    token = _OPEN_SESSIONS.set(sessions)
    try:
        # no budget of its own (a judge called as a tool): the run's budget, if any, goes on applying
        with run_budget(time_budget_s) if time_budget_s else contextlib.nullcontext():
            yield sessions
    except BaseException as exc:
        status, reason, bound = stop_reason(exc, time_budget_s)
        for session in sessions:
            path = session.stop(reason, status=status, bound_hit=bound, failed_call=getattr(exc, "model_call", None))
            if path is not None:
                exc.audiomind_trace_path = str(path)  # type: ignore[attr-defined]
                exc.add_note(f"audiomind trace of the stopped judge run: {path}")
        raise
    finally:
        _OPEN_SESSIONS.reset(token)
