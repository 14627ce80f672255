"""From verifier verdicts to one answer with a calibrated confidence and the reason for it.

Each choice's score is the sum of the verifiers' support, weighted by how well the question fits each
verifier and how reliable its evidence is. A choice contradicted by a fitting verifier is never chosen
while an uncontradicted one remains. With no support for any choice the answer is an admitted guess.

The confidence is made by the ledger's stages (audiomind.reasoning.ledger.STAGES; docs/CONFIDENCE.md gives each
one's measured effect): `evidence` (the deciding check's reliability x its development record (reasoning.records)
x fit x support, an executed step's reliability x its record, or chance for a guess), `agreement` (once, when
the evidence conflicts), `coverage` (once, when the decision left part of the question unaccounted for: audiomind.reasoning.coverage), `calibration` (the table
of the deciding check's family), `competence` (how far the question lies outside what the check declares it
is for). The graph's final-answer node adds `tool_failure` for every front end.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from audiomind.language.analysis import QuestionAnalysis
from audiomind.reasoning import calibration, coverage, records
from audiomind.reasoning.competence import Familiarity
from audiomind.reasoning.coverage import literal
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
    fit: float | None = Field(default=None, description="how well the question fits the deciding check (a "
                              "verifier's fit; None for a step or a guess)")


def _ledger(d: Decision) -> ConfidenceLedger:
    """A ledger continuing the decision's steps (a copy: the decision is not changed)."""
    return ConfidenceLedger(d.confidence_steps)


def decide(state: EvidenceState, analysis: QuestionAnalysis, facts: Facts | None = None) -> Decision:
    """The answer from a run's state (its facts about a0 unless `facts` is given)."""
    return decide_from(facts or read_facts(state), analysis)


def decide_from(facts: Facts, analysis: QuestionAnalysis) -> Decision:
    """The answer from facts alone: every choice of `analysis` verified against them. What the cascade
    front end answers with (facts read from the evidence of its AnswerRequest). Its confidence is the evidence
    stage (and agreement), capped once by the coverage stage when the decision left part of the question
    unaccounted for (audiomind.reasoning.coverage), mapped through the calibration table of the deciding check's
    family (reasoning/calibration.py), then shrunk as far as the question lies outside what the deciding check
    declares it is for (within_competence)."""
    d = _decide_raw(facts, analysis)
    if d.choice_index is None:
        return d
    led = _ledger(d)
    found = coverage.gaps(d, analysis, facts, d.fit)
    reason = d.confidence_reason
    if found:
        why = "; ".join(g.detail for g in found)
        before = led.value
        kept = record_kept(d)
        led.cap(COVERAGE_CAP * kept, stage="coverage", reason=why,
                inputs={"cap": COVERAGE_CAP, "record_factor": kept,
                        **{f"{g.gap}_{i}": g.detail for i, g in enumerate(found)}})
        if led.value is not None and before is not None and led.value < before:
            reason = f"{reason}; the decision did not account for all of the question ({why})"
    raw = led.value if led.value is not None else d.confidence
    p = calibration.into(led, d.method)
    d = d.model_copy(update={
        "confidence": p, "raw_confidence": raw, "confidence_steps": led.steps,
        "confidence_reason": f"{reason} ({calibration.label(d.method)}: raw {raw:.3f})"})
    return within_competence(d, analysis)


NOT_A_CHECK = ("guess", "none")


def within_competence(d: Decision, a: QuestionAnalysis) -> Decision:
    """The calibrated decision, its confidence shrunk toward chance as far as the question lies outside what
    its deciding check declares it is for (audiomind.reasoning.competence); the reason says so when it changes."""
    from audiomind.reasoning import competence

    if d.method in NOT_A_CHECK or d.choice_index is None:
        return d
    fam = competence.familiarity(a.question, d.method)
    led = _ledger(d)
    p = competence.shrink_into(led, len(a.choices), fam)
    if p >= d.confidence:
        return d.model_copy(update={"familiarity": fam, "confidence_steps": led.steps})
    near = f"nearest {fam.nearest!r} at {fam.similarity:.2f}" if fam.nearest else "it declares no domain"
    why = (f"the question is unlike those {d.method} is for ({near}; {fam.bank}): "
           f"confidence {d.confidence:.2f} shrunk toward chance")
    return d.model_copy(update={"confidence": p, "familiarity": fam, "confidence_steps": led.steps,
                                "confidence_reason": f"{d.confidence_reason}; {why}"})


