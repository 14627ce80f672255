"""How sounds are grouped in time: metre (accents every 2nd, 3rd or 4th event), the order of two kinds of
sound (ABAB, AABB, AAAA BBBB) and whether two sound streams play together, one late, or alternating.

Events. Onsets are peaks of librosa's onset strength (10 ms hop); peaks under WEAK_ONSET of the strong ones
(90th percentile) are noise, not events. What each event adds is its "new" power spectrum: the mean power
over its first NEW_S (or up to the next onset) minus the mean power over the 40 ms before it, floored at 0,
so a note still ringing from before does not colour the next one. An onset counts as an event when some mel
band rises RISE_MAX_DB (or a tenth of them RISE_P90_DB) over the 90-40 ms before it and over its noise floor,
and the whole gets louder, or the rise persists 30-80 ms on (the splash of a sound that stops is no event).

- metre: per event its strength (dB of the new power), its pitch (the f0 whose harmonics hold the most new
  power, in octaves: a low note or a bass drum is heavy) and its length (until the level falls LENGTH_FALL_DB
  below its peak, or the next onset; the last event at most one beat). Each feature is split in two (the split with the largest
  between-group variance); a split holding >= SPLIT_ETA2 of the variance with groups apart by at least the
  feature's MIN_GAP marks accented events (the louder, lower or longer group). Accents matching every P-th
  event (P = 2, 3, 4, any phase) in >= REGULAR_MIN of the events give the metre: duple (a march, "in two"),
  triple (a waltz, "in three"), quadruple ("in four"); accents that fit none: irregular; no feature split
  into two groups: unaccented. Events are placed on beat numbers (the previous event's plus the gap in beats), so
  a missed onset leaves a hole rather than shifting the pattern. Musicians' metre is the grouping of beats; here a beat is an event, so the
  events must be the pulse (evenly spaced notes, clicks, drum hits), not a free melody.
- sequence_pattern: per event the shape of its new power spectrum in 1/3-octave bands (dB, mean removed), its
  log strength and its log length; two kinds by 2-means when their centres are >= KIND_GAP_DB apart (root-mean
  square over the features) and >= KIND_SEPARATION x the spread inside the kinds; runs of one kind then give
  alternating (every run 1), pairs (every inner run 2), blocks (two runs), runs (another equal length) or
  irregular (at most one run may break the rule when there are >= 6 runs: a missed onset).
- sync: the two streams are the two strongest peaks of the mean new-power spectrum (1/6-octave bands) at
  least an octave apart with a dip of >= STREAM_DIP_DB between them; each stream's onsets come from the positive
  dB flux of its own band (5 ms hop). For every onset of the lower stream the nearest onset of the higher one
  gives a signed lag (wrapped into +- half the beat): median |lag| <= SYNC_MS together; a steady lag (spread
  <= LAG_SPREAD_MS) up to LAGGED_MAX of the beat one stream late (which, and by how many ms); a lag of
  ALTERNATE_MIN of the beat or more, with the other stream's onsets falling between, alternating."""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.common import within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
N_FFT, HOP = 1024, 160        # 64 ms frames, 10 ms hop for events
SYNC_FFT, SYNC_HOP = 512, 80  # 32 ms frames, 5 ms hop for the lag between streams
MAX_S = 120.0                 # a rhythm is judged on a stretch: at most 120 s analysed (bounded memory)
PEAK_DELTA = 0.02             # librosa's peak picking on the normalised onset strength (its default 0.07 misses
                              # a soft tone next to loud noise bursts; the gates below reject what is not an event)
