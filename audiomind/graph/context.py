"""LangGraph's run context for the Audio-Mind graph, and the graph's input schema.

A run's collaborators (its planner, its front end, its tool executor) and its `AgentConfig` travel as
LangGraph's `context` (`graph.stream(state, config, context=Context(...))`): every node and the routing read
them from `runtime: langgraph.runtime.Runtime[Context]`. The compiled graph holds no run's objects, so one
compiled graph serves every run of a mode, concurrent runs included (each call has its own context).

`GraphInput` is the graph's `input_schema`: LangGraph Studio's form shows the question (its text, choices and
audio path) only, not the whole evidence state; the output is the whole state, which is the trace.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SkipValidation
from pydantic.json_schema import SkipJsonSchema

from audiomind.backends.base import FrontEnd, Planner
from audiomind.config import AgentConfig
from audiomind.state import Question, RunInfo
from audiomind.tools.executor import ToolExecutor


class Context(BaseModel):
    """What one run works with: its settings and its collaborators (LangGraph's `context_schema`).

    The limits are read from `config` (`max_steps`, `time_budget_s`, `format_retries`, `mode`); the graph's
    shape follows `config.mode`. The collaborators are built by the caller (`AudioMind.ask`) and are not
    validated or serialised: they are objects, not settings (Studio's context form shows `config` only)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    config: AgentConfig = Field(default_factory=AgentConfig, description="the agent's settings, limits included")
    planner: SkipJsonSchema[SkipValidation[Planner | None]] = Field(
        None, exclude=True, description="the text planner; None in direct mode (the front end answers alone)")
    frontend: SkipJsonSchema[SkipValidation[FrontEnd]] = Field(exclude=True, description="the run's front end")
    executor: SkipJsonSchema[SkipValidation[ToolExecutor]] = Field(
        exclude=True, description="the run's tool executor (its artifact folder is the run's)")

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def format_retries(self) -> int:
        """Answer re-asks after a failed format check: none in direct mode (one answer call)."""
        return 0 if self.config.mode == "direct" else self.config.format_retries

    def inventory(self) -> str:
        """The tool inventory the planner chooses from."""
        return self.executor.registry.render_inventory()


class GraphInput(BaseModel):
    """The graph's input (LangGraph's `input_schema`): the question, its choices and its audio. `run` is how
    `AudioMind.ask` hands over the run's identity (id, limits, artifact folder, models); a caller that gives
    none (Studio) gets a fresh one. It is left out of the JSON schema, so Studio's form shows the question."""

    question: Question
    run: SkipJsonSchema[RunInfo] = Field(default_factory=RunInfo)
