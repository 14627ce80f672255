"""Rule verification of rubric items: each item is checked against the evidence that can see it, read
through the one reader layer (`audiomind.reasoning.facts`):

- speech present: voice activity (VAD);
- speech content: the transcript (word recall, numbers normalised);
- voice gender: median f0 (pitch contour) over the words' span (ASR word times), the n-th speaker turn, or
  the speech, against the documented bands of `audiomind.reasoning.verifiers` (male <= 155 Hz, female
  >= 170 Hz); between the bands the pitch cannot tell, and the item says so (p = 0.5, unverifiable);
- sound classes: tags over onset-aligned windows of each separate non-speech sound (count_events bursts
  outside voice activity), `evidence.identify`; the clip-level tags may confirm a sound too (one under
  the speech);
- order: onsets of located sources (ASR word times / VAD / speaker turns for speech, the sound's own
  segment or tag events for sounds);
- counts: the separate sounds that belong to the phrase (count_events);
- tempo (tempo tool), loudness trend (loudness tool), speaking rate (ASR over VAD).
Each measurement is mapped to p(yes) by a stated curve. An item no tool can verify (emotion, style, a
sound class the tags neither confirm nor contradict, an order between sounds that cannot be told apart)
gets p = 0.5 and `verifiable = False`, with the reason; it is never a confident no.

Separate sounds are shared out among the rubric's sound phrases: each phrase first takes the sound that
fits it best (highest identity p; a contradicted sound is never taken), then any sound left goes to the
phrase it fits best. A phrase left without a sound, and not confirmed by the clip-level tags either, is
absent (p = 0.05 when there is no sound besides speech at all, 0.1 when the sounds present went to
phrases they fit better).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeSession
from audiomind.judges.rubric.decompose import RubricItem
from audiomind.reasoning.facts import Facts, Span
from audiomind.reasoning.verifiers import FEMALE_MIN_HZ, MALE_MAX_HZ
from audiomind.state import ToolCallRequest
from audiomind.tools.base import typed_output
from audiomind.tools.music.pitch import PitchOutput

GENDER_MID_HZ = (MALE_MAX_HZ + FEMALE_MIN_HZ) / 2
MAX_SEGMENTS = 16


class ItemVerdict(BaseModel):
    item_id: int
    question: str
    verdict: Literal["yes", "no", "unknown"]
    p_yes: float
    source: Literal["logprobs", "verdict", "rules"]
    explanation: str = ""
    verifiable: bool = Field(True, description="False: no tool could verify the item (p = 0.5, not scored)")


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def _p(x: float) -> float:
    return round(min(0.98, max(0.02, x)), 4)


class Placement(BaseModel):
    """Where a source is: onset (s) and how it was found, or why it was not."""

    onset_s: float | None = None
    spans: list[Span] = Field(default_factory=list)
    how: str = ""
    status: Literal["located", "absent", "ambiguous"] = "located"


class Scene(BaseModel):
    """What the rule verifier reads: the clip's facts, its separate non-speech sounds (sources: runs of
    bursts that sound alike, each burst tagged over a window that starts at its onset), and how the rubric's
    sound phrases share those sources out."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    facts: Facts
    bursts: list[Span] = Field(default_factory=list, description="count_events bursts outside speech")
    sources: list[list[int]] = Field(default_factory=list, description="source -> its bursts")
    identities: dict[str, list[ev.Identity]] = Field(default_factory=dict, description="phrase -> per source")
    owner: list[str | None] = Field(default_factory=list, description="source -> the phrase it went to")
    tied: list[bool] = Field(default_factory=list, description="source fits two phrases alike")
    span_f0: dict[str, float | None] = Field(
        default_factory=dict, description="'start-end' -> median f0 (Hz) of a pitch call over that speech span")
    audio_path: str | None = Field(None, description="the clip (for the judge's own onset count)")
    word_fits: dict[str, Any] = Field(
        default_factory=dict, description="quoted words -> wordfit.WordFit (the quote scored against the audio)")
    sequenced: list[tuple[str, str]] = Field(
        default_factory=list, description="pairs of sound phrases an order item puts one after the other")

    @property
    def segments(self) -> list[Span]:
        """One span per source (first onset to last end)."""
        return [Span(start_s=self.bursts[b[0]].start_s, end_s=self.bursts[b[-1]].end_s) for b in self.sources]

    def segs_of(self, phrase: str) -> list[int]:
        return [i for i, o in enumerate(self.owner) if o == phrase]

    def bursts_of(self, phrase: str) -> list[int]:
        return [b for i in self.segs_of(phrase) for b in self.sources[i]]


# ---------------------------------------------------------------- what to measure


def sound_phrases(items: list[RubricItem]) -> list[str]:
    """The sound phrases of the kept items (sound, count and order locators), in order of mention."""
    out: list[str] = []
    for it in items:
        if not it.kept:
            continue
        c = it.check
        if c.get("kind") == "absent":  # measured, but it takes no sound: it is one that must not be there
            continue
        locs = [c] if c.get("kind") in ("sound", "count") else [c.get("first") or {}, c.get("second") or {}]
        for loc in locs:
            ph = loc.get("phrase")
            if ph and (loc.get("kind") in ("sound", "count") or c.get("kind") == "order") and ph not in out:
                out.append(ph)
    return out


