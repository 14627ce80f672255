"""Durable, atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one.

Every writer of a trace, a WAV, a cached tool result, a benchmark result or an assembled model file goes
through `atomic_path` (for writers that need a path, e.g. soundfile) or `atomic_write` (text or bytes):
1. write to a temp file in the target's own folder (so the rename cannot cross file systems),
2. flush and fsync the temp file (its bytes are on disk before its name is),
3. rename it over the target (atomic on POSIX),
4. fsync the folder (the rename itself survives a power cut).
On any error before the rename the temp file is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path


def fsync_dir(path: str | Path) -> None:
    """fsync a folder so a rename inside it is durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temp path beside `path` for the caller to write; on a clean exit it is fsynced and renamed
    over `path` and the folder fsynced; on an exception it is removed. Parent folders are created."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # unique per process, thread and call; created by the caller with the usual permissions (umask)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(target.parent)


def atomic_write(path: str | Path, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    """Write text (in `encoding`) or bytes to `path` atomically and durably; returns the path."""
    target = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_path(target) as tmp:
        tmp.write_bytes(payload)
    return target


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """`atomic_write` for text (the benchmark runner's name for it)."""
    return atomic_write(path, text, encoding=encoding)
