"""Resemblyzer's voice encoder in NumPy: the packaged d-vector model without importing torch.

Importing `resemblyzer` imports torch (its package __init__ loads the torch VoiceEncoder), which cost a
fresh process 3-6 s on the 2-core reference machine, more than everything else a speaker question
needs. The model is small (a 3-layer LSTM of 256 units over 40 mel bands, a linear layer, ReLU, L2
norm), so it runs here in NumPy on the same weights, read from the carrier's `pretrained.pt` by a
reader of torch's legacy serialization format (plain pickle plus raw storages) that needs no torch.

Everything reproduces resemblyzer 0.1.x: `wav_to_mel_spectrogram` (linear mel power, 25 ms window, 10 ms
hop, 40 bands), `compute_partial_slices` (1.6 s partials at 1.3 per second, last one kept at 75%
coverage) and `embed_utterance` (mean of the partial embeddings, renormalised). Outputs agree with the
torch model to float32 rounding (tests/embedded/test_voice_numpy.py).
"""

from __future__ import annotations

import pickle
import struct
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

SAMPLING_RATE = 16000
MEL_WINDOW_MS, MEL_STEP_MS, MEL_CHANNELS = 25, 10, 40
PARTIAL_FRAMES = 160  # 1.6 s
HIDDEN, EMBEDDING, LAYERS = 256, 256, 3

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8,
    "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}


class _Storage:
    def __init__(self, dtype: Any, numel: int):
        self.dtype, self.numel, self.data = np.dtype(dtype), numel, None


class _LazyTensor:
    """A tensor whose storage bytes come after the pickle in the legacy format."""

    def __init__(self, storage: _Storage, offset: int, size: tuple[int, ...], stride: tuple[int, ...]):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)

    def array(self) -> np.ndarray:
        data = self.storage.data
        assert data is not None, "storage not read"
        item = data.itemsize
        return np.lib.stride_tricks.as_strided(
            data[self.offset:], shape=self.size, strides=[s * item for s in self.stride]).copy()


def _rebuild_tensor(storage, storage_offset, size, stride, *_rest):
    return _LazyTensor(storage, storage_offset, size, stride)


def read_legacy_torch(path: str | Path) -> Any:
    """The object a torch legacy-format file (torch.save before the zip format, `_use_new_zipfile_
    serialization=False`) holds, with every tensor as a NumPy array. Only tensors, plain containers and
    OrderedDicts are accepted; any other class in the pickle is refused, so nothing else is executed."""
    storages: dict[str, _Storage] = {}

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
                return _rebuild_tensor
            if module == "torch" and name in _STORAGE_DTYPES:
                return name
            if module == "collections" and name == "OrderedDict":
                return OrderedDict
            raise pickle.UnpicklingError(f"{path}: refusing to load {module}.{name}")

        def persistent_load(self, saved_id: Any) -> Any:
            if not (isinstance(saved_id, tuple) and saved_id and saved_id[0] == "storage"):
                raise pickle.UnpicklingError(f"{path}: unsupported persistent id {saved_id!r:.80}")
            _, storage_type, key, _location, numel = saved_id[:5]
            if len(saved_id) > 5 and saved_id[5] is not None:
                raise pickle.UnpicklingError(f"{path}: storage views are not supported")
            if key not in storages:
                storages[key] = _Storage(_STORAGE_DTYPES[storage_type], numel)
            return storages[key]

    with open(path, "rb") as f:
        try:
            magic = pickle.load(f)
        except Exception:  # noqa: BLE001 - a zip-format or foreign file: say what it is not
            magic = None
        if magic != _LEGACY_MAGIC:
            raise ValueError(f"{path} is not a legacy torch file (new zip-format files need torch.load)")
        pickle.load(f)  # protocol version
        pickle.load(f)  # sys info (endianness, type sizes)
        result = Unpickler(f).load()
        for key in pickle.load(f):
            st = storages[key]
            (numel,) = struct.unpack("<q", f.read(8))
            raw = f.read(numel * st.dtype.itemsize)
            if len(raw) != numel * st.dtype.itemsize:
                raise ValueError(f"{path}: truncated storage {key}")
            st.data = np.frombuffer(raw, dtype=st.dtype.newbyteorder("<"))

    def resolve(obj: Any) -> Any:
        if isinstance(obj, _LazyTensor):
            return obj.array()
        if isinstance(obj, dict):
            return type(obj)((k, resolve(v)) for k, v in obj.items())
        if isinstance(obj, (list, tuple)):
            return type(obj)(resolve(v) for v in obj)
        return obj

    return resolve(result)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)  # = 1 / (1 + e^-x), without overflow warnings


