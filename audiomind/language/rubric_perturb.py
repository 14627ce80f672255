"""Rubric instructions with one attribute changed (hard negatives): the reading side of
`audiomind.judges.rubric.negatives`. What is swapped for what is data (data/rubric_perturb.toml); which words
name a gender, music or a count comes from the rubric reader's tables (data/rubric_items.toml).
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from audiomind.language.rubric_items import NUM_WORDS, NUMBERS, names_gender, names_music, quoted_text

DATA = Path(__file__).resolve().parent / "data" / "rubric_perturb.toml"
KINDS = ("gender", "count", "order", "tempo", "sound", "words")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    raw["patterns"] = {k: re.compile(v) for k, v in raw["patterns"].items()}
    return raw


def _swap(kind: str) -> dict[str, str]:
    return _data()["swap"][kind]


def _say(name: str) -> str:
    return _data()["say"][name]


@lru_cache(maxsize=8)
def _any_of(kind: str, escaped: bool, longest_first: bool) -> re.Pattern[str]:
    """A swap table's words as one case-insensitive alternation (group 1)."""
    keys = sorted(_swap(kind), key=len, reverse=True) if longest_first else list(_swap(kind))
    return re.compile(r"\b(" + "|".join(re.escape(k) if escaped else k for k in keys) + r")\b", re.IGNORECASE)


def _swap_words(text: str, kind: str) -> str:
    table = _swap(kind)

    def rep(m: re.Match) -> str:
        w = table[m.group(1).lower()]
        return w.capitalize() if m.group(1)[0].isupper() else w

    return _any_of(kind, True, True).sub(rep, text)


def perturbed(s: str, kind: str) -> str | None:
    """The instruction with one attribute of `kind` changed (gender, count, order, tempo, sound, words), or
    None when that kind does not apply; quoted words are left alone except by 'words'."""
    quoted = quoted_text(s)
    outside = s.replace(quoted, "\x00") if quoted else s
    if kind == "gender" and names_gender(outside):
        return _swap_words(outside, "gender").replace("\x00", quoted or "")
    if kind == "tempo" and names_music(outside) and _any_of("tempo", False, False).search(outside):
        return _swap_words(outside, "tempo").replace("\x00", quoted or "")
    if kind == "count":
        m = _data()["patterns"]["count"].search(outside)
        if m:
            w = m.group(1).lower()
            n = int(w) if w.isdigit() else NUMBERS[w]
            new = NUM_WORDS.get(n + 2, str(n + 2))
            if w in _data()["words"]["adverbs_of_times"]:
                new = _say("times").format(n=NUM_WORDS.get(n + 2, n + 2))
            return (outside[:m.start()] + (new.capitalize() if m.group(1)[0].isupper() else new)
                    + outside[m.end():]).replace("\x00", quoted or "")
    if kind == "order":
        parts = _data()["patterns"]["order_joint"].split(s.rstrip("."), maxsplit=1)
        if len(parts) == 3:
            a, _, b = parts
            return _say("order").format(second=b[0].upper() + b[1:], first=a[0].lower() + a[1:])
    if kind == "sound":
        m = _any_of("sound", True, True).search(outside)
        if m:  # one sound swapped: a fine-grained mismatch, not a different scene
            w = _swap("sound")[m.group(1).lower()]
            w = w.capitalize() if m.group(1)[0].isupper() else w
            return (outside[:m.start()] + w + outside[m.end():]).replace("\x00", quoted or "")
    if kind == "words" and quoted:
        alt = _swap("words").get(quoted.lower())
        words = quoted.split()
        new_q = alt or " ".join(reversed(words)) if len(words) > 1 else _say("no_words")
        return s.replace(quoted, new_q)
    return None
