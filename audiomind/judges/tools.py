"""The judges as tools (category `evaluation`), so the agent's planner can call them like any other tool.

Each entry point runs the judge on the run's artifacts with the models from the environment
(AUDIOMIND_JUDGE_LLM / AUDIOMIND_JUDGE_FRONTEND, default: the offline rules and cascade; a planner never
chooses an endpoint through tool arguments), writes the judge's own trace beside the run's derived audio,
and returns a compact output plus claims that stay within the judge's boundary: they state a verdict
and the measurements behind it, never what the audio "is" beyond them.
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import Field

from audiomind.judges.base import default_models
from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolResult


@functools.lru_cache(maxsize=1)
def _registry():
    from audiomind.tools.manifest import ToolRegistry

    return ToolRegistry.load()


def _cache():
    from audiomind.tools.executor import ToolCache

    return ToolCache()


class JudgeEditArgs(ToolArgs):
    artifact: str = Field("a1", description="id of the EDITED audio artifact")
    original_artifact: str = Field("a0", description="id of the ORIGINAL audio artifact")
    instruction: str | None = Field(None, max_length=1000, description="the edit instruction, e.g. 'Add a dog barking'")
    original_description: str | None = Field(None, max_length=1000, description="caption of the original audio")
    target_description: str | None = Field(None, max_length=1000, description="caption the edited audio should fit")


def judge_edit(args: JudgeEditArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.judges.edit import judge_edit as run

    if not (args.instruction or args.target_description):
        raise ValueError("give instruction or target_description")
    m = default_models()
    r = run(ctx.audio(args.original_artifact).path, ctx.audio(args.artifact).path, instruction=args.instruction,
            original_description=args.original_description, target_description=args.target_description,
            llm=m.llm, frontend=m.frontend, trace_dir=ctx.derived_dir / "judges", cache=_cache(),
            registry=_registry())
    out = {
        "verdict": r.verdict, "effectiveness": r.effectiveness.model_dump(exclude={"data"}),
        "preservation": r.preservation.model_dump(exclude={"data"}), "quality": r.quality.model_dump(exclude={"data"}),
        "edit_score": r.edit_score, "faith_score": r.faith_score, "faith_agreement": r.faith_agreement,
        "predicted_difference": r.predicted_difference, "predicted_commonality": r.predicted_commonality,
        "expected_difference": r.expectation.expected_difference,
        "expected_commonality": r.expectation.expected_commonality, "operation": r.expectation.operation,
        "suggestions": r.suggestions, "substitutes": r.substitutes, "affected_scores": r.affected_scores,
        "models": r.models.model_dump(), "judge_trace": r.trace_path,
    }
    subs = f" (substitute metrics: {', '.join(sorted(r.substitutes))})" if r.substitutes else ""
    claims = [
        Claim(text=f"Edit evaluation of {args.artifact} against {args.original_artifact}: editing "
                   f"{r.effectiveness.label} ({r.effectiveness.score:.2f}), preservation {r.preservation.label} "
                   f"({r.preservation.score:.2f}), quality {r.quality.label} ({r.quality.score:.2f}).",
              confidence=r.effectiveness.score, data={"effectiveness": r.effectiveness.score,
                                                      "preservation": r.preservation.score,
                                                      "quality": r.quality.score}),
        Claim(text=f"Edit_score {r.edit_score:.3f}, Faith_score {r.faith_score:.3f} (seed Eq. 2-3){subs}.",
              data={"edit_score": r.edit_score, "faith_score": r.faith_score}),
        Claim(text=f"Measured difference: {r.predicted_difference} Expected: {r.expectation.expected_difference}",
              data={"predicted": r.predicted_difference, "expected": r.expectation.expected_difference}),
    ]
    return ToolResult(output=out, claims=claims)


class JudgeRubricArgs(ToolArgs):
    instruction: str = Field(..., min_length=1, max_length=2000, description="the instruction the audio should follow")
    threshold: float = Field(0.75, ge=0.0, le=1.0, description="aligned when the mean item p(yes) reaches this")
    holistic: bool = Field(True, description="also run the single-question holistic baseline")
    max_items: int = Field(8, ge=1, le=20, description="rubric items at most")


def judge_rubric(args: JudgeRubricArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.judges.rubric import judge_rubric as run

    m = default_models()
    r = run(ctx.audio(args.artifact).path, args.instruction, llm=m.llm, frontend=m.frontend,
            threshold=args.threshold, holistic=args.holistic, max_items=args.max_items,
            trace_dir=ctx.derived_dir / "judges", cache=_cache(), registry=_registry())
    out = {"aligned": r.aligned, "score": r.score, "threshold": r.threshold,
           "items": [{"question": v.question, "p_yes": v.p_yes, "source": v.source, "why": v.explanation[:300]}
                     for v in r.verdicts],
           "dropped": [{"question": d.question, "reason": d.drop_reason} for d in r.dropped],
           "holistic": r.holistic.model_dump() if r.holistic else None, "decomposed_by": r.decomposed_by,
           "judged_by": r.judged_by, "substitutes": r.substitutes, "judge_trace": r.trace_path}
    claims = [Claim(text=f"Instruction following of {args.artifact}: {'aligned' if r.aligned else 'misaligned'}, "
                         f"rubric score {r.score:.3f} over {len(r.verdicts)} item(s) (threshold {r.threshold}).",
                    confidence=r.score, data={"score": r.score, "aligned": r.aligned})]
    for v in r.verdicts:
        claims.append(Claim(text=f"Rubric item: {v.question} -> {v.verdict} (p {v.p_yes:.2f}; {v.explanation[:160]})",
                            confidence=v.p_yes, data={"question": v.question, "p_yes": v.p_yes}))
    return ToolResult(output=out, claims=claims)


class JudgeAuraArgs(ToolArgs):
    question: str = Field(..., min_length=1, max_length=2000, description="the question about the audio")
    reference: str = Field(..., min_length=1, max_length=2000, description="the reference (gold) answer")
    response: str = Field(..., max_length=4000, description="the response to score")
    mode: Literal["paper", "two_threshold"] = Field("paper", description="CLAP entailment thresholding")
    w: float = Field(0.1, ge=0.0, le=1.0, description="weight of the audio-entailment term")


def judge_aura(args: JudgeAuraArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.judges.aura import aura_score

    m = default_models()
    r = aura_score(args.question, args.reference, args.response, ctx.audio(args.artifact).path, llm=m.llm,
                   w=args.w, mode=args.mode, trace_dir=ctx.derived_dir / "judges", registry=_registry())
    out = {"score": r.score, "s_llm": r.s_llm, "category": r.llm_category, "reasoning": r.llm_reasoning,
           "llm_source": r.llm_source, "hypothesis": r.hypothesis, "entailment": r.entailment.model_dump(),
           "normalisation": r.normalisation, "substitutes": r.substitutes, "judge_trace": r.trace_path}
    claims = [Claim(text=f"AURA score of the response: {r.score:.3f} (correctness category {r.llm_category} of 3 by "
                         f"{r.llm_source}; audio entailment {r.entailment.status}"
                         + (f": {r.entailment.reason}" if r.entailment.status == "skipped" else "") + ").",
                    confidence=r.score, data={"score": r.score, "category": r.llm_category})]
    return ToolResult(output=out, claims=claims)
