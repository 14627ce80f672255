"""Audio front end over any OpenAI-compatible chat endpoint (vLLM serving Qwen2.5-Omni / Qwen2-Audio /
Qwen3-Omni, DashScope's Qwen-Omni, llama.cpp server, OpenAI's gpt-audio models).

Audio travels as `input_audio` content parts (audio_parts: standard base64 of 16 kHz mono 16-bit WAV,
in labelled windows of at most `window_s`), and the windows are recorded in the result so the trace
says exactly what the model heard. What servers differ in is a setting each, all recorded in the ModelSpec
and in each call's `ModelCall.decoding`:

- `max_audio_parts` (None: no limit): the audio parts a request may carry, to match vLLM's
  `--limit-mm-per-prompt` (one audio by default; more parts are answered with HTTP 400). A request over
  the limit is sent as `audio_parts="windows"`: one call per group of at most that many windows, the
  replies merged and labelled (listening only: an answer is one call), or `audio_parts="concat"`: each
  request's segments joined into at most that many parts, the text saying which span of a part is which
  span of which clip. An answer over the limit is always joined. Which was done is in `decoding`.
- `stream`: stream-only servers (DashScope's Qwen-Omni answers a request without `stream=true` with 400):
  chunks are accumulated into one ChatCompletion (usage from the last chunk, `include_usage`).
- decoding: `temperature` (None: not sent; OpenAI's reasoning models refuse it, so it is not sent to an
  o-series or gpt-5 model unless given), `max_tokens` (sent as `max_completion_tokens` to api.openai.com
  and to reasoning models, as `max_tokens` elsewhere; `max_tokens_param` names it), `seed`,
  `reasoning_effort`.
- `logprobs` (default True except for reasoning models): an answer with choices asks for the top
  `top_logprobs` alternatives of each token and its confidence is the chosen choice's normalised
  probability (audiomind.backends.frontends.choice_confidence); a server that refuses log-probabilities
  with HTTP 400 is asked again once without, and never again by this front end. Without them, a confidence
  the reply states is kept as self-reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, Unpack

from audiomind.backends.base import AnswerRequest, AnswerResult, BackendError, ListenRequest, ListenResult
from audiomind.backends.cache import Codec
from audiomind.backends.frontends.audio_parts import (
    CLIP_GAP_S,
    Segment,
    concat_label,
    concat_wav,
    input_audio_part,
    pack,
    part_seconds,
    plan_segments,
    sent_audio,
)
from audiomind.backends.frontends.choice_confidence import logprob_confidence, stated_confidence
from audiomind.backends.frontends.remote import CallSettings, RemoteFrontEnd
from audiomind.backends.frontends.replies import listen_prompt, parse_answer_reply, parse_listen_reply
from audiomind.backends.jsonparse import message_text
from audiomind.backends.openai_compat import openai_endpoint
from audiomind.backends.retry import merge_calls
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import Artifact, AudioWindow, ModelCall, ModelMessage, ModelSpec

AudioPartsMode = Literal["windows", "concat"]
# OpenAI's audio-in chat models, as the installed openai SDK lists them (Dec 2026); the gpt-4o audio previews
# it lists as shut down (2026-05-07) are refused here with the names to use instead.
AUDIO_MODELS = ("gpt-audio", "gpt-audio-mini")
SHUT_DOWN_AUDIO_MODELS = ("gpt-4o-audio-preview", "gpt-4o-mini-audio-preview")
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)(?!.*-chat)", re.IGNORECASE)

# One request's user content before encoding: text, or audio as the segments that make one part.
Item = str | list[Segment]


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series and gpt-5 family (not their -chat variants): no temperature, no log-probabilities."""
    return bool(_REASONING_MODEL.match(model.rsplit("/", 1)[-1]))


def _completion_codec() -> Codec:
    from openai.types.chat import ChatCompletion

    # construct: as leniently as the SDK builds its own replies (a vLLM finish_reason such as "abort" stays)
    return Codec(encode=lambda r: r.model_dump(mode="json"), decode=lambda d: ChatCompletion.construct(**d))


