"""MSU-Bench parity: the project's grader against the official step-3 summarize (ASLP-lab/MSU-Bench,
bench_evaluation_pipeline, commit 418db0b) on fixtures built from the official sample QA files.

tests/data/parity/msu/ (see its PROVENANCE.md):
  source/          task files in the merged layout (<lang>/<scenario>/QA_short/<segment>/level<N>/<task>.json),
                   questions from the official samples; the zh/podcast conversation has no audio
  predictions.jsonl  a model's raw reply per question (right, wrong of each rationale class, refused, a letter
                   that is no option, free text, a failed call); none for the conversation without audio
  official/step2_letters.jsonl  the letter upstream's step 2 (`extract_single_letter`) reads from each reply
  official/all_items/  upstream step 3 on every task file, the unanswered questions without reference_result
  official/pipeline/   upstream step 3 on what upstream's step 2 writes (it drops a file whose audio is missing)
  hf/              the Hugging Face release layout: annotations/<scenario><cn|en>/<segment>/level<N>/<task>.json

Every CSV cell and every printed figure (questions, acc) is compared as text: both sides print 4-place
decimals of the same integer ratios, so the tolerance is exact equality of the printed strings."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind.bench.tasks import msu

FIX = Path(__file__).resolve().parents[1] / "data" / "parity" / "msu"
CSV_FILES = ("summary_by_task.csv", "summary_by_capability.csv", "summary_by_tier.csv", "summary_by_language.csv",
             "summary_by_index_scheme.csv", "summary_by_error_type.csv")
WITH_AUDIO = ("zh/movie/QA_short/cn_part004", "en/movie/QA_short/en_part001")
SR = 16000


def _conversation(path: Path, seconds: float, seed: int) -> None:
    """A real 16 kHz WAV long enough for every segment the task files cut (low noise: only the cuts matter)."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    aio.write_wav(path, (0.01 * rng.standard_normal(round(seconds * SR))).astype(np.float32), SR)


def _longest_end(folder: Path) -> float:
    ends = [float(s["end_time"]) for p in folder.rglob("*.json")
            for e in json.loads(p.read_text(encoding="utf-8"))["result"] if "speaker_meta" in e
            for segs in e["speaker_meta"].values() for s in segs]
    return max(ends) + 1.0


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("msu-parity") / "set"
    shutil.copytree(FIX / "source", root)
    for n, conv in enumerate(WITH_AUDIO):
        _conversation(root / conv / "3_revised_label" / "wav" / "part001.wav", _longest_end(root / conv), n)
    items = msu.build_items(root, root.parent / "clips")
    replies = {(r["file"], r["question"]): r["reply"] for r in _jsonl(FIX / "predictions.jsonl")}
    results = {}
    for it in items:
        key = (Path(it.raw["file"]).relative_to(root.resolve()).as_posix(), int(it.raw["question_index"]))
        if not it.metadata["clips"]:
            results[it.id] = {"id": it.id, "status": "missing_audio", "prediction": None}
        elif replies[key] is None:
            results[it.id] = {"id": it.id, "status": "error", "prediction": None, "error": "the call failed"}
        else:
            results[it.id] = {"id": it.id, "status": "answered", "prediction": replies[key]}
    return {"root": root.resolve(), "items": items, "results": results}


def test_fixture_covers_the_cases(graded):
    items = graded["items"]
    assert len(items) == 15  # 17 questions, the 2 reverse ones left out as upstream leaves them out
    assert {(it.metadata["language"], it.metadata["tier"]) for it in items} == {("zh", 1), ("zh", 2), ("en", 1)}
    assert sum(1 for it in items if not it.metadata["clips"]) == 2  # the conversation without audio
    classes = {msu.error_class(it, graded["results"][it.id]) for it in items if it.metadata["clips"]}
    assert classes == {"correct", "wrong_speaker", "hallucination", "unknown", "instruction_not_follow"}


