"""An OpenAI-compatible chat-completions server on 127.0.0.1 that checks every request against the
installed openai SDK's types and imitates, by flags, what real servers do differently:

- `max_audio_parts`: vLLM's `--limit-mm-per-prompt` (one audio by default): more `input_audio` parts than
  that in one request is answered with HTTP 400, as vLLM answers it.
- `stream_only`: DashScope's Qwen-Omni: a request without `stream: true` is answered with HTTP 400; a
  streamed one gets server-sent chunks, the usage in a last chunk without choices when
  `stream_options.include_usage` asks for it.
- `reasoning`: an o-series / gpt-5 model: `temperature` (any value) and `max_tokens` are refused with 400,
  as OpenAI refuses them (`max_completion_tokens` is the limit such models take).
- `logprobs`: `logprobs: true` gets per-token log-probabilities, each token's `top_logprobs` alternatives
  from the scripted reply (at most the number asked for, most likely first).
- `reject_logprobs`: a server that cannot return log-probabilities answers 400 to any request for them.
- `extra_keys`: request keys the server takes beyond the SDK's (vLLM's `top_k`, ...), sent via `extra_body`.
- `refuse_first`: a burst's rate limit: the first N requests are answered 429 with `Retry-After:
  retry_after_s`, as OpenAI answers one (each request's arrival time is in `seen`).

A request that does not validate against the SDK's `CompletionCreateParams` (its top-level keys, each
message as a `ChatCompletionMessageParam`, each content part as a `ChatCompletionContentPartParam`, each
audio part standard base64 of a WAV) is answered 422 and kept in `invalid`, so a test sees it. Replies are
built and validated as the SDK's `ChatCompletion` / `ChatCompletionChunk` before they are sent.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import re
import threading
import time
import typing
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import soundfile as sf
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionContentPartParam,
    ChatCompletionMessageParam,
)
from openai.types.chat import completion_create_params as ccp
from pydantic import TypeAdapter, ValidationError

_MESSAGE = TypeAdapter(ChatCompletionMessageParam)
_PART = TypeAdapter(ChatCompletionContentPartParam)
_STREAMING = TypeAdapter(ccp.CompletionCreateParamsStreaming)
_NON_STREAMING = TypeAdapter(ccp.CompletionCreateParamsNonStreaming)
_KEYS = set(typing.get_type_hints(ccp.CompletionCreateParamsStreaming))
_TOKEN = re.compile(r"\s*[A-Za-z0-9]+|\s*[^\sA-Za-z0-9]|\s+")
AUDIO_TOKENS_PER_S = 25  # Qwen2.5-Omni's audio encoder: 40 ms a token


@dataclass
class Token:
    """One reply token: its text, log-probability and the alternatives listed at its place ({token: lp})."""

    text: str
    logprob: float = 0.0
    alternatives: dict[str, float] = field(default_factory=dict)


@dataclass
class Script:
    """One scripted reply: its text (tokenized by a simple rule) or its tokens with their alternatives."""

    text: str = ""
    tokens: list[Token] | None = None
    finish_reason: str = "stop"

    def token_list(self) -> list[Token]:
        if self.tokens is not None:
            return self.tokens
        return [Token(t, -0.01) for t in _TOKEN.findall(self.text)]


@dataclass
class Seen:
    """A request the stand-in took: its JSON body and what it found in it."""

    body: dict[str, Any]
    audio_s: list[float]  # duration of each input_audio part, in order
    status: int = 200
    arrived: float = field(default_factory=time.monotonic)


class RequestInvalid(ValueError):
    pass


def audio_durations(body: dict[str, Any]) -> list[float]:
    """Each input_audio part's duration; RequestInvalid unless it is standard base64 of a WAV."""
    out: list[float] = []
    for msg in body.get("messages") or []:
        content = msg.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") != "input_audio":
                continue
            try:
                raw = base64.b64decode(part["input_audio"]["data"], validate=True)
                info = sf.info(io.BytesIO(raw))
            except (binascii.Error, RuntimeError, KeyError, TypeError) as exc:
                raise RequestInvalid(f"input_audio part is not standard base64 of an audio file: {exc}") from exc
            if part["input_audio"]["format"] == "wav" and info.format != "WAV":
                raise RequestInvalid(f"input_audio says wav but holds {info.format}")
            out.append(info.frames / info.samplerate)
    return out


