"""How notes are played and tuned: tuning of a melody, how a chord's notes start, a held low note underneath,
and how two parts relate. Each reads at most MAX_S seconds (the excerpt budget; coverage is recorded).

- tuning: notes of a line by level onsets and f0 (YIN, 64 ms frames, 10 ms hop); a note is a stretch of
  steady f0 between onsets, silences or f0 steps >= STEP_ST semitones, at least MIN_NOTE_S long (an onset
  between two contiguous stretches within SAME_ST of each other splits them only when the level rises by
  RESTRIKE_DB: a re-struck note, not a wobble of the detector). Each note's
  pitch is the median f0 over its middle 60%, in cents from A440 equal temperament; the clip's reference is
  the circular median of the notes' offsets from the nearest semitone (so a melody tuned a little off A440 as
  a whole is still in tune), and each note's error is its offset from that reference. The note with the
  largest error is out of tune when the error is >= OFF_CENTS (listeners hear about 10-25 cents in a melody;
  25 stays clear of vibrato and attack scatter, which the median over the note's middle averages out).
- chord_attack: attacks (librosa onset strength peaks >= ATTACK_SHARE of the strongest) and, at each, the
  pitches it starts (basic-pitch: an onset activation >= ONSET_ACT and a frame activation rising >= RISE across
  it; overtones of a pitch starting with it left out). An attack starting >= 2 pitch classes is a block
  (an octave alone is one); one a single note. All
  blocks: block; all single notes: arpeggiated (broken, each note ringing on); single notes then a block:
  spread_then_block; a block then single notes: block_then_spread.
- sustained_bass: basic-pitch frame activations (>= HELD_ACT, gaps < BRIDGE_S bridged); the longest-held pitch
  is a sustained bass (drone / pedal) when it lasts >= HELD_MIN_S and >= HELD_SHARE of the sounding span, lies
  >= BELOW_ST semitones below the lowest other pitch sounding with it (median over its frames), and other pitches sound during >= WITH_SHARE
  of it. It is there throughout, enters or stops partway, by whether it starts / ends within EDGE_S (or
  EDGE_SHARE of the span) of the sound's start / end.
- voicing_relation: basic-pitch notes (overtones dropped) on a 20 ms grid: where two pitch classes sound
  together for >= HARMONY_SHARE of the sounding time, harmony. Otherwise one line sounds; its notes'
  timbres (mean MFCC 1-12 per note, pitch-normalised per coefficient by a fitted line against the note's
  pitch) are split into two contiguous groups at the best boundary: groups whose means differ by
  >= TURN_SEPARATION pooled standard deviations are two instruments taking turns; else unison (or an
  octave doubling: the same notes together)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import midi_name
from audiomind.tools.window import WindowArgs, excerpt

MAX_S = 60.0
SR = 16000
# tuning
FRAME, HOP = 1024, 160       # YIN: 64 ms frames (two periods down to 31 Hz), 10 ms hop
ACTIVE_DB = 25.0             # a frame sounds when within this of the loudest
STEP_ST = 0.5                # an f0 step this large (held over 50 ms) starts a new note
MIN_NOTE_S = 0.12
SAME_ST = 0.3                # contiguous notes this close in pitch ...
RESTRIKE_DB = 3.0            # ... are one note unless the level rises this much after the onset
OFF_CENTS = 25.0
# chord_attack
ATTACK_SHARE = 0.1           # an attack: an onset-strength peak >= this share of the strongest (a lone note after a block is weak)
ATTACK_WINDOW_S = 0.07       # pitches starting within +-this of an attack start with it
ONSET_ACT = 0.5              # basic-pitch's own onset threshold
RISE = 0.2                   # a pitch starts when its frame activation rises this much ...
RISE_SHARE = 0.4             # ... and at least this share of the attack's largest rise
PARTIAL_SHARE = 0.6          # a harmonic above a starting pitch rising less than this share of it: its overtone
MIN_ATTACK_GAP_S = 0.08      # attacks closer than this are one
# sustained_bass
HELD_ACT = 0.3
BRIDGE_S = 0.25
HELD_MIN_S = 1.5
HELD_SHARE = 0.3
BELOW_ST = 5
WITH_SHARE = 0.25
EDGE_S = 0.5
EDGE_SHARE = 0.15
# voicing_relation
GRID_S = 0.02
HARMONY_SHARE = 0.4
TURN_SEPARATION = 2.0
OVERTONE_STEPS = (12, 19, 24, 28, 31, 34, 36)


class PlayingArgs(WindowArgs):
    pass


def _audio(ctx: ToolContext, args: PlayingArgs, sr: int) -> tuple[np.ndarray, float, float]:
    y, t0, t1 = excerpt(ctx, args, sr=sr, min_s=0.3)
    # notes, chords and phrases need seconds; the activations grow with the length
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, sr=sr)
    return y, t0, t1


def _r(v: Any, d: int = 2) -> float | None:
    return None if v is None else round(float(v), d)


# ------------------------------------------------------------------------------------------------- tuning

class TunedNote(ToolOutput):
    start_s: float = Field(description="when the note starts (s)")
    end_s: float = Field(description="when it ends (s)")
    note: str = Field(description="nearest equal-tempered note (A440)")
    cents_a440: float = Field(description="offset from that note at A440 (cents)")
    error_cents: float = Field(description="offset from the clip's reference tuning (cents)")
    out_of_tune: bool = Field(description="the note the descriptor names out of tune (at most one)")


class TuningOutput(CoveredOutput):
    label: Literal["in_tune", "out_of_tune", "too_few_notes"] = Field(
        description=f"out_of_tune: one note >= {OFF_CENTS:g} cents off the others' tuning")
    notes: list[TunedNote] = Field(description="the notes, by onset (at most 64)")
    off_note: int | None = Field(description="index of the note out of tune (0-based), None when in tune")
    off_cents: float | None = Field(description="the largest error of any note from the reference (cents, signed)")
    next_cents: float | None = Field(description="the second-largest error (cents, absolute)")
    reference_cents: float | None = Field(description="the clip's tuning against A440 equal temperament (cents)")
    analysed_s: AnalysedWindow


def _wrap(c: np.ndarray | float) -> Any:
    return (np.asarray(c) + 50.0) % 100.0 - 50.0


def segment_notes(y: np.ndarray, sr: int = SR) -> list[tuple[float, float, float]]:
    """(start s, end s, median f0 Hz) of the notes of a line, by onsets, silences and f0 steps."""
    import librosa

    if len(y) < FRAME:
        return []
    f0 = librosa.yin(y, fmin=50.0, fmax=2000.0, sr=sr, frame_length=FRAME, hop_length=HOP, center=True)
    rms = librosa.feature.rms(y=y, frame_length=FRAME, hop_length=HOP, center=True)[0]
    n = min(len(f0), len(rms))
    f0, db = f0[:n], 20 * np.log10(rms[:n] + 1e-9)
    on = db >= db.max() - ACTIVE_DB
    st = 12 * np.log2(f0 / 440.0)
    env = librosa.onset.onset_strength(y=y, sr=sr, hop_length=HOP)
    onsets = set(librosa.onset.onset_detect(onset_envelope=env, sr=sr, hop_length=HOP, units="frames").tolist())
    from scipy.ndimage import median_filter

    sm = median_filter(st, 5, mode="nearest")
    bounds = np.zeros(n, dtype=bool)
    for k in onsets:
        if 0 <= k < n:
            bounds[k] = True
    held = 5
    for i in range(held, n - held):  # an f0 step held on both sides
        if abs(np.median(sm[i:i + held]) - np.median(sm[i - held:i])) >= STEP_ST and \
                abs(sm[i] - sm[i - 1]) >= 0.5 * STEP_ST:
            bounds[i] = True
    notes: list[tuple[float, float, float]] = []
    i = 0
    while i < n:
        if not on[i]:
            i += 1
            continue
        j = i + 1
        while j < n and on[j] and not bounds[j]:
            j += 1
        if (j - i) * HOP / sr >= MIN_NOTE_S:
            a, b = i + int(0.2 * (j - i)), i + max(int(0.8 * (j - i)), int(0.2 * (j - i)) + 1)
            mid = st[a:b]
            c = float(np.median(mid))
            mid = mid[np.abs(mid - c) < 1.0]  # octave slips of the tracker
            if len(mid):
                hz = float(440.0 * 2 ** (np.median(mid) / 12))
                prev = notes[-1] if notes else None
                # a spurious onset inside a held note: contiguous, the same pitch, and no new rise in level
                if prev is not None and abs(prev[1] - i * HOP / sr) < 1e-9 and \
                        abs(12 * np.log2(hz / prev[2])) < SAME_ST and \
                        db[i:min(j, i + 10)].max() - db[max(0, i - 3):i].max() < RESTRIKE_DB:
                    notes[-1] = (prev[0], j * HOP / sr, prev[2])
                else:
                    notes.append((i * HOP / sr, j * HOP / sr, hz))
        i = j
    return notes


def tuning(args: PlayingArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _audio(ctx, args, SR)
    segs = segment_notes(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    if len(segs) < 3:
        out = {**base, "label": "too_few_notes", "notes": [], "off_note": None, "off_cents": None,
               "next_cents": None, "reference_cents": None}
        return ToolResult(output=out, claims=[Claim(text=f"Too few notes ({len(segs)}) to judge their tuning.",
                                                    data={"label": "too_few_notes"})])
    cents = np.array([1200 * np.log2(hz / 440.0) for _, _, hz in segs])
    dev = _wrap(cents)
    # circular median: the offset with the least total wrapped distance to the others
    ref = float(dev[int(np.argmin([np.abs(_wrap(dev - d)).sum() for d in dev]))])
    err = _wrap(dev - ref)
    order = np.argsort(-np.abs(err))
    worst = int(order[0])
    off = bool(abs(err[worst]) >= OFF_CENTS)
    notes = [{"start_s": round(a + t0, 3), "end_s": round(b + t0, 3), "note": midi_name(round(float(69 + c / 100))),
              "cents_a440": round(float(d), 1), "error_cents": round(float(e), 1), "out_of_tune": off and k == worst}
             for k, ((a, b, _), c, d, e) in enumerate(zip(segs, cents, dev, err))][:64]
    label = "out_of_tune" if off else "in_tune"
    out = {**base, "label": label, "notes": notes, "off_note": worst if off else None,
           "off_cents": _r(err[worst], 1), "next_cents": _r(abs(err[order[1]]), 1), "reference_cents": _r(ref, 1)}
    seq = " ".join(str(n["note"]) for n in notes)
    if off:
        text = (f"Of {len(segs)} notes ({seq}), note {worst + 1} ({notes[worst]['note']}, at "
                f"{notes[worst]['start_s']:.2f} s) is {err[worst]:+.0f} cents off the others' tuning (the others "
                f"within {abs(err[order[1]]):.0f} cents; out of tune: >= {OFF_CENTS:g}).")
    else:
        text = (f"The {len(segs)} notes ({seq}) are in tune with each other: every note within {abs(err[worst]):.0f} "
                f"cents of the clip's tuning ({ref:+.0f} cents from A440; out of tune: >= {OFF_CENTS:g}).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "off_note": out["off_note"]})])


# ------------------------------------------------------------------------------------------- chord_attack

class Attack(ToolOutput):
    time_s: float = Field(description="when the attack is heard (s)")
    pitches: list[str] = Field(description="pitches starting at this attack, lowest first")


class ChordAttackOutput(CoveredOutput):
    label: Literal["block", "arpeggiated", "spread_then_block", "block_then_spread", "mixed", "single_note",
                   "no_notes"] = Field(description="block: every attack starts several pitches; arpeggiated: each "
                                                   "starts one; the two in order: spread_then_block, block_then_spread")
    attacks: list[Attack] = Field(description="attacks by time (at most 32)")
    pattern: str = Field(description="one letter per attack: B (several pitches) or S (one)")
    analysed_s: AnalysedWindow


def _new_pitches(frames: np.ndarray, onsets: np.ndarray, times: np.ndarray, t: float) -> list[int]:
    """MIDI pitches an attack at t starts: an onset activation >= ONSET_ACT within ATTACK_WINDOW_S and a frame
    activation rising by >= RISE (and >= RISE_SHARE of the attack's largest rise) from the 100 ms before to the
    100 ms after (a ringing note re-detected by the onset head does not rise); a pitch a harmonic above one
    rising at least 1 / PARTIAL_SHARE times as much is its overtone (a chord's own octaves and fifths above its
    bass rise as much as the bass)."""
    from audiomind.tools.music.notes import BP_MIDI_OFFSET

    sel = (times >= t - ATTACK_WINDOW_S) & (times <= t + ATTACK_WINDOW_S)
    after = (times >= t + 0.03) & (times <= t + 0.13)
    if not sel.any() or not after.any():
        return []
    before = (times >= t - 0.13) & (times <= t - 0.03)
    rise = frames[after].mean(axis=0) - (frames[before].mean(axis=0) if before.any() else 0.0)
    peak = onsets[sel].max(axis=0)
    ok = (peak >= ONSET_ACT) & (rise >= RISE)
    if not ok.any():
        return []
    ok &= rise >= RISE_SHARE * rise[ok].max()
    kept: list[int] = []
    for k in sorted(np.flatnonzero(ok).tolist(), key=lambda k: -rise[k]):
        if not any(k - j in OVERTONE_STEPS and rise[k] < PARTIAL_SHARE * rise[j] for j in kept):
            kept.append(k)
    return sorted(k + BP_MIDI_OFFSET for k in kept)


def chord_attack(args: PlayingArgs, ctx: ToolContext) -> ToolResult:
    import librosa

    from audiomind.tools.music.notes import BP_SR, basic_pitch_activations

    y, t0, t1 = _audio(ctx, args, BP_SR)
    frames, onsets, times = basic_pitch_activations(y)
    hop = 256
    env = librosa.onset.onset_strength(y=y, sr=BP_SR, hop_length=hop)
    peaks = librosa.onset.onset_detect(onset_envelope=env, sr=BP_SR, hop_length=hop, units="frames",
                                       wait=int(MIN_ATTACK_GAP_S * BP_SR / hop))
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    strong = [int(p) for p in peaks if env[p] >= ATTACK_SHARE * (env.max() if len(env) else 0.0)]
    attacks = []
    for p in strong:
        t = float(librosa.frames_to_time(p, sr=BP_SR, hop_length=hop))
        got = _new_pitches(frames, onsets, times, t)
        if got:
            attacks.append((t, got))
    if not attacks:
        out = {**base, "label": "no_notes", "attacks": [], "pattern": ""}
        return ToolResult(output=out, claims=[Claim(text="No pitched attacks were found.", data={"label": "no_notes"})])
    pattern = "".join("B" if len({m % 12 for m in p}) >= 2 else "S" for _, p in attacks)
    import re

    if len(pattern) == 1:
        label = "block" if pattern == "B" else "single_note"
    elif re.fullmatch(r"B+", pattern):
        label = "block"
    elif re.fullmatch(r"S+", pattern):
        label = "arpeggiated"
    elif re.fullmatch(r"S{2,}B+", pattern):
        label = "spread_then_block"
    elif re.fullmatch(r"B+S{2,}", pattern):
        label = "block_then_spread"
    else:
        label = "mixed"
    out = {**base, "label": label, "pattern": pattern,
           "attacks": [{"time_s": round(t + t0, 3), "pitches": [midi_name(m) for m in p]} for t, p in attacks][:32]}
    words = {"block": "struck together (block)", "arpeggiated": "started one after another (broken / arpeggiated)",
             "spread_then_block": "started one after another, then struck together",
             "block_then_spread": "struck together, then one after another",
             "mixed": "started in a mixed order", "single_note": "a single note"}[label]
    detail = "; ".join(f"{a['time_s']:.2f} s: {'+'.join(a['pitches'])}" for a in out["attacks"][:8])
    text = f"The notes are {words}: {len(attacks)} attack(s), {detail}."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "pattern": pattern})])


# ------------------------------------------------------------------------------------------ sustained_bass

class SustainedBassOutput(CoveredOutput):
    label: Literal["throughout", "enters", "stops", "within", "none", "silent"] = Field(
        description="a low note held under the other sound from start to end, entering or stopping partway, "
                    "both (within), or none")
    note: str | None = Field(description="the held low note")
    start_s: float | None = Field(description="when it starts sounding")
    end_s: float | None = Field(description="when it stops")
    held_share: float | None = Field(description="its length / the sounding span")
    below_st: float | None = Field(description="semitones below the median of the other pitches sounding with it")
    with_share: float | None = Field(description="share of its length with other pitches sounding")
    sound_s: AnalysedWindow = Field(description="first and last moment anything sounds")
    analysed_s: AnalysedWindow


def _bridged(mask: np.ndarray, gap: int) -> list[tuple[int, int]]:
    from audiomind.tools.descriptors.common import runs

    rs = runs(mask)
    out: list[tuple[int, int]] = []
    for a, b in rs:
        if out and a - out[-1][1] <= gap:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def sustained_bass(args: PlayingArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.music.notes import BP_HOP, BP_MIDI_OFFSET, BP_SR, basic_pitch_activations

    y, t0, t1 = _audio(ctx, args, BP_SR)
    frames, _, times = basic_pitch_activations(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    act = frames >= HELD_ACT
    any_on = np.flatnonzero(act.any(axis=1)) if len(act) else np.zeros(0, dtype=int)
    none_out: dict[str, Any] = {"note": None, "start_s": None, "end_s": None, "held_share": None, "below_st": None, "with_share": None}
    if len(any_on) < 2:
        out = {**base, **none_out, "label": "silent", "sound_s": (round(t0, 3), round(t0, 3))}
        return ToolResult(output=out, claims=[Claim(text="No pitched sound.", data={"label": "silent"})])
    fps = BP_SR / BP_HOP
    first, last = int(any_on[0]), int(any_on[-1]) + 1
    span = (last - first) / fps
    sound = (round(float(times[first]) + t0, 3), round(float(times[min(last, len(times) - 1)]) + t0, 3))
    gap = int(BRIDGE_S * fps)
    best: tuple[int, int, int] | None = None
    for k in range(act.shape[1]):
        for a, b in _bridged(act[:, k], gap):
            if best is None or b - a > best[2] - best[1]:
                best = (k, a, b)
    reason = ""
    label = "none"
    fields: dict[str, Any] = dict(none_out)
    if best is not None:
        k, a, b = best
        length = (b - a) / fps
        others = act[a:b].copy()
        others[:, max(0, k - 1):k + 2] = False
        for s in OVERTONE_STEPS:  # the held note's own overtones (2nd-8th harmonic) are no other sound
            if k + s < others.shape[1]:
                others[:, k + s] = False
        with_frames = np.asarray(others.any(axis=1), dtype=bool)
        with_share = float(with_frames.mean()) if with_frames.size else 0.0
        lowest = others[with_frames].argmax(axis=1)  # the lowest other pitch of each frame: the other part
        below = float(np.median(lowest) - k) if len(lowest) else 0.0
        fields = {"note": midi_name(k + BP_MIDI_OFFSET), "start_s": round(float(times[a]) + t0, 3),
                  "end_s": round(float(times[min(b, len(times) - 1)]) + t0, 3),
                  "held_share": round(length / max(span, 1e-9), 2), "below_st": round(below, 1),
                  "with_share": round(with_share, 2)}
        if length < HELD_MIN_S or length < HELD_SHARE * span:
            reason = f"the longest-held pitch lasts {length:.1f} s of {span:.1f} s"
        elif below < BELOW_ST:
            reason = f"the longest-held pitch ({fields['note']}) is not below the other pitches ({below:+.0f} st)"
        elif with_share < WITH_SHARE:
            reason = f"the longest-held pitch ({fields['note']}) sounds mostly alone"
        else:
            edge = max(EDGE_S, EDGE_SHARE * span)
            late, early = (a - first) / fps > edge, (last - b) / fps > edge
            label = {(False, False): "throughout", (True, False): "enters", (False, True): "stops",
                     (True, True): "within"}[(late, early)]
    out = {**base, **fields, "label": label, "sound_s": sound}
    if label == "none":
        text = f"No low note is held under the other sound ({reason})."
    else:
        where = {"throughout": "from start to end", "enters": f"entering at {fields['start_s']:.2f} s",
                 "stops": f"stopping at {fields['end_s']:.2f} s",
                 "within": f"from {fields['start_s']:.2f} to {fields['end_s']:.2f} s"}[label]
        text = (f"A low {fields['note']} is held under the other sound {where} (sound {sound[0]:.2f}-{sound[1]:.2f} s; "
                f"{fields['below_st']:.0f} semitones below the lowest other pitch, median).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "note": fields["note"]})])


# ---------------------------------------------------------------------------------------- voicing_relation

class VoicingRelationOutput(CoveredOutput):
    label: Literal["unison", "harmony", "alternating", "too_few_notes"] = Field(
        description="unison: the same notes together (one line, one blended timbre; octave doubling too); "
                    "harmony: different notes together; alternating: one line whose timbre changes between "
                    "two groups of notes (taking turns)")
    together_share: float = Field(description="share of the sounding time with two pitch classes at once")
    separation: float | None = Field(description="timbre distance of the best split of the notes into two "
                                                 "contiguous groups (pooled standard deviations)")
    split_s: float | None = Field(description="where that split falls (s)")
    notes: int = Field(description="notes transcribed")
    analysed_s: AnalysedWindow


def _timbre_split(y: np.ndarray, sr: int, notes: list[tuple[float, float, int, float]]) -> tuple[float, int]:
    """(separation, index of the first note of the second group) of the best contiguous two-group split."""
    import librosa

    mf = librosa.feature.mfcc(y=y, sr=sr, n_mfcc=13, hop_length=512)[1:]
    fps = sr / 512
    feats, pitches = [], []
    for a, b, m, _ in notes:
        i, j = int(a * fps), max(int(b * fps), int(a * fps) + 1)
        seg = mf[:, i:j]
        if seg.shape[1]:
            feats.append(seg.mean(axis=1))
            pitches.append(m)
    if len(feats) < 4:
        return 0.0, 0
    x = np.array(feats)
    p = np.array(pitches, dtype=float)
    if np.ptp(p) > 0:  # MFCCs move with the pitch: take out each coefficient's linear trend in pitch
        coef = np.polyfit(p, x, 1)
        x = x - np.outer(p, coef[0])
    best, at = 0.0, 0
    for k in range(2, len(x) - 1):
        g1, g2 = x[:k], x[k:]
        pooled = np.sqrt((g1.var(axis=0) * len(g1) + g2.var(axis=0) * len(g2)) / len(x)) + 1e-3
        d = float(np.sqrt(np.mean(((g1.mean(axis=0) - g2.mean(axis=0)) / pooled) ** 2)))
        if d > best:
            best, at = d, k
    return best, at


def voicing_relation(args: PlayingArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.descriptors.melody import transcribe
    from audiomind.tools.music.notes import BP_SR

    y, t0, t1 = _audio(ctx, args, BP_SR)
    notes, _, _ = transcribe(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3)), "notes": len(notes)}
    if len(notes) < 3:
        out = {**base, "label": "too_few_notes", "together_share": 0.0, "separation": None, "split_s": None}
        return ToolResult(output=out, claims=[Claim(text=f"Too few notes ({len(notes)}) to relate two parts.",
                                                    data={"label": "too_few_notes"})])
    grid = np.arange(0.0, len(y) / BP_SR, GRID_S)
    classes = [{m % 12 for a, b, m, _ in notes if a <= t < b} for t in grid]
    sounding = [c for c in classes if c]
    together = float(np.mean([len(c) >= 2 for c in sounding])) if sounding else 0.0
    sep, at = _timbre_split(y, BP_SR, notes)
    if together >= HARMONY_SHARE:
        label = "harmony"
    elif sep >= TURN_SEPARATION:
        label = "alternating"
    else:
        label = "unison"
    split = round(notes[at][0] + t0, 3) if at else None
    out = {**base, "label": label, "together_share": round(together, 2), "separation": round(sep, 2),
           "split_s": split}
    words = {"harmony": f"different notes sound together ({together:.0%} of the time: harmony)",
             "alternating": f"one line whose timbre changes at {split} s (separation {sep:.1f}): two parts taking turns",
             "unison": f"one line with one timbre throughout (separation {sep:.1f}; two pitch classes together "
                       f"{together:.0%} of the time): the same notes together (unison)"}[label]
    return ToolResult(output=out, claims=[Claim(text=f"Of {len(notes)} notes, {words}.", data={"label": label})])
