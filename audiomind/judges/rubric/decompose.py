"""Rubric decomposition and filtering by transparent rules: an instruction -> atomic yes/no items, each
with the words it comes from and (for the rule verifier) what to measure.

The instruction is split into clauses (quotes kept whole; "then", "followed by", "before", "after" give
the order) and each clause is read for speech (who speaks, what is said, how fast, in what style),
sound events (named AudioSet classes), counts, music tempo and loudness trends; anything else becomes an
item the offline judge cannot verify. The filter keeps items grounded in the instruction's words and
drops duplicates.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges import lexicon
from audiomind.language import rubric as L
from audiomind.language.rubric import as_check, words_rx
from audiomind.language.rubric import phrases as _phrases

Attribute = Literal["speech", "speaker", "speech_content", "style", "sound_event", "count", "order", "music",
                    "loudness", "other"]

NUMBERS: dict[str, int] = dict(_phrases()["numbers"])
NUM_WORDS = {v: k for k, v in NUMBERS.items() if k not in ("once", "twice", "thrice", "single", "couple")}
FEMALE = re.compile(rf"\b({words_rx('female')})\b", re.IGNORECASE)
MALE = re.compile(rf"\b({words_rx('male')})\b", re.IGNORECASE)
STYLE = re.compile(rf"\b({words_rx('speaking_style')})\b", re.IGNORECASE)
RATE_FAST = re.compile(rf"\b({words_rx('rate_fast')})\b", re.IGNORECASE)
RATE_SLOW = re.compile(rf"\b({words_rx('rate_slow')})\b", re.IGNORECASE)
TEMPO_FAST = re.compile(rf"\b({words_rx('tempo_fast')})\b", re.IGNORECASE)
TEMPO_SLOW = re.compile(rf"\b({words_rx('tempo_slow')})\b", re.IGNORECASE)
LOUDER = re.compile(r"\b(gets? louder|grows? louder|getting louder|crescendo|fades? in|increasing(?:ly)? loud)", re.IGNORECASE)
QUIETER = re.compile(r"\b(gets? quieter|getting quieter|fades? out|fading|diminuendo|dies? away|decreasing)", re.IGNORECASE)
MUSIC = re.compile(rf"\b({words_rx('music')})\b", re.IGNORECASE)
SOUND_VERB = re.compile(rf"\b((?:is|are|was|were|being|been|gets?|got)\s+shaken|{words_rx('sound_verbs')})\b",
                        re.IGNORECASE)
SEQ = re.compile(r"\s*(?:,\s*)?\b(?:(?:and\s+)?only\s+(?=after|then|once|when)|)(?:and then|then|followed by|after which|after that|afterwards?|and finally|finally|"
                 r"later|subsequently|eventually|at\s+last|last\s+of\s+all|lastly|"
                 # 'to finish, a man mutters ...', 'in the end, ...': what follows comes last
                 r"(?:to\s+(?:finish|end|close|wrap\s+(?:it\s+)?up)|in\s+the\s+end)(?=\s*,)|(?:toward|towards|near|close\s+to)\s+the\s+(?:very\s+)?end|"
                 r"at\s+the\s+(?:very\s+)?end(?=\s*,)|"
                 # 'three pings; right after, a man speaks': an adverb, the clause after it comes next
                 r"(?:right|just|straight|soon|shortly|immediately|directly)\s+after(?:wards?)?(?=\s*,)|"
                 # '..., and right after her a hen clucks': 'after her' with more to come is 'after that'
                 r"(?:(?:right|just|straight|soon|shortly|immediately|directly)\s+)?after\s+(?:him|her|it|them|this|that)"
                 r"(?=\s+[a-z])|"
                 r"(?:before|after)(?!\s+(?:him|her|it|them|this|that)[\s.,;!?]*$)|"
                 r"(?:and\s+)?(?:once|when|as soon as)\s+(?:it|he|she|they|this|that|"
                 r"(?:the|this|that|his|her|their)\s+[a-z]+)\s+(?:stops?|ends?|finish(?:es)?|fades?(?: out| away)?|"
                 r"dies? (?:away|down)|quiets? down|settles?(?: down)?|(?:falls?|goes?) (?:silent|quiet)|"
                 r"(?:is|are|has|have)\s+(?:over|done|finished|ended|stopped|gone))|"
                 # 'B leads into C', 'gives way to', 'segues into': C after B
                 r"(?:leads?|leading|segues?|segueing|gives? way|giving way|hands? over|handing over|makes? way)\s+"
                 r"(?:into|to|for)|"
                 # 'A once two pops have played': the clause after 'once' came first
                 r"once(?=\s+(?:the|a|an|two|three|four|five|six|seven|eight|nine|ten|some|several|both|all)\b))"
                 r"\b\s*", re.IGNORECASE)
# a clause that ends on a sequence word happens after the one before it ('... and a trombone comes later')
TRAILING_SEQ = re.compile(r"\s+(?:later(?: on)?|afterwards?|after that|next|then|last|at the end|second|third|follows|"
                          r"comes (?:next|after(?:wards)?)|"
                          r"fourth|after (?:him|her|it|them|this|that))[\s.,;!?]*$", re.IGNORECASE)
# 'a man ... doesn't begin until around the four-second mark': after what came before (the verb kept)
NOT_UNTIL = re.compile(r"\s+(?:does|did|do)(?:n't|\s+not)\s+(?P<v>[a-z]+(?:\s+(?:in|up))?)\s+until\b.*$", re.IGNORECASE)
TRAILING_BEFORE = re.compile(r"\s+before (?:him|her|it|them|this|that)[\s.,;!?]*$", re.IGNORECASE)
TRAILING_FIRST = re.compile(r"\s+(?:first|at first|to begin with|to start)(?=[\s.,;!?]*$)", re.IGNORECASE)
# a bare subject left by a mid-clause 'then' ('a man then says ...'): it belongs to the next clause
BARE_SUBJECT = re.compile(r"^(?:a|an|the|some|this|that|his|her|their)?\s*(?:[a-z]+\s+)?(?:man|woman|men|women|boy|girl|"
                          r"person|speaker|voice|narrator|announcer|child|he|she|they|someone|somebody)$", re.IGNORECASE)
# a clause cut after its auxiliary by a mid-clause 'then' ('a triangle is' + 'struck three times'): the same
INCOMPLETE = re.compile(r"\b(?:is|are|was|were|gets?|got|being|been)$", re.IGNORECASE)
# ... when the next clause opens on the participle ('struck', 'rung', 'shaken'); else the auxiliary is the rest
# of a passive joiner ('a xylophone tune is' + 'followed by' + 'a crash cymbal') and is dropped
PARTICIPLE = re.compile(r"^\s*(?:then\s+)?[a-z]+(?:ed|en|ck|ng|ung|un|own|ot|ken)\b", re.IGNORECASE)
# the word that joins two clauses -> when the clause after it happens, relative to the one before it
# ("A before B": B after A; "A after B": B before A; "A, then B" / "after which" / "later": B after A)
_REL = {"before": "after", "after": "before", "once": "before"}
# a clause said first: 'After A, B' (order), 'While A, B' / 'Over A, B' / 'Beneath A, B' (at the same time)
LEAD_SUB = re.compile(r"^\s*(after|once|when|as soon as|before|while|whilst|over|under|underneath|beneath|behind|amid|"
                      r"amidst|against)\b\s*(.+?),\s*(.+)$", re.IGNORECASE | re.DOTALL)
_AT_ONCE = ("while", "whilst", "over", "under", "underneath", "beneath", "behind", "amid", "amidst", "against")
# a clause that names a sound to be missing ('no music', 'without any talking', 'there is no traffic')
NEGATED = re.compile(r"^\s*(?:(?:there\s+is|there's|there\s+are|with)\s+)?(?:no|without(?:\s+any)?|not\s+any|never\s+any)"
                     r"\s+(?!one\b|doubt\b|more\b|longer\b)(.+)$", re.IGNORECASE)
NOBODY = re.compile(r"^\s*(?:no\s*one|nobody|no\s+person|not\s+a\s+(?:word|voice))\b", re.IGNORECASE)
SIMILE = re.compile(r"^\s*(?:like|as if|as though|resembling|similar to|reminiscent of)\b", re.IGNORECASE)
# the speaker label of a transcript turn, right before its (masked) quote: 'Man:', 'Woman 2:', 'Announcer:'
TURN_LABEL = re.compile(r"(?:^|(?<=\s))([A-Z][A-Za-z]+(?:\s+\d+)?):\s*(?=\x00)")
# a summary before a colon that a list follows (not 'he says: "..."', where the colon introduces a quote)
HEADER = re.compile(r"^([^:\x00]+):\s*(?![\s\x00])(.+)$", re.DOTALL)
# a header that is a bare name ('Castanets', 'Solo cello'): no number, no verb, at most three words
BARE_NOUN = re.compile(r"^(?!.*\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|is|are|plays?|then)\b)"
                       r"[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,2}$", re.IGNORECASE)
# a list item with no sounding thing of its own: a count or a pronoun first ('five crisp clacks', 'it caws')
HEADLESS = re.compile(r"^\s*(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|several|a\s+few|it|they)\b",
                      re.IGNORECASE)
ORDERED = re.compile(r",?\s*\b(?:in\s+(?:this|that|the\s+following)\s+order|one\s+after\s+(?:another|the\s+other)|"
                     r"in\s+turn|in\s+sequence|in\s+a\s+row|back\s+to\s+back|one\s+(?:by|at\s+a\s+time)(?:\s+one)?)\b",
                     re.IGNORECASE)
ADJ_ALONE = re.compile(r"^\s*(?:very\s+|quite\s+|really\s+|so\s+)?([a-z]+)\s*$", re.IGNORECASE)
# 'and nothing else', 'nothing else in the clip': a claim about every other sound
ONLY_THESE = re.compile(r"^\s*(?:and\s+)?(?:nothing|no\s*one|nobody)\s+else\b", re.IGNORECASE)
# a count on its own after a sound ('5 page turns', '5 times')
BARE_COUNT = re.compile(r"^\s*(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:[a-z-]+\s+){0,2}?"
                        r"(?:times|[a-z]+s)(?:\s+(?:in\s+all|total|altogether))?\s*$", re.IGNORECASE)
# a comparison with what came before ('noticeably quieter than the crowd was'): no sound of its own
COMPARISON = re.compile(r"^\s*(?:(?:\w+ly|much|far|a\s+(?:bit|little|lot))\s+)?(?:[a-z]+er|more\s+\w+|less\s+\w+)\s+than\b",
                        re.IGNORECASE)
# 'the clip opens with an axe': what it opens with comes first; 'and then he does: a blade ...': the action
OPENS_WITH = re.compile(r"\b(?:the|this)\s+(?:clip|recording|audio|track|piece|sequence|scene)\s+(?:opens|starts|begins|"
                        r"kicks\s+off|leads\s+off)\s+with\s+", re.IGNORECASE)
PRO_DO = re.compile(r"\b(?:he|she|they|it|someone)\s+(?:does|did|do)(?:\s+(?:so|it|that|just\s+that))?\s*:\s*",
                    re.IGNORECASE)
ADJ_ONLY = re.compile(r"^(?:a|an|the|some)\s+([a-z]+)$", re.IGNORECASE)
ADVERB = re.compile(r"^\s*(?:(?:first(?:ly)?|at first|initially|to begin with|to start(?= *,)|finally|at the end|"
                    r"in the end|next|then|afterwards?|later|eventually|at last|meanwhile)\b\s*,?\s*|"
                    # the auxiliary of an inversion after a sequence word ('only after that does a cuckoo call')
                    r"(?:do|does|did)\s+(?=(?:a|an|the|some|this|that|his|her|their|its)\b))", re.IGNORECASE)


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


def _split_clauses(instruction: str) -> list[tuple[str, str | None]]:
    """[(clause, relation to the previous clause: 'after' | 'before' | None)], quotes kept whole."""
    quotes: list[str] = []

    def hide(m: re.Match) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    # 'two (2) times', 'from one to five (1, 2, 3, 4, 5)': digits in brackets restate the words
    instruction = re.sub(r"\s*\(\s*\d+(?:\s*(?:[,;-]|to|through|until)\s*\d+)*\s*\)", "", instruction)
    instruction = PRO_DO.sub("", OPENS_WITH.sub("", instruction))
    instruction = re.sub(r"\s+--\s+", ", ", instruction)  # ('leafs through a book -- 5 page turns -- and then')
    instruction = re.sub(r"(?<![\w-])[x\u00d7](\d+)\b", r"\1 times", instruction)  # ('page turning, x5')
    # "it's not until three seconds in that a ball rolls": the ball comes after what was said before
    instruction = re.sub(r"\b(?:it's|it\s+is)\s+not\s+until\s+[^,;.]*?\s+that\s+", "then ", instruction,
                         flags=re.IGNORECASE)
    # a numbered list ('1) a man speaks, 2) an organ plays'): its items in their order
    instruction = re.sub(r"(?:^|(?<=[\s,;]))\(?(\d)\)\s*", lambda m: "" if m.group(1) == "1" else " then ",
                         instruction).strip()
    masked = re.sub(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|" + ev.SINGLE_QUOTED, hide,
                    instruction.strip())
    # a transcript ("Man: '...' Woman: '...'"): each labelled turn is a clause, in turn order
    turns = TURN_LABEL.split(masked)
    if len(turns) >= 5 and not turns[0].strip(" .,;"):
        said = []
        for label, words in zip(turns[1::2], turns[2::2]):
            # a stage direction between turns ("(a door slams)") is a sound of its own, in its place
            asides = re.findall(r"\(([^()]+)\)", words)
            said.append(f"{label} says {re.sub(r'[(][^()]*[)]', ' ', words).strip(' .,;')}")
            said.extend(a.strip(" .,;") for a in asides if a.strip(" .,;"))
        masked = ", then ".join(said) + "."
    out: list[tuple[str, str | None]] = []
    for sentence in re.split(r"(?<=[.!?;])\s+", masked):
        if ORDERED.search(sentence) and not ORDERED.sub(" ", sentence).strip(" ,.;:"):
            # '...; in that order.' on its own closes a list: every clause said so far is a sequence
            out[1:] = [(c, "after" if r in (None, "with") else r) for c, r in out[1:]]
            continue
        if ORDERED.search(sentence):  # 'in this order: a chimp, a tiger, a bear': the list is a sequence
            start = len(out)
            out.extend(_split_sentence(ORDERED.sub(" ", sentence)))
            out[start + 1:] = [(c, "after" if r in (None, "with") else r) for c, r in out[start + 1:]]
            continue
        out.extend(_split_sentence(sentence))
    merged: list[tuple[str, str | None]] = []
    carry: tuple[str, str | None] | None = None
    for c, r in out:
        if carry is not None and INCOMPLETE.search(carry[0]) and not PARTICIPLE.match(c):
            merged.append((INCOMPLETE.sub("", carry[0]).strip(" ,.;"), carry[1]))
            carry = None
        if carry is not None:  # 'a man' + 'politely says ...' -> 'a man politely says ...', after what came before
            c, r = carry[0] + " " + c, carry[1] or r
            carry = None
        if BARE_SUBJECT.match(c.strip(" ,.;")) or INCOMPLETE.search(c.strip(" ,.;")):
            carry = (c.strip(" ,.;"), r)
            continue
        if merged and r == "with" and _continues_subject(c):
            continue  # 'a car engine turns over, runs a moment and cuts out': one source doing more, no new sound
        not_until = NOT_UNTIL.search(c)
        if not_until and merged:
            c, r = f"{c[:not_until.start()]} {not_until.group('v')}", "after"
        if TRAILING_SEQ.search(c) and merged:
            c, r = TRAILING_SEQ.sub("", c), "after"
        if TRAILING_BEFORE.search(c) and merged:  # '... and a gong sounds before him': before the one before
            c, r = TRAILING_BEFORE.sub("", c), "before"
        c = TRAILING_FIRST.sub("", c)
        merged.append((c, r))
    if carry is not None:
        merged.append(carry)
    return [(ADVERB.sub("", re.sub("\x00(\\d+)\x00", lambda m: quotes[int(m.group(1))], c)).strip(" ,.;"), r)
            for c, r in merged if ADVERB.sub("", c).strip(" ,.;")]


# what may follow a verb with no subject: an object's determiner, a particle, a preposition, or nothing
_VP_NEXT = re.compile(r"^(?:a|an|the|some|its|his|her|their|for|out|away|off|up|down|on|over|back|in|into|to|from|"
                      r"briefly|again|once|twice|for|at|with|loudly|quietly|slowly)$", re.IGNORECASE)


def _continues_subject(clause: str) -> bool:
    """A clause that opens on a verb and has no subject ('runs a moment', 'cuts out', 'pulls away'): WordNet uses
    its first word as a verb far more than as a noun, the next word is no verb, and it names no sound itself."""
    words = clause.strip(" ,.;").split()
    if not words or SOUND_VERB.match(words[0]) or not lexicon.mostly_verb(words[0]):
        return False
    return len(words) == 1 or bool(_VP_NEXT.match(words[1]))


# words that stand for a subject without naming what sounds ('when it stops')
_PRONOUNS = {"it", "he", "she", "they", "this", "that", "these", "those", "someone", "somebody", "everyone",
             "everybody", "nobody", "one", "there", "what", "which", "who", "we", "you", "i"}


def _subject_verb(clause: str) -> bool:
    """A thing doing something ('a blade scrapes along a whetstone', 'a chisel tapping on stone'): a determiner,
    a noun, then a verb form (WordNet); an event a listener hears even when no sound class names it."""
    clause = re.sub(r"^\s*(?:(?:you|we|one)\s+(?:can\s+)?hear\s+)", "", clause, flags=re.IGNORECASE)
    # a pronoun or 'someone' acting on something ('he flips four pages', 'someone leafs through a book')
    acting = re.match(r"^\s*(?:he|she|they|someone|somebody)\s+([a-z]+)\s+(?:a|an|the|some|his|her|their|its|\d+|one|two|"
                      r"three|four|five|six|seven|eight|nine|ten|through|on|at|across|over|into)\b", clause, re.IGNORECASE)
    if acting:
        return lexicon.verb_form(acting.group(1)) and not ev.is_speech_phrase(clause)
    # ... or a thing acted on ('four pages are turned', 'a deck gets shuffled')
    if re.match(r"^\s*(?:(?:a|an|the|some|\d+|two|three|four|five|six|several)\s+(?:[a-z-]+\s+){0,2}?[a-z]+|[a-z]+s)\s+"
                r"(?:is|are|gets?|was|were)\s+([a-z]+ed)\b", clause, re.IGNORECASE):
        return True
    # a verb with an object and no subject, after someone who does it ('... he mutters, and flips two pages')
    vp = re.match(r"^\s*([a-z]+)\s+(?:a|an|the|some|his|her|their|its|\d+|one|two|three|four|five|six|seven|eight|"
                  r"nine|ten|through|on|at)\b", clause, re.IGNORECASE)
    if vp and vp.group(1).lower().endswith("s") and lexicon.verb_form(vp.group(1)) and not ev.is_speech_phrase(clause):
        return True
    m = re.match(r"^\s*(?:(?:a|an|the|some|two|three|four|five|several|his|her|"
                 r"their|its)\s+)?(?:[a-z-]+\s+){0,2}?([a-z]+)\s+([a-z]+)\b", clause, re.IGNORECASE)
    return bool(m) and m.group(1).lower() not in _PRONOUNS and not lexicon.verb_form(m.group(1)) \
        and lexicon.verb_form(m.group(2))



def _split_sentence(sentence: str) -> list[tuple[str, str | None]]:
    """One sentence's clauses (a header and its list, a clause said first, or a plain sequence)."""
    out: list[tuple[str, str | None]] = []
    colon = HEADER.match(sentence)
    header = colon.group(1).split(",") if colon else []
    if colon and ev.is_speech_phrase(header[-1]) and not ev.is_speech_phrase(colon.group(2)) \
            and not SEQ.search(colon.group(2)):
        # 'A woman counting in Spanish: uno, dos, tres': the list after a speaking header (its last clause) is
        # what is said; the header's clauses before it stay as they are
        said = f"{header[-1].strip()} '{' '.join(colon.group(2).split()).strip(' .;')}'"
        if len(header) == 1:
            return [(said, None)]
        return _sequence(colon.group(1), None)[:-1] + [(said, "with")]
    if colon:  # 'Two short tunes back to back: a recorder first, a viola second': the list says it all
        # ... but a header's own requirement stays ('No voices at all, just three sounds in a row: ...')
        out = [(h, None) for h in re.split(r"\s*,\s*", colon.group(1)) if NEGATED.match(h) or NOBODY.match(h)]
        if ORDERED.search(colon.group(1)):
            body = _sequence(colon.group(2), None)
            return out + [(c, "after" if i and r in (None, "with") else r) for i, (c, r) in enumerate(body)]
        body = _sequence(colon.group(2), None)
        if len(body) >= 2 and len({c.strip(" ,.;!").lower() for c, _ in body}) == 1:
            # 'a bat connects four times: crack, crack, crack, crack': the list spells the sound out
            return out + _sequence(colon.group(1), None)
        if BARE_NOUN.match(colon.group(1).strip()) and body and HEADLESS.match(body[0][0]):
            # 'Castanets: five clacks, ...', 'A crow: it caws twice', 'pickaxe: three strikes': the header is
            # what sounds
            body[0] = (f"{colon.group(1).strip()} {body[0][0]}", body[0][1])
            return out + body
        if len(body) >= 2:
            return out + body
        sentence = colon.group(1) + ", " + colon.group(2)
    lead = LEAD_SUB.match(sentence)
    if lead:  # "After A, B" / "Before A, B": the subordinate clause comes first in the sentence
        out.extend(_sequence(lead.group(2), None))
        rest = _sequence(lead.group(3), None)
        if rest:  # ('while A, B': at the same time, no order)
            w = lead.group(1).lower()
            rest[0] = (rest[0][0], "with" if w in _AT_ONCE else "before" if w == "before" else "after")
        return out + rest
    return out + _sequence(sentence, None)


