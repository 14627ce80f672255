"""`audiomind bench ...`: run benchmarks at scale (resumable, concurrent, optionally on Ray), score, report.

    audiomind bench run --task TASK --source PATH --out RUN_DIR [--workers N --limit N --ray ADDR]
        any registered task (audiomind.bench.tasks): mmar, msu, synthetic, items (the default; --items FILE)
    audiomind bench mmar --meta MMAR-meta.jsonl --audio-dir DIR --out RUN_DIR [...]   = bench run --task mmar
    audiomind bench report RUN_DIR                                    report.md + PNG plots
    audiomind bench mmar-score PREDICTIONS.jsonl                      official-compatible MMAR scoring
    audiomind bench rubrics RUN_DIR [--judge SPEC]                    MMAR-Rubrics, official defaults

Re-running the same command resumes: committed items are skipped, a torn last line is re-run.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

bench_app = typer.Typer(
    help="Benchmarks at scale: MMAR, MSU-Bench, the synthetic benchmark and item lists through one resumable, "
         "concurrent batch runner; scores; reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

from audiomind.cli_common import AGENT_OPTIONS, OptionGroup, console, err, with_options  # noqa: E402
from audiomind.cli_common import fail as _fail  # noqa: E402
from audiomind.cli_common import quiet_libraries as _quiet  # noqa: E402
from audiomind.config import AgentConfig  # noqa: E402
from audiomind.paths import clip_text, visible  # noqa: E402


def parse_prices(price_in: float | None, price_out: float | None, price: list[str] | None) -> dict[str, Any] | None:
    """`--price-in/--price-out` price every model ("*"); `--price SPEC=IN,OUT[,CACHED[,AUDIO_IN]]` prices one
    backend spec (with or without its @URL). Backends on a provider's own endpoint are also priced by the
    shipped, dated table (audiomind/bench/data/prices.toml)."""
    from audiomind.bench.prices import Price, parse_price

    table: dict[str, Price] = {}
    if price_in is not None or price_out is not None:
        table["*"] = Price(input_per_m=price_in or 0.0, output_per_m=price_out or 0.0, source="--price-in/out")
    for entry in price or []:
        spec, p = parse_price(entry)
        table[spec] = p
    return table or None


def agent_factory(run_dir: Path, config: AgentConfig):
    """A picklable AudioMind factory (Ray ships it to workers): the run's AgentConfig, with derived audio
    going to RUN_DIR/artifacts."""
    from audiomind.api import AudioMind

    return functools.partial(AudioMind, config.with_trace_dir((run_dir / "artifacts").resolve()))


def _check_agent(make_agent) -> None:
    """Build one agent up front so a bad --planner/--frontend spec is one clear error, not N item errors."""
    from audiomind.backends.base import BackendError

    try:
        make_agent()
    except (ValueError, BackendError) as exc:
        _fail(str(exc))


def _summary_line(summary) -> None:
    st = ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())) or "nothing committed"
    acc = f"{100 * summary.accuracy:.2f}% of {summary.scored} scored" if summary.accuracy is not None else "not scored"
    if summary.partial:
        acc += f" [bold yellow](partial: {summary.errors} error{'s' * (summary.errors != 1)})[/]"
    if summary.unpriced:
        cost = ", cost unknown"
    elif summary.cost_usd:
        roles = ", ".join(f"{r} ${v:.4f}" for r, v in sorted(summary.cost_by_role.items()))
        cost = f", ${summary.cost_usd:.4f} ({roles})"
    else:
        cost = ""
    hits = f", {summary.cache_hits} model call(s) from the cache" if summary.cache_hits else ""
    retried = (f"; errored items ran again in {summary.error_retry_rounds} round(s)"
               if summary.error_retry_rounds else "")
    err.print(
        f"[bold]{summary.total}[/] items: {summary.already_done} already done, {summary.ran} run now "
        f"({summary.items_per_min:.1f} items/min, {summary.wall_time_s:.1f} s), {summary.remaining} remaining; {st}; "
        f"accuracy {acc}; tokens {summary.input_tokens:,} in / {summary.output_tokens:,} out{cost}{hits}{retried}"
    )
    if summary.unpriced:
        err.print(f"[bold yellow]warning:[/] no price for {', '.join(escape(b) for b in summary.unpriced)}: the "
                  "run's cost is unknown (give --price SPEC=IN,OUT; a key matches the spec with or without @URL)")


@dataclass(frozen=True)
class RunOptions:
    """How a benchmark run is driven (its agent is the AgentConfig beside it)."""

    workers: int
    limit: int | None
    ray: str | None
    price_in: float | None
    price_out: float | None
    price: list[str] | None
    retry: list[str] | None
    progress: bool
    strict: bool
    error_retries: int = 1
    dry_run: int | None = None


RUN_OPTIONS = OptionGroup(
    RunOptions,
    workers=(int, typer.Option(1, min=1, max=512, help="items answered concurrently (threads, or Ray actors)")),
    limit=(int | None, typer.Option(None, min=1, help="only the first N items")),
    ray=(str | None, typer.Option(None, "--ray", help="distribute over Ray, one actor per worker: 'local' starts "
                                  "Ray here; an existing cluster by its head 'HOST:6379', 'auto' (the cluster "
                                  "this machine is in, or RAY_ADDRESS) or Ray Client 'ray://HOST:10001'. Audio "
                                  "paths must exist on every node; an item whose node dies runs again elsewhere")),
    price_in=(float | None, typer.Option(None, "--price-in", min=0, help="USD per 1M input tokens, every model")),
    price_out=(float | None, typer.Option(None, "--price-out", min=0, help="USD per 1M output tokens, every model")),
    price=(list[str] | None, typer.Option(None, "--price", help="per-model price SPEC=IN,OUT (USD per 1M tokens); "
                                          "repeatable")),
    retry=(list[str] | None, typer.Option(None, "--retry", help="committed statuses to run again (error, failed, "
                                          "stopped, missing_audio); repeatable")),
    progress=(bool, typer.Option(True, "--progress/--no-progress", help="rich progress bar on stderr")),
    strict=(bool, typer.Option(False, "--strict", help="refuse the whole input file when any row is bad (default: "
                               "bad rows are recorded as errored items and the good rows run)")),
    error_retries=(int, typer.Option(1, "--error-retries", min=0, max=10, help="rounds, at the end of the run, "
                                     "that run again the items whose model calls failed (status error); they "
                                     "never count as wrong answers")),
    dry_run=(int | None, typer.Option(None, "--dry-run", min=1, max=50, metavar="N", help="estimate the whole "
                                      "run's tokens and cost from its first N items (answered for real into "
                                      "RUN_DIR/dry-run, through the model-call cache, so the real run reuses "
                                      "them), then stop")),
)
"""The run options every bench command shares; with AGENT_OPTIONS (cli_common) they are defined once."""
O_OUT = typer.Option(..., "--out", help="run directory (results.jsonl, traces/, ...); rerun to resume")
_AGENT = AgentConfig()  # placeholders the option groups replace
_RUN = RunOptions(1, None, None, None, None, None, None, True, False, 1, None)


EXIT_NO_AUDIO = 3
"""`bench run` / `bench mmar` exit code when every item of the run is missing_audio (nothing was answered)."""


def _fail_rows(exc: Exception) -> None:
    """A refused input file (--strict, RowsError): its header line, then each bad row on a line of its own
    (each kept to one line, control characters shown as escapes), and exit code 2."""
    from audiomind.bench.rows import RowsError
    from audiomind.cli_common import one_line

    if not isinstance(exc, RowsError):
        _fail(str(exc))
    head = str(exc).split("\n", 1)[0]
    lines = [f"[bold red]error:[/] {escape(one_line(head))}"]
    shown = exc.messages[:MAX_ROW_MESSAGES]
    lines += [f"  {escape(one_line(m))}" for m in shown]
    if len(exc.messages) > len(shown):
        lines.append(f"  … {len(exc.messages) - len(shown)} more")
    err.print("\n".join(lines), soft_wrap=True)
    raise typer.Exit(2)


MAX_ROW_MESSAGES = 20


def _report_bad_row(message: str) -> None:
    from audiomind.cli_common import cell

    err.print(f"[yellow]bad row[/] {cell(message)}")


def _bad_rows_note(items: list[Any]) -> None:
    n = sum(1 for it in items if getattr(it, "error", None))
    if n:
        err.print(f"[yellow]{n} row(s) not run[/]: recorded as errors in results.jsonl (--strict refuses such a file)")


def _config(config: AgentConfig, run: RunOptions, **extra: Any) -> dict[str, Any]:
    """What the run records about how it was made."""
    return {"mode": config.mode, "planner": config.planner, "frontend": config.frontend, "workers": run.workers,
            "max_steps": config.max_steps, "time_budget_s": config.time_budget_s, "window_s": config.window_s,
            "timeout_s": config.timeout_s, **extra}


@bench_app.command("mmar")
@with_options(config=AGENT_OPTIONS, run=RUN_OPTIONS)
def mmar(
    meta: Path = typer.Option(..., "--meta", help="MMAR-meta.jsonl"),
    audio_dir: Path = typer.Option(..., "--audio-dir", help="the MMAR root (holding audio/) or the audio folder itself"),
    out: Path = O_OUT,
    config: AgentConfig = _AGENT,  # --planner --frontend --tools-dir --max-steps ... (cli_common)
    run: RunOptions = _RUN,  # --workers --limit --ray --price* --retry --progress --strict
) -> None:
    """Run (or resume) MMAR: predictions.jsonl the official evaluation.py scores unchanged, scores.json, traces/.

    The same as `bench run --task mmar --meta ... --audio-dir ...`. Audio paths must stay inside --audio-dir;
    a bad meta row (or a refused path) is reported with its file and line and recorded as an errored item
    while the good rows run (--strict refuses the file instead)."""
    _run_task("mmar", {}, meta, audio_dir, out, config, run)


def _task_options(entries: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in entries or []:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--task-option {entry!r}: expected KEY=VALUE, e.g. pack=concat")
        out[key.strip()] = value.strip()
    return out


def _storage_errors_fail(fn):
    """A run directory that refuses writes (disk full, read-only, no permission, a name too long) ends the
    command with one line and exit code 4; what was committed stays, and the same command resumes."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            from audiomind.cli_report import EXIT_STORAGE, storage_line

            _fail(f"{storage_line(exc)}; committed items are kept: make room (or fix the folder) and "
                  "rerun the same command to resume", code=EXIT_STORAGE)

    return wrapper


