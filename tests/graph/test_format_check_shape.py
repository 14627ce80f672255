"""The format check reads an answer's SHAPE only (issue 33, point 6), as Audio-Mind's checker does: a choice
copied verbatim, a choice letter, or a JSON reply whose `answer` is one of those. Prose is never read, even
where exactly one choice occurs in it: a negation, a refusal, "A or B" fail the check, and the graph re-asks
(bounded by format_retries) or ends the item without an answer. The front ends' reply reader is shape-only
too: it gives the `answer` field of a reply that IS one JSON object, and otherwise the reply as written."""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from audiomind.backends.frontends.replies import json_reply, parse_answer_reply
from audiomind.graph.context import Context
from audiomind.graph.nodes import RETRY_CHOICE, final_answer, format_check, parse_choice
from audiomind.graph.routing import after_format_check
from audiomind.state import Artifact, EvidenceState, FinalAnswer, FormatFeedback, Question, RunInfo

SPEAKERS = ["1", "2", "3", "4"]
ANIMALS = ["Dog", "Cat", "Cow"]
A0 = Artifact(id="a0", path="/tmp/a0.wav", sha256="0" * 64, duration_s=4.0, sample_rate=16000, channels=1)


# ---------------------------------------------------------------- what is an answer


@pytest.mark.parametrize("answer,choices,index", [
    # (a) verbatim, case / spacing / punctuation aside
    ("3", SPEAKERS, 2), (" 3 ", SPEAKERS, 2), ("3.", SPEAKERS, 2), ("dog", ANIMALS, 0), ("**Cat**", ANIMALS, 1),
    ("  COW! ", ANIMALS, 2), ("open   grassland", ["Mountain Canyon", "Open Grassland"], 1),
    # (b) a choice letter, alone or with that same choice after it
    ("B", ANIMALS, 1), ("b", ANIMALS, 1), ("(B)", ANIMALS, 1), ("B.", ANIMALS, 1), ("B)", ANIMALS, 1),
    ("B:", ANIMALS, 1), ("B) Cat", ANIMALS, 1), ("(B) cat", ANIMALS, 1), ("B. Cat.", ANIMALS, 1), ("C", SPEAKERS, 2),
    ("AB", [f"option {i}" for i in range(30)], 27), ("AA. option 26", [f"option {i}" for i in range(30)], 26),
    # a verbatim choice wins over a letter reading of the same text (the choice "B" is option A here)
    ("B", ["B", "A"], 0),
    # (c) the JSON reply, its answer (a) or (b)
    ('{"answer": "Cat", "rationale": "meows"}', ANIMALS, 1), ('{"answer": "C"}', ANIMALS, 2),
    ('{"answer": "(A) Dog"}', ANIMALS, 0), ('```json\n{"answer": "2"}\n```', SPEAKERS, 1),
    ("{'answer': 'cow',}", ANIMALS, 2), ('{"final_answer": "Dog"}', ANIMALS, 0), ('{"answer": 3}', SPEAKERS, 2),
    ('<think>two or three?</think>{"answer": "2"}', SPEAKERS, 1),
])
def test_answer_shapes_are_accepted(answer, choices, index):
    assert parse_choice(answer, choices) == (index, "ok")


@pytest.mark.parametrize("answer,choices", [
    # negations and refusals that name exactly one choice: the substring reading picked it
    ("It is definitely not 3 speakers; listening again, there are two.", SPEAKERS),
    ("I cannot tell whether it is a dog", ANIMALS),
    ("Not A", ANIMALS), ("not dog", ANIMALS), ("neither B nor C", ANIMALS), ("A or B", ANIMALS),
    ("Dog or cat", ANIMALS), ("The answer is B", ANIMALS), ("Answer: Cat", ANIMALS), ("I think it's a cat.", ANIMALS),
    ("3 speakers", SPEAKERS), ("There are 3.", SPEAKERS), ("maybe four or five", SPEAKERS),
    # a letter with a different choice after it, or beyond the last choice
    ("A) Cat", ANIMALS), ("D", ANIMALS), ("(E)", ANIMALS), ("AB", ["yes", "no"]), ("AE", [f"o{i}" for i in range(30)]),
    # a JSON object inside prose is not a JSON reply; a JSON reply whose answer is prose is prose
    ('I would say {"answer": "Cat"} but I am not sure', ANIMALS),
    ('{"answer": "not a cat, so a dog"}', ANIMALS), ('{"answer": ["Dog", "Cat"]}', ANIMALS),
    ('```json\n{"answer": "Dog"}\n```\nAlthough it could be a cat.', ANIMALS),
])
def test_prose_is_never_read(answer, choices):
    idx, message = parse_choice(answer, choices)
    assert idx is None and message == "the answer is not one of the choices", (answer, message)


