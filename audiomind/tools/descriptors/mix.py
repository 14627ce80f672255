"""How sounds are mixed and joined over time: whether background music dips, stays level or stops while a
voice speaks (ducking), how one piece or sound gives way to the next (segue), and whether two separate sounds are
the same sound twice, similar, or different sounds (sound_match).

- ducking (version 2): Silero speech probability per 32 ms; speech spans are its runs (>= 0.5), merged across
  gaps shorter than SPAN_MERGE_S; the background alone is every frame at least FADE_MARGIN_S away from any span
  (a ducker's fade is left out). Version 1 compared broadband levels (the 5th percentile inside against the
  median outside): a piece's own decays read as dips and speech's quiet frames as music that dips. Version 2
  follows the background at its tonal peaks (128 ms spectra, 7.8 Hz bins): the peaks of its mean spectrum alone
  (PEAK_DB over the median of +-PEAK_NEIGH bins). Inside the spans it averages the frames with the least sound
  away from those peaks (the speech's gaps, chosen without looking at the background itself): in the
  GAP_SHARE quietest, presence = how far the peak bins stand over their neighbourhood less the same at control
  bins CTRL_SHIFT off (speech and noise lift both alike, so a stopped background reads about 0 dB): under
  STOP_PRESENCE_DB it stopped; in the CHANGE_SHARE quietest, the peaks' power over their neighbourhood against
  the same alone: DIP_DB or more under it dips, else level. Without MIN_PEAKS tonal peaks (noise, drums) the
  broadband rule of version 1 decides. Measured on the construction cases (tests/tools/test_descriptors_mix.py)
  and perception_v4's ducking audio: a -16 dB duck under pink noise at 15 dB SNR falls under the noise at its
  peaks too (presence 1.9 dB, read as a stop), and numpy notes whose decays the quiet-frame choice follows read
  a -2 dB bed at -8 dB (a dip).
- segue: see `segue`.
- sound_match: see `sound_match`."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.common import frame_db, runs, speech_probability, within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
MAX_S = 120.0                 # the stretch analysed at most (coverage says so); every step is linear in it
SILENT_DBFS = -90.0           # a 10 ms frame below this is digital silence

# ducking
SPEECH_P = 0.5                # Silero probability that makes a 32 ms window speech
SPAN_MERGE_S = 1.0            # speech runs closer than this are one span (pauses between words and phrases)
MIN_SPAN_S = 0.3              # shorter speech runs are Silero's false alarms on music
FADE_MARGIN_S = 0.5           # frames this close to a span are neither inside nor outside (a ducker's fades)
GAP_PERCENTILE = 5.0          # the background inside a span: its quietest frames (gaps between speech sounds)
FLOOR_PERCENTILE = 2.0        # the stationary noise floor: the quietest frames of the clip that are not silent
DIP_DB = 8.0                  # the gaps this much below the music outside (floor subtracted): the music dips
STOP_ABOVE_FLOOR_DB = 3.0     # the gaps within this of the floor: nothing of the music is left (it stops) ...
MUSIC_ABOVE_FLOOR_DB = 8.0    # ... provided the music outside stands this far over the floor
MIN_OUTSIDE_S = 0.5           # at least this much music heard without the voice to compare with
PEAK_FRAME, PEAK_HOP = 2048, 320  # 128 ms spectra (7.8 Hz bins: a note's partials stand apart) every 20 ms
PEAK_FMIN, PEAK_FMAX = 100.0, 5000.0
PEAK_DB = 10.0                # a tonal peak of the background: a local maximum of its spectrum alone this far over ...
PEAK_NEIGH = 8                # ... the median of the bins within this many either side (+-62 Hz)
CTRL_SHIFT = 5                # control bins this far (39 Hz) off each peak: measured the same way, no partial there
MIN_PEAKS = 3                 # fewer tonal peaks: the background is not tonal; its broadband level decides
GAP_SHARE = 0.05              # inside the spans, the 5% of frames with the least sound away from the background's
                              # peaks (the speech's gaps) show whether the background is still there ...
CHANGE_SHARE = 0.3            # ... and the 30% with the least such sound give its level against all of it alone
STOP_PRESENCE_DB = 3.0        # the peaks stand less than this over their control bins inside: the music stopped


class MixArgs(WindowArgs):
    pass


def _db_minus(level_db: float, floor_db: float) -> float:
    """Level with the floor's power subtracted (dB); at least 40 dB under the level when they are equal."""
    p = 10 ** (level_db / 10) - 10 ** (floor_db / 10)
    return float(10 * np.log10(max(p, 10 ** ((level_db - 40) / 10))))


