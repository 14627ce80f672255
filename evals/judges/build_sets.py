"""Build a held-out judge set from its data file: evals/judges/sets/<set>/set.yaml (scenes, edit bases, wordings,
voices, sound recipes) and PROVENANCE.md (what material, from where, under which licence, blind or not).

One builder, a handful of operations. A set's audio is written as small expressions over named clips, evaluated
in order; the names a scene or an edit base binds under `let` stay bound for the ones after it:

- sources: `voice(key, text)` (the set's voice `key` speaking text: espeak-ng or flite), `sound(name)` (the
  set's sound recipe `name`: a freedesktop theme sound, a General MIDI melody, chords or a note track rendered
  with fluidsynth and the FluidR3 soundfont);
- placing and mixing: `seq(parts, gap_s=0.4, lead_s=0.2, tail_s=0.3)` (one after another with silence around),
  `overlay(base, other, at_s, gain_db)`, `concat(parts)`, `zeros(n)`, `zeros_like(y)`, slices `y[a:b]`;
- edits: `mute(y, a, b)` (a copy of y with samples a..b silenced);
- numbers: `SR`, `len`, `int`, `max`, `+ - * / //`.

Sets with a `tag` (v7 on: real recordings from installed Debian packages, festival voices, recorded speakers)
also have `say(key, text)` (the voice key saying text), `rec(name)` (the recording name, cut, faded, peak 0.5),
`gm(name)` (the General MIDI sound name), `times(parts, gap_s)`, `looped(y, n_s)`, `fade(y, in_s, out_s)`,
`events(y)` / `first_onset(y)` (the envelope's sound events), and the logged checks: `counted(label, y, n)`,
`placed(label, rec_name, n, gap_s)` (a wording states n events), `measured(label, t, lo, hi)` and
`louder(label, a, b, lo, hi)` (a stated time or level), the last two in a scene's or base's `measure` list. Their
build checks every voice, every spoken line against its voice's band and every stated count and time.

Nothing else is callable (no attribute, import or builtin): the expressions are validated when the data file
is loaded (`load_set`), so a typo fails before any audio is made.

Writes OUT/src/ (the cached sources), OUT/rubric/ (one clip per scene, one per 'missing sound' negative, and
items.jsonl in the format of run_bench.py) and OUT/edit/ (per base the original, a no-op byte copy, the real
edit and the wrong edits, and items.jsonl in the format of run_edit_bench.py). Voices a set lists under
`checks.voice_band` are measured before the build (median f0 by librosa pYIN inside the documented band of
their label, and not the engine's default voice); the build stops if one fails.

    .venv/bin/python evals/judges/build_sets.py --set v6 --out /tmp/heldout_v6
    .venv/bin/python evals/judges/build_sets.py --list
"""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Literal

import numpy as np
import typer
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from audiomind import audio as aio
from audiomind import synth

SR = synth.SR
SETS = Path(__file__).resolve().parent / "sets"
# documented adult speaking-f0 bands (audiomind.reasoning.verifiers): a voice whose median f0 contradicts its
# label is no voice of that gender for a pitch-based judge, and is left out of a set
MALE_MAX_HZ, FEMALE_MIN_HZ = 155.0, 170.0
TEST_SENTENCE = "the quick brown fox jumps over the lazy dog"

# ---------------------------------------------------------------- the data file's schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Voice(_Strict):
    """A voice. Sets v1-v6: espeak-ng or flite. Sets with a tag (v7 on) also: festival (text2wave reading the
    text in `encoding`, peak 0.7) and recorded prompts ('asterisk' or 'prompts': a real person's recorded words,
    the text is file stems, each the file <folder>/<prefix><stem><ext> (with `archive`, a member of that zip,
    extracted to src/x<tag>_<key>_<stem><ext>), trimmed to its speech and played gap_s apart, peak 0.7);
    `language` and the `test` sentence it is checked on."""

    engine: Literal["espeak", "flite", "festival", "asterisk", "prompts"]
    voice: str
    gender: Literal["male", "female"]
    language: str | None = None
    test: str | None = None
    encoding: str = "utf-8"
    folder: str | None = None
    prefix: str = ""
    ext: str = ".wav"
    archive: str | None = None
    gap_s: float = 0.2


