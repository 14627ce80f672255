"""Held-out judge benchmark: instruction-audio pairs and audio edits made from material the judges were
not developed on, true by construction.

Held out from development (the tests, evals/judges/generate.py and the dev checks used flite slt/awb/kal,
espeak-ng en-us+f3, the freedesktop phone, trash-empty, busy, bell and camera-shutter sounds, sine beeps, and
the trumpet, violin, flute, alto-saxophone and drum-kit (bass drum, snare, closed hi-hat) programs). Six sets:
- v1 (judged first, then used to find failures, so no longer held out): freedesktop alarm-clock-elapsed,
  dialog-warning, screen-capture; General MIDI hand claps, cowbell, tambourine; piano, marimba, church organ,
  cello phrases; voices flite kal16 and rms, espeak-ng en-gb+f4, en-us+f2, en+m7, en-gb-scotland+f5. Its
  en-gb+f4 "female" voice measures 101-113 Hz (male band): 4 of its gender labels do not hold acoustically.
- v2 (judged once after the v1 fixes, then used to find failures, so no longer held out): harp, clarinet, trombone, xylophone, accordion and
  steel-drum phrases; maracas, bongos, triangle, crash cymbal, snare roll, whistle, wood block (drum
  channel); the freedesktop message-new-instant chime; voices espeak-ng en-us+Annie, en-029+f2,
  en-gb-x-rp+f1 (female), en-gb-x-rp+m3, en-us+m5, en-gb-scotland+m2 and flite kal16 (male), each checked
  when the set is built (median f0 by librosa pYIN inside the documented band of its label).
- v3 (built after the code was frozen at eb935c5 and judged once with it, then used to find failures, so
  a development set now): guitar, bagpipe, tuba, oboe, glockenspiel, sitar, harmonica, banjo, timpani and
  vibraphone phrases; claves, congas, ride cymbal, open hi-hat, timbales and a low-tom roll (drum channel); the
  freedesktop phone-outgoing-calling, complete and window-attention sounds; voices espeak-ng en-us+linda,
  en-us+Alicia, en-us+steph, en+anika (female) and en-us+david, en-us+travis, en+john, en-us+paul (male), each
  checked when the set is built (median f0 inside its label's band, and not the engine's default voice that an
  unknown variant falls back to: en-gb+belinda and en-gb+edward were rejected that way). Judged once with the
  code of eb935c5: rubric 86.7% / ROC-AUC 0.75, Edit_score 86.7%, effectiveness 86.7%.
- v4 (fresh, built after the code was frozen at 69becf0 and judged once; the held-out figure): French horn,
  bassoon, piccolo, kalimba, koto, harpsichord, pan flute, tubular bells, celesta, music box, pizzicato
  strings, fiddle and acoustic bass phrases; agogo, cabasa, side stick, vibraslap, long guiro, splash cymbal
  and high tom (drum channel); the freedesktop service-login, dialog-error, dialog-information and
  device-added sounds; voices espeak-ng en-us+shelby, en-us+Andrea, en-us+grandma (female) and en-us+Michael,
  en+max, en-us+robert, en-us+norbert (male), checked like v3 (en-gb+aunty measured 101 Hz and en-gb+norbert
  is the en-gb default voice: both rejected). Results (evals/judges/results/judges_heldout_v4_offline.json,
  judged once): rubric 90.9% / ROC-AUC 0.89 (holistic 50.0% / 0.58); Edit_score pairwise 80.0% (add 72.7,
  delete 100, replace 75.0), effectiveness 83.3% (add 72.7, delete 85.7, replace 91.7). Dev figures with the
  same code: v3 rubric 97.8% / 0.94, edit 93.3% / 93.3%; v2 93.5% / 0.93, edit 80.0% / 90.0%; v1 86.7% /
  0.87, edit 90.9% / 97.0%; generate.py 100% / 1.00.
- v5 (fresh, built before being judged: no judge was read or run on it while it was written): ocarina,
  shamisen, shanai, recorder, dulcimer, English horn, viola, contrabass, baritone sax, muted trumpet, clavinet,
  tinkle bell, taiko and blown-bottle phrases; the GM bird-tweet, seashore, helicopter, applause and gunshot
  effects; open cuica, sleigh bells (jingle bell), bell tree and China cymbal (drum channel); the freedesktop
  audio-volume-change, message, device-removed, service-logout and suspend-error sounds. Left out as used
  already: window-question, power-plug and network-connectivity-established are symlinks to dialog-warning
  (v1) and device-added (v4). (The theme's symlinks also make v1's dialog-warning, v3's window-attention and
  v4's dialog-error one file, and v1's screen-capture the dev camera-shutter; and this espeak-ng speaks any
  en-gb+<variant> as the plain en-gb voice, which is why v1's en-gb+f4 measures male.) Voices espeak-ng
  en+steph2 (median f0 184 Hz), en-us+steph3 (183 Hz), en-us+belinda (227 Hz; v3 only tried en-gb+belinda)
  (female) and en-us+m1 (93 Hz), en+Denis (99 Hz), en+Lee (95 Hz), en+victor (95 Hz), en+Mike (90 Hz) (male),
  checked like v3, each also unlike every other voice here. Rejected: en+Nguyen (150 Hz, in neither band),
  en+whisperf (no voiced f0), en+mike (the variant is spelled Mike: the lower-case name is the en default
  voice); not used: en+zac (351 Hz, a child's pitch) and the f1 variant (v2 had en-gb-x-rp+f1). 13 scenes (52
  rubric items, 13 positives), 11 edit bases (4 add, 3 delete, 4 replace; 43 edit items). Judged once with the
  code frozen at 748f3fd (evals/judges/results/judges_heldout_v5_v6_offline.json): rubric 82.7% / ROC-AUC 0.70
  (holistic 48.1% / 0.48); Edit_score pairwise 78.1%, effectiveness 75.0%. Then used to find failures (d8e89c9,
  4ac208b): a development set now.
- v6 (fresh, built before being judged: no judge was read or run on it while it was written; the default set):
  electric piano 1 and 2, jazz guitar, overdriven guitar, slap bass, synth bass, tremolo strings, string
  ensemble, synth strings, choir aahs, voice oohs, orchestra hit, brass section, shakuhachi, square and sawtooth
  leads, warm pad, synth drum, reverse cymbal and breath noise (GM programs 4, 5, 26, 29, 36, 38, 44, 48, 50, 52,
  53, 55, 61, 77, 80, 81, 89, 118, 119, 121); castanets (85), shaker (82), mute surdo (86), sticks (31), ride
  bell (53) and metronome click (33) on the drum channel, keys no earlier set or the dev drum kit struck (keys
  of instruments an earlier set named, e.g. low wood block, mute triangle, short guiro, mute cuica, crash 2,
  pedal hi-hat, were left out). No freedesktop sound: the other distinct ones are used, the audio-channel-*
  sounds are spoken channel names and audio-test-signal was left out. Voices espeak-ng en-us+aunty (median f0 175 Hz; v4 only tried
  en-gb+aunty, which speaks as en-gb) (female) and en-us+m4 (93 Hz), en+m6 (101 Hz), en-us+m8 (84 Hz),
  en-us+Andy (95 Hz), en+Storm (86 Hz), en-us+sandro (97 Hz) (male), checked like v5 (band, not the default
  voice) and, when the set is built, against the test-sentence audio of every other espeak-ng voice of every
  set. Rejected: en-us+kaukovalta (100 Hz, no female), en+grandpa and en+croak (no voiced f0), en+anikaRobot
  (269 Hz, but it is v3's anika variant with less flutter and an echo: the same formants and pitch, so not new
  material); not used: en-us+f1 (179 Hz; v2 had en-gb-x-rp+f1, the same measured voice), en+zac (a child's
  pitch), en+whisperf (no voiced f0, v5). So v6 has one female voice. 12 scenes (46 rubric items, 12
  positives), 11 edit bases (4 add, 3 delete, 4 replace; 43 edit items); clips 2-8 s. Judged once with the
  code frozen at 4ac208b (the held-out figure, judges_heldout_v5_v6_offline.json): rubric 73.9% / ROC-AUC 0.60
  (holistic 45.6% / 0.48); Edit_score pairwise 68.8% (add 75.0, delete 75.0, replace 58.3), effectiveness
  78.1% (75.0 / 75.0 / 83.3). Its rubric failures were then read (wordings the rules did not know: transcript
  turns, 'behind', 'on top', a possessive before the speaker), so the rubric half is a development set now;
  its edit half was not used to change the code.
- wordings: written by hand here, each with its own phrasing, not produced by the rule perturber.
- v7 and v8 (real recordings from the Debian package tuxpaint-stamps-default, festival voices and espeak-ng
  voices of other languages) are built by evals/judges/heldout_v7.py and heldout_v8.py, each judged once
  with the code frozen before it (v7 at 1166d42, v8 at 20e2100; judges_heldout_v7_offline.json,
  judges_heldout_v8_offline.json), then read for failures: development sets now.

Rubric pairs (`rubric/items.jsonl`, the format of evals/judges/run_bench.py): each scene's positive, and
hard negatives: swapped order, wrong gender, missing sound (the same instruction, the audio without that
sound), extra sound (the instruction names a sound the audio lacks), wrong count (where the scene has one).
Edit pairs (`edit/items.jsonl`, for run_edit_bench.py): per base, the real edit, a no-op (a byte copy of
the original) and wrong edits (wrong sound, wrong place, wrong target, partial, deleted only).

    .venv/bin/python evals/judges/heldout.py --set v6 --out /tmp/heldout_v6
    .venv/bin/python evals/judges/run_bench.py --data /tmp/heldout_v6/rubric --out /tmp/heldout_v6/rubric_results
    .venv/bin/python evals/judges/run_edit_bench.py --data /tmp/heldout_v6/edit --out /tmp/heldout_v6/edit_results --cache
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audiomind import audio as aio
from audiomind import synth

SR = synth.SR

# voice -> (engine, name, gender)
VOICES = {
    # set v1
    "kal16": ("flite", "kal16", "male"), "rms": ("flite", "rms", "male"),
    "gb_f4": ("espeak", "en-gb+f4", "female"), "us_f2": ("espeak", "en-us+f2", "female"),
    "m7": ("espeak", "en+m7", "male"), "sc_f5": ("espeak", "en-gb-scotland+f5", "female"),
    # set v2
    "annie": ("espeak", "en-us+Annie", "female"), "cb_f2": ("espeak", "en-029+f2", "female"),
    "rp_f1": ("espeak", "en-gb-x-rp+f1", "female"), "rp_m3": ("espeak", "en-gb-x-rp+m3", "male"),
    "us_m5": ("espeak", "en-us+m5", "male"), "sc_m2": ("espeak", "en-gb-scotland+m2", "male"),
    # set v3
    "linda": ("espeak", "en-us+linda", "female"), "alicia": ("espeak", "en-us+Alicia", "female"),
    "steph": ("espeak", "en-us+steph", "female"), "anika": ("espeak", "en+anika", "female"),
    "david": ("espeak", "en-us+david", "male"), "travis": ("espeak", "en-us+travis", "male"),
    "john": ("espeak", "en+john", "male"), "paul": ("espeak", "en-us+paul", "male"),
    # set v4
    "shelby": ("espeak", "en-us+shelby", "female"), "andrea": ("espeak", "en-us+Andrea", "female"),
    "grandma": ("espeak", "en-us+grandma", "female"),
    "michael": ("espeak", "en-us+Michael", "male"), "max": ("espeak", "en+max", "male"),
    "robert": ("espeak", "en-us+robert", "male"), "norbert": ("espeak", "en-us+norbert", "male"),
    # set v5
    "steph2": ("espeak", "en+steph2", "female"), "steph3": ("espeak", "en-us+steph3", "female"),
    "belinda": ("espeak", "en-us+belinda", "female"),
    "m1": ("espeak", "en-us+m1", "male"), "denis": ("espeak", "en+Denis", "male"), "lee": ("espeak", "en+Lee", "male"),
    "victor": ("espeak", "en+victor", "male"), "mike": ("espeak", "en+Mike", "male"),
    # set v6 (en-us / en bases: an en-gb+<variant> speaks as plain en-gb)
    "aunty": ("espeak", "en-us+aunty", "female"),
    "m4": ("espeak", "en-us+m4", "male"), "m6": ("espeak", "en+m6", "male"), "m8": ("espeak", "en-us+m8", "male"),
    "andy": ("espeak", "en-us+Andy", "male"), "storm": ("espeak", "en+Storm", "male"),
    "sandro": ("espeak", "en-us+sandro", "male"),
}
V3_VOICES = ("linda", "alicia", "steph", "anika", "david", "travis", "john", "paul")
V4_VOICES = ("shelby", "andrea", "grandma", "michael", "max", "robert", "norbert")
V5_VOICES = ("steph2", "steph3", "belinda", "m1", "denis", "lee", "victor", "mike")
V6_VOICES = ("aunty", "m4", "m6", "m8", "andy", "storm", "sandro")
# documented adult speaking-f0 bands (audiomind.reasoning.verifiers): a voice whose median f0 contradicts its
# label is no voice of that gender for a pitch-based judge, and is left out of a set (v2 checks this when it
# is built; v1 was built without the check and its en-gb+f4 voice measures about 101-113 Hz)
MALE_MAX_HZ, FEMALE_MIN_HZ = 155.0, 170.0


class Kit:
    """Makes and caches the held-out sources in one folder."""

    def __init__(self, out: Path):
        self.d = out / "src"
        self.d.mkdir(parents=True, exist_ok=True)

    def voice(self, key: str, text: str) -> np.ndarray:
        engine, name, _ = VOICES[key]
        p = self.d / f"v_{key}_{hashlib.sha1(text.encode()).hexdigest()[:10]}.wav"
        if not p.exists():
            synth.speech(text, p, voice=name, engine=engine)
        return _load(p)

    def sound(self, name: str) -> np.ndarray:
        p = self.d / f"s_{name}.wav"
        if not p.exists():
            if name == "alarm":
                y = _load(synth.sound_file("alarm-clock-elapsed", self.d / "raw_alarm.wav"))[: int(2.5 * SR)]
                aio.write_wav(p, y, SR)
            elif name == "warning":
                synth.sound_file("dialog-warning", p)
            elif name == "shutter":
                synth.sound_file("screen-capture", p)
            elif name == "claps4":
                synth.midi_track([(0.1 + 0.35 * i, 0.1, 39, 120) for i in range(4)], p, channel=9)
            elif name == "cowbell":
                synth.midi_track([(0.1 + 0.4 * i, 0.2, 56, 120) for i in range(3)], p, channel=9)
            elif name == "tambourine":
                synth.midi_track([(0.1 + 0.25 * i, 0.15, 54, 110) for i in range(6)], p, channel=9)
            elif name == "piano":
                synth.melody(["E4", "G4", "C5", "B4", "G4", "E4"], p, note_s=0.3, lead_s=0.1, program=0)
            elif name == "marimba":
                synth.melody(["C5", "E5", "G5", "E5", "C5", "G4"], p, note_s=0.25, lead_s=0.1, program=12)
            elif name == "organ":
                synth.triads(["C", "F", "G"], p, chord_s=1.0, lead_s=0.1, program=19)
            elif name == "cello_slow":
                synth.melody(["C3", "E3", "G3", "E3", "D3", "C3"], p, note_s=0.9, lead_s=0.1, program=42)
            elif name in MELODIC:
                prog, notes, note_s = MELODIC[name]
                synth.melody(notes, p, note_s=note_s, lead_s=0.1, program=prog)
            elif name in HITS:
                key, n, gap_s = HITS[name]
                synth.midi_track([(0.1 + gap_s * i, 0.2, key, 120) for i in range(n)], p, channel=9)
            elif name in STRIKES:  # set v6: one pitch of a melodic program struck n times
                prog, pitch, n, gap_s, dur_s = STRIKES[name]
                synth.midi_track([(0.1 + gap_s * i, dur_s, pitch, 120) for i in range(n)], p, program=prog)
            elif name in RINGS:  # set v5: one drum-channel stroke left to ring for hold_s
                key, hold_s = RINGS[name]
                synth.midi_track([(0.1, hold_s, key, 120)], p, channel=9)
            elif name == "chime":
                synth.sound_file("message-new-instant", p)
            elif name == "ringout":
                y = _load(synth.sound_file("phone-outgoing-calling", self.d / "raw_ringout.wav"))[: int(3.0 * SR)]
                aio.write_wav(p, y, SR)
            elif name == "complete":
                synth.sound_file("complete", p)
            elif name == "attention":
                synth.sound_file("window-attention", p)
            elif name in SOUND_FILES:
                synth.sound_file(SOUND_FILES[name], p)
            else:
                raise KeyError(name)
        return _load(p)

    def check_voice(self, key: str) -> tuple[bool, float | None]:
        """(does the voice's median f0 fit its label's band, the median f0) over a test sentence (librosa pYIN)."""
        import librosa

        y = self.voice(key, "the quick brown fox jumps over the lazy dog")
        f0, _, _ = librosa.pyin(y.astype(np.float64), fmin=60, fmax=400, sr=SR)
        f0 = f0[~np.isnan(f0)]
        hz = float(np.median(f0)) if len(f0) else None
        gender = VOICES[key][2]
        ok = hz is not None and (hz <= MALE_MAX_HZ if gender == "male" else hz >= FEMALE_MIN_HZ)
        engine, name, _ = VOICES[key]
        if ok and engine == "espeak":  # an unknown variant falls back to the language's default voice: no new voice
            lang = name.split("+")[0]
            d = self.d / f"default_{lang}.wav"
            if not d.exists():
                synth.speech("the quick brown fox jumps over the lazy dog", d, voice=lang, engine="espeak")
            dv = _load(d)
            ok = not (len(dv) == len(y) and np.allclose(dv, y))
        return ok, hz


MELODIC = {  # name -> (General MIDI program, notes, note length s)
    "harp": (46, ["C5", "E5", "G5", "C6", "G5", "E5"], 0.25), "clarinet_slow": (71, ["G4", "E4", "C4", "D4"], 0.8),
    "trombone": (57, ["C3", "E3", "G3", "C4", "G3"], 0.35), "xylophone": (13, ["C5", "D5", "E5", "G5", "E5", "C5"], 0.2),
    "accordion": (21, ["C4", "E4", "G4", "E4", "F4", "D4"], 0.35), "steel_drums": (114, ["E5", "G5", "A5", "G5", "E5"], 0.3),
    "clarinet": (71, ["C4", "E4", "G4", "E4", "C4"], 0.35),
    # set v3
    "guitar": (24, ["E3", "G3", "B3", "E4", "B3", "G3"], 0.3), "bagpipe": (109, ["A4", "B4", "C#5", "E5", "C#5"], 0.4),
    "tuba": (58, ["C2", "E2", "G2", "E2", "C2"], 0.45), "oboe": (68, ["E4", "G4", "A4", "G4", "E4"], 0.4),
    "glockenspiel": (9, ["C6", "E6", "G6", "C7", "G6", "E6"], 0.2), "sitar": (104, ["D4", "F4", "G4", "A4", "G4"], 0.4),
    "harmonica": (22, ["C4", "E4", "G4", "E4", "D4"], 0.4), "vibraphone_slow": (11, ["F4", "A4", "C5", "A4"], 0.8),
    "banjo": (105, ["G4", "B4", "D5", "B4", "G4", "D5"], 0.2), "timpani": (47, ["C2"] * 8, 0.12),
    "vibraphone": (11, ["F4", "A4", "C5", "A4", "F4"], 0.35),
    # set v4
    "celesta": (8, ["E5", "G5", "B5", "E6", "B5"], 0.25), "music_box": (10, ["C6", "E6", "G6", "E6", "C6"], 0.3),
    "tubular_bells": (14, ["C5", "G4", "E5", "C5"], 0.6), "harpsichord": (6, ["D4", "F4", "A4", "D5", "A4", "F4"], 0.25),
    "pizzicato": (45, ["G3", "B3", "D4", "G4", "D4"], 0.3), "french_horn": (60, ["F3", "A3", "C4", "A3", "F3"], 0.45),
    "bassoon": (70, ["C3", "D3", "E3", "G3", "E3"], 0.4), "piccolo": (72, ["C6", "D6", "E6", "G6", "E6"], 0.2),
    "pan_flute": (75, ["A4", "C5", "D5", "E5", "D5"], 0.4), "kalimba": (108, ["C5", "E5", "G5", "E5", "D5", "C5"], 0.3),
    "koto": (107, ["E4", "F4", "A4", "B4", "A4"], 0.35), "fiddle": (110, ["D4", "E4", "F#4", "A4", "F#4"], 0.3),
    "acoustic_bass": (32, ["C2", "G2", "A2", "F2", "C2", "G2"], 0.4),
    # set v5
    "ocarina": (79, ["G5", "A5", "B5", "D6", "B5", "G5"], 0.3), "shamisen": (106, ["E4", "A4", "B4", "E5", "B4", "A4"], 0.3),
    "shanai": (111, ["D5", "E5", "F5", "A5", "G5", "F5"], 0.35), "recorder": (74, ["C5", "D5", "E5", "F5", "G5", "E5"], 0.3),
    "dulcimer": (15, ["D4", "A4", "D5", "F#5", "D5", "A4"], 0.25),
    "english_horn": (69, ["A3", "C4", "E4", "D4", "C4", "A3"], 0.6), "viola": (41, ["C4", "D4", "E4", "G4", "E4", "D4"], 0.4),
    "contrabass": (43, ["E2", "G2", "A2", "B2", "A2", "G2"], 0.45),
    "bari_sax": (67, ["C3", "D#3", "F3", "G3", "F3", "D#3"], 0.35), "muted_trumpet": (59, ["G4", "C5", "E5", "G5", "E5"], 0.35),
    "clavinet": (7, ["C4", "C4", "D#4", "F4", "G4", "F4", "D#4"], 0.2), "tinkle_bell": (112, ["C6", "G6", "E6", "C7", "G6"], 0.3),
    "taiko4": (116, ["C3"] * 4, 0.6), "bottle": (76, ["A4", "C5", "E5", "C5", "A4"], 0.45),
    "birds": (123, ["C5", "E5", "C5", "G5", "E5", "C5"], 0.6), "seashore": (122, ["C4"], 4.5),
    "helicopter": (125, ["C4"], 3.0), "applause": (126, ["C4"], 2.5), "gunshot": (127, ["C4"], 0.8),
    # set v6
    "epiano": (4, ["E4", "G#4", "B4", "D#5", "C#5", "B4"], 0.35), "epiano2": (5, ["A4", "C5", "E5", "G5", "E5"], 0.35),
    "jazz_guitar": (26, ["D3", "F3", "A3", "C4", "B3", "A3"], 0.3),
    "overdrive_guitar": (29, ["E3", "E3", "G3", "A3", "E3", "D3"], 0.25),
    "synth_bass": (38, ["C2", "C2", "D#2", "F2", "G2", "F2", "D#2", "C2"], 0.25),
    "slap_bass": (36, ["E2", "G2", "A2", "E2", "B2", "A2"], 0.25),
    "tremolo_strings": (44, ["D4", "D#4", "D4", "C#4"], 0.8), "strings": (48, ["G3", "B3", "D4", "G4", "D4"], 0.5),
    "synth_strings": (50, ["F3", "A3", "C4", "F4"], 0.6), "choir": (52, ["C4", "E4", "G4", "E4"], 0.75),
    "oohs": (53, ["A3", "C4", "E4", "C4"], 0.6), "brass": (61, ["C4", "E4", "G4", "C5", "G4"], 0.35),
    "shakuhachi": (77, ["D4", "F4", "G4", "A4", "G4", "D4"], 0.55), "square_lead": (80, ["C5", "E5", "G5", "C6", "G5", "C6"], 0.2),
    "saw_lead": (81, ["A4", "C5", "D5", "E5", "D5", "C5"], 0.3), "warm_pad": (89, ["C3", "G3", "E4"], 1.5),
    "synth_drum": (118, ["C3", "C3", "G2", "C3"], 0.35), "reverse_cymbal": (119, ["C4"], 2.0),
    "breath": (121, ["C5", "E5", "D5"], 0.5),
}
STRIKES = {"orch_hit2": (55, "C4", 2, 0.8, 0.4)}  # set v6: name -> (program, pitch, strikes, seconds between, hold s)
HITS = {  # name -> (General MIDI drum key, strikes, seconds between)
    "triangle3": (81, 3, 0.6), "maracas": (70, 8, 0.2), "bongos": (60, 6, 0.25), "crash": (49, 1, 0.5),
    "snare_roll": (38, 12, 0.08), "whistle": (72, 1, 0.5), "woodblock": (76, 4, 0.3),
    # set v3
    "claves4": (75, 4, 0.45), "congas": (63, 6, 0.25), "ride4": (51, 4, 0.5), "hihat_open": (46, 4, 0.35),
    "timbales": (65, 5, 0.25), "tom_roll": (41, 14, 0.07),
    # set v4
    "cabasa": (69, 6, 0.25), "vibraslap": (58, 2, 0.8), "agogo4": (67, 4, 0.4), "guiro": (74, 3, 0.5),
    "splash": (55, 1, 0.5), "side_stick3": (37, 3, 0.45), "high_tom": (50, 5, 0.3),
    # set v5
    "cuica": (79, 4, 0.4), "jingle": (83, 6, 0.2),
    # set v6
    "castanets5": (85, 5, 0.3), "shaker": (82, 8, 0.2), "surdo4": (86, 4, 0.5), "sticks4": (31, 4, 0.45),
    "ride_bell3": (53, 3, 0.6), "ride_bell1": (53, 1, 0.6), "metronome4": (33, 4, 0.5),
}
RINGS = {"belltree": (84, 1.5), "china_cymbal": (52, 1.2)}  # set v5: name -> (General MIDI drum key, hold s)
SOUND_FILES = {  # freedesktop theme sounds (sets v4 and v5)
    "info": "dialog-information", "login": "service-login", "device": "device-added", "error": "dialog-error",
    # set v5 (window-question, power-plug and network-connectivity-established are links to files earlier sets
    # used; power-unplug and network-connectivity-lost are links to device-removed)
    "tick": "audio-volume-change", "unplug": "device-removed", "pop": "message", "logout": "service-logout",
    "beep_err": "suspend-error",
}


def _load(p: Path | str) -> np.ndarray:
    return aio.load(p, sr=SR, mono=True).astype(np.float32)


def seq(parts: list[np.ndarray], gap_s: float = 0.4, lead_s: float = 0.2, tail_s: float = 0.3) -> np.ndarray:
    gap = np.zeros(int(gap_s * SR), np.float32)
    out = [np.zeros(int(lead_s * SR), np.float32)]
    for i, p in enumerate(parts):
        out += ([gap] if i else []) + [p]
    out.append(np.zeros(int(tail_s * SR), np.float32))
    return np.concatenate(out)


def overlay(base: np.ndarray, other: np.ndarray, at_s: float, gain_db: float) -> np.ndarray:
    a = int(at_s * SR)
    n = max(len(base), a + len(other))
    y = np.zeros(n, np.float32)
    y[: len(base)] += base
    y[a: a + len(other)] += other * np.float32(10 ** (gain_db / 20))
    return y


def write(path: Path, y: np.ndarray) -> str:
    peak = float(np.max(np.abs(y))) or 1.0
    return str(aio.write_wav(path, (y / max(peak, 1.0) * 0.95 if peak > 0.95 else y).astype(np.float32), SR))


# ---------------------------------------------------------------- rubric scenes (hand-written wordings)


def rubric_scenes(k: Kit) -> list[dict]:
    """Each scene: audio (positive), audio without one sound (for 'missing sound'), and the wordings."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    museum = k.voice("kal16", "the museum closes in ten minutes")
    alarm = k.sound("alarm")
    scene("museum_alarm", seq([museum, alarm]),
          "First a man announces 'the museum closes in ten minutes', and afterwards an alarm clock goes off.",
          {"order": "An alarm clock goes off first, and afterwards a man announces 'the museum closes in ten minutes'.",
           "gender": "First a woman announces 'the museum closes in ten minutes', and afterwards an alarm clock goes off.",
           "extra": "First a man announces 'the museum closes in ten minutes', an alarm clock goes off, and finally a "
                    "dog starts barking."},
          seq([museum]))
    table = k.voice("gb_f4", "your table is ready")
    piano = k.sound("piano")
    scene("table_piano", seq([table, piano]),
          "A woman tells us 'your table is ready' before a piano melody starts.",
          {"order": "A piano melody plays before a woman tells us 'your table is ready'.",
           "gender": "A man tells us 'your table is ready' before a piano melody starts.",
           "extra": "A woman tells us 'your table is ready' before a piano melody starts, with rain falling throughout."},
          seq([table]))
    thanks = k.voice("rms", "thank you all for coming")
    claps = k.sound("claps4")
    scene("claps_thanks", seq([claps, thanks]),
          "Four hand claps are heard, after which a man says 'thank you all for coming'.",
          {"order": "A man says 'thank you all for coming', after which four hand claps are heard.",
           "gender": "Four hand claps are heard, after which a woman says 'thank you all for coming'.",
           "count": "Seven hand claps are heard, after which a man says 'thank you all for coming'."},
          seq([thanks]))
    bus = k.voice("us_f2", "the bus is late again")
    cowbell = k.sound("cowbell")
    scene("cowbell_bus", seq([cowbell, bus]),
          "A cowbell sounds and then a female voice remarks 'the bus is late again'.",
          {"order": "A female voice remarks 'the bus is late again' and then a cowbell sounds.",
           "gender": "A cowbell sounds and then a male voice remarks 'the bus is late again'.",
           "extra": "A cowbell sounds, a telephone rings, and then a female voice remarks 'the bus is late again'."},
          seq([bus]))
    gap = k.voice("m7", "please mind the gap")
    organ = k.sound("organ")
    scene("organ_gap", overlay(seq([gap], lead_s=0.6), organ, 0.0, -10.0),
          "Over a church organ, a man says 'please mind the gap'.",
          {"gender": "Over a church organ, a woman says 'please mind the gap'.",
           "extra": "Over a church organ, a man says 'please mind the gap' while a baby cries."},
          seq([gap], lead_s=0.6))
    lib = k.voice("sc_f5", "welcome to the library")
    reply = k.voice("kal16", "thank you very much")
    scene("library_dialogue", seq([lib, reply], gap_s=0.6),
          "A woman greets someone with 'welcome to the library', and a man replies 'thank you very much'.",
          {"gender": "A man greets someone with 'welcome to the library', and a woman replies 'thank you very much'.",
           "extra": "A woman greets someone with 'welcome to the library', a door slams, and a man replies 'thank you "
                    "very much'."},
          None)
    tamb = k.sound("tambourine")
    scene("tambourine_alarm", seq([tamb, alarm], gap_s=0.5),
          "A tambourine is shaken, then an alarm clock rings.",
          {"order": "An alarm clock rings, then a tambourine is shaken.",
           "extra": "A tambourine is shaken, then an alarm clock rings, then someone knocks on a door."},
          seq([tamb]))
    meeting = k.voice("rms", "the meeting starts now")
    marimba = k.sound("marimba")
    scene("marimba_meeting", seq([marimba, meeting]),
          "A short marimba tune plays; afterwards a man's voice says 'the meeting starts now'.",
          {"order": "A man's voice says 'the meeting starts now'; afterwards a short marimba tune plays.",
           "gender": "A short marimba tune plays; afterwards a woman's voice says 'the meeting starts now'."},
          seq([meeting]))
    smile = k.voice("gb_f4", "smile for the picture")
    shutter = k.sound("shutter")
    scene("smile_shutter", seq([smile, shutter]),
          "After a woman says 'smile for the picture', a camera shutter clicks.",
          {"order": "Before a woman says 'smile for the picture', a camera shutter clicks.",
           "gender": "After a man says 'smile for the picture', a camera shutter clicks."},
          seq([smile]))
    scene("alarm_alone", seq([alarm]), "An alarm clock is ringing.",
          {"extra": "An alarm clock is ringing and a cat meows."}, None)
    scene("cello_slow", seq([k.sound("cello_slow")]), "A cello plays a slow, gentle melody.",
          {"extra": "A cello plays a slow, gentle melody while a crowd applauds."}, None)
    warn = k.sound("warning")
    scene("warning_three", seq([warn, warn, warn], gap_s=0.5), "A warning chime sounds three times.",
          {"count": "A warning chime sounds five times."}, None)
    return S


