"""Artifacts: the original audio (a0) and every derived clip, each with a content hash and provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audiomind import audio as audio_io
from audiomind.state import Artifact


def make_artifact(
    artifact_id: str,
    path: str | Path,
    *,
    derived_from: str | None = None,
    operation: str | None = None,
    parameters: dict[str, Any] | None = None,
    created_by: str | None = None,
) -> Artifact:
    """Probe and hash a file into an Artifact (raises AudioError for unusable audio)."""
    info = audio_io.probe(path)  # first: a missing file, a FIFO, a device or a symlink loop is one AudioError
    p = Path(path).resolve()
    return Artifact(
        id=artifact_id,
        path=str(p),
        sha256=audio_io.sha256_file(p),
        duration_s=round(info.duration_s, 4),
        sample_rate=info.sample_rate,
        channels=info.channels,
        format=info.format,
        derived_from=derived_from,
        operation=operation,
        parameters=parameters or {},
        created_by=created_by,
    )


def ingest_original(path: str | Path, artifact_id: str = "a0") -> Artifact:
    """The question's audio as artifact a0 (its further clips as a1, a2, ...); fails early and clearly on
    missing, empty or non-audio files."""
    art = make_artifact(artifact_id, path, operation="input")
    audio_io.preload(art.path, sr=16000)  # decode now (kept for the tools): a corrupt stream fails at ingest
    check = audio_io.signal_check(art.path)  # NaN/Inf (repaired when decoded), silence, DC only: on the record
    if check.notes:
        art = art.model_copy(update={"parameters": {**art.parameters, "signal_check": check.model_dump()}})
    return art


def next_artifact_id(existing: list[Artifact]) -> str:
    nums = [int(a.id[1:]) for a in existing if a.id[1:].isdigit()]
    return f"a{max(nums, default=-1) + 1}"
