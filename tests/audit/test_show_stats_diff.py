"""The timeline, `trace show`, `trace stats`, `trace diff` and `trace validate` on real traces."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from audiomind.audit.diff import diff_states
from audiomind.audit.stats import aggregate, bin_of, is_correct, load_traces
from audiomind.audit.timeline import build_timeline
from audiomind.cli import app
from audiomind.state import EvidenceState
from audiomind.trace import load_trace

runner = CliRunner()


def test_timeline_places_every_item_once(runs):
    for run in runs.values():
        st = run.state
        steps = build_timeline(st)
        assert [s.node for s in steps] == [t.node for t in st.timings]  # no "unplaced" step
        calls = [c.id for s in steps for c in s.tool_calls]
        evidence = [e.id for s in steps for e in s.evidence]
        assert sorted(calls) == sorted(c.id for c in st.tool_calls) and len(set(calls)) == len(calls)
        assert sorted(evidence) == sorted(e.id for e in st.evidence) and len(set(evidence)) == len(evidence)
        assert [s.observation.id for s in steps if s.node in ("perceive", "relisten")] == [o.id for o in st.observations]
        assert [s.decision for s in steps if s.node == "decide"] == st.decisions
        # planner calls sit in the execute_tools step of their decision
        for s in steps:
            if s.node == "execute_tools":
                assert s.tool_calls and all(c.issued_by == "planner" and c.step == s.decision.step for c in s.tool_calls)


def test_timeline_without_timings_uses_the_graph_order(runs):
    st = runs["crop"].state.model_copy(update={"timings": []})
    steps = build_timeline(st)
    assert [s.node for s in steps] == [t.node for t in runs["crop"].state.timings]
    assert sum(len(s.evidence) for s in steps) == len(st.evidence)


def test_timeline_shows_what_no_node_claims(runs):
    st = runs["beeps"].state.model_copy(deep=True)
    orphan = st.tool_calls[0].model_copy(update={"id": "call_0123456789", "issued_by": "planner", "step": 9})
    st.tool_calls.append(orphan)
    steps = build_timeline(st)
    assert steps[-1].node == "unplaced" and steps[-1].tool_calls == [orphan]


def test_show_prints_every_node_and_the_answer(runs):
    run = runs["crop"]
    r = runner.invoke(app, ["trace", "show", str(run.path)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    for i, t in enumerate(run.state.timings):
        assert f"{i}. {t.node}" in r.output
    st = run.state
    assert "RELISTEN" in r.output and "re-listen to a1" in r.output and "crop" in r.output
    assert f"Answer: {st.final_answer.choice}" in r.output and st.final_answer.cited_evidence_ids[0] in r.output
    for d in st.decisions:
        assert d.rationale[:60] in r.output.replace("\n", " ") or d.rationale[:40] in r.output
    verbose = runner.invoke(app, ["trace", "show", "-v", str(run.path)], env={"COLUMNS": "200"})
    assert verbose.exit_code == 0 and all(e.id in verbose.output for e in st.evidence)


def test_show_rejects_a_broken_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = runner.invoke(app, ["trace", "show", str(bad)])
    assert r.exit_code == 2 and "not a readable trace" in r.output and "Traceback" not in r.output


def test_stats_over_real_runs(runs, tmp_path):
    folder = tmp_path / "batch"
    folder.mkdir()
    for run in runs.values():
        shutil.copy(run.path, folder / run.path.name)
    (folder / "broken.json").write_text("{}")
    traces, bad = load_traces([folder])
    assert len(traces) == len(runs) and [b[0].endswith("broken.json") for b in bad] == [True]
    stats = aggregate(traces)
    states = [r.state for r in runs.values()]
    n = len(states)
    assert stats["traces"] == n and stats["outcomes"] == {"answered": n}
    planner = [sum(c.issued_by == "planner" for c in s.tool_calls) for s in states]
    assert stats["calls_per_question"]["planner"]["total"] == sum(planner)
    assert stats["calls_per_question"]["all"]["total"] == sum(len(s.tool_calls) for s in states)
    assert stats["relisten"]["rate"] == 1 / n  # only the crop run re-listens
    assert stats["tools"]["crop"]["by_planner"] == 1 and stats["tools"]["probe"]["questions"] == n
    assert stats["nodes"]["decide"]["runs"] == sum(len(s.decisions) for s in states)
    acc = stats["accuracy"]
    assert acc["overall"] == {"n": n, "correct": sum(bool(is_correct(s)) for s in states),
                              "accuracy": round(sum(bool(is_correct(s)) for s in states) / n, 4)}
    assert sum(b["questions"] for b in acc["by_tool_calls"].values()) == n
    assert acc["by_tool_calls"][bin_of(planner[list(runs).index("crop")])]["questions"] >= 1

    r = runner.invoke(app, ["trace", "stats", str(folder), "--json"])
    assert r.exit_code == 0, r.output
    payload = json.loads(r.output)
    assert payload["traces"] == n and payload["unreadable"][0]["file"].endswith("broken.json")
    r = runner.invoke(app, ["trace", "stats", str(folder)], env={"COLUMNS": "160"})
    assert r.exit_code == 0 and "accuracy by number of planner tool calls" in r.output and "time per node" in r.output


def test_accuracy_bins_and_grading(runs):
    assert [bin_of(i) for i in range(8)] == ["0", "1", "2-3", "2-3", "4-5", "4-5", "6+", "6+"]
    st = runs["beeps"].state
    assert is_correct(st) is True
    letter = chr(65 + st.final_answer.choice_index)
    assert is_correct(st.model_copy(update={"question": st.question.model_copy(update={"ground_truth": letter})}))
    wrong = st.model_copy(update={"question": st.question.model_copy(update={"ground_truth": "6"})})
    assert is_correct(wrong) is False
    assert is_correct(st.model_copy(update={"question": st.question.model_copy(update={"ground_truth": None})})) is None
    # bins by a wrong answer with many planner calls
    many = wrong.model_copy(update={"tool_calls": [c.model_copy(update={"issued_by": "planner"}) for c in st.tool_calls]})
    stats = aggregate([(st, "a"), (many, "b")])
    bins = stats["accuracy"]["by_tool_calls"]
    assert bins["0"] == {"n": 1, "correct": 1, "accuracy": 1.0, "questions": 1}
    assert bins[bin_of(len(st.tool_calls))] == {"n": 1, "correct": 0, "accuracy": 0.0, "questions": 1}


def test_diff_identical_and_diverging(runs, edit):
    run = runs["beeps"]
    same = diff_states(run.state, load_trace(run.path))
    assert same.identical and same.decisions is None and same.answer["same"]

    # the same question run again from scratch: new ids and timings, the same behaviour
    def changed_answer(d):
        d["final_answer"].update(text="4", choice="4", choice_index=1, rationale="the planner thought otherwise")
        d["format_feedback"][0]["answer_text"] = "4"

    other = load_trace(edit(run, changed_answer))
    report = diff_states(run.state, other)
    assert not report.identical and report.first_divergence.what == "final_answer"
    assert report.answer == {**report.answer, "a": "5", "b": "4", "same": False, "correct_a": True, "correct_b": False}
    assert report.decisions is None and report.tool_calls is None and report.evidence is None

    def changed_decision(d):
        d["decisions"][0]["rationale"] = "Something else entirely."

    report = diff_states(run.state, load_trace(edit(run, changed_decision)))
    assert report.first_divergence.what == "decide" and report.decisions.fields == ["rationale"]

    def changed_tool(d):
        i = next(i for i, c in enumerate(d["tool_calls"]) if c["tool"] == "count_events")
        d["tool_calls"][i]["output"]["count"] = 4

    report = diff_states(run.state, load_trace(edit(run, changed_tool)))
    assert report.first_divergence.what == "perceive" and report.tool_calls.fields == ["output"]
    assert any("tool_calls[" in f for f in report.first_divergence.fields)


def test_diff_cli(runs, edit):
    run = runs["beeps"]
    r = runner.invoke(app, ["trace", "diff", str(run.path), str(run.path)])
    assert r.exit_code == 0 and "identical" in r.output
    other = edit(run, lambda d: d["decisions"][0].update(rationale="Different reasons."))
    r = runner.invoke(app, ["trace", "diff", str(run.path), str(other), "--json"])
    assert r.exit_code == 1
    payload = json.loads(r.output)
    assert payload["first_divergence"]["what"] == "decide" and payload["decisions"]["index"] == 0
    r = runner.invoke(app, ["trace", "diff", str(run.path), str(runs["weather"].path)], env={"COLUMNS": "160"})
    assert r.exit_code == 1 and "not about the same question" in r.output and "first divergence" in r.output


def test_validate_messages_point_at_the_item(runs, edit, tmp_path):
    """The audit group's `validate` (register() installs it; see audiomind.audit.cli)."""
    import typer

    from audiomind.audit.cli import register, validation_messages

    group = typer.Typer()
    register(group)
    assert validation_messages(runs["beeps"].path) == []
    r = runner.invoke(group, ["validate", str(runs["beeps"].path)])
    assert r.exit_code == 0 and "valid" in r.output
    bad = edit(runs["beeps"], lambda d: d["tool_calls"][1].__setitem__("status", "maybe"))
    call_id = json.loads(bad.read_text())["tool_calls"][1]["id"]
    r = runner.invoke(group, ["validate", str(bad)], env={"COLUMNS": "200"})
    assert r.exit_code == 1
    assert f"tool_calls/1/status ({call_id}): 'maybe' is not one of" in r.output
    r = runner.invoke(group, ["validate", str(bad), "--json"])
    assert json.loads(r.output)["invalid"] == 1
    notjson = tmp_path / "x.json"
    notjson.write_text("{oops")
    r = runner.invoke(group, ["validate", str(notjson)])
    assert r.exit_code == 1 and "not JSON" in r.output and "line 1" in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert runner.invoke(group, ["validate", str(empty)]).exit_code == 2
    # a trace folder: traces found recursively, derived-artifact folders skipped
    assert runner.invoke(group, ["validate", str(runs["crop"].path.parent)]).exit_code == 0
    # and whichever `validate` the main CLI ends up with: CI exit codes
    assert runner.invoke(app, ["trace", "validate", str(runs["beeps"].path)]).exit_code == 0
    assert runner.invoke(app, ["trace", "validate", str(bad)]).exit_code == 1


def test_state_model_is_what_the_tools_read(runs):
    """The audit modules read traces through the same model the runs write (no second schema)."""
    for run in runs.values():
        assert EvidenceState.model_validate_json(run.path.read_text()) == run.state
