"""Dynamic rubric judge (seed 001): instruction -> n atomic yes/no items -> filter -> judge each item
against the audio -> p(yes) per item -> score = mean item probability -> aligned if score >= threshold.
A holistic single-question judge is the baseline.

- `decompose`: the rule decomposition (clauses; speech: who speaks, what is said, how fast; sound events
  as named AudioSet classes; counts; order: "then", "followed by"; music tempo; loudness; anything else
  an item the offline judge cannot verify, p = 0.5, said so) and the rule filter (every item grounded in
  the instruction's words, no duplicates). An LLM (prompts/judge_rubric_decompose.md, _filter.md) does
  both where one is configured.
- `verify`: the rule verifier (YAMNet, VAD, Whisper, pitch, tempo, loudness, event counts), each
  measurement mapped to p(yes) by a stated logistic curve; p(yes) from an LLM or audio front end comes
  from the yes/no token log-probabilities where the backend exposes them (OpenAI-compatible `logprobs`),
  else from the verdict.
- `negatives`: hard negatives for benchmarks, instruction swapping and attribute perturbation.
- `judge`: `judge_rubric`, the method on the judges' scaffold (`audiomind.judges.base.JudgeSession`).
"""

from __future__ import annotations

from audiomind.judges.rubric.decompose import RubricItem, rule_decompose, rule_filter
from audiomind.judges.rubric.judge import RubricJudgeResult, judge_rubric
from audiomind.judges.rubric.negatives import perturb_instruction, swap_instructions
from audiomind.judges.rubric.verify import HolisticVerdict, ItemVerdict, evidence_text, holistic_rule

__all__ = [
    "HolisticVerdict", "ItemVerdict", "RubricItem", "RubricJudgeResult", "evidence_text", "holistic_rule",
    "judge_rubric", "perturb_instruction", "rule_decompose", "rule_filter", "swap_instructions",
]
