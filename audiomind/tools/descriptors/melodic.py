"""Descriptors of a melody's shape and its harmony: register, melodic motion, harmonic changes, cadence.

The notes come from the note descriptors' basic-pitch transcription (`melody.transcribe`: weak notes and
overtones dropped) on at most `melody.MAX_S` seconds; chroma and the key from the key tool's functions
(`music.harmony.log_chroma`, `key_scores`, the triad templates of `chords`). Nothing here tracks pitch itself.

- register: the median MIDI pitch of the strong notes (activation >= STRONG_SHARE of the strongest note's:
  in noise basic-pitch adds weak low notes from the noise's rumble, and a high melody's notes are often weaker
  than those) -> Hz and octave. Low below LOW_BELOW (E3, 165 Hz: the bass staff and below, a bass voice or a
  cello's open strings), high from HIGH_FROM (G5, 784 Hz: above the treble staff, a piccolo's or soprano's
  top), middle between (a speaking voice, middle C to the top of the treble staff).
- melodic_motion: one line (of notes starting within 50 ms, the strongest) and the intervals between
  successive notes; repeated pitches are not motion. A step is 1-STEP_MAX semitones (a second), a leap
  LEAP_MIN semitones or more (a fourth and wider); thirds are neither. steps: no leap and >= STEP_SHARE of the
  moves are steps; steps_one_leap: exactly one leap and >= STEP_SHARE of the other moves steps; leaps:
  >= LEAP_SHARE of the moves leap; otherwise mixed (no value). The largest interval and the share of steps
  decide it. Successive notes only: notes sounding together are `interval_quality`'s.
- harmonic_changes: chord attacks are peaks of the onset strength (>= ONSET_SHARE of the strongest, at least
  MIN_CHORD_S apart; a re-struck identical chord makes an attack as well); each span's chroma (its middle,
  after the attack and before the next) minus its weakest class, compared with the span before by cosine:
  >= SAME_COS is the same chord. Every pair the same: same; every pair different: all_change; exactly one
  change: one_change; otherwise some_change (no value).
- cadence: the home note is the tonic of the key-profile match (Krumhansl-Kessler, as the key tool) of the
  chroma before the last attack (the whole clip when that is shorter than KEY_MIN_S: a final note would
  otherwise vote for itself); the last event is the last onset group of the transcribed notes: a chord (>= 2
  pitch classes starting together) is named by the triad template best matching the chroma of its span,
  a single note by its pitch class. The same pitch class as the tonic: finished; another: unfinished. When the
  sound is still within CUT_DB of the last event's peak in the clip's last CUT_S seconds (and above the
  floor by FLOOR_DB) the sound was cut in the middle of a note: cut_off."""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.melody import MelodyArgs, Note, _audio, transcribe
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import PITCH_CLASSES, midi_name
from audiomind.tools.window import excerpt

STRONG_SHARE = 0.75   # register: notes at >= this share of the strongest note's activation
LOW_BELOW = 52        # MIDI E3 (165 Hz): a median below it is low
HIGH_FROM = 79        # MIDI G5 (784 Hz): a median at or above it is high
STEP_MAX = 2          # a step: 1-2 semitones (a second)
LEAP_MIN = 5          # a leap: a fourth (5 semitones) or wider
STEP_SHARE = 0.7      # steps / steps_one_leap: at least this share of the (other) moves are steps
LEAP_SHARE = 0.5      # leaps: at least this share of the moves are leaps
ONSET_SHARE = 0.08    # chord attacks: onset-strength peaks >= this share of the strongest
MIN_CHORD_S = 0.3     # chord attacks at least this far apart; spans shorter are no chord
RISE_DB = 9.0         # an attack: the level rises this much from just before to just after (pink noise
                      # swings 3-7 dB between 64 ms frames, a re-struck chord rises from its gap by 10-20 dB)
SPAN_DB = 8.0         # a span whose peak level is this far below the loudest span's is no chord
PITCHED_ACT = 0.4     # a chord span: basic-pitch's strongest activation averages this (chords 0.56-0.84 in
                      # pink noise down to 10 dB SNR, pink noise alone 0.19-0.32)
