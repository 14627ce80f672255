"""How sounds are mixed and joined over time (audiomind/tools/descriptors/mix.py) on audio whose property is true by
construction: numpy 'music' of harmonic notes under a flite sentence, turned down 16 dB, left level or stopped
while the voice speaks (0.3 s fades); two numpy pieces of different timbre joined by a 2 s crossfade, a cut
inside a note, or 1.5 s of silence, and fluidsynth melodies of four pairs of instruments joined the same ways (and
one instrument throughout: no change); a synthetic sound played twice, transposed, or followed by another sound.
The ducking construction also over fluidsynth beds of four instruments. Each also in pink noise at 15 dB SNR. The end-to-end questions (slow) load MiniLM, Whisper and Silero."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.mix import ducking, segue, sound_match

SR = synth.SR
NOISE = [None, 15.0]
# Measured misses (ducking, segue: version 2; sound_match: version 1), kept visible (strict: a fix makes them fail until removed from this table)
KNOWN_MISSES: dict[tuple, str] = {
    ("ducking", -16.0, 15.0): "the ducked notes sink under the 15 dB SNR pink noise at their peaks too: presence 1.9 dB "
                              "(< 3: stops)",
    ("ducking", -2.0, None): "the speech's gaps chosen by least sound away from the peaks fall on the notes' decays: "
                             "-8.1 dB (dips)",
    ("ducking", -2.0, 15.0): "the speech's gaps chosen by least sound away from the peaks fall on the notes' decays: "
                             "-8.4 dB (dips)",
    ("ducking_fl", 0, -16.0, 15.0): "the ducked piano under 15 dB SNR pink noise: presence 2.2 dB (< 3: stops)",
    ("ducking_fl", 73, -16.0, 15.0): "the ducked flute under 15 dB SNR pink noise: presence 2.9 dB (< 3: stops)",
    ("segue_fl", 24, 0, "cut", None): "the nylon guitar's ringing notes blur the cut: a 1.2 s ramp (crossfade)",
    ("sound_match", "reed_twice", 15.0): "the -6 dB second reed in noise: spectra r < 0.95 after floor subtraction",
    ("sound_match", "bell_up_fifth", 15.0): "in noise the shifted spectra correlate < 0.95 (similar)",
    ("sound_match", "reed_down_fourth", 15.0): "in noise the shifted spectra correlate < 0.95 (different)",
}


def _known(request, *key) -> None:
    if key in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[key]))


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _write(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.7 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _notes(seconds: float, seed: int, partials: int = 5, decay: float = 3.0, note_s: float = 0.4,
           octave: float = 0.5) -> np.ndarray:
    """Harmonic notes (`partials` partials falling as 1/k, random pitches of a C major scale), with decays."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    y = np.zeros(n)
    t = np.arange(int(2 * note_s * SR)) / SR
    scale = [261.6, 293.7, 329.6, 349.2, 392.0, 440.0, 493.9]
    for start in range(0, n, int(note_s * SR)):
        f = scale[rng.integers(len(scale))] * octave
        note = sum(np.sin(2 * np.pi * k * f * t) / k for k in range(1, partials + 1) if k * f < SR / 2)
        note = note * np.exp(-t * decay)
        m = min(len(note), n - start)
        y[start:start + m] += note[:m]
    return y


def _ramp(n: int, a: int, b: int, up: bool) -> np.ndarray:
    g = np.ones(n) if not up else np.zeros(n)
    r = np.linspace(0, 1, max(1, b - a))
    g[a:b] = r if up else 1 - r
    if up:
        g[b:] = 1.0
    else:
        g[b:] = 0.0
    return g


@pytest.fixture(scope="module")
def sentence(tmp_path_factory) -> np.ndarray:
    p = tmp_path_factory.mktemp("mix") / "sentence.wav"
    return aio.load(synth.say("Passengers for the evening ferry should now go to gate four.", p),
                    sr=SR, mono=True).astype(np.float32)


# ------------------------------------------------------------------------------------------------- ducking

