"""OpenTelemetry export of traces (`audiomind trace export`, `audiomind ask --otlp`), checked at a real OTLP/HTTP
receiver on loopback (tests/audit/otlp_receiver.py: an HTTP server decoding the protobuf requests with
opentelemetry-proto, as a collector does): the GenAI span tree of a real offline agent run, recorded times,
no content unless asked for, judges' results as evaluation events, model-call spans, and clear failures
when the collector is unreachable (a warning and exit 0 for ask, an error and exit 1 for trace export)."""

from __future__ import annotations

import contextlib
import json
import socket
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind import synth
from audiomind.audit.otel import SCHEMA_URL, SEMCONV_VERSION, export_states, otlp_traces_url
from audiomind.cli import app
from audiomind.state import EvidenceState, ModelCall, ModelSpec, Question, ToolCallRequest
from audiomind.trace import load_trace, write_trace

from .otlp_receiver import OtlpReceiver

QUESTION = "How many beeps are there?"
N_BEEPS = 3
CONTENT_KEYS = {"input.value", "output.value", "gen_ai.input.messages", "gen_ai.output.messages",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.evaluation.explanation",
                "audiomind.answer.rationale", "audiomind.decision.rationale", "audiomind.ground_truth"}


def ns(iso: str) -> int:
    dt = datetime.fromisoformat(iso)
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def closed_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed


def strings(spans) -> list[str]:
    out = []
    for s in spans:
        out += [str(v) for v in s["attributes"].values()]
        out += [str(v) for e in s["events"] for v in e["attributes"].values()]
    return out


def export_cli(args: list[str]):
    return CliRunner().invoke(app, ["trace", "export", *args])


@pytest.fixture
def fast_timeout(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2")  # the exporter's own setting


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory) -> Path:
    """A minimal valid trace (no agent run) for the failure paths."""
    d = tmp_path_factory.mktemp("otel-small")
    clip = synth.beeps(1, d / "one.wav")
    return write_trace(EvidenceState(question=Question(text="Is there a beep?", audio_path=str(clip))), d / "t.json")


# ---- fast: URLs and failures ---------------------------------------------------------------------------
def test_otlp_url_gets_the_traces_path_once():
    assert otlp_traces_url("http://localhost:4318") == "http://localhost:4318/v1/traces"
    assert otlp_traces_url("http://localhost:6006/v1/traces") == "http://localhost:6006/v1/traces"
    assert otlp_traces_url("https://cloud.langfuse.com/api/public/otel/") == \
        "https://cloud.langfuse.com/api/public/otel/v1/traces"
    with pytest.raises(ValueError, match="http"):
        otlp_traces_url("localhost:4318")


def test_trace_export_to_an_unreachable_collector_is_a_clear_error(small_trace, fast_timeout):
    port = closed_port()
    res = export_cli([str(small_trace), "--otlp", f"http://127.0.0.1:{port}"])
    assert res.exit_code == 1
    msg = " ".join(res.stderr.split())
    assert msg.startswith("error: could not export run") and "connection refused" in msg
    assert f"127.0.0.1:{port}/v1/traces" in msg
    assert "Traceback" not in res.output


def test_trace_export_to_a_collector_that_refuses_names_the_status(small_trace):
    with OtlpReceiver(status=400) as r:
        res = export_cli([str(small_trace), "--otlp", r.url])
    assert res.exit_code == 1 and "HTTP status 400" in " ".join(res.stderr.split())


def test_trace_export_refuses_a_url_that_is_not_http(small_trace):
    res = export_cli([str(small_trace), "--otlp", "localhost:4318"])
    assert res.exit_code == 2 and "http(s) URL" in res.stderr


# ---- a real offline agent run --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from audiomind import AudioMind

    d = tmp_path_factory.mktemp("otel-run")
    clip = synth.beeps(N_BEEPS, d / "beeps.wav")
    result = AudioMind(planner="rules", frontend="cascade", trace_dir=str(d / "traces")).ask(clip, QUESTION)
    return result, Path(result.trace_path)


