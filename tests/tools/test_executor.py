"""The tool executor with real tools on real audio: rejections with readable reasons, parallel calls,
per-tool timeouts, error isolation, the result cache and its key, and derived-artifact provenance.

User tools come from a temporary --tools-dir: a manifest pointing at a module written to a temp folder
and put on sys.path, exactly as a user would add a tool of their own."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.artifacts import ingest_original, make_artifact
from audiomind.state import ToolCallRequest, ToolCallStatus
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolRegistry

USER_MODULE = "audiomind_test_usertools"
USER_SOURCE = '''
"""Test tools: sleep (to prove concurrency and timeouts) and fail (to prove isolation)."""
import threading
import time

from pydantic import Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolResult


class SleepArgs(ToolArgs):
    seconds: float = Field(1.0, ge=0.0, le=30.0)


def sleepy(args: SleepArgs, ctx: ToolContext) -> ToolResult:
    ctx.audio(args.artifact)  # touches the artifact like a real tool
    start = time.time()
    time.sleep(args.seconds)
    return ToolResult(output={"start": start, "end": time.time(), "thread": threading.get_ident()},
                      claims=[Claim(text=f"slept {args.seconds} s")])


class FailArgs(ToolArgs):
    pass


def fail(args: FailArgs, ctx: ToolContext) -> ToolResult:
    raise RuntimeError("deliberate failure inside the tool")
'''

MANIFESTS = {
    "sleepy": {"timeout": 30, "entry": "sleepy"},
    "napper": {"timeout": 1, "entry": "sleepy"},  # same code, a 1 s timeout
    "failing": {"timeout": 30, "entry": "fail"},
}


def _manifest(name: str, entry: str, timeout: float) -> str:
    return (
        f'name = "{name}"\nversion = "1"\ncategory = "evaluation"\n'
        f'function = "test tool {name}"\nsupports = ["nothing: a test tool"]\nnot_for = ["anything real"]\n'
        f'entry = "{USER_MODULE}:{entry}"\ntimeout_s = {timeout}\ncacheable = false\n'
        f'example = {{ artifact = "a0" }}\n'
    )


@pytest.fixture(scope="session")
def user_tools_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("user_tools")
    (root / "code").mkdir()
    (root / "code" / f"{USER_MODULE}.py").write_text(USER_SOURCE)
    (root / "manifests").mkdir()
    for name, m in MANIFESTS.items():
        (root / "manifests" / f"{name}.toml").write_text(_manifest(name, m["entry"], m["timeout"]))
    return root


@pytest.fixture
def registry(user_tools_dir, monkeypatch) -> ToolRegistry:
    monkeypatch.syspath_prepend(str(user_tools_dir / "code"))
    return ToolRegistry.load([user_tools_dir / "manifests"])


@pytest.fixture(scope="session")
def clip(audio_dir) -> Path:
    """3 beeps (0.2 s at 0.5, 1.2, 1.9 s), 3.1 s, 16 kHz mono."""
    return synth.beeps(3, audio_dir / "exec_beeps.wav")


@pytest.fixture
def a0(clip):
    return ingest_original(clip)


def run(executor: ToolExecutor, calls: list[tuple[str, dict]], artifacts, step: int = 1):
    return executor.run([ToolCallRequest(tool=t, arguments=a) for t, a in calls], artifacts, step=step)


# ---- rejections ------------------------------------------------------------------------------------------
def test_unknown_tool_is_rejected_with_the_available_tools_listed(registry, a0, tmp_path):
    res = run(ToolExecutor(registry, tmp_path), [("transcribe_everything", {})], [a0])
    (call,) = res.tool_calls
    assert call.status == ToolCallStatus.rejected
    assert "unknown tool 'transcribe_everything'" in call.error
    for name in ("probe", "signal_stats", "crop", "sleepy"):
        assert name in call.error
    assert not res.evidence and not res.artifacts


@pytest.mark.parametrize(
    "tool,args,field",
    [("crop", {"start_s": -1.0}, "start_s"),
     ("crop", {"start_s": 0.0, "end_s": "soon"}, "end_s"),
     ("crop", {"start_s": 0.0, "frobnicate": 1}, "frobnicate"),
     ("gain", {}, "gain_db"),
     ("signal_stats", {"silence_threshold_db": "loud"}, "silence_threshold_db"),
     ("filter", {"kind": "highpass"}, "low_hz")],
)
def test_bad_arguments_are_rejected_naming_the_field(tool, args, field, registry, a0, tmp_path):
    res = run(ToolExecutor(registry, tmp_path / "derived"), [(tool, args)], [a0])
    (call,) = res.tool_calls
    assert call.status == ToolCallStatus.rejected
    assert call.error.startswith(f"invalid arguments for '{tool}'") and field in call.error
    assert call.requested_arguments == args and call.arguments is None
    assert not (tmp_path / "derived").exists()  # the tool never ran


def test_unknown_artifact_is_rejected(registry, a0, tmp_path):
    res = run(ToolExecutor(registry, tmp_path), [("signal_stats", {"artifact": "a7"}),
                                                  ("crop", {"artifact": "a3", "start_s": 0.0})], [a0])
    for call, aid in zip(res.tool_calls, ("a7", "a3")):
        assert call.status == ToolCallStatus.rejected
        assert f"unknown artifact '{aid}'" in call.error and "a0" in call.error


def test_disabled_and_unavailable_tools_are_rejected_with_a_reason(registry, a0, tmp_path):
    res = run(ToolExecutor(registry, tmp_path, allowed={"probe"}), [("signal_stats", {}), ("probe", {})], [a0])
    assert res.tool_calls[0].status == ToolCallStatus.rejected and "not enabled" in res.tool_calls[0].error
    assert res.tool_calls[1].status == ToolCallStatus.ok
    if not registry.availability("separate")[0]:
        res = run(ToolExecutor(registry, tmp_path), [("separate", {})], [a0])
        assert res.tool_calls[0].status == ToolCallStatus.rejected
        assert "unavailable here" in res.tool_calls[0].error and registry.availability("separate")[1] in \
            res.tool_calls[0].error


# ---- concurrency, timeouts, isolation --------------------------------------------------------------------
def test_independent_calls_run_in_parallel(registry, a0, tmp_path):
    """Three 1 s sleeps overlap in time (each starts before any ends), so the batch takes about 1 s, not 3."""
    t0 = time.monotonic()
    res = run(ToolExecutor(registry, tmp_path, max_workers=4), [("sleepy", {"seconds": 1.0})] * 3, [a0])
    wall = time.monotonic() - t0
    assert [c.status for c in res.tool_calls] == [ToolCallStatus.ok] * 3
    outs = [c.output for c in res.tool_calls]
    assert max(o["start"] for o in outs) < min(o["end"] for o in outs)  # all three were running at once
    assert len({o["thread"] for o in outs}) == 3
    assert wall < 2.5  # loose: serial would be >= 3 s
    assert all(c.duration_s >= 0.95 for c in res.tool_calls)
    assert len(res.evidence) == 3 and {e.source_id for e in res.evidence} == {c.id for c in res.tool_calls}


def test_timeouts_scale_with_the_artifacts_length_and_are_recorded(registry, a0, tmp_path):
    """A manifest's timeout is for audio up to 10 minutes: on a 20-minute artifact napper's 1 s becomes 2 s,
    recorded on the call, and a call past it is a timeout whose error names both limits."""
    long = a0.model_copy(update={"duration_s": 1200.0})
    res = run(ToolExecutor(registry, tmp_path), [("napper", {"seconds": 1.3}), ("napper", {"seconds": 3.0})], [long])
    within, beyond = res.tool_calls
    assert within.status == ToolCallStatus.ok and within.timeout_s == 2.0
    assert beyond.status == ToolCallStatus.timeout and beyond.timeout_s == 2.0
    assert "2 s timeout" in beyond.error and "manifest 1 s" in beyond.error
    short = run(ToolExecutor(registry, tmp_path), [("napper", {"seconds": 0.1})], [a0]).tool_calls[0]
    assert short.status == ToolCallStatus.ok and short.timeout_s == 1.0


def test_a_timeout_is_recorded_while_other_calls_succeed(registry, a0, tmp_path):
    t0 = time.monotonic()
    res = run(ToolExecutor(registry, tmp_path),
              [("napper", {"seconds": 3.0}), ("probe", {}), ("signal_stats", {}), ("sleepy", {"seconds": 0.2})], [a0])
    wall = time.monotonic() - t0
    nap, probe, stats, short = res.tool_calls
    assert nap.status == ToolCallStatus.timeout and "timeout" in nap.error and nap.output is None
    assert [probe.status, stats.status, short.status] == [ToolCallStatus.ok] * 3
    assert probe.output["duration_s"] == pytest.approx(3.1, abs=0.01)
    assert wall < 2.5  # the executor did not wait for the 3 s sleep
    assert {e.tool for e in res.evidence} == {"probe", "signal_stats", "sleepy"}


def test_an_exception_in_one_tool_is_isolated_to_its_call(registry, a0, tmp_path):
    res = run(ToolExecutor(registry, tmp_path), [("failing", {}), ("probe", {}), ("crop", {"end_s": 1.0})], [a0])
    bad, probe, crop = res.tool_calls
    assert bad.status == ToolCallStatus.error
    assert bad.error == "RuntimeError: deliberate failure inside the tool"
    assert probe.status == ToolCallStatus.ok and crop.status == ToolCallStatus.ok
    assert [a.id for a in res.artifacts] == ["a1"] and crop.derived_artifact_ids == ["a1"]
    assert all(e.source_id != bad.id for e in res.evidence)


def test_a_tool_raising_on_bad_input_is_an_error_with_its_message(registry, a0, tmp_path):
    """A mono clip has no channels to split: the tool's own ValueError reaches the record."""
    (call,) = run(ToolExecutor(registry, tmp_path), [("channel_split", {})], [a0]).tool_calls
    assert call.status == ToolCallStatus.error and "mono" in call.error


