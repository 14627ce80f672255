"""Prompt rendering for the LLM planner (deterministic): the run's state as prompt sections, and the
compaction levels that shorten a prompt until it fits a small model's context window.

Everything heard (observations, tool claims, derived measurements) is rendered as evidence blocks
(audiomind.prompts.evidence_block: quoted, escaped data); the planner's own record (decisions, requested
calls, rejections) and the run's bookkeeping (artifacts, provenance) are plain text around them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any, NamedTuple

from audiomind.backends.planners.llm_client import estimate_tokens
from audiomind.prompts import evidence_block
from audiomind.state import Action, EvidenceItem, EvidenceState, Plan, ToolCall

EVIDENCE_BUDGET_TOKENS = 6000
"""How much of a prompt the evidence may take (estimated tokens); over it the oldest entries are condensed."""
CONDENSED_CHARS = 400
"""What a condensed observation keeps of its description (its other fields keep half of that each)."""

COMPACT_LEVELS = (
    # (evidence budget in estimated tokens, inventory form, and in characters: observation, plan and the front
    # end's call arguments at most; None: whole; 0: left out)
    (EVIDENCE_BUDGET_TOKENS, "full", None, None, None),
    (2000, "short", None, None, None),
    (800, "signatures", CONDENSED_CHARS, 300, 120),
    (200, "names", CONDENSED_CHARS // 2, 120, 0),
)
"""Compaction levels of a planner prompt, tried in order until one fits the model's context."""

_CATEGORY = re.compile(r" \[[^]]*\]")


def _clip(s: str, n: int = 300) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def compact_inventory(inventory: str, form: str) -> str:
    """The tool inventory (ToolRegistry.render_inventory: '## category' headers, then per tool '- name [category]
    (arguments)' and indented 'does:', 'may support:', 'must not be used for:' lines) in a shorter form:
    full; short (one line a tool: what it does and what it must not be used for, each clipped); signatures
    (name and arguments); names (a comma-separated list)."""
    if form == "full":
        return inventory
    tools: list[dict[str, str]] = []
    for line in inventory.splitlines():
        if line.startswith("- "):
            tools.append({"head": line[2:].strip()})
        elif tools and line.startswith("    ") and ":" in line:
            key, _, value = line.strip().partition(":")
            tools[-1][key.strip()] = value.strip()
    if form == "short":
        return "\n".join(f"- {t['head']}: {_clip(t.get('does', ''), 110)}"
                         + (f" Not for: {_clip(t['must not be used for'], 90)}" if t.get("must not be used for") else "")
                         for t in tools)
    if form == "signatures":
        return "\n".join("- " + _CATEGORY.sub("", t["head"], count=1) for t in tools)
    return ", ".join(t["head"].split(" ", 1)[0] for t in tools)


class Rendered(NamedTuple):
    """A rendered prompt section and what it condensed to fit the budget (recorded in ModelCall.context_notes)."""

    text: str
    notes: list[str]


def render_artifacts(state: EvidenceState) -> str:
    lines = []
    for a in state.artifacts:
        desc = f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} ch"
        if a.derived_from:
            params = json.dumps(a.parameters, sort_keys=True, separators=(",", ":"), default=str)
            desc += f", derived from {a.derived_from} by {a.operation or '?'} {_clip(params, 240)} (re-listen may take it)"
        else:
            desc += " (original recording: not for re-listen)"
        lines.append("- " + desc)
    return "\n".join(lines) or "(none)"


_ITEM_LINE = re.compile(r"^- [\w.-]+: .* \[(ev_[0-9a-f]{10})\]$")


def _without_items(description: str, itemised: Collection[str]) -> tuple[str, list[str]]:
    """A tool-listening front end's description (the cascade's: one "- tool: claim [ev_id]" line per tool
    claim) without the lines that restate an evidence item quoted in its own block, and those items' ids."""
    keep, ids = [], []
    for line in description.splitlines():
        m = _ITEM_LINE.match(line.strip())
        if m and m.group(1) in itemised:
            ids.append(m.group(1))
        else:
            keep.append(line)
    return "\n".join(keep), ids


def _observation_body(obs: Any, limit: int | None = None, itemised: Collection[str] = ()) -> str:
    """Every field the front end reported, whole (limit: each cut to that many characters). Lines of a
    tool-listening front end's description that restate an item in `itemised` are named, not repeated."""
    cut = (_clip) if limit else (lambda s, n: str(s).strip())
    body = obs.description or obs.text
    quoted: list[str] = []
    if obs.tool_call_ids and itemised:
        body, quoted = _without_items(body, itemised)
    parts = [f"description: {cut(body, limit or 0)}"]
    if quoted:
        parts.append(f"its tool claims, each quoted in its own evidence block: {', '.join(quoted)}")
    if obs.focus:
        parts.append(f"focus: {cut(obs.focus, (limit or 0) // 2)}")
    if obs.provisional_answer:
        parts.append(f"provisional answer: {cut(obs.provisional_answer, (limit or 0) // 2)}")
    if obs.open_needs:
        parts.append("open needs:\n" + "\n".join(f"- {cut(n, (limit or 0) // 2)}" for n in obs.open_needs))
    if obs.uncertainty:
        parts.append(f"uncertainty: {cut(obs.uncertainty, (limit or 0) // 2)}")
    if obs.windows:
        parts.append("heard in windows: " + ", ".join(
            f"{w.artifact_id} {w.start_s:.1f}-{w.end_s:.1f} s" for w in obs.windows))
    return "\n".join(parts)