def validate(body: Any, extra_keys: frozenset[str] = frozenset()) -> None:
    """RequestInvalid unless `body` is a chat-completions request the installed SDK's types accept (plus
    the server's own `extra_keys`, e.g. vLLM's sampling extensions sent through `extra_body`)."""
    if not isinstance(body, dict):
        raise RequestInvalid("the body is not a JSON object")
    unknown = set(body) - _KEYS - extra_keys
    if unknown:
        raise RequestInvalid(f"unknown request keys: {sorted(unknown)}")
    try:
        (_STREAMING if body.get("stream") else _NON_STREAMING).validate_python(
            {k: v for k, v in body.items() if k not in extra_keys})
        for msg in body.get("messages") or []:
            _MESSAGE.validate_python(msg)
            content = msg.get("content")
            for part in content if isinstance(content, list) else []:
                _PART.validate_python(part)
                if part.get("type") == "input_audio" and set(part) != {"type", "input_audio"}:
                    raise RequestInvalid(f"input_audio part with extra keys: {sorted(part)}")
    except ValidationError as exc:
        raise RequestInvalid(str(exc)) from exc
    if not body.get("messages"):
        raise RequestInvalid("no messages")


def _error(status: int, message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


class OpenAIStandin:
    """The stand-in server; `script()` queues replies (else `default` answers), `seen` records requests."""

    def __init__(self, *, max_audio_parts: int | None = None, stream_only: bool = False, reasoning: bool = False,
                 logprobs: bool = True, reject_logprobs: bool = False, served_model: str | None = None,
                 extra_keys: frozenset[str] = frozenset(), refuse_first: int = 0,
                 retry_after_s: float = 1.0) -> None:
        self.max_audio_parts = max_audio_parts
        self.stream_only = stream_only
        self.reasoning = reasoning
        self.logprobs = logprobs
        self.reject_logprobs = reject_logprobs
        self.served_model = served_model
        self.extra_keys = extra_keys
        self.refuse_first = refuse_first
        self.retry_after_s = retry_after_s
        self.seen: list[Seen] = []
        self.invalid: list[tuple[Any, str]] = []
        self.default: Callable[[dict[str, Any]], Script] = lambda body: Script('{"answer": "x", "rationale": ""}')
        self._queue: deque[Script] = deque()
        self._lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                status, payload, stream = standin.handle(self.path, raw)
                if stream is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for chunk in stream:
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", f"{standin.retry_after_s:g}")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    # -- scripting
    def script(self, *replies: Script | str) -> None:
        for r in replies:
            self._queue.append(r if isinstance(r, Script) else Script(r))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [s.body for s in self.seen]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- serving
    def handle(self, path: str, raw: bytes) -> tuple[int, Any, list[dict[str, Any]] | None]:
        """(status, JSON body, or the chunks of a streamed reply) for one POST."""
        if not path.split("?", maxsplit=1)[0].endswith("/chat/completions"):
            return 404, _error(404, f"no route {path}"), None
        try:
            body = json.loads(raw)
            validate(body, self.extra_keys)
            durations = audio_durations(body)
        except (ValueError, RequestInvalid) as exc:
            with self._lock:
                self.invalid.append((raw[:2000], str(exc)))
            return 422, _error(422, f"request does not validate against the openai SDK types: {exc}"), None
        seen = Seen(body, durations)
        with self._lock:
            self.seen.append(seen)
            n = len(self.seen)
        if n <= self.refuse_first:  # a rate limit: 429 with Retry-After, as OpenAI answers a burst
            seen.status = 429
            return 429, _error(429, "Rate limit reached for requests", code="rate_limit_exceeded"), None
        refusal = self._quirk(body, durations)
        if refusal is not None:
            seen.status = 400
            return 400, refusal, None
        with self._lock:
            script = self._queue.popleft() if self._queue else None
        script = script or self.default(body)
        if body.get("stream"):
            return 200, None, self._chunks(body, script, durations)
        return 200, self._completion(body, script, durations), None

    def _quirk(self, body: dict[str, Any], durations: list[float]) -> dict[str, Any] | None:
        """The 400 a quirky server answers this request with, or None."""
        if self.max_audio_parts is not None and len(durations) > self.max_audio_parts:
            return _error(400, f"At most {self.max_audio_parts} audio(s) may be provided in one prompt, "
                               f"got {len(durations)}.")
        if self.stream_only and not body.get("stream"):
            return _error(400, "This model only support stream mode, please enable the stream parameter to "
                               "access the model.", code="invalid_parameter_error")
        if self.reasoning and "temperature" in body:
            return _error(400, f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                               "this model. Only the default (1) value is supported.", "temperature",
                          "unsupported_value")
        if self.reasoning and "max_tokens" in body:
            return _error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                               "'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
        if (self.reject_logprobs or not self.logprobs) and (body.get("logprobs") or "top_logprobs" in body):
            return _error(400, "logprobs are not supported by this server", "logprobs")
        return None

    def _usage(self, body: dict[str, Any], tokens: list[Token], durations: list[float]) -> dict[str, Any]:
        text = sum(len(json.dumps(m.get("content"))) for m in body["messages"] if isinstance(m.get("content"), str))
        text += sum(len(p.get("text", "")) for m in body["messages"] if isinstance(m.get("content"), list)
                    for p in m["content"])
        audio = sum(math.ceil(d * AUDIO_TOKENS_PER_S) for d in durations)
        prompt = text // 4 + audio
        reasoning = 5 if self.reasoning else 0
        return {"prompt_tokens": prompt, "completion_tokens": len(tokens) + reasoning,
                "total_tokens": prompt + len(tokens) + reasoning,
                "prompt_tokens_details": {"audio_tokens": audio, "cached_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": reasoning}}

    def _logprob_entry(self, tok: Token, k: int) -> dict[str, Any]:
        alts = {tok.text: tok.logprob, **tok.alternatives}
        top = sorted(alts.items(), key=lambda kv: -kv[1])[:k]
        return {"token": tok.text, "logprob": tok.logprob, "bytes": list(tok.text.encode()),
                "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]}

    def _logprobs(self, body: dict[str, Any], tokens: list[Token]) -> dict[str, Any] | None:
        if not body.get("logprobs"):
            return None
        k = int(body.get("top_logprobs") or 0)
        return {"content": [self._logprob_entry(t, k) for t in tokens], "refusal": None}

    def _completion(self, body: dict[str, Any], script: Script, durations: list[float]) -> dict[str, Any]:
        tokens = script.token_list()
        reply = {
            "id": f"chatcmpl-standin-{len(self.seen)}", "object": "chat.completion", "created": int(time.time()),
            "model": self.served_model or body["model"], "system_fingerprint": "fp_standin",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(t.text for t in tokens)},
                         "finish_reason": script.finish_reason, "logprobs": self._logprobs(body, tokens)}],
            "usage": self._usage(body, tokens, durations),
        }
        ChatCompletion.model_validate(reply)  # the stand-in never sends what the SDK would not read
        return reply

    def _chunks(self, body: dict[str, Any], script: Script, durations: list[float]) -> list[dict[str, Any]]:
        tokens = script.token_list()
        base = {"id": f"chatcmpl-standin-{len(self.seen)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": self.served_model or body["model"],
                "system_fingerprint": "fp_standin"}
        k = int(body.get("top_logprobs") or 0)
        chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                        "finish_reason": None}]}]
        for tok in tokens:
            choice: dict[str, Any] = {"index": 0, "delta": {"content": tok.text}, "finish_reason": None}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": [self._logprob_entry(tok, k)], "refusal": None}
            chunks.append({**base, "choices": [choice]})
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": script.finish_reason}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            for c in chunks:
                c["usage"] = None
            chunks.append({**base, "choices": [], "usage": self._usage(body, tokens, durations)})
        for c in chunks:
            ChatCompletionChunk.model_validate(c)
        return chunks