@_storage_errors_fail
def _run_task(task_name: str, options: dict[str, str], source: Path, audio_dir: Path | None, out: Path,
              config: AgentConfig, run: RunOptions, as_json: bool = False, batch: bool = False) -> None:
    """Every `bench run --task ...` (and `bench mmar`): read the task's input row by row, run it through the
    batch runner, write its official files, print its breakdown. `batch`: through the provider's batch API
    (audiomind.bench.batch), refused unless the run can go that way."""
    from audiomind.bench.tasks import make_task, run_task

    if batch:
        from audiomind.bench.batch import check_batch, run_task_batch

        try:
            check_batch(config, run.ray)
        except ValueError as exc:
            _fail(str(exc))
        run_task = run_task_batch  # the same call and results, through the batch API

    _quiet()
    try:
        task = make_task(task_name, options)
    except ValueError as exc:
        _fail(str(exc))
    try:  # a path too long (or a part of it over 255 bytes) is this input's problem, not a storage failure
        from audiomind.paths import check_path_length, clip_text

        check_path_length(source)
        found = source.exists()
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _fail(f"cannot read the {task.source_help} at {clip_text(str(source), 200)}: {why}")
    if not found:
        _fail(f"no {task.source_help} at {source}")
    if audio_dir is not None and not audio_dir.is_dir():
        err.print(f"[yellow]warning:[/] audio dir {escape(str(audio_dir))} does not exist: every item will be missing_audio")
    try:
        prices = parse_prices(run.price_in, run.price_out, run.price)
        loaded = task.load_items(source, audio_dir=audio_dir, work_dir=out / "inputs", limit=run.limit,
                                 strict=run.strict)  # refused here under --strict
    except ValueError as exc:
        _fail_rows(exc)
    for message in loaded.errors:
        _report_bad_row(message)
    if "model_cache" not in config.model_fields_set:  # benchmark runs cache model calls unless told otherwise
        config = config.model_copy(update={"model_cache": "use"})
    if run.dry_run is not None:
        _dry_run(task, loaded, out, config, run, prices, as_json)
        return
    make_agent = agent_factory(out, config)
    _check_agent(make_agent)
    try:
        summary, outputs = run_task(task, loaded, out, make_agent, workers=run.workers, ray_address=run.ray,
                                    progress=run.progress, prices=prices, retry_statuses=run.retry or (),
                                    config=_config(config, run), error_retries=run.error_retries)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: committed items are kept; rerun the same command to resume")
        raise typer.Exit(130) from None
    except (ValueError, RuntimeError) as exc:
        _fail(str(exc))
    breakdown = task.report(out, loaded)
    if breakdown is not None and breakdown.table is not None and not as_json:
        console.print(breakdown.table)
    _summary_line(summary)
    _bad_rows_note(loaded.items)
    lines = [f"{label}: {path}" for label, path in outputs.items()] or [f"results: {out / 'results.jsonl'}"]
    traces = out / "traces"
    has_traces = traces.is_dir() and any(traces.iterdir())  # none when no item ran (e.g. no audio at all)
    if has_traces:
        lines.append(f"traces: {traces}")
    if as_json:  # {summary: RunSummary, outputs: {label: path}, traces: path | null}
        from audiomind.cli_common import print_json

        print_json({"summary": summary.model_dump(mode="json"),
                    "outputs": {label: str(path) for label, path in outputs.items()}
                    or {"results": str(out / "results.jsonl")},
                    "traces": str(traces) if has_traces else None})
    else:
        console.print("\n".join(lines))
    if summary.total and summary.statuses.get("missing_audio", 0) == summary.total:
        _fail(f"every one of the {summary.total} item(s) is missing_audio: no audio was found (check --audio-dir); "
              "nothing was answered", code=EXIT_NO_AUDIO)


