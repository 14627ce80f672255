"""Judge benchmark runner: the dynamic rubric judge vs the holistic baseline on aligned vs misaligned
(audio, instruction) pairs, per domain: accuracy at the decision threshold and ROC-AUC of the scores.

    python evals/judges/generate.py --out evals/judges/data          # once: audio + items.jsonl
    python evals/judges/run_bench.py --data evals/judges/data --out evals/judges/results
    python evals/judges/run_bench.py ... --llm openai:MODEL@URL --frontend openai:AUDIO_MODEL@URL

Writes `items.jsonl` (one row per item: scores, verdicts, trace path), `summary.json` (per domain and
overall) and one judge trace per item under `traces/`. Perception results are cached by audio content, so
an audio's positive and its negatives share one perception pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

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


def main() -> None:
    from audiomind.judges.rubric import judge_rubric
    from audiomind.tools.executor import ToolCache
    from audiomind.tools.manifest import ToolRegistry

    ap = argparse.ArgumentParser(description="rubric vs holistic judge benchmark")
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / "data")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument("--llm", default="rules")
    ap.add_argument("--frontend", default="cascade")
    ap.add_argument("--threshold", type=float, default=0.75)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    items = [json.loads(x) for x in (args.data / "items.jsonl").read_text().splitlines() if x.strip()]
    if args.limit:
        items = items[: args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    done = {}
    rows_path = args.out / "items.jsonl"
    if rows_path.exists():  # resume: items already scored are kept
        for line in rows_path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    registry = ToolRegistry.load()
    cache = ToolCache(args.out / "tool-cache")
    t0 = time.monotonic()
    with rows_path.open("a") as fh:
        for it in items:
            if it["id"] in done:
                continue
            t = time.monotonic()
            res = judge_rubric(it["audio"], it["instruction"], llm=args.llm, frontend=args.frontend,
                               threshold=args.threshold, trace_dir=args.out / "traces", cache=cache, registry=registry)
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
    summary = {"llm": args.llm, "frontend": args.frontend, "threshold": args.threshold, "n": len(rows),
               "wall_s": round(time.monotonic() - t0, 1), "by_domain": summarise(rows, args.threshold)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["by_domain"]["all"], indent=2))


if __name__ == "__main__":
    main()
