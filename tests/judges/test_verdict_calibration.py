"""The judges' verdict calibration: one mechanism with the answer step's (audiomind.calibration), a table per judge
fitted on development sets only (evals/judges/calibrate_judges.py), abstentions kept at 0.5 and never decisive,
and a judge's verdict that names its table and its raw score."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from audiomind import calibration

REPO = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fitter = _load("_calibrate_judges", REPO / "evals" / "judges" / "calibrate_judges.py")
answer_fitter = _load("_calibrate_answers", REPO / "evals" / "calibrate.py")


def test_the_answer_steps_fitter_uses_the_shared_fit():
    # one implementation: evals/calibrate.py fits the answer step's table with audiomind.calibration.fit
    assert answer_fitter.fit is calibration.fit


def _geo(ps: list[float]) -> float:
    scored = [min(0.98, max(0.02, p)) for p in ps if p != 0.5]
    return round(math.exp(sum(math.log(p) for p in scored) / len(scored)), 4) if scored else 0.5


def _rubric(rid: str, aligned: bool, ps: list[float]) -> dict:
    return {"id": rid, "aligned": aligned, "rubric_score": _geo(ps), "items": [{"q": f"q{i}", "p": p}
                                                                              for i, p in enumerate(ps)]}


def _fixture(d: Path, held_out_edit_raw: float = 0.9) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "judges_heldout_v4_offline.json").write_text(json.dumps({
        "v4_rubric_rows": [_rubric("a", True, [0.98, 0.9]), _rubric("b", False, [0.98, 0.1]),
                           _rubric("c", False, [0.5, 0.5])],  # c: no verifiable item, an abstention
        "v4_edit_rows": [{"id": "x:real", "effectiveness": 0.4}, {"id": "x:noop", "effectiveness": 0.2},
                         {"id": "y:real", "effectiveness": 0.8}, {"id": "y:wrong_sound", "effectiveness": 0.6},
                         {"id": "z:partial", "effectiveness": 0.5}]}))  # z: exactly 0.5, an abstention
    (d / "judges_heldout_v7_offline.json").write_text(json.dumps({"v7_heldout_rows": {
        "rubric": [_rubric("h", True, [0.98, 0.98])],
        "edit": [{"base": "w", "variant": "real", "kind": "add", "effectiveness": held_out_edit_raw},
                 {"base": "w", "variant": "noop", "kind": "add", "effectiveness": 0.1}]}}))
    return d


def test_the_fitter_reads_the_saved_rows(tmp_path):
    d = _fixture(tmp_path / "r")
    edit = fitter.rows_of("edit", d)
    assert [(r.set, r.id, r.raw, r.label, r.abstain) for r in edit] == [
        ("v4", "x:real", 0.4, True, False), ("v4", "x:noop", 0.2, False, False), ("v4", "y:real", 0.8, True, False),
        ("v4", "y:wrong_sound", 0.6, False, False), ("v4", "z:partial", 0.5, False, True),
        ("v7", "w:real", 0.9, True, False), ("v7", "w:noop", 0.1, False, False)]
    rubric = {r.id: r for r in fitter.rows_of("rubric", d)}
    assert rubric["a"].raw == pytest.approx(math.sqrt(0.98 * 0.9), abs=1e-9) and rubric["a"].label
    assert rubric["c"].abstain and rubric["c"].raw == 0.5 and not rubric["b"].abstain
    assert [fitter.is_dev(r) for r in edit] == [True] * 5 + [False] * 2


def test_the_fit_uses_development_rows_only_and_pools_violators(tmp_path):
    rows = fitter.rows_of("edit", _fixture(tmp_path / "a"))
    table, info = fitter.fit_table("edit", rows, prior=0.0)
    # dev, abstention left out: 0.2 no, 0.4 yes, 0.6 no, 0.8 yes -> 0.4 and 0.6 pool to 0.5 at their middle
    assert table.knots == [(0.0, 0.0), (0.2, 0.0), (0.5, 0.5), (0.8, 1.0), (1.0, 1.0)]
    assert info["dev_rows"] == 4 and table.fitted_on == ["v4: 4 verdicts"]
    other, _ = fitter.fit_table("edit", fitter.rows_of("edit", _fixture(tmp_path / "b", held_out_edit_raw=0.3)),
                                prior=0.0)
    assert other.knots == table.knots  # the held-out rows never move the table
    # the figures by hand, after: p = 0, 0.3333 (interpolated: 0.4 -> 1/3), 1, 0.6667, 0.5 (abstained)
    f = fitter.figures("edit", [r for r in rows if fitter.is_dev(r)], table.knots)
    assert (f["n"], f["abstentions"], f["decisive"], f["decisive_correct"]) == (5, 1, 2, 2)
    assert f["decisive_share"] == 40.0 and f["decisive_accuracy"] == 100.0
    assert f["accuracy"] == 60.0  # the verdict on raw (effective at >= 0.6): right on x:noop, y:real, z
    before = fitter.figures("edit", [r for r in rows if fitter.is_dev(r)], None)
    assert before["decisive"] == 2 and before["accuracy"] == f["accuracy"]  # raw 0.2 and 0.8; same verdicts


def test_the_prior_is_chosen_on_development_sets_alone(tmp_path):
    rows = [fitter.Row(set=s, id=f"{s}{i}", raw=x, label=y) for s in ("v3", "v4")
            for i, (x, y) in enumerate([(0.1, False), (0.3, False), (0.7, True), (0.9, True), (0.6, False)])]
    prior, losses = fitter.choose_prior(rows)
    assert prior in fitter.PRIORS and set(losses) == {f"{p:g}" for p in fitter.PRIORS}
    assert losses[f"{prior:g}"] == min(losses.values())


def test_an_abstention_stays_half_and_is_never_decisive():
    c = calibration.apply("judge_edit", 0.97, abstain=True)
    assert c.p == 0.5 and c.abstained and "abstained" in c.note
    rows = [fitter.Row(set="v7", id="u", raw=0.5, label=True, abstain=True)]
    t, _ = calibration.load(calibration.path_of("judge_edit"))
    assert fitter.figures("edit", rows, t.knots)["decisive"] == 0
    raw = calibration.apply(None, 0.42)
    assert raw.p == 0.42 and raw.note.startswith("uncalibrated")


def test_the_shipped_tables_are_fitted_on_development_sets_and_the_saved_figures_reproduce():
    for use in ("judge_edit", "judge_rubric", "judge_aura"):
        t, _sha = calibration.load(calibration.path_of(use))
        ps = [calibration.interpolate(t.knots, x / 20) for x in range(21)]
        assert ps == sorted(ps) and all(0.0 <= p <= 1.0 for p in ps)
        assert all(f.split(":")[0] in fitter.DEV_SETS for f in t.fitted_on)
    saved = json.loads((REPO / "evals" / "judges" / "results" / "judge_calibration_offline.json").read_text())
    now = fitter.show()
    assert now == saved, "rerun `evals/judges/calibrate_judges.py show` after changing a table"
    for judge in ("rubric", "edit"):
        g = now["judges"][judge]["groups"]["held-out (v7-v13)"]
        # a monotone map loses ranking only by ties; the rubric judge's coverage stage also reorders verdicts by how
        # much of each rubric was verified, which may only help the ranking here, not cost it beyond ties
        assert g["after"]["roc_auc"] >= g["before"]["roc_auc"] - 0.01
        if judge == "edit":
            assert abs(g["after"]["roc_auc"] - g["before"]["roc_auc"]) <= 0.01
        assert g["after"]["accuracy"] == g["before"]["accuracy"]  # the verdicts are taken on the raw score


def test_the_answer_steps_table_is_one_of_the_uses():
    from audiomind.reasoning import calibration as answer

    assert calibration.path_of("answer") == answer.DATA
    assert answer.label() == calibration.label_of(answer.DATA)
    assert answer.calibrate(0.8) == calibration.interpolate(answer.table()[0].knots, 0.8)


@pytest.mark.slow
def test_an_edit_verdict_names_its_table_and_raw_score(edit_pairs, tmp_path):
    from audiomind.judges.edit import judge_edit

    p = edit_pairs["add"]
    r = judge_edit(p.original_path, p.edited_path, instruction=p.instruction, trace_dir=tmp_path / "tr")
    raw = r.effectiveness.score
    expected = calibration.apply("judge_edit", raw)
    assert r.p == expected.p and not expected.abstained
    label = calibration.label_of(calibration.path_of("judge_edit"))
    assert r.calibration == f"{label}: raw {raw:.3f}"
    trace = json.loads(Path(r.trace_path).read_text())
    assert f"p {r.p:.3f} ({label}: raw {raw:.3f})" in json.dumps(trace)
