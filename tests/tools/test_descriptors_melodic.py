"""The melody-shape and harmony descriptors (audiomind/tools/descriptors/melodic.py) on audio whose property is true
by construction: fluidsynth melodies placed in a chosen octave, lines built from seconds, from wide intervals or
from seconds with one leap, block-chord sequences that repeat, change at every chord or change once, and tunes
and progressions that end on their tonic, elsewhere, or are cut inside their last note; plus numpy harmonic
tones for the register. Each clean and in pink noise at 15 dB SNR (some at 10 and 20 dB). The end-to-end
questions through AudioMind(planner="rules", frontend="cascade") load MiniLM and are marked slow."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.melodic import cadence, harmonic_changes, melodic_motion, register

SR = synth.SR
NOISE = [None, 15.0]  # clean, and pink noise at 15 dB SNR over the active part
pytestmark = pytest.mark.skipif(shutil.which("fluidsynth") is None or not synth.SOUNDFONT.exists(),
                                reason="fluidsynth and fluid-soundfont-gm are needed")


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _save(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.6 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _render(notes: list[tuple], path, program: int, snr: float | None, seed: int = 0,
            cut_s: float | None = None) -> str:
    """fluidsynth notes (start, duration, name), optionally cut at cut_s, then noise: the file to analyse."""
    y = aio.load(synth.midi_track(notes, path.with_suffix(".raw.wav"), program=program), sr=SR)
    if cut_s is not None:
        y = y[: int(cut_s * SR)]
    return _save(_noisy(y, snr, seed), path)


def _line(names: list[str], ioi: float = 0.4, hold: float = 0.9, last_s: float | None = None) -> list[tuple]:
    """One note every `ioi` seconds from 0.4 s, each sounding hold x ioi (the last one last_s when given)."""
    out = [(0.4 + ioi * i, hold * ioi, n) for i, n in enumerate(names)]
    if last_s is not None:
        out[-1] = (out[-1][0], last_s, out[-1][2])
    return out


def _shift(names: list[str], octave: int) -> list[str]:
    return [n[:-1] + str(int(n[-1]) + octave) for n in names]


# ------------------------------------------------------------------------------------------------ register

TUNE = ["D4", "F4", "A4", "G4", "E4", "F4", "D4"]  # a phrase around the fourth octave, moved by whole octaves
REGISTERS = [(-2, 0, "low"), (-2, 32, "low"), (-2, 42, "low"), (0, 0, "middle"), (0, 40, "middle"),
             (1, 73, "middle"), (2, 73, "high"), (2, 0, "high"), (3, 0, "high")]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("octave,program,label", REGISTERS)
def test_register_of_a_tune_moved_by_octaves(octave, program, label, snr, tmp_path, tool_runner):
    names = _shift(TUNE, octave)
    path = _render(_line(names), tmp_path / "tune.wav", program, snr, seed=octave + 5)
    out = tool_runner(register, None, path).output
    assert out["label"] == label, out
    if octave == 3:
        return  # basic-pitch stops at C8 and misses some notes of the seventh octave: the label only
    true_median = float(np.median([synth.note_to_midi(n) for n in names]))  # F of the tune's octave
    assert abs(12 * np.log2(out["median_hz"] / (440 * 2 ** ((true_median - 69) / 12)))) <= 2.0, out
    assert out["octave"] == 4 + octave, out


def _harmonic_line(midi: list[int], note_s: float = 0.35) -> np.ndarray:
    t = np.arange(int(note_s * SR)) / SR
    env = np.minimum(1, np.minimum(t / 0.01, (t[-1] - t) / 0.03))
    notes = [sum(np.sin(2 * np.pi * k * 440 * 2 ** ((m - 69) / 12) * t) / k for k in range(1, 5)) * env for m in midi]
    return np.concatenate([np.zeros(SR // 4), *notes, np.zeros(SR // 4)])


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("base,label", [(40, "low"), (64, "middle"), (86, "high")])
def test_register_of_harmonic_tones(base, label, snr, tmp_path, tool_runner):
    path = _save(_noisy(_harmonic_line([base + d for d in (0, 2, 4, 2, 5, 4, 0)]), snr, seed=base), tmp_path / "t.wav")
    assert tool_runner(register, None, path).output["label"] == label


# ------------------------------------------------------------------------------------------------ melodic_motion

MOTIONS = [
    (["E4", "F4", "G4", "A4", "G4", "F4", "E4", "D4", "E4"], 0, "steps"),
    (["B4", "A4", "G4", "F#4", "G4", "A4", "B4", "C5"], 40, "steps"),
    (["F3", "G3", "A3", "Bb3", "C4", "Bb3", "A3", "G3"], 32, "steps"),
    (["C4", "G4", "D4", "A4", "E5", "B4", "F4", "C5"], 0, "leaps"),
    (["A3", "E4", "C5", "A4", "E5", "G4", "D5", "B3"], 73, "leaps"),
    (["D4", "E4", "F4", "G4", "F4", "E4", "D5"], 0, "steps_one_leap"),
    (["G4", "A4", "B4", "C5", "D5", "G4", "A4", "G4"], 40, "steps_one_leap"),
]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("names,program,label", MOTIONS)
def test_melodic_motion_of_lines(names, program, label, snr, tmp_path, tool_runner):
    path = _render(_line(names, ioi=0.35), tmp_path / "line.wav", program, snr, seed=len(names) + program)
    out = tool_runner(melodic_motion, None, path).output
    assert out["label"] == label, out
    midi = [synth.note_to_midi(n) for n in names]
    assert out["largest_interval"] == max(abs(b - a) for a, b in itertools.pairwise(midi)), out


# ------------------------------------------------------------------------------------------------ harmonic_changes

CHANGES = [(["C", "C", "C", "C"], 0, "same"), (["Dm", "Dm", "Dm"], 24, "same"), (["E", "E", "E", "E", "E"], 48, ("same", "one_chord")),
           (["Am", "F", "C", "G"], 0, "all_change"), (["D", "G", "A", "Bm"], 24, "all_change"),
           (["F", "C", "F", "C"], 19, "all_change"),
           (["G", "G", "G", "D"], 0, "one_change"), (["Em", "Em", "C", "C"], 24, "one_change"),
           (["A", "E", "E", "E"], 19, "one_change")]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("chords,program,label", CHANGES)
def test_harmonic_changes_of_block_chords(chords, program, label, snr, tmp_path, tool_runner):
    notes = [(0.4 + 1.1 * i, 1.0, p) for i, c in enumerate(chords) for p in synth.chord_pitches(c, 4)]
    path = _render(notes, tmp_path / "chords.wav", program, snr, seed=len(chords) + program)
    out = tool_runner(harmonic_changes, None, path).output
    # strings re-bowing one chord: the release fills the 0.1 s gap, so neither a rise nor a new chroma marks the
    # repeats; one long chord (which the vocabulary reads as 'same') is what is measured
    assert out["label"] in ((label,) if isinstance(label, str) else label), out
    if label == "one_change":
        where = 0.4 + 1.1 * next(i for i in range(1, len(chords)) if chords[i] != chords[i - 1])
        assert out["change_at_s"] and abs(out["change_at_s"][0] - where) < 0.15, out


def test_harmonic_changes_of_noise_alone(tmp_path, tool_runner):
    path = _save(synth.noise("pink", 3 * SR, np.random.default_rng(3)), tmp_path / "noise.wav")
    assert tool_runner(harmonic_changes, None, path).output["label"] in ("no_chords", "one_chord")


# ------------------------------------------------------------------------------------------------ cadence

TUNES = [
    (["D4", "E4", "F#4", "G4", "A4", "F#4", "E4"], "D4", 0, "finished"),
    (["D4", "E4", "F#4", "G4", "A4", "F#4", "E4"], "C#4", 0, "unfinished"),
    (["A3", "C4", "E4", "D4", "C4", "B3", "C4"], "A3", 73, "finished"),
    (["A3", "C4", "E4", "D4", "C4", "B3", "C4"], "B3", 73, "unfinished"),
    (["F4", "A4", "C5", "Bb4", "A4", "G4", "A4"], "F4", 40, "finished"),
    (["F4", "A4", "C5", "Bb4", "A4", "G4", "A4"], "G4", 40, "unfinished"),
]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("names,last,program,label", TUNES)
def test_cadence_of_tunes(names, last, program, label, snr, tmp_path, tool_runner):
    path = _render(_line([*names, last], last_s=1.0), tmp_path / "tune.wav", program, snr, seed=program)
    out = tool_runner(cadence, None, path).output
    assert out["label"] == label, out


PROGRESSIONS = [(["F", "Bb", "C", "F"], 0, "finished"), (["F", "Bb", "F", "C"], 0, "unfinished"),
                (["G", "Em", "D", "G"], 24, "finished"), (["G", "C", "Em", "D"], 24, "unfinished")]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("chords,program,label", PROGRESSIONS)
def test_cadence_of_chord_progressions(chords, program, label, snr, tmp_path, tool_runner):
    notes = [(0.4 + 1.0 * i, 0.95, p) for i, c in enumerate(chords) for p in synth.chord_pitches(c, 4)]
    path = _render(notes, tmp_path / "prog.wav", program, snr, seed=program + 1)
    out = tool_runner(cadence, None, path).output
    assert out["label"] == label, out


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("program", [19, 73])
def test_cadence_of_a_tune_cut_inside_its_last_note(program, snr, tmp_path, tool_runner):
    names = ["D4", "E4", "F#4", "G4", "A4", "F#4", "E4", "D4"]
    notes = _line(names, last_s=2.0)
    path = _render(notes, tmp_path / "cut.wav", program, snr, seed=9, cut_s=notes[-1][0] + 0.8)
    assert tool_runner(cadence, None, path).output["label"] == "cut_off"


def test_long_clips_are_read_within_the_notes_budget(tmp_path, tool_runner):
    """A 90 s clip: every descriptor analyses its first 60 s (melody.MAX_S), chroma and notes alike."""
    notes = [(0.3 + 1.05 * i, 1.0, p) for i, c in enumerate(["C", "F", "G", "C"]) for p in synth.chord_pitches(c, 4)]
    y = aio.load(synth.midi_track(notes, tmp_path / "four.wav"), sr=SR)
    path = _save(np.tile(y, int(np.ceil(90 * SR / len(y))))[: 90 * SR], tmp_path / "long.wav")
    for fn in (harmonic_changes, cadence):
        out = tool_runner(fn, None, path).output
        assert tuple(out["analysed_s"]) == (0.0, 60.0), out
    assert tool_runner(harmonic_changes, None, path).output["label"] == "some_change"  # C F G C C F ...: C->C same


# ------------------------------------------------------------------------------------------------ end to end (slow)

@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


def _e2e_clip(which: str, path) -> str:
    """Audio true by construction for each descriptor, in pink noise at 20 dB SNR."""
    if which == "register":  # a bass-range tune on a piano (D2 .. A2)
        return _render(_line(_shift(TUNE, -2)), path, 0, 20.0, seed=21)
    if which == "melodic_motion":  # a violin line of fifths, sixths and octaves
        return _render(_line(["G3", "D4", "B4", "E4", "C5", "A4", "D5", "G4"], ioi=0.35), path, 40, 20.0, seed=22)
    if which == "harmonic_changes":  # G three times, then D
        notes = [(0.4 + 1.1 * i, 1.0, p) for i, c in enumerate(["G", "G", "G", "D"]) for p in synth.chord_pitches(c, 4)]
        return _render(notes, path, 0, 20.0, seed=23)
    # cadence: a D major tune that stops on its leading note
    return _render(_line(["D4", "E4", "F#4", "G4", "A4", "F#4", "E4", "C#4"], last_s=1.0), path, 73, 20.0, seed=24)


@pytest.mark.slow
@pytest.mark.parametrize("which,question,choices,answer", [
    ("register", "Where in the pitch range does this piano part lie?",
     ["down in the deep bass", "around the middle of the keyboard", "way up at the top of the keyboard"], 0),
    ("melodic_motion", "How does the violin line get from note to note?",
     ["it creeps along through neighbouring notes", "it vaults across big intervals",
      "it walks by step and makes a single leap near the end"], 1),
    ("harmonic_changes", "What does the harmony of the accompaniment do?",
     ["it sits on one chord throughout", "it moves to a new chord every bar",
      "it holds one chord and changes just once, at the end"], 2),
    ("cadence", "Does this little melody sound finished when it stops?",
     ["yes, it settles on its home note", "no, it is left hanging", "it is chopped off mid-note"], 1),
])
def test_questions_reach_the_melodic_descriptors(which, question, choices, answer, agent, tmp_path):
    result = agent.ask(_e2e_clip(which, tmp_path / f"{which}.wav"), question, choices=choices)
    assert result.choice == choices[answer], result.rationale
    assert f"[property_{which}]" in result.rationale, result.rationale
    assert which in {c.tool for c in result.state.tool_calls}
