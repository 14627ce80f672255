"""`audiomind trace show`: a trace as a readable timeline in the terminal (rich).

One panel per node in the order the run took them: its time, the planner's decision and rationale,
the tool calls with status and key outputs, re-listens, the evidence each step added (with ids, so
the answer's citations can be followed), and finally the answer and why.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from audiomind.audit.timeline import Step, build_timeline, describe_call, key_outputs, short
from audiomind.audit.timeline import visible_all as _visible_all
from audiomind.paths import visible
from audiomind.prompts import MAX_CHOICES, choice_letter
from audiomind.state import EvidenceState, Observation, PlannerDecision, ToolCallStatus


def displayable(st: EvidenceState) -> EvidenceState:
    """A copy of the trace whose every text is safe to write to a terminal: a trace is untrusted input, and
    its question, outputs or paths may carry escape sequences (clear the screen, set the window title,
    rewrite what was printed before)."""
    return EvidenceState.model_validate(_visible_all(st.model_dump(mode="python")))


STATUS_STYLE = {
    ToolCallStatus.ok: "green", ToolCallStatus.cached: "green", ToolCallStatus.rejected: "yellow",
    ToolCallStatus.error: "red", ToolCallStatus.timeout: "red",
}


def _letter(index: int) -> str:
    """A choice's letter (A, B, ..., ZZ); past the lettered ones (a trace may hold any number) its number."""
    return choice_letter(index) if index < MAX_CHOICES else f"#{index + 1}"


def _header(st: EvidenceState, path: Path | None) -> Panel:
    q = st.question
    lines = [f"[bold]Question:[/] {escape(q.text)}"]
    if q.choices:
        lines.append("[bold]Choices:[/] " + escape("  ".join(f"{_letter(i)}. {c}" for i, c in enumerate(q.choices))))
    lines.append(f"[bold]Audio:[/] {escape(q.audio_path)}")
    models = ", ".join(f"{m.role} {m.spec}" for m in st.run.models) or "(not recorded)"
    lines.append(f"[dim]run {escape(st.run.run_id)} · {escape(models)} · max_steps {st.run.max_steps} · "
                 f"budget {st.run.time_budget_s:.0f} s · wall {st.run.wall_time_s or 0:.2f} s[/]")
    if q.item_id or q.ground_truth:
        lines.append(f"[dim]item {escape(str(q.item_id))} · ground truth {escape(str(q.ground_truth))}[/]")
    return Panel("\n".join(lines), title=escape(str(path)) if path else "trace", border_style="blue")


def _calls_table(step: Step, verbose: bool) -> Table:
    t = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
    t.add_column("call")
    t.add_column("by")
    t.add_column("status")
    t.add_column("s", justify="right")
    t.add_column("key outputs / error", overflow="fold")
    for c in step.tool_calls:
        detail = c.error or key_outputs(c, limit=8 if verbose else 4)
        if c.derived_artifact_ids:
            detail += f"  → {', '.join(c.derived_artifact_ids)}"
        if c.coverage is not None:
            detail = f"[{c.coverage.summary()}] {detail}"
        t.add_row(
            escape(f"{c.id} {describe_call(c) if verbose else c.tool}"), c.issued_by,
            f"[{STATUS_STYLE[c.status]}]{c.status.value}[/]", f"{c.duration_s:.2f}", escape(short(detail, 300)),
        )
    return t


def _body(step: Step, st: EvidenceState, verbose: bool) -> list:
    parts: list = []
    node = step.node
    if node == "ingest":
        for a in step.artifacts:
            parts.append(Text(f"{a.id}: {a.path} ({a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} ch, "
                              f"sha256 {a.sha256[:12]}…)"))
    elif node == "perception_prompt" and st.perception_prompt:
        pp = st.perception_prompt
        parts.append(Text(f"prompt {pp.prompt_id}; targets: {', '.join(pp.auditory_targets) or '-'}"))
        if verbose:
            parts.append(Text(pp.text, style="dim"))
    elif node in ("perceive", "relisten") and step.observation:
        parts += _observation_parts(step, step.observation, verbose)
    elif node == "plan" and st.plan:
        p = st.plan
        parts.append(Text(f"intent: {p.intent}"))
        parts.append(Text(f"answer format: {p.answer_format}; candidate operations: "
                          f"{', '.join(p.candidate_operations) or '-'}"))
        if p.claims_to_verify:
            parts.append(Text(f"to verify: {'; '.join(p.claims_to_verify)}"))
        if p.rationale:
            parts.append(Text(f"why: {short(p.rationale, 400)}", style="dim"))
    elif node == "decide" and step.decision:
        parts += _decision_parts(step.decision)
    elif node == "summarize" and step.text is not None:
        lines = step.text.splitlines()
        text = "\n".join(lines if verbose else lines[:12]) + ("" if verbose or len(lines) <= 12 else
                                                               f"\n… {len(lines) - 12} more line(s) (use --verbose)")
        parts.append(Text(text, style="dim"))
    elif node == "final_answer" and step.answer:
        parts.append(Text(f"attempt {step.attempt}: {step.answer.text!r}"))
    elif node == "format_check" and step.feedback:
        fb = step.feedback
        parts.append(Text(f"attempt {fb.attempt}: {'ok' if fb.ok else 'FAILED: ' + fb.message}",
                          style="green" if fb.ok else "red"))
    elif node == "finish" and st.outcome:
        o = st.outcome
        parts.append(Text(f"outcome {o.status}" + (f" ({o.reason})" if o.reason else "")
                          + (f"; bound hit: {o.bound_hit}" if o.bound_hit else ""),
                          style="green" if o.status == "answered" else "red"))
    elif node == "unplaced":
        parts.append(Text("items no node claims (hand-edited or interrupted trace):", style="yellow"))
        if step.decision:
            parts.append(Text(f"decision step {step.decision.step}: {step.decision.action.value}"))
        if step.observation:
            parts.append(Text(f"observation {step.observation.id}"))
    return parts + _added_parts(step, verbose)


