"""A choice's polarity (yes, no, not, never) is a claim about the clip, not words to hear: 'The clip does not
say' is no literal match of a transcript that says 'not', and a bare 'Yes' or 'No' matches nothing, however
often 'no' is said."""

from __future__ import annotations

from audiomind.language.analysis import analyse
from audiomind.reasoning.facts import Facts, TranscriptFact
from audiomind.reasoning.verifiers import run_verifiers

RAIN = "If it had rained, we would have stayed at home. It did not rain, so we went to the beach."


def _transcript_support(text: str, question: str, choices: list[str]) -> list[float]:
    facts = Facts(duration_s=5.0, transcript=TranscriptFact(text=text))
    results = [r for r in run_verifiers(facts, analyse(question, choices, [])) if r.name.startswith("transcript")]
    return [v.support for v in results[0].verdicts] if results else [0.0] * len(choices)


def test_hearing_not_is_no_evidence_that_the_clip_does_not_say():
    choices = ["No, they went to the beach", "Yes, after going to the beach", "Yes, because it rained",
               "The clip does not say"]
    supports = _transcript_support(RAIN, "Did they stay at home?", choices)
    assert supports[3] <= 0.0  # 'not' was said; that is no support for 'the clip does not say'
    assert supports[0] == max(supports) > 0  # the choice whose content words were all said


def test_a_bare_no_is_not_heard_in_a_no():
    supports = _transcript_support("No, no one came to the party, not even Sam.", "Did Sam come to the party?",
                                   ["Yes", "No"])
    assert supports == [0.0, 0.0]  # a truth value is no word to hear
