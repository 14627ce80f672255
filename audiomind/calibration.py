"""Calibration as data, for every score that is read as a probability: the answer step's confidence and the
judges' verdicts. One mechanism, one table (a JSON file) per use, each fitted by a script under evals/ on
development runs only, never on held-out or blind sets.

A table is a monotone piecewise-linear map from a raw score to the share of cases that were right (or
positive), with the runs it was fitted on named inside it. Its sha256 is recorded wherever it is applied
(`calibration NAME@SHA12: raw R`), as a prompt's id is, so a trace says which table made a number and what the
number was before. Two fits: `fit_bounded` (recommended) is a monotone piecewise-linear map on fixed knots whose slope is bounded,
so it is never a switch, fitted by Brier score or log loss with a prior of pseudo-cases on the identity, so thin
data moves it only as far as it shows; `cross_validate` scores it leave-one-group-out (a group: one data set or
run) and `choose` picks its slope bound and prior from a small grid by that score. The older `fit` (isotonic,
pool adjacent violators, with the same kind of prior) is kept for its callers; it can make a switch.

The uses and their files are a table too (`TABLES`, paths relative to the package); a use with no table
(`None`) leaves the raw score as it is and says so. An abstention (a judge that cannot decide: p = 0.5) is
never mapped: it stays 0.5, so it is never a decisive verdict.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

PACKAGE = Path(__file__).resolve().parent
TABLES: dict[str, str] = {
    # the rule policy's answer confidence (evals/confidence/fit.py): the pooled table, and one per family of
    # deciding checks with enough development answers (audiomind.reasoning.calibration.FAMILIES)
    "answer": "reasoning/data/calibration.json",
    "answer_said": "reasoning/data/calibration_said.json",
    "answer_measure": "reasoning/data/calibration_measure.json",
    "answer_guess": "reasoning/data/calibration_guess.json",
    "judge_edit": "judges/data/calibration_edit.json",  # edit judge: effectiveness (evals/judges/calibrate_judges.py)
    "judge_rubric": "judges/data/calibration_rubric.json",  # rubric judge: the held score of judges/rubric/force.py
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


# ------------------------------------------------ the bounded-slope fit (recommended; `fit` above is kept for callers)

Loss = Literal["brier", "log"]
ECE_BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0001))
"""Confidence bins of the expected calibration error, as evals/unseen/score.py reports it."""
DECISIVE = (0.2, 0.8)
"""A verdict is decisive at p <= 0.2 or p >= 0.8."""
GRID_MAX_SLOPE = (1.5, 2.5, 4.0)
GRID_PRIOR = (1.0, 3.0, 10.0)
_EPS = 1e-9


def even_knots(step: float = 0.05) -> list[float]:
    """Raw scores 0, step, 2 step, ..., 1."""
    n = round(1.0 / step)
    return [round(i / n, 6) for i in range(n + 1)]


def _design(xs: list[float], knots: list[float]) -> Any:
    """Rows of interpolation weights: p(x) = row(x) . (value at each knot)."""
    import numpy as np

    k = np.asarray(knots, dtype=float)
    x = np.clip(np.asarray(xs, dtype=float), k[0], k[-1])
    j = np.clip(np.searchsorted(k, x, side="right") - 1, 0, len(k) - 2)
    t = (x - k[j]) / (k[j + 1] - k[j])
    b = np.zeros((len(x), len(k)))
    b[np.arange(len(x)), j] = 1.0 - t
    b[np.arange(len(x)), j + 1] += t
    return b


def fit_bounded(data: Sequence[tuple[float, float]], *, knots: list[float] | None = None,
                min_slope: float = 0.0, max_slope: float = 2.5, prior: float = 3.0, loss: Loss = "brier",
                weights: Sequence[float] | None = None,
                hold: Sequence[float] | None = None,
                toward: Sequence[float] | None = None) -> list[tuple[float, float]]:
    """Knots (raw, p) of a monotone piecewise-linear map on fixed raw knots (default 0, 0.05, ..., 1) whose slope
    between knots lies in [min_slope, max_slope], so it is never a switch: a raw step of 0.1 moves p by at most
    0.1 x max_slope. Fitted by minimising the Brier score (or the log loss) of the cases plus `prior` pseudo-cases
    per tenth of the raw range lying on the identity, so thin data moves the map only as far as it shows.
    `hold` (one share per case, default 1): a case's probability is read after the map as
    0.5 + (map(raw) - 0.5) x hold, as a judge holds a partly verified verdict toward 0.5; the fit is then
    calibrated for that probability (still linear in the map, so still convex). `toward` (one value per case,
    default 0.5) is what a held case is held toward: the answer step's competence stage shrinks toward chance.

    The map is the first knot's value plus non-negative increments (each in [min_slope dx, max_slope dx]), kept
    within [0, 1]; the problem is convex, so the fit is unique and deterministic (scipy SLSQP)."""
    import numpy as np
    from scipy.optimize import minimize

    ks = even_knots() if knots is None else [float(k) for k in knots]
    if len(ks) < 2 or ks != sorted(ks) or len(set(ks)) != len(ks):
        raise ValueError("knots must be at least two distinct raw scores, ascending")
    if not 0.0 <= min_slope <= max_slope or min_slope * (ks[-1] - ks[0]) > 1.0:
        raise ValueError(f"slope bounds [{min_slope}, {max_slope}] cannot hold on [0, 1]")
    kx = np.asarray(ks)
    dx = np.diff(kx)
    n_k = len(ks)
    tri = np.tril(np.ones((n_k, n_k)))  # values = tri @ theta, theta = (first value, increments)
    xs = [float(x) for x, _ in data]
    ys = np.asarray([float(y) for _, y in data])
    w = np.ones(len(data)) if weights is None else np.asarray(weights, dtype=float)
    m = _design(xs, ks) @ tri if data else np.zeros((0, n_k))
    off = np.zeros(len(data))
    if hold is not None:  # p = hold x map + (1 - hold) x toward (toward: 0.5 unless given)
        h = np.clip(np.asarray(hold, dtype=float), 0.0, 1.0)
        t = np.full(len(data), 0.5) if toward is None else np.asarray(toward, dtype=float)
        m, off = m * h[:, None], (1.0 - h) * t
    prior_w = np.full(n_k, prior * 10.0 * (ks[-1] - ks[0]) / n_k)  # `prior` pseudo-cases per tenth, over the knots
    prior_y = np.clip(kx, 0.0, 1.0)
    mp = tri
    total = max(float(w.sum() + prior_w.sum()), _EPS)

    def objective(theta: Any) -> tuple[float, Any]:
        val, grad = 0.0, np.zeros(n_k)
        for mat, y, wt, o in ((m, ys, w, off), (mp, prior_y, prior_w, 0.0)):
            if not len(y):
                continue
            p = mat @ theta + o
            if loss == "brier":
                r = p - y
                val += float(wt @ (r * r))
                grad += mat.T @ (2.0 * wt * r)
            else:
                pc = np.clip(p, _EPS, 1.0 - _EPS)
                val -= float(wt @ (y * np.log(pc) + (1.0 - y) * np.log(1.0 - pc)))
                grad += mat.T @ (wt * ((1.0 - y) / (1.0 - pc) - y / pc))
        return val / total, grad / total

    d0 = np.clip(dx, min_slope * dx, max_slope * dx)
    theta0 = np.concatenate([[max(0.0, (1.0 - d0.sum()) / 2.0)], d0])
    bounds = [(0.0, 1.0)] + [(min_slope * d, max_slope * d) for d in dx]
    cons = [{"type": "ineq", "fun": lambda th: 1.0 - th.sum(), "jac": lambda th: -np.ones(n_k)}]
    res = minimize(objective, theta0, jac=True, bounds=bounds, constraints=cons, method="SLSQP",
                   options={"maxiter": 500, "ftol": 1e-12})
    theta = np.clip(res.x, [b[0] for b in bounds], [b[1] for b in bounds])
    values = np.maximum.accumulate(np.clip(tri @ theta, 0.0, 1.0))  # rounding noise of the solver only
    return [(round(float(x), 4), round(float(v), 4)) for x, v in zip(ks, values, strict=True)]


def ece(pairs: list[tuple[float, bool]]) -> float:
    """Expected calibration error over ECE_BINS: sum over bins of share x |accuracy - mean p| (under- and
    over-confidence alike)."""
    if not pairs:
        return 0.0
    out = 0.0
    for lo, hi in ECE_BINS:
        inb = [(p, y) for p, y in pairs if lo <= p < hi]
        if inb:
            acc = sum(bool(y) for _, y in inb) / len(inb)
            conf = sum(p for p, _ in inb) / len(inb)
            out += len(inb) / len(pairs) * abs(acc - conf)
    return out


def brier(pairs: list[tuple[float, bool]]) -> float:
    return sum((p - float(y)) ** 2 for p, y in pairs) / len(pairs) if pairs else 0.0


def metrics(pairs: list[tuple[float, bool]], decisive: tuple[float, float] = DECISIVE) -> dict[str, Any]:
    """n, ECE, Brier, and the decisive verdicts (p <= lo or p >= hi): their share and how many were right (a
    decisive verdict is right when p >= hi and the case is positive or p <= lo and it is not)."""
    dec = [(p, y) for p, y in pairs if p <= decisive[0] or p >= decisive[1]]
    right = sum((p >= decisive[1]) == bool(y) for p, y in dec)
    return {"n": len(pairs), "ece": round(ece(pairs), 4), "brier": round(brier(pairs), 4),
            "decisive_share": round(len(dec) / len(pairs), 4) if pairs else 0.0,
            "decisive_n": len(dec), "decisive_right": right,
            "decisive_accuracy": round(right / len(dec), 4) if dec else None}


def cross_validate(points_by_group: dict[str, list[tuple[float, bool]]], **fit_kwargs: Any) -> dict[str, Any]:
    """Leave one group (one data set or run) out: fit `fit_bounded(**fit_kwargs)` on the others, map the held-out
    group's raw scores, and score them (`metrics`). Returns {"groups": {group: metrics}, "pooled": metrics of
    every held-out prediction together, "raw": the same of the raw scores unmapped}."""
    groups = {g: list(v) for g, v in sorted(points_by_group.items()) if v}
    if len(groups) < 2:
        raise ValueError("cross-validation needs at least two non-empty groups")
    per: dict[str, Any] = {}
    pooled: list[tuple[float, bool]] = []
    for g, held in groups.items():
        train = [pt for h, pts in groups.items() if h != g for pt in pts]
        knots = fit_bounded(train, **fit_kwargs)
        mapped = [(interpolate(knots, x), bool(y)) for x, y in held]
        per[g] = metrics(mapped)
        pooled += mapped
    everything = [(min(1.0, max(0.0, x)), bool(y)) for pts in groups.values() for x, y in pts]
    return {"groups": per, "pooled": metrics(pooled), "raw": metrics(everything)}


CHOOSE_TOLERANCE = 0.001
"""A grid point within this much pooled Brier score of the best counts as as good (the gentlest such is taken)."""


def pick(grid: dict[tuple[float, float], float], tolerance: float = CHOOSE_TOLERANCE) -> tuple[float, float]:
    """From {(max_slope, prior): pooled CV Brier}, the gentlest slope, then the strongest prior, whose Brier lies
    within `tolerance` of the best: a steeper map or a weaker prior must earn its place by more than noise."""
    best = min(grid.values())
    order = sorted(grid, key=lambda sp: (sp[0], -sp[1]))
    return next(sp for sp in order if grid[sp] <= best + tolerance)


def choose(points_by_group: dict[str, list[tuple[float, bool]]], *, max_slopes: tuple[float, ...] = GRID_MAX_SLOPE,
           priors: tuple[float, ...] = GRID_PRIOR, tolerance: float = CHOOSE_TOLERANCE,
           **fit_kwargs: Any) -> tuple[dict[str, float], dict[str, Any]]:
    """(max_slope, prior) of the grid by pooled leave-one-group-out Brier score (`pick`), and every grid point's
    pooled figures."""
    grid: dict[str, Any] = {}
    scores: dict[tuple[float, float], float] = {}
    for s in sorted(max_slopes):
        for pr in sorted(priors, reverse=True):
            cv = cross_validate(points_by_group, max_slope=s, prior=pr, **fit_kwargs)
            grid[f"max_slope {s:g}, prior {pr:g}"] = cv["pooled"]
            scores[(s, pr)] = cv["pooled"]["brier"]
    s, pr = pick(scores, tolerance)
    return {"max_slope": s, "prior": pr}, grid


def table_of(name: str, knots: list[tuple[float, float]], *, fitted_on: list[str], method: str,
             note: str = "") -> CalibrationTable:
    """A fitted map as a calibration table (the same JSON kind `load` reads)."""
    return CalibrationTable(name=name, method=method, fitted_on=fitted_on, knots=knots, note=note)


def write_table(path: Path, table: CalibrationTable) -> str:
    """Write a table as JSON, check it loads, and return its sha256."""
    Path(path).write_text(table.model_dump_json(indent=2) + "\n", encoding="utf-8")
    load.cache_clear()
    return load(Path(path))[1]