def render_observation(obs: Any, limit: int | None = None, itemised: Collection[str] = ()) -> str:
    """One observation as an evidence block: description, focus, provisional answer, open needs and
    uncertainty, whole (or each cut to `limit` characters when a budget condensed it)."""
    body = _observation_body(obs, limit, itemised)
    if limit:
        body += f"\n[condensed to fit the token budget: the trace keeps observation {obs.id} whole]"
    return evidence_block(body, id=obs.id, source="frontend", by=obs.frontend, kind=obs.kind,
                          heard=", ".join(obs.artifact_ids))


def render_item(e: EvidenceItem, limit: int | None = None) -> str:
    claim = _clip(e.claim, limit) + " [condensed]" if limit and len(e.claim) > limit else e.claim
    return evidence_block(claim, id=e.id, source=e.tool or e.source_type,
                          category=e.category.value if e.category is not None else None, artifact=e.artifact_id,
                          confidence=f"{e.confidence:.2f}" if e.confidence is not None else None,
                          from_=e.source_id)


def _measured(state: EvidenceState, shown: str = "") -> str | None:
    """Measurements derived from several tools' outputs (rates, per-sound levels and pitches...), as the
    cascade's description and the neutral summary give them; lines already in `shown` are left out."""
    from audiomind.reasoning.facts import read_facts

    if not state.artifacts or not state.tool_calls:
        return None
    try:
        lines = read_facts(state).measured_lines()
    except Exception:  # noqa: BLE001 - a reader failure must not take the planner's prompt down
        return None
    lines = [m for m in lines if f"- {m}" not in shown]
    if not lines:
        return None
    return evidence_block("\n".join(f"- {m}" for m in lines), id=f"derived:{state.original.id}",
                          source="measurements derived from the tool outputs", artifact=state.original.id)


def _observation_steps(state: EvidenceState) -> dict[str, int]:
    """The step each observation belongs to: 0 for first perception, a re-listen's decision step."""
    relisten_steps = iter(d.step + 1 for d in state.decisions if d.action == Action.RELISTEN)
    out = {}
    for o in state.observations:
        out[o.id] = next(relisten_steps, state.step) if o.kind == "relisten" else 0
    return out


