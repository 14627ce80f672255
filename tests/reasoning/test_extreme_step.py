"""The extreme step: the greatest or least of spoken values ('the cheapest', 'the oldest', 'the warmest'), as a
value among numeric choices or as the choice the value was said of. Choices said with no value of their own,
or two on one value, are no ranking: the answer is then an admitted guess that names the step."""

from __future__ import annotations

import pytest

from audiomind.language.analysis import analyse
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Facts, TranscriptFact


def _decide(heard: str, question: str, choices: list[str]):
    return decide_from(Facts(duration_s=5.0, transcript=TranscriptFact(text=heard, evidence_ids=["e1"])),
                       analyse(question, choices, []))


@pytest.mark.parametrize("heard,question,choices,right", [
    (("The red shirt costs twenty dollars, the blue shirt costs fifteen dollars and the green shirt costs thirty "
      "dollars."), "Which shirt is the cheapest?", ["the red shirt", "the blue shirt", "the green shirt"], 1),
    ("Anna is twelve years old, Ben is nine and Carla is fourteen.", "Who is the oldest?", ["Anna", "Ben", "Carla"], 2),
    ("The tea is three dollars, the coffee four dollars and the juice five dollars.",
     "How much is the most expensive drink?", ["3 dollars", "4 dollars", "5 dollars", "12 dollars"], 2),
    ("In Rome it is twenty degrees, in Oslo five degrees and in Cairo thirty degrees.",
     "Which city is the warmest today?", ["Rome", "Oslo", "Cairo"], 2),
])
def test_the_extreme_of_spoken_values(heard, question, choices, right):
    d = _decide(heard, question, choices)
    assert d.choice_index == right and "the step extreme decides" in d.confidence_reason, d.confidence_reason


def test_choices_without_their_own_values_are_no_ranking():
    d = _decide("The shop sells shirts for twenty dollars and hats for ten dollars.", "Which scarf is the cheapest?",
                ["the wool scarf", "the silk scarf", "the cotton scarf"])
    assert d.confidence is not None and d.confidence < 0.5 and "extreme" in d.confidence_reason