def measure(session: JudgeSession, facts: Facts, items: list[RubricItem]) -> Scene:
    """The extra measurements the items need (onset-aligned tags of each separate sound; pitch for gender;
    speaker turns for unquoted multi-speaker items; tempo), then the scene."""
    kinds = {it.check.get("kind") for it in items if it.kept}
    speech_locs = [loc for it in items if it.kept and it.check.get("kind") == "order"
                   for loc in (it.check["first"], it.check["second"]) if loc.get("kind") == "speech"]
    reqs = []
    if "gender" in kinds and facts.speech_segments and session.tool_available("pitch"):
        reqs.append(ToolCallRequest(tool="pitch", arguments={"artifact": "a0", "fmin_hz": 60.0, "fmax_hz": 400.0},
                                    reason="voice gender: f0 contour over the speech"))
        # the contour is subsampled (<= 100 points over the clip): each quoted span gets its own pitch call
        for it in items:
            if it.kept and it.check.get("kind") == "gender" and it.check.get("words"):
                span = _word_span(it.check["words"], facts)
                if span is not None and span[1] - span[0] >= 0.2:
                    reqs.append(ToolCallRequest(tool="pitch", arguments={
                        "artifact": "a0", "start_s": round(span[0], 3), "end_s": round(span[1], 3), "fmin_hz": 60.0,
                        "fmax_hz": 400.0}, reason=f"voice gender of '{it.check['words']}': f0 over its words"))
    multi = any(loc.get("nth", 0) >= 1 and not loc.get("words") for loc in speech_locs) or any(
        it.check.get("nth", 0) >= 1 and not it.check.get("words") for it in items if it.check.get("kind") == "gender")
    if multi and session.tool_available("speaker_count"):
        reqs.append(ToolCallRequest(tool="speaker_count", arguments={"artifact": "a0"},
                                    reason="several unquoted speakers: speaker turns"))
    if "tempo" in kinds and session.tool_available("tempo"):
        reqs.append(ToolCallRequest(tool="tempo", arguments={"artifact": "a0"}, reason="tempo items: beats per minute"))
    if reqs:
        session.run_tools(reqs, "rubric items need pitch / speaker turns / tempo")
    bursts = facts.nonspeech_events()
    while len(bursts) > MAX_SEGMENTS:  # merge the closest pair
        gaps = [bursts[i + 1].start_s - bursts[i].end_s for i in range(len(bursts) - 1)]
        i = gaps.index(min(gaps))
        bursts[i:i + 2] = [bursts[i].model_copy(update={"end_s": bursts[i + 1].end_s})]
    phrases = sound_phrases(items)
    missing = [it.check["phrase"] for it in items if it.kept and it.check.get("kind") == "absent"
               and it.check["phrase"] not in phrases]
    if bursts and (phrases or missing):
        ev.tag_windows(session, "a0", [ev.onset_window(s.start_s, s.end_s, facts.duration_s) for s in bursts],
                       "sound items: tags over windows that start at each separate sound's onset")
    facts = ev.read(session, "a0")
    windows = [facts.tags.window(*ev.onset_window(s.start_s, s.end_s, facts.duration_s)) if facts.tags else None
               for s in bursts]
    # a burst whose own window the tagger hears as silence (a click, a tail) is no separate sound
    keep = [i for i, w in enumerate(windows) if not ev.hears_silence(w)]
    bursts, windows = [bursts[i] for i in keep], [windows[i] for i in keep]
    scene = Scene(facts=facts, bursts=bursts, sources=group_sources(bursts, windows))
    scene.sequenced = [(it.check["first"]["phrase"], it.check["second"]["phrase"]) for it in items
                       if it.kept and it.check.get("kind") == "order"
                       and it.check["first"].get("phrase") and it.check["second"].get("phrase")]
    scene.word_fits = _word_fits(session, facts, items)
    try:
        scene.audio_path = session.state.artifact("a0").path
    except Exception:  # noqa: BLE001, S110 - a session without the source artifact: no audio path
        pass
    for call in ev.record(session).successful_calls("pitch"):
        a = call.arguments or {}
        if a.get("artifact", "a0") == "a0" and a.get("start_s") is not None and a.get("end_s") is not None:
            pitch = typed_output(call.output, PitchOutput)
            scene.span_f0[f"{float(a['start_s']):.3f}-{float(a['end_s']):.3f}"] = pitch.median_f0_hz if pitch else None
    events = facts.tags.events if facts.tags is not None else []
    for ph in phrases + missing:
        per = []
        for src in scene.sources:
            a, b = bursts[src[0]].start_s, bursts[src[-1]].end_s
            over = [e for e in events if min(e.end_s, b) - max(e.start_s, a) >= 0.5 * min(e.length_s, b - a, 1.0)]
            ids = [ev.identify(ph, windows[k], speech_share=ev.speech_share(facts, bursts[k].start_s, bursts[k].end_s),
                               events=over) for k in src]
            per.append(max(ids, key=lambda x: x.p))
        scene.identities[ph] = per
    _share_out(scene, phrases)
    return scene