def _ducked(sentence: np.ndarray, duck_db: float | None, seed: int, bed: np.ndarray | None = None) -> np.ndarray:
    """Music 2.5 s alone, under the sentence at duck_db (None: it stops), then 2 s alone again; 0.3 s fades that
    end where the voice starts and start where it ends. The voice 6 dB over the music's level alone."""
    lead, tail, fade = int(2.5 * SR), int(2.0 * SR), int(0.3 * SR)
    n = lead + len(sentence) + tail
    music = _notes(n / SR + 0.01, seed)[:n] if bed is None else np.resize(bed, n)
    g_in = 0.0 if duck_db is None else 10 ** (duck_db / 20)
    gain = np.ones(n)
    gain[lead - fade:lead] = np.linspace(1, g_in, fade)
    gain[lead:lead + len(sentence)] = g_in
    gain[lead + len(sentence):lead + len(sentence) + fade] = np.linspace(g_in, 1, fade)
    voice = np.zeros(n)
    voice[lead:lead + len(sentence)] = sentence
    voice *= np.sqrt(float(np.mean(music ** 2)) * 10 ** 0.6 / synth.active_power(sentence, SR))
    return voice + music * gain


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("duck_db,expected", [(-16.0, "dips"), (0.0, "level"), (None, "stops"), (-2.0, "level")])
def test_ducking_reads_what_the_music_does_under_the_voice(duck_db, expected, snr, sentence, audio_dir, tool_runner,
                                                           request):
    _known(request, "ducking", duck_db, snr)
    x = _noisy(_ducked(sentence, duck_db, seed=4), snr, seed=11)
    out = tool_runner(ducking, {}, _write(x, audio_dir / f"duck_{duck_db}_{snr}.wav")).output
    assert out["label"] == expected, out
    assert out["returns_after"] is True, out
    if expected == "dips" and snr is None:  # the measured drop, within 4 dB of the 16 dB turned down
        assert -20.0 <= out["change_db"] <= -12.0, out


@pytest.mark.xfail(strict=True, reason="Silero holds 0-0.84 s of the numpy notes as speech (level)")
def test_ducking_without_speech_says_so(audio_dir, tool_runner):
    out = tool_runner(ducking, {}, _write(_notes(5.0, 2), audio_dir / "duck_music_only.wav")).output
    assert out["label"] == "no_speech", out


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("duck_db,expected", [(-16.0, "dips"), (0.0, "level"), (None, "stops"), (-2.0, "level")])
@pytest.mark.parametrize("program", [0, 12, 73, 24])  # piano, marimba, flute, nylon guitar
def test_ducking_on_fluidsynth_beds(program, duck_db, expected, snr, sentence, audio_dir, tool_runner, request):
    """The same construction with a fluidsynth bed (three random 22-note melodies of one instrument, looped)."""
    _known(request, "ducking_fl", program, duck_db, snr)
    bed = np.concatenate([_fl_melody(program, s, audio_dir / f"bed_{program}_{s}.wav") for s in (5, 6, 7)])
    x = _noisy(_ducked(sentence, duck_db, seed=4, bed=bed), snr, seed=11)
    out = tool_runner(ducking, {}, _write(x, audio_dir / f"duck_fl_{program}_{duck_db}_{snr}.wav")).output
    assert out["label"] == expected, out


# --------------------------------------------------------------------------------------------------- segue

def _pieces(kind: str, seed: int) -> tuple[np.ndarray, float]:
    """A mellow piece (2 partials, slow decay, 0.5 s notes) and a bright one (12 partials, plucked, 0.25 s
    notes, an octave higher), joined by a 2 s linear crossfade, a cut inside a note, or 1.5 s of silence.
    Returns the audio and where the second takes over (s)."""
    a_s, b_s = 4.0, 4.0
    first = _notes(a_s + 2.0, seed, partials=2, decay=1.0, note_s=0.5)
    second = _notes(b_s + 2.0, seed + 1, partials=12, decay=6.0, note_s=0.25, octave=1.0)
    second *= np.sqrt(np.mean(first ** 2) / np.mean(second ** 2))
    if kind == "crossfade":
        ov = int(2.0 * SR)
        na = int(a_s * SR) + ov // 2
        x = np.zeros(na + int(b_s * SR))
        x[:na] += first[:na] * _ramp(na, na - ov, na, up=False)
        sb = len(x) - (na - ov)
        x[na - ov:] += second[:sb] * _ramp(sb, 0, ov, up=True)
        return x, a_s
    if kind == "cut":
        na = int(a_s * SR) + int(0.17 * SR)  # inside a note
        return np.concatenate([first[:na], second[:int(b_s * SR)]]), na / SR
    tail = _ramp(int(a_s * SR), int((a_s - 0.3) * SR), int(a_s * SR), up=False)
    return np.concatenate([first[:int(a_s * SR)] * tail, np.zeros(int(1.5 * SR)), second[:int(b_s * SR)]]), a_s + 1.5


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kind,expected", [("crossfade", "crossfade"), ("cut", "cut"), ("pause", "pause")])
def test_segue_tells_a_crossfade_from_a_cut_and_a_pause(kind, expected, snr, audio_dir, tool_runner, request):
    _known(request, "segue", kind, snr)
    x, at = _pieces(kind, seed=21)
    out = tool_runner(segue, {}, _write(_noisy(x, snr, seed=5), audio_dir / f"segue_{kind}_{snr}.wav")).output
    assert out["label"] == expected, out
    assert abs(out["change_s"] - at) <= 1.2, out  # where the second takes over, within a second or so


