"""The one reader layer: typed tool outputs on record -> facts the verifiers, the cascade description and
the judges can use without knowing any tool's output format.

A fact is a measurement with its evidence ids: a transcript with word times, time-stamped segments with
labels (speech, sound events, tag events, speaker turns, notes), counts with what was counted, levels and
pitches per segment, rates. Facts are read from the audio the question is about: the original `a0`,
whole-clip calls first (a crop made for a re-listen answers only for its part and is kept apart).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.language.text import syllables
from audiomind.registry import Registry
from audiomind.state import Artifact, EvidenceItem, EvidenceState, ToolCall
from audiomind.tools.base import typed_output


class Span(BaseModel):
    """A time-stamped segment (absolute seconds in the clip) with what is known about it."""

    start_s: float
    end_s: float
    label: str | None = None
    score: float | None = None
    level_db: float | None = Field(default=None, description="peak level of the segment, dBFS")
    pitch_hz: float | None = Field(default=None, description="median f0 over the segment, Hz")

    @property
    def mid_s(self) -> float:
        return (self.start_s + self.end_s) / 2

    @property
    def length_s(self) -> float:
        return max(0.0, self.end_s - self.start_s)


class Word(BaseModel):
    text: str
    start_s: float
    end_s: float
    probability: float | None = Field(default=None, description="the recogniser's word probability (0-1)")


class Fact(BaseModel):
    """Base: every fact names the evidence it rests on."""

    evidence_ids: list[str] = Field(default_factory=list)
    source: str = ""


class TranscriptReading(BaseModel):
    """Another recognition of (part of) the clip: a second reading asked for when the first left doubt."""

    text: str
    model: str | None = None
    start_s: float = 0.0
    end_s: float | None = None
    evidence_ids: list[str] = Field(default_factory=list)


class TranscriptFact(Fact):
    text: str
    words: list[Word] = Field(default_factory=list)
    language: str | None = None
    language_probability: float | None = None
    model: str | None = None
    readings: list[TranscriptReading] = Field(default_factory=list, description="other recognitions of stretches "
                                              "of the clip (stronger model, wider beam), in call order")

    def words_in(self, start_s: float, end_s: float, pad_s: float = 0.0) -> list[Word]:
        """The words whose middle lies in [start_s - pad_s, end_s + pad_s] (a word belongs to one span)."""
        return [w for w in self.words if start_s - pad_s <= (w.start_s + w.end_s) / 2 <= end_s + pad_s]


class SpeechFact(Fact):
    segments: list[Span]
    speech_s: float


class EventsFact(Fact):
    """Separate bursts above the noise floor (count_events)."""

    events: list[Span]
    count: int
    noise_floor_dbfs: float | None = None


class TagWindow(BaseModel):
    """Tags of one analysis window (a tagging call with start_s/end_s): what sounds inside it, e.g. a window
    that starts at a sound's onset, so YAMNet's 0.96 s patches line up with the sound instead of straddling it."""

    start_s: float
    end_s: float
    labels: list[tuple[str, float]] = Field(default_factory=list, description="(label, mean score), strongest first")
    peak_labels: list[tuple[str, float]] = Field(default_factory=list, description="(label, max score over patches)")
    evidence_ids: list[str] = Field(default_factory=list)

    def strength(self, label: str) -> float:
        """max(mean, 0.8 x peak): a short sound in the window still counts."""
        mean = dict(self.labels).get(label, 0.0)
        peak = dict(self.peak_labels).get(label, 0.0)
        return max(mean, 0.8 * peak)

    def ranked(self) -> list[tuple[str, float]]:
        """Every label heard in the window with its strength, strongest first."""
        names = dict.fromkeys([lab for lab, _ in self.labels] + [lab for lab, _ in self.peak_labels])
        return sorted(((lab, round(self.strength(lab), 3)) for lab in names), key=lambda kv: -kv[1])


class TagsFact(Fact):
    labels: list[tuple[str, float]] = Field(description="clip-level (label, mean score), strongest first")
    peak_labels: list[tuple[str, float]] = Field(default_factory=list, description="(label, max score over patches)")
    events: list[Span] = Field(default_factory=list, description="time-stamped tag events")
    windows: list[TagWindow] = Field(default_factory=list, description="tags of analysis windows (onset-aligned)")

    def strength(self, label: str) -> float:
        """How present a label is in the whole clip: max(mean, 0.8 x peak), the peak taken over patches and
        events, so a short event in a long clip still counts."""
        mean = dict(self.labels).get(label, 0.0)
        peak = max([s for lab, s in self.peak_labels if lab == label]
                   + [e.score or 0.0 for e in self.events if e.label == label] + [0.0])
        return max(mean, 0.8 * peak)

    def window(self, start_s: float, end_s: float, tol_s: float = 0.05) -> TagWindow | None:
        """The tagged window that starts at start_s (within tol_s) and covers end_s, else None."""
        cands = [w for w in self.windows if abs(w.start_s - start_s) <= tol_s and w.end_s >= end_s - tol_s]
        return min(cands, key=lambda w: w.end_s - w.start_s) if cands else None


class LoudnessFact(Fact):
    trend: str
    integrated_lufs: float | None = None
    change_db: float | None = None
    curve: list[tuple[float, float]] = Field(default_factory=list, description="(time_s, LUFS) of active windows")


class PitchFact(Fact):
    median_hz: float | None
    notes: list[Span] = Field(default_factory=list, description="steady pitched stretches, pitch_hz set")
    contour: list[tuple[float, float]] = Field(default_factory=list, description="(time_s, f0 Hz) voiced points")


class SpeakersFact(Fact):
    count: int
    turns: list[Span] = Field(default_factory=list, description="label = speaker name; pitch_hz set when known")

    def talking(self, speech: list[Span], min_s: float = 0.5) -> int:
        """Speakers whose turns hold at least min_s of VAD speech (a cluster over a door slam is no speaker)."""
        held: dict[str, float] = {}
        for t in self.turns:
            inside = sum(max(0.0, min(t.end_s, s.end_s) - max(t.start_s, s.start_s)) for s in speech)
            held[t.label or "?"] = held.get(t.label or "?", 0.0) + inside
        return sum(1 for v in held.values() if v >= min_s) if self.turns else self.count


class ValueFact(Fact):
    """A single measured value (tempo, key, duration, language ...)."""

    name: str
    value: Any
    detail: dict[str, Any] = Field(default_factory=dict)


class SpeechRateFact(Fact):
    words: int
    syllables: int
    voiced_s: float
    words_per_s: float
    syllables_per_s: float


class SignalFact(Fact):
    """Level statistics of the whole clip (signal_stats)."""

    peak_dbfs: float
    rms_dbfs: float
    clipping_ratio: float
    silence_ratio: float


class SourceSpan(BaseModel):
    """One source heard in a clip and when: speech (voice activity), a tagged sound class, or a separate
    burst of energy no tag names."""

    kind: Literal["speech", "sound", "unidentified"]
    label: str
    strength: float = Field(description="clip-level strength 0..1 (speech: 1 when voice activity holds it)")
    spans: list[Span] = Field(default_factory=list)

    @property
    def onset_s(self) -> float | None:
        return min((s.start_s for s in self.spans), default=None)


class ChannelsFact(Fact):
    channels: int
    levels_db: list[float] = Field(default_factory=list, description="RMS dBFS per channel")

    @property
    def balance_db(self) -> float | None:
        """Left minus right in dB (positive: louder on the left); None for mono."""
        return self.levels_db[0] - self.levels_db[1] if len(self.levels_db) >= 2 else None


class Facts(BaseModel):
    """Everything measured about the audio the question is about."""

    duration_s: float
    transcript: TranscriptFact | None = None
    speech: SpeechFact | None = None
    events: EventsFact | None = None
    tags: TagsFact | None = None
    loudness: LoudnessFact | None = None
    pitch: PitchFact | None = None
    speakers: SpeakersFact | None = None
    speech_rate: SpeechRateFact | None = None
    channels: ChannelsFact | None = None
    signal: SignalFact | None = None
    values: dict[str, ValueFact] = Field(default_factory=dict)
    failed: list[str] = Field(default_factory=list, description="tools that failed or timed out, with why")

    # -- clip-level helpers (the judges read a clip through these)
    def strength(self, label: str) -> float:
        """How present an AudioSet label is in the whole clip (0 without tags)."""
        return self.tags.strength(label) if self.tags is not None else 0.0

    def present_labels(self, threshold: float = 0.3, skip: set[str] | frozenset[str] = frozenset()) -> dict[str, float]:
        """Labels at or above `threshold` strength, strongest first (labels in `skip` left out)."""
        if self.tags is None:
            return {}
        names = dict.fromkeys([lab for lab, _ in self.tags.labels] + [lab for lab, _ in self.tags.peak_labels]
                              + [e.label for e in self.tags.events if e.label])
        out = {lab: round(self.strength(lab), 3) for lab in names if lab not in skip}
        return dict(sorted(((k, v) for k, v in out.items() if v >= threshold), key=lambda kv: -kv[1]))

    @property
    def speech_s(self) -> float:
        return self.speech.speech_s if self.speech is not None else 0.0

    @property
    def speech_segments(self) -> list[Span]:
        return list(self.speech.segments) if self.speech is not None else []

    @property
    def text(self) -> str | None:
        """The transcript text (None when no ASR ran)."""
        return self.transcript.text.strip() if self.transcript is not None else None

    @property
    def has_speech(self) -> bool:
        return self.speech_s >= 0.3 or bool(self.text)

    def tag_spans(self, labels: set[str] | list[str]) -> list[Span]:
        """Time spans of the tag events of any of `labels`."""
        want = set(labels)
        return [e for e in (self.tags.events if self.tags is not None else []) if e.label in want]

    def nonspeech_events(self, min_outside: float = 0.5) -> list[Span]:
        """count_events bursts that lie mostly (>= min_outside of their length) outside voice activity."""
        if self.events is None:
            return []
        out = []
        for e in self.events.events:
            inside = sum(max(0.0, min(e.end_s, s.end_s) - max(e.start_s, s.start_s)) for s in self.speech_segments)
            if e.length_s <= 0 or inside <= (1 - min_outside) * e.length_s:
                out.append(e)
        return out

    def sources(self, threshold: float = 0.3, skip: set[str] | frozenset[str] = frozenset()) -> list[SourceSpan]:
        """The sources present in the clip with their time spans: speech (VAD segments), each tagged sound
        class at or above `threshold` (its tag events), and energy bursts outside speech that no tag event
        covers ("unidentified", count_events). Ordered by onset."""
        out: list[SourceSpan] = []
        if self.speech_segments:
            out.append(SourceSpan(kind="speech", label="speech", strength=1.0, spans=self.speech_segments))
        for lab, st in self.present_labels(threshold, skip).items():
            out.append(SourceSpan(kind="sound", label=lab, strength=st, spans=self.tag_spans([lab])))
        tagged = [e for s in out if s.kind == "sound" for e in s.spans]
        loose = [e for e in self.nonspeech_events()
                 if not any(min(e.end_s, t.end_s) - max(e.start_s, t.start_s) > 0 for t in tagged)]
        if loose:
            out.append(SourceSpan(kind="unidentified", label="unidentified sound", strength=0.0, spans=loose))
        return sorted(out, key=lambda s: (s.onset_s if s.onset_s is not None else 1e9, s.kind))

    def median_pitch(self, start_s: float, end_s: float) -> float | None:
        """Median f0 over [start_s, end_s] from the pitch contour (None with under 3 voiced points)."""
        return _median_pitch(self.pitch.contour, start_s, end_s) if self.pitch is not None else None

    def within(self, start_s: float, end_s: float) -> Facts:
        """The facts restricted to [start_s, end_s] (absolute times kept): segments that overlap it, counts
        recomputed, the transcript rebuilt from the words spoken inside it. Clip-level values (tags, key,
        tempo) are kept as they are: they describe the whole clip and say so."""
        def keep(spans: list[Span]) -> list[Span]:
            return [x for x in spans if x.end_s > start_s and x.start_s < end_s
                    and min(x.end_s, end_s) - max(x.start_s, start_s) >= 0.5 * min(x.length_s, end_s - start_s)]

        upd: dict[str, Any] = {}
        if self.transcript is not None:
            ws = self.transcript.words_in(start_s, end_s)
            upd["transcript"] = self.transcript.model_copy(update={"words": ws, "text": " ".join(w.text for w in ws)})
        if self.speech is not None:
            segs = keep(self.speech.segments)
            upd["speech"] = self.speech.model_copy(update={
                "segments": segs, "speech_s": sum(min(x.end_s, end_s) - max(x.start_s, start_s) for x in segs)})
        if self.events is not None:
            evs = keep(self.events.events)
            upd["events"] = self.events.model_copy(update={"events": evs, "count": len(evs)})
        if self.tags is not None:
            upd["tags"] = self.tags.model_copy(update={"events": keep(self.tags.events)})
        if self.pitch is not None:
            upd["pitch"] = self.pitch.model_copy(update={
                "notes": keep(self.pitch.notes), "contour": [(t, h) for t, h in self.pitch.contour if start_s <= t <= end_s]})
        if self.speakers is not None:
            turns = keep(self.speakers.turns)
            upd["speakers"] = self.speakers.model_copy(update={"turns": turns, "count": len({x.label for x in turns})})
        if self.loudness is not None:
            upd["loudness"] = self.loudness.model_copy(update={
                "curve": [(t, v) for t, v in self.loudness.curve if start_s <= t <= end_s]})
        out = self.model_copy(update=upd)
        out.speech_rate = _speech_rate(out)
        return out

    def measured_lines(self) -> list[str]:
        """Derived measurements no single tool states (rates, per-sound pitch and level, turn pitch), for the
        front end's description and the evidence summary."""
        lines = []
        if self.speech_rate is not None:
            r = self.speech_rate
            lines.append(f"speech rate: {r.words} words, {r.syllables} syllables in {r.voiced_s:.2f} s voiced "
                         f"= {r.words_per_s:.2f} words/s, {r.syllables_per_s:.2f} syllables/s")
        if self.events is not None and self.events.events:
            shown = "; ".join(
                f"{e.start_s:.2f}-{e.end_s:.2f} s" + (f" peak {e.level_db:.1f} dBFS" if e.level_db is not None else "")
                + (f" f0 {e.pitch_hz:.0f} Hz" if e.pitch_hz else "") for e in self.events.events[:10])
            lines.append(f"sound events: {shown}" + (" ..." if len(self.events.events) > 10 else ""))
        if self.pitch is not None and self.pitch.notes:
            lines.append("notes (f0): " + ", ".join(f"{n.pitch_hz:.0f} Hz at {n.start_s:.2f} s" for n in self.pitch.notes[:12]))
        if self.speakers is not None and any(t.pitch_hz for t in self.speakers.turns):
            lines.append("speaker turns: " + "; ".join(
                f"{t.label} {t.start_s:.2f}-{t.end_s:.2f} s" + (f" f0 {t.pitch_hz:.0f} Hz" if t.pitch_hz else "")
                for t in self.speakers.turns[:8]))
        if self.channels is not None and self.channels.balance_db is not None:
            lines.append(f"stereo balance: left minus right {self.channels.balance_db:+.1f} dB")
        return lines

    def ids(self, *names: str) -> list[str]:
        out: list[str] = []
        for n in names:
            f = getattr(self, n, None) if n in type(self).model_fields else self.values.get(n)
            if f is not None:
                out += [i for i in f.evidence_ids if i not in out]
        return out


