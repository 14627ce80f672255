"""The verifiable synthetic benchmark: MMAR-format items whose answers are true by construction.

Every item is generated from Debian's synthesizers (flite, espeak-ng, fluidsynth with FluidR3 GM, the
freedesktop sound theme) and numpy, through `audiomind.synth`. The generator knows what it put in the
clip (how many beeps, which tone is higher, when the speech starts, the key), so the answer needs no
annotator. Rows carry MMAR's fields (id, audio_path "./audio/<id>.wav", question, choices, answer as option
text, modality, category, sub-category, language, source, url, timestamp, thinking, cue, rubric) plus
`kind` and `construction` (the parameters the answer follows from), so the MMAR reader, scorer and
rubric judge work on it unchanged.

Deterministic by seed: item i of kind k draws everything (content, distractors, answer position) from
`numpy.random.default_rng([seed, crc32(k), i])`, so a subset or a different per-kind count yields the same
items, and the synthesizers themselves are deterministic (noise is numpy-generated from the same rng).
"""

from __future__ import annotations

import json
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from audiomind import audio as audio_io
from audiomind import synth
from audiomind.bench.items import BenchItem

SR = synth.SR
SOURCE = "synthetic"
BENCHMARK = "synthetic"
META_FILE = "meta.jsonl"
AUDIO_DIR = "audio"

# ---------------------------------------------------------------- content banks

SENTENCES = (
    "The library opens at nine every morning.",
    "Please close the window before you leave.",
    "My brother bought a new bicycle last week.",
    "The train to Boston is running twenty minutes late.",
    "We planted tomatoes and carrots in the garden.",
    "The concert was cancelled because of the storm.",
    "She forgot her umbrella at the coffee shop.",
    "Turn left at the bakery and walk two blocks.",
    "The museum has a new exhibit about ancient Egypt.",
    "Our flight departs from gate twelve at noon.",
    "He is learning to play the guitar.",
    "The soup needs a little more salt.",
    "Remember to water the plants on Friday.",
    "The children built a sandcastle on the beach.",
    "I lost my keys somewhere in the park.",
    "The meeting has been moved to Thursday afternoon.",
    "A strong wind knocked over the fence.",
    "The doctor will see you in ten minutes.",
    "They painted the kitchen bright yellow.",
    "The bridge is closed for repairs until spring.",
    "Can you pass me the salt and pepper?",
    "The dog chased a squirrel up the tree.",
    "We watched the sunset from the mountain top.",
    "The printer on the second floor is broken.",
)

WORD_TARGETS = ("apple", "water", "music", "window", "paper", "yellow", "doctor", "garden", "morning", "table",
                "river", "pencil")
WORD_CARRIERS = ("I see the {w}.", "Here is a {w}.", "She found the {w}.", "Look at that {w}!", "We need a {w}.",
                 "He painted the {w}.", "Bring me the {w}.", "That is my {w}.")

# espeak-ng voice -> (language name in the choices, sentences in that language)
LANGUAGE_SPEECH: dict[str, tuple[str, tuple[str, ...]]] = {
    "en-us": ("English", (
        "The weather is very nice today and we are going to the park.",
        "I would like a cup of coffee with milk, please.",
        "My sister works at the hospital and comes home late every evening.",
        "The train to the city leaves from the second platform in ten minutes.")),
    "es": ("Spanish", (
        "Hoy hace muy buen tiempo y vamos a ir al parque.",
        "Me gustaría una taza de café con leche, por favor.",
        "Mi hermana trabaja en el hospital y vuelve a casa tarde todas las noches.",
        "El tren a la ciudad sale del segundo andén dentro de diez minutos.")),
    "fr": ("French", (
        "Il fait très beau aujourd'hui et nous allons au parc.",
        "Je voudrais une tasse de café au lait, s'il vous plaît.",
        "Ma sœur travaille à l'hôpital et rentre tard à la maison tous les soirs.",
        "Le train pour la ville part du deuxième quai dans dix minutes.")),
    "de": ("German", (
        "Das Wetter ist heute sehr schön und wir gehen in den Park.",
        "Ich hätte gern eine Tasse Kaffee mit Milch, bitte.",
        "Meine Schwester arbeitet im Krankenhaus und kommt jeden Abend spät nach Hause.",
        "Der Zug in die Stadt fährt in zehn Minuten vom zweiten Bahnsteig ab.")),
    "it": ("Italian", (
        "Oggi il tempo è molto bello e andiamo al parco.",
        "Vorrei una tazza di caffè con latte, per favore.",
        "Mia sorella lavora in ospedale e torna a casa tardi ogni sera.",
        "Il treno per la città parte dal secondo binario tra dieci minuti.")),
}

