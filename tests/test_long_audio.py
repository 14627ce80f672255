"""Long recordings: decoding holds one block besides its result, the whole-clip tools work in windows that
give the single-pass numbers, times stay absolute, every call records the stretches it analysed
(`Coverage`, also on the trace's ToolCall), timeouts scale with the audio's length, and a question that
names a time ('what is said at 2:30') is answered from that stretch. Real audio from sox, flite and
espeak-ng; real models where a test says so (marked slow)."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import tracemalloc

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.artifacts import make_artifact
from audiomind.backends.spans import absolute_span, without_time_phrase
from audiomind.state import Artifact, ToolCallRequest, ToolCallStatus
from audiomind.tools.base import merge_spans, plan_windows

SENTENCE = "The blue train leaves from platform seven at noon."
SAID_AT = 150.0  # 2:30 into a 4-minute recording


@pytest.fixture(scope="module")
def long_tone(tmp_path_factory):
    """Ten minutes of stereo 44.1 kHz: silence with a 440 Hz tone in the middle (sox)."""
    if not shutil.which("sox"):
        pytest.skip("sox not installed")
    p = tmp_path_factory.mktemp("long") / "tone.wav"
    subprocess.run(
        [
            "sox",
            "-n",
            "-r",
            "44100",
            "-c",
            "2",
            "-b",
            "16",
            str(p),
            "synth",
            "600",
            "sine",
            "440",
            "vol",
            "0.1",
            "fade",
            "h",
            "0",
            "600",
            "0",
            "trim",
            "0",
            "600",
        ],
        check=True,
    )
    return p


@pytest.fixture(scope="module")
def four_minutes(tmp_path_factory):
    """Four minutes of quiet noise at 22.05 kHz, a beep every minute, one sentence at 2:30."""
    p = tmp_path_factory.mktemp("long4") / "four.wav"
    return synth.long_recording(p, 240.0, [(SAID_AT, SENTENCE)], sr=22050, beeps_every_s=60.0)


def _artifact(path) -> Artifact:
    return make_artifact("a0", path)


# ---- decoding ----------------------------------------------------------------------------------------------
def test_decoding_a_long_file_holds_about_one_copy_of_the_result(long_tone):
    """Ten minutes of stereo 44.1 kHz decode to 16 kHz mono with the decoder's own allocations at most a
    block or two above the result: the old whole-file read held 212 MB of native float32 (and float64
    copies) for a 38 MB result."""
    tracemalloc.start()
    try:
        y = aio.load(long_tone, sr=16000, mono=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert y.dtype == np.float32 and len(y) == 600 * 16000
    assert peak < y.nbytes + 40e6, f"decode peak {peak / 1e6:.0f} MB for a {y.nbytes / 1e6:.0f} MB result"
    assert np.abs(y[300 * 16000 : 300 * 16000 + 16000]).max() > 0.05  # the tone is there, at its time


def test_blocks_are_bounded_and_join_to_the_whole_decode(long_tone):
    tracemalloc.start()
    try:
        n, shapes = 0, set()
        for block in aio.iter_blocks(long_tone, sr=16000, mono=False, block_s=30.0):
            n += block.shape[1]
            shapes.add(block.shape[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert shapes == {2} and n == 600 * 16000
    assert peak < 30e6  # a few 30 s blocks, never the file
    part = np.concatenate(list(aio.iter_blocks(long_tone, sr=16000, start_s=299.0, end_s=301.0)))
    assert abs(len(part) - 32000) <= 1 and np.abs(part).max() > 0.05


def test_streamed_resampling_is_the_one_shot_resampling(tmp_path):
    """The streaming soxr decode gives the samples librosa's one-shot soxr_hq resampling gave."""
    import librosa
    import soundfile as sf

    rng = np.random.default_rng(1)
    x = (0.1 * rng.standard_normal((2, 44100 * 75))).astype(np.float32)
    p = tmp_path / "n.wav"
    sf.write(str(p), x.T, 44100, subtype="FLOAT")
    ref = librosa.resample(x.mean(axis=0), orig_sr=44100, target_sr=16000, res_type="soxr_hq")
    # two code paths (streamed soxr chunks, one-shot soxr): the same up to float32 rounding; 1e-6 absolute
    # on a signal of rms 0.1 (another CPU's kernels differ in the last bits)
    np.testing.assert_allclose(aio.load(p, sr=16000), ref, rtol=0, atol=1e-6)


