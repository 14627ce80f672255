"""The compiled graph for LangGraph Studio / `langgraph dev` (see langgraph.json).

Studio hands each run a context made from JSON (the assistant's or the run's `context`), so the graph's
context schema here is `StudioContext`: a Context whose collaborators are built from its AgentConfig when the
caller gives none (by default the embedded stack: rule planner + cascade front end; Studio's context form
shows the AgentConfig, so other limits, or another planner or front-end spec, can be chosen there). The
collaborators are built once per config and shared by the server's runs; derived audio goes to the audiomind
cache folder."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import model_validator

from audiomind.backends import registry as backends
from audiomind.backends.base import FrontEnd, Planner
from audiomind.backends.readers import make_question_reader
from audiomind.config import AgentConfig
from audiomind.embedded.models import cache_dir
from audiomind.graph.build import build_graph
from audiomind.graph.context import Context
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolRegistry


@lru_cache(maxsize=8)
def collaborators(config: AgentConfig) -> tuple[Planner, FrontEnd, ToolExecutor]:
    """The planner, front end and executor of every Studio run with this config (built once: Studio has
    always shared one executor and front end over one artifact folder). Building reads the tool manifests
    and may load models, which `langgraph dev` refuses to do on its event loop while it coerces a run's
    context, so the default config's are built when this module is imported."""
    registry = ToolRegistry.load([Path(d) for d in config.tools_dirs])
    reader = make_question_reader(config.reader, timeout_s=config.timeout_s, max_retries=config.max_retries)
    planner = backends.make_planner(config.planner, registry=registry, timeout_s=config.timeout_s,
                                    max_retries=config.max_retries, reader=reader)
    cache = ToolCache(Path(config.cache_dir) if config.cache_dir else None) if config.use_cache else None
    executor = ToolExecutor(registry, cache_dir() / "studio-artifacts", cache=cache)
    frontend = backends.make_frontend(config.frontend, executor=executor, window_s=config.window_s,
                                      timeout_s=config.timeout_s, max_retries=config.max_retries, reader=reader)
    return planner, frontend, executor


class StudioContext(Context):
    """A Context that builds its planner, front end and executor from its `config` when not given."""

    @model_validator(mode="before")
    @classmethod
    def _build_collaborators(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "frontend" in data:
            return data
        config = AgentConfig.model_validate(data.get("config") or {})
        if config.mode != "agent":
            raise ValueError("the Studio graph is the agent loop (mode 'agent'); the direct baseline runs from "
                             "the command line (audiomind ask --mode direct)")
        planner, frontend, executor = collaborators(config)
        return {**data, "config": config, "planner": planner, "frontend": frontend, "executor": executor}


collaborators(AgentConfig())
graph = build_graph("agent", context_schema=StudioContext)
