"""A paid benchmark run as a researcher runs it, against a strict loopback OpenAI-compatible server (every
request validated against the installed openai SDK's types): a 429 storm ends with every item answered and
the client-side rate never exceeded; a re-run into a fresh folder sends nothing and writes the same
predictions; the cost is the provider's usage times the prices, per role; an unpriced backend is unknown."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from test_runner import tb, tone_items  # type: ignore[import-not-found]
from typer.testing import CliRunner

from audiomind.api import AudioMind
from audiomind.backends import ratelimit
from audiomind.bench.items import BenchItem
from audiomind.bench.runner import load_results, run_batch
from audiomind.cli import app
from audiomind.config import AgentConfig
from tests.backends.standins.openai_standin import OpenAIStandin, Script

AUDIO_TOKENS_PER_S = 25


@pytest.fixture
def storm():
    """Strict loopback servers (tests/backends/standins/openai_standin.py: every request validated against the
    openai SDK's types) that answer each role like a model (evals/throughput_benchmark.reply_content), after
    refusing their first `refuse_first` requests with 429 and Retry-After; usage as a provider reports it
    (text at 4 characters a token, audio at 25 tokens a second, in prompt_tokens_details)."""
    servers: list[OpenAIStandin] = []

    def make(**kw: Any) -> OpenAIStandin:
        s = OpenAIStandin(served_model="gpt-4o-mini-2026-01-01", **kw)
        s.default = lambda body: Script(tb.reply_content(body))
        servers.append(s)
        return s

    ratelimit.reset_limiters()
    yield make
    for s in servers:
        s.close()
    ratelimit.reset_limiters()


def tones(folder: Path, n: int) -> list[BenchItem]:
    return tone_items(folder, n, prefix="p")


def items_file(tmp_path: Path, n: int) -> Path:
    """An items.jsonl of n tone items (`bench run --task items`)."""
    src = tmp_path / "items.jsonl"
    src.write_text("".join(json.dumps({"id": it.id, "audio": it.audio_path, "question": it.question,
                                       "choices": it.choices, "answer": it.answer}) + "\n"
                           for it in tones(tmp_path / "clips", n)))
    return src


def test_a_429_storm_ends_with_every_item_answered_within_the_rate(storm, tmp_path, monkeypatch):
    """20 items, 8 workers; the server refuses its first 30 requests (Retry-After 1 s). The limiter's window
    is shortened to 3 s for the test (10 requests per 3 s: the same mechanism as 10 per minute)."""
    monkeypatch.setattr(ratelimit, "WINDOW_S", 3.0)
    server = storm(refuse_first=30, retry_after_s=1.0)
    spec = f"openai:gpt-4o-mini@{server.url}"
    cfg = AgentConfig(planner="rules", frontend=spec, mode="direct", trace_dir=str(tmp_path / "art"), rpm=10,
                      max_retries=3, model_cache="off")
    summary = run_batch(tones(tmp_path / "clips", 20), tmp_path / "run", partial(AudioMind, cfg), workers=8,
                        progress=False)
    assert server.invalid == []
    assert summary.statuses == {"answered": 20} and summary.errors == 0 and not summary.partial
    assert summary.scored == 20
    arrivals = sorted(seen.arrived for seen in server.seen)
    assert len(arrivals) >= 50  # 30 refused + 20 answered
    limiter = ratelimit.limiter_for(spec, ratelimit.RateLimit(rpm=10))
    assert limiter.max_in_window == 10  # the limiter bound, and never let an 11th request into a window
    # at the server: no more than 10 arrivals within a window shortened by 1 s of client-side latency
    # (a request leaves the limiter, then is encoded and connected before it arrives)
    worst = max(sum(1 for b in arrivals if a <= b < a + 2.0) for a in arrivals)
    assert worst <= 10, f"{worst} requests reached the server within one window"
    res = load_results(tmp_path / "run")
    traces = [json.loads((tmp_path / "run" / r["trace_path"]).read_text()) for r in res.values()]
    waits = [w for t in traces for c in t["model_calls"] for w in c["retry_waits_s"]]
    assert waits and min(waits) >= 1.0  # Retry-After honoured, on the record


def test_failed_calls_are_errors_never_wrong_answers(storm, tmp_path):
    """A server that refuses everything: items are `error`, unscored, retried at the end, and the run is
    partial; nothing is counted as a wrong answer."""
    server = storm(refuse_first=10_000, retry_after_s=0.05)
    cfg = AgentConfig(planner="rules", frontend=f"openai:m@{server.url}", mode="direct",
                      trace_dir=str(tmp_path / "art"), max_retries=1, model_cache="off")
    summary = run_batch(tones(tmp_path / "clips", 3), tmp_path / "run", partial(AudioMind, cfg), progress=False,
                        error_retries=1)
    assert summary.statuses == {"error": 3} and summary.scored == 0 and summary.accuracy is None
    assert summary.partial and summary.errors == 3 and summary.error_retry_rounds == 1
    assert len(server.seen) == 3 * 2 * 2  # 2 sends per request, 2 rounds
    assert all(r["correct"] is None for r in load_results(tmp_path / "run").values())


def test_a_rerun_into_a_fresh_folder_sends_nothing(storm, tmp_path):
    server = storm()
    spec = f"openai:m@{server.url}"
    cfg = AgentConfig(planner=spec, frontend=spec, trace_dir=str(tmp_path / "art"), model_cache="use",
                      model_cache_dir=str(tmp_path / "cache"))
    items = tones(tmp_path / "clips", 3)
    first = run_batch(items, tmp_path / "run1", partial(AudioMind, cfg), workers=2, progress=False)
    sent = len(server.seen)
    # (items asking the same question make the same perception-prompt request: a hit already)
    assert first.statuses == {"answered": 3} and sent + first.cache_hits >= 3 * 5
    second = run_batch(items, tmp_path / "run2", partial(AudioMind, cfg.model_copy(
        update={"trace_dir": str(tmp_path / "art2")})), workers=2, progress=False)
    assert len(server.seen) == sent, "the re-run sent requests"
    assert second.statuses == {"answered": 3} and second.cache_hits == sent + first.cache_hits
    r1, r2 = load_results(tmp_path / "run1"), load_results(tmp_path / "run2")
    assert {k: v["prediction"] for k, v in r1.items()} == {k: v["prediction"] for k, v in r2.items()}
    trace = json.loads((tmp_path / "run2" / r2["p0"]["trace_path"]).read_text())
    assert all(c["cache_hit"] and c["attempts"] == 0 and c["input_tokens"] for c in trace["model_calls"])
    assert second.cost_usd == 0.0 or second.cost_usd is None


def test_cost_is_the_usage_times_the_prices_per_role(storm, tmp_path):
    """The printed cost equals the provider's usage times the given prices, audio at its own rate; a price
    key without @URL matches the recorded spec with it."""
    server = storm()
    spec = f"openai:gpt-4o-mini@{server.url}"
    src = items_file(tmp_path, 2)
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["bench", "run", "--task", "items", "--source", str(src), "--out", str(out),
                                   "--planner", spec, "--frontend", spec, "--no-progress", "--model-cache", "off",
                                   "--price", "openai:gpt-4o-mini=0.15,0.60,0.075,10.0", "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)["summary"]
    expect: dict[str, float] = {}
    for r in load_results(out).values():
        for c in json.loads((out / r["trace_path"]).read_text())["model_calls"]:
            audio = c["audio_input_tokens"] or 0
            usd = ((c["input_tokens"] - audio) * 0.15 + audio * 10.0 + c["output_tokens"] * 0.60) / 1e6
            expect[c["role"]] = expect.get(c["role"], 0.0) + usd
    assert set(expect) == {"planner", "frontend"}
    # what an auditor needs of every call, from the provider's own reply
    calls = [c for r in load_results(out).values()
             for c in json.loads((out / r["trace_path"]).read_text())["model_calls"]]
    for c in calls:
        assert c["served_model"] == "gpt-4o-mini-2026-01-01" and c["fingerprint"] == "fp_standin"
        assert c["finish_reason"] == "stop" and c["reasoning_tokens"] == 0 and c["input"]
    heard = [c for c in calls if c["role"] == "frontend"]
    assert heard and all(c["audio_input_tokens"] > 0 and c["input_audio"][0]["sha256"] for c in heard)
    assert round(summary["cost_usd"], 2) == round(sum(expect.values()), 2)
    for role, usd in expect.items():
        assert summary["cost_by_role"][role] == pytest.approx(usd, rel=1e-6)
    assert summary["unpriced"] == []

    res = CliRunner().invoke(app, ["bench", "run", "--task", "items", "--source", str(src), "--out",
                                   str(tmp_path / "unpriced"), "--planner", spec, "--frontend", spec,
                                   "--no-progress", "--model-cache", "off"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "cost unknown" in said and "no price for" in said
    assert json.loads((tmp_path / "unpriced" / "summary.json").read_text())["cost_usd"] is None


def test_dry_run_estimates_the_whole_run_and_the_real_run_reuses_it(storm, tmp_path):
    server = storm()
    spec = f"openai:gpt-4o-mini@{server.url}"
    src = items_file(tmp_path, 5)
    args = ["bench", "run", "--task", "items", "--source", str(src), "--out", str(tmp_path / "run"), "--planner",
            spec, "--frontend", spec, "--no-progress", "--price", "openai:gpt-4o-mini=0.15,0.60",
            "--model-cache-dir", str(tmp_path / "cache")]
    res = CliRunner().invoke(app, [*args, "--dry-run", "2", "--json"])
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert est["sampled"] == 2 and est["total_items"] == 5 and est["cost_run"] > 0
    assert "estimated from 2 item(s)" in est["method"]
    assert not (tmp_path / "run" / "results.jsonl").exists()  # the dry run is not the run
    sent = len(server.seen)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert len(server.seen) - sent < sent * 5 / 2  # the two sampled items came from the cache


def test_a_real_models_confidence_reaches_the_report(tmp_path):
    """Direct mode against a server that returns log-probabilities: each answer's confidence is the chosen
    choice's probability over the choices (confidence_source logprobs), and bench report tables it."""
    import math

    from audiomind.bench.report import build_report
    from tests.backends.standins.openai_standin import OpenAIStandin, Script, Token

    server = OpenAIStandin()
    # "Speech" is chosen with p 0.6 against "A steady tone" 0.3 (and "Silence" 0.1) at the answer's first token
    server.default = lambda body: Script(tokens=[
        Token('{"answer": "'), Token("Speech", math.log(0.6), {"A": math.log(0.3), "Silence": math.log(0.1)}),
        Token('", "rationale": "heard"}')])
    try:
        cfg = AgentConfig(planner="rules", frontend=f"openai:m@{server.url}", mode="direct",
                          trace_dir=str(tmp_path / "art"))
        summary = run_batch(tones(tmp_path / "clips", 3), tmp_path / "run", partial(AudioMind, cfg), progress=False)
    finally:
        server.close()
    assert server.invalid == [] and summary.statuses == {"answered": 3}
    rows = list(load_results(tmp_path / "run").values())
    assert all(r["confidence_source"] == "logprobs" and 0.5 < r["confidence"] < 0.7 for r in rows)
    rep = build_report(tmp_path / "run")
    assert rep.calibration and sum(b.n for b in rep.calibration) == 3
