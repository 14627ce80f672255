"""Tool manifests (TOML, one per tool) and the registry built from them.

The manifest is the single source of truth: the planner's inventory is rendered from it, and the
executor enforces it (argument schema from the entry point, timeout, availability). Nothing about a
tool's boundary is written twice. Most tools have a TOML file; the judges' tools are declared in their
judge specs, and their manifests are derived from them (a `MANIFEST_SOURCES` entry).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tomllib
import typing
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from audiomind import config
from audiomind.registry import BUILTIN, Registry
from audiomind.resources import tools_dir
from audiomind.state import ToolCategory
from audiomind.tools.base import ToolArgs, ToolFunction


class ManifestError(ValueError):
    """A manifest that cannot be loaded; the message names the file."""


class ToolNeeds(BaseModel):
    model_config = ConfigDict(extra="forbid")
    packages: list[str] = Field(default_factory=list, description="importable module names")
    models: list[str] = Field(default_factory=list, description="embedded model names (audiomind.embedded)")
    gpu: bool = False
    executables: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list, description="variables naming local weight folders (hub models)")


class ToolReliability(BaseModel):
    """How often the tool's measurement is right when it applies, on its construction tests."""

    model_config = ConfigDict(extra="forbid")
    value: float = Field(ge=0.0, le=1.0, description="share of its construction cases it gets right")
    measured_on: str = Field(description="what it was measured on: the cases, their conditions, the count")


class ToolVocabulary(BaseModel):
    """A descriptor's rows of the property vocabulary, carried by its own manifest (the shape of
    lexicon/properties.toml's `[[property]]` and `[[selector]]` rows; `tool` defaults to the manifest's name and
    `reliability` to its `[reliability]` value). Validated where the vocabulary is read
    (audiomind.reasoning.property_facts), which this layer does not import."""

    model_config = ConfigDict(extra="forbid")
    property: list[dict[str, Any]] = Field(default_factory=list)
    selector: list[dict[str, Any]] = Field(default_factory=list)


class ToolManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    version: str = "1"
    category: ToolCategory
    function: str = Field(description="what the tool does, one or two sentences")
    supports: list[str] = Field(description="claims its output may support")
    not_for: list[str] = Field(description="claims its output must not be used for")
    entry: str = Field(description="package.module:callable")
    output_model: str | None = Field(
        None, description="package.module:ClassName of the pydantic model the tool's output must fit; None = "
                          "untyped output (a user's own tool may leave it out)")
    needs: ToolNeeds = Field(default_factory=ToolNeeds)
    timeout_s: float = 120.0
    cacheable: bool = True
    derives_audio: bool = False
    example: dict[str, Any] = Field(default_factory=dict, description="example arguments")
    reliability: ToolReliability | None = Field(None, description="construction-test reliability (descriptors)")
    vocabulary: ToolVocabulary | None = Field(None, description="the descriptor's property / selector rows")
    source_file: str | None = None

    def vocabulary_rows(self) -> dict[str, list[dict[str, Any]]]:
        """{'property': [...], 'selector': [...]}: the manifest's vocabulary rows with `tool` and `reliability`
        filled in from the manifest where a row leaves them out."""
        if self.vocabulary is None:
            return {"property": [], "selector": []}
        fill: dict[str, Any] = {"tool": self.name}
        if self.reliability is not None:
            fill["reliability"] = self.reliability.value
        return {group: [{**fill, **row} for row in getattr(self.vocabulary, group)] for group in ("property", "selector")}

    @cached_property
    def callable(self) -> ToolFunction:
        module_name, _, attr = self.entry.partition(":")
        if not attr:
            raise ManifestError(f"tool {self.name}: entry {self.entry!r} must be 'module:callable'")
        module = importlib.import_module(module_name)
        fn = getattr(module, attr, None)
        if fn is None:
            raise ManifestError(f"tool {self.name}: {module_name} has no attribute {attr!r}")
        return fn

    @cached_property
    def args_model(self) -> type[ToolArgs]:
        hints = typing.get_type_hints(self.callable)
        model = hints.get("args")
        if not (isinstance(model, type) and issubclass(model, ToolArgs)):
            raise ManifestError(f"tool {self.name}: {self.entry} must annotate `args` with a ToolArgs subclass")
        return model

    @cached_property
    def output_class(self) -> type[BaseModel] | None:
        """The output model class named by `output_model` (None when the manifest names none)."""
        if not self.output_model:
            return None
        where = self.source_file or f"tool {self.name}"
        module_name, _, attr = self.output_model.partition(":")
        if not module_name or not attr:
            raise ManifestError(f"{where}: output_model {self.output_model!r} must be 'package.module:ClassName'")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise ManifestError(f"{where}: output_model {self.output_model!r} cannot be imported: {exc}") from exc
        cls = getattr(module, attr, None)
        if cls is None:
            raise ManifestError(f"{where}: output_model {self.output_model!r}: {module_name} has no attribute {attr!r}")
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            raise ManifestError(f"{where}: output_model {self.output_model!r} is not a pydantic BaseModel subclass")
        return cls

    def availability(self) -> tuple[bool, str]:
        """(usable here, why not): missing packages, models, executables or a GPU."""
        import shutil

        from audiomind.embedded import models as embedded_models

        for pkg in self.needs.packages:
            try:
                found = importlib.util.find_spec(pkg) is not None
            except ModuleNotFoundError:  # a dotted name whose parent package is missing
                found = False
            if not found:
                return False, f"python package {pkg!r} is not installed"
        for var in self.needs.env:
            folder = config.env_setting(var)
            if not folder or not os.path.isdir(folder):
                return False, f"set {var} to a local folder with the weights (hub downloads are never made)"
        for exe in self.needs.executables:
            if shutil.which(exe) is None and not (exe == "ffmpeg" and _has_imageio_ffmpeg()):
                return False, f"executable {exe!r} not found"
        if self.needs.gpu and not _has_gpu():
            return False, "needs a GPU and none is visible"
        for model in self.needs.models:
            ok, why = embedded_models.check(model)
            if not ok:
                return False, why
        try:
            self.args_model  # noqa: B018 - imports the entry point
        except Exception as exc:  # noqa: BLE001 - import errors surface as unavailability, with the reason
            return False, f"entry point {self.entry} failed to import: {exc}"
        try:
            self.output_class  # noqa: B018 - imports the output model
        except ManifestError as exc:
            return False, str(exc)
        return True, "ok"

    @cached_property
    def _schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema()

    def argument_schema(self) -> dict[str, Any]:
        return self._schema

    def inventory_entry(self) -> str:
        """The text the planner reads for this tool: what it does and its evidence boundary."""
        props = self.argument_schema().get("properties", {})
        args = ", ".join(
            f"{k}: {_type_name(v)}" + (f" = {v['default']!r}" if "default" in v else "") for k, v in props.items()
        )
        return (
            f"- {self.name} [{self.category.value}] ({args})\n"
            f"    does: {self.function}\n"
            f"    may support: {'; '.join(self.supports)}\n"
            f"    must not be used for: {'; '.join(self.not_for)}"
            + ("\n    output: a derived audio artifact (not evidence by itself)" if self.derives_audio else "")
        )


