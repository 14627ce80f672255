"""The duration cap: one check, from the header, before anything decodes audio (issue 35).

Every way in that decodes audio (`ask`, the `judge` commands, `serve`'s routes, the MCP tools and its `ask`
tool) calls `check_clips` first. It reads only the header (audiomind.audio.probe: libsndfile's, else
ffprobe's) and refuses a clip longer than the cap with a DurationCapError, so a 10-hour FLAC of a few MB
is refused in milliseconds instead of being decoded for minutes into gigabytes of memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from audiomind.audio import AudioError, ProbeInfo, probe

__all__ = ["DEFAULT_MAX_DURATION_S", "DurationCapError", "check_clip", "check_clips"]

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
