"""`replay:TRACE.json` as a front end: the recorded observations in order (with the tool calls, evidence
and derived audio of the cascade's recorded listening), then the recorded final answer attempts.

It mixes with a live planner (recorded observations, a new planner). Re-running a whole recorded run
and comparing is audiomind.audit.replay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.backends.recording import (
    RecordedCalls,
    answer_id_map,
    check_question,
    load_recording,
    model_calls,
    remap,
)
from audiomind.state import EvidenceState, ModelSpec, Observation


class ReplayFrontEnd:
    """FrontEnd protocol over a recorded trace: observations in order, then the final answer attempts."""

    def __init__(self, trace_path: str | Path | EvidenceState, executor: Any = None):
        self.trace, self.source = load_recording(trace_path)
        self.executor = executor  # the registry's front-end signature; recorded listening runs no tool
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
        self._calls = RecordedCalls(model_calls(self.trace, "frontend"), self.source)
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
            check_question(self.trace, request.question, request.choices, self.source)
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
            mapping = answer_id_map(self.trace.evidence, request.evidence)
            rationale = remap(fa.rationale, mapping)
            cited = [mapping.get(i, i) for i in fa.cited_evidence_ids]
        return AnswerResult(text=text, rationale=rationale, cited_evidence_ids=cited,
                            model_call=self._calls.take("answer"))
