"""The auditing commands of `audiomind trace`: show, validate, audit, stats, diff, replay, html, export.

Each command is a plain function (`<name>_cmd`, listed in COMMANDS); `register(trace_app)` adds them to
the CLI's existing `trace` group (and replaces its `validate` with this one, whose messages name the
offending item and value and which accepts folders recursively).
Exit codes are fit for CI: 0 clean, 1 findings / invalid / different, 2 nothing to read or bad usage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

console = Console()
err = Console(stderr=True)

if TYPE_CHECKING:
    from audiomind.state import EvidenceState

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def _shown(text: object) -> str:
    """Untrusted text (from a trace, a file name) as console markup: `paths.visible` (escape sequences shown,
    not obeyed) then rich's markup escape."""
    from audiomind.paths import visible

    return escape(visible(text))


def _fail(message: str, code: int = 2) -> NoReturn:
    from audiomind.cli_common import error_text

    err.print(f"[bold red]error:[/] {escape(error_text(message))}", soft_wrap=True)
    raise typer.Exit(code)


def _path_problem(p: Path, *, folder_ok: bool = True) -> str | None:
    """Why a path given on the command line cannot be read as traces: missing, a symlink loop, or a FIFO or
    device (reading it would block or never end); None when it is a regular file (or a folder)."""
    import errno
    import os
    import stat

    from audiomind.paths import _kind

    try:
        mode = os.stat(p).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{p}: a symlink loop (it never resolves to a file)"
        return f"no such file or folder: {p}"
    if stat.S_ISREG(mode) or (folder_ok and stat.S_ISDIR(mode)):
        return None
    return f"{p}: {_kind(mode)}, not a trace file" + (" or folder" if folder_ok else "")


def _files(paths: list[Path]) -> list[Path]:
    from audiomind.audit.audit import trace_files

    out: list[Path] = []
    for p in paths:
        problem = _path_problem(p)
        if problem:
            _fail(problem)
        found = trace_files(p)
        if not found:
            _fail(f"no trace files (*.json) at {p}")
        out += found
    return out


def _read_trace(path: Path, *, hint: bool = False) -> EvidenceState:
    """The trace at `path`, or exit 2 with one clear line (and, with `hint`, the command that says more)."""
    from audiomind.audit.timeline import read_trace_file

    problem = _path_problem(path, folder_ok=False)
    if problem:
        _fail(problem if "no such file" not in problem else f"no trace file at {path}")
    try:
        return read_trace_file(path)
    except Exception as exc:  # noqa: BLE001 - one clear line
        _fail(f"{path} is not a readable trace: {str(exc).splitlines()[0][:300]}"
              + (f" (run `audiomind trace validate {path}`)" if hint else ""))


def validation_messages(path: Path) -> list[str]:
    """JSON Schema problems as 'where (item id): message [value]' lines; [] means valid. The file is read by
    the bounded reader every command uses (fsutil: a regular file under a size cap, bounded JSON)."""
    from audiomind.audit.audit import schema_problems
    from audiomind.audit.timeline import MAX_TRACE_BYTES
    from audiomind.fsutil import InputFileError, loads_json, read_input_text

    try:
        data = loads_json(read_input_text(path, MAX_TRACE_BYTES))
    except InputFileError as exc:
        return [f"(file): {exc}"]
    return schema_problems(data, owners=True)


def validate_cmd(
    paths: list[Path] = typer.Argument(..., help="trace files or folders (searched recursively)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable result"),
) -> None:
    """Validate trace file(s) against the JSON Schema; exit 1 if any is invalid, 2 if none found."""
    files = _files(paths)
    results = {str(f): validation_messages(f) for f in files}
    bad = sum(1 for v in results.values() if v)
    if as_json:
        print(json.dumps({"valid": len(files) - bad, "invalid": bad, "files": results}, indent=2))
    else:
        for f, problems in results.items():
            if problems:
                err.print(f"[red]invalid[/] {_shown(f)}")
                for p in problems[:20]:
                    err.print(f"  {_shown(p)}")
                if len(problems) > 20:
                    err.print(f"  … {len(problems) - 20} more")
            else:
                console.print(f"[green]valid[/] {_shown(f)}")
        if len(files) > 1:
            console.print(f"{len(files) - bad} valid, {bad} invalid")
    raise typer.Exit(1 if bad else 0)


