"""The hostile-input probe of issue 35 ("every bound holds on every path"): a catalogue of hostile and careless
inputs, as data, run across every surface that reads a file (the CLI commands, `serve`'s routes, the MCP tools
over stdio, the trace viewer), each case in a subprocess with a hard timeout and its peak RSS measured
(/usr/bin/time -v), each outcome classified by machine:

    traceback   "Traceback (most recent call last)" in what the case printed (or what the server logged)
    disclosure  a planted secret (API key, URL password) anywhere; for the served surfaces (serve, mcp) also the
                repository's, $HOME's or the sandbox's (roots, uploads, traces) absolute path
    unbounded   the case ran past its bound + 10 s (then it is killed)
    raw_escape  ESC, C1 CSI, DCS or OSC (U+001B, U+009B, U+0090, U+009D) on stdout/stderr
    outside     a file outside the allowed roots was opened (inotify on the sandbox's `outside/` folder)
    memory      peak RSS over 2 GB
    exit        an exit status (HTTP status, MCP isError) other than the case's expected ones
    lost        what an accepted input should have left (an answer, a results row, a page) is missing
    injection   (viewer) planted markup reaches a page unescaped

Run:  .venv/bin/python evals/hostile/probe.py [--only SUBSTR] [--json PATH] [--jobs 2] [--no-slow]
It prints a table of cases by surface (total / ok / each failure class) and writes the rows as JSON
(default evals/hostile/latest.json). Loopback (127.0.0.1) only. Not a test: it measures."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

PY = sys.executable
SECRET = "sk-probe-PLANTED-4f1c9e2b7a"  # planted as every provider's API key
URL_PASS = "hunter2-probe-pw-91c7"  # planted as the password of every URL with credentials
HOME = os.path.expanduser("~")
GRACE_S = 10.0
MEMORY_LIMIT_KB = 2 * 1024 * 1024
CLASSES = ["traceback", "disclosure", "unbounded", "raw_escape", "outside", "memory", "exit", "lost", "injection"]
ESCAPES = {"\x1b": "ESC", "\x9b": "C1 CSI", "\x90": "DCS", "\x9d": "OSC",
           # a lone byte 0x9b/0x90/0x9d (not UTF-8) as the surrogateescape decoding shows it
           **{chr(0xDC00 + b): f"raw byte 0x{b:02x}" for b in (0x9B, 0x90, 0x9D)}}
ESC_TEXT = "\x1b[2J\x1b]0;pwned\x07 \x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x1bP1$qm\x1b\\ \x9b31m red"
MARKUP = "<script>probe_xss()</script><img src=x onerror=probe_xss()>"

# ---------------------------------------------------------------- inotify: who opened a file outside the roots

_libc = ctypes.CDLL("libc.so.6", use_errno=True)
IN_ACCESS, IN_OPEN = 0x1, 0x20


class Watcher:
    """One inotify descriptor; each sandbox's `outside/` folder is watched; opens are collected per folder."""

    def __init__(self) -> None:
        self.fd = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        self.folders: dict[int, str] = {}
        self.seen: dict[str, set[str]] = {}
        self.lock = threading.Lock()

    def watch(self, folder: Path) -> None:
        wd = _libc.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN | IN_ACCESS)
        if wd >= 0:
            with self.lock:
                self.folders[wd] = str(folder)
                self.seen.setdefault(str(folder), set())

    def opened(self, folder: Path) -> list[str]:
        self.drain()
        with self.lock:
            return sorted(self.seen.get(str(folder), set()))

    def drain(self) -> None:
        with self.lock:
            while True:
                try:
                    buf = os.read(self.fd, 65536)
                except (BlockingIOError, OSError):
                    return
                i = 0
                while i + 16 <= len(buf):
                    wd, _mask, _cookie, ln = struct.unpack_from("iIII", buf, i)
                    name = buf[i + 16:i + 16 + ln].rstrip(b"\0").decode(errors="replace")
                    if name and wd in self.folders:
                        self.seen[self.folders[wd]].add(name)
                    i += 16 + ln


WATCH = Watcher()

# ---------------------------------------------------------------- fixtures


def write_tone(path: Path, seconds: float = 1.0, sr: int = 16000) -> Path:
    import numpy as np
    import soundfile as sf

    t = np.arange(round(seconds * sr)) / sr
    sf.write(path, (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), sr)
    return path


def ten_hour_flac(cache: Path) -> Path:
    """10 hours of 8 kHz mono silence as FLAC (about 1 MB), made once and kept in `cache`."""
    import numpy as np
    import soundfile as sf

    path = cache / "ten_hours.flac"
    if path.exists() and sf.info(str(path)).duration == 36000.0:
        return path
    cache.mkdir(parents=True, exist_ok=True)
    block = np.zeros(8000 * 600, np.int16)
    tmp = path.with_suffix(".part.flac")
    with sf.SoundFile(str(tmp), "w", samplerate=8000, channels=1, subtype="PCM_16", format="FLAC") as f:
        for _ in range(60):
            f.write(block)
    tmp.replace(path)
    return path


def trace_state(clip: Path, run_id: str, text: str = "Is there a tone?", claim: str = "a tone is heard",
                artifact_path: str | None = None) -> Any:
    from audiomind import state as st
    from audiomind.audio import sha256_file

    call = st.ToolCall(id="call_0000000001", tool="loudness", issued_by="planner", step=1,
                       status=st.ToolCallStatus.ok, requested_arguments={"artifact": "a0"},
                       arguments={"artifact": "a0"}, output={"lufs": -20.0})
    where = artifact_path or str(clip)
    return st.EvidenceState(
        run=st.RunInfo(run_id=run_id, artifact_dir=str(clip.parent)),
        question=st.Question(text=text, choices=["yes", "no"], audio_path=where),
        artifacts=[st.Artifact(id="a0", path=where, sha256=sha256_file(clip), duration_s=1.0, sample_rate=16000,
                               channels=1, operation="input")],
        decisions=[st.PlannerDecision(step=1, action=st.Action.CALL_TOOLS, rationale=claim, planner="rules")],
        tool_calls=[call],
        evidence=[st.EvidenceItem(id="ev_0000000001", source_type="tool_call", source_id=call.id, tool="loudness",
                                  claim=claim, artifact_id="a0")],
        final_answer=st.FinalAnswer(text="yes", choice="yes", choice_index=0, rationale=claim,
                                    cited_evidence_ids=["ev_0000000001"]))


def write_trace(state: Any, path: Path) -> Path:
    from audiomind.trace import write_trace as write

    return write(state, path)


