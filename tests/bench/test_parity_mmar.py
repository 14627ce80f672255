"""MMAR's own grader, number for number: every figure the official `code/evaluation.py` (ddlBoJack/MMAR,
commit 3bce090) printed for a 1,000-row prediction file on the published meta, compared with the project's
scorer; the rounding case (23 of 160: the official 14.37, not round()'s 14.38); the published meta runs as
published (its four rows with a trailing empty option are kept, and a file answering all 1,000 rows is scored
over 1,000); malformed prediction rows are named with their line, never scored.

The fixtures are a copy of the shared data folder's (tests/data/parity/mmar, its README says where from), kept
xz-compressed in the repository and decompressed into a temporary folder, so the tests run in every clone."""

from __future__ import annotations

import hashlib
import json
import lzma
import re
import shutil
from pathlib import Path

import pytest

from audiomind.bench.tasks import mmar as mm

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "data" / "parity" / "mmar"
META_SHA256_PREFIX = "1c9a343e"  # the fixtures' README: the meta of MMAR commit 3bce090
# sha256 of each decompressed fixture, as the fixtures' README lists them
SHA256 = {
    "MMAR-meta.jsonl": "1c9a343e7bebf1037482b935c54eacd43cc63df7b2c668724b5560caf1f84fad",
    "predictions-mixed.jsonl": "ab881ee46f781006251eec2307562cd5204df8bc31c5b9b26f11a345a416fcef",
    "round_23_of_160.jsonl": "2d8f22e3cd67443ac31771d03f1b6f1915a3b1b2e6e77630be10078f68ae9c84",
    "official-evaluation-output.txt": "12dd3fe1186c2087ee629c1cd418f28098226e06a1ebe02507e35018c63831e4",
}
EMPTY_OPTION_LINES = (396, 596, 615, 886)


