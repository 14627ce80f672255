"""What the hostile-input probe (evals/hostile/probe.py, issue 35) found on main, kept as standing tests:

1. a folder of traces holding `x.json -> a file elsewhere`: `trace validate|audit|stats|html|export` read it
   (the probe's inotify watch saw the file opened); the folder walk now skips symlinks that lead out of it;
2. `trace html` wrote a trace's raw ESC / C1 bytes into index.html and the pages; page text is now escaped
   like a terminal's (paths.visible) as well as HTML-escaped;
3. serve's `/v1/traces/{id}` and `/v1/traces/{id}/html` on a trace file that is not UTF-8, nested 100,000
   deep or holding a 5,001-digit integer: a 500 with a traceback in the log (html), or the file served as it
   is (json); now a 422 saying why;
4. serve's 400 for a planner that is not allowed listed the allowed specs with a URL's password in them;
5. `audiomind mcp` (stdio) answered nothing to a line it could not read (a 5,001-digit integer, JSON nested
   50,000 deep, not JSON): its client waited for ever; now a JSON-RPC error with the request's id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from audiomind.audit.audit import trace_files
from audiomind.cli import app

from .conftest import running_app, write_tone
from .test_corpus import never_opened, watch
from .test_trace_report_hostile import HOSTILE, a_trace

RAW = ("\x1b", "\x9b", "\x90", "\x9d")

# ---------------------------------------------------------------- 1. a folder walk stays in its folder


@pytest.fixture
def folder_with_a_link_out(tmp_path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    secret = a_trace(outside, write_tone(tmp_path / "secret.wav"), name="secret.json")
    folder = tmp_path / "traces"
    good = a_trace(folder, write_tone(tmp_path / "tone.wav"), name="good.json")
    (folder / "sub").mkdir()
    os.symlink(secret, folder / "sub" / "leak.json")  # out of the folder: skipped
    os.symlink(good, folder / "again.json")  # a link that stays inside: kept
    return folder, secret


def test_the_folder_walk_skips_symlinks_that_lead_out_of_the_folder(folder_with_a_link_out):
    folder, _ = folder_with_a_link_out
    assert [f.name for f in trace_files(folder)] == ["again.json", "good.json"]
    assert trace_files(folder / "sub" / "leak.json") == [folder / "sub" / "leak.json"]  # named: read as asked


@pytest.mark.parametrize("command", ["validate", "audit", "stats", "html"])
def test_trace_commands_on_a_folder_never_open_a_file_a_link_leads_out_to(folder_with_a_link_out, tmp_path,
                                                                          command):
    folder, secret = folder_with_a_link_out
    extra = ["-o", str(tmp_path / "site")] if command == "html" else []
    with watch() as opened:
        res = CliRunner().invoke(app, ["trace", command, str(folder), *extra])
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    never_opened(opened, str(secret), str(secret.parent / "secret.wav"))
    assert "run_secret" not in res.output


# ---------------------------------------------------------------- 2. no raw escape in a page


def test_trace_html_pages_and_index_hold_no_raw_escape(tmp_path):
    run = tmp_path / "run"
    a_trace(run, write_tone(tmp_path / "tone.wav"), name="esc.json", text=f"q {HOSTILE}", claim=f"c {HOSTILE}")
    res = CliRunner().invoke(app, ["trace", "html", str(run), "-o", str(tmp_path / "site"), "--no-spectrograms"])
    assert res.exit_code == 0, res.output
    pages = sorted((tmp_path / "site").glob("*.html"))
    assert len(pages) == 2  # the page and the index
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not any(ch in text for ch in RAW), (page.name, [ch for ch in RAW if ch in text])
    assert "\\x1b]0;pwned\\x07" in (tmp_path / "site" / "run_esc.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------- 3 and 4. serve


@pytest.fixture
def served_traces(model_server, tmp_path):
    from audiomind.serve import create_app

    from .test_serve_hostile import _settings

    settings = _settings(model_server, tmp_path, agent={})
    traces = tmp_path / "traces"
    traces.mkdir()
    good = a_trace(tmp_path / "made", write_tone(tmp_path / "made.wav"), name="good.json")
    text = good.read_text()
    (traces / "nonutf8.json").write_bytes(text.encode().replace(b"Is there a tone?", b"Is there \xff a tone?"))
    (traces / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    data = json.loads(text)
    data["run"]["wall_time_s"] = "BIG"
    (traces / "bigint.json").write_text(json.dumps(data).replace('"BIG"', "9" * 5001))
    (traces / "notatrace.json").write_text(json.dumps({"hello": "world"}))
    (traces / "good.json").write_text(text)
    password = "pw-not-to-repeat-1234"
    settings.allow_planners = [f"openai:m@http://user:{password}@127.0.0.1:9/v1"]
    with running_app(create_app(settings)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client, password


@pytest.mark.parametrize("tid, why", [("nonutf8", "not UTF-8 text"), ("deep", "nested too deeply"),
                                      ("bigint", "5,001 digits"), ("notatrace", "do not fit the trace schema")])
def test_served_traces_that_are_not_readable_are_a_422_saying_why(served_traces, capfd, tid, why):
    client, _ = served_traces
    for route in (f"/v1/traces/{tid}", f"/v1/traces/{tid}/html"):
        if tid == "notatrace" and not route.endswith("html"):
            continue  # valid JSON: served as it is (the schema is checked where the page is rendered)
        r = client.get(route)
        assert r.status_code == 422, (route, r.status_code, r.text[:300])
        assert why in r.json()["detail"] and len(r.text) < 400, r.text
    assert client.get("/v1/traces/good").status_code == 200
    assert client.get("/v1/traces/good/html").status_code == 200
    assert "Traceback" not in "".join(capfd.readouterr())


def test_a_refused_planner_is_answered_without_the_allowed_specs_passwords(served_traces):
    client, password = served_traces
    r = client.post("/v1/ask", data={"question": "Is there a tone?", "path": "tone.wav",
                                     "planner": "openai:x@http://127.0.0.1:9/v1"})
    assert r.status_code == 400 and "is not allowed here" in r.text, r.text
    assert password not in r.text and "http://***@127.0.0.1:9/v1" in r.text, r.text


# ---------------------------------------------------------------- 5. mcp answers every line


def _line(proc: subprocess.Popen, data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data + b"\n")
    proc.stdin.flush()


def _reply(proc: subprocess.Popen, want_id: object, within: float = 20.0) -> dict:
    assert proc.stdout is not None
    os.set_blocking(proc.stdout.fileno(), False)
    deadline, buf = time.monotonic() + within, b""
    while time.monotonic() < deadline:
        chunk = proc.stdout.read(1 << 16)
        if chunk:
            buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == want_id:
                return message
        if not chunk:
            assert proc.poll() is None, "the server exited"
            time.sleep(0.05)
    raise AssertionError(f"no reply to id {want_id!r} within {within} s")


CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"crop","arguments":{"audio":%s}}}'


@pytest.mark.timeout(120)
def test_mcp_answers_a_line_it_cannot_read_and_goes_on(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    write_tone(root / "tone.wav")
    proc = subprocess.Popen([sys.executable, "-m", "audiomind", "mcp", "--root", str(root), "--runs-dir",
                             str(tmp_path / "runs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        _line(proc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode())
        assert "result" in _reply(proc, 1, 60)
        _line(proc, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for rid, audio, code in [(7, b'"tone.wav","start_s":' + b"9" * 5001, -32700),
                                 (8, b"[" * 50_000 + b"]" * 50_000, -32700),
                                 (9, b'"tone.wav"', None)]:
            t0 = time.monotonic()
            _line(proc, CALL % (rid, audio))
            reply = _reply(proc, rid)
            assert time.monotonic() - t0 < 20
            if code is None:  # the next, well-formed call is answered as ever
                assert "result" in reply, reply
            else:
                assert reply["error"]["code"] == code and "Parse error" in reply["error"]["message"], reply
        _line(proc, b"{not json")
        reply = _reply(proc, None)
        assert reply["error"]["code"] == -32700
        _line(proc, b'{"jsonrpc":"2.0","id":"abc","no_method":1}')
        assert _reply(proc, "abc")["error"]["code"] == -32600
    finally:
        proc.kill()
        proc.wait(10)


# ---------------------------------------------------------------- 6. bench run: a path too long is the input's problem


@pytest.mark.parametrize("items", ["i/" * 40_000 + "x.jsonl", "i" * 300 + ".jsonl"])
def test_bench_run_refuses_an_items_path_too_long_as_an_input_error(tmp_path, items):
    """`bench run --items PATH` with a path of 80,000 characters, or one part over 255 bytes: the probe saw
    exit 4 and 'cannot write PATH' (the storage failure of a run folder); it is the input's problem: exit 2,
    one line naming it, the path clipped."""
    res = CliRunner().invoke(app, ["bench", "run", "--items", items, "--out", str(tmp_path / "run"),
                                   "--no-progress"])
    assert res.exit_code == 2, res.output[-500:]
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cannot read the items file"), lines
    assert "cannot write" not in lines[0] and len(lines[0]) < 800, lines[0][:300]


# ---------------------------------------------------------------- 7. a tools folder's manifests, bounded


@pytest.fixture(params=["fifo", "dev_zero", "huge"])
def bad_tools_dir(request, tmp_path) -> tuple[Path, str]:
    folder = tmp_path / "tools"
    folder.mkdir()
    path = folder / "x.toml"
    if request.param == "fifo":
        os.mkfifo(path)
        return folder, "FIFO"
    if request.param == "dev_zero":
        path.symlink_to("/dev/zero")
        return folder, "character device"
    with open(path, "wb") as f:  # sparse: no disk, over the manifest cap
        f.truncate(2 * 1024 * 1024)
    return folder, "more than"


@pytest.mark.timeout(60)
def test_a_manifest_that_is_a_pipe_a_device_or_huge_is_refused_at_once(bad_tools_dir, tmp_path):
    """`--tools-dir` with `x.toml` a FIFO hung ask, trace audit and mcp for ever; `/dev/zero` read 15 GB
    before the probe's kill. Now the bounded reader refuses it: one line, exit 2, in a second or two."""
    from audiomind.tools.manifest import ManifestError, ToolRegistry

    folder, why = bad_tools_dir
    t0 = time.monotonic()
    with pytest.raises(ManifestError, match=why):
        ToolRegistry.load([folder])
    assert time.monotonic() - t0 < 5
    trace = a_trace(tmp_path / "run", write_tone(tmp_path / "tone.wav"))
    # the commands that load a registry themselves do it through cli_common.tool_registry (`tools list` and
    # `tools show` printed a ManifestError traceback until the probe's second round)
    for args in (["trace", "audit", str(trace)], ["tools", "list"], ["tools", "show", "asr"],
                 ["mcp", "--root", str(tmp_path), "--runs-dir", str(tmp_path / "runs")]):
        res = CliRunner().invoke(app, [*args, "--tools-dir", str(folder)])
        assert res.exit_code == 2 and "Traceback" not in res.output, (args, res.output[-1000:])
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and why in lines[0] and "x.toml" in lines[0], (args, lines)