class DuckingOutput(CoveredOutput):
    label: Literal["level", "dips", "stops", "no_speech", "no_background"] = Field(
        description=f"what the sound behind the voice does while it speaks: stays level (within {DIP_DB:g} dB), "
                    "dips, or stops; no_speech: no voice found; no_background: nothing heard without the voice")
    change_db: float | None = Field(description="background level in the gaps of the speech re its level outside "
                                                "the speech (dB, noise floor subtracted; negative: quieter)")
    gap_above_floor_db: float | None = Field(description="level in the speech's gaps above the noise floor (dB)")
    outside_above_floor_db: float | None = Field(description="level of the background alone above the noise floor (dB)")
    floor_db: float | None = Field(description="stationary noise floor (dBFS)")
    tonal_peaks: int | None = Field(description="tonal peaks of the background alone (0: its broadband level decided)")
    presence_out_db: float | None = Field(description="the background's peaks over their control bins, alone (dB)")
    presence_in_db: float | None = Field(description="the same in the speech's gaps (about 0: the background stopped)")
    speech_spans: list[tuple[float, float]] = Field(description="speech spans (s, artifact time)")
    returns_after: bool | None = Field(description="the background is heard again after the last span (within "
                                                   f"{DIP_DB:g} dB of its level before the first)")
    analysed_s: AnalysedWindow


