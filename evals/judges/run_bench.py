"""Judge benchmark runner: the dynamic rubric judge vs the holistic baseline on aligned vs misaligned
(audio, instruction) pairs, per domain: accuracy at the decision threshold and ROC-AUC of the scores.

    .venv/bin/python evals/judges/generate.py --out evals/judges/data          # once: audio + items.jsonl
    .venv/bin/python evals/judges/run_bench.py --data evals/judges/data --out evals/judges/results
    .venv/bin/python evals/judges/run_bench.py ... --llm openai:MODEL@URL --frontend openai:AUDIO_MODEL@URL

The items run as the runner's `rubric-judge` task (`audiomind bench run --task rubric-judge`: resumable,
--workers, one judge trace per item under traces/, results.jsonl, judgments.jsonl; the label is `aligned`).
Writes `items.jsonl` (one row per item: scores, verdicts, trace path) and `rubric_bench_summary.json` (per
domain and overall); `audiomind bench report OUT` adds ROC-AUC, the reliability diagram and ECE. Perception
results are cached by audio content, so an audio's positive and its negatives share one perception pass.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def summarise(rows: list[dict], threshold: float) -> dict:
    from audiomind.bench.report import roc_auc  # the report's Mann-Whitney AUC (ties count half)

    out: dict = {}
    domains = sorted({r["domain"] for r in rows}) + ["all"]
    for d in domains:
        rs = [r for r in rows if d == "all" or r["domain"] == d]
        labels = [r["aligned"] for r in rs]
        entry = {"n": len(rs), "positives": sum(labels), "negatives": len(rs) - sum(labels)}
        for name, key, thr in (("rubric", "rubric_score", threshold), ("holistic", "holistic_p_yes", 0.5)):
            sc = [r[key] for r in rs if r.get(key) is not None]
            lab = [r["aligned"] for r in rs if r.get(key) is not None]
            if not sc:
                continue
            acc = sum((s >= thr) == y for s, y in zip(sc, lab)) / len(sc)
            auc = roc_auc(sc, lab)
            entry[name] = {"accuracy": round(acc, 4), "roc_auc": round(auc, 4) if auc is not None else None,
                           "threshold": thr}
        for kind in sorted({r["negative_kind"] or "positive" for r in rs}):
            sub = [r for r in rs if (r["negative_kind"] or "positive") == kind]
            entry.setdefault("by_kind", {})[kind] = {
                "n": len(sub),
                "rubric_correct": sum((r["rubric_score"] >= threshold) == r["aligned"] for r in sub),
                "holistic_correct": sum((r["holistic_p_yes"] >= 0.5) == r["aligned"] for r in sub
                                        if r.get("holistic_p_yes") is not None)}
        out[d] = entry
    return out


SUMMARY = "rubric_bench_summary.json"
"""The per-domain figures (summary.json, as this script named it before it ran as a task, is the runner's now)."""


def task_source(items: list[dict], path: Path) -> Path:
    """generate.py / build_sets.py rows as rubric-judge rows: their fields kept (domain, negative_kind, source_id as
    metadata), label = aligned."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({**it, "label": bool(it["aligned"])}) + "\n" for it in items))
    return path


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    data: Path = typer.Option(Path(__file__).resolve().parent / "data", "--data",
                              help="what generate.py wrote (items.jsonl + audio)"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results", "--out",
                             help="the run folder (results.jsonl, traces/, judgments.jsonl), items.jsonl and "
                                  f"{SUMMARY}; rerun to resume"),
    llm: str = typer.Option("rules", help="judge model spec"),
    frontend: str = typer.Option("cascade", help="front-end spec"),
    threshold: float = typer.Option(0.75, help="decision threshold on the rubric score"),
    aggregation: str = typer.Option("geometric", help="how item p(yes) become the score: geometric or mean "
                                    "(docs/JUDGES.md, Rubric aggregation)"),
    limit: int = typer.Option(0, min=0, help="only the first N items (0: all)"),
    workers: int = typer.Option(1, min=1, help="judgements run concurrently"),
) -> None:
    """Rubric judge vs holistic baseline on aligned vs misaligned pairs: accuracy and ROC-AUC per domain."""
    from audiomind.bench.tasks.judging import run_judge_set

    items = [json.loads(x) for x in (data / "items.jsonl").read_text().splitlines() if x.strip()]
    source = task_source(items, out / "rubric_judge_source.jsonl")
    t0 = time.monotonic()
    _, judged = run_judge_set("rubric-judge", source, out, audio_dir=data, limit=limit or None, workers=workers,
                              options={"llm": llm, "frontend": frontend, "threshold": threshold, "cache": True,
                                       "aggregation": aggregation})
    by_id = {it["id"]: it for it in items}
    from audiomind.bench.runner import load_results

    results = load_results(out)
    rows = []
    for j in judged:
        if j.status != "answered" or not j.figures:
            print(f"{j.id}: not judged ({j.status}: {results.get(j.id, {}).get('error')})", file=sys.stderr)
            continue
        it, f = by_id[j.id], j.figures
        rows.append({"id": j.id, "domain": it["domain"], "aligned": it["aligned"],
                     "negative_kind": it["negative_kind"], "instruction": it["instruction"],
                     "rubric_score": f["rubric_score"], "rubric_aligned": f["aligned"],
                     "holistic_p_yes": f["holistic_p_yes"], "items": f["items"],
                     "seconds": results[j.id]["wall_time_s"], "trace": str(out / j.trace_path) if j.trace_path else None})
    (out / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"llm": llm, "frontend": frontend, "threshold": threshold, "n": len(rows),
               "wall_s": round(time.monotonic() - t0, 1), "by_domain": summarise(rows, threshold)}
    (out / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["by_domain"].get("all", {}), indent=2))


if __name__ == "__main__":
    app()
