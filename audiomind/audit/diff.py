"""`audiomind trace diff A B`: where two runs of the same question part ways.

Both traces are laid out as timelines (audiomind.audit.timeline) and compared step by step on what
matters: decisions (action, calls, rationale), tool calls (tool, version, arguments, status, output),
evidence claims, the summary and the answer. Random ids (ev_..., call_...) are replaced by positional
aliases first, and `cached` counts as `ok`, so two identical runs compare equal.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from audiomind.audit.timeline import Step, build_timeline, id_aliases, normalise_ids, short
from audiomind.state import EvidenceItem, EvidenceState, PlannerDecision, ToolCall, ToolCallStatus


def call_sig(c: ToolCall, aliases: dict[str, str]) -> dict[str, Any]:
    status = "ok" if c.status in (ToolCallStatus.ok, ToolCallStatus.cached) else c.status.value
    return normalise_ids({
        "tool": c.tool, "version": c.tool_version, "issued_by": c.issued_by,
        "arguments": c.arguments if c.arguments is not None else c.requested_arguments,
        "status": status, "output": c.output, "error": c.error, "derived": c.derived_artifact_ids,
    }, aliases)


def evidence_sig(e: EvidenceItem, aliases: dict[str, str]) -> dict[str, Any]:
    return normalise_ids({
        "claim": e.claim, "source": aliases.get(e.source_id, e.source_type), "tool": e.tool,
        "category": e.category.value if e.category else None, "artifact": e.artifact_id, "data": e.data,
    }, aliases)


def decision_sig(d: PlannerDecision, aliases: dict[str, str]) -> dict[str, Any]:
    return normalise_ids({
        "action": d.action.value,
        "tool_calls": [{"tool": r.tool, "arguments": r.arguments} for r in d.tool_calls],
        "relisten": d.relisten.model_dump() if d.relisten else None,
        "stop_reason": d.stop_reason, "rationale": d.rationale,
    }, aliases)


def step_sig(step: Step, st: EvidenceState, aliases: dict[str, str]) -> dict[str, Any]:
    sig: dict[str, Any] = {"node": step.node}
    n = step.node
    if n == "ingest":
        sig["artifacts"] = [{"id": a.id, "sha256": a.sha256} for a in step.artifacts]
    elif n == "perception_prompt":
        sig["prompt"] = step.text
    elif n == "plan" and st.plan is not None:
        sig["plan"] = normalise_ids(st.plan.model_dump(mode="json"), aliases)
    elif n == "decide" and step.decision is not None:
        sig["decision"] = decision_sig(step.decision, aliases)
    elif n == "summarize":
        sig["summary"] = normalise_ids(step.text, aliases)
    elif n == "final_answer" and step.answer is not None:
        sig["answer"] = {"text": step.answer.text, "rationale": normalise_ids(step.answer.rationale, aliases),
                         "cited": normalise_ids(step.answer.cited_evidence_ids, aliases)}
    elif n == "format_check" and step.feedback is not None:
        sig["format"] = {"ok": step.feedback.ok, "message": step.feedback.message}
    elif n == "finish" and st.outcome is not None:
        sig["outcome"] = {"status": st.outcome.status, "bound_hit": st.outcome.bound_hit}
    if step.observation is not None:
        o = step.observation
        sig["observation"] = normalise_ids({"kind": o.kind, "frontend": o.frontend, "artifacts": o.artifact_ids,
                                            "text": o.text, "provisional_answer": o.provisional_answer}, aliases)
    if step.tool_calls:
        sig["tool_calls"] = [call_sig(c, aliases) for c in step.tool_calls]
    if step.evidence:
        sig["evidence"] = [evidence_sig(e, aliases) for e in step.evidence]
    if step.artifacts and n != "ingest":
        sig["derived"] = [{"id": a.id, "from": a.derived_from, "op": a.operation, "params": a.parameters}
                          for a in step.artifacts]
    return sig


def text_delta(a: str, b: str, context: int = 50) -> tuple[str, str]:
    """The two texts around their first differing character (a long shared prefix hides the change)."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    start = max(0, i - context)
    pre = "…" if start else ""
    return pre + a[start:i + 2 * context] + ("…" if len(a) > i + 2 * context else ""), \
        pre + b[start:i + 2 * context] + ("…" if len(b) > i + 2 * context else "")


def _string_deltas(x: Any, y: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str, str]]:
    """(field, A snippet, B snippet) for differing string fields, looking one level into dicts."""
    out: list[tuple[str, str, str]] = []
    if isinstance(x, str) and isinstance(y, str) and x != y:
        da, db = text_delta(x, y)
        out.append((prefix or "text", da, db))
    elif isinstance(x, dict) and isinstance(y, dict) and depth < 2:
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                out += _string_deltas(x.get(k), y.get(k), f"{prefix}.{k}" if prefix else k, depth + 1)
    return out


