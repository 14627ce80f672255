"""Calibration as data: the table loads and validates, its map is monotone, every calibrated answer names the
table by its sha256 and keeps its raw score, and the fitter (evals/calibrate.py) pools violators into a
monotone map pulled toward the identity by its prior."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from audiomind.language.analysis import analyse
from audiomind.reasoning import calibration
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_calibrate", ROOT / "evals" / "calibrate.py")
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
    assert calibration.label(d.method) != calibration.label()  # what was said has a table of its own
    assert fitter.RAW.search(d.confidence_reason).group(1) == f"{d.raw_confidence:.3f}"


def test_the_fit_is_monotone_and_thin_data_moves_it_little():
    # over-confident at 0.9 (half right), right at 0.3: isotonic fit pools the violation
    data = [(0.9, i % 2 == 0) for i in range(10)] + [(0.3, True)] * 4
    knots = fitter.fit(data, prior=4.0)
    ps = [p for _, p in knots]
    assert ps == sorted(ps) and knots[0][0] == 0.0 and knots[-1][0] == 1.0
    strong = fitter.fit(data, prior=0.0)
    weak = fitter.fit(data[:2], prior=50.0)
    assert max(abs(p - x) for x, p in weak if 0.05 <= x <= 0.95) < 0.05  # two answers barely move a strong prior
    assert fitter.shared.interpolate(strong, 0.9) < 0.9  # the violation pulls the confident end down
