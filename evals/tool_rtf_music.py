"""Real-time factor of the acoustic/music feature tools (pitch, tempo, key, chords, notes, spectral,
speech_quality) on 10 s and 60 s clips, cold vs warm. A measurement script, not a test.

    .venv/bin/python evals/tool_rtf_music.py [--lengths 10 --lengths 60] [--warm 2]
        [--tools pitch --tools tempo ...] [--out x.json]

Clips are true by construction: a General MIDI piece rendered by fluidsynth (piano I-vi-IV-V triads, a
flute melody in eighth notes, a drum kit at 100 BPM) for the music tools and `spectral`; flite speech
(rotating voices) for `speech_quality`, which is only meaningful on speech.

- cold: the first call in a fresh Python process (librosa import, numba compilation, ONNX session load
  included); each (tool, clip) pair gets its own process.
- warm: the median of the next calls in that process (a fresh ToolContext each call, so decoding is counted).
- RTF = time / clip duration. Wall time is what a user waits; process CPU time (all threads) is printed
  too because on a shared machine wall time also measures everyone else's load.
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

TOOLS = ["pitch", "tempo", "key", "chords", "notes", "spectral", "speech_quality"]
TOOLS_HELP = f"tools (repeatable): {', '.join(TOOLS)}"
SPEECH_TOOLS = {"speech_quality"}
LINES = [
    ("slt", "Good morning, this is the weather report for the northern coast."),
    ("awb", "Thank you. It will be sunny with a light breeze until the evening."),
    ("rms", "Please remember to bring the blue folder to the meeting on Friday."),
    ("kal", "The train to the city leaves from platform four at nine fifteen."),
]


def music_clip(seconds: float, out: Path, work: Path) -> Path:
    """Piano triads C-Am-F-G (one bar each at 100 BPM), a flute melody on the chord tones in eighth notes,
    and a rock drum pattern, mixed and cut to exactly `seconds`."""
    from audiomind import audio as aio
    from audiomind import synth

    bpm, beat = 100.0, 0.6
    bar = 4 * beat
    prog = ["C", "Am", "F", "G"]
    n_bars = int(np.ceil(seconds / bar))
    chords = [
        (i * bar, bar * 0.95, p, 80) for i in range(n_bars) for p in synth.chord_pitches(prog[i % 4], 4)
    ]
    melody = []
    for i in range(n_bars):
        tones = synth.chord_pitches(prog[i % 4], 5, bass=False)
        for k in range(8):
            melody.append((i * bar + k * beat / 2, beat / 2 * 0.9, tones[(k * 2 + i) % len(tones)], 90))
    piano = aio.load(synth.midi_track(chords, work / "piano.wav", program=0), sr=synth.SR)
    flute = aio.load(synth.midi_track(melody, work / "flute.wav", program=73), sr=synth.SR)
    drums = aio.load(synth.drum_pattern(bpm, seconds, work / "drums.wav"), sr=synth.SR)
    n = round(seconds * synth.SR)
    y = np.zeros(n, dtype=np.float32)
    for part, gain in ((piano, 0.5), (flute, 0.35), (drums, 0.4)):
        m = min(n, len(part))
        y[:m] += gain * part[:m]
    return aio.write_wav(out, y / max(1.0, float(np.max(np.abs(y)))), synth.SR)


def speech_clip(seconds: float, out: Path, work: Path) -> Path:
    """flite sentences in rotating voices with 0.4 s pauses, padded/cut to exactly `seconds`."""
    from audiomind import audio as aio
    from audiomind import synth

    parts, n, k = [], 0, 0
    n_max = round(seconds * synth.SR)
    while n < n_max:
        voice, text = LINES[k % len(LINES)]
        y = aio.load(synth.speech(text, work / f"s{k}.wav", voice=voice), sr=synth.SR)
        parts += [y, synth.silence(0.4)]
        n += len(y) + int(0.4 * synth.SR)
        k += 1
    return aio.write_wav(out, np.concatenate(parts)[:n_max], synth.SR)


def worker(tool: str, clip: str, warm: int) -> dict:
    """Time one tool in this fresh process: one cold call, then `warm` warm calls."""
    from audiomind import audio as aio
    from audiomind.state import Artifact
    from audiomind.tools.base import ToolContext
    from audiomind.tools.manifest import ToolRegistry

    m = ToolRegistry.load().get(tool)
    fn, args = m.callable, m.args_model.model_validate(m.example)
    info = aio.probe(clip)
    art = Artifact(
        id="a0",
        path=clip,
        sha256=aio.sha256_file(clip),
        duration_s=info.duration_s,
        sample_rate=info.sample_rate,
        channels=info.channels,
    )
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(1 + warm):
            ctx = ToolContext({"a0": art}, Path(d), {})
            t0, c0 = time.perf_counter(), time.process_time()
            fn(args, ctx)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return {
        "cold_s": times[0],
        "warm_s": statistics.median(times[1:]) if warm else None,
        "cold_cpu_s": cpu[0],
        "warm_cpu_s": statistics.median(cpu[1:]) if warm else None,
    }


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    lengths: list[float] = typer.Option([10.0, 60.0], "--lengths", help="clip seconds (repeatable)"),
    warm: int = typer.Option(2, min=0, help="warm calls per (tool, clip) after the cold one"),
    tools: list[str] = typer.Option(TOOLS, "--tools", help=TOOLS_HELP),
    out: Path | None = typer.Option(None, "--out", help="also write the raw numbers as JSON here"),
    worker_args: tuple[str, str, int] | None = typer.Option(
        None, "--worker", hidden=True, help="internal: TOOL CLIP WARM, measured in this process"),
) -> None:
    """Real-time factor of the acoustic/music feature tools on music and speech clips, cold vs warm."""
    if worker_args:
        tool, clip, n_warm = worker_args
        print(json.dumps(worker(tool, clip, n_warm)))
        return
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise typer.BadParameter(f"unknown tools {unknown}; known: {', '.join(TOOLS)}", param_hint="--tools")
    from audiomind.tools.manifest import ToolRegistry

    reg = ToolRegistry.load()
    rows = []
    with tempfile.TemporaryDirectory(prefix="am_rtf_music_") as tmp:
        work = Path(tmp)
        print("making clips ...", flush=True)
        clips = {
            (kind, d): (music_clip if kind == "music" else speech_clip)(
                d, work / f"{kind}_{int(d)}.wav", work
            )
            for kind in ("music", "speech")
            for d in lengths
        }
        for tool in tools:
            ok, why = reg.availability(tool)
            if not ok:
                print(f"  {tool:15s} unavailable: {why}", flush=True)
                continue
            kind = "speech" if tool in SPEECH_TOOLS else "music"
            for d in lengths:
                cmd = [sys.executable, __file__, "--worker", tool, str(clips[(kind, d)]), str(warm)]
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
                if proc.returncode != 0:
                    print(f"  {tool:15s} {d:4.0f} s ERROR {proc.stderr.strip()[-300:]}", flush=True)
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r.update(tool=tool, clip=kind, clip_s=d, rtf_cold=r["cold_s"] / d, rtf_warm=r["warm_s"] / d)
                rows.append(r)
                print(
                    f"  {tool:15s} {d:4.0f} s  cold {r['cold_s']:6.2f} s  warm {r['warm_s']:6.2f} s  (CPU "
                    f"{r['cold_cpu_s']:.2f} / {r['warm_cpu_s']:.2f} s)",
                    flush=True,
                )
    print(
        f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs); RTF = wall time / clip length, CPU = process CPU time"
    )
    head = f"{'tool':15s} {'clip':7s}" + "".join(
        f" | {int(d):>3d} s: cold s  warm s  RTF cold  RTF warm  warm CPU s" for d in lengths
    )
    print("\n" + head + "\n" + "-" * len(head))
    for tool in tools:
        per = {r["clip_s"]: r for r in rows if r["tool"] == tool}
        if not per:
            continue
        cells = "".join(
            f" | {per[d]['cold_s']:13.2f} {per[d]['warm_s']:7.2f} {per[d]['rtf_cold']:9.3f} {per[d]['rtf_warm']:9.3f}"
            f" {per[d]['warm_cpu_s']:11.2f}"
            if d in per
            else f" | {'-':>54s}"
            for d in lengths
        )
        print(f"{tool:15s} {next(iter(per.values()))['clip']:7s}{cells}")
    if out:
        out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    app()
