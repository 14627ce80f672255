"""The text-LLM client under the planner and the judges: one LangChain chat model asked for JSON or text.

`LLMClient.complete_json` asks for a reply that validates against a pydantic schema, through the backend's
JSON-schema mode where it has one (OpenAI `response_format`, vLLM guided decoding, Gemini `response_schema`,
Ollama `format`, llama.cpp grammars) and otherwise from the plain reply; a malformed reply gets exactly one retry
that tells the model what was wrong, and the `JSONReply` says what came of it. A server that refuses the
structured form is asked again in the next weaker form (json_schema -> json_object -> plain) and the client
remembers it. Transport failures are retried by `call_with_retries`; when they persist a `BackendError` (with
`.model_call`) is raised. Every round and attempt lands in one `ModelCall`.

The client also knows the model's context window (from the chat model, or from a server's context-length
refusal: `context_limit`) and counts a message list's tokens, so that its users can fit their prompts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from audiomind.backends.base import BackendError
from audiomind.backends.cache import Codec
from audiomind.backends.jsonparse import JSONExtractError, extract_object, message_text
from audiomind.backends.policy import DEFAULT_POLICY, CallPolicy
from audiomind.backends.retry import call_with_retries, merge_calls, redact
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import ModelCall, ModelSpec
from audiomind.trace import model_messages

T = TypeVar("T", bound=BaseModel)


class JSONReply(NamedTuple):
    """What `LLMClient.complete_json` returns."""

    parsed: Any  # the validated schema instance, or None when both rounds were malformed
    raw: str  # the text of the last reply
    call: ModelCall  # every round and attempt
    problem: str | None  # what was wrong with the last reply (None when parsed)


def as_messages(messages: str | list[Any]) -> list[Any]:
    """A prompt string is one human message; a list is taken as LangChain messages."""
    if isinstance(messages, str):
        from langchain_core.messages import HumanMessage, SystemMessage

        if has_evidence(messages):  # quoted evidence travels with the rule that it never instructs
            return [SystemMessage(content=evidence_rule()), HumanMessage(content=messages)]
        return [HumanMessage(content=messages)]
    return list(messages)


# Sent after a malformed reply (kept here rather than in prompts/ because it is a protocol message,
# not a task prompt; its text is recorded in the ModelCall errors of every run that used it).
FIX_PROMPT = (
    "Your previous reply could not be used: {problem}\n"
    "Reply again with exactly one JSON object that follows the requested keys, and nothing else."
)

CHARS_PER_TOKEN = 4
"""Characters a token, for the model-independent estimate."""
PROMPT_OVERHEAD_TOKENS = 48
"""Chat-template tokens a message list adds beyond its texts (role markers, a default system prompt)."""
FIX_RETRY_TOKENS = 80
"""The format-retry message's own tokens (FIX_PROMPT and the problem it names)."""


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate (about 4 characters a token), for the evidence budget."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def wire_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to the backend's structured-output mode.

    References are inlined (not every grammar compiler follows `$ref`), every declared key is
    required (grammar-constrained decoders then always write a rationale) and defaults are dropped;
    tool `arguments` stay a free object, so the schema is used non-strictly. Validation of the reply
    is ours and more lenient than this schema.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(dict(defs[node["$ref"].split("/")[-1]]))
            out = {k: walk(v) for k, v in node.items() if k != "default"}
            if out.get("type") == "object" and isinstance(out.get("properties"), dict):
                out["required"] = list(out["properties"])
            return out
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    return walk(schema)


_GRAMMAR_UNSAFE = frozenset({"maxLength", "minLength", "maxItems", "minItems"})
GRAMMAR_MAX_TOKENS = 512
"""The reply cap in the grammar (json_object) mode when the model has none: it stands in for the length bounds
that grammar leaves out (a decision, a plan or a prompt fits well within it)."""