def _sequence(sentence: str, rel: str | None) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    pos = 0
    for m in SEQ.finditer(sentence):
        chunk = sentence[pos:m.start()]
        if chunk.strip(" ,.;"):
            out.extend(_subclauses(chunk, rel))
        word = " ".join(m.group(0).strip(" ,").lower().split())
        # ('...; after the last bounce a guy shouts ...': 'after' opening a sentence places it after the one before)
        rel = "after" if not out and not sentence[:m.start()].strip(" ,.;") and word in ("after", "once") \
            else _REL.get(word, "after")
        pos = m.end()
    tail = sentence[pos:]
    if tail.strip(" ,.;"):
        out.extend(_subclauses(tail, rel))
    elif out and rel == "after" and len(out) >= 2:  # '... and a trombone comes later': the last clause is after
        out[-1] = (out[-1][0], "after")
    return out


def _subclauses(chunk: str, rel: str | None) -> list[tuple[str, str | None]]:
    # (never split off a quotation from its speaker: "greets them with 'hello'")
    # ('over' / 'as' closing a clause are particles, not joiners: 'an oboe takes over')
    parts = [p for p in re.split(r"\s*(?:,|\bwhile\b|\bmeanwhile\b|\bin\s+the\s+meantime\b|\bat\s+the\s+same\s+time\b|\b(?:the|for\s+the)\s+(?:whole|entire)\s+time\b|\ball\s+the\s+(?:time|while)\b|\b(?:for\s+)?as\s+long\s+as\b|\bwith\b(?!\s+(?:a|an|the|some)\s+(?:[a-z-]+\s+){0,2}\x00)|\bduring\b|\bamid(?:st)?\b|\baccompanied by\b|"
                                 r"\bbehind\b|\bbeneath\b|\bunderneath\b|\bon top of\b|\balongside\b|\balong with\b|"
                                 r"\bover\b(?!\s*(?:[,.;!?]|$))|\bas\b(?!\s*(?:[,.;!?]|$))|"
                                 r"\band\b|(?=\bwithout\b))(?!\s*\x00)\s*", chunk)
             if p.strip(" ,.;")]
    # a comma between adjectives is no clause break: 'a slow, soft melody' (the part before it is an article
    # and one word that names no sound)
    joined: list[str] = []
    for p in parts:
        if joined and ADJ_ONLY.match(joined[-1].strip()) and not ev.phrase_labels(ADJ_ONLY.match(
                joined[-1].strip()).group(1)) and not SOUND_VERB.search(joined[-1]):
            joined[-1] = joined[-1].strip() + " " + p.strip()
        else:
            joined.append(p)
    parts = joined
    out: list[tuple[str, str | None]] = []
    for i, p in enumerate(parts):
        out.append((p, rel if i == 0 else "with"))
    return out


