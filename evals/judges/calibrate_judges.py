"""Fit and measure the judges' verdict probabilities on the judge development sets v1 .. v14, leaving one set out.

    .venv/bin/python evals/judges/calibrate_judges.py collect --runs DIR [--out FILE]   # rows of a re-run
    .venv/bin/python evals/judges/calibrate_judges.py fit [--write]
    .venv/bin/python evals/judges/calibrate_judges.py show [--out evals/judges/results/judge_calibration_offline.json]

Source: one re-run of every judge set with one commit's code (`ROWS`: the rubric judge's items with their check
kind, weight and p, and the edit judge's effectiveness per row), made by

    for s in v1 .. v14: evals/judges/build_sets.py --set $s --out S/$s
        evals/judges/run_bench.py --data S/$s/rubric --out R/$s/rubric --workers 2
        evals/judges/run_edit_bench.py --data S/$s/edit --out R/$s/edit --workers 2 --cache
    evals/judges/calibrate_judges.py collect --runs R

Every set is development now (v14, the last measured blind, was measured once before this fit: judges_blind_v14_*).

- rubric judge (rule items): p from its items in two stages (audiomind/judges/rubric/force.py): what was not verified
  holds the verdict toward 0.5, and a contradiction takes back the held share only as far as its check kind's
  contradictions proved reliable on the other sets (its force); a bounded-slope calibration map
  (`audiomind.calibration.fit_bounded`) fitted for the probability as it is read. Label: aligned. `show` also
  reports the same with every contradiction at full force (`ablation_full_force`).
- edit judge: the bounded-slope map on the measured effectiveness. Label: the real edit. A row at exactly 0.5 is an
  abstention (the judge's "unverifiable").

The map's slope bound and prior are chosen from a small grid (`calibration.GRID_*`) by the pooled leave-one-set-out
Brier score (the gentlest slope, then the strongest prior, within `calibration.CHOOSE_TOLERANCE` of the best); `show` reports each set's figures with forces and map fitted on the other sets ("after") beside the
tables shipped before this stage ("before": the isotonic tables fitted on v3-v6, a contradiction at full force, the
coverage formula of the time, copied under results/tables_before_bounded/). Decisive: p <= 0.2 or p >= 0.8; ECE over
the bins of evals/unseen/score.py, under- and over-confidence alike. The verdicts themselves (aligned at score >=
0.75; effective at >= 0.6) are unchanged, so accuracy is the same before and after.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel

from audiomind import calibration
from audiomind.judges.rubric import force

RESULTS = ROOT / "evals" / "judges" / "results"
ROWS = RESULTS / "judges_dev_v1_v14_d054326.json"
OUT = RESULTS / "judge_calibration_offline.json"
BEFORE = RESULTS / "tables_before_bounded"
THRESHOLD = {"rubric": 0.75, "edit": 0.6}
USE = {"rubric": "judge_rubric", "edit": "judge_edit", "aura": "judge_aura"}
CONTRADICTION_P = 0.2


class RubricRow(BaseModel):
    set: str
    id: str
    label: bool
    negative_kind: str | None = None
    score: float
    items: list[tuple[str, float, bool, float]]  # (check kind, p(yes), verifiable, weight)

    def evidence(self) -> list[force.ItemEvidence]:
        return [force.ItemEvidence(*it) for it in self.items]

    @property
    def abstain(self) -> bool:
        return not any(it[2] for it in self.items)


class EditRow(BaseModel):
    set: str
    id: str
    variant: str
    raw: float
    label: bool

    @property
    def abstain(self) -> bool:
        return self.raw == calibration.ABSTAIN_P


def set_order(name: str) -> int:
    return int(name[1:])


# ------------------------------------------------------------------------------------------------ collect


def _judge_output(trace: dict) -> dict | None:
    for call in reversed(trace.get("tool_calls") or []):
        out = call.get("output")
        if isinstance(out, dict) and "verdicts" in out and "items" in out:
            return out
    return None


SAVED_RUBRIC = ("rubric_heldout_v7_v13_once_33e9f62.json",)
"""Saved rubric rows (items: question and p) for the sets a re-run could not rebuild (their Debian sound packages
are not on every machine): the judge of 33e9f62, each item's check kind read from its question (`SAY_KIND`)."""
SAY_KIND = {"sound": "sound", "absent": "absent", "count": "count", "count_one": "count",
            "speech_present": "speech_present", "no_speech": "no_speech", "speaker": "gender", "nth_speaker": "gender",
            "said_by": "gender", "words": "words", "talks_fast": "rate", "talks_slowly": "rate", "tempo_fast": "tempo",
            "tempo_slow": "tempo", "louder": "loudness", "quieter": "loudness", "order": "order"}