@pytest.fixture(scope="module")
def exported(run):
    """The run exported through the CLI without content, as the receiver got it."""
    _, path = run
    with OtlpReceiver() as r:
        res = export_cli([str(path), "--otlp", r.url, "--json"])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout), r.spans(), r.requests


@pytest.mark.slow
def test_the_span_tree_names_and_times_follow_the_trace(run, exported):
    result, path = run
    st = load_trace(path)
    report, spans, requests = exported
    assert report["spans"] == len(spans) and requests[0]["headers"]["content-type"] == "application/x-protobuf"
    roots = [s for s in spans if s["parent"] is None]
    assert len(roots) == 1
    root = roots[0]
    by_id = {s["span_id"]: s for s in spans}
    assert {s["trace_id"] for s in spans} == {root["trace_id"]} == {report["traces"][0]["trace_id"]}

    # the question: invoke_agent, with the pinned conventions recorded
    a = root["attributes"]
    assert root["name"] == "invoke_agent audiomind" and root["kind"] == "INTERNAL"
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "audiomind"
    assert a["openinference.span.kind"] == "AGENT"
    assert a["gen_ai.conversation.id"] == st.run.run_id == a["session.id"]
    assert a["audiomind.semconv_version"] == SEMCONV_VERSION
    assert root["scope_schema_url"] == SCHEMA_URL and root["resource"]["service.name"] == "audiomind"
    assert root["resource"]["audiomind.semconv_version"] == SEMCONV_VERSION
    assert a["audiomind.outcome.status"] == result.outcome.status
    # audio by reference: URI and sha256, never inlined
    assert a["audiomind.audio.sha256"] == st.artifacts[0].sha256
    assert "audiomind.audio.uri" not in a  # a path names a user and a folder: content, sent only when asked
    assert max(len(v) for v in strings(spans)) < 5000

    # recorded times, not export time
    assert root["start"] == ns(st.run.started_at)
    assert root["end"] >= ns(st.run.finished_at)

    # one CHAIN span per graph node, from the node timings
    nodes = [s for s in spans if s["attributes"].get("openinference.span.kind") == "CHAIN"]
    assert sorted(s["name"] for s in nodes) == sorted(t.node for t in st.timings)
    assert {"ingest", "perceive", "decide", "final_answer"} <= {s["name"] for s in nodes}
    assert all(s["parent"] == root["span_id"] for s in nodes)
    for t in st.timings:
        match = [s for s in nodes if s["name"] == t.node and s["start"] == ns(t.started_at)]
        assert match and match[0]["end"] - match[0]["start"] == round(t.duration_s * 1e9)

    # execute_tool spans under the node that ran them, with status, cache hit and the recorded duration
    tools = {s["attributes"]["gen_ai.tool.call.id"]: s for s in spans if s["name"].startswith("execute_tool ")}
    assert set(tools) == {c.id for c in st.tool_calls}
    for call in st.tool_calls:
        s = tools[call.id]
        ta = s["attributes"]
        assert s["name"] == f"execute_tool {call.tool}" and ta["gen_ai.tool.name"] == call.tool
        assert ta["gen_ai.operation.name"] == "execute_tool" and ta["openinference.span.kind"] == "TOOL"
        assert ta["audiomind.tool.status"] == call.status.value
        assert ta["audiomind.tool.cache_hit"] == (call.status.value == "cached")
        assert s["start"] == ns(call.started_at) and s["end"] - s["start"] == round(call.duration_s * 1e9)
        parent = by_id[s["parent"]]
        assert parent["attributes"].get("openinference.span.kind") == "CHAIN"
        assert parent["start"] - 1_000_000 <= s["start"] <= parent["end"] + 1_000_000
        assert ta["audiomind.tool.audio.sha256"] == [st.artifacts[0].sha256]
    counted = next(s for s in tools.values() if s["attributes"]["gen_ai.tool.name"] == "count_events")
    assert by_id[counted["parent"]]["name"] == "perceive"  # the cascade front end listened through it