def _quote_is_said(clause: str, quoted: str) -> bool:
    """Are the quoted words said? Not when an article makes them a noun ("holds an 'aah'", "a 'ding'") and no
    speaking verb or person comes before them."""
    head = clause.split(quoted, maxsplit=1)[0]
    if not re.search(r"\b(?:a|an|one|some|the|its|their)\s+(?:[a-z-]+\s+){0,2}[\"'\u201c]?\s*$", head + " ",
                     re.IGNORECASE):
        return True
    return bool(ev.SPEECH_VERBS.search(head)) or any(
        lexicon.names_person(w) for w in re.findall(r"[a-z]+", head.lower()) if len(w) > 2)


def _speaker_gender(head: str) -> str | None:
    """The gender of whoever speaks: the first gendered word ('a woman tells him' -> female, the subject
    before its object), not counting a possessive ('his mother tells him' -> female)."""
    hits = sorted([(x.start(), "female", x) for x in FEMALE.finditer(head)]
                  + [(x.start(), "male", x) for x in MALE.finditer(head)], key=lambda h: h[0])
    for _, gender, x in hits:
        if x.group(0).lower() in ("his", "her") and re.match(r"\s+[a-z]", head[x.end():], re.IGNORECASE):
            continue  # a possessive before its noun
        return gender
    return None


