"""Edit judge benchmark: does a real edit score above its no-op and above wrong edits of the same original?

Reads `items.jsonl` from heldout.py (one row per (base, variant): the instruction, the original, the edited
clip; variant `real`, `noop`, or a wrong edit such as `wrong_sound`, `wrong_place`, `wrong_target`,
`partial`, `deleted_only`), judges every row with `judge_edit` in one process (models and the METEOR process
load once), and reports pairwise accuracy by edit kind: a pair counts when the real edit's score is strictly
above the other's (a tie is a failure, counted apart), for Edit_score (the seed's Eq. 2 from the caption
metrics) and for the measured effectiveness score; plus the wall time of each judgement (the first one
includes loading the models) and the clip durations.

    .venv/bin/python evals/judges/heldout.py --set v2 --out /tmp/heldout_v2
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


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    data: Path = typer.Option(Path(__file__).resolve().parent / "heldout" / "edit", "--data",
                              help="the folder with items.jsonl (heldout.py's edit/)"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results" / "edit_heldout", "--out",
                             help="items.jsonl, summary.json and traces/ go here; rerun to resume"),
    llm: str = typer.Option("rules", help="judge model spec"),
    frontend: str = typer.Option("cascade", help="front-end spec"),
    limit: int = typer.Option(0, min=0, help="only the first N rows (0: all)"),
    cache: bool = typer.Option(False, help="cache tool results on disk (off: every judgement pays its own tools, "
                                           "so the wall times are honest)"),
) -> None:
    """Edit judge: pairwise accuracy of real edits against no-ops and wrong edits, by kind, and wall times."""
    from audiomind import audio as aio
    from audiomind.judges.edit import judge_edit
    from audiomind.tools.executor import ToolCache
    from audiomind.tools.manifest import ToolRegistry

    items = [json.loads(x) for x in (data / "items.jsonl").read_text().splitlines() if x.strip()]
    if limit:
        items = items[:limit]
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "items.jsonl"
    done = {}
    if rows_path.exists():
        for line in rows_path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[r["id"]] = r
    if done:  # a folder from an earlier run: say so, its rows were made by whatever code ran then
        typer.echo(f"resuming: {len(done)} of {len(items)} items kept from {rows_path} (a new folder judges them "
                   "all again)", err=True)
    registry = ToolRegistry.load()
    tool_cache = ToolCache(out / "tool-cache") if cache else None
    t0 = time.monotonic()
    with rows_path.open("a") as fh:
        for it in items:
            if it["id"] in done:
                continue
            t = time.monotonic()
            cpu = time.process_time()
            res = judge_edit(it["original"], it["edited"], instruction=it["instruction"], llm=llm, frontend=frontend,
                             trace_dir=out / "traces", cache=tool_cache, registry=registry)
            row = {"id": it["id"], "base": it["base"], "kind": it["kind"], "variant": it["variant"],
                   "instruction": it["instruction"], "edit_score": res.edit_score, "faith_score": res.faith_score,
                   "effectiveness": res.effectiveness.score, "preservation": res.preservation.score,
                   "quality": res.quality.score, "predicted_difference": res.predicted_difference,
                   "predicted_commonality": res.predicted_commonality,
                   "expected_difference": res.expectation.expected_difference, "unverifiable": res.unverifiable,
                   "seconds": round(time.monotonic() - t, 2), "cpu_s": round(time.process_time() - cpu, 2),
                   "duration_s": round(max(aio.probe(it["original"]).duration_s, aio.probe(it["edited"]).duration_s), 2),
                   "trace": res.trace_path}
            done[it["id"]] = row
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(f"{it['id']:32s} ES={res.edit_score:.3f} eff={res.effectiveness.score:.2f} "
                  f"pres={res.preservation.score:.2f} ({row['seconds']} s) {res.predicted_difference}", flush=True)
    rows = [done[i["id"]] for i in items if i["id"] in done]
    secs = [r["seconds"] for r in rows]
    summary = {"llm": llm, "frontend": frontend, "n": len(rows), "wall_s": round(time.monotonic() - t0, 1),
               "cpu_cores": os.cpu_count(), "load_avg_at_end": os.getloadavg()[0],
               "seconds_per_judgement": {"first": secs[0] if secs else None,
                                         "median_after_first": sorted(secs[1:])[len(secs[1:]) // 2] if len(secs) > 1 else None,
                                         "max_after_first": max(secs[1:]) if len(secs) > 1 else None},
               "pairwise": pairwise(rows)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: summary["pairwise"][k] for k in summary["pairwise"]}, indent=1))
    print(json.dumps(summary["seconds_per_judgement"]))


if __name__ == "__main__":
    app()
