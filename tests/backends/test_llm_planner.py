"""LLMPlanner over real LangChain chat models: ChatOpenAI against the loopback server (what the request
looks like on the wire), and langchain_core's scripted GenericFakeChatModel for the parsing paths."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from audiomind.backends.base import BackendError
from audiomind.backends.planners.llm import DecisionOut, LLMPlanner, wire_schema
from audiomind.backends.registry import make_planner
from audiomind.prompts import evidence_rule
from audiomind.state import Action, PlannerDecision

from .conftest import artifact_for, make_state, openai_chat, openai_error

INVENTORY = ("## temporal_segmentation\n"
             "- vad [temporal_segmentation] (artifact: string = 'a0', threshold: number = 0.5)\n"
             "    does: Speech activity segments. Times only.\n"
             "    may support: where speech is active\n"
             "    must not be used for: what is said")
"""One tool's entry as ToolRegistry.render_inventory writes it."""
DECISION = {
    "action": "CALL_TOOLS", "rationale": "count the beeps with onsets",
    "tool_calls": [{"tool": "onsets", "arguments": {"artifact": "a0", "min_gap_s": 0.1}, "reason": "count"},
                   {"tool": "not_a_real_tool", "arguments": {}, "reason": "passes through"}],
    "relisten_artifact_ids": [], "relisten_prompt": "", "stop_reason": "",
}


@pytest.fixture
def state(clips):
    return make_state([artifact_for(clips["short"])])


def _planner(server, monkeypatch, **kw):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    p = make_planner(f"openai:Qwen/Qwen2.5-7B-Instruct@{server.url}/v1", registry=None, max_retries=kw.pop("max_retries", 3))
    p.base_delay_s = 0.01
    return p