def _observation_parts(step: Step, o: Observation, verbose: bool) -> list:
    """A perceive or re-listen step: what was asked for, who heard what, and what it said."""
    parts: list = []
    if step.node == "relisten" and step.decision and step.decision.relisten:
        parts.append(Text(f"re-listen to {', '.join(step.decision.relisten.artifact_ids)}: "
                          f"{short(step.decision.relisten.prompt, 200)}", style="magenta"))
    parts.append(Text(f"{o.id} by {o.frontend} on {', '.join(o.artifact_ids) or '(nothing)'}"
                      + (f"; provisional answer: {o.provisional_answer}" if o.provisional_answer else "")))
    if o.windows:
        parts.append(Text("windows: " + ", ".join(f"{w.artifact_id} {w.start_s:.1f}-{w.end_s:.1f} s"
                                                  for w in o.windows), style="dim"))
    if not o.tool_call_ids:
        parts.append(Text(o.text if verbose else short(o.text, 400)))
    if o.uncertainty:
        parts.append(Text(f"uncertainty: {short(o.uncertainty, 300)}", style="dim"))
    if o.rejected:
        parts.append(Text(o.rejected, style="yellow"))
    return parts


def _decision_parts(d: PlannerDecision) -> list:
    """A decide step: the action with what it requested, why, and a stop's reason."""
    parts: list = []
    head = f"step {d.step}: {d.action.value}" + (f" by {d.planner}" if d.planner else "")
    if d.tool_calls:
        head += " → " + ", ".join(f"{r.tool}({', '.join(f'{k}={v!r}' for k, v in r.arguments.items())})"
                                  for r in d.tool_calls)
    if d.relisten:
        head += f" → re-listen {', '.join(d.relisten.artifact_ids)}"
    parts.append(Text(head, style="bold cyan"))
    parts.append(Text(f"why: {d.rationale}"))
    if d.stop_reason:
        parts.append(Text(f"stop reason: {d.stop_reason}", style="red"))
    return parts


def _added_parts(step: Step, verbose: bool) -> list:
    """What any step added: its tool calls (a table), derived artifacts and evidence items (8 unless verbose)."""
    parts: list = []
    if step.tool_calls:
        parts.append(_calls_table(step, verbose))
    if step.artifacts and step.node != "ingest":
        for a in step.artifacts:
            parts.append(Text(f"artifact {a.id} ← {a.derived_from} {a.operation} {a.parameters} "
                              f"({a.duration_s:.2f} s)", style="blue"))
    limit = None if verbose else 8
    shown = step.evidence if limit is None else step.evidence[:limit]
    for e in shown:
        src = e.tool or e.source_type
        parts.append(Text(f"  [{e.id}] {short(e.claim, 400 if verbose else 180)} — {src}"
                          + (f" [{e.category.value}]" if e.category else "")
                          + (f" conf {e.confidence:.2f}" if e.confidence is not None else ""), style="white"))
    if limit is not None and len(step.evidence) > limit:
        parts.append(Text(f"  … {len(step.evidence) - limit} more evidence item(s) (use --verbose)", style="dim"))
    return parts


def _answer_panel(st: EvidenceState) -> Panel:
    fa = st.final_answer
    if fa is None:
        reason = st.outcome.reason if st.outcome else "the run did not finish"
        return Panel(f"[red]no answer[/]: {escape(reason)}", title="answer", border_style="red")
    lines = [f"[bold]Answer:[/] {escape(fa.choice or fa.text or '(empty)')}"]
    gt = st.question.ground_truth
    if gt is not None:
        from audiomind.audit.stats import is_correct

        ok = is_correct(st)
        lines.append(f"[bold]Ground truth:[/] {escape(gt)} " + ("[green](correct)[/]" if ok else "[red](wrong)[/]"))
    lines.append(f"[bold]Why:[/] {escape(fa.rationale or '(no rationale)')}")
    by_id = {e.id: e for e in st.evidence}
    for eid in fa.cited_evidence_ids:
        e = by_id.get(eid)
        lines.append("  cites " + escape(f"[{eid}] ") + (escape(f"{short(e.claim, 200)} — {e.tool or e.source_type}")
                                                    if e else "[red](not in the trace)[/]"))
    return Panel("\n".join(lines), title="answer", border_style="green")


def render(st: EvidenceState, console: Console, path: Path | None = None, verbose: bool = False) -> None:
    st = displayable(st)
    path = Path(visible(str(path))) if path is not None else None
    console.print(_header(st, path))
    for step in build_timeline(st):
        t = f" · {step.duration_s:.3f} s" if step.duration_s is not None else ""
        start = f" · {step.timing.started_at[11:23]}" if step.timing else ""
        body = _body(step, st, verbose) or [Text("(nothing recorded)", style="dim")]
        console.print(Panel(Group(*body), title=f"[bold]{step.index}. {step.node}[/]{start}{t}", title_align="left",
                            border_style="yellow" if step.node == "unplaced" else "grey50"))
    console.print(_answer_panel(st))
