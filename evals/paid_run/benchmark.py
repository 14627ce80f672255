"""What a 1,000-item MMAR run costs on a paid API, by `bench run --dry-run`'s own estimate, and what a re-run
costs (the model-call cache). A benchmark, not a test:

    .venv/bin/python evals/paid_run/benchmark.py [--sample 4] [--json out.json]

MMAR's rows (question, choices, modality, and the clip's length from its `timestamp`) come from the
repository's copy of the meta (tests/data/parity/mmar/MMAR-meta.jsonl.xz). MMAR's audio is not in the
repository, so each sampled row gets a synthetic clip of its own length (a tone with noise: the tokens a
clip costs depend on its length, not on what it holds). The planner (`openai:gpt-4o-mini`) and the audio front
end (`openai:gpt-audio-mini`) both talk to a loopback OpenAI-compatible stand-in
(tests/backends/standins/openai_standin.py: every request validated against the installed openai SDK's
types) that answers each role with valid JSON (evals/throughput_benchmark.reply_content) and reports usage as
a provider does: text at 4 characters a token, audio at 25 tokens a second (Qwen2.5-Omni's encoder; OpenAI
does not publish its rate, so the audio figure is an assumption), audio tokens in
`prompt_tokens_details.audio_tokens`.

Prices are the shipped table's (audiomind/bench/data/prices.toml, dated), passed as --price because the
stand-in is an @URL spec. Printed: the dry run's table (tokens per item by role, USD per item, USD for the
whole meta), its stated method, and then the real run of the same rows twice into fresh folders: requests
sent, cache hits and cost of each.
"""

from __future__ import annotations

import json
import lzma
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from audiomind import audio as aio
from audiomind.bench.prices import builtin_prices
from evals.throughput_benchmark import reply_content
from tests.backends.standins.openai_standin import OpenAIStandin, Script

PLANNER, FRONTEND = "gpt-4o-mini", "gpt-audio-mini"


def meta_rows() -> list[dict[str, Any]]:
    path = REPO / "tests" / "data" / "parity" / "mmar" / "MMAR-meta.jsonl.xz"
    return [json.loads(line) for line in lzma.open(path, "rt", encoding="utf-8") if line.strip()]


def seconds(timestamp: str | None) -> float | None:
    """'00:01:32,00:02:02' -> 30.0 (None when it does not parse)."""
    m = re.fullmatch(r"(\d+):(\d+):(\d+),(\d+):(\d+):(\d+)", (timestamp or "").strip())
    if not m:
        return None
    a = [int(x) for x in m.groups()]
    d = (a[3] * 3600 + a[4] * 60 + a[5]) - (a[0] * 3600 + a[1] * 60 + a[2])
    return float(d) if 0 < d <= 600 else None


