"""What `audiomind serve` does so that no request can escape its roots or hold the server (issue 35).

- `snapshot_under`: a path a request names is resolved under the roots (audiomind.paths.resolve_under), then
  opened ONCE (O_NOFOLLOW: a last component swapped for a symlink since the check is refused), and the OPENED
  file is checked: a regular file, whose real location (/proc/self/fd, or its st_dev/st_ino against the
  checked path where there is no /proc) is inside a root. Its header is probed through that descriptor (the
  duration cap, audiomind.limits) and its bytes are copied from it into the content-addressed uploads
  folder; the run gets that copy, which no client can swap. Before this, swapping ROOT/race.wav between a
  file and a symlink to a file outside every root while requests ran made 208 of 2,587 requests analyse
  the outside file, because the run resolved the name again after the check.
- the read bounds (headers and body due in time, the body's size) are audiomind.http_bounds', shared with
  `mcp --http`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from fastapi import HTTPException

# one open, checked where it landed: in audiomind.limits, which the MCP server (a lower layer) shares
from audiomind.limits import copy_into, fd_path, open_confined, snapshot_under  # noqa: F401


def readable_trace(f: Path, trace_id: str) -> tuple[str, Any]:
    """(the text, the JSON value) of a served trace file, read by the bounded reader and parsed with its limits:
    a file that is not UTF-8, not JSON, nested too deeply or holding a 5,001-digit integer is an HTTPException
    422 naming what is wrong, never a 500 nor served as it is."""
    from audiomind.fsutil import InputFileError, decode_utf8, loads_json, read_input_bytes

    try:
        text = decode_utf8(read_input_bytes(f), "the trace")
        return text, loads_json(text)
    except InputFileError as exc:
        raise HTTPException(422, f"trace {trace_id!r} is not a readable trace: {exc.reason}") from None


def trace_state(f: Path, trace_id: str) -> Any:
    """The EvidenceState of a served trace file (`readable_trace`), or a 422 when it does not fit the schema."""
    from pydantic import ValidationError

    from audiomind.state import EvidenceState

    try:
        return EvidenceState.model_validate(readable_trace(f, trace_id)[1])
    except ValidationError as exc:
        raise HTTPException(422, f"trace {trace_id!r} is not a readable trace: {exc.error_count()} field(s) do "
                                 "not fit the trace schema") from None


def _audio_reason(exc: Exception, path: Path) -> str:
    """Why a file is not usable audio, in words that name no server path: the decoder's own reason (the part
    of ffprobe's message after the file name), or the probe's sentence with the path taken out."""
    text = str(exc)
    for p in {str(path), os.path.realpath(path)}:
        text = text.replace(f"{p}: ", "").replace(p, "")
    inner = re.search(r"\((.*)\)\s*$", text)
    head = text[:inner.start()] if inner else text
    head = head.strip(" :").removesuffix("not a readable audio file").strip(" :")
    reason = (inner.group(1).strip(" :") if inner else "") or head
    return reason or "unreadable"


def check_upload(path: Path, shown: str, max_duration_s: float | None = None) -> None:
    """An upload (named `shown` in the refusal) is audio, from its header, and not longer than the cap
    (audiomind.limits, as on every route); a refused one is deleted."""
    from audiomind.audio import AudioError, probe
    from audiomind.limits import DurationCapError, check_clip

    try:
        check_clip(path, max_duration_s) or probe(path)
    except DurationCapError as exc:
        path.unlink(missing_ok=True)  # never usable here: not kept
        raise HTTPException(400, f"the uploaded file {shown} lasts {exc.duration_s:.1f} s, more than "
                                 f"this server's limit of {exc.limit_s:g} s") from None
    except AudioError as exc:
        path.unlink(missing_ok=True)
        raise HTTPException(400, f"the uploaded file {shown} is not usable audio: "
                                 f"{_audio_reason(exc, path)}") from None


async def slot_audio(service: Any, slots: Any, kw: dict[str, Any], paths: dict[str, tuple[str | None, str]]
                     ) -> tuple[dict[str, Path | None], dict[str, str]]:
    """({slot: its clip, or None for an optional slot left empty}, {clip: how to name it back}) of a judge
    request: each through `service.audio_input` (an upload, or a checked copy of a path under a root); on a
    refusal, the descriptors already held for the earlier slots are released first."""
    audio: dict[str, Path | None] = {}
    shown: dict[str, str] = {}
    for slot in slots:
        upload, (path, field) = kw[slot.name], paths[slot.name]
        if upload is None and not path and not slot.required:
            audio[slot.name] = None
            continue
        try:
            audio[slot.name], shown_as = await service.audio_input(upload, path, slot.name, field)
        except BaseException:
            service.release(audio.values())
            raise
        shown[str(audio[slot.name])] = shown_as
    return audio, shown
