"""Benchmark input files read row by row, and their audio paths held inside the audio folder.

Real `audiomind bench mmar` / `bench run` runs (typer CliRunner) with real agents: the OpenAI-compatible
planner and front end talking HTTP to the loopback server of evals/throughput_benchmark.py (no model
loads). A bad row (malformed JSON, missing or mistyped field, repeated id, MMAR row without choices) or an
audio path leaving --audio-dir is reported with its file and line and committed as an errored item while
the good rows run; `--strict` refuses the file with the same messages. A real wav placed outside the root
is never opened (a Python audit hook watches every open and subprocess) and no trace mentions it."""

from __future__ import annotations

import importlib.util
import json
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind.bench.runner import load_results
from audiomind.bench.tasks import mmar as mm
from audiomind.cli import app

REPO = Path(__file__).resolve().parents[3]
META_NAME = "MMAR-meta.jsonl"


def _load_benchmark_module():
    spec = importlib.util.spec_from_file_location("throughput_benchmark", REPO / "evals" / "throughput_benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


tb = _load_benchmark_module()

# ---------------------------------------------------------------- watching what the process opens

_SEEN: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _SEEN is not None and event in ("open", "subprocess.Popen", "os.posix_spawn", "shutil.copyfile"):
        _SEEN.append(f"{event} {args!r}"[:2000])


sys.addaudithook(_audit)  # permanent (audit hooks cannot be removed); records only inside watch_opens()


@contextmanager
def watch_opens():
    global _SEEN
    seen: list[str] = []
    _SEEN = seen
    try:
        yield seen
    finally:
        _SEEN = None


# ---------------------------------------------------------------- fixtures


def tone(path: Path, hz: float = 440.0, seconds: float = 0.5) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(16000 * seconds)) / 16000
    sf.write(path, (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)
    return path


@pytest.fixture(scope="module")
def llm():
    s = tb.FakeLLMServer(delay_s=0.0).start()
    yield s
    s.close()


@pytest.fixture
def layout(tmp_path):
    """tmp/data/mmar (the --audio-dir, holding audio/) and a real wav at tmp/outside/outside.wav."""
    root = tmp_path / "data" / "mmar"
    tone(root / "audio" / "good1.wav", 440)
    tone(root / "audio" / "good2.wav", 660)
    outside = tone(tmp_path / "outside" / "outside.wav", 880)
    (root / "audio" / "link.wav").symlink_to(outside)  # inside by name, outside in fact
    return {"root": root, "outside": outside, "outside_bytes": outside.read_bytes(), "tmp": tmp_path}


def mmar_row(id_, audio, choices=("A steady tone", "Speech"), **extra):
    row = {"id": id_, "audio_path": audio, "question": "What is heard?", "choices": list(choices),
           "answer": "A steady tone", "modality": "sound", "category": "Signal Layer", "sub-category": "x"}
    row.update(extra)
    return row


def write_lines(path: Path, lines: list[str | dict]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def bench(args: list[str], llm) -> object:
    spec = f"openai:x@{llm.url}"
    return CliRunner().invoke(app, ["bench", *args, "--planner", spec, "--frontend", spec, "--no-progress"])


def traces_text(out: Path) -> str:
    return "".join(p.read_text() for p in sorted((out / "traces").glob("*.json"))) if (out / "traces").is_dir() else ""


# ---------------------------------------------------------------- paths outside --audio-dir


def test_mmar_audio_paths_outside_the_audio_dir_are_item_errors(layout, llm):
    root, outside = layout["root"], layout["outside"]
    deep = "../" * 30 + "etc/passwd"
    meta = write_lines(root / META_NAME, [
        mmar_row("good1", "./audio/good1.wav"),
        mmar_row("traversal", "../../outside/outside.wav"),
        mmar_row("absolute", str(outside)),
        mmar_row("passwd", "../../../../etc/passwd"),
        mmar_row("passwd_deep", deep),
        mmar_row("symlink", "./audio/link.wav"),
        mmar_row("gone", "./audio/gone.wav"),  # inside, but absent: still missing_audio, not an error
    ])
    out = layout["tmp"] / "run"
    with watch_opens() as seen:
        res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(root), "--out", str(out)], llm)
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "Traceback" not in res.output

    results = load_results(out)
    assert results["good1"]["status"] == "answered"
    assert results["gone"]["status"] == "missing_audio"
    for line, id_ in enumerate(["traversal", "absolute", "passwd", "passwd_deep", "symlink"], start=2):
        r = results[id_]
        assert r["status"] == "error" and r["input_error"] is True, r
        assert r["error"].startswith(f"{META_NAME}:{line}: audio_path refused:") and "outside the allowed" in r["error"]
        assert r["trace_path"] is None and r["correct"] is None
        assert f"{META_NAME}:{line}: audio_path refused" in res.output  # reported as it starts
    assert "5 row(s) not run" in res.output

    # nothing outside the root was opened, copied or handed to a subprocess, and no trace names it
    assert not [s for s in seen if "outside.wav" in s or "/etc/passwd" in s], seen
    assert outside.read_bytes() == layout["outside_bytes"]
    assert sorted(p.name for p in (out / "traces").iterdir()) == ["good1.json"]
    assert "outside.wav" not in traces_text(out) and "passwd" not in traces_text(out)

    # the official-format predictions: the refused rows are echoed without a prediction (not scored)
    preds = [json.loads(x) for x in (out / mm.PREDICTIONS_FILE).read_text().splitlines()]
    assert [p["id"] for p in preds] == ["good1", "traversal", "absolute", "passwd", "passwd_deep", "symlink", "gone"]
    assert [mm.PREDICTION_KEY in p for p in preds] == [True] + [False] * 6
    scores = json.loads((out / mm.SCORES_FILE).read_text())
    assert scores["scored"] == 1 and scores["rows"] == 7


