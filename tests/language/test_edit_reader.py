"""The rule edit reader against golden readings (tests/data/readers/edit.jsonl: text -> expected EditSpec
operations). The held-out rows are the decompositions of every edit instruction of evals/judges/heldout*.py
and of tests/judges/test_instruction.py as the reader read them at 2b5afd9 (before EditSpec), with the legacy
(operation, added, removed) kept exactly; the newcomer rows are the five misreadings issue 22 reports.
edit_blind.jsonl holds wordings written before the reader was changed (scored, not tuned on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audiomind.judges.instruction import read_edit_for_judge, read_instruction
from audiomind.language.edit import EditSpec, matches, read_edit

DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
ROWS = [json.loads(line) for line in (DATA / "edit.jsonl").read_text().splitlines() if line.strip()]
BLIND = [json.loads(line) for line in (DATA / "edit_blind.jsonl").read_text().splitlines() if line.strip()]
# share of the blind wordings read as intended: the old reader (2b5afd9) read 10 of 17, the new one 11 of 17
# before it was changed after seeing them; this pins that it does not drop
BLIND_MIN_RIGHT = 11


def _ops(spec: EditSpec) -> list[tuple]:
    return [(o.op, o.sound, o.replacement, o.position.relation, o.position.reference) for o in spec.operations]


@pytest.mark.parametrize("row", [r for r in ROWS if not r.get("known_miss")], ids=lambda r: r["text"][:60])
def test_golden_edit_readings(row):
    spec = read_edit(row["text"])
    assert matches(row["operations"], spec.operations), _ops(spec)
    if "legacy" in row:  # the judge's older hand-off is unchanged
        assert read_instruction(row["text"]) == (tuple(row["legacy"]) if row["legacy"] else None)


def test_known_misses_are_named_not_guessed():
    for row in (r for r in ROWS if r.get("known_miss")):
        spec, why = read_edit_for_judge(row["text"])
        if not matches(row["operations"], spec.operations):
            assert why is not None and not spec.operations, (row["text"], _ops(spec))


def test_the_five_newcomer_wordings_read_as_intended():
    spec = read_edit("Please lose the applause and add a bell")
    assert [(o.op, o.sound) for o in spec.operations] == [("delete", "the applause"), ("add", "a bell")]
    assert spec.unaccounted == [] and spec.abstain_reason() is None
    spec = read_edit("Have the siren be replaced by a whistle")
    assert [(o.op, o.sound, o.replacement) for o in spec.operations] == [("replace", "the siren", "a whistle")]
    assert _ops(read_edit("Bin the hiss")) == [("delete", "the hiss", None, "anywhere", None)]
    assert _ops(read_edit("Overdub a choir")) == [("add", "a choir", None, "anywhere", None)]
    spec = read_edit("Let a dog bark at the end")
    assert _ops(spec) == [("add", "a dog barking", None, "end", None)] and spec.unaccounted == []


def test_a_compound_instruction_reads_as_its_operations_and_the_legacy_form_keeps_them_all():
    spec = read_edit("Take away the traffic noise, then add gentle rain.")
    assert [o.op for o in spec.operations] == ["delete", "add"]
    assert read_instruction("Take away the traffic noise, then add gentle rain.") == (
        "replace", ["gentle rain"], ["the traffic noise"])
    # a pronoun in the second clause is the sound of the first, not a second removal
    assert read_instruction("I don't want the shamisen in there, take it out.") == ("delete", [], ["the shamisen"])
    spec = read_edit("Remove the music but leave the speech untouched.")
    assert spec.keep == ["the speech"] and [o.op for o in spec.operations] == ["delete"]


def test_what_the_reading_did_not_understand_is_named_and_the_judge_abstains():
    spec, why = read_edit_for_judge("Make the hum quieter and add a bell")
    assert [(o.op, o.sound) for o in spec.operations] == [("add", "a bell")]
    assert spec.unaccounted == ["hum", "quieter"] and why is not None and "'quieter'" in why
    spec, why = read_edit_for_judge("Make it louder.")
    assert spec.operations == [] and why is not None and "no add, delete or replace" in why
    spec, why = read_edit_for_judge("Kill the hum.")
    assert why is None and spec.understood


def test_the_blind_wordings_do_not_drop_below_the_recorded_share():
    right = [r["text"] for r in BLIND if matches(r["operations"], read_edit(r["text"]).operations)]
    assert len(right) >= BLIND_MIN_RIGHT, right


def test_a_place_said_as_a_time_and_a_background_reference():
    spec = read_edit("Add a beep at 3 seconds.")
    assert spec.operations[0].position.relation == "time" and spec.operations[0].position.time_s == 3.0
    spec = read_edit("Layer crickets under the conversation and cut the dog.")
    assert spec.operations[0].position.reference == "the conversation"
    from audiomind.judges.instruction import split_position

    # the judge's position checks keep their older view: no reference under a background, no time check
    assert split_position("crickets under the conversation")[1].reference is None
    assert split_position("a beep at 3 seconds") == ("a beep at 3 seconds", None)


def test_the_phrase_tables_are_data():
    from audiomind.language.edit import phrases

    t = phrases()
    assert {"delete_verbs", "add_verbs", "replace_verbs", "passive_to_active"} <= set(t)
    assert "bin" in t["delete_verbs"] and "overdub" in t["add_verbs"]
