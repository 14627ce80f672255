"""The two front ends of a batch run (`audiomind bench run --mode direct --batch`, audiomind.bench.batch).

- `CaptureFrontEnd` stands where the direct-mode front end answers: it builds the item's answer request with
  the real front end's own request building (the prompt the graph rendered, the audio as that front end
  sends it) and hands it back to the batch builder (`Captured`) instead of sending it.
- `BatchReplayFrontEnd` answers each item from the batch's reply to that same request, so the graph runs as
  usual (format check, trace, scoring) and the trace's ModelCall records the batch: `batch=True` (billed at
  the batch share of the price), the usage the batch line reported, the batch and line ids. A request whose
  batch line failed is a BackendError (the item is an error, not a wrong answer).

A request is matched to its reply by `request_key`: the sha256 of the prompt and of the clips heard (id and
content hash), so a reply is only ever used for the very request it answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.backends.base import (
    AnswerRequest,
    AnswerResult,
    BackendError,
    FrontEnd,
    ListenRequest,
    ListenResult,
)
from audiomind.backends.frontends.replies import parse_answer_reply
from audiomind.backends.usage import ReplyFacts
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelMessage, ModelSpec, SentAudio


def request_key(prompt: str, originals: list[Artifact]) -> str:
    """sha256 of what an answer request asks: its prompt and the clips it hears (id and content hash)."""
    h = hashlib.sha256(prompt.encode("utf-8"))
    for a in originals:
        h.update(f"\0{a.id}:{a.sha256}".encode())
    return h.hexdigest()


class BatchRequest(BaseModel):
    """One item's answer request as a batch line carries it, as the trace records it (the audio by hash)."""

    custom_id: str = Field(description="the line's id in the batch (the item id)")
    key: str = Field(description="request_key of the request")
    input: list[ModelMessage] = Field(default_factory=list, description="the messages sent, audio named")
    input_audio: list[SentAudio] = Field(default_factory=list)
    windows: list[AudioWindow] = Field(default_factory=list)
    decoding: dict[str, Any] = Field(default_factory=dict)
    size_bytes: int = Field(0, description="the line's size in the batch input")


class BatchReply(BaseModel):
    """The batch's answer to one line: its text and usage, or why the line failed."""

    custom_id: str
    batch_id: str
    ok: bool
    text: str = ""
    facts: ReplyFacts = Field(default_factory=ReplyFacts)
    error: str | None = None
    line_id: str | None = Field(None, description="the provider's id of the line's request, where it gives one")
    body: Any = Field(None, description="the provider's reply to the line, as JSON")


class Captured(Exception):
    """The answer request the capture front end built, instead of a reply."""

    def __init__(self, request: BatchRequest, payload: Any):
        super().__init__("batch request captured")
        self.request = request
        self.payload = payload


Confidence = tuple[float, str, Literal["logprobs", "self_reported"]]
"""An answer's confidence, why, and where it comes from (as AnswerResult records them)."""
ConfidenceOf = Callable[[BatchReply, list[str], str], "Confidence | None"]
"""The confidence of an answer from its reply, the choices and the answer text (the provider's reading)."""

Prepare = Callable[[AnswerRequest], tuple[BatchRequest, Any]]
"""Builds a batch line from an answer request: (what the trace records, the provider's payload)."""


class CaptureFrontEnd:
    """The real front end's name and spec; `answer` builds the request (`prepare`) and raises `Captured`."""

    def __init__(self, frontend: FrontEnd, prepare: Prepare):
        self.frontend = frontend
        self.name = frontend.name
        self._prepare = prepare

    def spec(self) -> ModelSpec:
        return self.frontend.spec()

    def listen(self, request: ListenRequest) -> ListenResult:
        raise BackendError("a batch run answers in direct mode: its front end never listens on its own")

    def answer(self, request: AnswerRequest) -> AnswerResult:
        req, payload = self._prepare(request)
        raise Captured(req, payload)


class BatchReplayFrontEnd:
    """Answers each request from its batch reply (see the module doc)."""

    def __init__(self, spec: ModelSpec, requests: list[BatchRequest], replies: dict[str, BatchReply],
                 confidence: ConfidenceOf | None = None):
        self._spec = spec
        self._confidence = confidence
        self.name = spec.spec
        self.replies = replies
        # a request key -> its lines, the latest last (an item sent again after a failed line)
        self._by_key: dict[str, list[BatchRequest]] = {}
        for r in requests:
            self._by_key.setdefault(r.key, []).append(r)

    def spec(self) -> ModelSpec:
        batches = sorted({r.batch_id for r in self.replies.values()})
        return self._spec.model_copy(update={"decoding": {**self._spec.decoding, "transport": "batch",
                                                          "batch_ids": batches}})

    def listen(self, request: ListenRequest) -> ListenResult:
        raise BackendError("a batch run answers in direct mode: its front end never listens on its own")

    def _line(self, request: AnswerRequest) -> tuple[BatchRequest, BatchReply]:
        lines = self._by_key.get(request_key(request.prompt, request.originals), [])
        answered = [(r, self.replies[r.custom_id]) for r in lines if r.custom_id in self.replies]
        if not answered:
            raise BackendError("the batch holds no reply to this item's answer request (it was not sent in any "
                               "batch, or its prompt or audio changed since)")
        ok = [p for p in answered if p[1].ok]
        return (ok or answered)[-1]

    def answer(self, request: AnswerRequest) -> AnswerResult:
        req, reply = self._line(request)
        call = ModelCall(
            role="frontend", purpose="answer", backend=self.name, batch=True, latency_s=0.0,
            input=[m.model_copy() for m in req.input], input_audio=[a.model_copy() for a in req.input_audio],
            decoding=dict(req.decoding), **reply.facts.model_dump(),
        )
        where = {"transport": "batch", "batch_id": reply.batch_id, "custom_id": reply.custom_id,
                 "line_id": reply.line_id}
        if not reply.ok:
            call.errors = [f"batch line failed: {reply.error or 'no reply'}"]
            call.output = where
            err = BackendError(f"{self.name}: the batch {reply.batch_id} did not answer this item: "
                               f"{reply.error or 'no reply'}")
            err.model_call = call  # type: ignore[attr-defined]  # the failed call goes on the record
            raise err
        fields = parse_answer_reply(reply.text)
        call.output = {"raw": reply.text, "parsed": fields, **where}
        windows = [w.model_copy() for w in req.windows]
        conf = self._confidence(reply, list(request.choices), fields["text"]) if self._confidence else None
        if conf is None:
            return AnswerResult(**fields, windows=windows, model_call=call)
        call.output["confidence"] = {"value": conf[0], "source": conf[2], "reason": conf[1]}
        return AnswerResult(**fields, windows=windows, model_call=call, confidence=conf[0],
                            confidence_reason=conf[1], confidence_source=conf[2])