def _type_name(prop: dict[str, Any]) -> str:
    """'number | null', 'string', 'one of "tiny.en", "base"' from a JSON-schema property."""
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "anyOf" in prop:
        return " | ".join(_type_name(p) for p in prop["anyOf"])
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    if prop.get("type") == "array":
        return f"list of {_type_name(prop.get('items', {}))}"
    return str(prop.get("type", "any"))


def _has_imageio_ffmpeg() -> bool:
    return importlib.util.find_spec("imageio_ffmpeg") is not None


def _has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken torch install means no GPU, not a crash
        return False


MAX_MANIFEST_BYTES = 1024 * 1024
"""A tool manifest is a few hundred bytes of TOML; a larger file is refused, not read."""


def load_manifest(path: Path) -> ToolManifest:
    """One manifest, read by the bounded reader (audiomind.fsutil): a `*.toml` in a tools folder that is a FIFO,
    /dev/zero or a huge file is a ManifestError at once (it hung every command, or read gigabytes: issue 35)."""
    from audiomind.fsutil import InputFileError, read_input_text

    try:
        data = tomllib.loads(read_input_text(path, MAX_MANIFEST_BYTES))
        return ToolManifest(**data, source_file=str(path))
    except InputFileError as exc:  # it names the file already
        raise ManifestError(f"tool manifest {exc}") from exc
    except Exception as exc:
        raise ManifestError(f"{path}: {exc}") from exc


TOOL_FOLDERS: Registry[Path] = Registry("tool folder", group="tools")
"""Folders of tool manifests a plugin brings (`registries.tools.register(NAME, Path(...))`), read by every
`ToolRegistry.load` after the packaged folder and before the caller's own folders."""


class DerivedTool(NamedTuple):
    """A manifest made in code (a judge's tool, from its spec), or why it could not be made."""

    origin: str  # who declared it: "audiomind" or a plugin's name
    key: str  # what declared it, for messages ("judge peak")
    manifest: ToolManifest | None = None
    problem: str | None = None


