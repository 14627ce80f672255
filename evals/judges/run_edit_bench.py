"""Edit judge benchmark: does a real edit score above its no-op and above wrong edits of the same original?

Reads `items.jsonl` from build_sets.py (one row per (base, variant): the instruction, the original, the edited
clip; variant `real`, `noop`, or a wrong edit such as `wrong_sound`, `wrong_place`, `wrong_target`,
`partial`, `deleted_only`) and judges every row as the runner's `edit-eval` task does
(`audiomind bench run --task edit-eval`: resumable, --workers, one trace per item; models and the METEOR
process load once per worker), the label being "the real edit". It then reports pairwise accuracy by edit
kind: a pair counts when the real edit's score is strictly above the other's (a tie is a failure, counted
apart), for Edit_score (the seed's Eq. 2 from the caption metrics) and for the measured effectiveness score;
plus the wall time of each judgement (the first one includes loading the models) and the clip durations.
`audiomind bench report OUT` gives the per-operation and label tables of the same run.

    .venv/bin/python evals/judges/build_sets.py --set v2 --out /tmp/heldout_v2
    .venv/bin/python evals/judges/run_edit_bench.py --data /tmp/heldout_v2/edit --out /tmp/heldout_v2/edit_results
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCORES = ("edit_score", "effectiveness")
SUMMARY = "edit_bench_summary.json"
"""The pairwise figures (summary.json, as this script named it before it ran as a task, is the runner's now)."""


def pairwise(rows: list[dict]) -> dict:
    """Per kind and overall: real vs no-op and real vs wrong edits, for each score."""
    bases: dict[str, dict[str, dict]] = {}
    for r in rows:
        bases.setdefault(r["base"], {})[r["variant"]] = r
    out: dict = {}
    kinds = sorted({r["kind"] for r in rows}) + ["all"]
    for kind in kinds:
        entry: dict = {}
        for score in SCORES:
            res = {"vs_noop": [0, 0, 0], "vs_wrong": [0, 0, 0]}  # [wins, ties, n]
            by_wrong: dict[str, list[int]] = {}
            for vs in bases.values():
                real = vs.get("real")
                if real is None or (kind != "all" and real["kind"] != kind):
                    continue
                for name, other in vs.items():
                    if name == "real":
                        continue
                    key = "vs_noop" if name == "noop" else "vs_wrong"
                    win, tie = real[score] > other[score], real[score] == other[score]
                    res[key][0] += int(win)
                    res[key][1] += int(tie)
                    res[key][2] += 1
                    if key == "vs_wrong":
                        w = by_wrong.setdefault(name, [0, 0, 0])
                        w[0] += int(win)
                        w[1] += int(tie)
                        w[2] += 1
            n = res["vs_noop"][2] + res["vs_wrong"][2]
            wins = res["vs_noop"][0] + res["vs_wrong"][0]
            entry[score] = {
                "pairwise_accuracy": round(wins / n, 4) if n else None, "pairs": n,
                **{k: {"accuracy": round(v[0] / v[2], 4) if v[2] else None, "ties": v[1], "n": v[2]}
                   for k, v in res.items()},
                "by_wrong_edit": {k: {"wins": v[0], "ties": v[1], "n": v[2]} for k, v in sorted(by_wrong.items())},
            }
        out[kind] = entry
    return out


def task_source(items: list[dict], path: Path) -> Path:
    """build_sets.py's rows as edit-eval rows: its fields kept (kind, base, variant as metadata), label = real edit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({**it, "label": it.get("variant") == "real"}) + "\n" for it in items))
    return path


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    data: Path = typer.Option(Path(__file__).resolve().parent / "heldout" / "edit", "--data",
                              help="the folder with items.jsonl (build_sets.py's edit/)"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results" / "edit_heldout", "--out",
                             help="the run folder (results.jsonl, traces/, judgments.jsonl), items.jsonl and "
                                  f"{SUMMARY}; rerun to resume"),
    llm: str = typer.Option("rules", help="judge model spec"),
    frontend: str = typer.Option("cascade", help="front-end spec"),
    limit: int = typer.Option(0, min=0, help="only the first N rows (0: all)"),
    cache: bool = typer.Option(False, help="cache tool results on disk (off: every judgement pays its own tools, "
                                           "so the wall times are honest)"),
    workers: int = typer.Option(1, min=1, help="judgements run concurrently (1 keeps the wall times comparable)"),
) -> None:
    """Edit judge: pairwise accuracy of real edits against no-ops and wrong edits, by kind, and wall times."""
    from audiomind import audio as aio
    from audiomind.bench.tasks.judging import run_judge_set

    items = [json.loads(x) for x in (data / "items.jsonl").read_text().splitlines() if x.strip()]
    source = task_source(items, out / "edit_eval_source.jsonl")
    t0 = time.monotonic()
    summary, judged = run_judge_set("edit-eval", source, out, audio_dir=data, limit=limit or None, workers=workers,
                                    options={"llm": llm, "frontend": frontend, "cache": cache})
    by_id = {it["id"]: it for it in items}
    times = {r["id"]: r for r in _results(out)}
    rows = []
    for j in judged:
        if j.status != "answered" or not j.figures:
            print(f"{j.id}: not judged ({j.status}: {times.get(j.id, {}).get('error')})", file=sys.stderr)
            continue
        it, f = by_id[j.id], j.figures
        rows.append({"id": j.id, "base": it["base"], "kind": it["kind"], "variant": it["variant"],
                     "instruction": it["instruction"], "edit_score": f["edit_score"], "faith_score": f["faith_score"],
                     "effectiveness": f["effectiveness"], "preservation": f["preservation"], "quality": f["quality"],
                     "predicted_difference": f["predicted_difference"],
                     "predicted_commonality": f["predicted_commonality"],
                     "expected_difference": f["expected_difference"], "unverifiable": f["unverifiable"],
                     "seconds": times[j.id]["wall_time_s"],
                     "duration_s": round(max(aio.probe(it["original"] if Path(it["original"]).is_absolute()
                                                       else data / it["original"]).duration_s,
                                             aio.probe(it["edited"] if Path(it["edited"]).is_absolute()
                                                       else data / it["edited"]).duration_s), 2),
                     "trace": str(out / j.trace_path) if j.trace_path else None})
    (out / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    secs = [r["seconds"] for r in rows]
    summary_out = {"llm": llm, "frontend": frontend, "n": len(rows), "wall_s": round(time.monotonic() - t0, 1),
                   "already_done": summary.already_done, "cpu_cores": os.cpu_count(),
                   "load_avg_at_end": os.getloadavg()[0],
                   "seconds_per_judgement": {"first": secs[0] if secs else None,
                                             "median_after_first": sorted(secs[1:])[len(secs[1:]) // 2] if len(secs) > 1 else None,
                                             "max_after_first": max(secs[1:]) if len(secs) > 1 else None},
                   "pairwise": pairwise(rows)}
    (out / SUMMARY).write_text(json.dumps(summary_out, indent=2) + "\n")
    print(json.dumps({k: summary_out["pairwise"][k] for k in summary_out["pairwise"]}, indent=1))
    print(json.dumps(summary_out["seconds_per_judgement"]))


def _results(run_dir: Path) -> list[dict]:
    from audiomind.bench.runner import load_results

    return list(load_results(run_dir).values())


if __name__ == "__main__":
    app()