def rubric_scenes_v2(k: Kit) -> list[dict]:
    """Set v2: other sounds (harp, clarinet, trombone, xylophone, accordion, maracas, bongos, triangle, crash
    cymbal, snare roll, whistle, a notification chime), other voices, other wordings."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    lib = k.voice("annie", "the library opens at eight")
    harp = k.sound("harp")
    scene("harp_library", seq([harp, lib]),
          "You can hear a harp, and once it stops a woman says 'the library opens at eight'.",
          {"order": "A woman says 'the library opens at eight', and once she stops you can hear a harp.",
           "gender": "You can hear a harp, and once it stops a man says 'the library opens at eight'.",
           "extra": "You can hear a harp and a car horn, and then a woman says 'the library opens at eight'."},
          seq([lib]))
    seat = k.voice("rp_m3", "please take a seat")
    tri = k.sound("triangle3")
    scene("seat_triangle", seq([seat, tri]),
          "A man politely says 'please take a seat'; a triangle is then struck three times.",
          {"order": "A triangle is struck three times; a man then politely says 'please take a seat'.",
           "gender": "A woman politely says 'please take a seat'; a triangle is then struck three times.",
           "count": "A man politely says 'please take a seat'; a triangle is then struck five times."},
          seq([seat]))
    song = k.voice("cb_f2", "that was the last song")
    tromb = k.sound("trombone")
    scene("trombone_song", seq([tromb, song]),
          "A trombone melody comes first and a female speaker later says 'that was the last song'.",
          {"order": "A female speaker says 'that was the last song' and a trombone melody comes later.",
           "gender": "A trombone melody comes first and a male speaker later says 'that was the last song'.",
           "extra": "A trombone melody and a ringing phone come first, and a female speaker later says 'that was "
                    "the last song'."},
          seq([song]))
    live = k.voice("us_m5", "we are live in five minutes")
    mar = k.sound("maracas")
    scene("maracas_live", overlay(seq([live], lead_s=0.4), mar, 0.0, -8.0),
          "While maracas shake in the background, a man announces 'we are live in five minutes'.",
          {"gender": "While maracas shake in the background, a woman announces 'we are live in five minutes'.",
           "extra": "While maracas shake and a dog barks in the background, a man announces 'we are live in five "
                    "minutes'."},
          seq([live], lead_s=0.4))
    ask = k.voice("sc_m2", "is anyone there")
    ans = k.voice("rp_f1", "yes, over here")
    scene("anyone_there", seq([ask, ans], gap_s=0.6),
          "A man asks 'is anyone there' and a woman answers 'yes, over here'.",
          {"gender": "A woman asks 'is anyone there' and a man answers 'yes, over here'.",
           "extra": "A man asks 'is anyone there', a door creaks, and a woman answers 'yes, over here'."},
          None)
    xylo, crash = k.sound("xylophone"), k.sound("crash")
    scene("xylophone_crash", seq([xylo, crash]), "A xylophone tune is followed by a crash cymbal.",
          {"order": "A crash cymbal is followed by a xylophone tune.",
           "extra": "A xylophone tune is followed by a crash cymbal and then by applause."},
          seq([xylo]))
    dinner = k.voice("annie", "dinner is ready")
    acc = k.sound("accordion")
    scene("dinner_accordion", seq([dinner, acc]), "Accordion music plays after a woman calls out 'dinner is ready'.",
          {"order": "Accordion music plays before a woman calls out 'dinner is ready'.",
           "gender": "Accordion music plays after a man calls out 'dinner is ready'."},
          seq([dinner]))
    scene("bongos_alone", seq([k.sound("bongos")]), "Somebody plays the bongos.",
          {"extra": "Somebody plays the bongos while a siren wails."}, None)
    scene("clarinet_slow", seq([k.sound("clarinet_slow")]), "A slow clarinet melody.",
          {"extra": "A slow clarinet melody with thunder rumbling."}, None)
    msg = k.voice("kal16", "you have a new message")
    chime = k.sound("chime")
    scene("chime_message", seq([chime, msg]), "A notification chime, then a man's voice: 'you have a new message'.",
          {"order": "A man's voice: 'you have a new message', then a notification chime.",
           "gender": "A notification chime, then a woman's voice: 'you have a new message'."},
          seq([msg]))
    up = k.voice("cb_f2", "time is up")
    whistle = k.sound("whistle")
    scene("whistle_time", seq([whistle, up]), "A whistle blows before a woman shouts 'time is up'.",
          {"order": "A woman shouts 'time is up' before a whistle blows.",
           "gender": "A whistle blows before a man shouts 'time is up'."},
          seq([up]))
    ladies = k.voice("rp_m3", "ladies and gentlemen")
    snare = k.sound("snare_roll")
    scene("snare_ladies", seq([snare, ladies]), "After a snare drum roll, a man begins: 'ladies and gentlemen'.",
          {"order": "Before a snare drum roll, a man begins: 'ladies and gentlemen'.",
           "extra": "After a snare drum roll and a gunshot, a man begins: 'ladies and gentlemen'."},
          seq([ladies]))
    return S


def rubric_scenes_v3(k: Kit) -> list[dict]:
    """Set v3 (fresh, judged once after the code was frozen): guitar, bagpipe, tuba, oboe, glockenspiel, sitar,
    harmonica and vibraphone phrases; claves, congas and ride cymbal (drum channel); the freedesktop
    phone-outgoing-calling and complete sounds; espeak-ng voices en-us+linda, en-us+Alicia, en-us+steph, en+anika
    (female) and en-us+david, en-us+travis, en+john, en-us+paul (male); wordings written before the rules were run on them."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    gal = k.voice("linda", "the gallery is on your left")
    guitar = k.sound("guitar")
    scene("guitar_gallery", seq([guitar, gal]),
          "Someone strums a guitar, and when the music ends a woman remarks 'the gallery is on your left'.",
          {"order": "A woman remarks 'the gallery is on your left', and when she is done someone strums a guitar.",
           "gender": "Someone strums a guitar, and when the music ends a man remarks 'the gallery is on your left'.",
           "extra": "Someone strums a guitar while a baby is crying, and then a woman remarks 'the gallery is on "
                    "your left'."},
          seq([gal]))
    games = k.voice("david", "welcome to the highland games")
    pipes = k.sound("bagpipe")
    scene("bagpipe_games", seq([games, pipes]),
          "A male voice says 'welcome to the highland games', followed by the sound of bagpipes.",
          {"order": "The sound of bagpipes, followed by a male voice saying 'welcome to the highland games'.",
           "gender": "A female voice says 'welcome to the highland games', followed by the sound of bagpipes.",
           "extra": "A male voice says 'welcome to the highland games', followed by bagpipes and a horse neighing."},
          seq([games]))
    scene("claves_four", seq([k.sound("claves4")]), "Claves are tapped four times.",
          {"count": "Claves are tapped seven times.", "extra": "Claves are tapped four times, then a cat meows."},
          None)
    tuba, oboe = k.sound("tuba"), k.sound("oboe")
    scene("tuba_oboe", seq([tuba, oboe]), "A tuba plays a low tune, then an oboe takes over.",
          {"order": "An oboe plays first, then a tuba takes over with a low tune.",
           "extra": "A tuba plays a low tune, then an oboe takes over, and a drum roll closes it."},
          seq([tuba]))
    salt = k.voice("steph", "could you pass the salt")
    here = k.voice("travis", "here you go")
    scene("salt_dialogue", seq([salt, here], gap_s=0.6),
          "A woman asks 'could you pass the salt' and a man replies 'here you go'.",
          {"gender": "A man asks 'could you pass the salt' and a woman replies 'here you go'.",
           "extra": "A woman asks 'could you pass the salt', glass shatters, and a man replies 'here you go'."},
          None)
    scene("glockenspiel_alone", seq([k.sound("glockenspiel")]), "A glockenspiel plays a bright little melody.",
          {"extra": "A glockenspiel plays a bright little melody over heavy rain."}, None)
    shop = k.voice("john", "the shop closes at six")
    sitar = k.sound("sitar")
    scene("sitar_shop", overlay(seq([shop], lead_s=0.5), sitar, 0.0, -9.0),
          "A man says 'the shop closes at six' with a sitar playing underneath.",
          {"gender": "A woman says 'the shop closes at six' with a sitar playing underneath.",
           "extra": "A man says 'the shop closes at six' with a sitar and a barking dog underneath."},
          seq([shop], lead_s=0.5))
    hello = k.voice("anika", "hello, who is this")
    ring = k.sound("ringout")
    scene("ringout_hello", seq([ring, hello]), "A phone line rings out, and then a woman answers 'hello, who is this'.",
          {"order": "A woman says 'hello, who is this', and then a phone line rings out.",
           "gender": "A phone line rings out, and then a man answers 'hello, who is this'."},
          seq([hello]))
    congas, harm = k.sound("congas"), k.sound("harmonica")
    scene("congas_harmonica", seq([congas, harm]), "Conga drums are played, followed by a harmonica.",
          {"order": "A harmonica is played, followed by conga drums.",
           "extra": "Conga drums are played, followed by a harmonica and a siren."},
          seq([congas]))
    dl = k.voice("paul", "your download has finished")
    done = k.sound("complete")
    scene("complete_download", seq([done, dl]), "After a short chime, a man announces 'your download has finished'.",
          {"order": "Before a short chime, a man announces 'your download has finished'.",
           "gender": "After a short chime, a woman announces 'your download has finished'."},
          seq([dl]))
    show = k.voice("alicia", "the show is about to begin")
    ride = k.sound("ride4")
    scene("show_ride", seq([show, ride]),
          "A woman announces 'the show is about to begin' and then a cymbal is tapped four times.",
          {"order": "A cymbal is tapped four times and then a woman announces 'the show is about to begin'.",
           "gender": "A man announces 'the show is about to begin' and then a cymbal is tapped four times.",
           "count": "A woman announces 'the show is about to begin' and then a cymbal is tapped two times."},
          seq([show]))
    scene("vibraphone_slow", seq([k.sound("vibraphone_slow")]), "A slow, soft vibraphone melody.",
          {"extra": "A slow, soft vibraphone melody with birds chirping."}, None)
    return S


