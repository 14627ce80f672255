"""Replay a recorded run: re-run its question and audio with the recorded model outputs (the replay
planner and front end) or any live backend in their place, and compare the result with the recording.

Either half can be mixed with a live backend: a recorded planner with a new front end (how does the new
front end answer the same plan?), or recorded observations with a new planner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from audiomind.backends.frontends.replay import ReplayFrontEnd
from audiomind.backends.planners.replay import ReplayPlanner
from audiomind.config import AgentConfig
from audiomind.state import EvidenceState

RECORDED = "replay"
"""The planner / front-end value that means "this trace's recorded model outputs"."""


class ReplayReport(BaseModel):
    """What `replay` found: does the re-run give the recorded answer and decisions?"""

    recorded: str
    replayed: str | None
    planner: str
    frontend: str
    answer_recorded: str | None
    answer_replayed: str | None
    answer_match: bool
    decisions_match: bool
    identical: bool
    first_divergence: dict[str, Any] | None = None
    diff: dict[str, Any] = Field(default_factory=dict)
    outcome: str


def replay_audio(recorded: EvidenceState, trace_file: Path,
                 allow: list[Path] | tuple[Path, ...] = ()) -> tuple[str, list[str | Path]]:
    """The files replay listens to: the question's clip and its extra clips, each an original artifact of the
    trace read under the confinement every trace command shares (`timeline.verified_artifact_file`: inside
    the trace's run folder or an `allow`ed folder, or elsewhere an audio file that decodes, with the sha256
    the trace recorded). A path the trace names without such an artifact, or one refused, is a ValueError:
    a trace cannot make replay open any file it names."""
    from audiomind.audit.timeline import verified_artifact_file
    from audiomind.paths import clip_text, visible

    originals = [a for a in recorded.artifacts if a.derived_from is None]
    q = recorded.question
    out: list[str | Path] = []
    for i, path in enumerate([q.audio_path, *q.extra_audio]):
        match = [a for a in originals if a.path == path] or (originals[:1] if i == 0 else [])
        shown = visible(clip_text(path, 200))
        if not match:
            raise ValueError(f"replay: the trace records no audio artifact for {shown}, so it is not read")
        src, _, why = verified_artifact_file(match[0], recorded, trace_file, allow, outside="originals")
        if src is None:
            raise ValueError(f"replay: the trace's audio {shown} is not read: {why}")
        out.append(str(src))
    return str(out[0]), out[1:]


def replay(trace_path: str | Path, config: AgentConfig | None = None, *, write: bool = True,
           allow: list[Path] | tuple[Path, ...] = ()) -> tuple[ReplayReport, EvidenceState]:
    """Re-run a recorded trace's question and audio and compare the result with the recording.

    `config.planner` / `config.frontend` name the backends: "replay" is the recorded model outputs of this
    trace, anything else a backend spec. The run's bounds (steps, time budget, front-end window) are the
    recording's. Without a config: both recorded, the new trace in <the trace's folder>/replays. The trace
    is read by the bounded reader (`timeline.read_trace_file`) and its audio under `replay_audio`'s
    confinement (ValueError when refused).
    """
    from audiomind.api import AudioMind
    from audiomind.audit.diff import diff_states
    from audiomind.audit.timeline import read_trace_file

    if isinstance(trace_path, EvidenceState):
        raise TypeError("replay reads a trace file (its audio is confined to the trace's run folder)")
    try:
        recorded, source = read_trace_file(trace_path), str(trace_path)
    except ValidationError as exc:
        raise ValueError(f"{trace_path} is not a readable trace: {str(exc).splitlines()[0][:200]}") from None
    audio, extra = replay_audio(recorded, Path(trace_path), allow)
    run = recorded.run
    cfg = config or AgentConfig(planner=RECORDED, frontend=RECORDED, trace_dir=Path(source).parent / "replays")
    cfg = cfg.model_copy(update={"max_steps": run.max_steps, "time_budget_s": run.time_budget_s,
                                 "window_s": run.frontend_window_s})
    agent = AudioMind(
        cfg,
        planner=ReplayPlanner(recorded) if cfg.planner == RECORDED else cfg.planner,
        frontend=ReplayFrontEnd(recorded) if cfg.frontend == RECORDED else cfg.frontend,
    )
    q = recorded.question
    result = agent.ask(audio, q.text, q.choices or None, extra_audio=extra or None,
                       item_id=q.item_id, ground_truth=q.ground_truth,
                       metadata={**q.metadata, "replay_of": run.run_id}, write=write)
    new = result.state
    d = diff_states(recorded, new, source, result.trace_path or "(not written)")
    fa_r, fa_n = recorded.final_answer, new.final_answer
    ans_r = (fa_r.choice or fa_r.text) if fa_r else None
    ans_n = (fa_n.choice or fa_n.text) if fa_n else None
    report = ReplayReport(
        recorded=source, replayed=result.trace_path, planner=cfg.planner, frontend=cfg.frontend,
        answer_recorded=ans_r, answer_replayed=ans_n, answer_match=ans_r == ans_n,
        decisions_match=d.decisions is None, identical=d.identical,
        first_divergence=d.first_divergence.model_dump(mode="json") if d.first_divergence else None,
        diff=d.model_dump(mode="json"), outcome=result.outcome.status,
    )
    return report, new
