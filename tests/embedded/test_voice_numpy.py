"""The NumPy voice encoder (audiomind.embedded.voice) against resemblyzer's torch VoiceEncoder on the
packaged weights: the legacy-format reader gives torch.load's tensors bit for bit, the mel front end,
partial slices and embeddings match, and the speaker tools no longer import torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from audiomind.embedded import models

pytestmark = pytest.mark.skipif(not models.check("resemblyzer")[0], reason="resemblyzer not installed")


def _speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    """A voiced-sounding signal (harmonics of a gliding f0 with syllable-rate amplitude) at 16 kHz."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    f0 = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / 16000
    y = sum(np.sin(k * phase) / k for k in range(1, 12)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2)
    return (0.1 * y + 0.003 * rng.standard_normal(len(t))).astype(np.float32)


@pytest.mark.slow
def test_numpy_voice_encoder_matches_resemblyzer():
    import torch
    from resemblyzer import VoiceEncoder as TorchEncoder
    from resemblyzer import audio as r_audio

    from audiomind.embedded import voice

    path = models.resemblyzer_weights()
    state = torch.load(path, map_location="cpu", weights_only=False)["model_state"]
    ours_state = voice.read_legacy_torch(path)["model_state"]
    assert set(state) == set(ours_state)
    for k, v in state.items():
        assert np.array_equal(v.numpy(), ours_state[k]), k

    ref = TorchEncoder(device="cpu", verbose=False, weights_fpath=path)
    ref.eval()
    ours = voice.VoiceEncoder(path)
    for seconds in (0.8, 3.3, 7.0):
        wav = _speechlike(seconds, seed=int(seconds * 10))
        # two code paths (ours and resemblyzer's librosa call): equal up to float32 rounding on any CPU
        np.testing.assert_allclose(voice.wav_to_mel_spectrogram(wav), r_audio.wav_to_mel_spectrogram(wav),
                                   rtol=1e-5, atol=1e-7)
        slices = voice.compute_partial_slices(len(wav), 1.3, 0.75)
        assert slices == TorchEncoder.compute_partial_slices(len(wav), 1.3, 0.75)
        e1, p1, _ = ours.embed_utterance(wav, return_partials=True)
        e2, p2, _ = ref.embed_utterance(wav, return_partials=True)
        assert np.abs(e1 - e2).max() < 1e-5 and np.abs(p1 - p2).max() < 1e-5


def test_legacy_reader_refuses_other_classes(tmp_path):
    import pickle

    from audiomind.embedded import voice

    bad = tmp_path / "bad.pt"
    with open(bad, "wb") as f:
        for obj in (voice._LEGACY_MAGIC, 1001, {}):
            pickle.dump(obj, f)
        pickle.dump(print, f)  # a global the reader must not resolve
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        voice.read_legacy_torch(bad)
    zipped = tmp_path / "zip.pt"
    zipped.write_bytes(b"PK\x03\x04" + b"\0" * 64)
    with pytest.raises(ValueError, match="not a legacy torch file"):
        voice.read_legacy_torch(zipped)


def test_speaker_embedding_imports_no_torch():
    code = (
        "import sys, numpy as np\n"
        "from audiomind.tools import speaker\n"
        "e = speaker.embed_windows([np.sin(np.arange(24000) * 0.05).astype(np.float32)])\n"
        "assert e.shape == (1, 256) and abs(float(np.linalg.norm(e[0])) - 1) < 1e-5\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "False"