# ------------------------------------------------------------------ reading the record


def _args(c: ToolCall) -> dict[str, Any]:
    return c.arguments or c.requested_arguments or {}


class Record(BaseModel):
    """What the readers read: tool calls and the evidence items they produced (a run's state, or a front
    end's perception pass before it reaches the state)."""

    tool_calls: list[ToolCall]
    evidence: list[EvidenceItem]

    def successful_calls(self, tool: str) -> list[ToolCall]:
        return [c for c in self.tool_calls if c.tool == tool and c.status.value in ("ok", "cached")]


def whole_call(state: EvidenceState | Record, tool: str, artifact: str = "a0") -> ToolCall | None:
    """The latest successful call of `tool` over the whole of `artifact` (no analysis window), else any on it."""
    calls = [c for c in state.successful_calls(tool) if _args(c).get("artifact", "a0") == artifact]
    whole = [c for c in calls if not _args(c).get("start_s") and _args(c).get("end_s") is None]
    picked = whole or calls
    return picked[-1] if picked else None


def evidence_ids(state: EvidenceState | Record, call: ToolCall | None) -> list[str]:
    return [e.id for e in state.evidence if call is not None and e.source_id == call.id]


def _read(state: EvidenceState | Record, tool: str, model: type[BaseModel], artifact: str) -> tuple[Any, list[str]]:
    call = whole_call(state, tool, artifact)
    if call is None:
        return None, []
    try:
        return typed_output(call.output, model), evidence_ids(state, call)
    except Exception:  # noqa: BLE001 - an output that does not fit its model is no evidence
        return None, []


