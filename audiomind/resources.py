"""Where the package's data lives: `tools/`, `prompts/`, `examples/` at the repository root in a
checkout, or under `audiomind/_data/` inside an installed wheel (hatch force-include puts them there)."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"audiomind data folder {name!r} not found (broken install?)")


def tools_dir() -> Path:
    return data_dir("tools")


def prompts_dir() -> Path:
    return data_dir("prompts")


def examples_dir() -> Path:
    return data_dir("examples")


def trace_schema_path() -> Path:
    for candidate in (_PKG / "_data" / "trace.schema.json", _PKG.parent / "traces" / "trace.schema.json"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError("trace.schema.json not found")
