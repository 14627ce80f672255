"""Build a blind evaluation set from its data file (evals/unseen/<set>.toml).

    .venv/bin/python evals/unseen/build.py --set reasoning_v1|perception_v1|..._v2|..._v3|..._v4|..._v5|..._v6|..._v7|..._v8 --out DIR [--seed 0]

Writes DIR/items.jsonl ({"id","kind","question","choices","answer","audio"}, audio relative to DIR) and
DIR/audio/<id>.wav (16 kHz mono, 16-bit). Every answer is true by construction: the TOML says what is
spoken, played or cut, and this script only renders it. Choice order: the answer goes to position
(item index within its kind + kind index) mod number of choices, the distractors are shuffled by a
seeded RNG, so positions are balanced and the same seed gives byte-identical output.

Audio segments (rendered one after another, `gap` seconds of silence between, default 0.35):
  {say="text", voice="slt"|"espeak:en-us+whisper", rate=1.0}   flite / espeak-ng speech
      f0_sd=0                                                   flite only: int_f0_target_stddev (0 = monotone)
      f0_mean=170                                               flite only: int_f0_target_mean (Hz)
      espeak-ng reads [[...]] in the text as its phoneme mnemonics (a set pronunciation or stress)
  gain_db=-12 on any segment                                    scales that segment alone (0 dB if absent)
  reverse=true on any segment                                   plays that segment alone backwards
  {sound="bell", times=1, spacing=0.6}                          freedesktop theme sound(s)
  {tone=440, dur=0.5, wave="sine"|"square"|"saw"|"noise", amp=0.3}
  {tone=110, dur=4, wave="sweep", cutoff=[300, 4000]}          harmonics of `tone` under a low-pass whose
                                                                cutoff glides (log) from the first to the
                                                                second value; level held constant (50 ms RMS)
  {gap=0.5}                                                     silence
  {notes=[["C4",0.5],["E4",0.5]], program=0, hold=0.95}        fluidsynth notes, one after another; each
                                                                sounds for `hold` x its length (a third
                                                                element per note overrides it)
  {chord=["C4","E4","G4"], dur=1.5, program=0}                  fluidsynth notes at once
  {clicks=[0.0,0.5,1.0], freq=1200}                             short clicks at the given onsets (s)
  {vowel="a", f0=120, dur=1.5}                                  a steady sung vowel: a glottal pulse train at f0
                                                                through three formant resonators (VOWELS);
                                                                a/e/i/o/u = the vowels of father, bed, see, law,
                                                                food; `scale` multiplies the formants (1.17 for
                                                                a woman's voice); 60 ms ramps, peak 0.5
Item options: tracks=[{at=0.0, audio=[...], gain_db=0.0}, ...] (layers mixed at onsets, each scaled by its
gain_db if given; `fade=[in_s, out_s]` fades that layer linearly; `dur` cuts it to that many seconds
with a 5 ms ramp) instead of audio;
dropouts=[[t, len], ...] (silence cut into the clip); reverse=true; speed=0.7 (resampled playback);
noise_bed={start=["speech_start", -1.0], end=["speech_end", 1.5], db=-26} (pink noise laid relative to
the first track's active span); noise=true (pink noise over the whole clip at `noise_snr_db` of the set);
tone_bed={freq=100, partials=[1.0, 0.5], start=..., end=..., db=-30} (a steady tone with its harmonics, laid
like noise_bed, RMS at `db` re full scale); fade=[in_s, out_s] (linear fades over the mixed clip);
pops={at=[t, ...], amp=1.0} or pops={rate=12, amp=0.4} (0.5 ms broadband pops at the given times, or
round(rate x clip length) pops at seeded random times; amp is relative to the clip's peak);
keep=[from_s, to_s] (only that stretch of the mixed clip is kept, cut with 5 ms ramps where it cuts into
sound: a clip that starts or stops in the middle of a sentence);
stutter={at=t, len=l, times=n} (the stretch [t, t + l) of the mixed clip, before the lead silence, is played
n more times right after itself, like a skipping record; 3 ms ramps at each seam).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import tomllib
import zlib
from math import gcd
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

SR = 16000
HERE = Path(__file__).resolve().parent
THEME = Path("/usr/share/sounds/freedesktop/stereo")
SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
PC = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
# Formants F1-F3 (Hz) and bandwidths of adult male vowels (Peterson & Barney 1952 averages): the vowels of
# father (a), bed (e), see (i), law (o), food (u).
VOWELS = {"a": (730, 1090, 2440), "e": (530, 1840, 2480), "i": (270, 2290, 3010), "o": (570, 840, 2410),
          "u": (300, 870, 2240)}
VOWEL_BW = (90, 110, 170)


def load(path: Path) -> np.ndarray:
    y, sr = sf.read(str(path), dtype="float64", always_2d=True)
    y = y.mean(axis=1)
    if sr != SR:
        g = gcd(sr, SR)
        y = resample_poly(y, SR // g, sr // g)
    return y


def trim(y: np.ndarray, floor_db: float = -45.0) -> np.ndarray:
    """Cut the generators' leading/trailing near-silence (10 ms frames)."""
    f = int(0.01 * SR)
    n = len(y) // f
    if n == 0:
        return y
    rms = np.sqrt(np.mean(y[: n * f].reshape(n, f) ** 2, axis=1) + 1e-12)
    loud = np.flatnonzero(20 * np.log10(rms / rms.max()) > floor_db)
    return y[loud[0] * f: (loud[-1] + 1) * f] if len(loud) else y


