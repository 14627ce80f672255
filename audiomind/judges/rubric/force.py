"""The rubric judge's verdict probability from its items, in two general stages, each measured on the judge
development sets (evals/judges/calibrate_judges.py):

1. **What was not verified holds the verdict toward 0.5, and a contradiction overrides that only as far as its check
   proved reliable.** For each check kind (a sound present, a sound absent, a count, a speaker's gender, the words
   said, an order, ...) the development sets give how often a verified contradiction from that kind (item p(yes) <=
   `contradiction_p`) came from a rubric that was in fact not followed: its precision, shrunk toward the precision
   of all kinds together by `prior_cases` pseudo-contradictions, so a kind seen rarely gets about the pooled value.
   Its force is how far that precision lies above what a contradiction would be right by chance (the share of
   rubrics not followed): force = (precision - base) / (1 - base), clamped to [0, 1]. The geometric mean of the
   verified items' p (each clamped to [0.02, 0.98], as `judge.aggregate`) is held toward 0.5 by the verified share of
   the rubric's weight, and the strongest contradiction's force takes back that much of the held share:
   hold = coverage + (1 - coverage) x force; raw = 0.5 + (score - 0.5) x hold. A kind with no development
   contradiction (an LLM's item, a new check) has the pooled force.
2. **A bounded-slope calibration map** (`audiomind.calibration.fit_bounded`, table `judge_rubric`), fitted for the
   probability as it is read: p = 0.5 + (map(raw) - 0.5) x hold.

Measured and left out: moving each item's "no" toward 0.5 by its kind's force before the geometric mean (worse
leave-one-set-out Brier score, 0.1176 against 0.1135 at one grid point: docs/JUDGES.md). No stage names an item or a wording: the forces
are a table per check kind (`data/rubric_force.json`, its sha256 named in every verdict), fitted by `fit_forces` on
development rubrics only.
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, Field

FORCES = Path(__file__).resolve().parents[1] / "data" / "rubric_force.json"
CLAMP = (0.02, 0.98)
"""Each verified item's p is clamped to this range in the geometric mean (as `judge.aggregate` does)."""
OTHER = "other"
"""The kind of an item without a rule check (an LLM's)."""


class ItemEvidence(NamedTuple):
    kind: str
    p: float
    verifiable: bool
    weight: float = 1.0


class KindForce(BaseModel):
    contradictions: int = Field(description="verified items of this kind at p(yes) <= contradiction_p")
    on_negatives: int = Field(description="... of them in rubrics that were not followed")
    precision: float = Field(description="(on_negatives + prior_cases x pooled_precision) / (contradictions + "
                             "prior_cases)")
    force: float = Field(description="(precision - base_negative) / (1 - base_negative), clamped to [0, 1]")


class ForceTable(BaseModel):
    name: str
    method: str
    fitted_on: list[str] = Field(default_factory=list)
    contradiction_p: float = 0.2
    prior_cases: float = 4.0
    base_negative: float = Field(description="the share of development rubrics that were not followed")
    pooled_precision: float
    default_force: float = Field(description="the force of a kind with no development contradiction")
    kinds: dict[str, KindForce] = Field(default_factory=dict)
    note: str = ""

    def force(self, kind: str) -> float:
        k = self.kinds.get(kind)
        return k.force if k is not None else self.default_force


class RubricEvidence(BaseModel):
    score: float = Field(description="geometric mean of the verified items' p (each clamped to CLAMP)")
    coverage: float = Field(description="the verified share of the rubric's weight")
    contradiction_force: float = Field(description="the strongest force among the verified contradictions (0: none)")
    hold: float = Field(description="coverage + (1 - coverage) x contradiction_force: how far the verdict may move "
                        "from 0.5")
    raw: float = Field(description="0.5 + (score - 0.5) x hold: what the calibration table reads")
    abstain: bool = Field(description="no item was verifiable: p 0.5")


