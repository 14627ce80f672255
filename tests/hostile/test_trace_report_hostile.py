"""The trace and report commands under the hostile inputs of issue 35: each case is a command on a crafted file,
and what must hold (a bounded memory and time, one error line and its exit code, nothing read outside the
trace's folder, no escape sequence on the terminal or in report.md, no password repeated).

1. size: a 10-hour clip through `trace html` (max RSS < 2 GB); `bench report` on a results.jsonl that is a
   symlink to /dev/zero or a named pipe (and the same under --compare): one line, exit 2, at once.
2. paths: `trace replay` and `trace audit` never open /etc/passwd a trace names; the served viewer (render_page
   as serve.py calls it) does not embed an original clip outside its folders.
3. parsing: a row nested 100,000 deep or holding a 5,001-digit integer (trace validate, bench run, bench
   report); 703+ choices in `trace show -v`; a read-only output folder (bench report, trace replay); a
   non-UTF-8 or oversized row in an items file (skipped with FILE:LINE, refused only under --strict).
4. escapes: ESC / OSC-8 / DCS / C1 CSI in a trace through `trace audit|stats|diff`; Markdown and HTML in an
   MMAR category through report.md.
5. `trace export --otlp http://user:pass@...` never repeats the password.

Most run in process (typer's CliRunner); the memory check runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind.audio import sha256_file
from audiomind.cli import app
from audiomind.state import (
    Action,
    Artifact,
    EvidenceItem,
    EvidenceState,
    FinalAnswer,
    PlannerDecision,
    Question,
    RunInfo,
    ToolCall,
    ToolCallStatus,
)
from audiomind.trace import write_trace

from .conftest import write_tone
from .test_corpus import never_opened, watch

ESC = "\x1b[2J\x1b]0;pwned\x07"  # clear the screen, set the window title
OSC8 = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # a hyperlink
DCS = "\x1bP1$qm\x1b\\"  # a device control string
C1_CSI = "\x9b31m"  # the one-byte CSI: red
HOSTILE = f"{ESC} {OSC8} {DCS} {C1_CSI}"
RAW = ("\x1b", "\x9b", "\x07")


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(res, code: int, *needles: str) -> str:
    assert res.exit_code == code, f"exit {res.exit_code}: {res.output}"
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]


def tone(path: Path, seconds: float = 1.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_tone(path, seconds=seconds)


def clip_artifact(path: Path, duration_s: float = 1.0, sr: int = 16000) -> Artifact:
    return Artifact(id="a0", path=str(path), sha256=sha256_file(path), duration_s=duration_s, sample_rate=sr,
                    channels=1, operation="input")


def a_trace(folder: Path, clip: Path, *, name: str = "trace.json", text: str = "Is there a tone?",
            choices: list[str] | None = None, claim: str = "a tone is heard", duration_s: float = 1.0,
            sr: int = 16000) -> Path:
    """A small finished trace: one decision, one tool call, one evidence item, an answer."""
    folder.mkdir(parents=True, exist_ok=True)
    call = ToolCall(id="call_0000000001", tool="loudness", issued_by="planner", step=1, status=ToolCallStatus.ok,
                    requested_arguments={"artifact": "a0"}, arguments={"artifact": "a0"}, output={"lufs": -20.0})
    st = EvidenceState(
        run=RunInfo(run_id=f"run_{Path(name).stem}", artifact_dir=str(folder / "arts")),
        question=Question(text=text, choices=choices or ["yes", "no"], audio_path=str(clip)),
        artifacts=[clip_artifact(clip, duration_s, sr)],
        decisions=[PlannerDecision(step=1, action=Action.CALL_TOOLS, rationale=claim, planner="rules")],
        tool_calls=[call],
        evidence=[EvidenceItem(id="ev_0000000001", source_type="tool_call", source_id=call.id, tool="loudness",
                               claim=claim, artifact_id="a0")],
        final_answer=FinalAnswer(text="yes", choice="yes", choice_index=0, rationale=claim,
                                 cited_evidence_ids=["ev_0000000001"]),
    )
    return write_trace(st, folder / name)


# ---------------------------------------------------------------- 1. size: long clips, /dev/zero, FIFOs

MEASURED = (
    "import resource, runpy, sys\n"
    "sys.argv = ['audiomind', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('audiomind', run_name='__main__', alter_sys=True)\n"
    "finally:\n"
    "    kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,\n"
    "             resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "    print(f'MAXRSS_KB {kb}', file=sys.stderr)\n"
)
GB = 1024 ** 3


def _limit_memory() -> None:  # a backstop: a regression fails with MemoryError instead of swapping the machine
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (6 * GB, 6 * GB))


@pytest.fixture(scope="module")
def ten_hours(tmp_path_factory) -> Path:
    """10 hours of 8 kHz mono silence as FLAC (under 1 MB), written a block at a time."""
    path = tmp_path_factory.mktemp("long") / "ten_hours.flac"
    block = np.zeros(8000 * 600, np.int16)
    with sf.SoundFile(str(path), "w", samplerate=8000, channels=1, subtype="PCM_16", format="FLAC") as f:
        for _ in range(60):
            f.write(block)
    assert sf.info(str(path)).duration == 36000.0
    return path


def test_trace_html_on_a_ten_hour_clip_stays_under_2_gb(ten_hours, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # the ordinary trace of `ask` on the clip (the clip outside the run folder) and a crafted one beside it
    a_trace(run_dir, ten_hours, name="ordinary.json", duration_s=36000.0, sr=8000)
    inside = run_dir / "inside.flac"
    os.link(ten_hours, inside)
    a_trace(run_dir, inside, name="crafted.json", duration_s=1.0, sr=8000)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", MEASURED, "trace", "html", str(run_dir), "-o", str(tmp_path / "site"),
                           "--no-audit"], capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory,
                          check=False, cwd=tmp_path)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    kb = int(proc.stderr.rsplit("MAXRSS_KB ", 1)[1].split()[0])
    assert kb * 1024 < 2 * GB, f"max RSS {kb / 1024:.0f} MB"
    assert elapsed < 240, elapsed
    for stem in ("run_ordinary", "run_crafted"):
        page = (tmp_path / "site" / f"{stem}.html").read_text()
        assert 'data-artifact="a0"' in page  # the player is there (the file is copied, not decoded)
        assert "spectrogram of the first 600 s of 36000 s" in page


def test_trace_html_embed_refuses_a_huge_clip_but_keeps_the_page(tmp_path, monkeypatch):
    from audiomind.audit import html

    monkeypatch.setattr(html, "MAX_EMBED_BYTES", 1000)
    clip = tone(tmp_path / "run" / "clip.wav")
    trace = a_trace(tmp_path / "run", clip)
    res = run("trace", "html", trace, "-o", tmp_path / "site", "--embed", "--no-spectrograms", "--no-audit")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "site" / "run_trace.html").read_text()
    assert "too large to embed" in page and "data:audio" not in page


@pytest.fixture
def run_dir(tmp_path) -> Path:
    d = tmp_path / "bench_run"
    d.mkdir()
    rows = [{"id": f"q{i}", "status": "answered", "prediction": "a", "correct": i % 2 == 0, "benchmark": "mmar",
             "wall_time_s": 1.0 + i, "tool_calls": i, "metadata": {"category": "Sound"}} for i in range(4)]
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_bench_report_refuses_a_results_file_that_is_a_device_or_a_pipe(run_dir, tmp_path, kind):
    bad = tmp_path / "bad_run"
    bad.mkdir()
    if kind == "dev_zero":
        os.symlink("/dev/zero", bad / "results.jsonl")
        needle = "character device"
    else:
        os.mkfifo(bad / "results.jsonl")
        needle = "FIFO"
    t0 = time.monotonic()
    one_error_line(run("bench", "report", bad, "--no-plots"), 2, needle, "results.jsonl")
    one_error_line(run("bench", "report", run_dir, "--no-plots", "--compare", bad), 2, needle, "results.jsonl")
    assert time.monotonic() - t0 < 30


def test_bench_report_refuses_run_json_and_scores_json_that_are_pipes(run_dir):
    os.mkfifo(run_dir / "run.json")
    one_error_line(run("bench", "report", run_dir, "--no-plots"), 2, "FIFO", "run.json")
    (run_dir / "run.json").unlink()
    os.symlink("/dev/zero", run_dir / "scores.json")
    one_error_line(run("bench", "report", run_dir, "--no-plots"), 2, "character device", "scores.json")


def test_the_bounded_reader(tmp_path, monkeypatch):
    from audiomind import fsutil

    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(fsutil.InputFileError, match="5,000 bytes, more than the 1,000"):
        fsutil.read_input_bytes(big, max_bytes=1000)
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(b'{"a": 1}\n' + b"y" * 3000 + b"\n" + b'{"b": 2}\n')
    assert list(fsutil.input_lines(lines, max_line_bytes=100)) == [(1, b'{"a": 1}'), (2, None), (3, b'{"b": 2}')]
    for text, needle in [("[" * 100_000 + "]" * 100_000, "nested too deeply"), ("[" * 70 + "]" * 70, "nested too deeply"),
                         ('{"n": ' + "9" * 5001 + "}", "5,001 digits"), ("{oops", "not JSON")]:
        with pytest.raises(fsutil.InputFileError, match=needle):
            fsutil.loads_json(text)
    assert fsutil.loads_json("[" * 60 + "]" * 60) is not None  # within the depth a trace may need


# ---------------------------------------------------------------- 2. paths outside a trace's folder

def _passwd_trace(folder: Path) -> Path:
    """A trace whose question clip is /etc/passwd (hash and all: the attacker read it elsewhere)."""
    folder.mkdir(parents=True, exist_ok=True)
    st = EvidenceState(run=RunInfo(run_id="run_passwd", artifact_dir=str(folder / "arts")),
                       question=Question(text="What is heard?", audio_path="/etc/passwd"),
                       artifacts=[Artifact(id="a0", path="/etc/passwd", sha256=sha256_file("/etc/passwd"),
                                           duration_s=1.0, sample_rate=16000, channels=1, operation="input")])
    return write_trace(st, folder / "passwd.json")


def test_replay_and_audit_never_open_a_file_outside_the_trace_folder(tmp_path):
    trace = _passwd_trace(tmp_path / "t")
    with watch() as opened:
        res = run("trace", "replay", trace)
        line = one_error_line(res, 2, "not read", "outside")
        res = run("trace", "audit", trace)
    never_opened(opened, "/etc/passwd")
    assert "passwd" in line
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "is not read (outside the trace's run folder" in " ".join(res.stdout.split())
    digest = sha256_file("/etc/passwd")
    assert digest[:12] not in res.stdout or digest[:12] in trace.read_text()  # the recorded hash only
    assert "does not have the sha256" not in res.stdout


def test_replay_reads_only_the_trace_s_own_verified_clip(tmp_path):
    from audiomind.audit.replay import replay_audio
    from audiomind.audit.timeline import read_trace_file

    clip = tone(tmp_path / "elsewhere" / "clip.wav")
    trace = a_trace(tmp_path / "t", clip)
    st = read_trace_file(trace)
    assert replay_audio(st, trace) == (str(clip.resolve()), [])  # the question's clip, sha256 verified
    st.question.extra_audio = ["/etc/hostname"]  # no artifact records it
    with pytest.raises(ValueError, match="records no audio artifact for /etc/hostname"):
        replay_audio(st, trace)
    st.question.extra_audio = []
    tone(clip, seconds=2.0)  # another file under the recorded name
    with pytest.raises(ValueError, match="outside the trace's run folder"):
        replay_audio(st, trace)


def test_the_served_viewer_does_not_embed_an_outside_original(tmp_path):
    """render_page as serve.py calls it (embed, allow = the server's folders): a trace planted in the trace
    folder naming an audio file elsewhere, with its true hash, gets no player."""
    from audiomind.audit.html import render_page
    from audiomind.audit.timeline import read_trace_file

    private = tone(tmp_path / "private" / "secret.wav")
    traces = tmp_path / "server_traces"
    traces.mkdir()
    planted = a_trace(traces, private, name="planted.json")
    page = render_page(read_trace_file(planted), traces / "html", planted, embed=True, spectrograms=False,
                       index_href=None, allow=[tmp_path / "uploads"]).read_text()
    assert "data:audio" not in page and 'data-artifact="a0"' not in page
    assert "outside the trace&#x27;s run folder" in page
    # `trace html` (a local user's own traces) still plays it: the question's own clip, hash verified
    res = run("trace", "html", planted, "-o", tmp_path / "site", "--no-spectrograms", "--no-audit")
    assert res.exit_code == 0 and 'data-artifact="a0"' in (tmp_path / "site" / "run_planted.html").read_text()


# ---------------------------------------------------------------- 3. parsing hostile files

DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = "9" * 5001


def test_trace_validate_on_a_huge_integer_and_deep_nesting(tmp_path):
    for name, text, needle in [("deep.json", DEEP, "nested too deeply"),
                               ("int.json", '{"schema_version": ' + BIG_INT + "}", "5,001 digits")]:
        f = tmp_path / name
        f.write_text(text)
        for command in ("validate", "audit", "show", "stats"):
            res = run("trace", command, f)
            assert res.exception is None or isinstance(res.exception, SystemExit), (command, repr(res.exception))
            assert res.exit_code in (1, 2) and "Traceback" not in res.output, (command, res.output)
            assert needle in " ".join(res.output.split()), (command, res.output)


def test_bench_report_skips_deep_and_huge_integer_rows(run_dir):
    with open(run_dir / "results.jsonl", "a") as f:
        f.write('{"id": "deep", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
        f.write('{"id": "int", "tool_calls": ' + BIG_INT + "}\n")
        f.write('{"id": "float", "status": "answered", "wall_time_s": ' + "9" * 400 + "}\n")
        f.write('{"id": "typed", "status": "answered", "tool_calls": "many"}\n')
    res = run("bench", "report", run_dir, "--no-plots", "--json")
    assert res.exit_code == 0 and res.exception is None, res.output
    assert json.loads(res.stdout)["report"]["overall"]["n"] == 4  # the good rows only


def _items(tmp_path: Path, bad_lines: list[bytes]) -> Path:
    write_tone(tmp_path / "tone.wav")
    good = json.dumps({"id": "good", "question": "Is there a tone?", "choices": ["yes", "no"], "audio": "tone.wav"})
    items = tmp_path / "items.jsonl"
    items.write_bytes(b"\n".join([good.encode(), *bad_lines]) + b"\n")
    return items


BAD_ROWS = [
    b'{"id": "latin1", "question": "caf\xe9?", "choices": ["a", "b"], "audio": "tone.wav"}',
    b'{"id": "long", "question": "' + b"x" * (5 * 1024 * 1024) + b'"}',
    b'{"id": "deep", "question": "q", "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"id": "int", "question": "q", "n": ' + BIG_INT.encode() + b"}",
]


def test_items_file_bad_rows_are_skipped_with_file_and_line(tmp_path, model_server):
    items = _items(tmp_path, BAD_ROWS)
    res = run("bench", "run", "--items", items, "--out", tmp_path / "out", "--planner", model_server.spec,
              "--frontend", model_server.spec, "--no-progress", "--no-cache")
    assert res.exit_code == 0 and res.exception is None, res.output
    said = " ".join(res.stderr.split())
    for line, needle in [(2, "not UTF-8 text"), (3, "the row is longer than"), (4, "JSON nested too deeply"),
                         (5, "a JSON integer of 5,001 digits")]:
        assert f"items.jsonl:{line}: {needle}" in said, (line, said)
    results = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert {r["id"]: r["status"] for r in results}["good"] == "answered"
    assert sum(1 for r in results if r.get("input_error")) == 4


def test_items_file_bad_rows_refuse_the_file_under_strict(tmp_path, model_server):
    items = _items(tmp_path, BAD_ROWS[:1])
    res = run("bench", "run", "--items", items, "--out", tmp_path / "out", "--planner", model_server.spec,
              "--frontend", model_server.spec, "--no-progress", "--strict")
    assert res.exit_code == 2 and (res.exception is None or isinstance(res.exception, SystemExit)), res.output
    assert "items.jsonl:2: not UTF-8 text" in " ".join(res.stderr.split())
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_trace_show_verbose_with_more_than_702_choices(tmp_path):
    clip = write_tone(tmp_path / "clip.wav")
    trace = a_trace(tmp_path, clip, choices=[f"option {i}" for i in range(800)])
    res = run("trace", "show", "-v", trace)
    assert res.exit_code == 0 and res.exception is None, res.output
    assert "ZZ. option 701" in res.stdout and "#703. option 702" in res.stdout


def _read_only(folder: Path) -> None:
    folder.chmod(0o555)
    probe = folder / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return
    probe.unlink()
    pytest.skip("this user can write to a read-only folder (root without a read-only mount)")


def test_bench_report_into_a_read_only_folder_is_one_line(run_dir, tmp_path, tmpfs):
    ro = tmpfs(1024)
    target = ro / "run"
    target.mkdir()
    (target / "results.jsonl").write_bytes((run_dir / "results.jsonl").read_bytes())
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True, capture_output=True)
    one_error_line(run("bench", "report", target), 4, "read-only")


def test_trace_replay_into_a_read_only_folder_is_one_line(tmp_path, tmpfs):
    ro = tmpfs(1024)
    clip = write_tone(tmp_path / "clip.wav")
    trace = a_trace(tmp_path / "t", clip)
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True, capture_output=True)
    res = run("trace", "replay", trace, "--trace-dir", ro / "replays")
    one_error_line(res, 4, "read-only")


# ---------------------------------------------------------------- 4. escape sequences


def test_trace_audit_stats_and_diff_show_escapes_never_send_them(tmp_path):
    clip = write_tone(tmp_path / "clip.wav")
    a = a_trace(tmp_path, clip, name="a.json", text=f"What {HOSTILE}?", claim=f"a woman {HOSTILE} speaks")
    b = a_trace(tmp_path, clip, name="b.json", text=f"What {HOSTILE}?", claim=f"a man {HOSTILE} speaks")
    data = json.loads(b.read_text())
    data["tool_calls"][0]["tool"] = f"loud{ESC}ness"
    data["tool_calls"][0]["status"] = "error"
    data["tool_calls"][0]["error"] = f"failed {HOSTILE}"
    b.write_text(json.dumps(data))
    for args in (["audit", a, b], ["stats", a, b], ["diff", a, b], ["audit", tmp_path / "nothing.json"]):
        res = run("trace", *args)
        assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception))
        assert not any(ch in res.output for ch in RAW), (args, res.output)
    res = run("trace", "audit", a, b)
    assert "\\x1b[2J" in res.stdout and "\\x9b31m" in res.stdout  # shown, as text


def test_report_md_escapes_markdown_html_and_terminal_sequences(run_dir):
    rows = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    evil = f'<img src=x onerror=alert(1)> [link](http://evil.example) **bold** | cell {HOSTILE}'
    for r in rows:
        r["metadata"]["category"] = evil
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run_dir / "run.json").write_text(json.dumps({"config": {"planner": f"[x](javascript:alert(1)) {ESC}"}}))
    res = run("bench", "report", run_dir)
    assert res.exit_code == 0, res.output
    assert not any(ch in res.output for ch in RAW)
    md = (run_dir / "report.md").read_text()
    assert not any(ch in md for ch in RAW)
    assert "<img" not in md and "**bold**" not in md
    assert not re.search(r"(?<!\\)\]\((?:http://evil|javascript)", md)  # no link: every such ] is escaped
    assert "&lt;img src=x onerror=alert(1)&gt; \\[link\\](http://evil.example) \\*\\*bold\\*\\* \\| cell" in md
    table_rows = [ln for ln in md.splitlines() if ln.startswith("| &lt;img")]
    assert table_rows and all(ln.count(" | ") == 4 for ln in table_rows)  # still five cells: the | is escaped


# ---------------------------------------------------------------- 5. disclosure


def test_otlp_export_error_never_repeats_the_password(tmp_path):
    clip = write_tone(tmp_path / "clip.wav")
    trace = a_trace(tmp_path, clip)
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    res = run("trace", "export", trace, "--otlp", f"http://alice:s3cr3t-pw@127.0.0.1:{port}")
    assert res.exit_code == 1, res.output
    assert "s3cr3t-pw" not in res.output and "alice" not in res.output and "***@127.0.0.1" in res.output
    res = run("trace", "export", trace, "--otlp", "ftp://alice:s3cr3t-pw@127.0.0.1/")
    assert res.exit_code == 2 and "s3cr3t-pw" not in res.output


def test_a_judge_run_s_report_reads_traces_only_inside_the_run(run_dir, tmp_path):
    """A judge task's report reads each row's trace for its figures: a row naming /etc/passwd, a FIFO or a
    file outside the run folder gets no figures, and none of them is opened."""
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"tool_calls": [{"tool": "judge_edit", "output": {"edit_score": 0.9}}]}))
    os.mkfifo(run_dir / "pipe.json")
    rows = [{"id": f"j{i}", "status": "answered", "prediction": "effective", "answer": "1", "confidence": 0.9,
             "trace_path": p} for i, p in enumerate(["/etc/passwd", "pipe.json", str(outside), "../outside.json"])]
    (run_dir / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run_dir / "run.json").write_text(json.dumps({"config": {"judge": "edit"}}))
    with watch() as opened:
        res = run("bench", "report", run_dir, "--no-plots", "--json")
    never_opened(opened, "/etc/passwd", str(run_dir / "pipe.json"), str(outside))
    assert res.exit_code == 0, res.output
    judge = json.loads(res.stdout)["report"]["judge"]
    assert judge["judged"] == 4 and all(o["edit_score"] is None for o in judge["operations"])