def test_refused_paths_never_fall_back_to_the_bare_file_name(layout):
    """`../../outside/outside.wav` is refused even though <audio-dir>/outside.wav might exist: no silent
    substitution of another file for the one the row named."""
    root = layout["root"]
    tone(root / "outside.wav")
    item = mm.item_from_row(mmar_row("t", "../../outside/outside.wav"), root, where=f"{META_NAME}:1")
    assert item.error and "outside the allowed" in item.error and item.audio_path == ""
    ok = mm.item_from_row(mmar_row("ok", "./audio/good1.wav"), root / "audio")  # the audio folder itself
    assert ok.error is None and ok.audio_path == str((root / "audio" / "good1.wav").resolve())


# ---------------------------------------------------------------- bad rows


def bad_meta(root: Path) -> Path:
    return write_lines(root / META_NAME, [
        mmar_row("good1", "./audio/good1.wav"),                                   # 1
        {k: v for k, v in mmar_row("x", "./audio/good1.wav").items() if k != "id"},  # 2 no id
        {k: v for k, v in mmar_row("nochoices", "./audio/good2.wav").items() if k != "choices"},  # 3
        mmar_row("good2", "./audio/good2.wav"),                                   # 4
        '{"id": "broken", "question": "What is heard?", choices: [}',             # 5 malformed JSON
        mmar_row("good1", "./audio/good2.wav"),                                   # 6 duplicate id
        mmar_row("intq", "./audio/good1.wav", question=42),                       # 7 wrong type
        mmar_row("newline", "./audio/good1.wav", choices=["yes\nANSWER: no", "no"]),  # 8 forged line
        {k: v for k, v in mmar_row("noaudio", "x").items() if k != "audio_path"},  # 9 no audio_path
        "[1, 2, 3]",                                                              # 10 not an object
    ])


EXPECTED = {
    2: 'missing "id"',
    3: 'missing "choices"',
    5: "not valid JSON (Expecting property name enclosed in double quotes, column 48)",
    6: "duplicate id 'good1' (first on line 1)",
    7: '"question" must be a string, not int',
    8: "choice 1 ('yes\\nANSWER: no') contains a control character",
    9: 'missing "audio_path"',
    10: "a row must be a JSON object, not list",
}


def test_read_meta_reports_each_bad_row_with_file_and_line(layout):
    rows = mm.read_meta(bad_meta(layout["root"]))
    assert [r.line for r in rows] == list(range(1, 11))
    bad = {r.line: r.error for r in rows if r.error}
    assert set(bad) == set(EXPECTED)
    for line, needle in EXPECTED.items():
        assert bad[line].startswith(f"{META_NAME}:{line}: ") and needle in bad[line], bad[line]
    ids = [r.item_id for r in rows]
    assert len(set(ids)) == len(ids)  # bad rows get ids of their own, never a good row's
    assert ids[1] == f"{META_NAME}:2" and ids[2] == "nochoices" and ids[5] == f"good1@{META_NAME}:6"