"""The rule reader's question texts (the [say] table of language/data/rubric_items.toml) -> the check kind that asks
them; any other question is 'other'."""


def kind_of_question(question: str) -> str:
    from audiomind.language.rubric_items import _data

    for key, kind in SAY_KIND.items():
        parts = re.split(r"\{[a-z_]+\}", _data()["say"][key])
        if re.fullmatch(".+?".join(re.escape(x) for x in parts), question.strip(), flags=re.DOTALL):
            return kind
    return force.OTHER


def saved_rows(skip: set[str]) -> dict[str, Any]:
    """Rubric rows of SAVED_RUBRIC and edit rows of judges_heldout_v*_offline.json for the sets not in `skip`."""
    from audiomind.judges.rubric.judge import ITEM_WEIGHTS

    out: dict[str, Any] = {"rubric": {}, "edit": {}}
    for name in SAVED_RUBRIC:
        for key, rows in json.loads((RESULTS / name).read_text(encoding="utf-8")).items():
            m = re.fullmatch(r"(v\d+)_rubric_rows", key)
            if not m or m.group(1) in skip:
                continue
            out["rubric"][m.group(1)] = [
                {"id": r["id"], "label": bool(r["aligned"]), "negative_kind": r.get("negative_kind"),
                 "score": round(float(r["rubric_score"]), 4),
                 "items": [[k := kind_of_question(it["q"]), float(it["p"]), it["p"] != calibration.ABSTAIN_P,
                            ITEM_WEIGHTS.get(k, 1.0)] for it in r["items"]]} for r in rows]
    for f in sorted(RESULTS.glob("judges_heldout_v*_offline.json")):
        for key, value in json.loads(f.read_text(encoding="utf-8")).items():
            m = re.fullmatch(r"(v\d+)_(edit_rows|heldout_rows)", key)
            if not m or m.group(1) in skip:
                continue
            rows = value if isinstance(value, list) and m.group(2) == "edit_rows" else (
                value.get("edit") if isinstance(value, dict) else None)
            for r in rows or []:
                variant = r.get("variant") or str(r["id"]).rpartition(":")[2]
                out["edit"].setdefault(m.group(1), []).append(
                    {"id": r.get("id") or f"{r['base']}:{variant}", "variant": variant,
                     "raw": float(r["effectiveness"]), "label": variant == "real"})
    return out


def collect(runs: Path, saved: bool = True) -> dict[str, Any]:
    """The rows of a re-run: RUNS/vN/rubric/items.jsonl (each trace gives its items' check kinds and verifiability)
    and RUNS/vN/edit/items.jsonl; with `saved`, the saved rows of the sets the re-run lacks (`saved_rows`)."""
    from audiomind.judges.rubric.decompose import RubricItem
    from audiomind.judges.rubric.judge import item_evidence
    from audiomind.judges.rubric.verify import ItemVerdict

    out: dict[str, Any] = {"rubric": {}, "edit": {}, "source": {}}
    for d in sorted(runs.glob("v*"), key=lambda p: set_order(p.name)):
        f = d / "rubric" / "items.jsonl"
        if f.exists():
            rows = []
            for line in f.read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                res = _judge_output(json.loads(Path(r["trace"]).read_text(encoding="utf-8")))
                if res is None:
                    raise SystemExit(f"{d.name} {r['id']}: no judge result in its trace")
                items = [RubricItem.model_validate(i) for i in res["items"]]
                verdicts = [ItemVerdict.model_validate(v) for v in res["verdicts"]]
                ev = item_evidence(items, verdicts)
                rows.append({"id": r["id"], "label": bool(r["aligned"]), "negative_kind": r.get("negative_kind"),
                             "score": round(float(r["rubric_score"]), 4),
                             "items": [[e.kind, e.p, e.verifiable, e.weight] for e in ev]})
            out["rubric"][d.name] = rows
        f = d / "edit" / "items.jsonl"
        if f.exists():
            out["edit"][d.name] = [{"id": r["id"], "variant": r["variant"], "raw": float(r["effectiveness"]),
                                    "label": r["variant"] == "real"}
                                   for r in map(json.loads, f.read_text(encoding="utf-8").splitlines())]
    for judge in ("rubric", "edit"):
        for s in out[judge]:
            out["source"][f"{s} {judge}"] = "re-run (the commit this file is named for)"
    if saved:
        old = saved_rows(set())
        for judge in ("rubric", "edit"):
            for s, rows in old[judge].items():
                if s not in out[judge]:
                    out[judge][s] = rows
                    out["source"][f"{s} {judge}"] = ("saved: " + (SAVED_RUBRIC[0] if judge == "rubric" else
                                                                  f"judges_heldout_{s}*_offline.json"))
    for judge in ("rubric", "edit"):
        out[judge] = dict(sorted(out[judge].items(), key=lambda kv: set_order(kv[0])))
    return out


