"""Dynamic rubric judge (seed 001): instruction -> n atomic yes/no items -> filter -> judge each item
against the audio -> p(yes) per item -> score = mean item probability -> aligned if score >= threshold.
A holistic single-question judge is the baseline.

Decomposition: an LLM (prompts/judge_rubric_decompose.md) or, offline, transparent rules that split the
instruction into clauses and recognise speech (who speaks, what is said, how fast), sound events (named
AudioSet classes), counts, order ("then", "followed by"), music tempo, loudness; anything else becomes an
item the offline judge cannot verify (p = 0.5, said so).
Filtering: the LLM filter prompt, or the rule check that every item is grounded in the instruction's words
and not a duplicate.
Judging: an audio front end answers each item with the clip attached; a text LLM answers it from the
cascade's tool evidence; the rules verify it with the tools (YAMNet, VAD, Whisper, pitch, tempo, loudness,
event counts). p(yes) comes from the yes/no token log-probabilities where the backend exposes them
(OpenAI-compatible `logprobs`), else from the verdict; the rule verifier maps its measurement to a
probability with a stated logistic curve.
Hard negatives for benchmarks: instruction swapping and attribute perturbation (`perturb_instruction`).
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.state import ModelSpec, Observation, ToolCallRequest, ToolCallStatus
from audiomind.tools.base import typed_output

Attribute = Literal["speech", "speaker", "speech_content", "style", "sound_event", "count", "order", "music",
                    "loudness", "other"]

NUMBERS = {"one": 1, "once": 1, "single": 1, "two": 2, "twice": 2, "couple": 2, "three": 3, "thrice": 3,
           "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
NUM_WORDS = {v: k for k, v in NUMBERS.items() if k not in ("once", "twice", "thrice", "single", "couple")}
FEMALE = re.compile(r"\b(woman|women|female|girl|lady|she|her)\b", re.IGNORECASE)
MALE = re.compile(r"\b(man|men|male|boy|guy|gentleman|he|his)\b", re.IGNORECASE)
STYLE = re.compile(r"\b(happy|happily|sad|sadly|angry|angrily|excited|excitedly|calm|calmly|cheerful\w*|whisper\w*|"
                   r"shout\w*|emotional\w*|nervous\w*|fear\w*|surprised|tired|bored|gentl\w*|friendly|serious\w*)\b", re.IGNORECASE)
RATE_FAST = re.compile(r"\b(quickly|fast|rapidly|hurriedly)\b", re.IGNORECASE)
RATE_SLOW = re.compile(r"\b(slowly|slow)\b", re.IGNORECASE)
TEMPO_FAST = re.compile(r"\b(fast|upbeat|quick|rapid|lively|energetic)\b", re.IGNORECASE)
TEMPO_SLOW = re.compile(r"\b(slow|slowly|calm|gentle|leisurely)\b", re.IGNORECASE)
LOUDER = re.compile(r"\b(gets? louder|grows? louder|getting louder|crescendo|fades? in|increasing(?:ly)? loud)", re.IGNORECASE)
QUIETER = re.compile(r"\b(gets? quieter|getting quieter|fades? out|fading|diminuendo|dies? away|decreasing)", re.IGNORECASE)
MUSIC = re.compile(r"\b(music|melody|melodies|tune|song|playing|plays|chord|beat|rhythm|piano|trumpet|violin|"
                   r"flute|guitar|organ|saxophone|sax|drum\w*|cello|harp|clarinet|orchestra|synth\w*)\b", re.IGNORECASE)
GENDER_F0_HZ = 145.0  # between typical adult male (~85-155 Hz) and female (~165-255 Hz) speaking f0
SEQ = re.compile(r"\s*(?:,\s*)?\b(?:and then|then|followed by|after that|afterwards|before|after)\b\s*", re.IGNORECASE)


class RubricItem(BaseModel):
    """One atomic yes/no requirement drawn from the instruction."""

    id: int
    question: str
    attribute: str = "other"
    evidence: str = Field("", description="the words of the instruction it comes from")
    check: dict[str, Any] = Field(default_factory=dict, description="the rule verifier's spec (rules only)")
    kept: bool = True
    drop_reason: str | None = None


class ItemVerdict(BaseModel):
    item_id: int
    question: str
    verdict: Literal["yes", "no", "unknown"]
    p_yes: float
    source: Literal["logprobs", "verdict", "rules"]
    explanation: str = ""


class HolisticVerdict(BaseModel):
    verdict: Literal["yes", "no", "unknown"]
    p_yes: float
    source: Literal["logprobs", "verdict", "rules"]
    explanation: str = ""


class RubricJudgeResult(BaseModel):
    judge: Literal["rubric"] = "rubric"
    audio: str
    instruction: str
    items: list[RubricItem]
    dropped: list[RubricItem] = Field(default_factory=list)
    verdicts: list[ItemVerdict]
    score: float = Field(description="mean p(yes) over the kept items")
    threshold: float
    aligned: bool
    holistic: HolisticVerdict | None = None
    decomposed_by: str
    judged_by: str
    steps: list[JudgeStep]
    substitutes: dict[str, str] = Field(default_factory=dict)
    models: JudgeModels
    trace_path: str | None = None


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def _p(x: float) -> float:
    return round(min(0.98, max(0.02, x)), 4)


# ---------------------------------------------------------------- rule decomposition


def _split_clauses(instruction: str) -> list[tuple[str, str | None]]:
    """[(clause, relation to the previous clause: 'after' | 'before' | None)], quotes kept whole."""
    quotes: list[str] = []

    def hide(m: re.Match) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    masked = re.sub(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|(?:(?<=^)|(?<=[\s:,]))'[^']*'(?=$|[\s.,;:!?])", hide,
                    instruction.strip())
    out: list[tuple[str, str | None]] = []
    for sentence in re.split(r"(?<=[.!?;])\s+", masked):
        pos, rel = 0, None
        for m in SEQ.finditer(sentence):
            chunk = sentence[pos:m.start()]
            if chunk.strip(" ,.;"):
                out.extend(_subclauses(chunk, rel))
            word = m.group(0).strip(" ,").lower()
            rel = "before" if word == "before" else "after"
            pos = m.end()
        tail = sentence[pos:]
        if tail.strip(" ,.;"):
            out.extend(_subclauses(tail, rel))
    return [(re.sub("\x00(\\d+)\x00", lambda m: quotes[int(m.group(1))], c).strip(" ,.;"), r) for c, r in out]


def _subclauses(chunk: str, rel: str | None) -> list[tuple[str, str | None]]:
    parts = [p for p in re.split(r"\s*(?:,|\bwhile\b|\bwith\b|\bover\b|\bas\b|\band\b)\s*", chunk) if p.strip(" ,.;")]
    out: list[tuple[str, str | None]] = []
    for i, p in enumerate(parts):
        out.append((p, rel if i == 0 else "with"))
    return out


def _count_in(clause: str) -> int | None:
    m = re.search(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:times|short|long|loud|quick|"
                  r"[a-z]+s)\b", clause, re.IGNORECASE)
    if m:
        w = m.group(1).lower()
        return int(w) if w.isdigit() else NUMBERS.get(w)
    m = re.search(r"\b(once|twice|thrice)\b", clause, re.IGNORECASE)
    return NUMBERS[m.group(1).lower()] if m else None


def _sound_phrase(clause: str) -> str:
    p = LOUDER.sub(" ", QUIETER.sub(" ", clause))
    p = re.sub(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|once|twice|thrice|times|short|long|"
               r"quick|fast|slow|slowly|quickly|upbeat|lively|energetic|calm|gentle|leisurely|loud|loudly|quiet|"
               r"quietly|softly|in the background|in the foreground|repeatedly|again|is heard|are heard|"
               r"can be heard|there is|there are|sound|sounds|plays?|playing|a|an|the)\b", " ", p, flags=re.IGNORECASE)
    p = " ".join(p.split()) or clause
    return p[0].lower() + p[1:] if p[:2] != p[:2].upper() else p


def rule_decompose(instruction: str) -> list[RubricItem]:
    """Transparent rule decomposition of an instruction into verifiable items."""
    items: list[RubricItem] = []
    subjects: list[tuple[str, dict[str, Any]]] = []  # (clause, locator) for order items

    def add(question: str, attribute: str, evidence: str, check: dict[str, Any]) -> None:
        if any(it.question.lower() == question.lower() for it in items):
            return
        items.append(RubricItem(id=len(items), question=question, attribute=attribute, evidence=evidence, check=check))

    clauses = _split_clauses(instruction)
    speech_seen = False
    for clause, rel in clauses:
        quoted = ev.quoted_text(clause)
        locator: dict[str, Any] | None = None
        if ev.is_speech_phrase(clause) or quoted:
            if not speech_seen:
                add("Is there speech in the audio?", "speech", clause, {"kind": "speech_present"})
                speech_seen = True
            head = clause.split(quoted)[0] if quoted else clause
            if FEMALE.search(head) and not MALE.search(head):
                add("Is the speaker female?" if not quoted else f"Is '{quoted}' said by a female voice?", "speaker",
                    clause, {"kind": "gender", "gender": "female", "words": quoted})
            elif MALE.search(head) and not FEMALE.search(head):
                add("Is the speaker male?" if not quoted else f"Is '{quoted}' said by a male voice?", "speaker",
                    clause, {"kind": "gender", "gender": "male", "words": quoted})
            if quoted:
                add(f"Does the speech contain the words '{quoted}'?", "speech_content", clause,
                    {"kind": "words", "words": quoted})
            if RATE_FAST.search(clause):
                add("Does the speaker talk fast?", "style", clause, {"kind": "rate", "rate": "fast"})
            elif RATE_SLOW.search(clause):
                add("Does the speaker talk slowly?", "style", clause, {"kind": "rate", "rate": "slow"})
            m = STYLE.search(clause)
            if m:
                w0 = m.group(1).lower()
                word = re.sub(r"ily$", "y", w0) if w0.endswith("ily") else re.sub(r"(?<=[a-z]{3})ly$", "", w0)
                add(f"Does the speech sound {word}?", "style", clause, {"kind": "unverifiable",
                                                                                    "why": "emotion and speaking "
                                                                                           "style"})
            locator = {"kind": "speech", "words": quoted}
        else:
            phrase = _sound_phrase(clause)
            labels = ev.phrase_labels(phrase)
            if labels:
                count = _count_in(clause)
                add(f"Is the sound of '{phrase}' present?", "music" if MUSIC.search(phrase) else "sound_event",
                    clause, {"kind": "sound", "phrase": phrase})
                if count is not None:
                    add(f"Does {phrase} occur exactly {count} time{'s' if count != 1 else ''}?", "count", clause,
                        {"kind": "count", "phrase": phrase, "n": count})
                locator = {"kind": "sound", "phrase": phrase}
            if MUSIC.search(clause):
                if TEMPO_FAST.search(clause):
                    add("Is the music fast (a quick tempo)?", "music", clause, {"kind": "tempo", "tempo": "fast"})
                elif TEMPO_SLOW.search(clause):
                    add("Is the music slow (a slow tempo)?", "music", clause, {"kind": "tempo", "tempo": "slow"})
            if not labels and not MUSIC.search(clause) and not (LOUDER.search(clause) or QUIETER.search(clause)):
                add(f"Does the audio match: '{clause}'?", "other", clause,
                    {"kind": "unverifiable", "why": "names no sound class, speech or measurable property"})
        if LOUDER.search(clause):
            add("Does the audio get louder over time?", "loudness", clause, {"kind": "loudness", "trend": "increasing"})
        elif QUIETER.search(clause):
            add("Does the audio get quieter over time?", "loudness", clause, {"kind": "loudness", "trend": "decreasing"})
        if locator is not None:
            if rel in ("after", "before") and subjects:
                prev_clause, prev_loc = subjects[-1]
                first, second = (prev_loc, locator) if rel == "after" else (locator, prev_loc)
                fc, sc = (prev_clause, clause) if rel == "after" else (clause, prev_clause)
                add(f"Does '{_brief(fc)}' happen before '{_brief(sc)}'?", "order", f"{prev_clause} ... {clause}",
                    {"kind": "order", "first": first, "second": second})
            subjects.append((clause, locator))
    if not items:
        add(f"Does the audio match: '{instruction.strip()}'?", "other", instruction,
            {"kind": "unverifiable", "why": "no verifiable requirement recognised"})
    return items


def _article(phrase: str) -> str:
    p = phrase.strip()
    if re.match(r"^(a|an|the|some)\b", p, re.IGNORECASE) or p.endswith("s"):
        return p
    return ("an " if p[:1].lower() in "aeiou" else "a ") + p


def _brief(clause: str, n: int = 8) -> str:
    w = clause.split()
    return " ".join(w[:n]) + (" ..." if len(w) > n else "")


def rule_filter(instruction: str, items: list[RubricItem]) -> list[RubricItem]:
    """Keep items grounded in the instruction (their evidence words occur in it) and not duplicated."""
    inst = set(ev.words_of(instruction))
    seen: set[str] = set()
    for it in items:
        key = it.question.lower()
        words = [w for w in ev.words_of(it.evidence) if len(w) > 2]
        grounded = not words or sum(w in inst for w in words) / len(words) >= 0.6
        if key in seen:
            it.kept, it.drop_reason = False, "duplicate"
        elif not grounded:
            it.kept, it.drop_reason = False, "not grounded in the instruction's words"
        seen.add(key)
    return items


# ---------------------------------------------------------------- rule verification


class _Extra(BaseModel):
    """Measurements beyond the base perception pass, fetched only when an item needs them."""

    f0_median_hz: float | None = None
    f0_by_words: dict[str, float | None] = Field(default_factory=dict, description="quoted words -> median f0")
    bpm: float | None = None
    clear_beat: bool | None = None
    words_per_s: float | None = None


def _needs(items: list[RubricItem]) -> set[str]:
    kinds = {it.check.get("kind") for it in items if it.kept}
    need = set()
    if "gender" in kinds:
        need.add("pitch")
    if "tempo" in kinds:
        need.add("tempo")
    return need


def _word_span(words: str, f: ev.ClipFacts) -> tuple[float, float] | None:
    """Where the quoted words are said (Whisper word times), or None."""
    target = ev.words_of(words)
    heard = [ev.words_of(w.get("word", "")) for w in f.words]
    for i in range(len(heard)):
        if heard[i] and target and heard[i][0] == target[0]:
            j = min(len(f.words), i + len(target)) - 1
            window = " ".join(x[0] for x in heard[i:j + 1] if x)
            if ev.word_recall(words, window) >= 0.5:
                return float(f.words[i]["start"]), float(f.words[j]["end"])
    return None


def extra_measurements(session: JudgeSession, f: ev.ClipFacts, need: set[str],
                       gender_words: list[str | None] | None = None) -> _Extra:
    from audiomind.tools.music import PitchOutput, TempoOutput

    out = _Extra()
    reqs = []
    windows: dict[str, tuple[float, float]] = {}
    if "pitch" in need and f.speech_segments and session.tool_available("pitch"):
        start, end = f.speech_segments[0][0], f.speech_segments[-1][1]
        windows[""] = (start, max(end, start + 0.2))
        for w in gender_words or []:
            span = _word_span(w, f) if w else None
            if span is not None:
                windows[w] = (span[0], max(span[1], span[0] + 0.2))
        for key, (a, b) in windows.items():
            reqs.append(ToolCallRequest(
                tool="pitch", arguments={"artifact": f.artifact_id, "start_s": round(a, 3), "end_s": round(b, 3),
                                         "fmin_hz": 60.0, "fmax_hz": 400.0},
                reason=f"speaker gender: median f0 {'of ' + repr(key) if key else 'over the speech'}"))
    if "tempo" in need and session.tool_available("tempo"):
        reqs.append(ToolCallRequest(tool="tempo", arguments={"artifact": f.artifact_id},
                                    reason="tempo items: beats per minute"))
    if reqs:
        res = session.run_tools(reqs, "rubric items need pitch / tempo measurements")
        for c in res.tool_calls:
            if c.status not in (ToolCallStatus.ok, ToolCallStatus.cached) or not c.output:
                continue
            if c.tool == "pitch":
                pitch = typed_output(c.output, PitchOutput)
                a = (c.arguments or {}).get("start_s")
                for key, (ws, _we) in windows.items():
                    if a is not None and abs(ws - a) < 1e-3:
                        if key:
                            out.f0_by_words[key] = pitch.median_f0_hz
                        else:
                            out.f0_median_hz = pitch.median_f0_hz
            elif c.tool == "tempo":
                tempo = typed_output(c.output, TempoOutput)
                out.bpm = tempo.bpm
                out.clear_beat = tempo.clear_beat
    if f.words and f.speech_s > 0:
        out.words_per_s = round(len(f.words) / max(f.speech_s, 0.3), 2)
    return out


def _onset(loc: dict[str, Any], f: ev.ClipFacts) -> tuple[float | None, str]:
    if loc.get("kind") == "speech":
        words = loc.get("words")
        if words and f.words:
            target = ev.words_of(words)
            heard = [ev.words_of(w.get("word", "")) for w in f.words]
            for i in range(len(heard)):
                if heard[i] and target and heard[i][0] == target[0]:
                    window = " ".join(x[0] for x in heard[i:i + len(target)] if x)
                    if ev.word_recall(words, window) >= 0.5:
                        return float(f.words[i]["start"]), f"'{words}' starts at {f.words[i]['start']:.2f} s (ASR)"
        if f.speech_segments:
            return float(f.speech_segments[0][0]), f"speech starts at {f.speech_segments[0][0]:.2f} s (VAD)"
        return None, "no speech found"
    labels = [lab for lab, _ in ev.phrase_labels(loc.get("phrase", ""))]
    sp = ev.spans(f, labels)
    if sp:
        t = min(a for a, _ in sp)
        return t, f"{loc.get('phrase')} starts at {t:.2f} s (YAMNet events)"
    return None, f"no YAMNet event of {loc.get('phrase')}"


def verify(item: RubricItem, f: ev.ClipFacts, x: _Extra) -> tuple[float, str]:
    """(p(yes), why) for a rule item: each measurement mapped through a stated logistic curve."""
    c = item.check
    kind = c.get("kind")
    if kind == "speech_present":
        p = _sig((f.speech_s - 0.3) / 0.1)
        return _p(p), f"voice activity {f.speech_s:.2f} s; p = sigmoid((s - 0.3) / 0.1)"
    if kind == "gender":
        words = c.get("words")
        f0 = x.f0_by_words.get(words) if words and x.f0_by_words.get(words) else x.f0_median_hz
        where = f"of '{words}'" if words and x.f0_by_words.get(words) else "over the speech"
        if f0 is None:
            return (0.5 if f.has_speech else 0.05), "no voiced speech to measure the pitch of"
        z = (f0 - GENDER_F0_HZ) / 12.0
        p = _sig(z) if c.get("gender") == "female" else _sig(-z)
        return _p(p), (f"median f0 {f0:.0f} Hz {where}; female above ~{GENDER_F0_HZ:.0f} Hz; "
                       f"p = sigmoid({'+' if c.get('gender') == 'female' else '-'}(f0 - {GENDER_F0_HZ:.0f}) / 12)")
    if kind == "words":
        r = ev.word_recall(c["words"], f.transcript or "")
        return _p(_sig((r - 0.5) / 0.1)), f"{r:.0%} of the words heard in order (transcript: '{ev._short(f.transcript, 16)}')"
    if kind == "rate":
        if x.words_per_s is None:
            return 0.5, "no transcript to time"
        z = (x.words_per_s - 3.0) / 0.4
        p = _sig(z) if c.get("rate") == "fast" else _sig(-z)
        return _p(p), f"{x.words_per_s:.2f} words per second of speech (fast above ~3)"
    if kind == "sound":
        pr, why = ev.presence(c["phrase"], f)
        return _p(_sig((pr - 0.2) / 0.05)), f"presence {pr:.2f}: {why}; p = sigmoid((presence - 0.2) / 0.05)"
    if kind == "count":
        if f.n_events is None:
            return 0.5, "no event count"
        evs = [e for e in f.energy_events
               if not any(min(e[1], b) - max(e[0], a) > 0.5 * max(1e-3, e[1] - e[0]) for a, b in f.speech_segments)]
        env = ev.envelope(ev.spans(f, [lab for lab, _ in ev.phrase_labels(c["phrase"])]), pad=0.5)
        if env is not None:
            evs = [e for e in evs if env[0] <= e[0] <= env[1]]
        n = len(evs)
        d = abs(n - int(c["n"]))
        where = (f" within {env[0]:.1f}-{env[1]:.1f} s where {c['phrase']} is tagged" if env else "") + (
            ", outside speech" if f.speech_segments else "")
        return (0.9 if d == 0 else 0.3 if d == 1 else 0.05), f"{n} separate sound event(s) counted{where}"
    if kind == "order":
        t1, w1 = _onset(c["first"], f)
        t2, w2 = _onset(c["second"], f)
        if t1 is None or t2 is None:
            return 0.3, f"cannot place both: {w1}; {w2}"
        return _p(_sig((t2 - t1) / 0.3)), f"{w1}; {w2}"
    if kind == "tempo":
        if x.bpm is None:
            return 0.5, "no tempo measured"
        z = (x.bpm - 105.0) / 10.0
        p = _sig(z) if c.get("tempo") == "fast" else _sig(-z)
        return _p(p), f"tempo {x.bpm:.0f} BPM (fast above ~105)" + ("" if x.clear_beat is not False else "; no clear beat")
    if kind == "loudness":
        trend = f.loudness_trend
        ok = trend == c.get("trend")
        return (0.9 if ok else 0.1), f"loudness trend: {trend} ({f.loudness_change_db} dB)"
    return 0.5, f"the offline judge cannot verify this ({c.get('why', 'unsupported')}): p = 0.5"


def evidence_text(f: ev.ClipFacts, x: _Extra | None = None) -> str:
    """The cascade's tool evidence as text, for a text LLM that cannot hear the audio."""
    lines = [f"Duration {f.duration_s:.2f} s."]
    labs = ", ".join(f"{k} {v:.2f}" for k, v in list(f.present_labels(0.15).items())[:10])
    lines.append(f"Sound classes (YAMNet, strength 0-1): {labs or 'none detected'}.")
    if f.events:
        lines.append("Sound events: " + "; ".join(f"{e['label']} {e['start_s']:.1f}-{e['end_s']:.1f} s"
                                                  for e in f.events[:12]) + ".")
    lines.append(f"Speech activity: {f.speech_s:.2f} s" + (
        " in " + ", ".join(f"{a:.1f}-{b:.1f} s" for a, b in f.speech_segments[:6]) if f.speech_segments else "") + ".")
    if f.transcript:
        lines.append(f"Transcript (Whisper): '{f.transcript}'.")
    if x is not None and x.f0_median_hz:
        lines.append(f"Median voice pitch: {x.f0_median_hz:.0f} Hz.")
    if x is not None and x.bpm:
        lines.append(f"Tempo: {x.bpm:.0f} BPM.")
    if f.n_events is not None:
        lines.append(f"Separate sound events by energy: {f.n_events}.")
    if f.lufs is not None:
        lines.append(f"Loudness {f.lufs} LUFS, trend {f.loudness_trend}.")
    return "\n".join(lines)


