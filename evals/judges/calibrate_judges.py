"""Calibrate the judges' verdict probabilities on development sets only, and show the effect on the held-out sets.

    .venv/bin/python evals/judges/calibrate_judges.py fit [--judge rubric|edit] [--prior auto|P] [--write]
    .venv/bin/python evals/judges/calibrate_judges.py show [--out evals/judges/results/judge_calibration_offline.json]
    ... [--rubric-results FILE ...]   (rubric rows of a re-run, e.g. evals/judges/results/rubric_rerun_*.json)

Source: the per-item results the offline judges (rules + cascade) saved for judge sets v3 .. v13
(`evals/judges/results/judges_heldout_v*_offline.json`; nothing is re-run). Sets v3 .. v6 are development (read
for failures after being judged); v7 .. v13 were judged once and are held out: they measure a table, never fit it.

- rubric judge: the verdict's p is the geometric rubric score, recomputed from each row's item probabilities
  with the judge's own `aggregate` (rows whose recomputed score is not their recorded `rubric_score` to 4 places
  are left out, as run_aggregation.py does); label: aligned. A row with no verifiable item is an abstention.
  The verdict: aligned at raw score >= 0.75 with a verifiable item.
- edit judge: the verdict's p is the measured effectiveness score; label: the real edit (the no-op and the wrong
  edits of the same original are negatives; v3 saved no edit rows). The verdict: effective at raw >= 0.6. A row
  at exactly 0.5 is read as an abstention (the judge's "unverifiable").
- AURA: no labelled development set exists (AQEval's 18 constructed rows are a correlation check with no split),
  so its table is the identity, named as such; `fit --judge aura --write` rewrites it so.

The fit is `audiomind.calibration.fit` (the answer step's isotonic fit, with its prior of pseudo-cases per tenth
at 0.5 rather than on the identity: see TOWARD) on the development rows that are not abstentions; `--prior auto` picks the prior from 0, 1, 2, 4, 8
by leave-one-set-out log loss over the development sets alone. Abstentions stay p = 0.5 and are never decisive.
The verdict (the decision) is taken on the raw score as before, so its accuracy does not change; the map is
monotone, so ROC-AUC changes only by the ties its flat stretches make. What changes: ECE and which verdicts are
decisive (p <= 0.2 or >= 0.8). `show` tables accuracy, ROC-AUC, ECE, decisive share and decisive accuracy before
and after the shipped tables (audiomind/judges/data/calibration_*.json), per judge, on development and held-out
rows, and writes them to --out.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel

from audiomind import calibration
from audiomind.bench.report import verdict_scores

RESULTS = ROOT / "evals" / "judges" / "results"
OUT = RESULTS / "judge_calibration_offline.json"
DEV_SETS = ("v3", "v4", "v5", "v6")
PRIORS = (0.0, 1.0, 2.0, 4.0, 8.0)
TOWARD = "even"
"""A verdict's pseudo-cases lie at 0.5: where development verdicts are few, the judge is undecided, not as sure
as its raw score (the identity, the answer step's prior, let the edit judge's thin high scores stand at 0.8-0.9,
and a quarter of those were wrong on held-out sets)."""
THRESHOLD = {"rubric": 0.75, "edit": 0.6}
"""Each judge's own decision threshold on its raw score (rubric: also needs a verifiable item)."""
USE = {"rubric": "judge_rubric", "edit": "judge_edit", "aura": "judge_aura"}
EPS = 1e-3


class Row(BaseModel):
    set: str
    id: str
    raw: float
    label: bool
    abstain: bool = False
    cover: float = 1.0  # rubric: the share of the rubric's weight verified (the judge's `coverage`)
    contra: bool = False  # rubric: a verified item contradicts it (the judge's `contradicted`)