def wav_to_mel_spectrogram(wav: np.ndarray) -> np.ndarray:
    """Linear mel power, (frames, 40) float32: resemblyzer.audio.wav_to_mel_spectrogram."""
    from audiomind.embedded import dsp

    frames = dsp.melspectrogram(  # = librosa.feature.melspectrogram, without importing librosa
        wav, sr=SAMPLING_RATE, n_fft=int(SAMPLING_RATE * MEL_WINDOW_MS / 1000),
        hop_length=int(SAMPLING_RATE * MEL_STEP_MS / 1000), n_mels=MEL_CHANNELS)
    return frames.astype(np.float32).T


def compute_partial_slices(n_samples: int, rate: float = 1.3,
                           min_coverage: float = 0.75) -> tuple[list[slice], list[slice]]:
    """(wav slices, mel slices) of the 1.6 s partial utterances: VoiceEncoder.compute_partial_slices."""
    assert 0 < min_coverage <= 1
    samples_per_frame = int(SAMPLING_RATE * MEL_STEP_MS / 1000)
    n_frames = int(np.ceil((n_samples + 1) / samples_per_frame))
    frame_step = int(np.round((SAMPLING_RATE / rate) / samples_per_frame))
    assert 0 < frame_step <= PARTIAL_FRAMES, "rate out of range"
    wav_slices, mel_slices = [], []
    for i in range(0, max(1, n_frames - PARTIAL_FRAMES + frame_step + 1), frame_step):
        mel_slices.append(slice(i, i + PARTIAL_FRAMES))
        wav_slices.append(slice(i * samples_per_frame, (i + PARTIAL_FRAMES) * samples_per_frame))
    last = wav_slices[-1]
    if (n_samples - last.start) / (last.stop - last.start) < min_coverage and len(mel_slices) > 1:
        mel_slices, wav_slices = mel_slices[:-1], wav_slices[:-1]
    return wav_slices, mel_slices


class VoiceEncoder:
    """The d-vector encoder: `forward(mels (batch, frames, 40)) -> (batch, 256)` unit vectors."""

    def __init__(self, weights: str | Path):
        state = read_legacy_torch(weights)["model_state"]
        self.layers = []
        for k in range(LAYERS):
            w_ih, w_hh = state[f"lstm.weight_ih_l{k}"], state[f"lstm.weight_hh_l{k}"]
            b = state[f"lstm.bias_ih_l{k}"] + state[f"lstm.bias_hh_l{k}"]
            self.layers.append((np.ascontiguousarray(w_ih.T, dtype=np.float32),
                                np.ascontiguousarray(w_hh.T, dtype=np.float32), b.astype(np.float32)))
        self.linear_w = np.ascontiguousarray(state["linear.weight"].T, dtype=np.float32)
        self.linear_b = state["linear.bias"].astype(np.float32)

    def forward(self, mels: np.ndarray) -> np.ndarray:
        from audiomind.embedded.sessions import SMALL_MODEL_THREADS, blas_threads

        with blas_threads(SMALL_MODEL_THREADS):
            return self._forward(np.asarray(mels, dtype=np.float32))

    def _forward(self, x: np.ndarray) -> np.ndarray:
        batch, steps, _ = x.shape
        h = np.zeros((batch, HIDDEN), dtype=np.float32)
        for w_ih, w_hh, b in self.layers:
            pre = (x.reshape(batch * steps, -1) @ w_ih + b).reshape(batch, steps, 4 * HIDDEN)
            h = np.zeros((batch, HIDDEN), dtype=np.float32)
            c = np.zeros((batch, HIDDEN), dtype=np.float32)
            out = np.empty((batch, steps, HIDDEN), dtype=np.float32)
            for t in range(steps):
                g = pre[:, t] + h @ w_hh  # gates in torch's order: input, forget, cell, output
                s = _sigmoid(g)
                i, f, o = s[:, :HIDDEN], s[:, HIDDEN:2 * HIDDEN], s[:, 3 * HIDDEN:]
                c = f * c + i * np.tanh(g[:, 2 * HIDDEN:3 * HIDDEN])
                h = o * np.tanh(c)
                out[:, t] = h
            x = out
        raw = np.maximum(h @ self.linear_w + self.linear_b, 0.0)
        return raw / np.linalg.norm(raw, axis=1, keepdims=True)

    __call__ = forward

    def embed_utterance(self, wav: np.ndarray, return_partials: bool = False, rate: float = 1.3,
                        min_coverage: float = 0.75):
        """embedding (256,) [, partial embeddings (n, 256), wav slices]: VoiceEncoder.embed_utterance."""
        wav_slices, mel_slices = compute_partial_slices(len(wav), rate, min_coverage)
        if wav_slices[-1].stop >= len(wav):
            wav = np.pad(wav, (0, wav_slices[-1].stop - len(wav)), "constant")
        mel = wav_to_mel_spectrogram(wav)
        partials = self.forward(np.array([mel[s] for s in mel_slices]))
        raw = np.mean(partials, axis=0)
        embed = raw / np.linalg.norm(raw, 2)
        return (embed, partials, wav_slices) if return_partials else embed