def midi(name: str) -> int:
    pc, rest = PC[name[0].upper()], name[1:]
    while rest and rest[0] in "#b":
        pc, rest = pc + (1 if rest[0] == "#" else -1), rest[1:]
    return 12 * (int(rest) + 1) + pc


def vlq(n: int) -> bytes:
    out = [n & 0x7F]
    while n := n >> 7:
        out.append(0x80 | (n & 0x7F))
    return bytes(reversed(out))


def fluid(events: list[tuple[float, float, int]], program: int, tmp: Path) -> np.ndarray:
    """(start_s, dur_s, pitch) notes through fluidsynth + FluidR3_GM (reverb and chorus off), peak 0.5."""
    tps = 960  # ticks per second at 120 bpm, 480 ticks per quarter
    ev = sorted([(round(s * tps), 1, bytes([0x90, p, 100])) for s, d, p in events]
                + [(round((s + d) * tps), 0, bytes([0x80, p, 0])) for s, d, p in events])
    track, last = b"\x00\xff\x51\x03" + (500000).to_bytes(3, "big") + b"\x00" + bytes([0xC0, program]), 0
    for t, _, msg in ev:
        track, last = track + vlq(t - last) + msg, t
    track += b"\x00\xff\x2f\x00"
    mid, wav = tmp / "m.mid", tmp / "m.wav"
    mid.write_bytes(b"MThd" + bytes([0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0]) + b"MTrk" + len(track).to_bytes(4, "big") + track)
    subprocess.run(["fluidsynth", "-ni", "-q", "-R", "0", "-C", "0", "-g", "0.6", "-r", "44100", "-F", str(wav),
                    str(SOUNDFONT), str(mid)], check=True, capture_output=True)
    y = load(wav)[: int((max(s + d for s, d, _ in events) + 0.3) * SR)]
    return 0.5 * y / (np.abs(y).max() or 1.0)


def speak(text: str, voice: str, rate: float, tmp: Path, f0_sd: float | None = None,
          f0_mean: float | None = None) -> np.ndarray:
    raw = tmp / "s.wav"
    if voice.startswith("espeak:"):
        if f0_sd is not None or f0_mean is not None:
            raise ValueError("f0_sd and f0_mean are flite settings")
        subprocess.run(["espeak-ng", "-v", voice[7:], "-s", str(round(165 * rate)), "-w", str(raw), text], check=True)
    else:
        f0 = [] if f0_sd is None else ["--setf", f"int_f0_target_stddev={f0_sd}"]
        f0 += [] if f0_mean is None else ["--setf", f"int_f0_target_mean={f0_mean}"]
        subprocess.run(["flite", "--setf", f"duration_stretch={1 / rate:.4f}", *f0, "-voice", voice, "-t", text,
                        "-o", str(raw)], check=True)
    y = trim(load(raw))
    return 0.6 * y / (np.abs(y).max() or 1.0)


