"""The rule question reader against golden readings (tests/data/readers/question.jsonl): the steps a
question asks for, whether it is about what is said, and the words it did not account for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audiomind.language.frames import QuestionFrame
from audiomind.language.question import RuleQuestionReader, read_question

GOLDEN = Path(__file__).parents[1] / "data" / "readers" / "question.jsonl"
ROWS = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("row", ROWS, ids=[r["text"][:50] for r in ROWS])
def test_rule_reader_reads_the_golden_question(row):
    frame = RuleQuestionReader().read(row["text"], row["choices"])
    got = [s.kind for s in frame.steps]
    assert got == [s["kind"] for s in row["steps"]], frame.summary()
    for want, step in zip(row["steps"], frame.steps):
        for key in ("amount", "direction"):
            if key in want:
                assert getattr(step, key) == want[key], (key, frame.summary())
    if "about_speech" in row:
        assert frame.about_speech == row["about_speech"], frame.summary()
    assert frame.unaccounted == row["unaccounted"], frame.summary()


def test_a_frame_is_a_typed_round_trippable_record_with_a_json_schema():
    frame = read_question(ROWS[0]["text"], ROWS[0]["choices"])
    again = QuestionFrame.model_validate_json(frame.model_dump_json())
    assert again == frame and again.steps[0].executable
    schema = QuestionFrame.model_json_schema()
    assert "steps" in schema["properties"] and "DerivationStep" in json.dumps(schema)


def test_every_word_of_the_question_has_a_role():
    frame = read_question("If one person leaves, how many people are still waiting?", ["1", "2", "3", "4"])
    roles = {w.word: w.role for w in frame.words}
    assert roles["leaves"] == "operator" and roles["still"] == "operator" and roles["if"] == "operator"
    assert roles["people"] == "topic" and roles["how"] == "wh"
