"""Calibration as data: the answer step's raw confidence becomes a probability through a table fitted on
development runs only (evals/confidence/fit.py), never on held-out or blind sets.

The table (data/calibration.json, and one per family of deciding checks that has enough answers) is a monotone piecewise-linear map from raw confidence to the share of
answers that were right, with the runs it was fitted on named inside it. Its sha256 is recorded with every
calibrated answer (in the confidence reason: `calibration NAME@SHA12: raw R`), as a prompt's id is, so a
trace says which table made its number and what the number was before.

The mechanism (table model, loading, interpolation, the fit) is shared with the judges' verdict tables:
`audiomind.calibration`; this module is the answer step's use of it ("answer").
"""

from __future__ import annotations

from pathlib import Path

from audiomind import calibration as _shared
from audiomind.calibration import CalibrationTable
from audiomind.reasoning.ledger import ConfidenceLedger

__all__ = ["DATA", "FAMILIES", "SAID", "CalibrationTable", "calibrate", "family", "into", "label", "table"]

DATA = _shared.path_of("answer")
SAID = ("transcript_match", "transcript_complement", "transcript_absent", "readings_agree")
"""Checks of what was said (a literal match of what was heard)."""
FAMILIES = ("said", "tag", "step", "guess", "measure")
"""The families of deciding checks: what was said (SAID), tag similarity (tag_category), an executed step
(`step:KIND`), an admitted guess, and every other measurement. A raw score means something else in each, so a
family whose development answers are enough (evals/confidence/fit.py's --min-family) has its own table
(`answer_<family>` in audiomind.calibration.TABLES); the others read the pooled table (`answer`)."""


def family(method: str | None) -> str:
    """The family of the deciding check `method` (None: the pooled table's)."""
    if method is None:
        return "measure"
    if method in SAID:
        return "said"
    if method == "tag_category":
        return "tag"
    if method.startswith("step:"):
        return "step"
    if method in ("guess", "none"):
        return "guess"
    return "measure"


def _path(method: str | None) -> Path:
    use = f"answer_{family(method)}"
    return _shared.path_of(use) if method is not None and use in _shared.TABLES else DATA


def table(method: str | None = None) -> tuple[CalibrationTable, str]:
    """(the table for decisions by `method`, the sha256 of its file); no method: the pooled table."""
    return _shared.load(_path(method))


def calibrate(raw: float, method: str | None = None) -> float:
    """The probability the table for `method` gives a raw confidence (clamped to its first and last knot)."""
    return _shared.interpolate(table(method)[0].knots, raw)


def into(ledger: ConfidenceLedger, method: str | None = None) -> float:
    """The ledger's raw score through the table for `method`, a `map` step naming the table and its sha256:
    the probability, clamped to [0, 1] and rounded to 3 places."""
    t, sha = table(method)
    return ledger.map(t.knots, table=t.name, sha256=sha, stage="calibration", digits=3,
                      reason=f"{label(method)} ({family(method)}): raw {ledger.value:.3f}")


def label(method: str | None = None) -> str:
    return _shared.label_of(_path(method))
