"""Latency of one question in a fresh process, against its audio's duration (not a test: it prints a table).

    .venv/bin/python evals/latency/latency_benchmark.py [--runs 3] [--seconds 7.4] [--readme/--no-readme]
        [--cache DIR] [--readme-cache DIR] [--source NAME=PATH ...] [--out r.json]

- a new clip per run (evals/clips.py: a new variant each time, so the tool cache cannot answer), each of the
  clip questions of evals/clips.py in turn, asked by `audiomind ask CLIP QUESTION -c ... --json` in a fresh
  process: wall seconds as the shell sees them, CPU seconds of the process (user + system: less sensitive to
  the other work on a shared machine than wall time), the audio's seconds and wall / audio side by side, with
  the trace's `perceive` and `decide` node times and whether the planner's doubt step asked for a second
  reading (a second `asr` call) and what it cost;
- `--readme`: README command 1 (examples/two_speakers.wav, "How many different speakers ...") in a fresh
  process, `--runs` times: its first run is the newcomer's first answer when the tool cache is fresh (a new
  `--cache`), and the later ones are answered from the tool cache. With `--readme-cache DIR` (a cache folder as
  `audiomind models install` left it: `AUDIOMIND_CACHE=DIR .venv/bin/python -m audiomind.warm`), each of the
  `--runs` trials asks it twice on its own copy of DIR (hard links): a first answer after install, then a second;
- every row splits the wall time into stages: `startup` (what the trace's nodes do not cover: interpreter,
  imports, the agent's construction, exit), `prompt` (perception_prompt), `perceive`, `decide` (the planner's
  steps, the doubt step's trials included), `tools` (the planner's tool calls and re-listens: the doubt step's
  second reading) and the rest of the graph (`answer`: plan, summarize, final answer, format check); wall /
  audio and CPU / audio are per audio second;
- `--source NAME=PATH` (repeatable): run every clip and README trial once per source, with PYTHONPATH=PATH (a
  copy of the package tree, e.g. before and after a change; `.` is the working tree), the sources alternating in
  order from one clip to the next so that both see the same machine load; the answers and confidences of the
  sources are compared clip by clip and the medians set side by side. Each source then answers the new clips
  on its own hard-linked copy of the cache (`--readme-cache`, else `--cache`, else the user's): the tool cache is
  keyed by the audio, not by the code, so a shared one would answer the second source from the first one's work.

`--bytecode`: compile each source's package to bytecode (`compileall`, into its __pycache__) before the runs, as an
install leaves it (pip compiles the wheels it installs; `audiomind models install` imports the package, which
writes the bytecode of every module it reaches). Without it the runs inherit the environment: where
PYTHONDONTWRITEBYTECODE is set (as on the shared development machine) every fresh process compiles the
package's modules from source again, 0.3-0.6 s of CPU a newcomer's process does not spend.

`--cache DIR` runs everything with AUDIOMIND_CACHE=DIR (default: the user's cache, as `audiomind models install`
left it). Targets: a new question <= 0.5 x its audio's duration; README command 1 <= 5 s. Medians are printed per
question and over all runs; the machine's load average is printed too (wall time on a shared machine also
measures everyone else's work).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
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


def _env(cache: Path | None, source: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TQDM_DISABLE", "1")
    if cache is not None:
        env["AUDIOMIND_CACHE"] = str(cache)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _duration(path: Path) -> float:
    import soundfile as sf

    return float(sf.info(str(path)).duration)


STAGES = ("startup", "prompt", "perceive", "decide", "tools", "answer")


def ask(clip: Path, question: str, choices: list[str], traces: Path, cache: Path | None,
        source: Path | None = None, label: str = "") -> dict:
    """One `audiomind ask` in a fresh process: wall and CPU seconds, the answer and the trace's breakdown."""
    cmd = [str(BIN / "audiomind"), "ask", str(clip), question, *[a for c in choices for a in ("-c", c)],
           "--json", "--trace-dir", str(traces)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=_env(cache, source), cwd=ROOT)
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
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stages = {"prompt": nodes.get("perception_prompt", 0.0), "perceive": nodes.get("perceive", 0.0),
              "decide": nodes.get("decide", 0.0), "tools": nodes.get("execute_tools", 0.0) + nodes.get("relisten", 0.0)}
    stages["answer"] = sum(nodes.values()) - sum(stages.values())
    stages["startup"] = wall - sum(nodes.values())
    return {"source": label, "clip": clip.name, "question": question, "audio_s": audio, "wall_s": wall,
            "ratio": wall / audio, "cpu_s": cpu, "cpu_ratio": cpu / audio,
            "answer": out.get("answer"), "confidence": out.get("confidence"),
            **{f"{k}_s": v for k, v in stages.items()},
            "second_reading_s": sum(float(c.get("duration_s") or 0.0) for c in asr[1:]),
            "second_reading": len(asr) > 1}


