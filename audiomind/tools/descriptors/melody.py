"""Descriptors of notes: the interval of held notes, how many pitches a melody uses, articulation, a repeated phrase.

All read basic-pitch (the `notes` tool's ONNX model, audiomind.tools.music.notes) on at most MAX_S seconds:

- interval_quality: the held stretch (frames whose strongest note activation is >= half the clip's strongest);
  each pitch's mean frame activation over it. Pitches at >= PRESENT_SHARE of the strongest sound; one that lies
  OVERTONE_STEPS above a stronger sounding pitch (3rd-8th harmonic: a twelfth, two octaves, ...) is its
  overtone, not a note (an octave is kept: an octave dyad and a note with a strong second harmonic cannot be
  told apart by activation alone, so a lone note whose octave activates at >= PRESENT_SHARE reads as an
  octave). Intervals between the notes (mod 12) are consonant (unison/octave, fifth, fourth, thirds, sixths) or
  dissonant (seconds, tritone, sevenths); any dissonant pair makes the sound dissonant.
- distinct_pitches, articulation, phrase_repeat: basic-pitch's decoded notes, kept when their activation is
  >= KEEP_SHARE of the clip's 90th-percentile note activation and when they are no overtone (OVERTONE_STEPS,
  or an octave, above a note sounding at the same time with a higher activation).
  - distinct_pitches: the number of different MIDI pitches among the kept notes (a label 'one'..'six', or
    'more' beyond six).
  - articulation: whether the sound falls silent between successive notes: the lowest level (20 ms frames) in
    the second half of each inter-onset time against the note's peak, silent when >= GAP_DB below it or
    GAP_SHARE of the way down to the noise floor (the clip's 10th-percentile frame; in noise the floor caps
    the dip). Transcribed note lengths alone do not do: basic-pitch lets a damped piano note ring to the next
    onset (a 0.3 x inter-onset staccato read 0.97). Most gaps silent: detached (staccato); few: connected
    (legato); >= CHANGE_SHARE silent in one half of the notes and <= 1 - CHANGE_SHARE in the other: a change
    (detached_to_connected / connected_to_detached).
  - phrase_repeat: the notes split in two at the longest inter-onset time (when it is >= GAP_FACTOR x the
    median one; otherwise in the middle), and the two pitch sequences compared by edit distance:
    0 identical, 1 one_changed, more different."""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolResult
from audiomind.tools.descriptors.common import within_budget
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import midi_name
from audiomind.tools.window import WindowArgs, excerpt

MAX_S = 60.0
HELD_SHARE = 0.5           # held frames: strongest activation >= this share of the clip's strongest
PRESENT_SHARE = 0.6        # a pitch sounds when its mean activation is >= this share of the strongest pitch's
OVERTONE_STEPS = (19, 24, 28, 31, 34, 36)  # semitones of harmonics 3-8 above a fundamental
KEEP_SHARE = 0.6           # decoded notes kept at >= this share of the 90th-percentile note activation
GAP_DB = 20.0              # a gap between two notes is silent when the level falls this far below the note ...
GAP_SHARE = 0.75           # ... or this share of the way from the note's peak down to the noise floor
CHANGE_SHARE = 0.75        # a change: >= this share of silent gaps in one half, <= 1 - this in the other
GAP_FACTOR = 1.5           # a phrase boundary: an inter-onset time >= this x the median one
CONSONANT = {0: "unison/octave", 3: "minor third", 4: "major third", 5: "fourth", 7: "fifth", 8: "minor sixth",
             9: "major sixth"}
DISSONANT = {1: "minor second", 2: "major second", 6: "tritone", 10: "minor seventh", 11: "major seventh"}
COUNT_WORDS = ["none", "one", "two", "three", "four", "five", "six"]
Note = tuple[float, float, int, float]  # (start s, end s, MIDI pitch, activation)


class MelodyArgs(WindowArgs):
    pass


def _audio(ctx: ToolContext, args: MelodyArgs) -> tuple[np.ndarray, float, float]:
    from audiomind.tools.music.notes import BP_SR

    y, t0, t1 = excerpt(ctx, args, sr=BP_SR, min_s=0.3)
    # basic-pitch's activations grow with the length: a phrase or a held chord needs little
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S, sr=BP_SR)
    return y, t0, t1