# ---- cache ----------------------------------------------------------------------------------------------
def test_a_repeated_call_is_a_cache_hit_with_equal_outputs(registry, a0, tmp_path):
    cache = ToolCache(tmp_path / "cache")
    calls = [("signal_stats", {}), ("count_events", {"threshold_db": -30.0}), ("probe", {})]
    first = run(ToolExecutor(registry, tmp_path / "r1", cache=cache), calls, [a0])
    second = run(ToolExecutor(registry, tmp_path / "r2", cache=cache), calls, [a0], step=2)
    assert [c.status for c in first.tool_calls] == [ToolCallStatus.ok] * 3
    assert [c.status for c in second.tool_calls] == [ToolCallStatus.cached] * 3
    for c1, c2 in zip(first.tool_calls, second.tool_calls):
        assert c1.output == c2.output and c1.cache_key == c2.cache_key and c1.cache_key
        assert c1.id != c2.id
    assert [e.claim for e in first.evidence] == [e.claim for e in second.evidence]
    assert second.tool_calls[1].output["count"] == 3


def test_the_cache_is_keyed_by_content_not_path(registry, clip, tmp_path):
    """A byte-identical copy under another name hits the cache; a different clip misses it."""
    cache = ToolCache(tmp_path / "cache")
    copy = tmp_path / "copy.wav"
    copy.write_bytes(clip.read_bytes())
    other = synth.beeps(4, tmp_path / "other.wav")
    keys, statuses = [], []
    for path in (clip, copy, other):
        (call,) = run(ToolExecutor(registry, tmp_path, cache=cache), [("signal_stats", {})],
                      [ingest_original(path)]).tool_calls
        keys.append(call.cache_key)
        statuses.append(call.status)
    assert statuses == [ToolCallStatus.ok, ToolCallStatus.cached, ToolCallStatus.ok]
    assert keys[0] == keys[1] != keys[2]