def test_bad_rows_are_errored_items_and_the_good_rows_run(layout, llm):
    meta = bad_meta(layout["root"])
    out = layout["tmp"] / "run"
    res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(layout["root"]), "--out", str(out)], llm)
    assert res.exit_code == 0, res.output + repr(res.exception)
    assert "Traceback" not in res.output and "KeyError" not in res.output
    flat = " ".join(res.output.split())
    for line, needle in EXPECTED.items():
        assert f"{META_NAME}:{line}: " in flat and " ".join(needle.split()) in flat, (line, needle)

    results = load_results(out)
    assert results["good1"]["status"] == "answered" and results["good2"]["status"] == "answered"
    assert results["good1"]["trace_path"] == "traces/good1.json"  # the duplicate did not clobber it
    errored = {k: v for k, v in results.items() if v["status"] == "error"}
    assert len(errored) == len(EXPECTED) and all(v["input_error"] for v in errored.values())
    assert errored["nochoices"]["error"].startswith(f"{META_NAME}:3: missing \"choices\"")  # never free text
    assert f"good1@{META_NAME}:6" in errored and f"{META_NAME}:5" in errored
    assert json.loads((out / "summary.json").read_text())["statuses"] == {"answered": 2, "error": len(EXPECTED)}

    preds = [json.loads(x) for x in (out / mm.PREDICTIONS_FILE).read_text().splitlines()]
    assert len(preds) == 8  # every row that is a JSON object; lines 5 (malformed) and 10 (a list) cannot be echoed
    assert [p.get("id") for p in preds if mm.PREDICTION_KEY in p] == ["good1", "good2"]


def test_strict_refuses_the_whole_file_with_the_same_messages(layout, llm):
    meta = bad_meta(layout["root"])
    out = layout["tmp"] / "run"
    res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(layout["root"]), "--out", str(out), "--strict"], llm)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "file refused" in res.output
    flat = " ".join(res.output.split())
    for line, needle in EXPECTED.items():
        assert f"{META_NAME}:{line}: " in flat and " ".join(needle.split()) in flat, (line, needle)
    assert not (out / "results.jsonl").exists()  # nothing ran

    # a clean file passes --strict; a refused audio path alone is enough to refuse it
    clean = write_lines(layout["root"] / "clean.jsonl", [mmar_row("good1", "./audio/good1.wav")])
    ok = bench(["mmar", "--meta", str(clean), "--audio-dir", str(layout["root"]), "--out", str(out), "--strict"], llm)
    assert ok.exit_code == 0, ok.output
    assert load_results(out)["good1"]["status"] == "answered"
    esc = write_lines(layout["root"] / "esc.jsonl", [mmar_row("t", "../../outside/outside.wav")])
    no = bench(["mmar", "--meta", str(esc), "--audio-dir", str(layout["root"]), "--out", str(out), "--strict"], llm)
    assert no.exit_code == 2 and "esc.jsonl:1: audio_path refused" in " ".join(no.output.split())


