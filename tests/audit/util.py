"""Helpers shared by the audit tests."""

from __future__ import annotations

import shutil
from pathlib import Path


def copy_run(run, dest: Path) -> Path:
    """Copy a trace and its artifact folder (relative layout kept) into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    p = dest / run.path.name
    shutil.copyfile(run.path, p)
    art = Path(run.state.run.artifact_dir)
    if art.is_dir():
        shutil.copytree(art, dest / art.name)
    return p
