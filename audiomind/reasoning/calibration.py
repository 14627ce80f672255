"""Calibration as data: the answer step's raw confidence becomes a probability through a table fitted on
development runs only (evals/calibrate.py), never on held-out or blind sets.

The table (data/calibration.json) is a monotone piecewise-linear map from raw confidence to the share of
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

__all__ = ["DATA", "SAID", "SAID_DATA", "CalibrationTable", "calibrate", "into", "label", "table"]

DATA = _shared.path_of("answer")
SAID_DATA = _shared.path_of("answer_said")
SAID = ("transcript_match", "transcript_complement", "transcript_absent", "readings_agree")
"""Checks of what was said. A raw score means something else when words heard decide than when a measurement
does (a literal match that the answer step weakened is right far less often than a measurement of the same
raw score), so their decisions have a table of their own; every other decision (measurements, executed steps,
guesses) reads the general one."""


def _path(method: str | None) -> Path:
    return SAID_DATA if method in SAID else DATA


def table(method: str | None = None) -> tuple[CalibrationTable, str]:
    """(the table for decisions by `method`, the sha256 of its file); no method: the general table."""
    return _shared.load(_path(method))


def calibrate(raw: float, method: str | None = None) -> float:
    """The probability the table for `method` gives a raw confidence (clamped to its first and last knot)."""
    return _shared.interpolate(table(method)[0].knots, raw)


def into(ledger: ConfidenceLedger, method: str | None = None) -> float:
    """The ledger's raw score through the table for `method`, a `map` step naming the table and its sha256:
    the probability, clamped to [0, 1] and rounded to 3 places."""
    t, sha = table(method)
    return ledger.map(t.knots, table=t.name, sha256=sha, stage="calibration", digits=3,
                      reason=f"{label(method)}: raw {ledger.value:.3f}")


def label(method: str | None = None) -> str:
    return _shared.label_of(_path(method))
