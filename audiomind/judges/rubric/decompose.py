"""Rubric decomposition and filtering by transparent rules: an instruction -> atomic yes/no items, each
with the words it comes from and (for the rule verifier) what to measure.

The reading itself is the reader package's (`audiomind.language.rubric_items`, its patterns and word lists in
audiomind/language/data/rubric_items.toml): clauses and their order, speech, sound events, counts, music tempo
and loudness trends. This module gives it the judges' knowledge of sounds (`JudgeSense`: AudioSet classes
through the sentence encoder, WordNet glosses and word classes, speech phrases) and keeps the judges' names
for its functions; no English is matched here.
"""

from __future__ import annotations

from audiomind.judges import evidence as ev
from audiomind.judges import lexicon
from audiomind.language import rubric as L
from audiomind.language import rubric_items as R
from audiomind.language.rubric_items import NUM_WORDS, NUMBERS, RubricItem, SoundSense, rule_filter

__all__ = [
    "NUMBERS",
    "NUM_WORDS",
    "SENSE",
    "JudgeSense",
    "RubricItem",
    "read_rubric",
    "rule_decompose",
    "rule_filter",
]


class JudgeSense:
    """The rubric reader's `SoundSense` from the judges' evidence layer and lexicon."""

    def names_sound_class(self, phrase: str) -> bool:
        return bool(ev.phrase_labels(phrase))

    def has_sound_gloss(self, phrase: str) -> bool:
        return ev.phrase_gloss(phrase) is not None

    def sounding_animal(self, phrase: str) -> bool:
        return ev.sounding_animal(phrase) is not None

    def is_speech(self, phrase: str) -> bool:
        return ev.is_speech_phrase(phrase)

    def has_speech_word(self, text: str) -> bool:
        return bool(ev.SPEECH_VERBS.search(text))

    def names_person(self, word: str) -> bool | None:
        return lexicon.names_person(word)

    def mostly_adjective(self, word: str) -> bool:
        return lexicon.mostly_adjective(word)

    def mostly_verb(self, word: str) -> bool:
        return lexicon.mostly_verb(word)

    def verb_form(self, word: str) -> bool:
        return lexicon.verb_form(word)


SENSE: SoundSense = JudgeSense()


def rule_decompose(instruction: str) -> list[RubricItem]:
    """Transparent rule decomposition of an instruction into verifiable items."""
    return R.rule_decompose(instruction, SENSE)


def read_rubric(text: str) -> L.RubricReading:
    """The rule reading of a rubric instruction: its kept items as typed checks, and the content words of
    the instruction that no item came from (a clause the reader skipped), in order."""
    return R.read_rubric(text, SENSE)