def test_segue_on_one_piece_finds_no_change(audio_dir, tool_runner):
    out = tool_runner(segue, {}, _write(_notes(8.0, 3, partials=2, decay=1.0, note_s=0.5),
                                        audio_dir / "segue_one.wav")).output
    assert out["label"] == "no_change", out


_FL: dict[tuple[int, int], np.ndarray] = {}


def _fl_melody(program: int, seed: int, path) -> np.ndarray:
    """22 random C-major notes (0.3 s apart, 0.27 s long) of one General MIDI instrument through fluidsynth
    (rendered once per program and seed)."""
    if (program, seed) in _FL:
        return _FL[(program, seed)].copy()
    rng = np.random.default_rng(seed)
    scale = [60, 62, 64, 65, 67, 69, 71, 72]
    notes = [(i * 0.3, 0.27, int(scale[rng.integers(len(scale))]), 100) for i in range(22)]
    _FL[(program, seed)] = aio.load(synth.midi_track(notes, path, program=program), sr=SR, mono=True).astype(np.float64)
    return _FL[(program, seed)].copy()


def _join(a: np.ndarray, b: np.ndarray, kind: str) -> tuple[np.ndarray, float]:
    """4 s of a, then b: a 2 s linear crossfade, a cut, or a 0.3 s fade-out and 1.5 s of silence."""
    n, ov = int(4.0 * SR), int(2.0 * SR)
    if kind == "cut":
        return np.concatenate([a[:n], b[:n]]), 4.0
    if kind == "pause":
        return np.concatenate([a[:n] * _ramp(n, n - int(0.3 * SR), n, up=False), np.zeros(int(1.5 * SR)), b[:n]]), 5.5
    na = n + ov // 2
    x = np.zeros(na + n)
    x[:na] += a[:na] * _ramp(na, na - ov, na, up=False)
    sb = len(x) - (na - ov)
    x[na - ov:] += b[:sb] * _ramp(sb, 0, ov, up=True)
    return x, 4.0


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kind", ["crossfade", "cut", "pause"])
@pytest.mark.parametrize("first,second", [(0, 12), (24, 0), (73, 71), (40, 19)])  # piano>marimba, guitar>piano,
def test_segue_on_fluidsynth_instruments(first, second, kind, snr, audio_dir, tool_runner, request):  # flute>clarinet,
    _known(request, "segue_fl", first, second, kind, snr)                                               # violin>organ
    a = _fl_melody(first, 1, audio_dir / f"fl_{first}_a.wav")
    b = _fl_melody(second, 2, audio_dir / f"fl_{second}_b.wav")
    b *= np.sqrt(np.mean(a ** 2) / np.mean(b ** 2))
    x, at = _join(a, b, kind)
    out = tool_runner(segue, {}, _write(_noisy(x, snr, seed=5), audio_dir / f"fl_{first}_{second}_{kind}_{snr}.wav"))
    assert out.output["label"] == kind, out.output
    assert abs(out.output["change_s"] - at) <= 1.2, out.output


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("program", [0, 24, 73, 40])
def test_segue_on_one_fluidsynth_piece_finds_no_change(program, snr, audio_dir, tool_runner):
    x = np.concatenate([_fl_melody(program, 3, audio_dir / f"fl1_{program}_a.wav"),
                        _fl_melody(program, 4, audio_dir / f"fl1_{program}_b.wav")])
    out = tool_runner(segue, {}, _write(_noisy(x, snr, seed=5), audio_dir / f"fl1_{program}_{snr}.wav")).output
    assert out["label"] == "no_change", out


