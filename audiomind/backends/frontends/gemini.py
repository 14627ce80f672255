"""Audio front end over Gemini through the official google-genai SDK.

Audio goes inline as `Part.from_bytes(data=wav, mime_type="audio/wav")`; when a request's audio is
larger than the inline limit (~20 MB for the whole request), each clip is uploaded with the Files API
and referenced by URI instead. Gemini has a long audio context, so no windowing unless configured.
A `base_url` points the SDK at another endpoint (a proxy, or a loopback server in tests).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import time
from typing import Any, Unpack

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.backends.deadline import BudgetExhausted, current_budget
from audiomind.backends.frontends.audio_parts import audio_segments
from audiomind.backends.frontends.remote import CallSettings, RemoteFrontEnd
from audiomind.backends.frontends.replies import listen_prompt, parse_answer_reply, parse_listen_reply
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelSpec

INLINE_LIMIT_BYTES = 20 * 1024 * 1024 - 512 * 1024  # Gemini caps a whole inline request at 20 MB


class GeminiFrontEnd(RemoteFrontEnd):
    """An audio-in Gemini model (generateContent)."""

    kind = "gemini"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        name: str | None = None,
        window_s: float | None = None,
        max_output_tokens: int | None = None,
        json_mode: bool = True,
        inline_limit_bytes: int = INLINE_LIMIT_BYTES,
        file_active_timeout_s: float = 120.0,
        **settings: Unpack[CallSettings],
    ):
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - core dependency
            raise BackendError("the google-genai package is not installed (pip install google-genai)") from exc
        key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not key:
            raise BackendError("GEMINI_API_KEY (or GOOGLE_API_KEY) is not set: export it to use gemini:MODEL")
        self._types = types
        self.base_url = base_url.rstrip("/") if base_url else None
        self._settings(model, name or (f"gemini:{model}" + (f"@{self.base_url}" if self.base_url else "")), key,
                       window_s, **settings)
        self.max_output_tokens = max_output_tokens
        self.json_mode = json_mode
        self.inline_limit_bytes = inline_limit_bytes
        self.file_active_timeout_s = file_active_timeout_s
        # Retries are ours (call_with_retries): the SDK gets attempts=1 so it never retries underneath.
        http_options = types.HttpOptions(
            api_version="v1beta",
            timeout=int(self.timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        if self.base_url:
            http_options.base_url = self.base_url
        self._client = genai.Client(api_key=key, http_options=http_options)

    def spec(self) -> ModelSpec:
        return self._model_spec(("max_output_tokens", self.max_output_tokens), json_mode=self.json_mode)

    @property
    def _endpoint(self) -> str:
        return self.base_url or "https://generativelanguage.googleapis.com"

    def _upload(self, wav: bytes, label: str, errors: list[str]) -> Any:
        """Upload one clip with the Files API and wait (bounded) until it is ACTIVE."""
        types = self._types
        cfg = types.UploadFileConfig(mime_type="audio/wav", display_name=label[:120])
        f, call = self._retry(lambda: self._client.files.upload(file=io.BytesIO(wav), config=cfg), "upload")
        errors.extend(call.errors)
        deadline = time.monotonic() + self.file_active_timeout_s
        while getattr(f, "state", None) is not None and str(getattr(f.state, "value", f.state)) == "PROCESSING":
            if time.monotonic() > deadline:
                raise BackendError(f"uploaded file {f.name} still PROCESSING after {self.file_active_timeout_s} s")
            budget = current_budget()
            if budget is not None and budget.remaining() < 1.0:
                raise BudgetExhausted(f"time budget of {budget.seconds:g} s spent waiting for the uploaded file "
                                      f"{f.name} to be processed")
            time.sleep(1.0)
            if not f.name:
                raise BackendError("Gemini's Files API returned an uploaded file without a name to poll")
            f, call = self._retry(functools.partial(self._client.files.get, name=f.name), "upload")
        if getattr(f, "state", None) is not None and str(getattr(f.state, "value", f.state)) == "FAILED":
            raise BackendError(f"Gemini could not process the uploaded file {f.name}")
        return f

    def build_contents(self, prompt: str, artifacts: list[Artifact]) -> tuple[list[Any], list[AudioWindow], bool,
                                                                             list[str]]:
        """[prompt, label, audio, label, audio...] parts; inline below the size limit, else via the Files API."""
        types = self._types
        segments, windows = audio_segments(artifacts, self.window_s)
        total = sum(len(w) for _, w in segments)
        # base64 inflates inline data by 4/3 in the JSON body.
        use_files = total * 4 / 3 > self.inline_limit_bytes
        upload_errors: list[str] = []
        parts: list[Any] = [types.Part.from_text(text=prompt)]
        for label, wav in segments:
            parts.append(types.Part.from_text(text=label))
            if use_files:
                f = self._upload(wav, label, upload_errors)
                parts.append(types.Part.from_uri(file_uri=f.uri, mime_type=f.mime_type or "audio/wav"))
            else:
                parts.append(types.Part.from_bytes(data=wav, mime_type="audio/wav"))
        return [types.Content(role="user", parts=parts)], windows, use_files, upload_errors

    def _generate(self, contents: list[Any], purpose: str, *, system: str | None = None,
                  json_reply: bool | None = None) -> tuple[str, ModelCall]:
        types = self._types
        json_reply = self.json_mode if json_reply is None else json_reply
        cfg = types.GenerateContentConfig(
            temperature=self.temperature,
            max_output_tokens=self.max_output_tokens,
            response_mime_type="application/json" if json_reply else None,
            system_instruction=system,
        )
        resp, call = self._retry(
            lambda: self._client.models.generate_content(model=self.model, contents=contents, config=cfg), purpose
        )
        text = getattr(resp, "text", None) or ""
        if not text:
            reason = ""
            with contextlib.suppress(Exception):  # diagnostics only
                reason = str(resp.candidates[0].finish_reason) if resp.candidates else str(resp.prompt_feedback)
            call.errors.append(f"empty reply{': ' + reason if reason else ''}")
        return text, call

    @staticmethod
    def _system(prompt: str) -> str | None:
        """The evidence rule as the system instruction of a prompt that quotes evidence."""
        return evidence_rule() if has_evidence(prompt) else None

    def complete_text(self, prompt: str, artifacts: list[Artifact], purpose: str) -> tuple[str, list[AudioWindow],
                                                                                            ModelCall]:
        """A plain-text reply to `prompt` about the clips, with no JSON reply format and no JSON mode (the
        judges' one-word yes/no questions)."""
        contents, windows, used_files, up_errors = self.build_contents(prompt, artifacts)
        text, call = self._generate(contents, purpose=purpose, system=self._system(prompt), json_reply=False)
        call.errors = up_errors + call.errors
        call.output = {"raw": text, "audio_transport": "files_api" if used_files else "inline"}
        return text, windows, call

    def listen(self, request: ListenRequest) -> ListenResult:
        if not request.artifacts:
            raise BackendError("listen() needs at least one artifact")
        prompt = listen_prompt(request)
        contents, windows, used_files, up_errors = self.build_contents(prompt, request.artifacts)
        text, call = self._generate(contents, purpose=request.kind or "listen", system=self._system(prompt))
        call.errors = up_errors + call.errors
        fields = parse_listen_reply(text)
        call.output = {"raw": text, "parsed": {k: v for k, v in fields.items() if k != "text"},
                       "audio_transport": "files_api" if used_files else "inline"}
        return ListenResult(**fields, windows=windows, model_call=call)

    def answer(self, request: AnswerRequest) -> AnswerResult:
        contents, windows, used_files, up_errors = self.build_contents(request.prompt, request.originals)
        text, call = self._generate(contents, purpose="answer", system=self._system(request.prompt))
        call.errors = up_errors + call.errors
        fields = parse_answer_reply(text)
        call.output = {"raw": text, "parsed": fields, "audio_transport": "files_api" if used_files else "inline"}
        return AnswerResult(**fields, windows=windows, model_call=call)
