"""The step executor: takes the derivation steps a `QuestionFrame` names, on the facts, to a value per choice.

Steps it knows: a day offset from the one spoken weekday; a total, a difference or a remainder of spoken
quantities, or their average; the greatest or least of spoken values (a value, or the choice it was said of); the length of a
pause between utterances; the opposite of a spoken adjective (WordNet). Each step
either yields a `StepOutcome` (the derived value, support per choice, the reason and the evidence it rests on)
or None when the facts do not hold what it needs: the answer step then admits a guess and names the step.
"""

from __future__ import annotations

import itertools

from pydantic import BaseModel, Field

from audiomind.language.frames import DerivationStep, QuestionFrame
from audiomind.language.numbers import DAYS, Quantity, number_in, same_noun, spoken_quantities
from audiomind.language.numbers import tokens as number_tokens
from audiomind.language.question import words_of
from audiomind.language.text import STOPWORDS
from audiomind.reasoning.facts import Facts

VALUE_TOL = 1e-6  # quantities are compared as spoken numbers: equal up to float rounding
MIN_PAUSE_S = 0.25  # a silence between utterances shorter than this is no pause a listener names


class StepOutcome(BaseModel):
    step: DerivationStep
    value: str = Field(description="the derived value, said plainly")
    supports: list[float] = Field(description="per choice, -1 (contradicted) .. 1 (the derived value)")
    reason: str
    reliability: float
    evidence_ids: list[str] = Field(default_factory=list)


def _choice_values(choices: list[str]) -> list[Quantity | None]:
    out: list[Quantity | None] = []
    for c in choices:
        qs = spoken_quantities(c)
        if qs:
            out.append(qs[0])
        else:
            n = next((number_in(w) for w in words_of(c) if number_in(w) is not None), None)
            out.append(Quantity(value=n, text=c, position=0) if n is not None else None)
    return out


def _numeric_supports(choices: list[str], value: float, unit: str | None) -> list[float] | None:
    vals = _choice_values(choices)
    if sum(v is not None for v in vals) < max(2, len(choices) - 1):
        return None  # the choices are not numbers: the step's value cannot be matched to them
    out = []
    for v in vals:
        if v is None:
            out.append(0.0)
        elif abs(v.value - value) <= VALUE_TOL and (v.unit is None or unit is None or v.unit == unit):
            out.append(1.0)
        else:
            out.append(-1.0)
    return out if max(out) == 1.0 else None


def _word_reliability(facts: Facts, texts: list[str]) -> float:
    """How sure the recogniser was of the words a step rests on (mean word probability; 0.7 if unknown)."""
    t = facts.transcript
    probs = [w.probability for w in (t.words if t else []) if w.probability is not None
             and any(part in words_of(w.text) for x in texts for part in words_of(x))]
    return min(0.9, max(0.4, sum(probs) / len(probs))) if probs else 0.7


def _fmt(x: float) -> str:
    return f"{x:g}"


