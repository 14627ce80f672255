"""Competence from declared domains (audiomind.reasoning.competence): a deciding check keeps its calibrated
confidence for questions like those it declares it answers, and only for those. The bank is derived at load
time from the checks' declarations and named by their sha256; its anchors come from the declarations' own
similarities; a question of another kind, or nearer what a check is not for, gets a confidence near chance,
with a reason naming the check and the bank."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from audiomind.reasoning import competence
from audiomind.reasoning.competence import Declaration


def test_the_bank_is_derived_from_the_declarations_and_named_by_their_sha256():
    from audiomind.reasoning.property_facts import vocabulary
    from audiomind.reasoning.verifiers import DOMAINS

    b = competence.bank()
    decls = competence.declarations()
    sha = hashlib.sha256(competence.declaration_text(decls).encode()).hexdigest()
    assert b.sha256 == sha and b.name == f"declared-{sha[:12]}" and competence.label() == b.name
    checks = {d.check for d in b.declarations}
    assert set(DOMAINS.names()) <= checks
    voc = vocabulary()
    assert {f"property_{r.name}" for r in voc.property} | {f"select_{s.name}" for s in voc.selector} <= checks
    assert {e.text for e in b.entries} == {t for d in decls for t in [*d.positives(), *d.not_for]}


def test_a_vocabulary_row_declares_its_examples_values_and_its_tools_manifest():
    from audiomind.tools.manifest import ToolRegistry

    band = next(d for d in competence.bank().declarations if d.check == "property_band")
    m = ToolRegistry.load().get("band_limits")
    assert band.examples and band.function == m.function and set(m.not_for) == set(band.not_for)
    assert set(m.supports) < set(band.supports) and any("telephone" in s for s in band.supports)


def test_any_change_to_a_declaration_changes_the_banks_sha256():
    decls = competence.declarations()
    changed = [d.model_copy(update={"examples": [*d.examples, "How many ducks are there?"]}) if i == 0 else d
               for i, d in enumerate(decls)]
    text = competence.declaration_text
    assert hashlib.sha256(text(changed).encode()).digest() != hashlib.sha256(text(decls).encode()).digest()


def test_the_anchors_come_from_the_declarations_own_similarities():
    """Two checks, two examples each, on unit vectors with known cosines: `familiar` is the (check-weighted)
    10th percentile of each example's similarity to its own check's nearest other text, the point of chance
    the median similarity between examples of different checks."""
    def unit(angle: float) -> np.ndarray:
        v = np.zeros(384, np.float32)
        v[0], v[1] = np.cos(angle), np.sin(angle)
        return v

    decls = [Declaration(check="a", source="t", function="fa", supports=[], not_for=[], examples=["a1", "a2"]),
             Declaration(check="b", source="t", function="fb", supports=[], not_for=[], examples=["b1", "b2"])]
    vec = {"a1": unit(0.0), "a2": unit(0.3), "fa": unit(0.1), "b1": unit(1.2), "b2": unit(1.4), "fb": unit(1.3)}
    familiar, width = competence.anchors(decls, vec)
    own = sorted([np.cos(0.1), np.cos(0.2), np.cos(0.1), np.cos(0.1)])
    assert familiar == pytest.approx(own[0], abs=1e-3)
    cross = np.median([np.cos(x) for x in (1.2, 1.4, 0.9, 1.1)] * 2)
    assert familiar - width == pytest.approx(cross, abs=1e-3)
    b = competence.bank()
    assert 0.0 < b.familiar - b.width < b.familiar < 1.0


def test_a_new_wording_of_a_declared_kind_keeps_its_confidence():
    for q, check in (("How many times does the horn sound?", "count_events"),
                     ("What is the pace of the drumming in BPM?", "tempo"),
                     ("Is the recording made over a phone line?", "property_band")):
        fam = competence.familiarity(q, check)
        assert fam.factor == 1.0, fam
        assert competence.shrink(0.95, 4, fam) == pytest.approx(0.95, abs=1e-9)


def test_a_question_of_another_kind_is_shrunk_toward_chance():
    fam = competence.familiarity("Which of the four suspects has an alibi for the night of the theft?",
                                 "loudness_trend")
    assert fam.factor == 0.0 and fam.nearest is not None
    assert competence.shrink(0.95, 4, fam) == pytest.approx(0.25)
    assert competence.shrink(0.2, 4, fam) == pytest.approx(0.2, abs=1e-9)  # at or below chance: unchanged


def test_a_question_nearer_what_a_check_is_not_for_is_shrunk():
    """A count of barks names a sound, so the tag check may decide it, but a count is what the tag check
    declares it is not for; two knocks compared are what the loudness-trend check is not for. What stands is
    cut by the not_for's lead, to nothing at NOT_FOR_MARGIN."""
    for q, check, nf in (("How many times does the dog bark?", "tag_category", "how many times something happens"),
                         ("Is the second knock louder than the first?", "loudness_trend",
                          "which of two sounds is louder")):
        fam = competence.familiarity(q, check)
        assert fam.not_for == nf and fam.not_for_lead > 0 and fam.factor < 0.5, fam
    knock = competence.familiarity("Is the second knock louder than the first?", "loudness_trend")
    assert knock.not_for_lead >= competence.NOT_FOR_MARGIN and knock.factor == 0.0
    assert competence.familiarity("How many times does the dog bark?", "count_events").factor == 1.0
    assert competence.familiarity("Is the second knock louder than the first?", "compare_loudness").factor == 1.0