class Sandbox:
    """One case's folder: `allowed/` (the root, holding a tone, traces and the hostile entries), `outside/` (a
    tone, a trace and rows that must never be opened; watched), `ro/` (read only where a mount allows)."""

    def __init__(self, base: Path, name: str, shared: Shared) -> None:
        self.dir = base / name
        self.root = self.dir / "allowed"
        self.outside = self.dir / "outside"
        self.root.mkdir(parents=True)
        self.outside.mkdir()
        self.shared = shared
        tone = self.root / "tone.wav"
        shutil.copy(shared.tone, tone)
        shutil.copy(shared.tone, self.outside / "secret.wav")
        shutil.copy(shared.tone, self.root / "tone2.wav")
        os.link(shared.flac, self.root / "ten_hours.flac")
        (self.root / "folder.wav").mkdir()
        os.mkfifo(self.root / "pipe.wav")
        os.symlink("/dev/zero", self.root / "zero.wav")
        os.symlink(self.outside / "secret.wav", self.root / "link_out.wav")
        os.symlink(self.outside, self.root / "dirlink")  # a folder link out of the root
        (self.root / "bytes.wav").write_bytes(b"\xff\xfe not audio \x9b\x1b[2J\n" * 40)
        # traces
        t = self.root / "traces"
        t.mkdir()
        self.trace = write_trace(trace_state(tone, "run_good"), t / "good.json")
        self.trace_esc = write_trace(trace_state(tone, "run_esc\x1b[2J", text=f"q {ESC_TEXT} {MARKUP}",
                                                 claim=f"claim {ESC_TEXT} {MARKUP}"), self.dir / "esc.json")
        self.trace_out = write_trace(trace_state(self.outside / "secret.wav", "run_out"), self.dir / "out.json")
        self.trace_out_rel = self.dir / "out_rel.json"
        data = json.loads(self.trace.read_text())
        for key in ("question",):
            data[key]["audio_path"] = "../outside/secret.wav"
        data["artifacts"][0]["path"] = "../outside/secret.wav"
        self.trace_out_rel.write_text(json.dumps(data))
        write_trace(trace_state(self.outside / "secret.wav", "run_secret"), self.outside / "secret.json")
        # traces whose clip, in the trace's own folder, is a FIFO / /dev/zero / a 10-hour FLAC (the viewer
        # embeds, the audit hashes, the replay decodes what a trace names there)
        self.art_traces = {}
        for kind, clip in [("fifo", "pipe.wav"), ("zero", "zero.wav"), ("long", "ten_hours.flac")]:
            d = json.loads(self.trace.read_text())
            d["run"]["run_id"] = f"run_{kind}_art"
            d["question"]["audio_path"] = d["artifacts"][0]["path"] = str(self.root / clip)
            self.art_traces[kind] = self.root / f"{kind}_art.json"
            self.art_traces[kind].write_text(json.dumps(d))
        self.deep = self.dir / "deep.json"
        self.deep.write_text("[" * 100_000 + "]" * 100_000)
        self.bigint = self.dir / "bigint.json"
        d2 = json.loads(self.trace.read_text())
        d2["run"]["wall_time_s"] = "BIGINT"
        self.bigint.write_text(json.dumps(d2).replace('"BIGINT"', "9" * 5001))
        self.nonutf8 = self.dir / "nonutf8.json"
        self.nonutf8.write_bytes(self.trace.read_bytes().replace(b"Is there a tone?", b"Is there \xff\xfe a tone?"))
        self.fifo_json = self.dir / "pipe.json"
        os.mkfifo(self.fifo_json)
        self.zero_json = self.dir / "zero.json"
        os.symlink("/dev/zero", self.zero_json)
        self.huge_json = self.dir / "huge.json"  # sparse: no disk, but over the 256 MB input cap
        with open(self.huge_json, "wb") as f:
            f.truncate(257 * 1024 * 1024)
        self.link_json = self.dir / "link_out.json"
        os.symlink(self.outside / "secret.json", self.link_json)
        self.dirty = self.dir / "dirty"  # a folder of traces: good, escapes, a FIFO, a link out, /dev/zero
        self.dirty.mkdir()
        shutil.copy(self.trace, self.dirty / "good.json")
        shutil.copy(self.trace_esc, self.dirty / "esc.json")
        os.mkfifo(self.dirty / "pipe.json")
        os.symlink(self.outside / "secret.json", self.dirty / "link_out.json")
        os.symlink("/dev/zero", self.dirty / "zero.json")
        self.tools_fifo = self.dir / "tools_fifo"  # a manifest that is a FIFO
        self.tools_fifo.mkdir()
        os.mkfifo(self.tools_fifo / "x.toml")
        self.tools_zero = self.dir / "tools_zero"  # a manifest that is /dev/zero
        self.tools_zero.mkdir()
        os.symlink("/dev/zero", self.tools_zero / "z.toml")
        self.tools_out = self.dir / "tools_out"  # a manifest that links out (to rows, not a manifest)
        self.tools_out.mkdir()
        (self.outside / "secret.toml").write_text('name = "secret"\n')
        os.symlink(self.outside / "secret.toml", self.tools_out / "s.toml")
        WATCH.watch(self.outside)

    @property
    def ro(self) -> Path:
        return self.shared.ro

    def items(self, rows: list[Any], name: str = "items.jsonl", raw: bytes = b"") -> Path:
        path = self.root / name
        path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + raw)
        return path


def _row(i: str, audio: str, question: str = "Is there a tone?") -> dict[str, Any]:
    return {"id": i, "question": question, "choices": ["yes", "no"], "answer": "yes", "audio": audio}


@dataclass
class Shared:
    base: Path
    tone: Path
    flac: Path
    ro: Path
    ro_mounted: bool
    model: Any = None  # cooperative loopback model server (tests/hostile/model_server.py)
    hang: Any = None
    drip: Any = None
    dead_port: int = 0

    def spec(self, which: str, model: str = "m") -> str:
        url = {"ok": self.model.url if self.model else "", "hang": self.hang.url, "drip": self.drip.url,
               "dead": f"http://127.0.0.1:{self.dead_port}/v1"}[which]
        return f"openai:{model}@{url}"

    def cred_spec(self) -> str:
        return f"openai:m@http://probeuser:{URL_PASS}@127.0.0.1:{self.dead_port}/v1"


def dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return port


def make_shared(base: Path) -> Shared:
    from tests.hostile.model_server import ModelServer
    from tests.hostile.slow_servers import SlowServer

    tone = write_tone(base / "tone.wav")
    flac = ten_hour_flac(REPO / "evals" / "hostile" / ".cache")
    flac_here = base / "ten_hours.flac"
    try:
        os.link(flac, flac_here)
    except OSError:
        shutil.copy(flac, flac_here)
    ro = base / "ro"
    ro.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)], capture_output=True,
                             check=False).returncode == 0
    if not mounted:
        os.chmod(ro, 0o555)
    return Shared(base=base, tone=tone, flac=flac_here, ro=ro, ro_mounted=mounted, model=ModelServer(),
                  hang=SlowServer("hang"), drip=SlowServer("drip", interval=1.0), dead_port=dead_port())


# ---------------------------------------------------------------- cases


@dataclass
class Spec:
    """What a case runs. cli: `args` to `python -m audiomind`; http: `method`, `route`, `data`/`files`/`raw`
    against the shared `serve`; mcp: JSON-RPC `messages` (after initialize) to a fresh `audiomind mcp`."""
    args: list[Any] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    method: str = "POST"
    route: str = ""
    data: dict[str, Any] | None = None
    files: dict[str, Any] | None = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    messages: list[Any] = field(default_factory=list)
    mcp_args: list[str] = field(default_factory=list)
    check: Callable[[Result], list[str]] | None = None  # problems of class `lost` / `injection`


@dataclass
class Case:
    surface: str
    target: str
    name: str
    build: Callable[[Sandbox], Spec]
    expect: tuple[int, ...]  # exit codes (cli), HTTP statuses (http), (0,) ok / (1,) isError (mcp)
    bound_s: float = 30.0
    slow: bool = False
    roots: bool = True  # an open of outside/ counts (the surface has allowed roots)

    @property
    def id(self) -> str:
        return f"{self.surface}:{self.target}:{self.name}"


@dataclass
class Result:
    case: Case
    code: int | None
    out: str
    err: str
    wall_s: float
    rss_kb: int | None
    killed: bool
    opened: list[str]
    box: Sandbox | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def cli_case(target: str, name: str, args: Callable[[Sandbox], list[Any]], expect: tuple[int, ...], **kw: Any) -> Case:
    check = kw.pop("check", None)
    env = kw.pop("env", None)
    return Case("cli", target, name, lambda b: Spec(args=args(b), check=check, env=env(b) if env else {}), expect,
                **kw)


def _has(*needles: str) -> Callable[[Result], list[str]]:
    def check(r: Result) -> list[str]:
        text = r.out + r.err
        return [f"missing {n!r}" for n in needles if n not in text]
    return check


def _files(*globs: str) -> Callable[[Result], list[str]]:
    def check(r: Result) -> list[str]:
        assert r.box is not None
        return [f"nothing at {g}" for g in globs if not list(r.box.dir.glob(g))]
    return check


def _page_clean(glob: str) -> Callable[[Result], list[str]]:
    def check(r: Result) -> list[str]:
        assert r.box is not None
        pages = list(r.box.dir.glob(glob))
        if not pages:
            return [f"lost: no page at {glob}"]
        bad = []
        for p in pages:
            text = p.read_text(errors="replace")
            if "<script>probe_xss" in text or "<img src=x onerror=probe_xss" in text:
                bad.append(f"injection: {p.name} holds the planted markup unescaped")
            if any(ch in text for ch in "\x1b\x9b\x90\x9d"):
                bad.append(f"injection: {p.name} holds a raw escape character")
        return bad
    return check


def _body_clean(r: Result) -> list[str]:
    """A served page: the planted markup escaped, no raw escape character."""
    bad = []
    if "<script>probe_xss" in r.out or "<img src=x onerror=probe_xss" in r.out:
        bad.append("injection: the page holds the planted markup unescaped")
    if any(ch in r.out for ch in "\x1b\x9b\x90\x9d"):
        bad.append("injection: the page holds a raw escape character")
    return bad


def file_inputs(b: Sandbox) -> dict[str, Path | str]:
    """The hostile things behind a file argument (audio)."""
    return {"missing": b.root / "nothing.wav", "directory": b.root / "folder.wav", "fifo": b.root / "pipe.wav",
            "dev_zero": b.root / "zero.wav", "long_path": "a/" * 40_000 + "tone.wav", "not_audio": b.root / "bytes.wav",
            "esc_name": b.root / "no\x1b[2J\x9bsuch.wav"}


