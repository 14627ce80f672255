"""The typed, shared evidence state: every node reads it and writes a partial update to it.

The trace of a run is exactly this state serialized (plus a schema version), so everything an auditor
needs lives here and nothing else: artifacts with provenance, what the front end heard, what the
planner decided and why, every tool call with its validated arguments and outcome, the evidence
items tied to their sources, the neutral summary, format feedback and the final answer.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import operator
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"
CONFIDENT_AT = 0.7
"""An answer whose confidence reaches this is a *confident* answer (selective accuracy is measured on those)."""


class _IdScope:
    """The ids of one run, derived from its seed: the same question, audio and settings give the same ids,
    in the same order, so the prompts that quote them are byte-identical on a re-run (the model-call cache
    can answer them) and a trace can be compared with its re-run."""

    def __init__(self, seed: str):
        self.seed = seed
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def next(self, prefix: str) -> str:
        with self.lock:
            n = self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}_{hashlib.sha256(f'{self.seed}|{prefix}|{n}'.encode()).hexdigest()[:10]}"


_ID_SCOPE: contextvars.ContextVar[_IdScope | None] = contextvars.ContextVar("audiomind_id_scope", default=None)
UNSCOPED_PREFIXES = frozenset({"run", "mc"})
"""Ids that stay random: a run's id names its trace file, a model call's id is never shown to a model."""


@contextlib.contextmanager
def stable_ids(seed: str) -> Iterator[None]:
    """Inside, `new_id` derives ids from `seed` and a per-prefix count (threads started inside share it)."""
    token = _ID_SCOPE.set(_IdScope(seed))
    try:
        yield
    finally:
        _ID_SCOPE.reset(token)


def new_id(prefix: str) -> str:
    """Short unique id with a readable prefix (ids are cited by evidence, so they must be stable); inside
    `stable_ids` a run's ids are derived from its seed."""
    scope = _ID_SCOPE.get()
    if scope is not None and prefix not in UNSCOPED_PREFIXES:
        return scope.next(prefix)
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_run_id(tag: str = "", hex_chars: int = 8) -> str:
    """A run's id: its UTC start second, an optional tag, and random hex ("20250101T120000-1a2b3c4d"), so
    trace files sort by time and never collide."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{tag + '-' if tag else ''}{uuid.uuid4().hex[:hex_chars]}"


_VERSIONED = ("audiomind", "langgraph", "langchain-core", "pydantic", "numpy", "librosa", "onnxruntime",
              "faster-whisper", "torch", "sentence-transformers", "openai", "google-genai")


def package_versions() -> dict[str, str]:
    """Python's and the installed packages' versions that a run's results depend on (RunInfo.versions).
    Read once per process (reading 12 packages' metadata cost ~15 ms, every run of a warm service)."""
    return dict(_package_versions())


@lru_cache(maxsize=1)
def _package_versions() -> dict[str, str]:
    import importlib.metadata
    import platform

    out = {"python": platform.python_version()}
    for name in _VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCategory(str, Enum):
    """The bounded tool taxonomy of Audio-Mind (Table 1): a tool's evidence boundary class."""

    metadata_validation = "metadata_validation"
    temporal_segmentation = "temporal_segmentation"
    speech_and_speaker = "speech_and_speaker"
    audio_tagging = "audio_tagging"
    acoustic_music_features = "acoustic_music_features"
    visual_inspection = "visual_inspection"
    audio_derivation = "audio_derivation"
    evaluation = "evaluation"


class Artifact(_Model):
    """An audio file the run may listen to or analyse; derived ones carry their provenance."""

    id: str
    path: str
    sha256: str
    duration_s: float
    sample_rate: int
    channels: int
    format: str = ""
    derived_from: str | None = None
    operation: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    created_by: str | None = Field(default=None, description="tool call id that produced it, if any")


class AudioWindow(_Model):
    """A time window of an artifact sent to a front end that truncates long audio."""

    artifact_id: str
    start_s: float
    end_s: float


class Observation(_Model):
    """What an audio front end reported after listening (first perception or a re-listen)."""

    id: str = Field(default_factory=lambda: new_id("obs"))
    kind: Literal["perception", "relisten", "final"] = "perception"
    frontend: str
    artifact_ids: list[str]
    prompt_id: str
    prompt: str
    text: str
    description: str = ""
    focus: str = ""
    provisional_answer: str | None = None
    open_needs: list[str] = Field(default_factory=list)
    uncertainty: str = ""
    windows: list[AudioWindow] = Field(default_factory=list)
    tool_call_ids: list[str] = Field(
        default_factory=list, description="embedded tool calls the cascade front end ran to listen"
    )
    attempts: int = 1
    latency_s: float = 0.0
    rejected: str = Field(default="", description="why requested artifacts were not listened to (a re-listen "
                          "takes derived artifacts only); the planner reads it on its next step")


class ToolCallRequest(_Model):
    """A call the planner asks for; arguments are validated by the executor, not trusted."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""


class ToolCallStatus(str, Enum):
    ok = "ok"
    cached = "cached"
    rejected = "rejected"
    error = "error"
    timeout = "timeout"


class Coverage(_Model):
    """Which stretches of an artifact a tool actually analysed (artifact seconds: absolute times), in how
    many windows, and why any part of the requested stretch was left out."""

    spans: list[tuple[float, float]] = Field(
        description="analysed stretches [start, end] (s), merged, in time order")
    analysed_s: float = Field(description="total analysed time (s)")
    requested: tuple[float, float] = Field(description="the stretch the call asked for [start, end] (s)")
    windows: int = Field(description="analysis windows processed")
    window_s: float | None = Field(
        None, description="analysis window length (s); None: one pass over the stretch")
    complete: bool = Field(description="the whole requested stretch was analysed")
    note: str | None = Field(
        None, description="how the analysed spans were chosen when not the whole stretch")

    def summary(self, max_spans: int = 4) -> str:
        """One line: the spans (m:ss when the stretch reaches a minute), how much of the requested stretch, in
        how many windows."""
        clock = max([self.requested[1], *(b for _, b in self.spans)]) >= 60

        def t(x: float) -> str:
            return f"{int(x // 60)}:{x % 60:04.1f}" if clock else f"{x:.1f}"

        spans = ", ".join(f"{t(a)}-{t(b)}" for a, b in self.spans[:max_spans])
        spans += "" if clock or not self.spans else " s"
        more = f" (+{len(self.spans) - max_spans} more)" if len(self.spans) > max_spans else ""
        req = self.requested[1] - self.requested[0]
        return (f"covered {spans or 'nothing'}{more}: {self.analysed_s:.1f} of {req:.1f} s, "
                f"{self.windows} window(s)" + ("" if self.complete else " (partial)"))


class ToolCall(_Model):
    """One executed (or rejected) tool call, as the executor recorded it."""

    id: str = Field(default_factory=lambda: new_id("call"))
    step: int
    tool: str
    tool_version: str | None = None
    category: ToolCategory | None = None
    requested_arguments: dict[str, Any] = Field(default_factory=dict)
    arguments: dict[str, Any] | None = Field(default=None, description="validated arguments")
    status: ToolCallStatus
    started_at: str = Field(default_factory=utcnow)
    duration_s: float = 0.0
    output: dict[str, Any] | None = None
    error: str | None = None
    derived_artifact_ids: list[str] = Field(default_factory=list)
    cache_key: str | None = None
    issued_by: Literal["planner", "frontend"] = "planner"
    timeout_s: float | None = Field(
        None, description="the timeout the call ran under (s), scaled to the audio's length")
    coverage: Coverage | None = Field(
        None, description="the stretches the tool analysed, copied from its output")


class EvidenceItem(_Model):
    """A claim, tied to where it came from and to the boundary class of that source."""

    id: str = Field(default_factory=lambda: new_id("ev"))
    claim: str
    source_type: Literal["tool_call", "observation"]
    source_id: str
    tool: str | None = None
    category: ToolCategory | None = None
    artifact_id: str | None = None
    confidence: float | None = None
    data: dict[str, Any] = Field(default_factory=dict, description="machine-readable form of the claim")


class Action(str, Enum):
    CALL_TOOLS = "CALL_TOOLS"
    RELISTEN = "RELISTEN"
    ANSWER = "ANSWER"
    STOP = "STOP"


class RelistenRequest(_Model):
    artifact_ids: list[str]
    prompt: str


class PlannerDecision(_Model):
    """Exactly one action per evidence-loop step, always with a rationale."""

    step: int
    action: Action
    rationale: str
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)
    relisten: RelistenRequest | None = None
    stop_reason: str | None = None
    planner: str = ""
    raw_output: str | None = Field(default=None, description="the model's raw text, for LLM planners")


class Plan(_Model):
    """The lightweight plan written after first perception."""

    intent: str
    answer_format: str
    focus: list[str] = Field(default_factory=list)
    candidate_operations: list[str] = Field(default_factory=list)
    claims_to_verify: list[str] = Field(default_factory=list)
    directly_answerable: list[str] = Field(default_factory=list)
    rationale: str = ""


class PerceptionPrompt(_Model):
    prompt_id: str
    text: str
    auditory_targets: list[str] = Field(default_factory=list)


class FormatFeedback(_Model):
    attempt: int
    ok: bool
    message: str
    answer_text: str


class ConfidenceParameters(_Model):
    """What a confidence step applied (audiomind.reasoning.ledger defines each op); only its op's fields are set."""

    value: float | None = Field(default=None, description="set: the value it starts from")
    factors: list[float] | None = Field(default=None, description="product: the factors, multiplied in order")
    choices: int | None = Field(default=None, description="chance: how many choices are open (1 / choices)")
    bonus: float | None = Field(default=None, description="chance: added to 1 / choices")
    factor: float | None = Field(default=None, description="multiply: the factor")
    bound: float | None = Field(default=None, description="cap: the most it keeps")
    low: float | None = Field(default=None, description="clamp: the least it keeps")
    high: float | None = Field(default=None, description="clamp: the most it keeps")
    knots: list[tuple[float, float]] | None = Field(default=None, description="map: the table's (raw, p) knots")
    weight: float | None = Field(default=None, description="shrink: the share above `target` that stands")
    target: float | None = Field(default=None, description="shrink: what it shrinks toward (chance)")
    digits: int | None = Field(default=None, description="the result rounded to this many decimals (None: not)")
    table: str | None = Field(default=None, description="map, shrink, product: the name of the table or bank "
                              "used (a product's: the check records one factor was read from)")
    sha256: str | None = Field(default=None, description="the sha256 of that table's file")
    inputs: dict[str, float | str] = Field(default_factory=dict, description="what the parameters were read "
                                           "from (reliability, fit, similarity...): for the reader, not re-applied")


class ConfidenceStep(_Model):
    """One stage between the evidence and the printed confidence: an operation on the running value."""

    stage: str = Field(description="the stage that applied it (docs/CONFIDENCE.md lists them in order)")
    space: Literal["raw", "calibrated"] = Field(description="the score it works on: the raw decision score or the "
                                                "calibrated probability")
    op: Literal["set", "product", "chance", "multiply", "cap", "clamp", "map", "shrink"]
    parameters: ConfidenceParameters = Field(default_factory=ConfidenceParameters)
    input: float | None = Field(default=None, description="the value before (None for a step that starts it)")
    output: float
    reason: str = ""


class FinalAnswer(_Model):
    text: str
    choice: str | None = None
    choice_index: int | None = None
    rationale: str = ""
    cited_evidence_ids: list[str] = Field(default_factory=list)
    answered_by: str = ""
    confidence: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="how likely the answer is right, as the answering backend estimates it; None = not estimated")
    confidence_reason: str = Field(default="", description="why the confidence is what it is (what decided, what could not)")
    confidence_source: Literal["evidence", "logprobs", "self_reported"] | None = Field(
        default=None, description="where the confidence comes from: the offline stack's evidence; the answering "
        "model's token log-probabilities over the choices; or a confidence the model stated in its reply (not "
        "calibrated by anything but the model itself)")
    confidence_steps: list[ConfidenceStep] = Field(
        default_factory=list, description="the confidence ledger: every stage from the evidence to `confidence`, "
        "in order; re-applying them from the first gives `confidence` (audiomind.reasoning.ledger.recompute)")


