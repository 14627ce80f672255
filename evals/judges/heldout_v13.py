"""Held-out judge benchmark, set v13: real recordings from the Trigger Rally, Scorched 3D, ManaPlus and old GNOME
sound data, real human speech from Trigger Rally's two rally co-drivers (a man and a woman) and the freedesktop
sound theme's spoken speaker-channel names (a woman), and espeak-ng voices of languages no earlier set spoke
(fresh, built before being judged).

Built blind, without reading or running any judge: nothing under audiomind/judges/ or tests/judges/ was opened,
imported, grepped or run, no result file, benchmark runner (run_bench.py, run_edit_bench.py), generate.py or
audiomind command was read or run, no git history was read, and no judge heard this audio. It reuses
evals/judges/heldout.py (seq, overlay, _load, SR, build_rubric and build_edits: the same OUT/rubric/items.jsonl
and OUT/edit/items.jsonl files as every earlier set, the gender bands MALE_MAX_HZ / FEMALE_MIN_HZ, the espeak-ng
voices of v1-v6), heldout_v7.py (build_checked: the cache folder, counted_as / placed / looped / at logs, the
envelope event counter, the pYIN median f0, the band test, check_voices, check_files, delete_in_place),
heldout_v10.py (louder), heldout_v11.py (Kit11.rec, which reads a recording out of a zip archive) and
heldout_v12.py (Kit12, and its voice list), and the voice lists of heldout_v8-v11 (for the distinctness check).

Material (none of it used or rejected by v1-v12 or the dev checks):
- real recordings (cut, faded, peak-normalised, 16 kHz mono), each identified by its file name and package and by
  measurement (envelope, spectral centroid). Debian manaplus-data (/usr/share/manaplus/data/sfx/system/page.ogg: one
  page of a book turned, 0.27 s, centroid 3.1 kHz, turned n times by placing it n times 0.3 s apart). Debian
  gnome-audio (/usr/share/sounds/card_shuffle.wav: a deck of playing cards riffled and bridged, 0.89 s, centroid 4.2
  kHz; never counted). Debian trigger-rally-data (sounds/ inside /usr/share/games/trigger-rally/data.zip):
  gravel.wav (tyres rolling over gravel, 4.3 s of steady crunching noise, centroid 1.6 kHz, looped where a wording
  says it goes on) and gear.wav (the clunk of a gear change, one 0.26 s event, centroid 740 Hz, placed n times 0.4 s
  apart). Debian scorched3d-data (/usr/share/games/scorched3d/data/globalmods/none/data/wav/misc/), only in an
  original that an edit changes or as a wrong sound: rocket.wav (0-3 s of a rocket's roaring whoosh) and bats1.wav
  (bats squeaking, 2.75 s, pYIN at its 400 Hz ceiling). Every count a wording states is the number of envelope
  events measured when the set is built (heldout_v7.events: 10 ms RMS frames above -25 dB re the clip's peak, gaps
  under 0.1 s merged); the build stops if one differs. Checked at -15 to -35 dB as well: page turns (2, 3, 4, 5, and
  the four spread under the Turkish woman, counted on their own track before they are mixed in) and gear changes (2,
  3) count the same at every threshold; the card shuffle reads as two events (riffle, bridge) at -20 to -35 dB and
  is never counted. Stated times and loudness comparisons are measured too and the build stops if one is outside its
  window: the gravel 'somewhere around the 3-second mark' starts at 3.28 s (2.5-3.5); the card shuffle is 6.4 dB
  louder than the Norwegian woman after it (RMS over each sound's events; 3-30 dB). All 14 scenes and all 12 edit
  bases use a recording; no General MIDI program is played.
- real human speech, each word trimmed to its speech (events at -35 dB) and joined 0.2 s apart: Debian
  trigger-rally-data (sounds/codriver/<name>/ inside data.zip): tim (a man reading rally pace notes: the words
  the file names state: hairpin, left, easy, medium, long, into, sand) and paula (a woman reading the same
  pace-note words); the third co-driver, ab, was measured and left out (see below). Debian
  sound-theme-freedesktop (/usr/share/sounds/freedesktop/stereo/audio-channel-*.oga: a woman naming the speaker
  channels, 'front left', 'rear right', 'side left', ...; heldout.py's v6 notes left them out as spoken channel
  names, so no set used them). All three are quoted by their file names' words.
- TTS voices, each a voice no earlier set used: espeak-ng en-us+edward2 (English, male, quoted), af+m5
  (Afrikaans, male), nb+f3 (Norwegian Bokmal, female) and tr+f5 (Turkish, female): languages no earlier set spoke
  (v9-v11 measured af+f2, nb+f2, tr+f4 and tr+m2 and did not use them); the build checks that each renders audio
  unlike its language's default voice and (English) unlike every espeak-ng voice of v1-v6 and the English
  espeak-ng voices of v8-v12.
  Median f0 (librosa pYIN 60-400 Hz, heldout_v7.median_f0) of each voice's test material, measured when the set
  is built: Trigger Rally tim 112 Hz, edward2 102 Hz, af+m5 105 Hz (male, <= 155 Hz); Trigger Rally paula 216 Hz,
  the freedesktop channel-name woman 201 Hz, nb+f3 212 Hz, tr+f5 201 Hz (female, >= 170 Hz). Every spoken line is
  checked against its voice's band too; the lines used measure tim 108-125, edward2 95-115, af+m5 103-105, paula
  192-215, channel-name woman 187-213, nb+f3 205-213, tr+f5 199-205 Hz. Tim's 'left' and 'right' alone give pYIN
  no voiced frame, and his lines 'hard right', 'long right', 'hard left' measured no f0 as a whole: replaced by
  lines that measure inside the band ('medium hairpin', 'long into sand'). Three of the seven voices are real
  people (one man, two women): no second real male voice new to this benchmark was found (see the rejections).
  Rejected voices: Trigger Rally's co-driver ab (pYIN finds no voiced frame on half its words, the rest 191-266 Hz),
  KTuberling fr (median 170 Hz over 186 voiced words, p10-p90 130-237 Hz: in neither band, or two speakers),
  KLettres de (letters 150-267 Hz: D falls in the male band), OpenArena's announcer (pak6-misc.pk3 sound/feedback:
  processed, pYIN finds nothing on most words, 78-228 Hz on the rest; and the package is v11's), Nexuiz's announcer
  and player voices (nexuiz-data: radio-filtered game taunts, 60-399 Hz within one speaker), every asterisk-prompt-*
  and asterisk-core-sounds-* speaker (used or rejected by v9 / v10), festival voices (all used or rejected by
  v7-v9). espeak-ng measured and not needed: en-us+iven4 (101 Hz), en-us+Gene2 (115; a variant of v9's Gene), eo+m5
  (102), af+f4 (182), cy+f1 (179, near the edge), id+f2 (194), lv+f5 (205), tr+f2 (197).
  Rejected recordings: scorched3d oceanwaves (waves: v1-v6), thunder (v7), rain and splash (v9), gull (v7's
  seagull), wolf (v8 wording), frogs (v8), birds / birdchirp (v5 / v8), apache_1 (a helicopter: v5), f16 / f18 /
  t38 / jet (close to v9's aeroplane), camera (dev), lava (bubbling: v8 / v9 wordings), para, play, text,
  teleport, laserdeath, beep, the explosions (v9) and tank movement (a tank engine: rejected by v11);
  trigger-rally engine (a car engine: v10), wind (v8 wording) and bang (not clearly nameable); manaplus book (a
  0.2 s thud, not clearly a book) and its UI sounds; gnome-audio phone (dev phone), panel/slide and the desktop
  event sounds; yaru-theme-sound, cuyo-data, berusky-data (UI / synthetic game sounds); lightyears, pioneers-data
  and tuxmath (no recordings); OpenArena's fans and switches (openarena-data was used by v11).
- wordings: written by hand here in shapes earlier sets did not use ('3 page turns' set off by dashes, a request
  'Can I get ...', 'the gearbox clunks twice', 'like a surround-sound test', 'somewhere around the 3-second
  mark', 'much louder than', 'mutters', 'Zero speech here --', 'x5, and nothing else in the clip', a speaker
  label 'Male co-driver: ...', 'from the first second to the last', 'runs on after she's done'; edit instructions
  with 'After he's done talking', 'Slip ... in between', 'Start off with ..., and only then should she speak',
  'Lose ...', 'Silence ... without moving anything else in time', 'Take out ...', 'Clear ... away', 'Exchange ...
  with ...', 'Turn ... into ...', 'Replace ... with ...', 'Instead of ..., I'd like ...'; counts in words and
  digits), not produced by the rule perturber.

14 scenes (rubric: positive, and the hard negatives that apply: order, gender, extra, count, missing), 12 edit
bases (4 add, 4 delete, 4 replace; wrong_sound / wrong_place, wrong_target / partial, wrong_sound / deleted_only;
build_edits adds the no-op): 63 rubric items (14 positives; 10 order, 12 gender, 8 extra, 6 count, 13 missing)
and 48 edit items; 87 clip files of 2.4-8.0 s (the 12 no-ops are copies), every one non-silent (RMS -38.4 to
-18.0 dBFS: the quietest is the soft Norwegian line alone), checked by the build.
Where a clip leaves a sound out (a missing negative, a wrong_target or deleted_only edit) silence of that sound's
length stands in its place, so every clip is over 2 s. The build is deterministic: two builds into the same
folder (emptied or not) give byte-identical wavs and items.jsonl files.

Needs the Debian packages: trigger-rally-data scorched3d-data manaplus-data gnome-audio sound-theme-freedesktop
espeak-ng.

    .venv/bin/python evals/judges/heldout_v13.py --out /tmp/hv13
"""

