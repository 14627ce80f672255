"""`audiomind serve` benchmark (not a test): latency of the warm service through its HTTP API, and a
bounded load test on loopback.

    .venv/bin/python evals/serve_benchmark.py [--new 3] [--repeats 10] [--requests 200] [--concurrency 8]
                                              [--server-concurrency 2] [--queue 16] [--out r.json]

A real server is started (`audiomind serve` on a free loopback port, warm-up on, tool cache in a fresh
folder), or `--url` points at one already running (then `--root` must be its served folder).

- new question: a 10-second clip never seen before (evals/clips.py), uploaded; the client's wall time
  per request (median over --new clips). Target <= 1.5 s.
- repeated question: the same upload again (the tool cache answers); median over --repeats. Target <=
  100 ms.
- load test: --requests requests at --concurrency client threads over the clips and evals/clips.py's
  questions (uploads and paths alternating; every (clip, question) pair asked once before, untimed, so
  the test measures the warm service, not first-time tool runs). Errors, 429s, lost traces (a 200 whose
  trace cannot be fetched back with the same run id), p50 / p95 / max latency and throughput.

Every figure is printed beside its target as measured / target.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import typer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clips import QUESTIONS, fresh_clip

NEW_TARGET_S, REPEAT_TARGET_S = 1.5, 0.100
BIN = Path(sys.executable).parent


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else float("nan")


@contextlib.contextmanager
def server(root: Path, traces: Path, cache: Path, concurrency: int, queue: int, log: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "AUDIOMIND_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    cmd = [str(BIN / "audiomind"), "serve", "--port", str(port), "--root", str(root), "--trace-dir", str(traces),
           "--concurrency", str(concurrency), "--queue", str(queue), "--log-level", "warning"]
    with open(log, "w") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env)
        try:
            yield f"http://127.0.0.1:{port}", proc
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_ready(client, proc, log: Path, timeout_s: float = 600) -> float:
    import httpx

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout_s:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}):\n{log.read_text()[-2000:]}")
        with contextlib.suppress(httpx.TransportError):
            r = client.get("/healthz", timeout=5)
            if r.status_code == 200 and r.json().get("ready"):
                return time.perf_counter() - t0
        time.sleep(0.25)
    raise SystemExit("the server did not become ready")


def ask(client, clip: Path, question: str, choices: list[str], *, upload: bool, root: Path) -> tuple[float, dict]:
    data = {"question": question, "choices": choices}
    t0 = time.perf_counter()
    if upload:
        with open(clip, "rb") as f:
            r = client.post("/v1/ask", data=data, files={"audio": (clip.name, f, "audio/wav")})
    else:
        r = client.post("/v1/ask", data={**data, "path": str(clip.relative_to(root))})
    wall = time.perf_counter() - t0
    body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
    return wall, {"status": r.status_code, **body}


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    new: int = typer.Option(3, min=1, help="new 10-second questions (each a clip never seen before)"),
    repeats: int = typer.Option(10, min=1, help="repeats of one question on one uploaded clip"),
    requests: int = typer.Option(200, min=0, help="load-test requests"),
    concurrency: int = typer.Option(8, min=1, help="load-test client threads"),
    server_concurrency: int = typer.Option(2, min=1, help="the server's runs at once (serve --concurrency)"),
    queue: int = typer.Option(16, min=0, help="the server's queue (serve --queue)"),
    seconds: float = typer.Option(10.0, min=1.0, help="clip length"),
    url: str | None = typer.Option(None, help="use this running server instead of starting one"),
    root: Path | None = typer.Option(None, help="with --url: the server's --root (clips are written there)"),
    out: Path | None = typer.Option(None, "--out", help="also write the raw numbers as JSON here"),
) -> None:
    """Run the three measurements and print them against their targets."""
    import httpx

    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="audiomind-serve-bench-"))
    clip_root = (root or tmp / "clips").resolve()
    clip_root.mkdir(parents=True, exist_ok=True)
    variant0 = int(time.time()) % 100_000
    clips = [fresh_clip(seconds, clip_root / f"new{i}.wav", variant=variant0 + i, work=tmp / "parts")
             for i in range(new)]
    log = tmp / "server.log"
    raw: dict = {"load_average": load}
    try:
        with contextlib.ExitStack() as stack:
            proc = None
            if url is None:
                url, proc = stack.enter_context(server(clip_root, tmp / "traces", tmp / "cache", server_concurrency,
                                                       queue, log))
            client = stack.enter_context(httpx.Client(base_url=url, timeout=600))
            ready_s = wait_ready(client, proc, log)
            print(f"server {url}: ready after {ready_s:.1f} s (start-up and warm-up)\n")
            question, choices = QUESTIONS[0]

            new_runs = [ask(client, c, question, choices, upload=True, root=clip_root) for c in clips]
            bad = [b for _, b in new_runs if b["status"] != 200]
            if bad:
                raise SystemExit(f"new-question requests failed: {bad[:2]}")
            rep_runs = [ask(client, clips[-1], question, choices, upload=True, root=clip_root)
                        for _ in range(repeats)]
            rep_path = [ask(client, clips[-1], question, choices, upload=False, root=clip_root)
                        for _ in range(repeats)]
            breakdown = []  # where a new question's time goes, from its trace
            for _, b in new_runs:
                st = client.get(f"/v1/traces/{b['trace_id']}").json()
                breakdown.append({"nodes": {t["node"]: t["duration_s"] for t in st["timings"]},
                                  "tools": {c["tool"]: c["duration_s"] for c in st["tool_calls"]}})
            raw["new_breakdown"] = breakdown
            new_wall = statistics.median(w for w, _ in new_runs)
            rep_wall = statistics.median(w for w, _ in rep_runs)
            path_wall = statistics.median(w for w, _ in rep_path)
            raw.update(new=[{"wall_s": w, **b} for w, b in new_runs], repeat_upload=[w for w, _ in rep_runs],
                       repeat_path=[w for w, _ in rep_path])

            # ---- load test
            pairs = [(c, q, ch) for c in clips for q, ch in QUESTIONS]
            for c, q, ch in pairs:  # first asks of each pair: untimed
                ask(client, c, q, ch, upload=False, root=clip_root)
            results: list[tuple[float, dict]] = []
            lock = threading.Lock()

            def one(i: int) -> None:
                c, q, ch = pairs[i % len(pairs)]
                res = ask(client, c, q, ch, upload=i % 2 == 0, root=clip_root)
                with lock:
                    results.append(res)

            t0 = time.perf_counter()
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(one, range(requests)))
            load_wall = time.perf_counter() - t0
            ok = [(w, b) for w, b in results if b["status"] == 200]
            busy = sum(1 for _, b in results if b["status"] == 429)
            errors = len(results) - len(ok)
            lost = 0
            for _, b in ok:
                tr = client.get(f"/v1/traces/{b['trace_id']}")
                if tr.status_code != 200 or tr.json()["run"]["run_id"] != b["run_id"]:
                    lost += 1
            distinct = len({b["run_id"] for _, b in ok})
            lat = [w for w, _ in results]
            raw.update(load={"requests": requests, "concurrency": concurrency, "ok": len(ok), "errors": errors,
                             "busy_429": busy, "lost_traces": lost, "distinct_run_ids": distinct,
                             "latencies": lat, "wall_s": load_wall})
            metrics = client.get("/metrics").text
    finally:
        if out:
            out.write_text(json.dumps(raw, indent=2, default=str))
        shutil.rmtree(tmp, ignore_errors=True)

    def row(name: str, value: float, target: float | None, unit: str = "s") -> None:
        fmt = (lambda v: f"{v * 1000:.0f} ms") if unit == "ms" else (lambda v: f"{v:.2f} s")
        ratio = f"{value / target:.2f}" if target else ""
        print(f"| {name} | {fmt(value)} | {fmt(target) if target else ''} | {ratio} |")

    print("| measurement (client wall time, HTTP on loopback) | measured | target | measured / target |")
    print("|---|---:|---:|---:|")
    row(f"new {seconds:g} s question, upload (median of {new})", new_wall, NEW_TARGET_S)
    server_s = statistics.median(b["wall_time_s"] for _, b in new_runs)
    row("  of which the run itself (trace wall_time_s)", server_s, None)
    for name in ("nodes", "tools"):
        keys = list(dict.fromkeys(k for b in breakdown for k in b[name]))
        parts = [f"{k} {statistics.median(b[name].get(k, 0.0) for b in breakdown):.2f}" for k in keys]
        print(f"|   {name} (median s): {', '.join(p for p in parts if not p.endswith(' 0.00'))} | | | |")
    row(f"repeated question, upload (median of {repeats})", rep_wall, REPEAT_TARGET_S, "ms")
    row(f"repeated question, path (median of {repeats})", path_wall, REPEAT_TARGET_S, "ms")
    if requests:
        print(f"\n### load test: {requests} requests, {concurrency} client threads, server concurrency "
              f"{server_concurrency}, queue {queue}\n")
        print("| errors | of which 429 | lost traces | distinct run ids | p50 | p95 | max | throughput |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| {errors} | {busy} | {lost} | {distinct} / {len(ok)} | {_pct(lat, 0.5) * 1000:.0f} ms | "
              f"{_pct(lat, 0.95) * 1000:.0f} ms | {max(lat) * 1000:.0f} ms | {requests / load_wall:.1f} req/s |")
        print(f"\np95 / repeated-question target: {_pct(lat, 0.95) / REPEAT_TARGET_S:.2f}; "
              f"p50 / target: {_pct(lat, 0.5) / REPEAT_TARGET_S:.2f}")
    hits = [ln for ln in metrics.splitlines() if ln.startswith("audiomind_tool_cache_hits_total")]
    print(f"server metrics: {hits[0] if hits else 'no cache-hit counter'}")
    if out:
        print(f"raw numbers: {out}")


if __name__ == "__main__":
    app()
