"""A tiny audiomind plugin: `register(registries)` is its `audiomind.plugins` entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _planner(spec: Any, options: Any) -> Any:
    """`--planner demo-rules`: the built-in rule planner under the plugin's own spec kind."""
    from audiomind.backends.planners.rules import RulesPlanner

    return RulesPlanner(options.registry)


def register(registries: Any) -> None:
    from audiomind.backends.registry import BackendKind

    registries.tools.register("demo", Path(__file__).resolve().parent / "tools")
    registries.backends.register("demo-rules", BackendKind(
        planner=_planner, not_frontend="demo-rules is a planner, not an audio front end"))
    registries.tasks.register("demo-loudness", "audiomind_demo_plugin.task:LoudnessTask")
    registries.judges.register("demo-level", "audiomind_demo_plugin.judge:SPEC")  # its tool comes with it
