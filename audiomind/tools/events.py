"""temporal_segmentation: how many separate sound events occur and when, and where the silences are.

Both tools read only the energy envelope, so they can count and time sounds that stand out from their
surroundings; they cannot say what the sounds are (that is audio tagging's job) or whether one is speech.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.state import Coverage
from audiomind.tools.base import (
    ANALYSIS_WINDOW_S,
    Claim,
    TimeSpan,
    ToolArgs,
    ToolContext,
    ToolOutput,
    ToolResult,
    coverage,
)
from audiomind.tools.text import listed

SR = 16000
FRAME = 320  # 20 ms analysis window
HOP = 80  # 5 ms hop: event edges are resolved to about 5-10 ms
HOP_S = HOP / SR
MAX_LISTED = 200  # segments listed in the output; the count is always exact
EVENT_HIGHPASS_HZ = 20.0  # count_events ignores DC and infrasound: their slow drift is not a sound event


ENVELOPE_WINDOW = int(ANALYSIS_WINDOW_S * SR) // HOP * HOP  # samples per analysis window, whole hops
ENVELOPE_MARGIN = SR  # context either side of a window for the zero-phase filter and the frame edges


def envelope_db(y: np.ndarray, highpass_hz: float | None = None) -> np.ndarray:
    """`_envelope_db` of the whole clip, computed over 60 s windows with 1 s of context either side (the
    20 Hz filter's response has died out long before), so a long clip is never filtered or copied whole."""
    if len(y) <= 2 * ENVELOPE_WINDOW:
        return _envelope_db(y, highpass_hz)
    parts = []
    for s0 in range(0, len(y), ENVELOPE_WINDOW):
        s1 = min(len(y), s0 + ENVELOPE_WINDOW)
        a, b = max(0, s0 - ENVELOPE_MARGIN), min(len(y), s1 + ENVELOPE_MARGIN)
        db = _envelope_db(y[a:b], highpass_hz)  # frame j centred at sample a + j * HOP
        j0 = (s0 - a) // HOP
        parts.append(db[j0:] if s1 == len(y) else db[j0 : j0 + (s1 - s0) // HOP])
    return np.concatenate(parts)


def envelope_windows(n_samples: int) -> int:
    """How many analysis windows `envelope_db` uses for a clip of n_samples."""
    return 1 if n_samples <= 2 * ENVELOPE_WINDOW else -(-n_samples // ENVELOPE_WINDOW)


def _envelope_db(y: np.ndarray, highpass_hz: float | None = None) -> np.ndarray:
    """Frame RMS in dBFS (20 ms windows, 5 ms hop, frame i centred at i * HOP_S), optionally of the signal
    high-passed (zero-phase 2nd-order Butterworth) at highpass_hz first."""
    from audiomind.embedded import dsp, iir

    if highpass_hz is not None and len(y) > 64:
        y = iir.filtfilt(iir.butter_highpass(highpass_hz, SR), np.asarray(y, dtype=np.float64)).astype(np.float32)
    if len(y) < FRAME:
        y = np.pad(y, (0, FRAME - len(y)))
    rms = dsp.rms(y, frame_length=FRAME, hop_length=HOP, center=True)[0]  # = librosa.feature.rms
    return 20 * np.log10(np.maximum(rms, 1e-10))


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) frame index runs where mask is True."""
    if not mask.any():
        return []
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def _merge(runs: list[tuple[int, int]], max_gap: int) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for a, b in runs:
        if merged and a - merged[-1][1] < max_gap:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _split_on_dips(db: np.ndarray, a: int, b: int, dip_db: float, min_len: int) -> list[tuple[int, int]]:
    """Split [a, b) at envelope valleys at least dip_db below the smaller of the peaks either side
    (back-to-back sounds that never fall silent between them)."""
    from audiomind.embedded.dsp import scipy_module

    seg = scipy_module("ndimage").uniform_filter1d(db[a:b], size=5)
    n = len(seg)
    if n < 3 * min_len:
        return [(a, b)]
    best, best_depth = None, dip_db
    for i in range(min_len, n - min_len):
        if seg[i] > seg[i - 1] or seg[i] > seg[i + 1]:
            continue  # not a local minimum
        depth = min(seg[:i].max(), seg[i + 1 :].max()) - seg[i]
        if depth >= best_depth:
            best, best_depth = i, depth
    if best is None:
        return [(a, b)]
    return (_split_on_dips(db, a, a + best, dip_db, min_len)
            + _split_on_dips(db, a + best, b, dip_db, min_len))


class CountEventsArgs(ToolArgs):
    threshold_db: float = Field(-30.0, ge=-80.0, le=-3.0,
                                description="an event frame is louder than (clip peak + threshold_db); in a clean "
                                            "clip (quiet gaps are digital silence) this is the rule that decides")
    above_floor_db: float = Field(6.0, ge=1.0, le=40.0,
                                  description="an event frame also rises at least this many dB above the measured "
                                              "noise floor (and at least floor_range_share of the floor-to-peak "
                                              "range): in a noisy recording this is the rule that decides")
    floor_range_share: float = Field(0.5, ge=0.0, le=0.9,
                                     description="share of the floor-to-peak range (dB) an event frame must rise "
                                                 "above the noise floor, when larger than above_floor_db")
    floor_percentile: float = Field(15.0, ge=1.0, le=50.0,
                                    description="the noise floor is this percentile of the 20 ms frame levels "
                                                "(dBFS): the quiet stretches between sounds set it")
    floor_dbfs: float = Field(-60.0, ge=-100.0, le=-10.0,
                              description="absolute floor: nothing quieter than this counts, however quiet the clip")
    min_gap_s: float = Field(0.1, ge=0.0, le=5.0,
                             description="events separated by a shorter quiet gap are merged into one")
    min_duration_s: float = Field(0.03, ge=0.0, le=5.0, description="drop events shorter than this")
    split_dip_db: float | None = Field(
        None, ge=3.0, le=60.0,
        description="also split an event at an envelope dip this many dB deep (back-to-back sounds); None = off")


ThresholdSource = Literal["clip_peak", "noise_floor", "absolute_floor"]


class EnergyEvent(TimeSpan):
    """One separated sound event: where the envelope stays above the threshold."""

    peak_dbfs: float = Field(description="loudest 20 ms frame of the event (dBFS RMS)")


class CountEventsOutput(ToolOutput):
    count: int = Field(description="number of separated sound events (exact, even when the list is truncated)")
    events: list[EnergyEvent] = Field(description="the events in time order (at most 200 listed)")
    events_truncated: bool = Field(description="more events than listed")
    threshold_dbfs: float = Field(description="frame level (dBFS RMS) an event frame exceeds")
    threshold_from: ThresholdSource = Field(
        description="which rule set the threshold: clip_peak (peak + threshold_db), noise_floor (floor + rise) "
                    "or absolute_floor (floor_dbfs)")
    clip_peak_dbfs: float = Field(description="loudest 20 ms frame of the clip (dBFS RMS)")
    noise_floor_dbfs: float = Field(
        description="measured noise floor: floor_percentile of the 20 ms frame levels above 20 Hz (dBFS RMS; "
                    "-150 or lower = digital silence)")
    above_floor_db: float | None = Field(
        description="dB above the noise floor an event frame must rise (max of above_floor_db and "
                    "floor_range_share x floor-to-peak range); None when nothing rises above_floor_db over the "
                    "floor (one sustained sound or steady noise: the clip-peak rule alone applies)")
    mean_inter_onset_s: float | None = Field(description="mean time between event onsets (s); None under 2 events")
    inter_onset_std_s: float | None = Field(description="standard deviation of the onset intervals (s)")
    events_per_s: float = Field(description="events per second of audio")
    duration_s: float = Field(description="clip duration (s)")
    coverage: Coverage | None = Field(None, description="the stretches whose envelope was measured, in 60 s windows")


def event_threshold(
    db: np.ndarray, args: CountEventsArgs
) -> tuple[float, ThresholdSource, float, float, float | None]:
    """(threshold dBFS, which rule set it, clip peak, noise floor, rise above the floor or None).

    The threshold is the highest of: clip peak + threshold_db (the rule for clean clips), the measured noise
    floor + max(above_floor_db, floor_range_share x (peak - floor)) (the rule for noisy recordings, where
    peak + threshold_db lands in the noise), and the absolute floor_dbfs. When nothing rises above_floor_db
    over the floor, the floor rule is left out, so one sustained sound still counts as one event."""
    peak = float(db.max())
    floor = float(np.percentile(db, args.floor_percentile))
    candidates: dict[ThresholdSource, float] = {"clip_peak": peak + args.threshold_db,
                                                "absolute_floor": args.floor_dbfs}
    rise = None
    if peak - floor >= args.above_floor_db:
        rise = max(args.above_floor_db, args.floor_range_share * (peak - floor))
        candidates["noise_floor"] = floor + rise
    source = max(candidates, key=lambda k: candidates[k])
    return candidates[source], source, peak, floor, rise


def count_events(args: CountEventsArgs, ctx: ToolContext) -> ToolResult:
    y = ctx.audio(args.artifact).samples(sr=SR, mono=True)
    db = envelope_db(y, highpass_hz=EVENT_HIGHPASS_HZ)
    duration = len(y) / SR
    threshold, source, peak, floor, rise = event_threshold(db, args)
    runs = _merge(_runs(db > threshold), round(args.min_gap_s / HOP_S))
    if args.split_dip_db is not None:
        min_len = max(1, round(max(args.min_duration_s, 0.03) / HOP_S))
        runs = [r for a, b in runs for r in _split_on_dips(db, a, b, args.split_dip_db, min_len)]
    events = []
    for a, b in runs:
        start, end = max(0.0, a * HOP_S - HOP_S / 2), min(duration, (b - 1) * HOP_S + HOP_S / 2)
        if end - start < args.min_duration_s:
            continue
        events.append({"start_s": round(start, 3), "end_s": round(end, 3),
                       "peak_dbfs": round(float(db[a:b].max()), 1)})
    onsets = np.array([e["start_s"] for e in events])
    ioi = np.diff(onsets)
    out = {
        "count": len(events),
        "events": events[:MAX_LISTED],
        "events_truncated": len(events) > MAX_LISTED,
        "threshold_dbfs": round(threshold, 1),
        "threshold_from": source,
        "clip_peak_dbfs": round(peak, 1),
        "noise_floor_dbfs": round(floor, 1),
        "above_floor_db": round(rise, 1) if rise is not None else None,
        "mean_inter_onset_s": round(float(ioi.mean()), 3) if len(ioi) else None,
        "inter_onset_std_s": round(float(ioi.std()), 3) if len(ioi) else None,
        "events_per_s": round(len(events) / duration, 3) if duration else 0.0,
        "duration_s": round(duration, 3),
        "coverage": coverage([(0.0, duration)], (0.0, duration), envelope_windows(len(y)), ANALYSIS_WINDOW_S),
    }
    floor_txt = "digital silence" if floor <= -150 else f"{floor:.1f} dBFS"
    floor_rule = (f"{rise:.1f} dB above the noise floor ({floor_txt}, {args.floor_percentile:g}th percentile of "
                  f"frame levels)" if rise is not None else
                  f"nothing rises {args.above_floor_db:g} dB above the noise floor ({floor_txt})")
    rule = (f"energy above {threshold:.1f} dBFS, set by the {source.replace('_', ' ')} rule: the highest of "
            f"{args.threshold_db:g} dB re the clip peak ({peak:.1f} dBFS), {floor_rule}, and the absolute floor "
            f"{args.floor_dbfs:g} dBFS; gaps under {args.min_gap_s:g} s merged")
    if not events:
        claims = [Claim(text=f"No separate sound events found ({rule}).",
                        data={"count": 0, "noise_floor_dbfs": out["noise_floor_dbfs"]})]
        return ToolResult(output=out, claims=claims)
    shown = listed(events, 20, lambda e: f"{e['start_s']:.2f}-{e['end_s']:.2f} s")
    claims = [Claim(
        text=f"{len(events)} separate sound event(s) at {shown} ({rule}).",
        data={"count": len(events), "onsets_s": onsets[:MAX_LISTED].round(3).tolist(),
              "threshold_dbfs": out["threshold_dbfs"], "noise_floor_dbfs": out["noise_floor_dbfs"]},
    )]
    if len(ioi):
        claims.append(Claim(
            text=(f"Mean interval between event onsets {out['mean_inter_onset_s']:.2f} s "
                  f"(std {out['inter_onset_std_s']:.2f} s)."),
            data={"mean_inter_onset_s": out["mean_inter_onset_s"], "inter_onset_std_s": out["inter_onset_std_s"]},
        ))
    return ToolResult(output=out, claims=claims)


class SilenceIntervalsArgs(ToolArgs):
    threshold_dbfs: float = Field(-50.0, ge=-100.0, le=-10.0, description="frames quieter than this are silent")
    min_silence_s: float = Field(0.3, ge=0.02, le=30.0, description="report silences at least this long")


class SilenceIntervalsOutput(ToolOutput):
    intervals: list[TimeSpan] = Field(description="silent stretches in time order (at most 200 listed)")
    n_intervals: int = Field(description="number of silent stretches (exact)")
    intervals_truncated: bool = Field(description="more silent stretches than listed")
    silence_s: float = Field(description="total silent time (s)")
    silence_ratio: float = Field(description="silent share of the clip (0-1)")
    longest: TimeSpan | None = Field(description="the longest silent stretch; None when there is none")
    duration_s: float = Field(description="clip duration (s)")


def silence_intervals(args: SilenceIntervalsArgs, ctx: ToolContext) -> ToolResult:
    y = ctx.audio(args.artifact).samples(sr=SR, mono=True)
    db = envelope_db(y)
    duration = len(y) / SR
    min_frames = round(args.min_silence_s / HOP_S)
    intervals = []
    for a, b in _runs(db < args.threshold_dbfs):
        if b - a < min_frames:
            continue
        start = 0.0 if a == 0 else a * HOP_S
        end = duration if b >= len(db) else (b - 1) * HOP_S
        if end - start >= args.min_silence_s:
            intervals.append({"start_s": round(start, 3), "end_s": round(min(end, duration), 3)})
    total = sum(i["end_s"] - i["start_s"] for i in intervals)
    longest = max(intervals, key=lambda i: i["end_s"] - i["start_s"]) if intervals else None
    out: dict[str, Any] = {
        "intervals": intervals[:MAX_LISTED],
        "n_intervals": len(intervals),
        "intervals_truncated": len(intervals) > MAX_LISTED,
        "silence_s": round(total, 3),
        "silence_ratio": round(total / duration, 4) if duration else 0.0,
        "longest": longest,
        "duration_s": round(duration, 3),
    }
    rule = f"below {args.threshold_dbfs:g} dBFS for at least {args.min_silence_s:g} s"
    if not intervals:
        return ToolResult(output=out, claims=[Claim(text=f"No silent stretches ({rule}).", data={"n_intervals": 0})])
    shown = listed(intervals, 20, lambda i: f"{i['start_s']:.2f}-{i['end_s']:.2f} s")
    return ToolResult(output=out, claims=[Claim(
        text=(f"{len(intervals)} silent stretch(es) ({rule}): {shown}; {total:.2f} s in total "
              f"({100 * out['silence_ratio']:.0f}% of the clip)."),
        data={"intervals": [[i["start_s"], i["end_s"]] for i in intervals[:MAX_LISTED]], "silence_s": out["silence_s"]},
    )])
