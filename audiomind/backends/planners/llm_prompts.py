"""Prompt rendering for the LLM planner (deterministic): the run's state as prompt sections, and the
compaction levels that shorten a prompt until it fits a small model's context window.

Everything heard (observations, tool claims, derived measurements) is rendered as evidence blocks
(audiomind.prompts.evidence_block: quoted, escaped data); the planner's own record (decisions, requested
calls, rejections) and the run's bookkeeping (artifacts, provenance) are plain text around them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection
from typing import Any, NamedTuple

from audiomind.backends.planners.llm_client import estimate_tokens
from audiomind.prompts import evidence_block, evidence_rule, load_prompt
from audiomind.state import Action, EvidenceItem, EvidenceState, Plan, ToolCall

EVIDENCE_BUDGET_TOKENS = 6000
"""How much of a prompt the evidence may take (estimated tokens); over it the oldest entries are condensed."""
CONDENSED_CHARS = 400
"""What a condensed observation keeps of its description (its other fields keep half of that each)."""

COMPACT_LEVELS = (
    # (evidence budget in estimated tokens, inventory form, and in characters: observation, plan and the front
    # end's call arguments at most; None: whole; 0: left out)
    (EVIDENCE_BUDGET_TOKENS, "lines", None, None, None),
    (2000, "calls", None, None, None),
    (800, "calls", CONDENSED_CHARS, 300, 120),
    (200, "names", CONDENSED_CHARS // 2, 120, 0),
)
"""Compaction levels of a planner prompt, tried in order until one fits the model's context. Level 0 is what
every model with a usual context gets: the compact inventory (one line a tool) in the static instructions, the
full entries of the tools in play (details on demand) in the item's record."""
DETAIL_LEVELS = 2
"""Levels below this show the full inventory entries of the tools in play (the plan's candidates, called tools)."""
PLAN_DETAILS = 3
"""At most this many tools named by the plan get their full entry shown (called tools always do)."""

_CATEGORY = re.compile(r" \[[^]]*\]")


def _clip(s: str, n: int = 300) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _parse_inventory(inventory: str) -> list[dict[str, str]]:
    """Per tool: 'head' (name [category] (arguments)), 'category' (the '## category' it is listed under), 'entry'
    (its whole text) and its indented 'key: value' lines ('does', 'may support', 'must not be used for')."""
    tools: list[dict[str, str]] = []
    category = ""
    for line in inventory.splitlines():
        if line.startswith("## "):
            category = line[3:].strip()
        elif line.startswith("- "):
            tools.append({"head": line[2:].strip(), "category": category, "entry": line})
        elif tools and line.startswith("    ") and ":" in line:
            key, _, value = line.strip().partition(":")
            tools[-1][key.strip()] = value.strip()
            tools[-1]["entry"] += "\n" + line
    return tools


_ARG_NAME = re.compile(r"(?:^|, )(\w+): ")
LINE_ARGS = 3
"""Argument names a tool's compact line shows ("…" stands for the rest: its full entry has them all)."""
LINE_DOES = 72
"""Characters of a tool's compact line given to what it does (its first sentence, clipped)."""


def _tool_name(head: str) -> str:
    return head.split(" ", 1)[0]


def _arg_names(head: str) -> list[str]:
    inner = head[head.find("(") + 1: head.rfind(")")] if "(" in head else ""
    return _ARG_NAME.findall(inner)