def wave(seg: dict, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(int(seg["dur"] * SR)) / SR
    f, kind = seg["tone"], seg.get("wave", "sine")
    if kind == "sine":
        y = np.sin(2 * np.pi * f * t)
    elif kind == "square":
        y = np.sign(np.sin(2 * np.pi * f * t)) * 0.6
    elif kind == "saw":
        y = (2 * ((f * t) % 1.0) - 1) * 0.7
    elif kind == "sweep":  # harmonics n*f at 1/n under a 4th-order low-pass gliding c0 -> c1, constant level
        c0, c1 = seg["cutoff"]
        fc = c0 * (c1 / c0) ** (t / t[-1])
        y = sum(np.sin(2 * np.pi * n * f * t) / n / np.sqrt(1 + (n * f / fc) ** 8)
                for n in range(1, int(0.45 * SR / f) + 1))
        w = int(0.05 * SR)
        env = np.sqrt(np.convolve(np.pad(y ** 2, w, mode="reflect"), np.ones(w) / w, mode="same")[w:-w] + 1e-12)
        y = 0.5 * y / env / np.abs(y / env).max()
    else:  # band of noise around f
        spec = np.fft.rfft(rng.standard_normal(len(t)))
        fr = np.fft.rfftfreq(len(t), 1 / SR)
        spec[(fr < f * 0.5) | (fr > f * 4)] = 0
        y = np.fft.irfft(spec, len(t))
        y = 0.5 * y / np.abs(y).max()
    ramp = np.ones_like(y)
    r = int(0.01 * SR)
    ramp[:r], ramp[-r:] = np.linspace(0, 1, r), np.linspace(1, 0, r)
    return seg.get("amp", 0.35) * y * ramp


def vowel(seg: dict) -> np.ndarray:
    """A steady vowel: a band-limited glottal pulse train at f0 (harmonics at -12 dB/octave) through three
    second-order formant resonators in cascade; true by construction (the formants are the table's)."""
    from scipy.signal import lfilter

    n, f0 = int(seg["dur"] * SR), float(seg.get("f0", 120.0))
    t = np.arange(n) / SR
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k ** 2 for k in range(1, int(0.45 * SR / f0) + 1))
    for fc, bw in zip(VOWELS[seg["vowel"]], VOWEL_BW, strict=True):
        fc, r = fc * seg.get("scale", 1.0), np.exp(-np.pi * bw / SR)
        a = [1.0, -2 * r * np.cos(2 * np.pi * fc / SR), r * r]
        y = lfilter([sum(a)], a, y)
    r = int(0.06 * SR)
    y[:r] *= np.linspace(0, 1, r)
    y[-r:] *= np.linspace(1, 0, r)
    return 0.5 * y / (np.abs(y).max() or 1.0)


def render(segs: list[dict], gap: float, rng: np.random.Generator, tmp: Path) -> np.ndarray:
    parts: list[np.ndarray] = []
    for seg in segs:
        if "gap" in seg:
            y = np.zeros(int(seg["gap"] * SR))
        elif "say" in seg:
            y = speak(seg["say"], seg.get("voice", "slt"), seg.get("rate", 1.0), tmp, seg.get("f0_sd"),
                      seg.get("f0_mean"))
        elif "sound" in seg:
            one = trim(load(THEME / f"{seg['sound']}.oga"))
            one = 0.5 * one / np.abs(one).max()
            sp = np.zeros(max(0, int(seg.get("spacing", 0.6) * SR) - len(one)))
            y = np.concatenate([np.concatenate([one, sp]) for _ in range(seg.get("times", 1))])[: -len(sp) or None]
        elif "tone" in seg:
            y = wave(seg, rng)
        elif "notes" in seg:
            t, ev = 0.0, []
            for name, d, *hold in seg["notes"]:
                ev.append((t, d * (hold[0] if hold else seg.get("hold", 0.95)), midi(name)))
                t += d
            y = fluid(ev, seg.get("program", 0), tmp)
        elif "chord" in seg:
            y = fluid([(0.0, seg["dur"], midi(n)) for n in seg["chord"]], seg.get("program", 0), tmp)
        elif "vowel" in seg:
            y = vowel(seg)
        elif "clicks" in seg:
            tt = np.arange(int(0.04 * SR)) / SR
            click = 0.6 * np.sin(2 * np.pi * seg.get("freq", 1200) * tt) * np.exp(-tt / 0.01)
            y = np.zeros(int((max(seg["clicks"]) + 0.1) * SR))
            for c in seg["clicks"]:
                y[int(c * SR): int(c * SR) + len(click)] += click
        else:
            raise ValueError(f"unknown segment {seg}")
        if "gain_db" in seg:
            y = y * 10 ** (seg["gain_db"] / 20)
        if seg.get("reverse"):
            y = y[::-1].copy()
        parts += [y, np.zeros(int(gap * SR))]
    return np.concatenate(parts[:-1])