def transcribe(y: np.ndarray, t0: float = 0.0) -> tuple[list[Note], np.ndarray, np.ndarray]:
    """(kept notes by onset, frame activations, frame times) of 22.05 kHz audio; notes filtered as the module
    docstring says."""
    from audiomind.tools.music.notes import (
        BP_HOP,
        BP_SR,
        basic_pitch_activations,
        decode_notes,
        merge_reonsets,
    )

    frames, onsets, times = basic_pitch_activations(y)
    events = merge_reonsets(decode_notes(frames, onsets, 0.5, 0.3, round(0.1 * BP_SR / BP_HOP)), frames)
    raw = []
    for a, b, m, amp in events:
        end = times[b] if b < len(times) else times[-1] + BP_HOP / BP_SR
        raw.append((float(times[a]) + t0, float(end) + t0, int(m), float(amp)))
    if not raw:
        return [], frames, times
    ref = float(np.percentile([n[3] for n in raw], 90))
    strong = [n for n in raw if n[3] >= KEEP_SHARE * ref]
    kept = []
    for n in strong:
        over = any(o[3] > n[3] and (n[2] - o[2] in OVERTONE_STEPS or n[2] - o[2] == 12)
                   and min(n[1], o[1]) - max(n[0], o[0]) > 0.5 * (n[1] - n[0]) for o in strong)
        if not over:
            kept.append(n)
    return sorted(kept), frames, times


def _round_notes(notes: list[Note]) -> list[dict]:
    return [{"start_s": round(a, 3), "end_s": round(b, 3), "note": midi_name(m), "pitch_midi": m} for a, b, m, _ in notes]


# ------------------------------------------------------------------------------------------- interval_quality

class IntervalQualityOutput(CoveredOutput):
    label: Literal["consonant", "dissonant", "single_pitch", "no_pitch"] = Field(
        description="consonant: every interval between the held notes is a unison/octave, third, fourth, fifth or "
                    "sixth; dissonant: any second, tritone or seventh; single_pitch: one note")
    notes: list[str] = Field(description="the held notes, lowest first")
    intervals: list[str] = Field(description="the interval of each pair of held notes")
    semitones: list[int] = Field(description="the size of each pair's interval (semitones)")
    activations: list[float] = Field(description="mean activation of each held note over the held stretch (0-1)")
    held_s: float = Field(description="seconds of the held stretch")
    analysed_s: AnalysedWindow


