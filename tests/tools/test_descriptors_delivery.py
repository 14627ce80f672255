"""How speech is delivered and framed (audiomind/tools/descriptors/delivery.py) on audio whose property is true by
construction: flite sentences cut inside a sounding word (at the clip's edge or followed by silence), split by a
silent gap or by a held synthetic 'uhhh' (a flat-pitch vowel), and laid over a numpy 'music' of harmonic notes
at a set voice-to-music ratio; each also in pink noise at 15 dB SNR. The end-to-end questions load MiniLM,
Whisper and Silero and are slow."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.delivery import fluency, speech_over_background, truncation

SR = synth.SR
NOISE = [None, 15.0]
# Measured misses of version 1, kept visible (strict: a fix makes them fail until removed from this table)
KNOWN_MISSES = {
    ("truncation", "complete", 15.0): "in noise the sentence's final decay can look like a cut (falls within 20 ms)",
    ("truncation", "start_at_edge", None): "the last word's natural decay into the clip edge reads as a cut end",
    ("truncation", "start_at_edge", 15.0): "the last word's natural decay into the clip edge reads as a cut end",
    ("fluency", "fluent", None): "flite's long final diphthong ('nine') reads as a held filler",
    ("fluency", "filled", 15.0): "pink noise lowers the held vowel's periodicity below the voiced threshold",
    ("speech_over_background", -12.0, None): "Silero finds no speech under music 12 dB louder (no_speech)",
    ("speech_over_background", -12.0, 15.0): "Silero finds no speech under music 12 dB louder (no_speech)",
}


def _known(request, *key) -> None:
    if key in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[key]))
SENTENCE = "The morning train to the coast leaves from the second platform at half past nine."


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _write(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.7 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


@pytest.fixture(scope="module")
def sentence(tmp_path_factory) -> np.ndarray:
    p = tmp_path_factory.mktemp("delivery") / "sentence.wav"
    return aio.load(synth.say(SENTENCE, p), sr=SR, mono=True).astype(np.float32)


def _cut_points(y: np.ndarray) -> tuple[int, int]:
    """Sample positions inside loud (sounding) frames at about 30% and 70% of the sentence."""
    db = 10 * np.log10(np.convolve(y.astype(np.float64) ** 2, np.ones(320) / 320, "same") + 1e-12)
    loud = db >= np.percentile(db[db > db.max() - 40], 60)
    out = []
    for share in (0.3, 0.7):
        i = int(share * len(y))
        out.append(i + int(np.argmax(loud[i:])))
    return out[0], out[1]


def _ramp(x: np.ndarray, start: bool, end: bool) -> np.ndarray:
    r = int(0.005 * SR)
    x = x.copy()
    if start:
        x[:r] *= np.linspace(0, 1, r)
    if end:
        x[-r:] *= np.linspace(1, 0, r)
    return x


# ---------------------------------------------------------------------------------------------- truncation

@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("case", ["complete", "end_padded", "end_at_edge", "start_at_edge", "both_at_edge"])
def test_truncation_finds_a_cut_inside_a_sounding_word(case, snr, sentence, audio_dir, tool_runner, request):
    _known(request, "truncation", case, snr)
    a, b = _cut_points(sentence)
    pad = np.zeros(int(0.5 * SR), dtype=np.float32)
    x, expected = {
        "complete": (sentence, "complete"),
        "end_padded": (sentence[:b], "cut_end"),
        "end_at_edge": (sentence[:b], "cut_end"),
        "start_at_edge": (sentence[a:], "cut_start"),
        "both_at_edge": (sentence[a:b], "cut_both"),
    }[case]
    if case == "end_padded":
        x = np.concatenate([_ramp(sentence[:b], False, True), pad])
    elif case != "complete":
        x = _ramp(x, case in ("start_at_edge", "both_at_edge"), case != "start_at_edge")
    out = tool_runner(truncation, {}, _write(_noisy(x, snr, seed=len(case)), audio_dir / f"trunc_{case}_{snr}.wav")).output
    assert out["label"] == expected, out


# ------------------------------------------------------------------------------------------------- fluency

def _held_vowel(seconds: float, f0: float = 125.0) -> np.ndarray:
    """A neutral vowel ('uhhh') at one pitch: harmonics of f0 shaped by formants at 600, 1200 and 2500 Hz."""
    t = np.arange(int(seconds * SR)) / SR
    y = np.zeros_like(t)
    for k in range(1, int(4000 / f0)):
        f = k * f0
        gain = sum(1.0 / (1 + ((f - fc) / bw) ** 2) for fc, bw in ((600, 120), (1200, 150), (2500, 250)))
        y += gain / k * np.sin(2 * np.pi * f * t)
    env = np.minimum(1, np.minimum(t, t[-1] - t) / 0.04)
    return (y * env).astype(np.float32)


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("case", ["fluent", "silent", "filled"])
def test_fluency_tells_filled_from_silent_pauses(case, snr, sentence, audio_dir, tool_runner, request):
    _known(request, "fluency", case, snr)
    # split at a quiet point near 45% of the sentence (between words)
    db = 10 * np.log10(np.convolve(sentence.astype(np.float64) ** 2, np.ones(320) / 320, "same") + 1e-12)
    lo, hi = int(0.4 * len(sentence)), int(0.6 * len(sentence))
    cut = lo + int(np.argmin(db[lo:hi]))
    first, second = sentence[:cut], sentence[cut:]
    level = np.sqrt(synth.active_power(sentence, SR))
    if case == "fluent":
        x = sentence
    elif case == "silent":
        x = np.concatenate([first, np.zeros(int(1.0 * SR), dtype=np.float32), second])
    else:
        v = _held_vowel(0.6)
        v = v * level / np.sqrt(np.mean(v ** 2))
        gap = np.zeros(int(0.12 * SR), dtype=np.float32)
        x = np.concatenate([first, gap, v, gap, second])
    out = tool_runner(fluency, {}, _write(_noisy(x, snr, seed=3), audio_dir / f"flu_{case}_{snr}.wav")).output
    expected = {"fluent": "fluent", "silent": "silent_pauses", "filled": "filled_pauses"}[case]
    assert out["label"] == expected, out
    if case == "silent":
        assert any(0.9 <= s["end_s"] - s["start_s"] <= 1.6 for s in out["silent"]), out


# ----------------------------------------------------------------------------------- speech over background

def _music(seconds: float, seed: int) -> np.ndarray:
    """Harmonic notes (0.4 s, 5 partials, random pitches of a C major scale), two at a time, with decays."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    y = np.zeros(n)
    t = np.arange(int(0.8 * SR)) / SR
    scale = [261.6, 293.7, 329.6, 349.2, 392.0, 440.0, 493.9]
    for start in range(0, n, int(0.4 * SR)):
        f = scale[rng.integers(len(scale))] / 2
        note = sum(np.sin(2 * np.pi * k * f * t) / k for k in range(1, 6)) * np.exp(-t * 3)
        m = min(len(note), n - start)
        y[start:start + m] += note[:m]
    return y.astype(np.float32)


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("ratio_db,expected", [(20.0, "voice_louder"), (0.0, "about_equal"), (-12.0, "background_louder")])
def test_speech_over_background_reads_the_mixing_ratio(ratio_db, expected, snr, sentence, audio_dir, tool_runner,
                                                      request):
    _known(request, "speech_over_background", ratio_db, snr)
    lead = int(0.6 * SR)
    music = _music(len(sentence) / SR + 1.2, seed=int(ratio_db) + 50)
    voice = np.zeros_like(music)
    voice[lead:lead + len(sentence)] = sentence
    # the voice's active power against the music's power over the same stretch
    pm = float(np.mean(music[lead:lead + len(sentence)].astype(np.float64) ** 2))
    music = music * np.sqrt(synth.active_power(sentence, SR) / pm / 10 ** (ratio_db / 10))
    x = _noisy(voice + music, snr, seed=9)
    out = tool_runner(speech_over_background, {}, _write(x, audio_dir / f"sob_{ratio_db}_{snr}.wav")).output
    assert out["label"] == expected, out
