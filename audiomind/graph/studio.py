"""The compiled graph for LangGraph Studio / `langgraph dev` (see langgraph.json), on the embedded
default stack: rule planner + cascade front end. Derived audio goes to the audiomind cache folder."""

from __future__ import annotations

from audiomind.backends.frontends.cascade import CascadeFrontEnd
from audiomind.backends.planners.rules import RulesPlanner
from audiomind.embedded.models import cache_dir
from audiomind.graph.build import build_graph
from audiomind.graph.nodes import Limits, Runtime
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolRegistry


def make_graph():
    registry = ToolRegistry.load()
    executor = ToolExecutor(registry, cache_dir() / "studio-artifacts", cache=ToolCache())
    return build_graph(Runtime(RulesPlanner(registry), CascadeFrontEnd(executor), executor, Limits()))


graph = make_graph()