def contour_notes(points: list[tuple[float, float]], hop_s: float, tol_st: float = 0.6,
                  min_points: int = 3) -> list[Span]:
    """Steady stretches of an f0 contour as notes: consecutive voiced points within tol_st semitones of the
    stretch's running median; shorter stretches (glides, onsets) are dropped; a dropout inside a note is
    bridged."""
    notes: list[Span] = []
    cur: list[tuple[float, float]] = []
    last_t = None

    def flush() -> None:
        if len(cur) >= min_points:
            notes.append(Span(start_s=cur[0][0], end_s=cur[-1][0] + hop_s,
                              pitch_hz=round(statistics.median(h for _, h in cur), 2)))
        cur.clear()

    for t, h in points:
        if last_t is not None and t - last_t > 2.5 * hop_s:
            flush()
        if cur and abs(12 * math.log2(h / statistics.median(x for _, x in cur))) > tol_st:
            flush()
        cur.append((t, h))
        last_t = t
    flush()
    merged: list[Span] = []
    for n in notes:
        prev = merged[-1] if merged else None
        if (prev is not None and n.pitch_hz is not None and prev.pitch_hz is not None  # every note here has one
                and abs(12 * math.log2(n.pitch_hz / prev.pitch_hz)) < tol_st and n.start_s - prev.end_s < 0.15):
            merged[-1] = prev.model_copy(update={"end_s": n.end_s})
        else:
            merged.append(n)
    return merged


