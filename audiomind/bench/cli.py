"""`audiomind bench ...`: run benchmarks at scale (resumable, concurrent, optionally on Ray), score, report.

    audiomind bench mmar --meta MMAR-meta.jsonl --audio-dir DIR --out RUN_DIR [--workers N --limit N --ray ADDR]
    audiomind bench run --items ITEMS.jsonl --out RUN_DIR [...]      any item list (BenchItem JSON lines)
    audiomind bench report RUN_DIR                                    report.md + PNG plots
    audiomind bench mmar-score PREDICTIONS.jsonl                      official-compatible MMAR scoring

Re-running the same command resumes: committed items are skipped, a torn last line is re-run.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

bench_app = typer.Typer(
    help="Benchmarks at scale: MMAR and item lists through a resumable, concurrent batch runner; scores; reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

from audiomind.cli_common import FRONTEND_HELP, PLANNER_HELP, console, err  # noqa: E402
from audiomind.cli_common import fail as _fail  # noqa: E402
from audiomind.cli_common import quiet_libraries as _quiet  # noqa: E402
from audiomind.paths import clip_text  # noqa: E402


def parse_prices(price_in: float | None, price_out: float | None, price: list[str] | None) -> dict[str, Any] | None:
    """`--price-in/--price-out` price every model ("*"); `--price SPEC=IN,OUT` prices one backend spec."""
    from audiomind.bench.runner import Price

    table: dict[str, Price] = {}
    if price_in is not None or price_out is not None:
        table["*"] = Price(input_per_m=price_in or 0.0, output_per_m=price_out or 0.0)
    for entry in price or []:
        spec, sep, vals = entry.rpartition("=")
        parts = vals.split(",")
        if not sep or not spec or len(parts) != 2:
            raise ValueError(f"--price {entry!r}: expected SPEC=IN,OUT (USD per 1M tokens), e.g. openai:gpt-4o-mini=0.15,0.6")
        try:
            table[spec] = Price(input_per_m=float(parts[0]), output_per_m=float(parts[1]))
        except ValueError as exc:
            raise ValueError(f"--price {entry!r}: {exc}") from exc
    return table or None


def agent_factory(run_dir: Path, planner: str, frontend: str, tools_dir: list[Path] | None, max_steps: int,
                  time_budget: float, window: float, timeout: float, retries: int, no_cache: bool):
    """A picklable AudioMind factory (Ray ships it to workers); derived audio goes to RUN_DIR/artifacts."""
    from audiomind.api import AudioMind

    return functools.partial(
        AudioMind, planner=planner, frontend=frontend, tools_dirs=[str(p) for p in tools_dir or []],
        trace_dir=str((run_dir / "artifacts").resolve()), max_steps=max_steps, time_budget_s=time_budget,
        window_s=window, timeout_s=timeout, max_retries=retries, use_cache=not no_cache,
    )


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
    cost = f", ${summary.cost_usd:.4f}" if summary.cost_usd is not None else ""
    err.print(
        f"[bold]{summary.total}[/] items: {summary.already_done} already done, {summary.ran} run now "
        f"({summary.items_per_min:.1f} items/min, {summary.wall_time_s:.1f} s), {summary.remaining} remaining; {st}; "
        f"accuracy {acc}; tokens {summary.input_tokens:,} in / {summary.output_tokens:,} out{cost}"
    )


# Shared options (typer needs them per command; the defaults live here once).
O_OUT = typer.Option(..., "--out", help="run directory (results.jsonl, traces/, ...); rerun to resume")
O_PLANNER = typer.Option("rules", help=PLANNER_HELP)
O_FRONTEND = typer.Option("cascade", help=FRONTEND_HELP)
O_WORKERS = typer.Option(1, min=1, max=512, help="items answered concurrently (threads, or Ray actors)")
O_LIMIT = typer.Option(None, min=1, help="only the first N items")
O_RAY = typer.Option(None, "--ray", help="distribute over Ray: 'local' starts one here, or an address ('auto', 'ray://HOST:10001')")
O_PRICE_IN = typer.Option(None, "--price-in", min=0, help="USD per 1M input tokens, every model")
O_PRICE_OUT = typer.Option(None, "--price-out", min=0, help="USD per 1M output tokens, every model")
O_PRICE = typer.Option(None, "--price", help="per-model price SPEC=IN,OUT (USD per 1M tokens); repeatable")
O_RETRY = typer.Option(None, "--retry", help="committed statuses to run again (error, failed, stopped, missing_audio); repeatable")
O_TOOLS = typer.Option(None, "--tools-dir", help="extra folder of tool manifests (repeatable)")
O_STEPS = typer.Option(6, min=0, help="evidence-loop decisions at most")
O_BUDGET = typer.Option(600.0, help="seconds per question before the loop must answer")
O_WINDOW = typer.Option(30.0, help="seconds per window for front ends that truncate long audio")
O_TIMEOUT = typer.Option(120.0, help="seconds per model request")
O_RETRIES = typer.Option(3, min=1, help="attempts per model request (429/5xx/timeouts)")
O_NOCACHE = typer.Option(False, "--no-cache", help="do not reuse cached tool results")
O_PROGRESS = typer.Option(True, "--progress/--no-progress", help="rich progress bar on stderr")
O_STRICT = typer.Option(False, "--strict", help="refuse the whole input file when any row is bad (default: bad rows "
                        "are recorded as errored items and the good rows run)")


def _report_bad_row(message: str) -> None:
    err.print(f"[yellow]bad row[/] {escape(message)}")


def _bad_rows_note(items: list[Any]) -> None:
    n = sum(1 for it in items if getattr(it, "error", None))
    if n:
        err.print(f"[yellow]{n} row(s) not run[/]: recorded as errors in results.jsonl (--strict refuses such a file)")


def _config(planner: str, frontend: str, workers: int, max_steps: int, time_budget: float, window: float,
            timeout: float, **extra: Any) -> dict[str, Any]:
    return {"planner": planner, "frontend": frontend, "workers": workers, "max_steps": max_steps,
            "time_budget_s": time_budget, "window_s": window, "timeout_s": timeout, **extra}


@bench_app.command("mmar")
def mmar(
    meta: Path = typer.Option(..., "--meta", help="MMAR-meta.jsonl"),
    audio_dir: Path = typer.Option(..., "--audio-dir", help="the MMAR root (holding audio/) or the audio folder itself"),
    out: Path = O_OUT,
    planner: str = O_PLANNER,
    frontend: str = O_FRONTEND,
    workers: int = O_WORKERS,
    limit: Optional[int] = O_LIMIT,
    ray: Optional[str] = O_RAY,
    price_in: Optional[float] = O_PRICE_IN,
    price_out: Optional[float] = O_PRICE_OUT,
    price: Optional[list[str]] = O_PRICE,
    retry: Optional[list[str]] = O_RETRY,
    tools_dir: Optional[list[Path]] = O_TOOLS,
    max_steps: int = O_STEPS,
    time_budget: float = O_BUDGET,
    window: float = O_WINDOW,
    timeout: float = O_TIMEOUT,
    retries: int = O_RETRIES,
    no_cache: bool = O_NOCACHE,
    progress: bool = O_PROGRESS,
    strict: bool = O_STRICT,
) -> None:
    """Run (or resume) MMAR: predictions.jsonl the official evaluation.py scores unchanged, scores.json, traces/.

    Audio paths must stay inside --audio-dir; a bad meta row (or a refused path) is reported with its file and
    line and recorded as an errored item while the good rows run (--strict refuses the file instead)."""
    from audiomind.bench import mmar as mm

    _quiet()
    if not meta.is_file():
        _fail(f"no MMAR meta file at {meta}")
    if not audio_dir.is_dir():
        err.print(f"[yellow]warning:[/] audio dir {escape(str(audio_dir))} does not exist: every item will be missing_audio")
    try:
        prices = parse_prices(price_in, price_out, price)
    except ValueError as exc:
        _fail(str(exc))
    make_agent = agent_factory(out, planner, frontend, tools_dir, max_steps, time_budget, window, timeout, retries,
                               no_cache)
    try:
        rows, items = mm.mmar_items(meta, audio_dir, limit=limit, strict=strict)  # refused here under --strict
    except ValueError as exc:
        _fail(str(exc))
    _check_agent(make_agent)
    try:
        summary, scores = mm.run_mmar(
            meta, audio_dir, out, make_agent, workers=workers, limit=limit, ray_address=ray, progress=progress,
            prices=prices, retry_statuses=retry or (),
            config=_config(planner, frontend, workers, max_steps, time_budget, window, timeout),
            strict=strict, report=_report_bad_row,
        )
    except KeyboardInterrupt:
        mm.finalize(rows, out)
        err.print("[yellow]interrupted[/]: committed items are kept; rerun the same command to resume")
        raise typer.Exit(130)
    except (ValueError, RuntimeError) as exc:
        _fail(str(exc))
    console.print(mm.scores_table(scores, title=f"MMAR accuracy ({out})"))
    _summary_line(summary)
    _bad_rows_note(items)
    console.print(f"predictions: {out / mm.PREDICTIONS_FILE}\nscores: {out / mm.SCORES_FILE}\ntraces: {out / 'traces'}")


def _extra_audio_problem(row: dict[str, Any]) -> str | None:
    extra = row.get("extra_audio")
    if extra is not None and not (isinstance(extra, list) and all(isinstance(a, str) and a.strip() for a in extra)):
        return '"extra_audio" must be a list of non-empty strings'
    if row.get("metadata") is not None and not isinstance(row["metadata"], dict):
        return '"metadata" must be an object'
    return None


def _item_audio(audio: str, root: Path) -> str:
    """An item's audio path under the policy: inside `root` (symlinks resolved), a regular file; a missing
    file is kept as its path (the runner records missing_audio); anything else raises PathPolicyError."""
    from audiomind.paths import MissingPathError, resolve_under

    try:
        return str(resolve_under(audio, [root], base=root))
    except MissingPathError:
        return str(Path(audio) if Path(audio).is_absolute() else (root / audio).resolve())


def load_items(path: Path, audio_dir: Path | None, benchmark: str, strict: bool = False) -> list[Any]:
    """BenchItem JSON lines, or simple rows {id, question, choices, answer, audio|audio_path, <metadata>...};
    relative audio paths are taken from `audio_dir` (default: the items file's folder), and every audio path
    must stay inside that folder. A bad row (malformed JSON, missing or mistyped field, repeated id) or a
    refused audio path gives an item carrying its 'FILE:LINE: reason', committed as an error without
    running; `strict` raises RowsError (a ValueError) listing them instead."""
    from pydantic import ValidationError

    from audiomind.bench.items import BenchItem
    from audiomind.bench.rows import check_rows, refuse_if_strict
    from audiomind.paths import PathPolicyError, clip_text

    root = audio_dir or path.parent
    fields = set(BenchItem.model_fields) - {"error"}
    items = []
    for r in check_rows(path, audio_keys=("audio_path", "audio"), extra_checks=[_extra_audio_problem]):
        row = r.data or {}
        where = f"{path.name}:{r.line}"
        error = r.error
        data: dict[str, Any] = {}
        if error is None:
            audio = row.get("audio_path") or row.get("audio")
            data = {k: v for k, v in row.items() if k in fields}
            data.setdefault("benchmark", benchmark)
            data["id"] = r.item_id
            try:
                data["audio_path"] = _item_audio(audio, root)
                data["extra_audio"] = [_item_audio(a, root) for a in row.get("extra_audio") or []]
            except PathPolicyError as exc:
                error = f"{where}: audio path refused: {exc}"
            meta = dict(row.get("metadata") or {})
            meta.update({k: v for k, v in row.items() if k not in fields and k != "audio"
                         and isinstance(v, (str, int, float, bool))})
            data["metadata"] = meta
            data.setdefault("raw", row)
        if error is None:
            try:
                items.append(BenchItem.model_validate(data))
                continue
            except ValidationError as exc:
                e = exc.errors()[0]
                loc = ".".join(str(x) for x in e.get("loc", ())) or "row"
                error = f"{where}: {loc}: {e.get('msg', 'invalid')} ({len(exc.errors())} problem(s))"
        items.append(BenchItem(id=r.item_id, benchmark=benchmark, audio_path="",
                               question=clip_text(row.get("question") or "", 200) if isinstance(row.get("question"), str) else "",
                               raw=row if isinstance(row, dict) else {}, error=error))
    refuse_if_strict(path, [], strict, [it.error for it in items if it.error])
    return items


@bench_app.command("run")
def run(
    items_file: Path = typer.Option(..., "--items", help="JSON lines of items (BenchItem fields, or id/question/choices/answer/audio)"),
    out: Path = O_OUT,
    audio_dir: Optional[Path] = typer.Option(None, "--audio-dir", help="base of relative audio paths (default: the items file's folder)"),
    benchmark: str = typer.Option("custom", help="benchmark name recorded with each result"),
    planner: str = O_PLANNER,
    frontend: str = O_FRONTEND,
    workers: int = O_WORKERS,
    limit: Optional[int] = O_LIMIT,
    ray: Optional[str] = O_RAY,
    price_in: Optional[float] = O_PRICE_IN,
    price_out: Optional[float] = O_PRICE_OUT,
    price: Optional[list[str]] = O_PRICE,
    retry: Optional[list[str]] = O_RETRY,
    tools_dir: Optional[list[Path]] = O_TOOLS,
    max_steps: int = O_STEPS,
    time_budget: float = O_BUDGET,
    window: float = O_WINDOW,
    timeout: float = O_TIMEOUT,
    retries: int = O_RETRIES,
    no_cache: bool = O_NOCACHE,
    progress: bool = O_PROGRESS,
    strict: bool = O_STRICT,
) -> None:
    """Run (or resume) any item list: results.jsonl (scored by exact option match), traces/, summary.json.

    Audio paths must stay inside --audio-dir (default: the items file's folder); a bad row is reported with its
    file and line and recorded as an errored item while the good rows run (--strict refuses the file instead)."""
    from audiomind.bench.runner import run_batch

    _quiet()
    if not items_file.is_file():
        _fail(f"no items file at {items_file}")
    try:
        items = load_items(items_file, audio_dir, benchmark, strict=strict)
        prices = parse_prices(price_in, price_out, price)
    except ValueError as exc:
        _fail(str(exc))
    if limit:
        items = items[:limit]
    for it in items:
        if it.error:
            _report_bad_row(it.error)
    make_agent = agent_factory(out, planner, frontend, tools_dir, max_steps, time_budget, window, timeout, retries,
                               no_cache)
    _check_agent(make_agent)
    try:
        summary = run_batch(items, out, make_agent, workers=workers, ray_address=ray, progress=progress,
                            prices=prices, retry_statuses=retry or (),
                            config=_config(planner, frontend, workers, max_steps, time_budget, window, timeout,
                                           benchmark=benchmark, items=str(items_file.resolve())))
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: committed items are kept; rerun the same command to resume")
        raise typer.Exit(130)
    except (ValueError, RuntimeError) as exc:
        _fail(str(exc))
    _summary_line(summary)
    _bad_rows_note(items)
    console.print(f"results: {out / 'results.jsonl'}\ntraces: {out / 'traces'}")


@bench_app.command("report")
def report(
    run_dir: Path = typer.Argument(..., help="a run directory (holding results.jsonl)"),
    no_plots: bool = typer.Option(False, "--no-plots", help="tables only"),
) -> None:
    """Write RUN_DIR/report.md (+ report.json, plots/*.png): accuracy by group, tool use vs accuracy, latency."""
    from audiomind.bench.report import build_report, write_report
    from audiomind.bench.runner import RESULTS_FILE

    if not (run_dir / RESULTS_FILE).exists():
        _fail(f"no {RESULTS_FILE} in {run_dir}: not a run directory (or nothing committed yet)")
    path = write_report(run_dir, plots=not no_plots)
    rep = build_report(run_dir)
    t = Table("measure", "value", title=f"report ({run_dir})")
    o = rep.overall
    t.add_row("items / scored / correct", f"{o.n} / {o.scored} / {o.correct}")
    t.add_row("accuracy %", "-" if o.accuracy is None else f"{o.accuracy:.2f}")
    b = rep.behaviour
    t.add_row("mean planner tool calls", "-" if b.mean_tool_calls is None else f"{b.mean_tool_calls:.2f}")
    t.add_row("zero-tool questions %", "-" if b.zero_tool_share is None else f"{b.zero_tool_share:.2f}")
    t.add_row("re-listen rate %", "-" if b.relisten_rate is None else f"{b.relisten_rate:.2f}")
    t.add_row("latency p50 / p90 s", f"{rep.latency.p50_s} / {rep.latency.p90_s}")
    console.print(t)
    console.print(f"report: {path}")


@bench_app.command("mmar-score")
def mmar_score_cmd(
    predictions: Path = typer.Argument(..., help="MMAR rows with answer_prediction (JSONL or JSON list)"),
    out: Optional[Path] = typer.Option(None, "-o", help="also write the scores as JSON here"),
) -> None:
    """Score any MMAR predictions file exactly as the official evaluation.py does (token string match)."""
    from audiomind.bench import mmar as mm

    if not predictions.is_file():
        _fail(f"no predictions file at {predictions}")
    try:
        scores = mm.score_file(predictions)
    except (ValueError, KeyError, TypeError) as exc:  # RowsError names each bad line
        _fail(f"{predictions}: not MMAR prediction rows ({type(exc).__name__}: {clip_text(exc, 2000)})")
    console.print(mm.scores_table(scores, title=f"MMAR accuracy ({predictions.name})"))
    if out:
        out.write_text(scores.model_dump_json(indent=2, by_alias=True) + "\n", encoding="utf-8")


if __name__ == "__main__":  # `python -m audiomind.bench.cli ...` works without the top-level CLI
    bench_app()
