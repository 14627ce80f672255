"""Compile the Audio-Mind state machine with LangGraph.

ingest -> perception_prompt -> perceive -> plan -> decide -+-> execute_tools -> decide
                                                           +-> relisten      -> decide
                                                           +-> summarize -> final_answer -> format_check -+-> finish
                                                           |                      ^----- bounded retry ---+
                                                           +-> finish (STOP)

The direct baseline (`mode="direct"`): the front end answers alone, with no planner and no tools:

ingest -> perceive (the cascade's own perception pass; nothing for a model front end) -> final_answer
       -> format_check -> finish

The compiled graph holds no run's objects: the nodes are module functions that read the run's planner,
front end, executor and limits from LangGraph's run context (`context=Context(...)`, see
audiomind.graph.context). So one compiled graph per mode serves every run, concurrent ones included, and
only the mode (the graph's shape) is fixed at compile time.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph

from audiomind.graph import nodes, routing
from audiomind.graph.context import Context, GraphInput
from audiomind.state import EvidenceState

NODES = (
    "ingest", "perception_prompt", "perceive", "plan", "decide", "execute_tools", "relisten",
    "summarize", "final_answer", "format_check", "finish",
)


DIRECT_NODES = ("ingest", "perceive", "final_answer", "format_check", "finish")
"""The direct baseline's nodes (a subset of NODES)."""


def _graph(names: tuple[str, ...], context_schema: type[Context]) -> StateGraph:
    """A StateGraph over the evidence state with the named nodes; its input is the question (what Studio's
    form shows), its output the whole state (the trace), its context the run's Context."""
    g = StateGraph(EvidenceState, context_schema=context_schema, input_schema=GraphInput,
                   output_schema=EvidenceState)
    for name in names:
        g.add_node(name, getattr(nodes, name))
    g.add_edge(START, "ingest")
    return g


def _answer_then_check(g: StateGraph) -> None:
    """The tail both graphs share: final answer, shape check (bounded retry back to the answer), finish."""
    g.add_edge("final_answer", "format_check")
    g.add_conditional_edges("format_check", routing.after_format_check, ["final_answer", "finish"])
    g.add_edge("finish", END)


def build_direct_graph(checkpointer: Any = None, context_schema: type[Context] = Context) -> Any:
    """The direct baseline: one answer call on the original audio (see the module doc). Its `perceive` is the
    cascade's own perception pass, and nothing for a model front end (nodes.perceive in direct mode)."""
    g = _graph(DIRECT_NODES, context_schema)
    g.add_edge("ingest", "perceive")
    g.add_edge("perceive", "final_answer")
    _answer_then_check(g)
    return g.compile(checkpointer=checkpointer, name="audiomind-direct")


def build_graph(mode: Literal["agent", "direct"] = "agent", checkpointer: Any = None,
                context_schema: type[Context] = Context) -> Any:
    """The compiled graph of a mode's runs; each run passes its `Context` (`graph.stream(input, config,
    context=ctx)`). `context_schema` may be a subclass of Context (Studio builds its collaborators itself)."""
    if mode == "direct":
        return build_direct_graph(checkpointer, context_schema)
    g = _graph(NODES, context_schema)
    g.add_edge("ingest", "perception_prompt")
    g.add_edge("perception_prompt", "perceive")
    g.add_edge("perceive", "plan")
    g.add_edge("plan", "decide")
    g.add_conditional_edges(
        "decide", routing.after_decide, ["execute_tools", "relisten", "summarize", "finish"]
    )
    g.add_edge("execute_tools", "decide")
    g.add_edge("relisten", "decide")
    g.add_edge("summarize", "final_answer")
    _answer_then_check(g)
    return g.compile(checkpointer=checkpointer, name="audiomind")


def recursion_limit(context: Context) -> int:
    """Enough LangGraph super-steps for max_steps decisions plus answering and retries."""
    return 8 + 2 * (context.config.max_steps + 1) + 2 * (context.format_retries + 1)
