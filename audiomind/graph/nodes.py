"""The Audio-Mind nodes. Each is a small function `(state, runtime) -> partial update`; the run's planner,
front end, executor and AgentConfig come from LangGraph's run context (`runtime.context`, an
audiomind.graph.context.Context); routing lives in audiomind.graph.routing."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from langgraph.runtime import Runtime

from audiomind.artifacts import ingest_original
from audiomind.backends.base import AnswerRequest, ListenRequest, Planner
from audiomind.backends.deadline import current_budget, run_budget
from audiomind.backends.frontends.replies import json_reply, reply_answer
from audiomind.graph.context import Context
from audiomind.prompts import choices_block, letter_index, load_prompt
from audiomind.reasoning.ledger import ConfidenceLedger
from audiomind.state import (
    Action,
    Artifact,
    EvidenceItem,
    EvidenceState,
    FinalAnswer,
    FormatFeedback,
    ModelCall,
    NodeTiming,
    Observation,
    Outcome,
    PlannerDecision,
    ToolCall,
    ToolCallStatus,
    utcnow,
)

Node = Callable[[EvidenceState, Runtime[Context]], dict[str, Any]]


def context_of(runtime: Runtime[Context], node: str) -> Context:
    """The run's Context, or a clear error when the graph was invoked without one."""
    ctx = runtime.context
    if not isinstance(ctx, Context):
        raise TypeError(f"graph node {node!r} ran without a run context: invoke the graph with "
                           "context=audiomind.graph.context.Context(...)")
    return ctx


def timed(name: str) -> Callable[[Callable[[EvidenceState, Context], dict[str, Any]]], Node]:
    """Make `fn(state, ctx)` a graph node `(state, runtime)` whose wall time lands in state.timings (per-node
    cost is part of the record) and whose model requests share what is left of the run's time budget."""

    def deco(fn: Callable[[EvidenceState, Context], dict[str, Any]]) -> Node:
        def node(state: EvidenceState, runtime: Runtime[Context]) -> dict[str, Any]:
            ctx = context_of(runtime, name)
            started, t0 = utcnow(), time.monotonic()
            # every model request of the node may take what is left of the run's time budget, at most
            with run_budget(ctx.config.time_budget_s, elapsed=elapsed_s(state)):
                update = fn(state, ctx) or {}
            update["timings"] = [NodeTiming(node=name, started_at=started, duration_s=round(time.monotonic() - t0, 4))]
            return update

        node.__name__ = node.__qualname__ = name
        node.__doc__ = fn.__doc__
        node.__module__ = fn.__module__
        return node

    return deco


def elapsed_s(state: EvidenceState) -> float:
    started = datetime.fromisoformat(state.run.started_at)
    return (datetime.now(UTC) - started).total_seconds()


def _planner(ctx: Context) -> Planner:
    if ctx.planner is None:
        raise RuntimeError(f"the {ctx.mode} graph reached a planner node, but the run context has no planner")
    return ctx.planner


def _calls(*calls: ModelCall | None) -> list[ModelCall]:
    return [c for c in calls if c is not None]


NOT_A_CHOICE = "the answer is not one of the choices"
RETRY_CHOICE = ("exactly one of the choices, copied verbatim, or its letter alone (e.g. \"B\"), and no other "
                "words: the answer is checked by its shape only, and an answer written as a sentence is not read")


def _norm(s: str) -> str:
    return re.sub(r"[\s\W_]+", " ", s.casefold()).strip()


_LETTERED = re.compile(r"\(?([A-Za-z]{1,2})\)?(?:[.):]|(?=\s)|$)\s*(.*)", re.DOTALL)


def parse_choice(answer: str, choices: list[str]) -> tuple[int | None, str]:
    """The format check of a multiple-choice answer: which choice the answer's SHAPE names, and "ok", or
    None and what is wrong. Three shapes are answers, nothing else:

    (a) a choice verbatim (case, spacing and punctuation aside): "Dog", "dog.";
    (b) a choice letter as the prompts letter them, alone or with that same choice verbatim after it:
        "B", "(B)", "B.", "B) Dog";
    (c) a JSON reply (`replies.json_reply`: the whole answer is one object) whose `answer` is (a) or (b).

    Prose is never read: "It is not 3 speakers; there are two", "I cannot tell whether it is a dog", "Not A",
    "A or B" all fail, even where exactly one choice occurs in them; the graph re-asks with the message."""
    obj = json_reply(answer)
    if obj is not None:
        inner = reply_answer(obj)
        if inner is None:
            return None, 'the JSON reply has no "answer" field'
        answer = inner
    if not _norm(answer):
        return None, "the answer is empty"
    exact = [i for i, c in enumerate(choices) if c.strip().casefold() == answer.strip().casefold()]
    if len(exact) == 1:
        return exact[0], "ok"
    a = _norm(answer)
    same = [i for i, c in enumerate(choices) if _norm(c) == a]
    if len(same) == 1:
        return same[0], "ok"
    if len(same) > 1:
        return None, f"the answer matches {len(same)} choices alike; answer with the letter of one"
    m = _LETTERED.fullmatch(answer.strip())
    idx = letter_index(m.group(1)) if m else None  # A..Z, then AA, AB, ... as choices_block letters them
    if m is None or idx is None or not 0 <= idx < len(choices):
        return None, NOT_A_CHOICE
    rest = m.group(2)
    if not _norm(rest) or _norm(rest) == _norm(choices[idx]):
        return idx, "ok"
    return None, NOT_A_CHOICE


