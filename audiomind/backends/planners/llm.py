"""The text planner over any LangChain chat model (OpenAI-compatible incl. vLLM / llama.cpp server,
Gemini, Ollama, a local GGUF through llama-cpp-python, or a scripted fake model in tests).

Each planner role (perception prompt, plan, decision, summary) renders its template from `prompts/`,
asks for JSON through the backend's JSON-schema mode where it has one (OpenAI `response_format`,
vLLM guided decoding, Gemini `response_schema`, Ollama `format`, llama.cpp grammars) and otherwise
parses the plain reply. A malformed reply gets exactly one retry that tells the model what was wrong;
after that the planner degrades deterministically (a STOP decision, a template plan or prompt) and the
`ModelCall` says so. Transport failures are retried by `call_with_retries`; when they persist a
`BackendError` (with `.model_call`) is raised, because "the planner was unreachable" is a failed run,
not a reasoned stop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from audiomind.backends.base import BackendError
from audiomind.backends.jsonparse import JSONExtractError, extract_object, message_text
from audiomind.backends.retry import call_with_retries, merge_calls, redact
from audiomind.prompts import choices_block, evidence_block, evidence_rule, has_evidence, load_prompt
from audiomind.state import (
    Action,
    EvidenceItem,
    EvidenceState,
    ModelCall,
    ModelSpec,
    PerceptionPrompt,
    Plan,
    PlannerDecision,
    RelistenRequest,
    ToolCall,
    ToolCallRequest,
)
from audiomind.trace import model_messages

T = TypeVar("T", bound=BaseModel)


class JSONReply(NamedTuple):
    """What `LLMPlanner.complete_json` returns."""

    parsed: Any  # the validated schema instance, or None when both rounds were malformed
    raw: str  # the text of the last reply
    call: ModelCall  # every round and attempt
    problem: str | None  # what was wrong with the last reply (None when parsed)


def _as_messages(messages: str | list[Any]) -> list[Any]:
    """A prompt string is one human message; a list is taken as LangChain messages."""
    if isinstance(messages, str):
        from langchain_core.messages import HumanMessage, SystemMessage

        if has_evidence(messages):  # quoted evidence travels with the rule that it never instructs
            return [SystemMessage(content=evidence_rule()), HumanMessage(content=messages)]
        return [HumanMessage(content=messages)]
    return list(messages)

# Sent after a malformed reply (kept here rather than in prompts/ because it is a protocol message,
# not a task prompt; its text is recorded in the ModelCall errors of every run that used it).
FIX_PROMPT = (
    "Your previous reply could not be used: {problem}\n"
    "Reply again with exactly one JSON object that follows the requested keys, and nothing else."
)

EVIDENCE_BUDGET_TOKENS = 6000
"""How much of a prompt the evidence may take (estimated tokens); over it the oldest entries are condensed."""
CONDENSED_CHARS = 400
"""What a condensed observation keeps of its description (its other fields keep half of that each)."""
CHARS_PER_TOKEN = 4



# ---------------------------------------------------------------- wire schemas (what the model writes)


def _to_str_list(v: Any) -> Any:
    if v is None:
        return []
    if isinstance(v, str):
        return [v] if v.strip() else []
    if isinstance(v, (list, tuple)):
        return [x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in v]
    return v


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _text(n: int, **kw: Any) -> Any:
    """A string field whose length bound goes into the wire schema only (so grammar-constrained small
    models finish their JSON inside the token budget) and is never enforced on what a model writes."""
    return Field(json_schema_extra={"maxLength": n}, **kw)


def _texts(items: int, n: int) -> Any:
    return Field(default_factory=list, json_schema_extra={"maxItems": items,
                                                          "items": {"type": "string", "maxLength": n}})


class PerceptionPromptOut(_Wire):
    """What the planner writes for the front end's first listen."""

    prompt: str = _text(2000, min_length=10, description="the prompt the audio model receives")
    auditory_targets: list[str] = _texts(12, 160)

    _lists = field_validator("auditory_targets", mode="before")(_to_str_list)


class PlanOut(_Wire):
    intent: str = _text(600, min_length=1)
    answer_format: str = _text(300, default="")
    focus: list[str] = _texts(12, 200)
    candidate_operations: list[str] = _texts(12, 200)
    claims_to_verify: list[str] = _texts(12, 200)
    directly_answerable: list[str] = _texts(12, 200)
    rationale: str = _text(800, default="")

    _lists = field_validator(
        "focus", "candidate_operations", "claims_to_verify", "directly_answerable", mode="before"
    )(_to_str_list)