def _power_frames(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Power spectra (float32, frames x bins) of PEAK_FRAME frames every PEAK_HOP and each frame's level (dB) in
    PEAK_FMIN-PEAK_FMAX; 120 s at most: about 25 MB."""
    n = 1 + max(0, len(y) - PEAK_FRAME) // PEAK_HOP
    y = np.pad(y, (0, max(0, (n - 1) * PEAK_HOP + PEAK_FRAME - len(y))))
    win = np.hanning(PEAK_FRAME)
    band = (np.fft.rfftfreq(PEAK_FRAME, 1 / SR) >= PEAK_FMIN) & (np.fft.rfftfreq(PEAK_FRAME, 1 / SR) <= PEAK_FMAX)
    P = np.empty((n, PEAK_FRAME // 2 + 1), dtype=np.float32)
    for a in range(0, n, 256):
        b = min(n, a + 256)
        idx = np.arange(a, b)[:, None] * PEAK_HOP + np.arange(PEAK_FRAME)[None, :]
        P[a:b] = np.abs(np.fft.rfft(y[idx].astype(np.float64) * win, axis=1)) ** 2
    return P, 10 * np.log10(P[:, band].sum(axis=1).astype(np.float64) + 1e-12)


def _tonal_peaks(S: np.ndarray, fs: np.ndarray) -> np.ndarray:
    """Bins of S (the background alone) that are local maxima PEAK_DB over the median of +-PEAK_NEIGH bins."""
    from scipy.ndimage import median_filter

    db = 10 * np.log10(S + 1e-20)
    base = median_filter(db, size=2 * PEAK_NEIGH + 1, mode="nearest")
    ok = (fs >= PEAK_FMIN) & (fs <= PEAK_FMAX)
    ok[1:-1] &= (db[1:-1] >= db[:-2]) & (db[1:-1] >= db[2:])
    return np.flatnonzero(ok & (db - base >= PEAK_DB))


def _peak_presence(S: np.ndarray, peaks: np.ndarray) -> tuple[float, float]:
    """(presence dB, excess power) of tonal peaks in a mean power spectrum S: the mean level of each peak bin
    (its larger neighbour too) over the median of the bins around it, less the same measured at the control
    bins CTRL_SHIFT off each peak (whatever else is there, speech harmonics or noise, lifts both alike, so with
    the background gone presence is about 0 dB); excess: the peak bins' power over that neighbourhood median."""
    db = 10 * np.log10(S + 1e-20)

    def local(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.maximum(b - PEAK_NEIGH, 0), np.minimum(b + PEAK_NEIGH + 1, len(S))
        med = np.array([np.median(db[a:c]) for a, c in zip(lo, hi)])
        top = np.maximum(db[b], db[np.minimum(b + 1, len(S) - 1)])
        return top - med, np.maximum(10 ** (top / 10) - 10 ** (med / 10), 0.0)

    at, excess = local(peaks)
    ct, _ = local(np.minimum(peaks + CTRL_SHIFT, len(S) - 1))
    return float(np.mean(at) - np.mean(ct)), float(np.sum(excess))


def _quiet_mean(P: np.ndarray, level: np.ndarray, mask: np.ndarray, share: float) -> np.ndarray | None:
    """Mean spectrum of the `share` of the frames in mask with the lowest `level` (None when there are none)."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return None
    keep = idx[level[idx] <= np.percentile(level[idx], share * 100)]
    return P[keep].mean(axis=0)


_NOT_MEASURED: dict[str, Any] = {"change_db": None, "gap_above_floor_db": None, "outside_above_floor_db": None,
                                 "floor_db": None, "tonal_peaks": None, "presence_out_db": None, "presence_in_db": None,
                                 "speech_spans": [], "returns_after": None}


def _speech_spans(prob: np.ndarray, n: int, fps: float) -> list[tuple[int, int]]:
    """Frames (of `n` at `fps`) of the speech spans: Silero windows at SPEECH_P or more, runs closer than
    SPAN_MERGE_S merged, spans shorter than MIN_SPAN_S dropped."""
    from audiomind.tools.vad import WINDOW

    sp = np.repeat(prob >= SPEECH_P, WINDOW // 160)[:n]
    sp = np.pad(sp, (0, n - len(sp)))
    spans: list[tuple[int, int]] = []
    for a, b in runs(sp):
        if spans and a - spans[-1][1] < SPAN_MERGE_S * fps:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return [(a, b) for a, b in spans if b - a >= MIN_SPAN_S * fps]


def _returns_after(db: np.ndarray, sounding: np.ndarray, spans: list[tuple[int, int]], g: int,
                   fps: float) -> bool | None:
    """Whether the background after the last span is back within DIP_DB of its level before the first (None
    without MIN_OUTSIDE_S of each)."""
    first, last = spans[0][0], spans[-1][1]
    before = db[: max(0, first - g)][sounding[: max(0, first - g)]]
    after = db[last + g:][sounding[last + g:]]
    if len(before) < MIN_OUTSIDE_S * fps or len(after) < MIN_OUTSIDE_S * fps:
        return None
    return bool(np.median(after) >= np.median(before) - DIP_DB)


def ducking(args: MixArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    db = frame_db(y, 160)                                  # 10 ms frames
    fps = SR / 160
    spans = _speech_spans(speech_probability(ctx, args.artifact, t0, len(y)), len(db), fps)
    span_s = [(round(t0 + a / fps, 2), round(t0 + b / fps, 2)) for a, b in spans]
    if not spans:
        out = {**base, **_NOT_MEASURED, "label": "no_speech"}
        return ToolResult(output=out, claims=[Claim(text="No speech found (Silero VAD): nothing to duck under.",
                                                    data={"label": "no_speech"})])
    inside = np.zeros(len(db), dtype=bool)
    near = np.zeros(len(db), dtype=bool)
    g = int(FADE_MARGIN_S * fps)
    for a, b in spans:
        inside[a:b] = True
        near[max(0, a - g):b + g] = True
    sounding = db > SILENT_DBFS
    outside = ~near
    floor = float(np.percentile(db[sounding], FLOOR_PERCENTILE)) if sounding.any() else SILENT_DBFS
    out_frames = db[outside & sounding]
    if outside.sum() < MIN_OUTSIDE_S * fps or len(out_frames) < MIN_OUTSIDE_S * fps \
            or float(np.median(out_frames)) < floor + STOP_ABOVE_FLOOR_DB:
        out = {**base, **_NOT_MEASURED, "label": "no_background", "floor_db": round(floor, 1), "speech_spans": span_s}
        return ToolResult(output=out, claims=[Claim(
            text="Nothing but the noise floor is heard without the voice: no background to follow.",
            data={"label": "no_background"})])
    out_level = float(np.median(out_frames))
    gap_level = float(np.percentile(db[inside], GAP_PERCENTILE))
    gap_silent = float(np.mean(db[inside] <= SILENT_DBFS)) * 100 >= GAP_PERCENTILE
    gap_above = (SILENT_DBFS - floor) if gap_silent else gap_level - floor
    out_above = out_level - floor
    # the background at its tonal peaks: 128 ms spectra; the peaks from its mean spectrum alone; inside the spans
    # the frames with the least sound away from those peaks (the speech's gaps, whatever the background does there)
    P, _ = _power_frames(y)
    j = np.minimum(np.arange(len(P)) * (PEAK_HOP // 160) + PEAK_FRAME // 320, len(db) - 1)  # 10 ms frame at centre
    fs = np.fft.rfftfreq(PEAK_FRAME, 1 / SR)
    om = outside[j] & sounding[j]
    S_out = P[om].mean(axis=0) if om.any() else None
    peaks = _tonal_peaks(S_out, fs) if S_out is not None else np.array([], dtype=int)
    near_peak = np.zeros(P.shape[1], dtype=bool)
    for d in range(-2, 3):
        near_peak[np.clip(peaks + d, 0, P.shape[1] - 1)] = True
    other = (fs >= PEAK_FMIN) & (fs <= PEAK_FMAX) & ~near_peak
    proxy = 10 * np.log10(P[:, other].sum(axis=1).astype(np.float64) + 1e-12)
    S_in = _quiet_mean(P, proxy, inside[j] & (db[j] > SILENT_DBFS), GAP_SHARE)
    presence_out = presence_in = None
    if gap_silent or S_in is None:
        label, change = "stops", SILENT_DBFS - out_above
    elif len(peaks) >= MIN_PEAKS and S_out is not None:
        presence_out, e_out = _peak_presence(S_out, peaks)
        presence_in, _ = _peak_presence(S_in, peaks)
        S_lvl = _quiet_mean(P, proxy, inside[j] & (db[j] > SILENT_DBFS), CHANGE_SHARE)
        _, e_in = _peak_presence(S_in if S_lvl is None else S_lvl, peaks)
        change = float(10 * np.log10(max(e_in, e_out * 1e-6) / max(e_out, 1e-20)))
        label = "stops" if presence_in < STOP_PRESENCE_DB else "dips" if change <= -DIP_DB else "level"
    else:  # no tonal peaks (noise, drums): the broadband level in the gaps, floor subtracted
        change = _db_minus(gap_level, floor) - _db_minus(out_level, floor)
        if gap_above < STOP_ABOVE_FLOOR_DB and out_above >= MUSIC_ABOVE_FLOOR_DB:
            label = "stops"
        else:
            label = "dips" if change <= -DIP_DB else "level"
    returns = _returns_after(db, sounding, spans, g, fps)
    out = {**base, "label": label, "change_db": round(change, 1), "gap_above_floor_db": round(gap_above, 1),
           "outside_above_floor_db": round(out_above, 1), "floor_db": round(floor, 1), "tonal_peaks": len(peaks),
           "presence_out_db": None if presence_out is None else round(presence_out, 1),
           "presence_in_db": None if presence_in is None else round(presence_in, 1), "speech_spans": span_s,
           "returns_after": returns}
    words = {"level": "stays level", "dips": "dips", "stops": "stops"}[label]
    back = "" if returns is None else (" and comes back afterwards" if returns else " and does not come back")
    how = (f"its {len(peaks)} tonal peaks stand {presence_in:+.1f} dB over their control bins in the speech's gaps "
           f"({presence_out:+.1f} dB alone; under {STOP_PRESENCE_DB:g}: stopped) and carry {change:+.1f} dB re their "
           f"power alone (dips at <= -{DIP_DB:g} dB)") if presence_in is not None and presence_out is not None else (
           f"its level in the speech's gaps is {change:+.1f} dB re its level alone (noise floor subtracted; "
           f"{gap_above:.1f} dB over the floor; dips at <= -{DIP_DB:g} dB, stops within {STOP_ABOVE_FLOOR_DB:g} dB of "
           "the floor)")
    text = (f"While the voice speaks ({len(spans)} span(s), {span_s[0][0]:g}-{span_s[-1][1]:g} s) the background "
            f"{words}{back}: {how}.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "change_db": out["change_db"]})])


# ---------------------------------------------------------------------------------------------- segue

SEGUE_FRAME, SEGUE_HOP = 1024, 320   # 64 ms log-mel frames every 20 ms
SEGUE_MELS = 40
SEGUE_CEPS = 12              # MFCCs 1-12: the spectral envelope, little of the pitch
NOVELTY_S = 2.0               # each side of a change of timbre holds at least this much sound
MIN_NOVELTY = 1.0             # a change point needs its sides this far apart (pooled standard deviations)
PAUSE_S = 0.5                 # a stretch this long within PAUSE_ABOVE_FLOOR_DB of the floor between the pieces
PAUSE_ABOVE_FLOOR_DB = 6.0    # (or digital silence) is a pause
ACTIVE_ABOVE_FLOOR_DB = 10.0  # frames this far over the floor hold one of the pieces
ACTIVE_BELOW_MEDIAN_DB = 10.0 # ... or within this of the median level (a piece without pauses has no floor)
PAUSE_BELOW_PIECES_DB = 10.0  # a pause is also this far under the median level (a piece's own soft notes are not)
CUT_MAX_S = 0.3               # the timbre moves from the first piece to the second within this: a hard cut
FADE_MIN_S = 0.8              # ... over at least this (fitted ramp): a crossfade
RAMP_WIDTHS_S = (0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 1.6, 2.0, 2.5, 3.0)


class SegueOutput(CoveredOutput):
    label: Literal["crossfade", "cut", "pause", "no_change", "too_short"] = Field(
        description=f"how the first sound gives way to the second: crossfade (a ramp >= {FADE_MIN_S:g} s, no "
                    f"pause), cut (the change within {CUT_MAX_S:g} s), pause (>= {PAUSE_S:g} s at the floor "
                    "between them); no_change: one sound throughout")
    change_s: float | None = Field(description="where the second sound takes over (s, artifact time)")
    ramp_s: float | None = Field(description="fitted duration of the change of timbre (s)")
    pause_s: float | None = Field(description="length of the pause at the change (s)")
    novelty: float | None = Field(description="timbre distance of the two sides (pooled standard deviations)")
    level_before_db: float | None = Field(description="level of the last 0.15 s before the change re the first "
                                                      "sound's median (dB)")
    analysed_s: AnalysedWindow


def _logmel(y: np.ndarray) -> np.ndarray:
    import librosa

    S = librosa.feature.melspectrogram(y=y, sr=SR, n_fft=SEGUE_FRAME, hop_length=SEGUE_HOP, n_mels=SEGUE_MELS,
                                       center=True, power=2.0)
    return 10 * np.log10(S + 1e-10).T                     # frames x mels


def _ramp_fit(proj: np.ndarray, c: int, fps: float) -> tuple[float, int]:
    """(width s, centre frame) of the clipped linear ramp 0 -> 1 that best fits the projection near frame c."""
    best = (np.inf, RAMP_WIDTHS_S[0], c)
    t = np.arange(len(proj))
    for w in RAMP_WIDTHS_S:
        for cc in range(max(1, c - int(1.0 * fps)), min(len(proj) - 1, c + int(1.0 * fps)) + 1, 2):
            model = np.clip((t - cc) / (w * fps) + 0.5, 0.0, 1.0)
            err = float(np.mean((proj - model) ** 2))
            if err < best[0] - 1e-9:
                best = (err, w, cc)
    return best[1], best[2]


def _change_point(Z: np.ndarray, active: np.ndarray, first: int, last: int, w: int) -> tuple[int, float]:
    """(frame, distance) of the split of the active frames of [first, last) into everything before and everything
    after it (each side >= w frames) whose side means lie furthest apart, in pooled within-side standard
    deviations averaged over the coefficients. Whole sides, not a few seconds either side: a piece's own note
    to note changes average out over its length while the change between two pieces does not (running sums:
    linear in the clip)."""
    idx = np.arange(first, last)[active[first:last]]
    if len(idx) < 2 * w:
        return -1, 0.0
    X = Z[idx].astype(np.float64)
    c1 = np.vstack([np.zeros(X.shape[1]), np.cumsum(X, axis=0)])
    c2 = np.vstack([np.zeros(X.shape[1]), np.cumsum(X ** 2, axis=0)])
    m = len(X)
    k = np.arange(w, m - w + 1)
    ml, mr = c1[k] / k[:, None], (c1[m] - c1[k]) / (m - k)[:, None]
    vl = np.maximum(c2[k] / k[:, None] - ml ** 2, 0.0)
    vr = np.maximum((c2[m] - c2[k]) / (m - k)[:, None] - mr ** 2, 0.0)
    sd = np.sqrt(0.5 * (vl + vr).mean(axis=1) + 1e-6)
    d = np.linalg.norm(ml - mr, axis=1) / np.sqrt(X.shape[1]) / sd
    i = int(np.argmax(d))
    return int(idx[k[i]]) if k[i] < m else int(idx[-1]), float(d[i])


def _transition(Lz: np.ndarray, active: np.ndarray, db: np.ndarray, first: int, last: int, k: int, w: int,
                fps: float) -> tuple[float, int, float]:
    """Around the change point k: (the width of the clipped linear ramp fitted to the frames' projection on the
    axis between the two timbres, s; its centre frame; the level just before the centre re the first sound's
    median, dB)."""
    from scipy.ndimage import median_filter

    A = Lz[max(first, k - 3 * w):max(first + 1, k - w)][active[max(first, k - 3 * w):max(first + 1, k - w)]]
    B = Lz[min(last - 1, k + w):min(last, k + 3 * w)][active[min(last - 1, k + w):min(last, k + 3 * w)]]
    if len(A) < 5 or len(B) < 5:  # too little on either side away from the change: the adjacent seconds
        A, B = Lz[max(0, k - w):k][active[max(0, k - w):k]], Lz[k:k + w][active[k:k + w]]
    ma, mb = A.mean(0), B.mean(0)
    axis = mb - ma
    lo, hi = max(0, k - 2 * w), min(len(db), k + 2 * w)
    proj = ((Lz[lo:hi] - ma) @ axis) / float(axis @ axis)
    proj = median_filter(proj, size=max(3, int(0.2 * fps) | 1), mode="nearest")
    width, centre = _ramp_fit(np.clip(proj, -0.5, 1.5), k - lo, fps)
    centre += lo
    before = db[max(0, centre - int(0.15 * fps)):centre]
    med_first = float(np.median(db[first:centre][active[first:centre]])) if active[first:centre].any() else float(db.max())
    lev_before = float(np.mean(before)) - med_first if len(before) else 0.0
    return width, centre, lev_before


def segue(args: MixArgs, ctx: ToolContext) -> ToolResult:
    """How one sound gives way to the next. 64 ms log-mel frames every 20 ms. The floor is the 2nd percentile of
    the sounding frames; a frame holds a piece when it stands ACTIVE_ABOVE_FLOOR_DB over the floor or comes within
    ACTIVE_BELOW_MEDIAN_DB of the median (a piece that never falls silent is its own 2nd percentile). A pause is
    the longest run >= PAUSE_S within PAUSE_ABOVE_FLOOR_DB of the floor and PAUSE_BELOW_PIECES_DB under the median
    (a piece's soft notes come within 6 dB of its floor but stay within 4-5 dB of its median). Otherwise the
    change is the split of the active frames whose two whole sides (each >= NOVELTY_S) have MFCC 1-12 means
    furthest apart in pooled standard deviations (version 1 compared 2 s either side: a piece's own note to
    note changes reached 1.2, as far as two instruments; whole sides: one fluidsynth or numpy piece 0.4-0.6,
    two instruments 1.0-3.6); under MIN_NOVELTY: no change. The clipped linear ramp fitted to the frames'
    projection on the axis between the two timbres gives the width: <= CUT_MAX_S a cut, >= FADE_MIN_S a
    crossfade."""
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=2.0)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    empty = {"change_s": None, "ramp_s": None, "pause_s": None, "novelty": None, "level_before_db": None}
    fps = SR / SEGUE_HOP
    L = _logmel(y)
    db = 10 * np.log10(np.mean(10 ** (L / 10), axis=1) + 1e-12)
    n = len(db)
    w = int(NOVELTY_S * fps)
    if n < 2 * w + 2:
        out = {**base, **empty, "label": "too_short"}
        return ToolResult(output=out, claims=[Claim(text=f"Too short to compare {NOVELTY_S:g} s either side of a "
                                                    "change.", data={"label": "too_short"})])
    sounding = db > SILENT_DBFS + 10
    floor = float(np.percentile(db[sounding], FLOOR_PERCENTILE)) if sounding.any() else SILENT_DBFS
    # a piece that never falls silent has no floor of its own (its 2nd percentile is itself): frames hold a piece
    # when they stand over the floor or come near the pieces' median level
    med = float(np.median(db[sounding])) if sounding.any() else SILENT_DBFS
    active = db >= min(floor + ACTIVE_ABOVE_FLOOR_DB, med - ACTIVE_BELOW_MEDIAN_DB)
    act = np.flatnonzero(active)
    first, last = (int(act[0]), int(act[-1]) + 1) if len(act) else (0, n)
    # a pause: the longest quiet stretch strictly between the first and last active frames, at the floor and
    # well under the pieces (a piece's own soft passage sits near its floor but not this far under its median)
    quiet = ((db < floor + PAUSE_ABOVE_FLOOR_DB) & (db < med - PAUSE_BELOW_PIECES_DB)) | ~sounding
    pauses = [(a, b) for a, b in runs(quiet[first:last])]
    pauses = [(a + first, b + first) for a, b in pauses]
    longest = max(pauses, key=lambda p: p[1] - p[0]) if pauses else None
    # timbre change point: the largest distance of the mean log-mel of the active frames either side
    from scipy.fft import dct

    Lz = dct(L, type=2, norm="ortho", axis=1)[:, 1:SEGUE_CEPS + 1]  # spectral envelope (MFCC without c0: no level)
    best_k, best_d = _change_point(Lz, active, first, last, w)
    if longest is not None and longest[1] - longest[0] >= PAUSE_S * fps:
        a, b = longest
        out = {**base, **empty, "label": "pause", "change_s": round(t0 + b / fps, 2),
               "pause_s": round((b - a) / fps, 2), "novelty": round(best_d, 2) if best_k >= 0 else None}
        text = (f"The first sound ends, {out['pause_s']:.2f} s of near-silence follow (within "
                f"{PAUSE_ABOVE_FLOOR_DB:g} dB of the floor), and the next starts at {out['change_s']:.2f} s.")
        return ToolResult(output=out, claims=[Claim(text=text, data={"label": "pause", "pause_s": out["pause_s"]})])
    if best_k < 0 or best_d < MIN_NOVELTY:
        out = {**base, **empty, "label": "no_change", "novelty": round(best_d, 2)}
        return ToolResult(output=out, claims=[Claim(
            text=f"No change of sound found (largest timbre distance {best_d:.2f} < {MIN_NOVELTY:g}).",
            data={"label": "no_change"})])
    width, centre, lev_before = _transition(Lz, active, db, first, last, best_k, w, fps)
    if width <= CUT_MAX_S:
        label = "cut"
    elif width >= FADE_MIN_S:
        label = "crossfade"
    else:  # in between: a cut keeps its level up to the change, a crossfade has faded by then
        label = "cut" if lev_before > -6.0 else "crossfade"
    out = {**base, "label": label, "change_s": round(t0 + centre / fps, 2), "ramp_s": round(width, 2),
           "pause_s": None, "novelty": round(best_d, 2), "level_before_db": round(lev_before, 1)}
    words = {"cut": "a hard cut", "crossfade": "a crossfade"}[label]
    text = (f"The first sound gives way to the second at {out['change_s']:.2f} s in {words}: the timbre moves from "
            f"one to the other over {width:.2f} s (cut <= {CUT_MAX_S:g} s, crossfade >= {FADE_MIN_S:g} s), with no "
            f"pause; the level just before is {lev_before:+.1f} dB re the first sound.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "ramp_s": out["ramp_s"]})])


# ---------------------------------------------------------------------------------------------- sound_match

MATCH_FRAME = 2048            # 128 ms frames (semitone resolution down to ~130 Hz) every 32 ms
MATCH_HOP = 512
MATCH_FMIN, MATCH_FMAX = 60.0, 7000.0
SOUND_ABOVE_FLOOR_DB = 15.0   # frames this far over the floor belong to a sound
SOUND_MERGE_S = 0.25          # a sound's own dips shorter than this do not split it
MIN_SOUND_S = 0.05
SAME_R = 0.95                 # spectra (semitone bands, level-normalised, floor subtracted) correlating this well ...
SAME_DUR = 1.25               # ... lasting within this ratio, with envelopes correlating >= SAME_ENV: the same sound
SAME_ENV = 0.8
SIMILAR_R = 0.8               # correlation at least this (or SAME_R after a transposition): similar
SHIFT_GAIN = 0.05             # a transposition by >= 1 semitone must raise the correlation this much
MAX_SHIFT_ST = 12


class SoundMatchOutput(CoveredOutput):
    label: Literal["same", "transposed_up", "transposed_down", "similar", "different", "one_sound"] = Field(
        description="the two loudest separate sounds: the same sound twice; the same sound shifted up / down in "
                    "pitch; similar; different sounds; one_sound: fewer than two separate sounds")
    first_s: tuple[float, float] | None = Field(description="the first sound's span (s, artifact time)")
    second_s: tuple[float, float] | None = Field(description="the second sound's span (s)")
    spectrum_r: float | None = Field(description="correlation of their level-normalised semitone-band spectra")
    shift_semitones: int | None = Field(description="the transposition of the second that best matches the first")
    shifted_r: float | None = Field(description="the correlation at that transposition")
    envelope_r: float | None = Field(description="correlation of their level envelopes (resampled to one length)")
    duration_ratio: float | None = Field(description="longer / shorter duration")
    level_diff_db: float | None = Field(description="second re first, mean level (dB)")
    sounds_found: int = Field(description="separate sounds found")
    analysed_s: AnalysedWindow


def _semitone_bands(fs: np.ndarray) -> np.ndarray:
    """Band index (semitones over MATCH_FMIN) of each FFT bin; -1 outside the range."""
    with np.errstate(divide="ignore"):
        st = np.floor(12 * np.log2(np.maximum(fs, 1e-9) / MATCH_FMIN))
    return np.where((fs >= MATCH_FMIN) & (fs <= MATCH_FMAX), st, -1).astype(int)


def _band_power(y: np.ndarray, n: int) -> np.ndarray:
    """Power per semitone band of `n` Hann-windowed MATCH_FRAME frames every MATCH_HOP (a block of frames at a
    time: memory bounded on long clips)."""
    win = np.hanning(MATCH_FRAME)
    band = _semitone_bands(np.fft.rfftfreq(MATCH_FRAME, 1 / SR))
    nb = int(band.max()) + 1
    keep = band >= 0
    P = np.empty((n, nb))
    for a in range(0, n, 256):
        b = min(n, a + 256)
        idx = np.arange(a, b)[:, None] * MATCH_HOP + np.arange(MATCH_FRAME)[None, :]
        S = np.abs(np.fft.rfft(y[idx].astype(np.float64) * win, axis=1)) ** 2
        P[a:b] = np.stack([np.bincount(band[keep], weights=s[keep], minlength=nb) for s in S])
    return P


def _corr(u: np.ndarray, v: np.ndarray) -> float:
    """Pearson correlation of two equally long vectors (0 for a constant one)."""
    u, v = u - u.mean(), v - v.mean()
    return float(u @ v / max(np.sqrt((u @ u) * (v @ v)), 1e-12))


def sound_match(args: MixArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.2)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    empty = {"first_s": None, "second_s": None, "spectrum_r": None, "shift_semitones": None, "shifted_r": None,
             "envelope_r": None, "duration_ratio": None, "level_diff_db": None}
    n = 1 + max(0, len(y) - MATCH_FRAME) // MATCH_HOP
    y = np.pad(y, (0, max(0, (n - 1) * MATCH_HOP + MATCH_FRAME - len(y))))
    P = _band_power(y, n)
    nb = P.shape[1]
    db = 10 * np.log10(P.sum(axis=1) + 1e-12)
    sounding = db > SILENT_DBFS + 10
    floor = max(float(np.percentile(db, 10)), SILENT_DBFS)  # digital silence counts: it is the floor
    noise = np.percentile(P[sounding], 10, axis=0) if sounding.sum() >= 10 else np.zeros(nb)
    fps = SR / MATCH_HOP
    spans: list[tuple[int, int]] = []
    for a, b in runs(db >= max(floor + SOUND_ABOVE_FLOOR_DB, db.max() - 50)):
        if spans and a - spans[-1][1] < SOUND_MERGE_S * fps:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    spans = [(a, b) for a, b in spans if (b - a) / fps >= MIN_SOUND_S]
    if len(spans) < 2:
        out = {**base, **empty, "label": "one_sound", "sounds_found": len(spans)}
        return ToolResult(output=out, claims=[Claim(text=f"{len(spans)} separate sound(s) found: nothing to compare.",
                                                    data={"label": "one_sound"})])
    energy = [float(np.sum(10 ** (db[a:b] / 10))) for a, b in spans]
    pick = sorted(sorted(range(len(spans)), key=lambda i: -energy[i])[:2])
    (a1, b1), (a2, b2) = spans[pick[0]], spans[pick[1]]

    def shape(a: int, b: int) -> np.ndarray:
        s = np.maximum(P[a:b].mean(axis=0) - noise, 1e-12)
        v = 10 * np.log10(s)
        return np.maximum(v, v.max() - 60.0)             # 60 dB of dynamic range: the floor's bins say nothing

    s1, s2 = shape(a1, b1), shape(a2, b2)
    r0 = _corr(s1, s2)
    best_k, best_r = 0, r0
    for k in range(-MAX_SHIFT_ST, MAX_SHIFT_ST + 1):
        if k == 0:
            continue
        u, v = (s1[:nb - k], s2[k:]) if k > 0 else (s1[-k:], s2[:nb + k])  # second shifted down by k: up by k
        r = _corr(u, v)
        if r > best_r:
            best_k, best_r = k, r
    e1, e2 = db[a1:b1], db[a2:b2]
    m = 20
    env_r = _corr(np.interp(np.linspace(0, 1, m), np.linspace(0, 1, len(e1)), e1),
                 np.interp(np.linspace(0, 1, m), np.linspace(0, 1, len(e2)), e2)) if min(len(e1), len(e2)) > 1 else 1.0
    d1, d2 = (b1 - a1) / fps, (b2 - a2) / fps
    dur = max(d1, d2) / max(min(d1, d2), 1e-9)
    if r0 >= SAME_R and dur <= SAME_DUR and env_r >= SAME_ENV:
        label = "same"
    elif best_k != 0 and best_r >= SAME_R and best_r >= r0 + SHIFT_GAIN and dur <= SAME_DUR:
        label = "transposed_up" if best_k > 0 else "transposed_down"
    elif max(r0, best_r) >= SIMILAR_R:
        label = "similar"
    else:
        label = "different"
    lev = float(10 * np.log10(np.mean(10 ** (e2 / 10)) / np.mean(10 ** (e1 / 10))))
    out = {**base, "label": label, "first_s": (round(t0 + a1 / fps, 2), round(t0 + b1 / fps, 2)),
           "second_s": (round(t0 + a2 / fps, 2), round(t0 + b2 / fps, 2)), "spectrum_r": round(r0, 3),
           "shift_semitones": best_k, "shifted_r": round(best_r, 3), "envelope_r": round(env_r, 3),
           "duration_ratio": round(dur, 2), "level_diff_db": round(lev, 1), "sounds_found": len(spans)}
    words = {"same": "the same sound twice", "transposed_up": f"the same sound, {best_k} semitones higher",
             "transposed_down": f"the same sound, {-best_k} semitones lower", "similar": "similar sounds",
             "different": "different sounds"}[label]
    text = (f"The two loudest separate sounds ({out['first_s'][0]:g}-{out['first_s'][1]:g} s and "
            f"{out['second_s'][0]:g}-{out['second_s'][1]:g} s) are {words}: spectra r = {r0:.2f} (same >= {SAME_R:g}, "
            f"similar >= {SIMILAR_R:g}), envelopes r = {env_r:.2f}, durations {d1:.2f} / {d2:.2f} s.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "spectrum_r": out["spectrum_r"]})])
