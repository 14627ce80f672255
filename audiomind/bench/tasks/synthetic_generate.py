"""The verifiable synthetic benchmark's generator: MMAR-format items whose answers are true by construction.

(Reading a generated set, scoring and the evaluation table are the `synthetic` task:
audiomind/bench/tasks/synthetic.py.)

Every item is generated from Debian's synthesizers (flite, espeak-ng, fluidsynth with FluidR3 GM, the
freedesktop sound theme) and numpy, through `audiomind.synth`. The generator knows what it put in the
clip (how many beeps, which tone is higher, when the speech starts, the key), so the answer needs no
annotator. Rows carry MMAR's fields (id, audio_path "./audio/<id>.wav", question, choices, answer as option
text, modality, category, sub-category, language, source, url, timestamp, thinking, cue, rubric) plus
`kind`, `split` and `construction` (the parameters the answer follows from), so the MMAR reader, scorer and
rubric judge work on it unchanged.

Splits (three evaluation sets, each an MMAR-format folder):

- `dev`: dev phrasings, clean audio, dev voices (flite slt, kal, awb): what a policy may be developed on.
- `heldout_phrasing`: the same items worded with the held-out phrasing bank (questions and choices), so an
  accuracy claim on unseen wordings can be made; the audio is the dev audio.
- `heldout_condition`: dev phrasings, but the audio under one held-out condition (additive white / pink /
  babble-like noise at 10-40 dB SNR, peak level -40..-3 dBFS, 8 / 44.1 / 48 kHz, stereo with a pan, a
  distractor sound) and, for speech, held-out voices (flite rms, kal16; espeak-ng variants). Each kind
  declares the conditions under which its answer stays true (`Kind.conditions`, `Kind.min_snr_db`).

The phrasings live in `synthetic_phrasings.toml` next to this module (banks `dev` and `heldout` per kind).
Kinds flagged `needs_step` need one step of reasoning on top of perception (the day after a spoken day, the
list item not mentioned, the beeps before the voice, the louder tone, the stereo side, the first speaker's
sex) and are reported as their own group.

Deterministic: an item depends only on (seed, kind, index, split). Its content (counts, sentences, pitches)
comes from `numpy.random.default_rng([seed, crc32(kind), index])`, shared by the three splits, so item i
of a kind is the same question in every split, only worded (heldout_phrasing) or rendered
(heldout_condition) differently: the splits are paired. Wording, voices and the condition each draw from
their own stream of the same key; noise is numpy-generated from the condition stream, and the synthesizers
are deterministic.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from audiomind import audio as audio_io
from audiomind import synth

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

SR = synth.SR
SOURCE = "synthetic"
BENCHMARK = "synthetic"
META_FILE = "meta.jsonl"
AUDIO_DIR = "audio"
PHRASINGS_FILE = Path(__file__).with_name("synthetic_phrasings.toml")

SPLITS = ("dev", "heldout_phrasing", "heldout_condition")
PHRASING_BANK = {"dev": "dev", "heldout_phrasing": "heldout", "heldout_condition": "dev"}
VOICE_SPLIT = {"dev": "dev", "heldout_phrasing": "dev", "heldout_condition": "heldout"}
MAX_CLIP_S = 12.0

# Held-out conditions (one family per heldout_condition item).
CONDITIONS = ("noise", "level", "rate", "stereo", "distractor", "voice")
NOISES = ("white", "pink", "babble")
SNRS_DB = (10, 20, 30, 40)
LEVEL_RANGE_DBFS = (-40.0, -3.0)
RATES = (8000, 44100, 48000)  # 16000 is the clean rate
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")


@dataclass(frozen=True)
class Voice:
    """A synthetic voice: `spec` for synth.say, its sex, who it sounds like (kal and kal16 are one speaker;
    espeak-ng variants of one sex count as one speaker), and its split."""

    spec: str
    gender: str
    identity: str
    split: str


# flite's awb_time is left out: a limited-domain voice that can only say clock times.
VOICES: tuple[Voice, ...] = (
    Voice("flite:slt", "female", "slt", "dev"),
    Voice("flite:kal", "male", "kal", "dev"),
    Voice("flite:awb", "male", "awb", "dev"),
    Voice("flite:rms", "male", "rms", "heldout"),
    Voice("flite:kal16", "male", "kal", "heldout"),
    Voice("espeak-ng:en+f3", "female", "espeak-female", "heldout"),
    Voice("espeak-ng:en-gb-x-rp+f2", "female", "espeak-female", "heldout"),
    Voice("espeak-ng:en-us+f4", "female", "espeak-female", "heldout"),
    Voice("espeak-ng:en-us+m2", "male", "espeak-male", "heldout"),
    Voice("espeak-ng:en-gb", "male", "espeak-male", "heldout"),
    Voice("espeak-ng:en+m3", "male", "espeak-male", "heldout"),
)
VOICE_BY_SPEC = {v.spec: v for v in VOICES}
ESPEAK_NORMAL_WPM = (150, 195)  # held-out espeak-ng voices speak at a normal rate drawn from this range
LANGUAGE_VARIANTS = ("f2", "f3", "m2", "m3")  # held-out variants of the language kind's espeak-ng voices

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


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DAY_SENTENCES = (
    "The meeting is on {day}.",
    "Our next game is on {day} evening.",
    "The shop will be closed on {day}.",
    "I will call you back on {day}.",
    "The package should arrive on {day}.",
    "Her birthday party is on {day}.",
    "We are flying to Denver on {day} morning.",
    "The dentist appointment is on {day} at ten.",
)

# theme -> (sentence with {items}, items: plural or mass nouns sharing no word with each other)
LIST_THEMES: dict[str, tuple[str, tuple[str, ...]]] = {
    "picnic": ("For the picnic we need {items}.",
               ("bread", "cheese", "apples", "lemonade", "grapes", "napkins", "crackers", "sandwiches")),
    "trip": ("Don't forget to pack {items} for the trip.",
             ("sunscreen", "towels", "sandals", "sunglasses", "swimsuits", "snacks", "maps", "hats")),
    "office": ("At the store, please get {items}.",
               ("pencils", "envelopes", "stamps", "folders", "scissors", "batteries", "tape", "notebooks")),
    "breakfast": ("This morning I had {items}.",
                  ("toast", "eggs", "yogurt", "coffee", "bananas", "cereal", "juice", "pancakes")),
    "farm": ("On the farm we saw {items}.",
             ("cows", "horses", "goats", "chickens", "pigs", "sheep", "ducks", "rabbits")),
}

# verb (slot group of the phrasing bank) -> (spoken requests with {obj}, objects)
INSTRUCTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bring": (("Please bring your {obj} to the meeting tomorrow.", "Don't forget to bring your {obj} on Monday."),
              ("laptop", "notebook", "umbrella", "passport", "calculator", "headphones", "charger", "badge")),
    "buy": (("Could you buy some {obj} on your way home?", "Please buy {obj} when you go to the market."),
            ("milk", "bread", "eggs", "rice", "coffee", "butter", "apples", "flour")),
    "pick_up": (("Remember to pick up the {obj} from the front desk.", "Can you pick up the {obj} after lunch?"),
                ("keys", "parcel", "tickets", "letters", "documents", "flowers")),
    "return": (("Please return the {obj} to the office by Friday.", "Could you return the {obj} you borrowed?"),
               ("projector", "ladder", "camera", "stapler", "drill", "microphone")),
    "pack": (("Don't forget to pack your {obj} for the trip.", "Please pack a {obj} in your bag tonight."),
             ("toothbrush", "sweater", "swimsuit", "raincoat", "towel", "flashlight")),
}


# ---------------------------------------------------------------- phrasing banks


@lru_cache(maxsize=1)
def phrasings() -> dict[str, dict[str, Any]]:
    """The phrasing banks: {kind: {"dev": bank, "heldout": bank}} from synthetic_phrasings.toml."""
    with PHRASINGS_FILE.open("rb") as f:
        return tomllib.load(f)


def bank(kind: str, which: str) -> dict[str, Any]:
    """One kind's bank: which = "dev" or "heldout" (or a split name, mapped through PHRASING_BANK)."""
    which = PHRASING_BANK.get(which, which)
    try:
        return phrasings()[kind][which]
    except KeyError as exc:
        raise KeyError(f"no {which!r} phrasing bank for kind {kind!r} in {PHRASINGS_FILE.name}") from exc


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


