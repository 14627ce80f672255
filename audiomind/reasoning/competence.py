"""Competence from what a check declares: its confidence holds for questions like those it says it answers.

A deciding check (a verifier's result, an executed step `step:KIND`, a descriptor's `property_NAME` or
`select_NAME`) earned its confidence on the questions it was written for. A question of a kind nobody
described to the policy can reach the same check by a shared word or a similar choice; the check would then
answer with a confidence earned elsewhere. So each check declares its domain as data, and this module judges
a question against it:

- verifiers and executed steps: the `Domain` declared beside their code (audiomind.reasoning.verifiers.base
  `declare`, registry `DOMAINS`): what the check does (`function`), the claims it may support (`supports`),
  those it must not be used for (`not_for`), and a few example question shapes written from what it measures;
- descriptors: their vocabulary rows (lexicon/properties.toml, or a plugin tool manifest's `[vocabulary]`):
  the rows' example questions and the property's value words, with the tool manifest's `function`,
  `supports` and `not_for`.

The *declared bank* is derived from these at load time: the declarations are serialised canonically (JSON,
sorted keys), and the bank's name is `declared-` + the first 12 hex digits of the sha256 of exactly that text;
the ledger's `competence` step records the name and the full sha256 (`table`, `sha256`). Its MiniLM
embeddings are computed once per machine: the embedding disk cache (audiomind.embedded.text) keys them by the
model's weights and the exact list of texts, which the declaration text fixes.

A question's *familiarity* to its deciding check is the cosine similarity to the nearest of the check's
positive texts (its examples, function and supports). At `familiar` and above the calibrated confidence
stands; below, it is shrunk linearly toward chance (1 / number of choices), reaching chance at
`familiar - width`. A question nearer to one of the check's `not_for` texts than to all its positive texts is
one the check declares it does not answer: what stands is further multiplied by 1 - lead / NOT_FOR_MARGIN
(the lead: how much nearer), so a lead of NOT_FOR_MARGIN or more leaves chance. The margin is chosen, not
fitted: on the development sets the not_for texts that named the question's kind led by 0.03-0.23, and three
right answers whose question sat between a positive and a not_for text led by 0.003-0.007 (a tie within what a
rewording moves MiniLM). A check with no declared domain has no established competence: its answers are
shrunk fully.

The anchors are not chosen per failure; they come from the declarations themselves, at load time:

- `familiar`: the 10th percentile, over every declared example of every check (each check weighing the same,
  however many examples it declares), of the example's similarity to the nearest other positive text of its
  own check (leave one out). A question at least as close to a
  check's declarations as nine in ten of the check's own examples are to each other keeps its confidence.
- `familiar - width` (the point of chance): the median similarity between declared examples of different
  checks: how close a question of another check's kind typically comes. A question no closer than that is no
  evidence of competence. (The nearest other check is no anchor: declared domains overlap, so a count of
  notes is as close to a count of beeps as the beeps' own examples are to each other.)
"""

from __future__ import annotations

import functools
import hashlib
import json

import numpy as np
from pydantic import BaseModel, Field

from audiomind.reasoning.ledger import ConfidenceLedger

FAMILIAR_PERCENTILE = 10  # of the own-check (leave-one-out) similarities of the declared examples
UNFAMILIAR_PERCENTILE = 50  # of the similarities between declared examples of different checks
NOT_FOR_MARGIN = 0.05  # a not_for text this much nearer than every positive text leaves chance (docstring)


class Declaration(BaseModel):
    """One check's declared domain, as the bank reads it (the unit the sha256 is taken over)."""

    check: str = Field(description="the deciding check: a verifier's result name, 'step:KIND', 'property_NAME' "
                                   "or 'select_NAME'")
    source: str = Field(description="where it is declared: 'verifier', or the vocabulary row's origin and tool")
    function: str
    supports: list[str]
    not_for: list[str]
    examples: list[str]

    def positives(self) -> list[str]:
        return list(dict.fromkeys([*self.examples, self.function, *self.supports]))


class Entry(BaseModel):
    """One text of the declared bank."""

    check: str
    text: str
    role: str = Field(description="example, function, supports or not_for")


class Bank(BaseModel):
    name: str = Field(description="'declared-' + sha256[:12] of the declaration text")
    sha256: str = Field(description="sha256 of the canonical declaration text the bank was derived from")
    familiar: float = Field(description="similarity at and above which a check's confidence stands")
    width: float = Field(gt=0, description="below `familiar`, the similarity span over which it falls to chance")
    declarations: list[Declaration]
    entries: list[Entry]


