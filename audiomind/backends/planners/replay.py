"""`replay:TRACE.json`: a planner and a front end that return what a recorded run's models said.

Re-running the graph with them reproduces the run: the same perception prompt, plan, decisions (in
order), summary, observations and final answers. Tools are NOT replayed for planner calls: the
executor runs them again, so a changed tool version or argument model shows up as a difference while
the model outputs stay fixed (debugging, regression tests, cost-free re-scoring). The cascade front
end's own perception calls are part of its recorded "listening" and come back as recorded.

Either half can be mixed with a live backend: a recorded planner with a new front end (how does the
new front end answer the same plan?), or recorded observations with a new planner.

Evidence ids are random per run, so the recorded final answer's citations (and the ids quoted in the
recorded summary) are mapped onto the replay's evidence by position and content.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.state import (
    EvidenceItem,
    EvidenceState,
    ModelCall,
    ModelSpec,
    Observation,
    PerceptionPrompt,
    Plan,
    PlannerDecision,
)

_ANY_ID = re.compile(r"\b(?:ev|call|obs)_[0-9a-f]{10}\b")


def _load(trace: str | Path | EvidenceState) -> tuple[EvidenceState, str]:
    if isinstance(trace, EvidenceState):
        return trace, f"<state {trace.run.run_id}>"
    from audiomind.trace import load_trace

    p = Path(trace)
    if not p.is_file():
        raise BackendError(f"replay: no trace file at {p}")
    try:
        return load_trace(p), str(p)
    except Exception as exc:  # a clear one-line error for the CLI
        raise BackendError(f"replay: {p} is not a readable trace: {type(exc).__name__}: {str(exc)[:200]}") from exc


def _model_calls(st: EvidenceState, role: str) -> list[ModelCall]:
    return [m for m in st.model_calls if m.role == role]


def _check_question(recorded: EvidenceState, state_question_text: str, choices: list[str], source: str) -> None:
    """A recording answers one question: replaying it for another would be a silent lie."""
    q = recorded.question
    if (q.text, list(q.choices)) != (state_question_text, list(choices)):
        raise BackendError(f"replay: {source} recorded the question {q.text!r} {q.choices}, not "
                           f"{state_question_text!r} {choices}")


class _Calls:
    """The recorded model calls of one role, handed out by purpose in recorded order."""

    def __init__(self, calls: list[ModelCall], source: str):
        self._calls = list(calls)
        self.source = source

    def take(self, *purposes: str) -> ModelCall | None:
        for i, m in enumerate(self._calls):
            if m.purpose in purposes:
                m = self._calls.pop(i)
                return m.model_copy(update={"backend": f"replay:{m.backend}"})
        return None


def evidence_map(recorded: list[EvidenceItem], current: list[EvidenceItem]) -> dict[str, str]:
    """Recorded evidence id -> the replay's id for the same claim (same tool, source kind and text),
    matched in order so repeated claims pair up one to one."""
    pool: dict[tuple, list[str]] = {}
    for e in current:
        pool.setdefault((e.source_type, e.tool, e.claim), []).append(e.id)
    out: dict[str, str] = {}
    for e in recorded:
        ids = pool.get((e.source_type, e.tool, e.claim))
        if ids:
            out[e.id] = ids.pop(0)
    return out


def id_map(recorded: EvidenceState, current: EvidenceState) -> dict[str, str]:
    """Recorded ids -> the replay's ids: evidence by content, observations and tool calls by position
    (when kind / tool agree), so ids quoted in recorded texts point at the replay's items."""
    out = evidence_map(recorded.evidence, current.evidence)
    for old, new in zip(recorded.observations, current.observations):
        if old.kind == new.kind:
            out[old.id] = new.id
    for old_c, new_c in zip(recorded.tool_calls, current.tool_calls):
        if old_c.tool == new_c.tool:
            out[old_c.id] = new_c.id
    return out


def remap(text: str, mapping: dict[str, str]) -> str:
    return _ANY_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


