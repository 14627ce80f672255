"""Held-out judge benchmark, set v10: real recordings from the OpenSFX sound set and GCompris's activity
sounds, real human speech from KTuberling's spoken words and two telephony prompt sets, and espeak-ng voices of
languages no earlier set spoke (fresh, built before being judged).

Built without reading or running any judge: nothing under audiomind/judges/ or tests/judges/ was opened,
imported or run, no result file, benchmark runner (run_bench.py, run_edit_bench.py), generate.py or audiomind
command was read or run, and no judge heard this audio. It reuses evals/judges/heldout.py (seq, overlay, _load,
SR, build_rubric and build_edits: the same OUT/rubric/items.jsonl and OUT/edit/items.jsonl files as every
earlier set, the gender bands MALE_MAX_HZ / FEMALE_MIN_HZ, the espeak-ng voices of v1-v6),
evals/judges/heldout_v7.py (Kit7 and build_checked: the cache folder, counted_as / placed / at logs, the
envelope event counter, the pYIN median f0, the band test, check_voices, check_files) and the voice lists of
heldout_v8.py and heldout_v9.py (for the distinctness check).

Material (none of it used or rejected by v1-v9 or the dev checks):
- real recordings (cut, faded, peak-normalised, 16 kHz mono), each identified by its title / file name, its
  credited source file and by measurement (envelope, pYIN pitch, spectral centroid). Debian openttd-opensfx
  (OpenSFX 1.0.3, /usr/share/games/openttd/baseset/opensfx/opensfx.cat, read by cat_entry, which checks each
  entry's title): 56 'Lumber mill: Chainsaw' (from CHAINSAW.wav; 2.7 s of engine whine, one event), 39
  'Building bridge' (from 'in the smithy 2.wav': metallic hammer blows on an anvil, centroid 4 kHz, 2.4 s, two
  events: never counted), 25 'Truck/old bus start, pull away' (4.0 s), 27 'Modern bus start' (from 'london
  bus approaches & leaves.wav', 2.9 s), 14 'Level crossing' (from RRCrossing.wav: a railroad crossing bell,
  2.8 s), 54 'Lumber mill: Crashing tree' (from 'A Tree Falling Down.wav', 1.2 s) and 12 'Electric sparking'
  (from JacobsLadderLong2.flac, 2.9 s; only a wrong sound). Debian gcompris-qt-data (Qt resource archives
  under /usr/share/gcompris-qt/rcc/, read by rcc_entry): melody.rcc knock.wav (three knocks, 0.8 s, measured
  as three events), mining.rcc pickaxe.wav (three pickaxe strikes, 0.9 s, three events), memory-sound.rcc
  LRHeart_beat_01_LA.ogg (one lub-dub heartbeat, 0.95 s, placed n times) and
  LRStartAndStopCarEngine1LACut.ogg (a car engine starting, running and stopping, 4.9 s; the copyright file
  credits the *_LA.ogg series to Lionel Allorge and Yves Combe), instruments.rcc electric_guitar.ogg (its first 3.5 s: a picked
  electric guitar phrase, pYIN voiced 96% of frames). Every count a wording states is the number of envelope
  events measured when the set is built (heldout_v7.events: 10 ms RMS frames above -25 dB re the clip's peak,
  gaps under 0.1 s merged); the build stops if one differs. Checked at -15 to -35 dB as well: the pickaxe
  strikes (3) and the Spanish numbers (4) count the same at every threshold; heartbeats split into lub and dub
  only at -15 dB; the knocks' decays merge them into 2 at -30 dB and 1 at -35 dB. Stated times and loudness
  comparisons are measured too and the build stops if one is outside its window: the chainsaw 'after roughly 3
  seconds' starts at 3.08 s (2.5-3.5); the crossing bell is 7.4 dB louder than the Polish man after it and the
  Polish man 5.5 dB louder than the bass before him (RMS over each sound's events; 3-30 dB). 13 of the 14
  scenes and all 12 edit bases use a recording (the other scene is a real woman counting).
- General MIDI programs no earlier set played (FluidR3_GM via audiomind.synth): fingered electric bass (33)
  and percussive organ (17, only as a wrong replacement).
- real human speech, each word or prompt trimmed to its speech (events at -35 dB) and joined 0.2 s apart:
  Debian ktuberling-data (/usr/share/ktuberling/sounds/): es/*.wav, a man saying Spanish words (ojo, nariz,
  boca, oreja, sombrero, bigote, anteojos, lazo, pendiente: the words the language's es.soundtheme maps to
  the toy's parts; pelo, 188 Hz, left out) and ga/*.wav, a man saying Irish words (hata, suil, sron,
  croimeal, mala, speaclai); neither speaker is named in the package, both are men by measurement. Debian
  asterisk-prompt-es-co (/usr/share/asterisk/sounds/es/, GSM 6.10 at 8 kHz, decoded with sox: Avatar Ltda. /
  July E. Jiménez per its copyright file; Colombian Spanish, female), its prompts auth-thankyou, vm-goodbye,
  vm-sorry and digits 1-4 (uno ... cuatro, quoted); Debian asterisk-prompt-it-menardi-wav
  (it_IT_f_Menardi: Paola Dal Zot, 'the voice', per its copyright file; Italian, female), only the prompts
  vm-goodbye, vm-sorry and vm-nobodyavail (see the rejections). Only the ktuberling words and the Spanish
  numbers are quoted (their file names state them); the other prompts are only said to be Spanish / Italian.
- TTS voices, each a voice no earlier set used: espeak-ng en-us+Alex (English, male, quoted), pl+m3 (Polish,
  male), bg+f5 (Bulgarian, female) and hr+f3 (Croatian, female): languages no earlier set spoke; the build
  checks that each renders audio unlike its language's default voice and (English) unlike every espeak-ng
  voice of v1-v6, v8's en-us+Hugo and v9's en-us+Gene.
  Median f0 (librosa pYIN 60-400 Hz, heldout_v7.median_f0) of each voice's test material, measured when the
  set is built: Spanish man 119 Hz, Irish man 115 Hz, Alex 104 Hz, pl+m3 107 Hz (male, <= 155 Hz); July
  Jiménez 237 Hz, Paola Dal Zot 205 Hz, bg+f5 208 Hz, hr+f3 209 Hz (female, >= 170 Hz). Every spoken line is
  checked against its voice's band too; the lines used measure Spanish man 113-123, Irish man 115-118, Alex
  102-104, pl+m3 105-108, July 205-237, Paola 199-208, bg+f5 190-202, hr+f3 210-213 Hz. Four of the eight
  voices are real people (two men, two women).
  Rejected voices: asterisk-prompt-fr-armelle (Armelle Desjardins, French, female by name: her GSM prompts
  measure 60-159 Hz, hello-world 144, digits 149-159, outside the female band); the Menardi set as a whole
  (median 178 Hz over its 292 prompts, p10 163; hello-world 149 and auth-thankyou 145 Hz fall below the
  female band, and the copyright names Marco Menardi as well, so only prompts measuring >= 199 Hz are used);
  ktuberling en (pYIN finds 60 Hz or nothing on half its words, the rest spread over 99-396 Hz), it, ro and
  uk (200-257 Hz, unnamed speakers who may be children), nl, fi, sr and sv (273-346 Hz: children's pitch); de (131-140 Hz)
  and wa (Walloon, 133 Hz) men measured and not needed. espeak-ng en-us+Adam, Gustave, Rob, Pedro, Benjamin,
  Boris and Ed render exactly the default en-us voice; measured and not needed: en-us+Diogo (105), en-us+Marco
  (131), pl+m1 (98), tr+m2 (99), cy+m3 (106), bg+m1 (95), cy+f2 (196), sk+f2 (190), is+f5 (211), lv+f2 (192),
  id+f4 (179).
  Rejected recordings: OpenSFX ship and ferry horns (a ship's horn is named in a v8 wording), cow, sheep,
  horse (v7), lion roar, monkeys, tropical birds (v7 / v8 / v5), jackhammer, explosion, propeller plane (v9)
  and the jets (close to v9's aeroplane), helicopter and applause (v5), cash till (a till is named in a v9
  wording), car horn (v8 wording), wind and heavy wind (v8 wording), bubbles and slurp (v8 / v9 wordings),
  the steam, diesel, maglev and monorail train departures (a passing train is named in a v6 wording), crash
  and big crash (ambiguous; 'crash' was v2's cymbal), morse and beep (sine beeps: dev), sawmill (saw: v7),
  splats, mining machinery, steam, 'Oooh' and the Toyland effects (not clearly nameable). GCompris farm
  animals (all v7 / v8 animals; the cat is named in earlier wordings), every instruments.rcc file but the
  electric guitar (instruments earlier sets named), memory-sound barks (dog: v7), Buddhist gong (a temple gong
  is named in a v6 wording), rain (v9), applause (v5), door open (doors named in v8 / v9 wordings), train
  slowing down, frogs in a storm (frog: v8), ring (a phone: dev), factory noise, weird, fireballs and object
  falling (ambiguous), the explore_world_music clips (a region's music, not clearly nameable), drip.wav
  (0.09 s), eat.wav, lock.wav and water_fill.wav (ambiguous). Debian lincity-ng-data sounds (ambient loops
  named only by a building: Farm1-3, Health1-5, School1-3, ...) and pingus-data (cartoon voices; splash: v9)
  were measured and left out.
- wordings: written by hand here in styles earlier sets did not use (second person 'You'll hear ...', 'pickaxe:
  three strikes; woman: ...; in that order', relative clauses 'a man who speaks ...', 'a tree that's been cut',
  'meanwhile', 'shortly after', 'eventually', 'to finish', 'after roughly 3 seconds', loudness comparisons,
  casual 'kinda', 'some guy', 'some gal', 'noodling', American words: truck, gas, railroad crossing,
  windshield; counts in words and digits; edit instructions with 'let's', 'could you', 'make it so that',
  passive voice and 'X goes, Y stays'), not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 59 rubric items (14 positives; 10 order, 12 gender, 7 extra, 4 count,
12 missing) and 48 edit items; 86 clips of 2.1-8.8 s, every one non-silent (RMS -32.5 to -16.4 dBFS), checked
by the build.

Needs the Debian packages: openttd-opensfx gcompris-qt-data ktuberling-data asterisk-prompt-es-co
asterisk-prompt-it-menardi-wav sox espeak-ng fluidsynth fluid-soundfont-gm.

    .venv/bin/python evals/judges/heldout_v10.py --out /tmp/hv10
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import typer

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # for heldout and heldout_v7, which put the repository root on sys.path
    sys.path.insert(0, str(HERE))

from build_sets import SR, _load, overlay, seq
from heldout_v7 import Kit7, _fade, _peak, build_checked, delete_in_place, events, require, text_id, tts
from heldout_v8 import VOICES8
from heldout_v9 import VOICES9

from audiomind import audio as aio

OPENSFX = Path("/usr/share/games/openttd/baseset/opensfx/opensfx.cat")
GCOMPRIS = Path("/usr/share/gcompris-qt/rcc")
KTUBERLING = Path("/usr/share/ktuberling/sounds")
ASTERISK = Path("/usr/share/asterisk/sounds")
PANGRAM = "the quick brown fox jumps over the lazy dog"

# voice -> (engine, voice name or prompt folder, gender, language, test sentence). A 'prompts' voice is a real
# person's recorded words or prompts: its 'text' is file stems (space-separated, under the folder), played in turn.
VOICES10 = {
    "es_m": ("prompts", "ktuberling:es", "male", "Spanish", "ojo nariz boca oreja sombrero"),
    "ga_m": ("prompts", "ktuberling:ga", "male", "Irish", "hata suil sron croimeal"),
    "july": ("prompts", "asterisk-gsm:", "female", "Spanish", "es/auth-thankyou es/vm-goodbye es/vm-sorry"),
    "paola": ("prompts", "asterisk-wav:it_IT_f_Menardi", "female", "Italian", "vm-goodbye vm-sorry vm-nobodyavail"),
    "alex": ("espeak", "en-us+Alex", "male", "English", PANGRAM),
    "pl_m3": ("espeak", "pl+m3", "male", "Polish", "Dzień dobry, pociąg do Krakowa odjeżdża za dziesięć minut."),
    "bg_f5": ("espeak", "bg+f5", "female", "Bulgarian", "Добро утро, влакът за София тръгва след десет минути."),
    "hr_f3": ("espeak", "hr+f3", "female", "Croatian", "Dobro jutro, vlak za Zagreb polazi za deset minuta."),
}
PROMPT_DIRS = {"ktuberling": (KTUBERLING, ".wav"), "asterisk-gsm": (ASTERISK, ".gsm"),
               "asterisk-wav": (ASTERISK, ".wav")}

# recording -> (source, start s, end s or None). Source ("cat", i, title): entry i of OpenSFX's opensfx.cat,
# checked to carry that title; ("rcc", archive, path): a file inside a GCompris Qt resource archive.
RECORDINGS10 = {
    "chainsaw": (("cat", 56, '"Lumber mill: Chainsaw"'), 0.0, None),
    "anvil": (("cat", 39, '"Building bridge"'), 0.0, None),
    "truck": (("cat", 25, '"Truck/old bus start, pull away"'), 0.0, None),
    "bus": (("cat", 27, '"Modern bus start"'), 0.0, None),
    "crossing": (("cat", 14, '"Level crossing"'), 0.0, None),
    "treefall": (("cat", 54, '"Lumber mill: Crashing tree"'), 0.0, None),
    "sparks": (("cat", 12, '"Electric sparking"'), 0.0, None),
    "knocks": (("rcc", "melody", "gcompris/src/activities/melody/resource/knock.wav"), 0.0, None),
    "pickaxe": (("rcc", "mining", "gcompris/src/activities/mining/resource/pickaxe.wav"), 0.0, None),
    "heart": (("rcc", "memory-sound", "gcompris/src/activities/memory-sound/resource/LRHeart_beat_01_LA.ogg"),
              0.0, None),
    "engine": (("rcc", "memory-sound",
                "gcompris/src/activities/memory-sound/resource/LRStartAndStopCarEngine1LACut.ogg"), 0.0, None),
    "guitar": (("rcc", "instruments", "gcompris/src/activities/instruments/resource/electric_guitar.ogg"), 0.0, 3.5),
}

# General MIDI programs no earlier set played: name -> (program, notes, note length s)
GM10 = {
    "e_bass": (33, ["E2", "E2", "G2", "A2", "B2", "A2", "G2", "E2"], 0.3),
    "perc_organ": (17, ["C4", "E4", "G4", "E4", "C5", "G4"], 0.3),
}


def cat_entry(i: int, title: str) -> bytes:
    """Sound i of OpenSFX's opensfx.cat (a table of (offset | 1 << 31, size) pairs, then per sound a length-prefixed
    title and a RIFF file), after checking that its title starts with title."""
    b = OPENSFX.read_bytes()
    off, size = struct.unpack_from("<II", b, 8 * i)
    blob = b[off & 0x7FFFFFFF: (off & 0x7FFFFFFF) + size]
    name = blob[1: 1 + blob[0]].decode("latin-1")
    if not name.startswith(title):
        raise SystemExit(f"opensfx.cat entry {i} is {name!r}, not {title}")
    return blob[blob.find(b"RIFF"):]


def rcc_entry(archive: str, path: str) -> bytes:
    """The file path inside GCompris's Qt resource archive rcc/archive.rcc (the 'qres' format: a tree of
    name / flags / data-offset nodes; flag 1 is zlib with a 4-byte size prefix, flag 2 a folder)."""
    b = (GCOMPRIS / f"{archive}.rcc").read_bytes()
    ver, tree, data, names = struct.unpack_from(">IIII", b, 4)
    size_node = 14 + (8 if ver >= 2 else 0)

    def name(o: int) -> str:
        n = struct.unpack_from(">H", b, names + o)[0]
        return b[names + o + 6: names + o + 6 + 2 * n].decode("utf-16-be")

    node, parts = 0, path.split("/")
    for part in parts:
        cnt, first = struct.unpack_from(">II", b, tree + node * size_node + 6)
        node = next((c for c in range(first, first + cnt)
                     if name(struct.unpack_from(">I", b, tree + c * size_node)[0]) == part), -1)
        if node < 0:
            raise SystemExit(f"{path} not in {archive}.rcc")
    flags, doff = struct.unpack_from(">H", b, tree + node * size_node + 4)[0], \
        struct.unpack_from(">I", b, tree + node * size_node + 10)[0]
    n = struct.unpack_from(">I", b, data + doff)[0]
    blob = b[data + doff + 4: data + doff + 4 + n]
    return zlib.decompress(blob[4:]) if flags & 1 else blob


def load_any(p: Path) -> np.ndarray:
    """A recording at 16 kHz mono; GSM 6.10 prompts are decoded by sox first."""
    if p.suffix != ".gsm":
        return _load(p)
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp) / "x.wav"
        subprocess.run(["sox", str(p), str(w)], check=True, capture_output=True)
        return _load(w)


def active_db(y: np.ndarray) -> float:
    """RMS level (dB) of y over its envelope events only (so silence around a sound does not lower it)."""
    m = np.zeros(len(y), bool)
    for a, b in events(y):
        m[int(a * SR): int(b * SR)] = True
    return float(20 * np.log10(np.sqrt(np.mean(y[m].astype(np.float64) ** 2)) + 1e-12))


class Kit10(Kit7):
    """Kit7's cache folder and checks (counted_as, times, looped, placed, at, the spoken-line, count and time logs)
    with the v10 voices, recordings (extracted from their archives) and programs."""

    tag = "10"
    voices = VOICES10
    recordings = RECORDINGS10
    programs = GM10

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES10[key]
        if engine == "espeak":
            tts(engine, name, text, p)
            return
        kind, sub = name.split(":")
        root, ext = PROMPT_DIRS[kind]
        parts = []
        for stem in text.split():  # each word / prompt trimmed to its speech (events at -35 dB), 0.2 s apart
            y = load_any(root / sub / f"{stem}{ext}")
            ev = events(y, thr_db=-35.0)
            parts.append(_fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
        aio.write_wav(p, _peak(self.times(parts, 0.2), 0.7), SR)

    def rec(self, name: str) -> np.ndarray:
        p = self.d / f"r{self.tag}_{name}.wav"
        if not p.exists():
            (kind, *where), a, b = self.recordings[name]
            raw = cat_entry(*where) if kind == "cat" else rcc_entry(*where)
            src = self.d / f"x{self.tag}_{name}{'.wav' if kind == 'cat' else Path(where[1]).suffix}"
            src.write_bytes(raw)
            y = _load(src)
            y = y[int(a * SR): int(b * SR) if b is not None else len(y)]
            aio.write_wav(p, _peak(_fade(y), 0.5), SR)
        return _load(p)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice, the
        espeak-ng voices of v8 and v9 in its language and, for English, every espeak-ng voice of v1-v6."""
        same = [v[1] for v in [*VOICES8.values(), *VOICES9.values()] if v[0] == "espeak" and v[3] == lang]
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [name.split("+", maxsplit=1)[0], *same]}
        return {**others, **self.earlier_espeak(test, lang)}

    def knocks(self) -> np.ndarray:
        return self.counted_as("knocks x3", self.rec("knocks"), 3)

    def strikes(self) -> np.ndarray:
        return self.counted_as("pickaxe strikes x3", self.rec("pickaxe"), 3)

    def beats(self, n: int) -> np.ndarray:
        return self.placed("heartbeats", "heart", n, 0.3)

    def counting(self, n: int) -> np.ndarray:
        words = " ".join(f"digits/es/{i}" for i in range(1, n + 1))
        return self.counted_as(f"Spanish numbers, one to {n}", self.say("july", words), n)

    def looped_gm(self, name: str, n_s: int) -> np.ndarray:
        """General MIDI program name's phrase repeated back to back until it is n_s samples long."""
        y = self.gm(name)
        return np.tile(y, int(np.ceil(n_s / len(y))))[:n_s]

    def louder(self, label: str, a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> None:
        """Log how many dB a (the sound a wording calls louder) is above b, measured over their events."""
        self.at(label, active_db(a) - active_db(b), lo, hi)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v10(k: Kit10) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    home = k.say("alex", "hello, is anybody home")
    scene("knocks_home", seq([k.knocks(), home]),
          "You'll hear three knocks, and shortly after, a man asking 'hello, is anybody home?'",
          {"count": "You'll hear five knocks, and shortly after, a man asking 'hello, is anybody home?'",
           "order": "You'll hear a man asking 'hello, is anybody home?', and shortly after, three knocks.",
           "gender": "You'll hear three knocks, and shortly after, a woman asking 'hello, is anybody home?'"},
          seq([home]))
    saw, spanish = k.rec("chainsaw"), k.say("es_m", "sombrero bigote anteojos")
    scene("chainsaw_spanish", seq([saw, spanish]),
          "a chainsaw revs for a couple seconds, then some guy says a few words in spanish",
          {"order": "some guy says a few words in spanish, then a chainsaw revs for a couple seconds",
           "gender": "a chainsaw revs for a couple seconds, then some lady says a few words in spanish",
           "extra": "a chainsaw revs for a couple seconds, a dog goes nuts barking at it, then some guy says a few "
                    "words in spanish"},
          seq([spanish]))
    sofia = k.say("bg_f5", "Утре ще вали сняг в планината, облечете се топло.")
    bed = seq([sofia], lead_s=0.6, tail_s=0.6)
    scene("truck_bulgarian", overlay(bed, k.rec("truck"), 0.0, -6.0),
          "A woman talks in Bulgarian; meanwhile, a truck starts up and pulls away in the background.",
          {"gender": "A man talks in Bulgarian; meanwhile, a truck starts up and pulls away in the background.",
           "extra": "A woman talks in Bulgarian; meanwhile, a truck starts up, its driver leans on the horn, and it "
                    "pulls away in the background."},
          bed)
    scene("heartbeats_four", seq([k.beats(4)]), "4 heartbeats; nothing else.",
          {"count": "7 heartbeats; nothing else.",
           "extra": "4 heartbeats; a hospital monitor bleeps along with them."}, None)
    anvil, irish = k.rec("anvil"), k.say("ga_m", "hata suil sron")
    scene("anvil_irish", seq([anvil, irish]),
          "First there's a blacksmith hammering on an anvil, and eventually a man says something in Irish.",
          {"order": "First a man says something in Irish, and eventually there's a blacksmith hammering on an anvil.",
           "gender": "First there's a blacksmith hammering on an anvil, and eventually a woman says something in Irish."},
          seq([irish]))
    bell, polish = k.rec("crossing"), k.say("pl_m3", "Proszę uważać, pociąg zaraz przyjedzie.")
    polish_quiet = polish * np.float32(0.3)
    k.louder("crossing bell louder than the Polish man (dB)", bell, polish_quiet, 3.0, 30.0)
    scene("crossing_polish", seq([bell, polish_quiet]),
          "A railroad crossing bell dings, and it's louder than the man who speaks Polish right after it.",
          {"order": "A man speaks Polish, and right after him a railroad crossing bell dings, louder than he was.",
           "gender": "A railroad crossing bell dings, and it's louder than the woman who speaks Polish right after "
                     "it."},
          seq([polish_quiet]))
    july = k.say("july", "es/vm-goodbye es/vm-sorry")
    scene("pickaxe_spanish", seq([k.strikes(), july]),
          "pickaxe: three strikes; woman: a few words of Spanish; in that order.",
          {"count": "pickaxe: two strikes; woman: a few words of Spanish; in that order.",
           "order": "woman: a few words of Spanish; pickaxe: three strikes; in that order.",
           "gender": "pickaxe: three strikes; man: a few words of Spanish; in that order."},
          seq([july]))
    engine, gas = k.rec("engine"), k.say("alex", "great, we're out of gas")
    scene("engine_gas", seq([engine, gas]),
          "A car engine turns over, runs a moment and cuts out; to finish, a man mutters 'great, we're out of gas'.",
          {"order": "A man mutters 'great, we're out of gas'; to finish, a car engine turns over, runs a moment and "
                    "cuts out.",
           "gender": "A car engine turns over, runs a moment and cuts out; to finish, a woman mutters 'great, we're "
                     "out of gas'.",
           "extra": "A car engine turns over, runs a moment and cuts out, the wipers squeak across the windshield; "
                    "to finish, a man mutters 'great, we're out of gas'."},
          seq([gas]))
    guitar, croatian = k.rec("guitar"), k.say("hr_f3", "Večeras idemo na koncert u stari grad.")
    scene("guitar_croatian", seq([guitar, croatian]),
          "kinda sounds like someone noodling on an electric guitar, and after that a lady talking in Croatian",
          {"order": "kinda sounds like a lady talking in Croatian, and after that someone noodling on an electric "
                    "guitar",
           "gender": "kinda sounds like someone noodling on an electric guitar, and after that a guy talking in "
                     "Croatian"},
          seq([croatian]))
    paola = k.say("paola", "vm-sorry vm-nobodyavail")
    bed = seq([paola], lead_s=0.5, tail_s=0.5)
    scene("bus_italian", overlay(bed, k.rec("bus"), 0.0, -7.0),
          "You'll hear an Italian woman speaking while a bus pulls away from the stop behind her.",
          {"gender": "You'll hear an Italian man speaking while a bus pulls away from the stop behind him.",
           "extra": "You'll hear an Italian woman speaking while a bus pulls away from the stop behind her and a "
                    "cyclist rings a bell."},
          bed)
    scene("count_spanish", seq([k.counting(4)]), "A woman counting in Spanish: uno, dos, tres, cuatro (1 to 4).",
          {"count": "A woman counting in Spanish: uno, dos, tres, cuatro, cinco, seis (1 to 6).",
           "gender": "A man counting in Spanish: uno, dos, tres, cuatro (1 to 4).",
           "extra": "A woman counting in Spanish: uno, dos, tres, cuatro (1 to 4), while a grandfather clock strikes."},
          None)
    timber, tree = k.say("alex", "timber, watch out below"), k.rec("treefall")
    scene("timber_tree", seq([timber, tree]),
          "Some guy yells 'timber, watch out below!' and a tree that's been cut comes crashing down.",
          {"order": "A tree that's been cut comes crashing down, and then some guy yells 'timber, watch out below!'",
           "gender": "Some gal yells 'timber, watch out below!' and a tree that's been cut comes crashing down."},
          seq([timber]))
    bass, dom = k.gm("e_bass"), k.say("pl_m3", "Wracam do domu późnym wieczorem.")
    bass_soft = bass * np.float32(0.35)
    k.louder("the Polish man louder than the bass (dB)", dom, bass_soft, 3.0, 30.0)
    scene("bass_polish", seq([bass_soft, dom]),
          "A soft electric bass line comes first, followed by a man who speaks Polish more loudly than the bass "
          "played.",
          {"order": "A man speaks Polish first, followed by a soft electric bass line, quieter than he was.",
           "gender": "A soft electric bass line comes first, followed by a woman who speaks Polish more loudly than "
                     "the bass played."},
          seq([dom]))
    anvil, saw = k.rec("anvil"), k.rec("chainsaw")
    pad = np.zeros(max(0, int((3.0 - 0.2 - len(anvil) / SR - 0.4) * SR)), np.float32)
    full = seq([np.concatenate([anvil, pad]), saw])
    k.at("chainsaw 'after roughly 3 seconds' (onset, s)",
         0.2 + (len(anvil) + len(pad)) / SR + 0.4 + events(saw)[0][0], 2.5, 3.5)
    scene("anvil_then_chainsaw", full,
          "The ring of a hammer on an anvil opens the clip; after roughly 3 seconds, a chainsaw takes over.",
          {"order": "A chainsaw opens the clip; after roughly 3 seconds, the ring of a hammer on an anvil takes over.",
           "extra": "The ring of a hammer on an anvil opens the clip, with a horse snorting nearby; after roughly 3 "
                    "seconds, a chainsaw takes over."},
          seq([np.concatenate([anvil, pad])]))
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v10(k: Kit10) -> list[dict]:
    B = []
    saw, anvil, truck, bus, bell = k.rec("chainsaw"), k.rec("anvil"), k.rec("truck"), k.rec("bus"), k.rec("crossing")
    tree, sparks, engine, guitar = k.rec("treefall"), k.rec("sparks"), k.rec("engine"), k.rec("guitar")
    knocks, strikes = k.knocks(), k.strikes()
    bass, organ = k.gm("e_bass"), k.gm("perc_organ")
    # add
    sp = k.say("es_m", "ojo nariz boca")
    B.append({"id": "add_knocks_first", "kind": "add",
              "instruction": "Let's have three knocks before the Spanish guy starts talking.",
              "original": seq([sp]), "real": seq([knocks, sp]),
              "wrong": {"wrong_sound": seq([strikes, sp]), "wrong_place": seq([sp, knocks])}})
    sp = k.say("paola", "vm-goodbye vm-sorry")
    base = seq([sp], lead_s=0.6, tail_s=0.6)
    B.append({"id": "add_truck_under", "kind": "add",
              "instruction": "make it so that a truck is pulling away in the background while she talks",
              "original": base, "real": overlay(base, k.looped("truck", len(base)), 0.0, -6.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("sparks", len(base)), 0.0, -6.0),
                        "wrong_place": np.concatenate([base, truck[: int(2.5 * SR)]])}})
    a, b = k.say("pl_m3", "Najpierw zetniemy to drzewo."), k.say("pl_m3", "Potem zrobimy przerwę.")
    B.append({"id": "add_chainsaw_between", "kind": "add",
              "instruction": "A chainsaw should be dropped into the gap between his two Polish sentences.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, saw, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, anvil, b], gap_s=0.35), "wrong_place": seq([a, b, saw], gap_s=0.35)}})
    sp = k.say("alex", "the gates are coming down now")
    B.append({"id": "add_bell_end", "kind": "add",
              "instruction": "Could you finish it off with a railroad crossing bell once he's done?",
              "original": seq([sp]), "real": seq([sp, bell]),
              "wrong": {"wrong_sound": seq([sp, k.beats(3)]), "wrong_place": seq([bell, sp])}})
    # delete
    sp = k.say("hr_f3", "Auto je opet ostao bez goriva.")
    orig = seq([sp, engine])
    wrong = orig.copy()
    wrong[int(0.2 * SR): int(0.2 * SR) + len(sp)] = 0.0  # the woman silenced in place, the engine left
    B.append({"id": "del_engine_end", "kind": "delete",
              "instruction": "Car engine goes, the Croatian lady stays.",
              "original": orig, "real": seq([sp]),
              "wrong": {"wrong_target": wrong, "partial": seq([sp, engine[: int(1.2 * SR)]])}})
    sp = k.say("july", "es/vm-goodbye")
    B.append({"id": "del_pickaxe_inplace", "kind": "delete",
              "instruction": "Could you mute the pickaxe at the very start, without moving the woman or the bus at all?",
              **delete_in_place(strikes, sp, bus)})
    sp = k.say("ga_m", "mala speaclai suil")
    bed = seq([sp], lead_s=0.7, tail_s=0.7)
    line = k.looped_gm("e_bass", len(bed))
    B.append({"id": "del_bass_bed", "kind": "delete",
              "instruction": "let's lose the bass guitar that plays under the Irish speaker",
              "original": overlay(bed, line, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), line, 0.0, -8.0),
                        "partial": overlay(bed, line[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.say("bg_f5", "Благодаря ви, до утре.")
    B.append({"id": "del_knocks_mid", "kind": "delete",
              "instruction": "The knocking is taken out; the anvil and the Bulgarian woman are kept.",
              "original": seq([anvil, knocks, sp]), "real": seq([anvil, sp]),
              "wrong": {"wrong_target": seq([knocks, sp]), "partial": seq([anvil, knocks[: int(0.3 * SR)], sp])}})
    # replace
    sp = k.say("alex", "the crew starts work at seven sharp")
    B.append({"id": "rep_chainsaw_truck", "kind": "replace",
              "instruction": "Make it so that a truck pulls away where the chainsaw is now.",
              "original": seq([sp, saw]), "real": seq([sp, truck]),
              "wrong": {"wrong_sound": seq([sp, bus]), "deleted_only": seq([sp])}})
    sp = k.say("paola", "vm-nobodyavail")
    B.append({"id": "rep_heart_knocks", "kind": "replace",
              "instruction": "The heartbeat at the beginning is to be replaced by knocking.",
              "original": seq([k.beats(3), sp]), "real": seq([knocks, sp]),
              "wrong": {"wrong_sound": seq([strikes, sp]), "deleted_only": seq([sp])}})
    sp = k.say("pl_m3", "Koncert zaczyna się o ósmej.")
    B.append({"id": "rep_guitar_bass", "kind": "replace",
              "instruction": "let's trade the electric guitar at the start for a bass line",
              "original": seq([guitar, sp]), "real": seq([bass, sp]),
              "wrong": {"wrong_sound": seq([organ, sp]), "deleted_only": seq([sp])}})
    sp = k.say("es_m", "lazo pendiente oreja")
    B.append({"id": "rep_anvil_tree", "kind": "replace",
              "instruction": "Could the anvil after the Spanish words become a tree crashing down instead?",
              "original": seq([sp, anvil]), "real": seq([sp, tree]),
              "wrong": {"wrong_sound": seq([sp, sparks]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv10"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v10 (OpenSFX and GCompris recordings, real speakers, new voices): audio and
    items.jsonl files."""
    require([OPENSFX, KTUBERLING / "es", KTUBERLING / "ga", ASTERISK / "es", ASTERISK / "digits/es",
             ASTERISK / "it_IT_f_Menardi"] + [GCOMPRIS / f"{s[1]}.rcc" for s, _, _ in RECORDINGS10.values()
                                              if s[0] == "rcc"], "install the Debian packages the docstring names")
    build_checked("v10", out, Kit10(out), rubric_scenes_v10, edit_bases_v10, ensure_ascii=False,
                  report=("edit_variants", "line_f0_hz", "times_checked", "clips"))


if __name__ == "__main__":
    app()
