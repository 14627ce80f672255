"""audiomind.embedded.dsp against librosa: the same numbers up to float rounding (a stated tolerance), for the
arguments the tools pass (and edge lengths: shorter than a frame, exactly one frame, not a whole number of hops)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from audiomind.embedded import dsp

librosa = pytest.importorskip("librosa")

LENGTHS = [400, 512, 513, 1000, 2049, 16000, 160_000 + 37, 3_000_000]


def _signal(n: int, seed: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / 16000
    return (0.3 * np.sin(2 * np.pi * 440 * t) + 0.1 * rng.standard_normal(n)).astype(dtype)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    """The same dtype and shape, and the same values up to float rounding: numpy's FFT and BLAS pick
    kernels by CPU, so two code paths (ours and librosa's) can differ in the last bits on another machine.
    The tolerance is relative to the array's scale: 1e-5 for float32, 1e-10 for float64."""
    assert a.dtype == b.dtype and a.shape == b.shape
    eps = 1e-5 if np.dtype(a.dtype) in (np.float32, np.complex64) else 1e-10
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    np.testing.assert_allclose(a, b, rtol=eps, atol=eps * max(scale, 1e-30),
                               err_msg=f"max |diff| {np.max(np.abs(a - b)) if a.size else 0}")


@pytest.mark.parametrize("n", LENGTHS)
def test_stft_uncentred_as_yamnet_uses_it(n):
    y = _signal(n, n)
    if n < 512:
        with pytest.raises(ValueError):
            dsp.stft(y, n_fft=512, hop_length=160, win_length=400, center=False)
        return
    _same(dsp.stft(y, n_fft=512, hop_length=160, win_length=400, center=False),
          librosa.stft(y, n_fft=512, hop_length=160, win_length=400, window="hann", center=False))


@pytest.mark.parametrize("n", [*LENGTHS, 100, 250])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_melspectrogram_as_the_voice_encoder_uses_it(n, dtype):
    y = _signal(n, n + 1, dtype)
    _same(dsp.melspectrogram(y, sr=16000, n_fft=400, hop_length=160, n_mels=40),
          librosa.feature.melspectrogram(y=y, sr=16000, n_fft=400, hop_length=160, n_mels=40))


@pytest.mark.parametrize("n", [320, 321, 1000, 16000, 160_000 + 37])
def test_rms_as_count_events_uses_it(n):
    y = _signal(n, n + 2)
    _same(dsp.rms(y, frame_length=320, hop_length=80, center=True),
          librosa.feature.rms(y=y, frame_length=320, hop_length=80, center=True))


@pytest.mark.parametrize("kw", [
    {"sr": 16000, "n_fft": 512, "n_mels": 64, "fmin": 125.0, "fmax": 7500.0, "htk": True, "norm": None},
    {"sr": 16000, "n_fft": 400, "n_mels": 40},
    {"sr": 22050, "n_fft": 2048, "n_mels": 128},
])
def test_mel_filters(kw):
    _same(dsp.mel(**kw), librosa.filters.mel(**kw))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 255, 256, 320, 400, 401, 512, 1024, 2048, 4096, 4097])
def test_hann_is_scipys_periodic_hann_to_the_bit(n):
    import scipy.signal

    if n < 1:
        for fn in (dsp.hann, lambda m: scipy.signal.get_window("hann", m, fftbins=True)):
            with pytest.raises(ValueError):
                fn(n)
        return
    w = dsp.hann(n)
    ref = scipy.signal.get_window("hann", n, fftbins=True)
    assert w.dtype == ref.dtype and w.shape == ref.shape
    assert np.array_equal(w, ref), f"max |diff| {np.max(np.abs(w - ref))}"


