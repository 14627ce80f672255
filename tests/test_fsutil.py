"""atomic_write / atomic_path: the target holds the old content or the new, never half; the temp file is
in the target's folder, fsynced before the rename, and removed on any error."""

from __future__ import annotations

import os

import pytest

from audiomind import fsutil
from audiomind.fsutil import atomic_path, atomic_write, atomic_write_text


def test_text_and_bytes_replace_the_target(tmp_path):
    p = tmp_path / "sub" / "out.json"
    assert atomic_write(p, "first") == p  # parent folders are created
    assert p.read_text() == "first"
    atomic_write(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    atomic_write_text(p, "caf\u00e9")
    assert p.read_text(encoding="utf-8") == "caf\u00e9"
    assert sorted(x.name for x in p.parent.iterdir()) == ["out.json"]  # no temp file left


def test_the_file_is_fsynced_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(fsutil.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(fsutil.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    monkeypatch.setattr(fsutil, "fsync_dir", lambda path: events.append(f"fsync_dir {path}"))
    p = tmp_path / "x.txt"
    atomic_write(p, "data")
    assert events == ["fsync", "replace", f"fsync_dir {tmp_path}"]


def test_an_error_leaves_the_old_file_and_no_temp_file(tmp_path):
    p = tmp_path / "keep.txt"
    p.write_text("old")
    seen = []
    with pytest.raises(RuntimeError, match="writer failed"), atomic_path(p) as tmp:
        seen.append(tmp)
        assert tmp.parent == p.parent and tmp.name.startswith(".keep.txt.") and tmp.suffix == ".tmp"
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert p.read_text() == "old"
    assert not seen[0].exists()
    assert [x.name for x in tmp_path.iterdir()] == ["keep.txt"]


def test_a_writer_that_writes_nothing_fails_and_changes_nothing(tmp_path):
    p = tmp_path / "never.txt"
    with pytest.raises(FileNotFoundError), atomic_path(p):
        pass
    assert not p.exists() and list(tmp_path.iterdir()) == []


def test_new_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        p = atomic_write(tmp_path / "perm.txt", "x")
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o644
