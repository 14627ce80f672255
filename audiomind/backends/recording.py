"""A recorded run's model outputs, as the replay planner and front end hand them back.

Loading a trace (one clear BackendError when it cannot be read), handing out recorded model calls by
purpose in recorded order, and mapping recorded ids onto a replay's: evidence ids are random per run,
so the recorded final answer's citations (and ids quoted in the recorded summary) are mapped onto the
replay's evidence by position and content.
"""

from __future__ import annotations

import re
from pathlib import Path

from audiomind.backends.base import BackendError
from audiomind.state import EvidenceItem, EvidenceState, ModelCall

_ANY_ID = re.compile(r"\b(?:ev|call|obs)_[0-9a-f]{10}\b")


def load_recording(trace: str | Path | EvidenceState) -> tuple[EvidenceState, str]:
    if isinstance(trace, EvidenceState):
        return trace, f"<state {trace.run.run_id}>"
    from audiomind.trace import load_trace

    p = Path(trace)
    if not p.is_file():
        raise BackendError(f"replay: no trace file at {p}")
    try:
        return load_trace(p), str(p)
    except Exception as exc:  # a clear one-line error for the CLI
        raise BackendError(f"replay: {p} is not a readable trace: {type(exc).__name__}: {str(exc)[:200]}") from exc


def model_calls(st: EvidenceState, role: str) -> list[ModelCall]:
    return [m for m in st.model_calls if m.role == role]


def check_question(recorded: EvidenceState, state_question_text: str, choices: list[str], source: str) -> None:
    """A recording answers one question: replaying it for another would be a silent lie."""
    q = recorded.question
    if (q.text, list(q.choices)) != (state_question_text, list(choices)):
        raise BackendError(f"replay: {source} recorded the question {q.text!r} {q.choices}, not "
                           f"{state_question_text!r} {choices}")


class RecordedCalls:
    """The recorded model calls of one role, handed out by purpose in recorded order."""

    def __init__(self, calls: list[ModelCall], source: str):
        self._calls = list(calls)
        self.source = source

    def take(self, *purposes: str) -> ModelCall | None:
        for i, m in enumerate(self._calls):
            if m.purpose in purposes:
                m = self._calls.pop(i)
                return m.model_copy(update={"backend": f"replay:{m.backend}"})
        return None


def evidence_map(recorded: list[EvidenceItem], current: list[EvidenceItem]) -> dict[str, str]:
    """Recorded evidence id -> the replay's id for the same claim (same tool, source kind and text),
    matched in order so repeated claims pair up one to one."""
    pool: dict[tuple, list[str]] = {}
    for e in current:
        pool.setdefault((e.source_type, e.tool, e.claim), []).append(e.id)
    out: dict[str, str] = {}
    for e in recorded:
        ids = pool.get((e.source_type, e.tool, e.claim))
        if ids:
            out[e.id] = ids.pop(0)
    return out


def answer_id_map(recorded: list[EvidenceItem], current: list[EvidenceItem]) -> dict[str, str]:
    """Recorded ids -> the replay's ids from what an answer is given (the evidence items): evidence by
    content, and the sources of matched items (tool calls, observations) through them."""
    out = evidence_map(recorded, current)
    by_id = {e.id: e for e in current}
    for e in recorded:
        new = by_id.get(out.get(e.id, ""))
        if new is not None:
            out.setdefault(e.source_id, new.source_id)
    return out


def id_map(recorded: EvidenceState, current: EvidenceState) -> dict[str, str]:
    """Recorded ids -> the replay's ids: evidence by content, observations and tool calls by position
    (when kind / tool agree), so ids quoted in recorded texts point at the replay's items."""
    out = evidence_map(recorded.evidence, current.evidence)
    for old, new in zip(recorded.observations, current.observations):
        if old.kind == new.kind:
            out[old.id] = new.id
    for old_c, new_c in zip(recorded.tool_calls, current.tool_calls):
        if old_c.tool == new_c.tool:
            out[old_c.id] = new_c.id
    return out


def remap(text: str, mapping: dict[str, str]) -> str:
    return _ANY_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)

