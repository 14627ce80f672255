"""The run's time budget bounds the tools too (issue 35: a `--time-budget 10` run took 47 s, 32 s of it in the
cascade's perception pass): a call the budget leaves no time for is not started and says so; one still running
when it runs out is abandoned on time, and its decoding stops at the next block instead of going on in the
background; a whole-file decode too large to hold is refused from the header; the cascade perceives at most
its first PERCEPTION_MAX_S seconds of a long clip, as an excerpt on record. All in-process, each in seconds."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiomind import audio as aio
from audiomind.artifacts import ingest_original, make_artifact
from audiomind.backends.base import AnswerRequest, ListenRequest
from audiomind.backends.deadline import Budget, run_budget
from audiomind.backends.frontends import cascade
from audiomind.state import ToolCallRequest, ToolCallStatus
from audiomind.tools.executor import ToolExecutor
from audiomind.tools.manifest import ToolRegistry

from .conftest import write_tone

pytestmark = pytest.mark.timeout(60)

USER_MODULE = "audiomind_budget_usertools"
USER_SOURCE = '''
"""Test tools: one that sleeps, one that decodes its whole input (and says how it ended)."""
import threading
import time

from pydantic import Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolResult

ENDED = {}
DONE = threading.Event()


class SleepArgs(ToolArgs):
    seconds: float = Field(1.0, ge=0.0, le=30.0)


def sleepy(args: SleepArgs, ctx: ToolContext) -> ToolResult:
    time.sleep(args.seconds)
    return ToolResult(output={"slept": args.seconds}, claims=[Claim(text=f"slept {args.seconds} s")])


class DecodeArgs(ToolArgs):
    pass


def decoder(args: DecodeArgs, ctx: ToolContext) -> ToolResult:
    t0 = time.monotonic()
    try:
        y = ctx.audio(args.artifact).samples(sr=16000)
        ENDED["how"] = "finished"
        return ToolResult(output={"n": int(y.size)})
    except BaseException as exc:
        ENDED["how"] = type(exc).__name__
        raise
    finally:
        ENDED["after_s"] = time.monotonic() - t0
        DONE.set()
'''


@pytest.fixture(scope="module")
def tools_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("budget_tools")
    (root / "code").mkdir()
    (root / "code" / f"{USER_MODULE}.py").write_text(USER_SOURCE)
    (root / "manifests").mkdir()
    for name, entry in (("sleepy", "sleepy"), ("decoder", "decoder")):
        (root / "manifests" / f"{name}.toml").write_text(
            f'name = "{name}"\nversion = "1"\ncategory = "evaluation"\nfunction = "test tool {name}"\n'
            f'supports = ["nothing: a test tool"]\nnot_for = ["anything real"]\n'
            f'entry = "{USER_MODULE}:{entry}"\ntimeout_s = 30\ncacheable = false\nexample = {{ artifact = "a0" }}\n')
    return root


@pytest.fixture
def executor(tools_dir, monkeypatch, tmp_path) -> ToolExecutor:
    monkeypatch.syspath_prepend(str(tools_dir / "code"))
    return ToolExecutor(ToolRegistry.load([tools_dir / "manifests"]), tmp_path / "derived")


@pytest.fixture
def a0(tmp_path):
    return ingest_original(write_tone(tmp_path / "tone.wav", seconds=1.0))


def _silent_flac(path: Path, hours: float, sr: int = 8000) -> Path:
    """Hours of digital silence as FLAC, written in 10-minute blocks (it compresses to almost nothing)."""
    with sf.SoundFile(path, "w", samplerate=sr, channels=1, format="FLAC", subtype="PCM_16") as f:
        block = np.zeros(sr * 600, dtype=np.int16)
        for _ in range(round(hours * 6)):
            f.write(block)
    return path


def test_a_call_is_not_started_once_the_budget_is_spent(executor, a0):
    spent = Budget(5.0, started=time.monotonic() - 6.0)
    t0 = time.monotonic()
    res = executor.run([ToolCallRequest(tool="sleepy", arguments={"artifact": "a0", "seconds": 3})], [a0], step=0,
                       budget=spent)
    call = res.tool_calls[0]
    assert time.monotonic() - t0 < 1.0
    assert call.status == ToolCallStatus.timeout and call.duration_s == 0.0 and call.output is None
    assert call.error == "skipped: the run's time budget of 5 s was spent before it could start"


def test_a_running_call_is_abandoned_when_the_budget_runs_out(executor, a0):
    budget = Budget(1.5)
    t0 = time.monotonic()
    res = executor.run([ToolCallRequest(tool="sleepy", arguments={"artifact": "a0", "seconds": 8}),
                        ToolCallRequest(tool="sleepy", arguments={"artifact": "a0", "seconds": 0.1})], [a0], step=0,
                       budget=budget)
    took = time.monotonic() - t0
    slow, quick = res.tool_calls
    assert took < 2.5, took  # the budget, not the 8 s sleep nor the tool's 30 s timeout
    assert slow.status == ToolCallStatus.timeout and "time budget of 1.5 s ran out while it ran" in slow.error
    assert slow.timeout_s == 30.0  # the tool's own timeout stays on record
    assert quick.status == ToolCallStatus.ok  # what finished in time is kept
    assert not any(t.name == "audiomind-tool" and not t.daemon for t in threading.enumerate())


def test_an_abandoned_decode_stops_at_its_next_block(executor, tmp_path):
    """A decode of 2 hours at 16 kHz (460 MB, a second or more here) abandoned 0.2 s in ends within a block."""
    clip = make_artifact("a0", _silent_flac(tmp_path / "long.flac", hours=2.0), operation="input")
    aio.DECODED.clear()
    mod = sys.modules.get(USER_MODULE)
    if mod is not None:
        mod.DONE.clear()
        mod.ENDED.clear()
    res = executor.run([ToolCallRequest(tool="decoder", arguments={"artifact": "a0"})], [clip], step=0,
                       budget=Budget(0.2))
    call = res.tool_calls[0]
    assert call.status == ToolCallStatus.timeout and "time budget" in call.error
    mod = sys.modules[USER_MODULE]
    assert mod.DONE.wait(10), "the abandoned decode went on"
    assert mod.ENDED["how"] == "DecodeDeadline" and mod.ENDED["after_s"] < 6, mod.ENDED
    assert len(aio.DECODED) == 0  # nothing half-decoded was kept


def test_a_decode_past_its_deadline_raises_and_does_not_fall_back_to_ffmpeg(tmp_path):
    clip = write_tone(tmp_path / "t.wav", seconds=2.0)
    with aio.decode_deadline(time.monotonic() - 1), pytest.raises(aio.DecodeDeadline):
        aio.load(clip)
    assert aio.load(clip).size == 32000  # no deadline outside the context


def test_a_whole_decode_too_large_to_hold_is_refused_from_the_header(tmp_path, monkeypatch):
    clip = _silent_flac(tmp_path / "hour.flac", hours=1.0)
    monkeypatch.setattr(aio, "MAX_DECODE_BYTES", 100 << 20)  # an hour at 16 kHz is 230 MB
    t0 = time.monotonic()
    with pytest.raises(aio.AudioError, match="too long to decode whole at 16000 Hz"):
        aio.load(clip, sr=16000)
    assert time.monotonic() - t0 < 1.0
    assert aio.load(clip, sr=4000).size == 3600 * 4000  # 58 MB: within the cap


def test_ingest_does_not_hold_a_clip_too_long_for_the_decode_cache(tmp_path, monkeypatch):
    clip = _silent_flac(tmp_path / "hour.flac", hours=1.0)
    monkeypatch.setattr(aio.DECODED, "max_bytes", 100 << 20)
    aio.DECODED.clear()
    art = ingest_original(clip)
    assert art.duration_s == 3600.0 and len(aio.DECODED) == 0  # its first minute was decoded, not kept


def _perceiver(tmp_path, allowed: set[str]) -> cascade.CascadeFrontEnd:
    return cascade.CascadeFrontEnd(ToolExecutor(ToolRegistry.load(), tmp_path / "derived", allowed=allowed))


def test_the_cascade_perceives_the_first_stretch_of_a_long_clip_as_an_excerpt(tmp_path, monkeypatch):
    monkeypatch.setattr(cascade, "PERCEPTION_MAX_S", 2.0)
    a0 = ingest_original(write_tone(tmp_path / "five.wav", seconds=5.0))
    fe = _perceiver(tmp_path, {"probe", "loudness"})
    res = fe.listen(ListenRequest(kind="perception", artifacts=[a0], prompt="", prompt_id="p", question="what?",
                                  choices=[], step=0))
    (excerpt,) = [a for a in res.derived_artifacts if a.operation == "excerpt"]
    assert excerpt.derived_from == "a0" and excerpt.id == "a1" and excerpt.duration_s == 2.0
    assert excerpt.sample_rate == a0.sample_rate and excerpt.channels == a0.channels
    assert {c.tool for c in res.tool_calls} == {"probe", "loudness"}
    assert all(c.arguments["artifact"] == "a1" and c.status == ToolCallStatus.ok for c in res.tool_calls)
    said = "Perception analysed only the first 2 s of the 5 s clip a0 (excerpt a1)"
    assert said in res.description and said in res.open_needs[0] and said in res.uncertainty
    ask = AnswerRequest(original=a0, question="Is it loud or quiet?", choices=["loud", "quiet"], evidence_summary="",
                        evidence=res.evidence, prompt="", prompt_id="p", tool_calls=res.tool_calls)
    assert fe.answer(ask).rationale.count("(from the first 2 s of the 5 s clip, excerpt a1)") == 1
    whole = fe.executor.run([ToolCallRequest(tool=t, arguments={"artifact": "a0"}) for t in ("probe", "loudness")],
                            [a0], step=1)  # the planner ran the same tools on the whole clip: its facts answer
    ask = ask.model_copy(update={"tool_calls": res.tool_calls + whole.tool_calls,
                                 "evidence": res.evidence + whole.evidence})
    assert "excerpt" not in fe.answer(ask).rationale


def test_the_cascade_starts_no_tool_once_the_budget_is_spent(tmp_path):
    a0 = ingest_original(write_tone(tmp_path / "tone.wav", seconds=1.0))
    fe = _perceiver(tmp_path, {"probe", "loudness", "signal_stats"})
    with run_budget(2.0, elapsed=3.0):
        res = fe.listen(ListenRequest(kind="perception", artifacts=[a0], prompt="", prompt_id="p", question="what?",
                                      choices=[], step=0))
    assert len(res.tool_calls) == 3
    assert all(c.status == ToolCallStatus.timeout and c.error.startswith("skipped: the run's time budget")
               for c in res.tool_calls)
    assert "not available (timeout: skipped" in res.description


@pytest.mark.parametrize("mode", ["agent", "direct"])
def test_a_run_whose_budget_ends_in_perception_still_answers_on_record(tmp_path, mode):
    """A budget spent before perception: every perception tool is skipped and says why, no tool runs later, and
    the run ends with its trace and outcome bound_hit='time_budget' (no embedded model is loaded)."""
    from audiomind.api import AudioMind

    agent = AudioMind(trace_dir=tmp_path / "traces", time_budget_s=0.001, mode=mode, use_cache=False)
    t0 = time.monotonic()
    result = agent.ask(write_tone(tmp_path / "tone.wav"), "Is there a tone?", ["yes", "no"])
    assert time.monotonic() - t0 < 10
    st = result.state
    assert st.outcome.bound_hit == "time_budget" and Path(result.trace_path).is_file()
    assert st.tool_calls and all(c.status == ToolCallStatus.timeout and c.error.startswith(
        "skipped: the run's time budget of 0.001 s was spent") for c in st.tool_calls)
