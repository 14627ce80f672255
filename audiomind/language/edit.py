"""Typed readings of an edit instruction: `EditSpec`, and the rule reader that fills it.

An `EditSpec` is the hand-off between reading an instruction and judging an edit: a list of operations (add /
delete / replace), each with its sound, where it goes or where it is, and for a replacement the new sound, so a
compound instruction fits ("Please lose the applause and add a bell" -> delete applause + add bell). It also
says which words of the instruction the reading accounted for and names the ones it did not: a judge that
reads a spec with unaccounted content that matters abstains instead of scoring a guess.

The rule reader looks for the cue of each operation anywhere in a clause (a verb of replacing, removing or
adding, or a construction that says it: "rather than X, Y", "X should go", "no more X", "without X"), takes
the sound's noun phrase from around the cue, and keeps a place clause ("after he signs off", "right at the
top") with the sound for `split_position`. Its English phrases (verbs of adding, removing, replacing; polite
openings; place nouns) are the tables of `data/edit_phrases.json`; the grammar that combines them is here.
Many of its constructions come from the failures of thirteen held-out judge sets (see evals/README.md).
An instruction with no cue reads as no operation, never as a guess.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

Reading = tuple[str, list[str], list[str]]
"""The legacy reading (operation, added phrases, removed phrases) with each place kept inside its phrase."""

_DATA = Path(__file__).resolve().parent / "data"


# ---------------------------------------------------------------- the frame


class Position(BaseModel):
    """Where the instruction puts a sound (or where the sound to remove is): after / before a reference, at
    the start or end, in the middle, under the rest (background), at a time, or anywhere; `words` as
    written ('after the man stops talking')."""

    relation: Literal["after", "before", "start", "end", "middle", "background", "time", "anywhere"]
    reference: str | None = None
    time_s: float | None = None
    words: str = ""


class EditOperation(BaseModel):
    """One operation of an edit: add a sound, delete one, or replace one by another."""

    op: Literal["add", "delete", "replace"]
    sound: str = Field(description="the noun phrase of the sound added, deleted, or replaced (without its place)")
    replacement: str | None = Field(None, description="the new sound, for replace only")
    position: Position = Field(default_factory=lambda: Position(relation="anywhere"))
    words: str = Field("", description="the words of the instruction this operation was read from")


class EditSpec(BaseModel):
    """What an edit instruction asks for, and how much of it the reading understood."""

    text: str
    operations: list[EditOperation] = Field(default_factory=list)
    keep: list[str] = Field(default_factory=list, description="what the instruction says to keep as it is")
    accounted: list[str] = Field(default_factory=list, description="the words the reading accounted for")
    unaccounted: list[str] = Field(default_factory=list,
                                   description="content words the reading did not account for, in order")
    reader: str = "rules"
    _raw: list[Reading] = PrivateAttr(default_factory=list)  # the clause readings, places kept in their phrases

    @property
    def understood(self) -> bool:
        """Some operation was read and no content word was left unread."""
        return bool(self.operations) and not self.unaccounted

    def abstain_reason(self) -> str | None:
        """Why a judge should not score from this reading (None when it can): no operation read, or at least
        `abstain.min_unaccounted_words` content words (data/edit_phrases.json) left unread, which may hold
        an operation the reading missed ('make the hum quieter and add a bell')."""
        if not self.operations:
            return f"no add, delete or replace operation could be read from '{self.text}'"
        if len(self.unaccounted) >= phrases()["abstain"]["min_unaccounted_words"]:
            return f"the reading did not account for: {', '.join(repr(w) for w in self.unaccounted)}"
        return None

    def legacy(self) -> Reading | None:
        """(operation, added, removed) as `audiomind.judges.instruction.read_instruction` returns it: one
        operation kind when all are the same, 'replace' when sounds are both added and removed."""
        if not self.operations:
            return None
        added, removed = [], []
        for o in self.operations:
            if o.op == "add":
                added.append(_with_place(o.sound, o.position))
            elif o.op == "delete":
                removed.append(_with_place(o.sound, o.position))
            else:
                added.append(o.replacement or "")
                removed.append(_with_place(o.sound, o.position))
        if self._raw:
            added, removed = [a for r in self._raw for a in r[1]], [x for r in self._raw for x in r[2]]
        op = "replace" if added and removed else ("add" if added else "delete")
        return op, added, removed


def _with_place(sound: str, pos: Position) -> str:
    return f"{sound} {pos.words}".strip() if pos.relation != "anywhere" and pos.words else sound


# ---------------------------------------------------------------- phrase tables


@functools.lru_cache(maxsize=1)
def phrases() -> dict:
    """The reader's phrase tables (data/edit_phrases.json)."""
    return json.loads((_DATA / "edit_phrases.json").read_text())


def _token_rx(tok: str) -> str:
    alts = tok.strip("[]()").split("|")
    return "(?:" + "|".join(re.escape(a).replace("_", r"\s+") for a in alts) + ")"


def phrase_rx(phrase: str) -> str:
    """A table phrase as a regex: 'take (out|away|off)' -> take\\s+(?:out|away|off); 'swap [out]' -> swap
    with an optional 'out'."""
    out = []
    for i, tok in enumerate(phrase.split()):
        body = _token_rx(tok)
        if i == 0:
            out.append(rf"(?:{body}\s+)?" if tok.startswith("[") else body)
        else:
            out.append(rf"(?:\s+{body})?" if tok.startswith("[") else rf"\s+{body}")
    return "".join(out)


