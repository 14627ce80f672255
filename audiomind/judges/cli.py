"""`audiomind judge NAME`: each judge alone from the shell, one command per registered `JudgeSpec`
(judges/spec.py). The audio slots are arguments (an optional one is `--NAME`), the judge's args fields are
options (or arguments where its spec's `cli.arguments` says so), then `--llm`, `--frontend` (for a judge that
has a front end), `--trace-dir`, `--timeout` (per model request; --timeout + JUDGE_SETUP_S is the judge's time
budget, as ask's --time-budget: the whole run, every model request and tool call within it; a server that never
answers or drips, or a hanging tool, is cut there, and a judge still busy JUDGE_GRACE_S later is left with its
trace written as stopped) and `--retries` (per model request), `--max-duration` (audio longer than this, default
audiomind.limits.DEFAULT_MAX_DURATION_S, is refused from its header before anything decodes it) and `--json`. `--json` prints the whole typed result; otherwise a short
verdict. Every run writes a trace (path printed). A judge registered later (a plugin, a test) is a command
too: the group builds the missing commands whenever it lists or looks one up."""

from __future__ import annotations

import enum
import inspect
import json
import typing
from pathlib import Path
from typing import Any

import typer
from annotated_types import Ge, Gt, Le, Lt
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from typer.core import TyperGroup

from audiomind.cli_common import FRONTEND_HELP as FE_HELP
from audiomind.cli_common import PLANNER_HELP as LLM_HELP
from audiomind.cli_common import console
from audiomind.cli_common import fail as _fail
from audiomind.cli_common import markup as escape  # paths.visible, then rich's markup escape
from audiomind.cli_common import quiet_libraries as _quiet
from audiomind.judges.spec import JudgeOptions, JudgeSpec, input_problem, loaded_judges
from audiomind.limits import DEFAULT_MAX_DURATION_S, check_clips

SHARED = {  # the JudgeOptions the command line offers: name -> (flag, help)
    "llm": ("--llm", LLM_HELP),
    "frontend": ("--frontend", FE_HELP),
    "trace_dir": ("--trace-dir", "where the judge trace is written"),
    "timeout_s": ("--timeout", ("seconds per model request; the whole judge may take this + 4 s (its time budget, "
                                "as ask's --time-budget: every model request and tool call shares it; a server that "
                                "never answers or drips, or a tool that hangs, is cut there, and the trace says so)")),
    "max_retries": ("--retries", "retries of a failed model request (429, 5xx, timeouts)"),
}
MAX_DURATION_HELP = ("refuse audio longer than this many seconds, from its header, before anything decodes it "
                     "(0: no limit)")


JUDGE_SETUP_S = 4.0
"""The judge's own set-up (loading its models, decoding its audio) on top of --timeout: the judge's time budget is
--timeout + this, so a first model request still gets its whole --timeout."""
JUDGE_GRACE_S = 3.0
"""How long past its time budget a judge still busy in a call that cannot be interrupted (a C extension, a
subprocess) is waited for before the command stops waiting: its trace is written as stopped (timeout) and the
command exits 3. So `judge ... --timeout N` ends within N + JUDGE_SETUP_S + JUDGE_GRACE_S seconds."""


def _within(seconds: float, fn: Any, *a: Any) -> Any:
    """`fn(*a)` in a worker thread (this context copied: the budget, the open judge sessions) that is waited for
    `seconds` + JUDGE_GRACE_S at most: a judge past that has the trace of what it did written as stopped
    (timeout), and the command ends (exit 3) instead of waiting for it. Ctrl-C writes it as cancelled (130)."""
    import contextvars
    import threading

    from audiomind.judges.base import judge_run, stop_reason

    sessions: list[Any] = []
    box: dict[str, Any] = {}
    done = threading.Event()
    ctx = contextvars.copy_context()

    def work() -> None:
        try:
            with judge_run(None, sessions):
                box["value"] = fn(*a)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting command
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=lambda: ctx.run(work), name="audiomind-judge", daemon=True).start()
    try:
        finished = done.wait(seconds + JUDGE_GRACE_S)
    except KeyboardInterrupt:
        status, reason, bound = stop_reason(KeyboardInterrupt(), seconds)
        paths = [p for p in (s.stop(reason, status=status, bound_hit=bound) for s in sessions) if p]
        _fail("interrupted: the judge's trace is written as stopped" + (f": {paths[0]}" if paths else ""), code=130)
    if not finished:
        status, reason, bound = stop_reason(None, seconds)
        paths = [p for p in (s.stop(reason, status=status, bound_hit=bound) for s in sessions) if p]
        _fail(f"the judge did not finish within its time budget of {seconds:g} s (+{JUDGE_GRACE_S:g} s to stop); "
              + (f"its trace is written as stopped: {paths[0]}" if paths else "no trace was written"), code=3)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _trace_of(exc: BaseException) -> str:
    path = getattr(exc, "audiomind_trace_path", None)
    return f" (trace: {path})" if path else ""


