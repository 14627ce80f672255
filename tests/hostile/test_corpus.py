"""A standing hostile-input corpus, made by script (the `corpus` fixture), run through `ask`, `bench run`,
`trace validate|audit|html|show` and `judge`: every class gets its exit code, a one-line message and no
traceback; nothing outside the allowed roots is opened (a Python audit hook watches every open); what was
accepted is not lost (the answer is printed, the trace written, the input check on its record).

In process (typer's CliRunner), so the module is quick: inputs are refused before any tool runs, and the
accepted ones are answered by the cooperative loopback model server (no embedded model loads)."""

from __future__ import annotations

import json
import os
import struct
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind import audio
from audiomind.cli import app
from audiomind.state import Artifact, EvidenceState, Question, RunInfo
from audiomind.trace import write_trace

from .conftest import write_tone

# ---------------------------------------------------------------- watching what is opened

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # permanent (hooks cannot be removed); records only inside watch()


@contextmanager
def watch():
    global _OPENED
    opened: list[str] = []
    _OPENED = opened
    try:
        yield opened
    finally:
        _OPENED = None


def never_opened(opened: list[str], *forbidden: str) -> None:
    real = {os.path.realpath(f) for f in forbidden}
    hits = [p for p in opened if p in forbidden or os.path.realpath(p) in real]
    assert not hits, f"opened outside the roots: {hits}"


# ---------------------------------------------------------------- the corpus


def _wav_header(channels: int, rate: int, data_bytes: int, riff_bytes: int | None = None) -> bytes:
    block = 2 * channels
    return (b"RIFF" + struct.pack("<I", riff_bytes if riff_bytes is not None else 36 + data_bytes) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, channels, rate, (rate * block) & 0xFFFFFFFF, block & 0xFFFF, 16)
            + b"data" + struct.pack("<I", data_bytes))


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    c: dict[str, Path] = {}
    c["empty"] = d / "empty.wav"
    c["empty"].write_bytes(b"")
    c["zero_length"] = d / "zero.wav"
    sf.write(c["zero_length"], np.zeros(0, np.float32), 16000)
    good = write_tone(d / "tone.wav")
    c["truncated_header"] = d / "truncated.wav"
    c["truncated_header"].write_bytes(good.read_bytes()[:30])
    c["text_as_wav"] = d / "notes.wav"
    c["text_as_wav"].write_text("this is a text file, not audio\n" * 20)
    t = np.arange(16000) / 16000
    y = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    y[100:200], y[300], y[301] = np.nan, np.inf, -np.inf
    c["nan"] = d / "nan.wav"
    sf.write(c["nan"], y, 16000, subtype="FLOAT")
    c["rate_7hz_3ch"] = d / "rate7.wav"
    sf.write(c["rate_7hz_3ch"], np.full((70, 3), 0.1, np.float32), 7)  # soundfile writes it: 10 s at 7 Hz
    c["channels_60000"] = d / "channels.wav"
    c["channels_60000"].write_bytes(_wav_header(60000, 16000, 1200) + bytes(1200))
    c["huge_header"] = d / "huge.wav"  # claims 2 GB of samples, holds 1 KB
    c["huge_header"].write_bytes(_wav_header(1, 16000, 0x7FFFFFF0, 0x7FFFFFFF)
                                    + (np.sin(np.arange(500) / 3) * 9000).astype("<i2").tobytes())
    c["dc_only"] = d / "dc.wav"
    sf.write(c["dc_only"], np.full(16000, 0.5, np.float32), 16000, subtype="FLOAT")
    c["silent"] = d / "silent.wav"
    sf.write(c["silent"], np.zeros(16000, np.float32), 16000)
    c["fifo"] = d / "pipe.wav"
    os.mkfifo(c["fifo"])
    c["symlink_loop"] = d / "loop.wav"
    os.symlink(c["symlink_loop"].name, c["symlink_loop"])
    c["device"] = d / "device.wav"
    os.symlink("/dev/zero", c["device"])
    c["directory"] = d / "folder.wav"
    c["directory"].mkdir()
    c["odd_name"] = write_tone(d / "a tone é 日本\nsecond line.wav")
    c["long"] = write_tone(d / "long.wav", seconds=30.0, sr=8000)
    c["good"] = good
    # traces
    passwd = EvidenceState(
        run=RunInfo(run_id="run_passwd", artifact_dir="/etc"),
        question=Question(text="What is in it?", audio_path="/etc/passwd"),
        artifacts=[Artifact(id="a0", path="/etc/passwd", sha256="0" * 64, duration_s=1.0, sample_rate=16000,
                            channels=1, operation="input"),
                   Artifact(id="a1", path="../../../../../../etc/shadow", sha256="0" * 64, duration_s=1.0,
                            sample_rate=16000, channels=1, derived_from="a0", operation="crop")])
    traces = d / "traces"
    traces.mkdir()
    c["trace_passwd"] = write_trace(passwd, traces / "passwd.json")
    c["trace_not_json"] = traces / "broken.json"
    c["trace_not_json"].write_text("{not json")
    c["trace_deep"] = traces / "deep.json"
    c["trace_deep"].write_text("[" * 100000 + "]" * 100000)
    c["trace_fifo"] = traces / "pipe.json"
    os.mkfifo(c["trace_fifo"])
    c["trace_loop"] = traces / "loop.json"
    os.symlink(c["trace_loop"].name, c["trace_loop"])
    c["traces"] = traces
    return c