def _first_sentence(text: str, n: int) -> str:
    s = " ".join(text.split())
    s = re.split(r"(?<=[a-z0-9)])\. ", s, maxsplit=1)[0].rstrip(".")
    if len(s) <= n:
        return s
    return s[: n - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _call_line(t: dict[str, str]) -> str:
    """'- name(arguments)': the first LINE_ARGS argument names after `artifact` (which every packaged tool takes
    first and the instructions name once), '…' for more; '(no artifact)' for a tool without it."""
    names = _arg_names(t["head"])
    if names[:1] == ["artifact"]:
        names = names[1:]
    elif names:
        names = ["no artifact", *names]
    args = ", ".join(names[:LINE_ARGS]) + (", …" if len(names) > LINE_ARGS else "")
    return f"- {_tool_name(t['head'])}({args})"


def compact_inventory(inventory: str, form: str) -> str:
    """The tool inventory (ToolRegistry.render_inventory: '## category' headers, then per tool '- name [category]
    (arguments)' and indented 'does:', 'may support:', 'must not be used for:' lines) in a shorter form:
    full; short (one line a tool: what it does and what it must not be used for, each clipped); lines (the
    planner's static inventory: '## category' headers, then one line a tool: name, its first argument names and
    the first sentence of what it does, clipped; its full entry comes on demand, `inventory_details`); calls
    (name and first argument names, one line a tool); signatures (name and typed arguments); names (a
    comma-separated list)."""
    if form == "full":
        return inventory
    tools = _parse_inventory(inventory)
    if form == "short":
        return "\n".join(f"- {t['head']}: {_clip(t.get('does', ''), 110)}"
                         + (f" Not for: {_clip(t['must not be used for'], 90)}" if t.get("must not be used for") else "")
                         for t in tools)
    if form == "lines":
        lines: list[str] = []
        category = None
        for t in tools:
            if t["category"] != category:
                category = t["category"]
                lines.append(f"## {category}")
            derives = " [derives audio]" if "output: a derived audio artifact" in t["entry"] else ""
            lines.append(f"{_call_line(t)}: {_first_sentence(t.get('does', ''), LINE_DOES)}{derives}")
        return "\n".join(lines)
    if form == "calls":
        return "\n".join(_call_line(t) for t in tools)
    if form == "signatures":
        return "\n".join("- " + _CATEGORY.sub("", t["head"], count=1) for t in tools)
    return ", ".join(_tool_name(t["head"]) for t in tools)


def inventory_details(inventory: str) -> dict[str, str]:
    """Each tool's full inventory entry (typed arguments with defaults, what it does, what its output may support
    and must not be used for), by name: the details a compact inventory leaves to be shown on demand."""
    return {_tool_name(t["head"]): t["entry"] for t in _parse_inventory(inventory)}


class Rendered(NamedTuple):
    """A rendered prompt section and what it condensed to fit the budget (recorded in ModelCall.context_notes);
    for a whole prompt, `system`: its static instructions, sent as the system message before `text` (None: the
    text alone, with the evidence rule as system message when it quotes evidence)."""

    text: str
    notes: list[str]
    system: str | None = None


def _artifact_line(a: Any) -> str:
    desc = f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} ch"
    if a.derived_from:
        params = json.dumps(a.parameters, sort_keys=True, separators=(",", ":"), default=str)
        return desc + f", derived from {a.derived_from} by {a.operation or '?'} {_clip(params, 240)} (re-listen may take it)"
    return desc + " (original recording: not for re-listen)"


def render_artifacts(state: EvidenceState, originals_only: bool = False) -> str:
    arts = state.originals if originals_only else state.artifacts
    return "\n".join("- " + _artifact_line(a) for a in arts) or "(none)"


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


def render_item(e: EvidenceItem, limit: int | None = None, terse: bool = False) -> str:
    """A tool claim as an evidence block. `terse` (the planner's record, where the claim follows the call that
    made it and the inventory lists each tool under its category): without the category and the call id."""
    claim = _clip(e.claim, limit) + " [condensed]" if limit and len(e.claim) > limit else e.claim
    return evidence_block(claim, id=e.id, source=e.tool or e.source_type,
                          category=e.category.value if e.category is not None and not terse else None,
                          artifact=e.artifact_id,
                          confidence=f"{e.confidence:.2f}" if e.confidence is not None else None,
                          from_=None if terse else e.source_id)


