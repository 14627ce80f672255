"""Properties one tool measures together (the envelope's onset and offset) give one verdict: a choice that
names both is supported only when both measured values agree with it. Alone, each supported two of four
choices and disagreed with the other, so a right answer never rose above chance (perception_v2's
envelope_shape items: 5 of 5 right, all at 0.25)."""

from __future__ import annotations

import pytest

from audiomind.language.analysis import analyse
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Facts, ValueFact
from audiomind.state import CONFIDENT_AT

CHOICES = ["it starts suddenly and dies away slowly", "it starts suddenly and stops dead",
           "it swells up slowly and stops dead", "it swells up slowly and dies away slowly"]


def _facts(onset: str, offset: str) -> Facts:
    return Facts(duration_s=5.0, values={
        "property:onset": ValueFact(name="property:onset", value=onset, evidence_ids=["e1"]),
        "property:offset": ValueFact(name="property:offset", value=offset, evidence_ids=["e1"])})


@pytest.mark.parametrize("onset,offset,expected", [("abrupt", "gradual", 0), ("abrupt", "abrupt", 1),
                                                   ("gradual", "abrupt", 2), ("gradual", "gradual", 3)])
def test_a_choice_naming_both_ends_is_decided_by_both(onset, offset, expected):
    d = decide_from(_facts(onset, offset), analyse("How does the note begin and end?", CHOICES, []))
    assert d.choice_index == expected, d.rationale
    assert d.confidence >= CONFIDENT_AT, d.confidence_reason
    assert "onset" in d.rationale and "offset" in d.rationale  # one verdict, both measurements in its reason


def test_a_question_about_one_end_reads_that_end_alone():
    d = decide_from(_facts("abrupt", "gradual"),
                    analyse("How does the note begin?", ["it starts suddenly", "it swells up slowly"], []))
    assert d.choice_index == 0, d.rationale


def test_choices_a_check_reads_as_one_value_are_a_coverage_gap():
    """Only the onset measured: two choices start suddenly and differ in how they end, which nothing measured.
    The check still picks the one choice that swells up, but the question tells the other two apart by what it
    does not measure, so the answer is no confident one and the gap is named (coverage, `fit`)."""
    onset_only = Facts(duration_s=5.0, values={
        "property:onset": ValueFact(name="property:onset", value="gradual", evidence_ids=["e1"])})
    choices = CHOICES[:3]
    d = decide_from(onset_only, analyse("How does the note begin and end?", choices, []))
    assert d.choice_index == 2 and d.method == "property_onset", d.rationale
    cap = next(s for s in d.confidence_steps if s.stage == "coverage")
    assert any(str(v).startswith("the choices") and "one value of what property_onset measures" in str(v)
               for v in cap.parameters.inputs.values()), cap.parameters.inputs
    assert d.confidence < CONFIDENT_AT, d.confidence_reason
    # each choice its own value: no such gap
    one_each = decide_from(onset_only, analyse("How does the note begin?",
                                               ["it starts suddenly", "it swells up slowly"], []))
    assert not any("one value of what" in str(v) for s in one_each.confidence_steps if s.stage == "coverage"
                   for v in s.parameters.inputs.values())