def alt(name: str) -> str:
    """One non-capturing alternation of a table's phrases, the longest first."""
    table = phrases()[name]
    items = sorted(table if isinstance(table, list) else table.keys(), key=len, reverse=True)
    return "(?:" + "|".join(phrase_rx(p) for p in items) + ")"


def _words(name: str) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(phrases()[name], key=len, reverse=True))


# ---------------------------------------------------------------- the grammar (built from the tables)

# how people ask: 'could you ...', 'please ...', 'I'd like you to ...'
_POLITE = re.compile(rf"^(?:(?:{_words('interjections')})\b[\s,!.]+|{alt('polite_lead')}\s+)+", re.IGNORECASE)
_POLITE_TAIL = re.compile(rf"(?:[\s,]+{alt('polite_tail')})+$", re.IGNORECASE)
_CLIP = _words("clip_nouns")
_KEEP = re.compile(rf"^(?:and\s+|but\s+)?(?:{_words('keep_verbs')})\s+(?P<x>.+?)(?:\s+(?:as\s+(?:it\s+)?is|"
                   r"untouched|intact|alone|the\s+same))?$", re.IGNORECASE)
_KEEP_STATE = re.compile(rf"^(?:and\s+|but\s+)?(?P<x>.+?)\s+(?:{_words('keep_states')})(?:\s+(?:as\s+(?:it\s+)?is|"
                         r"the\s+same|untouched|in\s+place))?$", re.IGNORECASE)

# words that end the sound's noun phrase: another clause begins
_NP_END = re.compile(r"\s*(?:,|;|:|[.?!](?:\s|$)|\s-\s|\s--\s|\s–\s|—|\bbut\b|\band\s+(?:keep|leave|make|don't|do\s+not|then)\b|"
                     r"\bso\s+(?:that|it)\b|\bwhile\s+keeping\b|\bwithout\s+(?:touching|changing|moving|shifting|altering)\b|"
                     r"\bkeeping\b|\bleaving\b)")
# a place clause that may come first ('After he signs off, finish on a gong'): moved after the rest
_LEAD_PLACE = re.compile(r"^(?P<pos>(?:(?:right|just|shortly|immediately)\s+)?(?:once|after|when|as\s+soon\s+as|"
                         r"before|following|in|into|during|at|between|under|underneath|beneath|behind|over|while|"
                         r"throughout|ahead\s+of|up\s+front)\b[^,]*),\s*(?P<rest>.+)$", re.IGNORECASE)

# ---- replacing
_REP = re.compile(rf"\b{alt('replace_verbs')}\s+(?P<x>.+?)\s+(?:with|by|for|into|to)\s+(?P<y>.+)$", re.IGNORECASE)
_SUB = re.compile(r"\bsubstitute\s+(?P<y>.+?)\s+for\s+(?P<x>.+)$", re.IGNORECASE)
_SUB_IN = re.compile(r"\b(?:swap|sub|switch|bring|put)\s+in\s+(?P<y>.+?)\s+(?:for|in\s+place\s+of|instead\s+of)\s+"
                     r"(?P<x>.+)$", re.IGNORECASE)
_INSTEAD_LEAD = re.compile(r"^(?:rather\s+than|instead\s+of|in\s+place\s+of)\s+(?P<x>[^,]+),\s*(?P<rest>.+)$",
                           re.IGNORECASE)
_INSTEAD_TAIL = re.compile(r"^(?P<rest>.+?)\s+(?:rather\s+than|instead\s+of|in\s+place\s+of)\s+(?P<x>.+)$",
                           re.IGNORECASE)
# 'where the dog barks, put a cat' / 'use castanets where the shaker is now'
_WHERE_LEAD = re.compile(r"^where\s+(?P<x>[^,]+),\s*(?P<rest>.+)$", re.IGNORECASE)
_WHERE_TAIL = re.compile(r"^(?P<rest>.+?)\s+where\s+(?P<x>.+)$", re.IGNORECASE)
# 'put a beep where the pause is', 'where she stops talking': a place or a time, not a sound to replace
_PLACE_NOT_SOUND = re.compile(r"\b(?:pause|gap|silence|break|quiet|space|end|start|beginning|middle|he|she|they|"
                              r"speaker|talk\w*|speak\w*|say\w*|said|words?|sentence|voice|stops?|finish\w*|"
                              r"ends?|starts?|begins?)\b", re.IGNORECASE)
# 'I'd rather have a sax than the organ', 'I prefer a harp to the piano'
_RATHER = re.compile(r"^(?:i(?:'d|\s+would)\s+rather\s+(?:have|hear|get|use|go\s+with)|i(?:'d|\s+would)?\s*prefer)\s+"
                     r"(?P<y>.+?)\s+(?:than|to|over)\s+(?P<x>.+)$", re.IGNORECASE)
_SHOULD_BE = re.compile(r"^(?P<x>.+?)\s+(?:should|must|needs?\s+to|ought\s+to|has\s+to|could|can|would)\s+"
                        r"(?:be(?:come)?|turn\s+into|sound\s+like)\s+(?P<y>.+)$", re.IGNORECASE)
_MODAL_BE = re.compile(r"^(?:could|can|would|should)\s+(?P<x>.+?)\s+(?:be(?:come)?|turn\s+into|sound\s+like)\s+"
                       r"(?P<y>.+)$", re.IGNORECASE)
