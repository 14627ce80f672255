"""The duration cap: one check, from the header, before anything decodes audio (issue 35).

Every way in that decodes audio (`ask`, the `judge` commands, `serve`'s routes, the MCP tools and its `ask`
tool) calls `check_clips` first. It reads only the header (audiomind.audio.probe: libsndfile's, else
ffprobe's) and refuses a clip longer than the cap with a DurationCapError, so a 10-hour FLAC of a few MB
is refused in milliseconds instead of being decoded for minutes into gigabytes of memory.

A path a client names is opened once and checked as opened (`open_confined`, `snapshot_under`): `serve` and
the MCP server hand a run a copy of the checked file, never its name, which a client could swap for a symlink
to a file outside the allowed folders between the check and the decode.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from audiomind.audio import AudioError, ProbeInfo, probe

__all__ = ["DEFAULT_INPUTS_MAX_AGE_H", "DEFAULT_INPUTS_MAX_MB", "DEFAULT_MAX_DURATION_S", "DurationCapError",
           "InputFolder", "check_clip", "check_clips", "copy_into", "fd_path", "open_confined", "snapshot_under"]

_COPY_CHUNK = 1 << 20
DEFAULT_MAX_DURATION_S = 3600.0
"""The cap of every service (`serve`, `mcp`) and of the `judge` commands unless `--max-duration` says
otherwise: a 10-hour silent FLAC of 6.9 MB ran 307 s and reached 4.86 GB RSS (issue 25); on
/v1/judge/rubric it held the only run slot 4.5 minutes after its client left, at 4.1 GB (issue 35)."""


class DurationCapError(AudioError):
    """Audio longer than the cap; `duration_s` and `limit_s` say by how much."""

    def __init__(self, message: str, duration_s: float, limit_s: float):
        super().__init__(message)
        self.duration_s, self.limit_s = duration_s, limit_s


def check_clip(path: str | Path, max_duration_s: float | None, *, flag: str = "--max-duration",
               shown: str | None = None) -> ProbeInfo | None:
    """The header of `path` (AudioError when it is not usable audio); DurationCapError when it lasts longer
    than `max_duration_s`. None or 0: no cap, nothing is probed. `flag` names the option that sets the cap,
    `shown` how the message names the file (default: its path)."""
    if not max_duration_s:
        return None
    info = probe(path)
    if info.duration_s > max_duration_s:
        raise DurationCapError(f"the audio lasts {info.duration_s:.1f} s, more than the {flag} of "
                               f"{max_duration_s:g} s: {shown if shown is not None else path}",
                               info.duration_s, max_duration_s)
    return info


def check_clips(paths: Iterable[str | Path | None], max_duration_s: float | None, *,
                flag: str = "--max-duration") -> None:
    """`check_clip` for each clip given (None entries are skipped: an optional audio slot left empty)."""
    if not max_duration_s:
        return
    for p in paths:
        if p is not None:
            check_clip(p, max_duration_s, flag=flag)


# ---- one open, checked where it landed (`serve` and the MCP server: a name is opened once) ----------------------------------------------------------------

def _opened_where(fd: int) -> Path | None:
    """Where the file open as `fd` really is (/proc/self/fd), or None where there is no /proc."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def open_confined(path: str, roots: list[Path]) -> tuple[int, Path]:
    """(a read-only descriptor, the checked real path) of `path` when the file it opens is a regular file
    inside one of `roots`; a PathPolicyError subclass otherwise. The caller closes the descriptor."""
    from audiomind.paths import (
        MissingPathError,
        NotRegularFileError,
        OutsideRootsError,
        PathPolicyError,
        is_under,
        resolve_under,
    )

    real = resolve_under(path, roots, base=roots[0])
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:  # changed since the check: now a symlink (ELOOP), gone, ...
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise MissingPathError(f"{path}: no such file", path) from None
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise OutsideRootsError(f"{path}: became a symlink after it was checked", path) from None
        raise PathPolicyError(f"{path}: cannot open it ({exc.strerror})", path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(f"{path}: not a regular file", path)
        where = _opened_where(fd)
        if where is None:  # no /proc: the opened file must be the one at the checked path
            try:
                now = os.stat(real, follow_symlinks=False)
            except OSError:
                raise MissingPathError(f"{path}: no such file", path) from None
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise OutsideRootsError(f"{path}: changed while it was opened", path)
            where = real
        if not is_under(where, [Path(os.path.realpath(r)) for r in roots]):
            raise OutsideRootsError(f"{path}: the file opened is outside the allowed folders", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, real


def fd_path(fd: int) -> str:
    """A name of the open file `fd` that this process and its children (ffprobe) can open."""
    return f"/proc/{os.getpid()}/fd/{fd}"


def copy_into(fd: int, folder: Path, suffix: str) -> Path:
    """The bytes of `fd` copied to `folder/<sha256><suffix>` (content-addressed: an existing copy is kept, and
    marked as used now, so InputFolder's age limit counts from its last use)."""
    h = hashlib.sha256()
    tmp_fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=".snapshot-", suffix=suffix)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(tmp_fd, "wb") as out:
            while chunk := os.read(fd, _COPY_CHUNK):
                h.update(chunk)
                out.write(chunk)
        dest = folder / f"{h.hexdigest()}{suffix}"
        # the same bytes either way: the rename also brings back a copy that InputFolder.prune removed meanwhile
        os.replace(tmp, dest)
        return dest
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def snapshot_under(path: str, roots: list[Path], folder: Path, suffix: str,
                   max_duration_s: float | None, shown: str | None = None) -> tuple[Path, int | None]:
    """(the audio a run reads, a descriptor the caller must close after the run or None) for the file `path`
    names under `roots`, checked as opened (open_confined) and refused over the duration cap from its header
    (read through the descriptor). Its bytes are copied from that descriptor into `folder` (content-
    addressed): the run reads the copy, never the name again. When `folder` will not take the copy (full,
    read-only), the run reads the open descriptor itself (fd_path) and the caller holds it open until the
    run ends. PathPolicyError or AudioError (naming the file as `shown`) otherwise."""
    from audiomind.fsutil import is_storage_error

    fd, _real = open_confined(path, roots)
    try:
        name = fd_path(fd)
        try:
            if not check_clip(name, max_duration_s, shown=shown or path):
                probe(name)  # no cap: still refuse what is not audio before copying it
        except DurationCapError:
            raise
        except AudioError as exc:  # named as the client named it, not by its descriptor
            raise AudioError(str(exc).replace(name, shown or path)) from None
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            copy = copy_into(fd, folder, suffix)
        except OSError as exc:
            if not is_storage_error(exc):
                raise
            os.lseek(fd, 0, os.SEEK_SET)
            return Path(name), fd  # held open by the caller: still the checked file, and only it
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return copy, None


# ---- the folder of input copies: kept for the traces, bounded in size and age ---------------------------

DEFAULT_INPUTS_MAX_MB = 2048.0
"""The most megabytes the input copies of a service (`serve`'s `<trace_dir>/uploads/`, `mcp`'s
`<runs_dir>/inputs/`) may hold together; past it the least recently used copies are deleted
(env AUDIOMIND_INPUTS_MAX_MB)."""
DEFAULT_INPUTS_MAX_AGE_H = 168.0
"""Hours an input copy is kept after its last use (7 days; env AUDIOMIND_INPUTS_MAX_AGE_H)."""
INPUTS_FRESH_S = 900.0
"""A copy written or used in the last this many seconds is never deleted (a run may be about to read it)."""
STALE_TEMP_S = 3600.0
"""A half-written temporary copy (`.upload-*`, `.snapshot-*`, left by a crash) older than this is deleted."""


def inputs_limits_from_env() -> tuple[float, float]:
    """(max MB, max age in hours) of the input copies: Settings.inputs_max_mb / inputs_max_age_h
    (AUDIOMIND_INPUTS_MAX_MB / AUDIOMIND_INPUTS_MAX_AGE_H), else the defaults."""
    from audiomind.config import settings

    st = settings()
    return st.inputs_max_mb or DEFAULT_INPUTS_MAX_MB, st.inputs_max_age_h or DEFAULT_INPUTS_MAX_AGE_H


class InputFolder:
    """The copies a service makes of its inputs (uploads, and files named under a root: `copy_into`), one
    mechanism for `serve` and `mcp`. A run's trace names its copy (question.audio_path, artifact a0): the viewer
    embeds it and `trace audit` hashes it, so a copy outlives its run; the folder is bounded instead. `prune`
    deletes the copies unused for longer than `max_age_s`, then the least recently used ones until the folder
    holds at most `max_bytes`; a copy a run is using (`use` ... `done`) or used in the last INPUTS_FRESH_S is
    never deleted. A trace whose copy was deleted keeps its sha256 (audit then reports the file missing).
    `done` prunes at most every `interval_s`."""

    def __init__(self, folder: Path, *, max_bytes: float, max_age_s: float, interval_s: float = 5.0,
                 fresh_s: float = INPUTS_FRESH_S):
        import threading

        self.folder = Path(folder)
        self.max_bytes, self.max_age_s, self.interval_s, self.fresh_s = max_bytes, max_age_s, interval_s, fresh_s
        self._lock = threading.Lock()
        self._in_use: dict[str, int] = {}
        self._last = 0.0

    def _key(self, path: str | Path) -> str | None:
        p = Path(path)
        return p.name if p.parent == self.folder else None  # a descriptor path (no copy): nothing to keep

    def use(self, path: str | Path) -> None:
        """A run is about to read `path` (a copy in this folder): kept until `done`, and marked as used now."""
        key = self._key(path)
        if key is None:
            return
        with self._lock:
            self._in_use[key] = self._in_use.get(key, 0) + 1
        with contextlib.suppress(OSError):
            os.utime(path)

    def done(self, paths: Iterable[str | Path | None]) -> None:
        """The runs that read these copies have ended; prune the folder (at most every `interval_s`)."""
        import time

        with self._lock:
            for p in paths:
                key = self._key(p) if p is not None else None
                if key is not None and key in self._in_use:
                    self._in_use[key] -= 1
                    if self._in_use[key] <= 0:
                        del self._in_use[key]
            due = time.monotonic() - self._last >= self.interval_s
            if due:
                self._last = time.monotonic()
        if due:
            self.prune()

    def prune(self) -> tuple[int, int]:
        """Delete what the limits say (see the class); (files deleted, bytes freed). Never raises for a file
        that cannot be deleted (it is left, and tried again next time)."""
        import time

        now = time.time()
        with self._lock:
            in_use = set(self._in_use)
        entries: list[tuple[float, int, Path]] = []
        removed = freed = kept = 0

        def drop(path: Path, size: int) -> None:
            nonlocal removed, freed
            try:
                path.unlink()
            except OSError:
                return
            removed += 1
            freed += size

        try:
            scan = list(os.scandir(self.folder))
        except OSError:
            return 0, 0
        for entry in scan:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            age = now - st.st_mtime
            path = Path(entry.path)
            if entry.name.startswith("."):  # a copy being written (or left by a crash)
                if entry.name.startswith((".upload-", ".snapshot-")) and age > STALE_TEMP_S:
                    drop(path, st.st_size)
                continue
            if entry.name in in_use or age < self.fresh_s:  # counted, never deleted
                kept += st.st_size
                continue
            if age > self.max_age_s:
                drop(path, st.st_size)
            else:
                entries.append((st.st_mtime, st.st_size, path))
        total = kept + sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries, key=lambda e: e[0]):  # least recently used first
            if total <= self.max_bytes:
                break
            drop(path, size)
            total -= size
        return removed, freed