def quoted_words(items: list[RubricItem]) -> list[str]:
    """Every quoted sentence the kept items name (words, gender and order items)."""
    out: list[str] = []
    for it in items:
        if not it.kept:
            continue
        c = it.check
        for w in [c.get("words")] + [(c.get(k) or {}).get("words") for k in ("first", "second")]:
            if w and w not in out:
                out.append(w)
    return out


def _word_fits(session: JudgeSession, f: Facts, items: list[RubricItem]) -> dict[str, Any]:
    """Quotes the transcript does not plainly contain, scored against the audio (`wordfit`)."""
    from audiomind.judges import wordfit

    if f.transcript is None or not f.speech_segments:
        return {}
    try:
        path = session.state.artifact("a0").path
    except Exception:  # noqa: BLE001
        return {}
    words = [(w.text, w.start_s, w.end_s) for w in f.transcript.words]
    out: dict[str, Any] = {}
    for q in quoted_words(items):
        if ev.word_recall(q, f.text or "") >= 0.999:
            continue
        wf = wordfit.fit(path, q, words, f.duration_s)
        if wf is not None:
            out[q] = wf
    return out


SAME_SOURCE_GAP_S = 0.8
SAME_SOURCE_COS = 0.6


def group_sources(bursts: list[Span], windows: list[Any]) -> list[list[int]]:
    """Runs of bursts that sound alike are one source (the rings of one phone, the strokes of one bell): a
    burst joins the previous one when the gap is at most SAME_SOURCE_GAP_S and their onset-aligned tags agree
    (cosine of the label strengths >= SAME_SOURCE_COS, or neither names anything)."""
    def vec(w: Any) -> dict[str, float]:
        return dict(ev.heard_labels(w, n=10)) if w is not None else {}

    def cos(a: dict[str, float], b: dict[str, float]) -> float:
        if not a and not b:
            return 1.0
        num = sum(a.get(k, 0.0) * b.get(k, 0.0) for k in set(a) | set(b))
        den = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
        return num / den if den else 0.0

    out: list[list[int]] = []
    for i, s in enumerate(bursts):
        if out:
            j = out[-1][-1]
            if s.start_s - bursts[j].end_s <= SAME_SOURCE_GAP_S and cos(vec(windows[j]), vec(windows[i])) >= SAME_SOURCE_COS:
                out[-1].append(i)
                continue
        out.append([i])
    return out


def _share_out(scene: Scene, phrases: list[str], tie: float = 0.08) -> None:
    """Confirmed sounds go to the phrase they confirm; then each phrase still without a sound takes the
    unclaimed one that fits it best (never a contradicted one); the rest go where they fit best."""
    n = len(scene.sources)
    owner: list[str | None] = [None] * n
    tied = [False] * n
    if not phrases:
        scene.owner, scene.tied = owner, tied
        return
    for i in range(n):
        best = max(phrases, key=lambda ph: scene.identities[ph][i].p)
        if scene.identities[best][i].verdict == "confirmed":
            owner[i] = best
    pairs = sorted(((scene.identities[ph][i].p, -k, ph, i) for k, ph in enumerate(phrases) for i in range(n)),
                   reverse=True)
    have = {o for o in owner if o}
    for p, _, ph, i in pairs:
        if p <= 0.3 or ph in have or owner[i] is not None:
            continue
        owner[i], have = ph, have | {ph}
    for i in range(n):
        if owner[i] is None:
            best = max(phrases, key=lambda ph: scene.identities[ph][i].p)
            if scene.identities[best][i].p > 0.3:
                owner[i] = best
    settled = {owner[i] for i in range(n) if owner[i] and scene.identities[owner[i]][i].verdict == "confirmed"}
    for i in range(n):  # (a phrase confirmed on a source of its own competes for no other)
        ps = sorted((scene.identities[ph][i].p for ph in phrases
                     if scene.identities[ph][i].p > 0.3 and (ph not in settled or owner[i] == ph)), reverse=True)
        tied[i] = len(ps) >= 2 and ps[0] - ps[1] < tie
    scene.owner, scene.tied = owner, tied


# ---------------------------------------------------------------- locating sources


def _word_span(words: str, f: Facts, scene: Scene | None = None) -> tuple[float, float] | None:
    """Where the quoted words are said (Whisper word times; else the transcript stretch the quote was
    scored in place of, when the audio fits the quote), or None."""
    if f.transcript is None or not f.transcript.words:
        return None
    wf = scene.word_fits.get(words) if scene is not None else None
    if wf is not None and wf.span is not None and wf.p >= 0.5 and ev.word_recall(words, f.text or "") < 0.5:
        return wf.span
    target = ev._norm_words(words)
    heard = [ev._norm_words(w.text) for w in f.transcript.words]
    best, span = 0.0, None
    for i in range(len(heard)):
        j = min(len(heard), i + len(target)) - 1
        window = " ".join(" ".join(x) for x in heard[i:j + 1])
        r = ev.word_recall(words, window)
        if r > best + 1e-9 and r >= 0.5:
            best, span = r, (f.transcript.words[i].start_s, f.transcript.words[j].end_s)
    return span


