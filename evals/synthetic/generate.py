"""Generate the verifiable synthetic benchmark (MMAR format, answers true by construction).

    python evals/synthetic/generate.py --out DIR --per-kind N --seed S [--kinds counting,tempo,...]

Writes DIR/meta.jsonl (MMAR fields + `kind` and `construction`) and DIR/audio/<id>.wav. The same seed
gives the same items; see audiomind/bench/synthetic.py for the kinds and how each answer is constructed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from audiomind.bench import synthetic


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder (meta.jsonl + audio/)")
    ap.add_argument("--per-kind", type=int, default=10, help="items per kind (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default="", help=f"comma-separated subset of: {', '.join(synthetic.KINDS)}")
    args = ap.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] or None
    t0 = time.monotonic()
    rows = synthetic.generate(args.out, per_kind=args.per_kind, seed=args.seed, kinds=kinds,
                              progress=lambda i: print(i, file=sys.stderr))
    counts = collections.Counter(r["kind"] for r in rows)
    for kind, n in counts.items():
        print(f"{kind:16s} {n:4d}")
    print(f"{len(rows)} items in {time.monotonic() - t0:.1f} s -> {args.out}/meta.jsonl "
          f"(random-choice baseline {synthetic.random_baseline(rows):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
