"""Typed readings of rubric items: `RubricCheck`, a discriminated union of the checks a rubric item can be.

A rubric instruction ("A dog barks twice, then a man says 'hello'") is read into atomic items; each item's
check is one of: a sound present or absent, speech present or absent, the order of two events, a count, words
said, a property of a speaker (gender, speaking rate), a loudness trend, a music tempo, or `unverifiable` (named,
p = 0.5, never a confident verdict). The rule reader is `audiomind.language.rubric_items.rule_decompose` (its
patterns are data/rubric_items.toml, its word tables data/rubric_phrases.json; the judges call it through
`audiomind.judges.rubric.decompose` with their knowledge of sounds); `read_rubric` gives its items as typed
checks with the words of the instruction the reading accounted for and the content words it did not. The verifier reads the typed check: a
check that does not validate is unverifiable, with the reason.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

_DATA = Path(__file__).resolve().parent / "data"


class Locator(BaseModel):
    """One event of an order check: a sound by its phrase, or speech (its words, or the n-th speaker)."""

    kind: Literal["sound", "speech"]
    phrase: str | None = None
    words: str | None = None
    nth: int = 0


class SoundPresent(BaseModel):
    kind: Literal["sound"] = "sound"
    phrase: str


class SoundAbsent(BaseModel):
    kind: Literal["absent"] = "absent"
    phrase: str


class SpeechPresent(BaseModel):
    kind: Literal["speech_present"] = "speech_present"


class NoSpeech(BaseModel):
    kind: Literal["no_speech"] = "no_speech"


class Order(BaseModel):
    """`first` happens before `second`."""

    kind: Literal["order"] = "order"
    first: Locator
    second: Locator


class Count(BaseModel):
    kind: Literal["count"] = "count"
    phrase: str
    n: int = Field(ge=0)


class WordsSaid(BaseModel):
    kind: Literal["words"] = "words"
    words: str


class SpeakerGender(BaseModel):
    """A speaker property: the voice saying `words` (or the `nth` speaker) is of this gender."""

    kind: Literal["gender"] = "gender"
    gender: Literal["female", "male"]
    words: str | None = None
    nth: int = 0


class SpeechRate(BaseModel):
    kind: Literal["rate"] = "rate"
    rate: Literal["fast", "slow"]


class Tempo(BaseModel):
    kind: Literal["tempo"] = "tempo"
    tempo: Literal["fast", "slow"]


class Loudness(BaseModel):
    """A level relation over time: the audio gets louder (increasing) or quieter (decreasing)."""

    kind: Literal["loudness"] = "loudness"
    trend: Literal["increasing", "decreasing"]


class Unverifiable(BaseModel):
    """A requirement no check can be read for: named, p = 0.5, not scored."""

    kind: Literal["unverifiable"] = "unverifiable"
    why: str = "unsupported"
    unread: list[str] = Field(default_factory=list, description="the words that could not be read")


RubricCheck = Annotated[SoundPresent | SoundAbsent | SpeechPresent | NoSpeech | Order | Count | WordsSaid | SpeakerGender | SpeechRate | Tempo | Loudness | Unverifiable, Field(discriminator="kind")]
CHECK_ADAPTER: TypeAdapter[Any] = TypeAdapter(RubricCheck)


def as_check(check: dict[str, Any] | None) -> Any:
    """The typed check of a rule item's check dict; a missing or malformed one is `Unverifiable` with the
    reason (never an error, never a confident verdict)."""
    if not check:
        return Unverifiable(why="no check was read for this item")
    try:
        return CHECK_ADAPTER.validate_python(check)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ()))
        return Unverifiable(why=f"the check could not be read ({where}: {first.get('msg', 'invalid')})")


class RubricReadItem(BaseModel):
    question: str
    evidence: str = Field("", description="the words of the instruction it comes from")
    check: RubricCheck


class RubricReading(BaseModel):
    """A rubric instruction read into typed checks, with the words accounted for and those not."""

    text: str
    items: list[RubricReadItem] = Field(default_factory=list)
    accounted: list[str] = Field(default_factory=list)
    unaccounted: list[str] = Field(default_factory=list)
    reader: str = "rules"

    def abstain_reason(self) -> str | None:
        """Why the reading cannot stand for the whole instruction (None when it can)."""
        if not any(it.check.kind != "unverifiable" for it in self.items):
            return f"no verifiable requirement could be read from '{self.text}'"
        if self.unaccounted:
            return f"the reading did not account for: {', '.join(repr(w) for w in self.unaccounted)}"
        return None


@functools.lru_cache(maxsize=1)
def phrases() -> dict[str, Any]:
    """The rubric reader's phrase tables (data/rubric_phrases.json)."""
    return json.loads((_DATA / "rubric_phrases.json").read_text())


def words_rx(name: str) -> str:
    """A table of words as one alternation; 'whisper*' stands for the word and its endings (whispers, ...)."""
    items = sorted(phrases()[name], key=len, reverse=True)
    return "|".join(re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w).replace(r"\ ", r"\s+")
                    for w in items)


def _tokens(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", s.lower())


