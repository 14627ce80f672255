"""The rubric judge's coverage stage, measured on the development judge sets: before (the shipped table on the
geometric score, what the judge printed) and after (the score moved toward 0.5 by the rubric's unverified
share, a table fitted on that, then p held toward 0.5 by the same share; `audiomind.judges.rubric.judge`
`coverage`, and the formulas `coverage_raw`, `coverage_p` kept here since the judge replaced them with
`audiomind/judges/rubric/force.py`), per set: decisive share, decisive accuracy, accuracy, ECE.

    .venv/bin/python evals/judges/run_coverage.py

A record of the stage it measured: the judge has since replaced it (audiomind/judges/rubric/force.py, its tables
fitted and measured by evals/judges/calibrate_judges.py), so this script no longer writes a shipped table.

Source: the per-item probabilities the offline judge (rules + cascade) saved when it re-ran sets v3-v13 with the
code of 33e9f62 (`rubric_rerun_dev_v3_v6_33e9f62.json`, `rubric_heldout_v7_v13_once_33e9f62.json`; nothing is
re-run: the sets' Debian sound packages are not on every machine). Each instruction is decomposed again by the
current rule reader; an item is matched to its saved p by its question. An item the saved run did not have (a
clause the reader now reads) counts as measured-not (unverifiable), so the after figures are a floor for it.
v1 and v2 have no per-item rows of this code and are left out.

"After" is the shipped table: fitted on the development sets v3-v6 only (as every judge table here,
evals/judges/calibrate_judges.py), its prior of pseudo-cases at 0.5 chosen by leave-one-set-out log loss over
them; on v7-v13 it is measured, never fitted. "LOSO" beside it: each set's p from a table fitted on all the other
sets of v3-v13 (prior chosen the same way over all of them).
Decisive: p <= 0.2 or p >= 0.8. Accuracy: the judge's own verdict (score >= 0.75 with a verifiable item), which
this stage does not change; p_accuracy: p > 0.5 for aligned, p < 0.5 for misaligned (p = 0.5 counts wrong).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audiomind import calibration

RESULTS = ROOT / "evals" / "judges" / "results"
SOURCES = ("rubric_rerun_dev_v3_v6_33e9f62.json", "rubric_heldout_v7_v13_once_33e9f62.json")
BEFORE_TABLE = ("fc008dd", "audiomind/judges/data/calibration_rubric.json")
OUT = RESULTS / "rubric_coverage_v3_v13.json"
PRIORS = (0.0, 1.0, 2.0, 4.0, 8.0)
DEV_SETS = ("v3", "v4", "v5", "v6")
THRESHOLD = 0.75


def load_rows() -> list[dict[str, Any]]:
    rows = []
    for name in SOURCES:
        data = json.loads((RESULTS / name).read_text(encoding="utf-8"))
        for key, value in data.items():
            m = re.fullmatch(r"(v\d+)_rubric_rows", key)
            if m:
                rows += [{"set": m.group(1), **r} for r in value]
    return rows


def featurise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per row: the saved score, and the current reading's coverage, contradiction and geometric score."""
    from audiomind.judges.rubric.decompose import rule_decompose, rule_filter
    from audiomind.judges.rubric.judge import aggregate, contradicted, coverage
    from audiomind.judges.rubric.verify import ItemVerdict

    cache: dict[str, list[Any]] = {}
    out = []
    for r in rows:
        ins = r["instruction"]
        if ins not in cache:
            cache[ins] = [it for it in rule_filter(ins, rule_decompose(ins)) if it.kept]
        items = cache[ins]
        saved = {i["q"].lower(): float(i["p"]) for i in r["items"]}
        verdicts = []
        unmeasured = 0
        for it in items:
            p = saved.get(it.question.lower())
            unmeasured += p is None
            ok = p is not None and p != 0.5  # (the judge gives an unverifiable item exactly 0.5)
            verdicts.append(ItemVerdict(item_id=it.id, question=it.question, p_yes=0.5 if p is None else p,
                                        source="rules", verdict="unknown" if not ok else "yes" if p >= 0.5 else "no",
                                        verifiable=ok))
        score, _, unver = aggregate(verdicts)
        old_abstain = all(float(i["p"]) == 0.5 for i in r["items"])
        out.append({"set": r["set"], "id": r["id"], "label": bool(r["aligned"]), "kind": r.get("negative_kind"),
                    "old_score": float(r["rubric_score"]), "old_abstain": old_abstain,
                    "score": score, "abstain": len(unver) == len(verdicts), "coverage": coverage(items, verdicts),
                    "contradicted": contradicted(verdicts), "unmeasured": unmeasured, "items": len(items)})
    return out