_MAKE_INTO = re.compile(r"^make\s+(?P<x>(?:the|that|this|those|these|it|them)\b(?:(?!\band\b).)*?)\s+(?:into\s+)?"
                        r"(?P<y>(?:a|an|some)\s+.+)$", re.IGNORECASE)
_NOT_A_SOUND_STATE = re.compile(r"^(?:louder|quieter|softer|shorter|longer|removed|deleted|gone|cut|muted|dropped|"
                                r"taken|silenced|left|faster|slower|higher|lower|clearer)\b", re.IGNORECASE)

# ---- removing
_DEL_VERB = alt("delete_verbs")
_DEL = re.compile(rf"^(?:{_DEL_VERB})\s+(?P<x>.+)$", re.IGNORECASE)
# 'take the bongos out', 'get the dog barking out of this', 'pull the pad out from under the voice'
_DEL_PARTICLE = re.compile(rf"^(?:{_words('delete_particle_verbs')})\s+(?P<x>.+?)\s+"
                           r"(?:out|away|off)\b(?:\s+(?:of|from)\b.*|\s+the\s+\w+)?$", re.IGNORECASE)
_GONE = re.compile(r"^(?:i\s+(?:want|need|'d\s+like)\s+)?(?P<x>.+?)\s+(?:(?:should|must|has\s+to|have\s+to|needs?\s+to|"
                   r"can|could)\s+(?:go|disappear|come\s+out|be\s+(?:removed|deleted|gone|cut|muted|dropped|taken\s+out|"
                   r"silenced|left\s+out))\b.*|"
                   # 'car engine goes, the lady stays': the verb closes its clause ('a bell goes off' is no removal)
                   r"(?:goes|has\s+got\s+to\s+go|disappears|comes\s+out)(?:\s*[,;].*)?)$", re.IGNORECASE)
_WANT_GONE = re.compile(r"^i\s+(?:want|need|'d\s+like|would\s+like)\s+(?P<x>.+?)\s+(?:gone|removed|deleted|out|"
                        r"taken\s+out|cut|muted)\b.*$", re.IGNORECASE)
_UNWANTED = re.compile(r"^i\s+(?:don't|do\s+not)\s+(?:want|need|like)\s+(?P<x>[^,]+?)(?:\s+(?:in\s+there|in\s+here|"
                       r"there|here|anymore|any\s+more|at\s+all))?(?:\s*,.*)?$", re.IGNORECASE)
_NO_MORE = re.compile(r"^(?:no\s+more|no|lose\s+all)\s+(?P<x>.+)$", re.IGNORECASE)
_WITHOUT = re.compile(r"\bwithout\s+(?P<x>.+)$", re.IGNORECASE)
# 'the hum at the end - get rid of it': a topic, then a verb on a pronoun
_TOPIC = re.compile(r"^(?P<topic>.+?)\s*(?::|\s-\s|\s–\s|—|,)\s*(?P<rest>.+)$")
_PRONOUN = r"(?:it|them|that|those|this|these)"
# a pronoun standing alone ('cut it', 'get rid of them please'), not a determiner ('lose that barking dog')
_ALONE = r"(?=\s*$|\s*[,.;!?]|\s+(?:out|away|off|from|please|too|as\s+well|entirely|completely|altogether|for\s+me)\b)"

# ---- adding
_ADD = re.compile(rf"^(?:{alt('add_verbs')})\s+(?P<x>.+)$", re.IGNORECASE)
_DROP_IN = re.compile(r"^drop\s+(?P<x>.+?\s+(?:into|in|onto)\s+.+)$", re.IGNORECASE)
_PARTICLE_IN = re.compile(rf"^(?P<v>{_words('add_particle_verbs')})\s+"
                          r"(?P<x>.+?)\s+(?:in|on)\b\s*(?P<rest>.*)$", re.IGNORECASE)
# 'begin the recording with a harp phrase', 'after he signs off, finish on a gong', 'wrap it up with applause'
_BOOKEND = re.compile(rf"^(?P<v>{_words('opening_verbs')}|{_words('closing_verbs')})"
                      rf"\s+(?:the\s+|this\s+)?(?:{_CLIP}|it|things|everything|them)?\s*"
                      r"(?:off\s+|out\s+|up\s+)?(?:with|on|by\s+adding)\s+(?P<x>.+)$", re.IGNORECASE)
# where an added sound goes: the edited clip, said as a place ('add rain to the clip'), is no place
_ADD_TARGET = re.compile(rf"\s+(?:to|into|in|on|over|under|behind)\s+(?:the\s+|this\s+)?(?:{_CLIP}|background)\b.*$",
                         re.IGNORECASE)
_CLIP_REF = re.compile(rf"\s+(?:from|out\s+of|off|in|of)\s+(?:the\s+|this\s+|that\s+)?(?:{_CLIP}|it|this|here|there|"
                       r"sound)\s*$", re.IGNORECASE)
# 'let a dog bark at the end', 'have an owl hoot': a new sound (an indefinite subject) doing something
_LET_DO = re.compile(r"^let\s+(?P<x>(?:a|an|some|two|three|four|five|several|a\s+few)\s+"
                     r"[a-z'-]+)\s+(?P<v>[a-z]+)\b(?P<rest>.*)$", re.IGNORECASE)
