"""Audio front end over Gemini through the official google-genai SDK (generateContent).

Audio goes inline (`Part.from_bytes`, base64 in the JSON body) while the whole request fits the inline limit
(`inline_limit_mb`, 100 MB by default: the Gemini API's limit on an inline request since it was raised from
20 MB, files, prompt and system instruction together); above it the largest clips go through the Files API,
one upload per distinct clip (by the sha256 of the bytes sent) for the life of the front end, and `close()`
deletes them. Gemini has a long audio context, so no windowing unless configured. A `base_url` points the
SDK at another endpoint (a proxy, or a loopback server in tests).

Every request goes through `RemoteFrontEnd._retry` with the whole request described as JSON (audio by content
hash and span, never the bytes and never an upload's name), so the model-call cache can answer a repeat; the
reply is kept as a `GenerateContentResponse`, whose usage (thought tokens included), `modelVersion` and finish
reason the call record is filled from. Each ModelCall also records what was sent: the messages (audio named,
not inlined), the audio parts (`SentAudio`, transport "inline" or "file") and the decoding settings.

Decoding settings: `temperature` (None: not sent), `max_output_tokens`, `seed`, `thinking_budget` (sent as
`thinking_config.thinking_budget`; None: the model's default, 0: no thinking on models that allow it, -1:
dynamic). An answer among given choices asks for token log-probabilities (`response_logprobs`, `logprobs`
alternatives per token) and takes as its confidence the chosen choice's probability normalised over the
choices (`confidence_source="logprobs"`, computed by `choice_confidence.logprob_confidence` as for the OpenAI
front end, from Gemini's `logprobs_result`); a model that refuses log-probabilities (the Gemini API does for
several models: 400 "Logprobs is not enabled for models/...") is asked again without them, and not asked
again by this front end; without log-probabilities a confidence the reply states is kept as `self_reported`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import math
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, Literal, Self, Unpack

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.backends.cache import Codec
from audiomind.backends.deadline import BudgetExhausted, current_budget
from audiomind.backends.frontends.audio_parts import Segment, plan_segments, sent_audio
from audiomind.backends.frontends.choice_confidence import logprob_confidence, stated_confidence
from audiomind.backends.frontends.remote import CallSettings, RemoteFrontEnd
from audiomind.backends.frontends.replies import (
    listen_prompt,
    parse_answer_reply,
    parse_listen_reply,
)
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelMessage, ModelSpec, SentAudio

INLINE_LIMIT_MB = 100.0  # the Gemini API's limit on a whole inline request (ai.google.dev, Files API guide)
REQUEST_OVERHEAD_BYTES = 16 * 1024  # JSON keys, config, part wrappers: a generous allowance
FILE_PART_BYTES = 512  # a fileData part in the body (its URI and MIME type)
UPLOAD_RENEW_S = 15 * 60  # an upload expiring sooner than this is uploaded again (Gemini keeps files 48 h)
DEFAULT_TOP_LOGPROBS = 5  # alternatives per output token asked for an answer among choices (the API allows 1-20)


def _b64_len(n: int) -> int:
    return 4 * math.ceil(n / 3)


class GeminiFrontEnd(RemoteFrontEnd):
    """An audio-in Gemini model (generateContent). Call `close()` when the run or benchmark is over: it deletes
    the clips this front end uploaded with the Files API (it is also a context manager)."""

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
        max_tokens: int | None = None,
        seed: int | None = None,
        thinking_budget: int | None = None,
        logprobs: bool = True,
        top_logprobs: int = DEFAULT_TOP_LOGPROBS,
        json_mode: bool = True,
        inline_limit_mb: float = INLINE_LIMIT_MB,
        file_active_timeout_s: float = 120.0,
        **settings: Unpack[CallSettings],
    ):
        """`max_tokens` is another name of `max_output_tokens` (the name the OpenAI front end takes);
        `logprobs` False never asks for log-probabilities, `top_logprobs` is how many alternatives per token
        an answer asks for (Gemini's `logprobs`; the names are the OpenAI front end's); `inline_limit_mb` 0
        sends every clip through the Files API."""
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - core dependency
            raise BackendError("the google-genai package is not installed (pip install google-genai)") from exc
        key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not key:
            raise BackendError("GEMINI_API_KEY (or GOOGLE_API_KEY) is not set: export it to use gemini:MODEL")
        if max_tokens is not None and max_output_tokens is not None and max_tokens != max_output_tokens:
            raise BackendError(f"max_tokens={max_tokens} and max_output_tokens={max_output_tokens} disagree: "
                               "give one of them")
        if thinking_budget is not None and thinking_budget < -1:
            raise BackendError(f"thinking_budget must be -1 (dynamic), 0 (off) or a token count, not "
                               f"{thinking_budget}")
        if not 1 <= top_logprobs <= 20:
            raise BackendError(f"top_logprobs must be between 1 and 20, not {top_logprobs}")
        if inline_limit_mb < 0:
            raise BackendError(f"inline_limit_mb must be >= 0, not {inline_limit_mb}")
        self._types = types
        self.base_url = base_url.rstrip("/") if base_url else None
        self._settings(model, name or (f"gemini:{model}" + (f"@{self.base_url}" if self.base_url else "")), key,
                       window_s, **settings)
        self.max_output_tokens = max_output_tokens if max_output_tokens is not None else max_tokens
        self.seed = seed
        self.thinking_budget = thinking_budget
        self.logprobs = bool(logprobs)
        self.top_logprobs = top_logprobs
        self.json_mode = json_mode
        self.inline_limit_mb = float(inline_limit_mb)
        self.file_active_timeout_s = file_active_timeout_s
        self._logprobs_refused: str | None = None  # the server's refusal, once seen: not asked again
        # Files API uploads of this front end: sha256 of the bytes sent -> the File; one lock per digest so
        # two requests needing the same clip upload it once.
        self._uploads: dict[str, Any] = {}
        self._upload_locks: dict[str, threading.Lock] = {}
        self._uploads_lock = threading.Lock()
        self._codec = Codec(
            encode=lambda r: r.model_dump(mode="json", exclude_none=True),
            decode=lambda d: types.GenerateContentResponse.model_validate_json(json.dumps(d)),
        )
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
        return self._model_spec(("max_output_tokens", self.max_output_tokens), json_mode=self.json_mode,
                                seed=self.seed, thinking_budget=self.thinking_budget, logprobs=self.logprobs,
                                top_logprobs=self.top_logprobs,
                                inline_limit_mb=self.inline_limit_mb)

    @property
    def _endpoint(self) -> str:
        return self.base_url or "https://generativelanguage.googleapis.com"

    # -- the Files API: one upload per distinct clip, deleted by close()

    @property
    def uploaded(self) -> dict[str, str]:
        """sha256 of each uploaded clip's bytes -> its file name (files/...), for the record and tests."""
        with self._uploads_lock:
            return {d: f.name for d, f in self._uploads.items()}

    def _file_for(self, wav: bytes, label: str) -> Any:
        """The uploaded File holding exactly `wav`: this front end's earlier upload of the same bytes, unless it
        expires soon, else a new upload."""
        digest = hashlib.sha256(wav).hexdigest()
        with self._uploads_lock:
            lock = self._upload_locks.setdefault(digest, threading.Lock())
        with lock:
            with self._uploads_lock:
                f = self._uploads.get(digest)
            if f is not None and not self._expiring(f):
                return f
            f = self._upload(wav, label)
            with self._uploads_lock:
                self._uploads[digest] = f
            return f

    @staticmethod
    def _expiring(f: Any) -> bool:
        exp = getattr(f, "expiration_time", None)
        if not isinstance(exp, datetime):
            return False
        if exp.tzinfo is None:
            exp = exp.replace(tzinfo=UTC)
        return exp - datetime.now(UTC) < timedelta(seconds=UPLOAD_RENEW_S)

    def _upload(self, wav: bytes, label: str) -> Any:
        """Upload one clip and wait (bounded) until it is ACTIVE. Runs inside a generateContent attempt, so a
        failed upload is retried (or not) as that request is."""
        types = self._types
        cfg = types.UploadFileConfig(mime_type="audio/wav", display_name=label[:120])
        f = self._client.files.upload(file=io.BytesIO(wav), config=cfg)
        deadline = time.monotonic() + self.file_active_timeout_s
        while _state(f) == "PROCESSING":
            if time.monotonic() > deadline:
                raise BackendError(f"uploaded file {f.name} still PROCESSING after {self.file_active_timeout_s} s")
            budget = current_budget()
            if budget is not None and budget.remaining() < 1.0:
                raise BudgetExhausted(f"time budget of {budget.seconds:g} s spent waiting for the uploaded file "
                                      f"{f.name} to be processed")
            time.sleep(1.0)
            if not f.name:
                raise BackendError("Gemini's Files API returned an uploaded file without a name to poll")
            f = self._client.files.get(name=f.name)
        if _state(f) == "FAILED":
            raise BackendError(f"Gemini could not process the uploaded file {f.name}")
        return f

    def close(self) -> list[str]:
        """Delete every file this front end uploaded (each at most once; a file already gone counts as
        deleted). Returns the deletions that failed, one line each (never raises: the files expire on their
        own after 48 hours). The front end stays usable: a later request uploads again."""
        with self._uploads_lock:
            files = list(self._uploads.values())
            self._uploads.clear()
        failed: list[str] = []
        for f in files:
            try:
                self._retry(functools.partial(self._client.files.delete, name=f.name), "delete_upload")
            except BackendError as exc:
                if "404" not in str(exc) and "NOT_FOUND" not in str(exc):
                    failed.append(f"{f.name}: {exc}")
        return failed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request

    def _transports(self, text_bytes: int, wavs: Sequence[bytes]) -> list[str]:
        """'inline' or 'file' per audio part: inline while the whole body fits the limit, the largest parts
        moved to the Files API first until it does."""
        limit = self.inline_limit_mb * 1024 * 1024
        total = REQUEST_OVERHEAD_BYTES + text_bytes + sum(_b64_len(len(w)) for w in wavs)
        out = ["inline"] * len(wavs)
        for i in sorted(range(len(wavs)), key=lambda i: -len(wavs[i])):
            if total <= limit:
                break
            out[i] = "file"
            total -= _b64_len(len(wavs[i])) - FILE_PART_BYTES
        return out

    def _decoding(self, json_reply: bool, logprobs: int | None) -> dict[str, Any]:
        """The decoding settings sent (flat, as ModelCall.decoding records them); unset ones are not sent."""
        d: dict[str, Any] = {}
        if self.temperature is not None:
            d["temperature"] = self.temperature
        if self.max_output_tokens:
            d["max_output_tokens"] = self.max_output_tokens
        if self.seed is not None:
            d["seed"] = self.seed
        if self.thinking_budget is not None:
            d["thinking_budget"] = self.thinking_budget
        if json_reply:
            d["response_mime_type"] = "application/json"
        if logprobs:
            d["response_logprobs"] = True
            d["logprobs"] = logprobs
        return d

    def _config(self, decoding: dict[str, Any], system: str | None) -> Any:
        types = self._types
        kw = {k: v for k, v in decoding.items() if k != "thinking_budget"}
        if "thinking_budget" in decoding:
            kw["thinking_config"] = types.ThinkingConfig(thinking_budget=decoding["thinking_budget"])
        return types.GenerateContentConfig(**kw, system_instruction=system)

    def _plan(self, prompt: str, artifacts: list[Artifact]
              ) -> tuple[str | None, list[Segment], list[AudioWindow], list[bytes], list[str]]:
        """(system instruction, segments, windows sent, each segment's WAV, each one's transport)."""
        system = evidence_rule() if has_evidence(prompt) else None
        segments, windows = plan_segments(artifacts, self.window_s)
        wavs = [seg.wav() for seg in segments]
        text_bytes = (len(prompt.encode()) + len((system or "").encode())
                      + sum(len(s.label.encode()) for s in segments))
        return system, segments, windows, wavs, self._transports(text_bytes, wavs)

    def _contents(self, prompt: str, segments: list[Segment], wavs: list[bytes], transports: list[str]) -> list[Any]:
        """[prompt, label, audio, label, audio...] as one user turn; a 'file' part is uploaded (or reused)."""
        types = self._types
        parts: list[Any] = [types.Part.from_text(text=prompt)]
        for seg, wav, how in zip(segments, wavs, transports, strict=True):
            parts.append(types.Part.from_text(text=seg.label))
            if how == "file":
                f = self._file_for(wav, seg.label)
                parts.append(types.Part.from_uri(file_uri=f.uri, mime_type=f.mime_type or "audio/wav"))
            else:
                parts.append(types.Part.from_bytes(data=wav, mime_type="audio/wav"))
        return [types.Content(role="user", parts=parts)]

    def build_contents(self, prompt: str, artifacts: list[Artifact]
                       ) -> tuple[list[Any], list[AudioWindow], bool, list[str]]:
        """(contents, windows sent, whether a clip went through the Files API, errors (none: kept for callers
        of the earlier signature)): the user turn `generate` sends, for callers that send it otherwise (the
        batch API). Uploads now, reusing this front end's earlier uploads."""
        _, segments, windows, wavs, transports = self._plan(prompt, artifacts)
        return self._contents(prompt, segments, wavs, transports), windows, "file" in transports, []

    def request_config(self, prompt: str, *, json_reply: bool | None = None, logprobs: int | None = None
                       ) -> tuple[Any, dict[str, Any]]:
        """(GenerateContentConfig, the decoding settings as ModelCall.decoding records them) of a request
        with this prompt: the system instruction, decoding, thinking budget, JSON mode, log-probabilities."""
        json_reply = self.json_mode if json_reply is None else json_reply
        decoding = self._decoding(json_reply, logprobs)
        return self._config(decoding, evidence_rule() if has_evidence(prompt) else None), decoding

    def generate(self, prompt: str, artifacts: list[Artifact], purpose: str, *, json_reply: bool | None = None,
                 logprobs: int | None = None) -> tuple[Any, str, list[AudioWindow], ModelCall]:
        """One generateContent request: the prompt, then a label and an audio part per clip or window (the
        evidence rule as system instruction when the prompt quotes evidence). Returns (the reply, its text,
        the windows sent, the ModelCall with input, input_audio and decoding filled). Uploads happen inside
        the request's attempts, so a reply from the model-call cache uploads nothing."""
        system, segments, windows, wavs, transports = self._plan(prompt, artifacts)
        cfg, decoding = self.request_config(prompt, json_reply=json_reply, logprobs=logprobs)
        contents: list[dict[str, Any]] = [{"text": prompt}]
        for seg in segments:
            contents += [{"text": seg.label}, {"audio": seg.key()}]
        request: dict[str, Any] = {
            "api": "generateContent", "model": self.model, "base_url": self.base_url, "system": system,
            "contents": contents, "decoding": decoding,
        }

        def send() -> Any:
            contents = self._contents(prompt, segments, wavs, transports)
            return self._client.models.generate_content(model=self.model, contents=contents, config=cfg)

        sent = [sent_audio(seg, how) for seg, how in zip(segments, transports, strict=True)]
        messages = _messages(prompt, system, segments, sent)
        try:
            resp, call = self._retry(send, purpose, request=request, codec=self._codec)
        except BackendError as exc:
            failed = getattr(exc, "model_call", None)
            if isinstance(failed, ModelCall):
                failed.input, failed.input_audio, failed.decoding = messages, sent, decoding
            raise
        call.input, call.input_audio, call.decoding = messages, sent, decoding
        text = _reply_text(resp)
        if not text:
            reason = call.finish_reason or ""
            with contextlib.suppress(Exception):  # diagnostics only
                if not resp.candidates:
                    reason = str(resp.prompt_feedback)
            call.errors.append(f"empty reply{': ' + reason if reason else ''}")
        return resp, text, windows, call

    def _ask_with_logprobs(self, prompt: str, artifacts: list[Artifact], purpose: str
                           ) -> tuple[Any, str, list[AudioWindow], ModelCall]:
        """`ask` with log-probabilities, unless this model refused them already; a refusal (HTTP 400 naming
        logprobs) is remembered and the request sent again without them, the refusal kept in the errors."""
        if not self.logprobs or self._logprobs_refused:
            return self.generate(prompt, artifacts, purpose)
        try:
            return self.generate(prompt, artifacts, purpose, logprobs=self.top_logprobs)
        except BackendError as exc:
            if not _rejects_logprobs(exc):
                raise
            self._logprobs_refused = str(exc)
            refused = getattr(exc, "model_call", None)
        resp, text, windows, call = self.generate(prompt, artifacts, purpose)
        if isinstance(refused, ModelCall):
            call.attempts += refused.attempts
            call.latency_s = round(call.latency_s + refused.latency_s, 3)
        call.errors = [f"log-probabilities refused, asked again without them: {self._logprobs_refused}"] + call.errors
        return resp, text, windows, call

    # -- the FrontEnd interface

    def complete_text(self, prompt: str, artifacts: list[Artifact], purpose: str) -> tuple[str, list[AudioWindow],
                                                                                            ModelCall]:
        """A plain-text reply to `prompt` about the clips, with no JSON reply format and no JSON mode (the
        judges' one-word yes/no questions)."""
        _, text, windows, call = self.generate(prompt, artifacts, purpose, json_reply=False)
        call.output = {"raw": text}
        return text, windows, call

    def listen(self, request: ListenRequest) -> ListenResult:
        if not request.artifacts:
            raise BackendError("listen() needs at least one artifact")
        _, text, windows, call = self.generate(listen_prompt(request), request.artifacts, request.kind or "listen")
        fields = parse_listen_reply(text)
        call.output = {"raw": text, "parsed": {k: v for k, v in fields.items() if k != "text"}}
        return ListenResult(**fields, windows=windows, model_call=call)

    def answer(self, request: AnswerRequest) -> AnswerResult:
        if request.choices:
            resp, text, windows, call = self._ask_with_logprobs(request.prompt, request.originals, "answer")
        else:
            resp, text, windows, call = self.generate(request.prompt, request.originals, "answer")
        fields = parse_answer_reply(text)
        conf: tuple[float, str] | None = None
        source: Literal["logprobs", "self_reported"] | None = None
        view = logprob_view(resp) if request.choices else None
        if view is not None:
            conf = logprob_confidence(view, request.choices, fields["text"])
            source = "logprobs" if conf is not None else None
        if conf is None:
            conf = stated_confidence(text)
            source = "self_reported" if conf is not None else None
        call.output = {"raw": text, "parsed": fields}
        if conf is not None:
            call.output["confidence"] = {"value": conf[0], "source": source, "reason": conf[1]}
        return AnswerResult(**fields, windows=windows, model_call=call,
                            confidence=conf[0] if conf else None, confidence_reason=conf[1] if conf else "",
                            confidence_source=source)


