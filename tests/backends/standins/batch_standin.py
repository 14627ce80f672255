"""Loopback stand-ins of the providers' batch endpoints, for `bench run --batch` (audiomind.bench.batch).

`OpenAIBatchStandIn` (base URL `.url`, e.g. http://127.0.0.1:PORT/v1):
    POST /v1/files (multipart, purpose=batch), GET /v1/files/{id}/content, POST /v1/batches,
    GET /v1/batches/{id}, GET /v1/batches (newest first, `after` / `limit`); and POST /v1/chat/completions
    (a live call, kept in `live`, to compare a batch line with what the live front end sends).
`GeminiBatchStandIn` (base URL `.url`, the google-genai Developer API under /v1beta):
    POST /v1beta/models/{model}:batchGenerateContent, GET /v1beta/batches/{id}, GET /v1beta/batches; and
    POST /v1beta/models/{model}:generateContent (live, kept in `live`).

A batch goes validating -> in_progress -> completed (Gemini: PENDING -> RUNNING -> SUCCEEDED), one step per
poll, completing on poll `polls_to_finish` at the earliest and never while `hold` is set. Every request
is checked against the installed SDKs' own types (openai: batch_create_params.BatchCreateParams, each input
line's body as completion_create_params.CompletionCreateParamsNonStreaming with its messages and content
parts; google-genai: Content, GenerationConfig, the batch's input config) and each audio part must decode as
audio; what does not validate is answered 400 and kept in `invalid`. Replies are built as the SDKs' Batch /
FileObject / ChatCompletion / GenerateContentResponse and validated as such before they are sent.

Each line's answer is `answer(custom_id, request) -> text`; ids in `fail` get a failed line instead;
`fail_creates = N` answers the next N batch creates 503 (nothing created).
Usage per line is fixed (`prompt_tokens`, `audio_tokens`, `completion_tokens`) so costs are known exactly.
"""

from __future__ import annotations

import base64
import binascii
import email.parser
import email.policy
import io
import itertools
import json
import re
import threading
import time
import typing
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import soundfile as sf
from google.genai import types as gtypes
from openai.types import Batch, FileObject
from openai.types import batch_create_params as bcp
from openai.types.chat import ChatCompletion, ChatCompletionContentPartParam, ChatCompletionMessageParam
from openai.types.chat import completion_create_params as ccp
from pydantic import TypeAdapter, ValidationError

Answer = Callable[[str, dict[str, Any]], str]

_BODY = TypeAdapter(ccp.CompletionCreateParamsNonStreaming)
_BODY_KEYS = set(typing.get_type_hints(ccp.CompletionCreateParamsNonStreaming))
_MESSAGE = TypeAdapter(ChatCompletionMessageParam)
_PART = TypeAdapter(ChatCompletionContentPartParam)
_CREATE = TypeAdapter(bcp.BatchCreateParams)
_CREATE_KEYS = set(typing.get_type_hints(bcp.BatchCreateParams))
_CONTENTS = TypeAdapter(list[gtypes.Content])
_ids = itertools.count(1)


class Invalid(ValueError):
    pass


def _decode_audio(data: str, urlsafe: bool) -> None:
    try:
        raw = base64.b64decode(data.replace("-", "+").replace("_", "/") if urlsafe else data, validate=True)
        sf.info(io.BytesIO(raw))
    except (binascii.Error, RuntimeError, TypeError, AttributeError) as exc:
        raise Invalid(f"an audio part does not decode as audio: {exc}") from exc


