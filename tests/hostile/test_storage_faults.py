"""File-system faults: a read-only, full, unwritable or unnameable `ask --trace-dir` or `bench run --out` ends
with one clear line and exit code 4 (never a traceback); `ask` still prints the answer it worked for; no
temp file is left behind; a benchmark that ran out of space resumes once there is room again.

Real commands (subprocesses) against the cooperative loopback model server, so no embedded model loads.
Read-only and full disks are real tmpfs mounts (root only, skipped elsewhere); a file-size limit
(RLIMIT_FSIZE) and a path under a regular file or with a too-long name need no privilege."""

from __future__ import annotations

import errno
import json
import resource
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind.bench.runner import load_results
from audiomind.cli import app

from .conftest import cli, fill, one_line_error, start_cli, temp_files, write_tone

EXIT_STORAGE = 4


def _ask(server, clip: Path, trace_dir: Path, cwd: Path, **kw) -> tuple[str, ...]:
    return ("ask", str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--planner", server.spec,
            "--frontend", server.spec, "--trace-dir", str(trace_dir), "--no-cache")


def _answer_then_one_line(proc, *needles: str) -> str:
    out, err = proc.communicate(timeout=240) if hasattr(proc, "communicate") else (proc.stdout, proc.stderr)
    line = one_line_error(proc.returncode, EXIT_STORAGE, out, err, needles)
    assert "Answer: yes" in out, out  # the finished answer is not lost
    assert "Trace: (not written)" in out
    return line


def _file_size_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


# ---------------------------------------------------------------- ask


def test_ask_trace_dir_faults_without_privileges(model_server, tmp_path):
    """Under a regular file (ENOTDIR), a name longer than the file system allows (ENAMETOOLONG) and a
    file-size limit smaller than the trace (EFBIG): all started at once (each ~10 s of start-up)."""
    clip = write_tone(tmp_path / "tone.wav")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    limited = tmp_path / "limited"
    runs = {
        "ENOTDIR": start_cli(*_ask(model_server, clip, blocker / "traces", tmp_path), cwd=tmp_path),
        "ENAMETOOLONG": start_cli(*_ask(model_server, clip, tmp_path / ("x" * 300), tmp_path), cwd=tmp_path),
        "EFBIG": start_cli(*_ask(model_server, clip, limited, tmp_path), cwd=tmp_path,
                           preexec=_file_size_limit(4096)),
    }
    why = {"ENOTDIR": "is a file, not a folder", "ENAMETOOLONG": "too long", "EFBIG": "file-size limit"}
    for name, proc in runs.items():
        line = _answer_then_one_line(proc, name, why[name])
        assert len(line) < 400, line  # a 300-character name is cut in the message
    assert temp_files(limited) == [] and not (tmp_path / ("x" * 200)).exists()


def test_ask_read_only_and_full_trace_dirs(model_server, tmp_path, tmpfs):
    clip = write_tone(tmp_path / "tone.wav")
    ro = tmpfs(64, ro=True)
    full = tmpfs(64)
    fill(full, leave_kb=4)
    runs = {
        "EROFS": start_cli(*_ask(model_server, clip, ro / "traces", tmp_path), cwd=tmp_path),
        "ENOSPC": start_cli(*_ask(model_server, clip, full / "traces", tmp_path), cwd=tmp_path),
    }
    _answer_then_one_line(runs["EROFS"], "read-only", "EROFS", str(ro / "traces"))
    _answer_then_one_line(runs["ENOSPC"], "no space left", "ENOSPC")
    assert temp_files(full) == [], "a failed write left its temp file"
    assert not list(full.rglob("*.json"))


def test_ask_permission_denied_in_process(model_server, tmp_path, monkeypatch):
    """Root ignores permission bits, so the refusal is injected where the trace is written."""
    from audiomind import trace

    def denied(path, data, **kw):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(trace, "atomic_write", denied)
    clip = write_tone(tmp_path / "tone.wav")
    res = CliRunner().invoke(app, list(_ask(model_server, clip, tmp_path / "t", tmp_path)))
    assert res.exit_code == EXIT_STORAGE, res.output
    assert "Traceback" not in res.output and "Answer: yes" in res.output
    assert "permission denied (EACCES)" in res.output and "the answer above is not on record" in res.output


# ---------------------------------------------------------------- bench run


