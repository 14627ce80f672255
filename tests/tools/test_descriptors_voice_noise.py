"""The voice and the noise around it (audiomind/tools/descriptors/voice_noise.py) on audio whose property is true
by construction: a synthetic voice (harmonic syllables through formants) whose last syllable glides up, down or
stays; a flite sentence over a pink-noise bed at a set SNR; flite sentences with one word said at 0.35 x speed;
two flite voices sharing one sentence. Signal tests also run in pink noise at 15 dB SNR. Tests that read words
(Whisper) or ask the agent load embedded models and are slow."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.voice_noise import (
    drawn_out_word,
    noise_level,
    phonemes,
    sentence_melody,
    voice_change_word,
)

SR = synth.SR
# Measured misses of version 1, kept visible (strict: a fix makes them fail until removed from this table)
KNOWN_MISSES = {
    ("drawn_out", "river", None): "Whisper gives the slowed word's sound to the word before it ('the')",
    ("drawn_out", "river", 15.0): "Whisper gives the slowed word's sound to the word before it ('the')",
    ("drawn_out", "goodness", None): "Whisper's span of 'My' takes in part of the slowed 'goodness'",
    ("drawn_out", "goodness", 15.0): "Whisper's word spans in noise: 'what' reads as the most stretched",
    ("voice_change", "the", 15.0): "in noise the f0 split falls a word late ('it')",
    ("one_voice",): "one flite voice's sentence halves differ by a d-vector cosine < 0.8 or 4 st: a false change",
}


def _known(request, *key) -> None:
    if key in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[key]))


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _write(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.7 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _syllable(f0_start: float, f0_end: float, seconds: float) -> np.ndarray:
    """A voiced syllable: harmonics of an f0 gliding (log-linearly) from f0_start to f0_end, shaped by formants
    at 650, 1100 and 2500 Hz, with 30 ms ramps."""
    t = np.arange(int(seconds * SR)) / SR
    f0 = f0_start * (f0_end / f0_start) ** (t / t[-1])
    phase = 2 * np.pi * np.cumsum(f0) / SR
    y = np.zeros_like(t)
    for k in range(1, int(4000 / max(f0_start, f0_end))):
        f = k * f0
        gain = sum(1.0 / (1 + ((f - fc) / bw) ** 2) for fc, bw in ((650, 120), (1100, 150), (2500, 250)))
        y += gain / k * np.sin(k * phase)
    env = np.minimum(1, np.minimum(t, t[-1] - t) / 0.03)
    return y * env


def _utterance(ending: str, base: float = 120.0) -> np.ndarray:
    """Six syllables declining gently from base (2 st over the first five), then a last syllable of 0.35 s that
    rises 5 st (a question), falls 5 st (a statement) or stays level."""
    parts = []
    for i in range(5):
        f = base * 2 ** (-(2 * i / 4) / 12)
        parts += [_syllable(f * 1.03, f, 0.2), np.zeros(int(0.06 * SR))]
    f = base * 2 ** (-2 / 12)
    end = {"rise": f * 2 ** (5 / 12), "fall": f * 2 ** (-5 / 12), "level": f}[ending]
    parts.append(_syllable(f, end, 0.35))
    return np.concatenate(parts)


def _pad(x: np.ndarray, lead: float = 0.5, tail: float = 0.5) -> np.ndarray:
    return np.concatenate([np.zeros(int(lead * SR)), x, np.zeros(int(tail * SR))])


@pytest.mark.parametrize("snr", [None, 15.0])
@pytest.mark.parametrize("ending", ["rise", "fall", "level"])
def test_sentence_melody_reads_the_ending(ending, snr, audio_dir, tool_runner):
    x = _noisy(_pad(_utterance(ending)), snr, seed=3)
    out = tool_runner(sentence_melody, {}, _write(x, audio_dir / f"melody_{ending}_{snr}.wav")).output
    assert out["label"] == ending, out


@pytest.mark.parametrize("snr", [None, 15.0])
def test_sentence_melody_lists_each_utterance(snr, audio_dir, tool_runner):
    x = _noisy(_pad(np.concatenate([_utterance("rise", 180.0), np.zeros(int(0.9 * SR)), _utterance("fall", 180.0)])),
               snr, seed=4)
    out = tool_runner(sentence_melody, {}, _write(x, audio_dir / f"melody_two_{snr}.wav")).output
    assert [u["label"] for u in out["utterances"]] == ["rise", "fall"], out
    assert out["label"] == "fall"


@pytest.fixture(scope="module")
def sentence(tmp_path_factory) -> np.ndarray:
    p = tmp_path_factory.mktemp("voice_noise") / "sentence.wav"
    return aio.load(synth.say("The parcel arrived this morning and the neighbours kept it for us.", p), sr=SR,
                    mono=True).astype(np.float32)


@pytest.mark.parametrize("snr,expected", [(None, "none"), (28.0, "faint"), (9.0, "moderate"), (-3.0, "heavy")])
def test_noise_level_reads_the_snr_of_a_noise_bed(snr, expected, sentence, audio_dir, tool_runner):
    x = _pad(sentence, 0.8, 0.8)
    if snr is not None:  # the bed runs through the whole clip (its pauses too), at snr re the voice's active power
        n = synth.noise("pink", len(x), np.random.default_rng(5))
        x = x + n * np.sqrt(synth.active_power(sentence, SR) / 10 ** (snr / 10))
    out = tool_runner(noise_level, {}, _write(x, audio_dir / f"noise_{snr}.wav")).output
    assert out["label"] == expected, out
    if snr is not None:  # the measured SNR tracks the constructed one (active-level definitions differ a little)
        assert abs(out["snr_db"] - snr) <= 4.0, out


def test_phonemes_from_spelling():
    assert phonemes("the") == 2 and phonemes("through") == 3 and phonemes("cat") == 3
    assert phonemes("thinking") < len("thinking")


# ---------------------------------------------------------------------------------- word descriptors (Whisper)

def _said(parts: list[tuple[str, str, float]], path) -> str:
    """Flite parts (text, voice, rate) joined with 40 ms gaps, 0.5 s of silence around."""
    ys = []
    for i, (text, voice, rate) in enumerate(parts):
        ys += [aio.load(synth.say(text, path.with_name(f"{path.stem}_{i}.wav"), voice=voice, rate=rate), sr=SR,
                        mono=True), np.zeros(int(0.04 * SR))]
    return np.concatenate(ys)


@pytest.mark.slow
@pytest.mark.parametrize("snr", [None, 15.0])
@pytest.mark.parametrize("parts,word", [
    ([("We walked along the", "slt", 1.0), ("river", "slt", 0.35), ("after dinner.", "slt", 1.0)], "river"),
    ([("My", "rms", 1.0), ("goodness", "rms", 0.35), ("what a day it has been.", "rms", 1.0)], "goodness"),
])
def test_drawn_out_word_names_the_slowed_word(parts, word, snr, audio_dir, tool_runner, request):
    _known(request, "drawn_out", word, snr)
    x = _noisy(_pad(_said(parts, audio_dir / f"drawn_{word}.wav")), snr, seed=6)
    out = tool_runner(drawn_out_word, {}, _write(x, audio_dir / f"drawn_{word}_{snr}.wav")).output
    assert out["drawn_out"] is not None, out
    assert out["words"][out["drawn_out"]]["word"].lower() == word, out


@pytest.mark.slow
@pytest.mark.parametrize("snr", [None, 15.0])
@pytest.mark.parametrize("parts,word", [
    ([("The children played in", "slt", 1.0), ("the garden until it got dark.", "kal", 1.0)], "the"),
    ([("I would like a cup of", "rms", 1.0), ("coffee with milk please.", "slt", 1.0)], "coffee"),
])
def test_voice_change_word_names_the_first_word_of_the_new_voice(parts, word, snr, audio_dir, tool_runner, request):
    _known(request, "voice_change", word, snr)
    x = _noisy(_pad(_said(parts, audio_dir / f"switch_{word}.wav")), snr, seed=7)
    out = tool_runner(voice_change_word, {}, _write(x, audio_dir / f"switch_{word}_{snr}.wav")).output
    assert out["first_new"] is not None, out
    assert out["words"][out["first_new"]]["word"].lower() == word, out


@pytest.mark.slow
def test_one_voice_has_no_change(sentence, audio_dir, tool_runner, request):
    _known(request, "one_voice")
    out = tool_runner(voice_change_word, {}, _write(_pad(sentence), audio_dir / "one_voice.wav")).output
    assert out["first_new"] is None, out
