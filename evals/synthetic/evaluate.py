"""Run an agent (the offline stack by default) on a generated synthetic set; accuracy per kind.

    python evals/synthetic/evaluate.py --set DIR [--run-dir RUN] [--workers 1] [--kinds a,b]
        [--planner rules --frontend cascade] [--extra-matchers] [--json OUT.json]
    python evals/synthetic/evaluate.py --generate --set DIR --per-kind 10 --seed 0   (generate first)

Prints, per kind, items / correct / accuracy / random-choice baseline, then the overall numbers. The run
goes through the resumable batch runner (RUN/results.jsonl + one trace per item), so re-running resumes.
`--extra-matchers` measures the matchers proposed in audiomind/reasoning/matchers_extra.py by consulting
them before the rule matcher (the same hook the lead is asked to add to matcher.match); without it the
stack runs exactly as shipped.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

from audiomind.bench import synthetic


def install_extra_matchers() -> None:
    """Consult matchers_extra first (the hook proposed for matcher.match), for measurement only."""
    from audiomind.reasoning import matcher, matchers_extra

    if getattr(matcher.match, "_with_extra", False):
        return
    original = matcher.match

    @functools.wraps(original)
    def match(state, analysis):
        extra = matchers_extra.match_extra(state, analysis)
        return extra if extra is not None else original(state, analysis)

    match._with_extra = True  # type: ignore[attr-defined]
    matcher.match = match


def score(item, result) -> bool | None:
    if result.status in ("missing_audio", "error"):
        return None if result.status == "missing_audio" else False
    return synthetic.is_correct(item, result.prediction, result.choice_index)


def table(rows: list[dict], results: dict[str, dict]) -> dict:
    by_kind: dict[str, list] = collections.defaultdict(list)
    for r in rows:
        res = results.get(r["id"])
        if res is None:
            continue
        by_kind[r["kind"]].append((bool(res.get("correct")), 1.0 / len(r["choices"]), res.get("wall_time_s", 0.0)))
    out = {}
    for kind in [k for k in synthetic.KINDS if k in by_kind]:
        xs = by_kind[kind]
        out[kind] = {"n": len(xs), "correct": sum(c for c, _, _ in xs), "accuracy": sum(c for c, _, _ in xs) / len(xs),
                     "random": sum(b for _, b, _ in xs) / len(xs), "mean_s": sum(t for _, _, t in xs) / len(xs)}
    allx = [x for xs in by_kind.values() for x in xs]
    if allx:
        out["OVERALL"] = {"n": len(allx), "correct": sum(c for c, _, _ in allx),
                          "accuracy": sum(c for c, _, _ in allx) / len(allx),
                          "random": sum(b for _, b, _ in allx) / len(allx),
                          "mean_s": sum(t for _, _, t in allx) / len(allx)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", required=True, help="a generated set folder (meta.jsonl + audio/)")
    ap.add_argument("--generate", action="store_true", help="generate the set first (--per-kind, --seed)")
    ap.add_argument("--per-kind", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default="")
    ap.add_argument("--run-dir", default=None, help="batch run folder (default SET/run-<planner>-<frontend>)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--planner", default="rules")
    ap.add_argument("--frontend", default="cascade")
    ap.add_argument("--extra-matchers", action="store_true", help="consult reasoning/matchers_extra.py first")
    ap.add_argument("--json", default=None, help="also write the table as JSON here")
    args = ap.parse_args(argv)

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] or None
    if args.generate:
        synthetic.generate(args.set, per_kind=args.per_kind, seed=args.seed, kinds=kinds)
    rows = [r for r in synthetic.load_rows(args.set) if not kinds or r["kind"] in kinds]
    items = [synthetic.to_item(r, args.set) for r in rows]
    if args.extra_matchers:
        install_extra_matchers()

    from audiomind.api import AudioMind
    from audiomind.bench.runner import load_results, run_batch

    tag = f"{args.planner}-{args.frontend}".replace(":", "_").replace("/", "_").replace("@", "_")
    run_dir = Path(args.run_dir or Path(args.set) / f"run-{tag}{'-extra' if args.extra_matchers else ''}")
    make_agent = functools.partial(AudioMind, planner=args.planner, frontend=args.frontend,
                                   trace_dir=str(run_dir / "agent-traces"))
    run_batch(items, run_dir, make_agent, workers=args.workers, score=score, progress=sys.stderr.isatty(),
              config={"planner": args.planner, "frontend": args.frontend, "extra_matchers": args.extra_matchers,
                      "set": str(args.set)})
    results = load_results(run_dir)
    t = table(rows, results)
    print(f"{'kind':16s} {'n':>4s} {'correct':>7s} {'accuracy':>8s} {'random':>7s} {'s/item':>7s}")
    for kind, d in t.items():
        print(f"{kind:16s} {d['n']:4d} {d['correct']:7d} {d['accuracy']:8.1%} {d['random']:7.1%} {d['mean_s']:7.1f}")
    wrong = [(r["id"], results[r["id"]].get("prediction"), r["answer"]) for r in rows
             if r["id"] in results and not results[r["id"]].get("correct")]
    if wrong:
        print("\nwrong answers (id: predicted | truth):")
        for i, p, a in wrong:
            print(f"  {i}: {p!r} | {a!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"run_dir": str(run_dir), "extra_matchers": args.extra_matchers,
                                               "table": t}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
