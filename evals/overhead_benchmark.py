"""Orchestration overhead benchmark (not a test): how much of a run is the graph itself, per node.

    .venv/bin/python evals/overhead_benchmark.py [--fresh 2] [--cache] [--planner rules --frontend cascade]
                                                 [--out r.json]

Runs a handful of questions (examples/questions.jsonl, plus --fresh new 10-second clips from evals/clips.py)
in one process and decomposes every node's wall time, from the trace (each node's start and duration,
each tool call's start and duration, each model request's latency) and from timers this script puts
around the embedded text model (MiniLM, called by the rules planner and the answer verifiers) and around
the planner's and front end's methods:

- tools: the union of the node's tool-call intervals (parallel calls count once);
- models: model-request latency (LLM planners / front ends) plus MiniLM time outside tool calls;
- planner / front-end code: time inside the planner's and front end's methods not covered above (the
  `rules` policy and the `cascade`'s pass logic and answer verifiers: the offline stand-ins for a model);
- orchestration: the rest of the node's wall time (the node wrapper, building observations and decisions,
  the executor's validation and bookkeeping). `wall - tools - models` is printed too.

Outside the nodes: compiling the graph (once per agent: audiomind.graph.dispatch), writing the trace, and
the rest of `ask()` (LangGraph scheduling and state merging between nodes, probing the input, creating
the state).

Target: orchestration < 2% of a run or < 20 ms per node, whichever is larger.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import typer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clips import QUESTIONS, fresh_clip

ROOT = Path(__file__).resolve().parents[1]
PURPOSE_NODE = {"perception_prompt": "perception_prompt", "plan": "plan", "decide": "decide",
                "summarize": "summarize", "perception": "perceive", "listen": "perceive", "relisten": "relisten",
                "answer": "final_answer"}
TARGET_SHARE, TARGET_NODE_S = 0.02, 0.020


class Timers:
    """Wall-clock intervals of instrumented calls, by kind (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.totals: dict[str, float] = defaultdict(float)

    def wrap(self, kind: str, fn):
        def timed(*a, **k):
            t0 = time.time()
            try:
                return fn(*a, **k)
            finally:
                t1 = time.time()
                with self.lock:
                    self.spans[kind].append((t0, t1))
                    self.totals[kind] += t1 - t0

        return timed

    def reset(self) -> None:
        with self.lock:
            self.spans.clear()
            self.totals.clear()


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _clip(spans, lo: float, hi: float) -> list[tuple[float, float]]:
    return [(max(a, lo), min(b, hi)) for a, b in spans if min(b, hi) > max(a, lo)]


def _union(spans) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _length(spans) -> float:
    return sum(b - a for a, b in _union(spans))


def _minus(spans, cover) -> float:
    """Length of `spans` not covered by `cover`."""
    return _length(spans) - _length(_clip_many(_union(spans), _union(cover)))


def _clip_many(spans, cover):
    return [seg for a, b in cover for seg in _clip(spans, a, b)]


def decompose(st, timers: Timers) -> dict[str, dict[str, float]]:
    """Per node of one run: wall, tools, models, planner/front-end code, orchestration (seconds)."""
    tools = [(_epoch(c.started_at), _epoch(c.started_at) + c.duration_s) for c in st.tool_calls if c.duration_s > 0]
    model_by_node: dict[str, float] = defaultdict(float)
    for m in st.model_calls:
        model_by_node[PURPOSE_NODE.get(m.purpose, m.purpose)] += m.latency_s or 0.0
    rows: dict[str, dict[str, float]] = {}
    slack = 0.002  # trace times are in milliseconds
    for t in st.timings:
        lo = _epoch(t.started_at) - slack
        hi = _epoch(t.started_at) + t.duration_s + slack
        node_tools = _clip(tools, lo, hi)
        embeds = _clip(timers.spans.get("minilm", []), lo, hi)
        code = _clip(timers.spans.get("backend", []), lo, hi)
        tool_s = min(_length(node_tools), t.duration_s)
        model_s = min(model_by_node.pop(t.node, 0.0) + _minus(embeds, node_tools), t.duration_s - tool_s)
        code_s = min(max(0.0, _length(code) - _length(_clip_many(_union(code), _union(node_tools + embeds)))),
                     t.duration_s - tool_s - model_s)
        r = rows.setdefault(t.node, defaultdict(float))
        r["calls"] += 1
        r["wall"] += t.duration_s
        r["tools"] += tool_s
        r["models"] += max(0.0, model_s)
        r["code"] += max(0.0, code_s)
    for r in rows.values():
        r["orchestration"] = max(0.0, r["wall"] - r["tools"] - r["models"] - r["code"])
    return rows


def instrument(agent, timers: Timers) -> None:
    """Timers around MiniLM, graph building, trace writing and every planner / front-end method."""
    from audiomind import api
    from audiomind.embedded import text

    text.embed = timers.wrap("minilm", text.embed)
    api.compile_shared = timers.wrap("build_graph", api.compile_shared)  # once per agent (graph.dispatch)
    api.write_trace = timers.wrap("write_trace", api.write_trace)
    for name in ("perception_prompt", "plan", "decide", "summarize"):
        setattr(agent.planner, name, timers.wrap("backend", getattr(agent.planner, name)))
    frontend_for = agent.frontend_for

    def wrapped_frontend_for(executor):
        fe = frontend_for(executor)
        if not getattr(fe, "_overhead_timed", False):
            for name in ("listen", "answer"):
                setattr(fe, name, timers.wrap("backend", getattr(fe, name)))
            fe._overhead_timed = True
        return fe

    agent.frontend_for = wrapped_frontend_for


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    fresh: int = typer.Option(2, min=0, help="extra questions on new 10-second clips"),
    cache: bool = typer.Option(False, "--cache", help="let the tool cache answer (default: every tool runs)"),
    planner: str = typer.Option("rules", help="planner spec"),
    frontend: str = typer.Option("cascade", help="front-end spec"),
    out: Path | None = typer.Option(None, "--out", help="also write the per-run numbers as JSON here"),
) -> None:
    """Print the per-node decomposition and the overhead against its target."""
    from audiomind import AudioMind
    from audiomind.cli_common import quiet_libraries

    quiet_libraries()
    items = [json.loads(line) for line in (ROOT / "examples" / "questions.jsonl").read_text().splitlines() if line]
    work = Path(tempfile.mkdtemp(prefix="audiomind-overhead-"))
    questions = [(ROOT / "examples" / it["audio"], it["question"], it["choices"]) for it in items]
    for i in range(fresh):
        q, ch = QUESTIONS[i % len(QUESTIONS)]
        questions.append((fresh_clip(10.0, work / f"fresh{i}.wav", variant=int(time.time()) % 10_000 + i), q, ch))
    agent = AudioMind(planner=planner, frontend=frontend, trace_dir=str(work / "traces"), use_cache=cache)
    timers = Timers()
    instrument(agent, timers)

    runs = []
    per_node: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    outside = defaultdict(float)
    for audio, question, choices in questions:
        timers.reset()
        t0 = time.perf_counter()
        result = agent.ask(audio, question, choices)
        wall = time.perf_counter() - t0
        st = result.state
        rows = decompose(st, timers)
        node_sum = sum(r["wall"] for r in rows.values())
        build_s, write_s = timers.totals.get("build_graph", 0.0), timers.totals.get("write_trace", 0.0)
        between = max(0.0, wall - node_sum - build_s - write_s)
        for node, r in rows.items():
            for k, v in r.items():
                per_node[node][k] += v
            per_node[node]["share"] += r["orchestration"] / wall
        outside["build_graph"] += build_s
        outside["write_trace"] += write_s
        outside["between"] += between
        orch = sum(r["orchestration"] for r in rows.values()) + build_s + between
        runs.append({"audio": Path(audio).name, "question": question, "answer": result.answer, "wall_s": wall,
                     "nodes": {k: dict(v) for k, v in rows.items()}, "build_graph_s": build_s,
                     "write_trace_s": write_s, "between_nodes_s": between, "orchestration_s": orch})
        print(f"{Path(audio).name:18s} {wall:6.2f} s  orchestration {orch * 1000:6.1f} ms "
              f"({100 * orch / wall:.2f}% of the run)  answer: {result.answer}")

    n = len(runs)
    mean_wall = statistics.mean(r["wall_s"] for r in runs)
    print(f"\n{n} questions, planner {planner}, front end {frontend}, tool cache {'on' if cache else 'off'}; "
          f"mean run {mean_wall:.2f} s. Per node: means over the runs that executed it (ms).\n")
    print("| node | runs | wall | tools | models | wall - tools - models | planner / front-end code "
          "| orchestration | % of run | target | ok |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    order = ["ingest", "perception_prompt", "perceive", "plan", "decide", "execute_tools", "relisten", "summarize",
             "final_answer", "format_check", "finish"]
    all_ok = True
    for node in sorted(per_node, key=lambda k: order.index(k) if k in order else 99):
        r = per_node[node]
        c = r["calls"]
        runs_with = sum(1 for x in runs if node in x["nodes"])
        orch_ms = 1000 * r["orchestration"] / c
        share = 100 * r["share"] / runs_with
        target_ms = max(TARGET_NODE_S, TARGET_SHARE * mean_wall) * 1000
        ok = orch_ms < target_ms
        all_ok &= ok
        print(f"| {node} | {runs_with} ({int(c)} calls) | {1000 * r['wall'] / c:.1f} | {1000 * r['tools'] / c:.1f} | "
              f"{1000 * r['models'] / c:.1f} | {1000 * (r['wall'] - r['tools'] - r['models']) / c:.1f} | "
              f"{1000 * r['code'] / c:.1f} | {orch_ms:.2f} | {share:.3f}% | {target_ms:.0f} | "
              f"{'yes' if ok else 'NO'} |")
    for key, label in (("build_graph", "(outside nodes) compile the graph (once per agent)"), ("write_trace",
                       "(outside nodes) write the trace"), ("between", "(outside nodes) LangGraph between nodes, probe, state setup")):
        ms = 1000 * outside[key] / n
        print(f"| {label} | {n} | {ms:.1f} | | | | | {ms if key != 'write_trace' else 0:.2f} | "
              f"{100 * outside[key] / n / mean_wall:.3f}% | | |")
    total = statistics.mean(r["orchestration_s"] for r in runs)
    share = statistics.mean(r["orchestration_s"] / r["wall_s"] for r in runs)
    nodes_per_run = statistics.mean(sum(int(v["calls"]) for v in r["nodes"].values()) for r in runs)
    print(f"\norchestration per run (node orchestration + graph build + between nodes; the trace write is I/O "
          f"the record needs, listed apart): {total * 1000:.1f} ms = {100 * share:.2f}% of a run "
          f"(target: < 2% or < 20 ms per node = {20 * nodes_per_run:.0f} ms for {nodes_per_run:.1f} nodes): "
          f"{'met' if all_ok and (share < TARGET_SHARE or total < TARGET_NODE_S * nodes_per_run) else 'NOT met'}")
    if out:
        out.write_text(json.dumps(runs, indent=2))
        print(f"raw numbers: {out}")


if __name__ == "__main__":
    app()
