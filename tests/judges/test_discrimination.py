"""The offline judges tell a real edit from a no-op and an aligned instruction from a swapped one, and say when
they cannot, on real generated audio (flite speech, the freedesktop bell, the telephone ring).

- edit: a flite announcement with the freedesktop bell appended, "Add a bell ringing after the announcement.",
  against the unedited file judged on the same instruction (the measured failure this guards: both got the
  same Edit_score and "There is no audible difference.");
- rubric: an item no tool can verify (speaking style) gets p = 0.5 and is named, never a confident no; a
  swapped-order negative scores below its positive.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth

pytestmark = pytest.mark.slow

INSTRUCTION = "Add a bell ringing after the announcement."


@pytest.fixture(scope="module")
def bell_pair(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("bell_pair")
    speech = synth.speech("attention please, the next train to the airport departs from platform two",
                          d / "announcement.wav", voice="slt")
    bell = synth.sound_file("bell", d / "bell.wav")
    edited = synth.concat([speech, bell], d / "announcement_bell.wav", gap_s=0.3)
    noop = d / "announcement_copy.wav"
    shutil.copy(speech, noop)
    onset = aio.probe(speech).duration_s + 0.3
    return {"original": speech, "edited": edited, "noop": noop, "bell_onset_s": onset}


@pytest.fixture(scope="module")
def bell_judged(bell_pair, tmp_path_factory):
    from audiomind.judges.edit import judge_edit

    traces = tmp_path_factory.mktemp("bell_traces")
    real = judge_edit(bell_pair["original"], bell_pair["edited"], instruction=INSTRUCTION, trace_dir=traces)
    noop = judge_edit(bell_pair["original"], bell_pair["noop"], instruction=INSTRUCTION, trace_dir=traces)
    return real, noop


def test_a_real_edit_scores_above_its_no_op(bell_judged):
    real, noop = bell_judged
    assert real.edit_score > noop.edit_score + 0.1, (real.edit_score, noop.edit_score)
    assert real.effectiveness.score > noop.effectiveness.score + 0.4
    assert noop.effectiveness.label == "ineffective"
    assert "no audible difference" in noop.predicted_difference.lower()
    assert real.preservation.label == "preserved"


def test_the_difference_caption_names_the_added_bell_and_its_time(bell_judged, bell_pair):
    real, _ = bell_judged
    cap = real.predicted_difference
    assert "bell" in cap.lower() and "adds" in cap.lower(), cap
    times = [float(t) for t in re.findall(r"(\d+\.\d+) s", cap)]
    assert times and abs(times[0] - bell_pair["bell_onset_s"]) < 0.15, (cap, bell_pair["bell_onset_s"])
    assert "after the announcement" in cap  # the instructed place, checked against voice activity
    check = next(c for c in real.effectiveness.data["checks"] if c.get("phrase"))
    assert check["position"] == "as instructed"
    # the bell's class is checked by tags over a window that starts at its onset, not by voice activity
    assert "heard:" in check["identity_evidence"] and "voice activity" not in check["identity_evidence"]
    if check["identity"] != "confirmed":  # the tags could not tell: the caption and the result say so
        assert "possibly" in cap and real.unverifiable


def test_the_edit_run_records_alignment_and_residuals(bell_judged):
    from audiomind.trace import load_trace, validate_trace_file

    real, _ = bell_judged
    assert real.alignment is not None and real.alignment.aligned and not real.alignment.identical
    assert [c["kind"] for c in real.changes] == ["added"]
    assert real.trace_path and validate_trace_file(real.trace_path) == []
    st = load_trace(real.trace_path)
    residual = [a for a in st.artifacts if a.operation == "residual"]
    assert residual and residual[0].derived_from == "a1"
    windowed = [c for c in st.tool_calls if c.tool == "tagging" and (c.arguments or {}).get("start_s")]
    assert windowed, "the added stretch was tagged over an onset-aligned window"
    assert [s.number for s in real.steps] == [1, 2, 3, 4, 5, 6, 7]


# ---------------------------------------------------------------- rubric


@pytest.fixture(scope="module")
def man_then_phone(tmp_path_factory):
    d = tmp_path_factory.mktemp("rubric_order")
    man = synth.speech("please close the door behind you", d / "man.wav", voice="awb")
    phone = synth.sound_file("phone-incoming-call", d / "phone.wav")
    return synth.concat([man, phone], d / "man_then_phone.wav", gap_s=0.4)


def test_an_unverifiable_item_gets_one_half_and_is_named(man_then_phone, tmp_path):
    from audiomind.judges.rubric import judge_rubric

    r = judge_rubric(man_then_phone, "A man cheerfully says 'please close the door behind you'.", trace_dir=tmp_path)
    style = [v for v in r.verdicts if "cheerful" in v.question.lower()]
    assert style, [v.question for v in r.verdicts]
    v = style[0]
    assert v.p_yes == 0.5 and not v.verifiable and v.verdict == "unknown"
    assert v.question in r.unverifiable
    aggregate = next(s for s in r.steps if s.name == "aggregate")
    assert "unverifiable" in aggregate.text and v.question in aggregate.text
    assert all(x.p_yes >= 0.5 for x in r.verdicts if not x.verifiable)  # never a confident no
    assert r.aligned  # the verifiable items (speech, a male voice, the words) hold


def test_a_swapped_order_negative_scores_below_its_positive(man_then_phone, tmp_path):
    from audiomind.judges.rubric import judge_rubric

    pos = judge_rubric(man_then_phone, "A man says 'please close the door behind you', then a telephone rings.",
                       trace_dir=tmp_path)
    neg = judge_rubric(man_then_phone, "A telephone rings, then a man says 'please close the door behind you'.",
                       trace_dir=tmp_path)
    assert pos.aligned and not neg.aligned, (pos.score, neg.score)
    assert neg.score < pos.score - 0.3
    order = [v for v in neg.verdicts if v.question.startswith("Does '")]
    assert order and order[0].p_yes < 0.2 and order[0].verifiable


def test_a_missing_sound_is_a_confident_no(tmp_path):
    from audiomind.judges.rubric import judge_rubric

    man = synth.speech("please close the door behind you", tmp_path / "man.wav", voice="awb")
    r = judge_rubric(man, "A man says 'please close the door behind you', then a telephone rings.", trace_dir=tmp_path)
    sound = [v for v in r.verdicts if "telephone" in v.question.lower() and "present" in v.question.lower()]
    assert sound and sound[0].p_yes <= 0.1 and sound[0].verifiable
    assert not r.aligned


def test_silence_is_not_a_separate_sound():
    """A burst whose own window the tagger hears as silence (a click, a tail) is no separate sound."""
    from audiomind.judges import evidence as ev
    from audiomind.reasoning.facts import TagWindow

    quiet = TagWindow(start_s=0.0, end_s=0.96, labels=[("Silence", 0.99)], peak_labels=[("Silence", 0.99)])
    assert ev.hears_silence(quiet)
    assert not ev.hears_silence(quiet.model_copy(update={"labels": [("Silence", 0.9), ("Bark", 0.4)]}))
    assert np.isclose(quiet.strength("Silence"), 0.99)
