"""Evidence-to-choice verifiers: each scores *every* choice against the facts it can see.

A verifier returns, per choice, support in [-1, 1] (+1 the facts say this choice is true, -1 they
contradict it, 0 they say nothing) with the evidence ids and a reason, plus how well the question fits
it (`fit`, from the question analysis) and how reliable its kind of evidence is (`reliability`). The
answer step (audiomind.reasoning.answer) combines them. A verifier never reads a tool's output directly:
only facts (audiomind.reasoning.facts).
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Callable

from pydantic import BaseModel, Field

from audiomind.language import claims
from audiomind.language.analysis import (
    DAYS,
    TREND_WORDS,
    QuestionAnalysis,
    is_numeric_choice,
    parse_number,
    states_time,
)
from audiomind.language.numbers import seconds_in
from audiomind.language.text import (
    GENERIC_LABELS,
    LANGUAGES,
    NUMBER_TOKENS,
    STOPWORDS,
    content,
    language_of,
    letters,
    soundex,
    stem,
    words,
)
from audiomind.reasoning.facts import Facts, Span

# Documented thresholds
NORMAL_SYL_PER_S = 4.6   # ordinary read English: about 4.6 syllables and 2.7 words per second of voiced time
NORMAL_WORDS_PER_S = 2.7
FAST_RATIO = 1.25        # (syllable ratio + word ratio) / 2 at or above this is fast speech
SLOW_RATIO = 0.8         # at or below this is slow speech
MALE_MAX_HZ = 155.0    # adult male f0 typically 85-155 Hz, female 165-255 Hz
FEMALE_MIN_HZ = 170.0
MIN_TALK_S = 0.5       # a voice cluster with less speech than this (VAD) is not a speaker
SIDE_DB = 3.0          # a channel this much louder places the source on its side


class Verdict(BaseModel):
    support: float = 0.0
    reason: str = ""


class VerifierResult(BaseModel):
    name: str
    fit: float = Field(description="how well the question and choices fit this verifier, 0..1")
    reliability: float = Field(description="how often this kind of evidence is right when it applies, 0..1")
    verdicts: list[Verdict]
    reason: str
    evidence_ids: list[str] = Field(default_factory=list)

    @property
    def decisive(self) -> bool:
        return any(v.support >= 0.5 for v in self.verdicts)


Verifier = Callable[[Facts, QuestionAnalysis], "VerifierResult | None"]


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


def _result(name: str, a: QuestionAnalysis, fit: float, reliability: float, supports: list[float],
            reasons: list[str], reason: str, ids: list[str]) -> VerifierResult:
    return VerifierResult(name=name, fit=round(max(0.0, min(1.0, fit)), 3), reliability=reliability,
                          verdicts=[Verdict(support=round(max(-1.0, min(1.0, s)), 3), reason=r)
                                    for s, r in zip(supports, reasons)],
                          reason=reason, evidence_ids=ids)


# ------------------------------------------------------------------ transcript


def verify_transcript(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Literal and fuzzy match of each choice's content words in the transcript. A choice heard verbatim
    when the others are not is strong support, whatever the question's wording; with a 'not mentioned'
    question the roles flip."""
    t = f.transcript
    if t is None or not t.text.strip() or not a.choices:
        return None
    if "day_offset" in a.steps:
        return None  # the spoken day is a premise, not the answer (verify_day_offset)
    heard = set(words(t.text))
    recalls, reasons = [], []
    # a count is not transcript content ('how many beeps?' with 'three' said aloud), nor is a time; but a
    # number that is the answer to a question about what was said ('until what hour?' -> 'eight') is
    counting = a.asks("counting") or (
        a.primary.startswith("count_") and a.fit(a.primary) >= 0.6)
    per_choice = []
    for c in a.choices:
        cw = content(c) or words(c)
        if is_numeric_choice(c) and (counting or states_time(c)):
            cw = []
        per_choice.append(cw)
    # a word several choices share ('under' in 'under the doormat' and 'under the blue flower pot') tells
    # them apart no better than a stopword: each choice is matched on its own words, when it has any
    shared = {stem(w) for i, cw in enumerate(per_choice) for w in set(cw)
              if any(stem(w) in {stem(x) for x in other} for j, other in enumerate(per_choice) if j != i)}
    for cw in per_choice:
        cw = [w for w in cw if stem(w) not in shared] or cw
        hits = [_fuzzy_in(w, heard) for w in cw]
        r = sum(hits) / len(cw) if cw else 0.0
        for other in t.readings:  # a second reading of a stretch (the planner's doubt step): the better hearing
            again = [_fuzzy_in(w, set(words(other.text))) for w in cw]
            if cw and sum(again) / len(cw) > r:
                r, hits = sum(again) / len(cw), again
        recalls.append(r)
        reasons.append(f"{sum(h >= 0.99 for h in hits)}/{len(cw)} content words heard")
    ranked = sorted(recalls, reverse=True)
    best = ranked[0]
    second = ranked[1] if len(ranked) > 1 else 0.0
    negated = "not_mentioned" in a.steps
    if negated:
        # the one choice not heard, when all the others are
        absent = [i for i, r in enumerate(recalls) if r < 0.5]
        supports = [(1.0 if len(absent) == 1 else 0.3) if r < 0.5 else -min(1.0, r) for r in recalls]
        reason = f"'not mentioned' question; transcript {t.text.strip()!r}; choices heard: " + ", ".join(
            f"{c!r} {r:.2f}" for c, r in zip(a.choices, recalls))
        fit = 0.95 if len(absent) == 1 else 0.5
        return _result("transcript_absent", a, fit, 0.9, supports, reasons, reason, t.evidence_ids)
    heard_full = sum(r >= 0.99 for r in recalls)
    unheard = [i for i, r in enumerate(recalls) if r < 0.3]
    if heard_full >= 2 and len(unheard) == 1 and len(a.choices) >= 3:
        # several choices were all said: a question whose answer is one of them would not offer the others,
        # so the one never said is the likely answer (by elimination, never confident)
        supports = [0.7 if i == unheard[0] else 0.0 for i in range(len(recalls))]
        reason = (f"transcript {t.text.strip()[:200]!r}: {heard_full} choices are all heard, only "
                  f"{a.choices[unheard[0]]!r} is not; by elimination")
        return _result("transcript_complement", a, 0.6, 0.6, supports, reasons, reason, t.evidence_ids)
    # distinctive: one choice clearly better heard than every other (ASR slips leave a partial match)
    speechy = f.speech is not None and f.duration_s > 0 and f.speech.speech_s >= 0.4 * f.duration_s
    partial_ok = a.fit("speech_content") >= 0.5 or a.primary in ("speech_content", "count_words") or speechy
    if partial_ok and best < 0.6 and not any(is_numeric_choice(c) for c in a.choices):
        # a paraphrase of what was said ('sunshine and a gentle breeze' for 'sunny with a light breeze')
        from audiomind.embedded.text import similarity

        sims = [float(x) for x in similarity(a.choices, [t.text])[:, 0]]
        srank = sorted(sims, reverse=True)
        if srank[0] >= 0.45 and srank[0] - (srank[1] if len(srank) > 1 else 0.0) >= 0.15:
            recalls = [max(r, 0.6 * sm / srank[0] if sm == srank[0] else min(r, 0.3 * sm)) for r, sm in zip(recalls, sims)]
            reasons = [f"{rs}; meaning similarity {sm:.2f}" for rs, sm in zip(reasons, sims)]
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
    ids = t.evidence_ids + [i for r in t.readings for i in r.evidence_ids]
    return _result("transcript_match", a, fit, reliability, supports, reasons, reason, ids)


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