def _measured_lines(state: EvidenceState, shown: str = "") -> list[str]:
    """Measurements derived from several tools' outputs (rates, per-sound levels and pitches...), as the
    cascade's description and the neutral summary give them; lines already in `shown` are left out."""
    from audiomind.reasoning.facts import read_facts

    if not state.artifacts or not state.tool_calls:
        return []
    try:
        lines = read_facts(state).measured_lines()
    except Exception:  # noqa: BLE001 - a reader failure must not take the planner's prompt down
        return []
    return [m for m in lines if f"- {m}" not in shown]


def _measured_block(state: EvidenceState, lines: list[str], id_suffix: str = "") -> str | None:
    if not lines:
        return None
    return evidence_block("\n".join(f"- {m}" for m in lines), id=f"derived:{state.original.id}{id_suffix}",
                          source="measurements derived from the tool outputs", artifact=state.original.id)


def _measured(state: EvidenceState, shown: str = "") -> str | None:
    return _measured_block(state, _measured_lines(state, shown))


def _observation_steps(state: EvidenceState) -> dict[str, int]:
    """The step each observation belongs to: 0 for first perception, a re-listen's decision step."""
    relisten_steps = iter(d.step + 1 for d in state.decisions if d.action == Action.RELISTEN)
    out = {}
    for o in state.observations:
        out[o.id] = next(relisten_steps, state.step) if o.kind == "relisten" else 0
    return out


class _Entry(NamedTuple):
    age: int  # the step it came in (0: first perception); the oldest are condensed first
    id: str
    what: str
    full: str
    condensed: str
    block: int  # where the record shows it: -1 the perception, d the block of decision d


def _call_blocks(state: EvidenceState) -> dict[str, int]:
    """The record block of each tool call: -1 for the front end's calls while first listening, the decision's
    step for the planner's calls and for a re-listen's calls."""
    obs_step = _observation_steps(state)
    block_of = {i: (obs_step[o.id] - 1 if o.kind == "relisten" else -1)
                for o in state.observations for i in o.tool_call_ids}
    return {c.id: block_of.get(c.id, -1 if c.issued_by == "frontend" and c.step == 0 else c.step)
            for c in state.tool_calls}