class Recording(_Strict):
    """A recording from an installed Debian package's file, cut to start..end s (end None: the file's end),
    faded and peak-normalised to 0.5 (sets with a tag). A file inside an archive is extracted first (to
    src/x<tag>_<name>): sound `entry` of an OpenSFX .cat (checked to carry `title`), or `member` of a Qt
    resource archive (.rcc) or of a zip archive (.zip, .pk3)."""

    file: str
    start: float = 0.0
    end: float | None = None
    entry: int | None = None
    title: str | None = None
    member: str | None = None

    @model_validator(mode="after")
    def _archive(self) -> Recording:
        if (self.entry is None) != (self.title is None) or (self.entry is not None and self.member is not None):
            raise ValueError("a recording is a file, an OpenSFX entry with its title, or an archive member")
        if self.entry is not None and not self.file.endswith(".cat"):
            raise ValueError(f"entry {self.entry} needs an OpenSFX .cat file, not {self.file}")
        if self.member is not None and Path(self.file).suffix not in (".rcc", ".zip", ".pk3"):
            raise ValueError(f"member {self.member} needs a .rcc, .zip or .pk3 archive, not {self.file}")
        return self


class Theme(_Strict):
    """A freedesktop sound-theme sound (sound-theme-freedesktop), cut to its first first_s seconds if given."""

    theme: str
    first_s: float | None = None


class Melody(_Strict):
    """General MIDI program playing notes one after another, note_s each, after a 0.1 s lead."""

    program: int = Field(ge=0, le=127)
    notes: list[str]
    note_s: float


class Chords(_Strict):
    """General MIDI program playing root-position triads, chord_s each, after a 0.1 s lead."""

    program: int = Field(ge=0, le=127)
    chords: list[str]
    chord_s: float


class Track(_Strict):
    """One pitch (a MIDI number; on channel 9 a drum key) struck n times, gap_s apart from 0.1 s, each dur_s long."""

    pitch: int | str
    n: int = Field(ge=1)
    gap_s: float
    dur_s: float
    velocity: int = Field(120, ge=1, le=127)
    program: int = Field(0, ge=0, le=127)
    channel: int = Field(0, ge=0, le=15)


class Sound(_Strict):
    """Exactly one recipe."""

    theme: Theme | None = None
    melody: Melody | None = None
    chords: Chords | None = None
    track: Track | None = None

    @model_validator(mode="after")
    def _one(self) -> Sound:
        given = [k for k in ("theme", "melody", "chords", "track") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"a sound has exactly one recipe (theme, melody, chords or track), got {given or 'none'}")
        return self


# the operations an audio expression may call (see the module docstring)
OPERATIONS = ("voice", "sound", "seq", "overlay", "concat", "zeros", "zeros_like", "mute", "len", "int", "max",
              # sets with a tag: sources, placing, and the logged checks (see CheckedKit)
              "say", "rec", "gm", "times", "looped", "fade", "counted", "placed", "measured", "louder", "events",
              "first_onset")
_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp,
          ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.USub, ast.Subscript, ast.Slice, ast.keyword)


def check_expr(src: str) -> str:
    """src, if it is an audio expression the builder evaluates (only OPERATIONS called, by name); else ValueError."""
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"not an expression: {src!r} ({e.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ValueError(f"{type(node).__name__} is not allowed in an audio expression: {src!r}")  # noqa: TRY004 (pydantic reports ValueError)
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in OPERATIONS):
            raise ValueError(f"only {', '.join(OPERATIONS)} may be called: {src!r}")
    return src


def _names_ok(v: dict[str, str]) -> dict[str, str]:
    for name, src in v.items():
        if not name.isidentifier() or name in OPERATIONS or name == "SR":
            raise ValueError(f"{name!r} cannot be bound by let")
        check_expr(src)
    return v


class Scene(_Strict):
    """A rubric scene: the positive wording on the audio, the hard negatives' wordings on the same audio, and
    (if given) the positive wording on the audio without one sound ('missing')."""

    id: str
    let: dict[str, str] = {}
    audio: str
    missing: str | None = None
    positive: str
    negatives: dict[Literal["order", "gender", "extra", "count"], str]
    measure: list[str] = []

    _let = field_validator("let")(classmethod(lambda cls, v: _names_ok(v)))
    _measure = field_validator("measure")(classmethod(lambda cls, v: [check_expr(x) for x in v]))

    @field_validator("audio", "missing")
    @classmethod
    def _expr(cls, v: str | None) -> str | None:
        return v if v is None else check_expr(v)


class EditBase(_Strict):
    """An edit base: the instruction, the original, the real edit and the wrong edits (a no-op is added)."""

    id: str
    kind: Literal["add", "delete", "replace"]
    instruction: str
    let: dict[str, str] = {}
    original: str
    real: str
    wrong: dict[Literal["wrong_sound", "wrong_place", "wrong_target", "partial", "deleted_only"], str]
    measure: list[str] = []

    _let = field_validator("let")(classmethod(lambda cls, v: _names_ok(v)))
    _measure = field_validator("measure")(classmethod(lambda cls, v: [check_expr(x) for x in v]))

    @field_validator("original", "real")
    @classmethod
    def _expr(cls, v: str) -> str:
        return check_expr(v)

    @field_validator("wrong")
    @classmethod
    def _wrong(cls, v: dict[str, str]) -> dict[str, str]:
        for src in v.values():
            check_expr(src)
        return v


