"""vad: speech activity and timing on clips whose speech/silence layout is known by construction."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools.vad import VadArgs, vad

TOL_S = 0.3  # onset/offset tolerance stated by the brief


def test_vad_finds_speech_between_silences_within_0_3_s(fox_clip, tool_runner):
    res = tool_runner(vad, {}, fox_clip.path)
    segs = res.output["segments"]
    assert len(segs) == 1, segs
    assert abs(segs[0]["start_s"] - fox_clip.start_s) <= TOL_S
    assert abs(segs[0]["end_s"] - fox_clip.end_s) <= TOL_S
    speech = fox_clip.end_s - fox_clip.start_s
    assert abs(res.output["speech_s"] - speech) <= 2 * TOL_S
    assert abs(res.output["speech_ratio"] - speech / fox_clip.duration_s) <= 0.15
    (claim,) = res.claims
    assert claim.text.startswith("Speech activity detected in 1 segment")
    assert claim.data["segments"] == [[segs[0]["start_s"], segs[0]["end_s"]]]


def test_vad_separates_two_utterances_with_a_1_s_pause_within_0_3_s(audio_dir, helpers, tool_runner):
    a = helpers.trimmed_speech("open the door please", audio_dir / "vad_a.wav")
    b = helpers.trimmed_speech("thank you very much", audio_dir / "vad_b.wav", voice="rms")
    lead, pause = 0.5, 1.0
    y = np.concatenate([synth.silence(lead), a, synth.silence(pause), b, synth.silence(0.5)])
    path = helpers.write(y, audio_dir / "vad_two.wav")
    truth = [(lead, lead + len(a) / synth.SR)]
    truth.append((truth[0][1] + pause, truth[0][1] + pause + len(b) / synth.SR))
    segs = tool_runner(vad, {}, path).output["segments"]
    assert len(segs) == 2, segs
    for seg, (s, e) in zip(segs, truth):
        assert abs(seg["start_s"] - s) <= TOL_S and abs(seg["end_s"] - e) <= TOL_S


@pytest.mark.parametrize("clip", ["silence_clip", "tone_clip", "beeps_clip"])
def test_vad_reports_no_speech_on_non_speech(clip, request, tool_runner):
    res = tool_runner(vad, {}, request.getfixturevalue(clip))
    assert res.output["n_segments"] == 0
    assert res.output["speech_s"] == 0.0
    assert res.claims[0].text.startswith("No speech detected")


def test_vad_claims_stay_within_boundary(fox_clip, tool_runner):
    """Activity and timing only: the claim must not quote the words or talk about speakers."""
    text = tool_runner(vad, {}, fox_clip.path).claims[0].text.lower()
    assert "fox" not in text and "speaker" not in text


def test_vad_args_are_bounded():
    with pytest.raises(pydantic.ValidationError):
        VadArgs(threshold=1.5)
    with pytest.raises(pydantic.ValidationError):
        VadArgs(min_speech_ms=-1)
    with pytest.raises(pydantic.ValidationError):
        VadArgs(unknown=1)


def test_vad_is_consistent_from_a_thread_pool(fox_clip, tone_clip, tool_runner):
    """The shared ONNX session is called from several threads at once; state is per call."""
    from concurrent.futures import ThreadPoolExecutor

    clips = [fox_clip.path, tone_clip] * 3
    serial = [tool_runner(vad, {}, c).output["segments"] for c in clips]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda c: tool_runner(vad, {}, c).output["segments"], clips))
    assert parallel == serial
