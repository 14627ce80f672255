"""Held-out judge benchmark, set v12: real recordings from the SuperTuxKart and Warmux game data, real human
speech from KTuberling's spoken words (two men) and KLettres' recorded letters (two women), and espeak-ng voices
of languages no earlier set spoke (fresh, built before being judged).

Built blind, without reading or running any judge: nothing under audiomind/judges/ or tests/judges/ was
opened, imported, grepped or run, no result file, benchmark runner (run_bench.py, run_edit_bench.py),
generate.py or audiomind command was read or run, no git history was read, and no judge heard this audio. It
reuses evals/judges/heldout.py (seq, overlay, _load, SR, build_rubric and build_edits: the same
OUT/rubric/items.jsonl and OUT/edit/items.jsonl files as every earlier set, the gender bands MALE_MAX_HZ /
FEMALE_MIN_HZ, the espeak-ng voices of v1-v6), heldout_v7.py (Kit7 and build_checked: the cache folder,
counted_as / placed / looped / at logs, the envelope event counter, the pYIN median f0, the band test,
check_voices, check_files, delete_in_place), heldout_v10.py (Kit10: louder, and its voice list),
heldout_v11.py (klettres_stems, and its voice list) and the voice lists of heldout_v8.py and heldout_v9.py (for
the distinctness check).

Material (none of it used or rejected by v1-v11 or the dev checks):
- real recordings (cut, faded, peak-normalised, 16 kHz mono), each identified by its file name and package and
  by measurement (envelope, spectral centroid). Debian supertuxkart-data
  (/usr/share/games/supertuxkart/data/sfx/): ball_bounce.ogg (one bounce of a ball, 0.26 s, bounced n times by
  placing it n times 0.25 s apart), bowling_roll.ogg (a bowling ball rolling down a lane, 2.9 s, centroid 530
  Hz) followed by strike.ogg (the pins knocked over, 1.7 s): together 'a bowling strike', skid.ogg (0-2.8 s:
  tyres screeching, one steady event), river_loop.ogg (0-10 s: a stream running, steady broadband noise,
  looped under speech where a wording says the water goes on) and, only as a wrong sound, metal_clang.ogg (0-3
  s: metal clanging, never counted). Debian warmux-data (/usr/share/games/warmux/sound/default/weapons/):
  baseball.ogg (the crack of a baseball bat, 0.37 s, struck n times by placing it n times 0.45 s apart) and
  dynamite_fuze.ogg (0-3 s: a lit fuse fizzing, steady hiss, centroid 4.1 kHz). Every count a wording states
  is the number of envelope events measured when the set is built (heldout_v7.events: 10 ms RMS frames above
  -25 dB re the clip's peak, gaps under 0.1 s merged); the build stops if one differs. Checked at -15 to -35
  dB as well: ball bounces (3, 4, 5, 6) and bat cracks (2, 3, 4) count the same at every threshold. Stated
  times and loudness comparisons are measured too and the build stops if one is outside its window: the
  bowling ball 'roughly three seconds in' starts rolling at 3.00 s (2.5-3.5); the pins are 10.5 dB louder than
  the Malay woman after them (RMS over each sound's events; 3-30 dB). The four bounces under the Serbian man
  are counted on the bounce track before it is mixed in. 13 of the 14 scenes and all 12 edit bases use a
  recording (the other scene is a man and a real woman spelling); no General MIDI program is played.
- real human speech, each word or letter trimmed to its speech (events at -35 dB) and joined 0.2 s apart:
  Debian ktuberling-data (/usr/share/ktuberling/sounds/): wa/*.ogg, a man saying Walloon words (bale, egypt_ome,
  egypt_voye, medaye, egypt_comere, moon_panea, egypt_tchar, moon_radar: the words wa.soundtheme maps to the
  toy's ball, man, road, ...) and de/*.ogg, a man saying German words (ball, coat, ear, egypt_man,
  egypt_road, egypt_cart, moon_sign: only the files measuring 129-140 Hz; the speaker's other files range up
  to 192 Hz). Neither speaker is named; neither is quoted. v10 measured both (wa 133 Hz, de 131-140 Hz) and
  did not need them: no set used them. Debian klettres-data (/usr/share/klettres/<language>/): en_GB (a
  woman reading English letters: A B C D and B E C K, quoted; the letters looked up by name in its
  sounds.xml) and uk (a woman reading Ukrainian letters: А Б В Г and Д Е, not quoted). v11 measured both
  (233 / 227 Hz) and did not need them.
- TTS voices, each a voice no earlier set used: espeak-ng en-us+miguel (English, male, quoted), sr+m1
  (Serbian, male), ms+f3 (Malay, female) and sw+f3 (Swahili, female): languages no earlier set spoke; the
  build checks that each renders audio unlike its language's default voice and (English) unlike every
  espeak-ng voice of v1-v6, v8's en-us+Hugo, v9's en-us+Gene, v10's en-us+Alex and v11's en-us+Mario.
  Median f0 (librosa pYIN 60-400 Hz, heldout_v7.median_f0) of each voice's test material, measured when the
  set is built: KTuberling Walloon man 121 Hz, German man 135 Hz, miguel 110 Hz, sr+m1 95 Hz (male, <= 155
  Hz); KLettres English woman 237 Hz, Ukrainian woman 221 Hz, ms+f3 214 Hz, sw+f3 219 Hz (female, >= 170 Hz).
  Every spoken line is checked against its voice's band too; the lines used measure Walloon man 120-123,
  German man 133-138, miguel 102-113, sr+m1 93-97, English woman 235-239, Ukrainian woman 216-224, ms+f3
  205-214, sw+f3 209-216 Hz. Four of the eight voices are real people (two men, two women). Letter counts are
  the same at -15 to -35 dB (A B C D, B E C K, S T U V: 4; А Б В Г: 4; А Б В: 3; Д Е: 2).
  Rejected voices: every asterisk-prompt-* and asterisk-core-sounds-* speaker in this Debian archive was used
  or rejected by v9 / v10 (es-mx Allison is v9's Allison, it-it Carlo was rejected by v9). KTuberling nds (a
  man, 86-102 Hz: possibly the same Low German speaker as v11's KLettres nds man), ca (two speakers mixed:
  a man at 114-141 Hz on the Tux names, a woman at 194-281 Hz on the rest), el (143-174 Hz spread over both
  bands), lt (157-219), ru (126-183), sl (162-194), pt (109-320), da and gl (pYIN finds 60 Hz or nothing on
  most words), nn (no files); KLettres nb (a speaker at 227-281 Hz, median 248: the range v11 rejected as
  possibly a child's, like cs 251), id and nn (no letter files). Warmux's voices/ (cartoon voices: injured,
  death, jump cries) and teeworlds-data's vo_teefault_* (cartoon cries, WavPack). espeak-ng measured and not
  needed: en-us+marcelo (96 Hz), en-us+iven2 (100), sk+m3 (104), lt+m1 (94), tr+m4 (92), lv+f4 (178), sq+f4
  (179), is+f3 (219).
  Rejected recordings: supertuxkart horn (car horn: v8 wording), clock (ticking: v9), thunder (v7), rain
  (v9), splash (v9), cow and sheep (v7), exotic-birds (v5 / v8), engine_large / engine_small / car_accel (car
  engine: v10), airplane_jetEngine (close to v9's aeroplane), steamLocomotive (a train: v6 wording), anvil
  (v10), hammer (v7), explosion (v9), goal_scored (a crowd: v11's cheering), fireworks_show (fireworks
  rejected by v7 / v9), WilhelmScream (a film's stock scream, 364 Hz: no clear adult band), static-radio (102
  s of static with tuning noises, ambiguous), lenautile_restaurant (mixed chatter and clatter), break,
  machine_sound, inflate, swatter, plunger, goo, bzzt and the kart effects (not clearly nameable from name or
  measurement); warmux explosions, m16 / shotgun / gun (gunshots: v5), anvil_fall (v10), aircraft_flying (v9
  aeroplane), slap (two events, not clearly one slap), jetpack, syringe, blowtorch (v9), misc/step (a
  footstep: v9, and -16 dBFS), box_* and the UI sounds; 7kaa-data WIND / RAIN / THUNDER / FIRE (v8 / v9 / v7
  / v9) and QUAKE (a low rumble, ambiguous); ksirk cannon / roll / crash and knavalbattle shots (the KDE game
  packages pull in the game binaries, and roll.wav is not clearly dice or a drum roll); kblocks, pysiogame and
  ri-li effects (short synthetic game sounds); teeworlds-data (WavPack files of synthetic weapon effects);
  bovo and palapeli-data (no sounds); freeciv-sound-standard (not in this Debian archive); pingus-data,
  neverball, kapman, kbounce, granatier, kgoldrunner, hedgewars (used or rejected by v9-v11); flightgear,
  0ad, megaglest and redeclipse data (not tried: size).
- wordings: written by hand here in shapes earlier sets did not use (numbered steps '(1) ... ; (2) ...', a
  dash-separated spelling 'B-E-C-K', 'hits the ground 4 times', 'no voices, no music', 'What you get: ...',
  'it's not until roughly three seconds in that ...', 'far more softly', 'clearly shaken', 'connects twice
  -- crack, crack', 'there before he starts and after he stops', a leading 'Bowling alley:' label, 'Serbian,
  spoken by a man, ...', 'Three sounds, no speech: ..., next ..., finally ...'; edit instructions with
  'follow it up with', 'Lay ... under ...', 'in the pause that separates', 'Open with ..., then let ...',
  'Get ... out of there', 'Mute only ... Don't shift ... by even a fraction of a second', 'No more ...
  please', 'Drop ... keep ... before it and ... after it', 'make them ... instead', 'I want ... where ...
  is', 'Trade ... for ...', 'Rather than ..., the opening should be ...'; counts in words and digits), not
  produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 62 rubric items (14 positives; 11 order, 12 gender, 7 extra, 5
count, 13 missing) and 48 edit items; 87 clip files of 2.4-9.8 s (the 12 no-ops are copies), every one
non-silent (RMS -32.9 to -16.5 dBFS), checked by the build. The build is deterministic: two builds into the
same (emptied) folder give byte-identical wavs and items.jsonl files.

Needs the Debian packages: supertuxkart-data warmux-data ktuberling-data klettres-data espeak-ng.

    .venv/bin/python evals/judges/heldout_v12.py --out /tmp/hv12
"""