# ---- windowed tools give the single-pass numbers -----------------------------------------------------------
def test_windows_and_spans():
    assert plan_windows(0, 50, 60) == [(0, 50)]
    assert plan_windows(0, 130, 60) == [(0, 60), (60, 120), (120, 130)]
    assert plan_windows(10, 100, 40, overlap_s=5) == [(10, 50), (45, 85), (80, 100)]
    assert merge_spans([(5, 6), (0, 2), (1.5, 3), (6.5, 7)], gap_s=0.5) == [(0, 3), (5, 7)]


def test_long_windows_are_transcribed_in_pieces_that_start_at_pauses():
    """asr's pieces in a long window: Silero's speech (+-1 s) joined into pieces of at most 30 s that start in
    a pause, never overlap, and cut inside speech only when one segment alone is longer than 30 s."""
    from audiomind.tools.asr import speech_pieces
    from audiomind.tools.vad import FRAME_S

    probs = np.zeros(int(300 / FRAME_S), dtype=np.float32)
    speech = [(10 + 4 * k, 13 + 4 * k) for k in range(12)] + [(100, 170), (200, 203)]
    for a, b in speech:
        probs[int(a / FRAME_S) : int(b / FRAME_S)] = 0.9
    pieces = speech_pieces(probs, 300 * 16000)
    assert all(b - a <= 30.0 + 1e-6 for a, b in pieces)
    assert all(p[1] <= q[0] + 1e-6 for p, q in itertools.pairwise(pieces))  # in order, no overlap
    for a, b in speech:  # every spoken stretch is transcribed
        assert sum(min(b, q) - max(a, p) for p, q in pieces if q > a and p < b) == pytest.approx(b - a, abs=0.05)
    cuts = [b for a, b in pieces[:-1]]
    inside = [c for c in cuts if any(a + 0.1 < c < b - 0.1 for a, b in speech)]
    assert all(100 < c < 170 for c in inside)  # only the 70 s monologue is cut inside speech
    assert pieces[-1][1] == pytest.approx(204.0, abs=0.1)


def test_tagging_patches_per_window_are_the_single_pass_patches():
    from audiomind.tools.tagging import log_mel_patches, patch_windows

    rng = np.random.default_rng(0)
    y = (0.05 * rng.standard_normal(16000 * 150 + 123)).astype(np.float32)
    mel = np.abs(rng.standard_normal((64, 257))).astype(np.float32)
    whole = log_mel_patches(y, mel)
    plan = patch_windows(len(y))
    assert len(plan) == 3 and plan[-1][1] == len(whole)
    for p0, p1, s0, s1 in plan:
        # the same log-mel values up to float32 rounding: OpenBLAS picks its kernel by CPU and by the
        # array's length, so a window and the whole clip can differ in the last bits (seen: 9.5e-7 on
        # values of order 1-10). Bit-identity is a benchmark's claim, not a test's.
        np.testing.assert_allclose(log_mel_patches(y[s0:s1], mel), whole[p0:p1], rtol=1e-5, atol=1e-5)


def test_the_event_envelope_per_window_is_the_single_pass_envelope(four_minutes):
    from audiomind.tools.events import EVENT_HIGHPASS_HZ, _envelope_db, envelope_db, envelope_windows

    y = aio.load(four_minutes)
    assert envelope_windows(len(y)) == 4
    whole = _envelope_db(y, highpass_hz=EVENT_HIGHPASS_HZ)
    windowed = envelope_db(y, highpass_hz=EVENT_HIGHPASS_HZ)
    assert windowed.shape == whole.shape
    np.testing.assert_allclose(windowed, whole, atol=1e-3)


@pytest.mark.slow
def test_windowed_vad_finds_the_single_pass_segments(four_minutes):
    """Silero over 60 s windows side by side (each after 2 s of warm-up audio) marks the speech a single
    sequential pass marks, in far fewer model calls."""
    from audiomind.tools import vad

    y = aio.load(four_minutes)
    assert vad.vad_windows(len(y)) == 4
    seq, win = vad._sequential_probabilities(y), vad.speech_probabilities(y)
    assert len(seq) == len(win) and float(np.abs(seq - win).max()) < 0.25
    assert vad.segments_from_probs(win, len(y)) == vad.segments_from_probs(seq, len(y))


def test_streamed_loudness_is_pyloudnorm_on_the_whole_signal(tmp_path):
    import pyloudnorm as pyln

    rng = np.random.default_rng(2)
    t = np.arange(48000 * 40) / 48000
    x = np.stack(
        [0.2 * np.sin(2 * np.pi * 300 * t) * np.linspace(0.1, 1, len(t)), 0.05 * rng.standard_normal(len(t))]
    ).astype(np.float32)
    p = tmp_path / "st.wav"
    import soundfile as sf

    sf.write(str(p), x.T, 48000, subtype="FLOAT")
    from audiomind.tools.loudness import measure_stream

    integrated, lra, times, lufs, n = measure_stream(str(p), 48000, 2, 40.0, 0.4, 0.1)
    meter = pyln.Meter(48000)
    y = x.T.astype(np.float64)
    assert n == len(t) and len(times) == len(lufs) == (len(t) - 19200) // 4800 + 1
    assert integrated == pytest.approx(meter.integrated_loudness(y), abs=1e-6)
    assert lra == pytest.approx(meter.loudness_range(y), abs=1e-6)


