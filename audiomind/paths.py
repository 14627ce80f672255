"""One path policy for every file name that comes from untrusted input (meta rows, item lists, traces).

A benchmark meta file or a trace is data someone else wrote: its paths may point anywhere (`../../x`,
`/etc/passwd`, a FIFO that blocks a reader forever, a symlink loop). `resolve_under` is the single check
every such reader applies before it opens anything: the path is resolved (symlinks included) and must
land inside one of the allowed roots, on a regular file. Each refusal has its own exception class and a
message naming the path, so a caller can record it per item instead of stopping a whole run.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "MAX_PATH_CHARS",
    "MissingPathError",
    "NotRegularFileError",
    "OutsideRootsError",
    "PathPolicyError",
    "PathTooLongError",
    "SymlinkLoopError",
    "check_path_length",
    "clip_text",
    "is_under",
    "markdown_text",
    "public_message",
    "resolve_under",
    "visible",
]

MAX_PATH_CHARS = 4096
"""The longest path (in characters, and in bytes once encoded) any untrusted input may name: Linux's PATH_MAX.
Checked before anything resolves a path: `os.path.realpath`'s time grows with the square of the number of
`..` parts, so a megabyte path of `../` held a server's event loop for seconds (issue 25)."""


class PathPolicyError(ValueError):
    """A path an untrusted input named was refused; `reason` is a short machine-readable tag."""

    reason = "refused"

    def __init__(self, message: str, path: str | Path | None = None):
        super().__init__(message)
        self.path = None if path is None else str(path)


class OutsideRootsError(PathPolicyError):
    """The path (after resolving `..` and symlinks) is outside every allowed root."""

    reason = "outside"


class NotRegularFileError(PathPolicyError):
    """The path is a directory, FIFO, device or socket: reading it could hang or mean nothing."""

    reason = "not_regular"


class SymlinkLoopError(PathPolicyError):
    """Resolving the path runs into a symlink loop."""

    reason = "symlink_loop"


class PathTooLongError(PathPolicyError):
    """The path is longer than MAX_PATH_CHARS (refused before it is resolved)."""

    reason = "too_long"


class MissingPathError(PathPolicyError, FileNotFoundError):
    """The path is inside the roots but nothing is there (callers may treat this as 'missing audio')."""

    reason = "missing"


