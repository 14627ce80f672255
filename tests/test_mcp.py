"""`audiomind mcp`: the tool inventory over MCP, driven by the official SDK's real client.

Over stdio (the client spawns `python -m audiomind mcp --root DIR`) and over streamable HTTP (the server
runs in a subprocess on a free loopback port): tools are listed with their boundaries and typed schemas,
count_events on generated beeps returns typed structured content (count == N, checked by the client
against the output schema), asr returns the words of flite speech, derived audio from crop is a resource
with provenance, and unknown tools, bad arguments and paths outside the root fail clearly.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
import soundfile as sf

from audiomind import synth
from audiomind.tools.events import CountEventsOutput
from audiomind.tools.manifest import ToolRegistry
from audiomind.tools.mcp_server import audio_args, description, input_schema

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402 - after the importorskip guard
from mcp.shared.exceptions import MCPError  # noqa: E402 - after the importorskip guard

REPO = Path(__file__).resolve().parents[1]
N_BEEPS = 3
TIMEOUT_S = 300


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("mcp-root")
    synth.beeps(N_BEEPS, d / "beeps.wav", gap_s=0.4)
    return d


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("mcp-outside")
    return synth.beeps(2, d / "secret.wav")


def _env() -> dict[str, str]:
    env = dict(os.environ)  # AUDIOMIND_CACHE (the session's isolated cache), HF_HUB_OFFLINE, PATH
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _stdio(root: Path, runs: Path, mode: str = "auto", extra: tuple[str, ...] = ()) -> Client:
    params = StdioServerParameters(command=sys.executable, args=["-m", "audiomind", "mcp", "--root", str(root),
                                                                  "--runs-dir", str(runs), *extra],
                                   env=_env(), cwd=str(REPO))
    return Client(params, read_timeout_seconds=TIMEOUT_S, mode=mode)


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


# ---- the schema mapping (no server) -------------------------------------------------------------------
def test_audio_arguments_replace_artifact_ids_in_the_input_schema():
    reg = ToolRegistry.load()
    schema = input_schema(reg.get("count_events"))
    assert "artifact" not in schema["properties"] and schema["required"] == ["audio"]
    assert schema["properties"]["audio"]["type"] == "string"
    assert "threshold_db" in schema["properties"]
    edit = input_schema(reg.get("judge_edit"))
    assert {"audio", "original_audio"} <= set(edit["required"])  # a default id "a0" means nothing to a client
    verify = {a.external: a.required for a in audio_args(reg.get("speaker_verify"))}
    assert verify == {"audio": True, "other_audio": False}  # None default: optional
    text = description(reg.get("asr"))
    assert "May support: which words are spoken" in text and "Must not be used for: who speaks" in text


# ---- stdio ---------------------------------------------------------------------------------------------
def test_stdio_lists_tools_runs_count_events_and_refuses_clearly(root, outside, tmp_path):
    # a user's manifest whose model is missing here: it must not be offered
    extra_dir = tmp_path / "extra-tools"
    extra_dir.mkdir()
    (extra_dir / "count_with_missing_model.toml").write_text(
        (REPO / "tools" / "count_events.toml").read_text().replace('name = "count_events"',
                                                                   'name = "count_with_missing_model"')
        + 'models = ["no-such-embedded-model"]\n')
    usable = {m.name for m in ToolRegistry.load().available()}

    async def main():
        async with _stdio(root, tmp_path / "runs", extra=("--tools-dir", str(extra_dir))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"asr", "count_events", "crop"} <= set(tools)
            assert set(tools) == usable | {"ask"}  # every usable manifest, judges included, and the agent
            assert {"judge_edit", "judge_rubric", "judge_aura"} <= usable  # the judges are tools too
            assert "count_with_missing_model" not in tools
            ce = tools["count_events"]
            assert "May support: how many separate sounds" in ce.description
            assert "Must not be used for: what the sounds are" in ce.description
            assert ce.output_schema["properties"]["count"]["type"] == "integer"
            assert ce.input_schema["required"] == ["audio"]

            # typed structured results: the client validates them against the output schema itself
            res = await client.call_tool("count_events", {"audio": "beeps.wav"})
            assert not res.is_error, _text(res)
            out = CountEventsOutput.model_validate(res.structured_content)
            assert out.count == N_BEEPS
            meta = res.meta["audiomind/call"]
            assert meta["status"] == "ok" and meta["duration_s"] > 0
            assert meta["inputs"][0]["sha256"] == hashlib.sha256((root / "beeps.wav").read_bytes()).hexdigest()
            assert (tmp_path / "runs" / meta["trace"]).is_file()  # every call is an ordinary trace, named
            assert not Path(meta["trace"]).is_absolute() and str(tmp_path) not in json.dumps(res.meta)  # relatively
            again = await client.call_tool("count_events", {"audio": str(root / "beeps.wav")})
            assert again.meta["audiomind/call"]["cache_hit"] is True  # cached as in an agent run
            assert again.structured_content == res.structured_content

            # clear errors
            with pytest.raises(MCPError, match=r"unknown tool 'count_beeps'.*count_events"):
                await client.call_tool("count_beeps", {"audio": "beeps.wav"})
            bad = await client.call_tool("count_events", {"audio": "beeps.wav", "threshold_db": 5})
            assert bad.is_error and "threshold_db" in _text(bad) and "less than or equal to -3" in _text(bad)
            extra = await client.call_tool("count_events", {"audio": "beeps.wav", "loudness": 1})
            assert extra.is_error and "loudness" in _text(extra)
            out_of_root = await client.call_tool("count_events", {"audio": str(outside)})
            assert out_of_root.is_error and "outside the allowed folder" in _text(out_of_root)
            sneaky = await client.call_tool("count_events", {"audio": "../" + outside.parent.name + "/secret.wav"})
            assert sneaky.is_error and "outside the allowed folder" in _text(sneaky)
            missing = await client.call_tool("count_events", {})
            assert missing.is_error and "missing argument 'audio'" in _text(missing)
            assert str(root) not in _text(missing)  # a refusal never says where the roots are
            by_id = await client.call_tool("count_events", {"audio": "beeps.wav", "artifact": "a0"})
            assert by_id.is_error and "give the audio file as 'audio'" in _text(by_id)

    anyio.run(main)


def _check_crop(res, root: Path):
    """The crop's derived clip comes back as a resource link whose provenance names its source."""
    assert not res.is_error, _text(res)
    links = [c for c in res.content if c.type == "resource_link"]
    assert len(links) == 1
    link = links[0]
    prov = link.meta["audiomind/provenance"]
    assert prov["operation"] == "crop" and prov["parameters"] == {"start_s": 0.3, "end_s": 1.5}
    assert prov["source_sha256"] == hashlib.sha256((root / "beeps.wav").read_bytes()).hexdigest()
    assert link.mime_type == "audio/wav" and str(link.uri).startswith("audiomind://derived/")
    assert res.structured_content["start_s"] == 0.3 and res.structured_content["end_s"] == 1.5
    return link, prov


