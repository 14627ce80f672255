"""A named sound that no AudioSet class is close to is still contradicted by a stretch that is speech."""

from __future__ import annotations

import pytest

from audiomind.judges import evidence as ev
from audiomind.reasoning.facts import TagWindow

pytestmark = pytest.mark.slow


def test_unnamed_sound_contradicted_by_speech_but_open_otherwise():
    phrase = "the triangle"  # no AudioSet class is close to it
    assert not ev.phrase_labels(phrase)
    speech = TagWindow(start_s=0.0, end_s=1.0, labels=[("Speech", 0.8), ("Music", 0.05)])
    music = TagWindow(start_s=0.0, end_s=1.0, labels=[("Music", 0.7), ("Musical instrument", 0.3)])
    assert ev.identify(phrase, speech).verdict == "contradicted"
    assert ev.identify(phrase, music).verdict == "unconfirmed"
    assert ev.identify(phrase, music, speech_share=0.9).verdict == "contradicted"
