"""Durable, atomic file writes: a reader (or a crash) sees the old file or the new one, never half of one.

Every writer of a trace, a WAV, a cached tool result, a benchmark result or an assembled model file goes
through `atomic_path` (for writers that need a path, e.g. soundfile) or `atomic_write` (text or bytes):
1. write to a temp file in the target's own folder (so the rename cannot cross file systems),
2. flush and fsync the temp file (its bytes are on disk before its name is),
3. rename it over the target (atomic on POSIX),
4. fsync the folder (the rename itself survives a power cut).
On any error before the rename the temp file is removed and the target is left as it was.

A write the file system refuses (disk full, read-only, permission denied, name too long, a file-size
limit) raises `StorageError`, an OSError with the errno kept and a one-line message naming the path, so
every command can print it as one clear line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

_STORAGE_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.EFBIG: "the file is too large (a file-size limit is in force)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "the path is a folder",
    errno.EIO: "input/output error on the device",
}


class StorageError(OSError):
    """A file could not be written because of the file system (see _STORAGE_ERRNOS); `str()` is one line."""

    def __init__(self, code: int, message: str, filename: str | None = None):
        super().__init__(code, message)
        self.filename = filename
        self.message = message

    def __str__(self) -> str:
        return self.message


def is_storage_error(exc: BaseException) -> bool:
    """An OSError that says the file system refused a write (disk full, read-only, permission, ...)."""
    return isinstance(exc, StorageError) or (isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS)


def storage_error(exc: OSError, path: str | Path | None = None, action: str = "write") -> StorageError:
    """`exc` as a StorageError: 'cannot write PATH: no space left on the device (ENOSPC)'."""
    if isinstance(exc, StorageError):
        return exc
    code = exc.errno or 0
    why = _STORAGE_ERRNOS.get(code) or (exc.strerror or str(exc)).strip().rstrip(".").lower()
    name = errno.errorcode.get(code)
    where = path if path is not None else (exc.filename or "a file")
    where = str(where)
    if len(where) > 160:  # a too-long name must not fill the screen
        where = f"{where[:100]} … {where[-50:]}"
    return StorageError(code, f"cannot {action} {where}: {why}" + (f" ({name})" if name else ""), str(path or ""))


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
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if is_storage_error(exc):
            raise storage_error(exc, target) from exc
        raise
    # unique per process, thread and call; created by the caller with the usual permissions (umask)
    # (the name is cut so that a target whose name fits also has a temp name that fits)
    tmp = target.with_name(f".{target.name[:160]}.{os.getpid()}.{threading.get_ident()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and is_storage_error(exc):
            raise storage_error(exc, target) from exc
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
