"""Benchmarks as tasks: one protocol (`Benchmark`, see base.py), a registry by name, one way to run them.

    mmar       MMAR-meta.jsonl + audio folder   predictions.jsonl (official format), scores.json
    msu        MSU-Bench root (task files)      msu/summary.json, summary_by_*.csv, scored task files
    synthetic  one generated split set          predictions.jsonl (MMAR format), evaluation.json
    items      any item list (JSON lines)       (results.jsonl only)
    edit-eval     edit pairs (JSON lines)       judgments.jsonl (the edit judge's figures per item)
    rubric-judge  (audio, instruction) rows     judgments.jsonl (rubric score, holistic p_yes per item)
    aura          (audio, question, response,   judgments.jsonl (AURA score per item)
                  reference) rows

The three judge tasks (judging.py) run a judge instead of an agent on each item: a task with an
`agent_factory(run_dir, default)` hook supplies the runner's agents itself.

`audiomind bench run --task NAME --source PATH --out RUN_DIR` runs any of them through the resumable batch
runner (`run_task` here); every run folder holds results.jsonl (one line per item), traces/, run.json and
summary.json, plus the task's own files.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from audiomind.bench.prices import PriceTable
from audiomind.bench.runner import RunSummary, run_batch
from audiomind.bench.tasks.base import BaseTask, Benchmark, TaskItems, TaskReport, parse_options
from audiomind.registry import Registry

__all__ = ["REGISTRY", "BaseTask", "Benchmark", "TaskItems", "TaskReport", "make_task", "run_task", "task_class",
           "task_names"]

REGISTRY: Registry[type[BaseTask]] = Registry("task", group="tasks")
"""Task name -> task class, registered as 'module:Class' (imported on first use, so naming a task loads only
that one). A plugin adds its own (`registries.tasks.register(NAME, "pkg.module:Class")`, see
audiomind/registry.py)."""
for _name, _target in {
    "mmar": "audiomind.bench.tasks.mmar:MMARTask",
    "msu": "audiomind.bench.tasks.msu:MSUTask",
    "synthetic": "audiomind.bench.tasks.synthetic:SyntheticTask",
    "items": "audiomind.bench.tasks.item_list:ItemListTask",
    "edit-eval": "audiomind.bench.tasks.judging:EditEvalTask",
    "rubric-judge": "audiomind.bench.tasks.judging:RubricJudgeTask",
    "aura": "audiomind.bench.tasks.judging:AuraTask",
}.items():
    REGISTRY.register(_name, _target)


def task_names() -> list[str]:
    return REGISTRY.names()


def task_class(name: str) -> type[BaseTask]:
    """The task class registered as `name` (ValueError naming the known tasks when there is none)."""
    try:
        cls = REGISTRY.get(name)
    except (ImportError, AttributeError) as exc:  # a plugin's lazy target that does not import
        raise ValueError(f"benchmark task {name!r} ({REGISTRY.origin(name)}) cannot be imported: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, BaseTask)):
        raise ValueError(f"benchmark task {name!r} ({REGISTRY.origin(name)}) is not a BaseTask subclass")  # noqa: TRY004 - one error type for a bad task name
    return cls


def make_task(name: str, options: Mapping[str, Any] | None = None) -> BaseTask:
    """A task by name, with options (values, or strings as given on the command line: 'pack' -> 'concat')."""
    cls = task_class(name)
    return cls(**parse_options(cls, options or {}))


def run_task(
    task: Benchmark,
    loaded: TaskItems,
    run_dir: str | Path,
    make_agent: Callable[[], Any],
    *,
    workers: int = 1,
    ray_address: str | None = None,
    progress: bool = True,
    prices: PriceTable | None = None,
    retry_statuses: Collection[str] = (),
    config: dict[str, Any] | None = None,
    error_retries: int = 1,
) -> tuple[RunSummary, dict[str, Path]]:
    """Run (or resume) a task's items through the batch runner, scored by the task, then write its official
    files. After Ctrl-C the files are written from what was committed, then KeyboardInterrupt propagates.
    `config` (the agent's settings) is recorded in run.json with the task's own input settings."""
    run_dir = Path(run_dir)
    cfg = {**task.run_config(loaded), **(config or {}), "task": task.name}
    if hasattr(task, "agent_factory"):  # a task that answers with its own runner (the judges), not the agent
        make_agent = task.agent_factory(run_dir, make_agent)
    try:
        summary = run_batch(loaded.items, run_dir, make_agent, workers=workers, ray_address=ray_address,
                            progress=progress, prices=prices, score=task.score, retry_statuses=tuple(retry_statuses),
                            config=cfg, error_retries=error_retries)
    except KeyboardInterrupt:
        task.write_outputs(run_dir, loaded)
        raise
    return summary, task.write_outputs(run_dir, loaded)
