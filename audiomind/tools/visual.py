"""visual_inspection: spectrogram and waveform pictures (PNG) of an artifact or a window of it.

They exist for front ends that take images and for the trace viewer / a human auditor. A picture is not
evidence of content by itself, so these tools make no claims: the output is the image path plus how to
read it (pixel box of the plot, time and frequency axes). The PNG lives in the run's derived folder; it
is not a derived *audio* artifact. Drawing uses matplotlib's object API (Figure + Agg canvas), never
pyplot, so calls from the executor's thread pool do not share global figure state.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from audiomind.tools.base import ToolArgs, ToolContext, ToolOutput, ToolResult

DPI = 100


class _WindowArgs(ToolArgs):
    start_s: float = Field(0.0, ge=0.0, description="start of the window to draw (s)")
    end_s: float | None = Field(None, gt=0.0, description="end of the window (s); None = end of the clip")

    @model_validator(mode="after")
    def _ordered(self):
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError("end_s must be greater than start_s")
        return self


def _window(ctx: ToolContext, args: _WindowArgs, mono: bool) -> tuple[np.ndarray, int, float, float]:
    """(samples of the window at the artifact's own rate, rate, start_s, end_s)."""
    a = ctx.audio(args.artifact)
    sr = int(a.artifact.sample_rate)
    y = a.samples(sr=sr, mono=mono)
    n = y.shape[-1]
    total = n / sr
    if args.start_s >= total:
        raise ValueError(f"start_s {args.start_s:g} s is at or past the end of {args.artifact} ({total:.3f} s)")
    end = total if args.end_s is None else min(args.end_s, total)
    i0, i1 = round(args.start_s * sr), round(end * sr)
    return y[..., i0:i1], sr, i0 / sr, i1 / sr


def _figure(width_px: int, height_px: int):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_px / DPI, height_px / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


NOTE = "a picture for front ends that take images and for auditors; not evidence by itself"


class PictureOutput(ToolOutput):
    """The fields every picture tool's output starts with: which PNG it wrote, and its size."""

    image_path: str = Field(description="the PNG written")
    format: str = Field(description="image format (png)")
    width_px: int = Field(description="image width (px)")
    height_px: int = Field(description="image height (px)")


def _save(fig, ctx: ToolContext, args: SpectrogramArgs | WaveformArgs, kind: str) -> dict:
    """Write the figure as a PNG in the run's derived folder; the output's `PictureOutput` fields."""
    path = ctx.new_derived_path(f"{args.artifact}_{kind}", ".png")
    fig.savefig(str(path), dpi=DPI, format="png")
    return {"image_path": str(path), "format": "png", "width_px": args.width_px, "height_px": args.height_px}


def _box_px(fig, ax) -> list[int]:
    """The axes' plot area in image pixels [x0, y0, x1, y1], origin at the top-left (as image readers use)."""
    fig.canvas.draw()
    x0, y0, x1, y1 = ax.get_window_extent().extents
    h = fig.bbox.height
    return [int(v) for v in np.rint([x0, h - y1, x1, h - y0])]


class SpectrogramArgs(_WindowArgs):
    n_mels: int = Field(128, ge=16, le=256, description="mel bands (image rows of the plot)")
    fmax_hz: float | None = Field(None, ge=500.0, le=96000.0, description="top of the frequency axis (Hz); "
                                                                          "None = Nyquist")
    top_db: float = Field(80.0, ge=20.0, le=120.0, description="dynamic range shown below the loudest bin (dB)")
    width_px: int = Field(1200, ge=200, le=4000, description="image width in pixels")
    height_px: int = Field(500, ge=150, le=2000, description="image height in pixels")


class FrequencyAxis(ToolOutput):
    scale: str = Field(description="frequency scale of the image rows (mel)")
    fmin_hz: float = Field(description="bottom of the axis (Hz)")
    fmax_hz: float = Field(description="top of the axis (Hz)")
    n_mels: int = Field(description="mel bands (image rows)")


class SpectrogramOutput(PictureOutput):
    plot_box_px: list[int] = Field(description="plot area [x0, y0, x1, y1] in pixels, origin top-left")
    time_axis_s: tuple[float, float] = Field(description="time at the left and right plot edges (s)")
    frequency_axis: FrequencyAxis = Field(description="the vertical axis")
    db_range: tuple[float, float] = Field(description="colour scale [min, max] (dB re the loudest bin)")
    sample_rate: int = Field(description="sample rate drawn (Hz)")
    n_fft: int = Field(description="STFT size")
    hop_length: int = Field(description="STFT hop (samples)")
    note: str = Field(description="what the picture is for")


def spectrogram(args: SpectrogramArgs, ctx: ToolContext) -> ToolResult:
    """Mel power spectrogram in dB (librosa), drawn with a Hz axis at mel spacing and a dB colour bar."""
    import librosa

    y, sr, t0, t1 = _window(ctx, args, mono=True)
    fmax = min(args.fmax_hz or sr / 2, sr / 2)
    n_fft = 2048 if sr > 24000 else 1024
    hop = n_fft // 4
    S = librosa.feature.melspectrogram(y=y, sr=sr, n_fft=n_fft, hop_length=hop, n_mels=args.n_mels, fmin=0.0,
                                       fmax=fmax, power=2.0)
    S_db = librosa.power_to_db(S, ref=np.max, top_db=args.top_db) if S.max() > 0 else np.full_like(S, -args.top_db)
    fig = _figure(args.width_px, args.height_px)
    ax = fig.add_axes((0.08, 0.12, 0.8, 0.8))
    cax = fig.add_axes((0.9, 0.12, 0.02, 0.8))
    im = ax.imshow(S_db, origin="lower", aspect="auto", cmap="magma", interpolation="nearest",
                   extent=(t0, t1, 0, args.n_mels), vmin=-args.top_db, vmax=0.0)
    # mel band centres, so ticks in Hz sit where those frequencies are drawn
    centres = librosa.mel_frequencies(n_mels=args.n_mels, fmin=0.0, fmax=fmax)
    ticks = [f for f in (0, 125, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000) if f <= fmax]
    ax.set_yticks([float(np.interp(f, centres, np.arange(args.n_mels)) + 0.5) for f in ticks])
    ax.set_yticklabels([f"{f / 1000:g}k" if f >= 1000 else f"{f:g}" for f in ticks])
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (Hz, mel scale)")
    ax.set_title(f"{args.artifact} mel spectrogram {t0:.2f}-{t1:.2f} s")
    fig.colorbar(im, cax=cax, label="dB (re. max)")
    box = _box_px(fig, ax)
    out = {
        **_save(fig, ctx, args, "spectrogram"),
        "plot_box_px": box,
        "time_axis_s": [round(t0, 4), round(t1, 4)],
        "frequency_axis": {"scale": "mel", "fmin_hz": 0.0, "fmax_hz": round(fmax, 1), "n_mels": args.n_mels},
        "db_range": [-args.top_db, 0.0],
        "sample_rate": sr,
        "n_fft": n_fft,
        "hop_length": hop,
        "note": NOTE,
    }
    return ToolResult(output=out)


class WaveformArgs(_WindowArgs):
    width_px: int = Field(1200, ge=200, le=4000, description="image width in pixels")
    height_px: int = Field(300, ge=150, le=2000, description="image height in pixels (all channel panels)")


class WaveformOutput(PictureOutput):
    channels: int = Field(description="channel panels drawn")
    plot_box_px: list[list[int]] = Field(description="per channel panel: [x0, y0, x1, y1] pixels, origin top-left")
    time_axis_s: tuple[float, float] = Field(description="time at the left and right plot edges (s)")
    amplitude_axis: tuple[float, float] = Field(description="amplitude range of each panel (full scale = 1)")
    sample_rate: int = Field(description="sample rate drawn (Hz)")
    note: str = Field(description="what the picture is for")


def waveform(args: WaveformArgs, ctx: ToolContext) -> ToolResult:
    """Min/max envelope per pixel column (exact peaks, fast for hours of audio), one panel per channel."""
    y, sr, t0, t1 = _window(ctx, args, mono=False)
    y = y if y.ndim == 2 else y[None, :]
    fig = _figure(args.width_px, args.height_px)
    n_ch = y.shape[0]
    left, right, bottom, top = 0.08, 0.98, 0.15, 0.9
    panel_h = (top - bottom) / n_ch
    boxes = []
    for k in range(n_ch):
        ax = fig.add_axes((left, top - (k + 1) * panel_h, right - left, panel_h * 0.92))
        plot_w = max(1, round((right - left) * args.width_px))
        n = y.shape[1]
        cols = min(plot_w, n)
        edges = np.linspace(0, n, cols + 1).astype(int)
        lo = np.minimum.reduceat(y[k], edges[:-1])
        hi = np.maximum.reduceat(y[k], edges[:-1])
        tt = t0 + (edges[:-1] + edges[1:]) / 2 / sr
        ax.fill_between(tt, lo, hi, color="#1f4e79", linewidth=0.6, edgecolor="#1f4e79", step="mid")
        ax.set_xlim(t0, t1)
        ax.set_ylim(-1.0, 1.0)
        ax.axhline(0.0, color="#999999", linewidth=0.4)
        ax.set_yticks([-0.5, 0.0, 0.5] if n_ch > 1 else [-1.0, -0.5, 0.0, 0.5, 1.0])
        ax.set_ylabel(("L", "R")[k] if n_ch == 2 else (f"ch{k}" if n_ch > 1 else "amplitude"))
        if k < n_ch - 1:
            ax.set_xticklabels([])
        else:
            ax.set_xlabel("time (s)")
        boxes.append(ax)
    boxes[0].set_title(f"{args.artifact} waveform {t0:.2f}-{t1:.2f} s")
    box_px = [_box_px(fig, ax) for ax in boxes]
    out = {
        **_save(fig, ctx, args, "waveform"),
        "channels": n_ch,
        "plot_box_px": box_px,
        "time_axis_s": [round(t0, 4), round(t1, 4)],
        "amplitude_axis": [-1.0, 1.0],
        "sample_rate": sr,
        "note": NOTE,
    }
    return ToolResult(output=out)
