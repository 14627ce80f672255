"""How much of the question the deciding evidence accounted for: the `coverage` stage's gaps.

A check answers the question it was built for. When a question asks more than the deciding check examined,
the answer rests on the part it examined, and its confidence must not claim the rest. A *gap* is one part of
the question the decision did not account for. There are four classes, each general over wordings and checks
(which words a question uses comes from the reading and the data tables in language/data, never from here):

| gap | what the decision did not account for |
|---|---|
| `fit` | the question fits the deciding check only loosely (fit < 0.5), or the check reads two or more choices as one value of what it measures (the question tells them apart by something else) |
| `operation` | an operation the question asks for over what was perceived and the deciding check does not perform: a step (a sum, an order, a comparison) the policy cannot take or the check skips; and, for a literal match of what was heard, a selection among several things heard by a criterion the match does not apply (among several amounts or listed values, a word picked by how it was said, the words of one voice among several, what a negated question denies) |
| `unread` | words of the question the reading placed nowhere, or topic words neither what was heard nor the choices account for (grounding.ungrounded) |
| `unheard` | most content words of the chosen choice were not heard (grounding.unheard_in_choice) |

The answer step applies one cap for all of a decision's gaps (answer.COVERAGE_CAP, in the raw space, before
calibration) and records each gap in the stage's inputs. docs/CONFIDENCE.md gives the measured accuracy of
decisions with and without gaps on the development runs.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel

from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import (
    NEGATIONS,
    VOICE_NOUNS,
    VOICE_QUALIFIERS,
    WORD_PICK_NEUTRAL,
    content,
    words,
)
from audiomind.reasoning.calibration import SAID
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.verifiers.base import VerifierResult


class Decision(Protocol):
    """What the coverage stage reads of a decision (audiomind.reasoning.answer.Decision)."""

    @property
    def method(self) -> str: ...
    @property
    def choice_index(self) -> int | None: ...
    @property
    def verifiers(self) -> list[VerifierResult]: ...

GapClass = Literal["fit", "operation", "unread", "unheard"]

STEPLESS_CHECKS = ("day_offset", "transcript_absent", "transcript_complement")
"""Checks that perform the step their question names themselves (a day moved, what was not said)."""


class Gap(BaseModel):
    gap: GapClass
    detail: str


def literal(method: str) -> bool:
    """Whether a check matches what was heard literally: a check of what was said, or a count."""
    return method in SAID or method.startswith("count_")


def gaps(d: Decision, a: QuestionAnalysis, facts: Facts, lead_fit: float | None) -> list[Gap]:
    """Every part of the question the decision `d` did not account for (empty: it accounted for all of it).
    `lead_fit` is the deciding check's fit (None for an executed step, which fits by construction)."""
    if d.choice_index is None or d.method == "guess":
        return []
    out: list[Gap] = []
    if lead_fit is not None and lead_fit < 0.5:
        out.append(Gap(gap="fit", detail=f"the question fits {d.method} loosely (fit {lead_fit:.2f})"))
    same = _same_value(d, a)
    if same:
        out.append(Gap(gap="fit", detail=same))
    out += _operations(d, a, facts)
    out += _unread(d, a, facts)
    missing = _unheard(d, a, facts)
    if missing:
        out.append(Gap(gap="unheard", detail="the chosen choice's words not heard: " + ", ".join(map(repr, missing))))
    return out


def _same_value(d: Decision, a: QuestionAnalysis) -> str:
    """Choices the deciding check reads as one value of what it measures: the question tells them apart by
    something the check does not measure ('' when each choice it reads is a value of its own)."""
    lead = next((r for r in d.verifiers if r.name == d.method), None)
    if lead is None or not lead.values or len(lead.values) != len(a.choices):
        return ""
    by_value: dict[str, list[str]] = {}
    for c, v in zip(a.choices, lead.values):
        if v is not None:
            by_value.setdefault(v, []).append(c)
    alike = [(v, cs) for v, cs in by_value.items() if len(cs) > 1]
    if not alike:
        return ""
    v, cs = alike[0]
    return (f"the choices {' and '.join(map(repr, cs))} are one value of what {d.method} measures ({v!r}): the "
            "question tells them apart by something it does not measure")


def _operations(d: Decision, a: QuestionAnalysis, facts: Facts) -> list[Gap]:
    out: list[Gap] = []
    if d.method.startswith("step:"):
        return out  # an executed step is the operation the question asks for
    if a.unsupported_step:
        out.append(Gap(gap="operation", detail=f"a step the policy cannot take ({a.unsupported_step!r})"))
    if a.steps and not any(_takes(d.method, s) for s in a.steps):
        out.append(Gap(gap="operation", detail=f"{', '.join(a.steps)}, which {d.method} does not take"))
    if not literal(d.method):
        return out
    selections = (("among several amounts heard", _several_amounts(a, facts)),
                  ("among values heard side by side", _listed_values(a, facts)),
                  ("a word picked by", _word_picked(a)),
                  ("the words of one voice among several", _one_voice(a)),
                  ("what the negated question denies", _negation(a)))
    for what, words_ in selections:
        if words_:
            out.append(Gap(gap="operation", detail=f"selection {what} ({words_}) that a literal match does not make"))
    return out


