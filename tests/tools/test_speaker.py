"""Speaker embedding, counting/diarization and verification on flite voices, where the number of
voices and every turn boundary are known by construction (slt: female US, awb: Scottish male,
rms: US male). Similarity bounds are the calibration ranges measured here, with some slack."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.speaker import SpeakerCountArgs, speaker_count, speaker_embedding, speaker_verify

SR = synth.SR
GAP_S = 0.5
LINES = [
    "The weather today is sunny with a light breeze from the west.",
    "Please remember to bring the documents to the meeting tomorrow.",
    "I think we should take the train instead of driving downtown.",
    "Numbers like seven, twelve and forty two are easy to say.",
    "She sells sea shells by the sea shore every summer morning.",
    "The library closes at nine so we need to hurry up now.",
]


@dataclass(frozen=True)
class Conversation:
    path: Path
    voices: list[str]  # voice per line
    spans: list[tuple[float, float]]  # where each line's clip sits in the file (includes flite's own padding)

    @property
    def n_voices(self) -> int:
        return len(set(self.voices))


def _conversation(voices: list[str], path: Path) -> Conversation:
    """Lines spoken in turn by `voices`, GAP_S apart; spans are computed from each line's length."""
    clips, spans, t = [], [], 0.0
    for i, v in enumerate(voices):
        y = aio.load(
            synth.speech(LINES[i % len(LINES)], path.with_name(f"{path.stem}_{i}.wav"), voice=v), sr=SR
        )
        clips.append(y)
        spans.append((t, t + len(y) / SR))
        t += len(y) / SR + GAP_S
    parts = []
    for y in clips:
        parts += [y, synth.silence(GAP_S)]
    aio.write_wav(path, np.concatenate(parts[:-1]), SR)
    return Conversation(path, voices, spans)


@pytest.fixture(scope="session")
def conversations(audio_dir: Path) -> dict[int, Conversation]:
    return {
        1: _conversation(["slt", "slt", "slt"], audio_dir / "conv1.wav"),
        2: _conversation(["slt", "awb", "slt", "awb"], audio_dir / "conv2.wav"),
        3: _conversation(["slt", "awb", "rms", "slt", "awb", "rms"], audio_dir / "conv3.wav"),
    }


@pytest.fixture(scope="session")
def sentences(audio_dir: Path) -> dict[str, Path]:
    return {
        "slt_a": synth.speech(LINES[0], audio_dir / "slt_a.wav", voice="slt"),
        "slt_b": synth.speech(LINES[1], audio_dir / "slt_b.wav", voice="slt"),
        "awb_b": synth.speech(LINES[1], audio_dir / "awb_b.wav", voice="awb"),
        "rms_c": synth.speech(LINES[2], audio_dir / "rms_c.wav", voice="rms"),
        "awb_d": synth.speech(LINES[3], audio_dir / "awb_d.wav", voice="awb"),
    }


@pytest.mark.parametrize("n", [1, 2, 3])
def test_speaker_count_matches_the_number_of_flite_voices(n, conversations, tool_runner):
    conv = conversations[n]
    r = tool_runner(speaker_count, {}, conv.path)
    out = r.output
    assert out["count"] == n, out
    assert [s["speaker"] for s in out["speakers"]] == [f"S{i + 1}" for i in range(n)]
    assert len(out["centroid_similarity"]) == n * (n - 1) // 2
    # different flite voices: centroid cosine well below the merge threshold (0.80; measured <= 0.74)
    assert all(v <= 0.78 for v in out["centroid_similarity"].values()), out["centroid_similarity"]
    assert all(s["window_to_centroid_cosine"] >= 0.85 for s in out["speakers"]), out["speakers"]
    assert r.claims[0].text.startswith(f"{n} distinct voice")


def test_diarization_turns_follow_the_script(conversations, tool_runner):
    """Each scripted line becomes one turn with the right (anonymous) speaker, edges within 0.5 s."""
    conv = conversations[3]
    turns = tool_runner(speaker_count, {}, conv.path).output["turns"]
    assert len(turns) == len(conv.voices), turns
    # map anonymous labels to voices by first appearance, then the whole sequence must agree
    label_of: dict[str, str] = {}
    for voice, turn in zip(conv.voices, turns):
        label_of.setdefault(voice, turn["speaker"])
        assert turn["speaker"] == label_of[voice], (conv.voices, turns)
    assert len(set(label_of.values())) == 3
    for (a, b), turn in zip(conv.spans, turns):
        # flite pads each line with ~0.1-0.3 s of silence, so speech lies inside the span
        assert a - 0.1 <= turn["start_s"] <= a + 0.5, (a, b, turn)
        assert b - 0.5 <= turn["end_s"] <= b + 0.1, (a, b, turn)


def test_speaker_count_window_arguments(conversations, tool_runner):
    conv = conversations[2]
    # the first line alone is one voice
    r = tool_runner(speaker_count, {"end_s": conv.spans[0][1]}, conv.path)
    assert r.output["count"] == 1
    # the last two lines: two voices, with times reported in file time
    r = tool_runner(speaker_count, {"start_s": conv.spans[2][0]}, conv.path)
    assert r.output["count"] == 2
    assert r.output["turns"][0]["start_s"] >= conv.spans[2][0]


