"""Latency of one question in a fresh process, against its audio's duration (not a test: it prints a table).

    .venv/bin/python evals/latency/latency_benchmark.py [--runs 3] [--seconds 7.4] [--readme/--no-readme]
        [--cache DIR] [--out r.json]

- a new clip per run (evals/clips.py: a new variant each time, so the tool cache cannot answer), each of the
  clip questions of evals/clips.py in turn, asked by `audiomind ask CLIP QUESTION -c ... --json` in a fresh
  process: wall seconds as the shell sees them, CPU seconds of the process (user + system: less sensitive to
  the other work on a shared machine than wall time), the audio's seconds and wall / audio side by side, with
  the trace's `perceive` and `decide` node times and whether the planner's doubt step asked for a second
  reading (a second `asr` call) and what it cost;
- `--readme`: README command 1 (examples/two_speakers.wav, "How many different speakers ...") in a fresh
  process, `--runs` times: its first run is the newcomer's first answer when the tool cache is fresh (a new
  `--cache`), and the later ones are answered from the tool cache.

`--cache DIR` runs everything with AUDIOMIND_CACHE=DIR (default: the user's cache, as `audiomind models install`
left it). Targets: a new question <= 0.5 x its audio's duration; README command 1 <= 5 s. Medians are printed per
question and over all runs; the machine's load average is printed too (wall time on a shared machine also
measures everyone else's work).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "evals"))
from clips import QUESTIONS, fresh_clip  # evals/clips.py, beside the other latency benchmarks

BIN = Path(sys.executable).parent
RATIO_TARGET, README_TARGET_S = 0.5, 5.0
README_CLIP = ROOT / "examples" / "two_speakers.wav"
README_QUESTION = ("How many different speakers are in this conversation?", ["1", "2", "3", "4"])


def _env(cache: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TQDM_DISABLE", "1")
    if cache is not None:
        env["AUDIOMIND_CACHE"] = str(cache)
    return env


def _duration(path: Path) -> float:
    import soundfile as sf

    return float(sf.info(str(path)).duration)


def ask(clip: Path, question: str, choices: list[str], traces: Path, cache: Path | None) -> dict:
    """One `audiomind ask` in a fresh process: wall and CPU seconds, the answer and the trace's breakdown."""
    cmd = [str(BIN / "audiomind"), "ask", str(clip), question, *[a for c in choices for a in ("-c", c)],
           "--json", "--trace-dir", str(traces)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=_env(cache), cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"audiomind ask failed ({proc.returncode}): {proc.stderr[-800:]}")
    out = json.loads(proc.stdout)
    trace = json.loads(Path(out["trace_path"]).read_text()) if out.get("trace_path") else {}
    nodes: dict[str, float] = {}
    for t in trace.get("timings", []):
        nodes[t["node"]] = nodes.get(t["node"], 0.0) + float(t["duration_s"])
    asr = [c for c in trace.get("tool_calls", []) if c["tool"] == "asr"]
    audio = _duration(clip)
    return {"clip": clip.name, "question": question, "audio_s": audio, "wall_s": wall, "ratio": wall / audio,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "answer": out.get("answer"), "confidence": out.get("confidence"),
            "perceive_s": nodes.get("perceive", 0.0), "decide_s": nodes.get("decide", 0.0),
            "second_reading_s": sum(float(c.get("duration_s") or 0.0) for c in asr[1:]),
            "second_reading": len(asr) > 1}


def _row(r: dict) -> str:
    doubt = f"{r['second_reading_s']:.2f} s" if r["second_reading"] else "no"
    return (f"| {r['clip']} | {r['question'][:48]} | {r['audio_s']:.1f} | {r['wall_s']:.2f} | {r['ratio']:.2f} | "
            f"{r['cpu_s']:.2f} | {r['perceive_s']:.2f} | {r['decide_s']:.2f} | {doubt} | {r['answer']} |")


HEADER = ("| clip | question | audio s | wall s | wall / audio | CPU s | perceive s | decide s | second reading | "
          "answer |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|")

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    runs: int = typer.Option(3, min=1, help="new clips per question (and README command 1 runs)"),
    seconds: float = typer.Option(7.4, min=1.0, help="length of each new clip"),
    readme: bool = typer.Option(True, help="also time README command 1"),
    cache: Path | None = typer.Option(None, help="AUDIOMIND_CACHE for every run (default: the user's cache)"),
    variant: int = typer.Option(int(time.time()) % 100000, help="first clip variant (new ones: not in the cache)"),
    out: Path | None = typer.Option(None, "--out", help="also write the raw numbers as JSON here"),
) -> None:
    """Print seconds, audio seconds and their ratio for new questions in fresh processes (medians too)."""
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}\n")
    rows: list[dict] = []
    readme_rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="audiomind-latency-") as tmp:
        work = Path(tmp)
        if readme:
            for _ in range(runs):
                readme_rows.append(ask(README_CLIP, README_QUESTION[0], README_QUESTION[1], work / "traces", cache))
        k = 0
        for _ in range(runs):
            for question, choices in QUESTIONS:
                clip = fresh_clip(seconds, work / f"clip{variant + k}.wav", variant=variant + k)
                k += 1
                rows.append(ask(clip, question, choices, work / "traces", cache))
    if readme_rows:
        print("### README command 1 (fresh process each; run 1 computes every tool, later runs hit the tool cache)")
        print(HEADER)
        for r in readme_rows:
            print(_row(r))
        print(f"\nfirst answer: {readme_rows[0]['wall_s']:.2f} s (target {README_TARGET_S:.0f} s)\n")
    print(f"### new {seconds:g}-s clips, fresh process each")
    print(HEADER)
    for r in rows:
        print(_row(r))
    print("\n| question | runs | median wall s | median wall / audio | median CPU s | second readings |\n"
          "|---|---:|---:|---:|---:|---:|")
    for question, _ in QUESTIONS:
        qs = [r for r in rows if r["question"] == question]
        print(f"| {question} | {len(qs)} | {statistics.median(r['wall_s'] for r in qs):.2f} | "
              f"{statistics.median(r['ratio'] for r in qs):.2f} | {statistics.median(r['cpu_s'] for r in qs):.2f} | "
              f"{sum(r['second_reading'] for r in qs)} |")
    print(f"| all | {len(rows)} | {statistics.median(r['wall_s'] for r in rows):.2f} | "
          f"{statistics.median(r['ratio'] for r in rows):.2f} (target {RATIO_TARGET}) | "
          f"{statistics.median(r['cpu_s'] for r in rows):.2f} | {sum(r['second_reading'] for r in rows)} |")
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    if out:
        out.write_text(json.dumps({"load_average": load, "readme": readme_rows, "new": rows}, indent=2))
        print(f"raw numbers: {out}")


if __name__ == "__main__":
    app()
