"""The judges registered as tools (category evaluation) and used through the executor, and the
`audiomind judge ...` commands with --json."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from audiomind.artifacts import make_artifact
from audiomind.state import ToolCallRequest, ToolCallStatus, ToolCategory
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry


@pytest.fixture(scope="module")
def registry():
    return ToolRegistry.load()


def test_judges_are_registered_evaluation_tools(registry):
    for name in ("judge_edit", "judge_rubric", "judge_aura"):
        m = registry.get(name)
        assert m.category == ToolCategory.evaluation
        assert registry.availability(name) == (True, "ok")
        assert m.supports and m.not_for
    inv = registry.render_inventory()
    assert "## evaluation" in inv and "judge_rubric" in inv


def test_rubric_and_aura_tools_through_the_executor(registry, rubric_clips, tmp_path, monkeypatch):
    monkeypatch.delenv("AUDIOMIND_JUDGE_LLM", raising=False)
    monkeypatch.delenv("AUDIOMIND_JUDGE_FRONTEND", raising=False)
    art = make_artifact("a0", rubric_clips["beeps3"])
    ex = ToolExecutor(registry, tmp_path / "derived")
    res = ex.run([
        ToolCallRequest(tool="judge_rubric", arguments={"artifact": "a0", "instruction": "Three short beeps."}),
        ToolCallRequest(tool="judge_aura", arguments={"artifact": "a0", "question": "How many beeps are there?",
                                                      "reference": "Three.", "response": "Three beeps."}),
        ToolCallRequest(tool="judge_rubric", arguments={"artifact": "a0", "instruction": "x", "threshold": 2.0}),
    ], [art], step=0)
    ok = [c for c in res.tool_calls if c.status == ToolCallStatus.ok]
    assert {c.tool for c in ok} == {"judge_rubric", "judge_aura"}
    rub = next(c for c in ok if c.tool == "judge_rubric")
    assert rub.output["aligned"] is True and rub.output["judge_trace"].startswith(str(tmp_path / "derived"))
    assert next(c for c in ok if c.tool == "judge_aura").output["score"] == 1.0
    rejected = [c for c in res.tool_calls if c.status == ToolCallStatus.rejected]
    assert len(rejected) == 1 and "threshold" in rejected[0].error
    assert any(e.tool == "judge_rubric" and e.claim.startswith("Instruction following") for e in res.evidence)


@pytest.mark.slow
def test_edit_tool_through_the_executor(registry, edit_pairs, tmp_path):
    p = edit_pairs["delete"]
    arts = [make_artifact("a0", p.original_path), make_artifact("a1", p.edited_path)]
    ex = ToolExecutor(registry, tmp_path / "derived")
    res = ex.run([ToolCallRequest(tool="judge_edit", arguments={"artifact": "a1", "original_artifact": "a0",
                                                                "instruction": p.instruction})], arts, step=0)
    call = res.tool_calls[0]
    assert call.status == ToolCallStatus.ok, call.error
    assert call.output["effectiveness"]["label"] == "effective"
    assert call.output["operation"] == "delete" and "spice" in call.output["substitutes"]
    assert any("Edit_score" in e.claim for e in res.evidence)


def test_cli_rubric_and_aura_json(rubric_clips, tmp_path):
    from audiomind.cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["judge", "rubric", str(rubric_clips["beeps3"]), "Five short beeps.", "--json",
                              "--trace-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["judge"] == "rubric" and data["aligned"] is False and data["trace_path"]
    out = runner.invoke(app, ["judge", "aura", "-q", "Is the speaker female?", "-r", "Yes.", "-a", "No.", "--json",
                              "--trace-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["judge"] == "aura" and data["score"] == 0.0 and data["entailment"]["status"] == "skipped"
    out = runner.invoke(app, ["judge", "edit", str(rubric_clips["beeps3"]), str(rubric_clips["man"])])
    assert out.exit_code == 2 and "instruction" in out.output


class _SpyExecutor(ToolExecutor):
    """The run's executor, recording every tool it is asked to run."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.asked: list[str] = []

    def run(self, requests, artifacts, step, issued_by="planner"):
        self.asked += [r.tool for r in requests]
        return super().run(requests, artifacts, step, issued_by=issued_by)


def test_a_judge_tool_runs_its_tools_through_the_runs_executor(registry, rubric_clips, tmp_path, monkeypatch):
    monkeypatch.delenv("AUDIOMIND_JUDGE_LLM", raising=False)
    monkeypatch.delenv("AUDIOMIND_JUDGE_FRONTEND", raising=False)
    art = make_artifact("a0", rubric_clips["beeps3"])
    ex = _SpyExecutor(registry, tmp_path / "derived")
    (call,) = ex.run([ToolCallRequest(tool="judge_rubric", arguments={"artifact": "a0",
                                                                      "instruction": "Three short beeps."})],
                     [art], step=0).tool_calls
    assert call.status == ToolCallStatus.ok, call.error
    assert ex.asked[0] == "judge_rubric" and {"tagging", "vad", "count_events"} <= set(ex.asked[1:])
    # the run's tool policy applies to the judge's own calls: a run that enables only the judge
    strict = _SpyExecutor(registry, tmp_path / "strict", allowed={"judge_rubric"})
    (call,) = strict.run([ToolCallRequest(tool="judge_rubric", arguments={"artifact": "a0",
                                                                          "instruction": "Three short beeps."})],
                         [art], step=0).tool_calls
    assert call.status == ToolCallStatus.ok, call.error
    from audiomind.trace import load_trace

    inner = load_trace(call.output["judge_trace"]).tool_calls
    perception = [c for c in inner if c.tool != "judge_rubric"]
    assert perception and all(c.status == ToolCallStatus.rejected and "not enabled" in c.error for c in perception)