async def _read_wav(client, uri: str, prov: dict):
    read = await client.read_resource(uri)
    blob = base64.b64decode(read.contents[0].blob)
    assert hashlib.sha256(blob).hexdigest() == prov["sha256"]
    assert read.contents[0].meta["audiomind/provenance"]["source_sha256"] == prov["source_sha256"]
    y, sr = sf.read(io.BytesIO(blob))
    return y, sr


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # legacy: the initialize handshake of 2025-era clients
def test_stdio_crop_returns_a_resource_with_provenance_that_later_calls_accept(root, tmp_path, mode):
    async def main():
        async with _stdio(root, tmp_path / "runs", mode) as client:
            res = await client.call_tool("crop", {"audio": "beeps.wav", "start_s": 0.3, "end_s": 1.5})
            link, prov = _check_crop(res, root)
            y, sr = await _read_wav(client, str(link.uri), prov)
            assert len(y) == round(1.2 * sr)  # sample-exact 1.2 s
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert str(link.uri) in listed
            # the derived clip is audio a later call may name: beeps at 0.5-0.7 and 1.1-1.3 s -> 2 in 0.3-1.5 s
            counted = await client.call_tool("count_events", {"audio": str(link.uri)})
            assert not counted.is_error, _text(counted)
            assert counted.structured_content["count"] == 2

    anyio.run(main)


@pytest.mark.slow
def test_stdio_asr_returns_the_words_of_flite_speech(root, tmp_path):
    text = "the quick brown fox jumps over the lazy dog"
    synth.speech(text, root / "fox.wav")

    async def main():
        async with _stdio(root, tmp_path / "runs") as client:
            res = await client.call_tool("asr", {"audio": "fox.wav", "model": "tiny.en"})
            assert not res.is_error, _text(res)
            heard = res.structured_content["text"].lower()
            for word in ("quick", "brown", "fox", "lazy", "dog"):
                assert word in heard, heard
            words = [w["word"].strip(" .,").lower() for s in res.structured_content["segments"] for w in s["words"]]
            assert "fox" in words

    anyio.run(main)


# ---- streamable HTTP -----------------------------------------------------------------------------------
def _free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(root, tmp_path):
    port = _free_port()
    log = open(tmp_path / "server.log", "w+")  # noqa: SIM115 - the server subprocess writes it until the end
    proc = subprocess.Popen([sys.executable, "-m", "audiomind", "mcp", "--http", str(port), "--root", str(root),
                             "--runs-dir", str(tmp_path / "runs")], cwd=REPO, env=_env(), stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
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


def test_http_serves_the_same_tools_results_resources_and_errors(http_server, root, outside):
    assert "127.0.0.1" in http_server  # bound to loopback only

    async def main():
        async with Client(http_server, read_timeout_seconds=TIMEOUT_S) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"asr", "count_events"} <= set(tools)
            assert "May support:" in tools["asr"].description and "Must not be used for:" in tools["asr"].description
            res = await client.call_tool("count_events", {"audio": "beeps.wav"})
            assert not res.is_error, _text(res)
            assert CountEventsOutput.model_validate(res.structured_content).count == N_BEEPS
            trace = res.meta["audiomind/call"]["trace"]  # in the run folder, never where that is (issue 35)
            assert trace.endswith("/trace.json") and not Path(trace).is_absolute(), trace
            assert str(root) not in json.dumps(res.meta) and "/tmp/" not in json.dumps(res.meta)
            crop = await client.call_tool("crop", {"audio": "beeps.wav", "start_s": 0.3, "end_s": 1.5})
            link, prov = _check_crop(crop, root)
            y, sr = await _read_wav(client, str(link.uri), prov)
            assert len(y) == round(1.2 * sr)
            refused = await client.call_tool("count_events", {"audio": str(outside)})
            assert refused.is_error and "outside the allowed folder" in _text(refused)
            with pytest.raises(MCPError, match="unknown tool"):
                await client.call_tool("nope", {})

    anyio.run(main)