def _row(r: dict) -> str:
    doubt = f"{r['second_reading_s']:.2f} s" if r["second_reading"] else "no"
    src = f"{r['source']} | " if r.get("source") else ""
    return (f"| {src}{r['clip']} | {r['question'][:40]} | {r['audio_s']:.1f} | {r['wall_s']:.2f} | {r['ratio']:.2f} | "
            f"{r['cpu_s']:.2f} | {r['cpu_ratio']:.2f} | " + " | ".join(f"{r[f'{k}_s']:.2f}" for k in STAGES)
            + f" | {doubt} | {r['answer']} ({r['confidence']}) |")


def _header(sources: bool) -> str:
    cols = (["source"] if sources else []) + ["clip", "question", "audio s", "wall s", "wall / audio", "CPU s",
                                               "CPU / audio", *(f"{k} s" for k in STAGES), "second reading",
                                               "answer (confidence)"]
    align = ["---"] * (3 if sources else 2) + ["---:"] * (5 + len(STAGES)) + ["---", "---"]
    return "| " + " | ".join(cols) + " |\n|" + "|".join(align) + "|"


def _medians(rows: list[dict], label: str) -> str:
    med = {k: statistics.median(r[k] for r in rows) for k in ("wall_s", "ratio", "cpu_s", "cpu_ratio",
                                                            *(f"{s}_s" for s in STAGES))}
    return (f"| {label} | {len(rows)} | {med['wall_s']:.2f} | {med['ratio']:.2f} | {med['cpu_s']:.2f} | "
            f"{med['cpu_ratio']:.2f} | " + " | ".join(f"{med[f'{s}_s']:.2f}" for s in STAGES)
            + f" | {sum(r['second_reading'] for r in rows)} |")


MEDIAN_HEADER = ("| runs | n | median wall s | wall / audio | median CPU s | CPU / audio | "
                 + " | ".join(f"{s} s" for s in STAGES) + " | second readings |\n|---|---:|"
                 + "---:|" * (5 + len(STAGES)) + "---:|")


def _link(src: str, dst: str) -> None:
    """A hard link (a cache copy costs no space; entries are replaced by new files, never written in place), or a
    copy across file systems."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _user_cache() -> str:
    """The cache folder `audiomind ask` uses when AUDIOMIND_CACHE is not set (the user's, as installed)."""
    code = "from audiomind.embedded.models import cache_dir; print(cache_dir())"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env=_env(None), cwd=ROOT).stdout.strip()