RELIABLE_WORD_P = 0.5  # a transcript whose words average a lower recogniser probability is no evidence of absence


def mean_word_p(f: Facts) -> float:
    ps = [w.probability for w in (f.transcript.words if f.transcript else []) if w.probability is not None]
    return sum(ps) / len(ps) if ps else 1.0


def transcript_reliable(f: Facts) -> bool:
    return mean_word_p(f) >= RELIABLE_WORD_P


def _turns(f: Facts) -> list[Span]:
    """Speaker turns in order of first appearance, one merged span per voice; VAD segments without them."""
    if f.speakers is not None and f.speakers.talking(f.speech_segments) >= 2:
        by: dict[str, list[Span]] = {}
        for t in sorted(f.speakers.turns, key=lambda s: s.start_s):
            by.setdefault(t.label or "?", []).append(t)
        return [Span(start_s=v[0].start_s, end_s=v[-1].end_s, label=k) for k, v in by.items()]
    return f.speech_segments


def _first_word(f: Facts) -> Span | None:
    """The first recognised word that lies in voice activity (its span), or None without word times."""
    if f.transcript is None:
        return None
    words = [w for s in f.speech_segments for w in f.transcript.words_in(s.start_s, s.end_s, pad_s=0.1)]
    w = min(words, key=lambda w: w.start_s, default=None)
    return None if w is None else Span(start_s=w.start_s, end_s=w.end_s)


def locate(loc: dict[str, Any], scene: Scene) -> Placement:
    f = scene.facts
    if loc.get("kind") == "speech":
        words = loc.get("words")
        if words:
            span = _word_span(words, f, scene)
            if span is not None:
                return Placement(onset_s=span[0], spans=[Span(start_s=span[0], end_s=span[1])],
                                 how=f"'{words}' is said at {span[0]:.2f}-{span[1]:.2f} s (ASR word times)")
            wf = scene.word_fits.get(words)
            if f.transcript is not None and f.text and transcript_reliable(f) and (wf is None or wf.p < 0.2):
                return Placement(status="absent", how=f"'{words}' is not in the transcript '{ev._short(f.text, 12)}'")
        nth = int(loc.get("nth", 0))
        turns = _turns(f) if nth else f.speech_segments
        first_word = _first_word(f)
        if not nth and first_word is not None:  # voice activity also fires on a laugh or a tone before the words
            return Placement(onset_s=first_word.start_s, spans=[first_word],
                             how=f"speech starts at {first_word.start_s:.2f} s (the first recognised word inside "
                                 "voice activity)")
        if len(turns) > nth:
            t = turns[nth]
            return Placement(onset_s=t.start_s, spans=[t], how=(f"speaker {nth + 1} starts at {t.start_s:.2f} s"
                                                                  if nth else f"speech starts at {t.start_s:.2f} s (VAD)"))
        if not f.speech_segments:
            return Placement(status="absent", how="no speech (VAD)")
        return Placement(status="ambiguous", how=f"speaker {nth + 1} cannot be told apart (turns: {len(turns)})")
    ph = loc.get("phrase", "")
    segs = scene.segs_of(ph)
    if segs:
        first = scene.segments[segs[0]]
        idn = scene.identities[ph][segs[0]]
        if any(scene.tied[i] for i in segs) and idn.verdict != "confirmed":
            return Placement(status="ambiguous", how=f"the sound at {first.start_s:.2f} s fits '{ph}' and another "
                                                     "named sound alike")
        rival = next((o for o in scene.identities if o != ph and scene.tied[segs[0]]
                      and scene.identities[o][segs[0]].verdict == "confirmed"), None)
        if rival is not None:  # both confirmed on it (a tuba and an oboe on one 'Brass instrument' tag): whose is open
            return Placement(status="ambiguous", how=f"the sound at {first.start_s:.2f} s is confirmed as '{ph}' and "
                                                     f"as '{rival}' alike")
        how = (f"{ph} at {first.start_s:.2f} s ({idn.verdict}: {idn.why})" if idn.verdict == "confirmed" else
               f"{ph} taken to be the separate sound at {first.start_s:.2f} s (the only one left for it; {idn.why})")
        return Placement(onset_s=first.start_s, spans=[scene.segments[i] for i in segs], how=how)
    labels = [lab for lab, _ in ev.phrase_labels(ph)]
    tag_sp = [s for s in f.tag_spans(labels) if (s.score or 0) >= ev.PRESENT]
    if tag_sp:
        return Placement(onset_s=min(s.start_s for s in tag_sp), spans=tag_sp,
                         how=f"{ph} tagged at {tag_sp[0].start_s:.2f} s (YAMNet events)")
    short = sound_outside_words(scene) if not scene.segments else None
    if short is not None:  # the one sound besides the words: where it is is known, what it is is not
        return Placement(onset_s=short[1], spans=[Span(start_s=short[1], end_s=short[1] + SHORT_SOUND_S)],
                         how=f"{ph} taken to be the only sound besides the words: {short[0]}")
    unheard = _unsettled_absence(ph, scene) if ph in scene.identities else None
    if unheard:
        return Placement(status="ambiguous", how=f"'{ph}' cannot be placed: {unheard}")
    return Placement(status="absent", how=_absent_why(ph, scene))


