"""Shared pieces of the hostile-input suite: a cooperative loopback model server (no embedded model loads),
a clean tone, size-limited or read-only tmpfs mounts (root only; skipped elsewhere), and the checks every
refusal must pass: its exit code, one line on stderr, no traceback."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from .model_server import ModelServer


@pytest.fixture(scope="session")
def model_server():
    server = ModelServer()
    yield server
    server.close()


def write_tone(path: Path, seconds: float = 1.0, sr: int = 16000) -> Path:
    t = np.arange(round(seconds * sr)) / sr
    sf.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), sr)
    return path


@pytest.fixture
def tone(tmp_path) -> Path:
    return write_tone(tmp_path / "tone.wav")


@pytest.fixture
def tmpfs(tmp_path):
    """`tmpfs(size_kb, ro=False)`: a fresh tmpfs mounted in tmp_path (unmounted afterwards); the test is
    skipped where mounting is not allowed (not root, no CAP_SYS_ADMIN)."""
    mounted: list[Path] = []

    def mount(size_kb: int, ro: bool = False) -> Path:
        where = tmp_path / f"fs-{uuid.uuid4().hex[:6]}"
        where.mkdir()
        opts = f"size={size_kb}k" + (",ro" if ro else "")
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode(errors='replace').strip()[:120]}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def fill(folder: Path, leave_kb: int) -> Path:
    """A filler file that leaves about `leave_kb` KB free in `folder`'s file system."""
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    filler = folder / "filler.bin"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, free - leave_kb * 1024))
    return filler


def cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 240, preexec=None
        ) -> subprocess.CompletedProcess:
    """The real command line, as a subprocess."""
    return subprocess.run([sys.executable, "-m", "audiomind", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, preexec_fn=preexec, check=False)


def start_cli(*args: str, cwd: Path, env: dict | None = None, preexec=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "audiomind", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                            preexec_fn=preexec)


def one_line_error(code: int, expected: int, out: str, err: str, needles: Sequence[str] = ()) -> str:
    """The refusal: exit code `expected`, no traceback anywhere, exactly one non-empty stderr line starting
    'error:' and holding every needle (case-insensitive); returns that line."""
    assert code == expected, f"exit {code}, expected {expected}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in out + err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one stderr line, got {len(lines)}:\n{err}"
    assert lines[0].startswith("error:"), lines[0]
    for needle in needles:
        assert needle.lower() in lines[0].lower(), f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def temp_files(folder: Path) -> list[Path]:
    """Temp files of atomic writes (`.NAME.PID.TID.HEX.tmp`) left anywhere under `folder`."""
    return list(folder.rglob("*.tmp")) if folder.exists() else []


@contextlib.contextmanager
def running_app(app, start_timeout: float = 120) -> Iterator[str]:
    """Serve an ASGI `app` with uvicorn on a loopback port the OS picked (in a thread of this process); yield
    its base URL; stop it afterwards (each wait bounded)."""
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()