def _aggregation_script() -> Any:
    spec = importlib.util.spec_from_file_location("_run_aggregation", Path(__file__).with_name("run_aggregation.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rerun_rubric_rows(path: Path) -> dict[str, list[dict]]:
    """set name -> the rubric rows a re-run file holds (keys `vN_rubric_rows`, rows as run_bench.py writes them:
    id, aligned, rubric_score, items [{q, p}])."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for key, value in data.items():
        m = re.fullmatch(r"(v\d+)_rubric_rows", key)
        if m and isinstance(value, list):
            out[m.group(1)] = value
    if not out:
        raise SystemExit(f"{path.name}: no 'vN_rubric_rows' lists in it")
    return out


RUBRIC_RESULTS: list[Path] = []
"""Re-run files whose rows replace the saved rubric rows of the sets they hold (`--rubric-results`)."""


def rubric_rows(results: Path = RESULTS) -> list[Row]:
    from audiomind.judges.rubric.judge import aggregate, contradicted, question_weight

    agg = _aggregation_script()
    out = []
    saved = agg.saved_rubric_rows(results)
    for f in RUBRIC_RESULTS:
        saved.update(rerun_rubric_rows(f))
    for name, rows in saved.items():
        for r in rows:
            if not r["items"]:
                continue
            vs = agg.verdicts_of(r)
            score = aggregate(vs, method="geometric")[0]
            if abs(score - float(r["rubric_score"])) > agg.TOLERANCE:
                continue
            weights = [question_weight(v.question) for v in vs]
            cover = sum(w for w, v in zip(weights, vs) if v.verifiable) / sum(weights)
            out.append(Row(set=name, id=r["id"], raw=score, label=bool(r["aligned"]),
                           abstain=not any(v.verifiable for v in vs), cover=cover, contra=contradicted(vs)))
    return out


def edit_rows(results: Path = RESULTS) -> list[Row]:
    out = []
    for f in sorted(results.glob("judges_heldout_v*_offline.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, value in data.items():
            m = re.fullmatch(r"(v\d+)_(edit_rows|heldout_rows)", key)
            if not m:
                continue
            rows = value if isinstance(value, list) and m.group(2) == "edit_rows" else (
                value.get("edit") if isinstance(value, dict) else None)
            for r in rows or []:
                variant = r.get("variant") or str(r["id"]).rpartition(":")[2]
                rid = r.get("id") or f"{r['base']}:{variant}"
                eff = float(r["effectiveness"])
                out.append(Row(set=m.group(1), id=rid, raw=eff, label=variant == "real",
                               abstain=eff == calibration.ABSTAIN_P))
    return out


def rows_of(judge: str, results: Path = RESULTS) -> list[Row]:
    return {"rubric": rubric_rows, "edit": edit_rows}[judge](results)


def is_dev(row: Row) -> bool:
    return row.set in DEV_SETS


def _p(row: Row, knots: list[tuple[float, float]] | None) -> float:
    from audiomind.judges.rubric.judge import coverage_p

    if row.abstain:
        return calibration.ABSTAIN_P
    if knots is None:
        return row.raw
    # (the judge's coverage stage around the table; an edit row, or a fully verified rubric, passes through)
    return coverage_p(calibration.interpolate(knots, _table_raw(row)), row.cover, row.contra)


def _table_raw(row: Row) -> float:
    """The raw score a table reads: the score moved toward 0.5 by the unverified share (judge `coverage_raw`)."""
    from audiomind.judges.rubric.judge import coverage_raw

    return coverage_raw(row.raw, row.cover, row.contra)


def decision(judge: str, row: Row) -> bool:
    """The judge's own verdict, taken on the raw score (unchanged by calibration)."""
    return row.raw >= THRESHOLD[judge] and not row.abstain


def figures(judge: str, rows: list[Row], knots: list[tuple[float, float]] | None) -> dict[str, Any]:
    """accuracy (of the judge's verdict), ROC-AUC, ECE, decisive share and accuracy (percent) of p."""
    ps = [_p(r, knots) for r in rows]
    v = verdict_scores(judge, ps, [r.label for r in rows], THRESHOLD[judge], True,
                       decisions=[decision(judge, r) for r in rows])
    return {"n": v.n, "positives": v.positives, "abstentions": sum(r.abstain for r in rows),
            "accuracy": v.accuracy, "roc_auc": v.roc_auc, "ece": v.ece, "decisive": v.decisive,
            "decisive_share": v.decisive_share, "decisive_correct": v.decisive_correct,
            "decisive_accuracy": v.decisive_accuracy}


def log_loss(pairs: list[tuple[float, bool]]) -> float:
    return -sum(math.log(min(1 - EPS, max(EPS, p)) if y else 1 - min(1 - EPS, max(EPS, p))) for p, y in pairs) / len(pairs)


def choose_prior(dev: list[Row]) -> tuple[float, dict[str, float]]:
    """The prior with the lowest leave-one-set-out log loss over the development sets (ties: the larger prior)."""
    sets = sorted({r.set for r in dev})
    losses: dict[str, float] = {}
    for prior in PRIORS:
        pairs = []
        for s in sets:
            train = [(_table_raw(r), r.label) for r in dev if r.set != s and not r.abstain]
            if not train:
                continue
            knots = calibration.fit(train, prior, TOWARD)
            pairs += [(_p(r, knots), r.label) for r in dev if r.set == s]
        losses[f"{prior:g}"] = round(log_loss(pairs), 4) if pairs else math.inf
    best = min(PRIORS, key=lambda p: (losses[f"{p:g}"], -p))
    return best, losses


def fit_table(judge: str, rows: list[Row], prior: float | None = None) -> tuple[calibration.CalibrationTable, dict]:
    """The table fitted on the development rows of `rows` (held-out rows are never read here)."""
    dev = [r for r in rows if is_dev(r)]
    losses: dict[str, float] = {}
    if prior is None:
        prior, losses = choose_prior(dev)
    data = [(_table_raw(r), r.label) for r in dev if not r.abstain]
    knots = calibration.fit(data, prior, TOWARD)
    counts = {s: sum(1 for r in dev if r.set == s and not r.abstain) for s in sorted({r.set for r in dev})}
    what = {"rubric": "geometric rubric score (rule item judge) -> share aligned",
            "edit": "measured effectiveness score -> share that were the real edit"}[judge]
    table = calibration.CalibrationTable(
        name=f"judge-{judge}-dev-v3-v6", knots=knots,
        method=(f"isotonic (pool adjacent violators), prior {prior:g} cases at 0.5 per tenth"
                + (f" (chosen by leave-one-set-out log loss on the development sets: {losses})" if losses else "")),
        fitted_on=[f"{s}: {n} verdicts" for s, n in counts.items()],
        note=(f"{what}; fitted on development sets only by evals/judges/calibrate_judges.py (abstentions excluded, "
              "they stay 0.5); measured on held-out v7-v13 with `show`"
              + (f"; rubric rows of the re-run {', '.join(f.name for f in RUBRIC_RESULTS)}"
                 if judge == "rubric" and RUBRIC_RESULTS else "")))
    return table, {"prior": prior, "loo_log_loss": losses, "dev_rows": len(data)}


def identity_table() -> calibration.CalibrationTable:
    return calibration.CalibrationTable(
        name="judge-aura-identity", method="identity: no labelled development set for AURA yet",
        fitted_on=[], knots=[(0.0, 0.0), (1.0, 1.0)],
        note=("AURA S stands as it is: AQEval's 18 constructed rows (evals/judges/run_aqeval.py) are a correlation "
              "check with no development / held-out split; fit a table here once a labelled development run exists"))


def write_table(judge: str, table: calibration.CalibrationTable) -> Path:
    path = calibration.path_of(USE[judge])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table.model_dump_json(indent=2) + "\n", encoding="utf-8")
    calibration.load.cache_clear()
    return path


def show(results: Path = RESULTS) -> dict[str, Any]:
    """Before / after the shipped tables, per judge, on the development and the held-out rows."""
    out: dict[str, Any] = {"what": __doc__.strip().splitlines()[0], "decisive": "p <= 0.2 or p >= 0.8",
                           "dev_sets": list(DEV_SETS), "judges": {}}
    for judge in ("rubric", "edit"):
        rows = rows_of(judge, results)
        t, sha = calibration.load(calibration.path_of(USE[judge]))
        groups = {"development (v3-v6)": [r for r in rows if is_dev(r)],
                  "held-out (v7-v13)": [r for r in rows if not is_dev(r)]}
        entry: dict[str, Any] = {"table": f"{t.name}@{sha[:12]}", "threshold": THRESHOLD[judge], "groups": {}}
        if judge == "rubric" and RUBRIC_RESULTS:
            entry["rubric_results"] = [str(f.resolve().relative_to(ROOT)) if f.resolve().is_relative_to(ROOT)
                                       else f.name for f in RUBRIC_RESULTS]
        for g, rs in groups.items():
            entry["groups"][g] = {"before": figures(judge, rs, None), "after": figures(judge, rs, t.knots)}
        held = groups["held-out (v7-v13)"]
        entry["held_out_by_set"] = {s: {"before": figures(judge, [r for r in held if r.set == s], None),
                                        "after": figures(judge, [r for r in held if r.set == s], t.knots)}
                                    for s in sorted({r.set for r in held}, key=lambda s: int(s[1:]))}
        out["judges"][judge] = entry
    t, sha = calibration.load(calibration.path_of("judge_aura"))
    out["judges"]["aura"] = {"table": f"{t.name}@{sha[:12]}", "note": t.note}
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["| judge | rows | table | n (abstained) | accuracy % | ROC-AUC | ECE | decisive % | decisive accuracy % |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for judge, e in result["judges"].items():
        for g, ba in e.get("groups", {}).items():
            for when in ("before", "after"):
                f = ba[when]
                lines.append(f"| {judge} | {g} | {when} | {f['n']} ({f['abstentions']}) | {f['accuracy']} | "
                             f"{f['roc_auc']} | {f['ece']} | {f['decisive_share']} | {f['decisive_accuracy']} "
                             f"({f['decisive_correct']}/{f['decisive']}) |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in ("fit", "show"):
        raise SystemExit(__doc__)
    cmd, args = argv[0], argv[1:]

    def opt(name: str, default: str | None = None) -> str | None:
        return args[args.index(name) + 1] if name in args else default

    RUBRIC_RESULTS.extend(Path(args[i + 1]) for i, a in enumerate(args[:-1]) if a == "--rubric-results")

    if cmd == "fit":
        judges = [opt("--judge")] if opt("--judge") else ["rubric", "edit", "aura"]
        prior_arg = opt("--prior", "auto")
        for judge in judges:
            assert judge is not None
            if judge == "aura":
                table, info = identity_table(), {"prior": None}
            elif judge in THRESHOLD:
                rows = rows_of(judge)
                table, info = fit_table(judge, rows, None if prior_arg == "auto" else float(prior_arg or 4))
                info["in_sample"] = {"before": figures(judge, [r for r in rows if is_dev(r)], None),
                                     "after": figures(judge, [r for r in rows if is_dev(r)], table.knots)}
            else:
                raise SystemExit(f"unknown judge {judge!r}: rubric, edit or aura")
            print(json.dumps({"judge": judge, "knots": table.knots, **info}, indent=1))
            if "--write" in args:
                print(f"wrote {write_table(judge, table).relative_to(ROOT)}")
    else:
        out = Path(opt("--out", str(OUT)) or OUT)
        result = show()
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(markdown(result))
        print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