def _count_in(clause: str) -> int | None:
    m = re.search(r"(?<![\w-])(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:[a-z-]+\s+){0,2}?(?:times|short|"
                  r"long|loud|quick|[a-z]+s)\b", clause, re.IGNORECASE)
    if m:
        w = m.group(1).lower()
        return int(w) if w.isdigit() else NUMBERS.get(w)
    m = re.search(r"\b(once|twice|thrice)\b", clause, re.IGNORECASE)
    return NUMBERS[m.group(1).lower()] if m else None


def _sound_phrase(clause: str) -> str:
    p = LOUDER.sub(" ", QUIETER.sub(" ", clause))
    p = re.sub(r"\b(?:the\s+)?sounds?\s+of\b", " ", p, flags=re.IGNORECASE)
    p = re.sub(r"^\s*(?:you can hear|you hear|we hear|one hears|one can hear|listen to|there(?:'s| is| are)|"
               r"(?:can|could|do|did)\s+you\s+hear|is\s+(?:that|this|there)|are\s+(?:those|these|there)|was\s+that)\s+",
               "", p.replace("?", " "),
               flags=re.IGNORECASE)
    # the passive names the sounding thing before its auxiliary ('a triangle is struck' -> 'a triangle')
    p = re.sub(r"\s+(?:is|are|was|were|gets?|got|has|have|had)\s+(?:being\s+|been\s+)?[a-z]+(?:ed|en|ck|ng|ung|un|own|ot)\b",
               " ", p,
               flags=re.IGNORECASE)
    p = re.sub(r"^\s*(?:someone|somebody|a person|people|a musician|a player)\s+(?:plays?|is playing|strikes?|"
               r"shakes?|hits?|rings?)\s+", "", p, flags=re.IGNORECASE)
    p = re.sub(r"\b(?:a\s+)?(?:couple|few)(?:\s+of)?\b", " ", p, flags=re.IGNORECASE)  # ('a couple of times')
    p = re.sub(r"(?<![\w-])(\d+|one|two|three|four|five|six|seven|eight|nine|ten|once|twice|thrice|times|short|long|"
               r"quick|fast|slow|slowly|quickly|upbeat|lively|energetic|calm|gentle|leisurely|loud|loudly|quiet|"
               r"quietly|softly|in the background|in the foreground|(?:along\s+)?on top|repeatedly|again|is heard|are heard|"
               r"can be heard|there is|there are|sound|sounds|plays?|playing|first|finally|afterwards?|then|"
               r"throughout|just|only|merely|at all|a|an|the)(?![\w-])", " ", p, flags=re.IGNORECASE)
    # a verb of taking turns names no sound ('an oboe takes over', 'a flute joins in')
    p = re.sub(r"\b(?:takes?|taking|joins?|joining|comes?|coming|kicks?)(?:\s+(?:over|in)\b|\s*$)|\b(?:enters?|"
               r"follows?|starts?|begins?|continues?|answers?|responds?|replies?|closes?|opens?)\b(?:\s+(?:it|them)\b)?",
               " ", p, flags=re.IGNORECASE)
    p = " ".join(p.split()) or clause
    return p[0].lower() + p[1:] if p[:2] != p[:2].upper() else p


