"""From verifier verdicts to one answer with a calibrated confidence and the reason for it.

Each choice's score is the sum of the verifiers' support, weighted by how well the question fits each
verifier and how reliable its evidence is. A choice contradicted by a fitting verifier is never chosen
while an uncontradicted one remains. Confidence comes from the deciding verifier (fit x reliability), cut
when verifiers disagree, when the decision rests on tag similarity alone, when the question needs a step
the policy cannot take, or when a tool it needed failed. With no support for any choice the answer is an
admitted guess. Every one of these is a step of the decision's confidence ledger (audiomind.reasoning.ledger),
applied there and recorded with its stage name; docs/CONFIDENCE.md lists the stages in order.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import (
    NEGATIONS,
    VOICE_NOUNS,
    VOICE_QUALIFIERS,
    WORD_PICK_NEUTRAL,
    content,
    words,
)
from audiomind.reasoning import calibration
from audiomind.reasoning.competence import Familiarity
from audiomind.reasoning.facts import Facts, read_facts
from audiomind.reasoning.ledger import ConfidenceLedger
from audiomind.reasoning.steps import StepOutcome, execute
from audiomind.reasoning.verifiers import VerifierResult, run_verifiers
from audiomind.state import ConfidenceStep, EvidenceState


class Decision(BaseModel):
    choice_index: int | None
    confidence: float
    raw_confidence: float | None = Field(default=None, description="the decision score before calibration")
    method: str
    rationale: str
    confidence_reason: str
    cited_evidence_ids: list[str] = Field(default_factory=list)
    scores: list[float] = Field(default_factory=list)
    verifiers: list[VerifierResult] = Field(default_factory=list)
    familiarity: Familiarity | None = Field(
        default=None, description="how close the question is to those the deciding check was built for")
    confidence_steps: list[ConfidenceStep] = Field(
        default_factory=list, description="the confidence ledger: every stage that made `confidence`, in order")


def _ledger(d: Decision) -> ConfidenceLedger:
    """A ledger continuing the decision's steps (a copy: the decision is not changed)."""
    return ConfidenceLedger(d.confidence_steps)


def decide(state: EvidenceState, analysis: QuestionAnalysis, facts: Facts | None = None) -> Decision:
    """The answer from a run's state (its facts about a0 unless `facts` is given)."""
    return decide_from(facts or read_facts(state), analysis)


def decide_from(facts: Facts, analysis: QuestionAnalysis) -> Decision:
    """The answer from facts alone: every choice of `analysis` verified against them. What the cascade
    front end answers with (facts read from the evidence of its AnswerRequest). Its confidence is the raw
    decision score through the calibration table (reasoning/calibration.py), named in the reason; then at most
    PARTIAL_READING_CAP when a literal match leaves words of the question unaccounted for (beyond_literal), and
    shrunk as far as the question is unlike those its deciding check was built for (within_competence)."""
    d = _decide_raw(facts, analysis)
    if d.choice_index is None:
        return d
    led = _ledger(d)
    p = calibration.into(led, d.method)
    d = d.model_copy(update={
        "confidence": p, "raw_confidence": d.confidence, "confidence_steps": led.steps,
        "confidence_reason": f"{d.confidence_reason} ({calibration.label(d.method)}: raw {d.confidence:.3f})"})
    beyond = beyond_literal(d, analysis, facts)
    if beyond:
        d = _capped(d, "beyond_literal", "a literal match of what was heard does not check the question's "
                    + ", ".join(repr(w) for w in beyond) + " (in neither what was heard nor the choices)")
    unheard = unheard_chosen(d, analysis, facts)
    if unheard:
        d = _capped(d, "unheard_choice", "most of the chosen choice's words were not heard ("
                    + ", ".join(repr(w) for w in unheard) + "): a match of the rest does not say it holds")
    return within_competence(d, analysis)


NOT_A_CHECK = ("guess", "none")


