"""Fit the answer step's calibration tables on development rows, cross-validated across sets, and measure every
confidence stage's effect.

    .venv/bin/python evals/confidence/fit.py ROWS.jsonl [--min-family 120] [--records fit|off|as-run]
        [--choose-on PREFIXES] [--write] [--json OUT.json]

ROWS.jsonl is what evals/confidence/redecide.py writes from development runs (never a blind set: those measure
the tables). Each row's raw score is the input of its ledger's `calibration` step, re-made with the deciding
check's record factor (audiomind.reasoning.records) where records are fitted; its family is
audiomind.reasoning.calibration.family of the deciding check.

The check records and the tables are fitted together: for each prior strength tried (none, and STRENGTHS), every
set's answers are printed by records and tables fitted without that set; the strength whose held-out Brier score
is lowest on the sets named by --choose-on (default: the retired blind sets) is kept.

The fit is audiomind.calibration.fit_bounded (a monotone map whose slope is bounded: never a switch), its slope
bound and prior chosen by leave-one-set-out Brier score (audiomind.calibration.choose), fitted for the number
that is printed: each row held toward chance by the share of it the competence stage keeps (`--competence fit`,
the default; `after` fits the map alone, `off` measures with the competence stage left out). A pooled table is
fitted on every row; a family gets a table of its own only when it has at least --min-family rows in at least
three sets and its own table beats the pooled one on that family's held-out rows. Printed: per stage, the
rows it applied to and their accuracy; per family, the rows; per set, the held-out figures of the chosen tables
(ECE counting under- and over-confidence, the share and accuracy of answers at >= 0.7) against the tables in
the package now. `--write` replaces the tables (audiomind/reasoning/data/calibration*.json) and the check records
(audiomind/reasoning/data/check_records.json) and prints the entries audiomind.calibration.TABLES must list.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from audiomind import calibration as shared
from audiomind.reasoning import answer, calibration, ledger, records
from audiomind.state import ConfidenceParameters

CONFIDENT_AT = 0.7
BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0001))  # as evals/unseen/score.py


def ece(pairs: list[tuple[float, bool]]) -> float:
    out = 0.0
    for lo, hi in BINS:
        inb = [(p, y) for p, y in pairs if lo <= p < hi]
        if inb:
            out += len(inb) / len(pairs) * abs(sum(y for _, y in inb) / len(inb) - sum(p for p, _ in inb) / len(inb))
    return out


def summary(pairs: list[tuple[float, bool]]) -> dict:
    conf = [(p, y) for p, y in pairs if p >= CONFIDENT_AT]
    return {"n": len(pairs), "accuracy": round(sum(y for _, y in pairs) / max(1, len(pairs)), 3),
            "brier": round(sum((p - y) ** 2 for p, y in pairs) / max(1, len(pairs)), 4),
            "ece": round(ece(pairs), 3) if pairs else None,
            "confident_share": round(len(conf) / max(1, len(pairs)), 3),
            "confident_right": f"{sum(y for _, y in conf)}/{len(conf)}"}


def raw_of(row: dict) -> float | None:
    return next((s["input"] for s in row["steps"] if s["stage"] == "calibration"), None)


def kept_share(row: dict) -> tuple[float, float]:
    """(the share above chance the competence stage kept, chance) for a row (1 when it has no such stage)."""
    chance = 1.0 / max(1, row.get("n_choices") or 1)
    for s in row["steps"]:
        if s["stage"] == "competence" and s["op"] == "shrink":
            above = s["input"] - chance
            return (max(0.0, min(1.0, (s["output"] - chance) / above)) if above > 1e-9 else 1.0), chance
    return 1.0, chance


Records = dict[str, records.CheckRecord]


def claim_of(row: dict) -> tuple[str | None, float | None]:
    """(the deciding check, its evidence before its record factor) for a row decided by a check or a step."""
    ev = next((s for s in row["steps"] if s["stage"] == "evidence"), None)
    check = (ev or {}).get("inputs", {}).get("check")
    if ev is None or not check or ev["op"] not in ("product", "set"):
        return None, None
    return str(check), ev["output"] / float(ev["inputs"].get("record_factor", 1.0) or 1.0)


def records_of(rs: list[dict]) -> Records:
    """Each check's record on rows: answers decided, right, mean claim."""
    acc: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for r in rs:
        check, claim = claim_of(r)
        if check is not None and claim is not None and claim > 0:
            acc[check].append((claim, bool(r["correct"])))
    return {c: records.CheckRecord(n=len(v), right=sum(y for _, y in v), claimed=min(1.0, sum(x for x, _ in v) / len(v)))
            for c, v in sorted(acc.items())}


