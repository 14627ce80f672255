"""One spec per judge: the one place a judge is declared, and what every front door is derived from.

A `JudgeSpec` names a judge's own inputs (an `args` model, plus the audio it reads as `AudioSlot`s), its
public function, its result model, and optionally its agent tool (`JudgeTool`: the manifest's text, its output
model and claims) and benchmark task. The options every
judge shares (which models, where the trace goes, which tool registry / cache / executor, the time limits)
are one typed `JudgeOptions`; `JudgeSpec.call` hands a function the ones its signature takes. From the spec:

- the agent tool (judges/tools.py): its manifest (the registry reads it beside the TOML ones), its argument
  model (`ToolArgs`, the artifact ids of the audio slots, the args fields), its entry point, and its output:
  the output model's fields read from the result (`Out` sources), plus the tool's claims;
- the `audiomind judge NAME` command (judges/cli.py): an argument or option per input;
- the HTTP route `POST /v1/judge/NAME` (serve.py): a form field per input, the result as response model.

Specs live in `JUDGES`, a `Registry[JudgeSpec]` (plugin group "judges"): a plugin's `register(registries)`
adds one with `registries.judges.register(spec.name, spec)`. The built-in judges are one file each in
`judges/specs/`. See docs/EXTENDING.md, "A judge".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    model_validator,
)

from audiomind.judges.specs import BUILTIN_JUDGES
from audiomind.registry import Registry, import_target
from audiomind.state import ToolCategory
from audiomind.tools.base import Claim, ToolRunner
from audiomind.tools.executor import ToolCache
from audiomind.tools.manifest import ToolNeeds, ToolRegistry


def _tool_runner(value: Any) -> Any:
    if value is None or (callable(getattr(value, "run", None)) and hasattr(value, "registry")):
        return value
    raise ValueError(f"executor must be a ToolRunner (a registry and a run method), not {type(value).__name__}")


class JudgeOptions(BaseModel):
    """What every judge shares: its models, where its trace goes, and how it runs its tools. A judge's
    function takes the ones that apply to it as keyword arguments (AURA has no front end and no cache)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    llm: str = Field("rules", description="text model spec: 'rules' (offline) or a planner spec")
    frontend: str = Field("cascade", description="audio front-end spec: 'cascade' (offline tools) or another")
    trace_dir: Path | None = Field(Path("traces"), description="where the judge's trace is written")
    write_trace: bool = Field(True, description="write the trace (the result's trace_path)")
    cache: ToolCache | None = Field(None, description="tool-result cache for the judge's own tool calls")
    registry: ToolRegistry | None = Field(None, description="tool manifests (default: the shipped ones)")
    executor: Annotated[ToolRunner | None, PlainValidator(_tool_runner)] = Field(
        None, description="the run's executor when the judge runs as a tool (its registry, cache and policy)")
    timeout_s: float = Field(120, gt=0, description="per model request")
    max_retries: int = Field(3, ge=0, description="per model request")
    time_budget_s: float | None = Field(None, gt=0, description="seconds the whole judge run may take: every model "
                                        "request and tool call shares it (the mechanism of ask's --time-budget); "
                                        "None: none of its own (as a tool: the run's)")

    def for_function(self, fn: Callable[..., Any]) -> dict[str, Any]:
        """The options `fn` takes, as keyword arguments."""
        return {k: getattr(self, k) for k in taken_options(fn)}


def taken_options(fn: Callable[..., Any]) -> list[str]:
    """The JudgeOptions fields a judge function has parameters for, in JudgeOptions' order."""
    params = inspect.signature(fn).parameters
    return [k for k in JudgeOptions.model_fields if k in params]


