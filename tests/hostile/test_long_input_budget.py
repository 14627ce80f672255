"""`ask` on hours of silent FLAC with no duration cap and a short time budget (issue 35): before, a 10-hour
file with `--time-budget 60` ran 161 s at 4.5 GB (on this 2-core machine under load: 502 s, 3.7 GB), decoding
the whole clip at ingest and again in every perception tool. Now ingest decodes its first minute, the cascade
perceives an excerpt of the first 30 minutes (on record as artifact a1, and said in the answer), no whole-file
decode over 512 MiB is attempted, and the run's budget stops the tools. Measured once at 10 hours
(`--time-budget 60`, `--max-duration 40000`, `--no-cache`): 35 s, 638 MB. The test uses 3 hours and a 15 s
budget (on a busy machine it ends inside perception), as a subprocess whose wall time and peak RSS (from
getrusage, in a small wrapper) are measured; it takes about 20 s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

HOURS = 3.0
BUDGET_S = 15.0
MAX_RSS_BYTES = 1 << 30
"""Peak RSS allowed (the issue's bound is 2 GB on a 10-hour input): the embedded models take about 0.6 GB; a 3-hour
clip decoded whole at 16 kHz would add 0.7 GB per copy."""


MEASURE = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
           "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)); "
           "sys.exit(rc)")
"""Runs the command given after the file name and writes its peak RSS (bytes) to that file."""


def _silent_flac(path: Path, hours: float, sr: int = 8000) -> Path:
    with sf.SoundFile(path, "w", samplerate=sr, channels=1, format="FLAC", subtype="PCM_16") as f:
        block = np.zeros(sr * 600, dtype=np.int16)
        for _ in range(round(hours * 6)):
            f.write(block)
    return path


def test_hours_of_audio_with_no_cap_end_within_the_budget_in_bounded_memory(tmp_path):
    clip = _silent_flac(tmp_path / "silent.flac", HOURS)
    assert clip.stat().st_size < 1 << 20
    traces, rss_file = tmp_path / "traces", tmp_path / "maxrss"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", MEASURE, str(rss_file), sys.executable, "-m", "audiomind", "ask", str(clip),
         "What is heard?", "-c", "speech", "-c", "music", "-c", "silence", "--time-budget", f"{BUDGET_S:g}",
         "--no-cache", "--trace-dir", str(traces)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=BUDGET_S + 60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"ask with --time-budget {BUDGET_S:g} still ran after {BUDGET_S + 60:g} s")
    wall = time.monotonic() - t0
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{err}"
    assert wall <= BUDGET_S + 10, f"{wall:.1f} s with a {BUDGET_S:g} s budget\n{out}"
    rss = int(rss_file.read_text())
    assert rss < MAX_RSS_BYTES, f"peak RSS {rss / 1e6:.0f} MB"

    (trace_path,) = traces.glob("*.json")
    trace = json.loads(trace_path.read_text())
    stopped = [c for c in trace["tool_calls"] if "time budget" in (c["error"] or "")]
    if stopped:  # the budget ended in perception (how far it got depends on the machine): said so
        assert trace["outcome"]["bound_hit"] == "time_budget", trace["outcome"]
    assert trace["run"]["wall_time_s"] <= BUDGET_S + 5
    excerpt = next(a for a in trace["artifacts"] if a["operation"] == "excerpt")
    assert excerpt["derived_from"] == "a0" and excerpt["duration_s"] == 1800.0
    perception = next(o for o in trace["observations"] if o["kind"] == "perception")
    assert f"first 1800 s of the {HOURS * 3600:.0f} s clip a0" in perception["description"]
    for call in trace["tool_calls"]:  # each ended, or was stopped or skipped by the budget and says so, or was
        # refused a whole-clip decode (the planner's calls on all 3 hours of a0)
        assert call["status"] in ("ok", "cached") or "time budget" in call["error"] or (
            "too long to decode whole" in call["error"]), call
    assert "from the first 1800 s" in out
