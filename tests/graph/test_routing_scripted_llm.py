"""Graph routing with a SCRIPTED chat model as the planner (langchain_core's GenericFakeChatModel
replays fixed replies): every action path of the evidence loop, the bounds, and planner mistakes.
The front end is the real cascade restricted to the cheap metadata tools, on real audio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from rich.console import Console

from audiomind import synth
from audiomind.audit import html, show
from audiomind.backends.frontends.cascade import CascadeFrontEnd
from audiomind.backends.planners.llm import LLMPlanner
from audiomind.config import AgentConfig
from audiomind.graph.build import build_graph, recursion_limit
from audiomind.graph.context import Context
from audiomind.state import Action, EvidenceState, Question, RunInfo, ToolCallStatus
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry

CHEAP_TOOLS = {"probe", "signal_stats"}


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    return synth.beeps(3, tmp_path_factory.mktemp("audio") / "beeps3.wav")


def scripted_planner(*replies: dict | str) -> LLMPlanner:
    msgs = [AIMessage(content=r if isinstance(r, str) else json.dumps(r)) for r in replies]
    return LLMPlanner(GenericFakeChatModel(messages=iter(msgs)), name="scripted", structured=False, base_delay_s=0.01)


PERCEPTION = {"prompt": "Listen to the clip and report every distinct sound.", "auditory_targets": ["beeps"]}
PLAN = {"intent": "count beeps", "answer_format": "one choice", "focus": ["beeps"],
        "candidate_operations": ["signal_stats"], "claims_to_verify": [], "directly_answerable": [], "rationale": "r"}
SUMMARY = "Summary: the probe saw a short clip."


def run_graph(clip: Path, tmp_path: Path, planner: LLMPlanner, max_steps: int = 4, format_retries: int = 1,
              tools: set[str] = CHEAP_TOOLS) -> EvidenceState:
    registry = ToolRegistry.load()
    executor = ToolExecutor(registry, tmp_path / "derived", cache=None, allowed=tools)
    config = AgentConfig(max_steps=max_steps, time_budget_s=300, format_retries=format_retries)
    context = Context(config=config, planner=planner, frontend=CascadeFrontEnd(executor), executor=executor)
    state = EvidenceState(
        run=RunInfo(run_id="t", max_steps=max_steps, time_budget_s=300, frontend_window_s=30, artifact_dir=str(tmp_path)),
        question=Question(text="How many beeps are there?", choices=["2", "3", "4"], audio_path=str(clip)),
    )
    out = build_graph().invoke(state, {"recursion_limit": recursion_limit(context)}, context=context)
    return EvidenceState.model_validate(out)


def nodes(state: EvidenceState) -> list[str]:
    return [t.node for t in state.timings]


def test_scripted_llm_call_tools_then_answer(clip, tmp_path):
    planner = scripted_planner(
        PERCEPTION, PLAN,
        {"action": "CALL_TOOLS", "rationale": "need levels", "tool_calls": [{"tool": "signal_stats", "arguments": {"artifact": "a0"}}]},
        {"action": "ANSWER", "rationale": "enough"},
        SUMMARY,
    )
    st = run_graph(clip, tmp_path, planner)
    assert [d.action for d in st.decisions] == [Action.CALL_TOOLS, Action.ANSWER]
    assert nodes(st).count("execute_tools") == 1 and "summarize" in nodes(st)
    planner_calls = [c for c in st.tool_calls if c.issued_by == "planner"]
    assert [c.tool for c in planner_calls] == ["signal_stats"] and planner_calls[0].status == ToolCallStatus.ok
    assert any(e.source_id == planner_calls[0].id for e in st.evidence)
    assert st.evidence_summary == SUMMARY
    assert st.outcome.status == "answered" and st.final_answer.choice in ["2", "3", "4"]


def test_scripted_llm_relisten_path_and_unknown_artifact(clip, tmp_path):
    planner = scripted_planner(
        PERCEPTION, PLAN,
        # the original is no re-listen target: rejected with a reason the next step reads
        {"action": "RELISTEN", "rationale": "hear again", "relisten_artifact_ids": ["a0"], "relisten_prompt": "count"},
        {"action": "CALL_TOOLS", "rationale": "crop the middle",
         "tool_calls": [{"tool": "crop", "arguments": {"artifact": "a0", "start_s": 0.5, "end_s": 1.5}}]},
        # an artifact id that does not exist: the planner is told so and asked again (one retry)...
        {"action": "RELISTEN", "rationale": "bad id", "relisten_artifact_ids": ["a9"], "relisten_prompt": "count"},
        # ...and this reply is its corrected decision
        {"action": "RELISTEN", "rationale": "hear the crop", "relisten_artifact_ids": ["a1"],
         "relisten_prompt": "count the beeps in this excerpt"},
        {"action": "ANSWER", "rationale": "done"},
        SUMMARY,
    )
    seen = []
    model = planner.model
    original = type(model)._generate

    def spy(self, messages, *a, **kw):
        seen.append(messages[-1].content)
        return original(self, messages, *a, **kw)

    type(model)._generate = spy
    try:
        st = run_graph(clip, tmp_path, planner, max_steps=6, tools=CHEAP_TOOLS | {"crop"})
    finally:
        type(model)._generate = original
    assert [d.action for d in st.decisions] == [Action.RELISTEN, Action.CALL_TOOLS, Action.RELISTEN, Action.ANSWER]
    relistens = [o for o in st.observations if o.kind == "relisten"]
    assert [o.artifact_ids for o in relistens] == [[], ["a1"]]
    assert "a0 is not derived audio" in relistens[0].rejected and not relistens[0].text
    assert relistens[1].tool_call_ids  # the cascade listened again, with its tools on the record
    assert not relistens[1].rejected
    # the re-listen prompt says what was derived and how
    assert "- a1: 1.00 s, 16000 Hz, 1 ch; crop of a0 (end_s=1.5, start_s=0.5)" in relistens[1].prompt
    # the step after the rejection saw it, in the decision history
    crop_prompt = next(p for p in seen if "step 2 of at most" in p.lower())
    assert '- step 1: RELISTEN (by you); rationale: "hear again"' in crop_prompt
    assert "re-listen rejected: a0 is not derived audio" in crop_prompt
    decide_errors = [e for c in st.model_calls if c.purpose == "decide" for e in c.errors]
    assert any("a9" in e for e in decide_errors)
    assert st.outcome.status == "answered"
    # both viewers show the refused re-listen and its reason, next to the accepted one
    console = Console(record=True, width=200)
    show.render(st, console)
    shown = console.export_text()
    assert "re-listen rejected: a0 is not derived audio" in shown
    page = html.render_page(st, tmp_path / "view", spectrograms=False).read_text()
    assert '<p class="warn">re-listen rejected: a0 is not derived audio' in page


def test_scripted_llm_stop_with_reason(clip, tmp_path):
    planner = scripted_planner(PERCEPTION, PLAN, {"action": "STOP", "rationale": "cannot", "stop_reason": "no audio content"})
    st = run_graph(clip, tmp_path, planner)
    assert st.decisions[-1].action == Action.STOP
    assert "summarize" not in nodes(st) and st.final_answer is None
    assert st.outcome.status == "stopped" and st.outcome.reason == "no audio content"


def test_scripted_llm_unknown_tool_is_rejected_and_run_goes_on(clip, tmp_path):
    planner = scripted_planner(
        PERCEPTION, PLAN,
        {"action": "CALL_TOOLS", "rationale": "hallucinated", "tool_calls": [
            {"tool": "content", "arguments": {}}, {"tool": "signal_stats", "arguments": {"artifact": "a0"}}]},
        {"action": "CALL_TOOLS", "rationale": "bad args", "tool_calls": [
            {"tool": "signal_stats", "arguments": {"artifact": "a0", "bogus": 1}}]},
        {"action": "ANSWER", "rationale": "ok"},
        SUMMARY,
    )
    st = run_graph(clip, tmp_path, planner)
    by_tool = [(c.tool, c.status) for c in st.tool_calls if c.issued_by == "planner"]
    assert by_tool == [("content", ToolCallStatus.rejected), ("signal_stats", ToolCallStatus.ok),
                       ("signal_stats", ToolCallStatus.rejected)]
    rejected = [c for c in st.tool_calls if c.status == ToolCallStatus.rejected]
    assert "unknown tool 'content'" in rejected[0].error
    assert "bogus" in rejected[1].error
    assert st.outcome.status == "answered"


def test_scripted_llm_max_steps_bound(clip, tmp_path):
    call = {"action": "CALL_TOOLS", "rationale": "again", "tool_calls": [{"tool": "probe", "arguments": {}}]}
    planner = scripted_planner(PERCEPTION, PLAN, call, call, SUMMARY)
    st = run_graph(clip, tmp_path, planner, max_steps=2)
    assert [d.action for d in st.decisions] == [Action.CALL_TOOLS, Action.CALL_TOOLS, Action.ANSWER]
    assert st.decisions[-1].planner == "bounds"
    assert st.outcome.bound_hit == "max_steps" and st.outcome.status == "answered"


def test_scripted_llm_malformed_decision_is_retried_then_stops(clip, tmp_path):
    planner = scripted_planner(PERCEPTION, PLAN, "not json at all", "{still not json")
    st = run_graph(clip, tmp_path, planner)
    assert st.decisions[-1].action == Action.STOP
    assert "malformed" in (st.decisions[-1].stop_reason or "")
    assert st.outcome.status == "stopped"
    decide_calls = [c for c in st.model_calls if c.purpose == "decide"]
    assert decide_calls and decide_calls[-1].errors


def test_cascade_answers_from_the_answer_request_alone(clip, tmp_path):
    """One answer contract: the cascade answers from the AnswerRequest (the evidence and the tool calls that
    produced it), never from the run's state, so its answer follows the evidence it is handed."""
    from audiomind.backends.base import AnswerRequest
    from audiomind.graph.nodes import evidence_calls

    planner = scripted_planner(PERCEPTION, PLAN, {"action": "ANSWER", "rationale": "enough"}, SUMMARY)
    st = run_graph(clip, tmp_path, planner, tools=CHEAP_TOOLS | {"count_events"})
    assert st.final_answer.choice == "3" and st.final_answer.cited_evidence_ids
    assert "state" not in AnswerRequest.model_fields

    fe = CascadeFrontEnd(ToolExecutor(ToolRegistry.load(), tmp_path / "d2", cache=None, allowed=CHEAP_TOOLS))
    calls = evidence_calls(st)
    assert {c.id for c in calls} <= {c.id for c in st.tool_calls}
    req = AnswerRequest(original=st.original, question=st.question.text, choices=st.question.choices,
                        evidence_summary=st.evidence_summary, evidence=st.evidence, tool_calls=calls,
                        prompt="(unused by the cascade)", prompt_id="final_answer@x")
    again = fe.answer(req)
    assert again.text == st.final_answer.text and again.cited_evidence_ids == st.final_answer.cited_evidence_ids
    blind = fe.answer(req.model_copy(update={"evidence": [], "tool_calls": []}))
    assert blind.confidence is not None and blind.confidence <= 0.35  # no evidence handed over: an admitted guess