def _rejects_logprobs(err: BaseException) -> bool:
    """Whether a failed request was refused (HTTP 400) because it asked for log-probabilities."""
    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if getattr(cur, "status_code", None) == 400:
            return "logprob" in (str(cur) + str(getattr(cur, "body", ""))).lower()
        cur = cur.__cause__ or cur.__context__
    return False


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
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None,
        seed: int | None = None,
        reasoning_effort: str | None = None,
        max_audio_parts: int | None = None,
        audio_parts: AudioPartsMode = "windows",
        stream: bool = False,
        logprobs: bool | None = None,
        top_logprobs: int = 20,
        extra_body: dict[str, Any] | None = None,
        **settings: Unpack[CallSettings],
    ):
        if audio_parts not in ("windows", "concat"):
            raise ValueError(f"audio_parts must be 'windows' or 'concat', not {audio_parts!r}")
        if max_audio_parts is not None and max_audio_parts < 1:
            raise ValueError(f"max_audio_parts must be at least 1 (or None: no limit), not {max_audio_parts}")
        endpoint = openai_endpoint(base_url, api_key)
        self.base_url = endpoint.base_url
        self.openai_proper = not endpoint.custom
        if self.openai_proper and model.startswith(SHUT_DOWN_AUDIO_MODELS):
            raise BackendError(f"{model} is shut down at api.openai.com (since 2026-05-07): use "
                               + " or ".join(f"openai:{m}" for m in AUDIO_MODELS))
        reasoning = is_reasoning_model(model)
        if reasoning and "temperature" not in settings:
            settings["temperature"] = None  # o-series / gpt-5 answer 400 to any temperature
        self._settings(model, name or (f"openai:{model}" + (f"@{self.base_url}" if endpoint.custom else "")),
                       endpoint.api_key, window_s, **settings)
        self.max_tokens = max_tokens
        # OpenAI names the limit max_completion_tokens (its reasoning models refuse max_tokens); other servers
        # (vLLM, llama.cpp, DashScope) read max_tokens
        self.max_tokens_param = max_tokens_param or (
            "max_completion_tokens" if self.openai_proper or reasoning else "max_tokens")
        self.seed = seed
        self.reasoning_effort = reasoning_effort
        self.max_audio_parts = max_audio_parts
        self.audio_parts: AudioPartsMode = audio_parts
        self.stream = stream
        self.logprobs = (not reasoning) if logprobs is None else bool(logprobs)
        self.top_logprobs = top_logprobs
        self.extra_body = extra_body
        self.logprobs_refused = False  # set when the server answered a log-probability request with 400
        self._client = endpoint.client(self.timeout_s)

    # -- settings
    def decoding(self, *, logprobs: bool = False) -> dict[str, Any]:
        """The decoding settings a request sends (temperature None: not sent), named as the API names them."""
        out: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens:
            out[self.max_tokens_param] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed
        if self.reasoning_effort:
            out["reasoning_effort"] = self.reasoning_effort
        if logprobs:
            out.update(logprobs=True, top_logprobs=self.top_logprobs)
        return out

    def spec(self) -> ModelSpec:
        extra: dict[str, Any] = {"stream": self.stream, "logprobs": self.logprobs and not self.logprobs_refused,
                                 "max_audio_parts": self.max_audio_parts, "audio_parts": self.audio_parts}
        if self.logprobs:
            extra["top_logprobs"] = self.top_logprobs
        if self.seed is not None:
            extra["seed"] = self.seed
        if self.reasoning_effort:
            extra["reasoning_effort"] = self.reasoning_effort
        return self._model_spec((self.max_tokens_param, self.max_tokens), **extra)

    # -- request building
    def plan_requests(self, prompt: str, artifacts: list[Artifact], *, one_call: bool = False
                      ) -> tuple[list[list[Item]], list[AudioWindow], str]:
        """The user content of each request (text and audio parts, not yet encoded), the windows sent, and
        how the audio went: "parts" (every segment its own part, one request), "windows" (one request per
        group of at most `max_audio_parts` segments) or "concat" (segments joined into at most that many
        parts). `one_call` (an answer) never splits."""
        segments, windows = plan_segments(artifacts, self.window_s)
        limit = self.max_audio_parts
        if limit is None or len(segments) <= limit:
            groups = [[seg] for seg in segments]
            return [self._content(prompt, groups)], windows, "parts"
        if self.audio_parts == "windows" and not one_call:
            calls = [segments[i:i + limit] for i in range(0, len(segments), limit)]
            return [self._content(prompt, [[seg] for seg in call]) for call in calls], windows, "windows"
        return [self._content(prompt, pack(segments, limit))], windows, "concat"

    @staticmethod
    def _content(prompt: str, groups: list[list[Segment]]) -> list[Item]:
        items: list[Item] = [prompt]
        for group in groups:
            items += [group[0].label if len(group) == 1 else concat_label(group), group]
        return items

    def _messages(self, prompt: str, items: list[Item], encode: Callable[[list[Segment]], Any]) -> list[dict]:
        """Chat messages with each audio part as `encode(segments)`; a prompt that quotes evidence goes
        with the evidence rule as the system message."""
        content = [{"type": "text", "text": it} if isinstance(it, str) else encode(it) for it in items]
        system = [{"role": "system", "content": evidence_rule()}] if has_evidence(prompt) else []
        return [*system, {"role": "user", "content": content}]

    def build_messages(self, prompt: str, artifacts: list[Artifact]) -> tuple[list[dict], list[AudioWindow]]:
        """The messages of one request carrying all the audio (the first request of a split listen)."""
        plans, windows, _how = self.plan_requests(prompt, artifacts, one_call=True)
        return self._messages(prompt, plans[0], _encode), windows

    def request_body(self, prompt: str, artifacts: list[Artifact], *, logprobs: bool = False
                     ) -> tuple[dict[str, Any], list[AudioWindow], dict[str, Any]]:
        """The JSON body `chat.completions.create` would send for one request carrying all the audio (as an
        answer goes: joined when over `max_audio_parts`), the windows sent, and the decoding it records; e.g.
        a Batch API line's body, decoded as this front end decodes."""
        plans, windows, _how = self.plan_requests(prompt, artifacts, one_call=True)
        decoding = self.decoding(logprobs=logprobs and self.logprobs and not self.logprobs_refused)
        body: dict[str, Any] = {"model": self.model, "messages": self._messages(prompt, plans[0], _encode),
                                **{k: v for k, v in decoding.items() if v is not None}, **(self.extra_body or {})}
        return body, windows, decoding

    # -- sending
    def _complete(self, prompt: str, items: list[Item], purpose: str, *, logprobs: bool = False
                  ) -> tuple[str, ModelCall, Any]:
        """One request (its audio encoded only when it is really sent) with its record: what was sent
        (`input`, `input_audio`, `decoding`); a refusal of log-probabilities is asked again once without."""
        logprobs = logprobs and self.logprobs and not self.logprobs_refused
        first: ModelCall | None = None
        while True:
            try:
                resp, call = self._send(prompt, items, purpose, logprobs)
                break
            except BackendError as err:
                if not (logprobs and _rejects_logprobs(err)):
                    self._record(getattr(err, "model_call", None), prompt, items, logprobs)
                    raise
                self.logprobs_refused, logprobs = True, False  # asked again once, without
                first = getattr(err, "model_call", None)
        if first is not None:
            call = merge_calls([first, call], extra_errors=[
                "the server refused log-probabilities (HTTP 400): asked again without, and not asked again"])
        self._record(call, prompt, items, logprobs)
        choices = getattr(resp, "choices", None) or []
        if not choices:
            empty = BackendError(f"{self.name} returned no choices for {purpose}")
            empty.model_call = call  # type: ignore[attr-defined]
            raise empty
        return message_text(choices[0].message.content), call, resp

    def _send(self, prompt: str, items: list[Item], purpose: str, logprobs: bool) -> tuple[Any, ModelCall]:
        decoding = self.decoding(logprobs=logprobs)
        kwargs: dict[str, Any] = {k: v for k, v in decoding.items() if v is not None}
        key: dict[str, Any] = {"model": self.model, "messages": self._messages(prompt, items, _key_of),
                               "decoding": decoding, "stream": self.stream}
        if self.extra_body:
            kwargs["extra_body"] = key["extra_body"] = self.extra_body
        encoded: list[list[dict]] = []

        def send() -> Any:
            if not encoded:  # a cache hit never decodes the audio
                encoded.append(self._messages(prompt, items, _encode))
            if self.stream:
                return self._streamed(model=self.model, messages=encoded[0], **kwargs)
            return self._client.chat.completions.create(model=self.model, messages=encoded[0], **kwargs)

        return self._retry(send, purpose, request=key, codec=_completion_codec())

    def _streamed(self, **kwargs: Any) -> Any:
        """One streamed request read to its end, as the ChatCompletion a non-streamed one returns."""
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletion

        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        n = 0
        with self._client.chat.completions.create(stream=True, stream_options={"include_usage": True},
                                                  **kwargs) as chunks:
            for chunk in chunks:
                state.handle_chunk(chunk)
                n += 1
        if not n:
            raise BackendError(f"{self.name}: the stream ended without a chunk")
        data = state.get_final_completion().model_dump(mode="json")
        data["object"] = "chat.completion"
        for choice in data.get("choices") or []:
            choice.get("message", {}).pop("parsed", None)
        return ChatCompletion.construct(**data)

    def _record(self, call: ModelCall | None, prompt: str, items: list[Item], logprobs: bool) -> None:
        if call is None:
            return
        call.input = [ModelMessage(role=m["role"], content=m["content"] if isinstance(m["content"], str) else
                                   "\n".join(p["text"] for p in m["content"]))
                      for m in self._messages(prompt, items, _placeholder)]
        call.input_audio = [sent_audio(seg) for it in items if not isinstance(it, str) for seg in it]
        call.decoding = {**self.decoding(logprobs=logprobs), "stream": self.stream}

    # -- FrontEnd protocol
    def listen(self, request: ListenRequest) -> ListenResult:
        if not request.artifacts:
            raise BackendError("listen() needs at least one artifact")
        prompt = listen_prompt(request)
        plans, windows, how = self.plan_requests(prompt, request.artifacts)
        purpose = request.kind or "listen"
        done = [self._complete(prompt, items, purpose) for items in plans]
        if len(done) == 1:
            text, call, _resp = done[0]
            fields = parse_listen_reply(text)
        else:
            fields, call = self._merged([(items, text, c) for items, (text, c, _r) in zip(plans, done)])
            text = fields["text"]
        self._note(call, how, plans)
        call.output = {"raw": text, "parsed": {k: v for k, v in fields.items() if k != "text"}}
        return ListenResult(**fields, windows=windows, model_call=call)

    def _merged(self, done: list[tuple[list[Item], str, ModelCall]]) -> tuple[dict[str, Any], ModelCall]:
        """One listen result from one reply per group of windows, each part labelled with its windows."""
        labelled = [(" ".join(it for it in items[1:] if isinstance(it, str)), parse_listen_reply(text))
                    for items, text, _c in done]

        def joined(field: str) -> str:
            return "\n".join(f"{label} {f[field]}" for label, f in labelled if f.get(field))

        answers = {f["provisional_answer"] for _l, f in labelled if f.get("provisional_answer")}
        needs = list(dict.fromkeys(n for _l, f in labelled for n in f["open_needs"]))
        note = f"heard in {len(done)} separate requests (the server's limit of audio parts): no request heard it all"
        fields = {
            "text": "\n\n".join(f"{label}\n{text}" for (label, _f), (_i, text, _c) in zip(labelled, done)),
            "description": joined("description"), "focus": joined("focus"),
            "provisional_answer": answers.pop() if len(answers) == 1 else (joined("provisional_answer") or None),
            "open_needs": needs, "uncertainty": "\n".join(x for x in (joined("uncertainty"), note) if x),
        }
        calls = [c for _i, _t, c in done]
        call = merge_calls(calls)
        call.input = [m for c in calls for m in c.input]
        call.input_audio = [a for c in calls for a in c.input_audio]
        return fields, call

    def _note(self, call: ModelCall, how: str, plans: list[list[Item]]) -> None:
        """Record how the audio went when the server's limit of audio parts decided it."""
        if how == "parts":
            return
        n = len(call.input_audio)
        call.decoding = {**call.decoding, "audio_parts": how, "max_audio_parts": self.max_audio_parts}
        longest = max((part_seconds(it) for items in plans for it in items if not isinstance(it, str)), default=0.0)
        call.context_notes.append(
            f"{n} audio segments exceed max_audio_parts={self.max_audio_parts}: " + (
                "sent in separate requests, one per group of windows, replies merged and labelled"
                if how == "windows" else "joined into audio parts, the text naming each span" + (
                    f"; a part of {longest:.1f} s is longer than the {self.window_s:g} s window, which a model "
                    "that truncates long audio may not hear to its end"
                    if self.window_s and longest > self.window_s + 1e-6 else "")))

    def answer(self, request: AnswerRequest) -> AnswerResult:
        plans, windows, how = self.plan_requests(request.prompt, request.originals, one_call=True)
        text, call, resp = self._complete(request.prompt, plans[0], "answer", logprobs=bool(request.choices))
        self._note(call, how, plans)
        fields = parse_answer_reply(text)
        conf = logprob_confidence(resp, request.choices, fields["text"]) if call.decoding.get("logprobs") else None
        source: Literal["logprobs", "self_reported"] | None = "logprobs" if conf else None
        if conf is None and (conf := stated_confidence(text)) is not None:
            source = "self_reported"
        call.output = {"raw": text, "parsed": fields}
        if conf is None:
            return AnswerResult(**fields, windows=windows, model_call=call)
        return AnswerResult(**fields, windows=windows, model_call=call, confidence=conf[0],
                            confidence_reason=conf[1], confidence_source=source)


def _encode(segments: list[Segment]) -> dict[str, Any]:
    """An `input_audio` part: the segment's WAV, or the segments joined into one WAV."""
    return input_audio_part(segments[0].wav() if len(segments) == 1 else concat_wav(segments))


def _key_of(segments: list[Segment]) -> dict[str, Any]:
    """An audio part as the model-call cache keys it: content hash and span of each segment, no bytes."""
    if len(segments) == 1:
        return segments[0].key()
    return {"concat": [seg.key() for seg in segments], "gap_s": CLIP_GAP_S}


def _placeholder(segments: list[Segment]) -> dict[str, Any]:
    """An audio part as the trace's `ModelCall.input` shows it: named, never inlined."""
    spans = ", ".join(f"{s.artifact.id} {s.start_s:.1f}-{s.end_s:.1f} s sha256:{s.artifact.sha256[:12]}"
                      for s in segments)
    return {"type": "text", "text": f"<input_audio: {spans}>"}

