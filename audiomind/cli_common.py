"""What every command group shares: consoles, the one-line error exit, quiet model loaders, spec help, and
the agent options (`--planner`, `--frontend`, limits, timeouts, cache) defined once and read into one
`AgentConfig` by every command that builds an agent."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from pydantic import BaseModel, Field, ValidationError
from rich.console import Console
from rich.markup import escape

from audiomind.config import AgentConfig

console = Console()
err = Console(stderr=True)

PLANNER_HELP = "rules (offline default) | openai:MODEL[@BASE_URL] | gemini:MODEL | ollama:MODEL[@URL] | llamacpp:/path.gguf"
FRONTEND_HELP = "cascade (offline default) | openai:MODEL[@BASE_URL] (e.g. vLLM Qwen2.5-Omni) | gemini:MODEL"


def one_line(text: object) -> str:
    """`text` with control characters shown as escapes ('\\n', '\\x1b'): a message that names a hostile path
    or echoes an input stays one line on the terminal and cannot inject escape sequences (`paths.visible`,
    the one escape every command uses, in its one-line form)."""
    from audiomind.paths import visible

    return visible(text, one_line=True)


def markup(text: object) -> str:
    """Untrusted text (a model's answer, a trace, a file name) as console markup, line breaks kept: `paths.visible`
    (escape sequences shown, not obeyed), then rich's markup escape (`[bold]` shown as written)."""
    from audiomind.paths import visible

    return escape(visible(text))


def cell(text: Any) -> str:
    """A table cell from untrusted text (a manifest, a path, an error): rich markup shown as written and control
    characters as escapes, so nothing in it can style or drive the terminal."""
    return escape(one_line(str(text)))


MAX_ERROR_CHARS = 1000


def error_text(message: object) -> str:
    """An error message as its one line shows it: control characters as escapes, clipped to MAX_ERROR_CHARS."""
    from audiomind.paths import clip_text

    return one_line(clip_text(str(message), MAX_ERROR_CHARS))


def fail(message: str, code: int = 2) -> NoReturn:
    """A user-fixable error: one red line on stderr, a non-zero exit, never a traceback. The line is kept to
    about MAX_ERROR_CHARS (its middle left out, both ends kept): a message echoing an 80,000-character path
    or a whole row is still one readable line."""
    err.print(f"[bold red]error:[/] {escape(error_text(message))}", soft_wrap=True)  # one line, however long
    raise typer.Exit(code)


def tool_registry(tools_dirs: list[Path] | None) -> Any:
    """The tool registry with the extra manifest folders of `--tools-dir`, or one `fail` line (exit 2) when
    a manifest there is not one (a FIFO, /dev/zero, bad TOML, a missing entry). The commands that load a registry
    themselves (`tools list|show`, `trace audit`, `mcp`) load it here; `ask` and `bench` load theirs through
    AudioMind, whose ManifestError their own error handling reports."""
    from audiomind.tools.manifest import ManifestError, ToolRegistry

    try:
        return ToolRegistry.load(list(tools_dirs or []))
    except ManifestError as exc:
        fail(f"--tools-dir: {exc}")


def print_table(table: Any, out: Console | None = None) -> None:
    """Print a rich table; when the output is not a terminal (a pipe, a file), at its full natural width, so no
    cell is cut to '…' or folded at the 80 columns a non-terminal console assumes."""
    out = out or console
    if out.is_terminal:
        out.print(table)
        return
    from rich.measure import Measurement

    width = Measurement.get(out, out.options.update(width=1_000_000), table).maximum
    before = out._width
    out.width = max(width, 20)
    try:
        out.print(table, crop=False)
    finally:
        out._width = before


class StatusRow(BaseModel):
    """One row of `doctor --json`: a backend, model, tool, ... and whether it is usable here (and why)."""

    kind: str = Field(description="system | backend | model | lexicon | tool")
    name: str
    usable: bool
    status: str = Field(description="what the table prints: yes | no | fallback")
    detail: str = Field(description="where it is, or why it is not usable")


class DoctorReport(BaseModel):
    """`audiomind doctor --json`."""

    version: str
    rows: list[StatusRow]


class ToolRow(BaseModel):
    """One tool of `audiomind tools list --json`."""

    name: str
    category: str
    usable: bool
    does: str = Field(description="what it does (its function line)")
    why_not: str | None = Field(None, description="why it is not usable here (None when usable)")


class ToolsReport(BaseModel):
    tools: list[ToolRow]


class ModelRow(BaseModel):
    """One embedded model of `audiomind models list --json`."""

    name: str
    carrier: list[str]
    purpose: str
    usable: bool
    where: str | None = Field(None, description="its file or folder (None when not usable)")
    why_not: str | None = Field(None, description="why it is not usable (None when usable)")


class ModelsReport(BaseModel):
    models: list[ModelRow]


def print_json(payload: Any) -> None:
    """Machine-readable output: a pydantic model (or plain data) as indented JSON on stdout, no markup."""
    import json

    data = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
    print(json.dumps(data, indent=2, ensure_ascii=False))


def quiet_libraries() -> None:
    """Model loaders print progress bars; a CLI answer should not be buried under them (the third-party
    variables of `audiomind.config.apply_process_env`, quiet ones included)."""
    from audiomind.config import apply_process_env

    apply_process_env(quiet=True)


class OptionGroup:
    """Typer options defined once and shared by several commands. A command declares one parameter
    named like the group (`@with_options(config=AGENT_OPTIONS)` ... `config: AgentConfig`); typer sees
    the group's options in its place, and the command receives what `build` makes of them."""

    def __init__(self, build: Callable[..., Any], **options: tuple[Any, Any]):
        self.build = build
        self.options = options  # name -> (annotation, typer.Option(...))

    def parameters(self) -> list[inspect.Parameter]:
        return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation)
                for name, (annotation, option) in self.options.items()]