def _dry_run(task: Any, loaded: Any, out: Path, config: AgentConfig, run: RunOptions, prices: Any,
             as_json: bool) -> None:
    """`--dry-run N`: answer the first N items for real (into RUN_DIR/dry-run, through the model-call cache,
    so the real run reuses their replies), then print the whole run's tokens and cost, extrapolated."""
    import dataclasses

    from audiomind.bench.estimate import estimate_run
    from audiomind.bench.tasks import run_task

    n = run.dry_run or 3
    sample = dataclasses.replace(loaded, items=loaded.items[:n])
    probe_dir = out / "dry-run"
    make_agent = agent_factory(probe_dir, config)
    _check_agent(make_agent)
    run_task(task, sample, probe_dir, make_agent, workers=min(run.workers, n), ray_address=None,
                          progress=run.progress, prices=prices, config=_config(config, run, dry_run=n),
                          error_retries=run.error_retries)
    est = estimate_run(probe_dir, total_items=len(loaded.items), prices=prices)
    if as_json:
        from audiomind.cli_common import print_json

        print_json(est.model_dump(mode="json"))
    else:
        console.print(est.table())
        err.print(est.method)
        if est.unpriced:
            err.print(f"[bold yellow]warning:[/] no price for {', '.join(escape(b) for b in est.unpriced)}: cost "
                      "unknown (give --price SPEC=IN,OUT)")