MANIFEST_SOURCES: Registry[Callable[[], list[DerivedTool]]] = Registry("tool manifest source")
"""Code that declares tools without a TOML file: name -> a function returning their manifests. Named as lazy
"module:attr" strings, so this layer imports nothing above it (the judges are a higher layer)."""
MANIFEST_SOURCES.register("judges", "audiomind.judges.tools:tool_manifests")


def derived_manifests() -> list[DerivedTool]:
    """The manifests every source in MANIFEST_SOURCES makes, in source order."""
    return [d for name in MANIFEST_SOURCES.names() for d in MANIFEST_SOURCES[name]()]


PLUGIN_TOOL_PROBLEMS: dict[str, str] = {}
"""Plugin manifests left out, by '<folder name>:<file>' (or '<source>:<what>' for a derived one): why (shown
by `audiomind doctor`)."""


def plugin_manifests(taken: set[str], derived: list[DerivedTool] | None = None) -> list[ToolManifest]:
    """The manifests in the folders plugins registered, then the `derived` ones plugins declared (a plugin's
    judge). A plugin's manifest that does not load, or names a tool that exists already, is left out and noted
    in PLUGIN_TOOL_PROBLEMS: a broken plugin never stops a command."""
    out: list[ToolManifest] = []
    for name in TOOL_FOLDERS.names():
        folder = Path(TOOL_FOLDERS.get(name))
        if not folder.is_dir():
            PLUGIN_TOOL_PROBLEMS[f"{name}:"] = f"tool folder of plugin {TOOL_FOLDERS.origin(name)!r} does not exist"
            continue
        for path in sorted(folder.glob("*.toml")):
            key = f"{name}:{path.name}"
            try:
                m = load_manifest(path)
            except ManifestError as exc:
                PLUGIN_TOOL_PROBLEMS[key] = str(exc)
                continue
            if m.name in taken:
                PLUGIN_TOOL_PROBLEMS[key] = f"tool name {m.name!r} is taken: left out"
                continue
            taken.add(m.name)
            out.append(m)
    for d in derived or []:
        key = f"{d.origin}:{d.key}"
        if d.manifest is None:
            PLUGIN_TOOL_PROBLEMS[key] = d.problem or "no manifest"
        elif d.manifest.name in taken:
            PLUGIN_TOOL_PROBLEMS[key] = f"tool name {d.manifest.name!r} is taken: left out"
        else:
            taken.add(d.manifest.name)
            out.append(d.manifest)
    return out


class ToolRegistry:
    """All known tools, by name: the packaged ones (the `tools/` folder and the built-in judges' tools, by
    name), then the plugins' (their folders, their judges' tools), then any user folders."""

    def __init__(self, manifests: list[ToolManifest]):
        self._by_name: dict[str, ToolManifest] = {}
        for m in manifests:
            if m.name in self._by_name:
                raise ManifestError(f"duplicate tool name {m.name!r} ({m.source_file})")
            self._by_name[m.name] = m
        self._availability: dict[str, tuple[bool, str]] = {}
        self._inventory: str | None = None

    @classmethod
    def load(cls, extra_dirs: list[Path] | None = None) -> ToolRegistry:
        derived = derived_manifests()
        manifests = [load_manifest(p) for p in sorted(tools_dir().glob("*.toml"))]
        manifests += [d.manifest for d in derived if d.origin == BUILTIN and d.manifest is not None]
        manifests.sort(key=lambda m: m.name)
        manifests += plugin_manifests({m.name for m in manifests}, [d for d in derived if d.origin != BUILTIN])
        manifests += [load_manifest(p) for d in extra_dirs or [] for p in sorted(Path(d).glob("*.toml"))]
        return cls(manifests)

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def get(self, name: str) -> ToolManifest:
        return self._by_name[name]

    def all(self) -> list[ToolManifest]:
        return list(self._by_name.values())

    def availability(self, name: str) -> tuple[bool, str]:
        if name not in self._availability:
            self._availability[name] = self._by_name[name].availability()
        return self._availability[name]

    def available(self) -> list[ToolManifest]:
        return [m for m in self._by_name.values() if self.availability(m.name)[0]]

    def render_inventory(self) -> str:
        """The planner's tool inventory, grouped by boundary category; only usable tools are offered.
        Rendered once per registry (manifests and availability do not change during its life)."""
        if self._inventory is None:
            self._inventory = self._render_inventory()
        return self._inventory

    def _render_inventory(self) -> str:
        lines: list[str] = []
        for cat in ToolCategory:
            tools = [m for m in self.available() if m.category == cat]
            if tools:
                lines.append(f"## {cat.value}")
                lines.extend(m.inventory_entry() for m in tools)
        return "\n".join(lines)