def _entries(state: EvidenceState, obs_limit: int | None = None,
             record: bool = False) -> tuple[list[_Entry], str | None]:
    """Every heard observation and every tool evidence item as a quoted block (whole, and condensed), in the
    order the state holds them, and the derived measurements' block (None when there are none). `record`: for
    the planner's record, where a claim follows the call that made it (render_item's terse form, unless its
    tool was called more than once in that block: then the call id says which call it came from)."""
    call_step = {c.id: c.step + 1 for c in state.tool_calls}
    call_block = _call_blocks(state)
    obs_step = _observation_steps(state)
    heard = [o for o in state.observations if o.artifact_ids]  # a rejected re-listen heard nothing
    shown_obs = {o.id for o in heard}
    # an observation's own evidence item restates it; a tool claim gets its own block (with its category)
    items = [e for e in state.evidence if not (e.source_type == "observation" and e.source_id in shown_obs)]
    itemised = {e.id for e in items}
    entries: list[_Entry] = []
    for o in heard:
        full = render_observation(o, limit=obs_limit, itemised=itemised)
        entries.append(_Entry(obs_step[o.id], o.id, f"observation {o.id} ({o.kind} by {o.frontend})", full,
                              render_observation(o, limit=CONDENSED_CHARS, itemised=itemised)
                              if not obs_limit or obs_limit > CONDENSED_CHARS else full, obs_step[o.id] - 1))
    calls_in_block = Counter((call_block[c.id], c.tool) for c in state.tool_calls)
    for e in items:
        age = call_step.get(e.source_id, obs_step.get(e.source_id, 0))
        block = call_block.get(e.source_id, obs_step.get(e.source_id, 0) - 1)
        terse = record and e.source_id in call_block and calls_in_block[(block, e.tool or "")] == 1
        entries.append(_Entry(age, e.id, f"evidence item {e.id} ({e.tool or e.source_type})",
                              render_item(e, terse=terse), render_item(e, limit=CONDENSED_CHARS // 2, terse=terse),
                              block))
    measured = _measured(state, shown="\n".join(o.description or o.text for o in heard))
    return entries, measured


def _fit_budget(entries: list[_Entry], measured: str | None,
                budget_tokens: int | None) -> tuple[list[str], list[str]]:
    """Each entry's text within `budget_tokens` (the oldest condensed first, then left out: ''; the first left
    out names them all) and what was condensed or left out (notes)."""
    texts = [e.full for e in entries]
    notes: list[str] = []
    total = sum(estimate_tokens(t) for t in texts) + (estimate_tokens(measured) if measured else 0)
    if budget_tokens is None or total <= budget_tokens:
        return texts, notes
    oldest_first = sorted(range(len(entries)), key=lambda i: (entries[i].age, i))
    for i in oldest_first[:-1]:  # the newest entry always stays whole
        if total <= budget_tokens:
            break
        if len(entries[i].condensed) >= len(texts[i]):  # nothing to gain: already short
            continue
        total += estimate_tokens(entries[i].condensed) - estimate_tokens(texts[i])
        texts[i] = entries[i].condensed
        notes.append(f"condensed {entries[i].what} (step {entries[i].age}) to fit the evidence budget of "
                     f"{budget_tokens} tokens")
    omitted = []
    for i in oldest_first[:-1]:
        if total <= budget_tokens:
            break
        total -= estimate_tokens(texts[i])
        texts[i] = ""
        omitted.append(entries[i].id)
    if omitted:
        notes.append(f"left out {len(omitted)} older entries to fit the evidence budget of {budget_tokens} "
                     f"tokens: {', '.join(omitted)}")
        first = next(i for i in range(len(texts)) if not texts[i])
        texts[first] = (f"({len(omitted)} older evidence entries left out to fit the token budget: "
                        f"{', '.join(omitted)}; the trace keeps them)")
    return texts, notes


def render_evidence(state: EvidenceState, budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS) -> Rendered:
    """Every observation whole, every tool evidence item whole, then the derived measurements, all as
    evidence blocks. Over `budget_tokens` the oldest entries are condensed first (and, if that is not enough,
    left out); each condensed or omitted entry is named in the notes, which the trace records."""
    entries, measured = _entries(state)
    ordered = sorted(range(len(entries)), key=lambda i: (entries[i].what.startswith("evidence item"), i))
    entries = [entries[i] for i in ordered]  # the observations first, then the tool claims
    texts, notes = _fit_budget(entries, measured, budget_tokens)
    lines = [t for t in texts if t] + ([measured] if measured else [])
    if notes:
        lines.insert(0, f"(The oldest evidence was condensed to fit a budget of {budget_tokens} tokens; "
                        "the trace keeps it whole.)")
    return Rendered("\n".join(lines) or "(none yet)", notes)


def _named_tools(texts: list[str], names: Collection[str]) -> list[str]:
    """The tool names (of `names`) that `texts` mention as words, in order of first mention."""
    found: list[str] = []
    for text in texts:
        for word in re.findall(r"[A-Za-z_][\w]*", text):
            if word in names and word not in found:
                found.append(word)
    return found


def render_record(state: EvidenceState, budget_tokens: int | None = EVIDENCE_BUDGET_TOKENS, *,
                  with_plan: bool = True, details: dict[str, str] | None = None, obs_limit: int | None = None,
                  plan_limit: int | None = None, args_limit: int | None = None, you: str | None = None) -> Rendered:
    """The item's record for the planner, in the order things happened, so that each step's prompt extends the
    previous one (a provider's prompt cache serves the shared prefix): the first perception (the observation,
    the front end's tool calls, their claims), the plan (with `with_plan`), then one block per decision (its
    action and rationale, what it requested and what came of it, the audio it derived, the evidence it
    brought), then what is recomputed each step (the derived measurements; a note when evidence was
    condensed). Everything heard is an evidence block. With `details` (inventory_details) the full inventory
    entry of each tool in play is shown once, where it first comes into play: the plan's named tools (at most
    PLAN_DETAILS) after the plan, each tool the planner calls in the block of its first call. `you`: the
    planner's name (its own decisions say "by you")."""
    entries, _ = _entries(state, obs_limit, record=True)
    call_block = _call_blocks(state)
    measured = _measured_by_block(state, call_block)
    texts, notes = _fit_budget(entries, "\n".join(measured.values()) or None, budget_tokens)
    evidence: dict[int, list[str]] = {}
    for e, text in zip(entries, texts):
        if text:
            evidence.setdefault(e.block, []).append(text)
    shown: set[str] = set()

    def tool_details(names: list[str], title: str) -> list[str]:
        new = [n for n in names if details and n in details and n not in shown]
        shown.update(new)
        return [title] + [details[n] for n in new] if new and details else []

    calls_of = {-1: [c for c in state.tool_calls if call_block[c.id] == -1]}
    for c in state.tool_calls:
        if call_block[c.id] >= 0:
            calls_of.setdefault(call_block[c.id], []).append(c)
    perception = ["## First perception (the front end listened before any plan)", *evidence.get(-1, [])]
    if calls_of[-1]:
        perception.append("The front end's tool calls while listening:")
        perception.extend(_call_line_of(c, args_limit) for c in calls_of[-1])
    perception += [measured[-1]] if -1 in measured else []
    blocks = ["\n".join(perception)]
    if with_plan and state.plan is not None:
        plan = ["## Your plan", render_plan(state.plan, plan_limit)]
        names = _named_tools(state.plan.candidate_operations, details or {})[:PLAN_DETAILS]
        plan += tool_details(names, "Full entries of the tools the plan names:")
        blocks.append("\n".join(plan))
    derived_by = {a: c for c in state.tool_calls for a in c.derived_artifact_ids}
    artifacts = {a.id: a for a in state.artifacts}
    decided = _decision_lines(state, you, record=True)
    steps = sorted({*range(len(decided)), *(b for b in calls_of if b >= 0), *(b for b in evidence if b >= 0)})
    for d in steps:
        calls = calls_of.get(d, [])
        # a step's calls or evidence without its decision on record are still shown (nothing is dropped)
        lines = decided[d] if d < len(decided) else [_call_line_of(c, args_limit) for c in calls
                                                      if c.issued_by == "planner"]
        block = lines if d < len(decided) else [f"- step {d + 1}: (no decision on record)", *lines]
        block += [f"- {_artifact_line(artifacts[a])}" for c in calls if c.issued_by == "frontend"
                  for a in c.derived_artifact_ids if a in artifacts]
        front = [c for c in calls if c.issued_by == "frontend"]
        if front:
            block.append("The front end's tool calls while re-listening:")
            block.extend(_call_line_of(c, args_limit) for c in front)
        block += evidence.get(d, [])
        block += [measured[d]] if d in measured else []
        block += tool_details([c.tool for c in calls if c.issued_by == "planner"],
                              "Tools first called here, in full:")
        blocks.append("\n".join(block))
    orphans = [a for a in state.artifacts if a.derived_from and a.id not in derived_by]
    tail = [f"- {_artifact_line(a)}" for a in orphans]
    if notes:
        tail.append(f"(The oldest evidence was condensed to fit a budget of {budget_tokens} tokens; "
                    "the trace keeps it whole.)")
    if tail:
        blocks.append("\n".join(tail))
    return Rendered("\n\n".join(blocks), notes)


def _measured_by_block(state: EvidenceState, call_block: dict[str, int]) -> dict[int, str]:
    """The derived measurements (_measured_lines) by record block: each block shows the lines that the state as
    of its end gives and the state as of the block before did not (a line a later tool refined comes again,
    refined, in the later block), so no block changes once written."""
    if not state.tool_calls:
        return {}
    obs_step = _observation_steps(state)
    obs_block = {o.id: obs_step[o.id] - 1 for o in state.observations}
    last = max([len(state.decisions) - 1, *call_block.values()])
    made_by = {a: call_block[c.id] for c in state.tool_calls for a in c.derived_artifact_ids}
    out: dict[int, str] = {}
    seen: set[str] = set()
    for b in range(-1, last + 1):
        upto = state.model_copy(update={
            "tool_calls": [c for c in state.tool_calls if call_block[c.id] <= b],
            "evidence": [e for e in state.evidence
                         if call_block.get(e.source_id, obs_block.get(e.source_id, -1)) <= b],
            "observations": [o for o in state.observations if obs_block[o.id] <= b],
            "artifacts": [a for a in state.artifacts if made_by.get(a.id, -1) <= b],
            "decisions": state.decisions[: b + 1]})
        heard = "\n".join(o.description or o.text for o in upto.observations if o.artifact_ids)
        lines = [m for m in _measured_lines(upto, shown=heard) if m not in seen]
        seen.update(lines)
        block = _measured_block(state, lines, "" if b < 0 else f":step{b + 1}")
        if block:
            out[b] = block
    return out


def _args_text(c: ToolCall) -> str:
    """The arguments as requested (the defaults a tool filled in are in its full inventory entry and the trace),
    or, for a call on record without them, as run."""
    args = c.requested_arguments or c.arguments or {}
    return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)


