"""Generate the verifiable synthetic benchmark (MMAR format, answers true by construction), by split.

    .venv/bin/python evals/synthetic/generate.py --out DIR --per-kind N --seed S
        [--splits dev,heldout_phrasing,...]
        [--kinds counting,tempo,...]

Writes one MMAR-format set per split: DIR/<split>/meta.jsonl (MMAR fields + `kind`, `split` and
`construction`) and DIR/<split>/audio/<id>.wav. Splits: dev (dev phrasings, clean audio, dev voices),
heldout_phrasing (the same items worded from the held-out phrasing bank), heldout_condition (dev phrasings,
audio under a held-out condition and held-out voices). The same seed gives the same items; see
audiomind/bench/tasks/synthetic_generate.py for the kinds, the conditions each accepts, and how each answer is
constructed. Each set then runs as the `synthetic` task:

    audiomind bench run --task synthetic --source DIR/<split> --out RUN/<split>

(or all three at once with evals/synthetic/evaluate.py).
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

import typer

from audiomind.bench.tasks import synthetic
from audiomind.bench.tasks import synthetic_generate as sg

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    out: Path = typer.Option(..., "--out", help="output folder (one sub-folder per split)"),
    per_kind: int = typer.Option(10, min=1, help="items per kind and split"),
    seed: int = typer.Option(0, help="generation seed"),
    splits: str = typer.Option(",".join(sg.SPLITS), help="comma-separated splits"),
    kinds: str = typer.Option("", help=f"comma-separated subset of: {', '.join(sg.KINDS)}"),
) -> None:
    """Generate the synthetic benchmark's split sets."""
    split_list = [s.strip() for s in splits.split(",") if s.strip()]
    kind_list = [k.strip() for k in kinds.split(",") if k.strip()] or None
    t0 = time.monotonic()
    by = sg.generate_splits(out, per_kind=per_kind, seed=seed, kinds=kind_list, splits=split_list,
                            progress=lambda i: print(i, file=sys.stderr))
    for split, rows in by.items():
        counts = collections.Counter(r["kind"] for r in rows)
        conds = collections.Counter(r["construction"]["condition"] for r in rows)
        typer.echo(f"{split}: {len(rows)} items ({len(counts)} kinds), random-choice baseline "
                   f"{synthetic.random_baseline(rows):.1%}, conditions {dict(conds)} -> {out / split}/meta.jsonl")
    typer.echo(f"done in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    app()
