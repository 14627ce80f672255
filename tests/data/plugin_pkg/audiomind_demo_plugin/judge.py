"""The plugin's judge, in one file: is the clip's RMS level above a floor? Its agent tool is declared in its
spec (no manifest file), so `registries.judges.register` alone makes it a command, a route and a tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from audiomind import audio as audio_io
from audiomind.judges.base import JudgeSession, JudgeStep
from audiomind.judges.spec import AudioSlot, JudgeArgs, JudgeSpec, JudgeTool
from audiomind.judges.tools import JUDGE_TRACE, Out, output_model
from audiomind.tools.base import Claim


class LevelArgs(JudgeArgs):
    floor_db: float = Field(-30.0, ge=-90.0, le=0.0, description="the lowest RMS level (dBFS) that passes")


class LevelResult(BaseModel):
    judge: Literal["demo-level"] = "demo-level"
    rms_db: float
    floor_db: float
    passed: bool
    trace_path: str | None = None


def judge_level(audio: str | Path, *, floor_db: float = -30.0, trace_dir: str | Path | None = "traces",
                write_trace: bool = True, registry: Any = None, executor: Any = None) -> LevelResult:
    session = JudgeSession("demo-level", f"Is the RMS level of a0 at least {floor_db} dBFS?", [audio],
                           trace_dir=trace_dir, registry=registry, executor=executor, inputs={"floor_db": floor_db})
    y = audio_io.load(audio, sr=audio_io.probe(audio).sample_rate)
    rms_db = float(20 * np.log10(max(float(np.sqrt(np.mean(np.square(y, dtype=np.float64)))), 1e-10)))
    session.add(JudgeStep(number=1, name="rms", text=f"RMS {rms_db:.2f} dBFS", data={"rms_db": rms_db}))
    result = LevelResult(rms_db=rms_db, floor_db=floor_db, passed=rms_db >= floor_db)
    return session.conclude("loud enough" if result.passed else "too quiet", f"RMS {rms_db:.2f} dBFS", result,
                            write=write_trace)


LevelOutput = output_model("LevelOutput", {
    "rms_db": Out(float, "RMS level (dBFS)"),
    "passed": Out(bool, "the level is at or above the floor"),
    "judge_trace": JUDGE_TRACE,
}, __name__)


def level_claims(r: LevelResult, args: Any) -> list[Claim]:
    return [Claim(text=f"RMS level of {args.artifact}: {r.rms_db:.2f} dBFS (floor {r.floor_db} dBFS).",
                  data={"rms_db": r.rms_db})]


SPEC = JudgeSpec(
    name="demo-level", summary="Is the RMS level of the audio above a floor?", args=LevelArgs,
    audio=(AudioSlot(name="audio", help="the audio to check"),), run=judge_level, result=LevelResult,
    tool=JudgeTool(function="Checks whether the RMS level of an audio artifact reaches a floor in dBFS.",
                   supports=("whether the audio is loud enough",), not_for=("what the audio contains",),
                   output=LevelOutput, claims=level_claims, example={"artifact": "a0", "floor_db": -20.0}))
