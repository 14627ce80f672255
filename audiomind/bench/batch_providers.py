"""The providers' batch APIs behind `bench run --batch` (audiomind.bench.batch drives them).

- OpenAI: a JSONL of `{custom_id, method: POST, url: /v1/chat/completions, body}` uploaded with
  `files.create(purpose="batch")`, then `batches.create(endpoint="/v1/chat/completions", completion_window="24h")`;
  `batches.retrieve` until completed / failed / expired / cancelled; the output file (and the error file)
  read line by line.
- Gemini (google-genai, Developer API): `client.batches.create(model=..., src=[InlinedRequest...])`, then
  `client.batches.get(name=...)` until the job has ended; the replies are `dest.inlined_responses`, in the
  order of the requests (each carries its request's `metadata.key`).

Each provider builds an item's request with its front end's own request building (OpenAIFrontEnd.
build_messages, GeminiFrontEnd.build_contents), talks to the front end's own endpoint with its key, and turns
each reply line into a BatchReply (text and usage, or why the line failed). Polls and listings go through
the front end's retry policy (transient errors retried); a create is sent once (a lost reply is found again by
the job's tag, never created twice).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from audiomind.backends.base import AnswerRequest, BackendError, FrontEnd
from audiomind.backends.frontends.audio_parts import plan_segments, sent_audio
from audiomind.backends.frontends.batch_replay import BatchReply, BatchRequest, Confidence, request_key
from audiomind.backends.frontends.choice_confidence import logprob_confidence, stated_confidence
from audiomind.backends.jsonparse import message_text
from audiomind.backends.retry import call_with_retries
from audiomind.backends.usage import reply_facts
from audiomind.state import ModelMessage, SentAudio
from audiomind.trace import model_messages

T = TypeVar("T")

LIST_SCAN_LIMIT = 1000
"""How many of the account's most recent batches are searched for a job whose create reply was lost."""


class BatchJob(BaseModel):
    """One batch submitted for a run (batch.json keeps every one, in order)."""

    index: int
    tag: str = Field(description="unique name of the job (OpenAI metadata.audiomind_job, Gemini display_name): "
                     "how a job whose create reply was lost is found again")
    item_ids: list[str] = Field(description="the custom ids (item ids) of its lines, in order")
    input_file: str | None = Field(None, description="the input JSONL, relative to RUN_DIR (OpenAI)")
    input_file_id: str | None = None
    create_sent: bool = Field(False, description="a create was sent (its reply may have been lost)")
    batch_id: str | None = None
    state: str | None = None
    done: bool = False
    collected: bool = False
    created_at: str | None = None
    finished_at: str | None = None
    polls: int = 0
    detail: str = ""


class BatchProvider(Protocol):
    kind: str
    frontend: FrontEnd
    max_bytes: int
    max_lines: int
    needs_upload: bool

    def prepare(self, request: AnswerRequest) -> tuple[BatchRequest, Any]: ...

    def line(self, custom_id: str, payload: Any) -> str: ...

    def upload(self, path: Path) -> str: ...

    def create(self, job: BatchJob, payloads: dict[str, Any]) -> tuple[str, str]: ...

    def find(self, job: BatchJob) -> tuple[str, str] | None: ...

    def status(self, batch_id: str) -> tuple[str, bool, str]: ...

    def collect(self, job: BatchJob) -> list[BatchReply]: ...

    def confidence(self, reply: BatchReply, choices: list[str], answer: str) -> Confidence | None: ...


def _confidence(view: Any, text: str, choices: list[str], answer: str) -> Confidence | None:
    """As the live front ends take it: the chosen choice's probability from the reply's log-probabilities,
    else a confidence the reply states."""
    conf = logprob_confidence(view, choices, answer) if view is not None else None
    if conf is not None:
        return conf[0], conf[1], "logprobs"
    stated = stated_confidence(text)
    return (stated[0], stated[1], "self_reported") if stated is not None else None


def _sent(frontend: Any, request: AnswerRequest) -> list[SentAudio]:
    segments, _ = plan_segments(request.originals, frontend.window_s)
    return [sent_audio(s, "batch") for s in segments]


def _named_audio(messages: list[ModelMessage], sent: list[SentAudio]) -> list[ModelMessage]:
    """The messages with each `[input_audio]` part named as the live front end's record names it (artifact,
    span, hash), where there is one part per segment sent."""
    if sum(m.content.count("[input_audio]") for m in messages) != len(sent):
        return messages  # segments joined into fewer parts: left as "[input_audio]"
    names = iter(f"<input_audio: {a.artifact_id} {a.start_s:.1f}-{(a.end_s or 0.0):.1f} s sha256:{a.sha256[:12]}>"
                 for a in sent)
    return [m.model_copy(update={"content": re.sub(r"\[input_audio\]", lambda _: next(names), m.content)})
            for m in messages]


