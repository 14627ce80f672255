"""Pseudo-paired audio-editing data by mixing (seed 000, section 2.2): an original clip, its edited
counterpart, the instruction, and the difference and commonality captions that are true by construction.

Three operations, with the seed's commonality rule:
- add:     original = background;          edited = background + event;  commonality = the original caption
- delete:  original = background + event;  edited = background;          commonality = the edited caption
- replace: original = background + event1; edited = background + event2; commonality = the captions' intersection
The difference caption names the edit ("The edited audio adds a telephone ringing."). The background is
bit-identical in both clips (events are scaled, never the background), so preservation is exact.

`default_sources` makes a small source set from Debian's generators (flite voices, the freedesktop sound
theme, sine beeps); `build_pairs` draws random (seeded) edits from any sources and writes a JSONL manifest.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from audiomind import audio as aio
from audiomind import synth

SR = synth.SR
Operation = Literal["add", "delete", "replace"]

# Sound phrases used for the CIDEr-D background corpus (document frequencies) of single-pair scoring.
SOUND_VOCAB = (
    "a telephone ringing", "a busy signal", "paper crumpling", "beeps", "an alarm", "music", "a trumpet melody",
    "a violin melody", "a flute melody", "drums", "an organ chord", "ocean waves", "rain", "wind", "a dog barking",
    "a cat meowing", "birds chirping", "a car engine", "a siren", "footsteps", "a door knocking", "applause",
    "a crowd cheering", "a baby crying", "laughter", "a bell ringing", "water running", "a clock ticking",
    "typing on a keyboard", "a man speaking", "a woman speaking", "speech", "a camera shutter", "an engine idling",
)


def background_captions() -> list[str]:
    """Captions in the judges' caption grammar over SOUND_VOCAB (CIDEr-D document frequencies only)."""
    out = []
    vocab = list(SOUND_VOCAB)
    for i, x in enumerate(vocab):
        y = vocab[(i + 7) % len(vocab)]
        out += [difference_caption("add", [x], []), difference_caption("delete", [], [x]),
                difference_caption("replace", [y], [x]), f"{x} and {y}"]
    return out


class Source(BaseModel):
    """A labelled source clip: what it is, in caption words."""

    path: str
    caption: str
    kind: Literal["background", "event"] = "event"


class EditPair(BaseModel):
    """One pseudo-paired edit with its captions, true by construction."""

    id: str
    operation: Operation
    instruction: str
    original_path: str
    edited_path: str
    original_caption: str
    edited_caption: str
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    difference_caption: str
    commonality_caption: str
    params: dict = Field(default_factory=dict)


# ---------------------------------------------------------------- captions (shared with the edit judge)


def join_caption(parts: list[str]) -> str:
    parts = [p.strip() for p in parts if p and p.strip()]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def difference_caption(op: str, added: list[str], removed: list[str]) -> str:
    if op == "replace" and added and removed:
        return f"The edited audio replaces {join_caption(removed)} with {join_caption(added)}."
    if op == "add" and added:
        return f"The edited audio adds {join_caption(added)}."
    if op == "delete" and removed:
        return f"The edited audio removes {join_caption(removed)}."
    bits = []
    if removed:
        bits.append(f"removes {join_caption(removed)}")
    if added:
        bits.append(f"adds {join_caption(added)}")
    return ("The edited audio " + " and ".join(bits) + ".") if bits else "There is no audible difference."


def split_caption(caption: str) -> list[str]:
    """Clauses of a caption ('speech, a telephone ringing and beeps' -> three clauses); quoted words
    ('a man saying "over and out"') are never split."""
    import re

    quotes: list[str] = []

    def hide(m: re.Match) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    masked = re.sub(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|(?:(?<=^)|(?<=[\s:,]))'[^']*'(?=$|[\s.,;:!?])", hide, caption)
    parts = re.split(r"\s*(?:,|;|\band\b|\bwhile\b|\bwith\b|\bas\b|\bthen\b|\bfollowed by\b|\bover\b)\s*", masked)
    out = []
    for p in parts:
        p = re.sub("\x00(\\d+)\x00", lambda m: quotes[int(m.group(1))], p).strip(" .")
        if p:
            out.append(p)
    return out


def commonality_caption(op: str, original_caption: str, edited_caption: str) -> str:
    """The seed's rule: add -> the original caption; delete -> the edited caption; replace -> intersection."""
    if op == "add":
        return original_caption
    if op == "delete":
        return edited_caption
    a = split_caption(original_caption)
    b = {c.lower() for c in split_caption(edited_caption)}
    return join_caption([c for c in a if c.lower() in b])


# ---------------------------------------------------------------- mixing


def _fit(event: np.ndarray, n: int, offset: int) -> np.ndarray:
    room = max(0, n - offset)
    return event[:room]


def mix_event(base: np.ndarray, event: np.ndarray, offset_s: float, gain_db: float) -> np.ndarray:
    """base + event (scaled by gain_db, placed at offset_s, cut to the base's length). If the sum would
    clip, only the event is scaled down further, so the base stays bit-identical."""
    out = base.astype(np.float32).copy()
    off = round(offset_s * SR)
    ev = _fit(event.astype(np.float32) * np.float32(10 ** (gain_db / 20)), len(out), off)
    seg = out[off: off + len(ev)]
    for _ in range(20):
        if np.max(np.abs(seg + ev), initial=0.0) <= 0.99:
            break
        ev = ev * np.float32(0.8)
    out[off: off + len(ev)] = seg + ev
    return out