@pytest.fixture(scope="module")
def parity(tmp_path_factory) -> Path:
    """The fixtures as the official script read them: the .xz copies decompressed, each checked by its sha256."""
    out = tmp_path_factory.mktemp("mmar-parity")
    for name, digest in SHA256.items():
        packed = FIXTURES / f"{name}.xz"
        if packed.is_file():
            with lzma.open(packed) as src, (out / name).open("wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(FIXTURES / name, out / name)
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
    return out

_FIGURE = re.compile(r"^(?P<name>.+?) : (?P<acc>\d+\.\d\d)% over (?P<n>\d+) samples$")
_TOTAL = re.compile(r"^Total Accuracy: (?P<acc>\d+\.\d\d)% over (?P<n>\d+) samples$")
_NOPRED = re.compile(r"^No prediction count: (?P<n>\d+)$")
_SECTIONS = {"Modality-wise Accuracy:": "modality", "Category-wise Accuracy:": "category",
             "Sub-category-wise Accuracy:": "sub-category"}


def parse_official(text: str) -> dict:
    """{"modality"|"category"|"sub-category": {name: (acc text, n)}, "total": (acc text, n), "no_prediction": n}
    from the official script's printed output."""
    out: dict = {v: {} for v in _SECTIONS.values()}
    section = None
    for line in text.splitlines():
        line = line.rstrip()
        if line in _SECTIONS:
            section = _SECTIONS[line]
        elif m := _TOTAL.match(line):
            out["total"] = (m["acc"], int(m["n"]))
            section = None
        elif m := _NOPRED.match(line):
            out["no_prediction"] = int(m["n"])
        elif section and (m := _FIGURE.match(line)):
            out[section][m["name"]] = (m["acc"], int(m["n"]))
    return out


def ours(d: dict) -> tuple[str, int]:
    """A group's figure as the official script prints it (a group with no rows prints 0.00)."""
    return ("0.00" if d["accuracy"] is None else f"{d['accuracy']:.2f}"), d["total"]


def test_every_official_figure_equals_the_project_figure(parity):
    official = parse_official((parity / "official-evaluation-output.txt").read_text(encoding="utf-8"))
    # the output holds 7 modalities, 4 categories, 16 sub-categories and the total: 28 accuracy figures
    assert (len(official["modality"]), len(official["category"]), len(official["sub-category"])) == (7, 4, 16)
    scores = mm.score_file(parity / "predictions-mixed.jsonl", meta=parity / "MMAR-meta.jsonl")
    assert scores.malformed == []
    compared = 0
    for group in ("modality", "category", "sub-category"):
        table = scores.model_dump(by_alias=True)[group]
        assert set(table) >= set(official[group]), group
        for name, figure in official[group].items():
            assert ours(table[name]) == figure, (group, name)
            compared += 1
        # nothing the project reports with rows is missing from the official output
        assert {k for k, d in table.items() if d["total"]} <= set(official[group]), group
    assert (f"{scores.accuracy:.2f}", scores.scored) == official["total"] == ("47.61", 920)
    compared += 1
    assert compared == 28
    # The official "No prediction count" is incremented only after rows without a prediction were skipped,
    # so it prints 0 whatever the file holds; the project counts the skipped rows.
    assert official["no_prediction"] == 0
    assert scores.rows == 1000 and scores.no_prediction == 1000 - 920
    assert scores.meta_sha256 and scores.meta_sha256.startswith(META_SHA256_PREFIX)


def test_rounding_is_the_official_formatting_not_round(parity):
    scores = mm.score_file(parity / "round_23_of_160.jsonl")
    assert (scores.correct, scores.scored) == (23, 160)
    assert f"{scores.accuracy:.2f}" == "14.37"
    assert round(100 * 23 / 160, 2) == 14.38  # what the project printed before (the point 2)
    assert mm.official_percent(23, 160) == 14.37 and mm.official_percent(0, 0) is None


def test_the_published_meta_runs_as_published(parity):
    meta = parity / "MMAR-meta.jsonl"
    lines = meta.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000
    rows = mm.read_meta(meta)
    assert [r.error for r in rows if r.error] == []
    with_empty = [r.line for r in rows if "" in r.data["choices"]]
    assert tuple(with_empty) == EMPTY_OPTION_LINES
    _, items = mm.mmar_items(meta, REPO / "no-such-audio-dir", strict=True)  # --strict accepts the file
    assert len(items) == 1000 and not any(it.error for it in items)
    by_line = {r.line: it for r, it in zip(rows, items)}
    for n in EMPTY_OPTION_LINES:
        it = by_line[n]
        published = json.loads(lines[n - 1])["choices"]
        assert published[-1] == "" and it.raw["choices"] == published  # kept as published
        assert it.choices == published[:-1] and "" not in it.choices  # never offered, so never chosen
        assert it.metadata["empty_options"] == [len(published)]
    # a prediction file answering every row (the answer itself) is scored over 1,000, all right
    answered = [{**json.loads(line), "answer_prediction": json.loads(line)["answer"]} for line in lines]
    scores = mm.score_rows(answered, mm.load_meta(meta))
    assert (scores.scored, scores.correct, scores.accuracy) == (1000, 1000, 100.0)
    assert (scores.strict.total, scores.strict.correct) == (1000, 1000)
    # the empty option is scored as published: it has no tokens, so it never credits an empty prediction
    row = json.loads(lines[EMPTY_OPTION_LINES[0] - 1])
    assert not mm.string_match(row["answer"], "", row["choices"])


def test_malformed_prediction_rows_are_named_not_scored(parity, tmp_path):
    lines = (parity / "predictions-mixed.jsonl").read_text(encoding="utf-8").splitlines()[:10]
    rows = [json.loads(line) for line in lines]
    bad = [dict(rows[0], answer_prediction=[rows[0]["answer"]]),  # list: str() of it would match
           dict(rows[1], answer_prediction=None), dict(rows[2], answer_prediction=3),
           {k: v for k, v in rows[3].items() if k != "answer"} | {"answer_prediction": rows[3]["answer"]},
           dict(rows[4], modality="ambience", answer_prediction=rows[4]["answer"])]
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join([*(json.dumps(r) for r in bad), "", *lines[5:]]) + "\n", encoding="utf-8")
    with pytest.raises(mm.PredictionRowsError) as exc:
        mm.score_file(path)
    messages = exc.value.messages
    assert messages == [
        'preds.jsonl:1: "answer_prediction" must be a string, not list',
        'preds.jsonl:2: "answer_prediction" must be a string, not null',
        'preds.jsonl:3: "answer_prediction" must be a string, not int',
        'preds.jsonl:4: missing "answer"',
        "preds.jsonl:5: unknown modality 'ambience' (the official script knows " + ", ".join(mm.MODALITIES) + ")",
        "preds.jsonl:6: blank line",
    ]
    skipped = mm.score_file(path, skip_malformed=True)
    assert skipped.malformed == messages
    good = [r for r in rows[5:] if "answer_prediction" in r]
    assert skipped.scored == len(good)
    assert skipped.correct == sum(mm.string_match(r["answer"], r["answer_prediction"], r["choices"]) for r in good)
    # score_rows (no file) leaves them out too: a list-valued prediction is never str()-ed into a match
    direct = mm.score_rows([bad[0]])
    assert direct.scored == 0 and direct.malformed == ['row 1: "answer_prediction" must be a string, not list']
