"""MMAR-Rubrics, number for number: `audiomind bench rubrics` (official defaults) against a deterministic loopback
judge equals what MMAR's own `code/evaluation_rubrics.py` printed against the same judge (fixtures and how they
were made: tests/data/parity/mmar-rubrics/README.md): every score, accuracy and denominator per modality, category
and sub-category, the totals, the "No prediction count", and each item's score. Also checked end to end: the
requests carry the official model, temperature 0 and seed 42, and a rerun resumes without asking again."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind.cli import app

FIX = Path(__file__).resolve().parents[1] / "data" / "parity" / "mmar-rubrics"
_spec = importlib.util.spec_from_file_location("stub_judge", FIX / "stub_judge.py")
stub_judge = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stub_judge)  # type: ignore[union-attr]

_LINE = re.compile(r"^(?P<name>.+?)\s+score=(?P<score>\d+\.\d\d), acc=(?P<acc>\d+\.\d\d)% over\s+(?P<n>\d+) samples$")
_SECTIONS = {"Modality-wise Score & Accuracy:": "modality", "Category-wise Score & Accuracy:": "category",
             "Sub-category-wise Score & Accuracy:": "sub-category"}


def parse_official(text: str) -> dict:
    out: dict = {v: {} for v in _SECTIONS.values()}
    section = None
    for line in text.splitlines():
        if line in _SECTIONS:
            section = _SECTIONS[line]
        elif m := re.match(r"^Total Accuracy: (\d+\.\d\d)% over (\d+) samples$", line):
            out["acc"], out["n"], section = m[1], int(m[2]), None
        elif m := re.match(r"^Total Score: (\d+\.\d\d) over (\d+) samples$", line):
            out["score"] = m[1]
        elif m := re.match(r"^No prediction count: (\d+)$", line):
            out["no_prediction"] = int(m[1])
        elif section and (m := _LINE.match(line)):
            out[section][m["name"]] = (m["score"], m["acc"], int(m["n"]))
    return out


@pytest.fixture
def judge():
    j = stub_judge.StubJudge()
    yield j
    j.close()


def test_bench_rubrics_equals_the_official_scorer(judge, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    official = parse_official((FIX / "official-output.txt").read_text(encoding="utf-8"))
    out = tmp_path / "rubrics"
    args = ["bench", "rubrics", str(FIX / "predictions.jsonl"), "--judge", f"openai:gpt-4o-2024-11-20@{judge.url}",
            "--out", str(out), "--workers", "1"]  # one at a time: the stub counts raters per item
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output + repr(res.exception)
    summary = json.loads((out / "summary.json").read_text())

    def fig(d: dict) -> tuple[str, str, int]:
        return f"{d['score']:.2f}", f"{d['acc']:.2f}", d["n"]

    compared = 0
    for group in ("modality", "category", "sub-category"):
        assert set(summary[group]) == set(official[group]), group
        for name, figure in official[group].items():
            assert fig(summary[group][name]) == figure, (group, name)
            compared += 1
    assert fig(summary["overall"]) == (official["score"], official["acc"], official["n"]) == ("23.46", "48.08", 52)
    assert summary["no_prediction"] == official["no_prediction"] == 8 and summary["skipped"] == 8
    assert compared == 6 + 4 + 14
    # each item: the same verdict and the same score (the same arithmetic: exact up to float summation order)
    mine = {json.loads(x)["id"]: json.loads(x) for x in (out / "evaluated.jsonl").read_text().splitlines()}
    theirs = [json.loads(x) for x in (FIX / "official-items.jsonl").read_text().splitlines()]
    assert len(mine) == len(theirs) == 52
    for t in theirs:
        assert mine[t["id"]]["correct"] == t["correct"] and mine[t["id"]]["score"] == pytest.approx(t["score"], abs=1e-12)
    # the official settings on the wire: model, temperature 0, seed 42; five raters per right answer only
    n_right = sum(t["correct"] for t in theirs)
    assert len(judge.requests) == 5 * n_right == 125
    assert {(r["model"], r["temperature"], r["seed"]) for r in judge.requests} == {("gpt-4o-2024-11-20", 0.0, 42)}
    # a rerun resumes: nothing is asked again, the figures stay
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and len(judge.requests) == 125
    assert json.loads((out / "summary.json").read_text())["overall"] == summary["overall"]
    # other settings never mix into that folder
    clash = CliRunner().invoke(app, [*args, "--protocol", "project"])
    assert clash.exit_code == 2 and "other settings" in clash.output


def test_project_protocol_only_by_flag(judge, tmp_path, monkeypatch):
    """--protocol project: a row without a prediction is scored 0 and kept (in the denominator), where the
    official protocol skips it. Rows with no right answer need no judge call."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    wrong = {json.loads(x)["id"] for x in (FIX / "official-items.jsonl").read_text().splitlines()
             if not json.loads(x)["correct"]}
    rows = [x for x in (FIX / "predictions.jsonl").read_text().splitlines()
            if json.loads(x)["id"] in wrong or "answer_prediction" not in json.loads(x)]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(rows) + "\n")
    res = CliRunner().invoke(app, ["bench", "rubrics", str(preds), "--judge", f"openai:j@{judge.url}", "--protocol",
                                   "project", "--out", str(tmp_path / "p")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "p" / "summary.json").read_text())
    assert summary["overall"]["n"] == len(rows) == 27 + 8 and summary["skipped"] == 0
    assert summary["overall"]["score"] == 0.0 and judge.requests == []
    official = CliRunner().invoke(app, ["bench", "rubrics", str(preds), "--judge", f"openai:j@{judge.url}",
                                        "--out", str(tmp_path / "o")])
    assert official.exit_code == 0, official.output
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["overall"]["n"] == 27