def interval_quality(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.music.notes import BP_HOP, BP_MIDI_OFFSET, BP_SR, basic_pitch_activations

    y, t0, t1 = _audio(ctx, args)
    frames, _, _ = basic_pitch_activations(y)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    strongest = frames.max(axis=1) if len(frames) else np.zeros(0)
    if not len(strongest) or strongest.max() < 0.3:
        out = {**base, "label": "no_pitch", "notes": [], "intervals": [], "semitones": [], "activations": [],
               "held_s": 0.0}
        return ToolResult(output=out, claims=[Claim(text="No pitched sound is held.", data={"label": "no_pitch"})])
    held = strongest >= HELD_SHARE * strongest.max()
    mean = frames[held].mean(axis=0)
    cand = [int(k) for k in np.flatnonzero(mean >= PRESENT_SHARE * mean.max())]
    cand.sort(key=lambda k: -mean[k])
    notes: list[int] = []
    for k in cand:  # strongest first: a pitch a harmonic above a stronger note is its overtone
        if not any(k - j in OVERTONE_STEPS for j in notes):
            notes.append(k)
    notes.sort()
    pairs = [(a, b) for i, a in enumerate(notes) for b in notes[i + 1:]]
    steps = [b - a for a, b in pairs]
    names = [CONSONANT.get(s % 12) or DISSONANT[s % 12] for s in steps]
    if len(notes) == 1:
        label = "single_pitch"
    else:
        label = "dissonant" if any(s % 12 in DISSONANT for s in steps) else "consonant"
    midi = [k + BP_MIDI_OFFSET for k in notes]
    out = {**base, "label": label, "notes": [midi_name(m) for m in midi], "intervals": names, "semitones": steps,
           "activations": [round(float(mean[k]), 3) for k in notes],
           "held_s": round(float(held.sum()) * BP_HOP / BP_SR, 2)}
    what = (f"a single pitch ({out['notes'][0]})" if label == "single_pitch" else
            f"{' + '.join(out['notes'])} ({', '.join(names)}): {label}")
    return ToolResult(output=out, claims=[Claim(
        text=f"The held sound ({out['held_s']:.1f} s) is {what}.", data={"label": label, "notes": out["notes"]})])


# ------------------------------------------------------------------------------------------- distinct_pitches

class DistinctPitchesOutput(CoveredOutput):
    label: Literal["none", "one", "two", "three", "four", "five", "six", "more"] = Field(
        description="how many different pitches the notes use, in words ('more': over six)")
    count: int = Field(description="number of different MIDI pitches among the notes")
    pitches: list[str] = Field(description="the different pitches, lowest first")
    notes: int = Field(description="notes transcribed")
    sequence: list[str] = Field(description="note names by onset (at most 64)")
    analysed_s: AnalysedWindow


def distinct_pitches(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    pitches = sorted({n[2] for n in notes})
    count = len(pitches)
    label = COUNT_WORDS[count] if count < len(COUNT_WORDS) else "more"
    out: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3)), "label": label, "count": count,
           "pitches": [midi_name(m) for m in pitches], "notes": len(notes), "sequence": [midi_name(n[2]) for n in notes][:64]}
    text = (f"{len(notes)} notes use {count} different pitch(es): {', '.join(out['pitches'])}." if notes
            else "No notes were transcribed.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"count": count, "pitches": out["pitches"]})])


# ------------------------------------------------------------------------------------------- articulation

class ArticulationOutput(CoveredOutput):
    label: Literal["detached", "connected", "detached_to_connected", "connected_to_detached", "too_few_notes"] = Field(
        description="detached: most notes fall silent before the next onset; connected: most sound into the next; "
                    "a change: the first and second half of the notes differ")
    silent_gaps: float | None = Field(description="share of the gaps between successive notes where the sound "
                                                  "falls silent before the next onset (0-1)")
    first_half_silent: float | None = Field(description="the same over the first half of the notes")
    second_half_silent: float | None = Field(description="the same over the second half")
    ratio: float | None = Field(description="median transcribed note length / inter-onset time")
    notes: int = Field(description="notes transcribed")
    analysed_s: AnalysedWindow


def _share(flags: list[bool]) -> float:
    return float(np.mean(flags)) if flags else 0.0


def articulation(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.descriptors.common import frame_db
    from audiomind.tools.music.notes import BP_SR

    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    # one voice: of notes starting together, the strongest
    mono: list[Note] = []
    for n in notes:
        if mono and n[0] - mono[-1][0] < 0.05:
            if n[3] > mono[-1][3]:
                mono[-1] = n
            continue
        mono.append(n)
    pairs = [(a, b) for a, b in itertools.pairwise(mono) if b[0] - a[0] > 0.08]
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3)), "notes": len(mono)}
    if len(pairs) < 3:
        out = {**base, "label": "too_few_notes", "silent_gaps": None, "first_half_silent": None,
               "second_half_silent": None, "ratio": None}
        return ToolResult(output=out, claims=[Claim(text=f"Too few notes ({len(mono)}) to judge the articulation.",
                                                    data={"label": "too_few_notes"})])
    hop = round(0.005 * BP_SR)
    db = frame_db(y, round(0.02 * BP_SR), hop)
    floor = float(np.percentile(db, 10))

    def level(ts: float, te: float, fn) -> float:
        i, j = max(0, int((ts - t0) * BP_SR / hop)), int((te - t0) * BP_SR / hop)
        return float(fn(db[i:max(j, i + 1)])) if i < len(db) else floor

    silent = []
    for a, b in pairs:  # the quietest point of the second half of the inter-onset time, against the note's peak
        ioi = b[0] - a[0]
        peak = level(a[0], a[0] + 0.5 * ioi, np.max)
        low = level(a[0] + 0.5 * ioi, b[0] - 0.01, np.min)
        silent.append(peak - low >= min(GAP_DB, GAP_SHARE * (peak - floor)))
    ratios = [(a[1] - a[0]) / (b[0] - a[0]) for a, b in pairs]
    share = _share(silent)
    h = len(silent) // 2
    s1, s2 = _share(silent[:h]), _share(silent[h:])
    if len(silent) >= 4 and s1 >= CHANGE_SHARE and s2 <= 1 - CHANGE_SHARE:
        label = "detached_to_connected"
    elif len(silent) >= 4 and s1 <= 1 - CHANGE_SHARE and s2 >= CHANGE_SHARE:
        label = "connected_to_detached"
    else:
        label = "detached" if share >= 0.5 else "connected"
    out = {**base, "label": label, "silent_gaps": round(share, 2), "first_half_silent": round(s1, 2),
           "second_half_silent": round(s2, 2), "ratio": round(float(np.median(ratios)), 2)}
    words = {"detached": "detached (staccato)", "connected": "connected (legato)",
             "detached_to_connected": "detached at first, then connected",
             "connected_to_detached": "connected at first, then detached"}[label]
    text = (f"The {len(mono)} notes are {words}: the sound falls silent before the next note in {share:.0%} of the "
            f"gaps (first half {s1:.0%}, second half {s2:.0%}; silent: >= {GAP_DB:g} dB below the note, or "
            f"{GAP_SHARE:.0%} of the way to the noise floor).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "silent_gaps": out["silent_gaps"]})])


# ------------------------------------------------------------------------------------------- phrase_repeat

class PhraseRepeatOutput(CoveredOutput):
    label: Literal["identical", "one_changed", "different", "too_few_notes"] = Field(
        description="how the second phrase's pitch sequence compares with the first (edit distance 0, 1, more)")
    first: list[str] = Field(description="the first phrase's notes")
    second: list[str] = Field(description="the second phrase's notes")
    changes: int | None = Field(description="edit distance between the two pitch sequences (notes)")
    split_s: float | None = Field(description="where the phrases were split (s)")
    split_by: Literal["gap", "middle", "none"] = Field(description="at the longest inter-onset time (gap), or in the middle")
    analysed_s: AnalysedWindow


def _edit(a: list[int], b: list[int]) -> int:
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, z in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != z))
    return d[-1]


