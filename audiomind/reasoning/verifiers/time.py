"""When and how long: onsets, offsets and durations the choices state, against VAD or the sound events."""

from __future__ import annotations

from audiomind.language.analysis import QuestionAnalysis, states_time
from audiomind.language.numbers import seconds_in
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare


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
    top = max(fams, key=lambda k: fams[k])
    if fams[top] < 0.3:
        return None
    voice = f.speech if a.asks("speech_subject") and f.speech is not None and f.speech.segments else None
    speech = voice is not None
    spans = voice.segments if voice is not None else (f.events.events if f.events is not None else [])
    span_ids = (voice.evidence_ids if voice is not None else (f.events.evidence_ids if f.events else []))
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


declare("time_duration", function="measures how long the speech or the sound lasts, from voice activity or events",
        supports=["how long a sound or the speech lasts", "the length of the recording's sound"],
        not_for=["when a sound starts", "how many sounds there are", "how fast something repeats"],
        examples=["How long does the tone last?", "What is the duration of the sound?",
                  "For how many seconds does the speaker talk?", "How long is the beep?"])
declare("time_onset", function="measures when the speech or the first sound starts",
        supports=["when a sound or the speech begins", "how long the silence before it is"],
        not_for=["how long it lasts", "what is said when it starts"],
        examples=["When does the sound start?", "At what time does the speech begin?",
                  "How many seconds into the clip is the first sound heard?", "When does the speaker start talking?"])
declare("time_offset", function="measures when the speech or the last sound ends",
        supports=["when a sound or the speech ends", "when the recording falls silent"],
        not_for=["how long it lasts", "when it starts"],
        examples=["When does the sound stop?", "At what time does the speech end?",
                  "How many seconds in does the last sound finish?", "When does the speaker stop talking?"])