# 'have the siren be replaced by a whistle', 'get the hiss removed': a causative with a passive
_CAUSE_PASSIVE = re.compile(rf"^(?:{_words('causatives')})\s+(?!rid\b|sure\b|it\s+so\b)(?P<x>(?:(?!\band\b|\bthen\b)[^,;])+?)\s+(?:be\s+|get\s+)?(?P<verb>"
                            rf"{'|'.join(sorted(phrases()['passive_to_active'], key=len, reverse=True))})\b"
                            r"(?P<rest>.*)$", re.IGNORECASE)


def _clean(s: str) -> str:
    return s.strip().strip(".!?,;:").strip()


def _noun_phrase(s: str) -> str:
    """The sound's words up to where another clause begins ('the castanets but leave the rest' -> 'the
    castanets'), without a leading particle ('out the piano')."""
    s = _clean(s)
    m = _NP_END.search(s)
    if m and m.start() > 0:
        s = s[:m.start()]
    s = re.sub(r"^(?:out|in|off|away|up)\s+", "", s, flags=re.IGNORECASE)
    s = re.sub(r"^(?:only|just)\s+(?=(?:the|that|those|this|these)\b)", "", s, flags=re.IGNORECASE)
    return _clean(_CLIP_REF.sub("", s))


def _new_sound(s: str) -> str:
    """The replacing sound without 'instead' / 'there' / 'in its place'."""
    s = _noun_phrase(s)
    s = re.sub(r"\s+(?:instead|there|in\s+its\s+place|in\s+their\s+place|now)(?:\s+instead)?$", "", s,
               flags=re.IGNORECASE)
    s = re.sub(r"^(?:(?:i(?:'d|\s+would)\s+rather\s+)?(?:hear|have|get)|there\s+should\s+be)\s+", "", s,
               flags=re.IGNORECASE)
    return _clean(s)


def _where_target(s: str) -> str:
    """'the dog barks' / 'the shaker is now' -> the sounding thing ('the dog', 'the shaker'); a plural noun
    after its article alone stays ('the drums')."""
    s = _noun_phrase(s)
    s = re.sub(r"\s+(?:is|are|was|were)(?:\s+(?:now|playing|heard|at\s+the\s+moment))?$", "", _clean(s),
               flags=re.IGNORECASE)
    s = re.sub(r"\s+(?:is|are|was|were)\s+(?=(?:at|in|near|after|before|under|behind)\b)", " ", s, flags=re.IGNORECASE)
    words = s.split()
    last = words[-1].lower() if words else ""
    if len(words) >= 3 and re.fullmatch(r"[a-z]+(?:s|es|ed)", last) and not last.endswith("ss"):
        return " ".join(words[:-1])  # a verb after its subject ('the dog barks', 'the big drum kicks')
    return s


def _verb_object(rest: str) -> str | None:
    """The object of the verb that opens `rest` ('put a cat meowing instead' -> 'a cat meowing')."""
    rest = _POLITE.sub("", _clean(rest))
    m = re.match(r"^(?:i(?:'d|\s+would)\s+(?:rather|like\s+to|prefer\s+to)\s+)?(?:use|put|place|have|play|add|hear|"
                 r"get|give\s+(?:me|us)|want|let's\s+have|let\s+there\s+be|go\s+with|i\s+want|i(?:'d|\s+would)\s+"
                 r"(?:like|prefer|love)|make\s+it|bring\s+in|swap\s+in|drop\s+in|there\s+should\s+be)\s+(?P<y>.+)$",
                 rest, re.IGNORECASE)
    return m.group("y") if m else None


def _replace(s: str) -> Reading | None:
    for rx in (_SUB, _SUB_IN, _RATHER):
        m = rx.search(s) if rx is not _RATHER else rx.match(s)
        if m:
            return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    m = _INSTEAD_LEAD.match(s)
    should = _SHOULD_BE.match(m.group("rest")) if m else None
    if m and (y := _verb_object(m.group("rest")) or (should.group("y") if should else None)):
        return "replace", [_new_sound(y)], [_noun_phrase(m.group("x"))]
    for rx in (_WHERE_LEAD, _WHERE_TAIL):
        m = rx.match(s)
        # ('where the pause is' is a place; 'where the fizzing fuse is at the start' is a sound with a place)
        head = re.split(r"\s+(?:is|are|was|were|sits?|plays?|used\s+to\s+be)\b", m.group("x"))[0] if m else ""
        if m and not _PLACE_NOT_SOUND.search(head) and (y := _verb_object(m.group("rest"))):
            return "replace", [_new_sound(y)], [_where_target(m.group("x"))]
    m = _INSTEAD_TAIL.match(s)
    if m and (y := _verb_object(m.group("rest"))):
        return "replace", [_new_sound(y)], [_noun_phrase(m.group("x"))]
    m = _REP.search(s)
    if m and not re.match(r"^(?:turn|change)\s+(?:up|down)\b", m.group(0), re.IGNORECASE):
        return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    m = _MAKE_INTO.match(s)
    if m:
        return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    for rx in (_MODAL_BE, _SHOULD_BE):
        m = rx.match(s)
        if m and not _NOT_A_SOUND_STATE.match(m.group("y")):
            return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    return None


