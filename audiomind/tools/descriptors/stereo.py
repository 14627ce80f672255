"""Stereo position over time: a pan trajectory (left to right, right to left, or steady on one side), not only
a mean balance.

The file is streamed at 16 kHz with every channel (one 60 s block at a time, so an hour-long file stays in
bounded memory); per 100 ms frame the left and right powers give a position by the constant-power pan law,
-1 hard left, 0 centre, +1 hard right (position = 4/pi x atan(sqrt(P_right / P_left)) - 1). Frames with sound
(within 30 dB of the loudest) are smoothed (median of 5) and the mean positions of the first and last quarter
of them compared: a move of >= MOVE (and ending past +-SIDE) is a trajectory."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from audiomind import audio as audio_io
from audiomind.tools.base import ANALYSIS_WINDOW_S, Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs

SR = 16000
FRAME = 1600            # 100 ms
MOVE = 0.6              # start-to-end change of position that is a movement
SIDE = 0.2              # |position| at or above this is off centre (about 3 dB between channels)
MAX_POINTS = 120


class PanArgs(WindowArgs):
    pass


class PanTrajectoryOutput(CoveredOutput):
    label: Literal["left_to_right", "right_to_left", "steady_left", "steady_center", "steady_right", "mono",
                   "silent"] = Field(description="the trajectory")
    start_position: float | None = Field(description="mean position over the first quarter of the sound (-1 left, +1 right)")
    end_position: float | None = Field(description="mean position over the last quarter of the sound")
    mean_position: float | None = Field(description="mean position over the sound")
    time_s: list[float] = Field(description="times of the trajectory points (s)")
    position: list[float] = Field(description="position per point (-1 hard left, 0 centre, +1 hard right)")
    analysed_s: AnalysedWindow


def _frames(path: str, start_s: float, end_s: float | None) -> tuple[np.ndarray, np.ndarray, int]:
    """(left power, right power) per 100 ms frame, streamed; channels of the file."""
    left, right, rest, channels = [], [], None, 1
    for block in audio_io.iter_blocks(path, sr=SR, mono=False, block_s=ANALYSIS_WINDOW_S, start_s=start_s,
                                      end_s=end_s):
        b = block if block.ndim == 2 else block[None, :]
        channels = b.shape[0]
        if channels < 2:
            return np.zeros(0), np.zeros(0), 1
        b = b[:2].astype(np.float64)
        if rest is not None:
            b = np.concatenate([rest, b], axis=1)
        n = b.shape[1] // FRAME
        rest = b[:, n * FRAME:]
        p = (b[:, : n * FRAME] ** 2).reshape(2, n, FRAME).mean(axis=2)
        left.append(p[0])
        right.append(p[1])
    if not left:
        return np.zeros(0), np.zeros(0), channels
    return np.concatenate(left), np.concatenate(right), channels


def pan_trajectory(args: PanArgs, ctx: ToolContext) -> ToolResult:
    audio = ctx.audio(args.artifact)
    end = audio.duration_s if args.end_s is None else min(args.end_s, audio.duration_s)
    ctx.record_coverage([(args.start_s, end)], (args.start_s, end))
    pl, pr, channels = _frames(audio.path, args.start_s, args.end_s)
    base = {"analysed_s": (round(args.start_s, 3), round(end, 3))}
    empty = {"start_position": None, "end_position": None, "mean_position": None, "time_s": [], "position": []}
    if channels < 2:
        return ToolResult(output={**base, **empty, "label": "mono"},
                          claims=[Claim(text="The clip is mono: no stereo position or movement can be heard.",
                                        data={"label": "mono"})])
    total = pl + pr
    db = 10 * np.log10(total + 1e-12)
    act = (db >= db.max() - 30.0) & (db > -80.0) if len(db) else np.zeros(0, dtype=bool)
    if act.sum() < 3:
        return ToolResult(output={**base, **empty, "label": "silent"},
                          claims=[Claim(text="No stereo position: the stereo clip is silent.", data={"label": "silent"})])
    pos = 4 / np.pi * np.arctan(np.sqrt((pr + 1e-12) / (pl + 1e-12))) - 1
    t = args.start_s + (np.arange(len(pos)) + 0.5) * FRAME / SR
    idx = np.flatnonzero(act)
    p = pos[idx]
    if len(p) >= 5:
        pad = np.pad(p, 2, mode="edge")
        p = np.median(np.lib.stride_tricks.sliding_window_view(pad, 5), axis=1)
    q = max(1, len(p) // 4)
    start, finish, mean = float(p[:q].mean()), float(p[-q:].mean()), float(p.mean())
    if finish - start >= MOVE and finish >= SIDE and start <= -SIDE / 2:
        label = "left_to_right"
    elif start - finish >= MOVE and finish <= -SIDE and start >= SIDE / 2:
        label = "right_to_left"
    else:
        label = "steady_left" if mean <= -SIDE else "steady_right" if mean >= SIDE else "steady_center"
    step = max(1, int(np.ceil(len(idx) / MAX_POINTS)))
    out = {**base, "label": label, "start_position": round(start, 3), "end_position": round(finish, 3),
           "mean_position": round(mean, 3), "time_s": [round(float(x), 2) for x in t[idx][::step]],
           "position": [round(float(x), 3) for x in p[::step]]}
    words = {"left_to_right": "moves from left to right", "right_to_left": "moves from right to left",
             "steady_left": "stays on the left", "steady_right": "stays on the right",
             "steady_center": "stays in the centre"}[label]
    text = (f"The sound {words}: stereo position {start:+.2f} over its first quarter and {finish:+.2f} over its last "
            f"(-1 hard left, +1 hard right; mean {mean:+.2f}).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "start_position": out["start_position"],
                                                                 "end_position": out["end_position"]})])