def test_the_stft_and_the_voice_encoders_mel_frames_do_not_import_scipy_signal():
    """YAMNet's patches and the voice encoder's mel frames (tagging, speaker_count) start at once in a fresh
    process, instead of waiting for loudness's import of scipy.signal (0.8 s of CPU)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from audiomind.embedded import dsp; y = np.ones(16000, np.float32); "
            "dsp.stft(y, n_fft=512, hop_length=160, win_length=400, center=False); "
            "dsp.melspectrogram(y, sr=16000, n_fft=400, hop_length=160, n_mels=40); "
            "print('scipy.signal' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "False", (out.stdout, out.stderr[-2000:])


def test_scipy_modules_are_imported_by_one_thread_at_a_time(monkeypatch):
    """Tool threads import scipy's subpackages one after another (two overlapping imports at once can meet in a
    cycle of module locks): no two `scipy_module` imports overlap."""
    import itertools
    import threading
    import time

    spans: list[tuple[float, float]] = []

    def slow_import(name):
        t0 = time.monotonic()
        time.sleep(0.05)
        spans.append((t0, time.monotonic()))
        return name

    monkeypatch.setattr(dsp.importlib, "import_module", slow_import)
    names = ["signal", "cluster.hierarchy", "spatial.distance", "ndimage"]
    got: list[str] = []
    threads = [threading.Thread(target=lambda n=n: got.append(dsp.scipy_module(n))) for n in names]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(got) == sorted(f"scipy.{n}" for n in names)
    spans.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans


def test_scipy_modules_from_several_threads_beside_pyloudnorms_own_import():
    import subprocess
    import sys

    code = (
        "import threading\n"
        "from audiomind.embedded import dsp\n"
        "errs = []\n"
        "def run(f):\n"
        "    try:\n"
        "        f()\n"
        "    except Exception as e:\n"
        "        errs.append(repr(e))\n"
        "fs = [lambda: __import__('pyloudnorm'), lambda: dsp.scipy_signal().sosfiltfilt,\n"
        "      lambda: dsp.scipy_module('cluster.hierarchy').linkage, lambda: dsp.scipy_module('spatial.distance').pdist,\n"
        "      lambda: dsp.scipy_module('ndimage').uniform_filter1d]\n"
        "ts = [threading.Thread(target=run, args=(f,)) for f in fs]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "print('ok' if not errs else errs)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "ok", (out.stdout, out.stderr[-2000:])


def test_scipy_signal_is_the_module_whichever_way_it_was_imported():
    import subprocess
    import sys

    code = ("import sys; from audiomind.embedded import dsp; s = dsp.scipy_signal(); import scipy.signal; "
            "from scipy._lib import _array_api as xa; from scipy._lib._docscrape import FunctionDoc; "
            "assert s is scipy.signal is sys.modules['scipy.signal'] and xa.FunctionDoc is FunctionDoc; "
            "assert s.lfilter.__doc__ and 'lfilter' in s.lfilter.__doc__ and callable(s.get_window); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]
    assert dsp.scipy_signal() is sys.modules["scipy.signal"]


def test_scipy_signal_waits_for_an_import_under_way_in_another_thread():
    """Threads that ask while another thread (or a library, as pyloudnorm does) is importing scipy.signal
    get the module once it is complete, never the partly initialised one."""
    import subprocess
    import sys

    code = (
        "import threading, sys\n"
        "from audiomind.embedded import dsp\n"
        "errs = []\n"
        "def direct():\n"
        "    import pyloudnorm\n"
        "def helper():\n"
        "    try:\n"
        "        s = dsp.scipy_signal(); s.butter; s.lfilter_zi; s.sosfiltfilt\n"
        "    except Exception as e:\n"
        "        errs.append(repr(e))\n"
        "ts = [threading.Thread(target=direct)] + [threading.Thread(target=helper) for _ in range(4)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "print('ok' if not errs else errs)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.stdout.strip() == "ok", (out.stdout, out.stderr[-2000:])


def test_after_the_install_step_compiles_the_kernels_concurrent_processes_never_corrupt_numbas_cache(tmp_path):
    """numba's on-disk cache is not safe against processes compiling the same kernels at once: three fresh
    processes reaching librosa's kernels with float32 and float64 signals left the cache pointing at the other
    dtype's code in 1 of 3 trials, and every later process segfaulted. The install step
    (`audiomind models install`) compiles every kernel the tools call in one process first
    (dsp.compile_librosa_kernels); after it, concurrent processes only load, and a later one still runs."""
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    warm = subprocess.run([sys.executable, "-c", ("from audiomind.embedded.dsp import compile_librosa_kernels as c; "
                                                  "print(len(c()))")], capture_output=True, text=True, timeout=600, env=env, check=False)
    assert warm.returncode == 0 and warm.stdout.strip() == "20", warm.stderr[-1500:]
    code = ("import numpy as np, librosa, concurrent.futures as cf; sr = 22050; t = np.arange(2 * sr) / sr; "
            "y = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.{dtype}); "
            "fs = [lambda: librosa.pyin(y, fmin=65, fmax=1000, sr=sr), lambda: librosa.estimate_tuning(y=y, sr=sr), "
            "lambda: librosa.onset.onset_detect(y=y, sr=sr), lambda: librosa.beat.beat_track(y=y, sr=sr)]; "
            "ex = cf.ThreadPoolExecutor(4); [f.result() for f in [ex.submit(g) for g in fs]]; print('ok')")
    procs = [subprocess.Popen([sys.executable, "-c", code.format(dtype=d)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for d in ("float32", "float64", "float32")]
    outs = [(p.communicate(timeout=300), p.returncode) for p in procs]
    later = subprocess.run([sys.executable, "-c", code.format(dtype="float32")], capture_output=True, text=True,
                           timeout=300, env=env, check=False)
    for (out, err), rc in [*outs, ((later.stdout, later.stderr), later.returncode)]:
        assert rc == 0 and out.strip() == "ok", (rc, err[-1500:])


def test_first_calls_into_numba_wait_for_another_process_then_run_free(tmp_path):
    """dsp.numba_compiles: while one process holds the first-call lock of this environment, another
    process's first call waits; a site that has run once in a process no longer takes the lock."""
    import subprocess
    import sys
    import time

    holder = subprocess.Popen([sys.executable, "-c", (
        "import time; from audiomind.embedded.dsp import numba_compiles\n"
        "with numba_compiles('site'):\n    print('held', flush=True); time.sleep(3)\n")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t0 = time.monotonic()
    with dsp.numba_compiles("test.site"):
        waited = time.monotonic() - t0
    holder.wait(timeout=30)
    assert waited >= 1.0, f"entered after {waited:.2f} s while another process held the lock"
    t0 = time.monotonic()
    with dsp.numba_compiles("test.site"):  # warm in this process: no lock taken
        pass
    assert time.monotonic() - t0 < 0.5
