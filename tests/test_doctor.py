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
