"""An LLM reader: the same frames the rule readers fill, written by a language model through a JSON schema
derived from the frame's pydantic model, through the project's one LLM client (`JudgeLLM.json` ->
`LLMPlanner.complete_json`: the backend's JSON-schema mode, one format retry, a recorded `ModelCall`).

A frame whose own schema is deep (discriminated unions, nested optional models) is asked for through a flat
wire model (every field a string, an enum or an integer, one level of list) because small models and
llama.cpp's grammar compiler handle those reliably; the reply is then turned into the frame and validated by
the frame's own model. Frames without a wire model are asked for with their own schema. What the model's
reading did not cover is named in the frame as for the rule readers; a reply that never validates gives an
empty reading whose unaccounted words are all the content words, so a judge abstains rather than guesses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from audiomind.language import edit as E
from audiomind.language import rubric as R

F = TypeVar("F", bound=BaseModel)


# ---------------------------------------------------------------- wire models (flat JSON schemas)


class EditOpWire(BaseModel):
    op: Literal["add", "delete", "replace"]
    sound: str = Field(description="the sound added, deleted or replaced, as a short noun phrase")
    replacement: str = Field("", description="for replace: the new sound; else empty")
    position: Literal["anywhere", "start", "end", "middle", "after", "before", "background"] = "anywhere"
    reference: str = Field("", description="for after / before / background: what it is placed against")


class EditWire(BaseModel):
    operations: list[EditOpWire] = Field(default_factory=list)
    keep: list[str] = Field(default_factory=list, description="what the instruction says must stay as it is")


class RubricCheckWire(BaseModel):
    kind: Literal["sound", "absent", "speech_present", "no_speech", "order", "count", "words", "gender", "rate",
                  "tempo", "loudness", "unverifiable"]
    phrase: str = Field("", description="the sound (sound, absent, count) or the first event (order)")
    second: str = Field("", description="order only: the event that comes second")
    n: int = Field(0, description="count only: how many times")
    words: str = Field("", description="words: the words said")
    value: str = Field("", description="gender: female/male; rate, tempo: fast/slow; loudness: "
                                       "increasing/decreasing; unverifiable: why")


class RubricWire(BaseModel):
    checks: list[RubricCheckWire] = Field(default_factory=list)


_EDIT_PROMPT = """Read the audio edit instruction below into a list of operations.
Each operation is "add" (a new sound), "delete" (remove a sound) or "replace" (a sound by another: "sound" is
the old one, "replacement" the new one). "position" says where, if the instruction says it: start, end, middle,
after X or before X (X in "reference"), background (under the rest); else "anywhere". A compound instruction
has several operations. "keep" lists what must stay unchanged.

Instruction: {text}

Reply with the JSON object only."""

_RUBRIC_PROMPT = """Read the audio description below into yes/no checks a listener could verify.
Kinds: "sound" (a sound is present: phrase), "absent" (a sound is not there: phrase), "speech_present",
"no_speech", "order" (phrase happens before second), "count" (phrase occurs n times), "words" (the words
said), "gender" (value female or male), "rate" (speaking rate, value fast or slow), "tempo" (music, value fast
or slow), "loudness" (value increasing or decreasing), "unverifiable" (anything else; value says why).

Description: {text}