PITCHED_S = 0.5       # ... over the first this of a span
SAME_COS = 0.9        # two spans' chroma (floor removed) this similar are the same chord
KEY_MIN_S = 1.0       # the key is read before the last attack when that much precedes it
KEY_TIE = 0.05        # keys within this correlation of the best tie; the first note / chord decides
LAST_GROUP_S = 0.2    # the last event: notes starting within this of the last onset (a rolled chord, a late bass)
CUT_S, CUT_DB, FLOOR_DB = 0.05, 8.0, 6.0  # cut_off: the last CUT_S within CUT_DB of the peak, FLOOR_DB over the floor


def _hz(m: float) -> float:
    return 440.0 * 2 ** ((m - 69) / 12)


def _line(notes: list[Note]) -> list[Note]:
    """One voice: of notes starting within 50 ms of each other, the strongest."""
    mono: list[Note] = []
    for n in notes:
        if mono and n[0] - mono[-1][0] < 0.05:
            if n[3] > mono[-1][3]:
                mono[-1] = n
            continue
        mono.append(n)
    return mono


def _window(t0: float, t1: float) -> tuple[float, float]:
    return (round(t0, 3), round(t1, 3))


# ------------------------------------------------------------------------------------------------ register

class RegisterOutput(CoveredOutput):
    label: Literal["low", "middle", "high", "no_notes"] = Field(
        description="where the notes sit: low (median below E3, 165 Hz), high (from G5, 784 Hz), middle between")
    median_hz: float | None = Field(description="the median pitch of the strong notes (Hz)")
    median_note: str | None = Field(description="the median pitch as a note name")
    octave: int | None = Field(description="the median's octave (scientific pitch notation: middle C is C4)")
    lowest: str | None = Field(description="the lowest strong note")
    highest: str | None = Field(description="the highest strong note")
    notes: int = Field(description="strong notes the median is taken over")
    analysed_s: AnalysedWindow


