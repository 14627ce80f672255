"""The import graph of the package: no cycles, and every import points down (or sideways) the layers.

Every module under audiomind/ is parsed with `ast` (imports inside functions included, since a lazy
import is still a dependency), `from audiomind.x import name` resolves to the module `audiomind.x.name`
where that is a module, else to `audiomind.x`. The implicit import of a parent package's __init__ is
not an edge (it is how Python imports submodules, not a dependency the code chose).

Imports under `if TYPE_CHECKING:` count as edges everywhere: for the layer order (an annotation from a
higher layer is still a dependency) and for cycles (they never run, but a type checker follows them, and a
cycle through one is a design knot all the same: a Protocol in the lower module breaks it, as
`tools.base.ToolRunner` does for the executor). Not import statements, and so not
edges at all: the tool manifests name their entry points as strings
("audiomind.judges.tools:judge_caption"), which tools/manifest.py resolves at run time. That is how the
judges are registered as tools without the tools layer depending on the judges layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import audiomind

PACKAGE_DIR = Path(audiomind.__file__).resolve().parent

# Lowest first. A module may import from its own layer and from lower ones only.
LAYERS: list[tuple[str, ...]] = [
    # `artifacts` (content-hashed audio files with provenance) and `fsutil` (atomic file writes) sit
    # beside `audio` and `state`: they import nothing higher, and the tools' executor builds on them.
    # `registry` (Registry[T] and the plugin entry points) imports nothing else from audiomind: the registries a
    # plugin adds to are named there as "module:attribute" strings
    ("registry", "state", "audio", "trace", "config", "resources", "prompts", "paths", "inputs", "synth",
     "embedded", "artifacts", "fsutil", "calibration", "limits", "http_bounds"),
    # `language` reads questions and instructions into typed frames: plain data and phrase tables, handed an
    # LLM client when a model reads; the reasoning step and the judges read its frames
    ("language",),
    ("tools",),
    ("reasoning",),
    ("backends",),
    ("graph",),
    # the package's own __init__ re-exports AudioMind and AskResult, so it sits with api
    ("api", "__init__"),
    ("bench", "judges", "audit"),
    # `serve` (the HTTP service) is an entry point like the CLI: it drives the agent, the judges and the viewer
    ("cli", "cli_common", "cli_report", "__main__", "serve", "serve_guards", "warm"),
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module an imported dotted name lives in (None: not ours)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _type_only_lines(tree: ast.AST) -> set[int]:
    """Lines of the statements under `if TYPE_CHECKING:` (annotations only, never executed)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return lines


def _imports(mod: str, path: Path, modules: dict[str, Path], *, type_only: bool = True) -> dict[str, int]:
    """Imported package modules -> the line of the first import of each (`type_only=False`: without the
    imports under `if TYPE_CHECKING:`, which never run and so cannot make an import cycle)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = set() if type_only else _type_only_lines(tree)
    is_pkg = path.name == "__init__.py"
    out: dict[str, int] = {}

    def add(target: str | None, line: int) -> None:
        if target is not None and target != mod and line not in skip:
            out.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_resolve(alias.name, modules), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, up `level - 1` more
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                full = f"{prefix}.{alias.name}"
                add(full if full in modules else _resolve(prefix, modules), node.lineno)
    return out


def _graph(type_only: bool = True) -> dict[str, dict[str, int]]:
    modules = _modules()
    return {m: _imports(m, p, modules, type_only=type_only) for m, p in modules.items()}


def _layer(mod: str) -> tuple[str, int]:
    """A module's layer: by its top-level name under audiomind, except that a feature's command group
    (`audiomind.bench.cli`, `audiomind.judges.cli`, `audiomind.audit.cli`: typer commands living beside
    their feature) is part of the command line, and so of the `cli` layer, like `cli_common` it uses."""
    parts = mod.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    if len(parts) > 2 and parts[-1] == "cli":
        key = "cli"
    if key not in LAYER_OF:
        raise AssertionError(f"module {mod} (top-level name {key!r}) is in no layer: add it to LAYERS "
                             "in tests/test_architecture.py where it belongs")
    return key, LAYER_OF[key]


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import cycle as a path [a, b, ..., a], or None (iterative DFS, deterministic order)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        stack: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        path = [root]
        colour[root] = GREY
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = BLACK
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop(0)
            if colour.get(nxt, BLACK) == GREY:
                return path[path.index(nxt):] + [nxt]
            if colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                path.append(nxt)
                stack.append((nxt, sorted(graph[nxt])))
    return None


def test_every_module_is_in_a_layer():
    for mod in _modules():
        _layer(mod)


def test_no_import_cycles():
    cycle = find_cycle(_graph())  # imports under `if TYPE_CHECKING:` included
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_import_cycles_at_run_time_either():
    cycle = find_cycle(_graph(type_only=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_type_checking_imports_are_edges(tmp_path):
    """A cycle made only by an import under `if TYPE_CHECKING:` is found (the one tools/base.py had with the
    executor until the ToolRunner protocol), and is not a run-time cycle."""
    (tmp_path / "base.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from pkg.executor import Executor\n")
    (tmp_path / "executor.py").write_text("from pkg.base import Thing\n")
    modules = {"pkg.base": tmp_path / "base.py", "pkg.executor": tmp_path / "executor.py"}
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    assert find_cycle(graph) == ["pkg.base", "pkg.executor", "pkg.base"]
    run_time = {m: _imports(m, p, modules, type_only=False) for m, p in modules.items()}
    assert find_cycle(run_time) is None
    head = ast.parse(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from audiomind.tools.executor import ToolExecutor\n")
    assert _type_only_lines(head) == {3}


def test_imports_point_down_the_layers():
    graph = _graph()  # type-only imports too: an annotation from a higher layer is still a dependency
    modules = _modules()
    bad = []
    for mod, targets in sorted(graph.items()):
        key, layer = _layer(mod)
        for target, line in sorted(targets.items()):
            tkey, tlayer = _layer(target)
            if tlayer > layer:
                where = modules[mod].relative_to(PACKAGE_DIR.parent)
                bad.append(f"{where}:{line}: {mod} ({key}, layer {layer}) imports {target} ({tkey}, layer {tlayer})")
    assert not bad, "imports from a higher layer:\n" + "\n".join(bad)


def test_cycle_finder_reports_the_path():
    g = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {}}
    assert find_cycle(g) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {}}) is None


@pytest.mark.parametrize("mod", ["audiomind.backends.base", "audiomind.state", "audiomind.tools.executor"])
def test_lower_layers_never_import_api(mod):
    assert "audiomind.api" not in _graph()[mod]