def within_competence(d: Decision, a: QuestionAnalysis) -> Decision:
    """The calibrated decision, its confidence shrunk toward chance as far as the question is unlike those its
    deciding check was built for (audiomind.reasoning.competence); the reason says so when it changes."""
    from audiomind.reasoning import competence

    if d.method in NOT_A_CHECK or d.choice_index is None:
        return d
    fam = competence.familiarity(a.question, d.method)
    led = _ledger(d)
    p = competence.shrink_into(led, len(a.choices), fam)
    if p >= d.confidence:
        return d.model_copy(update={"familiarity": fam, "confidence_steps": led.steps})
    near = f"nearest {fam.nearest!r} at {fam.similarity:.2f}" if fam.nearest else "it has no bank questions"
    why = (f"the question is unlike those {d.method} was built for ({near}; {fam.bank}): "
           f"confidence {d.confidence:.2f} shrunk toward chance")
    return d.model_copy(update={"confidence": p, "familiarity": fam, "confidence_steps": led.steps,
                                "confidence_reason": f"{d.confidence_reason}; {why}"})


def _decide_raw(facts: Facts, analysis: QuestionAnalysis) -> Decision:
    if not analysis.choices:
        led = ConfidenceLedger()
        led.set(0.0, stage="no_choices", reason="free-text question: no choice to be confident in")
        return Decision(choice_index=None, confidence=0.0, method="none", rationale="no choices given",
                        confidence_reason="free-text question", confidence_steps=led.steps)
    span = analysis.time_span
    if span is not None:  # 'in the first 3 seconds': only what happens there counts
        dur = facts.duration_s
        length = span.length_s or min(5.0, dur / 3)
        start = span.start_s if span.start_s is not None else max(0.0, dur - length)
        end = span.end_s if span.end_s is not None else (min(dur, start + length) if span.start_s == 0.0 else dur)
        facts = facts.within(start, end)
    results = run_verifiers(facts, analysis)
    frame = analysis.frame
    if frame is not None and frame.derived:
        outcome = execute(frame, facts)
        return from_step(outcome, results, analysis, facts) if outcome else step_not_taken(results, analysis, facts)
    decision = combine(results, analysis, facts)
    several = several_amounts(decision, analysis, facts)
    if several:
        decision = _capped(decision, "several_amounts", f"the transcript states several amounts ({several}): the "
                           "chosen one heard literally is no answer to a question that may combine them")
    listed = listed_values(decision, analysis, facts)
    if listed:
        decision = _capped(decision, "listed_values", f"the transcript lists values side by side ({listed}): a "
                           "choice heard literally among them is singled out by what was recognised, not by the "
                           "value the question may ask about")
    picked = word_picked_by(decision, analysis)
    if picked:
        decision = _capped(decision, "word_picked", f"the question picks one word by "
                           f"{', '.join(repr(w) for w in picked)}: hearing a word says it was said, not that it is "
                           "the one picked")
    voice = one_voice_asked(decision, analysis)
    if voice:
        decision = _capped(decision, "one_voice", f"the question asks what one voice among several says ({voice!r}): "
                           "the transcript holds the clearest voice's words, not words known to be that voice's")
    denied = negated_ask(decision, analysis)
    if denied:
        decision = _capped(decision, "negated_question", f"the question is negated ({denied!r}): a choice heard says "
                           "it was mentioned, not that what the question denies holds of it")
    if frame is not None and frame.unaccounted:
        decision = _capped(decision, "unaccounted_words", "the reading did not account for "
                           + ", ".join(repr(w) for w in frame.unaccounted))
    return decision