def rubric_scenes_v4(k: Kit) -> list[dict]:
    """Set v4 (fresh, judged once after the code was frozen): French horn, bassoon, piccolo, kalimba, koto,
    harpsichord, pan flute and tubular-bells phrases; agogo, cabasa and side-stick strokes (drum channel); the
    freedesktop service-login and dialog-error sounds; espeak-ng voices en-us+shelby, en-us+Andrea,
    en-us+grandma (female) and en-us+Michael, en+max, en-us+robert, en-us+norbert (male), each checked when the
    set is built; wordings written before the rules were run on them."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    ferry = k.voice("shelby", "the ferry leaves from pier three")
    horn = k.sound("french_horn")
    scene("ferry_horn", seq([horn, ferry]),
          "A French horn plays a short fanfare, and after that a woman says 'the ferry leaves from pier three'.",
          {"order": "A woman says 'the ferry leaves from pier three', and after that a French horn plays a short fanfare.",
           "gender": "A French horn plays a short fanfare, and after that a man says 'the ferry leaves from pier three'.",
           "extra": "A French horn plays a short fanfare while a rooster crows, and after that a woman says 'the ferry "
                    "leaves from pier three'."},
          seq([ferry]))
    scene("agogo_four", seq([k.sound("agogo4")]), "An agogo bell is struck four times.",
          {"count": "An agogo bell is struck six times.",
           "extra": "An agogo bell is struck four times and a motorcycle passes by."}, None)
    fc = k.voice("michael", "tomorrow will be sunny and warm")
    kal = k.sound("kalimba")
    scene("kalimba_forecast", overlay(seq([fc], lead_s=0.5), kal, 0.0, -9.0),
          "A man reads the forecast, 'tomorrow will be sunny and warm', over a gentle kalimba tune.",
          {"gender": "A woman reads the forecast, 'tomorrow will be sunny and warm', over a gentle kalimba tune.",
           "extra": "A man reads the forecast, 'tomorrow will be sunny and warm', over a gentle kalimba tune and the "
                    "sound of waves."},
          seq([fc], lead_s=0.5))
    bsn, picc = k.sound("bassoon"), k.sound("piccolo")
    scene("bassoon_piccolo", seq([bsn, picc]), "A bassoon starts with a low line and a piccolo answers it up high.",
          {"order": "A piccolo starts up high and a bassoon answers it with a low line.",
           "extra": "A bassoon starts with a low line, a piccolo answers it up high, and a dog growls at the end."},
          seq([bsn]))
    keys = k.voice("andrea", "have you seen my keys")
    table = k.voice("max", "they are on the table")
    scene("keys_dialogue", seq([keys, table], gap_s=0.6),
          "A woman wonders aloud 'have you seen my keys', and a man tells her 'they are on the table'.",
          {"gender": "A man wonders aloud 'have you seen my keys', and a woman tells him 'they are on the table'.",
           "extra": "A woman wonders aloud 'have you seen my keys', a kettle whistles, and a man tells her 'they are "
                    "on the table'."},
          None)
    back = k.voice("robert", "welcome back to your desktop")
    login = k.sound("login")
    scene("login_welcome", seq([login, back]),
          "The system plays its login sound, then a male voice says 'welcome back to your desktop'.",
          {"order": "A male voice says 'welcome back to your desktop', then the system plays its login sound.",
           "gender": "The system plays its login sound, then a female voice says 'welcome back to your desktop'."},
          seq([back]))
    scene("harpsichord_alone", seq([k.sound("harpsichord")]), "Someone is playing a baroque piece on the harpsichord.",
          {"extra": "Someone is playing a baroque piece on the harpsichord during a thunderstorm."}, None)
    train = k.voice("grandma", "the train to the airport is delayed")
    cab = k.sound("cabasa")
    scene("cabasa_train", seq([train, cab]),
          "A woman reports 'the train to the airport is delayed'; a cabasa is shaken once she has finished.",
          {"order": "A cabasa is shaken; once it has finished a woman reports 'the train to the airport is delayed'.",
           "gender": "A man reports 'the train to the airport is delayed'; a cabasa is shaken once he has finished."},
          seq([train]))
    noon = k.voice("norbert", "it is now twelve o'clock")
    bells = k.sound("tubular_bells")
    scene("bells_noon", seq([bells, noon]),
          "Tubular bells ring out, and then a man's voice declares 'it is now twelve o'clock'.",
          {"order": "A man's voice declares 'it is now twelve o'clock', and then tubular bells ring out.",
           "gender": "Tubular bells ring out, and then a woman's voice declares 'it is now twelve o'clock'.",
           "extra": "Tubular bells ring out, a crowd cheers, and then a man's voice declares 'it is now twelve "
                    "o'clock'."},
          seq([noon]))
    sticks, koto = k.sound("side_stick3"), k.sound("koto")
    scene("rimclicks_koto", seq([sticks, koto]), "Three rim clicks, then a koto melody.",
          {"count": "Five rim clicks, then a koto melody.", "order": "A koto melody, then three rim clicks."},
          seq([koto]))
    sorry = k.voice("shelby", "sorry, something went wrong")
    err = k.sound("error")
    scene("error_sorry", seq([err, sorry]),
          "An error sound comes first, followed by a woman apologising: 'sorry, something went wrong'.",
          {"order": "A woman apologises, 'sorry, something went wrong', followed by an error sound.",
           "gender": "An error sound comes first, followed by a man apologising: 'sorry, something went wrong'."},
          seq([sorry]))
    scene("pan_flute_alone", seq([k.sound("pan_flute")]), "A breathy pan flute melody, nothing else.",
          {"extra": "A breathy pan flute melody with a cat purring nearby."}, None)
    return S


def rubric_scenes_v5(k: Kit) -> list[dict]:
    """Set v5 (fresh, built before being judged): ocarina, recorder, viola, English horn, shanai and taiko
    phrases; the bird-tweet, seashore, helicopter, applause and gunshot effects; the freedesktop
    audio-volume-change, message, device-removed and service-logout sounds; espeak-ng voices en+steph2,
    en-us+steph3, en-us+belinda (female) and en-us+m1, en+Denis, en+Lee, en+victor, en+Mike (male), each checked
    when the set is built; wordings written by hand in new phrasings."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    trail = k.voice("lee", "the trail gets steep after the old bridge")
    ocarina = k.sound("ocarina")
    scene("ocarina_trail", seq([ocarina, trail]),
          "Ocarina notes drift by before a male hiker cautions: 'the trail gets steep after the old bridge'.",
          {"order": "A male hiker cautions 'the trail gets steep after the old bridge' before ocarina notes drift by.",
           "gender": "Ocarina notes drift by before a female hiker cautions: 'the trail gets steep after the old "
                     "bridge'.",
           "extra": "Ocarina notes drift by, a bicycle bell rings twice, and a male hiker cautions: 'the trail gets "
                    "steep after the old bridge'."},
          seq([trail]))
    water = k.voice("belinda", "I could sit by the water all afternoon")
    sea = k.sound("seashore")
    scene("waves_afternoon", overlay(seq([water], lead_s=0.5), sea, 0.0, -8.0),
          "Over the steady wash of waves, a woman remarks, 'I could sit by the water all afternoon'.",
          {"gender": "Over the steady wash of waves, a man remarks, 'I could sit by the water all afternoon'.",
           "extra": "Over the steady wash of waves and a distant foghorn, a woman remarks, 'I could sit by the water "
                    "all afternoon'."},
          seq([water], lead_s=0.5))
    visual = k.voice("victor", "we have a visual on the vehicle")
    heli = k.sound("helicopter")
    scene("helicopter_visual", seq([heli, visual]),
          "The chop of helicopter blades comes first; after it, a man reports 'we have a visual on the vehicle'.",
          {"order": "A man reports 'we have a visual on the vehicle'; after that comes the chop of helicopter blades.",
           "gender": "The chop of helicopter blades comes first; after it, a woman reports 'we have a visual on the "
                     "vehicle'."},
          seq([visual]))
    tickets = k.voice("steph3", "did you remember the tickets")
    pocket = k.voice("denis", "they are in my coat pocket")
    scene("tickets_dialogue", seq([tickets, pocket], gap_s=0.6),
          "'Did you remember the tickets?' a woman asks, and a man replies, 'they are in my coat pocket'.",
          {"gender": "'Did you remember the tickets?' a man asks, and a woman replies, 'they are in my coat pocket'.",
           "extra": "'Did you remember the tickets?' a woman asks over the rumble of a passing train, and a man "
                    "replies, 'they are in my coat pocket'."},
          None)
    kind = k.voice("mike", "wow, thank you, you are too kind")
    applause = k.sound("applause")
    scene("applause_kind", seq([applause, kind]),
          "A room full of people applauds; when it stops, a man says 'wow, thank you, you are too kind'.",
          {"order": "A man says 'wow, thank you, you are too kind', and a room full of people applauds afterwards.",
           "gender": "A room full of people applauds; when it stops, a woman says 'wow, thank you, you are too kind'."},
          seq([kind]))
    marks = k.voice("steph2", "runners, take your marks")
    shot = k.sound("gunshot")
    scene("starting_pistol", seq([marks, shot]),
          "'Runners, take your marks,' calls a woman, and a single shot rings out.",
          {"order": "A single shot rings out before a woman calls 'runners, take your marks'.",
           "gender": "'Runners, take your marks,' calls a man, and a single shot rings out.",
           "count": "'Runners, take your marks,' calls a woman, and three shots ring out."},
          seq([marks]))
    recorder, viola = k.sound("recorder"), k.sound("viola")
    scene("recorder_viola", seq([recorder, viola]), "Two short tunes back to back: a recorder first, a viola second.",
          {"order": "Two short tunes back to back: a viola first, a recorder second.",
           "extra": "Three short tunes back to back: a recorder, a viola, and finally a banjo."},
          seq([recorder]))
    bye = k.voice("m1", "logging you out now, goodbye")
    logout = k.sound("logout")
    scene("logout_goodbye", seq([bye, logout]),
          "The logout chime plays right after a man says 'logging you out now, goodbye'.",
          {"order": "The logout chime plays right before a man says 'logging you out now, goodbye'.",
           "gender": "The logout chime plays right after a woman says 'logging you out now, goodbye'."},
          seq([bye]))
    tick = k.sound("tick")
    scene("volume_ticks", seq([tick, tick, tick], gap_s=0.5),
          "Three tiny clicks, like a volume control being nudged, and nothing else.",
          {"count": "Six tiny clicks, like a volume control being nudged, and nothing else.",
           "extra": "Three tiny clicks, like a volume control being nudged, and then somebody coughs."},
          None)
    horn = seq([k.sound("english_horn")])
    scene("english_horn_birds", overlay(horn, k.sound("birds"), 0.2, -6.0),
          "An English horn plays a slow line while birds tweet in the background.",
          {"extra": "An English horn plays a slow line while birds tweet and a church bell tolls in the background."},
          horn)
    taiko, shanai = k.sound("taiko4"), k.sound("shanai")
    scene("taiko_shanai", seq([taiko, shanai]), "Four booming taiko strikes lead into a reedy shanai melody.",
          {"count": "Two booming taiko strikes lead into a reedy shanai melody.",
           "order": "A reedy shanai melody leads into four booming taiko strikes."},
          seq([taiko]))
    unread = k.voice("victor", "you have two unread messages")
    pop = k.sound("pop")
    scene("pops_unread", seq([pop, pop, unread]),
          "A man tells the listener 'you have two unread messages' once two notification pops have played.",
          {"order": "A man tells the listener 'you have two unread messages', and two notification pops play "
                    "after him.",
           "gender": "A woman tells the listener 'you have two unread messages' once two notification pops "
                     "have played.",
           "count": "A man tells the listener 'you have two unread messages' once five notification pops have "
                    "played."},
          seq([unread]))
    drive = k.voice("belinda", "it is now safe to remove the drive")
    unplug = k.sound("unplug")
    scene("unplug_drive", seq([drive, unplug]),
          "A woman's voice says 'it is now safe to remove the drive', followed by a short two-tone blip.",
          {"order": "A short two-tone blip is followed by a woman's voice saying 'it is now safe to remove the drive'.",
           "gender": "A man's voice says 'it is now safe to remove the drive', followed by a short two-tone blip."},
          seq([drive]))
    return S


