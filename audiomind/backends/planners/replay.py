"""`replay:TRACE.json` as a planner: the recorded perception prompt, plan, decisions (in order) and
summary, handed back as the recorded run's planner wrote them.

Tools are NOT replayed for planner calls: the executor runs them again, so a changed tool version or
argument model shows up as a difference while the model outputs stay fixed (debugging, regression
tests, cost-free re-scoring). It mixes with a live front end (how does a new front end answer the same
plan?). Re-running a whole recorded run and comparing is audiomind.audit.replay.
"""

from __future__ import annotations

from pathlib import Path

from audiomind.backends.base import BackendError
from audiomind.backends.recording import (
    RecordedCalls,
    check_question,
    id_map,
    load_recording,
    model_calls,
    remap,
)
from audiomind.state import EvidenceState, ModelCall, ModelSpec, PerceptionPrompt, Plan, PlannerDecision


class ReplayPlanner:
    """Planner protocol over a recorded trace: perception prompt, plan, decisions, summary."""

    def __init__(self, trace_path: str | Path | EvidenceState):
        self.trace, self.source = load_recording(trace_path)
        recorded = [m for m in self.trace.run.models if m.role == "planner"]
        self.recorded_spec = recorded[0] if recorded else None
        self.name = "replay"
        self._decisions = [d for d in self.trace.decisions if d.planner != "bounds"]
        self._bounds = [d for d in self.trace.decisions if d.planner == "bounds"]
        self._calls = RecordedCalls(model_calls(self.trace, "planner"), self.source)

    def spec(self) -> ModelSpec:
        return ModelSpec(
            role="planner", spec=f"replay:{self.source}", kind="replay",
            model=self.recorded_spec.spec if self.recorded_spec else None,
            decoding={"recorded_run": self.trace.run.run_id,
                      "recorded": self.recorded_spec.model_dump(mode="json") if self.recorded_spec else None},
        )

    def perception_prompt(self, state: EvidenceState) -> tuple[PerceptionPrompt, ModelCall | None]:
        check_question(self.trace, state.question.text, state.question.choices, self.source)
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
