"""What every model front end asks for and how its replies are read: the listen prompt with its JSON reply
format, and lenient parsing of listen and answer replies (an unstructured reply is kept, flagged)."""

from __future__ import annotations

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


def parse_answer_reply(text: str) -> dict[str, Any]:
    """{"answer", "rationale"} from a reply; a bare reply is taken as the answer itself."""
    try:
        obj = extract_object(text)
        answer = _as_text(obj.get("answer", obj.get("final_answer", "")))
        rationale = _as_text(obj.get("rationale", obj.get("reasoning", "")))
        cited = obj.get("cited_evidence_ids")
    except JSONExtractError:
        answer, rationale, cited = text.strip(), "", None
    ids = _as_list(cited) if cited else sorted(set(_EV_ID.findall(rationale)), key=rationale.find)
    return {"text": answer, "rationale": rationale, "cited_evidence_ids": ids}


def listen_prompt(request: ListenRequest) -> str:
    """The caller's focused prompt plus the JSON reply format it asks for (`request.reply_format`: the
    default listen format, or a caller's own, e.g. the edit judge's difference / commonality captions)."""
    return request.prompt.rstrip() + "\n" + load_prompt(request.reply_format).text