def trace_inputs(b: Sandbox) -> dict[str, Path | str]:
    return {"missing": b.dir / "nothing.json", "directory_empty": b.root / "folder.wav", "fifo": b.fifo_json,
            "dev_zero": b.zero_json, "long_path": "t/" * 40_000 + "x.json", "deep": b.deep, "bigint": b.bigint,
            "non_utf8": b.nonutf8, "escapes": b.trace_esc, "esc_name": b.dir / "no\x1b]8;;x\x07such.json",
            "huge_sparse": b.huge_json}


REFUSE = (2,)
ASK_OK = ("--planner", "{ok}", "--frontend", "{ok}")


def catalogue(sh: Shared, slow: bool = True) -> list[Case]:
    cases: list[Case] = []
    ok = sh.spec("ok")
    choices = ["--choice", "yes", "--choice", "no"]

    # ---- ask: every hostile thing behind the audio path, then the model servers
    for name in ["missing", "directory", "fifo", "dev_zero", "long_path", "not_audio", "esc_name"]:
        cases.append(cli_case("ask", name, lambda b, n=name: ["ask", file_inputs(b)[n], "Is there a tone?", *choices,
                                                              "--trace-dir", b.dir / "t"], REFUSE, bound_s=20,
                              roots=False))
        cases.append(cli_case("ask", f"extra-audio {name}", lambda b, n=name: [
            "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--extra-audio", file_inputs(b)[n],
            "--trace-dir", b.dir / "t"], REFUSE, bound_s=20, roots=False))
    cases.append(cli_case("ask", "non-utf8 path", lambda b: ["ask", os.fsencode(b.root) + b"/\xff\xfe.wav", "q?"],
                          REFUSE, bound_s=20, roots=False))
    cases.append(cli_case("ask", "ten-hour flac --max-duration 60", lambda b: [
        "ask", b.root / "ten_hours.flac", "Is there a tone?", *choices, "--max-duration", "60", "--trace-dir",
        b.dir / "t"], REFUSE, bound_s=20, roots=False))
    cases.append(cli_case("ask", "escapes in question (model server)", lambda b: [
        "ask", b.root / "tone.wav", f"Is there a tone? {ESC_TEXT}", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache"], (0, 2), bound_s=60, roots=False))
    cases.append(cli_case("ask", "--json, escapes in question (model server)", lambda b: [
        "ask", b.root / "tone.wav", f"Is there a tone? {ESC_TEXT}", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache", "--json"], (0, 2), bound_s=60, roots=False))
    cases.append(cli_case("ask", "ok (model server)", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache"], (0,), bound_s=60, roots=False,
        check=lambda r: _has("Answer")(r) + _files("t/*.json")(r)))
    cases.append(cli_case("ask", "read-only trace dir", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.ro / "t", "--no-cache"], (4,), bound_s=60, roots=False, check=_has("Answer")))
    cases.append(cli_case("ask", "URL credentials, dead server", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", sh.cred_spec(), "--frontend",
        sh.cred_spec(), "--trace-dir", b.dir / "t", "--timeout", "3", "--retries", "0", "--time-budget", "10"],
        (1, 2, 3), bound_s=40, roots=False))
    for which in ("dead", "hang", "drip"):
        cases.append(cli_case("ask", f"{which} model server", lambda b, w=which: [
            "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", sh.spec(w), "--frontend",
            sh.spec(w), "--trace-dir", b.dir / "t", "--timeout", "3", "--retries", "0", "--time-budget", "10",
            "--no-cache"], (0, 1, 2, 3), bound_s=30, slow=which != "dead", roots=False,
            check=_files("t/*.json")))
    for which in ("fifo", "zero"):
        cases.append(cli_case("ask", f"--tools-dir manifest {which}", lambda b, w=which: [
            "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
            "--trace-dir", b.dir / "t", "--no-cache", "--tools-dir", getattr(b, f"tools_{w}")], (0, 2), bound_s=40,
            roots=False))
        cases.append(cli_case("trace audit", f"--tools-dir manifest {which}", lambda b, w=which: [
            "trace", "audit", b.trace, "--tools-dir", getattr(b, f"tools_{w}")], (0, 1, 2), bound_s=30,
            roots=False))
        for cmd in (["tools", "list"], ["tools", "show", "asr"]):
            cases.append(cli_case(" ".join(cmd[:2]), f"--tools-dir manifest {which}", lambda b, w=which, c=cmd: [
                *c, "--tools-dir", getattr(b, f"tools_{w}")], (2,), bound_s=20, roots=False))
    cases.append(cli_case("ask", "--model-cache-dir is a FIFO", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache", "--model-cache", "use", "--model-cache-dir", b.root / "pipe.wav"],
        (0, 2, 4), bound_s=40, roots=False))
    cases.append(cli_case("ask", "--model-cache-dir read-only", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache", "--model-cache", "use", "--model-cache-dir", b.ro / "mc"],
        (0, 2, 4), bound_s=40, roots=False))
    cases.append(cli_case("ask", "--otlp file:// URL", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
        "--trace-dir", b.dir / "t", "--no-cache", "--otlp", f"file://{b.outside}/secret.json"], (0, 2), bound_s=40))
    cases.append(cli_case("ask", "planner file:// URL", lambda b: [
        "ask", b.root / "tone.wav", "Is there a tone?", *choices, "--planner", f"openai:m@file://{b.outside}/secret.json",
        "--frontend", ok, "--trace-dir", b.dir / "t", "--no-cache", "--timeout", "3", "--retries", "0"],
        (1, 2, 3), bound_s=40))
    cases.append(cli_case("trace export", "--otlp file:// URL", lambda b: [
        "trace", "export", b.trace, "--otlp", f"file://{b.outside}/secret.json"], (1, 2), bound_s=30))
    cases.append(cli_case("bench run", "--audio-dir is a FIFO", lambda b: [
        "bench", "run", "--items", b.items([_row("good", "tone.wav")]), "--audio-dir", b.root / "pipe.wav", "--out",
        b.dir / "run", "--planner", ok, "--frontend", ok, "--no-progress", "--no-cache"], (0, 2, 3), bound_s=40))
    if slow:
        cases.append(cli_case("ask", "ten-hour flac, model front end", lambda b: [
            "ask", b.root / "ten_hours.flac", "Is there a tone?", *choices, "--planner", ok, "--frontend", ok,
            "--trace-dir", b.dir / "t", "--no-cache", "--time-budget", "60"], (0, 2, 3), bound_s=120, slow=True,
            roots=False))

    # ---- judges
    for name in ["missing", "directory", "fifo", "dev_zero", "long_path", "not_audio"]:
        cases.append(cli_case("judge edit", name, lambda b, n=name: [
            "judge", "edit", b.root / "tone.wav", file_inputs(b)[n], "-i", "make it louder", "--trace-dir",
            b.dir / "t"], REFUSE, bound_s=20, roots=False))
        cases.append(cli_case("judge rubric", name, lambda b, n=name: [
            "judge", "rubric", file_inputs(b)[n], "a loud tone", "--trace-dir", b.dir / "t"], REFUSE, bound_s=20,
            roots=False))
        cases.append(cli_case("judge aura", name, lambda b, n=name: [
            "judge", "aura", "-q", "What is it?", "-r", "a tone", "-a", "a tone", "--audio", file_inputs(b)[n],
            "--trace-dir", b.dir / "t"], REFUSE, bound_s=20, roots=False))
    cases.append(cli_case("judge edit", "ten-hour flac", lambda b: [
        "judge", "edit", b.root / "tone.wav", b.root / "ten_hours.flac", "-i", "x", "--trace-dir", b.dir / "t"],
        REFUSE, bound_s=20, roots=False))
    for which in ("dead", "hang", "drip"):
        cases.append(cli_case("judge aura", f"{which} llm", lambda b, w=which: [
            "judge", "aura", "-q", "What is it?", "-r", "a tone", "-a", "a steady tone", "--llm", sh.spec(w),
            "--timeout", "3", "--retries", "0", "--trace-dir", b.dir / "t"], (0, 1, 2, 3), bound_s=20,
            slow=which != "dead", roots=False))
    cases.append(cli_case("judge aura", "URL credentials", lambda b: [
        "judge", "aura", "-q", "What is it?", "-r", "a tone", "-a", "a steady tone", "--llm", sh.cred_spec(),
        "--timeout", "3", "--retries", "0", "--trace-dir", b.dir / "t"], (0, 1, 2, 3), bound_s=20, roots=False))
    cases.append(cli_case("judge aura", "escapes in texts", lambda b: [
        "judge", "aura", "-q", f"What? {ESC_TEXT}", "-r", f"a tone {ESC_TEXT}", "-a", f"tone {ESC_TEXT}", "--llm",
        ok, "--timeout", "10", "--trace-dir", b.dir / "t"], (0, 1, 2), bound_s=30, roots=False))

    # ---- trace commands on every hostile thing behind a trace path
    def trace_cmd(cmd: str, b: Sandbox, p: Any) -> list[Any]:
        return {"show": ["trace", "show", p, "-v"], "audit": ["trace", "audit", p],
                "stats": ["trace", "stats", p], "diff": ["trace", "diff", b.trace, p],
                "validate": ["trace", "validate", p], "replay": ["trace", "replay", p, "--trace-dir", b.dir / "r"],
                "html": ["trace", "html", p, "-o", b.dir / "site"],
                "export": ["trace", "export", p, "--otlp", f"http://127.0.0.1:{sh.dead_port}"]}[cmd]

    commands = ["show", "audit", "stats", "diff", "validate", "replay", "html", "export"]
    for cmd in commands:
        for name in ["missing", "directory_empty", "fifo", "dev_zero", "long_path", "deep", "bigint", "non_utf8",
                     "esc_name", "huge_sparse"]:
            cases.append(cli_case(f"trace {cmd}", name, lambda b, c=cmd, n=name: trace_cmd(c, b, trace_inputs(b)[n]),
                                  (1, 2), bound_s=20, roots=False))
        cases.append(cli_case(f"trace {cmd}", "escapes in fields", lambda b, c=cmd: trace_cmd(c, b, b.trace_esc),
                              (0, 1, 2, 3), bound_s=40, roots=False,
                              check=_page_clean("site/*.html") if cmd == "html" else None))
        cases.append(cli_case(f"trace {cmd}", "folder: pipe, /dev/zero, link out", lambda b, c=cmd: trace_cmd(
            c, b, b.dirty if c not in ("show", "diff", "replay") else b.dirty / "good.json"), (0, 1, 2, 3),
            bound_s=40))
        if cmd in ("audit", "replay", "html"):
            cases.append(cli_case(f"trace {cmd}", "artifact ../outside", lambda b, c=cmd: trace_cmd(
                c, b, b.trace_out_rel), (0, 1, 2, 3), bound_s=40))
    for kind in ("fifo", "zero", "long"):
        for cmd in ("show", "audit", "html", "replay", "validate"):
            cases.append(cli_case(f"trace {cmd}", f"clip in the run folder is {kind}", lambda b, c=cmd, k=kind: trace_cmd(
                c, b, b.art_traces[k]), (0, 1, 2, 3), bound_s=60, slow=kind == "long", roots=False,
                check=_page_clean("site/*.html") if cmd == "html" else None))
    cases.append(cli_case("trace export", "URL credentials", lambda b: [
        "trace", "export", b.trace, "--otlp", f"http://probeuser:{URL_PASS}@127.0.0.1:{sh.dead_port}"], (1, 2),
        bound_s=30, roots=False))
    for which in ("hang", "drip"):
        cases.append(cli_case("trace export", f"{which} collector", lambda b, w=which: [
            "trace", "export", b.trace, "--otlp", getattr(sh, w).url.removesuffix("/v1")], (0, 1, 2), bound_s=30,
            slow=True, roots=False))
    cases.append(cli_case("trace html", "read-only out", lambda b: ["trace", "html", b.trace, "-o", b.ro / "site"],
                          (4,), bound_s=30, roots=False))
    cases.append(cli_case("trace replay", "read-only trace dir", lambda b: [
        "trace", "replay", b.trace, "--trace-dir", b.ro / "r"], (3, 4), bound_s=60, roots=False))
    cases.append(cli_case("trace html", "ten-hour clip", lambda b: [
        "trace", "html", write_trace(trace_state(b.root / "ten_hours.flac", "run_long"), b.dir / "long.json"),
        "-o", b.dir / "site"], (0,), bound_s=120, slow=True, roots=False, check=_files("site/*.html")))

    # ---- bench run: the items file and its rows
    def bench(b: Sandbox, items: Any, *more: Any) -> list[Any]:
        return ["bench", "run", "--items", items, "--audio-dir", b.root, "--out", b.dir / "run", "--planner", ok,
                "--frontend", ok, "--no-progress", "--no-cache", *more]

    for name, path in [("missing", lambda b: b.dir / "none.jsonl"), ("directory", lambda b: b.root / "folder.wav"),
                       ("fifo", lambda b: b.fifo_json), ("dev_zero", lambda b: b.zero_json),
                       ("long_path", lambda b: "i/" * 40_000 + "x.jsonl"), ("huge_sparse", lambda b: b.huge_json),
                       ("long name part", lambda b: "i" * 300 + ".jsonl")]:
        cases.append(cli_case("bench run", f"items {name}", lambda b, p=path: bench(b, p(b)), REFUSE, bound_s=20))
    for task in ("mmar", "msu", "synthetic"):
        for name, src in [("fifo", lambda b: b.fifo_json), ("dev_zero", lambda b: b.zero_json),
                          ("deep", lambda b: b.deep), ("non_utf8", lambda b: b.nonutf8),
                          ("empty directory", lambda b: b.root / "folder.wav"), ("huge_sparse", lambda b: b.huge_json)]:
            cases.append(cli_case("bench run", f"--task {task} source {name}", lambda b, t=task, f=src: [
                "bench", "run", "--task", t, "--source", f(b), "--audio-dir", b.root, "--out", b.dir / "run",
                "--planner", ok, "--frontend", ok, "--no-progress", "--no-cache"], (1, 2, 3), bound_s=30))
    cases.append(cli_case("bench run", "--task msu source: a folder of a pipe, /dev/zero, a link out", lambda b: [
        "bench", "run", "--task", "msu", "--source", b.dirty, "--audio-dir", b.root, "--out", b.dir / "run",
        "--planner", ok, "--frontend", ok, "--no-progress", "--no-cache"], (2,), bound_s=30))
    rows_cases: list[tuple[str, Callable[[Sandbox], Path]]] = [
        ("rows: traversal, absolute, link out, pipe, /dev/zero, dir", lambda b: b.items([
            _row("good", "tone.wav"), _row("trav", "../outside/secret.wav"), _row("abs", str(b.outside / "secret.wav")),
            _row("link", "link_out.wav"), _row("pipe", "pipe.wav"), _row("zero", "zero.wav"),
            _row("dir", "folder.wav"), _row("long", "a/" * 3000 + "tone.wav"), _row("dirlink", "dirlink/secret.wav")])),
        ("rows: deep, 5001 digits, non-UTF-8, escapes", lambda b: b.items(
            [_row("good", "tone.wav"), _row(f"esc{ESC_TEXT}", "tone2.wav", f"Is there a tone? {ESC_TEXT}")],
            raw=b"[" * 100_000 + b"]" * 100_000 + b"\n" + b'{"id": "big", "n": ' + b"9" * 5001 + b"}\n"
            + b'{"id": "bytes\xff\xfe", "question": "q", "choices": ["a", "b"], "audio": "tone.wav"}\n')),
    ]
    for name, items in rows_cases:
        cases.append(cli_case("bench run", name, lambda b, it=items: bench(b, it(b)), (0,), bound_s=90,
                              check=_files("run/results.jsonl")))
    cases.append(cli_case("bench run", "read-only out", lambda b: [
        "bench", "run", "--items", b.items([_row("good", "tone.wav")]), "--audio-dir", b.root, "--out", b.ro / "run",
        "--planner", ok, "--frontend", ok, "--no-progress"], (4,), bound_s=60))
    cases.append(cli_case("bench run", "ten-hour row --max-duration 60", lambda b: bench(
        b, b.items([_row("long", "ten_hours.flac")]), "--max-duration", "60"), (0,), bound_s=60,
        check=_files("run/results.jsonl")))

    # ---- bench report
    def run_dir(b: Sandbox, results: bytes | None = None, link: str | None = None) -> Path:
        d = b.dir / "runx"
        d.mkdir(exist_ok=True)
        if link == "fifo":
            os.mkfifo(d / "results.jsonl")
        elif link:
            os.symlink(link, d / "results.jsonl")
        else:
            (d / "results.jsonl").write_bytes(results or b"")
        return d

    good_rows = b"".join(json.dumps({"id": f"q{i}", "status": "answered", "prediction": "a", "correct": i % 2 == 0,
                                     "benchmark": "mmar", "wall_time_s": 1.0, "tool_calls": i,
                                     "metadata": {"category": f"Sound{ESC_TEXT}{MARKUP}"}}).encode() + b"\n"
                         for i in range(4))
    for name, mk in [("missing dir", lambda b: b.dir / "none"), ("fifo", lambda b: run_dir(b, link="fifo")),
                     ("dev_zero", lambda b: run_dir(b, link="/dev/zero")),
                     ("not rows (a trace, linked)", lambda b: run_dir(b, link=str(b.outside / "secret.json")))]:
        cases.append(cli_case("bench report", name, lambda b, m=mk: ["bench", "report", m(b), "--no-plots"],
                              (0, 1, 2) if name.startswith("not rows") else (1, 2), bound_s=20, roots=False))
    cases.append(cli_case("bench report", "deep, 5001 digits, non-UTF-8, escapes", lambda b: [
        "bench", "report", run_dir(b, good_rows + b"[" * 100_000 + b"]" * 100_000 + b"\n" + b'{"id": "x", "n": '
                                   + b"9" * 5001 + b"}\n" + b'{"id": "\xff\xfe"}\n'), "--no-plots"], (0, 1, 2),
        bound_s=30, roots=False))
    cases.append(cli_case("bench report", "read-only run dir", lambda b: [
        "bench", "report", _ro_run(b, good_rows), "--no-plots"], (4,), bound_s=30, roots=False))
    cases.append(cli_case("bench report", "--compare fifo", lambda b: [
        "bench", "report", run_dir(b, good_rows), "--no-plots", "--compare", _fifo_run(b)], (2,), bound_s=20,
        roots=False))

    # ---- models
    cases.append(cli_case("models", "list", lambda b: ["models", "list"], (0,), bound_s=30, roots=False))
    cases.append(cli_case("models", "list --json, caches behind a pipe and /dev/zero", lambda b: [
        "models", "list", "--json"], (0,), bound_s=30, roots=False,
        env=lambda b: {"XDG_CACHE_HOME": str(b.root / "pipe.wav"), "HF_HOME": str(b.root / "zero.wav"),
                       "AUDIOMIND_MODEL_CACHE": str(b.root / "pipe.wav")}))

    cases += serve_cases(sh)
    cases += mcp_cases(sh)
    return cases


MOUNTS: list[Path] = []


def _ro_run(b: Sandbox, rows: bytes) -> Path:
    """A run folder whose results.jsonl is readable and which cannot be written: bound read-only onto itself
    (root), else made read-only by its mode (which root ignores)."""
    d = b.dir / "ro_run"
    d.mkdir()
    (d / "results.jsonl").write_bytes(rows)
    if subprocess.run(["mount", "--bind", "-o", "ro", str(d), str(d)], capture_output=True,
                      check=False).returncode == 0:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(d)], capture_output=True, check=False)
        MOUNTS.append(d)
    else:
        os.chmod(d, 0o555)
    return d


def _fifo_run(b: Sandbox) -> Path:
    d = b.dir / "fifo_run"
    d.mkdir()
    os.mkfifo(d / "results.jsonl")
    return d


# ---------------------------------------------------------------- serve cases (one shared server)

Q = {"question": "Is there a tone?", "choices": ["yes", "no"]}


def http_case(target: str, name: str, build: Callable[[Sandbox], Spec], expect: tuple[int, ...], **kw: Any) -> Case:
    return Case("serve", target, name, build, expect, **kw)


def serve_cases(sh: Shared) -> list[Case]:
    cases: list[Case] = []

    def ask(path: str, **more: Any) -> Callable[[Sandbox], Spec]:
        return lambda b: Spec(route="/v1/ask", data={**Q, "path": path, **more})

    paths = {"missing": ("nothing.wav", (404, 400)), "directory": ("folder.wav", (400,)), "fifo": ("pipe.wav", (400,)),
             "dev_zero": ("zero.wav", (400, 403)), "link out": ("link_out.wav", (403, 400)),
             "traversal": ("../outside/secret.wav", (403, 400)), "absolute out": ("{outside}/secret.wav", (403, 400)),
             "absolute /etc/passwd": ("/etc/passwd", (403, 400)), "long_path": ("a/" * 40_000 + "tone.wav", (400,)),
             "NUL": ("tone\x00.wav", (400,)), "escapes": (f"x{ESC_TEXT}.wav", (400, 404)),
             "through a folder link out": ("dirlink/secret.wav", (403, 400)),
             "ten-hour flac": ("ten_hours.flac", (400,)), "not audio": ("bytes.wav", (400,))}
    for name, (p, codes) in paths.items():
        def fix(b: Sandbox, p: str = p) -> str:
            return p.replace("{outside}", str(b.outside))
        cases.append(http_case("/v1/ask", f"path {name}", lambda b, f=fix: Spec(route="/v1/ask",
                                                                                  data={**Q, "path": f(b)}), codes))
        if name in ("missing", "fifo", "link out", "traversal", "long_path", "ten-hour flac"):
            cases.append(http_case("/v1/judge/edit", f"path {name}", lambda b, f=fix: Spec(
                route="/v1/judge/edit", data={"original_path": "tone.wav", "edited_path": f(b),
                                              "instruction": "louder"}), codes))
            cases.append(http_case("/v1/judge/rubric", f"path {name}", lambda b, f=fix: Spec(
                route="/v1/judge/rubric", data={"path": f(b), "instruction": "a loud tone"}), codes))
            cases.append(http_case("/v1/judge/aura", f"path {name}", lambda b, f=fix: Spec(
                route="/v1/judge/aura", data={"path": f(b), "question": "q?", "reference": "a", "response": "a"}),
                codes))
    cases.append(http_case("/v1/ask", "ok", ask("tone.wav"), (200,)))
    cases.append(http_case("/v1/ask", "escapes in question", ask("tone.wav", question=f"tone? {ESC_TEXT}"), (400,)))
    cases.append(http_case("/v1/ask", "non-UTF-8 form body", lambda b: Spec(
        route="/v1/ask", raw=b"question=Is+there+\xff\xfe+a+tone%3F&choices=yes&choices=no&path=tone.wav",
        headers={"content-type": "application/x-www-form-urlencoded"}), (200, 400, 422)))
    cases.append(http_case("/v1/ask", "huge question", ask("tone.wav", question="why " * 500_000), (400, 413)))
    cases.append(http_case("/v1/ask", "upload: text as audio", lambda b: Spec(
        route="/v1/ask", data=Q, files={"audio": ("notes.wav", b"not audio\n" * 100, "audio/wav")}), (400,)))
    cases.append(http_case("/v1/ask", "upload: empty", lambda b: Spec(
        route="/v1/ask", data=Q, files={"audio": ("e.wav", b"", "audio/wav")}), (400,)))
    cases.append(http_case("/v1/ask", "upload: ten-hour flac", lambda b: Spec(
        route="/v1/ask", data=Q, files={"audio": ("night.flac", (b.root / "ten_hours.flac").read_bytes(),
                                                  "audio/flac")}), (400,)))
    cases.append(http_case("/v1/ask", "upload: name with escapes and traversal", lambda b: Spec(
        route="/v1/ask", data=Q, files={"audio": (f"../../x{ESC_TEXT}.wav", (b.root / "tone.wav").read_bytes(),
                                                  "audio/wav")}), (200,)))
    for which in ("dead", "hang", "drip"):
        cases.append(http_case("/v1/ask", f"{which} planner", ask("tone.wav", planner=sh.spec(which),
                                                                   frontend=sh.spec(which)), (502, 200, 504),
                               bound_s=30, slow=which != "dead"))
    cases.append(http_case("/v1/ask", "URL credentials planner", ask("tone.wav", planner=sh.cred_spec(),
                                                                     frontend=sh.cred_spec()), (502, 200)))
    cases.append(http_case("/v1/ask", "planner not allowed", ask("tone.wav", planner="openai:x@http://127.0.0.1:9/v1"),
                           (400, 403)))
    cases.append(http_case("/v1/judge/aura", "dead llm", lambda b: Spec(
        route="/v1/judge/aura", data={"question": "q?", "reference": "a", "response": "a", "llm": sh.spec("dead")}),
        (400, 403, 502)))
    cases.append(http_case("/v1/ask", "upload: 10,000-character file name", lambda b: Spec(
        route="/v1/ask", data=Q, files={"audio": ("n" * 10_000 + ".wav", (b.root / "tone.wav").read_bytes(),
                                                  "audio/wav")}), (200, 400)))
    cases.append(http_case("/v1/ask", "5,000 choices", ask("tone.wav", choices=[f"c{i}" for i in range(5000)]),
                           (400, 413, 422)))
    cases.append(http_case("/v1/ask", "choices with escapes", ask("tone.wav", choices=[f"yes{ESC_TEXT}", "no"]),
                           (200, 400)))
    cases.append(http_case("/v1/ask", "item_id with escapes and traversal", ask("tone.wav",
                                                                               item_id=f"../../x{ESC_TEXT}"),
                           (200, 400)))
    cases.append(http_case("/v1/judge/rubric", "5001-digit max_items, threshold 1e999", lambda b: Spec(
        route="/v1/judge/rubric", data={"path": "tone.wav", "instruction": "a tone", "max_items": "9" * 5001,
                                        "threshold": "1e999"}), (400, 422)))
    cases.append(http_case("/v1/judge/nope", "unknown judge", lambda b: Spec(route="/v1/judge/nope%1B%5B2J", data={"x": "y"}),
                           (404,)))
    for name, tid in [("missing", "run_nothing"), ("traversal", "../../outside/secret"), ("encoded traversal",
                      "..%2F..%2Foutside%2Fsecret"), ("long", "x" * 20_000), ("NUL", "a%00b"),
                      ("escapes", "run%1B%5B2J"), ("fifo", "pipe"), ("dev_zero", "zero"), ("link out", "link_out"),
                      ("deep", "deep"), ("bigint", "bigint"), ("non_utf8", "nonutf8"), ("good", "run_good")]:
        good = name == "good"
        codes = (200,) if good else (400, 404, 422)
        cases.append(http_case("/v1/traces/{id}", name, lambda b, t=tid: Spec(method="GET", route=f"/v1/traces/{t}"),
                               codes))
        cases.append(Case("viewer", "/v1/traces/{id}/html", name, lambda b, t=tid: Spec(
            method="GET", route=f"/v1/traces/{t}/html", check=_body_clean), codes))
    cases.append(Case("viewer", "/v1/traces/{id}/html", "escapes and markup", lambda b: Spec(
        method="GET", route="/v1/traces/run_esc/html", check=_body_clean), (200,)))
    for kind in ("fifo", "zero", "long"):
        cases.append(Case("viewer", "/v1/traces/{id}/html", f"clip in the root is {kind}", lambda b, k=kind: Spec(
            method="GET", route=f"/v1/traces/run_{k}_art/html", check=_body_clean), (200, 422), bound_s=60))
    cases.append(Case("viewer", "/v1/traces/{id}/html", "artifact outside the roots", lambda b: Spec(
        method="GET", route="/v1/traces/run_out/html", check=_body_clean), (200,)))
    for route in ("/healthz", "/metrics", "/openapi.json", "/docs"):
        cases.append(http_case(route, "GET", lambda b, r=route: Spec(method="GET", route=r), (200,)))
    cases.append(http_case("/v1/traces/{id}", "escapes and markup", lambda b: Spec(method="GET",
                                                                                  route="/v1/traces/run_esc"), (200,)))
    return cases


# ---------------------------------------------------------------- mcp cases (a fresh stdio server each)


def _call(tool: str, args: Any) -> dict[str, Any]:
    return {"method": "tools/call", "params": {"name": tool, "arguments": args}}


def mcp_cases(sh: Shared) -> list[Case]:
    cases: list[Case] = []

    def mc(name: str, target: str, msgs: Callable[[Sandbox], list[Any]], expect: tuple[int, ...] = (1,),
           **kw: Any) -> None:
        extra = kw.pop("mcp_args", [])
        cases.append(Case("mcp", target, name, lambda b: Spec(messages=msgs(b), mcp_args=extra), expect,
                          bound_s=kw.pop("bound_s", 40), **kw))

    hostile = {"missing": "nothing.wav", "directory": "folder.wav", "fifo": "pipe.wav", "dev_zero": "zero.wav",
               "link out": "link_out.wav", "traversal": "../outside/secret.wav", "absolute out": "{outside}/secret.wav",
               "long_path": "a/" * 40_000 + "tone.wav", "escapes": f"x{ESC_TEXT}.wav", "not audio": "bytes.wav",
               "ten-hour flac": "ten_hours.flac", "through a folder link out": "dirlink/secret.wav"}
    for name, p in hostile.items():
        def arg(b: Sandbox, p: str = p) -> str:
            return p.replace("{outside}", str(b.outside))
        mc(f"audio {name}", "loudness", lambda b, a=arg: [_call("loudness", {"audio": a(b)})])
        if name in ("link out", "traversal", "fifo", "ten-hour flac"):
            mc(f"audio {name}", "crop", lambda b, a=arg: [_call("crop", {"audio": a(b), "start_s": 0.1, "end_s": 0.5})])
            mc(f"audio {name}", "ask", lambda b, a=arg: [_call("ask", {"audio": a(b), "question": "Is there a tone?",
                                                                       "choices": ["yes", "no"]})],
               mcp_args=["--planner", sh.spec("ok"), "--frontend", sh.spec("ok")])
    mc("ok", "loudness", lambda b: [_call("loudness", {"audio": "tone.wav"})], (0,))
    mc("5001-digit int argument", "crop", lambda b: [{"raw": b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
                                                            b'"params":{"name":"crop","arguments":{"audio":"tone.wav",'
                                                            b'"start_s":' + b"9" * 5001 + b"}}}"}], (1, 2))
    mc("deeply nested argument", "crop", lambda b: [{"raw": b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
                                                           b'"params":{"name":"crop","arguments":{"audio":'
                                                           + b"[" * 50_000 + b"]" * 50_000 + b"}}}"}], (1, 2))
    mc("non-UTF-8 line", "protocol", lambda b: [{"raw": b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":'
                                                        b'{"name":"loudness","arguments":{"audio":"\xff\xfe.wav"}}}'}],
       (1, 2))
    mc("escapes in arguments", "crop", lambda b: [_call("crop", {"audio": "tone.wav", "start_s": f"0{ESC_TEXT}"})])
    mc("unknown tool", "protocol", lambda b: [_call(f"nope{ESC_TEXT}", {})])
    mc("resource traversal", "resources/read", lambda b: [{"method": "resources/read",
                                                           "params": {"uri": "file:///../../outside/secret.wav"}}],
       (1, 2))
    mc("dead planner", "ask", lambda b: [_call("ask", {"audio": "tone.wav", "question": "Is there a tone?"})], (0, 1),
       mcp_args=["--planner", sh.spec("dead"), "--frontend", sh.spec("dead")])
    mc("URL credentials planner", "ask", lambda b: [_call("ask", {"audio": "tone.wav", "question": "q?"})], (0, 1),
       mcp_args=["--planner", sh.cred_spec(), "--frontend", sh.cred_spec()])
    mc("--tools-dir manifest fifo", "startup", lambda b: [_call("loudness", {"audio": "tone.wav"})], (0, 1, 2),
       mcp_args=["--tools-dir", "{tools_fifo}"])
    mc("--root missing", "startup", lambda b: [_call("loudness", {"audio": "tone.wav"})], (1, 2),
       mcp_args=["--root", "{missing}"])
    mc("read-only runs dir", "startup", lambda b: [_call("loudness", {"audio": "tone.wav"})], (1, 2),
       mcp_args=["--runs-dir", str(sh.ro / "runs")])
    return cases


# ---------------------------------------------------------------- running


AS_LIMIT = 8 * 1024 ** 3
"""Each case's address space is capped (prlimit), so a case that reads /dev/zero into memory fails with a
MemoryError (classified) instead of taking the shared machine's memory (one took 15 GB before the cap)."""
CAPPED = ["prlimit", f"--as={AS_LIMIT}", "--"] if shutil.which("prlimit") else []


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "PYTHONWARNINGS")}
    env.update({"OPENAI_API_KEY": SECRET, "GEMINI_API_KEY": SECRET, "GOOGLE_API_KEY": SECRET,
                "PYTHONPATH": str(REPO), "COLUMNS": "160", "NO_COLOR": "1", "AUDIOMIND_PROBE": "1"})
    env.update(extra or {})
    return env


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _rss(path: Path) -> int | None:
    try:
        for line in path.read_text(errors="replace").splitlines():
            if "Maximum resident set size" in line:
                return int(line.rsplit(":", 1)[1])
    except (OSError, ValueError):
        return None
    return None


