"""A small verifiable judge benchmark: (audio, instruction, aligned?) pairs per domain, true by construction.

Domains: speech (flite voices), sound (freedesktop theme sounds, sine beeps), music (General MIDI melodies
rendered by fluidsynth with FluidR3_GM), mix (speech with a sound or music). Every positive instruction
describes its audio exactly; negatives (1:1 with positives) are hard negatives made the two ways of
AnyAudio-Judge (seed 001): instruction swapping within the domain and attribute perturbation by rules
(gender, words, count, order, tempo, one sound or instrument swapped).

    .venv/bin/python evals/judges/generate.py --out evals/judges/data [--seed 0]
writes the audio and `items.jsonl` ({id, domain, audio, instruction, aligned, negative_kind, source_id}).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audiomind import audio as aio
from audiomind import synth
from audiomind.judges.rubric import perturb_instruction, swap_instructions

SR = synth.SR
SF2 = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
PROGRAMS = {"trumpet": 56, "violin": 40, "flute": 73, "saxophone": 65}


def _vlq(n: int) -> bytes:
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(reversed(out))


def write_midi(path: Path, notes: list[int], bpm: float, program: int = 0, channel: int = 0) -> Path:
    """A one-track Standard MIDI File: quarter notes at `bpm` on one General MIDI program."""
    ticks = 480
    ev = bytearray()
    ev += _vlq(0) + bytes([0xFF, 0x51, 0x03]) + int(60e6 / bpm).to_bytes(3, "big")
    if channel != 9:
        ev += _vlq(0) + bytes([0xC0 | channel, program])
    for n in notes:
        ev += _vlq(0) + bytes([0x90 | channel, n, 100])
        ev += _vlq(int(ticks * 0.9)) + bytes([0x80 | channel, n, 0])
        ev += _vlq(int(ticks * 0.1)) + bytes([0x80 | channel, n, 0])
    ev += _vlq(0) + bytes([0xFF, 0x2F, 0])
    data = b"MThd" + struct.pack(">IHHH", 6, 0, 1, ticks) + b"MTrk" + struct.pack(">I", len(ev)) + bytes(ev)
    path.write_bytes(data)
    return path


def render_midi(mid: Path, out: Path, max_s: float = 5.0) -> Path:
    """fluidsynth -> 16 kHz mono WAV, cut to `max_s` (the synthesiser's release tail is dropped)."""
    raw = out.with_suffix(".raw.wav")
    subprocess.run(["fluidsynth", "-ni", "-q", "-F", str(raw), "-r", str(SR), str(SF2), str(mid)], check=True,
                   capture_output=True)
    y = aio.load(raw, sr=SR, mono=True)[: int(max_s * SR)]
    raw.unlink(missing_ok=True)
    peak = float(np.max(np.abs(y))) or 1.0
    return aio.write_wav(out, (0.7 * y / peak).astype(np.float32), SR)


def melody(instrument: str, bpm: float, out: Path) -> Path:
    notes = [60, 62, 64, 65, 67, 65, 64, 62] * 3
    if instrument == "drums":
        mid = write_midi(out.with_suffix(".mid"), [36, 42, 38, 42] * 6, bpm, channel=9)
    else:
        mid = write_midi(out.with_suffix(".mid"), notes, bpm, program=PROGRAMS[instrument])
    return render_midi(mid, out)


def _mixdown(paths: list[Path], out: Path, offsets: list[float], gains_db: list[float]) -> Path:
    ys = [aio.load(p, sr=SR, mono=True) * (10 ** (g / 20)) for p, g in zip(paths, gains_db)]
    n = max(int(o * SR) + len(y) for y, o in zip(ys, offsets))
    mix = np.zeros(n, dtype=np.float32)
    for y, o in zip(ys, offsets):
        a = int(o * SR)
        mix[a:a + len(y)] += y
    peak = float(np.max(np.abs(mix))) or 1.0
    return aio.write_wav(out, (mix / max(peak, 1.0) * 0.95).astype(np.float32), SR)


def positives(out: Path) -> list[dict]:
    """(domain, audio, instruction) true by construction."""
    out.mkdir(parents=True, exist_ok=True)
    s = out / "src"
    s.mkdir(exist_ok=True)
    items: list[dict] = []

    def add(domain: str, path: Path, instruction: str) -> None:
        items.append({"id": f"{domain}{sum(i['domain'] == domain for i in items):02d}", "domain": domain,
                      "audio": str(path), "instruction": instruction})

    def sp(text: str, voice: str, name: str) -> Path:
        return synth.speech(text, s / f"{name}.wav", voice=voice)

    # speech
    add("speech", sp("good morning everyone", "slt", "sp_morning"), "A woman says 'good morning everyone'.")
    add("speech", sp("the train leaves at nine", "rms", "sp_train"), "A man says 'the train leaves at nine'.")
    add("speech", sp("please close the door", "awb", "sp_door"), "A man says 'please close the door'.")
    add("speech", sp("i like green apples", "slt", "sp_apples"), "A woman says 'i like green apples'.")
    conv = synth.conversation([("slt", "hello there"), ("rms", "goodbye my friend")], s / "sp_conv.wav")
    add("speech", conv, "A woman says 'hello there', then a man says 'goodbye my friend'.")
    conv2 = synth.conversation([("kal", "where is the station"), ("slt", "turn left at the bank")], s / "sp_conv2.wav")
    add("speech", conv2, "A man says 'where is the station', then a woman says 'turn left at the bank'.")
    # sound
    phone = synth.sound_file("phone-incoming-call", s / "phone.wav", repeat=2)
    paper = synth.sound_file("trash-empty", s / "paper.wav", repeat=2)
    busy = synth.sound_file("phone-outgoing-busy", s / "busy.wav")
    beeps3 = synth.beeps(3, s / "beeps3.wav")
    beeps5 = synth.beeps(5, s / "beeps5.wav", gap_s=0.4)
    add("sound", phone, "A telephone rings.")
    add("sound", beeps3, "Three short beeps.")
    add("sound", paper, "Paper crumpling.")
    add("sound", busy, "A busy signal.")
    add("sound", beeps5, "Five short beeps.")
    add("sound", synth.concat([phone, paper], s / "phone_then_paper.wav", gap_s=0.5),
        "A telephone rings, then paper crumples.")
    # music
    tr_fast = melody("trumpet", 160, s / "trumpet_fast.wav")
    vi_slow = melody("violin", 70, s / "violin_slow.wav")
    add("music", tr_fast, "A trumpet plays a fast melody.")
    add("music", vi_slow, "A violin plays a slow melody.")
    add("music", melody("flute", 160, s / "flute_fast.wav"), "A flute plays a fast melody.")
    add("music", melody("saxophone", 70, s / "sax_slow.wav"), "A saxophone plays a slow melody.")
    add("music", melody("drums", 150, s / "drums_fast.wav"), "Drums play a fast beat.")
    add("music", melody("trumpet", 70, s / "trumpet_slow.wav"), "A trumpet plays a slow melody.")
    # mix
    train = s / "sp_train.wav"
    morning = s / "sp_morning.wav"
    door = s / "sp_door.wav"
    apples = s / "sp_apples.wav"
    add("mix", _mixdown([train, phone], s / "mix_train_phone.wav", [0.0, 0.3], [0.0, -8.0]),
        "A man says 'the train leaves at nine' while a telephone rings.")
    add("mix", synth.concat([morning, beeps3], s / "mix_morning_beeps.wav", gap_s=0.3),
        "A woman says 'good morning everyone', then three short beeps.")
    add("mix", _mixdown([apples, vi_slow], s / "mix_apples_violin.wav", [0.5, 0.0], [0.0, -12.0]),
        "A woman says 'i like green apples' over violin music.")
    add("mix", synth.concat([paper, door], s / "mix_paper_door.wav", gap_s=0.3),
        "Paper crumples, then a man says 'please close the door'.")
    add("mix", _mixdown([train, busy], s / "mix_train_busy.wav", [0.2, 0.0], [0.0, -10.0]),
        "A man says 'the train leaves at nine' while a busy signal plays.")
    add("mix", _mixdown([morning, tr_fast], s / "mix_morning_trumpet.wav", [0.5, 0.0], [0.0, -12.0]),
        "A woman says 'good morning everyone' over trumpet music.")
    return items


PERTURB_ORDER = {"speech": ["gender", "words", "order"], "sound": ["count", "sound", "order"],
                 "music": ["sound", "tempo"], "mix": ["gender", "sound", "order", "words"]}


def build(out: Path, seed: int = 0) -> list[dict]:
    pos = positives(out)
    items = []
    for p in pos:
        items.append({**p, "aligned": True, "negative_kind": None, "source_id": p["id"]})
    for domain in ("speech", "sound", "music", "mix"):
        dom = [p for p in pos if p["domain"] == domain]
        perm = swap_instructions([p["instruction"] for p in dom], seed=seed)
        half = len(dom) // 2
        # first half of the positives get a swapped instruction, the second half a perturbed one (1:1 overall)
        for i, p in enumerate(dom):
            if i < half:
                items.append({**p, "id": p["id"] + "_swap", "instruction": dom[perm[i]]["instruction"], "aligned": False,
                              "negative_kind": "swap", "source_id": p["id"]})
                continue
            kinds = PERTURB_ORDER[domain][(i - half) % len(PERTURB_ORDER[domain]):] + PERTURB_ORDER[domain]
            for k in kinds:
                r = perturb_instruction(p["instruction"], k)
                if r is not None:
                    items.append({**p, "id": p["id"] + f"_{k}", "instruction": r[0], "aligned": False,
                                  "negative_kind": f"perturb:{k}", "source_id": p["id"]})
                    break
    (out / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return items


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    out: Path = typer.Option(Path(__file__).resolve().parent / "data", "--out",
                             help="folder for the audio and items.jsonl"),
    seed: int = typer.Option(0, help="generation seed"),
) -> None:
    """Generate the judge benchmark: audio + items.jsonl (aligned and hard-negative instructions)."""
    items = build(out, seed)
    by = {}
    for i in items:
        by.setdefault(i["domain"], [0, 0])[0 if i["aligned"] else 1] += 1
    print(json.dumps({"items": len(items), "by_domain_pos_neg": by, "out": str(out)}))

if __name__ == "__main__":
    app()
