"""The dynamic rubric judge offline (rules + cascade) on real clips: aligned instructions pass, hard
negatives (gender, count, order, words, swapped instruction) fail on the item that is wrong."""

from __future__ import annotations

import math

import pytest

from audiomind.judges.rubric.judge import judge_rubric
from audiomind.judges.rubric.negatives import perturb_instruction
from audiomind.trace import load_trace, validate_trace_file

pytestmark = pytest.mark.slow

INSTR = "A woman says 'good morning everyone', then a telephone rings."


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    return tmp_path_factory.mktemp("rubric_traces")


@pytest.fixture(scope="module")
def aligned(rubric_clips, traces):
    return judge_rubric(rubric_clips["woman_then_phone"], INSTR, trace_dir=traces)


def test_aligned_instruction_scores_high(aligned):
    assert aligned.aligned and aligned.score >= 0.75
    assert all(v.p_yes >= 0.5 for v in aligned.verdicts), [(v.question, v.p_yes, v.explanation) for v in aligned.verdicts]
    assert aligned.holistic is not None and aligned.holistic.source == "rules"
    assert {"decomposition", "item judge", "holistic"} <= set(aligned.substitutes)
    assert aligned.mean_p == pytest.approx(sum(v.p_yes for v in aligned.verdicts) / len(aligned.verdicts), abs=1e-3)
    scored = [v.p_yes for v in aligned.verdicts if v.verifiable]
    assert aligned.score == pytest.approx(math.prod(scored) ** (1 / len(scored)), abs=1e-3)  # geometric mean
    assert aligned.unverifiable == [v.question for v in aligned.verdicts if not v.verifiable]


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


def test_voice_activity_on_a_synth_bass_is_no_evidence_that_a_sound_is_missing(tmp_path):
    """Silero VAD fires on a low synth bass (no speech tag, no word recognised). A shaker under it that the
    tagger does not name is then open (p = 0.5, unverifiable), not a confident 'absent' from 'every burst of
    energy is voice activity'; a sound that is really missing is equally open: the judge says it cannot tell."""
    from audiomind import synth

    bass = synth.melody(["C2", "C2", "G2", "C2", "F2", "C2", "G2", "C2"], tmp_path / "bass.wav", note_s=0.4,
                        lead_s=0.1, program=38)
    shaker = synth.midi_track([(0.1 + 0.2 * i, 0.1, 82, 110) for i in range(16)], tmp_path / "shaker.wav", channel=9)
    clip = synth.mix(bass, shaker, tmp_path / "mix.wav", b_gain_db=-4.0, offset_s=0.2)
    r = judge_rubric(clip, "A throbbing synth bass with a shaker going along on top.", trace_dir=tmp_path)
    shaker_v = next(v for v in r.verdicts if "shaker" in v.question)
    assert shaker_v.p_yes == 0.5 and not shaker_v.verifiable, shaker_v.explanation
    assert "may be no voice" in shaker_v.explanation
    assert shaker_v.question in r.unverifiable
