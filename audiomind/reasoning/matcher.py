"""Evidence-to-choice matching: how the offline stack answers a multiple-choice question.

Every method is a transparent comparison between one kind of evidence and the choice texts: numbers
(counts from tools), transcript words, tag labels (by meaning, MiniLM), loudness trend words, music
features; the generic fallback compares choices with every evidence claim by meaning. The result names
the method, the per-choice scores and the evidence ids it relied on, so the trace shows why.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from audiomind.reasoning.question import QuestionAnalysis, parse_number
from audiomind.state import EvidenceState, ToolCall

STOPWORDS = set(
    "a an the is are was were be been of to in on at and or but for with by from that this it its as he she "
    "they we you i his her their our your what which who whom does did do says said say speaker person "
    "someone man woman clip audio recording about".split()
)

LANGUAGES = {
    "en": "english", "zh": "chinese mandarin", "es": "spanish", "fr": "french", "de": "german", "it": "italian",
    "ja": "japanese", "ko": "korean", "ru": "russian", "pt": "portuguese", "ar": "arabic", "hi": "hindi",
    "nl": "dutch", "sv": "swedish", "tr": "turkish", "pl": "polish",
}


class MatchResult(BaseModel):
    choice_index: int | None
    method: str
    scores: list[float] = Field(default_factory=list)
    rationale: str
    cited_evidence_ids: list[str] = Field(default_factory=list)
    confident: bool = True


def _latest(state: EvidenceState, tool: str) -> ToolCall | None:
    """The tool's latest result on the audio the question is about: a re-listened crop when the planner
    focused on one, otherwise the original (a crop made for one purpose must not answer for the whole)."""
    calls = state.successful_calls(tool)
    if not calls:
        return None
    focus = [aid for o in state.observations if o.kind == "relisten" for aid in o.artifact_ids]
    for wanted in (focus[-1:] if focus else []) + ["a0"]:
        on = [c for c in calls if (c.arguments or {}).get("artifact", "a0") == wanted]
        if on:
            return on[-1]
    return calls[-1]


def _get(output: dict[str, Any] | None, *keys: str) -> Any:
    for k in keys:
        if output and k in output and output[k] is not None:
            return output[k]
    return None


def _evidence_ids(state: EvidenceState, call: ToolCall | None) -> list[str]:
    return [e.id for e in state.evidence if call and e.source_id == call.id]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _stems(text: str) -> set[str]:
    """Content words with plural / -ing endings cut, so 'beeps' meets 'Beep, bleep' and 'ringing' 'Ring'."""
    out = set()
    for w in set(_words(text)) - STOPWORDS:
        for suffix in ("ing", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.add(w)
    return out


def _argmax(scores: list[float]) -> int | None:
    if not scores:
        return None
    best = max(scores)
    return scores.index(best)


def _numeric(state: EvidenceState, choices: list[str], value: float, call: ToolCall | None, what: str) -> MatchResult:
    nums = [parse_number(c) for c in choices]
    scores = [(-abs(n - value)) if n is not None else float("-inf") for n in nums]
    idx = _argmax(scores)
    exact = idx is not None and nums[idx] is not None and abs(nums[idx] - value) < 0.5
    return MatchResult(
        choice_index=idx,
        method="number",
        scores=[s if s != float("-inf") else -1e9 for s in scores],
        rationale=(
            f"{call.tool if call else 'evidence'} gives {what} = {value:g}; "
            + (f"choice {choices[idx]!r} states it exactly." if exact else f"closest choice is {choices[idx]!r}.")
        ) if idx is not None else f"no choice states a number ({what} = {value:g})",
        cited_evidence_ids=_evidence_ids(state, call),
        confident=exact,
    )


def _transcript(state: EvidenceState) -> tuple[str, ToolCall | None]:
    call = _latest(state, "asr")
    return (str(_get(call.output if call else None, "text") or ""), call)


def match_speech(state: EvidenceState, choices: list[str]) -> MatchResult | None:
    text, call = _transcript(state)
    if not text.strip():
        return None
    heard = _words(text)
    heard_set = set(heard)
    scores: list[float] = []
    for c in choices:
        words = [w for w in _words(c) if w not in STOPWORDS] or _words(c)
        recall = sum(w in heard_set for w in words) / max(1, len(words))
        scores.append(recall)
    from audiomind.embedded.text import similarity

    sims = similarity(choices, [text])[:, 0]
    combined = [0.7 * r + 0.3 * float(s) for r, s in zip(scores, sims)]
    idx = _argmax(combined)
    return MatchResult(
        choice_index=idx,
        method="transcript_words",
        scores=[round(x, 4) for x in combined],
        rationale=f"the transcript reads {text.strip()!r}; choice {choices[idx]!r} shares the most words "
        f"(word recall {scores[idx]:.2f}) and meaning (similarity {float(sims[idx]):.2f}).",
        cited_evidence_ids=_evidence_ids(state, call),
        # confident only when the chosen choice shares words with the transcript and stands out
        confident=scores[idx] > 0 and (combined[idx] - sorted(combined)[-2] > 0.1 if len(combined) > 1 else True),
    )


def match_word_count(state: EvidenceState, question: str, choices: list[str]) -> MatchResult | None:
    text, call = _transcript(state)
    quoted = re.findall(r"[\"“‘]([^\"”’]+)[\"”’]|(?<!\w)'([^']+)'(?!\w)", question)
    targets = [a or b for a, b in quoted]
    if not targets:  # "how many times does he say hello?" -> the words after the verb
        m = re.search(r"\b(?:say|says|said|repeat|repeats|repeated|mention|mentions|mentioned|use|uses|used)\s+"
                      r"(?:the word |the phrase )?([a-z0-9' -]+?)\s*(?:\?|$|\bin\b)", question.lower())
        targets = [m.group(1).strip()] if m else []
    if not text or not targets:
        return None
    quoted = targets
    target = _words(quoted[0])
    words = _words(text)
    n = sum(words[i : i + len(target)] == target for i in range(len(words) - len(target) + 1)) if target else 0
    return _numeric(state, choices, n, call, f"occurrences of {quoted[0]!r} in the transcript")


def match_language(state: EvidenceState, choices: list[str]) -> MatchResult | None:
    call = _latest(state, "asr")
    code = _get(call.output if call else None, "language")
    if not code:
        return None
    name = LANGUAGES.get(str(code), str(code))
    scores = [1.0 if any(w in name.split() for w in _words(c)) else 0.0 for c in choices]
    idx = _argmax(scores)
    if not scores[idx]:
        return None
    return MatchResult(
        choice_index=idx, method="language_code", scores=scores,
        rationale=f"asr detected language {code!r} ({name}); choice {choices[idx]!r} names it.",
        cited_evidence_ids=_evidence_ids(state, call),
    )


def match_tags(state: EvidenceState, choices: list[str]) -> MatchResult | None:
    call = _latest(state, "tagging")
    tags = _get(call.output if call else None, "tags") or []
    tags = [t for t in tags if isinstance(t, dict) and t.get("label")]
    if not tags:
        return None
    from audiomind.embedded.text import similarity

    labels = [str(t["label"]) for t in tags[:10]]
    weights = [float(t.get("score", 0.0)) for t in tags[:10]]
    sims = similarity(choices, labels)
    scores = []
    for i, c in enumerate(choices):
        cw = _stems(c)
        best = 0.0
        for j, label in enumerate(labels):
            lexical = 0.25 if cw & _stems(label) else 0.0
            best = max(best, (float(sims[i, j]) + lexical) * (weights[j] ** 0.5))
        scores.append(round(best, 4))
    idx = _argmax(scores)
    top = ", ".join(f"{lab} {w:.2f}" for lab, w in zip(labels[:5], weights[:5]))
    return MatchResult(
        choice_index=idx, method="tag_labels", scores=scores,
        rationale=f"audio tags (YAMNet): {top}; choice {choices[idx]!r} is closest in meaning to the strongest tags.",
        cited_evidence_ids=_evidence_ids(state, call),
        confident=(scores[idx] - sorted(scores)[-2] > 0.05) if len(scores) > 1 else True,
    )


TREND_WORDS = {
    "increasing": r"increas|louder|grow|rise|rising|crescendo|build|swell|up\b",
    "decreasing": r"decreas|quieter|softer|fad|diminish|decrescendo|drop|falling|down\b",
    "steady": r"steady|constant|same|unchanged|stable|consistent|flat",
    "fluctuating": r"fluctuat|vary|varies|varying|up and down|alternat|uneven",
}


def match_loudness(state: EvidenceState, choices: list[str]) -> MatchResult | None:
    call = _latest(state, "loudness")
    trend = _get(call.output if call else None, "trend")
    if not trend or trend not in TREND_WORDS:
        return None
    scores = [1.0 if re.search(TREND_WORDS[trend], c.lower()) else 0.0 for c in choices]
    idx = _argmax(scores)
    if not scores[idx]:
        return None
    return MatchResult(
        choice_index=idx, method="loudness_trend", scores=scores,
        rationale=f"the loudness curve trend is {trend!r}; choice {choices[idx]!r} describes that.",
        cited_evidence_ids=_evidence_ids(state, call),
    )


def match_key(state: EvidenceState, choices: list[str]) -> MatchResult | None:
    call = _latest(state, "key")
    out = call.output if call else None
    mode = str(_get(out, "mode") or "").lower()
    tonic = str(_get(out, "tonic", "key") or "").lower()
    if not mode:
        return None
    scores = []
    for c in choices:
        cl = c.lower()
        scores.append((1.0 if mode in cl else 0.0) + (0.5 if tonic and re.search(rf"\b{re.escape(tonic)}\b", cl) else 0.0))
    idx = _argmax(scores)
    if not scores[idx]:
        return None
    return MatchResult(
        choice_index=idx, method="key_mode", scores=scores,
        rationale=f"key estimate {tonic} {mode}; choice {choices[idx]!r} matches it.",
        cited_evidence_ids=_evidence_ids(state, call),
    )


def match_semantic(state: EvidenceState, choices: list[str]) -> MatchResult:
    """Fallback: each choice against every evidence claim and observation, by meaning."""
    from audiomind.embedded.text import similarity

    sources = [(e.id, e.claim) for e in state.evidence] + [
        (o.id, o.description or o.text) for o in state.observations if (o.description or o.text)
    ]
    if not sources:
        return MatchResult(choice_index=None, method="none", rationale="no evidence to compare the choices with", confident=False)
    sims = similarity(choices, [s for _, s in sources])
    scores = [round(float(row.max()), 4) for row in sims]
    idx = _argmax(scores)
    best_src = sources[int(sims[idx].argmax())]
    return MatchResult(
        choice_index=idx, method="semantic_similarity", scores=scores,
        rationale=f"no rule applies; choice {choices[idx]!r} is closest in meaning to the evidence "
        f"{best_src[1][:160]!r} (similarity {scores[idx]:.2f}).",
        cited_evidence_ids=[best_src[0]],
        confident=False,
    )


def match(state: EvidenceState, analysis: QuestionAnalysis) -> MatchResult:
    """Try the methods the question's intents call for, in order; fall back to semantic similarity."""
    choices = state.question.choices
    if not choices:
        return MatchResult(choice_index=None, method="none", rationale="no choices given", confident=False)
    from audiomind.reasoning import matchers_extra  # question shapes with their own evidence (timing, pitch, ...)

    extra = matchers_extra.match_extra(state, analysis)
    if extra is not None:
        return extra
    for intent in analysis.intents:
        result: MatchResult | None = None
        if intent == "speaker_count":
            call = _latest(state, "speaker_count")
            value = _get(call.output if call else None, "count", "num_speakers")
            if value is not None:
                result = _numeric(state, choices, float(value), call, "the number of distinct voices")
        elif intent == "count_events":
            call = _latest(state, "count_events")
            value = _get(call.output if call else None, "count")
            if value is not None:
                result = _numeric(state, choices, float(value), call, "the number of separated sound events")
        elif intent == "word_count":
            result = match_word_count(state, state.question.text, choices)
        elif intent == "speech_content":
            result = match_speech(state, choices)
            if result is not None and not result.confident and max(result.scores) <= 0.3:
                result = None  # no choice shares words with the transcript: not a speech-content answer
        elif intent == "language":
            result = match_language(state, choices)
        elif intent == "loudness":
            result = match_loudness(state, choices)
        elif intent == "tempo":
            call = _latest(state, "tempo")
            value = _get(call.output if call else None, "bpm", "tempo_bpm", "tempo")
            if value is not None and any(parse_number(c) is not None for c in choices):
                result = _numeric(state, choices, float(value), call, "the tempo in BPM")
        elif intent == "key":
            result = match_key(state, choices)
        elif intent in ("sound_event", "timing", "general"):
            result = match_tags(state, choices)
        if result is not None and result.choice_index is not None:
            return result
    # No rule settled it: let the dominant modality decide which evidence to compare with.
    text, _ = _transcript(state)
    if len(_words(text)) >= 3:
        speech = match_speech(state, choices)
        if speech is not None and speech.confident:
            return speech
    tags = match_tags(state, choices)
    if tags is not None and tags.confident:
        return tags
    return match_semantic(state, choices)