def test_letters_equal_upstream_step2(graded):
    """The letter each reply becomes (what the export writes as reference_result) equals upstream's step 2."""
    official = {(r["file"], r["question"]): r["reference_result"] for r in _jsonl(FIX / "official" / "step2_letters.jsonl")}
    checked = 0
    for it in graded["items"]:
        key = (Path(it.raw["file"]).relative_to(graded["root"]).as_posix(), int(it.raw["question_index"]))
        if not it.metadata["clips"]:
            assert official[key] is None  # never ran: upstream has no reference_result either
            continue
        ours = msu.normalize_letter(msu.predicted_letter(it, graded["results"][it.id]))
        assert (ours or "") == official[key], key
        checked += 1
    assert checked == 13


@pytest.mark.parametrize("mode,missing_audio", [("all_items", "count"), ("pipeline", "skip")])
def test_every_csv_cell_and_printed_figure_equals_upstream(graded, tmp_path, mode, missing_audio):
    summary = msu.summarize(graded["items"], graded["results"], missing_audio=missing_audio)
    msu.write_summary_csvs(summary, tmp_path, model="audiomind")
    official = FIX / "official" / mode
    for name in CSV_FILES:
        theirs, ours = _csv(official / name), _csv(tmp_path / name)
        assert ours[0] == theirs[0], f"{name}: header"
        assert len(ours) == len(theirs), f"{name}: {len(ours)} rows, official {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours[1:], theirs[1:]), start=1):
            assert a == b, f"{name} row {i}: project {a} official {b}"
    printed = (official / "stdout.txt").read_text(encoding="utf-8")
    m = re.search(r"questions=(\d+)\s+acc=([0-9.]+)", printed)
    assert m, printed
    overall = summary["overall"]
    assert (str(overall["total"]), f"{overall['correct'] / overall['total']:.4f}") == m.groups()
    files = re.search(r"scored_files=(\d+)", printed).group(1)
    counted = {it.raw["file"] for it in graded["items"] if missing_audio == "count" or it.metadata["clips"]}
    assert str(len(counted)) == files
    assert summary["missing_audio_skipped"] == (2 if missing_audio == "skip" else 0)


def test_missing_audio_mode_is_checked(graded):
    with pytest.raises(ValueError, match="missing_audio"):
        msu.summarize(graded["items"], graded["results"], missing_audio="drop")


def test_hugging_face_release_layout(tmp_path):
    """annotations/<scenario><cn|en>/<segment>/level<N>/<task>.json with audio/<scenario><cn|en>/<segment>.wav: the
    language and scenario come from the folder (cn -> zh), the clips are cut from the audio/ file, and the export
    carries `_msu_meta` so upstream's step 3 reads the same language."""
    root = tmp_path / "MSU-Benchmark"
    shutil.copytree(FIX / "hf", root)
    for n, (folder, seg) in enumerate((("moviecn", "cn_part004"), ("movieen", "en_part001"))):
        _conversation(root / "audio" / folder / f"{seg}.wav", _longest_end(root / "annotations" / folder), n)
    items = msu.build_items(root, tmp_path / "clips")
    assert len(items) == 5
    assert {(it.metadata["language"], it.metadata["scenario"], it.metadata["task"]) for it in items} == {
        ("zh", "movie", "SV"), ("en", "movie", "GI")}
    assert all(it.metadata["clips"] and Path(it.audio_path).is_file() for it in items)
    pair = next(it for it in items if it.metadata["task"] == "SV" and it.metadata["question_type"] == "no_index")
    assert [(c["start_s"], c["end_s"]) for c in pair.metadata["clips"]] == [(11.46, 15.06), (167.01, 170.65)]
    assert abs(len(aio.load(pair.audio_path, sr=SR)) / SR - (15.06 - 11.46)) < 0.01  # 10 ms: rounding of the cut
    results = {it.id: {"id": it.id, "status": "answered", "prediction": "B"} for it in items}
    out = msu.write_reference_results(items, results, tmp_path / "export", root)
    metas = {json.loads(p.read_text(encoding="utf-8"))["_msu_meta"]["language"] for p in out}
    assert metas == {"zh", "en"}
    summary = msu.summarize(items, results)
    assert set(summary["language"]) == {"zh/tier1", "en/tier1"}
