"""Hour-long audio benchmark (not a test): `audiomind ask` in a fresh process on 1, 10 and 60-minute files.

    .venv/bin/python evals/long_audio_benchmark.py [--minutes 1 --minutes 10 --minutes 60] [--sr 44100]
                                                   [--cache-dir DIR] [--out r.json]

Each file is made once (cached in --cache-dir) by `audiomind.synth.long_recording`: quiet pink-ish noise
(-45 dBFS RMS), a beep every sixth of the file as a distractor, and one spoken sentence at 37/60 of the
duration (minute 37 of the hour), written at --sr (44.1 kHz by default, so decoding resamples). Two questions
per file, each in a fresh process with the tool cache off (`--no-cache`) under /usr/bin/time -v:

- "What is said in this recording?" (four sentences to choose from): the answer must come from the one
  sentence, wherever it is;
- the same with an explicit time ("What is said around minute 37?" on the hour; "What is said at M:SS?" on the
  shorter files): the planner must run its tools on that stretch, which the trace's coverage shows.

Printed per run: wall seconds, seconds per audio minute and its ratio to the 1-minute file's (time linear in
duration: the ratio stays near 1 or falls, since start-up is paid once), peak RSS of the child, whether the
answer is right and by which method, the failed or timed-out calls (never silently dropped), and the coverage
of the asr calls (which spans Whisper transcribed). Targets: peak RSS <= 2 GB on the 60-minute file; the
minute-37 questions answered from minute 37 (right means chosen from evidence: a guess that lands on the
sentence does not count; on longer files the span question names the sentence's own minute). The machine's
load average is printed: on a shared machine wall
time also measures everyone else's work.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SENTENCE = "The blue train leaves from platform seven at noon."
DISTRACTORS = [
    "The red bus stops at the corner at midnight.",
    "Please close the window before you leave.",
    "The meeting has been moved to Friday.",
]
RSS_TARGET_GB = 2.0

app = typer.Typer(add_completion=False)


def _clock(t: float) -> str:
    return f"{int(t // 60)}:{int(t % 60):02d}"


def make_file(cache: Path, minutes: float, sr: int) -> tuple[Path, float]:
    """The cached recording of `minutes` and the time of its sentence (37/60 of the way in)."""
    from audiomind import synth

    at = round(minutes * 60 * 37 / 60, 1)
    path = cache / f"long_{minutes:g}min_{sr}.wav"
    if not path.exists():
        tmp = path.with_suffix(".part.wav")
        synth.long_recording(tmp, minutes * 60, [(at, SENTENCE)], sr=sr, beeps_every_s=minutes * 60 / 6)
        tmp.replace(path)
    return path, at


def ask(path: Path, question: str, trace_dir: Path) -> dict:
    """One `audiomind ask --json --no-cache` in a fresh process under /usr/bin/time -v."""
    cmd = [
        str(BIN / "audiomind"),
        "ask",
        str(path),
        question,
        *(arg for c in [SENTENCE, *DISTRACTORS] for arg in ("-c", c)),
        "--json",
        "--no-cache",
        "--trace-dir",
        str(trace_dir),
    ]
    timed = ["/usr/bin/time", "-v", *cmd] if Path("/usr/bin/time").exists() else cmd
    proc = subprocess.run(
        timed, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TQDM_DISABLE": "1"}, check=False,
    )
    out: dict = {"rc": proc.returncode}
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    out["peak_rss_gb"] = int(m.group(1)) / 1024**2 if m else None
    cpu = [float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", proc.stderr)]
    out["cpu_s"] = sum(cpu) if cpu else None
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    if m:
        parts = [float(x) for x in m.group(1).split(":")]
        out["wall_s"] = sum(v * 60 ** (len(parts) - 1 - i) for i, v in enumerate(parts))
    try:
        result = json.loads(proc.stdout[proc.stdout.index("{") :])
    except ValueError:
        out["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return out
    out.update(
        answer=result.get("answer"),
        method=(re.match(r"\[(\w+)\]", result.get("rationale") or "") or [None, None])[1],
        trace=result.get("trace_path"),
    )
    trace = json.loads(Path(result["trace_path"]).read_text())
    out["failed_calls"] = [
        f"{c['tool']}: {c['status']} ({c.get('error')})"
        for c in trace["tool_calls"]
        if c["status"] not in ("ok", "cached")
    ]
    out["asr_coverage"] = [
        {
            "by": c["issued_by"],
            "spans": (c.get("coverage") or {}).get("spans"),
            "analysed_s": (c.get("coverage") or {}).get("analysed_s"),
            "requested": (c.get("coverage") or {}).get("requested"),
        }
        for c in trace["tool_calls"]
        if c["tool"] == "asr"
    ]
    out["tool_s"] = {
        c["tool"] + ("@span" if (c.get("arguments") or {}).get("start_s") else ""): c["duration_s"]
        for c in trace["tool_calls"]
    }
    return out


def _covers(cov: list[dict], at: float) -> bool:
    return any(a <= at <= b for c in cov for a, b in (c["spans"] or []))


@app.command()
def main(
    minutes: list[float] = typer.Option([1.0, 10.0, 60.0], help="lengths (minutes); repeat the option"),
    sr: int = typer.Option(44100, help="sample rate of the generated files"),
    cache_dir: Path = typer.Option(
        Path(tempfile.gettempdir()) / "audiomind-long-audio",
        help="where the generated files are kept between runs",
    ),
    out: Path | None = typer.Option(None, help="write the raw numbers as JSON"),
) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mins in minutes:
            path, at = make_file(cache_dir, mins, sr)
            # the minute the sentence is in (37 on the hour), or its clock time on files under 40 minutes
            minute = round(at / 60)
            span_q = f"What is said at {_clock(at)}?"
            if mins >= 40:
                span_q = f"What is said around minute {minute}?"
            for kind, q in (("whole", "What is said in this recording?"), ("span", span_q)):
                r = ask(path, q, Path(tmp) / "traces")
                r.update(  # right: the sentence chosen from evidence (a guess that lands on it is not right)
                    minutes=mins,
                    kind=kind,
                    question=q,
                    said_at_s=at,
                    correct=r.get("answer") == SENTENCE and r.get("method") != "guess",
                    asr_covers_sentence=_covers(r.get("asr_coverage") or [], at + 1.0),
                )
                if kind == "span":
                    r["span_analysed"] = any(
                        c["by"] == "planner"
                        and c["spans"]
                        and c["analysed_s"]
                        and c["requested"]
                        and c["requested"][0] <= at <= c["requested"][1]
                        for c in r.get("asr_coverage") or []
                    )
                rows.append(r)
                print(
                    f"  {mins:g} min {kind}: {r.get('wall_s', float('nan')):.1f} s, "
                    f"{r.get('peak_rss_gb') or float('nan'):.2f} GB, answer ok={r['correct']}",
                    file=sys.stderr,
                )
    base = {
        r["kind"]: r["wall_s"] / r["minutes"]
        for r in rows
        if r["minutes"] == min(minutes) and r.get("wall_s")
    }
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; files at {sr} Hz in {cache_dir}")
    print(
        "| audio | question | wall s | s / audio min | ratio to shortest | marginal s / audio min | CPU s | "
        "peak RSS GB | right (method) | failed calls | asr coverage |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    prev: dict[str, dict] = {}
    for r in rows:
        rate = r["wall_s"] / r["minutes"] if r.get("wall_s") else float("nan")
        p = prev.get(r["kind"])  # the extra wall time per extra audio minute over the previous length
        marginal = (
            (r["wall_s"] - p["wall_s"]) / (r["minutes"] - p["minutes"])
            if p and r.get("wall_s") and p.get("wall_s") and r["minutes"] > p["minutes"]
            else float("nan")
        )
        prev[r["kind"]] = r
        cov = "; ".join(
            f"{c['by']}: "
            + ", ".join(f"{_clock(a)}-{_clock(b)}" for a, b in (c["spans"] or []))
            + f" ({c['analysed_s']:.0f} of {c['requested'][1] - c['requested'][0]:.0f} s)"
            for c in r.get("asr_coverage") or []
            if c["requested"]
        )
        rss = r.get("peak_rss_gb")
        rss_txt = f"{rss:.2f}" + (" (> target)" if rss and r["minutes"] >= 60 and rss > RSS_TARGET_GB else "")
        cpu = r.get("cpu_s") or float("nan")
        right = f"{'yes' if r['correct'] else 'NO'} ({r.get('method')})"
        wall = r.get("wall_s", float("nan"))
        ratio = rate / base.get(r["kind"], rate)
        cells = [f"{r['minutes']:g} min", f'{r["kind"]} ("{r["question"]}")', f"{wall:.1f}", f"{rate:.2f}",
                 f"{ratio:.2f}", f"{marginal:.2f}", f"{cpu:.0f}", rss_txt, right,
                 str(len(r.get("failed_calls") or [])), cov]
        print("| " + " | ".join(cells) + " |")
    for r in rows:
        for f in r.get("failed_calls") or []:
            print(f"failed on {r['minutes']:g} min ({r['kind']}): {f}")
        if r.get("error"):
            print(f"error on {r['minutes']:g} min ({r['kind']}): {r['error']}")
    if out:
        out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    app()
