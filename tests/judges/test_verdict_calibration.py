"""The judges' verdict calibration: one mechanism with the answer step's (audiomind.calibration), a bounded-slope
table per judge fitted on the judge development sets with their choice made leaving one set out
(evals/judges/calibrate_judges.py), abstentions kept at 0.5 and never decisive, and a judge's verdict that names
its table and its raw score."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path

import pytest

from audiomind import calibration
from audiomind.judges.rubric import force

REPO = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fitter = _load("_calibrate_judges", REPO / "evals" / "judges" / "calibrate_judges.py")
answer_fitter = _load("_fit_answers", REPO / "evals" / "confidence" / "fit.py")


def test_the_answer_steps_fitter_uses_the_shared_fit():
    # one implementation: evals/confidence/fit.py fits the answer step's tables with audiomind.calibration's
    # bounded-slope fit, chosen by the same leave-one-set-out search the judges use
    assert answer_fitter.shared is calibration
    rows = [{"set": f"s{i % 3}", "correct": i % 4 != 0, "n_choices": 4,
             "steps": [{"stage": "calibration", "op": "map", "input": 0.5 + (i % 5) / 10, "output": 0.5}]}
            for i in range(30)]
    knots = answer_fitter.fit_rows(rows, {"max_slope": 1.5, "prior": 3.0}, "fit")
    assert knots == calibration.fit_bounded([(0.5 + (i % 5) / 10, float(i % 4 != 0)) for i in range(30)],
                                            max_slope=1.5, prior=3.0, hold=[1.0] * 30, toward=[0.25] * 30)


def test_the_rule_readers_questions_name_their_check_kind():
    q = {"Is the sound of 'a dog barking' present?": "sound", "Is the sound of 'rain' absent?": "absent",
         "Does dog barks occur exactly 3 times?": "count", "Does bell occur exactly 1 time?": "count",
         "Is there speech in the audio?": "speech_present", "Is speaker 2 female?": "gender",
         "Is 'good morning' said by a male voice?": "gender", "Is the speaker male?": "gender",
         "Does the speech contain the words 'good morning'?": "words", "Does 'a' happen before 'b'?": "order",
         "Does the speech sound angry?": "other", "Is it nice?": "other"}
    assert {k: fitter.kind_of_question(k) for k in q} == q


def _rows():
    return fitter.load_rows()


def test_the_rows_hold_every_development_set_and_name_their_source():
    rubric, edit = _rows()
    data = json.loads(fitter.ROWS.read_text())
    sets = {r.set for r in rubric}
    assert {f"v{i}" for i in range(1, 15)} - sets <= {"v1", "v2"} and "v14" in sets
    assert all(f"{s} rubric" in data["source"] for s in sets)
    for r in rubric:  # an item is (kind, p, verified, weight); unverified items sit at p 0.5
        assert all((not v) or k != "" for k, _, v, _ in r.items)
        assert all(p == 0.5 for _, p, v, _ in r.items if not v)
    assert any(r.abstain for r in edit) is (any(r.raw == 0.5 for r in edit))


def test_a_held_out_set_never_moves_its_own_fit():
    rubric, edit = _rows()
    rubric = [r for r in rubric if r.set in ("v3", "v4", "v5")]
    edit = [r for r in edit if r.set in ("v3", "v4", "v5")]
    ps = fitter.loso("rubric", rubric, max_slope=2.5, prior=3.0)
    flipped = [r.model_copy(update={"label": not r.label}) if r.set == "v4" else r for r in rubric]
    assert fitter.loso("rubric", flipped, max_slope=2.5, prior=3.0)["v4"] == ps["v4"]
    assert fitter.loso("rubric", flipped, max_slope=2.5, prior=3.0)["v3"] != ps["v3"]
    pe = fitter.loso("edit", edit, max_slope=2.5, prior=3.0)
    flipped_e = [r.model_copy(update={"label": not r.label}) if r.set == "v5" else r for r in edit]
    assert fitter.loso("edit", flipped_e, max_slope=2.5, prior=3.0)["v5"] == pe["v5"]


def test_an_abstention_stays_half_and_is_never_decisive():
    c = calibration.apply("judge_edit", 0.97, abstain=True)
    assert c.p == 0.5 and c.abstained and "abstained" in c.note
    row = fitter.EditRow(set="v7", id="u", variant="real", raw=0.5, label=True)
    t, _ = calibration.load(calibration.path_of("judge_edit"))
    assert row.abstain and fitter.edit_p(row, t.knots) == 0.5
    assert fitter.figures("edit", [row], [0.5])["decisive_n"] == 0
    none = fitter.RubricRow(set="v7", id="n", label=True, score=0.5, items=[("other", 0.5, False, 1.0)])
    forces, _ = force.load_forces()
    assert none.abstain and fitter.rubric_p(none, forces, t.knots) == 0.5
    raw = calibration.apply(None, 0.42)
    assert raw.p == 0.42 and raw.note.startswith("uncalibrated")


def _slopes(knots):
    return [(p1 - p0) / (x1 - x0) for (x0, p0), (x1, p1) in itertools.pairwise(knots)]


def test_the_shipped_tables_are_bounded_and_the_saved_figures_reproduce():
    saved = json.loads(fitter.OUT.read_text())
    rubric, edit = _rows()
    for judge, rows in (("rubric", rubric), ("edit", edit)):
        entry = saved["judges"][judge]
        t, sha = calibration.load(calibration.path_of(fitter.USE[judge]))
        assert entry["shipped_table"] == f"{t.name}@{sha[:12]}"
        ps = [calibration.interpolate(t.knots, x / 20) for x in range(21)]
        assert ps == sorted(ps) and all(0.0 <= p <= 1.0 for p in ps)
        assert max(_slopes(t.knots)) <= entry["chosen"]["max_slope"] + 0.01  # never a switch
        assert sorted(f.split(":")[0] for f in t.fitted_on) == sorted({r.set for r in rows if not r.abstain})
        # the leave-one-set-out figures at the chosen grid point, recomputed (the grid itself: the slow test)
        some = {"v4", "v14"}
        after = fitter.loso(judge, rows, **entry["chosen"], only=some)
        bk = fitter.before_knots(judge)
        for s, figs in entry["by_set"].items():
            if s not in some:
                continue
            held = [r for r in rows if r.set == s]
            assert fitter.figures(judge, held, after[s]) == figs["after"]
            assert fitter.figures(judge, held, [fitter.before_p(judge, r, bk) for r in held]) == figs["before"]
            assert figs["after"]["accuracy"] == figs["before"]["accuracy"]  # the verdicts are taken on raw


@pytest.mark.slow
def test_the_saved_figures_reproduce_in_full():
    assert fitter.show() == json.loads(fitter.OUT.read_text()), "rerun `calibrate_judges.py show`"


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