from __future__ import annotations

import sys
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
from heldout_v10 import VOICES10, Kit10
from heldout_v11 import KLETTRES, VOICES11, klettres_stems

from audiomind import audio as aio

KTUBERLING = Path("/usr/share/ktuberling/sounds")
STK = Path("/usr/share/games/supertuxkart/data/sfx")
WARMUX = Path("/usr/share/games/warmux/sound/default/weapons")
PANGRAM = "the quick brown fox jumps over the lazy dog"

# voice -> (engine, voice name or "<ktuberling|klettres>:<language folder>", gender, language, test material). A
# ktuberling / klettres voice is the real person who recorded that language's words / letters: its 'text' is
# file stems (space-separated, under the language folder), each trimmed to its speech and played in turn.
VOICES12 = {
    "wa_m": ("prompts", "ktuberling:wa", "male", "Walloon", "bale egypt_ome egypt_voye medaye egypt_comere"),
    "de_m": ("prompts", "ktuberling:de", "male", "German", "ball coat egypt_man egypt_road moon_sign"),
    "gb_f": ("prompts", "klettres:en_GB", "female", "English", "alpha/a alpha/b alpha/c alpha/d alpha/e"),
    "uk_f": ("prompts", "klettres:uk", "female", "Ukrainian", "alpha/a alpha/be alpha/ve alpha/de alpha/e"),
    "miguel": ("espeak", "en-us+miguel", "male", "English", PANGRAM),
    "sr_m1": ("espeak", "sr+m1", "male", "Serbian", "Dobar dan, voz za Beograd polazi za deset minuta."),
    "ms_f3": ("espeak", "ms+f3", "female", "Malay",
              "Selamat pagi, kereta api ke Kuala Lumpur akan bertolak dalam sepuluh minit."),
    "sw_f3": ("espeak", "sw+f3", "female", "Swahili",
              "Habari za asubuhi, treni ya Nairobi itaondoka baada ya dakika kumi."),
}
ROOTS = {"ktuberling": KTUBERLING, "klettres": KLETTRES}

