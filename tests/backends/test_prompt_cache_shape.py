"""Planner prompts built for cost and caching (issue 33 point 4), on a representative MMAR-like item run
end to end (evals/planner_prompts/benchmark.py: the LLM planner and the audio front end against a loopback
OpenAI-compatible stand-in, the tools really running): at most 20,000 planner input tokens per item (4
characters a token), consecutive decide prompts sharing at least 90% of their text as a prefix, the static
part (the plan and decide system message) byte-identical across calls and items, and the record growing by
appending (each decide prompt, up to its step line, is a prefix of the next)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("planner_prompts_benchmark",
                                               ROOT / "evals" / "planner_prompts" / "benchmark.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def measured():
    items = bench.mmar_items(2)  # a speech and a sound item of the MMAR meta
    assert [i["modality"] for i in items] == ["speech", "sound"]
    return bench.measure(items, keep_texts=True)


def test_planner_input_tokens_per_item_within_budget(measured):
    for row in measured["items"]:
        assert row["outcome"] == "answered", row
        assert row["tokens_by_role"].keys() == {"perception_prompt", "plan", "decide", "summarize"}
        assert len(row["decide_bytes"]) == len(bench.SCRIPT)  # the whole script ran: call, call, answer
        assert row["tokens"] <= bench.TARGET_TOKENS, row
        assert row["trace_input_tokens"] == row["tokens"]  # the trace's ModelCalls carry the stand-in's count


def test_consecutive_decide_prompts_share_their_prefix(measured):
    for row in measured["items"]:
        shares = row["decide_prefix_share"]
        assert len(shares) == len(bench.SCRIPT) - 1
        assert min(shares) >= bench.TARGET_SHARE, row
        texts = row["decide_texts"]
        for earlier, later in itertools.pairwise(texts):
            head, sep, _step = earlier.rpartition("\nDECIDE now: step ")
            assert sep and later.startswith(head)  # the record only grew: nothing before it changed


def test_static_part_identical_across_calls_and_items_and_recorded(measured):
    assert measured["static_parts"] == 1  # one system text for every plan and decide call of both items
    assert measured["model_call_input_matches"]  # ModelCall.input is what the server received


def test_prefix_share_measure():
    assert bench.common_prefix("abcdef", "abcxyz") == 3 and bench.common_prefix("", "a") == 0
    assert bench.common_prefix("same", "same") == 4
    assert bench.request_text([{"role": "system", "content": "s"},
                               {"role": "user", "content": [{"type": "text", "text": "u"}]}]) == "system\ns\nuser\nu\n"


def test_compaction_levels_shrink_and_small_levels_carry_only_their_role(clips):
    """For small contexts (SmolLM2) every level is shorter than the one before; from DETAIL_LEVELS on, where no
    cache helps, the system message carries only the asked role's instructions and no tool details."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from audiomind.backends.planners.llm import COMPACT_LEVELS, DETAIL_LEVELS, LLMPlanner
    from audiomind.state import Plan
    from audiomind.tools.manifest import ToolRegistry

    from .conftest import artifact_for, make_state

    inventory = ToolRegistry.load().render_inventory()
    state = make_state([artifact_for(clips["short"])]).model_copy(update={
        "plan": Plan(intent="count", answer_format="one choice", candidate_operations=["count_events"])})
    planner = LLMPlanner(GenericFakeChatModel(messages=iter([])), name="p")
    for role in ("plan", "decide"):
        sizes = []
        for level in range(len(COMPACT_LEVELS)):
            r = planner._record_prompt(role, state, inventory, level, **(
                {"step": 1, "max_steps": 6} if role == "decide" else {}))
            assert r.system is not None
            sizes.append(len(r.system) + len(r.text))
            other = "DECIDE: choose exactly ONE action" if role == "plan" else "PLAN: write a light plan"
            assert (other in r.system) == (level < DETAIL_LEVELS)
            shown = "may support: how many separate sounds" in r.text  # count_events' entry, named by the plan
            assert shown == (role == "decide" and level < DETAIL_LEVELS)
        assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0] // 3, (role, sizes)