def raw_with(row: dict, recs: Records | None, strength: float) -> float:
    """The row's raw score (the calibration step's input) with its check's record factor from `recs` (None: as
    recorded): the evidence re-made and the later raw steps (agreement, coverage) re-applied as recorded."""
    if recs is None:
        return float(raw_of(row) or 0.0)
    check, claim = claim_of(row)
    if check is None or claim is None:
        return float(raw_of(row) or 0.0)
    rec = recs.get(check)
    factor = records.record_factor(rec.right, rec.n, rec.claimed, strength) if rec else 1.0
    x = claim * factor
    steps = row["steps"]
    i = next(i for i, s in enumerate(steps) if s["stage"] == "evidence")
    for s in steps[i + 1:]:
        if s["stage"] == "calibration":
            break
        params = dict(s["parameters"])
        if s["stage"] == "coverage" and s["op"] == "cap":  # the cap is on the claim's scale: x the record
            params["bound"] = float(s["inputs"].get("cap", answer.COVERAGE_CAP)) * factor
        x = ledger.apply(s["op"], ConfidenceParameters(**params), x)
    return x


def fit_rows(rs: list[dict], params: dict, mode: str, raw=raw_of) -> list[tuple[float, float]]:
    """The bounded-slope map fitted on rows: for the probability the map gives (`after`), or for the one printed
    after the competence stage (`fit`: each row held toward chance by the share it keeps), or with the competence
    stage left out (`off`, the same fit as `after`); `raw` gives each row's raw score."""
    data = [(float(raw(r) or 0.0), float(r["correct"])) for r in rs]
    if mode != "fit":
        return shared.fit_bounded(data, **params)
    ws = [kept_share(r) for r in rs]
    return shared.fit_bounded(data, hold=[w for w, _ in ws], toward=[t for _, t in ws], **params)


def after(row: dict, p: float, competence: bool = True) -> float:
    """The printed confidence when the calibration step gives `p`: the later stages (competence, tool failure)
    re-applied in their recorded proportion (a shrink keeps the same share above chance, a cap its bound);
    `competence` False leaves the competence stage out."""
    steps = row["steps"]
    i = next(i for i, s in enumerate(steps) if s["stage"] == "calibration")
    x = p
    chance = 1.0 / max(1, row.get("n_choices") or 1)
    for s in steps[i + 1:]:
        if s["op"] == "shrink" and not competence:
            continue
        if s["op"] == "shrink":
            w, _ = kept_share(row)  # the share above chance the recorded shrink kept, re-applied to x
            x = x if x <= chance else chance + (x - chance) * w
        elif s["op"] == "cap":
            x = min(x, s["output"] if s["output"] < s["input"] else 1.0)
    return x


STRENGTHS = (2.0, 5.0, 10.0, 20.0, 40.0)
"""The record tables' prior strengths tried (answers' worth of prior at a check's claim)."""


def tables_for(rows: list[dict], raw, min_family: int, mode: str) -> tuple[dict, dict, dict]:
    """(pooled params, per-family decisions, the tables) fitted on `rows` with raw scores from `raw`."""
    def groups(rs: list[dict]) -> dict[str, list[tuple[float, bool]]]:
        g: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        for r in rs:
            g[r["set"]].append((float(raw(r)), bool(r["correct"])))
        return dict(g)

    every_set = groups(rows)
    params, _grid = shared.choose(every_set)
    tables = {"answer": fit_rows(rows, params, mode, raw)}
    own: dict[str, dict] = {}
    by_family: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_family[calibration.family(r["method"])].append(r)
    for fam, rs in sorted(by_family.items()):
        g = groups(rs)
        if len(rs) < min_family or len(g) < 3:
            continue
        fparams, _ = shared.choose(g)
        fam_cv = shared.cross_validate(g, **fparams)
        # the pooled table's held-out figures on this family's rows: fitted without the held-out set
        pooled_on_fam = []
        for s, held in g.items():
            train = [pt for h, pts in every_set.items() if h != s for pt in pts]
            knots = shared.fit_bounded(train, **params)
            pooled_on_fam += [(shared.interpolate(knots, x), y) for x, y in held]
        own[fam] = {"params": fparams, "own_brier": fam_cv["pooled"]["brier"],
                    "pooled_brier": round(shared.brier(pooled_on_fam), 4),
                    "kept": fam_cv["pooled"]["brier"] < shared.brier(pooled_on_fam) - 1e-4}
        if own[fam]["kept"]:
            tables[f"answer_{fam}"] = fit_rows(rs, fparams, mode, raw)
    return params, own, tables