def rule_decompose(instruction: str) -> list[RubricItem]:
    """Transparent rule decomposition of an instruction into verifiable items."""
    items: list[RubricItem] = []
    subjects: list[tuple[str, dict[str, Any]]] = []  # (clause, locator) for order items

    def add(question: str, attribute: str, evidence: str, check: dict[str, Any]) -> None:
        if any(it.question.lower() == question.lower() for it in items):
            return
        items.append(RubricItem(id=len(items), question=question, attribute=attribute, evidence=evidence, check=check))

    clauses = _split_clauses(instruction)
    speech_seen = False
    n_speech = 0  # speech clauses so far: the n-th speaker of unquoted turns
    for clause, rel in clauses:
        quoted = ev.quoted_text(clause)
        if quoted and not _quote_is_said(clause, quoted):
            quoted = None  # "a choir holds an 'aah'": the quote names a sound, it is no words said
            clause = clause.replace("'", "").replace('"', "")
        locator: dict[str, Any] | None = None
        if ONLY_THESE.match(clause):
            add("Is there nothing else in the audio?", "other", clause,
                {"kind": "unverifiable", "why": "that no other sound occurs is not checked"})
            continue
        bare = BARE_COUNT.match(clause)
        if bare and subjects and subjects[-1][1].get("kind") == "sound":
            # 'leafs through a book, 5 page turns': a bare count after a sound counts that sound
            n = int(bare.group(1)) if bare.group(1).isdigit() else NUMBERS.get(bare.group(1).lower())
            phrase = subjects[-1][1]["phrase"]
            if n is not None:
                add(f"Does {phrase} occur exactly {n} time{'s' if n != 1 else ''}?", "count", clause,
                    {"kind": "count", "phrase": phrase, "n": n})
                continue
        neg = NEGATED.match(clause)
        if (neg and not quoted and ev.is_speech_phrase(neg.group(1))) or NOBODY.match(clause):
            add("Is the audio free of speech?", "speech", clause, {"kind": "no_speech"})  # 'no one speaks'
            continue
        if neg and not quoted:  # 'no music, just coins': a sound that must not be there
            phrase = _sound_phrase(neg.group(1))
            if ev.phrase_labels(phrase) or ev.phrase_gloss(phrase) is not None or ev.sounding_animal(phrase):
                add(f"Is the sound of '{phrase}' absent?", "sound_event", clause, {"kind": "absent", "phrase": phrase})
            continue  # ('without pausing' names no sound)
        if quoted or ev.is_speech_phrase(clause):
            if not speech_seen:
                add("Is there speech in the audio?", "speech", clause, {"kind": "speech_present"})
                speech_seen = True
            # who speaks: before the quote, else after it ("'Take your marks,' calls a woman")
            head = clause.split(quoted)[0] if quoted else clause
            who = _speaker_gender(head) or (_speaker_gender(clause.split(quoted, 1)[1]) if quoted else None)
            if who == "female":
                add((f"Is speaker {n_speech + 1} female?" if n_speech else "Is the speaker female?") if not quoted
                    else f"Is '{quoted}' said by a female voice?", "speaker",
                    clause, {"kind": "gender", "gender": "female", "words": quoted, "nth": n_speech})
            elif who == "male":
                add((f"Is speaker {n_speech + 1} male?" if n_speech else "Is the speaker male?") if not quoted
                    else f"Is '{quoted}' said by a male voice?", "speaker",
                    clause, {"kind": "gender", "gender": "male", "words": quoted, "nth": n_speech})
            if quoted:
                add(f"Does the speech contain the words '{quoted}'?", "speech_content", clause,
                    {"kind": "words", "words": quoted})
            if RATE_FAST.search(clause):
                add("Does the speaker talk fast?", "style", clause, {"kind": "rate", "rate": "fast"})
            elif RATE_SLOW.search(clause):
                add("Does the speaker talk slowly?", "style", clause, {"kind": "rate", "rate": "slow"})
            m = STYLE.search(clause.replace(quoted, " ") if quoted else clause)  # (not a word of the quote)
            if m:
                w0 = m.group(1).lower()
                word = re.sub(r"ily$", "y", w0) if w0.endswith("ily") else re.sub(r"(?<=[a-z]{3})ly$", "", w0)
                add(f"Does the speech sound {word}?", "style", clause, {"kind": "unverifiable",
                                                                                    "why": "emotion and speaking "
                                                                                           "style"})
            locator = {"kind": "speech", "words": quoted, "nth": n_speech}
            n_speech += 1
        else:
            alone = ADJ_ALONE.match(clause)
            if alone and (lexicon.mostly_adjective(alone.group(1)) or alone.group(1).lower().endswith("ly")):
                continue  # 'pins crash down, loud, and then ...': how the sound before it sounds, no sound of its own
            if COMPARISON.match(clause):
                add(f"Does the audio match: '{clause}'?", "loudness", clause,
                    {"kind": "unverifiable", "why": "a comparison with another sound, not a sound of its own"})
                continue
            if SIMILE.match(clause):  # 'like a volume control being nudged' says what it resembles, not a sound
                add(f"Does the audio match: '{clause}'?", "other", clause,
                    {"kind": "unverifiable", "why": "a comparison (what the sound resembles), not a sound"})
                continue
            phrase = _sound_phrase(clause)
            labels = ev.phrase_labels(phrase)
            # a sound event no AudioSet class is close to ('a triangle is struck', 'a chimpanzee') is still a
            # separate sound to find, count and order; only what it is stays unverifiable
            if (labels or SOUND_VERB.search(clause) or ev.phrase_gloss(phrase) is not None
                    or ev.sounding_animal(phrase) is not None or _subject_verb(clause)):
                count = _count_in(clause)
                add(f"Is the sound of '{phrase}' present?", "music" if MUSIC.search(phrase) else "sound_event",
                    clause, {"kind": "sound", "phrase": phrase})
                if count is not None:
                    add(f"Does {phrase} occur exactly {count} time{'s' if count != 1 else ''}?", "count", clause,
                        {"kind": "count", "phrase": phrase, "n": count})
                locator = {"kind": "sound", "phrase": phrase}
            if MUSIC.search(clause):
                if TEMPO_FAST.search(clause):
                    add("Is the music fast (a quick tempo)?", "music", clause, {"kind": "tempo", "tempo": "fast"})
                elif TEMPO_SLOW.search(clause):
                    add("Is the music slow (a slow tempo)?", "music", clause, {"kind": "tempo", "tempo": "slow"})
            if locator is None and not MUSIC.search(clause) and not (LOUDER.search(clause) or QUIETER.search(clause)):
                add(f"Does the audio match: '{clause}'?", "other", clause,
                    {"kind": "unverifiable", "why": "names no sound class, speech or measurable property"})
        if LOUDER.search(clause):
            add("Does the audio get louder over time?", "loudness", clause, {"kind": "loudness", "trend": "increasing"})
        elif QUIETER.search(clause):
            add("Does the audio get quieter over time?", "loudness", clause, {"kind": "loudness", "trend": "decreasing"})
        if locator is not None:
            if rel in ("after", "before") and subjects:
                prev_clause, prev_loc = subjects[-1]
                first, second = (prev_loc, locator) if rel == "after" else (locator, prev_loc)
                fc, sc = (prev_clause, clause) if rel == "after" else (clause, prev_clause)
                add(f"Does '{_brief(fc)}' happen before '{_brief(sc)}'?", "order", f"{prev_clause} ... {clause}",
                    {"kind": "order", "first": first, "second": second})
            subjects.append((clause, locator))
    if not items:
        add(f"Does the audio match: '{instruction.strip()}'?", "other", instruction,
            {"kind": "unverifiable", "why": "no verifiable requirement recognised"})
    return items


