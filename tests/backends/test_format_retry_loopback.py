"""The format check's bounded retry, end to end through the graph: the offline rule planner with a real
OpenAI-compatible front end client talking to a scripted HTTP server on loopback. The first final answer
names no choice, the retry prompt says why, the second answer is accepted."""

from __future__ import annotations

import json

from audiomind import synth
from audiomind.api import AudioMind

from .conftest import openai_chat


def _agent(server, tmp_path, retries: int) -> AudioMind:
    return AudioMind(
        planner="rules", frontend=f"openai:Qwen/Qwen2.5-Omni-7B@{server.url}/v1", trace_dir=tmp_path / "traces",
        format_retries=retries, max_retries=1, use_cache=False,
    )


PERCEPTION = {"description": "three short beeps", "focus": "beeps", "provisional_answer": "3",
              "open_needs": [], "uncertainty": "low"}


def test_format_retry_then_accepted(server, tmp_path):
    clip = synth.beeps(3, tmp_path / "b.wav")
    server.queue(200, openai_chat(json.dumps(PERCEPTION)))
    server.queue(200, openai_chat(json.dumps({"answer": "maybe four or five", "rationale": "unsure"})))
    server.queue(200, openai_chat(json.dumps({"answer": "3", "rationale": "count_events counted 3"})))
    result = _agent(server, tmp_path, retries=2).ask(clip, "How many beeps are there?", ["2", "3", "4"])
    st = result.state
    assert [f.ok for f in st.format_feedback] == [False, True]
    assert "not one of the choices" in st.format_feedback[0].message
    assert result.choice == "3" and result.outcome.status == "answered"
    chats = server.posts("/chat/completions")
    assert len(chats) == 3
    retry_prompt = json.dumps(chats[2].body)
    assert "maybe four or five" in retry_prompt and "did not have the required shape" in retry_prompt
    # the final answer is asked with the ORIGINAL audio attached
    parts = chats[2].body["messages"][-1]["content"]
    assert any(p.get("type") == "input_audio" for p in parts)


def test_format_retries_exhausted_fails_the_run(server, tmp_path):
    clip = synth.beeps(2, tmp_path / "b.wav")
    server.queue(200, openai_chat(json.dumps(PERCEPTION)))
    server.queue(200, openai_chat(json.dumps({"answer": "two or three", "rationale": "?"})), times=2)
    result = _agent(server, tmp_path, retries=1).ask(clip, "How many beeps are there?", ["2", "3", "4"])
    assert [f.ok for f in result.state.format_feedback] == [False, False]
    assert result.outcome.status == "failed" and "format check failed" in result.outcome.reason
    assert result.choice is None
