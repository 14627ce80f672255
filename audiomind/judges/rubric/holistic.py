"""What the rubric judge gives a judge that cannot hear: the cascade's tool evidence as text, and the offline
holistic baseline (the instruction against the clip's tool caption)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from audiomind.judges import evidence as ev
from audiomind.judges.rubric.verify import Scene, _p, _sig
from audiomind.reasoning.facts import Facts


class HolisticVerdict(BaseModel):
    verdict: Literal["yes", "no", "unknown"]
    p_yes: float
    source: Literal["logprobs", "verdict", "rules"]
    explanation: str = ""


def evidence_text(f: Facts, scene: Scene | None = None) -> str:
    """The cascade's tool evidence as text, for a text LLM that cannot hear the audio."""
    lines = [f"Duration {f.duration_s:.2f} s."]
    labs = ", ".join(f"{k} {v:.2f}" for k, v in list(f.present_labels(0.15, ev.GENERIC).items())[:10])
    lines.append(f"Sound classes (YAMNet, strength 0-1): {labs or 'none detected'}.")
    if f.tags is not None and f.tags.events:
        lines.append("Sound events: " + "; ".join(f"{e.label} {e.start_s:.1f}-{e.end_s:.1f} s"
                                                  for e in f.tags.events[:12]) + ".")
    lines.append(f"Speech activity: {f.speech_s:.2f} s" + (
        " in " + ", ".join(f"{s.start_s:.1f}-{s.end_s:.1f} s" for s in f.speech_segments[:6]) if f.speech_segments else "")
        + ".")
    if f.text:
        lines.append(f"Transcript (Whisper): '{f.text}'.")
    if scene is not None and scene.segments:
        bits = []
        for i, s in enumerate(scene.segments[:10]):
            heard = next((x.heard for xs in scene.identities.values() for x in xs[i:i + 1]), [])
            bits.append(f"{s.start_s:.2f}-{s.end_s:.2f} s" + (
                f" ({', '.join(f'{ev.describe_label(lab)} {v:.2f}' for lab, v in heard[:3])})" if heard else ""))
        lines.append("Separate non-speech sounds (onset-aligned tags): " + "; ".join(bits) + ".")
    if f.pitch is not None and f.pitch.median_hz:
        lines.append(f"Median pitch: {f.pitch.median_hz:.0f} Hz.")
    if "tempo" in f.values:
        lines.append(f"Tempo: {float(f.values['tempo'].value):.0f} BPM.")
    if f.events is not None:
        lines.append(f"Separate sound events by energy: {f.events.count}.")
    if f.loudness is not None:
        lines.append(f"Loudness {f.loudness.integrated_lufs} LUFS, trend {f.loudness.trend}.")
    return "\n".join(lines)


def holistic_rule(instruction: str, f: Facts) -> HolisticVerdict:
    """The offline holistic baseline: MiniLM similarity of the instruction and the clip's tool caption."""
    from audiomind.embedded import text

    caption = ev.clip_caption(f, max_labels=5)
    sim = float(text.similarity([instruction], [caption])[0, 0])
    p = _p(_sig((sim - 0.45) / 0.08))
    return HolisticVerdict(verdict="yes" if p >= 0.5 else "no", p_yes=p, source="rules",
                           explanation=f"similarity {sim:.3f} between the instruction and the tool caption "
                                       f"'{caption}'; p = sigmoid((sim - 0.45) / 0.08)")
