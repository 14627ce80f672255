"""Held-out judge benchmark, set v11: DOCSTRING_PLACEHOLDER
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

from heldout import SR, _load, overlay, seq
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
    "drips": (("pk3", OPENARENA, "sound/world/drops.wav"), 0.0, 5.6),
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
    programs: dict[str, tuple] = {}

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
        others = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [name.split("+")[0], *same]}
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
    scene("drips_estonian", overlay(bed, k.looped("drips", len(bed)), 0.0, -8.0),
          "Water keeps dripping somewhere in the background the whole way through, as a woman speaks Estonian.",
          {"gender": "Water keeps dripping somewhere in the background the whole way through, as a man speaks "
                     "Estonian.",
           "extra": "Water keeps dripping somewhere in the background the whole way through, as a woman speaks "
                    "Estonian and a door creaks open."},
          bed)
    scene("italian_letters", seq([k.letters("it_f", ["A", "B", "C", "D"])]),
          "An Italian woman reads out four letters of the alphabet: A, B, C and D.",
          {"count": "An Italian woman reads out six letters of the alphabet: A, B, C, D, E and F.",
           "gender": "An Italian man reads out four letters of the alphabet: A, B, C and D.",
           "extra": "An Italian woman reads out four letters of the alphabet: A, B, C and D, while a pencil scratches "
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
    cheer, crickets, drips, chisel = k.rec("cheer"), k.rec("crickets"), k.rec("drips"), k.taps()
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
              "original": base, "real": overlay(base, k.looped("drips", len(base)), 0.0, -6.0),
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
    line = k.looped("drips", len(bed))
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
def main(out: Path = typer.Option(Path("/tmp/hv11"), "--out",  # noqa: B008
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