@pytest.mark.slow
def test_no_content_leaves_without_include_content(run, exported):
    result, path = run
    _, spans, _ = exported
    keys = {k for s in spans for k in s["attributes"]} | {k for s in spans for e in s["events"] for k in e["attributes"]}
    assert not keys & CONTENT_KEYS
    text = "\n".join(strings(spans))
    assert QUESTION not in text and "beeps are there" not in text
    assert result.answer not in text
    st = load_trace(path)
    assert st.observations and st.observations[0].text[:40] not in text


@pytest.mark.slow
def test_include_content_sends_question_answer_and_tool_io(run):
    result, path = run
    with OtlpReceiver() as r:
        res = export_cli([str(path), "--otlp", r.url, "--include-content"])
        assert res.exit_code == 0, res.output
        spans = r.spans()
    root = next(s for s in spans if s["parent"] is None)["attributes"]
    assert QUESTION in root["input.value"] and root["output.value"] == result.answer
    messages = json.loads(root["gen_ai.input.messages"])
    assert {"type": "uri", "modality": "audio", "uri": Path(result.state.question.audio_path).as_uri()} \
        in messages[0]["parts"]
    counted = next(s for s in spans if s["name"] == "execute_tool count_events")["attributes"]
    assert json.loads(counted["gen_ai.tool.call.result"])["count"] == N_BEEPS
    assert json.loads(counted["gen_ai.tool.call.arguments"])["artifact"] == "a0"
    perceive = next(s for s in spans if s["name"] == "perceive")["attributes"]
    assert perceive["output.value"].startswith("Artifact a0")


@pytest.mark.slow
def test_model_calls_become_chat_and_generate_content_spans_in_their_node(run):
    """The offline run makes no model request; the same trace with two recorded requests added (an OpenAI
    planner's decide, a Gemini front end's perception) maps them to LLM spans placed in their nodes."""
    _, path = run
    st = load_trace(path)
    st.run.models = [ModelSpec(role="planner", spec="openai:gpt-4o-mini@http://127.0.0.1:8000/v1", kind="openai",
                               model="gpt-4o-mini", base_url="http://127.0.0.1:8000/v1",
                               decoding={"temperature": 0.0}),
                     ModelSpec(role="frontend", spec="gemini:gemini-2.5-flash", kind="gemini",
                               model="gemini-2.5-flash")]
    st.model_calls = [ModelCall(role="planner", purpose="decide", backend="openai", latency_s=0.25,
                                input_tokens=812, output_tokens=64, output={"action": "ANSWER"}),
                      ModelCall(role="frontend", purpose="perception", backend="gemini", latency_s=1.5,
                                input_tokens=2048, output_tokens=120, output="I hear three beeps.")]
    with OtlpReceiver() as r:
        export_states([(st, None)], r.url)
        spans = r.spans()
    by_id = {s["span_id"]: s for s in spans}
    chat = next(s for s in spans if s["name"] == "chat gpt-4o-mini")
    ca = chat["attributes"]
    assert chat["kind"] == "CLIENT" and ca["openinference.span.kind"] == "LLM"
    assert ca["gen_ai.operation.name"] == "chat" and ca["gen_ai.provider.name"] == "openai"
    assert ca["gen_ai.request.model"] == "gpt-4o-mini" and ca["gen_ai.request.temperature"] == 0.0
    assert ca["gen_ai.usage.input_tokens"] == 812 and ca["gen_ai.usage.output_tokens"] == 64
    assert ca["server.address"] == "127.0.0.1" and ca["server.port"] == 8000
    decide = by_id[chat["parent"]]
    assert decide["name"] == "decide" and chat["start"] == decide["start"]
    assert chat["end"] - chat["start"] == 250_000_000
    gen = next(s for s in spans if s["name"] == "generate_content gemini-2.5-flash")
    assert gen["attributes"]["gen_ai.provider.name"] == "gcp.gemini"
    assert by_id[gen["parent"]]["name"] == "perceive"
    assert "output.value" not in gen["attributes"] and "gen_ai.output.messages" not in gen["attributes"]
    root = next(s for s in spans if s["parent"] is None)["attributes"]
    assert root["gen_ai.provider.name"] == "openai" and root["gen_ai.request.model"] == "gpt-4o-mini"


