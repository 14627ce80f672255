"""Free-form answers to audio questions, read for the AURA judge: whether a question asks yes or no, what an
answer says (its words, its content words, yes or no, the counts it gives), which antonym pair sets an answer
against its reference, and the rule rewrite of a question and its answer into one declarative sentence.

The judge (`audiomind.judges.aura`) scores readings; the words and patterns are the tables of
data/answers.toml.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from audiomind.language import text

DATA = Path(__file__).parent / "data" / "answers.toml"
_PART = re.compile(r"(?<!\?P)<(\w+)>")  # a list by name; not a named group (?P<name>...)
_DIGITS = re.compile(r"\b\d+\b")

Polarity = Literal["yes", "no"]


@lru_cache(maxsize=1)
def tables() -> dict:
    """The tables of data/answers.toml, with `patterns` compiled case-insensitive."""
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    raw["patterns"] = {k: re.compile(_PART.sub(lambda m: "|".join(raw[m.group(1)]), v), re.IGNORECASE)
                       for k, v in raw["patterns"].items()}
    return raw


def _pattern(name: str) -> re.Pattern[str]:
    return tables()["patterns"][name]


class AnswerReading(BaseModel):
    """What an answer (or a reference answer) says, as the AURA rule scorer compares it."""

    model_config = ConfigDict(frozen=True)

    text: str
    words: tuple[str, ...] = Field(description="its lower-cased words")
    content: tuple[str, ...] = Field(description="its words less the stop words of data/answers.toml, in order")
    polarity: Polarity | None = Field(None, description="yes or no, when the answer says one")
    numbers: tuple[int, ...] = Field((), description="the counts it gives, in digits or words, sorted, once each")


def words(s: str) -> list[str]:
    return text.words(s or "")


def polarity(s: str) -> Polarity | None:
    """'yes' or 'no' by the first word ('Yes, a dog barks', 'Nope', 'Not really'), else 'no' for a negation
    anywhere ('there is no dog', "it isn't music"), else None."""
    w = words(s)
    if not w:
        return None
    t = tables()
    if w[0] in t["yes_words"]:
        return "yes"
    if w[0] in t["no_words"] or (len(w) > 1 and w[0] in t["no_before_more"]):
        return "no"
    if _pattern("negation").search(s):
        return "no"
    return None


def numbers(s: str) -> set[int]:
    """The counts a text gives, in digits or words ('three', 'twice')."""
    out = {int(x) for x in _DIGITS.findall(s)}
    nums = tables()["numbers"]
    out |= {nums[w] for w in words(s) if w in nums}
    return out


@lru_cache(maxsize=2048)
def read_answer(s: str) -> AnswerReading:
    ws = words(s)
    stop = frozenset(tables()["stopwords"])
    return AnswerReading(text=s, words=tuple(ws), content=tuple(w for w in ws if w not in stop),
                         polarity=polarity(s), numbers=tuple(sorted(numbers(s))))


def is_yes_no_question(question: str) -> bool:
    """The question opens with an auxiliary ('Is there ...?', 'Did it stop?')."""
    return _pattern("yes_no_question").match(question) is not None


def contradicting_antonyms(reference: AnswerReading, response: AnswerReading) -> tuple[str, str] | None:
    """The first antonym pair (a, b) of which the reference says one and the response only the other."""
    ref, resp = set(reference.words), set(response.words)
    for a, b in tables()["antonyms"]:
        if (a in ref and b in resp and b not in ref) or (b in ref and a in resp and a not in ref):
            return a, b
    return None


def hypothesis(question: str, response: str) -> str:
    """Question + response -> one declarative sentence ('Is there music playing?' + 'No.' -> 'There is no music
    playing.'; 'What animal is making noise?' + 'A dog' -> 'A dog is making noise.')."""
    q = question.strip().rstrip("?").strip()
    r = response.strip().rstrip(".").strip()
    pol = polarity(r)
    n = len(words(r))
    m = _pattern("is_there").match(q)
    if m and pol:
        verb = m.group(1).lower()
        return f"There {verb} {'no ' if pol == 'no' else ''}{m.group(2)}."
    m = _pattern("is_the").match(q)
    if m and pol and n <= 2:
        return f"The {m.group(2)} {m.group(1).lower()}{' not' if pol == 'no' else ''} {m.group(3)}."
    if _pattern("has_verb").search(r) and n >= 3:
        return r + "."  # already a sentence
    m = _pattern("what_is").match(q)
    if m and n <= 6:
        return f"{r[0].upper() + r[1:]} {m.group(1).lower()} {m.group(2)}."
    if n >= 4:
        return r + "."
    return f"{r[0].upper() + r[1:] if r else r} ({q})."
