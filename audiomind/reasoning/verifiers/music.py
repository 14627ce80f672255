"""Music and level descriptors: tempo, loudness trend, pitch contour, key."""

from __future__ import annotations

import itertools
import math

from audiomind.language import claims
from audiomind.language.analysis import TREND_WORDS, QuestionAnalysis, parse_number
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare


def verify_tempo(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Beats (or repeats) per minute: the tempo tool's estimate, or, for evenly repeating bursts that no
    tempo estimate covers, 60 / their median inter-onset interval."""
    tempo = f.values.get("tempo")
    if a.fit("tempo") < 0.3:
        return None
    nums = [parse_number(c) for c in a.choices]
    if sum(n is not None for n in nums) < 2:
        return None
    if tempo is not None:
        bpm, what, ids = float(tempo.value), "tempo", tempo.evidence_ids
    else:
        ev = f.events.events if f.events is not None else []
        gaps = sorted(ev[i + 1].start_s - ev[i].start_s for i in range(len(ev) - 1))
        if len(gaps) < 3:
            return None
        mid = gaps[len(gaps) // 2]
        if mid <= 0 or max(abs(g - mid) for g in gaps) > 0.15 * mid:
            return None  # not an even pulse
        bpm, what = 60.0 / mid, f"{len(ev)} evenly spaced bursts, one every {mid:.2f} s:"
        ids = f.events.evidence_ids if f.events is not None else []
    supports = []
    for n in nums:
        if n is None:
            supports.append(0.0)
            continue
        exact = abs(n - bpm) / max(bpm, 1)
        # a beat tracker may lock onto half or double the beat; evenly spaced bursts have no such ambiguity
        octave = min(abs(n - 2 * bpm), abs(n - bpm / 2)) * 1.5 / max(bpm, 1) if tempo is not None else 1.0
        err = min(exact, octave)
        supports.append(1.0 if exact <= 0.06 else 0.5 if octave <= 0.06 else (-1.0 if err >= 0.15 else 0.0))
    unit = "BPM" if tempo is not None else "per minute"
    return _result("tempo", a, a.fit("tempo"), 0.8, supports, [""] * len(supports), f"{what} {bpm:.1f} {unit}", ids)


def verify_loudness_trend(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    if f.loudness is None or a.fit("loudness_trend") < 0.3 or f.loudness.trend not in TREND_WORDS:
        return None
    hit = [claims.trend(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    truth = f.loudness.trend
    soft = {"fluctuating": "steady", "steady": "fluctuating"}
    supports = [0.0 if h is None else (1.0 if h == truth else (0.3 if soft.get(truth) == h and truth not in hit else -1.0))
                for h in hit]
    reason = f"loudness trend {truth!r} (fitted change {f.loudness.change_db} dB)"
    return _result("loudness_trend", a, a.fit("loudness_trend"), 0.8, supports, [""] * len(hit), reason,
                   f.loudness.evidence_ids)


def _contour(hz: list[float]) -> str:
    st = [12 * math.log2(h / hz[0]) for h in hz]
    steps = [b - a for a, b in itertools.pairwise(st)]
    if max(abs(s) for s in st) < 0.75:
        return "flat"
    top = max(range(len(st)), key=lambda i: st[i])
    bottom = min(range(len(st)), key=lambda i: st[i])
    if all(s > -0.5 for s in steps):
        return "rising"
    if all(s < 0.5 for s in steps):
        return "falling"
    if 0 < top < len(st) - 1 and st[top] - st[0] > 0.75 and st[top] - st[-1] > 0.75:
        return "arch"
    if 0 < bottom < len(st) - 1 and st[0] - st[bottom] > 0.75 and st[-1] - st[bottom] > 0.75:
        return "valley"
    return "rising" if st[-1] > st[0] else "falling"


def verify_pitch_contour(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    if f.pitch is None or not f.pitch.notes or a.fit("pitch_contour") < 0.3:
        return None
    hit = [claims.contour(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    shape = _contour([n.pitch_hz for n in f.pitch.notes if n.pitch_hz is not None])  # every note has one
    supports = [0.0 if h is None else (1.0 if h == shape else -1.0) for h in hit]
    reason = f"notes {', '.join(f'{n.pitch_hz:.0f}' for n in f.pitch.notes[:12])} Hz form a {shape} contour"
    return _result("pitch_contour", a, a.fit("pitch_contour"), 0.8, supports, [""] * len(hit), reason,
                   f.pitch.evidence_ids)


def verify_key(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    key = f.values.get("key")
    if key is None:
        return None
    mode, tonic = str(key.detail.get("mode") or "").lower(), str(key.detail.get("tonic") or "").lower()
    hit = [claims.mode(c) for c in a.choices]
    if sum(h is not None for h in hit) < 2:
        return None
    supports = []
    for c, h in zip(a.choices, hit):
        if h is None:
            supports.append(0.0)
            continue
        s = 1.0 if h == mode else -1.0
        named = claims.named_tonic(c)
        if s > 0 and named and tonic and not c.lower().startswith(tonic.lower()) and named != tonic[:1]:
            s = -0.5
        supports.append(s)
    return _result("key_mode", a, max(a.fit("key"), 0.6), 0.75, supports, [""] * len(hit), f"estimated key {key.value}",
                   key.evidence_ids)


declare("tempo", function="estimates beats or repeats per minute from onsets",
        supports=["the tempo in beats per minute", "how fast a beat or pulse repeats"],
        not_for=["how fast someone speaks", "whether the tempo changes", "how loud the music is"],
        examples=["What is the tempo of the music?", "About how many beats per minute is this?",
                  "How fast is the beat?", "Roughly what BPM is the drum pattern?", "How quickly do the clicks repeat?"])
declare("loudness_trend", function="reads whether the level rises, falls or stays over the clip",
        supports=["whether the sound gets louder or quieter over time", "whether the volume stays the same"],
        not_for=["which of two sounds is louder", "whether the pitch rises", "whether the tempo changes"],
        examples=["Does the sound get louder or quieter?", "How does the volume change over the clip?",
                  "Is it fading in, fading out or steady?", "Does the level rise over time?"])
declare("pitch_contour", function="reads whether the pitch of the notes rises, falls or stays",
        supports=["whether the melody or tone goes up or down in pitch", "the direction of a pitch movement"],
        not_for=["which of two separate sounds is higher", "whether the sound gets louder"],
        examples=["Does the pitch go up or down?", "How does the melody move?",
                  "Is the tone rising or falling?", "Which way does the pitch change over the clip?"])
declare("key_mode", function="estimates the musical key and whether it is major or minor",
        supports=["whether the music is in a major or a minor key", "the key the music is in"],
        not_for=["whether it sounds happy or sad for other reasons", "which instrument plays"],
        examples=["Is the music in a major or a minor key?", "What key is this piece in?",
                  "Is the tonality major or minor?", "Which mode is the melody in?"])
