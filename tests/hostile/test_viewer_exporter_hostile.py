"""The trace viewer, `trace show` and the OpenTelemetry exporter under hostile traces and faulty storage,
with real clients: a pty for `trace show`, the repo's OTLP/HTTP receiver (tests/audit/otlp_receiver.py) for
the exporter, and whole `ask` runs against the cooperative loopback model server (no embedded model loads).

- `trace show` writes a trace's escape sequences (clear screen, window title, C1 CSI) as visible text;
- without --include-content no file path (`file://...`) leaves the machine; with it, model-call spans carry
  what was sent (the prompt) and the reply itself (not the backend's {raw, parsed} record);
- `ask --otlp` exports a failed run: the failing node's span is there, in error, holding the failed
  model call; successful spans are OK; a judge's verdict is on its span as attributes;
- `trace html` of an ordinary run plays the question's clip from where `ask` read it (sha256 and decoding
  checked); a non-audio original or a derived clip outside the run folder is still unavailable;
- `trace html -o` and `judge ... --trace-dir` on storage that refuses writes: one line, exit 4.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from audit.otlp_receiver import OtlpReceiver  # tests/audit (tests/ is on sys.path: rootdir-relative packages)

from audiomind.audio import sha256_file
from audiomind.audit.otel import build_spans
from audiomind.state import (
    Artifact,
    EvidenceItem,
    EvidenceState,
    Outcome,
    Question,
    RunInfo,
    ToolCall,
    ToolCallStatus,
    ToolCategory,
)
from audiomind.trace import load_trace, write_trace

from .conftest import cli, one_line_error, write_tone

REPO = Path(__file__).resolve().parents[2]
HOSTILE = "What is heard?\x1b[2J\x1b]0;pwned-title\x07 \u009b31mred\r"
EXIT_STORAGE = 4


def _closed_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _artifact(id_: str, path: Path, derived_from: str | None = None) -> Artifact:
    return Artifact(id=id_, path=str(path), sha256=sha256_file(path), duration_s=1.0, sample_rate=16000, channels=1,
                    format="WAV", derived_from=derived_from, operation="input" if derived_from is None else "crop")


# ---- trace show on a terminal --------------------------------------------------------------------------
def _on_a_pty(*args: str, timeout: float = 120) -> bytes:
    """Run the CLI with stdout and stderr on a pseudo-terminal (as a user's shell would); what it wrote."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "50"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "audiomind", *args], cwd=REPO, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        proc.wait(timeout=30)
    assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
    return out


def test_trace_show_writes_escape_sequences_as_visible_text(tmp_path):
    clip = write_tone(tmp_path / "tone.wav")
    call = ToolCall(step=0, tool="probe", status=ToolCallStatus.ok, requested_arguments={"artifact": "a0"},
                    arguments={"artifact": "a0"}, output={"note": "\x1b]8;;http://x\x07link\x1b]8;;\x07"})
    st = EvidenceState(
        run=RunInfo(run_id="run-esc"),
        question=Question(text=HOSTILE, choices=["a\x1b[1Aup", "b"], audio_path=str(clip)),
        artifacts=[_artifact("a0", clip)], tool_calls=[call],
        evidence=[EvidenceItem(claim="the title is \x1b]2;owned\x07", source_type="tool_call", source_id=call.id)],
        outcome=Outcome(status="failed", reason="stopped \x1b[31mhere"))
    trace = write_trace(st, tmp_path / "t.json")
    out = _on_a_pty("trace", "show", str(trace), "--verbose").decode("utf-8", errors="replace")
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x1b]2;" not in out and "\x1b]8;" not in out
    assert "\x1b[1A" not in out and "\u009b" not in out and "\r" not in out.replace("\r\n", "\n")
    plain = out.replace("\x1b", "")  # rich's own styling aside
    for shown in ("\\x1b[2J", "\\x1b]0;pwned-title\\x07", "\\x9b31mred", "\\x1b[1Aup", "\\x1b]2;owned"):
        assert shown in plain, (shown, plain[-1500:])
    assert "\x1b[" in out  # rich still styles the output: the terminal is a real one


