"""What the voice is: male or female, present or absent, on which side, fast or slow, in which language."""

from __future__ import annotations

from audiomind.language import claims
from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import LANGUAGES, language_of
from audiomind.reasoning.facts import Facts, Span, Word, _median_pitch
from audiomind.reasoning.verifiers.base import VerifierResult, _result, declare

# Documented thresholds
NORMAL_SYL_PER_S = 4.6   # ordinary read English: about 4.6 syllables and 2.7 words per second of voiced time
NORMAL_WORDS_PER_S = 2.7
FAST_RATIO = 1.25        # (syllable ratio + word ratio) / 2 at or above this is fast speech
SLOW_RATIO = 0.8         # at or below this is slow speech
MALE_MAX_HZ = 155.0    # adult male f0 typically 85-155 Hz, female 165-255 Hz
FEMALE_MIN_HZ = 170.0
SIDE_DB = 3.0          # a channel this much louder places the source on its side


def _gender(hz: float | None) -> str | None:
    if hz is None:
        return None
    return "male" if hz <= MALE_MAX_HZ else "female" if hz >= FEMALE_MIN_HZ else None


def verify_gender(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Male or female voice from the median f0 of the speech (of the first turn for 'who speaks first')."""
    tags = [claims.gender(c) for c in a.choices]
    if sum(t is not None for t in tags) < 2 or f.pitch is None or not f.pitch.contour:
        return None
    order = "first" if a.asks("order_first") else "last" if a.asks("order_last") else None
    segs = f.speech.segments if f.speech is not None else []
    turns = f.speakers.turns if f.speakers is not None and f.speakers.turns else []
    spans = turns or segs
    # a voice is where words are heard: a span without recognised words (a tone or an instrument that voice
    # activity or a speaker cluster took in) is not a voice, and its pitch is not the voice's pitch
    transcript, contour = f.transcript, f.pitch.contour
    words = [w for w in (transcript.words if transcript is not None else []) if w.end_s > w.start_s]

    def worded(span: Span) -> list[Word]:
        if not words or transcript is None:
            return []
        return [w for w in transcript.words_in(span.start_s, span.end_s, pad_s=0.1) if w.end_s > w.start_s]

    def word_f0(ws: list[Word]) -> float | None:
        pts = sorted(h for t, h in contour if any(w.start_s <= t <= w.end_s for w in ws))
        return pts[len(pts) // 2] if len(pts) >= 3 else None

    if words and any(worded(s) for s in spans):
        spans = [s for s in spans if worded(s)]
    if order and spans:
        span = spans[0] if order == "first" else spans[-1]
        ws = worded(span)
        hz = (word_f0(ws) if ws else None) or span.pitch_hz or _median_pitch(contour, span.start_s, span.end_s)
        start = ws[0].start_s if ws else span.start_s
        what = f"the {order} voice ({start:.2f}-{span.end_s:.2f} s{', where words are heard' if ws else ''})"
    else:
        pts = [h for t, h in contour if not segs or any(s.start_s <= t <= s.end_s for s in segs)]
        hz = (word_f0(words) if words else None) or (sorted(pts)[len(pts) // 2] if len(pts) >= 3 else None)
        what = "the speech"
    g = _gender(hz)
    if g is None or hz is None:
        return None
    speech_present = f.speech is not None and f.speech.speech_s >= 0.3
    supports = [(1.0 if t == g else -1.0) if t else (-1.0 if none and speech_present else 0.0)
                for t, none in zip(tags, a.choices_with("nobody"))]
    margin = (MALE_MAX_HZ - hz) if g == "male" else (hz - FEMALE_MIN_HZ)
    reason = f"median f0 of {what} is {hz:.0f} Hz: a {g} voice by the documented bands (male <= {MALE_MAX_HZ:g} Hz, female >= {FEMALE_MIN_HZ:g} Hz)"
    fit = max(a.fit("gender"), 0.7)
    return _result("voice_gender", a, fit, 0.85 if margin >= 20 else 0.65, supports, [""] * len(tags), reason,
                   f.pitch.evidence_ids + (f.speech.evidence_ids if f.speech else []))


def verify_presence(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Choices that assert absence ('There is no speech', 'Nobody speaks', 'Silence') against what was measured."""
    absent = a.choices_with("nobody")
    if not any(absent):
        return None
    speech = f.speech is not None and f.speech.speech_s >= 0.5
    sound = (f.events is not None and f.events.count > 0) or speech
    supports = []
    for about_speech, neg in zip(a.choices_with("speech_absent"), absent):
        if not neg:
            supports.append(0.0)
            continue
        present = speech if about_speech else sound
        supports.append(-1.0 if present else 0.6)
    ids = f.ids("speech", "events")
    reason = (f"speech measured: {f.speech.speech_s:.2f} s (VAD)" if f.speech else "no VAD on record") + (
        f"; {f.events.count} sound event(s)" if f.events else "")
    return _result("presence", a, 0.9, 0.9, supports, [""] * len(supports), reason, ids)


def verify_side(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    sides = [claims.side(c) for c in a.choices]
    if sum(s is not None for s in sides) < 2 or f.channels is None:
        return None
    bal = f.channels.balance_db
    if bal is None:
        truth = "center"
        reason = "the clip is mono: no side can be heard"
    else:
        truth = "left" if bal >= SIDE_DB else "right" if bal <= -SIDE_DB else "center"
        reason = f"left minus right level {bal:+.1f} dB (a side needs >= {SIDE_DB:g} dB)"
    supports = [0.0 if s is None else (1.0 if s == truth else -1.0) for s in sides]
    # side words in the choices make this a question about where the sound is, unless the reading says the
    # question asks what is said ('which position does the voice announce?')
    fit = a.fit("side") if a.frame is not None and a.frame.about_speech else max(a.fit("side"), 0.6)
    return _result("stereo_side", a, fit, 0.9 if bal is not None and abs(bal) >= 6 else 0.7,
                   supports, [""] * len(sides), reason, f.channels.evidence_ids)


def verify_rate_absolute(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Fast or slow speech from syllables per voiced second (documented thresholds)."""
    labels = [claims.pace(c) for c in a.choices]
    if sum(x is not None for x in labels) < 2 or f.speech_rate is None or a.fit("rate_compare") > a.fit("rate_absolute") + 0.2:
        return None
    sr = f.speech_rate
    # relative to ordinary English (4.6 syllables/s, 2.7 words/s of voiced time): fast >= 1.25x, slow <= 0.8x
    z = (sr.syllables_per_s / NORMAL_SYL_PER_S + sr.words_per_s / NORMAL_WORDS_PER_S) / 2
    truth = "fast" if z >= FAST_RATIO else "slow" if z <= SLOW_RATIO else "normal"
    supports = []
    for x in labels:
        if x is None:
            supports.append(0.0)
        elif truth != "normal" or x == "normal":
            supports.append(1.0 if x == truth else -1.0)
        else:  # between the bands: lean to the nearer side, weakly
            supports.append(0.3 if x == ("fast" if z >= 1.0 else "slow") else -0.3)
    margin = min(abs(z - FAST_RATIO), abs(z - SLOW_RATIO))
    reason = (f"{sr.syllables} syllables ({sr.words} words) in {sr.voiced_s:.2f} s of voiced time = "
              f"{sr.syllables_per_s:.2f} syllables/s, {sr.words_per_s:.2f} words/s: {z:.2f}x ordinary speech "
              f"(fast >= {FAST_RATIO:g}x, slow <= {SLOW_RATIO:g}x)")
    return _result("speech_rate", a, max(a.fit("rate_absolute"), 0.6), 0.85 if margin >= 0.12 else 0.6, supports,
                   [""] * len(labels), reason, sr.evidence_ids)


def verify_language(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """The spoken language, as multilingual Whisper detects it among the languages the choices name (its
    detector's probabilities restricted to those candidates, so a synthetic or accented voice that Whisper
    half-hears as another language is still compared fairly)."""
    lang = f.values.get("language")
    if lang is None:
        return None
    code, prob = str(lang.value), lang.detail.get("probability")
    candidates: dict[str, float] = lang.detail.get("candidates") or {}
    names = [language_of(ch) for ch in a.choices]
    if sum(n is not None for n in names) < 2:
        return None
    offered = {n: candidates.get(n, 1.0 if n == code else 0.0) for n in names if n is not None}
    best = max(offered, key=lambda k: offered[k])
    total = sum(offered.values())
    share = offered[best] / total if total > 0 else 0.0
    if offered[best] <= 0:
        return None
    supports = [0.0 if n is None else (1.0 if n == best else -1.0 if share >= 0.8 else -0.3) for n in names]
    reason = (f"multilingual Whisper detected {code!r} (p={prob}); among the offered languages "
              + ", ".join(f"{LANGUAGES.get(k, k)} {v:.3f}" for k, v in sorted(offered.items(), key=lambda kv: -kv[1]))
              + f": {LANGUAGES.get(best, best)} has {share:.0%} of their probability")
    # Whisper's own top language outside the offered ones means it heard the voice poorly: no confident answer
    reliability = 0.85 if share >= 0.8 and best == code else 0.55 if share >= 0.8 else 0.5
    return _result("language", a, max(a.fit("language"), 0.7), reliability, supports, [""] * len(supports), reason,
                   lang.evidence_ids)


declare("voice_gender", function="reads a male or female voice from the median pitch of the speech",
        supports=["whether the speaker is a man or a woman", "the gender of the first speaker"],
        not_for=["who the speaker is by name", "what the speaker says", "how old the speaker is"],
        examples=["Is the speaker male or female?", "Is it a man or a woman talking?",
                  "What is the gender of the voice?", "Who speaks first, a man or a woman?"])
declare("presence", function="checks choices that claim nothing is there against what was measured",
        supports=["whether anyone speaks at all", "whether the clip is silent"],
        not_for=["what is said", "how many people speak"],
        examples=["Is anyone speaking?", "Is there any speech in the clip?", "Is the recording silent?",
                  "Does anybody talk?"])
declare("stereo_side", function="compares the level of the left and right channels",
        supports=["which side the sound comes from", "whether the sound is on the left or right"],
        not_for=["whether the sound moves from one side to the other", "how far away it is"],
        examples=["Which side is the sound coming from?", "Is the voice on the left or the right?",
                  "From which channel do you hear the beep?", "Is the sound panned left or right?"])
declare("speech_rate", function="reads fast or slow speech from syllables per voiced second",
        supports=["whether the speaker talks fast or slowly", "the pace of the speech"],
        not_for=["which of two utterances is faster", "the tempo of music"],
        examples=["Is the speaker talking quickly or slowly?", "How fast is the speech?",
                  "Is the pace of speaking fast, normal or slow?", "Does the person speak rapidly?"])
declare("language", function="detects the spoken language among those the choices name",
        supports=["which language is spoken"],
        not_for=["what is said", "where the speaker is from"],
        examples=["What language is spoken?", "Which language does the speaker use?",
                  "In what language is the message?", "Is the speaker talking in French or in German?"])