def rubric_scenes_v6(k: Kit) -> list[dict]:
    """Set v6 (fresh, built before being judged): electric piano, choir, orchestra-hit, shakuhachi, brass
    section, string ensemble, overdriven guitar, synth bass, tremolo strings and square-lead phrases; castanets,
    drumsticks, ride bell and shaker (drum channel); espeak-ng voice en-us+aunty (female) and
    en+m6, en-us+m8, en-us+Andy, en+Storm, en-us+sandro (male), each checked when the set is built; wordings
    written by hand in new phrasings."""
    S = []

    def scene(sid: str, full: np.ndarray, positive: str, negatives: dict[str, str], missing: np.ndarray | None):
        S.append({"id": sid, "full": full, "missing": missing, "positive": positive, "negatives": negatives})

    soup = k.voice("aunty", "the soup needs another ten minutes")
    epiano = k.sound("epiano")
    scene("epiano_soup", seq([epiano, soup]),
          "Someone noodles on an electric piano for a couple of seconds, then a woman mentions that 'the soup "
          "needs another ten minutes'.",
          {"order": "A woman mentions that 'the soup needs another ten minutes', then someone noodles on an "
                    "electric piano for a couple of seconds.",
           "gender": "Someone noodles on an electric piano for a couple of seconds, then a man mentions that 'the "
                     "soup needs another ten minutes'.",
           "extra": "Someone noodles on an electric piano while a kettle comes to the boil, then a woman mentions "
                    "that 'the soup needs another ten minutes'."},
          seq([soup]))
    scene("castanets_five", seq([k.sound("castanets5")]), "Castanets: five crisp clacks in a row, nothing more.",
          {"count": "Castanets: eight crisp clacks in a row, nothing more.",
           "extra": "Five crisp castanet clacks in a row, answered by the stamp of a dancer's heels."}, None)
    hush = k.voice("m6", "let us begin with a moment of silence")
    choir = k.sound("choir")
    scene("choir_silence", overlay(seq([hush], lead_s=0.6), choir, 0.0, -9.0),
          "Low in the mix a choir holds an 'aah', and over it a man says 'let us begin with a moment of silence'.",
          {"gender": "Low in the mix a choir holds an 'aah', and over it a woman says 'let us begin with a moment of "
                     "silence'.",
           "extra": "Low in the mix a choir holds an 'aah' and church bells peal, and over it a man says 'let us begin "
                    "with a moment of silence'."},
          seq([hush], lead_s=0.6))
    which = k.voice("andy", "which platform does the coast train leave from")
    nine = k.voice("aunty", "platform nine, on the far side")
    scene("platform_dialogue", seq([which, nine], gap_s=0.6),
          "Man: 'which platform does the coast train leave from?' Woman: 'platform nine, on the far side.'",
          {"gender": "Woman: 'which platform does the coast train leave from?' Man: 'platform nine, on the far side.'",
           "extra": "Man: 'which platform does the coast train leave from?' (a conductor's whistle shrills) Woman: "
                    "'platform nine, on the far side.'"},
          None)
    news = k.voice("storm", "breaking news from the capital")
    stabs = k.sound("orch_hit2")
    scene("stabs_news", seq([stabs, news]),
          "Two big orchestral stabs hit, and a man's voice comes in with 'breaking news from the capital'.",
          {"order": "A man's voice opens with 'breaking news from the capital', and two big orchestral stabs hit "
                    "after it.",
           "gender": "Two big orchestral stabs hit, and a woman's voice comes in with 'breaking news from the capital'.",
           "count": "Four big orchestral stabs hit, and a man's voice comes in with 'breaking news from the capital'."},
          seq([news]))
    scene("shakuhachi_alone", seq([k.sound("shakuhachi")]),
          "Solo shakuhachi: a breathy bamboo flute line with no accompaniment.",
          {"extra": "Solo shakuhachi, a breathy bamboo flute line, with a temple gong struck underneath it."}, None)
    brass, strings = k.sound("brass"), k.sound("strings")
    scene("brass_strings", seq([brass, strings]),
          "The brass section plays a short rising figure and the string section answers it.",
          {"order": "The string section plays first and the brass section answers it with a short rising figure.",
           "extra": "The brass section plays a short rising figure, the strings answer, and a timpani roll finishes "
                    "it off."},
          seq([brass]))
    sticks, riff = k.sound("sticks4"), k.sound("overdrive_guitar")
    scene("count_in_riff", seq([sticks, riff]), "Four clicks of drumsticks count in a distorted electric guitar riff.",
          {"count": "Two clicks of drumsticks count in a distorted electric guitar riff.",
           "order": "A distorted electric guitar riff plays, and only after it do four drumstick clicks come."},
          seq([sticks]))
    dismissed = k.voice("sandro", "that is all for today's class")
    pings = k.sound("ride_bell3")
    scene("ride_bell_class", seq([pings, dismissed]),
          "Three pings on a ride bell; right after, a man announces 'that is all for today's class'.",
          {"order": "A man announces 'that is all for today's class'; right after, three pings on a ride bell.",
           "gender": "Three pings on a ride bell; right after, a woman announces 'that is all for today's class'.",
           "count": "Five pings on a ride bell; right after, a man announces 'that is all for today's class'."},
          seq([dismissed]))
    bass = seq([k.sound("synth_bass")])
    scene("synth_bass_shaker", overlay(bass, k.sound("shaker"), 0.2, -4.0),
          "A pulsing synth bass line with a shaker rattling along on top.",
          {"extra": "A pulsing synth bass line with a shaker rattling along on top and a vacuum cleaner droning "
                    "nearby."},
          bass)
    door = k.voice("m8", "whatever you do, do not open that door")
    trem = k.sound("tremolo_strings")
    scene("tremolo_door", overlay(seq([door], lead_s=0.5), trem, 0.0, -8.0),
          "Tense tremolo strings shiver behind a man warning, 'whatever you do, do not open that door'.",
          {"gender": "Tense tremolo strings shiver behind a woman warning, 'whatever you do, do not open that door'.",
           "extra": "Tense tremolo strings shiver behind a man warning, 'whatever you do, do not open that door', "
                    "and somewhere a wolf howls."},
          seq([door], lead_s=0.5))
    level = k.voice("aunty", "level complete, you found all the stars")
    chip = k.sound("square_lead")
    scene("chiptune_level", seq([chip, level]),
          "After a bleepy square-wave tune like an old video game, a woman announces 'level complete, you found "
          "all the stars'.",
          {"order": "Before a bleepy square-wave tune like an old video game, a woman announces 'level complete, "
                    "you found all the stars'.",
           "gender": "After a bleepy square-wave tune like an old video game, a man announces 'level complete, you "
                     "found all the stars'."},
          seq([level]))
    return S


