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
from typing import Any, BinaryIO

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


# ---- bounded reading of untrusted input files --------------------------------------------------------
#
# Every file a command reads that someone else may have written (a trace, a run's results.jsonl / run.json /
# scores.json, an item list or meta file) is read through `open_input` and, when it is JSON, parsed by
# `loads_json`: a FIFO, a device (/dev/zero) or a symlink to one is refused without blocking, a file larger
# than the cap is refused before it is read, and JSON nested too deeply or holding a huge integer is one
# clear error (InputFileError, a ValueError), never a hang, an exhausted memory or a traceback.

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""The most bytes one input file may hold (a 10,000-item results.jsonl is about 20 MB)."""
MAX_ROW_BYTES = 4 * 1024 * 1024
"""The most bytes one line of a JSON Lines file may hold; a longer line is one bad row."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a JSON input may have (a trace needs about 8)."""
MAX_INT_DIGITS = 4300
"""The most digits a JSON integer may have (Python's own int-from-string limit)."""


class InputFileError(ValueError):
    """An input file (or one JSON value in it) was refused or could not be read; `str()` is one line naming
    the file. `line`/`column`: where in the text, when known."""

    def __init__(self, message: str, path: str | Path | None = None, *, line: int | None = None,
                 column: int | None = None, reason: str = ""):
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.line, self.column = line, column
        self.reason = reason or message


def _kind_of(mode: int) -> str:
    from audiomind.paths import _kind

    return _kind(mode)


def _shown(path: str | Path) -> str:
    from audiomind.paths import clip_text, visible

    return visible(clip_text(os.fspath(path), 200))


def open_input(path: str | Path) -> BinaryIO:
    """Open an input file for reading (binary) when it is a regular file; otherwise raise InputFileError.
    The path is stat'ed before it is opened (a device is never opened), opened non-blocking (a FIFO that
    appears in between cannot hang the open) and fstat'ed again once open (what was opened is what was
    checked)."""
    import stat as st_

    shown = _shown(path)
    try:
        mode = os.stat(path).st_mode
        if st_.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
            mode = os.fstat(fd).st_mode
            if st_.S_ISREG(mode):
                return os.fdopen(fd, "rb")
            os.close(fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputFileError(f"cannot read {shown}: a symlink loop", path) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise InputFileError(f"cannot read {shown}: no such file", path) from None
        why = _STORAGE_ERRNOS.get(exc.errno or 0) or (exc.strerror or type(exc).__name__).lower()
        raise InputFileError(f"cannot read {shown}: {why}", path) from None
    raise InputFileError(f"cannot read {shown}: {_kind_of(mode)}, not a regular file", path)


def _too_big(path: str | Path, size: int, limit: int) -> InputFileError:
    return InputFileError(f"cannot read {_shown(path)}: {size:,} bytes, more than the {limit:,} an input file "
                          "may hold", path)


def read_input_bytes(path: str | Path, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file (see `open_input`), refused when it holds more than `max_bytes`."""
    with open_input(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise _too_big(path, size, max_bytes)
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while being read
        raise _too_big(path, len(data), max_bytes)
    return data


def decode_utf8(data: bytes, where: str) -> str:
    """`data` as UTF-8 text, or InputFileError 'WHERE: not UTF-8 text (invalid start byte at byte N)'."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})",
                             reason=f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_input_text(path: str | Path, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """An input file as UTF-8 text (see `read_input_bytes`); InputFileError when it is not UTF-8."""
    try:
        return decode_utf8(read_input_bytes(path, max_bytes), _shown(path))
    except InputFileError as exc:
        exc.path = str(path)
        raise


def input_lines(path: str | Path, max_bytes: int = MAX_INPUT_BYTES,
                max_line_bytes: int = MAX_ROW_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """(line number from 1, the line's bytes without its newline) for each line of an input file, streamed;
    a line longer than `max_line_bytes` comes as (n, None) (its bytes skipped, never held). The file is
    refused (InputFileError) when it is not a regular file or holds more than `max_bytes`."""
    with open_input(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise _too_big(path, size, max_bytes)
        total, n = 0, 0
        while True:
            line = f.readline(max_line_bytes + 1)
            if not line:
                return
            n += 1
            total += len(line)
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest of the long line, a block at a time
                    line = f.readline(1 << 20)
                    total += len(line)
                    if total > max_bytes:
                        raise _too_big(path, total, max_bytes)
                yield n, None
                continue
            if total > max_bytes:
                raise _too_big(path, total, max_bytes)
            yield n, line.rstrip(b"\r\n")


class _BigInt(ValueError):
    def __init__(self, digits: int):
        super().__init__(digits)
        self.digits = digits


def _depth_over(value: Any, limit: int) -> bool:
    """Whether arrays/objects in `value` nest deeper than `limit` (iterative: no recursion of its own)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = list(v.values())
        elif not isinstance(v, list):
            continue
        if d > limit:
            return True
        stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return False


def loads_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH, max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """Parse untrusted JSON text; InputFileError (a ValueError, with `line` and `column` where known) when it is
    not JSON, nests deeper than `max_depth` or holds an integer of more than `max_int_digits` digits."""
    import json

    def parse_int(s: str) -> int:
        digits = len(s) - (s[0] == "-")
        if digits > max_int_digits:
            raise _BigInt(digits)
        return int(s)

    try:
        value = json.loads(text, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                             line=exc.lineno, column=exc.colno, reason=exc.msg) from None
    except _BigInt as exc:
        raise InputFileError(f"a JSON integer of {exc.digits:,} digits (at most {max_int_digits:,})") from None
    except RecursionError:
        raise InputFileError(f"JSON nested too deeply (more than {max_depth} levels)") from None
    except UnicodeDecodeError as exc:
        raise InputFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    opens = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opens > max_depth and _depth_over(value, max_depth):
        raise InputFileError(f"JSON nested too deeply (more than {max_depth} levels)")
    return value


def load_json_file(path: str | Path, max_bytes: int = MAX_INPUT_BYTES, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """An input file's JSON value (see `read_input_text` and `loads_json`); every refusal is an
    InputFileError whose message starts with the file's name."""
    text = read_input_text(path, max_bytes)
    try:
        return loads_json(text, max_depth=max_depth)
    except InputFileError as exc:
        raise InputFileError(f"{_shown(path)}: {exc}", path, line=exc.line, column=exc.column,
                             reason=str(exc)) from None
