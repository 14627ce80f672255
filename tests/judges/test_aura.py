"""AURA offline: the declared rule substitute for the LLM's 3-point score, the hypothesis rewrite, CLAP
skipped with its reason (no weights here), the two normalisations, and the AQEval-style correlation."""

from __future__ import annotations

import pytest

from audiomind.judges.aura import AQRow, aqeval, aura_score, combine, rule_category, rule_hypothesis
from audiomind.judges.clap import clap_status
from audiomind.trace import validate_trace_file


@pytest.mark.parametrize("q,ref,resp,cat", [
    ("Is there a dog barking?", "Yes, a dog barks.", "Yes", 3),
    ("Is there a dog barking?", "Yes, a dog barks.", "No, there is no dog.", 1),
    ("How many beeps are there?", "Three.", "I hear three short beeps.", 3),
    ("How many beeps are there?", "Three.", "There are five beeps.", 1),
    ("What is the speaker's gender?", "Female.", "The speaker is a man.", 1),
    ("What sound can be heard?", "A telephone ringing.", "A phone is ringing repeatedly.", 3),
    ("What sound can be heard?", "A telephone ringing.", "Birds are singing in a forest.", 1),
])
def test_rule_substitute_categories(q, ref, resp, cat):
    got, why, _ = rule_category(q, ref, resp)
    assert got == cat, why


def test_rule_hypothesis_rewrites():
    assert rule_hypothesis("Is there music playing?", "No.") == "There is no music playing."
    assert rule_hypothesis("What animal is making noise?", "A dog") == "A dog is making noise."
    assert rule_hypothesis("What is the speaker's gender?", "The speaker is a man.") == "The speaker is a man."


def test_normalisations():
    assert combine(1.0, 1.0, 0.1, "paper")[1] == pytest.approx(1.0)
    assert combine(0.5, 0.0, 0.1, "paper")[1] == pytest.approx(0.5 / 1.1)
    assert combine(0.0, -1.0, 0.1, "two_threshold")[1] == pytest.approx(0.0)
    assert combine(1.0, 1.0, 0.1, "two_threshold")[1] == pytest.approx(1.0)
    assert combine(0.5, None, 0.1, "paper")[1] == 0.5


def test_aura_offline_skips_clap_with_reason_and_writes_a_trace(rubric_clips, tmp_path, monkeypatch):
    monkeypatch.delenv("AUDIOMIND_CLAP_CKPT", raising=False)
    assert not clap_status().available
    r = aura_score("How many beeps are there?", "Three.", "There are three beeps.", rubric_clips["beeps3"],
                   trace_dir=tmp_path)
    assert r.llm_category == 3 and r.score == 1.0
    assert r.entailment.status == "skipped" and r.entailment.reason
    assert "s_llm" in r.substitutes and r.llm_source.startswith("rules")
    assert [s.number for s in r.steps] == [1, 2, 3, 4]
    assert validate_trace_file(r.trace_path) == []
    two = aura_score("How many beeps are there?", "Three.", "Maybe a few.", None, mode="two_threshold",
                     trace_dir=None, write_trace=False)
    assert two.mode == "two_threshold" and two.trace_path is None and two.score < 1.0


def test_aqeval_correlations_on_constructed_scores():
    rows = [
        AQRow(question="How many beeps are there?", reference="Three.", response="Three beeps.", human=1.0),
        AQRow(question="How many beeps are there?", reference="Three.", response="Five beeps.", human=0.0),
        AQRow(question="What sound is heard?", reference="A telephone ringing.", response="A phone rings.", human=1.0),
        AQRow(question="What sound is heard?", reference="A telephone ringing.", response="Some electronic noise.",
              human=0.5),
        AQRow(question="What sound is heard?", reference="A telephone ringing.", response="A cat meowing.", human=0.0),
        AQRow(question="Is the speaker female?", reference="Yes.", response="Yes, a woman speaks.", human=1.0),
        AQRow(question="Is the speaker female?", reference="Yes.", response="No.", human=0.0),
    ]
    out = aqeval(rows, baselines=False)
    assert out["n"] == 7 and out["aura"]["pearson"] > 0.7 and out["aura"]["spearman"] > 0.7
