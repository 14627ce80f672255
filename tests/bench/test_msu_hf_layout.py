"""MSU-Bench read from the Hugging Face release layout (annotations/<scenario><cn|en>/..., audio/, data/test.jsonl)
grades the same items exactly as the sample layout does: the same questions, tiers, languages, scenarios and
cut clips, the same letters from the same replies, and every CSV cell of upstream's step-3 summary equal in both
layouts and to the official figures (tests/data/parity/msu/official/).

Fixtures: tests/data/parity/msu/source (sample layout) and tests/data/parity/msu_hf (the same task files in the
release layout; see its PROVENANCE.md). The conversations' WAVs are written here: seeded noise long enough for
every cut, identical in both layouts. CSV cells are compared as text (4-place decimals of the same integer
ratios: exact equality), cut lengths in samples (exact: both layouts cut the same file at the same times)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind.bench.tasks import make_task, msu

DATA = Path(__file__).resolve().parents[1] / "data" / "parity"
SAMPLE, HF = DATA / "msu" / "source", DATA / "msu_hf"
OFFICIAL = DATA / "msu" / "official"
SR = 16000
# (sample-layout conversation folder, Hugging Face audio file): the conversations that have audio
CONVERSATIONS = (("zh/movie/QA_short/cn_part004", "audio/moviecn/cn_part004.wav"),
                 ("en/movie/QA_short/en_part001", "audio/movieen/en_part001.wav"))
CSV_FILES = ("summary_by_task.csv", "summary_by_capability.csv", "summary_by_tier.csv", "summary_by_language.csv",
             "summary_by_index_scheme.csv", "summary_by_error_type.csv")


def _noise(seconds: float, seed: int) -> np.ndarray:
    return (0.01 * np.random.default_rng(seed).standard_normal(round(seconds * SR))).astype(np.float32)


def _longest_end(folder: Path) -> float:
    ends = [float(s["end_time"]) for p in folder.rglob("*.json")
            for e in json.loads(p.read_text(encoding="utf-8"))["result"] if "speaker_meta" in e
            for segs in e["speaker_meta"].values() for s in segs]
    return max(ends) + 1.0


def _key(it) -> tuple:
    m = it.metadata
    return (m["language"], m["scenario"], m["task"], m["level"], m["segment"], int(it.raw["question_index"]))


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("msu-layouts")
    sample, hf = base / "sample", base / "MSU-Benchmark"
    shutil.copytree(SAMPLE, sample)
    shutil.copytree(HF, hf)
    for n, (conv, wav) in enumerate(CONVERSATIONS):
        y = _noise(_longest_end(SAMPLE / conv), n)
        for path in (sample / conv / "3_revised_label" / "wav" / "part001.wav", hf / wav):
            path.parent.mkdir(parents=True, exist_ok=True)
            aio.write_wav(path, y, SR)
    (hf / "data").mkdir()
    (hf / "data" / "test.jsonl").write_text('{"not": "read"}\n', encoding="utf-8")  # present in the release
    a = msu.build_items(sample, base / "clips-sample")
    b = msu.build_items(hf, base / "clips-hf")
    replies = {(r["file"], r["question"]): r["reply"]
               for r in map(json.loads, (DATA / "msu" / "predictions.jsonl").read_text(encoding="utf-8").splitlines())}

    def results(items, root):
        out = {}
        for it in items:
            if not it.metadata["clips"]:
                out[it.id] = {"id": it.id, "status": "missing_audio", "prediction": None}
                continue
            sample_file = next(x for x in a if _key(x) == _key(it)).raw["file"]
            reply = replies[(Path(sample_file).relative_to(sample.resolve()).as_posix(), int(it.raw["question_index"]))]
            out[it.id] = ({"id": it.id, "status": "error", "prediction": None, "error": "the call failed"}
                          if reply is None else {"id": it.id, "status": "answered", "prediction": reply})
        return out

    return {"sample": sample.resolve(), "hf": hf.resolve(), "a": a, "b": b,
            "ra": results(a, sample), "rb": results(b, hf)}


def test_same_items_from_both_layouts(both):
    a, b = {_key(it): it for it in both["a"]}, {_key(it): it for it in both["b"]}
    assert len(a) == len(both["a"]) == 15 and a.keys() == b.keys()
    assert {(k[0], k[1]) for k in b} == {("zh", "movie"), ("en", "movie"), ("zh", "podcast")}
    for k, x in a.items():
        y = b[k]
        assert (y.question, y.choices, y.answer) == (x.question, x.choices, x.answer), k
        for field in ("tier", "capability", "task_label", "index_scheme", "letters", "rationale", "version"):
            assert y.metadata[field] == x.metadata[field], (k, field)
        assert [(c["label"], c["start_s"], c["end_s"]) for c in y.metadata["clips"]] == \
               [(c["label"], c["start_s"], c["end_s"]) for c in x.metadata["clips"]], k
        for cx, cy in zip(x.metadata["clips"], y.metadata["clips"]):
            assert np.array_equal(aio.load(cx["path"], sr=SR), aio.load(cy["path"], sr=SR)), k
    # the English file's own source_audio does not resolve in this layout: audio/<scenario><cn|en>/<segment>.wav does
    en = next(it for it in both["b"] if it.metadata["language"] == "en")
    assert en.raw["source_audio"] == str(both["hf"] / "audio" / "movieen" / "en_part001.wav")
    assert sum(1 for it in both["b"] if not it.metadata["clips"]) == 2  # podcastcn: its WAV is absent


@pytest.mark.parametrize("mode,missing_audio", [("all_items", "count"), ("pipeline", "skip")])
def test_every_figure_equal_in_both_layouts_and_to_upstream(both, tmp_path, mode, missing_audio):
    sa = msu.summarize(both["a"], both["ra"], missing_audio=missing_audio)
    sb = msu.summarize(both["b"], both["rb"], missing_audio=missing_audio)
    assert sb == sa
    msu.write_summary_csvs(sa, tmp_path / "a")
    msu.write_summary_csvs(sb, tmp_path / "b")
    for name in CSV_FILES:
        ours_a = (tmp_path / "a" / name).read_text(encoding="utf-8")
        ours_b = (tmp_path / "b" / name).read_text(encoding="utf-8")
        with open(OFFICIAL / mode / name, encoding="utf-8", newline="") as f:
            official = list(csv.reader(f))
        assert ours_b == ours_a, name
        assert list(csv.reader(ours_b.splitlines())) == official, name
    assert sb["overall"]["total"] == (15 if missing_audio == "count" else 13)


def test_export_carries_the_language_upstream_reads(both, tmp_path):
    out = msu.write_reference_results(both["b"], both["rb"], tmp_path / "export", both["hf"])
    metas = {p.relative_to(tmp_path / "export").parts[1]: json.loads(p.read_text(encoding="utf-8"))["_msu_meta"]
             for p in out}
    assert {k: m["language"] for k, m in metas.items()} == {"moviecn": "zh", "movieen": "en", "podcastcn": "zh"}
    assert {k: m["scenario"] for k, m in metas.items()} == {"moviecn": "movie", "movieen": "movie",
                                                           "podcastcn": "podcast"}


def test_release_without_task_files_says_what_it_reads(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text('{"question": "q"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"annotations/<scenario><cn\|en>/ .* not data/test.jsonl"):
        make_task("msu").load_items(tmp_path, work_dir=tmp_path / "clips")
