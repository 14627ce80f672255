"""Contracts for the two model roles: the text planner and the audio front end.

Both roles are swappable per run (`--planner`, `--frontend`); the graph nodes only see these
interfaces. Every backend call returns a `ModelCall` record so the trace can replay it.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from audiomind.state import (
    Artifact,
    AudioWindow,
    ConfidenceStep,
    EvidenceItem,
    EvidenceState,
    ModelCall,
    ModelSpec,
    PerceptionPrompt,
    Plan,
    PlannerDecision,
    ToolCall,
)


class BackendError(RuntimeError):
    """A model backend failed after its bounded retries (unreachable, auth, malformed output...)."""


class ListenRequest(BaseModel):
    """Ask the front end to listen to one or more artifacts with a focused prompt."""

    kind: str = Field(description="'perception' or 'relisten'")
    artifacts: list[Artifact]
    prompt: str
    prompt_id: str
    question: str
    choices: list[str] = Field(default_factory=list)
    step: int = 0
    reply_format: str = Field("listen_format", description="the prompt (prompts/NAME.md) that says how to reply: "
                              "the keys of the JSON object and what each must hold")


class ListenResult(BaseModel):
    text: str
    description: str = ""
    focus: str = ""
    provisional_answer: str | None = None
    open_needs: list[str] = Field(default_factory=list)
    uncertainty: str = ""
    windows: list[AudioWindow] = Field(default_factory=list)
    model_call: ModelCall | None = None
    # The cascade front end "listens" with embedded tools: their calls and evidence go on the record.
    tool_calls: list[ToolCall] = Field(default_factory=list)
    evidence: list[EvidenceItem] = Field(default_factory=list)
    derived_artifacts: list[Artifact] = Field(default_factory=list)


class AnswerRequest(BaseModel):
    """Final answer: from the ORIGINAL audio plus the neutral evidence summary and the evidence it cites.

    One contract for every front end: an audio model hears `original` and reads `prompt` (the question, the
    choices and the summary); the cascade answers from `evidence` and the `tool_calls` that produced it
    (audiomind.reasoning.facts reads their typed outputs). Nothing else of the run reaches an answer.
    """

    original: Artifact
    extra_originals: list[Artifact] = Field(default_factory=list, description="the question's further clips (a "
                                            "multi-clip item: a1, a2, ...), sent with the original")
    question: str
    choices: list[str] = Field(default_factory=list)
    evidence_summary: str
    evidence: list[EvidenceItem] = Field(default_factory=list)
    prompt: str
    prompt_id: str
    format_feedback: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list, description="the tool calls that produced `evidence` "
                                       "(and those that failed, which the summary reports)")

    @property
    def originals(self) -> list[Artifact]:
        """Every clip the question came with, in order (the original first)."""
        return [self.original, *self.extra_originals]


class AnswerResult(BaseModel):
    text: str
    rationale: str = ""
    cited_evidence_ids: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence_reason: str = ""
    confidence_source: Literal["evidence", "logprobs", "self_reported"] | None = None
    confidence_steps: list[ConfidenceStep] = Field(default_factory=list, description="the confidence ledger: "
                                                   "every stage that made `confidence`, in order")
    model_call: ModelCall | None = None
    windows: list[AudioWindow] = Field(default_factory=list)


@runtime_checkable
class FrontEnd(Protocol):
    """An audio-in model (LALM) or the embedded cascade."""

    name: str

    def spec(self) -> ModelSpec: ...

    def listen(self, request: ListenRequest) -> ListenResult: ...

    def answer(self, request: AnswerRequest) -> AnswerResult: ...


@runtime_checkable
class Planner(Protocol):
    """The text planner: writes the perception prompt, the plan, one decision per step, the summary."""

    name: str

    def spec(self) -> ModelSpec: ...

    def perception_prompt(self, state: EvidenceState) -> tuple[PerceptionPrompt, ModelCall | None]: ...

    def plan(self, state: EvidenceState, inventory: str) -> tuple[Plan, ModelCall | None]: ...

    def decide(self, state: EvidenceState, inventory: str) -> tuple[PlannerDecision, ModelCall | None]: ...

    def summarize(self, state: EvidenceState) -> tuple[str, ModelCall | None]: ...