def melody_line(notes: list[Span], together_s: float = 0.08) -> list[Span]:
    """The leading line of a note transcription: of notes that start together (within together_s), the
    strongest; a note far weaker than the strongest one sounding is an overtone or a ghost, not the melody."""
    out: list[Span] = []
    for n in sorted(notes, key=lambda s: s.start_s):
        if out and n.start_s - out[-1].start_s <= together_s:
            if (n.score or 0.0) > (out[-1].score or 0.0):
                out[-1] = n
            continue
        out.append(n)
    strongest = max((n.score or 0.0 for n in out), default=0.0)
    return [n for n in out if (n.score or 0.0) >= 0.35 * strongest]


def _median_pitch(contour: list[tuple[float, float]], a: float, b: float) -> float | None:
    hz = [h for t, h in contour if a <= t <= b]
    return round(statistics.median(hz), 2) if len(hz) >= 3 else None


def read_facts(state: EvidenceState, artifact: str = "a0") -> Facts:
    """All facts on record in a run's state about `artifact` (default: the original)."""
    art = next((a for a in state.artifacts if a.id == artifact), state.original)
    return facts_from(Record(tool_calls=state.tool_calls, evidence=state.evidence), art)


def facts_from(state: Record, art: Artifact) -> Facts:
    """All facts in a record (tool calls + evidence) about one artifact: every fact reader in turn."""
    facts = Facts(duration_s=art.duration_s)
    facts.failed = [f"{c.tool}: {c.status.value} ({(c.error or '')[:120]})" for c in state.tool_calls
                    if c.status.value in ("error", "timeout")]
    on = OnArtifact(record=state, artifact=art.id)
    for name in FACT_READERS:
        FACT_READERS[name](on, facts)
    facts.speech_rate = _speech_rate(facts)
    return facts


