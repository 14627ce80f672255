"""audiomind.embedded.iir against the libraries it stands in for: scipy.signal's lfilter/sosfiltfilt/butter and
pyloudnorm's K-weighting design, on noise and a real recording, at every block boundary; and a perception pass that
measures loudness and counts events without importing scipy.signal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyloudnorm as pyln
import pytest
import scipy.signal as ss

from audiomind import audio as aio
from audiomind.embedded import iir

ROOT = Path(__file__).resolve().parents[2]
RATES = (8000, 16000, 22050, 44100, 48000)
LENGTHS = (1, 2, iir.BLOCK - 1, iir.BLOCK, iir.BLOCK + 1, 3 * iir.BLOCK + 17, 48000 * 3 + 5)


@pytest.mark.parametrize("rate", RATES)
def test_k_weighting_is_pyloudnorms_design(rate):
    theirs = list(pyln.Meter(rate)._filters.values())
    ours = iir.k_weighting(rate)
    assert [t.filter_type for t in theirs] == [k[0] for k in iir.K_WEIGHTING]
    for t, o in zip(theirs, ours, strict=True):
        assert t.passband_gain == 1.0
        np.testing.assert_allclose(o.b, t.b, rtol=1e-13, atol=0)
        np.testing.assert_allclose(o.a, t.a, rtol=1e-13, atol=0)


@pytest.mark.parametrize("rate", RATES)
@pytest.mark.parametrize("hz", [20.0, 100.0, 1000.0])
def test_butter_highpass_is_scipys_design(rate, hz):
    sos = ss.butter(2, hz, btype="highpass", fs=rate, output="sos")
    ours = iir.butter_highpass(hz, rate)
    np.testing.assert_allclose(ours.b, sos[0, :3], rtol=1e-12, atol=0)
    np.testing.assert_allclose(ours.a, sos[0, 3:], rtol=1e-12, atol=0)


@pytest.mark.parametrize("rate", [16000, 48000])
@pytest.mark.parametrize("n", LENGTHS)
def test_lfilter_is_scipys_over_every_block_boundary(rate, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n) * 0.3
    for f in iir.k_weighting(rate):
        for zi in (np.zeros(2), rng.standard_normal(2) * 0.01):
            want, want_z = ss.lfilter(f.b, f.a, x, zi=zi)
            got, got_z = iir.lfilter(f, x, zi)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
            np.testing.assert_allclose(got_z, want_z, rtol=0, atol=1e-9)


def test_lfilter_streamed_in_pieces_is_one_pass():
    """The loudness tool streams a file block by block and carries the state: the pieces join seamlessly."""
    x = np.random.default_rng(3).standard_normal(5000)
    f = iir.k_weighting(16000)[1]
    whole, _ = iir.lfilter(f, x)
    parts, state = [], np.zeros(2)
    for a, b in ((0, 1), (1, 700), (700, 701), (701, 5000)):
        y, state = iir.lfilter(f, x[a:b], state)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), whole, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [10, 64, 65, 1000, 16000 * 5 + 7])
def test_filtfilt_is_scipys_sosfiltfilt(n):
    x = np.random.default_rng(n).standard_normal(n)
    f = iir.butter_highpass(100.0, 16000)
    sos = ss.butter(2, 100.0, btype="highpass", fs=16000, output="sos")
    np.testing.assert_allclose(iir.filtfilt(f, x), ss.sosfiltfilt(sos, x), rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="padlen"):
        iir.filtfilt(f, x[:9])


def test_k_weighting_a_real_recording_is_pyloudnorms_and_so_is_its_loudness(tmp_path):
    """A real recording through the K-weighting stages is pyloudnorm's filtered signal, and the loudness tool's
    streamed measurement of it is pyloudnorm's integrated loudness and loudness range."""
    from audiomind.tools.loudness import measure_stream

    path = ROOT / "examples" / "two_speakers.wav"
    y = np.asarray(aio.load(path, sr=16000), dtype=np.float64)
    meter = pyln.Meter(16000)
    want, got = y.copy(), y.copy()
    for stage, ours in zip(meter._filters.values(), iir.k_weighting(16000), strict=True):
        want = stage.apply_filter(want)
        got = iir.lfilter(ours, got)[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    wav = aio.write_wav(tmp_path / "r.wav", y.astype(np.float32), 16000)
    integrated, lra, *_ = measure_stream(str(wav), 16000, 1, len(y) / 16000, 0.4, 0.1)
    y32 = np.asarray(aio.load(wav, sr=16000), dtype=np.float64)
    assert integrated == pytest.approx(meter.integrated_loudness(y32), abs=1e-6)
    assert lra == pytest.approx(meter.loudness_range(y32), abs=1e-6)


def test_a_question_in_a_fresh_process_never_imports_scipy_signal(tmp_path):
    """A whole question on a real recording (perception pass: loudness, count_events, VAD, YAMNet, Whisper, the
    speaker count; then the answer) in a fresh process with a fresh tool cache: scipy.signal is never imported."""
    code = (
        "import json, sys\n"
        "from audiomind.api import AudioMind\n"
        f"r = AudioMind(trace_dir={str(tmp_path / 'traces')!r}).ask({str(ROOT / 'examples' / 'two_speakers.wav')!r}, "
        "'How many different speakers are there?', ['1', '2', '3'], write=False)\n"
        "tools = sorted({c.tool for c in r.state.tool_calls if c.status.value == 'ok'})\n"
        "print(json.dumps({'tools': tools, 'scipy.signal': 'scipy.signal' in sys.modules}))\n"
    )
    env = {"AUDIOMIND_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"loudness", "count_events", "asr", "speaker_count"} <= set(out["tools"]), out
    assert out["scipy.signal"] is False
