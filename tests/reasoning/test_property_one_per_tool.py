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
