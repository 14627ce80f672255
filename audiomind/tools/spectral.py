"""acoustic_music_features: spectral shape descriptors (centroid, bandwidth, roll-off, flatness, zero-crossing
rate, band energy ratios).

These are numbers about how energy is spread over frequency, useful for "brighter / darker", "more
high-frequency energy", "more noise-like / more tonal" comparisons. They never identify what makes a
sound: a high centroid is as true of cymbals as of hiss or sibilant speech, so the claims carry numbers
and their scales only, never source labels or adjectives.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field, model_validator

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

MAX_CURVE_POINTS = 60


class SpectralArgs(WindowArgs):
    low_mid_hz: float = Field(
        250.0, ge=20.0, le=2000.0, description="edge between the low and mid bands (Hz)"
    )
    mid_high_hz: float = Field(
        4000.0, ge=500.0, le=16000.0, description="edge between the mid and high bands (Hz)"
    )
    rolloff_percent: float = Field(
        0.85, ge=0.5, le=0.99, description="roll-off: frequency below which this share of the energy lies"
    )
    active_range_db: float = Field(
        50.0,
        ge=10.0,
        le=100.0,
        description="frames more than this far below the loudest frame (or below "
        "-80 dBFS) are left out as silence",
    )

    @model_validator(mode="after")
    def _bands(self) -> SpectralArgs:
        if self.mid_high_hz <= self.low_mid_hz:
            raise ValueError("mid_high_hz must be above low_mid_hz")
        return self


class Distribution(ToolOutput):
    """Summary of a per-frame descriptor over the non-silent frames (unit: the descriptor's)."""

    median: float = Field(description="median")
    mean: float = Field(description="mean")
    std: float = Field(description="standard deviation")
    p10: float = Field(description="10th percentile")
    p90: float = Field(description="90th percentile")


class CentroidCurve(ToolOutput):
    time_s: list[float] = Field(description="frame times (s)")
    hz: list[float] = Field(description="spectral centroid (Hz)")


class SpectralOutput(CoveredOutput):
    analysis_sr: int = Field(description="sample rate analysed (Hz; the file's own, at most 48 kHz)")
    nyquist_hz: float = Field(description="highest frequency analysed (Hz)")
    n_fft: int = Field(description="STFT size")
    window_s: AnalysedWindow
    active_ratio: float = Field(description="share of frames counted as non-silent (0-1)")
    silent: bool = Field(description="the window is silent (below -80 dBFS): nothing else is set")
    # set only when not silent
    centroid_hz: Distribution | None = Field(None, description="spectral centroid (Hz)")
    bandwidth_hz: Distribution | None = Field(None, description="spectral bandwidth (Hz)")
    rolloff_hz: Distribution | None = Field(None, description="roll-off frequency (Hz)")
    rolloff_percent: float | None = Field(None, description="energy share below the roll-off (0-1)")
    flatness: Distribution | None = Field(None, description="power-spectrum flatness (0-1; ~0.56 white noise)")
    zero_crossing_rate: Distribution | None = Field(None, description="zero crossings per sample")
    band_energy_ratio: dict[str, float] | None = Field(
        None, description="share of spectral energy per band (low_below_<f>_hz, mid_<f1>_<f2>_hz, high_above_<f>_hz)")
    centroid_first_quarter_hz: float | None = Field(None, description="median centroid, first quarter (Hz)")
    centroid_last_quarter_hz: float | None = Field(None, description="median centroid, last quarter (Hz)")
    centroid_curve: CentroidCurve | None = Field(None, description="centroid over time (at most 60 points)")


def _stats(x: np.ndarray, nd: int = 1) -> dict:
    p10, p50, p90 = np.percentile(x, [10, 50, 90])
    return {
        "median": round(float(p50), nd),
        "mean": round(float(np.mean(x)), nd),
        "std": round(float(np.std(x)), nd),
        "p10": round(float(p10), nd),
        "p90": round(float(p90), nd),
    }


def spectral(args: SpectralArgs, ctx: ToolContext) -> ToolResult:
    import librosa

    art = ctx.audio(args.artifact).artifact
    rate = min(int(art.sample_rate), 48000)  # the file's own bandwidth (descriptors depend on it), capped
    y, t0, t1 = excerpt(ctx, args, sr=rate, min_s=0.05)
    n_fft = 2048 if rate > 32000 else 1024 if rate > 12000 else 512  # ~43-64 ms
    hop = n_fft // 4
    if len(y) < n_fft:
        y = np.pad(y, (0, n_fft - len(y)))
    power = np.abs(librosa.stft(y, n_fft=n_fft, hop_length=hop)) ** 2
    mag = np.sqrt(power)
    freqs = librosa.fft_frequencies(sr=rate, n_fft=n_fft)
    rms = librosa.feature.rms(y=y, frame_length=n_fft, hop_length=hop, center=True)[0][: power.shape[1]]
    frame_db = 20 * np.log10(np.maximum(rms, 1e-10))
    active = frame_db >= max(float(frame_db.max()) - args.active_range_db, -80.0)
    out: dict = {
        "analysis_sr": rate,
        "nyquist_hz": rate / 2,
        "n_fft": n_fft,
        "window_s": [round(t0, 3), round(t1, 3)],
        "active_ratio": round(float(np.mean(active)), 4),
    }
    if not active.any() or frame_db.max() < -80.0:
        out["silent"] = True
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=f"No spectral description: the window {t0:.2f}-{t1:.2f} s is silent (below -80 dBFS).",
                    data={"silent": True},
                )
            ],
        )
    S, P = mag[:, active], power[:, active]
    centroid = librosa.feature.spectral_centroid(S=S, sr=rate, n_fft=n_fft)[0]
    bandwidth = librosa.feature.spectral_bandwidth(S=S, sr=rate, n_fft=n_fft)[0]
    rolloff = librosa.feature.spectral_rolloff(S=S, sr=rate, n_fft=n_fft, roll_percent=args.rolloff_percent)[
        0
    ]
    flatness = librosa.feature.spectral_flatness(S=P, power=1.0)[0]
    zcr_all = librosa.feature.zero_crossing_rate(y, frame_length=n_fft, hop_length=hop)[0]
    zcr = zcr_all[: len(active)][active[: len(zcr_all)]]
    band_power = P.sum(axis=1)
    total = float(band_power.sum()) or 1.0
    low = float(band_power[freqs < args.low_mid_hz].sum()) / total
    high = float(band_power[freqs >= args.mid_high_hz].sum()) / total
    times = t0 + librosa.frames_to_time(np.flatnonzero(active), sr=rate, hop_length=hop)
    step = max(1, math.ceil(len(centroid) / MAX_CURVE_POINTS))
    q = max(1, len(centroid) // 4)
    out.update(
        {
            "silent": False,
            "centroid_hz": _stats(centroid),
            "bandwidth_hz": _stats(bandwidth),
            "rolloff_hz": _stats(rolloff),
            "rolloff_percent": args.rolloff_percent,
            "flatness": _stats(flatness, 4),
            "zero_crossing_rate": _stats(zcr, 4),
            "band_energy_ratio": {
                f"low_below_{args.low_mid_hz:g}_hz": round(low, 4),
                f"mid_{args.low_mid_hz:g}_{args.mid_high_hz:g}_hz": round(1.0 - low - high, 4),
                f"high_above_{args.mid_high_hz:g}_hz": round(high, 4),
            },
            "centroid_first_quarter_hz": round(float(np.median(centroid[:q])), 1),
            "centroid_last_quarter_hz": round(float(np.median(centroid[-q:])), 1),
            "centroid_curve": {
                "time_s": [round(float(x), 2) for x in times[::step]],
                "hz": [round(float(x), 0) for x in centroid[::step]],
            },
        }
    )
    c, r, b, f, z = (
        out[k] for k in ("centroid_hz", "rolloff_hz", "bandwidth_hz", "flatness", "zero_crossing_rate")
    )
    span = (
        f"between {t0:.2f} and {t1:.2f} s ({100 * out['active_ratio']:.0f}% of frames non-silent, analysed to "
        f"{rate / 2:g} Hz)"
    )
    claims = [
        Claim(
            text=(
                f"Spectral centroid median {c['median']:.0f} Hz (10-90%: {c['p10']:.0f}-{c['p90']:.0f} Hz), "
                f"{100 * args.rolloff_percent:.0f}% roll-off median {r['median']:.0f} Hz, bandwidth median "
                f"{b['median']:.0f} Hz, {span}."
            ),
            data={"centroid_hz": c["median"], "rolloff_hz": r["median"], "bandwidth_hz": b["median"]},
        ),
        Claim(
            text=(
                f"Spectral flatness median {f['median']:.4f} (power-spectrum flatness: near 0 for a pure tone, about 0.56 for white noise, 1 only for a perfectly flat spectrum); "
                f"zero-crossing rate median {z['median']:.4f} per sample."
            ),
            data={"flatness": f["median"], "zero_crossing_rate": z["median"]},
        ),
        Claim(
            text=(
                f"Share of spectral energy: {100 * low:.1f}% below {args.low_mid_hz:g} Hz, "
                f"{100 * (1 - low - high):.1f}% between {args.low_mid_hz:g} and {args.mid_high_hz:g} Hz, "
                f"{100 * high:.1f}% above {args.mid_high_hz:g} Hz; centroid median {out['centroid_first_quarter_hz']:.0f}"
                f" Hz in the first quarter of the non-silent frames vs {out['centroid_last_quarter_hz']:.0f} Hz in the "
                f"last."
            ),
            data={
                "band_energy_ratio": out["band_energy_ratio"],
                "centroid_first_quarter_hz": out["centroid_first_quarter_hz"],
                "centroid_last_quarter_hz": out["centroid_last_quarter_hz"],
            },
        ),
    ]
    return ToolResult(output=out, claims=claims)