from __future__ import annotations

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
from heldout_v10 import VOICES10
from heldout_v11 import VOICES11, Kit11
from heldout_v12 import VOICES12, Kit12

from audiomind import audio as aio

TRIGGER = Path("/usr/share/games/trigger-rally/data.zip")
SCORCHED = Path("/usr/share/games/scorched3d/data/globalmods/none/data/wav/misc")
MANAPLUS = Path("/usr/share/manaplus/data/sfx/system")
GNOME = Path("/usr/share/sounds")
FREEDESKTOP = Path("/usr/share/sounds/freedesktop/stereo")
PANGRAM = "the quick brown fox jumps over the lazy dog"

# voice -> (engine, voice name or "<codriver|channels>:<who>", gender, language, test material). A codriver /
# channels voice is the real person who recorded those words: its 'text' is file stems (space-separated: a
# Trigger Rally co-driver's word files, or the freedesktop audio-channel-<stem>.oga files), each trimmed to its
# speech and played in turn.
VOICES13 = {
    "tim": ("prompts", "codriver:tim", "male", "English", "hairpin easy medium tarmac water"),
    "paula": ("prompts", "codriver:paula", "female", "English", "chicane gravel hairpin medium over"),
    "chan": ("prompts", "channels:freedesktop", "female", "English",
             "front-left front-right front-center rear-left rear-right"),
    "edward2": ("espeak", "en-us+edward2", "male", "English", PANGRAM),
    "af_m5": ("espeak", "af+m5", "male", "Afrikaans", "Goeie more, die trein na Kaapstad vertrek oor tien minute."),
    "nb_f3": ("espeak", "nb+f3", "female", "Norwegian", "God morgen, toget til Bergen går om ti minutter."),
    "tr_f5": ("espeak", "tr+f5", "female", "Turkish", "Günaydın, İstanbul treni on dakika sonra kalkıyor."),
}

