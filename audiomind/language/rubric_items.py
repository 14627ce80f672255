"""The rule rubric reader: a rubric instruction -> atomic yes/no items, each with the words it comes from and
the check that verifies it (a `audiomind.language.rubric.RubricCheck` as a dict).

The instruction is split into clauses (quotes kept whole; "then", "followed by", "before", "after" give the
order) and each clause is read for speech (who speaks, what is said, how fast, in what style), sound events,
counts, music tempo and loudness trends; anything else becomes an item the offline judge cannot verify. The
filter keeps items grounded in the instruction's words and drops duplicates.

Every pattern and word list is data: data/rubric_items.toml (the patterns, with their comments) and
data/rubric_phrases.json (the word tables they insert). What the reader cannot know from the words alone
(whether a phrase names a sound class, a sounding animal, a person; whether a word is mostly a verb) it asks
a `SoundSense`: the judges pass theirs (AudioSet classes through the sentence encoder, WordNet), so this
package depends on no judge.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from audiomind.language import rubric as L
from audiomind.language.rubric import as_check, words_rx

DATA = Path(__file__).resolve().parent / "data" / "rubric_items.toml"
_SLOT = re.compile(r"<<(rx:)?(\w+)>>")


class SoundSense(Protocol):
    """What the reader asks beyond the words: the judges' knowledge of sounds, speech and WordNet."""

    def names_sound_class(self, phrase: str) -> bool:
        """A sound class (AudioSet) is close to the phrase."""

    def has_sound_gloss(self, phrase: str) -> bool:
        """A dictionary gloss of the phrase places it among the things that sound."""

    def sounding_animal(self, phrase: str) -> bool:
        """The phrase names an animal that makes a sound."""

    def is_speech(self, phrase: str) -> bool:
        """The phrase is about speech (a speaking verb, quoted words, something in a language)."""

    def has_speech_word(self, text: str) -> bool:
        """A speaking verb or noun occurs in the text ('says', 'announces', 'voice')."""

    def names_person(self, word: str) -> bool | None:
        """The noun names a person (None: the dictionary does not know it)."""

    def mostly_adjective(self, word: str) -> bool: ...

    def mostly_verb(self, word: str) -> bool: ...

    def verb_form(self, word: str) -> bool:
        """The word is a form of a verb ('scrapes', 'tapping')."""


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    raw = tomllib.loads(DATA.read_text(encoding="utf-8"))
    parts: dict[str, str] = raw["parts"]

    def expand(p: str | list[str]) -> str:
        text = "".join(p) if isinstance(p, list) else p
        return _SLOT.sub(lambda m: words_rx(m.group(2)) if m.group(1) else parts[m.group(2)], text)

    return {"patterns": {k: re.compile(expand(v)) for k, v in raw["patterns"].items()},
            "needs": {k: re.compile(expand(v)) for k, v in raw["needs"].items()},
            "words": raw["words"], "say": raw["say"]}


def pattern(name: str) -> re.Pattern[str]:
    """A named pattern of data/rubric_items.toml (KeyError for an unknown name)."""
    return _data()["patterns"][name]


def _words(name: str) -> Any:
    return _data()["words"][name]


def _say(name: str, **fields: Any) -> str:
    """An item's question or reason, from the [say] table, with its fields filled in."""
    return _data()["say"][name].format(**fields)


P = pattern
NUMBERS: dict[str, int] = dict(L.phrases()["numbers"])
NUM_WORDS: dict[int, str] = {v: k for k, v in NUMBERS.items() if k not in _words("not_cardinal")}


def quoted_text(s: str) -> str | None:
    """The words in double or curly quotes, else in single quotes (an apostrophe inside a word stays)."""
    m = P("double_quoted").search(s) or P("single_quoted").search(s)
    return m.group(1).strip() if m else None


def words_of(s: str) -> list[str]:
    return P("word").findall((s or "").lower())


def tools_needed(text: str) -> list[str]:
    """The measurements (tool names) a rubric item's wording asks for ('is the speaker female?' -> ['pitch'])."""
    return [name for name, rx in _data()["needs"].items() if rx.search(text)]