def register(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    base: dict[str, Any] = {"analysed_s": _window(t0, t1)}
    if not notes:
        out = {**base, "label": "no_notes", "median_hz": None, "median_note": None, "octave": None, "lowest": None,
               "highest": None, "notes": 0}
        return ToolResult(output=out, claims=[Claim(text="No notes were transcribed.", data={"label": "no_notes"})])
    top = max(n[3] for n in notes)
    strong = [n[2] for n in notes if n[3] >= STRONG_SHARE * top]
    med = float(np.median(strong))
    label = "low" if med < LOW_BELOW else "high" if med >= HIGH_FROM else "middle"
    m = round(med)
    out = {**base, "label": label, "median_hz": round(_hz(med), 1), "median_note": midi_name(m), "octave": m // 12 - 1,
           "lowest": midi_name(min(strong)), "highest": midi_name(max(strong)), "notes": len(strong)}
    text = (f"The {len(strong)} strong notes ({out['lowest']} to {out['highest']}) sit around {out['median_note']} "
            f"(median {out['median_hz']:g} Hz, octave {out['octave']}): {label} (low below "
            f"{midi_name(LOW_BELOW)} {_hz(LOW_BELOW):.0f} Hz, high from {midi_name(HIGH_FROM)} {_hz(HIGH_FROM):.0f} Hz).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "median_hz": out["median_hz"]})])


# ------------------------------------------------------------------------------------------------ melodic_motion

class MelodicMotionOutput(CoveredOutput):
    label: Literal["steps", "leaps", "steps_one_leap", "mixed", "too_few_notes"] = Field(
        description="steps: moves by seconds, no leap; leaps: most moves a fourth or wider; steps_one_leap: steps "
                    "with exactly one leap; mixed: none of these")
    intervals: list[int] = Field(description="semitones between successive notes (+ up), repeats left out")
    largest_interval: int | None = Field(description="the largest interval between successive notes (semitones)")
    step_share: float | None = Field(description="share of the moves that are steps (1-2 semitones)")
    leaps: int = Field(description="moves of a fourth (5 semitones) or wider")
    leap_at_s: float | None = Field(description="where the single leap lands, for steps_one_leap (s)")
    leap_position: Literal["start", "middle", "end"] | None = Field(
        description="which third of the moves the single leap falls in, for steps_one_leap")
    sequence: list[str] = Field(description="the line's notes by onset (at most 64)")
    analysed_s: AnalysedWindow


def melodic_motion(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    line = _line(notes)
    moves = [(b[2] - a[2], b[0]) for a, b in itertools.pairwise(line) if b[2] != a[2]]
    base: dict[str, Any] = {"analysed_s": _window(t0, t1), "sequence": [midi_name(n[2]) for n in line][:64],
                            "intervals": [d for d, _ in moves][:64]}
    if len(moves) < 3:
        out = {**base, "label": "too_few_notes", "largest_interval": None, "step_share": None, "leaps": 0,
               "leap_at_s": None, "leap_position": None}
        return ToolResult(output=out, claims=[Claim(text=f"Too few moves between notes ({len(moves)}) to judge "
                                                         "how the melody moves.", data={"label": "too_few_notes"})])
    size = [abs(d) for d, _ in moves]
    steps = [s <= STEP_MAX for s in size]
    leap_idx = [i for i, s in enumerate(size) if s >= LEAP_MIN]
    share = float(np.mean(steps))
    others = [st for i, st in enumerate(steps) if i not in leap_idx]
    leap_at, position = None, None
    if not leap_idx and share >= STEP_SHARE:
        label = "steps"
    elif len(leap_idx) == 1 and len(moves) >= 4 and float(np.mean(others)) >= STEP_SHARE:
        label = "steps_one_leap"
        i = leap_idx[0]
        leap_at = round(moves[i][1], 3)
        position = ("start", "middle", "end")[min(2, 3 * i // len(moves))]
    elif len(leap_idx) / len(moves) >= LEAP_SHARE:
        label = "leaps"
    else:
        label = "mixed"
    out = {**base, "label": label, "largest_interval": max(size), "step_share": round(share, 2),
           "leaps": len(leap_idx), "leap_at_s": leap_at, "leap_position": position}
    words = {"steps": "moves by steps", "leaps": "moves by leaps",
             "steps_one_leap": f"moves by steps with one leap ({max(size)} semitones, at the {position})",
             "mixed": "mixes steps, skips and leaps"}[label]
    text = (f"The line of {len(line)} notes {words}: {share:.0%} of its {len(moves)} moves are steps (<= {STEP_MAX} "
            f"semitones), {len(leap_idx)} leap(s) (>= {LEAP_MIN}), largest {max(size)} semitones.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "largest_interval": max(size)})])


# ------------------------------------------------------------------------------------------------ harmonic_changes

def _chord_chroma(c: np.ndarray, ft: np.ndarray, a: float, b: float) -> np.ndarray | None:
    """The unit chroma of a span's middle (after the attack, before the next), its weakest class subtracted."""
    m = (ft >= a + min(0.1, 0.25 * (b - a))) & (ft <= b - min(0.05, 0.1 * (b - a)))
    if not m.any():
        return None
    v = c[:, m].mean(axis=1)
    v = v - v.min()
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


class _Harmony:
    """The excerpt's chroma, level and basic-pitch activations on one time axis (s from the excerpt's start)."""

    def __init__(self, ctx: ToolContext, args: MelodyArgs) -> None:
        from audiomind.tools.descriptors.common import frame_db
        from audiomind.tools.music.harmony import CHROMA_HOP, SR, log_chroma
        from audiomind.tools.music.notes import basic_pitch_activations

        y16 = excerpt(ctx, args, sr=SR, min_s=0.3)[0]
        # the notes' budget (MAX_S) holds for the chroma too; read last, so the coverage recorded is the notes'
        y22, self.t0, self.t1 = _audio(ctx, args)
        y = y16[: int((self.t1 - self.t0) * SR)]
        self.y, self.sr, self.hop = y, SR, CHROMA_HOP
        self.c, self.active = log_chroma(y)
        n = self.c.shape[1]
        db = frame_db(y, 2 * CHROMA_HOP, CHROMA_HOP)  # frame i spans the chroma frames i and i + 1
        self.db = np.pad(db, (0, max(0, n - len(db))), constant_values=-200.0)[:n]
        self.ft = np.arange(n) * CHROMA_HOP / SR
        frames, _, self.bt = basic_pitch_activations(y22)
        self.strongest = frames.max(axis=1) if len(frames) else np.zeros(0)

    def chroma(self, a: float, b: float) -> np.ndarray | None:
        return _chord_chroma(self.c, self.ft, a, b)

    def pitched(self, a: float, b: float) -> bool:
        """Whether notes sound after a: basic-pitch's strongest activation averages >= PITCHED_ACT over the first
        PITCHED_S (a struck chord decays; a marimba's is gone before the next)."""
        m = (self.bt >= a + 0.05) & (self.bt <= min(b, a + PITCHED_S))
        return bool(m.any()) and float(self.strongest[m].mean()) >= PITCHED_ACT

    def attacks(self) -> list[float]:
        """Chord attacks: onset-strength peaks (>= ONSET_SHARE of the strongest, MIN_CHORD_S apart, the strongest
        kept first) where the level rises by RISE_DB from its low point just before (the gap or the decay before
        a re-struck chord) to its high point just after, or where notes sound after it and the chroma of the
        MIN_CHORD_S before and after differ (cosine < SAME_COS: a new chord on a sustained instrument, whose
        release fills the gap). A noise bed or a held organ chord has peaks of onset strength with neither."""
        import librosa

        env = librosa.onset.onset_strength(y=self.y, sr=self.sr, hop_length=self.hop)
        if not len(env) or env.max() <= 0:
            return []
        w = max(1, round(MIN_CHORD_S * self.sr / self.hop))
        before, after = max(1, round(0.12 * self.sr / self.hop)), max(1, round(0.15 * self.sr / self.hop))
        rises, changes = [], []
        for i in range(len(env)):
            if env[i] < ONSET_SHARE * env.max() or env[i] < env[max(0, i - w // 2): i + w // 2 + 1].max():
                continue
            j = min(i, len(self.db))  # frame i is centred on sample i * hop: the level frames before it end there
            low = float(self.db[max(0, j - before): j].min()) if j > 0 else -200.0
            high = float(self.db[max(0, j - 1): j + after].max()) if j < len(self.db) + 1 else low
            t = i * self.hop / self.sr
            post_s = t + MIN_CHORD_S + 0.1
            pre, post = self.chroma(t - MIN_CHORD_S, t), self.chroma(t, post_s)
            if high - low >= RISE_DB:
                rises.append(i)
            elif pre is not None and post is not None and float(pre @ post) < SAME_COS and self.pitched(t, post_s):
                changes.append(i)
        # a change of chroma is read only where no attack with a rise falls in its windows (the next chord's
        # attack inside the window after would make any decay look like a change)
        reach = round((2 * MIN_CHORD_S + 0.1) * self.sr / self.hop)
        peaks = rises + [i for i in changes if all(abs(i - k) > reach for k in rises)]
        chosen: list[int] = []
        for i in sorted(peaks, key=lambda k: -env[k]):
            if all(abs(i - j) >= w for j in chosen):
                chosen.append(i)
        return sorted(float(i * self.hop / self.sr) for i in chosen)

    def spans(self) -> list[tuple[float, float, np.ndarray]]:
        """[(start, end, chroma)] of the chords (artifact s): spans between attacks where notes sound, whose peak
        level is within SPAN_DB of the loudest span's."""
        if not self.active.any():
            return []
        bounds = [*self.attacks(), float(self.ft[self.active][-1])]
        spans, level = [], []
        for a, b in itertools.pairwise(bounds):
            v = self.chroma(a, b)
            if b - a >= MIN_CHORD_S and v is not None and self.pitched(a, b):
                spans.append((a + self.t0, b + self.t0, v))
                level.append(float(np.max(self.db[(self.ft >= a) & (self.ft < b)])))
        top = max(level, default=0.0)
        return [s for s, lv in zip(spans, level) if lv >= top - SPAN_DB]


def _chord_name(v: np.ndarray) -> str:
    from audiomind.tools.music.harmony import _triad_templates

    labels, rows = _triad_templates()
    return labels[int(np.argmax(rows @ v))]


class HarmonicChangesOutput(CoveredOutput):
    label: Literal["same", "all_change", "one_change", "some_change", "one_chord", "no_chords"] = Field(
        description="same: every chord like the one before; all_change: every chord differs from the one before; "
                    "one_change: exactly one change; some_change: more than one change but not every chord")
    chords: int = Field(description="chord spans (attacks) found")
    starts_s: list[float] = Field(description="each chord's attack (s)")
    names: list[str] = Field(description="the nearest major / minor triad of each span's chroma")
    similarity: list[float] = Field(description="chroma cosine of each chord with the one before (1 = identical)")
    changes: int = Field(description="chords unlike the one before")
    change_at_s: list[float] = Field(description="where the changes happen (s)")
    analysed_s: AnalysedWindow


def harmonic_changes(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    h = _Harmony(ctx, args)
    spans, t0, t1 = h.spans(), h.t0, h.t1
    sims = [float(a[2] @ b[2]) for a, b in itertools.pairwise(spans)]
    changed = [s < SAME_COS for s in sims]
    k = sum(changed)
    if not spans:
        label = "no_chords"
    elif len(spans) == 1:
        label = "one_chord"
    elif k == 0:
        label = "same"
    elif k == len(changed) and len(changed) >= 2:
        label = "all_change"
    elif k == 1:
        label = "one_change"
    else:
        label = "some_change"
    names = [_chord_name(v) for _, _, v in spans]
    at = [round(spans[i + 1][0], 3) for i, ch in enumerate(changed) if ch]
    out = {"analysed_s": _window(t0, t1), "label": label, "chords": len(spans),
           "starts_s": [round(a, 3) for a, _, _ in spans][:64], "names": names[:64],
           "similarity": [round(s, 3) for s in sims][:64], "changes": k, "change_at_s": at[:64]}
    words = {"same": "the same chord throughout", "all_change": "a change at every chord",
             "one_change": f"one change (at {at[0]:.2f} s)" if at else "", "some_change": f"{k} changes",
             "one_chord": "a single chord", "no_chords": "no chord attacks"}[label]
    text = (f"{len(spans)} chord attack(s) ({', '.join(names[:16])}): {words} (the same chord: chroma cosine >= "
            f"{SAME_COS:g} with the one before; cosines {', '.join(f'{s:.2f}' for s in sims[:16])}).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "changes": k})])


# ------------------------------------------------------------------------------------------------ cadence

def _pc_profile(notes: list[Note]) -> np.ndarray:
    """Pitch-class weights of notes: length x activation (transcribed notes carry no overtones, chroma does)."""
    v = np.zeros(12)
    for a, b, m, act in notes:
        v[m % 12] += max(b - a, 0.05) * act
    return v


def _chord_label(group: list[Note]) -> str:
    """The major / minor triad nearest to the notes' pitch classes (the chords tool's templates)."""
    from audiomind.tools.music.harmony import _triad_templates

    v = _pc_profile(group)
    labels, rows = _triad_templates()
    return labels[int(np.argmax(rows @ (v / max(float(np.linalg.norm(v)), 1e-9))))]


def _root(group: list[Note]) -> str:
    """The pitch class of an event: the root of its nearest triad when >= 2 pitch classes sound, else its note's."""
    if len({n[2] % 12 for n in group}) >= 2:
        return _chord_label(group).rstrip("m")
    return PITCH_CLASSES[max(group, key=lambda n: n[3])[2] % 12]


class CadenceOutput(CoveredOutput):
    label: Literal["finished", "unfinished", "cut_off", "no_notes"] = Field(
        description="finished: the last note / chord is the home note (tonic) of the key; unfinished: another; "
                    "cut_off: the sound stops while the last note is still sounding")
    key: str | None = Field(description="the key-profile match the home note comes from, e.g. 'C major'")
    tonic: str | None = Field(description="the home note (tonic pitch class)")
    key_correlation: float | None = Field(description="correlation of the chroma with the key profile")
    last: str | None = Field(description="the last note, or the last chord's nearest triad")
    last_pitch_class: str | None = Field(description="the last note's pitch class, or the last chord's root")
    last_is_chord: bool = Field(description="the last event has two or more pitch classes starting together")
    last_at_s: float | None = Field(description="the last event's onset (s)")
    end_level_db: float | None = Field(description="level of the clip's last 50 ms against the last event's peak (dB)")
    analysed_s: AnalysedWindow


def cadence(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.descriptors.common import frame_db
    from audiomind.tools.music.harmony import key_scores
    from audiomind.tools.music.notes import BP_SR

    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    base: dict[str, Any] = {"analysed_s": _window(t0, t1)}
    if not notes:
        out = {**base, "label": "no_notes", "key": None, "tonic": None, "key_correlation": None, "last": None,
               "last_pitch_class": None, "last_is_chord": False, "last_at_s": None, "end_level_db": None}
        return ToolResult(output=out, claims=[Claim(text="No notes were transcribed.", data={"label": "no_notes"})])
    last_on = max(n[0] for n in notes)
    group = [n for n in notes if n[0] >= last_on - LAST_GROUP_S]
    earlier = [n for n in notes if n[0] < last_on - LAST_GROUP_S]
    use = earlier if earlier and max(n[1] for n in earlier) - min(n[0] for n in earlier) >= KEY_MIN_S else notes
    scores = key_scores(_pc_profile(use))
    first_on = min(n[0] for n in notes)
    first = _root([n for n in notes if n[0] <= first_on + LAST_GROUP_S])
    # relative keys share their notes: among keys about as good as the best, the one the tune starts on
    r, tonic, mode = next((s for s in scores if s[0] >= scores[0][0] - KEY_TIE and s[1] == first), scores[0])
    root = _root(group)
    chord = len({n[2] % 12 for n in group}) >= 2
    last = _chord_label(group) if chord else midi_name(max(group, key=lambda n: n[3])[2])
    hop = round(0.01 * BP_SR)
    db = frame_db(y, round(0.02 * BP_SR), hop)
    i0 = max(0, int((last_on - t0) * BP_SR / hop))
    peak = float(db[i0:].max()) if i0 < len(db) else float(db.max())
    tail = float(db[-max(1, round(CUT_S * BP_SR / hop)):].mean())
    floor = float(np.percentile(db, 10))
    if tail >= peak - CUT_DB and tail >= floor + FLOOR_DB:
        label = "cut_off"
    else:
        label = "finished" if root == tonic else "unfinished"
    out = {**base, "label": label, "key": f"{tonic} {mode}", "tonic": tonic, "key_correlation": round(r, 3),
           "last": last, "last_pitch_class": root, "last_is_chord": chord, "last_at_s": round(last_on, 3),
           "end_level_db": round(tail - peak, 1)}
    what = f"the last {'chord' if chord else 'note'} ({last}, from {last_on:.2f} s)"
    words = {"finished": f"{what} is the home note {tonic} of {tonic} {mode}: it ends at rest",
             "unfinished": f"{what} is not the home note {tonic} of {tonic} {mode}: it ends away from home",
             "cut_off": f"the sound stops while {what} still sounds ({tail - peak:+.0f} dB of its peak at the end)"}
    text = f"{words[label][0].upper()}{words[label][1:]} (key-profile correlation {r:.2f})."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "tonic": tonic, "last": last})])