class Unlike(_Strict):
    """What an espeak-ng voice of a set with a tag must not sound like on its test sentence (besides, for an
    English voice, every espeak-ng voice of `earlier`): default 'en-us' (en-us's default voice, cached as
    default_en-us.wav), default 'language' (its language's default voice, default_<lang>_<id>.wav), or
    same_language_of (its language's default voice and these sets' espeak-ng voices of its language,
    other_<voice>_<id>.wav)."""

    default: Literal["en-us", "language"] | None = None
    same_language_of: list[str] | None = None
    earlier: list[str] = ["v1", "v2", "v3", "v4", "v5", "v6"]


class Checks(_Strict):
    """voice_band: voices measured before the build (f0 band, not the engine's default voice), in this order;
    unlike_sets: the voice_band voices must also differ from every other espeak-ng voice of these sets.
    Sets with a tag check every voice (band on its test sentence, `unlike`), every spoken line, every stated
    count and time, and print the summary fields `report` names (edit_variants, line_f0_hz, times_checked as
    time_format of each, clips: every clip 2-10 s and not silent)."""

    voice_band: list[str] = []
    unlike_sets: list[str] = []
    unlike: Unlike = Unlike()
    report: list[Literal["edit_variants", "line_f0_hz", "times_checked", "clips"]] = []
    time_format: str = "{0}: {1:.2f} (allowed {2}-{3})"
    ensure_ascii: bool = True


class SetSpec(_Strict):
    name: str
    tag: str | None = None  # names the cached sources v<tag>_* (speech), r<tag>_* (recordings), g<tag>_* (MIDI)
    voices: dict[str, Voice]
    sounds: dict[str, Sound]
    recordings: dict[str, Recording] = {}
    checks: Checks = Checks()
    rubric: list[Scene]
    edit: list[EditBase]


def set_names() -> list[str]:
    """The sets that have a data file, in build order (v1, v2, ..., v10, ...)."""
    return sorted((p.parent.name for p in SETS.glob("*/set.yaml")), key=lambda n: (len(n), n))


def load_set(name: str) -> SetSpec:
    """The validated data file of set name (sets/<name>/set.yaml)."""
    p = SETS / name / "set.yaml"
    if not p.exists():
        raise SystemExit(f"no held-out set {name!r}; known: {', '.join(set_names())}")
    spec = SetSpec.model_validate(yaml.safe_load(p.read_text(encoding="utf-8")))
    if spec.name != name:
        raise ValueError(f"{p.parent.name}/set.yaml names itself {spec.name!r}")
    return spec


# ---------------------------------------------------------------- operations


def _load(p: Path | str) -> np.ndarray:
    return aio.load(p, sr=SR, mono=True).astype(np.float32)


def seq(parts: list[np.ndarray], gap_s: float = 0.4, lead_s: float = 0.2, tail_s: float = 0.3) -> np.ndarray:
    """The parts one after another, gap_s apart, with lead_s of silence before and tail_s after."""
    gap = np.zeros(int(gap_s * SR), np.float32)
    out = [np.zeros(int(lead_s * SR), np.float32)]
    for i, p in enumerate(parts):
        out += ([gap] if i else []) + [p]
    out.append(np.zeros(int(tail_s * SR), np.float32))
    return np.concatenate(out)


def overlay(base: np.ndarray, other: np.ndarray, at_s: float, gain_db: float) -> np.ndarray:
    """base with other added from at_s on at gain_db (the result as long as the longer of the two)."""
    a = int(at_s * SR)
    n = max(len(base), a + len(other))
    y = np.zeros(n, np.float32)
    y[: len(base)] += base
    y[a: a + len(other)] += other * np.float32(10 ** (gain_db / 20))
    return y


def mute(y: np.ndarray, a: int, b: int) -> np.ndarray:
    """A copy of y with samples a..b silenced (a delete done in place)."""
    y = y.copy()
    y[a:b] = 0.0
    return y


def zeros(n: int) -> np.ndarray:
    return np.zeros(n, np.float32)


def write(path: Path, y: np.ndarray) -> str:
    """Write y as 16 kHz mono, scaled to peak 0.95 only if it peaks above that; the path written."""
    peak = float(np.max(np.abs(y))) or 1.0
    return str(aio.write_wav(path, (y / max(peak, 1.0) * 0.95 if peak > 0.95 else y).astype(np.float32), SR))


