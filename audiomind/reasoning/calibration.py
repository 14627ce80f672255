"""Calibration as data: the answer step's raw confidence becomes a probability through a table fitted on
development runs only (evals/calibrate.py), never on held-out or blind sets.

The table (data/calibration.json) is a monotone piecewise-linear map from raw confidence to the share of
answers that were right, with the runs it was fitted on named inside it. Its sha256 is recorded with every
calibrated answer (in the confidence reason: `calibration NAME@SHA12: raw R`), as a prompt's id is, so a
trace says which table made its number and what the number was before.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

DATA = Path(__file__).parent / "data" / "calibration.json"


class CalibrationTable(BaseModel):
    name: str
    method: str
    fitted_on: list[str] = Field(default_factory=list, description="the development runs it was fitted on")
    knots: list[tuple[float, float]] = Field(description="(raw confidence, probability right), raw ascending, "
                                             "probability non-decreasing; linear between knots")
    note: str = ""


@lru_cache(maxsize=1)
def table() -> tuple[CalibrationTable, str]:
    raw = DATA.read_bytes()
    t = CalibrationTable.model_validate(json.loads(raw))
    xs = [k[0] for k in t.knots]
    ps = [k[1] for k in t.knots]
    if xs != sorted(xs) or ps != sorted(ps) or not t.knots:
        raise ValueError(f"{DATA}: knots must rise in raw confidence and in probability")
    return t, hashlib.sha256(raw).hexdigest()


def calibrate(raw: float) -> float:
    """The probability the table gives a raw confidence (clamped to the table's first and last knot)."""
    t, _ = table()
    ks = t.knots
    if raw <= ks[0][0]:
        return ks[0][1]
    for (x0, p0), (x1, p1) in itertools.pairwise(ks):
        if raw <= x1:
            return p0 + (p1 - p0) * (raw - x0) / (x1 - x0) if x1 > x0 else p1
    return ks[-1][1]


def label() -> str:
    t, sha = table()
    return f"calibration {t.name}@{sha[:12]}"
