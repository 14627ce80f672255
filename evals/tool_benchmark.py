"""Tool performance benchmark (not a test): real-time factor of every available embedded perception tool,
cold vs warm time, and how much the tool cache speeds up asking the same question twice.

    .venv/bin/python evals/tool_benchmark.py [--lengths 10 --lengths 60] [--warm 2] [--out results.json]

Clips are synthesised with audiomind.synth (flite speech in several voices with freedesktop sounds and
beeps between the sentences), exactly 10 s and 60 s, never cutting a sentence.

- cold: the first call in a fresh Python process (imports, model load, numba compilation included);
  each (tool, clip) pair gets its own process so no tool pays for another's warm-up.
- warm: the median of the next calls in that process (fresh ToolContext each call, so the audio is
  decoded every time, as in a new run). RTF = warm wall time / clip duration; the CPU-time RTF (process
  CPU time of the call, all threads) is printed too, since on a shared machine wall time also measures
  everyone else's load.
- cache: AudioMind(...).ask twice on the same clip with an empty tool cache (after a warm-up question on
  another clip so models are loaded): the summed recorded `duration_s` of the tool calls of run 1 vs run 2,
  the wall time of both, and the measured time of the cache lookups themselves (the executor records 0 s
  for a hit).

Goals: perception tools RTF < 0.1, except ASR (< 0.5 with Whisper base); cached re-run >= 20x faster in
tool time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import typer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clips import LINES, SOUNDS  # the same speakers, sentences and sounds as the latency benchmarks' clips

PERCEPTION = {"metadata_validation", "temporal_segmentation", "speech_and_speaker", "audio_tagging",
              "acoustic_music_features"}
RTF_GOAL, ASR_RTF_GOAL, CACHE_GOAL = 0.1, 0.5, 20.0
QUESTION = "How many different people speak in this recording, and what do they say?"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TQDM_DISABLE", "1")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    return env


# ---- clips ------------------------------------------------------------------------------------------------
def make_clip(seconds: float, out: Path, work: Path) -> Path:
    """Speech (rotating flite voices) alternating with sounds and beeps, exactly `seconds` long. Pieces are
    added only while they fit whole and the rest is silence, so no word is cut at the end (in a check, a
    clip ending mid-word made Whisper several times slower per second of audio)."""
    from audiomind import audio as aio
    from audiomind import synth

    sr = synth.SR
    n_max = round(seconds * sr)
    parts: list[np.ndarray] = [synth.silence(0.3)]
    n, k, full = len(parts[0]), 0, False
    while not full:
        voice, text = LINES[k % len(LINES)]
        speech = aio.load(synth.speech(text, work / f"s{k}.wav", voice=voice), sr=sr)
        sound = aio.load(synth.sound_file(SOUNDS[k % len(SOUNDS)], work / f"fx{k}.wav"), sr=sr) * 0.5
        beeps = aio.load(synth.beeps(1 + k % 3, work / f"b{k}.wav", beep_s=0.12, gap_s=0.25, lead_s=0.1), sr=sr)
        for piece in (speech, synth.silence(0.4), sound, synth.silence(0.3), beeps * 0.6, synth.silence(0.4)):
            if n + len(piece) > n_max:
                full = True
                break
            parts.append(np.asarray(piece, dtype=np.float32))
            n += len(piece)
        k += 1
    parts.append(synth.silence((n_max - n) / sr))
    y = np.concatenate(parts)
    y = np.pad(y, (0, max(0, n_max - len(y))))[:n_max]
    return aio.write_wav(out, y, sr)


def make_second_artifact(a0: Path, out: Path) -> Path:
    """a1 for tools that compare two artifacts: the first half of the clip."""
    from audiomind import audio as aio

    y = aio.load(a0, sr=16000)
    return aio.write_wav(out, y[: len(y) // 2], 16000)


# ---- per-tool worker (runs in a fresh process) --------------------------------------------------------------
def worker(tool: str, args_json: str, clip: str, other: str, warm: int) -> dict:
    """Time one tool in this (fresh) process: one cold call, then `warm` warm calls."""
    t_import = time.perf_counter()
    from audiomind.artifacts import make_artifact
    from audiomind.tools.base import ToolContext
    from audiomind.tools.manifest import ToolRegistry

    reg = ToolRegistry.load()
    m = reg.get(tool)
    fn, model = m.callable, m.args_model
    import_s = time.perf_counter() - t_import
    arts = {"a0": make_artifact("a0", clip), "a1": make_artifact("a1", other)}
    args = model.model_validate(json.loads(args_json))
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(1 + warm):
            ctx = ToolContext(arts, Path(d), {})
            t0, c0 = time.perf_counter(), time.process_time()
            fn(args, ctx)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return {"import_s": import_s, "cold_s": times[0], "warm_s": statistics.median(times[1:]) if warm else None,
            "warm_cpu_s": statistics.median(cpu[1:]) if warm else None}


def _tool_args(m, with_model: str | None = None) -> dict:
    """The manifest's example, validated; unknown extra artifacts fall back to a0/a1 which exist here."""
    args = dict(m.example)
    if with_model:
        args["model"] = with_model
    try:
        m.args_model.model_validate(args)
    except ValueError:  # pydantic's ValidationError
        args = {"artifact": "a0"}
    return args