class ReplayPlanner:
    """Planner protocol over a recorded trace: perception prompt, plan, decisions, summary."""

    def __init__(self, trace_path: str | Path | EvidenceState):
        self.trace, self.source = _load(trace_path)
        recorded = [m for m in self.trace.run.models if m.role == "planner"]
        self.recorded_spec = recorded[0] if recorded else None
        self.name = "replay"
        self._decisions = [d for d in self.trace.decisions if d.planner != "bounds"]
        self._bounds = [d for d in self.trace.decisions if d.planner == "bounds"]
        self._calls = _Calls(_model_calls(self.trace, "planner"), self.source)

    def spec(self) -> ModelSpec:
        return ModelSpec(
            role="planner", spec=f"replay:{self.source}", kind="replay",
            model=self.recorded_spec.spec if self.recorded_spec else None,
            decoding={"recorded_run": self.trace.run.run_id,
                      "recorded": self.recorded_spec.model_dump(mode="json") if self.recorded_spec else None},
        )

    def perception_prompt(self, state: EvidenceState) -> tuple[PerceptionPrompt, ModelCall | None]:
        _check_question(self.trace, state.question.text, state.question.choices, self.source)
        if self.trace.perception_prompt is None:
            raise BackendError(f"replay: {self.source} recorded no perception prompt")
        return self.trace.perception_prompt.model_copy(deep=True), self._calls.take("perception_prompt")

    def plan(self, state: EvidenceState, inventory: str) -> tuple[Plan, ModelCall | None]:
        if self.trace.plan is None:
            raise BackendError(f"replay: {self.source} recorded no plan")
        return self.trace.plan.model_copy(deep=True), self._calls.take("plan")

    def decide(self, state: EvidenceState, inventory: str) -> tuple[PlannerDecision, ModelCall | None]:
        if self._decisions:
            return self._decisions.pop(0).model_copy(deep=True), self._calls.take("decide")
        if self._bounds:  # the recorded run hit its time budget here; the replay (faster) did not
            return self._bounds.pop(0).model_copy(deep=True), None
        raise BackendError(f"replay: {self.source} has no further recorded decision (step {state.step})")

    def summarize(self, state: EvidenceState) -> tuple[str, ModelCall | None]:
        if self.trace.evidence_summary is None:
            raise BackendError(f"replay: {self.source} recorded no evidence summary")
        return remap(self.trace.evidence_summary, id_map(self.trace, state)), self._calls.take("summarize", "summary")


class ReplayFrontEnd:
    """FrontEnd protocol over a recorded trace: observations in order, then the final answer attempts."""

    def __init__(self, trace_path: str | Path | EvidenceState, executor: Any = None):
        self.trace, self.source = _load(trace_path)
        self.executor = executor  # kept for the presets' signature; recorded listening runs no tool
        recorded = [m for m in self.trace.run.models if m.role == "frontend"]
        self.recorded_spec = recorded[0] if recorded else None
        # the observation's `frontend` and the answer's `answered_by` carry this name: keep the recorded one
        self.name = self.trace.observations[0].frontend if self.trace.observations else "replay"
        # re-listens the relisten node rejected itself (unknown artifacts) never reached the front end
        self._observations: list[Observation] = [
            o for o in self.trace.observations if not (o.kind == "relisten" and not o.artifact_ids)
        ]
        self._attempts = [fb.answer_text for fb in self.trace.format_feedback]
        if not self._attempts and self.trace.final_answer is not None:
            self._attempts = [self.trace.final_answer.text]
        self._answers_given = 0
        self._calls = _Calls(_model_calls(self.trace, "frontend"), self.source)
        self._calls_by_id = {c.id: c for c in self.trace.tool_calls}

    def spec(self) -> ModelSpec:
        return ModelSpec(
            role="frontend", spec=f"replay:{self.source}", kind="replay",
            model=self.recorded_spec.spec if self.recorded_spec else None,
            decoding={"recorded_run": self.trace.run.run_id,
                      "recorded": self.recorded_spec.model_dump(mode="json") if self.recorded_spec else None},
        )

    def listen(self, request: ListenRequest) -> ListenResult:
        if not self._observations:
            raise BackendError(f"replay: {self.source} has no further recorded observation ({request.kind})")
        if request.kind == "perception":
            _check_question(self.trace, request.question, request.choices, self.source)
        o = self._observations.pop(0)
        if o.kind != request.kind or o.artifact_ids != [a.id for a in request.artifacts]:
            raise BackendError(
                f"replay: the run asks to {request.kind} on {[a.id for a in request.artifacts]} but the next "
                f"recorded observation is a {o.kind} on {o.artifact_ids}: the runs diverged"
            )
        calls = [self._calls_by_id[i].model_copy(deep=True) for i in o.tool_call_ids if i in self._calls_by_id]
        call_ids = {c.id for c in calls}
        evidence = [e.model_copy(deep=True) for e in self.trace.evidence if e.source_id in call_ids]
        derived = [a.model_copy(deep=True) for a in self.trace.artifacts if a.created_by in call_ids]
        return ListenResult(
            text=o.text, description=o.description, focus=o.focus, provisional_answer=o.provisional_answer,
            open_needs=list(o.open_needs), uncertainty=o.uncertainty, windows=[w.model_copy() for w in o.windows],
            model_call=self._calls.take(o.kind, "listen"), tool_calls=calls, evidence=evidence,
            derived_artifacts=derived,
        )

    def answer(self, request: AnswerRequest) -> AnswerResult:
        if self._answers_given >= len(self._attempts):
            raise BackendError(f"replay: {self.source} has no further recorded answer "
                               f"(attempt {self._answers_given + 1})")
        text = self._attempts[self._answers_given]
        self._answers_given += 1
        last = self._answers_given == len(self._attempts)
        fa = self.trace.final_answer
        rationale, cited = "", []
        if fa is not None and last:
            if request.state is not None:
                mapping = id_map(self.trace, request.state)
            else:
                mapping = evidence_map(self.trace.evidence, request.evidence)
            rationale = remap(fa.rationale, mapping)
            cited = [mapping.get(i, i) for i in fa.cited_evidence_ids]
        return AnswerResult(text=text, rationale=rationale, cited_evidence_ids=cited,
                            model_call=self._calls.take("answer"))


