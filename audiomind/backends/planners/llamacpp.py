"""`llamacpp:/path/model.gguf`: a local GGUF run in-process by llama-cpp-python, as a LangChain chat model.

langchain-core has no llama.cpp chat model of its own (langchain-community's `ChatLlamaCpp` is not a
dependency here, and it gets structured output through tool calling rather than a JSON-schema grammar),
so this adapter is the least that the planner needs: chat completion, token usage, and structured
output through llama.cpp's JSON-schema grammar (`response_format={"type": "json_object", "schema": ...}`).
Imported only when a llamacpp spec is built; llama_cpp itself is imported on the first request.
"""

from __future__ import annotations

import threading
import time
from operator import itemgetter
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import convert_to_json_schema
from pydantic import PrivateAttr

from audiomind.backends.base import BackendError
from audiomind.backends.jsonparse import message_text

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _past_deadline(input_ids: Any = None, logits: Any = None) -> bool:
    """A stopping criterion (llama-cpp-python asks it after each generated token; True ends the generation):
    whether the request running in this thread is past its deadline (the run's time budget:
    audiomind.backends.deadline), so that a request the caller abandoned stops using the CPU and frees the
    model instead of finishing unseen. (An exception raised in llama.cpp's token callbacks is printed and
    ignored by ctypes, and the generation goes on: a criterion is the library's way to stop.)"""
    from audiomind.backends.deadline import request_deadline

    deadline = request_deadline()
    return deadline is not None and time.monotonic() > deadline


def _deadline_chat_handler(llama: Any) -> Any:
    """The chat handler llama-cpp-python builds from the GGUF's own chat template (as `Llama` does for
    `chat_template.default`), with `_past_deadline` among the stopping criteria its formatter hands to
    `create_completion` (create_chat_completion takes none of its own); set as the model's `chat_handler`,
    which create_chat_completion uses with its own sampling defaults. None when the GGUF has no template:
    the library's fallback format is used then, and a deadline bounds only the caller's wait."""
    from llama_cpp import StoppingCriteriaList
    from llama_cpp.llama_chat_format import (
        ChatFormatter,
        ChatFormatterResponse,
        Jinja2ChatFormatter,
        chat_formatter_to_chat_completion_handler,
    )

    template = (llama.metadata or {}).get("tokenizer.chat_template")
    if not template:
        return None
    def text(token: int) -> str:
        return llama.detokenize([token], special=True).decode("utf-8", "replace") if token != -1 else ""

    eos = llama.token_eos()
    inner = Jinja2ChatFormatter(template=template, eos_token=text(eos), bos_token=text(llama.token_bos()),
                                stop_token_ids=[eos])

    class DeadlineFormatter(ChatFormatter):
        def __call__(self, **kwargs: Any) -> ChatFormatterResponse:
            out = inner(**kwargs)
            out.stopping_criteria = StoppingCriteriaList([_past_deadline, *(out.stopping_criteria or [])])
            return out

    return chat_formatter_to_chat_completion_handler(DeadlineFormatter())


MAX_CONTEXT = 16384
"""The largest context an in-process GGUF is run with unless `n_ctx` says otherwise (its KV cache grows with it)."""


def _llama_class() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise BackendError("llama_cpp is not importable: pip install 'audiomind[llamacpp]' (compiles llama.cpp)") from exc
    return Llama


def training_context(model_path: str) -> int:
    """The context length a GGUF was trained with (read with its vocabulary only: no weights are loaded)."""
    import contextlib

    try:  # llama.cpp warns on stderr about the vocabulary-only context it makes; nothing to act on
        from llama_cpp._utils import suppress_stdout_stderr
        quiet: Any = suppress_stdout_stderr(disable=False)
    except ImportError:  # pragma: no cover - a llama-cpp-python without it
        quiet = contextlib.nullcontext()
    with quiet:
        llama = _llama_class()(model_path=model_path, vocab_only=True, verbose=False, n_ctx=64)
    try:
        meta = llama.metadata or {}
        value = meta.get(f"{meta.get('general.architecture', '')}.context_length")
        if value is None:
            raise BackendError(f"{Path(model_path).name}: the GGUF names no context length")
        return int(value)
    finally:
        llama.close()