def evidence_calls(state: EvidenceState) -> list[ToolCall]:
    """The tool calls behind the evidence on record (the ones that produced an item, and the failed ones the
    summary reports): with the evidence items, what the final answer is given (AnswerRequest)."""
    sources = {e.source_id for e in state.evidence}
    failed = (ToolCallStatus.rejected, ToolCallStatus.error, ToolCallStatus.timeout)
    return [c for c in state.tool_calls if c.id in sources or c.status in failed]


def relisten_targets(requested: list[str], state: EvidenceState) -> tuple[list[str], str]:
    """The requested artifacts a re-listen may hear (derived ones only: a crop, a filtered or separated
    track; the original is what the final answer hears anyway) and why the others were refused."""
    known = {a.id: a for a in state.artifacts}
    ok = [i for i in requested if i in known and known[i].derived_from is not None]
    unknown = [i for i in requested if i not in known]
    underived = [i for i in requested if i in known and known[i].derived_from is None]
    reasons = []
    if unknown:
        reasons.append(f"unknown artifact ids {unknown}")
    if underived:
        reasons.append(f"{', '.join(underived)} {'is' if len(underived) == 1 else 'are'} not derived audio: a "
                       "re-listen takes derived artifacts only (derive one first, e.g. crop a span; the final "
                       "answer hears the original anyway)")
    if not reasons:
        return ok, ""
    derived = [a.id for a in state.artifacts if a.derived_from is not None]
    return ok, ("re-listen rejected: " + "; ".join(reasons)
                + f"; derived artifacts on record: {', '.join(derived) if derived else 'none yet'}")


def derivation(a: Artifact, known: dict[str, Artifact]) -> str:
    """What a derived artifact is and how it was made (its provenance: the operation and its parameters,
    back to the original), e.g. "a1: 3.00 s, 16000 Hz, 1 ch; crop of a0 (start_s=1.0, end_s=4.0)"."""
    steps = []
    cur: Artifact | None = a
    while cur is not None and cur.derived_from is not None:
        params = ", ".join(f"{k}={v}" for k, v in sorted(cur.parameters.items()) if k != "artifact")
        steps.append(f"{cur.operation or 'derived'} of {cur.derived_from}" + (f" ({params})" if params else ""))
        cur = known.get(cur.derived_from)
    return f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} ch; " + ", itself a ".join(steps)


TOOL_FAILURE_CONFIDENCE = 0.6
"""The most confidence an answer keeps when some tool of its run failed or timed out (the cascade's cap)."""


def with_tool_failures(answer: FinalAnswer, state: EvidenceState) -> FinalAnswer:
    """The answer with its confidence capped and its reason naming the tools that failed or timed out (a
    model front end's answer as much as the cascade's, which caps it itself); unchanged when none did."""
    failed = [f"{c.tool} {c.status.value}" for c in state.tool_calls if c.status.value in ("error", "timeout")]
    if not failed:
        return answer
    reason = answer.confidence_reason
    if "tools failed" not in reason:
        reason = "; ".join(x for x in (reason, "tools failed: " + ", ".join(failed)) if x)
    if answer.confidence is None:
        return answer.model_copy(update={"confidence_reason": reason})
    led = answer_ledger(answer)
    conf = led.cap(TOOL_FAILURE_CONFIDENCE, stage="tool_failure", reason="tools failed: " + ", ".join(failed))
    return answer.model_copy(update={"confidence": conf, "confidence_reason": reason, "confidence_steps": led.steps})


def answer_ledger(answer: FinalAnswer) -> ConfidenceLedger:
    """The answer's confidence ledger, to continue: its own steps, or (a model's answer, which has none) one
    `reported` step holding the confidence it came with and where that came from."""
    if answer.confidence_steps or answer.confidence is None:
        return ConfidenceLedger(answer.confidence_steps)
    led = ConfidenceLedger()
    led.set(answer.confidence, stage="evidence", space="calibrated",
            reason=f"as the answering backend reported it ({answer.confidence_source or 'source not named'})")
    return led


