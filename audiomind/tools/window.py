"""An optional analysis window inside an artifact, shared by the feature tools that analyse a stretch of a
clip (pitch, tempo, key, chords, notes, spectral features, speech quality)."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field, model_validator

from audiomind.tools.base import ToolArgs, ToolContext

SR = 16000  # the shared analysis rate (one decode per artifact serves every 16 kHz tool)
FEATURE_BUDGET_S = 600.0
"""The most a feature tool analyses when the call names no end (`end_s`): pitch, tempo, key, chords, notes,
spectral features and speech quality hold their window in memory and take seconds per audio minute, so on a
long recording they take the first FEATURE_BUDGET_S seconds from start_s, and their coverage says so (a call
with an explicit end_s analyses exactly that window)."""


WindowStart = Annotated[float, Field(ge=0.0, description="analyse from this time (s)")]
WindowEnd = Annotated[float | None, Field(gt=0.0, description="analyse up to this time (s); default: the end")]
"""The two argument fields of an analysis window (`start_s: WindowStart = 0.0`, `end_s: WindowEnd = None`),
also for a tool whose arguments list them elsewhere than first."""


class WindowArgs(ToolArgs):
    """An optional analysis window inside the artifact; output times stay relative to the artifact."""

    start_s: WindowStart = 0.0
    end_s: WindowEnd = None

    @model_validator(mode="after")
    def _ordered(self) -> WindowArgs:
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError("end_s must be greater than start_s")
        return self


def excerpt(
    ctx: ToolContext, args: WindowArgs, sr: int = SR, min_s: float = 0.1
) -> tuple[np.ndarray, float, float]:
    """(samples of the window, its start, its end) in seconds of the artifact."""
    y = ctx.audio(args.artifact).samples(sr=sr, mono=True)
    duration = len(y) / sr
    end = duration if args.end_s is None else min(args.end_s, duration)
    if end - args.start_s < min_s:
        raise ValueError(
            f"analysis window {args.start_s:g}-{end:g} s is shorter than {min_s:g} s "
            f"(clip is {duration:.2f} s)"
        )
    requested = (args.start_s, end)
    note = None
    if args.end_s is None and end - args.start_s > FEATURE_BUDGET_S:
        end = args.start_s + FEATURE_BUDGET_S
        note = (f"budget: the first {FEATURE_BUDGET_S:g} s of the {requested[1] - requested[0]:.0f} s from "
                f"{args.start_s:g} s were analysed; name start_s and end_s to analyse another stretch")
    ctx.record_coverage([(args.start_s, end)], requested, 1, None, note)
    return y[round(args.start_s * sr) : round(end * sr)].astype(np.float32), args.start_s, end
