"""The one protocol every benchmark follows, so any of them runs through the same batch runner.

A benchmark (a *task*) is data plus four small hooks, in the spirit of lm-evaluation-harness:

- `load_items(source, ...)`: read the task's own input (MMAR's meta JSONL, MSU-Bench's task files, a
  synthetic split set, a generic item list) into `BenchItem`s. Rows are checked one by one
  (audiomind.bench.rows) and audio paths must stay inside the task's root (audiomind.paths): a bad row
  becomes an item carrying its 'FILE:LINE: reason' (`BenchItem.error`), which the runner commits as an
  error without asking; `strict=True` refuses the whole file instead (`RowsError`, a ValueError).
- `score(item, result)`: the task's own verdict, stored as `ItemResult.correct` (None: not scorable).
- `write_outputs(run_dir, loaded)`: the task's official files next to the per-item results.jsonl (MMAR's
  predictions.jsonl + scores.json, MSU-Bench's summary CSVs and scored task files); written after a run,
  also an interrupted one, from what results.jsonl holds then.
- `report(run_dir, loaded)`: the task's own breakdown (a JSON-able dict and a terminal table), when it has one.

Every run folder holds the same core: results.jsonl (one line per item), traces/<id>.json, run.json (what
produced it, including `task`) and summary.json (the aggregate); a task adds its official files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.runner import default_score


@dataclass
class TaskItems:
    """What a task read from its source: the items to run, in source order (bad rows included, as items
    carrying their error), and whatever the task needs afterwards to write its official files (`rows`:
    MMAR keeps its meta rows, so predictions echo every row in file order)."""

    source: Path
    items: list[BenchItem]
    rows: list[Any] = field(default_factory=list)
    audio_dir: Path | None = None

    @property
    def errors(self) -> list[str]:
        """The 'FILE:LINE: reason' of every item that will not run (bad row, refused audio path)."""
        return [it.error for it in self.items if it.error]


@dataclass
class TaskReport:
    """A task's own breakdown of a run: `data` (JSON-able) and `table` (a rich renderable, or None)."""

    data: dict[str, Any]
    table: Any = None


@runtime_checkable
class Benchmark(Protocol):
    """What the runner and the CLI need from a benchmark (see the module doc)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def source_help(self) -> str: ...

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems: ...

    def score(self, item: BenchItem, result: ItemResult) -> bool | None: ...

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]: ...

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None: ...

    def run_config(self, loaded: TaskItems) -> dict[str, Any]: ...


@dataclass
class BaseTask:
    """Defaults for the hooks: exact-option scoring, no official files, no own breakdown. Subclasses are
    dataclasses whose fields are the task's options (`make_task(name, pack="concat")`, or
    `bench run --task-option pack=concat`)."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    source_help: ClassVar[str] = "the task's input"

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems:
        raise NotImplementedError

    def score(self, item: BenchItem, result: ItemResult) -> bool | None:
        return default_score(item, result)

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]:
        return {}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        return None

    def options(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def run_config(self, loaded: TaskItems) -> dict[str, Any]:
        """What run.json records about the input (merged with the agent's settings)."""
        return {"task": self.name, "source": str(loaded.source.resolve()), **self.options()}


def parse_options(task_cls: type[BaseTask], options: Mapping[str, Any]) -> dict[str, Any]:
    """Task options from strings ('KEY=VALUE' on the command line) or values, checked against the task's
    fields: unknown names and unparsable values raise ValueError naming the choices."""
    fields = {f.name: f for f in dataclasses.fields(task_cls)}
    out: dict[str, Any] = {}
    for key, value in options.items():
        name = key.replace("-", "_")
        if name not in fields:
            known = ", ".join(sorted(fields)) or "none"
            raise ValueError(f"task {task_cls.name!r} has no option {key!r} (options: {known})")
        default = fields[name].default
        if isinstance(value, str) and isinstance(default, bool):
            low = value.strip().lower()
            if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(f"task option {key}={value!r}: expected true or false")
            value = low in ("1", "true", "yes", "on")
        elif isinstance(value, str) and isinstance(default, int):
            try:
                value = int(value)
            except ValueError as exc:
                raise ValueError(f"task option {key}={value!r}: expected an integer") from exc
        out[name] = value
    return out