def bench_tools(clips: dict[float, Path], others: dict[float, Path], warm: int) -> list[dict]:
    from audiomind.embedded import models
    from audiomind.tools.manifest import ToolRegistry

    reg = ToolRegistry.load()
    jobs: list[tuple[str, str, dict]] = []
    for m in sorted(reg.available(), key=lambda m: (m.category.value, m.name)):
        if m.category.value not in PERCEPTION:
            continue
        if m.name == "asr":
            jobs.append((m.name, "asr (tiny.en)", _tool_args(m, "tiny.en")))
            if models.check("whisper-base")[0]:
                jobs.append((m.name, "asr (base)", _tool_args(m, "base")))
            continue
        jobs.append((m.name, m.name, _tool_args(m)))
    rows = []
    for name, label, args in jobs:
        cat = reg.get(name).category.value
        for dur, clip in clips.items():
            cmd = [sys.executable, __file__, "--worker", name, json.dumps(args), str(clip), str(others[dur]),
                   str(warm)]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=1800, check=False)
            if proc.returncode != 0:
                rows.append({"tool": label, "category": cat, "clip_s": dur, "error": proc.stderr.strip()[-300:]})
                print(f"  {label:24s} {dur:5.0f} s  ERROR {proc.stderr.strip()[-200:]}", flush=True)
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res.update(tool=label, category=cat, clip_s=dur, process_s=time.perf_counter() - t0,
                       rtf=res["warm_s"] / dur, rtf_cold=res["cold_s"] / dur, rtf_cpu=res["warm_cpu_s"] / dur)
            rows.append(res)
            print(f"  {label:24s} {dur:5.0f} s  cold {res['cold_s']:7.2f} s  warm {res['warm_s']:7.3f} s  "
                  f"RTF {res['rtf']:.4f}  (CPU-time RTF {res['rtf_cpu']:.4f})", flush=True)
    return rows


# ---- cached re-run of a whole question --------------------------------------------------------------------
def bench_cache(clips: dict[float, Path], warmup_clip: Path, work: Path) -> list[dict]:
    os.environ.update({k: v for k, v in _env().items() if k not in os.environ})
    from audiomind.api import AudioMind
    from audiomind.tools.executor import ToolCache

    AudioMind(trace_dir=work / "traces_warm", use_cache=False).ask(warmup_clip, QUESTION)  # load models
    out = []
    for dur, clip in clips.items():
        cache_dir = work / f"cache_{int(dur)}"
        agent = AudioMind(trace_dir=work / f"traces_{int(dur)}", cache_dir=cache_dir)
        runs = []
        for _ in range(2):
            t0 = time.perf_counter()
            r = agent.ask(clip, QUESTION)
            wall = time.perf_counter() - t0
            calls = r.state.tool_calls
            runs.append({"wall_s": wall, "tool_s": sum(c.duration_s for c in calls), "calls": len(calls),
                         "cached": sum(c.status.value == "cached" for c in calls),
                         "keys": [c.cache_key for c in calls if c.status.value == "cached" and c.cache_key],
                         "answer": r.answer})
        cache = ToolCache(cache_dir)
        t0 = time.perf_counter()
        for key in runs[1]["keys"]:
            assert cache.get(key) is not None
        lookup = time.perf_counter() - t0
        r1, r2 = runs
        out.append({
            "clip_s": dur, "run1_tool_s": r1["tool_s"], "run2_tool_s": r2["tool_s"], "run1_wall_s": r1["wall_s"],
            "run2_wall_s": r2["wall_s"], "calls": r1["calls"], "run2_cached": r2["cached"],
            "cache_lookup_s": lookup, "same_answer": r1["answer"] == r2["answer"],
            "tool_speedup_recorded": (r1["tool_s"] / r2["tool_s"]) if r2["tool_s"] > 0 else float("inf"),
            "tool_speedup_vs_lookup": r1["tool_s"] / max(lookup + r2["tool_s"], 1e-9),
            "wall_speedup": r1["wall_s"] / r2["wall_s"],
        })
        print(f"  ask x2 on {dur:.0f} s: tool {r1['tool_s']:.2f} s -> {r2['tool_s']:.3f} s "
              f"({r2['cached']}/{r2['calls']} cached, lookups {lookup * 1000:.1f} ms); "
              f"wall {r1['wall_s']:.2f} s -> {r2['wall_s']:.2f} s", flush=True)
    return out


