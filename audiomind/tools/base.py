"""The contract between the executor and a tool implementation.

A tool is a plain function `fn(args: SomeArgs, ctx: ToolContext) -> ToolResult`, where `SomeArgs` is a
pydantic model (subclass of `ToolArgs`) read from the function's type hints. The manifest in `tools/`
names the function; the executor validates arguments against the model, so a tool never sees input it
did not declare.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from audiomind import audio as audio_io
from audiomind.state import Artifact, Coverage, ToolCall, ToolCallRequest, new_id


class ToolArgs(BaseModel):
    """Base of every tool's arguments: which artifact to work on (the original is `a0`)."""

    model_config = ConfigDict(extra="forbid")
    artifact: str = Field("a0", description="id of the audio artifact to analyse")


class Claim(BaseModel):
    """One evidence statement a tool's output supports, within the tool's declared boundary."""

    text: str
    confidence: float | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class DerivedAudio(BaseModel):
    """A derived audio file a transformation tool wrote; the executor registers it as an artifact."""

    path: str
    operation: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    source_artifact: str


class ToolOutput(BaseModel):
    """Base of every tool's typed output (one `<Name>Output` model per tool, next to the tool, named by the
    manifest's `output_model`): unknown keys are an error, so a reader can only look up keys a tool emits."""

    model_config = ConfigDict(extra="forbid")


class CoveredOutput(ToolOutput):
    """An output that says which stretches the tool analysed. Tools that read their window through
    `tools.window.excerpt` get it filled in by the executor from what `excerpt` recorded."""

    coverage: Coverage | None = Field(None, description="the stretches analysed (artifact time), and why any "
                                                        "part of the requested stretch was left out")


class TimeSpan(ToolOutput):
    """A stretch of the artifact, in seconds from its start."""

    start_s: float = Field(description="start (s)")
    end_s: float = Field(description="end (s)")


ANALYSIS_WINDOW_S = 60.0
"""Window length of the tools that walk a whole clip (seconds): memory per window stays the same however long
the clip is, and times are offset back to the artifact's."""


def plan_windows(start_s: float, end_s: float, window_s: float = ANALYSIS_WINDOW_S,
                 overlap_s: float = 0.0) -> list[tuple[float, float]]:
    """[start, end] windows of at most `window_s` covering start_s..end_s, each overlapping the previous by
    `overlap_s`; a stretch no longer than one window is one window."""
    if end_s - start_s <= window_s:
        return [(start_s, end_s)]
    out, a = [], start_s
    step = max(window_s - overlap_s, 1e-3)
    while a < end_s:
        b = min(end_s, a + window_s)
        out.append((a, b))
        if b >= end_s:
            break
        a += step
    return out


def merge_spans(spans: list[tuple[float, float]], gap_s: float = 0.0) -> list[tuple[float, float]]:
    """Spans sorted and joined where they overlap or lie within `gap_s` of each other."""
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + gap_s:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def coverage(spans: list[tuple[float, float]], requested: tuple[float, float], windows: int,
             window_s: float | None = None, note: str | None = None) -> dict:
    """A `Coverage` as output data: the merged analysed spans (artifact seconds) of a requested stretch."""
    merged = merge_spans(spans)
    analysed = sum(b - a for a, b in merged)
    req = requested[1] - requested[0]
    return Coverage(
        spans=[(round(a, 3), round(b, 3)) for a, b in merged], analysed_s=round(analysed, 3),
        requested=(round(requested[0], 3), round(requested[1], 3)), windows=windows, window_s=window_s,
        complete=analysed >= req - 1e-3, note=note,
    ).model_dump(mode="json")


T = TypeVar("T", bound=BaseModel)


def typed_output(call_output: dict[str, Any] | None, model: type[T]) -> T | None:
    """A ToolCall's output as its tool's output model (None for a missing or empty output); raises
    pydantic.ValidationError when the output does not fit the model. Usage:
    `typed_output(call.output, CountEventsOutput).count`."""
    if not call_output:
        return None
    return model.model_validate(call_output)


class ToolResult(BaseModel):
    output: dict[str, Any] = Field(default_factory=dict)
    claims: list[Claim] = Field(default_factory=list)
    derived: list[DerivedAudio] = Field(default_factory=list)


class AudioInput:
    """An artifact plus its samples, decoded lazily through the process-wide decode cache
    (`audiomind.audio.load_cached`: one decode per file, rate and channel layout)."""

    def __init__(self, artifact: Artifact):
        self.artifact = artifact

    @property
    def path(self) -> str:
        return self.artifact.path

    @property
    def duration_s(self) -> float:
        return self.artifact.duration_s

    def samples(self, sr: int = 16000, mono: bool = True) -> np.ndarray:
        """float32 samples at `sr` (mono: (n,), else (channels, n)); shared with every other reader of the
        same file, so copy before changing them."""
        return audio_io.load_cached(self.artifact.path, sr=sr, mono=mono)


class ToolRunResult(Protocol):
    """What running tool calls gives back (`audiomind.tools.executor.ExecutionResult` is one)."""

    @property
    def tool_calls(self) -> list[ToolCall]: ...


class ToolRunner(Protocol):
    """What a tool that runs other tools needs of the run's executor: its registry and a way to run calls.
    `audiomind.tools.executor.ToolExecutor` satisfies it; declaring it here, not importing the executor,
    keeps tools/base.py below tools/executor.py and tools/manifest.py (no import cycle, type-only included)."""

    registry: Any  # a ToolRegistry (tools/manifest.py)

    def run(self, requests: list[ToolCallRequest], artifacts: list[Artifact], step: int,
            issued_by: str = "planner") -> ToolRunResult: ...


class ToolContext:
    """What a running tool may touch: the run's artifacts (read), a folder for derived audio, and the run's
    executor (its registry, cache and policy) for a tool that runs tools itself, such as a judge; the
    executor is None when a tool is called directly."""

    def __init__(self, artifacts: dict[str, Artifact], derived_dir: Path,
                 audio_cache: dict[str, AudioInput] | None = None, *,
                 executor: ToolRunner | None = None):
        self._artifacts = artifacts
        self.derived_dir = derived_dir
        self._audio = audio_cache if audio_cache is not None else {}
        self.executor = executor
        self.coverage: dict | None = None  # what the tool recorded it analysed (see record_coverage)

    def record_coverage(self, spans: list[tuple[float, float]], requested: tuple[float, float], windows: int = 1,
                        window_s: float | None = None, note: str | None = None) -> None:
        """Note the stretches this call analysed; the executor puts them in an output whose model has a
        `coverage` field when the tool did not set one itself."""
        self.coverage = coverage(spans, requested, windows, window_s, note)

    def audio(self, artifact_id: str) -> AudioInput:
        if artifact_id not in self._artifacts:
            raise KeyError(f"unknown artifact id {artifact_id!r}; known: {sorted(self._artifacts)}")
        if artifact_id not in self._audio:
            self._audio[artifact_id] = AudioInput(self._artifacts[artifact_id])
        return self._audio[artifact_id]

    def new_derived_path(self, stem: str, suffix: str = ".wav") -> Path:
        self.derived_dir.mkdir(parents=True, exist_ok=True)
        return self.derived_dir / f"{stem}_{new_id('d')[2:]}{suffix}"


ToolFunction = Callable[[ToolArgs, ToolContext], ToolResult]