def ece(ps: list[float], ys: list[bool], bins: int = 10) -> float:
    by: dict[int, list[tuple[float, bool]]] = {}
    for p, y in zip(ps, ys):
        by.setdefault(min(bins - 1, int(p * bins)), []).append((p, y))
    return sum(abs(sum(p for p, _ in v) / len(v) - sum(y for _, y in v) / len(v)) * len(v) for v in by.values()) / len(ps)


def figures(ps: list[float], ys: list[bool], decisions: list[bool]) -> dict[str, Any]:
    dec = [(p, y) for p, y in zip(ps, ys) if p <= 0.2 or p >= 0.8]
    right = sum((p >= 0.8) == y for p, y in dec)
    return {"n": len(ps), "decisive": len(dec), "decisive_share": round(len(dec) / len(ps), 4),
            "decisive_accuracy": round(right / len(dec), 4) if dec else None,
            "accuracy": round(sum(d == y for d, y in zip(decisions, ys)) / len(ps), 4),
            "p_accuracy": round(sum((p > 0.5 and y) or (p < 0.5 and not y) for p, y in zip(ps, ys)) / len(ps), 4),
            "ece": round(ece(ps, ys), 4)}


def coverage_raw(score: float, cover: float, contra: bool) -> float:
    """The coverage stage this script measured (since replaced by audiomind/judges/rubric/force.py): the score moved
    toward 0.5 by the unverified share, unless a verified item contradicts it (full force)."""
    return score if contra or cover >= 1.0 else 0.5 + (score - 0.5) * cover


def coverage_p(p: float, cover: float, contra: bool) -> float:
    """... and the table's p held toward 0.5 by the same share (a contradicted rubric's p below 0.5 kept)."""
    return p if (contra and p < 0.5) or cover >= 1.0 else 0.5 + (p - 0.5) * cover


def raw_of(f: dict[str, Any]) -> float:
    return coverage_raw(f["score"], f["coverage"], f["contradicted"])


def p_after(f: dict[str, Any], knots: list[tuple[float, float]]) -> float:
    if f["abstain"]:
        return calibration.ABSTAIN_P
    return coverage_p(calibration.interpolate(knots, raw_of(f)), f["coverage"], f["contradicted"])


def fit(rows: list[dict[str, Any]], prior: float) -> list[tuple[float, float]]:
    return calibration.fit([(raw_of(f), f["label"]) for f in rows if not f["abstain"]], prior, toward="even")


def loso(feats: list[dict[str, Any]], prior: float) -> dict[str, float]:
    """row id -> p from a table fitted without its set."""
    out = {}
    for s in sorted({f["set"] for f in feats}):
        knots = fit([f for f in feats if f["set"] != s], prior)
        out.update({f"{f['set']}/{f['id']}": p_after(f, knots) for f in feats if f["set"] == s})
    return out


def log_loss(pairs: list[tuple[float, bool]], eps: float = 1e-3) -> float:
    return -sum(math.log(min(1 - eps, max(eps, p)) if y else 1 - min(1 - eps, max(eps, p)))
                for p, y in pairs) / len(pairs)


