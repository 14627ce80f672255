"""What was said: the transcript against the choices' words, two readings agreeing in sound, and the day
named in it shifted ('the day after the day mentioned')."""

from __future__ import annotations

import difflib

from audiomind.language import claims, cues
from audiomind.language.analysis import DAYS, QuestionAnalysis, is_numeric_choice, states_time
from audiomind.language.text import (
    NUMBER_TOKENS,
    claim_negated,
    clause_words,
    content,
    is_claim,
    matchable,
    misheard_numbers,
    negated,
    number_word,
    soundex,
    stem,
    words,
)
from audiomind.reasoning.facts import Facts, TranscriptFact
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare

UNCLEAR_RELIABILITY = 0.65  # a literal match's reliability when the question is not read as one about speech


def _fuzzy_in(w: str, heard: set[str]) -> float:
    """1 for the word (or its stem) heard verbatim; a close spelling or a sound-alike (ASR slips) scores a
    little less; short words and closed classes (days) must be heard exactly."""
    if w in heard or stem(w) in {stem(h) for h in heard} or NUMBER_TOKENS.get(w, "") in heard:
        return 1.0
    if len(w) < 5 or w in DAYS:
        return 0.0
    if any(len(h) >= 5 and abs(len(h) - len(w)) <= 2 and soundex(h) == soundex(w) for h in heard):
        return 0.8
    best = max((difflib.SequenceMatcher(None, w, h).ratio() for h in heard if h[:1] == w[:1]), default=0.0)
    return best if best >= 0.8 else 0.0


