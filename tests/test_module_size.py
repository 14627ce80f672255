"""No module in audiomind/ over 800 lines and no function over 80 lines, except those listed with a reason.

The exceptions are the table of docs/ARCHITECTURE.md's section "Long modules and functions": one row per
`audiomind/PATH.py` (a module) or `audiomind/PATH.py:QUALNAME` (a function: `name`, `Class.method` or
`outer.inner`), the most lines it may have, and why it is still long. A function's length runs from its `def`
line to its last line (decorators not counted); a nested function counts on its own and inside its outer one.
The table may only shrink: its row count is capped below, a row must still be long (else it is removed), and a
listed module or function may not grow past its bound.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import audiomind

PACKAGE = Path(audiomind.__file__).resolve().parent
ROOT = PACKAGE.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SECTION = "## Long modules and functions"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_ROWS = 20  # the table's rows when it was made; lower it as rows go, never raise it

_ROW = re.compile(r"^\|\s*`(?P<key>audiomind/[^`]+)`\s*\|\s*(?P<bound>\d+)\s*\|\s*(?P<why>[^|]*\S)\s*\|\s*$")


def exceptions(text: str) -> dict[str, int]:
    """{module or module:function: its bound} from the section's table; a row without a reason is an error."""
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    out: dict[str, int] = {}
    for line in text[start:end if end >= 0 else None].splitlines():
        if not line.startswith("| `"):
            continue
        m = _ROW.match(line)
        assert m, f"a row of {SECTION!r} is not `| \\`audiomind/PATH.py[:FUNCTION]\\` | BOUND | reason |`: {line}"
        assert m["key"] not in out, f"listed twice: {m['key']}"
        out[m["key"]] = int(m["bound"])
    return out


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            out.append((name, (node.end_lineno or node.lineno) - node.lineno + 1))
            out += _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            out += _functions(node, prefix + node.name + ".")
        else:
            out += _functions(node, prefix)
    return out


def measure() -> dict[str, int]:
    """{audiomind/PATH.py: lines} for every module and {audiomind/PATH.py:QUALNAME: lines} for every function."""
    sizes: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        sizes[rel] = len(text.splitlines())
        for name, n in _functions(ast.parse(text)):
            key = f"{rel}:{name}"
            sizes[key] = max(n, sizes.get(key, 0))  # a name defined twice (an if/else pair): the longer
    return sizes


@pytest.fixture(scope="module")
def listed() -> dict[str, int]:
    return exceptions(DOC.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sizes() -> dict[str, int]:
    return measure()


def _limit(key: str) -> int:
    return MAX_FUNCTION_LINES if ":" in key else MAX_MODULE_LINES


def test_nothing_unlisted_is_long(listed: dict[str, int], sizes: dict[str, int]) -> None:
    long = {k: n for k, n in sizes.items() if n > _limit(k) and k not in listed}
    assert not long, (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function, and not listed in "
        f"docs/ARCHITECTURE.md ({SECTION[3:]}): split them by responsibility: "
        + ", ".join(f"{k} ({n})" for k, n in sorted(long.items(), key=lambda kv: -kv[1])))


def test_listed_ones_did_not_grow(listed: dict[str, int], sizes: dict[str, int]) -> None:
    grown = {k: (sizes[k], b) for k, b in listed.items() if k in sizes and sizes[k] > b}
    assert not grown, "longer than their listed bound: " + ", ".join(
        f"{k} ({n} > {b})" for k, (n, b) in sorted(grown.items()))


def test_listed_ones_are_still_long(listed: dict[str, int], sizes: dict[str, int]) -> None:
    stale = sorted(k for k in listed if sizes.get(k, 0) <= _limit(k))
    assert not stale, f"listed but gone or no longer long (remove their rows from {DOC.name}): {stale}"


def test_the_list_only_shrinks(listed: dict[str, int]) -> None:
    assert len(listed) <= MAX_ROWS, (
        f"{len(listed)} rows in {SECTION[3:]!r}, at most {MAX_ROWS}: split the new long code instead")


def test_the_measure_sees_what_it_should(tmp_path: Path) -> None:
    # a long method, a nested function and a short module, measured as the table names them
    src = "class A:\n    def m(self):\n" + "        x = 1\n" * 85 + "\n\ndef f():\n    def g():\n        pass\n    return g\n"
    names = dict(_functions(ast.parse(src)))
    assert names["A.m"] == 86 and names["f"] == 4 and names["f.g"] == 2
    table = f"{SECTION}\n\n| a | b | c |\n| --- | --- | --- |\n| `audiomind/x.py:f` | 90 | a reason |\n\n## Next\n"
    assert exceptions(table) == {"audiomind/x.py:f": 90}
    with pytest.raises(AssertionError):
        exceptions(f"{SECTION}\n\n| `audiomind/x.py:f` | 90 |  |\n")
