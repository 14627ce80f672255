"""The rubric judge: an instruction split into yes/no items, each judged against the audio, plus the holistic
single-question baseline."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from audiomind.judges.spec import AudioSlot, CliLayout, JudgeArgs, JudgeSpec, JudgeTool
from audiomind.judges.tools import JUDGE_TRACE, Out, many, output_model
from audiomind.tools.base import Claim
from audiomind.tools.manifest import ToolNeeds


class RubricArgs(JudgeArgs):
    instruction: str = Field(..., min_length=1, max_length=2000, description="the instruction the audio should "
                                                                             "follow")
    threshold: float = Field(0.75, ge=0.0, le=1.0, description="aligned when the item score reaches this")
    holistic: bool = Field(True, description="also run the single-question holistic baseline")
    max_items: int = Field(8, ge=1, le=20, description="rubric items at most")
    aggregation: Literal["geometric", "mean"] = Field(
        "geometric", description="item score: geometric mean of p(yes) (every item must hold) or the plain mean")


RubricItemResult = output_model("RubricItemResult", {  # one of the result's verdicts
    "question": Out(str, "the yes/no rubric question"),
    "p_yes": Out(float, "probability the answer is yes (0-1)"),
    "source": Out(str, "how p_yes was obtained (logprobs, verdict, rules)"),
    "why": Out(str, "the judge's explanation (at most 300 characters)", lambda v: v.explanation[:300]),
}, __name__)

DroppedRubricItem = output_model("DroppedRubricItem", {
    "question": Out(str, "the rubric question left out"),
    "reason": Out(str | None, "why it was left out", "drop_reason"),
}, __name__)

HolisticResult = output_model("HolisticResult", {
    "verdict": Out(Literal["yes", "no", "unknown"], "single-question baseline verdict"),
    "p_yes": Out(float, "probability of yes (0-1)"),
    "source": Out(str, "how p_yes was obtained"),
    "explanation": Out(str, "the explanation"),
}, __name__)

JudgeRubricOutput = output_model("JudgeRubricOutput", {
    "aligned": Out(bool, "score reaches the threshold"),
    "score": Out(float, "mean p(yes) over the rubric items (0-1)"),
    "threshold": Out(float, "score needed for aligned"),
    "items": Out(many(RubricItemResult), "the judged rubric items", "verdicts"),
    "dropped": Out(many(DroppedRubricItem), "items left out, with the reason"),
    "holistic": Out(HolisticResult | None, "the holistic baseline; None when not run"),
    "decomposed_by": Out(str, "what split the instruction into items"),
    "judged_by": Out(str, "what judged the items"),
    "substitutes": Out(dict[str, str], "model -> the substitute used in its place"),
    "judge_trace": JUDGE_TRACE,
}, __name__)


def rubric_claims(r: Any, args: Any) -> list[Claim]:
    """The rubric judge's claims, from its RubricJudgeResult: the alignment, then one per item."""
    claims = [Claim(text=f"Instruction following of {args.artifact}: {'aligned' if r.aligned else 'misaligned'}, "
                         f"rubric score {r.score:.3f} over {len(r.verdicts)} item(s) (threshold {r.threshold}).",
                    confidence=r.score, data={"score": r.score, "aligned": r.aligned})]
    for v in r.verdicts:
        claims.append(Claim(text=f"Rubric item: {v.question} -> {v.verdict} (p {v.p_yes:.2f}; {v.explanation[:160]})",
                            confidence=v.p_yes, data={"question": v.question, "p_yes": v.p_yes}))
    return claims


TOOL = JudgeTool(
    function="Dynamic rubric judge of instruction following: decomposes an instruction into atomic yes/no items, "
             "filters unsupported ones, judges each against the audio (p(yes) per item), and reports the mean as "
             "the alignment score with a threshold decision, plus a holistic single-question baseline. Writes its "
             "own trace.",
    supports=(("whether audio follows a generation instruction (speech content, speaker gender, sound events, "
               "counts, order, tempo, loudness)"), "which requirement of an instruction the audio fails",
              "an alignment score for ranking generations"),
    not_for=("answering open questions about the audio (use the perception tools)",
             "emotion or speaking style (only with an audio LLM front end)",
             "audio quality (use speech_quality / signal_stats)"),
    output=JudgeRubricOutput, claims=rubric_claims, timeout_s=900,
    example={"artifact": "a0", "instruction": "A woman says 'good morning', then a telephone rings.",
             "threshold": 0.75},
    needs=ToolNeeds(packages=["onnxruntime", "librosa", "sentence_transformers", "pyloudnorm"],
                    models=["yamnet", "minilm", "silero-vad", "whisper-tiny.en"]))

SPEC = JudgeSpec(
    name="rubric", summary="Judge instruction following item by item (dynamic rubric), with the holistic "
                           "baseline.",
    args=RubricArgs,
    audio=(AudioSlot(name="audio", help="the audio to judge", path_fields=("path", "audio_path")),),
    run="audiomind.judges.rubric:judge_rubric", result="audiomind.judges.rubric:RubricJudgeResult",
    tool=TOOL, task="rubric-judge", cli=CliLayout(arguments=("instruction",)),
    render="audiomind.judges.cli:rubric_lines")
