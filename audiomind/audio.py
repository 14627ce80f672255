"""Audio input/output: probe, decode, hash and write, with clear errors for bad input.

Decoding goes through FFmpeg (the system binary, or the one imageio-ffmpeg ships) so every container a
user may hand us works the same way; WAV/FLAC/OGG take the faster libsndfile path.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
from pydantic import BaseModel

from audiomind.fsutil import atomic_path


class AudioError(ValueError):
    """Input audio that cannot be used; the message says why in words a user can act on."""


class DecodeDeadline(TimeoutError):
    """A decode ran past the deadline of the tool call it serves (see `decode_deadline`): it stopped between
    two blocks instead of going on in an abandoned thread."""


_DECODE_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("audiomind_decode_deadline",
                                                                               default=None)


@contextlib.contextmanager
def decode_deadline(expires_at: float | None) -> Iterator[None]:
    """Every decode in this context (this thread, and threads started with a copy of it) stops with
    DecodeDeadline at its next block once time.monotonic() passes `expires_at` (None: no deadline). The tool
    executor sets it for each call, so a call it stopped waiting for frees its CPU and memory within a block."""
    token = _DECODE_DEADLINE.set(expires_at)
    try:
        yield
    finally:
        _DECODE_DEADLINE.reset(token)


def check_deadline(what: str = "the analysis") -> None:
    """DecodeDeadline when the deadline of the tool call running in this thread has passed (nothing without one):
    a tool that walks long audio window by window calls it between windows, so an abandoned call stops within
    a window instead of running on, holding CPU and memory, after the run has moved on."""
    expires = _DECODE_DEADLINE.get()
    if expires is not None and time.monotonic() > expires:
        raise DecodeDeadline(f"{what} stopped: the call's deadline (its timeout or the run's time budget) passed")


def _check_deadline(p: Path) -> None:
    check_deadline(f"decoding {p.name}")


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


MIN_SAMPLE_RATE = 1000
MAX_SAMPLE_RATE = 768_000
MAX_CHANNELS = 64
"""Input formats beyond these are refused: no recording has them, and a decoder asked to resample or mix
them spends time and memory on what can only be a broken or hostile header."""


def _check_exists(path: Path) -> None:
    """A regular, non-empty file is there; otherwise one AudioError saying what is there instead (a FIFO or
    device would block a reader or never end, a symlink loop never resolves)."""
    import errno
    import stat

    from audiomind.paths import _kind

    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise AudioError(f"the audio path is a symlink loop (it never resolves to a file): {path}") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise AudioError(f"audio file not found: {path}") from None
        raise AudioError(f"cannot read the audio file {path}: {(exc.strerror or str(exc)).lower()}") from None
    except ValueError as exc:  # a NUL in the name
        raise AudioError(f"not a usable audio path ({exc}): {path!r}") from None
    if stat.S_ISDIR(st.st_mode):
        raise AudioError(f"expected an audio file, got a directory: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise AudioError(f"expected an audio file, got {_kind(st.st_mode)} (reading it could block or never end): "
                         f"{path}")
    if st.st_size == 0:
        raise AudioError(f"audio file is empty (0 bytes): {path}")
    if not os.access(path, os.R_OK):
        raise AudioError(f"cannot read the audio file {path}: permission denied")


def check_format(info: ProbeInfo) -> ProbeInfo:
    """Refuse sample rates and channel counts no real recording has (see MIN_SAMPLE_RATE ... MAX_CHANNELS)."""
    if not MIN_SAMPLE_RATE <= info.sample_rate <= MAX_SAMPLE_RATE:
        raise AudioError(f"unusable sample rate {info.sample_rate} Hz (accepted: {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} "
                         f"Hz): {info.path}")
    if info.channels > MAX_CHANNELS:
        raise AudioError(f"unusable channel count {info.channels} (at most {MAX_CHANNELS}): {info.path}")
    return info


def check_duration(path: str | Path, max_duration_s: float | None) -> ProbeInfo | None:
    """Refuse audio longer than `max_duration_s` (`--max-duration`) before anything decodes it; None: no
    limit (nothing is probed)."""
    if not max_duration_s:
        return None
    info = probe(path)
    if info.duration_s > max_duration_s:
        raise AudioError(f"the audio lasts {info.duration_s:.1f} s, more than the --max-duration of "
                         f"{max_duration_s:g} s: {path}")
    return info


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
    except Exception:  # noqa: BLE001 - anything libsndfile cannot read goes to ffmpeg, which says why
        info = _probe_ffmpeg(p)
    if info.channels < 1 or info.sample_rate < 1:
        raise AudioError(f"not an audio file (no audio stream): {p}")
    if info.duration_s <= 0:
        raise AudioError(f"audio has zero length: {p}")
    return check_format(info)


def _probe_ffmpeg(p: Path) -> ProbeInfo:
    exe = ffprobe_binary()
    if exe:
        proc = subprocess.run(
            [exe, "-v", "error", "-print_format", "json", "-show_streams", "-show_format", str(p)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if proc.returncode != 0:
            raise AudioError(f"not a readable audio file: {p} ({' '.join(proc.stderr.split())[:200]})")
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
    proc = subprocess.run([ffmpeg_binary(), "-hide_banner", "-i", str(p)], capture_output=True, text=True, check=False)
    if "Audio:" not in proc.stderr:
        raise AudioError(f"not an audio file (no audio stream): {p}")
    y = _decode_ffmpeg(p, 16000)
    return ProbeInfo(
        path=str(p), format=p.suffix.lstrip("."), codec="", duration_s=len(y) / 16000.0,
        sample_rate=16000, channels=1, size_bytes=p.stat().st_size,
    )


def _decode_ffmpeg(p: Path, sr: int, mono: bool = True) -> np.ndarray:
    return _collect(_ffmpeg_blocks(p, sr, 1 if mono else None), mono)


def finite(y: np.ndarray) -> np.ndarray:
    """`y` with NaN and +-Inf samples set to 0 (a copy only when there are any)."""
    if np.isfinite(y).all():
        return y
    return np.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0)


class SignalCheck(BaseModel):
    """What the input check at ingest found in the samples, and what was done about it."""

    non_finite_samples: int = 0
    peak: float = 0.0
    dc_offset: float = 0.0
    notes: list[str] = []


SILENCE_PEAK = 10 ** (-90 / 20)  # below -90 dBFS everywhere: digital silence
DC_ONLY_SPREAD = 1e-4  # what is left once the offset is removed, at most, for "DC only"


def signal_check(path: str | Path, block_frames: int = 1 << 16) -> SignalCheck:
    """Read the samples as they are in the file (not as decoded for the tools) and report non-finite values
    (zeroed by `load`: every tool and front end hears the repaired signal), digital silence and a DC-only
    signal. Files libsndfile cannot read block by block (mp3, m4a, ...) are checked on the 16 kHz mono
    decode; integer codecs cannot hold NaN anyway."""
    bad = 0
    peak = 0.0
    total = 0.0
    sq = 0.0
    n = 0
    try:
        blocks = sf.blocks(str(path), blocksize=block_frames, dtype="float64", always_2d=True)
        for b in blocks:
            ok = np.isfinite(b)
            bad += int(b.size - ok.sum())
            b = np.where(ok, b, 0.0)
            if b.size:
                peak = max(peak, float(np.abs(b).max()))
                total += float(b.sum())
                sq += float((b * b).sum())
                n += b.size
    except Exception:  # noqa: BLE001 - not a libsndfile format: look at the decode the tools use, block by block
        peak, total, sq, n = 0.0, 0.0, 0.0, 0
        for y in iter_blocks(path, sr=16000, mono=True):
            b = y.astype(np.float64)
            peak, total, sq = max(peak, float(np.abs(b).max(initial=0.0))), total + float(b.sum()), sq + float((b * b).sum())
            n += b.size
    mean = total / n if n else 0.0
    spread = max(0.0, sq / n - mean * mean) ** 0.5 if n else 0.0
    notes = []
    if bad:
        notes.append(f"{bad} non-finite sample(s) (NaN/Inf) were set to 0 before analysis: every tool and front "
                     "end hears the repaired signal")
    if peak < SILENCE_PEAK:
        notes.append("the signal is digital silence (peak below -90 dBFS)")
    elif spread < DC_ONLY_SPREAD:
        notes.append(f"the signal is a constant offset (DC {mean:+.4f}) with no audible content")
    return SignalCheck(non_finite_samples=bad, peak=round(peak, 6), dc_offset=round(mean, 6), notes=notes)


BLOCK_S = 30.0
"""Seconds of audio decoded per block: decoding never holds more than one block besides its result."""


def _sf_blocks(p: Path, sr: int, mono: bool, block_s: float = BLOCK_S, start_s: float = 0.0,
               end_s: float | None = None) -> Iterator[np.ndarray]:
    """libsndfile decode in blocks at `sr` (soxr HQ streaming resampler: the same samples as resampling the
    whole signal at once). Non-finite samples are zeroed before mixing or resampling."""
    with sf.SoundFile(str(p)) as f:
        file_sr, channels = int(f.samplerate), int(f.channels)
        total = int(f.frames) if f.frames and f.frames > 0 else None
        a = max(0, round(start_s * file_sr))
        b = total if end_s is None else round(end_s * file_sr)
        if total is not None and b is not None:
            b = min(b, total)
        if a:
            f.seek(a)
        stream = None
        if file_sr != sr:
            import soxr

            stream = soxr.ResampleStream(file_sr, sr, 1 if mono else channels, dtype="float32", quality="HQ")
        step = max(1, int(block_s * file_sr))
        left = None if b is None else max(0, b - a)
        while left is None or left > 0:
            _check_deadline(p)
            want = step if left is None else min(step, left)
            x = f.read(want, dtype="float32", always_2d=True)  # (n, channels)
            n = len(x)
            if left is not None:
                left -= n
            last = n < want or (left is not None and left <= 0)
            x = finite(x)
            x = x.mean(axis=1) if mono else x
            if stream is not None:
                x = stream.resample_chunk(x, last=last)
            if len(x):
                yield np.ascontiguousarray(x if mono else x.T, dtype=np.float32)
            if last:
                break


def _ffmpeg_blocks(p: Path, sr: int, channels: int | None, block_s: float = BLOCK_S, start_s: float = 0.0,
                   end_s: float | None = None) -> Iterator[np.ndarray]:
    """FFmpeg decode through a pipe, in blocks at `sr`: mono (channels=1) gives (n,) blocks, otherwise
    (channels, n) with `channels` from the probe. The process is ended if the reader stops early."""
    import tempfile

    mono = channels == 1
    if channels is None:
        channels = probe(p).channels
    cmd = [ffmpeg_binary(), "-v", "error", "-nostdin"]
    if start_s > 0:
        cmd += ["-ss", f"{start_s:.6f}"]
    cmd += ["-i", str(p)]
    if end_s is not None:
        cmd += ["-t", f"{max(0.0, end_s - start_s):.6f}"]
    cmd += ["-f", "f32le", "-acodec", "pcm_f32le"] + (["-ac", "1"] if mono else []) + ["-ar", str(sr), "-"]
    frame_bytes = 4 * channels
    step = max(1, int(block_s * sr)) * frame_bytes
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        try:
            pending = b""
            while True:
                _check_deadline(p)
                chunk = proc.stdout.read(step)  # type: ignore[union-attr]
                if not chunk:
                    break
                chunk = pending + chunk
                usable = len(chunk) - len(chunk) % frame_bytes
                pending = chunk[usable:]
                if usable:
                    x = np.frombuffer(chunk[:usable], dtype=np.float32).copy()
                    yield finite(x) if mono else finite(x.reshape(-1, channels).T.copy())
            rc = proc.wait(timeout=600)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if rc != 0:
            err.seek(0)
            msg = " ".join(err.read().decode(errors="replace").split())[:200]
            raise AudioError(f"could not decode audio: {p} ({msg})")


def _collect(blocks: Iterator[np.ndarray], mono: bool) -> np.ndarray:
    """Blocks joined into one float32 array, each block freed as it is copied: the result's pages are
    touched only as they are written, so decoding holds about one copy of the signal, not two."""
    parts = list(blocks)
    n = sum(b.shape[-1] for b in parts)
    if mono:
        out = np.empty(n, dtype=np.float32)
    else:
        out = np.empty((parts[0].shape[0] if parts else 1, n), dtype=np.float32)
    i = 0
    parts.reverse()
    while parts:
        b = parts.pop()
        k = b.shape[-1]
        out[..., i : i + k] = b
        i += k
        del b
    return out


def iter_blocks(path: str | Path, sr: int = 16000, mono: bool = True, block_s: float = BLOCK_S,
                start_s: float = 0.0, end_s: float | None = None) -> Iterator[np.ndarray]:
    """Decode `path` from `start_s` to `end_s` in blocks of about `block_s` seconds at `sr`: mono blocks are
    (n,), otherwise (channels, n), float32, non-finite samples zeroed. Memory: one block at a time, so a
    tool can stream an hour-long file (at its native rate, every channel) without holding it."""
    p = Path(path)
    _check_exists(p)
    try:
        with sf.SoundFile(str(p)):
            pass
    except Exception:  # noqa: BLE001 - as in `info`: ffmpeg decodes what libsndfile cannot
        yield from _ffmpeg_blocks(p, sr, 1 if mono else None, block_s, start_s, end_s)
        return
    yield from _sf_blocks(p, sr, mono, block_s, start_s, end_s)


MAX_DECODE_BYTES = 1 << 29
"""The most one whole-file decode (`load`) may hold: 512 MiB of float32, 2.3 hours of 16 kHz mono (the tools'
rate; the tools that decode at a clip's own rate take at most 10 minutes of it, tools.derive.MAX_WHOLE_CLIP_S).
A longer decode is refused from the header (AudioError) before a sample is decoded: a 10-hour file taken whole
at 16 kHz held 2.3 GB and the process 3.7 GB; 3 hours (0.7 GB) took the process to 1.97 GB (issue 35). Such
audio is read in blocks (`iter_blocks`) or through a window of it (`write_excerpt`)."""


def check_decode_size(path: str | Path, sr: int, mono: bool) -> None:
    """AudioError when decoding all of `path` at `sr` would hold more than MAX_DECODE_BYTES."""
    info = probe(path)
    need = info.duration_s * sr * (1 if mono else info.channels) * 4
    if need > MAX_DECODE_BYTES:
        raise AudioError(f"{info.duration_s:.0f} s of audio is too long to decode whole at {sr} Hz "
                         f"({need / 1e9:.1f} GB, more than {MAX_DECODE_BYTES / 1e9:.1f} GB): analyse a "
                         f"window of it (start_s/end_s, crop): {Path(path).name}")


def load(path: str | Path, sr: int = 16000, mono: bool = True) -> np.ndarray:
    """Decode to float32 at `sr`; mono gives shape (n,), otherwise (channels, n). Non-finite samples (NaN,
    Inf: a float file can hold them) are set to 0 (see `signal_check`). Decoded in blocks
    (`iter_blocks`): never the whole file at its native rate, never in float64. AudioError when the result
    would hold more than MAX_DECODE_BYTES; DecodeDeadline when the caller's `decode_deadline` passes."""
    p = Path(path)
    _check_exists(p)
    check_decode_size(p, sr, mono)
    try:
        y = _collect(_sf_blocks(p, sr, mono), mono)
    except DecodeDeadline:
        raise
    except Exception:  # noqa: BLE001 - as in `info`: ffmpeg decodes what libsndfile cannot
        y = _collect(_ffmpeg_blocks(p, sr, 1 if mono else None), mono)
    if y.size == 0:
        raise AudioError(f"audio decodes to zero samples: {p}")
    return y


def write_excerpt(src: str | Path, dst: str | Path, start_s: float, end_s: float) -> Path:
    """The stretch start_s..end_s of `src` as a WAV at `dst`, at its own rate and channels (16-bit PCM for
    a 16-bit or shallower source, else 32-bit float), decoded and written one block at a time: the memory
    it takes does not grow with the stretch or the file."""
    info = probe(src)
    subtype = "PCM_16" if info.codec in ("pcm_16", "pcm_s16le", "pcm_u8", "pcm_s8", "pcm_s16be") else "FLOAT"
    with atomic_path(dst) as tmp, sf.SoundFile(str(tmp), "w", samplerate=info.sample_rate,
                                               channels=info.channels, format="WAV", subtype=subtype) as out:
        for block in iter_blocks(src, sr=info.sample_rate, mono=info.channels == 1, start_s=start_s, end_s=end_s):
            out.write(block if block.ndim == 1 else block.T)
    return Path(dst)


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


PREVIEW_S = 60.0
"""What `preload` decodes of a clip too long to keep whole in the decode cache: its first minute."""


def preload(path: str | Path, sr: int = 16000) -> None:
    """Decode a clip as the tools will (mono at `sr`), so that a stream that does not decode fails now, with
    a clear AudioError: into the process's decode cache when the result fits it (the tools then share it);
    of a longer clip only its first PREVIEW_S seconds, block by block (holding a 10-hour clip decoded took
    2.3 GB before any tool ran, issue 35), and the rest is read by the tools that need it, in their windows."""
    info = probe(path)
    if info.duration_s * sr * 4 <= DECODED.max_bytes:
        load_cached(path, sr=sr, mono=True)
        return
    for _ in iter_blocks(path, sr=sr, mono=True, end_s=PREVIEW_S):
        pass


def write_wav(path: str | Path, y: np.ndarray, sr: int) -> Path:
    """Write float audio as 16-bit PCM WAV (what every front end accepts), atomically and durably."""
    p = Path(path)
    data = y.T if y.ndim == 2 else y
    with atomic_path(p) as tmp:
        sf.write(str(tmp), np.clip(data, -1.0, 1.0), sr, subtype="PCM_16", format="WAV")
    return p
