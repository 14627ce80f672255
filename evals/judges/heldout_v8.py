"""Held-out judge benchmark, set v8: more real recordings, new voices in other languages (fresh, built before
being judged).

Built without reading or running any judge: nothing under audiomind/judges/ was opened, imported or run, no
benchmark runner (run_bench.py, run_edit_bench.py) or audiomind command was run on this audio, and only the
items.jsonl format was taken from the runners. It reuses evals/judges/heldout.py (seq, overlay, _load, SR,
build_rubric and build_edits, which write the same OUT/rubric/items.jsonl and OUT/edit/items.jsonl files as
every earlier set, the gender bands MALE_MAX_HZ / FEMALE_MIN_HZ and the espeak-ng voices of v1-v6) and
evals/judges/heldout_v7.py (Kit7's cache folder, counted_as and times, the envelope event counter, the pYIN
median f0, the band test and the fade / peak helpers).

Material (none of it used by v1-v7 or the dev checks):
- real recordings, Debian package tuxpaint-stamps-default (the sound a stamp plays, never its spoken
  *_desc*.ogg description), under /usr/share/tuxpaint/stamps/, cut, faded, peak-normalised, 16 kHz mono. Each
  was identified by its stamp name and description and by measurement (envelope, pYIN pitch, spectrogram):
  animals/birds/hen.ogg (clucking: six broadband pulses), animals/birds/cuckoo.ogg (a two-note call, about
  550-1000 Hz), animals/birds/gander.ogg (a goose's honk), animals/birds/lark.ogg (warbled song, 2-4 kHz
  whistles), animals/insects/mosquito.ogg (a harmonic whine, f0 about 355 Hz, 3.9 s), animals/insects/
  grasshopper.ogg (chirps: bursts at 2 and 4 kHz every 0.45 s), animals/mammals/apes/chimp.ogg (0-1.9 s:
  hoots and screams), animals/mammals/aquatic/whale.ogg (whale song: low tones and up-sweeps),
  animals/mammals/aquatic/dolphin.ogg (chatter, then click trains), animals/mammals/aquatic/sea_lion.ogg (one
  bark), animals/mammals/bears/bear.ogg (0-2.2 s of a low growl), animals/mammals/cats/tiger.ogg (its first
  roar, 0-2.65 s), animals/mammals/rodents/mouse.ogg (squeaks), animals/mammals/bovines/bison.ogg (three deep
  grunts, measured as three events), household/rubberduck.ogg (a rubber duck's squeak, 0.33 s),
  household/arttools/scissors_small_closed.ogg (one snip of small scissors, 0.4 s) and
  vehicles/ship/cartoon/bathyscape.ogg (two sonar pings: a click ringing at about 700 Hz, measured as two
  events). Squeaks and snips are counted by placing one recording n times. Every count a wording states is the
  number of envelope events measured when the set is built (heldout_v7.events: 10 ms RMS frames above -25 dB
  re the clip's peak, gaps under 0.1 s merged); the build stops if one differs. Checked at -15 to -35 dB too:
  the bison grunts and scissor snips count the same at every threshold; a duck squeak splits in two only at
  -15 dB (its two tonal parts) and a sonar ping's decaying ring splits at -20 / -30 dB, while the two pings'
  onsets (0.04 s and 2.01 s) stay two. The one stated time ('about two seconds in') is measured too: the
  speech starts 2.09 s in. 13 of the 14 scenes and 11 of the 12 edit bases use a recording.
- General MIDI programs no earlier set or the dev checks played (FluidR3_GM via audiomind.synth): drawbar
  organ (16), steel-string acoustic guitar (25), soprano sax (64) and calliope lead (82, only as a wrong
  replacement).
- voices, each a voice no earlier set used: festival (text2wave) hindi_NSK_diphone (festvox-hi-nsk, Hindi,
  male) and msu_ru_nsh_clunits (festvox-ru, Russian, male); espeak-ng en-us+Hugo (English, male; the Hugo
  variant no earlier set used), pt+Henrique (Portuguese, male), fr+michel (French, male), de+f2 (German,
  female), fr+f3 (French, female), es+f3 (Spanish, female) and nl+f5 (Dutch, female). The f-variants were
  used by earlier sets only with English (en-us+f2, en-us+f4, en-gb-scotland+f5, en-gb-x-rp+f1, dev en-us+f3);
  here they speak other languages, and the build checks that each espeak-ng voice renders audio unlike its
  language's default voice (the fall-back of a variant the engine ignores) and unlike every espeak-ng voice
  of v1-v6. Every non-English voice speaks a sentence of its own language and the wordings only say that a
  man or a woman speaks (in that language), never quoting them; only en-us+Hugo is quoted.
  Median f0 (librosa pYIN 60-400 Hz, as heldout_v7.median_f0) of each voice's test sentence, measured when the
  set is built: hindi_NSK 130 Hz, msu_ru_nsh 130 Hz, en-us+Hugo 109 Hz, pt+Henrique 113 Hz, fr+michel 105 Hz
  (male, <= 155 Hz); de+f2 194 Hz, fr+f3 201 Hz, es+f3 205 Hz, nl+f5 198 Hz (female, >= 170 Hz). The build
  also checks every spoken line against its voice's band; the lines used measure hindi_NSK 130 Hz (its diphone
  intonation is nearly flat), msu_ru_nsh 109-130, Hugo 104-121, Henrique 113-118, michel 104-105, de+f2
  187-194, fr+f3 195-229, es+f3 201-220, nl+f5 198-205 Hz. A msu_ru_nsh line 'Завтра утром поезд
  отправляется в восемь часов.' measured 157.9 Hz (outside the male band) and was replaced.
  Rejected: espeak-ng fr-fr+f3 (100.6 Hz, the plain fr-fr voice: a hyphenated language ignores the variant,
  as en-gb+<variant> did in v1), it+f4 (170.7 Hz, on the band edge) and es+f1 (176.7 Hz, near the edge; es+f3
  taken instead); festival marathi_NSK_diphone and telugu_NSK_diphone (festvox-mr-nsk, festvox-te-nsk: the
  same NSK speaker as hindi_NSK, 130 Hz on every sentence, so no new voice); festvox-ellpc11k (Spanish) is not
  in this Debian release; festvox-czech-krb (a child's voice) was not installed; pl+f2 (202 Hz) and the male
  de+m3, nl+m3, es+m2, pt+m4 and es+pablo (96-112 Hz) were measured and not needed.
  Rejected recordings: frog.ogg (broadband noise with a faint 2.5 kHz line: no clear croak), blackbird.ogg
  (two long broadband noise bursts before the song), gorilla.ogg (low noise, not a clear call), badger.ogg and
  beaver.ogg (the same file), ram.ogg and mountaingoat.ogg (the same file, and goats/sheep named before),
  bull.ogg, cow_white.ogg, zebra.ogg (a moo and a bray: cow and donkey were v7's), penguin, tucan, vulture,
  deer, doe, caribou, camel, fox, ferret, koala, hippopotamus, squirrel, rabbit and orca (calls an ordinary
  listener would not name), hornet.ogg (a buzz like v7's bee), checkeredflag.ogg (a swelling noise: crowd or
  passing car, ambiguous), no_uturn.ogg (a tonal squeal, ambiguous), xing_school.ogg, ghost.ogg, the dreydl-*
  files, faces, letters, numbers and apollo_lander (voices or spoken words), final-roll-call.ogg (a steady
  harmonic horn call: a bugle or a synthesizer, and trumpet is dev material), camera_35mm.ogg (a shutter, as
  the dev camera sound), santahat.ogg (jingle bells, v5), bottle.ogg, glass.ogg, kettle.ogg, gift.ogg,
  spider.ogg, bat_left.ogg, Washing-machine.ogg and vacuum_cleaner.ogg (quiet or under a second, not clearly
  that object), blackcat.ogg (a cat was named by earlier sets' wordings), the silent nandou, iguana, giraffe
  and wombat files, the instruments earlier sets named (cello, violin, bassoon, crash cymbal, floor tom, drum
  kit) and the v7 files. tuxpaint-data's tool sounds (/usr/share/tuxpaint/sounds/: clicks, blips, swooshes,
  typewriterbell.wav, magic/*) were measured and left out: short synthetic effects an ordinary user would not
  name (magic/lightning.ogg is thunder, v7's; typewriterbell.wav a bell ping like the dev bell).
- wordings: written by hand here (questions, lists, fragments, 'while', 'underneath', 'followed by', 'as soon
  as', 'about two seconds in', counts in words and in digits), not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound /
deleted_only; build_edits adds the no-op): 55 rubric items (14 positives; 8 order, 8 gender, 10 extra, 4 count,
11 missing) and 48 edit items; 85 clips of 2.2-8.1 s, every one non-silent (RMS -30 to -18 dBFS), checked by
the build.

Needs the Debian packages: tuxpaint-stamps-default festival festvox-hi-nsk festvox-ru espeak-ng fluidsynth
fluid-soundfont-gm.

    .venv/bin/python evals/judges/heldout_v8.py --out /tmp/hv8
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import typer

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # for heldout and heldout_v7, which put the repository root on sys.path
    sys.path.insert(0, str(HERE))

from build_sets import SR, overlay, seq
from heldout_v7 import STAMPS, Kit7, build_checked, delete_in_place, first_onset, require, text_id, tts

from audiomind import synth

PANGRAM = "the quick brown fox jumps over the lazy dog"
# voice -> (engine, voice name, gender, language, test sentence)
VOICES8 = {
    "hugo": ("espeak", "en-us+Hugo", "male", "English", PANGRAM),
    "nsk": ("festival", "hindi_NSK_diphone", "male", "Hindi", "नमस्ते, आज मौसम बहुत अच्छा है और बाज़ार खुला है।"),
    "nsh": ("festival", "msu_ru_nsh_clunits", "male", "Russian", "Здравствуйте, сегодня в парке будет концерт."),
    "henrique": ("espeak", "pt+Henrique", "male", "Portuguese", "Boa tarde, o comboio para Lisboa parte daqui a dez minutos."),
    "michel": ("espeak", "fr+michel", "male", "French", "Bonsoir, le dernier train pour Lyon part dans dix minutes."),
    "de_f2": ("espeak", "de+f2", "female", "German", "Guten Morgen, der Zug nach Berlin fährt in zehn Minuten ab."),
    "fr_f3": ("espeak", "fr+f3", "female", "French", "Bonjour à tous, le marché ouvre à huit heures ce matin."),
    "es_f3": ("espeak", "es+f3", "female", "Spanish", "Buenos días, el autobús llega en cinco minutos."),
    "nl_f5": ("espeak", "nl+f5", "female", "Dutch", "Goedemorgen, de winkel gaat om negen uur open."),
}

# recording -> (file under STAMPS, start s, end s or None for the file's end)
RECORDINGS8 = {
    "hen": ("animals/birds/hen.ogg", 0.0, None), "cuckoo": ("animals/birds/cuckoo.ogg", 0.0, None),
    "goose": ("animals/birds/gander.ogg", 0.0, None), "lark": ("animals/birds/lark.ogg", 0.0, 1.8),
    "mosquito": ("animals/insects/mosquito.ogg", 0.0, None),
    "grasshopper": ("animals/insects/grasshopper.ogg", 0.0, None),
    "chimp": ("animals/mammals/apes/chimp.ogg", 0.0, 1.9), "whale": ("animals/mammals/aquatic/whale.ogg", 0.0, 4.7),
    "whale_short": ("animals/mammals/aquatic/whale.ogg", 0.0, 3.0),
    "dolphin": ("animals/mammals/aquatic/dolphin.ogg", 0.0, None),
    "sea_lion": ("animals/mammals/aquatic/sea_lion.ogg", 0.0, None),
    "bear": ("animals/mammals/bears/bear.ogg", 0.0, 2.2), "tiger": ("animals/mammals/cats/tiger.ogg", 0.0, 2.65),
    "mouse": ("animals/mammals/rodents/mouse.ogg", 0.0, None), "bison": ("animals/mammals/bovines/bison.ogg", 0.0, None),
    "squeak": ("household/rubberduck.ogg", 0.0, None), "snip": ("household/arttools/scissors_small_closed.ogg", 0.0, None),
    "sonar": ("vehicles/ship/cartoon/bathyscape.ogg", 0.0, None),
}

# General MIDI programs no earlier set played: name -> (program, notes, note length s); chords for the organ
GM8 = {
    "steel_guitar": (25, ["E3", "B3", "E4", "G#4", "B4", "G#4", "E4"], 0.3),
    "soprano_sax": (64, ["G4", "A4", "B4", "D5", "B4", "G4"], 0.35),
    "calliope": (82, ["C5", "E5", "G5", "E5", "C5", "G4"], 0.3),
}
ORGAN8 = (16, ["C", "F", "G"], 0.8)  # drawbar organ: program, chords, seconds a chord


class Kit8(Kit7):
    """Kit7's cache folder and checks (counted_as, times, looped, the spoken-line, count and time logs) with
    the v8 voices, recordings and programs."""

    tag = "8"
    voices = VOICES8
    recordings = RECORDINGS8
    programs = GM8

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES8[key]
        tts(engine, name, text, p)  # both festival voices read UTF-8

    def play(self, name: str, p: Path) -> None:
        if name == "drawbar_organ":
            prog, chords, chord_s = ORGAN8
            synth.triads(chords, p, chord_s=chord_s, lead_s=0.1, program=prog)
        else:
            super().play(name, p)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice (a
        variant the engine ignores falls back to it) and, for English, every espeak-ng voice of v1-v6
        (heldout.VOICES)."""
        base = name.split("+", maxsplit=1)[0]
        default = self.espeak(base, test, f"default_{base}_{text_id(test)}.wav")
        return {f"default {base}": default, **self.earlier_espeak(test, lang)}

    def squeaks(self, n: int) -> np.ndarray:
        return self.placed("rubber duck squeaks", "squeak", n, 0.35)

    def snips(self, n: int) -> np.ndarray:
        return self.placed("scissor snips", "snip", n, 0.35)

    def pings(self) -> np.ndarray:
        return self.counted_as("sonar pings x2", self.rec("sonar"), 2)

    def grunts(self) -> np.ndarray:
        return self.counted_as("bison grunts x3", self.rec("bison"), 3)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v8(k: Kit8) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    hen, essen = k.rec("hen"), k.say("de_f2", "Das Essen steht auf dem Tisch, kommt bitte alle herein.")
    scene("hen_german", seq([hen, essen]),
          "Can you hear a hen clucking, and right after it a woman talking in German?",
          {"order": "Can you hear a woman talking in German, and right after her a hen clucking?",
           "gender": "Can you hear a hen clucking, and right after it a man talking in German?",
           "extra": "Can you hear a hen clucking and a tractor engine starting up, and right after that a woman "
                    "talking in German?"},
          seq([essen]))
    scene("duck_squeaks", seq([k.squeaks(4)]),
          "somebody squeezes a rubber duck 4 times, one squeak per squeeze",
          {"count": "somebody squeezes a rubber duck 6 times, one squeak per squeeze",
           "extra": "somebody squeezes a rubber duck 4 times, one squeak per squeeze, while the bath tap runs"},
          None)
    zug = k.say("nsh", "Сегодня вечером в городе будет дождь.")
    whale = k.rec("whale")
    bed = seq([zug], lead_s=0.5, tail_s=0.5)
    scene("whale_russian", overlay(bed, whale, 0.0, -7.0),
          "whale song underneath a man talking in Russian",
          {"gender": "whale song underneath a woman talking in Russian",
           "extra": "whale song underneath a man talking in Russian, plus a ship's horn blasting"},
          bed)
    chimp, tiger, bear = k.rec("chimp"), k.rec("tiger"), k.rec("bear")
    scene("animals_in_order", seq([chimp, tiger, bear], gap_s=0.3),
          "Animal noises, in this order: chimpanzee, tiger, bear.",
          {"order": "Animal noises, in this order: bear, tiger, chimpanzee.",
           "extra": "Animal noises, in this order: chimpanzee, tiger, wolf, bear."},
          seq([chimp, bear], gap_s=0.3))
    saman = k.say("nsk", "कृपया अपना सामान साथ रखें।")
    snips = k.snips(3)
    scene("snips_hindi", seq([snips, saman], gap_s=0.25),
          "Scissors snip three times and, as soon as they stop, a man starts speaking Hindi.",
          {"count": "Scissors snip six times and, as soon as they stop, a man starts speaking Hindi.",
           "order": "A man speaks Hindi and, as soon as he stops, scissors snip three times.",
           "gender": "Scissors snip three times and, as soon as they stop, a woman starts speaking Hindi."},
          seq([saman]))
    scene("sonar_twice", seq([k.pings()]), "Is that a sonar pinging twice?",
          {"count": "Is that a sonar pinging 4 times?",
           "extra": "Is that a sonar pinging twice, with a diver's air bubbles gurgling up?"}, None)
    mer, dolphin = k.say("fr_f3", "La mer est calme ce matin, nous partons en bateau."), k.rec("dolphin")
    scene("dolphin_french", seq([dolphin, mer]),
          "A dolphin chatters and clicks, followed by a woman speaking French.",
          {"order": "A woman speaks French, followed by a dolphin that chatters and clicks.",
           "gender": "A dolphin chatters and clicks, followed by a man speaking French."},
          seq([mer]))
    jas = k.say("nl_f5", "Vergeet je jas niet, het is koud buiten.")
    bed = seq([jas], lead_s=0.5, tail_s=0.5)
    scene("mosquito_dutch", overlay(bed, k.looped("mosquito", len(bed)), 0.0, -9.0),
          "There's a mosquito whining the entire time a woman talks in Dutch.",
          {"gender": "There's a mosquito whining the entire time a man talks in Dutch.",
           "extra": "There's a mosquito whining and a ceiling fan whirring the entire time a woman talks in Dutch."},
          bed)
    goose, sax = k.rec("goose"), k.gm("soprano_sax")
    scene("goose_sax", seq([goose, sax]),
          "Goose honk, then a soprano saxophone plays a little phrase.",
          {"order": "Soprano saxophone phrase first, then a goose honks.",
           "extra": "Goose honk, a car horn, then a soprano saxophone plays a little phrase."},
          seq([sax]))
    cuckoo, noon = k.rec("cuckoo"), k.say("hugo", "it is already twelve o'clock")
    full = seq([cuckoo, noon])
    k.at("'twelve o'clock' about two seconds in", 0.2 + len(cuckoo) / SR + 0.4 + first_onset(noon), 1.6, 2.5)
    scene("cuckoo_noon", full,
          "A cuckoo calls, and about two seconds in a man says 'it is already twelve o'clock'.",
          {"order": "A man says 'it is already twelve o'clock', and only after that does a cuckoo call.",
           "gender": "A cuckoo calls, and about two seconds in a woman says 'it is already twelve o'clock'."},
          seq([noon]))
    praia, lark = k.say("henrique", "Amanhã vamos todos à praia de manhã cedo."), k.rec("lark")
    bed = seq([praia], lead_s=0.5, tail_s=0.4)
    scene("lark_portuguese", overlay(bed, lark, 0.3, -6.0),
          "While a lark sings, a man speaks Portuguese.",
          {"gender": "While a lark sings, a woman speaks Portuguese.",
           "extra": "While a lark sings and church bells ring, a man speaks Portuguese."},
          bed)
    scene("bison_grunts", seq([k.grunts()]), "3 deep grunts from a bison and that's it.",
          {"count": "5 deep grunts from a bison and that's it.",
           "extra": "3 deep grunts from a bison, with the wind howling across the plain."}, None)
    guitar, mouse = k.gm("steel_guitar"), k.rec("mouse")
    scene("guitar_mouse", seq([guitar, mouse]),
          "Someone picks a few notes on a steel-string acoustic guitar; next, a mouse squeaks.",
          {"order": "A mouse squeaks; next, someone picks a few notes on a steel-string acoustic guitar.",
           "extra": "Someone picks a few notes on a steel-string acoustic guitar; next, a mouse squeaks and a door "
                    "creaks open."},
          seq([guitar]))
    organ, concert = k.gm("drawbar_organ"), k.say("michel", "Le concert commence dans cinq minutes.")
    scene("organ_french", seq([organ, concert]),
          "1) a drawbar organ plays a few chords, 2) a man says something in French",
          {"order": "1) a man says something in French, 2) a drawbar organ plays a few chords",
           "gender": "1) a drawbar organ plays a few chords, 2) a woman says something in French"},
          seq([concert]))
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v8(k: Kit8) -> list[dict]:
    B = []
    sea_lion, goose, grasshopper = k.rec("sea_lion"), k.rec("goose"), k.rec("grasshopper")
    whale, bear, mouse, hen, chimp = k.rec("whale_short"), k.rec("bear"), k.rec("mouse"), k.rec("hen"), k.rec("chimp")
    cuckoo, tiger, lark = k.rec("cuckoo"), k.rec("tiger"), k.rec("lark")
    organ, sax, calliope = k.gm("drawbar_organ"), k.gm("soprano_sax"), k.gm("calliope")
    # add
    sp = k.say("nsh", "Пожалуйста, закройте окно, на улице холодно.")
    B.append({"id": "add_sea_lion_end", "kind": "add",
              "instruction": "after the Russian guy finishes, tack on a sea lion barking",
              "original": seq([sp]), "real": seq([sp, sea_lion]),
              "wrong": {"wrong_sound": seq([sp, goose]), "wrong_place": seq([sea_lion, sp])}})
    sp = k.say("de_f2", "Heute Abend regnet es wahrscheinlich bis Mitternacht.")
    base = seq([sp], lead_s=0.6, tail_s=0.6)
    B.append({"id": "add_grasshopper_under", "kind": "add",
              "instruction": "Put some grasshoppers chirping underneath her voice.",
              "original": base, "real": overlay(base, k.looped("grasshopper", len(base)), 0.0, -8.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("mosquito", len(base)), 0.0, -8.0),
                        "wrong_place": np.concatenate([base, grasshopper, np.zeros(int(0.3 * SR), np.float32)])}})
    a, b = k.say("fr_f3", "N'oubliez pas vos parapluies."), k.say("fr_f3", "Il va pleuvoir cet après-midi.")
    sq2, sn2 = k.squeaks(2), k.snips(2)
    B.append({"id": "add_squeaks_between", "kind": "add",
              "instruction": "Between her two sentences, could you add a rubber duck squeaking twice?",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, sq2, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, sn2, b], gap_s=0.35),
                        "wrong_place": seq([a, b, sq2], gap_s=0.35)}})
    sp = k.say("nsk", "कल सुबह रेलगाड़ी दस बजे आएगी।")
    B.append({"id": "add_whale_before", "kind": "add", "instruction": "Add a bit of whale song before he starts talking.",
              "original": seq([sp]), "real": seq([whale, sp]),
              "wrong": {"wrong_sound": seq([bear, sp]), "wrong_place": seq([sp, whale])}})
    # delete
    sp = k.say("nl_f5", "De koffie is klaar, kom maar naar de keuken.")
    orig = seq([sp, mouse])
    wrong = orig.copy()
    wrong[int(0.2 * SR): int(0.2 * SR) + len(sp)] = 0.0  # the woman silenced in place, the mouse left
    B.append({"id": "del_mouse_end", "kind": "delete", "instruction": "the squeaky mouse at the end - cut it, please",
              "original": orig, "real": seq([sp]),
              "wrong": {"wrong_target": wrong, "partial": seq([sp, mouse[: int(0.5 * SR)]])}})
    sp = k.say("henrique", "O jantar está pronto, venham para a mesa.")
    B.append({"id": "del_hen_inplace", "kind": "delete",
              "instruction": "Mute the clucking hen at the beginning, leaving the man and the chimp right where they are.",
              **delete_in_place(hen, sp, chimp)})
    sp = k.say("es_f3", "La biblioteca cierra a las ocho de la tarde.")
    bed = seq([sp], lead_s=0.6, tail_s=0.6)
    buzz = k.looped("mosquito", len(bed))
    B.append({"id": "del_mosquito_bed", "kind": "delete",
              "instruction": "Lose the mosquito that's buzzing around behind the woman.",
              "original": overlay(bed, buzz, 0.0, -9.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), buzz, 0.0, -9.0),
                        "partial": overlay(bed, buzz[int(2.0 * SR):], 2.0, -9.0)}})
    sp = k.say("nsh", "Спасибо, до свидания.")
    B.append({"id": "del_tiger_mid", "kind": "delete",
              "instruction": "Delete the tiger's roar; the cuckoo and the man speaking Russian stay.",
              "original": seq([cuckoo, tiger, sp]), "real": seq([cuckoo, sp]),
              "wrong": {"wrong_target": seq([tiger, sp]), "partial": seq([cuckoo, tiger[: int(0.7 * SR)], sp])}})
    # replace
    sp = k.say("hugo", "welcome to the farm, mind the puddles")
    B.append({"id": "rep_goose_hen", "kind": "replace", "instruction": "swap that goose honk at the end for a hen clucking",
              "original": seq([sp, goose]), "real": seq([sp, hen]),
              "wrong": {"wrong_sound": seq([sp, lark]), "deleted_only": seq([sp])}})
    sp = k.say("de_f2", "Vielen Dank für Ihren Besuch, bis zum nächsten Mal.")
    B.append({"id": "rep_organ_sax", "kind": "replace",
              "instruction": "I'd rather have a soprano sax than the organ at the beginning.",
              "original": seq([organ, sp]), "real": seq([sax, sp]),
              "wrong": {"wrong_sound": seq([calliope, sp]), "deleted_only": seq([sp])}})
    sp = k.say("es_f3", "Gracias a todos por venir esta noche.")
    B.append({"id": "rep_snips_squeaks", "kind": "replace",
              "instruction": "Replace the 3 snips of the scissors with 3 squeaks of a rubber duck.",
              "original": seq([k.snips(3), sp]), "real": seq([k.squeaks(3), sp]),
              "wrong": {"wrong_sound": seq([grasshopper, sp]), "deleted_only": seq([sp])}})
    sp = k.say("michel", "Le zoo ferme à six heures ce soir.")
    B.append({"id": "rep_bear_chimp", "kind": "replace",
              "instruction": "Where the bear growls after the man, put a chimpanzee instead.",
              "original": seq([sp, bear]), "real": seq([sp, chimp]),
              "wrong": {"wrong_sound": seq([sp, tiger]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv8"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v8 (real recordings, new voices): audio and items.jsonl files."""
    require((STAMPS / rel for rel, _, _ in RECORDINGS8.values()), "apt-get install tuxpaint-stamps-default")
    build_checked("v8", out, Kit8(out), rubric_scenes_v8, edit_bases_v8, report=("times_checked", "clips"),
                  time_fmt="{0}: {1:.2f} s")


if __name__ == "__main__":
    app()
