"""Rubric-judge aggregation, measured: the clamped geometric mean vs the arithmetic mean of the items' p(yes),
from the per-item probabilities the judge-set results already hold (no judge is re-run).

    .venv/bin/python evals/judges/run_aggregation.py [--out evals/judges/results/rubric_aggregation_offline.json]

Source: every `*rubric*` row list in evals/judges/results/judges_heldout_v*_offline.json (sets v3 .. v13: id,
`aligned` label, the recorded `rubric_score`, and `items` [{q, p}] as the offline judge (rules + cascade)
produced them at the time). An unverifiable item carries p = 0.5 exactly (verify.py's `_unverifiable`); that
is how the saved rows are read back, and the check below proves it: the geometric aggregate recomputed with
`audiomind.judges.rubric.judge.aggregate` must equal each row's recorded `rubric_score` to 4 places (rows where
it does not are counted and left out). Then both methods are scored with the report's own figures
(`audiomind.bench.report.verdict_scores`): accuracy at the judge's threshold 0.75 (aligned also needs one
verifiable item, as the judge decides), ROC-AUC, ECE over 10 equal bins and the decisive share (p <= 0.2 or
>= 0.8). Development sets (v3 .. v6, read for failures) and the sets judged once (v7 .. v13) are reported
apart, and pooled.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "evals" / "judges" / "results"
THRESHOLD = 0.75
DEV_SETS = ("v3", "v4", "v5", "v6")
"""Sets whose rubric half was read for failures after being judged (sets/*/PROVENANCE.md): development sets."""
UNVERIFIABLE_P = 0.5
TOLERANCE = 5e-5
"""The recorded rubric_score is rounded to 4 places: a recomputed score must lie within half a unit of it."""


def saved_rubric_rows(results: Path = RESULTS) -> dict[str, list[dict]]:
    """set name -> its saved rubric rows (id, aligned, rubric_score, items [{q, p}])."""
    out: dict[str, list[dict]] = {}
    for f in sorted(results.glob("judges_heldout_v*_offline.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, value in data.items():
            m = re.fullmatch(r"(v\d+)_(?:rubric_rows|heldout_rows)", key)
            if not m:
                continue
            rows = value if isinstance(value, list) else value.get("rubric") if isinstance(value, dict) else None
            if rows and all("items" in r and "rubric_score" in r for r in rows):
                out[m.group(1)] = rows
    return dict(sorted(out.items(), key=lambda kv: int(kv[0][1:])))


def verdicts_of(row: dict) -> list:
    from audiomind.judges.rubric.verify import ItemVerdict

    return [ItemVerdict(item_id=i, question=it["q"], verdict="unknown" if it["p"] == UNVERIFIABLE_P else
                        ("yes" if it["p"] > 0.5 else "no"), p_yes=float(it["p"]), source="rules",
                        verifiable=it["p"] != UNVERIFIABLE_P)
            for i, it in enumerate(row["items"])]


def measure(rows_by_set: dict[str, list[dict]]) -> dict:
    from audiomind.bench.report import verdict_scores
    from audiomind.judges.rubric.judge import AGGREGATIONS, aggregate

    per_row: dict[str, list[dict]] = {}
    mismatched: dict[str, list[str]] = {}
    for name, rows in rows_by_set.items():
        for row in rows:
            if not row["items"]:
                mismatched.setdefault(name, []).append(row["id"])
                continue
            vs = verdicts_of(row)
            scores = {m: aggregate(vs, method=m) for m in AGGREGATIONS}
            if abs(scores["geometric"][0] - float(row["rubric_score"])) > TOLERANCE:
                mismatched.setdefault(name, []).append(row["id"])
                continue
            judgeable = any(v.verifiable for v in vs)
            per_row.setdefault(name, []).append({"id": row["id"], "label": bool(row["aligned"]),
                                                 "judgeable": judgeable,
                                                 **{m: s[0] for m, s in scores.items()}})

    def figures(rows: list[dict]) -> dict:
        out = {"n": len(rows), "positives": sum(r["label"] for r in rows)}
        for m in AGGREGATIONS:
            ps = [r[m] for r in rows]
            labels = [r["label"] for r in rows]
            decisions = [r[m] >= THRESHOLD and r["judgeable"] for r in rows]
            v = verdict_scores(m, ps, labels, THRESHOLD, True, decisions=decisions)
            out[m] = {"accuracy": v.accuracy, "roc_auc": None if v.roc_auc is None else round(v.roc_auc, 4),
                      "ece": None if v.ece is None else round(v.ece, 4), "decisive_share": v.decisive_share,
                      "decisive_accuracy": v.decisive_accuracy}
        return out

    groups = {"development (v3-v6)": [r for s in DEV_SETS for r in per_row.get(s, [])],
              "judged once (v7-v13)": [r for s, rs in per_row.items() if s not in DEV_SETS for r in rs]}
    groups["all"] = groups["development (v3-v6)"] + groups["judged once (v7-v13)"]
    return {"what": __doc__.strip().splitlines()[0], "threshold": THRESHOLD,
            "rows_read": {s: len(r) for s, r in rows_by_set.items()},
            "rows_not_reproduced": {s: len(ids) for s, ids in mismatched.items()},
            "by_set": {s: figures(rs) for s, rs in per_row.items()},
            "groups": {g: figures(rs) for g, rs in groups.items()}}


def table(result: dict) -> str:
    lines = ["| rows | method | n | accuracy % | ROC-AUC | ECE | decisive % (their accuracy %) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for group, f in result["groups"].items():
        for m in ("geometric", "mean"):
            g = f[m]
            lines.append(f"| {group} | {m} | {f['n']} | {g['accuracy']} | {g['roc_auc']} | {g['ece']} | "
                         f"{g['decisive_share']} ({g['decisive_accuracy']}) |")
    return "\n".join(lines)


def main(out: Path = typer.Option(RESULTS / "rubric_aggregation_offline.json", help="where to write the figures")):
    result = measure(saved_rubric_rows())
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(result))
    print(f"rows read {result['rows_read']}; not reproduced (left out) {result['rows_not_reproduced']}; wrote {out}")


if __name__ == "__main__":
    typer.run(main)
