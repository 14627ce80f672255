"""The judges as benchmark tasks (edit-eval, rubric-judge, aura): rows read with their problems, the verdict
scored against labels, and real 3-item runs of each judge through the batch runner (edit-eval killed with
SIGKILL mid-run and resumed, as tests/bench/test_runner.py does for agents), then `bench report`.

Audio is real and true by construction: edit pairs made by audiomind.judges.pairs (the judge tests' fixture
recipe: a woman's flite sentence with a telephone added, paper crumpling removed, and a no-op byte copy),
rubric and AURA clips made by audiomind.synth."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from audiomind.bench.items import ItemResult
from audiomind.bench.report import reliability, roc_auc, verdict_scores
from audiomind.bench.tasks import make_task, task_names
from audiomind.bench.tasks.judging import label_value

REPO = Path(__file__).resolve().parents[3]


def _write(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


# ---------------------------------------------------------------- rows and scoring (no models)


def test_registered_and_rows_read_with_their_problems(tmp_path):
    assert {"edit-eval", "rubric-judge", "aura"} <= set(task_names())
    (tmp_path / "a.wav").write_bytes(b"RIFF")  # only the path policy looks at it here
    (tmp_path / "b.wav").write_bytes(b"RIFF")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.wav"
    outside.write_bytes(b"RIFF")
    src = _write(tmp_path / "pairs.jsonl", [
        {"id": "ok", "original": "a.wav", "edited": "b.wav", "instruction": "Add a bell.", "label": True,
         "kind": "add", "base": "b1"},
        {"id": "no_instr", "original": "a.wav", "edited": "b.wav"},
        {"id": "ok", "original": "a.wav", "edited": "b.wav", "instruction": "Remove the bell."},
        {"id": "far", "original": str(outside), "edited": "b.wav", "instruction": "Remove the bell."},
        {"id": "badlabel", "original": "a.wav", "edited": "b.wav", "instruction": "Add a bell.", "label": "maybe"},
        "not json",
        {"id": "gone", "original": "a.wav", "edited": "missing.wav", "instruction": "Add a bell.",
         "operation": "add"},
    ])
    task = make_task("edit-eval")
    loaded = task.load_items(src)
    by = {it.id: it for it in loaded.items}
    ok = by["ok"]
    assert ok.error is None and ok.audio_path == str((tmp_path / "a.wav").resolve())
    assert ok.extra_audio == [str((tmp_path / "b.wav").resolve())] and ok.question == "Add a bell."
    assert ok.answer == "true" and ok.metadata["kind"] == "add" and ok.metadata["base"] == "b1"
    assert "instruction: Field required" in by["no_instr"].error and by["no_instr"].error.startswith("pairs.jsonl:2:")
    dup = next(it for it in loaded.items if it.id.startswith("ok@"))
    assert "duplicate id 'ok' (first on line 1)" in dup.error
    assert by["far"].error.startswith("pairs.jsonl:4: audio path refused")
    assert "label" in by["badlabel"].error
    assert any(it.error and "pairs.jsonl:6: not valid JSON" in it.error for it in loaded.items)
    assert by["gone"].error is None and by["gone"].metadata["operation"] == "add"  # missing: the runner says so
    with pytest.raises(ValueError, match="bad row"):
        task.load_items(src, strict=True)

    aura = make_task("aura")
    arows = _write(tmp_path / "aura.jsonl", [
        {"id": 1, "audio": "a.wav", "question": "How many beeps?", "response": "Three.", "reference": "3 beeps",
         "label": 0.5},
        {"id": 2, "audio": "a.wav", "question": "How many beeps?", "response": "Three."},
        {"id": 3, "audio": "a.wav", "question": "Q?", "response": "R", "reference": "R", "label": 1.5},
    ])
    items = {it.id: it for it in aura.load_items(arows).items}
    assert items["1"].error is None and items["1"].answer == "0.5"
    assert items["1"].metadata["judge_inputs"] == {"response": "Three.", "reference": "3 beeps"}
    assert 'no "reference"' in items["2"].error
    assert "label" in items["3"].error
    with pytest.raises(ValueError, match="threshold"):
        make_task("rubric-judge", {"threshold": "high"})
    assert make_task("rubric-judge", {"threshold": "0.6"}).threshold == 0.6


@pytest.mark.parametrize("task_name,fields", [
    ("edit-eval", {"original": "a.wav", "edited": "b.wav", "instruction": "Add a bell."}),
    ("rubric-judge", {"audio": "a.wav", "instruction": "A bell rings."}),
])
def test_binary_labels_read_as_label_files_write_them(tmp_path, task_name, fields):
    """A new user's label file writes 1/0 or yes/no as often as true/false: each form is the same label; a value
    that is none of them is still refused, saying what is accepted."""
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    (tmp_path / "b.wav").write_bytes(b"RIFF")
    labels = {"int1": 1, "int0": 0, "str1": "1", "str0": " 0 ", "yes": "Yes", "no": "NO", "true": True,
              "false": False, "strtrue": "TRUE", "strfalse": "false", "float1": 1.0, "none": None,
              "two": 2, "half": 0.5, "maybe": "maybe", "empty": "", "list": [1]}
    src = _write(tmp_path / "rows.jsonl", [{"id": k, **fields, "label": v} for k, v in labels.items()])
    items = {it.id: it for it in make_task(task_name).load_items(src).items}
    for k in ("int1", "str1", "yes", "true", "strtrue", "float1"):
        assert items[k].error is None and items[k].answer == "true", k
    for k in ("int0", "str0", "no", "false", "strfalse"):
        assert items[k].error is None and items[k].answer == "false", k
    assert items["none"].error is None and items["none"].answer is None
    for k in ("two", "half", "maybe", "empty", "list"):
        assert "label" in items[k].error and "must be true/false, yes/no or 1/0" in items[k].error, k


def test_verdict_scored_against_the_label():
    from audiomind.bench.items import BenchItem

    task = make_task("rubric-judge")

    def item(answer):
        return BenchItem(id="x", benchmark="rubric-judge", audio_path="a", question="q", answer=answer)

    def res(pred, status="answered"):
        return ItemResult(id="x", status=status, prediction=pred, confidence=0.9)

    assert task.score(item("true"), res("aligned")) is True
    assert task.score(item("false"), res("aligned")) is False
    assert task.score(item("false"), res("misaligned")) is True
    assert task.score(item(None), res("aligned")) is None
    assert task.score(item("true"), res(None, status="error")) is None
    assert make_task("aura").score(item("0.5"), res("correct")) is None  # a graded label is not a binary truth
    assert label_value("true") == 1.0 and label_value("0.25") == 0.25 and label_value(None) is None


def test_reliability_auc_and_decisive_figures_by_hand():
    ps = [0.95, 0.85, 0.7, 0.3, 0.1, 0.05]
    ys = [True, False, True, False, False, True]
    # AUC: positives 0.95, 0.7, 0.05 vs negatives 0.85, 0.3, 0.1: wins 3 + 2 + 0 = 5 of 9
    assert roc_auc(ps, ys) == round(5 / 9, 4)
    bins, ece = reliability(ps, ys)
    filled = {(round(b.lo, 1)): (b.n, b.mean_p, b.positive_rate) for b in bins if b.n}
    assert filled == {0.0: (1, 0.05, 1.0), 0.1: (1, 0.1, 0.0), 0.3: (1, 0.3, 0.0), 0.7: (1, 0.7, 1.0),
                      0.8: (1, 0.85, 0.0), 0.9: (1, 0.95, 1.0)}
    assert ece == pytest.approx((0.95 + 0.1 + 0.3 + 0.3 + 0.85 + 0.05) / 6, abs=1e-4)
    vs = verdict_scores("p", ps, ys, 0.5, True)
    assert vs.accuracy == pytest.approx(100 * 4 / 6, abs=0.01)  # at 0.5 right: 0.95, 0.7, 0.3, 0.1
    # decisive: 0.95 (right), 0.85 (wrong), 0.1 (right), 0.05 (wrong)
    assert (vs.decisive, vs.decisive_correct, vs.decisive_share, vs.decisive_accuracy) == (4, 2, 66.67, 50.0)


# ---------------------------------------------------------------- real runs (the embedded models)


@pytest.fixture(scope="module")
def edit_set(tmp_path_factory) -> Path:
    """Three real pairs beside pairs.jsonl (relative paths): an addition and a removal done as asked, and a
    no-op for a removal (label false)."""
    from audiomind.judges import pairs

    d = tmp_path_factory.mktemp("edit_set")
    bgs, evs = pairs.default_sources(d / "src")
    fox, phone, paper = bgs[0], evs[0], evs[1]
    add = pairs.make_pair("add", fox, phone, d, pair_id="add", offset_s=3.0, gain_db=-3)
    delete = pairs.make_pair("delete", fox, paper, d, pair_id="delete", offset_s=2.8, gain_db=-3)
    noop = pairs.make_pair("delete", fox, phone, d, pair_id="noop", offset_s=3.0, gain_db=-3)
    shutil.copy(noop.original_path, d / "noop_copy.wav")

    def rel(p):
        return os.path.relpath(p, d)

    _write(d / "pairs.jsonl", [
        {"id": "add", "original": rel(add.original_path), "edited": rel(add.edited_path),
         "instruction": "Add a telephone ringing after the speech.", "label": True, "kind": "add"},
        {"id": "delete", "original": rel(delete.original_path), "edited": rel(delete.edited_path),
         "instruction": "Remove the paper crumpling.", "label": True, "kind": "delete"},
        {"id": "noop", "original": rel(noop.original_path), "edited": "noop_copy.wav",
         "instruction": "Remove the telephone ringing.", "label": False},
    ])
    return d / "pairs.jsonl"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.slow
def test_edit_eval_killed_mid_run_resumes_and_reports(edit_set, tmp_path):
    out = tmp_path / "R"
    cmd = [sys.executable, "-m", "audiomind.bench.cli", "run", "--task", "edit-eval", "--source", str(edit_set),
           "--out", str(out), "--no-progress"]
    results = out / "results.jsonl"
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 400
    try:
        while len(_lines(results)) < 1:
            assert proc.poll() is None, f"the run ended early: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no result within 400 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = [json.loads(x) for x in _lines(results)]
    assert 1 <= len(before) < 3, "the kill came too late to test anything"
    for r in before:
        assert r["status"] == "answered" and (out / r["trace_path"]).is_file()

    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    parsed = [json.loads(x) for x in _lines(results)]
    assert sorted(r["id"] for r in parsed) == ["add", "delete", "noop"], "every id exactly once"
    assert parsed[: len(before)] == before
    for r in parsed:
        trace = json.loads((out / r["trace_path"]).read_text())
        assert r["trace_path"] == f"traces/{r['id']}.json" and trace["question"]["item_id"] == r["id"]
        judged = next(c for c in trace["tool_calls"] if c["tool"] == "judge_edit")["output"]
        assert r["prediction"] == judged["effectiveness"]["label"]
        assert r["confidence"] == judged["p"]  # the calibrated probability of 'effective'
        assert "raw" in judged["calibration"]  # which table made p, and from which raw score
        assert r["correct"] == ((r["prediction"] == "effective") == (r["answer"] == "true"))
    assert not list((out / "artifacts").glob("*.json")), "the judge's first copy of each trace is removed"
    by = {r["id"]: r for r in parsed}
    assert by["noop"]["prediction"] == "ineffective"  # nothing changed: nothing instructed was done
    judgments = [json.loads(x) for x in _lines(out / "judgments.jsonl")]
    assert [j["id"] for j in judgments] == ["add", "delete", "noop"]
    assert [j["operation"] for j in judgments] == ["add", "delete", "delete"]
    assert [j["operation_from"] for j in judgments] == ["row", "row", "judge"]
    sessions = json.loads((out / "run.json").read_text())["sessions"]
    assert len(sessions) == 2 and sessions[1]["ran"] == 3 - len(before)

    rep = subprocess.run([sys.executable, "-m", "audiomind.bench.cli", "report", str(out)], cwd=REPO,
                         capture_output=True, text=True, timeout=300, check=False)
    assert rep.returncode == 0, rep.stderr[-3000:]
    md = (out / "report.md").read_text()
    assert "### Per operation" in md and "| add | 1 |" in md and "| delete | 2 |" in md
    data = json.loads((out / "report.json").read_text())["judge"]
    ops = {o["operation"]: o for o in data["operations"]}
    es = [j["figures"]["edit_score"] for j in judgments]
    assert ops["all"]["edit_score"] == pytest.approx(sum(es) / 3, abs=1e-4)
    assert ops["delete"]["faith_score"] == pytest.approx(
        (judgments[1]["figures"]["faith_score"] + judgments[2]["figures"]["faith_score"]) / 2, abs=1e-4)
    eff = data["verdicts"][0]
    assert eff["scorer"] == "effectiveness" and (eff["positives"], eff["negatives"]) == (2, 1)
    assert eff["accuracy"] == pytest.approx(100 * sum(r["correct"] for r in parsed) / 3, abs=0.01)
    assert (out / "plots" / "reliability.png").stat().st_size > 1000


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> Path:
    from audiomind import synth

    d = tmp_path_factory.mktemp("judge_clips")
    woman = synth.speech("good morning everyone", d / "woman.wav", voice="slt")
    phone = synth.sound_file("phone-incoming-call", d / "phone.wav", repeat=2)
    synth.concat([woman, phone], d / "woman_then_phone.wav", gap_s=0.4)
    synth.beeps(3, d / "beeps3.wav")
    return d


@pytest.mark.slow
def test_rubric_judge_and_aura_run_through_the_runner(clips, tmp_path):
    from audiomind.bench.report import write_report
    from audiomind.bench.tasks import run_task

    src = _write(clips / "rubric.jsonl", [
        {"id": "pos", "audio": "woman_then_phone.wav",
         "instruction": "A woman says 'good morning everyone', then a telephone rings.", "label": True},
        {"id": "neg_order", "audio": "woman_then_phone.wav",
         "instruction": "A telephone rings, then a man says 'good morning everyone'.", "label": False},
        {"id": "beeps", "audio": "beeps3.wav", "instruction": "Three beeps.", "label": True},
    ])
    task = make_task("rubric-judge")
    loaded = task.load_items(src)
    out = tmp_path / "rubric"
    summary, files = run_task(task, loaded, out, lambda: pytest.fail("a judge task never builds an agent"),
                              workers=2, progress=False)
    assert summary.statuses == {"answered": 3} and summary.scored == 3
    rows = [json.loads(x) for x in _lines(out / "results.jsonl")]
    for r in rows:
        trace = json.loads((out / r["trace_path"]).read_text())
        judged = next(c for c in trace["tool_calls"] if c["tool"] == "judge_rubric")["output"]
        assert r["confidence"] == judged["p"] and r["prediction"] == ("aligned" if judged["aligned"] else "misaligned")
    assert files["judgments"].is_file()
    write_report(out)
    judge = json.loads((out / "report.json").read_text())["judge"]
    names = [v["scorer"] for v in judge["verdicts"]]
    assert names == ["rubric score", "holistic p_yes"]
    assert judge["verdicts"][0]["accuracy"] == pytest.approx(100 * summary.correct / 3, abs=0.01)
    assert "Reliability of rubric score" in (out / "report.md").read_text()

    # AURA on the same runner: graded labels give correlations; binary ones accuracy and AUC
    asrc = _write(clips / "aura.jsonl", [
        {"id": "right", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "There are three beeps.", "label": 1},
        {"id": "wrong", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "There are five beeps.", "label": 0},
        {"id": "vague", "audio": "beeps3.wav", "question": "How many beeps are there?", "reference": "Three beeps.",
         "response": "Several beeps.", "label": 0.5},
    ])
    atask = make_task("aura")
    aout = tmp_path / "aura"
    summary, _ = run_task(atask, atask.load_items(asrc), aout, lambda: None, progress=False)
    assert summary.statuses == {"answered": 3} and summary.scored == 2  # the graded 0.5 is not a binary truth
    res = {json.loads(x)["id"]: json.loads(x) for x in _lines(aout / "results.jsonl")}
    assert res["right"]["prediction"] == "correct" and res["wrong"]["prediction"] == "incorrect"
    write_report(aout)
    judge = json.loads((aout / "report.json").read_text())["judge"]
    assert judge["verdicts"][0]["roc_auc"] == 1.0 and judge["correlation"]["spearman"] is not None
