"""Reports: numbers checked on a results.jsonl whose statistics are known by construction, the Markdown and
PNG files, and the CLI. (A report of a real run is checked in test_mmar.py.)"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from audiomind.bench.cli import bench_app
from audiomind.bench.items import ItemResult
from audiomind.bench.report import build_report, percentile, tool_bin, write_report

PNG = b"\x89PNG\r\n\x1a\n"

# (tool_calls, relistens, correct, category, modality, wall_time_s)
ROWS = [
    (0, 0, True, "Signal Layer", "sound", 1.0),
    (0, 0, False, "Signal Layer", "sound", 2.0),
    (0, 1, True, "Perception Layer", "speech", 3.0),
    (1, 0, True, "Perception Layer", "speech", 4.0),
    (2, 0, False, "Semantic Layer", "speech", 5.0),
    (3, 1, True, "Semantic Layer", "music", 6.0),
    (4, 0, True, "Semantic Layer", "music", 7.0),
    (5, 2, False, "Cultural Layer", "music", 8.0),
    (6, 0, True, "Cultural Layer", "speech", 9.0),
    (9, 1, False, "Cultural Layer", "speech", 10.0),
]


@pytest.fixture
def run_dir(tmp_path):
    lines = []
    for i, (calls, rel, ok, cat, mod, t) in enumerate(ROWS):
        lines.append(ItemResult(
            id=f"q{i}", status="answered", prediction="x", tool_calls=calls, relistens=rel, correct=ok,
            wall_time_s=t, frontend_tool_calls=5, steps=calls + 1, input_tokens=100, output_tokens=10,
            cost_usd=0.001, benchmark="mmar", metadata={"category": cat, "modality": mod, "sub-category": "S"},
        ).model_dump_json())
    lines.append(ItemResult(id="gone", status="missing_audio", benchmark="mmar",
                            metadata={"category": "Signal Layer", "modality": "sound"}).model_dump_json())
    lines.append(ItemResult(id="crash", status="error", error="boom", wall_time_s=0.5, benchmark="mmar",
                            metadata={"category": "Signal Layer", "modality": "sound"}).model_dump_json())
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "run.json").write_text(json.dumps({"config": {"planner": "rules", "frontend": "cascade"}}))
    return tmp_path


def test_bins_and_percentiles():
    assert [tool_bin(n) for n in (0, 1, 2, 3, 4, 5, 6, 40)] == ["0", "1", "2-3", "2-3", "4-5", "4-5", "6+", "6+"]
    xs = [1.0, 2.0, 3.0, 4.0]
    assert percentile(xs, 50) == 2.5 and percentile(xs, 0) == 1.0 and percentile(xs, 100) == 4.0
    assert percentile([], 50) is None


def test_report_numbers_match_the_construction(run_dir):
    rep = build_report(run_dir)
    assert rep.statuses == {"answered": 10, "missing_audio": 1, "error": 1}
    assert (rep.overall.n, rep.overall.scored, rep.overall.correct) == (12, 10, 6)
    assert rep.overall.accuracy == 60.0
    cat = rep.groups["category"]
    assert (cat["Signal Layer"].n, cat["Signal Layer"].scored, cat["Signal Layer"].accuracy) == (4, 2, 50.0)
    assert cat["Semantic Layer"].accuracy == pytest.approx(66.67)
    assert rep.groups["modality"]["music"].accuracy == pytest.approx(66.67)
    assert "language" not in rep.groups  # only grouping fields the items carry

    b = rep.behaviour  # 11 items ran (the missing one did not)
    assert b.items == 11
    assert b.mean_tool_calls == pytest.approx(round(30 / 11, 3))
    assert b.zero_tool_share == pytest.approx(round(100 * 4 / 11, 2))  # three answered + the error item
    assert b.relisten_rate == pytest.approx(round(100 * 4 / 11, 2))
    acc = {k: (v.n, v.scored, v.accuracy) for k, v in b.by_tool_calls.items()}
    assert acc == {"0": (4, 3, pytest.approx(66.67)), "1": (1, 1, 100.0), "2-3": (2, 2, 50.0),
                   "4-5": (2, 2, 50.0), "6+": (2, 2, 50.0)}

    lat = rep.latency
    assert lat.n == 11 and lat.max_s == 10.0 and lat.p50_s == 5.0
    assert lat.mean_s == pytest.approx(round(55.5 / 11, 3))
    assert (rep.input_tokens, rep.output_tokens) == (1000 + 0, 100)
    assert rep.cost_usd == pytest.approx(0.01)


def test_write_report_files(run_dir):
    path = write_report(run_dir)
    md = path.read_text()
    assert path == run_dir / "report.md"
    for heading in ("## Accuracy by category", "## Accuracy by modality", "## Tool use and accuracy", "## Latency"):
        assert heading in md
    assert "| 2-3 | 2 | 2 | 1 | 50.00 |" in md
    assert "Configuration: planner=rules, frontend=cascade" in md
    for png in ("accuracy_by_category.png", "accuracy_by_modality.png", "accuracy_by_sub_category.png",
                "tool_calls_vs_accuracy.png", "latency.png"):
        data = (run_dir / "plots" / png).read_bytes()
        assert data[:8] == PNG and len(data) > 2000
        assert f"(plots/{png})" in md
    assert json.loads((run_dir / "report.json").read_text())["overall"]["correct"] == 6


def test_report_cli(run_dir, tmp_path_factory):
    res = CliRunner().invoke(bench_app, ["report", str(run_dir), "--no-plots"])
    assert res.exit_code == 0, res.output
    assert "60.00" in res.output and not (run_dir / "plots").exists()
    empty = tmp_path_factory.mktemp("empty")
    bad = CliRunner().invoke(bench_app, ["report", str(empty)])
    assert bad.exit_code == 2 and "no results.jsonl" in " ".join(bad.output.split())


# (correct, confidence, category): confident answers (>= 0.7) are 3 right of 4; the rest 1 right of 4
CONF_ROWS = [
    (True, 0.95, "Signal Layer"), (True, 0.9, "Signal Layer"), (False, 0.75, "Perception Layer"),
    (True, 0.7, "Perception Layer"), (False, 0.69, "Perception Layer"), (True, 0.4, "Signal Layer"),
    (False, 0.1, "Signal Layer"), (False, None, "Perception Layer"),
]


@pytest.fixture
def conf_run(tmp_path):
    lines = [ItemResult(id=f"c{i}", status="answered", prediction="x", correct=ok, confidence=conf,
                        confidence_reason="test", benchmark="synthetic",
                        metadata={"category": cat}).model_dump_json()
             for i, (ok, conf, cat) in enumerate(CONF_ROWS)]
    lines.append(ItemResult(id="gone", status="missing_audio", confidence=0.99, benchmark="synthetic",
                            metadata={"category": "Signal Layer"}).model_dump_json())  # not scored: left out
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_selective_accuracy_and_calibration(conf_run):
    rep = build_report(conf_run)
    s = rep.selective
    assert s is not None and s.threshold == 0.7
    assert (s.scored, s.with_confidence, s.confident, s.confident_correct) == (8, 7, 4, 3)
    assert (s.coverage, s.confident_accuracy, s.rest, s.rest_accuracy) == (50.0, 75.0, 4, 25.0)
    sig, per = rep.selective_by["category"]["Signal Layer"], rep.selective_by["category"]["Perception Layer"]
    assert (sig.confident, sig.confident_accuracy, sig.rest_accuracy) == (2, 100.0, 50.0)
    assert (per.confident, per.confident_accuracy, per.coverage, per.rest_accuracy) == (2, 50.0, 50.0, 0.0)
    bins = {b.label: (b.n, b.correct, b.accuracy) for b in rep.calibration}
    assert bins == {"0.0-0.3": (1, 0, 0.0), "0.3-0.5": (1, 1, 100.0), "0.5-0.7": (1, 0, 0.0),
                    "0.7-0.8": (2, 1, 50.0), "0.8-0.9": (0, 0, None), "0.9-1.0": (2, 2, 100.0),
                    "none": (1, 0, 0.0)}
    assert rep.calibration[-2].mean_confidence == pytest.approx(0.925)
    md = write_report(conf_run, plots=False).read_text()
    assert "## Selective accuracy" in md and "## Calibration" in md
    assert "| **all** | 8 | 4 | 50.00 | 75.00 | 4 | 25.00 |" in md
    assert "| category: Signal Layer | 4 | 2 | 50.00 | 100.00 | 2 | 50.00 |" in md
    assert "| **all** | 0.9-1.0 | 2 | 2 | 100.00 | 0.93 |" in md


def test_no_confidence_no_selective_section(run_dir):
    rep = build_report(run_dir)
    assert rep.selective is None and not rep.calibration
    assert "Selective accuracy" not in write_report(run_dir, plots=False).read_text()


# ---------------------------------------------------------------- a judge task's run (edit-eval)


def _edit_output(edit_score: float, faith_score: float, eff: float, op: str) -> dict:
    """The fields of an EditJudgeResult the report reads, as a judge trace records them."""
    label = "effective" if eff >= 0.6 else "partial" if eff >= 0.3 else "ineffective"
    return {"edit_score": edit_score, "faith_score": faith_score, "faith_agreement": -faith_score,
            "effectiveness": {"label": label, "score": eff}, "preservation": {"score": 1.0},
            "quality": {"score": 1.0}, "expectation": {"operation": op, "expected_difference": "x"},
            "predicted_difference": "y", "predicted_commonality": "z", "unverifiable": []}


def test_judge_run_gets_per_operation_and_label_tables(tmp_path):
    """An edit-eval run folder built by hand (results.jsonl, one trace per item with the judge's output, the
    task's run.json): per-operation means and the verdicts' figures against the labels, computed by hand."""
    run = tmp_path / "edit_run"
    (run / "traces").mkdir(parents=True)
    # id, operation given by the row (None: the judge's reading), label, Edit_score, Faith_score, effectiveness
    table = [("a1", "add", True, 0.80, -0.30, 0.90), ("a2", "add", False, 0.20, -0.10, 0.10),
             ("d1", "delete", True, 0.60, -0.50, 0.70), ("d2", None, False, 0.40, -0.20, 0.65),
             ("r1", "replace", True, 0.70, -0.40, 0.15)]
    lines = []
    for i, op, label, es, fs, eff in table:
        trace = {"tool_calls": [{"tool": "tagging", "output": {}},
                                {"tool": "judge_edit", "output": _edit_output(es, fs, eff, op or "delete")}]}
        (run / "traces" / f"{i}.json").write_text(json.dumps(trace))
        pred = "effective" if eff >= 0.6 else "partial" if eff >= 0.3 else "ineffective"
        meta = {"operation": op} if op else {}
        lines.append(ItemResult(id=i, status="answered", prediction=pred, confidence=eff, benchmark="edit-eval",
                                answer="true" if label else "false", correct=(pred == "effective") == label,
                                metadata=meta, trace_path=f"traces/{i}.json").model_dump_json())
    (run / "results.jsonl").write_text("\n".join(lines) + "\n")
    (run / "run.json").write_text(json.dumps({"config": {"task": "edit-eval", "judge": "edit"}}))
    write_report(run)
    rep = json.loads((run / "report.json").read_text())
    assert rep["selective"] is None  # p(positive) is not an answer's confidence
    judge = rep["judge"]
    ops = {o["operation"]: o for o in judge["operations"]}
    assert judge["operation_source"] == {"row": 4, "judge": 1}
    assert ops["add"]["n"] == 2 and ops["add"]["edit_score"] == pytest.approx(0.5, abs=1e-4)
    assert ops["delete"]["n"] == 2 and ops["delete"]["faith_score"] == pytest.approx(-0.35, abs=1e-4)
    assert ops["delete"]["effectiveness"] == pytest.approx(0.675, abs=1e-4)
    assert ops["delete"]["effective_share"] == 100.0 and ops["delete"]["accuracy"] == 50.0
    assert ops["all"]["n"] == 5 and ops["all"]["edit_score"] == pytest.approx(0.54, abs=1e-4)
    eff = judge["verdicts"][0]
    # verdicts (effective at >= 0.6) vs labels: a1 right, a2 right, d1 right, d2 wrong, r1 wrong -> 60 %
    assert eff["scorer"] == "effectiveness" and eff["accuracy"] == 60.0
    # AUC: positives 0.9, 0.7, 0.15 vs negatives 0.1, 0.65: wins 2 + 2 + 1 = 5 of 6
    assert eff["roc_auc"] == pytest.approx(5 / 6, abs=1e-4)
    # decisive (p <= 0.2 or >= 0.8): 0.9 (right), 0.1 (right), 0.15 (wrong) -> 3 of 5, 2 right
    assert (eff["decisive"], eff["decisive_share"], eff["decisive_accuracy"]) == (3, 60.0, 66.67)
    # ECE: bin 0.1-0.2 holds 0.1 (neg) and 0.15 (pos): |0.125 - 0.5| x 2; the rest one item each
    assert eff["ece"] == pytest.approx((2 * 0.375 + 0.1 + 0.3 + 0.65) / 5, abs=1e-4)
    es = judge["verdicts"][1]
    # Edit_score ranks every positive (0.8, 0.6, 0.7) above every negative (0.2, 0.4); no threshold: no accuracy
    assert es["scorer"] == "Edit_score" and es["accuracy"] is None and es["roc_auc"] == 1.0
    md = (run / "report.md").read_text()
    assert "## Judge: edit" in md and "| delete | 2 | 0.5000 | -0.3500 | 0.6750 | 100.00 | 2 | 50.00 |" in md
    assert "![reliability diagram](plots/reliability.png)" in md
    assert (run / "plots" / "reliability.png").stat().st_size > 1000


def test_answers_get_an_ece_and_a_coverage_accuracy_curve():
    from audiomind.bench.report import answer_calibration

    rows = ([{"confidence": 0.9, "correct": True}] * 8 + [{"confidence": 0.9, "correct": False}] * 2
            + [{"confidence": 0.3, "correct": False}] * 6 + [{"confidence": 0.3, "correct": True}] * 4)
    ece, curve = answer_calibration(rows)
    # bin 0.9: accuracy 0.8 (gap 0.1); bin 0.3: accuracy 0.4 (gap 0.1): ECE 0.1 up to float rounding
    assert ece == pytest.approx(0.1, abs=1e-4)
    by = {t: (cov, acc) for t, cov, acc in curve}
    assert by[0.0] == (100.0, 60.0) and by[0.5] == (50.0, 80.0) and by[0.9] == (50.0, 80.0)


def test_lines_that_are_not_result_rows_are_counted_and_said(run_dir):
    """A torn line, a line that is not an object with an id, and a row whose fields have the wrong types are
    left out of every figure, and the report says how many (Markdown, table, JSON); a clean run says nothing."""
    clean = build_report(run_dir)
    assert clean.skipped_lines == 0 and "left out" not in write_report(run_dir, plots=False).read_text()
    with (run_dir / "results.jsonl").open("a") as f:
        f.write('{"id": "torn", "status": "answ\n')
        f.write('["not", "an", "object"]\n')
        f.write(json.dumps({"id": "typed-wrong", "status": "answered", "tool_calls": "many"}) + "\n")
        f.write("\n")  # a blank line is no row and nothing left out
    rep = build_report(run_dir)
    assert rep.skipped_lines == 3
    assert (rep.overall.n, rep.overall.correct) == (clean.overall.n, clean.overall.correct)
    assert "**3 line(s) of results.jsonl were left out**" in write_report(run_dir, plots=False).read_text()
    out = CliRunner().invoke(bench_app, ["report", str(run_dir), "--no-plots"])
    assert out.exit_code == 0 and "lines left out" in out.output and "3 (unreadable" in out.output
    js = CliRunner().invoke(bench_app, ["report", str(run_dir), "--no-plots", "--json"])
    assert json.loads(js.output)["report"]["skipped_lines"] == 3
