"""A trace as OpenTelemetry spans (GenAI semantic conventions + OpenInference span kinds), sent over OTLP/HTTP.

The mapping, per trace file (one question):

- `invoke_agent audiomind` (root, AGENT): gen_ai.operation.name=invoke_agent, gen_ai.agent.name,
  gen_ai.conversation.id (the run id), the audio as a file URI and its sha256 (never inlined), the outcome.
- one child span per graph node (CHAIN), from the trace's node timings (`timings`); the decide spans carry
  their decision, the perceive / relisten spans the front end's observation.
- `execute_tool {name}` (TOOL; EVALUATOR for the judges) under the node that ran it: gen_ai.tool.name,
  gen_ai.tool.call.id, status, cache hit, the recorded start and duration, the audio it read and derived
  (artifact id, sha256); a judge's verdicts as `gen_ai.evaluation.result` span events.
- `chat {model}` / `generate_content {model}` (LLM) for each model request: gen_ai.operation.name,
  gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.input_tokens / output_tokens. A ModelCall
  records no start time, so its span starts at the start of the node that made it (by its purpose) and
  lasts its recorded latency; calls of one node follow each other.

Content (the question, prompts, answers, transcripts, tool arguments and outputs, rationales, judges'
explanations) is exported only with `include_content=True`; without it only ids, names, numbers, statuses
and hashes leave the machine. Every start and end time comes from the trace's recorded timestamps.
Span and trace ids are derived from the run id, so exporting the same trace twice gives the same ids.
The semantic-convention version is pinned (SEMCONV_VERSION) and recorded as the instrumentation scope's
schema URL and as the `audiomind.semconv_version` attribute of the resource and the root span.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from opentelemetry.sdk.trace.id_generator import IdGenerator
from pydantic import BaseModel, ConfigDict, ValidationError

from audiomind.paths import clip_text
from audiomind.state import (
    Artifact,
    EvidenceState,
    ModelCall,
    ModelSpec,
    ToolCall,
    ToolCallStatus,
    ToolCategory,
)
from audiomind.tools.base import typed_output

SEMCONV_VERSION = "1.38.0"
"""The OpenTelemetry semantic conventions (GenAI: invoke_agent, execute_tool, chat, gen_ai.provider.name,
gen_ai.tool.call.arguments, gen_ai.evaluation.result) this mapping follows."""
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
AGENT_NAME = "audiomind"
SCOPE_NAME = "audiomind.audit.otel"
EVALUATION_EVENT = "gen_ai.evaluation.result"
CONTENT_LIMIT = 32_000  # characters per content attribute
PROMPT_LIMIT = 128_000  # characters per model-call input message (what was sent, for reading and replay)

# the node that makes a model request of each purpose (planner purposes, front-end request kinds)
_NODE_OF_PURPOSE = {
    "perception_prompt": "perception_prompt", "plan": "plan", "decide": "decide", "summarize": "summarize",
    "perception": "perceive", "listen": "perceive", "relisten": "relisten", "final": "final_answer",
    "answer": "final_answer", "final_answer": "final_answer", "format_retry": "final_answer",
}
_NODE_OF_OBSERVATION = {"perception": "perceive", "relisten": "relisten", "final": "final_answer"}
_PROVIDERS = {"openai": "openai", "gemini": "gcp.gemini", "ollama": "ollama", "llamacpp": "llama_cpp",
              "anthropic": "anthropic"}


class ExportError(RuntimeError):
    """The spans could not be delivered (collector unreachable, refused, ...); the message says why."""


@dataclass
class ExportReport:
    endpoint: str
    traces: list[dict[str, Any]] = field(default_factory=list)  # run_id, trace_id, spans, file

    @property
    def spans(self) -> int:
        return sum(t["spans"] for t in self.traces)


def redact_userinfo(text: str) -> str:
    """`text` with the user name and password of every URL in it replaced ('http://user:pass@host' ->
    'http://***@host'): an error message or a report must never repeat a credential given in --otlp."""
    return re.sub(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]*@", r"\1***@", text)


def otlp_traces_url(url: str) -> str:
    """The OTLP/HTTP traces endpoint for a collector URL: a URL ending in /v1/traces is used as it is,
    any other gets /v1/traces appended (http://localhost:4318 -> http://localhost:4318/v1/traces)."""
    parsed = urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"--otlp needs an http(s) URL such as http://localhost:4318, got "
                         f"{clip_text(redact_userinfo(url), 120)!r}")
    base = url.strip().rstrip("/")
    return base if base.endswith("/v1/traces") else base + "/v1/traces"


