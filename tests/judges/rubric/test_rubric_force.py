"""A rubric's p from its items (audiomind/judges/rubric/force.py): what was not verified holds p toward 0.5, a
verified contradiction takes back the held share only as far as its check kind's measured reliability (its force)
goes, and the bounded-slope table does the rest."""

from __future__ import annotations

import pytest

from audiomind.judges.rubric import force
from audiomind.judges.rubric.force import ItemEvidence as I


def _rubrics(kind: str, on_negatives: int, on_positives: int, extra: int = 40) -> list[tuple[bool, list[I]]]:
    """Contradictions of `kind` on so many negative / positive rubrics, plus `extra` negatives contradicted by a
    'sound' item and as many clean positives (so the base rate of negatives is known)."""
    out = [(False, [I(kind, 0.05, True), I("sound", 0.95, True)])] * on_negatives
    out += [(True, [I(kind, 0.05, True), I("sound", 0.95, True)])] * on_positives
    out += [(False, [I("sound", 0.05, True)])] * extra + [(True, [I("sound", 0.95, True)])] * (extra + on_negatives)
    return out


def _fit(rubrics, **kw):
    return force.fit_forces(rubrics, name="t", fitted_on=["t"], **kw)


def test_a_kind_whose_contradictions_are_always_right_has_full_force_and_a_coin_has_none():
    sure = _fit(_rubrics("gender", 200, 0), prior_cases=0.0)
    assert sure.force("gender") == 1.0
    base = sure.base_negative
    assert 0.3 < base < 0.7
    # contradictions from 'count' right exactly as often as any rubric is wrong (a third): they carry nothing
    coin = _fit([(False, [I("count", 0.05, True)])] * 20 + [(True, [I("count", 0.05, True)])] * 40,
                prior_cases=0.0)
    assert coin.base_negative == pytest.approx(1 / 3, abs=1e-3) and coin.force("count") == 0.0
    # ... and half way between chance and always right, half the force
    half = _fit([(False, [I("count", 0.05, True)])] * 40 + [(True, [I("count", 0.05, True)])] * 20
                + [(True, [I("sound", 0.95, True)])] * 60, prior_cases=0.0)
    assert half.base_negative == pytest.approx(1 / 3, abs=1e-3) and half.force("count") == pytest.approx(0.5, abs=1e-3)


def test_a_kind_seen_rarely_gets_about_the_pooled_force_and_an_unseen_kind_the_default():
    t = _fit(_rubrics("order", 0, 1))  # one false contradiction
    assert 0.0 < t.force("order") < t.default_force
    firm = _fit(_rubrics("order", 0, 1), prior_cases=20.0)
    assert t.force("order") < firm.force("order") < firm.default_force  # more pseudo-cases: nearer the pool
    assert firm.default_force - firm.force("order") < 0.1
    assert t.force("never seen") == t.default_force
    strict = _fit(_rubrics("order", 0, 1), prior_cases=0.0)
    assert strict.force("order") == 0.0 < t.force("order")


def _table(**forces: float) -> force.ForceTable:
    return force.ForceTable(name="t", method="t", base_negative=0.5, pooled_precision=0.75, default_force=0.5,
                            kinds={k: force.KindForce(contradictions=10, on_negatives=5, precision=0.5, force=f)
                                   for k, f in forces.items()})


def test_the_hold_follows_coverage_and_the_contradictions_force():
    t = _table(gender=1.0, sound=0.2)
    one_of_five = [I("sound", 0.98, True)] + [I("other", 0.5, False)] * 4
    ev = force.evidence_of(one_of_five, t)
    assert ev.coverage == pytest.approx(0.2) and ev.hold == pytest.approx(0.2) and ev.contradiction_force == 0.0
    for table_p in (0.0, 0.5, 1.0):
        assert 0.4 <= force.probability(ev, table_p) <= 0.6  # one item of five verified: never decisive
    strong = force.evidence_of([I("gender", 0.02, True)] + [I("other", 0.5, False)] * 4, t)
    weak = force.evidence_of([I("sound", 0.02, True)] + [I("other", 0.5, False)] * 4, t)
    assert strong.hold == 1.0 and strong.raw == pytest.approx(0.02)  # a sure contradiction keeps its force
    assert weak.hold == pytest.approx(0.2 + 0.8 * 0.2)  # an unreliable one takes back little of the held share
    assert abs(weak.raw - 0.5) < 0.5 * abs(strong.raw - 0.5)
    assert force.probability(strong, 0.01) < force.probability(weak, 0.01)
    full = force.evidence_of([I("sound", 0.95, True), I("gender", 0.98, True)], t)
    assert full.hold == 1.0 and full.raw == pytest.approx((0.95 * 0.98) ** 0.5, abs=1e-6)
    none = force.evidence_of([I("other", 0.5, False)], t)
    assert none.abstain and force.probability(none, 0.9) == 0.5


def test_speech_present_weighs_half_in_the_coverage():
    ev = force.evidence_of([I("speech_present", 0.98, True, 0.5), I("gender", 0.5, False)], _table())
    assert ev.coverage == pytest.approx(0.5 / 1.5)


def test_the_shipped_force_table_loads_names_its_hash_and_is_fitted_on_development_sets():
    import hashlib

    t, sha = force.load_forces()
    assert sha == hashlib.sha256(force.FORCES.read_bytes()).hexdigest()
    assert force.label_of() == f"force {t.name}@{sha[:12]}"
    assert t.fitted_on and all(f.split(":")[0].startswith("v") for f in t.fitted_on)
    assert all(0.0 <= k.force <= 1.0 for k in t.kinds.values())
    for k in t.kinds.values():  # the precision is the shrunk share the table says
        assert k.precision == pytest.approx((k.on_negatives + t.prior_cases * t.pooled_precision)
                                            / (k.contradictions + t.prior_cases), abs=1e-3)
