"""The bounded-slope calibration fit (`audiomind.calibration.fit_bounded`): monotone, its slope within bounds so a
step in the data never becomes a switch, the identity on calibrated data, pulled toward the identity where data is
thin, deterministic; leave-one-group-out cross-validation and the grid chooser; a fitted map is a table `load`
reads."""

from __future__ import annotations

import itertools
import random

import pytest

from audiomind import calibration as cal


def _slopes(knots):
    return [(p1 - p0) / (x1 - x0) for (x0, p0), (x1, p1) in itertools.pairwise(knots)]


def _calibrated(n_per: int = 40) -> list[tuple[float, bool]]:
    """At each raw score x on a grid, exactly round(x * n) of n cases are right."""
    out = []
    for x in [i / 20 for i in range(21)]:
        k = round(x * n_per)
        out += [(x, True)] * k + [(x, False)] * (n_per - k)
    return out


def _step(seed: int = 0, n: int = 400) -> list[tuple[float, bool]]:
    rng = random.Random(seed)
    xs = [rng.random() for _ in range(n)]
    return [(x, x >= 0.7) for x in xs]


@pytest.mark.parametrize("loss", ["brier", "log"])
def test_monotone_within_unit_range_and_slope_bounds_hold(loss):
    rng = random.Random(3)
    data = [(x, rng.random() < 0.2 + 0.6 * x * x) for x in (rng.random() for _ in range(300))]
    for lo, hi in [(0.0, 2.5), (0.2, 1.5), (0.0, 1.0)]:
        knots = cal.fit_bounded(data, min_slope=lo, max_slope=hi, loss=loss)
        ps = [p for _, p in knots]
        assert ps == sorted(ps) and all(0.0 <= p <= 1.0 for p in ps)
        assert [x for x, _ in knots] == cal.even_knots()
        assert all(lo - 0.01 <= s <= hi + 0.01 for s in _slopes(knots))


@pytest.mark.parametrize("loss", ["brier", "log"])
def test_identity_on_perfectly_calibrated_data(loss):
    knots = cal.fit_bounded(_calibrated(), loss=loss)
    assert max(abs(p - x) for x, p in knots) < 0.01


def test_a_step_in_the_data_is_not_a_switch():
    data = _step()
    knots = cal.fit_bounded(data, max_slope=2.5, prior=0.5)
    assert max(_slopes(knots)) <= 2.5 + 0.01
    assert cal.interpolate(knots, 0.75) - cal.interpolate(knots, 0.65) <= 0.25 + 0.002
    # the data does pull it: low scores low, high scores high, steepest around the step
    assert cal.interpolate(knots, 0.2) < 0.15 and cal.interpolate(knots, 0.95) > 0.85
    steepest = max(itertools.pairwise(knots), key=lambda k: k[1][1] - k[0][1])
    assert 0.5 <= steepest[0][0] <= 0.85
    # the old isotonic fit on the same data is the switch the bound forbids
    old = cal.fit(data, prior=0.5)
    assert cal.interpolate(old, 0.72) - cal.interpolate(old, 0.68) > 0.5


def test_thin_data_moves_the_map_only_as_far_as_it_shows():
    thin = [(0.9, False), (0.9, True), (0.85, False)]  # 3 cases in the top tenth, 2 wrong
    moved = [max(abs(p - x) for x, p in cal.fit_bounded(thin, prior=pr)) for pr in (1.0, 3.0, 10.0, 30.0)]
    assert moved == sorted(moved, reverse=True) and moved[-1] < 0.06  # a stronger prior holds it nearer
    knots = cal.fit_bounded(thin, prior=3.0)
    many = cal.fit_bounded(thin * 60, prior=3.0)
    assert cal.interpolate(many, 0.9) < cal.interpolate(knots, 0.9) - 0.2  # more of the same moves it further
    assert cal.interpolate(many, 0.9) == pytest.approx(1 / 3, abs=0.1)


def test_empty_data_is_the_identity_and_bad_bounds_are_refused():
    assert max(abs(p - x) for x, p in cal.fit_bounded([])) < 1e-3
    with pytest.raises(ValueError):
        cal.fit_bounded([], min_slope=2.0, max_slope=3.0)
    with pytest.raises(ValueError):
        cal.fit_bounded([], min_slope=1.0, max_slope=0.5)