def test_cache_key_changes_with_version_arguments_and_input_hash(registry, a0, tmp_path):
    m = registry.get("signal_stats")
    args, inputs = {"silence_threshold_db": -50.0}, {"artifact": a0.sha256}
    base = ToolCache.key(m, args, inputs)
    assert ToolCache.key(m, dict(args), dict(inputs)) == base  # deterministic
    assert ToolCache.key(m.model_copy(update={"version": m.version + ".1"}), args, inputs) != base
    assert ToolCache.key(m, {"silence_threshold_db": -40.0}, inputs) != base
    assert ToolCache.key(m, args, {"artifact": "0" * 64}) != base
    # and through the executor: a new argument value is a miss, the old one still a hit
    cache = ToolCache(tmp_path / "cache")
    ex = ToolExecutor(registry, tmp_path, cache=cache)
    s = [run(ex, [("signal_stats", {"silence_threshold_db": v})], [a0]).tool_calls[0] for v in (-50, -40, -50)]
    assert [c.status for c in s] == [ToolCallStatus.ok, ToolCallStatus.ok, ToolCallStatus.cached]
    assert s[0].cache_key == s[2].cache_key != s[1].cache_key


def test_a_new_tool_version_misses_the_cache(registry, a0, tmp_path):
    cache = ToolCache(tmp_path / "cache")
    (c1,) = run(ToolExecutor(registry, tmp_path, cache=cache), [("signal_stats", {})], [a0]).tool_calls
    bumped = registry.get("signal_stats").model_copy(update={"version": "99"})
    reg2 = ToolRegistry([bumped if m.name == "signal_stats" else m for m in registry.all()])
    (c2,) = run(ToolExecutor(reg2, tmp_path, cache=cache), [("signal_stats", {})], [a0]).tool_calls
    assert c1.status == c2.status == ToolCallStatus.ok and c1.cache_key != c2.cache_key
    assert c2.tool_version == "99"