@bench_app.command("run")
@with_options(config=AGENT_OPTIONS, run=RUN_OPTIONS)
def run_cmd(
    source: Path = typer.Option(..., "--source", "--items", "--meta",
                                help="the task's input: ITEMS.jsonl (items), MMAR-meta.jsonl (mmar), a generated "
                                     "split set (synthetic), the MSU-Bench root (msu)"),
    out: Path = O_OUT,
    task: str = typer.Option("items", "--task", help="registered task: mmar, msu, synthetic, items (any item list)"),
    audio_dir: Path | None = typer.Option(None, "--audio-dir", help="base of relative audio paths, and the folder "
                                             "they must stay inside (default: the input file's folder)"),
    benchmark: str | None = typer.Option(None, help="benchmark name recorded with each result (--task items; "
                                            "default custom)"),
    task_option: list[str] | None = typer.Option(None, "--task-option", help="KEY=VALUE task option, repeatable "
                                                    "(msu: pack=concat, keep_reverse=true; synthetic: kinds=a,b)"),
    config: AgentConfig = _AGENT,  # --planner --frontend --tools-dir --max-steps ... (cli_common)
    run: RunOptions = _RUN,  # --workers --limit --ray --price* --retry --progress --strict
    as_json: bool = typer.Option(False, "--json", help="print {summary, outputs, traces} as JSON (summary: the "
                                                      "runner's RunSummary)"),
    batch: bool = typer.Option(False, "--batch", help="--mode direct with an openai: or gemini: front end: send "
                               "every item's one answer call through the provider's batch API (half price; "
                               "RUN_DIR/batch.json keeps the batch ids, so the same command resumes polling)"),
) -> None:
    """Run (or resume) any registered task: results.jsonl (scored by the task), traces/, summary.json, plus the
    task's own files (mmar: predictions.jsonl + scores.json; msu: msu/; synthetic: predictions.jsonl +
    evaluation.json).

    Audio paths must stay inside the task's root (--audio-dir, default the input file's folder); a bad row is
    reported with its file and line and recorded as an errored item while the good rows run (--strict
    refuses the file instead)."""
    try:
        options = _task_options(task_option)
    except ValueError as exc:
        _fail(str(exc))
    if benchmark is not None:
        if task != "items":
            _fail("--benchmark names the results of an item list (--task items); other tasks name their own")
        options.setdefault("benchmark", benchmark)
    _run_task(task, options, source, audio_dir, out, config, run, as_json=as_json, batch=batch)


