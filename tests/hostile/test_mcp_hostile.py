"""`audiomind mcp` under hostile and careless input, driven by the official MCP SDK client (stdio and
streamable HTTP), as in tests/test_mcp.py:

- a multi-megabyte path is refused before anything resolves it, in well under a second of server time;
- a refused call's trace keeps a clipped copy of its arguments (a 10 MB argument is not a 10 MB trace);
- audio longer than `--max-duration` is refused from its header; derived tools stream long files;
- a `--runs-dir` that cannot be written stops start-up with one line; a run folder that fills up mid-session
  is one clear tool error, never JSON-RPC "Internal server error" or libsndfile's "System error";
- images come back as image content, derived clips under the client's names, never internal ids or paths;
- a derived clip made in one HTTP session is neither listed nor readable in another;
- the agent itself is the tool `ask` (against the cooperative loopback model server: no model loads).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import numpy as np
import pytest
import soundfile as sf

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402 - after the importorskip guard
from mcp.shared.exceptions import MCPError  # noqa: E402 - after the importorskip guard

from .conftest import fill, write_tone  # noqa: E402 - after the importorskip guard

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _stdio(root: Path, runs: Path, *extra: str, mode: str = "auto") -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "audiomind", "mcp", "--root", str(root),
                                                                  "--runs-dir", str(runs), *extra],
                                   env=_env(), cwd=str(REPO))
    return Client(params, read_timeout_seconds=TIMEOUT_S, mode=mode)


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def _everything(result) -> str:
    """Every string a client sees of a result: its text, structured content and metadata."""
    return _text(result) + json.dumps(result.structured_content or {}) + json.dumps(
        [c.model_dump(mode="json", exclude={"data"}) for c in result.content])


@pytest.fixture
def root(tmp_path) -> Path:
    d = tmp_path / "root"
    d.mkdir()
    write_tone(d / "tone.wav", seconds=1.0)
    write_tone(d / "five.wav", seconds=5.0)
    return d


def test_hostile_arguments_are_refused_quickly_and_recorded_clipped(root, tmp_path):
    runs = tmp_path / "runs"

    async def main():
        async with _stdio(root, runs, "--max-duration", "3") as client:
            # a 3 MB path of `..` parts: realpath's time grows with their square; refused before resolving
            t0 = time.monotonic()
            res = await client.call_tool("count_events", {"audio": "a/../" * 600_000 + "tone.wav"})
            took = time.monotonic() - t0
            assert res.is_error and "4096" in _text(res), _text(res)
            assert took < 20, f"{took:.1f} s for a refused path"  # (mostly the 3 MB round trip itself)
            assert len(_text(res)) < 400

            # a 10 MB argument the executor refuses: its trace keeps a clipped copy
            res = await client.call_tool("count_events", {"audio": "tone.wav", "loudness": "x" * 10_000_000})
            assert res.is_error and "loudness" in _text(res)
            assert len(_text(res)) < 5000
            trace = runs / res.meta["audiomind/call"]["trace"]  # named inside the run folder (issue 35)
            assert trace.stat().st_size < 100_000, trace.stat().st_size
            recorded = json.loads(trace.read_text())
            assert "more characters" in recorded["question"]["metadata"]["arguments"]["loudness"]

            # longer than --max-duration: refused from the header, with the limit named
            res = await client.call_tool("count_events", {"audio": "five.wav"})
            assert res.is_error and "at most 3 s" in _text(res) and "5.0 s" in _text(res), _text(res)
            assert str(root) not in _text(res)

    anyio.run(main)


def test_results_speak_the_clients_language(root, tmp_path):
    """Images as image content; derived clips named after the client's file; no internal artifact ids
    ("a0"), no Python None, no server paths in what a client reads."""
    runs = tmp_path / "runs"

    async def main():
        async with _stdio(root, runs) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            crop_schema = json.dumps(tools["crop"].input_schema)
            assert "None" not in crop_schema and "null = end of clip" in crop_schema
            assert ASK in tools and tools[ASK].input_schema["required"] == ["audio", "question"]

            spec = await client.call_tool("spectrogram", {"audio": "tone.wav"})
            assert not spec.is_error, _text(spec)
            images = [c for c in spec.content if c.type == "image"]
            assert len(images) == 1 and images[0].mime_type == "image/png"
            assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
            assert str(runs) not in _everything(spec) and "/tmp" not in json.dumps(spec.structured_content)

            crop = await client.call_tool("crop", {"audio": "tone.wav", "start_s": 0.2, "end_s": 0.8})
            assert not crop.is_error, _text(crop)
            link = next(c for c in crop.content if c.type == "resource_link")
            assert link.name == "tone_crop.wav" and link.title == "crop of tone.wav"
            seen = _everything(crop)
            assert str(runs) not in seen and '"a0"' not in seen and "a0_" not in seen, seen
            assert crop.structured_content["derived"][0]["path"] == str(link.uri)
            listed = (await client.list_resources()).resources
            assert [r.description for r in listed] == ["crop of tone.wav"]

            missing = await client.call_tool("crop", {"audio": "tone.wav", "start_s": 5.0})
            assert missing.is_error and "'audio'" in _text(missing) and "a0" not in _text(missing), _text(missing)

    anyio.run(main)


ASK = "ask"


def test_the_agent_is_offered_as_the_ask_tool(root, tmp_path, model_server):
    async def main():
        async with _stdio(root, tmp_path / "runs", "--planner", model_server.spec, "--frontend",
                          model_server.spec, "--no-cache") as client:
            res = await client.call_tool(ASK, {"audio": "tone.wav", "question": "Is there a tone?",
                                               "choices": ["yes", "no"]})
            assert not res.is_error, _text(res)
            out = res.structured_content
            assert out["answer"] == "yes" and out["choice_index"] == 0 and out["outcome"] == "answered"
            assert (tmp_path / "runs" / res.meta["audiomind/call"]["trace"]).is_file()
            one = await client.call_tool(ASK, {"audio": "tone.wav", "question": "Tone?", "choices": ["yes"]})
            assert one.is_error and "at least 2" in _text(one)
            escape = await client.call_tool(ASK, {"audio": "tone.wav", "question": "Tone?\x1b]0;x\x07"})
            assert escape.is_error and "control character" in _text(escape).lower(), _text(escape)
            outside = await client.call_tool(ASK, {"audio": "/etc/passwd", "question": "Tone?"})
            assert outside.is_error and "outside the allowed folder" in _text(outside)

    anyio.run(main)


def test_the_ask_tools_budget_and_timeout_are_the_servers_to_set(root, tmp_path, model_server):
    """`mcp --time-budget 4 --timeout 1`: against a planner that never answers, `ask` ends in seconds (the
    defaults are 600 s and 120 s a request), answered from the evidence gathered or an honest failure."""
    from .slow_servers import SlowServer

    hang = SlowServer("hang")

    async def main():
        async with _stdio(root, tmp_path / "runs", "--planner", f"openai:m@{hang.url}", "--frontend",
                          model_server.spec, "--no-cache", "--time-budget", "4", "--timeout", "1") as client:
            t0 = time.monotonic()
            res = await client.call_tool(ASK, {"audio": "tone.wav", "question": "Is there a tone?",
                                               "choices": ["yes", "no"]})
            took = time.monotonic() - t0
            assert took < 4 + 10, took
            text = _text(res) + json.dumps(res.structured_content or {})
            assert res.is_error or res.structured_content["outcome"] in ("answered", "failed", "stopped"), text

    try:
        anyio.run(main)
    finally:
        hang.close()


def _start_only(root: Path, runs: Path) -> subprocess.CompletedProcess:
    """`mcp` with stdin closed: a usable server would end at EOF; an unusable --runs-dir ends at once."""
    return subprocess.run([sys.executable, "-m", "audiomind", "mcp", "--root", str(root), "--runs-dir", str(runs)],
                          cwd=REPO, env=_env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)


def _one_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_an_unusable_runs_dir_stops_start_up_with_one_line(root, tmp_path, tmpfs):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    _one_line(_start_only(root, blocker / "runs"), "--runs-dir", "cannot be used")
    _one_line(_start_only(root, tmpfs(256, ro=True)), "--runs-dir", "read-only")


def _fill_up(path: Path) -> None:
    with contextlib.suppress(OSError), open(path, "wb") as f:
        f.write(b"\0" * (1 << 20))


def test_a_full_runs_dir_is_a_clear_tool_error(root, tmp_path, tmpfs):
    runs = tmpfs(2048)
    long_clip = root / "long.wav"  # 60 s: its derived copy cannot fit once the folder is nearly full
    write_tone(long_clip, seconds=60.0)

    async def main():
        async with _stdio(root, runs, "--no-cache") as client:
            ok = await client.call_tool("count_events", {"audio": "tone.wav"})
            assert not ok.is_error, _text(ok)
            fill(runs, leave_kb=40)  # room for a small trace, not for a minute of derived audio
            for tool, args in (("gain", {"audio": "long.wav", "gain_db": -6}),
                               ("crop", {"audio": "long.wav", "start_s": 0.0}),
                               ("count_events", {"audio": "tone.wav"})):
                if tool == "count_events":  # no room left at all: not even its trace can be written
                    await anyio.to_thread.run_sync(_fill_up, runs / "filler-2.bin")
                res = await client.call_tool(tool, args)
                text = _text(res)
                assert res.is_error, (tool, text)
                assert "run folder is full" in text, (tool, text)
                assert "System error" not in text and "Internal" not in text and str(runs) not in text, text

    anyio.run(main)


# ---- streamable HTTP: sessions ------------------------------------------------------------------------
def _free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_url(root, tmp_path):
    port = _free_port()
    log = open(tmp_path / "server.log", "w+")  # noqa: SIM115 - the server writes it until the end
    proc = subprocess.Popen([sys.executable, "-m", "audiomind", "mcp", "--http", str(port), "--root", str(root),
                             "--runs-dir", str(tmp_path / "runs")], cwd=REPO, env=_env(), stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"MCP HTTP server did not start (exit {proc.poll()}):\n{log.read()[-3000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # legacy: Mcp-Session-Id sessions; auto: the newest protocol
def test_derived_clips_stay_in_the_http_session_that_made_them(http_url, mode):
    async def main():
        async with Client(http_url, read_timeout_seconds=TIMEOUT_S, mode=mode) as a, \
                Client(http_url, read_timeout_seconds=TIMEOUT_S, mode=mode) as b:
            crop = await a.call_tool("crop", {"audio": "tone.wav", "start_s": 0.2, "end_s": 0.8})
            assert not crop.is_error, _text(crop)
            uri = str(next(c for c in crop.content if c.type == "resource_link").uri)
            assert uri not in {str(r.uri) for r in (await b.list_resources()).resources}
            if mode == "legacy":  # sessions: the maker lists and reads it, the other session cannot
                assert uri in {str(r.uri) for r in (await a.list_resources()).resources}
                with pytest.raises(MCPError, match="unknown resource"):
                    await b.read_resource(uri)
                other = await b.call_tool("count_events", {"audio": uri})
                assert other.is_error and "unknown resource" in _text(other)
            read = await a.read_resource(uri)
            y, sr = sf.read(__import__("io").BytesIO(base64.b64decode(read.contents[0].blob)))
            assert len(y) == round(0.6 * sr)

    anyio.run(main)


def test_derived_tools_stream_long_audio_in_bounded_memory(tmp_path):
    """gain and resample of 20 minutes of stereo 48 kHz (440 MB as float64) stay far below that in peak
    memory (VmHWM of a fresh process: ru_maxrss is not it, since Linux carries it across exec, so a child forked
    from a pytest process holding 1.9 GB of models reported 1,965 MB), and the streamed output equals the
    block-free computation on
    its first seconds (16-bit quantisation: 1 LSB)."""
    src = tmp_path / "long.wav"
    sr, minutes = 48000, 20
    with sf.SoundFile(src, "w", samplerate=sr, channels=2, subtype="PCM_16") as f:
        t = np.arange(60 * sr) / sr
        block = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.2 * np.sin(2 * np.pi * 660 * t)], axis=1)
        for _ in range(minutes):
            f.write(block)
    script = f"""
