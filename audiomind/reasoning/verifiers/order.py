"""Which source comes first or last, and whether a sound comes before or after the voice."""

from __future__ import annotations

from audiomind.language import claims
from audiomind.language.analysis import QuestionAnalysis
from audiomind.reasoning.facts import Facts, Span
from audiomind.reasoning.verifiers.base import VerifierResult, _label_choice_similarity, _result, declare


def verify_order(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Which named source is heard first / last: time-stamped tags (and VAD for speech), each label given to
    the choice closest to it in meaning."""
    if a.fit("order") < 0.3 or not a.asks("order_cue"):
        return None  # 'what sound is heard?' names no order, however close its meaning to 'which comes first?'
    last = a.asks("asks_latest") and not a.asks("first_word")
    spans: list[Span] = list(f.tags.events) if f.tags is not None else []
    if f.speech is not None:
        spans += [s.model_copy(update={"label": "Speech", "score": 0.9}) for s in f.speech.segments]
    labelled = [s for s in spans if s.label]
    if not labelled:
        return None
    labels = sorted({s.label for s in labelled if s.label})
    sim = _label_choice_similarity(labels, a.choices)
    owner: dict[str, int] = {}
    for j, label in enumerate(labels):
        col = [sim[i][j] for i in range(len(a.choices))]
        best = max(range(len(col)), key=lambda i: col[i])
        ranked = sorted(col, reverse=True)
        if ranked[0] >= 0.4 and (len(ranked) == 1 or ranked[0] - ranked[1] >= 0.08):
            owner[label] = best
    when: dict[int, float] = {}
    for s in labelled:
        i = owner.get(s.label) if s.label else None
        if i is None or (s.score or 0) < 0.15:
            continue
        t = s.end_s if last else s.start_s
        when[i] = max(when.get(i, t), t) if last else min(when.get(i, t), t)
    # a voice and one other named sound ('the chime or the voice?') whose name no tag matches: the bursts
    # outside speech are that sound
    voice_named, nobody = a.choices_with("voice_word"), a.choices_with("nobody")
    voiced = [i for i in range(len(a.choices)) if voice_named[i]]
    others = [i for i in range(len(a.choices)) if i not in voiced and not nobody[i]]
    loose = f.nonspeech_events()
    if len(voiced) == 1 and len(others) == 1 and others[0] not in when and loose and f.speech_segments:
        when[voiced[0]] = f.speech_segments[-1].end_s if last else f.speech_segments[0].start_s
        when[others[0]] = max(e.end_s for e in loose) if last else min(e.start_s for e in loose)
    if len(when) < 2:
        return None
    ordered = sorted(when.items(), key=lambda kv: kv[1], reverse=last)
    gap = abs(ordered[0][1] - ordered[1][1])
    supports = [0.0] * len(a.choices)
    supports[ordered[0][0]] = 1.0 if gap >= 0.3 else 0.3
    for i, _ in ordered[1:]:
        supports[i] = -0.8 if gap >= 0.3 else 0.0
    reason = "heard " + ", ".join(f"{a.choices[i]!r} {'until' if last else 'from'} {t:.2f} s" for i, t in ordered)
    ids = f.ids("tags", "speech")
    return _result("event_order", a, a.fit("order"), 0.75 if gap >= 0.5 else 0.5, supports, [""] * len(supports),
                   reason, ids)


def verify_relative_order(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """'Is the chime before or after the announcement?' with choices that state a relation ('Ahead of it',
    'Afterwards'): the non-speech sounds against the voice, in time. The subject is the thing the relation
    word does not point at ('X ahead of the message' -> X is the sound)."""
    rel = [claims.relation(c) for c in a.choices]
    if sum(r is not None for r in rel) < 2 or len({r for r in rel if r}) < 2:
        return None
    subject = claims.relation_subject(a.question)
    if subject is None:
        return None
    speech = f.speech_segments
    words = f.transcript.words if f.transcript is not None else []
    if words:
        speech = [Span(start_s=words[0].start_s, end_s=words[-1].end_s)]
    sounds = f.nonspeech_events()
    if not speech or not sounds:
        return None
    s0, s1 = speech[0].start_s, speech[-1].end_s
    before = [e for e in sounds if e.end_s <= s0 + 0.2]
    after = [e for e in sounds if e.start_s >= s1 - 0.2]
    if bool(before) == bool(after):
        return None  # sounds on both sides (or overlapping the voice): no single relation
    sound_rel = "before" if before else "after"
    truth = sound_rel if subject == "sound" else ("after" if sound_rel == "before" else "before")
    supports = [0.0 if r is None else (1.0 if r == truth else -1.0) for r in rel]
    where = ", ".join(f"{e.start_s:.2f}-{e.end_s:.2f} s" for e in (before or after)[:4])
    reason = (f"voice from {s0:.2f} to {s1:.2f} s; sound(s) outside it at {where}: the sound comes {sound_rel} "
              f"the voice; the question asks about the {subject}")
    return _result("relative_order", a, max(a.fit("order"), 0.7), 0.75, supports, [r or "" for r in rel], reason,
                   f.ids("events", "speech", "transcript"))


declare("event_order", function="orders the sources heard by the time-stamped tags and the voice activity",
        supports=["which sound is heard first or last", "the order in which sounds occur"],
        not_for=["what is said first", "how long each sound lasts", "which sound is louder"],
        examples=["Which sound comes first?", "What is heard last in the recording?",
                  "In what order do the sounds occur?", "Which do you hear before the other?"])
declare("relative_order", function="places a non-speech sound before or after the voice in time",
        supports=["whether a sound comes before or after the speech", "whether a sound interrupts the talking"],
        not_for=["what is said", "which of two non-speech sounds is first"],
        examples=["Is the chime heard before or after the voice?", "Does the beep come before the speaking starts?",
                  "When does the sound occur relative to the speech?", "Is the tone played after the announcement?"])
