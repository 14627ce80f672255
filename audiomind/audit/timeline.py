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

from audiomind.paths import clip_text, visible
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
    """The run as the node steps it took (from its timings; without them, in the order its items say it must
    have taken), each with what it added to the state; what no step claims goes in a last 'unplaced' step."""
    placer = _Placer(st)
    pairs: list[tuple[str, NodeTiming | None]] = (
        [(t.node, t) for t in st.timings] if st.timings else [(n, None) for n in _canonical_nodes(st)]
    )
    steps: list[Step] = []
    for node, timing in pairs:
        step = Step(index=len(steps), node=node, timing=timing)
        placer.place(step)
        steps.append(step)
    leftover = placer.leftover(len(steps))
    if leftover is not None:
        steps.append(leftover)
    return steps


class _Placer:
    """Places each item of a trace in the step that added it, each item once, in the order of the run."""

    def __init__(self, st: EvidenceState):
        self.st = st
        self.calls_by_id = {c.id: c for c in st.tool_calls}
        self.used_calls: set[str] = set()
        self.used_evidence: set[str] = set()
        self.used_artifacts: set[str] = set()
        self.used_obs: set[str] = set()
        self.used_decisions: set[int] = set()
        self.ev_by_source: dict[str, list[EvidenceItem]] = {}
        for e in st.evidence:
            self.ev_by_source.setdefault(e.source_id, []).append(e)
        self.arts_by_creator: dict[str, list[Artifact]] = {}
        for a in st.artifacts:
            if a.created_by:
                self.arts_by_creator.setdefault(a.created_by, []).append(a)
        self.obs_queue = list(st.observations)
        self.dec_queue = list(enumerate(st.decisions))
        self.fb_queue = list(st.format_feedback)
        self.attempts = 0
        self.last_decision: PlannerDecision | None = None

    def take_evidence(self, source_id: str, step: Step) -> None:
        for e in self.ev_by_source.get(source_id, []):
            if e.id not in self.used_evidence:
                self.used_evidence.add(e.id)
                step.evidence.append(e)

    def take_calls(self, calls: list[ToolCall], step: Step) -> None:
        """The calls, their evidence items and the artifacts they derived, for those not placed yet."""
        for c in calls:
            if c.id in self.used_calls:
                continue
            self.used_calls.add(c.id)
            step.tool_calls.append(c)
            self.take_evidence(c.id, step)
            for a in self.arts_by_creator.get(c.id, []):
                if a.id not in self.used_artifacts:
                    self.used_artifacts.add(a.id)
                    step.artifacts.append(a)

    def place(self, step: Step) -> None:
        """What this node step added: by the node, the next observation, decision or format feedback."""
        st, node = self.st, step.node
        if node == "ingest":
            for a in st.artifacts:
                if a.created_by is None and a.derived_from is None and a.id not in self.used_artifacts:
                    self.used_artifacts.add(a.id)
                    step.artifacts.append(a)
        elif node == "perception_prompt":
            step.text = st.perception_prompt.text if st.perception_prompt else None
        elif node in ("perceive", "relisten") and self.obs_queue:
            obs = self.obs_queue.pop(0)
            self.used_obs.add(obs.id)
            step.observation = obs
            self.take_calls([self.calls_by_id[i] for i in obs.tool_call_ids if i in self.calls_by_id], step)
            self.take_evidence(obs.id, step)
            if node == "relisten":
                step.decision = self.last_decision
        elif node == "decide" and self.dec_queue:
            i, d = self.dec_queue.pop(0)
            self.used_decisions.add(i)
            step.decision = self.last_decision = d
        elif node == "execute_tools" and self.last_decision is not None:
            step.decision = self.last_decision
            step_no = self.last_decision.step
            self.take_calls([c for c in st.tool_calls if c.issued_by == "planner" and c.step == step_no], step)
        elif node == "summarize":
            step.text = st.evidence_summary
        elif node == "final_answer":
            step.attempt = self.attempts + 1
            fb = self.fb_queue[0] if self.fb_queue else None
            is_last = len(self.fb_queue) <= 1
            if st.final_answer is not None and is_last:
                step.answer = st.final_answer
            elif fb is not None:
                step.answer = FinalAnswer(text=fb.answer_text)
        elif node == "format_check" and self.fb_queue:
            self.attempts += 1
            step.feedback = self.fb_queue.pop(0)
            step.attempt = self.attempts

    def leftover(self, index: int) -> Step | None:
        """A last step with whatever no node step claimed, or None when every item was placed."""
        st = self.st
        leftover = Step(index=index, node="unplaced")
        for o in st.observations:
            if o.id not in self.used_obs:
                leftover.observation = leftover.observation or o
        for i, d in enumerate(st.decisions):
            if i not in self.used_decisions:
                leftover.decision = leftover.decision or d
        self.take_calls([c for c in st.tool_calls if c.id not in self.used_calls], leftover)
        leftover.evidence += [e for e in st.evidence if e.id not in self.used_evidence and e not in leftover.evidence]
        leftover.artifacts += [a for a in st.artifacts
                               if a.id not in self.used_artifacts and a not in leftover.artifacts]
        if leftover.observation or leftover.decision or leftover.tool_calls or leftover.evidence or leftover.artifacts:
            return leftover
        return None


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


