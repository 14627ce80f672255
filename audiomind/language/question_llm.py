"""The LLM question reader: a `QuestionFrame` written by a language model, through a flat wire schema and the
project's one LLM client (a JudgeLLM: `json(purpose, prompt, schema)`, JSON-schema mode, one format retry, a
recorded ModelCall).

The model says whether the question asks what is said, which steps stand between what is heard and what is
asked, and which words it could not place. Every word's role is then filled the way the rule reader fills it
(the words of a step's cue are operators, words the model named are not understood), so the answer step reads
one frame whichever reader wrote it. A reply that never validates gives a frame that names every operator word
as not understood and one unknown step, so the answer is an admitted guess rather than a confident one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.language.frames import EXECUTABLE_STEPS, DerivationStep, QuestionFrame
from audiomind.language.question import word_roles, words_of

StepName = Literal["day_offset", "sum", "mean", "difference", "remainder", "extreme", "opposite", "truth_value",
                   "pause_length", "relation", "word_relation", "hypothetical"]


class StepWire(BaseModel):
    kind: StepName
    cue: str = Field(description="the words of the question that ask for this step")
    amount: float | None = Field(None, description="a number the question itself states for the step, or null")
    direction: Literal["later", "earlier", "more", "fewer", "none"] = "none"


class QuestionWire(BaseModel):
    about_speech: bool = Field(description="true when the question asks what is said in the audio")
    steps: list[StepWire] = Field(default_factory=list)
    not_understood: list[str] = Field(default_factory=list, description="words of the question you cannot place")


PROMPT = """You read a multiple-choice question about an audio clip. Do not answer it.
Say whether it asks about what is said (about_speech), and list the steps needed between what is heard and
the answer, each with the words of the question that ask for it (cue):
day_offset (a day shifted: 'the day after', 'pushed back by a day'), sum (a total of spoken amounts), mean
(the average of spoken amounts),
difference (how much more or less), remainder (what is left after some leave or are added), extreme
(cheapest, oldest, ...), opposite (an antonym), truth_value (is a statement true or false), pause_length
(how long a pause is), relation (how two people or things named are related), word_relation (a rhyme, a synonym, a word spelled
backwards), hypothetical (an 'if ... would' question no other step covers).
A question answered directly by listening has no steps. List in not_understood any word you cannot place.

Question: {question}
Choices: {choices}

Reply with the JSON object only."""


class LLMQuestionReader:
    """Frames by a language model; `llm` is a JudgeLLM (audiomind.judges.llm.make_llm(spec))."""

    def __init__(self, llm: Any):
        if isinstance(llm, str):
            raise TypeError("LLMQuestionReader takes an LLM client (audiomind.judges.llm.make_llm(spec))")
        self.llm = llm
        self.name = f"llm:{getattr(llm, 'name', 'model')}"
        self.last_call = None

    def read(self, question: str, choices: list[str]) -> QuestionFrame:
        prompt = PROMPT.format(question=question, choices=" | ".join(choices) or "(none)")
        parsed, call, problem = self.llm.json("read_question", prompt, QuestionWire)
        self.last_call = call
        if parsed is None:
            frame = _unread(question, choices, f"{self.name} (no valid reply: {problem or 'no reply'})")
        else:
            frame = frame_from_wire(parsed, question, choices, self.name)
        frame._model_call = call
        return frame


def frame_from_wire(w: QuestionWire, question: str, choices: list[str], reader: str) -> QuestionFrame:
    """The frame a wire reply describes: steps kept when their cue is words of the question."""
    ws = words_of(question)
    used: set[int] = set()
    steps = []
    for s in w.steps:
        cue = words_of(s.cue)
        at = next((i for i in range(len(ws) - len(cue) + 1) if cue and ws[i:i + len(cue)] == cue), None)
        if at is None:
            continue  # a cue that is not in the question is no reading of it
        used.update(range(at, at + len(cue)))
        steps.append(DerivationStep(kind=s.kind, cue=" ".join(cue), amount=s.amount,
                                    direction=None if s.direction == "none" else s.direction,
                                    executable=s.kind in EXECUTABLE_STEPS))
    if any(s.kind != "hypothetical" for s in steps):
        steps = [s for s in steps if s.kind != "hypothetical"]
    unknown = {x for n in w.not_understood for x in words_of(n)}
    read = word_roles(ws, used, unknown)
    return QuestionFrame(text=question, choices=list(choices), reader=reader, about_speech=w.about_speech,
                         steps=steps, words=read)


def _unread(question: str, choices: list[str], reader: str) -> QuestionFrame:
    frame = frame_from_wire(QuestionWire(about_speech=False), question, choices, reader)
    return frame.model_copy(update={"steps": [DerivationStep(kind="hypothetical", cue="(no reading)",
                                                             executable=False)]})
