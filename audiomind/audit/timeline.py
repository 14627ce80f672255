"""A trace as a timeline: the node steps in the order they ran, each with the items it produced.

The state keeps one list per kind (decisions, tool calls, evidence...); `show`, `html` and `diff` all
need them interleaved the way the run produced them. The node timings give the order; each node's
items are recovered from the links the state already records (observation -> tool calls, tool call ->
evidence / derived artifacts, decision step -> planner calls), so nothing is inferred from times.
Items no node claims (a hand-edited trace, a run killed mid-node) end up in a final `unplaced` step,
so a viewer never silently hides part of a trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audiomind.state import (
    Action,
    Artifact,
    EvidenceItem,
    EvidenceState,
    FinalAnswer,
    FormatFeedback,
    NodeTiming,
    Observation,
    PlannerDecision,
    ToolCall,
    ToolCallStatus,
)

OK_STATUSES = (ToolCallStatus.ok, ToolCallStatus.cached)


@dataclass
class Step:
    """One node execution and what it added to the state."""

    index: int
    node: str
    timing: NodeTiming | None = None
    decision: PlannerDecision | None = None
    observation: Observation | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    evidence: list[EvidenceItem] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    feedback: FormatFeedback | None = None
    answer: FinalAnswer | None = None  # final_answer node: this attempt's answer (text from its feedback)
    attempt: int | None = None
    text: str | None = None  # perception prompt / summary

    @property
    def anchor(self) -> str:
        return f"step-{self.index}"

    @property
    def duration_s(self) -> float | None:
        return self.timing.duration_s if self.timing else None


def _canonical_nodes(st: EvidenceState) -> list[str]:
    """The node order a run with these items must have taken (for traces without timings)."""
    nodes = ["ingest", "perception_prompt", "perceive", "plan"]
    for d in st.decisions:
        nodes.append("decide")
        if d.action == Action.CALL_TOOLS:
            nodes.append("execute_tools")
        elif d.action == Action.RELISTEN:
            nodes.append("relisten")
    if st.evidence_summary is not None:
        nodes.append("summarize")
    for _ in st.format_feedback:
        nodes += ["final_answer", "format_check"]
    if st.final_answer is not None and not st.format_feedback:
        nodes.append("final_answer")
    if st.outcome is not None:
        nodes.append("finish")
    return nodes


def build_timeline(st: EvidenceState) -> list[Step]:
    calls_by_id = {c.id: c for c in st.tool_calls}
    used_calls: set[str] = set()
    used_evidence: set[str] = set()
    used_artifacts: set[str] = set()
    used_obs: set[str] = set()
    used_decisions: set[int] = set()
    ev_by_source: dict[str, list[EvidenceItem]] = {}
    for e in st.evidence:
        ev_by_source.setdefault(e.source_id, []).append(e)
    arts_by_creator: dict[str, list[Artifact]] = {}
    for a in st.artifacts:
        if a.created_by:
            arts_by_creator.setdefault(a.created_by, []).append(a)

    def take_calls(calls: list[ToolCall], step: Step) -> None:
        for c in calls:
            if c.id in used_calls:
                continue
            used_calls.add(c.id)
            step.tool_calls.append(c)
            for e in ev_by_source.get(c.id, []):
                if e.id not in used_evidence:
                    used_evidence.add(e.id)
                    step.evidence.append(e)
            for a in arts_by_creator.get(c.id, []):
                if a.id not in used_artifacts:
                    used_artifacts.add(a.id)
                    step.artifacts.append(a)

    pairs: list[tuple[str, NodeTiming | None]] = (
        [(t.node, t) for t in st.timings] if st.timings else [(n, None) for n in _canonical_nodes(st)]
    )
    obs_queue = list(st.observations)
    dec_queue = list(enumerate(st.decisions))
    fb_queue = list(st.format_feedback)
    attempts = 0
    last_decision: PlannerDecision | None = None
    steps: list[Step] = []
    for node, timing in pairs:
        step = Step(index=len(steps), node=node, timing=timing)
        if node == "ingest":
            for a in st.artifacts:
                if a.created_by is None and a.derived_from is None and a.id not in used_artifacts:
                    used_artifacts.add(a.id)
                    step.artifacts.append(a)
        elif node == "perception_prompt":
            step.text = st.perception_prompt.text if st.perception_prompt else None
        elif node in ("perceive", "relisten") and obs_queue:
            obs = obs_queue.pop(0)
            used_obs.add(obs.id)
            step.observation = obs
            take_calls([calls_by_id[i] for i in obs.tool_call_ids if i in calls_by_id], step)
            for e in ev_by_source.get(obs.id, []):
                if e.id not in used_evidence:
                    used_evidence.add(e.id)
                    step.evidence.append(e)
            if node == "relisten":
                step.decision = last_decision
        elif node == "decide" and dec_queue:
            i, d = dec_queue.pop(0)
            used_decisions.add(i)
            step.decision = last_decision = d
        elif node == "execute_tools" and last_decision is not None:
            step.decision = last_decision
            take_calls(
                [c for c in st.tool_calls if c.issued_by == "planner" and c.step == last_decision.step], step
            )
        elif node == "summarize":
            step.text = st.evidence_summary
        elif node == "final_answer":
            step.attempt = attempts + 1
            fb = fb_queue[0] if fb_queue else None
            final = st.final_answer
            is_last = len(fb_queue) <= 1
            if final is not None and is_last:
                step.answer = final
            elif fb is not None:
                step.answer = FinalAnswer(text=fb.answer_text)
        elif node == "format_check" and fb_queue:
            attempts += 1
            step.feedback = fb_queue.pop(0)
            step.attempt = attempts
        steps.append(step)

    leftover = Step(index=len(steps), node="unplaced")
    for o in st.observations:
        if o.id not in used_obs:
            leftover.observation = leftover.observation or o
    for i, d in enumerate(st.decisions):
        if i not in used_decisions:
            leftover.decision = leftover.decision or d
    take_calls([c for c in st.tool_calls if c.id not in used_calls], leftover)
    leftover.evidence += [e for e in st.evidence if e.id not in used_evidence and e not in leftover.evidence]
    leftover.artifacts += [a for a in st.artifacts if a.id not in used_artifacts and a not in leftover.artifacts]
    if leftover.observation or leftover.decision or leftover.tool_calls or leftover.evidence or leftover.artifacts:
        steps.append(leftover)
    return steps


# ---- id normalisation (ids are random per run; comparisons must not depend on them) -------------

_ID = re.compile(r"\b(ev|call|obs|mc)_[0-9a-f]{10}\b")


def id_aliases(st: EvidenceState) -> dict[str, str]:
    """Map each random id to a positional alias (ev#3, call#5, obs#1) that two runs can share."""
    out: dict[str, str] = {}
    for i, e in enumerate(st.evidence):
        out[e.id] = f"ev#{i}"
    for i, c in enumerate(st.tool_calls):
        out[c.id] = f"call#{i}"
    for i, o in enumerate(st.observations):
        out[o.id] = f"obs#{i}"
    for i, m in enumerate(st.model_calls):
        out[m.id] = f"mc#{i}"
    # derived files live in a per-run folder: their paths differ between two runs of the same thing
    for a in st.artifacts:
        if a.derived_from is not None:
            out[a.path] = f"<{a.id}>"
    if st.run.artifact_dir:
        out[st.run.artifact_dir] = "<artifact_dir>"
    return out


def normalise_ids(value: Any, aliases: dict[str, str]) -> Any:
    """Replace ids inside strings, lists and dicts by their aliases (unknown ids become 'ev#?')."""
    if isinstance(value, str):
        if value in aliases:
            return aliases[value]
        out = _ID.sub(lambda m: aliases.get(m.group(0), f"{m.group(1)}#?"), value)
        if "/" in out:
            for k in sorted((k for k in aliases if k.startswith("/")), key=len, reverse=True):
                if k in out:
                    out = out.replace(k, aliases[k])
        return out
    if isinstance(value, list):
        return [normalise_ids(v, aliases) for v in value]
    if isinstance(value, dict):
        return {k: normalise_ids(v, aliases) for k, v in value.items()}
    return value


def locate_artifact(a: Artifact, st: EvidenceState, trace_file: Path | None) -> tuple[Path | None, bool]:
    """(where the artifact's file is, whether that is a new place): the recorded path, or, for a trace
    folder that was moved or copied, the same file name under `<trace folder>/<run artifact dir name>`."""
    p = Path(a.path)
    if p.is_file():
        return p, False
    if trace_file is not None:
        art_dir = Path(st.run.artifact_dir)
        try:
            rel = p.relative_to(art_dir)
        except ValueError:
            rel = Path(p.name)
        candidate = trace_file.resolve().parent / art_dir.name / rel
        if candidate.is_file():
            return candidate, True
    return None, False


def run_folder(trace_file: Path) -> Path:
    """The folder a trace's audio may be read from when paths are confined: the folder holding the trace
    JSON (where `ask` puts the run's `<run id>.artifacts/`), or RUN for a batch run's `RUN/traces/<id>.json`
    (its audio is in `RUN/artifacts/`; RUN holds results.jsonl)."""
    folder = trace_file.resolve().parent
    if folder.name == "traces" and (folder.parent / "results.jsonl").is_file():
        return folder.parent
    return folder


OUTSIDE_REASON = "outside the trace's run folder; pass --allow-dir to trust another folder"


def find_artifact(a: Artifact, st: EvidenceState, trace_file: Path | None,
                  allow: list[Path] | tuple[Path, ...] = ()) -> tuple[Path | None, bool, str]:
    """`locate_artifact` under the path policy: (real file, whether that is a new place, "") or (None, False,
    why not). Only a regular file inside the trace's run folder (see `run_folder`) or an `allow`ed folder,
    symlinks resolved, is accepted; nothing is opened here. Candidates: the recorded path, then the same
    file under `<trace folder>/<run artifact dir name>/` (a moved or copied run folder)."""
    from audiomind.paths import MissingPathError, OutsideRootsError, PathPolicyError, resolve_under

    roots = [*([run_folder(trace_file)] if trace_file is not None else []), *allow]
    if not roots:
        return None, False, "no trace folder to read audio from"
    here = trace_file.resolve().parent if trace_file is not None else None
    recorded = Path(a.path)
    cands = [recorded]
    if here is not None and st.run.artifact_dir:
        art_dir = Path(st.run.artifact_dir)
        try:
            rel = recorded.relative_to(art_dir)
        except ValueError:
            rel = Path(recorded.name)
        cands.append(here / art_dir.name / rel)
    reason = ""
    for i, cand in enumerate(cands):
        try:
            return resolve_under(cand, roots, base=here), i > 0, ""
        except MissingPathError:
            reason = reason or "audio file missing"
        except OutsideRootsError:
            reason = reason or OUTSIDE_REASON
        except PathPolicyError as exc:
            reason = reason or str(exc).split(": ", 1)[-1]
    return None, False, reason or "audio file missing"


def short(text: str | None, n: int = 160) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


def describe_call(c: ToolCall) -> str:
    args = c.arguments if c.arguments is not None else c.requested_arguments
    arg_s = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{c.tool}({arg_s})"


def key_outputs(c: ToolCall, limit: int = 6) -> str:
    """The scalar fields of a tool's output: the numbers a reader looks for first."""
    if not c.output:
        return ""
    parts = []
    for k, v in c.output.items():
        if isinstance(v, (int, float, str, bool)) and not (isinstance(v, str) and len(v) > 60):
            parts.append(f"{k}={v}")
        if len(parts) >= limit:
            break
    return ", ".join(parts)
