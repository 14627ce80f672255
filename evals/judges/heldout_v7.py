"""Held-out judge benchmark, set v7: real recordings and new voices (fresh, built before being judged).

Built without reading or running any judge (nothing under audiomind/judges/ was opened, imported or run, and
no benchmark runner was run on this audio while it was written). It reuses the helpers of
evals/judges/heldout.py (Kit, seq, overlay, _load, SR, build_rubric and build_edits, which save with its
write, the gender bands MALE_MAX_HZ / FEMALE_MIN_HZ and check_voice's pYIN measurement) and writes the same files:
OUT/rubric/items.jsonl (run_bench.py format) and OUT/edit/items.jsonl (run_edit_bench.py format).

Material (none of it used by v1-v6 or the dev checks):
- real recordings, Debian package tuxpaint-stamps-default (the sound a stamp plays, not its spoken
  *_desc*.ogg description), under /usr/share/tuxpaint/stamps/, trimmed, faded and resampled to 16 kHz mono:
  animals/mammals/dogs/dog.ogg (two barks; each cut out on its own), animals/birds/rooster.ogg,
  animals/birds/crow.ogg (two caws), animals/mammals/pig.ogg (two grunts), animals/mammals/bovines/cow.ogg,
  animals/mammals/bovines/sheep.ogg, animals/mammals/bovines/goat.ogg, animals/mammals/equines/donkey.ogg,
  animals/mammals/equines/horse.ogg, animals/birds/duck.ogg, animals/birds/owl.ogg, animals/birds/seagull.ogg,
  animals/birds/turkey.ogg, animals/mammals/cats/lion.ogg, animals/mammals/elephant.ogg,
  animals/insects/bee.ogg, naturalforces/lightningbolt.ogg (thunder), household/tools/saw.ogg,
  household/tools/hammer.ogg (one blow, struck again by placing it n times) and
  vehicles/emergency/firetruck.ogg (its siren part, 5.4-9.4 s). Every count a wording states is the number of
  envelope events measured when the set is built (10 ms RMS frames above -25 dB re the clip peak, gaps
  under 0.1 s merged); the build stops if one differs.
- General MIDI programs no earlier set played (FluidR3_GM via audiomind.synth): honky-tonk piano (3), rock
  organ (18), distortion guitar (30) and tenor sax (66). 13 of the 14 scenes and 11 of the 12 edit bases
  use a recording.
- voices: festival (text2wave) ked_diphone (festvox-kdlpc16k, American English, male), czech_dita
  (festvox-czech-dita, Czech, female), czech_machac (festvox-czech-machac, Czech, male), czech_ph
  (festvox-czech-ph, Czech, male), lp_diphone (festvox-italp16k, Italian, female), pc_diphone
  (festvox-itapc16k, Italian, male), hy_fi_mv_diphone (festvox-suopuhe-mv, Finnish, male); and espeak-ng
  en-us+f4 (female: v1 asked for en-gb+f4, which this espeak-ng speaks as the plain en-gb voice, so the f4
  variant was never heard; checked to differ from en-us's default voice and from every espeak-ng voice of
  v1-v6). The non-English voices speak a sentence of their own language and the wordings only say that a
  woman or a man speaks (in that language), never quoting them; only the English voices are quoted.
  Median f0 (librosa pYIN 60-400 Hz, as heldout.Kit.check_voice) of each voice's test sentence (the English
  pangram, or a sentence of its own language), measured when the set is built: ked 102 Hz, machac 75 Hz,
  ph 135 Hz, pc 112 Hz, mv 85 Hz (male, <= 155 Hz); en-us+f4 178 Hz, dita 218 Hz, lp 205 Hz (female,
  >= 170 Hz). The build also checks every spoken line used here against its band (an en-us+f4 line 'say
  hello to the neighbours' measured 169.7 Hz and was replaced).
  Rejected: festival suo_fi_lj_diphone (Finnish female, 165 Hz: below the female band) and upc_ca_ona_hts
  (Catalan female, 166 Hz on its test sentence, 176 Hz on others: on the band edge); espeak-ng en-us+f5
  (203 Hz, but v1's en-gb-scotland+f5 already sounded the f5 variant); flite voices, festival kal_diphone
  (flite kal's speaker) and us-slt-hts (the dev slt speaker) were not tried. Considered and left out of the
  recordings: fireworks.ogg (a steady 110 Hz tone, not clearly fireworks), toilet.ogg (a steady 320 Hz tone
  in it), the stamps whose
  sounds are spoken words (faces, letters, numbers, apollo_lander), instruments earlier sets named (violin,
  cello, bassoon, crash cymbal, tom), and the oxygen-sounds / deepin-sound-theme / sound-icons UI sounds
  (short synthetic chimes an ordinary user would not name).
- wordings: written by hand here, each with its own phrasing, not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 55 rubric items (14 positives; 8 order, 8 gender, 10 extra, 4 count,
11 missing) and 48 edit items; clips 2.3-8.1 s, every file non-silent (RMS -28 to -16 dBFS).

Needs the Debian packages: tuxpaint-stamps-default festival festvox-kdlpc16k festvox-czech-dita
festvox-czech-machac festvox-czech-ph festvox-italp16k festvox-itapc16k festvox-suopuhe-mv espeak-ng
fluidsynth fluid-soundfont-gm.

    .venv/bin/python evals/judges/heldout_v7.py --out /tmp/hv7
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import typer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (str(ROOT), str(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from build_sets import (
    FEMALE_MIN_HZ,
    MALE_MAX_HZ,
    SR,
    Kit,
    _load,
    build_edits,
    build_rubric,
    overlay,
    seq,
    voices_of,
)

from audiomind import audio as aio
from audiomind import synth

STAMPS = Path("/usr/share/tuxpaint/stamps")

# voice -> (engine, voice name, gender, language, text encoding festival expects, test sentence)
VOICES7 = {
    "ked": ("festival", "ked_diphone", "male", "English", "latin-1", "the quick brown fox jumps over the lazy dog"),
    "f4": ("espeak", "en-us+f4", "female", "English", "utf-8", "the quick brown fox jumps over the lazy dog"),
    "dita": ("festival", "czech_dita", "female", "Czech", "iso-8859-2",
             "Dobrý den, vlak do Prahy přijede za deset minut."),
    "machac": ("festival", "czech_machac", "male", "Czech", "iso-8859-2",
               "Dobrý den, vlak do Prahy přijede za deset minut."),
    "ph": ("festival", "czech_ph", "male", "Czech", "iso-8859-2", "Dobrý den, vlak do Prahy přijede za deset minut."),
    "lp": ("festival", "lp_diphone", "female", "Italian", "latin-1", "Buongiorno a tutti, la cena è pronta in cucina."),
    "pc": ("festival", "pc_diphone", "male", "Italian", "latin-1", "Buongiorno a tutti, la cena è pronta in cucina."),
    "mv": ("festival", "hy_fi_mv_diphone", "male", "Finnish", "latin-1",
           "Huomenta, bussi lähtee kymmenen minuutin päästä."),
}

# recording -> (file under STAMPS, start s, end s or None for the file's end)
RECORDINGS = {
    "bark_a": ("animals/mammals/dogs/dog.ogg", 0.0, 0.45), "bark_b": ("animals/mammals/dogs/dog.ogg", 0.50, None),
    "dog": ("animals/mammals/dogs/dog.ogg", 0.0, None),
    "rooster": ("animals/birds/rooster.ogg", 0.0, None), "crow": ("animals/birds/crow.ogg", 0.0, None),
    "grunt_a": ("animals/mammals/pig.ogg", 0.0, 0.28), "grunt_b": ("animals/mammals/pig.ogg", 0.30, None),
    "cow": ("animals/mammals/bovines/cow.ogg", 0.0, None), "sheep": ("animals/mammals/bovines/sheep.ogg", 0.0, None),
    "goat": ("animals/mammals/bovines/goat.ogg", 0.0, None),
    "donkey": ("animals/mammals/equines/donkey.ogg", 0.0, None),
    "horse": ("animals/mammals/equines/horse.ogg", 0.35, 1.95), "duck": ("animals/birds/duck.ogg", 0.0, None),
    "owl": ("animals/birds/owl.ogg", 0.0, None), "seagull": ("animals/birds/seagull.ogg", 0.0, 3.0),
    "turkey": ("animals/birds/turkey.ogg", 0.0, None), "lion": ("animals/mammals/cats/lion.ogg", 0.0, None),
    "elephant": ("animals/mammals/elephant.ogg", 0.0, None), "bee": ("animals/insects/bee.ogg", 1.0, 4.5),
    "thunder": ("naturalforces/lightningbolt.ogg", 0.0, 4.2), "saw": ("household/tools/saw.ogg", 0.0, None),
    "hammer": ("household/tools/hammer.ogg", 0.0, None),
    "siren": ("vehicles/emergency/firetruck.ogg", 5.4, 9.4),
}

# General MIDI programs no earlier set played: name -> (program, notes, note length s)
GM7 = {
    "honky_tonk": (3, ["C4", "E4", "G4", "A4", "G4", "E4", "C4"], 0.25),
    "rock_organ": (18, ["G3", "B3", "D4", "G4", "D4"], 0.4),
    "dist_guitar": (30, ["E3", "G3", "A3", "E3", "D3"], 0.3),
    "tenor_sax": (66, ["D4", "F4", "A4", "G4", "F4", "D4"], 0.35),
}


def _fade(y: np.ndarray, in_s: float = 0.01, out_s: float = 0.05) -> np.ndarray:
    y = y.astype(np.float32).copy()
    a, b = min(len(y) // 4, int(in_s * SR)), min(len(y) // 4, int(out_s * SR))
    if a:
        y[:a] *= np.linspace(0, 1, a, dtype=np.float32)
    if b:
        y[-b:] *= np.linspace(1, 0, b, dtype=np.float32)
    return y


def _peak(y: np.ndarray, to: float) -> np.ndarray:
    top = float(np.max(np.abs(y))) or 1.0
    return (y * (to / top)).astype(np.float32)


def events(y: np.ndarray, thr_db: float = -25.0, merge_s: float = 0.1, min_s: float = 0.03) -> list[tuple[float, float]]:
    """Separate sound events: runs of 10 ms frames whose RMS is within thr_db of the loudest frame, runs closer
    than merge_s joined, runs shorter than min_s dropped."""
    f = int(0.01 * SR)
    n = len(y) // f
    r = np.sqrt(np.mean(y[: n * f].astype(np.float64).reshape(n, f) ** 2, axis=1) + 1e-20)
    on = 20 * np.log10(r / r.max()) > thr_db
    runs: list[list[float]] = []
    i = 0
    while i < n:
        if on[i]:
            j = i
            while j < n and on[j]:
                j += 1
            if runs and i * 0.01 - runs[-1][1] < merge_s:
                runs[-1][1] = j * 0.01
            else:
                runs.append([i * 0.01, j * 0.01])
            i = j
        else:
            i += 1
    return [(a, b) for a, b in runs if b - a >= min_s]


def median_f0(y: np.ndarray) -> float | None:
    import librosa

    f0, _, _ = librosa.pyin(y.astype(np.float64), fmin=60, fmax=400, sr=SR)
    f0 = f0[~np.isnan(f0)]
    return float(np.median(f0)) if len(f0) else None


def fits(gender: str, hz: float | None) -> bool:
    return hz is not None and (hz <= MALE_MAX_HZ if gender == "male" else hz >= FEMALE_MIN_HZ)


def first_onset(y: np.ndarray) -> float:
    """When the first sound event of y starts, in s (events' envelope test)."""
    return events(y)[0][0]


def text_id(text: str) -> str:
    """The 10 hex digits (sha1) that name a text's cached audio file."""
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def tts(engine: str, name: str, text: str, p: Path, enc: str = "utf-8") -> None:
    """Write voice name of engine saying text to p: espeak-ng ("espeak"), else festival's text2wave reading the
    text in encoding enc, peak-normalised to 0.7."""
    if engine == "espeak":
        synth.speech(text, p, voice=name, engine="espeak")
        return
    with tempfile.TemporaryDirectory() as tmp:
        txt, raw = Path(tmp) / "t.txt", Path(tmp) / "raw.wav"
        txt.write_bytes(text.encode(enc))
        subprocess.run(["text2wave", "-eval", f"(voice_{name})", "-o", str(raw), str(txt)], check=True,
                       capture_output=True)
        aio.write_wav(p, _peak(_load(raw), 0.7), SR)


def delete_in_place(first: np.ndarray, middle: np.ndarray, last: np.ndarray) -> dict:
    """A delete base's clips for seq([first, middle, last]): first silenced in place (real), last silenced
    instead (wrong_target), and only the first half of first silenced (partial)."""
    orig = seq([first, middle, last])
    lead = int(0.2 * SR)
    real, wrong, part = orig.copy(), orig.copy(), orig.copy()
    real[lead: lead + len(first)] = 0.0
    part[lead: lead + len(first) // 2] = 0.0
    x0 = lead + len(first) + int(0.4 * SR) + len(middle) + int(0.4 * SR)
    wrong[x0: x0 + len(last)] = 0.0
    return {"original": orig, "real": real, "wrong": {"wrong_target": wrong, "partial": part}}


class Kit7(Kit):
    """heldout.Kit's cache folder, with the v7 voices, recordings and programs; every spoken line is recorded
    so the build can check it against its voice's band, and every stated count and time is logged for the
    build to check. Later sets subclass it with their own tag, voices, recordings and programs."""

    tag = "7"  # names the cached files: v7_* (speech), r7_* (recordings), g7_* (General MIDI)
    voices: dict[str, tuple] = VOICES7  # key -> (engine, voice, gender, language, ..., test sentence)
    recordings: dict[str, tuple] = RECORDINGS  # name -> (file under STAMPS or absolute path, start s, end s)
    programs: dict[str, tuple] = GM7

    def __init__(self, out: Path):
        super().__init__(out)
        self.lines: list[tuple[str, str, np.ndarray]] = []
        self.counted: list[tuple[str, int, int]] = []
        self.onsets: list[tuple[str, float, float, float]] = []

    def say(self, key: str, text: str) -> np.ndarray:
        """Voice key saying text (cached), logged in self.lines."""
        p = self.d / f"v{self.tag}_{key}_{text_id(text)}.wav"
        if not p.exists():
            self.speak(key, text, p)
        y = _load(p)
        self.lines.append((key, text, y))
        return y

    def speak(self, key: str, text: str, p: Path) -> None:
        """Write voice key saying text to p (festival reads the text in the encoding VOICES7 gives)."""
        engine, name, _, _, enc, _ = VOICES7[key]
        tts(engine, name, text, p, enc)

    def rec(self, name: str) -> np.ndarray:
        """Recording name (cached): cut from start to end s, faded, peak-normalised to 0.5."""
        p = self.d / f"r{self.tag}_{name}.wav"
        if not p.exists():
            rel, a, b = self.recordings[name]
            y = _load(STAMPS / rel)
            y = y[int(a * SR): int(b * SR) if b is not None else len(y)]
            aio.write_wav(p, _peak(_fade(y), 0.5), SR)
        return _load(p)

    def gm(self, name: str) -> np.ndarray:
        """General MIDI program name (cached) playing its notes."""
        p = self.d / f"g{self.tag}_{name}.wav"
        if not p.exists():
            self.play(name, p)
        return _load(p)

    def play(self, name: str, p: Path) -> None:
        """Write General MIDI program name (self.programs: program, notes, note length s) to p."""
        prog, notes, note_s = self.programs[name]
        synth.melody(notes, p, note_s=note_s, lead_s=0.1, program=prog)

    def espeak(self, voice: str, text: str, file: str) -> np.ndarray:
        """espeak-ng voice saying text, cached as file (not logged as a spoken line)."""
        p = self.d / file
        if not p.exists():
            synth.speech(text, p, voice=voice, engine="espeak")
        return _load(p)

    def earlier_espeak(self, text: str, lang: str) -> dict[str, np.ndarray]:
        """Every espeak-ng voice of v1-v6 (their sets/vN/set.yaml, all English) saying text, for an English
        voice; else none."""
        if lang != "English":
            return {}
        earlier = voices_of("v1", "v2", "v3", "v4", "v5", "v6")
        return {o: self.voice(o, text, earlier) for o, v in earlier.items() if v.engine == "espeak"}

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: en-us's default voice and every
        espeak-ng voice of v1-v6."""
        default = self.espeak("en-us", test, "default_en-us.wav")
        return {"default en-us": default, **self.earlier_espeak(test, lang)}

    def times(self, parts: list[np.ndarray], gap_s: float) -> np.ndarray:
        """The parts one after another with gap_s of silence between (no lead or tail)."""
        gap = np.zeros(int(gap_s * SR), np.float32)
        out: list[np.ndarray] = []
        for i, y in enumerate(parts):
            out += ([gap] if i else []) + [y]
        return np.concatenate(out)

    def looped(self, name: str, n_s: int) -> np.ndarray:
        """A recording repeated back to back until it is n_s samples long."""
        y = self.rec(name)
        return np.tile(y, int(np.ceil(n_s / len(y))))[:n_s]

    def counted_as(self, label: str, y: np.ndarray, n: int) -> np.ndarray:
        """y, after checking that it holds exactly n separate events (the count a wording states)."""
        self.counted.append((label, n, len(events(y))))
        return y

    def placed(self, label: str, name: str, n: int, gap_s: float) -> np.ndarray:
        """Recording name placed n times, gap_s apart, checked to hold n events (logged as 'label xn')."""
        return self.counted_as(f"{label} x{n}", self.times([self.rec(name)] * n, gap_s), n)

    def at(self, label: str, t: float, lo: float, hi: float) -> None:
        """Log a stated time t (measured) that the build checks lies within lo..hi."""
        self.onsets.append((label, t, lo, hi))

    def barks(self, n: int) -> np.ndarray:
        a, b = self.rec("bark_a"), self.rec("bark_b")
        return self.counted_as(f"dog barks x{n}", self.times([a if i % 2 == 0 else b for i in range(n)], 0.35), n)

    def blows(self, n: int) -> np.ndarray:
        return self.placed("hammer blows", "hammer", n, 0.45)

    def grunts(self) -> np.ndarray:
        return self.counted_as("pig grunts x2", self.times([self.rec("grunt_a"), self.rec("grunt_b")], 0.3), 2)

    def caws(self) -> np.ndarray:
        return self.counted_as("crow caws x2", self.rec("crow"), 2)

    def moos(self, n: int) -> np.ndarray:
        return self.placed("cow moos", "cow", n, 0.4)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v7(k: Kit7) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    rise = k.say("f4", "rise and shine, breakfast is on the table")
    rooster = k.rec("rooster")
    scene("rooster_breakfast", seq([rooster, rise]),
          "First a rooster crows, then a woman calls out 'rise and shine, breakfast is on the table'.",
          {"order": "A woman calls out 'rise and shine, breakfast is on the table', and the rooster only crows once "
                    "she has finished.",
           "gender": "First a rooster crows, then a man calls out 'rise and shine, breakfast is on the table'.",
           "extra": "First a rooster crows and a dog barks at it, then a woman calls out 'rise and shine, breakfast "
                    "is on the table'."},
          seq([rise]))
    scene("dog_three", seq([k.barks(3)]), "is this a dog barking 3 times? three short woofs and then nothing",
          {"count": "is this a dog barking 5 times? five short woofs and then nothing",
           "extra": "is this a dog barking 3 times, with a cat hissing back at it?"}, None)
    czech = k.say("dita", "Dobrý den, vlak do Prahy přijede za deset minut.")
    thunder = k.rec("thunder")
    scene("thunder_czech", overlay(seq([czech], lead_s=0.6), thunder, 0.0, -8.0),
          "Thunder rumbles in the background while a woman speaks Czech.",
          {"gender": "Thunder rumbles in the background while a man speaks Czech.",
           "extra": "Thunder rumbles in the background and a church bell tolls while a woman speaks Czech."},
          seq([czech], lead_s=0.6))
    cow, sheep, donkey = k.rec("cow"), k.rec("sheep"), k.rec("donkey")
    scene("farm_roll_call", seq([cow, sheep, donkey], gap_s=0.35),
          "Farmyard roll call: a cow moos, a sheep bleats, and last of all a donkey hee-haws.",
          {"order": "Farmyard roll call: a donkey hee-haws, a sheep bleats, and last of all a cow moos.",
           "extra": "Farmyard roll call: a cow moos, a sheep bleats, a horse neighs, and last of all a donkey "
                    "hee-haws."},
          seq([cow, donkey], gap_s=0.35))
    roma = k.say("pc", "Questa mattina il treno per Roma è in ritardo.")
    blows = k.blows(4)
    scene("hammer_italian", seq([blows, roma]),
          "Somebody bangs a hammer four (4) times, and after that a man says something in Italian.",
          {"count": "Somebody bangs a hammer two (2) times, and after that a man says something in Italian.",
           "order": "A man says something in Italian, and after that somebody bangs a hammer four (4) times.",
           "gender": "Somebody bangs a hammer four (4) times, and after that a woman says something in Italian."},
          seq([roma]))
    scene("crow_two", seq([k.caws()]), "Just a crow: it caws twice, nothing else.",
          {"count": "Just a crow: it caws three times, nothing else.",
           "extra": "A crow caws twice over the hum of traffic on a busy road."}, None)
    clear = k.say("ked", "please keep the road clear for the fire crew")
    siren = k.rec("siren")
    scene("siren_fire_crew", seq([siren, clear]),
          "Once the fire engine siren stops, a man says 'please keep the road clear for the fire crew'.",
          {"order": "A man says 'please keep the road clear for the fire crew', and once he stops a fire engine "
                    "siren starts.",
           "gender": "Once the fire engine siren stops, a woman says 'please keep the road clear for the fire crew'."},
          seq([clear]))
    finn = k.say("mv", "Huomenna sataa lunta koko päivän.")
    bee = k.rec("bee")
    scene("bee_finnish", overlay(seq([finn], lead_s=0.8, tail_s=0.6), bee, 0.0, -6.0),
          "A bee buzzes around the whole time a man is talking in Finnish.",
          {"gender": "A bee buzzes around the whole time a woman is talking in Finnish.",
           "extra": "A bee buzzes around the whole time a man is talking in Finnish, and a phone rings."},
          seq([finn], lead_s=0.8, tail_s=0.6))
    ask = k.say("ked", "did you remember to water the plants")
    ans = k.say("f4", "yes, right after lunch")
    scene("plants_dialogue", seq([ask, ans], gap_s=0.6),
          "He asks: 'did you remember to water the plants?' She answers: 'yes, right after lunch.'",
          {"gender": "She asks: 'did you remember to water the plants?' He answers: 'yes, right after lunch.'",
           "extra": "He asks: 'did you remember to water the plants?' She answers: 'yes, right after lunch', over a "
                    "kettle whistling."},
          None)
    horse, sax = k.rec("horse"), k.gm("tenor_sax")
    scene("horse_sax", seq([horse, sax]),
          "a horse whinnies followed by a tenor saxophone playing a little tune",
          {"order": "a tenor saxophone plays a little tune followed by a horse whinnying",
           "extra": "a horse whinnies and its hooves clop along, followed by a tenor saxophone playing a little tune"},
          seq([sax]))
    lion, elephant = k.rec("lion"), k.rec("elephant")
    scene("zoo_lion_elephant", seq([lion, elephant], gap_s=0.5),
          "At the zoo: a lion roars, then an elephant trumpets.",
          {"order": "At the zoo: an elephant trumpets, then a lion roars.",
           "extra": "At the zoo: a lion roars, then an elephant trumpets, then a monkey screeches."},
          seq([lion]))
    cena = k.say("lp", "Buonasera, la cena è pronta, venite a tavola.")
    owl = k.rec("owl")
    scene("owl_italian", seq([owl, cena]),
          "There's an owl hooting, and when it stops a woman starts speaking Italian.",
          {"order": "A woman speaks Italian, and when she stops an owl starts hooting.",
           "gender": "There's an owl hooting, and when it stops a man starts speaking Italian."},
          seq([cena]))
    grunts, honky = k.grunts(), k.gm("honky_tonk")
    scene("pig_honky_tonk", seq([grunts, honky]),
          "Two grunts from a pig, then somebody plays a honky-tonk piano.",
          {"count": "Three grunts from a pig, then somebody plays a honky-tonk piano.",
           "order": "Somebody plays a honky-tonk piano, then a pig grunts twice."},
          seq([honky]))
    hory = k.say("machac", "Zítra bude na horách hodně sněhu.")
    gull = k.rec("seagull")
    scene("gull_czech", overlay(seq([hory], lead_s=0.4, tail_s=0.6), gull, 0.0, -7.0),
          "Over a seagull's cries, a man says something in Czech.",
          {"gender": "Over a seagull's cries, a woman says something in Czech.",
           "extra": "Over a seagull's cries and waves crashing on the shore, a man says something in Czech."},
          seq([hory], lead_s=0.4, tail_s=0.6))
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v7(k: Kit7) -> list[dict]:
    B = []
    rooster, goat, thunder, siren = k.rec("rooster"), k.rec("goat"), k.rec("thunder"), k.rec("siren")
    bee, duck, crow, dog2 = k.rec("bee"), k.rec("duck"), k.caws(), k.counted_as("dog barks x2", k.rec("dog"), 2)
    saw, horse, lion, elephant = k.rec("saw"), k.rec("horse"), k.rec("lion"), k.rec("elephant")
    cow, sheep, owl, gull, turkey = k.rec("cow"), k.rec("sheep"), k.rec("owl"), k.rec("seagull"), k.rec("turkey")
    grunts = k.grunts()
    sax, organ, guitar = k.gm("tenor_sax"), k.gm("rock_organ"), k.gm("dist_guitar")
    # add
    sp = k.say("ked", "good morning, here are today's headlines")
    B.append({"id": "add_rooster_first", "kind": "add", "instruction": "Stick a rooster crowing in front of his first words.",
              "original": seq([sp]), "real": seq([rooster, sp]),
              "wrong": {"wrong_sound": seq([goat, sp]), "wrong_place": seq([sp, rooster])}})
    sp = k.say("f4", "and that is the end of our story")
    B.append({"id": "add_thunder_end", "kind": "add", "instruction": "once she's done talking, add a clap of thunder",
              "original": seq([sp]), "real": seq([sp, thunder]),
              "wrong": {"wrong_sound": seq([sp, siren]), "wrong_place": seq([thunder, sp])}})
    sp = k.say("pc", "Il museo apre alle nove e chiude alle sei.")
    base = seq([sp], lead_s=0.8, tail_s=0.6)
    B.append({"id": "add_bee_under", "kind": "add",
              "instruction": "Could you put a buzzing bee underneath the man's voice, so it's there the whole time he talks?",
              "original": base, "real": overlay(base, bee, 0.0, -6.0),
              "wrong": {"wrong_sound": overlay(base, duck, 0.3, -6.0),
                        "wrong_place": np.concatenate([base, bee, np.zeros(int(0.3 * SR), np.float32)])}})
    a, b = k.say("ked", "who is at the door at this hour"), k.say("ked", "I will go and have a look")
    B.append({"id": "add_barks_between", "kind": "add",
              "instruction": "Between his question and his answer, drop in a dog barking two times.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, dog2, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, crow, b], gap_s=0.35),
                        "wrong_place": np.concatenate([seq([a, b], gap_s=0.6, tail_s=0.35), dog2,
                                                       np.zeros(int(0.3 * SR), np.float32)])}})
    # delete
    sp = k.say("lp", "Oggi il mercato resta aperto fino alle sette.")
    B.append({"id": "del_duck_tail", "kind": "delete", "instruction": "Get rid of the duck quacking after she speaks.",
              "original": seq([sp, duck]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([duck]), "partial": seq([sp, duck[: int(1.1 * SR)]])}})
    sp = k.say("machac", "Dnes večer hrajeme v parku na kytaru.")
    B.append({"id": "del_saw_inplace", "kind": "delete",
              "instruction": "Silence the sawing at the start; the man and the horse stay exactly where they are.",
              **delete_in_place(saw, sp, horse)})
    sp = k.say("f4", "the storm should pass by midnight")
    bed = seq([sp], lead_s=0.6, tail_s=0.8)
    B.append({"id": "del_thunder_bed", "kind": "delete", "instruction": "Take out the thunder rumbling behind her voice.",
              "original": overlay(bed, thunder, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), thunder, 0.0, -8.0),
                        "partial": overlay(bed, thunder[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.say("dita", "Děkuji všem, uvidíme se příští týden.")
    B.append({"id": "del_elephant_mid", "kind": "delete",
              "instruction": "Remove the elephant; keep the lion and the woman talking.",
              "original": seq([lion, elephant, sp]), "real": seq([lion, sp]),
              "wrong": {"wrong_target": seq([elephant, sp]), "partial": seq([lion, elephant[: int(0.6 * SR)], sp])}})
    # replace
    sp = k.say("ked", "the farm tour starts in a few minutes")
    B.append({"id": "rep_cow_sheep", "kind": "replace", "instruction": "swap the moo at the end for a sheep baaing",
              "original": seq([sp, cow]), "real": seq([sp, sheep]),
              "wrong": {"wrong_sound": seq([sp, owl]), "deleted_only": seq([sp])}})
    sp = k.say("mv", "Tervetuloa, konsertti alkaa pian.")
    B.append({"id": "rep_sax_organ", "kind": "replace",
              "instruction": "Instead of the saxophone at the start, I want a rock organ playing.",
              "original": seq([sax, sp]), "real": seq([organ, sp]),
              "wrong": {"wrong_sound": seq([guitar, sp]), "deleted_only": seq([sp])}})
    sp = k.say("f4", "come and meet our new neighbours")
    B.append({"id": "rep_dog_duck", "kind": "replace",
              "instruction": "Where the dog barks, have a duck quack instead.",
              "original": seq([dog2, sp]), "real": seq([duck, sp]),
              "wrong": {"wrong_sound": seq([grunts, sp]), "deleted_only": seq([sp])}})
    sp = k.say("ph", "Na zahradě kvetou první růže.")
    B.append({"id": "rep_gull_crow", "kind": "replace",
              "instruction": "Replace the seagull after the man with a crow cawing.",
              "original": seq([sp, gull]), "real": seq([sp, crow]),
              "wrong": {"wrong_sound": seq([sp, turkey]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- checks and CLI (shared by v8 and v9)


def require(paths: Iterable[Path], hint: str) -> None:
    """Stop unless every recording path exists; hint says how to install the missing ones."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"recordings not found ({hint}): {missing}")


def check_voices(k: Kit7) -> dict:
    """Each of k's voices on its test sentence (the last field of its k.voices entry): its median f0 inside
    its label's band, and an espeak-ng voice's audio unlike every voice k.unlike names; stops on the first
    that fails. The test sentences are then dropped from k.lines."""
    out = {}
    for key, v in k.voices.items():
        engine, name, gender, lang, test = v[0], v[1], v[2], v[3], v[-1]
        y = k.say(key, test)
        hz = median_f0(y)
        rec = {"engine": engine, "voice": name, "gender": gender, "language": lang,
               "median_f0_hz": round(hz, 1) if hz else None, "fits_band": fits(gender, hz)}
        if engine == "espeak":
            others = k.unlike(name, lang, test)
            rec["same_audio_as"] = [o for o, w in others.items() if len(w) == len(y) and np.allclose(w, y)]
        out[key] = rec
        if not rec["fits_band"] or rec.get("same_audio_as"):
            raise SystemExit(f"voice {key} ({name}) fails its check: {rec}; pick another")
    k.lines.clear()
    return out


def check_files(out: Path) -> dict:
    """Every written clip 2-10 s long and non-silent; the range of lengths and levels."""
    lens, levels, bad = [], [], []
    for p in sorted((out / "rubric").glob("*.wav")) + sorted((out / "edit").glob("*.wav")):
        y = _load(p)
        n, db = len(y) / SR, 20 * np.log10(np.sqrt(np.mean(y.astype(np.float64) ** 2)) + 1e-12)
        lens.append(n)
        levels.append(db)
        if not 2.0 <= n <= 10.0 or db < -40.0:
            bad.append((p.name, round(n, 2), round(db, 1)))
    if bad:
        raise SystemExit(f"clips too short, too long or silent (name, s, dBFS): {bad}")
    return {"files": len(lens), "seconds": [round(min(lens), 1), round(max(lens), 1)],
            "rms_dbfs": [round(min(levels), 1), round(max(levels), 1)]}


def build_checked(name: str, out: Path, k: Kit7, scenes: Callable[..., list[dict]],
                  bases: Callable[..., list[dict]], report: tuple[str, ...] = (),
                  time_fmt: str = "{0}: {1:.2f} (allowed {2}-{3})", ensure_ascii: bool = True) -> None:
    """Build set name into out with kit k (its voices checked first, then build_rubric on scenes(k) and
    build_edits on bases(k)) and check it: every spoken line inside its voice's band, every stated count and
    time (k.counted, k.onsets) what the audio holds, and, with "clips" in report, every clip's length and
    level; stop at the first check that fails, else print the summary JSON. report names the optional
    summary fields the set prints (edit_variants, line_f0_hz, times_checked as time_fmt of each k.onsets
    entry, clips)."""
    voices = check_voices(k)
    r = build_rubric(out, scenes(k))
    e = build_edits(out, bases(k))
    bad_lines, line_hz = [], {}
    for key, text, y in k.lines:  # every spoken line, not only the test sentence, inside its voice's band
        hz = median_f0(y)
        line_hz.setdefault(key, set()).add(round(hz or 0))
        if not fits(k.voices[key][2], hz):
            bad_lines.append((key, text, hz))
    if bad_lines:
        raise SystemExit(f"spoken lines outside their voice's band: {bad_lines}")
    bad_counts = [c for c in k.counted if c[1] != c[2]]
    if bad_counts:
        raise SystemExit(f"stated counts that the audio does not hold (label, stated, measured): {bad_counts}")
    bad_times = [t for t in k.onsets if not t[2] <= t[1] <= t[3]]
    if bad_times:
        raise SystemExit("stated times that the audio does not hold (label, measured, lowest, highest): "
                         f"{bad_times}")
    s = {"set": name, "rubric_items": len(r), "rubric_positives": sum(i["aligned"] for i in r),
         "rubric_scenes": len({i["source_id"] for i in r}),
         "rubric_kinds": {kd: sum(i["negative_kind"] == kd for i in r)
                          for kd in ("order", "gender", "extra", "count", "missing")},
         "edit_items": len(e), "edit_bases": len({i["base"] for i in e}),
         "edit_kinds": {kd: len({i["base"] for i in e if i["kind"] == kd})
                        for kd in ("add", "delete", "replace")}}
    if "edit_variants" in report:
        s["edit_variants"] = {v: sum(i["variant"] == v for i in e) for v in sorted({i["variant"] for i in e})}
    s.update(voices_checked=voices, lines_checked=len(k.lines))
    if "line_f0_hz" in report:
        s["line_f0_hz"] = {key: [min(v), max(v)] for key, v in line_hz.items()}
    s["counts_checked"] = sorted({f"{c[0]}: {c[2]}" for c in k.counted})
    if "times_checked" in report:
        s["times_checked"] = [time_fmt.format(*t) for t in k.onsets]
    if "clips" in report:
        s["clips"] = check_files(out)
    s["out"] = str(out)
    print(json.dumps(s, ensure_ascii=ensure_ascii))


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv7"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v7 (real recordings, new voices): audio and items.jsonl files."""
    require((STAMPS / rel for rel, _, _ in RECORDINGS.values()), "apt-get install tuxpaint-stamps-default")
    build_checked("v7", out, Kit7(out), rubric_scenes_v7, edit_bases_v7)


if __name__ == "__main__":
    app()