def sample(rows: list[dict[str, Any]], n: int, folder: Path) -> Path:
    """n rows spread over the meta, each with a synthetic clip of its length; an MMAR meta file for them."""
    step = max(1, len(rows) // n)
    picked = rows[::step][:n]
    (folder / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    out = []
    for r in picked:
        dur = seconds(r.get("timestamp")) or 10.0
        t = np.arange(int(dur * 16000)) / 16000
        y = 0.2 * np.sin(2 * np.pi * 330 * t) + 0.02 * rng.standard_normal(t.size)
        aio.write_wav(folder / "audio" / f"{r['id']}.wav", y.astype(np.float32), 16000)
        out.append({**r, "audio_path": f"./audio/{r['id']}.wav"})
    meta = folder / "MMAR-meta.jsonl"
    meta.write_text("".join(json.dumps(r) + "\n" for r in out))
    return meta


def bench(args: list[str]) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from audiomind.cli import app

    res = CliRunner().invoke(app, ["bench", *args])
    return res.exit_code, res.stdout, res.output


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=4, help="rows the dry run answers (and the re-run test runs)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)

    rows = meta_rows()
    durs = [d for d in (seconds(r.get("timestamp")) for r in rows) if d]
    as_of, table = builtin_prices()
    p, f = table[f"openai:{PLANNER}"], table[f"openai:{FRONTEND}"]
    server = OpenAIStandin()
    server.default = lambda body: Script(reply_content(body))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        meta = sample(rows, a.sample, work)
        common = ["run", "--task", "mmar", "--source", str(meta), "--audio-dir", str(work), "--planner", f"openai:{PLANNER}@{server.url}",
                  "--frontend", f"openai:{FRONTEND}@{server.url}", "--no-progress",
                  "--model-cache-dir", str(work / "cache"), "--price", f"openai:{PLANNER}={p.input_per_m},{p.output_per_m},{p.cached_per_m or ''}",
                  "--price", f"openai:{FRONTEND}={f.input_per_m},{f.output_per_m},,{f.audio_input_per_m}"]
        # the dry run: N items for real, extrapolated to the whole meta (len(rows) items)
        full_meta = work / "full-meta.jsonl"
        full_meta.write_text(meta.read_text() + "".join(json.dumps(r) + "\n" for r in rows[a.sample:]))
        dry = ["run", "--task", "mmar", "--source", str(full_meta), *common[5:], "--out", str(work / "dry"), "--dry-run",
               str(a.sample), "--json"]
        t0 = time.monotonic()
        code, out, said = bench(dry)
        if code != 0:
            print(said)
            return 1
        est = json.loads(out)
        dry_s = time.monotonic() - t0
        sent_before = len(server.seen)
        runs = []
        for name in ("run1", "run2"):
            before = len(server.seen)
            code, out, said = bench([*common, "--out", str(work / name), "--json"])
            if code != 0:
                print(said)
                return 1
            s = json.loads(out)["summary"]
            runs.append({"run": name, "requests": len(server.seen) - before, "cache_hits": s["cache_hits"],
                         "cost_usd": s["cost_usd"], "statuses": s["statuses"]})
    server.close()
    print(f"MMAR meta: {len(rows)} rows, clip length median {statistics.median(durs):.1f} s "
          f"(p90 {np.percentile(durs, 90):.1f} s) from the timestamps")
    print(f"prices: the shipped table as of {as_of}: planner {PLANNER} in/out/cached {p.input_per_m}/"
          f"{p.output_per_m}/{p.cached_per_m} USD per 1M; front end {FRONTEND} text in/out {f.input_per_m}/"
          f"{f.output_per_m}, audio in {f.audio_input_per_m}")
    print(f"\ndry run of {a.sample} items ({dry_s:.1f} s):")
    print(f"{'role':10} {'calls/item':>10} {'in tok/item':>12} {'audio tok':>10} {'out tok/item':>13} "
          f"{'USD/item':>10} {'USD whole meta':>15}")
    for r in est["roles"]:
        tk = r["tokens_per_item"]
        print(f"{r['role']:10} {r['calls_per_item']:>10.1f} {tk.get('input_tokens', 0):>12,.0f} "
              f"{tk.get('audio_input_tokens', 0):>10,.0f} {tk.get('output_tokens', 0):>13,.0f} "
              f"{r['cost_per_item']:>10.5f} {r['cost_run']:>15.2f}")
    lo, hi = est["cost_run_range"]
    print(f"whole run ({est['total_items']} items): ${est['cost_run']:.2f} (range ${lo:.2f}-${hi:.2f})")
    print(f"method: {est['method']}")
    print(f"\nthe dry run sent {sent_before} requests; then the same {a.sample} rows, twice, into fresh folders:")
    for r in runs:
        print(f"  {r['run']}: {r['requests']} requests sent, {r['cache_hits']} model calls from the cache, "
              f"cost ${r['cost_usd']:.5f}, {r['statuses']}")
    if a.json:
        a.json.write_text(json.dumps({"estimate": est, "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