def day_offset(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    t = facts.transcript
    if t is None:
        return None
    heard = [d for d in DAYS if d in words_of(t.text)]
    if len(set(heard)) != 1:
        return None
    n = int(step.amount or 1)
    sign = -1 if step.direction == "earlier" else 1
    target = DAYS[(DAYS.index(heard[0]) + sign * n) % 7]
    supports = [1.0 if target in words_of(c) else (-1.0 if any(d in words_of(c) for d in DAYS) else 0.0)
                for c in frame.choices]
    if max(supports, default=0) < 1:
        return None
    return StepOutcome(step=step, value=target.title(), supports=supports,
                       reason=f"the transcript names {heard[0].title()}; {n} day(s) "
                              f"{'earlier' if sign < 0 else 'later'} ({step.cue!r}) is {target.title()}",
                       reliability=_word_reliability(facts, [heard[0]]), evidence_ids=t.evidence_ids)


def _quantities(facts: Facts) -> list[Quantity]:
    return spoken_quantities(facts.transcript.text) if facts.transcript else []


def _same_unit_pair(qs: list[Quantity], choices: list[str]) -> tuple[str | None, list[Quantity]]:
    """The quantities of the unit the choices (or most of the transcript's quantities) are in."""
    units = [v.unit for v in _choice_values(choices) if v is not None and v.unit]
    if units:
        named = max(set(units), key=units.count)
        return named, [q for q in qs if q.unit == named]
    counted = [q.unit for q in qs]
    unit = max(set(counted), key=counted.count) if counted else None
    return unit, [q for q in qs if q.unit == unit]


MAX_STATED_COUNT = 12  # a whole number up to this in the question may say how many values it combines


def _count_mismatch(question: str, qs: list[Quantity]) -> bool:
    """Whether the question says how many values it combines ('over those four days', 'all three pets') and the
    transcript holds another number of them (a value misrecognised or not heard): the step's value would be
    wrong, so the step is not taken."""
    stated = [q.value for q in spoken_quantities(question)
              if float(q.value).is_integer() and 2 <= q.value <= MAX_STATED_COUNT]
    return len(stated) == 1 and int(stated[0]) != len(qs)


def total(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    unit, qs = _same_unit_pair(_quantities(facts), frame.choices)
    if len(qs) < 2 or _count_mismatch(frame.text, qs):
        return None
    value = sum(q.value for q in qs)
    supports = _numeric_supports(frame.choices, value, unit)
    if supports is None:
        return None
    parts = " + ".join(q.text for q in qs)
    return StepOutcome(step=step, value=f"{_fmt(value)} {unit or ''}".strip(), supports=supports,
                       reason=f"spoken quantities {parts} ({step.cue!r}) = {_fmt(value)} {unit or ''}".strip(),
                       reliability=_word_reliability(facts, [q.text for q in qs]),
                       evidence_ids=facts.transcript.evidence_ids if facts.transcript else [])


def _averaged(qs: list[Quantity], choices: list[str]) -> tuple[str | None, list[Quantity]]:
    """The spoken values an average is taken over: those of the choices' unit, with the bare numbers said after
    one of them ('five kilometres on Sunday, six on Wednesday': the unit is not said again) or listed right
    before it ('twelve, ten, fourteen and eight minutes'); when the choices name no unit, the bare numbers, not
    a count of the things they are of ('three tests: 70, 80 and 90')."""
    unit, same = _same_unit_pair(qs, choices)
    bare = [q for q in qs if q.unit is None and (q.noun is None or q.noun in STOPWORDS)]
    if unit is None or not same:
        return None, bare
    first = min(q.position for q in same)
    listed, at = [], first
    for q in sorted((q for q in bare if q.position < first), key=lambda q: -q.position):
        if at - q.position > 2:
            break
        listed.append(q)
        at = q.position
    return unit, sorted(same + listed + [q for q in bare if q.position > first], key=lambda q: q.position)


def mean(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    """The average of the spoken values of the choices' unit (bare numbers when the choices name none)."""
    unit, qs = _averaged(_quantities(facts), frame.choices)
    if len(qs) < 2 or _count_mismatch(frame.text, qs):
        return None
    value = sum(q.value for q in qs) / len(qs)
    supports = _numeric_supports(frame.choices, value, unit)
    if supports is None:
        return None
    parts = ", ".join(q.text for q in qs)
    return StepOutcome(step=step, value=f"{_fmt(value)} {unit or ''}".strip(), supports=supports,
                       reason=f"the average of the spoken quantities {parts} ({step.cue!r}) = "
                              f"{_fmt(value)} {unit or ''}".strip(),
                       reliability=_word_reliability(facts, [q.text for q in qs]),
                       evidence_ids=facts.transcript.evidence_ids if facts.transcript else [])


def difference(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    unit, qs = _same_unit_pair(_quantities(facts), frame.choices)
    if len(qs) != 2:
        return None
    value = abs(qs[0].value - qs[1].value)
    supports = _numeric_supports(frame.choices, value, unit)
    if supports is None:
        return None
    return StepOutcome(step=step, value=f"{_fmt(value)} {unit or ''}".strip(), supports=supports,
                       reason=f"spoken quantities {qs[0].text} and {qs[1].text} differ by {_fmt(value)} ({step.cue!r})",
                       reliability=_word_reliability(facts, [q.text for q in qs]),
                       evidence_ids=facts.transcript.evidence_ids if facts.transcript else [])


def remainder(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    if step.amount is None:
        return None
    qs = _quantities(facts)
    topics = [w.word for w in frame.words if w.role == "topic"]
    base = [q for q in qs if any(same_noun(q.noun, t) for t in topics)]
    if len(base) != 1:
        base = qs if len(qs) == 1 else []
    if len(base) != 1:
        return None
    value = base[0].value + (step.amount if step.direction == "more" else -step.amount)
    if value < 0:
        return None
    supports = _numeric_supports(frame.choices, value, base[0].unit)
    if supports is None:
        return None
    op = "+" if step.direction == "more" else "-"
    return StepOutcome(step=step, value=_fmt(value), supports=supports,
                       reason=f"the transcript states {base[0].text}; the question's change ({step.cue!r}) "
                              f"is {op}{_fmt(step.amount)}: {_fmt(value)}",
                       reliability=_word_reliability(facts, [base[0].text]),
                       evidence_ids=facts.transcript.evidence_ids if facts.transcript else [])


def pause_length(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    from audiomind.reasoning.verifiers import choice_seconds

    if facts.speech is None or len(facts.speech.segments) < 2:
        return None
    segs = sorted(facts.speech.segments, key=lambda s: s.start_s)
    gaps = [(b.start_s - a.end_s, a.end_s, b.start_s) for a, b in itertools.pairwise(segs) if b.start_s - a.end_s >= MIN_PAUSE_S]
    if not gaps:
        return None
    gap, g0, g1 = max(gaps)
    secs = [choice_seconds(c, facts.duration_s) for c in frame.choices]
    if sum(s is not None for s in secs) < max(2, len(secs) - 1):
        return None
    dist = [abs(s - gap) if s is not None else None for s in secs]
    best = min(d for d in dist if d is not None)
    tol = max(0.3, 0.25 * gap)
    supports = [0.0 if d is None else (1.0 if d == best and d <= tol else -1.0 if d > tol else 0.3) for d in dist]
    if max(supports) < 1:
        return None
    others = f"; {len(gaps) - 1} shorter pause(s)" if len(gaps) > 1 else ""
    return StepOutcome(step=step, value=f"{gap:.1f} s", supports=supports,
                       reason=f"voice activity pauses from {g0:.2f} s to {g1:.2f} s: {gap:.2f} s{others}",
                       reliability=0.75 if len(gaps) == 1 else 0.6, evidence_ids=facts.speech.evidence_ids)


def opposite(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    from audiomind.language.wordnet import antonyms

    t = facts.transcript
    if t is None:
        return None
    heard = set(words_of(t.text))
    opp = {a for w in heard for a in antonyms(w)}
    supports, found = [], []
    for c in frame.choices:
        cw = set(words_of(c))
        if cw & opp:
            supports.append(1.0)
            found.append(c)
        elif cw & heard:
            supports.append(-1.0)  # the spoken word itself is not its opposite
        else:
            supports.append(0.0)
    if len(found) != 1:
        return None
    source = sorted(w for w in heard if set(words_of(found[0])) & antonyms(w))
    return StepOutcome(step=step, value=found[0], supports=supports,
                       reason=f"the transcript says {', '.join(repr(s) for s in source)}; WordNet gives "
                              f"{found[0]!r} as its opposite ({step.cue!r})",
                       reliability=0.7 * _word_reliability(facts, source) / 0.7 if source else 0.6,
                       evidence_ids=t.evidence_ids)


def _bound_values(text: str, choices: list[str], qs: list[Quantity]) -> dict[int, Quantity]:
    """Each choice's spoken value: the quantity after the choice's own words (before the next choice is named),
    else the one just before them ('twenty dollars for the red shirt'). A choice is found by the words only it
    has ('red' in 'the red shirt' beside 'the blue shirt'); a choice named nowhere, or two choices on one value,
    bind nothing."""
    from audiomind.language.text import matchable, stem

    toks = [stem(t) for t in number_tokens(text)]
    own = [{stem(w) for w in matchable(c)} for c in choices]
    shared = {w for i, ws in enumerate(own) for j, other in enumerate(own) if i != j for w in ws & other}
    mentions = sorted((p, i) for i, ws in enumerate(own) for p, t in enumerate(toks) if t in ws - shared)
    if not mentions:
        return {}
    out: dict[int, Quantity] = {}
    for q in qs:
        before = [(p, i) for p, i in mentions if p < q.position]
        after = [(p, i) for p, i in mentions if p > q.position]
        owner = before[-1][1] if before else (after[0][1] if after else None)
        if owner is not None and owner not in out:
            out[owner] = q
    values = [q.value for q in out.values()]
    return out if len(set(values)) == len(values) else {}


def extreme(step: DerivationStep, frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    """The greatest or least of the spoken values ('the cheapest', 'the oldest'): a value among numeric choices,
    or the choice the value was said of."""
    t = facts.transcript
    if t is None:
        return None
    unit, qs = _same_unit_pair(_quantities(facts), frame.choices)
    if len(qs) < 2:
        return None
    pick = max if step.direction == "more" else min
    which = "greatest" if step.direction == "more" else "least"
    supports = _numeric_supports(frame.choices, pick(q.value for q in qs), unit)
    if supports is not None:
        best = pick(qs, key=lambda q: q.value)
        return StepOutcome(step=step, value=best.text, supports=supports,
                           reason=f"spoken values {', '.join(q.text for q in qs)}: the {which} ({step.cue!r}) is "
                                  f"{best.text}", reliability=_word_reliability(facts, [q.text for q in qs]),
                           evidence_ids=t.evidence_ids)
    bound = _bound_values(t.text, frame.choices, qs)
    if len(bound) < max(2, len(frame.choices) - 1):
        return None  # not every choice was said with its own value: no ranking of the choices
    winner = pick(bound, key=lambda i: bound[i].value)
    supports = [1.0 if i == winner else (-1.0 if i in bound else 0.0) for i in range(len(frame.choices))]
    said = ", ".join(f"{frame.choices[i]!r} {bound[i].text}" for i in sorted(bound))
    return StepOutcome(step=step, value=frame.choices[winner], supports=supports,
                       reason=f"the transcript gives {said}: the {which} ({step.cue!r}) is {frame.choices[winner]!r}",
                       reliability=0.8 * _word_reliability(facts, [q.text for q in bound.values()]),
                       evidence_ids=t.evidence_ids)


EXECUTORS = {"day_offset": day_offset, "sum": total, "mean": mean, "difference": difference, "remainder": remainder,
             "pause_length": pause_length, "opposite": opposite, "extreme": extreme}


def execute(frame: QuestionFrame, facts: Facts) -> StepOutcome | None:
    """The outcome of the frame's first step (a frame whose steps cannot all be taken yields None)."""
    if not frame.steps or frame.blocking_step is not None:
        return None
    main = [s for s in frame.steps if s.kind != "hypothetical"]
    if not main:
        return None
    return EXECUTORS[main[0].kind](main[0], frame, facts)
