"""All routing of the Audio-Mind graph, in one place: the node after `decide` follows from the
planner's one action; the node after `format_check` from the feedback and the retry bound."""

from __future__ import annotations

from audiomind.state import Action, EvidenceState


def after_decide(state: EvidenceState) -> str:
    action = state.decisions[-1].action
    return {
        Action.CALL_TOOLS: "execute_tools",
        Action.RELISTEN: "relisten",
        Action.ANSWER: "summarize",
        Action.STOP: "finish",
    }[action]


def after_format_check(state: EvidenceState, format_retries: int) -> str:
    last = state.format_feedback[-1]
    if last.ok:
        return "finish"
    retries_used = len(state.format_feedback) - 1
    return "final_answer" if retries_used < format_retries else "finish"