@bench_app.command("report")
def report(
    run_dir: Path = typer.Argument(..., help="a run directory (holding results.jsonl)"),
    no_plots: bool = typer.Option(False, "--no-plots", help="tables only"),
    compare: Path | None = typer.Option(None, "--compare", help="another run of the same items (e.g. the "
                                           "direct baseline, `bench run --mode direct`): set side by side, "
                                           "overall and per category"),
    as_json: bool = typer.Option(False, "--json", help="print {report, report_path, comparison} as JSON (report: "
                                                      "the report.json written beside report.md)"),
) -> None:
    """Write RUN_DIR/report.md (+ report.json, plots/*.png): accuracy by group, tool use vs accuracy, latency;
    with --compare, the two runs side by side."""
    from audiomind.bench.report import build_report, compare_runs, write_report
    from audiomind.bench.runner import RESULTS_FILE

    if not (run_dir / RESULTS_FILE).exists():
        _fail(f"no {RESULTS_FILE} in {run_dir}: not a run directory (or nothing committed yet)")
    if compare is not None and not (compare / RESULTS_FILE).exists():
        _fail(f"--compare {compare}: no {RESULTS_FILE} there (not a run directory)")
    try:  # results.jsonl, --compare's, run.json, scores.json: the bounded reader (a FIFO or /dev/zero is refused)
        path = write_report(run_dir, plots=not no_plots, compare=compare)
        rep = build_report(run_dir)
        comparison = compare_runs(run_dir, compare) if compare is not None else None
    except ValueError as exc:
        _fail(str(exc))
    except OSError as exc:  # report.md or a plot refused (read-only, full): one line, exit 4
        from audiomind.cli_report import EXIT_STORAGE, storage_line

        _fail(f"the report could not be written: {storage_line(exc)}", code=EXIT_STORAGE)
    if as_json:
        from audiomind.cli_common import print_json

        print_json({"report": rep.model_dump(mode="json"), "report_path": str(path),
                    "comparison": comparison.model_dump(mode="json") if comparison else None})
        return
    t = Table("measure", "value", title=escape(visible(f"report ({run_dir})")))
    o = rep.overall
    t.add_row("items / scored / correct", f"{o.n} / {o.scored} / {o.correct}")
    if rep.skipped_lines:
        t.add_row("results.jsonl lines left out", f"{rep.skipped_lines} (unreadable or not result rows)")
    t.add_row("accuracy %", "-" if o.accuracy is None else f"{o.accuracy:.2f}")
    b = rep.behaviour
    t.add_row("mean planner tool calls", "-" if b.mean_tool_calls is None else f"{b.mean_tool_calls:.2f}")
    t.add_row("zero-tool questions %", "-" if b.zero_tool_share is None else f"{b.zero_tool_share:.2f}")
    t.add_row("re-listen rate %", "-" if b.relisten_rate is None else f"{b.relisten_rate:.2f}")
    t.add_row("latency p50 / p90 s", f"{rep.latency.p50_s} / {rep.latency.p90_s}")
    ts = rep.task_scores
    if ts is not None:
        t.add_row("official accuracy %", "-" if ts.official_accuracy is None else f"{ts.official_accuracy:.2f}")
        if ts.strict_total is not None:
            t.add_row("strict accuracy %", "-" if ts.strict_accuracy is None else f"{ts.strict_accuracy:.2f}")
        if ts.order_swapped_count is not None:
            t.add_row("order-swapped items", str(ts.order_swapped_count))
        t.add_row("meta sha256", escape(visible(ts.meta_sha256 or "not recorded")))
    console.print(t)
    if comparison is not None:
        console.print(_comparison_table(comparison))
    console.print(f"report: {escape(visible(str(path)))}")