# ------------------------------------------------------------------ the fact readers, one per tool


class OnArtifact(BaseModel):
    """What a fact reader reads: the record, seen from the artifact the facts are about."""

    record: Record
    artifact: str

    def read(self, tool: str, model: type[BaseModel]) -> tuple[Any, list[str]]:
        """The typed output of the latest whole-artifact call of `tool` and its evidence ids (None, [] when
        there is none or its output does not fit `model`)."""
        return _read(self.record, tool, model, self.artifact)

    def call(self, tool: str) -> ToolCall | None:
        return whole_call(self.record, tool, self.artifact)

    def calls(self, tool: str) -> list[ToolCall]:
        """Every successful call of `tool` on the artifact (windowed ones too), in call order."""
        return [c for c in self.record.successful_calls(tool) if _args(c).get("artifact", "a0") == self.artifact]

    def evidence_ids(self, call: ToolCall | None) -> list[str]:
        return evidence_ids(self.record, call)


FactReader = Callable[[OnArtifact, Facts], None]
"""Fills its part of Facts from the calls of one tool (a reader may use facts an earlier reader filled)."""

FACT_READERS: Registry[FactReader] = Registry("fact reader", group="fact_readers")
"""Tool name -> its fact reader, run by `facts_from` in registration order (the order of `Facts.values`)."""