def _rejects_logprobs(exc: BaseException) -> bool:
    """Whether a failed request was refused with HTTP 400 for asking for log-probabilities (google-genai's
    ClientError, with `code` 400, is in the BackendError's causes)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if getattr(cur, "code", None) == 400 or getattr(cur, "status_code", None) == 400:
            return "logprob" in str(cur).lower()
        cur = cur.__cause__ or cur.__context__
    return False


def _state(f: Any) -> str:
    s = getattr(f, "state", None)
    return "" if s is None else str(getattr(s, "value", s))


def _reply_text(resp: Any) -> str:
    """The reply's text parts (thought summaries excluded), joined."""
    with contextlib.suppress(Exception):
        parts = resp.candidates[0].content.parts or []
        return "".join(p.text for p in parts if isinstance(getattr(p, "text", None), str) and not p.thought)
    return ""


def _messages(prompt: str, system: str | None, segments: list[Segment], sent: list[SentAudio]) -> list[ModelMessage]:
    """The request as the trace records it: the system instruction, then the user turn with each audio part
    named (artifact, span, transport), never inlined."""
    lines = [prompt]
    for seg, s in zip(segments, sent, strict=True):
        lines.append(seg.label)
        lines.append(f"[audio: artifact {s.artifact_id} {s.start_s:.1f}-{(s.end_s or 0.0):.1f} s, {s.transport}]")
    msgs = [ModelMessage(role="system", content=system)] if system else []
    return [*msgs, ModelMessage(role="user", content="\n".join(lines))]


# ---------------------------------------------------------------- confidence


def logprob_view(resp: Any) -> Any:
    """The reply's log-probabilities in the shape `choice_confidence.logprob_confidence` reads (an OpenAI
    completion's `choices[0].logprobs.content`: per token its text, log-probability and `top_logprobs`), from
    Gemini's `candidates[0].logprobs_result` (`chosen_candidates`, and `top_candidates` per position); None
    when the reply has none."""
    try:
        lr = resp.candidates[0].logprobs_result
        chosen = list(lr.chosen_candidates or [])
        tops = list(lr.top_candidates or [])
    except (AttributeError, IndexError, TypeError):
        return None
    if not chosen or any(c.log_probability is None for c in chosen):
        return None
    tokens = []
    for i, c in enumerate(chosen):
        alts = (tops[i].candidates or []) if i < len(tops) else []
        tokens.append(SimpleNamespace(
            token=c.token or "", logprob=float(c.log_probability),
            top_logprobs=[SimpleNamespace(token=a.token or "", logprob=float(a.log_probability))
                          for a in alts if a.log_probability is not None]))
    return SimpleNamespace(choices=[SimpleNamespace(logprobs=SimpleNamespace(content=tokens))])