def names_gender(text: str) -> bool:
    """A gendered word occurs in the text ('woman', 'his', 'girl')."""
    return bool(P("female").search(text) or P("male").search(text))


def names_music(text: str) -> bool:
    return bool(P("music").search(text))


class RubricItem(BaseModel):
    """One atomic yes/no requirement drawn from the instruction."""

    id: int
    question: str
    attribute: str = "other"
    evidence: str = Field("", description="the words of the instruction it comes from")
    check: dict[str, Any] = Field(default_factory=dict, description="the rule verifier's spec (rules only)")
    kept: bool = True
    drop_reason: str | None = None

    @property
    def reading(self) -> Any:
        """The check as a typed `audiomind.language.rubric.RubricCheck` (a malformed one is Unverifiable)."""
        return as_check(self.check)


def split_clauses(instruction: str, sense: SoundSense) -> list[tuple[str, str | None]]:
    """[(clause, relation to the previous clause: 'after' | 'before' | 'with' | None)], quotes kept whole."""
    quotes: list[str] = []

    def hide(m: re.Match) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    instruction = P("digits_restated").sub("", instruction)
    instruction = P("pro_do").sub("", P("opens_with").sub("", instruction))
    instruction = P("double_dash").sub(", ", instruction)
    instruction = P("times_sign").sub(r"\1 times", instruction)
    instruction = P("not_until_that").sub("then ", instruction)
    instruction = P("numbered_item").sub(lambda m: "" if m.group(1) == "1" else " then ", instruction).strip()
    masked = P("quotes").sub(hide, instruction.strip())
    # a transcript ("Man: '...' Woman: '...'"): each labelled turn is a clause, in turn order
    turns = P("turn_label").split(masked)
    if len(turns) >= 5 and not turns[0].strip(" .,;"):
        said = []
        for label, words in zip(turns[1::2], turns[2::2]):
            # a stage direction between turns ("(a door slams)") is a sound of its own, in its place
            asides = P("stage_direction").findall(words)
            said.append(f"{label} says {P('bracketed').sub(' ', words).strip(' .,;')}")
            said.extend(a.strip(" .,;") for a in asides if a.strip(" .,;"))
        masked = ", then ".join(said) + "."
    out: list[tuple[str, str | None]] = []
    for sentence in P("sentence_break").split(masked):
        if P("ordered").search(sentence) and not P("ordered").sub(" ", sentence).strip(" ,.;:"):
            # '...; in that order.' on its own closes a list: every clause said so far is a sequence
            out[1:] = [(c, "after" if r in (None, "with") else r) for c, r in out[1:]]
            continue
        if P("ordered").search(sentence):  # 'in this order: a chimp, a tiger, a bear': the list is a sequence
            start = len(out)
            out.extend(_split_sentence(P("ordered").sub(" ", sentence), sense))
            out[start + 1:] = [(c, "after" if r in (None, "with") else r) for c, r in out[start + 1:]]
            continue
        out.extend(_split_sentence(sentence, sense))
    merged: list[tuple[str, str | None]] = []
    carry: tuple[str, str | None] | None = None
    for c, r in out:
        if carry is not None and P("incomplete").search(carry[0]) and not P("participle").match(c):
            merged.append((P("incomplete").sub("", carry[0]).strip(" ,.;"), carry[1]))
            carry = None
        if carry is not None and _voice_alone(carry[0]) and _voice_alone(c):
            merged.append(carry)  # 'a man and then a female voice': two voices, each a clause of its own
            carry = None
        if carry is not None:  # 'a man' + 'politely says ...' -> 'a man politely says ...', after what came before
            c, r = carry[0] + " " + c, carry[1] or r
            carry = None
        if P("bare_subject").match(c.strip(" ,.;")) or P("incomplete").search(c.strip(" ,.;")):
            carry = (c.strip(" ,.;"), r)
            continue
        if merged and r == "with" and _continues_subject(c, sense):
            continue  # 'a car engine turns over, runs a moment and cuts out': one source doing more, no new sound
        not_until = P("not_until").search(c)
        if not_until and merged:
            c, r = f"{c[:not_until.start()]} {not_until.group('v')}", "after"
        if P("trailing_sequence").search(c) and merged:
            c, r = P("trailing_sequence").sub("", c), "after"
        if P("trailing_before").search(c) and merged:  # '... and a gong sounds before him': before the one before
            c, r = P("trailing_before").sub("", c), "before"
        c = P("trailing_first").sub("", c)
        merged.append((c, r))
    if carry is not None:
        merged.append(carry)
    return [(P("adverb").sub("", P("quote_mask").sub(lambda m: quotes[int(m.group(1))], c)).strip(" ,.;"), r)
            for c, r in merged if P("adverb").sub("", c).strip(" ,.;")]


