"""Held-out judge benchmark, set v9: real recordings from three games' sound packs, real human speech from a
telephony prompt set, and espeak-ng voices of languages no earlier set spoke (fresh, built before being judged).

Built without reading or running any judge: nothing under audiomind/judges/ or tests/judges/ was opened,
imported or run, no result file, benchmark runner (run_bench.py, run_edit_bench.py), generate.py or audiomind
command was read or run, and no judge heard this audio. It reuses evals/judges/heldout.py (seq, overlay, _load,
SR, build_rubric and build_edits, which write the same OUT/rubric/items.jsonl and OUT/edit/items.jsonl files as
every earlier set, the gender bands MALE_MAX_HZ / FEMALE_MIN_HZ and the espeak-ng voices of v1-v6),
evals/judges/heldout_v7.py (Kit7's cache folder, counted_as and times, the envelope event counter, the pYIN
median f0, the band test, the fade / peak helpers) and heldout_v8.py (its espeak-ng voice list, for the
distinctness check).

Material (none of it used or rejected by v1-v8 or the dev checks):
- real recordings (cut, faded, peak-normalised, 16 kHz mono), each identified by its file name and package and by
  measurement (envelope, pYIN pitch, spectrogram). Debian wesnoth-1.16-data (/usr/share/games/wesnoth/1.16/
  data/core/sounds/): dwarf-laugh.wav (hearty laughter: four harmonic bursts, 2.7 s; pYIN finds no steady f0,
  so the wordings never say whose), sword-1.ogg (one metallic clash, 0.44 s, struck n times by placing it n
  times), gold.ogg (coins jingling: dense clicks and a 6.7 kHz ring, 1.7 s), explosion.ogg (0-1.7 s: a
  broadband blast decaying over 1.3 s), ambient/campfire.ogg (9.6 s of fire crackle: sparse broadband
  clicks). Debian supertux-data (/usr/share/games/supertux2/sounds/): rain.wav (0-10 s of steady broadband
  rain noise) and ticking.wav (a clock's tick-tock: two clicks 0.2 s apart, looped). Debian hedgewars-data
  (/usr/share/games/hedgewars/Data/Sounds/): voices/Default/PoisonCough.ogg (two coughs, measured as two
  events), plane.ogg (a propeller aeroplane's drone with low harmonics, 3.8 s), whipcrack.ogg (0-0.8 s: one
  sharp crack), pickhammer.ogg (a jackhammer's rapid blows, 0.9 s, looped), steps.ogg (0-0.13 s: one
  footstep, placed n times) and splash.ogg (a splash into water, 0.65 s). tuxpaint-stamps-default:
  food/fruit/apple_red.ogg (a crunchy bite, 0.8 s; the one stamp sound v7 and v8 neither used nor rejected
  that is clearly nameable). Every count a wording states is the number of envelope events measured when the
  set is built (heldout_v7.events: 10 ms RMS frames above -25 dB re the clip's peak, gaps under 0.1 s
  merged); the build stops if one differs. Checked at -15 to -35 dB as well: sword clashes (3), footsteps (3,
  4) and the spoken numbers (5) count the same at every threshold; the two coughs merge into one only at -35
  dB. Stated times are measured too and the build stops if one is outside its window: the explosion 'about
  three seconds in' starts at 3.00 s (window 2.5-3.5), 'a few seconds' of aeroplane last 3.80 s (2-6), the
  jackhammer 'toward the end' starts 62% of the way through its clip (50-80%). 13 of the 14 scenes and all 12
  edit bases use a recording (the other scene is a real woman counting).
- real human speech: Debian asterisk-core-sounds-{en,fr,ru}-wav (/usr/share/asterisk/sounds/, telephone
  prompts, 8 kHz, so band-limited to 4 kHz), each prompt trimmed to its speech (events at -35 dB) and prompts
  joined 0.15 s apart: en_US_f_Allison (Allison Smith, per the package's copyright file; female, English),
  fr_CA_f_June (June Wallack; female, Canadian French) and ru_RU_f_IvrvoiceRU (female by its folder name,
  provided by ivrvoice.ru; Russian). Only English prompts are quoted, and only those whose words the file
  name states (hello-world, one-moment-please, im-sorry, please-try-again, goodbye, digits/1-5), their
  durations and syllable envelopes consistent with those words; auth-thankyou is used but never quoted, and
  the French and Russian prompts are only said to be a woman speaking that language.
- TTS voices, each a voice no earlier set used: espeak-ng en-us+Gene (English, male, quoted), sv+m2 (Swedish,
  male), da+m1 (Danish, male), sv+f4 (Swedish, female), hu+f5 (Hungarian, female), ro+f2 (Romanian, female)
  and el+f3 (Greek, female): languages no earlier set spoke; the build checks that each renders audio unlike
  its language's default voice and (English) unlike every espeak-ng voice of v1-v6 and v8's en-us+Hugo.
  Median f0 (librosa pYIN 60-400 Hz, heldout_v7.median_f0) of each voice's test material, measured when the
  set is built: Gene 94 Hz, sv+m2 103 Hz, da+m1 98 Hz (male, <= 155 Hz); Allison 191 Hz, June 211 Hz, the
  Russian speaker 247 Hz, sv+f4 183 Hz, hu+f5 198 Hz, ro+f2 196 Hz, el+f3 200 Hz (female, >= 170 Hz). Every
  spoken line is checked against its voice's band too; the lines used measure Allison 185-199, June 186-202,
  Russian 237-239, sv+f4 178-181, hu+f5 192-195, ro+f2 189-197, el+f3 198-213, Gene 91-97, sv+m2 97-100,
  da+m1 87-95 Hz. Seven of the ten voices are female, three are real people.
  Rejected voices: asterisk it_IT_m_Carlo (Carlo Flora, male by name, but his prompts measure a median of 183
  Hz over 38 files, p10-p90 154-236: in the female band), es_MX_f_Allison (the same speaker as the English
  Allison), festvox-us-slt-hts (the dev flite slt speaker), festvox-suopuhe-lj and festvox-ca-ona-hts
  (rejected by v7), festvox-kallpc16k (the flite kal speaker of v1); every other festival voice in Debian was
  used by v7 or v8, and festvox-czech-krb is a child. Measured and not needed: en+Jacky (112 Hz), en-us+caleb
  (101), en-us+quincy (84), da+f1 (184), tr+f4 (174, near the edge), nb+f2 (195), fi+f4 (176, near the edge).
  The hedgewars voice packs (voices/*/) were left out except the cough: pitch-shifted cartoon voices (the
  Default laugh's harmonics sit near 350 Hz), speaking game catchphrases.
  Rejected recordings: wesnoth horse-canter.wav (horse: v7), wolf-*.ogg (wolf named in a v8 wording),
  fanfare-short.wav (trumpet: dev), gunshot.wav (v5), ambient/morning.ogg (a rooster-like call: v7),
  ambient/night.ogg (crickets mixed with a tonal call: two sources), ambient/ship.ogg (creaks and noise,
  ambiguous), ambient/birds1-3.ogg (quiet birdsong; birds: v5, v8), ambient/wardrums.ogg (like v5's taiko),
  bat-flapping.wav, axe.ogg, cave-in.ogg, fuse.ogg, hiss.wav, the human-*-hit / -die cries and the fantasy
  creatures (not clearly nameable); supertux thunder.wav and saw.wav (v7), phone.wav (dev phone), waterfall.wav
  (broadband noise like the rain), door.wav (broadband, not clearly a door), tada.ogg (a synthetic chord),
  fireworks.wav, firecracker.ogg, skid.wav (-66 dBFS, near silent); hedgewars bee.ogg and hammer.ogg (v7),
  rubberduck_*.ogg (v8), shutterclick.ogg (dev camera), Whistle.ogg (v2), shotgun*.ogg (v5), Kiss.ogg,
  drillgun.ogg, blowtorch.ogg (short, ambiguous); tuxpaint heron_greatblue_flying.ogg (wingbeats, ambiguous),
  xing_ped.ogg (a beep), hard_candy.ogg (a tonal sweep), mallet_metal.ogg (a 0.2 s click), drake, sheep_lamb,
  pig_golden, dromedary (animals v7 / v8 used or rejected); oxygen-sounds (UI sounds, rejected by v7).
- wordings: written by hand here in styles earlier sets did not use (an imperative 'Generate ...', passive
  voice, past-tense narrative, 'at first ... later ...', 'partway through, about three seconds in', 'toward
  the end', 'a few seconds of', 'no music, just ...', British spellings and words: aeroplane, lorry, till,
  bloke; counts in words and digits), not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 58 rubric items (14 positives; 9 order, 10 gender, 9 extra, 4 count,
12 missing) and 48 edit items; 86 clips of 2.2-7.7 s, every one non-silent (RMS -38 to -17 dBFS: the quietest
is a ticking clock alone), checked by the build.

Needs the Debian packages: wesnoth-1.16-data supertux-data hedgewars-data tuxpaint-stamps-default
asterisk-core-sounds-en-wav asterisk-core-sounds-fr-wav asterisk-core-sounds-ru-wav espeak-ng.

    .venv/bin/python evals/judges/heldout_v9.py --out /tmp/hv9
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
from heldout_v7 import (
    STAMPS,
    Kit7,
    _fade,
    _peak,
    build_checked,
    delete_in_place,
    events,
    first_onset,
    require,
    text_id,
    tts,
)
from heldout_v8 import VOICES8

from audiomind import audio as aio

WESNOTH = Path("/usr/share/games/wesnoth/1.16/data/core/sounds")
SUPERTUX = Path("/usr/share/games/supertux2/sounds")
HEDGEWARS = Path("/usr/share/games/hedgewars/Data/Sounds")
ASTERISK = Path("/usr/share/asterisk/sounds")
PANGRAM = "the quick brown fox jumps over the lazy dog"

# voice -> (engine, voice name or prompt folder, gender, language, test sentence). An 'asterisk' voice is a real
# person's recorded telephony prompts: its 'text' is the prompt file names (space-separated), played in turn.
VOICES9 = {
    "allison": ("asterisk", "en_US_f_Allison", "female", "English",
                "hello-world one-moment-please please-try-again goodbye"),
    "june": ("asterisk", "fr_CA_f_June", "female", "French", "hello-world auth-thankyou please-try-again"),
    "ru_f": ("asterisk", "ru_RU_f_IvrvoiceRU", "female", "Russian", "hello-world auth-thankyou please-try-again"),
    "gene": ("espeak", "en-us+Gene", "male", "English", PANGRAM),
    "sv_m2": ("espeak", "sv+m2", "male", "Swedish", "God morgon, tåget till Stockholm går om tio minuter."),
    "da_m1": ("espeak", "da+m1", "male", "Danish", "God morgen, toget til København kører om ti minutter."),
    "sv_f4": ("espeak", "sv+f4", "female", "Swedish", "God morgon, tåget till Stockholm går om tio minuter."),
    "hu_f5": ("espeak", "hu+f5", "female", "Hungarian", "Jó reggelt, a vonat tíz perc múlva indul Budapestre."),
    "ro_f2": ("espeak", "ro+f2", "female", "Romanian", "Bună dimineața, trenul spre București pleacă în zece minute."),
    "el_f3": ("espeak", "el+f3", "female", "Greek", "Καλημέρα, το τρένο για την Αθήνα φεύγει σε δέκα λεπτά."),
}

# recording -> (file, start s, end s or None for the file's end)
RECORDINGS9 = {
    "laugh": (WESNOTH / "dwarf-laugh.wav", 0.0, None), "sword": (WESNOTH / "sword-1.ogg", 0.0, None),
    "coins": (WESNOTH / "gold.ogg", 0.0, None), "explosion": (WESNOTH / "explosion.ogg", 0.0, 1.7),
    "campfire": (WESNOTH / "ambient/campfire.ogg", 0.0, None),
    "rain": (SUPERTUX / "rain.wav", 0.0, 10.0), "tick": (SUPERTUX / "ticking.wav", 0.0, None),
    "cough": (HEDGEWARS / "voices/Default/PoisonCough.ogg", 0.0, None), "plane": (HEDGEWARS / "plane.ogg", 0.0, None),
    "whip": (HEDGEWARS / "whipcrack.ogg", 0.0, 0.8), "jackhammer": (HEDGEWARS / "pickhammer.ogg", 0.0, None),
    "step": (HEDGEWARS / "steps.ogg", 0.0, 0.13), "splash": (HEDGEWARS / "splash.ogg", 0.0, None),
    "apple": (STAMPS / "food/fruit/apple_red.ogg", 0.0, None),
}


class Kit9(Kit7):
    """Kit7's cache folder and checks (counted_as, times, looped, the spoken-line, count and time logs) with
    the v9 voices and recordings (RECORDINGS9 holds absolute paths); stated times are logged as (label,
    measured s, lowest, highest) for the build to check."""

    tag = "9"
    voices = VOICES9
    recordings = RECORDINGS9

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES9[key]
        if engine == "espeak":
            tts(engine, name, text, p)
        else:  # recorded prompts, trimmed to their speech, 0.15 s apart
            parts = []
            for stem in text.split():
                y = _load(ASTERISK / name / f"{stem}.wav")
                ev = events(y, thr_db=-35.0)
                parts.append(_fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
            aio.write_wav(p, _peak(self.times(parts, 0.15), 0.7), SR)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice (a
        variant the engine ignores falls back to it), v8's espeak-ng voices of its language and, for English,
        every espeak-ng voice of v1-v6 (heldout.VOICES)."""
        same_lang = [v[1] for v in VOICES8.values() if v[0] == "espeak" and v[3] == lang]
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav")
                  for o in [name.split("+", maxsplit=1)[0]] + same_lang}
        return {**others, **self.earlier_espeak(test, lang)}

    def clashes(self, n: int) -> np.ndarray:
        return self.placed("sword clashes", "sword", n, 0.4)

    def steps(self, n: int) -> np.ndarray:
        return self.placed("footsteps", "step", n, 0.45)

    def coughs(self) -> np.ndarray:
        return self.counted_as("coughs x2", self.rec("cough"), 2)

    def counting(self, n: int) -> np.ndarray:
        words = " ".join(f"digits/{i}" for i in range(1, n + 1))
        return self.counted_as(f"numbers spoken, one to {n}", self.say("allison", words), n)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v9(k: Kit9) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    moment = k.say("allison", "one-moment-please")
    bed = seq([moment], lead_s=0.9, tail_s=0.9)
    scene("rain_moment", overlay(bed, k.looped("rain", len(bed)), 0.0, -5.0),
          "Generate steady rain, with a woman saying 'one moment please' over it.",
          {"gender": "Generate steady rain, with a man saying 'one moment please' over it.",
           "extra": "Generate steady rain and a car alarm wailing, with a woman saying 'one moment please' over it."},
          bed)
    enough = k.say("gene", "that will be enough for today")
    scene("swords_enough", seq([k.clashes(3), enough]),
          "Steel rang against steel 3 times, and then a man said 'that will be enough for today'.",
          {"count": "Steel rang against steel 5 times, and then a man said 'that will be enough for today'.",
           "order": "A man said 'that will be enough for today', and only then did steel ring against steel 3 times.",
           "gender": "Steel rang against steel 3 times, and then a woman said 'that will be enough for today'."},
          seq([enough]))
    laugh, middag = k.rec("laugh"), k.say("sv_f4", "Middagen är klar, kom och ät medan det är varmt.")
    scene("laugh_swedish", seq([laugh, middag]),
          "At first someone laughs heartily; later a woman speaks in Swedish.",
          {"order": "At first a woman speaks in Swedish; later someone laughs heartily.",
           "gender": "At first someone laughs heartily; later a man speaks in Swedish.",
           "extra": "At first someone laughs heartily and glasses clink; later a woman speaks in Swedish."},
          seq([middag]))
    coins, koszonom = k.rec("coins"), k.say("hu_f5", "Köszönöm szépen a segítséget, holnap találkozunk.")
    scene("coins_hungarian", seq([coins, koszonom]),
          "No music, just a handful of coins jingling and then a woman talking in Hungarian.",
          {"order": "No music, just a woman talking in Hungarian and then a handful of coins jingling.",
           "extra": "No music, just a handful of coins jingling, a till drawer ringing open, and then a woman "
                    "talking in Hungarian."},
          seq([koszonom]))
    munte = k.say("ro_f2", "Mâine dimineață plecăm la munte cu trenul.")
    bed = seq([munte], lead_s=0.7, tail_s=0.7)
    scene("clock_romanian", overlay(bed, k.looped("tick", len(bed)), 0.0, -8.0),
          "A clock ticks away the whole time a woman is speaking Romanian.",
          {"gender": "A clock ticks away the whole time a man is speaking Romanian.",
           "extra": "A clock ticks away and a fridge hums the whole time a woman is speaking Romanian."},
          bed)
    plane, paraply = k.rec("plane"), k.say("da_m1", "Husk at tage en paraply med i morgen.")
    scene("plane_danish", seq([plane, paraply]),
          "A propeller aeroplane drones past for a few seconds; once it has gone, a man talks in Danish.",
          {"order": "A man talks in Danish; once he has finished, a propeller aeroplane drones past.",
           "gender": "A propeller aeroplane drones past for a few seconds; once it has gone, a woman talks in "
                     "Danish."},
          seq([paraply]))
    k.at("'a few seconds' of aeroplane (its length)", events(plane)[-1][1] - events(plane)[0][0], 2.0, 6.0)
    again = k.say("allison", "im-sorry please-try-again")
    scene("cough_again", seq([k.coughs(), again]),
          "Someone coughs two times, after which a woman says 'I'm sorry, please try again'.",
          {"count": "Someone coughs four times, after which a woman says 'I'm sorry, please try again'.",
           "order": "A woman says 'I'm sorry, please try again', after which someone coughs two times.",
           "gender": "Someone coughs two times, after which a man says 'I'm sorry, please try again'."},
          seq([again]))
    scene("footsteps_four", seq([k.steps(4)]), "Four footsteps are heard. Nothing more.",
          {"count": "Seven footsteps are heard. Nothing more.",
           "extra": "Four footsteps are heard on a creaky floor, and then a door is slammed."}, None)
    thalassa = k.say("el_f3", "Η θάλασσα είναι ήρεμη σήμερα το βράδυ.")
    bed = seq([thalassa], lead_s=0.8, tail_s=0.8)
    scene("campfire_greek", overlay(bed, k.looped("campfire", len(bed)), 0.0, -4.0),
          "Throughout, a campfire crackles; over it, a woman speaks Greek.",
          {"gender": "Throughout, a campfire crackles; over it, a man speaks Greek.",
           "extra": "Throughout, a campfire crackles and crickets chirp; over it, a woman speaks Greek."},
          bed)
    back, boom = k.say("gene", "stand well back, everyone"), k.rec("explosion")
    pad = np.zeros(max(0, int((3.0 - 0.2 - len(back) / SR - 0.4) * SR)), np.float32)
    full = seq([np.concatenate([back, pad]), boom])
    k.at("explosion 'about three seconds in'", 0.2 + (len(back) + len(pad)) / SR + 0.4 + first_onset(boom),
         2.5, 3.5)
    scene("warning_explosion", full,
          "A man warns 'stand well back, everyone', and partway through, about three seconds in, there is an "
          "explosion.",
          {"order": "There is an explosion first, and only after it does a man warn 'stand well back, everyone'.",
           "gender": "A woman warns 'stand well back, everyone', and partway through, about three seconds in, there "
                     "is an explosion."},
          seq([np.concatenate([back, pad])]))
    whip, ru = k.rec("whip"), k.say("ru_f", "auth-thankyou goodbye")
    scene("whip_russian", seq([whip, ru]),
          "Was that the crack of a whip just before a woman started speaking Russian?",
          {"order": "Was that a woman speaking Russian just before the crack of a whip?",
           "gender": "Was that the crack of a whip just before a man started speaking Russian?"},
          seq([ru]))
    forsenat = k.say("sv_m2", "Tåget är försenat med tjugo minuter, tyvärr.")
    hammer = k.looped("jackhammer", int(2.0 * SR))
    full = seq([forsenat, _fade(hammer)])
    k.at("jackhammer 'toward the end' (onset / length)", (0.2 + len(forsenat) / SR + 0.4) / (len(full) / SR), 0.5, 0.8)
    scene("swedish_jackhammer", full,
          "A man speaks Swedish; toward the end, a jackhammer starts pounding.",
          {"order": "A jackhammer pounds first; toward the end, a man speaks Swedish.",
           "extra": "A man speaks Swedish; toward the end, a jackhammer starts pounding and a lorry reverses, "
                    "beeping."},
          seq([forsenat]))
    scene("count_to_five", seq([k.counting(5)]), "A woman counts out loud from one to five (1, 2, 3, 4, 5).",
          {"count": "A woman counts out loud from one to three (1, 2, 3).",
           "gender": "A man counts out loud from one to five (1, 2, 3, 4, 5).",
           "extra": "A woman counts out loud from one to five (1, 2, 3, 4, 5) while a baby giggles."}, None)
    apple, june = k.rec("apple"), k.say("june", "auth-thankyou goodbye")
    scene("apple_french", seq([apple, june]),
          "Someone takes a crunchy bite of an apple, and afterwards a woman says a few words in French.",
          {"order": "A woman says a few words in French, and afterwards someone takes a crunchy bite of an apple.",
           "extra": "Someone takes a crunchy bite of an apple and slurps a drink, and afterwards a woman says a few "
                    "words in French."},
          seq([june]))
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v9(k: Kit9) -> list[dict]:
    B = []
    laugh, cough, plane, hammer = k.rec("laugh"), k.rec("cough"), k.rec("plane"), k.looped("jackhammer", int(2.6 * SR))
    whip, splash, apple, coins = k.rec("whip"), k.rec("splash"), k.rec("apple"), k.rec("coins")
    boom = k.rec("explosion")
    sword, hammer = k.rec("sword"), _fade(hammer)
    # add
    sp = k.say("gene", "the harvest festival starts on saturday morning")
    base = seq([sp], lead_s=0.7, tail_s=0.7)
    B.append({"id": "add_rain_under", "kind": "add",
              "instruction": "Lay a steady downpour of rain beneath the man's voice, from start to finish.",
              "original": base, "real": overlay(base, k.looped("rain", len(base)), 0.0, -5.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("campfire", len(base)), 0.0, -4.0),
                        "wrong_place": np.concatenate([base, k.rec("rain")[: int(2.5 * SR)]])}})
    sp = k.say("allison", "auth-thankyou goodbye")
    B.append({"id": "add_cough_end", "kind": "add",
              "instruction": "After she has said goodbye, a couple of coughs should be added.",
              "original": seq([sp]), "real": seq([sp, cough]),
              "wrong": {"wrong_sound": seq([sp, laugh]), "wrong_place": seq([cough, sp])}})
    a, b = k.say("da_m1", "Vi ses i morgen ved stationen."), k.say("da_m1", "Kom ikke for sent.")
    sw3, st3 = k.clashes(3), k.steps(3)
    B.append({"id": "add_swords_between", "kind": "add",
              "instruction": "In the pause between his two sentences, insert three clashes of swords.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, sw3, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, st3, b], gap_s=0.35), "wrong_place": seq([a, b, sw3], gap_s=0.35)}})
    sp = k.say("hu_f5", "Ma este koncert lesz a parkban.")
    B.append({"id": "add_plane_start", "kind": "add",
              "instruction": "Open the clip with a few seconds of a propeller plane flying over, before she speaks.",
              "original": seq([sp]), "real": seq([plane, sp]),
              "wrong": {"wrong_sound": seq([hammer, sp]), "wrong_place": seq([sp, plane])}})
    # delete
    sp = k.say("ro_f2", "Vă mulțumesc pentru răbdare.")
    orig = seq([sp, coins])
    wrong = orig.copy()
    wrong[int(0.2 * SR): int(0.2 * SR) + len(sp)] = 0.0  # the woman silenced in place, the coins left
    B.append({"id": "del_coins_end", "kind": "delete",
              "instruction": "The jingling coins after the woman are to be removed.",
              "original": orig, "real": seq([sp]),
              "wrong": {"wrong_target": wrong, "partial": seq([sp, coins[: int(0.4 * SR)]])}})
    sp = k.say("june", "hello-world please-try-again")
    B.append({"id": "del_laugh_inplace", "kind": "delete",
              "instruction": "silence the laughter at the very beginning, but don't shift the French speaker or the "
                             "splash",
              **delete_in_place(laugh, sp, splash)})
    sp = k.say("sv_f4", "Glöm inte att stänga fönstret innan du går.")
    bed = seq([sp], lead_s=0.7, tail_s=0.7)
    tick = k.looped("tick", len(bed))
    B.append({"id": "del_clock_bed", "kind": "delete",
              "instruction": "Get rid of the ticking clock behind the Swedish speaker - her voice stays.",
              "original": overlay(bed, tick, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), tick, 0.0, -8.0),
                        "partial": overlay(bed, tick[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.say("el_f3", "Καλό ταξίδι σε όλους.")
    st4 = k.steps(4)
    B.append({"id": "del_explosion_mid", "kind": "delete",
              "instruction": "Could the explosion be cut out, please? The footsteps and the Greek woman should stay.",
              "original": seq([st4, boom, sp]), "real": seq([st4, sp]),
              "wrong": {"wrong_target": seq([boom, sp]), "partial": seq([st4, boom[: int(0.5 * SR)], sp])}})
    # replace
    sp = k.say("gene", "the museum closes at half past five")
    B.append({"id": "rep_whip_sword", "kind": "replace",
              "instruction": "Swap the crack of the whip at the end for a single clang of swords.",
              "original": seq([sp, whip]), "real": seq([sp, sword]),
              "wrong": {"wrong_sound": seq([sp, splash]), "deleted_only": seq([sp])}})
    sp = k.say("allison", "hello-world")
    bed = seq([sp], lead_s=1.0, tail_s=1.0)
    B.append({"id": "rep_rain_campfire", "kind": "replace",
              "instruction": "Rather than rain behind her 'hello world', give me a crackling campfire.",
              "original": overlay(bed, k.looped("rain", len(bed)), 0.0, -5.0),
              "real": overlay(bed, k.looped("campfire", len(bed)), 0.0, -4.0),
              "wrong": {"wrong_sound": overlay(bed, k.looped("tick", len(bed)), 0.0, -8.0), "deleted_only": bed}})
    sp = k.say("ru_f", "hello-world please-try-again")
    B.append({"id": "rep_laugh_cough", "kind": "replace",
              "instruction": "In place of the laughter at the start, I'd like to hear somebody coughing.",
              "original": seq([laugh, sp]), "real": seq([cough, sp]),
              "wrong": {"wrong_sound": seq([apple, sp]), "deleted_only": seq([sp])}})
    sp = k.say("sv_m2", "Välkommen ombord, vi lyfter om fem minuter.")
    B.append({"id": "rep_steps_jackhammer", "kind": "replace",
              "instruction": "what if the footsteps after the Swedish bloke were a jackhammer instead?",
              "original": seq([sp, k.steps(4)]), "real": seq([sp, hammer]),
              "wrong": {"wrong_sound": seq([sp, plane]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv9"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v9 (game sound packs, recorded prompts, new voices): audio and items.jsonl files."""
    prompts = [ASTERISK / n for e, n, *_ in VOICES9.values() if e == "asterisk"]
    require([p for p, _, _ in RECORDINGS9.values()] + prompts,
            "install the Debian packages the docstring names")
    build_checked("v9", out, Kit9(out), rubric_scenes_v9, edit_bases_v9, ensure_ascii=False,
                  report=("edit_variants", "line_f0_hz", "times_checked", "clips"))


if __name__ == "__main__":
    app()
