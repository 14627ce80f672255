"""A Gemini API (v1beta, Developer API) server on 127.0.0.1 for google-genai to talk to: generateContent and the
Files API (resumable upload, get, delete), checked against the installed SDK's own types.

What is validated, for every generateContent request (`POST /v1beta/models/{model}:generateContent`):

- the `x-goog-api-key` header is present;
- the JSON body's top-level keys are among those of the REST `GenerateContentRequest` the SDK writes
  (contents, systemInstruction, generationConfig, safetySettings, tools, toolConfig, cachedContent, labels);
- `contents` validates as `list[google.genai.types.Content]`, `systemInstruction` as `types.Content` and
  `generationConfig` as `types.GenerationConfig` (pydantic, camelCase aliases, extra keys forbidden: a key the
  SDK would never write fails);
- each `inlineData` is base64 (either alphabet) of a WAV soundfile can read, with an `audio/*` MIME type;
- each `fileData.fileUri` names a file this server holds (uploaded, not deleted), as Gemini answers 403 for
  a file that is not there.

An invalid request is answered 400 INVALID_ARGUMENT and kept in `invalid` (a test asserts it is empty). Every
reply is built, then validated as `types.GenerateContentResponse` (and a file as `types.File`) before it is
sent. Quirks, by flags: `max_body_bytes` (a body above it gets Gemini's 400 "Request payload size exceeds the
limit"), `logprobs` ("serve": `responseLogprobs` gets `logprobsResult` and `avgLogprobs`; "refuse": 400
"Logprobs is not enabled for models/..."), `thoughts_tokens` (usageMetadata.thoughtsTokenCount, counted
apart from candidatesTokenCount as Gemini does), `model_version`, `processing_polls` (a new file stays
PROCESSING for that many gets).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import soundfile as sf
from google.genai import types
from pydantic import TypeAdapter, ValidationError

_CONTENTS = TypeAdapter(list[types.Content])
REQUEST_KEYS = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools", "toolConfig",
                "cachedContent", "labels"}
_TOKEN = re.compile(r"\s*[A-Za-z0-9]+|\s*[^\sA-Za-z0-9]|\s+")


@dataclass
class Reply:
    """One scripted generateContent reply. `alternatives` gives, for the answer's tokens (counted from where
    the JSON reply's "answer" value starts, or from the start of a bare reply), the tokens weighed there with
    their probabilities ({token: p}); the chosen token gets its own listed probability."""

    text: str
    alternatives: list[dict[str, float]] = field(default_factory=list)
    finish_reason: str = "STOP"
    tokens: list[str] | None = None  # how the reply is cut into tokens (default: words and single marks)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


class GeminiStandIn:
    def __init__(self, *, model_version: str = "gemini-standin-001", thoughts_tokens: int = 0,
                 max_body_bytes: int | None = None, logprobs: Literal["serve", "refuse"] = "serve",
                 processing_polls: int = 0, default_reply: str = '{"answer": "", "rationale": ""}'):
        self.model_version = model_version
        self.thoughts_tokens = thoughts_tokens
        self.max_body_bytes = max_body_bytes
        self.logprobs = logprobs
        self.processing_polls = processing_polls
        self.default_reply = default_reply
        self.delete_status: int | None = None  # set: every DELETE fails with this status (a server error)
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.invalid: list[str] = []
        self.files: dict[str, dict[str, Any]] = {}  # id -> File JSON (live files only)
        self.file_bytes: dict[str, bytes] = {}
        self.uploads = 0  # finalized uploads
        self.deletes = 0
        self.file_gets = 0
        self._sessions: dict[str, bytearray] = {}
        self._session_meta: dict[str, dict[str, Any]] = {}
        self._polls: dict[str, int] = {}
        self._n = 0
        self._lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else None
                except (json.JSONDecodeError, UnicodeDecodeError):
                    body = None
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                with standin._lock:
                    standin.requests.append(seen)
                    status, payload, headers = standin._route(seen)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_POST = _handle
            do_GET = _handle
            do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    # -- scripting and reading

    def queue(self, text: str, alternatives: list[dict[str, float]] | None = None,
              tokens: list[str] | None = None) -> None:
        if tokens is not None and "".join(tokens) != text:
            raise ValueError("the tokens must spell the reply")
        self.replies.append(Reply(text, alternatives or [], tokens=tokens))

    def generations(self) -> list[Seen]:
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0].endswith(":generateContent")]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- routing (under the lock)

    def _route(self, r: Seen) -> tuple[int, Any, dict[str, str]]:
        path = r.path.split("?")[0]
        if r.method == "POST" and path.endswith(":generateContent"):
            return self._generate(r, path)
        if r.method == "POST" and path == "/upload/v1beta/files":
            return self._upload_start(r)
        if r.method == "POST" and path.startswith("/upload-session/"):
            return self._upload_chunk(r, path.rsplit("/", 1)[-1])
        m = re.fullmatch(r"/v1beta/files/([A-Za-z0-9_-]+)", path)
        if m and r.method == "GET":
            return self._file_get(m.group(1))
        if m and r.method == "DELETE":
            return self._file_delete(m.group(1))
        return 404, _error(404, f"no route for {r.method} {path}", "NOT_FOUND"), {}

    def _bad(self, why: str) -> tuple[int, Any, dict[str, str]]:
        self.invalid.append(why)
        return 400, _error(400, why, "INVALID_ARGUMENT"), {}

    # -- generateContent

    def _generate(self, r: Seen, path: str) -> tuple[int, Any, dict[str, str]]:
        model = path.rsplit("/", 1)[-1].split(":", maxsplit=1)[0]
        if not r.headers.get("x-goog-api-key"):
            return 401, _error(401, "API key not valid", "UNAUTHENTICATED"), {}
        if self.max_body_bytes is not None and len(r.raw) > self.max_body_bytes:
            return 400, _error(400, f"Request payload size exceeds the limit: {self.max_body_bytes} bytes.",
                               "INVALID_ARGUMENT"), {}
        body = r.body
        if not isinstance(body, dict):
            return self._bad("the body is not a JSON object")
        extra = set(body) - REQUEST_KEYS
        if extra:
            return self._bad(f"unknown request fields {sorted(extra)}")
        try:
            _CONTENTS.validate_python(body.get("contents"))
            if "systemInstruction" in body:
                types.Content.model_validate(body["systemInstruction"])
            gen = types.GenerationConfig.model_validate(body.get("generationConfig") or {})
        except ValidationError as exc:
            return self._bad(f"does not validate: {exc}")
        for content in body["contents"]:
            for part in content.get("parts", []):
                inline, file_data = _field(part, "inlineData"), _field(part, "fileData")
                if inline is not None:
                    why = _check_inline(inline)
                    if why:
                        return self._bad(why)
                if file_data is not None:
                    uri = _field(file_data, "fileUri") or ""
                    fid = uri.rstrip("/").rsplit("/", 1)[-1]
                    if fid not in self.files:
                        return 403, _error(403, f"You do not have permission to access the File {fid} or it may "
                                           "not exist.", "PERMISSION_DENIED"), {}
                    if self.files[fid]["state"] != "ACTIVE":
                        return 400, _error(400, f"The File {fid} is not in an ACTIVE state and usage is not "
                                           "allowed.", "FAILED_PRECONDITION"), {}
        if gen.response_logprobs and self.logprobs == "refuse":
            return 400, _error(400, f"Logprobs is not enabled for models/{model}", "INVALID_ARGUMENT"), {}
        reply = self.replies.popleft() if self.replies else Reply(self.default_reply)
        out = self._reply(reply, gen, model)
        types.GenerateContentResponse.model_validate(out)  # the stand-in's own reply is what the SDK reads
        return 200, out, {}

    def _reply(self, reply: Reply, gen: types.GenerationConfig, model: str) -> dict[str, Any]:
        tokens = reply.tokens if reply.tokens is not None else _TOKEN.findall(reply.text)
        cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": reply.text}]},
                                "finishReason": reply.finish_reason, "index": 0}
        if gen.response_logprobs:
            k = gen.logprobs or 1
            chosen, tops = _logprobs(reply, tokens, k)
            cand["logprobsResult"] = {"chosenCandidates": chosen, "topCandidates": tops}
            cand["avgLogprobs"] = sum(c["logProbability"] for c in chosen) / max(1, len(chosen))
        prompt_tokens = 40
        usage: dict[str, Any] = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": len(tokens),
                                 "totalTokenCount": prompt_tokens + len(tokens) + self.thoughts_tokens,
                                 "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8},
                                                         {"modality": "AUDIO", "tokenCount": prompt_tokens - 8}]}
        if self.thoughts_tokens:
            usage["thoughtsTokenCount"] = self.thoughts_tokens
        return {"candidates": [cand], "usageMetadata": usage, "modelVersion": self.model_version,
                "responseId": f"resp-{len(self.requests)}"}

    # -- Files API

    def _upload_start(self, r: Seen) -> tuple[int, Any, dict[str, str]]:
        if r.headers.get("x-goog-upload-protocol") != "resumable" or r.headers.get("x-goog-upload-command") != "start":
            return self._bad("an upload must start a resumable session")
        meta = (r.body or {}).get("file", {})
        try:
            types.File.model_validate(meta)
        except ValidationError as exc:
            return self._bad(f"upload metadata does not validate as File: {exc}")
        self._n += 1
        sid = str(self._n)
        self._sessions[sid] = bytearray()
        self._session_meta[sid] = {"displayName": _field(meta, "displayName"),
                                   "mimeType": r.headers.get("x-goog-upload-header-content-type")
                                   or _field(meta, "mimeType")}
        return 200, {}, {"x-goog-upload-url": f"{self.url}/upload-session/{sid}", "x-goog-upload-status": "active"}

    def _upload_chunk(self, r: Seen, sid: str) -> tuple[int, Any, dict[str, str]]:
        if sid not in self._sessions:
            return 404, _error(404, "no such upload session", "NOT_FOUND"), {}
        buf = self._sessions[sid]
        if int(r.headers.get("x-goog-upload-offset", "-1")) != len(buf):
            return self._bad("upload chunk at the wrong offset")
        buf.extend(r.raw)
        if "finalize" not in r.headers.get("x-goog-upload-command", ""):
            return 200, {}, {"x-goog-upload-status": "active"}
        data = bytes(self._sessions.pop(sid))
        meta = self._session_meta.pop(sid)
        fid = f"f{sid}"
        f = {"name": f"files/{fid}", "uri": f"{self.url}/v1beta/files/{fid}", "mimeType": meta.get("mimeType"),
             "displayName": meta.get("displayName"), "sizeBytes": str(len(data)),
             "sha256Hash": hashlib.sha256(data).hexdigest(),
             "state": "PROCESSING" if self.processing_polls else "ACTIVE",
             "createTime": "2026-01-01T00:00:00Z", "expirationTime": "2099-01-01T00:00:00Z"}
        f = {k: v for k, v in f.items() if v is not None}
        types.File.model_validate(f)
        self.files[fid] = f
        self.file_bytes[fid] = data
        self._polls[fid] = self.processing_polls
        self.uploads += 1
        return 200, {"file": f}, {"x-goog-upload-status": "final"}

    def _file_get(self, fid: str) -> tuple[int, Any, dict[str, str]]:
        self.file_gets += 1
        f = self.files.get(fid)
        if f is None:
            return 403, _error(403, f"You do not have permission to access the File {fid} or it may not exist.",
                               "PERMISSION_DENIED"), {}
        if self._polls.get(fid, 0) > 0:
            self._polls[fid] -= 1
            if self._polls[fid] == 0:
                f["state"] = "ACTIVE"
        return 200, f, {}

    def _file_delete(self, fid: str) -> tuple[int, Any, dict[str, str]]:
        if self.delete_status is not None:
            return self.delete_status, _error(self.delete_status, "internal error", "INTERNAL"), {}
        if fid not in self.files:
            return 404, _error(404, f"File {fid} not found", "NOT_FOUND"), {}
        del self.files[fid]
        self.deletes += 1
        return 200, {}, {}


def _error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _field(obj: dict[str, Any], camel: str) -> Any:
    """A field by its camelCase name or its snake_case one: google-genai writes some nested keys (fileData's
    file_uri, the upload's display_name) in snake_case, which the API accepts as protobuf JSON does."""
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def _check_inline(blob: dict[str, Any]) -> str | None:
    mime = _field(blob, "mimeType") or ""
    if not mime.startswith("audio/"):
        return f"inline data of type {mime!r}, not audio"
    data = blob.get("data", "")
    try:
        raw = base64.b64decode(data.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError, AttributeError):
        return "inline data is not base64"
    try:
        sf.info(io.BytesIO(raw))
    except Exception as exc:  # noqa: BLE001 - any unreadable audio is the finding
        return f"inline audio does not decode: {exc}"
    return None


def _answer_start(text: str) -> int:
    m = re.search(r'"answer"\s*:\s*"', text)
    return m.end() if m else 0


def _logprobs(reply: Reply, tokens: list[str], k: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """chosenCandidates and topCandidates: scripted alternatives at the answer's tokens, certainty elsewhere.
    A token that holds the answer's first character after other characters (' "B') lists its alternatives
    with the same lead."""
    start = _answer_start(reply.text)
    chosen: list[dict[str, Any]] = []
    tops: list[dict[str, Any]] = []
    pos = 0
    first = None
    for i, tok in enumerate(tokens):
        end = pos + len(tok)
        if first is None and pos <= start < end:
            first = i
        lead = reply.text[pos:start] if i == first else ""
        j = i - first if first is not None else -1
        alts = reply.alternatives[j] if 0 <= j < len(reply.alternatives) else {}
        if alts:
            listed = {lead + t: p for t, p in alts.items()}
            lp_chosen = math.log(listed.get(tok, min(alts.values()) / 2))
            ranked = sorted(listed.items(), key=lambda kv: -kv[1])[:k]
            tops.append({"candidates": [{"token": t, "logProbability": math.log(p)} for t, p in ranked]})
        else:
            lp_chosen = -0.001
            tops.append({"candidates": [{"token": tok, "logProbability": lp_chosen}]})
        chosen.append({"token": tok, "logProbability": lp_chosen})
        pos = end
    return chosen, tops