def pink(n: int, rng: np.random.Generator) -> np.ndarray:
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    spec[1:] /= np.sqrt(f[1:])
    spec[0] = 0
    y = np.fft.irfft(spec, n)
    return y / np.sqrt(np.mean(y ** 2))


def active_span(y: np.ndarray) -> tuple[float, float]:
    f = int(0.02 * SR)
    n = len(y) // f
    rms = np.sqrt(np.mean(y[: n * f].reshape(n, f) ** 2, axis=1) + 1e-12)
    loud = np.flatnonzero(20 * np.log10(rms / rms.max()) > -35)
    return loud[0] * f / SR, (loud[-1] + 1) * f / SR


def shape_layer(y: np.ndarray, tr: dict) -> np.ndarray:
    """A track's own `dur` (cut, 5 ms ramp) and `fade = [in_s, out_s]` (linear); untouched without them."""
    if "dur" not in tr and "fade" not in tr:
        return y
    y = y.copy()
    if "dur" in tr and len(y) > int(tr["dur"] * SR):
        y, r = y[: int(tr["dur"] * SR)], int(0.005 * SR)
        y[-r:] *= np.linspace(1, 0, r)
    fi, fo = (int(v * SR) for v in tr.get("fade", [0.0, 0.0]))
    if fi:
        y[:fi] *= np.linspace(0, 1, fi)
    if fo:
        y[-fo:] *= np.linspace(1, 0, fo)
    return y