def _delete(s: str) -> Reading | None:
    for rx in (_WANT_GONE, _GONE, _UNWANTED):
        m = rx.match(s)
        if m:
            return "delete", [], [_noun_phrase(m.group("x"))]
    m = _TOPIC.match(s)
    if m and not _LEAD_PLACE.match(s) and re.match(rf"^(?:{_DEL_VERB}|take|pull|get|cut|leave)\s+{_PRONOUN}{_ALONE}",
                                                   _POLITE.sub("", m.group("rest")), re.IGNORECASE):
        return "delete", [], [_clean(m.group("topic"))]
    drop = _DROP_IN.match(s)
    if drop and re.match(r"^(?:the|that|those|this|these)\b", drop.group("x"), re.IGNORECASE):
        drop = None  # 'drop the screech in the middle' removes a sound that is there
    if drop or re.match(r"^(?:(?:cut|trim|chop)\s+(?:in|to|back|down)|drop\s+in)\b", s, re.IGNORECASE):
        return None  # 'drop a beep into the pause', 'drop in a bark' add; 'cut to', 'trim down' are no removals
    m = _DEL_PARTICLE.match(s)
    if m and not re.match(r"^(?:out|away|off)\b", m.group("x"), re.IGNORECASE):
        return "delete", [], [_noun_phrase(m.group("x"))]
    m = _DEL.match(s)
    if m:
        x = m.group("x")
        # 'clear the shuffle away from the middle': the place stays ('in the middle'), the particle goes
        place = re.search(r"\s+(?:(?:out|away|off)\s+)?from\s+the\s+(?:very\s+)?(start|beginning|end|middle)\b", x,
                          re.IGNORECASE)
        if place:
            x = x[:place.start()] + (" in the middle" if place.group(1).lower() == "middle"
                                     else f" at the {place.group(1).lower()}") + x[place.end():]
        x = re.sub(r"\s+(?:out|away|off)(?:\s+(?:of|from)\b.*)?$", "", x, flags=re.IGNORECASE)
        x = re.sub(rf"\s+from\s+(?:the\s+|this\s+)?(?:{_CLIP}|it|this|here|start|end|"
                   r"beginning)\b.*$", "", x, flags=re.IGNORECASE)
        return "delete", [], [_noun_phrase(x)]
    m = _NO_MORE.match(s)
    if m:
        return "delete", [], [_noun_phrase(m.group("x"))]
    m = _WITHOUT.search(s)
    if m and re.match(r"^(?:i\s+want|give\s+me|make\s+it|play|have|can\s+i\s+have|let\s+me\s+hear|"
                      r"i(?:'d|\s+would)\s+like)\b", s, re.IGNORECASE):
        return "delete", [], [_noun_phrase(m.group("x"))]
    return None


def _gerund(verb: str) -> str:
    """'bark' -> 'barking', 'chime' -> 'chiming', 'hum' -> 'humming'; a verb already in -ing stays."""
    v = verb.lower()
    if v.endswith("ing"):
        return v
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", v):
        return v + v[-1] + "ing"
    return v + "ing"


def _add(s: str) -> Reading | None:
    m = _BOOKEND.match(s)
    if m:
        where = "at the start" if m.group("v").lower() in phrases()["opening_verbs"] else "at the end"
        x = _clean(m.group("x"))
        x = x if _keeps_place(x) else _clean(_NP_END.split(x, maxsplit=1)[0])
        return "add", [x if split_position(x)[1] is not None else f"{x} {where}"], []  # (its own place wins)
    let = _LET_DO.match(s)
    if let and not re.fullmatch(r"(?:be|get|go|stay|stop|start|begin|end|finish|speak|talk|say|in|on|at|out|"
                                r"there|here|after|before|into|under|over)",
                                let.group("v"), re.IGNORECASE):
        # 'let a dog bark at the end' -> 'a dog barking at the end'
        return "add", [_clean(f"{let.group('x')} {_gerund(let.group('v'))}{let.group('rest')}")], []
    particle = _PARTICLE_IN.match(s)
    if particle and (not particle.group("rest") or re.match(
            r"^(?:(?:right|just|shortly|immediately)\s+)?(?:after|before|at|once|when|between|during|under|over|"
            r"behind|beneath|underneath|as\s+soon\s+as|somewhere|there|here|the\s+middle|the\s+end|the\s+start|"
            r"the\s+background)\b", particle.group("rest"), re.IGNORECASE)):
        s = f"{particle.group('v')} in {particle.group('x')} {particle.group('rest') or ''}".strip()
    m = _DROP_IN.match(s) or _ADD.match(s)
    if m:
        x = _ADD_TARGET.sub("", m.group("x"))
        x = re.sub(r"\s+(?:on|in)$", "", _clean(x), flags=re.IGNORECASE)  # ('tack a tune on', 'put it in')
        x = re.sub(r"^(?:in|on)\s+", "", x, flags=re.IGNORECASE)
        x = _clean(_NP_END.split(x, maxsplit=1)[0]) if not _keeps_place(x) else _clean(x)
        if x and not re.fullmatch(_PRONOUN, x, re.IGNORECASE):
            return "add", [x], []
    return None


def _keeps_place(x: str) -> bool:
    """A comma inside an added phrase may separate two place clauses ('leading into her voice, right at the
    top'): keep the whole so both are read."""
    return bool(re.search(r",\s*(?:(?:right|just)\s+)?(?:at|before|after|once|when|in|under|over|behind|between)\b",
                          x, re.IGNORECASE))