# recording -> (file, or ("pk3", zip archive, member), start s, end s or None)
RECORDINGS13 = {
    "page": (MANAPLUS / "page.ogg", 0.0, None),
    "shuffle": (GNOME / "card_shuffle.wav", 0.0, None),
    "gravel": (("pk3", TRIGGER, "sounds/gravel.wav"), 0.0, None),
    "gear": (("pk3", TRIGGER, "sounds/gear.wav"), 0.0, None),
    "rocket": (SCORCHED / "rocket.wav", 0.0, 3.0),
    "bats": (SCORCHED / "bats1.wav", 0.0, None),
}


class Kit13(Kit12):
    """Kit12's checks and louder, with the v13 voices (Trigger Rally co-drivers, the freedesktop channel-name
    speaker, espeak-ng) and recordings (Kit11's reader, which takes a file or a zip member)."""

    tag = "13"
    voices = VOICES13
    recordings = RECORDINGS13

    def speak(self, key: str, text: str, p: Path) -> None:
        engine, name, _, _, _ = VOICES13[key]
        if engine == "espeak":
            tts(engine, name, text, p)
            return
        kind, who = name.split(":")
        parts = []
        for stem in text.split():  # each word trimmed to its speech (events at -35 dB), 0.2 s apart
            if kind == "codriver":
                raw = self.d / f"x{self.tag}_{who}_{stem}.wav"
                with zipfile.ZipFile(TRIGGER) as z:
                    raw.write_bytes(z.read(f"sounds/codriver/{who}/{stem}.wav"))
            else:
                raw = FREEDESKTOP / f"audio-channel-{stem}.oga"
            y = _load(raw)
            ev = events(y, thr_db=-35.0)
            parts.append(_fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
        aio.write_wav(p, _peak(self.times(parts, 0.2), 0.7), SR)

    def rec(self, name: str) -> np.ndarray:
        """Recording name (cached): a file, or a member of a zip archive."""
        return Kit11.rec(self, name)

    def unlike(self, name: str, lang: str, test: str) -> dict[str, np.ndarray]:
        """What espeak-ng voice name must not sound like on its test sentence: its language's default voice, the
        espeak-ng voices of v8-v12 in its language and, for English, every espeak-ng voice of v1-v6."""
        same = [v[1] for v in [*VOICES8.values(), *VOICES9.values(), *VOICES10.values(), *VOICES11.values(),
                               *VOICES12.values()] if v[0] == "espeak" and v[3] == lang]
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [name.split("+", maxsplit=1)[0], *same]}
        return {**others, **self.earlier_espeak(test, lang)}

    def pages(self, n: int) -> np.ndarray:
        return self.placed("page turns", "page", n, 0.3)

    def clunks(self, n: int) -> np.ndarray:
        return self.placed("gear changes", "gear", n, 0.4)

    def gravel(self, n_s: int) -> np.ndarray:
        """Tyres on gravel, looped to n_s samples."""
        return self.looped("gravel", n_s)


