"""Readers of tool outputs only look up keys that some tool emits.

Every .py file under audiomind/ is parsed with `ast`; a key read from a tool output is a string constant in
  - a subscript `x["key"]`,
  - a `.get("key", ...)` call, or
  - a `_get(x, "key", "other_key")`-style helper call (any function whose name ends in `get`),
where the source text of the object read (`x`) contains `output`. Each such key must be a field of at least
one declared output model (the shipped manifests' `output_model`s, nested models included). The tool
modules themselves (audiomind/tools/*.py), which build their `out` dicts, are not scanned.

Readers should go through `typed_output(call.output, SomeOutput)` and attributes instead; this test
catches the dict-key readers that are left and that ask for a key no tool emits.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import audiomind
from audiomind.tools.manifest import ToolRegistry

PACKAGE = Path(audiomind.__file__).parent

# (file relative to audiomind/, key): reads of outputs that are not tool outputs. Keep this short.
NOT_TOOL_OUTPUTS: set[tuple[str, str]] = set()

# Keys read in files the lead engineer is rewriting (audiomind/reasoning/*, backends/cascade.py,
# backends/rules_planner.py) that no tool emits. Not fixed here; the lead converts those readers to
# typed_output(...) and empties this list (an entry may outlive its read until then).
OWNED_BY_LEAD: set[tuple[str, str]] = set()  # emptied: the lead's readers go through typed outputs

LEAD_FILES = ("reasoning/", "backends/cascade.py", "backends/rules_planner.py")


def _fields(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names = set(model.model_fields)

    def walk(tp) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            names.update(_fields(tp, seen))
            return
        for arg in typing.get_args(tp):
            walk(arg)

    for f in model.model_fields.values():
        walk(f.annotation)
    return names


def declared_keys() -> set[str]:
    keys: set[str] = set()
    for m in ToolRegistry.load().all():
        if m.output_class is not None:
            keys |= _fields(m.output_class)
    return keys


def _str_const(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def output_key_reads(path: Path) -> list[tuple[int, str, str]]:
    """[(line, key, source of the object read)] of string keys read from an expression mentioning `output`."""
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    found: list[tuple[int, str, str]] = []

    def note(obj: ast.AST, keys: list[str | None], line: int) -> None:
        text = ast.get_source_segment(source, obj) or ""
        if "output" in text:
            found.extend((line, k, text) for k in keys if k is not None)

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            note(node.value, [_str_const(node.slice)], node.lineno)
        elif isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Attribute) and fn.attr == "get" and node.args:
                note(fn.value, [_str_const(node.args[0])], node.lineno)
            elif isinstance(fn, ast.Name) and fn.id.endswith("get") and fn.id != "getattr" and len(node.args) > 1:
                note(node.args[0], [_str_const(a) for a in node.args[1:]], node.lineno)
    return found


def scanned_files() -> list[Path]:
    tools = PACKAGE / "tools"
    return sorted(p for p in PACKAGE.rglob("*.py") if p.parent != tools)


def all_reads() -> list[tuple[str, int, str, str]]:
    return [(p.relative_to(PACKAGE).as_posix(), line, key, obj)
            for p in scanned_files() for line, key, obj in output_key_reads(p)]


@pytest.fixture(scope="module")
def reads() -> list[tuple[str, int, str, str]]:
    return all_reads()


def test_the_scanner_sees_reads_and_ignores_other_lookups(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'a = call.output["count"]\n'
        'b = (c.output or {}).get("events", [])\n'
        'c = _get(call.output if call else None, "bpm", "tempo_bpm")\n'
        'd = args["count"]\n'
        'e = facts.get("count")\n'
        'call.output["written"] = 1\n'
    )
    assert sorted(k for _, k, _ in output_key_reads(sample)) == ["bpm", "count", "events", "tempo_bpm"]


def test_every_key_read_from_a_tool_output_is_declared_by_an_output_model(reads):
    keys = declared_keys()
    assert {"count", "events", "segments", "median_f0_hz", "bpm", "integrated_lufs"} <= keys
    unknown = [f"audiomind/{path}:{line}: {key!r} read from `{obj}`" for path, line, key, obj in reads
               if key not in keys and (path, key) not in NOT_TOOL_OUTPUTS and (path, key) not in OWNED_BY_LEAD]
    assert not unknown, "keys no tool output declares (use typed_output + attributes):\n" + "\n".join(unknown)


def test_the_skip_lists_stay_short_and_honest(reads):
    live = {(path, key) for path, _, key, _ in reads}
    stale = sorted(NOT_TOOL_OUTPUTS - live)
    assert not stale, f"no longer read anywhere, remove from NOT_TOOL_OUTPUTS: {stale}"
    assert all(path.startswith(LEAD_FILES) for path, _ in OWNED_BY_LEAD)  # only the lead's files
    keys = declared_keys()
    assert not [k for _, k in OWNED_BY_LEAD | NOT_TOOL_OUTPUTS if k in keys]  # only keys no model declares


def test_judges_and_audit_read_tool_outputs_through_typed_models(reads):
    """The readers in judges/ and audit/ use typed_output(...) and attributes, not dict keys."""
    dict_reads = [f"audiomind/{path}:{line}: {key!r}" for path, line, key, _ in reads
                  if path.startswith(("judges/", "audit/"))]
    assert not dict_reads, "\n".join(dict_reads)