def show_cmd(
    path: Path = typer.Argument(..., help="a trace file"),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="full prompts, texts and every evidence item"),
) -> None:
    """A readable timeline of one run: nodes, decisions and why, tool calls, re-listens, evidence, answer."""
    from audiomind.audit.show import render

    render(_read_trace(path, hint=True), console, path, verbose=verbose)


def audit_cmd(
    paths: list[Path] = typer.Argument(..., help="trace files or folders (searched recursively)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable findings"),
    fail_on: str = typer.Option("error", help="exit 1 when a finding at/above this exists: info|warning|error|never"),
    no_files: bool = typer.Option(False, "--no-files", help="skip checking artifact files on disk"),
    tools_dir: list[Path] | None = typer.Option(None, help="extra folder of tool manifests (repeatable)"),
) -> None:
    """Find unsupported or out-of-boundary claims, failed calls, format failures, missing/changed audio."""
    from audiomind.audit.audit import RULES, audit_paths, audits_json, exit_code
    from audiomind.cli_common import tool_registry

    if fail_on not in ("info", "warning", "error", "never"):
        _fail(f"--fail-on must be info, warning, error or never (got {fail_on!r})")
    files = _files(paths)
    registry = tool_registry(tools_dir)  # a manifest that is not one (a FIFO, /dev/zero, bad TOML): one line
    audits = audit_paths(files, registry=registry, check_files=not no_files)
    if as_json:
        print(json.dumps(audits_json(audits), indent=2))
    else:
        for a in audits:
            title = f"{a.file}" + (f" — {a.question}" if a.question else "")
            if not a.findings:
                console.print(f"[green]clean[/] {_shown(title)}")
                continue
            console.print(f"[bold]{_shown(title)}[/]")
            for f in sorted(a.findings, key=lambda f: -f.severity.rank):
                style = SEVERITY_STYLE[f.severity.value]
                console.print(f"  [{style}]{f.severity.value:7s}[/] {f.rule} [dim]{_shown(f.path)}[/]: "
                              f"{_shown(f.message)}")
        summary = audits_json(audits)["summary"]
        console.print(
            f"{summary['traces']} trace(s), {summary['with_findings']} with findings: "
            + ", ".join(f"{v} {k}" for k, v in summary["by_severity"].items())
        )
        if summary["by_rule"]:
            console.print("[dim]" + "; ".join(f"{k} {v} ({RULES.get(k, '')})" for k, v in summary["by_rule"].items())
                          + "[/]")
    raise typer.Exit(exit_code(audits, fail_on))


def stats_cmd(
    paths: list[Path] = typer.Argument(..., help="trace files or folders (searched recursively)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable table"),
    calls: str = typer.Option("planner", help="which tool calls the accuracy bins count: planner | all"),
) -> None:
    """Behaviour over many traces: calls per question, tools, re-listen rate, failures, time per node,
    and accuracy by number of tool calls (0, 1, 2-3, 4-5, 6+) where ground truth is present."""
    from audiomind.audit.stats import aggregate, load_traces, render

    if calls not in ("planner", "all"):
        _fail(f"--calls must be planner or all (got {calls!r})")
    files = _files(paths)
    traces, bad = load_traces(files)
    if not traces:
        _fail(f"none of the {len(files)} file(s) is a readable trace ({bad[0][0]}: {bad[0][1]})")
    result = aggregate(traces, calls=calls)  # type: ignore[arg-type]
    result["unreadable"] = [{"file": f, "why": w} for f, w in bad]
    if as_json:
        print(json.dumps(result, indent=2))
    else:
        render(result, console)
        for f, why in bad:
            err.print(f"[yellow]skipped[/] {_shown(f)}: {_shown(why)}")


