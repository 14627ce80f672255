"""Absolute times a question names ('what is said around minute 37', 'at 12:30', 'between minute 5 and
7'): the stretch of a long recording the planner analyses with windowed tools, and the question without the
phrase for the question analysis (whose families read the words, not the clock: 'minute' is no tempo cue).
Spans relative to the clip's ends ('in the first 3 seconds') are the question analysis' own time_span."""

from __future__ import annotations

import re

_NUM = r"(\d+(?:\.\d+)?(?:\s+and\s+a\s+half)?)"  # "18.5", "18 and a half"
_CLOCK = r"(\d{1,2}):(\d{2})(?::(\d{2}))?"
_SPAN_PATTERNS = (
    (
        "between_min",
        re.compile(rf"\b(?:between|from)\s+minutes?\s+{_NUM}\s+(?:and|to|-)\s+(?:minute\s+)?{_NUM}\b"),
    ),
    (
        "between_min",
        re.compile(rf"\b(?:between|from)\s+{_NUM}\s+(?:and|to|-)\s+{_NUM}\s*(?:min|mins|minutes)\b"),
    ),
    ("between_clock", re.compile(rf"\b(?:between|from)\s+{_CLOCK}\s+(?:and|to|-)\s+{_CLOCK}")),
    ("clock", re.compile(rf"\b(?:at|around|near|about)\s+(?:the\s+)?{_CLOCK}\b")),
    (
        "minute",
        re.compile(
            rf"(?:\b(?:at|around|near|about|in|during|after)\s+(?:the\s+)?)?(?:\bminute\s+{_NUM}\b|"
            rf"\b{_NUM}(?:st|nd|rd|th)\s+minute\b|\b{_NUM}\s*(?:min|mins|minutes)\s+(?:in|into)\b)|"
            rf"\b(?:at|around|near|about|after)\s+{_NUM}\s*(?:min|mins|minutes)\b|"
            rf"\b(?:(?:at|around|near|about|by)\s+)?(?:the\s+)?{_NUM}[- ]?(?:min|minute)s?[- ]mark\b"
        ),
    ),
    (
        "second",
        re.compile(
            rf"\b(?:at|around|near|about)\s+(?:second\s+{_NUM}|{_NUM}\s*(?:s|sec|secs|seconds)\b)|"
            rf"\b{_NUM}\s*(?:s|sec|secs|seconds)\s+(?:in|into)\b"
        ),
    ),
)
MINUTE_HALF_S = (
    60.0  # "minute 37" / "37 minutes in": from 36:00 to 38:00 (the 37th minute and the 37:00 mark)
)
CLOCK_HALF_S = 30.0  # "at 37:10": 30 s either side
SECOND_HALF_S = 10.0  # "at 75 seconds": 10 s either side


def _num(x: str) -> float:
    """'18', '18.5' or '18 and a half' as a number."""
    half = re.search(r"\s+and\s+a\s+half$", x)
    return float(x[: half.start()] if half else x) + (0.5 if half else 0.0)


def _clock(h_or_m: str, m_or_s: str, s: str | None) -> float:
    return (int(h_or_m) * 3600 + int(m_or_s) * 60 + int(s)) if s else int(h_or_m) * 60 + int(m_or_s)


def _match(question: str):
    q = question.lower()
    for kind, pat in _SPAN_PATTERNS:
        m = pat.search(q)
        if m:
            return kind, m
    return None


def without_time_phrase(question: str) -> str:
    """The question with the absolute time phrase it names replaced by 'in this part of the recording'
    ('What is said around minute 37?' -> 'What is said in this part of the recording?')."""
    found = _match(question)
    if found is None:
        return question
    m = found[1]
    return (question[: m.start()].rstrip() + " in this part of the recording" + question[m.end() :]).strip()


def absolute_span(question: str, duration_s: float | None) -> tuple[float, float] | None:
    """The stretch of the recording a question names by its absolute time: 'around minute 37', 'in the 37th
    minute', '37 minutes in', 'at 37:00', 'between minute 36 and 38', 'at 75 seconds'. None when it names
    none, or when the stretch is (nearly) the whole recording. Spans relative to the clip's ends ('in the
    first 3 seconds') are the question analysis' time_span, handled by the crop-and-relisten step."""
    if not duration_s:
        return None
    found = _match(question)
    if found is None:
        return None
    kind, m = found
    g = list(m.groups())
    if kind == "between_min":
        span = (_num(g[0]) * 60, _num(g[1]) * 60)
    elif kind == "between_clock":
        span = (_clock(g[0], g[1], g[2]), _clock(g[3], g[4], g[5]))
    elif kind == "clock":
        t = _clock(g[0], g[1], g[2])
        span = (t - CLOCK_HALF_S, t + CLOCK_HALF_S)
    elif kind == "minute":
        t = _num(next(x for x in g if x is not None)) * 60
        span = (t - MINUTE_HALF_S, t + MINUTE_HALF_S)
    else:
        t = _num(next(x for x in g if x is not None))
        span = (t - SECOND_HALF_S, t + SECOND_HALF_S)
    start, end = max(0.0, min(span)), min(float(duration_s), max(span))
    if end - start <= 0 or end - start >= 0.95 * duration_s:
        return None
    return round(start, 3), round(end, 3)


def focus_on_span(tool_calls: list, span: tuple[float, float]) -> list:
    """The calls an answer about `span` reads: those run on exactly that stretch of a0, and the other calls
    of every tool that was not (a whole-clip transcript would bring in speech from elsewhere)."""

    def window(c) -> tuple:
        args = c.arguments or c.requested_arguments or {}
        return args.get("start_s"), args.get("end_s")

    on_span = [c for c in tool_calls if window(c) == span]
    spanned = {c.tool for c in on_span}
    return [c for c in tool_calls if c in on_span or c.tool not in spanned]
