"""Bad input gets one clear line on stderr, a non-zero exit code and no traceback (the real CLI, as a
subprocess)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from audiomind import synth

CHOICES = ["--choice", "yes", "--choice", "no"]


def run_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-m", "audiomind", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, **(env or {})},
        check=False,
    )


def assert_clean_error(proc: subprocess.CompletedProcess, code: int, needle: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert needle in proc.stderr.lower(), proc.stderr


def test_missing_file(tmp_path):
    proc = run_cli("ask", str(tmp_path / "nope.wav"), "What is this?", *CHOICES, cwd=tmp_path)
    assert_clean_error(proc, 2, "not found")


def test_non_audio_file(tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("this is a text file, not audio\n" * 20)
    proc = run_cli("ask", str(bad), "What is this?", *CHOICES, cwd=tmp_path)
    assert_clean_error(proc, 2, "audio")


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    proc = run_cli("ask", str(empty), "What is this?", *CHOICES, cwd=tmp_path)
    assert_clean_error(proc, 2, "empty")


def test_zero_length_wav(tmp_path):
    zero = tmp_path / "zero.wav"
    sf.write(zero, np.zeros(0, dtype=np.float32), 16000)
    assert zero.stat().st_size > 0  # a valid header with no frames
    proc = run_cli("ask", str(zero), "What is this?", *CHOICES, cwd=tmp_path)
    assert_clean_error(proc, 2, "zero length")


def test_single_choice(tmp_path):
    clip = synth.beeps(1, tmp_path / "b.wav")
    proc = run_cli("ask", str(clip), "How many beeps?", "--choice", "1", cwd=tmp_path)
    assert_clean_error(proc, 2, "at least 2")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_writes_failed_trace_without_key(tmp_path):
    clip = synth.beeps(2, tmp_path / "b.wav")
    port = _closed_port()
    secret = "sk-test-THIS-MUST-NOT-LEAK-0123456789"
    proc = run_cli(
        "ask", str(clip), "How many beeps?", *CHOICES, "--frontend", f"openai:Qwen/Qwen2.5-Omni-7B@http://127.0.0.1:{port}/v1",
        "--retries", "1", "--timeout", "5", "--trace-dir", str(tmp_path / "traces"), cwd=tmp_path,
        env={"OPENAI_API_KEY": secret},
    )
    assert_clean_error(proc, 3, f"127.0.0.1:{port}")
    traces = list((tmp_path / "traces").glob("*.json"))
    assert len(traces) == 1, "a failed run still leaves its trace"
    text = traces[0].read_text()
    assert secret not in text
    assert '"status": "failed"' in text
    failed_calls = json.loads(text)["model_calls"]
    assert failed_calls and failed_calls[-1]["role"] == "frontend" and len(failed_calls[-1]["errors"]) == 2
