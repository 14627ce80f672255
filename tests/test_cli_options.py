"""The agent options are defined once (cli_common.AGENT_OPTIONS) and read into one AgentConfig by every
command that builds an agent (`ask`, `bench run`, `bench mmar`)."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from audiomind.cli_common import AGENT_OPTIONS, with_options
from audiomind.config import AgentConfig


def _app(seen: list) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_options(config=AGENT_OPTIONS)
    def cmd(name: str = typer.Argument(...), config: AgentConfig = AgentConfig(),  # noqa: B008
            last: int = typer.Option(0)) -> None:
        seen.append((name, config, last))

    return app


def test_options_become_one_config():
    seen: list = []
    r = CliRunner().invoke(_app(seen), ["x", "--planner", "ollama:m", "--frontend", "gemini:g", "--tools-dir", "a",
                                        "--tools-dir", "b", "--max-steps", "3", "--time-budget", "9", "--window", "5",
                                        "--timeout", "7", "--retries", "2", "--no-cache", "--last", "4"])
    assert r.exit_code == 0, r.output
    (name, config, last), = seen
    assert (name, last) == ("x", 4)
    assert config == AgentConfig(planner="ollama:m", frontend="gemini:g", tools_dirs=("a", "b"), max_steps=3,
                                 time_budget_s=9, window_s=5, timeout_s=7, max_retries=2, use_cache=False)


def test_defaults_are_the_configs_and_help_keeps_the_order():
    seen: list = []
    app = _app(seen)
    assert CliRunner().invoke(app, ["x"]).exit_code == 0
    assert seen[0][1] == AgentConfig()
    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    flags = ["--planner", "--frontend", "--tools-dir", "--max-steps", "--time-budget", "--window", "--timeout",
             "--retries", "--no-cache", "--last"]
    assert [out.index(f) for f in flags] == sorted(out.index(f) for f in flags)


def test_a_refused_value_is_one_error_line(tmp_path: Path):
    r = CliRunner().invoke(_app([]), ["x", "--max-steps", "0"])
    assert r.exit_code == 2 and "max_steps" in r.output and "Traceback" not in r.output