# ---- times and coverage through the executor ---------------------------------------------------------
@pytest.mark.slow
def test_tools_on_a_long_recording_keep_absolute_times_and_record_coverage(four_minutes, tmp_path):
    from audiomind.tools.asr import LONG_WINDOW_S
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry

    art = _artifact(four_minutes)
    ex = ToolExecutor(ToolRegistry.load(), tmp_path / "derived")
    tools = ["vad", "asr", "tagging", "count_events", "loudness", "signal_stats", "speaker_count"]
    res = ex.run([ToolCallRequest(tool=t, arguments={"artifact": "a0"}) for t in tools], [art], step=0)
    calls = {c.tool: c for c in res.tool_calls}
    assert all(c.status == ToolCallStatus.ok for c in calls.values()), [
        (c.tool, c.error) for c in calls.values()
    ]
    for c in calls.values():  # every call says what it analysed, typed, and the timeout it ran under
        assert c.coverage is not None and c.coverage.requested == (0.0, 240.0), c.tool
        assert c.timeout_s is not None and c.timeout_s >= 60
    for t in ("vad", "tagging", "count_events", "loudness", "signal_stats"):
        assert calls[t].coverage.complete and calls[t].coverage.spans == [(0.0, 240.0)], t
    assert calls["tagging"].coverage.windows == 4 and calls["count_events"].coverage.windows == 4
    assert calls["signal_stats"].coverage.windows == 4 and calls["vad"].coverage.windows == 4

    speech = calls["vad"].output["segments"]
    assert len(speech) == 1 and SAID_AT - 0.2 < speech[0]["start_s"] < SAID_AT + 0.5
    asr = calls["asr"]
    assert LONG_WINDOW_S < 240.0 and not asr.coverage.complete and "Silero" in asr.coverage.note
    ((a, b),) = asr.coverage.spans
    assert SAID_AT - 1.5 < a < SAID_AT and SAID_AT + 2 < b < SAID_AT + 6 and asr.coverage.analysed_s < 10
    words = [w for s in asr.output["segments"] for w in s["words"]]
    assert "platform" in asr.output["text"].lower() and all(SAID_AT - 0.5 < w["start"] < b for w in words)
    onsets = [e["start_s"] for e in calls["count_events"].output["events"]]
    for beep in (30.0, 90.0, 210.0):  # the distractor beeps, at their absolute times
        assert any(abs(o - beep) < 0.05 for o in onsets), (beep, onsets)
    turns = calls["speaker_count"].output["turns"]
    sounds = (
        30.0,
        90.0,
        SAID_AT,
        210.0,
    )  # WebRTC VAD also takes the beeps for voice: every turn lies at a sound
    assert any(SAID_AT - 1 < t["start_s"] < SAID_AT + 2 for t in turns)
    assert all(any(s - 1 < t["start_s"] < s + 2 for s in sounds) for t in turns), turns


@pytest.mark.slow
def test_a_question_naming_a_time_is_answered_from_that_stretch(four_minutes, tmp_path):
    from audiomind import AudioMind

    agent = AudioMind(trace_dir=tmp_path / "traces")
    choices = [
        SENTENCE,
        "The red bus stops at the corner at midnight.",
        "Please close the window before you leave.",
    ]
    r = agent.ask(str(four_minutes), "What is said at 2:30?", choices)
    assert r.answer == SENTENCE
    spanned = [c for c in r.state.tool_calls if (c.arguments or {}).get("start_s") == 120.0]
    assert {c.tool for c in spanned} >= {"asr"}
    asr = next(c for c in spanned if c.tool == "asr")
    assert asr.issued_by == "planner" and asr.coverage.spans == [(120.0, 180.0)] and asr.coverage.complete
    assert "platform" in asr.output["text"].lower()