# ---- OpenTelemetry -------------------------------------------------------------------------------------
def _ask(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return cli("ask", *args, cwd=cwd, timeout=300)


def _strings(spans) -> str:
    return json.dumps([[s["attributes"], [e["attributes"] for e in s["events"]]] for s in spans], default=str)


def test_no_file_paths_without_content_and_prompts_with_it(model_server, tmp_path):
    clip = write_tone(tmp_path / "tone.wav")
    toolfail = model_server.spec.replace("openai:m@", "openai:m-toolfail@")  # its first decision: a crop call
    with OtlpReceiver() as rx:
        run = _ask(str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--planner", toolfail,
                   "--frontend", model_server.spec, "--trace-dir", str(tmp_path / "tr"), "--no-cache",
                   "--otlp", rx.url, cwd=tmp_path)
        assert run.returncode in (0, 1), run.stderr
        spans = rx.spans()
    assert spans and any(s["name"] == "execute_tool crop" for s in spans)
    sent = _strings(spans)
    assert "file://" not in sent and str(tmp_path) not in sent, sent[:2000]
    tool = next(s for s in spans if s["name"] == "execute_tool crop")
    assert "audiomind.tool.audio.uri" not in tool["attributes"] and tool["attributes"]["audiomind.tool.audio.sha256"]
    # statuses: the failed crop is an error; every other span (the run answered) is OK, none left unset
    assert tool["status"] == "ERROR"
    assert {s["status"] for s in spans if s is not tool} == {"OK"}, [(s["name"], s["status"]) for s in spans]

    trace = next((tmp_path / "tr").glob("*.json"))
    with OtlpReceiver() as rx:
        exported = cli("trace", "export", str(trace), "--otlp", rx.url, "--include-content", cwd=tmp_path)
        assert exported.returncode == 0, exported.stderr
        spans = rx.spans()
    root = next(s for s in spans if s["parent"] is None)
    assert root["attributes"]["audiomind.audio.uri"] == clip.resolve().as_uri()
    chats = [s for s in spans if s["attributes"].get("openinference.span.kind") == "LLM"]
    st = load_trace(trace)
    recorded = [mc for mc in st.model_calls if mc.role == "planner"]
    assert recorded and all(mc.input for mc in recorded)  # the trace keeps what was sent
    planner_chats = [s for s in chats if s["attributes"]["audiomind.model_call.role"] == "planner"]
    span_of = {s["attributes"]["audiomind.model_call.id"]: s for s in planner_chats}
    assert set(span_of) == {mc.id for mc in recorded}
    for mc in recorded:
        a = span_of[mc.id]["attributes"]
        messages = json.loads(a["gen_ai.input.messages"])
        assert [m["parts"][0]["content"] for m in messages] == [m.content for m in mc.input]
        assert a["llm.input_messages.0.message.role"] == mc.input[0].role
        assert a["output.value"] == mc.output["raw"]  # the reply itself, not the {raw, parsed} record
        assert not a["output.value"].startswith('{"raw"')
    assert any("Is there a tone?" in s["attributes"].get("input.value", "") for s in planner_chats)


def test_ask_otlp_exports_a_failed_run_with_the_failing_node(model_server, tmp_path):
    clip = write_tone(tmp_path / "tone.wav")
    dead = f"openai:m@http://127.0.0.1:{_closed_port()}/v1"
    with OtlpReceiver() as rx:
        run = _ask(str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--planner", dead,
                   "--frontend", model_server.spec, "--trace-dir", str(tmp_path / "tr"), "--no-cache",
                   "--retries", "1", "--otlp", rx.url, "--otlp-include-content", cwd=tmp_path)
        assert run.returncode == 3, run.stdout + run.stderr
        assert "Traceback" not in run.stderr
        spans = rx.spans()
    assert spans, "the failed run was not exported"
    by_id = {s["span_id"]: s for s in spans}
    root = next(s for s in spans if s["parent"] is None)
    assert root["status"] == "ERROR" and root["attributes"]["audiomind.outcome.status"] == "failed"
    failed_chat = next(s for s in spans if s["attributes"].get("openinference.span.kind") == "LLM"
                       and s["status"] == "ERROR")
    node = by_id[failed_chat["parent"]]
    assert node["parent"] == root["span_id"] and node["name"] == "perception_prompt", node["name"]
    assert node["status"] == "ERROR"
    assert node["start"] <= failed_chat["start"] and failed_chat["end"] <= root["end"]
    messages = json.loads(failed_chat["attributes"]["gen_ai.input.messages"])
    assert "Is there a tone?" in json.dumps(messages)  # what was sent, although nothing came back


def test_judge_verdicts_are_span_attributes(tmp_path):
    clip = write_tone(tmp_path / "tone.wav")
    call = ToolCall(step=0, tool="judge_rubric", category=ToolCategory.evaluation, status=ToolCallStatus.ok,
                    arguments={"artifact": "a0"}, output={"score": 0.72, "aligned": True, "threshold": 0.5})
    st = EvidenceState(run=RunInfo(run_id="judged"), question=Question(text="q", audio_path=str(clip)),
                       artifacts=[_artifact("a0", clip)], tool_calls=[call], outcome=Outcome(status="answered"))
    spans = build_spans(st, include_content=False, descriptions={})
    judge = next(s for s in spans if s.name == "execute_tool judge_rubric")
    assert judge.attributes["eval.rubric.score"] == pytest.approx(0.72, abs=1e-12)
    assert judge.attributes["eval.rubric.label"] == "aligned"
    assert "eval.rubric.explanation" not in judge.attributes  # content: only with include_content
    assert judge.status.status_code.name == "OK"
    assert [e.name for e in judge.events] == ["gen_ai.evaluation.result"]


# ---- the viewer ----------------------------------------------------------------------------------------
def test_html_of_an_ordinary_run_plays_the_questions_clip(model_server, tmp_path):
    (tmp_path / "clips").mkdir()
    clip = write_tone(tmp_path / "clips" / "tone.wav")  # outside the trace folder, as `ask q.wav` usually is
    run = _ask(str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--planner", model_server.spec,
               "--frontend", model_server.spec, "--trace-dir", str(tmp_path / "tr"), "--no-cache", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    trace = next((tmp_path / "tr").glob("*.json"))
    site = tmp_path / "site"
    res = cli("trace", "html", str(trace), "-o", str(site), "--no-spectrograms", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    page = next(p for p in site.glob("*.html") if p.name != "index.html")
    html = page.read_text()
    assert 'data-artifact="a0"' in html and "unavailable" not in html.split('id="art-a0"')[1].split("</div></div>")[0]
    copied = next(site.glob("*_files/a0.wav"))
    assert sha256_file(copied) == sha256_file(clip)

    # a trace naming a non-audio original (its hash known) and a derived clip outside: both unavailable
    secret = tmp_path / "elsewhere" / "secret.wav"
    secret.parent.mkdir()
    secret.write_text("PRIVATE do not publish\n")
    outside_crop = write_tone(tmp_path / "elsewhere" / "crop.wav")
    st = load_trace(trace)
    st = st.model_copy(update={"artifacts": [_artifact("a0", secret), _artifact("a1", outside_crop, "a0")]})
    edited = write_trace(st, tmp_path / "tr" / "edited.json")
    res = cli("trace", "html", str(edited), "-o", str(tmp_path / "site2"), "--no-spectrograms", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    text = "".join(p.read_text(errors="replace") for p in (tmp_path / "site2").rglob("*") if p.is_file()
                   and p.suffix in (".html", ".json"))
    assert "<audio" not in text and "PRIVATE do not publish" not in text
    assert "does not decode as audio" in text and "outside the trace" in text.replace("&#x27;", "'")
    assert not list((tmp_path / "site2").glob("*_files/a*.wav"))


def test_html_and_judge_on_storage_that_refuses_writes(model_server, tmp_path, tmpfs):
    clip = write_tone(tmp_path / "tone.wav")
    run = _ask(str(clip), "Is there a tone?", "--choice", "yes", "--choice", "no", "--planner", model_server.spec,
               "--frontend", model_server.spec, "--trace-dir", str(tmp_path / "tr"), "--no-cache", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    trace = str(next((tmp_path / "tr").glob("*.json")))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")

    res = cli("trace", "html", trace, "-o", str(blocker / "site"), cwd=tmp_path)
    one_line_error(res.returncode, EXIT_STORAGE, res.stdout, res.stderr, ["viewer could not be written"])
    aura = ("judge", "aura", "--question", "Is there a tone?", "--reference", "yes", "--response", "yes")
    res = cli(*aura, "--trace-dir", str(blocker / "traces"), cwd=tmp_path)
    one_line_error(res.returncode, EXIT_STORAGE, res.stdout, res.stderr, ["judge's trace could not be written"])

    read_only = tmpfs(256, ro=True)
    res = cli("trace", "html", trace, "-o", str(read_only / "site"), cwd=tmp_path)
    one_line_error(res.returncode, EXIT_STORAGE, res.stdout, res.stderr, ["viewer could not be written", "read-only"])
    res = cli(*aura, "--trace-dir", str(read_only), cwd=tmp_path)
    one_line_error(res.returncode, EXIT_STORAGE, res.stdout, res.stderr, ["read-only"])

    full = tmpfs(64)  # the page, its trace copy and a spectrogram do not fit in 64 KB
    res = cli("trace", "html", trace, "-o", str(full / "site"), cwd=tmp_path)
    one_line_error(res.returncode, EXIT_STORAGE, res.stdout, res.stderr, ["viewer could not be written"])