def _voice_alone(clause: str) -> bool:
    """A clause that is only a voice of a gender ('a man', 'a female voice', 'the girl'): a speaker of its own
    (a pronoun is none: 'she' is someone named before)."""
    c = clause.strip(" ,.;")
    return bool(P("bare_subject").match(c)) and names_gender(c) and c.lower() not in _words("pronouns")


def _continues_subject(clause: str, sense: SoundSense) -> bool:
    """A clause that opens on a verb and has no subject ('runs a moment', 'cuts out', 'pulls away'): WordNet uses
    its first word as a verb far more than as a noun, the next word is no verb, and it names no sound itself."""
    words = clause.strip(" ,.;").split()
    if not words or P("sound_verb").match(words[0]) or not sense.mostly_verb(words[0]):
        return False
    return len(words) == 1 or bool(P("vp_next").match(words[1]))


def _subject_verb(clause: str, sense: SoundSense) -> bool:
    """A thing doing something ('a blade scrapes along a whetstone', 'a chisel tapping on stone'): a determiner,
    a noun, then a verb form (WordNet); an event a listener hears even when no sound class names it."""
    clause = P("you_hear").sub("", clause)
    # a pronoun or 'someone' acting on something ('he flips four pages', 'someone leafs through a book')
    acting = P("pronoun_acting").match(clause)
    if acting:
        return sense.verb_form(acting.group(1)) and not sense.is_speech(clause)
    # ... or a thing acted on ('four pages are turned', 'a deck gets shuffled')
    if P("acted_on").match(clause):
        return True
    # a verb with an object and no subject, after someone who does it ('... he mutters, and flips two pages')
    vp = P("verb_object").match(clause)
    if vp and vp.group(1).lower().endswith("s") and sense.verb_form(vp.group(1)) and not sense.is_speech(clause):
        return True
    m = P("subject_verb").match(clause)
    if m is not None and P("adverb_word").search(m.group(1).lower()) and sense.names_person(m.group(1)) is None:
        return False  # an adverb the dictionary knows no noun for is no subject ('evenly spaced', 'neatly done')
    return m is not None and m.group(1).lower() not in _words("pronouns") and not sense.verb_form(m.group(1)) \
        and sense.verb_form(m.group(2))