# --------------------------------------------------------------------------------------------- sound_match

def _bell(f0: float, seconds: float = 0.8) -> np.ndarray:
    """An inharmonic struck sound (partials at 1, 2.76, 5.40, 8.93 x f0, each decaying at its own rate)."""
    t = np.arange(int(seconds * SR)) / SR
    return sum(np.sin(2 * np.pi * r * f0 * t) * np.exp(-t * d) / (1 + i)
               for i, (r, d) in enumerate([(1.0, 4.0), (2.76, 6.0), (5.40, 9.0), (8.93, 12.0)]))


def _reed(f0: float, seconds: float = 0.8) -> np.ndarray:
    """A held reed-like tone: odd harmonics only, a 50 ms attack, steady, a 50 ms release."""
    t = np.arange(int(seconds * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 16, 2) if k * f0 < SR / 2)
    return y * np.clip(np.minimum(t / 0.05, (seconds - t) / 0.05), 0, 1)


def _two(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    gap = np.zeros(int(0.7 * SR))
    return np.concatenate([np.zeros(int(0.4 * SR)), a, gap, b, np.zeros(int(0.4 * SR))])


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("case,expected", [("bell_twice", "same"), ("reed_twice", "same"),
                                           ("bell_up_fifth", "transposed_up"), ("reed_down_fourth", "transposed_down"),
                                           ("bell_then_reed", "different"), ("reed_then_noise", "different")])
def test_sound_match_tells_the_same_sound_from_another(case, expected, snr, audio_dir, tool_runner, request):
    _known(request, "sound_match", case, snr)
    rng = np.random.default_rng(8)
    noise_burst = rng.standard_normal(int(0.5 * SR)) * np.exp(-np.arange(int(0.5 * SR)) / SR * 8)
    pairs = {"bell_twice": (_bell(440), _bell(440)), "reed_twice": (_reed(220), 0.5 * _reed(220)),
             "bell_up_fifth": (_bell(440), _bell(440 * 2 ** (7 / 12))),
             "reed_down_fourth": (_reed(330), _reed(330 * 2 ** (-5 / 12))),
             "bell_then_reed": (_bell(440), _reed(440)), "reed_then_noise": (_reed(220), noise_burst)}
    a, b = pairs[case]
    out = tool_runner(sound_match, {}, _write(_noisy(_two(a, b), snr, seed=6), audio_dir / f"sm_{case}_{snr}.wav")).output
    assert out["label"] == expected, out
    if expected.startswith("transposed"):
        assert out["shift_semitones"] == (7 if case == "bell_up_fifth" else -5), out


def test_sound_match_needs_two_sounds(audio_dir, tool_runner):
    out = tool_runner(sound_match, {}, _write(_two(_bell(440), np.zeros(10))[: int(1.5 * SR)],
                                              audio_dir / "sm_one.wav")).output
    assert out["label"] == "one_sound", out


@pytest.mark.slow
@pytest.mark.parametrize("kind,answer", [("crossfade", 0), ("cut", 1), ("pause", 2)])
def test_segue_answers_a_question_end_to_end(kind, answer, audio_dir, tmp_path):
    """Flute then clarinet (fluidsynth) joined each way, pink noise at 15 dB; wordings in no vocabulary list."""
    from audiomind import AudioMind

    a = _fl_melody(73, 1, audio_dir / "fl_73_a.wav")
    b = _fl_melody(71, 2, audio_dir / "fl_71_b.wav")
    b *= np.sqrt(np.mean(a ** 2) / np.mean(b ** 2))
    x, _ = _join(a, b, kind)
    path = _write(_noisy(x, 15.0, seed=9), audio_dir / f"e2e_segue_{kind}.wav")
    choices = ["the melodies merge, the old one sinking under the new",
               "the old melody is chopped and the new one is right there",
               "a silent interval separates them"]
    agent = AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path)
    result = agent.ask(path, "What happens at the join between the two melodies?", choices=choices)
    assert result.choice == choices[answer], result.rationale
    assert "[property_segue]" in result.rationale, result.rationale