# ---------------------------------------------------------------- hard negatives


_GENDER_SWAP = {"woman": "man", "man": "woman", "women": "men", "men": "women", "female": "male", "male": "female",
                "girl": "boy", "boy": "girl", "she": "he", "he": "she", "her": "his", "his": "her", "lady": "gentleman",
                "gentleman": "lady"}
_TEMPO_SWAP = {"fast": "slow", "slow": "fast", "quick": "slow", "upbeat": "slow", "slowly": "quickly",
               "quickly": "slowly", "calm": "energetic", "energetic": "calm"}
_SOUND_SWAP = {"telephone": "dog", "phone": "dog", "beeps": "knocks", "beep": "knock", "paper": "glass",
               "crumpling": "shattering", "crumples": "shatters", "crumpled": "shattered", "trumpet": "violin",
               "violin": "trumpet", "flute": "guitar", "saxophone": "piano", "drums": "bells", "busy signal": "siren",
               "piano": "saxophone", "music": "rain"}


def perturb_instruction(instruction: str, kind: str | None = None, seed: int = 0) -> tuple[str, str] | None:
    """Attribute perturbation by rules: (perturbed instruction, what changed), or None when no rule applies.
    Kinds: gender, count, order, tempo, sound, words (tried in a seeded order when kind is None)."""
    rng = random.Random(seed)
    kinds = [kind] if kind else rng.sample(["gender", "count", "order", "tempo", "sound", "words"], 6)
    for k in kinds:
        out = _perturb(instruction, k)
        if out and out != instruction:
            return out, k
    return None


