"""The judges as tools (category `evaluation`), so the agent's planner can call them like any other tool.

Everything here is derived from the judges' specs (judges/specs/, or a plugin's): each judge with a `JudgeTool`
gets a manifest (`tool_manifests`, which the tool registry reads beside the TOML manifests), an argument
model, an entry point, and an output read from its result (`project`) plus the claims its spec makes.

Each entry point runs the judge on the run's artifacts with the models from the environment
(AUDIOMIND_JUDGE_LLM / AUDIOMIND_JUDGE_FRONTEND, default: the offline rules and cascade; a planner never
chooses an endpoint through tool arguments), runs the judge's own tool calls through the run's executor
(from the tool context: the run's registry, cache and tool policy), writes the judge's own trace beside
the run's derived audio, and returns a compact output plus claims that stay within the judge's boundary: they state a verdict
and the measurements behind it, never what the audio "is" beyond them.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, Field, ValidationError, create_model

from audiomind.judges.base import default_models
from audiomind.judges.spec import JUDGES, JudgeOptions, JudgeSpec, loaded_judges, spec_of_tool
from audiomind.registry import BUILTIN
from audiomind.tools.base import ToolArgs, ToolContext, ToolOutput, ToolResult
from audiomind.tools.manifest import DerivedTool, ToolManifest

__all__ = [
    "JUDGES",
    "JUDGE_TRACE",
    "JudgeOutput",
    "Out",
    "many",
    "output_model",
    "project",
    "tool_args_model",
    "tool_entry",
    "tool_manifest",
    "tool_manifests",
]
# and, by name (see __getattr__), each judge tool's entry point (judge_edit, ...), argument and output model


@functools.lru_cache(maxsize=1)
def _registry():
    from audiomind.tools.manifest import ToolRegistry

    return ToolRegistry.load()


def _cache():
    from audiomind.tools.executor import ToolCache

    return ToolCache()


def _tools_of(ctx: ToolContext, *, cache: bool = True) -> dict[str, Any]:
    """How the judge runs its tools: through the run's executor; a direct call (no executor in the context)
    gets the shipped manifests and, where the judge caches, the default tool cache."""
    if ctx.executor is not None:
        return {"executor": ctx.executor}
    return {"registry": _registry(), **({"cache": _cache()} if cache else {})}


# ---- a judge tool's output: declared as a table of fields with their sources in the judge's result

Source = str | Callable[[Any], Any]
"""Where an output field's value comes from in the judge's result: an attribute path ("expectation.operation")
or a function of the result object."""


class Out(NamedTuple):
    """One field of a judge tool's output: its type, its description (the MCP output schema's), and its source
    in the judge's result (None: the result's attribute of the same name)."""

    type: Any
    description: str
    source: Source | None = None


class JudgeOutput(ToolOutput):
    """Base of a judge tool's output models: `sources` says where a field's value is read from the result
    (a field it does not name is the result's attribute of the same name). Made by `output_model`."""

    sources: ClassVar[dict[str, Source]] = {}


def output_model(name: str, fields: Mapping[str, Out], module: str | None = None) -> type[JudgeOutput]:
    """A judge tool's output model from its fields, in order (a field's type may itself be an output model,
    a list of one, or one or None): the schema the tool's output must fit, and how it is read from the result."""
    defs: dict[str, Any] = {k: (o.type, Field(description=o.description)) for k, o in fields.items()}
    model = create_model(name, __base__=JudgeOutput, __module__=module or __name__, **defs)
    model.sources = {k: o.source for k, o in fields.items() if o.source is not None}
    return model


def many(model: type[BaseModel]) -> Any:
    """`list[model]`, the type of an output field holding a list of `model` (spelt so because a model made by
    `output_model` is a value, not a class statement, to a type checker)."""
    return types.GenericAlias(list, (model,))


JUDGE_TRACE = Out(str | None, "the judge's own trace file", "trace_path")
"""The output field every judge tool has: its own trace (the result's trace_path)."""


def _read(obj: Any, name: str, source: Source | None) -> Any:
    if callable(source):
        return source(obj)
    for part in (source or name).split("."):
        obj = obj[part] if isinstance(obj, Mapping) else getattr(obj, part)
    return obj


def _fit(value: Any, annotation: Any) -> Any:
    """`value` shaped for a field typed `annotation`: a model is projected, a list item by item."""
    if value is None:
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return project(value, annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return project(value, models[0]) if len(models) == 1 else value
    if origin in (list, tuple) and args:
        return [_fit(v, args[0]) for v in value]
    return value


def project(result: Any, model: type[BaseModel]) -> dict[str, Any]:
    """The output `model` reads from a judge's `result`: each field from its source (see `JudgeOutput`), nested
    models field by field (so a result model's extra fields are left out)."""
    sources: dict[str, Source] = getattr(model, "sources", {})
    return {name: _fit(_read(result, name, sources.get(name)), f.annotation)
            for name, f in model.model_fields.items()}


# ---- the agent tools, derived from the judges' specs (judges/spec.py)

_TOOL_ARGS: dict[int, tuple[JudgeSpec, type[ToolArgs]]] = {}  # id(spec) -> (the spec, kept alive; its model)


def tool_args_model(spec: JudgeSpec) -> type[ToolArgs]:
    """The tool's arguments: ToolArgs, an artifact id per audio slot, then the judge's own args (and their
    validators). Named Judge<Name>Args; made once per spec."""
    made = _TOOL_ARGS.get(id(spec))
    if made is None or made[0] is not spec:
        base_help = ToolArgs.model_fields["artifact"].description
        ids: dict[str, Any] = {
            s.artifact_arg: (str, Field(s.artifact_default, description=s.artifact_help or base_help))
            for s in spec.audio}
        name = "Judge" + "".join(p.title() for p in spec.name.replace("-", "_").split("_")) + "Args"
        artifacts = create_model(f"{name}Artifacts", __base__=ToolArgs, __module__=__name__, **ids)
        bases: tuple[type[ToolArgs], ...] = (spec.args, artifacts)  # type: ignore[assignment]  # args first: validators
        made = _TOOL_ARGS[id(spec)] = (spec, create_model(name, __base__=bases, __module__=__name__))
    return made[1]


def tool_entry(spec: JudgeSpec) -> Callable[[ToolArgs, ToolContext], ToolResult]:
    """The tool entry point of a judge: the audio of the named artifacts, the judge's args, the models from
    the environment (a planner never chooses an endpoint), the judge's own tool calls through the run's
    executor, its trace beside the run's derived audio; its output read from the result (`project`) and
    the claims its `JudgeTool` makes."""
    tool, name = spec.tool, spec.tool_name
    if tool is None or name is None:
        raise ValueError(f"judge {spec.name!r} has no agent tool")
    model = tool_args_model(spec)
    takes_cache = "cache" in spec.options()

    def entry(args: ToolArgs, ctx: ToolContext) -> ToolResult:
        m = default_models()
        audio = {s.name: ctx.audio(getattr(args, s.artifact_arg)).path for s in spec.audio}
        options = JudgeOptions(llm=m.llm, frontend=m.frontend, trace_dir=ctx.derived_dir / "judges",
                               **_tools_of(ctx, cache=takes_cache))
        result = spec.call(args, audio, options)
        return ToolResult(output=project(result, tool.output), claims=tool.claims_function()(result, args))

    entry.__annotations__ = {"args": model, "ctx": ToolContext, "return": ToolResult}  # the manifest reads `args`
    entry.__name__ = entry.__qualname__ = name
    entry.__doc__ = f"The {spec.name} judge as an agent tool: {spec.summary}"
    return entry


_ENTRIES: dict[int, tuple[JudgeSpec, Callable[[ToolArgs, ToolContext], ToolResult]]] = {}


def tool_manifest(spec: JudgeSpec) -> ToolManifest:
    """A judge's tool manifest, from its spec's `JudgeTool`: the entry point and the output model are named
    here ("audiomind.judges.tools:<tool>", ":<output model>"), resolved by this module's `__getattr__`."""
    tool = spec.tool
    if tool is None or spec.tool_name is None:
        raise ValueError(f"judge {spec.name!r} has no agent tool")
    try:
        tool_args_model(spec).model_validate(tool.example)
    except ValidationError as exc:
        raise ValueError(f"judge {spec.name!r}: its tool's example does not fit its arguments: {exc}") from None
    return ToolManifest(
        name=spec.tool_name, version=tool.version, category=tool.category, function=tool.function,
        supports=list(tool.supports), not_for=list(tool.not_for), entry=f"{__name__}:{spec.tool_name}",
        output_model=f"{__name__}:{tool.output.__name__}", needs=tool.needs, timeout_s=tool.timeout_s,
        example=dict(tool.example))


def tool_manifests() -> list[DerivedTool]:
    """The manifests of the judges' tools (tools/manifest.py reads them as a source, by name). A plugin judge
    whose spec cannot be loaded, or whose output model's name another judge's tool has, is returned as a
    problem; a built-in one raises (a bug in the package)."""
    out: list[DerivedTool] = []
    outputs: dict[str, str] = {}
    for name in JUDGES.names():
        origin = JUDGES.origin(name)
        try:
            spec = JUDGES[name]
            if spec.tool is None:
                continue
            m = tool_manifest(spec)
            taken = outputs.setdefault(spec.tool.output.__name__, name)
            if taken != name:
                raise ValueError(f"its output model's name {spec.tool.output.__name__!r} is judge {taken!r}'s")
        except Exception as exc:
            if origin == BUILTIN:
                raise
            out.append(DerivedTool(origin=origin, key=f"judge {name}", problem=f"{type(exc).__name__}: {exc}"))
            continue
        out.append(DerivedTool(origin=origin, key=f"judge {name}", manifest=m))
    return out


def __getattr__(name: str) -> Any:
    """What a judge tool's manifest names in this module: the entry point ("judge_edit", ..., any registered
    judge's tool), the argument model ("Judge<Name>Args") and the output model (its `JudgeTool.output`)."""
    spec = spec_of_tool(name)
    if spec is not None:
        made = _ENTRIES.get(id(spec))
        if made is None or made[0] is not spec:
            made = _ENTRIES[id(spec)] = (spec, tool_entry(spec))
        return made[1]
    for judge in loaded_judges():
        if judge.tool is not None and tool_args_model(judge).__name__ == name:
            return tool_args_model(judge)
        if judge.tool is not None and judge.tool.output.__name__ == name:
            return judge.tool.output
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