def _decision_lines(state: EvidenceState, you: str | None = None, record: bool = False) -> list[list[str]]:
    """Per decision: its action and rationale, what it requested, and what came of it (tool call outcomes,
    rejections with their reasons, the observation a re-listen produced). A decision by the planner named `you`
    says "by you" (others, such as the run's bounds, are named). `record`: each derived artifact is described
    where its call is (duration, rate, channels; the call's arguments say how it was made)."""
    artifacts = {a.id: a for a in state.artifacts}
    relistens = iter([o for o in state.observations if o.kind == "relisten"])
    out: list[list[str]] = []
    for d in state.decisions:
        by = "you" if you is not None and d.planner == you else d.planner or "planner"
        head = (f"- step {d.step + 1}: {d.action.value} (by {by}); rationale: "
                f"{json.dumps(d.rationale, ensure_ascii=False)}")
        lines = [head]
        if d.action == Action.CALL_TOOLS:
            calls = [c for c in state.tool_calls if c.step == d.step and c.issued_by == "planner"]
            for c in calls:
                line = f"  requested {c.tool} {_clip(_args_text(c), 240)} -> {c.status.value} [{c.id}]"
                if c.derived_artifact_ids and record:
                    line += ", derived " + "; ".join(
                        f"{a}: {artifacts[a].duration_s:.2f} s, {artifacts[a].sample_rate} Hz, {artifacts[a].channels} "
                        "ch (re-listen may take it)" if a in artifacts else a for a in c.derived_artifact_ids)
                elif c.derived_artifact_ids:
                    line += f", derived {', '.join(c.derived_artifact_ids)}"
                if c.error:
                    line += f": {_clip(c.error, 300)}"
                lines.append(line)
            if not calls:
                lines.append("  requested: " + "; ".join(f"{r.tool} {json.dumps(r.arguments, sort_keys=True)}"
                                                         for r in d.tool_calls) + " -> (no record)")
        elif d.action == Action.RELISTEN and d.relisten is not None:
            o = next(relistens, None)
            line = (f"  requested a re-listen to {', '.join(d.relisten.artifact_ids)} with focus "
                    f"{json.dumps(d.relisten.prompt, ensure_ascii=False)}")
            if o is None:
                line += " -> (no record)"
            else:
                if o.artifact_ids:
                    line += f" -> heard {', '.join(o.artifact_ids)}: observation {o.id}"
                if o.rejected:
                    line += f" -> {o.rejected}"
            lines.append(line)
        elif d.action == Action.STOP and d.stop_reason:
            lines.append(f"  stop reason: {json.dumps(d.stop_reason, ensure_ascii=False)}")
        out.append(lines)
    return out


