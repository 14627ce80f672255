"""Spoken numbers, quantities and days, from the tables in data/numbers.toml.

`spoken_quantities` reads what a transcript states ('four dollars', '$4.50', 'twenty-five people') as typed
`Quantity` values: a number, the unit named within three words after it, and the noun it counts.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel

DATA = Path(__file__).parent / "data" / "numbers.toml"


@lru_cache(maxsize=1)
def _tables() -> dict:
    return tomllib.loads(DATA.read_text(encoding="utf-8"))


DAYS: tuple[str, ...] = tuple(_tables()["days"])


class Quantity(BaseModel):
    value: float
    unit: str | None = None
    noun: str | None = None
    text: str
    position: int


def number_in(word: str) -> float | None:
    """The number one word states: '4', '4.50', 'four', 'twenty-five'; None if it states none."""
    w = word.lower().strip(".,;:!?")
    if re.fullmatch(r"\d+(\.\d+)?", w):
        return float(w)
    nums = _tables()["numbers"]
    if w in nums:
        return float(nums[w])
    if "-" in w:
        parts = w.split("-")
        if all(p in nums for p in parts):
            return float(sum(nums[p] for p in parts))
    return None


_TOKEN = re.compile(r"[$€£]?\d+(?:\.\d+)?|[a-z]+(?:-[a-z]+)*|[$€£]")


def tokens(text: str) -> list[str]:
    """The tokens `spoken_quantities` counts positions in (a Quantity's `position` indexes this list)."""
    return _TOKEN.findall(text.lower())


def spoken_quantities(text: str) -> list[Quantity]:
    """The quantities a text states, in order: number (with 'twenty five' and 'four fifty' joined as said),
    unit (a money symbol before it, or a unit word within three words after), and the noun after it."""
    t = _tables()
    units, symbols = t["units"], t["symbols"]
    toks = _TOKEN.findall(text.lower())
    out: list[Quantity] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        unit = None
        if tok[:1] in symbols:  # '$4.50', or '$' then 'four'
            unit = symbols[tok[:1]]
            if len(tok) == 1:
                i += 1
                if i >= len(toks):
                    break
                tok = toks[i]
            else:
                tok = tok[1:]
        value = number_in(tok)
        if value is None or tok == "half":
            i += 1
            continue
        j = i + 1
        # 'twenty five' -> 25; 'one hundred' -> 100
        while j < len(toks):
            nxt = number_in(toks[j])
            if nxt is None:
                break
            if value >= 20 and value % 10 == 0 and 0 < nxt < 10:
                value += nxt
            elif nxt == 100 and value < 100:
                value *= 100
            else:
                break
            j += 1
        noun = None
        said = toks[i:j]
        for k in range(j, min(len(toks), j + 3)):
            if toks[k] in units and unit is None:
                unit = units[toks[k]]
                said = toks[i:k + 1]
                break
        if j < len(toks) and toks[j] not in ("and", "or", "of", "to", "the", "a") and number_in(toks[j]) is None:
            noun = toks[j] if toks[j] not in units else None
        if noun and said[-1] != noun:
            said = [*said, noun]
        out.append(Quantity(value=value, unit=unit, noun=noun, text=" ".join(said), position=i))
        i = j
    return out


def same_noun(a: str | None, b: str | None) -> bool:
    """'person' and 'people', 'apple' and 'apples' name the same thing."""
    if not a or not b:
        return False
    irregular = _tables()["irregular_plurals"]
    a, b = irregular.get(a, a), irregular.get(b, b)
    return _singular(a) == _singular(b)


def _singular(w: str) -> str:
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("es") and len(w) > 4:
        return w[:-2]
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


@lru_cache(maxsize=1)
def _count_words() -> dict[str, int]:
    t = _tables()
    small = {w: int(v) for w, v in t["numbers"].items() if float(v).is_integer() and v <= t["counts"]["largest"]}
    return {**small, **{w: int(v) for w, v in t["counts"]["words"].items()}}


def count_in(text: str) -> int | None:
    """The integer count a short text states ('3', 'three', 'Three speakers', 'twice', 'nobody'); None if
    it states none."""
    from audiomind.language import cues

    t = text.lower()
    m = re.search(r"-?\d+", t)
    if m:
        return int(m.group())
    if cues.has("nobody_as_number", t):
        return 0
    table = _count_words()
    return next((table[w] for w in re.findall(r"[a-z]+", t) if w in table), None)


def seconds_in(text: str, clip_s: float | None = None) -> float | None:
    """Seconds a choice states: '5 seconds', 'at about 5 s', '2 to 3 seconds' (midpoint), '00:06', '1.5'."""
    from audiomind.language import cues

    t = text.lower()
    m = cues.search("clock_time", t)
    if m:
        a, b, c = int(m.group(1)), int(m.group(2)), m.group(3)
        if c is None:
            return float(a * 60 + b)
        hms = float(a * 3600 + b * 60 + int(c))
        return hms if clip_s is None or hms <= clip_s + 1 else a * 60 + b + int(c) / 100
    scale = 0.001 if cues.has("milliseconds", t) else 60.0 if cues.has("minutes", t) else 1.0
    m = cues.search("range_of_numbers", t)
    if m:
        return scale * (float(m.group(1)) + float(m.group(2))) / 2
    m = re.search(r"\d+(?:\.\d+)?", t)
    return scale * float(m.group()) if m else None


def ordinals_in(text: str) -> list[int]:
    """The ordinal positions a text names ('the second word' -> [2]), from data/numbers.toml."""
    ws = set(re.findall(r"[a-z0-9]+", text.lower()))
    return [n for w, n in _tables()["ordinals"].items() if w in ws]


def time_named(text: str) -> float | None:
    """A time named in a choice ('at 3.5 s', '2 seconds in', '1:05'), in seconds."""
    from audiomind.language import cues

    m = cues.search("minutes_seconds", text)
    if m:
        return int(m.group(1)) * 60 + int(m.group(2))
    m = cues.search("seconds_named", text)
    return float(m.group(1)) if m else None