def _absent_why(ph: str, scene: Scene) -> str:
    if not scene.segments:
        return "no sound besides speech in the clip (every burst of energy is voice activity)"
    taken = [f"{scene.segments[i].start_s:.2f} s -> {scene.owner[i] or 'none'}" for i in range(len(scene.segments))]
    return f"no separate sound left for '{ph}' (sounds: {'; '.join(taken[:6])})"


# ---------------------------------------------------------------- the items


def _doubtful_voice(f: Facts) -> str:
    """Why the clip's voice activity may be no voice ('' when it is one): the tagger hears no speech and the
    speech recogniser finds no words, so the detector fired on something else (a synth bass, a pad)."""
    speech = max(f.strength(lab) for lab in ev.SPEECH_LABELS)
    words = len((f.text or "").split())
    if speech < 0.15 and words <= 1:
        return (f"the voice activity there may be no voice (speech tags {speech:.2f}, {words} word(s) recognised), "
                "so other sound may hide in it")
    return ""


def _unverifiable(why: str) -> tuple[float, str, bool]:
    return 0.5, why + ": p = 0.5, not scored", False


def verify(item: RubricItem, scene: Scene) -> tuple[float, str, bool]:
    """(p(yes), why, verifiable) for a rule item."""
    f = scene.facts
    reading = item.reading  # the typed check: one that does not validate is unverifiable, never a verdict
    if reading.kind == "unverifiable":
        return _unverifiable(f"no tool can verify this ({reading.why})")
    c = item.check
    kind = c.get("kind")
    if kind in ("speech_present", "no_speech"):
        p = _sig((f.speech_s - 0.3) / 0.1)  # 'there is speech' from the seconds of voice activity
        if kind == "speech_present":
            return _p(p), f"voice activity {f.speech_s:.2f} s; p = sigmoid((s - 0.3) / 0.1)", True
        return _p(1.0 - p), f"voice activity {f.speech_s:.2f} s; p = 1 - sigmoid((s - 0.3) / 0.1)", True
    if kind == "gender":
        return _gender(c, scene)
    if kind == "words":
        if f.transcript is None:
            if not f.speech_segments:
                return 0.05, "no speech to say the words (VAD)", True
            return _unverifiable("no transcript")
        r = ev.word_recall(c["words"], f.text or "")
        wf = scene.word_fits.get(c["words"])
        if wf is not None and r < 0.999:
            return _words_p(r, wf)
        if r < 0.65 and not transcript_reliable(f):
            return _unverifiable(f"{r:.0%} of the words heard, but the transcript '{ev._short(f.text, 12)}' is "
                                 f"unreliable (mean word probability {mean_word_p(f):.2f} < {RELIABLE_WORD_P})")
        why = f"{r:.0%} of the words heard in order (transcript: '{ev._short(f.text, 16)}'); p = sigmoid((recall - 0.65) / 0.08)"
        return _p(_sig((r - 0.65) / 0.08)), why, True
    if kind == "rate":
        if f.speech_rate is None:
            return _unverifiable("no transcript to time")
        w = f.speech_rate.words_per_s
        z = (w - 3.0) / 0.4
        p = _sig(z) if c.get("rate") == "fast" else _sig(-z)
        return _p(p), f"{w:.2f} words per second of speech (fast above ~3)", True
    if kind == "sound":
        return _sound(c["phrase"], scene)
    if kind == "absent":  # the other side of presence: as sure as the presence check is, or open
        p, why, ok = _sound(c["phrase"], scene)
        return (_p(1.0 - p), f"its presence: p = {p:.2f} ({why})", True) if ok else _unverifiable(
            f"its presence cannot be told ({why})")
    if kind == "count":
        return _count(c["phrase"], int(c["n"]), scene)
    if kind == "order":
        a, b = locate(c["first"], scene), locate(c["second"], scene)
        if a.status == "absent" or b.status == "absent":
            gone = a if a.status == "absent" else b
            return 0.1, f"one side does not occur: {gone.how}", True
        if a.onset_s is None or b.onset_s is None:
            return _unverifiable(f"cannot place both: {a.how}; {b.how}")
        return _p(_sig((b.onset_s - a.onset_s) / 0.3)), f"{a.how}; {b.how}", True
    if kind == "tempo":
        tv = f.values.get("tempo")
        if tv is None:
            return _unverifiable("no tempo measured")
        bpm = float(tv.value)
        if tv.detail.get("clear_beat") is False:
            return _unverifiable(f"tempo {bpm:.0f} BPM but no clear beat: the tempo cannot be told")
        z = (bpm - 105.0) / 10.0
        p = _sig(z) if c.get("tempo") == "fast" else _sig(-z)
        return _p(p), f"tempo {bpm:.0f} BPM (fast above ~105)" + (
            "" if tv.detail.get("clear_beat") is not False else "; no clear beat"), True
    if kind == "loudness":
        if f.loudness is None:
            return _unverifiable("no loudness measured")
        ok = f.loudness.trend == c.get("trend")
        return (0.9 if ok else 0.1), f"loudness trend: {f.loudness.trend} ({f.loudness.change_db} dB)", True
    return _unverifiable(f"no tool can verify this ({c.get('why', 'unsupported')})")


