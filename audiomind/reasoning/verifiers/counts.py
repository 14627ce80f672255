"""How many: events, words, speakers or notes, with what is counted read from the question's noun."""

from __future__ import annotations

import itertools

from audiomind.language import claims
from audiomind.language.analysis import QuestionAnalysis, is_numeric_choice, parse_number
from audiomind.language.text import STOPWORDS, stem, words
from audiomind.reasoning.facts import Facts, Span
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare

MIN_TALK_S = 0.5       # a voice cluster with less speech than this (VAD) is not a speaker


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


MIN_GAP_S = 0.05  # a break in a sound shorter than this is no interruption


def _gaps(events: list[Span]) -> int:
    """Breaks between consecutive sound events (an interruption inside the sound, not before or after it)."""
    spans = sorted(events, key=lambda e: e.start_s)
    return sum(1 for a, b in itertools.pairwise(spans) if b.start_s - a.end_s >= MIN_GAP_S)


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
    elif counted == "gaps" and f.events is not None and f.events.events:
        value, ids, what, reliability = _gaps(f.events.events), f.events.evidence_ids, (
            f"breaks of at least {MIN_GAP_S:g} s between the {f.events.count} sound event(s) (count_events): the "
            "question counts interruptions of the sound, not sounds"), 0.75
    elif counted == "notes" and f.pitch is not None and f.pitch.notes:
        value, ids, what, reliability = len(f.pitch.notes), f.pitch.evidence_ids, "steady pitched notes", 0.7
    elif f.events is not None and _counts_what_is_said(f, a):
        return None  # the counted things are amounts or things named in what is said, not sounds heard
    elif f.events is not None:
        counted_events = _sound_events(f.events.events, f, a)
        if counted_events is None:
            return None
        events, what = counted_events
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


def _sound_events(events: list[Span], f: Facts, a: QuestionAnalysis) -> tuple[list[Span], str] | None:
    """The sound events a count question counts, and what they are: those after (or before) the voice when
    it says so, those outside speech when the clip also has other sounds. None when it places them against a
    voice that voice activity did not find."""
    what = "separate sound events above the noise floor (count_events)"
    segs = f.speech.segments if f.speech is not None else []
    before = "before_voice" in a.steps or (bool(segs) and a.asks("before_something"))
    after = "after_voice" in a.steps or (bool(segs) and not before and a.asks("after_voice_stops"))
    if (after or before) and not segs:
        return None
    if after:
        end = segs[-1].end_s
        events = [e for e in events if e.start_s >= end - 0.05]
        what = f"sound events that start after the voice ends at {end:.2f} s"
    elif before:
        onset = segs[0].start_s
        events = [e for e in events if e.end_s <= onset + 0.05]
        what = f"sound events that end before the voice starts at {onset:.2f} s"
    elif segs and not a.asks("words_or_syllables"):
        # speech bursts are not the counted sounds when the clip also has other sounds
        others = [e for e in events if not _inside_speech(e, segs)]
        if others and len(others) < len(events):
            events, what = others, what + ", excluding bursts inside speech (VAD)"
    return events, what


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


declare("count_events", function="counts separate sound events above the noise floor",
        supports=["how many times a sound occurs", "how many separate sounds, beeps or hits are heard"],
        not_for=["how many words or people are named in what is said", "amounts of money or goods that are spoken",
                 "what the sounds are", "how many instruments play"],
        examples=["How many beeps are there?", "How many times does the bell ring?",
                  "Count the knocks you hear.", "How many separate sounds are in the clip?",
                  "How often is the tone repeated?", "What is the number of claps?"])
declare("count_speakers", function="counts distinct voices from speaker embeddings",
        supports=["how many different people speak", "whether one or several voices are heard"],
        not_for=["how many people are mentioned in what is said", "who the speakers are"],
        examples=["How many different people speak?", "How many speakers are in the recording?",
                  "How many voices can you hear?", "Is this one person or more than one talking?"])
declare("count_words", function="counts how often a quoted or named word occurs in the transcript",
        supports=["how many times a given word is said", "how often a word is repeated"],
        not_for=["how many sounds are heard", "how many things the words name"],
        examples=["How many times does the speaker say the word 'yes'?", "How often is the word repeated?",
                  "How many times is 'hello' said?", "Count how often the speaker says the name."])
declare("count_gaps", function="counts breaks inside a sound between consecutive sound events",
        supports=["how many times a sound is interrupted", "how many gaps or dropouts break a sound"],
        not_for=["how many sounds are heard", "how long the gaps are"],
        examples=["How many times is the sound interrupted?", "How many gaps are there in the tone?",
                  "How many times does the audio cut out?", "How many breaks are in the hum?"])
declare("count_notes", function="counts the pitched notes the pitch tracker finds",
        supports=["how many notes are played", "how many notes sound at once"],
        not_for=["how many instruments play", "which notes they are"],
        examples=["How many notes are played?", "How many notes sound together?",
                  "How many pitches are in the melody?", "Is it a single note or several notes?"])
