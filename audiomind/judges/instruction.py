"""Reading an edit instruction: (operation, added, removed) from the words a user writes.

Why a reader of cues rather than a list of sentence templates: people ask for the same edit in endless ways
("cut the hum", "the hum at the end - get rid of it", "could the trumpet be a sax instead?", "after he signs
off, finish on a gong"). Templates anchored at the start of a sentence only read the forms they were written
for. This reader looks for the cue of each operation anywhere in the sentence (a verb of replacing, removing
or adding, or a construction that says it: "rather than X, Y", "X should go", "no more X", "without X"),
takes the sound's noun phrase from around the cue, and keeps a place clause ("after he signs off", "right at
the top") with the added sound for `split_position` to read. An instruction with no cue is free-form
(None): the judge then falls back to the descriptions or an LLM, never to a guess.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

Reading = tuple[str, list[str], list[str]]

# how people ask: 'could you ...', 'please ...', 'I'd like you to ...'
_POLITE = re.compile(r"^(?:(?:hey|hi|hello|ok(?:ay)?|alright|all\s+right|right|so|um+|uh+|well|oh|ah|yeah|yes|"
                     r"sorry|thanks|listen)\b[\s,!.]+|(?:could|can|would|will)\s+(?:you|we)\s+(?:please\s+)?|please\s+|kindly\s+|"
                     r"i(?:'d|\s+would)\s+like\s+(?:you\s+)?to\s+|i\s+(?:want|need)\s+(?:you\s+)?to\s+|let's\s+|"
                     r"go\s+ahead\s+and\s+|just\s+|now\s+)+", re.IGNORECASE)
_POLITE_TAIL = re.compile(r"(?:[\s,]+(?:please|for\s+me|thanks?(?:\s+you)?|if\s+you\s+can|if\s+possible))+$",
                          re.IGNORECASE)

# words that end the sound's noun phrase: another clause begins
_NP_END = re.compile(r"\s*(?:,|;|:|[.?!](?:\s|$)|\s-\s|\s--\s|\s–\s|—|\bbut\b|\band\s+(?:keep|leave|make|don't|do\s+not|then)\b|"
                     r"\bso\s+(?:that|it)\b|\bwhile\s+keeping\b|\bwithout\s+(?:touching|changing|moving|shifting|altering)\b|"
                     r"\bkeeping\b|\bleaving\b)")
# a place clause that may come first ('After he signs off, finish on a gong'): moved after the rest
_LEAD_PLACE = re.compile(r"^(?P<pos>(?:(?:right|just|shortly|immediately)\s+)?(?:once|after|when|as\s+soon\s+as|"
                         r"before|following|in|into|during|at|between|under|underneath|beneath|behind|over|while|"
                         r"throughout|ahead\s+of|up\s+front)\b[^,]*),\s*(?P<rest>.+)$", re.IGNORECASE)

# ---- replacing
_REPLACE_VERBS = r"(?:replace|swap(?:\s+out)?|switch(?:\s+out)?|exchange|trade(?:\s+out)?|change|turn|convert)"
_REP = re.compile(rf"\b{_REPLACE_VERBS}\s+(?P<x>.+?)\s+(?:with|by|for|into|to)\s+(?P<y>.+)$", re.IGNORECASE)
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
# 'the bell pings should be a metronome instead' / 'could the trumpet be a sax instead'
# 'I'd rather have a sax than the organ', 'I prefer a harp to the piano'
_RATHER = re.compile(r"^(?:i(?:'d|\s+would)\s+rather\s+(?:have|hear|get|use|go\s+with)|i(?:'d|\s+would)?\s*prefer)\s+"
                     r"(?P<y>.+?)\s+(?:than|to|over)\s+(?P<x>.+)$", re.IGNORECASE)
_SHOULD_BE = re.compile(r"^(?P<x>.+?)\s+(?:should|must|needs?\s+to|ought\s+to|has\s+to|could|can|would)\s+"
                        r"(?:be(?:come)?|turn\s+into|sound\s+like)\s+(?P<y>.+)$", re.IGNORECASE)
_MODAL_BE = re.compile(r"^(?:could|can|would|should)\s+(?P<x>.+?)\s+(?:be(?:come)?|turn\s+into|sound\s+like)\s+"
                       r"(?P<y>.+)$", re.IGNORECASE)
_MAKE_INTO = re.compile(r"^make\s+(?P<x>(?:the|that|this|those|these|it|them)\b.*?)\s+(?:into\s+)?"
                        r"(?P<y>(?:a|an|some)\s+.+)$", re.IGNORECASE)

# ---- removing
_DEL_VERB = (r"(?:remove|delete|erase|cut(?:\s+out)?|mute|silence|eliminate|drop|filter\s+out|suppress|"
             r"strip(?:\s+out)?|lose|ditch|kill|scrub|edit\s+out|leave\s+out|get\s+rid\s+of|do\s+away\s+with|"
             r"clear(?:\s+out)?|wipe(?:\s+out)?|nix|axe|chop(?:\s+out)?|excise|omit|take\s+(?:out|away|off)|"
             r"pull\s+(?:out|off)|knock\s+out|trim(?:\s+off)?)")
_DEL = re.compile(rf"^(?:{_DEL_VERB})\s+(?P<x>.+)$", re.IGNORECASE)
# 'take the bongos out', 'get the dog barking out of this', 'pull the pad out from under the voice'
_DEL_PARTICLE = re.compile(r"^(?:take|cut|leave|edit|strip|pull|get|knock|chop|trim|keep)\s+(?P<x>.+?)\s+"
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
_ADD_VERB = (r"(?:add|insert|include|overlay|mix\s+in|introduce|append|put|place|bring\s+in|slip\s+in|throw\s+in|lay|"
             r"follow\s+(?:it|this|that|him|her|them|things)?\s*(?:up\s+)?with|"
             r"squeeze(?:\s+in)?|fit\s+in|wedge(?:\s+in)?|tuck(?:\s+in)?|"
             r"toss\s+in|pop\s+in|sneak\s+in|splice\s+in|work\s+in|layer(?:\s+in)?|lay\s+down|stick|tack|toss|throw|"
             r"drop\s+in|dub\s+in|slide\s+in|slap\s+on|attach|play|give\s+(?:me|us|it)|let\s+there\s+be|"
             r"i(?:'d|\s+would)\s+(?:like|love)|i\s+(?:want|need)|we\s+need|can\s+(?:i|we)\s+(?:get|have)|have)")
_ADD = re.compile(rf"^(?:{_ADD_VERB})\s+(?P<x>.+)$", re.IGNORECASE)
_DROP_IN = re.compile(r"^drop\s+(?P<x>.+?\s+(?:into|in|onto)\s+.+)$", re.IGNORECASE)
_PARTICLE_IN = re.compile(r"^(?P<v>sneak|slip|throw|toss|pop|bring|work|splice|mix|layer|drop|put|stick|dub|slide|squeeze|"
                          r"fit|wedge|tuck)\s+"
                          r"(?P<x>.+?)\s+(?:in|on)\b\s*(?P<rest>.*)$", re.IGNORECASE)
# 'begin the recording with a harp phrase', 'after he signs off, finish on a gong', 'wrap it up with applause'
_BOOKEND = re.compile(r"^(?P<v>begin|start|open|kick|lead|end|finish|close|conclude|round|wrap|top|cap)"
                      r"\s+(?:the\s+|this\s+)?(?:audio|clip|recording|track|file|mix|it|things|everything|them)?\s*"
                      r"(?:off\s+|out\s+|up\s+)?(?:with|on|by\s+adding)\s+(?P<x>.+)$", re.IGNORECASE)
_OPENERS = ("begin", "start", "open", "kick", "lead")
# where an added sound goes: the edited clip, said as a place ('add rain to the clip'), is no place
_ADD_TARGET = re.compile(r"\s+(?:to|into|in|on|over|under|behind)\s+(?:the\s+|this\s+)?(?:audio|clip|recording|"
                         r"track|background|mix|file)\b.*$", re.IGNORECASE)
_CLIP_REF = re.compile(r"\s+(?:from|out\s+of|off|in|of)\s+(?:the\s+|this\s+|that\s+)?(?:audio|clip|recording|track|"
                       r"file|mix|it|this|here|there|sound)\s*$", re.IGNORECASE)


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
    m = _SUB.search(s)
    if m:
        return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    m = _SUB_IN.search(s)
    if m:
        return "replace", [_new_sound(m.group("y"))], [_noun_phrase(m.group("x"))]
    m = _RATHER.match(s)
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
        if m and not re.match(r"^(?:louder|quieter|softer|shorter|longer|removed|deleted|gone|cut|muted|dropped|"
                              r"taken|silenced|left|faster|slower|higher|lower|clearer)\b", m.group("y"), re.IGNORECASE):
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
        x = re.sub(r"\s+from\s+(?:the\s+|this\s+)?(?:audio|clip|recording|track|file|mix|it|this|here|start|end|"
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


def _add(s: str) -> Reading | None:
    m = _BOOKEND.match(s)
    if m:
        where = "at the start" if m.group("v").lower() in _OPENERS else "at the end"
        x = _clean(m.group("x"))
        x = x if _keeps_place(x) else _clean(_NP_END.split(x, maxsplit=1)[0])
        return "add", [x if split_position(x)[1] is not None else f"{x} {where}"], []  # (its own place wins)
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
_PASSIVE_VERBS = (r"added|inserted|included|put|placed|overlaid|mixed\s+in|brought\s+in|squeezed\s+in|removed|deleted|"
                  r"cut(?:\s+out)?|taken\s+(?:out|away|off)|dropped|muted|silenced|erased|replaced|swapped(?:\s+out)?|"
                  r"exchanged")
_PASSIVE = re.compile(
    r"^(?P<lead>(?:.*[,;:]\s+)?)(?P<x>[^,;:]+?)\s+(?:(?:should|must|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|"
    r"ought\s+to|can|could|will|shall|may)\s+(?:be|get)|is|are|gets?|ha(?:s|ve)\s+been)\s+(?P<verb>"
    rf"{_PASSIVE_VERBS})\b(?P<rest>.*)$", re.IGNORECASE)
# ... or asked as a question ('could the dripping behind her be taken away?')
_ASKED_PASSIVE = re.compile(rf"^(?:could|can|would|will|should|might)\s+(?P<x>.+?)\s+(?:be|get)\s+(?P<verb>{_PASSIVE_VERBS})\b"
                            r"(?P<rest>.*)$", re.IGNORECASE)
_ACTIVE = {"added": "add", "inserted": "insert", "included": "include", "put": "put", "placed": "place",
           "overlaid": "overlay", "mixed in": "mix in", "brought in": "bring in", "removed": "remove",
           "deleted": "delete", "cut": "cut", "cut out": "cut out", "taken out": "take out", "taken away": "take away",
           "taken off": "take off", "squeezed in": "squeeze in", "dropped": "drop",
           "muted": "mute", "silenced": "silence", "erased": "erase", "replaced": "replace", "swapped": "swap",
           "swapped out": "swap out", "exchanged": "exchange"}


def _active(s: str) -> str:
    m = _ASKED_PASSIVE.match(s)
    if m:
        return f"{_ACTIVE[' '.join(m.group('verb').lower().split())]} {m.group('x').strip()}{m.group('rest')}"
    m = _PASSIVE.match(s)
    if not m:
        return s
    verb = _ACTIVE[" ".join(m.group("verb").lower().split())]
    return f"{m.group('lead')}{verb} {m.group('x').strip()}{m.group('rest')}"


# 'make it so that a truck pulls away in the background': the state the edit should leave
_STATE_FRAME = re.compile(r"^(?:make\s+(?:it\s+)?(?:so\s+)?that|make\s+sure(?:\s+that)?|see\s+to\s+it\s+that|"
                          r"arrange\s+(?:it\s+|things\s+)?so\s+that|set\s+it\s+up\s+so(?:\s+that)?)\s+(?P<x>.+)$",
                          re.IGNORECASE)


def read_instruction(instruction: str) -> Reading | None:
    """(operation, added, removed) from an edit instruction, or None when it says no add, remove or replace."""
    s = " ".join(instruction.strip().split()).rstrip(".!?")
    s = re.sub(r"\s*\([^()]*\)", "", s)  # ('a bowling strike (ball rolling, pins going down)' describes it)
    s = _POLITE_TAIL.sub("", _POLITE.sub("", s)).strip()
    state = _STATE_FRAME.match(s)
    if state:  # the state asked for: an edit verb inside it reads as usual, else it names what is new
        return read_instruction(state.group("x")) or _state(_clean(state.group("x")))
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
        got = read_instruction(topic.group("rest"))
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


# ---------------------------------------------------------------- where an added sound goes


class Position(BaseModel):
    """Where the instruction puts a sound: after / before a reference, at the start or end, in the middle, or
    under the rest (background); `words` as written ('after the man stops talking')."""

    relation: Literal["after", "before", "start", "end", "middle", "background"]
    reference: str | None = None
    words: str


_NEAR = r"(?:(?:right|just|shortly|immediately|directly)\s+)?"
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
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:(?:at|to|from)\s+the\s+(?:very\s+)?(?:beginning|start|top|outset|head)"
                r"(?:\s+of\s+.+)?|up\s+front|to\s+open(?:\s+.+)?|to\s+(?:start|kick)\s+(?:it|things|everything)\s+off))$",
                re.IGNORECASE), "start"),
    (re.compile(rf"\s*,?\s*\b({_NEAR}(?:(?:at|to|onto|on)\s+the\s+(?:very\s+)?(?:end|close|tail(?:\s+end)?|finish)"
                r"(?:\s+of\s+.+)?|to\s+(?:close|finish|end)(?:\s+(?:it|things|everything)(?:\s+off)?)?|"
                r"to\s+wrap\s+(?:it|things|everything)\s+up))$", re.IGNORECASE), "end"),
    (re.compile(r"\s*,?\s*\b((?:in|into)\s+the\s+middle(?:\s+of\s+.+)?|halfway\s+through(?:\s+.+)?|"
                r"(?:(?:in|into)\s+(?:the|a)\s+(?:pause|gap|silence|break|space)\s+)?(?:in\s+)?between\s+.+|"
                # 'in the pause that separates his two sentences'
                r"(?:in|into)\s+(?:the|a)\s+(?:pause|gap|silence|break|space)\s+(?:that|which)\s+(?:separates|"
                r"divides|splits|comes\s+between)\s+.+)$",
                re.IGNORECASE), "middle"),
    (re.compile(r"\s*,?\s*\b((?:in|into)\s+the\s+background|under(?:neath)?\s+.+|beneath\s+.+|behind\s+.+|"
                r"throughout(?:\s+.+)?|(?:all\s+)?over\s+(?:the|her|his|their|it|everything|what)\b.*|"
                r"during\s+.+|while\s+.+|on\s+top\s+of\s+.+)$", re.IGNORECASE), "background"),
]


def split_position(phrase: str) -> tuple[str, Position | None]:
    """('a bell ringing after the announcement') -> ('a bell ringing', Position(after, 'the announcement'))."""
    for rx, rel in _POS:
        m = rx.search(phrase)
        if m and m.start() > 0:
            core = phrase[:m.start()].strip(" ,")
            if core:
                ref = (m.groupdict().get("ref") or "").strip(" .") or None
                return core, Position(relation=rel, reference=ref, words=m.group(1).strip(" ."))  # type: ignore[arg-type]
    return phrase, None
