"""MSU-Bench adapter on a small MSU-format set built here from flite voices: a three-voice conversation
(turn times known to the sample) with speaker_meta registration snippets, task files in the upstream
layout (<lang>/<scenario>/QA_short/<segment>/level<N>/<task>.json, Chinese and English task names).

Checked: task/tier/language/index-scheme reading, the audio selection rules (pair -> its two clips,
no_index -> the first registration snippet, level 2 no_index -> + the whole conversation, indexed ->
the whole conversation), exact clip cuts, the concat packing, letter scoring with the error classes and
the summary views, the upstream-compatible reference_result export, and the offline stack answering a
speaker-counting question by letter through the batch runner."""

from __future__ import annotations

import csv
import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.bench.items import ItemResult
from audiomind.bench.tasks import msu

SR = 16000
GAP_S = 0.6
TURNS = [
    ("slt", "Good morning everyone, shall we start the meeting?"),
    ("awb", "Yes, I have the sales figures for last month."),
    ("rms", "Before that, the projector is not working again."),
    ("slt", "Let us fix the projector after the figures."),
    ("awb", "Sales went up by ten percent in March."),
    ("rms", "That is better than we expected."),
]
SEG = Path("en") / "meeting" / "QA_short" / "seg0001"


def _seg(turn: int, times: list[tuple[float, float]], spk_index: str) -> dict:
    a, b = times[turn]
    return {"seg_id": f"seg_{turn:03d}", "start_time": a, "end_time": b, "transcript": TURNS[turn][1],
            "spk_id": f"spk_{TURNS[turn][0]}", "spk_index": spk_index, "gender": "n/a"}