class ToolCallOut(_Wire):
    tool: str = _text(64, min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    reason: str = _text(300, default="")

    @field_validator("arguments", mode="before")
    @classmethod
    def _args(cls, v: Any) -> Any:
        if v is None:
            return {}
        if isinstance(v, str):  # some models JSON-encode the arguments object
            v = v.strip()
            if not v:
                return {}
            try:
                return json.loads(v)
            except json.JSONDecodeError as exc:
                raise ValueError(f"arguments is a string that is not a JSON object: {v[:80]!r}") from exc
        return v


class DecisionOut(_Wire):
    """One evidence-loop action, as the decide prompt asks for it."""

    action: Literal["CALL_TOOLS", "RELISTEN", "ANSWER", "STOP"]
    rationale: str = _text(800, default="")
    tool_calls: list[ToolCallOut] = Field(default_factory=list, json_schema_extra={"maxItems": 8})
    relisten_artifact_ids: list[str] = _texts(8, 32)
    relisten_prompt: str = _text(800, default="")
    stop_reason: str = _text(400, default="")

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, v: Any) -> Any:
        return v.strip().upper().replace(" ", "_") if isinstance(v, str) else v

    _ids = field_validator("relisten_artifact_ids", mode="before")(_to_str_list)

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _calls(cls, v: Any) -> Any:
        if v is None:
            return []
        return [v] if isinstance(v, dict) else v

    @field_validator("relisten_prompt", "stop_reason", "rationale", mode="before")
    @classmethod
    def _none_str(cls, v: Any) -> Any:
        return "" if v is None else v

    @model_validator(mode="after")
    def _consistent(self) -> DecisionOut:
        if self.action == "CALL_TOOLS" and not self.tool_calls:
            raise ValueError("action CALL_TOOLS needs at least one entry in tool_calls")
        if self.action == "RELISTEN":
            if not self.relisten_artifact_ids:
                raise ValueError("action RELISTEN needs relisten_artifact_ids (e.g. [\"a1\"])")
            if not self.relisten_prompt.strip():
                raise ValueError("action RELISTEN needs a relisten_prompt saying what to focus on")
        return self


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to the backend's structured-output mode.

    References are inlined (not every grammar compiler follows `$ref`), every declared key is
    required (grammar-constrained decoders then always write a rationale) and defaults are dropped;
    tool `arguments` stay a free object, so the schema is used non-strictly. Validation of the reply
    is ours and more lenient than this schema.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(dict(defs[node["$ref"].split("/")[-1]]))
            out = {k: walk(v) for k, v in node.items() if k != "default"}
            if out.get("type") == "object" and isinstance(out.get("properties"), dict):
                out["required"] = list(out["properties"])
            return out
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    return walk(schema)


_GRAMMAR_UNSAFE = frozenset({"maxLength", "minLength", "maxItems", "minItems"})
GRAMMAR_MAX_TOKENS = 512
"""The reply cap in the grammar (json_object) mode when the model has none: it stands in for the length bounds
that grammar leaves out (a decision, a plan or a prompt fits well within it)."""


def _cut_reply(exc: BaseException) -> Any:
    """The partial reply of a completion cut at its token cap, as an AIMessage (with its token counts), when
    `exc` is the openai SDK's LengthFinishReasonError (raised instead of returning such a reply); else None.
    A cut reply is malformed JSON like any other: the format retry and the recorded fallback handle it."""
    completion = getattr(exc, "completion", None)
    if type(exc).__name__ != "LengthFinishReasonError" or completion is None:
        return None
    from langchain_core.messages import AIMessage

    choices = getattr(completion, "choices", None) or []
    text = (getattr(getattr(choices[0], "message", None), "content", None) or "") if choices else ""
    usage = getattr(completion, "usage", None)
    meta = None
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        meta = {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens or 0,
                "total_tokens": usage.total_tokens or 0}
    return AIMessage(content=text, usage_metadata=meta, response_metadata={"finish_reason": "length"})


def grammar_schema(schema: Any) -> Any:
    """`schema` without string-length and item-count bounds, for grammar compilers (llama.cpp) that expand
    each bound into that many nested rules; validation of the reply stays ours."""
    if isinstance(schema, dict):
        return {k: grammar_schema(v) for k, v in schema.items() if k not in _GRAMMAR_UNSAFE}
    if isinstance(schema, list):
        return [grammar_schema(x) for x in schema]
    return schema


# ---------------------------------------------------------------- fitting a prompt into a small context
#
# A small local model (SmolLM2-135M: 8,192 tokens) cannot take the whole planner prompt: the full tool inventory
# alone is ~6.5k tokens. Each role renders its prompt at increasing compaction levels (the inventory shorter,
# the evidence budget smaller) and sends the first one that fits the model's context with room for the reply
# (and a format retry); when none fits, the run fails with a BackendError that names the limit. Levels above 0
# are recorded in the ModelCall's context_notes.