@FACT_READERS.register("probe")
def _probe(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.metadata import ProbeOutput

    probe, ids = on.read("probe", ProbeOutput)
    if probe is not None:
        facts.values["duration"] = ValueFact(name="duration", value=float(probe.duration_s), evidence_ids=ids,
                                             source="probe")


@FACT_READERS.register("asr")
def _asr(on: OnArtifact, facts: Facts) -> None:
    """The transcript with word times, second readings of stretches, and the language a multilingual model
    detected."""
    from audiomind.tools.asr import AsrOutput

    asr, ids = on.read("asr", AsrOutput)
    if asr is not None:
        words = [Word(text=w.word, start_s=float(w.start), end_s=float(w.end), probability=float(w.probability))
                 for s in asr.segments for w in (s.words or [])]
        facts.transcript = TranscriptFact(text=asr.text or "", words=words, language=asr.language,
                                          language_probability=asr.language_probability, model=asr.model,
                                          evidence_ids=ids, source="asr")
    if facts.transcript is not None:  # second readings of stretches (the planner's doubt step)
        main = on.call("asr")
        for c in on.record.successful_calls("asr"):
            o = typed_output(c.output, AsrOutput) if c is not main and _args(c).get("artifact", "a0") == on.artifact else None
            if o is not None and (o.text or "").strip():
                facts.transcript.readings.append(TranscriptReading(
                    text=o.text, model=o.model, start_s=float(_args(c).get("start_s") or 0.0),
                    end_s=_args(c).get("end_s"), evidence_ids=on.evidence_ids(c)))
    # a multilingual model's language call, where the default English-only model also ran
    multilingual = [(c, o) for c in on.calls("asr") if (o := typed_output(c.output, AsrOutput)) is not None
                    and o.model not in (None, "tiny.en") and o.language]
    if multilingual:
        call, lo = multilingual[-1]
        facts.values["language"] = ValueFact(name="language", value=lo.language,
                                             detail={"probability": lo.language_probability, "model": lo.model,
                                                     "candidates": {c.code: c.probability for c in lo.language_candidates}},
                                             evidence_ids=on.evidence_ids(call), source="asr")


@FACT_READERS.register("vad")
def _vad(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.vad import VadOutput

    vad, ids = on.read("vad", VadOutput)
    if vad is not None:
        segs = [Span(start_s=s.start_s, end_s=s.end_s, label="speech", score=s.mean_prob) for s in vad.segments]
        facts.speech = SpeechFact(segments=segs, speech_s=float(vad.speech_s), evidence_ids=ids, source="vad")


@FACT_READERS.register("count_events")
def _count_events(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.events import CountEventsOutput

    ev, ids = on.read("count_events", CountEventsOutput)
    if ev is not None:
        spans = [Span(start_s=e.start_s, end_s=e.end_s, level_db=e.peak_dbfs) for e in ev.events]
        facts.events = EventsFact(events=spans, count=int(ev.count), evidence_ids=ids, source="count_events",
                                  noise_floor_dbfs=ev.noise_floor_dbfs)


@FACT_READERS.register("tagging")
def _tagging(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.tagging import TaggingOutput

    tg, ids = on.read("tagging", TaggingOutput)
    if tg is not None:
        facts.tags = TagsFact(
            # the clip-level tags, then the specific classes they leave out (a guitar under 'Music')
            labels=[(t.label, float(t.score)) for t in tg.tags]
            + [(t.label, float(t.score)) for t in (tg.specific_tags or []) if t.label not in {x.label for x in tg.tags}],
            peak_labels=[(t.label, float(t.max)) for t in (tg.peak_tags or [])],
            events=[Span(start_s=e.start_s, end_s=e.end_s, label=e.label, score=e.score) for e in (tg.events or [])],
            windows=_tag_windows(on.record, on.artifact), evidence_ids=ids, source="tagging")


@FACT_READERS.register("loudness")
def _loudness(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.loudness import LoudnessOutput

    ld, ids = on.read("loudness", LoudnessOutput)
    if ld is not None:
        curve = []
        if ld.curve is not None:
            curve = [(float(t), float(v)) for t, v in zip(ld.curve.time_s, ld.curve.lufs) if v is not None]
        facts.loudness = LoudnessFact(trend=ld.trend or "unknown", change_db=ld.change_db, curve=curve,
                                      integrated_lufs=ld.integrated_lufs, evidence_ids=ids, source="loudness")


@FACT_READERS.register("pitch")
def _pitch(on: OnArtifact, facts: Facts) -> None:
    """The f0 contour and its steady notes; and the pitch of each separate sound (count_events, read before)."""
    from audiomind.tools.music import PitchOutput

    pt, pids = on.read("pitch", PitchOutput)
    if pt is None:
        return
    contour = []
    if pt.contour is not None:
        contour = [(float(t), float(h)) for t, h in zip(pt.contour.time_s, pt.contour.f0_hz) if h]
    hop = float(pt.contour.hop_s) if pt.contour is not None else 0.03
    facts.pitch = PitchFact(median_hz=pt.median_f0_hz, contour=contour, notes=contour_notes(contour, hop),
                            evidence_ids=pids, source="pitch")
    if facts.events is not None and contour:  # the pitch of each separated sound
        facts.events.events = [e.model_copy(update={"pitch_hz": _median_pitch(contour, e.start_s, e.end_s)})
                               for e in facts.events.events]
        facts.events.evidence_ids += [i for i in pids if i not in facts.events.evidence_ids]


@FACT_READERS.register("notes")
def _notes(on: OnArtifact, facts: Facts) -> None:
    """Transcribed notes as the pitch's notes (its melody line), less those the f0 contour contradicts."""
    from audiomind.tools.music import NotesOutput

    nt, nids = on.read("notes", NotesOutput)
    if nt is None or not nt.notes:
        return
    contour = facts.pitch.contour if facts.pitch is not None else []
    notes = melody_line([Span(start_s=n.start_s, end_s=n.end_s, label=n.note, score=n.activation,
                              pitch_hz=round(440.0 * 2 ** ((n.pitch_midi - 69) / 12), 2)) for n in nt.notes])
    if contour:  # a transcribed note the f0 track puts an octave or more away is a ghost (overtone/subharmonic)
        def _agrees(n: Span) -> bool:
            hz = _median_pitch(contour, n.start_s, n.end_s)
            return hz is None or n.pitch_hz is None or abs(12 * math.log2(n.pitch_hz / hz)) <= 5
        notes = [n for n in notes if _agrees(n)] or notes
    base = facts.pitch or PitchFact(median_hz=None)
    facts.pitch = base.model_copy(update={"notes": sorted(notes, key=lambda s: s.start_s),
                                          "evidence_ids": base.evidence_ids + nids,
                                          "source": (base.source + "+notes").strip("+")})


@FACT_READERS.register("speaker_count")
def _speaker_count(on: OnArtifact, facts: Facts) -> None:
    """Speaker turns, each with its median f0 when the pitch contour was read."""
    from audiomind.tools.speaker import SpeakerCountOutput

    sc, ids = on.read("speaker_count", SpeakerCountOutput)
    if sc is None:
        return
    contour = facts.pitch.contour if facts.pitch is not None else []
    pids = on.evidence_ids(on.call("pitch")) if contour else []  # a contour comes from the pitch call only
    turns = [Span(start_s=t.start_s, end_s=t.end_s, label=t.speaker,
                  pitch_hz=_median_pitch(contour, t.start_s, t.end_s) if contour else None) for t in sc.turns]
    facts.speakers = SpeakersFact(count=int(sc.count), turns=turns, evidence_ids=ids + pids, source="speaker_count")


@FACT_READERS.register("tempo")
def _tempo(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.music import TempoOutput

    tp, ids = on.read("tempo", TempoOutput)
    if tp is not None and tp.bpm:
        facts.values["tempo"] = ValueFact(name="tempo", value=float(tp.bpm), evidence_ids=ids, source="tempo",
                                          detail={"clear_beat": tp.clear_beat})


@FACT_READERS.register("key")
def _key(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.music import KeyOutput

    ky, ids = on.read("key", KeyOutput)
    if ky is not None and ky.mode:
        facts.values["key"] = ValueFact(name="key", value=f"{ky.tonic} {ky.mode}", evidence_ids=ids, source="key",
                                        detail={"tonic": ky.tonic, "mode": ky.mode})


@FACT_READERS.register("signal_stats")
def _signal_stats(on: OnArtifact, facts: Facts) -> None:
    """Level statistics of the clip, and the per-channel levels of a stereo one."""
    from audiomind.tools.metadata import SignalStatsOutput

    st, ids = on.read("signal_stats", SignalStatsOutput)
    if st is None:
        return
    facts.signal = SignalFact(peak_dbfs=st.peak_dbfs, rms_dbfs=st.rms_dbfs, clipping_ratio=st.clipping_ratio,
                              silence_ratio=st.silence_ratio, evidence_ids=ids, source="signal_stats")
    if st.channel_rms_dbfs:
        facts.channels = ChannelsFact(channels=len(st.channel_rms_dbfs), levels_db=list(st.channel_rms_dbfs),
                                      evidence_ids=ids, source="signal_stats")


@FACT_READERS.register("speech_quality")
def _speech_quality(on: OnArtifact, facts: Facts) -> None:
    from audiomind.tools.quality import SpeechQualityOutput

    sq, ids = on.read("speech_quality", SpeechQualityOutput)
    if sq is not None and not sq.silent:
        facts.values["speech_quality"] = ValueFact(
            name="speech_quality", value=sq.sig_mos, evidence_ids=ids, source="speech_quality",
            detail={k: v for k, v in sq.model_dump().items() if isinstance(v, (int, float, str))})


@FACT_READERS.register("descriptors")
def _descriptors(on: OnArtifact, facts: Facts) -> None:
    """The descriptor tools' properties (lexicon/properties.toml), one value each."""
    from audiomind.reasoning.property_facts import read_property_facts

    for key, row in read_property_facts(on.record, on.artifact, whole_call, evidence_ids).items():
        facts.values[key] = ValueFact(**row)


def _tag_windows(state: EvidenceState | Record, artifact: str) -> list[TagWindow]:
    """Every successful windowed tagging call on `artifact` (start_s or end_s given), in call order."""
    from audiomind.tools.tagging import TaggingOutput

    out = []
    for c in state.successful_calls("tagging"):
        a = _args(c)
        if a.get("artifact", "a0") != artifact or (not a.get("start_s") and a.get("end_s") is None):
            continue
        try:
            tg = typed_output(c.output, TaggingOutput)
        except Exception:  # noqa: BLE001, S112 - an output that does not fit its model is no evidence
            continue
        if tg is None:
            continue
        out.append(TagWindow(start_s=float(tg.analysed_s[0]), end_s=float(tg.analysed_s[1]),
                             labels=[(t.label, float(t.score)) for t in tg.tags],
                             peak_labels=[(t.label, float(t.max)) for t in (tg.peak_tags or [])],
                             evidence_ids=evidence_ids(state, c)))
    return out


def _speech_rate(f: Facts) -> SpeechRateFact | None:
    """Words and syllables per second of voiced time: ASR word times over VAD speech time."""
    if f.transcript is None or not f.transcript.words:
        return None
    voiced = f.speech.speech_s if f.speech is not None and f.speech.speech_s > 0 else None
    if voiced is None:
        w = f.transcript.words
        voiced = max(0.1, w[-1].end_s - w[0].start_s)
    n = len(f.transcript.words)
    syl = sum(syllables(w.text) for w in f.transcript.words)
    return SpeechRateFact(words=n, syllables=syl, voiced_s=round(voiced, 3), words_per_s=round(n / voiced, 3),
                          syllables_per_s=round(syl / voiced, 3),
                          evidence_ids=f.ids("transcript", "speech"), source="asr+vad")
