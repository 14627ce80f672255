"""The plugin's tool: peak and RMS level of an artifact, in dBFS."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult


class PeakLevelArgs(ToolArgs):
    pass


class PeakLevelOutput(ToolOutput):
    peak_dbfs: float = Field(description="largest absolute sample, dB re full scale")
    rms_dbfs: float = Field(description="root mean square level, dB re full scale")


def _db(x: float) -> float:
    return round(20.0 * float(np.log10(max(x, 1e-10))), 2)


def peak_level(args: PeakLevelArgs, ctx: ToolContext) -> ToolResult:
    x = ctx.audio(args.artifact).samples(sr=16000, mono=True)
    peak, rms = _db(float(np.max(np.abs(x)))), _db(float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))))
    return ToolResult(output=PeakLevelOutput(peak_dbfs=peak, rms_dbfs=rms).model_dump(),
                      claims=[Claim(text=f"Peak {peak} dBFS, RMS {rms} dBFS.", data={"peak_dbfs": peak})])