def render_decisions(state: EvidenceState) -> str:
    """The decision history: each step's action and rationale, what it requested, and what came of it
    (tool call outcomes, rejections with their reasons, the observation a re-listen produced)."""
    return "\n".join(line for lines in _decision_lines(state) for line in lines) or "(none yet: this is the first step)"


def _call_line_of(c: ToolCall, args_limit: int | None = None) -> str:
    args = _clip(_args_text(c), 200 if args_limit is None else args_limit) if args_limit != 0 else ""
    line = f"[{c.id}] step {c.step} {c.issued_by}: {c.tool} {args} -> {c.status.value}".replace("  ", " ")
    if c.duration_s:
        line += f" ({c.duration_s:.2f} s)"
    if c.derived_artifact_ids:
        line += f", derived {', '.join(c.derived_artifact_ids)}"
    if c.error:
        line += f": {_clip(c.error, 240)}"
    return line


def render_tool_calls(state: EvidenceState, issued_by: str | None = None, args_limit: int | None = None) -> str:
    return "\n".join(_call_line_of(c, args_limit) for c in state.tool_calls
                     if issued_by is None or c.issued_by == issued_by) or "(none)"


def render_plan(plan: Plan | None, limit: int | None = None) -> str:
    if plan is None:
        return "(no plan)"
    text = json.dumps(plan.model_dump(exclude_defaults=True), ensure_ascii=False)
    return _clip(text, limit) + " [condensed: the trace keeps the plan whole]" if limit and len(text) > limit else text