@lru_cache(maxsize=4)
def load_forces(path: Path = FORCES) -> tuple[ForceTable, str]:
    """(table, sha256 of the file's bytes)."""
    data = Path(path).read_bytes()
    t = ForceTable.model_validate(json.loads(data))
    if not all(0.0 <= k.force <= 1.0 for k in t.kinds.values()) or not 0.0 <= t.default_force <= 1.0:
        raise ValueError(f"force table {t.name!r}: every force lies in [0, 1]")
    return t, hashlib.sha256(data).hexdigest()


def label_of(path: Path = FORCES) -> str:
    t, sha = load_forces(path)
    return f"force {t.name}@{sha[:12]}"


def evidence_of(items: list[ItemEvidence], forces: ForceTable) -> RubricEvidence:
    """Stage 1 (see the module's docstring) on one rubric's items."""
    scored = [min(CLAMP[1], max(CLAMP[0], i.p)) for i in items if i.verifiable]
    total = sum(i.weight for i in items)
    cover = sum(i.weight for i in items if i.verifiable) / total if total > 0 else 0.0
    if not scored:
        return RubricEvidence(score=0.5, coverage=cover, contradiction_force=0.0, hold=0.0, raw=0.5, abstain=True)
    score = math.exp(sum(math.log(p) for p in scored) / len(scored))
    cf = max((forces.force(i.kind) for i in items if i.verifiable and i.p <= forces.contradiction_p), default=0.0)
    hold = min(1.0, cover + (1.0 - cover) * cf)
    return RubricEvidence(score=round(score, 6), coverage=round(cover, 6), contradiction_force=round(cf, 6),
                          hold=round(hold, 6), raw=round(0.5 + (score - 0.5) * hold, 6), abstain=False)


def probability(ev: RubricEvidence, table_p: float) -> float:
    """Stage 2's reading: the table's p for `ev.raw`, held toward 0.5 by `ev.hold` (0.5 for an abstention)."""
    return 0.5 if ev.abstain else round(0.5 + (table_p - 0.5) * ev.hold, 4)


def fit_forces(rubrics: list[tuple[bool, list[ItemEvidence]]], *, name: str, fitted_on: list[str],
               contradiction_p: float = 0.2, prior_cases: float = 4.0) -> ForceTable:
    """The force of each check kind's contradiction, from development rubrics (label: the rubric was followed) that
    have a verifiable item."""
    judged = [(y, its) for y, its in rubrics if any(i.verifiable for i in its)]
    if not judged:
        raise ValueError("no development rubric with a verifiable item")
    base = sum(not y for y, _ in judged) / len(judged)
    counts: dict[str, list[int]] = {}
    for y, its in judged:
        for i in its:
            if i.verifiable and i.p <= contradiction_p:
                c = counts.setdefault(i.kind, [0, 0])
                c[0] += 1
                c[1] += not y
    n_all = sum(c[0] for c in counts.values())
    pooled = sum(c[1] for c in counts.values()) / n_all if n_all else base

    def force(precision: float) -> float:
        return round(min(1.0, max(0.0, (precision - base) / (1.0 - base))) if base < 1.0 else 0.0, 4)

    kinds = {}
    for kind, (n, neg) in sorted(counts.items()):
        prec = (neg + prior_cases * pooled) / (n + prior_cases)
        kinds[kind] = KindForce(contradictions=n, on_negatives=neg, precision=round(prec, 4), force=force(prec))
    return ForceTable(
        name=name, fitted_on=fitted_on, contradiction_p=contradiction_p, prior_cases=prior_cases,
        base_negative=round(base, 4), pooled_precision=round(pooled, 4), default_force=force(pooled), kinds=kinds,
        method=(f"per check kind: precision of its verified contradictions (p(yes) <= {contradiction_p:g}) as a "
                f"sign the rubric was not followed, with {prior_cases:g} pseudo-contradictions at the pooled "
                "precision; force = (precision - base) / (1 - base), base = the share of rubrics not followed"))
