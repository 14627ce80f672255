"""Rubric-judge aggregation: both methods by hand, the task option reaching the judge's spec, and the measured
table (evals/judges/run_aggregation.py) reproduced from the saved per-item probabilities of the judge sets.

No model runs: the inputs are the probabilities the judge-set results already hold."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from audiomind.bench.tasks import make_task
from audiomind.judges.rubric.judge import AGGREGATION_TEXTS, AGGREGATIONS, aggregate
from audiomind.judges.rubric.verify import ItemVerdict

REPO = Path(__file__).resolve().parents[2]
SAVED = REPO / "evals" / "judges" / "results" / "rubric_aggregation_offline.json"


def _v(p: float, verifiable: bool = True) -> ItemVerdict:
    return ItemVerdict(item_id=0, question=f"q{p}", verdict="yes" if p > 0.5 else "no", p_yes=p, source="rules",
                       verifiable=verifiable)


def _script():
    spec = importlib.util.spec_from_file_location("run_aggregation", REPO / "evals" / "judges" / "run_aggregation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_both_methods_by_hand():
    vs = [_v(0.98), _v(1.0), _v(0.01), _v(0.5, verifiable=False)]  # clamped to 0.98, 0.98, 0.02; the 0.5 not scored
    geo, mean_p, unver = aggregate(vs, method="geometric")
    assert geo == pytest.approx(math.exp((2 * math.log(0.98) + math.log(0.02)) / 3), abs=1e-12)
    arith, mean_p2, _ = aggregate(vs, method="mean")
    assert arith == pytest.approx((0.98 + 0.98 + 0.02) / 3, abs=1e-12)
    assert unver == ["q0.5"] and mean_p == mean_p2 == pytest.approx((0.98 + 1.0 + 0.01 + 0.5) / 4)
    assert geo < 0.3 < 0.5 < arith  # one confident "no": the geometric mean fails the item, the mean does not
    assert aggregate([_v(0.5, verifiable=False)], method="mean")[0] == 0.5  # nothing verifiable: cannot judge
    with pytest.raises(ValueError, match="aggregation must be one of geometric, mean"):
        aggregate(vs, method="median")
    assert set(AGGREGATION_TEXTS) == set(AGGREGATIONS)


def test_task_option_reaches_the_judge(tmp_path):
    assert make_task("rubric-judge").spec(tmp_path).aggregation == "geometric"
    task = make_task("rubric-judge", {"aggregation": "mean"})
    assert task.spec(tmp_path).aggregation == "mean" and task.options()["aggregation"] == "mean"
    with pytest.raises(ValueError, match="aggregation='median'"):
        make_task("rubric-judge", {"aggregation": "median"})


def test_measured_table_reproduces_from_the_saved_probabilities():
    mod = _script()
    rows = mod.saved_rubric_rows()
    assert {"v3", "v4", "v5", "v6", "v13"} <= set(rows)
    result = mod.measure(rows)
    # the read-back is proved on the rows themselves: the geometric aggregate equals each recorded rubric_score
    # (to the 4 places it was saved with) for all but the rows named here
    assert sum(result["rows_not_reproduced"].values()) <= 2
    assert result == json.loads(SAVED.read_text(encoding="utf-8")), "rerun evals/judges/run_aggregation.py"
    dev = result["groups"]["development (v3-v6)"]
    assert dev["n"] == 187 and dev["geometric"]["accuracy"] > dev["mean"]["accuracy"]