def test_deterministic():
    data = _step(seed=5)
    assert cal.fit_bounded(data) == cal.fit_bounded(list(data))
    groups = {f"g{i}": _step(seed=i, n=80) for i in range(4)}
    assert cal.cross_validate(groups) == cal.cross_validate(dict(reversed(list(groups.items()))))


def test_metrics_count_under_and_over_confidence():
    under = [(0.35, True)] * 10  # right every time at 0.35
    over = [(0.95, False)] * 10
    assert cal.ece(under) == pytest.approx(0.65) and cal.ece(over) == pytest.approx(0.95)
    m = cal.metrics([(0.1, False), (0.9, True), (0.85, False), (0.5, True)])
    assert m["decisive_n"] == 3 and m["decisive_right"] == 2 and m["decisive_share"] == 0.75
    assert m["brier"] == pytest.approx((0.01 + 0.01 + 0.7225 + 0.25) / 4, abs=1e-4)


def test_cross_validation_holds_each_group_out():
    groups = {f"set{i}": _step(seed=i, n=100) for i in range(5)}
    cv = cal.cross_validate(groups, max_slope=2.5, prior=1.0)
    assert sorted(cv["groups"]) == sorted(groups)
    assert cv["pooled"]["n"] == 500 and cv["raw"]["n"] == 500
    assert cv["pooled"]["brier"] < cv["raw"]["brier"]  # fitted on the other sets, it still helps the held-out one
    with pytest.raises(ValueError):
        cal.cross_validate({"only": groups["set0"]})


def test_the_chooser_picks_something_sane():
    # overconfident raw scores (the truth is 0.5 + (x - 0.5) / 2): the chooser should not keep the identity's
    # steepness, and a gentle slope is enough
    rng = random.Random(11)
    groups = {}
    for g in range(5):
        xs = [rng.random() for _ in range(80)]
        groups[f"g{g}"] = [(x, rng.random() < 0.5 + (x - 0.5) / 2) for x in xs]
    best, grid = cal.choose(groups, max_slopes=(0.75, 2.5), priors=(1.0, 10.0))
    assert best["max_slope"] in (0.75, 2.5) and best["prior"] in (1.0, 10.0)
    assert len(grid) == 4
    chosen = grid[f"max_slope {best['max_slope']:g}, prior {best['prior']:g}"]["brier"]
    assert chosen <= min(v["brier"] for v in grid.values()) + cal.CHOOSE_TOLERANCE
    knots = cal.fit_bounded([pt for v in groups.values() for pt in v], **best)
    assert 0.15 < cal.interpolate(knots, 0.0) < 0.45 and 0.55 < cal.interpolate(knots, 1.0) < 0.85


def test_the_pick_takes_the_gentlest_point_within_the_tolerance():
    grid = {(1.5, 10.0): 0.1300, (1.5, 3.0): 0.1205, (2.5, 3.0): 0.1200, (4.0, 1.0): 0.1198}
    assert cal.pick(grid) == (1.5, 3.0)  # within 0.001 of the best: the gentler slope
    assert cal.pick(grid, tolerance=0.0) == (4.0, 1.0)
    assert cal.pick({(2.5, 1.0): 0.1, (2.5, 10.0): 0.1}) == (2.5, 10.0)  # a tie: the stronger prior


def test_a_fitted_map_is_a_table_load_reads(tmp_path):
    knots = cal.fit_bounded(_step())
    table = cal.table_of("test-map", knots, fitted_on=["s1: 400 cases"], method="bounded slope")
    path = tmp_path / "t.json"
    sha = cal.write_table(path, table)
    t, sha2 = cal.load(path)
    assert sha == sha2 and t.knots == [tuple(k) for k in knots] and t.name == "test-map"


def test_a_held_case_is_fitted_for_the_probability_it_is_read_as():
    # cases held halfway toward 0.5 and always right at raw 0.9: the map must go further (to 1) for p to come near
    data = [(0.9, True)] * 200 + [(0.1, False)] * 200
    plain = cal.fit_bounded(data, prior=1.0)
    held = cal.fit_bounded(data, prior=1.0, hold=[0.5] * len(data))
    assert cal.interpolate(held, 0.9) >= cal.interpolate(plain, 0.9) - 1e-6
    assert cal.interpolate(held, 0.9) > 0.95 and cal.interpolate(held, 0.1) < 0.05
    for loss in ("brier", "log"):
        k = cal.fit_bounded(_calibrated(), loss=loss, hold=[1.0] * len(_calibrated()))
        assert k == cal.fit_bounded(_calibrated(), loss=loss)