def render_evidence(state: EvidenceState, budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS) -> Rendered:
    """Every observation whole, every tool evidence item whole, then the derived measurements, all as
    evidence blocks. Over `budget_tokens` the oldest entries are condensed first (and, if that is not enough,
    left out); each condensed or omitted entry is named in the notes, which the trace records."""
    call_step = {c.id: c.step + 1 for c in state.tool_calls}
    obs_step = _observation_steps(state)
    heard = [o for o in state.observations if o.artifact_ids]  # a rejected re-listen heard nothing
    shown_obs = {o.id for o in heard}
    # an observation's own evidence item restates it; a tool claim gets its own block (with its category)
    items = [e for e in state.evidence if not (e.source_type == "observation" and e.source_id in shown_obs)]
    itemised = {e.id for e in items}
    # (age, id, what, full text, condensed text)
    entries: list[tuple[int, str, str, str, str]] = []
    for o in heard:
        entries.append((obs_step[o.id], o.id, f"observation {o.id} ({o.kind} by {o.frontend})",
                        render_observation(o, itemised=itemised),
                        render_observation(o, limit=CONDENSED_CHARS, itemised=itemised)))
    for e in items:
        entries.append((call_step.get(e.source_id, obs_step.get(e.source_id, 0)), e.id,
                        f"evidence item {e.id} ({e.tool or e.source_type})", render_item(e),
                        render_item(e, limit=CONDENSED_CHARS // 2)))
    measured = _measured(state, shown="\n".join(o.description or o.text for o in heard))
    texts = [full for _, _, _, full, _ in entries]
    notes: list[str] = []
    total = sum(estimate_tokens(t) for t in texts) + (estimate_tokens(measured) if measured else 0)
    if budget_tokens is not None and total > budget_tokens:
        oldest_first = sorted(range(len(entries)), key=lambda i: (entries[i][0], i))
        for i in oldest_first[:-1]:  # the newest entry always stays whole
            if total <= budget_tokens:
                break
            if len(entries[i][4]) >= len(texts[i]):  # nothing to gain: already short
                continue
            total += estimate_tokens(entries[i][4]) - estimate_tokens(texts[i])
            texts[i] = entries[i][4]
            notes.append(f"condensed {entries[i][2]} (step {entries[i][0]}) to fit the evidence budget of "
                         f"{budget_tokens} tokens")
        omitted = []
        for i in oldest_first[:-1]:
            if total <= budget_tokens:
                break
            total -= estimate_tokens(texts[i])
            texts[i] = ""
            omitted.append(entries[i][1])
        if omitted:
            notes.append(f"left out {len(omitted)} older entries to fit the evidence budget of {budget_tokens} "
                         f"tokens: {', '.join(omitted)}")
            first = next(i for i in range(len(texts)) if not texts[i])
            texts[first] = (f"({len(omitted)} older evidence entries left out to fit the token budget: "
                            f"{', '.join(omitted)}; the trace keeps them)")
    lines = [t for t in texts if t] + ([measured] if measured else [])
    if notes:
        lines.insert(0, f"(The oldest evidence was condensed to fit a budget of {budget_tokens} tokens; "
                        "the trace keeps it whole.)")
    return Rendered("\n".join(lines) or "(none yet)", notes)


def _args_text(c: ToolCall) -> str:
    args = c.arguments if c.arguments is not None else c.requested_arguments
    return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


def render_decisions(state: EvidenceState) -> str:
    """The decision history: each step's action and rationale, what it requested, and what came of it
    (tool call outcomes, rejections with their reasons, the observation a re-listen produced)."""
    relistens = iter([o for o in state.observations if o.kind == "relisten"])
    lines = []
    for d in state.decisions:
        lines.append(f"- step {d.step + 1}: {d.action.value} (by {d.planner or 'planner'}); rationale: "
                     f"{json.dumps(d.rationale, ensure_ascii=False)}")
        if d.action == Action.CALL_TOOLS:
            calls = [c for c in state.tool_calls if c.step == d.step and c.issued_by == "planner"]
            for c in calls:
                out = f"  requested {c.tool} {_clip(_args_text(c), 240)} -> {c.status.value} [{c.id}]"
                if c.derived_artifact_ids:
                    out += f", derived {', '.join(c.derived_artifact_ids)}"
                if c.error:
                    out += f": {_clip(c.error, 300)}"
                lines.append(out)
            if not calls:
                lines.append("  requested: " + "; ".join(f"{r.tool} {json.dumps(r.arguments, sort_keys=True)}"
                                                         for r in d.tool_calls) + " -> (no record)")
        elif d.action == Action.RELISTEN and d.relisten is not None:
            o = next(relistens, None)
            out = (f"  requested a re-listen to {', '.join(d.relisten.artifact_ids)} with focus "
                   f"{json.dumps(d.relisten.prompt, ensure_ascii=False)}")
            if o is None:
                out += " -> (no record)"
            else:
                if o.artifact_ids:
                    out += f" -> heard {', '.join(o.artifact_ids)}: observation {o.id}"
                if o.rejected:
                    out += f" -> {o.rejected}"
            lines.append(out)
        elif d.action == Action.STOP and d.stop_reason:
            lines.append(f"  stop reason: {json.dumps(d.stop_reason, ensure_ascii=False)}")
    return "\n".join(lines) or "(none yet: this is the first step)"


def render_tool_calls(state: EvidenceState, issued_by: str | None = None, args_limit: int | None = None) -> str:
    lines = []
    for c in state.tool_calls:
        if issued_by is not None and c.issued_by != issued_by:
            continue
        args = _clip(_args_text(c), 200 if args_limit is None else args_limit) if args_limit != 0 else ""
        line = f"[{c.id}] step {c.step} {c.issued_by}: {c.tool} {args} -> {c.status.value}".replace("  ", " ")
        if c.duration_s:
            line += f" ({c.duration_s:.2f} s)"
        if c.derived_artifact_ids:
            line += f", derived {', '.join(c.derived_artifact_ids)}"
        if c.error:
            line += f": {_clip(c.error, 240)}"
        lines.append(line)
    return "\n".join(lines) or "(none)"


def render_plan(plan: Plan | None, limit: int | None = None) -> str:
    if plan is None:
        return "(no plan)"
    text = json.dumps(plan.model_dump(exclude_defaults=True), ensure_ascii=False)
    return _clip(text, limit) + " [condensed: the trace keeps the plan whole]" if limit and len(text) > limit else text


def clip_info(state: EvidenceState) -> str:
    """One line per clip the question came with (a0; a multi-clip item's a1, a2, ... too)."""
    return "; ".join(f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} channel(s)"
                     + (f", {a.format}" if a.format else "") for a in state.originals)
