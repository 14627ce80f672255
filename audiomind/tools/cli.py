"""`audiomind mcp`: serve the tool inventory over MCP (stdio by default, streamable HTTP with --http PORT)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from audiomind.cli_common import err, fail, quiet_libraries, tool_registry
from audiomind.config import AgentConfig


def register(app: typer.Typer) -> None:
    """Add the `mcp` command to the top-level app."""
    defaults = AgentConfig()

    @app.command("mcp")
    def mcp_command(
        root: list[Path] | None = typer.Option(
            None, "--root", help="folder whose audio files clients may name (repeatable; default: the current folder)"),
        http: int | None = typer.Option(
            None, "--http", min=1, max=65535, metavar="PORT",
            help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio"),
        tools_dir: list[Path] | None = typer.Option(None, help="extra folder of tool manifests (repeatable)"),
        runs_dir: Path | None = typer.Option(
            None, help="where each call's run folder (trace.json, derived audio) goes (default: a new temp folder)"),
        no_cache: bool = typer.Option(False, "--no-cache", help="do not reuse cached tool results"),
        max_duration: float = typer.Option(
            10800.0, "--max-duration", min=0, metavar="SECONDS",
            help="refuse audio longer than this, from its header, before any tool reads it (0: no limit)"),
        planner: str = typer.Option("rules", help="planner spec of the `ask` tool (the agent as a tool)"),
        frontend: str = typer.Option("cascade", help="front-end spec of the `ask` tool"),
        time_budget: float = typer.Option(
            defaults.time_budget_s, "--time-budget", min=1,
            help="seconds per question of the `ask` tool before its loop must answer"),
        timeout: float = typer.Option(defaults.timeout_s, "--timeout", min=0.001,
                                      help="seconds per model request of the `ask` tool"),
    ) -> None:
        """Serve the usable tools over the Model Context Protocol: typed inputs and outputs, each tool's
        evidence boundary in its description, derived audio as resources with provenance."""
        quiet_libraries()
        try:
            import mcp  # noqa: F401
        except ImportError:
            fail("the `mcp` package is not installed (pip install 'mcp>=2.3')")
        from audiomind.tools.mcp_server import ToolServer, serve_http, serve_stdio

        agents: list = []  # the `ask` tool's agent, built at its first call (its models load then)

        def ask_agent(path: str, question: str, choices: list[str] | None):
            if not agents:
                from audiomind.api import AudioMind

                agents.append(AudioMind(config.with_trace_dir(core.runs_dir / "ask")))
            return agents[0].ask(path, question, choices)

        try:
            config = AgentConfig(planner=planner, frontend=frontend, use_cache=not no_cache,
                                 tools_dirs=tuple(str(d) for d in tools_dir or []), max_duration_s=max_duration or None,
                                 time_budget_s=time_budget, timeout_s=timeout)
            core = ToolServer(list(root or [Path.cwd()]), registry=tool_registry(tools_dir),
                              runs_dir=runs_dir, use_cache=not no_cache, max_duration_s=max_duration or None,
                              ask_agent=ask_agent)
        except ValueError as exc:
            fail(str(exc))
        roots = escape(", ".join(str(r) for r in core.roots))
        if any(r == Path(r.anchor) or r == Path.home() for r in core.roots):
            err.print(f"[yellow]warning:[/] clients may read any audio file under {roots}; pass --root with the "
                      "folder of the audio they should see", soft_wrap=True)
        runs = escape(str(core.runs_dir))
        if http is None:
            err.print(f"[dim]audiomind MCP server on stdio; audio from {roots}; runs in {runs}[/]", soft_wrap=True)
            serve_stdio(core)
        else:
            err.print(f"audiomind MCP server at http://127.0.0.1:{http}/mcp (streamable HTTP); audio from {roots}; "
                      f"runs in {runs}", soft_wrap=True)
            serve_http(core, http)
