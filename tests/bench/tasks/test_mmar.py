"""MMAR: official-compatible scoring checked on the real 1,000-row meta file with constructed predictions
whose accuracy is known, the predictions file format, and a real offline run of `audiomind bench mmar`
on a tiny MMAR-format set made from synthetic clips (answers true by construction)."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind import synth
from audiomind.bench.cli import bench_app
from audiomind.bench.tasks import mmar as mm

META_SHA256 = "1c9a343e7bebf1037482b935c54eacd43cc63df7b2c668724b5560caf1f84fad"  # tests/data/parity/mmar/README.md


def _find_meta() -> Path:
    """The real MMAR meta: $MMAR_META, else the repository's copy (tests/data/parity/mmar, xz-compressed),
    decompressed once into the temporary folder and checked by its sha256, so every clone has it."""
    if (env := os.environ.get("MMAR_META")) and Path(env).is_file():
        return Path(env)
    repo = Path(__file__).resolve().parents[3]
    out = Path(tempfile.gettempdir()) / "audiomind-tests" / f"MMAR-meta-{META_SHA256[:12]}.jsonl"
    if out.is_file() and hashlib.sha256(out.read_bytes()).hexdigest() == META_SHA256:
        return out
    data = lzma.decompress((repo / "tests" / "data" / "parity" / "mmar" / "MMAR-meta.jsonl.xz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == META_SHA256
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f"{out.name}.{os.getpid()}.part")  # concurrent workers: each writes its own, then renames
    part.write_bytes(data)
    os.replace(part, out)
    return out


META = _find_meta()
needs_meta = pytest.mark.skipif(not META.is_file(), reason=f"the real MMAR meta file is not at {META}")


# ---------------------------------------------------------------- the match rule


@pytest.mark.parametrize(
    "answer,prediction,choices,expected",
    [
        ("Open Grassland", "Open Grassland", ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], True),
        ("Open Grassland", "  open GRASSLAND!! ", ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], True),
        ("Open Grassland", "grassland, open.", ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], True),
        # extra words are fine unless they belong to another choice
        ("Open Grassland", "I think Open Grassland", ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], True),
        ("Open Grassland", "Open Grassland, not Dense Forest", ["Mountain Canyon", "Dense Forest", "Open Grassland"], False),
        # a letter is not the option text
        ("Open Grassland", "C", ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], False),
        ("Open Grassland", "", ["Mountain Canyon", "Open Grassland"], False),
        ("Open Grassland", "Grassland", ["Mountain Canyon", "Open Grassland"], False),  # an answer token missing
        # words shared by the answer and a wrong choice do not count against the prediction
        ("Too little", "Too little", ["Too little", "Just right, no opinion", "Too much, can't finish"], True),
        # official quirk: a wrong choice with the same token set as the answer is scored correct
        ("From far to near", "From near to far", ["From near to far", "From far to near", "Remain unchanged"], True),
        ("3", "3", ["2", "3", "4", "5"], True),
        ("3", "3 or 4", ["2", "3", "4", "5"], False),
    ],
)
def test_string_match_rules(answer, prediction, choices, expected):
    assert mm.string_match(answer, prediction, choices) is expected


# ---------------------------------------------------------------- the real meta file


@pytest.fixture(scope="module")
def meta_rows():
    return mm.load_meta(META)


def _with(rows, pred_for):
    out = []
    for i, r in enumerate(rows):
        p = pred_for(i, r)
        row = dict(r)
        if p is not None:
            row[mm.PREDICTION_KEY] = p
        out.append(row)
    return out


def _wrong_choice(r):
    """A wrong option whose token set differs from the answer's (always scored wrong by the rule); a few
    rows only reorder the same words in every option, and get a non-option text instead."""
    gold = mm.tokenize(r["answer"])
    return next((c for c in r["choices"] if mm.tokenize(c) != gold), "none of these")


@needs_meta
def test_every_third_right_gives_known_accuracy_by_group(meta_rows):
    assert len(meta_rows) >= 999
    preds = _with(meta_rows, lambda i, r: r["answer"] if i % 3 == 0 else _wrong_choice(r))
    s = mm.score_rows(preds)
    right = [r for i, r in enumerate(meta_rows) if i % 3 == 0]
    assert s.scored == len(meta_rows) and s.no_prediction == 0
    assert s.correct == len(right)
    assert s.accuracy == pytest.approx(round(100 * len(right) / len(meta_rows), 2))
    # per group: the expected counts come from the construction, not from the rule
    for field, table in (("modality", s.modality), ("category", s.category), ("sub-category", s.sub_category)):
        totals = Counter(r[field] for r in meta_rows)
        correct = Counter(r[field] for r in right)
        for name, n in totals.items():
            assert table[name]["total"] == n, (field, name)
            assert table[name]["correct"] == correct[name], (field, name)
            assert table[name]["accuracy"] == pytest.approx(round(100 * correct[name] / n, 2))


@needs_meta
def test_letters_score_zero_and_text_variants_score_full(meta_rows):
    letters = _with(meta_rows, lambda i, r: "ABCDEF"[r["choices"].index(r["answer"])])
    assert mm.score_rows(letters).correct == 0  # MMAR answers are option texts; a letter never matches
    variants = ["{}", "{}.", "  {}  ", "{}!!", "({})"]
    shouty = _with(meta_rows, lambda i, r: variants[i % len(variants)].format(r["answer"].upper()))
    s = mm.score_rows(shouty)
    assert s.correct == s.scored == len(meta_rows)
    lower = _with(meta_rows, lambda i, r: r["answer"].lower().replace(",", " ,"))
    assert mm.score_rows(lower).accuracy == 100.0


@needs_meta
def test_rows_without_prediction_are_skipped_like_the_official_script(meta_rows):
    preds = _with(meta_rows, lambda i, r: None if i % 5 == 0 else r["answer"])
    s = mm.score_rows(preds)
    skipped = sum(1 for i in range(len(meta_rows)) if i % 5 == 0)
    assert s.no_prediction == skipped and s.scored == len(meta_rows) - skipped
    assert s.accuracy == 100.0
    assert sum(d["total"] for d in s.modality.values()) == s.scored
    # a present-but-empty prediction is scored, and wrong
    empty = _with(meta_rows[:10], lambda i, r: "")
    e = mm.score_rows(empty)
    assert (e.scored, e.correct) == (10, 0)


@needs_meta
def test_same_token_wrong_choice_counts_as_correct_officially(meta_rows):
    row = next(r for r in meta_rows if r["id"] == "1haxFVCxSJI_00-00-00_00-00-05")
    assert row["answer"] == "From far to near"
    s = mm.score_rows([dict(row, answer_prediction="From near to far")])
    assert s.correct == 1


@needs_meta
def test_scoring_a_file_and_the_cli_command(meta_rows, tmp_path):
    preds = _with(meta_rows, lambda i, r: r["answer"] if i % 2 == 0 else _wrong_choice(r))
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in preds) + "\n", encoding="utf-8")
    s = mm.score_file(path)
    assert s.correct == (len(meta_rows) + 1) // 2
    out = tmp_path / "scores.json"
    res = CliRunner().invoke(bench_app, ["mmar-score", str(path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "Total" not in res.output and "overall" in res.output
    assert json.loads(out.read_text())["correct"] == s.correct


def test_prediction_rows_keep_fields_and_never_use_letters():
    row = {"id": "x1", "audio_path": "./audio/x1.wav", "question": "q?", "choices": ["Yes", "No"], "answer": "No",
           "modality": "speech", "category": "Semantic Layer", "sub-category": "Content Analysis",
           "language": "en", "rubric": [{"name": "r"}]}
    ok = mm.prediction_row(row, {"status": "answered", "prediction": "No", "rationale": "heard no"})
    assert list(ok)[: len(row)] == list(row) and all(ok[k] == v for k, v in row.items())
    assert ok[mm.PREDICTION_KEY] == "No" and ok[mm.THINKING_KEY] == "heard no"
    assert mm.PREDICTION_KEY not in mm.prediction_row(row, {"status": "missing_audio"})
    assert mm.PREDICTION_KEY not in mm.prediction_row(row, None)
    # an API failure is no answer (left out, never scored wrong); a run that answered badly is scored
    assert mm.PREDICTION_KEY not in mm.prediction_row(row, {"status": "error", "prediction": None, "error": "boom"})
    failed = mm.prediction_row(row, {"status": "failed", "prediction": None, "error": "format check failed"})
    assert failed[mm.PREDICTION_KEY] == "" and failed[mm.THINKING_KEY] == ""


# ---------------------------------------------------------------- a real offline run


@pytest.fixture(scope="module")
def tiny_mmar(tmp_path_factory):
    """An MMAR-format set (meta rows + ./audio/<id>.wav) from synthetic clips; one row's audio is absent."""
    root = tmp_path_factory.mktemp("mmar")
    audio = root / "audio"
    audio.mkdir()
    beeps3 = synth.beeps(3, audio / "beeps3.wav", freq_hz=880.0, beep_s=0.15, gap_s=0.4)
    synth.beeps(5, audio / "beeps5.wav", freq_hz=660.0, beep_s=0.15, gap_s=0.4)
    ring = synth.sound_file("phone-incoming-call", root / "ring1.wav")
    synth.concat([ring, ring], audio / "ring.wav")
    synth.speech("Please remember to water the plants on Friday morning.", audio / "plants.wav", voice="rms")
    assert beeps3.is_file()

    def row(id_, question, choices, answer, modality, category, sub):
        return {"id": id_, "audio_path": f"./audio/{id_}.wav", "question": question, "choices": choices,
                "answer": answer, "modality": modality, "category": category, "sub-category": sub,
                "language": "en" if modality == "speech" else None, "source": "synthetic", "url": "",
                "timestamp": "", "thinking": "true by construction", "cue": [], "rubric": []}

    count_q = "How many beeps are there in the recording?"
    rows = [
        row("beeps3", count_q, ["2", "3", "4", "5"], "3", "sound", "Signal Layer", "Counting and Statistics"),
        row("ring", "Which sound can be heard in the recording?",
            ["Church bells", "A phone ringing", "A barking dog", "Applause"], "A phone ringing", "sound",
            "Perception Layer", "Environmental Perception and Reasoning"),
        row("missing_clip", count_q, ["1", "2"], "2", "sound", "Signal Layer", "Counting and Statistics"),
        row("plants", "What does the speaker ask the listener to do?",
            ["Water the plants on Friday", "Call the doctor on Monday", "Buy bread this evening",
             "Close the windows at night"], "Water the plants on Friday", "speech", "Semantic Layer",
            "Content Analysis"),
        row("beeps5", count_q, ["3", "4", "5", "6"], "5", "sound", "Signal Layer", "Counting and Statistics"),
    ]
    meta = root / "MMAR-meta.jsonl"
    meta.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return meta, root, rows