DEFAULT_CONDITIONS = ("noise", "level", "rate", "stereo")
DISTRACTOR_SOURCES = ("phone", "violin", "organ", "crumple", "camera", "trumpet")


@dataclass(frozen=True)
class Kind:
    """A kind of item. `make(ctx, out)` writes the clean clip (16 kHz) to `out` and returns its Spec.

    conditions: the held-out condition families the answer stays true under ("voice" is implied for
        `speech` kinds); an empty tuple would keep the kind out of the heldout_condition split.
    min_snr_db: the lowest SNR (active signal over noise) the kind accepts.
    speech: every item is speech, so the heldout_condition split may change nothing but the voice.
    distractor_before: a distractor may precede the content (only for kinds with no times in the truth).
    distractor_sources: what a distractor may be (always a different kind of sound than the target).
    named_slot: with a distractor, only question templates with this placeholder (naming the target) are used.
    """

    name: str
    category: str
    sub_category: str
    make: Callable[[Ctx, Path], Spec]
    quick: bool = True
    description: str = ""
    needs_step: bool = False
    conditions: tuple[str, ...] = DEFAULT_CONDITIONS
    min_snr_db: float = 10.0
    speech: bool = False
    distractor_before: bool = False
    distractor_sources: tuple[str, ...] = DISTRACTOR_SOURCES
    named_slot: str | None = None

    @property
    def families(self) -> tuple[str, ...]:
        """Condition families of the heldout_condition split."""
        return tuple(self.conditions) + (("voice",) if self.speech else ())

    @property
    def splits(self) -> tuple[str, ...]:
        return ("dev", "heldout_phrasing") + (("heldout_condition",) if self.families else ())

    @property
    def group(self) -> str:
        return "needs_step" if self.needs_step else "perception"


# ---------------------------------------------------------------- the generation context


def _index(rng: np.random.Generator, n: int) -> int:
    """A uniform index below n from exactly one draw, whatever n (bounded integers may reject and redraw),
    so the wording stream stays in step across banks of different sizes: the splits stay paired."""
    return min(int(rng.random() * n), n - 1)


def _stream(seed: int, kind: str, index: int, stream: int | None = None) -> np.random.Generator:
    key = [int(seed), zlib.crc32(kind.encode()), int(index)]
    return np.random.default_rng(key if stream is None else key + [stream])


def item_rng(seed: int, kind: str, index: int) -> np.random.Generator:
    """The content stream of an item: independent of which other kinds or how many items are made, and of
    the split (the splits are paired)."""
    return _stream(seed, kind, index)


class Ctx:
    """What a generator draws from: content (`rng`), wording (`prng`, through `question` / `choice_set` /
    `number`), voices (`voices`, `say`) and the item's condition (`cond`, chosen before the generator runs)."""

    def __init__(self, kind: Kind, seed: int, index: int, split: str, work: Path) -> None:
        self.kind, self.split, self.work = kind, split, work
        self.rng = item_rng(seed, kind.name, index)
        self.prng = _stream(seed, kind.name, index, 1)
        self.vrng = _stream(seed, kind.name, index, 2)
        self.crng = _stream(seed, kind.name, index, 3)
        self.bank = bank(kind.name, split)
        self.bank_name = PHRASING_BANK[split]
        self.voice_split = VOICE_SPLIT[split]
        self.cond: dict[str, Any] = {"name": "clean"}
        self.slot: dict[str, str] = {}
        self.preamble: str | None = None
        self.phrasing: dict[str, Any] = {"bank": self.bank_name}
        self.voices_used: list[dict[str, Any]] = []

    # -- wording
    def question(self, group: str | None = None, **fields: Any) -> str:
        """A question template of the bank filled from a slot entry of `group` (or "any") and `fields`."""
        templates = list(self.bank["questions"])
        idx = list(range(len(templates)))
        if self.cond.get("name") == "distractor" and self.kind.named_slot:
            idx = [i for i in idx if "{" + self.kind.named_slot in templates[i]]
        i = idx[_index(self.prng, len(idx))]
        slots = self.bank.get("slots") or {}
        self.slot = {}
        if slots:
            entries = slots[group if group is not None else "any"]
            j = _index(self.prng, len(entries))
            self.slot = dict(entries[j])
            self.phrasing.update(group=group if group is not None else "any", slot=j)
        self.phrasing["template"] = i
        return templates[i].format(**self.slot, **fields)

    def choice_set(self) -> dict[str, str]:
        sets = self.bank.get("choices") or [{}]
        j = _index(self.prng, len(sets))
        self.phrasing["choices"] = j
        self.preamble = sets[j].get("preamble")
        return dict(sets[j])

    def number(self, n: int, cs: dict[str, str]) -> str:
        """A number answer in the choice set's format (see the TOML header for the fields)."""
        sg = cs.get("sg") or self.slot.get("thing", "")
        pl = cs.get("pl") or self.slot.get("things", "")
        word = NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)
        return cs.get("fmt", "{n}").format(n=n, word=word, Word=word.capitalize(), noun=sg if n == 1 else pl,
                                           secs=_seconds(n), times=_times(n))

    # -- voices
    def voices(self, k: int = 1, gender: str | None = None) -> list[Voice]:
        """k voices of this split's pool with different identities (optionally of one sex)."""
        pool = [v for v in VOICES if v.split == self.voice_split and (gender is None or v.gender == gender)]
        chosen: list[Voice] = []
        for i in self.vrng.permutation(len(pool)):
            v = pool[int(i)]
            if all(v.identity != c.identity for c in chosen):
                chosen.append(v)
            if len(chosen) == k:
                return chosen
        raise ValueError(f"cannot pick {k} distinct {gender or ''} voices from the {self.voice_split} pool")

    def voice(self, gender: str | None = None) -> Voice:
        return self.voices(1, gender)[0]

    def normal_rate(self, voice: str) -> float:
        """A voice's speaking-rate factor in ordinary kinds: 1.0, except held-out espeak-ng voices, which
        speak at a normal rate drawn from ESPEAK_NORMAL_WPM."""
        if voice.startswith("espeak-ng:") and self.voice_split == "heldout":
            return round(float(self.vrng.integers(*ESPEAK_NORMAL_WPM)) / synth.ESPEAK_WPM, 4)
        return 1.0

    def say(self, text: str, out: Path, voice: Voice | str, rate: float | None = None) -> Path:
        spec = voice.spec if isinstance(voice, Voice) else voice
        rate = self.normal_rate(spec) if rate is None else rate
        synth.say(text, out, voice=spec, rate=rate)
        v = VOICE_BY_SPEC.get(spec)
        rec: dict[str, Any] = {"voice": spec, "gender": v.gender if v else None, "rate": round(rate, 4)}
        if spec.startswith("espeak-ng:"):
            rec["wpm"] = round(synth.ESPEAK_WPM * rate)
        self.voices_used.append(rec)
        return out


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


