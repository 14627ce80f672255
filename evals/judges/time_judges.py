"""Seconds per judgement, cold and warm: one edit judgement on a 10-second (original, edited) pair and one
rubric judgement, each first in a fresh Python process (cold: interpreter start, imports, model loading,
the METEOR JVM, included) and then again in the same process (warm: models loaded, every tool call made
again: no tool cache), and once more with the judge's tool cache (a repeated judgement).

    nice -n 5 .venv/bin/python evals/judges/time_judges.py --out evals/judges/results/timing.json

The pair: two sentences of flite speech over 10 s; the edit adds a bell after them (dev material: this
measures time, not accuracy). Prints and writes one JSON object.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EDIT_INSTRUCTION = "Add a bell ringing after the announcement."
# (a quote: the rubric judge also scores the quoted words against the audio, its slowest item)
RUBRIC_INSTRUCTION = "A man announces 'the next train to the airport leaves from platform four', and afterwards a bell rings."


def make_pair(d: Path) -> tuple[Path, Path]:
    from audiomind import audio as aio
    from audiomind import synth

    sr = synth.SR
    a = aio.load(synth.speech("the next train to the airport leaves from platform four", d / "s1.wav", voice="awb"),
                 sr=sr, mono=True)
    b = aio.load(synth.speech("please have your tickets ready", d / "s2.wav", voice="awb"), sr=sr, mono=True)
    bell = aio.load(synth.sound_file("bell", d / "bell.wav"), sr=sr, mono=True)[: int(2.0 * sr)]
    y = np.zeros(10 * sr, np.float32)
    y[int(0.3 * sr): int(0.3 * sr) + len(a)] += a
    t = int(0.3 * sr) + len(a) + int(0.5 * sr)
    y[t: t + len(b)] += b
    z = y.copy()
    at = min(t + len(b) + int(0.5 * sr), 10 * sr - len(bell))
    z[at: at + len(bell)] += 0.7 * bell
    return aio.write_wav(d / "original.wav", y, sr), aio.write_wav(d / "edited.wav", z, sr)


def child(kind: str, d: Path, spawned: float) -> None:
    """Runs in the fresh process: cold judgement, two warm ones without a tool cache, one with it."""
    t_start = time.time()
    from audiomind.tools.executor import ToolCache

    out = {"process_start_s": round(t_start - spawned, 2), "runs": []}
    cache = ToolCache(d / f"cache-{kind}")
    for i, (label, c) in enumerate((("cold", None), ("warm", None), ("warm", None), ("warm, tool cache", cache),
                                    ("repeat, tool cache", cache))):
        t0, c0 = time.time(), time.process_time()
        if kind == "edit":
            from audiomind.judges.edit import judge_edit

            r = judge_edit(d / "original.wav", d / "edited.wav", instruction=EDIT_INSTRUCTION, trace_dir=d / "traces",
                           cache=c)
            score = r.edit_score
        else:
            from audiomind.judges.rubric import judge_rubric

            r = judge_rubric(d / "edited.wav", RUBRIC_INSTRUCTION, trace_dir=d / "traces", cache=c)
            score = r.score
        t1 = time.time()
        # the cold judgement counts from the moment the process was spawned (interpreter and imports too)
        out["runs"].append({"run": i, "kind": label, "seconds": round(t1 - (spawned if i == 0 else t0), 2),
                            "cpu_s": round(time.process_time() - c0, 2), "score": round(score, 4),
                            "load_avg_1m": round(os.getloadavg()[0], 2)})
    print("RESULT " + json.dumps(out), flush=True)


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(None, "--out", help="write the JSON here too"),
         child_kind: str = typer.Option("", "--child", hidden=True),
         workdir: Path = typer.Option(None, "--dir", hidden=True),
         spawned: float = typer.Option(0.0, "--spawned", hidden=True)) -> None:
    if child_kind:
        child(child_kind, workdir, spawned)
        return
    d = Path(tempfile.mkdtemp(prefix="judge-timing-"))
    make_pair(d)
    res = {"what": "seconds per judgement; cold = from spawning a fresh Python process to the verdict (imports, "
                   "model loading and the METEOR JVM included); warm = the same judgement again in that process "
                   "with every tool call made again; 'tool cache' = with the judge's tool cache (first fill, then "
                   "a repeat)", "cpu_cores": os.cpu_count(), "pair_s": 10.0}
    for kind in ("edit", "rubric"):
        t = time.time()
        p = subprocess.run([sys.executable, __file__, "--child", kind, "--dir", str(d), "--spawned", repr(t)],
                           capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
        line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            raise SystemExit(f"{kind} timing failed:\n{p.stderr[-3000:]}")
        r = json.loads(line[7:])
        r["process_wall_s"] = round(time.time() - t, 2)
        res[kind] = r
    res["summary"] = {k: {"cold_s": res[k]["runs"][0]["seconds"],
                          "warm_s": min(x["seconds"] for x in res[k]["runs"][1:3]),
                          "warm_max_s": max(x["seconds"] for x in res[k]["runs"][1:3]),
                          "repeat_cached_s": res[k]["runs"][4]["seconds"]} for k in ("edit", "rubric")}
    text = json.dumps(res, indent=1)
    print(text)
    if out:
        out.write_text(text + "\n")


if __name__ == "__main__":
    app()