Reply with the JSON object only."""


def _edit_from_wire(w: EditWire, text: str) -> E.EditSpec:
    ops = []
    for o in w.operations:
        if not o.sound.strip() or (o.op == "replace" and not o.replacement.strip()):
            continue  # (an operation without its sound is no reading)
        pos = E.Position(relation=o.position, reference=o.reference.strip() or None,
                         words=" ".join(x for x in (o.position, o.reference) if x and x != "anywhere"))
        ops.append(E.EditOperation(op=o.op, sound=o.sound.strip(), replacement=o.replacement.strip() or None,
                                   position=pos))
    keep = [k.strip() for k in w.keep if k.strip()]
    accounted, unaccounted = E._account(text, ops, keep)
    return E.EditSpec(text=text, operations=ops, keep=keep, accounted=accounted, unaccounted=unaccounted)


def _rubric_from_wire(w: RubricWire, text: str) -> R.RubricReading:
    items = []
    for c in w.checks:
        raw: dict[str, Any] = {"kind": c.kind}
        if c.kind in ("sound", "absent"):
            raw["phrase"] = c.phrase
        elif c.kind == "count":
            raw.update(phrase=c.phrase, n=c.n)
        elif c.kind == "order":
            raw.update(first={"kind": "sound", "phrase": c.phrase}, second={"kind": "sound", "phrase": c.second})
        elif c.kind == "words":
            raw["words"] = c.words
        elif c.kind == "gender":
            raw.update(gender=c.value.strip().lower(), words=c.words or None)
        elif c.kind in ("rate", "tempo"):
            raw[c.kind] = c.value.strip().lower()
        elif c.kind == "loudness":
            raw["trend"] = c.value.strip().lower()
        elif c.kind == "unverifiable":
            raw["why"] = c.value or "the model gave no reason"
        if c.kind in ("sound", "absent", "count", "order") and not c.phrase.strip():
            raw = {"kind": "unverifiable", "why": f"the model named no sound for a '{c.kind}' check"}
        check = R.as_check(raw)  # a value outside the frame's (gender 'robot') becomes unverifiable, named
        items.append(R.RubricReadItem(question=f"{c.kind}: {c.phrase or c.words or c.value}".strip(": "),
                                      evidence="", check=check))
    used = {w for it in items for w in R._tokens(it.check.model_dump_json())}
    function = set(R.phrases()["function_words"])
    toks = R._tokens(text)
    unaccounted = list(dict.fromkeys(t for t in toks if t not in used and t not in function and not t.isdigit()))
    return R.RubricReading(text=text, items=items, accounted=[t for t in toks if t not in unaccounted],
                           unaccounted=unaccounted)


# frame model -> (wire model, prompt, wire -> frame)
WIRES: dict[type[BaseModel], tuple[type[BaseModel], str, Callable[[Any, str], BaseModel]]] = {
    E.EditSpec: (EditWire, _EDIT_PROMPT, _edit_from_wire),
    R.RubricReading: (RubricWire, _RUBRIC_PROMPT, _rubric_from_wire),
}


def _empty(frame_model: type[F], text: str, problem: str) -> F:
    if frame_model is E.EditSpec:
        _, unaccounted = E._account(text, [], [])
        return E.EditSpec(text=text, unaccounted=unaccounted, reader=f"llm (no valid reply: {problem})")  # type: ignore[return-value]
    if frame_model is R.RubricReading:
        return R.RubricReading(text=text, unaccounted=R._tokens(text), reader=f"llm (no valid reply: {problem})")  # type: ignore[return-value]
    raise ValueError(f"the model gave no valid {frame_model.__name__}: {problem}")


def read_with_llm(frame_model: type[F], text: str, llm: Any, *, prompt: str | None = None) -> F:
    """`frame_model` (EditSpec, RubricReading, or any pydantic frame) read from `text` by a language model.

    `llm` is a JudgeLLM (audiomind.judges.llm.make_llm('openai:MODEL@URL'), ...). The model call is kept on the
    frame's private `model_call` attribute when the frame allows it, and on `read_with_llm.last_call`.
    For a frame without a wire model, `prompt` (with a {text} slot) is required and the frame's own JSON
    schema constrains the reply."""
    if isinstance(llm, str):  # the reader sits below the backends and judges: it is handed a client
        raise TypeError("read_with_llm takes an LLM client (audiomind.judges.llm.make_llm(spec)), not a spec string")
    wire = WIRES.get(frame_model)
    schema, template, convert = wire or (frame_model, prompt, None)
    if template is None:
        raise ValueError(f"no prompt for {frame_model.__name__}: pass prompt= with a {{text}} slot")
    parsed, call, problem = llm.json(f"read_{frame_model.__name__.lower()}", template.format(text=text), schema)
    read_with_llm.last_call = call  # type: ignore[attr-defined]
    if parsed is None:
        return _empty(frame_model, text, problem or "no reply")
    frame = convert(parsed, text) if convert else parsed
    frame = frame_model.model_validate(frame.model_dump())  # the frame's own validation, whatever the route
    if "reader" in frame_model.model_fields:
        frame.reader = f"llm:{getattr(llm, 'name', 'model')}"  # type: ignore[attr-defined]
    return frame