# names an original clip outside the run folder must have to be looked at (others are not even opened)
AUDIO_SUFFIXES = {".wav", ".mp3", ".ogg", ".oga", ".opus", ".flac", ".m4a", ".webm", ".aif", ".aiff", ".aac", ".wma",
                  ".mp4", ".mka", ".caf", ".au", ".w64", ".amr", ".wv"}


OUTSIDE_RULES = ("none", "originals", "audio")
"""What `artifact_file` reads outside the trace's run folder and the allowed folders: nothing (a server's
viewer), the question's own clips (`trace html`, `trace replay`: `ask` reads them wherever they are), or any
artifact (`trace audit`: a copy of a trace elsewhere still names its run's files), each only when it has an
audio file name and its header decodes as audio."""


def artifact_file(a: Artifact, st: EvidenceState, trace_file: Path | None, allow: list[Path] | tuple[Path, ...] = (),
                  *, outside: str = "none") -> tuple[Path | None, bool, str]:
    """The one confinement every trace command applies before it reads an artifact's file (the viewer, the
    audit's hashes, replay's audio): `find_artifact` (a regular file inside the trace's run folder or an
    `allow`ed folder), and, as `outside` (OUTSIDE_RULES) allows, a file elsewhere only when it has an audio
    file name (/etc/passwd is never opened), is a regular file (no FIFO, device or loop) and its header
    decodes as audio. Nothing is hashed here: the caller compares the sha256 (`verified_artifact_file`)."""
    if outside not in OUTSIDE_RULES:
        raise ValueError(f"outside must be one of {OUTSIDE_RULES}, not {outside!r}")
    src, moved, why = find_artifact(a, st, trace_file, allow)
    if src is not None or why != OUTSIDE_REASON or outside == "none" or (
            outside == "originals" and a.derived_from is not None):
        return src, moved, why
    from audiomind.audio import AudioError, probe
    from audiomind.paths import PathPolicyError, resolve_under

    if Path(a.path).suffix.lower() not in AUDIO_SUFFIXES:
        return None, False, f"{why} (and not an audio file name)"
    try:
        src = resolve_under(a.path, ["/"])
        probe(src)
    except PathPolicyError:
        return None, False, why
    except (AudioError, OSError):
        return None, False, f"{why} (and it does not decode as audio)"
    return src, False, ""


def verified_artifact_file(a: Artifact, st: EvidenceState, trace_file: Path | None,
                           allow: list[Path] | tuple[Path, ...] = (), *, outside: str = "none"
                           ) -> tuple[Path | None, bool, str]:
    """`artifact_file`, then the file's sha256 must be the one the trace recorded: (file, moved, "") or
    (None, False, why not). A file outside whose hash differs is reported only as outside."""
    from audiomind.audio import sha256_file

    src, moved, why = artifact_file(a, st, trace_file, allow, outside=outside)
    if src is None:
        return None, False, why
    try:
        digest = sha256_file(src)
    except OSError as exc:
        return None, False, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if digest != a.sha256:
        if not is_inside_run(src, trace_file, allow):
            return None, False, OUTSIDE_REASON
        return None, False, "sha256 differs from the trace's record: the file changed after the run"
    return src, moved, ""


def is_inside_run(path: Path, trace_file: Path | None, allow: list[Path] | tuple[Path, ...] = ()) -> bool:
    """Whether the (resolved) `path` lies in the trace's run folder or an `allow`ed folder."""
    from audiomind.paths import _real_root, is_under

    roots = [*([run_folder(trace_file)] if trace_file is not None else []), *allow]
    return is_under(path, [_real_root(r) for r in roots])


MAX_TRACE_BYTES = 64 * 1024 * 1024
"""The largest trace file the trace commands read (an ordinary one is well under 1 MB)."""


def read_trace_file(path: str | Path) -> EvidenceState:
    """A trace file read as untrusted input: through `fsutil.read_input_text` (a regular file of at most
    MAX_TRACE_BYTES: no FIFO, device or symlink to one) and `fsutil.loads_json` (bounded nesting and
    integers), then the trace model. Raises InputFileError (a ValueError naming the file) or pydantic's
    ValidationError."""
    from audiomind.fsutil import InputFileError, loads_json, read_input_text

    text = read_input_text(path, MAX_TRACE_BYTES)
    try:
        loads_json(text)
    except InputFileError as exc:
        raise InputFileError(f"{visible(clip_text(str(path), 200))}: {exc}", path, line=exc.line,
                             column=exc.column, reason=str(exc)) from None
    return EvidenceState.model_validate_json(text)


def visible_all(value: Any, markup: bool = False) -> Any:
    """Every string in `value` (dict keys too) through `visible`, and with `markup` rich's markup escape as
    well (for text printed as console markup: table cells, f-strings)."""
    if isinstance(value, str):
        if not markup:
            return visible(value)
        from rich.markup import escape

        return escape(visible(value))
    if isinstance(value, dict):
        return {visible_all(k, markup): visible_all(v, markup) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_all(v, markup) for v in value]
    return value


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
