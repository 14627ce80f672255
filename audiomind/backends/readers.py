"""The question reader an agent uses, from its spec (`AgentConfig.reader`).

`rules` is the rule reader over the phrase tables of audiomind/language (cached per process). `llm:SPEC`
is a text LLM (any planner spec: llamacpp:PATH.gguf, openai:MODEL@URL, gemini:MODEL, ollama:MODEL) that fills
the same `QuestionFrame` through the frame's JSON schema, with the planner's own JSON mode, format retry and
transport retries; its frames are cached too. The reader's model call, when there is one, goes on the record
with the plan (audiomind.backends.planners.rules).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from audiomind.backends.base import BackendError
from audiomind.language.question import CachedReader, Reader, RuleQuestionReader
from audiomind.state import ModelCall

T = TypeVar("T", bound=BaseModel)


class PlannerJSON:
    """A planner's JSON completion as the LLM client the language readers take (`json(purpose, prompt, schema)`)."""

    def __init__(self, planner: Any, name: str):
        self.planner = planner
        self.name = name

    def json(self, purpose: str, prompt: str, schema: type[T]) -> tuple[T | None, ModelCall, str | None]:
        reply = self.planner.complete_json(prompt, schema, purpose=purpose)
        return reply.parsed, reply.call, reply.problem


def make_question_reader(spec: str, *, timeout_s: float = 60.0, max_retries: int = 3) -> Reader:
    """The reader a spec names: 'rules' or 'llm:PLANNER_SPEC'."""
    if spec == "rules":
        return CachedReader(RuleQuestionReader())
    if not spec.startswith("llm:") or len(spec) <= len("llm:"):
        raise BackendError(f"reader spec {spec!r}: use 'rules' or 'llm:PLANNER_SPEC' (e.g. llm:llamacpp:PATH.gguf)")
    from audiomind.backends.registry import make_planner, parse_spec
    from audiomind.language.question_llm import LLMQuestionReader

    bs = parse_spec(spec[len("llm:"):])
    if bs.kind in ("rules", "cascade", "replay"):
        raise BackendError(f"reader spec {spec!r}: {bs.kind} is not a text LLM")
    planner = make_planner(bs, timeout_s=timeout_s, max_retries=max_retries)
    return CachedReader(LLMQuestionReader(PlannerJSON(planner, str(bs))))