PARTIAL_READING_CAP = 0.45  # a question the reading did not fully understand is never answered confidently
SEVERAL_SUPPORTED_FACTOR = 0.6  # the deciding check supports more than one choice
DISAGREEMENT_FACTOR = 0.55  # another fitting check supports another choice
STEP_SEVERAL_FACTOR = 0.5  # more than one choice holds an executed step's derived value
TAG_STRONG_CAP, TAG_CAP = 0.75, 0.55  # tag similarity decided alone (a strong tag: reliability >= 0.8)
LOOSE_FIT_CAP = 0.5  # the question fits the deciding check only loosely (fit < 0.5)
UNSUPPORTED_STEP_CAP = 0.4  # the question needs a step the policy cannot take
STEP_NOT_TAKEN_CAP = 0.45  # the question needs a step the deciding check does not take
TOOL_FAILURE_CAP = 0.6  # a tool the run needed failed or timed out
FLOOR, CHECK_CEILING, STEP_CEILING = 0.05, 0.97, 0.9  # the raw range of a check's and of a step's confidence
GUESS_CAP, GUESS_NARROWED_BONUS = 0.35, 0.15  # an admitted guess; chance plus this when some choices were ruled out
LITERAL = calibration.SAID
"""Verifiers that match what was heard literally (the checks of what was said); every count (count_events,
count_speakers, ...) is one too."""


def _literal(name: str) -> bool:
    return name in LITERAL or name.startswith("count_")


def _capped(d: Decision, stage: str, why: str) -> Decision:
    """The decision at most PARTIAL_READING_CAP confident, the cap a step of its ledger named `stage`, with why
    appended to its reason when the cap lowered it."""
    led = _ledger(d)
    p = led.cap(PARTIAL_READING_CAP, stage=stage, reason=why)
    if p >= d.confidence:
        return d.model_copy(update={"confidence_steps": led.steps})
    return d.model_copy(update={"confidence": p, "confidence_steps": led.steps,
                                "confidence_reason": f"{d.confidence_reason}; {why}"})


def word_picked_by(d: Decision, a: QuestionAnalysis) -> list[str]:
    """When a literal match chose one of single-word choices for a "which word ...?" question that picks the
    word by something besides being said ('the first one in the new voice', 'said the loudest'), the words
    that say how (data/words.toml's word_pick_neutral are not such words); else []."""
    if not _literal(d.method) or d.choice_index is None or "not_mentioned" in a.steps:
        return []
    if not all(len(words(c)) == 1 for c in a.choices):
        return []
    ws = words(a.question)
    if not {"word", "words"} & set(ws):
        return []
    chosen = {w for c in a.choices for w in words(c)}
    return [w for w in dict.fromkeys(content(a.question)) if w not in WORD_PICK_NEUTRAL and w not in chosen]


def beyond_literal(d: Decision, a: QuestionAnalysis, facts: Facts) -> list[str]:
    """When a check of what was said decided, the question's topic words that neither what was heard, the
    choices, nor the cues of what that check reads (a question about speech, its steps) account for
    (audiomind.reasoning.grounding); else []."""
    from audiomind.language import cues
    from audiomind.reasoning.grounding import ungrounded

    if d.method not in LITERAL or d.choice_index is None or a.frame is None or facts.transcript is None:
        return []
    read = cues.matched_words([("family_words", "speech_content"), *(("steps", s) for s in a.steps)], a.question)
    return ungrounded(a.frame, _heard(facts), read)


def _heard(facts: Facts) -> list[str]:
    """The texts of every recognition of the clip: the transcript and its second readings."""
    t = facts.transcript
    return [t.text, *(r.text for r in t.readings)] if t is not None else []


def unheard_chosen(d: Decision, a: QuestionAnalysis, facts: Facts) -> list[str]:
    """When a match of what was said chose a choice, its content words not heard, if they are at least half of
    them (audiomind.reasoning.grounding.unheard_in_choice); else []. Not for a question about what was not said,
    whose answer is unheard by definition."""
    from audiomind.reasoning.grounding import unheard_in_choice

    if d.method not in ("transcript_match", "readings_agree") or d.choice_index is None or facts.transcript is None:
        return []
    missing, n = unheard_in_choice(a.choices[d.choice_index], a.question, _heard(facts))
    return missing if missing and 2 * len(missing) >= n else []