def _swap_words(text: str, table: dict[str, str]) -> str:
    keys = sorted(table, key=len, reverse=True)
    rx = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b", re.IGNORECASE)

    def rep(m: re.Match) -> str:
        w = table[m.group(1).lower()]
        return w.capitalize() if m.group(1)[0].isupper() else w

    return rx.sub(rep, text)


def _perturb(s: str, k: str) -> str | None:
    quoted = ev.quoted_text(s)
    outside = s.replace(quoted, "\x00") if quoted else s
    if k == "gender" and (FEMALE.search(outside) or MALE.search(outside)):
        return _swap_words(outside, _GENDER_SWAP).replace("\x00", quoted or "")
    if k == "tempo" and MUSIC.search(outside) and re.search(r"\b(" + "|".join(_TEMPO_SWAP) + r")\b", outside, re.IGNORECASE):
        return _swap_words(outside, _TEMPO_SWAP).replace("\x00", quoted or "")
    if k == "count":
        m = re.search(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|twice|thrice|once|\d+)\b", outside, re.IGNORECASE)
        if m:
            w = m.group(1).lower()
            n = int(w) if w.isdigit() else NUMBERS[w]
            new = NUM_WORDS.get(n + 2, str(n + 2))
            if w in ("once", "twice", "thrice"):
                new = f"{NUM_WORDS.get(n + 2, n + 2)} times"
            return (outside[:m.start()] + (new.capitalize() if m.group(1)[0].isupper() else new)
                    + outside[m.end():]).replace("\x00", quoted or "")
    if k == "order":
        parts = re.split(r"(,?\s*\b(?:then|followed by)\b\s*)", s.rstrip("."), maxsplit=1, flags=re.IGNORECASE)
        if len(parts) == 3:
            a, _, b = parts
            return f"{b[0].upper() + b[1:]}, then {a[0].lower() + a[1:]}."
    if k == "sound":
        keys = sorted(_SOUND_SWAP, key=len, reverse=True)
        m = re.search(r"\b(" + "|".join(re.escape(x) for x in keys) + r")\b", outside, re.IGNORECASE)
        if m:  # one sound swapped: a fine-grained mismatch, not a different scene
            w = _SOUND_SWAP[m.group(1).lower()]
            w = w.capitalize() if m.group(1)[0].isupper() else w
            return (outside[:m.start()] + w + outside[m.end():]).replace("\x00", quoted or "")
    if k == "words" and quoted:
        alt = {"good morning everyone": "see you tomorrow", "the train leaves at nine": "the shop opens at ten",
               "please close the door": "please open the window"}.get(quoted.lower())
        words = quoted.split()
        new_q = alt or " ".join(reversed(words)) if len(words) > 1 else "nothing at all"
        return s.replace(quoted, new_q)
    return None


