"""Held-out judge benchmark, set v11: real recordings from the Widelands, Frozen-Bubble, Tux Typing and OpenArena
game data, real human speech from KLettres' recorded letters and words (two men, two women), and espeak-ng
voices of languages no earlier set spoke (fresh, built before being judged).

Built blind, without reading or running any judge: nothing under audiomind/judges/ or tests/judges/ was
opened, imported, grepped or run, no result file, benchmark runner (run_bench.py, run_edit_bench.py),
generate.py or audiomind command was read or run, and no judge heard this audio. It reuses
evals/judges/heldout.py (seq, overlay, _load, SR, build_rubric and build_edits: the same
OUT/rubric/items.jsonl and OUT/edit/items.jsonl files as every earlier set, the gender bands MALE_MAX_HZ /
FEMALE_MIN_HZ, the espeak-ng voices of v1-v6), heldout_v7.py (Kit7 and build_checked: the cache folder,
counted_as / placed / looped / at logs, the envelope event counter, the pYIN median f0, the band test,
check_voices, check_files, delete_in_place), heldout_v10.py (Kit10: louder, and its voice list) and the voice
lists of heldout_v8.py and heldout_v9.py (for the distinctness check).

Material (none of it used or rejected by v1-v10 or the dev checks):
- real recordings (cut, faded, peak-normalised, 16 kHz mono), each identified by its file name and package and
  by measurement (envelope, spectrogram). Debian widelands-data (/usr/share/games/widelands/data/sound/):
  woodcutting/woodcutting.ogg (an axe chopping wood: four chops one second apart, 4.0 s; its first n chops are
  cut out as n chops), stonecutting/stonemason.ogg (three taps of a chisel on stone, each ringing at 6.3 kHz,
  3.3 s), smiths/sharpening.ogg (0-3 s: a blade drawn along a whetstone, eight strokes; never counted),
  animals/crickets1_00.ogg (crickets chirping, 2.5 s, one steady event), and only as wrong sounds
  barbarians/mortar.ogg (a mortar and pestle, 2.5 s) and farm/scythe_00.ogg (0-3 s: a scythe's swishes).
  Debian frozen-bubble-data (/usr/share/games/frozen-bubble/snd/): typewriter.ogg (one typewriter keystroke,
  0.26 s, struck n times by placing it n times 0.18 s apart) and snore.ogg (one snore, inhale and exhale, 1.5
  s, placed twice). Debian tuxtype-data: /usr/share/tuxtype/sounds/cheer.wav (0-2.8 s: a crowd cheering,
  broadband noise with one loud 'woo'). Debian openarena-data: sound/world/drops.wav inside
  /usr/share/games/openarena/baseoa/pak0.pk3 (water dripping in a cave: ringing drips 2.2-3.9 s apart; three
  drips, 0-1.9, 3.8-5.7 and 6.9-8.8 s, are cut out with their rings faded and set back to back, one drip every
  1.9 s, looped under speech where a wording says dripping goes on). Every count a wording states is the
  number of envelope events measured when the set is built (heldout_v7.events: 10 ms RMS frames above -25 dB
  re the clip's peak, gaps under 0.1 s merged); the build stops if one differs. Checked at -15 to -35 dB as
  well: the axe chops (3, 4), typewriter keystrokes (3, 4, 5), the Italian letters (3, 4), the Russian letters
  (3, 4) and the French letters L M N O (4) count the same at every threshold; the chisel's taps read 2 only
  at -15 dB (one tap is softer); the French B D V read 4 only at -20 dB; a snore splits into inhale and exhale
  at -15 / -20 dB (2 snores read 4). Stated times and loudness comparisons are measured too and the build
  stops if one is outside its window: the axe 'around the four-second mark' starts at 4.02 s (3.5-4.5); the
  cheering is 9.8 dB louder than the Estonian woman after it (RMS over each sound's events; 3-30 dB). Every
  scene and every edit base uses a recording; no General MIDI program is played.
- real human speech: Debian klettres-data (/usr/share/klettres/<language>/, KDE's KLettres: native speakers
  reading letters and syllables / short words; the speakers are not named). Each file is trimmed to its speech
  (events at -35 dB) and files are joined 0.2 s apart. fr (a man: the letters L M N O, quoted, and B D V; file
  a-<i>.ogg is letter i, counting A as 0, per its sounds.xml), nds (a man saying Low German words: syllab/aal,
  aeten, al, oolt; never quoted), it (a woman: the letters A B C D, quoted, and A B C, L M N) and ru (a woman:
  the Russian letters А Б В Г, not quoted, and Д Е Ж). The letters a wording quotes are looked up by name in
  the language's sounds.xml (klettres_stems), so the files played are the ones KLettres plays for those
  letters.
- TTS voices, each a voice no earlier set used: espeak-ng en-us+Mario (English, male, quoted), sl+m4
  (Slovenian, male), et+f2 (Estonian, female) and eu+f2 (Basque, female): languages no earlier set spoke; the
  build checks that each renders audio unlike its language's default voice and (English) unlike every
  espeak-ng voice of v1-v6, v8's en-us+Hugo, v9's en-us+Gene and v10's en-us+Alex.
  Median f0 (librosa pYIN 60-400 Hz, heldout_v7.median_f0) of each voice's test material, measured when the
  set is built: KLettres French man 126 Hz, Low German man 105 Hz, Mario 106 Hz, sl+m4 97 Hz (male, <= 155
  Hz); KLettres Italian woman 231 Hz, Russian woman 196 Hz, et+f2 203 Hz, eu+f2 197 Hz (female, >= 170 Hz).
  Every spoken line is checked against its voice's band too; the lines used measure French man 110-124, Low
  German man 100-105, Mario 100-117, sl+m4 96-100, Italian woman 223-232, Russian woman 196, et+f2 183-196,
  eu+f2 194-197 Hz. Four of the eight voices are real people (two men, two women).
  Rejected voices: mbrola (no mbrola or mbrola-* package in this Debian archive), svox pico and RHVoice (not
  in it either); every festival voice in Debian was used or rejected by v7-v9. KLettres en, hu, lt and nl
  (pYIN finds 60 Hz hum or nothing), he (71 Hz on letters, 144-207 Hz on syllables), es (half its letters 60
  Hz), da (87-139 Hz mixed with 217-399), ml (62-129 Hz spread), cs 251, ar 269, pt_BR 273 and tn 311 Hz
  (unnamed speakers who may be children); de 236, uk 227 and en_GB 233 Hz women measured and not needed. The
  French letters A C E-K P Q S T X Y give pYIN no voiced frame (the recordings are clipped at 0 dBFS) and Z
  measures 67 Hz: not used. Italian E F G joined read 4 events (F splits): replaced by L M N. Warzone 2100
  (warzone2100-data base.wz) voices: a female computer voice (191-248 Hz) whose words no file name
  states (pcvNNN), radio-filtered pilots and the 10-to-1 countdown with no voiced f0: left out. Neverball's
  announcer (ready 198, go 180, over 166, goal 66 Hz: no stable band), lbreakout2's voice clips (no voiced f0
  but excellent.wav, 257 Hz; all under 0.8 s) and tuxtype excuseme.wav (324 Hz, a child's or cartoon voice):
  left out. espeak-ng en-us+Reed renders exactly the default en-us voice; measured and not needed: en-us+iven3
  (99), en-us+antonio (112), sl+m2 (101), lt+m3 (105), sq+m1 (93), mk+m2 (101), et+f4 (181), af+f2 (199);
  ca+f2 / ca+f5 (197 / 208) left out because v7 rejected festival's Catalan voice.
  Rejected recordings: frozen-bubble applause.ogg (applause: v5), its game effects (launch, rebound, stick,
  newroot, chatted: short synthetic sounds); tuxtype bite.wav (a bite: v9), alarm.wav (a 1 s tonal alarm, not
  clearly nameable), buzz, pop, splat, tock, laser, harp (v2 instrument), explosion (v9), win / lose jingles;
  widelands birds (v5 / v8), wolf and coyote (a wolf is named in a v8 wording), frog (v8), boar (a pig: v7),
  duck, sheep, horse, donkey (v7 animals) and ox (a cow: v7), moose and stag (deer: rejected by v8), hammering (v7),
  sawing and benchsaw (saw: v7), tree_falling (v10), smith (an anvil: v10), fast_woodcutting (-37 dBFS,
  faint), taverns and meals (mixed chatter and clatter), goldping / ironping (faint pings), mill_turning
  (creaks, not clearly nameable), beer / wine bubbles (bubbles: v8 / v9 wordings), weaving and fizzle (not
  clearly nameable); openarena doors (science-fiction doors), fire (campfire: v9), waterfall (rejected by v9),
  wind (a v8 wording) and its weapon and teleporter effects; extremetuxracer-data slide swooshes, tree_hit and
  0.03 s pickups; chromium-bsu-data explosions (v9); lbreakout2-data and kapman / kbounce / granatier /
  kgoldrunner effects (synthetic game sounds; kgoldrunner's step.wav is 0.04 s); neverball coin and tick (0.03
  s; ticking: v9); warzone2100 weapon, vehicle (tank engine: close to v10's car engine) and building sounds,
  its splash (v9) and steam (rejected by v10); xmoto-data (music only).
- wordings: written by hand here in shapes earlier sets did not use ('bite into a log, after which a man
  remarks: ...', 'Nothing but a typewriter here: five keystrokes, each one distinct', 'keeps dripping ... the
  whole way through', 'reads out four letters of the Italian alphabet: A, B, C and D', 'only when it dies down
  does ...', passive 'are heard, and they are followed by', 'and then he does: ...', a fragment 'Russian
  letters read aloud by a woman, then ...', 'doesn't begin until around the four-second mark', 'noticeably
  quieter than the crowd was', 'Against a backdrop of ...', 'No voices at all, just three things in a row:
  ..., and last of all ...', casual 'some dude', 'for a bit'; edit instructions with 'Tack ... onto the end',
  'I'd like ... running underneath ... from start to finish', 'squeeze ... in between', 'ought to be added',
  'Cut ... off the tail end', 'should be silenced, leaving ... exactly where they sit', 'Could ... be taken
  away?', 'Strip out ...; ... stay put', 'Swap ... for ...', 'change it into', 'In place of ..., let there be
  ...'; counts in words), not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 60 rubric items (14 positives; 10 order, 12 gender, 7 extra, 5
count, 12 missing) and 48 edit items; 86 clips of 2.1-9.9 s, every one non-silent (RMS -34.3 to -16.0 dBFS),
checked by the build. The build is deterministic: two builds into the same folder give byte-identical wavs and
items.jsonl files.

Needs the Debian packages: widelands-data frozen-bubble-data tuxtype-data openarena-data klettres-data
espeak-ng.

    .venv/bin/python evals/judges/heldout_v11.py --out /tmp/hv11
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import typer

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # for heldout and heldout_v7, which put the repository root on sys.path
    sys.path.insert(0, str(HERE))

from build_sets import SR, _load, overlay, seq
from heldout_v7 import _fade, _peak, build_checked, delete_in_place, events, require, text_id, tts
from heldout_v8 import VOICES8
from heldout_v9 import VOICES9
from heldout_v10 import VOICES10, Kit10

from audiomind import audio as aio

KLETTRES = Path("/usr/share/klettres")
WIDELANDS = Path("/usr/share/games/widelands/data/sound")
FROZEN = Path("/usr/share/games/frozen-bubble/snd")
TUXTYPE = Path("/usr/share/tuxtype/sounds")
OPENARENA = Path("/usr/share/games/openarena/baseoa/pak0.pk3")
PANGRAM = "the quick brown fox jumps over the lazy dog"

# voice -> (engine, voice name or "klettres:<language folder>", gender, language, test material). A klettres voice
# is the real person who recorded KLettres' letters / syllables of that language: its 'text' is file stems
# (space-separated, under the language folder, e.g. 'alpha/a'), each trimmed to its speech and played in turn.
VOICES11 = {
    "fr_m": ("prompts", "klettres:fr", "male", "French", "alpha/a-1 alpha/a-3 alpha/a-11 alpha/a-12 alpha/a-13"),
    "nds_m": ("prompts", "klettres:nds", "male", "Low German", "syllab/aal syllab/aeten syllab/al syllab/oolt"),
    "it_f": ("prompts", "klettres:it", "female", "Italian", "alpha/a alpha/b alpha/c alpha/d alpha/e"),
    "ru_f": ("prompts", "klettres:ru", "female", "Russian", "alpha/a alpha/be alpha/ve alpha/ge alpha/de"),
    "mario": ("espeak", "en-us+Mario", "male", "English", PANGRAM),
    "sl_m4": ("espeak", "sl+m4", "male", "Slovenian", "Dober dan, vlak za Ljubljano odpelje čez deset minut."),
    "et_f2": ("espeak", "et+f2", "female", "Estonian", "Tere hommikust, rong Tallinna väljub kümne minuti pärast."),
    "eu_f2": ("espeak", "eu+f2", "female", "Basque", "Egun on, Bilborako trena hamar minutu barru aterako da."),
}

# recording -> (file, start s, end s or None). A file is a path, or ("pk3", archive, member) for a file inside
# a zip archive (OpenArena's pak0.pk3).
RECORDINGS11 = {
    "chop": (WIDELANDS / "woodcutting/woodcutting.ogg", 0.0, None),
    "chisel": (WIDELANDS / "stonecutting/stonemason.ogg", 0.0, None),
    "sharpen": (WIDELANDS / "smiths/sharpening.ogg", 0.0, 3.0),
    "crickets": (WIDELANDS / "animals/crickets1_00.ogg", 0.0, None),
    "mortar": (WIDELANDS / "barbarians/mortar.ogg", 0.0, None),
    "scythe": (WIDELANDS / "farm/scythe_00.ogg", 0.0, 3.0),
    "key": (FROZEN / "typewriter.ogg", 0.0, None),
    "snore": (FROZEN / "snore.ogg", 0.0, None),
    "cheer": (TUXTYPE / "cheer.wav", 0.0, 2.8),
    "drip_a": (("pk3", OPENARENA, "sound/world/drops.wav"), 0.0, 1.9),
    "drip_b": (("pk3", OPENARENA, "sound/world/drops.wav"), 3.8, 5.7),
    "drip_c": (("pk3", OPENARENA, "sound/world/drops.wav"), 6.9, 8.8),
}


def klettres_names(lang: str) -> dict[str, str]:
    """KLettres' sounds.xml for a language: file stem ('alpha/a-0') -> the letter or syllable it is the sound of."""
    xml = (KLETTRES / lang / "sounds.xml").read_text(encoding="utf-8")
    return {f: n for n, f in ((m[0], m[1].split("/", 1)[1].rsplit(".", 1)[0])
                              for m in re.findall(r'<sound name="([^"]*)" file="([^"]*)"', xml))}