class _Remote:
    """What both providers share: the front end, its client, its retry policy for polls and listings."""

    frontend: Any

    def _control(self, fn: Callable[[], T], purpose: str) -> T:
        fe = self.frontend
        policy = replace(fe.policy, cache=None)  # a poll is never answered from the model-call cache
        result, _ = call_with_retries(fn, role="frontend", purpose=f"batch {purpose}", backend=fe.name,
                                      policy=policy, endpoint=fe.base_url, secrets=[getattr(fe, "_key", None)],
                                      timeout_s=fe.timeout_s)
        return result

    def _once(self, fn: Callable[[], T]) -> T:
        """`fn()` sent once (a create is never retried: a lost reply is looked for by its tag instead), ended
        at the front end's timeout however its server answers: a server that never answers or drips its reply
        a byte a second raises CallTimeout there (the socket is abandoned, as every model request's is)."""
        from audiomind.backends.deadline import call_with_deadline

        return call_with_deadline(fn, self.frontend.timeout_s)


def _missing(job: BatchJob, got: dict[str, BatchReply], why: str) -> list[BatchReply]:
    """Every line of the job: its reply, or a failed reply saying why there is none."""
    return [got.get(cid) or BatchReply(custom_id=cid, batch_id=job.batch_id or "", ok=False, error=why)
            for cid in job.item_ids]


# ---------------------------------------------------------------- OpenAI

OPENAI_ENDPOINT = "/v1/chat/completions"
OPENAI_DONE = frozenset({"completed", "failed", "expired", "cancelled"})