def clip_info(state: EvidenceState) -> str:
    """One line per clip the question came with (a0; a multi-clip item's a1, a2, ... too)."""
    return "; ".join(f"{a.id}: {a.duration_s:.2f} s, {a.sample_rate} Hz, {a.channels} channel(s)"
                     + (f", {a.format}" if a.format else "") for a in state.originals)


def planner_system(inventory: str, form: str, role: str | None = None) -> str:
    """The static part of plan and decide prompts, sent first as the system message: the evidence rule, the
    instructions and the tool inventory in `form` (compact_inventory). Without `role` (every model with a usual
    context: compaction levels below DETAIL_LEVELS) it is prompts/planner.md with the instructions of both roles,
    and holds nothing that varies within a run (no ids, steps, budgets or times): byte-identical across the
    run's plan and decide calls and across its items, so a provider's prompt cache serves it. With `role`
    ("plan" or "decide"; the compact levels for small contexts, where no cache helps and every token counts):
    prompts/planner_compact.md with that role's instructions only."""
    roles = [role] if role else ["plan", "decide"]
    instructions = "\n".join(load_prompt(f"{r}_instructions").text for r in roles).rstrip("\n")
    tpl = load_prompt("planner_compact" if role else "planner")
    return evidence_rule() + "\n\n" + tpl.render(inventory=compact_inventory(inventory, form),
                                                  instructions=instructions)


def smallest_decide_prompt(inventory: str) -> str:
    """The most compact decide prompt there is (the last compaction level, an empty item and record), system
    and user text together: what any model that plans must fit (`audiomind doctor`'s planner check)."""
    from audiomind.state import EvidenceState, Question, RunInfo

    state = EvidenceState(run=RunInfo(run_id="fit"), question=Question(text="", audio_path=""))
    form = COMPACT_LEVELS[-1][1]
    record = render_record(state, COMPACT_LEVELS[-1][0], details=None)
    user = load_prompt("decide").render(question="", choices_block="", clips="(none)", record=record.text,
                                        step=1, max_steps=1)
    return planner_system(inventory, form, "decide") + "\n\n" + user