# ---------------------------------------------------------------- 8. bench run --task msu: its folder, and only it


def test_msu_task_files_never_read_through_a_link_out_and_an_empty_folder_is_refused(tmp_path):
    """The probe's `--task msu` cases: a source folder holding `x.json -> a file elsewhere` had that file
    opened (find_task_files followed the link out); a folder with no task file ran 0 items at exit 0."""
    from audiomind.bench.tasks import msu

    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.json"
    secret.write_text(json.dumps({"not": "a task"}))
    root = tmp_path / "msu"
    (root / "sub").mkdir(parents=True)
    os.symlink(secret, root / "sub" / "leak.json")
    os.mkfifo(root / "pipe.json")
    os.symlink("/dev/zero", root / "zero.json")
    with watch() as opened:
        assert msu.find_task_files(root) == []
    never_opened(opened, str(secret))
    t0 = time.monotonic()
    res = CliRunner().invoke(app, ["bench", "run", "--task", "msu", "--source", str(root), "--out",
                                   str(tmp_path / "run"), "--no-progress"])
    assert time.monotonic() - t0 < 20
    assert res.exit_code == 2, res.output[-800:]
    assert "no MSU-Bench task files found" in res.output and "Traceback" not in res.output, res.output[-800:]


# ---------------------------------------------------------------- 9. an error line stays readable


@pytest.mark.parametrize("args", [
    ["trace", "show", "t/" * 40_000 + "x.json"],
    ["trace", "validate", "t/" * 40_000 + "x.json"],
    ["ask", "a/" * 40_000 + "tone.wav", "Is there a tone?"],
    ["judge", "rubric", "a/" * 40_000 + "tone.wav", "a tone"],
])
def test_an_error_echoing_an_80000_character_path_is_one_clipped_line(args):
    """The probe's long_path cases: the refusal repeated the whole 80,000-character path (one line of 80 KB);
    now clipped to about 1,000 characters, both ends kept (the file name is still there)."""
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output[-500:]
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), lines[:2]
    assert len(lines[0]) < 1200 and "more characters" in lines[0], len(lines[0])
    assert ".json" in lines[0][-300:] or ".wav" in lines[0][-300:], lines[0][-300:]  # the name is still there