@pytest.mark.slow
def test_bench_mmar_real_offline_run(tiny_mmar, tmp_path):
    """Default offline stack, 2 workers: official-format predictions, per-item traces, scores, resume, report."""
    from audiomind.trace import validate_trace_file

    meta, root, rows = tiny_mmar
    out = tmp_path / "run"
    args = ["mmar", "--meta", str(meta), "--audio-dir", str(root), "--out", str(out), "--workers", "2",
            "--no-progress"]
    res = CliRunner().invoke(bench_app, args)
    assert res.exit_code == 0, res.output + repr(res.exception)

    preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["id"] for p in preds] == [r["id"] for r in rows]  # meta order
    results = {json.loads(x)["id"]: json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()}
    assert results["missing_clip"]["status"] == "missing_audio"
    assert "audio file not found" in results["missing_clip"]["error"]
    for p, r in zip(preds, rows):
        assert {k: p[k] for k in r} == r  # every input field kept unchanged
        if r["id"] == "missing_clip":
            assert mm.PREDICTION_KEY not in p and not (out / "traces" / "missing_clip.json").exists()
            continue
        assert p[mm.PREDICTION_KEY] in r["choices"]  # the option text, never a letter
        assert p[mm.THINKING_KEY].strip()
        trace = out / "traces" / f"{r['id']}.json"
        assert validate_trace_file(trace) == []
        assert json.loads(trace.read_text())["question"]["item_id"] == r["id"]
        assert results[r["id"]]["trace_path"] == f"traces/{r['id']}.json"

    # The offline stack answers these clips correctly (the same kinds the end-to-end tests pin down).
    for r in rows:
        if r["id"] != "missing_clip":
            assert preds[[p["id"] for p in preds].index(r["id"])][mm.PREDICTION_KEY] == r["answer"], r["id"]
    scores = json.loads((out / "scores.json").read_text())
    assert (scores["rows"], scores["scored"], scores["no_prediction"], scores["correct"]) == (5, 4, 1, 4)
    assert scores["accuracy"] == 100.0
    assert scores["category"]["Signal Layer"] == {"correct": 2, "total": 2, "accuracy": 100.0}
    assert scores["sub-category"]["Content Analysis"]["total"] == 1
    assert mm.score_run(out / "predictions.jsonl", meta).model_dump(by_alias=True) == scores
    assert "MMAR accuracy" in res.output and "100.00" in res.output

    # The same command again: everything is committed, nothing runs twice.
    lines_before = (out / "results.jsonl").read_text()
    again = CliRunner().invoke(bench_app, args)
    assert again.exit_code == 0, again.output
    assert (out / "results.jsonl").read_text() == lines_before
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ran"] == 0 and summary["already_done"] == 5

    # The report works on a real run directory.
    rep = CliRunner().invoke(bench_app, ["report", str(out)])
    assert rep.exit_code == 0, rep.output
    md = (out / "report.md").read_text()
    assert "Accuracy by category" in md and "Tool use and accuracy" in md
    for png in ("accuracy_by_category.png", "accuracy_by_modality.png", "tool_calls_vs_accuracy.png", "latency.png"):
        assert (out / "plots" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_audio_dir_may_be_the_root_or_the_audio_folder(tmp_path):
    (tmp_path / "audio").mkdir()
    (tmp_path / "audio" / "a1.wav").write_bytes(b"RIFF")
    row = {"id": "a1", "audio_path": "./audio/a1.wav", "question": "q", "choices": ["x", "y"], "answer": "x"}
    assert mm.resolve_audio(row, tmp_path) == (tmp_path / "audio" / "a1.wav").resolve()
    assert mm.resolve_audio(row, tmp_path / "audio") == (tmp_path / "audio" / "a1.wav").resolve()
    item = mm.item_from_row(dict(row, modality="sound", category="Signal Layer"), tmp_path)
    assert item.metadata == {"modality": "sound", "category": "Signal Layer"} and item.raw["id"] == "a1"


def test_bench_mmar_is_bench_run_task_mmar(loopback_llm, tmp_path):
    """`bench mmar` is an alias of `bench run --task mmar`: the same results, predictions and scores; without
    --audio-dir the meta file's folder is the MMAR root. (The model here always picks the first option.)"""
    import numpy as np

    from audiomind import audio as aio
    from audiomind.bench.runner import load_results

    root = tmp_path / "mmar"
    (root / "audio").mkdir(parents=True)
    t = np.arange(8000) / 16000
    for name in ("tone1", "tone2"):
        aio.write_wav(root / "audio" / f"{name}.wav", (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)
    rows = [{"id": i, "audio_path": f"./audio/{i}.wav", "question": "What is heard?", "choices": ch, "answer": a,
             "modality": "sound", "category": "Signal Layer", "sub-category": "x"}
            for i, ch, a in (("tone1", ["A steady tone", "Speech"], "A steady tone"),
                             ("tone2", ["Speech", "A steady tone"], "A steady tone"),
                             ("gone", ["A steady tone", "Speech"], "A steady tone"))]
    meta = root / "MMAR-meta.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    agent = ["--planner", loopback_llm, "--frontend", loopback_llm, "--no-progress"]
    outs = {"alias": tmp_path / "alias", "run": tmp_path / "run", "default_root": tmp_path / "default_root"}
    for args in (["mmar", "--meta", str(meta), "--audio-dir", str(root), "--out", str(outs["alias"])],
                 ["run", "--task", "mmar", "--meta", str(meta), "--audio-dir", str(root), "--out", str(outs["run"])],
                 ["run", "--task", "mmar", "--source", str(meta), "--out", str(outs["default_root"])]):
        res = CliRunner().invoke(bench_app, args + agent)
        assert res.exit_code == 0, res.output + repr(res.exception)
        assert "MMAR accuracy" in res.output and "predictions:" in res.output and "scores:" in res.output
    first = outs["alias"]
    scores = json.loads((first / mm.SCORES_FILE).read_text())
    assert (scores["rows"], scores["scored"], scores["correct"]) == (3, 2, 1)
    for out in outs.values():
        assert (out / mm.PREDICTIONS_FILE).read_text() == (first / mm.PREDICTIONS_FILE).read_text()
        assert json.loads((out / mm.SCORES_FILE).read_text()) == scores
        got = {k: (v["status"], v["correct"], v["trace_path"]) for k, v in load_results(out).items()}
        assert got == {"tone1": ("answered", True, "traces/tone1.json"),
                       "tone2": ("answered", False, "traces/tone2.json"), "gone": ("missing_audio", None, None)}
        config = json.loads((out / "run.json").read_text())["config"]
        assert (config["task"], config["benchmark"], config["audio_dir"]) == ("mmar", "mmar", str(root.resolve()))


# ---------------------------------------------------------------- strict scoring beside the official one
# The official number stays unchanged (rows without a prediction skipped, unordered word sets, letters fail);
# the strict one counts a missing prediction as wrong and takes only the exact option; the order-swapped items
# are listed, and the sha256 of the meta file scored is recorded.


def _swap(r):
    """An order-swapped look-alike of the answer (same words, another option), or None."""
    gold = mm.tokenize(r["answer"])
    return next((c for c in r["choices"] if c != r["answer"] and mm.tokenize(c) == gold), None)


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


@needs_meta
def test_order_swapped_items_on_the_real_meta(meta_rows):
    swapped = [r for r in meta_rows if mm.swapped_options(r["choices"])]
    assert len(meta_rows) == 1000
    assert len(swapped) == 23  # counted on the released meta (sha256 1c9a343e...)
    assert sum(1 for r in swapped if _swap(r) is not None) == 20  # the answer is among the look-alikes
    s = mm.score_rows(meta_rows)  # no predictions: listed all the same
    assert s.order_swapped_count == 23 and len(s.order_swapped) == 23
    by_id = {x.id: x for x in s.order_swapped}
    far = by_id["1haxFVCxSJI_00-00-00_00-00-05"]
    assert far.groups == [["From near to far", "From far to near"]] and far.answer_swapped
    assert by_id["qo201GQxzUQ_00-00-00_00-00-08"].answer_swapped is False  # answer "Neither"
    assert mm.swapped_options(["Guitar, Piano", "Piano, Guitar", "Piano, Guitar, Piano"]) == [
        ["Guitar, Piano", "Piano, Guitar", "Piano, Guitar, Piano"]]


@needs_meta
def test_swapped_predictions_pass_officially_and_fail_strictly(meta_rows):
    """Answer each order-swapped item with its look-alike and every other row right: the official number
    credits the look-alikes (unchanged rule), the strict one does not."""
    swapped_ids = {r["id"] for r in meta_rows if _swap(r) is not None}
    preds = _with(meta_rows, lambda i, r: _swap(r) if r["id"] in swapped_ids else r["answer"])
    s = mm.score_rows(preds)
    assert (s.scored, s.correct, s.accuracy) == (1000, 1000, 100.0)
    assert (s.strict.total, s.strict.missing, s.strict.correct) == (1000, 0, 980)
    assert s.strict.accuracy == 98.0
    listed = {x.id: x for x in s.order_swapped}
    for i in swapped_ids:
        assert listed[i].official is True and listed[i].strict is False


@needs_meta
def test_missing_predictions_are_skipped_officially_and_wrong_strictly(meta_rows):
    preds = _with(meta_rows, lambda i, r: None if i % 4 == 0 else r["answer"])
    s = mm.score_rows(preds)
    assert (s.scored, s.no_prediction, s.accuracy) == (750, 250, 100.0)  # the official number, unchanged
    assert (s.strict.total, s.strict.missing, s.strict.correct, s.strict.accuracy) == (1000, 250, 750, 75.0)
    # per group the strict totals are the whole meta's
    for name, n in ((k, sum(1 for r in meta_rows if r["category"] == k)) for k in mm.CATEGORIES):
        assert s.strict.category[name]["total"] == n


@needs_meta
def test_letters_and_extra_words(meta_rows):
    letters = _with(meta_rows, lambda i, r: "ABCDEF"[r["choices"].index(r["answer"])])
    s = mm.score_rows(letters)
    assert s.correct == 0 and s.strict.correct == 0  # a letter is never the option
    chatty = _with(meta_rows, lambda i, r: f"The answer is {r['answer']}.")
    c = mm.score_rows(chatty)
    assert c.strict.correct == 0 and c.correct > 900  # official: extra words are fine unless another option's
    spaced = _with(meta_rows, lambda i, r: "  " + r["answer"].upper().replace(" ", "   ") + " ")
    assert mm.score_rows(spaced).strict.correct == 1000  # case and white space are not the option's content
    half = _with(meta_rows, lambda i, r: r["answer"] if i % 2 == 0 else _wrong_choice(r))
    h = mm.score_rows(half)
    assert h.strict.correct == h.correct == 500


@needs_meta
def test_file_scoring_records_the_meta_sha256_and_counts_left_out_rows(meta_rows, tmp_path):
    digest = hashlib.sha256(META.read_bytes()).hexdigest()
    kept = [dict(r, answer_prediction=r["answer"]) for r in meta_rows[:600]]  # 400 rows left out of the file
    path = _write(tmp_path / "preds.jsonl", kept)
    alone = mm.score_file(path)
    assert alone.meta_sha256 is None and alone.strict.total == 600 and alone.strict.accuracy == 100.0
    s = mm.score_file(path, meta=META)
    assert s.meta_sha256 == digest and s.meta_path == str(META.resolve())
    assert s.predictions_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (s.scored, s.accuracy) == (600, 100.0)  # official: unchanged
    assert (s.strict.total, s.strict.missing, s.strict.correct, s.strict.accuracy) == (1000, 400, 600, 60.0)

    out = tmp_path / "scores.json"
    res = CliRunner().invoke(bench_app, ["mmar-score", str(path), "--meta", str(META), "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["meta_sha256"] == digest and data["strict"]["accuracy"] == 60.0
    assert data["order_swapped_count"] == 23 and data["accuracy"] == 100.0
    assert "strict" in res.output and "order-swapped" in res.output


def test_a_run_records_the_meta_sha256_in_scores_and_report(tmp_path):
    """finalize() (what every `bench run --task mmar` calls) writes scores.json with the meta's sha256 and the
    strict score over the run's rows; `bench report` shows both."""
    meta = tmp_path / "MMAR-meta.jsonl"
    rows = [{"id": f"r{i}", "audio_path": f"./audio/r{i}.wav", "question": "q?",
             "choices": ["From far to near", "From near to far", "Neither"], "answer": "From far to near",
             "modality": "sound", "category": "Signal Layer", "sub-category": "Spatial"} for i in range(4)]
    _write(meta, rows)
    run = tmp_path / "run"
    run.mkdir()
    results = [{"id": "r0", "status": "answered", "prediction": "From far to near", "correct": True},
               {"id": "r1", "status": "answered", "prediction": "From near to far", "correct": True},
               {"id": "r2", "status": "answered", "prediction": "Neither", "correct": False}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    scores = mm.finalize(rows, run, meta=meta)
    data = json.loads((run / "scores.json").read_text())
    assert data["meta_sha256"] == hashlib.sha256(meta.read_bytes()).hexdigest() == scores.meta_sha256
    assert (data["scored"], data["correct"]) == (3, 2)  # r3 never ran: skipped officially
    assert (data["strict"]["total"], data["strict"]["correct"], data["strict"]["missing"]) == (4, 1, 1)
    assert data["order_swapped_count"] == 4

    res = CliRunner().invoke(bench_app, ["report", str(run), "--no-plots"])
    assert res.exit_code == 0, res.output
    md = (run / "report.md").read_text()
    assert scores.meta_sha256 in md and "strict" in md.lower()