def test_a_literal_match_keeps_its_confidence_for_questions_about_what_was_said_only():
    """Questions of my own wording: what was said keeps the literal match's confidence; what follows from what
    was said does not (the words the evidence does not account for cap it, the competence stage shrinks it)."""
    from audiomind.language.analysis import analyse
    from audiomind.reasoning.answer import decide_from
    from audiomind.reasoning.facts import Facts, TranscriptFact

    heard = Facts(duration_s=4.0, transcript=TranscriptFact(
        text="Your table is booked for seven, and the chef recommends the mushroom risotto.", evidence_ids=["e1"]))
    said = decide_from(heard, analyse("Which dish does the chef recommend?",
                                      ["the lamb stew", "the mushroom risotto", "the fish soup"], []))
    assert said.choice_index == 1 and said.confidence is not None and said.confidence >= 0.7, said.confidence_reason
    follows = decide_from(heard, analyse("What would the guests most probably end up eating, judging by this?",
                                         ["the lamb stew", "the mushroom risotto", "the fish soup"], []))
    assert follows.confidence is not None and follows.confidence < 0.5, follows.confidence_reason
    assert follows.familiarity is not None and follows.familiarity.factor < 1.0
    step = next(s for s in follows.confidence_steps if s.stage == "competence")
    assert step.parameters.table == competence.bank().name and step.parameters.sha256 == competence.bank().sha256
    assert step.parameters.inputs["check"] == "transcript_match" and step.parameters.weight < 1.0
    if step.output < step.input:  # the shrink changed it (a value already at chance stays): the reason says so
        assert "unlike those transcript_match is for" in follows.confidence_reason


def test_a_check_without_a_declared_domain_has_no_established_competence():
    fam = competence.familiarity("How many beeps are there?", "a_check_nobody_built")
    assert fam.factor == 0.0 and fam.nearest is None and fam.similarity == 0.0


def test_every_check_the_answer_step_can_name_declares_a_domain():
    """Every verifier result name and executed step kind has a declaration (a check without one answers at
    chance confidence)."""
    import re
    from pathlib import Path

    from audiomind.language.frames import EXECUTABLE_STEPS
    from audiomind.reasoning.verifiers import DOMAINS

    src = "".join(p.read_text() for p in Path(competence.__file__).parent.joinpath("verifiers").glob("*.py"))
    named = set(re.findall(r'_result\("([a-z_]+)"', src))
    named |= {f"count_{n}" for n in ("events", "speakers", "words", "gaps", "notes")}
    named |= {f"compare_{d}" for d in ("pitch", "loudness", "rate")} | {f"time_{k}" for k in ("duration", "onset",
                                                                                               "offset")}
    named |= {f"step:{k}" for k in EXECUTABLE_STEPS}
    assert named <= set(DOMAINS.names()), named - set(DOMAINS.names())


@pytest.mark.slow
def test_a_measurement_that_answers_another_kind_of_question_is_not_confident(tmp_path):
    """Evenly spaced clicks; 'how are the clicks spaced?' is no question the loudness, tempo or count checks
    declare. Whatever check decides, the answer is not confident and the reason says why."""
    import soundfile as sf

    from audiomind import AudioMind

    sr = 16000
    y = np.zeros(int(sr * 4.0), dtype=np.float32)
    for t in np.arange(0.3, 3.8, 0.5):
        i = int(t * sr)
        y[i:i + 160] = 0.6 * np.sin(2 * np.pi * 1500 * np.arange(160) / sr)
    path = tmp_path / "clicks.wav"
    sf.write(path, y, sr)
    agent = AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path / "traces")
    r = agent.ask(str(path), "How are the clicks spaced in time?",
                  ["evenly, like a metronome", "at random, irregular intervals", "in pairs, two close together"])
    assert r.confidence < 0.5, r.confidence_reason
    if not r.rationale.startswith("[guess]"):
        assert "was built for" in r.confidence_reason and competence.label() in r.confidence_reason


def test_a_verifier_registered_with_its_declared_domain_answers_above_chance():
    """What a plugin's `registries.group("verifiers")` and `group("checks")` reach: a verifier on the registry
    decides, and its declared domain, in the bank derived anew, keeps its answer above chance."""
    from audiomind.language.analysis import analyse
    from audiomind.reasoning.answer import decide_from
    from audiomind.reasoning.facts import Facts
    from audiomind.reasoning.verifiers import DOMAINS, REGISTRY, Domain
    from audiomind.reasoning.verifiers.base import _result
    from audiomind.registry import Registries

    assert Registries().group("verifiers") is REGISTRY and Registries().group("checks") is DOMAINS

    def verify_mains(f, a):
        if not any("Hz" in c for c in a.choices):
            return None
        return _result("mains_hum", a, 0.9, 0.9, [1.0 if c == "50 Hz" else -1.0 for c in a.choices],
                       [""] * len(a.choices), "a hum at 50 Hz and its harmonics", [])

    REGISTRY.register("mains_hum", verify_mains)
    DOMAINS.register("mains_hum", Domain(
        check="mains_hum", function="measures the frequency of an electrical mains hum",
        supports=["the frequency of a mains hum"], not_for=["the pitch of a musical note"],
        examples=["What frequency is the mains hum?", "Is the hum at 50 or 60 Hz?", "How fast does the buzz cycle?"]))
    competence._derived.cache_clear()
    try:
        d = decide_from(Facts(duration_s=3.0), analyse("At what frequency does the electrical hum sit?",
                                                       ["50 Hz", "60 Hz"], []))
        assert d.method == "mains_hum" and d.choice_index == 0, d.rationale
        assert d.confidence is not None and d.confidence > 0.5, d.confidence_reason
        step = next(s for s in d.confidence_steps if s.stage == "competence")
        assert step.parameters.table == competence.bank().name and step.parameters.weight == 1.0
        assert any(x.check == "mains_hum" for x in competence.bank().declarations)
    finally:
        REGISTRY.unregister("mains_hum")
        DOMAINS.unregister("mains_hum")
        competence._derived.cache_clear()
