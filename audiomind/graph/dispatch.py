"""One compiled graph per agent, shared by all its runs.

Compiling the StateGraph cost every `ask` 15-50 ms (a third of a repeated question's time in the warm
service), yet the graph's shape depends only on the agent's limits. The nodes of a run, however, are the
methods of that run's `Runtime` (its executor, its front end). So the graph is compiled once over a
`RunDispatch`, whose node functions call the same-named method of the Runtime bound to the current run
(a context variable, set by `stream_run` for exactly the duration of one run's stream). Context variables
are per thread and LangGraph copies the caller's context into the threads it runs nodes on, so
concurrent runs on different threads (the HTTP service) each see their own Runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from audiomind.graph.build import NODES, build_graph
from audiomind.graph.nodes import Limits, Runtime

_RUN: ContextVar[Runtime | None] = ContextVar("audiomind_run_runtime", default=None)


class RunDispatch:
    """Stands in for a Runtime when the graph is compiled: `limits` fix the graph's shape, and each node
    calls the current run's Runtime."""

    def __init__(self, limits: Limits):
        self.limits = limits

    def __getattr__(self, name: str) -> Callable[[Any], dict[str, Any]]:
        if name not in NODES:
            raise AttributeError(name)

        def node(state: Any) -> dict[str, Any]:
            runtime = _RUN.get()
            if runtime is None:
                raise RuntimeError(f"graph node {name!r} ran outside a run (use audiomind.graph.dispatch.stream_run)")
            return getattr(runtime, name)(state)

        node.__name__ = node.__qualname__ = name
        return node


def compile_shared(limits: Limits, checkpointer: Any = None) -> Any:
    """The graph for every run of an agent with these limits (see the module docstring)."""
    return build_graph(RunDispatch(limits), checkpointer=checkpointer)  # type: ignore[arg-type]


def stream_run(graph: Any, runtime: Runtime, state: Any, config: dict[str, Any]) -> Iterator[Any]:
    """`graph.stream(state, config, stream_mode="values")` with `runtime` bound as the run's Runtime."""
    token = _RUN.set(runtime)
    try:
        yield from graph.stream(state, config, stream_mode="values")
    finally:
        _RUN.reset(token)
