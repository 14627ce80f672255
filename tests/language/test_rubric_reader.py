"""The rule rubric reader against golden readings (tests/data/readers/rubric.jsonl: text -> the typed checks
of its kept items). The held-out rows are the decompositions of every rubric wording (positives and hard
negatives) of evals/judges/heldout*.py as the reader read them at 2b5afd9; the hand rows say what a reading
should be, one of them a known miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audiomind.judges.rubric.decompose import RubricItem, read_rubric
from audiomind.language.rubric import CHECK_ADAPTER, Count, Order, Unverifiable, as_check

ROWS = [json.loads(line) for line in (Path(__file__).resolve().parents[1] / "data" / "readers" / "rubric.jsonl")
        .read_text().splitlines() if line.strip()]
HAND = [r for r in ROWS if r["set"] == "hand" and not r.get("known_miss")]
HELDOUT = [r for r in ROWS if r["set"] != "hand"]


def _check(row):
    got = read_rubric(row["text"])
    assert [it.check.model_dump() for it in got.items] == row["checks"], row["text"]
    if "questions" in row:
        assert [it.question for it in got.items] == row["questions"]
    return got


@pytest.mark.parametrize("row", HAND + HELDOUT[:12], ids=lambda r: r["text"][:50])
def test_golden_rubric_readings(row):
    _check(row)


@pytest.mark.slow
def test_every_held_out_rubric_wording_reads_as_recorded():
    wrong = []
    for row in HELDOUT:
        got = read_rubric(row["text"])
        if [it.check.model_dump() for it in got.items] != row["checks"]:
            wrong.append(row["text"])
    assert not wrong, wrong[:5]


def test_every_golden_check_validates_as_a_rubric_check():
    for row in ROWS:
        for c in row["checks"]:
            CHECK_ADAPTER.validate_python(c)


def test_a_malformed_or_missing_check_is_unverifiable_and_named_never_a_verdict():
    assert isinstance(as_check({"kind": "count", "phrase": "dog"}), Unverifiable)  # no n
    bad = as_check({"kind": "gender", "gender": "robot"})
    assert isinstance(bad, Unverifiable) and "gender" in bad.why
    assert isinstance(as_check({}), Unverifiable)
    assert isinstance(as_check({"kind": "count", "phrase": "dog", "n": 2}), Count)
    item = RubricItem(id=0, question="q", check={"kind": "order", "first": {"kind": "sound", "phrase": "a"}})
    assert isinstance(item.reading, Unverifiable)  # the verifier reads this and returns p = 0.5, not scored
    ok = RubricItem(id=1, question="q", check={"kind": "order", "first": {"kind": "sound", "phrase": "a"},
                                               "second": {"kind": "speech", "words": "hi"}})
    assert isinstance(ok.reading, Order)


def test_an_unreadable_instruction_is_one_named_unverifiable_item_and_the_reading_says_so():
    got = read_rubric("It feels warm and familiar.")
    assert [it.check.kind for it in got.items] == ["unverifiable"]
    assert got.unaccounted == ["familiar"]  # (a clause the reader skipped is named)
    assert got.abstain_reason() is not None and "no verifiable requirement" in got.abstain_reason()


def test_unaccounted_words_are_named():
    got = read_rubric("A dog barks twice, then a man says 'hello'.")
    assert got.unaccounted == [] and got.abstain_reason() is None
