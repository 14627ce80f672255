"""Score a run of an unseen-kinds set: accuracy per kind, and calibration as the project reports it everywhere
(accuracy per confidence bin, expected calibration error, accuracy and share of confident answers).

    .venv/bin/python evals/unseen/score.py RUN_DIR [--json OUT.json]

RUN_DIR is what `audiomind bench run --task items --source DIR/items.jsonl --out RUN_DIR` wrote; each result
line carries its item's `kind` in metadata. Random choice is 1 / (number of choices) per item.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0001))
CONFIDENT_AT = 0.7


def score(run_dir: Path) -> dict:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_kind[(r.get("metadata") or {}).get("kind", "?")].append(r)
    kinds = {k: {"n": len(v), "right": sum(bool(r.get("correct")) for r in v),
                 "confident": sum((r.get("confidence") or 0) >= CONFIDENT_AT for r in v),
                 "confident_right": sum((r.get("confidence") or 0) >= CONFIDENT_AT and bool(r.get("correct"))
                                        for r in v)} for k, v in sorted(by_kind.items())}
    bins, ece = [], 0.0
    for lo, hi in BINS:
        inb = [r for r in rows if lo <= (r.get("confidence") or 0.0) < hi]
        if inb:
            acc = sum(bool(r.get("correct")) for r in inb) / len(inb)
            conf = sum(r.get("confidence") or 0.0 for r in inb) / len(inb)
            ece += len(inb) / len(rows) * abs(acc - conf)
            bins.append({"bin": f"[{lo:.1f}, {min(hi, 1.0):.1f})", "n": len(inb), "accuracy": round(acc, 3),
                         "mean_confidence": round(conf, 3)})
    confident = [r for r in rows if (r.get("confidence") or 0) >= CONFIDENT_AT]
    return {"n": len(rows), "accuracy": round(sum(bool(r.get("correct")) for r in rows) / max(1, len(rows)), 3),
            "ece": round(ece, 3), "confident_share": round(len(confident) / max(1, len(rows)), 3),
            "confident_accuracy": round(sum(bool(r.get("correct")) for r in confident) / len(confident), 3)
            if confident else None, "bins": bins, "kinds": kinds}


def main(argv: list[str]) -> None:
    s = score(Path(argv[0]))
    print(f"n {s['n']}  accuracy {s['accuracy']:.3f}  ECE {s['ece']:.3f}  confident (>= {CONFIDENT_AT}): "
          f"share {s['confident_share']:.3f}, accuracy {s['confident_accuracy']}")
    print("\n| kind | n | right | confident (>= 0.7) | confident right |\n|---|---|---|---|---|")
    for k, v in s["kinds"].items():
        print(f"| {k} | {v['n']} | {v['right']} | {v['confident']} | {v['confident_right']} |")
    print("\n| confidence bin | n | accuracy | mean confidence |\n|---|---|---|---|")
    for b in s["bins"]:
        print(f"| {b['bin']} | {b['n']} | {b['accuracy']:.3f} | {b['mean_confidence']:.3f} |")
    if "--json" in argv:
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(s, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