MIN_STRENGTH_DB = 25.0        # an event adds power within 25 dB of the median event (not the tail of a release)
WEAK_ONSET = 0.1              # onsets weaker than this share of the strong ones (90th percentile) are noise
MIN_GAP_S = 0.06              # two onsets closer than this are one event
NEW_S = 0.08                  # the first 80 ms after an onset carry what the event adds
PRE_FRAMES = (9, 4)           # "before" an onset: frames 90-40 ms earlier (64 ms frames reach 8 ms before it)
RISE_MAX_DB = 10.0            # an event raises some mel band by >= 10 dB over the 90-40 ms before it ...
OFFSET_DROP = 10 ** (-6 / 10)  # the whole may fall by up to 6 dB (a loud note still dying away); more: a stop
RISE_FRAMES = 3               # the rise is measured on the frames centred 0-20 ms after the onset (a peak of the
                              # onset strength just before a soft sound must not borrow its rise)
FLOOR_MARGIN_DB = 3.0         # ... and over the band's noise floor (10th percentile of its 80 ms level) + 3 dB
AUDIBLE_DB = 60.0             # ... and over 60 dB below the clip's loudest band (leakage in empty bands is no rise)
RISE_P90_DB = 5.5             # ... or a tenth of the 64 mel bands by >= 5.5 dB (noise alone: <= 8.5 and <= 4.6)
LENGTH_FALL_DB = 15.0         # an event lasts until its level falls this far below its peak
MIN_EVENTS = 6                # fewer events say nothing about grouping
# metre
SPLIT_ETA2 = 0.7              # a feature splits events into two groups when the split holds 70% of its variance
MIN_GAP = {"strength": 3.0, "pitch": 0.4, "length": 0.4}  # dB; octaves (5 semitones); log2 of a x1.3 length
PITCH_PARTIALS = 6            # harmonics summed for an event's pitch
REGULAR_MIN = 0.9             # accents must match every P-th event in 90% of the events
PERIODS = {2: "duple", 3: "triple", 4: "quadruple"}
# sequence_pattern
BAND_EDGES = 100.0 * 2 ** (np.arange(0, 19) / 3)  # 1/3-octave bands 100 Hz - 6.4 kHz
KIND_GAP_DB = 6.0             # the two kinds' centres differ by >= 6 dB RMS over the features
KIND_SEPARATION = 2.0         # ... and by >= 2x the RMS spread of events around their own kind's centre
# sync
STREAM_DIP_DB = 6.0           # two streams: two spectral peaks an octave apart with a 6 dB dip between them
BAND_RISE_DB = 6.0            # a stream's onset raises its band's level by 6 dB within 10 ms ...
BAND_TOP_DB = 15.0            # ... to within 15 dB of the band's loudest moments (99th percentile)
SYNC_MS = 25.0                # onsets within 25 ms are heard as together (a flam starts around 30 ms)
LAG_SPREAD_MS = 20.0          # a consistent lag varies by at most 20 ms (median absolute deviation)
LAGGED_MAX = 0.3              # a lag up to 30% of the beat is "late"; from ALTERNATE_MIN on the streams alternate
ALTERNATE_MIN = 0.35


class GroupingArgs(WindowArgs):
    pass


