"""Timbre and noise over time: brightness trend, envelope shape (how a sound starts and ends), noise colour
(register of a noise) and a steady background tone (hum or whine) under other sound.

All four read short-time power spectra (or frame levels) computed one block at a time (`_spectra`), so a long
excerpt (at most the 600 s feature budget of `tools.window.excerpt`) needs no full-length spectrogram.

- brightness_trend: the share of the sound's power above BRIGHT_HZ (dB) in each 64 ms frame of the sustained
  sound (frames within SUSTAIN_DB of the loudest), with the stationary noise spectrum subtracted when the clip
  has a noise-only stretch (frames NOISE_BELOW_DB under the sound). The share is a ratio, so it does not move
  with the level. Its median over the last third minus the first third: >= TREND_DB brighter, <= -TREND_DB
  darker, else steady. A harmonic tone under a low-pass gliding 250 Hz -> 4 kHz moves it by ~25 dB; a fixed
  filter by < 1 dB.
- envelope_shape: the amplitude envelope (10 ms frames, noise power subtracted, smoothed over 50 ms) of the
  whole sound, relative to its smoothed maximum. The rise time is the time from the last frame under
  LOW_FRAC before the sound first reaches HIGH_FRAC of its maximum; the fall time mirrors it at the end. A
  rise (fall) of >= GRADUAL_S is a gradual fade-in (fade-out), else an abrupt start (stop). A 2 s linear fade
  reads ~1.3 s; a switched tone a few 10 ms frames.
- noise_color: the long-term spectrum of the active frames (noise floor subtracted when a quieter stretch
  exists); its log-frequency centroid (power-weighted mean of log2 f) below LOW_MAX_HZ is a low rumble, above
  HIGH_MIN_HZ a high hiss, between a mid-range whoosh. Shares of power in the low / mid / high band are reported.
- background_tone: in 256 ms frames, a bin standing PEAK_DB over the median of its +-PEAK_NEIGHBOUR_HZ
  neighbourhood is a spectral peak. A peak present in >= PERSIST of all frames, and in >= QUIET_PERSIST of the
  quietest third of the frames (a tone under speech continues through its pauses; a voice's harmonics do
  not), is a steady tone. The lowest such tone under HUM_MAX_HZ is a hum (its harmonics listed), one above
  WHINE_MIN_HZ a whine; none: no steady tone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import frame_db, runs
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
BLOCK_S = 30.0              # spectra computed 30 s at a time

# brightness_trend
BT_FFT, BT_HOP = 1024, 256  # 64 ms frames, 16 ms hop
BRIGHT_HZ = 1000.0          # power above this is the bright part of a sound
SUSTAIN_DB = 15.0           # frames within this of the loudest frame hold the sustained sound
NOISE_BELOW_DB = 20.0       # frames this far under the sound are noise only (its spectrum is subtracted)
TREND_DB = 6.0              # last third vs first third of the high-band share: brighter / darker

# envelope_shape
ENV_FRAME = 160             # 10 ms
ENV_SMOOTH = 5              # 50 ms
LOW_FRAC, HIGH_FRAC = 0.2, 0.9  # amplitude fractions of the maximum between which the rise / fall is timed
GRADUAL_S = 0.3             # a rise / fall this long or longer is a fade (a switched sound takes < 0.1 s)
ACTIVE_DB = 12.0            # frames this far above the noise floor hold the sound

# noise_color
NC_FFT, NC_HOP = 2048, 1024
LOW_MAX_HZ = 200.0          # log-frequency centroid below this: a low rumble
HIGH_MIN_HZ = 1500.0        # above this: a high hiss (between: a mid-range whoosh)

# background_tone
BG_FFT, BG_HOP = 4096, 2048  # 256 ms frames (3.9 Hz bins), 128 ms hop
PEAK_DB = 10.0               # a bin this far above its neighbourhood's median is a spectral peak
PEAK_NEIGHBOUR_HZ = 60.0
PERSIST = 0.6                # a peak in this share of all frames persists across the clip ...
QUIET_PERSIST = 0.5          # ... and in this share of the quietest third of the frames (through pauses)
HUM_MAX_HZ = 400.0           # a steady tone below this is a hum (mains 50 / 60 Hz and its harmonics)
WHINE_MIN_HZ = 2000.0        # above this a whine
MIN_TONE_HZ = 40.0


class TimbreArgs(WindowArgs):
    pass


def _spectra(y: np.ndarray, n_fft: int, hop: int) -> Iterator[np.ndarray]:
    """Power spectra (frames x bins, float32) of consecutive Hann-windowed frames, BLOCK_S seconds of frames at
    a time (no padding; the frames are those of one pass over the whole signal)."""
    n = 1 + (len(y) - n_fft) // hop if len(y) >= n_fft else 0
    win = np.hanning(n_fft).astype(np.float32)
    step = max(1, int(BLOCK_S * SR) // hop)
    for a in range(0, n, step):
        b = min(n, a + step)
        idx = np.arange(a, b)[:, None] * hop + np.arange(n_fft)[None, :]
        yield (np.abs(np.fft.rfft(y[idx] * win, axis=1)) ** 2).astype(np.float32)


def _all_spectra(y: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    parts = list(_spectra(y, n_fft, hop))
    return np.concatenate(parts) if parts else np.zeros((0, n_fft // 2 + 1), np.float32)


def _base(t0: float, t1: float) -> dict:
    return {"analysed_s": (round(t0, 3), round(t1, 3))}


def _r(v: float | None, d: int = 2) -> float | None:
    return None if v is None or not np.isfinite(v) else round(float(v), d)


# ---------------------------------------------------------------------------------------------- brightness


class BrightnessTrendOutput(CoveredOutput):
    label: Literal["brighter", "darker", "steady", "silent"] = Field(
        description=f"the high-band share moves >= {TREND_DB:g} dB up (brighter) or down (darker) from the first to "
                    "the last third of the sustained sound; else steady")
    change_db: float | None = Field(description=f"last third minus first third of the share of power above "
                                                f"{BRIGHT_HZ:g} Hz (dB)")
    start_share_db: float | None = Field(description="share of power above 1 kHz, first third (dB)")
    end_share_db: float | None = Field(description="share of power above 1 kHz, last third (dB)")
    start_centroid_hz: float | None = Field(description="spectral centroid, first third (Hz)")
    end_centroid_hz: float | None = Field(description="spectral centroid, last third (Hz)")
    level_change_db: float | None = Field(description="level change last third vs first (dB), for reference")
    sustained_s: float = Field(description="seconds of sustained sound analysed")
    noise_subtracted: bool = Field(description="whether a noise-only stretch's spectrum was subtracted")
    analysed_s: AnalysedWindow


def _noise_psd(spec: np.ndarray, db: np.ndarray) -> np.ndarray | None:
    """Mean spectrum of the noise-only frames (NOISE_BELOW_DB under the sound's 95th-percentile level), when at
    least 0.2 s of them exist."""
    quiet = db <= np.percentile(db, 95) - NOISE_BELOW_DB
    if quiet.sum() * BT_HOP / SR < 0.2:
        return None
    return spec[quiet].mean(axis=0)


def brightness_trend(args: TimbreArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    spec = _all_spectra(y, BT_FFT, BT_HOP)
    f = np.fft.rfftfreq(BT_FFT, 1 / SR)
    db = 10 * np.log10(spec.sum(axis=1) + 1e-12) if len(spec) else np.zeros(0)
    base = _base(t0, t1)
    if len(db) < 6 or db.max() < -90:
        out = {**base, "label": "silent", "change_db": None, "start_share_db": None, "end_share_db": None,
               "start_centroid_hz": None, "end_centroid_hz": None, "level_change_db": None, "sustained_s": 0.0,
               "noise_subtracted": False}
        return ToolResult(output=out, claims=[Claim(text="No sound to judge its brightness.", data={"label": "silent"})])
    noise = _noise_psd(spec, db)
    sustained = db >= db.max() - SUSTAIN_DB
    idx = np.flatnonzero(sustained)
    a, b = int(idx[0]), int(idx[-1]) + 1  # from the first to the last sustained frame
    clean = spec[a:b] - (noise if noise is not None else 0.0)
    clean = np.maximum(clean, 0.0)
    keep = sustained[a:b]
    third = max(1, (b - a) // 3)
    high = f >= BRIGHT_HZ

    def part(sl: slice) -> tuple[float, float, float]:
        s, k = clean[sl], keep[sl]
        s = s[k] if k.any() else s
        tot = s.sum(axis=1) + 1e-12
        share = 10 * np.log10(s[:, high].sum(axis=1) / tot + 1e-6)
        cen = (s * f).sum(axis=1) / tot
        return float(np.median(share)), float(np.median(cen)), float(10 * np.log10(np.median(tot)))

    s0, c0, l0 = part(slice(0, third))
    s1, c1, l1 = part(slice(b - a - third, b - a))
    change = s1 - s0
    label = "brighter" if change >= TREND_DB else "darker" if change <= -TREND_DB else "steady"
    out = {**base, "label": label, "change_db": _r(change, 1), "start_share_db": _r(s0, 1), "end_share_db": _r(s1, 1),
           "start_centroid_hz": _r(c0, 0), "end_centroid_hz": _r(c1, 0), "level_change_db": _r(l1 - l0, 1),
           "sustained_s": round(float(keep.sum()) * BT_HOP / SR, 2), "noise_subtracted": noise is not None}
    words = {"brighter": "gets brighter", "darker": "gets darker", "steady": "keeps the same brightness"}[label]
    text = (f"The sustained sound {words}: the share of its power above {BRIGHT_HZ:g} Hz goes from {s0:.1f} to "
            f"{s1:.1f} dB ({change:+.1f} dB; >= {TREND_DB:g} dB is a change), spectral centroid {c0:.0f} -> {c1:.0f} Hz, "
            f"level {l1 - l0:+.1f} dB.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "change_db": out["change_db"]})])


# ---------------------------------------------------------------------------------------------- envelope


class EnvelopeShapeOutput(CoveredOutput):
    onset: Literal["gradual", "abrupt", "silent"] = Field(
        description=f"gradual: the sound takes >= {GRADUAL_S:g} s to rise from {LOW_FRAC:g} to {HIGH_FRAC:g} of its "
                    "maximum amplitude (a fade-in); abrupt: less (it starts suddenly)")
    offset: Literal["gradual", "abrupt", "silent"] = Field(
        description=f"gradual: >= {GRADUAL_S:g} s to fall from {HIGH_FRAC:g} to {LOW_FRAC:g} (a fade-out); abrupt: "
                    "it stops suddenly")
    label: Literal["fade_in_fade_out", "fade_in_abrupt_stop", "abrupt_start_fade_out", "abrupt_start_abrupt_stop",
                   "silent"] = Field(description="the two together")
    rise_s: float | None = Field(description="rise time (s)")
    fall_s: float | None = Field(description="fall time (s)")
    start_s: float | None = Field(description="where the sound starts (s, artifact time)")
    end_s: float | None = Field(description="where it ends (s)")
    analysed_s: AnalysedWindow


def _envelope(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(amplitude envelope with the noise floor's power subtracted and smoothed, active-frame mask)."""
    from scipy.ndimage import uniform_filter1d

    db = frame_db(y, ENV_FRAME)
    p = 10 ** (db / 10)
    floor_db = float(np.percentile(db, 5)) if len(db) else -100.0
    p_noise = float(np.mean(p[db <= floor_db + 3.0])) if len(db) else 0.0
    amp = np.sqrt(np.maximum(uniform_filter1d(p, ENV_SMOOTH) - p_noise, 0.0))
    return amp, db >= floor_db + ACTIVE_DB


def envelope_shape(args: TimbreArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    amp, active = _envelope(y)
    base = _base(t0, t1)
    dt = ENV_FRAME / SR
    if not active.any() or amp.max() <= 0:
        out = {**base, "onset": "silent", "offset": "silent", "label": "silent", "rise_s": None, "fall_s": None,
               "start_s": None, "end_s": None}
        return ToolResult(output=out, claims=[Claim(text="No sound whose start and end could be judged.",
                                                    data={"label": "silent"})])
    top = amp.max()
    high = np.flatnonzero(amp >= HIGH_FRAC * top)
    first_high, last_high = int(high[0]), int(high[-1])
    low_before = np.flatnonzero(amp[:first_high] < LOW_FRAC * top)
    low_after = np.flatnonzero(amp[last_high:] < LOW_FRAC * top)
    a = int(low_before[-1]) + 1 if len(low_before) else 0
    b = last_high + int(low_after[0]) if len(low_after) else len(amp)
    rise, fall = (first_high - a) * dt, (b - last_high) * dt
    onset = "gradual" if rise >= GRADUAL_S else "abrupt"
    offset = "gradual" if fall >= GRADUAL_S else "abrupt"
    label = {("gradual", "gradual"): "fade_in_fade_out", ("gradual", "abrupt"): "fade_in_abrupt_stop",
             ("abrupt", "gradual"): "abrupt_start_fade_out", ("abrupt", "abrupt"): "abrupt_start_abrupt_stop"}[
        (onset, offset)]
    out = {**base, "onset": onset, "offset": offset, "label": label, "rise_s": round(rise, 2), "fall_s": round(fall, 2),
           "start_s": round(t0 + a * dt, 2), "end_s": round(t0 + b * dt, 2)}
    text = (f"The sound ({out['start_s']:.2f}-{out['end_s']:.2f} s) "
            + ("fades in" if onset == "gradual" else "starts abruptly") + f" (rise {rise:.2f} s) and "
            + ("fades out" if offset == "gradual" else "stops abruptly") + f" (fall {fall:.2f} s); a rise or fall of "
            f">= {GRADUAL_S:g} s from {LOW_FRAC:g} to {HIGH_FRAC:g} of its peak amplitude is a fade.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"onset": onset, "offset": offset, "label": label})])


# ---------------------------------------------------------------------------------------------- noise colour


class NoiseColorOutput(CoveredOutput):
    label: Literal["low", "mid", "high", "silent"] = Field(
        description=f"low rumble: log-frequency centroid < {LOW_MAX_HZ:g} Hz; high hiss: > {HIGH_MIN_HZ:g} Hz; "
                    "mid-range whoosh between")
    centroid_hz: float | None = Field(description="log-frequency centroid (2 ** power-weighted mean of log2 f) (Hz)")
    low_share: float | None = Field(description=f"share of power below {LOW_MAX_HZ:g} Hz")
    mid_share: float | None = Field(description="share of power between")
    high_share: float | None = Field(description=f"share of power above {HIGH_MIN_HZ:g} Hz")
    analysed_s: AnalysedWindow


def noise_color(args: TimbreArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    f = np.fft.rfftfreq(NC_FFT, 1 / SR)
    total = np.zeros(len(f))
    floor_acc, n_floor, levels = np.zeros(len(f)), 0, []
    blocks = []
    for s in _spectra(y, NC_FFT, NC_HOP):
        levels.append(10 * np.log10(s.sum(axis=1) + 1e-12))
        blocks.append(s)  # kept per block; one 30 s block of 1025 bins is ~3.8 MB
    base = _base(t0, t1)
    db = np.concatenate(levels) if levels else np.zeros(0)
    if not len(db) or db.max() < -90:
        out = {**base, "label": "silent", "centroid_hz": None, "low_share": None, "mid_share": None,
               "high_share": None}
        return ToolResult(output=out, claims=[Claim(text="No sound to judge a noise's register.", data={"label": "silent"})])
    top = float(np.percentile(db, 95))
    k = 0
    for s in blocks:
        d = db[k:k + len(s)]
        k += len(s)
        total += s[d >= top - SUSTAIN_DB].sum(axis=0)
        quiet = d <= top - NOISE_BELOW_DB
        floor_acc += s[quiet].sum(axis=0)
        n_floor += int(quiet.sum())
    active = int((db >= top - SUSTAIN_DB).sum())
    p = total / max(active, 1)
    if n_floor * NC_HOP / SR >= 0.2:
        p = np.maximum(p - floor_acc / n_floor, 0.0)
    band = f >= 20.0
    pb, fb = p[band], f[band]
    w = pb / max(pb.sum(), 1e-20)
    centroid = float(2 ** np.sum(w * np.log2(fb)))
    low, high = float(w[fb < LOW_MAX_HZ].sum()), float(w[fb > HIGH_MIN_HZ].sum())
    label = "low" if centroid < LOW_MAX_HZ else "high" if centroid > HIGH_MIN_HZ else "mid"
    out = {**base, "label": label, "centroid_hz": round(centroid, 1), "low_share": round(low, 3),
           "mid_share": round(1 - low - high, 3), "high_share": round(high, 3)}
    words = {"low": "a low rumble", "mid": "a mid-range whoosh", "high": "a high hiss"}[label]
    text = (f"The sound's energy sits around {centroid:.0f} Hz (log-frequency centroid; {low:.0%} below "
            f"{LOW_MAX_HZ:g} Hz, {high:.0%} above {HIGH_MIN_HZ:g} Hz): {words} by register.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "centroid_hz": out["centroid_hz"]})])


# ---------------------------------------------------------------------------------------------- background tone


class SteadyTone(ToolOutput):
    freq_hz: float = Field(description="frequency of the steady spectral peak (Hz)")
    presence: float = Field(description="share of all frames holding the peak")
    quiet_presence: float = Field(description="share of the quietest third of the frames holding it")
    level_db: float = Field(description="median level of its bin over the frames holding it (dBFS)")


class BackgroundToneOutput(CoveredOutput):
    label: Literal["hum", "whine", "tone", "none", "silent"] = Field(
        description=f"hum: the lowest steady tone is below {HUM_MAX_HZ:g} Hz; whine: above {WHINE_MIN_HZ:g} Hz; tone: "
                    "between; none: no spectral peak persists across the clip")
    fundamental_hz: float | None = Field(description="the lowest steady tone (Hz)")
    harmonics: list[int] = Field(description="multiples of the hum's frequency that are steady tones too")
    tones: list[SteadyTone] = Field(description="every steady tone, lowest first (at most 12)")
    analysed_s: AnalysedWindow


def background_tone(args: TimbreArgs, ctx: ToolContext) -> ToolResult:
    from scipy.ndimage import median_filter

    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    f = np.fft.rfftfreq(BG_FFT, 1 / SR)
    width = 2 * int(PEAK_NEIGHBOUR_HZ / (f[1] - f[0])) + 1
    masks, levels, logs = [], [], []
    for s in _spectra(y, BG_FFT, BG_HOP):
        ls = 10 * np.log10(s + 1e-14)
        med = median_filter(ls, size=(1, width), mode="nearest")
        local_max = (ls >= np.roll(ls, 1, axis=1)) & (ls >= np.roll(ls, -1, axis=1))
        masks.append((ls - med >= PEAK_DB) & local_max & (ls > -120))
        levels.append(10 * np.log10(s.sum(axis=1) + 1e-14))
        logs.append(ls.astype(np.float16))
    base = _base(t0, t1)
    db = np.concatenate(levels) if levels else np.zeros(0)
    if len(db) < 4 or db.max() < -90:
        out = {**base, "label": "silent", "fundamental_hz": None, "harmonics": [], "tones": []}
        return ToolResult(output=out, claims=[Claim(text="No sound to search for a steady tone.", data={"label": "silent"})])
    peak = np.concatenate(masks)
    # a peak may wander by one bin between frames (a tone between two bins): count +-1 bin as the same tone
    peak = peak | np.roll(peak, 1, axis=1) | np.roll(peak, -1, axis=1)
    sounding = db > -90  # digital silence holds no tone
    quiet = sounding & (db <= np.percentile(db[sounding], 33.3))
    presence = peak[sounding].mean(axis=0)
    quiet_presence = peak[quiet].mean(axis=0) if quiet.any() else presence
    cand = (presence >= PERSIST) & (quiet_presence >= QUIET_PERSIST) & (f >= MIN_TONE_HZ)
    level = np.concatenate(logs).astype(np.float32)
    tones = []
    for a, b in runs(cand):  # one tone per run of adjacent bins: its most present (then loudest) bin
        k = a + int(np.argmax(presence[a:b] + 1e-3 * np.median(level[:, a:b], axis=0)))
        tones.append({"freq_hz": round(float(f[k]), 1), "presence": round(float(presence[k]), 2),
                      "quiet_presence": round(float(quiet_presence[k]), 2),
                      "level_db": round(float(np.median(level[peak[:, k], k])), 1)})
    tones = tones[:12]
    harmonics: list[int] = []
    if not tones:
        label, fund = "none", None
    else:
        fund = tones[0]["freq_hz"]
        label = "hum" if fund < HUM_MAX_HZ else "whine" if fund > WHINE_MIN_HZ else "tone"
        if label == "hum":
            step = f[1] - f[0]
            harmonics = sorted({round(t["freq_hz"] / fund) for t in tones
                                if abs(t["freq_hz"] - fund * round(t["freq_hz"] / fund)) <= 1.5 * step})
    out = {**base, "label": label, "fundamental_hz": fund, "harmonics": harmonics, "tones": tones}
    if label == "none":
        text = (f"No steady tone: no spectral peak persists in {PERSIST:.0%} of the frames and through the quiet "
                "ones.")
    else:
        words = {"hum": "a low hum", "whine": "a high whine", "tone": "a steady mid-range tone"}[label]
        text = (f"A steady tone persists across the clip: {words} at {fund:.0f} Hz"
                + (f" with harmonics x{', x'.join(str(h) for h in harmonics if h > 1)}" if len(harmonics) > 1 else "")
                + f" (in {tones[0]['presence']:.0%} of the frames, {tones[0]['quiet_presence']:.0%} of the quietest).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "fundamental_hz": fund})])