COMPACT_LEVELS = (
    # (evidence budget in estimated tokens, inventory form, and in characters: observation, plan and the front
    # end's call arguments at most; None: whole; 0: left out)
    (EVIDENCE_BUDGET_TOKENS, "full", None, None, None),
    (2000, "short", None, None, None),
    (800, "signatures", CONDENSED_CHARS, 300, 120),
    (200, "names", CONDENSED_CHARS // 2, 120, 0),
)
"""Compaction levels of a planner prompt, tried in order until one fits the model's context."""
PROMPT_OVERHEAD_TOKENS = 48
"""Chat-template tokens a message list adds beyond its texts (role markers, a default system prompt)."""
FIX_RETRY_TOKENS = 80
"""The format-retry message's own tokens (FIX_PROMPT and the problem it names)."""

_CONTEXT_LIMIT = re.compile(r"maximum context length is (\d+)|exceeds? (?:the )?context window of (\d+)|"
                            r"context (?:window|length|size) (?:is |of )?(\d+)", re.IGNORECASE)
_PROMPT_TOKENS = re.compile(r"\((\d+) in the messages|requested tokens \((\d+)\)", re.IGNORECASE)


_CATEGORY = re.compile(r" \[[^]]*\]")


class ContextTooSmall(BackendError):
    """No rendering of a planner prompt fits the model's context window (with room for the reply)."""


def context_limit(exc: BaseException) -> tuple[int, int | None] | None:
    """(the model's context in tokens, the prompt's tokens as the server counted them, if it said) from a
    server's context-length refusal (OpenAI, vLLM, llama-cpp-python's server, llama.cpp in process), else None."""
    from audiomind.backends.retry import _chain, describe_error

    text = " ".join(describe_error(e) + " " + str(e) for e in _chain(exc))
    m = _CONTEXT_LIMIT.search(text)
    if not m:
        return None
    n = _PROMPT_TOKENS.search(text)
    prompt = int(next(g for g in n.groups() if g)) if n else None
    return int(next(g for g in m.groups() if g)), prompt


def compact_inventory(inventory: str, form: str) -> str:
    """The tool inventory (ToolRegistry.render_inventory: '## category' headers, then per tool '- name [category]
    (arguments)' and indented 'does:', 'may support:', 'must not be used for:' lines) in a shorter form:
    full; short (one line a tool: what it does and what it must not be used for, each clipped); signatures
    (name and arguments); names (a comma-separated list)."""
    if form == "full":
        return inventory
    tools: list[dict[str, str]] = []
    for line in inventory.splitlines():
        if line.startswith("- "):
            tools.append({"head": line[2:].strip()})
        elif tools and line.startswith("    ") and ":" in line:
            key, _, value = line.strip().partition(":")
            tools[-1][key.strip()] = value.strip()
    if form == "short":
        return "\n".join(f"- {t['head']}: {_clip(t.get('does', ''), 110)}"
                         + (f" Not for: {_clip(t['must not be used for'], 90)}" if t.get("must not be used for") else "")
                         for t in tools)
    if form == "signatures":
        return "\n".join("- " + _CATEGORY.sub("", t["head"], count=1) for t in tools)
    return ", ".join(t["head"].split(" ", 1)[0] for t in tools)


# ---------------------------------------------------------------- state rendering (deterministic)
#
# Everything heard (observations, tool claims, derived measurements) is rendered as evidence blocks
# (audiomind.prompts.evidence_block: quoted, escaped data); the planner's own record (decisions, requested
# calls, rejections) and the run's bookkeeping (artifacts, provenance) are plain text around them.


def _clip(s: str, n: int = 300) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate (about 4 characters a token), for the evidence budget."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class Rendered(NamedTuple):
    """A rendered prompt section and what it condensed to fit the budget (recorded in ModelCall.context_notes)."""

    text: str
    notes: list[str]


def render_artifacts(state: EvidenceState) -> str:
    lines = []
    for a in state.artifacts:
        desc = f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} ch"
        if a.derived_from:
            params = json.dumps(a.parameters, sort_keys=True, separators=(",", ":"), default=str)
            desc += f", derived from {a.derived_from} by {a.operation or '?'} {_clip(params, 240)} (re-listen may take it)"
        else:
            desc += " (original recording: not for re-listen)"
        lines.append("- " + desc)
    return "\n".join(lines) or "(none)"


_ITEM_LINE = re.compile(r"^- [\w.-]+: .* \[(ev_[0-9a-f]{10})\]$")


def _without_items(description: str, itemised: Collection[str]) -> tuple[str, list[str]]:
    """A tool-listening front end's description (the cascade's: one "- tool: claim [ev_id]" line per tool
    claim) without the lines that restate an evidence item quoted in its own block, and those items' ids."""
    keep, ids = [], []
    for line in description.splitlines():
        m = _ITEM_LINE.match(line.strip())
        if m and m.group(1) in itemised:
            ids.append(m.group(1))
        else:
            keep.append(line)
    return "\n".join(keep), ids


def _observation_body(obs: Any, limit: int | None = None, itemised: Collection[str] = ()) -> str:
    """Every field the front end reported, whole (limit: each cut to that many characters). Lines of a
    tool-listening front end's description that restate an item in `itemised` are named, not repeated."""
    cut = (_clip) if limit else (lambda s, n: str(s).strip())
    body = obs.description or obs.text
    quoted: list[str] = []
    if obs.tool_call_ids and itemised:
        body, quoted = _without_items(body, itemised)
    parts = [f"description: {cut(body, limit or 0)}"]
    if quoted:
        parts.append(f"its tool claims, each quoted in its own evidence block: {', '.join(quoted)}")
    if obs.focus:
        parts.append(f"focus: {cut(obs.focus, (limit or 0) // 2)}")
    if obs.provisional_answer:
        parts.append(f"provisional answer: {cut(obs.provisional_answer, (limit or 0) // 2)}")
    if obs.open_needs:
        parts.append("open needs:\n" + "\n".join(f"- {cut(n, (limit or 0) // 2)}" for n in obs.open_needs))
    if obs.uncertainty:
        parts.append(f"uncertainty: {cut(obs.uncertainty, (limit or 0) // 2)}")
    if obs.windows:
        parts.append("heard in windows: " + ", ".join(
            f"{w.artifact_id} {w.start_s:.1f}-{w.end_s:.1f} s" for w in obs.windows))
    return "\n".join(parts)


def render_observation(obs: Any, limit: int | None = None, itemised: Collection[str] = ()) -> str:
    """One observation as an evidence block: description, focus, provisional answer, open needs and
    uncertainty, whole (or each cut to `limit` characters when a budget condensed it)."""
    body = _observation_body(obs, limit, itemised)
    if limit:
        body += f"\n[condensed to fit the token budget: the trace keeps observation {obs.id} whole]"
    return evidence_block(body, id=obs.id, source="frontend", by=obs.frontend, kind=obs.kind,
                          heard=", ".join(obs.artifact_ids))


def render_item(e: EvidenceItem, limit: int | None = None) -> str:
    claim = _clip(e.claim, limit) + " [condensed]" if limit and len(e.claim) > limit else e.claim
    return evidence_block(claim, id=e.id, source=e.tool or e.source_type,
                          category=e.category.value if e.category is not None else None, artifact=e.artifact_id,
                          confidence=f"{e.confidence:.2f}" if e.confidence is not None else None,
                          from_=e.source_id)