def _run(fn: Any, *a: Any, **k: Any) -> Any:
    from audiomind.audio import AudioError
    from audiomind.backends.base import BackendError

    try:
        return fn(*a, **k)
    except AudioError as exc:
        _fail(str(exc))
    except BackendError as exc:  # BudgetExhausted too: the --timeout ran out (the trace says so)
        _fail(f"model backend failed: {exc}{_trace_of(exc)}", code=3)
    except ValueError as exc:
        _fail(str(exc))
    except OSError as exc:  # --trace-dir full, read-only, unwritable, a name too long: one line, exit 4
        from audiomind.cli_report import EXIT_STORAGE, storage_line

        _fail(f"the judge's trace could not be written: {storage_line(exc)}", code=EXIT_STORAGE)


def _flag(spec: JudgeSpec, name: str) -> str:
    return name.upper() if name in spec.cli.arguments else "--" + name.replace("_", "-")


def _param(spec: JudgeSpec, name: str, field: FieldInfo) -> inspect.Parameter:
    """One args field as a typer argument or option: its description as help, its bounds as min/max, a
    Literal as a choice."""
    annotation: Any = field.annotation
    default: Any = ... if field.is_required() else field.get_default(call_default_factory=True)
    extra: dict[str, Any] = {}
    for m in field.metadata:
        if isinstance(m, Ge | Gt):
            extra["min"] = m.ge if isinstance(m, Ge) else m.gt
        elif isinstance(m, Le | Lt):
            extra["max"] = m.le if isinstance(m, Le) else m.lt
    if typing.get_origin(annotation) is typing.Literal:  # typer offers an Enum's values as the choices
        choice = {str(v): str(v) for v in typing.get_args(annotation)}
        annotation = enum.Enum(f"{name}_choice", choice, type=str)  # type: ignore[misc,no-redef]
        default = default if default is ... else annotation(str(default))
    if name in spec.cli.arguments:
        info: Any = typer.Argument(default, help=field.description, **extra)
    else:
        flag = _flag(spec, name)
        decls = [f"{flag}/--no-{flag[2:]}"] if annotation is bool else [flag]
        info = typer.Option(default, *decls, *([spec.cli.short[name]] if name in spec.cli.short else []),
                            help=field.description, **extra)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation)


def command_for(spec: JudgeSpec) -> Any:
    """The typer callback of one judge, its parameters derived from the spec."""
    params = [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, annotation=Path if s.required else Path | None,
                                default=typer.Argument(..., help=s.help) if s.required
                                else typer.Option(None, f"--{s.name}", help=s.help))
              for s in spec.audio]
    positional = [n for n in spec.args.model_fields if n in spec.cli.arguments]
    rest = [n for n in spec.args.model_fields if n not in spec.cli.arguments]
    params += [_param(spec, n, spec.args.model_fields[n]) for n in (*positional, *rest)]
    defaults = JudgeOptions()
    types = {"trace_dir": Path, "timeout_s": float, "max_retries": int}
    bounds: dict[str, dict[str, Any]] = {"timeout_s": {"min": 0.001}, "max_retries": {"min": 0}}
    for name in (n for n in SHARED if n in spec.options()):
        flag, help_text = SHARED[name]
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=types.get(name, str),
                                        default=typer.Option(getattr(defaults, name), flag, help=help_text,
                                                             **bounds.get(name, {}))))
    params.append(inspect.Parameter("max_duration", inspect.Parameter.KEYWORD_ONLY, annotation=float,
                                    default=typer.Option(DEFAULT_MAX_DURATION_S, "--max-duration", min=0,
                                                         metavar="SECONDS", help=MAX_DURATION_HELP)))
    params.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                    default=typer.Option(False, "--json", help="print the whole result as JSON")))

    def command(**kw: Any) -> None:
        _quiet()
        audio = {s.name: kw.pop(s.name) for s in spec.audio}
        as_json = kw.pop("as_json")
        max_duration = kw.pop("max_duration")
        shared = {k: kw.pop(k) for k in SHARED if k in kw}
        timeout = shared.get("timeout_s", JudgeOptions().timeout_s)
        budget = timeout + JUDGE_SETUP_S  # --timeout bounds the whole judge run too
        options = JudgeOptions(**shared, time_budget_s=budget)
        try:
            args = spec.args.model_validate({k: v.value if isinstance(v, enum.Enum) else v for k, v in kw.items()})
        except ValidationError as exc:
            _fail(input_problem(spec, exc, flag=lambda n: _flag(spec, n)))
        _run(check_clips, audio.values(), max_duration)  # the cap every command and route applies
        r = _run(_within, budget, spec.call, args, audio, options)
        render = spec.renderer()
        if as_json or render is None:
            print(json.dumps(r.model_dump(mode="json"), indent=2))
            return
        for line in render(r):
            console.print(line)
        console.print(f"[bold]Trace:[/] {getattr(r, 'trace_path', None)}")

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {}  # typer reads the types from the signature
    command.__name__ = command.__qualname__ = f"{spec.name.replace('-', '_')}_cmd"
    command.__doc__ = spec.summary
    return command