def hole(y: np.ndarray) -> np.ndarray:
    """Silence as long as y: where a sound a clip leaves out would have been (keeps the clip over 2 s)."""
    return np.zeros_like(y)


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes_v13(k: Kit13) -> list[dict]:
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    tim, p3 = k.say("tim", "hairpin left"), k.pages(3)
    scene("pages_hairpin", seq([p3, tim]),
          "Someone leafs through a book -- 3 page turns -- and then a guy calls out 'hairpin left'.",
          {"count": "Someone leafs through a book -- 5 page turns -- and then a guy calls out 'hairpin left'.",
           "order": "A guy calls out 'hairpin left', and only after that does someone leaf through a book (3 page "
                    "turns).",
           "gender": "Someone leafs through a book -- 3 page turns -- and then a woman calls out 'hairpin left'."},
          seq([hole(p3), tim]))
    notes = k.say("paula", "medium right into jump")
    bed = seq([notes], lead_s=0.8, tail_s=0.8)
    scene("paula_gravel", overlay(bed, k.gravel(len(bed)), 0.0, -9.0),
          "Can I get a woman reading rally pace notes ('medium right into jump') with tyres grinding over gravel "
          "from the first second to the last?",
          {"gender": "Can I get a man reading rally pace notes ('medium right into jump') with tyres grinding over "
                     "gravel from the first second to the last?",
           "extra": "Can I get a woman reading rally pace notes ('medium right into jump') with tyres grinding over "
                    "gravel from the first second to the last, plus a helicopter circling overhead?"},
          bed)
    card = k.say("edward2", "alright, pick a card, any card")
    scene("shuffle_pick", seq([k.rec("shuffle"), card]),
          "a deck of cards gets shuffled, right after which a man says \"alright, pick a card, any card\"",
          {"order": "a man says \"alright, pick a card, any card\", right after which a deck of cards gets shuffled",
           "gender": "a deck of cards gets shuffled, right after which a woman says \"alright, pick a card, any "
                     "card\"",
           "extra": "a deck of cards gets shuffled, right after which a man says \"alright, pick a card, any "
                    "card\" and an audience claps"},
          seq([card]))
    ch = k.say("chan", "front-left rear-right")
    scene("channels_pages", seq([ch, k.pages(2)]),
          "A woman announces 'front left' and 'rear right', like a surround-sound test; two pages are turned "
          "afterwards.",
          {"count": "A woman announces 'front left' and 'rear right', like a surround-sound test; four pages are "
                    "turned afterwards.",
           "order": "Two pages are turned; afterwards a woman announces 'front left' and 'rear right', like a "
                    "surround-sound test.",
           "gender": "A man announces 'front left' and 'rear right', like a surround-sound test; two pages are "
                     "turned afterwards."},
          seq([ch]))
    af = k.say("af_m5", "Die pad na die plaas is baie stowwerig vandag.")
    pad = np.zeros(max(0, int((3.0 - 0.2 - len(af) / SR - 0.4) * SR)), np.float32)
    head = np.concatenate([af, pad])
    grind = k.gravel(int(3.0 * SR))
    k.at("gravel 'around the 3-second mark' (onset, s)", 0.2 + len(head) / SR + 0.4 + events(grind)[0][0], 2.5,
         3.5)
    scene("afrikaans_then_gravel", seq([head, grind]),
          "Afrikaans from a man right at the beginning; the crunch of tyres on gravel doesn't start until "
          "somewhere around the 3-second mark.",
          {"order": "The crunch of tyres on gravel right at the beginning; Afrikaans from a man doesn't start "
                    "until somewhere around the 3-second mark.",
           "gender": "Afrikaans from a woman right at the beginning; the crunch of tyres on gravel doesn't start "
                     "until somewhere around the 3-second mark.",
           "extra": "Afrikaans from a man right at the beginning, with a rooster crowing; the crunch of tyres on "
                    "gravel doesn't start until somewhere around the 3-second mark."},
          seq([head]))
    scene("pages_five", seq([k.pages(5)]),
          "page turning, x5, and nothing else in the clip",
          {"count": "page turning, x7, and nothing else in the clip",
           "extra": "page turning, x5, with a pen scratching notes in between"},
          None)
    call, c2 = k.say("tim", "medium hairpin"), k.clunks(2)
    scene("hairpin_gears", seq([call, c2]),
          "Male co-driver: 'medium hairpin'. Then the gearbox clunks twice.",
          {"count": "Male co-driver: 'medium hairpin'. Then the gearbox clunks three times.",
           "order": "The gearbox clunks twice. Then, male co-driver: 'medium hairpin'.",
           "gender": "Female co-driver: 'medium hairpin'. Then the gearbox clunks twice."},
          seq([call, hole(c2)]))
    shuf = k.rec("shuffle")
    nb = k.say("nb_f3", "Det er din tur til å trekke et kort.") * np.float32(0.15)
    k.louder("the card shuffle louder than the Norwegian woman (dB)", shuf, nb, 3.0, 30.0)
    scene("shuffle_soft_norwegian", seq([shuf, nb]),
          "The shuffling of cards is much louder than the woman who speaks Norwegian after it.",
          {"order": "The woman speaking Norwegian comes first, and the shuffling of cards after her is much louder.",
           "gender": "The shuffling of cards is much louder than the man who speaks Norwegian after it."},
          seq([nb]))
    tr = k.say("tr_f5", "Bu kitabın son bölümünü henüz okumadım.")
    bed = seq([tr], lead_s=0.5, tail_s=0.5)
    flips = k.times([k.rec("page")] * 4, 0.5)
    k.counted_as("page turns x4 (spread)", flips, 4)
    scene("turkish_flips", overlay(bed, flips, 0.3, -4.0),
          "Turkish speech from a woman (four page flips can be heard while she talks).",
          {"count": "Turkish speech from a woman (six page flips can be heard while she talks).",
           "gender": "Turkish speech from a man (four page flips can be heard while he talks).",
           "extra": "Turkish speech from a woman (four page flips can be heard while she talks, and a kettle "
                    "whistles)."},
          bed)
    sq = k.say("paula", "square left")
    got = k.say("edward2", "got it, square left")
    scene("square_left_reply", seq([sq, got], gap_s=0.5),
          "First a female co-driver calls 'square left'; a man then answers, 'got it, square left'.",
          {"order": "First a man says 'got it, square left'; a female co-driver then calls 'square left'.",
           "gender": "First a male co-driver calls 'square left'; a woman then answers, 'got it, square left'.",
           "extra": "First a female co-driver calls 'square left' over a roaring rally engine; a man then answers, "
                    "'got it, square left'."},
          seq([sq, hole(got)], gap_s=0.5))
    p2, shuf, grav = k.pages(2), k.rec("shuffle"), _fade(k.rec("gravel")[: int(2.5 * SR)])
    scene("no_voices_trio", seq([p2, shuf, grav]),
          "Zero speech here -- two page turns, a deck being shuffled, then tyres rolling over gravel.",
          {"order": "Zero speech here -- tyres rolling over gravel, a deck being shuffled, then two page turns.",
           "extra": "Zero speech here -- two page turns, a deck being shuffled, a car door slamming, then tyres "
                    "rolling over gravel."},
          seq([p2, grav]))
    side = k.say("chan", "side-left side-right")
    af = k.say("af_m5", "Ek hoor die klank nou aan albei kante.")
    grav = _fade(k.rec("gravel")[: int(1.5 * SR)])
    scene("side_afrikaans_gravel", seq([side, af, grav]),
          "A woman reads 'side left, side right', after her a man talks in Afrikaans, and at the end there's a "
          "short stretch of gravel crunching.",
          {"order": "A man talks in Afrikaans, after him a woman reads 'side left, side right', and at the end "
                    "there's a short stretch of gravel crunching.",
           "gender": "A man reads 'side left, side right', after him a woman talks in Afrikaans, and at the end "
                     "there's a short stretch of gravel crunching."},
          seq([side, grav]))
    ch = k.say("edward2", "let me find the right chapter")
    scene("chapter_pages", seq([ch, k.pages(4)]),
          "'let me find the right chapter,' he mutters, and flips four pages.",
          {"count": "'let me find the right chapter,' he mutters, and flips two pages.",
           "order": "He flips four pages and then mutters, 'let me find the right chapter.'",
           "gender": "'let me find the right chapter,' she mutters, and flips four pages."},
          seq([ch]))
    nb = k.say("nb_f3", "Veien videre er full av grus og hull.")
    bed = seq([nb], lead_s=0.8, tail_s=0.8)
    scene("norwegian_gravel_bed", overlay(bed, k.gravel(len(bed)), 0.0, -8.0),
          "Gravel crunching under a woman's Norwegian; it starts before her and runs on after she's done.",
          {"gender": "Gravel crunching under a man's Norwegian; it starts before him and runs on after he's done.",
           "extra": "Gravel crunching under a woman's Norwegian; it starts before her and runs on after she's done, "
                    "and a dog barks once."},
          bed)
    return S


