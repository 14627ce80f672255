"""What a provider's reply says about itself: token counts of every kind, the served model, its build and why
it stopped, read from the SDK object the call returned (one reader for every backend).

Shapes read (None wherever the provider did not say):

- OpenAI `ChatCompletion` (and vLLM, llama.cpp, DashScope): `usage.prompt_tokens` / `completion_tokens`,
  `usage.prompt_tokens_details.cached_tokens` / `audio_tokens`, `usage.completion_tokens_details.
  reasoning_tokens`; `model`, `system_fingerprint`, `choices[0].finish_reason`.
- google-genai `GenerateContentResponse`: `usage_metadata.prompt_token_count`, `candidates_token_count`,
  `thoughts_token_count` (billed as output, so added to the output count and reported as reasoning),
  `cached_content_token_count`, the AUDIO entry of `prompt_tokens_details`; `model_version`,
  `candidates[0].finish_reason`.
- LangChain `AIMessage` (the planner's chat models): `usage_metadata` with `input_token_details`
  (`audio`, `cache_read`) and `output_token_details` (`reasoning`); `response_metadata` (`model_name`,
  `system_fingerprint`, `finish_reason`). A structured-output result `{"raw": AIMessage, ...}` is read
  through its raw message.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ReplyFacts(BaseModel):
    """The ModelCall fields a reply fills (see audiomind.state.ModelCall for each field's meaning)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    audio_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    served_model: str | None = None
    fingerprint: str | None = None
    finish_reason: str | None = None


def _get(obj: Any, *names: str) -> Any:
    """obj.name1.name2... for objects or dicts; None where any step is missing."""
    for n in names:
        if obj is None:
            return None
        obj = obj.get(n) if isinstance(obj, dict) else getattr(obj, n, None)
    return obj


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    if v is None:
        return None
    name = getattr(v, "value", None)  # enums (google-genai FinishReason)
    s = str(name if isinstance(name, str) else v)
    return s or None


def _openai(result: Any) -> ReplyFacts:
    u = _get(result, "usage")
    choices = _get(result, "choices") or []
    return ReplyFacts(
        input_tokens=_int(_get(u, "prompt_tokens")),
        output_tokens=_int(_get(u, "completion_tokens")),
        cached_input_tokens=_int(_get(u, "prompt_tokens_details", "cached_tokens")),
        audio_input_tokens=_int(_get(u, "prompt_tokens_details", "audio_tokens")),
        reasoning_tokens=_int(_get(u, "completion_tokens_details", "reasoning_tokens")),
        served_model=_str(_get(result, "model")),
        fingerprint=_str(_get(result, "system_fingerprint")),
        finish_reason=_str(_get(choices[0], "finish_reason")) if choices else None,
    )


def _gemini(result: Any) -> ReplyFacts:
    u = _get(result, "usage_metadata")
    thoughts = _int(_get(u, "thoughts_token_count"))
    out = _int(_get(u, "candidates_token_count"))
    audio = None
    for d in _get(u, "prompt_tokens_details") or []:
        if (_str(_get(d, "modality")) or "").upper().endswith("AUDIO"):
            audio = (audio or 0) + (_int(_get(d, "token_count")) or 0)
    cands = _get(result, "candidates") or []
    return ReplyFacts(
        input_tokens=_int(_get(u, "prompt_token_count")),
        output_tokens=(out or 0) + (thoughts or 0) if (out is not None or thoughts is not None) else None,
        cached_input_tokens=_int(_get(u, "cached_content_token_count")),
        audio_input_tokens=audio,
        reasoning_tokens=thoughts,
        served_model=_str(_get(result, "model_version")),
        finish_reason=_str(_get(cands[0], "finish_reason")) if cands else None,
    )


def _langchain(msg: Any) -> ReplyFacts:
    um = _get(msg, "usage_metadata") or {}
    meta = _get(msg, "response_metadata") or {}
    return ReplyFacts(
        input_tokens=_int(_get(um, "input_tokens")),
        output_tokens=_int(_get(um, "output_tokens")),
        cached_input_tokens=_int(_get(um, "input_token_details", "cache_read")),
        audio_input_tokens=_int(_get(um, "input_token_details", "audio")),
        reasoning_tokens=_int(_get(um, "output_token_details", "reasoning")),
        served_model=_str(meta.get("model_name") or meta.get("model")),
        fingerprint=_str(meta.get("system_fingerprint")),
        finish_reason=_str(meta.get("finish_reason") or meta.get("done_reason")),
    )


def reply_facts(result: Any) -> ReplyFacts:
    """The facts a reply states about itself (all None for a reply that says nothing, e.g. the cascade's)."""
    if isinstance(result, dict) and "raw" in result:
        return reply_facts(result["raw"])
    if _get(result, "usage_metadata") is not None and _get(result, "response_metadata") is not None:
        return _langchain(result)
    if _get(result, "usage_metadata") is not None or _get(result, "model_version") is not None:
        return _gemini(result)
    if _get(result, "usage") is not None or _get(result, "choices") is not None:
        return _openai(result)
    if _get(result, "response_metadata") is not None:
        return _langchain(result)
    return ReplyFacts()