def check_chat_body(body: Any) -> None:
    """Invalid unless `body` is a chat-completions request the openai SDK's types accept, audio included."""
    if not isinstance(body, dict):
        raise Invalid("the body is not a JSON object")
    if set(body) - _BODY_KEYS:
        raise Invalid(f"unknown body keys {sorted(set(body) - _BODY_KEYS)}")
    try:
        _BODY.validate_python(body)
        for msg in body.get("messages") or []:
            _MESSAGE.validate_python(msg)
            content = msg.get("content")
            for part in content if isinstance(content, list) else []:
                _PART.validate_python(part)
                if part.get("type") == "input_audio":
                    _decode_audio(part["input_audio"]["data"], urlsafe=False)
    except ValidationError as exc:
        raise Invalid(f"does not validate: {exc}") from exc
    if not body.get("messages"):
        raise Invalid("no messages")


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text parts of the user messages, joined (what a test's `answer` reads)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
    return "\n".join(out)


class _Server:
    """A ThreadingHTTPServer on 127.0.0.1 routing to `route(method, path, query, headers, raw)`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.invalid: list[str] = []
        self.log: list[tuple[str, str]] = []
        # `stall(method, path)` -> "hang" (read the request, never answer) | "drip" (answer 1 byte a second) | None
        self.stall: Any = None
        self.closing = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                url = urllib.parse.urlsplit(self.path)
                how = outer.stall(self.command, url.path) if outer.stall is not None else None
                if how == "hang":
                    outer.closing.wait(120)
                    return
                query = dict(urllib.parse.parse_qsl(url.query))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with outer.lock:
                    outer.log.append((self.command, url.path))
                    try:
                        status, payload = outer.route(self.command, url.path, query, headers, raw)
                    except Invalid as exc:
                        outer.invalid.append(str(exc))
                        status, payload = 400, {"error": {"message": str(exc), "type": "invalid_request_error",
                                                          "code": 400, "status": "INVALID_ARGUMENT"}}
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if isinstance(payload, bytes)
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                if how == "drip":  # the status line, the headers, then the body, one byte a second
                    self.end_headers()
                    self.wfile.flush()
                    for i in range(len(data)):
                        if outer.closing.wait(1.0):
                            return
                        try:
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                        except OSError:
                            return
                    return
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _do

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def route(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
              raw: bytes) -> tuple[int, Any]:
        raise NotImplementedError

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Batches(_Server):
    """What both stand-ins share: the answer script, the polls and the state steps."""

    STEPS: tuple[str, str, str] = ("", "", "")

    def __init__(self, answer: Answer, *, polls_to_finish: int = 2, fail: set[str] | None = None,
                 prompt_tokens: int = 1000, audio_tokens: int = 800, completion_tokens: int = 20):
        super().__init__()
        self.answer = answer
        self.polls_to_finish = polls_to_finish
        self.fail = set(fail or ())
        self.hold = False
        self.fail_creates = 0  # the next N creates are answered 503 (nothing created)
        self.usage = (prompt_tokens, audio_tokens, completion_tokens)
        self.batches: dict[str, dict[str, Any]] = {}
        self.creates: list[dict[str, Any]] = []
        self.polls: dict[str, int] = {}

    def _refuse_create(self) -> tuple[int, Any] | None:
        if self.fail_creates <= 0:
            return None
        self.fail_creates -= 1
        return 503, {"error": {"code": 503, "message": "The service is currently unavailable.",
                               "status": "UNAVAILABLE", "type": "server_error"}}

    def _step(self, bid: str) -> bool:
        """One poll of a batch: its state moves one step; True when it has just completed."""
        b = self.batches[bid]
        self.polls[bid] = self.polls.get(bid, 0) + 1
        first, running, done = self.STEPS
        if b["_state"] == first:
            b["_state"] = running
        elif b["_state"] == running and not self.hold and self.polls[bid] >= self.polls_to_finish:
            b["_state"] = done
            return True
        return False


# ---------------------------------------------------------------- OpenAI


class OpenAIBatchStandIn(_Batches):
    STEPS = ("validating", "in_progress", "completed")

    def __init__(self, answer: Answer, **kw: Any):
        super().__init__(answer, **kw)
        self.files: dict[str, dict[str, Any]] = {}
        self.live: list[dict[str, Any]] = []  # bodies of live chat.completions calls
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def route(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
              raw: bytes) -> tuple[int, Any]:
        if not headers.get("authorization", "").startswith("Bearer "):
            return 401, {"error": {"message": "no key", "type": "invalid_request_error"}}
        if method == "POST" and path == "/v1/files":
            return self._upload(headers, raw)
        if method == "GET" and (m := re.fullmatch(r"/v1/files/([^/]+)/content", path)):
            f = self.files.get(m.group(1))
            return (200, f["data"]) if f else (404, {"error": {"message": "no such file"}})
        if method == "POST" and path == "/v1/chat/completions":  # a live call, for comparison with a line
            body = json.loads(raw)
            check_chat_body(body)
            self.live.append(body)
            return 200, self._completion(body, f"live-{len(self.live)}")
        if method == "POST" and path == "/v1/batches":
            return self._refuse_create() or self._create(raw)
        if method == "GET" and path == "/v1/batches":
            return self._list(query)
        if method == "GET" and (m := re.fullmatch(r"/v1/batches/([^/]+)", path)):
            bid = m.group(1)
            if bid not in self.batches:
                return 404, {"error": {"message": f"no batch {bid}"}}
            if self._step(bid):
                self._finish(bid)
            return 200, self._batch_json(bid)
        return 404, {"error": {"message": f"no route {method} {path}"}}

    def _upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + headers.get("content-type", "").encode() + b"\r\n\r\n" + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if set(fields) != {"file", "purpose"} or fields["purpose"][1] != b"batch":
            raise Invalid(f"a batch upload takes file and purpose=batch, not {sorted(fields)}")
        data = fields["file"][1]
        ids: set[str] = set()
        for n, line in enumerate(data.decode().splitlines(), 1):
            row = json.loads(line)
            if set(row) != {"custom_id", "method", "url", "body"} or row["method"] != "POST":
                raise Invalid(f"input line {n}: keys {sorted(row)} / method {row.get('method')}")
            if row["url"] != "/v1/chat/completions" or row["custom_id"] in ids:
                raise Invalid(f"input line {n}: url {row['url']} or a repeated custom_id")
            ids.add(row["custom_id"])
            check_chat_body(row["body"])
        fid = f"file-{next(_ids)}"
        self.files[fid] = {"data": data, "purpose": "batch", "rows": [json.loads(x) for x in data.splitlines()]}
        obj = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
               "filename": fields["file"][0] or "input.jsonl", "purpose": "batch", "status": "processed"}
        return 200, FileObject.model_validate(obj).model_dump(mode="json")

    def _create(self, raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        if set(body) - _CREATE_KEYS:
            raise Invalid(f"unknown batch keys {sorted(set(body) - _CREATE_KEYS)}")
        try:
            _CREATE.validate_python(body)
        except ValidationError as exc:
            raise Invalid(f"batch create does not validate: {exc}") from exc
        f = self.files.get(body["input_file_id"])
        if f is None or f["purpose"] != "batch":
            raise Invalid(f"no batch input file {body['input_file_id']}")
        if any(r["url"] != body["endpoint"] for r in f["rows"]):
            raise Invalid("an input line's url is not the batch's endpoint")
        self.creates.append(body)
        bid = f"batch_{next(_ids)}"
        self.batches[bid] = {"id": bid, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                             "input_file_id": body["input_file_id"], "completion_window": "24h",
                             "_state": "validating", "created_at": int(time.time()),
                             "metadata": body.get("metadata"), "output_file_id": None, "error_file_id": None,
                             "request_counts": {"total": len(f["rows"]), "completed": 0, "failed": 0}}
        return 200, self._batch_json(bid)

    def _batch_json(self, bid: str) -> dict[str, Any]:
        b = {k: v for k, v in self.batches[bid].items() if not k.startswith("_")}
        b["status"] = self.batches[bid]["_state"]
        return Batch.model_validate(b).model_dump(mode="json")

    def _list(self, query: dict[str, str]) -> tuple[int, Any]:
        ids = list(reversed(self.batches))  # newest first
        if query.get("after") in ids:
            ids = ids[ids.index(query["after"]) + 1:]
        limit = int(query.get("limit", 20))
        page = [self._batch_json(i) for i in ids[:limit]]
        return 200, {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None, "has_more": len(ids) > limit}

    def _completion(self, body: dict[str, Any], cid: str) -> dict[str, Any]:
        p, a, c = self.usage
        completion = {
            "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "system_fingerprint": "fp_standin",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": self.answer(cid, body), "refusal": None}}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c,
                      "prompt_tokens_details": {"audio_tokens": a, "cached_tokens": 0}},
        }
        return ChatCompletion.model_validate(completion).model_dump(mode="json", exclude_unset=True)

    def _finish(self, bid: str) -> None:
        b = self.batches[bid]
        out, err = [], []
        for row in self.files[b["input_file_id"]]["rows"]:
            cid, body = row["custom_id"], row["body"]
            rid = f"batch_req_{next(_ids)}"
            if cid in self.fail:
                err.append({"id": rid, "custom_id": cid, "error": None,
                            "response": {"status_code": 500, "request_id": f"req_{rid}",
                                         "body": {"error": {"message": "The server had an error processing this "
                                                            "request", "type": "server_error"}}}})
                continue
            completion = self._completion(body, cid)
            out.append({"id": rid, "custom_id": cid, "error": None,
                        "response": {"status_code": 200, "request_id": f"req_{rid}", "body": completion}})
        for rows, key in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                fid = f"file-{next(_ids)}"
                self.files[fid] = {"data": "".join(json.dumps(r) + "\n" for r in rows).encode(),
                                   "purpose": "batch_output", "rows": rows}
                b[key] = fid
        b["request_counts"] = {"total": len(out) + len(err), "completed": len(out), "failed": len(err)}
        b["completed_at"] = int(time.time())


# ---------------------------------------------------------------- Gemini

_GEMINI_REQUEST_KEYS = {"model", "contents", "generationConfig", "systemInstruction", "safetySettings", "tools",
                        "toolConfig", "cachedContent"}


class GeminiBatchStandIn(_Batches):
    STEPS = ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING", "BATCH_STATE_SUCCEEDED")

    def __init__(self, answer: Answer, *, model_version: str = "gemini-standin-001", **kw: Any):
        super().__init__(answer, **kw)
        self.model_version = model_version
        self.live: list[dict[str, Any]] = []  # bodies of live generateContent calls
        self.url = f"http://127.0.0.1:{self.port}"

    def route(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
              raw: bytes) -> tuple[int, Any]:
        if not headers.get("x-goog-api-key"):
            return 401, {"error": {"code": 401, "message": "API key not valid", "status": "UNAUTHENTICATED"}}
        if method == "POST" and (m := re.fullmatch(r"/v1beta/models/([^/:]+):generateContent", path)):
            body = json.loads(raw)  # a live call, for comparison with an inlined request
            self._check_request(body, "live request")
            self.live.append(body)
            return 200, self._response(self.answer(f"live-{len(self.live)}", body))
        if method == "POST" and (m := re.fullmatch(r"/v1beta/models/([^/:]+):batchGenerateContent", path)):
            return self._refuse_create() or self._create(m.group(1), raw)
        if method == "GET" and path == "/v1beta/batches":
            return 200, {"operations": [self._operation(n) for n in reversed(self.batches)]}
        if method == "GET" and (m := re.fullmatch(r"/v1beta/batches/([^/]+)", path)):
            name = f"batches/{m.group(1)}"
            if name not in self.batches:
                return 404, {"error": {"code": 404, "message": f"{name} not found", "status": "NOT_FOUND"}}
            if self._step(name):
                self._finish(name)
            return 200, self._operation(name)
        return 404, {"error": {"code": 404, "message": f"no route {method} {path}", "status": "NOT_FOUND"}}

    def _create(self, model: str, raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw)
        batch = body.get("batch") if set(body) == {"batch"} else None
        if not isinstance(batch, dict) or set(batch) - {"displayName", "inputConfig", "webhookConfig"}:
            raise Invalid(f"a batch create takes {{batch: {{displayName, inputConfig}}}}, not {sorted(body)}")
        reqs = (batch.get("inputConfig") or {}).get("requests", {}).get("requests")
        if set(batch["inputConfig"]) != {"requests"} or not isinstance(reqs, list) or not reqs:
            raise Invalid("inputConfig must hold inlined requests {requests: {requests: [...]}}")
        rows = []
        for n, r in enumerate(reqs, 1):
            if set(r) - {"request", "metadata"} or set(r["request"]) - _GEMINI_REQUEST_KEYS:
                raise Invalid(f"request {n}: unknown keys {sorted(r)} / {sorted(r.get('request', {}))}")
            req = r["request"]
            try:
                gtypes.InlinedRequest.model_validate({"metadata": r.get("metadata")})
            except ValidationError as exc:
                raise Invalid(f"request {n}'s metadata does not validate: {exc}") from exc
            self._check_request(req, f"request {n}")
            rows.append({"metadata": r.get("metadata") or {}, "request": req})
        self.creates.append(body)
        name = f"batches/standin{next(_ids)}"
        self.batches[name] = {"_state": self.STEPS[0], "displayName": batch.get("displayName"), "rows": rows,
                              "model": f"models/{model}", "createTime": "2026-01-01T00:00:00Z", "output": None}
        return 200, self._operation(name)

    @staticmethod
    def _check_request(req: dict[str, Any], what: str) -> None:
        """Invalid unless `req` is a generateContent request google-genai's types accept, audio included."""
        if not isinstance(req, dict) or set(req) - _GEMINI_REQUEST_KEYS:
            raise Invalid(f"{what}: unknown keys {sorted(req) if isinstance(req, dict) else req!r}")
        try:
            _CONTENTS.validate_json(json.dumps(req.get("contents")))
            if "systemInstruction" in req:
                gtypes.Content.model_validate_json(json.dumps(req["systemInstruction"]))
            gtypes.GenerationConfig.model_validate_json(json.dumps(req.get("generationConfig") or {}))
        except ValidationError as exc:
            raise Invalid(f"{what} does not validate: {exc}") from exc
        for content in req["contents"]:
            for part in content.get("parts", []):
                if "inlineData" in part:
                    _decode_audio(part["inlineData"]["data"], urlsafe=True)

    def _response(self, text: str) -> dict[str, Any]:
        p, a, c = self.usage
        resp = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c,
                                  "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": a},
                                                          {"modality": "TEXT", "tokenCount": p - a}]},
                "modelVersion": self.model_version}
        gtypes.GenerateContentResponse.model_validate(resp)
        return resp

    def _operation(self, name: str) -> dict[str, Any]:
        b = self.batches[name]
        meta = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1beta.GenerateContentBatch",
                "name": name, "displayName": b["displayName"], "model": b["model"], "state": b["_state"],
                "createTime": b["createTime"], "updateTime": b["createTime"]}
        if b["output"] is not None:
            meta["output"] = b["output"]
        op = {"name": name, "metadata": meta}
        if b["_state"] == self.STEPS[2]:
            op["done"] = True
        return op

    def _finish(self, name: str) -> None:
        b = self.batches[name]
        out = []
        for row in b["rows"]:
            key = row["metadata"].get("key", "")
            if key in self.fail:
                out.append({"metadata": row["metadata"], "error": {"code": 13, "message": "Internal error"}})
                continue
            out.append({"metadata": row["metadata"], "response": self._response(self.answer(key, row["request"]))})
        b["output"] = {"inlinedResponses": {"inlinedResponses": out}}


def gemini_prompt_text(request: dict[str, Any]) -> str:
    """The text parts of a Gemini request's contents, joined."""
    return "\n".join(p["text"] for c in request.get("contents", []) for p in c.get("parts", []) if "text" in p)
