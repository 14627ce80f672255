"""metadata_validation tools: what the file is (container, codec, duration, rate, channels) and basic
signal statistics. They validate the input; they say nothing about what the audio contains."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from audiomind import audio as audio_io
from audiomind.state import Coverage
from audiomind.tools.base import (
    ANALYSIS_WINDOW_S,
    Claim,
    ToolArgs,
    ToolContext,
    ToolOutput,
    ToolResult,
    coverage,
)


class ProbeArgs(ToolArgs):
    pass


class ProbeOutput(ToolOutput):
    format: str = Field(description="container format as FFmpeg/libsndfile names it (e.g. wav, mp3)")
    codec: str = Field(description="audio codec (e.g. pcm_s16le)")
    duration_s: float = Field(description="duration (s)")
    sample_rate: int = Field(description="sample rate (Hz)")
    channels: int = Field(description="number of channels")
    bit_rate: int | None = Field(None, description="bit rate (bit/s); None when the container does not say")
    size_bytes: int = Field(description="file size (bytes)")


def probe(args: ProbeArgs, ctx: ToolContext) -> ToolResult:
    info = audio_io.probe(ctx.audio(args.artifact).path)
    out = info.model_dump(exclude={"path"})
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"The file is {info.format}/{info.codec}, {info.duration_s:.2f} s long, "
                    f"{info.sample_rate} Hz, {info.channels} channel(s)."
                ),
                data={"duration_s": info.duration_s, "sample_rate": info.sample_rate, "channels": info.channels},
            )
        ],
    )


class SignalStatsArgs(ToolArgs):
    silence_threshold_db: float = Field(-50.0, description="frames quieter than this (dBFS) count as silence")


class SignalStatsOutput(ToolOutput):
    peak_dbfs: float = Field(description="sample peak (dBFS; about -240 for digital silence)")
    rms_dbfs: float = Field(description="RMS level of the whole clip (dBFS)")
    clipping_ratio: float = Field(description="share of samples at or above 0.999 full scale (0-1)")
    dc_offset: float = Field(description="mean sample value (full scale = 1)")
    silence_ratio: float = Field(description="share of 25 ms frames below silence_threshold_db (0-1)")
    channel_rms_dbfs: list[float] = Field(default_factory=list,
                                          description="RMS level of each channel (dBFS), in file order (left, right, ...)")
    balance_db: float | None = Field(default=None, description="left minus right RMS (dB; positive = louder on the left); "
                                                               "None for mono")
    coverage: Coverage | None = Field(None, description="the stretches measured and in how many windows")


def signal_stats(args: SignalStatsArgs, ctx: ToolContext) -> ToolResult:
    """Level statistics over 60 s windows (float64 per window, never a float64 copy of the clip)."""
    a = ctx.audio(args.artifact)
    y = a.samples(sr=16000, mono=True)
    frame = 400
    step = int(ANALYSIS_WINDOW_S * 16000) // frame * frame  # whole 25 ms frames per window
    n = len(y) // frame
    peak, sq, total, clipped, silent, windows = 0.0, 0.0, 0.0, 0, 0, 0
    for i in range(0, len(y), step):
        w = y[i : i + step].astype(np.float64)
        windows += 1
        peak = max(peak, float(np.max(np.abs(w))))
        sq += float(np.sum(w**2))
        total += float(np.sum(w))
        clipped += int(np.count_nonzero(np.abs(w) >= 0.999))
        k = len(w) // frame if i + len(w) < len(y) else n - i // frame
        if k > 0:
            frames_db = 20 * np.log10(np.sqrt(np.mean(w[: k * frame].reshape(k, frame) ** 2, axis=1)) + 1e-12)
            silent += int(np.count_nonzero(frames_db < args.silence_threshold_db))
    rms = float(np.sqrt(sq / len(y))) if len(y) else 0.0
    silence_ratio = silent / n if n else 1.0
    clipped = clipped / len(y) if len(y) else 0.0
    out = {
        "peak_dbfs": round(20 * np.log10(peak + 1e-12), 2),
        "rms_dbfs": round(20 * np.log10(rms + 1e-12), 2),
        "clipping_ratio": round(clipped, 6),
        "dc_offset": round(total / len(y), 6) if len(y) else 0.0,
        "silence_ratio": round(silence_ratio, 4),
    }
    if int(a.artifact.channels or 1) == 1:
        channel_sq = [sq]
    else:  # each channel's level, streamed from the file (no multichannel copy of the clip is kept)
        channel_sq = None
        for block in audio_io.iter_blocks(a.path, sr=16000, mono=False, block_s=ANALYSIS_WINDOW_S):
            s_blk = np.sum(block.astype(np.float64) ** 2, axis=1)
            channel_sq = s_blk if channel_sq is None else channel_sq + s_blk
        channel_sq = list(channel_sq) if channel_sq is not None else [sq]
    out["channel_rms_dbfs"] = [round(20 * np.log10(float(np.sqrt(c / max(len(y), 1))) + 1e-12), 2)
                               for c in channel_sq]
    out["balance_db"] = (round(out["channel_rms_dbfs"][0] - out["channel_rms_dbfs"][1], 2)
                         if len(out["channel_rms_dbfs"]) >= 2 else None)
    out["coverage"] = coverage([(0.0, len(y) / 16000)], (0.0, len(y) / 16000), windows, ANALYSIS_WINDOW_S)
    text = (
        f"Peak {out['peak_dbfs']} dBFS, RMS {out['rms_dbfs']} dBFS, {100 * clipped:.2f}% clipped samples, "
        f"{100 * silence_ratio:.0f}% of 25 ms frames below {args.silence_threshold_db:.0f} dBFS."
        + (f" Channels: {', '.join(f'{x:g}' for x in out['channel_rms_dbfs'])} dBFS RMS; left minus right "
           f"{out['balance_db']:+.1f} dB." if out["balance_db"] is not None else "")
    )
    return ToolResult(output=out, claims=[Claim(text=text, data={k: v for k, v in out.items() if k != "coverage"})])
