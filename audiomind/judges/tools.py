"""The judges as tools (category `evaluation`), so the agent's planner can call them like any other tool.

Each entry point runs the judge on the run's artifacts with the models from the environment
(AUDIOMIND_JUDGE_LLM / AUDIOMIND_JUDGE_FRONTEND, default: the offline rules and cascade; a planner never
chooses an endpoint through tool arguments), runs the judge's own tool calls through the run's executor
(from the tool context: the run's registry, cache and tool policy), writes the judge's own trace beside
the run's derived audio, and returns a compact output plus claims that stay within the judge's boundary: they state a verdict
and the measurements behind it, never what the audio "is" beyond them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field, create_model

from audiomind.judges.base import default_models
from audiomind.judges.spec import JUDGES, JudgeOptions, JudgeSpec, spec_of_tool
from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult

__all__ = ["JUDGES", "tool_args_model", "tool_entry"]  # and judge_edit, judge_rubric, judge_aura (see __getattr__)


@functools.lru_cache(maxsize=1)
def _registry():
    from audiomind.tools.manifest import ToolRegistry

    return ToolRegistry.load()


def _cache():
    from audiomind.tools.executor import ToolCache

    return ToolCache()


def _tools_of(ctx: ToolContext, *, cache: bool = True) -> dict[str, Any]:
    """How the judge runs its tools: through the run's executor; a direct call (no executor in the context)
    gets the shipped manifests and, where the judge caches, the default tool cache."""
    if ctx.executor is not None:
        return {"executor": ctx.executor}
    return {"registry": _registry(), **({"cache": _cache()} if cache else {})}


# ---- the agent tools, derived from the judges' specs (judges/spec.py)

_TOOL_ARGS: dict[int, tuple[JudgeSpec, type[ToolArgs]]] = {}  # id(spec) -> (the spec, kept alive; its model)


def tool_args_model(spec: JudgeSpec) -> type[ToolArgs]:
    """The tool's arguments: ToolArgs, an artifact id per audio slot, then the judge's own args (and their
    validators). Named Judge<Name>Args; made once per spec."""
    made = _TOOL_ARGS.get(id(spec))
    if made is None or made[0] is not spec:
        base_help = ToolArgs.model_fields["artifact"].description
        ids: dict[str, Any] = {
            s.artifact_arg: (str, Field(s.artifact_default, description=s.artifact_help or base_help))
            for s in spec.audio}
        name = "Judge" + "".join(p.title() for p in spec.name.replace("-", "_").split("_")) + "Args"
        artifacts = create_model(f"{name}Artifacts", __base__=ToolArgs, __module__=__name__, **ids)
        bases: tuple[type[ToolArgs], ...] = (spec.args, artifacts)  # type: ignore[assignment]  # args first: validators
        made = _TOOL_ARGS[id(spec)] = (spec, create_model(name, __base__=bases, __module__=__name__))
    return made[1]


def tool_entry(spec: JudgeSpec) -> Callable[[ToolArgs, ToolContext], ToolResult]:
    """The tool entry point of a judge: the audio of the named artifacts, the judge's args, the models from
    the environment (a planner never chooses an endpoint), the judge's own tool calls through the run's
    executor, its trace beside the run's derived audio; the spec's `tool_result` makes the output and claims."""
    model = tool_args_model(spec)
    takes_cache = "cache" in spec.options()

    def entry(args: ToolArgs, ctx: ToolContext) -> ToolResult:
        m = default_models()
        audio = {s.name: ctx.audio(getattr(args, s.artifact_arg)).path for s in spec.audio}
        options = JudgeOptions(llm=m.llm, frontend=m.frontend, trace_dir=ctx.derived_dir / "judges",
                               **_tools_of(ctx, cache=takes_cache))
        result = spec.call(args, audio, options)
        out: ToolResult = spec.tool_result_function()(result, args)
        return out

    entry.__annotations__ = {"args": model, "ctx": ToolContext, "return": ToolResult}  # the manifest reads `args`
    entry.__name__ = entry.__qualname__ = spec.tool or f"judge_{spec.name}"
    entry.__doc__ = f"The {spec.name} judge as an agent tool: {spec.summary}"
    return entry


_ENTRIES: dict[int, tuple[JudgeSpec, Callable[[ToolArgs, ToolContext], ToolResult]]] = {}


def __getattr__(name: str) -> Any:
    """`judge_edit`, `judge_rubric`, `judge_aura` (and any registered judge's tool): the entry point a manifest
    names as "audiomind.judges.tools:<tool>"; `Judge<Name>Args`: its argument model."""
    spec = spec_of_tool(name)
    if spec is not None:
        made = _ENTRIES.get(id(spec))
        if made is None or made[0] is not spec:
            made = _ENTRIES[id(spec)] = (spec, tool_entry(spec))
        return made[1]
    for n in JUDGES.names():
        if tool_args_model(JUDGES[n]).__name__ == name and JUDGES[n].tool:
            return tool_args_model(JUDGES[n])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class JudgeModelNames(ToolOutput):
    llm: str = Field(description="text LLM the judge used (or 'rules')")
    frontend: str = Field(description="audio front end the judge used (e.g. 'cascade')")


class AspectScore(ToolOutput):
    label: str = Field(description="verdict word for the aspect")
    score: float = Field(description="aspect score (0-1)")
    text: str = Field(description="the verdict with the measurements behind it")


class JudgeEditOutput(ToolOutput):
    verdict: str = Field(description="overall verdict of the edit")
    effectiveness: AspectScore = Field(description="did the edit do what was asked")
    preservation: AspectScore = Field(description="was the untouched content kept")
    quality: AspectScore = Field(description="overall quality of the edited audio")
    edit_score: float = Field(description="Edit_score caption metric (seed Eq. 2, 0-1)")
    faith_score: float = Field(description="Faith_score as printed (seed Eq. 3, negative; lower = more agreement)")
    faith_agreement: float = Field(description="-faith_score: rises with commonality agreement")
    predicted_difference: str = Field(description="measured difference caption")
    predicted_commonality: str = Field(description="measured commonality caption")
    expected_difference: str = Field(description="difference the edit should make")
    expected_commonality: str = Field(description="what the edit should keep")
    operation: Literal["add", "delete", "replace", "free-form"] = Field(description="kind of edit")
    suggestions: list[str] = Field(description="what to fix")
    substitutes: dict[str, str] = Field(description="metric -> the substitute used in its place")
    affected_scores: dict[str, list[str]] = Field(description="score -> substituted metrics it depends on")
    models: JudgeModelNames = Field(description="models the judge used")
    judge_trace: str | None = Field(description="the judge's own trace file")


def edit_tool_result(r: Any, args: Any) -> ToolResult:
    """The edit judge's tool output (JudgeEditOutput) and claims, from its EditJudgeResult."""
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


class RubricItemResult(ToolOutput):
    question: str = Field(description="the yes/no rubric question")
    p_yes: float = Field(description="probability the answer is yes (0-1)")
    source: str = Field(description="how p_yes was obtained (logprobs, verdict, rules)")
    why: str = Field(description="the judge's explanation (at most 300 characters)")


class DroppedRubricItem(ToolOutput):
    question: str = Field(description="the rubric question left out")
    reason: str | None = Field(description="why it was left out")


class HolisticResult(ToolOutput):
    verdict: Literal["yes", "no", "unknown"] = Field(description="single-question baseline verdict")
    p_yes: float = Field(description="probability of yes (0-1)")
    source: str = Field(description="how p_yes was obtained")
    explanation: str = Field(description="the explanation")


class JudgeRubricOutput(ToolOutput):
    aligned: bool = Field(description="score reaches the threshold")
    score: float = Field(description="mean p(yes) over the rubric items (0-1)")
    threshold: float = Field(description="score needed for aligned")
    items: list[RubricItemResult] = Field(description="the judged rubric items")
    dropped: list[DroppedRubricItem] = Field(description="items left out, with the reason")
    holistic: HolisticResult | None = Field(description="the holistic baseline; None when not run")
    decomposed_by: str = Field(description="what split the instruction into items")
    judged_by: str = Field(description="what judged the items")
    substitutes: dict[str, str] = Field(description="model -> the substitute used in its place")
    judge_trace: str | None = Field(description="the judge's own trace file")


def rubric_tool_result(r: Any, args: Any) -> ToolResult:
    """The rubric judge's tool output (JudgeRubricOutput) and claims, from its RubricJudgeResult."""
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


class AuraEntailment(ToolOutput):
    status: Literal["ok", "skipped"] = Field(description="whether the audio-entailment term was computed")
    reason: str = Field(description="why it was skipped ('' when ok)")
    backend: str | None = Field(description="CLAP backend used")
    cosine: float | None = Field(description="audio-hypothesis cosine similarity")
    s_ae: float | None = Field(description="audio-entailment score after thresholding")
    mode: str = Field(description="thresholding mode")
    thresholds: list[float] = Field(description="thresholds applied to the cosine")


class JudgeAuraOutput(ToolOutput):
    score: float = Field(description="AURA score of the response (0-1)")
    s_llm: float = Field(description="correctness term from the category")
    category: int = Field(description="correctness category (1-3)")
    reasoning: str = Field(description="why that category")
    llm_source: str = Field(description="what judged correctness (an LLM or the rules)")
    hypothesis: str = Field(description="statement checked against the audio")
    entailment: AuraEntailment = Field(description="the audio-entailment term")
    normalisation: str = Field(description="how the score was normalised")
    substitutes: dict[str, str] = Field(description="model -> the substitute used in its place")
    judge_trace: str | None = Field(description="the judge's own trace file")


def aura_tool_result(r: Any, args: Any) -> ToolResult:
    """The AURA judge's tool output (JudgeAuraOutput) and claims, from its AuraResult."""
    out = {"score": r.score, "s_llm": r.s_llm, "category": r.llm_category, "reasoning": r.llm_reasoning,
           "llm_source": r.llm_source, "hypothesis": r.hypothesis, "entailment": r.entailment.model_dump(),
           "normalisation": r.normalisation, "substitutes": r.substitutes, "judge_trace": r.trace_path}
    claims = [Claim(text=f"AURA score of the response: {r.score:.3f} (correctness category {r.llm_category} of 3 by "
                         f"{r.llm_source}; audio entailment {r.entailment.status}"
                         + (f": {r.entailment.reason}" if r.entailment.status == "skipped" else "") + ").",
                    confidence=r.score, data={"score": r.score, "category": r.llm_category})]
    return ToolResult(output=out, claims=claims)