def _takes(method: str, step: str) -> bool:
    """Whether the check `method` performs the question's step `step` itself."""
    if step in method or method in STEPLESS_CHECKS:
        return True
    return step.endswith("voice") and (method.startswith("count") or method == "relative_order")


def _several_amounts(a: QuestionAnalysis, facts: Facts) -> str:
    """Amounts of the choices' kind that the speech states more than one of (of bare numbers, three or more)."""
    from audiomind.language.numbers import spoken_quantities

    if facts.transcript is None:
        return ""
    units = {q.unit for c in a.choices for q in spoken_quantities(c) if q.unit}
    said = spoken_quantities(facts.transcript.text)
    if units:
        same = {q.value: q.text for q in said if q.unit in units}
        return ", ".join(same.values()) if len(same) >= 2 else ""
    if not any(spoken_quantities(c) for c in a.choices):
        return ""
    values = {q.value: q.text for q in said}
    return ", ".join(values.values()) if len(values) >= 3 else ""


def _listed_values(a: QuestionAnalysis, facts: Facts) -> str:
    """Three or more distinct values of one unit that the speech states, when the choices are not amounts:
    things set side by side by a value the question may rank or pick by."""
    from audiomind.language.numbers import spoken_quantities

    if facts.transcript is None or any(spoken_quantities(c) for c in a.choices):
        return ""
    by_unit: dict[str, dict[float, str]] = {}
    for q in spoken_quantities(facts.transcript.text):
        if q.unit:
            by_unit.setdefault(q.unit, {}).setdefault(q.value, q.text)
    listed = max(by_unit.values(), key=len, default={})
    return ", ".join(listed.values()) if len(listed) >= 3 else ""


def _word_picked(a: QuestionAnalysis) -> str:
    """For a 'which word' question over single-word choices, the question's words that pick the word by
    something besides being said (language/data/words.toml's word_pick_neutral are not such words)."""
    if "not_mentioned" in a.steps or not all(len(words(c)) == 1 for c in a.choices):
        return ""
    if not {"word", "words"} & set(words(a.question)):
        return ""
    chosen = {w for c in a.choices for w in words(c)}
    picked = [w for w in dict.fromkeys(content(a.question)) if w not in WORD_PICK_NEUTRAL and w not in chosen]
    return ", ".join(map(repr, picked))


def _one_voice(a: QuestionAnalysis) -> str:
    """A voice singled out among several (a voice qualifier beside a voice noun, data/words.toml)."""
    ws = words(a.question)
    for i, w in enumerate(ws):
        if w in VOICE_QUALIFIERS and any(v in VOICE_NOUNS for v in ws[max(0, i - 3):i + 4]):
            return repr(" ".join(ws[max(0, i - 1):i + 2]))
    return ""


def _negation(a: QuestionAnalysis) -> str:
    """The negating words of a question that is no question about what was left unsaid."""
    if "not_mentioned" in a.steps:
        return ""
    hits = [w for w in words(a.question) if w in NEGATIONS or w.endswith("n't")]
    return " ".join(hits)


def _heard(facts: Facts) -> list[str]:
    t = facts.transcript
    return [t.text, *(r.text for r in t.readings)] if t is not None else []


def _unread(d: Decision, a: QuestionAnalysis, facts: Facts) -> list[Gap]:
    from audiomind.language import cues
    from audiomind.reasoning.grounding import ungrounded

    out = []
    frame = a.frame
    if frame is not None and frame.unaccounted and not d.method.startswith("step:"):
        out.append(Gap(gap="unread", detail="the reading placed nowhere " + ", ".join(map(repr, frame.unaccounted))))
    if d.method in SAID and frame is not None and facts.transcript is not None:
        read = cues.matched_words([("family_words", "speech_content"), *(("steps", s) for s in a.steps)], a.question)
        topic = ungrounded(frame, _heard(facts), read)
        if topic:
            out.append(Gap(gap="unread", detail="topic words in neither what was heard nor the choices: "
                                                + ", ".join(map(repr, topic))))
    return out


def _unheard(d: Decision, a: QuestionAnalysis, facts: Facts) -> list[str]:
    from audiomind.reasoning.grounding import unheard_in_choice

    if d.method not in ("transcript_match", "readings_agree") or d.choice_index is None or facts.transcript is None:
        return []
    missing, n = unheard_in_choice(a.choices[d.choice_index], a.question, _heard(facts))
    return missing if missing and 2 * len(missing) >= n else []