def render_source(name: str, rng: np.random.Generator, out: Path, ctx: Ctx | None = None) -> Path:
    """One recognisable source as a trimmed clip (silence cut, so it is audible from its first sample).
    Speech is read by a voice of ctx's pool when a context is given (else a flite voice)."""
    tmp = out.with_suffix(".raw.wav")
    if name == "speech":
        if ctx is None:
            text, voice = _sentence_voice(rng)
            synth.speech(text, tmp, voice=voice)
        else:
            ctx.say(_pick(rng, SENTENCES), tmp, ctx.voice())
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


def _keyed_choices(cs: dict[str, str], answer: str, others: Iterable[str]) -> list[str]:
    return [cs[answer]] + [cs[k] for k in others]


# ---------------------------------------------------------------- generators (one per kind)


def gen_counting(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    n = int(rng.integers(2, 10))
    variant = _pick(rng, ["beeps", "beeps", "camera", "chime"])
    if variant == "beeps":
        f = float(rng.choice([500, 700, 900, 1100, 1500, 2000]))
        beep_s, gap_s = float(rng.uniform(0.12, 0.3)), float(rng.uniform(0.25, 0.6))
        synth.beeps(n, out, freq_hz=f, beep_s=round(beep_s, 3), gap_s=round(gap_s, 3))
        truth = {"count": n, "source": "sine beeps", "freq_hz": f, "beep_s": round(beep_s, 3), "gap_s": round(gap_s, 3)}
        what = f"{n} separate {f:g} Hz beeps"
    else:
        name, step = ("camera-shutter", 1.2) if variant == "camera" else ("complete", 1.5)
        one = work / "one.wav"
        synth.sound_file(name, one)
        synth.place([(one, 0.5 + step * i) for i in range(n)], out, total_s=0.5 + step * n + 0.5)
        truth = {"count": n, "source": f"freedesktop {name}", "onsets_s": [round(0.5 + step * i, 3) for i in range(n)]}
        what = f"{n} copies of the freedesktop '{name}' sound, {step:g} s apart"
    truth["variant"] = variant
    q = ctx.question(variant)
    cs = ctx.choice_set()
    choices = [ctx.number(n, cs)] + [ctx.number(d, cs) for d in _number_distractors(rng, n, 1, 12)]
    return Spec(q, choices, "sound", truth, f"The clip was built from {what}, so the count is {n}.",
                ["repeated sound events", "counting"],
                rubric_points=[("Event segmentation", "separates the individual sound events"),
                               ("Count", f"counts exactly {n} events")])


def gen_tempo(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
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
    q = ctx.question(variant)
    cs = ctx.choice_set()
    choices = [ctx.number(bpm, cs)] + [ctx.number(int(d), cs) for d in ds]
    return Spec(q, choices, "music", {"bpm": bpm, "source": what, "variant": variant},
                f"A {what} was rendered with exactly 60/{bpm} s between beats, i.e. {bpm} BPM.",
                ["steady beat", "tempo"],
                rubric_points=[("Beat detection", "identifies the regular beat"), ("Tempo", f"states about {bpm} BPM")])


def gen_pitch_compare(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
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
    q = ctx.question("higher" if ask_higher else "lower")
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, "first" if first_wins else "second", ["second" if first_wins else "first", "same"])
    return Spec(q, choices, "music" if variant == "piano" else "sound",
                {"f1_hz": round(f1, 1), "f2_hz": round(f2, 1), "semitones": semis, "source": variant,
                 "asked": "higher" if ask_higher else "lower"},
                f"Tone 1 is {f1:.1f} Hz and tone 2 is {f2:.1f} Hz ({semis:+d} semitones), so the "
                f"{'first' if first_wins else 'second'} is {'higher' if ask_higher else 'lower'}.",
                ["pitch", "pitch comparison"],
                rubric_points=[("Pitch of each tone", "estimates the pitch of both tones"),
                               ("Comparison", f"picks the {'first' if first_wins else 'second'} tone")])


CONTOURS = ("rising", "falling", "flat", "arch")


def gen_pitch_contour(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    shape = _pick(rng, CONTOURS)
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
    q = ctx.question()
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, shape, [s for s in CONTOURS if s != shape])
    names = [NOTE_NAMES[p % 12] + str(p // 12 - 1) for p in pitches]
    return Spec(q, choices, "music" if variant == "piano" else "sound",
                {"shape": shape, "midi": pitches, "notes": names, "source": variant},
                f"The notes are {', '.join(names)}: the contour is {shape}.", ["melodic contour", "pitch"],
                rubric_points=[("Note pitches", "tracks the pitch of successive notes"),
                               ("Contour", f"describes the contour as {shape}")])


def gen_speech_content(ctx: Ctx, out: Path) -> Spec:
    sents = _pick(ctx.rng, SENTENCES, 4)
    voice = ctx.voice()
    ctx.say(sents[0], out, voice)
    q = ctx.question()
    return Spec(q, list(sents), "speech", {"text": sents[0], "voice": voice.spec},
                f"Voice {voice.spec} read the sentence {sents[0]!r}.", ["speech content"],
                rubric_points=[("Transcription", "recognises the spoken words"),
                               ("Selection", "picks the sentence that was read")])


def gen_speaker_count(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    kmax = len({v.identity for v in VOICES if v.split == ctx.voice_split})
    k = int(rng.integers(1, min(kmax, 4) + 1))
    voices = ctx.voices(k)
    n_turns = min(max(k + int(rng.integers(0, 2)), 3), 4)  # at most 4 turns: the clip stays within 12 s
    order = list(range(k)) + [int(i) for i in rng.integers(0, k, n_turns - k)]
    if k > 1:  # adjacent turns by the same voice would merge into one turn
        for i in range(1, len(order)):
            if order[i] == order[i - 1]:
                order[i] = next(v for v in range(k) if v != order[i - 1] and (i + 1 >= len(order) or v != order[i + 1]))
    short = sorted(SENTENCES, key=len)[:16] if n_turns == 4 else SENTENCES
    lines = list(zip(order, _pick(rng, short, len(order))))
    clips = [ctx.say(text, ctx.work / f"turn{i}.wav", voices[v]) for i, (v, text) in enumerate(lines)]
    synth.concat(clips, out, gap_s=0.5)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = [ctx.number(k, cs)] + [ctx.number(d, cs) for d in _number_distractors(rng, k, 1, 5)]
    specs = [v.spec for v in voices]
    return Spec(q, choices, "speech", {"count": k, "voices": specs, "turns": [specs[v] for v, _ in lines]},
                f"The conversation has {len(lines)} turns by {k} voice(s): {', '.join(specs)}.",
                ["distinct voices", "turn taking"],
                rubric_points=[("Voice discrimination", "tells the voices apart"), ("Count", f"counts {k} speaker(s)")])


TRENDS = ("increasing", "decreasing", "steady")


def gen_loudness_trend(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    trend = _pick(rng, TRENDS)
    src_kind = _pick(rng, ["noise", "tone", "speech"])
    src = work / "src.wav"
    if src_kind == "noise":
        audio_io.write_wav(src, _pink_noise(rng, 6.0), SR)
    elif src_kind == "tone":
        audio_io.write_wav(src, synth.tone(float(rng.choice([330, 440, 660])), 6.0), SR)
    else:
        a, b = _pick(rng, SENTENCES, 2)
        voice = ctx.voice()
        p1, p2 = work / "s1.wav", work / "s2.wav"
        ctx.say(a, p1, voice)
        ctx.say(b, p2, voice)
        synth.concat([p1, p2], src, gap_s=0.2)
    span = float(rng.uniform(14, 24))
    start, end = {"increasing": (-span, 0.0), "decreasing": (0.0, -span), "steady": (0.0, 0.0)}[trend]
    synth.gain_ramp(src, out, start, end)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, trend, [t for t in TRENDS if t != trend] + ["gap"])
    return Spec(q, choices, "speech" if src_kind == "speech" else "sound",
                {"trend": trend, "start_db": round(start, 2), "end_db": round(end, 2), "source": src_kind},
                f"A linear gain ramp from {start:.1f} dB to {end:.1f} dB was applied to {src_kind}: {trend}.",
                ["loudness", "gain change"],
                rubric_points=[("Level over time", "follows the level from start to end"),
                               ("Trend", f"calls the trend {trend}")])


ORDER_SOURCES = ("speech", "beeps", "phone", "crumple", "violin")


def gen_event_order(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    n = int(rng.choice([2, 2, 3]))
    names = _pick(rng, ORDER_SOURCES, n)
    clips, t = [], 0.5
    onsets = []
    for i, name in enumerate(names):
        p = render_source(name, rng, work / f"src{i}.wav", ctx)
        clips.append((p, t))
        onsets.append(round(t, 3))
        t += _duration(p) + float(rng.uniform(0.8, 1.2))
    synth.place(clips, out, total_s=t - 0.5)
    ask_first = n == 2 or bool(rng.integers(2))
    target = names[0] if ask_first else names[-1]
    absent = [s for s in ORDER_SOURCES if s not in names]
    others = [s for s in names if s != target] + _pick(rng, absent, 4 - n)
    q = ctx.question("first" if ask_first else "last")
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, target, others)
    return Spec(q, choices, _modality(SOURCES[s]["modality"] for s in names),
                {"order": names, "onsets_s": onsets, "asked": "first" if ask_first else "last"},
                f"The sources were placed in the order {', '.join(names)} (onsets {onsets} s).",
                [SOURCES[s]["cue"] for s in names] + ["temporal order"],
                rubric_points=[("Sources", "identifies the sounds present"),
                               ("Order", f"places {target} {'first' if ask_first else 'last'}")])


def gen_onset_time(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    target = _pick(rng, ["speech", "speech", "phone", "beeps"])
    t0 = float(rng.integers(1, 7))
    p = render_source(target, rng, work / "src.wav", ctx)
    total = min(max(10.0, t0 + _duration(p) + 1.0), MAX_CLIP_S)
    synth.place([(p, t0)], out, total_s=total)
    ds = _spaced_distractors(rng, t0, [float(x) for x in range(10)], 3, 2.0)
    q = ctx.question(target)
    cs = ctx.choice_set()
    choices = [ctx.number(int(t0), cs)] + [ctx.number(int(d), cs) for d in ds]
    return Spec(q, choices, SOURCES[target]["modality"],
                {"onset_s": t0, "source": target, "clip_s": round(_duration(out), 3)},
                f"The {target} clip (silence trimmed) was placed at {t0:g} s on a silent track.",
                [SOURCES[target]["cue"], "onset time"],
                rubric_points=[("Silence before", "notices the silence before the sound"),
                               ("Onset", f"places the start at about {t0:g} s")])


def gen_key_mode(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
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
    q = ctx.question()
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, mode, ["minor" if mode == "major" else "major"])
    return Spec(q, choices, "music", {"mode": mode, "key": key, "tonic_midi": tonic, "gm_program": program},
                f"A {key} scale followed by a {'I-IV-V-I' if mode == 'major' else 'i-iv-v-i'} cadence in {key}.",
                ["scale", "triads", "mode"],
                rubric_points=[("Tonal centre", f"hears {NOTE_NAMES[tonic % 12]} as the tonal centre"),
                               ("Mode", f"identifies the {mode} third")])


def gen_sound_event(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    names = _pick(rng, list(SOURCES), 4)
    render_source(names[0], rng, work / "src.wav", ctx)
    synth.place([(work / "src.wav", 0.5)], out, total_s=_duration(work / "src.wav") + 1.0)
    q = ctx.question()
    cs = ctx.choice_set()
    return Spec(q, _keyed_choices(cs, names[0], names[1:]), SOURCES[names[0]]["modality"], {"source": names[0]},
                f"The clip is a rendering of: {SOURCES[names[0]]['text'].lower()}.", [SOURCES[names[0]]["cue"]],
                rubric_points=[("Source identification", f"recognises {SOURCES[names[0]]['cue']}")])


def gen_speech_rate(ctx: Ctx, out: Path) -> Spec:
    rng, work = ctx.rng, ctx.work
    text = _pick(rng, SENTENCES)
    voice = ctx.voice()
    # flite duration_stretch 0.55-0.75 (fast) and 1.45-1.8 (slow), as rate factors (1 / stretch)
    fast, slow = round(float(rng.uniform(0.55, 0.75)), 2), round(float(rng.uniform(1.45, 1.8)), 2)
    fast_first = bool(rng.integers(2))
    pf, ps = work / "fast.wav", work / "slow.wav"
    ctx.say(text, pf, voice, rate=1.0 / fast)
    ctx.say(text, ps, voice, rate=1.0 / slow)
    synth.concat([pf, ps] if fast_first else [ps, pf], out, gap_s=1.2)
    ask_faster = bool(rng.integers(2))
    first_is_answer = fast_first == ask_faster
    q = ctx.question("faster" if ask_faster else "slower")
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, "first" if first_is_answer else "second",
                             ["second" if first_is_answer else "first", "same"])
    return Spec(q, choices, "speech",
                {"text": text, "voice": voice.spec, "fast_stretch": fast, "slow_stretch": slow,
                 "fast_first": fast_first, "asked": "faster" if ask_faster else "slower"},
                f"Duration stretch {fast} (fast) and {slow} (slow); the "
                f"{'fast' if fast_first else 'slow'} reading comes first.", ["speaking rate"],
                rubric_points=[("Rate of each reading", "compares the durations of the two readings"),
                               ("Selection", f"picks the {'first' if first_is_answer else 'second'} reading")])


def gen_word_repetition(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    target = _pick(rng, WORD_TARGETS)
    k = int(rng.integers(1, 5))
    others = _pick(rng, [w for w in WORD_TARGETS if w != target], int(rng.integers(2, 4)))
    seq = [target] * k + list(others)
    seq = [seq[int(i)] for i in rng.permutation(len(seq))]
    carriers = _pick(rng, WORD_CARRIERS, len(seq))
    text = " ".join(c.format(w=w) for c, w in zip(carriers, seq))
    voice = ctx.voice()
    ctx.say(text, out, voice)
    q = ctx.question(word=target)
    cs = ctx.choice_set()
    choices = [ctx.number(k, cs)] + [ctx.number(d, cs) for d in _number_distractors(rng, k, 1, 6)]
    return Spec(q, choices, "speech", {"word": target, "count": k, "text": text, "voice": voice.spec},
                f"The script {text!r} contains {target!r} {_times(k)}.", ["spoken words", "repetition"],
                rubric_points=[("Transcription", "recognises the spoken words"), ("Count", f"counts {_times(k)}")])


def gen_duration(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    d = float(rng.integers(2, 11))
    variant = _pick(rng, ["clip", "tone"])
    if variant == "clip":
        y = _pink_noise(rng, d) if rng.integers(2) else synth.tone(float(rng.choice([300, 500, 800])), d)
        audio_io.write_wav(out, y, SR)
        what = f"the whole clip is {d:g} s"
    else:
        lead = float(rng.choice([1.0, 1.5]))
        y = np.concatenate([synth.silence(lead), synth.tone(float(rng.choice([400, 600, 900])), d), synth.silence(0.5)])
        audio_io.write_wav(out, y, SR)
        what = f"one {d:g} s tone after {lead:g} s of silence"
    gap = max(2.0, 0.3 * d)
    ds = _spaced_distractors(rng, d, [float(x) for x in range(1, 25)], 3, gap)
    q = ctx.question(variant)
    cs = ctx.choice_set()
    choices = [ctx.number(int(d), cs)] + [ctx.number(int(x), cs) for x in ds]
    return Spec(q, choices, "sound", {"duration_s": d, "variant": variant}, f"By construction {what}.",
                ["duration"], rubric_points=[("Duration", f"estimates about {d:g} s")])


def gen_language(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    voices = _pick(rng, list(LANGUAGE_SPEECH), 4)
    name, sents = LANGUAGE_SPEECH[voices[0]]
    voice = f"espeak-ng:{voices[0]}"
    if ctx.voice_split == "heldout":
        voice += "+" + _pick(ctx.vrng, LANGUAGE_VARIANTS)
    ctx.say(_pick(rng, sents), out, voice)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = [cs["fmt"].format(lang=LANGUAGE_SPEECH[v][0]) for v in voices]
    return Spec(q, choices, "speech", {"espeak_voice": voice.split(":", 1)[1], "language": name},
                f"espeak-ng voice {voice} read a {name} sentence.", ["language"],
                language=voices[0].split("-")[0],
                rubric_points=[("Language identification", f"recognises {name}")])

# ---------------------------------------------------------------- kinds that need one step on top of perception


def gen_day_shift(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    day = int(rng.integers(7))
    asked = _pick(rng, ["after", "before"])
    step = 1 if asked == "after" else -1
    target, opposite = DAYS[(day + step) % 7], DAYS[(day - step) % 7]
    other = _pick(rng, [d for i, d in enumerate(DAYS) if d not in (DAYS[day], target, opposite)])
    text = _pick(rng, DAY_SENTENCES).format(day=DAYS[day])
    voice = ctx.voice()
    ctx.say(text, out, voice)
    q = ctx.question(asked)
    cs = ctx.choice_set()
    # the spoken day itself and the day on the other side are the one-step traps
    choices = [cs["fmt"].format(day=d) for d in (target, DAYS[day], opposite, other)]
    return Spec(q, choices, "speech",
                {"text": text, "spoken_day": DAYS[day], "asked": asked, "answer_day": target, "voice": voice.spec},
                f"The sentence {text!r} names {DAYS[day]}; the day {asked} it is {target}.",
                ["spoken day of the week", "calendar order"],
                rubric_points=[("Transcription", f"hears the day {DAYS[day]}"),
                               ("Step", f"moves one day {asked} to {target}")])


def _spoken_list(items: list[str]) -> str:
    return ", ".join(items[:-1]) + ", and " + items[-1]


def gen_list_missing(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    theme = _pick(rng, list(LIST_THEMES))
    sentence, pool = LIST_THEMES[theme]
    chosen = _pick(rng, pool, 5)
    spoken, missing = chosen[:4], chosen[4]
    text = sentence.format(items=_spoken_list(spoken))
    voice = ctx.voice()
    ctx.say(text, out, voice)
    shown = _pick(rng, spoken, 3)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = [cs["fmt"].format(item=i, Item=i.capitalize()) for i in [missing] + shown]
    return Spec(q, choices, "speech",
                {"text": text, "theme": theme, "spoken_items": spoken, "missing": missing, "voice": voice.spec},
                f"The list {text!r} names {', '.join(spoken)}; {missing!r} is not among them.",
                ["spoken list", "exclusion"],
                rubric_points=[("Transcription", "hears every item of the list"),
                               ("Step", f"finds that {missing} was not mentioned")])


def gen_beeps_before_voice(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    before, after = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    f = float(rng.choice([1000, 1500, 2000]))
    beep_s, gap_s = 0.15, round(float(rng.uniform(0.3, 0.45)), 3)
    voice = ctx.voice()
    text = _pick(rng, SENTENCES)
    sp = ctx.work / "speech.wav"
    ctx.say(text, sp, voice)
    synth.trim_silence(sp, sp)
    speech = audio_io.load(sp, sr=SR)
    beep = synth.tone(f, beep_s)
    parts, t, onsets = [synth.silence(0.4)], 0.4, []
    for _ in range(before):
        onsets.append(round(t, 3))
        parts += [beep, synth.silence(gap_s)]
        t += beep_s + gap_s
    parts.append(synth.silence(0.3))
    t += 0.3
    speech_on = round(t, 3)
    parts += [0.5 * speech / (np.max(np.abs(speech)) or 1.0), synth.silence(0.6)]
    t += len(speech) / SR + 0.6
    speech_off = round(t - 0.6, 3)
    for _ in range(after):
        onsets.append(round(t, 3))
        parts += [beep, synth.silence(gap_s)]
        t += beep_s + gap_s
    parts.append(synth.silence(0.3))
    audio_io.write_wav(out, np.concatenate(parts), SR)
    q = ctx.question()
    cs = ctx.choice_set()
    # the total and the count after the voice are the one-step traps
    pool = [before + after, after, before + 1, before - 1, before + 2]
    ds: list[int] = []
    for d in pool:
        if d >= 1 and d != before and d not in ds:
            ds.append(d)
    choices = [ctx.number(before, cs)] + [ctx.number(d, cs) for d in ds[:3]]
    return Spec(q, choices, "mix-sound-speech",
                {"before": before, "after": after, "total": before + after, "freq_hz": f, "beep_onsets_s": onsets,
                 "speech_onset_s": speech_on, "speech_end_s": speech_off, "text": text, "voice": voice.spec},
                f"{before} beep(s) at {onsets[:before]} s precede the speech at {speech_on:g} s; {after} more follow it.",
                ["beeps", "speech onset", "counting up to an event"],
                rubric_points=[("Events", "finds the beeps and where the speech starts"),
                               ("Step", f"counts only the {before} beep(s) before the voice")])


def gen_louder_tone(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    f = float(rng.integers(40, 101)) * 10  # 400..1000 Hz, one frequency for both (equal-loudness is flat here)
    diff = round(float(rng.uniform(8.0, 14.0)), 1)
    loud_first = bool(rng.integers(2))
    db1, db2 = (-6.0, -6.0 - diff) if loud_first else (-6.0 - diff, -6.0)
    y = np.concatenate([synth.silence(0.4), synth.tone(f, 0.7, 10 ** (db1 / 20)), synth.silence(0.5),
                        synth.tone(f, 0.7, 10 ** (db2 / 20)), synth.silence(0.4)])
    audio_io.write_wav(out, y, SR)
    ask_louder = bool(rng.integers(2))
    first_wins = loud_first == ask_louder
    q = ctx.question("louder" if ask_louder else "quieter")
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, "first" if first_wins else "second", ["second" if first_wins else "first", "same"])
    return Spec(q, choices, "sound",
                {"freq_hz": f, "first_peak_dbfs": db1, "second_peak_dbfs": db2, "diff_db": diff,
                 "spans_s": [[0.4, 1.1], [1.6, 2.3]], "asked": "louder" if ask_louder else "quieter"},
                f"Two {f:g} Hz tones at {db1:g} and {db2:g} dBFS peak: the "
                f"{'first' if first_wins else 'second'} is {'louder' if ask_louder else 'quieter'}.",
                ["loudness", "level comparison"],
                rubric_points=[("Level of each tone", "measures the level of both tones"),
                               ("Step", f"picks the {'first' if first_wins else 'second'} tone")])


SIDE_SOURCES = ("speech", "beeps", "phone", "violin", "camera")


def gen_stereo_side(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    source = _pick(rng, SIDE_SOURCES)
    side = _pick(rng, ["left", "right"])
    position = round(float(rng.uniform(0.75, 1.0)), 3) * (-1 if side == "left" else 1)
    p = render_source(source, rng, ctx.work / "src.wav", ctx)
    y = np.concatenate([synth.silence(0.3), audio_io.load(p, sr=SR), synth.silence(0.3)])
    audio_io.write_wav(out, synth.pan(0.8 * y / (np.max(np.abs(y)) or 1.0), position), SR)
    q = ctx.question(source)
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, side, ["right" if side == "left" else "left", "both", "behind"])
    return Spec(q, choices, SOURCES[source]["modality"], {"side": side, "pan": position, "source": source},
                f"The {source} clip was panned to {position:+.2f} (constant-power law): it is on the {side}.",
                [SOURCES[source]["cue"], "stereo position"],
                rubric_points=[("Channels", "compares the energy of the left and right channels"),
                               ("Step", f"places the sound on the {side}")])


def gen_first_speaker_gender(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    first = _pick(rng, ["male", "female"])
    second = "female" if first == "male" else "male"
    v1, v2 = ctx.voice(first), ctx.voice(second)
    n_turns = int(rng.choice([2, 3]))
    texts = _pick(rng, SENTENCES, n_turns)
    voices = [v1, v2, v1][:n_turns]
    clips = [ctx.say(t, ctx.work / f"turn{i}.wav", v) for i, (t, v) in enumerate(zip(texts, voices))]
    synth.concat(clips, out, gap_s=0.5)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, first, [second, "both"])
    return Spec(q, choices, "speech",
                {"first_gender": first, "turns": [v.spec for v in voices],
                 "genders": [v.gender for v in voices], "texts": texts},
                f"{v1.spec} ({first}) speaks first, then {v2.spec} ({second}).",
                ["voice sex", "turn order"],
                rubric_points=[("Voices", "tells the male and the female voice apart"),
                               ("Step", f"finds that the {first} voice speaks first")])


# ---------------------------------------------------------------- more plain-perception kinds


def gen_instruction_object(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    verb = _pick(rng, list(INSTRUCTIONS))
    sentences, objects = INSTRUCTIONS[verb]
    objs = _pick(rng, objects, 4)
    text = _pick(rng, sentences).format(obj=objs[0])
    voice = ctx.voice()
    ctx.say(text, out, voice)
    q = ctx.question(verb)
    cs = ctx.choice_set()
    choices = [cs["fmt"].format(obj=o, Obj=o.capitalize()) for o in objs]
    return Spec(q, choices, "speech", {"text": text, "verb": verb, "object": objs[0], "voice": voice.spec},
                f"The request {text!r} names the {objs[0]}; the other choices are not spoken.",
                ["spoken request", "object"],
                rubric_points=[("Transcription", "hears the request"), ("Object", f"picks the {objs[0]}")])


FAST_WPM, SLOW_WPM = (260, 300), (90, 110)


def speech_wpm(path: Path, words: int) -> float:
    """Words per minute over the speech's extent (leading and trailing silence cut at -40 dB re peak)."""
    trimmed = path.with_suffix(".trim.wav")
    synth.trim_silence(path, trimmed)
    d = _duration(trimmed)
    trimmed.unlink(missing_ok=True)
    return 60.0 * words / d


def gen_speech_speed(ctx: Ctx, out: Path) -> Spec:
    rng = ctx.rng
    speed = _pick(rng, ["fast", "slow"])
    lo, hi = FAST_WPM if speed == "fast" else SLOW_WPM
    target = float(rng.uniform(lo + 5, hi - 5))
    text = _pick(rng, SENTENCES)
    words = len(text.split())
    voice = ctx.voice()
    probe = ctx.work / "probe.wav"
    synth.say(text, probe, voice.spec)
    rate = target / speech_wpm(probe, words)
    for _ in range(2):  # the rate factor is not exactly proportional (pauses, flite's duration model)
        synth.say(text, probe, voice.spec, rate=rate)
        rate *= target / speech_wpm(probe, words)
    rate = round(rate, 4)
    ctx.say(text, out, voice, rate=rate)
    wpm = round(speech_wpm(out, words), 1)
    q = ctx.question()
    cs = ctx.choice_set()
    choices = _keyed_choices(cs, speed, ["slow" if speed == "fast" else "fast", "none", "whisper"])
    return Spec(q, choices, "speech", {"speed": speed, "wpm": wpm, "target_wpm": round(target, 1), "rate": rate,
                                       "text": text, "words": words, "voice": voice.spec},
                f"{voice.spec} read a {words}-word sentence at {wpm:g} words per minute ({speed}).",
                ["speaking rate"],
                rubric_points=[("Rate", f"judges the rate as {speed}")])

_SPEECH: dict[str, Any] = {"speech": True, "conditions": DEFAULT_CONDITIONS + ("distractor",), "distractor_before": True}

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("counting", "Perception Layer", "Counting and Statistics", gen_counting, True, "beeps or repeated theme sounds",
         conditions=DEFAULT_CONDITIONS + ("distractor",), distractor_sources=("crumple", "violin", "speech"),
         named_slot="thing"),
    Kind("tempo", "Perception Layer", "Music Theory", gen_tempo, True, "click track or drum beat at a set BPM",
         min_snr_db=20),
    Kind("pitch_compare", "Signal Layer", "Audio Difference Analysis", gen_pitch_compare, True,
         "which of two tones is higher/lower"),
    Kind("pitch_contour", "Perception Layer", "Music Theory", gen_pitch_contour, True, "rising/falling/flat/arch melody"),
    Kind("speech_content", "Semantic Layer", "Content Analysis", gen_speech_content, True, "which sentence is spoken",
         **_SPEECH),
    Kind("speaker_count", "Perception Layer", "Counting and Statistics", gen_speaker_count, True,
         "1-3 voices (1-4 with the held-out voices)", min_snr_db=20, **_SPEECH),
    Kind("loudness_trend", "Signal Layer", "Acoustic Quality Analysis", gen_loudness_trend, True,
         "linear gain ramp up/down or steady", min_snr_db=30),
    Kind("event_order", "Perception Layer", "Temporal Analysis", gen_event_order, False, "which source comes first/last",
         min_snr_db=20),
    Kind("onset_time", "Perception Layer", "Temporal Analysis", gen_onset_time, True, "when a sound starts"),
    Kind("key_mode", "Perception Layer", "Music Theory", gen_key_mode, True, "major or minor scale + cadence",
         min_snr_db=20),
    Kind("sound_event", "Perception Layer", "Environmental Perception and Reasoning", gen_sound_event, True,
         "which source is heard", min_snr_db=20),
    Kind("speech_rate", "Signal Layer", "Audio Difference Analysis", gen_speech_rate, True,
         "same sentence read fast and slow", min_snr_db=20, speech=True,
         conditions=DEFAULT_CONDITIONS + ("distractor",)),
    Kind("word_repetition", "Perception Layer", "Counting and Statistics", gen_word_repetition, True,
         "how often a word is said", min_snr_db=20, **_SPEECH),
    Kind("duration", "Perception Layer", "Temporal Analysis", gen_duration, True, "length of a clip or a tone",
         min_snr_db=20),
    Kind("language", "Cultural Layer", "Culture of Speaker", gen_language, True, "espeak-ng en/es/fr/de/it", **_SPEECH),
    Kind("day_shift", "Semantic Layer", "Content Analysis", gen_day_shift, True,
         "the day after/before a spoken day", needs_step=True, **_SPEECH),
    Kind("list_missing", "Semantic Layer", "Content Analysis", gen_list_missing, True,
         "which item a spoken list leaves out", needs_step=True, **_SPEECH),
    Kind("beeps_before_voice", "Perception Layer", "Counting and Statistics", gen_beeps_before_voice, True,
         "beeps before the voice starts (more follow it)", needs_step=True, speech=True),
    Kind("louder_tone", "Signal Layer", "Audio Difference Analysis", gen_louder_tone, True,
         "which of two equal-pitch tones is louder/quieter (8-14 dB apart)", needs_step=True, min_snr_db=20),
    Kind("stereo_side", "Perception Layer", "Spatial Analysis", gen_stereo_side, True,
         "a source panned left or right", needs_step=True, min_snr_db=20, conditions=("noise", "level", "rate")),
    Kind("first_speaker_gender", "Semantic Layer", "Speaker Analysis", gen_first_speaker_gender, True,
         "whether a male or a female voice speaks first", needs_step=True, min_snr_db=20, **_SPEECH),
    Kind("instruction_object", "Semantic Layer", "Emotion and Intention", gen_instruction_object, True,
         "what a spoken request asks for", **_SPEECH),
    Kind("speech_speed", "Signal Layer", "Acoustic Quality Analysis", gen_speech_speed, True,
         "speech at 90-110 or 260-300 words per minute", min_snr_db=20, **_SPEECH),
)}


# ---------------------------------------------------------------- conditions


def choose_condition(kind: Kind, split: str, rng: np.random.Generator,
                     force: dict[str, Any] | None = None) -> dict[str, Any]:
    """The item's condition: clean outside heldout_condition; there, one family the kind accepts, its
    parameters drawn from rng. `force` ({"name": family, **some parameters}) fixes the family and those
    parameters (the rest are still drawn), e.g. {"name": "noise", "noise": "pink", "snr_db": 10}."""
    if split != "heldout_condition":
        if force:
            raise ValueError("a condition can only be forced in the heldout_condition split")
        return {"name": "clean"}
    fam = _pick(rng, kind.families)
    if force:
        if force.get("name") not in kind.families:
            raise ValueError(f"kind {kind.name!r} does not accept condition {force.get('name')!r} "
                             f"(accepts: {', '.join(kind.families)})")
        fam = force["name"]
        if fam == "noise" and float(force.get("snr_db", kind.min_snr_db)) < kind.min_snr_db:
            raise ValueError(f"kind {kind.name!r} accepts noise down to {kind.min_snr_db:g} dB SNR")
        if fam == "distractor" and force.get("position") == "before" and not kind.distractor_before:
            raise ValueError(f"kind {kind.name!r} accepts distractors only after its content")
    cond = _family_params(kind, fam, rng)
    return {**cond, **(force or {})}


def _family_params(kind: Kind, fam: str, rng: np.random.Generator) -> dict[str, Any]:
    if fam == "noise":
        return {"name": "noise", "noise": _pick(rng, NOISES),
                "snr_db": float(_pick(rng, [s for s in SNRS_DB if s >= kind.min_snr_db]))}
    if fam == "level":
        return {"name": "level", "level_dbfs": round(float(rng.uniform(*LEVEL_RANGE_DBFS)), 1)}
    if fam == "rate":
        return {"name": "rate", "sample_rate": int(_pick(rng, RATES))}
    if fam == "stereo":
        pan = 0.0 if rng.integers(3) == 0 else round(float(rng.uniform(0.3, 0.7)) * float(rng.choice([-1, 1])), 3)
        return {"name": "stereo", "pan": pan}
    if fam == "distractor":
        pos = _pick(rng, ["before", "after"]) if kind.distractor_before else "after"
        return {"name": "distractor", "source": _pick(rng, kind.distractor_sources), "position": pos}
    return {"name": fam}


def _read(path: Path) -> np.ndarray:
    """(channels, n) float32."""
    y, _ = sf.read(str(path), dtype="float32", always_2d=True)
    return np.ascontiguousarray(y.T)


def _fade(y: np.ndarray, seconds: float = 0.05) -> np.ndarray:
    n = min(int(seconds * SR), y.shape[-1] // 2)
    if n:
        y = y.copy()
        y[..., -n:] *= np.linspace(1, 0, n, dtype=np.float32)
    return y


def _add_distractor(ctx: Ctx, y: np.ndarray, cond: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    rng = ctx.crng
    used = len(ctx.voices_used)
    p = render_source(cond["source"], rng, ctx.work / "distractor.wav", ctx if cond["source"] == "speech" else None)
    voice = ctx.voices_used.pop()["voice"] if len(ctx.voices_used) > used else None  # not a voice of the content
    d = audio_io.load(p, sr=SR)
    gap = round(float(rng.uniform(0.6, 1.0)), 3)
    room = MAX_CLIP_S + 1.0 - y.shape[-1] / SR - gap  # a distractor may stretch a clip to 13 s at most
    d = _fade(d[: int(max(1.0, min(2.5, room)) * SR)])
    peak = float(np.max(np.abs(y))) or 1.0
    d = d * (peak * float(rng.uniform(0.5, 0.9)) / (float(np.max(np.abs(d))) or 1.0))
    dd = np.tile(d, (y.shape[0], 1))
    g = np.zeros((y.shape[0], int(gap * SR)), dtype=np.float32)
    if cond["position"] == "before":
        out, onset, offset = np.concatenate([dd, g, y], axis=1), 0.0, round(d.shape[-1] / SR + gap, 3)
    else:
        out, onset, offset = np.concatenate([y, g, dd], axis=1), round(y.shape[-1] / SR + gap, 3), 0.0
    return out, {"source": cond["source"], "position": cond["position"], "onset_s": onset,
                 "duration_s": round(d.shape[-1] / SR, 3), "content_offset_s": offset, "voice": voice}


def apply_condition(ctx: Ctx, clean: Path, out: Path, stems: Path | None = None) -> dict[str, Any]:
    """Render the item's condition onto the clean clip into `out`; returns what was applied (for the
    construction record). stems (a path prefix): also writes <prefix>.clean.wav and <prefix>.noise.wav, the
    target and noise components exactly as mixed into `out` (float WAV), so tests can measure the SNR."""
    cond = ctx.cond
    rec: dict[str, Any] = {"condition": cond["name"], "noise": None, "snr_db": None, "pan": None, "distractor": None}
    y = _read(clean)
    sr = SR
    n = None
    if cond["name"] == "clean" or cond["name"] == "voice":
        shutil.copyfile(clean, out)
    else:
        if cond["name"] == "distractor":
            y, rec["distractor"] = _add_distractor(ctx, y, cond)
        elif cond["name"] == "noise":
            p_sig = synth.active_power(y, SR)
            n = np.stack([synth.noise(cond["noise"], y.shape[-1], ctx.crng) for _ in range(y.shape[0])])
            n *= np.sqrt(p_sig / 10 ** (cond["snr_db"] / 10))
            top = float(np.max(np.abs(y + n)))
            if top > 0.99:  # keep the mix unclipped; the SNR is unchanged
                y, n = y * (0.99 / top), n * (0.99 / top)
            rec.update(noise=cond["noise"], snr_db=cond["snr_db"])
        elif cond["name"] == "stereo":
            y = synth.pan(y[0], cond["pan"])
            rec["pan"] = cond["pan"]
        elif cond["name"] == "level":
            mix = y if n is None else y + n
            g = 10 ** (cond["level_dbfs"] / 20) / (float(np.max(np.abs(mix))) or 1.0)
            y = y * g
        elif cond["name"] == "rate":
            y, sr = synth.resample(y, SR, cond["sample_rate"]), cond["sample_rate"]
            top = float(np.max(np.abs(y)))
            if top > 0.99:  # resampling can overshoot a near-full-scale peak
                y = y * (0.99 / top)
        mix = (y if n is None else y + n).astype(np.float32)
        audio_io.write_wav(out, mix if mix.shape[0] > 1 else mix[0], sr)
    if stems is not None:
        stems.parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(stems.with_name(stems.name + ".clean.wav")), y.T, sr, subtype="FLOAT")
        if n is not None:
            sf.write(str(stems.with_name(stems.name + ".noise.wav")), n.T, sr, subtype="FLOAT")
    info = sf.info(str(out))
    written = _read(out)
    rec.update(level_dbfs=round(synth.peak_dbfs(written), 2), sample_rate=int(info.samplerate),
               channels=int(info.channels), clip_s=round(info.frames / info.samplerate, 3))
    if cond["name"] == "level":
        rec["target_level_dbfs"] = cond["level_dbfs"]
    return rec


# ---------------------------------------------------------------- rows and files


def _rubric(spec: Spec, answer: str) -> list[dict[str, Any]]:
    rows = [{"name": f"Cue identification: {name}", "scoring_point": f"Award 1 point if the test-taker {point}.",
             "note": "Checked against the generator's construction parameters.", "choices": [0, 1]}
            for name, point in spec.rubric_points]
    rows.append({"name": "Correct selection", "scoring_point": f"Award 1 point if the test-taker selects {answer!r}.",
                 "note": "The answer is true by construction.", "choices": [0, 1]})
    return rows


def item_id(kind: str, seed: int, index: int, split: str = "dev") -> str:
    return f"syn-{split}-{kind}-s{seed}-{index:04d}"


def make_item(kind: str, seed: int, index: int, audio_dir: str | Path, split: str = "dev",
              stems_dir: str | Path | None = None, condition: dict[str, Any] | None = None) -> dict[str, Any]:
    """Generate one item: writes audio_dir/<id>.wav and returns its MMAR-format meta row. stems_dir: also
    write the clean and noise components there (see apply_condition). condition: force the held-out
    condition (heldout_condition split only; see choose_condition); the id then names it."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    spec_kind = KINDS[kind]
    if split not in spec_kind.splits:
        raise ValueError(f"kind {kind!r} has no {split} items")
    iid = item_id(kind, seed, index, split)
    if condition:
        iid += "-" + "-".join(str(v).replace(".", "p") for v in condition.values())
    audio_dir = Path(audio_dir)
    audio_dir.mkdir(parents=True, exist_ok=True)
    out = audio_dir / f"{iid}.wav"
    with tempfile.TemporaryDirectory(prefix="audiomind-syn-") as tmp:
        ctx = Ctx(spec_kind, seed, index, split, Path(tmp))
        ctx.cond = choose_condition(spec_kind, split, ctx.crng, condition)
        clean = Path(tmp) / "clean.wav"
        spec = spec_kind.make(ctx, clean)
        rec = apply_condition(ctx, clean, out, Path(stems_dir) / iid if stems_dir is not None else None)
    # an empty condition field never hides a truth field of the same name (stereo_side's pan is its truth)
    rec = {k: v for k, v in rec.items() if not (v is None and k in spec.truth)}
    answer = spec.choices[0]
    if len(set(spec.choices)) != len(spec.choices):
        raise AssertionError(f"{iid}: duplicate choices {spec.choices}")
    order = ctx.prng.permutation(len(spec.choices))
    choices = [spec.choices[int(i)] for i in order]
    question = f"{ctx.preamble} {spec.question}" if ctx.preamble else spec.question
    duration = rec["clip_s"]
    return {
        "id": iid,
        "audio_path": f"./{AUDIO_DIR}/{iid}.wav",
        "question": question,
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
        "split": split,
        "construction": {**spec.truth, "seed": seed, "index": index, "split": split,
                         "answer_index": choices.index(answer), "needs_step": spec_kind.needs_step,
                         "phrasing": ctx.phrasing, "voices": ctx.voices_used, **rec},
    }


def _hms(seconds: float) -> str:
    s = int(np.ceil(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def generate(out_dir: str | Path, per_kind: int = 10, seed: int = 0, kinds: Iterable[str] | None = None,
             progress: Callable[[str], None] | None = None, split: str = "dev",
             stems_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Write OUT/meta.jsonl (MMAR format) and OUT/audio/<id>.wav: `per_kind` items of each kind for one split
    (kinds that do not accept the split are skipped)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    out_dir = Path(out_dir)
    names = list(kinds) if kinds else list(KINDS)
    unknown = [k for k in names if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
    rows: list[dict[str, Any]] = []
    for kind in names:
        if split not in KINDS[kind].splits:
            continue
        for i in range(per_kind):
            rows.append(make_item(kind, seed, i, out_dir / AUDIO_DIR, split=split, stems_dir=stems_dir))
            if progress:
                progress(rows[-1]["id"])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / META_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return rows


def generate_splits(root: str | Path, per_kind: int = 10, seed: int = 0, kinds: Iterable[str] | None = None,
                    splits: Iterable[str] = SPLITS, progress: Callable[[str], None] | None = None
                    ) -> dict[str, list[dict[str, Any]]]:
    """One MMAR-format set per split: ROOT/<split>/meta.jsonl + ROOT/<split>/audio/."""
    kinds = list(kinds) if kinds else None
    return {s: generate(Path(root) / s, per_kind, seed, kinds, progress, split=s) for s in splits}
