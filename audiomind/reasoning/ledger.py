"""The confidence ledger: every stage between the evidence and the printed confidence, as typed steps.

An answer's confidence is made by a few operations on one running value: it starts from the evidence (a
product of the deciding check's reliability, fit and support; a step's reliability; chance for a guess; a
model's reported value), is multiplied, capped and clamped in the raw score space, mapped through a
calibration table into a probability, capped again and shrunk toward chance. Each operation is applied here,
by `ConfidenceLedger`, which records it as a `ConfidenceStep` (stage, space, op, parameters, input, output,
reason); code calls `ledger.cap(0.45, stage=..., reason=...)`, never `min(x, 0.45)`.

`recompute(steps)` re-applies the recorded operations from the first one, with the same function (`apply`)
that applied them, so the same steps on the same machine give the printed number exactly; the trace audit
compares with a tolerance of 1e-9 (`TOLERANCE`) so that a trace read on another machine is judged the same.
docs/CONFIDENCE.md lists the stages in the order they apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from audiomind.state import ConfidenceParameters, ConfidenceStep

Space = Literal["raw", "calibrated"]
Op = Literal["set", "product", "chance", "multiply", "cap", "clamp", "map", "shrink"]
STAGES = ("evidence", "agreement", "coverage", "calibration", "competence", "tool_failure")
"""Every stage a confidence passes through, in order (docs/CONFIDENCE.md). A step naming another is refused:
a new kind of evidence or doubt joins one of these, measured, never a stage of its own."""
TOLERANCE = 1e-9
"""How far a recomputed confidence may lie from the printed one (float rounding across machines)."""


class LedgerError(ValueError):
    """A step that cannot be applied (its op lacks a parameter it needs)."""


def _need(value: float | None, op: str, name: str) -> float:
    if value is None:
        raise LedgerError(f"a {op} step needs its {name}")
    return value


def _interpolate(knots: Sequence[tuple[float, float]], x: float) -> float:
    from audiomind.calibration import interpolate

    return interpolate([(float(a), float(b)) for a, b in knots], x)


def apply(op: str, p: ConfidenceParameters, x: float | None) -> float:
    """The value `op` with parameters `p` makes of `x` (the running value; None before the first step)."""
    if op == "set":
        v = _need(p.value, op, "value")
    elif op == "product":
        if not p.factors:
            raise LedgerError("a product step needs its factors")
        v = p.factors[0]
        for f in p.factors[1:]:
            v = v * f
    elif op == "chance":
        v = 1.0 / max(1, int(_need(p.choices, op, "choices"))) + (p.bonus or 0.0)
    else:
        if x is None:
            raise LedgerError(f"a {op} step needs a value before it")
        if op == "multiply":
            v = x * _need(p.factor, op, "factor")
        elif op == "cap":
            v = min(x, _need(p.bound, op, "bound"))
        elif op == "clamp":
            v = max(_need(p.low, op, "low"), min(_need(p.high, op, "high"), x))
        elif op == "map":
            if not p.knots:
                raise LedgerError("a map step needs the table's knots")
            v = max(0.0, min(1.0, _interpolate(p.knots, x)))
        elif op == "shrink":
            target, weight = _need(p.target, op, "target"), _need(p.weight, op, "weight")
            v = x if x <= target else target + (x - target) * weight
        else:
            raise LedgerError(f"unknown op {op!r}")
    if p.digits is not None:
        v = round(v, p.digits)
    if op == "shrink" and x is not None:
        v = min(x, v)  # a shrink never raises a confidence (nor does its rounding)
    return v


def recompute(steps: Sequence[ConfidenceStep]) -> float | None:
    """The confidence the steps make, re-applied in order from the first step's input (None: no steps)."""
    if not steps:
        return None
    x = steps[0].input
    for s in steps:
        x = apply(s.op, s.parameters, x)
    return x


def problems(steps: Sequence[ConfidenceStep], printed: float | None) -> list[str]:
    """What does not add up in a ledger against the printed confidence: a step whose input is not the output
    before it, a step whose output its op does not give, a recomputed value other than the printed one."""
    out: list[str] = []
    if not steps:
        return ["the answer has a confidence but no ledger"] if printed is not None else []
    if printed is None:
        return ["the ledger has steps but the answer prints no confidence"]
    prev: float | None = steps[0].input
    for i, s in enumerate(steps):
        if i and (s.input is None or prev is None or abs(s.input - prev) > TOLERANCE):
            out.append(f"step {i} ({s.stage}) starts from {s.input}, not from the {prev} before it")
        try:
            got = apply(s.op, s.parameters, s.input)
        except LedgerError as exc:
            out.append(f"step {i} ({s.stage}): {exc}")
            return out
        if abs(got - s.output) > TOLERANCE:
            out.append(f"step {i} ({s.stage}): {s.op} of {s.input} gives {got}, not the recorded {s.output}")
        prev = s.output
    total = recompute(steps)
    if total is None or abs(total - printed) > TOLERANCE:
        out.append(f"the ledger recomputes to {total}, the answer prints {printed}")
    return out + _provenance(steps)


