"""Issue 35's residual items: one display escape for every command (cli_common.one_line is paths.visible),
the bounded reader behind every file `bench mmar-score` and its siblings read, judges with a time budget and
a trace when cancelled, the input copies of `serve` and `mcp` kept bounded, and the batch endpoints against
a dripping and a hanging server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from audiomind.cli_common import cell, one_line
from audiomind.paths import markdown_text, visible

HOSTILE_TEXT = ["\x1b[2J", "\x1b]8;;http://evil/\x07link\x1b]8;;\x07", "\x1bP+q\x1b\\", "\x9b31m", "a\rb",
                "x\x00y", "\u202eevil", "line\u2028sep", "tab\there", "two\nlines", "del\x7f"]
RAW = [chr(c) for c in [*range(0x20), *range(0x7f, 0xa0), 0x2028, 0x2029, 0x202e, 0x2066]]


# ---------------------------------------------------------------- 1. one display escape


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_one_line_is_the_one_escape_in_its_one_line_form(text):
    shown = one_line(text)
    assert shown == visible(text, one_line=True)
    assert not any(ch in shown for ch in RAW), repr(shown)
    assert cell(text) == cell(shown)  # escaping twice changes nothing more than once (no raw control left)
    multi = visible(text)
    assert not any(ch in multi for ch in RAW if ch not in "\n\t"), repr(multi)
    assert "\n" not in markdown_text(text)


def test_one_line_names_line_breaks_as_python_does():
    assert one_line("missing\nfile.wav") == "missing\\nfile.wav"
    assert one_line("a\tb\rc") == "a\\tb\\rc"
    assert one_line("\x1b[31m") == "\\x1b[31m" and one_line("\x9b") == "\\x9b" and one_line("\u2028") == "\\u2028"
    assert visible("keep\nlines\tand tabs") == "keep\nlines\tand tabs"


def _prediction_rows(category: str) -> list[dict]:
    return [{"id": f"x{i}", "audio_path": f"./audio/x{i}.wav", "question": "q?", "choices": ["Yes", "No"],
             "answer": "Yes", "modality": "speech", "category": "Semantic Layer", "sub-category": category,
             "answer_prediction": "Yes" if i % 2 else "No"} for i in range(4)]


def test_mmar_score_and_bad_rows_show_escape_sequences_as_text(tmp_path):
    from audiomind.bench.cli import bench_app

    evil = "Sem\x1b]8;;http://evil/\x07antic\x1b]8;;\x07 \x1b[2J\x9b31m[bold]x[/bold]"
    path = tmp_path / "pred\x1b[1A.jsonl"
    rows = [json.dumps(r) for r in _prediction_rows(evil)]
    path.write_text("\n".join([*rows, '{"id": "bad\x1b[2J", "question": 1}']) + "\n", encoding="utf-8")
    res = CliRunner().invoke(bench_app, ["mmar-score", str(path), "--skip-malformed"], terminal_width=300)
    assert res.exit_code == 0, res.output
    out = res.output
    assert not any(ch in out for ch in RAW if ch != "\n"), repr(out)
    assert "\\x1b]8;;http://evil/\\x07" in out and "\\x9b31m" in out and "[bold]x[/bold]" in out
