"""metadata_validation tools: what the file is (container, codec, duration, rate, channels) and basic
signal statistics. They validate the input; they say nothing about what the audio contains."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from audiomind import audio as audio_io
from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult


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


def signal_stats(args: SignalStatsArgs, ctx: ToolContext) -> ToolResult:
    a = ctx.audio(args.artifact)
    y = a.samples(sr=16000, mono=True).astype(np.float64)
    peak = float(np.max(np.abs(y)))
    rms = float(np.sqrt(np.mean(y**2)))
    frame = 400
    n = len(y) // frame
    frames_db = 20 * np.log10(np.sqrt(np.mean(y[: n * frame].reshape(n, frame) ** 2, axis=1)) + 1e-12) if n else []
    silence_ratio = float(np.mean(np.asarray(frames_db) < args.silence_threshold_db)) if n else 1.0
    clipped = float(np.mean(np.abs(y) >= 0.999))
    out = {
        "peak_dbfs": round(20 * np.log10(peak + 1e-12), 2),
        "rms_dbfs": round(20 * np.log10(rms + 1e-12), 2),
        "clipping_ratio": round(clipped, 6),
        "dc_offset": round(float(np.mean(y)), 6),
        "silence_ratio": round(silence_ratio, 4),
    }
    multi = a.samples(sr=16000, mono=False).astype(np.float64)
    channels = multi[None] if multi.ndim == 1 else multi  # (channels, n)
    out["channel_rms_dbfs"] = [round(20 * np.log10(float(np.sqrt(np.mean(ch**2))) + 1e-12), 2) for ch in channels]
    out["balance_db"] = (round(out["channel_rms_dbfs"][0] - out["channel_rms_dbfs"][1], 2)
                         if len(out["channel_rms_dbfs"]) >= 2 else None)
    text = (
        f"Peak {out['peak_dbfs']} dBFS, RMS {out['rms_dbfs']} dBFS, {100 * clipped:.2f}% clipped samples, "
        f"{100 * silence_ratio:.0f}% of 25 ms frames below {args.silence_threshold_db:.0f} dBFS."
        + (f" Channels: {', '.join(f'{x:g}' for x in out['channel_rms_dbfs'])} dBFS RMS; left minus right "
           f"{out['balance_db']:+.1f} dB." if out["balance_db"] is not None else "")
    )
    return ToolResult(output=out, claims=[Claim(text=text, data=out)])
