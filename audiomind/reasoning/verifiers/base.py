"""What every verifier returns, and the helpers several families share.

A verifier scores *every* choice against the facts it can see: per choice, support in [-1, 1] (+1 the facts
say this choice is true, -1 they contradict it, 0 they say nothing) with a reason, plus how well the question
fits it (`fit`) and how reliable its kind of evidence is (`reliability`).

Every deciding check also declares its *domain* beside its code (`declare`, into the `DOMAINS` registry): what
it does, the claims it may support, those it must not be used for, and a few example question shapes written
from what it measures. The answer step's competence stage (audiomind.reasoning.competence) reads them: a
question unlike a check's declared domain, or closer to what it is not for, does not keep the check's
confidence.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import content, stem
from audiomind.reasoning.facts import Facts
from audiomind.registry import Registry


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
    values: list[str | None] | None = Field(
        default=None, description="each choice as the check reads it: the value of what it measures that the choice "
        "names (None: names none); None for a check that does not read choices as values")

    @property
    def decisive(self) -> bool:
        return any(v.support >= 0.5 for v in self.verdicts)


Verifier = Callable[[Facts, QuestionAnalysis], "VerifierResult | None"]


class Domain(BaseModel):
    """What a deciding check is for, declared as data beside it (the shape of a tool manifest's `function`,
    `supports` and `not_for`, plus example questions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    check: str = Field(description="the check's result name ('count_events') or 'step:KIND'")
    function: str = Field(description="what the check does, one sentence")
    supports: list[str] = Field(description="claims its decision may support")
    not_for: list[str] = Field(default_factory=list, description="claims it must not be used for")
    examples: list[str] = Field(min_length=2, description="question shapes it was written to answer")


DOMAINS: Registry[Domain] = Registry("check domain", group="checks")
"""Check name -> its declared Domain. The built-in checks declare theirs where they are defined; a plugin
adds the domain of a check it brings with `registries.group("checks").register(NAME, Domain(...))`. The
descriptors' checks (`property_*`, `select_*`) are not here: their domain is their vocabulary rows and their
tool's manifest (audiomind.reasoning.competence)."""


def declare(check: str, *, function: str, supports: list[str], not_for: list[str], examples: list[str]) -> Domain:
    """Register the declared domain of `check` (at import of the module that defines it)."""
    d = Domain(check=check, function=function, supports=supports, not_for=not_for, examples=examples)
    DOMAINS.register(check, d)
    return d


def _result(name: str, a: QuestionAnalysis, fit: float, reliability: float, supports: list[float],
            reasons: list[str], reason: str, ids: list[str], values: list[str | None] | None = None) -> VerifierResult:
    return VerifierResult(name=name, fit=round(max(0.0, min(1.0, fit)), 3), reliability=reliability,
                          verdicts=[Verdict(support=round(max(-1.0, min(1.0, s)), 3), reason=r)
                                    for s, r in zip(supports, reasons)],
                          reason=reason, evidence_ids=ids, values=values)


def _label_choice_similarity(labels: list[str], choices: list[str]) -> list[list[float]]:
    """[choice][label]: closeness in meaning (MiniLM cosine) plus 0.25 when they share a word stem."""
    from audiomind.embedded.text import similarity

    if not labels:
        return [[] for _ in choices]
    sims = similarity(choices, labels)
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
