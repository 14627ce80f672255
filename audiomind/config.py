"""One run configuration: every setting an agent is built from, in one typed, serialisable model.

The CLI (`ask`, `bench`, `trace replay`), the batch runner (it ships the config to Ray workers) and the
Python API all take an `AgentConfig`, so a setting is defined, validated and documented once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AgentConfig(BaseModel):
    """How an agent is built and bounded. Specs are strings (`rules`, `cascade`, `openai:MODEL@URL`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    planner: str = Field("rules", description="planner spec: rules | openai:MODEL[@URL] | gemini:MODEL | "
                                              "ollama:MODEL[@URL] | llamacpp:PATH.gguf | replay:TRACE.json")
    frontend: str = Field("cascade", description="front-end spec: cascade | openai:MODEL[@URL] | gemini:MODEL | "
                                                 "replay:TRACE.json")
    mode: Literal["agent", "direct"] = Field("agent", description="agent: the planner's evidence loop; direct: the "
                                            "baseline where the front end answers alone (no planner, no tools: one "
                                            "answer call on the original audio)")
    tools_dirs: tuple[str, ...] = Field((), description="extra folders of tool manifests")
    trace_dir: str = Field("traces", description="where traces (and each run's derived audio) are written")
    max_steps: int = Field(6, ge=1, le=100, description="evidence-loop decisions at most")
    time_budget_s: float = Field(600.0, gt=0, description="wall-clock budget of one question")
    format_retries: int = Field(2, ge=0, le=10, description="answer re-asks after a failed format check")
    window_s: float = Field(30.0, gt=0, description="audio longer than this goes to a model front end in windows")
    timeout_s: float = Field(120.0, gt=0, description="per model request")
    max_retries: int = Field(3, ge=0, le=20, description="retries of a failed model request (429, 5xx, timeouts)")
    use_cache: bool = Field(True, description="reuse cached tool results (keyed by tool, version, args, audio hash)")
    cache_dir: str | None = Field(None, description="tool-result cache folder (default: the embedded cache)")
    max_duration_s: float | None = Field(None, gt=0, description="refuse audio longer than this (seconds) before "
                                                                 "anything decodes it; None: no limit")

    @field_validator("trace_dir", "cache_dir", mode="before")
    @classmethod
    def _path_str(cls, v: Any) -> Any:
        return os.fspath(v) if isinstance(v, os.PathLike) else v

    @field_validator("tools_dirs", mode="before")
    @classmethod
    def _path_strs(cls, v: Any) -> Any:
        return tuple(os.fspath(d) for d in v) if isinstance(v, (list, tuple)) else v

    def with_trace_dir(self, path: str | Path) -> AgentConfig:
        return self.model_copy(update={"trace_dir": str(path)})
