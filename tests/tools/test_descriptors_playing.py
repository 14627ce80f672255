"""The playing descriptors (audiomind/tools/descriptors/playing.py) on audio whose property is true by
construction: scales of harmonic tones with one note detuned by a known number of cents (and a whole scale
tuned off A440), fluidsynth chords whose notes start together, one after another or in a mix, a low cello
note held under a flute tune for all, part or none of it, and two instruments playing the same notes, different
notes, or taking turns; each clean and in pink noise at 15 dB SNR. The end-to-end questions (one per
descriptor, wordings the vocabulary does not list) load the embedded models and are marked slow."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.playing import chord_attack, sustained_bass, tuning, voicing_relation

SR = synth.SR
NOISE = [None, 15.0]  # clean, and pink noise at 15 dB SNR over the active part
needs_fluidsynth = pytest.mark.skipif(shutil.which("fluidsynth") is None or not synth.SOUNDFONT.exists(),
                                      reason="fluidsynth and fluid-soundfont-gm are needed")
FLUTE, CLARINET, CELLO, PIANO, TRUMPET = 73, 71, 42, 0, 56


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _save(x: np.ndarray, path: Path) -> str:
    return str(aio.write_wav(path, (0.6 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _scale(midi: list[int], cents: list[float], note_s: float = 0.45, gap_s: float = 0.08) -> np.ndarray:
    """Harmonic tones (six partials at 1/k, 20 ms attack, exponential decay) one after another, each note
    `cents` off its equal-tempered pitch."""
    t = np.arange(int(note_s * SR)) / SR
    env = np.minimum(1, t / 0.02) * np.exp(-t / 0.6) * np.minimum(1, (t[-1] - t) / 0.02)
    out = [np.zeros(SR // 4)]
    for m, c in zip(midi, cents):
        f = 440.0 * 2 ** ((m - 69 + c / 100) / 12)
        out += [env * sum(np.sin(2 * np.pi * k * f * t) / k for k in range(1, 7)), np.zeros(int(gap_s * SR))]
    return np.concatenate(out + [np.zeros(SR // 4)])


def _fluid(parts: list[tuple[list[tuple], int]], path: Path, snr: float | None, seed: int = 0) -> str:
    """Each part (notes (start s, duration s, name), General MIDI program) rendered by fluidsynth, mixed, noised."""
    ys = [aio.load(synth.midi_track(notes, path.with_suffix(f".p{k}.wav"), program=prog), sr=SR)
          for k, (notes, prog) in enumerate(parts)]
    n = max(len(y) for y in ys)
    mix = sum(np.pad(y / max(float(np.max(np.abs(y))), 1e-9), (0, n - len(y))) for y in ys)
    return _save(_noisy(np.asarray(mix), snr, seed), path)


# ------------------------------------------------------------------------------------------------- tuning

TUNING_CASES = [  # (MIDI notes, cents per note, the note out of tune (0-based) or None)
    ([60, 62, 64, 65, 67], [0, 0, 40, 0, 0], 2),          # a rising scale, the third note 40 cents sharp
    ([72, 71, 69, 67, 65], [0, 0, 0, 0, -35], 4),         # a falling scale, the last note 35 cents flat
    ([57, 59, 61, 62, 64], [20, 20, 20, 20, 20], None),   # in tune with itself, 20 cents above A440
    ([67, 69, 71, 72, 74], [-15, 30, -15, -15, -15], 1),  # tuned 15 cents low; the second note 45 cents off that
    ([62, 64, 66, 67, 69, 71], [3, -4, 2, 0, -3, 4], None),  # scatter of a few cents: in tune
]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("case", range(len(TUNING_CASES)))
def test_tuning_names_the_detuned_note_and_ignores_an_offset_of_the_whole_scale(case, snr, tmp_path, tool_runner):
    midi, cents, off = TUNING_CASES[case]
    path = _save(_noisy(_scale(midi, cents), snr, seed=case), tmp_path / "scale.wav")
    out = tool_runner(tuning, {}, path).output
    assert len(out["notes"]) == len(midi), out["notes"]
    if off is None:
        assert out["label"] == "in_tune", out
        assert abs(out["reference_cents"] - float(np.median(cents))) <= 6.0  # the scale's own tuning, +-6 cents
    else:
        assert out["label"] == "out_of_tune" and out["off_note"] == off, out
        expected = cents[off] - float(np.median(cents))
        assert abs(out["off_cents"] - expected) <= 8.0, out  # the size of the error, +-8 cents
        assert [n["out_of_tune"] for n in out["notes"]].count(True) == 1


# ------------------------------------------------------------------------------------------- chord_attack

def _chord(kind: str) -> list[tuple]:
    pitches = ["C3", "E3", "G3", "C4"]
    if kind == "block":
        return [(0.5, 2.5, p) for p in pitches]
    if kind == "arpeggiated":
        return [(0.5 + 0.35 * i, 2.5 - 0.35 * i, p) for i, p in enumerate(pitches)]
    if kind == "spread_then_block":
        return [(0.5 + 0.35 * i, 1.3 - 0.35 * i, p) for i, p in enumerate(pitches)] + [(2.3, 1.5, p) for p in pitches]
    return [(0.5, 1.3, p) for p in pitches] + [(2.3 + 0.35 * i, 1.8 - 0.35 * i, p) for i, p in enumerate(pitches)]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("program", [PIANO, 24])  # piano, nylon guitar
@pytest.mark.parametrize("kind", ["block", "arpeggiated", "spread_then_block", "block_then_spread"])
def test_chord_attack_tells_struck_together_from_one_after_another(kind, program, snr, tmp_path, tool_runner):
    path = _fluid([(_chord(kind), program)], tmp_path / "chord.wav", snr)
    out = tool_runner(chord_attack, {}, path).output
    assert out["label"] == kind, out


# ------------------------------------------------------------------------------------------ sustained_bass

TUNE = ["E5", "D5", "C5", "D5", "E5", "G5", "E5", "D5", "C5", "D5"]


def _tune(start: float = 0.5, note_s: float = 0.4) -> list[tuple]:
    return [(start + i * note_s, note_s * 0.95, n) for i, n in enumerate(TUNE)]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kind", ["throughout", "enters", "stops", "none"])
def test_sustained_bass_finds_a_low_held_note_and_when_it_sounds(kind, snr, tmp_path, tool_runner):
    end = 0.5 + 0.4 * len(TUNE)
    held = {"throughout": [(0.5, end - 0.5, "C3")], "enters": [(2.3, end - 2.3, "C3")],
            "stops": [(0.5, 1.8, "C3")], "none": []}[kind]
    parts = [(_tune(), FLUTE)] + ([(held, CELLO)] if held else [])
    out = tool_runner(sustained_bass, {}, _fluid(parts, tmp_path / "drone.wav", snr)).output
    assert out["label"] == kind, out
    if kind != "none":
        assert out["note"] == "C3"


# ---------------------------------------------------------------------------------------- voicing_relation

LINE = ["C5", "D5", "E5", "F5", "G5", "E5", "C5"]
THIRDS = ["E5", "F5", "G5", "A5", "B5", "G5", "E5"]


def _line(names: list[str], start: float = 0.5, note_s: float = 0.45) -> list[tuple]:
    return [(start + i * note_s, note_s * 0.95, n) for i, n in enumerate(names)]


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kind,second", [("unison", CLARINET), ("harmony", CLARINET), ("alternating", CLARINET),
                                         ("unison", TRUMPET), ("alternating", TRUMPET)])
def test_voicing_relation_tells_unison_harmony_and_turns(kind, second, snr, tmp_path, tool_runner):
    a = _line(LINE)
    b = {"unison": _line(LINE), "harmony": _line(THIRDS),
         "alternating": _line(LINE, start=0.5 + 0.45 * len(LINE) + 0.3)}[kind]
    out = tool_runner(voicing_relation, {}, _fluid([(a, FLUTE), (b, second)], tmp_path / "duo.wav", snr)).output
    assert out["label"] == kind, out
