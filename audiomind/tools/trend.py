"""The linear-trend reading that loudness and pitch share: fit a line over time, and call the series rising,
falling, varying or flat by the change the line makes and the spread left around it."""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np


class Trend(NamedTuple):
    direction: Literal["up", "down", "varying", "flat"]
    change: float  # slope x span, in the series' unit
    slope: float  # per second
    spread: float  # standard deviation of the residuals around the line


def fit_trend(t: np.ndarray, y: np.ndarray, trend_min: float, vary_min: float) -> Trend:
    """Least-squares line through (t, y), at least 3 points: a change of at least `trend_min` that also
    exceeds twice the residual spread is a trend (up or down); otherwise a spread of at least `vary_min` is
    'varying', else 'flat'."""
    slope, intercept = np.polyfit(t, y, 1)
    change = float(slope * (t[-1] - t[0]))
    spread = float(np.std(y - (slope * t + intercept)))
    if abs(change) >= trend_min and abs(change) >= 2 * spread:
        direction: Literal["up", "down", "varying", "flat"] = "up" if change > 0 else "down"
    elif spread >= vary_min:
        direction = "varying"
    else:
        direction = "flat"
    return Trend(direction, change, float(slope), spread)
