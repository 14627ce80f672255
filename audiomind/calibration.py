"""Calibration as data, for every score that is read as a probability: the answer step's confidence and the
judges' verdicts. One mechanism, one table (a JSON file) per use, each fitted by a script under evals/ on
development runs only, never on held-out or blind sets.

A table is a monotone piecewise-linear map from a raw score to the share of cases that were right (or
positive), with the runs it was fitted on named inside it. Its sha256 is recorded wherever it is applied
(`calibration NAME@SHA12: raw R`), as a prompt's id is, so a trace says which table made a number and what the
number was before. The fit (`fit`) is isotonic (pool adjacent violators) with a prior of pseudo-cases on the
identity, so thin data moves the map only as far as it shows.

The uses and their files are a table too (`TABLES`, paths relative to the package); a use with no table
(`None`) leaves the raw score as it is and says so. An abstention (a judge that cannot decide: p = 0.5) is
never mapped: it stays 0.5, so it is never a decisive verdict.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

PACKAGE = Path(__file__).resolve().parent
TABLES: dict[str, str] = {
    "answer": "reasoning/data/calibration.json",  # the rule policy's answer confidence (evals/calibrate.py)
    "answer_said": "reasoning/data/calibration_said.json",  # ... when a check of what was said decided it
    "judge_edit": "judges/data/calibration_edit.json",  # edit judge: effectiveness p (evals/judges/calibrate_judges.py)
    "judge_rubric": "judges/data/calibration_rubric.json",  # rubric judge: geometric rubric score, rule item judge
    "judge_aura": "judges/data/calibration_aura.json",  # AURA S
}
"""Use -> its table file (relative to the audiomind package)."""
ABSTAIN_P = 0.5
BINS = [(i / 10, (i + 1) / 10) for i in range(10)]
"""Tenths of the raw range: where the fit's prior lies."""


class CalibrationTable(BaseModel):
    name: str
    method: str
    fitted_on: list[str] = Field(default_factory=list, description="the development runs it was fitted on")
    knots: list[tuple[float, float]] = Field(description="(raw confidence, probability right), raw ascending, "
                                             "probability non-decreasing; linear between knots")
    note: str = ""


class Calibrated(BaseModel):
    """One raw score through one table."""

    p: float = Field(description="the calibrated probability (0.5 for an abstention)")
    raw: float
    table: str = Field(description="NAME@SHA12 of the table, or 'none'")
    abstained: bool = False

    @property
    def note(self) -> str:
        if self.abstained:
            return f"abstained: p 0.5, not calibrated (raw {self.raw:.3f})"
        if self.table == "none":
            return f"uncalibrated: no table for this use (raw {self.raw:.3f})"
        return f"calibration {self.table}: raw {self.raw:.3f}"


def path_of(use: str) -> Path:
    if use not in TABLES:
        raise KeyError(f"no calibration use {use!r}; known: {', '.join(sorted(TABLES))}")
    return PACKAGE / TABLES[use]


@lru_cache(maxsize=16)
def load(path: Path) -> tuple[CalibrationTable, str]:
    """(table, sha256 of the file's bytes); the knots must rise in raw score and in probability."""
    raw = Path(path).read_bytes()
    t = CalibrationTable.model_validate(json.loads(raw))
    xs = [k[0] for k in t.knots]
    ps = [k[1] for k in t.knots]
    if not t.knots or xs != sorted(xs) or ps != sorted(ps):
        raise ValueError(f"calibration table {t.name!r}: knots must rise in raw score and in probability")
    return t, hashlib.sha256(raw).hexdigest()


def interpolate(knots: list[tuple[float, float]], raw: float) -> float:
    """The probability a table's knots give a raw score (clamped to the first and last knot)."""
    if raw <= knots[0][0]:
        return knots[0][1]
    for (x0, p0), (x1, p1) in itertools.pairwise(knots):
        if raw <= x1:
            return p0 + (p1 - p0) * (raw - x0) / (x1 - x0) if x1 > x0 else p1
    return knots[-1][1]


def label_of(path: Path) -> str:
    t, sha = load(path)
    return f"calibration {t.name}@{sha[:12]}"


def apply(use: str | None, raw: float, *, abstain: bool = False) -> Calibrated:
    """A raw score through the table of `use` (None: no table, the raw score stands and says so); an
    abstention stays 0.5."""
    if abstain:
        return Calibrated(p=ABSTAIN_P, raw=raw, table="none", abstained=True)
    if use is None:
        return Calibrated(p=raw, raw=raw, table="none")
    t, sha = load(path_of(use))
    p = round(max(0.0, min(1.0, interpolate(t.knots, raw))), 4)
    return Calibrated(p=p, raw=raw, table=f"{t.name}@{sha[:12]}")


# ---------------------------------------------------------------- the fit (used by the scripts under evals/)


def pav(points: list[tuple[float, float, float]]) -> list[list[float]]:
    """Blocks [sum w*y, sum w, x min, x max] of the isotonic fit of y on x (points (x, y, w) sorted by x)."""
    blocks: list[list[float]] = []
    for x, y, w in points:
        blocks.append([w * y, w, x, x])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            b = blocks.pop()
            a = blocks[-1]
            a[0], a[1], a[3] = a[0] + b[0], a[1] + b[1], b[3]
    return blocks


PriorTarget = Literal["identity", "even"]


def fit(data: list[tuple[float, bool]], prior: float, toward: PriorTarget = "identity") -> list[tuple[float, float]]:
    """Knots of the isotonic fit of right (or positive) on the raw score, with `prior` pseudo-cases per tenth of
    the range; one knot per block (at its mid raw score), plus flat ends at 0 and 1. The pseudo-cases lie on the
    identity (`toward="identity"`: where data is thin the raw score stands) or at 0.5 (`"even"`: where data is
    thin a verdict stays undecided, so it is decisive only where development cases show it)."""
    pts = [(x, float(y), 1.0) for x, y in data] + (
        [((lo + hi) / 2, (lo + hi) / 2 if toward == "identity" else 0.5, prior) for lo, hi in BINS]
        if prior > 0 else [])
    by_x: dict[float, list[float]] = {}
    for x, y, w in pts:  # cases at one raw value are one point (their mean, their count)
        acc = by_x.setdefault(x, [0.0, 0.0])
        acc[0] += w * y
        acc[1] += w
    blocks = pav([(x, wy / w, w) for x, (wy, w) in sorted(by_x.items())])
    knots = [(round((b[2] + b[3]) / 2, 4), round(b[0] / b[1], 4)) for b in blocks]
    knots = [(0.0, knots[0][1]), *knots, (1.0, knots[-1][1])]
    out: list[tuple[float, float]] = []
    for x, p in knots:  # one knot per raw value, probabilities kept non-decreasing
        if out and x <= out[-1][0]:
            out[-1] = (out[-1][0], max(out[-1][1], p))
        else:
            out.append((x, max(p, out[-1][1]) if out else p))
    return out
