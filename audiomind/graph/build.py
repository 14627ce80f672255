"""Compile the Audio-Mind state machine with LangGraph.

ingest -> perception_prompt -> perceive -> plan -> decide -+-> execute_tools -> decide
                                                           +-> relisten      -> decide
                                                           +-> summarize -> final_answer -> format_check -+-> finish
                                                           |                      ^----- bounded retry ---+
                                                           +-> finish (STOP)

The direct baseline (`mode="direct"`): the front end answers alone, with no planner and no tools:

ingest -> perceive (the cascade's own perception pass; nothing for a model front end) -> final_answer
       -> format_check -> finish
"""

from __future__ import annotations

from functools import partial

from langgraph.graph import END, START, StateGraph

from audiomind.graph import routing
from audiomind.graph.nodes import Runtime
from audiomind.state import EvidenceState

NODES = (
    "ingest", "perception_prompt", "perceive", "plan", "decide", "execute_tools", "relisten",
    "summarize", "final_answer", "format_check", "finish",
)


DIRECT_NODES = ("ingest", "perceive", "final_answer", "format_check", "finish")
"""The direct baseline's nodes (a subset of NODES, so any Runtime stand-in serves both graphs)."""


def _answer_then_check(g: StateGraph, runtime: Runtime) -> None:
    """The tail both graphs share: final answer, shape check (bounded retry back to the answer), finish."""
    g.add_edge("final_answer", "format_check")
    g.add_conditional_edges(
        "format_check",
        partial(routing.after_format_check, format_retries=runtime.limits.format_retries),
        ["final_answer", "finish"],
    )
    g.add_edge("finish", END)


def build_direct_graph(runtime: Runtime, checkpointer=None):
    """The direct baseline: one answer call on the original audio (see the module doc). Its `perceive` is the
    cascade's own perception pass, and nothing for a model front end (Runtime.perceive in direct mode)."""
    g = StateGraph(EvidenceState)
    for name in DIRECT_NODES:
        g.add_node(name, getattr(runtime, name))
    g.add_edge(START, "ingest")
    g.add_edge("ingest", "perceive")
    g.add_edge("perceive", "final_answer")
    _answer_then_check(g, runtime)
    return g.compile(checkpointer=checkpointer, name="audiomind-direct")


def build_graph(runtime: Runtime, checkpointer=None):
    if getattr(runtime.limits, "mode", "agent") == "direct":
        return build_direct_graph(runtime, checkpointer)
    g = StateGraph(EvidenceState)
    for name in NODES:
        g.add_node(name, getattr(runtime, name))
    g.add_edge(START, "ingest")
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
    _answer_then_check(g, runtime)
    return g.compile(checkpointer=checkpointer, name="audiomind")


def recursion_limit(runtime: Runtime) -> int:
    """Enough LangGraph super-steps for max_steps decisions plus answering and retries."""
    return 8 + 2 * (runtime.limits.max_steps + 1) + 2 * (runtime.limits.format_retries + 1)
