"""The edit judge: an original and an edited clip, judged in the seven difference/commonality steps."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from audiomind.judges.spec import AudioSlot, CliLayout, JudgeArgs, JudgeSpec, JudgeTool
from audiomind.judges.tools import JUDGE_TRACE, Out, output_model
from audiomind.tools.base import Claim
from audiomind.tools.manifest import ToolNeeds


class EditArgs(JudgeArgs):
    instruction: str | None = Field(None, max_length=1000, description="the edit instruction, e.g. 'Add a dog "
                                                                        "barking'")
    original_description: str | None = Field(None, max_length=1000, description="caption of the original audio")
    target_description: str | None = Field(None, max_length=1000, description="caption the edited audio should fit")

    @model_validator(mode="after")
    def _what_to_judge(self) -> EditArgs:
        if not (self.instruction or self.target_description):
            raise ValueError("give the edit instruction or the target description (or both)")
        return self


JudgeModelNames = output_model("JudgeModelNames", {
    "llm": Out(str, "text LLM the judge used (or 'rules')"),
    "frontend": Out(str, "audio front end the judge used (e.g. 'cascade')"),
}, __name__)

AspectScore = output_model("AspectScore", {  # an AspectVerdict without its data
    "label": Out(str, "verdict word for the aspect"),
    "score": Out(float, "aspect score (0-1)"),
    "text": Out(str, "the verdict with the measurements behind it"),
}, __name__)

JudgeEditOutput = output_model("JudgeEditOutput", {
    "verdict": Out(str, "overall verdict of the edit"),
    "effectiveness": Out(AspectScore, "did the edit do what was asked"),
    "preservation": Out(AspectScore, "was the untouched content kept"),
    "quality": Out(AspectScore, "overall quality of the edited audio"),
    "edit_score": Out(float, "Edit_score caption metric (seed Eq. 2, 0-1)"),
    "faith_score": Out(float, "Faith_score as printed (seed Eq. 3, negative; lower = more agreement)"),
    "faith_agreement": Out(float, "-faith_score: rises with commonality agreement"),
    "predicted_difference": Out(str, "measured difference caption"),
    "predicted_commonality": Out(str, "measured commonality caption"),
    "expected_difference": Out(str, "difference the edit should make", "expectation.expected_difference"),
    "expected_commonality": Out(str, "what the edit should keep", "expectation.expected_commonality"),
    "operation": Out(Literal["add", "delete", "replace", "free-form"], "kind of edit", "expectation.operation"),
    "suggestions": Out(list[str], "what to fix"),
    "substitutes": Out(dict[str, str], "metric -> the substitute used in its place"),
    "affected_scores": Out(dict[str, list[str]], "score -> substituted metrics it depends on"),
    "models": Out(JudgeModelNames, "models the judge used"),
    "judge_trace": JUDGE_TRACE,
}, __name__)


def edit_claims(r: Any, args: Any) -> list[Claim]:
    """The edit judge's claims, from its EditJudgeResult: the three aspects, the caption metrics, the captions."""
    subs = f" (substitute metrics: {', '.join(sorted(r.substitutes))})" if r.substitutes else ""
    return [
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


TOOL = JudgeTool(
    function="Evaluates an audio edit (original artifact vs edited artifact, with the edit instruction and/or "
             "descriptions) in the seven difference/commonality steps: editing effectiveness, preservation of "
             "untouched content and overall quality, each as a verdict with a score, plus the Edit_score and "
             "Faith_score caption metrics and suggestions. Writes its own trace.",
    supports=("whether an edit did what its instruction asked (a sound added, removed or replaced)",
              "whether the rest of the original was preserved",
              "whether the edited audio clips, is silent or lost speech quality",
              "caption-metric scores of an edit (Edit_score, Faith_score)"),
    not_for=("what the original audio contains beyond the edit (use tagging / asr)",
             "judging audio that is not an edit of another artifact", "aesthetic or musical quality judgements",
             "edits of emotion, timbre or prosody (not perceived offline)"),
    output=JudgeEditOutput, claims=edit_claims, timeout_s=900,
    example={"artifact": "a1", "original_artifact": "a0", "instruction": "Add a telephone ringing",
             "original_description": "a woman speaking"},
    needs=ToolNeeds(packages=["onnxruntime", "librosa", "sentence_transformers", "pyloudnorm", "pycocoevalcap"],
                    models=["yamnet", "minilm", "silero-vad", "whisper-tiny.en"]))

SPEC = JudgeSpec(
    name="edit", summary="Evaluate an audio edit: overall quality, editing effectiveness, preservation "
                         "(seven steps).",
    args=EditArgs,
    audio=(AudioSlot(name="original", help="the original audio", artifact_arg="original_artifact",
                     artifact_help="id of the ORIGINAL audio artifact"),
           AudioSlot(name="edited", help="the edited audio", artifact_default="a1",
                     artifact_help="id of the EDITED audio artifact")),
    run="audiomind.judges.edit:judge_edit", result="audiomind.judges.edit:EditJudgeResult",
    tool=TOOL, task="edit-eval",
    cli=CliLayout(short={"instruction": "-i", "original_description": "-d", "target_description": "-t"}),
    render="audiomind.judges.cli:edit_lines")