def one_voice_asked(d: Decision, a: QuestionAnalysis) -> str:
    """When a literal match answered a question about the words of one voice singled out among several ('the
    quieter voice', 'the speaker in the background': data/words.toml's voice_qualifiers beside a voice noun),
    those words; else ''. The recogniser writes what the clearest voice says."""
    if not _literal(d.method) or d.choice_index is None:
        return ""
    ws = words(a.question)
    for i, w in enumerate(ws):
        if w in VOICE_QUALIFIERS and any(v in VOICE_NOUNS for v in ws[max(0, i - 3):i + 4]):
            return " ".join(ws[max(0, i - 1):i + 2])
    return ""


def negated_ask(d: Decision, a: QuestionAnalysis) -> str:
    """When a literal match of what was heard chose a choice for a question that negates what it asks ('What
    did the speaker not like?', 'Which dish was never served?') and is no question about what was left
    unsaid, the negating words; else ''. Hearing 'the food' says the food was talked about, not that it was
    not liked."""
    if not _literal(d.method) or d.choice_index is None or "not_mentioned" in a.steps:
        return ""
    ws = words(a.question)
    hits = [w for w in ws if w in NEGATIONS or w.endswith("n't")]
    return " ".join(hits) if hits else ""


def several_amounts(d: Decision, a: QuestionAnalysis, facts: Facts) -> str:
    """When a literal match of what was heard chose an amount, the other amounts the transcript states of the
    same kind ('a $9 sandwich with a $20 bill' for 'how much change?'), said plainly; else ''. Of the choices'
    unit when they have one (two or more distinct values), of bare numbers when three or more are said."""
    from audiomind.language.numbers import spoken_quantities

    if not _literal(d.method) or d.choice_index is None or facts.transcript is None:
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


def listed_values(d: Decision, a: QuestionAnalysis, facts: Facts) -> str:
    """When a literal match chose a choice that is not an amount and the transcript lists three or more
    distinct values of one unit ('Anna in 12 minutes, Ben in 10, Chloe in 14'), those values said plainly;
    else ''. The speech then sets things side by side by a value: a choice heard literally among them is
    singled out by what the recogniser happened to hear, not by the value the question may rank or pick by."""
    from audiomind.language.numbers import spoken_quantities

    if not _literal(d.method) or d.choice_index is None or facts.transcript is None:
        return ""
    if any(spoken_quantities(c) for c in a.choices):
        return ""  # amounts as choices: several_amounts
    by_unit: dict[str, dict[float, str]] = {}
    for q in spoken_quantities(facts.transcript.text):
        if q.unit:
            by_unit.setdefault(q.unit, {}).setdefault(q.value, q.text)
    listed = max(by_unit.values(), key=len, default={})
    return ", ".join(listed.values()) if len(listed) >= 3 else ""


def from_step(outcome: StepOutcome, results: list[VerifierResult], a: QuestionAnalysis, facts: Facts) -> Decision:
    """The answer the step executor derived: the choice holding the derived value."""
    best = max(range(len(a.choices)), key=lambda i: outcome.supports[i])
    led = ConfidenceLedger()
    reasons = [f"the step {outcome.step.kind} decides ({outcome.reason})"]
    led.set(outcome.reliability, stage="step_reliability", reason=reasons[0])
    if sum(1 for s in outcome.supports if s >= 0.5) > 1:
        reasons.append("more than one choice holds the derived value")
        led.multiply(STEP_SEVERAL_FACTOR, stage="several_hold", reason=reasons[-1])
    if facts.failed:
        reasons.append("tools failed: " + ", ".join(facts.failed))
        led.cap(TOOL_FAILURE_CAP, stage="tool_failure", reason=reasons[-1])
    conf = led.clamp(FLOOR, STEP_CEILING, stage="clamp", reason="a step's confidence lies in "
                     f"[{FLOOR}, {STEP_CEILING}]", digits=3)
    return Decision(choice_index=best, confidence=conf, method=f"step:{outcome.step.kind}",
                    rationale=f"{outcome.reason}; so {a.choices[best]!r}", confidence_reason="; ".join(reasons),
                    cited_evidence_ids=outcome.evidence_ids, confidence_steps=led.steps,
                    scores=[round(s, 3) for s in outcome.supports], verifiers=results)