def _cut_reply(exc: BaseException) -> Any:
    """The partial reply of a completion cut at its token cap, as an AIMessage (with its token counts), when
    `exc` is the openai SDK's LengthFinishReasonError (raised instead of returning such a reply); else None.
    A cut reply is malformed JSON like any other: the format retry and the recorded fallback handle it."""
    completion = getattr(exc, "completion", None)
    if type(exc).__name__ != "LengthFinishReasonError" or completion is None:
        return None
    from langchain_core.messages import AIMessage

    choices = getattr(completion, "choices", None) or []
    text = (getattr(getattr(choices[0], "message", None), "content", None) or "") if choices else ""
    usage = getattr(completion, "usage", None)
    meta = None
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        meta = {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens or 0,
                "total_tokens": usage.total_tokens or 0}
    return AIMessage(content=text, usage_metadata=meta, response_metadata={"finish_reason": "length"})


def grammar_schema(schema: Any) -> Any:
    """`schema` without string-length and item-count bounds, for grammar compilers (llama.cpp) that expand
    each bound into that many nested rules; validation of the reply stays ours."""
    if isinstance(schema, dict):
        return {k: grammar_schema(v) for k, v in schema.items() if k not in _GRAMMAR_UNSAFE}
    if isinstance(schema, list):
        return [grammar_schema(x) for x in schema]
    return schema


# ---------------------------------------------------------------- fitting a prompt into a small context
#
# A small local model (SmolLM2-135M: 8,192 tokens) cannot take the whole planner prompt: the full tool inventory
# alone is ~6.5k tokens. Each role renders its prompt at increasing compaction levels (the inventory shorter,
# the evidence budget smaller) and sends the first one that fits the model's context with room for the reply
# (and a format retry); when none fits, the run fails with a BackendError that names the limit. Levels above 0


_CONTEXT_LIMIT = re.compile(r"maximum context length is (\d+)|exceeds? (?:the )?context window of (\d+)|"
                            r"context (?:window|length|size) (?:is |of )?(\d+)", re.IGNORECASE)
_PROMPT_TOKENS = re.compile(r"\((\d+) in the messages|requested tokens \((\d+)\)", re.IGNORECASE)


class ContextTooSmall(BackendError):
    """No rendering of a planner prompt fits the model's context window (with room for the reply)."""


def context_limit(exc: BaseException) -> tuple[int, int | None] | None:
    """(the model's context in tokens, the prompt's tokens as the server counted them, if it said) from a
    server's context-length refusal (OpenAI, vLLM, llama-cpp-python's server, llama.cpp in process), else None."""
    from audiomind.backends.retry import _chain, describe_error

    text = " ".join(describe_error(e) + " " + str(e) for e in _chain(exc))
    m = _CONTEXT_LIMIT.search(text)
    if not m:
        return None
    n = _PROMPT_TOKENS.search(text)
    prompt = int(next(g for g in n.groups() if g)) if n else None
    return int(next(g for g in m.groups() if g)), prompt