def build_item(item: dict, cfg: dict, rng: np.random.Generator, tmp: Path) -> np.ndarray:
    gap = item.get("gap", cfg.get("gap", 0.35))
    lead = cfg.get("lead_s", 0.4)
    if "tracks" in item:
        layers = [(tr.get("at", 0.0), render(tr["audio"], gap, rng, tmp)) for tr in item["tracks"]]
        layers = [(t, y * 10 ** (tr["gain_db"] / 20) if "gain_db" in tr else y)
                  for (t, y), tr in zip(layers, item["tracks"], strict=True)]
        layers = [(t, shape_layer(y, tr)) for (t, y), tr in zip(layers, item["tracks"], strict=True)]
    else:
        layers = [(0.0, render(item["audio"], gap, rng, tmp))]
    if "noise_bed" in item:
        nb = item["noise_bed"]
        s0, s1 = active_span(layers[0][1])
        ref = {"speech_start": layers[0][0] + s0, "speech_end": layers[0][0] + s1}
        a, b = ref[nb["start"][0]] + nb["start"][1], ref[nb["end"][0]] + nb["end"][1]
        shift = max(0.0, -a)
        layers = [(t + shift, y) for t, y in layers]
        a, b = a + shift, b + shift
        bed = pink(int((b - a) * SR), rng) * 10 ** (nb.get("db", -26) / 20)
        r = int(0.03 * SR)
        bed[:r] *= np.linspace(0, 1, r)
        bed[-r:] *= np.linspace(1, 0, r)
        layers.append((a, bed))
    if "tone_bed" in item:  # a steady tone (with harmonics) laid like noise_bed; no RNG drawn
        tb = item["tone_bed"]
        s0, s1 = active_span(layers[0][1])
        ref = {"speech_start": layers[0][0] + s0, "speech_end": layers[0][0] + s1}
        a, b = ref[tb["start"][0]] + tb["start"][1], ref[tb["end"][0]] + tb["end"][1]
        shift = max(0.0, -a)
        layers = [(t + shift, y) for t, y in layers]
        a, b = a + shift, b + shift
        tt = np.arange(int((b - a) * SR)) / SR
        bed = sum(g * np.sin(2 * np.pi * (k + 1) * tb["freq"] * tt) for k, g in enumerate(tb.get("partials", [1.0])))
        bed = bed / np.sqrt(np.mean(bed ** 2)) * 10 ** (tb.get("db", -30) / 20)
        r = int(0.03 * SR)
        bed[:r] *= np.linspace(0, 1, r)
        bed[-r:] *= np.linspace(1, 0, r)
        layers.append((a, bed))
    n = max(int(t * SR) + len(y) for t, y in layers)
    y = np.zeros(n)
    for t, part in layers:
        y[int(t * SR): int(t * SR) + len(part)] += part
    if "fade" in item:  # linear fade-in / fade-out over the mixed clip, seconds
        fi, fo = (int(v * SR) for v in item["fade"])
        if fi:
            y[:fi] *= np.linspace(0, 1, fi)
        if fo:
            y[-fo:] *= np.linspace(1, 0, fo)
    if "pops" in item:  # 0.5 ms broadband pops (8 samples), amplitude relative to the clip's peak
        pp = item["pops"]
        at = pp["at"] if "at" in pp else sorted(rng.uniform(0.1, n / SR - 0.1, round(pp["rate"] * n / SR)))
        pop = pp.get("amp", 1.0) * np.abs(y).max() * np.array([1.0, -0.9, 0.7, -0.5, 0.35, -0.2, 0.1, -0.05])
        for t in at:
            y[int(t * SR): int(t * SR) + len(pop)] += pop
    if "stutter" in item:  # a stretch replayed `times` more times right after itself (a skipping record)
        st = item["stutter"]
        a, b, r = int(st["at"] * SR), int((st["at"] + st["len"]) * SR), int(0.003 * SR)
        piece = y[a:b].copy()
        piece[:r] *= np.linspace(0, 1, r)
        piece[-r:] *= np.linspace(1, 0, r)
        head = y[:b].copy()
        head[-r:] *= np.linspace(1, 0, r)
        tail = y[b:].copy()
        tail[:r] *= np.linspace(0, 1, r)
        y = np.concatenate([head, *[piece] * st["times"], tail])
        n = len(y)
    for t, d in item.get("dropouts", []):
        a, b, r = int(t * SR), int((t + d) * SR), int(0.004 * SR)
        y[a - r: a] *= np.linspace(1, 0, r)
        y[a:b] = 0
        y[b: b + r] *= np.linspace(0, 1, r)
    if "keep" in item:  # keep [from_s, to_s) of the mixed clip; a 5 ms ramp where a cut falls inside it
        a, b, r = int(item["keep"][0] * SR), min(len(y), int(item["keep"][1] * SR)), int(0.005 * SR)
        y = y[a:b].copy()
        if a > 0:
            y[:r] *= np.linspace(0, 1, r)
        if b < n:
            y[-r:] *= np.linspace(1, 0, r)
    if item.get("reverse"):
        y = y[::-1].copy()
    if "speed" in item:  # played back at `speed` x: slower and lower (< 1)
        up = round(100 / item["speed"])
        g = gcd(up, 100)
        y = resample_poly(y, up // g, 100 // g)
    y = np.concatenate([np.zeros(int(lead * SR)), y, np.zeros(int(lead * SR))])
    if item.get("noise"):
        act = y[np.abs(y) > 1e-4]
        p = float(np.mean(act ** 2)) if act.size else 1e-4
        y = y + pink(len(y), rng) * np.sqrt(p / 10 ** (cfg["noise_snr_db"] / 10))
    return 0.8 * y / (np.abs(y).max() or 1.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", required=True, choices=[f"{k}_v{v}" for v in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) for k in ("reasoning", "perception")])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    data = tomllib.loads((HERE / f"{args.set}.toml").read_text())
    cfg = data.get("config", {})
    (args.out / "audio").mkdir(parents=True, exist_ok=True)
    rows, kinds = [], list(dict.fromkeys(it["kind"] for it in data["item"]))
    counter: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as td:
        for item in data["item"]:
            k = item["kind"]
            i = counter[k] = counter.get(k, -1) + 1
            iid = f"{args.set}-{k}-{i + 1}"
            key = zlib.crc32(iid.encode()) ^ args.seed
            choices = list(item["distractors"])
            random.Random(key).shuffle(choices)
            choices.insert((i + kinds.index(k)) % (len(choices) + 1), item["answer"])
            assert len(set(choices)) == len(choices) in (3, 4), iid
            y = build_item(item, cfg, np.random.default_rng(key), Path(td))
            rel = f"audio/{iid}.wav"
            sf.write(str(args.out / rel), y.astype(np.float32), SR, subtype="PCM_16")
            rows.append({"id": iid, "kind": k, "question": item["question"], "choices": choices,
                         "answer": item["answer"], "audio": rel})
    with open(args.out / "items.jsonl", "w") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"{len(rows)} items, {len(kinds)} kinds -> {args.out / 'items.jsonl'}")


if __name__ == "__main__":
    main()