def test_decide_calls_tools_through_json_schema_mode(server, monkeypatch, state):
    server.queue(200, openai_chat(json.dumps(DECISION), prompt_tokens=321, completion_tokens=45))
    planner = _planner(server, monkeypatch)
    decision, call = planner.decide(state, INVENTORY)

    assert isinstance(decision, PlannerDecision)
    assert decision.action == Action.CALL_TOOLS
    assert [c.tool for c in decision.tool_calls] == ["onsets", "not_a_real_tool"]  # unknown tool not filtered
    assert decision.tool_calls[0].arguments == {"artifact": "a0", "min_gap_s": 0.1}
    assert decision.step == 0 and decision.planner == planner.name
    assert json.loads(decision.raw_output) == DECISION
    assert call.role == "planner" and call.purpose == "decide" and call.attempts == 1 and call.errors == []
    assert (call.input_tokens, call.output_tokens) == (321, 45)
    assert call.output["parsed"]["action"] == "CALL_TOOLS"

    (req,) = server.posts("/v1/chat/completions")
    body = req.body
    assert body["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert body["temperature"] == 0
    rf = body["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["name"] == "DecisionOut"
    assert rf["json_schema"]["schema"]["properties"]["action"]["enum"] == ["CALL_TOOLS", "RELISTEN", "ANSWER", "STOP"]
    assert rf["json_schema"].get("strict") in (False, None)
    system, prompt = (m["content"] for m in body["messages"])
    # the static part first: the evidence rule, the instructions and the compact inventory (one line a tool)
    assert body["messages"][0]["role"] == "system" and system.startswith(evidence_rule())
    assert "- vad(threshold): Speech activity segments" in system
    assert "what is said" not in system and "where speech is active" not in system  # the boundary: on demand
    assert "How many beeps are there?" in prompt and "How many beeps are there?" not in system
    assert "3 activity segments" in prompt  # evidence rendered from the state
    assert "several short beeps" in prompt  # the observation too
    assert req.headers["authorization"] == "Bearer EMPTY"


def test_malformed_reply_is_retried_once_then_stops(server, monkeypatch, state):
    server.queue(200, openai_chat("I think we should count them."))
    server.queue(200, openai_chat('{"action": "CALL_TOOLS", "rationale": "x", "tool_calls": []}'))
    planner = _planner(server, monkeypatch)
    decision, call = planner.decide(state, INVENTORY)

    assert decision.action == Action.STOP
    assert decision.stop_reason.startswith("planner output malformed:")
    assert "tool_calls" in decision.stop_reason  # the second problem: CALL_TOOLS without calls
    assert call.attempts == 2
    assert len([e for e in call.errors if "malformed" in e]) == 2
    posts = server.posts("/v1/chat/completions")
    assert len(posts) == 2
    retry_msgs = posts[1].body["messages"]
    # the prompt quotes evidence, so the evidence rule leads as the system message
    assert [m["role"] for m in retry_msgs] == ["system", "user", "assistant", "user"]
    assert retry_msgs[2]["content"] == "I think we should count them."
    assert "could not be used" in retry_msgs[3]["content"] and "no JSON object" in retry_msgs[3]["content"]


def test_malformed_then_fixed(server, monkeypatch, state):
    server.queue(200, openai_chat('{"action": "RELISTEN", "rationale": "hear again"}'))
    server.queue(200, openai_chat(json.dumps({"action": "relisten", "rationale": "hear again",
                                              "relisten_artifact_ids": ["a0"], "relisten_prompt": "count beeps"})))
    decision, call = _planner(server, monkeypatch).decide(state, INVENTORY)
    assert decision.action == Action.RELISTEN
    assert decision.relisten.artifact_ids == ["a0"] and decision.relisten.prompt == "count beeps"
    assert call.attempts == 2 and any("relisten_artifact_ids" in e for e in call.errors)


def test_transport_retry_then_unreachable(server, monkeypatch, state, closed_port):
    server.queue(503, openai_error(503, "overloaded"))
    server.queue(200, openai_chat(json.dumps({"action": "ANSWER", "rationale": "enough"})))
    decision, call = _planner(server, monkeypatch).decide(state, INVENTORY)
    assert decision.action == Action.ANSWER and call.attempts == 2 and "503" in call.errors[0]

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    p = make_planner(f"openai:m@http://127.0.0.1:{closed_port}/v1", registry=None)
    p.policy = dataclasses.replace(p.policy, base_delay_s=0.01)
    # the default policy: 3 retries, so the request is sent 4 times
    with pytest.raises(BackendError, match=rf"could not reach http://127.0.0.1:{closed_port}/v1 after 4 attempts"):
        p.decide(state, INVENTORY)


def test_perception_plan_and_summary(server, monkeypatch, state):
    server.queue(200, openai_chat(json.dumps({"prompt": "Listen to the clip and count each short beep.",
                                              "auditory_targets": "beeps"})))
    server.queue(200, openai_chat(json.dumps({"intent": "count beeps", "answer_format": "one choice",
                                              "focus": ["beeps"], "candidate_operations": ["onsets"],
                                              "claims_to_verify": ["count"], "directly_answerable": [],
                                              "rationale": "r", "extra_key": 1})))
    server.queue(200, openai_chat("<think>private</think>The VAD found 3 segments (ev_x)."))
    planner = _planner(server, monkeypatch)
    pp, c1 = planner.perception_prompt(state)
    plan, c2 = planner.plan(state, INVENTORY)
    summary, c3 = planner.summarize(state)
    assert pp.text == "Listen to the clip and count each short beep." and pp.auditory_targets == ["beeps"]
    assert pp.prompt_id.startswith("perception_request@")
    assert plan.intent == "count beeps" and plan.candidate_operations == ["onsets"]
    assert summary == "The VAD found 3 segments (ev_x)."
    assert [c.purpose for c in (c1, c2, c3)] == ["perception_prompt", "plan", "summarize"]
    bodies = [r.body for r in server.posts("/v1/chat/completions")]
    assert bodies[0]["response_format"]["json_schema"]["name"] == "PerceptionPromptOut"
    assert bodies[1]["response_format"]["json_schema"]["name"] == "PlanOut"
    assert "response_format" not in bodies[2]  # the summary is free text


def test_schema_rejection_steps_down_to_json_object_then_plain(server, monkeypatch, state):
    """A server without OpenAI's json_schema form (llama-cpp-python's server answers 422) gets the
    grammar-backed {"type": "json_object", "schema": ...} form; one rejecting that too gets plain text."""
    server.queue(422, {"detail": [{"loc": ["body", "response_format", "type"],
                                   "msg": "Input should be 'text' or 'json_object'"}]})
    server.queue(200, openai_chat(json.dumps({"action": "ANSWER", "rationale": "ok"})))
    planner = _planner(server, monkeypatch)
    decision, call = planner.decide(state, INVENTORY)
    assert decision.action == Action.ANSWER and planner.mode == "json_object"
    posts = server.posts("/v1/chat/completions")
    assert posts[0].body["response_format"]["type"] == "json_schema"
    rf = posts[1].body["response_format"]
    assert rf["type"] == "json_object" and rf["schema"]["properties"]["action"]["enum"][0] == "CALL_TOOLS"
    assert call.attempts == 2 and any("structured output (json_schema) unsupported" in e for e in call.errors)

    server.queue(400, openai_error(400, "unknown field schema in response_format"))
    server.queue(200, openai_chat("Sure: " + json.dumps({"action": "ANSWER", "rationale": "ok"})))
    decision, call = planner.decide(state, INVENTORY)
    assert decision.action == Action.ANSWER and planner.mode == "plain"
    assert "response_format" not in server.posts("/v1/chat/completions")[-1].body


def test_grammar_form_drops_length_bounds_and_caps_the_reply(server, monkeypatch, state):
    """llama.cpp spells `maxLength: 1000` as 1000 nested optional grammar rules and refuses (or aborts on) such
    a grammar (seen with SmolLM2 behind llama_cpp.server): the json_object form goes without length and count
    bounds, and with a reply cap instead; the json_schema form keeps them. Validation stays ours."""
    from audiomind.backends.planners.llm import GRAMMAR_MAX_TOKENS, grammar_schema

    server.queue(422, {"detail": [{"loc": ["body", "response_format", "type"],
                                   "msg": "Input should be 'text' or 'json_object'"}]})
    server.queue(200, openai_chat(json.dumps({"action": "ANSWER", "rationale": "ok"})))
    planner = _planner(server, monkeypatch)
    planner.decide(state, INVENTORY)
    first, second = server.posts("/v1/chat/completions")[:2]
    assert "maxLength" in json.dumps(first.body["response_format"]) and "max_tokens" not in first.body
    sent = json.dumps(second.body["response_format"]["schema"])
    assert not any(k in sent for k in ("maxLength", "minLength", "maxItems", "minItems"))
    assert second.body["max_tokens"] == GRAMMAR_MAX_TOKENS  # the field llama-cpp-python's server reads

    capped = make_planner(f"openai:m@{server.url}/v1", registry=None, max_tokens=77)  # a cap of its own
    capped.base_delay_s = 0.01
    server.queue(422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "json_object only"}]})
    server.queue(200, openai_chat(json.dumps({"action": "ANSWER", "rationale": "ok"})))
    capped.decide(state, INVENTORY)
    assert server.posts("/v1/chat/completions")[-1].body["max_tokens"] == 77
    assert grammar_schema({"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 9}}) == {
        "type": "array", "items": {"type": "string"}}


def test_a_reply_cut_at_the_cap_is_malformed_not_fatal(server, monkeypatch, state):
    """At the cap the server ends the reply with finish_reason "length" and the openai SDK raises
    LengthFinishReasonError instead of returning it (seen with SmolLM2): the cut reply is malformed JSON, asked
    again once, then the recorded fallback decision; the run goes on, every attempt with its tokens."""
    cut = openai_chat('{"action": "CALL_TOOLS", "rationale": "the beeps are short and evenly spa',
                      prompt_tokens=300, completion_tokens=512)
    cut["choices"][0]["finish_reason"] = "length"
    server.queue(422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "json_object only"}]})
    server.queue(200, cut, times=2)
    planner = _planner(server, monkeypatch)
    decision, call = planner.decide(state, INVENTORY)
    assert decision.action == Action.STOP and "malformed" in (decision.stop_reason or "")
    assert call.errors and call.input_tokens == 600 and call.output_tokens == 1024
    assert len(server.posts("/v1/chat/completions")) == 3