def step_not_taken(results: list[VerifierResult], a: QuestionAnalysis, facts: Facts) -> Decision:
    """The question asks for a step the executor could not take on this evidence: an admitted guess. A literal
    match of what was heard is no support for a derived answer ('pushed back by one day' is not the day said)."""
    frame = a.frame
    assert frame is not None
    step = frame.blocking_step or next(s for s in frame.steps if s.kind != "hypothetical") if frame.steps else None
    n = len(a.choices)
    usable = [r for r in results if not _literal(r.name)]
    scores = [sum(r.fit * r.reliability * r.verdicts[i].support for r in usable) for i in range(n)]
    literal = {i for r in results if _literal(r.name) for i, v in enumerate(r.verdicts) if v.support >= 0.5}
    open_ = [i for i in range(n) if i not in literal] or list(range(n))
    pick = max(open_, key=lambda i: scores[i])
    kind = step.kind if step else "a derivation"
    why = (f"the question asks for {kind} ({step.cue!r})" if step else "the question asks for a derived answer")
    why += (", a step the policy cannot take" if step and not step.executable
            else ", and the evidence does not hold what that step needs")
    if literal:
        why += f"; what was heard literally ({', '.join(repr(a.choices[i]) for i in sorted(literal))}) is no support"
    led = ConfidenceLedger()
    led.chance(len(open_), stage="guess", reason=f"chance among the {len(open_)} choice(s) left open")
    conf = led.cap(GUESS_CAP, stage="guess_cap", reason="a guess is never confident", digits=3)
    return Decision(choice_index=pick, confidence=conf, method="guess",
                    rationale=f"{why}; {a.choices[pick]!r} is a guess", confidence_reason=why,
                    cited_evidence_ids=[i for r in results for i in r.evidence_ids][:8], confidence_steps=led.steps,
                    scores=[round(s, 3) for s in scores], verifiers=results)