class Kit:
    """Makes and caches one set's sources in OUT/src (speech v_<key>_<sha1 of text>.wav, sounds s_<name>.wav)."""

    def __init__(self, out: Path, spec: SetSpec | None = None):
        self.d = out / "src"
        self.d.mkdir(parents=True, exist_ok=True)
        self.spec = spec

    def voice(self, key: str, text: str, voices: dict[str, Voice] | None = None) -> np.ndarray:
        """Voice key (of voices, else of the set) saying text."""
        v = (voices if voices is not None else self.spec.voices)[key]
        p = self.d / f"v_{key}_{hashlib.sha1(text.encode()).hexdigest()[:10]}.wav"
        if not p.exists():
            synth.speech(text, p, voice=v.voice, engine=v.engine)
        return _load(p)

    def sound(self, name: str) -> np.ndarray:
        p = self.d / f"s_{name}.wav"
        if not p.exists():
            self.render(name, p)
        return _load(p)

    def render(self, name: str, p: Path) -> None:
        """Write the set's sound recipe name to p."""
        r = self.spec.sounds[name]
        if r.theme is not None and r.theme.first_s is not None:
            y = _load(synth.sound_file(r.theme.theme, self.d / f"raw_{name}.wav"))[: int(r.theme.first_s * SR)]
            aio.write_wav(p, y, SR)
        elif r.theme is not None:
            synth.sound_file(r.theme.theme, p)
        elif r.melody is not None:
            synth.melody(r.melody.notes, p, note_s=r.melody.note_s, lead_s=0.1, program=r.melody.program)
        elif r.chords is not None:
            synth.triads(r.chords.chords, p, chord_s=r.chords.chord_s, lead_s=0.1, program=r.chords.program)
        else:
            t = r.track
            synth.midi_track([(0.1 + t.gap_s * i, t.dur_s, t.pitch, t.velocity) for i in range(t.n)], p,
                             program=t.program, channel=t.channel)

    def check_voice(self, key: str) -> tuple[bool, float | None]:
        """(does the voice's median f0 fit its label's band and is it not its engine's default voice, the median
        f0) over the test sentence (librosa pYIN)."""
        import librosa

        y = self.voice(key, TEST_SENTENCE)
        f0, _, _ = librosa.pyin(y.astype(np.float64), fmin=60, fmax=400, sr=SR)
        f0 = f0[~np.isnan(f0)]
        hz = float(np.median(f0)) if len(f0) else None
        v = self.spec.voices[key]
        ok = hz is not None and (hz <= MALE_MAX_HZ if v.gender == "male" else hz >= FEMALE_MIN_HZ)
        if ok and v.engine == "espeak":  # an unknown variant falls back to the language's default voice
            lang = v.voice.split("+")[0]
            d = self.d / f"default_{lang}.wav"
            if not d.exists():
                synth.speech(TEST_SENTENCE, d, voice=lang, engine="espeak")
            dv = _load(d)
            ok = not (len(dv) == len(y) and np.allclose(dv, y))
        return ok, hz

    def operations(self) -> dict:
        """What an audio expression may call (OPERATIONS), by name, and SR."""
        return {"voice": self.voice, "sound": self.sound, "seq": seq, "overlay": overlay, "concat": np.concatenate,
                "zeros": zeros, "zeros_like": np.zeros_like, "mute": mute, "len": len, "int": int, "max": max,
                "SR": SR}

    def evaluate(self, src: str, env: dict) -> object:
        """The value of audio expression src with the names bound so far (env)."""
        ops = self.operations()
        code = compile(ast.parse(check_expr(src), mode="eval"), f"<{self.spec.name}>", "eval")
        try:
            return eval(code, {"__builtins__": {}}, {**env, **ops})
        except NameError as e:
            raise ValueError(f"set {self.spec.name}: {e} in {src!r}") from None


def voices_of(*names: str) -> dict[str, Voice]:
    """The voices of these sets (one table, in set order)."""
    out: dict[str, Voice] = {}
    for name in names:
        out.update(load_set(name).voices)
    return out


def check_voices(k: Kit) -> dict:
    """The voices the set's checks name, measured in order; stops on the first that fails."""
    spec, checked = k.spec, {}
    others = {o: v for o, v in voices_of(*spec.checks.unlike_sets).items() if v.engine == "espeak"}
    for key in spec.checks.voice_band:
        v = spec.voices[key]
        ok, hz = k.check_voice(key)
        checked[key] = {"gender": v.gender, "median_f0_hz": round(hz, 1) if hz else None, "fits_band": ok}
        if not ok:
            raise SystemExit(f"voice {key} ({v.voice}) measures {hz} Hz: not a {v.gender} voice by the documented "
                             "bands; pick another")
    if spec.checks.unlike_sets:  # also unlike every other espeak-ng voice of those sets
        for key in spec.checks.voice_band:
            y = k.voice(key, TEST_SENTENCE)
            same = [o for o in others if o != key
                    and len(w := k.voice(o, TEST_SENTENCE, others)) == len(y) and np.allclose(w, y)]
            checked[key]["same_audio_as"] = same
            if same:
                raise SystemExit(f"voice {key} ({spec.voices[key].voice}) renders the same audio as {same}; "
                                 "pick another")
    return checked