class Familiarity(BaseModel):
    """How close a question is to what its deciding check declares, and what that did to the answer."""

    check: str
    similarity: float = Field(description="cosine to the nearest positive declared text of the check (0 when it "
                                          "has none)")
    nearest: str | None = Field(default=None, description="that positive text")
    source: str | None = None
    not_for: str | None = Field(default=None, description="the check's not_for text nearer the question than "
                                                          "every positive text, if any")
    not_for_lead: float = Field(default=0.0, description="how much nearer that not_for text is")
    factor: float = Field(description="share of the confidence above chance that stands (1: all, 0: none)")
    bank: str = Field(description="the bank's name (it carries its sha256)")


def _value_words(values: dict[str, list[str]]) -> str:
    return ", ".join(v.replace("_", " ") for v in values)


def declarations() -> list[Declaration]:
    """Every deciding check's declared domain, in a fixed order (verifiers and steps by name, then the
    vocabulary's rows in file order)."""
    from audiomind.reasoning.property_facts import vocabulary
    from audiomind.reasoning.verifiers import DOMAINS
    from audiomind.tools.manifest import ToolRegistry

    out = [Declaration(check=d.check, source="verifier", function=d.function, supports=list(d.supports),
                       not_for=list(d.not_for), examples=list(d.examples))
           for d in sorted((DOMAINS.get(n) for n in DOMAINS.names()), key=lambda d: d.check)]
    tools = ToolRegistry.load()
    voc = vocabulary()
    rows: list[tuple[str, str, list[str], str]] = [
        (f"property_{r.name}", r.tool, r.question, f"{r.name.replace('_', ' ')}: {_value_words(r.values)}")
        for r in voc.property]
    rows += [(f"select_{s.name}", s.tool, s.question, "") for s in voc.selector]
    for check, tool, questions, values in rows:
        m = tools.get(tool) if tool in tools else None
        supports = ([*m.supports] if m else []) + ([values] if values else [])
        out.append(Declaration(check=check, source=f"vocabulary:{tool}" + ("" if m else " (no manifest)"),
                               function=m.function if m else check.replace("_", " "), supports=supports,
                               not_for=[*m.not_for] if m else [], examples=list(questions)))
    return out


