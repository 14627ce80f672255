"""`audiomind mcp` on stdio leaves as soon as its client closes stdin (issue 35, point 3), even while a call is
still running: a tool runs on the executor's thread pool, which Python joins at exit, so before the fix the
server outlived its client until the call finished (a model-loading `ask` 15.8 s, a tool as long as it
took). The server is spoken to by hand (JSON-RPC lines) so the test controls when stdin ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from .conftest import write_tone

pytestmark = pytest.mark.timeout(60)

SLEEPY = '''
import time
from audiomind.tools.base import ToolArgs, ToolContext, ToolOutput, ToolResult

class SleepyArgs(ToolArgs):
    pass

class SleepyOutput(ToolOutput):
    slept_s: float

def sleepy(args: SleepyArgs, ctx: ToolContext) -> ToolResult:
    for _ in range(600):  # 60 s in Python steps: the call is still running when the client leaves
        time.sleep(0.1)
    return ToolResult(output=SleepyOutput(slept_s=60.0).model_dump(), claims=[])
'''

MANIFEST = '''name = "sleepy"
version = "1"
category = "acoustic_music_features"
function = "Sleeps for a minute (a test's stand-in for a long tool call)."
supports = ["nothing"]
not_for = ["anything"]
entry = "sleepy_tool:sleepy"
output_model = "sleepy_tool:SleepyOutput"
timeout_s = 120
example = { artifact = "a0" }
'''


def _send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def _reply(proc: subprocess.Popen, want_id: int) -> dict:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        message = json.loads(line)
        if message.get("id") == want_id:
            return message


@pytest.mark.parametrize("busy", [False, True])
def test_the_server_exits_promptly_when_stdin_closes(tmp_path, busy):
    plugin, tools = tmp_path / "plugin", tmp_path / "tools"
    plugin.mkdir()
    tools.mkdir()
    (plugin / "sleepy_tool.py").write_text(SLEEPY)
    (tools / "sleepy.toml").write_text(MANIFEST)
    root = tmp_path / "root"
    root.mkdir()
    write_tone(root / "tone.wav")
    env = {**os.environ, "PYTHONPATH": str(plugin) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "audiomind", "mcp", "--root", str(root), "--runs-dir",
                             str(tmp_path / "runs"), "--tools-dir", str(tools)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert "result" in _reply(proc, 1)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert "sleepy" in {t["name"] for t in _reply(proc, 2)["result"]["tools"]}
        if busy:
            _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                         "params": {"name": "sleepy", "arguments": {"audio": "tone.wav"}}})
            time.sleep(1.5)  # the call is running now
        t0 = time.monotonic()
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert took < 5, f"{took:.1f} s after stdin closed"
    assert proc.returncode == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
