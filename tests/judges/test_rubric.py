"""The dynamic rubric judge offline (rules + cascade) on real clips: aligned instructions pass, hard
negatives (gender, count, order, words, swapped instruction) fail on the item that is wrong."""

from __future__ import annotations

import pytest

from audiomind.judges.rubric import (
    judge_rubric,
    perturb_instruction,
    rule_decompose,
    rule_filter,
    swap_instructions,
)
from audiomind.trace import load_trace, validate_trace_file

pytestmark = pytest.mark.slow

INSTR = "A woman says 'good morning everyone', then a telephone rings."


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return tmp_path_factory.mktemp("rubric_traces")


@pytest.fixture(scope="module")
def aligned(rubric_clips, traces):
    return judge_rubric(rubric_clips["woman_then_phone"], INSTR, trace_dir=traces)


def test_rule_decomposition_makes_atomic_verifiable_items():
    items = rule_decompose(INSTR)
    kinds = [i.check["kind"] for i in items]
    assert kinds.count("speech_present") == 1
    assert {"gender", "words", "sound", "order"} <= set(kinds)
    order = next(i for i in items if i.check["kind"] == "order")
    assert order.check["first"]["kind"] == "speech" and order.check["second"]["kind"] == "sound"
    count = rule_decompose("Three short beeps.")
    assert any(i.check.get("kind") == "count" and i.check["n"] == 3 for i in count)
    assert rule_decompose("A woman sadly says 'no'.")[-1].check["kind"] == "unverifiable"


def test_rule_filter_drops_ungrounded_and_duplicate_items():
    items = rule_decompose(INSTR)
    items.append(items[0].model_copy(update={"id": 99}))
    items.append(items[0].model_copy(update={"id": 100, "question": "Is there a dog?", "evidence": "a dog barks loudly"}))
    rule_filter(INSTR, items)
    reasons = {i.id: i.drop_reason for i in items if not i.kept}
    assert reasons == {99: "duplicate", 100: "not grounded in the instruction's words"}


def test_hard_negative_builders():
    assert perturb_instruction(INSTR, "gender")[0] == "A man says 'good morning everyone', then a telephone rings."
    assert perturb_instruction(INSTR, "order")[0].startswith("A telephone rings, then a woman says")
    assert perturb_instruction("Three short beeps.", "count")[0] == "Five short beeps."
    assert perturb_instruction("A trumpet plays a fast melody.", "tempo")[0] == "A trumpet plays a slow melody."
    assert perturb_instruction("Three short beeps.", "gender") is None
    perm = swap_instructions(["a", "b", "c", "d"], seed=3)
    assert sorted(perm) == [0, 1, 2, 3] and all(perm[i] != i for i in range(4))


def test_aligned_instruction_scores_high(aligned):
    assert aligned.aligned and aligned.score >= 0.75
    assert all(v.p_yes >= 0.5 for v in aligned.verdicts), [(v.question, v.p_yes, v.explanation) for v in aligned.verdicts]
    assert aligned.holistic is not None and aligned.holistic.source == "rules"
    assert {"decomposition", "item judge", "holistic"} <= set(aligned.substitutes)
    assert aligned.score == pytest.approx(sum(v.p_yes for v in aligned.verdicts) / len(aligned.verdicts), abs=1e-3)


@pytest.mark.parametrize("kind,wrong_item", [("gender", "gender"), ("order", "order")])
def test_perturbed_instruction_fails_on_the_perturbed_item(rubric_clips, traces, aligned, kind, wrong_item):
    text, _ = perturb_instruction(INSTR, kind)
    r = judge_rubric(rubric_clips["woman_then_phone"], text, trace_dir=traces)
    by_kind = {i.id: i.check["kind"] for i in r.items}
    failing = [by_kind[v.item_id] for v in r.verdicts if v.p_yes < 0.5]
    assert wrong_item in failing, [(v.question, v.p_yes, v.explanation) for v in r.verdicts]
    assert r.score < aligned.score - 0.1


def test_count_and_swap_negatives(rubric_clips, traces):
    ok = judge_rubric(rubric_clips["beeps3"], "Three short beeps.", trace_dir=traces)
    bad = judge_rubric(rubric_clips["beeps3"], "Five short beeps.", trace_dir=traces)
    swapped = judge_rubric(rubric_clips["beeps3"], "A man says 'the train leaves at nine'.", trace_dir=traces)
    assert ok.aligned and not bad.aligned and not swapped.aligned
    assert ok.score > bad.score and ok.score > swapped.score + 0.3
    man = judge_rubric(rubric_clips["man"], "A man says 'the train leaves at nine'.", trace_dir=traces)
    woman = judge_rubric(rubric_clips["man"], "A woman says 'the train leaves at nine'.", trace_dir=traces)
    assert man.aligned and man.score > woman.score


def test_rubric_run_is_a_valid_trace(aligned):
    assert aligned.trace_path and validate_trace_file(aligned.trace_path) == []
    st = load_trace(aligned.trace_path)
    assert st.final_answer is not None and st.final_answer.text.startswith("aligned")
    assert "pitch" in {c.tool for c in st.tool_calls}  # the gender item asked for the voice's f0
    item_notes = [e for e in st.evidence if e.tool == "judge_rubric" and "item_id" in e.data]
    assert len(item_notes) == len(aligned.verdicts)