# ---------------------------------------------------------------- edit bases (hand-written wordings)


def edit_bases_v13(k: Kit13) -> list[dict]:
    B = []
    shuf, rocket, bats = k.rec("shuffle"), k.rec("rocket"), k.rec("bats")
    # add
    sp = k.say("edward2", "hang on, I'll read it to you")
    p3 = k.pages(3)
    B.append({"id": "add_pages_end", "kind": "add",
              "instruction": "After he's done talking, add a few pages being turned.",
              "original": seq([sp]), "real": seq([sp, p3]),
              "wrong": {"wrong_sound": seq([sp, k.clunks(3)]), "wrong_place": seq([p3, sp])}})
    sp = k.say("tr_f5", "Araba yavaşça köy yolunda ilerledi.")
    base = seq([sp], lead_s=0.7, tail_s=0.7)
    B.append({"id": "add_gravel_under", "kind": "add",
              "instruction": "put tyres-on-gravel noise under the Turkish, beginning to end",
              "original": base, "real": overlay(base, k.gravel(len(base)), 0.0, -6.0),
              "wrong": {"wrong_sound": overlay(base, k.looped("rocket", len(base)), 0.0, -6.0),
                        "wrong_place": np.concatenate([base, _fade(k.rec("gravel")[: int(2.5 * SR)])])}})
    a, b = k.say("tim", "easy left"), k.say("tim", "long into sand")
    B.append({"id": "add_shuffle_between", "kind": "add",
              "instruction": "Slip a deck of cards being shuffled in between his two calls.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, shuf, b], gap_s=0.35),
              "wrong": {"wrong_sound": seq([a, bats, b], gap_s=0.35), "wrong_place": seq([a, b, shuf], gap_s=0.35)}})
    sp = k.say("paula", "flat into jump long left")
    B.append({"id": "add_gears_first", "kind": "add",
              "instruction": "Start off with two clunky gear changes, and only then should she speak.",
              "original": seq([sp]), "real": seq([k.clunks(2), sp]),
              "wrong": {"wrong_sound": seq([shuf, sp]), "wrong_place": seq([sp, k.clunks(2)])}})
    # delete
    sp = k.say("nb_f3", "Kortene ligger klare på bordet.")
    B.append({"id": "del_shuffle_end", "kind": "delete",
              "instruction": "Lose the card shuffling at the end; her Norwegian stays as it is.",
              "original": seq([sp, shuf]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([hole(sp), shuf]), "partial": seq([sp, shuf[: int(0.4 * SR)]])}})
    sp = k.say("chan", "rear-center front-center")
    B.append({"id": "del_pages_inplace", "kind": "delete",
              "instruction": "Silence the page turns at the start without moving anything else in time (her words "
                             "and the gear clunks stay exactly where they are).",
              **delete_in_place(k.pages(3), sp, k.clunks(2))})
    sp = k.say("af_m5", "Die motor loop nog steeds baie goed.")
    bed = seq([sp], lead_s=0.7, tail_s=0.7)
    line = k.gravel(len(bed))
    B.append({"id": "del_gravel_bed", "kind": "delete",
              "instruction": "Take out the gravel noise that runs behind the Afrikaans speaker.",
              "original": overlay(bed, line, 0.0, -8.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), line, 0.0, -8.0),
                        "partial": overlay(bed, line[int(2.0 * SR):], 2.0, -8.0)}})
    sp = k.say("paula", "hairpin right")
    p2 = k.pages(2)
    B.append({"id": "del_shuffle_mid", "kind": "delete",
              "instruction": "Clear the card shuffle away from the middle -- the page turns before it and her "
                             "'hairpin right' after it should remain.",
              "original": seq([p2, shuf, sp]), "real": seq([p2, sp]),
              "wrong": {"wrong_target": seq([shuf, sp]), "partial": seq([p2, shuf[: int(0.35 * SR)], sp])}})
    # replace
    sp, c3 = k.say("edward2", "where did I leave off"), k.clunks(3)
    B.append({"id": "rep_clunks_pages", "kind": "replace",
              "instruction": "Exchange the gear clunks after his question with three page turns.",
              "original": seq([sp, c3]), "real": seq([sp, k.pages(3)]),
              "wrong": {"wrong_sound": seq([sp, bats]), "deleted_only": seq([sp, hole(c3)])}})
    sp = k.say("chan", "side-left rear-left")
    B.append({"id": "rep_rocket_gravel", "kind": "replace",
              "instruction": "Turn the roaring rocket at the start into tyres crunching on gravel; keep her channel "
                             "names.",
              "original": seq([rocket, sp]), "real": seq([_fade(k.rec("gravel")[: int(3.0 * SR)]), sp]),
              "wrong": {"wrong_sound": seq([bats, sp]), "deleted_only": seq([sp])}})
    sp = k.say("tim", "medium left")
    B.append({"id": "rep_bats_shuffle", "kind": "replace",
              "instruction": "Replace the squeaking bats that follow the man with someone shuffling cards.",
              "original": seq([sp, bats]), "real": seq([sp, shuf]),
              "wrong": {"wrong_sound": seq([sp, rocket]), "deleted_only": seq([sp, hole(bats)])}})
    sp = k.say("tr_f5", "Sayfayı çevir ve okumaya devam et.")
    B.append({"id": "rep_shuffle_pages", "kind": "replace",
              "instruction": "Instead of the card shuffle she opens with, I'd like 2 page turns there.",
              "original": seq([shuf, sp]), "real": seq([k.pages(2), sp]),
              "wrong": {"wrong_sound": seq([k.clunks(2), sp]), "deleted_only": seq([sp])}})
    return B


# ---------------------------------------------------------------- CLI


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path("/tmp/hv13"), "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl")) -> None:
    """Generate held-out set v13 (Trigger Rally, Scorched 3D, ManaPlus and GNOME recordings, Trigger Rally
    co-drivers and the freedesktop channel-name speaker, new espeak-ng voices): audio and items.jsonl files."""
    require([TRIGGER, FREEDESKTOP / "audio-channel-front-left.oga"]
            + [s for s, _, _ in RECORDINGS13.values() if not isinstance(s, tuple)],
            "install the Debian packages the docstring names")
    build_checked("v13", out, Kit13(out), rubric_scenes_v13, edit_bases_v13, ensure_ascii=False,
                  report=("edit_variants", "line_f0_hz", "times_checked", "clips"))


if __name__ == "__main__":
    app()
