"""What every model front end asks for and how its replies are read: the listen prompt with its JSON reply
format, lenient parsing of listen replies (an unstructured reply is kept, flagged), and shape-only reading of
answer replies (a reply that is one JSON object gives its `answer` field; any other reply is the answer text
as written, for the format check to judge; nothing is fished out of prose)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from audiomind.backends.base import ListenRequest
from audiomind.backends.jsonparse import JSONExtractError, extract_object
from audiomind.prompts import load_prompt

_NULLS = {"", "null", "none", "n/a", "unknown"}
_EV_ID = re.compile(r"\b(?:ev|obs|call)_[0-9a-f]{10}\b")


def _as_text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, (list, tuple)):
        return "; ".join(_as_text(x) for x in v if _as_text(x))
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_as_text(x)}" for k, x in v.items())
    return str(v)


def _as_list(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [t for t in (_as_text(x) for x in v) if t]
    t = _as_text(v)
    return [t] if t and t.lower() not in _NULLS else []


def parse_listen_reply(text: str) -> dict[str, Any]:
    """ListenResult fields from a reply; an unstructured reply becomes the description, flagged as such."""
    try:
        obj = extract_object(text)
    except JSONExtractError:
        return {"text": text, "description": text.strip(), "uncertainty": "unstructured reply"}
    prov = obj.get("provisional_answer", obj.get("answer"))
    prov_s = _as_text(prov)
    return {
        "text": text,
        "description": _as_text(obj.get("description")),
        "focus": _as_text(obj.get("focus")),
        "provisional_answer": None if prov_s.lower() in _NULLS else prov_s,
        "open_needs": _as_list(obj.get("open_needs")),
        "uncertainty": _as_text(obj.get("uncertainty")),
    }


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_WHOLE_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_ANSWER_KEYS = ("answer", "final_answer")


def without_thinking(text: str) -> str:
    """The reply with its `<think>` blocks removed, stripped: what the model gives as its reply."""
    return _THINK.sub("", text or "").strip()


def json_reply(text: str) -> dict[str, Any] | None:
    """The reply as one JSON object when that is its whole shape, else None. Shape only: the reply (its
    `<think>` blocks aside) is the object, or one Markdown code fence holding the object, and nothing else.
    An object written inside prose is not a JSON reply. Smart quotes, trailing commas and a Python dict
    literal ({'answer': 'B'}) are read as JSON."""
    s = without_thinking(text)
    fenced = _WHOLE_FENCE.fullmatch(s)
    if fenced:
        s = fenced.group(1).strip()
    if not (s.startswith("{") and s.endswith("}")):
        return None
    s = s.translate(_SMART_QUOTES)
    try:
        value = json.loads(s)
    except json.JSONDecodeError:
        try:  # a Python literal: single quotes, trailing commas, True/None
            value = ast.literal_eval(s)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def reply_answer(obj: dict[str, Any]) -> str | None:
    """The `answer` field of a JSON reply as text (`final_answer` is read as its other name); None when
    the object has neither."""
    for key in _ANSWER_KEYS:
        if key in obj:
            return _as_text(obj[key])
    return None


def parse_answer_reply(text: str) -> dict[str, Any]:
    """{"answer", "rationale"} from a reply, by its shape only: a JSON reply (see `json_reply`) gives its
    `answer` field (empty when it has none) and its rationale; any other reply is the answer as written
    (its `<think>` blocks aside), prose included, and the graph's format check decides whether that is an
    answer. No choice and no JSON object is picked out of prose here."""
    obj = json_reply(text)
    if obj is not None:
        answer = reply_answer(obj) or ""
        rationale = _as_text(obj.get("rationale", obj.get("reasoning", "")))
        cited = obj.get("cited_evidence_ids")
    else:
        answer, rationale, cited = without_thinking(text), "", None
    ids = _as_list(cited) if cited else sorted(set(_EV_ID.findall(rationale)), key=rationale.find)
    return {"text": answer, "rationale": rationale, "cited_evidence_ids": ids}


def listen_prompt(request: ListenRequest) -> str:
    """The caller's focused prompt plus the JSON reply format it asks for (`request.reply_format`: the
    default listen format, or a caller's own, e.g. the edit judge's difference / commonality captions)."""
    return request.prompt.rstrip() + "\n" + load_prompt(request.reply_format).text
