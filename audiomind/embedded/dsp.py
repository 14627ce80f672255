"""The few librosa front-end functions the perception pass uses, copied from librosa 0.11 for the arguments the
tools pass, so that a question does not import librosa: librosa's modules load numba and its compiled
kernels at import, which cost a fresh process 1-1.5 s of its 2 cores before the first tool could finish
(YAMNet, count_events and speaker_count all waited for that import). The operations and their order are
librosa's, so the results are the same to the bit (tests/tools/test_dsp.py compares them with librosa).

- `stft`: librosa.stft with window "hann", pad_mode "constant", numpy's FFT (librosa's default FFT library).
- `mel`: librosa.filters.mel.
- `rms`: librosa.feature.rms from a signal, pad_mode "constant".
- `melspectrogram`: librosa.feature.melspectrogram from a signal (power 2, centred, hann).

`hann` is scipy.signal.get_window("hann", n, fftbins=True) computed the same way in NumPy, so that the STFT
(YAMNet's log-mel patches, the voice encoder's mel frames) never waits for scipy.signal, whose import costs a
fresh process 0.8-1 s of CPU (it loads scipy.stats, interpolate, optimize); loudness's K-weighting and
count_events's high-pass are NumPy biquads (`audiomind.embedded.iir`), so the perception pass never imports it.
A tool that needs it (band_limits, the note decoder, stream grouping) imports it through `scipy_signal()`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

MAX_MEM_BLOCK = 2**8 * 2**10  # librosa.util.MAX_MEM_BLOCK: the STFT is computed in blocks of this many bytes


_SCIPY_IMPORTS = threading.Lock()


def scipy_module(name: str) -> ModuleType:
    """scipy.<name> (e.g. "signal", "cluster.hierarchy"), imported by one tool thread at a time. scipy's
    subpackages import one another (scipy.signal alone loads stats, interpolate, optimize, spatial, linalg, special,
    ndimage), and two threads importing overlapping parts at once can meet in a cycle of Python's per-module locks,
    which Python breaks by failing one of the imports (_DeadlockError). Before `hann` every tool reached scipy
    through scipy.signal, so its import ordered the others; now speaker_count's clustering can come first."""
    with _SCIPY_IMPORTS:
        return importlib.import_module(f"scipy.{name}")


def scipy_signal() -> ModuleType:
    """scipy.signal, imported on first use by the tools that need it (the perception pass does not: the STFT
    window is `hann`, the filters are `iir`'s), through `scipy_module`. Safe beside a library that imports it
    itself (pyloudnorm): Python's module lock makes a second importer wait for the complete module."""
    return scipy_module("signal")


def frame(x: np.ndarray, frame_length: int, hop_length: int) -> np.ndarray:
    """librosa.util.frame along the last axis: a strided view [..., frame_length, n_frames]."""
    x = np.asarray(x)
    if x.shape[-1] < frame_length:
        raise ValueError(f"Input is too short (n={x.shape[-1]:d}) for frame_length={frame_length:d}")
    if hop_length < 1:
        raise ValueError(f"Invalid hop_length: {hop_length:d}")
    out_strides = x.strides + (x.strides[-1],)
    shape = list(x.shape)
    shape[-1] -= frame_length - 1
    xw = as_strided(x, strides=out_strides, shape=(*shape, frame_length), writeable=False)
    xw = np.moveaxis(xw, -1, -2)
    slices = [slice(None)] * xw.ndim
    slices[-1] = slice(0, None, hop_length)
    return xw[tuple(slices)]


def hann(n: int) -> np.ndarray:
    """The periodic (DFT-even) Hann window of n samples, float64: scipy.signal.get_window("hann", n, fftbins=True)
    to the bit, by scipy's own steps (scipy.signal.windows.general_cosine with a = [0.5, 0.5] over n + 1 points,
    the last dropped; one sample: [1.0]; ValueError below one, as get_window raises)."""
    if int(n) != n or n < 1:
        raise ValueError(f"Parameter Nx={n} is not a positive integer")
    n = int(n)
    if n == 1:
        return np.ones(1, dtype=np.float64)
    fac = np.linspace(-np.pi, np.pi, n + 1, dtype=np.float64)
    w = np.zeros(n + 1, dtype=np.float64)
    for k, a in enumerate(np.asarray([0.5, 1.0 - 0.5], dtype=np.float64)):
        w += a * np.cos(k * fac)
    return w[:-1]