# ---- time ----------------------------------------------------------------------------------------------
def _ns(iso: str) -> int:
    dt = datetime.fromisoformat(iso)
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def _after(start_ns: int, seconds: float | None) -> int:
    return start_ns + max(0, round((seconds or 0.0) * 1e9))


# ---- small helpers -------------------------------------------------------------------------------------
def _json(value: Any) -> str:
    return clip_text(json.dumps(value, ensure_ascii=False, default=str), CONTENT_LIMIT)


def _uri(path: str) -> str:
    try:
        return Path(path).resolve().as_uri()
    except ValueError:
        return path


def _provider(spec: ModelSpec | None) -> str:
    if spec is None:
        return AGENT_NAME
    return _PROVIDERS.get(spec.kind, AGENT_NAME if spec.kind in ("rules", "cascade", "replay") else spec.kind)


def _operation(spec: ModelSpec | None) -> str:
    return "generate_content" if spec is not None and spec.kind == "gemini" else "chat"


def _server(spec: ModelSpec | None) -> dict[str, Any]:
    if spec is None or not spec.base_url:
        return {}
    p = urlparse(spec.base_url)
    out: dict[str, Any] = {"server.address": p.hostname or ""}
    if p.port:
        out["server.port"] = p.port
    return out


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    """OTel attribute values: no None, lists of one primitive type."""
    out = {}
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            v = [str(x) for x in v if x is not None]
        out[k] = v
    return out


# ---- the judges' results, read through lenient typed views --------------------------------------------
class _View(BaseModel):
    """Reads both a judge tool's output and the judge's own record (its trace's judge call output)."""

    model_config = ConfigDict(extra="ignore")


class _Aspect(_View):
    label: str
    score: float
    text: str = ""


class _EditView(_View):
    verdict: str
    effectiveness: _Aspect
    preservation: _Aspect
    quality: _Aspect
    edit_score: float | None = None
    faith_score: float | None = None


class _RubricView(_View):
    score: float
    aligned: bool
    threshold: float | None = None


class _AuraView(_View):
    score: float
    category: int | None = None  # the tool output
    llm_category: int | None = None  # the judge's own record
    reasoning: str = ""
    llm_reasoning: str = ""


class _ScoredView(_View):
    score: float
    verdict: str | None = None


@dataclass
class Evaluation:
    name: str
    score: float | None = None
    label: str | None = None
    explanation: str | None = None

    def span_attributes(self, include_content: bool) -> dict[str, Any]:
        """The verdict as attributes of the judge's span: `eval.<name>.score|label|explanation` (the keys
        OpenInference evaluators use), `<name>` without its `judge_` prefix."""
        key = "eval." + self.name.removeprefix("judge_")
        return _clean({f"{key}.score": self.score, f"{key}.label": self.label,
                       f"{key}.explanation": self.explanation if include_content else None})

    def attributes(self, include_content: bool) -> dict[str, Any]:
        return _clean({
            "gen_ai.evaluation.name": self.name,
            "gen_ai.evaluation.score.value": self.score,
            "gen_ai.evaluation.score.label": self.label,
            "gen_ai.evaluation.explanation": self.explanation if include_content else None,
        })