# recording -> (file, start s, end s or None)
RECORDINGS12 = {
    "bounce": (STK / "ball_bounce.ogg", 0.0, None),
    "roll": (STK / "bowling_roll.ogg", 0.0, None),
    "strike": (STK / "strike.ogg", 0.0, None),
    "skid": (STK / "skid.ogg", 0.0, 2.8),
    "river": (STK / "river_loop.ogg", 0.0, 10.0),
    "clang": (STK / "metal_clang.ogg", 0.0, 3.0),
    "bat": (WARMUX / "baseball.ogg", 0.0, None),
    "fuse": (WARMUX / "dynamite_fuze.ogg", 0.0, 3.0),
}


class Kit12(Kit10):
    """Kit7's cache folder and checks (counted_as, times, looped, placed, at, the spoken-line, count and time logs)
    and Kit10's louder, with the v12 voices (KTuberling and KLettres speakers, espeak-ng) and recordings."""

    tag = "12"
    voices = VOICES12
    recordings = RECORDINGS12

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES12[key]
        if engine == "espeak":
            tts(engine, name, text, p)
            return
        kind, lang = name.split(":")
        parts = []
        for stem in text.split():  # each word / letter trimmed to its speech (events at -35 dB), 0.2 s apart
            y = _load(ROOTS[kind] / lang / f"{stem}.ogg")
            ev = events(y, thr_db=-35.0)
            parts.append(_fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
        aio.write_wav(p, _peak(self.times(parts, 0.2), 0.7), SR)

    def rec(self, name: str) -> np.ndarray:
        """Recording name (cached; an absolute path, so Kit7's reader takes it as it is)."""
        return Kit7.rec(self, name)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice, the
        espeak-ng voices of v8-v11 in its language and, for English, every espeak-ng voice of v1-v6."""
        same = [v[1] for v in [*VOICES8.values(), *VOICES9.values(), *VOICES10.values(), *VOICES11.values()]
                if v[0] == "espeak" and v[3] == lang]
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [name.split("+", maxsplit=1)[0], *same]}
        return {**others, **self.earlier_espeak(test, lang)}

    def letters(self, key: str, names: list[str]) -> np.ndarray:
        """KLettres voice key saying these letters (looked up in its sounds.xml), checked to be len(names) events."""
        lang = VOICES12[key][1].split(":")[1]
        return self.counted_as(f"{lang} letters {' '.join(names)}", self.say(key, klettres_stems(lang, names)),
                               len(names))

    def words(self, key: str, stems: str) -> np.ndarray:
        """KTuberling voice key saying these word files (never quoted)."""
        return self.say(key, stems)

    def bounces(self, n: int) -> np.ndarray:
        return self.placed("ball bounces", "bounce", n, 0.25)

    def cracks(self, n: int) -> np.ndarray:
        return self.placed("bat cracks", "bat", n, 0.45)

    def bowl(self) -> np.ndarray:
        """A bowling strike: the ball rolling down the lane, straight into the pins going over."""
        return np.concatenate([self.rec("roll"), self.rec("strike")])

    def water(self, n_s: int) -> np.ndarray:
        """The stream, looped to n_s samples."""
        return self.looped("river", n_s)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v12(k: Kit12) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    fence = k.say("miguel", "hey, toss that ball back over the fence")
    scene("bounces_fence", seq([k.bounces(4), fence]),
          "A ball hits the ground 4 times; after the last bounce a guy shouts 'hey, toss that ball back over the "
          "fence!'",
          {"count": "A ball hits the ground 7 times; after the last bounce a guy shouts 'hey, toss that ball back "
                    "over the fence!'",
           "order": "A guy shouts 'hey, toss that ball back over the fence!' first, and the ball's four bounces "
                    "come after.",
           "gender": "A ball hits the ground 4 times; after the last bounce a girl shouts 'hey, toss that ball back "
                     "over the fence!'"},
          seq([fence]))
    wa = k.words("wa_m", "bale egypt_ome medaye")
    scene("bowling_walloon", seq([k.bowl(), wa]),
          "Bowling alley: the ball trundles down the lane, smashes into the pins, and then a man says a couple of "
          "words in Walloon.",
          {"order": "Bowling alley: a man says a couple of words in Walloon, then the ball trundles down the lane "
                    "and smashes into the pins.",
           "gender": "Bowling alley: the ball trundles down the lane, smashes into the pins, and then a woman says "
                     "a couple of words in Walloon."},
          seq([wa]))
    abcd = k.letters("gb_f", ["A", "B", "C", "D"])
    scene("letters_bat", seq([abcd, k.cracks(3)]),
          "(1) a British woman names the letters A, B, C, D; (2) three cracks of a baseball bat.",
          {"count": "(1) a British woman names the letters A, B, C, D; (2) five cracks of a baseball bat.",
           "order": "(1) three cracks of a baseball bat; (2) a British woman names the letters A, B, C, D.",
           "gender": "(1) a British man names the letters A, B, C, D; (2) three cracks of a baseball bat."},
          seq([abcd]))
    sr = k.say("sr_m1", "Sutra idemo na utakmicu sa celom porodicom.")
    bed = seq([sr], lead_s=0.5, tail_s=0.5)
    hops = k.times([k.rec("bounce")] * 4, 0.55)
    k.counted_as("ball bounces x4 (spread)", hops, 4)
    scene("serbian_bounces", overlay(bed, hops, 0.3, -6.0),
          "Serbian, spoken by a man, while a ball bounces four times close by.",
          {"count": "Serbian, spoken by a man, while a ball bounces six times close by.",
           "gender": "Serbian, spoken by a woman, while a ball bounces four times close by.",
           "extra": "Serbian, spoken by a man, while a ball bounces four times close by and a crowd in the stands "
                    "chants his name."},
          bed)
    close = k.say("miguel", "whoa, that was way too close")
    scene("skid_close", seq([k.rec("skid"), close]),
          "Tires screech for a few seconds before a man, clearly shaken, says 'whoa, that was way too close'.",
          {"order": "A man, clearly shaken, says 'whoa, that was way too close', and only then do tires screech.",
           "gender": "Tires screech for a few seconds before a woman, clearly shaken, says 'whoa, that was way too "
                     "close'.",
           "extra": "Tires screech, metal crunches as two cars collide, and then a man, clearly shaken, says 'whoa, "
                    "that was way too close'."},
          seq([close]))
    scene("bounces_five", seq([k.bounces(5)]), "just a ball bouncing. 5 bounces total, no voices, no music",
          {"count": "just a ball bouncing. 3 bounces total, no voices, no music",
           "extra": "just a ball bouncing, 5 bounces total, with sneakers squeaking on a gym floor between them"},
          None)
    uk = k.letters("uk_f", ["А", "Б", "В", "Г"])
    scene("fuse_ukrainian", seq([k.rec("fuse"), uk]),
          "What you get: a fuse fizzing and hissing, and once it falls silent, a woman reciting Ukrainian letters.",
          {"order": "What you get: a woman reciting Ukrainian letters, and once she falls silent, a fuse fizzing "
                    "and hissing.",
           "gender": "What you get: a fuse fizzing and hissing, and once it falls silent, a man reciting Ukrainian "
                     "letters."},
          seq([uk]))
    de = k.words("de_m", "ball coat egypt_man")
    pad = np.zeros(max(0, int((3.0 - 0.2 - len(de) / SR - 0.4) * SR)), np.float32)
    head = np.concatenate([de, pad])
    bowl = k.bowl()
    k.at("bowling ball 'roughly three seconds in' (onset, s)", 0.2 + len(head) / SR + 0.4 + events(bowl)[0][0],
         2.5, 3.5)
    scene("german_then_bowling", seq([head, bowl]),
          "A man speaks German at the very start; it's not until roughly three seconds in that a bowling ball "
          "starts rolling toward the pins.",
          {"order": "A bowling ball rolls toward the pins at the very start; it's not until roughly three seconds "
                    "in that a man speaks German.",
           "gender": "A woman speaks German at the very start; it's not until roughly three seconds in that a "
                     "bowling ball starts rolling toward the pins.",
           "extra": "A man speaks German at the very start over a jukebox playing rock and roll; it's not until "
                    "roughly three seconds in that a bowling ball starts rolling toward the pins."},
          seq([head]))
    strike = k.rec("strike")
    soft = k.say("ms_f3", "Saya suka bermain boling pada hujung minggu.") * np.float32(0.3)
    k.louder("the pins louder than the Malay woman (dB)", strike, soft, 3.0, 30.0)
    scene("pins_soft_malay", seq([strike, soft]),
          "Pins crash down, loud, and then, far more softly, a woman says something in Malay.",
          {"order": "A woman says something softly in Malay, and then pins crash down, far louder than she was.",
           "gender": "Pins crash down, loud, and then, far more softly, a man says something in Malay."},
          seq([soft]))
    ask = k.say("miguel", "could you spell your surname for me")
    beck = k.letters("gb_f", ["B", "E", "C", "K"])
    scene("spell_beck", seq([ask, beck], gap_s=0.6),
          "He asks, 'could you spell your surname for me?', and she spells it: B-E-C-K.",
          {"order": "She spells B-E-C-K, and only afterwards does he ask, 'could you spell your surname for me?'",
           "gender": "She asks, 'could you spell your surname for me?', and he spells it: B-E-C-K.",
           "extra": "He asks, 'could you spell your surname for me?', and she spells it: B-E-C-K, while hold music "
                    "plays on the line."},
          seq([ask]))
    sw = k.say("sw_f3", "Mchezo utaanza saa kumi jioni.")
    scene("swahili_cracks", seq([sw, k.cracks(2)]),
          "After a woman finishes a sentence in Swahili, a bat connects twice: crack, crack.",
          {"count": "After a woman finishes a sentence in Swahili, a bat connects four times: crack, crack, crack, "
                    "crack.",
           "order": "A bat connects twice, crack, crack, and after that a woman says a sentence in Swahili.",
           "gender": "After a man finishes a sentence in Swahili, a bat connects twice: crack, crack."},
          seq([sw]))
    down = k.say("miguel", "everybody get down, it's gonna blow")
    scene("get_down_fuse", seq([down, k.rec("fuse")]),
          "'Everybody get down, it's gonna blow!' a man yells, and then you hear the fuse sizzling away.",
          {"order": "You hear a fuse sizzling away, and then a man yells 'Everybody get down, it's gonna blow!'",
           "gender": "'Everybody get down, it's gonna blow!' a woman yells, and then you hear the fuse sizzling "
                     "away."},
          seq([down]))
    c2, b3, skid = k.cracks(2), k.bounces(3), k.rec("skid")
    scene("no_speech_trio", seq([c2, b3, skid]),
          "Three sounds, no speech: a bat hitting a ball twice, next a ball bouncing three times, finally tires "
          "screeching.",
          {"order": "Three sounds, no speech: tires screeching, next a ball bouncing three times, finally a bat "
                    "hitting a ball twice.",
           "extra": "Four sounds, no speech: a bat hitting a ball twice, next a ball bouncing three times, then a car "
                    "alarm going off, finally tires screeching."},
          seq([c2, skid]))
    wa = k.words("wa_m", "egypt_voye moon_panea egypt_tchar moon_radar")
    bed = seq([wa], lead_s=0.8, tail_s=0.8)
    scene("brook_walloon", overlay(bed, k.water(len(bed)), 0.0, -9.0),
          "Underneath a man's Walloon words, water keeps running in a brook (it's there before he starts and after "
          "he stops).",
          {"gender": "Underneath a woman's Walloon words, water keeps running in a brook (it's there before she "
                     "starts and after she stops).",
           "extra": "Underneath a man's Walloon words, water keeps running in a brook (it's there before he starts "
                    "and after he stops), and a cuckoo calls twice."},
          bed)
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v12(k: Kit12) -> list[dict]:
    B = []
    fuse, skid, clang, strike = k.rec("fuse"), k.rec("skid"), k.rec("clang"), k.rec("strike")
    bowl = k.bowl()
    # add
    sp = k.say("miguel", "okay, watch this trick shot")
    b4 = k.bounces(4)
    B.append({"id": "add_bounces_end", "kind": "add",
              "instruction": "Once he's said his bit, follow it up with a ball bouncing a few times.",
              "original": seq([sp]), "real": seq([sp, b4]),
              "wrong": {"wrong_sound": seq([sp, k.cracks(3)]), "wrong_place": seq([b4, sp])}})
    sp = k.letters("uk_f", ["Д", "Е"])
    base = seq([sp], lead_s=0.7, tail_s=0.7)
    B.append({"id": "add_brook_under", "kind": "add",
              "instruction": "Lay a babbling brook under the Ukrainian letters; it should run the entire length of "
                             "the clip.",
              "original": base, "real": overlay(base, k.water(len(base)), 0.0, -6.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("fuse", len(base)), 0.0, -6.0),
                        "wrong_place": np.concatenate([base, k.rec("river")[: int(2.5 * SR)]])}})
    a, b = k.words("de_m", "ball coat"), k.words("de_m", "egypt_road egypt_cart moon_sign")
    B.append({"id": "add_strike_between", "kind": "add",
              "instruction": "Put a bowling strike (ball rolling, pins going down) in the pause that separates his "
                             "two groups of German words.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, bowl, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, clang, b], gap_s=0.35), "wrong_place": seq([a, b, bowl], gap_s=0.35)}})
    sp = k.say("sw_f3", "Gari lilisimama ghafla barabarani.")
    B.append({"id": "add_skid_first", "kind": "add",
              "instruction": "Open with squealing tires, then let the Swahili speaker begin.",
              "original": seq([sp]), "real": seq([skid, sp]),
              "wrong": {"wrong_sound": seq([fuse, sp]), "wrong_place": seq([sp, skid])}})
    # delete
    sp = k.say("ms_f3", "Jangan dekat, sumbu itu sedang menyala.")
    B.append({"id": "del_fuse_end", "kind": "delete",
              "instruction": "Get that hissing fuse out of there; the Malay sentence before it is fine as is.",
              "original": seq([sp, fuse]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([fuse]), "partial": seq([sp, fuse[: int(1.0 * SR)]])}})
    sp = k.letters("gb_f", ["S", "T", "U", "V"])
    B.append({"id": "del_cracks_inplace", "kind": "delete",
              "instruction": "Mute only the bat cracks at the beginning. Don't shift the spelled letters or the "
                             "bouncing ball by even a fraction of a second.",
              **delete_in_place(k.cracks(3), sp, k.bounces(3))})
    sp = k.say("sr_m1", "Reka je danas mirna i hladna.")
    bed = seq([sp], lead_s=0.7, tail_s=0.7)
    line = k.water(len(bed))
    B.append({"id": "del_brook_bed", "kind": "delete",
              "instruction": "No more running water behind the Serbian guy, please.",
              "original": overlay(bed, line, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), line, 0.0, -8.0),
                        "partial": overlay(bed, line[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.words("wa_m", "egypt_ome egypt_comere")
    b3 = k.bounces(3)
    B.append({"id": "del_skid_mid", "kind": "delete",
              "instruction": "Drop the screech in the middle; keep the bouncing ball before it and the Walloon "
                             "speaker after it.",
              "original": seq([b3, skid, sp]), "real": seq([b3, sp]),
              "wrong": {"wrong_target": seq([skid, sp]), "partial": seq([b3, skid[: int(0.8 * SR)], sp])}})
    # replace
    sp = k.say("miguel", "batter up, let's play ball")
    B.append({"id": "rep_cracks_bounces", "kind": "replace",
              "instruction": "Those bat cracks at the end: make them a bouncing ball instead.",
              "original": seq([sp, k.cracks(3)]), "real": seq([sp, k.bounces(3)]),
              "wrong": {"wrong_sound": seq([sp, clang]), "deleted_only": seq([sp])}})
    sp = k.letters("uk_f", ["А", "Б", "В"])
    B.append({"id": "rep_fuse_brook", "kind": "replace",
              "instruction": "I want running water where the fizzing fuse is at the start; the woman's letters stay.",
              "original": seq([fuse, sp]), "real": seq([_fade(k.rec("river")[: int(3.0 * SR)]), sp]),
              "wrong": {"wrong_sound": seq([skid, sp]), "deleted_only": seq([sp])}})
    sp = k.words("de_m", "ear egypt_man egypt_cart moon_sign")
    B.append({"id": "rep_skid_strike", "kind": "replace",
              "instruction": "Trade the tire squeal that follows the German for the sound of a bowling strike.",
              "original": seq([sp, skid]), "real": seq([sp, bowl]),
              "wrong": {"wrong_sound": seq([sp, fuse]), "deleted_only": seq([sp])}})
    sp = k.say("ms_f3", "Pukulan yang sangat bagus, semua orang bersorak.")
    B.append({"id": "rep_clang_cracks", "kind": "replace",
              "instruction": "Rather than clanging metal, the opening should be two clean cracks of a baseball bat.",
              "original": seq([clang, sp]), "real": seq([k.cracks(2), sp]),
              "wrong": {"wrong_sound": seq([strike, sp]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv12"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v12 (SuperTuxKart and Warmux recordings, KTuberling and KLettres speakers, new
    espeak-ng voices): audio and items.jsonl files."""
    require([KTUBERLING / "wa", KTUBERLING / "de", KLETTRES / "en_GB", KLETTRES / "uk"]
            + [s for s, _, _ in RECORDINGS12.values()], "install the Debian packages the docstring names")
    build_checked("v12", out, Kit12(out), rubric_scenes_v12, edit_bases_v12, ensure_ascii=False,
                  report=("edit_variants", "line_f0_hz", "times_checked", "clips"))


if __name__ == "__main__":
    app()
