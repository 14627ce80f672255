"""The format check's bounded retry, end to end through the graph: the offline rule planner with a real
OpenAI-compatible front end client talking to a scripted HTTP server on loopback. The first final answer
names no choice, the retry prompt says why, the second answer is accepted. The check reads shape only: a
prose answer that names exactly one choice (a negation, a refusal) is re-asked, never read as that choice, and
one still in prose when the re-asks run out ends the item without an answer."""

from __future__ import annotations

import json

from audiomind import synth
from audiomind.api import AudioMind
from audiomind.graph.nodes import RETRY_CHOICE

from .conftest import openai_chat


def _agent(server, tmp_path, retries: int, mode: str = "agent") -> AudioMind:
    return AudioMind(
        planner="rules", frontend=f"openai:Qwen/Qwen2.5-Omni-7B@{server.url}/v1", trace_dir=tmp_path / "traces",
        format_retries=retries, max_retries=1, use_cache=False, mode=mode,
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


NEGATION = "It is definitely not 3 beeps; listening again, there are two."


def test_prose_naming_one_choice_is_reasked_not_read(server, tmp_path):
    """A prose reply (not JSON) whose only choice is the one it denies: re-asked with the shape rule, and the
    verbatim choice of the second reply (a bare reply, no JSON) is the answer."""
    clip = synth.beeps(2, tmp_path / "b.wav")
    server.queue(200, openai_chat(json.dumps(PERCEPTION)))
    server.queue(200, openai_chat(NEGATION))
    server.queue(200, openai_chat("2"))
    result = _agent(server, tmp_path, retries=2).ask(clip, "How many beeps are there?", ["2", "3", "4"])
    st = result.state
    assert [(f.ok, f.answer_text) for f in st.format_feedback] == [(False, NEGATION), (True, "2")]
    assert st.format_feedback[0].message == "the answer is not one of the choices"
    assert result.choice == "2" and result.choice_index == 0 and result.outcome.status == "answered"
    chats = server.posts("/chat/completions")
    assert len(chats) == 3
    retry_prompt = json.dumps(chats[2].body)
    assert json.dumps(NEGATION)[1:-1] in retry_prompt and json.dumps(RETRY_CHOICE)[1:-1] in retry_prompt


def test_prose_to_the_end_leaves_the_item_without_an_answer(server, tmp_path):
    """Every reply in prose, each naming exactly one choice (a refusal, then a JSON reply whose answer is
    prose): the re-asks run out and the run fails with no choice, whatever the prose mentioned."""
    clip = synth.beeps(3, tmp_path / "b.wav")
    server.queue(200, openai_chat(json.dumps(PERCEPTION)))
    server.queue(200, openai_chat("I cannot tell whether there are 3 beeps."))
    server.queue(200, openai_chat(json.dumps({"answer": "not 3, I think", "rationale": "?"})))
    result = _agent(server, tmp_path, retries=1).ask(clip, "How many beeps are there?", ["2", "3", "4"])
    st = result.state
    assert [f.ok for f in st.format_feedback] == [False, False]
    assert [f.answer_text for f in st.format_feedback] == ["I cannot tell whether there are 3 beeps.",
                                                           "not 3, I think"]
    assert result.outcome.status == "failed" and "format check failed" in result.outcome.reason
    assert result.choice is None and result.choice_index is None
    assert st.final_answer.choice is None and st.final_answer.choice_index is None
    assert len(server.posts("/chat/completions")) == 3  # one answer and one re-ask, no more


def test_direct_mode_prose_fails_at_once(server, tmp_path):
    """The direct baseline has no re-ask: one answer call, and a prose answer is no answer."""
    clip = synth.beeps(3, tmp_path / "b.wav")
    server.queue(200, openai_chat("Not 2 beeps, I think."))  # the old substring reading chose 2
    result = _agent(server, tmp_path, retries=2, mode="direct").ask(clip, "How many beeps are there?",
                                                                     ["2", "3", "4"])
    assert [f.ok for f in result.state.format_feedback] == [False]
    assert result.outcome.status == "failed" and result.choice is None and result.choice_index is None
    assert len(server.posts("/chat/completions")) == 1