def _power(y: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    import librosa

    return (np.abs(librosa.stft(y, n_fft=n_fft, hop_length=hop, center=True)) ** 2).astype(np.float32)


def _onsets(y: np.ndarray) -> np.ndarray:
    """Onset frames (10 ms hop) of the events."""
    import librosa

    env = librosa.onset.onset_strength(y=y, sr=SR, hop_length=HOP)
    frames = librosa.onset.onset_detect(onset_envelope=env, sr=SR, hop_length=HOP, units="frames",
                                        backtrack=False, wait=int(MIN_GAP_S * SR / HOP), delta=PEAK_DELTA)
    if len(frames):
        frames = frames[env[frames] >= WEAK_ONSET * np.percentile(env[frames], 90)]
    return np.asarray(frames, dtype=int)


def _rises(S: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Mask of the onsets that add a sound: some mel band rises RISE_MAX_DB, or a tenth of them RISE_P90_DB, over
    both the frames before and its own noise floor (+FLOOR_MARGIN_DB), and either the whole gets louder or (a new
    sound over one still ringing) a tenth of the bands rise, still 30-80 ms on, and the whole falls by at most
    6 dB: the ups and downs of a steady noise and the splash of a sound that stops do not count. Onsets in the first 90 ms have no "before" and are left out."""
    import librosa
    from scipy.ndimage import uniform_filter1d

    mel = librosa.filters.mel(sr=SR, n_fft=(S.shape[0] - 1) * 2, n_mels=64) @ S
    new_n = int(NEW_S * SR / HOP)
    smooth = 10 * np.log10(uniform_filter1d(mel, new_n, axis=1, origin=-(new_n // 2), mode="nearest") + 1e-10)
    floor = np.maximum(np.percentile(smooth, 10, axis=1) + FLOOR_MARGIN_DB, smooth.max() - AUDIBLE_DB)
    a, b = PRE_FRAMES
    keep = np.zeros(len(frames), dtype=bool)
    for i, f in enumerate(frames):
        if f < a:
            continue
        nxt = frames[i + 1] if i + 1 < len(frames) else mel.shape[1]
        pre_p = mel[:, f - a:f - b].mean(axis=1)
        pre_db = np.maximum(10 * np.log10(pre_p + 1e-10), floor)
        new_p = mel[:, f:max(min(f + RISE_FRAMES, nxt), f + 1)].mean(axis=1)
        rise = 10 * np.log10(new_p + 1e-10) - pre_db
        if not (rise.max() >= RISE_MAX_DB or np.percentile(rise, 90) >= RISE_P90_DB):
            continue
        if new_p.sum() >= pre_p.sum():  # louder than before: a sound starts
            keep[i] = True
            continue
        # quieter than before: a new sound over one dying away when a tenth of the bands rise, the rise persists
        # 30-80 ms on and the whole falls by at most OFFSET_DROP (a splash of a sound that stops is gone by then,
        # or lifts a single band: a pure tone entering over a louder dying sound is missed)
        lo_late = min(f + RISE_FRAMES, mel.shape[1] - 1)
        late = mel[:, lo_late:max(min(f + new_n, nxt), lo_late + 1)].mean(axis=1)
        late_rise = 10 * np.log10(late + 1e-10) - pre_db
        broad = np.percentile(rise, 90) >= RISE_P90_DB and np.percentile(late_rise, 90) >= RISE_P90_DB / 2
        keep[i] = bool(broad and new_p.sum() >= pre_p.sum() * OFFSET_DROP)
    return keep


def _events(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(onset times s, new power spectrum per event [n, bins], strength dB, length s)."""
    S = _power(y, N_FFT, HOP)
    frames = _onsets(y)
    level = 10 * np.log10(S.sum(axis=0) + 1e-10)
    new_n = int(NEW_S * SR / HOP)
    frames = frames[_rises(S, frames)]
    news, strength, length = [], [], []
    for i, f in enumerate(frames):
        nxt = frames[i + 1] if i + 1 < len(frames) else S.shape[1]
        b = max(min(f + new_n, nxt, S.shape[1]), f + 1)
        pre = S[:, f - PRE_FRAMES[0]:f - PRE_FRAMES[1]].mean(axis=1)
        new = np.maximum(S[:, f:b].mean(axis=1) - pre, 0.0)
        news.append(new)
        strength.append(10 * np.log10(new.sum() + 1e-10))
        seg = level[f:nxt]
        peak = int(np.argmax(seg)) if len(seg) else 0
        below = np.flatnonzero(seg[peak:] < seg[peak] - LENGTH_FALL_DB) if len(seg) else np.array([])
        length.append(((peak + below[0]) if len(below) else len(seg)) * HOP / SR)
    times = frames * HOP / SR
    spec = np.array(news) if news else np.zeros((0, S.shape[0]))
    st, ln = np.array(strength), np.maximum(np.array(length), HOP / SR)
    ok = st >= np.median(st) - MIN_STRENGTH_DB if len(st) else np.zeros(0, bool)
    return times[ok], spec[ok], st[ok], ln[ok]


def _pitch_hz(spec: np.ndarray) -> np.ndarray:
    """The pitch of what each event adds: the candidate f0 (50-2000 Hz, quarter-tone grid) whose first
    PITCH_PARTIALS harmonics (weighted 0.8^k) hold the most new power: a note's pitch, a drum's or a noise's
    low or high weight."""
    f = np.fft.rfftfreq(N_FFT, 1 / SR)
    cand = 50.0 * 2 ** (np.arange(0, int(24 * np.log2(2000 / 50)) + 1) / 24)
    h = np.arange(1, PITCH_PARTIALS + 1)
    idx = np.clip(np.rint(np.outer(cand, h) / f[1]).astype(int), 1, len(f) - 2)
    near = np.maximum(np.maximum(spec[:, idx - 1], spec[:, idx]), spec[:, idx + 1])  # [events, cand, partials]
    sal = (near * 0.8 ** (h - 1)).sum(axis=2)
    return cand[np.argmax(sal, axis=1)]


def _split(x: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(eta2, gap between group means, mask of the upper group) of the best two-group split of x."""
    order = np.argsort(x)
    xs = x[order]
    tot = float(np.var(xs)) * len(xs)
    best = (0.0, 0.0, np.zeros(len(x), bool))
    if tot <= 1e-12:
        return best
    for k in range(1, len(xs)):
        a, b = xs[:k], xs[k:]
        between = len(a) * (a.mean() - xs.mean()) ** 2 + len(b) * (b.mean() - xs.mean()) ** 2
        eta = float(between / tot)
        if eta > best[0]:
            mask = np.zeros(len(x), bool)
            mask[order[k:]] = True
            best = (eta, float(b.mean() - a.mean()), mask)
    return best


class MetreOutput(CoveredOutput):
    label: Literal["duple", "triple", "quadruple", "irregular", "unaccented", "too_few_events"] = Field(
        description="accents every 2nd (duple, 'in two'), 3rd (triple, 'in three') or 4th event; accents "
                    "with no period (irregular); events all alike (unaccented)")
    period_events: int | None = Field(description="events per group (2, 3, 4)")
    period_s: float | None = Field(description="length of one group (s)")
    regularity: float | None = Field(description="share of events whose accent matches the period (0-1)")
    accent_by: Literal["strength", "pitch", "length"] | None = Field(
        description="what marks the accented event: louder (strength), lower (pitch) or longer (length)")
    accents: str = Field(description="the accent pattern, 'x' accented and '.' not (at most 64 events)")
    events: int = Field(description="events found")
    beat_s: float | None = Field(description="median time between events (s)")
    beat_cv: float | None = Field(description="coefficient of variation of the times between events")
    analysed_s: AnalysedWindow


def _slots(times: np.ndarray, beat: float) -> np.ndarray:
    """Each event's beat number: the previous one's plus its distance in beats (at least 1), so a missed onset
    leaves a gap instead of shifting every later event, and a slow drift of the tempo is followed."""
    if len(times) < 2:
        return np.arange(len(times))
    steps = np.maximum(1, np.rint(np.diff(times) / max(beat, 1e-3))).astype(int)
    return np.concatenate([[0], np.cumsum(steps)])


def _period_fit(acc: np.ndarray, slots: np.ndarray) -> tuple[int, int, float]:
    """(period, phase, share of events matching) of the best accent period; ties go to the shorter period."""
    best = (0, 0, 0.0)
    for p in PERIODS:
        if len(acc) < 2 * p + 1:
            continue
        for ph in range(p):
            tmpl = (slots - ph) % p == 0
            share = float(np.mean(tmpl == acc))
            if share > best[2] + 1e-9:
                best = (p, ph, share)
    return best


def metre(args: GroupingArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, "a rhythm is judged on a stretch")
    times, spec, strength, length = _events(y)
    base: dict[str, Any] = {"events": len(times), "analysed_s": (round(t0, 3), round(t1, 3))}
    ioi = np.diff(times)
    beat = float(np.median(ioi)) if len(ioi) else None
    cv = float(np.std(ioi) / max(float(np.mean(ioi)), 1e-9)) if len(ioi) else None
    base |= {"beat_s": None if beat is None else round(beat, 3), "beat_cv": None if cv is None else round(cv, 3)}
    empty: dict[str, Any] = {"period_events": None, "period_s": None, "regularity": None, "accent_by": None, "accents": ""}
    if len(times) < MIN_EVENTS:
        out = {**base, **empty, "label": "too_few_events"}
        return ToolResult(output=out, claims=[Claim(text=f"Only {len(times)} events: too few for a metre.",
                                                    data={"label": "too_few_events"})])
    length = length.copy()
    length[-1] = min(length[-1], beat or length[-1])  # nothing follows the last event: at most one beat long
    slots = _slots(times, beat or 1.0)
    feats = {"strength": strength, "pitch": -np.log2(_pitch_hz(spec)), "length": np.log2(length)}
    candidates = []  # (share, eta2, period, phase, feature, accents)
    for name, x in feats.items():
        eta, gap, upper = _split(x)
        if eta < SPLIT_ETA2 or gap < MIN_GAP[name]:
            continue
        p, ph, share = _period_fit(upper, slots)
        candidates.append((share, eta, p, ph, name, upper))
    if not candidates:
        out = {**base, **empty, "label": "unaccented"}
        text = (f"{len(times)} events, no accent: no event is markedly louder, lower or longer than the others "
                "(no grouping heard).")
        return ToolResult(output=out, claims=[Claim(text=text, data={"label": "unaccented"})])
    share, eta, p, ph, name, acc = max(candidates, key=lambda c: (c[0] >= REGULAR_MIN, c[0], c[1]))
    pattern = "".join("x" if a else "." for a in acc[:64])
    if p and share >= REGULAR_MIN:
        label = PERIODS[p]
        out = {**base, "label": label, "period_events": p, "period_s": round(p * beat, 3) if beat else None,
               "regularity": round(share, 3), "accent_by": name, "accents": pattern}
        words = {2: "in two (duple, like a march)", 3: "in three (triple, like a waltz)", 4: "in four (quadruple)"}[p]
        by = {"strength": "louder", "pitch": "lower", "length": "longer"}[name]
        text = (f"{len(times)} events about {beat:.2f} s apart are grouped {words}: a {by} event every {p}th "
                f"({share:.0%} of events fit; {pattern}).")
    else:
        label = "irregular"
        out = {**base, "label": label, "period_events": None, "period_s": None, "regularity": round(share, 3),
               "accent_by": name, "accents": pattern}
        text = (f"{len(times)} events with accents ({pattern}) that repeat in no regular grouping of 2, 3 or 4 "
                f"(best fit {share:.0%}; {REGULAR_MIN:.0%} needed).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "period_events": out["period_events"]})])


# ------------------------------------------------------------------------------------------- sequence_pattern

class SequencePatternOutput(CoveredOutput):
    label: Literal["alternating", "pairs", "blocks", "runs", "irregular", "one_kind", "too_few_events"] = Field(
        description="ABAB (alternating), AABB (pairs), AAAA BBBB (blocks), runs of another equal length, "
                    "irregular order, or all events of one kind")
    sequence: str = Field(description="the events as 'A' and 'B' in time order (A: the kind heard first; at most 64)")
    run_lengths: list[int] = Field(description="lengths of the runs of one kind (at most 32)")
    events: int = Field(description="events found")
    kind_gap_db: float | None = Field(description="distance between the two kinds' centres (dB, RMS over features)")
    separation: float | None = Field(description="that distance over the spread inside the kinds")
    analysed_s: AnalysedWindow


def _band_shape(spec: np.ndarray) -> np.ndarray:
    f = np.fft.rfftfreq(N_FFT, 1 / SR)
    bands = np.stack([spec[:, (f >= lo) & (f < hi)].sum(axis=1)
                      for lo, hi in itertools.pairwise(BAND_EDGES)], axis=1)
    db = 10 * np.log10(bands + 1e-10)
    db = np.maximum(db, db.max(axis=1, keepdims=True) - 50)  # 50 dB below the event's strongest band is nothing
    return db - db.mean(axis=1, keepdims=True)


def _two_means(x: np.ndarray, iters: int = 50) -> np.ndarray:
    """Labels 0/1 by 2-means from the two farthest-apart points."""
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    i, j = np.unravel_index(int(np.argmax(d)), d.shape)
    c = np.stack([x[i], x[j]])
    lab = np.zeros(len(x), int)
    for _ in range(iters):
        new = ((x[:, None, :] - c[None]) ** 2).sum(axis=2).argmin(axis=1)
        if (new == lab).all() and _ > 0:
            break
        lab = new
        c = np.stack([x[lab == k].mean(axis=0) if (lab == k).any() else c[k] for k in (0, 1)])
    return lab


def _pattern(runs_: list[int]) -> str:
    n = len(runs_)
    if n == 2 and min(runs_) >= 2:
        return "blocks"
    allowed = 1 if n >= 6 else 0
    if n >= 4 and sum(r != 1 for r in runs_) <= allowed:
        return "alternating"
    inner = runs_[1:-1]
    if n >= 3 and sum(r != 2 for r in inner) <= allowed and all(r <= 2 for r in (runs_[0], runs_[-1])) and inner:
        return "pairs"
    if n >= 3 and len(set(inner)) == 1 and inner[0] >= 3 and all(r <= inner[0] for r in (runs_[0], runs_[-1])):
        return "runs"
    return "irregular"


def sequence_pattern(args: GroupingArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, "a rhythm is judged on a stretch")
    times, spec, strength, length = _events(y)
    base: dict[str, Any] = {"events": len(times), "analysed_s": (round(t0, 3), round(t1, 3))}
    if len(times) < 4:
        out = {**base, "label": "too_few_events", "sequence": "", "run_lengths": [], "kind_gap_db": None,
               "separation": None}
        return ToolResult(output=out, claims=[Claim(text=f"Only {len(times)} events: too few for an order of kinds.",
                                                    data={"label": "too_few_events"})])
    # spectral shape (dB), strength relative to the median (dB) and length (x10 log10: a doubling reads 3 dB)
    x = np.column_stack([_band_shape(spec), strength - np.median(strength), 10 * np.log10(length)])
    lab = _two_means(x)
    if lab.min() == lab.max():
        gap, sep = 0.0, 0.0
    else:
        c0, c1 = x[lab == 0].mean(axis=0), x[lab == 1].mean(axis=0)
        gap = float(np.sqrt(np.mean((c0 - c1) ** 2)))
        spread = float(np.sqrt(np.mean((x - np.where(lab[:, None] == 0, c0, c1)) ** 2)))
        sep = min(gap / max(spread, 1e-6), 99.0)  # identical events of each kind: no spread at all
    if lab[0] == 1:
        lab = 1 - lab
    seq = "".join("AB"[k] for k in lab)
    runs_ = [len(r) for r in seq.replace("AB", "A B").replace("BA", "B A").split()]
    common: dict[str, Any] = {**base, "sequence": seq[:64], "run_lengths": runs_[:32], "kind_gap_db": round(gap, 1),
              "separation": round(sep, 2)}
    if gap < KIND_GAP_DB or sep < KIND_SEPARATION:
        out = {**common, "label": "one_kind"}
        text = (f"{len(times)} events, all of one kind (the two best groups differ by {gap:.1f} dB, "
                f"{sep:.1f}x their spread; two kinds need {KIND_GAP_DB:g} dB and {KIND_SEPARATION:g}x).")
        return ToolResult(output=out, claims=[Claim(text=text, data={"label": "one_kind"})])
    label = _pattern(runs_)
    out = {**common, "label": label}
    words = {"alternating": "alternate one by one (ABAB)", "pairs": "come in pairs (AABB)",
             "blocks": "come all of one kind, then all of the other (AAAA BBBB)",
             "runs": f"come in runs of {runs_[1] if len(runs_) > 1 else 0}",
             "irregular": "come in no regular order"}[label]
    text = (f"{len(times)} events of two kinds ({gap:.0f} dB apart) {words}: {seq[:64]}.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "sequence": seq[:64]})])


# ------------------------------------------------------------------------------------------- sync

class SyncOutput(CoveredOutput):
    label: Literal["together", "lagged", "alternating", "unrelated", "one_stream", "too_few_events"] = Field(
        description="two streams' events together (within SYNC_MS), one consistently late, interleaved "
                    "(alternating), in no steady relation, or only one stream heard")
    low_hz: float | None = Field(description="centre of the lower stream's band (Hz)")
    high_hz: float | None = Field(description="centre of the higher stream's band (Hz)")
    low_events: int = Field(description="onsets of the lower stream")
    high_events: int = Field(description="onsets of the higher stream")
    lag_ms: float | None = Field(description="median lag of the higher stream after the lower (ms; negative: earlier)")
    lag_spread_ms: float | None = Field(description="median absolute deviation of the lag (ms)")
    beat_s: float | None = Field(description="median time between the lower stream's onsets (s)")
    late: Literal["low", "high"] | None = Field(description="the stream that is late when lagged")
    analysed_s: AnalysedWindow


def _streams(spec_mean: np.ndarray, f: np.ndarray) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The two stream bands (lo, hi Hz each) from the mean new-power spectrum, or None."""
    edges = 80.0 * 2 ** (np.arange(0, 38) / 6)  # 1/6-octave bands 80 Hz - 6.4 kHz
    edges = edges[edges < SR / 2]
    p = np.array([spec_mean[(f >= lo) & (f < hi)].sum() for lo, hi in itertools.pairwise(edges)])
    db = 10 * np.log10(p + 1e-12)
    db = np.convolve(db, np.ones(3) / 3, mode="same")
    peaks = [i for i in range(len(db)) if db[i] == db[max(0, i - 3):i + 4].max() and db[i] > db.max() - 30]
    best = None
    for a in peaks:
        for b in peaks:
            if b - a < 6:  # at least an octave apart
                continue
            dip = min(db[a], db[b]) - db[a:b + 1].min()
            if dip >= STREAM_DIP_DB and (best is None or db[a] + db[b] > best[0]):
                best = (db[a] + db[b], a, b)
    if best is None:
        return None
    _, a, b = best
    mid = int(a + np.argmin(db[a:b + 1]))

    def region(k: int, lo_lim: int, hi_lim: int) -> tuple[float, float]:
        lo = max(lo_lim, k - 3)
        hi = min(hi_lim, k + 3)
        return float(edges[lo]), float(edges[hi + 1])

    return region(a, 0, mid - 1), region(b, mid + 1, len(db) - 1)


def _band_onsets(S: np.ndarray, f: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """Onset times (s) in a band (5 ms hop): the band level rises >= BAND_RISE_DB within 10 ms and reaches
    within BAND_TOP_DB of the band's loudest moments (a faint splash of another stream's attack is no onset)."""
    from audiomind.embedded.dsp import scipy_signal

    find_peaks = scipy_signal().find_peaks
    level = 10 * np.log10(S[(f >= band[0]) & (f < band[1])].sum(axis=0) + 1e-10)
    rise = np.concatenate([[0.0, 0.0], level[2:] - level[:-2]])
    pk, _ = find_peaks(rise, height=BAND_RISE_DB, distance=int(MIN_GAP_S * SR / SYNC_HOP))
    top = float(np.percentile(level, 99))
    ahead = int(0.03 * SR / SYNC_HOP)
    pk = [k for k in pk if level[k:k + ahead].max() >= top - BAND_TOP_DB]
    return np.asarray(pk, dtype=float) * SYNC_HOP / SR


def sync(args: GroupingArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=1.0)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, "a rhythm is judged on a stretch")
    times, spec, _, _ = _events(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    empty: dict[str, Any] = {"low_hz": None, "high_hz": None, "low_events": 0, "high_events": 0, "lag_ms": None,
             "lag_spread_ms": None, "beat_s": None, "late": None}
    if len(times) < 4:
        out = {**base, **empty, "label": "too_few_events"}
        return ToolResult(output=out, claims=[Claim(text=f"Only {len(times)} events: too few to relate two streams.",
                                                    data={"label": "too_few_events"})])
    bands = _streams(spec.mean(axis=0), np.fft.rfftfreq(N_FFT, 1 / SR))
    if bands is None:
        out = {**base, **empty, "label": "one_stream"}
        return ToolResult(output=out, claims=[Claim(
            text="The events occupy one band: no second stream an octave away with a dip between them.",
            data={"label": "one_stream"})])
    S = _power(y, SYNC_FFT, SYNC_HOP)
    f = np.fft.rfftfreq(SYNC_FFT, 1 / SR)
    lo_on, hi_on = _band_onsets(S, f, bands[0]), _band_onsets(S, f, bands[1])
    centre = [round(float(np.sqrt(b[0] * b[1])), 0) for b in bands]
    common: dict[str, Any] = {**base, "low_hz": centre[0], "high_hz": centre[1], "low_events": len(lo_on), "high_events": len(hi_on)}
    if min(len(lo_on), len(hi_on)) < 3:
        out = {**common, **dict.fromkeys(("lag_ms", "lag_spread_ms", "beat_s", "late")), "label": "one_stream"}
        return ToolResult(output=out, claims=[Claim(
            text=f"Only one band carries a stream of events ({len(lo_on)} low, {len(hi_on)} high onsets).",
            data={"label": "one_stream"})])
    beat = float(np.median(np.diff(lo_on)))
    lags = np.array([hi_on[np.argmin(np.abs(hi_on - t))] - t for t in lo_on])
    lags = (lags + beat / 2) % beat - beat / 2  # wrapped into +- half a beat
    lag = float(np.median(lags))
    spread = float(np.median(np.abs(lags - lag)))
    ratio = len(hi_on) / len(lo_on)
    between = np.mean([np.any((hi_on > a) & (hi_on < b)) for a, b in itertools.pairwise(lo_on)])
    if not 0.67 <= ratio <= 1.5:
        label = "unrelated"
    elif abs(lag) * 1000 <= SYNC_MS and np.mean(np.abs(lags) * 1000 <= SYNC_MS + LAG_SPREAD_MS) >= 0.75:
        label = "together"
    elif spread * 1000 <= LAG_SPREAD_MS and abs(lag) <= LAGGED_MAX * beat:
        label = "lagged"
    elif abs(lag) >= ALTERNATE_MIN * beat and between >= 0.75:
        label = "alternating"
    else:
        label = "unrelated"
    late = ("high" if lag > 0 else "low") if label == "lagged" else None
    out = {**common, "label": label, "lag_ms": round(lag * 1000, 1), "lag_spread_ms": round(spread * 1000, 1),
           "beat_s": round(beat, 3), "late": late}
    words = {"together": f"play together (median offset {lag * 1000:+.0f} ms; together is within {SYNC_MS:g} ms)",
             "lagged": f"are offset: the {late} one is consistently {abs(lag) * 1000:.0f} ms late",
             "alternating": "alternate: the higher events fall between the lower ones",
             "unrelated": "keep no steady relation in time"}[label]
    text = (f"Two streams, around {centre[0]:.0f} Hz ({len(lo_on)} onsets) and {centre[1]:.0f} Hz ({len(hi_on)} "
            f"onsets, beat {beat:.2f} s), {words}.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "lag_ms": out["lag_ms"], "late": late})])