def swap_instructions(instructions: list[str], seed: int = 0) -> list[int]:
    """Instruction swapping: a derangement (no item keeps its own instruction), as indices."""
    n = len(instructions)
    if n < 2:
        raise ValueError("swapping needs at least two instructions")
    rng = random.Random(seed)
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if all(perm[i] != i and instructions[perm[i]] != instructions[i] for i in range(n)):
            return perm


# ---------------------------------------------------------------- the judge


class _ItemOut(BaseModel):
    question: str
    attribute: str = "other"
    evidence: str = ""


class _DecomposeOut(BaseModel):
    items: list[_ItemOut]


class _Dropped(BaseModel):
    index: int
    reason: str = ""


class _FilterOut(BaseModel):
    keep: list[int] = Field(default_factory=list)
    dropped: list[_Dropped] = Field(default_factory=list)


def holistic_rule(instruction: str, f: ev.ClipFacts) -> HolisticVerdict:
    """The offline holistic baseline: MiniLM similarity of the instruction and the clip's tool caption."""
    from audiomind.embedded import text

    caption = ev.clip_caption(f, max_labels=5)
    sim = float(text.similarity([instruction], [caption])[0, 0])
    p = _p(_sig((sim - 0.45) / 0.08))
    return HolisticVerdict(verdict="yes" if p >= 0.5 else "no", p_yes=p, source="rules",
                           explanation=f"similarity {sim:.3f} between the instruction and the tool caption "
                                       f"'{caption}'; p = sigmoid((sim - 0.45) / 0.08)")


