"""What the offline judges know about a clip, from the embedded tools, and how a phrase ("a telephone
ringing") is matched to it.

`perceive` runs one fixed perception pass per clip through the executor (so every call is on the
record): YAMNet tags and events, Silero VAD, BS.1770 loudness, signal statistics, energy events, and
Whisper ASR where there is speech; `speech_quality` (DNSMOS) too when that tool is installed. The
result is a `ClipFacts` per artifact.

Phrases are matched to the 521 AudioSet labels by all-MiniLM-L6-v2 similarity: the labels within
`LABEL_BAND` of the best match (and above `LABEL_MIN_SIM`) form the phrase's label set, and the phrase's
presence in a clip is the strongest of those labels there (strength = max(mean score, 0.8 x peak score),
so a short event in a long clip still counts). Speech phrases ("a woman says ...") are matched to voice
activity and the transcript instead, since YAMNet's speech classes carry no words.
"""

from __future__ import annotations

import csv
import difflib
import functools
import re
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from audiomind.state import ToolCallRequest, ToolCallStatus
from audiomind.tools.base import typed_output

LABEL_MIN_SIM = 0.5
LABEL_BAND = 0.2
PRESENT = 0.3  # strength at which a sound class counts as present
ABSENT = 0.15  # strength below which it counts as absent
GENERIC = {"Silence", "Inside, small room", "Inside, large room or hall", "Outside, urban or manmade",
           "Outside, rural or natural", "Sound effect", "Speech synthesizer", "Narration, monologue", "Echo",
           "Reverberation", "Noise", "Environmental noise", "Static", "Hum", "Mains hum"}
# broad AudioSet parents: they match a specific phrase only when they are its best match
PARENT_LABELS = {"Music", "Musical instrument", "Speech", "Animal", "Domestic animals, pets", "Vehicle", "Mechanisms",
                 "Tools", "Sound effect", "Alarm", "Bell", "Wind instrument, woodwind instrument", "Brass instrument",
                 "Bowed string instrument", "Plucked string instrument", "Percussion", "Keyboard (musical)",
                 "Human voice", "Liquid", "Wood", "Glass", "Domestic sounds, home sounds", "Noise", "Environmental noise"}
SPEECH_LABELS = {"Speech", "Male speech, man speaking", "Female speech, woman speaking", "Child speech, kid speaking",
                 "Conversation", "Narration, monologue", "Speech synthesizer"}
SPEECH_VERBS = re.compile(
    r"\b(speak|speaks|speaking|spoke|speech|say|says|said|saying|talk|talks|talking|voice|voices|narrat\w*|"
    r"announce\w*|whisper\w*|shout\w*|reads|reading|utter\w*|speaker|conversation)\b", re.IGNORECASE)


class ClipFacts(BaseModel):
    """The measurable facts about one clip that the offline judges reason over."""

    artifact_id: str
    duration_s: float
    labels: dict[str, list[float]] = Field(default_factory=dict, description="label -> [mean, max] YAMNet score")
    events: list[dict[str, Any]] = Field(default_factory=list)
    speech_s: float = 0.0
    speech_segments: list[list[float]] = Field(default_factory=list)
    transcript: str | None = None
    words: list[dict[str, Any]] = Field(default_factory=list)
    lufs: float | None = None
    loudness_trend: str | None = None
    loudness_change_db: float | None = None
    peak_dbfs: float | None = None
    rms_dbfs: float | None = None
    clipping_ratio: float | None = None
    silence_ratio: float | None = None
    n_events: int | None = None
    event_onsets: list[float] = Field(default_factory=list)
    energy_events: list[list[float]] = Field(default_factory=list, description="[start, end] of count_events")
    quality: dict[str, Any] | None = None
    call_ids: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)

    def strength(self, label: str) -> float:
        mean, peak = self.labels.get(label, [0.0, 0.0])
        return max(mean, 0.8 * peak)

    def present_labels(self, threshold: float = PRESENT) -> dict[str, float]:
        out = {lab: round(self.strength(lab), 3) for lab in self.labels if lab not in GENERIC}
        return dict(sorted(((k, v) for k, v in out.items() if v >= threshold), key=lambda kv: -kv[1]))

    @property
    def has_speech(self) -> bool:
        return self.speech_s >= 0.3 or bool(self.transcript and self.transcript.strip())


# ---------------------------------------------------------------- perception pass


