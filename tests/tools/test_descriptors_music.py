"""The note and voice descriptors (audiomind/tools/descriptors/melody.py, intonation.py) on audio whose property
is true by construction: dyads and single notes as numpy harmonic tones and fluidsynth renderings, melodies
with a chosen set of pitches, notes cut short or held over, two phrases with 0 / 1 / 5 notes changed, and a
flite voice with its f0 deviation set to 0 or left at its default, and a formant-filtered pulse train with a
flat, moderate or wide f0 contour; each clean and in pink noise at 15 dB SNR. The end-to-end questions through
AudioMind(planner="rules", frontend="cascade") load MiniLM and are marked slow."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from scipy.signal import lfilter

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.intonation import intonation_range
from audiomind.tools.descriptors.melody import articulation, distinct_pitches, interval_quality, phrase_repeat

SR = synth.SR
NOISE = [None, 15.0]  # clean, and pink noise at 15 dB SNR over the active part
needs_fluidsynth = pytest.mark.skipif(shutil.which("fluidsynth") is None or not synth.SOUNDFONT.exists(),
                                      reason="fluidsynth and fluid-soundfont-gm are needed")
needs_flite = pytest.mark.skipif(shutil.which("flite") is None, reason="flite is needed")


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _save(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.6 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _midi_hz(m: float) -> float:
    return 440.0 * 2 ** ((m - 69) / 12)


def _harmonic(midi: list[int], dur_s: float = 2.5) -> np.ndarray:
    """Notes held together, each six harmonics at 1/k amplitude, 30 ms attack and release."""
    t = np.arange(int(dur_s * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * _midi_hz(m) * t) / k for m in midi for k in range(1, 7))
    env = np.minimum(1, np.minimum(t / 0.03, (t[-1] - t) / 0.03))
    return np.concatenate([np.zeros(SR // 4), y * env, np.zeros(SR // 4)])


def _render(notes: list[tuple], path, program: int, snr: float | None, seed: int = 0) -> str:
    """fluidsynth notes (start, duration, name), then noise: the file to analyse."""
    raw = synth.midi_track(notes, path.with_suffix(".raw.wav"), program=program)
    return _save(_noisy(aio.load(raw, sr=SR), snr, seed), path)


# ------------------------------------------------------------------------------------------- interval_quality

HARMONIC_DYADS = [([60, 67], "consonant"), ([57, 61], "consonant"), ([62, 67], "consonant"), ([64, 72], "consonant"),
                  ([64, 65], "dissonant"), ([60, 66], "dissonant"), ([62, 72], "dissonant"), ([59, 70], "dissonant"),
                  ([57], "single_pitch"), ([65], "single_pitch")]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("midi,label", HARMONIC_DYADS)
def test_interval_quality_of_harmonic_tones(midi, label, snr, tmp_path, tool_runner):
    path = _save(_noisy(_harmonic(midi), snr, seed=sum(midi)), tmp_path / "dyad.wav")
    out = tool_runner(interval_quality, None, path).output
    assert out["label"] == label, out
    if label != "single_pitch":
        assert out["semitones"] == [midi[1] - midi[0]], out


FLUID_DYADS = [(["G3", "D4"], 0, "consonant"), (["C4", "A4"], 52, "consonant"), (["B3", "C4"], 0, "dissonant"),
               (["D4", "G#4"], 40, "dissonant"), (["D4"], 40, "single_pitch"), (["A3"], 0, "single_pitch")]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("names,program,label", FLUID_DYADS)
def test_interval_quality_of_rendered_notes(names, program, label, snr, tmp_path, tool_runner):
    path = _render([(0.3, 2.5, n) for n in names], tmp_path / "dyad.wav", program, snr, seed=program)
    out = tool_runner(interval_quality, None, path).output
    assert out["label"] == label, out


# ------------------------------------------------------------------------------------------- distinct_pitches

PATTERNS = [(["E4"] * 8, 11, "one"), (["D4", "A4"] * 4, 0, "two"), (["G4", "B4", "D5", "B4"] * 2, 40, "three"),
            (["C4", "D4", "E4", "F4", "G4", "F4", "E4", "D4"], 11, "five"),
            (["A3", "C4", "E4", "G4", "A3", "C4", "E4", "G4"], 0, "four")]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("names,program,label", PATTERNS)
def test_distinct_pitches_of_patterns(names, program, label, snr, tmp_path, tool_runner):
    notes = [(0.3 + 0.35 * i, 0.33, n) for i, n in enumerate(names)]
    path = _render(notes, tmp_path / "pattern.wav", program, snr, seed=len(set(names)))
    out = tool_runner(distinct_pitches, None, path).output
    assert out["label"] == label, out
    assert out["count"] == len(set(names))


# ------------------------------------------------------------------------------------------- articulation

def _line(hold: list[float], names: list[str], ioi: float = 0.45) -> list[tuple]:
    """Notes every `ioi` seconds, each sounding hold[i] x ioi (< 1: a silence before the next; > 1: overlap)."""
    return [(0.3 + ioi * i, h * ioi, n) for i, (h, n) in enumerate(zip(hold, names))]


LINE = ["C4", "D4", "E4", "F4", "G4", "A4", "G4", "F4"]
ARTICULATIONS = [([0.3] * 8, 0, "detached"), ([0.3] * 8, 65, "detached"), ([1.05] * 8, 40, "connected"),
                 ([1.05] * 8, 65, "connected"), ([0.3] * 4 + [1.05] * 4, 73, "detached_to_connected"),
                 ([1.05] * 4 + [0.3] * 4, 40, "connected_to_detached")]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("hold,program,label", ARTICULATIONS)
def test_articulation_of_lines(hold, program, label, snr, tmp_path, tool_runner):
    path = _render(_line(hold, LINE), tmp_path / "line.wav", program, snr, seed=program)
    out = tool_runner(articulation, None, path).output
    assert out["label"] == label, out


# ------------------------------------------------------------------------------------------- phrase_repeat

FIRST = ["E4", "G4", "A4", "C5", "A4"]
REPEATS = [(FIRST, 11, "identical"), (["E4", "G4", "B4", "C5", "A4"], 0, "one_changed"),
           (["D5", "B4", "F4", "D4", "B3"], 24, "different"), (FIRST, 24, "identical")]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("second,program,label", REPEATS)
def test_phrase_repeat(second, program, label, snr, tmp_path, tool_runner):
    notes = [(0.3 + 0.32 * i, 0.3, n) for i, n in enumerate(FIRST)]
    notes += [(0.3 + 0.32 * 5 + 0.7 + 0.32 * i, 0.3, n) for i, n in enumerate(second)]
    path = _render(notes, tmp_path / "phrases.wav", program, snr, seed=program)
    out = tool_runner(phrase_repeat, None, path).output
    assert out["label"] == label, out
    assert out["first"] == FIRST and out["second"] == second
    assert out["split_by"] == "gap"


def test_phrase_repeat_and_articulation_say_when_there_are_too_few_notes(tmp_path, tool_runner):
    path = _save(_harmonic([60]), tmp_path / "one.wav")
    assert tool_runner(phrase_repeat, None, path).output["label"] == "too_few_notes"
    assert tool_runner(articulation, None, path).output["label"] == "too_few_notes"


# ------------------------------------------------------------------------------------------- intonation_range

def _voice_like(f0_swing_st: float, seed: int = 0, dur_s: float = 4.0) -> np.ndarray:
    """A vowel-like voice: a pulse train through three formant resonators, in 0.25 s 'syllables' with 80 ms gaps;
    f0 moves around 120 Hz as a sum of two slow sinusoids scaled to +-f0_swing_st semitones (0: a flat f0)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(dur_s * SR)) / SR
    contour = np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6)) + 0.5 * np.sin(2 * np.pi * 1.9 * t)
    f0 = 120.0 * 2 ** (f0_swing_st * contour / 1.5 / 12)
    phase = np.cumsum(f0 / SR)
    src = np.diff(np.floor(phase), prepend=0.0)  # one pulse per period
    y = src
    for fc, bw in [(700, 110), (1200, 120), (2600, 160)]:
        r = np.exp(-np.pi * bw / SR)
        y = lfilter([1 - r], [1, -2 * r * np.cos(2 * np.pi * fc / SR), r * r], y)
    syl = (t % 0.33) < 0.25
    return np.concatenate([np.zeros(SR // 4), y * syl, np.zeros(SR // 4)])


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("swing,label", [(0.0, "monotone"), (2.5, "natural"), (9.0, "exaggerated")])
def test_intonation_range_of_a_voice_like_source(swing, label, snr, tmp_path, tool_runner):
    path = _save(_noisy(_voice_like(swing, seed=int(swing)), snr), tmp_path / "voice.wav")
    out = tool_runner(intonation_range, None, path).output
    assert out["label"] == label, out
    assert 100 < out["median_f0_hz"] < 160, out  # around the 120 Hz centre: the contour is not symmetric


def _flite(text: str, voice: str, f0_sd: float | None, path) -> np.ndarray:
    cmd = ["flite", "-voice", voice, "-t", text, "-o", str(path)]
    if f0_sd is not None:
        cmd += ["--setf", f"int_f0_target_stddev={f0_sd:g}"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=30)
    return aio.load(path, sr=SR)


@needs_flite
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("voice,f0_sd,label", [("slt", 0, "monotone"), ("kal", 0, "monotone"), ("slt", None, "natural"),
                                              ("kal", None, "natural")])
def test_intonation_range_of_flite_voices(voice, f0_sd, label, snr, tmp_path, tool_runner):
    y = _flite("On Sunday morning my brother drove to the market and bought a basket of ripe red apples.",
               voice, f0_sd, tmp_path / "raw.wav")
    path = _save(_noisy(y, snr, seed=3), tmp_path / "speech.wav")
    out = tool_runner(intonation_range, None, path).output
    assert out["label"] == label, out


def test_intonation_range_without_a_voice(tmp_path, tool_runner):
    path = _save(synth.noise("pink", 2 * SR, np.random.default_rng(1)), tmp_path / "noise.wav")
    assert tool_runner(intonation_range, None, path).output["label"] == "no_voice"


# ------------------------------------------------------------------------------------------- end to end (slow)

@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, str]:
    """One clip per descriptor, true by construction, in pink noise at 20 dB."""
    d = tmp_path_factory.mktemp("music-clips")
    out = {"tritone": _render([(0.3, 2.5, "B3"), (0.3, 2.5, "F4")], d / "tritone.wav", 0, 20.0),
           "three_pitches": _render([(0.3 + 0.35 * i, 0.33, n) for i, n in
                                     enumerate(["A4", "E4", "A4", "C5", "A4", "E4", "A4", "C5"])],
                                    d / "three.wav", 11, 20.0),
           "legato": _render(_line([1.05] * 8, LINE), d / "legato.wav", 40, 20.0)}
    notes = [(0.3 + 0.32 * i, 0.3, n) for i, n in enumerate(FIRST)]
    notes += [(2.6 + 0.32 * i, 0.3, n) for i, n in enumerate(["E4", "G4", "A4", "D5", "A4"])]
    out["one_changed"] = _render(notes, d / "phrases.wav", 0, 20.0)
    if shutil.which("flite"):
        y = _flite("The committee will meet again on Thursday to review the budget for next year.", "slt", 0,
                   d / "flat_raw.wav")
        out["monotone"] = _save(_noisy(y, 20.0), d / "flat.wav")
    return out


@needs_fluidsynth
@pytest.mark.slow
@pytest.mark.parametrize("clip,tool,question,choices,answer", [
    ("tritone", "interval_quality", "How do the two piano notes combine?",
     ["they grate against each other", "they merge sweetly into one", "only a lone note sounds"], 0),
    ("three_pitches", "distinct_pitches", "How many separate pitches can you hear in the tune?",
     ["2", "3", "4", "5"], 1),
    ("legato", "articulation", "How does the violinist play this line?",
     ["every note bowed short, with air around it", "the notes flow seamlessly into each other",
      "short at the start, then flowing"], 1),
    ("one_changed", "phrase_repeat", "Listen to both phrases. How do they relate?",
     ["an exact copy of the first", "the same except for one altered note", "an unrelated second tune"], 1),
    ("monotone", "intonation_range", "How would you describe the way this person talks?",
     ["in a droning voice without any inflection", "like an everyday conversation", "in a singsong, theatrical way"],
     0),
])
def test_note_and_voice_questions_are_answered_from_the_descriptors(clip, tool, question, choices, answer, clips,
                                                                   agent):
    if clip not in clips:
        pytest.skip("flite is needed")
    result = agent.ask(clips[clip], question, choices=choices)
    assert result.choice == choices[answer], result.rationale
    assert f"[property_{tool}" in result.rationale or f"property_{tool}" in result.rationale, result.rationale
    assert tool in {c.tool for c in result.state.tool_calls}


# ------------------------------------------------------------------------------------------- gating (slow: MiniLM)

def test_the_count_row_is_gated_by_its_cues_and_question_similarity():
    from audiomind.reasoning.property_facts import vocabulary

    row = next(r for r in vocabulary().property if r.name == "distinct_pitches")
    assert row.cues and row.about is not None and row.about > 0.3  # numbers are common words: a stricter gate
    assert row.value_of(3) is None and row.value_of("three") == "three" and row.value_of("more") is None


@pytest.mark.slow
@pytest.mark.parametrize("question,asked", [
    ("How many separate pitches can you hear in the tune?", True),
    ("Counting repeats once, how many different notes does the melody use?", True),
    ("How many notes are played?", False),            # a count of notes, not of pitches
    ("How many times does the bell ring?", False),
    ("How many different sounds are heard?", False),  # no pitch, note or tone named
])
def test_number_choices_reach_distinct_pitches_only_for_a_pitch_count(question, asked):
    from audiomind.reasoning.property_verifier import tools_for

    assert ("distinct_pitches" in tools_for(question, ["one", "two", "three", "four"])) is asked