# ------------------------------------------------------------------ numbers


def counted_noun(question: str) -> str:
    """What a count question counts ('speakers', 'words', 'notes', 'events'): audiomind.language.claims."""
    return claims.counted_noun(question)


def _occurrences(transcript: str, question: str) -> tuple[str, int] | None:
    """How often the word the question quotes (or names after say/repeat/mention) occurs in the transcript."""
    target = claims.said_word(question, STOPWORDS)
    if not target:
        return None
    tw = words(target)
    heard = words(transcript)
    n = sum(1 for i in range(len(heard) - len(tw) + 1)
            if all(stem(heard[i + k]) == stem(tw[k]) for k in range(len(tw))))
    return target, n


def verify_count(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Counts of events, words, speakers or notes, with what is counted read from the question's noun."""
    nums = [parse_number(c) if is_numeric_choice(c) else None for c in a.choices]
    if sum(n is not None for n in nums) < 2:
        return None
    counted = counted_noun(a.question)
    value, ids, what, reliability = None, [], "", 0.8
    if counted == "speakers" and f.speakers is not None:
        value, ids, what, reliability = f.speakers.count, f.speakers.evidence_ids, "distinct voices (speaker_count)", 0.75
        if f.speech is not None and f.speech.speech_s < 0.3:
            value, what = 0, "distinct voices: VAD found no speech"
        elif f.speech is not None:
            talking = f.speakers.talking(f.speech.segments)
            if talking != value:
                value, reliability = talking, 0.65
                what = (f"distinct voices with at least {MIN_TALK_S:g} s inside VAD speech (speaker_count found "
                        f"{f.speakers.count} clusters, some over non-speech)")
            ids = ids + f.speech.evidence_ids
    elif counted == "words" and f.transcript is not None:
        occ = _occurrences(f.transcript.text, a.question)
        if occ is not None:
            value, what = occ[1], f"occurrences of {occ[0]!r} in the transcript"
        elif a.asks("how_many_words"):
            value, what = len(words(f.transcript.text)), "words in the transcript"
        ids, reliability = f.transcript.evidence_ids, 0.8
    elif counted == "notes" and f.pitch is not None and f.pitch.notes:
        value, ids, what, reliability = len(f.pitch.notes), f.pitch.evidence_ids, "steady pitched notes", 0.7
    elif f.events is not None and _counts_what_is_said(f, a):
        return None  # the counted things are amounts or things named in what is said, not sounds heard
    elif f.events is not None:
        events = f.events.events
        what = "separate sound events above the noise floor (count_events)"
        before = "before_voice" in a.steps or (f.speech is not None and f.speech.segments and a.asks("before_something"))
        after = "after_voice" in a.steps or (f.speech is not None and f.speech.segments and not before
                                             and a.asks("after_voice_stops"))
        if after:
            end = f.speech.segments[-1].end_s
            events = [e for e in events if e.start_s >= end - 0.05]
            what = f"sound events that start after the voice ends at {end:.2f} s"
        elif before:
            onset = f.speech.segments[0].start_s
            events = [e for e in events if e.end_s <= onset + 0.05]
            what = f"sound events that end before the voice starts at {onset:.2f} s"
        elif f.speech is not None and f.speech.segments and not a.asks("words_or_syllables"):
            # speech bursts are not the counted sounds when the clip also has other sounds
            others = [e for e in events if not _inside_speech(e, f.speech.segments)]
            if others and len(others) < len(events):
                events, what = others, what + ", excluding bursts inside speech (VAD)"
        value, ids = len(events), f.events.evidence_ids + (f.speech.evidence_ids if f.speech else [])
        reliability = 0.85
    if value is None:
        return None
    supports, reasons = [], []
    for n in nums:
        if n is None:
            supports.append(0.0)
        elif n == value:
            supports.append(1.0)
        else:
            supports.append(-1.0 if abs(n - value) >= 2 else -0.6)
        reasons.append("" if n is None else f"states {n}")
    fit = max(a.fit("count_events"), a.fit("count_speakers"), a.fit("count_words"), 0.5)
    loose = _loose_count(a, counted)
    if loose:
        fit = min(fit, 0.35)
        what += f" ({loose})"
    reason = f"{value} {what}"
    if value not in nums:
        reason += "; no choice states it"
    return _result(f"count_{counted}", a, fit, reliability, supports, reasons, reason, ids)


def _counted_topic(a: QuestionAnalysis) -> str | None:
    """The noun a count question counts, from the frame: the first topic word after 'how many' / 'number of'
    that WordNet knows as a noun ('how many distinct instruments' counts instruments, not 'distinct')."""
    from audiomind.language.wordnet import names_sound

    if a.frame is None:
        return None
    ws = a.frame.words
    at = next((i for i in range(1, len(ws)) if (ws[i - 1].word, ws[i].word) in (("how", "many"), ("number", "of"))),
              None)
    topics = [w.word for w in ws[at + 1:] if w.role == "topic"] if at is not None else []
    known = [t for t in topics if names_sound(t) is not None]
    # the counted noun is plural ('separate sound events', 'distinct instruments', 'short dropouts'), else the
    # first noun WordNet knows ('people')
    return next((t for t in known if t.endswith("s")), known[0] if known else (topics[0] if topics else None))


def _loose_count(a: QuestionAnalysis, counted: str) -> str:
    """Why a count fits the question only loosely, or '': the question asks no count (choices like 'one note'
    or 'two notes together' hold numbers but 'is it one note or a chord?' counts nothing), or what it counts
    is no sound event ('how many instruments', 'how many dropouts')."""
    if a.frame is not None and not any(w.word in ("many", "count", "number", "often") for w in a.frame.words):
        return "the question asks for no count"
    if counted != "events":
        return ""
    noun = _counted_topic(a)
    if noun is None:
        return ""
    from audiomind.language.wordnet import names_sound

    return "" if names_sound(noun) is not False else f"what is counted ({noun!r}) is no kind of sound (WordNet)"


def _counts_what_is_said(f: Facts, a: QuestionAnalysis) -> bool:
    """A count question whose choices are amounts ('2 dollars', '50 cents': a unit is no count of events), or
    whose counted noun is itself spoken in the transcript ('how many guests are named?' over a sentence that
    names guests): a count of sound events does not answer it."""
    from audiomind.language.numbers import spoken_quantities

    if any(q.unit for c in a.choices for q in spoken_quantities(c)):
        return True
    if f.transcript is None or a.frame is None:
        return False
    noun = _counted_topic(a)
    if not noun or stem(noun) not in {stem(w) for w in words(f.transcript.text)}:
        return False
    from audiomind.language.wordnet import names_sound

    # guests, apples, people are counted in what is said; a knock or a bell named in it may still be heard
    return names_sound(noun) is False


def _inside_speech(e: Span, speech: list[Span]) -> bool:
    overlap = sum(max(0.0, min(e.end_s, s.end_s) - max(e.start_s, s.start_s)) for s in speech)
    return overlap >= 0.5 * max(e.length_s, 1e-3)


def verify_tempo(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Beats (or repeats) per minute: the tempo tool's estimate, or, for evenly repeating bursts that no
    tempo estimate covers, 60 / their median inter-onset interval."""
    tempo = f.values.get("tempo")
    if a.fit("tempo") < 0.3:
        return None
    nums = [parse_number(c) for c in a.choices]
    if sum(n is not None for n in nums) < 2:
        return None
    if tempo is not None:
        bpm, what, ids = float(tempo.value), "tempo", tempo.evidence_ids
    else:
        ev = f.events.events if f.events is not None else []
        gaps = sorted(ev[i + 1].start_s - ev[i].start_s for i in range(len(ev) - 1))
        if len(gaps) < 3:
            return None
        mid = gaps[len(gaps) // 2]
        if mid <= 0 or max(abs(g - mid) for g in gaps) > 0.15 * mid:
            return None  # not an even pulse
        bpm, what, ids = 60.0 / mid, f"{len(ev)} evenly spaced bursts, one every {mid:.2f} s:", f.events.evidence_ids
    supports = []
    for n in nums:
        if n is None:
            supports.append(0.0)
            continue
        exact = abs(n - bpm) / max(bpm, 1)
        # a beat tracker may lock onto half or double the beat; evenly spaced bursts have no such ambiguity
        octave = min(abs(n - 2 * bpm), abs(n - bpm / 2)) * 1.5 / max(bpm, 1) if tempo is not None else 1.0
        err = min(exact, octave)
        supports.append(1.0 if exact <= 0.06 else 0.5 if octave <= 0.06 else (-1.0 if err >= 0.15 else 0.0))
    unit = "BPM" if tempo is not None else "per minute"
    return _result("tempo", a, a.fit("tempo"), 0.8, supports, [""] * len(supports), f"{what} {bpm:.1f} {unit}", ids)


# ------------------------------------------------------------------ time


def choice_seconds(text: str, clip_s: float | None = None) -> float | None:
    """Seconds a choice states (audiomind.language.numbers.seconds_in)."""
    return seconds_in(text, clip_s)


def verify_time(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Onsets, offsets and durations stated by the choices, against VAD (speech) or the sound events.

    The reading the question fits best decides. When the question fits two readings about as well ('the
    running time of the tone' is close in meaning to 'at what time does it start') and the best one's
    measurement matches no choice at all, a reading whose measurement matches exactly one choice is taken
    instead, with less confidence: the choices were written around the quantity that is asked."""
    # only a choice that states a time ('5 seconds', '00:06') is one: '6 times' is a count
    secs = [choice_seconds(c, f.duration_s) if states_time(c) else None for c in a.choices]
    if sum(s is not None for s in secs) < 2:
        return None
    fams = {k: a.fit(k) for k in ("onset", "offset", "duration")}
    top = max(fams, key=fams.get)
    if fams[top] < 0.3:
        return None
    speech = a.asks("speech_subject") and f.speech is not None and f.speech.segments
    spans = f.speech.segments if speech else (f.events.events if f.events is not None else [])
    span_ids = (f.speech.evidence_ids if speech else (f.events.evidence_ids if f.events else []))
    whole = a.asks("whole_clip") and not a.asks("source_lasts")

    def reading(kind: str) -> tuple[float, str, list[str], list[float]] | None:
        ids = span_ids
        if kind == "duration" and whole:
            value, what = f.values["duration"].value if "duration" in f.values else f.duration_s, "the clip's duration"
            ids = f.values["duration"].evidence_ids if "duration" in f.values else []
        elif not spans:
            return None
        elif kind == "onset":
            value, what = spans[0].start_s, ("speech starts (VAD)" if speech else "the first sound event starts")
        elif kind == "offset":
            value, what = spans[-1].end_s, ("speech ends (VAD)" if speech else "the last sound event ends")
        else:
            value = spans[-1].end_s - spans[0].start_s
            what = "the speech spans (VAD)" if speech else ("the sound lasts" if len(spans) == 1 else f"the {len(spans)} sound events span")
        tol = max(0.6, 0.15 * value)
        supports = [0.0 if s is None else (1.0 - abs(s - value) / tol if abs(s - value) <= tol else
                                           (-1.0 if abs(s - value) >= 2.5 * tol else -0.4)) for s in secs]
        return value, what, ids, supports

    best = reading(top)
    if best is None:
        return None
    kind, fit, reliability, note = top, fams[top], 0.8, ""
    if max(best[3]) < 0.5:
        others = []
        for k, relevance in fams.items():
            r = reading(k) if k != top and relevance >= max(0.3, fams[top] - 0.2) else None
            if r is not None and sum(v >= 0.5 for v in r[3]) == 1:
                others.append((relevance, k, r))
        if others:
            _, alt, r = max(others)
            note = f"; no choice matches the {top} reading ({best[1]} at/over {best[0]:.2f} s), one matches the {alt} reading"
            best, kind, fit, reliability = r, alt, fams[alt] * 0.9, 0.65
    value, what, ids, supports = best
    reason = f"{what} at/over {value:.2f} s{note}"
    return _result(f"time_{kind}", a, fit, reliability, supports, [f"{s} s" if s is not None else "" for s in secs],
                   reason, ids)


# ------------------------------------------------------------------ comparisons between two things

def _two(spans: list[Span]) -> tuple[Span, Span] | None:
    return (spans[0], spans[-1]) if len(spans) >= 2 else None


def _utterances(f: Facts) -> list[Span]:
    """Speech split in two at its longest pause (two readings of a sentence)."""
    segs = f.speech.segments if f.speech is not None else []
    t = f.transcript
    if t is not None and t.words and not degenerate_transcript(t.words):
        # voice activity without any recognised word (a cough, a distractor sound) is not part of a reading
        worded = [s for s in segs if t.words_in(s.start_s, s.end_s, pad_s=0.1)]
        segs = worded if len(worded) >= 2 else segs
    if len(segs) < 2:
        return []
    gaps = [segs[i + 1].start_s - segs[i].end_s for i in range(len(segs) - 1)]
    k = max(range(len(gaps)), key=lambda i: gaps[i])
    if gaps[k] < 0.25:
        return []
    first, second = segs[: k + 1], segs[k + 1:]
    return [Span(start_s=g[0].start_s, end_s=g[-1].end_s, score=sum(s.length_s for s in g)) for g in (first, second)]


def degenerate_transcript(words: list) -> bool:
    """A recogniser output that describes no real words: most words without duration, or one word looping
    ('no, no, no, ...', Whisper's failure on audio it cannot read)."""
    if len(words) < 6:
        return False
    flat = sum(1 for w in words if w.end_s - w.start_s < 0.03) / len(words)
    tokens = [letters(w.text) for w in words]
    top = max(tokens.count(t) for t in set(tokens)) / len(tokens)
    return flat >= 0.3 or top >= 0.5


def verify_compare(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Which of two things is higher / louder / faster / longer, from measured per-segment values."""
    fams = {"pitch": a.fit("pitch_compare"), "loudness": a.fit("loudness_compare"), "rate": a.fit("rate_compare"),
            "length": 0.0}
    named = claims.dimensions_named(a.question)
    for dim, relevance in list(fams.items()):
        share = sum(1 for c in a.choices if claims.names_dimension(c, dim)) / max(1, len(a.choices))
        if share or dim in named:
            fams[dim] = max(relevance, min(1.0, 0.3 + 0.5 * share + (0.3 if dim in named else 0.0)))
    # a comparative the question itself uses ('which is quieter?') names the dimension outright
    dim = named[0] if len(named) == 1 else max(fams, key=fams.get)
    if fams[dim] < 0.3:
        return None
    stated = [claims.comparison_claim(c, a.question, dim) for c in a.choices]
    if sum(r is not None for _, r in stated) < 2:
        return None
    if not claims.names_two_things(a.question) and not any(claims.names_one_of_two(c) for c in a.choices):
        return None  # 'the same level' about one sound over time is a trend, not a comparison of two
    pair, unit, ids, what = None, "", [], ""
    if dim == "pitch":
        cands = []
        if f.pitch is not None and len(f.pitch.notes) >= 2:
            cands.append((f.pitch.notes, f.pitch.evidence_ids, "pitch notes"))
        if f.events is not None and sum(e.pitch_hz is not None for e in f.events.events) >= 2:
            cands.append(([e for e in f.events.events if e.pitch_hz], f.events.evidence_ids, "sound events' median f0"))
        if not cands:
            return None
        spans, ids, what = min(cands, key=lambda c: abs(len(c[0]) - 2))
        p = _two(spans)
        pair = (p[0].pitch_hz, p[1].pitch_hz) if p else None
        diff = 12 * math.log2(pair[1] / pair[0]) if pair else 0.0
        same_band, unit = 0.5, "semitones"
    elif dim == "loudness":
        if f.events is None or f.events.count < 2:
            return None
        p = _two(f.events.events)
        pair = (p[0].level_db, p[1].level_db)
        if None in pair:
            return None
        diff, same_band, unit, ids, what = pair[1] - pair[0], 1.5, "dB", f.events.evidence_ids, "peak level of the first and last sound events"
    elif dim == "rate":
        utts = _utterances(f)
        if len(utts) != 2:
            return None
        ws = f.transcript.words if f.transcript is not None else []
        counts = [len(f.transcript.words_in(u.start_s, u.end_s, pad_s=0.25)) if f.transcript else 0 for u in utts]
        if degenerate_transcript(ws) or not all(counts):
            # the recogniser's words cannot be trusted to split the speech (a loop of one word, words without
            # duration): the utterances' voiced lengths still tell a sentence said twice apart, less surely
            pair = tuple(1.0 / max(u.score, 1e-3) for u in utts)
            what = "1 / voiced length of the two utterances (the transcript is degenerate, so words are not counted)"
            ids = f.speech.evidence_ids if f.speech else []
            degenerate = True
        else:
            pair = tuple(n / u.score for n, u in zip(counts, utts))
            what = "speech rate of the two utterances (words per voiced second)"
            ids = (f.speech.evidence_ids if f.speech else []) + (f.transcript.evidence_ids if f.transcript else [])
            degenerate = False
        diff = math.log(pair[1] / pair[0]) * 100 / 15  # in units of 15 %
        same_band, unit = 1.0, "x15%"
    else:
        return None
    if pair is None:
        return None
    truth = "eq" if abs(diff) < same_band else ("second_gt" if diff > 0 else "first_gt")
    supports = []
    for subject, rel in stated:
        if rel is None:
            supports.append(0.0)
            continue
        if rel == "eq":
            supports.append(1.0 if truth == "eq" else -1.0)
            continue
        says = ("second_gt" if (subject == "second") == (rel == "gt") else "first_gt")
        supports.append(1.0 if says == truth else (-0.5 if truth == "eq" else -1.0))
    margin = abs(diff) - same_band
    rel_ = 0.85 if abs(margin) >= 1.0 else 0.6
    if dim == "rate" and degenerate:
        rel_ = min(rel_, 0.6)
    reason = f"{what}: {pair[0]:.2f} then {pair[1]:.2f} ({diff:+.2f} {unit}); so " + (
        "they are about the same" if truth == "eq" else ("the second is greater" if truth == "second_gt" else "the first is greater"))
    return _result(f"compare_{dim}", a, fams[dim], rel_, supports, [f"{s}/{r}" for s, r in stated], reason, ids)


# ------------------------------------------------------------------ order, presence, gender, side


def _gender(hz: float | None) -> str | None:
    if hz is None:
        return None
    return "male" if hz <= MALE_MAX_HZ else "female" if hz >= FEMALE_MIN_HZ else None


def verify_gender(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Male or female voice from the median f0 of the speech (of the first turn for 'who speaks first')."""
    tags = [claims.gender(c) for c in a.choices]
    if sum(t is not None for t in tags) < 2 or f.pitch is None or not f.pitch.contour:
        return None
    order = "first" if a.asks("order_first") else "last" if a.asks("order_last") else None
    segs = f.speech.segments if f.speech is not None else []
    turns = f.speakers.turns if f.speakers is not None and f.speakers.turns else []
    spans = turns or segs
    from audiomind.reasoning.facts import _median_pitch

    # a voice is where words are heard: a span without recognised words (a tone or an instrument that voice
    # activity or a speaker cluster took in) is not a voice, and its pitch is not the voice's pitch
    words = [w for w in (f.transcript.words if f.transcript is not None else []) if w.end_s > w.start_s]

    def worded(span: Span) -> list:
        if not words:
            return []
        return [w for w in f.transcript.words_in(span.start_s, span.end_s, pad_s=0.1) if w.end_s > w.start_s]

    def word_f0(ws: list) -> float | None:
        pts = sorted(h for t, h in f.pitch.contour if any(w.start_s <= t <= w.end_s for w in ws))
        return pts[len(pts) // 2] if len(pts) >= 3 else None

    if words and any(worded(s) for s in spans):
        spans = [s for s in spans if worded(s)]
    if order and spans:
        span = spans[0] if order == "first" else spans[-1]
        ws = worded(span)
        hz = (word_f0(ws) if ws else None) or span.pitch_hz or _median_pitch(f.pitch.contour, span.start_s, span.end_s)
        start = ws[0].start_s if ws else span.start_s
        what = f"the {order} voice ({start:.2f}-{span.end_s:.2f} s{', where words are heard' if ws else ''})"
    else:
        pts = [h for t, h in f.pitch.contour if not segs or any(s.start_s <= t <= s.end_s for s in segs)]
        hz = (word_f0(words) if words else None) or (sorted(pts)[len(pts) // 2] if len(pts) >= 3 else None)
        what = "the speech"
    g = _gender(hz)
    if g is None:
        return None
    speech_present = f.speech is not None and f.speech.speech_s >= 0.3
    supports = [(1.0 if t == g else -1.0) if t else (-1.0 if none and speech_present else 0.0)
                for t, none in zip(tags, a.choices_with("nobody"))]
    margin = (MALE_MAX_HZ - hz) if g == "male" else (hz - FEMALE_MIN_HZ)
    reason = f"median f0 of {what} is {hz:.0f} Hz: a {g} voice by the documented bands (male <= {MALE_MAX_HZ:g} Hz, female >= {FEMALE_MIN_HZ:g} Hz)"
    fit = max(a.fit("gender"), 0.7)
    return _result("voice_gender", a, fit, 0.85 if margin >= 20 else 0.65, supports, [""] * len(tags), reason,
                   f.pitch.evidence_ids + (f.speech.evidence_ids if f.speech else []))


def verify_presence(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Choices that assert absence ('There is no speech', 'Nobody speaks', 'Silence') against what was measured."""
    absent = a.choices_with("nobody")
    if not any(absent):
        return None
    speech = f.speech is not None and f.speech.speech_s >= 0.5
    sound = (f.events is not None and f.events.count > 0) or speech
    supports = []
    for about_speech, neg in zip(a.choices_with("speech_absent"), absent):
        if not neg:
            supports.append(0.0)
            continue
        present = speech if about_speech else sound
        supports.append(-1.0 if present else 0.6)
    ids = f.ids("speech", "events")
    reason = (f"speech measured: {f.speech.speech_s:.2f} s (VAD)" if f.speech else "no VAD on record") + (
        f"; {f.events.count} sound event(s)" if f.events else "")
    return _result("presence", a, 0.9, 0.9, supports, [""] * len(supports), reason, ids)


def verify_side(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    sides = [claims.side(c) for c in a.choices]
    if sum(s is not None for s in sides) < 2 or f.channels is None:
        return None
    bal = f.channels.balance_db
    if bal is None:
        truth = "center"
        reason = "the clip is mono: no side can be heard"
    else:
        truth = "left" if bal >= SIDE_DB else "right" if bal <= -SIDE_DB else "center"
        reason = f"left minus right level {bal:+.1f} dB (a side needs >= {SIDE_DB:g} dB)"
    supports = [0.0 if s is None else (1.0 if s == truth else -1.0) for s in sides]
    # side words in the choices make this a question about where the sound is, unless the reading says the
    # question asks what is said ('which position does the voice announce?')
    fit = a.fit("side") if a.frame is not None and a.frame.about_speech else max(a.fit("side"), 0.6)
    return _result("stereo_side", a, fit, 0.9 if bal is not None and abs(bal) >= 6 else 0.7,
                   supports, [""] * len(sides), reason, f.channels.evidence_ids)


def verify_rate_absolute(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Fast or slow speech from syllables per voiced second (documented thresholds)."""
    labels = [claims.pace(c) for c in a.choices]
    if sum(x is not None for x in labels) < 2 or f.speech_rate is None or a.fit("rate_compare") > a.fit("rate_absolute") + 0.2:
        return None
    sr = f.speech_rate
    # relative to ordinary English (4.6 syllables/s, 2.7 words/s of voiced time): fast >= 1.25x, slow <= 0.8x
    z = (sr.syllables_per_s / NORMAL_SYL_PER_S + sr.words_per_s / NORMAL_WORDS_PER_S) / 2
    truth = "fast" if z >= FAST_RATIO else "slow" if z <= SLOW_RATIO else "normal"
    supports = []
    for x in labels:
        if x is None:
            supports.append(0.0)
        elif truth != "normal" or x == "normal":
            supports.append(1.0 if x == truth else -1.0)
        else:  # between the bands: lean to the nearer side, weakly
            supports.append(0.3 if x == ("fast" if z >= 1.0 else "slow") else -0.3)
    margin = min(abs(z - FAST_RATIO), abs(z - SLOW_RATIO))
    reason = (f"{sr.syllables} syllables ({sr.words} words) in {sr.voiced_s:.2f} s of voiced time = "
              f"{sr.syllables_per_s:.2f} syllables/s, {sr.words_per_s:.2f} words/s: {z:.2f}x ordinary speech "
              f"(fast >= {FAST_RATIO:g}x, slow <= {SLOW_RATIO:g}x)")
    return _result("speech_rate", a, max(a.fit("rate_absolute"), 0.6), 0.85 if margin >= 0.12 else 0.6, supports,
                   [""] * len(labels), reason, sr.evidence_ids)


# ------------------------------------------------------------------ music and level descriptors

def verify_loudness_trend(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    if f.loudness is None or a.fit("loudness_trend") < 0.3 or f.loudness.trend not in TREND_WORDS:
        return None
    hit = [claims.trend(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    truth = f.loudness.trend
    soft = {"fluctuating": "steady", "steady": "fluctuating"}
    supports = [0.0 if h is None else (1.0 if h == truth else (0.3 if soft.get(truth) == h and truth not in hit else -1.0))
                for h in hit]
    reason = f"loudness trend {truth!r} (fitted change {f.loudness.change_db} dB)"
    return _result("loudness_trend", a, a.fit("loudness_trend"), 0.8, supports, [""] * len(hit), reason,
                   f.loudness.evidence_ids)


def _contour(hz: list[float]) -> str:
    st = [12 * math.log2(h / hz[0]) for h in hz]
    steps = [b - a for a, b in itertools.pairwise(st)]
    if max(abs(s) for s in st) < 0.75:
        return "flat"
    top = max(range(len(st)), key=lambda i: st[i])
    bottom = min(range(len(st)), key=lambda i: st[i])
    if all(s > -0.5 for s in steps):
        return "rising"
    if all(s < 0.5 for s in steps):
        return "falling"
    if 0 < top < len(st) - 1 and st[top] - st[0] > 0.75 and st[top] - st[-1] > 0.75:
        return "arch"
    if 0 < bottom < len(st) - 1 and st[0] - st[bottom] > 0.75 and st[-1] - st[bottom] > 0.75:
        return "valley"
    return "rising" if st[-1] > st[0] else "falling"


def verify_pitch_contour(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    if f.pitch is None or not f.pitch.notes or a.fit("pitch_contour") < 0.3:
        return None
    hit = [claims.contour(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    shape = _contour([n.pitch_hz for n in f.pitch.notes])
    supports = [0.0 if h is None else (1.0 if h == shape else -1.0) for h in hit]
    reason = f"notes {', '.join(f'{n.pitch_hz:.0f}' for n in f.pitch.notes[:12])} Hz form a {shape} contour"
    return _result("pitch_contour", a, a.fit("pitch_contour"), 0.8, supports, [""] * len(hit), reason,
                   f.pitch.evidence_ids)


def verify_key(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    key = f.values.get("key")
    if key is None:
        return None
    mode, tonic = str(key.detail.get("mode") or "").lower(), str(key.detail.get("tonic") or "").lower()
    hit = [claims.mode(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    supports = []
    for c, h in zip(a.choices, hit):
        if h is None:
            supports.append(0.0)
            continue
        s = 1.0 if h == mode else -1.0
        named = claims.named_tonic(c)
        if s > 0 and named and tonic and not c.lower().startswith(tonic.lower()) and named != tonic[:1]:
            s = -0.5
        supports.append(s)
    return _result("key_mode", a, max(a.fit("key"), 0.6), 0.75, supports, [""] * len(hit), f"estimated key {key.value}",
                   key.evidence_ids)


def verify_language(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """The spoken language, as multilingual Whisper detects it among the languages the choices name (its
    detector's probabilities restricted to those candidates, so a synthetic or accented voice that Whisper
    half-hears as another language is still compared fairly)."""
    lang = f.values.get("language")
    if lang is None:
        return None
    code, prob = str(lang.value), lang.detail.get("probability")
    candidates: dict[str, float] = lang.detail.get("candidates") or {}
    names = [language_of(ch) for ch in a.choices]
    if sum(n is not None for n in names) < 2:
        return None
    offered = {n: candidates.get(n, 1.0 if n == code else 0.0) for n in names if n is not None}
    best = max(offered, key=offered.get)
    total = sum(offered.values())
    share = offered[best] / total if total > 0 else 0.0
    if offered[best] <= 0:
        return None
    supports = [0.0 if n is None else (1.0 if n == best else -1.0 if share >= 0.8 else -0.3) for n in names]
    reason = (f"multilingual Whisper detected {code!r} (p={prob}); among the offered languages "
              + ", ".join(f"{LANGUAGES.get(k, k)} {v:.3f}" for k, v in sorted(offered.items(), key=lambda kv: -kv[1]))
              + f": {LANGUAGES.get(best, best)} has {share:.0%} of their probability")
    # Whisper's own top language outside the offered ones means it heard the voice poorly: no confident answer
    reliability = 0.85 if share >= 0.8 and best == code else 0.55 if share >= 0.8 else 0.5
    return _result("language", a, max(a.fit("language"), 0.7), reliability, supports, [""] * len(supports), reason,
                   lang.evidence_ids)


# ------------------------------------------------------------------ order of sources


def _label_choice_similarity(labels: list[str], choices: list[str]):
    from audiomind.embedded.text import similarity

    sims = similarity(choices, labels) if labels else None
    out = []
    for i, c in enumerate(choices):
        cs = {stem(w) for w in content(c)}
        row = []
        for j, label in enumerate(labels):
            lw = {stem(w) for w in content(label)}
            lexical = 0.25 if cs & lw or any(len(x) >= 4 and len(y) >= 4 and (x in y or y in x) for x in cs for y in lw) else 0.0
            row.append(float(sims[i, j]) + lexical)
        out.append(row)
    return out


def verify_order(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Which named source is heard first / last: time-stamped tags (and VAD for speech), each label given to
    the choice closest to it in meaning."""
    if a.fit("order") < 0.3 or not a.asks("order_cue"):
        return None  # 'what sound is heard?' names no order, however close its meaning to 'which comes first?'
    last = a.asks("asks_latest") and not a.asks("first_word")
    spans: list[Span] = list(f.tags.events) if f.tags is not None else []
    if f.speech is not None:
        spans += [s.model_copy(update={"label": "Speech", "score": 0.9}) for s in f.speech.segments]
    labelled = [s for s in spans if s.label]
    if not labelled:
        return None
    labels = sorted({s.label for s in labelled})
    sim = _label_choice_similarity(labels, a.choices)
    owner: dict[str, int] = {}
    for j, label in enumerate(labels):
        col = [sim[i][j] for i in range(len(a.choices))]
        best = max(range(len(col)), key=lambda i: col[i])
        ranked = sorted(col, reverse=True)
        if ranked[0] >= 0.4 and (len(ranked) == 1 or ranked[0] - ranked[1] >= 0.08):
            owner[label] = best
    when: dict[int, float] = {}
    for s in labelled:
        i = owner.get(s.label)
        if i is None or (s.score or 0) < 0.15:
            continue
        t = s.end_s if last else s.start_s
        when[i] = max(when.get(i, t), t) if last else min(when.get(i, t), t)
    # a voice and one other named sound ('the chime or the voice?') whose name no tag matches: the bursts
    # outside speech are that sound
    voice_named, nobody = a.choices_with("voice_word"), a.choices_with("nobody")
    voiced = [i for i in range(len(a.choices)) if voice_named[i]]
    others = [i for i in range(len(a.choices)) if i not in voiced and not nobody[i]]
    loose = f.nonspeech_events()
    if len(voiced) == 1 and len(others) == 1 and others[0] not in when and loose and f.speech_segments:
        when[voiced[0]] = f.speech_segments[-1].end_s if last else f.speech_segments[0].start_s
        when[others[0]] = max(e.end_s for e in loose) if last else min(e.start_s for e in loose)
    if len(when) < 2:
        return None
    ordered = sorted(when.items(), key=lambda kv: kv[1], reverse=last)
    gap = abs(ordered[0][1] - ordered[1][1])
    supports = [0.0] * len(a.choices)
    supports[ordered[0][0]] = 1.0 if gap >= 0.3 else 0.3
    for i, _ in ordered[1:]:
        supports[i] = -0.8 if gap >= 0.3 else 0.0
    reason = "heard " + ", ".join(f"{a.choices[i]!r} {'until' if last else 'from'} {t:.2f} s" for i, t in ordered)
    ids = f.ids("tags", "speech")
    return _result("event_order", a, a.fit("order"), 0.75 if gap >= 0.5 else 0.5, supports, [""] * len(supports),
                   reason, ids)


def verify_relative_order(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """'Is the chime before or after the announcement?' with choices that state a relation ('Ahead of it',
    'Afterwards'): the non-speech sounds against the voice, in time. The subject is the thing the relation
    word does not point at ('X ahead of the message' -> X is the sound)."""
    rel = [claims.relation(c) for c in a.choices]
    if sum(r is not None for r in rel) < 2 or len({r for r in rel if r}) < 2:
        return None
    subject = claims.relation_subject(a.question)
    if subject is None:
        return None
    speech = f.speech_segments
    words = f.transcript.words if f.transcript is not None else []
    if words:
        speech = [Span(start_s=words[0].start_s, end_s=words[-1].end_s)]
    sounds = f.nonspeech_events()
    if not speech or not sounds:
        return None
    s0, s1 = speech[0].start_s, speech[-1].end_s
    before = [e for e in sounds if e.end_s <= s0 + 0.2]
    after = [e for e in sounds if e.start_s >= s1 - 0.2]
    if bool(before) == bool(after):
        return None  # sounds on both sides (or overlapping the voice): no single relation
    sound_rel = "before" if before else "after"
    truth = sound_rel if subject == "sound" else ("after" if sound_rel == "before" else "before")
    supports = [0.0 if r is None else (1.0 if r == truth else -1.0) for r in rel]
    where = ", ".join(f"{e.start_s:.2f}-{e.end_s:.2f} s" for e in (before or after)[:4])
    reason = (f"voice from {s0:.2f} to {s1:.2f} s; sound(s) outside it at {where}: the sound comes {sound_rel} "
              f"the voice; the question asks about the {subject}")
    return _result("relative_order", a, max(a.fit("order"), 0.7), 0.75, supports, [r or "" for r in rel], reason,
                   f.ids("events", "speech", "transcript"))


# ------------------------------------------------------------------ categories (the least specific)


def verify_category(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Tag labels matched to the choice texts by meaning (MiniLM) and shared word stems: used when nothing
    more specific applies. Evidence for a choice adds up over the labels that resemble it (a ringing phone is
    'Telephone', 'Telephone bell ringing' and 'Ringtone' at once); labels every choice resembles alike, and
    generic parent classes, count for less."""
    if f.tags is None or not f.tags.labels:
        return None
    top = f.tags.labels[:10]
    peaks = dict(f.tags.peak_labels)
    labels = [lab for lab, _ in top]
    weights = [max(s, 0.6 * peaks.get(lab, 0.0)) * (0.5 if lab.lower() in GENERIC_LABELS else 1.0) for lab, s in top]
    sim = _label_choice_similarity(labels, a.choices)
    n = len(a.choices)
    lift = [[sim[i][j] - (sum(sim[k][j] for k in range(n)) - sim[i][j]) / max(1, n - 1) for j in range(len(labels))]
            for i in range(n)]
    # a label counts for a choice only when it resembles the choice outright (not just more than the others do)
    scores = [sum((max(0.0, lift[i][j]) + 0.25 * sim[i][j]) * (weights[j] ** 0.5)
                  for j in range(len(labels)) if sim[i][j] >= 0.45) for i in range(n)]
    ranked = sorted(scores, reverse=True)
    if ranked[0] <= 0:
        return None
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else ranked[0]
    supports = [min(1.0, max(0.0, (s - ranked[1]) * 4)) if s == ranked[0] else 0.0 for s in scores]
    fit = max(a.fit("sound_category"), 0.25)
    winner = scores.index(ranked[0])
    strong_tag = max((weights[j] for j in range(len(labels)) if sim[winner][j] >= 0.5), default=0.0)
    reliability = 0.8 if margin >= 0.15 and strong_tag >= 0.5 else 0.6 if margin >= 0.1 else 0.4
    if a.fit("order") >= 0.3 and a.asks("order_cue"):
        reliability = min(reliability, 0.4)  # clip-level tags cannot see which source comes first or last
    reason = "audio tags: " + ", ".join(f"{lab} {w:.2f}" for lab, w in top[:5])
    return _result("tag_category", a, fit, reliability, supports, [f"{s:.2f}" for s in scores], reason,
                   f.tags.evidence_ids)


VERIFIERS: tuple[Verifier, ...] = (
    verify_day_offset, verify_transcript, verify_readings_agree, verify_count, verify_tempo, verify_time, verify_compare, verify_gender,
    verify_presence, verify_side, verify_rate_absolute, verify_loudness_trend, verify_pitch_contour, verify_key,
    verify_language, verify_order, verify_relative_order, verify_category,
)


def run_verifiers(f: Facts, a: QuestionAnalysis) -> list[VerifierResult]:
    out = []
    for v in VERIFIERS:
        r = v(f, a)
        if r is not None and len(r.verdicts) == len(a.choices):
            out.append(r)
    from audiomind.reasoning.property_verifier import property_results  # descriptors: lexicon/properties.toml
    out += [_result(a=a, **r) for r in property_results(f, a) if len(r["supports"]) == len(a.choices)]
    return out
