"""A literal match of what was heard accounts only for the words of the question the evidence holds.

A check of what was said finds a choice in the transcript; a question can pick among the things said by
something the transcript does not hold ('the piece that was cancelled', 'the word the second voice
replaced'). Such a word, named in the reason, keeps the answer from being confident. Words the evidence does
account for (heard in another form or as a synonym, a person who speaks, the kind of thing the choices are)
leave a match its confidence. Every case is of my own wording; WordNet is the Debian package the install
script puts in place.
"""

from __future__ import annotations

import pytest

from audiomind.language.analysis import analyse
from audiomind.language.question import read_question
from audiomind.language.wordnet import wordnet_dir
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact
from audiomind.reasoning.grounding import ungrounded, unheard_in_choice

pytestmark = pytest.mark.skipif(wordnet_dir() is None, reason="WordNet (Debian wordnet-base) is not installed")


@pytest.mark.parametrize("question,choices,heard,left", [
    ("What does the quieter voice in the background say?", ["hello there", "good night", "see you"],
     "Please take your seats, the show begins.", ["quieter", "background"]),
    ("Which word did the second voice replace?", ["cat", "dog", "bird"], "the cat sat on the mat",
     ["second", "replace"]),
    ("Which piece was cancelled?", ["a violin sonata", "a piano trio", "a cello suite"],
     "Tonight's concert opens with a violin sonata.", ["cancelled"]),
    # accounted for: the kind of thing the choices are, a person, a light verb, another form, a synonym
    ("Which city is the train going to?", ["Paris", "London", "Rome"], "The next train to Paris leaves at nine.", []),
    ("What day is the dentist appointment?", ["Monday", "Tuesday", "Friday"], "Your appointment is on Tuesday.",
     []),  # 'dentist' is a person (who may speak), 'day' the kind of thing Tuesday is
    ("Where is the caller travelling?", ["Paris", "London", "Rome"], "I am travelling to Rome next week.", []),
    ("According to the instruction, what needs to be brought?", ["an umbrella", "a coat", "a hat"],
     "Please bring your umbrella to the meeting.", []),
    ("How much do the tickets cost?", ["5 dollars", "10 dollars", "20 dollars"], "Tickets are ten dollars each.", []),
])
def test_the_words_a_literal_match_does_not_account_for(question, choices, heard, left):
    assert ungrounded(read_question(question, choices), [heard]) == left


def _decide(heard: str, question: str, choices: list[str]):
    return decide_from(Facts(duration_s=4.0, transcript=TranscriptFact(text=heard, evidence_ids=["e1"])),
                       analyse(question, choices, []))


@pytest.mark.parametrize("heard,question,choices,word", [
    ("Tonight's concert opens with a violin sonata.", "Which piece was cancelled?",
     ["a violin sonata", "a piano trio", "a cello suite"], "cancelled"),
    ("Please hand me the blue folder on the desk.", "Which folder did the speaker misplace yesterday?",
     ["the blue folder", "the red folder", "the green folder"], "misplace"),
])
def test_a_condition_the_transcript_does_not_hold_is_no_confident_answer(heard, question, choices, word):
    d = _decide(heard, question, choices)
    assert d.confidence < 0.7, (d.choice_index, d.confidence, d.confidence_reason)
    assert repr(word) in d.confidence_reason


@pytest.mark.parametrize("heard,question,choices,right", [
    ("The next train to Paris leaves at nine from platform four.", "Which city is the train going to?",
     ["Paris", "London", "Rome"], 0),
    ("Please bring your umbrella to the meeting tomorrow.", "According to the instruction, what needs to be brought?",
     ["a coat", "an umbrella", "a hat"], 1),
])
def test_a_question_the_evidence_accounts_for_keeps_its_match(heard, question, choices, right):
    d = _decide(heard, question, choices)
    assert d.choice_index == right and d.confidence >= 0.7, (d.confidence, d.confidence_reason)


def test_the_chosen_choice_words_not_heard():
    missing, n = unheard_in_choice("offering to carry the suitcase", "What is the woman doing when she says this?",
                                   ["Would it be all right if I left my suitcase here?"])
    assert missing == ["offering", "carry"] and n == 3
    missing, n = unheard_in_choice("the red bicycle", "Which bicycle did he buy?", ["I bought the red bicycle."])
    assert missing == [] and n == 1  # "bicycle" is the question's


def test_a_choice_mostly_unheard_is_no_confident_answer():
    """Of my own wording: the act the choice names ('offering to carry') was never said; the suitcase was."""
    d = _decide("Would it be all right if I left my suitcase here for an hour?",
                "What is the woman doing when she says this?",
                ["offering to carry the suitcase", "asking for permission", "complaining about the hotel",
                 "giving directions"])
    assert d.confidence < 0.7, (d.choice_index, d.confidence, d.confidence_reason)