class OpenAIBatch(_Remote):
    kind = "openai"
    max_bytes = 190 * 1024 * 1024  # the Batch API takes input files of up to 200 MB
    max_lines = 50_000
    needs_upload = True

    def __init__(self, frontend: Any):
        self.frontend = frontend
        self.client = frontend._client  # the front end's own endpoint, key and timeouts

    def prepare(self, request: AnswerRequest) -> tuple[BatchRequest, Any]:
        fe = self.frontend
        # the body chat.completions.create sends for this answer (log-probabilities asked among choices)
        body, windows, decoding = fe.request_body(request.prompt, request.originals, logprobs=bool(request.choices))
        sent = _sent(fe, request)
        req = BatchRequest(custom_id="", key=request_key(request.prompt, request.originals),
                           input=_named_audio(model_messages(body["messages"]), sent), input_audio=sent,
                           windows=windows, decoding=decoding)
        return req, body

    def confidence(self, reply: BatchReply, choices: list[str], answer: str) -> Confidence | None:
        from openai.types.chat import ChatCompletion

        view = ChatCompletion.construct(**reply.body) if choices and isinstance(reply.body, dict) else None
        return _confidence(view, reply.text, choices, answer)

    def line(self, custom_id: str, payload: Any) -> str:
        return json.dumps({"custom_id": custom_id, "method": "POST", "url": OPENAI_ENDPOINT, "body": payload},
                          ensure_ascii=False, separators=(",", ":"))

    def upload(self, path: Path) -> str:
        from audiomind.fsutil import read_input_bytes

        data = read_input_bytes(path)  # the job file this run wrote; still a regular file under the input cap
        f = self._control(lambda: self.client.files.create(file=(path.name, data, "application/jsonl"),
                                                           purpose="batch"), "upload")
        return str(f.id)

    def create(self, job: BatchJob, payloads: dict[str, Any]) -> tuple[str, str]:
        b = self._once(lambda: self.client.batches.create(
            input_file_id=job.input_file_id or "", endpoint=OPENAI_ENDPOINT, completion_window="24h",
            metadata={"audiomind_job": job.tag}))
        return str(b.id), str(b.status)

    def find(self, job: BatchJob) -> tuple[str, str] | None:
        def scan() -> tuple[str, str] | None:
            for n, b in enumerate(self.client.batches.list(limit=100)):
                if n >= LIST_SCAN_LIMIT:
                    break
                if (b.metadata or {}).get("audiomind_job") == job.tag or (
                        job.input_file_id and b.input_file_id == job.input_file_id):
                    return str(b.id), str(b.status)
            return None

        return self._control(scan, "list")

    def status(self, batch_id: str) -> tuple[str, bool, str]:
        b = self._control(lambda: self.client.batches.retrieve(batch_id), "poll")
        counts = b.request_counts
        detail = f"{counts.completed}/{counts.total} done, {counts.failed} failed" if counts else ""
        return str(b.status), b.status in OPENAI_DONE, detail

    def _lines(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = self._control(lambda: self.client.files.content(file_id), "download")
        rows = []
        for raw in content.text.splitlines():
            if raw.strip():
                row = json.loads(raw)
                if isinstance(row, dict):
                    rows.append(row)
        return rows

    def collect(self, job: BatchJob) -> list[BatchReply]:
        b = self._control(lambda: self.client.batches.retrieve(job.batch_id or ""), "poll")
        got: dict[str, BatchReply] = {}
        for row in self._lines(b.output_file_id) + self._lines(b.error_file_id):
            reply = openai_reply(row, str(b.id))
            if reply.custom_id in job.item_ids and not (reply.custom_id in got and got[reply.custom_id].ok):
                got[reply.custom_id] = reply
        why = f"no reply line in the batch (batch {b.status})"
        if b.errors and b.errors.data:
            why += ": " + "; ".join(str(e.message) for e in b.errors.data)[:500]
        return _missing(job, got, why)


def openai_reply(row: dict[str, Any], batch_id: str) -> BatchReply:
    """One line of a batch's output or error file as a BatchReply."""
    from openai.types.chat import ChatCompletion

    cid, line_id = str(row.get("custom_id") or ""), row.get("id")
    resp = row.get("response") if isinstance(row.get("response"), dict) else {}
    body = resp.get("body") if resp else None
    status = resp.get("status_code") if resp else None
    error = row.get("error")
    if error or status != 200 or not isinstance(body, dict):
        detail = error if isinstance(error, dict) else (body or {}).get("error") if isinstance(body, dict) else None
        msg = f"{detail.get('code') or ''}: {detail.get('message') or ''}".strip(": ") if isinstance(detail, dict) \
            else str(error or "")
        return BatchReply(custom_id=cid, batch_id=batch_id, ok=False, line_id=line_id, body=row,
                          error=(f"HTTP {status}: " if status else "") + (msg or "the line failed"))
    try:
        completion = ChatCompletion.model_validate(body)
    except ValueError as exc:
        return BatchReply(custom_id=cid, batch_id=batch_id, ok=False, line_id=line_id, body=row,
                          error=f"not a chat completion: {str(exc)[:300]}")
    if not completion.choices:
        return BatchReply(custom_id=cid, batch_id=batch_id, ok=False, line_id=line_id, body=body,
                          error="the reply has no choices")
    return BatchReply(custom_id=cid, batch_id=batch_id, ok=True, line_id=line_id, body=body,
                      text=message_text(completion.choices[0].message.content), facts=reply_facts(completion))


# ---------------------------------------------------------------- Gemini

GEMINI_DONE = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED",
                         "JOB_STATE_PARTIALLY_SUCCEEDED"})