def _article(phrase: str) -> str:
    p = phrase.strip()
    if re.match(r"^(a|an|the|some)\b", p, re.IGNORECASE) or p.endswith("s"):
        return p
    return ("an " if p[:1].lower() in "aeiou" else "a ") + p


def _brief(clause: str, n: int = 8) -> str:
    w = clause.split()
    return " ".join(w[:n]) + (" ..." if len(w) > n else "")


def rule_filter(instruction: str, items: list[RubricItem]) -> list[RubricItem]:
    """Keep items grounded in the instruction (their evidence words occur in it) and not duplicated."""
    inst = set(ev.words_of(instruction))
    seen: set[str] = set()
    for it in items:
        key = it.question.lower()
        words = [w for w in ev.words_of(it.evidence) if len(w) > 2]
        grounded = not words or sum(w in inst for w in words) / len(words) >= 0.6
        if key in seen:
            it.kept, it.drop_reason = False, "duplicate"
        elif not grounded:
            it.kept, it.drop_reason = False, "not grounded in the instruction's words"
        seen.add(key)
    return items


def read_rubric(text: str) -> L.RubricReading:
    """The rule reading of a rubric instruction: its kept items as typed checks, and the content words of
    the instruction that no item came from (a clause the reader skipped), in order."""
    items = [it for it in rule_filter(text, rule_decompose(text)) if it.kept]
    read = [L.RubricReadItem(question=it.question, evidence=it.evidence, check=L.as_check(it.check)) for it in items]
    used: set[str] = set()
    for it in items:
        used.update(L._tokens(it.evidence))
    function = set(L.phrases()["function_words"])
    accounted, unaccounted = [], []
    for w in L._tokens(text):
        (accounted if w in used or w in function or w.isdigit() else unaccounted).append(w)
    return L.RubricReading(text=text, items=read, accounted=accounted, unaccounted=list(dict.fromkeys(unaccounted)))
