"""The unit of a benchmark run: one question about one (or more) audio files, tasks as data."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class BenchItem(BaseModel):
    """One benchmark question. `raw` keeps the source row verbatim so predictions can echo every input field."""

    model_config = ConfigDict(extra="forbid")

    id: str
    benchmark: str
    audio_path: str = Field(description="the audio the agent listens to (absolute or relative to the audio dir)")
    extra_audio: list[str] = Field(default_factory=list, description="more clips, e.g. the second of a verification pair")
    question: str
    choices: list[str] = Field(default_factory=list)
    answer: str | None = Field(default=None, description="ground truth in the benchmark's own form")
    metadata: dict[str, Any] = Field(default_factory=dict, description="modality, category, sub-category, ...")
    raw: dict[str, Any] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="why this item cannot run (a bad input row, a refused "
                              "audio path), 'FILE:LINE: reason'; the runner commits it as an error, never asking")


class WorkerInfo(BaseModel):
    """Where an item was answered on a Ray cluster: the node and the worker process (actor), and how many
    tries it took (a try is lost when its worker dies under it, e.g. with its node)."""

    node_id: str = Field(description="the Ray node id (hex) that ran the item")
    node_ip: str = Field(default="", description="that node's IP address, as Ray knows it")
    hostname: str = Field(default="", description="the worker machine's host name")
    pid: int = Field(default=0, description="the worker (actor) process id on that machine")
    actor_id: str = Field(default="", description="the Ray actor id (hex)")
    attempt: int = Field(default=1, ge=1, description="1 + tries lost with their worker before this one")
    lost: list[str] = Field(default_factory=list, description="why each earlier try was lost, oldest first "
                            "('node NODE_ID: ActorDiedError: ...')")


class ItemResult(BaseModel):
    """What the batch runner commits per item (one JSON line), success or failure."""

    id: str
    status: str = Field(description="answered | stopped | failed | missing_audio | error")
    prediction: str | None = None
    choice_index: int | None = None
    rationale: str = ""
    confidence: float | None = Field(default=None, description="the answer's own confidence (0-1), when estimated")
    confidence_reason: str = ""
    confidence_source: str | None = Field(default=None, description="evidence (the offline stack), logprobs (the "
                                          "answering model's token probabilities over the choices) or "
                                          "self_reported (a confidence the model stated)")
    error: str | None = None
    error_kind: str | None = Field(default=None, description="for an error: model (its model calls failed; run "
                                   "again at the end of the run), time_budget, input (audio or question refused) "
                                   "or other")
    trace_path: str | None = None
    wall_time_s: float = 0.0
    tool_calls: int = Field(default=0, description="tool calls the planner issued (the agent's own decisions)")
    relistens: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = Field(default=None, description="USD of the item's model calls; None when a billed "
                                   "call's backend had no price (see `unpriced`)")
    cost_by_role: dict[str, float] = Field(default_factory=dict, description="USD per model role (priced calls)")
    unpriced: list[str] = Field(default_factory=list, description="backends billed without a price")
    cache_hits: int = Field(default=0, description="model calls answered from the model-call cache")
    cached_input_tokens: int = 0
    audio_input_tokens: int = 0
    reasoning_tokens: int = 0
    # Added for scoring and reports from results.jsonl alone (all optional, so older lines still load):
    benchmark: str = ""
    answer: str | None = Field(default=None, description="the item's ground truth, copied for self-contained reports")
    correct: bool | None = Field(default=None, description="the benchmark's scorer verdict; None when not scorable")
    metadata: dict[str, Any] = Field(default_factory=dict, description="the item's grouping fields (category, ...)")
    frontend_tool_calls: int = Field(default=0, description="tool calls the front end itself issued (cascade)")
    steps: int = Field(default=0, description="evidence-loop decisions")
    started_at: str | None = None
    score_error: str | None = None
    input_error: bool = Field(default=False, description="the item never ran: its input row or audio path was "
                              "refused (see `error`); it is not scored")
    worker: WorkerInfo | None = Field(default=None, description="the Ray node and actor that answered (--ray runs "
                                      "only; None under threads)")
