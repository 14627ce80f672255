"""acoustic_music_features: perceived speech quality, estimated without a reference (DNSMOS).

Microsoft's DNSMOS predicts the mean opinion scores listeners would give a speech recording: ITU-T P.835
signal (SIG: distortion of the speech itself), background (BAK: intrusiveness of noise) and overall
(OVRL), plus a P.808 overall MOS, each on a 1-5 scale. The ONNX models ship in the `speechmos` package
(installed --no-deps); the computation below follows speechmos.dnsmos (9.01 s windows, 1 s hop, the
published polynomial calibration) with its own sessions (onnxruntime's run() is thread-safe), so it can
run from a thread pool.

It estimates how good the speech sounds. It does not say what is said, who speaks, or what the
background sound is, and its numbers mean little for audio that is not speech.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
from pydantic import Field

from audiomind.embedded import sessions
from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
INPUT_S = 9.01  # DNSMOS input length
MAX_CURVE_POINTS = 60
SILENCE_DBFS = -60.0  # a window whose peak is below this has nothing to rate

# speechmos.dnsmos.DNSMOS.get_polyfit_val: raw network outputs -> calibrated MOS
_POLY = {
    False: {
        "ovrl": [-0.06766283, 1.11546468, 0.04602535],
        "sig": [-0.08397278, 1.22083953, 0.0052439],
        "bak": [-0.13166888, 1.60915514, -0.39604546],
    },
    True: {
        "ovrl": [-0.00533021, 0.005101, 1.18058466, -0.11236046],
        "sig": [-0.01019296, 0.02751166, 1.19576786, -0.24348726],
        "bak": [-0.04976499, 0.44276479, -0.1644611, 0.96883132],
    },
}


def dnsmos_paths(personalized: bool = False) -> tuple[Path, Path]:
    """(P.835 sig/bak/ovr model, P.808 model) inside the speechmos package (located, not imported)."""
    spec = importlib.util.find_spec("speechmos")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package 'speechmos' is not installed (pip install --no-deps speechmos)")
    root = Path(next(iter(spec.submodule_search_locations)))
    primary = root / ("pdnsmos_models" if personalized else "dnsmos_models") / "sig_bak_ovr.onnx"
    p808 = root / "dnsmos_models" / "model_v8.onnx"
    for p in (primary, p808):
        if not p.exists():
            raise RuntimeError(f"speechmos is installed but {p} is missing")
    return primary, p808


def _sessions(personalized: bool):
    """(sig/bak/ovr session, P.808 session), loaded once per process."""

    def load():
        primary, p808 = dnsmos_paths(personalized)
        return sessions.onnx_session(primary), sessions.onnx_session(p808)

    return sessions.get("dnsmos-personalized" if personalized else "dnsmos", load)


def _p808_features(seg: np.ndarray) -> np.ndarray:
    import librosa

    mel = librosa.feature.melspectrogram(y=seg, sr=SR, n_fft=321, hop_length=160, n_mels=120)
    return ((librosa.power_to_db(mel, ref=np.max) + 40) / 40).T.astype(np.float32)


def dnsmos_windows(
    y: np.ndarray, hop_s: float = 1.0, personalized: bool = False, max_windows: int = 8
) -> tuple[list[dict], bool, float]:
    """Per-window DNSMOS scores [{start_s, ovrl, sig, bak, p808}], whether the clip had to be repeated to
    fill one 9.01 s window (as the reference implementation does for short clips), and the hop used: the
    requested hop, widened on long clips so that at most max_windows windows run (each costs ~0.5 s of CPU)."""
    primary, p808 = _sessions(personalized)
    y = np.clip(y.astype(np.float32), -1.0, 1.0)
    need = int(INPUT_S * SR)
    tiled = len(y) < need
    if tiled:
        y = np.tile(y, math.ceil(need / max(len(y), 1)))
    span = len(y) - need
    hop = max(1, round(hop_s * SR), math.ceil(span / max(1, max_windows - 1)))
    starts = list(range(0, span + 1, hop)) if not tiled else [0]
    if not tiled and span - starts[-1] > hop // 2 and len(starts) < max_windows:
        starts.append(span)  # cover the tail too
    poly = {k: np.poly1d(v) for k, v in _POLY[personalized].items()}
    rows = []
    for s in starts:
        seg = y[s : s + need]
        sig_raw, bak_raw, ovr_raw = primary.run(None, {"input_1": seg[None, :]})[0][0]
        p808_mos = float(p808.run(None, {"input_1": _p808_features(seg[:-160])[None]})[0][0][0])
        rows.append(
            {
                "start_s": s / SR,
                "ovrl": float(poly["ovrl"](ovr_raw)),
                "sig": float(poly["sig"](sig_raw)),
                "bak": float(poly["bak"](bak_raw)),
                "p808": p808_mos,
            }
        )
    return rows, tiled, hop / SR


class SpeechQualityArgs(WindowArgs):
    hop_s: float = Field(
        1.0,
        ge=0.5,
        le=9.0,
        description="hop between the 9.01 s DNSMOS windows (1.0 as in the reference; larger is faster)",
    )
    max_windows: int = Field(
        8,
        ge=1,
        le=200,
        description="at most this many windows (~0.5 s CPU each): on long clips the hop widens to fit",
    )
    personalized: bool = Field(
        False,
        description="use the personalized DNSMOS model, which also penalises "
        "interfering talkers as background",
    )


class WorstWindow(ToolOutput):
    start_s: float = Field(description="start of the lowest-rated 9.01 s window (s)")
    ovrl_mos: float = Field(description="its overall MOS (1-5)")


class QualityCurve(ToolOutput):
    start_s: list[float] = Field(description="window starts (s)")
    ovrl_mos: list[float] = Field(description="overall MOS per window (1-5)")


class SpeechQualityOutput(CoveredOutput):
    ovrl_mos: float | None = Field(description="DNSMOS P.835 overall MOS (1-5); None when silent")
    sig_mos: float | None = Field(description="P.835 speech signal MOS (1-5); None when silent")
    bak_mos: float | None = Field(description="P.835 background MOS (1-5, higher = less intrusive noise)")
    p808_mos: float | None = Field(description="P.808 overall MOS (1-5); None when silent")
    silent: bool = Field(description="the window is silent (peak below -60 dBFS): nothing was rated")
    window_s: AnalysedWindow
    # set only when rated
    scale: str | None = Field(None, description="the MOS scale")
    model: str | None = Field(None, description="DNSMOS model used")
    n_windows: int | None = Field(None, description="9.01 s windows rated")
    window_len_s: float | None = Field(None, description="model window length (s)")
    hop_s: float | None = Field(None, description="hop between windows actually used (s)")
    clip_repeated_to_fill_window: bool | None = Field(None, description="a clip under 9.01 s was tiled to fill it")
    worst_window: WorstWindow | None = Field(None, description="the lowest-rated window")
    curve: QualityCurve | None = Field(None, description="overall MOS per window (at most 60 points)")


def speech_quality(args: SpeechQualityArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    peak = float(np.max(np.abs(y))) if len(y) else 0.0
    if peak < 10 ** (SILENCE_DBFS / 20):
        out = {
            "ovrl_mos": None,
            "sig_mos": None,
            "bak_mos": None,
            "p808_mos": None,
            "silent": True,
            "window_s": [round(t0, 3), round(t1, 3)],
        }
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No speech quality estimate: the audio between {t0:.2f} and {t1:.2f} s is silent "
                        f"(peak below {SILENCE_DBFS:g} dBFS)."
                    ),
                    data={"silent": True},
                )
            ],
        )
    rows, tiled, hop_used = dnsmos_windows(y, args.hop_s, args.personalized, args.max_windows)
    mean = {k: float(np.mean([r[k] for r in rows])) for k in ("ovrl", "sig", "bak", "p808")}
    worst = min(rows, key=lambda r: r["ovrl"])
    step = max(1, math.ceil(len(rows) / MAX_CURVE_POINTS))
    out = {
        "ovrl_mos": round(mean["ovrl"], 3),
        "sig_mos": round(mean["sig"], 3),
        "bak_mos": round(mean["bak"], 3),
        "p808_mos": round(mean["p808"], 3),
        "silent": False,
        "scale": "1 (bad) - 5 (excellent)",
        "model": "DNSMOS P.835"
        + (" personalized" if args.personalized else "")
        + " + P.808 (speechmos ONNX)",
        "n_windows": len(rows),
        "window_len_s": INPUT_S,
        "hop_s": round(hop_used, 3),
        "clip_repeated_to_fill_window": tiled,
        "window_s": [round(t0, 3), round(t1, 3)],
        "worst_window": {"start_s": round(t0 + worst["start_s"], 2), "ovrl_mos": round(worst["ovrl"], 3)},
        "curve": {
            "start_s": [round(t0 + r["start_s"], 2) for r in rows[::step]],
            "ovrl_mos": [round(r["ovrl"], 2) for r in rows[::step]],
        },
    }
    note = (
        " (clip shorter than 9 s: repeated to fill the model window, as the reference does)" if tiled else ""
    )
    claims = [
        Claim(
            text=(
                f"Estimated speech quality (DNSMOS, 1-5) between {t0:.2f} and {t1:.2f} s: overall "
                f"{out['ovrl_mos']:.2f}, speech signal {out['sig_mos']:.2f}, background {out['bak_mos']:.2f} (P.835); "
                f"P.808 overall {out['p808_mos']:.2f}{note}. Meaningful only if the audio is speech."
            ),
            data={k: out[k] for k in ("ovrl_mos", "sig_mos", "bak_mos", "p808_mos")},
        )
    ]
    if len(rows) > 1:
        claims.append(
            Claim(
                text=(
                    f"Lowest-rated 9 s window starts at {out['worst_window']['start_s']:.1f} s (overall "
                    f"{worst['ovrl']:.2f}); window scores range {min(r['ovrl'] for r in rows):.2f}-"
                    f"{max(r['ovrl'] for r in rows):.2f}."
                ),
                data={"worst_window": out["worst_window"]},
            )
        )
    return ToolResult(output=out, claims=claims)