class AudioSlot(BaseModel):
    """One audio a judge reads: a parameter of its function, a CLI argument (or `--NAME` when optional), an
    HTTP upload field (or a path field), and an artifact-id argument of its agent tool."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="the function's parameter; the CLI argument; the HTTP upload field")
    help: str
    required: bool = True
    path_fields: tuple[str, ...] = Field((), description="HTTP form fields naming it by path (first: the "
                                                          "field's name in messages); default NAME_path")
    artifact_arg: str = Field("artifact", description="the agent tool's argument holding its artifact id")
    artifact_default: str = "a0"
    artifact_help: str | None = Field(None, description="that argument's description (default: ToolArgs')")

    def paths(self) -> tuple[str, ...]:
        return self.path_fields or (f"{self.name}_path",)


class CliLayout(BaseModel):
    """How the args fields appear on the command line: which are positional (after the audio), short flags."""

    model_config = ConfigDict(frozen=True)

    arguments: tuple[str, ...] = ()
    short: dict[str, str] = Field(default_factory=dict, description="field -> short flag, e.g. '-i'")


# ---------------------------------------------------------------------------------------------------------
# A judge's agent tool: what its manifest says, its output model (see judges/tools.py: Out, output_model) and
# its claims.

class JudgeTool(BaseModel):
    """A judge's agent tool, declared in its spec: the manifest's fields (as in a tool's TOML file), its output
    model and its claims. The manifest, the argument model and the entry point are derived (judges/tools.py)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str | None = Field(None, description="the tool's name (default: judge_<judge name>)")
    version: str = "1"
    category: ToolCategory = ToolCategory.evaluation
    function: str = Field(description="what the tool does, one or two sentences (the planner's inventory)")
    supports: tuple[str, ...] = Field(description="claims its output may support")
    not_for: tuple[str, ...] = Field(description="claims its output must not be used for")
    output: type[BaseModel] = Field(description="the output model (judges/tools.py: output_model; its fields are "
                                                "read from the judge's result)")
    claims: str | Callable[..., list[Claim]] = Field(description="(result, tool args) -> the tool's claims")
    timeout_s: float = Field(120.0, gt=0)
    example: dict[str, Any] = Field(default_factory=dict, description="example arguments")
    needs: ToolNeeds = Field(default_factory=ToolNeeds)

    def claims_function(self) -> Callable[..., list[Claim]]:
        return import_target(self.claims) if isinstance(self.claims, str) else self.claims


class JudgeSpec(BaseModel):
    """One judge, declared once. `run`, `result`, `render` (and its tool's `claims`) may be "module:attr" strings,
    imported when used (so listing the judges imports none of them)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str = Field(description="the CLI command, the HTTP route (/v1/judge/NAME), the registry key")
    summary: str = Field(description="one line: CLI help, HTTP summary")
    args: type[BaseModel] = Field(description="the judge's own inputs (audio aside); extra fields forbidden")
    audio: tuple[AudioSlot, ...] = Field(description="the audio it reads, in the function's order")
    run: str | Callable[..., Any] = Field(description="its public function (keyword-callable with the audio "
                                                      "slots, the args fields and the options it takes)")
    result: str | type[BaseModel] = Field(description="the function's result model")
    tool: JudgeTool | None = Field(None, description="its agent tool (None: the judge is not offered as a tool)")
    task: str | None = Field(None, description="its benchmark task (audiomind.bench.tasks)")
    cli: CliLayout = Field(default_factory=CliLayout)
    render: str | Callable[..., Any] | None = Field(
        None, description="result -> lines of rich markup the CLI prints without --json (default: the JSON)")

    @model_validator(mode="after")
    def _consistent(self) -> JudgeSpec:
        fields = set(self.args.model_fields)
        slots = {s.name for s in self.audio}
        clash = (fields & slots) | (fields & set(JudgeOptions.model_fields)) | (slots & set(JudgeOptions.model_fields))
        if clash:
            raise ValueError(f"judge {self.name!r}: input name(s) {sorted(clash)} used twice (args, audio, options)")
        unknown = (set(self.cli.arguments) | set(self.cli.short)) - fields
        if unknown:
            raise ValueError(f"judge {self.name!r}: cli names unknown args field(s) {sorted(unknown)}")
        return self

    @property
    def tool_name(self) -> str | None:
        """Its agent tool's name (None: it has none)."""
        return None if self.tool is None else self.tool.name or f"judge_{self.name}"

    def function(self) -> Callable[..., BaseModel]:
        return import_target(self.run) if isinstance(self.run, str) else self.run

    def result_model(self) -> type[BaseModel]:
        return import_target(self.result) if isinstance(self.result, str) else self.result

    def renderer(self) -> Callable[[Any], list[str]] | None:
        if self.render is None:
            return None
        return import_target(self.render) if isinstance(self.render, str) else self.render

    def options(self) -> list[str]:
        """The shared options its function takes (so its CLI has --frontend only when it has a front end)."""
        return taken_options(self.function())

    def call(self, args: BaseModel, audio: Mapping[str, str | Path | None], options: JudgeOptions) -> BaseModel:
        """Run the judge: the audio by slot name, the args fields and the options its function takes."""
        if not isinstance(args, self.args):  # (a tool's arguments are an args subclass: taken as they are)
            args = self.args.model_validate(args.model_dump())
        missing = [s.name for s in self.audio if s.required and audio.get(s.name) is None]
        if missing:
            raise ValueError(f"the {self.name} judge needs the audio {', '.join(missing)}")
        fn = self.function()
        kwargs: dict[str, Any] = {s.name: audio.get(s.name) for s in self.audio}
        kwargs.update({name: getattr(args, name) for name in self.args.model_fields})
        from audiomind.judges.base import judge_run

        with judge_run(options.time_budget_s):  # its budget; a run that ends without a verdict still leaves a trace
            return fn(**kwargs, **options.for_function(fn))


def input_problem(spec: JudgeSpec, exc: ValidationError, flag: Callable[[str], str] = repr) -> str:
    """One sentence for invalid judge inputs (CLI and HTTP): the field as the caller names it (`flag`)."""
    parts: list[str] = []
    for e in exc.errors(include_url=False):
        where = ".".join(str(x) for x in e["loc"])
        msg = str(e["msg"]).removeprefix("Value error, ")
        if e["type"] == "missing":
            parts.append(f"the {spec.name} judge needs {flag(where)}")
        elif where:
            parts.append(f"{flag(where)}: {msg}")
        else:
            parts.append(msg)
    return "; ".join(parts)


JUDGES: Registry[JudgeSpec] = Registry("judge", group="judges")
"""Judge name -> JudgeSpec. The agent tools, `audiomind judge` and the HTTP routes are derived from it."""


class JudgeArgs(BaseModel):
    """Base of a judge's own inputs: extra fields are an error (a typo is never silently ignored)."""

    model_config = ConfigDict(extra="forbid")


for _name in BUILTIN_JUDGES:  # one file each, imported when first looked up
    JUDGES.register(_name, f"audiomind.judges.specs.{_name}:SPEC")


def loaded_judges() -> list[JudgeSpec]:
    """The registered judges whose specs load, in registration order. A plugin's judge that does not load is
    passed over here (`judges.tools.tool_manifests` reports it; `audiomind doctor` shows why)."""
    out: list[JudgeSpec] = []
    for name in JUDGES.names():
        try:
            out.append(JUDGES[name])
        except Exception:  # noqa: BLE001, S112 - a broken plugin never stops the other judges' tools
            continue
    return out


def spec_of_tool(tool: str) -> JudgeSpec | None:
    """The judge whose agent tool is `tool` (None: no judge that loads has it)."""
    return next((spec for spec in loaded_judges() if spec.tool_name == tool), None)