def run(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def refused(res, code: int, *needles: str) -> str:
    """Exit `code`, no traceback (nor an exception other than the exit), one stderr line holding the needles."""
    assert res.exit_code == code, f"exit {res.exit_code}: {res.output}"
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]


CHOICES = ("--choice", "yes", "--choice", "no")

REFUSED = {  # corpus class -> what the one line says
    "empty": "empty (0 bytes)",
    "zero_length": "zero length",
    "truncated_header": "not a readable audio file",
    "text_as_wav": "not a readable audio file",
    "rate_7hz_3ch": "unusable sample rate 7 Hz",
    "channels_60000": "too many channels",
    "fifo": "a FIFO (named pipe)",
    "symlink_loop": "symlink loop",
    "device": "a character device",
    "directory": "a directory",
}


# ---------------------------------------------------------------- ask


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_ask_refuses_before_anything_runs(corpus, tmp_path, kind):
    with watch() as opened:
        res = run("ask", corpus[kind], "What is it?", *CHOICES, "--trace-dir", tmp_path / "t")
    refused(res, 2, REFUSED[kind])
    assert not (tmp_path / "t").exists()  # refused before a run (or its trace) existed
    never_opened(opened, "/dev/zero", str(corpus["fifo"]))


@pytest.mark.parametrize("kind,note", [
    ("nan", "102 non-finite sample(s) (NaN/Inf) were set to 0"),
    ("dc_only", "the signal is a constant offset (DC +0.5000)"),
    ("silent", "the signal is digital silence"), ("huge_header", None), ("odd_name", None),
])
def test_ask_answers_what_it_can_and_says_what_it_found(corpus, tmp_path, model_server, kind, note):
    res = run("ask", corpus[kind], "Is there a tone?", *CHOICES, "--planner", model_server.spec, "--frontend",
              model_server.spec, "--trace-dir", tmp_path / "t", "--no-cache")
    assert res.exit_code == 0, res.output
    assert "Answer: yes" in res.stdout and "Traceback" not in res.output
    trace = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    check = trace["artifacts"][0]["parameters"].get("signal_check")
    if note is None:
        assert check is None
        return
    assert f"Input: a0: {note}" in " ".join(res.stdout.split())
    assert check and check["notes"]


def test_non_finite_samples_are_repaired_for_every_listener(corpus):
    y = audio.load(corpus["nan"], sr=16000)
    assert np.isfinite(y).all() and np.abs(y).max() > 0.25  # a 440 Hz tone, not silence, not NaN
    check = audio.signal_check(corpus["nan"])
    assert check.non_finite_samples == 102 and check.peak == pytest.approx(0.3, abs=1e-3)
    assert "set to 0" in check.notes[0]


