"""asr: words and their timing on flite speech whose text and placement are known by construction."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools.asr import AsrArgs, asr

TOL_S = 0.3  # word-timing tolerance
MAX_WORD_ERRORS = 1  # words compared case- and punctuation-insensitively


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def word_errors(ref: str, hyp: str) -> int:
    """Word-level Levenshtein distance."""
    r, h = words(ref), words(hyp)
    d = np.arange(len(h) + 1)
    for i in range(1, len(r) + 1):
        prev, d[0] = d.copy(), i
        for j in range(1, len(h) + 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r[i - 1] != h[j - 1]))
    return int(d[-1])


def all_words(res) -> list[dict]:
    return [w for s in res.output["segments"] for w in s["words"]]


def test_asr_transcribes_fox_with_at_most_one_word_error_and_timing_within_0_3_s(fox_clip, tool_runner):
    res = tool_runner(asr, {}, fox_clip.path)
    out = res.output
    assert word_errors(fox_clip.text, out["text"]) <= MAX_WORD_ERRORS, out["text"]
    assert out["language"] == "en"
    ws = all_words(res)
    assert len(ws) >= len(words(fox_clip.text)) - MAX_WORD_ERRORS
    assert abs(ws[0]["start"] - fox_clip.start_s) <= TOL_S, ws[0]
    assert abs(ws[-1]["end"] - fox_clip.end_s) <= TOL_S, ws[-1]
    assert all(w["start"] <= w["end"] for w in ws)
    assert all(a["start"] <= b["start"] for a, b in itertools.pairwise(ws))
    assert all(0.0 <= w["probability"] <= 1.0 for w in ws)
    transcript_claim = res.claims[0]
    assert f'"{out["text"]}"' in transcript_claim.text
    assert abs(transcript_claim.data["start_s"] - fox_clip.start_s) <= TOL_S
    assert any(c.data.get("language") == "en" for c in res.claims)


@pytest.mark.parametrize(
    "voice,text",
    [("slt", "please call me back tomorrow morning"), ("awb", "open the door and turn on the light"),
     ("rms", "my name is john and i live in boston")],
)
def test_asr_other_sentences_and_voices_at_most_one_word_error(voice, text, audio_dir, helpers, tool_runner):
    clip = helpers.speech_clip(text, audio_dir / f"asr_{voice}.wav", voice=voice, lead_s=0.7, tail_s=0.5)
    res = tool_runner(asr, {}, clip.path)
    assert word_errors(text, res.output["text"]) <= MAX_WORD_ERRORS, res.output["text"]
    assert abs(all_words(res)[0]["start"] - clip.start_s) <= TOL_S


def test_asr_time_window_transcribes_only_that_window_with_absolute_times(audio_dir, helpers, tool_runner):
    a = helpers.trimmed_speech("the weather is nice today", audio_dir / "asr_w1.wav")
    b = helpers.trimmed_speech("please call me back tomorrow morning", audio_dir / "asr_w2.wav")
    y = np.concatenate([synth.silence(0.5), a, synth.silence(1.5), b, synth.silence(0.5)])
    path = helpers.write(y, audio_dir / "asr_window.wav")
    b_start = 0.5 + len(a) / synth.SR + 1.5
    res = tool_runner(asr, {"start_s": b_start - 0.75}, path)
    assert word_errors("please call me back tomorrow morning", res.output["text"]) <= MAX_WORD_ERRORS
    assert "weather" not in res.output["text"].lower()
    assert abs(all_words(res)[0]["start"] - b_start) <= TOL_S  # times are on the original clip's timeline


def test_asr_on_silence_and_tone_transcribes_nothing(silence_clip, tone_clip, tool_runner):
    for clip in (silence_clip, tone_clip):
        res = tool_runner(asr, {}, clip)
        assert res.output["text"] == "" and res.output["n_words"] == 0, res.output
        assert res.output["skipped"] == "no speech found by Silero VAD"
        assert res.claims[0].text.startswith("No words were transcribed")


def test_asr_drops_whisper_no_speech_hallucination_on_silence(silence_clip, tool_runner):
    """With the VAD pre-check off Whisper runs on silence (tiny.en says "You"); the segment it marks as
    no-speech, where the VAD finds none, is dropped from the transcript but kept in the output."""
    res = tool_runner(asr, {"skip_without_speech": False}, silence_clip)
    assert res.output["text"] == ""
    assert all(d["no_speech_prob"] > 0.5 for d in res.output["dropped_non_speech_segments"])


def test_a_runaway_repetition_is_dropped_with_its_reason_and_real_speech_is_kept():
    """The condition is forced, not hoped for: a decoded segment whose text is a runaway repetition (its
    compression ratio computed by faster-whisper's own function, as Whisper computes it while decoding) is
    dropped with its reason; an ordinary sentence is kept."""
    from faster_whisper.transcribe import Segment, get_compression_ratio

    from audiomind.tools.asr import MAX_COMPRESSION_RATIO, dropped_segment

    def segment(text: str) -> Segment:
        return Segment(id=1, seek=0, start=1.0, end=4.0, text=text, tokens=[], avg_logprob=-0.4,
                       compression_ratio=get_compression_ratio(text), no_speech_prob=0.1, words=None,
                       temperature=0.0)

    runaway = segment(" ." * 60)
    assert runaway.compression_ratio > MAX_COMPRESSION_RATIO
    drop = dropped_segment(runaway, None, rel=0.5, offset=10.0)
    assert drop is not None and drop["reason"] == "repetition"
    assert drop["compression_ratio"] > 2.4 and drop["start"] == 11.5 and drop["end"] == 14.5
    sentence = segment(" The quick brown fox jumps over the lazy dog.")
    assert sentence.compression_ratio <= MAX_COMPRESSION_RATIO
    assert dropped_segment(sentence, None, rel=0.0, offset=0.0) is None


def test_asr_on_a_synth_bass_gives_the_same_output_every_run(tmp_path, tool_runner):
    """What holds on any CPU: Silero may or may not fire on a low synth bass under a shaker, and Whisper may
    or may not write a runaway ' . .' there; whatever it writes, three runs give the same output (one
    temperature-0 decode, no sampled fallback), and a dropped segment says why."""
    from audiomind.tools.asr import MAX_COMPRESSION_RATIO

    bass = synth.melody(["C2", "C2", "G2", "C2", "F2", "C2", "G2", "C2"], tmp_path / "bass.wav", note_s=0.4,
                        lead_s=0.1, program=38)
    shaker = synth.midi_track([(0.1 + 0.2 * i, 0.1, 82, 110) for i in range(16)], tmp_path / "shaker.wav", channel=9)
    clip = synth.mix(bass, shaker, tmp_path / "mix.wav", b_gain_db=-4.0, offset_s=0.2)
    runs = [tool_runner(asr, {}, clip).output for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    out = runs[0]
    for d in out.get("dropped_non_speech_segments", []):
        assert d["reason"] in ("no_speech", "repetition")
        assert d["reason"] != "repetition" or d["compression_ratio"] > MAX_COMPRESSION_RATIO


@pytest.mark.slow  # loads the 145 MB multilingual model (assembled into the cache on first use)
def test_asr_base_detects_english(fox_clip, tool_runner):
    res = tool_runner(asr, {"model": "base"}, fox_clip.path)
    assert res.output["language"] == "en" and res.output["language_probability"] > 0.5
    assert word_errors(fox_clip.text, res.output["text"]) <= MAX_WORD_ERRORS
    assert any("detected" in c.text for c in res.claims)


def test_asr_claims_stay_within_boundary(fox_clip, tool_runner):
    for claim in tool_runner(asr, {}, fox_clip.path).claims:
        low = claim.text.lower()
        assert "speaker" not in low and "emotion" not in low and "female" not in low


def test_asr_args_are_bounded_and_tiny_en_is_english_only(fox_clip, tool_runner):
    with pytest.raises(pydantic.ValidationError):
        AsrArgs(model="large-v3")
    with pytest.raises(pydantic.ValidationError):
        AsrArgs(beam_size=0)
    with pytest.raises(ValueError, match="English"):
        tool_runner(asr, {"language": "de"}, fox_clip.path)
