"""Audio input/output: probe, decode, hash and write, with clear errors for bad input.

Decoding goes through FFmpeg (the system binary, or the one imageio-ffmpeg ships) so every container a
user may hand us works the same way; WAV/FLAC/OGG take the faster libsndfile path.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
from pydantic import BaseModel

from audiomind.fsutil import atomic_path


class AudioError(ValueError):
    """Input audio that cannot be used; the message says why in words a user can act on."""


class ProbeInfo(BaseModel):
    path: str
    format: str
    codec: str
    duration_s: float
    sample_rate: int
    channels: int
    bit_rate: int | None = None
    size_bytes: int


@lru_cache(maxsize=1)
def ffmpeg_binary() -> str:
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise AudioError("no ffmpeg found: install Debian's ffmpeg or the imageio-ffmpeg package") from exc


def ffprobe_binary() -> str | None:
    return shutil.which("ffprobe")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise AudioError(f"audio file not found: {path}")
    if path.is_dir():
        raise AudioError(f"expected an audio file, got a directory: {path}")
    if path.stat().st_size == 0:
        raise AudioError(f"audio file is empty (0 bytes): {path}")


def probe(path: str | Path) -> ProbeInfo:
    """Container, codec, duration, rate and channels; raises AudioError for non-audio or empty audio."""
    p = Path(path)
    _check_exists(p)
    info: ProbeInfo | None = None
    try:
        si = sf.info(str(p))
        info = ProbeInfo(
            path=str(p),
            format=si.format.lower(),
            codec=si.subtype.lower(),
            duration_s=float(si.frames) / si.samplerate if si.samplerate else 0.0,
            sample_rate=int(si.samplerate),
            channels=int(si.channels),
            size_bytes=p.stat().st_size,
        )
    except Exception:
        info = _probe_ffmpeg(p)
    if info.channels < 1 or info.sample_rate < 1:
        raise AudioError(f"not an audio file (no audio stream): {p}")
    if info.duration_s <= 0:
        raise AudioError(f"audio has zero length: {p}")
    return info


def _probe_ffmpeg(p: Path) -> ProbeInfo:
    exe = ffprobe_binary()
    if exe:
        proc = subprocess.run(
            [exe, "-v", "error", "-print_format", "json", "-show_streams", "-show_format", str(p)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if proc.returncode != 0:
            raise AudioError(f"not a readable audio file: {p} ({proc.stderr.strip()[:200]})")
        meta = json.loads(proc.stdout or "{}")
        streams = [s for s in meta.get("streams", []) if s.get("codec_type") == "audio"]
        if not streams:
            raise AudioError(f"not an audio file (no audio stream): {p}")
        s = streams[0]
        fmt = meta.get("format", {})
        duration = float(s.get("duration") or fmt.get("duration") or 0.0)
        if duration <= 0:
            duration = len(_decode_ffmpeg(p, 16000)) / 16000.0
        return ProbeInfo(
            path=str(p),
            format=str(fmt.get("format_name", "")).split(",")[0],
            codec=str(s.get("codec_name", "")),
            duration_s=duration,
            sample_rate=int(s.get("sample_rate") or 0),
            channels=int(s.get("channels") or 0),
            bit_rate=int(fmt["bit_rate"]) if fmt.get("bit_rate") else None,
            size_bytes=p.stat().st_size,
        )
    # No ffprobe: decode with ffmpeg and read what it reports.
    proc = subprocess.run([ffmpeg_binary(), "-hide_banner", "-i", str(p)], capture_output=True, text=True)
    if "Audio:" not in proc.stderr:
        raise AudioError(f"not an audio file (no audio stream): {p}")
    y = _decode_ffmpeg(p, 16000)
    return ProbeInfo(
        path=str(p), format=p.suffix.lstrip("."), codec="", duration_s=len(y) / 16000.0,
        sample_rate=16000, channels=1, size_bytes=p.stat().st_size,
    )


def _decode_ffmpeg(p: Path, sr: int, mono: bool = True) -> np.ndarray:
    cmd = [ffmpeg_binary(), "-v", "error", "-nostdin", "-i", str(p), "-f", "f32le", "-acodec", "pcm_f32le"]
    if mono:
        cmd += ["-ac", "1"]
    cmd += ["-ar", str(sr), "-"]
    proc = subprocess.run(cmd, capture_output=True, timeout=600)
    if proc.returncode != 0:
        raise AudioError(f"could not decode audio: {p} ({proc.stderr.decode(errors='replace').strip()[:200]})")
    return np.frombuffer(proc.stdout, dtype=np.float32).copy()


def load(path: str | Path, sr: int = 16000, mono: bool = True) -> np.ndarray:
    """Decode to float32 at `sr`; mono gives shape (n,), otherwise (channels, n)."""
    p = Path(path)
    _check_exists(p)
    try:
        y, file_sr = sf.read(str(p), dtype="float32", always_2d=True)
        y = y.T  # (channels, n)
        if mono:
            y = y.mean(axis=0)
        if file_sr != sr:
            import librosa

            y = librosa.resample(y, orig_sr=file_sr, target_sr=sr, res_type="soxr_hq")
        y = np.ascontiguousarray(y, dtype=np.float32)
    except Exception:
        if not mono:
            info = probe(p)
            inter = _decode_ffmpeg_multi(p, sr, info.channels)
            y = inter
        else:
            y = _decode_ffmpeg(p, sr, mono=True)
    if y.size == 0:
        raise AudioError(f"audio decodes to zero samples: {p}")
    return y


def _decode_ffmpeg_multi(p: Path, sr: int, channels: int) -> np.ndarray:
    cmd = [ffmpeg_binary(), "-v", "error", "-nostdin", "-i", str(p), "-f", "f32le", "-acodec", "pcm_f32le",
           "-ar", str(sr), "-"]
    proc = subprocess.run(cmd, capture_output=True, timeout=600)
    if proc.returncode != 0:
        raise AudioError(f"could not decode audio: {p}")
    flat = np.frombuffer(proc.stdout, dtype=np.float32)
    return flat.reshape(-1, channels).T.copy()


# ---- one decode cache for the process ----------------------------------------------------------------

DECODE_CACHE_ENTRIES = 32
DECODE_CACHE_BYTES = 512 * 1024 * 1024

DecodeKey = tuple[str, int, int, int, bool]


class DecodeCache:
    """Decoded samples by (resolved path, mtime, size, rate, mono), least recently used out first once
    more than `max_entries` decodes or `max_bytes` of samples are held (the newest decode always stays,
    so a long recording is decoded once per run however large it is). A file rewritten in place has a new
    mtime or size, hence a new key. Concurrent requests for one key decode it once."""

    def __init__(self, max_entries: int = DECODE_CACHE_ENTRIES, max_bytes: int = DECODE_CACHE_BYTES):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[DecodeKey, np.ndarray] = OrderedDict()
        self._guard = threading.Lock()
        self._decoding: dict[DecodeKey, threading.Lock] = {}

    @staticmethod
    def key(path: str | Path, sr: int, mono: bool) -> DecodeKey:
        p = Path(path)
        _check_exists(p)
        st = p.stat()
        return (str(p.resolve()), st.st_mtime_ns, st.st_size, int(sr), bool(mono))

    def _hit(self, key: DecodeKey) -> np.ndarray | None:
        with self._guard:
            y = self._items.get(key)
            if y is not None:
                self._items.move_to_end(key)
            return y

    def load(self, path: str | Path, sr: int = 16000, mono: bool = True) -> np.ndarray:
        """`load(path, sr, mono)` through the cache. The array is shared: copy it before changing it."""
        key = self.key(path, sr, mono)
        y = self._hit(key)
        if y is not None:
            return y
        with self._guard:
            decoding = self._decoding.setdefault(key, threading.Lock())
        with decoding:
            y = self._hit(key)
            if y is None:
                y = load(path, sr=sr, mono=mono)
                self._put(key, y)
        with self._guard:
            self._decoding.pop(key, None)
        return y

    def _put(self, key: DecodeKey, y: np.ndarray) -> None:
        with self._guard:
            self._items[key] = y
            total = sum(a.nbytes for a in self._items.values())
            while len(self._items) > 1 and (len(self._items) > self.max_entries or total > self.max_bytes):
                _, old = self._items.popitem(last=False)
                total -= old.nbytes

    def clear(self) -> None:
        with self._guard:
            self._items.clear()

    def __len__(self) -> int:
        with self._guard:
            return len(self._items)


DECODED = DecodeCache()


def load_cached(path: str | Path, sr: int = 16000, mono: bool = True) -> np.ndarray:
    """`load` through the process-wide decode cache (tools, front ends and judges share one decode per
    file, rate and channel layout). The array is shared: copy it before changing it."""
    return DECODED.load(path, sr=sr, mono=mono)


def write_wav(path: str | Path, y: np.ndarray, sr: int) -> Path:
    """Write float audio as 16-bit PCM WAV (what every front end accepts), atomically and durably."""
    p = Path(path)
    data = y.T if y.ndim == 2 else y
    with atomic_path(p) as tmp:
        sf.write(str(tmp), np.clip(data, -1.0, 1.0), sr, subtype="PCM_16", format="WAV")
    return p