def _measured(state: EvidenceState, shown: str = "") -> str | None:
    """Measurements derived from several tools' outputs (rates, per-sound levels and pitches...), as the
    cascade's description and the neutral summary give them; lines already in `shown` are left out."""
    from audiomind.reasoning.facts import read_facts

    if not state.artifacts or not state.tool_calls:
        return None
    try:
        lines = read_facts(state).measured_lines()
    except Exception:  # noqa: BLE001 - a reader failure must not take the planner's prompt down
        return None
    lines = [m for m in lines if f"- {m}" not in shown]
    if not lines:
        return None
    return evidence_block("\n".join(f"- {m}" for m in lines), id=f"derived:{state.original.id}",
                          source="measurements derived from the tool outputs", artifact=state.original.id)


def _observation_steps(state: EvidenceState) -> dict[str, int]:
    """The step each observation belongs to: 0 for first perception, a re-listen's decision step."""
    relisten_steps = iter(d.step + 1 for d in state.decisions if d.action == Action.RELISTEN)
    out = {}
    for o in state.observations:
        out[o.id] = next(relisten_steps, state.step) if o.kind == "relisten" else 0
    return out


def render_evidence(state: EvidenceState, budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS) -> Rendered:
    """Every observation whole, every tool evidence item whole, then the derived measurements, all as
    evidence blocks. Over `budget_tokens` the oldest entries are condensed first (and, if that is not enough,
    left out); each condensed or omitted entry is named in the notes, which the trace records."""
    call_step = {c.id: c.step + 1 for c in state.tool_calls}
    obs_step = _observation_steps(state)
    heard = [o for o in state.observations if o.artifact_ids]  # a rejected re-listen heard nothing
    shown_obs = {o.id for o in heard}
    # an observation's own evidence item restates it; a tool claim gets its own block (with its category)
    items = [e for e in state.evidence if not (e.source_type == "observation" and e.source_id in shown_obs)]
    itemised = {e.id for e in items}
    # (age, id, what, full text, condensed text)
    entries: list[tuple[int, str, str, str, str]] = []
    for o in heard:
        entries.append((obs_step[o.id], o.id, f"observation {o.id} ({o.kind} by {o.frontend})",
                        render_observation(o, itemised=itemised),
                        render_observation(o, limit=CONDENSED_CHARS, itemised=itemised)))
    for e in items:
        entries.append((call_step.get(e.source_id, obs_step.get(e.source_id, 0)), e.id,
                        f"evidence item {e.id} ({e.tool or e.source_type})", render_item(e),
                        render_item(e, limit=CONDENSED_CHARS // 2)))
    measured = _measured(state, shown="\n".join(o.description or o.text for o in heard))
    texts = [full for _, _, _, full, _ in entries]
    notes: list[str] = []
    total = sum(estimate_tokens(t) for t in texts) + (estimate_tokens(measured) if measured else 0)
    if budget_tokens is not None and total > budget_tokens:
        oldest_first = sorted(range(len(entries)), key=lambda i: (entries[i][0], i))
        for i in oldest_first[:-1]:  # the newest entry always stays whole
            if total <= budget_tokens:
                break
            if len(entries[i][4]) >= len(texts[i]):  # nothing to gain: already short
                continue
            total += estimate_tokens(entries[i][4]) - estimate_tokens(texts[i])
            texts[i] = entries[i][4]
            notes.append(f"condensed {entries[i][2]} (step {entries[i][0]}) to fit the evidence budget of "
                         f"{budget_tokens} tokens")
        omitted = []
        for i in oldest_first[:-1]:
            if total <= budget_tokens:
                break
            total -= estimate_tokens(texts[i])
            texts[i] = ""
            omitted.append(entries[i][1])
        if omitted:
            notes.append(f"left out {len(omitted)} older entries to fit the evidence budget of {budget_tokens} "
                         f"tokens: {', '.join(omitted)}")
            first = next(i for i in range(len(texts)) if not texts[i])
            texts[first] = (f"({len(omitted)} older evidence entries left out to fit the token budget: "
                            f"{', '.join(omitted)}; the trace keeps them)")
    lines = [t for t in texts if t] + ([measured] if measured else [])
    if notes:
        lines.insert(0, f"(The oldest evidence was condensed to fit a budget of {budget_tokens} tokens; "
                        "the trace keeps it whole.)")
    return Rendered("\n".join(lines) or "(none yet)", notes)


def _args_text(c: ToolCall) -> str:
    args = c.arguments if c.arguments is not None else c.requested_arguments
    return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


def render_decisions(state: EvidenceState) -> str:
    """The decision history: each step's action and rationale, what it requested, and what came of it
    (tool call outcomes, rejections with their reasons, the observation a re-listen produced)."""
    relistens = iter([o for o in state.observations if o.kind == "relisten"])
    lines = []
    for d in state.decisions:
        lines.append(f"- step {d.step + 1}: {d.action.value} (by {d.planner or 'planner'}); rationale: "
                     f"{json.dumps(d.rationale, ensure_ascii=False)}")
        if d.action == Action.CALL_TOOLS:
            calls = [c for c in state.tool_calls if c.step == d.step and c.issued_by == "planner"]
            for c in calls:
                out = f"  requested {c.tool} {_clip(_args_text(c), 240)} -> {c.status.value} [{c.id}]"
                if c.derived_artifact_ids:
                    out += f", derived {', '.join(c.derived_artifact_ids)}"
                if c.error:
                    out += f": {_clip(c.error, 300)}"
                lines.append(out)
            if not calls:
                lines.append("  requested: " + "; ".join(f"{r.tool} {json.dumps(r.arguments, sort_keys=True)}"
                                                         for r in d.tool_calls) + " -> (no record)")
        elif d.action == Action.RELISTEN and d.relisten is not None:
            o = next(relistens, None)
            out = (f"  requested a re-listen to {', '.join(d.relisten.artifact_ids)} with focus "
                   f"{json.dumps(d.relisten.prompt, ensure_ascii=False)}")
            if o is None:
                out += " -> (no record)"
            else:
                if o.artifact_ids:
                    out += f" -> heard {', '.join(o.artifact_ids)}: observation {o.id}"
                if o.rejected:
                    out += f" -> {o.rejected}"
            lines.append(out)
        elif d.action == Action.STOP and d.stop_reason:
            lines.append(f"  stop reason: {json.dumps(d.stop_reason, ensure_ascii=False)}")
    return "\n".join(lines) or "(none yet: this is the first step)"


def render_tool_calls(state: EvidenceState, issued_by: str | None = None, args_limit: int | None = None) -> str:
    lines = []
    for c in state.tool_calls:
        if issued_by is not None and c.issued_by != issued_by:
            continue
        args = _clip(_args_text(c), 200 if args_limit is None else args_limit) if args_limit != 0 else ""
        line = f"[{c.id}] step {c.step} {c.issued_by}: {c.tool} {args} -> {c.status.value}".replace("  ", " ")
        if c.duration_s:
            line += f" ({c.duration_s:.2f} s)"
        if c.derived_artifact_ids:
            line += f", derived {', '.join(c.derived_artifact_ids)}"
        if c.error:
            line += f": {_clip(c.error, 240)}"
        lines.append(line)
    return "\n".join(lines) or "(none)"


def render_plan(plan: Plan | None, limit: int | None = None) -> str:
    if plan is None:
        return "(no plan)"
    text = json.dumps(plan.model_dump(exclude_defaults=True), ensure_ascii=False)
    return _clip(text, limit) + " [condensed: the trace keeps the plan whole]" if limit and len(text) > limit else text


def clip_info(state: EvidenceState) -> str:
    """One line per clip the question came with (a0; a multi-clip item's a1, a2, ... too)."""
    return "; ".join(f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} channel(s)"
                     + (f", {a.format}" if a.format else "") for a in state.originals)


# ---------------------------------------------------------------- the planner


class LLMPlanner:
    """Planner protocol over a LangChain BaseChatModel."""

    def __init__(
        self,
        chat_model: Any,
        *,
        name: str,
        spec: ModelSpec | None = None,
        max_retries: int = 3,
        base_delay_s: float = 1.0,
        max_delay_s: float = 20.0,
        endpoint: str | None = None,
        secrets: list[str | None] | None = None,
        structured: bool | None = None,
        max_steps: int | None = None,
        evidence_budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS,
        timeout_s: float | None = None,
    ):
        self.model = chat_model
        self.timeout_s = timeout_s  # a whole request's cap (each attempt; the run's budget may cut it shorter)
        self.name = name
        self._spec = spec or ModelSpec(role="planner", spec=name, kind="langchain",
                                       model=getattr(chat_model, "model_name", None)
                                       or getattr(chat_model, "model", None))
        self.max_retries = max_retries
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.endpoint = endpoint
        self._secrets = [s for s in (secrets or []) if s]
        # None: try the backend's JSON-schema mode, fall back to weaker forms if it has none.
        self._structured = structured
        self._mode = "json_schema"
        self._runnables: dict[str, Any] = {}
        self._max_steps = max_steps
        self.evidence_budget_tokens = evidence_budget_tokens
        self._context: int | None = None  # the model's context window in tokens, once known
        self._token_ratio = 1.0  # model tokens per estimated token (learned from a server's count)

    # -- fitting each prompt into the model's context window
    def context_tokens(self) -> int | None:
        """The model's context window in tokens: from the chat model when it can say (the in-process GGUF),
        else what a server's context-length refusal named; None while unknown."""
        if self._context is None:
            fn = getattr(self.model, "context_tokens", None)
            if callable(fn):
                try:
                    self._context = int(fn()) or None
                except BackendError:
                    raise
                except Exception as exc:  # a model that cannot be loaded is a backend failure
                    raise BackendError(f"{self.name}: cannot load the model: {type(exc).__name__}: {exc}") from exc
        return self._context

    def count_tokens(self, messages: list[Any]) -> int:
        """Tokens of a message list: exact where the chat model has a tokenizer (count_tokens), else the
        estimate scaled by what a server reported; plus the chat template's overhead."""
        texts = [message_text(getattr(m, "content", m)) for m in messages]
        fn = getattr(self.model, "count_tokens", None)
        if callable(fn):
            n = sum(int(fn(t)) for t in texts)
        else:
            n = -(-sum(estimate_tokens(t) for t in texts) * self._token_ratio // 1)
        return int(n) + PROMPT_OVERHEAD_TOKENS

    def reply_tokens(self) -> int:
        return int(getattr(self.model, "max_tokens", None) or GRAMMAR_MAX_TOKENS)

    def _fit(self, render: Callable[[int], Rendered], purpose: str, json_reply: bool) -> tuple[list[Any], list[str]]:
        """The messages of the least compacted rendering that fits the context with room for the reply (twice
        and the fix message for a JSON reply, which may take a format retry), and what the fitting did."""
        ctx = self.context_tokens()
        reserve = self.reply_tokens() * (2 if json_reply else 1) + (FIX_RETRY_TOKENS if json_reply else 0)
        sizes: list[int] = []
        for level in range(len(COMPACT_LEVELS)):
            r = render(level)
            msgs = _as_messages(r.text)
            if ctx is None:  # unknown: the full prompt (a server's context refusal names the limit)
                return msgs, r.notes
            n = self.count_tokens(msgs)
            sizes.append(n)
            if n + reserve <= ctx:
                notes = list(r.notes)
                if level:
                    budget, inv = COMPACT_LEVELS[level][:2]
                    notes.append(f"{purpose} prompt compacted (level {level}: inventory {inv}, evidence budget "
                                 f"{budget} tokens) to fit the model's context of {ctx} tokens: {n} prompt tokens "
                                 f"(full: {sizes[0]}) + {reserve} for the reply")
                return msgs, notes
        raise ContextTooSmall(
            f"{self.name}: the {purpose} prompt does not fit the model's context window of {ctx} tokens: it takes "
            f"{sizes[-1]} tokens at its most compact (full: {sizes[0]}) and the reply needs {reserve} more; use a "
            f"model with a larger context, or raise the server's context size (llama.cpp: --n_ctx / -c)")

    def _fitted(self, render: Callable[[int], Rendered], purpose: str, ask: Callable[[list[Any]], T],
                json_reply: bool = True) -> tuple[T, list[str], list[ModelCall]]:
        """ask(messages) with the prompt fitted to the context. A server that refuses the prompt as too long
        teaches the limit (and its token count); the prompt is fitted again and sent once more. Returns the
        reply, the fitting notes and the refused calls (recorded with the reply's call)."""
        refused: list[ModelCall] = []
        while True:
            msgs, notes = self._fit(render, purpose, json_reply)
            try:
                return ask(msgs), notes, refused
            except ContextTooSmall:
                raise
            except BackendError as exc:
                limit = context_limit(exc)
                known = self._context
                if limit is None or len(refused) >= 2 or (known is not None and limit[0] >= known
                                                          and limit[1] is None):
                    if refused and getattr(exc, "model_call", None) is not None:
                        exc.model_call = merge_calls(refused + [exc.model_call])  # type: ignore[attr-defined]
                    raise
                self._context = limit[0]
                sent = self.count_tokens(msgs) - PROMPT_OVERHEAD_TOKENS
                if limit[1] and sent > 0:  # the server's own count: scale the estimate to its tokenizer
                    self._token_ratio = max(1.0, self._token_ratio * limit[1] / sent * 1.05)
                prev = getattr(exc, "model_call", None)
                if prev is not None:
                    prev.errors.append(f"prompt refused as longer than the model's context of {limit[0]} tokens"
                                       + (f" ({limit[1]} prompt tokens)" if limit[1] else "")
                                       + ": fitted again and resent")
                    refused.append(prev)

    @staticmethod
    def _with_refused(call: ModelCall, refused: list[ModelCall], notes: list[str]) -> ModelCall:
        if refused:
            merged = merge_calls(refused + [call], output=call.output)
            call = call.model_copy(update={k: getattr(merged, k) for k in
                                           ("id", "attempts", "errors", "latency_s", "input_tokens", "output_tokens")})
        call.context_notes = list(call.context_notes) + notes
        return call

    def spec(self) -> ModelSpec:
        return self._spec

    # -- low level
    def _is_openai_compatible(self) -> bool:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:  # pragma: no cover - core dependency
            return False
        return isinstance(self.model, ChatOpenAI)

    @property
    def mode(self) -> str:
        """How replies are constrained: json_schema, json_object (schema-guided json mode) or plain."""
        if self._structured is False:
            return "plain"
        return self._mode

    def _runnable(self, schema: type[BaseModel], mode: str) -> Callable[[list[Any]], dict] | None:
        """A callable messages -> {'raw', 'parsed', 'parsing_error'} for a constrained mode, or None."""
        wire = wire_schema(schema)
        key = f"{mode}:{schema.__name__}"
        if key in self._runnables:
            return self._runnables[key]
        fn: Callable[[list[Any]], dict] | None
        if mode == "json_schema":
            try:
                r = self.model.with_structured_output(wire, method="json_schema", include_raw=True)
            except (NotImplementedError, ValueError, TypeError):
                return None
            fn = r.invoke
        elif mode == "json_object":
            # llama-cpp-python's server and llama.cpp accept {"type": "json_object", "schema": ...}
            # (grammar-constrained) where they reject OpenAI's json_schema form.
            # Length and count bounds are left out there: llama.cpp spells `maxLength: 1000` as 1000 nested
            # optional rules and refuses (or aborts on) such a grammar; the reply is validated here anyway.
            # Without those bounds a small model can write one string until its context is full, so the reply
            # is capped (the model's own cap, else GRAMMAR_MAX_TOKENS; a cut reply is malformed JSON, which the
            # retry and fallback below handle and record). It goes as `max_tokens` in the body: langchain-openai
            # sends a model's cap as `max_completion_tokens`, which llama-cpp-python's server ignores.
            cap = getattr(self.model, "max_tokens", None) or GRAMMAR_MAX_TOKENS
            body = {**(getattr(self.model, "extra_body", None) or {}), "max_tokens": cap}
            bound = self.model.bind(response_format={"type": "json_object", "schema": grammar_schema(wire)},
                                    extra_body=body)

            def fn(messages: list[Any]) -> dict:
                try:
                    return {"raw": bound.invoke(messages), "parsed": None, "parsing_error": None}
                except Exception as exc:
                    cut = _cut_reply(exc)
                    if cut is None:
                        raise
                    return {"raw": cut, "parsed": None, "parsing_error": None}
        else:
            return None
        self._runnables[key] = fn
        return fn

    def _downgrade(self) -> None:
        if self._mode == "json_schema" and self._is_openai_compatible():
            self._mode = "json_object"
        else:
            self._structured = False

    def _invoke(self, messages: list[Any], schema: type[BaseModel] | None, purpose: str) -> tuple[dict, ModelCall]:
        """One round trip with transport retries: {'raw': AIMessage, 'parsed': dict|None, 'parsing_error'}.

        A server that rejects the structured-output request form (HTTP 4xx naming response_format /
        json_schema) is asked again in the next weaker form, and the run remembers it.
        """
        failed: list[ModelCall] = []
        notes: list[str] = []
        while True:
            mode = self.mode if schema is not None else "plain"
            runnable = self._runnable(schema, mode) if mode != "plain" else None
            if mode != "plain" and runnable is None:  # the model has no such mode at all
                self._downgrade()
                continue
            if runnable is not None:
                def fn(r: Any = runnable) -> dict:
                    return r(messages)
            else:
                def fn() -> dict:
                    return {"raw": self.model.invoke(messages), "parsed": None, "parsing_error": None}
            try:
                result, call = call_with_retries(
                    fn, role="planner", purpose=purpose, backend=self.name, max_attempts=self.max_retries,
                    base_delay_s=self.base_delay_s, max_delay_s=self.max_delay_s, endpoint=self.endpoint,
                    secrets=self._secrets, give_up_if=_rejects_response_format if mode != "plain" else None,
                    timeout_s=self.timeout_s,
                )
            except NotImplementedError:
                if mode == "plain":
                    raise
                self._downgrade()
                continue
            except BackendError as exc:
                prev = getattr(exc, "model_call", None)
                if mode != "plain" and "not retried" in str(exc) and _rejects_response_format(exc):
                    if prev is not None:
                        failed.append(prev)
                    self._downgrade()
                    notes.append(f"structured output ({mode}) unsupported by this backend: "
                                 f"using {self.mode} replies from now on")
                    continue
                if failed and prev is not None:
                    exc.model_call = prev = merge_calls(failed + [prev])  # type: ignore[attr-defined]
                if prev is not None:
                    prev.input = model_messages(messages)
                raise
            if failed:
                call = merge_calls(failed + [call])
                call.errors.extend(notes)
            call.input = model_messages(messages)  # what was sent, on the record (trace, OTLP export)
            return result, call

    # -- public completion (the planner roles below and the judges use these)
    def complete_json(
        self, messages: str | list[Any], schema: type[T], *, purpose: str = "json",
        check: Callable[[T], None] | None = None,
    ) -> JSONReply:
        """A reply validated against `schema` (asked for in the backend's JSON-schema mode where it has
        one), with one format retry that tells the model what was wrong. Returns (parsed or None, raw
        text of the last reply, ModelCall, last problem); transport failures raise BackendError."""
        from langchain_core.messages import AIMessage

        base = _as_messages(messages)
        messages = list(base)
        calls: list[ModelCall] = []
        errors: list[str] = []
        raw_text = ""
        problem: str | None = None
        for round_no in (1, 2):
            try:
                out, call = self._invoke(messages, schema, purpose)
            except BackendError as exc:
                prev = getattr(exc, "model_call", None)
                if calls and prev is not None:
                    exc.model_call = merge_calls(calls + [prev])  # type: ignore[attr-defined]
                raise
            calls.append(call)
            errors.extend(call.errors)
            raw_msg = out.get("raw")
            raw_text = message_text(getattr(raw_msg, "content", raw_msg))
            try:
                data = out.get("parsed")
                if not isinstance(data, dict):
                    data = extract_object(raw_text)
                obj = schema.model_validate(data)
                if check is not None:
                    check(obj)
                merged = merge_calls(calls)
                merged.errors = errors
                merged.output = {"raw": raw_text, "parsed": obj.model_dump()}
                return JSONReply(obj, raw_text, merged, None)
            except (JSONExtractError, ValidationError, ValueError) as exc:
                problem = _problem(exc)
                errors.append(redact(f"round {round_no}: malformed output: {problem}", self._secrets))
                messages = base + [AIMessage(content=raw_text or "(empty)"),
                                   *_as_messages(FIX_PROMPT.format(problem=problem))]
        merged = merge_calls(calls)
        merged.errors = errors
        merged.output = {"raw": raw_text, "parsed": None}
        return JSONReply(None, raw_text, merged, problem)

    def complete_text(self, messages: str | list[Any], *, purpose: str = "text") -> tuple[str, ModelCall]:
        """A plain reply's text and its ModelCall (transport retries; no format check)."""
        out, call = self._invoke(_as_messages(messages), None, purpose)
        return message_text(getattr(out["raw"], "content", out["raw"])), call

    # -- Planner protocol
    def _budget(self, level: int) -> int | None:
        """The evidence budget at a compaction level (level 0: the planner's own, which may be None: no budget)."""
        own = self.evidence_budget_tokens
        if level == 0:
            return own
        return COMPACT_LEVELS[level][0] if own is None else min(own, COMPACT_LEVELS[level][0])

    def perception_prompt(self, state: EvidenceState) -> tuple[PerceptionPrompt, ModelCall | None]:
        tpl = load_prompt("perception_request")
        q = state.question
        prompt = tpl.render(question=q.text, choices_block=choices_block(q.choices), clip_info=clip_info(state))
        (out, _raw, call, problem), notes, refused = self._fitted(
            lambda level: Rendered(prompt, []), "perception_prompt",
            lambda msgs: self.complete_json(msgs, PerceptionPromptOut, purpose="perception_prompt"))
        call = self._with_refused(call, refused, notes)
        if out is not None:
            return PerceptionPrompt(prompt_id=tpl.id, text=out.prompt.strip(),
                                    auditory_targets=[t for t in out.auditory_targets if t.strip()]), call
        fb = load_prompt("perception")
        text = fb.render(question=q.text, choices_block=choices_block(q.choices),
                         targets="whatever the question asks about")
        call.errors.append(f"planner output malformed: {problem}; using the perception template")
        return PerceptionPrompt(prompt_id=fb.id, text=text, auditory_targets=[]), call

    def plan(self, state: EvidenceState, inventory: str) -> tuple[Plan, ModelCall | None]:
        q = state.question
        obs = state.observations[0] if state.observations else None

        def render(level: int) -> Rendered:
            _, form, limit, _, _ = COMPACT_LEVELS[level]
            return Rendered(load_prompt("plan").render(
                question=q.text, choices_block=choices_block(q.choices),
                observation=render_observation(obs, limit=limit) if obs else "(no observation)",
                inventory=compact_inventory(inventory, form)), [])

        (out, _raw, call, problem), notes, refused = self._fitted(
            render, "plan", lambda msgs: self.complete_json(msgs, PlanOut, purpose="plan"))
        call = self._with_refused(call, refused, notes)
        if out is not None:
            return Plan(**out.model_dump()), call
        call.errors.append(f"planner output malformed: {problem}; using a fallback plan")
        return Plan(
            intent=q.text,
            answer_format="exactly one of the choices, verbatim" if q.choices else "a short free-form answer",
            rationale=f"fallback plan: planner output malformed: {problem}",
        ), call

    def decide(self, state: EvidenceState, inventory: str) -> tuple[PlannerDecision, ModelCall | None]:
        q = state.question
        step = state.step
        max_steps = self._max_steps or state.run.max_steps

        def render(level: int) -> Rendered:
            _, form, _, plan_limit, args_limit = COMPACT_LEVELS[level]
            evidence = render_evidence(state, self._budget(level))
            return Rendered(load_prompt("decide").render(
                question=q.text, choices_block=choices_block(q.choices), plan=render_plan(state.plan, plan_limit),
                step=step + 1, max_steps=max_steps, artifacts=render_artifacts(state),
                decisions=render_decisions(state), evidence=evidence.text,
                tool_calls=render_tool_calls(state, issued_by="frontend", args_limit=args_limit),
                inventory=compact_inventory(inventory, form)), evidence.notes)

        known = {a.id for a in state.artifacts}

        def check(d: DecisionOut) -> None:
            unknown = [i for i in d.relisten_artifact_ids if i not in known]
            if d.action == "RELISTEN" and unknown:
                raise ValueError(f"relisten_artifact_ids {unknown} are not artifacts; known: {sorted(known)}")

        (out, raw, call, problem), notes, refused = self._fitted(
            render, "decide", lambda msgs: self.complete_json(msgs, DecisionOut, purpose="decide", check=check))
        call = self._with_refused(call, refused, notes)
        if out is None:
            reason = f"planner output malformed: {problem}"
            return PlannerDecision(step=step, action=Action.STOP, rationale=reason, stop_reason=reason,
                                   planner=self.name, raw_output=raw or None), call
        action = Action(out.action)
        decision = PlannerDecision(
            step=step,
            action=action,
            rationale=out.rationale.strip() or "(the planner gave no rationale)",
            tool_calls=[ToolCallRequest(tool=c.tool, arguments=c.arguments, reason=c.reason)
                        for c in out.tool_calls] if action == Action.CALL_TOOLS else [],
            relisten=RelistenRequest(artifact_ids=out.relisten_artifact_ids, prompt=out.relisten_prompt.strip())
            if action == Action.RELISTEN else None,
            stop_reason=(out.stop_reason.strip() or out.rationale.strip() or "the planner stopped")
            if action == Action.STOP else None,
            planner=self.name,
            raw_output=raw,
        )
        return decision, call

    def summarize(self, state: EvidenceState) -> tuple[str, ModelCall | None]:
        def render(level: int) -> Rendered:
            evidence = render_evidence(state, self._budget(level))
            return Rendered(load_prompt("summary").render(question=state.question.text, evidence=evidence.text),
                            evidence.notes)

        (raw, call), notes, refused = self._fitted(
            render, "summarize", lambda msgs: self.complete_text(msgs, purpose="summarize"), json_reply=False)
        call = self._with_refused(call, refused, notes)
        text = _strip_think(raw).strip()
        call.output = {"raw": raw, "parsed": text}
        if not text:
            call.errors.append("planner output malformed: empty summary; using the evidence listing")
            text = "Evidence gathered (listed without interpretation):\n" + render_evidence(
                state, self.evidence_budget_tokens).text
        return text, call


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "guided", "grammar", "schema")


def _rejects_response_format(exc: BaseException) -> bool:
    """The server refused the structured-output form of the request itself (not a transient failure).

    OpenAI-compatible servers differ: vLLM and OpenAI answer 400, llama-cpp-python's server 500 with a
    pydantic 'literal_error' on body.response_format.type. Matched on the error text of the whole chain.
    """
    from audiomind.backends.retry import _chain, describe_error

    text = " ".join(describe_error(e) for e in _chain(exc)).lower()
    code = next((getattr(e, "status_code", None) for e in _chain(exc) if getattr(e, "status_code", None)), None)
    if code in (408, 429) or not any(w in text for w in _FORMAT_WORDS):
        return False
    return any(w in text for w in ("response_format", "json_schema", "not supported", "unsupported",
                                   "input should be", "invalid", "unknown", "unrecognized", "validation"))


def _strip_think(s: str) -> str:
    import re

    return re.sub(r"<think(?:ing)?>.*?</think(?:ing)?>", "", s, flags=re.DOTALL | re.IGNORECASE)


def _problem(exc: Exception) -> str:
    """A short, model-readable statement of what was wrong with a reply."""
    if isinstance(exc, ValidationError):
        msgs = []
        for err in exc.errors()[:4]:
            loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
            msgs.append(f"{loc}: {err.get('msg')}")
        return "; ".join(msgs)
    return str(exc)
