"""Music shared by the music tool tests, true by construction: sine tones, a FluidR3 piano melody and white
noise (generated once per test session)."""

from __future__ import annotations

import numpy as np
import pytest

from audiomind import synth

SR = synth.SR


@pytest.fixture(scope="session")
def sines(audio_dir, helpers):
    return {
        f: helpers.write(synth.tone(f, 2.0, amplitude=0.3), audio_dir / f"sine{f}.wav")
        for f in (220, 440, 880)
    }


@pytest.fixture(scope="session")
def melody(audio_dir):
    """FluidR3 piano C4, E4, G4, C5, each 0.5 s, starting at 0.5, 1.0, 1.5 and 2.0 s."""
    return synth.melody(["C4", "E4", "G4", "C5"], audio_dir / "melody_ceg.wav", note_s=0.5, lead_s=0.5)


@pytest.fixture(scope="session")
def noise(audio_dir, helpers):
    rng = np.random.default_rng(7)
    return helpers.write(
        (0.1 * rng.standard_normal(4 * SR)).astype(np.float32), audio_dir / "white_noise.wav"
    )