def run_cli(case: Case, box: Sandbox) -> Result:
    spec = case.build(box)
    rss = box.dir / ".rss"
    argv = [*CAPPED, "/usr/bin/time", "-v", "-o", str(rss), PY, "-m", "audiomind",
            *[a if isinstance(a, bytes) else str(a) for a in spec.args]]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=box.dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(spec.env), start_new_session=True)
    killed = False
    try:
        out, err = proc.communicate(timeout=case.bound_s + GRACE_S)
    except subprocess.TimeoutExpired:
        killed = True
        _kill(proc)
        out, err = proc.communicate(timeout=30)
    wall = time.monotonic() - t0
    time.sleep(0.05)
    r = Result(case, None if killed else proc.returncode, out.decode("utf-8", "surrogateescape"),
               err.decode("utf-8", "surrogateescape"), wall, _rss(rss), killed, WATCH.opened(box.outside), box)
    r.extra["check"] = spec.check
    return r


class Served:
    """`audiomind serve` (the real command line) on a loopback port, a root, the model servers allowed."""

    def __init__(self, sh: Shared, base: Path) -> None:
        self.box = Sandbox(base, "serve", sh)
        traces = self.box.dir / "traces"
        traces.mkdir()
        for src, tid in [(self.box.trace, "run_good"), (self.box.trace_esc, "run_esc"), (self.box.trace_out, "run_out"),
                         (self.box.deep, "deep"), (self.box.bigint, "bigint"), (self.box.nonutf8, "nonutf8")]:
            shutil.copy(src, traces / f"{tid}.json")
        for kind, f in self.box.art_traces.items():
            shutil.copy(f, traces / f"run_{kind}_art.json")
        os.mkfifo(traces / "pipe.json")
        os.symlink("/dev/zero", traces / "zero.json")
        os.symlink(self.box.outside / "secret.json", traces / "link_out.json")
        self.port = dead_port()
        self.rss = self.box.dir / ".rss"
        allow = []
        for w in ("dead", "hang", "drip"):
            allow += ["--allow-planner", sh.spec(w), "--allow-frontend", sh.spec(w)]
        allow += ["--allow-planner", sh.cred_spec(), "--allow-frontend", sh.cred_spec()]
        argv = [*CAPPED, "/usr/bin/time", "-v", "-o", str(self.rss), PY, "-m", "audiomind", "serve", "--port", str(self.port),
                "--root", str(self.box.root), "--planner", sh.spec("ok"), "--frontend", sh.spec("ok"), "--trace-dir",
                str(traces), "--no-warmup", "--timeout", "3", "--retries", "0", "--time-budget", "12",
                "--max-duration", "600", "--max-upload-mb", "4", *allow]
        self.log = open(self.box.dir / "serve.log", "w+b")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(argv, cwd=self.box.dir, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=_env(), start_new_session=True)
        import httpx

        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    break
            if self.proc.poll() is not None:
                raise RuntimeError("serve did not start:\n" + self.log_text(0))
            time.sleep(0.2)
        self.lock = threading.Lock()

    def log_text(self, start: int) -> str:
        if not self.log.closed:
            self.log.flush()
        with open(self.log.name, "rb") as f:
            f.seek(start)
            return f.read().decode("utf-8", "surrogateescape")

    def run(self, case: Case) -> Result:
        import httpx

        spec = case.build(self.box)
        with self.lock:
            start = os.path.getsize(self.log.name)
            t0 = time.monotonic()
            killed, code, body = False, None, ""
            try:
                with httpx.Client(base_url=self.url, timeout=case.bound_s + GRACE_S) as c:
                    if spec.method == "GET":
                        r = c.get(spec.route)
                    elif spec.raw is not None:
                        r = c.post(spec.route, content=spec.raw, headers=spec.headers)
                    else:
                        r = c.post(spec.route, data=spec.data, files=spec.files)
                code, body = r.status_code, r.text
            except httpx.TimeoutException:
                killed = True
            except httpx.HTTPError as exc:
                body = f"(client error: {type(exc).__name__}: {exc})"
            wall = time.monotonic() - t0
            time.sleep(0.1)
            log = self.log_text(start)
        if self.proc.poll() is not None:
            body += f"\n(serve exited with {self.proc.returncode})"
        return Result(case, code, body, log, wall, None, killed, WATCH.opened(self.box.outside), self.box,
                      extra={"check": spec.check, "given": _strings([spec.data, spec.route])})

    def close(self) -> int | None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            _kill(self.proc)
            self.proc.wait(10)
        self.log.close()
        return _rss(self.rss)


