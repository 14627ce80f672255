"""Each check's development record in the evidence stage (audiomind.reasoning.records): the factor never raises
a claim, a check without a record keeps its construction reliability, the evidence step names the records it
read (name and sha256) and the trace audit finds a factor that is not theirs, and the fitter re-makes exactly
the raw score a real decision recorded."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from audiomind.language.analysis import analyse
from audiomind.reasoning import records
from audiomind.reasoning.answer import COVERAGE_CAP, decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact
from audiomind.reasoning.ledger import problems, recompute

ROOT = Path(__file__).resolve().parents[2]


def _fit_module():
    spec = importlib.util.spec_from_file_location("confidence_fit", ROOT / "evals" / "confidence" / "fit.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("right,n", [(0, 5), (3, 10), (10, 10), (52, 120)])
def test_the_factor_never_raises_a_claim_and_falls_with_the_record(right, n):
    f = records.record_factor(right, n, 0.8, 10.0)
    assert 0.0 < f <= 1.0
    assert records.record_factor(max(0, right - 1), n, 0.8, 10.0) <= f  # one fewer right never raises it
    assert records.record_factor(right, n, 0.8, 1e9) == pytest.approx(1.0)  # an overwhelming prior: the claim
    assert records.record_factor(0, 0, 0.8, 10.0) == 1.0


def test_a_check_without_a_record_keeps_its_claim():
    recs, _ = records.load()
    assert recs.factor("a_check_nobody_measured") == 1.0
    assert records.of("a_check_nobody_measured")[1] == "none"


def _decision():
    facts = Facts(duration_s=5.0, transcript=TranscriptFact(text="The meeting is on Tuesday.", evidence_ids=["e1"]))
    return decide_from(facts, analyse("On which day is the meeting?", ["Monday", "Tuesday", "Friday"], []))


def test_the_evidence_step_names_the_records_and_multiplies_by_the_checks_factor():
    d = _decision()
    ev = d.confidence_steps[0]
    recs, sha = records.load()
    check = ev.parameters.inputs["check"]
    assert ev.stage == "evidence" and ev.op == "product"
    assert (ev.parameters.table, ev.parameters.sha256) == (recs.name, sha)
    factor = recs.factor(str(check))
    assert ev.parameters.inputs["record_factor"] == factor and factor in (ev.parameters.factors or [])
    rec = recs.checks.get(str(check))
    assert ev.parameters.inputs["record"] == (f"{rec.right}/{rec.n}" if rec else "none")
    assert math.isclose(math.prod(ev.parameters.factors or []), ev.output, rel_tol=1e-12)
    assert problems(d.confidence_steps, d.confidence) == []
    if factor < 1.0:
        assert "development record" in ev.reason


def test_the_audit_finds_a_record_factor_that_is_not_the_named_records():
    d = _decision()
    ev = d.confidence_steps[0]
    p = ev.parameters
    forged_factor = 1.0 if p.inputs["record_factor"] != 1.0 else 0.5
    factors = [forged_factor if f == p.inputs["record_factor"] else f for f in (p.factors or [])]
    forged = p.model_copy(update={"factors": factors, "inputs": {**p.inputs, "record_factor": forged_factor}})
    out = math.prod(factors)
    steps = [ev.model_copy(update={"parameters": forged, "output": out})]
    assert any("names records" in m and "not" in m for m in problems(steps, recompute(steps)))


@pytest.fixture
def poor_record(tmp_path, monkeypatch):
    """Records in which the checks of what was said were right 2 times in 10 at a claim of 0.8."""
    poor = records.CheckRecord(n=10, right=2, claimed=0.8)
    recs = records.CheckRecords(name="test-poor", method="test", prior_strength=5.0,
                                checks={"transcript_match": poor, "transcript_complement": poor})
    path = tmp_path / "check_records.json"
    records.write(path, recs)
    monkeypatch.setattr(records, "DATA", path)
    return recs


def _row(d) -> dict:
    return {"n_choices": 3, "correct": True, "steps": [
        {"stage": s.stage, "space": s.space, "op": s.op, "input": s.input, "output": s.output,
         "inputs": s.parameters.inputs, "parameters": s.parameters.model_dump(exclude_none=True, exclude={"inputs"})}
        for s in d.confidence_steps]}


NEGATED = ("I liked the soup but the bread was stale.", "What did the speaker not like?",
           ["the soup", "the bread", "the wine"])


def test_a_poor_record_lowers_the_claim_and_the_coverage_cap_alike(poor_record):
    factor = poor_record.factor("transcript_match")
    assert factor == pytest.approx(((2 + 5 * 0.8) / 15) / 0.8)
    d = _decision()
    ev = d.confidence_steps[0]
    assert ev.parameters.inputs["record"] == "2/10" and ev.parameters.table == "test-poor"
    assert "development record 2/10" in ev.reason
    heard, question, choices = NEGATED
    capped = decide_from(Facts(duration_s=5.0, transcript=TranscriptFact(text=heard, evidence_ids=["e1"])),
                         analyse(question, choices, []))
    assert capped.method in poor_record.checks
    cap = next(s for s in capped.confidence_steps if s.stage == "coverage")
    assert cap.parameters.bound == pytest.approx(COVERAGE_CAP * factor)  # the same share of the claim
    assert problems(capped.confidence_steps, capped.confidence) == []


@pytest.mark.parametrize("which", ["plain", "capped"])
def test_the_fitter_remakes_the_raw_score_the_decision_recorded(poor_record, which):
    fit = _fit_module()
    if which == "plain":
        d = _decision()
    else:
        heard, question, choices = NEGATED
        d = decide_from(Facts(duration_s=5.0, transcript=TranscriptFact(text=heard, evidence_ids=["e1"])),
                        analyse(question, choices, []))
    row = _row(d)
    assert fit.claim_of(row)[0] in poor_record.checks
    remade = fit.raw_with(row, poor_record.checks, poor_record.prior_strength)
    assert remade == pytest.approx(fit.raw_of(row), abs=1e-9)
    # without the record the claim stands, higher
    assert fit.raw_with(row, {}, 1.0) > remade