def klettres_stems(lang: str, names: list[str]) -> str:
    """The file stems sounds.xml gives for these letter names, in order (the quoted letters are what it maps)."""
    by_name = {n: f for f, n in klettres_names(lang).items() if f.startswith("alpha/")}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise SystemExit(f"klettres {lang} has no sound for {missing}")
    return " ".join(by_name[n] for n in names)


class Kit11(Kit10):
    """Kit7's cache folder and checks (counted_as, times, looped, placed, at, the spoken-line, count and time logs)
    and Kit10's louder / looped_gm, with the v11 voices (KLettres speakers, espeak-ng) and recordings."""

    tag = "11"
    voices = VOICES11
    recordings = RECORDINGS11

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES11[key]
        if engine == "espeak":
            tts(engine, name, text, p)
            return
        lang = name.split(":")[1]
        parts = []
        for stem in text.split():  # each letter / syllable trimmed to its speech (events at -35 dB), 0.2 s apart
            y = _load(KLETTRES / lang / f"{stem}.ogg")
            ev = events(y, thr_db=-35.0)
            parts.append(_fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
        aio.write_wav(p, _peak(self.times(parts, 0.2), 0.7), SR)

    def rec(self, name: str) -> np.ndarray:
        p = self.d / f"r{self.tag}_{name}.wav"
        if not p.exists():
            src, a, b = self.recordings[name]
            if isinstance(src, tuple):  # ("pk3", archive, member)
                raw = self.d / f"x{self.tag}_{name}{Path(src[2]).suffix}"
                with zipfile.ZipFile(src[1]) as z:
                    raw.write_bytes(z.read(src[2]))
                src = raw
            y = _load(src)
            y = y[int(a * SR): int(b * SR) if b is not None else len(y)]
            aio.write_wav(p, _peak(_fade(y), 0.5), SR)
        return _load(p)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice, the
        espeak-ng voices of v8-v10 in its language and, for English, every espeak-ng voice of v1-v6."""
        same = [v[1] for v in [*VOICES8.values(), *VOICES9.values(), *VOICES10.values()]
                if v[0] == "espeak" and v[3] == lang]
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [name.split("+", maxsplit=1)[0], *same]}
        return {**others, **self.earlier_espeak(test, lang)}

    def letters(self, key: str, names: list[str]) -> np.ndarray:
        """KLettres voice key saying these letters (looked up in its sounds.xml), checked to be len(names) events."""
        lang = VOICES11[key][1].split(":")[1]
        return self.counted_as(f"{lang} letters {' '.join(names)}", self.say(key, klettres_stems(lang, names)),
                               len(names))

    def words(self, key: str, stems: str) -> np.ndarray:
        """KLettres voice key saying these syllable / word files (never quoted)."""
        return self.say(key, stems)

    def chops(self, n: int) -> np.ndarray:
        """The first n axe chops of the woodcutting recording (one a second), checked to be n events."""
        y = self.rec("chop")
        return self.counted_as(f"axe chops x{n}", _fade(y[: int((n - 1 + 0.6) * SR)]), n)

    def taps(self) -> np.ndarray:
        return self.counted_as("chisel taps x3", self.rec("chisel"), 3)

    def keys(self, n: int) -> np.ndarray:
        return self.placed("typewriter keystrokes", "key", n, 0.18)

    def dripping(self, n_s: int | None = None) -> np.ndarray:
        """Three of the cave drips, each cut to 1.9 s with its ring faded out, back to back (one drip every 1.9 s),
        repeated until n_s samples long when n_s is given."""
        y = np.concatenate([_fade(self.rec(n), 0.0, 0.4) for n in ("drip_a", "drip_b", "drip_c")])
        return y if n_s is None else np.tile(y, int(np.ceil(n_s / len(y))))[:n_s]

    def snores(self, n: int) -> np.ndarray:
        return self.placed("snores", "snore", n, 0.5)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v11(k: Kit11) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    fire = k.say("mario", "that should be enough firewood for tonight")
    scene("chops_firewood", seq([k.chops(4), fire]),
          "Four axe chops bite into a log, after which a man remarks: 'that should be enough firewood for tonight.'",
          {"count": "Six axe chops bite into a log, after which a man remarks: 'that should be enough firewood for "
                    "tonight.'",
           "order": "A man remarks 'that should be enough firewood for tonight', after which four axe chops bite "
                    "into a log.",
           "gender": "Four axe chops bite into a log, after which a woman remarks: 'that should be enough firewood "
                     "for tonight.'"},
          seq([fire]))
    scene("typewriter_five", seq([k.keys(5)]), "Nothing but a typewriter here: five keystrokes, each one distinct.",
          {"count": "Nothing but a typewriter here: eight keystrokes, each one distinct.",
           "extra": "Nothing but a typewriter here: five keystrokes, and then the end-of-line bell dings."}, None)
    tallinn = k.say("et_f2", "Täna õhtul sajab vihma ja tuul on tugev.")
    bed = seq([tallinn], lead_s=0.6, tail_s=0.6)
    scene("drips_estonian", overlay(bed, k.dripping(len(bed)), 0.0, -8.0),
          "Water keeps dripping somewhere in the background the whole way through, as a woman speaks Estonian.",
          {"gender": "Water keeps dripping somewhere in the background the whole way through, as a man speaks "
                     "Estonian.",
           "extra": "Water keeps dripping somewhere in the background the whole way through, as a woman speaks "
                    "Estonian and a door creaks open."},
          bed)
    scene("italian_letters", seq([k.letters("it_f", ["A", "B", "C", "D"])]),
          "A woman reads out four letters of the Italian alphabet: A, B, C and D.",
          {"count": "A woman reads out six letters of the Italian alphabet: A, B, C, D, E and F.",
           "gender": "A man reads out four letters of the Italian alphabet: A, B, C and D.",
           "extra": "A woman reads out four letters of the Italian alphabet: A, B, C and D, while a pencil scratches "
                    "across paper."},
          None)
    sl = k.say("sl_m4", "Hvala vsem, ki ste prišli nocoj.")
    scene("slovenian_cheer", seq([sl, k.rec("cheer")]),
          "Once the man has finished his sentence in Slovenian, a crowd erupts in cheers.",
          {"order": "The crowd cheers first, and only when it dies down does a man say a sentence in Slovenian.",
           "gender": "Once the woman has finished her sentence in Slovenian, a crowd erupts in cheers."},
          seq([sl]))
    fr = k.letters("fr_m", ["L", "M", "N", "O"])
    scene("crickets_french", seq([k.rec("crickets"), fr]),
          "crickets chirp for a bit and then some dude spells out L M N O in French",
          {"order": "some dude spells out L M N O in French and then crickets chirp for a bit",
           "gender": "crickets chirp for a bit and then some lady spells out L M N O in French"},
          seq([fr]))
    eu = k.say("eu_f2", "Bihar goizean mendira joango gara.")
    scene("chisel_basque", seq([k.taps(), eu]),
          "Three taps of a chisel on stone are heard, and they are followed by a woman speaking Basque.",
          {"count": "Two taps of a chisel on stone are heard, and they are followed by a woman speaking Basque.",
           "order": "A woman speaking Basque is heard, and she is followed by three taps of a chisel on stone.",
           "gender": "Three taps of a chisel on stone are heard, and they are followed by a man speaking Basque."},
          seq([eu]))
    knife = k.say("mario", "pass me that knife and I'll sharpen it")
    scene("knife_sharpen", seq([knife, k.rec("sharpen")]),
          "A man says 'pass me that knife and I'll sharpen it', and then he does: a blade scraping along a "
          "whetstone.",
          {"order": "First a blade scrapes along a whetstone; only afterwards does a man say 'pass me that knife and "
                    "I'll sharpen it'.",
           "gender": "A woman says 'pass me that knife and I'll sharpen it', and then she does: a blade scraping "
                     "along a whetstone.",
           "extra": "A man says 'pass me that knife and I'll sharpen it', and then he does: a blade scraping along a "
                    "whetstone while a radio plays pop music."},
          seq([knife]))
    ru = k.letters("ru_f", ["А", "Б", "В", "Г"])
    scene("russian_keys", seq([ru, k.keys(3)]),
          "Russian letters read aloud by a woman, then three clacks of typewriter keys.",
          {"count": "Russian letters read aloud by a woman, then seven clacks of typewriter keys.",
           "order": "Three clacks of typewriter keys, then Russian letters read aloud by a woman.",
           "gender": "Russian letters read aloud by a man, then three clacks of typewriter keys."},
          seq([ru]))
    nds = k.words("nds_m", "syllab/aal syllab/aeten syllab/oolt")
    chop3 = k.chops(3)
    pad = np.zeros(max(0, int((4.0 - 0.2 - len(nds) / SR - 0.4) * SR)), np.float32)
    head = np.concatenate([nds, pad])
    k.at("axe chopping 'around the four-second mark' (onset, s)",
         0.2 + len(head) / SR + 0.4 + events(chop3)[0][0], 3.5, 4.5)
    scene("lowgerman_then_axe", seq([head, chop3]),
          "The clip opens with a man saying a few words in Low German; the axe chopping doesn't begin until around "
          "the four-second mark.",
          {"order": "The clip opens with axe chopping; a man saying a few words in Low German doesn't begin until "
                    "around the four-second mark.",
           "gender": "The clip opens with a woman saying a few words in Low German; the axe chopping doesn't begin "
                     "until around the four-second mark.",
           "extra": "The clip opens with a man saying a few words in Low German over a barking dog; the axe chopping "
                    "doesn't begin until around the four-second mark."},
          seq([head]))
    up = k.say("mario", "okay, okay, I'm up")
    scene("snores_up", seq([k.snores(2), up]),
          "Someone snores twice before a man grumbles, 'okay, okay, I'm up.'",
          {"order": "A man grumbles 'okay, okay, I'm up', and after that someone snores twice.",
           "gender": "Someone snores twice before a woman grumbles, 'okay, okay, I'm up.'"},
          seq([up]))
    cheer = k.rec("cheer")
    quiet = k.say("et_f2", "Aitäh, see oli suurepärane õhtu.") * np.float32(0.3)
    k.louder("the cheering louder than the Estonian woman (dB)", cheer, quiet, 3.0, 30.0)
    scene("cheer_then_quiet", seq([cheer, quiet]),
          "Loud cheering from a crowd comes first; a woman speaking Estonian follows, noticeably quieter than the "
          "crowd was.",
          {"order": "A woman speaking Estonian comes first; loud cheering from a crowd follows, noticeably louder "
                    "than she was.",
           "gender": "Loud cheering from a crowd comes first; a man speaking Estonian follows, noticeably quieter "
                     "than the crowd was."},
          seq([quiet]))
    eu = k.say("eu_f2", "Gaur gauean izarrak ikusiko ditugu.")
    bed = seq([eu], lead_s=0.6, tail_s=0.6)
    scene("crickets_basque", overlay(bed, k.looped("crickets", len(bed)), 0.0, -8.0),
          "Against a backdrop of chirping crickets, a woman talks in Basque.",
          {"gender": "Against a backdrop of chirping crickets, a man talks in Basque.",
           "extra": "Against a backdrop of chirping crickets and a crackling campfire, a woman talks in Basque."},
          bed)
    taps, keys4, cheer = k.taps(), k.keys(4), k.rec("cheer")
    scene("workshop_trio", seq([taps, keys4, cheer]),
          "No voices at all, just three things in a row: a chisel on stone, then typewriter keys, and last of all a "
          "cheering crowd.",
          {"order": "No voices at all, just three things in a row: a cheering crowd, then typewriter keys, and last "
                    "of all a chisel on stone.",
           "extra": "No voices at all, just four things in a row: a chisel on stone, then typewriter keys, then a "
                    "telephone ringing, and last of all a cheering crowd."},
          seq([taps, cheer]))
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v11(k: Kit11) -> list[dict]:
    B = []
    cheer, crickets, drips, chisel = k.rec("cheer"), k.rec("crickets"), k.dripping(), k.taps()
    sharpen, mortar, scythe, snore = k.rec("sharpen"), k.rec("mortar"), k.rec("scythe"), k.snores(2)
    chop = k.chops(3)
    # add
    sp = k.say("mario", "and the winner of this year's prize is")
    B.append({"id": "add_cheer_end", "kind": "add",
              "instruction": "Tack some cheering onto the end, right after he makes the announcement.",
              "original": seq([sp]), "real": seq([sp, cheer]),
              "wrong": {"wrong_sound": seq([sp, crickets]), "wrong_place": seq([cheer, sp])}})
    sp = k.say("sl_m4", "Danes bo ves dan deževalo.")
    base = seq([sp], lead_s=0.6, tail_s=0.6)
    B.append({"id": "add_drips_under", "kind": "add",
              "instruction": "I'd like dripping water running underneath the Slovenian speaker from start to finish.",
              "original": base, "real": overlay(base, k.dripping(len(base)), 0.0, -6.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("scythe", len(base)), 0.0, -6.0),
                        "wrong_place": np.concatenate([base, drips[: int(2.5 * SR)]])}})
    a, b = k.words("nds_m", "syllab/aal syllab/al"), k.words("nds_m", "syllab/aeten syllab/oolt")
    B.append({"id": "add_chop_between", "kind": "add",
              "instruction": "squeeze some axe chopping in between the man's two bits of Low German",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, chop, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, chisel, b], gap_s=0.35), "wrong_place": seq([a, b, chop], gap_s=0.35)}})
    sp = k.letters("it_f", ["L", "M", "N"])
    keys = k.keys(3)
    B.append({"id": "add_keys_first", "kind": "add",
              "instruction": "Before the woman starts on her letters, a few typewriter keystrokes ought to be added.",
              "original": seq([sp]), "real": seq([keys, sp]),
              "wrong": {"wrong_sound": seq([mortar, sp]), "wrong_place": seq([sp, keys])}})
    # delete
    sp = k.say("eu_f2", "Bihar goizean mendira joango gara.")
    B.append({"id": "del_crickets_end", "kind": "delete",
              "instruction": "Cut the crickets off the tail end; what the Basque woman says stays.",
              "original": seq([sp, crickets]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([crickets]), "partial": seq([sp, crickets[: int(1.0 * SR)]])}})
    sp = k.letters("fr_m", ["B", "D", "V"])
    B.append({"id": "del_chisel_inplace", "kind": "delete",
              "instruction": "The chiselling at the top should be silenced, leaving the French letters and the "
                             "cheering exactly where they sit.",
              **delete_in_place(chisel, sp, cheer)})
    sp = k.letters("ru_f", ["Д", "Е", "Ж"])
    bed = seq([sp], lead_s=0.7, tail_s=0.7)
    line = k.dripping(len(bed))
    B.append({"id": "del_drips_bed", "kind": "delete",
              "instruction": "Could the dripping behind the Russian woman be taken away?",
              "original": overlay(bed, line, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), line, 0.0, -8.0),
                        "partial": overlay(bed, line[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.say("et_f2", "Homme hommikul algab kool.")
    keys = k.keys(3)
    B.append({"id": "del_keys_mid", "kind": "delete",
              "instruction": "Strip out the typewriter in the middle; the axe and the Estonian woman stay put.",
              "original": seq([chop, keys, sp]), "real": seq([chop, sp]),
              "wrong": {"wrong_target": seq([keys, sp]), "partial": seq([chop, keys[: int(0.3 * SR)], sp])}})
    # replace
    sp = k.say("mario", "it's so quiet out here tonight")
    B.append({"id": "rep_crickets_drips", "kind": "replace",
              "instruction": "Swap those crickets after him for the sound of water dripping.",
              "original": seq([sp, crickets]), "real": seq([sp, drips]),
              "wrong": {"wrong_sound": seq([sp, scythe]), "deleted_only": seq([sp])}})
    sp = k.say("sl_m4", "Jutri gremo v gozd po drva.")
    B.append({"id": "rep_chop_chisel", "kind": "replace",
              "instruction": "The axe chopping at the start: change it into a chisel tapping on stone.",
              "original": seq([chop, sp]), "real": seq([chisel, sp]),
              "wrong": {"wrong_sound": seq([sharpen, sp]), "deleted_only": seq([sp])}})
    sp = k.words("nds_m", "syllab/oolt syllab/aal syllab/al")
    B.append({"id": "rep_snore_cheer", "kind": "replace",
              "instruction": "In place of the snoring at the end, let there be a crowd cheering.",
              "original": seq([sp, snore]), "real": seq([sp, cheer]),
              "wrong": {"wrong_sound": seq([sp, mortar]), "deleted_only": seq([sp])}})
    sp = k.letters("it_f", ["A", "B", "C"])
    B.append({"id": "rep_sharpen_keys", "kind": "replace",
              "instruction": "Replace the knife being sharpened with typewriter clatter, please; the Italian letters "
                             "still come after it.",
              "original": seq([sharpen, sp]), "real": seq([k.keys(4), sp]),
              "wrong": {"wrong_sound": seq([k.chops(4), sp]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv11"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v11 (Widelands, Frozen-Bubble, Tux Typing and OpenArena recordings, KLettres
    speakers, new espeak-ng voices): audio and items.jsonl files."""
    require([KLETTRES / lang for lang in ("fr", "nds", "it", "ru")]
            + [s if isinstance(s, Path) else s[1] for s, _, _ in RECORDINGS11.values()],
            "install the Debian packages the docstring names")
    build_checked("v11", out, Kit11(out), rubric_scenes_v11, edit_bases_v11, ensure_ascii=False,
                  report=("edit_variants", "line_f0_hz", "times_checked", "clips"))


if __name__ == "__main__":
    app()