def _split_sentence(sentence: str, sense: SoundSense) -> list[tuple[str, str | None]]:
    """One sentence's clauses (a header and its list, a clause said first, or a plain sequence)."""
    out: list[tuple[str, str | None]] = []
    colon = P("header").match(sentence)
    header = colon.group(1).split(",") if colon else []
    if colon and sense.is_speech(header[-1]) and not sense.is_speech(colon.group(2)) \
            and not P("sequence").search(colon.group(2)):
        # 'A woman counting in Spanish: uno, dos, tres': the list after a speaking header (its last clause) is
        # what is said; the header's clauses before it stay as they are
        said = f"{header[-1].strip()} '{' '.join(colon.group(2).split()).strip(' .;')}'"
        if len(header) == 1:
            return [(said, None)]
        return _sequence(colon.group(1), None, sense)[:-1] + [(said, "with")]
    if colon:  # 'Two short tunes back to back: a recorder first, a viola second': the list says it all
        # ... but a header's own requirement stays ('No voices at all, just three sounds in a row: ...')
        # ... and so does a count of voices ('Two voices: a man and then a woman')
        out = [(h, None) for h in P("comma").split(colon.group(1))
               if P("negated").match(h) or P("nobody").match(h) or P("voice_count").match(h)]
        if P("ordered").search(colon.group(1)):
            body = _sequence(colon.group(2), None, sense)
            return out + [(c, "after" if i and r in (None, "with") else r) for i, (c, r) in enumerate(body)]
        body = _sequence(colon.group(2), None, sense)
        if len(body) >= 2 and len({c.strip(" ,.;!").lower() for c, _ in body}) == 1:
            # 'a bat connects four times: crack, crack, crack, crack': the list spells the sound out
            return out + _sequence(colon.group(1), None, sense)
        if P("bare_noun").match(colon.group(1).strip()) and body and P("headless").match(body[0][0]):
            # 'Castanets: five clacks, ...', 'A crow: it caws twice', 'pickaxe: three strikes': the header is
            # what sounds
            body[0] = (f"{colon.group(1).strip()} {body[0][0]}", body[0][1])
            return out + body
        if len(body) >= 2:
            return out + body
        sentence = colon.group(1) + ", " + colon.group(2)
    lead = P("lead_sub").match(sentence)
    if lead:  # "After A, B" / "Before A, B": the subordinate clause comes first in the sentence
        out.extend(_sequence(lead.group(2), None, sense))
        rest = _sequence(lead.group(3), None, sense)
        if rest:  # ('while A, B': at the same time, no order)
            w = lead.group(1).lower()
            rest[0] = (rest[0][0], "with" if w in _words("at_once") else _words("lead_relation").get(w, "after"))
        return out + rest
    return out + _sequence(sentence, None, sense)


def _sequence(sentence: str, rel: str | None, sense: SoundSense) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    pos = 0
    for m in P("sequence").finditer(sentence):
        chunk = sentence[pos:m.start()]
        if chunk.strip(" ,.;"):
            out.extend(_subclauses(chunk, rel, sense))
        word = " ".join(m.group(0).strip(" ,").lower().split())
        # ('...; after the last bounce a guy shouts ...': 'after' opening a sentence places it after the one before)
        rel = "after" if not out and not sentence[:m.start()].strip(" ,.;") and word in _words("opening_after") \
            else _words("relation").get(word, "after")
        pos = m.end()
    tail = sentence[pos:]
    if tail.strip(" ,.;"):
        out.extend(_subclauses(tail, rel, sense))
    elif out and rel == "after" and len(out) >= 2:  # '... and a trombone comes later': the last clause is after
        out[-1] = (out[-1][0], "after")
    return out


def _subclauses(chunk: str, rel: str | None, sense: SoundSense) -> list[tuple[str, str | None]]:
    # (never split off a quotation from its speaker: "greets them with 'hello'")
    parts = [p for p in P("joiner").split(chunk) if p.strip(" ,.;")]
    # a comma between adjectives is no clause break: 'a slow, soft melody' (the part before it is an article
    # and one word that names no sound)
    joined: list[str] = []
    for p in parts:
        adj = P("adj_only").match(joined[-1].strip()) if joined else None
        if adj and not sense.names_sound_class(adj.group(1)) and not P("sound_verb").search(joined[-1]) \
                and not (_voice_alone(joined[-1]) and _voice_alone(p)):  # ('a woman, a man': two voices)
            joined[-1] = joined[-1].strip() + " " + p.strip()
        else:
            joined.append(p)
    return [(p, rel if i == 0 else "with") for i, p in enumerate(joined)]


def _quote_is_said(clause: str, quoted: str, sense: SoundSense) -> bool:
    """Are the quoted words said? Not when an article makes them a noun ("holds an 'aah'", "a 'ding'") and no
    speaking verb or person comes before them."""
    head = clause.split(quoted, maxsplit=1)[0]
    if not P("noun_before_quote").search(head + " "):
        return True
    return sense.has_speech_word(head) or any(
        sense.names_person(w) for w in P("letters").findall(head.lower()) if len(w) > 2)