def test_ask_max_duration(corpus, tmp_path):
    res = run("ask", corpus["long"], "What is it?", *CHOICES, "--max-duration", "10", "--trace-dir", tmp_path / "t")
    refused(res, 2, "lasts 30.0 s, more than the --max-duration of 10 s")


def test_ask_names_a_path_with_a_newline_on_one_line(corpus, tmp_path):
    odd = corpus["odd_name"].with_name("missing\nfile.wav")
    line = refused(run("ask", odd, "What is it?", *CHOICES), 2, "not found", "missing\\nfile.wav")
    assert "\n" not in line


# ---------------------------------------------------------------- bench run


def test_bench_run_over_the_corpus_and_bad_rows(corpus, tmp_path, model_server):
    root = corpus["good"].parent
    rows = [{"id": k, "question": "Is there a tone?", "choices": ["yes", "no"], "answer": "yes",
             "audio": corpus[k].name} for k in [*REFUSED, "nan", "good", "long"]]
    bad = ['{"id": "broken", "question": ', json.dumps({"id": "no-question", "audio": "tone.wav"}),
           json.dumps({"id": "passwd", "question": "q", "choices": ["a", "b"], "audio": "/etc/passwd"}),
           json.dumps({"id": "escape", "question": "q", "choices": ["a", "b"], "audio": "../../../../../etc/shadow"}),
           json.dumps({"id": "choices-text", "question": "q", "choices": "a, b", "audio": "tone.wav"}),
           json.dumps(["not", "an", "object"])]
    meta = tmp_path / "meta.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n".join(bad) + "\n")
    out = tmp_path / "run"
    with watch() as opened:
        res = run("bench", "run", "--items", meta, "--audio-dir", root, "--out", out, "--planner", model_server.spec,
                  "--frontend", model_server.spec, "--no-progress", "--no-cache", "--max-duration", "20")
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    never_opened(opened, "/etc/passwd", "/etc/shadow", "/dev/zero", str(corpus["fifo"]))
    results = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert row["id"] not in results, "committed twice"
        results[row["id"]] = row
    assert results["good"]["status"] == "answered" and results["nan"]["status"] == "answered"
    assert "lasts 30.0 s, more than the --max-duration of 20 s" in results["long"]["error"]
    for kind in REFUSED:
        assert results[kind]["status"] == "error", (kind, results[kind])
        assert "Traceback" not in results[kind]["error"]
    assert results["passwd"]["input_error"] and "outside" in results["passwd"]["error"]
    assert results["escape"]["input_error"] and "outside" in results["escape"]["error"]
    assert sum(1 for r in results.values() if r.get("input_error")) >= 6  # the bad rows, FIFO and loop among them
    assert len(results) == len(rows) + len(bad)  # every row has its line, a line that is not JSON too


# ---------------------------------------------------------------- trace validate | audit | html | show


@pytest.mark.parametrize("command", ["validate", "audit", "html", "show"])
def test_trace_commands_on_paths_that_are_not_traces(corpus, tmp_path, command):
    extra = ["-o", tmp_path / "html"] if command == "html" else []
    refused(run("trace", command, corpus["trace_fifo"], *extra), 2, "FIFO")
    refused(run("trace", command, corpus["trace_loop"], *extra), 2, "symlink loop")
    refused(run("trace", command, tmp_path / "nothing.json", *extra), 2, "no")


def test_trace_validate_and_audit_bad_json(corpus):
    for f, needle in [(corpus["trace_not_json"], "not json"), (corpus["trace_deep"], "nested too deeply")]:
        for command in ("validate", "audit"):
            res = run("trace", command, f)
            assert (res.exit_code == 1 and res.exception is None) or isinstance(res.exception, SystemExit)
            assert needle in res.output.lower() and "Traceback" not in res.output


