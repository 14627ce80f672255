"""Which of two things is higher, louder or faster, from measured per-segment values."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from audiomind.language import claims
from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import letters
from audiomind.reasoning.facts import Facts, Span, Word
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare


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


def degenerate_transcript(words: Sequence[Word]) -> bool:
    """A recogniser output that describes no real words: most words without duration, or one word looping
    ('no, no, no, ...', Whisper's failure on audio it cannot read)."""
    if len(words) < 6:
        return False
    flat = sum(1 for w in words if w.end_s - w.start_s < 0.03) / len(words)
    tokens = [letters(w.text) for w in words]
    top = max(tokens.count(t) for t in set(tokens)) / len(tokens)
    return flat >= 0.3 or top >= 0.5


class _Measured(NamedTuple):
    """The two measured values a comparison rests on, their difference and what counts as the same."""

    pair: tuple[float, float]
    diff: float
    same_band: float
    unit: str
    ids: list[str]
    what: str
    degenerate: bool = False  # rate: the transcript could not be trusted, voiced lengths were compared


def verify_compare(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Which of two things is higher / louder / faster / longer, from measured per-segment values."""
    dim, fams = _compared_dimension(a)
    if fams[dim] < 0.3:
        return None
    stated = [claims.comparison_claim(c, a.question, dim) for c in a.choices]
    if sum(r is not None for _, r in stated) < 2:
        return None
    if not claims.names_two_things(a.question) and not any(claims.names_one_of_two(c) for c in a.choices):
        return None  # 'the same level' about one sound over time is a trend, not a comparison of two
    measure = _MEASURES.get(dim)
    m = measure(f) if measure is not None else None
    if m is None:
        return None
    truth = "eq" if abs(m.diff) < m.same_band else ("second_gt" if m.diff > 0 else "first_gt")
    supports = _compare_supports(stated, truth)
    margin = abs(m.diff) - m.same_band
    rel_ = 0.85 if abs(margin) >= 1.0 else 0.6
    if m.degenerate:
        rel_ = min(rel_, 0.6)
    reason = f"{m.what}: {m.pair[0]:.2f} then {m.pair[1]:.2f} ({m.diff:+.2f} {m.unit}); so " + (
        "they are about the same" if truth == "eq" else ("the second is greater" if truth == "second_gt" else "the first is greater"))
    return _result(f"compare_{dim}", a, fams[dim], rel_, supports, [f"{s}/{r}" for s, r in stated], reason, m.ids)


def _compared_dimension(a: QuestionAnalysis) -> tuple[str, dict[str, float]]:
    """The dimension compared (pitch, loudness, rate, length) and how well the question fits each."""
    fams = {"pitch": a.fit("pitch_compare"), "loudness": a.fit("loudness_compare"), "rate": a.fit("rate_compare"),
            "length": 0.0}
    named = claims.dimensions_named(a.question)
    for dim, relevance in list(fams.items()):
        share = sum(1 for c in a.choices if claims.names_dimension(c, dim)) / max(1, len(a.choices))
        if share or dim in named:
            fams[dim] = max(relevance, min(1.0, 0.3 + 0.5 * share + (0.3 if dim in named else 0.0)))
    # a comparative the question itself uses ('which is quieter?') names the dimension outright
    dim = named[0] if len(named) == 1 else max(fams, key=lambda k: fams[k])
    return dim, fams


def _pitch_pair(f: Facts) -> _Measured | None:
    """The first and last of the pitched notes or sound events (whichever has closer to two), in semitones."""
    cands = []
    if f.pitch is not None and len(f.pitch.notes) >= 2:
        cands.append((f.pitch.notes, f.pitch.evidence_ids, "pitch notes"))
    if f.events is not None and sum(e.pitch_hz is not None for e in f.events.events) >= 2:
        cands.append(([e for e in f.events.events if e.pitch_hz], f.events.evidence_ids, "sound events' median f0"))
    if not cands:
        return None
    spans, ids, what = min(cands, key=lambda c: abs(len(c[0]) - 2))
    p = _two(spans)
    if p is None or p[0].pitch_hz is None or p[1].pitch_hz is None:
        return None
    pair = (p[0].pitch_hz, p[1].pitch_hz)
    return _Measured(pair, 12 * math.log2(pair[1] / pair[0]), 0.5, "semitones", ids, what)


def _loudness_pair(f: Facts) -> _Measured | None:
    """The peak levels of the first and last sound events, in dB."""
    if f.events is None or f.events.count < 2:
        return None
    p = _two(f.events.events)
    if p is None or p[0].level_db is None or p[1].level_db is None:
        return None
    pair = (p[0].level_db, p[1].level_db)
    return _Measured(pair, pair[1] - pair[0], 1.5, "dB", f.events.evidence_ids,
                     "peak level of the first and last sound events")


def _rate_pair(f: Facts) -> _Measured | None:
    """Words per voiced second of the two utterances, in units of 15 %."""
    utts = _utterances(f)
    if len(utts) != 2:
        return None
    voiced = [u.score or 0.0 for u in utts]  # _utterances sets score: the voiced length
    ws = f.transcript.words if f.transcript is not None else []
    counts = [len(f.transcript.words_in(u.start_s, u.end_s, pad_s=0.25)) if f.transcript else 0 for u in utts]
    if degenerate_transcript(ws) or not all(counts):
        # the recogniser's words cannot be trusted to split the speech (a loop of one word, words without
        # duration): the utterances' voiced lengths still tell a sentence said twice apart, less surely
        pair = (1.0 / max(voiced[0], 1e-3), 1.0 / max(voiced[1], 1e-3))
        what = "1 / voiced length of the two utterances (the transcript is degenerate, so words are not counted)"
        ids = f.speech.evidence_ids if f.speech else []
        degenerate = True
    else:
        pair = (counts[0] / voiced[0], counts[1] / voiced[1])
        what = "speech rate of the two utterances (words per voiced second)"
        ids = (f.speech.evidence_ids if f.speech else []) + (f.transcript.evidence_ids if f.transcript else [])
        degenerate = False
    diff = math.log(pair[1] / pair[0]) * 100 / 15  # in units of 15 %
    return _Measured(pair, diff, 1.0, "x15%", ids, what, degenerate)


_MEASURES: dict[str, Callable[[Facts], _Measured | None]] = {
    "pitch": _pitch_pair, "loudness": _loudness_pair, "rate": _rate_pair,
}
"""Dimension -> how its two values are measured (a dimension without one, such as length, is not compared)."""


def _compare_supports(stated: Sequence[tuple[str | None, str | None]], truth: str) -> list[float]:
    """Per choice, support for the relation it states ('the second is higher', 'the same') given the truth."""
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
    return supports


declare("compare_pitch", function="compares the pitch of the first and the last of two sounds or notes",
        supports=["which of two sounds is higher or lower in pitch", "whether two notes have the same pitch"],
        not_for=["how the pitch moves within one sound", "which sound is louder", "what the sounds are"],
        examples=["Is the second note higher or lower than the first?", "Which of the two tones has the higher pitch?",
                  "Are the two sounds at the same pitch?", "Does the later sound have a lower pitch than the earlier one?"])
declare("compare_loudness", function="compares the peak level of the first and the last of two sound events",
        supports=["which of two sounds is louder or quieter", "whether two sounds are equally loud"],
        not_for=["whether one sound gets louder over time", "which sound is higher in pitch", "what the sounds are"],
        examples=["Which of the two sounds is louder?", "Is the second beep quieter than the first?",
                  "Are both tones played at the same volume?", "Is the first sound stronger or weaker than the second?"])
declare("compare_rate", function="compares words per voiced second of two utterances",
        supports=["which of two utterances is spoken faster or slower", "whether two readings have the same pace"],
        not_for=["whether a single speaker talks fast or slow", "which utterance is louder", "what is said"],
        examples=["Is the second sentence spoken faster or slower than the first?",
                  "Which of the two readings is quicker?", "Does the speaker slow down the second time?",
                  "Are the two utterances said at the same speed?"])