@pytest.mark.slow
def test_judge_results_arrive_as_evaluation_events(run, tmp_path):
    """judge_aura run for real through the executor (as the agent would call it), its call added to the run's
    trace; and the judge's own trace. Both export its score as a gen_ai.evaluation.result event."""
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry

    _, path = run
    st = load_trace(path)
    ex = ToolExecutor(ToolRegistry.load(), tmp_path / "derived")
    res = ex.run([ToolCallRequest(tool="judge_aura", arguments={
        "question": QUESTION, "reference": "Three.", "response": "I hear three beeps."})], st.artifacts[:1], step=1)
    call = res.tool_calls[0]
    assert call.status.value == "ok", call.error
    st.tool_calls.append(call)
    judge_trace = Path(call.output["judge_trace"])
    with OtlpReceiver() as r:
        export_states([(st, None), (load_trace(judge_trace), str(judge_trace))], r.url)
        spans = r.spans()
    judged = [s for s in spans if s["name"] == "execute_tool judge_aura"]
    assert len(judged) == 2  # the agent's call, and the judge's own record of itself
    for s in judged:
        assert s["attributes"]["openinference.span.kind"] == "EVALUATOR"
        events = [e for e in s["events"] if e["name"] == "gen_ai.evaluation.result"]
        assert len(events) == 1
        ev = events[0]["attributes"]
        assert ev["gen_ai.evaluation.name"] == "judge_aura"
        assert ev["gen_ai.evaluation.score.value"] == pytest.approx(call.output["score"])
        assert ev["gen_ai.evaluation.score.label"] == f"category_{call.output['category']}"
        assert "gen_ai.evaluation.explanation" not in ev  # the judge's reasoning is content
        assert events[0]["time"] == s["end"]


@pytest.mark.slow
def test_ask_with_an_unreachable_collector_warns_once_and_keeps_the_run(tmp_path, fast_timeout):
    clip = synth.beeps(2, tmp_path / "two.wav")
    port = closed_port()
    res = CliRunner().invoke(app, ["ask", str(clip), QUESTION, "--trace-dir", str(tmp_path / "traces"),
                                   "--otlp", f"http://127.0.0.1:{port}"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: OpenTelemetry export skipped")
    assert "connection refused" in lines[0] and f"127.0.0.1:{port}" in lines[0]
    traces = list((tmp_path / "traces").glob("*.json"))
    assert len(traces) == 1 and str(traces[0]) in lines[0]
    assert load_trace(traces[0]).outcome.status == "answered"


@pytest.mark.slow
def test_ask_with_a_collector_sends_the_finished_run(tmp_path):
    clip = synth.beeps(2, tmp_path / "two.wav")
    with OtlpReceiver() as r:
        res = CliRunner().invoke(app, ["ask", str(clip), QUESTION, "--trace-dir", str(tmp_path / "traces"),
                                       "--otlp", r.url])
        spans = r.spans()
    assert res.exit_code == 0, res.output
    assert not res.stderr.strip()
    trace = load_trace(next((tmp_path / "traces").glob("*.json")))
    root = next(s for s in spans if s["parent"] is None)
    assert root["attributes"]["gen_ai.conversation.id"] == trace.run.run_id
    assert {s["attributes"]["gen_ai.tool.call.id"] for s in spans if s["name"].startswith("execute_tool")} == \
        {c.id for c in trace.tool_calls}