def edit_figures() -> tuple[dict[str, Any], list[str]]:
    """The edit judge as shipped (unchanged here: its saved rows keep only the effectiveness score, so no stage of
    its aggregation can be re-measured without a re-run): per set, its p through its table."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_calibrate_judges", Path(__file__).with_name("calibrate_judges.py"))
    assert spec is not None and spec.loader is not None
    cj = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cj)
    rows = [cj.EditRow(set=st, **r) for st, rs in cj.saved_rows(set())["edit"].items() for r in rs]
    knots = calibration.load(cj.BEFORE / "calibration_edit.json")[0].knots  # the table of the time
    out: dict[str, Any] = {}
    lines = ["edit judge (unchanged): set n decisive_share decisive_acc acc ECE"]
    sets = sorted({r.set for r in rows}, key=lambda s: int(s[1:]))
    for s, members in ({x: [x] for x in sets} | {"all": sets}).items():
        rs = [r for r in rows if r.set in members]
        ps = [calibration.ABSTAIN_P if r.abstain else calibration.interpolate(knots, r.raw) for r in rs]
        f = figures(ps, [r.label for r in rs], [r.raw >= 0.6 and not r.abstain for r in rs])
        out[s] = f
        da = "--" if f["decisive_accuracy"] is None else f"{f['decisive_accuracy']:.2f}"
        lines.append(f"  {s:5s} {f['n']:4d} {f['decisive_share']:.2f} {da} {f['accuracy']:.2f} {f['ece']:.2f}")
    return out, lines


def choose_prior(feats: list[dict[str, Any]]) -> tuple[float, dict[str, float]]:
    losses = {}
    for prior in PRIORS:
        ps = loso(feats, prior)
        losses[f"{prior:g}"] = round(log_loss([(ps[f"{f['set']}/{f['id']}"], f["label"]) for f in feats]), 4)
    return float(min(losses, key=lambda k: losses[k])), losses


def main(argv: list[str]) -> None:
    from audiomind.judges.rubric.judge import CONTRADICTION_P, ITEM_WEIGHTS

    feats = featurise(load_rows())
    sets = sorted({f["set"] for f in feats}, key=lambda s: int(s[1:]))
    before = calibration.CalibrationTable.model_validate_json(subprocess.run(
        ["git", "show", f"{BEFORE_TABLE[0]}:{BEFORE_TABLE[1]}"], cwd=ROOT, capture_output=True, text=True,
        check=True).stdout)
    dev = [f for f in feats if f["set"] in DEV_SETS]
    prior, losses = choose_prior(dev)
    knots = fit(dev, prior)
    after = {f"{f['set']}/{f['id']}": p_after(f, knots) for f in feats}
    loso_prior, loso_losses = choose_prior(feats)
    loso_p = loso(feats, loso_prior)
    result: dict[str, Any] = {
        "what": __doc__.strip().splitlines()[0], "sources": list(SOURCES), "before_table": ":".join(BEFORE_TABLE),
        "item_weights": ITEM_WEIGHTS, "contradiction_p": CONTRADICTION_P, "prior": prior, "dev_log_loss": losses,
        "loso_prior": loso_prior, "loso_log_loss": loso_losses, "knots": knots,
        "unmeasured_items": sum(f["unmeasured"] for f in feats), "items": sum(f["items"] for f in feats),
        "by_set": {}}
    groups = {s: [s] for s in sets} | {"v3-v6": list(DEV_SETS), "v7-v13": [s for s in sets if s not in DEV_SETS],
                                       "all": sets}
    for s, members in groups.items():
        rs = [f for f in feats if f["set"] in members]
        ys = [f["label"] for f in rs]
        dec = [f["old_score"] >= THRESHOLD and not f["old_abstain"] for f in rs]
        pb = [calibration.ABSTAIN_P if f["old_abstain"] else calibration.interpolate(before.knots, f["old_score"])
              for f in rs]
        pa = [after[f"{f['set']}/{f['id']}"] for f in rs]
        pl = [loso_p[f"{f['set']}/{f['id']}"] for f in rs]
        result["by_set"][s] = {"before": figures(pb, ys, dec), "after": figures(pa, ys, dec),
                               "loso": figures(pl, ys, dec),
                               "mean_coverage": round(sum(f["coverage"] for f in rs) / len(rs), 4)}
    lines = [(f"{'set':6s} {'n':>4s}  {'decisive share':>14s}  {'decisive acc':>12s}  {'acc':>4s}  {'p_acc':>9s}  "
             f"{'ECE':>9s}  {'LOSO dec/acc/ECE':>16s}")]
    for s, v in result["by_set"].items():
        b, a, lo = v["before"], v["after"], v["loso"]

        def fmt(x: float | None) -> str:
            return " -- " if x is None else f"{x:.2f}"

        def pair(k: str, b: dict = b, a: dict = a) -> str:
            return f"{fmt(b[k])}->{fmt(a[k])}"
        lines.append(f"{s:6s} {b['n']:4d}  {pair('decisive_share'):>14s}  {pair('decisive_accuracy'):>12s}  "
                     f"{b['accuracy']:4.2f}  {pair('p_accuracy'):>9s}  {pair('ece'):>9s}  "
                     f"{fmt(lo['decisive_share'])}/{fmt(lo['decisive_accuracy'])}/{fmt(lo['ece'])}")
    result["table"] = lines
    result["edit_by_set"], edit_lines = edit_figures()
    lines += edit_lines
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"prior {prior:g} (dev LOSO log loss {losses}); unmeasured items {result['unmeasured_items']} of "
          f"{result['items']}; wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
