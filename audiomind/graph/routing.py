"""All routing of the Audio-Mind graph, in one place: the node after `decide` follows from the
planner's one action; the node after `format_check` from the feedback and the run's retry bound (read
from the run context's AgentConfig)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from audiomind.graph.context import Context
from audiomind.state import Action, EvidenceState


def after_decide(state: EvidenceState) -> str:
    action = state.decisions[-1].action
    return {
        Action.CALL_TOOLS: "execute_tools",
        Action.RELISTEN: "relisten",
        Action.ANSWER: "summarize",
        Action.STOP: "finish",
    }[action]


def after_format_check(state: EvidenceState, runtime: Runtime[Context]) -> str:
    """Re-ask for the answer while the run's format retries last (none in direct mode; see Context)."""
    last = state.format_feedback[-1]
    if last.ok:
        return "finish"
    retries_used = len(state.format_feedback) - 1
    return "final_answer" if retries_used < runtime.context.format_retries else "finish"