import json, numpy as np, soundfile as sf
from pathlib import Path
from audiomind.artifacts import make_artifact
from audiomind.state import ToolCallRequest
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry
reg = ToolRegistry.load()
art = make_artifact("a0", {str(src)!r})
ex = ToolExecutor(reg, Path({str(tmp_path / 'derived')!r}), cache=None)
res = ex.run([ToolCallRequest(tool="gain", arguments={{"artifact": "a0", "gain_db": -6}}),
              ToolCallRequest(tool="resample", arguments={{"artifact": "a0", "target_rate": 96000}})], [art], step=0)
print(json.dumps({{"status": [c.status.value for c in res.tool_calls], "errors": [c.error for c in res.tool_calls],
                  "paths": [a.path for a in res.artifacts], "durations": [a.duration_s for a in res.artifacts],
                  "maxrss_mb": [int(line.split()[1]) for line in open("/proc/self/status")
                                if line.startswith("VmHWM:")][0] / 1024}}))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == ["ok", "ok"], out["errors"]
    assert out["durations"] == pytest.approx([minutes * 60.0] * 2, abs=1e-3)
    assert out["maxrss_mb"] < 800, out  # the whole file as float32 is 440 MB; at 96 kHz, 880 MB
    gained = sf.read(out["paths"][0], frames=5 * sr)[0]
    expected = sf.read(src, frames=5 * sr)[0] * 10 ** (-6 / 20)
    np.testing.assert_allclose(gained, expected, atol=1.5 / 32768)  # one 16-bit step, plus rounding