def evaluations(call: ToolCall) -> list[Evaluation]:
    """The verdicts of a judge call (category evaluation) as evaluation results; [] for other calls or when
    the output fits no known judge shape."""
    if call.category != ToolCategory.evaluation or call.status not in (ToolCallStatus.ok, ToolCallStatus.cached):
        return []
    try:
        if call.tool == "judge_edit":
            e = typed_output(call.output, _EditView)
            if e is None:
                return []
            out = [Evaluation(f"judge_edit.{k}", a.score, a.label, a.text)
                   for k, a in (("effectiveness", e.effectiveness), ("preservation", e.preservation),
                                ("quality", e.quality))]
            if e.edit_score is not None:
                out.append(Evaluation("judge_edit.edit_score", e.edit_score))
            return out  # (its `verdict` only restates the three aspects)
        if call.tool == "judge_rubric":
            r = typed_output(call.output, _RubricView)
            if r is None:
                return []
            return [Evaluation("judge_rubric", r.score, "aligned" if r.aligned else "not_aligned",
                               f"mean p(yes) {r.score:.3f} against threshold {r.threshold}")]
        if call.tool == "judge_aura":
            a = typed_output(call.output, _AuraView)
            if a is None:
                return []
            category = a.category if a.category is not None else a.llm_category
            return [Evaluation("judge_aura", a.score, f"category_{category}" if category is not None else None,
                               a.reasoning or a.llm_reasoning or None)]
        s = typed_output(call.output, _ScoredView)
        return [Evaluation(call.tool, s.score, s.verdict)] if s is not None else []
    except ValidationError:
        return []


# ---- spans ---------------------------------------------------------------------------------------------
class _RunIds(IdGenerator):
    """Trace and span ids derived from the run id: the same trace always exports with the same ids."""

    def __init__(self, seed: str):
        self.seed = seed
        self.n = 0

    def _int(self, text: str, nbytes: int) -> int:
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:nbytes], "big") or 1

    def generate_trace_id(self) -> int:
        return self._int(f"{self.seed}:trace", 16)

    def generate_span_id(self) -> int:
        self.n += 1
        return self._int(f"{self.seed}:span:{self.n}", 8)

    def is_trace_id_random(self) -> bool:
        return False  # derived from the run id (W3C trace-context "random" flag stays off)


@dataclass
class _Node:
    name: str
    start: int
    end: int
    span: Any


def _version() -> str:
    try:
        import importlib.metadata

        return importlib.metadata.version("audiomind")
    except Exception:  # noqa: BLE001 - a checkout without metadata
        return "0"


def _resource():
    from opentelemetry.sdk.resources import Resource

    attrs: dict[str, Any] = {"service.version": _version(), "audiomind.semconv_version": SEMCONV_VERSION}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attrs["service.name"] = AGENT_NAME
    if "openinference.project.name" not in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        attrs["openinference.project.name"] = AGENT_NAME  # Phoenix files the traces under this project
    return Resource.create(attrs, schema_url=SCHEMA_URL)


def _tool_descriptions() -> dict[str, str]:
    try:
        from audiomind.tools.manifest import ToolRegistry

        return {m.name: m.function for m in ToolRegistry.load().all()}
    except Exception:  # noqa: BLE001 - descriptions are a nicety, never a reason to fail an export
        return {}


