"""The agent options are defined once (cli_common.AGENT_OPTIONS) and read into one AgentConfig by every
command that builds an agent (`ask`, `bench run`, `bench mmar`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from audiomind import __version__
from audiomind.cli import app as real_app
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


# ---------------------------------------------------------------- the real CLI: version, -h, --json, piped tables

def _cli(*args: str) -> subprocess.CompletedProcess:
    """The installed CLI as a subprocess with stdout a pipe (not a terminal), as a script sees it."""
    return subprocess.run([sys.executable, "-m", "audiomind", *args], capture_output=True, text=True, timeout=120, check=False)


def test_version_and_short_help_everywhere():
    r = CliRunner().invoke(real_app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"audiomind {__version__}"
    for args in (["-h"], ["ask", "-h"], ["trace", "-h"], ["trace", "show", "-h"], ["tools", "list", "-h"],
                 ["bench", "run", "-h"], ["judge", "edit", "-h"], ["mcp", "-h"], ["doctor", "-h"]):
        r = CliRunner().invoke(real_app, args, env={"COLUMNS": "200"}, prog_name="audiomind")
        assert r.exit_code == 0, (args, r.output)
        assert "Usage: audiomind" in r.output and "--help" in r.output, args


def test_tools_and_models_list_as_json_have_the_documented_shape():
    from audiomind.cli_common import ModelsReport, ToolsReport
    from audiomind.embedded import models
    from audiomind.tools.manifest import ToolRegistry

    r = CliRunner().invoke(real_app, ["tools", "list", "--json"])
    assert r.exit_code == 0, r.output
    tools = ToolsReport.model_validate(json.loads(r.output)).tools
    assert {t.name for t in tools} == {m.name for m in ToolRegistry.load().all()}
    for t in tools:
        assert (t.why_not is None) == t.usable and t.does
    r = CliRunner().invoke(real_app, ["models", "list", "--json"])
    assert r.exit_code == 0, r.output
    rows = ModelsReport.model_validate(json.loads(r.output)).models
    assert [m.name for m in rows] == list(models.CATALOG)
    for m in rows:
        assert (m.where is not None) == m.usable and (m.why_not is None) == m.usable
        assert "PosixPath" not in (m.where or "") and not (m.where or "").startswith("(")


def test_a_piped_table_keeps_every_cell_whole():
    from audiomind.tools.manifest import ToolRegistry

    r = _cli("tools", "list")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout and "..." not in r.stdout.replace("...)", "")
    flat = " ".join(r.stdout.split())
    for m in ToolRegistry.load().available():
        assert " ".join(m.function.split()) in flat, m.name  # each tool's whole description, on one row


def test_ask_progress_is_shown_on_a_terminal_only():
    import io

    from rich.console import Console

    from audiomind import synth
    from audiomind.cli_report import TerminalProgress, progress_line
    from tests.backends.conftest import artifact_for, make_state

    state = make_state([artifact_for(synth.beeps(2, Path(__import__("tempfile").mkdtemp()) / "b.wav"))])
    line = progress_line(state.model_dump())
    assert line == "step 1/6: 1 observation(s), 1 tool call(s), 0 decision(s)"
    assert progress_line(state) == line  # the graph streams dicts; a state object reads the same

    tty = io.StringIO()
    with TerminalProgress(Console(file=tty, force_terminal=True, width=120), "ask") as p:
        assert p.enabled
        p.update(state.model_dump())
        p._status._live.refresh()
    assert "ask: step 1/6: 1 observation(s)" in tty.getvalue()

    pipe = io.StringIO()
    with TerminalProgress(Console(file=pipe), "ask") as p:
        assert not p.enabled
        p.update(state.model_dump())
    assert pipe.getvalue() == ""


def test_bench_report_json_and_the_tool_calls_plot_counts_front_end_calls(tmp_path):
    """On the default stack the cascade makes ~8 tool calls per question while the planner may make none: the
    report's tool-call bins over all calls say so (the planner-only bins put every question at 0)."""
    from audiomind.bench.cli import bench_app
    from audiomind.bench.items import ItemResult

    rows = [(0, 8, True), (0, 8, False), (0, 7, True), (2, 8, True), (0, 0, False)]  # (planner, front end, correct)
    (tmp_path / "results.jsonl").write_text("".join(ItemResult(
        id=f"q{i}", status="answered", prediction="x", tool_calls=p, frontend_tool_calls=f, correct=ok,
        wall_time_s=1.0, benchmark="custom").model_dump_json() + "\n" for i, (p, f, ok) in enumerate(rows)))
    r = CliRunner().invoke(bench_app, ["report", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["report_path"].endswith("report.md") and out["comparison"] is None
    b = out["report"]["behaviour"]
    assert {k: v["n"] for k, v in b["by_tool_calls"].items() if v["n"]} == {"0": 4, "2-3": 1}
    assert {k: v["n"] for k, v in b["by_all_tool_calls"].items() if v["n"]} == {"0": 1, "5-8": 3, "9-12": 1}
    assert b["by_all_tool_calls"]["5-8"]["accuracy"] == pytest.approx(66.67)
    assert (tmp_path / "plots" / "tool_calls_vs_accuracy.png").read_bytes()[:4] == b"\x89PNG"
    assert "all tool calls (front end included)" in (tmp_path / "report.md").read_text()


def test_bench_run_json_prints_the_run_summary(tmp_path):
    from audiomind.bench.cli import bench_app

    (tmp_path / "items.jsonl").write_text('{"id": "q1", "audio": "nope.wav", "question": "How many beeps?", '
                                          '"choices": ["1", "2"], "answer": "2"}\n')
    r = CliRunner().invoke(bench_app, ["run", "--task", "items", "--source", str(tmp_path / "items.jsonl"),
                                       "--out", str(tmp_path / "run"), "--json"])
    assert r.exit_code == 3, r.output  # every item missing_audio: the run says so after its JSON
    out = json.loads(r.stdout)
    assert out["summary"]["statuses"] == {"missing_audio": 1} and out["summary"]["total"] == 1
    assert out["outputs"] == {"results": str(tmp_path / "run" / "results.jsonl")} and out["traces"] is None