def heldout(rows: list[dict], set_name: str, strength: float | None, params: dict, own: dict,
            mode: str, mode_records: str) -> list[tuple[float, bool]]:
    """The printed confidence of one set's rows with the records and tables fitted without that set."""
    train = [r for r in rows if r["set"] != set_name]
    recs = records_of(train) if strength else ({} if mode_records != "as-run" else None)

    def raw(r: dict) -> float:
        return raw_with(r, recs, strength or 1.0)

    pooled = fit_rows(train, params, mode, raw)
    fams = {f: fit_rows([r for r in train if calibration.family(r["method"]) == f], own[f]["params"], mode, raw)
            for f in own if own[f]["kept"]}
    res = []
    for r in rows:
        if r["set"] != set_name:
            continue
        knots = fams.get(calibration.family(r["method"]), pooled)
        res.append((after(r, shared.interpolate(knots, raw(r)), mode != "off"), bool(r["correct"])))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--min-family", type=int, default=120)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--competence", choices=("after", "fit", "off"), default="fit",
                    help="fit the map for the probability before the competence stage (after), for the one printed "
                         "after it (fit), or measure with the competence stage left out (off)")
    ap.add_argument("--records", choices=("fit", "off", "as-run"), default="fit",
                    help="each check's record factor: fitted with the tables, the prior strength chosen by "
                         "leave-one-set-out Brier (fit); none (off); as the rows were decided (as-run)")
    ap.add_argument("--choose-on", default="reasoning_,perception_",
                    help="comma-separated set-name prefixes whose held-out Brier chooses the records' prior strength "
                         "(default: the retired blind sets, written of kinds the checks were not built for; the "
                         "synthetic splits are the checks' own kinds)")
    a = ap.parse_args()
    rows = [json.loads(line) for line in a.rows.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if raw_of(r) is not None]
    out: dict = {"rows": len(rows), "sets": sorted({r["set"] for r in rows})}

    # what each stage did
    stages: dict[str, list[bool]] = defaultdict(list)
    lowered: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        for s in r["steps"]:
            stages[s["stage"]].append(r["correct"])
            if s["input"] is not None and s["output"] < s["input"] - 1e-9:
                lowered[s["stage"]].append(r["correct"])
    out["stages"] = {k: {"applied": len(v), "right": round(sum(v) / len(v), 3),
                         "lowered": len(lowered[k]),
                         "lowered_right": round(sum(lowered[k]) / len(lowered[k]), 3) if lowered[k] else None}
                     for k, v in stages.items()}
    gaps: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        cov = [s for s in r["steps"] if s["stage"] == "coverage"]
        gaps["with a coverage gap" if cov else "no coverage gap"].append(r["correct"])
    out["coverage"] = {k: {"n": len(v), "right": round(sum(v) / len(v), 3)} for k, v in gaps.items()}
    by_family: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_family[calibration.family(r["method"])].append(r)
    out["families"] = {f: {"n": len(v), "right": round(sum(x["correct"] for x in v) / len(v), 3),
                           "sets": len({x["set"] for x in v})} for f, v in sorted(by_family.items())}

    # the record's prior strength: each candidate measured leave-one-set-out (records and tables without the set)
    candidates: list[float | None] = {"fit": [None, *STRENGTHS], "off": [None], "as-run": [None]}[a.records]
    trials = {}
    for m in candidates:
        full = records_of(rows) if m else None

        def raw(r: dict, full: Records | None = full, m: float | None = m) -> float:
            if a.records == "as-run":
                return float(raw_of(r) or 0.0)
            return raw_with(r, full or {}, m or 1.0)  # no records: every factor 1, the construction reliability
        params, own, tables = tables_for(rows, raw, a.min_family, a.competence)
        per_set = {s: heldout(rows, s, m, params, own, a.competence, a.records) for s in out["sets"]}
        pairs = [p for v in per_set.values() for p in v]
        trials[m] = {"params": params, "own": own, "tables": tables, "per_set": per_set, "full": full,
                     "brier": shared.brier([(p, float(y)) for p, y in pairs]), "summary": summary(pairs),
                     "sets": {s: summary(v) for s, v in per_set.items()}}
        print(f"records prior strength {m}: held-out {trials[m]['summary']}", file=sys.stderr)
    chosen_on = [s for s in out["sets"] if s.startswith(tuple(a.choose_on.split(",")))] or out["sets"]

    def brier_on(m: float | None) -> float:
        pairs = [p for s in chosen_on for p in trials[m]["per_set"][s]]
        return shared.brier([(p, float(y)) for p, y in pairs])

    best = min(trials, key=brier_on)
    out["records_chosen_on"] = chosen_on
    t = trials[best]
    params, own, tables = t["params"], t["own"], t["tables"]
    out["records_prior_strength"] = best
    out["records_trials"] = {str(m): {"brier_chosen_on": round(brier_on(m), 4), **v["summary"], "sets": v["sets"]}
                             for m, v in trials.items()}
    out["pooled_params"], out["family_tables"] = params, own
    if best:
        out["records"] = {c: {**r.model_dump(), "factor": round(records.record_factor(r.right, r.n, r.claimed, best), 3)}
                          for c, r in t["full"].items()}

    per_set, now_set = {}, {}
    all_held, all_now = [], []
    for s in out["sets"]:
        h = t["per_set"][s]
        n = [(r["confidence"], bool(r["correct"])) for r in rows if r["set"] == s]
        per_set[s], now_set[s] = summary(h), summary(n)
        all_held += h
        all_now += n
    out["per_set_heldout"] = per_set
    out["per_set_current_tables"] = now_set
    out["all_heldout"], out["all_current_tables"] = summary(all_held), summary(all_now)

    print(json.dumps({k: out[k] for k in ("rows", "stages", "coverage", "families", "records_prior_strength",
                                          "records_chosen_on", "pooled_params", "family_tables")}, indent=1))
    print(f"{'set':28} {'held-out: acc  ECE  conf share/right':40} {'current tables: ECE  conf':30}")
    for s in out["sets"]:
        h, n = per_set[s], now_set[s]
        print(f"{s:28} {h['accuracy']:.3f} {h['ece']:.3f} {h['confident_share']:.3f} {h['confident_right']:>8}"
              f"{'':14} {n['ece']:.3f} {n['confident_share']:.3f} {n['confident_right']:>8}")
    h, n = out["all_heldout"], out["all_current_tables"]
    print(f"{'ALL':28} {h['accuracy']:.3f} {h['ece']:.3f} {h['confident_share']:.3f} {h['confident_right']:>8}"
          f"{'':14} {n['ece']:.3f} {n['confident_share']:.3f} {n['confident_right']:>8}")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    if a.write:
        stamp = datetime.date.today().isoformat()
        if a.records == "fit":
            recs = records.CheckRecords(
                name=f"dev-{stamp}-records" if best else "none",
                method=(f"each check's development record, prior strength {best} answers at its claim, chosen by "
                        "leave-one-set-out Brier with the calibration tables" if best else
                        "no records: leave-one-set-out Brier chose none"),
                prior_strength=best or 1.0, fitted_on=out["sets"], checks=t["full"] or {})
            sha = records.write(records.DATA, recs)
            print(f"wrote {records.DATA.relative_to(ROOT)} ({recs.name}@{sha[:12]})")
        for use, knots in tables.items():
            fam = use.split("_", 1)[1] if "_" in use else "pooled"
            name = f"dev-{stamp}-{fam}"
            prm = own[fam]["params"] if fam in own else params
            method = (f"fit_bounded (monotone, slope <= {prm['max_slope']}, prior {prm['prior']}, chosen by "
                      f"leave-one-set-out Brier; fitted for the printed number, competence {a.competence}, "
                      f"check records {'prior ' + str(best) if best else 'none'})")
            path = shared.PACKAGE / "reasoning" / "data" / (
                "calibration.json" if use == "answer" else f"calibration_{fam}.json")
            fitted_on = [f"{s}: {sum(1 for r in rows if r['set'] == s and (use == 'answer' or calibration.family(r['method']) == fam))} answers"
                         for s in out["sets"]]
            sha = shared.write_table(path, shared.table_of(name, knots, fitted_on=fitted_on, method=method))
            print(f"wrote {path.relative_to(ROOT)} ({name}@{sha[:12]}); TABLES entry {use!r}")


if __name__ == "__main__":
    main()
