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


def _stop_at_deadline(input_ids: Any, scores: Any) -> Any:
    """A logits processor (called once per generated token) that ends a generation whose request is past
    its deadline (the run's time budget: audiomind.backends.deadline), so an abandoned request stops
    using the CPU and frees the model instead of finishing unseen."""
    from audiomind.backends.deadline import CallTimeout, request_deadline

    deadline = request_deadline()
    if deadline is not None and time.monotonic() > deadline:
        raise CallTimeout("the generation ran past its deadline")
    return scores


def _deadline_processor() -> Any:
    from llama_cpp import LogitsProcessorList

    return LogitsProcessorList([_stop_at_deadline])


class LlamaCppChatModel(BaseChatModel):
    """A GGUF model run in-process by llama-cpp-python; structured output through its JSON-schema grammar."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int | None = None
    temperature: float = 0.0
    max_tokens: int = 768
    seed: int = 0
    _llama: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-python"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "temperature": self.temperature}

    def _load(self) -> Any:
        if self._llama is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise BackendError(
                    "llama_cpp is not importable: pip install 'audiomind[llamacpp]' (compiles llama.cpp)"
                ) from exc
            self._llama = Llama(model_path=self.model_path, n_ctx=self.n_ctx, n_threads=self.n_threads,
                                seed=self.seed, verbose=False)
        return self._llama

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        msgs = [{"role": _ROLES.get(m.type, "user"), "content": message_text(m.content)} for m in messages]
        with self._lock:
            out = self._load().create_chat_completion(
                messages=msgs, temperature=self.temperature, max_tokens=self.max_tokens, stop=stop,
                seed=self.seed, response_format=kwargs.get("response_format"),
                logits_processor=_deadline_processor(),
            )
        usage = out.get("usage") or {}
        meta = {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0)} if usage else None
        msg = AIMessage(content=out["choices"][0]["message"].get("content") or "", usage_metadata=meta)
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        js = schema if isinstance(schema, dict) else convert_to_json_schema(schema)
        bound = self.bind(response_format={"type": "json_object", "schema": js})
        parser = JsonOutputParser()
        if not include_raw:
            return bound | parser
        ok = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser, parsing_error=lambda _: None)
        none = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=bound) | ok.with_fallbacks([none], exception_key="parsing_error")