def _words_p(r: float, wf: Any) -> tuple[float, str, bool]:
    """The quote's fit to the audio (teacher-forced) with the transcript's word recall: both must say no for
    a confident no; a fit the transcript does not share stays short of a confident yes."""
    p_rec = _sig((r - 0.65) / 0.08)
    p = max(p_rec, 0.5 + 0.6 * (wf.p - 0.5)) if wf.p >= 0.5 else min(max(p_rec, wf.p), 0.5)
    return _p(p), (f"{r:.0%} of the words in the transcript (p {p_rec:.2f}); {wf.why()}; p = the recall's p, "
                   "raised toward 0.8 by a good fit, held at or below 0.5 by a poor one"), True


def _gender(c: dict[str, Any], scene: Scene) -> tuple[float, str, bool]:
    f = scene.facts
    if not f.speech_segments:
        return 0.05, "no speech (VAD)", True
    if f.pitch is None or not f.pitch.contour:
        return _unverifiable("no pitch measured")
    words, nth = c.get("words"), int(c.get("nth", 0))
    span = _word_span(words, f, scene) if words else None
    if span is not None:
        key = f"{round(span[0], 3):.3f}-{round(span[1], 3):.3f}"
        hz = scene.span_f0.get(key) if key in scene.span_f0 else f.median_pitch(*span)
        where = f"of '{words}' ({span[0]:.2f}-{span[1]:.2f} s" + (", its own pitch call)" if key in scene.span_f0 else ")")
    elif nth and len(_turns(f)) > nth:
        t = _turns(f)[nth]
        hz, where = f.median_pitch(t.start_s, t.end_s), f"of speaker {nth + 1} ({t.start_s:.2f}-{t.end_s:.2f} s)"
    else:
        segs = f.speech_segments
        pts = sorted(h for t, h in f.pitch.contour if any(s.start_s <= t <= s.end_s for s in segs))
        hz, where = (pts[len(pts) // 2] if len(pts) >= 3 else None), "over the speech"
    if hz is None:
        return _unverifiable(f"no voiced frames {where}")
    bands = f"male <= {MALE_MAX_HZ:.0f} Hz, female >= {FEMALE_MIN_HZ:.0f} Hz"
    if MALE_MAX_HZ < hz < FEMALE_MIN_HZ:
        return _unverifiable(f"median f0 {hz:.0f} Hz {where} lies between the documented bands ({bands})")
    z = (hz - GENDER_MID_HZ) / 5.0
    p = _sig(z) if c.get("gender") == "female" else _sig(-z)
    return _p(p), f"median f0 {hz:.0f} Hz {where}; bands {bands}", True


def _sound(ph: str, scene: Scene) -> tuple[float, str, bool]:
    f = scene.facts
    clip, clip_why = ev.presence(ph, f)
    if clip >= ev.PRESENT:
        return _p(0.5 + 0.45 * min(1.0, (clip - 0.05) / 0.25)), f"clip-level tags: {clip_why}", True
    segs = scene.segs_of(ph)
    if segs:
        best = max((scene.identities[ph][i] for i in segs), key=lambda x: x.p)
        i = segs[[scene.identities[ph][j] for j in segs].index(best)]
        at = f"the separate sound at {scene.segments[i].start_s:.2f} s"
        if best.verdict == "confirmed":
            return _p(best.p), f"{at}: {best.why}", True
        return _unverifiable(f"{at}: the tags neither confirm nor contradict '{ph}' ({best.why})")
    if not scene.segments:
        if f.speech_segments:
            bed = sound_between_words(scene)
            if bed:  # a bed under the voice makes no burst of its own: present, but what it is stays unheard
                other = _bed_is_other(ph, f)
                if other:
                    return 0.1, f"no separate sound; {bed}, but {other}", True
                return _unverifiable(f"no separate sound, but {bed}; the tags do not name it as '{ph}' ({clip_why})")
            doubt = _doubtful_voice(f)
            if doubt:  # the voice activity detector fires on music too: then nothing says the sound is missing
                return _unverifiable(f"no separate sound, but {doubt}; the tags do not name it as '{ph}' ({clip_why})")
            unheard = _unsettled_absence(ph, scene)
            if unheard:
                return _unverifiable(f"{unheard}; the tags do not name it as '{ph}' ({clip_why})")
            return 0.05, f"no sound besides speech (every burst of energy is voice activity); {clip_why}", True
        return 0.05, f"no sound event at all; {clip_why}", True
    contra = [scene.identities[ph][i] for i in range(len(scene.segments))]
    if all(x.verdict == "contradicted" for x in contra):  # as firmly as the least contradicted one is
        return _p(max(x.p for x in contra)), "every separate sound is something else: " + "; ".join(
            f"{scene.segments[i].start_s:.2f} s {x.why}" for i, x in enumerate(contra[:4])), True
    unheard = _unsettled_absence(ph, scene)
    if unheard:
        return _unverifiable(f"{unheard} ({clip_why})")
    return 0.1, _absent_why(ph, scene) + f"; {clip_why}", True


OPEN_MIN_P = 0.4
"""A sound that went to another phrase holds this one open only where its tags say nothing either way about this
one (identity p above this; below it they lean against it, e.g. an accordion heard where a siren is named)."""


def _unsettled_absence(ph: str, scene: Scene) -> str | None:
    """Why a phrase left without a separate sound cannot be called absent (None when it can):
    - a separate sound went to another phrase that its tags do not confirm either, and they do not contradict
      this one, and no order item puts the two apart in time: what the sound is (or what is mixed into it:
      birds under a horn) is open;
    - no separate sound at all, but a short sound outside the words made no burst of its own."""
    if not scene.segments:
        short = sound_outside_words(scene)
        return f"no separate sound, but {short[0]}" if short else None
    for i, seg in enumerate(scene.segments):
        own = scene.identities[ph][i]
        other = scene.owner[i]
        if own.p <= OPEN_MIN_P or other is None or other == ph:
            continue  # (the tags lean against this phrase there: no place for it)
        if (ph, other) in scene.sequenced or (other, ph) in scene.sequenced:
            continue  # one after the other: the other's sound cannot also be this one
        if scene.identities[other][i].verdict != "confirmed":
            return (f"no separate sound of its own, but the sound at {seg.start_s:.2f} s went to '{other}' without "
                    f"the tags confirming it ({scene.identities[other][i].why}), and they do not contradict '{ph}' "
                    "either: what it holds is open")
    return None


def _count(ph: str, n: int, scene: Scene) -> tuple[float, str, bool]:
    f = scene.facts
    segs = scene.bursts_of(ph)
    owned = scene.segs_of(ph)
    loose = [i for i in owned if scene.identities[ph][i].verdict != "confirmed"]
    lengths = sorted(scene.bursts[b].end_s - scene.bursts[b].start_s for b in segs)
    if len(owned) >= 2 and loose and lengths[0] > 0 and lengths[-1] > COUNT_LENGTH_RATIO * lengths[len(lengths) // 2]:
        # separate sources, not all confirmed as the phrase, and bursts unlike in length (strokes of one thing
        # are alike): the count may take in another sound ('four clicks count in a guitar riff': the riff too)
        return _unverifiable(f"the {len(segs)} bursts given to '{ph}' come from {len(owned)} separate sounds, "
                             f"{len(loose)} of them not confirmed as it, and last {lengths[0]:.2f}-{lengths[-1]:.2f} s "
                             "(unlike strokes of one thing): the count may take in another sound")
    if segs:
        heard = len(segs)
        where = "separate bursts of " + ph
    else:
        labels = [lab for lab, _ in ev.phrase_labels(ph)]
        env = ev.spans(f, labels)
        if not env or f.events is None:
            return (0.05, f"no {ph} heard to count", True) if not scene.segments else _unverifiable(
                f"the separate sounds cannot be attributed to '{ph}'")
        lo, hi = min(a for a, _ in env) - 0.5, max(b for _, b in env) + 0.5
        heard = sum(1 for e in f.nonspeech_events() if lo <= e.start_s <= hi)
        where = f"bursts within {lo:.1f}-{hi:.1f} s where {ph} is tagged"
    d = abs(heard - n)
    why = f"{heard} {where} (count_events)"
    if d and segs and scene.audio_path:
        # strokes that ring into each other are one burst of energy: count the onsets inside the phrase's bursts
        spans = [(scene.bursts[b].start_s, scene.bursts[b].end_s) for b in segs]
        onsets = onset_count(scene.audio_path, spans)
        if onsets is not None:
            why += f"; {onsets} onsets inside them (spectral flux)"
            if onsets == n:  # the two counts disagree and one matches: short of a confident yes
                return 0.75, why, True
            if onsets > heard:  # strokes merged into fewer bursts: the onsets are the finer count
                d = abs(onsets - n)
    return (0.9 if d == 0 else 0.3 if d == 1 else 0.05), why, True


COUNT_LENGTH_RATIO = 4.0  # a burst this many times longer than the median one is no stroke of the same thing
BED_MIN_DBFS = -50.0  # pauses at least this loud (median) hold a sound, not room tone or digital silence
BED_MAX_BELOW_SPEECH_DB = 30.0


def _pause_levels(scene: Scene) -> tuple[Any, Any, Any, float] | None:
    """(frame times, frame RMS dBFS, which frames are pauses around the words, the speech's median dBFS), or
    None when the clip cannot be read or has no speech or too little pause to tell."""
    f = scene.facts
    if not scene.audio_path or not f.speech_segments:
        return None
    try:
        import librosa
        import numpy as np

        from audiomind import audio as aio

        sr, hop = 16000, 256
        y = aio.load_cached(scene.audio_path, sr=sr).astype(np.float32)
        rms = librosa.feature.rms(y=y, frame_length=1024, hop_length=hop)[0]
    except Exception:  # noqa: BLE001 - an unreadable clip only means no bed is claimed
        return None
    t = np.arange(len(rms)) * hop / sr
    speech = np.zeros(len(rms), dtype=bool)
    # voice activity with no transcribed word in it is no speech here (VAD also fires on tuned instruments)
    worded = [seg for seg in f.speech_segments
              if f.transcript is None or not f.transcript.words or f.transcript.words_in(seg.start_s, seg.end_s)]
    for seg in worded or f.speech_segments:
        speech |= (t >= seg.start_s - 0.05) & (t <= seg.end_s + 0.05)
    pauses = ~speech
    if pauses.sum() * hop / sr < 0.25 or not speech.any():
        return None
    db = 20 * np.log10(np.maximum(rms, 1e-10))
    return t, db, pauses, float(np.median(db[speech]))


def sound_between_words(scene: Scene) -> str | None:
    """A sound under the voice (music, rain) that never stands alone: it makes no burst of its own, but it
    fills the pauses around and between the words. Returns how it was heard (the pauses' level against the
    speech's), or None when the pauses are silent (digital silence, room tone), too short to tell, or the clip
    cannot be read."""
    levels = _pause_levels(scene)
    if levels is None:
        return None
    sr, hop = 16000, 256
    _, db, pauses, speech_db = levels
    held = pauses & (db >= BED_MIN_DBFS) & (db >= speech_db - BED_MAX_BELOW_SPEECH_DB)
    held_s, pause_s = held.sum() * hop / sr, pauses.sum() * hop / sr
    if held_s < 0.3 or held_s < 0.25 * pause_s:
        return None
    return (f"{held_s:.1f} s of the {pause_s:.1f} s around the words hold a sound (at least {BED_MIN_DBFS:.0f} dBFS "
            f"and within {BED_MAX_BELOW_SPEECH_DB:.0f} dB of the speech's {speech_db:.0f} dBFS)")


SHORT_SOUND_S = 0.08  # a run of sounding frames this long outside the words is a sound of its own


def sound_outside_words(scene: Scene) -> tuple[str, float] | None:
    """A short sound outside the words that made no burst of its own (a quiet blip after the voice that the
    burst detector's threshold missed): a run of at least SHORT_SOUND_S of pause frames as loud as a bed would
    be (`sound_between_words`' levels). Returns how it was heard and its onset (s), or None (silent pauses, no
    clip)."""
    levels = _pause_levels(scene)
    if levels is None:
        return None
    t, db, pauses, speech_db = levels
    held = pauses & (db >= BED_MIN_DBFS) & (db >= speech_db - BED_MAX_BELOW_SPEECH_DB)
    frame_s = float(t[1] - t[0]) if len(t) > 1 else 0.016
    best, run, start, at = 0, 0, 0, 0
    for i, h in enumerate(held):
        run = run + 1 if h else 0
        if run == 1:
            start = i
        if run > best:
            best, at = run, start
    if best * frame_s < SHORT_SOUND_S:
        return None
    return (f"a sound of {best * frame_s:.2f} s outside the words at {float(t[at]):.2f} s (at least "
            f"{BED_MIN_DBFS:.0f} dBFS and within {BED_MAX_BELOW_SPEECH_DB:.0f} dB of the speech's {speech_db:.0f} dBFS) "
            "made no burst of its own"), float(t[at])


def _bed_is_other(ph: str, f: Any) -> str | None:
    """The clip's strongest tagged class (besides speech) when it is clearly of another branch of the AudioSet
    ontology than the phrase (a music bed for 'waves'); None when they may be one thing."""
    anchors = ev.phrase_anchors(ph)
    present = f.present_labels(0.5, ev.SPEECH_LABELS | ev.GENERIC)
    if not anchors or not present:
        return None
    top, strength = next(iter(present.items()))
    if ev.related(ph, top, anchors):  # (another name for it, or its kin in the ontology)
        return None
    return f"the clip's tags name it {top} ({strength:.2f}), no kin of {', '.join(anchors[:2])}"


def onset_count(path: str, spans: list[tuple[float, float]]) -> int | None:
    """Onsets (librosa spectral-flux onset detection) inside the spans of a clip; None when it cannot run."""
    try:
        import librosa
        import numpy as np

        from audiomind import audio as aio
        from audiomind.embedded.dsp import numba_compiles

        y = aio.load_cached(path, sr=16000).astype(np.float32)
        total = 0
        for a, b in spans:
            seg = y[max(0, int((a - 0.05) * 16000)): int((b + 0.05) * 16000)]
            if len(seg) < 2048:
                total += 1
                continue
            with numba_compiles("rubric.onset_count"):  # numba's cache, written by one process at a time
                on = librosa.onset.onset_detect(y=seg, sr=16000, hop_length=256, backtrack=False, units="time")
            total += max(1, len(on))
        return total
    except Exception:  # noqa: BLE001
        return None
