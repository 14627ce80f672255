"""One registry type for every extensible capability, and the `audiomind.plugins` entry-point group.

`Registry[T]` maps names to entries. An entry is either the object itself or a lazy target, a
"package.module:attribute" string imported on first use (so naming one benchmark task imports only that
task). Register with a call or as a decorator:

    TASKS: Registry[type[BaseTask]] = Registry("benchmark task", group="tasks")
    TASKS.register("mmar", "audiomind.bench.tasks.mmar:MMARTask")     # lazy
    @TASKS.register("mine")                                           # decorator
    class MyTask(BaseTask): ...

`names()`, `get(name)`, `name in reg`, `reg[name]`, `items()`; an unknown name raises `UnknownNameError`
(a KeyError and a ValueError) whose message lists the known names.

Plugins. A third-party package declares, in its pyproject.toml,

    [project.entry-points."audiomind.plugins"]
    myplugin = "mypkg.audiomind_plugin:register"

and `register(registries)` adds what it brings through the `Registries` it is handed: `registries.tools`
(folders of tool manifests), `registries.backends` (planner / front-end spec kinds), `registries.tasks`
(benchmark tasks), `registries.judges`. Plugins load once, lazily, on the first lookup in any registry. A
plugin that fails to import or to register is left out (whatever it had registered is taken back) and its
error is kept for `audiomind doctor`; it never stops the command that looked something up.

This module imports nothing else from audiomind: the registries a plugin reaches are named below as
"module:attribute" strings (resolved when a plugin asks for them), so the lowest layer stays the lowest.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel

T = TypeVar("T")
Obj = TypeVar("Obj")

PLUGIN_GROUP = "audiomind.plugins"
BUILTIN = "audiomind"
"""The origin of the entries the package registers itself."""

GROUPS: dict[str, str] = {
    "tools": "audiomind.tools.manifest:TOOL_FOLDERS",
    "backends": "audiomind.backends.registry:REGISTRY",
    "tasks": "audiomind.bench.tasks:REGISTRY",
    "judges": "audiomind.judges.tools:JUDGES",
    "fact_readers": "audiomind.reasoning.facts:FACT_READERS",
    "verifiers": "audiomind.reasoning.verifiers:REGISTRY",
    "checks": "audiomind.reasoning.verifiers.base:DOMAINS",
}
"""The registries a plugin may add to (group -> where the registry lives), imported when a plugin asks."""


class UnknownNameError(KeyError, ValueError):
    """A name no registry entry has; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class RegistryError(ValueError):
    """A registration that cannot be made (a taken name, a malformed lazy target)."""


class PluginStatus(BaseModel):
    """One `audiomind.plugins` entry point: did it load, and what it added (or why not)."""

    name: str
    target: str
    distribution: str | None = None
    ok: bool
    detail: str
    added: dict[str, list[str]] = {}


def import_target(target: str) -> Any:
    """The object a "package.module:attribute" string names (dotted attributes allowed)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise RegistryError(f"lazy target {target!r} must be 'package.module:attribute'")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_LOCK = threading.RLock()
_ORIGIN = threading.local()  # the plugin whose register() is running (entries it makes carry its name)


class Registry(Generic[T]):
    """Names -> entries of one kind (objects, or "module:attribute" targets imported on first use)."""

    def __init__(self, kind: str, *, group: str | None = None) -> None:
        self.kind = kind  # what an entry is, for messages: "benchmark task", "backend kind", ...
        self.group = group
        self._targets: dict[str, Any] = {}  # name -> the object, or its lazy "module:attr" string
        self._loaded: dict[str, T] = {}
        self._origin: dict[str, str] = {}

    # ---- registering
    @overload
    def register(self, name: str) -> Callable[[Obj], Obj]: ...
    @overload
    def register(self, name: str, target: Any, *, replace: bool = False) -> Any: ...

    def register(self, name: str, target: Any = None, *, replace: bool = False) -> Any:
        """Add `name`: `register(name, obj)`, `register(name, "module:attr")` (lazy), or `@register(name)`.
        A name already taken is an error unless `replace=True` (a plugin never replaces a built-in)."""
        if target is None:
            def decorator(obj: Obj) -> Obj:
                self.register(name, obj, replace=replace)
                return obj

            return decorator
        if not isinstance(name, str) or not name.strip():
            raise RegistryError(f"a {self.kind} needs a non-empty name, not {name!r}")
        if isinstance(target, str) and (":" not in target or target.startswith(":") or target.endswith(":")):
            raise RegistryError(f"{self.kind} {name!r}: lazy target {target!r} must be 'package.module:attribute'")
        origin = getattr(_ORIGIN, "plugin", None) or BUILTIN
        with _LOCK:
            if name in self._targets and not (replace and origin == BUILTIN):
                raise RegistryError(f"{self.kind} {name!r} is already registered (by {self._origin[name]})")
            self._targets[name] = target
            self._loaded.pop(name, None)
            self._origin[name] = origin
        return target

    def unregister(self, name: str) -> None:
        with _LOCK:
            self._targets.pop(name, None)
            self._loaded.pop(name, None)
            self._origin.pop(name, None)

    # ---- looking up (each loads the plugins first, once)
    def names(self) -> list[str]:
        load_plugins()
        return list(self._targets)

    def get(self, name: str) -> T:
        """The entry for `name` (a lazy target is imported now, once); UnknownNameError lists the known."""
        load_plugins()
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._targets:
            raise UnknownNameError(self._unknown(name))
        target = self._targets[name]
        obj: T = import_target(target) if isinstance(target, str) else target
        self._loaded[name] = obj
        return obj

    def origin(self, name: str) -> str:
        """Who registered `name`: 'audiomind' or the plugin's entry-point name."""
        load_plugins()
        if name not in self._origin:
            raise UnknownNameError(self._unknown(name))
        return self._origin[name]

    def target(self, name: str) -> Any:
        """What was registered for `name`, without importing it (a lazy target stays a string)."""
        load_plugins()
        if name not in self._targets:
            raise UnknownNameError(self._unknown(name))
        return self._targets[name]

    def _unknown(self, name: str) -> str:
        known = ", ".join(self._targets) or "none"
        failed = [p.name for p in plugin_status() if not p.ok]
        note = f" (plugin(s) {', '.join(failed)} failed to load: see `audiomind doctor`)" if failed else ""
        return f"unknown {self.kind} {name!r}; known: {known}{note}"

    def __contains__(self, name: object) -> bool:
        load_plugins()
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def keys(self) -> list[str]:
        return self.names()

    def items(self) -> list[tuple[str, T]]:
        return [(n, self.get(n)) for n in self.names()]

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._targets)} entries)"