# ---- report -----------------------------------------------------------------------------------------------
def report(rows: list[dict], cache_rows: list[dict]) -> str:
    title = ("Tool timings (cold = first call in a fresh process; warm = median of later calls; "
             "RTF = warm / clip duration)")
    lines = ["", title, ""]
    lengths = sorted({r["clip_s"] for r in rows})
    head = f"{'tool':24s} {'category':24s}" + "".join(
        f" | {int(d):>3d} s: cold s  warm s    RTF cpuRTF " for d in lengths) + " | goal"
    lines += [head, "-" * len(head)]
    by_tool: dict[str, dict[float, dict]] = {}
    for r in rows:
        by_tool.setdefault(r["tool"], {})[r["clip_s"]] = r
    failures = []
    for tool, per in by_tool.items():
        cat = next(iter(per.values()))["category"]
        goal = ASR_RTF_GOAL if tool.startswith("asr") else RTF_GOAL
        cells, ok = "", True
        for d in lengths:
            r = per.get(d)
            if r is None or "error" in r:
                cells += f" | {'error':>37s}  "
                ok = False
                continue
            cells += f" | {r['cold_s']:13.2f} {r['warm_s']:7.3f} {r['rtf']:6.3f} {r['rtf_cpu']:6.3f} "
            ok &= r["rtf"] < goal
        mark = f"RTF<{goal:g} {'ok' if ok else 'MISSED'}"
        if not ok:
            failures.append(tool)
        lines.append(f"{tool:24s} {cat:24s}{cells}| {mark}")
    lines += ["", "Cached re-run of a whole question (AudioMind.ask twice, same clip, tool cache on)", ""]
    lines.append(f"{'clip':>6s} {'calls':>5s} {'cached':>6s} {'tool s run1':>11s} {'tool s run2':>11s} "
                 f"{'lookup s':>9s} {'tool x (vs lookup)':>18s} {'wall s run1':>11s} {'wall s run2':>11s} "
                 f"{'wall x':>7s} {'same answer':>11s}")
    for c in cache_rows:
        lines.append(f"{c['clip_s']:5.0f}s {c['calls']:5d} {c['run2_cached']:6d} {c['run1_tool_s']:11.3f} "
                     f"{c['run2_tool_s']:11.4f} {c['cache_lookup_s']:9.4f} {c['tool_speedup_vs_lookup']:18.0f} "
                     f"{c['run1_wall_s']:11.2f} {c['run2_wall_s']:11.2f} {c['wall_speedup']:7.1f} "
                     f"{c['same_answer']!s:>11s}")
    cache_ok = all(c["tool_speedup_vs_lookup"] >= CACHE_GOAL for c in cache_rows)
    lines += ["", f"Goals: perception RTF < {RTF_GOAL:g} (ASR < {ASR_RTF_GOAL:g}): "
              + ("met" if not failures else "missed by " + ", ".join(failures))
              + f"; cached re-run >= {CACHE_GOAL:g}x faster in tool time: " + ("met" if cache_ok else "missed")]
    return "\n".join(lines)


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    lengths: list[float] = typer.Option([10.0, 60.0], "--lengths", help="clip seconds (repeatable)"),
    warm: int = typer.Option(2, min=0, help="warm calls per (tool, clip) after the cold one"),
    tools_only: bool = typer.Option(False, "--tools-only", help="only the tools' real-time factors"),
    cache_only: bool = typer.Option(False, "--cache-only", help="only the tool-cache measurement"),
    out: Path | None = typer.Option(None, "--out", help="also write the raw numbers as JSON here"),
    worker_args: tuple[str, str, str, str, int] | None = typer.Option(
        None, "--worker", hidden=True, help="internal: TOOL ARGS CLIP OTHER WARM, measured in this process"),
) -> None:
    """Real-time factor of every embedded perception tool (cold/warm) and the tool cache's speed-up."""
    if worker_args:
        tool, args_json, clip, other, n_warm = worker_args
        print(json.dumps(worker(tool, args_json, clip, other, n_warm)))
        return
    with tempfile.TemporaryDirectory(prefix="am_toolbench_") as tmp:
        work = Path(tmp)
        print("making clips ...", flush=True)
        clips = {d: make_clip(d, work / f"clip_{int(d)}s.wav", work) for d in lengths}
        others = {d: make_second_artifact(p, work / f"clip_{int(d)}s_half.wav") for d, p in clips.items()}
        warmup = make_clip(8.0, work / "warmup.wav", work)
        rows = [] if cache_only else bench_tools(clips, others, warm)
        cache_rows = [] if tools_only else bench_cache(clips, warmup, work)
        print(report(rows, cache_rows))
        if out:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"tools": rows, "cache": cache_rows}, indent=2, default=str))


if __name__ == "__main__":
    app()