def test_whole_clip_tools_refuse_long_audio_with_a_way_out(tmp_path):
    from audiomind.artifacts import make_artifact
    from audiomind.state import ToolCallRequest
    from audiomind.tools.derive import MAX_WHOLE_CLIP_S
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry

    clip = write_tone(tmp_path / "long.wav", seconds=MAX_WHOLE_CLIP_S + 5, sr=8000)
    ex = ToolExecutor(ToolRegistry.load(), tmp_path / "derived", cache=None)
    res = ex.run([ToolCallRequest(tool="filter", arguments={"artifact": "a0", "kind": "lowpass", "high_hz": 1000})],
                 [make_artifact("a0", clip)], step=0)
    call = res.tool_calls[0]
    assert call.status.value == "error"
    assert f"at most {MAX_WHOLE_CLIP_S:g} s" in call.error and "crop" in call.error, call.error


def test_outputs_name_inputs_as_the_client_did():
    """speaker_verify's `compared` ("a0 [0.0-5.0 s]", "a1") and any other internal artifact id in an output
    read as the client's argument names; derived files' server paths as their resource URIs."""
    from audiomind.tools.mcp_server import _client_view

    out = {"compared": ["a0 [0.0-5.0 s]", "a1"], "same": True, "note": "a0a1 stays", "nested": [{"id": "a0"}],
           "derived": [{"path": "/srv/runs/x/derived/a0_crop_1.wav"}]}
    view = _client_view(out, {"a0": "audio", "a1": "other_audio"},
                        {"/srv/runs/x/derived/a0_crop_1.wav": "audiomind://derived/r-t/tone_crop.wav"})
    assert view == {"compared": ["audio [0.0-5.0 s]", "other_audio"], "same": True, "note": "a0a1 stays",
                    "nested": [{"id": "audio"}], "derived": [{"path": "audiomind://derived/r-t/tone_crop.wav"}]}