def _comparison_table(c) -> Table:
    """Two runs side by side: accuracy overall and per category (the other groups are in report.md)."""

    def pct(a) -> str:
        return "-" if a.accuracy is None else f"{a.accuracy:.2f} ({a.correct}/{a.scored})"

    t = Table("group", "value", escape(visible(c.a_label)), escape(visible(c.b_label)), "a - b", title="side by side")
    rows = [("overall", "all", c.overall)]
    for key in ("category", "task", "modality"):
        rows += [(key, name, sb) for name, sb in c.groups.get(key, {}).items()]
    for group, name, sb in rows:
        t.add_row(group, escape(visible(name)), pct(sb.a), pct(sb.b), "-" if sb.delta is None else f"{sb.delta:+.2f}")
    p = c.paired
    t.caption = (f"scored in both: {sum(p.values())}; only a right {p['only_a']}, only b right {p['only_b']}, "
                 f"both right {p['both_right']}, both wrong {p['both_wrong']}")
    return t


@bench_app.command("mmar-score")
def mmar_score_cmd(
    predictions: Path = typer.Argument(..., help="MMAR rows with answer_prediction (JSONL or JSON list)"),
    out: Path | None = typer.Option(None, "-o", help="also write the scores as JSON here"),
    meta: Path | None = typer.Option(None, "--meta", help="the MMAR-meta.jsonl the predictions answer: its "
                                        "sha256 is recorded, and the strict score counts every meta row (a row "
                                        "the predictions leave out is wrong)"),
    skip_malformed: bool = typer.Option(False, "--skip-malformed", help="leave out (and list) the rows the official "
                                        "script could not score instead of refusing the file"),
) -> None:
    """Score any MMAR predictions file exactly as the official evaluation.py does (token string match; each
    percentage (correct / total) * 100 to 2 places), with the strict score beside it (a missing prediction is
    wrong; only the exact option is right) and the order-swapped items listed. A row the official script would
    crash on (a blank line, a prediction that is not a string, no answer, an unknown modality or category) is
    named with its line and what is wrong, and the file is refused (--skip-malformed: those rows left out)."""
    from audiomind.bench.rows import RowsError
    from audiomind.bench.tasks import mmar as mm
    from audiomind.fsutil import InputFileError, atomic_write_text

    # a FIFO, a device (/dev/zero) or a file over the input cap is refused by the bounded reader (fsutil) with
    # what it is; only a name that is not there at all is said to be missing here
    if not predictions.exists() and not predictions.is_symlink():
        _fail(f"no predictions file at {predictions}")
    if meta is not None and not meta.exists() and not meta.is_symlink():
        _fail(f"no meta file at {meta}")
    try:
        scores = mm.score_file(predictions, meta=meta, skip_malformed=skip_malformed)
    except RowsError as exc:  # names each bad line (also a bad meta file)
        _fail_rows(exc)
    except InputFileError as exc:  # the file as a whole refused (not a regular file, too big)
        _fail(str(exc))
    except (ValueError, KeyError, TypeError) as exc:
        _fail(f"{predictions}: not MMAR prediction rows ({type(exc).__name__}: {clip_text(exc, 2000)})")
    for message in scores.malformed:
        _report_bad_row(f"{message} (not scored)")
    console.print(mm.scores_table(scores, title=escape(visible(f"MMAR accuracy ({predictions.name})"))))
    if out:  # written beside and renamed over: a FIFO at `out` is replaced, never opened (it would block)
        atomic_write_text(out, scores.model_dump_json(indent=2, by_alias=True) + "\n")


