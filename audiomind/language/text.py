"""Words of any English text (choices, transcripts, labels): tokens, stems, content words, sound-alike keys.

The word lists (stop words, language names, digits for number words, AudioSet's generic classes) are in
data/words.toml.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).parent / "data" / "words.toml"
_WORD = re.compile(r"[a-z0-9']+")


@lru_cache(maxsize=1)
def _tables() -> dict:
    return tomllib.loads(DATA.read_text(encoding="utf-8"))


STOPWORDS: frozenset[str] = frozenset(_tables()["stopwords"])
LANGUAGES: dict[str, str] = dict(_tables()["languages"])
NUMBER_TOKENS: dict[str, str] = dict(_tables()["number_tokens"])
NUMBER_HOMOPHONES: dict[str, str] = dict(_tables()["number_homophones"])
FILLERS: frozenset[str] = frozenset(_tables()["fillers"])
SPELLING_DIGRAPHS: tuple[str, ...] = tuple(_tables()["spelling_digraphs"])
VOICE_QUALIFIERS: frozenset[str] = frozenset(_tables()["voice_qualifiers"])
VOICE_NOUNS: frozenset[str] = frozenset(_tables()["voice_nouns"])
WORD_PICK_NEUTRAL: frozenset[str] = frozenset(_tables()["word_pick_neutral"])
LIGHT_VERBS: frozenset[str] = frozenset(_tables()["light_verbs"])
ASKING_WORDS: frozenset[str] = frozenset(_tables()["asking_words"])
GENERIC_LABELS: frozenset[str] = frozenset(_tables()["generic_labels"])
ITEM_STOPWORDS: frozenset[str] = frozenset(_tables()["item_stopwords"])
MUSIC_TAG_WORDS: tuple[str, ...] = tuple(_tables()["music_tag_words"])
POLARITY_WORDS: frozenset[str] = frozenset(_tables()["polarity_words"])
NEGATIONS: frozenset[str] = frozenset(_tables()["negations"])
ANSWER_PARTICLES: frozenset[str] = frozenset(_tables()["answer_particles"])
CLAIM_WORDS: frozenset[str] = frozenset(_tables()["claim_words"])
_CLAUSE_END = re.compile(r"[.?!;,:]")


def number_word(w: str) -> str | None:
    """The number word a token names ('2' and 'two' -> 'two'); None for a token that names no number."""
    if w in NUMBER_TOKENS:
        return NUMBER_TOKENS[w]
    return w if w in NUMBER_TOKENS.values() else None


def misheard_numbers(text: str) -> list[tuple[int, str]]:
    """(position, number word) of each word of `text` a recogniser may have written for a number it misheard
    ('to' for 'two'), by data/words.toml's number_homophones."""
    return [(i, NUMBER_HOMOPHONES[w]) for i, w in enumerate(words(text)) if w in NUMBER_HOMOPHONES]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def clause_words(text: str) -> list[tuple[str, int]]:
    """The words of a text, each with the number of the clause it stands in (clauses end at . ? ! ; , :)."""
    return [(w, i) for i, part in enumerate(_CLAUSE_END.split(text)) for w in words(part)]


def negated(tokens: list[str]) -> bool:
    """Whether words negate what they say ('none of ...', 'did not', "didn't")."""
    return any(w in NEGATIONS or w.endswith("n't") for w in tokens)


def is_claim(choice: str) -> bool:
    """Whether a choice states something with a polarity ('it is open on Sundays', 'no, it was caught') rather
    than naming a thing ('the toothbrush', 'on the porch')."""
    ws = words(choice)
    return any(w in CLAIM_WORDS or w in ANSWER_PARTICLES for w in ws) or negated(ws)


def claim_negated(choice: str) -> bool:
    """Whether a choice's claim is negated, a leading answer particle set aside ('no, it was caught' claims
    that it was caught; 'he did not enjoy it' is negated)."""
    ws = words(choice)
    if ws and ws[0] in ANSWER_PARTICLES and len(ws) > 1:
        ws = ws[1:]
    return negated(ws)


def stem(w: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def content(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


def matchable(choice: str) -> list[str]:
    """The words of a choice to look for in what was heard: its content words, else (a choice of stop words
    only, like 'Him' or 'It is') all its words except the answer particles and negations (yes, no, not,
    never), which state a claim about the clip, not words to hear."""
    return content(choice) or [w for w in words(choice) if w not in POLARITY_WORDS]


def letters(word: str) -> str:
    """The letters of a word (a-z and the apostrophe), lower-cased."""
    return re.sub(r"[^a-z']", "", word.lower())


def soundex(word: str) -> str:
    """American Soundex: words that sound alike share a key ('lemonade' / 'laminate' -> L553)."""
    codes = {**dict.fromkeys("bfpv", "1"), **dict.fromkeys("cgjkqsxz", "2"), **dict.fromkeys("dt", "3"),
             "l": "4", **dict.fromkeys("mn", "5"), "r": "6"}
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return ""
    out, last = w[0].upper(), codes.get(w[0], "")
    for ch in w[1:]:
        code = codes.get(ch, "")
        if code and code != last:
            out += code
        if ch not in "hw":
            last = code
    return (out + "000")[:4]


def language_of(text: str) -> str | None:
    """The language code a choice names ('Spoken in French' -> 'fr'), by the names in data/words.toml."""
    ws = words(text)
    return next((code for code, names in LANGUAGES.items() if any(w in names.split() for w in ws)), None)


def syllables(word: str) -> int:
    """Vowel groups in an English word (at least 1; 0 for no letters): a transparent, documented estimate."""
    w = re.sub(r"[^a-z]", "", word.lower())
    if not w:
        return 0
    groups = len(re.findall(r"[aeiouy]+", w))
    if w.endswith("e") and not w.endswith(("le", "ee")) and groups > 1:
        groups -= 1
    return max(1, groups)