def with_options(**groups: OptionGroup) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Replace each parameter named like a group by the group's options (in its place, so `--help` keeps
    the command's order), and hand the command the built value."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn, eval_str=True)
        missing = set(groups) - set(sig.parameters)
        if missing:
            raise TypeError(f"{fn.__name__} has no parameter for the option group(s) {sorted(missing)}")
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            params += groups[p.name].parameters() if p.name in groups else [p.replace(kind=p.KEYWORD_ONLY)]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            for name, group in groups.items():
                kwargs[name] = group.build(**{k: kwargs.pop(k) for k in group.options})
            return fn(**kwargs)

        command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return decorate


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    """KEY=VALUE options (repeatable) as a dict; the key is everything before the last '='."""
    out: dict[str, str] = {}
    for v in values or []:
        key, sep, value = v.rpartition("=")
        if not sep or not key.strip():
            fail(f"{what} {v!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _option_value(text: str) -> Any:
    """A --frontend-option value: JSON when it parses (numbers, true/false, null), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def agent_config(planner: str, frontend: str, tools_dir: list[Path] | None, max_steps: int, time_budget: float,
                 window: float, timeout: float, retries: int, no_cache: bool,
                 max_duration: float | None = None, mode: str = "agent", reader: str = "rules",
                 retry_after_cap: float = 120.0, rpm: float | None = None, tpm: float | None = None,
                 rate_limit: list[str] | None = None, model_cache: str | None = None,
                 model_cache_dir: Path | None = None, frontend_option: list[str] | None = None) -> AgentConfig:
    """The agent options as one AgentConfig (trace_dir stays the default: each command sets its own); a
    value the config refuses is one clear error line. `model_cache` None keeps the config's default (each
    command sets its own: off for `ask`, use for `bench`)."""
    more: dict[str, Any] = {}
    if model_cache is not None:
        more["model_cache"] = model_cache
    try:
        return AgentConfig(planner=planner, frontend=frontend, mode=mode, tools_dirs=tuple(tools_dir or ()),
                           max_steps=max_steps, time_budget_s=time_budget, window_s=window, timeout_s=timeout,
                           max_retries=retries, use_cache=not no_cache, max_duration_s=max_duration, reader=reader,
                           retry_after_cap_s=retry_after_cap, rpm=rpm, tpm=tpm,
                           rate_limits=_pairs(rate_limit, "--rate-limit"),
                           model_cache_dir=str(model_cache_dir) if model_cache_dir else None,
                           frontend_options={k: _option_value(v)
                                             for k, v in _pairs(frontend_option, "--frontend-option").items()},
                           **more)
    except ValidationError as exc:
        fail(str(exc))
        raise  # unreachable: fail() exits


_DEFAULT = AgentConfig()
AGENT_OPTIONS = OptionGroup(
    agent_config,
    planner=(str, typer.Option(_DEFAULT.planner, help=PLANNER_HELP)),
    frontend=(str, typer.Option(_DEFAULT.frontend, help=FRONTEND_HELP)),
    tools_dir=(list[Path] | None, typer.Option(None, "--tools-dir",
                                                  help="extra folder of tool manifests (repeatable)")),
    max_steps=(int, typer.Option(_DEFAULT.max_steps, min=0, help="evidence-loop decisions at most")),
    time_budget=(float, typer.Option(_DEFAULT.time_budget_s,
                                     help="seconds per question before the loop must answer")),
    window=(float, typer.Option(_DEFAULT.window_s,
                                help="seconds per window for front ends that truncate long audio")),
    timeout=(float, typer.Option(_DEFAULT.timeout_s, help="seconds per model request")),
    retries=(int, typer.Option(_DEFAULT.max_retries, min=0, help="retries of a failed model request (429, 5xx, "
                               "timeouts): a request is sent at most 1 + this many times")),
    no_cache=(bool, typer.Option(not _DEFAULT.use_cache, "--no-cache", help="do not reuse cached tool results")),
    max_duration=(float | None, typer.Option(None, "--max-duration", min=0.001, metavar="SECONDS",
                                             help="refuse audio longer than this (an item error in a benchmark)")),
    mode=(str, typer.Option(_DEFAULT.mode, "--mode", help="agent (the planner's evidence loop) | direct (the "
                            "baseline: the front end answers alone, one answer call on the original audio, no "
                            "planner, no tools)")),
    reader=(str, typer.Option(_DEFAULT.reader, "--reader", metavar="SPEC",
                              help="question reader: rules (phrase tables) | llm:PLANNER_SPEC (a text LLM fills "
                              "the question's typed reading, e.g. llm:llamacpp:PATH.gguf)")),
    retry_after_cap=(float, typer.Option(_DEFAULT.retry_after_cap_s, "--retry-after-cap", min=0.001,
                                         metavar="SECONDS", help="honour a server's Retry-After up to this long")),
    rpm=(float | None, typer.Option(None, "--rpm", min=0.001, help="client-side requests per minute, per model "
                                    "backend (all workers together)")),
    tpm=(float | None, typer.Option(None, "--tpm", min=0.001, help="client-side input tokens per minute, per "
                                    "model backend")),
    rate_limit=(list[str] | None, typer.Option(None, "--rate-limit", metavar="SPEC=RPM[/TPM]",
                                               help="a backend's own limit (repeatable), e.g. "
                                               "openai:gpt-4o-mini=500/200000; SPEC with or without @URL")),
    model_cache=(str | None, typer.Option(None, "--model-cache", metavar="use|refresh|off",
                                          help="the model-call cache: use (a repeated request sends nothing), "
                                          "refresh (ask again, keep the new reply), off; default: off for ask, "
                                          "use for bench")),
    model_cache_dir=(Path | None, typer.Option(None, "--model-cache-dir", help="model-call cache folder "
                                               "(default $AUDIOMIND_MODEL_CACHE or ~/.cache/audiomind/model-calls)")),
    frontend_option=(list[str] | None, typer.Option(None, "--frontend-option", metavar="KEY=VALUE",
                                                    help="a model front end's setting (repeatable; JSON values): "
                                                    "temperature=null, max_tokens=512, seed=1, "
                                                    "reasoning_effort=low, thinking_budget=0, max_audio_parts=1, "
                                                    "audio_parts=concat, stream=true, logprobs=false")),
)
"""`--planner --frontend --tools-dir --max-steps --time-budget --window --timeout --retries --no-cache --mode
--reader --retry-after-cap --rpm --tpm --rate-limit --model-cache --model-cache-dir --frontend-option`,
read into an AgentConfig (the defaults are AgentConfig's)."""