# an operation said in the passive, its sound first ('a couple of coughs should be added', 'the coins are to
# be removed', 'the whip needs to be replaced with a clang'): read as the active form with the same words
_PASSIVE_VERBS = "|".join(phrase_rx(p) for p in sorted(phrases()["passive_to_active"], key=len, reverse=True))
_PASSIVE = re.compile(
    r"^(?P<lead>(?:.*[,;:]\s+)?)(?P<x>[^,;:]+?)\s+(?:(?:should|must|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|"
    r"ought\s+to|can|could|will|shall|may)\s+(?:be|get)|is|are|gets?|ha(?:s|ve)\s+been)\s+(?P<verb>"
    rf"{_PASSIVE_VERBS})\b(?P<rest>.*)$", re.IGNORECASE)
# ... or asked as a question ('could the dripping behind her be taken away?')
_ASKED_PASSIVE = re.compile(rf"^(?:could|can|would|will|should|might)\s+(?P<x>.+?)\s+(?:be|get)\s+(?P<verb>{_PASSIVE_VERBS})\b"
                            r"(?P<rest>.*)$", re.IGNORECASE)


def _active(s: str) -> str:
    active = phrases()["passive_to_active"]
    for rx in (_ASKED_PASSIVE, _CAUSE_PASSIVE):
        m = rx.match(s)
        if m:
            return f"{active[' '.join(m.group('verb').lower().split())]} {m.group('x').strip()}{m.group('rest')}"
    m = _PASSIVE.match(s)
    if not m:
        return s
    verb = active[" ".join(m.group("verb").lower().split())]
    return f"{m.group('lead')}{verb} {m.group('x').strip()}{m.group('rest')}"


# 'make it so that a truck pulls away in the background': the state the edit should leave
_STATE_FRAME = re.compile(r"^(?:make\s+(?:it\s+)?(?:so\s+)?that|make\s+sure(?:\s+that)?|see\s+to\s+it\s+that|"
                          r"arrange\s+(?:it\s+|things\s+)?so\s+that|set\s+it\s+up\s+so(?:\s+that)?)\s+(?P<x>.+)$",
                          re.IGNORECASE)


def _normalise(instruction: str) -> str:
    s = " ".join(instruction.strip().split()).rstrip(".!?")
    s = re.sub(r"\s*\([^()]*\)", "", s)  # ('a bowling strike (ball rolling, pins going down)' describes it)
    return _POLITE_TAIL.sub("", _POLITE.sub("", s)).strip()


def read_clause(instruction: str) -> Reading | None:
    """(operation, added, removed) from one edit clause, or None when it says no add, remove or replace."""
    s = _normalise(instruction)
    state = _STATE_FRAME.match(s)
    if state:  # the state asked for: an edit verb inside it reads as usual, else it names what is new
        return read_clause(state.group("x")) or _state(_clean(state.group("x")))
    s = _active(s)
    if not s:
        return None
    for attempt in (s, _moved_place(s)):
        if attempt is None:
            continue
        for read in (_replace, _delete, _add):
            got = read(attempt)
            if got is not None and all(got[1] + got[2]) and (got[1] or got[2]):
                return _resolve_pronoun(got, s)
    topic = _TOPIC.match(s)
    if topic and not _LEAD_PLACE.match(s):  # 'Those bat cracks at the end: make them a bouncing ball instead'
        got = read_clause(topic.group("rest"))
        if got is not None and any(re.fullmatch(_PRONOUN, x.strip(), re.IGNORECASE) for x in got[2]):
            return _resolve_pronoun(got, s)
    return None


def _resolve_pronoun(got: Reading, s: str) -> Reading:
    """'The axe chopping at the start: change it into a chisel': a pronoun as the sound to remove or replace
    stands for the topic said before the colon or dash."""
    m = _TOPIC.match(s)
    if not m or not any(re.fullmatch(_PRONOUN, x.strip(), re.IGNORECASE) for x in got[2]):
        return got
    topic = _clean(m.group("topic"))
    return got[0], got[1], [topic if re.fullmatch(_PRONOUN, x.strip(), re.IGNORECASE) else x for x in got[2]]


def _state(x: str) -> Reading | None:
    """A state with no edit verb: 'a truck pulls away where the chainsaw is now' replaces the chainsaw; 'a truck
    is pulling away in the background' adds it."""
    for rx in (_WHERE_TAIL, _INSTEAD_TAIL):
        m = rx.match(x)
        if m and not _PLACE_NOT_SOUND.search(m.group("x")):
            return "replace", [_new_sound(m.group("rest"))], [_where_target(m.group("x"))]
    x = re.sub(r"^there\s+(?:is|are|'s)\s+", "", x, flags=re.IGNORECASE)
    return ("add", [x], []) if x else None


def _moved_place(s: str) -> str | None:
    """A place said first, moved after the rest: 'Once he finishes, bring in applause' -> 'bring in applause
    once he finishes' (None when the sentence does not open with one)."""
    m = _LEAD_PLACE.match(s)
    if not m:
        return None
    pos = m.group("pos")
    return f"{_POLITE.sub('', m.group('rest')).rstrip('.!?')} {pos[0].lower()}{pos[1:]}"


# ---------------------------------------------------------------- compound instructions

# where a second operation may begin: 'X and add Y', 'X, then add Y', 'X; add Y', 'X. Add Y'
_JOINT = re.compile(r"\s*(?:[;.!?]\s+|,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+)", re.IGNORECASE)


