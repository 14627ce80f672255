"""Sound phrases of edit instructions, rubric items and captions, read for the judges: what a phrase names
('the cries of a seagull' -> 'seagull cries'), whether it is about speech, what it quotes, and the words of an
edit instruction that ask for a level change or place a sound relative to speech.

The judges (`audiomind.judges.evidence`, `audiomind.judges.edit`) match phrases to AudioSet classes, WordNet
senses and what was heard; the English they read comes from here, and its words and patterns are the tables of
data/phrases.toml. `speech_cues` is the typed hand-off for 'is this phrase about speech?': it says what the
phrase's words show (quoted words, a capitalised word after 'in' / 'of' that may name a language, speech words,
whether they are all verbs of dialogue and the word before them), and the judge decides with WordNet.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from audiomind.language import text

DATA = Path(__file__).parent / "data" / "phrases.toml"
_PART = re.compile(r"(?<!\?P)<(\w+)>")  # a list by name; not a named group (?P<name>...)
_NAME_WORD = re.compile(r"[a-z][a-z'-]+")  # a word of a sound's name ('sea lion', "rock'n'roll", 'wind-up')
_LETTERS = re.compile(r"[a-z]+")
_DIGITS = re.compile(r"\b\d+\b")


@lru_cache(maxsize=1)
def tables() -> dict:
    """The tables of data/phrases.toml, with `patterns` compiled (a list's name in <...> is its alternation)."""
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    pats = dict(raw.pop("patterns"))
    exact = set(pats.pop("case_sensitive"))

    def compile_(name: str, pattern: str) -> re.Pattern[str]:
        body = _PART.sub(lambda m: "|".join(raw[m.group(1)]), pattern)
        return re.compile(body, 0 if name in exact else re.IGNORECASE)

    raw["patterns"] = {k: compile_(k, v) for k, v in pats.items()}
    raw["level_cues"] = [(re.compile(rf"\b(?:{c['pattern']})\b", re.IGNORECASE), int(c["direction"]))
                         for c in raw["level_cues"]]
    return raw


def pattern(name: str) -> re.Pattern[str]:
    """One compiled pattern of the data file ('speech_words', 'quoted', ...); KeyError for an unknown name."""
    return tables()["patterns"][name]


def _words(name: str) -> frozenset[str]:
    return frozenset(tables()[name])


MATERIAL_KINDS: frozenset[str] = frozenset(tables()["wordnet"]["material_kinds"])
THING_HYPERNYMS: frozenset[str] = frozenset(tables()["wordnet"]["thing_hypernyms"])
SOURCE_KINDS: frozenset[str] = frozenset(tables()["wordnet"]["source_kinds"])


# ---------------------------------------------------------------- words


def words_of(s: str | None) -> list[str]:
    """The lower-cased words of any text (letters, digits and apostrophes)."""
    return text.words(s or "")


def norm_words(s: str | None) -> list[str]:
    """Words with spelled numbers as digits (Whisper writes 'platform 2' for 'platform two')."""
    nums = tables()["number_words"]
    return [nums.get(w, w) for w in words_of(s)]


def name_words(s: str) -> list[str]:
    """The words of a sound's name, lower-cased, two letters or more ('a sea lion's bark' -> ['sea', "lion's",
    'bark'])."""
    return _NAME_WORD.findall(s.lower())


def digits(s: str) -> list[int]:
    """The numbers a text writes in digits."""
    return [int(x) for x in _DIGITS.findall(s)]


# ---------------------------------------------------------------- what a phrase names


def clean_phrase(phrase: str) -> str:
    """The sound's name alone: no 'the sound of', no trailing 'noise' / 'in the background', no verb of onset
    ('an alarm clock goes off'), no leading count, loudness or length ('two short beeps' -> 'beeps')."""
    p = phrase.strip().strip(".,;:!?\"'").strip()
    p = pattern("sound_of").sub("", p).strip()
    p = pattern("trailing_sound_word").sub("", p).strip()
    # verbs of onset say when, not what: 'a piano melody starts', 'an alarm clock goes off'
    p = pattern("onset_verb").sub("", p).strip() or p
    det = pattern("leading_modifier")
    while det.match(p):
        p = det.sub("", p, count=1)
    return p or phrase.strip()


def no_possessive(p: str) -> str:
    """"a seagull's cries" -> 'a seagull cries'."""
    return pattern("possessive").sub("", p)


def sounder_first(p: str) -> str:
    """The sounding thing first, as AudioSet names sounds: "a seagull's cries" / 'the cries of a seagull' ->
    'seagull cries' (one more form to match: the phrase as written is matched too)."""
    p = no_possessive(p)
    of = pattern("of_phrase").fullmatch(p)
    if of and len(of.group("whose").split()) <= 3:
        return f"{of.group('whose')} {of.group('what')}"
    return p


def without_auxiliaries(p: str) -> str:
    """'paper is crumpled' -> 'paper crumpled'; 'can be heard' -> ''."""
    return " ".join(pattern("auxiliary").sub(" ", p).split())


def _gerund(w: str) -> str:
    lw = w.lower()
    if len(lw) > 4 and lw.endswith("ed"):
        return lw[:-2] + "ing"  # crumpled -> crumpling, shattered -> shattering
    if len(lw) > 4 and lw.endswith("es") and lw[:-1].endswith("e") and lw[-3] in "lkcv":
        return lw[:-2] + "ing"
    if len(lw) > 3 and lw.endswith("s") and not lw.endswith("ss"):
        return lw[:-1] + "ing"
    return lw


def _forms(phrase: str) -> tuple[str, ...]:
    """The phrase's name without a possessive, and with its sounding thing first (the same string once)."""
    clean = clean_phrase(phrase)
    return tuple(dict.fromkeys((no_possessive(clean), sounder_first(clean))))


def phrase_variants(phrase: str) -> list[str]:
    """The phrase as written, without auxiliaries, and with its verbs as gerunds ('paper is crumpled' ->
    'paper crumpling'), so the embedding meets AudioSet's label style."""
    out: list[str] = []
    for base in _forms(phrase):
        bare = without_auxiliaries(base) or base
        words = bare.split()
        ger = " ".join(words[:-1] + [_gerund(words[-1])]) if words else bare
        for v in (base, bare, ger):
            if v and v not in out:
                out.append(v)
    return out


def head_noun(phrase: str) -> str | None:
    """The sounding thing of '<noun> <verb>' phrases ('a bell ringing' -> 'bell', 'the dog barks' -> 'dog')."""
    for form in _forms(phrase):
        words = without_auxiliaries(form).split()
        if len(words) >= 2 and pattern("verb_ending").search(words[-1].lower()):
            return " ".join(words[:-1])
    return None


def quoted_text(s: str) -> str | None:
    """The words a phrase quotes (double quotes, straight or curly; else single quotes around two or more
    characters, an apostrophe between letters kept inside)."""
    m = pattern("double_quoted").search(s) or pattern("single_quoted").search(s)
    return m.group(1).strip() if m else None


# ---------------------------------------------------------------- is it about speech?


class SpeechCues(BaseModel):
    """What a phrase's words say about speech; the judge decides with WordNet (`evidence.is_speech_phrase`):
    quoted words are speech; so is a phrase in a language; a speech word is, unless every one is a verb of
    dialogue ('answers') and the word before it names no person ('a piccolo answers')."""

    model_config = ConfigDict(frozen=True)

    quoted: str | None = Field(None, description="the quoted words, if any")
    languages: tuple[str, ...] = Field((), description="capitalised words after 'in' / 'of' that may name a language")
    speech_words: tuple[str, ...] = Field((), description="the speech words of the phrase, in order")
    dialogue_only: bool = Field(False, description="every speech word is a verb of dialogue ('answers', 'calls out')")
    subject: str | None = Field(None, description="the last word before the first speech word")


@lru_cache(maxsize=4096)
def speech_cues(phrase: str) -> SpeechCues:
    hits = list(pattern("speech_words").finditer(phrase))
    before = _LETTERS.findall(phrase[:hits[0].start()].lower()) if hits else []
    return SpeechCues(
        quoted=quoted_text(phrase),
        languages=tuple(m.group(1) for m in pattern("in_language").finditer(phrase)),
        speech_words=tuple(h.group(0) for h in hits),
        dialogue_only=bool(hits) and all(pattern("dialogue_verb").match(h.group(0)) for h in hits),
        subject=before[-1] if before else None)


def names_speech(text_: str) -> bool:
    """A speech word anywhere in the text ('says', 'voice', 'read aloud')."""
    return pattern("speech_words").search(text_) is not None


def refers_to_speech(reference: str) -> bool:
    """An edit's place refers to speech ('after the man stops talking', 'before the greeting')."""
    return pattern("speech_reference").search(reference) is not None


# ---------------------------------------------------------------- captions


def with_article(phrase: str) -> str:
    """'dog barking' -> 'a dog barking'; a plural, a count or a determiner already there stays as it is."""
    p = phrase.strip()
    if pattern("counted_opener").match(p) or (p.endswith("s") and not p.endswith("ss")):
        return p
    return ("an " if p[:1].lower() in "aeiou" else "a ") + p


def in_caption(name: str) -> str:
    """A sound's name as a caption says it: a mass noun alone ('applause'), else with its article."""
    return name if name in _words("mass_nouns") else with_article(name)


def caption_case(phrase: str) -> str:
    """A phrase that opens with a capitalised determiner, lower-cased at its first letter for use inside a
    caption ('The chiselling' -> 'the chiselling'); any other phrase as it is."""
    if pattern("capital_determiner").match(phrase):
        return phrase[0].lower() + phrase[1:]
    return phrase


# ---------------------------------------------------------------- a level change asked for


def requested_level(instruction: str | None) -> int | None:
    """-1 (quieter), +1 (louder) or None: the whole-clip level change an instruction asks for (the level cues of
    data/phrases.toml, tried in order: a complaint, 'too loud', first, as it names the opposite of what it asks)."""
    if not instruction:
        return None
    for rx, direction in tables()["level_cues"]:
        if rx.search(instruction):
            return direction
    return None
