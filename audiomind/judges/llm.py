"""Model access for the judges: a text LLM (JSON replies, yes/no probabilities) and an audio front end
asked focused questions about one or several clips.

JSON replies go through the planner's public completion (`LLMPlanner.complete_json`: the backend's
JSON-schema mode where it has one, one format retry that says what was wrong, transport retries with
backoff, a `ModelCall`); plain replies through `LLMPlanner.complete_text`.
Yes/no questions are asked of OpenAI-compatible servers with `logprobs=True, top_logprobs=K`, so
p(yes) comes from the token distribution at the answer position (normalised over the yes/no variants
found there); backends that expose no log-probabilities give p(yes) from the verdict (1, 0, or 0.5 when
the reply says neither), and the result says which.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from audiomind.backends.base import BackendError, ListenRequest, ListenResult
from audiomind.backends.jsonparse import message_text
from audiomind.backends.openai_compat import openai_endpoint
from audiomind.backends.policy import DEFAULT_POLICY
from audiomind.backends.registry import BackendSpec, make_frontend, make_planner, parse_spec
from audiomind.backends.retry import call_with_retries
from audiomind.prompts import evidence_rule, has_evidence
from audiomind.state import Artifact, ModelCall, ModelSpec

T = TypeVar("T", bound=BaseModel)

YES = {"yes", "y", "true"}
NO = {"no", "n", "false"}


class YesNo(BaseModel):
    """A yes/no judgement with its probability and where the probability came from."""

    verdict: Literal["yes", "no", "unknown"]
    p_yes: float
    source: Literal["logprobs", "verdict", "rules"]
    detail: str = ""
    raw: str = ""


def _norm_token(tok: str) -> str:
    return re.sub(r"[^a-z]", "", tok.strip().lower())


def parse_verdict(text: str) -> Literal["yes", "no", "unknown"]:
    """The verdict of a reply to a one-word yes/no question: its first word when that is yes or no (after
    any <think> block; 'Yes.', '**No**' and '"yes"' count), or the answer / verdict field of a JSON reply.
    Anything else is 'unknown': a yes or no further into a sentence ("I cannot say yes or no") is no verdict."""
    text = re.sub(r"<think(?:ing)?>.*?</think(?:ing)?>", "", text or "", flags=re.DOTALL | re.IGNORECASE)
    m = re.search(r'"(?:answer|verdict)"\s*:\s*"?\s*(yes|no)\b', text, re.IGNORECASE)
    if m:
        return m.group(1).lower()  # type: ignore[return-value]
    m = re.match(r"[^A-Za-z]*(yes|no)\b", text, re.IGNORECASE)
    return m.group(1).lower() if m else "unknown"  # type: ignore[return-value]


def p_yes_from_logprobs(content: Any) -> tuple[float | None, str]:
    """p(yes) from OpenAI `choices[0].logprobs.content`: at the first generated token that reads yes or no,
    P(yes) / (P(yes) + P(no)) over its top alternatives; None when no such position exists."""
    if not content:
        return None, "the reply carried no token log-probabilities"
    for pos, item in enumerate(content):
        tok = _get(item, "token") or ""
        if _norm_token(tok) not in YES | NO:
            continue
        py = pn = 0.0
        tops = _get(item, "top_logprobs") or []
        for alt in tops:
            t = _norm_token(_get(alt, "token") or "")
            lp = _get(alt, "logprob")
            if lp is None:
                continue
            if t in YES:
                py += math.exp(float(lp))
            elif t in NO:
                pn += math.exp(float(lp))
        if py + pn <= 0:  # no alternatives listed: the chosen token's own probability
            p = math.exp(float(_get(item, "logprob") or 0.0))
            return (p if _norm_token(tok) in YES else 1 - p), f"token {pos} {tok!r} (no alternatives listed)"
        return py / (py + pn), f"token {pos} {tok!r}: P(yes)={py:.4f}, P(no)={pn:.4f} over {len(tops)} alternatives"
    return None, "no generated token reads yes or no"


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def verdict_yes_no(text: str, how: str) -> YesNo:
    v = parse_verdict(text)
    return YesNo(verdict=v, p_yes={"yes": 1.0, "no": 0.0}.get(v, 0.5), source="verdict", detail=how, raw=text[:500])


class _OpenAIChat:
    """A bare OpenAI-compatible chat client (own retries via call_with_retries) for log-probability calls."""

    def __init__(self, spec: BackendSpec, timeout_s: float, max_retries: int):
        endpoint = openai_endpoint(spec.base_url)
        self.model = spec.model or ""
        self.base_url = endpoint.base_url
        self._key = endpoint.api_key
        self.max_retries, self.timeout_s = max_retries, timeout_s
        self.client = endpoint.client(timeout_s)

    def yes_no(self, content: Any, *, role: Literal["planner", "frontend"], purpose: str, backend: str,
               top_logprobs: int = 5, max_tokens: int = 16) -> tuple[YesNo, ModelCall]:
        text_of = content if isinstance(content, str) else " ".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        system = [{"role": "system", "content": evidence_rule()}] if has_evidence(text_of) else []
        kwargs = {"model": self.model, "messages": [*system, {"role": "user", "content": content}],
                  "temperature": 0.0, "max_tokens": max_tokens, "logprobs": True, "top_logprobs": top_logprobs}
        resp, call = call_with_retries(lambda: self.client.chat.completions.create(**kwargs), role=role,
                                       purpose=purpose, backend=backend,
                                       policy=replace(DEFAULT_POLICY, retries=self.max_retries),
                                       endpoint=self.base_url, secrets=[self._key],
                                       timeout_s=self.timeout_s)  # a reply that drips is cut here too
        choices = getattr(resp, "choices", None) or []
        if not choices:
            err = BackendError(f"{backend} returned no choices for {purpose}")
            err.model_call = call  # type: ignore[attr-defined]
            raise err
        text = message_text(choices[0].message.content)
        lp = getattr(choices[0], "logprobs", None)
        p, how = p_yes_from_logprobs(getattr(lp, "content", None) if lp is not None else None)
        if p is None:
            yn = verdict_yes_no(text, f"log-probabilities unusable ({how}); p(yes) from the verdict")
        else:
            v = parse_verdict(text)
            yn = YesNo(verdict=v if v != "unknown" else ("yes" if p >= 0.5 else "no"), p_yes=round(p, 6),
                       source="logprobs", detail=how, raw=text[:500])
        call.output = {"raw": text, "p_yes": yn.p_yes, "source": yn.source, "detail": yn.detail}
        return yn, call


class JudgeLLM:
    """A text LLM for the judges, built from a planner spec (openai:, gemini:, ollama:, llamacpp:)."""

    def __init__(self, spec: str, *, timeout_s: float = 60, max_retries: int = 3):
        self.spec_str = spec
        self.bs = parse_spec(spec)
        if self.bs.kind in ("rules", "cascade", "replay"):
            raise BackendError(f"{spec!r} is not a text LLM spec")
        self.planner = make_planner(self.bs, timeout_s=timeout_s, max_retries=max_retries)
        self.name = str(self.bs)
        self._openai = _OpenAIChat(self.bs, timeout_s, max_retries) if self.bs.kind == "openai" else None

    def model_spec(self) -> ModelSpec:
        s = self.planner.spec()
        return s.model_copy(update={"decoding": {**s.decoding, "yes_no": "logprobs" if self._openai else "verdict"}})

    def json(self, purpose: str, prompt: str, schema: type[T]) -> tuple[T | None, ModelCall, str | None]:
        """(parsed reply or None, ModelCall, problem) with one format retry."""
        reply = self.planner.complete_json(prompt, schema, purpose=purpose)
        return reply.parsed, reply.call, reply.problem

    def yes_no(self, purpose: str, prompt: str) -> tuple[YesNo, ModelCall]:
        if self._openai is not None:
            return self._openai.yes_no(prompt, role="planner", purpose=purpose, backend=self.name)
        text, call = self.planner.complete_text(prompt, purpose=purpose)
        yn = verdict_yes_no(text, f"{self.bs.kind} exposes no token log-probabilities here; p(yes) from the verdict")
        call.output = {"raw": text, "p_yes": yn.p_yes, "source": yn.source}
        return yn, call


class AudioJudge:
    """An audio-in model (front-end spec openai:/gemini:) asked focused questions about clips."""

    def __init__(self, spec: str, *, timeout_s: float = 120, max_retries: int = 3, window_s: float | None = 30.0):
        self.bs = parse_spec(spec)
        if self.bs.kind not in ("openai", "gemini"):
            raise BackendError(f"{spec!r} is not an audio-in model spec (openai:MODEL[@URL] or gemini:MODEL)")
        self.frontend = make_frontend(self.bs, window_s=window_s, timeout_s=timeout_s, max_retries=max_retries)
        self.name = str(self.bs)
        self.window_s = window_s
        self._openai = _OpenAIChat(self.bs, timeout_s, max_retries) if self.bs.kind == "openai" else None

    def model_spec(self) -> ModelSpec:
        s = self.frontend.spec()
        return s.model_copy(update={"decoding": {**s.decoding, "yes_no": "logprobs" if self._openai else "verdict"}})

    def listen(self, prompt: str, prompt_id: str, artifacts: list[Artifact], question: str,
               reply_format: str = "listen_format") -> ListenResult:
        """One request with every clip in it (the front end's own message layout and windowing); the reply
        is asked for in `reply_format` (a prompt naming the JSON keys and what each holds)."""
        return self.frontend.listen(ListenRequest(kind="perception", artifacts=artifacts, prompt=prompt,
                                                  prompt_id=prompt_id, question=question, reply_format=reply_format))

    def yes_no(self, purpose: str, prompt: str, artifacts: list[Artifact]) -> tuple[YesNo, ModelCall]:
        if self._openai is not None:
            from audiomind.backends.frontends.audio_parts import input_audio_parts

            content, _windows = input_audio_parts(prompt, artifacts, self.window_s)
            return self._openai.yes_no(content, role="frontend", purpose=purpose, backend=self.name)
        # the prompt asks for one word: sent as it is (no JSON reply format, no JSON mode), read strictly
        text, _windows, call = self.frontend.complete_text(prompt, artifacts, purpose)
        yn = verdict_yes_no(text, f"{self.bs.kind} exposes no token log-probabilities here; p(yes) from the verdict")
        call.output = {"raw": text, "p_yes": yn.p_yes, "source": yn.source}
        return yn, call


def make_llm(spec: str | None, **kw: Any) -> JudgeLLM | None:
    """None for the rules (offline) judge; a JudgeLLM otherwise."""
    if not spec or spec.strip() == "rules":
        return None
    return JudgeLLM(spec, **kw)


def make_audio_judge(spec: str | None, **kw: Any) -> AudioJudge | None:
    """None for the cascade (offline) front end; an AudioJudge otherwise."""
    if not spec or spec.strip() == "cascade":
        return None
    return AudioJudge(spec, **kw)