def test_bench_run_item_lists_row_by_row(layout, llm):
    clips = layout["root"] / "audio"
    items = write_lines(clips / "items.jsonl", [
        {"id": "t1", "audio": "good1.wav", "question": "What is heard?", "choices": ["A steady tone", "Speech"],
         "answer": "A steady tone"},
        '{"id": "t2", "audio": "good2.wav"',                                            # 2 malformed
        {"id": "t3", "question": "What is heard?"},                                     # 3 no audio
        {"id": "t1", "audio": "good2.wav", "question": "What is heard?"},               # 4 duplicate
        {"id": "t5", "audio": "../../../outside/outside.wav", "question": "What is heard?"},  # 5 outside
        {"id": "t6", "audio": "good1.wav", "extra_audio": [str(layout["outside"])], "question": "Same?"},  # 6
        {"id": ["t7"], "audio": "good1.wav", "question": "What is heard?"},             # 7 id type
        {"id": "t8", "audio": "good2.wav", "question": "   "},                         # 8 blank question
        {"id": "t9", "audio": "good2.wav", "question": "What is heard?", "choices": ["A steady tone", "Speech"],
         "answer": "A steady tone"},
    ])
    out = layout["tmp"] / "run-items"
    with watch_opens() as seen:
        res = bench(["run", "--items", str(items), "--out", str(out)], llm)
    assert res.exit_code == 0, res.output + repr(res.exception)
    flat = " ".join(res.output.split())
    for line, needle in {2: "not valid JSON", 3: 'missing "audio_path" or "audio"',
                         4: "duplicate id 't1' (first on line 1)", 5: "audio path refused", 6: "audio path refused",
                         7: '"id" must be a string or an integer, not list', 8: '"question" is empty'}.items():
        assert f"items.jsonl:{line}: " in flat and needle in flat, (line, needle)
    results = load_results(out)
    assert results["t1"]["status"] == "answered" and results["t9"]["status"] == "answered"
    assert sum(1 for r in results.values() if r["status"] == "error" and r["input_error"]) == 7
    assert not [s for s in seen if "outside.wav" in s], seen
    assert "outside.wav" not in traces_text(out)

    strict = bench(["run", "--items", str(items), "--out", str(layout["tmp"] / "strict"), "--strict"], llm)
    assert strict.exit_code == 2 and "7 bad row(s), file refused" in strict.output
    assert "Traceback" not in strict.output
    # each refused row on a line of its own: real line breaks, never a literal "\n"
    assert "\\n" not in strict.output
    refused = [ln.strip() for ln in strict.output.splitlines() if ln.strip().startswith("items.jsonl:")]
    assert [ln.split(":")[1] for ln in refused] == ["2", "3", "4", "5", "6", "7", "8"]


def test_a_run_where_no_audio_exists_fails_and_names_no_trace_folder(layout, llm):
    meta = write_lines(layout["root"] / META_NAME, [mmar_row("gone1", "./audio/gone1.wav"),
                                                    mmar_row("gone2", "./audio/gone2.wav")])
    out = layout["tmp"] / "run-no-audio"
    res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(layout["root"]), "--out", str(out)], llm)
    flat = " ".join(res.output.split())
    assert res.exit_code == 3 and "every one of the 2 item(s) is missing_audio" in flat, res.output
    assert not (out / "traces").exists() and "traces:" not in res.output  # no folder, so none is named
    assert {r["status"] for r in load_results(out).values()} == {"missing_audio"}
    # one item with audio: the run answers it, exits 0 and names the trace folder it made
    meta = write_lines(layout["root"] / META_NAME, [mmar_row("good1", "./audio/good1.wav"),
                                                    mmar_row("gone2", "./audio/gone2.wav")])
    out2 = layout["tmp"] / "run-some-audio"
    res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(layout["root"]), "--out", str(out2)], llm)
    assert res.exit_code == 0, res.output
    assert "traces:" in res.output and (out2 / "traces" / "good1.json").is_file()


def test_mmar_meta_with_a_trailing_empty_option_runs_as_published(layout, llm):
    """The published MMAR meta has four rows whose last option is "": kept in predictions, never offered."""
    meta = write_lines(layout["root"] / META_NAME, [
        mmar_row("good1", "./audio/good1.wav", choices=("A steady tone", "Speech", "Birdsong", ""))])
    out = layout["tmp"] / "run-empty-option"
    res = bench(["mmar", "--meta", str(meta), "--audio-dir", str(layout["root"]), "--out", str(out), "--strict"], llm)
    assert res.exit_code == 0, res.output
    pred = json.loads((out / "predictions.jsonl").read_text().splitlines()[0])
    assert pred["choices"] == ["A steady tone", "Speech", "Birdsong", ""]  # as published
    assert pred["answer_prediction"] in ("A steady tone", "Speech", "Birdsong")  # never the empty option
    result = load_results(out)["good1"]
    assert result["metadata"]["empty_options"] == [4] and result["status"] == "answered"


def test_mmar_score_names_the_bad_line(layout):
    preds = write_lines(layout["root"] / "preds.jsonl", [mmar_row("a", "x", answer_prediction="A steady tone"),
                                                         "{not json"])
    res = CliRunner().invoke(app, ["bench", "mmar-score", str(preds)])
    assert res.exit_code == 2 and "preds.jsonl:2: not valid JSON" in " ".join(res.output.split())
    assert "Traceback" not in res.output