def declaration_text(decls: list[Declaration]) -> str:
    """The canonical text the bank's sha256 is taken over."""
    return json.dumps([d.model_dump() for d in decls], sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _entries(decls: list[Declaration]) -> list[Entry]:
    out: list[Entry] = []
    for d in decls:
        out += [Entry(check=d.check, text=t, role="example") for t in d.examples]
        out += [Entry(check=d.check, text=d.function, role="function")]
        out += [Entry(check=d.check, text=t, role="supports") for t in d.supports]
        out += [Entry(check=d.check, text=t, role="not_for") for t in d.not_for]
    return out


def anchors(decls: list[Declaration], vec: dict[str, np.ndarray]) -> tuple[float, float]:
    """(familiar, width) from the declarations' own similarities (module docstring)."""
    own: list[float] = []
    weight: list[float] = []  # each check counts once, however many examples it declares
    for d in decls:
        mine = list(dict.fromkeys(d.examples))
        for e in mine:
            rest = [t for t in d.positives() if t != e]
            if rest:
                own.append(float(np.max(np.stack([vec[t] for t in rest]) @ vec[e])))
                weight.append(1.0 / len(mine))
    ex = [(d.check, t) for d in decls for t in dict.fromkeys(d.examples)]
    m = np.stack([vec[t] for _, t in ex]) if ex else np.zeros((0, 384), np.float32)
    checks = np.array([c for c, _ in ex])
    other = (m @ m.T)[checks[:, None] != checks[None, :]]
    familiar = _weighted_percentile(own, weight, FAMILIAR_PERCENTILE) if own else 1.0
    unfamiliar = float(np.percentile(other, UNFAMILIAR_PERCENTILE)) if other.size else 0.0
    return round(familiar, 3), round(max(familiar - unfamiliar, 0.05), 3)


def _weighted_percentile(values: list[float], weights: list[float], pct: float) -> float:
    """The value below which `pct` percent of the total weight lies."""
    order = np.argsort(values)
    cum = np.cumsum(np.asarray(weights)[order])
    return float(np.asarray(values)[order][int(np.searchsorted(cum, pct / 100.0 * cum[-1]))])


@functools.lru_cache(maxsize=1)
def _derived() -> tuple[Bank, np.ndarray]:
    from audiomind.embedded.text import embed

    decls = declarations()
    text = declaration_text(decls)
    sha = hashlib.sha256(text.encode()).hexdigest()
    entries = _entries(decls)
    texts = list(dict.fromkeys(e.text for e in entries))
    vecs = embed(texts)
    by_text = dict(zip(texts, vecs))
    familiar, width = anchors(decls, by_text)
    b = Bank(name=f"declared-{sha[:12]}", sha256=sha, familiar=familiar, width=width, declarations=decls,
             entries=entries)
    return b, np.stack([by_text[e.text] for e in entries]) if entries else np.zeros((0, 384), np.float32)


def bank() -> Bank:
    """The declared bank, derived once per process."""
    return _derived()[0]


def label() -> str:
    return bank().name


def _embedded() -> tuple[np.ndarray, tuple[Entry, ...]]:
    """(the bank's embeddings, its entries), row for row."""
    b, vecs = _derived()
    return vecs, tuple(b.entries)


def familiarity(question: str, check: str) -> Familiarity:
    """The familiarity of `question` to the declared domain of `check`."""
    from audiomind.embedded.text import embed

    b = bank()
    vecs, entries = _embedded()
    rows = [i for i, e in enumerate(entries) if e.check == check]
    pos = [i for i in rows if entries[i].role != "not_for"]
    if not pos or not question.strip():
        return Familiarity(check=check, similarity=0.0, factor=0.0, bank=b.name)
    q = embed([question])[0]
    sims = vecs[rows] @ q
    by_row = dict(zip(rows, (float(s) for s in sims)))
    best = max(pos, key=lambda i: by_row[i])
    neg = [i for i in rows if entries[i].role == "not_for"]
    worst = max(neg, key=lambda i: by_row[i]) if neg else None
    lead = max(0.0, by_row[worst] - by_row[best]) if worst is not None else 0.0
    outside = lead > 0.0
    sim = by_row[best]
    factor = float(np.clip((sim - (b.familiar - b.width)) / b.width, 0.0, 1.0))
    factor *= float(np.clip(1.0 - lead / NOT_FOR_MARGIN, 0.0, 1.0))
    src = next((d.source for d in b.declarations if d.check == check), None)
    return Familiarity(check=check, similarity=round(sim, 3), nearest=entries[best].text, source=src,
                       not_for=entries[worst].text if outside and worst is not None else None,
                       not_for_lead=round(lead, 3),
                       factor=round(factor, 3), bank=b.name)


def shrink(p: float, n_choices: int, fam: Familiarity) -> float:
    """`p` with only `fam.factor` of its part above chance (1 / n_choices) kept; at or below chance unchanged
    (the ledger's shrink op, unrounded)."""
    from audiomind.reasoning.ledger import apply
    from audiomind.state import ConfidenceParameters

    return apply("shrink", ConfidenceParameters(weight=fam.factor, target=1.0 / max(1, n_choices)), p)


def shrink_into(ledger: ConfidenceLedger, n_choices: int, fam: Familiarity) -> float:
    """The ledger's confidence shrunk toward chance (1 / n_choices) by `fam.factor`, rounded to 3 places and
    never raised: a `competence` step naming the declared bank and its sha256, with the similarity that set the
    factor."""
    b = bank()
    if fam.nearest is None:
        near = f"{fam.check} declares no domain"
    elif fam.not_for:
        near = f"nearer its not_for {fam.not_for!r} by {fam.not_for_lead:.3f} than its nearest {fam.nearest!r}"
    else:
        near = f"nearest {fam.nearest!r}"
    inputs: dict[str, float | str] = {"check": fam.check, "similarity": fam.similarity, "familiar": b.familiar,
                                      "width": b.width}
    if fam.nearest:
        inputs["nearest"] = fam.nearest
    if fam.not_for:
        inputs["not_for"] = fam.not_for
        inputs["not_for_lead"] = fam.not_for_lead
    return ledger.shrink(fam.factor, 1.0 / max(1, n_choices), stage="competence", digits=3, table=b.name,
                         sha256=b.sha256, inputs=inputs,
                         reason=f"familiarity {fam.similarity:.2f} to {fam.check}'s declared domain ({near}): "
                                f"{fam.factor:.3f} of the part above chance stands")
