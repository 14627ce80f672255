"""The graph on LangGraph's run context (audiomind.graph.context): every run of an AudioMind goes through one
compiled graph and brings its planner, front end, executor and AgentConfig as `context=Context(...)`;
concurrent runs on different threads each keep their own; the limits come from the config; the input
schema is the question alone (what LangGraph Studio's form shows) and the output the whole state."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from audiomind.backends.base import AnswerRequest, AnswerResult, ListenRequest, ListenResult
from audiomind.config import AgentConfig
from audiomind.graph.build import DIRECT_NODES, build_graph, recursion_limit
from audiomind.graph.context import Context
from audiomind.state import EvidenceState, ModelSpec, Question, RunInfo
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class ShapelessFrontEnd:
    """A scripted front end whose answer never names a choice: every format check fails."""

    name = "shapeless"

    def __init__(self) -> None:
        self.answers = 0

    def spec(self) -> ModelSpec:
        return ModelSpec(role="frontend", kind="scripted", spec="scripted")

    def listen(self, request: ListenRequest) -> ListenResult:
        return ListenResult(text="", description="")

    def answer(self, request: AnswerRequest) -> AnswerResult:
        self.answers += 1
        return AnswerResult(text="somewhere between the choices")


def _state(tmp_path: Path, clip: Path) -> EvidenceState:
    return EvidenceState(run=RunInfo(run_id="t", artifact_dir=str(tmp_path)),
                         question=Question(text="How many beeps are there?", choices=["3", "5"], audio_path=str(clip)))


def test_a_node_without_a_run_context_is_refused(tmp_path):
    graph = build_graph("direct")
    with pytest.raises(TypeError, match="ran without a run context"):
        graph.invoke(_state(tmp_path, EXAMPLES / "beeps.wav"))


def test_schemas_input_is_the_question_output_the_state_context_the_config():
    graph = build_graph()
    assert list(graph.get_input_jsonschema()["properties"]) == ["question"]
    assert set(graph.get_output_jsonschema()["properties"]) == set(EvidenceState.model_fields)
    # the collaborators are objects, not settings: a JSON form (Studio's) shows the AgentConfig only
    assert list(graph.get_context_jsonschema()["properties"]) == ["config"]


@pytest.mark.parametrize(("mode", "format_retries", "answers"), [("agent", 1, 2), ("direct", 2, 1)])
def test_format_retries_come_from_the_config(tmp_path, mode, format_retries, answers):
    """The retry bound is the context's AgentConfig's (none in direct mode: one answer call)."""
    frontend = ShapelessFrontEnd()
    registry = ToolRegistry.load()
    executor = ToolExecutor(registry, tmp_path / "derived", cache=None, allowed={"probe"})
    config = AgentConfig(mode=mode, format_retries=format_retries, max_steps=1)
    planner = None
    if mode == "agent":
        from audiomind.backends.planners.rules import RulesPlanner

        planner = RulesPlanner(registry)
    ctx = Context(config=config, planner=planner, frontend=frontend, executor=executor)
    assert ctx.format_retries == (format_retries if mode == "agent" else 0)
    out = EvidenceState.model_validate(
        build_graph(mode).invoke(_state(tmp_path, EXAMPLES / "beeps.wav"),
                                 {"recursion_limit": recursion_limit(ctx)}, context=ctx))
    assert frontend.answers == answers == len(out.format_feedback)
    assert out.outcome.status == "failed" and "format check failed" in out.outcome.reason
    if mode == "direct":
        assert [t.node for t in out.timings] == ["ingest", "perceive", "final_answer", "format_check", "finish"]
        assert set(DIRECT_NODES) == {t.node for t in out.timings}


def test_concurrent_runs_share_the_graph_and_keep_their_own_context(tmp_path):
    from audiomind import AudioMind

    agent = AudioMind(trace_dir=str(tmp_path), use_cache=False)
    items = [("beeps.wav", "How many beeps are there in the recording?", ["3", "4", "5", "6"], "5"),
             ("phone_ring.wav", "What is the source of the sound in this clip?",
              ["A dog barking", "A telephone ringing", "A car engine", "Rain falling"], "A telephone ringing")]
    results: dict[str, object] = {}

    def run(name: str, question: str, choices: list[str]) -> None:
        results[name] = agent.ask(EXAMPLES / name, question, choices)

    threads = [threading.Thread(target=run, args=item[:3]) for item in items]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    graph = agent.compiled_graph()
    assert agent.compiled_graph() is graph
    for name, question, _, expected in items:
        st = results[name].state
        assert st.question.text == question and Path(st.question.audio_path).name == name
        assert results[name].answer == expected
        # every artifact and tool call of the run belongs to the run's own artifact folder / audio
        assert st.original.path.endswith(name)
        assert Path(st.run.artifact_dir).parent == tmp_path.resolve()
        assert [t.node for t in st.timings][:3] == ["ingest", "perception_prompt", "perceive"]
    assert results["beeps.wav"].state.run.run_id != results["phone_ring.wav"].state.run.run_id


def test_studio_context_builds_the_stack_from_json():
    """Studio hands the context as JSON (plus keys of its own): the collaborators are built from the config."""
    from audiomind.graph.studio import StudioContext

    ctx = StudioContext.model_validate({"config": {"max_steps": 2}, "thread_id": "x", "graph_id": "audiomind"})
    assert ctx.config.max_steps == 2 and ctx.planner is not None and ctx.planner.name
    assert ctx.frontend.spec().spec == "cascade" and ctx.executor.registry.get("probe") is not None
    again = StudioContext.model_validate({"config": {"max_steps": 2}})
    assert (again.planner, again.frontend, again.executor) == (ctx.planner, ctx.frontend, ctx.executor)  # once
    assert StudioContext.model_validate({}).config == AgentConfig()
    with pytest.raises(ValidationError, match="direct baseline"):
        StudioContext.model_validate({"config": {"mode": "direct"}})
