"""The confidence ledger: every stage between the evidence and the printed confidence is one recorded step, and
re-applying the steps gives the printed number exactly, for every kind of decision (a check, an executed step,
a guess, a decision that left part of the question unaccounted for, a failed tool, a free-text question),
through the graph's tool-failure stage, and in the traces of real offline runs, which the trace audit
recomputes. A ledger that does not add up is found; a stage outside the six is refused."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from audiomind.audit.audit import Auditor
from audiomind.graph.nodes import TOOL_FAILURE_CONFIDENCE, answer_ledger, with_tool_failures
from audiomind.language.analysis import analyse
from audiomind.reasoning import calibration, records
from audiomind.reasoning.answer import COVERAGE_CAP, decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact
from audiomind.reasoning.ledger import STAGES, ConfidenceLedger, LedgerError, problems, recompute
from audiomind.state import ConfidenceStep, EvidenceState, FinalAnswer, Question, ToolCall, ToolCallStatus

# ---- the ledger itself --------------------------------------------------------------------------


def test_each_operation_is_recorded_with_its_input_output_and_space():
    led = ConfidenceLedger()
    led.product([0.95, 1.0, 1.0], stage="evidence", reason="r x f x s")
    led.multiply(0.6, stage="agreement", reason="two choices")
    led.cap(0.45, stage="coverage", reason="negated")
    led.clamp(0.05, 0.97, stage="coverage", reason="range", digits=3)
    t, sha = calibration.table()
    p = calibration.into(led, None)
    led.shrink(0.5, 0.25, stage="competence", reason="half familiar", digits=3)
    steps = led.steps
    assert [s.stage for s in steps] == ["evidence", "agreement", "coverage", "coverage", "calibration", "competence"]
    assert [s.space for s in steps] == ["raw"] * 4 + ["calibrated"] * 2
    assert steps[0].input is None and steps[0].output == 0.95
    assert all(b.input == a.output for a, b in itertools.pairwise(steps))
    assert steps[2].output == 0.45 and steps[3].output == 0.45
    assert steps[4].parameters.table == t.name and steps[4].parameters.sha256 == sha and p == steps[4].output
    assert p == round(calibration.calibrate(0.45), 3)
    assert steps[5].output == round(0.25 + (p - 0.25) * 0.5, 3)
    assert recompute(steps) == led.value and problems(steps, led.value) == []


def test_a_shrink_never_raises_and_a_cap_below_the_value_keeps_it():
    led = ConfidenceLedger()
    led.set(0.2, stage="evidence", reason="")
    assert led.shrink(0.0, 0.25, stage="competence", reason="", digits=3) == 0.2  # below chance: unchanged
    assert led.cap(0.45, stage="coverage", reason="") == 0.2
    with pytest.raises(LedgerError):
        ConfidenceLedger().cap(0.45, stage="coverage", reason="")  # nothing to cap


def test_a_stage_outside_the_six_is_refused():
    assert STAGES == ("evidence", "agreement", "coverage", "calibration", "competence", "tool_failure")
    led = ConfidenceLedger()
    led.set(0.9, stage="evidence", reason="")
    for stage in ("negated_question", "several_amounts", "clamp", "guess_cap", "reported"):
        with pytest.raises(LedgerError, match="unknown confidence stage"):
            led.cap(0.45, stage=stage, reason="a rule for one mechanism")
    assert len(led.steps) == 1


def test_problems_find_a_ledger_that_does_not_add_up():
    led = ConfidenceLedger()
    led.set(0.9, stage="evidence", reason="")
    led.cap(0.45, stage="coverage", reason="")
    steps = led.steps
    assert problems(steps, 0.45) == []
    assert any("prints 0.5" in m for m in problems(steps, 0.5))
    forged = [steps[0], steps[1].model_copy(update={"output": 0.6})]
    assert any("cap of 0.9 gives 0.45, not the recorded 0.6" in m for m in problems(forged, 0.6))
    broken = [steps[0], steps[1].model_copy(update={"input": 0.7})]
    assert any("not from the 0.9 before it" in m for m in problems(broken, 0.45))
    assert problems([], 0.3) == ["the answer has a confidence but no ledger"]
    assert problems([], None) == [] and problems(steps, None)


def test_a_map_step_whose_knots_are_not_its_named_table_is_found():
    led = ConfidenceLedger()
    led.set(0.6, stage="evidence", reason="")
    t, sha = calibration.table()
    led.map([(0.0, 0.0), (1.0, 1.0)], table=t.name, sha256=sha, stage="calibration", reason="", digits=3)
    assert any("knots are not that table's" in m for m in problems(led.steps, led.value))
    refit = [led.steps[0], led.steps[1].model_copy(update={"parameters": led.steps[1].parameters.model_copy(
        update={"sha256": "0" * 64})})]
    assert problems(refit, led.value) == []  # a table since refitted cannot be checked, the arithmetic can


# ---- every kind of decision ---------------------------------------------------------------------


def _facts(heard: str | None, failed: list[str] | None = None) -> Facts:
    t = TranscriptFact(text=heard, evidence_ids=["e1"]) if heard else None
    return Facts(duration_s=5.0, transcript=t, failed=failed or [])


DECISIONS = {  # name: (facts, question, choices, a stage the decision must have)
    "check": (_facts("The meeting is on Tuesday."), "On which day is the meeting?", ["Monday", "Tuesday", "Friday"],
              "evidence"),
    "step": (_facts("On my three quizzes this month I got sixty, seventy and eighty."), "What was her average mark?",
             ["60", "70", "210", "80"], "evidence"),
    "step_not_taken": (_facts("I paid twelve dollars for lunch."), "What did the speaker pay for lunch on average?",
                       ["6 dollars", "12 dollars", "24 dollars"], "calibration"),
    "guess": (_facts(None), "Which animal can be heard?", ["A dog", "A cat", "A cow"], "calibration"),
    "negated": (_facts("I liked the soup but the bread was stale."), "What did the speaker not like?",
                ["the soup", "the bread", "the wine"], "coverage"),
    "beyond_literal": (_facts("Tonight's concert opens with a violin sonata."), "Which piece was cancelled?",
                       ["a violin sonata", "a piano trio", "a cello suite"], "coverage"),
    "failed_tool": (_facts("The train to Boston leaves at nine.", ["tagging timeout"]),
                    "Where does the train go?", ["Boston", "Denver", "Miami"], "evidence"),
    "no_choices": (_facts("Hello there."), "What is said?", [], "evidence"),
}


@pytest.mark.parametrize("name", sorted(DECISIONS))
def test_every_decision_recomputes_from_its_ledger_exactly(name):
    facts, question, choices, stage = DECISIONS[name]
    d = decide_from(facts, analyse(question, choices, []))
    steps = d.confidence_steps
    assert stage in [s.stage for s in steps], [(s.stage, s.output) for s in steps]
    assert recompute(steps) == d.confidence, [(s.stage, s.output) for s in steps]
    assert problems(steps, d.confidence) == []
    spaces = [s.space for s in steps]
    assert spaces == sorted(spaces, key=lambda sp: sp == "calibrated")  # raw stages, then calibrated ones
    assert sum(s.op == "map" for s in steps) == (1 if d.choice_index is not None else 0)
    assert len({s.stage for s in steps}) == len(steps)  # each stage applied once
    if d.raw_confidence is not None:
        assert next(s.input for s in steps if s.op == "map") == d.raw_confidence


@pytest.fixture
def no_records(tmp_path, monkeypatch):
    """Every check at its construction reliability (the measured records change with each refit; a test of
    another stage must not depend on them)."""
    path = tmp_path / "check_records.json"
    path.write_text(json.dumps({"name": "none", "method": "test: no records", "prior_strength": 1.0, "checks": {}}))
    monkeypatch.setattr(records, "DATA", path)


def test_a_coverage_cap_that_lowers_is_named_in_the_reason_and_the_ledger(no_records):
    for name, gap in (("negated", "operation"), ("beyond_literal", "unread")):
        facts, question, choices, stage = DECISIONS[name]
        d = decide_from(facts, analyse(question, choices, []))
        cap = next(s for s in d.confidence_steps if s.stage == stage)
        assert cap.op == "cap" and cap.parameters.bound == COVERAGE_CAP and cap.space == "raw"
        assert cap.output < cap.input and cap.reason in d.confidence_reason
        assert any(k.startswith(gap) for k in cap.parameters.inputs), cap.parameters.inputs


def test_a_failed_tool_is_one_step_in_one_place():
    """The answer step names the failed tool in its reason; the graph's final-answer node applies the one
    tool_failure stage, for the cascade as for every other front end."""
    facts, question, choices, _ = DECISIONS["failed_tool"]
    d = decide_from(facts, analyse(question, choices, []))
    assert "tagging timeout" in d.confidence_reason
    assert not any(s.stage == "tool_failure" for s in d.confidence_steps)
    ans = FinalAnswer(text="Boston", confidence=d.confidence, confidence_steps=d.confidence_steps,
                      confidence_reason=d.confidence_reason)
    capped = with_tool_failures(ans, _failed_state())
    assert [s.stage for s in capped.confidence_steps].count("tool_failure") == 1
    assert capped.confidence == min(d.confidence, TOOL_FAILURE_CONFIDENCE) == recompute(capped.confidence_steps)


# ---- the graph's tool-failure cap and a model's reported confidence ------------------------------


def _failed_state() -> EvidenceState:
    return EvidenceState(question=Question(text="q", audio_path="/x.wav"), tool_calls=[
        ToolCall(step=0, tool="tagging", status=ToolCallStatus.timeout, error="tagging exceeded its 60 s timeout")])


def test_the_graph_cap_continues_the_answer_ledger():
    led = ConfidenceLedger()
    led.set(0.9, stage="evidence", reason="")
    calibration.into(led, None)
    ans = FinalAnswer(text="x", confidence=led.value, confidence_steps=led.steps)
    capped = with_tool_failures(ans, _failed_state())
    assert capped.confidence_steps[:2] == led.steps and capped.confidence_steps[-1].stage == "tool_failure"
    assert capped.confidence_steps[-1].space == "calibrated"
    assert capped.confidence == min(led.value, TOOL_FAILURE_CONFIDENCE) == recompute(capped.confidence_steps)


def test_a_model_confidence_starts_its_ledger_as_calibrated_evidence():
    sure = FinalAnswer(text="yes", confidence=0.95, confidence_source="logprobs")
    steps = answer_ledger(sure).steps
    assert [(s.stage, s.op, s.output, s.space) for s in steps] == [("evidence", "set", 0.95, "calibrated")]
    assert "logprobs" in steps[0].reason
    capped = with_tool_failures(sure, _failed_state())
    assert [s.stage for s in capped.confidence_steps] == ["evidence", "tool_failure"]
    assert recompute(capped.confidence_steps) == capped.confidence == TOOL_FAILURE_CONFIDENCE
    assert answer_ledger(FinalAnswer(text="yes")).steps == []


# ---- real offline runs, audited ----------------------------------------------------------------


@pytest.fixture(scope="module")
def offline_runs(tmp_path_factory):
    from audiomind import synth
    from audiomind.api import AudioMind
    from audiomind.resources import examples_dir

    d = tmp_path_factory.mktemp("ledger")
    agent = AudioMind(trace_dir=d / "traces")
    asked = [(examples_dir() / q["audio"], q["question"], q["choices"])
             for q in map(json.loads, (examples_dir() / "questions.jsonl").read_text().splitlines())]
    asked += [
        (synth.beeps(3, d / "three.wav", freq_hz=660.0), "How many beeps do you hear?", ["2", "3", "4", "5"]),
        (synth.speech("The parcel will arrive on Thursday afternoon.", d / "parcel.wav", voice="awb"),
         "When will the parcel not arrive?", ["Thursday afternoon", "Monday morning", "Friday night"]),
    ]
    return [agent.ask(audio, q, choices) for audio, q, choices in asked]


def test_every_offline_trace_recomputes_its_printed_confidence(offline_runs):
    auditor = Auditor()
    for r in offline_runs:
        data = json.loads(Path(r.trace_path).read_text())
        fa = data["final_answer"]
        steps = [ConfidenceStep.model_validate(s) for s in fa["confidence_steps"]]
        assert steps and recompute(steps) == fa["confidence"] == r.confidence, (r.state.question.text, fa["confidence_steps"])
        assert not [f for f in auditor.audit_file(r.trace_path).findings if f.rule == "confidence-ledger"]