def test_absolute_spans_in_questions():
    hour = 3600.0
    assert absolute_span("What is said around minute 37?", hour) == (2160.0, 2280.0)
    assert absolute_span("What is said in the 37th minute?", hour) == (2160.0, 2280.0)
    assert absolute_span("What happens 37 minutes in?", hour) == (2160.0, 2280.0)
    assert absolute_span("What is said at 37:00?", hour) == (2190.0, 2250.0)
    assert absolute_span("What is said between minute 36 and 38?", hour) == (2160.0, 2280.0)
    assert absolute_span("What is said between 36:30 and 37:30?", hour) == (2190.0, 2250.0)
    assert absolute_span("Which sound is heard at 75 seconds?", hour) == (65.0, 85.0)
    assert absolute_span("What is said at 2:30?", 240.0) == (120.0, 180.0)
    # the way a new user put it: 'near the 18 and a half minute mark', 'at the 12-minute mark'
    assert absolute_span("Where is the key, according to what is said near the 18 and a half minute mark?",
                         1500.0) == (1050.0, 1170.0)
    assert absolute_span("What is heard at the 12-minute mark?", hour) == (660.0, 780.0)
    assert without_time_phrase("What is heard at the 12-minute mark?") == "What is heard in this part of the recording?"
    # the question analysis reads the question without the clock ('minute' is no tempo cue)
    assert (
        without_time_phrase("What is said around minute 37?") == "What is said in this part of the recording?"
    )
    assert without_time_phrase("How many beeps are there?") == "How many beeps are there?"
    # no absolute time, a span relative to the clip's ends, a time past the end, or the whole clip: none
    for q, d in [
        ("How many beeps are there?", hour),
        ("What is said in the first 3 seconds?", hour),
        ("What is said at 1:02:03?", hour),
        ("What is said around minute 1?", 90.0),
    ]:
        assert absolute_span(q, d) is None, q


def test_timeouts_scale_with_the_audio_and_a_timeout_is_recorded(tmp_path):
    from audiomind.tools.executor import effective_timeout
    from audiomind.tools.manifest import ToolRegistry

    m = ToolRegistry.load().get("tagging")
    short = Artifact(
        id="a0", path="x", sha256="0", duration_s=30.0, sample_rate=16000, channels=1, format="wav"
    )
    hour = short.model_copy(update={"duration_s": 3600.0})
    assert effective_timeout(m, {"artifact": "a0"}, {"a0": short}) == m.timeout_s
    assert effective_timeout(m, {"artifact": "a0"}, {"a0": hour}) == pytest.approx(m.timeout_s * 6)


def test_feature_tools_take_a_declared_budget_of_a_long_recording(tmp_path):
    """Feature tools (here spectral) analyse at most FEATURE_BUDGET_S of a call without end_s, and their
    coverage says which part and why; a window inside the budget is analysed whole."""
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry
    from audiomind.tools.window import FEATURE_BUDGET_S

    if not shutil.which("sox"):
        pytest.skip("sox not installed")
    p = tmp_path / "eleven.wav"
    subprocess.run(
        [
            "sox",
            "-n",
            "-r",
            "16000",
            "-c",
            "1",
            "-b",
            "16",
            str(p),
            "synth",
            "660",
            "sine",
            "300",
            "vol",
            "0.1",
        ],
        check=True,
    )
    ex = ToolExecutor(ToolRegistry.load(), tmp_path / "derived")
    res = ex.run(
        [
            ToolCallRequest(tool="spectral", arguments={"artifact": "a0"}),
            ToolCallRequest(tool="spectral", arguments={"artifact": "a0", "start_s": 630.0}),
        ],
        [_artifact(p)],
        step=0,
    )
    whole, tail = res.tool_calls
    assert whole.status == tail.status == ToolCallStatus.ok, (whole.error, tail.error)
    assert whole.coverage.spans == [(0.0, FEATURE_BUDGET_S)] and whole.coverage.requested == (0.0, 660.0)
    assert not whole.coverage.complete and "budget" in whole.coverage.note
    assert whole.output["coverage"] == whole.coverage.model_dump(mode="json")
    assert tail.coverage.spans == [(630.0, 660.0)] and tail.coverage.complete and tail.coverage.note is None


def test_coverage_reads_as_one_line():
    from audiomind.state import Coverage
    from audiomind.tools.base import coverage

    spans = [(2219.0, 2223.8), (10.0, 12.0)]
    cov = Coverage.model_validate(coverage(spans, (0.0, 3600.0), 2, 30.0, "speech only"))
    assert cov.spans == [(10.0, 12.0), (2219.0, 2223.8)] and cov.analysed_s == pytest.approx(6.8)
    assert not cov.complete
    assert cov.summary() == "covered 0:10.0-0:12.0, 36:59.0-37:03.8: 6.8 of 3600.0 s, 2 window(s) (partial)"
    short = Coverage.model_validate(coverage([(0.0, 5.0)], (0.0, 5.0), 1))
    assert short.summary() == "covered 0.0-5.0 s: 5.0 of 5.0 s, 1 window(s)"