def test_derivation_tools_are_never_served_from_the_cache(registry, a0, tmp_path):
    cache = ToolCache(tmp_path / "cache")
    ex = ToolExecutor(registry, tmp_path / "derived", cache=cache)
    r1 = run(ex, [("crop", {"start_s": 0.5, "end_s": 0.7})], [a0])
    r2 = run(ex, [("crop", {"start_s": 0.5, "end_s": 0.7})], [a0, *r1.artifacts], step=2)
    assert r1.tool_calls[0].status == r2.tool_calls[0].status == ToolCallStatus.ok
    assert r2.tool_calls[0].cache_key is None
    assert r1.artifacts[0].path != r2.artifacts[0].path and r1.artifacts[0].sha256 == r2.artifacts[0].sha256
    assert r2.artifacts[0].id == "a2"  # numbering continues after the artifacts already known


# ---- derived artifacts and provenance --------------------------------------------------------------------
def test_derived_artifacts_are_registered_with_provenance_and_a0_is_untouched(registry, a0, clip, tmp_path):
    before_sha, before = aio.sha256_file(clip), a0.model_copy(deep=True)
    res = run(ToolExecutor(registry, tmp_path / "derived"),
              [("crop", {"start_s": 0.5, "end_s": 1.4}), ("hpss", {}), ("probe", {})], [a0])
    crop_call, hpss_call, _ = res.tool_calls
    assert [a.id for a in res.artifacts] == ["a1", "a2", "a3"]
    a1, a2, a3 = res.artifacts
    assert crop_call.derived_artifact_ids == ["a1"] and hpss_call.derived_artifact_ids == ["a2", "a3"]
    assert (a1.derived_from, a1.operation, a1.created_by) == ("a0", "crop", crop_call.id)
    assert a1.parameters == {"start_s": 0.5, "end_s": 1.4}
    assert a1.duration_s == pytest.approx(0.9, abs=1 / 16000) and a1.sample_rate == 16000
    assert a1.sha256 == aio.sha256_file(a1.path) and Path(a1.path).parent == (tmp_path / "derived").resolve()
    assert [(a.operation, a.parameters["part"], a.created_by) for a in (a2, a3)] == [
        ("hpss", "harmonic", hpss_call.id), ("hpss", "percussive", hpss_call.id)]
    # derived audio is not evidence: only probe's claim is on record
    assert {e.tool for e in res.evidence} == {"probe"}
    assert aio.sha256_file(clip) == before_sha and a0 == before


def test_derived_artifacts_chain_and_later_tools_read_them(registry, a0, tmp_path):
    ex = ToolExecutor(registry, tmp_path / "derived")
    r1 = run(ex, [("crop", {"start_s": 0.4, "end_s": 1.0})], [a0])  # exactly one beep (0.5-0.7 s)
    arts = [a0, *r1.artifacts]
    r2 = run(ex, [("gain", {"artifact": "a1", "gain_db": -6.0}), ("count_events", {"artifact": "a1"})], arts,
             step=2)
    _, count_call = r2.tool_calls
    (a2,) = r2.artifacts
    assert (a2.id, a2.derived_from, a2.operation, a2.parameters) == ("a2", "a1", "gain", {"gain_db": -6.0})
    assert count_call.output["count"] == 1
    assert all(e.artifact_id == "a1" for e in r2.evidence)
    r3 = run(ex, [("signal_stats", {"artifact": "a2"}), ("signal_stats", {"artifact": "a1"})],
             [*arts, a2], step=3)
    peak2, peak1 = (c.output["peak_dbfs"] for c in r3.tool_calls)
    assert peak2 - peak1 == pytest.approx(-6.0, abs=0.05)


def test_derived_artifact_ids_continue_after_existing_ones(registry, a0, clip, tmp_path):
    other = make_artifact("a4", clip, derived_from="a0", operation="copy")
    res = run(ToolExecutor(registry, tmp_path), [("crop", {"artifact": "a4", "end_s": 0.5})], [a0, other])
    assert [a.id for a in res.artifacts] == ["a5"] and res.artifacts[0].derived_from == "a4"
