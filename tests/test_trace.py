"""Traces of real runs: valid against the committed JSON Schema, lossless round trip, atomic files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audiomind import synth
from audiomind.api import AudioMind
from audiomind.resources import trace_schema_path
from audiomind.state import SCHEMA_VERSION
from audiomind.trace import load_trace, trace_json_schema, validate_trace_file


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trace")
    clip = synth.beeps(3, tmp / "beeps.wav")
    agent = AudioMind(trace_dir=tmp / "traces")
    return agent.ask(clip, "How many beeps are there?", ["2", "3", "4"])


def test_committed_schema_is_current():
    """traces/trace.schema.json is generated from the models (`audiomind trace schema -o ...`)."""
    assert json.loads(trace_schema_path().read_text()) == trace_json_schema()


def test_real_trace_validates_against_schema(real_trace):
    assert validate_trace_file(real_trace.trace_path) == []
    data = json.loads(Path(real_trace.trace_path).read_text())
    assert data["schema_version"] == SCHEMA_VERSION


def test_round_trip_is_lossless(real_trace):
    text = Path(real_trace.trace_path).read_text()
    loaded = load_trace(real_trace.trace_path)
    assert loaded.model_dump_json(indent=2) == text
    assert loaded == real_trace.state


def test_trace_records_the_whole_run(real_trace):
    st = real_trace.state
    assert st.artifacts[0].id == "a0" and len(st.artifacts[0].sha256) == 64
    assert st.perception_prompt and st.observations and st.plan and st.decisions
    assert st.evidence_summary and st.final_answer and st.outcome.status == "answered"
    assert {m.role for m in st.run.models} == {"planner", "frontend"}
    assert st.run.prompt_hashes and "final_answer" in st.run.prompt_hashes
    assert st.run.versions.get("langgraph")
    nodes = [t.node for t in st.timings]
    assert nodes[:4] == ["ingest", "perception_prompt", "perceive", "plan"] and nodes[-1] == "finish"
    # every evidence item cites a tool call or observation that exists in the trace
    sources = {c.id for c in st.tool_calls} | {o.id for o in st.observations}
    assert all(e.source_id in sources for e in st.evidence)


def test_schema_validation_points_at_the_offending_path(real_trace, tmp_path):
    data = json.loads(Path(real_trace.trace_path).read_text())
    data["tool_calls"][0]["status"] = "maybe"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    problems = validate_trace_file(bad)
    assert problems and problems[0].startswith("tool_calls/0/status")