# ---- replay a whole run ----------------------------------------------------------------------------


class ReplayReport(BaseModel):
    """What `replay` found: does the re-run give the recorded answer and decisions?"""

    recorded: str
    replayed: str | None
    planner: str
    frontend: str
    answer_recorded: str | None
    answer_replayed: str | None
    answer_match: bool
    decisions_match: bool
    identical: bool
    first_divergence: dict[str, Any] | None = None
    diff: dict[str, Any] = Field(default_factory=dict)
    outcome: str


def replay(
    trace_path: str | Path,
    planner: str = "replay",
    frontend: str = "replay",
    trace_dir: str | Path | None = None,
    *,
    tools_dirs: list[str | Path] | None = None,
    use_cache: bool = True,
    write: bool = True,
    timeout_s: float = 120.0,
    max_retries: int = 3,
) -> tuple[ReplayReport, EvidenceState]:
    """Re-run a recorded trace's question and audio with `planner` / `frontend` ("replay" = the recorded
    model outputs, or any backend spec) and compare the result with the recording."""
    from audiomind.api import AudioMind
    from audiomind.audit.diff import diff_states
    from audiomind.backends import presets

    recorded, source = _load(trace_path)
    run = recorded.run
    out_dir = Path(trace_dir) if trace_dir else Path(source).parent / "replays"

    class _ReplayAgent(AudioMind):
        def _frontend(self, executor):  # AudioMind's hook for the front end
            if frontend == "replay":
                return ReplayFrontEnd(recorded, executor)
            return super()._frontend(executor)

    agent = _ReplayAgent(
        planner="rules", frontend=frontend if frontend != "replay" else "cascade",
        tools_dirs=tools_dirs, trace_dir=out_dir, max_steps=run.max_steps, time_budget_s=run.time_budget_s,
        window_s=run.frontend_window_s, timeout_s=timeout_s, max_retries=max_retries, use_cache=use_cache,
    )
    if planner == "replay":
        agent.planner = ReplayPlanner(recorded)
    elif planner != "rules":
        agent.planner = presets.make_planner(planner, registry=agent.registry, timeout_s=timeout_s,
                                             max_retries=max_retries)
    q = recorded.question
    result = agent.ask(q.audio_path, q.text, q.choices or None, item_id=q.item_id, ground_truth=q.ground_truth,
                       metadata={**q.metadata, "replay_of": run.run_id}, write=write)
    new = result.state
    d = diff_states(recorded, new, source, result.trace_path or "(not written)")
    fa_r, fa_n = recorded.final_answer, new.final_answer
    ans_r = (fa_r.choice or fa_r.text) if fa_r else None
    ans_n = (fa_n.choice or fa_n.text) if fa_n else None
    report = ReplayReport(
        recorded=source, replayed=result.trace_path, planner=planner, frontend=frontend,
        answer_recorded=ans_r, answer_replayed=ans_n, answer_match=ans_r == ans_n,
        decisions_match=d.decisions is None, identical=d.identical,
        first_divergence=d.first_divergence.model_dump(mode="json") if d.first_divergence else None,
        diff=d.model_dump(mode="json"), outcome=result.outcome.status,
    )
    return report, new
