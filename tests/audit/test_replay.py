"""`replay:TRACE.json`: re-running the graph with the recorded model outputs reproduces real runs exactly
(decisions, observations, tool calls, evidence, answer); planner tool calls are re-executed, so a
changed tool shows up as a difference; either half mixes with a live backend."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from audiomind.audit.audit import Auditor
from audiomind.audit.replay import replay
from audiomind.backends.base import BackendError, FrontEnd, ListenRequest, Planner
from audiomind.backends.frontends.replay import ReplayFrontEnd
from audiomind.backends.planners.replay import ReplayPlanner
from audiomind.cli import app
from audiomind.config import AgentConfig


def recorded(tmp_path, planner="replay", frontend="replay") -> AgentConfig:
    return AgentConfig(planner=planner, frontend=frontend, trace_dir=tmp_path)


def test_protocols(runs):
    path = runs["beeps"].path
    assert isinstance(ReplayPlanner(path), Planner)
    assert isinstance(ReplayFrontEnd(path, None), FrontEnd)


@pytest.mark.parametrize("name", ["beeps", "crop"])
def test_replay_reproduces_a_real_run_exactly(runs, tmp_path, name):
    run = runs[name]
    report, st = replay(run.path, recorded(tmp_path))
    assert report.identical, report.first_divergence
    assert report.answer_match and report.decisions_match and report.outcome == "answered"
    rec = run.state
    assert [d.model_dump(exclude={"step"}) for d in st.decisions] == [d.model_dump(exclude={"step"}) for d in rec.decisions]
    assert [(o.kind, o.artifact_ids, o.text) for o in st.observations] == \
        [(o.kind, o.artifact_ids, o.text) for o in rec.observations]
    assert [e.claim for e in st.evidence] == [e.claim for e in rec.evidence]
    assert st.final_answer.choice == rec.final_answer.choice and st.final_answer.rationale == rec.final_answer.rationale
    # the cited evidence ids are the replay's own (re-mapped), so the replay trace audits clean
    assert set(st.final_answer.cited_evidence_ids) <= {e.id for e in st.evidence}
    assert Auditor().audit_file(report.replayed).findings == []
    assert {m.kind for m in st.run.models} == {"replay"}
    assert st.question.metadata["replay_of"] == rec.run.run_id


def test_planner_tool_calls_are_re_executed(runs, edit, tmp_path):
    """Pretend the recorded crop came from an older tool version with another output: the replay
    runs today's tool, keeps the recorded decisions, and the diff names the call that changed."""
    run = runs["crop"]

    def older_tool(d):
        i = next(i for i, c in enumerate(d["tool_calls"]) if c["tool"] == "crop")
        d["tool_calls"][i]["tool_version"] = "0"
        d["tool_calls"][i]["output"] = {**d["tool_calls"][i]["output"], "note": "from the old crop"}

    report, _ = replay(edit(run, older_tool), recorded(tmp_path))
    assert report.decisions_match and report.answer_match and not report.identical
    div = report.diff["tool_calls"]
    assert div["a"]["tool"] == "crop" and div["a"]["issued_by"] == "planner"
    assert set(div["fields"]) == {"version", "output"}
    assert report.first_divergence["what"] == "execute_tools"


def test_format_retry_is_replayed(runs, edit, tmp_path):
    """Each recorded attempt comes back in order, so the format check fails and retries as recorded."""
    def two_attempts(d):
        ok = d["format_feedback"][0]
        d["format_feedback"] = [{"attempt": 1, "ok": False, "message": "the answer is not one of the choices",
                                 "answer_text": "five beeps"}, {**ok, "attempt": 2}]
        i = next(i for i, t in enumerate(d["timings"]) if t["node"] == "final_answer")
        d["timings"][i:i] = [dict(d["timings"][i]), dict(d["timings"][i + 1])]

    report, st = replay(edit(runs["beeps"], two_attempts), recorded(tmp_path))
    assert report.identical, report.first_divergence
    assert [(f.ok, f.answer_text) for f in st.format_feedback] == [(False, "five beeps"), (True, "5")]


def test_recorded_planner_with_a_live_front_end(runs, tmp_path):
    report, st = replay(runs["crop"].path, recorded(tmp_path, frontend="cascade"))
    assert report.answer_match and report.decisions_match
    assert [m.kind for m in st.run.models] == ["replay", "cascade"]


def test_live_planner_on_recorded_observations(runs, tmp_path):
    report, st = replay(runs["beeps"].path, recorded(tmp_path, planner="rules"))
    assert report.answer_match and report.decisions_match
    assert [m.kind for m in st.run.models] == ["rules", "replay"]


def test_replay_errors_are_clear(runs, tmp_path):
    with pytest.raises(BackendError, match="no trace file"):
        ReplayPlanner(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(BackendError, match="not a readable trace"):
        ReplayFrontEnd(bad)
    fe = ReplayFrontEnd(runs["crop"].path)
    st = runs["crop"].state
    with pytest.raises(BackendError, match="diverged"):  # the next recorded observation is a perception of a0
        fe.listen(ListenRequest(kind="relisten", artifacts=[st.artifacts[1]], prompt="p", prompt_id="x", question="q"))


def test_replay_refuses_another_question(runs, tmp_path):
    from audiomind.api import AudioMind

    agent = AudioMind(trace_dir=tmp_path, planner=ReplayPlanner(runs["beeps"].path))
    with pytest.raises(BackendError, match="recorded the question"):
        agent.ask(runs["beeps"].state.question.audio_path, "How many tones are there?", ["3", "4", "5", "6"])


def test_replay_cli(runs, tmp_path):
    r = CliRunner().invoke(app, ["trace", "replay", str(runs["beeps"].path), "--trace-dir", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    payload = json.loads(r.output)
    assert payload["answer_match"] and payload["decisions_match"] and payload["identical"]
    r = CliRunner().invoke(app, ["trace", "replay", str(tmp_path / "nope.json")])
    assert r.exit_code == 2 and "no trace file" in r.output
