"""The dynamic rubric judge's method: decompose -> filter -> perceive -> judge each item -> aggregate,
with the holistic single-question baseline; the scaffold (models, state, tool calls, trace) is
`JudgeSession`'s.

Decomposition and filtering: the LLM prompts (judge_rubric_decompose / judge_rubric_filter) or the rules
of `decompose`. Judging: an audio front end answers each item with the clip attached; a text LLM answers
it from the cascade's tool evidence; the rules of `verify` measure it with the tools.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.judges.rubric.decompose import RubricItem, rule_decompose, rule_filter
from audiomind.judges.rubric.verify import (
    ExtraMeasurements,
    HolisticVerdict,
    ItemVerdict,
    evidence_text,
    extra_measurements,
    holistic_rule,
    measurements_needed,
    verify,
)
from audiomind.state import ModelSpec, Observation


class RubricJudgeResult(BaseModel):
    judge: Literal["rubric"] = "rubric"
    audio: str
    instruction: str
    items: list[RubricItem]
    dropped: list[RubricItem] = Field(default_factory=list)
    verdicts: list[ItemVerdict]
    score: float = Field(description="mean p(yes) over the kept items")
    threshold: float
    aligned: bool
    holistic: HolisticVerdict | None = None
    decomposed_by: str
    judged_by: str
    steps: list[JudgeStep]
    substitutes: dict[str, str] = Field(default_factory=dict)
    models: JudgeModels
    trace_path: str | None = None


class _ItemOut(BaseModel):
    question: str
    attribute: str = "other"
    evidence: str = ""


class _DecomposeOut(BaseModel):
    items: list[_ItemOut]


class _Dropped(BaseModel):
    index: int
    reason: str = ""


class _FilterOut(BaseModel):
    keep: list[int] = Field(default_factory=list)
    dropped: list[_Dropped] = Field(default_factory=list)


def _decompose(session: JudgeSession, text_llm: Any, instruction: str, max_items: int) -> tuple[list[RubricItem], str]:
    """Step 1: (items, what decomposed the instruction)."""
    from audiomind.prompts import load_prompt

    items: list[RubricItem] | None = None
    decomposed_by = "rules"
    if text_llm is not None:
        prompt = load_prompt("judge_rubric_decompose").render(instruction=instruction, max_items=max_items)
        out, call, problem = text_llm.json("rubric_decompose", prompt, _DecomposeOut)
        session.add_model_call(call)
        if out is not None and out.items:
            items = [RubricItem(id=i, question=it.question.strip(), attribute=it.attribute, evidence=it.evidence)
                     for i, it in enumerate(out.items[:max_items]) if it.question.strip()]
            decomposed_by = text_llm.name
        else:
            session.note(f"LLM decomposition unusable ({problem}); rule decomposition instead")
    if not items:
        items = rule_decompose(instruction)[:max_items]
    session.add(JudgeStep(number=1, name="decompose", text=f"{len(items)} item(s): " + " | ".join(i.question for i in items),
                          data={"by": decomposed_by, "items": [i.model_dump() for i in items]}))
    return items, decomposed_by


def _filter(session: JudgeSession, text_llm: Any, instruction: str, items: list[RubricItem],
            decomposed_by: str) -> tuple[list[RubricItem], list[RubricItem]]:
    """Step 2: (kept, dropped) items; never an empty rubric (the whole instruction becomes one item)."""
    from audiomind.prompts import load_prompt

    filtered_by = "rules"
    if text_llm is not None and decomposed_by != "rules":
        listing = "\n".join(f"{i}. {it.question}" for i, it in enumerate(items))
        prompt = load_prompt("judge_rubric_filter").render(instruction=instruction, items=listing)
        out, call, problem = text_llm.json("rubric_filter", prompt, _FilterOut)
        session.add_model_call(call)
        if out is not None and out.keep:
            reasons = {d.index: d.reason for d in out.dropped}
            for i, it in enumerate(items):
                if i not in out.keep:
                    it.kept, it.drop_reason = False, reasons.get(i) or "dropped by the LLM filter"
            filtered_by = text_llm.name
        else:
            session.note(f"LLM filter unusable ({problem}); rule filter instead")
            rule_filter(instruction, items)
    else:
        rule_filter(instruction, items)
    kept = [it for it in items if it.kept]
    dropped = [it for it in items if not it.kept]
    if not kept:  # never judge an empty rubric: fall back to the whole instruction as one item
        kept = [RubricItem(id=len(items), question=f"Does the audio match: '{instruction}'?", evidence=instruction,
                           check={"kind": "unverifiable", "why": "every item was filtered out"})]
    session.add(JudgeStep(number=2, name="filter", text=f"kept {len(kept)}, dropped {len(dropped)}"
                          + ("".join(f"; dropped '{d.question}' ({d.drop_reason})" for d in dropped)),
                          data={"by": filtered_by, "kept": [k.id for k in kept],
                                "dropped": [{"id": d.id, "reason": d.drop_reason} for d in dropped]}))
    return kept, dropped


def _perceive(session: JudgeSession, kept: list[RubricItem],
              decomposed_by: str) -> tuple[ev.ClipFacts, ExtraMeasurements]:
    """Step 3 (the cascade, also for the text-LLM judge that reads its evidence): tool facts of a0 and the
    extra measurements the items need."""
    facts = ev.perceive(session, ["a0"], quality=False, rationale="rubric items: perception pass")["a0"]
    if decomposed_by == "rules":
        need = measurements_needed(kept)
    else:  # LLM items carry no verifier spec: measure what their wording asks about
        qs = " ".join(k.question for k in kept)
        need = ({"pitch"} if re.search(r"\b(male|female|man|woman|gender|voice|pitch)\b", qs, re.IGNORECASE) else set()) | (
            {"tempo"} if re.search(r"\b(tempo|fast|slow|bpm)\b", qs, re.IGNORECASE) else set())
    extra = extra_measurements(session, facts, need,
                               [k.check.get("words") for k in kept if k.check.get("kind") == "gender"])
    session.add_observation(Observation(
        kind="perception", frontend="cascade", artifact_ids=["a0"], prompt_id="judge_rubric:cascade",
        prompt="tool evidence for the rubric items", text=evidence_text(facts, extra),
        description=ev.clip_caption(facts), tool_call_ids=facts.call_ids,
        uncertainty="tool-based: emotion, speaking style and fine semantics are not perceived"))
    return facts, extra


def _ask(session: JudgeSession, text_llm: Any, audio_judge: Any, facts: ev.ClipFacts | None,
         extra: ExtraMeasurements, template: str, purpose: str, **fields: str) -> Any:
    """A yes/no question (prompt `template`) to the audio front end with the clip attached, else to the text
    LLM on the tool evidence; None when neither is configured (the rules answer instead)."""
    from audiomind.prompts import evidence_block, load_prompt

    if audio_judge is not None:
        prompt = load_prompt(template).render(context="Listen to the audio clip.", **fields)
        yn, call = audio_judge.yes_no(purpose, prompt, [session.state.artifact("a0")])
    elif text_llm is not None and facts is not None:
        ctx = ("Evidence about the audio clip from measurement tools (you cannot hear the audio):\n"
               + evidence_block(evidence_text(facts, extra), id="tool_evidence", source="measurement tools"))
        prompt = load_prompt(template).render(context=ctx, **fields)
        yn, call = text_llm.yes_no(purpose, prompt)
    else:
        return None
    session.add_model_call(call)
    return yn


def _judge_items(session: JudgeSession, text_llm: Any, audio_judge: Any, kept: list[RubricItem],
                 facts: ev.ClipFacts | None, extra: ExtraMeasurements) -> list[ItemVerdict]:
    """Step 4: a verdict and p(yes) per kept item."""
    verdicts: list[ItemVerdict] = []
    for it in kept:
        yn = _ask(session, text_llm, audio_judge, facts, extra, "judge_rubric_item", f"rubric_item_{it.id}",
                  question=it.question)
        if yn is not None:
            v = ItemVerdict(item_id=it.id, question=it.question, verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source,
                            explanation=yn.detail)
        else:
            assert facts is not None
            if not it.check:
                it.check = {"kind": "unverifiable", "why": "no rule verifier for an LLM-written item"}
            p, why = verify(it, facts, extra)
            v = ItemVerdict(item_id=it.id, question=it.question, verdict="yes" if p >= 0.5 else "no", p_yes=p,
                            source="rules", explanation=why)
        verdicts.append(v)
    for v in verdicts:
        session.note(f"item {v.item_id}: {v.question} -> {v.verdict} (p_yes {v.p_yes:.3f}, {v.source}): "
                     f"{v.explanation}", data=v.model_dump(), confidence=v.p_yes)
    return verdicts


def _holistic(session: JudgeSession, text_llm: Any, audio_judge: Any, instruction: str,
              facts: ev.ClipFacts | None, extra: ExtraMeasurements) -> HolisticVerdict:
    """Step 5: the single-question baseline."""
    yn = _ask(session, text_llm, audio_judge, facts, extra, "judge_rubric_holistic", "rubric_holistic",
              instruction=instruction)
    if yn is not None:
        hol = HolisticVerdict(verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source, explanation=yn.detail)
    else:
        assert facts is not None
        hol = holistic_rule(instruction, facts)
        session.substitutes["holistic"] = "no LLM: instruction vs tool-caption embedding similarity (MiniLM)"
    session.add(JudgeStep(number=5, name="holistic baseline", text=f"{hol.verdict} (p_yes {hol.p_yes:.3f}): "
                          f"{hol.explanation}", data=hol.model_dump()))
    return hol


def judge_rubric(
    audio: str | Path,
    instruction: str,
    *,
    llm: str = "rules",
    frontend: str = "cascade",
    threshold: float = 0.75,
    holistic: bool = True,
    max_items: int = 8,
    trace_dir: str | Path | None = "traces",
    write_trace: bool = True,
    cache: Any = None,
    registry: Any = None,
    executor: Any = None,
    timeout_s: float = 120,
    max_retries: int = 3,
) -> RubricJudgeResult:
    """Judge how well `audio` follows `instruction`, item by item; the run is written as a trace."""
    if not instruction or not instruction.strip():
        raise ValueError("the instruction is empty")
    task = f"Does a0 follow this instruction? \"{instruction}\" Judge it item by item (dynamic rubric)."
    session = JudgeSession("rubric", task, [audio], trace_dir=trace_dir,
                           models=JudgeModels(llm=llm or "rules", frontend=frontend or "cascade"), registry=registry,
                           cache=cache, executor=executor, timeout_s=timeout_s, max_retries=max_retries,
                           inputs={"audio": str(audio), "instruction": instruction, "threshold": threshold})
    text_llm, audio_judge = session.open_models(ModelSpec(role="frontend", spec="cascade", kind="cascade",
                                                          decoding={"judge": "rubric"}))
    items, decomposed_by = _decompose(session, text_llm, instruction, max_items)
    kept, dropped = _filter(session, text_llm, instruction, items, decomposed_by)
    facts, extra = _perceive(session, kept, decomposed_by) if audio_judge is None else (None, ExtraMeasurements())
    judged_by = audio_judge.name if audio_judge else (text_llm.name + " on cascade evidence") if text_llm else "rules"
    verdicts = _judge_items(session, text_llm, audio_judge, kept, facts, extra)
    score = sum(v.p_yes for v in verdicts) / len(verdicts)
    aligned = score >= threshold
    session.add(JudgeStep(number=3, name="judge items", text="; ".join(f"{v.question} {v.p_yes:.2f}" for v in verdicts),
                          data={"by": judged_by, "verdicts": [v.model_dump() for v in verdicts]}))
    session.add(JudgeStep(number=4, name="aggregate", text=f"score = mean p(yes) = {score:.3f}; threshold {threshold}: "
                          f"{'aligned' if aligned else 'misaligned'}", data={"score": score, "threshold": threshold}))
    hol = _holistic(session, text_llm, audio_judge, instruction, facts, extra) if holistic else None
    if decomposed_by == "rules":
        session.substitutes["decomposition"] = ("no LLM: rule decomposition (clauses, speech, AudioSet classes, "
                                                "counts, order)")
    if judged_by == "rules":
        session.substitutes["item judge"] = "no LLM or audio model: rule verification with the embedded tools"
    verdict = (f"{'aligned' if aligned else 'misaligned'}: rubric score {score:.3f} (threshold {threshold}) over "
               f"{len(verdicts)} item(s)" + (f"; holistic p_yes {hol.p_yes:.3f}" if hol else ""))
    result = RubricJudgeResult(audio=str(audio), instruction=instruction, items=kept, dropped=dropped,
                               verdicts=verdicts, score=round(score, 4), threshold=threshold, aligned=aligned,
                               holistic=hol, decomposed_by=decomposed_by, judged_by=judged_by, steps=session.steps,
                               substitutes=session.substitutes, models=session.models)
    rationale = " ".join(f"[{v.verdict} {v.p_yes:.2f}] {v.question}: {v.explanation}." for v in verdicts)
    return session.conclude(verdict, rationale, result, write=write_trace)