def test_trace_commands_on_a_folder_with_fifos_and_a_trace_naming_etc_passwd(corpus, tmp_path):
    """The folder holds a FIFO and a loop named *.json (skipped, never opened: reading a FIFO blocks) and a
    trace whose artifacts are /etc/passwd and ../../etc/shadow (validated, rendered, never opened)."""
    with watch() as opened:
        res = run("trace", "validate", corpus["traces"])
        assert res.exit_code == 1 and "Traceback" not in res.output  # broken.json and deep.json are invalid
        assert "valid " in res.output and "passwd.json" in res.output
        res = run("trace", "html", corpus["traces"], "-o", tmp_path / "html")
        assert res.exit_code == 0 and "Traceback" not in res.output, res.output
        res = run("trace", "show", corpus["trace_passwd"])
        assert res.exit_code == 0 and "Traceback" not in res.output
    never_opened(opened, "/etc/passwd", "/etc/shadow", str(corpus["trace_fifo"]))
    page = (tmp_path / "html" / "run_passwd.html").read_text()
    assert "root:" not in page and "unavailable" in page
    with watch() as opened:  # audit checks the recorded hashes of what a trace names (regular files only)
        res = run("trace", "audit", corpus["traces"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    never_opened(opened, str(corpus["trace_fifo"]))


# ---------------------------------------------------------------- judge


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_judges_refuse_before_any_model_loads(corpus, tmp_path, kind):
    good = corpus["good"]
    refused(run("judge", "edit", corpus[kind], good, "-i", "make it louder", "--trace-dir", tmp_path), 2, REFUSED[kind])
    refused(run("judge", "edit", good, corpus[kind], "-i", "make it louder", "--trace-dir", tmp_path), 2, REFUSED[kind])
    refused(run("judge", "rubric", corpus[kind], "a loud tone", "--trace-dir", tmp_path), 2, REFUSED[kind])
    refused(run("judge", "aura", "-q", "What is it?", "-r", "a tone", "-a", "a tone", "--audio", corpus[kind],
                "--trace-dir", tmp_path), 2, REFUSED[kind])
    assert not list(tmp_path.glob("*.json"))


# ---------------------------------------------------------------- tool failures lower the confidence


def test_a_failed_tool_shows_in_the_summary_and_caps_the_confidence(corpus, tmp_path, model_server):
    planner = model_server.spec.replace("openai:m@", "openai:m-toolfail@")
    res = run("ask", corpus["good"], "Is there a tone?", *CHOICES, "--planner", planner, "--frontend",
              model_server.spec, "--trace-dir", tmp_path / "t", "--no-cache")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "Answer: yes" in text
    assert "Tool problems: crop failed (ValueError: start_s 999 s is at or past the end" in text
    assert "Confidence:" in text and "tools failed: crop error" in text
    trace = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    assert "tools failed: crop error" in trace["final_answer"]["confidence_reason"]


def test_tool_failures_cap_a_model_answer_confidence():
    from audiomind.graph.nodes import TOOL_FAILURE_CONFIDENCE, with_tool_failures
    from audiomind.state import FinalAnswer, ToolCall, ToolCallStatus

    st = EvidenceState(question=Question(text="q", audio_path="/x.wav"), tool_calls=[
        ToolCall(step=0, tool="tagging", status=ToolCallStatus.timeout, error="tagging exceeded its 60 s timeout"),
        ToolCall(step=0, tool="vad", status=ToolCallStatus.ok)])
    sure = FinalAnswer(text="yes", confidence=0.95, confidence_reason="the model is sure")
    capped = with_tool_failures(sure, st)
    assert capped.confidence == TOOL_FAILURE_CONFIDENCE
    assert capped.confidence_reason == "the model is sure; tools failed: tagging timeout"
    low = FinalAnswer(text="yes", confidence=0.3)
    assert with_tool_failures(low, st).confidence == 0.3
    assert with_tool_failures(sure, st.model_copy(update={"tool_calls": []})) == sure
