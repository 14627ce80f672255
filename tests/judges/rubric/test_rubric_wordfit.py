"""Quoted words scored against the audio by the recogniser's own decoder (teacher forcing), real Whisper."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.judges import wordfit

pytestmark = pytest.mark.slow


def _words(path):
    from audiomind.tools import asr

    y = aio.load(path, sr=16000).astype(np.float32)
    segs, _ = asr._model("tiny.en").transcribe(y, beam_size=5, word_timestamps=True, condition_on_previous_text=False)
    return [(w.word.strip(), w.start, w.end) for s in segs for w in s.words], len(y) / 16000


def test_said_words_fit_and_unsaid_words_do_not(tmp_path):
    path = synth.speech("the library opens at nine", tmp_path / "s.wav", voice="slt")
    words, dur = _words(path)
    said = wordfit.fit(str(path), "the library opens at nine", words, dur)
    unsaid = wordfit.fit(str(path), "please fasten your seat belts", words, dur)
    assert said is not None and unsaid is not None
    assert said.p >= 0.8 and unsaid.p <= 0.2
    assert said.gap_per_token > unsaid.gap_per_token + 2.0


def test_stretches_include_word_runs_sentences_and_whole():
    c = wordfit.stretches("pass the salt", ["Can", "you", "pass", "this", "out?", "Here", "you", "go."])
    assert c[0] == (2, 5) or (2, 5) in c
    assert (0, 5) in c and (5, 8) in c and (0, 8) not in c  # sentences, never a run of several
    assert wordfit.stretches("anything", []) == [(0, 0)]