def _speaker_gender(head: str) -> str | None:
    """The gender of whoever speaks: the first gendered word ('a woman tells him' -> female, the subject
    before its object), not counting a possessive ('his mother tells him' -> female)."""
    hits = sorted([(x.start(), "female", x) for x in P("female").finditer(head)]
                  + [(x.start(), "male", x) for x in P("male").finditer(head)], key=lambda h: h[0])
    for _, gender, x in hits:
        if x.group(0).lower() in _words("possessives") and P("word_follows").match(head[x.end():]):
            continue  # a possessive before its noun
        return gender
    return None


def _count_in(clause: str) -> int | None:
    m = P("count_phrase").search(clause)
    if m:
        w = m.group(1).lower()
        return int(w) if w.isdigit() else NUMBERS.get(w)
    m = P("count_adverb").search(clause)
    return NUMBERS[m.group(1).lower()] if m else None


def _sound_phrase(clause: str) -> str:
    p = P("louder").sub(" ", P("quieter").sub(" ", clause))
    p = P("sound_of").sub(" ", p)
    p = P("listener_opener").sub("", p.replace("?", " "))
    # the passive names the sounding thing before its auxiliary ('a triangle is struck' -> 'a triangle')
    p = P("passive_tail").sub(" ", p)
    p = P("player_acts").sub("", p)
    p = P("couple_few").sub(" ", p)  # ('a couple of times')
    p = P("filler").sub(" ", p)
    # a verb of taking turns names no sound ('an oboe takes over', 'a flute joins in')
    p = P("turn_verbs").sub(" ", p)
    p = " ".join(p.split()) or clause
    return p[0].lower() + p[1:] if p[:2] != p[:2].upper() else p


def _style_word(w0: str) -> str:
    """An adverb of style as its adjective ('happily' -> 'happy', 'calmly' -> 'calm')."""
    return P("adverb_ily").sub("y", w0) if P("adverb_ily").search(w0) else P("adverb_ly").sub("", w0)


Item = tuple[str, str, str, dict[str, Any]]
"""(question, attribute, evidence, check): one rubric item before it is numbered."""


def _delivery_items(clause: str, quoted: str | None) -> list[Item]:
    """How a speech clause says the words are spoken: a rate (checked) and a style word (carried, unverified)."""
    out: list[Item] = []
    if P("rate_fast").search(clause):
        out.append((_say("talks_fast"), "style", clause, {"kind": "rate", "rate": "fast"}))
    elif P("rate_slow").search(clause):
        out.append((_say("talks_slowly"), "style", clause, {"kind": "rate", "rate": "slow"}))
    m = P("style").search(clause.replace(quoted, " ") if quoted else clause)  # (not a word of the quote)
    if m:
        out.append((_say("style", word=_style_word(m.group(1).lower())), "style", clause,
                    {"kind": "unverifiable", "why": _say("why_style")}))
    return out


def _tempo_items(clause: str) -> list[Item]:
    """A music clause's tempo ('a fast waltz'), when it names one."""
    if not names_music(clause):
        return []
    if P("tempo_fast").search(clause):
        return [(_say("tempo_fast"), "music", clause, {"kind": "tempo", "tempo": "fast"})]
    if P("tempo_slow").search(clause):
        return [(_say("tempo_slow"), "music", clause, {"kind": "tempo", "tempo": "slow"})]
    return []