# Sound sources whose identity the tagger can know, with the choice text that names them.
# modality: the MMAR modality the source contributes (speech / sound / music).
SOURCES: dict[str, dict[str, str]] = {
    "speech": {"text": "A person speaking", "modality": "speech", "cue": "speech"},
    "beeps": {"text": "A series of electronic beeps", "modality": "sound", "cue": "beeping"},
    "phone": {"text": "A telephone ringing", "modality": "sound", "cue": "telephone ring"},
    "crumple": {"text": "Paper being crumpled", "modality": "sound", "cue": "crumpling"},
    "camera": {"text": "A camera shutter clicking", "modality": "sound", "cue": "camera shutter"},
    "violin": {"text": "A violin playing", "modality": "music", "cue": "violin"},
    "trumpet": {"text": "A trumpet playing", "modality": "music", "cue": "trumpet"},
    "organ": {"text": "An organ playing", "modality": "music", "cue": "organ"},
}
GM_PROGRAM = {"violin": 40, "trumpet": 56, "organ": 19}
NOTE_NAMES = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")


# ---------------------------------------------------------------- item spec


@dataclass
class Spec:
    """What one generator made: choices[0] is the answer before shuffling."""

    question: str
    choices: list[str]
    modality: str
    truth: dict[str, Any]
    thinking: str
    cue: list[str]
    language: str | None = "en"
    rubric_points: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Kind:
    name: str
    category: str
    sub_category: str
    make: Callable[[np.random.Generator, Path, Path], Spec]
    quick: bool = True
    description: str = ""


# ---------------------------------------------------------------- helpers


def _pick(rng: np.random.Generator, seq: Iterable[Any], k: int | None = None) -> Any:
    items = list(seq)
    if k is None:
        return items[int(rng.integers(len(items)))]
    idx = rng.choice(len(items), size=k, replace=False)
    return [items[int(i)] for i in idx]


def _number_distractors(rng: np.random.Generator, truth: int, lo: int, hi: int, k: int = 3,
                        min_gap: int = 1) -> list[int]:
    pool = [n for n in range(lo, hi + 1) if abs(n - truth) >= min_gap]
    near = sorted(pool, key=lambda n: (abs(n - truth), n))[: max(k + 2, 5)]
    return sorted(int(x) for x in _pick(rng, near, k))


def _spaced_distractors(rng: np.random.Generator, truth: float, candidates: list[float], k: int,
                        min_gap: float) -> list[float]:
    """k values from candidates, each at least min_gap from the truth and from each other."""
    pool = [c for c in candidates if abs(c - truth) >= min_gap]
    for _ in range(100):
        chosen: list[float] = []
        for i in rng.permutation(len(pool)):
            c = pool[int(i)]
            if all(abs(c - x) >= min_gap for x in chosen):
                chosen.append(c)
            if len(chosen) == k:
                return chosen
    raise ValueError(f"cannot place {k} distractors {min_gap} apart around {truth}")


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _seconds(x: float) -> str:
    return f"{int(x)} second" + ("" if int(x) == 1 else "s")


def _pink_noise(rng: np.random.Generator, seconds: float, amplitude: float = 0.3) -> np.ndarray:
    n = int(seconds * SR)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    spec[1:] /= np.sqrt(f[1:])
    spec[0] = 0
    y = np.fft.irfft(spec, n)
    return (amplitude * y / (np.max(np.abs(y)) or 1.0)).astype(np.float32)


def _modality(parts: Iterable[str]) -> str:
    """MMAR's modality label for a set of source modalities (sound < music < speech in its names)."""
    s = set(parts)
    if len(s) == 1:
        return next(iter(s))
    return "mix-" + "-".join(m for m in ("sound", "music", "speech") if m in s)


def _sentence_voice(rng: np.random.Generator) -> tuple[str, str]:
    return _pick(rng, SENTENCES), _pick(rng, synth.FLITE_VOICES)


def render_source(name: str, rng: np.random.Generator, out: Path) -> Path:
    """One recognisable source as a trimmed clip (silence cut, so it is audible from its first sample)."""
    tmp = out.with_suffix(".raw.wav")
    if name == "speech":
        text, voice = _sentence_voice(rng)
        synth.speech(text, tmp, voice=voice)
    elif name == "beeps":
        # 2 kHz pips: lower beeps (0.6-1.2 kHz) are busy or dial tones to a listener (and to YAMNet)
        synth.beeps(int(rng.integers(3, 5)), tmp, freq_hz=2000.0, beep_s=0.12, gap_s=0.4, lead_s=0.0)
    elif name == "phone":
        synth.sound_file("phone-incoming-call", tmp, repeat=2)
    elif name == "crumple":
        synth.sound_file("trash-empty", tmp, repeat=2)
    elif name == "camera":
        one = out.with_suffix(".one.wav")
        synth.sound_file("camera-shutter", one)
        synth.concat([one, one, one], tmp, gap_s=0.4)
        one.unlink(missing_ok=True)
    elif name in GM_PROGRAM:
        tonic = int(rng.integers(57, 67))
        steps = [0, 2, 4, 5, 7, 5, 4, 2, 0]
        notes = [(0.05 + 0.35 * i, 0.33, tonic + s, 100) for i, s in enumerate(steps)]
        synth.midi_track(notes, tmp, program=GM_PROGRAM[name])
    else:
        raise ValueError(f"unknown source {name!r}")
    synth.trim_silence(tmp, out)
    tmp.unlink(missing_ok=True)
    return out