@bench_app.command("rubrics")
def rubrics_cmd(
    run_dir: Path = typer.Argument(..., help="an MMAR run directory (its predictions.jsonl), or a predictions file "
                                   "(MMAR meta rows with answer_prediction and thinking_prediction)"),
    judge: str | None = typer.Option(None, "--judge", help="judge backend spec: openai:MODEL[@BASE_URL] (any "
                                        "OpenAI-compatible server) or gemini:MODEL (default: the official "
                                        "openai:gpt-4o-2024-11-20)"),
    out: Path | None = typer.Option(None, "--out", help="output folder (default RUN_DIR/rubrics, or "
                                       "PREDICTIONS.rubrics/); rerun to resume"),
    meta: Path | None = typer.Option(None, "--meta", help="MMAR-meta.jsonl: fills the fields a prediction row "
                                        "lacks (rubric, thinking, cue, ...) by id, as the official --meta does"),
    protocol: str = typer.Option("official", "--protocol", help="official (MMAR's evaluation_rubrics.py: its "
                                 "prompt's content, temperature 0, seed 42, rows without a prediction skipped) or "
                                 "project (the earlier project protocol: own prompt, temperature 0.7, such rows "
                                 "scored 0); the options below override either"),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, max=2.0,
                                                help="judge temperature (official 0; project 0.7)"),
    seed: int | None = typer.Option(None, "--seed", help="seed sent with each request (official 42)"),
    runs: int | None = typer.Option(None, "--runs", min=1, max=50, help="raters per correct item (5)"),
    keep: int | None = typer.Option(None, "--keep", min=1, max=50, help="middle runs averaged (3)"),
    missing: str | None = typer.Option(None, "--missing", help="rows without a prediction: skip (official: in "
                                          "no total) or zero (scored 0 and kept)"),
    workers: int = typer.Option(4, "--workers", min=1, max=256, help="items judged concurrently"),
    timeout_s: float = typer.Option(120.0, "--timeout", min=1.0, help="seconds per judge request"),
) -> None:
    """MMAR-Rubrics: grade the reasoning behind each right MMAR answer with an LLM judge, by default exactly as
    MMAR's own code/evaluation_rubrics.py does (judge gpt-4o-2024-11-20, temperature 0, seed 42, five raters,
    the middle three averaged, a wrong answer 0 without a judge call, rows without a prediction skipped).
    Writes OUT/evaluated.jsonl (one line per judged item; resumable), OUT/settings.json, OUT/summary.json."""
    from audiomind.backends.base import BackendError
    from audiomind.bench import rubrics as rb
    from audiomind.bench.tasks.mmar import PREDICTIONS_FILE, load_meta
    from audiomind.fsutil import atomic_write_text

    preds = run_dir / PREDICTIONS_FILE if run_dir.is_dir() else run_dir
    if not preds.is_file():
        _fail(f"no {PREDICTIONS_FILE} at {run_dir} (run `audiomind bench mmar` first, or name a predictions file)")
    out_dir = out if out is not None else (run_dir / "rubrics" if run_dir.is_dir() else
                                           preds.with_name(preds.stem + ".rubrics"))
    if protocol not in ("official", "project"):
        _fail(f"--protocol must be official or project, not {protocol!r}")
    base = rb.RubricSettings.official() if protocol == "official" else rb.RubricSettings.project()
    changes = {k: v for k, v in {"judge": judge, "temperature": temperature, "seed": seed, "runs": runs,
                                 "keep": keep, "missing": missing}.items() if v is not None}
    try:
        settings = base.model_copy(update=changes).check()
        rows = load_meta(preds)
        if meta is not None:
            by_id = {str(m.get("id")): m for m in load_meta(meta)}
            rows = [{**by_id.get(str(r.get("id")), {}), **r} for r in rows]  # the row's own fields win
    except ValueError as exc:
        _fail_rows(exc)
    clash = rb.settings_clash(out_dir, settings)
    if clash:
        _fail(clash)
    try:
        rjudge = rb.make_settings_judge(settings, timeout_s=timeout_s)
    except (ValueError, BackendError) as exc:
        _fail(str(exc))
    from audiomind.fsutil import InputFileError

    try:
        summary = rb.run_rubrics(rows, out_dir / rb.RESULTS_FILE, rjudge, workers=workers, missing=settings.missing)
    except InputFileError as exc:  # OUT/evaluated.jsonl is a FIFO, a device or over the input cap
        _fail(str(exc))
    summary["settings"] = settings.model_dump()
    atomic_write_text(out_dir / rb.SUMMARY_FILE, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    console.print(_rubrics_table(summary, title=f"MMAR-Rubrics ({preds.name}, judge {settings.judge})"))
    notes = [f"judged {summary['overall']['n']}", f"skipped {summary['skipped']} (no prediction or a required "
             "field missing; in no total)" if settings.missing == "skip" else "rows without a prediction scored 0",
             f"judge failures {summary['judge_failures']} (rerun to retry)"]
    err.print("; ".join(notes))
    console.print(f"rubrics: {out_dir / rb.RESULTS_FILE}\nsummary: {out_dir / rb.SUMMARY_FILE}")
    if summary["judge_failures"]:
        raise typer.Exit(1)


def _rubrics_table(summary: dict[str, Any], title: str) -> Table:
    """Score and accuracy overall and per modality / category / sub-category, as the official scorer prints
    them ((sum / n) * 100 to 2 places)."""
    t = Table("group", "value", "score", "accuracy %", "n", title=escape(visible(title)))

    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f}"

    def row(group: str, name: str, d: dict[str, Any]) -> None:
        t.add_row(group, escape(visible(name)), fmt(d["score"]), fmt(d["acc"]), str(d["n"]))

    row("overall", "all", summary["overall"])
    for group in ("modality", "category", "sub-category"):
        for name, d in summary[group].items():
            row(group, name, d)
    return t


if __name__ == "__main__":  # `python -m audiomind.bench.cli ...` works without the top-level CLI
    bench_app()
