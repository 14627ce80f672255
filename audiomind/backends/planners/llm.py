"""The text planner over any LangChain chat model (OpenAI-compatible incl. vLLM / llama.cpp server,
Gemini, Ollama, a local GGUF through llama-cpp-python, or a scripted fake model in tests).

Each planner role (perception prompt, plan, decision, summary) renders its template from `prompts/` with the
state rendering of `llm_prompts`, fitted to the model's context window, and asks for JSON through the client
(`llm_client.LLMClient.complete_json`: the backend's JSON-schema mode where it has one, one format retry that
tells the model what was wrong, transport retries). After a second malformed reply the planner degrades
deterministically (a STOP decision, a template plan or prompt) and the `ModelCall` says so. When transport
failures persist a `BackendError` (with `.model_call`) is raised, because "the planner was unreachable" is a
failed run, not a reasoned stop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from audiomind.backends.base import BackendError
from audiomind.backends.planners.llm_client import (
    FIX_RETRY_TOKENS,
    GRAMMAR_MAX_TOKENS,
    PROMPT_OVERHEAD_TOKENS,
    ContextTooSmall,
    JSONReply,
    LLMClient,
    as_messages,
    context_limit,
    grammar_schema,
    strip_think,
    wire_schema,
)
from audiomind.backends.planners.llm_prompts import (
    COMPACT_LEVELS,
    DETAIL_LEVELS,
    EVIDENCE_BUDGET_TOKENS,
    Rendered,
    clip_info,
    compact_inventory,
    inventory_details,
    planner_system,
    render_artifacts,
    render_decisions,
    render_evidence,
    render_record,
)
from audiomind.backends.retry import merge_calls
from audiomind.prompts import choices_block, load_prompt
from audiomind.state import (
    Action,
    EvidenceState,
    ModelCall,
    PerceptionPrompt,
    Plan,
    PlannerDecision,
    RelistenRequest,
    ToolCallRequest,
)

# names that moved to llm_client / llm_prompts and are still imported from here
__all__ = [
    "COMPACT_LEVELS", "EVIDENCE_BUDGET_TOKENS", "FIX_RETRY_TOKENS", "GRAMMAR_MAX_TOKENS", "PROMPT_OVERHEAD_TOKENS",
    "ContextTooSmall", "DecisionOut", "JSONReply", "LLMPlanner", "PerceptionPromptOut", "PlanOut", "Rendered",
    "compact_inventory", "grammar_schema", "render_decisions", "render_evidence", "wire_schema",
]

R = TypeVar("R")


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


# ---------------------------------------------------------------- the planner: each prompt fitted to the context
#
# A small local model (SmolLM2-135M: 8,192 tokens) cannot take the whole planner prompt: the full tool inventory
# alone is ~6.5k tokens. Each role renders its prompt at increasing compaction levels (the inventory shorter,
# the evidence budget smaller) and sends the first one that fits the model's context with room for the reply
# (and a format retry); when none fits, the run fails with a BackendError that names the limit. Levels above 0
# are recorded in the ModelCall's context_notes.


def _system_first(system: str, text: str) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(content=system), HumanMessage(content=text)]


class LLMPlanner(LLMClient):
    """Planner protocol over a LangChain BaseChatModel: the planner roles on the LLM client."""

    def __init__(self, chat_model: Any, *, max_steps: int | None = None,
                 evidence_budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS, **client: Any):
        """`client`: LLMClient's keywords (name, spec, retries, endpoint, secrets, structured, timeout_s)."""
        super().__init__(chat_model, **client)
        self._max_steps = max_steps
        self.evidence_budget_tokens = evidence_budget_tokens

    # -- fitting each prompt into the model's context window
    def _fit(self, render: Callable[[int], Rendered], purpose: str, json_reply: bool) -> tuple[list[Any], list[str]]:
        """The messages of the least compacted rendering that fits the context with room for the reply (twice
        and the fix message for a JSON reply, which may take a format retry), and what the fitting did."""
        ctx = self.context_tokens()
        reserve = self.reply_tokens() * (2 if json_reply else 1) + (FIX_RETRY_TOKENS if json_reply else 0)
        sizes: list[int] = []
        for level in range(len(COMPACT_LEVELS)):
            r = render(level)
            msgs = as_messages(r.text) if r.system is None else _system_first(r.system, r.text)
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

    def _fitted(self, render: Callable[[int], Rendered], purpose: str, ask: Callable[[list[Any]], R],
                json_reply: bool = True) -> tuple[R, list[str], list[ModelCall]]:
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

    def _record_prompt(self, template: str, state: EvidenceState, inventory: str, level: int,
                       **values: Any) -> Rendered:
        """A plan or decide prompt at a compaction level: the run's static part (planner_system) as the system
        message; the item (question, clips) and its record, in the order things happened, as the user message,
        which grows by appending from one step to the next; what varies per step (the step counter) comes last."""
        _, form, obs_limit, plan_limit, args_limit = COMPACT_LEVELS[level]
        q = state.question
        record = render_record(state, self._budget(level), with_plan=template == "decide",
                               details=inventory_details(inventory) if level < DETAIL_LEVELS else None,
                               obs_limit=obs_limit, plan_limit=plan_limit, args_limit=args_limit, you=self.name)
        text = load_prompt(template).render(question=q.text, choices_block=choices_block(q.choices),
                                            clips=render_artifacts(state, originals_only=True), record=record.text,
                                            **values)
        return Rendered(text, record.notes,
                        planner_system(inventory, form, None if level < DETAIL_LEVELS else template))

    def plan(self, state: EvidenceState, inventory: str) -> tuple[Plan, ModelCall | None]:
        q = state.question
        (out, _raw, call, problem), notes, refused = self._fitted(
            lambda level: self._record_prompt("plan", state, inventory, level), "plan",
            lambda msgs: self.complete_json(msgs, PlanOut, purpose="plan"))
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
        step = state.step
        max_steps = self._max_steps or state.run.max_steps

        def render(level: int) -> Rendered:
            return self._record_prompt("decide", state, inventory, level, step=step + 1, max_steps=max_steps)

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
        text = strip_think(raw).strip()
        call.output = {"raw": raw, "parsed": text}
        if not text:
            call.errors.append("planner output malformed: empty summary; using the evidence listing")
            text = "Evidence gathered (listed without interpretation):\n" + render_evidence(
                state, self.evidence_budget_tokens).text
        return text, call