def _keep_clause(clause: str) -> str | None:
    c = _clean(_POLITE.sub("", _clean(clause)))
    for rx in (_KEEP, _KEEP_STATE):
        m = rx.match(c)
        if m and len(m.group("x").split()) <= 6 and not read_clause(c):
            return _clean(m.group("x"))
    return None


def _split_ops(text: str) -> list[tuple[str, Reading]] | None:
    """The clauses of a compound instruction, each read on its own, or None when no split gives every part an
    operation (or a keep clause) and at least two operations."""
    s = " ".join(text.split())
    for m in _JOINT.finditer(s):
        left, right = s[:m.start()], s[m.end():]
        if not left.strip() or not right.strip():
            continue
        r_right = read_clause(right)
        if r_right is None:
            continue
        r_left = read_clause(left)
        if r_left is None:
            continue
        rest = _split_ops(right) or [(right, r_right)]
        out = [(left, r_left)]
        for words, r in rest:
            prev = out[-1][1]
            if r[2] and all(re.fullmatch(_PRONOUN, x.strip(), re.IGNORECASE) for x in r[2]):
                # 'I don't want the shamisen in there, take it out': the pronoun is the sound before it
                if r[0] == prev[0] == "delete":
                    continue
                r = (r[0], r[1], list(prev[2] or prev[1]))
            out.append((words, r))
        return out if len(out) >= 2 else None
    return None


# ---------------------------------------------------------------- the reader


def _ops_from(reading: Reading, words: str) -> list[EditOperation]:
    op, added, removed = reading
    out = []
    if op == "add":
        for a in added:
            core, pos = split_position(a)
            out.append(EditOperation(op="add", sound=core, position=pos or Position(relation="anywhere"), words=words))
    elif op == "delete":
        for r in removed:
            core, pos = split_position(r)
            out.append(EditOperation(op="delete", sound=core, position=pos or Position(relation="anywhere"),
                                     words=words))
    else:
        core, pos = split_position(removed[0])
        new, _ = split_position(added[0])
        out.append(EditOperation(op="replace", sound=core, replacement=new,
                                 position=pos or Position(relation="anywhere"), words=words))
    return out


def _tokens(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", s.lower())


@functools.lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    """Every word of the tables: cue verbs, polite words, place nouns, function words."""
    t = phrases()
    out: set[str] = set()
    for name, table in t.items():
        if name.startswith("_") or not isinstance(table, (list, dict)) or name == "abstain":
            continue
        for p in (table if isinstance(table, list) else [*table.keys(), *table.values()]):
            out.update(_tokens(p.replace("_", " ").replace("[", " ").replace("]", " ").replace("(", " ")
                               .replace(")", " ").replace("|", " ")))
    return frozenset(out)


_PLACE_WORDS = frozenset(_tokens("after before once when following during while under underneath beneath behind over "
                                 "throughout between middle halfway background top front right just shortly "
                                 "immediately directly very up leading going ahead prior precedes follows comes "
                                 "separates divides splits whole entire"))


def _account(text: str, ops: list[EditOperation], keep: list[str]) -> tuple[list[str], list[str]]:
    used: set[str] = set()
    for o in ops:
        for part in (o.sound, o.replacement or "", o.position.words, o.position.reference or ""):
            used.update(_tokens(part))
    for k in keep:
        used.update(_tokens(k))
    known = _known_words() | _PLACE_WORDS
    accounted: list[str] = []
    unaccounted: list[str] = []
    for w in _tokens(text):
        said = w in used or w in known or w.isdigit() or _gerund(w) in used  # ('let a dog bark' -> 'barking')
        (accounted if said else unaccounted).append(w)
    return accounted, list(dict.fromkeys(unaccounted))


def read_edit(text: str) -> EditSpec:
    """The rule reading of an edit instruction: its operations, what to keep, and the words it accounted for."""
    sentence = " ".join((text or "").split())
    keep: list[str] = []
    parts = _split_ops(_normalise(sentence)) if sentence else None
    ops: list[EditOperation] = []
    raw: list[Reading] = []
    if parts:
        for words, reading in parts:
            ops.extend(_ops_from(reading, words))
            raw.append(reading)
    else:
        whole = read_clause(sentence) if sentence else None
        if whole is not None:
            ops = _ops_from(whole, sentence)
            raw.append(whole)
        else:  # 'make the hum quieter and add a bell': the part read stands, the rest is named as unread
            for m in _JOINT.finditer(_normalise(sentence)):
                right = _normalise(sentence)[m.end():]
                got = read_clause(right) if right.strip() and "," not in m.group(0) else None
                if got is not None:
                    ops, raw = _ops_from(got, right), [got]
                    break
    # a clause that only says what stays ('keep the voice', 'her Norwegian stays as it is')
    for clause in re.split(r"\s*(?:[;,.]|\s-\s|\s--\s|\bbut\b|\band\b)\s*", sentence):
        k = _keep_clause(clause) if clause.strip() else None
        if k and k not in keep:
            keep.append(k)
    accounted, unaccounted = _account(sentence, ops, keep)
    spec = EditSpec(text=text, operations=ops, keep=keep, accounted=accounted, unaccounted=unaccounted)
    spec._raw = raw
    return spec


def read_instruction(instruction: str) -> Reading | None:
    """(operation, added, removed) from an edit instruction, or None when it says no add, remove or replace
    (the legacy form of `read_edit`: a compound reads as one kind when all its operations are the same kind,
    else as 'replace' with every added and removed sound)."""
    return read_edit(instruction).legacy()


# ---------------------------------------------------------------- where a sound goes


_NEAR = rf"(?:(?:{_words('near')})\s+)?"
_START = _words("start_nouns")
_END = _words("end_nouns")
_GAP = _words("gap_nouns")
_POS = [
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:after|once|when|as\s+soon\s+as|following|the\s+moment|"
                r"(?:that|which)\s+(?:follows?|comes?\s+after))\s+(?P<ref>.+))$", re.IGNORECASE), "after"),
    # 'the card shuffle she opens with' / 'the gong he ends on'
    (re.compile(r"\s*,?\s*\b((?:that\s+)?(?:he|she|they|it|the\s+\w+)\s+(?:opens|starts|begins|kicks\s+off)\s+"
                r"(?:with|on))$", re.IGNORECASE), "start"),
    (re.compile(r"\s*,?\s*\b((?:that\s+)?(?:he|she|they|it|the\s+\w+)\s+(?:ends|closes|finishes|signs\s+off)\s+"
                r"(?:with|on))$", re.IGNORECASE), "end"),
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:before|leading\s+(?:up\s+)?(?:in)?to|going\s+into|ahead\s+of|in\s+front\s+of|"
                r"prior\s+to|(?:that|which)\s+(?:precedes?|comes?\s+before))\s+(?P<ref>.+))$", re.IGNORECASE), "before"),
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:(?:at|to|from)\s+the\s+(?:very\s+)?(?:{_START})"
                r"(?:\s+of\s+.+)?|up\s+front|to\s+open(?:\s+.+)?|to\s+(?:start|kick)\s+(?:it|things|everything)\s+off))$",
                re.IGNORECASE), "start"),
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:(?:at|to|onto|on)\s+the\s+(?:very\s+)?(?:{_END})"
                r"(?:\s+of\s+.+)?|to\s+(?:close|finish|end)(?:\s+(?:it|things|everything)(?:\s+off)?)?|"
                r"to\s+wrap\s+(?:it|things|everything)\s+up))$", re.IGNORECASE), "end"),
    (re.compile(rf"\s*,?\s*\b((?:in|into)\s+the\s+middle(?:\s+of\s+.+)?|halfway\s+through(?:\s+.+)?|"
                rf"(?:(?:in|into)\s+(?:the|a)\s+(?:{_GAP})\s+)?(?:in\s+)?between\s+.+|"
                # 'in the pause that separates his two sentences'
                rf"(?:in|into)\s+(?:the|a)\s+(?:{_GAP})\s+(?:that|which)\s+(?:separates|"
                r"divides|splits|comes\s+between)\s+.+)$",
                re.IGNORECASE), "middle"),
    (re.compile(r"\s*,?\s*\b((?:in|into)\s+the\s+background|under(?:neath)?\s+.+|beneath\s+.+|behind\s+.+|"
                r"throughout(?:\s+.+)?|(?:all\s+)?over\s+(?:the|her|his|their|it|everything|what)\b.*|"
                r"during\s+.+|while\s+.+|on\s+top\s+of\s+.+)$", re.IGNORECASE), "background"),
    (re.compile(r"\s*,?\s*\b((?:at|around|about)\s+(?P<t>\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?)\b(?:\s+in)?)$",
                re.IGNORECASE), "time"),
]