# ---- perception and planning --------------------------------------------------------------------
@timed("ingest")
def ingest(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    if state.artifacts:  # resumed run: ingest is idempotent
        return {}
    paths = [state.question.audio_path, *state.question.extra_audio]  # a multi-clip item: a0, a1, ...
    return {"artifacts": [ingest_original(p, f"a{i}") for i, p in enumerate(paths)]}


@timed("perception_prompt")
def perception_prompt(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    prompt, call = _planner(ctx).perception_prompt(state)
    return {"perception_prompt": prompt, "model_calls": _calls(call)}


@timed("perceive")
def perceive(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    if ctx.mode == "direct":
        return _direct_perceive(state, ctx)
    assert state.perception_prompt is not None
    req = ListenRequest(
        kind="perception", artifacts=state.originals, prompt=state.perception_prompt.text,
        prompt_id=state.perception_prompt.prompt_id, question=state.question.text,
        choices=state.question.choices, step=0,
    )
    return _listen(ctx, req, "perception")


def _direct_perceive(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    """Direct mode: a front end that hears only through its own perception pass (the cascade) runs that
    pass over every original clip (no planner wrote its prompt); a model front end hears the audio in its
    one answer call, so nothing happens here."""
    if not getattr(ctx.frontend, "answers_from_evidence", False):
        return {}
    tpl = load_prompt("direct_answer")
    req = ListenRequest(kind="perception", artifacts=state.originals, prompt=state.question.text,
                        prompt_id=tpl.id, question=state.question.text, choices=state.question.choices, step=0)
    return _listen(ctx, req, "perception")


def _listen(ctx: Context, req: ListenRequest, kind: str) -> dict[str, Any]:
    result = ctx.frontend.listen(req)
    obs = Observation(
        kind=kind, frontend=ctx.frontend.name, artifact_ids=[a.id for a in req.artifacts],
        prompt_id=req.prompt_id, prompt=req.prompt, text=result.text, description=result.description,
        focus=result.focus, provisional_answer=result.provisional_answer, open_needs=result.open_needs,
        uncertainty=result.uncertainty, windows=result.windows, tool_call_ids=[c.id for c in result.tool_calls],
        attempts=result.model_call.attempts if result.model_call else 1,
        latency_s=result.model_call.latency_s if result.model_call else 0.0,
    )
    evidence = list(result.evidence)
    if not result.tool_calls and (result.description or result.text).strip():
        # An LALM's report is evidence in its own right (the cascade's evidence is its tools').
        evidence.append(
            EvidenceItem(
                claim=f"{ctx.frontend.name} heard: {(result.description or result.text).strip()[:1500]}",
                source_type="observation", source_id=obs.id, artifact_id=req.artifacts[0].id,
                data={"provisional_answer": result.provisional_answer, "focus": result.focus},
            )
        )
    update: dict[str, Any] = {
        "observations": [obs],
        "tool_calls": result.tool_calls,
        "evidence": evidence,
        "artifacts": result.derived_artifacts,
        "model_calls": _calls(result.model_call),
    }
    budget = current_budget()
    if budget is not None and budget.spent():
        # the budget ran out while listening: the run answers from what was heard, and says which bound ended it
        update["outcome"] = Outcome(status="answered", bound_hit="time_budget",
                                    reason=f"the time budget of {budget.seconds:g} s ran out during the {kind}")
    return update


@timed("plan")
def plan(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    plan, call = _planner(ctx).plan(state, ctx.inventory())
    return {"plan": plan, "model_calls": _calls(call)}


# ---- the evidence loop --------------------------------------------------------------------------
@timed("decide")
def decide(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    step = state.step
    bound = None
    if step >= ctx.config.max_steps:
        bound = "max_steps"
    elif elapsed_s(state) >= ctx.config.time_budget_s:
        bound = "time_budget"
    if bound:
        decision = PlannerDecision(
            step=step, action=Action.ANSWER, planner="bounds",
            rationale=f"The {bound} bound was reached ({ctx.config.max_steps} steps / "
            f"{ctx.config.time_budget_s:.0f} s); answering with the evidence gathered so far.",
        )
        return {"decisions": [decision], "outcome": Outcome(status="answered", bound_hit=bound)}
    decision, call = _planner(ctx).decide(state, ctx.inventory())
    decision.step = step
    return {"decisions": [decision], "model_calls": _calls(call)}


@timed("execute_tools")
def execute_tools(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    decision = state.decisions[-1]
    result = ctx.executor.run(decision.tool_calls, state.artifacts, step=decision.step, budget=current_budget())
    return {"tool_calls": result.tool_calls, "evidence": result.evidence, "artifacts": result.artifacts}


@timed("relisten")
def relisten(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    decision = state.decisions[-1]
    req = decision.relisten
    known = {a.id: a for a in state.artifacts}
    ids, rejected = relisten_targets(req.artifact_ids if req else [], state)
    tpl = load_prompt("relisten")
    if not ids:
        obs = Observation(kind="relisten", frontend=ctx.frontend.name, artifact_ids=[], prompt_id=tpl.id,
                          prompt="", text="", rejected=rejected)
        return {"observations": [obs]}
    prompt = tpl.render(derivations="\n".join(f"- {derivation(known[i], known)}" for i in ids),
                        focus=req.prompt if req else "", question=state.question.text)
    listen = ListenRequest(
        kind="relisten", artifacts=[known[i] for i in ids], prompt=prompt, prompt_id=tpl.id,
        question=state.question.text, choices=state.question.choices, step=decision.step,
    )
    update = _listen(ctx, listen, "relisten")
    if rejected:  # part of the request was refused: the observation says which part and why
        update["observations"] = [o.model_copy(update={"rejected": rejected}) for o in update["observations"]]
    return update


# ---- answering ----------------------------------------------------------------------------------
@timed("summarize")
def summarize(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    text, call = _planner(ctx).summarize(state)
    return {"evidence_summary": text, "model_calls": _calls(call)}


@timed("final_answer")
def final_answer(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    direct = ctx.mode == "direct"
    tpl = load_prompt("direct_answer" if direct else "final_answer")
    feedback = ""
    if state.format_feedback and not state.format_feedback[-1].ok:
        last = state.format_feedback[-1]
        feedback = load_prompt("format_retry").render(
            previous=last.answer_text, problem=last.message,
            instruction=RETRY_CHOICE if state.question.choices else "a non-empty free-text answer to the question")
    choices = state.question.choices
    values: dict[str, Any] = {} if direct else {"summary": state.evidence_summary or ""}
    prompt = tpl.render(
        question=state.question.text, choices_block=choices_block(choices), feedback=feedback,
        answer_instruction="exactly one of the choices, copied verbatim" if choices else "your answer", **values,
    )
    req = AnswerRequest(
        original=state.original, extra_originals=state.originals[1:], question=state.question.text, choices=choices,
        evidence_summary=state.evidence_summary or "", evidence=state.evidence, prompt=prompt,
        prompt_id=tpl.id, format_feedback=feedback or None, tool_calls=evidence_calls(state),
    )
    result = ctx.frontend.answer(req)
    answer = FinalAnswer(
        text=result.text, rationale=result.rationale, cited_evidence_ids=result.cited_evidence_ids,
        answered_by=ctx.frontend.name, confidence=result.confidence, confidence_reason=result.confidence_reason,
        confidence_source=result.confidence_source, confidence_steps=result.confidence_steps,
    )
    answer = answer.model_copy(update={"confidence_steps": answer_ledger(answer).steps})  # every confidence has one
    answer = with_tool_failures(answer, state)  # a tool that failed or timed out lowers the confidence
    return {"final_answer": answer, "model_calls": _calls(result.model_call)}


@timed("format_check")
def format_check(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    answer = state.final_answer
    assert answer is not None
    attempt = len(state.format_feedback) + 1
    choices = state.question.choices
    if choices:
        idx, message = parse_choice(answer.text, choices)
    else:
        idx, message = (None, "ok") if answer.text.strip() else (None, "the answer is empty")
    ok = message == "ok"
    update: dict[str, Any] = {
        "format_feedback": [FormatFeedback(attempt=attempt, ok=ok, message=message, answer_text=answer.text)]
    }
    if ok and idx is not None:
        update["final_answer"] = answer.model_copy(update={"choice": choices[idx], "choice_index": idx})
    return update


@timed("finish")
def finish(state: EvidenceState, ctx: Context) -> dict[str, Any]:
    last = state.decisions[-1] if state.decisions else None
    bound = state.outcome.bound_hit if state.outcome else None
    if last is not None and last.action == Action.STOP:
        outcome = Outcome(status="stopped", reason=last.stop_reason or last.rationale, bound_hit=bound)
    elif state.format_feedback and state.format_feedback[-1].ok:
        outcome = Outcome(status="answered", reason="", bound_hit=bound)
    else:
        fb = state.format_feedback[-1].message if state.format_feedback else "no answer"
        outcome = Outcome(status="failed", reason=f"format check failed: {fb}", bound_hit=bound)
    run = state.run.model_copy(
        update={"finished_at": utcnow(), "wall_time_s": round(elapsed_s(state), 3)}
    )
    return {"outcome": outcome, "run": run}