class Registries:
    """What a plugin's `register(registries)` is handed: the registries it may add to, by group."""

    def group(self, name: str) -> Registry[Any]:
        if name not in GROUPS:
            raise UnknownNameError(f"unknown registry group {name!r}; known: {', '.join(GROUPS)}")
        plugin, _ORIGIN.plugin = getattr(_ORIGIN, "plugin", None), None  # what the registry's module registers
        try:  # as it is first imported (inside a plugin's register) is the package's own, not the plugin's
            reg = import_target(GROUPS[name])
        finally:
            _ORIGIN.plugin = plugin
        if not isinstance(reg, Registry):
            raise RegistryError(f"{GROUPS[name]} is not a Registry")
        return reg

    @property
    def tools(self) -> Registry[Any]:
        """Folders of tool manifests (TOML), by name: `registries.tools.register("mine", Path(...))`."""
        return self.group("tools")

    @property
    def backends(self) -> Registry[Any]:
        """Backend spec kinds (`audiomind.backends.registry.BackendKind`): `--planner KIND[:ARG]`."""
        return self.group("backends")

    @property
    def tasks(self) -> Registry[Any]:
        """Benchmark tasks (`audiomind.bench.tasks.BaseTask` subclasses): `bench run --task NAME`."""
        return self.group("tasks")

    @property
    def judges(self) -> Registry[Any]:
        """Judges (`audiomind.judges.spec.JudgeSpec`): `audiomind judge NAME`, POST /v1/judge/NAME, a tool."""
        return self.group("judges")


_plugins: list[PluginStatus] | None = None


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name)


def _take_back(plugin: str) -> None:
    for where in GROUPS.values():
        module_name, _, attr = where.partition(":")
        reg = getattr(sys.modules.get(module_name), attr, None)
        if isinstance(reg, Registry):
            for name in [n for n, o in reg._origin.items() if o == plugin]:
                reg.unregister(name)


def _added_by(plugin: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for group, where in GROUPS.items():
        module_name, _, attr = where.partition(":")
        reg = getattr(sys.modules.get(module_name), attr, None)
        if isinstance(reg, Registry):
            names = [n for n, o in reg._origin.items() if o == plugin]
            if names:
                out[group] = names
    return out


def load_plugins() -> list[PluginStatus]:
    """Run every `audiomind.plugins` entry point once (later calls return the first result). A plugin that
    raises is left out, what it registered is taken back, and its error is kept (see `plugin_status`)."""
    global _plugins
    if _plugins is not None:
        return _plugins
    with _LOCK:
        if _plugins is not None:
            return _plugins
        _plugins = []  # set first: a plugin that looks something up while registering does not recurse
        try:
            eps = _entry_points()
        except Exception as exc:  # noqa: BLE001 - a broken distribution's metadata must not stop the CLI
            _plugins.append(PluginStatus(name="(entry points)", target=PLUGIN_GROUP, ok=False,
                                         detail=f"entry points could not be read: {type(exc).__name__}: {exc}"))
            return _plugins
        for ep in eps:
            dist = getattr(getattr(ep, "dist", None), "name", None)
            _ORIGIN.plugin = ep.name
            try:
                register = ep.load()
                if not callable(register):
                    raise RegistryError(f"{ep.value} is not callable: it should be register(registries)")
                register(Registries())
                status = PluginStatus(name=ep.name, target=ep.value, distribution=dist, ok=True, detail="loaded",
                                      added=_added_by(ep.name))
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
                _take_back(ep.name)
                status = PluginStatus(name=ep.name, target=ep.value, distribution=dist, ok=False,
                                      detail=f"failed: {type(exc).__name__}: {str(exc)[:300]}")
            finally:
                _ORIGIN.plugin = None
            _plugins.append(status)
        return _plugins


def plugin_status() -> list[PluginStatus]:
    """What `load_plugins` found (loading them if that has not happened yet)."""
    return load_plugins()


def reset_plugins() -> None:
    """Forget the loaded plugins (their entries are taken back) so the next lookup loads them again (tests)."""
    global _plugins
    with _LOCK:
        for p in _plugins or []:
            _take_back(p.name)
        _plugins = None