def combine(results: list[VerifierResult], a: QuestionAnalysis, facts: Facts) -> Decision:
    n = len(a.choices)
    weight = {id(r): r.fit * r.reliability for r in results}
    scores = [0.0] * n
    contradicted = [False] * n
    for r in results:
        for i, v in enumerate(r.verdicts):
            scores[i] += weight[id(r)] * v.support
            if r.fit >= 0.5 and v.support <= -0.5:
                contradicted[i] = True
    open_ = [i for i in range(n) if not contradicted[i]] or list(range(n))
    best = max(open_, key=lambda i: scores[i])
    decisive = [r for r in results if r.verdicts[best].support >= 0.5]
    lead = max(decisive, key=lambda r: weight[id(r)], default=None)
    # the least specific evidence (tag similarity) is no rival to a measurement that decides; nor is a check that
    # backs the chosen choice too, among others ('a note is out of tune' backs every 'the Nth note' choice: a
    # selector that names which one narrows it, it does not disagree)
    rivals = [r for r in results if r is not lead and weight[id(r)] >= 0.35
              and not (r.name == "tag_category" and lead is not None and lead.name != "tag_category")
              and r.verdicts[best].support < 0.5
              and any(v.support >= 0.5 for i, v in enumerate(r.verdicts) if i != best)]

    table = "; ".join(f"[{r.name} fit {r.fit:.2f}] {r.reason}" for r in sorted(results, key=lambda r: -weight[id(r)])[:4])
    if lead is None:
        # nothing supports the chosen choice: an admitted guess among the uncontradicted ones
        pick = best if scores[best] > 0 else (open_[0] if len(open_) == 1 else best)
        why = ("no evidence supports any choice"
               + (f"; {n - len(open_)} choice(s) contradicted by the evidence" if len(open_) < n else "")
               + (f"; tools failed: {', '.join(facts.failed)}" if facts.failed else ""))
        led = ConfidenceLedger()
        led.chance(len(open_), stage="guess", bonus=GUESS_NARROWED_BONUS if len(open_) < n else 0.0,
                   reason=f"chance among the {len(open_)} uncontradicted choice(s)"
                   + (f", plus {GUESS_NARROWED_BONUS} for the contradicted ones ruled out" if len(open_) < n else ""))
        conf = led.cap(GUESS_CAP, stage="guess_cap", reason="a guess is never confident", digits=3)
        ids = [i for r in results for i in r.evidence_ids]
        return Decision(choice_index=pick, confidence=conf, method="guess",
                        rationale=f"{why}; {a.choices[pick]!r} is the remaining guess. Evidence: {table or 'none'}",
                        confidence_reason=why, cited_evidence_ids=list(dict.fromkeys(ids)), confidence_steps=led.steps,
                        scores=[round(s, 3) for s in scores], verifiers=results)

    support = lead.verdicts[best].support
    reasons = [f"{lead.name} decides (fit {lead.fit:.2f}, reliability {lead.reliability:.2f})"]
    led = ConfidenceLedger()
    led.product([lead.reliability, fit_term(lead.fit), support_term(support)], stage="evidence", reason=reasons[0]
                + f": reliability x fit term x support term (support {support:.2f})",
                inputs={"check": lead.name, "reliability": lead.reliability, "fit": lead.fit, "support": support})
    if sum(1 for v in lead.verdicts if v.support >= 0.5) > 1:
        reasons.append(f"{lead.name} supports more than one choice")
        led.multiply(SEVERAL_SUPPORTED_FACTOR, stage="several_supported", reason=reasons[-1])
    if rivals:
        reasons.append("disagreement: " + ", ".join(r.name for r in rivals) + " support another choice")
        led.multiply(DISAGREEMENT_FACTOR, stage="disagreement", reason=reasons[-1])
    if lead.name == "tag_category":
        reasons.append("tag similarity alone (no specific measurement)"
                       + ("; a strong tag names the chosen source" if lead.reliability >= 0.8 else ""))
        led.cap(TAG_STRONG_CAP if lead.reliability >= 0.8 else TAG_CAP, stage="tag_only", reason=reasons[-1])
    if lead.fit < 0.5:
        reasons.append("the question fits this evidence only loosely")
        led.cap(LOOSE_FIT_CAP, stage="loose_fit", reason=reasons[-1])
    if a.unsupported_step:
        reasons.append(f"the question needs a step the policy cannot take ({a.unsupported_step!r})")
        led.cap(UNSUPPORTED_STEP_CAP, stage="unsupported_step", reason=reasons[-1])
    if a.steps and not any(s in lead.name or lead.name in ("day_offset", "transcript_absent", "transcript_complement") or
                           (s.endswith("voice") and (lead.name.startswith("count") or lead.name == "relative_order")) for s in a.steps):
        reasons.append(f"the question needs {', '.join(a.steps)}, which {lead.name} does not take")
        led.cap(STEP_NOT_TAKEN_CAP, stage="check_skips_step", reason=reasons[-1])
    if facts.failed:
        reasons.append("tools failed: " + ", ".join(facts.failed))
        led.cap(TOOL_FAILURE_CAP, stage="tool_failure", reason=reasons[-1])
    conf = led.clamp(FLOOR, CHECK_CEILING, stage="clamp", reason=f"a check's confidence lies in [{FLOOR}, "
                     f"{CHECK_CEILING}]", digits=3)
    rationale = f"{lead.reason}; so {a.choices[best]!r}"
    cited = list(dict.fromkeys(lead.evidence_ids + [i for r in decisive if r is not lead for i in r.evidence_ids]))
    return Decision(choice_index=best, confidence=conf, method=lead.name, rationale=rationale,
                    confidence_reason="; ".join(reasons), cited_evidence_ids=cited, confidence_steps=led.steps,
                    scores=[round(s, 3) for s in scores], verifiers=results)


def fit_term(fit: float) -> float:
    """How much of the deciding check's reliability a question of this fit keeps: 0.4 + fit, at most 1."""
    return min(1.0, 0.4 + fit)


def support_term(support: float) -> float:
    """How much a verdict of this support keeps: 0.5 + support / 2, at most 1 (full support keeps all)."""
    return min(1.0, 0.5 + 0.5 * support)