def _hann(win_length: int, n_fft: int) -> np.ndarray:
    """librosa's STFT window: scipy's periodic Hann window (`hann`) centred in n_fft samples, shaped [n_fft, 1]."""
    w = hann(win_length)
    lpad = int((n_fft - win_length) // 2)
    if lpad < 0:
        raise ValueError(f"Target size ({n_fft:d}) must be at least input size ({win_length:d})")
    w = np.pad(w, [(lpad, int(n_fft - win_length - lpad))], mode="constant")
    return w.reshape(n_fft, 1)


def stft(y: np.ndarray, *, n_fft: int, hop_length: int, win_length: int | None = None,
         center: bool = True) -> np.ndarray:
    """librosa.stft(y, n_fft=, hop_length=, win_length=, window="hann", center=, pad_mode="constant") of a
    1-D signal: complex [1 + n_fft // 2, frames]."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError("stft takes a 1-D signal")
    if not np.isfinite(y).all():
        raise ValueError("Audio buffer is not finite everywhere")
    win_length = n_fft if win_length is None else win_length
    fft_window = _hann(win_length, n_fft)
    if center:
        start_k = int(np.ceil(n_fft // 2 / hop_length))
        tail_k = (y.shape[-1] + n_fft // 2 - n_fft) // hop_length + 1
        if tail_k <= start_k:
            start = extra = 0
            y = np.pad(y, [(n_fft // 2, n_fft // 2)], mode="constant")
        else:
            start = start_k * hop_length - n_fft // 2
            y_pre = np.pad(y[: (start_k - 1) * hop_length - n_fft // 2 + n_fft + 1], [(n_fft // 2, 0)],
                           mode="constant")
            y_frames_pre = frame(y_pre, n_fft, hop_length)[..., :start_k]
            extra = y_frames_pre.shape[-1]
            if tail_k * hop_length - n_fft // 2 + n_fft <= y.shape[-1] + n_fft // 2:
                y_post = np.pad(y[tail_k * hop_length - n_fft // 2:], [(0, n_fft // 2)], mode="constant")
                y_frames_post = frame(y_post, n_fft, hop_length)
                extra += y_frames_post.shape[-1]
            else:
                y_frames_post = np.empty_like(y_frames_pre, shape=(*y_frames_pre.shape[:-1], 0))
    else:
        if n_fft > y.shape[-1]:
            raise ValueError(f"n_fft={n_fft} is too large for uncentered analysis of a signal of length={y.shape[-1]}")
        start = extra = 0
    dtype = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}.get(y.dtype, np.complex64)
    y_frames = frame(y[start:], n_fft, hop_length)
    shape = list(y_frames.shape)
    shape[-2] = 1 + n_fft // 2
    shape[-1] += extra
    out: np.ndarray = np.zeros(shape, dtype=dtype, order="F")
    off_start = 0
    if center and extra > 0:
        off_start = y_frames_pre.shape[-1]
        out[..., :off_start] = np.fft.rfft(fft_window * y_frames_pre, axis=-2)
        off_end = y_frames_post.shape[-1]
        if off_end > 0:
            out[..., -off_end:] = np.fft.rfft(fft_window * y_frames_post, axis=-2)
    n_columns = max(1, int(MAX_MEM_BLOCK // (np.prod(y_frames.shape[:-1]) * y_frames.itemsize)))
    for bl_s in range(0, y_frames.shape[-1], n_columns):
        bl_t = min(bl_s + n_columns, y_frames.shape[-1])
        out[..., bl_s + off_start: bl_t + off_start] = np.fft.rfft(fft_window * y_frames[..., bl_s:bl_t], axis=-2)
    return out


def _hz_to_mel(frequencies, htk: bool):
    frequencies = np.asanyarray(frequencies)
    if htk:
        return 2595.0 * np.log10(1.0 + frequencies / 700.0)
    f_min, f_sp = 0.0, 200.0 / 3
    mels = (frequencies - f_min) / f_sp
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = np.log(6.4) / 27.0
    if frequencies.ndim:
        log_t = frequencies >= min_log_hz
        mels[log_t] = min_log_mel + np.log(frequencies[log_t] / min_log_hz) / logstep
    elif frequencies >= min_log_hz:
        mels = min_log_mel + np.log(frequencies / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels, htk: bool):
    mels = np.asanyarray(mels)
    if htk:
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_min, f_sp = 0.0, 200.0 / 3
    freqs = f_min + f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = np.log(6.4) / 27.0
    if mels.ndim:
        log_t = mels >= min_log_mel
        freqs[log_t] = min_log_hz * np.exp(logstep * (mels[log_t] - min_log_mel))
    elif mels >= min_log_mel:
        freqs = min_log_hz * np.exp(logstep * (mels - min_log_mel))
    return freqs


def mel(*, sr: float, n_fft: int, n_mels: int = 128, fmin: float = 0.0, fmax: float | None = None,
        htk: bool = False, norm: str | None = "slaney", dtype=np.float32) -> np.ndarray:
    """librosa.filters.mel (norm "slaney" or None): [n_mels, 1 + n_fft // 2]."""
    if fmax is None:
        fmax = float(sr) / 2
    if norm not in ("slaney", None):
        raise ValueError(f"Unsupported norm={norm}")
    n_mels = int(n_mels)
    weights = np.zeros((n_mels, int(1 + n_fft // 2)), dtype=dtype)
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin, htk), _hz_to_mel(fmax, htk), n_mels + 2), htk)
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    if norm == "slaney":
        enorm = 2.0 / (mel_f[2: n_mels + 2] - mel_f[:n_mels])
        weights *= enorm[:, np.newaxis]
    return weights


def rms(y: np.ndarray, *, frame_length: int, hop_length: int, center: bool = True) -> np.ndarray:
    """librosa.feature.rms(y=y, frame_length=, hop_length=, center=) of a 1-D signal: float32 [1, frames]."""
    y = np.asarray(y)
    if center:
        y = np.pad(y, [(int(frame_length // 2), int(frame_length // 2))], mode="constant")
    x = frame(y, frame_length, hop_length)
    power = np.mean(np.square(x, dtype=np.float32), axis=-2, keepdims=True)
    return np.sqrt(power)


def melspectrogram(y: np.ndarray, *, sr: float, n_fft: int, hop_length: int, n_mels: int) -> np.ndarray:
    """librosa.feature.melspectrogram(y=y, sr=, n_fft=, hop_length=, n_mels=) with its other defaults."""
    S = np.abs(stft(y, n_fft=n_fft, hop_length=hop_length, center=True)) ** 2.0
    return np.einsum("...ft,mf->...mt", S, mel(sr=sr, n_fft=n_fft, n_mels=n_mels), optimize=True)


def _kernel_calls(librosa: Any, y: np.ndarray, sr: int) -> dict[str, Callable[[], object]]:
    """The librosa functions whose numba kernels `compile_librosa_kernels` compiles, bound to one signal."""
    return {
        "pyin": lambda: librosa.pyin(y, fmin=65.0, fmax=1000.0, sr=sr),
        "yin": lambda: librosa.yin(y, fmin=65.0, fmax=1000.0, sr=sr),
        "estimate_tuning": lambda: librosa.estimate_tuning(y=y, sr=sr),
        "chroma_cqt": lambda: librosa.feature.chroma_cqt(y=y, sr=sr),
        "chroma_stft": lambda: librosa.feature.chroma_stft(y=y, sr=sr),
        "onset_strength": lambda: librosa.onset.onset_strength(y=y, sr=sr),
        "onset_detect": lambda: librosa.onset.onset_detect(y=y, sr=sr),
        "beat_track": lambda: librosa.beat.beat_track(y=y, sr=sr),
        "autocorrelate": lambda: librosa.autocorrelate(y),
        "spectral": lambda: (librosa.feature.spectral_centroid(y=y, sr=sr),
                             librosa.feature.spectral_rolloff(y=y, sr=sr),
                             librosa.feature.spectral_flatness(y=y),
                             librosa.feature.spectral_bandwidth(y=y, sr=sr)),
    }


def compile_librosa_kernels() -> list[str]:
    """Compile, once and in this one process, the numba kernels of the librosa functions the tools call, for
    both float dtypes, so that numba's on-disk cache is complete before any tool runs.

    Why: numba's cache is not safe against several processes compiling the same kernels at once. Two fresh
    processes that first reach a kernel with different dtypes (a float32 and a float64 signal) can leave its
    cache index pointing at the other dtype's machine code, and every later process that loads it segfaults
    (measured: 1 of 3 trials with three concurrent cold processes; `tests/tools/test_dsp.py`). Loading a
    complete cache from many processes is safe, so `audiomind models install` (install step 1) calls this.
    Returns the names of the functions compiled."""
    import warnings

    import librosa

    sr = 22050
    t = np.arange(3 * sr) / sr
    done = []
    for dtype in (np.float32, np.float64):
        y = (0.3 * np.sin(2 * np.pi * (220 + 220 * t) * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(dtype)
        calls = _kernel_calls(librosa, y, sr)
        for name, call in calls.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
            done.append(f"{name}[{np.dtype(dtype).name}]")
    return done


_GUARD = threading.Lock()
_GUARD_HOLDERS = 0
_GUARD_FILE = None
_WARM: set[str] = set()


def _lock_path() -> str:
    """One lock file per environment (the numba cache lives in its site-packages)."""
    tag = hashlib.sha256(sys.prefix.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"audiomind-numba-{tag}.lock")


@contextlib.contextmanager
def numba_compiles(site: str) -> Iterator[None]:
    """Around a call into librosa's numba kernels at `site`, until it has run once in this process: other
    processes of this environment wait at their own first calls, so no two processes write numba's cache at
    once (its entries are numbered per file, and two writers can cross-wire them: the crash that
    compile_librosa_kernels avoids for the kernels it knows; this covers the specialisations it does not).
    Threads of one process share the hold; numba's own compiler lock serialises their compiles."""
    global _GUARD_HOLDERS, _GUARD_FILE
    if site in _WARM:
        yield
        return
    import fcntl

    with _GUARD:
        if _GUARD_HOLDERS == 0:
            _GUARD_FILE = open(_lock_path(), "a")  # noqa: SIM115 (held across the block, closed below)
            fcntl.flock(_GUARD_FILE, fcntl.LOCK_EX)
        _GUARD_HOLDERS += 1
    try:
        yield
        _WARM.add(site)
    finally:
        with _GUARD:
            _GUARD_HOLDERS -= 1
            if _GUARD_HOLDERS == 0 and _GUARD_FILE is not None:
                fcntl.flock(_GUARD_FILE, fcntl.LOCK_UN)
                _GUARD_FILE.close()
                _GUARD_FILE = None