def run_mcp(case: Case, box: Sandbox) -> Result:
    spec = case.build(box)
    rss = box.dir / ".rss"
    runs = box.dir / "runs"
    given = [a.replace("{tools_fifo}", str(box.tools_fifo)).replace("{missing}", str(box.dir / "none"))
             for a in spec.mcp_args]
    args = ([] if "--root" in given else ["--root", str(box.root)]) + given
    if "--runs-dir" not in given:
        args += ["--runs-dir", str(runs)]
    argv = [*CAPPED, "/usr/bin/time", "-v", "-o", str(rss), PY, "-m", "audiomind", "mcp", *args]
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, cwd=box.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(), start_new_session=True)
    out_lines: list[bytes] = []
    err_chunks: list[bytes] = []

    def pump(stream: Any, sink: list[bytes], lines: bool) -> None:
        sink.extend(iter(stream.readline if lines else lambda: stream.read(4096), b""))

    threads = [threading.Thread(target=pump, args=(proc.stdout, out_lines, True), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err_chunks, False), daemon=True)]
    for th in threads:
        th.start()
    deadline = t0 + case.bound_s + GRACE_S

    def send(obj: Any) -> None:
        assert proc.stdin is not None
        data = obj["raw"] if isinstance(obj, dict) and "raw" in obj else json.dumps(obj).encode()
        with contextlib.suppress(BrokenPipeError, OSError):
            proc.stdin.write(data + b"\n")
            proc.stdin.flush()

    def wait_for(rid: int) -> dict[str, Any] | None:
        while time.monotonic() < deadline:
            for line in out_lines:
                with contextlib.suppress(ValueError):
                    msg = json.loads(line)
                    if isinstance(msg, dict) and msg.get("id") == rid:
                        return msg
            if proc.poll() is not None and not any(th.is_alive() for th in threads[:1]):
                return None
            time.sleep(0.05)
        return None

    killed = False
    replies: list[Any] = []
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
    init = wait_for(1)
    if init is not None:
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for k, m in enumerate(spec.messages):
            rid = 7 if "raw" in m else 10 + k
            send(m if "raw" in m else {"jsonrpc": "2.0", "id": rid, **m})
            replies.append(wait_for(rid))
    if time.monotonic() >= deadline:
        killed = True
    with contextlib.suppress(OSError):
        assert proc.stdin is not None
        proc.stdin.close()
    try:
        proc.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        killed = True
        _kill(proc)
        proc.wait(10)
    for th in threads:
        th.join(5)
    wall = time.monotonic() - t0
    # the outcome: 0 = a result without isError, 1 = a tool error / JSON-RPC error, 2 = no reply (closed/died)
    code: int | None
    last = replies[-1] if replies else None
    if last is None:
        code = 2
    elif "error" in last:
        code = 1
    else:
        code = 1 if (last.get("result") or {}).get("isError") else 0
    if killed:
        code = None
    out = b"".join(out_lines).decode("utf-8", "surrogateescape")
    err = b"".join(err_chunks).decode("utf-8", "surrogateescape")
    return Result(case, code, out, err, wall, _rss(rss), killed, WATCH.opened(box.outside), box,
                  extra={"check": spec.check, "reply": json.dumps(last)[:600] if last else None,
                         "given": _strings(spec.messages)})