def judge_rubric(
    audio: str | Path,
    instruction: str,
    *,
    llm: str = "rules",
    frontend: str = "cascade",
    threshold: float = 0.75,
    holistic: bool = True,
    max_items: int = 8,
    trace_dir: str | Path | None = "traces",
    write_trace: bool = True,
    cache: Any = None,
    registry: Any = None,
    timeout_s: float = 120,
    max_retries: int = 3,
) -> RubricJudgeResult:
    """Judge how well `audio` follows `instruction`, item by item; the run is written as a trace."""
    from audiomind.judges.llm import make_audio_judge, make_llm
    from audiomind.prompts import load_prompt

    if not instruction or not instruction.strip():
        raise ValueError("the instruction is empty")
    models = JudgeModels(llm=llm or "rules", frontend=frontend or "cascade")
    task = f"Does a0 follow this instruction? \"{instruction}\" Judge it item by item (dynamic rubric)."
    session = JudgeSession("rubric", task, [audio], trace_dir=trace_dir, models=models, registry=registry,
                           cache=cache, inputs={"audio": str(audio), "instruction": instruction,
                                                "threshold": threshold})
    text_llm = make_llm(models.llm, timeout_s=timeout_s, max_retries=max_retries)
    audio_judge = make_audio_judge(models.frontend, timeout_s=timeout_s, max_retries=max_retries)
    specs: list[ModelSpec] = []
    if text_llm is not None:
        specs.append(text_llm.model_spec())
    specs.append(audio_judge.model_spec() if audio_judge is not None else ModelSpec(
        role="frontend", spec="cascade", kind="cascade", decoding={"judge": "rubric"}))
    session.set_model_specs(specs)
    steps: list[JudgeStep] = []
    substitutes: dict[str, str] = {}

    def add(step: JudgeStep) -> None:
        steps.append(step)
        session.step(step)

    # 1. decompose
    items: list[RubricItem] | None = None
    decomposed_by = "rules"
    if text_llm is not None:
        prompt = load_prompt("judge_rubric_decompose").render(instruction=instruction, max_items=max_items)
        out, call, problem = text_llm.json("rubric_decompose", prompt, _DecomposeOut)
        session.add_model_call(call)
        if out is not None and out.items:
            items = [RubricItem(id=i, question=it.question.strip(), attribute=it.attribute, evidence=it.evidence)
                     for i, it in enumerate(out.items[:max_items]) if it.question.strip()]
            decomposed_by = text_llm.name
        else:
            session.note(f"LLM decomposition unusable ({problem}); rule decomposition instead")
    if not items:
        items = rule_decompose(instruction)[:max_items]
    add(JudgeStep(number=1, name="decompose", text=f"{len(items)} item(s): " + " | ".join(i.question for i in items),
                  data={"by": decomposed_by, "items": [i.model_dump() for i in items]}))

    # 2. filter
    filtered_by = "rules"
    if text_llm is not None and decomposed_by != "rules":
        listing = "\n".join(f"{i}. {it.question}" for i, it in enumerate(items))
        prompt = load_prompt("judge_rubric_filter").render(instruction=instruction, items=listing)
        out, call, problem = text_llm.json("rubric_filter", prompt, _FilterOut)
        session.add_model_call(call)
        if out is not None and out.keep:
            reasons = {d.index: d.reason for d in out.dropped}
            for i, it in enumerate(items):
                if i not in out.keep:
                    it.kept, it.drop_reason = False, reasons.get(i) or "dropped by the LLM filter"
            filtered_by = text_llm.name
        else:
            session.note(f"LLM filter unusable ({problem}); rule filter instead")
            rule_filter(instruction, items)
    else:
        rule_filter(instruction, items)
    kept = [it for it in items if it.kept]
    dropped = [it for it in items if not it.kept]
    if not kept:  # never judge an empty rubric: fall back to the whole instruction as one item
        kept = [RubricItem(id=len(items), question=f"Does the audio match: '{instruction}'?", evidence=instruction,
                           check={"kind": "unverifiable", "why": "every item was filtered out"})]
    add(JudgeStep(number=2, name="filter", text=f"kept {len(kept)}, dropped {len(dropped)}"
                  + ("".join(f"; dropped '{d.question}' ({d.drop_reason})" for d in dropped)),
                  data={"by": filtered_by, "kept": [k.id for k in kept],
                        "dropped": [{"id": d.id, "reason": d.drop_reason} for d in dropped]}))

    # 3. perceive (the cascade, also for the text-LLM judge that reads its evidence)
    facts: ev.ClipFacts | None = None
    extra = _Extra()
    if audio_judge is None:
        facts = ev.perceive(session, ["a0"], quality=False, rationale="rubric items: perception pass")["a0"]
        if decomposed_by == "rules":
            need = _needs(kept)
        else:  # LLM items carry no verifier spec: measure what their wording asks about
            qs = " ".join(k.question for k in kept)
            need = ({"pitch"} if re.search(r"\b(male|female|man|woman|gender|voice|pitch)\b", qs, re.IGNORECASE) else set()) | (
                {"tempo"} if re.search(r"\b(tempo|fast|slow|bpm)\b", qs, re.IGNORECASE) else set())
        extra = extra_measurements(session, facts, need,
                                   [k.check.get("words") for k in kept if k.check.get("kind") == "gender"])
        session.add_observation(Observation(
            kind="perception", frontend="cascade", artifact_ids=["a0"], prompt_id="judge_rubric:cascade",
            prompt="tool evidence for the rubric items", text=evidence_text(facts, extra),
            description=ev.clip_caption(facts), tool_call_ids=facts.call_ids,
            uncertainty="tool-based: emotion, speaking style and fine semantics are not perceived"))

    # 4. judge each item
    verdicts: list[ItemVerdict] = []
    judged_by = audio_judge.name if audio_judge else (text_llm.name + " on cascade evidence") if text_llm else "rules"
    art = session.state.artifact("a0")
    for it in kept:
        if audio_judge is not None:
            prompt = load_prompt("judge_rubric_item").render(context="Listen to the audio clip.", question=it.question)
            yn, call = audio_judge.yes_no(f"rubric_item_{it.id}", prompt, [art])
            session.add_model_call(call)
            v = ItemVerdict(item_id=it.id, question=it.question, verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source,
                            explanation=yn.detail)
        elif text_llm is not None and facts is not None:
            ctx = ("Evidence about the audio clip from measurement tools (you cannot hear the audio):\n"
                   + evidence_text(facts, extra))
            prompt = load_prompt("judge_rubric_item").render(context=ctx, question=it.question)
            yn, call = text_llm.yes_no(f"rubric_item_{it.id}", prompt)
            session.add_model_call(call)
            v = ItemVerdict(item_id=it.id, question=it.question, verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source,
                            explanation=yn.detail)
        else:
            assert facts is not None
            if not it.check:
                it.check = {"kind": "unverifiable", "why": "no rule verifier for an LLM-written item"}
            p, why = verify(it, facts, extra)
            v = ItemVerdict(item_id=it.id, question=it.question, verdict="yes" if p >= 0.5 else "no", p_yes=p,
                            source="rules", explanation=why)
        verdicts.append(v)
    for v in verdicts:
        session.note(f"item {v.item_id}: {v.question} -> {v.verdict} (p_yes {v.p_yes:.3f}, {v.source}): "
                     f"{v.explanation}", data=v.model_dump(), confidence=v.p_yes)
    score = sum(v.p_yes for v in verdicts) / len(verdicts)
    aligned = score >= threshold
    add(JudgeStep(number=3, name="judge items", text="; ".join(f"{v.question} {v.p_yes:.2f}" for v in verdicts),
                  data={"by": judged_by, "verdicts": [v.model_dump() for v in verdicts]}))
    add(JudgeStep(number=4, name="aggregate", text=f"score = mean p(yes) = {score:.3f}; threshold {threshold}: "
                  f"{'aligned' if aligned else 'misaligned'}", data={"score": score, "threshold": threshold}))

    # 5. holistic baseline
    hol: HolisticVerdict | None = None
    if holistic:
        if audio_judge is not None:
            prompt = load_prompt("judge_rubric_holistic").render(context="Listen to the audio clip.",
                                                                 instruction=instruction)
            yn, call = audio_judge.yes_no("rubric_holistic", prompt, [art])
            session.add_model_call(call)
            hol = HolisticVerdict(verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source, explanation=yn.detail)
        elif text_llm is not None and facts is not None:
            ctx = ("Evidence about the audio clip from measurement tools (you cannot hear the audio):\n"
                   + evidence_text(facts, extra))
            prompt = load_prompt("judge_rubric_holistic").render(context=ctx, instruction=instruction)
            yn, call = text_llm.yes_no("rubric_holistic", prompt)
            session.add_model_call(call)
            hol = HolisticVerdict(verdict=yn.verdict, p_yes=yn.p_yes, source=yn.source, explanation=yn.detail)
        else:
            assert facts is not None
            hol = holistic_rule(instruction, facts)
            substitutes["holistic"] = "no LLM: instruction vs tool-caption embedding similarity (MiniLM)"
        add(JudgeStep(number=5, name="holistic baseline", text=f"{hol.verdict} (p_yes {hol.p_yes:.3f}): {hol.explanation}",
                      data=hol.model_dump()))
    if decomposed_by == "rules":
        substitutes["decomposition"] = "no LLM: rule decomposition (clauses, speech, AudioSet classes, counts, order)"
    if judged_by == "rules":
        substitutes["item judge"] = "no LLM or audio model: rule verification with the embedded tools"
    verdict = (f"{'aligned' if aligned else 'misaligned'}: rubric score {score:.3f} (threshold {threshold}) over "
               f"{len(verdicts)} item(s)" + (f"; holistic p_yes {hol.p_yes:.3f}" if hol else ""))
    result = RubricJudgeResult(audio=str(audio), instruction=instruction, items=kept, dropped=dropped,
                               verdicts=verdicts, score=round(score, 4), threshold=threshold, aligned=aligned,
                               holistic=hol, decomposed_by=decomposed_by, judged_by=judged_by, steps=steps,
                               substitutes=substitutes, models=models)
    rationale = " ".join(f"[{v.verdict} {v.p_yes:.2f}] {v.question}: {v.explanation}." for v in verdicts)
    path = session.finish(verdict, rationale, result, write=write_trace)
    result.trace_path = str(path) if path else None
    return result