def _first_diff(a: list, b: list) -> int | None:
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b) or a[i] != b[i]:
            return i
    return None


def _differing_fields(a: dict | None, b: dict | None) -> list[str]:
    a, b = a or {}, b or {}
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _brief(sig: dict[str, Any] | None) -> str:
    if sig is None:
        return "(nothing: the run ended earlier)"
    n = sig.get("node", "")
    if "decision" in sig:
        d = sig["decision"]
        calls = ", ".join(f"{c['tool']}({json.dumps(c['arguments'], sort_keys=True)})" for c in d["tool_calls"])
        return f"{n}: {d['action']}" + (f" {calls}" if calls else "") + f" — {short(d['rationale'], 120)}"
    if "answer" in sig:
        return f"{n}: {sig['answer']['text']!r} — {short(sig['answer']['rationale'], 120)}"
    if "outcome" in sig:
        return f"{n}: {sig['outcome']}"
    if "format" in sig:
        return f"{n}: {sig['format']}"
    if "tool_calls" in sig:
        return f"{n}: " + ", ".join(f"{c['tool']}={c['status']}" for c in sig["tool_calls"])
    if "summary" in sig:
        return f"{n}: {short(sig['summary'], 140)}"
    if "plan" in sig:
        return f"{n}: {short(sig['plan'].get('intent'), 140)}"
    return f"{n}: {short(json.dumps({k: v for k, v in sig.items() if k != 'node'}, default=str), 160)}"


class Divergence(BaseModel):
    index: int
    what: str
    a: Any = None
    b: Any = None
    fields: list[str] = Field(default_factory=list)


class DiffReport(BaseModel):
    a: str
    b: str
    same_question: bool
    same_audio: bool
    identical: bool
    first_divergence: Divergence | None = None
    decisions: Divergence | None = None
    tool_calls: Divergence | None = None
    evidence: Divergence | None = None
    answer: dict[str, Any] = Field(default_factory=dict)
    counts: dict[str, list[int]] = Field(default_factory=dict)


def diff_states(a: EvidenceState, b: EvidenceState, name_a: str = "A", name_b: str = "B") -> DiffReport:
    al_a, al_b = id_aliases(a), id_aliases(b)
    tl_a, tl_b = build_timeline(a), build_timeline(b)
    sa = [step_sig(s, a, al_a) for s in tl_a]
    sb = [step_sig(s, b, al_b) for s in tl_b]
    first = None
    i = _first_diff(sa, sb)
    if i is not None:
        x, y = (sa[i] if i < len(sa) else None), (sb[i] if i < len(sb) else None)
        fields = _differing_fields(x, y)
        detail_a, detail_b = _brief(x), _brief(y)
        for field_name, da, db in _string_deltas(x, y)[:3]:
            detail_a += f"\n    {field_name}: {da}"
            detail_b += f"\n    {field_name}: {db}"
        for key in ("tool_calls", "evidence"):
            if key in fields and x and y:
                j = _first_diff(x.get(key, []), y.get(key, []))
                if j is not None:
                    ia = x.get(key, [])[j] if j < len(x.get(key, [])) else None
                    ib = y.get(key, [])[j] if j < len(y.get(key, [])) else None
                    sub = _differing_fields(ia, ib)
                    fields = fields + [f"{key}[{j}].{f}" for f in sub]
                    detail_a += f"\n    {key}[{j}]: {short(json.dumps(ia, default=str), 300)}"
                    detail_b += f"\n    {key}[{j}]: {short(json.dumps(ib, default=str), 300)}"
                    break
        first = Divergence(index=i, what=(x or y or {}).get("node", "?"), a=detail_a, b=detail_b, fields=fields)

    def aspect(xs: list, ys: list, what: str) -> Divergence | None:
        j = _first_diff(xs, ys)
        if j is None:
            return None
        xa, yb = (xs[j] if j < len(xs) else None), (ys[j] if j < len(ys) else None)
        return Divergence(index=j, what=what, a=xa, b=yb,
                          fields=_differing_fields(xa, yb) if isinstance(xa, dict) and isinstance(yb, dict) else [])

    from audiomind.audit.stats import is_correct

    fa, fb = a.final_answer, b.final_answer
    ans_a = (fa.choice or fa.text) if fa else None
    ans_b = (fb.choice or fb.text) if fb else None
    return DiffReport(
        a=name_a, b=name_b,
        same_question=(a.question.text, a.question.choices) == (b.question.text, b.question.choices),
        same_audio=a.original.sha256 == b.original.sha256 if a.artifacts and b.artifacts else False,
        identical=first is None,
        first_divergence=first,
        decisions=aspect([decision_sig(d, al_a) for d in a.decisions], [decision_sig(d, al_b) for d in b.decisions],
                         "decision"),
        tool_calls=aspect([call_sig(c, al_a) for c in a.tool_calls], [call_sig(c, al_b) for c in b.tool_calls],
                          "tool call"),
        evidence=aspect([evidence_sig(e, al_a) for e in a.evidence], [evidence_sig(e, al_b) for e in b.evidence],
                        "evidence"),
        answer={
            "a": ans_a, "b": ans_b, "same": ans_a == ans_b,
            "rationale_same": (fa.rationale if fa else None) == (fb.rationale if fb else None)
            or normalise_ids(fa.rationale if fa else "", al_a) == normalise_ids(fb.rationale if fb else "", al_b),
            "correct_a": is_correct(a), "correct_b": is_correct(b),
            "outcome_a": a.outcome.status if a.outcome else None, "outcome_b": b.outcome.status if b.outcome else None,
        },
        counts={
            "decisions": [len(a.decisions), len(b.decisions)], "tool_calls": [len(a.tool_calls), len(b.tool_calls)],
            "evidence": [len(a.evidence), len(b.evidence)], "steps": [len(sa), len(sb)],
        },
    )


