"""Rule verification of rubric items: each item's measurement (voice activity, median f0, words heard,
speaking rate, sound presence, event counts, onsets, tempo, loudness trend) mapped to p(yes) through a
stated logistic curve; the extra measurements (pitch, tempo) are fetched only when an item needs them.
Also the offline holistic baseline and the tool evidence as text for a judge that cannot hear.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeSession
from audiomind.judges.rubric.decompose import RubricItem
from audiomind.state import ToolCallRequest, ToolCallStatus
from audiomind.tools.base import typed_output

GENDER_F0_HZ = 145.0  # between typical adult male (~85-155 Hz) and female (~165-255 Hz) speaking f0


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


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def _p(x: float) -> float:
    return round(min(0.98, max(0.02, x)), 4)


class ExtraMeasurements(BaseModel):
    """Measurements beyond the base perception pass, fetched only when an item needs them."""

    f0_median_hz: float | None = None
    f0_by_words: dict[str, float | None] = Field(default_factory=dict, description="quoted words -> median f0")
    bpm: float | None = None
    clear_beat: bool | None = None
    words_per_s: float | None = None


def measurements_needed(items: list[RubricItem]) -> set[str]:
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
                       gender_words: list[str | None] | None = None) -> ExtraMeasurements:
    from audiomind.tools.music import PitchOutput, TempoOutput

    out = ExtraMeasurements()
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


def verify(item: RubricItem, f: ev.ClipFacts, x: ExtraMeasurements) -> tuple[float, str]:
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


def evidence_text(f: ev.ClipFacts, x: ExtraMeasurements | None = None) -> str:
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


def holistic_rule(instruction: str, f: ev.ClipFacts) -> HolisticVerdict:
    """The offline holistic baseline: MiniLM similarity of the instruction and the clip's tool caption."""
    from audiomind.embedded import text

    caption = ev.clip_caption(f, max_labels=5)
    sim = float(text.similarity([instruction], [caption])[0, 0])
    p = _p(_sig((sim - 0.45) / 0.08))
    return HolisticVerdict(verdict="yes" if p >= 0.5 else "no", p_yes=p, source="rules",
                           explanation=f"similarity {sim:.3f} between the instruction and the tool caption "
                                       f"'{caption}'; p = sigmoid((sim - 0.45) / 0.08)")
