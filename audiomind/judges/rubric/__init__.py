"""Dynamic rubric judge (seed 001): instruction -> n atomic yes/no items -> filter -> judge each item
against the audio -> p(yes) per item -> score -> aligned if score >= threshold. A holistic single-question
judge is the baseline.

- `decompose`: the rule decomposition (clauses and their order: "then", "followed by", "before", "after",
  "once it stops", a clause-final "later"; speech: who speaks, what is said, how fast; sound events as named
  AudioSet classes; counts; music tempo; loudness; anything else an item the offline judge cannot verify)
  and the rule filter (every item grounded in the instruction's words, no duplicates). An LLM
  (prompts/judge_rubric_decompose.md, _filter.md) does both where one is configured.
- `verify`: the rule verifier: each item against the evidence that can see it (voice activity, transcript,
  f0 against the documented gender bands, tags over onset-aligned windows of each separate sound, onsets for
  order, count_events for counts, tempo, loudness trend), read through `audiomind.reasoning.facts`; an item
  no tool can verify gets p = 0.5, is marked unverifiable and named, never a confident no. p(yes) from an
  LLM or audio front end comes from the yes/no token log-probabilities where the backend exposes them
  (OpenAI-compatible `logprobs`), else from the verdict.
- score: the geometric mean of p(yes) over the verifiable items (every requirement must hold); the seed's
  plain mean is reported beside it (`mean_p`). The verdict's p (`force`): items no tool could verify carry their
  weight, so p moves toward 0.5 by the unverified share of the rubric, and a verified contradiction takes back the
  held share only as far as its check kind's contradictions proved reliable on the development sets (its force);
  then the bounded-slope calibration table.
- `negatives`: hard negatives for benchmarks, instruction swapping and attribute perturbation.
- `force`: the contradiction forces (a table per check kind, `judges/data/rubric_force.json`) and the stages
  from the items to the verdict's p.
- `judge`: `judge_rubric`, the method on the judges' scaffold (`audiomind.judges.base.JudgeSession`).
"""

from __future__ import annotations

from audiomind.judges.rubric.decompose import RubricItem, rule_decompose, rule_filter
from audiomind.judges.rubric.holistic import HolisticVerdict, evidence_text, holistic_rule
from audiomind.judges.rubric.judge import RubricJudgeResult, judge_rubric
from audiomind.judges.rubric.negatives import perturb_instruction, swap_instructions
from audiomind.judges.rubric.verify import ItemVerdict

__all__ = [
    "HolisticVerdict", "ItemVerdict", "RubricItem", "RubricJudgeResult", "evidence_text", "holistic_rule",
    "judge_rubric", "perturb_instruction", "rule_decompose", "rule_filter", "swap_instructions",
]