# ---------------------------------------------------------------- classification


def _strings(value: Any) -> list[str]:
    """Every string a client sent (what a response may echo back without disclosing anything)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bytes):
        return [value.decode("utf-8", "replace")]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def classify(r: Result, sandbox_base: Path) -> None:
    text = r.out + "\n" + r.err
    f = r.failures
    if "Traceback (most recent call last)" in text:
        at = text.index("Traceback (most recent call last)")
        f["traceback"] = text[at:at + 4000].strip().splitlines()[-1][:200]
    needles = [SECRET, URL_PASS]
    if r.case.surface in ("serve", "viewer", "mcp"):
        needles += [str(REPO), HOME + "/", str(sandbox_base)]
    if r.case.surface == "mcp":
        text_public = r.out  # what the client reads (stderr is the operator's log)
    elif r.case.surface in ("serve", "viewer"):
        text_public = r.out  # the response (the log is the operator's)
    else:
        text_public = text
    for given in sorted(r.extra.get("given", []), key=len, reverse=True):
        if len(given) >= 8:  # the client's own strings, echoed (JSON-escaped too), are not disclosed
            text_public = text_public.replace(given, "<given>").replace(json.dumps(given)[1:-1], "<given>")
    hits = [n for n in needles if n in text_public]
    if SECRET in text or URL_PASS in text:
        hits += [n for n in (SECRET, URL_PASS) if n in text and n not in hits]
    if hits:
        n = hits[0]
        at = (text_public if n in text_public else text).index(n)
        src = text_public if n in text_public else text
        f["disclosure"] = f"{n[:40]!r} in: {src[max(0, at - 80):at + 80]!r}"
    if r.killed:
        f["unbounded"] = f"still running after {r.case.bound_s + GRACE_S:.0f} s (killed)"
    elif r.wall_s > r.case.bound_s + GRACE_S:
        f["unbounded"] = f"{r.wall_s:.1f} s > {r.case.bound_s + GRACE_S:.0f} s"
    terminal = r.err if r.case.surface in ("serve", "viewer", "mcp") else text
    found = sorted({name for ch, name in ESCAPES.items() if ch in terminal})
    if found:
        ch = next(c for c in ESCAPES if c in terminal)
        at = terminal.index(ch)
        f["raw_escape"] = f"{', '.join(found)}: {terminal[max(0, at - 60):at + 60]!r}"
    if r.opened and r.case.roots:
        f["outside"] = f"opened outside the roots: {r.opened}"
    if r.rss_kb and r.rss_kb > MEMORY_LIMIT_KB:
        f["memory"] = f"max RSS {r.rss_kb / 1024:.0f} MB"
    if not r.killed and r.code not in r.case.expect:
        f["exit"] = f"got {r.code}, expected {'/'.join(map(str, r.case.expect))}"
    check = r.extra.get("check")
    if check is not None and not r.killed:
        for problem in check(r):
            cls = "injection" if problem.startswith("injection") else "lost"
            f.setdefault(cls, problem)


def selftest() -> None:
    """Each failure class fires on a made-up outcome that has it, and none on a clean one (the classifier is
    checked before it is trusted)."""
    def fake(surface: str = "cli", **kw: Any) -> Result:
        case = Case(surface, "t", "n", lambda b: Spec(), kw.pop("expect", (2,)), bound_s=1.0)
        r = Result(case, kw.pop("code", 2), kw.pop("out", ""), kw.pop("err", "error: refused"), kw.pop("wall", 0.1),
                   kw.pop("rss", 1000), kw.pop("killed", False), kw.pop("opened", []), extra=kw)
        classify(r, Path("/tmp/amprobe-selftest"))
        return r

    assert fake().failures == {}
    assert "traceback" in fake(err="Traceback (most recent call last):\n  x\nValueError: y").failures
    assert "disclosure" in fake(err=f"error: key {SECRET}").failures
    assert "disclosure" in fake("serve", out=f"{{'detail': '{REPO}/x'}}", code=400, expect=(400,)).failures
    assert "disclosure" not in fake("serve", out="{'detail': '/tmp/x/y'}", code=400, expect=(400,),
                                    given=["/tmp/x/y"]).failures
    assert "unbounded" in fake(killed=True, code=None).failures and "unbounded" in fake(wall=12.0).failures
    for ch in ("\x1b[2J", "\x9b31m", "\x90", "\x9d", "\udc9b"):
        assert "raw_escape" in fake(err=f"error: {ch}").failures, repr(ch)
    assert "raw_escape" not in fake(err="error: \u2190 \u65e5 \\x1b (shown, not raw)").failures
    assert "outside" in fake(opened=["secret.wav"]).failures
    assert "memory" in fake(rss=MEMORY_LIMIT_KB + 1).failures
    assert "exit" in fake(code=0).failures
    assert "lost" in fake(check=lambda r: ["missing 'Answer'"]).failures
    assert "injection" in fake(check=_body_clean, out="<p><script>probe_xss()</script>").failures
    assert "injection" not in fake(check=_body_clean, out="&lt;img src=x onerror=probe_xss()&gt;").failures


def summary_line(r: Result) -> str:
    if r.case.surface == "mcp":
        return str(r.extra.get("reply") or r.err.strip()[-200:])[:200]
    first = (r.err.strip().splitlines() or [""])[-1] if r.case.surface == "cli" else r.out.strip()[:200]
    return first[:200]


def table(results: list[Result]) -> str:
    surfaces: dict[str, list[Result]] = {}
    for r in results:
        key = r.case.surface if r.case.surface != "cli" else "cli " + r.case.target.split()[0]
        surfaces.setdefault(key, []).append(r)
    head = ["surface", "total", "ok", *CLASSES]
    rows = [head]
    tot = [0] * (len(head) - 1)
    for s in sorted(surfaces):
        rs = surfaces[s]
        vals = [len(rs), sum(1 for r in rs if not r.failures), *[sum(1 for r in rs if c in r.failures) for c in CLASSES]]
        tot = [a + b for a, b in zip(tot, vals, strict=True)]
        rows.append([s, *map(str, vals)])
    rows.append(["all", *map(str, tot)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="run the cases whose id holds this text")
    ap.add_argument("--json", default=str(REPO / "evals" / "hostile" / "latest.json"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-slow", action="store_true", help="leave out the slow cases (hanging/dripping servers)")
    ap.add_argument("--list", action="store_true")
    opts = ap.parse_args(argv)
    selftest()

    base = Path(tempfile.mkdtemp(prefix="amprobe-"))
    sh = make_shared(base)
    results: list[Result] = []
    served: Served | None = None
    t_start = time.monotonic()
    try:
        cases = [c for c in catalogue(sh, slow=not opts.no_slow) if opts.only in c.id and not (opts.no_slow and c.slow)]
        if opts.list:
            for c in cases:
                print(c.id)
            return 0
        seen: set[str] = set()
        for c in cases:
            assert c.id not in seen, f"duplicate case {c.id}"
            seen.add(c.id)
        numbers = {c.id: k for k, c in enumerate(cases)}

        def box_for(c: Case) -> Sandbox:
            return Sandbox(base / "cases", f"c{numbers[c.id]:03d}", sh)

        (base / "cases").mkdir()
        done = 0

        def one(c: Case) -> Result:
            nonlocal done
            try:
                if c.surface in ("serve", "viewer"):
                    assert served is not None
                    r = served.run(c)
                elif c.surface == "mcp":
                    r = run_mcp(c, box_for(c))
                else:
                    r = run_cli(c, box_for(c))
            except Exception as exc:  # noqa: BLE001 - the probe's own failure on a case: on record, the run goes on
                import traceback as tb

                r = Result(c, None, "", "", 0.0, None, False, [])
                r.failures["probe_error"] = "".join(tb.format_exception_only(exc)).strip()[:300]
                print(tb.format_exc(), file=sys.stderr)
            else:
                classify(r, base)
            done += 1
            mark = "ok" if not r.failures else ",".join(r.failures)
            print(f"[{done:3d}/{len(cases)}] {r.wall_s:6.1f}s {mark:24s} {c.id}", file=sys.stderr, flush=True)
            return r

        http = [c for c in cases if c.surface in ("serve", "viewer")]
        rest = sorted((c for c in cases if c.surface not in ("serve", "viewer")), key=lambda c: not c.slow)
        if http:
            served = Served(sh, base)
        with ThreadPoolExecutor(max(1, min(2, opts.jobs))) as pool:
            futures = [pool.submit(one, c) for c in rest]
            if http:  # the served cases, one after another, beside the others
                futures.append(pool.submit(lambda: [one(c) for c in http]))
            for fut in futures:
                got = fut.result()
                results.extend(got if isinstance(got, list) else [got])
        if served is not None:
            rss = served.close()
            tail = served.log_text(0)
            served = None
            srv = Case("serve", "process", "whole session", lambda b: Spec(), (0, 130, -2, 1))
            r = Result(srv, 0, "", tail if "Traceback (most recent call last)" in tail else "", 0.0, rss, False, [])
            classify(r, base)
            results.append(r)
    finally:
        if served is not None:
            served.close()
        for s in (sh.model, sh.hang, sh.drip):
            with contextlib.suppress(Exception):
                s.close()
        for where in [*MOUNTS, *([sh.ro] if sh.ro_mounted else [])]:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
    results.sort(key=lambda r: r.case.id)
    elapsed = time.monotonic() - t_start
    print(table(results))
    failing = [r for r in results if r.failures]
    print(f"\n{len(results)} cases, {len(results) - len(failing)} ok, {len(failing)} failing; {elapsed:.0f} s")
    for r in failing:
        print(f"- {r.case.id}: " + "; ".join(f"{k}: {v}" for k, v in r.failures.items())[:600])
    rows = [{"id": r.case.id, "surface": r.case.surface, "target": r.case.target, "case": r.case.name,
             "expect": list(r.case.expect), "code": r.code, "wall_s": round(r.wall_s, 2), "max_rss_kb": r.rss_kb,
             "failures": r.failures, "said": summary_line(r),
             "longest_line": max((len(x) for x in (r.err if r.case.surface == "cli" else "").splitlines()), default=0)}
            for r in results]
    long_lines = [row["id"] for row in rows if row["longest_line"] > 2000]
    print(f"stderr lines over 2,000 characters (cli): {len(long_lines)}" + (f": {long_lines}" if long_lines else ""))
    Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.json).write_text(json.dumps({"elapsed_s": round(elapsed, 1), "cases": len(results),
                                           "failing": len(failing), "table": table(results), "rows": rows},
                                          indent=1, ensure_ascii=True) + "\n")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
