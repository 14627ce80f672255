"""The rule question reader: a question and its choices -> a `QuestionFrame`, from phrase tables.

The tables live in data/question.toml (function words, speech verbs, the phrases of each derivation step,
the context a step's phrase needs, the operator words a reading must account for). This module holds only the
matching: a question is lower-cased and split into words; a phrase matches a run of words; every word gets a
role, and an operator word no step consumed is named as not understood.

`Reader` is the seam: anything with `name` and `read(question, choices) -> QuestionFrame` (the LLM reader in
audiomind.language.llm_reader fills the same frame through its JSON schema).
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from audiomind.language.frames import EXECUTABLE_STEPS, DerivationStep, QuestionFrame, ReadWord
from audiomind.language.numbers import DAYS, number_in

DATA = Path(__file__).parent / "data" / "question.toml"
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


class Reader(Protocol):
    name: str

    def read(self, question: str, choices: list[str]) -> QuestionFrame: ...


class StepRow(BaseModel):
    kind: str
    phrases: list[tuple[str, ...]]
    requires_any: list[tuple[str, ...]] = []
    requires_choices: str | None = None
    requires_how_many: bool = False
    at_start: bool = False  # the phrase opens the question
    requires_clause: bool = False  # a comma follows the phrase (a clause before the question proper)


class QuestionTables(BaseModel):
    function_words: frozenset[str]
    wh_words: frozenset[str]
    speech_verbs: frozenset[str]
    content_verbs: frozenset[str]
    operator_words: frozenset[str]
    steps: list[StepRow]
    later: list[tuple[str, ...]]
    earlier: list[tuple[str, ...]]
    adding: list[tuple[str, ...]]
    contexts: dict[str, list[tuple[str, ...]]] = {}
    greatest: list[tuple[str, ...]] = []
    least: list[tuple[str, ...]] = []


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _phrase(p: str) -> tuple[str, ...]:
    """A table phrase as words; '*' stays a word (any one word of the question)."""
    return tuple(w for tok in p.split() for w in (["*"] if tok == "*" else words_of(tok)))


@lru_cache(maxsize=1)
def tables() -> QuestionTables:
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    ctx = {k: [_phrase(p) for p in v] for k, v in raw.get("contexts", {}).items()}
    steps = [StepRow(kind=r["kind"], phrases=[_phrase(p) for p in r["phrases"]],
                     requires_any=ctx[r["requires_any"]] if r.get("requires_any") else [],
                     requires_choices=r.get("requires_choices"), requires_how_many=r.get("requires_how_many", False),
                     at_start=r.get("at_start", False), requires_clause=r.get("requires_clause", False))
             for r in raw["steps"]]
    return QuestionTables(
        contexts=ctx,
        function_words=frozenset(raw["function_words"].split()), wh_words=frozenset(raw["wh_words"].split()),
        speech_verbs=frozenset(raw["speech_verbs"].split()) | frozenset(raw["content_verbs"].split()),
        content_verbs=frozenset(raw["content_verbs"].split()), operator_words=frozenset(raw["operator_words"].split()),
        steps=steps, later=[_phrase(p) for p in raw["later"]], earlier=[_phrase(p) for p in raw["earlier"]],
        adding=[_phrase(p) for p in raw["adding"]],
        greatest=[_phrase(p) for p in raw.get("extreme", {}).get("greatest", [])],
        least=[_phrase(p) for p in raw.get("extreme", {}).get("least", [])])


def find(ws: list[str], phrase: tuple[str, ...]) -> list[int]:
    """Start positions of `phrase` in the word list ('*' in a phrase is any one word)."""
    n = len(phrase)
    return [i for i in range(len(ws) - n + 1)
            if all(p == "*" or p == w for p, w in zip(phrase, ws[i:i + n]))] if n else []


def _any(ws: list[str], phrases: list[tuple[str, ...]]) -> bool:
    return any(find(ws, p) for p in phrases)


def _kin_choices(choices: list[str]) -> bool:
    """Most choices name a relation between people ('her father-in-law', 'his uncle')."""
    kin = {p[0] for p in tables().contexts.get("kin", [])}
    return len(choices) >= 2 and sum(any(w in kin for w in words_of(c)) for c in choices) >= max(2, len(choices) - 1)


def _number_choices(choices: list[str]) -> bool:
    """Most choices are amounts ('80', '7 kilometres', 'fifteen degrees')."""
    return len(choices) >= 2 and sum(number_in(w) is not None for c in choices
                                     for w in words_of(c)[:2]) >= max(2, len(choices) - 1)


def _day_choices(choices: list[str]) -> bool:
    return len(choices) >= 2 and sum(any(d in words_of(c) for d in DAYS) for c in choices) >= max(2, len(choices) - 1)


def _change(ws: list[str]) -> tuple[float | None, str | None]:
    """The change a remainder question states, and its direction: 'one person leaves' (1, fewer), 'eats two
    of them' (2, fewer), 'another guest arrives' (1, more). The amount is the number next to the verb."""
    t = tables()
    row = next(r for r in t.steps if r.kind == "remainder")
    verbs = {p[0] for p in row.requires_any}
    adding = {p[0] for p in t.adding}
    at_verbs = sorted((i for i, w in enumerate(ws) if w in verbs), key=lambda i: ws[i] in ("left", "remain"))
    for i in at_verbs:
        direction = "more" if ws[i] in adding else "fewer"
        for j in [*range(max(0, i - 4), i), *range(i + 1, min(len(ws), i + 4))]:
            n = number_in(ws[j])
            if n is not None and not (j > 0 and ws[j - 1] == "how"):
                return float(n), direction
        if any(ws[j] in ("a", "an", "another", "someone", "somebody") for j in range(max(0, i - 3), i)):
            return 1.0, direction
    return None, None