def test_count_args_are_bounded():
    with pytest.raises(ValueError):
        SpeakerCountArgs(window_s=0.1)
    with pytest.raises(ValueError):
        SpeakerCountArgs(max_speakers=0)


def test_silence_has_no_speakers(silence_clip, tool_runner):
    r = tool_runner(speaker_count, {}, silence_clip)
    assert r.output["count"] == 0 and r.output["turns"] == []


def test_verify_same_voice_different_sentences(sentences, tool_runner):
    r = tool_runner(
        speaker_verify, {"other_artifact": "a1"}, {"a0": sentences["slt_a"], "a1": sentences["slt_b"]}
    )
    assert r.output["verdict"] == "same", r.output
    assert r.output["cosine_similarity"] >= 0.84  # measured 0.89
    assert "does not identify" in r.claims[0].text


@pytest.mark.parametrize("a,b", [("slt_a", "awb_b"), ("awb_d", "rms_c")])
def test_verify_different_voices(a, b, sentences, tool_runner):
    """slt vs awb is an easy pair (0.54); awb vs rms, both male, is the closest flite pair (<= 0.74)."""
    r = tool_runner(speaker_verify, {"other_artifact": "a1"}, {"a0": sentences[a], "a1": sentences[b]})
    assert r.output["verdict"] == "different", r.output
    assert r.output["cosine_similarity"] <= 0.76


def test_verify_two_windows_of_one_file(conversations, tool_runner):
    conv = conversations[2]
    (_a0, b0), (a1, b1), (a2, b2) = conv.spans[:3]
    r = tool_runner(speaker_verify, {"end_s": b0, "other_start_s": a1, "other_end_s": b1}, conv.path)
    assert r.output["verdict"] == "different"
    r = tool_runner(speaker_verify, {"end_s": b0, "other_start_s": a2, "other_end_s": b2}, conv.path)
    assert r.output["verdict"] == "same"
    with pytest.raises(ValueError):
        tool_runner(speaker_verify, {}, conv.path)  # the same window twice compares nothing


def test_speaker_embedding_summary(sentences, tool_runner):
    r = tool_runner(speaker_embedding, {}, sentences["slt_a"])
    out = r.output
    assert out["dims"] == 256 and abs(out["norm"] - 1.0) < 1e-3
    assert "vector" not in out
    assert out["partial_to_mean_cosine"]["min"] >= 0.85  # one voice: partials agree
    r = tool_runner(speaker_embedding, {"include_vector": True}, sentences["slt_a"])
    v = np.array(r.output["vector"])
    assert v.shape == (256,) and abs(np.linalg.norm(v) - 1.0) < 1e-2


def test_embedding_rejects_silence(silence_clip, tool_runner):
    with pytest.raises(ValueError, match="voiced"):
        tool_runner(speaker_embedding, {}, silence_clip)


def test_real_time_factor_on_10s(conversations, tool_runner):
    """Loose bound for a busy 2-core CI box; measured about 0.04-0.08 here."""
    conv = conversations[2]
    tool_runner(speaker_count, {"end_s": 3.0}, conv.path)  # warm: model load
    t = time.perf_counter()
    r = tool_runner(speaker_count, {"end_s": 10.0}, conv.path)
    assert r.output["count"] == 2
    assert (time.perf_counter() - t) / 10.0 < 1.0


def test_the_webrtc_vad_gives_webrtcvads_own_decisions(sentences):
    """`voiced_regions` calls the package's C module directly (its Python module imports pkg_resources): every
    30 ms frame of real speech, silence and noise at each mode gets the decision webrtcvad.Vad gives it."""
    import warnings

    from audiomind.tools.speaker import VAD_FRAME_S, _webrtc_vad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import webrtcvad

    y = aio.load(sentences["awb_b"], sr=SR)
    rng = np.random.default_rng(0)
    y = np.concatenate([np.zeros(SR // 2, np.float32), y, 0.05 * rng.standard_normal(SR).astype(np.float32)])
    pcm = np.clip(np.round(y / np.max(np.abs(y)) * 0.9 * 32767), -32768, 32767).astype(np.int16)
    n = int(VAD_FRAME_S * SR)
    frames = [pcm[i * n:(i + 1) * n].tobytes() for i in range(len(pcm) // n)]
    for mode in range(4):
        ours, theirs = _webrtc_vad(mode), webrtcvad.Vad(mode)
        got = [ours.is_speech(f, SR) for f in frames]
        assert got == [theirs.is_speech(f, SR) for f in frames]
        assert any(got) and not all(got)


def test_voiced_regions_do_not_import_pkg_resources():
    import subprocess
    import sys

    code = ("import sys, numpy as np; from audiomind.tools.speaker import voiced_regions; "
            "t = np.arange(32000) / 16000; voiced_regions((0.3 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)); "
            "print('pkg_resources' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "False", (out.stdout, out.stderr[-2000:])
