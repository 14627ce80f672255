"""`audiomind trace html` on untrusted traces: only audio inside the trace's own run folder whose sha256
matches the trace is copied or embedded (and an original clip elsewhere that matches and decodes as audio:
tests/hostile/test_viewer_exporter_hostile.py); every other path an artifact names (a private file elsewhere,
/etc/passwd, a FIFO, a symlink out, a loop, a directory, a changed or missing file, a non-audio file) is
shown as "unavailable (reason)", without a traceback, and nothing outside is read (a Python audit hook
watches every open). Traces are written by hand from the real models (no model needs to load)."""

from __future__ import annotations

import base64
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind.audio import sha256_file
from audiomind.cli import app
from audiomind.state import Artifact, EvidenceState, Question, RunInfo
from audiomind.trace import write_trace

_SEEN: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _SEEN is not None and event in ("open", "shutil.copyfile", "subprocess.Popen"):
        _SEEN.append(f"{event} {args!r}"[:2000])


sys.addaudithook(_audit)  # permanent (audit hooks cannot be removed); records only inside watch_opens()


@contextmanager
def watch_opens():
    global _SEEN
    seen: list[str] = []
    _SEEN = seen
    try:
        yield seen
    finally:
        _SEEN = None


def tone(path: Path, hz: float = 440.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(8000) / 16000
    sf.write(path, (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)
    return path


def art(id_: str, path: Path | str, sha: str | None = None, derived: bool = True) -> Artifact:
    p = Path(path)
    if sha is None:
        sha = sha256_file(p) if p.is_file() and os.access(p, os.R_OK) else "0" * 64
    return Artifact(id=id_, path=str(path), sha256=sha, duration_s=0.5, sample_rate=16000, channels=1,
                    format="WAV", derived_from="a0" if derived else None, operation="crop" if derived else "input")


PRIVATE = "PRIVATE-TEXT do not publish\n"


@pytest.fixture
def hostile(tmp_path):
    """tmp/run/trace.json (its run folder) naming good audio inside and every kind of bad path."""
    run = tmp_path / "run"
    run_id = "run_hostile01"
    arts_dir = run / f"{run_id}.artifacts"
    clip = tone(run / "clip.wav", 440)
    crop = tone(arts_dir / "crop.wav", 660)
    private = tmp_path / "x" / "private.wav"
    private.parent.mkdir()
    private.write_text(PRIVATE)  # a text file named .wav, outside the run folder
    changed = tone(run / "changed.wav", 880)
    changed_sha = sha256_file(changed)
    tone(changed, 990)  # rewritten after the "run"
    os.mkfifo(run / "pipe.wav")
    (run / "loop1.wav").symlink_to(run / "loop2.wav")
    (run / "loop2.wav").symlink_to(run / "loop1.wav")
    (run / "escape.wav").symlink_to(private)
    notes = run / "notes.txt"
    notes.write_text("not audio at all\n")
    artifacts = [
        art("a0", clip, derived=False),
        art("a1", crop),
        art("a2", private, sha=sha256_file(private)),  # the attacker even knows its hash
        art("a3", "/etc/passwd"),
        art("a4", changed, sha=changed_sha),
        art("a5", run / "pipe.wav"),
        art("a6", run / "loop1.wav"),
        art("a7", run / "escape.wav", sha=sha256_file(private)),
        art("a8", run / "missing.wav"),
        art("a9", notes, sha=sha256_file(notes)),
        art("a10", run),
        art("a11", "../x/private.wav", sha=sha256_file(private)),  # relative to the trace folder
    ]
    st = EvidenceState(run=RunInfo(run_id=run_id, artifact_dir=str(arts_dir)),
                       question=Question(text="What is heard?", choices=["a tone", "speech"], audio_path=str(clip)),
                       artifacts=artifacts)
    trace = write_trace(st, run / "trace.json")
    return {"trace": trace, "run": run, "private": private, "run_id": run_id, "tmp": tmp_path}


EXPECTED = {
    "a2": "outside the trace&#x27;s run folder",
    "a3": "outside the trace&#x27;s run folder",
    "a4": "sha256 differs from the trace&#x27;s record",
    "a5": "a FIFO (named pipe), not a regular file",
    "a6": "symlink loop",
    "a7": "outside the trace&#x27;s run folder",
    "a8": "audio file missing",
    "a9": "not decodable audio",
    "a10": "a directory, not a regular file",
    "a11": "outside the trace&#x27;s run folder",
}


def artifact_block(page: str, art_id: str) -> str:
    start = page.index(f'id="art-{art_id}"')
    nxt = page.find('<div class="artifact"', start)
    return page[start: nxt if nxt > 0 else len(page)]


@pytest.mark.parametrize("embed", [False, True])
def test_only_verified_audio_inside_the_run_folder_is_published(hostile, embed):
    out = hostile["tmp"] / "site"
    args = ["trace", "html", str(hostile["trace"]), "-o", str(out)] + (["--embed", "--no-spectrograms"] if embed else [])
    passwd = Path("/etc/passwd").read_bytes() if Path("/etc/passwd").is_file() else b"root:x:0:0"
    with watch_opens() as seen:
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "Traceback" not in res.output and res.exception is None

    page = (out / f"{hostile['run_id']}.html").read_text()
    files = sorted(p.name for p in (out / f"{hostile['run_id']}_files").iterdir())
    expected_files = ["a0.wav", "a1.wav", "trace.json"] + ([] if embed else ["a0.png", "a1.png"])
    assert files == sorted(expected_files)
    assert page.count("<audio ") == 2
    for art_id in ("a0", "a1"):
        assert 'data-artifact="' + art_id + '"' in artifact_block(page, art_id)
    if embed:
        assert page.count('src="data:audio/wav;base64,') == 2
    for art_id, reason in EXPECTED.items():
        block = artifact_block(page, art_id)
        assert "<audio" not in block and f"unavailable ({reason}" in block, (art_id, block[-400:])

    # nothing private reached the page or its folder, in any form
    blobs = page + "".join((p.read_text(errors="replace") if p.suffix != ".wav" else "")
                           for p in (out / f"{hostile['run_id']}_files").iterdir())
    for secret in (PRIVATE.encode(), passwd[:40]):
        assert secret.decode(errors="replace").strip() not in blobs
        assert base64.b64encode(secret)[:24].decode() not in blobs
    # ... and nothing outside the run folder was even opened (the audit rules are confined as well)
    outside = [s for s in seen if "private.wav" in s or "/etc/passwd" in s or "pipe.wav" in s]
    assert outside == [], outside
    assert any("clip.wav" in s for s in seen)  # the watch works: the verified clip was read
    assert hostile["private"].read_text() == PRIVATE
    # the audit on the page says why, too
    assert "a3 (derived) is not read (outside the trace" in page.replace("&#x27;", "'")


def test_moved_run_folder_and_batch_run_layout(hostile, tmp_path):
    """A run folder copied elsewhere still shows its audio (found beside the trace, hash checked); a batch
    run's RUN/traces/<id>.json reads RUN/artifacts/; --allow-dir trusts one more folder explicitly."""
    moved = tmp_path / "moved"
    shutil.copytree(hostile["run"], moved, symlinks=True, ignore=shutil.ignore_patterns("pipe.wav"))
    out = tmp_path / "site"
    res = CliRunner().invoke(app, ["trace", "html", str(moved / "trace.json"), "-o", str(out), "--no-spectrograms",
                                   "--no-audit"])
    assert res.exit_code == 0, res.output
    page = (out / f"{hostile['run_id']}.html").read_text()
    assert 'data-artifact="a1"' in page and "found beside the trace" in artifact_block(page, "a1")
    # a0 (the question's clip) is still at its recorded place, outside this run folder: shown, because its
    # sha256 is the trace's and it decodes as audio (issue 25.11: an ordinary run's viewer plays its audio)
    assert 'data-artifact="a0"' in artifact_block(page, "a0")

    allowed = CliRunner().invoke(app, ["trace", "html", str(moved / "trace.json"), "-o", str(tmp_path / "site2"),
                                       "--no-spectrograms", "--no-audit", "--allow-dir", str(hostile["run"])])
    assert allowed.exit_code == 0, allowed.output
    assert 'data-artifact="a0"' in (tmp_path / "site2" / f"{hostile['run_id']}.html").read_text()

    # batch layout: RUN/results.jsonl, RUN/traces/item.json, RUN/artifacts/<run id>.artifacts/crop.wav
    run = tmp_path / "batch"
    crop = tone(run / "artifacts" / "r1.artifacts" / "crop.wav")
    clip = tone(run / "artifacts" / "clip.wav")
    (run / "results.jsonl").write_text("")
    st = EvidenceState(run=RunInfo(run_id="r1", artifact_dir=str(crop.parent)),
                       question=Question(text="q?", audio_path=str(clip)),
                       artifacts=[art("a0", clip, derived=False), art("a1", crop)])
    trace = write_trace(st, run / "traces" / "item.json")
    res = CliRunner().invoke(app, ["trace", "html", str(trace), "-o", str(tmp_path / "site3"), "--no-spectrograms"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "site3" / "r1.html").read_text()
    assert page.count("<audio ") == 2
