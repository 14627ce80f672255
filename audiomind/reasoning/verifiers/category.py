"""The least specific family: tag labels matched to the choices by meaning, when nothing more specific applies."""

from __future__ import annotations

from audiomind.language.analysis import QuestionAnalysis
from audiomind.language.text import GENERIC_LABELS
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.verifiers.base import VerifierResult, _label_choice_similarity, _result, declare


def verify_category(f: Facts, a: QuestionAnalysis) -> VerifierResult | None:
    """Tag labels matched to the choice texts by meaning (MiniLM) and shared word stems: used when nothing
    more specific applies. Evidence for a choice adds up over the labels that resemble it (a ringing phone is
    'Telephone', 'Telephone bell ringing' and 'Ringtone' at once); labels every choice resembles alike, and
    generic parent classes, count for less."""
    if f.tags is None or not f.tags.labels:
        return None
    top = f.tags.labels[:10]
    peaks = dict(f.tags.peak_labels)
    labels = [lab for lab, _ in top]
    weights = [max(s, 0.6 * peaks.get(lab, 0.0)) * (0.5 if lab.lower() in GENERIC_LABELS else 1.0) for lab, s in top]
    sim = _label_choice_similarity(labels, a.choices)
    n = len(a.choices)
    lift = [[sim[i][j] - (sum(sim[k][j] for k in range(n)) - sim[i][j]) / max(1, n - 1) for j in range(len(labels))]
            for i in range(n)]
    # a label counts for a choice only when it resembles the choice outright (not just more than the others do)
    scores = [sum((max(0.0, lift[i][j]) + 0.25 * sim[i][j]) * (weights[j] ** 0.5)
                  for j in range(len(labels)) if sim[i][j] >= 0.45) for i in range(n)]
    ranked = sorted(scores, reverse=True)
    if ranked[0] <= 0:
        return None
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else ranked[0]
    supports = [min(1.0, max(0.0, (s - ranked[1]) * 4)) if s == ranked[0] else 0.0 for s in scores]
    fit = max(a.fit("sound_category"), 0.25)
    winner = scores.index(ranked[0])
    strong_tag = max((weights[j] for j in range(len(labels)) if sim[winner][j] >= 0.5), default=0.0)
    reliability = 0.8 if margin >= 0.15 and strong_tag >= 0.5 else 0.6 if margin >= 0.1 else 0.4
    if a.fit("order") >= 0.3 and a.asks("order_cue"):
        reliability = min(reliability, 0.4)  # clip-level tags cannot see which source comes first or last
    reason = "audio tags: " + ", ".join(f"{lab} {w:.2f}" for lab, w in top[:5])
    return _result("tag_category", a, fit, reliability, supports, [f"{s:.2f}" for s in scores], reason,
                   f.tags.evidence_ids)


declare("tag_category", function="names the sound heard by matching the choices to the sound tagger's labels by meaning",
        supports=["what kind of sound is heard", "which source makes the sound", "what the recording mainly contains"],
        not_for=["what words are said", "how many times something happens", "when a sound starts or how long it lasts",
                 "how one sound compares with another", "what follows or can be inferred from the recording"],
        examples=["What sound can be heard in this clip?", "Which of these is making the noise?",
                  "What is the main source of sound in the recording?", "Which animal do you hear?",
                  "What kind of instrument is playing?", "What is happening in the background?"])