def split_position(phrase: str) -> tuple[str, Position | None]:
    """('a bell ringing after the announcement') -> ('a bell ringing', Position(after, 'the announcement'))."""
    for rx, rel in _POS:
        m = rx.search(phrase)
        if m and m.start() > 0:
            core = phrase[:m.start()].strip(" ,")
            if core:
                ref = (m.groupdict().get("ref") or "").strip(" .") or None
                if rel == "background" and ref is None:  # 'under the conversation' -> 'the conversation'
                    ref = re.sub(r"^(?:under(?:neath)?|beneath|behind|during|while|on\s+top\s+of|(?:all\s+)?over|"
                                 r"throughout|(?:in|into)\s+the\s+background)\b\s*", "", m.group(1).strip(" ."),
                                 flags=re.IGNORECASE) or None
                t = m.groupdict().get("t")
                return core, Position(relation=rel, reference=ref, time_s=float(t) if t else None,
                                      words=m.group(1).strip(" ."))
    return phrase, None


# ---------------------------------------------------------------- comparing readings (golden files)

_DET = re.compile(r"^(?:(?:a|an|the|some|that|this|those|these|every|all|any|his|her|their)\s+)+")


def norm_phrase(s: str | None) -> str:
    """A phrase compared across readers: lower case, no punctuation, no leading determiners."""
    s = re.sub(r"[^\w\s']", " ", (s or "").lower())
    return _DET.sub("", " ".join(s.split()))


def matches(expected: list[dict], got: list[EditOperation]) -> bool:
    """Do the operations read match the expected ones (op, sound, replacement; the place where one is
    expected: its relation, and its reference where one is given)?"""
    if len(expected) != len(got):
        return False
    for e, g in zip(expected, got):
        if e["op"] != g.op or norm_phrase(e["sound"]) != norm_phrase(g.sound):
            return False
        if e.get("replacement") and norm_phrase(e["replacement"]) != norm_phrase(g.replacement):
            return False
        ep = e.get("position")
        if ep:
            if ep["relation"] != g.position.relation:
                return False
            if ep.get("reference") and norm_phrase(ep["reference"]) != norm_phrase(g.position.reference):
                return False
    return True