def build_rubric(out: Path, k: Kit, scenes: list[dict] | None = None) -> list[dict]:
    d = out / "rubric"
    d.mkdir(parents=True, exist_ok=True)
    items = []
    for s in scenes if scenes is not None else rubric_scenes(k):
        full = write(d / f"{s['id']}.wav", s["full"])
        items.append({"id": s["id"], "domain": "heldout", "audio": full, "instruction": s["positive"],
                      "aligned": True, "negative_kind": None, "source_id": s["id"]})
        for kind, text in s["negatives"].items():
            items.append({"id": f"{s['id']}_{kind}", "domain": "heldout", "audio": full, "instruction": text,
                          "aligned": False, "negative_kind": kind, "source_id": s["id"]})
        if s["missing"] is not None:
            miss = write(d / f"{s['id']}_missing.wav", s["missing"])
            items.append({"id": f"{s['id']}_missing", "domain": "heldout", "audio": miss,
                          "instruction": s["positive"], "aligned": False, "negative_kind": "missing",
                          "source_id": s["id"]})
    (d / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return items


# ---------------------------------------------------------------- edit pairs


def edit_bases(k: Kit) -> list[dict]:
    """Each base: kind, instruction, original audio, the real edit and the wrong edits (name -> audio)."""
    B = []
    alarm, claps, cowbell, piano = k.sound("alarm"), k.sound("claps4"), k.sound("cowbell"), k.sound("piano")
    tamb, organ, marimba = k.sound("tambourine"), k.sound("organ"), k.sound("marimba")

    # add
    speech = k.voice("kal16", "the next guided tour starts at the main entrance in five minutes")
    B.append({"id": "add_alarm_after", "kind": "add", "instruction": "Add an alarm clock ringing after the man stops talking.",
              "original": seq([speech]),
              "real": seq([speech, alarm]), "wrong": {"wrong_sound": seq([speech, cowbell]),
                                                      "wrong_place": seq([alarm, speech])}})
    speech = k.voice("gb_f4", "ladies and gentlemen, welcome on board this evening flight")
    B.append({"id": "add_claps_start", "kind": "add", "instruction": "Insert four hand claps at the very beginning.",
              "original": seq([speech]),
              "real": seq([claps, speech]), "wrong": {"wrong_sound": seq([tamb, speech]),
                                                      "wrong_place": seq([speech, claps])}})
    speech = k.voice("rms", "this concludes our short presentation about the history of the harbour")
    B.append({"id": "add_piano_end", "kind": "add", "instruction": "Put a short piano phrase at the end of the recording.",
              "original": seq([speech]),
              "real": seq([speech, piano]), "wrong": {"wrong_sound": seq([speech, organ]),
                                                      "wrong_place": seq([piano, speech])}})
    speech = k.voice("us_f2", "the pharmacy on the second floor is now open")
    base = seq([speech], tail_s=2.0)
    n_sp = int((0.2 + len(speech) / SR + 0.3) * SR) / SR
    B.append({"id": "add_cowbell_overlay", "kind": "add", "instruction": "Mix in a cowbell right after the announcement.",
              "original": base, "real": overlay(base, cowbell, n_sp, -3.0),
              "wrong": {"wrong_sound": overlay(base, marimba[: int(1.5 * SR)], n_sp, -3.0),
                        "wrong_place": overlay(base, cowbell, 0.0, -3.0)}})
    # delete
    speech = k.voice("m7", "please keep your belongings with you at all times")
    B.append({"id": "del_alarm_cut", "kind": "delete", "instruction": "Remove the alarm clock.",
              "original": seq([speech, alarm]), "real": seq([speech]),
              "wrong": {"wrong_target": seq([alarm]), "partial": seq([speech, alarm[: int(0.4 * SR)]])}})
    speech = k.voice("sc_f5", "the garden is closed for maintenance today")
    orig = seq([claps, speech, cowbell])
    lead, n_c, n_s = int(0.2 * SR), len(claps), len(speech)
    real = orig.copy()
    real[lead: lead + n_c] = 0.0  # silenced in place: same length
    wrong = orig.copy()
    a = lead + n_c + int(0.4 * SR) + n_s + int(0.4 * SR)
    wrong[a: a + len(cowbell)] = 0.0
    B.append({"id": "del_claps_inplace", "kind": "delete", "instruction": "Delete the hand claps from the clip.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    speech = k.voice("kal16", "our store will close in fifteen minutes")
    orig = overlay(seq([speech], lead_s=0.5, tail_s=1.0), organ, 0.0, -12.0)
    B.append({"id": "del_organ_bed", "kind": "delete", "instruction": "Get rid of the organ music in the background.",
              "original": orig, "real": seq([speech], lead_s=0.5, tail_s=1.0),
              "wrong": {"wrong_target": overlay(np.zeros_like(seq([speech], lead_s=0.5, tail_s=1.0)), organ, 0.0, -12.0)}})
    speech = k.voice("us_f2", "thank you for shopping with us")
    B.append({"id": "del_tamb_cut", "kind": "delete", "instruction": "Cut out the tambourine.",
              "original": seq([tamb, speech, piano]), "real": seq([speech, piano]),
              "wrong": {"wrong_target": seq([tamb, speech])}})
    # replace
    speech = k.voice("rms", "the doors are closing, please stand clear")
    B.append({"id": "rep_alarm_cowbell", "kind": "replace", "instruction": "Replace the alarm clock with a cowbell.",
              "original": seq([speech, alarm]), "real": seq([speech, cowbell]),
              "wrong": {"wrong_sound": seq([speech, marimba]), "deleted_only": seq([speech])}})
    speech = k.voice("gb_f4", "and now, the winner of this year's award")
    B.append({"id": "rep_claps_piano", "kind": "replace", "instruction": "Swap the hand claps for a piano melody.",
              "original": seq([speech, claps]), "real": seq([speech, piano]),
              "wrong": {"wrong_sound": seq([speech, tamb]), "deleted_only": seq([speech])}})
    speech = k.voice("m7", "good afternoon and welcome to the station")
    B.append({"id": "rep_tamb_alarm", "kind": "replace", "instruction": "Change the tambourine into an alarm clock ringing.",
              "original": seq([tamb, speech]), "real": seq([alarm, speech]),
              "wrong": {"wrong_sound": seq([organ, speech]), "deleted_only": seq([speech])}})
    speech = k.voice("sc_f5", "the exhibition continues on the upper floor")
    base = seq([speech], tail_s=0.2)
    B.append({"id": "rep_cowbell_organ", "kind": "replace", "instruction": "Substitute church organ music for the cowbell.",
              "original": seq([speech, cowbell]), "real": seq([speech, organ]),
              "wrong": {"wrong_sound": seq([speech, claps]), "deleted_only": base}})
    return B


def edit_bases_v2(k: Kit) -> list[dict]:
    """Set v2 edits: other sounds, voices and wordings (one free-form wording the rule parser cannot read)."""
    B = []
    crash, wood, harp, mar = k.sound("crash"), k.sound("woodblock"), k.sound("harp"), k.sound("maracas")
    tri, acc, bong, xylo = k.sound("triangle3"), k.sound("accordion"), k.sound("bongos"), k.sound("xylophone")
    tromb, clar, whistle, snare = k.sound("trombone"), k.sound("clarinet"), k.sound("whistle"), k.sound("snare_roll")
    chime, steel = k.sound("chime"), k.sound("steel_drums")
    sp = k.voice("kal16", "the last train of the evening leaves from the north station")
    B.append({"id": "add_crash_end", "kind": "add", "instruction": "Add a cymbal crash at the end of the clip.",
              "original": seq([sp]), "real": seq([sp, crash]),
              "wrong": {"wrong_sound": seq([sp, wood]), "wrong_place": seq([crash, sp])}})
    sp = k.voice("annie", "thank you for calling, all of our agents are busy")
    B.append({"id": "add_harp_begin", "kind": "add", "instruction": "Begin the recording with a short harp phrase.",
              "original": seq([sp]), "real": seq([harp, sp]),
              "wrong": {"wrong_sound": seq([xylo, sp]), "wrong_place": seq([sp, harp])}})
    sp = k.voice("us_m5", "the museum shop is on the ground floor")
    base = seq([sp], tail_s=2.0)
    at = 0.2 + len(sp) / SR + 0.3
    B.append({"id": "add_maracas_after", "kind": "add", "instruction": "Overlay maracas once the man has finished speaking.",
              "original": base, "real": overlay(base, mar, at, -3.0),
              "wrong": {"wrong_sound": overlay(base, bong, at, -3.0), "wrong_place": overlay(base, mar, 0.0, -3.0)}})
    a, b = k.voice("cb_f2", "welcome to the morning news"), k.voice("cb_f2", "here are the headlines")
    B.append({"id": "add_whistle_between", "kind": "add", "instruction": "Insert a whistle between the two sentences.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, whistle, b], gap_s=0.3),
              "wrong": {"wrong_sound": seq([a, crash, b], gap_s=0.3)}})
    sp = k.voice("rp_m3", "the meeting has been moved to room four")
    one = tri[: int(0.6 * SR)]
    B.append({"id": "del_triangle_cut", "kind": "delete", "instruction": "Delete the triangle.",
              "original": seq([tri, sp]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([tri]), "partial": seq([tri[int(0.6 * SR):], sp])}})
    sp = k.voice("annie", "the restaurant is fully booked tonight")
    bed = seq([sp], lead_s=0.5, tail_s=0.8)
    B.append({"id": "del_accordion_bed", "kind": "delete", "instruction": "Remove the accordion music.",
              "original": overlay(bed, acc, 0.0, -10.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), acc, 0.0, -10.0)}})
    sp = k.voice("sc_m2", "the ferry will depart in ten minutes")
    orig = seq([bong, sp, xylo])
    real, wrong = orig.copy(), orig.copy()
    lead = int(0.2 * SR)
    real[lead: lead + len(bong)] = 0.0
    x0 = lead + len(bong) + int(0.4 * SR) + len(sp) + int(0.4 * SR)
    wrong[x0: x0 + len(xylo)] = 0.0
    B.append({"id": "del_bongos_inplace", "kind": "delete", "instruction": "Take the bongos out.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    del one
    sp = k.voice("rp_f1", "and that brings us to the end of the show")
    B.append({"id": "rep_trombone_clarinet", "kind": "replace", "instruction": "Replace the trombone with a clarinet.",
              "original": seq([sp, tromb]), "real": seq([sp, clar]),
              "wrong": {"wrong_sound": seq([sp, harp]), "deleted_only": seq([sp])}})
    sp = k.voice("kal16", "players, please return to the field")
    B.append({"id": "rep_whistle_triangle", "kind": "replace", "instruction": "Swap the whistle for a triangle.",
              "original": seq([whistle, sp]), "real": seq([tri, sp]),
              "wrong": {"wrong_sound": seq([crash, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("us_m5", "and now, a word from our sponsors")
    B.append({"id": "rep_snare_xylophone", "kind": "replace", "instruction": "Change the snare drum into a xylophone melody.",
              "original": seq([sp, snare]), "real": seq([sp, xylo]),
              "wrong": {"wrong_sound": seq([sp, acc]), "deleted_only": seq([sp])}})
    sp = k.voice("cb_f2", "your package has been delivered")
    B.append({"id": "rep_chime_steel", "kind": "replace",
              "instruction": "Replace the notification chime with a steel drum melody.",
              "original": seq([sp, chime]), "real": seq([sp, steel]),
              "wrong": {"wrong_sound": seq([sp, bong]), "deleted_only": seq([sp])}})
    return B


def edit_bases_v3(k: Kit) -> list[dict]:
    """Set v3 edits: the v3 sounds and voices, wordings written before the rules were run on them."""
    B = []
    timp, tuba, banjo, sitar = k.sound("timpani"), k.sound("tuba"), k.sound("banjo"), k.sound("sitar")
    claves, congas, attn, ride = k.sound("claves4"), k.sound("congas"), k.sound("attention"), k.sound("ride4")
    ring, glock, harm, pipes = k.sound("ringout"), k.sound("glockenspiel"), k.sound("harmonica"), k.sound("bagpipe")
    oboe, hihat, timb, vib = k.sound("oboe"), k.sound("hihat_open"), k.sound("timbales"), k.sound("vibraphone")
    guitar, done, roll = k.sound("guitar"), k.sound("complete"), k.sound("tom_roll")
    sp = k.voice("david", "the library will close in ten minutes, please bring your books to the front desk")
    B.append({"id": "add_timpani_after", "kind": "add", "instruction": "Add a timpani roll after the announcement.",
              "original": seq([sp]), "real": seq([sp, timp]),
              "wrong": {"wrong_sound": seq([sp, tuba]), "wrong_place": seq([timp, sp])}})
    sp = k.voice("linda", "good morning and welcome to the annual meeting")
    B.append({"id": "add_banjo_open", "kind": "add", "instruction": "Open the clip with a banjo tune.",
              "original": seq([sp]), "real": seq([banjo, sp]),
              "wrong": {"wrong_sound": seq([sitar, sp]), "wrong_place": seq([sp, banjo])}})
    sp = k.voice("paul", "the parking lot is full, please use the garage")
    base = seq([sp], tail_s=2.2)
    at = 0.2 + len(sp) / SR + 0.3
    B.append({"id": "add_claves_after", "kind": "add", "instruction": "Add claves right after the man finishes talking.",
              "original": base, "real": overlay(base, claves, at, -3.0),
              "wrong": {"wrong_sound": overlay(base, congas, at, -3.0), "wrong_place": overlay(base, claves, 0.0, -3.0)}})
    a, b = k.voice("steph", "this is the first part of the lesson"), k.voice("steph", "and this is the second part")
    B.append({"id": "add_chime_between", "kind": "add", "instruction": "Put a short chime between the two sentences.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, attn, b], gap_s=0.3),
              "wrong": {"wrong_sound": seq([a, ride[: int(1.2 * SR)], b], gap_s=0.3)}})
    sp = k.voice("travis", "i will call you back later this afternoon")
    B.append({"id": "del_ringout_cut", "kind": "delete", "instruction": "Get rid of the phone ringing.",
              "original": seq([sp, ring]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([ring]), "partial": seq([sp, ring[: int(0.8 * SR)]])}})
    sp = k.voice("anika", "the bakery opens early on saturdays")
    orig = seq([glock, sp, congas])
    real, wrong = orig.copy(), orig.copy()
    lead = int(0.2 * SR)
    real[lead: lead + len(glock)] = 0.0
    x0 = lead + len(glock) + int(0.4 * SR) + len(sp) + int(0.4 * SR)
    wrong[x0: x0 + len(congas)] = 0.0
    B.append({"id": "del_glock_inplace", "kind": "delete", "instruction": "Erase the glockenspiel.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    sp = k.voice("john", "we are sorry, this number is no longer in service")
    bed = seq([sp], lead_s=0.5, tail_s=0.8)
    B.append({"id": "del_harmonica_bed", "kind": "delete",
              "instruction": "Remove the harmonica playing in the background.",
              "original": overlay(bed, harm, 0.0, -10.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), harm, 0.0, -10.0)}})
    sp = k.voice("david", "and that concludes the opening ceremony")
    B.append({"id": "rep_bagpipe_oboe", "kind": "replace", "instruction": "Replace the bagpipes with an oboe melody.",
              "original": seq([sp, pipes]), "real": seq([sp, oboe]),
              "wrong": {"wrong_sound": seq([sp, tuba]), "deleted_only": seq([sp])}})
    sp = k.voice("alicia", "the next song is dedicated to my mother")
    B.append({"id": "rep_claves_hihat", "kind": "replace", "instruction": "Swap the claves for a hi-hat.",
              "original": seq([claves, sp]), "real": seq([hihat, sp]),
              "wrong": {"wrong_sound": seq([timb, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("paul", "thank you for listening to this short recording")
    B.append({"id": "rep_vibraphone_guitar", "kind": "replace",
              "instruction": "Change the vibraphone to an acoustic guitar.",
              "original": seq([sp, vib]), "real": seq([sp, guitar]),
              "wrong": {"wrong_sound": seq([sp, timp]), "deleted_only": seq([sp])}})
    sp = k.voice("steph", "your order has been shipped")
    B.append({"id": "rep_chime_roll", "kind": "replace", "instruction": "Replace the chime at the start with a drum roll.",
              "original": seq([done, sp]), "real": seq([roll, sp]),
              "wrong": {"wrong_sound": seq([glock, sp]), "deleted_only": seq([sp])}})
    return B


def edit_bases_v4(k: Kit) -> list[dict]:
    """Set v4 edits: the v4 sounds and voices, wordings written before the rules were run on them."""
    B = []
    cel, fid, vslap, guiro = k.sound("celesta"), k.sound("fiddle"), k.sound("vibraslap"), k.sound("guiro")
    agogo, cab, info, splash = k.sound("agogo4"), k.sound("cabasa"), k.sound("info"), k.sound("splash")
    picc, tom, kal, bass = k.sound("piccolo"), k.sound("high_tom"), k.sound("kalimba"), k.sound("acoustic_bass")
    koto, harpsi, device, sticks = k.sound("koto"), k.sound("harpsichord"), k.sound("device"), k.sound("side_stick3")
    mbox, pizz, bells = k.sound("music_box"), k.sound("pizzicato"), k.sound("tubular_bells")
    sp = k.voice("robert", "the museum will close in twenty minutes, thank you for visiting")
    B.append({"id": "add_celesta_end", "kind": "add", "instruction": "Finish the recording with a few celesta notes.",
              "original": seq([sp]), "real": seq([sp, cel]),
              "wrong": {"wrong_sound": seq([sp, fid]), "wrong_place": seq([cel, sp])}})
    sp = k.voice("andrea", "here are today's top stories from around the world")
    B.append({"id": "add_vibraslap_start", "kind": "add", "instruction": "Put a vibraslap rattle before the speech starts.",
              "original": seq([sp]), "real": seq([vslap, sp]),
              "wrong": {"wrong_sound": seq([guiro, sp]), "wrong_place": seq([sp, vslap])}})
    sp = k.voice("max", "please remember to switch off your phones")
    base = seq([sp], tail_s=2.0)
    at = 0.2 + len(sp) / SR + 0.3
    B.append({"id": "add_agogo_after", "kind": "add", "instruction": "Overlay an agogo pattern once he stops talking.",
              "original": base, "real": overlay(base, agogo, at, -3.0),
              "wrong": {"wrong_sound": overlay(base, cab, at, -3.0), "wrong_place": overlay(base, agogo, 0.0, -3.0)}})
    a, b = k.voice("grandma", "the first speaker is running late"), k.voice("grandma", "we will begin with the second talk")
    B.append({"id": "add_info_between", "kind": "add",
              "instruction": "Place an information chime in the pause between the sentences.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, info, b], gap_s=0.3),
              "wrong": {"wrong_sound": seq([a, splash, b], gap_s=0.3)}})
    sp = k.voice("michael", "the gates open at nine tomorrow")
    B.append({"id": "del_piccolo_cut", "kind": "delete", "instruction": "Cut the piccolo out of the recording.",
              "original": seq([sp, picc]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([picc]), "partial": seq([sp, picc[: int(0.6 * SR)]])}})
    sp = k.voice("shelby", "lunch is served in the main hall")
    orig = seq([tom, sp, kal])
    real, wrong = orig.copy(), orig.copy()
    lead = int(0.2 * SR)
    real[lead: lead + len(tom)] = 0.0
    x0 = lead + len(tom) + int(0.4 * SR) + len(sp) + int(0.4 * SR)
    wrong[x0: x0 + len(kal)] = 0.0
    B.append({"id": "del_tom_inplace", "kind": "delete", "instruction": "Silence the tom drums.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    sp = k.voice("robert", "the results will be announced shortly")
    bed = seq([sp], lead_s=0.5, tail_s=0.8)
    B.append({"id": "del_bass_bed", "kind": "delete", "instruction": "Take away the bass line underneath the voice.",
              "original": overlay(bed, bass, 0.0, -10.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), bass, 0.0, -10.0)}})
    sp = k.voice("andrea", "and now for something completely different")
    B.append({"id": "rep_koto_harpsichord", "kind": "replace", "instruction": "Swap the koto for a harpsichord.",
              "original": seq([sp, koto]), "real": seq([sp, harpsi]),
              "wrong": {"wrong_sound": seq([sp, agogo]), "deleted_only": seq([sp])}})
    sp = k.voice("max", "your headphones are connected")
    B.append({"id": "rep_device_splash", "kind": "replace",
              "instruction": "Replace the first notification sound with a splash cymbal.",
              "original": seq([device, sp]), "real": seq([splash, sp]),
              "wrong": {"wrong_sound": seq([sticks, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("grandma", "goodnight, sleep well")
    B.append({"id": "rep_musicbox_pizz", "kind": "replace",
              "instruction": "Change the music box melody into plucked strings.",
              "original": seq([sp, mbox]), "real": seq([sp, pizz]),
              "wrong": {"wrong_sound": seq([sp, picc]), "deleted_only": seq([sp])}})
    sp = k.voice("michael", "the market opens on sunday mornings")
    B.append({"id": "rep_guiro_bells", "kind": "replace",
              "instruction": "Exchange the guiro at the start for tubular bells.",
              "original": seq([guiro, sp]), "real": seq([bells, sp]),
              "wrong": {"wrong_sound": seq([cab, sp]), "deleted_only": seq([sp])}})
    return B


def edit_bases_v5(k: Kit) -> list[dict]:
    """Set v5 edits: the v5 voices; blown bottle, cuica, jingle bells, applause, seashore, suspend-error beep,
    tinkle bell, helicopter, shamisen, taiko, clavinet, dulcimer, baritone sax, China cymbal, bell tree, gunshot,
    muted trumpet, contrabass and logout sounds; wordings written by hand in new phrasings."""
    B = []
    bottle, viola, cuica, jingle = k.sound("bottle"), k.sound("viola"), k.sound("cuica"), k.sound("jingle")
    applause, sea, beep, tinkle = k.sound("applause"), k.sound("seashore"), k.sound("beep_err"), k.sound("tinkle_bell")
    heli, sham, taiko, clav = k.sound("helicopter"), k.sound("shamisen"), k.sound("taiko4"), k.sound("clavinet")
    dulc, sax, china, btree = k.sound("dulcimer"), k.sound("bari_sax"), k.sound("china_cymbal"), k.sound("belltree")
    shot, mtpt, cbass, logout = k.sound("gunshot"), k.sound("muted_trumpet"), k.sound("contrabass"), k.sound("logout")
    # add
    sp = k.voice("denis", "that is all for tonight, drive home safely")
    B.append({"id": "add_bottle_end", "kind": "add", "instruction": "Could you tack a blown-bottle tune onto the end?",
              "original": seq([sp]), "real": seq([sp, bottle]),
              "wrong": {"wrong_sound": seq([sp, viola]), "wrong_place": seq([bottle, sp])}})
    sp = k.voice("steph2", "welcome to the carnival parade")
    B.append({"id": "add_cuica_start", "kind": "add", "instruction": "Start it off with a cuica squeaking before she talks.",
              "original": seq([sp]), "real": seq([cuica, sp]),
              "wrong": {"wrong_sound": seq([jingle, sp]), "wrong_place": seq([sp, cuica])}})
    sp = k.voice("mike", "and the award goes to the whole team")
    base = seq([sp], tail_s=3.0)
    at = 0.2 + len(sp) / SR + 0.3
    B.append({"id": "add_applause_after", "kind": "add", "instruction": "Once he finishes, bring in a round of applause.",
              "original": base, "real": overlay(base, applause, at, -3.0),
              "wrong": {"wrong_sound": overlay(base, sea[: int(3.0 * SR)], at, -3.0),
                        "wrong_place": overlay(base, applause, 0.0, -3.0)}})
    a, b = k.voice("belinda", "first, preheat the oven"), k.voice("belinda", "then grease the baking tray")
    B.append({"id": "add_beep_between", "kind": "add", "instruction": "Drop a beep into the pause between her two sentences.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, beep, b], gap_s=0.3),
              "wrong": {"wrong_sound": seq([a, tinkle, b], gap_s=0.3),
                        "wrong_place": np.concatenate([seq([a, b], gap_s=0.6, tail_s=0.3), beep,
                                                       np.zeros(int(0.3 * SR), np.float32)])}})
    # delete
    sp = k.voice("victor", "units are responding to the north entrance")
    bed = seq([sp], lead_s=0.5, tail_s=0.8)
    B.append({"id": "del_helicopter_bed", "kind": "delete", "instruction": "Strip out the helicopter noise behind the voice.",
              "original": overlay(bed, heli, 0.0, -10.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), heli, 0.0, -10.0),
                        "partial": overlay(bed, heli[int(1.5 * SR):], 1.5, -10.0)}})
    sp = k.voice("steph3", "happy holidays from all of us")
    B.append({"id": "del_jingle_cut", "kind": "delete", "instruction": "Lose the jingle bells at the end.",
              "original": seq([sp, jingle]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([jingle]), "partial": seq([sp, jingle[: int(0.5 * SR)]])}})
    sp = k.voice("lee", "the tea ceremony begins in the garden")
    orig = seq([sham, sp, taiko])
    real, wrong = orig.copy(), orig.copy()
    lead = int(0.2 * SR)
    real[lead: lead + len(sham)] = 0.0
    x0 = lead + len(sham) + int(0.4 * SR) + len(sp) + int(0.4 * SR)
    wrong[x0: x0 + len(taiko)] = 0.0
    B.append({"id": "del_shamisen_inplace", "kind": "delete",
              "instruction": "I don't want the shamisen in there, take it out.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    # replace
    sp = k.voice("m1", "here is a song we wrote last summer")
    B.append({"id": "rep_clavinet_dulcimer", "kind": "replace",
              "instruction": "Instead of the clavinet, I want a hammered dulcimer there.",
              "original": seq([sp, clav]), "real": seq([sp, dulc]),
              "wrong": {"wrong_sound": seq([sp, sax]), "deleted_only": seq([sp])}})
    sp = k.voice("belinda", "and we are back after the break")
    B.append({"id": "rep_cymbal_belltree", "kind": "replace",
              "instruction": "Trade the cymbal crash at the start for a bell tree.",
              "original": seq([china, sp]), "real": seq([btree, sp]),
              "wrong": {"wrong_sound": seq([cuica, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("lee", "and they are off, a clean start")
    B.append({"id": "rep_shot_applause", "kind": "replace",
              "instruction": "Where the starting pistol fires, put applause instead.",
              "original": seq([shot, sp]), "real": seq([applause, sp]),
              "wrong": {"wrong_sound": seq([taiko, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("steph2", "your session has ended")
    B.append({"id": "rep_logout_trumpet", "kind": "replace",
              "instruction": "Make the closing chime a muted trumpet phrase instead.",
              "original": seq([sp, logout]), "real": seq([sp, mtpt]),
              "wrong": {"wrong_sound": seq([sp, cbass]), "deleted_only": seq([sp])}})
    return B


def edit_bases_v6(k: Kit) -> list[dict]:
    """Set v6 edits: the v6 voices; surdo, synth drum, reverse cymbal, breath noise, shaker, castanets, ride
    bell, drumsticks, metronome click, electric piano 2, slap bass, warm pad, jazz guitar, sawtooth lead, voice
    oohs and synth strings; wordings written by hand in new phrasings."""
    B = []
    surdo, sdrum, rcym, breath = k.sound("surdo4"), k.sound("synth_drum"), k.sound("reverse_cymbal"), k.sound("breath")
    shaker, cast, bell1, sticks = k.sound("shaker"), k.sound("castanets5"), k.sound("ride_bell1"), k.sound("sticks4")
    ep2, slap, pad, jazz = k.sound("epiano2"), k.sound("slap_bass"), k.sound("warm_pad"), k.sound("jazz_guitar")
    saw, oohs, sstr, pings = k.sound("saw_lead"), k.sound("oohs"), k.sound("synth_strings"), k.sound("ride_bell3")
    metro = k.sound("metronome4")
    # add
    sp = k.voice("m4", "thanks for tuning in, we will see you next week")
    B.append({"id": "add_surdo_end", "kind": "add",
              "instruction": "After he signs off, finish on a few deep surdo drum beats.",
              "original": seq([sp]), "real": seq([sp, surdo]),
              "wrong": {"wrong_sound": seq([sp, sdrum]), "wrong_place": seq([surdo, sp])}})
    sp = k.voice("aunty", "here is a quick look at tonight's weather")
    B.append({"id": "add_revcym_intro", "kind": "add",
              "instruction": "I'd like a reverse cymbal swell leading into her voice, right at the top.",
              "original": seq([sp]), "real": seq([rcym, sp]),
              "wrong": {"wrong_sound": seq([breath, sp]), "wrong_place": seq([sp, rcym])}})
    sp = k.voice("andy", "please stay seated until the ride comes to a full stop")
    base = seq([sp], tail_s=2.0)
    at = 0.2 + len(sp) / SR + 0.3
    B.append({"id": "add_shaker_after", "kind": "add", "instruction": "layer some shaker in once the guy stops talking",
              "original": base, "real": overlay(base, shaker, at, -3.0),
              "wrong": {"wrong_sound": overlay(base, cast, at, -3.0), "wrong_place": overlay(base, shaker, 0.0, -3.0)}})
    a, b = k.voice("aunty", "breathe in slowly through your nose"), k.voice("aunty", "now let it out")
    B.append({"id": "add_bell_between", "kind": "add",
              "instruction": "In the gap between her two lines, put a single ping of a ride bell.",
              "original": seq([a, b], gap_s=0.6), "real": seq([a, bell1, b], gap_s=0.3),
              "wrong": {"wrong_sound": seq([a, sticks[: int(0.5 * SR)], b], gap_s=0.3),
                        "wrong_place": np.concatenate([seq([a, b], gap_s=0.6, tail_s=0.3), bell1,
                                                       np.zeros(int(0.3 * SR), np.float32)])}})
    # delete
    sp = k.voice("storm", "and that wraps up the evening news")
    B.append({"id": "del_epiano_cut", "kind": "delete",
              "instruction": "The electric piano bit after he finishes talking: cut it.",
              "original": seq([sp, ep2]), "real": seq([sp]),
              "wrong": {"wrong_target": seq([ep2]), "partial": seq([sp, ep2[: int(0.6 * SR)]])}})
    sp = k.voice("sandro", "the dance class meets on thursday evenings")
    orig = seq([cast, sp, slap])
    real, wrong = orig.copy(), orig.copy()
    lead = int(0.2 * SR)
    real[lead: lead + len(cast)] = 0.0
    x0 = lead + len(cast) + int(0.4 * SR) + len(sp) + int(0.4 * SR)
    wrong[x0: x0 + len(slap)] = 0.0
    B.append({"id": "del_castanets_inplace", "kind": "delete",
              "instruction": "Mute the castanets but leave everything else exactly where it is.",
              "original": orig, "real": real, "wrong": {"wrong_target": wrong}})
    sp = k.voice("m8", "expect heavy traffic on the bridge this morning")
    bed = seq([sp], lead_s=0.5, tail_s=0.8)
    B.append({"id": "del_pad_bed", "kind": "delete", "instruction": "Can you pull the synth pad out from under the voice?",
              "original": overlay(bed, pad, 0.0, -10.0), "real": bed,
              "wrong": {"wrong_target": overlay(np.zeros_like(bed), pad, 0.0, -10.0),
                        "partial": overlay(bed, pad[int(1.5 * SR):], 1.5, -10.0)}})
    # replace
    sp = k.voice("aunty", "this next tune is one of my favourites")
    B.append({"id": "rep_jazz_saw", "kind": "replace", "instruction": "Swap that jazz guitar lick for a buzzy synth lead.",
              "original": seq([sp, jazz]), "real": seq([sp, saw]),
              "wrong": {"wrong_sound": seq([sp, oohs]), "deleted_only": seq([sp])}})
    sp = k.voice("m6", "welcome to the festival, enjoy the music")
    B.append({"id": "rep_shaker_castanets", "kind": "replace", "instruction": "use castanets where the shaker is now",
              "original": seq([shaker, sp]), "real": seq([cast, sp]),
              "wrong": {"wrong_sound": seq([sticks, sp]), "deleted_only": seq([sp])}})
    sp = k.voice("aunty", "goodnight everyone, and thank you for coming")
    B.append({"id": "rep_oohs_strings", "kind": "replace",
              "instruction": "Rather than those 'ooh' vocals at the end, give me synth strings.",
              "original": seq([sp, oohs]), "real": seq([sp, sstr]),
              "wrong": {"wrong_sound": seq([sp, slap]), "deleted_only": seq([sp])}})
    sp = k.voice("m4", "okay everyone, pencils down")
    B.append({"id": "rep_bell_metronome", "kind": "replace",
              "instruction": "The bell pings after 'pencils down' should be a ticking metronome instead.",
              "original": seq([sp, pings]), "real": seq([sp, metro]),
              "wrong": {"wrong_sound": seq([sp, surdo]), "deleted_only": seq([sp])}})
    return B


def build_edits(out: Path, k: Kit, bases: list[dict] | None = None) -> list[dict]:
    d = out / "edit"
    d.mkdir(parents=True, exist_ok=True)
    items = []
    for b in bases if bases is not None else edit_bases(k):
        orig = write(d / f"{b['id']}_original.wav", b["original"])
        noop = d / f"{b['id']}_noop.wav"
        shutil.copy(orig, noop)
        variants = {"real": b["real"], **b["wrong"]}
        paths = {name: write(d / f"{b['id']}_{name}.wav", y) for name, y in variants.items()}
        paths["noop"] = str(noop)
        for name, p in paths.items():
            items.append({"id": f"{b['id']}:{name}", "base": b["id"], "kind": b["kind"], "variant": name,
                          "instruction": b["instruction"], "original": orig, "edited": p})
    (d / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    return items


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(out: Path = typer.Option(Path(__file__).resolve().parent / "heldout", "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl"),
         set_: str = typer.Option("v6", "--set", help="v1, v2, v3 (used in development now), v4 (judged once), v5 "
                                                      "or v6 (fresh sets, voices checked)")) -> None:
    """Generate a held-out rubric and edit benchmark (audio + items.jsonl files)."""
    k = Kit(out)
    checked = {}
    if set_ in ("v2", "v3", "v4", "v5", "v6"):
        keys = ("annie", "cb_f2", "rp_f1", "rp_m3", "us_m5", "sc_m2", "kal16") if set_ == "v2" else (
            {"v3": V3_VOICES, "v4": V4_VOICES, "v5": V5_VOICES, "v6": V6_VOICES}[set_])
        for key in keys:
            ok, hz = k.check_voice(key)
            checked[key] = {"gender": VOICES[key][2], "median_f0_hz": round(hz, 1) if hz else None, "fits_band": ok}
            if not ok:
                raise SystemExit(f"voice {key} ({VOICES[key][1]}) measures {hz} Hz: not a {VOICES[key][2]} voice by "
                                 "the documented bands; pick another")
        if set_ == "v6":  # also unlike every other espeak-ng voice of every set (not a variant that renders the same)
            test = "the quick brown fox jumps over the lazy dog"
            for key in keys:
                y = k.voice(key, test)
                same = [o for o, (eng, _, _) in VOICES.items() if o != key and eng == "espeak"
                        and len(k.voice(o, test)) == len(y) and np.allclose(k.voice(o, test), y)]
                checked[key]["same_audio_as"] = same
                if same:
                    raise SystemExit(f"voice {key} ({VOICES[key][1]}) renders the same audio as {same}; pick another")
        scenes = {"v2": rubric_scenes_v2, "v3": rubric_scenes_v3, "v4": rubric_scenes_v4, "v5": rubric_scenes_v5,
                  "v6": rubric_scenes_v6}[set_]
        bases = {"v2": edit_bases_v2, "v3": edit_bases_v3, "v4": edit_bases_v4, "v5": edit_bases_v5,
                 "v6": edit_bases_v6}[set_]
        r = build_rubric(out, k, scenes(k))
        e = build_edits(out, k, bases(k))
    else:
        r = build_rubric(out, k)
        e = build_edits(out, k)
    print(json.dumps({"set": set_, "rubric_items": len(r), "rubric_positives": sum(i["aligned"] for i in r),
                      "edit_items": len(e), "edit_bases": len({i["base"] for i in e}), "voices_checked": checked,
                      "out": str(out)}))


if __name__ == "__main__":
    app()