@pytest.mark.parametrize("answer,message", [
    ("", "the answer is empty"), ("  ...  ", "the answer is empty"), ('{"answer": ""}', "the answer is empty"),
    ('{"rationale": "it barks"}', 'the JSON reply has no "answer" field'),
])
def test_empty_and_fieldless_answers_say_so(answer, message):
    assert parse_choice(answer, ANIMALS) == (None, message)


def test_choices_alike_once_normalised_need_the_exact_text_or_a_letter():
    choices = ["3", "3.", "4"]
    assert parse_choice("3.", choices) == (1, "ok") and parse_choice("3", choices) == (0, "ok")
    assert parse_choice(" 3 .", choices) == (None, "the answer matches 2 choices alike; answer with the letter of one")
    assert parse_choice("B", choices) == (1, "ok")


# ---------------------------------------------------------------- the front ends' reply reader


def test_reply_reader_takes_the_answer_field_of_a_json_reply_only():
    r = parse_answer_reply('{"answer": "Cat", "rationale": "ev_0123456789 meows"}')
    assert r == {"text": "Cat", "rationale": "ev_0123456789 meows", "cited_evidence_ids": ["ev_0123456789"]}
    assert parse_answer_reply('```json\n{"answer": "B", "rationale": "r"}\n```')["text"] == "B"
    assert parse_answer_reply('<think>hmm</think>\n{"answer": "B"}')["text"] == "B"
    assert parse_answer_reply('{\u201canswer\u201d: \u201cB\u201d}')["text"] == "B"  # smart quotes
    assert parse_answer_reply('{"rationale": "x"}')["text"] == ""  # a JSON reply without an answer field
    # not a JSON reply: the reply as written (think blocks aside), for the format check to judge
    prose = 'Listening again: {"answer": "Cat"}, though I am not sure it is not a dog.'
    assert parse_answer_reply(prose) == {"text": prose, "rationale": "", "cited_evidence_ids": []}
    assert parse_answer_reply("<think>a dog?</think> Cow ")["text"] == "Cow"
    assert parse_answer_reply("It is definitely not 3 speakers.")["text"] == "It is definitely not 3 speakers."
    two = '{"answer": "A"} {"answer": "B"}'
    assert json_reply(two) is None and parse_answer_reply(two)["text"] == two
    assert json_reply("[1, 2]") is None and json_reply('{"a"}') is None and json_reply("{oops}") is None


# ---------------------------------------------------------------- the nodes and the routing


def _state(text: str, choices: list[str], feedback: list[FormatFeedback] | None = None) -> EvidenceState:
    return EvidenceState(run=RunInfo(run_id="t"), artifacts=[A0],
                         question=Question(text="How many speakers are there?", choices=choices, audio_path=A0.path),
                         final_answer=FinalAnswer(text=text), format_feedback=feedback or [])


def _runtime(retries: int = 2, mode: str = "agent", frontend=None) -> Runtime:
    from audiomind.config import AgentConfig
    return Runtime(context=Context(config=AgentConfig(format_retries=retries, mode=mode), frontend=frontend,
                                   executor=None))


def test_format_check_node_records_no_choice_for_prose_and_routing_reasks_then_stops():
    prose = "It is definitely not 3 speakers; listening again, there are two."
    st = _state(prose, SPEAKERS)
    upd = format_check(st, _runtime())
    (fb,) = upd["format_feedback"]
    assert not fb.ok and fb.answer_text == prose and "final_answer" not in upd  # no choice is recorded
    st1 = st.model_copy(update={"format_feedback": [fb]})
    assert after_format_check(st1, _runtime(retries=2)) == "final_answer"
    assert after_format_check(st1, _runtime(retries=0)) == "finish"
    assert after_format_check(st1, _runtime(retries=2, mode="direct")) == "finish"  # direct: one answer call
    st3 = st.model_copy(update={"format_feedback": [fb, fb, fb]})
    assert after_format_check(st3, _runtime(retries=2)) == "finish"  # the bound: 1 answer + 2 re-asks
    ok = format_check(_state("B", SPEAKERS), _runtime())
    assert ok["format_feedback"][0].ok and ok["final_answer"].choice == "2" and ok["final_answer"].choice_index == 1


class _Recorder:
    name = "recorder"

    def __init__(self):
        self.requests = []

    def answer(self, request):
        from audiomind.backends.base import AnswerResult
        self.requests.append(request)
        return AnswerResult(text="2")


def test_the_reask_quotes_the_prose_and_asks_for_the_shape():
    prose = "I cannot tell whether it is a dog"
    fb = FormatFeedback(attempt=1, ok=False, message="the answer is not one of the choices", answer_text=prose)
    fe = _Recorder()
    final_answer(_state(prose, ANIMALS, [fb]), _runtime(frontend=fe))
    (req,) = fe.requests
    assert req.format_feedback and prose in req.format_feedback and RETRY_CHOICE in req.format_feedback
    assert "not one of the choices" in req.format_feedback and req.format_feedback in req.prompt
    assert '"answer": "exactly one of the choices, copied verbatim"' in req.prompt  # the reply format is unchanged