class ModelSpec(_Model):
    role: Literal["planner", "frontend"]
    spec: str
    kind: str
    model: str | None = None
    base_url: str | None = None
    decoding: dict[str, Any] = Field(default_factory=dict)


class ModelMessage(_Model):
    """One message of a model request as it was sent: its role and text (audio parts are named by their
    artifact, never inlined)."""

    role: str
    content: str


class SentAudio(_Model):
    """One audio part of a model request: which clip (by artifact id and content hash) and which span of it."""

    artifact_id: str
    sha256: str = ""
    start_s: float = 0.0
    end_s: float | None = None
    duration_s: float | None = None
    transport: str = Field("inline", description="inline (base64 in the request) | file (an uploaded file's "
                           "reference, e.g. Gemini's Files API) | batch (a line of a batch job)")


class ModelCall(_Model):
    """One request to a model backend, recorded for replay and cost accounting."""

    id: str = Field(default_factory=lambda: new_id("mc"))
    role: Literal["planner", "frontend"]
    purpose: str
    backend: str
    attempts: int = 1
    errors: list[str] = Field(default_factory=list)
    latency_s: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    output: Any = None
    input: list[ModelMessage] = Field(
        default_factory=list, description="what was sent to the model (the last round of the request), so a "
        "prompt can be read and replayed; empty where the backend does not record it")
    context_notes: list[str] = Field(
        default_factory=list, description="what the prompt condensed to fit the planner's token budget (which "
        "observations and evidence items were shortened, with their ids: the trace keeps them whole)")
    # -- what an auditor and a cost report need (from the provider's own reply; None where it did not say)
    input_audio: list[SentAudio] = Field(default_factory=list, description="the audio parts sent, by hash")
    cached_input_tokens: int | None = Field(None, description="input tokens the provider served from its prompt "
                                            "cache (OpenAI prompt_tokens_details.cached_tokens, Gemini "
                                            "cachedContentTokenCount); part of input_tokens")
    audio_input_tokens: int | None = Field(None, description="input tokens that were audio; part of input_tokens")
    reasoning_tokens: int | None = Field(None, description="reasoning / thinking tokens; part of output_tokens "
                                         "(Gemini's thoughtsTokenCount is added to output_tokens, as it is billed)")
    served_model: str | None = Field(None, description="the model id the reply names (OpenAI `model`, Gemini "
                                     "`modelVersion`)")
    fingerprint: str | None = Field(None, description="OpenAI `system_fingerprint` or the provider's build id")
    finish_reason: str | None = None
    decoding: dict[str, Any] = Field(default_factory=dict, description="the decoding settings sent with this "
                                     "request (temperature, max tokens, seed, reasoning effort, thinking budget)")
    cache_hit: bool = Field(False, description="answered from audiomind's model-call cache: no request was sent "
                            "(token counts are the original reply's; it cost nothing)")
    cache_key: str | None = Field(None, description="sha256 of the whole request (audio by content hash)")
    retry_waits_s: list[float] = Field(default_factory=list, description="seconds waited before each retry "
                                       "(backoff or the server's Retry-After), in order")
    rate_limit_wait_s: float = Field(0.0, description="seconds the client-side rate limiter held the request")
    batch: bool = Field(False, description="answered through a provider's batch API (billed at its batch share)")


