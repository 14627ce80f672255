"""`python -m llama_cpp.server` on loopback for the tests that need real model output (a GGUF served through
llama-cpp-python's OpenAI-compatible API): started on a free port, waited for until /v1/models answers,
stopped by its handle afterwards, and given SIGTERM by the kernel if the test process dies first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """The server gets SIGTERM when this test process dies (a timeout or a kill skips fixture teardown)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@contextmanager
def llama_cpp_server(gguf: Path, alias: str, n_ctx: int, start_timeout_s: float = 120.0) -> Iterator[str]:
    """Serve `gguf` as model `alias`; yields the server's base URL (http://127.0.0.1:PORT, no /v1). Its log
    is $TMPDIR/<alias>_server_<port>.log, named in any start-up error."""
    port = free_port()
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"{alias}_server_{port}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", str(n_ctx), "--model_alias", alias],
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if proc.poll() is not None:
                log.flush()
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(url + "/v1/models", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer /v1/models within {start_timeout_s:g} s; "
                                   f"see {log.name}")
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()  # our own child, by its handle
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()