def _provenance(steps: Sequence[ConfidenceStep]) -> list[str]:
    """A map step that names a calibration table this installation has (the same name and sha256) but whose
    knots are not that table's. A table since refitted (another sha256) cannot be checked and is not flagged."""
    from audiomind import calibration

    known: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for use in calibration.TABLES:
        try:
            t, sha = calibration.load(calibration.path_of(use))
        except (OSError, ValueError):
            continue
        known[(t.name, sha)] = [(float(a), float(b)) for a, b in t.knots]
    out = []
    for i, s in enumerate(steps):
        if s.op != "map" or s.parameters.table is None or s.parameters.sha256 is None:
            continue
        knots = known.get((s.parameters.table, s.parameters.sha256))
        if knots is not None and [(float(a), float(b)) for a, b in s.parameters.knots or []] != knots:
            out.append(f"step {i} ({s.stage}) names table {s.parameters.table}@{s.parameters.sha256[:12]} but its "
                       "knots are not that table's")
    return out + _record_provenance(steps)


def _record_provenance(steps: Sequence[ConfidenceStep]) -> list[str]:
    """An evidence product that names the check records this installation has (the same name and sha256) but
    whose record factor is not the one those records give its check. Records since refitted are not flagged."""
    from audiomind.reasoning import records

    try:
        recs, sha = records.load()
    except (OSError, ValueError):
        return []
    out = []
    for i, s in enumerate(steps):
        p = s.parameters
        if s.op != "product" or (p.table, p.sha256) != (recs.name, sha):
            continue
        check, factor = p.inputs.get("check"), p.inputs.get("record_factor")
        if not isinstance(check, str) or not isinstance(factor, float | int):
            out.append(f"step {i} ({s.stage}) names records {recs.name}@{sha[:12]} but not its check and factor")
        elif abs(float(factor) - recs.factor(check)) > TOLERANCE or float(factor) not in (p.factors or []):
            out.append(f"step {i} ({s.stage}) names records {recs.name}@{sha[:12]} but its factor for {check} is "
                       f"{factor}, not {recs.factor(check):.6g}")
    return out


class ConfidenceLedger:
    """A running confidence and the steps that made it. Each method applies one operation, records it as a
    step and returns the new value. Built on an answer's steps it continues them (the list is copied)."""

    def __init__(self, steps: Sequence[ConfidenceStep] = ()):
        self.steps: list[ConfidenceStep] = list(steps)

    @property
    def value(self) -> float | None:
        return self.steps[-1].output if self.steps else None

    @property
    def space(self) -> Space:
        return self.steps[-1].space if self.steps else "raw"

    def _step(self, op: Op, params: ConfidenceParameters, *, stage: str, reason: str,
              space: Space | None = None) -> float:
        if stage not in STAGES:
            raise LedgerError(f"unknown confidence stage {stage!r}; the stages are {', '.join(STAGES)}")
        x = self.value
        out = apply(op, params, x)
        self.steps.append(ConfidenceStep(stage=stage, space=space or self.space, op=op,
                                         parameters=params, input=x, output=out, reason=reason))
        return out

    # -- where a confidence starts
    def set(self, value: float, *, stage: str, reason: str, space: Space = "raw",
            inputs: dict[str, float | str] | None = None) -> float:
        return self._step("set", ConfidenceParameters(value=value, inputs=inputs or {}), stage=stage, reason=reason,
                          space=space)

    def product(self, factors: list[float], *, stage: str, reason: str, table: str | None = None,
                sha256: str | None = None, inputs: dict[str, float | str] | None = None) -> float:
        """The factors multiplied; `table`/`sha256` name the table one of them was read from (a check's record)."""
        params = ConfidenceParameters(factors=factors, table=table, sha256=sha256, inputs=inputs or {})
        return self._step("product", params, stage=stage, reason=reason, space="raw")

    def chance(self, choices: int, *, stage: str, reason: str, bonus: float = 0.0) -> float:
        return self._step("chance", ConfidenceParameters(choices=choices, bonus=bonus), stage=stage, reason=reason,
                          space="raw")

    # -- what changes it
    def multiply(self, factor: float, *, stage: str, reason: str,
                 inputs: dict[str, float | str] | None = None) -> float:
        return self._step("multiply", ConfidenceParameters(factor=factor, inputs=inputs or {}), stage=stage,
                          reason=reason)

    def cap(self, bound: float, *, stage: str, reason: str, digits: int | None = None,
            inputs: dict[str, float | str] | None = None) -> float:
        return self._step("cap", ConfidenceParameters(bound=bound, digits=digits, inputs=inputs or {}), stage=stage,
                          reason=reason)

    def clamp(self, low: float, high: float, *, stage: str, reason: str, digits: int | None = None) -> float:
        return self._step("clamp", ConfidenceParameters(low=low, high=high, digits=digits), stage=stage,
                          reason=reason)

    def map(self, knots: list[tuple[float, float]], *, table: str, sha256: str, stage: str, reason: str,
            digits: int | None = None) -> float:
        """Through a calibration table: the value becomes a probability (the calibrated space)."""
        params = ConfidenceParameters(knots=[(float(a), float(b)) for a, b in knots], table=table, sha256=sha256,
                                      digits=digits)
        return self._step("map", params, stage=stage, reason=reason, space="calibrated")

    def shrink(self, weight: float, target: float, *, stage: str, reason: str, digits: int | None = None,
               table: str | None = None, sha256: str | None = None,
               inputs: dict[str, float | str] | None = None) -> float:
        """Toward `target`: only `weight` of the part above it stands (at or below it unchanged; never raised)."""
        params = ConfidenceParameters(weight=weight, target=target, digits=digits, table=table, sha256=sha256,
                                      inputs=inputs or {})
        return self._step("shrink", params, stage=stage, reason=reason)
