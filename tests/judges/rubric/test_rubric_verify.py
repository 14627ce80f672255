"""The rule verifier's reading of evidence, on scenes written out by hand (the perception is not the point
here; tests/judges/rubric/test_rubric_judge.py runs it on real audio)."""

from __future__ import annotations

from audiomind.judges import evidence as ev
from audiomind.judges.rubric.decompose import RubricItem
from audiomind.judges.rubric.verify import Scene, verify
from audiomind.reasoning.facts import Facts, Span


def _identity(phrase: str, p: float, heard: str) -> ev.Identity:
    return ev.Identity(phrase=phrase, p=p, verdict=ev._verdict(p), contradiction_label=heard,
                       why=f"against {heard}")


def _scene(phrase: str, identities: list[ev.Identity]) -> Scene:
    bursts = [Span(start_s=0.2 + i, end_s=0.7 + i) for i in range(len(identities))]
    return Scene(facts=Facts(duration_s=4.0), bursts=bursts, sources=[[i] for i in range(len(bursts))],
                 identities={phrase: identities}, owner=[None] * len(bursts), tied=[False] * len(bursts))


def test_a_sound_heard_as_something_else_is_no_firmer_a_no_than_its_weakest_contradiction():
    """A whale's song the tagger hears as 'Cat 0.32' (p = 0.28) beside a clear engine (p = 0.05): the phrase
    is absent only as firmly as the least contradicted sound says; before, any mix of contradicted sounds
    gave a flat 0.05."""
    phrase = "whale song"
    item = RubricItem(id=0, question=f"Is the sound of '{phrase}' present?", attribute="sound_event",
                      evidence=phrase, check={"kind": "sound", "phrase": phrase})
    weak = _scene(phrase, [_identity(phrase, 0.05, "Engine 0.90"), _identity(phrase, 0.28, "Cat 0.32")])
    p, why, verifiable = verify(item, weak)
    assert verifiable and p == 0.28 and "something else" in why, why
    firm = _scene(phrase, [_identity(phrase, 0.05, "Engine 0.90"), _identity(phrase, 0.05, "Siren 0.80")])
    assert verify(item, firm)[0] == 0.05
