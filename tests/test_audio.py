"""The one decode cache (audiomind.audio.load_cached): keyed by path, mtime, size, rate and channel layout,
bounded, one decode per key under concurrency; and write_wav is atomic."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.audio import DecodeCache


@pytest.fixture
def tone(tmp_path):
    return aio.write_wav(tmp_path / "tone.wav", synth.tone(440, 0.5, amplitude=0.3), synth.SR)


def counting(monkeypatch) -> list[tuple]:
    calls: list[tuple] = []
    real = aio.load

    def load(path, sr=16000, mono=True):
        calls.append((str(path), sr, mono))
        return real(path, sr=sr, mono=mono)

    monkeypatch.setattr(aio, "load", load)
    return calls


def test_one_decode_per_file_rate_and_layout(tone, monkeypatch):
    calls = counting(monkeypatch)
    cache = DecodeCache()
    a = cache.load(tone, sr=16000)
    assert cache.load(tone, sr=16000) is a
    assert cache.load(str(tone), sr=16000) is a  # same file, however named
    b = cache.load(tone, sr=8000)
    c = cache.load(tone, sr=16000, mono=False)
    assert len(calls) == 3 and len(b) == len(a) // 2 and c.shape == (1, len(a))
    np.testing.assert_array_equal(a, aio.load(tone, sr=16000))


def test_a_rewritten_file_is_decoded_again(tone, monkeypatch):
    calls = counting(monkeypatch)
    cache = DecodeCache()
    first = cache.load(tone)
    aio.write_wav(tone, synth.tone(880, 0.7, amplitude=0.3), synth.SR)
    st = tone.stat()
    os.utime(tone, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a new mtime even on coarse clocks
    second = cache.load(tone)
    assert len(calls) == 2 and len(second) != len(first)


def test_the_cache_is_bounded_by_entries_and_bytes(tmp_path):
    paths = [aio.write_wav(tmp_path / f"t{i}.wav", synth.tone(220 * (i + 1), 0.25), synth.SR) for i in range(4)]
    cache = DecodeCache(max_entries=2)
    for p in paths:
        cache.load(p)
    assert len(cache) == 2
    one = cache.load(paths[-1]).nbytes
    small = DecodeCache(max_bytes=one + 1)
    for p in paths:
        small.load(p)
    assert len(small) == 1
    tiny = DecodeCache(max_bytes=1)  # the newest decode stays even above the byte budget
    assert tiny.load(paths[0]) is tiny.load(paths[0]) and len(tiny) == 1


def test_concurrent_readers_share_one_decode(tone, monkeypatch):
    calls = counting(monkeypatch)
    cache = DecodeCache()
    out: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: out.append(cache.load(tone))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(out) == 6 and all(y is out[0] for y in out)


def test_missing_files_raise_audio_errors(tmp_path):
    with pytest.raises(aio.AudioError, match="not found"):
        aio.load_cached(tmp_path / "nope.wav")


def test_tools_read_samples_through_the_process_cache(tone, tmp_path):
    from audiomind.artifacts import make_artifact
    from audiomind.tools.base import ToolContext

    art = make_artifact("a0", tone)
    ctx1 = ToolContext({"a0": art}, tmp_path / "d1")
    ctx2 = ToolContext({"a0": art}, tmp_path / "d2")
    assert ctx1.audio("a0").samples() is ctx2.audio("a0").samples() is aio.load_cached(tone)


def test_write_wav_leaves_no_temp_file(tmp_path):
    p = aio.write_wav(tmp_path / "w" / "x.wav", np.zeros(1600, dtype=np.float32), 16000)
    assert [x.name for x in p.parent.iterdir()] == ["x.wav"]
    assert aio.probe(p).duration_s == pytest.approx(0.1)