def _decide_raw(facts: Facts, analysis: QuestionAnalysis) -> Decision:
    """The decision and its raw confidence: the evidence stage and, where checks conflict, the agreement
    stage."""
    if not analysis.choices:
        led = ConfidenceLedger()
        led.set(0.0, stage="evidence", reason="free-text question: no choice to be confident in")
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
    return combine(results, analysis, facts)


COVERAGE_CAP = 0.45
"""The most raw confidence a decision keeps when it left part of the question unaccounted for (coverage), on
the scale of the check's claim: the cap applied is COVERAGE_CAP x the deciding check's record factor, so that a
gap holds every check at the same share of what it could claim."""
AGREEMENT_FACTOR = 0.55
"""What a decision keeps of its raw confidence when the evidence conflicts: the deciding check supports more
than one choice, another fitting check supports another choice, or more than one choice holds a step's value."""
GUESS_NARROWED_BONUS = 0.15  # an admitted guess: chance plus this when some choices were ruled out


def record_kept(d: Decision) -> float:
    """The record factor of the decision's evidence step (1 without one)."""
    ev = d.confidence_steps[0] if d.confidence_steps else None
    factor = ev.parameters.inputs.get("record_factor", 1.0) if ev is not None and ev.stage == "evidence" else 1.0
    return float(factor) if isinstance(factor, float | int) else 1.0


def from_step(outcome: StepOutcome, results: list[VerifierResult], a: QuestionAnalysis, facts: Facts) -> Decision:
    """The answer the step executor derived: the choice holding the derived value."""
    best = max(range(len(a.choices)), key=lambda i: outcome.supports[i])
    led = ConfidenceLedger()
    reasons = [f"the step {outcome.step.kind} decides ({outcome.reason})"]
    check = f"step:{outcome.step.kind}"
    factor, record, table, sha = records.of(check)
    led.product([outcome.reliability, factor], stage="evidence", reason=reasons[0] + _record_note(factor, record),
                table=table, sha256=sha,
                inputs={"check": check, "reliability": outcome.reliability, "record": record,
                        "record_factor": factor})
    if sum(1 for s in outcome.supports if s >= 0.5) > 1:
        reasons.append("more than one choice holds the derived value")
        led.multiply(AGREEMENT_FACTOR, stage="agreement", reason=reasons[-1])
    if facts.failed:
        reasons.append("tools failed: " + ", ".join(facts.failed))
    return Decision(choice_index=best, confidence=led.value or 0.0, method=f"step:{outcome.step.kind}",
                    rationale=f"{outcome.reason}; so {a.choices[best]!r}", confidence_reason="; ".join(reasons),
                    cited_evidence_ids=outcome.evidence_ids, confidence_steps=led.steps,
                    scores=[round(s, 3) for s in outcome.supports], verifiers=results)


def _guess(n_open: int, n: int, why: str) -> ConfidenceLedger:
    """An admitted guess's evidence stage: chance among the open choices (at least two: ruling out every choice
    but one by contradictions is no certainty, the contradictions being fallible too), plus GUESS_NARROWED_BONUS
    when the evidence ruled some out."""
    led = ConfidenceLedger()
    bonus = GUESS_NARROWED_BONUS if n_open < n else 0.0
    among = max(2, n_open) if n > 1 else 1
    led.chance(among, stage="evidence", bonus=bonus, reason=f"a guess ({why}): chance among the {n_open} "
               "choice(s) left open" + (" (counted as two)" if among > n_open else "")
               + (f", plus {bonus} for those ruled out" if bonus else ""))
    return led