def _sources(specs: list[str]) -> list[tuple[str, Path | None]]:
    out: list[tuple[str, Path | None]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--source takes NAME=PATH, got {spec!r}")
        where = Path(path).resolve()
        if not (where / "audiomind" / "__init__.py").is_file():
            raise SystemExit(f"--source {name}: {where} holds no audiomind package")
        out.append((name, where))
    return out or [("", None)]


def readme_trials(template: Path, work: Path, runs: int, sources: list[tuple[str, Path | None]]) -> list[dict]:
    """README command 1 twice per trial and source, each trial on its own hard-linked copy of `template` (the
    cache as `audiomind models install` left it): a first answer after install, then a second one."""
    rows = []
    for trial in range(runs):
        order = sources if trial % 2 == 0 else sources[::-1]
        for label, source in order:
            cache = work / f"cache-{trial}-{label or 'main'}"
            shutil.copytree(template, cache, copy_function=_link)
            for i in (1, 2):
                r = ask(README_CLIP, README_QUESTION[0], README_QUESTION[1], work / "traces", cache, source, label)
                rows.append({**r, "clip": f"{README_CLIP.name} #{i}", "readme_run": i})
            shutil.rmtree(cache, ignore_errors=True)
    return rows


def _compare(rows: list[dict], sources: list[tuple[str, Path | None]]) -> list[str]:
    """Where the sources' answers or confidences differ on the same clip and question."""
    by: dict[tuple[str, str], dict[str, tuple]] = {}
    for r in rows:
        by.setdefault((r["clip"], r["question"]), {})[r["source"]] = (r["answer"], r["confidence"])
    return [f"{clip} / {q}: {got}" for (clip, q), got in by.items()
            if len(got) == len(sources) and len(set(got.values())) > 1]


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    runs: int = typer.Option(3, min=1, help="new clips per question (and README command 1 runs)"),
    seconds: float = typer.Option(7.4, min=1.0, help="length of each new clip"),
    readme: bool = typer.Option(True, help="also time README command 1"),
    cache: Path | None = typer.Option(None, help="AUDIOMIND_CACHE for every run (default: the user's cache)"),
    readme_cache: Path | None = typer.Option(
        None, help="README trials on copies of this cache folder (as `models install` left it): first and second "
                   "answer after install"),
    source: list[str] = typer.Option([], help="NAME=PATH: a package tree to run (PYTHONPATH); repeat to compare"),
    variant: int = typer.Option(int(time.time()) % 100000, help="first clip variant (new ones: not in the cache)"),
    out: Path | None = typer.Option(None, "--out", help="also write the raw numbers as JSON here"),
    bytecode: bool = typer.Option(False, help="compile each source's package to bytecode first, as an install "
                                              "leaves it"),
) -> None:
    """Print seconds, audio seconds and their ratio for new questions in fresh processes (medians too)."""
    sources = _sources(source)
    many = len(sources) > 1
    if bytecode:
        for _, src in sources:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str((src or ROOT) / "audiomind")], check=True)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
          + ("; package bytecode compiled first (as installed)" if bytecode else "") + "\n")
    rows: list[dict] = []
    readme_rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="audiomind-latency-") as tmp:
        work = Path(tmp)
        if readme and readme_cache is not None:
            readme_rows = readme_trials(readme_cache, work, runs, sources)
        elif readme:
            for trial in range(runs):
                for label, src in (sources if trial % 2 == 0 else sources[::-1]):
                    readme_rows.append(ask(README_CLIP, README_QUESTION[0], README_QUESTION[1], work / "traces",
                                           cache, src, label))
        caches: dict[str, Path | None] = {label: cache for label, _ in sources}
        if many or readme_cache is not None:  # each source computes every new clip itself: a cache of its own
            template = readme_cache or cache or Path(_env(None).get("AUDIOMIND_CACHE") or _user_cache())
            for label, _ in sources:
                caches[label] = work / f"cache-new-{label or 'main'}"
                shutil.copytree(template, caches[label], copy_function=_link)
        k = 0
        for _ in range(runs):
            for question, choices in QUESTIONS:
                clip = fresh_clip(seconds, work / f"clip{variant + k}.wav", variant=variant + k)
                for label, src in (sources if k % 2 == 0 else sources[::-1]):
                    rows.append(ask(clip, question, choices, work / "traces", caches[label], src, label))
                k += 1
    if readme_rows:
        print("### README command 1 (fresh process each" + ("; #1: first answer after install, #2: second)"
                                                            if readme_cache else ")"))
        print(_header(many))
        for r in readme_rows:
            print(_row(r))
        print("\n" + MEDIAN_HEADER)
        for label, _ in sources:
            for i in ((1, 2) if readme_cache else (None,)):
                sel = [r for r in readme_rows if r["source"] == label and r.get("readme_run", None) == i]
                if sel:
                    print(_medians(sel, f"{label or 'README'}{f' #{i}' if i else ''}"))
        firsts = ([r for r in readme_rows if r.get("readme_run") == 1] if readme_cache
                  else readme_rows[:len(sources)])  # without --readme-cache only the first trial is a first answer
        print(f"\nfirst answer: {statistics.median(r['wall_s'] for r in firsts):.2f} s median "
              f"(target {README_TARGET_S:.0f} s)\n")
    print(f"### new {seconds:g}-s clips, fresh process each")
    print(_header(many))
    for r in rows:
        print(_row(r))
    print("\n" + MEDIAN_HEADER)
    for label, _ in sources:
        for question, _ in QUESTIONS:
            print(_medians([r for r in rows if r["question"] == question and r["source"] == label],
                           f"{label + ': ' if label else ''}{question}"))
        print(_medians([r for r in rows if r["source"] == label], f"{label + ': ' if label else ''}all (target "
                                                                   f"wall / audio {RATIO_TARGET})"))
    if many:
        diff = _compare(rows + readme_rows, sources)
        print("\nanswers and confidences: " + ("the same for every source on every clip" if not diff else
                                               "DIFFER: " + "; ".join(diff)))
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    if out:
        out.write_text(json.dumps({"load_average": load, "readme": readme_rows, "new": rows}, indent=2))
        print(f"raw numbers: {out}")


if __name__ == "__main__":
    app()
