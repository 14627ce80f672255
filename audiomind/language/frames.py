"""Typed readings of a question: what a reader understood, and what it did not.

A `QuestionFrame` is the hand-off between reading and checking. It says what is asked (about speech or
about a measured property), which steps stand between what is heard and what is asked (a day offset, a
total, a remainder, an opposite, ...), which of those steps the step executor can take, and which words of
the question it accounted for. Any reader fills the same frame: the rule reader (audiomind.language.question)
from phrase tables in data files, a language model through the frame's JSON schema. The answer step reads the
frame, never the question text.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

StepKind = Literal["day_offset", "sum", "mean", "difference", "remainder", "extreme", "opposite", "truth_value",
                   "pause_length", "relation", "word_relation", "hypothetical"]

EXECUTABLE_STEPS: frozenset[str] = frozenset({"day_offset", "sum", "mean", "difference", "remainder", "opposite",
                                              "pause_length", "extreme"})
"""The steps audiomind.language.steps can take; any other step makes the answer an admitted guess."""

WordRole = Literal["function", "wh", "speech", "operator", "topic", "unaccounted"]


class ReadWord(BaseModel):
    """One word of the question and the part it plays in the reading."""

    word: str
    role: WordRole


class DerivationStep(BaseModel):
    """A step between what is heard and what is asked ('pushed back by one day', 'together', 'if one
    person leaves')."""

    kind: StepKind
    cue: str = Field(description="the words of the question that ask for this step")
    amount: float | None = Field(default=None, description="a number the question itself states (1 in 'one "
                                 "person leaves', 2 in 'two days later')")
    direction: Literal["later", "earlier", "more", "fewer"] | None = None
    executable: bool = Field(description="whether the step executor can take this step")


class QuestionFrame(BaseModel):
    """What a reader understood of a question and its choices."""

    text: str
    choices: list[str] = Field(default_factory=list)
    reader: str = Field(description="which reader filled the frame: 'rules', 'llm:<model>', 'cache:<reader>'")
    about_speech: bool = Field(default=False, description="the question asks about what is said")
    steps: list[DerivationStep] = Field(default_factory=list)
    words: list[ReadWord] = Field(default_factory=list)
    _model_call: Any = PrivateAttr(default=None)  # the ModelCall of an LLM reading (not part of the frame)

    @property
    def model_call(self) -> Any:
        """The model call that produced this frame (an LLM reader's first reading), else None."""
        return self._model_call

    def __eq__(self, other: object) -> bool:
        """Two frames are equal when they read the same (the model call is provenance, not the reading)."""
        return isinstance(other, QuestionFrame) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable, like any pydantic model

    @property
    def unaccounted(self) -> list[str]:
        """Words the reading did not account for, in order, once each."""
        return list(dict.fromkeys(w.word for w in self.words if w.role == "unaccounted"))

    @property
    def derived(self) -> bool:
        """The answer is derived from what is heard: a literal match of what was heard is no support."""
        return bool(self.steps)

    @property
    def blocking_step(self) -> DerivationStep | None:
        """The first step the executor cannot take (the answer is then an admitted guess)."""
        return next((s for s in self.steps if not s.executable), None)

    def summary(self) -> str:
        """One line for a trace's rationale."""
        parts = [f"reader {self.reader}"]
        if self.about_speech:
            parts.append("asks about what is said")
        if self.steps:
            parts.append("steps: " + ", ".join(
                f"{s.kind} ({s.cue!r}{'' if s.executable else ', not executable'})" for s in self.steps))
        if self.unaccounted:
            parts.append("not understood: " + ", ".join(repr(w) for w in self.unaccounted))
        return "; ".join(parts)