def diff_cmd(
    a: Path = typer.Argument(..., help="first trace"),
    b: Path = typer.Argument(..., help="second trace"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable comparison"),
) -> None:
    """Where two runs of the same question diverge: first differing decision / tool call / evidence / answer.
    Exit 0 when identical, 1 when they differ."""
    from audiomind.audit.diff import diff_states, render

    report = diff_states(_read_trace(a), _read_trace(b), str(a), str(b))
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        render(report, console)
    raise typer.Exit(0 if report.identical else 1)


def replay_cmd(
    path: Path = typer.Argument(..., help="the recorded trace"),
    planner: str = typer.Option("replay", help="replay (the recorded decisions) or any planner spec, e.g. rules"),
    frontend: str = typer.Option("replay", help="replay (the recorded observations/answers) or any front-end spec"),
    trace_dir: Path | None = typer.Option(None, help="where the replay's trace goes (default: <trace dir>/replays)"),
    no_cache: bool = typer.Option(False, "--no-cache", help="re-run planner tool calls instead of using cached results"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable report"),
    allow_dir: list[Path] | None = typer.Option(
        None, "--allow-dir", help="also read the trace's audio from this folder (as `trace html`) (repeatable)"),
) -> None:
    """Re-run a trace's question and audio with recorded (or new) model outputs and report whether the
    answer and decisions match the recording. Exit 0 when they match, 1 when not.

    The audio is read only as `trace html` reads it: inside the trace's run folder (or an --allow-dir), or an
    original clip elsewhere that decodes as audio and has the sha256 the trace recorded. Exit 4 when the
    replay's trace cannot be written."""
    import os

    from audiomind.audio import AudioError
    from audiomind.audit.diff import DiffReport, render
    from audiomind.audit.replay import replay
    from audiomind.backends.base import BackendError
    from audiomind.cli_report import EXIT_STORAGE, storage_line
    from audiomind.config import AgentConfig

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    problem = _path_problem(path, folder_ok=False)
    if problem:
        _fail(problem if "no such file" not in problem else f"no trace file at {path}")
    try:
        config = AgentConfig(planner=planner, frontend=frontend, use_cache=not no_cache,
                             trace_dir=trace_dir or path.parent / "replays")
        report, _ = replay(path, config, allow=list(allow_dir or []))
    except (BackendError, AudioError, ValueError) as exc:
        _fail(str(exc), code=3 if isinstance(exc, BackendError) else 2)
    except OSError as exc:  # the replay's trace folder refused a write: one line, exit 4 (as `ask`)
        _fail(f"the replay could not be written: {storage_line(exc)}", code=EXIT_STORAGE)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        render(DiffReport.model_validate(report.diff), console)
        verdict = "[green]reproduced[/]" if report.answer_match and report.decisions_match else "[red]differs[/]"
        console.print(f"{verdict}: answer {_shown(repr(report.answer_recorded))} → "
                      f"{_shown(repr(report.answer_replayed))} ({'same' if report.answer_match else 'different'}); "
                      f"decisions {'same' if report.decisions_match else 'different'}; "
                      f"replay trace {_shown(str(report.replayed))}")
    raise typer.Exit(0 if report.answer_match and report.decisions_match else 1)


def html_cmd(
    paths: list[Path] = typer.Argument(..., help="trace files or folders (searched recursively)"),
    out: Path = typer.Option(..., "-o", "--out", help="output folder (pages, audio, images, index.html)"),
    embed: bool = typer.Option(False, "--embed", help="embed audio and images as data URIs (one file per page)"),
    no_spectrograms: bool = typer.Option(False, "--no-spectrograms", help="skip the spectrogram images"),
    no_audit: bool = typer.Option(False, "--no-audit", help="do not run the audit rules into the pages"),
    allow_dir: list[Path] | None = typer.Option(
        None, "--allow-dir", help="also trust this folder like the trace's run folder: its files need only match "
        "the trace's sha256 (elsewhere a file must also decode as audio) (repeatable)"),
) -> None:
    """A static, self-contained viewer: one page per trace (timeline, audio players, spectrograms, tool
    calls, evidence linked to its source, the answer) and an index.html. No network needed to view it.

    Audio whose sha256 matches the trace is copied or embedded when it lies inside the trace's run folder
    (or an --allow-dir), or, anywhere else, when it is a regular file that decodes as audio; any other path
    a trace names is shown as unavailable, with the reason. Exit 4 when the output folder refuses a write."""
    from audiomind.audit.html import render_paths
    from audiomind.cli_report import EXIT_STORAGE, storage_line

    files = _files(paths)
    try:
        pages, index = render_paths(files, out, embed=embed, spectrograms=not no_spectrograms, audit=not no_audit,
                                    allow=list(allow_dir or []))
    except OSError as exc:  # -o full, read-only, unwritable, under a file: one line, exit 4 (as `ask`)
        _fail(f"the viewer could not be written: {storage_line(exc)}", code=EXIT_STORAGE)
    if not pages:
        _fail("none of the files is a readable trace (see the index for why)", code=1)
    for p in pages:
        console.print(f"wrote {_shown(p)}")
    console.print(f"[bold]index:[/] {_shown(index)}")


def export_cmd(
    paths: list[Path] = typer.Argument(..., help="trace files or folders (searched recursively)"),
    otlp: str = typer.Option(..., "--otlp", metavar="URL", help="OTLP/HTTP collector: http://localhost:4318 "
                             "(OTel collector, Jaeger), http://localhost:6006 (Phoenix); /v1/traces is added"),
    include_content: bool = typer.Option(False, "--include-content", help="also send the question, prompts, "
                                         "answers, transcripts and tool arguments/outputs (default: ids, names, "
                                         "numbers, statuses and hashes only)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable report"),
) -> None:
    """Send traces to an OpenTelemetry collector over OTLP/HTTP as GenAI spans (invoke_agent, a span per
    graph node, execute_tool, chat; OpenInference span kinds; judges' results as evaluation events), with
    the recorded times. Exit 1 when the collector cannot be reached or refuses them."""
    from audiomind.audit.otel import ExportError, export_states, load_states, otlp_traces_url

    try:
        otlp_traces_url(otlp)
    except ValueError as exc:
        _fail(str(exc))
    files = _files(paths)
    states, skipped = load_states(files)
    for f, why in skipped:
        err.print(f"[yellow]skipped[/] {_shown(f)}: {_shown(why)}")
    if not states:
        _fail(f"none of the {len(files)} file(s) is a readable trace ({skipped[0][0]}: {skipped[0][1]})")
    try:
        report = export_states(states, otlp, include_content=include_content)
    except ExportError as exc:
        _fail(str(exc), code=1)
    if as_json:
        print(json.dumps({"endpoint": report.endpoint, "spans": report.spans, "traces": report.traces,
                          "skipped": [{"file": f, "why": w} for f, w in skipped]}, indent=2))
        return
    console.print(f"exported {len(report.traces)} trace(s), {report.spans} span(s) to {_shown(report.endpoint)}"
                  + ("" if include_content else " [dim](no content: add --include-content for it)[/]"))
    for t in report.traces:
        console.print(f"  {_shown(t['run_id'])} -> trace id {t['trace_id']}")


COMMANDS: list[tuple[str, Callable[..., None]]] = [
    ("validate", validate_cmd),
    ("show", show_cmd),
    ("audit", audit_cmd),
    ("stats", stats_cmd),
    ("diff", diff_cmd),
    ("replay", replay_cmd),
    ("html", html_cmd),
    ("export", export_cmd),
]


def register(trace_app: typer.Typer) -> None:
    """Add the auditing commands to the `trace` group (replacing its simpler `validate`)."""
    trace_app.registered_commands[:] = [
        c for c in trace_app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) not in ("validate", "trace_validate")
    ]
    trace_app.info.help = ("Trace files: schema, validation, audit, statistics, diff, replay, an HTML viewer and "
                           "OpenTelemetry export.")
    for name, command in COMMANDS:
        trace_app.command(name)(command)