class JudgeGroup(TyperGroup):
    """`audiomind judge`: its commands are the registered judges, built when first listed or looked up."""

    def _sync(self) -> None:
        specs = {spec.name: spec for spec in loaded_judges()}  # a plugin judge that does not load is left out
        names = list(specs)
        for name in names:
            if name not in self.commands:
                info = typer.models.CommandInfo(name=name, callback=command_for(specs[name]))
                self.add_command(typer.main.get_command_from_info(
                    info, pretty_exceptions_short=judge_app.pretty_exceptions_short,
                    rich_markup_mode=judge_app.rich_markup_mode), name)
        for gone in [n for n in self.commands if n not in names]:  # a judge unregistered since
            del self.commands[gone]

    def list_commands(self, ctx: Any) -> list[str]:
        self._sync()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        self._sync()
        return super().get_command(ctx, cmd_name)


judge_app = typer.Typer(cls=JudgeGroup, help="Judges: audio-edit evaluation, dynamic rubric, AURA (and any "
                                              "registered judge).", no_args_is_help=True)


# ---- the built-in judges' short verdicts (their specs name these as `render`)

def edit_lines(r: Any) -> list[str]:
    lines = [f"[bold]Verdict:[/] {escape(r.verdict)}",
             (f"[bold]Heard:[/] difference: {escape(r.predicted_difference)} | commonality: "
              f"{escape(r.predicted_commonality)}"),
             (f"[bold]Expected:[/] difference: {escape(r.expectation.expected_difference)} | commonality: "
              f"{escape(r.expectation.expected_commonality)}"),
             f"[bold]Synthesis:[/] {escape(r.synthesis)}",
             "[bold]Suggestions:[/] " + escape(" ".join(r.suggestions))]
    if r.substitutes:
        lines.append("[dim]substitute metrics: " + escape("; ".join(f"{k}: {v}" for k, v in r.substitutes.items()))
                     + "[/]")
    return lines


def rubric_lines(r: Any) -> list[str]:
    lines = [f"[bold]{'Aligned' if r.aligned else 'Misaligned'}[/]: score {r.score:.3f} (threshold {r.threshold})"]
    lines += [f"  [{'green' if v.p_yes >= 0.5 else 'red'}]{v.p_yes:.2f}[/] {escape(v.question)} "
              f"[dim]({v.source}: {escape(v.explanation[:140])})[/]" for v in r.verdicts]
    lines += [f"  [dim]dropped: {escape(d.question)} ({escape(d.drop_reason or '')})[/]" for d in r.dropped]
    if r.holistic:
        lines.append(f"[bold]Holistic baseline:[/] {r.holistic.verdict} (p_yes {r.holistic.p_yes:.3f})")
    return lines


def aura_lines(r: Any) -> list[str]:
    return [f"[bold]AURA:[/] {r.score:.3f} (category {r.llm_category}/3 by {escape(r.llm_source)})",
            f"[bold]Why:[/] {escape(r.llm_reasoning)}",
            f"[bold]Hypothesis:[/] {escape(r.hypothesis)}; entailment {r.entailment.status}"
            + (f" ({escape(r.entailment.reason)})" if r.entailment.status == "skipped" else "")]