# ---------------------------------------------------------------- sets with a tag (v7 on): sources and checks


def fade(y: np.ndarray, in_s: float = 0.01, out_s: float = 0.05) -> np.ndarray:
    """y with a linear fade in over in_s and out over out_s (each at most a quarter of y)."""
    y = y.astype(np.float32).copy()
    a, b = min(len(y) // 4, int(in_s * SR)), min(len(y) // 4, int(out_s * SR))
    if a:
        y[:a] *= np.linspace(0, 1, a, dtype=np.float32)
    if b:
        y[-b:] *= np.linspace(1, 0, b, dtype=np.float32)
    return y


def peak(y: np.ndarray, to: float) -> np.ndarray:
    top = float(np.max(np.abs(y))) or 1.0
    return (y * (to / top)).astype(np.float32)


def events(y: np.ndarray, thr_db: float = -25.0, merge_s: float = 0.1, min_s: float = 0.03) -> list[tuple[float, float]]:
    """Separate sound events (start s, end s): runs of 10 ms frames whose RMS is within thr_db of the loudest
    frame, runs closer than merge_s joined, runs shorter than min_s dropped."""
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


def first_onset(y: np.ndarray) -> float:
    """When the first sound event of y starts, in s."""
    return events(y)[0][0]


def active_db(y: np.ndarray) -> float:
    """RMS level (dB) of y over its events only (so silence around a sound does not lower it)."""
    m = np.zeros(len(y), bool)
    for a, b in events(y):
        m[int(a * SR): int(b * SR)] = True
    return float(20 * np.log10(np.sqrt(np.mean(y[m].astype(np.float64) ** 2)) + 1e-12))


def median_f0(y: np.ndarray) -> float | None:
    """Median f0 (librosa pYIN, 60-400 Hz) over the voiced frames of y; None if none is voiced."""
    import librosa

    f0, _, _ = librosa.pyin(y.astype(np.float64), fmin=60, fmax=400, sr=SR)
    f0 = f0[~np.isnan(f0)]
    return float(np.median(f0)) if len(f0) else None


def fits(gender: str, hz: float | None) -> bool:
    return hz is not None and (hz <= MALE_MAX_HZ if gender == "male" else hz >= FEMALE_MIN_HZ)


def text_id(text: str) -> str:
    """The 10 hex digits (sha1) that name a text's cached audio file."""
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def times(parts: list[np.ndarray], gap_s: float) -> np.ndarray:
    """The parts one after another with gap_s of silence between (no lead or tail)."""
    gap = np.zeros(int(gap_s * SR), np.float32)
    out: list[np.ndarray] = []
    for i, y in enumerate(parts):
        out += ([gap] if i else []) + [y]
    return np.concatenate(out)


def cat_entry(cat: Path, i: int, title: str) -> bytes:
    """Sound i of an OpenSFX .cat (a table of (offset | 1 << 31, size) pairs, then per sound a length-prefixed
    title and a RIFF file), after checking that its title starts with title."""
    b = cat.read_bytes()
    off, size = struct.unpack_from("<II", b, 8 * i)
    blob = b[off & 0x7FFFFFFF: (off & 0x7FFFFFFF) + size]
    name = blob[1: 1 + blob[0]].decode("latin-1")
    if not name.startswith(title):
        raise SystemExit(f"{cat.name} entry {i} is {name!r}, not {title}")
    return blob[blob.find(b"RIFF"):]


def rcc_entry(rcc: Path, path: str) -> bytes:
    """The file path inside a Qt resource archive (the 'qres' format: a tree of name / flags / data-offset
    nodes; flag 1 is zlib with a 4-byte size prefix, flag 2 a folder)."""
    b = rcc.read_bytes()
    ver, tree, data, names = struct.unpack_from(">IIII", b, 4)
    size_node = 14 + (8 if ver >= 2 else 0)

    def name(o: int) -> str:
        n = struct.unpack_from(">H", b, names + o)[0]
        return b[names + o + 6: names + o + 6 + 2 * n].decode("utf-16-be")

    node = 0
    for part in path.split("/"):
        cnt, first = struct.unpack_from(">II", b, tree + node * size_node + 6)
        node = next((c for c in range(first, first + cnt)
                     if name(struct.unpack_from(">I", b, tree + c * size_node)[0]) == part), -1)
        if node < 0:
            raise SystemExit(f"{path} not in {rcc.name}")
    flags = struct.unpack_from(">H", b, tree + node * size_node + 4)[0]
    doff = struct.unpack_from(">I", b, tree + node * size_node + 10)[0]
    n = struct.unpack_from(">I", b, data + doff)[0]
    blob = b[data + doff + 4: data + doff + 4 + n]
    return zlib.decompress(blob[4:]) if flags & 1 else blob


def extracted(r: Recording) -> tuple[bytes, str]:
    """The bytes of an archived recording and the suffix of the file they are written to."""
    if r.entry is not None:
        return cat_entry(Path(r.file), r.entry, r.title or ""), ".wav"
    if r.file.endswith(".rcc"):
        return rcc_entry(Path(r.file), r.member or ""), Path(r.member or "").suffix
    with zipfile.ZipFile(r.file) as z:
        return z.read(r.member or ""), Path(r.member or "").suffix


def looped(y: np.ndarray, n_s: int) -> np.ndarray:
    """y repeated back to back until it is n_s samples long."""
    return np.tile(y, int(np.ceil(n_s / len(y))))[:n_s]


class CheckedKit(Kit):
    """Kit's cache folder for a set with a tag: its voices say lines (each logged, for the build to check
    against the voice's band), recordings and General MIDI sounds are cached under the tag, and every stated
    count (counted, placed) and time (at, louder) is logged for the build to check."""

    def __init__(self, out: Path, spec: SetSpec):
        super().__init__(out, spec)
        self.tag = spec.tag
        self.lines: list[tuple[str, str, np.ndarray]] = []
        self.counted_log: list[tuple[str, int, int]] = []
        self.onsets: list[tuple[str, float, float, float]] = []

    def say(self, key: str, text: str) -> np.ndarray:
        """Voice key saying text (cached as v<tag>_<key>_<text id>.wav), logged in self.lines."""
        p = self.d / f"v{self.tag}_{key}_{text_id(text)}.wav"
        if not p.exists():
            self.speak(key, text, p)
        y = _load(p)
        self.lines.append((key, text, y))
        return y

    def speak(self, key: str, text: str, p: Path) -> None:
        v = self.spec.voices[key]
        if v.engine in ("espeak", "flite"):
            synth.speech(text, p, voice=v.voice, engine=v.engine)
        elif v.engine == "festival":
            with tempfile.TemporaryDirectory() as tmp:
                txt, raw = Path(tmp) / "t.txt", Path(tmp) / "raw.wav"
                txt.write_bytes(text.encode(v.encoding))
                subprocess.run(["text2wave", "-eval", f"(voice_{v.voice})", "-o", str(raw), str(txt)], check=True,
                               capture_output=True)
                if not raw.exists():  # text2wave exits 0 when a voice's language files are missing
                    raise SystemExit(f"festival voice {v.voice} wrote no audio: is its language package installed? "
                                     "(see the set's PROVENANCE.md)")
                aio.write_wav(p, peak(_load(raw), 0.7), SR)
        else:  # recorded prompts: each file trimmed to its speech (events at -35 dB), gap_s apart
            parts = []
            for stem in text.split():
                file = f"{v.prefix}{stem}{v.ext}"
                if v.archive is not None:
                    raw = self.d / f"x{self.tag}_{key}_{stem}{v.ext}"
                    with zipfile.ZipFile(v.archive) as z:
                        raw.write_bytes(z.read(f"{v.folder}/{file}"))
                    y = _load(raw)
                else:
                    y = self.prompt(Path(v.folder or "") / file)
                ev = events(y, thr_db=-35.0)
                parts.append(fade(y[max(0, int((ev[0][0] - 0.03) * SR)): int((ev[-1][1] + 0.05) * SR)]))
            aio.write_wav(p, peak(times(parts, v.gap_s), 0.7), SR)

    @staticmethod
    def prompt(p: Path) -> np.ndarray:
        """A recorded prompt at 16 kHz mono; GSM 6.10 files are decoded by sox first."""
        if p.suffix != ".gsm":
            return _load(p)
        with tempfile.TemporaryDirectory() as tmp:
            w = Path(tmp) / "x.wav"
            subprocess.run(["sox", str(p), str(w)], check=True, capture_output=True)
            return _load(w)

    def rec(self, name: str) -> np.ndarray:
        """Recording name (cached as r<tag>_<name>.wav): cut from start to end s, faded, peak 0.5."""
        p = self.d / f"r{self.tag}_{name}.wav"
        if not p.exists():
            r = self.spec.recordings[name]
            src: Path | str = r.file
            if r.entry is not None or r.member is not None:
                raw, suffix = extracted(r)
                src = self.d / f"x{self.tag}_{name}{suffix}"
                src.write_bytes(raw)
            y = _load(src)
            y = y[int(r.start * SR): int(r.end * SR) if r.end is not None else len(y)]
            aio.write_wav(p, peak(fade(y), 0.5), SR)
        return _load(p)

    def gm(self, name: str) -> np.ndarray:
        """The set's General MIDI sound name (a melody or chords recipe), cached as g<tag>_<name>.wav."""
        p = self.d / f"g{self.tag}_{name}.wav"
        if not p.exists():
            self.render(name, p)
        return _load(p)

    def espeak(self, voice: str, text: str, file: str) -> np.ndarray:
        """espeak-ng voice saying text, cached as file (not logged as a spoken line)."""
        p = self.d / file
        if not p.exists():
            synth.speech(text, p, voice=voice, engine="espeak")
        return _load(p)

    def unlike(self, v: Voice, test: str) -> dict[str, np.ndarray]:
        """The audio espeak-ng voice v must not match on its test sentence (see Unlike)."""
        u, base = self.spec.checks.unlike, v.voice.split("+", maxsplit=1)[0]
        if u.default == "en-us":
            out = {"default en-us": self.espeak("en-us", test, "default_en-us.wav")}
        elif u.default == "language":
            out = {f"default {base}": self.espeak(base, test, f"default_{base}_{text_id(test)}.wav")}
        else:
            same = [w.voice for w in voices_of(*(u.same_language_of or [])).values()
                    if w.engine == "espeak" and w.language == v.language]
            out = {o: self.espeak(o, test, f"other_{o}_{text_id(test)}.wav") for o in [base, *same]}
        if v.language == "English":  # every espeak-ng voice of the earlier sets (all English)
            earlier = voices_of(*u.earlier)
            out.update({o: self.voice(o, test, earlier) for o, w in earlier.items() if w.engine == "espeak"})
        return out

    def counted(self, label: str, y: np.ndarray, n: int) -> np.ndarray:
        """y, after logging that a wording states n separate events in it (the build checks events(y))."""
        self.counted_log.append((label, n, len(events(y))))
        return y

    def placed(self, label: str, name: str, n: int, gap_s: float) -> np.ndarray:
        """Recording name placed n times, gap_s apart, logged as 'label xn' to hold n events."""
        return self.counted(f"{label} x{n}", times([self.rec(name)] * n, gap_s), n)

    def measured(self, label: str, t: float, lo: float, hi: float) -> float:
        """Log a measured time (or level) t that the build checks lies within lo..hi."""
        self.onsets.append((label, t, lo, hi))
        return t

    def louder(self, label: str, a: np.ndarray, b: np.ndarray, lo: float, hi: float) -> float:
        """Log how many dB a (the sound a wording calls louder) is above b, measured over their events."""
        return self.measured(label, active_db(a) - active_db(b), lo, hi)

    def operations(self) -> dict:
        return {**super().operations(), "say": self.say, "rec": self.rec, "gm": self.gm, "times": times,
                "looped": looped, "fade": fade, "counted": self.counted, "placed": self.placed, "measured": self.measured,
                "louder": self.louder, "events": events, "first_onset": first_onset}


def require(spec: SetSpec) -> None:
    """Stop unless every recording and prompt folder of a set with a tag is installed."""
    paths = [Path(r.file) for r in spec.recordings.values()]
    paths += [Path(v.archive or v.folder) for v in spec.voices.values() if v.folder]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"set {spec.name}: recordings not found (install the Debian packages its PROVENANCE.md "
                         f"names): {missing}")