class LLMClient:
    """JSON and text completion over a LangChain BaseChatModel, with the model's context window."""

    def __init__(
        self,
        chat_model: Any,
        *,
        name: str,
        spec: ModelSpec | None = None,
        max_retries: int | None = None,
        policy: CallPolicy | None = None,
        base_delay_s: float | None = None,
        max_delay_s: float | None = None,
        endpoint: str | None = None,
        secrets: list[str | None] | None = None,
        structured: bool | None = None,
        timeout_s: float | None = None,
    ):
        self.model = chat_model
        self.timeout_s = timeout_s  # a whole request's cap (each attempt; the run's budget may cut it shorter)
        self.name = name
        self._spec = spec or ModelSpec(role="planner", spec=name, kind="langchain",
                                       model=getattr(chat_model, "model_name", None)
                                       or getattr(chat_model, "model", None))
        overrides = {k: v for k, v in (("retries", max_retries), ("base_delay_s", base_delay_s),
                                       ("max_delay_s", max_delay_s)) if v is not None}
        self.policy = replace(policy or DEFAULT_POLICY, **overrides)  # type: ignore[arg-type]
        self.endpoint = endpoint
        self._secrets = [s for s in (secrets or []) if s]
        # None: try the backend's JSON-schema mode, fall back to weaker forms if it has none.
        self._structured = structured
        self._mode = "json_schema"
        self._runnables: dict[str, Any] = {}
        self._context: int | None = None  # the model's context window in tokens, once known
        self._token_ratio = 1.0  # model tokens per estimated token (learned from a server's count)

    # -- the model's context window
    def context_tokens(self) -> int | None:
        """The model's context window in tokens: from the chat model when it can say (the in-process GGUF),
        else what a server's context-length refusal named; None while unknown."""
        if self._context is None:
            fn = getattr(self.model, "context_tokens", None)
            if callable(fn):
                try:
                    self._context = int(fn()) or None
                except BackendError:
                    raise
                except Exception as exc:  # a model that cannot be loaded is a backend failure
                    raise BackendError(f"{self.name}: cannot load the model: {type(exc).__name__}: {exc}") from exc
        return self._context

    def count_tokens(self, messages: list[Any]) -> int:
        """Tokens of a message list: exact where the chat model has a tokenizer (count_tokens), else the
        estimate scaled by what a server reported; plus the chat template's overhead."""
        texts = [message_text(getattr(m, "content", m)) for m in messages]
        fn = getattr(self.model, "count_tokens", None)
        n: float
        if callable(fn):
            n = sum(int(fn(t)) for t in texts)
        else:
            n = -(-sum(estimate_tokens(t) for t in texts) * self._token_ratio // 1)
        return int(n) + PROMPT_OVERHEAD_TOKENS

    def reply_tokens(self) -> int:
        return int(getattr(self.model, "max_tokens", None) or GRAMMAR_MAX_TOKENS)
    def spec(self) -> ModelSpec:
        return self._spec

    # -- low level
    def _is_openai_compatible(self) -> bool:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:  # pragma: no cover - core dependency
            return False
        return isinstance(self.model, ChatOpenAI)

    @property
    def mode(self) -> str:
        """How replies are constrained: json_schema, json_object (schema-guided json mode) or plain."""
        if self._structured is False:
            return "plain"
        return self._mode

    def _runnable(self, schema: type[BaseModel], mode: str) -> Callable[[list[Any]], dict] | None:
        """A callable messages -> {'raw', 'parsed', 'parsing_error'} for a constrained mode, or None."""
        wire = wire_schema(schema)
        key = f"{mode}:{schema.__name__}"
        if key in self._runnables:
            return self._runnables[key]
        fn: Callable[[list[Any]], dict] | None
        if mode == "json_schema":
            try:
                r = self.model.with_structured_output(wire, method="json_schema", include_raw=True)
            except (NotImplementedError, ValueError, TypeError):
                return None
            fn = r.invoke
        elif mode == "json_object":
            # llama-cpp-python's server and llama.cpp accept {"type": "json_object", "schema": ...}
            # (grammar-constrained) where they reject OpenAI's json_schema form.
            # Length and count bounds are left out there: llama.cpp spells `maxLength: 1000` as 1000 nested
            # optional rules and refuses (or aborts on) such a grammar; the reply is validated here anyway.
            # Without those bounds a small model can write one string until its context is full, so the reply
            # is capped (the model's own cap, else GRAMMAR_MAX_TOKENS; a cut reply is malformed JSON, which the
            # retry and fallback below handle and record). It goes as `max_tokens` in the body: langchain-openai
            # sends a model's cap as `max_completion_tokens`, which llama-cpp-python's server ignores.
            cap = getattr(self.model, "max_tokens", None) or GRAMMAR_MAX_TOKENS
            body = {**(getattr(self.model, "extra_body", None) or {}), "max_tokens": cap}
            bound = self.model.bind(response_format={"type": "json_object", "schema": grammar_schema(wire)},
                                    extra_body=body)

            def fn(messages: list[Any]) -> dict:
                try:
                    return {"raw": bound.invoke(messages), "parsed": None, "parsing_error": None}
                except Exception as exc:
                    cut = _cut_reply(exc)
                    if cut is None:
                        raise
                    return {"raw": cut, "parsed": None, "parsing_error": None}
        else:
            return None
        self._runnables[key] = fn
        return fn

    def _request(self, messages: list[Any], schema: type[BaseModel] | None, mode: str) -> dict[str, Any]:
        """The whole request as the model-call cache keys it: the model, its decoding settings, the reply
        form and schema, and every message as sent."""
        spec = self._spec
        return {"kind": spec.kind, "model": spec.model, "base_url": spec.base_url, "decoding": spec.decoding,
                "mode": mode, "schema": wire_schema(schema) if schema is not None else None,
                "messages": [m.model_dump() for m in model_messages(messages)]}

    def _downgrade(self) -> None:
        if self._mode == "json_schema" and self._is_openai_compatible():
            self._mode = "json_object"
        else:
            self._structured = False

    def _invoke(self, messages: list[Any], schema: type[BaseModel] | None, purpose: str) -> tuple[dict, ModelCall]:
        """One round trip with transport retries: {'raw': AIMessage, 'parsed': dict|None, 'parsing_error'}.

        A server that rejects the structured-output request form (HTTP 4xx naming response_format /
        json_schema) is asked again in the next weaker form, and the run remembers it.
        """
        failed: list[ModelCall] = []
        notes: list[str] = []
        while True:
            mode = self.mode if schema is not None else "plain"
            runnable = self._runnable(schema, mode) if schema is not None and mode != "plain" else None
            if mode != "plain" and runnable is None:  # the model has no such mode at all
                self._downgrade()
                continue

            def fn(r: Any = runnable) -> dict:
                if r is not None:
                    return r(messages)
                return {"raw": self.model.invoke(messages), "parsed": None, "parsing_error": None}
            try:
                result, call = call_with_retries(
                    fn, role="planner", purpose=purpose, backend=self.name, policy=self.policy,
                    endpoint=self.endpoint, secrets=self._secrets,
                    give_up_if=_rejects_response_format if mode != "plain" else None, timeout_s=self.timeout_s,
                    request=self._request(messages, schema, mode), codec=_REPLY_CODEC,
                )
            except NotImplementedError:
                if mode == "plain":
                    raise
                self._downgrade()
                continue
            except BackendError as exc:
                prev = getattr(exc, "model_call", None)
                if mode != "plain" and "not retried" in str(exc) and _rejects_response_format(exc):
                    if prev is not None:
                        failed.append(prev)
                    self._downgrade()
                    notes.append(f"structured output ({mode}) unsupported by this backend: "
                                 f"using {self.mode} replies from now on")
                    continue
                if failed and prev is not None:
                    exc.model_call = prev = merge_calls(failed + [prev])  # type: ignore[attr-defined]
                if prev is not None:
                    prev.input = model_messages(messages)
                raise
            if failed:
                call = merge_calls(failed + [call])
                call.errors.extend(notes)
            call.input = model_messages(messages)  # what was sent, on the record (trace, OTLP export)
            return result, call

    # -- public completion (the planner roles below and the judges use these)
    def complete_json(
        self, messages: str | list[Any], schema: type[T], *, purpose: str = "json",
        check: Callable[[T], None] | None = None,
    ) -> JSONReply:
        """A reply validated against `schema` (asked for in the backend's JSON-schema mode where it has
        one), with one format retry that tells the model what was wrong. Returns (parsed or None, raw
        text of the last reply, ModelCall, last problem); transport failures raise BackendError."""
        from langchain_core.messages import AIMessage

        base = as_messages(messages)
        messages = list(base)
        calls: list[ModelCall] = []
        errors: list[str] = []
        raw_text = ""
        problem: str | None = None
        for round_no in (1, 2):
            try:
                out, call = self._invoke(messages, schema, purpose)
            except BackendError as exc:
                prev = getattr(exc, "model_call", None)
                if calls and prev is not None:
                    exc.model_call = merge_calls(calls + [prev])  # type: ignore[attr-defined]
                raise
            calls.append(call)
            errors.extend(call.errors)
            raw_msg = out.get("raw")
            raw_text = message_text(getattr(raw_msg, "content", raw_msg))
            try:
                data = out.get("parsed")
                if not isinstance(data, dict):
                    data = extract_object(raw_text)
                obj = schema.model_validate(data)
                if check is not None:
                    check(obj)
                merged = merge_calls(calls)
                merged.errors = errors
                merged.output = {"raw": raw_text, "parsed": obj.model_dump()}
                return JSONReply(obj, raw_text, merged, None)
            except (JSONExtractError, ValidationError, ValueError) as exc:
                problem = _problem(exc)
                errors.append(redact(f"round {round_no}: malformed output: {problem}", self._secrets))
                messages = base + [AIMessage(content=raw_text or "(empty)"),
                                   *as_messages(FIX_PROMPT.format(problem=problem))]
        merged = merge_calls(calls)
        merged.errors = errors
        merged.output = {"raw": raw_text, "parsed": None}
        return JSONReply(None, raw_text, merged, problem)

    def complete_text(self, messages: str | list[Any], *, purpose: str = "text") -> tuple[str, ModelCall]:
        """A plain reply's text and its ModelCall (transport retries; no format check)."""
        out, call = self._invoke(as_messages(messages), None, purpose)
        return message_text(getattr(out["raw"], "content", out["raw"])), call


def _encode_reply(result: dict) -> dict:
    """A completion round ({'raw': AIMessage, 'parsed', 'parsing_error'}) as JSON (the model-call cache)."""
    from langchain_core.messages import message_to_dict

    parsed = result.get("parsed")
    return {"raw": message_to_dict(result["raw"]),
            "parsed": parsed if isinstance(parsed, (dict, list, str, int, float, type(None))) else None}


def _decode_reply(data: dict) -> dict:
    from langchain_core.messages import messages_from_dict

    return {"raw": messages_from_dict([data["raw"]])[0], "parsed": data.get("parsed"), "parsing_error": None}


_REPLY_CODEC = Codec(encode=_encode_reply, decode=_decode_reply)


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "guided", "grammar", "schema")