def _day_amount(ws: list[str]) -> float:
    """How many days a day offset moves: 'by two days', 'a day later', 'a week later'; one when unsaid."""
    for i, w in enumerate(ws):
        if w in ("day", "days", "week", "weeks") and i > 0:
            n = 1 if ws[i - 1] in ("a", "an", "one") else number_in(ws[i - 1])
            if n is not None:
                return float(n * (7 if w.startswith("week") else 1))
    return 1.0


def _step(kind: str, cue: str, ws: list[str]) -> DerivationStep:
    t = tables()
    amount, direction = None, None
    if kind == "day_offset":
        amount = _day_amount(ws)
        direction = "earlier" if _any(ws, t.earlier) and not _any(ws, t.later) else "later"
    elif kind == "remainder":
        amount, direction = _change(ws)
    elif kind == "extreme":  # 'more': the greatest spoken value; 'fewer': the least
        direction = "fewer" if _any(list(cue.split()), t.least) else "more"
    return DerivationStep(kind=kind, cue=cue, amount=amount, direction=direction,
                          executable=kind in EXECUTABLE_STEPS)


def word_roles(ws: list[str], used: set[int], unknown: frozenset[str] | set[str] = frozenset()) -> list[ReadWord]:
    """Every word's part in a reading: the words of a step read (`used`, by position) are operators; a word a
    reader could not place (`unknown`) or an operator word no step consumed is not understood; the rest are
    question words, function words, words about speech, or the topic."""
    t = tables()
    read = []
    for i, w in enumerate(ws):
        if i in used:
            role = "operator"
        elif w in unknown:
            role = "unaccounted"
        elif w in t.wh_words:
            role = "wh"
        elif w in t.operator_words:
            role = "unaccounted"
        elif w in t.function_words:
            role = "function"
        elif w in t.speech_verbs:
            role = "speech"
        else:
            role = "topic"
        read.append(ReadWord(word=w, role=role))
    return read


class RuleQuestionReader:
    """Reads a question with the phrase tables of data/question.toml."""

    name = "rules"

    def read(self, question: str, choices: list[str]) -> QuestionFrame:
        t = tables()
        ws = words_of(question)
        used: set[int] = set()
        steps: list[DerivationStep] = []
        for row in t.steps:
            hits = [(i, p) for p in row.phrases for i in find(ws, p) if i == 0 or not row.at_start]
            if not hits or (row.requires_clause and "," not in question):
                continue
            if row.kind == "hypothetical" and steps:
                for i, p in hits:  # a hypothetical framing a step the reader knows ('if one person leaves, ...')
                    used.update(range(i, i + len(p)))  # is part of that step
                continue
            if row.requires_any and not _any(ws, row.requires_any):
                continue
            if row.requires_how_many and not (_any(ws, [("how", "many"), ("how", "much")])):
                continue
            if row.requires_choices == "days" and not _day_choices(choices):
                continue
            if row.requires_choices == "kin" and not _kin_choices(choices):
                continue
            if row.requires_choices == "numbers" and not _number_choices(choices):
                continue

            at, p = min(hits)
            for i, ph in hits:
                used.update(range(i, i + len(ph)))
            for cp in row.requires_any:  # the context words are read with the step
                for i in find(ws, cp):
                    used.update(range(i, i + len(cp)))
            steps.append(_step(row.kind, " ".join(ws[at:at + len(p)]), ws))
        read = word_roles(ws, used)
        about_speech = any(r.word in t.content_verbs for r in read if r.role == "speech") or any(
            s.kind == "day_offset" for s in steps)
        return QuestionFrame(text=question, choices=list(choices), reader=self.name, about_speech=about_speech,
                             steps=steps, words=read)


class CachedReader:
    """Any reader, its frames kept by (question, choices) for the life of the process."""

    def __init__(self, inner: Reader, size: int = 1024):
        self.inner = inner
        self.name = f"cache:{inner.name}"
        self._cache: dict[tuple[str, tuple[str, ...]], QuestionFrame] = {}
        self._size = size

    def read(self, question: str, choices: list[str]) -> QuestionFrame:
        key = (question, tuple(choices))
        if key not in self._cache:
            if len(self._cache) >= self._size:
                self._cache.pop(next(iter(self._cache)))
            frame = self.inner.read(question, choices)
            self._cache[key] = _without_call(frame)  # a cache hit makes no model call
            return frame
        return _without_call(self._cache[key])


def _without_call(frame: QuestionFrame) -> QuestionFrame:
    copy = frame.model_copy()
    copy._model_call = None
    return copy


_DEFAULT = CachedReader(RuleQuestionReader())


def read_question(question: str, choices: list[str], reader: Reader | None = None) -> QuestionFrame:
    """The frame of a question by `reader` (default: the cached rule reader)."""
    return (reader or _DEFAULT).read(question, choices)
