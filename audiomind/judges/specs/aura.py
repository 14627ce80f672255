"""The AURA judge: a free-form answer scored against a reference answer, with CLAP audio entailment."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from audiomind.judges.spec import AudioSlot, CliLayout, JudgeArgs, JudgeSpec, JudgeTool
from audiomind.judges.tools import JUDGE_TRACE, Out, output_model
from audiomind.tools.base import Claim
from audiomind.tools.manifest import ToolNeeds


class AuraArgs(JudgeArgs):
    question: str = Field(..., min_length=1, max_length=2000, description="the question about the audio")
    reference: str = Field(..., min_length=1, max_length=2000, description="the reference (gold) answer")
    response: str = Field(..., max_length=4000, description="the response (answer) to score")
    mode: Literal["paper", "two_threshold"] = Field(
        "paper", description="CLAP entailment thresholding: paper (one threshold, 0.35) | two_threshold (0.25 / 0.55)")
    w: float = Field(0.1, ge=0.0, le=1.0, description="weight of the audio-entailment term")


AuraEntailment = output_model("AuraEntailment", {
    "status": Out(Literal["ok", "skipped"], "whether the audio-entailment term was computed"),
    "reason": Out(str, "why it was skipped ('' when ok)"),
    "backend": Out(str | None, "CLAP backend used"),
    "cosine": Out(float | None, "audio-hypothesis cosine similarity"),
    "s_ae": Out(float | None, "audio-entailment score after thresholding"),
    "mode": Out(str, "thresholding mode"),
    "thresholds": Out(list[float], "thresholds applied to the cosine"),
}, __name__)

JudgeAuraOutput = output_model("JudgeAuraOutput", {
    "score": Out(float, "AURA score of the response (0-1)"),
    "s_llm": Out(float, "correctness term from the category"),
    "category": Out(int, "correctness category (1-3)", "llm_category"),
    "reasoning": Out(str, "why that category", "llm_reasoning"),
    "llm_source": Out(str, "what judged correctness (an LLM or the rules)"),
    "hypothesis": Out(str, "statement checked against the audio"),
    "entailment": Out(AuraEntailment, "the audio-entailment term"),
    "normalisation": Out(str, "how the score was normalised"),
    "substitutes": Out(dict[str, str], "model -> the substitute used in its place"),
    "judge_trace": JUDGE_TRACE,
}, __name__)


def aura_claims(r: Any, args: Any) -> list[Claim]:
    """The AURA judge's claim, from its AuraResult: the score, its category and the entailment term's status."""
    return [Claim(text=f"AURA score of the response: {r.score:.3f} (correctness category {r.llm_category} of 3 by "
                       f"{r.llm_source}; audio entailment {r.entailment.status}"
                       + (f": {r.entailment.reason}" if r.entailment.status == "skipped" else "") + ").",
                  confidence=r.score, data={"score": r.score, "category": r.llm_category})]


TOOL = JudgeTool(
    function="AURA score of a free-form answer to a question about the audio: 3-point correctness against a "
             "reference answer (an LLM with chain of thought, or the declared rule substitute offline) combined "
             "with CLAP audio entailment of a declarative hypothesis when CLAP weights are configured (skipped "
             "with its reason otherwise). Writes its own trace.",
    supports=("how correct a free-form answer is against a reference answer",
              "scoring audio question answering outputs for evaluation"),
    not_for=("answering the question itself", "judging an answer without a reference answer",
             "what the audio contains (use the perception tools)"),
    output=JudgeAuraOutput, claims=aura_claims, timeout_s=600,
    example={"artifact": "a0", "question": "How many beeps are there?", "reference": "Three.",
             "response": "I hear three beeps."},
    needs=ToolNeeds(packages=["sentence_transformers", "scipy"], models=["minilm"]))

SPEC = JudgeSpec(
    name="aura", summary="AURA score of a free-form answer against a reference answer.",
    args=AuraArgs,
    audio=(AudioSlot(name="audio", help="the audio (for CLAP entailment)", required=False,
                     path_fields=("path", "audio_path")),),
    run="audiomind.judges.aura:aura_score", result="audiomind.judges.aura:AuraResult",
    tool=TOOL, task="aura", cli=CliLayout(short={"question": "-q", "reference": "-r", "response": "-a"}),
    render="audiomind.judges.cli:aura_lines")