def _load(path: str | Path) -> np.ndarray:
    return aio.load(path, sr=SR, mono=True).astype(np.float32)


def make_pair(op: Operation, background: Source, event: Source, out_dir: str | Path, *, pair_id: str,
              new_event: Source | None = None, offset_s: float = 0.5, gain_db: float = 0.0) -> EditPair:
    """One edit of `background` with `event` (and `new_event` for replace), written as two WAVs."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bg = _load(background.path)
    ev = _load(event.path)
    if op == "add":
        orig, edited = bg, mix_event(bg, ev, offset_s, gain_db)
        oc, ec = background.caption, join_caption([background.caption, event.caption])
        added, removed, instr = [event.caption], [], f"Add {event.caption}."
    elif op == "delete":
        orig, edited = mix_event(bg, ev, offset_s, gain_db), bg
        oc, ec = join_caption([background.caption, event.caption]), background.caption
        added, removed, instr = [], [event.caption], f"Remove {event.caption}."
    elif op == "replace":
        if new_event is None:
            raise ValueError("replace needs new_event")
        orig = mix_event(bg, ev, offset_s, gain_db)
        edited = mix_event(bg, _load(new_event.path), offset_s, gain_db)
        oc = join_caption([background.caption, event.caption])
        ec = join_caption([background.caption, new_event.caption])
        added, removed = [new_event.caption], [event.caption]
        instr = f"Replace {event.caption} with {new_event.caption}."
    else:  # pragma: no cover - Literal guards it
        raise ValueError(f"unknown operation {op!r}")
    op_path, ed_path = out / f"{pair_id}_original.wav", out / f"{pair_id}_edited.wav"
    aio.write_wav(op_path, orig, SR)
    aio.write_wav(ed_path, edited, SR)
    return EditPair(
        id=pair_id, operation=op, instruction=instr, original_path=str(op_path), edited_path=str(ed_path),
        original_caption=oc, edited_caption=ec, added=added, removed=removed,
        difference_caption=difference_caption(op, added, removed),
        commonality_caption=commonality_caption(op, oc, ec),
        params={"offset_s": offset_s, "gain_db": gain_db, "background": background.path, "event": event.path,
                **({"new_event": new_event.path} if new_event else {})},
    )


def build_pairs(backgrounds: list[Source], events: list[Source], n: int, out_dir: str | Path, *, seed: int = 0,
                operations: tuple[Operation, ...] = ("add", "delete", "replace")) -> list[EditPair]:
    """`n` random edits (seeded), cycling through the operations; writes `pairs.jsonl` beside the audio."""
    if not backgrounds or len(events) < 2:
        raise ValueError("need at least one background and two events")
    rng = random.Random(seed)
    out = Path(out_dir)
    pairs = []
    for i in range(n):
        op = operations[i % len(operations)]
        bg = rng.choice(backgrounds)
        ev, ev2 = rng.sample(events, 2)
        bg_dur = aio.probe(bg.path).duration_s
        offset = round(rng.uniform(0.2, max(0.3, bg_dur * 0.4)), 2)
        gain = round(rng.uniform(-6.0, 0.0), 1)
        pairs.append(make_pair(op, bg, ev, out, pair_id=f"pair{i:04d}", new_event=ev2 if op == "replace" else None,
                               offset_s=offset, gain_db=gain))
    (out / "pairs.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in pairs))
    return pairs


def load_pairs(path: str | Path) -> list[EditPair]:
    return [EditPair.model_validate(json.loads(line)) for line in Path(path).read_text().splitlines() if line.strip()]


def default_sources(out_dir: str | Path, tail_s: float = 2.5) -> tuple[list[Source], list[Source]]:
    """Backgrounds (flite speech of two voices, followed by `tail_s` of silence where events can sit beside
    the speech) and events (freedesktop sounds, beeps) made here."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    def speech_bg(text: str, voice: str, name: str, tail_s: float) -> str:
        raw = synth.speech(text, out / f"{name}_raw.wav", voice=voice)
        y = np.concatenate([_load(raw), synth.silence(tail_s)])
        return str(aio.write_wav(out / f"{name}.wav", y, SR))

    bgs = [
        Source(path=speech_bg("the quick brown fox jumps over the lazy dog", "slt", "bg_fox", tail_s),
               caption="a woman saying 'the quick brown fox jumps over the lazy dog'", kind="background"),
        Source(path=speech_bg("please remember to close the window before you leave", "rms", "bg_window", tail_s),
               caption="a man saying 'please remember to close the window before you leave'", kind="background"),
    ]
    evs = [
        Source(path=str(synth.sound_file("phone-incoming-call", out / "ev_phone.wav")), caption="a telephone ringing"),
        Source(path=str(synth.sound_file("trash-empty", out / "ev_paper.wav", repeat=2)), caption="paper crumpling"),
        Source(path=str(synth.sound_file("phone-outgoing-busy", out / "ev_busy.wav")), caption="a busy signal"),
        Source(path=str(synth.beeps(3, out / "ev_beeps.wav", lead_s=0.05)), caption="beeps"),
    ]
    return bgs, evs
