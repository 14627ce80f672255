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

from audiomind import calibration as _shared
from audiomind.calibration import CalibrationTable

__all__ = ["DATA", "CalibrationTable", "calibrate", "label", "table"]

DATA = _shared.path_of("answer")


def table() -> tuple[CalibrationTable, str]:
    """(the answer step's table, the sha256 of its file)."""
    return _shared.load(DATA)


def calibrate(raw: float) -> float:
    """The probability the table gives a raw confidence (clamped to the table's first and last knot)."""
    return _shared.interpolate(table()[0].knots, raw)


def label() -> str:
    return _shared.label_of(DATA)
