"""Judge benchmark runner: the dynamic rubric judge vs the holistic baseline on aligned vs misaligned
(audio, instruction) pairs, per domain: accuracy at the decision threshold and ROC-AUC of the scores.

    .venv/bin/python evals/judges/generate.py --out evals/judges/data          # once: audio + items.jsonl
    .venv/bin/python evals/judges/run_bench.py --data evals/judges/data --out evals/judges/results
    .venv/bin/python evals/judges/run_bench.py ... --llm openai:MODEL@URL --frontend openai:AUDIO_MODEL@URL

Writes `items.jsonl` (one row per item: scores, verdicts, trace path), `summary.json` (per domain and
overall) and one judge trace per item under `traces/`. Perception results are cached by audio content, so
an audio's positive and its negatives share one perception pass.
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


def roc_auc(scores: list[float], labels: list[bool]) -> float | None:
    """Mann-Whitney AUC (ties count half); None when one class is missing."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def summarise(rows: list[dict], threshold: float) -> dict:
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


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    data: Path = typer.Option(Path(__file__).resolve().parent / "data", "--data",
                              help="what generate.py wrote (items.jsonl + audio)"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results", "--out",
                             help="items.jsonl, summary.json and traces/ go here; rerun to resume"),
    llm: str = typer.Option("rules", help="judge model spec"),
    frontend: str = typer.Option("cascade", help="front-end spec"),
    threshold: float = typer.Option(0.75, help="decision threshold on the rubric score"),
    limit: int = typer.Option(0, min=0, help="only the first N items (0: all)"),
) -> None:
    """Rubric judge vs holistic baseline on aligned vs misaligned pairs: accuracy and ROC-AUC per domain."""
    from audiomind.judges.rubric import judge_rubric
    from audiomind.tools.executor import ToolCache
    from audiomind.tools.manifest import ToolRegistry

    items = [json.loads(x) for x in (data / "items.jsonl").read_text().splitlines() if x.strip()]
    if limit:
        items = items[: limit]
    out.mkdir(parents=True, exist_ok=True)
    done = {}
    rows_path = out / "items.jsonl"
    if rows_path.exists():  # resume: items already scored are kept
        for line in rows_path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    if done:  # a folder from an earlier run: say so, its rows were made by whatever code ran then
        typer.echo(f"resuming: {len(done)} of {len(items)} items kept from {rows_path} (a new folder judges them "
                   "all again)", err=True)
    registry = ToolRegistry.load()
    cache = ToolCache(out / "tool-cache")
    t0 = time.monotonic()
    with rows_path.open("a") as fh:
        for it in items:
            if it["id"] in done:
                continue
            t = time.monotonic()
            res = judge_rubric(it["audio"], it["instruction"], llm=llm, frontend=frontend,
                               threshold=threshold, trace_dir=out / "traces", cache=cache, registry=registry)
            row = {"id": it["id"], "domain": it["domain"], "aligned": it["aligned"],
                   "negative_kind": it["negative_kind"], "instruction": it["instruction"],
                   "rubric_score": res.score, "rubric_aligned": res.aligned,
                   "holistic_p_yes": res.holistic.p_yes if res.holistic else None,
                   "items": [{"q": v.question, "p": v.p_yes} for v in res.verdicts],
                   "seconds": round(time.monotonic() - t, 2), "trace": res.trace_path}
            done[it["id"]] = row
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(f"{it['id']:18s} aligned={it['aligned']!s:5s} rubric={res.score:.3f} "
                  f"holistic={row['holistic_p_yes']} ({row['seconds']} s)", flush=True)
    rows = [done[i["id"]] for i in items if i["id"] in done]
    summary = {"llm": llm, "frontend": frontend, "threshold": threshold, "n": len(rows),
               "wall_s": round(time.monotonic() - t0, 1), "by_domain": summarise(rows, threshold)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["by_domain"]["all"], indent=2))


if __name__ == "__main__":
    app()
