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


def test_a_sound_that_must_be_missing_is_scored_as_the_other_side_of_its_presence():
    phrase = "music"
    item = RubricItem(id=0, question="Is the sound of 'music' absent?", attribute="sound_event", evidence="no music",
                      check={"kind": "absent", "phrase": phrase})
    coins = _scene(phrase, [_identity(phrase, 0.05, "Coin (dropping) 0.80")])
    p, why, verifiable = verify(item, coins)
    assert verifiable and p == 0.95 and "presence" in why
    unclear = _scene(phrase, [ev.Identity(phrase=phrase, p=0.5, verdict="unconfirmed", why="nothing specific")])
    unclear.owner = [phrase]
    p, why, verifiable = verify(item, unclear)
    assert p == 0.5 and not verifiable  # what cannot be told present cannot be told absent either


def test_unquoted_speech_starts_at_its_first_word_not_at_voice_activity_on_a_laugh_before_it():
    """Voice activity fires on a laugh (0.4-2.0 s) and runs into the words (from 2.3 s): 'a laugh, then a
    woman speaks' would have put the speech first."""
    from audiomind.judges.rubric.verify import locate
    from audiomind.reasoning.facts import SpeechFact, TranscriptFact, Word

    facts = Facts(duration_s=5.0,
                  speech=SpeechFact(source="vad", segments=[Span(start_s=0.4, end_s=4.6)], speech_s=4.2),
                  transcript=TranscriptFact(source="asr", text="god morgon allihopa",
                                            words=[Word(text="god", start_s=2.3, end_s=2.6),
                                                   Word(text="morgon", start_s=2.6, end_s=3.1),
                                                   Word(text="allihopa", start_s=3.2, end_s=3.9)]))
    placed = locate({"kind": "speech", "nth": 0}, Scene(facts=facts))
    assert placed.onset_s == 2.3 and "first recognised word" in placed.how