def phrase_repeat(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = _audio(ctx, args)
    notes, _, _ = transcribe(y, t0)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    if len(notes) < 4:
        out = {**base, "label": "too_few_notes", "first": [], "second": [], "changes": None, "split_s": None,
               "split_by": "none"}
        return ToolResult(output=out, claims=[Claim(text=f"Too few notes ({len(notes)}) to compare two phrases.",
                                                    data={"label": "too_few_notes"})])
    # inter-onset times, not silences: a ringing note (piano release, vibraphone) fills the silence it leaves
    iois = np.diff([n[0] for n in notes])
    inner = range(1, len(iois) - 1)  # each phrase keeps at least two notes
    k = max(inner, key=lambda i: iois[i])
    if iois[k] >= GAP_FACTOR * float(np.median(iois)):
        split_by = "gap"
    else:
        k, split_by = len(notes) // 2 - 1, "middle"
    a, b = notes[: k + 1], notes[k + 1:]
    changes = _edit([n[2] for n in a], [n[2] for n in b])
    label = "identical" if changes == 0 else "one_changed" if changes == 1 else "different"
    out = {**base, "label": label, "first": [midi_name(n[2]) for n in a], "second": [midi_name(n[2]) for n in b],
           "changes": changes, "split_s": round(notes[k + 1][0], 3), "split_by": split_by}
    words = {"identical": "repeats the first note for note", "one_changed": "repeats the first with one note changed",
             "different": f"differs from the first ({changes} notes changed)"}[label]
    text = (f"The second phrase ({' '.join(out['second'])}, from {out['split_s']:.2f} s) {words} "
            f"({' '.join(out['first'])}).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "changes": changes})])
