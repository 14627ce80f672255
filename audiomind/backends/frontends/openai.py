"""Audio front end over any OpenAI-compatible chat endpoint (vLLM serving Qwen2.5-Omni / Qwen2-Audio /
Qwen3-Omni, llama.cpp server, OpenAI audio models).

Audio travels as `input_audio` content parts (audio_parts: standard base64 of 16 kHz mono 16-bit WAV,
in labelled windows of at most `window_s`), and the windows are recorded in the result so the trace
says exactly what the model heard.
"""

from __future__ import annotations

from typing import Any, Unpack

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.backends.frontends.audio_parts import input_audio_parts
from audiomind.backends.frontends.remote import CallSettings, RemoteFrontEnd
from audiomind.backends.frontends.replies import listen_prompt, parse_answer_reply, parse_listen_reply
from audiomind.backends.jsonparse import message_text
from audiomind.backends.openai_compat import openai_endpoint
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelSpec


class OpenAIFrontEnd(RemoteFrontEnd):
    """An audio-in chat model behind the OpenAI chat-completions API."""

    kind = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str | None = None,
        window_s: float | None = 30.0,
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
        **settings: Unpack[CallSettings],
    ):
        endpoint = openai_endpoint(base_url, api_key)
        self.base_url = endpoint.base_url
        self._settings(model, name or (f"openai:{model}" + (f"@{self.base_url}" if endpoint.custom else "")),
                       endpoint.api_key, window_s, **settings)
        self.max_tokens = max_tokens
        self.extra_body = extra_body
        self._client = endpoint.client(self.timeout_s)

    def spec(self) -> ModelSpec:
        return self._model_spec(("max_tokens", self.max_tokens))

    # -- request building
    def build_messages(self, prompt: str, artifacts: list[Artifact]) -> tuple[list[dict], list[AudioWindow]]:
        """One user message: the prompt, then a label and an input_audio part per clip or window; a prompt
        that quotes evidence goes with the evidence rule as the system message."""
        content, windows = input_audio_parts(prompt, artifacts, self.window_s)
        system = [{"role": "system", "content": evidence_rule()}] if has_evidence(prompt) else []
        return [*system, {"role": "user", "content": content}], windows

    def _complete(self, messages: list[dict], purpose: str) -> tuple[str, ModelCall]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        resp, call = self._retry(lambda: self._client.chat.completions.create(**kwargs), purpose)
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
        messages, windows = self.build_messages(request.prompt, request.originals)
        text, call = self._complete(messages, purpose="answer")
        fields = parse_answer_reply(text)
        call.output = {"raw": text, "parsed": fields}
        return AnswerResult(**fields, windows=windows, model_call=call)
