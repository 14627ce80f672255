"""`audiomind trace stats`: the behaviour table over many traces, as in Audio-Mind's behaviour analysis:
tool calls per question, which tools, re-listen rate, failures, time per node, and, where the
questions carry ground truth, accuracy by the number of tool calls (bins 0, 1, 2-3, 4-5, 6+).

By default "tool calls" are the PLANNER's calls (the agent's decisions); the cascade front end's fixed
perception pass is counted separately (`--calls all` bins by both together).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.prompts import letter_index
from audiomind.state import EvidenceState, ToolCallStatus

BINS: tuple[tuple[str, int, int | None], ...] = (("0", 0, 0), ("1", 1, 1), ("2-3", 2, 3), ("4-5", 4, 5), ("6+", 6, None))


def _norm(s: str) -> str:
    return re.sub(r"[\s\W_]+", " ", s.lower()).strip()


def is_correct(st: EvidenceState) -> bool | None:
    """The answer against question.ground_truth: the choice text, or its letter (A, B, ...); None if
    there is no ground truth."""
    gt = st.question.ground_truth
    if gt is None:
        return None
    fa = st.final_answer
    if fa is None:
        return False
    answer = fa.choice if fa.choice is not None else fa.text
    if _norm(answer) == _norm(gt):
        return True
    letter = re.fullmatch(r"\(?([A-Za-z]{1,2})\)?\.?", gt.strip())
    if letter and fa.choice_index is not None and st.question.choices:
        idx = letter_index(letter.group(1))  # A..Z, then AA, AB, ... (as the prompts letter them)
        if idx is not None and idx < len(st.question.choices):
            return idx == fa.choice_index
    return False


def bin_of(n: int) -> str:
    for name, lo, hi in BINS:
        if n >= lo and (hi is None or n <= hi):
            return name
    return BINS[-1][0]


class TraceStats(BaseModel):
    file: str
    run_id: str
    item_id: str | None = None
    planner_calls: int
    frontend_calls: int
    decisions: int
    tools: list[str]
    relistens: int
    failed_calls: int
    rejected_calls: int
    format_failures: int
    bound_hit: str | None = None
    outcome: str
    correct: bool | None = None
    wall_time_s: float | None = None
    node_time_s: dict[str, float] = Field(default_factory=dict)


def trace_stats(st: EvidenceState, file: str = "") -> TraceStats:
    node_time: dict[str, float] = defaultdict(float)
    for t in st.timings:
        node_time[t.node] += t.duration_s
    return TraceStats(
        file=file, run_id=st.run.run_id, item_id=st.question.item_id,
        planner_calls=sum(1 for c in st.tool_calls if c.issued_by == "planner"),
        frontend_calls=sum(1 for c in st.tool_calls if c.issued_by == "frontend"),
        decisions=len(st.decisions),
        tools=sorted({c.tool for c in st.tool_calls}),
        relistens=sum(1 for o in st.observations if o.kind == "relisten"),
        failed_calls=sum(1 for c in st.tool_calls if c.status in (ToolCallStatus.error, ToolCallStatus.timeout)),
        rejected_calls=sum(1 for c in st.tool_calls if c.status == ToolCallStatus.rejected),
        format_failures=sum(1 for f in st.format_feedback if not f.ok),
        bound_hit=st.outcome.bound_hit if st.outcome else None,
        outcome=st.outcome.status if st.outcome else "unfinished",
        correct=is_correct(st),
        wall_time_s=st.run.wall_time_s,
        node_time_s={k: round(v, 4) for k, v in node_time.items()},
    )


def _dist(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "median": 0.0, "max": 0.0, "total": 0.0}
    return {
        "mean": round(statistics.fmean(values), 4), "median": round(statistics.median(values), 4),
        "max": round(max(values), 4), "total": round(sum(values), 4),
    }


def _acc(rows: list[TraceStats]) -> dict[str, Any]:
    graded = [r for r in rows if r.correct is not None]
    right = sum(1 for r in graded if r.correct)
    return {"n": len(graded), "correct": right, "accuracy": round(right / len(graded), 4) if graded else None}


def aggregate(traces: list[tuple[EvidenceState, str]], calls: Literal["planner", "all"] = "planner") -> dict[str, Any]:
    """The behaviour table as a JSON-ready dict (the CLI renders it; `--json` prints it)."""
    rows = [trace_stats(st, f) for st, f in traces]
    n = len(rows)
    tool_rows: dict[str, dict[str, Any]] = {}
    questions_per_tool: Counter[str] = Counter()
    durations: dict[str, list[float]] = defaultdict(list)
    for st, _ in traces:
        for tool in {c.tool for c in st.tool_calls}:
            questions_per_tool[tool] += 1
        for c in st.tool_calls:
            r = tool_rows.setdefault(c.tool, {"calls": 0, "by_planner": 0, "by_frontend": 0,
                                              **{s.value: 0 for s in ToolCallStatus}})
            r["calls"] += 1
            r["by_planner" if c.issued_by == "planner" else "by_frontend"] += 1
            r[c.status.value] += 1
            if c.status == ToolCallStatus.ok:
                durations[c.tool].append(c.duration_s)
    for tool, r in tool_rows.items():
        r["questions"] = questions_per_tool[tool]
        r["question_share"] = round(questions_per_tool[tool] / n, 4) if n else 0.0
        r["mean_duration_s"] = round(statistics.fmean(durations[tool]), 4) if durations[tool] else None

    nodes: dict[str, dict[str, Any]] = {}
    per_node_runs: dict[str, list[float]] = defaultdict(list)
    for st, _ in traces:
        for t in st.timings:
            per_node_runs[t.node].append(t.duration_s)
    for node, vals in per_node_runs.items():
        nodes[node] = {"runs": len(vals), **_dist(vals), "per_question": round(sum(vals) / n, 4) if n else 0.0}

    def count_of(r: TraceStats) -> int:
        return r.planner_calls + (r.frontend_calls if calls == "all" else 0)

    by_bin = {name: _acc([r for r in rows if bin_of(count_of(r)) == name]) | {
        "questions": sum(1 for r in rows if bin_of(count_of(r)) == name)} for name, _, _ in BINS}
    return {
        "traces": n,
        "calls_counted": calls,
        "outcomes": dict(Counter(r.outcome for r in rows)),
        "calls_per_question": {
            "planner": _dist([r.planner_calls for r in rows]),
            "frontend": _dist([r.frontend_calls for r in rows]),
            "all": _dist([r.planner_calls + r.frontend_calls for r in rows]),
        },
        "decisions_per_question": _dist([r.decisions for r in rows]),
        "relisten": {
            "rate": round(sum(1 for r in rows if r.relistens) / n, 4) if n else 0.0,
            "total": sum(r.relistens for r in rows),
        },
        "failures": {
            "failed_calls": sum(r.failed_calls for r in rows),
            "rejected_calls": sum(r.rejected_calls for r in rows),
            "questions_with_failed_or_rejected_calls": sum(1 for r in rows if r.failed_calls or r.rejected_calls),
            "format_check_failures": sum(r.format_failures for r in rows),
            "bound_hits": dict(Counter(r.bound_hit for r in rows if r.bound_hit)),
            "not_answered": sum(1 for r in rows if r.outcome != "answered"),
        },
        "wall_time_s": _dist([r.wall_time_s for r in rows if r.wall_time_s is not None]),
        "tools": dict(sorted(tool_rows.items(), key=lambda kv: -kv[1]["calls"])),
        "nodes": nodes,
        "accuracy": {
            "overall": _acc(rows),
            "by_tool_calls": by_bin,
            "by_relisten": {"yes": _acc([r for r in rows if r.relistens]), "no": _acc([r for r in rows if not r.relistens])},
        },
        "per_trace": [r.model_dump(mode="json") for r in rows],
    }


def load_traces(paths: Sequence[str | Path]) -> tuple[list[tuple[EvidenceState, str]], list[tuple[str, str]]]:
    """(loaded traces, [(file, why it could not be read)]): a broken file is reported, never fatal."""
    from audiomind.audit.audit import trace_files
    from audiomind.audit.timeline import read_trace_file

    ok, bad = [], []
    for p in paths:
        for f in trace_files(p):
            try:
                ok.append((read_trace_file(f), str(f)))
            except Exception as exc:  # noqa: BLE001 - reported per file
                bad.append((str(f), f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"))
    return ok, bad


def render(stats: dict[str, Any], console) -> None:
    """The behaviour table on a terminal; every text from the traces (tool names, outcomes, files) is shown
    through `paths.visible` and rich's markup escape, so no escape sequence or markup reaches the terminal."""
    from rich.table import Table

    from audiomind.audit.timeline import visible_all

    stats = visible_all(stats, markup=True)
    n = stats["traces"]
    console.print(f"[bold]{n} trace(s)[/]; outcomes: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(stats["outcomes"].items())))
    t = Table(title="behaviour", show_header=True)
    t.add_column("measure")
    t.add_column("mean", justify="right")
    t.add_column("median", justify="right")
    t.add_column("max", justify="right")
    for label, d in (
        ("planner tool calls / question", stats["calls_per_question"]["planner"]),
        ("front-end tool calls / question", stats["calls_per_question"]["frontend"]),
        ("all tool calls / question", stats["calls_per_question"]["all"]),
        ("decisions / question", stats["decisions_per_question"]),
        ("wall time / question (s)", stats["wall_time_s"]),
    ):
        t.add_row(label, f"{d['mean']:.2f}", f"{d['median']:.2f}", f"{d['max']:.2f}")
    console.print(t)
    f = stats["failures"]
    console.print(
        f"re-listen rate {stats['relisten']['rate']:.0%} ({stats['relisten']['total']} re-listen(s)); "
        f"failed calls {f['failed_calls']}, rejected {f['rejected_calls']} "
        f"({f['questions_with_failed_or_rejected_calls']} question(s)); format-check failures "
        f"{f['format_check_failures']}; bound hits {f['bound_hits'] or 0}; not answered {f['not_answered']}"
    )
    tt = Table(title="tools", show_header=True)
    tt.add_column("tool", no_wrap=True)
    for col in ("calls", "planner", "questions", "ok", "cached", "failed", "mean s"):
        tt.add_column(col, justify="right", no_wrap=True)
    for tool, r in stats["tools"].items():
        failed = [f"{r[k]} {k[:3]}" for k in ("rejected", "error", "timeout") if r[k]]
        tt.add_row(tool, str(r["calls"]), str(r["by_planner"]), f"{r['questions']} ({r['question_share']:.0%})",
                   str(r["ok"]), str(r["cached"]), ", ".join(failed) or "0",
                   f"{r['mean_duration_s']:.2f}" if r["mean_duration_s"] is not None else "-")
    console.print(tt)
    nt = Table(title="time per node (s)", show_header=True)
    for col in ("node", "runs", "mean", "median", "max", "total", "per question"):
        nt.add_column(col, justify="left" if col == "node" else "right")
    for node, r in stats["nodes"].items():
        nt.add_row(node, str(r["runs"]), f"{r['mean']:.3f}", f"{r['median']:.3f}", f"{r['max']:.3f}",
                   f"{r['total']:.2f}", f"{r['per_question']:.3f}")
    console.print(nt)
    acc = stats["accuracy"]
    if acc["overall"]["n"]:
        at = Table(title=f"accuracy by number of {stats['calls_counted']} tool calls", show_header=True)
        for col in ("tool calls", "questions", "graded", "correct", "accuracy"):
            at.add_column(col, justify="left" if col == "tool calls" else "right")
        for name, r in acc["by_tool_calls"].items():
            at.add_row(name, str(r["questions"]), str(r["n"]), str(r["correct"]),
                       f"{r['accuracy']:.1%}" if r["accuracy"] is not None else "-")
        o = acc["overall"]
        at.add_row("all", str(n), str(o["n"]), str(o["correct"]), f"{o['accuracy']:.1%}")
        console.print(at)
        rl = acc["by_relisten"]
        console.print("accuracy with re-listen: " + ", ".join(
            f"{k} {v['accuracy']:.1%} (n={v['n']})" if v["accuracy"] is not None else f"{k} - (n=0)"
            for k, v in rl.items()))
    else:
        console.print("[dim]no ground truth in these traces (question.ground_truth): accuracy not computed[/]")