FIRST_PASS = ("tagging", "vad", "loudness", "signal_stats", "count_events")


def perceive(session: Any, artifact_ids: list[str], *, asr: bool = True, quality: bool = True,
             tools: tuple[str, ...] = FIRST_PASS, rationale: str = "") -> dict[str, ClipFacts]:
    """Run the fixed perception pass on each artifact (parallel tool calls) and collect ClipFacts."""
    first = list(tools)
    args = {"tagging": {"top_k": 25, "min_score": 0.02, "event_min_score": 0.3, "max_events": 30}}
    reqs = [ToolCallRequest(tool=t, arguments={"artifact": a, **args.get(t, {})}, reason="judge perception pass")
            for a in artifact_ids for t in first if session.tool_available(t)]
    res = session.run_tools(reqs, rationale or f"perception pass over {', '.join(artifact_ids)}")
    facts = {a: ClipFacts(artifact_id=a, duration_s=_duration(session, a)) for a in artifact_ids}
    for c in res.tool_calls:
        _absorb(facts[(c.arguments or c.requested_arguments).get("artifact", "a0")], c)
    second = []
    for a, f in facts.items():
        speechy = f.speech_s >= 0.3 or f.strength("Speech") >= 0.3
        if asr and speechy and session.tool_available("asr"):
            second.append(ToolCallRequest(tool="asr", arguments={"artifact": a}, reason="speech found: transcript"))
        if quality and speechy and session.tool_available("speech_quality"):
            second.append(ToolCallRequest(tool="speech_quality", arguments={"artifact": a},
                                          reason="speech found: DNSMOS quality"))
    if second:
        res2 = session.run_tools(second, "speech found: transcripts (and speech quality where available)")
        for c in res2.tool_calls:
            _absorb(facts[(c.arguments or c.requested_arguments).get("artifact", "a0")], c)
    return facts


def _duration(session: Any, aid: str) -> float:
    for a in session.state.artifacts:
        if a.id == aid:
            return float(a.duration_s)
    return 0.0


def _absorb(f: ClipFacts, call: Any) -> None:
    from audiomind.tools.asr import AsrOutput
    from audiomind.tools.events import CountEventsOutput
    from audiomind.tools.loudness import LoudnessOutput
    from audiomind.tools.metadata import SignalStatsOutput
    from audiomind.tools.quality import SpeechQualityOutput
    from audiomind.tools.tagging import TaggingOutput
    from audiomind.tools.vad import VadOutput

    f.call_ids.append(call.id)
    if call.status not in (ToolCallStatus.ok, ToolCallStatus.cached) or not call.output:
        f.failed.append(f"{call.tool}: {call.status.value}: {call.error}")
        return
    if call.tool == "tagging":
        tg = typed_output(call.output, TaggingOutput)
        for t in tg.tags:
            f.labels[t.label] = [float(t.score), float(t.max)]
        for p in tg.peak_tags:
            mean, peak = f.labels.get(p.label, [0.0, 0.0])
            f.labels[p.label] = [mean, max(peak, float(p.max))]
        f.events = [e.model_dump() for e in tg.events]
        for e in tg.events:  # events name classes that may be outside the clip-level top-k
            mean, peak = f.labels.get(e.label, [0.0, 0.0])
            f.labels[e.label] = [mean, max(peak, float(e.max))]
    elif call.tool == "vad":
        vad = typed_output(call.output, VadOutput)
        f.speech_s = float(vad.speech_s)
        f.speech_segments = [[s.start_s, s.end_s] for s in vad.segments]
    elif call.tool == "asr":
        asr = typed_output(call.output, AsrOutput)
        f.transcript = asr.text.strip()
        f.words = [w.model_dump() for s in asr.segments for w in s.words]
    elif call.tool == "loudness":
        ld = typed_output(call.output, LoudnessOutput)
        f.lufs = ld.integrated_lufs
        f.loudness_trend = ld.trend
        f.loudness_change_db = ld.change_db
    elif call.tool == "signal_stats":
        st = typed_output(call.output, SignalStatsOutput)
        f.peak_dbfs = st.peak_dbfs
        f.rms_dbfs = st.rms_dbfs
        f.clipping_ratio = st.clipping_ratio
        f.silence_ratio = st.silence_ratio
    elif call.tool == "count_events":
        ce = typed_output(call.output, CountEventsOutput)
        f.n_events = ce.count
        f.event_onsets = [float(e.start_s) for e in ce.events]
        f.energy_events = [[float(e.start_s), float(e.end_s)] for e in ce.events]
    elif call.tool == "speech_quality":
        q = typed_output(call.output, SpeechQualityOutput)
        f.quality = {k: v for k, v in q.model_dump().items() if isinstance(v, (int, float, str))}


