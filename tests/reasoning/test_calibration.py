"""Calibration as data: every family's table loads and validates, its map is monotone, every calibrated answer
names its table by its sha256 and keeps its raw score, and the development fitter (evals/confidence/fit.py)
reads a row's raw score from its ledger and re-applies the later stages to a refitted probability."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from audiomind import calibration as shared
from audiomind.language.analysis import analyse
from audiomind.reasoning import calibration
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_calibrate", ROOT / "evals" / "confidence" / "fit.py")
fitter = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fitter)


@pytest.mark.parametrize("method", [None, "transcript_match", "count_events", "tag_category", "step:sum", "guess"])
def test_the_shipped_tables_are_valid_monotone_and_named_by_their_hash(method):
    data = calibration._path(method)
    t, sha = calibration.table(method)
    assert sha == hashlib.sha256(data.read_bytes()).hexdigest()
    xs = [x / 20 for x in range(21)]
    ps = [calibration.calibrate(x, method) for x in xs]
    assert ps == sorted(ps) and all(0.0 <= p <= 1.0 for p in ps)
    assert calibration.label(method) == f"calibration {t.name}@{sha[:12]}"


def test_a_calibrated_answer_keeps_its_raw_score_and_names_the_table():
    facts = Facts(duration_s=3.0, transcript=TranscriptFact(text="The meeting is on Tuesday.", evidence_ids=["e1"]))
    a = analyse("On which day is the meeting?", ["Monday", "Tuesday", "Friday"], [])
    d = decide_from(facts, a)
    assert d.choice_index == 1 and d.raw_confidence is not None and d.method == "transcript_match"
    assert d.confidence == pytest.approx(calibration.calibrate(d.raw_confidence, d.method), abs=1e-3)
    assert calibration.label(d.method) in d.confidence_reason and f"raw {d.raw_confidence:.3f}" in d.confidence_reason
    assert f"raw {d.raw_confidence:.3f}" in d.confidence_reason
    row = {"steps": [s.model_dump() for s in d.confidence_steps], "n_choices": 3}
    assert fitter.raw_of(row) == d.raw_confidence


def test_the_families_and_the_tables_they_read():
    assert [calibration.family(m) for m in ("transcript_match", "tag_category", "step:sum", "guess", "count_events")] \
        == ["said", "tag", "step", "guess", "measure"]
    for m in ("transcript_match", "tag_category", "step:sum", "guess", "count_events"):
        own = f"answer_{calibration.family(m)}"
        assert calibration._path(m) == (shared.path_of(own) if own in shared.TABLES else calibration.DATA)


def test_the_fitter_re_applies_the_later_stages_to_a_refitted_probability():
    facts = Facts(duration_s=3.0, transcript=TranscriptFact(text="The meeting is on Tuesday.", evidence_ids=["e1"]))
    d = decide_from(facts, analyse("On which day is the meeting?", ["Monday", "Tuesday", "Friday"], []))
    row = {"steps": [s.model_dump() for s in d.confidence_steps], "n_choices": 3}
    cal = next(s for s in d.confidence_steps if s.stage == "calibration")
    assert fitter.after(row, cal.output) == pytest.approx(d.confidence, abs=2e-3)  # the same table: the same number
    shrink = {"stage": "competence", "op": "shrink", "input": 0.9, "output": 0.6, "space": "calibrated"}
    cap = {"stage": "tool_failure", "op": "cap", "input": 0.6, "output": 0.6, "space": "calibrated"}
    row = {"n_choices": 4, "steps": [{"stage": "calibration", "op": "map", "input": 0.8, "output": 0.9}, shrink, cap]}
    # the shrink kept (0.6 - 0.25) / (0.9 - 0.25) of the part above chance; a cap that did not lower stays inert
    assert fitter.after(row, 0.5) == pytest.approx(0.25 + 0.25 * 0.35 / 0.65)
    assert fitter.after(row, 0.2) == 0.2  # at or below chance: unchanged
    low_cap = dict(cap, input=0.9, output=0.6)
    row["steps"][2] = low_cap
    assert fitter.after(row, 0.99) <= 0.6
    pairs = [(0.95, True)] * 9 + [(0.95, False)] + [(0.35, True)] * 8 + [(0.35, False)] * 2
    assert fitter.ece(pairs) == pytest.approx(0.5 * 0.05 + 0.5 * 0.45)  # underconfidence counts too
    assert fitter.summary(pairs)["confident_right"] == "9/10"