def verify_transcript(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Literal and fuzzy match of each choice's content words in the transcript. A choice heard verbatim
    when the others are not is strong support, whatever the question's wording; with a 'not mentioned'
    question the roles flip."""
    t = f.transcript
    if t is None or not t.text.strip() or not a.choices:
        return None
    if "day_offset" in a.steps:
        return None  # the spoken day is a premise, not the answer (verify_day_offset)
    recalls, reasons = _word_recalls(t, _choice_words(a))
    if "not_mentioned" in a.steps:
        return _not_mentioned(t, a, recalls, reasons)
    eliminated = _by_elimination(t, a, recalls, reasons)
    if eliminated is not None:
        return eliminated
    # distinctive: one choice clearly better heard than every other (ASR slips leave a partial match)
    speechy = f.speech is not None and f.duration_s > 0 and f.speech.speech_s >= 0.4 * f.duration_s
    partial_ok = a.fit("speech_content") >= 0.5 or a.primary in ("speech_content", "count_words") or speechy
    if partial_ok and max(recalls) < 0.6 and not any(is_numeric_choice(c) for c in a.choices):
        recalls, reasons = _paraphrased(t, a, recalls, reasons)
    return _transcript_match(f, t, a, recalls, reasons, partial_ok)


def _choice_words(a: QuestionAnalysis) -> list[list[str]]:
    """Per choice, the words to listen for: its content words, less the ones another choice shares."""
    # a count is not transcript content ('how many beeps?' with 'three' said aloud), nor is a time; but a
    # number that is the answer to a question about what was said ('until what hour?' -> 'eight') is
    counting = a.asks("counting") or (
        a.primary.startswith("count_") and a.fit(a.primary) >= 0.6)
    per_choice = []
    for c in a.choices:
        cw = matchable(c)
        if is_numeric_choice(c) and (counting or states_time(c)):
            cw = []
        per_choice.append(cw)
    # a word several choices share ('under' in 'under the doormat' and 'under the blue flower pot') tells
    # them apart no better than a stopword: each choice is matched on its own words, when it has any
    shared = {stem(w) for i, cw in enumerate(per_choice) for w in set(cw)
              if any(stem(w) in {stem(x) for x in other} for j, other in enumerate(per_choice) if j != i)}
    return [[w for w in cw if stem(w) not in shared] or cw for cw in per_choice]


def _word_recalls(t: TranscriptFact, per_choice: list[list[str]]) -> tuple[list[float], list[str]]:
    """Per choice, the share of its words heard (the better of the transcript and any second reading), and
    how many of them were heard verbatim."""
    heard = set(words(t.text))
    recalls, reasons = [], []
    for cw in per_choice:
        hits = [_fuzzy_in(w, heard) for w in cw]
        r = sum(hits) / len(cw) if cw else 0.0
        for other in t.readings:  # a second reading of a stretch (the planner's doubt step): the better hearing
            again = [_fuzzy_in(w, set(words(other.text))) for w in cw]
            if cw and sum(again) / len(cw) > r:
                r, hits = sum(again) / len(cw), again
        recalls.append(r)
        reasons.append(f"{sum(h >= 0.99 for h in hits)}/{len(cw)} content words heard")
    return recalls, reasons


def _not_mentioned(t: TranscriptFact, a: QuestionAnalysis, recalls: list[float],
                   reasons: list[str]) -> VerifierResult:
    """A 'not mentioned' question: the one choice not heard, when all the others are."""
    absent = [i for i, r in enumerate(recalls) if r < 0.5]
    supports = [(1.0 if len(absent) == 1 else 0.3) if r < 0.5 else -min(1.0, r) for r in recalls]
    reason = f"'not mentioned' question; transcript {t.text.strip()!r}; choices heard: " + ", ".join(
        f"{c!r} {r:.2f}" for c, r in zip(a.choices, recalls))
    fit = 0.95 if len(absent) == 1 else 0.5
    return _result("transcript_absent", a, fit, 0.9, supports, reasons, reason, t.evidence_ids)


def _by_elimination(t: TranscriptFact, a: QuestionAnalysis, recalls: list[float],
                    reasons: list[str]) -> VerifierResult | None:
    """Several choices were all said: a question whose answer is one of them would not offer the others, so
    the one never said is the likely answer (by elimination, never confident)."""
    heard_full = sum(r >= 0.99 for r in recalls)
    unheard = [i for i, r in enumerate(recalls) if r < 0.3]
    if not (heard_full >= 2 and len(unheard) == 1 and len(a.choices) >= 3):
        return None
    supports = [0.7 if i == unheard[0] else 0.0 for i in range(len(recalls))]
    reason = (f"transcript {t.text.strip()[:200]!r}: {heard_full} choices are all heard, only "
              f"{a.choices[unheard[0]]!r} is not; by elimination")
    return _result("transcript_complement", a, 0.6, 0.6, supports, reasons, reason, t.evidence_ids)


def _paraphrased(t: TranscriptFact, a: QuestionAnalysis, recalls: list[float],
                 reasons: list[str]) -> tuple[list[float], list[str]]:
    """A paraphrase of what was said ('sunshine and a gentle breeze' for 'sunny with a light breeze'): the
    choice clearly closest in meaning (MiniLM) gets a partial recall."""
    from audiomind.embedded.text import similarity

    sims = [float(x) for x in similarity(a.choices, [t.text])[:, 0]]
    srank = sorted(sims, reverse=True)
    if srank[0] >= 0.45 and srank[0] - (srank[1] if len(srank) > 1 else 0.0) >= 0.15:
        recalls = [max(r, 0.6 * sm / srank[0] if sm == srank[0] else min(r, 0.3 * sm)) for r, sm in zip(recalls, sims)]
        reasons = [f"{rs}; meaning similarity {sm:.2f}" for rs, sm in zip(reasons, sims)]
    return recalls, reasons


def _transcript_match(f: Facts, t: TranscriptFact, a: QuestionAnalysis, recalls: list[float], reasons: list[str],
                      partial_ok: bool) -> VerifierResult:
    """Support for the choice clearly better heard than every other (a partial match counts when the
    question is about what was said)."""
    ranked = sorted(recalls, reverse=True)
    best, second = ranked[0], (ranked[1] if len(ranked) > 1 else 0.0)
    distinctive = (best >= 0.6 or (best >= 0.3 and partial_ok)) and best - second >= 0.25
    supports = []
    for r in recalls:
        if distinctive and r == best:
            supports.append(1.0 if best >= 0.6 else 0.7)
        elif r >= 0.6:
            supports.append(0.4)
        else:
            supports.append(-0.3 if distinctive else 0.0)
    # a choice heard nearly whole is strong support whatever the question; a partial match (one content word
    # of several, as when 'time' is heard and the choice is 'both at the same time') counts as much as the
    # question is about what was said
    fit = max(a.fit("speech_content"), (0.85 if best >= 0.6 else 0.5) if distinctive else 0.0)
    if not distinctive:
        fit = min(fit, 0.4)
    reliability = 0.9 if best >= 0.6 and best - second >= 0.4 else 0.75
    reason = f"transcript {t.text.strip()[:300]!r}" + "".join(
        f"; {r.model} reading of {r.start_s:.1f}-{r.end_s or f.duration_s:.1f} s {r.text.strip()[:200]!r}"
        for r in t.readings) + "; word recall per choice: " + ", ".join(
        f"{c!r} {r:.2f}" for c, r in zip(a.choices, recalls))
    unclear = a.fit("speech_content") < 0.5 and not (a.frame is not None and a.frame.about_speech)
    if unclear and (cues.has("derivation_in_speech", t.text) or a.asks("asks_by_exclusion")):
        # a literal match answers a question about what was said; for a question the reading does not take to
        # be one (no verb of saying, little likeness to questions about speech), over speech that makes what it
        # states a premise ('a fifteen percent tip', 'three floors below', 'right behind me') or a question
        # asked by exclusion, what was heard may be the premise of a step the reader did not see
        reliability = min(reliability, UNCLEAR_RELIABILITY)
        reason += ("; the question is not read as one about what is said and the speech states a share, a "
                   "relative place or a change (or the question asks by exclusion): a literal match is weaker evidence")
    doubts = _literal_doubts(t, a, recalls) if distinctive and best >= 0.6 else []
    if doubts:
        reliability = min(reliability, UNCLEAR_RELIABILITY)
        reason += "; a literal match, but " + "; ".join(doubts) + ": weaker evidence"
    ids = t.evidence_ids + [i for r in t.readings for i in r.evidence_ids]
    return _result("transcript_match", a, fit, reliability, supports, reasons, reason, ids)


OTHER_HEARD = 0.4  # another choice heard at least this well: the transcript does not single one out


def _literal_doubts(t: TranscriptFact, a: QuestionAnalysis, recalls: list[float]) -> list[str]:
    """Why the best heard choice may not be what was said: its words heard apart, not together ('give me a
    lift ... until next week' for 'he will give the lift next week'); another choice heard too (the speech
    names several of them, and the question may pick among them by what is said of each); a word of the question
    said only in another clause; or the clause that says it negated where the choice is not, or the other way
    round ('None of the shops open on Sundays' for 'yes, it is open on Sundays')."""
    best = max(range(len(recalls)), key=lambda i: recalls[i])
    doubts = []
    cw = matchable(a.choices[best])  # all its words, those other choices share too
    span = _said_span(t.text, cw)
    if span is not None:
        lo, hi, toks = span
        stretch = [w for w, _ in toks[lo:hi + 1]]
        foreign = [w for w in content(" ".join(stretch)) if not any(_fuzzy_in(c, {w}) >= 0.8 for c in cw)]
        if len(foreign) > max(1, len(set(cw)) - 1):  # more than about one other content word between two of its
            doubts.append(f"its words are heard apart ({' '.join(stretch)!r}), not said together")
        clauses = {c for _, c in toks[lo:hi + 1]}
        elsewhere = _asked_elsewhere(a.question, cw, toks, clauses)
        if elsewhere:
            doubts.append(f"the question's {', '.join(repr(w) for w in elsewhere)} is said in another clause than "
                          "the choice")
        if is_claim(a.choices[best]) and (
                negated([w for w, c in toks if c in clauses]) != claim_negated(a.choices[best])):
            doubts.append("the clause that says it has the opposite polarity")
    others = [r for i, r in enumerate(recalls) if i != best and r >= OTHER_HEARD]
    if others:
        doubts.append(f"another choice is heard too (recall {max(others):.2f})")
    sounds = _sounds_like_other(t.text, a.choices, best)
    if sounds:
        doubts.append(sounds)
    return doubts


def _sounds_like_other(text: str, choices: list[str], best: int) -> str:
    """Another choice of a number after a word ('platform 2') heard as a number's sound-alike right after that
    word ('platform to'; not 'go to gate four'): the number the transcript spells out may not be the one that
    was said."""
    heard = words(text)
    for j, choice in enumerate(choices):
        if j == best:
            continue
        cw = words(choice)
        nums = {n for w in cw if (n := number_word(w))}
        context = [w for w in content(choice) if not number_word(w)]
        if not nums or not context:
            continue
        for i, n in misheard_numbers(text):
            before = heard[i - 1] if i else ""
            if n in nums and any(_fuzzy_in(c, {before}) >= 0.8 for c in context):
                return f"{choice!r} may be what was said ({before} {heard[i]!r} heard)"
    return ""


def _asked_elsewhere(question: str, cw: list[str], toks: list[tuple[str, int]], clauses: set[int]) -> list[str]:
    """Content words of the question heard in the transcript, but never in a clause that says the choice ('The
    bakery opens at seven, but on Sundays it opens two hours later' asked about Sunday: 'sundays' is said in
    the clause that states the change, not with 'seven'); the question may ask about that other clause."""
    out = []
    for w in dict.fromkeys(content(question)):
        if any(_fuzzy_in(w, {c}) >= 0.8 for c in cw):
            continue  # a word of the choice itself
        where = {c for h, c in toks if _fuzzy_in(w, {h}) >= 0.8}
        if where and not where & clauses:
            out.append(w)
    return out


def _said_span(text: str, cw: list[str]) -> tuple[int, int, list[tuple[str, int]]] | None:
    """The smallest stretch of the transcript holding one of each heard word of `cw`: (first index, last
    index, the transcript's (word, clause) tokens); None when none is heard."""
    toks = clause_words(text)
    hits = sorted((i, w) for w in dict.fromkeys(cw) for i, (h, _) in enumerate(toks) if _fuzzy_in(w, {h}) >= 0.8)
    need = len({w for _, w in hits})
    if not need:
        return None
    best: tuple[int, int] | None = None
    count: dict[str, int] = {}
    lo = 0
    for hi in range(len(hits)):  # sliding window over the hits: the shortest one covering every heard word
        count[hits[hi][1]] = count.get(hits[hi][1], 0) + 1
        while len(count) == need:
            if best is None or hits[hi][0] - hits[lo][0] < best[1] - best[0]:
                best = (hits[lo][0], hits[hi][0])
            count[hits[lo][1]] -= 1
            if not count[hits[lo][1]]:
                del count[hits[lo][1]]
            lo += 1
    assert best is not None
    return best[0], best[1], toks


SOUND_AT = 0.7  # a reading sounds like a choice when their letters match at least this well (difflib ratio)
SOUND_MARGIN = 0.1  # ... and better than like any other choice by this much


def _sounds_like(choice: str, text: str) -> float:
    """How closely some run of the reading's words spells the choice (letters only, spaces dropped): a
    recogniser that heard 'or on driver' for 'orange river' still spells it closely."""
    target = "".join(words(choice))
    ws = words(text)
    n = max(1, len(words(choice)))
    best = 0.0
    for k in range(max(1, n - 1), n + 3):
        for i in range(max(1, len(ws) - k + 1)):
            best = max(best, difflib.SequenceMatcher(None, target, "".join(ws[i:i + k])).ratio())
    return best


def verify_readings_agree(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Two readings of the same words (the first and the doubt step's stronger one) that each sound like one
    choice more than like any other: evidence for it, moderate (a sound-alike is not a word heard)."""
    t = f.transcript
    if t is None or not t.readings or not a.choices or any(is_numeric_choice(c) for c in a.choices):
        return None
    texts = [t.text] + [r.text for r in t.readings]
    votes, lines = [], []
    for text in texts:
        sc = [_sounds_like(c, text) for c in a.choices]
        order = sorted(range(len(sc)), key=lambda i: -sc[i])
        lead = order[0] if sc[order[0]] >= SOUND_AT and (len(sc) < 2 or sc[order[0]] - sc[order[1]] >= SOUND_MARGIN) else None
        votes.append(lead)
        lines.append(f"{text.strip()[:120]!r}: " + ", ".join(f"{c!r} {x:.2f}" for c, x in zip(a.choices, sc)))
    named = {v for v in votes if v is not None}
    if len(named) != 1 or votes.count(next(iter(named))) < 2:
        return None
    pick = next(iter(named))
    supports = [0.8 if i == pick else -0.2 for i in range(len(a.choices))]
    reason = (f"{votes.count(pick)} readings agree in sound with {a.choices[pick]!r} (letters matched per "
              "choice: " + "; ".join(lines) + ")")
    ids = t.evidence_ids + [i for r in t.readings for i in r.evidence_ids]
    return _result("readings_agree", a, 0.6, 0.6, supports, [""] * len(supports), reason, ids)


def verify_day_offset(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """'The day after the day mentioned': find the spoken weekday, shift it, compare with day choices."""
    if "day_offset" not in a.steps or f.transcript is None:
        return None
    heard = set(words(f.transcript.text))
    spoken = [d for d in DAYS if d in heard]
    if len(spoken) != 1:
        return None
    shift = claims.day_shift(a.question)
    n, sign = abs(shift), (1 if shift > 0 else -1)
    target = DAYS[(DAYS.index(spoken[0]) + sign * n) % 7]
    supports = [1.0 if target in c.lower() else (-1.0 if any(d in c.lower() for d in DAYS) else 0.0) for c in a.choices]
    if max(supports) < 1:
        return None
    reason = f"the transcript names {spoken[0].title()}; {n} day(s) {'before' if sign < 0 else 'after'} is {target.title()}"
    return _result("day_offset", a, 0.95, 0.9, supports, [""] * len(supports), reason, f.transcript.evidence_ids)


_SAID_NOT_FOR = ["what the speaker implies or means beyond the words", "what follows from what was said",
                 "how the voice sounds", "what non-speech sounds are heard"]
_SAID_EXAMPLES = [  # the forms a question about what was said takes, over topics of every kind
    "What does the speaker say?", "Which word is spoken?", "Which phrase is said?", "What is the message?",
    "What number does the caller give?", "Which name is mentioned?", "What place does the announcement name?",
    "What does the speaker ask the listener to do?", "What time does the speaker give?",
    "What does the speaker recommend?", "What does the man say he will bring?",
    "Where does the speaker say they are going?", "When does the speaker say it will happen?",
    "What reason does the speaker give?", "Which of these sentences is spoken?", "What is the password?",
    "What is the code the speaker gives?", "What time does the speaker say the shop opens?",
    "Which city is mentioned?", "Which town does the announcement name?",
    "What is the name of the person the caller asks for?", "Where does the announcer say the train is going?",
    "Which bus number does the speaker tell us to take?", "Which gate does the flight board at?",
    "What number does the caller leave?", "What colour does the speaker say the car is?",
    "What does the announcer ask passengers to do?", "What does the teacher tell the class to do?",
    "Who does the speaker thank?", "What does the speaker order?", "Which dish does the customer ask for?",
    "On which day is the meeting?", "What day does the speaker mention?", "What does the voice announce?",
    "What is announced?", "What is the first thing the speaker says?", "What are the last words of the recording?",
    "What address does the speaker give?", "How much does the speaker say the ticket costs?",
    "What price is mentioned?", "What is the name of the street?", "What is the speaker's name?",
    "Which word does the speaker use?", "What does the message say?",
    "What is the weather forecast for tomorrow, according to the speaker?",
    "Which room does the speaker say the meeting is in?", "What does the woman say she bought?",
    "What did the man say he forgot?", "Which item does the speaker say is on sale?",
    "What is the title of the book the speaker mentions?", "Which team does the commentator say scored?",
    "What instruction is given?", "What warning is given in the announcement?", "Which seat number is announced?",
    "What does the recording say is closed?",
]
declare("transcript_match", function="matches each choice's words with the words recognised in the speech",
        supports=["what the speaker says", "which word, name, number or place is said"],
        not_for=_SAID_NOT_FOR,
        examples=_SAID_EXAMPLES)
declare("readings_agree", function="matches choices with what a second reading of the speech heard",
        supports=["what the speaker says", "which word or phrase is said"],
        not_for=_SAID_NOT_FOR,
        examples=_SAID_EXAMPLES)
declare("transcript_absent", function="finds the one choice not heard in the speech when the others are",
        supports=["which item is not mentioned", "what the speaker leaves out"],
        not_for=["what the speaker says", "what the speaker implies"],
        examples=["Which of these is not mentioned?", "Which item does the speaker leave out?",
                  "What is never said in the recording?", "Which word is not spoken?"])
declare("transcript_complement", function="picks the one choice never said when several others were all said",
        supports=["which item is not mentioned", "which listed thing is missing from what is said"],
        not_for=["what the speaker says", "what the speaker implies"],
        examples=["Which of these is not mentioned?", "Which item is missing from the list?",
                  "What does the speaker not name?", "Which one is left out of what was said?"])
declare("day_offset", function="counts days on from the one weekday said",
        supports=["which day it will be a number of days after the day mentioned",
                  "which day comes before the day mentioned"],
        not_for=["which day is said", "what time is said"],
        examples=["What day will it be two days after the day mentioned?", "Which day comes after the one named?",
                  "If the meeting is one day later than stated, what day is it?",
                  "What day was it the day before the one mentioned?"])
