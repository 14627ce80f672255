"""Robust extraction of one JSON object from model text.

Models asked for "JSON only" still wrap it in Markdown fences, prepend prose, emit `<think>` blocks,
leave trailing commas or write Python literals. This module recovers the object when it is
unambiguous and otherwise raises `JSONExtractError` with a message the planner can send back to the
model ("what was wrong"), so a malformed reply is retried once with a precise complaint.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = ["JSONExtractError", "extract_json", "extract_object", "message_text"]


class JSONExtractError(ValueError):
    """The text holds no recoverable JSON value; the message says what was found instead."""


_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def message_text(content: Any) -> str:
    """Plain text of a chat message content (a string, or a list of content blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (None, "text", "output_text"):
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


def _loads_lenient(s: str) -> Any:
    """json.loads, then the common repairs (trailing commas, smart quotes, Python literals)."""
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    repaired = _TRAILING_COMMA.sub(r"\1", s.translate(_SMART_QUOTES))
    try:
        return json.loads(repaired)
    except json.JSONDecodeError:
        pass
    try:  # {'a': True, 'b': None} written as a Python literal
        value = ast.literal_eval(repaired)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise JSONExtractError("not valid JSON") from None
    if isinstance(value, (dict, list)):
        return json.loads(json.dumps(value))  # normalise tuples/sets away, prove it is JSON-able
    raise JSONExtractError("not valid JSON")


def _balanced_spans(text: str) -> list[str]:
    """Candidate substrings that start at '{' or '[' and end at their matching bracket (string-aware)."""
    spans: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] not in "{[":
            i += 1
            continue
        depth = 0
        in_str: str | None = None
        esc = False
        j = i
        end = -1
        while j < n:
            c = text[j]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == in_str:
                    in_str = None
            elif c in "\"'" and (c == '"' or _quote_opens(text, j)):
                in_str = c
            elif c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    end = j
                    break
            j += 1
        if end < 0:
            spans.append(text[i:])  # unterminated: reported as truncated below
            break
        spans.append(text[i : end + 1])
        i = end + 1
    return spans


def _quote_opens(text: str, j: int) -> bool:
    """A single quote opens a string only where a JSON-ish token may start (not in "don't")."""
    k = j - 1
    while k >= 0 and text[k].isspace():
        k -= 1
    return k < 0 or text[k] in "{[,:"


def extract_json(text: str | Any) -> Any:
    """The first JSON object or array in `text`; raises JSONExtractError saying why there is none."""
    raw = message_text(text)
    s = _THINK.sub("", raw).strip()
    if not s:
        raise JSONExtractError("the reply was empty")
    try:
        return _loads_lenient(s)
    except JSONExtractError:
        pass
    for block in _FENCE.findall(s):
        try:
            return _loads_lenient(block.strip())
        except JSONExtractError:
            continue
    spans = _balanced_spans(s)
    if not spans:
        preview = s[:80].replace("\n", " ")
        raise JSONExtractError(f"the reply contains no JSON object (it starts with {preview!r})")
    last_error = "not valid JSON"
    # Prefer objects over arrays, then the longest candidate: a reply that quotes a small example
    # before its real answer still yields the answer.
    ordered = sorted(spans, key=lambda sp: (sp.startswith("{"), len(sp)), reverse=True)
    for span in ordered:
        try:
            return _loads_lenient(span)
        except JSONExtractError:
            try:
                json.loads(span)
            except json.JSONDecodeError as exc:
                last_error = f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if spans[-1].count("{") > spans[-1].count("}"):
        raise JSONExtractError("the JSON object is truncated (unbalanced braces; was the reply cut off?)")
    raise JSONExtractError(f"the reply contains {last_error}")


def extract_object(text: str | Any) -> dict[str, Any]:
    """Like extract_json, but the value must be an object (a one-object list is unwrapped)."""
    value = extract_json(text)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if not isinstance(value, dict):
        raise JSONExtractError(f"expected a JSON object, got a JSON {type(value).__name__}")
    return value
