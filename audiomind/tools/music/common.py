"""What the music feature tools share: the analysis rate and pitch-class names."""

from __future__ import annotations

# librosa analyses run on the shared 16 kHz decode (CQT up to B7 ~ 3.95 kHz fits under 8 kHz)
from audiomind.tools.window import SR

PITCH_CLASSES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")


def midi_name(m: int) -> str:
    """A MIDI note number in scientific pitch notation (60 -> 'C4')."""
    return f"{PITCH_CLASSES[m % 12]}{m // 12 - 1}"
MAX_LISTED = 200  # notes / segments listed in an output; counts are always exact

__all__ = ["MAX_LISTED", "PITCH_CLASSES", "SR", "midi_name"]
