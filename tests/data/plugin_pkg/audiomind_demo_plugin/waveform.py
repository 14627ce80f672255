"""The plugin's descriptor: the shape of a steady tone's waveform (sine, square or sawtooth), from the levels of
its 2nd and 3rd harmonics against the fundamental. Its manifest (tools/waveform_shape.toml) carries the
property vocabulary row and the construction-test reliability: nothing else is needed for a question about
it to be answered."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult

SR = 16000
ABSENT_DB = -25.0  # a harmonic this far under the fundamental is not there
PRESENT_DB = -16.0  # ... this close to it is (square: 3rd at -9.5 dB; sawtooth: 2nd at -6, 3rd at -9.5)


class WaveformShapeArgs(ToolArgs):
    pass


class WaveformShapeOutput(ToolOutput):
    label: Literal["sine", "square", "sawtooth", "other"] = Field(description="the waveform's shape")
    f0_hz: float = Field(description="the fundamental: the strongest spectral peak, 50-2000 Hz")
    h2_db: float = Field(description="2nd harmonic re the fundamental, dB")
    h3_db: float = Field(description="3rd harmonic re the fundamental, dB")


def _peak_db(spec: np.ndarray, freqs: np.ndarray, f: float) -> float:
    band = (freqs >= f * 0.97) & (freqs <= f * 1.03)
    return float(20 * np.log10(max(float(spec[band].max()) if band.any() else 0.0, 1e-12)))


def waveform_shape(args: WaveformShapeArgs, ctx: ToolContext) -> ToolResult:
    x = np.asarray(ctx.audio(args.artifact).samples(sr=SR, mono=True), dtype=np.float64)
    n = len(x)
    spec = np.abs(np.fft.rfft(x * np.hanning(n), n=max(n, 1 << 15)))
    freqs = np.fft.rfftfreq(max(n, 1 << 15), 1 / SR)
    search = (freqs >= 50) & (freqs <= 2000)
    f0 = float(freqs[search][np.argmax(spec[search])])
    ref = _peak_db(spec, freqs, f0)
    h2, h3 = (round(_peak_db(spec, freqs, k * f0) - ref, 1) if k * f0 < SR / 2 else -120.0 for k in (2, 3))
    if h2 <= ABSENT_DB and h3 <= ABSENT_DB:
        label = "sine"
    elif h2 <= ABSENT_DB and h3 >= PRESENT_DB:
        label = "square"
    elif h2 >= PRESENT_DB and h3 >= PRESENT_DB:
        label = "sawtooth"
    else:
        label = "other"
    out = WaveformShapeOutput(label=label, f0_hz=round(f0, 1), h2_db=h2, h3_db=h3)
    return ToolResult(output=out.model_dump(), claims=[Claim(
        text=f"The tone at {f0:.0f} Hz has its 2nd harmonic at {h2:+.1f} dB and its 3rd at {h3:+.1f} dB: "
             f"waveform {label}.", data={"label": label})])