def render(r: DiffReport, console) -> None:
    """The comparison on a terminal; every text from the traces goes through `escape`: `paths.visible`
    (escape sequences shown, not obeyed) and rich's markup escape."""
    from rich.markup import escape as markup_escape

    from audiomind.paths import visible

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    console.print(f"[bold]A[/] {escape(r.a)}\n[bold]B[/] {escape(r.b)}")
    if not r.same_question:
        console.print("[yellow]warning: the two traces are not about the same question[/]")
    if not r.same_audio:
        console.print("[yellow]warning: the original audio differs (sha256)[/]")
    c = r.counts
    console.print(f"steps {c['steps'][0]} vs {c['steps'][1]}; decisions {c['decisions'][0]} vs {c['decisions'][1]}; "
                  f"tool calls {c['tool_calls'][0]} vs {c['tool_calls'][1]}; evidence {c['evidence'][0]} vs "
                  f"{c['evidence'][1]}")
    if r.identical:
        console.print("[green]identical runs[/] (ids, timings and cache hits aside)")
    else:
        d = r.first_divergence
        assert d is not None
        console.print(f"[bold red]first divergence[/] at step {d.index} ({escape(d.what)}): differs in "
                      f"{escape(', '.join(d.fields))}")
        console.print(f"  A: {escape(str(d.a))}\n  B: {escape(str(d.b))}")
    for label, div in (("decisions", r.decisions), ("tool calls", r.tool_calls), ("evidence", r.evidence)):
        if div is None:
            console.print(f"{label}: [green]same[/]")
        else:
            console.print(f"{label}: first differ at #{div.index}"
                          + (f" ({escape(', '.join(div.fields))})" if div.fields else ""))
            if isinstance(div.a, dict) and isinstance(div.b, dict):
                for f in div.fields[:4]:
                    va, vb = div.a.get(f), div.b.get(f)
                    if isinstance(va, str) and isinstance(vb, str):
                        va, vb = text_delta(va, vb)
                    else:
                        va, vb = (short(json.dumps(v, default=str, sort_keys=True), 200) for v in (va, vb))
                        if len(va) >= 200 or len(vb) >= 200:
                            va, vb = text_delta(json.dumps(div.a.get(f), default=str, sort_keys=True),
                                                json.dumps(div.b.get(f), default=str, sort_keys=True), 40)
                    console.print(f"  {escape(f)}: A {escape(va)}")
                    console.print(f"  {' ' * len(f)}  B {escape(vb)}")
            else:
                console.print(f"  A: {escape(short(json.dumps(div.a, default=str), 240))}")
                console.print(f"  B: {escape(short(json.dumps(div.b, default=str), 240))}")
    ans = r.answer
    mark = {True: " [green](correct)[/]", False: " [red](wrong)[/]", None: ""}
    console.print(f"answer: A {escape(repr(ans['a']))}{mark[ans['correct_a']]} · B {escape(repr(ans['b']))}"
                  f"{mark[ans['correct_b']]} — " + ("[green]same[/]" if ans["same"] else "[red]different[/]")
                  + ("" if ans["rationale_same"] else " (rationales differ)"))