def build_spans(state: EvidenceState, *, include_content: bool = False, resource=None,
                descriptions: dict[str, str] | None = None) -> list[Any]:
    """The finished spans (`ReadableSpan`s) of one trace, ready for any span exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource or _resource(), id_generator=_RunIds(state.run.run_id),
                              shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer(SCOPE_NAME, _version(), schema_url=SCHEMA_URL)
    spans = _Spans(tracer, state, include_content,
                   descriptions if descriptions is not None else _tool_descriptions())
    # span ids come from a counter: the spans start in this order (root, nodes, tool calls, model requests)
    spans.start_root()
    spans.start_nodes()
    spans.tool_calls()
    spans.model_requests()
    spans.finish()
    provider.force_flush()
    finished = list(memory.get_finished_spans())
    provider.shutdown()
    return finished


def _root_attributes(state: EvidenceState, specs: Mapping[Any, ModelSpec], content: bool) -> dict[str, Any]:
    """The root span's attributes: the question, the run's backends, its outcome and answer."""
    q, fa, outcome = state.question, state.final_answer, state.outcome
    a0 = state.artifacts[0] if state.artifacts else None
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT_NAME,
        "gen_ai.agent.version": state.run.versions.get("audiomind") or _version(),
        "gen_ai.conversation.id": state.run.run_id,
        "gen_ai.provider.name": _provider(specs.get("planner")),
        "gen_ai.request.model": (specs["planner"].model or specs["planner"].spec) if "planner" in specs else None,
        "openinference.span.kind": "AGENT",
        "session.id": state.run.run_id,
        "audiomind.semconv_version": SEMCONV_VERSION,
        "audiomind.run_id": state.run.run_id,
        "audiomind.schema_version": state.schema_version,
        "audiomind.item_id": q.item_id,
        "audiomind.planner": specs["planner"].spec if "planner" in specs else None,
        "audiomind.frontend": specs["frontend"].spec if "frontend" in specs else None,
        "audiomind.question.choices": len(q.choices),
        # a file path names a user, a folder, a project: content, sent only with include_content
        "audiomind.audio.uri": _uri(q.audio_path) if q.audio_path and content else None,
        "audiomind.audio.sha256": a0.sha256 if a0 else None,
        "audiomind.audio.duration_s": a0.duration_s if a0 else None,
        "audiomind.outcome.status": outcome.status if outcome else None,
        "audiomind.outcome.bound_hit": outcome.bound_hit if outcome else None,
        "audiomind.answer.choice_index": fa.choice_index if fa else None,
        "audiomind.answer.confidence": fa.confidence if fa else None,
        "audiomind.decisions": len(state.decisions),
        "audiomind.tool_calls": len(state.tool_calls),
        "audiomind.evidence_items": len(state.evidence),
    }
    if content:
        parts: list[dict[str, Any]] = [{"type": "text", "content": q.text}]
        if q.choices:
            parts.append({"type": "text", "content": "Choices: " + " | ".join(q.choices)})
        if q.audio_path:
            parts.append({"type": "uri", "modality": "audio", "uri": _uri(q.audio_path)})
        attrs.update({
            "gen_ai.input.messages": _json([{"role": "user", "parts": parts}]),
            "input.value": q.text + (("\nChoices: " + " | ".join(q.choices)) if q.choices else ""),
            "audiomind.ground_truth": q.ground_truth,
        })
        if fa is not None:
            answer = fa.choice or fa.text
            attrs.update({
                "gen_ai.output.messages": _json([{"role": "assistant", "finish_reason": "stop",
                                                  "parts": [{"type": "text", "content": answer}]}]),
                "output.value": answer,
                "audiomind.answer.rationale": clip_text(fa.rationale, CONTENT_LIMIT),
            })
    return attrs


def _tool_attributes(state: EvidenceState, call: ToolCall, read: list[Artifact], derived: list[Artifact],
                     descriptions: dict[str, str], content: bool) -> dict[str, Any]:
    """A tool call's span attributes: what ran on which audio, what it derived, and (content) its arguments
    and output."""
    is_eval = call.category == ToolCategory.evaluation
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.tool,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": descriptions.get(call.tool),
        "openinference.span.kind": "EVALUATOR" if is_eval else "TOOL",
        "tool.name": call.tool,
        "tool.description": descriptions.get(call.tool),
        "audiomind.tool.status": call.status.value,
        "audiomind.tool.cache_hit": call.status == ToolCallStatus.cached,
        "audiomind.tool.version": call.tool_version,
        "audiomind.tool.category": call.category.value if call.category else None,
        "audiomind.tool.issued_by": call.issued_by,
        "audiomind.tool.step": call.step,
        "audiomind.tool.duration_s": call.duration_s,
        "audiomind.tool.cache_key": call.cache_key,
        "audiomind.tool.audio.artifact_ids": [a.id for a in read],
        "audiomind.tool.audio.sha256": [a.sha256 for a in read],
        "audiomind.tool.audio.uri": [_uri(a.path) for a in read] if content else None,
        "audiomind.tool.derived.artifact_ids": [a.id for a in derived],
        "audiomind.tool.derived.sha256": [a.sha256 for a in derived],
        "audiomind.tool.evidence_items": sum(1 for e in state.evidence if e.source_id == call.id),
    }
    if content:
        arguments = call.arguments if call.arguments is not None else call.requested_arguments
        attrs.update({
            "gen_ai.tool.call.arguments": _json(arguments), "input.value": _json(arguments),
            "input.mime_type": "application/json",
        })
        if call.output is not None:
            attrs.update({"gen_ai.tool.call.result": _json(call.output), "output.value": _json(call.output),
                          "output.mime_type": "application/json"})
    return attrs


class _Spans:
    """The spans of one trace as they are built: the root, one span per graph node, the tool calls and the
    model requests placed inside the nodes that made them."""

    def __init__(self, tracer: Any, state: EvidenceState, content: bool, descriptions: dict[str, str]):
        from opentelemetry import trace as trace_api

        self.trace_api = trace_api
        self.tracer = tracer
        self.state = state
        self.content = content
        self.descriptions = descriptions
        self.arts = {a.id: a for a in state.artifacts}
        self.specs = {m.role: m for m in state.run.models}
        # times: the run, its nodes, its tool calls
        self.run_start = _ns(state.run.started_at)
        self.nodes_t = [(t.node, _ns(t.started_at), _after(_ns(t.started_at), t.duration_s)) for t in state.timings]
        self.calls_t = [(c, _ns(c.started_at), _after(_ns(c.started_at), c.duration_s)) for c in state.tool_calls]
        starts = [self.run_start] + [s for _, s, _ in self.nodes_t] + [s for _, s, _ in self.calls_t]
        self.ends = [e for _, _, e in self.nodes_t] + [e for _, _, e in self.calls_t]
        if state.run.finished_at:
            self.ends.append(_ns(state.run.finished_at))
        elif state.run.wall_time_s:
            self.ends.append(_after(self.run_start, state.run.wall_time_s))
        self.root_start = min(starts)
        self.nodes: list[_Node] = []
        self.by_name: dict[str, list[_Node]] = defaultdict(list)

    def start_root(self) -> None:
        """The root span: one question."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        outcome = self.state.outcome
        self.root = self.tracer.start_span(
            f"invoke_agent {AGENT_NAME}", kind=SpanKind.INTERNAL,
            attributes=_clean(_root_attributes(self.state, self.specs, self.content)), start_time=self.root_start)
        if outcome is not None and outcome.status == "failed":
            self.root.set_status(Status(StatusCode.ERROR, clip_text(outcome.reason, 300)))
            self.root.set_attribute("error.type", "run_failed")
        elif outcome is not None:
            self.root.set_status(Status(StatusCode.OK))  # answered or stopped with a reason: the run itself worked
        self.root_ctx = self.trace_api.set_span_in_context(self.root)

    def start_nodes(self) -> None:
        """One span per graph node, from the node timings, with its decision or observation."""
        from opentelemetry.trace import SpanKind

        content = self.content
        for name, start, end in self.nodes_t:
            span = self.tracer.start_span(name, context=self.root_ctx, kind=SpanKind.INTERNAL, start_time=start,
                                          attributes={"openinference.span.kind": "CHAIN", "audiomind.node": name})
            node = _Node(name, start, end, span)
            self.nodes.append(node)
            self.by_name[name].append(node)
        for decision, node in zip(self.state.decisions, self.by_name.get("decide", [])):
            node.span.set_attributes(_clean({
                "audiomind.decision.step": decision.step, "audiomind.decision.action": decision.action.value,
                "audiomind.decision.tools": [r.tool for r in decision.tool_calls],
                "audiomind.decision.rationale": clip_text(decision.rationale, CONTENT_LIMIT) if content else None,
            }))
        seen: dict[str, int] = defaultdict(int)
        for obs in self.state.observations:
            where = _NODE_OF_OBSERVATION.get(obs.kind, "perceive")
            occ = self.by_name.get(where, [])
            if not occ:
                continue
            node = occ[min(seen[where], len(occ) - 1)]
            seen[where] += 1
            node.span.set_attributes(_clean({
                "audiomind.observation.id": obs.id, "audiomind.observation.frontend": obs.frontend,
                "audiomind.observation.artifact_ids": obs.artifact_ids,
                "audiomind.observation.prompt_id": obs.prompt_id,
                "input.value": clip_text(obs.prompt, CONTENT_LIMIT) if content else None,
                "output.value": clip_text(obs.text, CONTENT_LIMIT) if content else None,
            }))

    def _parent_at(self, ts: int) -> Any:
        inside = [n for n in self.nodes if n.start - 1_000_000 <= ts <= n.end + 1_000_000]
        return self.trace_api.set_span_in_context(max(inside, key=lambda n: n.start).span) if inside \
            else self.root_ctx

    def _audio_of(self, arguments: dict[str, Any] | None) -> list[Artifact]:
        ids = [v for k, v in (arguments or {}).items() if (k == "artifact" or k.endswith("_artifact"))
               and isinstance(v, str)]
        return [self.arts[i] for i in ids if i in self.arts]

    def tool_calls(self) -> None:
        """A span per tool call, inside the node running when it started, with its evaluations as events."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        for call, start, end in self.calls_t:
            read = self._audio_of(call.arguments)
            derived = [self.arts[i] for i in call.derived_artifact_ids if i in self.arts]
            attrs = _tool_attributes(self.state, call, read, derived, self.descriptions, self.content)
            span = self.tracer.start_span(f"execute_tool {call.tool}", context=self._parent_at(start),
                                          kind=SpanKind.INTERNAL, attributes=_clean(attrs), start_time=start)
            if call.status not in (ToolCallStatus.ok, ToolCallStatus.cached):
                span.set_attribute("error.type", call.status.value)
                span.set_status(Status(StatusCode.ERROR, clip_text(call.error or call.status.value, 300)))
            else:
                span.set_status(Status(StatusCode.OK))
            for ev in evaluations(call):
                span.add_event(EVALUATION_EVENT, attributes=ev.attributes(self.content), timestamp=end)
                # the same verdict as span attributes, which Phoenix and most UIs list (events are easy to miss)
                span.set_attributes(ev.span_attributes(self.content))
            span.end(end_time=end)

    def _failing_node(self, where: str, mc: ModelCall, run_end: int) -> _Node:
        """The node span of the request that failed the run: its node raised before its timing was recorded,
        so the span is made here, from the end of the last recorded node to the end of the run."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        start = max([self.root_start, *(n.end for n in self.nodes)])
        span = self.tracer.start_span(where, context=self.root_ctx, kind=SpanKind.INTERNAL, start_time=start,
                                      attributes={"openinference.span.kind": "CHAIN", "audiomind.node": where,
                                                  "audiomind.node.recorded": False})
        span.set_status(Status(StatusCode.ERROR, clip_text(mc.errors[-1], 300)))
        span.set_attribute("error.type", "model_request_failed")
        failing = _Node(where, start, max(run_end, _after(start, mc.latency_s)), span)
        self.nodes.append(failing)
        return failing

    def model_requests(self) -> None:
        """A span per model request, placed in the node that made them (a ModelCall records no start time)."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        placed: dict[int, int] = defaultdict(int)  # id(node) -> ns used so far
        used: dict[str, int] = defaultdict(int)
        run_end = max([self.root_start, *self.ends])
        for mc in self.state.model_calls:
            spec = self.specs.get(mc.role)
            where = _NODE_OF_PURPOSE.get(mc.purpose)
            occ = self.by_name.get(where or "", [])
            failed_call = bool(mc.errors) and mc.output is None
            if failed_call and where is not None and used[where] >= len(occ):
                occ = self.by_name[where] = [*occ, self._failing_node(where, mc, run_end)]
            node = occ[min(used[where], len(occ) - 1)] if occ and where is not None else None
            if where is not None:
                used[where] += 1
            base = node.start if node else self.root_start
            start = base + placed[id(node)]
            end = _after(start, mc.latency_s)
            placed[id(node)] += end - start
            span = self.tracer.start_span(
                f"{_operation(spec)} {(spec.model if spec and spec.model else mc.backend)}",
                context=self.trace_api.set_span_in_context(node.span) if node else self.root_ctx,
                kind=SpanKind.CLIENT, start_time=start, attributes=_model_attributes(mc, spec, self.content))
            if failed_call:
                span.set_attribute("error.type", "model_request_failed")
                span.set_status(Status(StatusCode.ERROR, clip_text(mc.errors[-1], 300)))
            else:
                span.set_status(Status(StatusCode.OK))
            span.end(end_time=end)
            self.ends.append(end)

    def finish(self) -> None:
        """End every node span (OK unless marked failed) and the root at the latest end."""
        from opentelemetry.trace import Status, StatusCode

        for node in self.nodes:
            if node.span.status.status_code == StatusCode.UNSET:
                node.span.set_status(Status(StatusCode.OK))
            node.span.end(end_time=node.end)
        self.root.end(end_time=max([self.root_start, *self.ends]))


def _model_attributes(mc: ModelCall, spec: ModelSpec | None, content: bool) -> dict[str, Any]:
    model = spec.model if spec and spec.model else None
    total = (mc.input_tokens or 0) + (mc.output_tokens or 0) if (mc.input_tokens or mc.output_tokens) else None
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": _operation(spec),
        "gen_ai.provider.name": _provider(spec),
        "gen_ai.request.model": model or mc.backend,
        "gen_ai.usage.input_tokens": mc.input_tokens,
        "gen_ai.usage.output_tokens": mc.output_tokens,
        "openinference.span.kind": "LLM",
        "llm.model_name": model or mc.backend,
        "llm.provider": _provider(spec),
        "llm.token_count.prompt": mc.input_tokens,
        "llm.token_count.completion": mc.output_tokens,
        "llm.token_count.total": total,
        "audiomind.model_call.id": mc.id,
        "audiomind.model_call.role": mc.role,
        "audiomind.model_call.purpose": mc.purpose,
        "audiomind.model_call.backend": mc.backend,
        "audiomind.model_call.attempts": mc.attempts,
        "audiomind.model_call.latency_s": mc.latency_s,
        **_server(spec),
    }
    if spec and spec.decoding:
        for key, name in (("temperature", "gen_ai.request.temperature"), ("top_p", "gen_ai.request.top_p"),
                          ("max_tokens", "gen_ai.request.max_tokens"), ("seed", "gen_ai.request.seed")):
            value = spec.decoding.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                attrs[name] = value
    if content and mc.input:
        # each message whole up to PROMPT_LIMIT (a planner prompt with its tool inventory is ~35k characters),
        # clipped per message so the JSON stays JSON
        messages = [{"role": m.role, "parts": [{"type": "text", "content": clip_text(m.content, PROMPT_LIMIT)}]}
                    for m in mc.input]
        attrs["gen_ai.input.messages"] = json.dumps(messages, ensure_ascii=False)
        attrs["input.value"] = clip_text("\n\n".join(f"{m.role}: {m.content}" for m in mc.input), PROMPT_LIMIT)
        for i, m in enumerate(mc.input[:32]):  # OpenInference's flattened messages (Phoenix's prompt view)
            attrs[f"llm.input_messages.{i}.message.role"] = m.role
            attrs[f"llm.input_messages.{i}.message.content"] = clip_text(m.content, PROMPT_LIMIT)
    if content and mc.output is not None:
        text, parsed = model_output_text(mc.output)
        attrs["gen_ai.output.messages"] = _json([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])
        attrs["output.value"] = clip_text(text, CONTENT_LIMIT)
        attrs["llm.output_messages.0.message.role"] = "assistant"
        attrs["llm.output_messages.0.message.content"] = clip_text(text, CONTENT_LIMIT)
        if parsed is not None:
            attrs["audiomind.model_call.parsed"] = _json(parsed)
    return _clean(attrs)


def model_output_text(recorded: Any) -> tuple[str, Any]:
    """(what the model replied, as text; what the backend read from it, or None). Backends record a model
    call's reply as `{"raw": reply text, "parsed": fields, ...}`: the span's output is the reply itself, not
    that wrapper. (A model call's record, not a tool output: no tool output model declares these keys.)"""
    if isinstance(recorded, str):
        return recorded, None
    if isinstance(recorded, dict) and isinstance(recorded.get("raw"), str):
        rest = {k: v for k, v in recorded.items() if k != "raw" and v is not None}
        parsed = rest.pop("parsed", None)
        return recorded["raw"], (parsed if parsed is not None else (rest or None))
    return json.dumps(recorded, ensure_ascii=False, default=str), None


# ---- export --------------------------------------------------------------------------------------------
class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # noqa: BLE001, S110 - a record that cannot be formatted is left out
            pass


def _reason(messages: list[str]) -> str:
    """One short reason from the exporter's log lines (which may be long, nested exception reprs)."""
    if not messages:
        return "the collector did not accept the spans"
    text = messages[-1] if "Failed to export" in messages[-1] or len(messages) == 1 else " ".join(messages[-2:])
    m = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", " ".join(messages))
    if m:
        return m.group(1).strip().lower()
    m = re.search(r"code: (\d{3})", text)
    if m:
        return f"HTTP status {m.group(1)}"
    return clip_text(text, 200)


def _timeout(default: float) -> float | None:
    """None lets the exporter read OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT."""
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT"):
        return None
    return default


def export_states(states: Iterable[tuple[EvidenceState, str | None]], url: str, *, include_content: bool = False,
                  timeout_s: float = 10.0) -> ExportReport:
    """Send each (trace, its file) to the OTLP/HTTP collector at `url` (protobuf; headers from
    OTEL_EXPORTER_OTLP_HEADERS). Raises ExportError, with one readable reason, when delivery fails."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    endpoint = otlp_traces_url(url)
    report = ExportReport(endpoint=redact_userinfo(endpoint))
    resource = _resource()
    descriptions = _tool_descriptions()
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=_timeout(timeout_s))
    log = logging.getLogger("opentelemetry.exporter.otlp")
    capture = _Capture()
    old_propagate = log.propagate
    log.addHandler(capture)
    log.propagate = False  # the exporter's own retry/failure lines would bury the one line we print
    from audiomind.audit.otel_deadline import export_within, total_timeout

    total_s = total_timeout(timeout_s)
    deadline = time.monotonic() + total_s
    try:
        for state, file in states:
            spans = build_spans(state, include_content=include_content, resource=resource, descriptions=descriptions)
            result = export_within(exporter, spans, deadline - time.monotonic())
            if result is None:  # a collector that trickles its reply never trips the per-read timeout
                raise ExportError(redact_userinfo(f"could not export run {state.run.run_id} to {endpoint}: no "
                                                  f"complete reply within {total_s:g} s (the export was abandoned)"))
            if result is not SpanExportResult.SUCCESS:
                done = f" ({len(report.traces)} trace(s) sent before it)" if report.traces else ""
                raise ExportError(redact_userinfo(f"could not export run {state.run.run_id} to {endpoint}: "
                                                  f"{_reason(capture.messages)}{done}"))
            report.traces.append({"run_id": state.run.run_id, "trace_id": f"{spans[0].context.trace_id:032x}",
                                  "spans": len(spans), "file": file})
    finally:
        log.removeHandler(capture)
        log.propagate = old_propagate
        exporter.shutdown()
    return report


def export_after_run(state: EvidenceState, url: str, *, trace_path: str | None = None,
                     include_content: bool = False, timeout_s: float = 5.0) -> str | None:
    """Export a finished run; never raises. Returns None when sent, else the one warning line to print
    (the run's result and its trace file are untouched either way)."""
    try:
        export_states([(state, trace_path)], url, include_content=include_content, timeout_s=timeout_s)
        return None
    except Exception as exc:  # noqa: BLE001 - one line per unreadable file
        kept = f"; the trace is kept at {trace_path}" if trace_path else ""
        return f"OpenTelemetry export skipped: {redact_userinfo(str(exc))}{kept}"


def load_states(files: Iterable[Path]) -> tuple[list[tuple[EvidenceState, str]], list[tuple[str, str]]]:
    """(readable traces with their file, [(file, why not)] for the rest)."""
    from audiomind.audit.timeline import read_trace_file

    states, skipped = [], []
    for f in files:
        try:
            states.append((read_trace_file(f), str(f)))
        except Exception as exc:  # noqa: BLE001 - telemetry must never fail a run
            skipped.append((str(f), clip_text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)))
    return states, skipped


def export_failed_run(exc: BaseException, url: str, *, include_content: bool = False) -> None:
    """`ask --otlp` for a run that failed (a model backend, the time budget): the failed run's state rides on
    the exception (`audiomind_state`); sent like a finished one, a delivery problem only warned about on
    stderr (the run's own error line follows)."""
    state = getattr(exc, "audiomind_state", None)
    if state is None:
        return
    warning = export_after_run(state, url, trace_path=getattr(exc, "audiomind_trace_path", None),
                               include_content=include_content)
    if warning:
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True).print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
