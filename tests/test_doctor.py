"""`audiomind doctor` says what is usable here and why the rest is not."""

from __future__ import annotations

from typer.testing import CliRunner

from audiomind.cli import app


def test_doctor_lists_backends_models_and_tools(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    for name in ("rules", "cascade", "whisper-tiny.en", "yamnet", "silero-vad", "resemblyzer", "minilm", "asr",
                 "tagging", "vad", "speaker_count"):
        assert name in out, name
    # the embedded stack is usable on this machine; a hub-only backend says why it is not
    assert "gemini" in out.lower()
    # the judges' word knowledge: the AudioSet ontology ships with the package, WordNet comes from Debian
    assert "audioset_ontology" in out and "632 AudioSet classes" in out
    assert "wordnet" in out


def test_doctor_json_has_the_documented_shape_and_names_paths_plainly():
    import json

    from audiomind.cli_common import DoctorReport

    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = DoctorReport.model_validate(json.loads(result.output))
    kinds = {r.kind for r in report.rows}
    assert {"system", "backend", "model", "lexicon", "tool"} <= kinds
    for r in report.rows:
        assert r.status in ("yes", "no", "fallback") and (r.status == "no") == (not r.usable)
        assert "PosixPath(" not in r.detail  # a locator's several files are listed as paths, not a tuple's repr
    dnsmos = next(r for r in report.rows if r.kind == "model" and r.name == "dnsmos")
    if dnsmos.usable:
        assert dnsmos.detail.count(".onnx") == 2


def test_doctor_lists_a_gguf_as_a_planner_only_when_its_context_holds_the_prompt():
    import pytest

    pytest.importorskip("llama_cpp")
    from audiomind.backends.planners.llamacpp import planner_fit
    from audiomind.backends.registry import describe_backends
    from audiomind.embedded import models
    from audiomind.tools.manifest import ToolRegistry

    ok, gguf = models.check("smollm2")
    if not ok:
        pytest.skip(f"SmolLM2 GGUF not installed ({gguf})")
    row = next(b for b in describe_backends() if b.name == "llamacpp:smollm2")
    assert row.usable and "context 8192 tokens" in row.why  # SmolLM2's context holds the compact prompt
    inventory = ToolRegistry.load().render_inventory()
    fits, why = planner_fit(gguf, inventory, reply_tokens=4000)  # replies so long the context cannot hold them
    assert not fits and why.startswith("too small a context for the planner") and "8192" in why