def rule_decompose(instruction: str, sense: SoundSense) -> list[RubricItem]:
    """Transparent rule decomposition of an instruction into verifiable items."""
    items: list[RubricItem] = []
    subjects: list[tuple[str, dict[str, Any]]] = []  # (clause, locator) for order items

    def add(question: str, attribute: str, evidence: str, check: dict[str, Any]) -> None:
        if any(it.question.lower() == question.lower() for it in items):
            return
        items.append(RubricItem(id=len(items), question=question, attribute=attribute, evidence=evidence, check=check))

    def names_a_sound(phrase: str) -> bool:
        return sense.names_sound_class(phrase) or sense.has_sound_gloss(phrase) or sense.sounding_animal(phrase)

    clauses = split_clauses(instruction, sense)
    speech_seen = False
    n_speech = 0  # speech clauses so far: the n-th speaker of unquoted turns
    for clause, rel in clauses:
        quoted = quoted_text(clause)
        if quoted and not _quote_is_said(clause, quoted, sense):
            quoted = None  # "a choir holds an 'aah'": the quote names a sound, it is no words said
            clause = clause.replace("'", "").replace('"', "")
        locator: dict[str, Any] | None = None
        if P("only_these").match(clause):
            add(_say("nothing_else"), "other", clause, {"kind": "unverifiable", "why": _say("why_nothing_else")})
            continue
        bare = P("bare_count").match(clause)
        if bare and subjects and subjects[-1][1].get("kind") == "sound":
            # 'leafs through a book, 5 page turns': a bare count after a sound counts that sound
            n = int(bare.group(1)) if bare.group(1).isdigit() else NUMBERS.get(bare.group(1).lower())
            phrase = subjects[-1][1]["phrase"]
            if n is not None:
                add(_say("count_one" if n == 1 else "count", phrase=phrase, n=n), "count", clause,
                    {"kind": "count", "phrase": phrase, "n": n})
                continue
        voices = P("voice_count").match(clause)
        if voices:  # 'two voices': speech, and how many voices (no check counts them: it carries, unverified)
            n = int(voices.group(1)) if voices.group(1).isdigit() else NUMBERS.get(voices.group(1).lower())
            if not speech_seen:
                add(_say("speech_present"), "speech", clause, {"kind": "speech_present"})
                speech_seen = True
            add(_say("voices", n=n), "count", clause, {"kind": "unverifiable", "why": _say("why_voices")})
            continue
        neg = P("negated").match(clause)
        if (neg and not quoted and sense.is_speech(neg.group(1))) or P("nobody").match(clause):
            add(_say("no_speech"), "speech", clause, {"kind": "no_speech"})  # 'no one speaks'
            continue
        if neg and not quoted:  # 'no music, just coins': a sound that must not be there
            phrase = _sound_phrase(neg.group(1))
            if names_a_sound(phrase):
                add(_say("absent", phrase=phrase), "sound_event", clause, {"kind": "absent", "phrase": phrase})
            continue  # ('without pausing' names no sound)
        if quoted or sense.is_speech(clause) or _voice_alone(clause):
            if not speech_seen:
                add(_say("speech_present"), "speech", clause, {"kind": "speech_present"})
                speech_seen = True
            # who speaks: before the quote, else after it ("'Take your marks,' calls a woman")
            head = clause.split(quoted)[0] if quoted else clause
            who = _speaker_gender(head) or (_speaker_gender(clause.split(quoted, 1)[1]) if quoted else None)
            if who is not None:
                add((_say("nth_speaker", n=n_speech + 1, gender=who) if n_speech else _say("speaker", gender=who))
                    if not quoted else _say("said_by", words=quoted, gender=who), "speaker",
                    clause, {"kind": "gender", "gender": who, "words": quoted, "nth": n_speech})
            if quoted:
                add(_say("words", words=quoted), "speech_content", clause,
                    {"kind": "words", "words": quoted})
            for item in _delivery_items(clause, quoted):
                add(*item)
            locator = {"kind": "speech", "words": quoted, "nth": n_speech}
            n_speech += 1
        else:
            alone = P("adj_alone").match(clause)
            if alone and (sense.mostly_adjective(alone.group(1)) or P("adverb_word").search(alone.group(1).lower())):
                continue  # 'pins crash down, loud, and then ...': how the sound before it sounds, no sound of its own
            if P("comparison").match(clause):
                add(_say("matches", text=clause), "loudness", clause,
                    {"kind": "unverifiable", "why": _say("why_comparison")})
                continue
            if P("simile").match(clause):  # 'like a volume control being nudged' says what it resembles, not a sound
                add(_say("matches", text=clause), "other", clause,
                    {"kind": "unverifiable", "why": _say("why_simile")})
                continue
            phrase = _sound_phrase(clause)
            # a sound event no AudioSet class is close to ('a triangle is struck', 'a chimpanzee') is still a
            # separate sound to find, count and order; only what it is stays unverifiable
            if (sense.names_sound_class(phrase) or P("sound_verb").search(clause) or sense.has_sound_gloss(phrase)
                    or sense.sounding_animal(phrase) or _subject_verb(clause, sense)):
                count = _count_in(clause)
                add(_say("sound", phrase=phrase), "music" if names_music(phrase) else "sound_event",
                    clause, {"kind": "sound", "phrase": phrase})
                if count is not None:
                    add(_say("count_one" if count == 1 else "count", phrase=phrase, n=count), "count", clause,
                        {"kind": "count", "phrase": phrase, "n": count})
                locator = {"kind": "sound", "phrase": phrase}
            for item in _tempo_items(clause):
                add(*item)
            if locator is None and not names_music(clause) and not (P("louder").search(clause)
                                                                    or P("quieter").search(clause)):
                add(_say("matches", text=clause), "other", clause,
                    {"kind": "unverifiable", "why": _say("why_unnamed")})
        if P("louder").search(clause):
            add(_say("louder"), "loudness", clause, {"kind": "loudness", "trend": "increasing"})
        elif P("quieter").search(clause):
            add(_say("quieter"), "loudness", clause, {"kind": "loudness", "trend": "decreasing"})
        if locator is not None:
            if rel in ("after", "before") and subjects:
                prev_clause, prev_loc = subjects[-1]
                first, second = (prev_loc, locator) if rel == "after" else (locator, prev_loc)
                fc, sc = (prev_clause, clause) if rel == "after" else (clause, prev_clause)
                add(_say("order", first=_brief(fc), second=_brief(sc)), "order", f"{prev_clause} ... {clause}",
                    {"kind": "order", "first": first, "second": second})
            subjects.append((clause, locator))
    if not items:
        add(_say("matches", text=instruction.strip()), "other", instruction,
            {"kind": "unverifiable", "why": _say("why_nothing_read")})
    return items