class GeminiBatch(_Remote):
    kind = "gemini"
    max_bytes = 18 * 1024 * 1024  # inlined requests travel in one create request (Gemini caps it at 20 MB)
    max_lines = 10_000
    needs_upload = False

    def __init__(self, frontend: Any):
        from google.genai import types

        self.frontend = frontend
        self.types = types
        self.client = frontend._client  # the front end's own endpoint, key and timeouts

    def prepare(self, request: AnswerRequest) -> tuple[BatchRequest, Any]:
        fe = self.frontend
        contents, windows, _files, _ = fe.build_contents(request.prompt, request.originals)
        # the config generate_content sends for this answer (log-probabilities asked among choices)
        logprobs = fe.top_logprobs if request.choices and fe.logprobs else None
        cfg, decoding = fe.request_config(request.prompt, logprobs=logprobs)
        system = cfg.system_instruction if isinstance(cfg.system_instruction, str) else None
        segments, _ = plan_segments(request.originals, fe.window_s)
        size = len((system or "").encode()) + 1024
        texts: list[str] = []
        sent: list[SentAudio] = []
        for part in [p for content in contents for p in content.parts or []]:
            if part.text is not None:
                texts.append(part.text)
                size += len(part.text.encode())
                continue
            if part.inline_data is not None:  # base64 in the create request
                size += len(part.inline_data.data or b"") * 4 // 3 + 64
            a = sent_audio(segments[len(sent)], "batch" if part.inline_data is not None else "file")
            sent.append(a)
            texts.append(f"[audio: artifact {a.artifact_id} {a.start_s:.1f}-{(a.end_s or 0.0):.1f} s, {a.transport}]")
        messages = [*([ModelMessage(role="system", content=system)] if system else []),
                    ModelMessage(role="user", content="\n".join(texts))]
        req = BatchRequest(custom_id="", key=request_key(request.prompt, request.originals), input=messages,
                           input_audio=sent, windows=windows, decoding=decoding, size_bytes=size)
        return req, (contents, cfg)

    def confidence(self, reply: BatchReply, choices: list[str], answer: str) -> Confidence | None:
        from audiomind.backends.frontends.gemini import logprob_view

        view = None
        if choices and isinstance(reply.body, dict):
            view = logprob_view(self.types.GenerateContentResponse.model_validate(reply.body))
        return _confidence(view, reply.text, choices, answer)

    def line(self, custom_id: str, payload: Any) -> str:
        return ""  # inlined requests go in the create request itself: no input file

    def upload(self, path: Path) -> str:
        raise NotImplementedError("Gemini inlined batches upload no input file")

    def create(self, job: BatchJob, payloads: dict[str, Any]) -> tuple[str, str]:
        types = self.types
        src = [types.InlinedRequest(contents=payloads[cid][0], config=payloads[cid][1], metadata={"key": cid})
               for cid in job.item_ids]
        bj = self._once(lambda: self.client.batches.create(
            model=self.frontend.model, src=src, config=types.CreateBatchJobConfig(display_name=job.tag)))
        return str(bj.name), _state(bj)

    def find(self, job: BatchJob) -> tuple[str, str] | None:
        def scan() -> tuple[str, str] | None:
            pager = self.client.batches.list(config=self.types.ListBatchJobsConfig(page_size=100))
            for n, bj in enumerate(pager):
                if n >= LIST_SCAN_LIMIT:
                    break
                if bj.display_name == job.tag:
                    return str(bj.name), _state(bj)
            return None

        return self._control(scan, "list")

    def status(self, batch_id: str) -> tuple[str, bool, str]:
        bj = self._control(lambda: self.client.batches.get(name=batch_id), "poll")
        state = _state(bj)
        return state, state in GEMINI_DONE, (bj.error.message or "") if bj.error else ""

    def collect(self, job: BatchJob) -> list[BatchReply]:
        bj = self._control(lambda: self.client.batches.get(name=job.batch_id or ""), "poll")
        name = str(bj.name)
        got: dict[str, BatchReply] = {}
        if bj.dest is not None and bj.dest.file_name and not bj.dest.inlined_responses:
            raise BackendError(f"the Gemini batch {name} wrote its replies to the file {bj.dest.file_name}; only "
                               "inlined replies are read")
        responses = (bj.dest.inlined_responses if bj.dest is not None else None) or []
        for i, r in enumerate(responses):
            cid = (r.metadata or {}).get("key") or (job.item_ids[i] if i < len(job.item_ids) else "")
            if r.error is not None or r.response is None:
                msg = (r.error.message if r.error is not None else None) or "no response"
                code = r.error.code if r.error is not None else None
                got[cid] = BatchReply(custom_id=cid, batch_id=name, ok=False,
                                      error=f"{code}: {msg}" if code else msg,
                                      body=r.model_dump(mode="json", exclude_none=True))
                continue
            got[cid] = BatchReply(custom_id=cid, batch_id=name, ok=True, text=_gemini_text(r.response),
                                  facts=reply_facts(r.response),
                                  body=r.response.model_dump(mode="json", exclude_none=True))
        why = f"no reply in the batch (job {_state(bj)})"
        if bj.error is not None and bj.error.message:
            why += f": {bj.error.message}"
        return _missing(job, {k: v for k, v in got.items() if k in job.item_ids}, why)


def _gemini_text(resp: Any) -> str:
    """The reply's text parts, thought summaries left out (as the live front end reads a reply)."""
    cands = resp.candidates or []
    parts = (cands[0].content.parts if cands and cands[0].content else None) or []
    return "".join(p.text for p in parts if isinstance(p.text, str) and not p.thought)


def _state(bj: Any) -> str:
    s = bj.state
    return str(getattr(s, "value", s) or "JOB_STATE_UNSPECIFIED")


def make_provider(frontend: FrontEnd) -> BatchProvider:
    """The batch API of a front end (an OpenAI-compatible or a Gemini one)."""
    kind = getattr(frontend, "kind", "")
    if kind == "openai":
        return OpenAIBatch(frontend)
    if kind == "gemini":
        return GeminiBatch(frontend)
    raise BackendError(f"{frontend.name}: no batch API (batch runs need an openai: or gemini: front end)")