def _rejects_response_format(exc: BaseException) -> bool:
    """The server refused the structured-output form of the request itself (not a transient failure).

    OpenAI-compatible servers differ: vLLM and OpenAI answer 400, llama-cpp-python's server 500 with a
    pydantic 'literal_error' on body.response_format.type. Matched on the error text of the whole chain.
    """
    from audiomind.backends.retry import _chain, describe_error

    text = " ".join(describe_error(e) for e in _chain(exc)).lower()
    code = next((getattr(e, "status_code", None) for e in _chain(exc) if getattr(e, "status_code", None)), None)
    if code in (408, 429) or not any(w in text for w in _FORMAT_WORDS):
        return False
    return any(w in text for w in ("response_format", "json_schema", "not supported", "unsupported",
                                   "input should be", "invalid", "unknown", "unrecognized", "validation"))


def strip_think(s: str) -> str:
    import re

    return re.sub(r"<think(?:ing)?>.*?</think(?:ing)?>", "", s, flags=re.DOTALL | re.IGNORECASE)


def _problem(exc: Exception) -> str:
    """A short, model-readable statement of what was wrong with a reply."""
    if isinstance(exc, ValidationError):
        msgs = []
        for err in exc.errors()[:4]:
            loc = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
            msgs.append(f"{loc}: {err.get('msg')}")
        return "; ".join(msgs)
    return str(exc)
