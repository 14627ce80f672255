"""What a question's wording and each choice claim, read from the cue tables (data/cues.toml).

The verifiers compare measurements with these readings; they never match the English themselves. Each
function reads one kind of claim: which of two things a comparison choice names and in which direction, what
a count question counts, which word a 'how often is X said' question names, how many days a day-offset
question moves and which way, and the closed classes a choice names (side, gender, pace, trend, contour,
mode, relation in time).
"""

from __future__ import annotations

from typing import Literal

from audiomind.language import cues
from audiomind.language.numbers import number_in

Subject = Literal["first", "second"]
Relation = Literal["gt", "lt", "eq"]


def _either(text: str, one: str, other: str) -> bool:
    return cues.has(one, text) and not cues.has(other, text)


def comparison_claim(choice: str, question: str, dim: str) -> tuple[Subject | None, Relation | None]:
    """(subject, relation) a choice asserts about two things on dimension `dim`: subject 'first' / 'second' /
    None, relation 'gt' / 'lt' / 'eq' / None. A choice that names only a side ('The first one') takes its
    direction from the question ('Which is higher?'); one that names only a direction takes its subject from
    what the question compares against ('compared with the first')."""
    c = choice.lower()
    d = cues.dimension(dim)
    if cues.has("same_as_other", c):
        return None, "eq"
    rel: Relation | None = "gt" if d["greater"].search(c) else "lt" if d["less"].search(c) else None
    fm, sm = cues.search("first_of_two", c), cues.search("second_of_two", c)
    subject: Subject | None = None
    if fm and sm:
        subject = "first" if fm.start() < sm.start() else "second"
    elif fm:
        subject = "first"
    elif sm:
        subject = "second"
    q = question.lower()
    if rel is None and subject is None:
        return None, None
    if rel is None:
        qg, ql = d["greater"].search(q), d["less"].search(q)
        if qg and (not ql or qg.start() < ql.start()):
            rel = "gt"
        elif ql:
            rel = "lt"
    if subject is None and rel in ("gt", "lt"):
        ref = cues.search("compared_with", q)
        if ref and (cues.has("first_of_two", ref.group(3)) or cues.has("second_of_two", ref.group(3))):
            return ("second" if cues.has("first_of_two", ref.group(3)) else "first"), rel
        qf, qs = cues.search("first_of_two", q), cues.search("second_of_two", q)
        subject = "second" if qs and (not qf or qs.start() < qf.start()) else ("first" if qf else "second")
    return subject, rel


def dimensions_named(text: str) -> list[str]:
    """The comparison dimensions whose comparatives the text uses ('which is quieter?' -> ['loudness'])."""
    return [dim for dim in cues.dimensions() if cues.dimension(dim)["greater"].search(text.lower())
            or cues.dimension(dim)["less"].search(text.lower())]


def names_dimension(text: str, dim: str) -> bool:
    """A comparative of `dim`, or (except for length) one of its nouns ('pitch', 'volume')."""
    d, t = cues.dimension(dim), text.lower()
    return bool(d["greater"].search(t) or d["less"].search(t) or (dim != "length" and d["noun"].search(t)))


def names_two_things(text: str) -> bool:
    """The text speaks of two things ('both', 'the pair', 'the first ... the second')."""
    return cues.has("two_things", text) or (cues.has("first_of_two", text) and cues.has("second_of_two", text))


def names_one_of_two(text: str) -> bool:
    return cues.has("first_of_two", text) or cues.has("second_of_two", text)


def counted_noun(question: str) -> str:
    """What a count question counts: 'speakers', 'words', 'notes', 'gaps' (interruptions of a sound: 'how many
    gaps', 'how many times does it cut out') or 'events', from the noun after 'how many' / 'number of' /
    'count the' (not from any word anywhere: 'the speaker says X' counts X)."""
    m = cues.search("counted_noun", question)
    noun = m.group(1) if m else ""
    if cues.fullmatch("speaker_noun", noun):
        return "speakers"
    target = cues.search("quoted", question) or cues.search("names_a_word", question)
    if noun in ("word", "words", "syllables") or (cues.has("asks_often", question)
                                                  and (cues.has("say_verb", question) or target)):
        return "words"
    occurrences = not noun or cues.fullmatch("occurrence_noun", noun) or cues.has("asks_often", question)
    if cues.has("counts_interruptions", question) or (occurrences and cues.has("interruption_verb", question)):
        return "gaps"
    if noun in ("note", "notes", "pitches"):
        return "notes"
    return "events"


def said_word(question: str, stopwords: frozenset[str] = frozenset()) -> str | None:
    """The word or phrase a 'how often is X said' question names: quoted, or after say / repeat / mention."""
    quoted = cues.search("quoted", question)
    if quoted:
        return quoted.group(1)
    m = cues.search("said_word", question)
    return m.group(1) if m and m.group(1) not in stopwords else None


def day_shift(question: str) -> int:
    """How many days a day-offset question moves, signed (-2 for 'two days earlier'; 1 by default)."""
    m = cues.search("n_days", question)
    n = int(number_in(m.group(1)) or 1) if m else 1
    return -n if cues.has("earlier", question) else n


def side(choice: str) -> str | None:
    return ("left" if _either(choice, "left", "right") else "right" if _either(choice, "right", "left")
            else "center" if cues.has("center", choice) else None)


def gender(choice: str) -> str | None:
    return "male" if _either(choice, "male", "female") else "female" if _either(choice, "female", "male") else None


def pace(choice: str) -> str | None:
    if cues.has("fast", choice) and not cues.has("negated", choice):
        return "fast"
    if cues.has("slow", choice) and not cues.has("negated", choice):
        return "slow"
    return "normal" if cues.has("normal", choice) else None


def trend(choice: str) -> str | None:
    return cues.first_in("trend", choice, ("increasing", "decreasing", "fluctuating", "steady"))


def contour(choice: str) -> str | None:
    return cues.first_in("contour", choice, ("arch", "valley", "rising", "falling", "flat"))


def mode(choice: str) -> str | None:
    return "major" if cues.has("major", choice) else "minor" if cues.has("minor", choice) else None


def named_tonic(choice: str) -> str | None:
    """The tonic letter a choice names with its mode ('A minor' -> 'a')."""
    m = cues.search("named_key", choice)
    return m.group(1) if m else None


def relation(choice: str) -> str | None:
    """'before' or 'after' as a choice states a relation in time ('Ahead of it', 'Afterwards')."""
    return "before" if _either(choice, "before", "after") else "after" if _either(choice, "after", "before") else None


def relation_subject(question: str) -> str | None:
    """What a relation question asks about: 'sound' when voice words follow the relation word ('is the chime
    before the announcement?'), 'speech' when they come before it; None without a relation and a voice."""
    m = cues.search("relation", question)
    if m is None or not cues.has("voice_word", question):
        return None
    return "sound" if cues.has("voice_word", question.lower()[m.end(): m.end() + 40]) else "speech"