class NodeTiming(_Model):
    node: str
    started_at: str
    duration_s: float


class RunInfo(_Model):
    run_id: str = Field(default_factory=lambda: new_id("run"))
    started_at: str = Field(default_factory=utcnow)
    finished_at: str | None = None
    wall_time_s: float | None = None
    models: list[ModelSpec] = Field(default_factory=list)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    seed: int = 0
    max_steps: int = 6
    time_budget_s: float = 600.0
    frontend_window_s: float = 30.0
    artifact_dir: str = ""
    mode: Literal["agent", "direct"] = Field("agent", description="agent: the evidence loop; direct: the front end "
                                             "answered alone (the baseline)")


class Question(_Model):
    text: str
    choices: list[str] = Field(default_factory=list)
    audio_path: str
    extra_audio: list[str] = Field(default_factory=list, description="more clips of the same question (a "
                                   "multi-clip item), in order: ingested as a1, a2, ... after audio_path's a0")
    item_id: str | None = None
    ground_truth: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Outcome(_Model):
    status: Literal["answered", "stopped", "failed"]
    reason: str = ""
    bound_hit: Literal["max_steps", "time_budget"] | None = None


class EvidenceState(_Model):
    """The shared state of one run; list fields are append-only (LangGraph reducers)."""

    schema_version: str = SCHEMA_VERSION
    run: RunInfo = Field(default_factory=RunInfo)  # so LangGraph Studio needs only a `question` as input
    question: Question
    artifacts: Annotated[list[Artifact], operator.add] = Field(default_factory=list)
    perception_prompt: PerceptionPrompt | None = None
    observations: Annotated[list[Observation], operator.add] = Field(default_factory=list)
    plan: Plan | None = None
    decisions: Annotated[list[PlannerDecision], operator.add] = Field(default_factory=list)
    tool_calls: Annotated[list[ToolCall], operator.add] = Field(default_factory=list)
    evidence: Annotated[list[EvidenceItem], operator.add] = Field(default_factory=list)
    evidence_summary: str | None = None
    format_feedback: Annotated[list[FormatFeedback], operator.add] = Field(default_factory=list)
    final_answer: FinalAnswer | None = None
    outcome: Outcome | None = None
    model_calls: Annotated[list[ModelCall], operator.add] = Field(default_factory=list)
    timings: Annotated[list[NodeTiming], operator.add] = Field(default_factory=list)

    # --- small read helpers used by nodes and planners (derived, never stored twice) ---
    def artifact(self, artifact_id: str) -> Artifact:
        for a in self.artifacts:
            if a.id == artifact_id:
                return a
        raise KeyError(f"unknown artifact id {artifact_id!r}")

    @property
    def original(self) -> Artifact:
        return self.artifacts[0]

    @property
    def originals(self) -> list[Artifact]:
        """Every clip the question came with (a0, then a1, ... of a multi-clip item), never derived audio."""
        n = 1 + len(self.question.extra_audio)
        return [a for a in self.artifacts[:n] if a.derived_from is None and a.operation == "input"] or self.artifacts[:1]

    @property
    def step(self) -> int:
        return len(self.decisions)

    def evidence_from(self, tool: str) -> list[EvidenceItem]:
        return [e for e in self.evidence if e.tool == tool]

    def successful_calls(self, tool: str | None = None) -> list[ToolCall]:
        ok = (ToolCallStatus.ok, ToolCallStatus.cached)
        return [c for c in self.tool_calls if c.status in ok and (tool is None or c.tool == tool)]