def step_not_taken(results: list[VerifierResult], a: QuestionAnalysis, facts: Facts) -> Decision:
    """The question asks for a step the executor could not take on this evidence: an admitted guess. A literal
    match of what was heard is no support for a derived answer."""
    frame = a.frame
    assert frame is not None
    step = frame.blocking_step or next(s for s in frame.steps if s.kind != "hypothetical") if frame.steps else None
    n = len(a.choices)
    usable = [r for r in results if not literal(r.name)]
    scores = [sum(r.fit * r.reliability * r.verdicts[i].support for r in usable) for i in range(n)]
    heard = {i for r in results if literal(r.name) for i, v in enumerate(r.verdicts) if v.support >= 0.5}
    open_ = [i for i in range(n) if i not in heard] or list(range(n))
    pick = max(open_, key=lambda i: scores[i])
    kind = step.kind if step else "a derivation"
    why = (f"the question asks for {kind} ({step.cue!r})" if step else "the question asks for a derived answer")
    why += (", a step the policy cannot take" if step and not step.executable
            else ", and the evidence does not hold what that step needs")
    if heard:
        why += f"; what was heard literally ({', '.join(repr(a.choices[i]) for i in sorted(heard))}) is no support"
    led = ConfidenceLedger()
    led.chance(len(open_), stage="evidence", reason=f"a guess: chance among the {len(open_)} choice(s) left open")
    return Decision(choice_index=pick, confidence=led.value or 0.0, method="guess",
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
    # backs the chosen choice too, among others (a check that holds of every choice narrows nothing)
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
        led = _guess(len(open_), n, "no evidence supports any choice")
        ids = [i for r in results for i in r.evidence_ids]
        return Decision(choice_index=pick, confidence=led.value or 0.0, method="guess",
                        rationale=f"{why}; {a.choices[pick]!r} is the remaining guess. Evidence: {table or 'none'}",
                        confidence_reason=why, cited_evidence_ids=list(dict.fromkeys(ids)), confidence_steps=led.steps,
                        scores=[round(s, 3) for s in scores], verifiers=results)

    support = lead.verdicts[best].support
    reasons = [f"{lead.name} decides (fit {lead.fit:.2f}, reliability {lead.reliability:.2f})"]
    led = ConfidenceLedger()
    factor, record, table, sha = records.of(lead.name)
    led.product([lead.reliability, factor, fit_term(lead.fit), support_term(support)], stage="evidence",
                reason=reasons[0] + f": reliability x record x fit term x support term (support {support:.2f})"
                + _record_note(factor, record), table=table, sha256=sha,
                inputs={"check": lead.name, "reliability": lead.reliability, "record": record,
                        "record_factor": factor, "fit": lead.fit, "support": support})
    conflicts = []
    if sum(1 for v in lead.verdicts if v.support >= 0.5) > 1:
        conflicts.append(f"{lead.name} supports more than one choice")
    if rivals:
        conflicts.append(", ".join(r.name for r in rivals) + " support another choice")
    if conflicts:
        reasons.append("the evidence conflicts: " + "; ".join(conflicts))
        led.multiply(AGREEMENT_FACTOR, stage="agreement", reason=reasons[-1])
    if facts.failed:
        reasons.append("tools failed: " + ", ".join(facts.failed))
    rationale = f"{lead.reason}; so {a.choices[best]!r}"
    cited = list(dict.fromkeys(lead.evidence_ids + [i for r in decisive if r is not lead for i in r.evidence_ids]))
    return Decision(choice_index=best, confidence=led.value or 0.0, method=lead.name, rationale=rationale,
                    confidence_reason="; ".join(reasons), cited_evidence_ids=cited, confidence_steps=led.steps,
                    scores=[round(s, 3) for s in scores], verifiers=results, fit=lead.fit)


def _record_note(factor: float, record: str) -> str:
    return f"; its development record {record} keeps {factor:.2f} of its claim" if factor < 1.0 else ""


def fit_term(fit: float) -> float:
    """How much of the deciding check's reliability a question of this fit keeps: 0.4 + fit, at most 1."""
    return min(1.0, 0.4 + fit)


def support_term(support: float) -> float:
    """How much a verdict of this support keeps: 0.5 + support / 2, at most 1 (full support keeps all)."""
    return min(1.0, 0.5 + 0.5 * support)