def check_tagged_voices(k: CheckedKit) -> dict:
    """Each voice on its test sentence: its median f0 inside its label's band, and an espeak-ng voice's audio
    unlike the voices Unlike names; stops on the first that fails. The test sentences are dropped from k.lines."""
    out = {}
    for key, v in k.spec.voices.items():
        test = v.test or TEST_SENTENCE
        y = k.say(key, test)
        hz = median_f0(y)
        rec = {"engine": v.engine, "voice": v.voice, "gender": v.gender, "language": v.language,
               "median_f0_hz": round(hz, 1) if hz else None, "fits_band": fits(v.gender, hz)}
        if v.engine == "espeak":
            rec["same_audio_as"] = [o for o, w in k.unlike(v, test).items() if len(w) == len(y) and np.allclose(w, y)]
        out[key] = rec
        if not rec["fits_band"] or rec.get("same_audio_as"):
            raise SystemExit(f"voice {key} ({v.voice}) fails its check: {rec}; pick another")
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


def checked_summary(k: CheckedKit, voices: dict, r: list[dict], e: list[dict], out: Path) -> dict:
    """Check what a set with a tag logged while it was built (every spoken line inside its voice's band, every
    stated count and time what the audio holds; with 'clips' reported, every clip's length and level), stop at
    the first check that fails; else the summary."""
    c = k.spec.checks
    bad_lines, line_hz = [], {}
    for key, text, y in k.lines:
        hz = median_f0(y)
        line_hz.setdefault(key, set()).add(round(hz or 0))
        if not fits(k.spec.voices[key].gender, hz):
            bad_lines.append((key, text, hz))
    if bad_lines:
        raise SystemExit(f"spoken lines outside their voice's band: {bad_lines}")
    bad_counts = [x for x in k.counted_log if x[1] != x[2]]
    if bad_counts:
        raise SystemExit(f"stated counts that the audio does not hold (label, stated, measured): {bad_counts}")
    bad_times = [t for t in k.onsets if not t[2] <= t[1] <= t[3]]
    if bad_times:
        raise SystemExit("stated times that the audio does not hold (label, measured, lowest, highest): "
                         f"{bad_times}")
    s = {"set": k.spec.name, "rubric_items": len(r), "rubric_positives": sum(i["aligned"] for i in r),
         "rubric_scenes": len({i["source_id"] for i in r}),
         "rubric_kinds": {kd: sum(i["negative_kind"] == kd for i in r)
                          for kd in ("order", "gender", "extra", "count", "missing")},
         "edit_items": len(e), "edit_bases": len({i["base"] for i in e}),
         "edit_kinds": {kd: len({i["base"] for i in e if i["kind"] == kd}) for kd in ("add", "delete", "replace")}}
    if "edit_variants" in c.report:
        s["edit_variants"] = {v: sum(i["variant"] == v for i in e) for v in sorted({i["variant"] for i in e})}
    s.update(voices_checked=voices, lines_checked=len(k.lines))
    if "line_f0_hz" in c.report:
        s["line_f0_hz"] = {key: [min(v), max(v)] for key, v in line_hz.items()}
    s["counts_checked"] = sorted({f"{x[0]}: {x[2]}" for x in k.counted_log})
    if "times_checked" in c.report:
        s["times_checked"] = [c.time_format.format(*t) for t in k.onsets]
    if "clips" in c.report:
        s["clips"] = check_files(out)
    s["out"] = str(out)
    return s


