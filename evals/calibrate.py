"""Fit the answer step's calibration table on development runs only, and show its effect on other runs.

    .venv/bin/python evals/calibrate.py fit RUN_DIR [RUN_DIR ...] [--name NAME] [--prior 4] [--groups said,other] [--write]
    .venv/bin/python evals/calibrate.py show RUN_DIR [RUN_DIR ...]      # ECE etc. before/after the current table

Two tables are fitted: one for answers decided by a check of what was said (reasoning/calibration.py SAID: the
check is read from the rationale's leading '[method]'), one for every other answer.
A run is what `audiomind bench run` wrote (results.jsonl). Each answered row gives (raw confidence, right): the
raw value is read from the calibration note the answer step writes into the confidence reason
(`calibration NAME@SHA: raw R`), or is the confidence itself for a run made before any table. The fit is
isotonic (pool adjacent violators) with a prior of `--prior` pseudo-answers per tenth of the range lying on
the identity, so thin data moves the map only as far as it shows. `--write` replaces
audiomind/reasoning/data/calibration.json and calibration_said.json, whose sha256 every calibrated answer then
names. Never fit on a
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


METHOD = re.compile(r"^\[([^\]]+)\]")
"""The deciding check, as the answer step writes it at the start of the rationale ('[transcript_match] ...')."""


def said(r: dict) -> bool:
    """Whether a check of what was said decided the answer (its own table: reasoning/calibration.py SAID)."""
    m = METHOD.match(r.get("rationale") or "")
    return bool(m) and m.group(1) in calibration.SAID


def rows(run_dirs: list[str], group: str | None = None) -> list[tuple[float, bool]]:
    """(raw confidence, right) of every answered row; `group` 'said' or 'other' keeps those decided by a check
    of what was said, or all the others."""
    out = []
    for d in run_dirs:
        for line in (Path(d) / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get("status") != "answered" or r.get("confidence") is None or r.get("correct") is None:
                continue
            if group is not None and said(r) != (group == "said"):
                continue
            m = RAW.search(r.get("confidence_reason") or "")
            out.append((float(m.group(1)) if m else float(r["confidence"]), bool(r["correct"])))
    return out


def shipped_knots(group: str) -> list[tuple[float, float]]:
    """The knots of the shipped table of a group ('said' or 'other')."""
    return shared.load(calibration.SAID_DATA if group == "said" else calibration.DATA)[0].knots


def calibrated_rows(run_dirs: list[str], tables: dict[str, list[tuple[float, float]]] | None = None
                    ) -> list[tuple[float, bool]]:
    """Every answered row's raw score through the table of its group (the shipped tables unless given)."""
    out = []
    for group in ("said", "other"):
        knots = tables[group] if tables else shipped_knots(group)
        out += [(shared.interpolate(knots, x), y) for x, y in rows(run_dirs, group)]
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
        groups = args[args.index("--groups") + 1].split(",") if "--groups" in args else ["said", "other"]
        knots = {g: fit(rows(runs, g), prior) if g in groups else shipped_knots(g) for g in ("said", "other")}
        after = measures(calibrated_rows(runs, knots))
        print(json.dumps({"knots": knots, "in_sample_before": before, "in_sample_after": after}, indent=1))
        if "--write" in args:
            for group, path in (("other", calibration.DATA), ("said", calibration.SAID_DATA)):
                if group not in groups:
                    continue
                what = "checks of what was said" if group == "said" else "every other decision"
                table = calibration.CalibrationTable(
                    name=f"{name}-{group}", knots=knots[group],
                    method=f"isotonic (pool adjacent violators), prior {prior:g} identity answers per tenth",
                    fitted_on=[f"{Path(r).name}: {len(rows([r], group))} answers" for r in runs],
                    note=(f"{what}; fitted on development runs only by evals/calibrate.py; measure it on held-out "
                          "runs with `show`"))
                path.write_text(table.model_dump_json(indent=2) + "\n")
                print(f"wrote {path}")
    else:
        after = measures(calibrated_rows(runs))
        print(json.dumps({"tables": [shared.label_of(calibration.DATA), shared.label_of(calibration.SAID_DATA)], "before": before,
                          "after": after}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