# ---------------------------------------------------------------- phrases and labels


@functools.lru_cache(maxsize=1)
def _labels() -> tuple[list[str], np.ndarray]:
    from audiomind.embedded import models, text

    _, class_map = models.yamnet_paths()
    with open(class_map, newline="") as f:
        labels = [row["display_name"] for row in csv.DictReader(f)]
    return labels, text.embed(labels)


_DET = re.compile(r"^(?:the|a|an|some|one|two|three|four|five|several|loud|soft|quiet|distant|faint)\s+", re.IGNORECASE)


def clean_phrase(phrase: str) -> str:
    p = phrase.strip().strip(".,;:!?\"'").strip()
    p = re.sub(r"\b(?:the )?sound(?:s)? of\b", "", p, flags=re.IGNORECASE).strip()
    p = re.sub(r"\b(?:sound|sounds|noise|noises|in the background|background)$", "", p, flags=re.IGNORECASE).strip()
    while _DET.match(p):
        p = _DET.sub("", p, count=1)
    return p or phrase.strip()


_AUX = re.compile(r"\b(is|are|was|were|being|been|be|gets?|getting|can|could|heard|audible)\b", re.IGNORECASE)


def _gerund(w: str) -> str:
    lw = w.lower()
    if len(lw) > 4 and lw.endswith("ed"):
        return lw[:-2] + "ing"  # crumpled -> crumpling, shattered -> shattering
    if len(lw) > 4 and lw.endswith("es") and lw[:-1].endswith("e") and lw[-3] in "lkcv":
        return lw[:-2] + "ing"
    if len(lw) > 3 and lw.endswith("s") and not lw.endswith("ss"):
        return lw[:-1] + "ing"
    return lw


def phrase_variants(phrase: str) -> list[str]:
    """The phrase as written, without auxiliaries, and with its verbs as gerunds ('paper is crumpled' ->
    'paper crumpling'), so the embedding meets AudioSet's label style."""
    base = clean_phrase(phrase)
    bare = " ".join(_AUX.sub(" ", base).split()) or base
    words = bare.split()
    ger = " ".join(words[:-1] + [_gerund(words[-1])]) if words else bare
    out = []
    for v in (base, bare, ger):
        if v and v not in out:
            out.append(v)
    return out


@functools.lru_cache(maxsize=512)
def phrase_labels(phrase: str) -> tuple[tuple[str, float], ...]:
    """The AudioSet labels that a phrase names: those within LABEL_BAND of its best match and above
    LABEL_MIN_SIM, best first (empty when nothing is close enough)."""
    from audiomind.embedded import text

    labels, emb = _labels()
    sims = (text.embed(phrase_variants(phrase)) @ emb.T).max(axis=0)
    top_i = int(np.argmax(sims))
    top = float(sims[top_i])
    if top < LABEL_MIN_SIM:
        return ()
    band = LABEL_BAND / 2 if top >= 0.8 else LABEL_BAND  # a confident, specific match keeps its close kin only
    keep = [i for i in np.where(sims >= max(LABEL_MIN_SIM, top - band))[0]
            if i == top_i or (labels[i] not in PARENT_LABELS and "music" not in labels[i].lower())]
    # ('piano' must not be satisfied by any 'Music' or by a genre label)
    keep = sorted(keep, key=lambda i: -sims[i])[:8]
    return tuple((labels[i], round(float(sims[i]), 3)) for i in keep)


def is_speech_phrase(phrase: str) -> bool:
    """A phrase about speech: a speaking verb ("says", "talks", "voice") or quoted words."""
    return bool(SPEECH_VERBS.search(phrase)) or quoted_text(phrase) is not None