def load_rows(path: Path = ROWS) -> tuple[list[RubricRow], list[EditRow]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rubric = [RubricRow(set=s, **r) for s, rows in data["rubric"].items() for r in rows]  # (source: provenance)
    edit = [EditRow(set=s, **r) for s, rows in data["edit"].items() for r in rows]
    return rubric, edit


# ------------------------------------------------------------------------------------------------ the stages


def fit_rubric(rows: list[RubricRow], *, max_slope: float, prior: float, name: str = "judge-rubric",
               full_force: bool = False) -> tuple[force.ForceTable, list[tuple[float, float]]]:
    """Forces and the map from development rows (abstentions are left out of both; `full_force`: force 1 for every
    kind)."""
    judged = [r for r in rows if not r.abstain]
    sets = sorted({r.set for r in judged}, key=set_order)
    forces = force.fit_forces([(r.label, r.evidence()) for r in judged], name=f"{name}-force",
                              fitted_on=[f"{s}: {sum(r.set == s for r in judged)} rubrics" for s in sets],
                              contradiction_p=CONTRADICTION_P)
    if full_force:
        forces = forces.model_copy(update={"kinds": {}, "default_force": 1.0})
    evs = [force.evidence_of(r.evidence(), forces) for r in judged]
    knots = calibration.fit_bounded([(e.raw, r.label) for e, r in zip(evs, judged, strict=True)],
                                    hold=[e.hold for e in evs], max_slope=max_slope, prior=prior)
    return forces, knots


def rubric_p(row: RubricRow, forces: force.ForceTable, knots: list[tuple[float, float]]) -> float:
    ev = force.evidence_of(row.evidence(), forces)
    return force.probability(ev, calibration.interpolate(knots, ev.raw))


def fit_edit(rows: list[EditRow], *, max_slope: float, prior: float) -> list[tuple[float, float]]:
    return calibration.fit_bounded([(r.raw, r.label) for r in rows if not r.abstain], max_slope=max_slope,
                                   prior=prior)


def edit_p(row: EditRow, knots: list[tuple[float, float]]) -> float:
    return calibration.ABSTAIN_P if row.abstain else round(calibration.interpolate(knots, row.raw), 4)


def before_p(judge: str, row: RubricRow | EditRow, knots: list[tuple[float, float]]) -> float:
    """p as the judges printed it before this stage: the isotonic table; for a rubric the score moved toward 0.5 by
    the unverified share before and after the table, unless a verified item contradicts it (full force)."""
    if row.abstain:
        return calibration.ABSTAIN_P
    if isinstance(row, EditRow):
        return round(calibration.interpolate(knots, row.raw), 4)
    total = sum(it[3] for it in row.items)
    cover = sum(it[3] for it in row.items if it[2]) / total
    contra = any(it[2] and it[1] <= CONTRADICTION_P for it in row.items)
    raw = row.score if contra or cover >= 1.0 else 0.5 + (row.score - 0.5) * cover
    p = calibration.interpolate(knots, raw)
    return round(p if (contra and p < 0.5) or cover >= 1.0 else 0.5 + (p - 0.5) * cover, 4)


def loso(judge: str, rows: list[Any], *, max_slope: float, prior: float, only: set[str] | None = None,
         full_force: bool = False) -> dict[str, list[float]]:
    """Each set's p with forces and map fitted on the other sets (`only`: those sets alone; `full_force`: every
    contradiction at force 1, the ablation)."""
    out: dict[str, list[float]] = {}
    for s in sorted({r.set for r in rows if only is None or r.set in only}, key=set_order):
        train = [r for r in rows if r.set != s]
        held = [r for r in rows if r.set == s]
        if judge == "rubric":
            forces, knots = fit_rubric(train, max_slope=max_slope, prior=prior, full_force=full_force)
            out[s] = [rubric_p(r, forces, knots) for r in held]
        else:
            k = fit_edit(train, max_slope=max_slope, prior=prior)
            out[s] = [edit_p(r, k) for r in held]
    return out


def choose(judge: str, rows: list[Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """(max_slope, prior) by pooled leave-one-set-out Brier (`calibration.pick`: the gentlest slope, then the
    strongest prior, within `calibration.CHOOSE_TOLERANCE` of the best), and the grid's pooled figures."""
    grid: dict[str, Any] = {}
    scores: dict[tuple[float, float], float] = {}
    for s in sorted(calibration.GRID_MAX_SLOPE):
        for pr in sorted(calibration.GRID_PRIOR, reverse=True):
            ps = loso(judge, rows, max_slope=s, prior=pr)
            pairs = [(p, r.label) for st, pp in ps.items() for p, r in zip(pp, [r for r in rows if r.set == st],
                                                                           strict=True)]
            m = calibration.metrics(pairs)
            grid[f"max_slope {s:g}, prior {pr:g}"] = m
            scores[(s, pr)] = m["brier"]
    s, pr = calibration.pick(scores)
    return {"max_slope": s, "prior": pr}, grid


# ------------------------------------------------------------------------------------------------ figures


def figures(judge: str, rows: list[Any], ps: list[float]) -> dict[str, Any]:
    m = calibration.metrics([(p, r.label) for p, r in zip(ps, rows, strict=True)])
    decided = [(r.score if isinstance(r, RubricRow) else r.raw) >= THRESHOLD[judge] and not r.abstain for r in rows]
    m["accuracy"] = round(sum(d == r.label for d, r in zip(decided, rows, strict=True)) / len(rows), 4) if rows else 0
    m["abstentions"] = sum(r.abstain for r in rows)
    return m


def before_knots(judge: str) -> list[tuple[float, float]]:
    return calibration.load(BEFORE / f"calibration_{judge}.json")[0].knots


def show(rows_path: Path = ROWS) -> dict[str, Any]:
    rubric, edit = load_rows(rows_path)
    out: dict[str, Any] = {"what": __doc__.strip().splitlines()[0], "rows": rows_path.name,
                           "decisive": "p <= 0.2 or p >= 0.8", "ece_bins": [list(b) for b in calibration.ECE_BINS],
                           "judges": {}}
    for judge, rows in (("rubric", rubric), ("edit", edit)):
        params, grid = choose(judge, rows)
        after = loso(judge, rows, **params)
        bk = before_knots(judge)
        t, sha = calibration.load(calibration.path_of(USE[judge]))
        entry: dict[str, Any] = {"chosen": params, "grid_loso_pooled": grid, "shipped_table": f"{t.name}@{sha[:12]}",
                                 "before_table": calibration.load(BEFORE / f"calibration_{judge}.json")[0].name,
                                 "by_set": {}}
        all_b, all_a, all_rows = [], [], []
        for s in sorted({r.set for r in rows}, key=set_order):
            held = [r for r in rows if r.set == s]
            b = [before_p(judge, r, bk) for r in held]
            entry["by_set"][s] = {"before": figures(judge, held, b), "after": figures(judge, held, after[s])}
            all_b += b
            all_a += after[s]
            all_rows += held
        entry["pooled"] = {"before": figures(judge, all_rows, all_b), "after": figures(judge, all_rows, all_a)}
        if judge == "rubric":
            f, _ = fit_rubric(rubric, **params)
            entry["forces_all_sets"] = {k: v.force for k, v in f.kinds.items()} | {"(default)": f.default_force}
            full = loso(judge, rows, **params, full_force=True)
            entry["ablation_full_force"] = {
                "what": "the same, every contradiction at full force (force 1 for every kind)",
                "pooled": figures(judge, all_rows, [p for s in full for p in full[s]]),
                "v14": figures(judge, [r for r in rows if r.set == "v14"], full.get("v14", []))}
        out["judges"][judge] = entry
    return out


def markdown(result: dict[str, Any]) -> str:
    head = ("| judge | set | n (abst.) | decisive % before | after | decisive right % before | after | ECE before | "
            "after | Brier before | after |")
    lines = [head, "| --- | --- | " + " | ".join(["---:"] * 9) + " |"]
    for judge, e in result["judges"].items():
        for s, ba in [*e["by_set"].items(), ("all", e["pooled"])]:
            b, a = ba["before"], ba["after"]

            def pct(x: float | None) -> str:
                return "-" if x is None else f"{100 * x:.0f}"

            lines.append(f"| {judge} | {s} | {b['n']} ({b['abstentions']}) | {pct(b['decisive_share'])} | "
                         f"{pct(a['decisive_share'])} | {pct(b['decisive_accuracy'])} ({b['decisive_right']}/"
                         f"{b['decisive_n']}) | {pct(a['decisive_accuracy'])} ({a['decisive_right']}/{a['decisive_n']})"
                         f" | {b['ece']:.3f} | {a['ece']:.3f} | {b['brier']:.3f} | {a['brier']:.3f} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ tables


def tables(rows_path: Path = ROWS) -> dict[str, Any]:
    """The tables fitted on every set, with the grid point `choose` picks."""
    rubric, edit = load_rows(rows_path)
    sets = {j: sorted({r.set for r in rows}, key=set_order) for j, rows in (("rubric", rubric), ("edit", edit))}
    span = {j: f"v{set_order(s[0])}-v{set_order(s[-1])}" for j, s in sets.items()}
    out: dict[str, Any] = {}
    for judge, rows in (("rubric", rubric), ("edit", edit)):
        params, _ = choose(judge, rows)
        name = f"judge-{judge}-bounded-dev-{span[judge]}"
        judged = [r for r in rows if not r.abstain]
        fitted_on = [f"{s}: {sum(r.set == s for r in judged)} verdicts" for s in sets[judge]]
        method = (f"monotone piecewise linear on knots 0, 0.05, .., 1, slope within [0, {params['max_slope']:g}], "
                  f"Brier score with {params['prior']:g} pseudo-cases per tenth on the identity "
                  "(audiomind.calibration.fit_bounded); slope bound and prior chosen by leave-one-set-out Brier over "
                  "the development sets")
        if judge == "rubric":
            forces, knots = fit_rubric(rows, name=f"judge-rubric-dev-{span[judge]}", **params)
            out["force"] = forces
            note = ("rubric judge (rule items): raw = the items' geometric mean after each check's force, held toward "
                    "0.5 by the verified share (audiomind/judges/rubric/force.py) -> share aligned; fitted for p = "
                    "0.5 + (map - 0.5) x hold; by evals/judges/calibrate_judges.py on " + ROWS.name)
        else:
            knots = fit_edit(rows, **params)
            note = ("edit judge: measured effectiveness -> share that were the real edit (abstentions, p 0.5, left "
                    "out); by evals/judges/calibrate_judges.py on " + ROWS.name)
        out[judge] = calibration.table_of(name, knots, fitted_on=fitted_on, method=method, note=note)
    return out


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in ("collect", "fit", "show"):
        raise SystemExit(__doc__)
    cmd, args = argv[0], argv[1:]

    def opt(name: str, default: str | None = None) -> str | None:
        return args[args.index(name) + 1] if name in args else default

    if cmd == "collect":
        runs = Path(opt("--runs") or "")
        out = Path(opt("--out", str(ROWS)) or ROWS)
        data = collect(runs)
        out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {out}: " + ", ".join(f"{j} {sum(len(v) for v in d.values())} rows over {len(d)} sets"
                                            for j, d in data.items() if j != "source"))
    elif cmd == "fit":
        fitted = tables()
        for key, t in fitted.items():
            print(key, t.model_dump_json(indent=1)[:2000])
        if "--write" in args:
            for judge in ("rubric", "edit"):
                sha = calibration.write_table(calibration.path_of(USE[judge]), fitted[judge])
                print(f"wrote {calibration.path_of(USE[judge]).relative_to(ROOT)} ({sha[:12]})")
            force.FORCES.write_text(fitted["force"].model_dump_json(indent=2) + "\n", encoding="utf-8")
            force.load_forces.cache_clear()
            print(f"wrote {force.FORCES.relative_to(ROOT)} ({force.load_forces()[1][:12]})")
    else:
        out = Path(opt("--out", str(OUT)) or OUT)
        result = show()
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(markdown(result))
        print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
