"""Each check's measured record: how often the answers it decided on development sets were right, against what
its evidence claimed. Part of the `evidence` stage: the deciding check's construction reliability x its record
factor x fit term x support term.

A check's construction reliability says how often its kind of evidence is right on the questions it was built
for. Its record says how it did on every development answer it decided, the kinds next to its own included
(the retired blind sets): `right` of `n`, against the mean evidence `claimed` for them. The factor is the
record's accuracy, drawn toward the claim by a prior of `prior_strength` answers, over the claim; at most 1
(a record never raises a claim: the calibration table does that for checks that are right more often than
they claim):

    factor = min(1, ((right + prior_strength x claimed) / (n + prior_strength)) / claimed)

A check without a record keeps factor 1, so a new descriptor answers on its construction reliability until its
answers are measured. The table is data (data/check_records.json), fitted by evals/confidence/fit.py with the
calibration tables (the prior strength chosen by leave-one-set-out Brier score), and named with its sha256 in
every evidence step it changes.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

DATA = Path(__file__).resolve().parent / "data" / "check_records.json"


class CheckRecord(BaseModel):
    n: int = Field(ge=0, description="development answers the check decided")
    right: int = Field(ge=0, description="of them, right")
    claimed: float = Field(gt=0, le=1, description="their mean evidence before the record (reliability x fit "
                           "term x support term)")


class CheckRecords(BaseModel):
    name: str
    method: str
    prior_strength: float = Field(gt=0, description="answers' worth of prior at the claim")
    fitted_on: list[str] = Field(default_factory=list, description="the development runs counted")
    checks: dict[str, CheckRecord] = Field(default_factory=dict)

    def factor(self, check: str) -> float:
        """What the check's record keeps of its claim (1 without a record)."""
        r = self.checks.get(check)
        return 1.0 if r is None else record_factor(r.right, r.n, r.claimed, self.prior_strength)


def record_factor(right: int, n: int, claimed: float, prior_strength: float) -> float:
    """The module docstring's factor."""
    if n <= 0 or claimed <= 0:
        return 1.0
    accuracy = (right + prior_strength * claimed) / (n + prior_strength)
    return min(1.0, accuracy / claimed)


def load(path: Path | None = None) -> tuple[CheckRecords, str]:
    """(the records, the sha256 of the file's bytes) of `path` (default: the installed DATA)."""
    return _load(Path(path or DATA))


@lru_cache(maxsize=4)
def _load(path: Path) -> tuple[CheckRecords, str]:
    raw = path.read_bytes()
    return CheckRecords.model_validate(json.loads(raw)), hashlib.sha256(raw).hexdigest()


def of(check: str) -> tuple[float, str, str, str]:
    """(factor, 'right/n' or 'none', table name, sha256) for the deciding check `check`."""
    t, sha = load()
    r = t.checks.get(check)
    return t.factor(check), (f"{r.right}/{r.n}" if r is not None else "none"), t.name, sha


def write(path: Path, records: CheckRecords) -> str:
    """Write the records as JSON, check they load, and return the sha256."""
    Path(path).write_text(records.model_dump_json(indent=2) + "\n", encoding="utf-8")
    _load.cache_clear()
    return load(Path(path))[1]
