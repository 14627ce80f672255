"""Competence as data: a check's confidence holds for questions like the ones it was built for.

The answer step's calibration table was fitted on development kinds, and a deciding check (a verifier or an
executed step) earned its confidence on the questions of those kinds. A question of a kind nobody described
to the policy can reach the same check by a shared word or a similar choice, and the check then answers
with the confidence it earned elsewhere: the confident wrong answers of the blind runs were such cases.

The competence bank (data/competence.json, built by evals/competence/build.py from evals/competence/
kinds.toml) lists, per check, the questions of the kinds it was built for. A decision's *familiarity* is the
MiniLM cosine similarity between its question and the nearest bank question of its deciding check. At
`familiar` and above the calibrated confidence stands; below, it is shrunk linearly toward chance (1 / number
of choices), reaching chance at `familiar - width`. `familiar` is measured by the builder (the 10th
percentile of new wordings of known kinds), so nine in ten new wordings of a kind the policy was built for
keep their confidence. The bank's sha256 is named in every reason it changes, as the calibration table's is.
A check with no bank entry has no established competence: its answers are shrunk fully. The checks of what
was said are in the bank with questions about what was said over every topic (kinds.toml's [said] table), so
a topic of its own does not shrink a question about speech, but a question that asks what follows from what
was said ('what does the reply suggest about ...') is unlike all of them.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from audiomind.reasoning.ledger import ConfidenceLedger

DATA = Path(__file__).resolve().parent / "data" / "competence.json"


class Entry(BaseModel):
    check: str = Field(description="the deciding check: a verifier's result name or 'step:KIND'")
    question: str
    source: str = Field(description="where the question comes from: synthetic/KIND, SET/KIND, lexicon/NAME")


class Bank(BaseModel):
    name: str
    familiar: float = Field(description="similarity at and above which a check's confidence stands")
    width: float = Field(gt=0, description="below `familiar`, the similarity span over which it falls to chance")
    note: str = ""
    entries: list[Entry]


class Familiarity(BaseModel):
    """How close a question is to those its deciding check was built for, and what that did to the answer."""

    check: str
    similarity: float = Field(description="cosine to the nearest bank question of the check (0 when it has none)")
    nearest: str | None = Field(default=None, description="that bank question")
    source: str | None = None
    factor: float = Field(description="share of the confidence above chance that stands (1: all, 0: none)")
    bank: str = Field(description="the bank's name@sha12")


@functools.lru_cache(maxsize=1)
def bank() -> tuple[Bank, str]:
    """(the competence bank, the sha256 of its file)."""
    raw = DATA.read_bytes()
    return Bank.model_validate_json(raw), hashlib.sha256(raw).hexdigest()


def label() -> str:
    b, sha = bank()
    return f"{b.name}@{sha[:12]}"


@functools.lru_cache(maxsize=1)
def _embedded() -> tuple[np.ndarray, tuple[Entry, ...]]:
    from audiomind.embedded.text import embed

    b, _ = bank()
    return embed([e.question for e in b.entries]), tuple(b.entries)


def familiarity(question: str, check: str) -> Familiarity:
    """The familiarity of `question` to the bank questions of `check` (every entry of the check counts)."""
    from audiomind.embedded.text import embed

    b, _ = bank()
    vecs, entries = _embedded()
    rows = [i for i, e in enumerate(entries) if e.check == check]
    if not rows or not question.strip():
        return Familiarity(check=check, similarity=0.0, factor=0.0, bank=label())
    sims = vecs[rows] @ embed([question])[0]
    best = int(np.argmax(sims))
    sim = float(sims[best])
    factor = float(np.clip((sim - (b.familiar - b.width)) / b.width, 0.0, 1.0))
    e = entries[rows[best]]
    return Familiarity(check=check, similarity=round(sim, 3), nearest=e.question, source=e.source,
                       factor=round(factor, 3), bank=label())


def shrink(p: float, n_choices: int, fam: Familiarity) -> float:
    """`p` with only `fam.factor` of its part above chance (1 / n_choices) kept; at or below chance unchanged
    (the ledger's shrink op, unrounded)."""
    from audiomind.reasoning.ledger import apply
    from audiomind.state import ConfidenceParameters

    return apply("shrink", ConfidenceParameters(weight=fam.factor, target=1.0 / max(1, n_choices)), p)


def shrink_into(ledger: ConfidenceLedger, n_choices: int, fam: Familiarity) -> float:
    """The ledger's confidence shrunk toward chance (1 / n_choices) by `fam.factor`, rounded to 3 places and
    never raised: a `shrink` step naming the bank and its sha256, with the similarity that set the factor."""
    b, sha = bank()
    near = f"nearest {fam.nearest!r}" if fam.nearest else f"{fam.check} has no bank questions"
    inputs: dict[str, float | str] = {"check": fam.check, "similarity": fam.similarity, "familiar": b.familiar,
                                      "width": b.width}
    if fam.nearest:
        inputs["nearest"] = fam.nearest
    return ledger.shrink(fam.factor, 1.0 / max(1, n_choices), stage="competence", digits=3, table=b.name,
                         sha256=sha, inputs=inputs,
                         reason=f"familiarity {fam.similarity:.2f} to {fam.check}'s bank ({near}): "
                                f"{fam.factor:.3f} of the part above chance stands")
