"""Audio front end over any OpenAI-compatible chat endpoint (vLLM serving Qwen2.5-Omni / Qwen2-Audio /
Qwen3-Omni, llama.cpp server, OpenAI audio models).

Audio travels as `input_audio` content parts (standard base64 of 16 kHz mono 16-bit WAV). Qwen-family
models silently drop audio after ~30 s, so an artifact longer than `window_s` is sent as consecutive
windows, each labelled in the text ("[artifact a0, window 2: 30.0-60.0 s]"), and the windows are
recorded in the result so the trace says exactly what the model heard.
"""

from __future__ import annotations

import base64
import io
import math
import os
import re
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from audiomind import audio as aio
from audiomind.backends.base import (
    AnswerRequest,
    AnswerResult,
    BackendError,
    ListenRequest,
    ListenResult,
)
from audiomind.backends.jsonparse import JSONExtractError, extract_object, message_text
from audiomind.backends.retry import call_with_retries
from audiomind.prompts import load_prompt
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelSpec

SAMPLE_RATE = 16000
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

# ---------------------------------------------------------------- audio preparation (shared with Gemini)

_decoded: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_decoded_lock = threading.Lock()


def _samples(artifact: Artifact) -> np.ndarray:
    """16 kHz mono float32 samples of an artifact, decoded once (small LRU keyed by path and hash)."""
    key = (artifact.path, artifact.sha256)
    with _decoded_lock:
        if key in _decoded:
            _decoded.move_to_end(key)
            return _decoded[key]
    y = aio.load(artifact.path, sr=SAMPLE_RATE, mono=True)
    with _decoded_lock:
        _decoded[key] = y
        while len(_decoded) > 8:
            _decoded.popitem(last=False)
    return y


def plan_windows(artifact: Artifact, window_s: float | None) -> list[AudioWindow] | None:
    """Consecutive windows of at most `window_s` covering the artifact, or None when it fits whole."""
    dur = float(artifact.duration_s)
    if not window_s or window_s <= 0 or dur <= window_s + 1e-6:
        return None
    n = math.ceil(dur / window_s - 1e-9)
    wins = []
    for i in range(n):
        start = i * window_s
        end = min(dur, (i + 1) * window_s)
        if end - start < 0.05:  # a rounding sliver, not audio worth sending
            continue
        wins.append(AudioWindow(artifact_id=artifact.id, start_s=round(start, 3), end_s=round(end, 3)))
    return wins


def encode_wav(artifact: Artifact, start_s: float = 0.0, end_s: float | None = None) -> bytes:
    """16-bit mono 16 kHz WAV bytes of (a window of) an artifact: the form every audio model accepts."""
    import soundfile as sf

    y = _samples(artifact)
    a = max(0, round(start_s * SAMPLE_RATE))
    b = len(y) if end_s is None else min(len(y), round(end_s * SAMPLE_RATE))
    buf = io.BytesIO()
    sf.write(buf, np.clip(y[a:b], -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def audio_segments(
    artifacts: list[Artifact], window_s: float | None
) -> tuple[list[tuple[str, bytes]], list[AudioWindow]]:
    """(label, wav bytes) per artifact or per window, in order, plus the windows actually sent."""
    segments: list[tuple[str, bytes]] = []
    sent: list[AudioWindow] = []
    for art in artifacts:
        wins = plan_windows(art, window_s)
        if wins is None:
            segments.append((f"[artifact {art.id}: {art.duration_s:.1f} s]", encode_wav(art)))
            continue
        for i, w in enumerate(wins, start=1):
            label = f"[artifact {art.id}, window {i}: {w.start_s:.1f}-{w.end_s:.1f} s]"
            segments.append((label, encode_wav(art, w.start_s, w.end_s)))
            sent.append(w)
    return segments, sent


# ---------------------------------------------------------------- reply parsing (shared with Gemini)

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
    """The caller's focused prompt plus the JSON reply format every audio front end is asked for."""
    return request.prompt.rstrip() + "\n" + load_prompt("listen_format").text


# ---------------------------------------------------------------- the front end


class OpenAIFrontEnd:
    """An audio-in chat model behind the OpenAI chat-completions API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str | None = None,
        window_s: float | None = 30.0,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        base_delay_s: float = 1.0,
        max_delay_s: float = 20.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ):
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - core dependency
            raise BackendError("the openai package is not installed (pip install openai)") from exc
        self.model = model
        self.base_url = (base_url or OPENAI_DEFAULT_URL).rstrip("/")
        custom = base_url is not None and self.base_url != OPENAI_DEFAULT_URL
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if custom else None)
        if not key:
            raise BackendError(
                "OPENAI_API_KEY is not set: export it for api.openai.com, or give a local server as "
                "openai:MODEL@http://HOST:PORT/v1"
            )
        self._key = key
        self.name = name or (f"openai:{model}" + (f"@{self.base_url}" if custom else ""))
        self.window_s = window_s
        self.max_retries = max_retries
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = extra_body
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=0, timeout=timeout_s)

    def spec(self) -> ModelSpec:
        decoding: dict[str, Any] = {"temperature": self.temperature, "window_s": self.window_s}
        if self.max_tokens:
            decoding["max_tokens"] = self.max_tokens
        return ModelSpec(role="frontend", spec=self.name, kind="openai", model=self.model,
                         base_url=self.base_url, decoding=decoding)

    # -- request building
    def build_messages(self, prompt: str, artifacts: list[Artifact]) -> tuple[list[dict], list[AudioWindow]]:
        """One user message: the prompt, then a label and an input_audio part per clip or window."""
        segments, windows = audio_segments(artifacts, self.window_s)
        content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
        for label, wav in segments:
            content.append({"type": "text", "text": label})
            content.append({
                "type": "input_audio",
                "input_audio": {"data": base64.b64encode(wav).decode("ascii"), "format": "wav"},
            })
        return [{"role": "user", "content": content}], windows

    def _complete(self, messages: list[dict], purpose: str) -> tuple[str, ModelCall]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        resp, call = call_with_retries(
            lambda: self._client.chat.completions.create(**kwargs),
            role="frontend", purpose=purpose, backend=self.name, max_attempts=self.max_retries,
            base_delay_s=self.base_delay_s, max_delay_s=self.max_delay_s, endpoint=self.base_url,
            secrets=[self._key],
        )
        choices = getattr(resp, "choices", None) or []
        if not choices:
            err = BackendError(f"{self.name} returned no choices for {purpose}")
            err.model_call = call  # type: ignore[attr-defined]
            raise err
        text = message_text(choices[0].message.content)
        return text, call

    # -- FrontEnd protocol
    def listen(self, request: ListenRequest) -> ListenResult:
        if not request.artifacts:
            raise BackendError("listen() needs at least one artifact")
        messages, windows = self.build_messages(listen_prompt(request), request.artifacts)
        text, call = self._complete(messages, purpose=request.kind or "listen")
        fields = parse_listen_reply(text)
        call.output = {"raw": text, "parsed": {k: v for k, v in fields.items() if k != "text"}}
        return ListenResult(**fields, windows=windows, model_call=call)

    def answer(self, request: AnswerRequest) -> AnswerResult:
        messages, windows = self.build_messages(request.prompt, [request.original])
        text, call = self._complete(messages, purpose="answer")
        fields = parse_answer_reply(text)
        call.output = {"raw": text, "parsed": fields}
        return AnswerResult(**fields, windows=windows, model_call=call)
