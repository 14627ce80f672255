"""Run an agent (the offline stack by default) on the synthetic benchmark's three splits; the table.

    python evals/synthetic/evaluate.py --root DIR [--generate --per-kind 10 --seed 0]
        [--splits dev,heldout_phrasing,heldout_condition] [--kinds a,b] [--run-dir RUN] [--workers 1]
        [--planner rules --frontend cascade] [--json OUT.json] [--no-run] [--show-wrong]

DIR holds one MMAR-format set per split (DIR/<split>/meta.jsonl + audio/, as evals/synthetic/generate.py
writes them; --generate makes them first). Each split runs through the resumable batch runner into
RUN/<split>/ (default RUN = DIR/run-<planner>-<frontend>; results.jsonl + one trace per item), so re-running
resumes; --no-run only tabulates what the run folders hold.

Prints, per kind (perception kinds, then the kinds that need one step on top of perception), the accuracy on
dev phrasings, on held-out phrasings and on held-out conditions, the random-choice baseline, and group and
overall rows; per split, exact-match next to MMAR's official string-match accuracy and selective accuracy
(the accuracy of confident answers, confidence >= audiomind.state.CONFIDENT_AT, and their share, coverage);
accuracy per held-out condition; and a calibration table (confidence bins -> accuracy, count).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

from audiomind.bench import synthetic

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

SPLIT_LABEL = {"dev": "dev", "heldout_phrasing": "held-out phrasing", "heldout_condition": "held-out condition"}


def score(item, result) -> bool | None:
    if result.status in ("missing_audio", "error"):
        return None if result.status == "missing_audio" else False
    return synthetic.is_correct(item, result.prediction, result.choice_index)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _cell(c: dict[str, Any] | None) -> str:
    if not c or not c.get("n"):
        return "-"
    return f"{c['accuracy']:5.1f} ({c['n']})"


def render(ev: dict[str, Any], splits: list[str]) -> str:
    """The evaluation as plain-text tables."""
    lines: list[str] = []
    head = f"{'kind':22s} {'step':4s} " + " ".join(f"{SPLIT_LABEL[s]:>19s}" for s in splits) + f" {'random':>7s}"
    lines += ["Accuracy % (n) per kind and split", head, "-" * len(head)]

    def row(name: str, step: str, d: dict[str, Any]) -> str:
        return (f"{name:22s} {step:4s} " + " ".join(f"{_cell(d['splits'].get(s)):>19s}" for s in splits)
                + f" {_pct(d.get('random')):>7s}")

    for group in ("perception", "needs_step", "other"):
        kinds = {k: d for k, d in ev["kinds"].items() if d["group"] == group}
        if not kinds:
            continue
        for k, d in kinds.items():
            lines.append(row(k, "yes" if group == "needs_step" else "", d))
        if group in ev["groups"]:
            lines.append(row(f"[{group}]", "", ev["groups"][group]))
        lines.append("")
    if "overall" in ev["groups"]:
        lines.append(row("OVERALL", "", ev["groups"]["overall"]))

    lines += ["", "Per split: exact match vs MMAR string match; selective accuracy (confident answers)",
              (f"{'split':19s} {'n':>5s} {'exact %':>8s} {'MMAR %':>7s} {'random %':>8s} {'conf. acc %':>11s} "
               f"{'coverage %':>10s} {'rest acc %':>10s}")]
    for s in splits:
        c = ev["splits"].get(s)
        if not c or not c["n"]:
            continue
        sel = c["selective"]
        lines.append(f"{SPLIT_LABEL[s]:19s} {c['n']:5d} {_pct(c['accuracy']):>8s} {_pct(c['mmar_accuracy']):>7s} "
                     f"{_pct(c['random']):>8s} {_pct(sel['confident_accuracy']):>11s} {_pct(sel['coverage']):>10s} "
                     f"{_pct(sel['rest_accuracy']):>10s}")
    sel = ev["selective"]
    lines.append(f"{'all splits':19s} {sel['scored']:5d} {'':>8s} {'':>7s} {'':>8s} {_pct(sel['confident_accuracy']):>11s} "
                 f"{_pct(sel['coverage']):>10s} {_pct(sel['rest_accuracy']):>10s}")
    lines.append(f"(confident: confidence >= {sel['threshold']:g}; {sel['with_confidence']} of {sel['scored']} "
                 "scored answers carry a confidence)")

    if ev["conditions"]:
        lines += ["", "Held-out conditions", f"{'condition':12s} {'n':>4s} {'accuracy %':>10s} {'random %':>8s}"]
        for name, c in ev["conditions"].items():
            lines.append(f"{name:12s} {c['n']:4d} {_pct(c['accuracy']):>10s} {_pct(c['random']):>8s}")

    lines += ["", "Calibration (all splits)", f"{'confidence':10s} {'n':>5s} {'accuracy %':>10s} {'mean conf':>9s}"]
    for b in ev["calibration"]:
        mean = "-" if b["mean_confidence"] is None else f"{b['mean_confidence']:.3f}"
        lines.append(f"{b['label']:10s} {b['n']:5d} {_pct(b['accuracy']):>10s} {mean:>9s}")
    return "\n".join(lines)


@app.command()
def main(
    root: Path = typer.Option(..., "--root", help="folder of the split sets (ROOT/<split>/meta.jsonl + audio/)"),
    generate: bool = typer.Option(False, "--generate", help="generate the split sets first (--per-kind, --seed)"),
    per_kind: int = typer.Option(10, min=1, help="items per kind and split when generating"),
    seed: int = typer.Option(0, help="generation seed"),
    splits: str = typer.Option(",".join(synthetic.SPLITS), help="comma-separated splits to run"),
    kinds: str = typer.Option("", help=f"comma-separated subset of: {', '.join(synthetic.KINDS)}"),
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
    bad = [s for s in split_list if s not in synthetic.SPLITS]
    if bad:
        raise typer.BadParameter(f"unknown splits {bad}; known: {', '.join(synthetic.SPLITS)}")
    kind_list = [k.strip() for k in kinds.split(",") if k.strip()] or None
    if generate:
        synthetic.generate_splits(root, per_kind=per_kind, seed=seed, kinds=kind_list, splits=split_list,
                                  progress=lambda i: print(i, file=sys.stderr))
    tag = f"{planner}-{frontend}".replace(":", "_").replace("/", "_").replace("@", "_")
    run_root = Path(run_dir or root / f"run-{tag}")

    from audiomind.bench.runner import load_results

    rows_by: dict[str, list[dict[str, Any]]] = {}
    results_by: dict[str, dict[str, dict[str, Any]]] = {}
    for split in split_list:
        set_dir = root / split
        if not (set_dir / synthetic.META_FILE).exists():
            raise typer.BadParameter(f"no {set_dir / synthetic.META_FILE}: generate the split sets first (--generate)")
        rows = [r for r in synthetic.load_rows(set_dir) if not kind_list or r["kind"] in kind_list]
        rows_by[split] = rows
        rd = run_root / split
        if not no_run:
            from audiomind.api import AudioMind
            from audiomind.bench.runner import run_batch

            items = [synthetic.to_item(r, set_dir) for r in rows]
            make_agent = functools.partial(AudioMind, planner=planner, frontend=frontend,
                                           trace_dir=str(rd / "agent-traces"))
            run_batch(items, rd, make_agent, workers=workers, score=score, progress=sys.stderr.isatty(),
                      config={"planner": planner, "frontend": frontend, "set": str(set_dir), "split": split})
        results_by[split] = load_results(rd) if (rd / "results.jsonl").exists() else {}

    ev = synthetic.evaluation(rows_by, results_by)
    typer.echo(render(ev, split_list))
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
