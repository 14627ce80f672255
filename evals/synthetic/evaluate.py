"""Run an agent (the offline stack by default) on the synthetic benchmark's three splits; the table.

    .venv/bin/python evals/synthetic/evaluate.py --root DIR [--generate --per-kind 10 --seed 0]
        [--splits dev,heldout_phrasing,heldout_condition] [--kinds a,b] [--run-dir RUN] [--workers 1]
        [--planner rules --frontend cascade] [--json OUT.json] [--no-run] [--show-wrong]

DIR holds one MMAR-format set per split (DIR/<split>/meta.jsonl + audio/, as evals/synthetic/generate.py
writes them; --generate makes them first). Each split is the `synthetic` task run into RUN/<split>/ (default
RUN = DIR/run-<planner>-<frontend>), exactly what

    audiomind bench run --task synthetic --source DIR/<split> --out RUN/<split> [--task-option kinds=a,b]

does (results.jsonl, one trace per item, predictions.jsonl, evaluation.json), so re-running resumes; --no-run
only tabulates what the run folders hold.

Prints, per kind (perception kinds, then the kinds that need one step on top of perception), the accuracy on
dev phrasings, on held-out phrasings and on held-out conditions, the random-choice baseline, and group and
overall rows; per split, exact-match next to MMAR's official string-match accuracy and selective accuracy
(the accuracy of confident answers, confidence >= audiomind.state.CONFIDENT_AT, and their share, coverage);
accuracy per held-out condition; and a calibration table (confidence bins -> accuracy, count).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from typer.main import get_command

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

from audiomind.bench.cli import bench_app
from audiomind.bench.tasks import synthetic
from audiomind.bench.tasks import synthetic_generate as sg

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    root: Path = typer.Option(..., "--root", help="folder of the split sets (ROOT/<split>/meta.jsonl + audio/)"),
    generate: bool = typer.Option(False, "--generate", help="generate the split sets first (--per-kind, --seed)"),
    per_kind: int = typer.Option(10, min=1, help="items per kind and split when generating"),
    seed: int = typer.Option(0, help="generation seed"),
    splits: str = typer.Option(",".join(sg.SPLITS), help="comma-separated splits to run"),
    kinds: str = typer.Option("", help=f"comma-separated subset of: {', '.join(sg.KINDS)}"),
    run_dir: Path | None = typer.Option(None, help="batch run folder (default ROOT/run-<planner>-<frontend>)"),
    workers: int = typer.Option(1, min=1, help="items answered concurrently"),
    planner: str = typer.Option("rules", help="planner backend spec"),
    frontend: str = typer.Option("cascade", help="front-end backend spec"),
    json_out: Path | None = typer.Option(None, "--json", help="also write the tables as JSON here"),
    no_run: bool = typer.Option(False, "--no-run", help="only tabulate the results already in the run folders"),
    show_wrong: bool = typer.Option(False, "--show-wrong", help="list the wrong answers"),
) -> None:
    """Run the agent on the synthetic splits and print the evaluation tables."""
    split_list = [s.strip() for s in splits.split(",") if s.strip()]
    bad = [s for s in split_list if s not in sg.SPLITS]
    if bad:
        raise typer.BadParameter(f"unknown splits {bad}; known: {', '.join(sg.SPLITS)}")
    kind_list = [k.strip() for k in kinds.split(",") if k.strip()] or None
    if generate:
        sg.generate_splits(root, per_kind=per_kind, seed=seed, kinds=kind_list, splits=split_list,
                           progress=lambda i: print(i, file=sys.stderr))
    tag = f"{planner}-{frontend}".replace(":", "_").replace("/", "_").replace("@", "_")
    run_root = Path(run_dir or root / f"run-{tag}")
    for split in [] if no_run else split_list:
        if not (root / split / sg.META_FILE).exists():
            raise typer.BadParameter(f"no {root / split / sg.META_FILE}: generate the split sets first "
                                     "(--generate)")
        args = ["run", "--task", "synthetic", "--source", str(root / split), "--out", str(run_root / split),
                "--planner", planner, "--frontend", frontend, "--workers", str(workers),
                "--progress" if sys.stderr.isatty() else "--no-progress"]
        if kind_list:
            args += ["--task-option", "kinds=" + ",".join(kind_list)]
        code = get_command(bench_app).main(args, prog_name="audiomind bench", standalone_mode=False)
        if code:
            raise typer.Exit(code)
    try:
        ev, rows_by, results_by = synthetic.tabulate_splits(root, run_root, splits=split_list,
                                                            kinds=kind_list)
    except FileNotFoundError as exc:
        raise typer.BadParameter(f"{exc} (--generate)") from exc
    typer.echo(synthetic.render(ev, split_list))
    if show_wrong:
        typer.echo("\nwrong answers (id: predicted | truth):")
        for split, rows in rows_by.items():
            for r in rows:
                res = results_by[split].get(r["id"])
                if res is not None and res.get("correct") is False:
                    typer.echo(f"  {r['id']}: {res.get('prediction')!r} | {r['answer']!r}")
    if json_out:
        json_out.write_text(json.dumps({"root": str(root), "run_dir": str(run_root), "planner": planner,
                                        "frontend": frontend, "splits": split_list, **ev}, indent=2) + "\n",
                            encoding="utf-8")


if __name__ == "__main__":
    app()
