"""Extra evidence-to-choice matchers for question shapes the base matcher does not cover (yet).

Found by the verifiable synthetic benchmark (audiomind/bench/synthetic.py): onset times, durations,
which of two readings is faster, which sound comes first or last, pitch comparisons and contours,
loudness trends read off a crop instead of the whole clip, language questions shadowed by the
speech-content rule, sound-source choices under a question the speech-content rule caught. Each matcher
is a transparent comparison between recorded tool evidence and the choice texts, like those in
`matcher`; none looks at audio itself.

Hook (for the lead, who owns matcher.py): at the top of `matcher.match`, after the no-choices check,

    from audiomind.reasoning import matchers_extra
    extra = matchers_extra.match_extra(state, analysis)
    if extra is not None:
        return extra

`match_extra` returns None unless the question has one of the shapes below AND the evidence it needs is
on record, so every other question keeps the current behaviour.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from audiomind.reasoning import matcher as base
from audiomind.reasoning.matcher import MatchResult
from audiomind.reasoning.question import QuestionAnalysis
from audiomind.state import EvidenceState, ToolCall

# ---------------------------------------------------------------- question shapes

ONSET_Q = re.compile(r"\b(when|(at )?(about |approximately |roughly )?(what|which) (time|second|moment|point))\b.*"
                     r"\b(start|starts|started|begin|begins|began|start(s)? to|first (heard|appear))\b"
                     r"|\bhow (many seconds|long) (before|until)\b.*\b(start|starts|begin|begins)\b")
END_Q = re.compile(r"\b(when|(at )?(about |approximately )?(what|which) (time|second|moment))\b.*"
                   r"\b(stop|stops|stopped|end|ends|ended|finish|finishes)\b")
DURATION_Q = re.compile(r"\bhow long\b|\bduration\b|\blength of\b|\bhow many seconds (is|does|long)\b")
NOT_DURATION = re.compile(r"\b(where|when|at (what|which) (second|time|point)|how long (before|until|after|ago))\b")
WHOLE_CLIP = re.compile(r"\b(how long|duration|length) (is|of) (this|the) (whole |entire )?(recording|clip|audio|file|"
                        r"track|excerpt|sample)\b|\bhow long does (this|the) (recording|clip|audio|track) last\b")
TIME_UNIT = re.compile(r"\d\s*(s|sec|secs|seconds?|ms|milliseconds?|min|mins|minutes?)\b|\d+:\d\d|\d+(st|nd|rd|th) second")
RATE_Q = re.compile(r"\b(faster|more quickly|quicker|slower|more slowly)\b"
                    r"|\bat a (higher|faster|lower|slower) (speed|rate|pace)\b")
RATE_WORDS = re.compile(r"\b(fast|faster|quick|quickly|quicker|slow|slowly|slower|speed|rate|pace|tempo)\b")
ORDER_Q = re.compile(r"\b(which|what) (sound|noise|event|source|one)?\s*(is |was |comes |can be )?(heard |played )?"
                     r"(first|last|earliest|latest|at the (beginning|start|end))\b"
                     r"|\b(comes|heard|occurs|happens|appears|plays) (first|last)\b")
PITCH_COMPARE_Q = re.compile(r"\b(higher|lower)\b.*\b(pitch|tone|note|sound)s?\b|\b(pitch|tone|note)s?\b.*\b(higher|lower)\b")
CONTOUR_SUBJECT = re.compile(r"\b(pitch|melody|melodic|notes?|tones?)\b")
CONTOUR_VERB = re.compile(r"\b(change|changes|changing|direction|contour|move|moves|go|goes|develop|develops|shape|"
                          r"rising|falling|ascending|descending)\b")
LANGUAGE_Q = re.compile(
    r"\b(what|which) language (is|was|are|were) (being )?(spoken|used|heard)\b"
    r"|\b(what|which) language (is|was|does|do|did) (he|she|they|it|someone|the \w+|this \w+) "
    r"(speak|speaking|use|using|talk|talking|sing|singing)\b"
    r"|\bin (what|which) language\b|\blanguage (is|was) (spoken|used)\b|\bwhat language is (this|that|it)\b")
SPEECH_WORDS = re.compile(r"\b(speech|speak|speaks|speaking|speaker|talk|talking|voice|voices|said|says|words?)\b")

FIRST = re.compile(r"\b(first|1st|earlier|former)\b")
SECOND = re.compile(r"\b(second|2nd|later|latter)\b")
SAME = re.compile(r"\b(same|equal|neither|both|no difference|identical)\b")


# ---------------------------------------------------------------- evidence access


def _calls(state: EvidenceState, tool: str, artifact: str | None = "a0") -> list[ToolCall]:
    """Successful calls of `tool` (on `artifact` unless None), oldest first."""
    out = []
    for c in state.successful_calls(tool):
        art = (c.arguments or c.requested_arguments or {}).get("artifact", "a0")
        if artifact is None or art == artifact:
            out.append(c)
    return out


def _whole(state: EvidenceState, tool: str) -> ToolCall | None:
    """The latest call of `tool` over the whole original (no analysis window), else any call on a0."""
    calls = _calls(state, tool)
    whole = [c for c in calls if not (c.arguments or {}).get("start_s") and (c.arguments or {}).get("end_s") is None]
    return (whole or calls or [None])[-1]


def _ids(state: EvidenceState, *calls: ToolCall | None) -> list[str]:
    keep = {c.id for c in calls if c is not None}
    return [e.id for e in state.evidence if e.source_id in keep]


def choice_seconds(text: str, three_part: str = "hms") -> float | None:
    """Seconds a choice states: '5 seconds', 'At about 5 s', '2 to 3 seconds' (the midpoint), '1.5',
    '00:06' (mm:ss), '0:01:05' (h:mm:ss, or mm:ss:ff when three_part='msf', MMAR's '00:06:00' style)."""
    t = text.lower()
    m = re.search(r"\b(\d+):(\d{1,2})(?::(\d{1,2}))?\b", t)
    if m:
        a, b, c = int(m.group(1)), int(m.group(2)), m.group(3)
        if c is None:
            return float(a * 60 + b)
        return float(a * 3600 + b * 60 + int(c)) if three_part == "hms" else a * 60 + b + int(c) / 100
    scale = 1.0
    if re.search(r"\d\s*(ms|milliseconds?)\b", t):
        scale = 0.001
    elif re.search(r"\d\s*(min|mins|minutes?)\b", t):
        scale = 60.0
    m = re.search(r"(\d+(?:\.\d+)?)\s*(?:to|-|–|and)\s*(\d+(?:\.\d+)?)", t)
    if m:
        return scale * (float(m.group(1)) + float(m.group(2))) / 2
    m = re.search(r"\d+(?:\.\d+)?", t)
    return scale * float(m.group()) if m else None


def _time_choices(state: EvidenceState) -> bool:
    """At least two choices state a time: with a unit ('5 seconds', '00:06', '10th second'), or as bare
    numbers under a question that asks in seconds."""
    choices = state.question.choices
    with_unit = sum(bool(TIME_UNIT.search(c.lower())) for c in choices)
    if with_unit >= 2:
        return True
    bare = sum(bool(re.fullmatch(r"\s*\d+(\.\d+)?\s*", c)) for c in choices)
    return bare >= 2 and bool(re.search(r"\bseconds?\b", state.question.text.lower()))


def _closest_seconds(state: EvidenceState, value: float, calls: list[ToolCall | None], what: str,
                     method: str) -> MatchResult | None:
    choices = state.question.choices
    secs = [choice_seconds(c) for c in choices]
    duration = state.original.duration_s
    if any(s is not None and s > duration + 1 for s in secs):  # '00:06:00' read as h:mm:ss overshoots the clip
        alt = [choice_seconds(c, "msf") for c in choices]
        if all(s is None or s <= duration + 1 for s in alt):
            secs = alt
    if sum(s is not None for s in secs) < 2:
        return None
    scores = [-abs(s - value) if s is not None else -1e9 for s in secs]
    idx = max(range(len(scores)), key=lambda i: scores[i])
    ranked = sorted(scores, reverse=True)
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else 1.0
    return MatchResult(
        choice_index=idx, method=method, scores=[round(s, 3) for s in scores],
        rationale=f"{what} = {value:.2f} s; the closest choice is {choices[idx]!r} ({secs[idx]:g} s).",
        cited_evidence_ids=_ids(state, *calls),
        confident=abs(secs[idx] - value) <= max(1.0, 0.2 * value) and margin > 0.5,
    )


# ---------------------------------------------------------------- matchers


def match_onset(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'When does the speech / the ringing start?': the first VAD segment for speech, else the first
    separated sound event (count_events)."""
    q = state.question.text.lower()
    ending = bool(END_Q.search(q)) and not ONSET_Q.search(q)
    if not (ONSET_Q.search(q) or ending) or not _time_choices(state):
        return None
    if SPEECH_WORDS.search(q):
        call = _whole(state, "vad")
        segs = (call.output or {}).get("segments") if call else None
        if not segs:
            return None
        value = float(segs[-1]["end_s"] if ending else segs[0]["start_s"])
        what = f"VAD: speech {'ends' if ending else 'starts'} at"
    else:
        call = _whole(state, "count_events")
        events = (call.output or {}).get("events") if call else None
        if not events:
            return None
        value = float(events[-1]["end_s"] if ending else events[0]["start_s"])
        what = f"count_events: the {'last sound event ends' if ending else 'first sound event starts'} at"
    return _closest_seconds(state, value, [call], what, "onset_time")


def match_duration(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'How long is the recording?' -> probe; 'How long does the tone/speech last?' -> the span of the
    sound events (count_events) or of the speech (VAD)."""
    q = state.question.text.lower()
    if not DURATION_Q.search(q) or NOT_DURATION.search(q) or not _time_choices(state):
        return None
    if WHOLE_CLIP.search(q):
        call = _whole(state, "probe")
        value = (call.output or {}).get("duration_s") if call else None
        if value is None:
            value = state.original.duration_s
        if value is None:
            return None
        return _closest_seconds(state, float(value), [call], "the clip's duration (probe)", "duration")
    if SPEECH_WORDS.search(q):
        call = _whole(state, "vad")
        segs = (call.output or {}).get("segments") if call else None
        if not segs:
            return None
        value = float(segs[-1]["end_s"]) - float(segs[0]["start_s"])
        return _closest_seconds(state, value, [call], "VAD: the speech spans", "duration")
    call = _whole(state, "count_events")
    events = (call.output or {}).get("events") if call else None
    if not events:
        return None
    value = float(events[-1]["end_s"]) - float(events[0]["start_s"])
    what = ("count_events: the single sound event lasts" if len(events) == 1
            else f"count_events: the {len(events)} sound events span")
    return _closest_seconds(state, value, [call], what, "duration")


def _which_of_two(choices: list[str]) -> list[str | None]:
    """Each choice read as 'first', 'second', 'same' or None."""
    out: list[str | None] = []
    for c in choices:
        cl = c.lower()
        if SAME.search(cl):
            out.append("same")
        elif FIRST.search(cl) and not SECOND.search(cl):
            out.append("first")
        elif SECOND.search(cl) and not FIRST.search(cl):
            out.append("second")
        else:
            out.append(None)
    return out


def _pick_two(state: EvidenceState, verdict: str, why: str, calls: list[ToolCall | None], method: str,
              confident: bool = True) -> MatchResult | None:
    roles = _which_of_two(state.question.choices)
    if verdict not in roles:
        return None
    idx = roles.index(verdict)
    scores = [1.0 if r == verdict else 0.0 for r in roles]
    return MatchResult(choice_index=idx, method=method, scores=scores,
                       rationale=f"{why}; choice {state.question.choices[idx]!r} says that.",
                       cited_evidence_ids=_ids(state, *calls), confident=confident)


def _two_groups(segs: list[tuple[float, float]]) -> tuple[list[tuple[float, float]], list[tuple[float, float]]] | None:
    """Split time segments into two utterances at the largest gap between consecutive segments."""
    if len(segs) < 2:
        return None
    gaps = [segs[i + 1][0] - segs[i][1] for i in range(len(segs) - 1)]
    k = max(range(len(gaps)), key=lambda i: gaps[i])
    return segs[: k + 1], segs[k + 1 :]


def match_speech_rate(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'Which time is it spoken faster?': words per second of speech in each of the two utterances (VAD
    segments split at the largest pause; words from the ASR word times, assigned by their midpoint)."""
    q = state.question.text.lower()
    if not RATE_Q.search(q):
        return None
    roles = _which_of_two(state.question.choices)
    positional = [c for c, r in zip(state.question.choices, roles) if r in ("first", "second")]
    if "first" not in roles or "second" not in roles or any(RATE_WORDS.search(c.lower()) for c in positional):
        return None  # the choices must name positions only ('the second half was played slowly' asks otherwise)
    vad = _whole(state, "vad")
    segs = [(float(s["start_s"]), float(s["end_s"])) for s in ((vad.output or {}).get("segments") or [])] if vad else []
    groups = _two_groups(segs)
    if groups is None:
        return None
    asr = _whole(state, "asr")
    words = [w for s in ((asr.output or {}).get("segments") or []) for w in (s.get("words") or [])] if asr else []
    rates = []
    for grp in groups:
        lo, hi = grp[0][0], grp[-1][1]
        speech_s = sum(b - a for a, b in grp)
        n = sum(1 for w in words if lo - 0.25 <= (float(w["start"]) + float(w["end"])) / 2 <= hi + 0.25)
        rates.append((n / speech_s if speech_s > 0 else 0.0, n, speech_s))
    if not all(r[1] for r in rates):  # no word times: the same sentence twice -> the shorter reading is faster
        rates = [(1.0 / r[2] if r[2] > 0 else 0.0, 0, r[2]) for r in rates]
    (r1, n1, d1), (r2, n2, d2) = rates
    faster = not re.search(r"\b(slower|more slowly)\b", q)
    ratio = max(r1, r2) / max(min(r1, r2), 1e-9)
    if ratio < 1.15:
        verdict = "same"
    else:
        first_faster = r1 > r2
        verdict = "first" if first_faster == faster else "second"
    why = (f"utterance 1: {n1} words in {d1:.2f} s of speech, utterance 2: {n2} words in {d2:.2f} s "
           f"(rates {r1:.2f} vs {r2:.2f}, ratio {ratio:.2f}); so the {verdict} is "
           + ("the faster" if faster else "the slower") if verdict != "same" else
           f"utterance rates {r1:.2f} and {r2:.2f} differ by under 15%")
    return _pick_two(state, verdict, why, [vad, asr], "speech_rate", confident=ratio >= 1.3 or ratio < 1.05)


def _stems(text: str) -> set[str]:
    """Content words with a plural / -ing ending cut, so 'beeps' meets 'Beep, bleep' and 'ringing' 'Ring'."""
    out = set()
    for w in set(base._words(text)) - base.STOPWORDS:
        for suf in ("ing", "es", "s"):
            if w.endswith(suf) and len(w) - len(suf) >= 3:
                w = w[: -len(suf)]
                break
        out.add(w)
    return out


def match_event_order(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'Which sound is heard first/last?': the tagging events of the whole clip, each attributed to the
    choice closest to its label in meaning; each time step goes to the choice with the most event score
    there; the answer is the choice that wins a step earliest (latest)."""
    q = state.question.text.lower()
    m = ORDER_Q.search(q)
    if not m:
        return None
    last = bool(re.search(r"\b(last|latest|at the end)\b", m.group(0)))
    call = _whole(state, "tagging")
    events = [e for e in ((call.output or {}).get("events") or []) if e.get("label")] if call else []
    if not events:
        return None
    choices = state.question.choices
    labels = sorted({str(e["label"]) for e in events})
    from audiomind.embedded.text import similarity

    sims = similarity(choices, labels)
    label_choice: dict[str, int] = {}
    for j, label in enumerate(labels):
        lw = _stems(label)
        scored = [float(sims[i, j]) + (0.25 if lw & _stems(c) else 0.0) for i, c in enumerate(choices)]
        best = max(range(len(choices)), key=lambda i: scored[i])
        ranked = sorted(scored, reverse=True)
        if ranked[0] >= 0.35 and (len(ranked) == 1 or ranked[0] - ranked[1] >= 0.05):
            label_choice[label] = best
    owned = [(e, label_choice[str(e["label"])]) for e in events if str(e["label"]) in label_choice]
    if not owned:
        return None
    # Per time step, the choice whose events there sum to the most wins the step (AudioSet labels overlap:
    # a ringing phone is also 'Alarm'); a choice is heard from its first won step to its last.
    step = 0.24
    end = max(float(e["end_s"]) for e, _ in owned)
    when: dict[int, float] = {}
    t = 0.0
    while t < end:
        mid = t + step / 2
        strength: dict[int, float] = {}
        for e, i in owned:
            if float(e["start_s"]) <= mid < float(e["end_s"]):
                strength[i] = strength.get(i, 0.0) + float(e.get("score", 0.0))
        if strength:
            i = max(strength, key=lambda k: strength[k])
            mark = t + step if last else t
            when[i] = max(when.get(i, mark), mark) if last else min(when.get(i, mark), mark)
        t += step
    if len(when) < 2:
        return None
    idx = max(when, key=lambda i: when[i]) if last else min(when, key=lambda i: when[i])
    ordered = sorted(when.items(), key=lambda kv: kv[1], reverse=last)
    gap = abs(ordered[0][1] - ordered[1][1])
    scores = [round(when[i], 3) if i in when else (-1.0 if last else 1e9) for i in range(len(choices))]
    return MatchResult(
        choice_index=idx, method="event_order", scores=[s if s != 1e9 else 9999.0 for s in scores],
        rationale="tagging events by choice (each 0.24 s step to the choice with the most event score there): "
        + ", ".join(f"{choices[i]!r} {'ends' if last else 'starts'} "
                                                           f"at {t:.2f} s" for i, t in ordered)
        + f"; so {choices[idx]!r} is heard {'last' if last else 'first'}.",
        cited_evidence_ids=_ids(state, call), confident=gap >= 0.5,
    )


# ---- pitch: notes read off the pitch tool's f0 contour (or the notes tool's transcription when on record)


def _contour_notes(times: list[float], f0: list[float | None], hop_s: float,
                   tol_st: float = 0.6, min_points: int = 3) -> list[tuple[float, float, float]]:
    """Steady stretches of an f0 contour as notes: consecutive voiced points within tol_st semitones of
    the stretch's running median; stretches shorter than min_points are dropped (onset glides)."""
    import math
    import statistics

    notes: list[tuple[float, float, float]] = []
    cur: list[tuple[float, float]] = []

    def flush() -> None:
        if len(cur) >= min_points:
            notes.append((cur[0][0], cur[-1][0] + hop_s, statistics.median(h for _, h in cur)))
        cur.clear()

    for t, h in zip(times, f0):
        if h is None or not h or h <= 0:
            flush()
            continue
        if cur:
            med = statistics.median(x for _, x in cur)
            if abs(12 * math.log2(h / med)) > tol_st:
                flush()
        cur.append((float(t), float(h)))
    flush()
    merged: list[tuple[float, float, float]] = []
    for n in notes:  # a note split by a dropout is one note
        if merged and abs(12 * math.log2(n[2] / merged[-1][2])) < tol_st and n[0] - merged[-1][1] < 0.15:
            a, _, h = merged[-1]
            merged[-1] = (a, n[1], h)
        else:
            merged.append(n)
    return merged


def pitch_notes(state: EvidenceState) -> tuple[list[tuple[float, float, float]], ToolCall | None]:
    """(start_s, end_s, hz) of the notes in the whole clip: the notes tool's events when it ran, else the
    steady stretches of the pitch tool's f0 contour."""
    call = _whole(state, "notes")
    rows = (call.output or {}).get("notes") if call else None
    if isinstance(rows, list) and rows and isinstance(rows[0], dict):
        found = []
        for r in rows:
            hz = _hz_of(r)
            if hz and r.get("start_s") is not None and r.get("end_s") is not None:
                found.append((float(r["start_s"]), float(r["end_s"]), hz))
        if found:
            return sorted(found), call
    call = _whole(state, "pitch")
    contour = (call.output or {}).get("contour") if call else None
    if isinstance(contour, dict) and contour.get("time_s") and contour.get("f0_hz"):
        return _contour_notes(contour["time_s"], contour["f0_hz"], float(contour.get("hop_s") or 0.03)), call
    return [], call


def _hz_of(d: dict[str, Any]) -> float | None:
    for k in ("hz", "freq_hz", "f0_hz", "frequency_hz", "median_hz", "pitch_hz"):
        v = d.get(k)
        if isinstance(v, (int, float)) and v > 0:
            return float(v)
    midi = next((d[k] for k in ("pitch_midi", "midi", "pitch") if isinstance(d.get(k), (int, float))), None)
    if isinstance(midi, (int, float)) and 0 < midi < 128:
        return 440.0 * 2 ** ((float(midi) - 69) / 12)
    return None


def _semitones(a: float, b: float) -> float:
    import math

    return 12 * math.log2(b / a)


def match_pitch_compare(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'Which of the two tones is higher/lower?': the first and the last reported note."""
    q = state.question.text.lower()
    if not PITCH_COMPARE_Q.search(q):
        return None
    notes, call = pitch_notes(state)
    if len(notes) >= 2:
        first, second = notes[0][2], notes[-1][2]
    else:
        out = (call.output or {}) if call else {}
        if not out.get("start_f0_hz") or not out.get("end_f0_hz"):
            return None
        first, second = float(out["start_f0_hz"]), float(out["end_f0_hz"])
    st = _semitones(first, second)
    hi, lo = re.search(r"\bhigher\b", q), re.search(r"\blower\b", q)
    higher = bool(hi) and (not lo or hi.start() < lo.start())
    if abs(st) < 0.5:
        verdict = "same"
    else:
        second_higher = st > 0
        verdict = "second" if second_higher == higher else "first"
    why = (f"pitch: first note {first:.0f} Hz, last note {second:.0f} Hz ({st:+.1f} semitones)")
    return _pick_two(state, verdict, why, [call], "pitch_compare", confident=abs(st) >= 1 or abs(st) < 0.25)


CONTOUR_WORDS = {
    "arch": r"rises? (and )?then falls?|up (and )?then down|rise.{0,20}fall|ascend.{0,20}descend",
    "valley": r"falls? (and )?then rises?|down (and )?then up|fall.{0,20}rise|descend.{0,20}ascend",
    "rising": r"\b(rises?|rising|ascend\w*|goes up|upward|higher and higher|increas\w*)\b",
    "falling": r"\b(falls?|falling|descend\w*|goes down|downward|lower and lower|decreas\w*)\b",
    "flat": r"\b(same (note|pitch)|stays?|constant|unchanged|flat|steady|monotone)\b",
}


def _contour(hz: list[float]) -> str:
    st = [_semitones(hz[0], h) for h in hz]
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


def match_pitch_contour(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'How does the pitch change?': the contour of the reported notes (rising, falling, flat, arch, valley)."""
    q = state.question.text.lower()
    if not (CONTOUR_SUBJECT.search(q) and CONTOUR_VERB.search(q)) or PITCH_COMPARE_Q.search(q):
        return None
    notes, call = pitch_notes(state)
    if not notes:
        return None
    shape = _contour([n[2] for n in notes])  # one steady note (or repeats of it) reads as flat
    choices = state.question.choices
    matches = []
    for c in choices:
        cl = c.lower()
        hit = None
        for name in ("arch", "valley", "rising", "falling", "flat"):  # compound shapes first
            if re.search(CONTOUR_WORDS[name], cl):
                hit = name
                break
        matches.append(hit)
    if shape not in matches:
        return None
    idx = matches.index(shape)
    return MatchResult(
        choice_index=idx, method="pitch_contour", scores=[1.0 if m == shape else 0.0 for m in matches],
        rationale=f"pitch: notes {', '.join(f'{n[2]:.0f}' for n in notes)} Hz form a {shape} contour; "
        f"choice {choices[idx]!r} describes it.",
        cited_evidence_ids=_ids(state, call),
    )


LOUDNESS_Q = re.compile(r"\b(loud|louder|loudness|quiet|quieter|volume|soft(er)?|fade[sd]?|fading|crescendo|"
                        r"decrescendo|intensity|level)\b")
WHOLE_SPAN = re.compile(r"\b(from (the )?(start|beginning) to (the )?(end|finish)|over the course of|throughout|"
                        r"over time|whole|entire|overall)\b")


def match_loudness_whole(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'How does the loudness change (from start to end)?': the trend of the WHOLE clip's loudness curve.
    The base matcher reads the latest loudness call, which after a crop + re-listen (the planner crops on
    'start'/'end') describes only the cropped part."""
    q = state.question.text.lower()
    if not LOUDNESS_Q.search(q):
        return None
    latest = base._latest(state, "loudness")
    call = _whole(state, "loudness")
    if call is None or latest is None:
        return None
    cropped = call.id != latest.id
    if cropped and not WHOLE_SPAN.search(q) and re.search(r"\b(first|last|final|opening|beginning|end|ending)\b", q):
        return None  # the question asks about a part; the crop's evidence is the right one
    out = call.output or {}
    trend, change = out.get("trend"), out.get("change_db")
    if trend not in base.TREND_WORDS:
        return None
    choices = state.question.choices
    scores = [1.0 if re.search(base.TREND_WORDS[trend], c.lower()) else 0.0 for c in choices]
    note, confident = "", True
    if not max(scores) and trend == "fluctuating":
        # the level moves about (e.g. speech and its pauses) without a trend the tool's rule accepts (a fitted
        # change large against the spread): of choices that offer no 'fluctuating', 'no overall change' fits
        scores = [1.0 if re.search(base.TREND_WORDS["steady"], c.lower()) else 0.0 for c in choices]
        note, confident = " (no monotonic trend by the tool's rule: the change is small against the spread)", False
    if not max(scores) or (not cropped and not note):
        return None  # nothing to add: the base matcher reads this same whole-clip trend
    idx = scores.index(1.0)
    return MatchResult(choice_index=idx, method="loudness_trend_whole", scores=scores,
                       rationale=f"the whole clip's loudness trend is {trend!r} (change {change} dB){note}; "
                       f"choice {choices[idx]!r} describes that.",
                       cited_evidence_ids=_ids(state, call), confident=confident)


def match_language_first(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """'What language is spoken?': the detected language, when a multilingual ASR model detected it (the
    speech-content rule comes first in INTENTS and would compare transcript words with language names)."""
    if not LANGUAGE_Q.search(state.question.text.lower()):
        return None
    calls = [c for c in _calls(state, "asr", None) if (c.output or {}).get("model") not in (None, "tiny.en")]
    code = (calls[-1].output or {}).get("language") if calls else None
    if not code:
        return None
    name = base.LANGUAGES.get(str(code), str(code))
    choices = state.question.choices
    scores = [1.0 if any(w in name.split() for w in base._words(c)) else 0.0 for c in choices]
    if not max(scores):
        return None
    idx = scores.index(1.0)
    prob = (calls[-1].output or {}).get("language_probability")
    return MatchResult(choice_index=idx, method="language_code", scores=scores,
                       rationale=f"multilingual Whisper ({calls[-1].output.get('model')}) detected {code!r} ({name}, "
                       f"probability {prob}); choice {choices[idx]!r} names it.",
                       cited_evidence_ids=_ids(state, calls[-1]), confident=bool(prob and prob >= 0.5))


def match_sources_not_speech(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """Choices that name sound sources ('A telephone ringing', 'A person speaking') under a question the
    speech-content rule caught ('Which of these best describes the audio?'): when no choice shares a single
    content word with the transcript, the transcript cannot decide; compare with the tags instead."""
    if analysis.primary != "speech_content":
        return None
    text, _ = base._transcript(state)
    heard = set(base._words(text)) - base.STOPWORDS
    for c in state.question.choices:
        if (set(base._words(c)) - base.STOPWORDS) & heard:
            return None
    if not re.search(r"\b(describe[sd]?|sound|sounds|heard|hear|audio|recording|clip)\b", state.question.text.lower()):
        return None
    tags = base.match_tags(state, state.question.choices)
    return tags if tags is not None and tags.choice_index is not None else None


MATCHERS: tuple[Callable[[EvidenceState, QuestionAnalysis], MatchResult | None], ...] = (
    match_language_first,
    match_speech_rate,
    match_onset,
    match_duration,
    match_event_order,
    match_loudness_whole,
    match_pitch_compare,
    match_pitch_contour,
    match_sources_not_speech,
)


def match_extra(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult | None:
    """The first extra matcher whose question shape fits and whose evidence is on record; else None."""
    if not state.question.choices:
        return None
    for fn in MATCHERS:
        result = fn(state, analysis)
        if result is not None and result.choice_index is not None:
            return result
    return None