def clip_text(text: object, limit: int = 200) -> str:
    """`text` cut to about `limit` characters, its middle left out with a note of how much: messages that
    echo input (a row, a path, a JSON value) must never dump a whole file on the terminal, and both ends
    stay readable (a JSON Schema message ends with what was wrong, a path with the file name)."""
    s = str(text)
    if len(s) <= limit:
        return s
    tail = max(limit // 3, 1)
    head = max(limit - tail, 1)
    return f"{s[:head]} … ({len(s) - head - tail} more characters) … {s[-tail:]}"


# What a terminal would obey rather than show: C0 controls but tab and newline (ESC starts CSI/OSC/DCS sequences,
# CR overwrites a line), DEL, the C1 controls (0x9b is a one-byte CSI, 0x90 DCS, 0x9d OSC), the Unicode line and
# paragraph separators and the bidi overrides/isolates (they reorder what is shown). `one_line` adds tab and newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(m: re.Match[str]) -> str:
    ch = m.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def visible(text: object, *, one_line: bool = False) -> str:
    """`text` with every terminal control character written as a visible escape (ESC -> \\x1b, CR -> \\r): the
    one function every command applies to untrusted text (a trace, a meta row, a file name, an error message)
    before it reaches a terminal, so nothing in it can clear the screen, set the title, make a link or rewrite
    earlier lines. `one_line`: tab and newline are escaped too (\\t, \\n), so a message stays one line."""
    return (_CONTROL_ONE_LINE if one_line else _CONTROL).sub(
        _escaped, text if isinstance(text, str) else str(text))  # a str enum keeps its value


_MARKDOWN_ACTIVE = re.compile(r"[\\`*_{}\[\]<>#|~&]")  # (- + ! are inert mid-line; ( ) only after an escaped ])


def markdown_text(text: object) -> str:
    """`visible(text)` made inert in Markdown (one table cell or line): Markdown- and HTML-active characters
    backslash-escaped (`<`, `>` and `&` as entities, so no tag or link is made), line breaks as spaces."""
    s = " ".join(visible(text).splitlines())
    return _MARKDOWN_ACTIVE.sub(lambda m: {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(m.group(), "\\" + m.group()), s)


def check_path_length(path: str | Path, limit: int = MAX_PATH_CHARS) -> None:
    """Raise PathTooLongError when `path` is longer than `limit` characters or `limit` bytes (file-system
    encoding); cheap (no resolving, no file-system access), so call it before anything else looks at a path."""
    raw = os.fspath(path)
    n = len(raw)
    if n > limit or len(os.fsencode(raw) if isinstance(raw, str) else raw) > limit:
        raise PathTooLongError(f"the path is {n} characters long, more than the {limit} allowed", raw)


def public_message(exc: PathPolicyError, shown: str | None = None) -> str:
    """A refusal worded for someone on the other side of a network: what was wrong, never where anything is
    on this machine (no resolved path, no allowed folder, no sign of whether a file outside them exists).
    `shown`: how to name the path (default: the path as given, cut to 120 characters, control characters
    escaped)."""
    name = shown if shown is not None else (repr(clip_text(exc.path, 120)) if exc.path is not None else "the path")
    if isinstance(exc, PathTooLongError):  # named by its first 120 characters, as every refusal names its path
        return f"{name}: {exc}"
    if isinstance(exc, OutsideRootsError):
        return f"{name}: outside the allowed folders"
    if isinstance(exc, MissingPathError):
        return f"{name}: no such file"
    if isinstance(exc, SymlinkLoopError):
        return f"{name}: symlink loop while resolving it"
    if isinstance(exc, NotRegularFileError):
        return f"{name}: not a regular file (a directory, pipe, device or socket)"
    if "NUL" in str(exc):
        return f"{name}: contains a NUL character"
    return f"{name}: cannot be resolved"


def _real_root(root: str | Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(os.fspath(root))))


def is_under(path: Path, roots: Iterable[Path]) -> bool:
    """True when the (already resolved) `path` is one of `roots` or inside one of them."""
    return any(path == r or path.is_relative_to(r) for r in roots)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def resolve_under(path: str | Path, roots: Iterable[str | Path], *, base: str | Path | None = None) -> Path:
    """The real path of `path` (relative ones are taken from `base`, else the current folder) when it is a
    regular file inside one of `roots`; otherwise raise a `PathPolicyError` subclass saying why.

    Nothing is opened: only the path's components are examined (lstat/readlink) and the final file is
    stat'ed, so a FIFO or device is refused without blocking and a file outside the roots is never read.
    A path longer than MAX_PATH_CHARS is refused before anything resolves it (PathTooLongError). The
    messages name resolved paths and the allowed folders, for a local user; a server answering over a
    network words its refusal with `public_message` instead.
    """
    check_path_length(path)
    if base is not None:
        check_path_length(base)
    real_roots = [_real_root(r) for r in roots]
    if not real_roots:
        raise OutsideRootsError(f"{clip_text(path)}: no folder is allowed to be read here", path)
    if "\x00" in os.fspath(path) or (base is not None and "\x00" in os.fspath(base)):
        raise PathPolicyError(f"{clip_text(repr(os.fspath(path)))}: contains a NUL character", path)
    raw = Path(os.fspath(path))
    if not raw.is_absolute():
        raw = Path(base or os.getcwd()) / raw
    allowed = ", ".join(clip_text(r, 120) for r in real_roots)
    try:
        real = Path(os.path.realpath(raw, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkLoopError(f"{clip_text(path)}: symlink loop while resolving it", path) from None
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise PathPolicyError(f"{clip_text(path)}: cannot resolve it ({exc.strerror})", path) from None
        try:  # missing: still say 'outside' first when it would be outside anyway
            loose = Path(os.path.realpath(raw))
        except (OSError, RuntimeError):
            loose = raw
        if not is_under(loose, real_roots):
            raise OutsideRootsError(f"{clip_text(path)}: resolves to {clip_text(loose, 120)}, outside the allowed "
                                    f"folder(s) {allowed}", path) from None
        raise MissingPathError(f"{clip_text(path)}: no such file", path) from None
    except RuntimeError:  # some Python versions report loops this way
        raise SymlinkLoopError(f"{clip_text(path)}: symlink loop while resolving it", path) from None
    if not is_under(real, real_roots):
        raise OutsideRootsError(f"{clip_text(path)}: resolves to {clip_text(real, 120)}, outside the allowed "
                                f"folder(s) {allowed}", path)
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkLoopError(f"{clip_text(path)}: symlink loop while resolving it", path) from None
        raise MissingPathError(f"{clip_text(path)}: cannot stat it ({exc.strerror})", path) from None
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(f"{clip_text(path)}: {_kind(mode)}, not a regular file", path)
    return real