def scripted(*replies):
    msgs = [AIMessage(content=r if isinstance(r, str) else json.dumps(r)) for r in replies]
    return LLMPlanner(GenericFakeChatModel(messages=iter(msgs)), name="scripted", base_delay_s=0.01)


def test_scripted_model_without_structured_output_uses_jsonparse(state):
    """GenericFakeChatModel has no with_structured_output: plain invoke + jsonparse, fenced reply accepted."""
    p = scripted("```json\n" + json.dumps({"action": "STOP", "rationale": "silent clip"}) + "\n```")
    decision, call = p.decide(state, INVENTORY)
    assert decision.action == Action.STOP and decision.stop_reason == "silent clip"
    assert call.errors == []


def test_scripted_fallbacks_for_perception_and_plan(state):
    p = scripted("no", "still no", "nope", "{}")
    pp, c1 = p.perception_prompt(state)
    assert pp.prompt_id.startswith("perception@") and "How many beeps" in pp.text
    assert any("planner output malformed" in e for e in c1.errors)
    plan, c2 = p.plan(state, INVENTORY)
    assert plan.intent == "How many beeps are there?"
    assert plan.rationale.startswith("fallback plan: planner output malformed")
    assert c2.attempts == 2


def test_unknown_relisten_artifact_is_sent_back(state):
    p = scripted({"action": "RELISTEN", "rationale": "r", "relisten_artifact_ids": ["a7"], "relisten_prompt": "x"},
                 {"action": "ANSWER", "rationale": "fine"})
    decision, call = p.decide(state, INVENTORY)
    assert decision.action == Action.ANSWER
    assert any("a7" in e for e in call.errors)


def test_wire_schema_is_self_contained():
    s = wire_schema(DecisionOut)
    assert "$defs" not in json.dumps(s) and "$ref" not in json.dumps(s)
    assert set(s["required"]) >= {"action", "rationale"}
    item = s["properties"]["tool_calls"]["items"]
    assert item["properties"]["arguments"]["type"] == "object"


def test_public_completion_methods():
    """complete_json (what the judges use): the validated reply, one format retry, the problem on failure;
    complete_text: the plain reply's text and its ModelCall."""
    from pydantic import BaseModel

    class Verdict(BaseModel):
        verdict: str

    p = scripted("not json", {"verdict": "yes"}, "plain words", "x", "y")
    reply = p.complete_json("Is it raining?", Verdict, purpose="judge_verdict")
    assert reply.parsed == Verdict(verdict="yes") and reply.problem is None
    assert reply.call.purpose == "judge_verdict" and reply.call.attempts == 2
    text, call = p.complete_text("Say something.", purpose="judge_text")
    assert text == "plain words" and call.purpose == "judge_text" and call.output is None
    failed = p.complete_json("Again?", Verdict)
    assert failed.parsed is None and failed.problem and failed.raw == "y"