def _items(tmp_path: Path, n: int) -> Path:
    clips = tmp_path / "clips"
    clips.mkdir()
    rows = []
    for i in range(n):
        write_tone(clips / f"c{i}.wav", seconds=0.5 + 0.1 * i)
        rows.append({"id": f"item{i}", "question": "Is there a tone?", "choices": ["yes", "no"], "answer": "yes",
                     "audio": f"clips/c{i}.wav"})
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return items


def _bench(server, items: Path, out: Path) -> tuple[str, ...]:
    return ("bench", "run", "--items", str(items), "--out", str(out), "--planner", server.spec, "--frontend",
            server.spec, "--no-progress", "--no-cache")


def _check_committed(out: Path) -> dict:
    """Every results line parses and names a trace that is on disk; no temp file anywhere."""
    lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
    for line in lines:
        row = json.loads(line)
        assert (out / row["trace_path"]).is_file(), row
    assert temp_files(out) == []
    return {"lines": len(lines), "rows": load_results(out)}


def test_bench_out_faults_without_privileges(model_server, tmp_path):
    items = _items(tmp_path, 1)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    proc = cli(*_bench(model_server, items, blocker / "run"), cwd=tmp_path)
    one_line_error(proc.returncode, EXIT_STORAGE, proc.stdout, proc.stderr, ["ENOTDIR", "rerun the same command"])
    proc = cli(*_bench(model_server, items, tmp_path / ("r" * 300)), cwd=tmp_path)
    one_line_error(proc.returncode, EXIT_STORAGE, proc.stdout, proc.stderr, ["ENAMETOOLONG"])


def test_bench_read_only_out(model_server, tmp_path, tmpfs):
    items = _items(tmp_path, 1)
    ro = tmpfs(64, ro=True)
    proc = cli(*_bench(model_server, items, ro / "run"), cwd=tmp_path)
    one_line_error(proc.returncode, EXIT_STORAGE, proc.stdout, proc.stderr, ["read-only", "EROFS"])


def test_bench_disk_full_then_resumes(model_server, tmp_path, tmpfs):
    """The disk fills after a few items: one line, what was committed is intact; room is made and the same
    command finishes the rest, nothing committed twice."""
    items = _items(tmp_path, 6)
    # a trace here is about 85 KB (each model call's input is recorded): room for six and then some, of which
    # the filler leaves about two
    disk = tmpfs(1000)
    out = disk / "run"
    filler = fill(disk, leave_kb=220)
    first = cli(*_bench(model_server, items, out), cwd=tmp_path)
    one_line_error(first.returncode, EXIT_STORAGE, first.stdout, first.stderr,
                   ["no space left", "ENOSPC", "rerun the same command to resume"])
    before = _check_committed(out)
    assert 1 <= before["lines"] < 6, before  # some items were committed before the disk filled
    assert "answer above" not in first.stderr
    filler.unlink()
    second = cli(*_bench(model_server, items, out), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    after = _check_committed(out)
    assert after["lines"] == 6 and sorted(after["rows"]) == [f"item{i}" for i in range(6)]
    assert all(r["status"] == "answered" for r in after["rows"].values())


def test_bench_file_size_limit_then_resumes(model_server, tmp_path):
    """Without privileges: a file-size limit below one trace stops the run at its first item; without it the
    same command runs everything."""
    items = _items(tmp_path, 2)
    out = tmp_path / "run"
    first = cli(*_bench(model_server, items, out), cwd=tmp_path, preexec=_file_size_limit(6000))
    one_line_error(first.returncode, EXIT_STORAGE, first.stdout, first.stderr, ["EFBIG"])
    assert _check_committed(out)["lines"] == 0
    second = cli(*_bench(model_server, items, out), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert _check_committed(out)["lines"] == 2


@pytest.mark.parametrize("leave_kb", [0, 6])
def test_atomic_write_on_a_full_disk_leaves_no_temp_file(tmpfs, leave_kb):
    from audiomind.fsutil import StorageError, atomic_write

    disk = tmpfs(64)
    fill(disk, leave_kb=leave_kb)
    with pytest.raises(StorageError, match=r"no space left on the device \(ENOSPC\)") as info:
        atomic_write(disk / "sub" / "x.json", "y" * 20000)
    assert info.value.errno == errno.ENOSPC
    assert temp_files(disk) == [] and not (disk / "sub" / "x.json").exists()
