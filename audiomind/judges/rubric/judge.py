"""The dynamic rubric judge's method: decompose -> filter -> perceive -> judge each item -> aggregate,
with the holistic single-question baseline; the scaffold (models, state, tool calls, trace) is
`JudgeSession`'s.

Decomposition and filtering: the LLM prompts (judge_rubric_decompose / judge_rubric_filter) or the rules
of `decompose`. Judging: an audio front end answers each item with the clip attached; a text LLM answers
it from the cascade's tool evidence; the rules of `verify` measure it with the tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.judges.rubric.decompose import RubricItem, rule_decompose, rule_filter
from audiomind.judges.rubric.force import OTHER, ItemEvidence, RubricEvidence
from audiomind.judges.rubric.holistic import HolisticVerdict, evidence_text, holistic_rule
from audiomind.judges.rubric.verify import ItemVerdict, Scene, measure, verify
from audiomind.language.rubric_items import tools_needed
from audiomind.state import ModelSpec, Observation, ToolCallRequest

AGGREGATION = ("geometric mean of p(yes) over the verifiable items (every requirement must hold: one confident "
               "'no' pulls the score down however many items pass); items no tool could verify are named and not "
               "scored, but they carry their weight: p moves toward 0.5 by their share of the rubric, and a "
               "verified contradiction counts as far as its check kind's measured reliability goes (see "
               "`force.py`); with none verifiable the score is 0.5 and the judge says it cannot judge")


class RubricJudgeResult(BaseModel):
    judge: Literal["rubric"] = "rubric"
    audio: str
    instruction: str
    items: list[RubricItem]
    dropped: list[RubricItem] = Field(default_factory=list)
    verdicts: list[ItemVerdict]
    score: float = Field(description="the aggregate (see `aggregation`) the decision is taken on")
    mean_p: float = Field(description="arithmetic mean p(yes) over every kept item (the seed names no formula)")
    aggregation: str = AGGREGATION
    unverifiable: list[str] = Field(default_factory=list, description="items no tool could verify (p = 0.5)")
    threshold: float
    aligned: bool
    holistic: HolisticVerdict | None = None
    decomposed_by: str
    judged_by: str
    steps: list[JudgeStep]
    substitutes: dict[str, str] = Field(default_factory=dict)
    models: JudgeModels
    coverage: float = Field(default=1.0, description="the share of the rubric's weight that was verified "
                            "(ITEM_WEIGHTS; an unverifiable item carries its weight, unverified)")
    contradicted: bool = Field(default=False, description="a verified item's p(yes) is at most CONTRADICTION_P "
                               "(how much it counts: `contradiction_force`)")
    contradiction_force: float = Field(default=0.0, description="the measured force of the strongest verified "
                                       "contradiction's check kind (force.py; 0: none)")
    hold: float = Field(default=1.0, description="how far p may move from 0.5: coverage + (1 - coverage) x "
                        "contradiction_force")
    p: float | None = Field(default=None, description="the verdict's probability of 'aligned' (force.py): the "
                            "geometric score held toward 0.5 by `hold`, through the rubric judge's bounded-slope "
                            "calibration table, and held again; 0.5: cannot judge")
    calibration: str = Field(default="", description="the table (NAME@SHA12) and the raw score p came from")
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


def _perceive(session: JudgeSession, kept: list[RubricItem], decomposed_by: str) -> Scene:
    """Step 3 (the cascade, also for the text-LLM judge that reads its evidence): the facts of a0 through the
    reader layer, and the measurements the items need (onset-aligned tags, pitch, turns, tempo)."""
    facts = ev.perceive(session, ["a0"], quality=False, rationale="rubric items: perception pass")["a0"]
    if decomposed_by != "rules":  # LLM items carry no verifier spec: measure what their wording asks about
        needs = tools_needed(" ".join(k.question for k in kept))  # (the reader's [needs] table)
        reqs = []
        if "pitch" in needs and session.tool_available("pitch"):
            reqs.append(ToolCallRequest(tool="pitch", arguments={"artifact": "a0", "fmin_hz": 60.0, "fmax_hz": 400.0},
                                        reason="voice items: f0 contour"))
        if "tempo" in needs and session.tool_available("tempo"):
            reqs.append(ToolCallRequest(tool="tempo", arguments={"artifact": "a0"}, reason="tempo items"))
        if reqs:
            session.run_tools(reqs, "the LLM's items ask about voice or tempo")
    scene = measure(session, facts, kept)
    session.add_observation(Observation(
        kind="perception", frontend="cascade", artifact_ids=["a0"], prompt_id="judge_rubric:cascade",
        prompt="tool evidence for the rubric items", text=evidence_text(scene.facts, scene),
        description=ev.clip_caption(scene.facts), tool_call_ids=ev.call_ids(session, "a0"),
        uncertainty="tool-based: emotion, speaking style and fine semantics are not perceived; a sound class the "
                    "tags neither confirm nor contradict is reported as unverifiable"))
    return scene


def _ask(session: JudgeSession, text_llm: Any, audio_judge: Any, scene: Scene | None,
         template: str, purpose: str, **fields: str) -> Any:
    """A yes/no question (prompt `template`) to the audio front end with the clip attached, else to the text
    LLM on the tool evidence; None when neither is configured (the rules answer instead)."""
    from audiomind.prompts import evidence_block, load_prompt

    if audio_judge is not None:
        prompt = load_prompt(template).render(context="Listen to the audio clip.", **fields)
        yn, call = audio_judge.yes_no(purpose, prompt, [session.state.artifact("a0")])
    elif text_llm is not None and scene is not None:
        ctx = ("Evidence about the audio clip from measurement tools (you cannot hear the audio):\n"
               + evidence_block(evidence_text(scene.facts, scene), id="tool_evidence", source="measurement tools"))
        prompt = load_prompt(template).render(context=ctx, **fields)
        yn, call = text_llm.yes_no(purpose, prompt)
    else:
        return None
    session.add_model_call(call)
    return yn


def _judge_items(session: JudgeSession, text_llm: Any, audio_judge: Any, kept: list[RubricItem],
                 scene: Scene | None) -> list[ItemVerdict]:
    """Step 4: a verdict and p(yes) per kept item."""
    verdicts: list[ItemVerdict] = []
    for it in kept:
        yn = _ask(session, text_llm, audio_judge, scene, "judge_rubric_item", f"rubric_item_{it.id}",
                  question=it.question)
        if yn is not None:
            v = ItemVerdict(item_id=it.id, question=it.question, verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source,
                            explanation=yn.detail)
        else:
            assert scene is not None
            if not it.check:
                it.check = {"kind": "unverifiable", "why": "no rule verifier for an LLM-written item"}
            p, why, ok = verify(it, scene)
            v = ItemVerdict(item_id=it.id, question=it.question, p_yes=p, source="rules", explanation=why,
                            verdict=("yes" if p >= 0.5 else "no") if ok else "unknown", verifiable=ok)
        verdicts.append(v)
    for v in verdicts:
        session.note(f"item {v.item_id}: {v.question} -> {v.verdict} (p_yes {v.p_yes:.3f}, {v.source}): "
                     f"{v.explanation}", data=v.model_dump(), confidence=v.p_yes)
    return verdicts


def _holistic(session: JudgeSession, text_llm: Any, audio_judge: Any, instruction: str,
              scene: Scene | None) -> HolisticVerdict:
    """Step 5: the single-question baseline."""
    yn = _ask(session, text_llm, audio_judge, scene, "judge_rubric_holistic", "rubric_holistic",
              instruction=instruction)
    if yn is not None:
        hol = HolisticVerdict(verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source, explanation=yn.detail)
    else:
        assert scene is not None
        hol = holistic_rule(instruction, scene.facts)
        session.substitutes["holistic"] = "no LLM: instruction vs tool-caption embedding similarity (MiniLM)"
    session.add(JudgeStep(number=5, name="holistic baseline", text=f"{hol.verdict} (p_yes {hol.p_yes:.3f}): "
                          f"{hol.explanation}", data=hol.model_dump()))
    return hol


AGGREGATIONS = ("geometric", "mean")
AGGREGATION_TEXTS = {
    "geometric": AGGREGATION,
    "mean": ("arithmetic mean of p(yes) over the verifiable items (each requirement counts alike: one confident "
             "'no' among many passes lowers the score by its share only); items no tool could verify are named and "
             "not scored; with none verifiable the score is 0.5 and the judge says it cannot judge"),
}


def aggregate(verdicts: list[ItemVerdict], method: str = "geometric") -> tuple[float, float, list[str]]:
    """(score, plain mean p, the unverifiable items' questions); see AGGREGATION_TEXTS.

    What the seed says: the AnyAudio-Judge paper (../shared/seeds/001_*.txt, abstract) says "The final score is
    obtained by aggregating item-level satisfaction probabilities, yielding a more sensitive and interpretable
    measure of alignment", and its contributions list "aggregates item-level probabilities into an
    interpretable alignment score"; it gives no formula (no mean, product or weighting is named anywhere in it).
    Both methods here are therefore the project's choices, not the seed's:

    - "geometric" (the default): the geometric mean of p(yes), each clamped to [0.02, 0.98], over the verifiable
      items: every requirement must hold, so one confident "no" pulls the score down however many items pass.
    - "mean": the arithmetic mean of the same clamped p(yes).

    Unverifiable items (p = 0.5, `verifiable=False`) are left out of both; with none verifiable the score is
    0.5. The default is the measured choice: on the saved per-item probabilities of judge sets v3-v13 (597 of 599
    rows, `evals/judges/run_aggregation.py`, docs/JUDGES.md "Rubric aggregation") the geometric mean is ahead
    on accuracy at 0.75 (78.7% vs 75.4%), ROC-AUC (0.732 vs 0.704), ECE (0.232 vs 0.406) and decisive share
    (47.2% vs 37.9%)."""
    import math

    if method not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, not {method!r}")
    mean_p = sum(v.p_yes for v in verdicts) / len(verdicts)
    scored = [min(0.98, max(0.02, v.p_yes)) for v in verdicts if v.verifiable]
    unverifiable = [v.question for v in verdicts if not v.verifiable]
    if not scored:
        return 0.5, mean_p, unverifiable
    if method == "mean":
        return sum(scored) / len(scored), mean_p, unverifiable
    return math.exp(sum(math.log(p) for p in scored) / len(scored)), mean_p, unverifiable


ITEM_WEIGHTS: dict[str, float] = {"speech_present": 0.5}
"""What an item carries, by its check kind (1.0 unless named): 'is there speech?' carries half, since every other
speech item (words, gender, a speaker's turn) holds only where there is speech; an item without a rule check
(an LLM's) carries 1.0. Measured in evals/judges/run_coverage.py (0.25, 0.5 and 1.0 differ by under 1 point of
decisive accuracy on judge sets v3-v13)."""
CONTRADICTION_P = 0.2
"""A verified item at or below this p(yes) contradicts the rubric; how much that counts is the measured force of its
check kind (`force.py`)."""


def _weight(item: RubricItem | None) -> float:
    kind = (item.check or {}).get("kind") if item is not None else None
    return ITEM_WEIGHTS.get(str(kind), 1.0)


def question_weight(question: str) -> float:
    """What an item carries, read from its question alone (saved verdicts keep no check): the weight of the
    check kind whose question it is (rule items' questions are fixed texts; any other weighs 1.0)."""
    from audiomind.language.rubric_items import _say

    return next((w for kind, w in ITEM_WEIGHTS.items() if question.strip().lower() == _say(kind).lower()), 1.0)


def coverage(items: list[RubricItem], verdicts: list[ItemVerdict]) -> float:
    """The share of the rubric's weight that was verified: sum of the verifiable items' weights over all of
    them (0.0 for an empty rubric)."""
    by_id = {it.id: it for it in items}
    total = sum(_weight(by_id.get(v.item_id)) for v in verdicts)
    done = sum(_weight(by_id.get(v.item_id)) for v in verdicts if v.verifiable)
    return done / total if total > 0 else 0.0


def contradicted(verdicts: list[ItemVerdict]) -> bool:
    """A verified item says no with force (p(yes) <= CONTRADICTION_P)."""
    return any(v.verifiable and v.p_yes <= CONTRADICTION_P for v in verdicts)


def item_evidence(items: list[RubricItem], verdicts: list[ItemVerdict]) -> list[ItemEvidence]:
    """Each verdict as the force stage reads it: its item's check kind ('other' without a rule check), p(yes),
    whether it was verified, and its weight."""
    by_id = {it.id: it for it in items}
    out = []
    for v in verdicts:
        it = by_id.get(v.item_id)
        kind = str((it.check or {}).get("kind")) if it is not None and it.check else OTHER
        out.append(ItemEvidence(kind=kind, p=v.p_yes, verifiable=v.verifiable, weight=_weight(it)))
    return out


def verdict_p(items: list[RubricItem], verdicts: list[ItemVerdict], *,
              calibrated: bool = True) -> tuple[float, str, RubricEvidence]:
    """(p of 'aligned', what made it, the force stage's figures): the verified share holding p toward 0.5, a
    contradiction taking back the held share as far as its check kind's measured force goes, the bounded-slope
    table (force.py). `calibrated=False` (an LLM or audio
    item judge, or the mean aggregation, for which the tables were not fitted): the forces and the hold apply, the
    table does not (named 'uncalibrated')."""
    from audiomind import calibration
    from audiomind.judges.rubric import force

    forces, _ = force.load_forces()
    ev = force.evidence_of(item_evidence(items, verdicts), forces)
    cal = calibration.apply("judge_rubric" if calibrated else None, ev.raw, abstain=ev.abstain)
    return force.probability(ev, cal.p), f"{force.label_of()}; {cal.note}", ev


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
    aggregation: str = "geometric",
) -> RubricJudgeResult:
    """Judge how well `audio` follows `instruction`, item by item; the run is written as a trace.
    `aggregation`: how the items' p(yes) become the score ("geometric" or "mean"; see `aggregate`)."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, not {aggregation!r}")
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
    scene = _perceive(session, kept, decomposed_by) if audio_judge is None else None
    judged_by = audio_judge.name if audio_judge else (text_llm.name + " on cascade evidence") if text_llm else "rules"
    verdicts = _judge_items(session, text_llm, audio_judge, kept, scene)
    score, mean_p, unverifiable = aggregate(verdicts, method=aggregation)
    cover, contra = coverage(kept, verdicts), contradicted(verdicts)
    how = AGGREGATION_TEXTS[aggregation]
    aligned = score >= threshold and len(unverifiable) < len(verdicts)
    session.add(JudgeStep(number=3, name="judge items", text="; ".join(
        f"{v.question} {v.p_yes:.2f}" + ("" if v.verifiable else " (unverifiable)") for v in verdicts),
        data={"by": judged_by, "verdicts": [v.model_dump() for v in verdicts]}))
    agg_text = (f"score = {score:.3f} ({how.split(' (', maxsplit=1)[0]} of {len(verdicts) - len(unverifiable)} item(s)); "
                f"plain mean {mean_p:.3f}; threshold {threshold}: "
                + ("cannot judge: no item could be verified" if len(unverifiable) == len(verdicts)
                   else "aligned" if aligned else "misaligned")
                + (f"; unverifiable: {'; '.join(unverifiable)}" if unverifiable else "")
                + f"; {cover:.0%} of the rubric's weight verified" + ("; contradicted" if contra else ""))
    session.add(JudgeStep(number=4, name="aggregate", text=agg_text,
                          data={"score": score, "mean_p": mean_p, "threshold": threshold, "unverifiable": unverifiable,
                                "aggregation": how, "coverage": cover, "contradicted": contra}))
    hol = _holistic(session, text_llm, audio_judge, instruction, scene) if holistic else None
    if decomposed_by == "rules":
        session.substitutes["decomposition"] = ("no LLM: rule decomposition (clauses, speech, AudioSet classes, "
                                                "counts, order)")
    if judged_by == "rules":
        session.substitutes["item judge"] = "no LLM or audio model: rule verification with the embedded tools"
    verdict = (f"{'aligned' if aligned else 'misaligned'}: rubric score {score:.3f} (threshold {threshold}) over "
               f"{len(verdicts) - len(unverifiable)} verifiable item(s)"
               + (f"; unverifiable, not scored: {'; '.join(unverifiable)}" if unverifiable else "")
               + (f"; holistic p_yes {hol.p_yes:.3f}" if hol else ""))
    p, cal_note, ev = verdict_p(kept, verdicts, calibrated=aggregation == "geometric" and judged_by == "rules")
    verdict += (f"; p {p:.3f} ({cal_note}; {cover:.0%} of the rubric verified"
                + (f"; a verified item contradicts it (force {ev.contradiction_force:.2f})" if contra else "") + ")")
    result = RubricJudgeResult(audio=str(audio), instruction=instruction, items=kept, dropped=dropped,
                               verdicts=verdicts, score=round(score, 4), mean_p=round(mean_p, 4), aggregation=how,
                               unverifiable=unverifiable, threshold=threshold, aligned=aligned,
                               holistic=hol, decomposed_by=decomposed_by, judged_by=judged_by, steps=session.steps,
                               substitutes=session.substitutes, models=session.models, p=p,
                               calibration=cal_note, coverage=round(cover, 4), contradicted=contra,
                               contradiction_force=ev.contradiction_force, hold=ev.hold)
    rationale = " ".join(f"[{v.verdict} {v.p_yes:.2f}] {v.question}: {v.explanation}." for v in verdicts)
    return session.conclude(verdict, rationale, result, write=write_trace)