def _duration(path: Path) -> float:
    return audio_io.probe(path).duration_s


# ---------------------------------------------------------------- generators (one per kind)


def gen_counting(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    n = int(rng.integers(2, 10))
    variant = _pick(rng, ["beeps", "beeps", "camera", "chime"])
    if variant == "beeps":
        f = float(rng.choice([500, 700, 900, 1100, 1500, 2000]))
        beep_s, gap_s = float(rng.uniform(0.12, 0.3)), float(rng.uniform(0.25, 0.6))
        synth.beeps(n, out, freq_hz=f, beep_s=round(beep_s, 3), gap_s=round(gap_s, 3))
        q = _pick(rng, ["How many beeps are there in the audio?", "How many times does the tone sound?",
                        "Count the beeps: how many are there?"])
        truth = {"count": n, "source": "sine beeps", "freq_hz": f, "beep_s": round(beep_s, 3), "gap_s": round(gap_s, 3)}
        what = f"{n} separate {f:g} Hz beeps"
    else:
        name, step = ("camera-shutter", 1.2) if variant == "camera" else ("complete", 1.5)
        one = work / "one.wav"
        synth.sound_file(name, one)
        synth.place([(one, 0.5 + step * i) for i in range(n)], out, total_s=0.5 + step * n + 0.5)
        q = ("How many times does the camera shutter click?" if variant == "camera"
             else "How many chimes are heard in the recording?")
        truth = {"count": n, "source": f"freedesktop {name}", "onsets_s": [round(0.5 + step * i, 3) for i in range(n)]}
        what = f"{n} copies of the freedesktop '{name}' sound, {step:g} s apart"
    choices = [str(n)] + [str(d) for d in _number_distractors(rng, n, 1, 12)]
    return Spec(q, choices, "sound", truth, f"The clip was built from {what}, so the count is {n}.",
                ["repeated sound events", "counting"],
                rubric_points=[("Event segmentation", "separates the individual sound events"),
                               ("Count", f"counts exactly {n} events")])


def gen_tempo(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    bpm = int(rng.integers(12, 33)) * 5  # 60..160 in steps of 5
    variant = _pick(rng, ["click", "drums"])
    if variant == "click":
        synth.click_track(bpm, 8.0, out, lead_s=0.2)
        what = "metronome click track"
    else:
        synth.drum_pattern(bpm, 8.0, out)
        what = "drum-kit rock beat (kick/snare alternating, hi-hat on every beat)"
    # distractors: at least 15% away and not an octave error (half or double tempo) of the truth
    cands = [c for c in range(50, 201, 5)
             if abs(c - bpm) / bpm >= 0.15 and all(abs(c - bpm * r) / (bpm * r) >= 0.1 for r in (0.5, 2.0))]
    ds = _spaced_distractors(rng, bpm, cands, 3, 0.12 * bpm)
    choices = [f"{bpm} BPM"] + [f"{int(d)} BPM" for d in ds]
    q = _pick(rng, ["What is the tempo of this recording in beats per minute?",
                    "Approximately what is the tempo (BPM) of the beat?"])
    return Spec(q, choices, "music", {"bpm": bpm, "source": what},
                f"A {what} was rendered with exactly 60/{bpm} s between beats, i.e. {bpm} BPM.",
                ["steady beat", "tempo"],
                rubric_points=[("Beat detection", "identifies the regular beat"), ("Tempo", f"states about {bpm} BPM")])


def gen_pitch_compare(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    f1 = float(rng.uniform(220, 880))
    semis = int(rng.integers(3, 13)) * int(rng.choice([-1, 1]))
    f2 = f1 * 2 ** (semis / 12)
    variant = _pick(rng, ["sine", "piano"])
    if variant == "sine":
        synth.tone_sequence([round(f1, 1), round(f2, 1)], out, tone_s=0.6, gap_s=0.4)
    else:
        m1 = round(69 + 12 * np.log2(f1 / 440))
        m2 = m1 + semis
        f1, f2 = 440 * 2 ** ((m1 - 69) / 12), 440 * 2 ** ((m2 - 69) / 12)
        synth.midi_track([(0.3, 0.7, m1, 100), (1.3, 0.7, m2, 100)], out, program=0)
    ask_higher = bool(rng.integers(2))
    first_wins = (f1 > f2) == ask_higher
    q = ("Which of the two tones is higher in pitch?" if ask_higher else "Which of the two tones is lower in pitch?")
    right, wrong = ("The first tone", "The second tone") if first_wins else ("The second tone", "The first tone")
    choices = [right, wrong, "Both tones have the same pitch"]
    return Spec(q, choices, "music" if variant == "piano" else "sound",
                {"f1_hz": round(f1, 1), "f2_hz": round(f2, 1), "semitones": semis, "source": variant},
                f"The first tone is {f1:.0f} Hz and the second {f2:.0f} Hz ({semis:+d} semitones), so the "
                f"{'first' if first_wins else 'second'} is {'higher' if ask_higher else 'lower'}.",
                ["pitch", "two tones"],
                rubric_points=[("Pitch of each tone", "estimates the pitch of both tones"),
                               ("Comparison", (f"says the {'first' if first_wins else 'second'} tone is "
                                              f"{'higher' if ask_higher else 'lower'}"))])


CONTOURS = {
    "rising": "The pitch rises steadily",
    "falling": "The pitch falls steadily",
    "flat": "The pitch stays on the same note",
    "arch": "The pitch rises and then falls",
}


def gen_pitch_contour(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    shape = _pick(rng, list(CONTOURS))
    base = int(rng.integers(55, 70))
    step = int(rng.choice([2, 3, 4]))
    offs = {"rising": [0, 1, 2, 3, 4], "falling": [4, 3, 2, 1, 0], "flat": [0, 0, 0, 0, 0],
            "arch": [0, 1, 2, 1, 0]}[shape]
    pitches = [base + step * o for o in offs]
    variant = _pick(rng, ["sine", "piano"])
    if variant == "sine":
        synth.tone_sequence([440 * 2 ** ((p - 69) / 12) for p in pitches], out, tone_s=0.4, gap_s=0.15)
    else:
        synth.midi_track([(0.3 + 0.5 * i, 0.45, p, 100) for i, p in enumerate(pitches)], out, program=0)
    q = _pick(rng, ["How does the pitch of the melody change over time?",
                    "Which best describes the direction of the melody's pitch?"])
    choices = [CONTOURS[shape]] + [CONTOURS[s] for s in CONTOURS if s != shape]
    names = [NOTE_NAMES[p % 12] + str(p // 12 - 1) for p in pitches]
    return Spec(q, choices, "music" if variant == "piano" else "sound",
                {"shape": shape, "midi": pitches, "notes": names, "source": variant},
                f"The notes are {', '.join(names)}: the contour is {shape}.", ["melodic contour", "pitch"],
                rubric_points=[("Note pitches", "tracks the pitch of successive notes"),
                               ("Contour", f"describes the contour as {shape}")])


def gen_speech_content(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    sents = _pick(rng, SENTENCES, 4)
    voice = _pick(rng, synth.FLITE_VOICES)
    synth.speech(sents[0], out, voice=voice)
    q = _pick(rng, ["What does the speaker say?", "Which sentence is spoken in the recording?"])
    return Spec(q, list(sents), "speech", {"text": sents[0], "voice": voice},
                f"flite voice {voice} read the sentence {sents[0]!r}.", ["speech content"],
                rubric_points=[("Transcription", "recognises the spoken words"),
                               ("Selection", "picks the sentence that was read")])


def gen_speaker_count(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    k = int(rng.integers(1, 5))
    voices = _pick(rng, synth.FLITE_VOICES, k)
    n_turns = max(k + int(rng.integers(0, 2)), 3)
    order = list(voices) + [voices[int(i)] for i in rng.integers(0, k, n_turns - k)]
    if k > 1:  # adjacent turns by the same voice would merge into one turn
        for i in range(1, len(order)):
            if order[i] == order[i - 1]:
                order[i] = next(v for v in voices if v != order[i - 1] and (i + 1 >= len(order) or v != order[i + 1]))
    lines = list(zip(order, _pick(rng, SENTENCES, len(order))))
    synth.conversation(lines, out, gap_s=0.5)
    q = _pick(rng, ["How many different speakers are there in this recording?",
                    "How many distinct voices can be heard?"])
    choices = [str(k)] + [str(d) for d in _number_distractors(rng, k, 1, 5)]
    return Spec(q, choices, "speech", {"count": k, "voices": list(voices), "turns": [v for v, _ in lines]},
                f"The conversation has {len(lines)} turns by {k} flite voice(s): {', '.join(voices)}.",
                ["distinct voices", "turn taking"],
                rubric_points=[("Voice discrimination", "tells the voices apart"), ("Count", f"counts {k} speaker(s)")])


TRENDS = {
    "increasing": "It gets gradually louder",
    "decreasing": "It gets gradually quieter",
    "steady": "It stays at about the same level",
}
TREND_DISTRACTOR = "It is silent in the middle"


def gen_loudness_trend(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    trend = _pick(rng, list(TRENDS))
    src_kind = _pick(rng, ["noise", "tone", "speech"])
    src = work / "src.wav"
    if src_kind == "noise":
        audio_io.write_wav(src, _pink_noise(rng, 6.0), SR)
    elif src_kind == "tone":
        audio_io.write_wav(src, synth.tone(float(rng.choice([330, 440, 660])), 6.0), SR)
    else:
        a, b = _pick(rng, SENTENCES, 2)
        voice = _pick(rng, synth.FLITE_VOICES)
        p1, p2 = work / "s1.wav", work / "s2.wav"
        synth.speech(a, p1, voice=voice)
        synth.speech(b, p2, voice=voice)
        synth.concat([p1, p2], src, gap_s=0.2)
    span = float(rng.uniform(14, 24))
    start, end = {"increasing": (-span, 0.0), "decreasing": (0.0, -span), "steady": (0.0, 0.0)}[trend]
    synth.gain_ramp(src, out, start, end)
    q = _pick(rng, ["How does the loudness change over the course of the recording?",
                    "How does the volume of the sound develop from start to end?"])
    choices = [TRENDS[trend]] + [TRENDS[t] for t in TRENDS if t != trend] + [TREND_DISTRACTOR]
    return Spec(q, choices, "speech" if src_kind == "speech" else "sound",
                {"trend": trend, "start_db": round(start, 2), "end_db": round(end, 2), "source": src_kind},
                f"A linear gain ramp from {start:.1f} dB to {end:.1f} dB was applied to {src_kind}: {trend}.",
                ["loudness", "gain change"],
                rubric_points=[("Level over time", "follows the level from start to end"),
                               ("Trend", f"calls the trend {trend}")])


def gen_event_order(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    n = int(rng.choice([2, 2, 3]))
    names = _pick(rng, ["speech", "beeps", "phone", "crumple", "violin"], n)
    clips, t = [], 0.5
    onsets = []
    for i, name in enumerate(names):
        p = render_source(name, rng, work / f"src{i}.wav")
        clips.append((p, t))
        onsets.append(round(t, 3))
        t += _duration(p) + float(rng.uniform(0.8, 1.2))
    synth.place(clips, out, total_s=t - 0.5)
    ask_first = n == 2 or bool(rng.integers(2))
    target = names[0] if ask_first else names[-1]
    absent = [s for s in ("speech", "beeps", "phone", "crumple", "violin") if s not in names]
    others = [s for s in names if s != target] + _pick(rng, absent, 4 - n)
    q = ("Which sound is heard first?" if ask_first else "Which sound is heard last?")
    choices = [SOURCES[target]["text"]] + [SOURCES[s]["text"] for s in others]
    return Spec(q, choices, _modality(SOURCES[s]["modality"] for s in names),
                {"order": names, "onsets_s": onsets, "asked": "first" if ask_first else "last"},
                f"The sources were placed in the order {', '.join(names)} (onsets {onsets} s).",
                [SOURCES[s]["cue"] for s in names] + ["temporal order"],
                rubric_points=[("Sources", "identifies the sounds present"),
                               ("Order", f"places {target} {'first' if ask_first else 'last'}")])


def gen_onset_time(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    target = _pick(rng, ["speech", "speech", "phone", "beeps"])
    t0 = float(rng.integers(1, 8))
    p = render_source(target, rng, work / "src.wav")
    total = max(10.0, t0 + _duration(p) + 1.0)
    synth.place([(p, t0)], out, total_s=total)
    ds = _spaced_distractors(rng, t0, [float(x) for x in range(10)], 3, 2.0)
    choices = [f"At about {_seconds(t0)}"] + [f"At about {_seconds(d)}" for d in ds]
    q = {"speech": "At about what time does the speech start?",
         "phone": "At about what time does the telephone start ringing?",
         "beeps": "At about what time do the beeps start?"}[target]
    return Spec(q, choices, SOURCES[target]["modality"], {"onset_s": t0, "source": target, "clip_s": round(total, 3)},
                f"The {target} clip (silence trimmed) was placed at {t0:g} s on a silent {total:g} s track.",
                [SOURCES[target]["cue"], "onset time"],
                rubric_points=[("Silence before", "notices the silence before the sound"),
                               ("Onset", f"places the start at about {t0:g} s")])


def gen_key_mode(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    mode = _pick(rng, ["major", "minor"])
    tonic = int(rng.integers(55, 67))  # G3..F#4
    scale = [0, 2, 4, 5, 7, 9, 11, 12] if mode == "major" else [0, 2, 3, 5, 7, 8, 10, 12]
    triad = [0, 4, 7] if mode == "major" else [0, 3, 7]
    notes: list[tuple] = [(0.1 + 0.25 * i, 0.24, tonic + s, 90) for i, s in enumerate(scale)]
    t = 0.1 + 0.25 * len(scale) + 0.25
    # I-IV-V-I (major) / i-iv-v-i (natural minor): the tonic chord opens and closes the cadence
    for root in (0, 5, 7, 0):
        for iv in triad:
            notes.append((t, 0.95, tonic + root + iv, 80))
        notes.append((t, 0.95, tonic + root - 12, 70))
        t += 1.0
    program = int(rng.choice([0, 0, 19, 24]))
    synth.midi_track(notes, out, program=program)
    key = f"{NOTE_NAMES[tonic % 12]} {mode}"
    q = _pick(rng, ["Is this piece in a major or a minor key?", "What is the mode of this music?"])
    choices = [f"{mode.capitalize()} key", f"{'Minor' if mode == 'major' else 'Major'} key"]
    return Spec(q, choices, "music", {"mode": mode, "key": key, "tonic_midi": tonic, "gm_program": program},
                f"A {key} scale followed by a {'I-IV-V-I' if mode == 'major' else 'i-iv-v-i'} cadence in {key}.",
                ["scale", "triads", "mode"],
                rubric_points=[("Tonal centre", f"hears {NOTE_NAMES[tonic % 12]} as the tonal centre"),
                               ("Mode", f"identifies the {mode} third")])


def gen_sound_event(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    names = _pick(rng, list(SOURCES), 4)
    render_source(names[0], rng, work / "src.wav")
    synth.place([(work / "src.wav", 0.5)], out, total_s=_duration(work / "src.wav") + 1.0)
    q = _pick(rng, ["What sound can be heard in this recording?", "Which of these best describes the audio?"])
    return Spec(q, [SOURCES[n]["text"] for n in names], SOURCES[names[0]]["modality"], {"source": names[0]},
                f"The clip is a rendering of: {SOURCES[names[0]]['text'].lower()}.", [SOURCES[names[0]]["cue"]],
                rubric_points=[("Source identification", f"recognises {SOURCES[names[0]]['cue']}")])


def gen_speech_rate(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    text, voice = _sentence_voice(rng)
    fast, slow = round(float(rng.uniform(0.55, 0.75)), 2), round(float(rng.uniform(1.45, 1.8)), 2)
    fast_first = bool(rng.integers(2))
    pf, ps = work / "fast.wav", work / "slow.wav"
    synth.speech_stretched(text, pf, voice=voice, stretch=fast)
    synth.speech_stretched(text, ps, voice=voice, stretch=slow)
    synth.concat([pf, ps] if fast_first else [ps, pf], out, gap_s=1.2)
    ask_faster = bool(rng.integers(2))
    first_is_answer = fast_first == ask_faster
    q = ("The same sentence is spoken twice. Which time is it spoken faster?" if ask_faster
         else "The same sentence is spoken twice. Which time is it spoken more slowly?")
    right, wrong = ("The first time", "The second time") if first_is_answer else ("The second time", "The first time")
    choices = [right, wrong, "Both at the same speed"]
    return Spec(q, choices, "speech",
                {"text": text, "voice": voice, "fast_stretch": fast, "slow_stretch": slow,
                 "fast_first": fast_first, "asked": "faster" if ask_faster else "slower"},
                f"flite duration_stretch {fast} (fast) and {slow} (slow); the "
                f"{'fast' if fast_first else 'slow'} reading comes first.", ["speaking rate"],
                rubric_points=[("Rate of each reading", "compares the durations of the two readings"),
                               ("Selection", f"picks the {'first' if first_is_answer else 'second'} reading")])


def gen_word_repetition(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    target = _pick(rng, WORD_TARGETS)
    k = int(rng.integers(1, 5))
    others = _pick(rng, [w for w in WORD_TARGETS if w != target], int(rng.integers(2, 4)))
    seq = [target] * k + list(others)
    seq = [seq[int(i)] for i in rng.permutation(len(seq))]
    carriers = _pick(rng, WORD_CARRIERS, len(seq))
    text = " ".join(c.format(w=w) for c, w in zip(carriers, seq))
    voice = _pick(rng, synth.FLITE_VOICES)
    synth.speech(text, out, voice=voice)
    q = f'How many times does the speaker say the word "{target}"?'
    choices = [_times(k)] + [_times(d) for d in _number_distractors(rng, k, 1, 6)]
    return Spec(q, choices, "speech", {"word": target, "count": k, "text": text, "voice": voice},
                f"The script {text!r} contains {target!r} {_times(k)}.", ["spoken words", "repetition"],
                rubric_points=[("Transcription", "recognises the spoken words"), ("Count", f"counts {_times(k)}")])


def gen_duration(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    d = float(rng.integers(2, 13))
    variant = _pick(rng, ["clip", "tone"])
    if variant == "clip":
        y = _pink_noise(rng, d) if rng.integers(2) else synth.tone(float(rng.choice([300, 500, 800])), d)
        audio_io.write_wav(out, y, SR)
        q = _pick(rng, ["How long is this recording?", "What is the duration of the audio clip?"])
        what = f"the whole clip is {d:g} s"
    else:
        lead = float(rng.integers(1, 3))
        y = np.concatenate([synth.silence(lead), synth.tone(float(rng.choice([400, 600, 900])), d), synth.silence(1.0)])
        audio_io.write_wav(out, y, SR)
        q = "How long does the tone last?"
        what = f"one {d:g} s tone after {lead:g} s of silence"
    gap = max(2.0, 0.3 * d)
    ds = _spaced_distractors(rng, d, [float(x) for x in range(1, 25)], 3, gap)
    choices = [f"About {_seconds(d)}"] + [f"About {_seconds(x)}" for x in ds]
    return Spec(q, choices, "sound", {"duration_s": d, "variant": variant}, f"By construction {what}.",
                ["duration"], rubric_points=[("Duration", f"estimates about {d:g} s")])


def gen_language(rng: np.random.Generator, work: Path, out: Path) -> Spec:
    voices = _pick(rng, list(LANGUAGE_SPEECH), 4)
    name, sents = LANGUAGE_SPEECH[voices[0]]
    synth.speech(_pick(rng, sents), out, voice=voices[0], engine="espeak-ng")
    q = _pick(rng, ["What language is being spoken?", "In which language does the speaker talk?"])
    return Spec(q, [LANGUAGE_SPEECH[v][0] for v in voices], "speech", {"espeak_voice": voices[0], "language": name},
                f"espeak-ng voice {voices[0]} read a {name} sentence.", ["language"],
                language=voices[0].split("-")[0],
                rubric_points=[("Language identification", f"recognises {name}")])


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("counting", "Perception Layer", "Counting and Statistics", gen_counting, True, "beeps or repeated theme sounds"),
    Kind("tempo", "Perception Layer", "Music Theory", gen_tempo, True, "click track or drum beat at a set BPM"),
    Kind("pitch_compare", "Signal Layer", "Audio Difference Analysis", gen_pitch_compare, True,
         "which of two tones is higher/lower"),
    Kind("pitch_contour", "Perception Layer", "Music Theory", gen_pitch_contour, True, "rising/falling/flat/arch melody"),
    Kind("speech_content", "Semantic Layer", "Content Analysis", gen_speech_content, True, "which sentence is spoken"),
    Kind("speaker_count", "Perception Layer", "Counting and Statistics", gen_speaker_count, True, "1-4 flite voices"),
    Kind("loudness_trend", "Signal Layer", "Acoustic Quality Analysis", gen_loudness_trend, True,
         "linear gain ramp up/down or steady"),
    Kind("event_order", "Perception Layer", "Temporal Analysis", gen_event_order, False, "which source comes first/last"),
    Kind("onset_time", "Perception Layer", "Temporal Analysis", gen_onset_time, True, "when a sound starts"),
    Kind("key_mode", "Perception Layer", "Music Theory", gen_key_mode, True, "major or minor scale + cadence"),
    Kind("sound_event", "Perception Layer", "Environmental Perception and Reasoning", gen_sound_event, True,
         "which source is heard"),
    Kind("speech_rate", "Signal Layer", "Audio Difference Analysis", gen_speech_rate, True,
         "same sentence read fast and slow"),
    Kind("word_repetition", "Perception Layer", "Counting and Statistics", gen_word_repetition, True,
         "how often a word is said"),
    Kind("duration", "Perception Layer", "Temporal Analysis", gen_duration, True, "length of a clip or a tone"),
    Kind("language", "Cultural Layer", "Culture of Speaker", gen_language, True, "espeak-ng en/es/fr/de/it"),
)}


# ---------------------------------------------------------------- rows, files, items


def item_rng(seed: int, kind: str, index: int) -> np.random.Generator:
    """The one random source of an item: independent of which other kinds or how many items are made."""
    return np.random.default_rng([int(seed), zlib.crc32(kind.encode()), int(index)])


def _rubric(spec: Spec, answer: str) -> list[dict[str, Any]]:
    rows = [{"name": f"Cue identification: {name}", "scoring_point": f"Award 1 point if the test-taker {point}.",
             "note": "Checked against the generator's construction parameters.", "choices": [0, 1]}
            for name, point in spec.rubric_points]
    rows.append({"name": "Correct selection", "scoring_point": f"Award 1 point if the test-taker selects {answer!r}.",
                 "note": "The answer is true by construction.", "choices": [0, 1]})
    return rows


def make_item(kind: str, seed: int, index: int, audio_dir: str | Path) -> dict[str, Any]:
    """Generate one item: writes audio_dir/<id>.wav and returns its MMAR-format meta row."""
    spec_kind = KINDS[kind]
    rng = item_rng(seed, kind, index)
    item_id = f"syn-{kind}-s{seed}-{index:04d}"
    audio_dir = Path(audio_dir)
    audio_dir.mkdir(parents=True, exist_ok=True)
    out = audio_dir / f"{item_id}.wav"
    with tempfile.TemporaryDirectory(prefix="audiomind-syn-") as tmp:
        spec = spec_kind.make(rng, Path(tmp), out)
    answer = spec.choices[0]
    if len(set(spec.choices)) != len(spec.choices):
        raise AssertionError(f"{item_id}: duplicate choices {spec.choices}")
    order = rng.permutation(len(spec.choices))
    choices = [spec.choices[int(i)] for i in order]
    duration = audio_io.probe(out).duration_s
    return {
        "id": item_id,
        "audio_path": f"./{AUDIO_DIR}/{item_id}.wav",
        "question": spec.question,
        "choices": choices,
        "answer": answer,
        "modality": spec.modality,
        "category": spec_kind.category,
        "sub-category": spec_kind.sub_category,
        "language": spec.language,
        "source": SOURCE,
        "url": None,
        "timestamp": f"00:00:00,{_hms(duration)}",
        "thinking": spec.thinking,
        "cue": spec.cue,
        "rubric": _rubric(spec, answer),
        "kind": kind,
        "construction": {**spec.truth, "seed": seed, "index": index, "answer_index": choices.index(answer)},
    }


def _hms(seconds: float) -> str:
    s = int(np.ceil(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def generate(out_dir: str | Path, per_kind: int = 10, seed: int = 0, kinds: Iterable[str] | None = None,
             progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Write OUT/meta.jsonl (MMAR format) and OUT/audio/<id>.wav for `per_kind` items of each kind."""
    out_dir = Path(out_dir)
    names = list(kinds) if kinds else list(KINDS)
    unknown = [k for k in names if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
    rows: list[dict[str, Any]] = []
    for kind in names:
        for i in range(per_kind):
            rows.append(make_item(kind, seed, i, out_dir / AUDIO_DIR))
            if progress:
                progress(rows[-1]["id"])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return rows


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """meta.jsonl rows (pass the file or the set's folder)."""
    p = Path(path)
    if p.is_dir():
        p = p / META_FILE
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def to_item(row: dict[str, Any], root: str | Path) -> BenchItem:
    """A BenchItem for the runner; `root` is the set's folder (the one holding meta.jsonl and audio/)."""
    meta = {k: row.get(k) for k in ("kind", "modality", "category", "sub-category", "language", "source")}
    return BenchItem(id=row["id"], benchmark=BENCHMARK, audio_path=str((Path(root) / row["audio_path"]).resolve()),
                     question=row["question"], choices=list(row["choices"]), answer=row["answer"], metadata=meta,
                     raw=row)


def load_items(path: str | Path, kinds: Iterable[str] | None = None) -> list[BenchItem]:
    p = Path(path)
    root = p if p.is_dir() else p.parent
    wanted = set(kinds) if kinds else None
    return [to_item(r, root) for r in load_rows(p) if wanted is None or r.get("kind") in wanted]


def is_correct(item: BenchItem, prediction: str | None, choice_index: int | None = None) -> bool:
    """Exact option match (the agent answers with one choice verbatim), or by the chosen index."""
    if choice_index is not None and 0 <= choice_index < len(item.choices):
        return item.choices[choice_index] == item.answer
    return (prediction or "").strip().casefold() == (item.answer or "").strip().casefold()


def random_baseline(rows: Iterable[dict[str, Any]]) -> float:
    """Expected accuracy of a uniformly random choice: the mean of 1 / number of choices."""
    xs = [1.0 / len(r["choices"]) for r in rows if r.get("choices")]
    return float(np.mean(xs)) if xs else 0.0