class LlamaCppChatModel(BaseChatModel):
    """A GGUF model run in-process by llama-cpp-python; structured output through its JSON-schema grammar."""

    model_path: str
    n_ctx: int | None = None  # None: the model's training context, at most MAX_CONTEXT
    n_threads: int | None = None
    temperature: float = 0.0
    max_tokens: int = 768
    seed: int = 0
    _llama: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _abort_at: float | None = PrivateAttr(default=None)  # the deadline of the request running now
    _abort: Any = PrivateAttr(default=None)  # llama.cpp's abort callback (ctypes), kept alive with the model

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-python"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "temperature": self.temperature}

    def _load(self) -> Any:
        if self._llama is None:
            Llama = _llama_class()
            n_ctx = self.n_ctx or min(training_context(self.model_path), MAX_CONTEXT)
            llama = Llama(model_path=self.model_path, n_ctx=n_ctx, n_threads=self.n_threads,
                          seed=self.seed, verbose=False)
            llama.chat_handler = _deadline_chat_handler(llama)
            self._llama = llama
        return self._llama

    def context_tokens(self) -> int:
        """The context window the model is run with (what a prompt and its reply must fit in together)."""
        return int(self._load().n_ctx())

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer (special tokens such as <|im_start|> count as one)."""
        return len(self._load().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _abort_when_late(self, llama: Any, deadline: float | None) -> None:
        """While a request with a deadline runs, llama.cpp's abort callback (asked between the steps of every
        llama_decode) ends a decode past it: the prompt is evaluated in one llama_decode per batch of up to
        512 tokens, where no stopping criterion is asked (seconds to minutes of a slow CPU's time). Without a
        deadline no callback is set (it costs a call into Python per step)."""
        import llama_cpp

        self._abort_at = deadline
        if deadline is not None and self._abort is None:
            self._abort = llama_cpp.ggml_abort_callback(
                lambda _data: self._abort_at is not None and time.monotonic() > self._abort_at)
        callback = self._abort if deadline is not None else llama_cpp.ggml_abort_callback()  # NULL: none
        llama_cpp.llama_set_abort_callback(llama.ctx, callback, None)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        from audiomind.backends.deadline import CallTimeout, request_deadline

        msgs = [{"role": _ROLES.get(m.type, "user"), "content": message_text(m.content)} for m in messages]
        deadline = request_deadline()
        with self._lock:
            llama = self._load()
            self._abort_when_late(llama, deadline)
            try:
                out = llama.create_chat_completion(
                    messages=msgs, temperature=self.temperature, max_tokens=self.max_tokens, stop=stop,
                    seed=self.seed, response_format=kwargs.get("response_format"),
                )
            except RuntimeError as exc:  # llama_decode aborted by the callback: the deadline, not a fault
                if _past_deadline():
                    raise CallTimeout("the generation ran past its deadline (aborted)") from exc
                raise
            finally:
                self._abort_when_late(llama, None)
        if _past_deadline():  # stopped by the deadline: the reply is cut short, not the model's answer
            raise CallTimeout("the generation ran past its deadline (stopped)")
        usage = out.get("usage") or {}
        meta = {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0)} if usage else None
        msg = AIMessage(content=out["choices"][0]["message"].get("content") or "", usage_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        from audiomind.backends.planners.llm_client import grammar_schema

        js = schema if isinstance(schema, dict) else convert_to_json_schema(schema)
        # without length and count bounds: llama.cpp spells `maxLength: 800` as 800 nested optional rules, and a
        # decision's schema then exceeds its grammar limits ("number of rules exceeds sane defaults", then a
        # segfault in llama-cpp-python); the reply is capped by max_tokens and validated by the planner instead
        bound = self.bind(response_format={"type": "json_object", "schema": grammar_schema(js)})
        parser = JsonOutputParser()
        if not include_raw:
            return bound | parser
        ok = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser, parsing_error=lambda _: None)
        none = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=bound) | ok.with_fallbacks([none], exception_key="parsing_error")


def planner_fit(model_path: str, inventory: str, reply_tokens: int = 768) -> tuple[bool, str]:
    """Can this GGUF be the planner: does the most compact decide prompt (the inventory as tool names, an empty
    record, the smallest evidence budget) fit the context it would run with, with room for a reply and a format
    retry? Reads the vocabulary only (no weights): for `audiomind doctor`."""
    import contextlib

    from audiomind.backends.planners.llm_client import FIX_RETRY_TOKENS, PROMPT_OVERHEAD_TOKENS
    from audiomind.backends.planners.llm_prompts import COMPACT_LEVELS, smallest_decide_prompt

    ctx = min(training_context(model_path), MAX_CONTEXT)
    text = smallest_decide_prompt(inventory)
    try:
        from llama_cpp._utils import suppress_stdout_stderr
        quiet: Any = suppress_stdout_stderr(disable=False)
    except ImportError:  # pragma: no cover
        quiet = contextlib.nullcontext()
    with quiet:
        llama = _llama_class()(model_path=model_path, vocab_only=True, verbose=False, n_ctx=64)
    try:
        prompt = len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
    finally:
        llama.close()
    need = prompt + PROMPT_OVERHEAD_TOKENS + COMPACT_LEVELS[-1][0] + 2 * reply_tokens + FIX_RETRY_TOKENS
    detail = (f"context {ctx} tokens; the most compact decide prompt takes {prompt} tokens, {need} with the "
              f"smallest evidence budget and room for a reply")
    if need > ctx:
        return False, f"too small a context for the planner: {detail}"
    return True, f"fits as the planner ({detail}; longer prompts are compacted, recorded in the trace)"