def _options(texts: list[str]) -> list[str]:
    return [f"{chr(65 + i)}. {t}" for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def msu_set(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("msu")
    seg_dir = root / SEG
    (seg_dir / "wav").mkdir(parents=True)
    clips, times, t = [], [], 0.3
    for i, (voice, text) in enumerate(TURNS):
        y = aio.load(synth.speech(text, root / f"turn{i}.wav", voice=voice), sr=SR)
        clips.append(y)
        times.append((round(t, 3), round(t + len(y) / SR, 3)))
        t += len(y) / SR + GAP_S
    conv = np.zeros(round((t + 0.3) * SR), dtype=np.float32)
    for y, (a, _) in zip(clips, times):
        conv[round(a * SR) : round(a * SR) + len(y)] += y
    aio.write_wav(seg_dir / "wav" / "part001.wav", conv, SR)

    meta_ab = {"spk_a": [_seg(0, times, "spk_1"), _seg(3, times, "spk_1")],
               "spk_b": [_seg(1, times, "spk_2"), _seg(4, times, "spk_2")]}
    verify = {
        "source_audio": "./wav/part001.wav",
        "result": [
            {"speaker_meta": meta_ab},
            {"question": "Are the speakers in the two clips the same person?", "question_type": "no_index",
             "pair": {"left": "spk_a[0]", "right": "spk_b[0]"},
             "options": _options(["Yes, the same person", "Different timbre, but maybe the same person disguising",
                                  "Cannot be determined (insufficient information)", "No, not the same person"]),
             "answer": "D", "answer_text": "No, not the same person",
             "rationale": ["A. wrong speaker", "B. hallucination", "C. unknown", "D. ground truth"]},
            {"question": "Are the speakers in the two clips the same person?", "question_type": "no_index",
             "pair": {"left": "spk_a[0]", "right": "spk_a[1]"},
             "options": _options(["Yes, the same person", "No, not the same person",
                                  "Different timbre, but maybe the same person disguising",
                                  "Cannot be determined (insufficient information)"]),
             "answer": "A", "answer_text": "Yes, the same person",
             "rationale": ["A. ground truth", "B. wrong speaker", "C. hallucination", "D. unknown"]},
            {"question": f"Is the speaker from {times[0][0]} s to {times[0][1]} s the same as the speaker from "
                         f"{times[1][0]} s to {times[1][1]} s?", "question_type": "time_index",
             "pair": {"left": "spk_a[0]", "right": "spk_b[0]"},
             "options": _options(["No, not the same person", "Maybe", "Yes, the same person", "Cannot be determined"]),
             "answer": "A", "answer_text": "No, not the same person",
             "rationale": ["A. ground truth", "B. hallucination", "C. wrong speaker", "D. unknown"]},
        ],
    }
    count = {
        "source_audio": "./wav/part001.wav",
        "result": [
            {"speaker_meta": {"spk_a": [_seg(0, times, "spk_1")], "spk_b": [_seg(2, times, "spk_3")]}},
            {"question": "How many different speakers are there in this audio?", "question_type": "speech_index",
             "options": _options(["2 speakers", "3 speakers", "5 speakers", "Cannot be determined (insufficient information)"]),
             "answer": "B", "answer_text": "3 speakers",
             "rationale": ["A. wrong speaker", "B. ground truth", "C. hallucination", "D. unknown"]},
            {"question": f"How many different speakers speak between {times[0][0]} s and {times[1][1]} s?",
             "question_type": "time_index",
             "options": _options(["3 speakers", "Cannot be determined", "2 speakers", "6 speakers"]),
             "answer": "C", "answer_text": "2 speakers",
             "rationale": ["A. wrong speaker", "B. unknown", "C. ground truth", "D. hallucination"]},
            {"question": "How many speakers sounded angry?", "question_type": "reverse_count",
             "options": _options(["0", "1", "2", "Cannot be determined"]), "answer": "A", "answer_text": "0",
             "rationale": ["A. ground truth", "B. hallucination", "C. wrong speaker", "D. unknown"]},
        ],
    }
    retrieval = {  # English task-file name; rationale aligned with the options (no letters)
        "source_audio": "./wav/part001.wav",
        "result": [
            {"speaker_meta": {"spk_a": [_seg(2, times, "spk_3")]}},
            {"question": f"Who is the speaker from {times[2][0]} s to {times[2][1]} s, in order of appearance?",
             "question_type": "time_index", "options": _options(["spk_1", "spk_3", "spk_2", "Cannot be determined"]),
             "answer": "B", "answer_text": "spk_3",
             "rationale": ["wrong speaker", "ground truth", "hallucination", "unknown"]},
        ],
    }
    roles = {
        "source_audio": "./wav/part001.wav",
        "result": [
            {"speaker_meta": {"spk_a": [_seg(1, times, "spk_2")], "spk_b": [_seg(0, times, "spk_1")]}},
            {"question": "In the whole conversation, what is the role of the speaker in the snippet?",
             "question_type": "no_index",
             "options": _options(["Presenter of figures", "Customer", "Cannot be determined", "Chef"]),
             "answer": "A", "answer_text": "Presenter of figures",
             "rationale": ["A. ground truth", "B. hallucination", "C. unknown", "D. wrong speaker"]},
        ],
    }
    files = {
        SEG / "level1" / "说话人识别能力-说话人验证任务.json": verify,
        SEG / "level1" / "说话人识别能力-说话人计数任务.json": count,
        SEG / "level1" / "speaker-retrieval.json": retrieval,
        SEG / "level2" / "多说话人对话场景推理能力-对话身份识别任务.json": roles,
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    (root / SEG / "level1" / "notes.json").write_text("{}", encoding="utf-8")  # a stray non-QA file is skipped
    return {"root": root, "times": times, "conv": conv, "work": tmp_path_factory.mktemp("msu-work")}


def test_reads_tasks_tiers_languages(msu_set):
    files = msu.find_task_files(msu_set["root"])
    by_task = {f.task: f for f in files}
    assert set(by_task) == {"SV", "SC", "SR", "RII"}
    assert by_task["SV"].level == 1 and by_task["RII"].level == 2
    assert {f.language for f in files} == {"en"} and {f.scenario for f in files} == {"meeting"}
    assert by_task["SV"].source_audio == (msu_set["root"] / SEG / "wav" / "part001.wav").resolve()
    assert len(by_task["SC"].questions) == 3
    assert msu.classify_task("多说话人观点总结") == "MSVS" and msu.classify_task("说话人观点总结任务") == "SVS"


def test_audio_selection_rules_and_exact_cuts(msu_set):
    items = msu.build_items(msu_set["root"], msu_set["work"])
    assert len(items) == 7  # 3 SV + 2 SC (reverse_count left out) + 1 SR + 1 RII
    assert len(msu.build_items(msu_set["root"], msu_set["work"], keep_reverse=True)) == 8
    conv, times = msu_set["conv"], msu_set["times"]
    sv = sorted((i for i in items if i.metadata["task"] == "SV"), key=lambda i: i.id)
    pairs = [i for i in sv if i.metadata["question_type"] == "no_index"]
    assert len(pairs) == 2
    for it in pairs:  # two clips, cut exactly at the pair's segment times
        assert it.extra_audio and len(it.extra_audio) == 1
        left_turn = 0
        right_turn = 1 if it.answer == "D" else 3
        for path, turn in ((it.audio_path, left_turn), (it.extra_audio[0], right_turn)):
            y = aio.load(path, sr=SR)
            a, b = (round(x * SR) for x in times[turn])
            assert len(y) == b - a
            assert np.max(np.abs(y - conv[a:b])) < 1e-3  # 16-bit round trip
        assert [c["label"] for c in it.metadata["clips"]] == ["Clip 1", "Clip 2"]
    full = (msu_set["root"] / SEG / "wav" / "part001.wav").resolve()
    indexed = [i for i in items if i.metadata["question_type"] != "no_index"]
    assert indexed and all(Path(i.audio_path) == full and not i.extra_audio for i in indexed)
    rii = next(i for i in items if i.metadata["task"] == "RII")  # level 2 no_index: snippet + whole conversation
    assert rii.metadata["tier"] == 2 and len(rii.extra_audio) == 1 and Path(rii.extra_audio[0]) == full
    assert aio.probe(rii.audio_path).duration_s == pytest.approx(times[1][1] - times[1][0], abs=0.01)
    assert rii.choices[0] == "Presenter of figures" and rii.answer == "A"
    assert {i.metadata["index_scheme"] for i in items} == {"no_index", "time_index", "unknown_index"}


def test_concat_packing_for_single_input_agents(msu_set):
    items = msu.build_items(msu_set["root"], msu_set["work"], pack="concat")
    it = next(i for i in items if i.metadata["task"] == "SV" and i.answer == "D" and i.metadata["question_type"] == "no_index")
    times = msu_set["times"]
    d0, d1 = times[0][1] - times[0][0], times[1][1] - times[1][0]
    assert not it.extra_audio
    assert aio.probe(it.audio_path).duration_s == pytest.approx(d0 + 1.0 + d1, abs=0.01)
    (a0, b0), (a1, _b1) = it.metadata["packed_spans"]
    assert a0 == 0.0 and b0 == pytest.approx(d0, abs=0.01) and a1 == pytest.approx(d0 + 1.0, abs=0.01)
    assert it.question.startswith("(This audio holds 2 clips") and "Clip 2:" in it.question


def _result(item, choice: int | None = None, text: str | None = None, status: str = "answered") -> ItemResult:
    pred = text if text is not None else (item.choices[choice] if choice is not None else None)
    return ItemResult(id=item.id, status=status, prediction=pred, choice_index=choice)


def test_letter_scoring_error_classes_and_summary(msu_set, tmp_path):
    items = msu.build_items(msu_set["root"], msu_set["work"])
    sv_d = next(i for i in items if i.metadata["task"] == "SV" and i.answer == "D")  # A wrong spk, B halluc, C unknown
    sr = next(i for i in items if i.metadata["task"] == "SR")  # rationale without letters
    assert msu.error_class(sv_d, _result(sv_d, 3)) == "correct"
    assert msu.error_class(sv_d, _result(sv_d, 0)) == "wrong_speaker"
    assert msu.error_class(sv_d, _result(sv_d, 1)) == "hallucination"
    assert msu.error_class(sv_d, _result(sv_d, 2)) == "unknown"
    assert msu.error_class(sv_d, _result(sv_d, text="")) == "instruction_not_follow"
    assert msu.error_class(sv_d, _result(sv_d, text="I am not sure.")) == "instruction_not_follow"
    assert msu.predicted_letter(sv_d, _result(sv_d, text="Reasoning...\nFinal answer: D.")) == "D"
    assert msu.predicted_letter(sv_d, _result(sv_d, text="no, not the same person")) == "D"
    assert msu.error_class(sr, _result(sr, 0)) == "wrong_speaker"
    assert msu.error_class(sr, _result(sr, 2)) == "hallucination"
    assert msu.msu_score(sr, _result(sr, 1)) is True

    # every item answered with option A
    results = {i.id: _result(i, 0).model_dump() for i in items}
    s = msu.summarize(items, results)
    assert s["overall"]["total"] == 7
    expect_correct = sum(i.answer == "A" for i in items)
    assert s["overall"]["correct"] == expect_correct
    assert s["task"]["SV"]["total"] == 3 and s["tier"]["tier2"]["total"] == 1
    assert s["language"]["en/tier1"]["total"] == 6
    assert s["index_scheme"]["tier1/no_index"]["total"] == 2
    shares = s["tier"]["tier1"]["error_share"]
    assert sum(shares.values()) == pytest.approx(1.0)
    written = msu.write_summary_csvs(s, tmp_path / "report")
    assert {p.name for p in written} == {"summary_by_task.csv", "summary_by_capability.csv", "summary_by_tier.csv",
                                         "summary_by_language.csv", "summary_by_index_scheme.csv",
                                         "summary_by_error_type.csv"}
    rows = list(csv.DictReader((tmp_path / "report" / "summary_by_task.csv").read_text("utf-8").splitlines()))
    assert len(rows) == 16 and next(r for r in rows if r["task_code"] == "SV")["total"] == "3"

    out = msu.write_reference_results(items, results, tmp_path / "scored", msu_set["root"])
    assert len(out) == 4
    scored = json.loads((tmp_path / "scored" / SEG / "level1" / "说话人识别能力-说话人验证任务.json").read_text("utf-8"))
    assert [q.get("reference_result") for q in scored["result"][1:]] == ["A", "A", "A"]


@pytest.mark.slow
def test_offline_stack_answers_speaker_count_by_letter(msu_set, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.bench.runner import load_results, run_batch

    items = [i for i in msu.build_items(msu_set["root"], msu_set["work"])
             if i.metadata["task"] == "SC" and i.metadata["question_type"] == "speech_index"]
    assert len(items) == 1
    summary = run_batch(items, tmp_path / "run", partial(AudioMind, trace_dir=str(tmp_path / "traces")),
                        score=msu.msu_score, progress=False)
    res = load_results(tmp_path / "run")[items[0].id]
    assert summary.correct == 1, res
    assert msu.predicted_letter(items[0], res) == "B"  # "3 speakers"


def test_bench_run_task_msu_writes_the_upstream_views(msu_set, loopback_llm, tmp_path):
    """`bench run --task msu`: the clips cut into RUN/inputs, letter scoring, RUN/msu/ with summary.json, the
    upstream summary CSVs and the scored task files; the model here always picks the first option (A)."""
    from typer.testing import CliRunner

    from audiomind.bench.cli import bench_app
    from audiomind.bench.runner import load_results

    out = tmp_path / "run"
    res = CliRunner().invoke(bench_app, ["run", "--task", "msu", "--source", str(msu_set["root"]), "--out", str(out),
                                         "--planner", loopback_llm, "--frontend", loopback_llm, "--workers", "2",
                                         "--no-progress"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    items = msu.build_items(msu_set["root"], tmp_path / "clips")
    results = load_results(out)
    assert sorted(results) == sorted(i.id for i in items) and len(items) == 7  # reverse_count left out
    for it in items:
        r = results[it.id]
        assert r["status"] == "answered" and r["benchmark"] == "msu", r
        assert msu.predicted_letter(it, r) == "A" and r["correct"] == (it.answer == "A"), (it.id, r["prediction"])
        assert all(Path(c["path"]).parent == out / "inputs" for c in r["metadata"]["clips"] if c["start_s"] is not None)
    assert json.loads((out / "msu" / "summary.json").read_text()) == msu.summarize(items, results)
    for name in ("task", "capability", "tier", "language", "index_scheme", "error_type"):
        assert (out / "msu" / f"summary_by_{name}.csv").is_file()
    scored = json.loads((out / "msu" / "reference_results" / SEG / "level1" / "说话人识别能力-说话人验证任务.json")
                        .read_text("utf-8"))
    assert [q.get("reference_result") for q in scored["result"][1:]] == ["A", "A", "A"]
    assert "MSU-Bench accuracy" in res.output
    config = json.loads((out / "run.json").read_text())["config"]
    assert (config["task"], config["pack"], config["keep_reverse"]) == ("msu", "separate", False)

    more = CliRunner().invoke(bench_app, ["run", "--task", "msu", "--source", str(msu_set["root"]), "--out",
                                          str(tmp_path / "run2"), "--task-option", "keep_reverse=true",
                                          "--task-option", "pack=concat", "--planner", loopback_llm, "--frontend",
                                          loopback_llm, "--no-progress"])
    assert more.exit_code == 0, more.output
    again = load_results(tmp_path / "run2")
    assert len(again) == 8 and all(r["metadata"]["pack"] == "concat" for r in again.values())


# ---------------------------------------------------------------- upstream step 2/3 rules (issue 24, point 5)


def test_letters_are_read_as_upstream_reads_them(msu_set):
    assert msu.normalize_letter("E") is None and msu.normalize_letter("d") == "D"  # A-D only
    assert msu.normalize_letter("Answer: (C)") == "C" and msu.normalize_letter("") is None
    assert msu.extract_letter("I think it is D, not A", ["A", "B", "C", "D"]) == "A"  # upstream's order
    assert msu.extract_letter("Final answer: B.", ["A", "B", "C", "D"]) == "B"
    assert msu.extract_letter("E", ["A", "B", "C", "D"]) is None
    assert msu.upstream_letters(["A. yes", "B) no", "C、maybe"]) == ["A", "B", "C"]
    assert msu.upstream_letters(["yes", "no"]) == ["A", "B"]
    items = msu.build_items(msu_set["root"], msu_set["work"])
    sv_d = next(i for i in items if i.metadata["task"] == "SV" and i.answer == "D")
    assert msu.predicted_letter(sv_d, _result(sv_d, text="I think it is D, not A")) == "A"
    assert msu.error_class(sv_d, _result(sv_d, text="E")) == "instruction_not_follow"


def test_rationale_tags_follow_upstream_order():
    assert msu._rationale_tag("wrong speaker; unknown") == "wrong_speaker"
    assert msu._rationale_tag("说话人错误") == "wrong_speaker" and msu._rationale_tag("幻觉") == "hallucination"
    assert msu._rationale_tag("hallucinating") == "other"  # upstream matches 'hallucination' / 'hallucinate' only
    assert msu._rationale_tag("insufficient evidence") == "unknown"


def test_items_that_never_ran_count_as_instruction_not_followed(msu_set, tmp_path):
    items = msu.build_items(msu_set["root"], msu_set["work"])
    none_ran = {i.id: ItemResult(id=i.id, status="missing_audio").model_dump() for i in items}
    s = msu.summarize(items, none_ran)
    assert (s["overall"]["total"], s["overall"]["correct"], s["overall"]["accuracy"]) == (7, 0, 0.0)  # 0 over 7
    assert s["overall"]["instruction_not_follow"] == 7 and s["not_run"] == 7
    assert msu.summarize(items, {})["overall"]["total"] == 7  # nothing committed: same
    msu.write_summary_csvs(s, tmp_path / "csv", model="m")
    tier = (tmp_path / "csv" / "summary_by_tier.csv").read_text("utf-8").splitlines()
    assert tier == ["model,tier,total,correct,accuracy", "m,1,6,0,0.0000", "m,2,1,0,0.0000"]
    task = list(csv.DictReader((tmp_path / "csv" / "summary_by_task.csv").read_text("utf-8").splitlines()))
    assert next(r for r in task if r["task_code"] == "AI") == {
        "model": "m", "tier": "1", "capability": "SAR", "task_code": "AI", "task_label": "Accent Identification",
        "total": "0", "correct": "0", "accuracy": "0.0000"}
    idx = list(csv.DictReader((tmp_path / "csv" / "summary_by_index_scheme.csv").read_text("utf-8").splitlines()))
    assert [(r["tier"], r["index_scheme"]) for r in idx] == [(t, x) for t in ("1", "2") for x in msu.INDEX_SCHEMES]
    lang = (tmp_path / "csv" / "summary_by_language.csv").read_text("utf-8").splitlines()
    assert lang[0] == "model,language,tier,total,correct,accuracy" and lang[1] == "m,en,1,6,0,0.0000"


def test_language_is_unknown_where_upstream_says_so(msu_set, tmp_path):
    """The raw sample layout (no language folder, no _msu_meta) is 'unknown' upstream, whatever the script."""
    import shutil

    raw = tmp_path / "cn_sample_part001"
    shutil.copytree(msu_set["root"] / SEG, raw / "seg")
    files = msu.find_task_files(tmp_path)
    assert files and {f.language for f in files} == {"unknown"}