def build_rubric(out: Path, scenes: list[dict]) -> list[dict]:
    """Write each scene's clips and rubric/items.jsonl (the positive, each negative, and 'missing')."""
    d = out / "rubric"
    d.mkdir(parents=True, exist_ok=True)
    items = []
    for s in scenes:
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


def build_edits(out: Path, bases: list[dict]) -> list[dict]:
    """Write each base's clips (and its no-op, a byte copy of the original) and edit/items.jsonl."""
    d = out / "edit"
    d.mkdir(parents=True, exist_ok=True)
    items = []
    for b in bases:
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


def build(name: str, out: Path) -> dict:
    """Build set name into out; the summary (counts, voices checked)."""
    return build_spec(load_set(name), out)


def build_spec(spec: SetSpec, out: Path) -> dict:
    """Build the set spec describes into out (its voices checked first; a set with a tag also checks its spoken
    lines, stated counts and times after the build); the summary."""
    if spec.tag is not None:
        require(spec)
        k: Kit = CheckedKit(out, spec)
        checked = check_tagged_voices(k)
    else:
        k = Kit(out, spec)
        checked = check_voices(k)
    env: dict = {}

    def bind(item: Scene | EditBase) -> None:
        for var, src in item.let.items():
            env[var] = k.evaluate(src, env)
        for src in item.measure:
            k.evaluate(src, env)

    scenes = []
    for s in spec.rubric:
        bind(s)
        scenes.append({"id": s.id, "full": k.evaluate(s.audio, env), "positive": s.positive,
                       "negatives": dict(s.negatives),
                       "missing": None if s.missing is None else k.evaluate(s.missing, env)})
    r = build_rubric(out, scenes)
    env.clear()
    bases = []
    for b in spec.edit:
        bind(b)
        bases.append({"id": b.id, "kind": b.kind, "instruction": b.instruction,
                      "original": k.evaluate(b.original, env), "real": k.evaluate(b.real, env),
                      "wrong": {w: k.evaluate(src, env) for w, src in b.wrong.items()}})
    e = build_edits(out, bases)
    if isinstance(k, CheckedKit):
        return checked_summary(k, checked, r, e, out)
    return {"set": spec.name, "rubric_items": len(r), "rubric_positives": sum(i["aligned"] for i in r),
            "edit_items": len(e), "edit_bases": len({i["base"] for i in e}), "voices_checked": checked,
            "out": str(out)}


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(set_: str = typer.Option("v6", "--set", help="the set to build (a folder of evals/judges/sets)"),
         out: Path = typer.Option(Path(__file__).resolve().parent / "heldout", "--out",
                                  help="folder for src/, rubric/items.jsonl and edit/items.jsonl"),
         list_: bool = typer.Option(False, "--list", help="print the known sets and exit")) -> None:
    """Build a held-out rubric and edit benchmark (audio + items.jsonl files) from its data file."""
    if list_:
        print("\n".join(set_names()))
        return
    print(json.dumps(build(set_, out), ensure_ascii=load_set(set_).checks.ensure_ascii))


if __name__ == "__main__":
    app()