def presence(phrase: str, facts: ClipFacts) -> tuple[float, str]:
    """(how present the phrase is in the clip, 0..1, and which evidence says so)."""
    if is_speech_phrase(phrase):
        quoted = quoted_text(phrase)
        if quoted:
            r = word_recall(quoted, facts.transcript or "")
            return r, f"transcript recall of '{quoted}': {r:.2f} (transcript: '{(facts.transcript or '')[:80]}')"
        p = min(1.0, facts.speech_s / 1.0)
        return p, f"voice activity {facts.speech_s:.2f} s"
    labs = phrase_labels(phrase)
    if not labs:
        return 0.0, f"no AudioSet class is close to '{phrase}'"
    best, why = 0.0, ""
    for lab, sim in labs:
        s = facts.strength(lab)
        if s > best:
            best, why = s, f"{lab} (similarity {sim:.2f}) strength {s:.2f}"
    return best, why or f"none of {', '.join(lab for lab, _ in labs[:3])} detected"


def quoted_text(s: str) -> str | None:
    m = re.search(r"[\"\u201c]([^\"\u201d]{2,})[\"\u201d]", s) or re.search(
        r"(?:^|(?<=[\s:,]))'([^']{2,})'(?=$|[\s.,;:!?])", s)
    return m.group(1).strip() if m else None


def words_of(s: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", (s or "").lower())


def word_recall(expected: str, heard: str) -> float:
    """Share of the expected words found in order (difflib matching blocks over word lists)."""
    e, h = words_of(expected), words_of(heard)
    if not e:
        return 0.0
    sm = difflib.SequenceMatcher(a=e, b=h, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks()) / len(e)


def transcript_similarity(a: str | None, b: str | None) -> float:
    wa, wb = words_of(a or ""), words_of(b or "")
    if not wa and not wb:
        return 1.0
    return difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).ratio()


def spans(f: ClipFacts, labels: set[str] | list[str]) -> list[tuple[float, float]]:
    """Time spans of the YAMNet events of any of `labels` in a clip."""
    return [(float(e["start_s"]), float(e["end_s"])) for e in f.events if e.get("label") in set(labels)]


def overlaps(a: list[tuple[float, float]], b: list[tuple[float, float]], min_share: float = 0.5) -> bool:
    """Does any span of `a` overlap any span of `b` by at least `min_share` of the shorter one?"""
    for s0, e0 in a:
        for s1, e1 in b:
            inter = min(e0, e1) - max(s0, s1)
            if inter > 0 and inter >= min_share * max(1e-6, min(e0 - s0, e1 - s1)):
                return True
    return False


def envelope(sp: list[tuple[float, float]], pad: float = 0.5) -> tuple[float, float] | None:
    """The time region covering all spans (padded), or None without spans."""
    if not sp:
        return None
    return min(a for a, _ in sp) - pad, max(b for _, b in sp) + pad


def inside(sp: list[tuple[float, float]], env: tuple[float, float] | None, share: float = 0.5) -> bool:
    """Do the spans lie mostly (>= share of their total length) inside the region?"""
    if env is None or not sp:
        return False
    total = sum(max(0.0, b - a) for a, b in sp) or 1e-6
    inter = sum(max(0.0, min(b, env[1]) - max(a, env[0])) for a, b in sp)
    return inter / total >= share


def merge_similar_labels(labels: list[str], threshold: float = 0.7) -> list[str]:
    """Keep the first of each group of near-synonymous labels (Telephone / Telephone bell ringing)."""
    from audiomind.embedded import text

    kept: list[str] = []
    for lab in labels:
        if kept and float((text.embed([lab]) @ text.embed(kept).T).max()) >= threshold:
            continue
        kept.append(lab)
    return kept


def describe_label(label: str) -> str:
    """A caption-friendly form of an AudioSet label ('Crumpling, crinkling' -> 'crumpling')."""
    return label.split(",")[0].strip().lower()


def clip_caption(f: ClipFacts, max_labels: int = 4) -> str:
    """A one-sentence caption of a clip from its facts (the cascade's 'description' of one clip)."""
    parts = []
    labels = merge_similar_labels([lab for lab in f.present_labels() if lab not in SPEECH_LABELS])[:max_labels]
    if f.has_speech:
        parts.append(f"speech saying '{_short(f.transcript)}'" if f.transcript else "speech")
    parts += [describe_label(lab) for lab in labels]
    if not parts:
        return "near silence" if (f.rms_dbfs or -100) < -50 else "unidentified sound"
    return _join(parts)


def _short(s: str | None, n: int = 12) -> str:
    w = (s or "").strip().split()
    return " ".join(w[:n]) + (" ..." if len(w) > n else "")


def _join(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
