"""Named cues over question and choice text, from the patterns in data/cues.toml.

The reasoning step asks a reading whether a cue is present ('does the question name an order?', 'which
choices name a side?') through `QuestionAnalysis.asks` and `QuestionAnalysis.choice_cues`; the functions here
are what those ask. No module outside `audiomind.language` matches English itself: a new wording of a known
cue is a row in the data file, and a test keeps regular expressions over question text inside this package.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).parent / "data" / "cues.toml"
_PART = re.compile(r"<(\w+)>")


@lru_cache(maxsize=1)
def _tables() -> dict:
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    parts: dict[str, str] = raw.pop("parts", {})

    def compile_(pattern: str) -> re.Pattern[str]:
        return re.compile(_PART.sub(lambda m: parts[m.group(1)], pattern))

    def walk(node: dict) -> dict:
        return {k: walk(v) if isinstance(v, dict) else compile_(v) for k, v in node.items()}

    return walk(raw)


def _table(section: str) -> dict[str, re.Pattern[str]]:
    return _tables()[section]


def search(name: str, text: str) -> re.Match[str] | None:
    """The first match of cue `name` in `text` (lower-cased), or None; KeyError for an unknown cue."""
    return _table("cues")[name].search(text.lower())


def has(name: str, text: str) -> bool:
    return search(name, text) is not None


def fullmatch(name: str, text: str) -> bool:
    return _table("cues")[name].fullmatch(text.lower()) is not None


def section(name: str) -> dict[str, re.Pattern[str]]:
    """A table of named patterns: 'trend', 'contour', 'steps', 'family_words' (each a dict name -> pattern)."""
    return _table(name)


def matched_words(cues_: list[tuple[str, str]], text: str) -> set[str]:
    """The words inside any match, in `text` (lower-cased), of the named cues, each (section, name): what those
    cues account for in a reading ('not in the spoken list' for the not_mentioned step)."""
    t = text.lower()
    table = _tables()
    return {w for sec, name in cues_ if name in table.get(sec, {})
            for m in table[sec][name].finditer(t) for w in m.group(0).split()}


def first_in(section_name: str, text: str, order: tuple[str, ...] | None = None) -> str | None:
    """The first name in a table (in `order`, else the table's) whose pattern occurs in `text`."""
    table = _table(section_name)
    t = text.lower()
    return next((k for k in (order or tuple(table)) if table[k].search(t)), None)


def dimension(dim: str) -> dict[str, re.Pattern[str]]:
    """The patterns of a comparison's dimension ('pitch', 'loudness', 'rate', 'length'): greater, less, noun."""
    return _tables()["dimensions"][dim]


def dimensions() -> list[str]:
    return list(_tables()["dimensions"])


def pattern_in(pattern: str, text: str) -> bool:
    """Whether a pattern from another data table (a vocabulary's cue) occurs in the lower-cased text."""
    return _compiled(pattern).search(text.lower()) is not None


@lru_cache(maxsize=16384)  # the vocabularies' phrases (~5k patterns a decision): 512 thrashed, recompiling every one
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def plain(text: str) -> str:
    """Lower case, hyphens as spaces ('Telephone-band' holds 'telephone' and 'telephone band')."""
    return text.lower().replace("-", " ")


def phrase_at(phrase: str, text: str) -> int | None:
    """Where a vocabulary phrase occurs in the text as whole words (hyphens as spaces), or None."""
    m = _compiled(r"(?<!\w)" + re.escape(plain(phrase)) + r"(?!\w)").search(plain(text))
    return m.start() if m else None


def places_in(text: str, where: str) -> bool:
    """Whether a choice places something in that part of the clip ('beginning', 'middle', 'end')."""
    pattern = _table("where").get(where)
    return pattern is not None and pattern.search(text.lower()) is not None
