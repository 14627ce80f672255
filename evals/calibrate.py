"""Fit the answer step's calibration table on development runs only, and show its effect on other runs.

    .venv/bin/python evals/calibrate.py fit RUN_DIR [RUN_DIR ...] [--name NAME] [--prior 4] [--write]
    .venv/bin/python evals/calibrate.py show RUN_DIR [RUN_DIR ...]      # ECE etc. before/after the current table

A run is what `audiomind bench run` wrote (results.jsonl). Each answered row gives (raw confidence, right): the
raw value is read from the calibration note the answer step writes into the confidence reason
(`calibration NAME@SHA: raw R`), or is the confidence itself for a run made before any table. The fit is
isotonic (pool adjacent violators) with a prior of `--prior` pseudo-answers per tenth of the range lying on
the identity, so thin data moves the map only as far as it shows. `--write` replaces
audiomind/reasoning/data/calibration.json, whose sha256 every calibrated answer then names. Never fit on a
held-out or blind set: those measure the table.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audiomind import calibration as shared
from audiomind.calibration import BINS, fit  # one fit for the answer step and the judges
from audiomind.reasoning import calibration

RAW = re.compile(r"calibration \S+: raw (\d+(?:\.\d+)?)\)\s*$")


def rows(run_dirs: list[str]) -> list[tuple[float, bool]]:
    out = []
    for d in run_dirs:
        for line in (Path(d) / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get("status") != "answered" or r.get("confidence") is None or r.get("correct") is None:
                continue
            m = RAW.search(r.get("confidence_reason") or "")
            out.append((float(m.group(1)) if m else float(r["confidence"]), bool(r["correct"])))
    return out


def measures(pairs: list[tuple[float, bool]]) -> dict:
    n = len(pairs)
    ece = sum(abs(sum(y for _, y in b) / len(b) - sum(p for p, _ in b) / len(b)) * len(b) / n
              for lo, hi in BINS if (b := [(p, y) for p, y in pairs if lo <= p < hi or (hi == 1.0 and p == 1.0)]))
    conf = [y for p, y in pairs if p >= 0.7]
    return {"n": n, "accuracy": round(sum(y for _, y in pairs) / n, 3) if n else None, "ece": round(ece, 3),
            "confident_share": round(len(conf) / n, 3) if n else None,
            "confident_accuracy": round(sum(conf) / len(conf), 3) if conf else None}


def main(argv: list[str]) -> None:
    cmd, args = argv[0], argv[1:]
    runs = [a for a in args if not a.startswith("--") and Path(a, "results.jsonl").exists()]
    data = rows(runs)
    before = measures(data)
    if cmd == "fit":
        prior = float(args[args.index("--prior") + 1]) if "--prior" in args else 4.0
        name = args[args.index("--name") + 1] if "--name" in args else "dev"
        knots = fit(data, prior)
        table = calibration.CalibrationTable(
            name=name, method=f"isotonic (pool adjacent violators), prior {prior:g} identity answers per tenth",
            fitted_on=[f"{Path(r).name}: {len(rows([r]))} answers" for r in runs], knots=knots,
            note="fitted on development runs only by evals/calibrate.py; measure it on held-out runs with `show`")
        interp = lambda x: shared.interpolate(knots, x)  # noqa: E731
        after = measures([(interp(x), y) for x, y in data])
        print(json.dumps({"knots": knots, "in_sample_before": before, "in_sample_after": after}, indent=1))
        if "--write" in args:
            calibration.DATA.write_text(table.model_dump_json(indent=2) + "\n")
            print(f"wrote {calibration.DATA}")
    else:
        after = measures([(calibration.calibrate(x), y) for x, y in data])
        print(json.dumps({"table": calibration.label(), "before": before, "after": after}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