def _brief(clause: str, n: int = 8) -> str:
    w = clause.split()
    return " ".join(w[:n]) + (" ..." if len(w) > n else "")


def rule_filter(instruction: str, items: list[RubricItem]) -> list[RubricItem]:
    """Keep items grounded in the instruction (their evidence words occur in it) and not duplicated."""
    inst = set(words_of(instruction))
    seen: set[str] = set()
    for it in items:
        key = it.question.lower()
        words = [w for w in words_of(it.evidence) if len(w) > 2]
        grounded = not words or sum(w in inst for w in words) / len(words) >= 0.6
        if key in seen:
            it.kept, it.drop_reason = False, _say("dropped_duplicate")
        elif not grounded:
            it.kept, it.drop_reason = False, _say("dropped_ungrounded")
        seen.add(key)
    return items


def read_rubric(text: str, sense: SoundSense) -> L.RubricReading:
    """The rule reading of a rubric instruction: its kept items as typed checks, and the content words of
    the instruction that no item came from (a clause the reader skipped), in order."""
    items = [it for it in rule_filter(text, rule_decompose(text, sense)) if it.kept]
    read = [L.RubricReadItem(question=it.question, evidence=it.evidence, check=L.as_check(it.check)) for it in items]
    used: set[str] = set()
    for it in items:
        used.update(L._tokens(it.evidence))
    function = set(L.phrases()["function_words"])
    accounted: list[str] = []
    unaccounted: list[str] = []
    for w in L._tokens(text):
        (accounted if w in used or w in function or w.isdigit() else unaccounted).append(w)
    return L.RubricReading(text=text, items=read, accounted=accounted, unaccounted=list(dict.fromkeys(unaccounted)))
