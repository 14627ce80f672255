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
- numbers: `SR`, `len`, `int`, `+ - * /`.

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
import sys
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
    engine: Literal["espeak", "flite"]
    voice: str
    gender: Literal["male", "female"]


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
OPERATIONS = ("voice", "sound", "seq", "overlay", "concat", "zeros", "zeros_like", "mute", "len", "int")
_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Constant, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp,
          ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.Subscript, ast.Slice, ast.keyword)


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

    _let = field_validator("let")(classmethod(lambda cls, v: _names_ok(v)))

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

    _let = field_validator("let")(classmethod(lambda cls, v: _names_ok(v)))

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


class Checks(_Strict):
    """voice_band: voices measured before the build (f0 band, not the engine's default voice), in this order;
    unlike_sets: the voice_band voices must also differ from every other espeak-ng voice of these sets."""

    voice_band: list[str] = []
    unlike_sets: list[str] = []


class SetSpec(_Strict):
    name: str
    voices: dict[str, Voice]
    sounds: dict[str, Sound]
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
        return _load(p)

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

    def evaluate(self, src: str, env: dict) -> object:
        """The value of audio expression src with the names bound so far (env)."""
        ops = {"voice": self.voice, "sound": self.sound, "seq": seq, "overlay": overlay, "concat": np.concatenate,
               "zeros": zeros, "zeros_like": np.zeros_like, "mute": mute, "len": len, "int": int, "SR": SR}
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
    """Build the set spec describes into out (its voices checked first); the summary."""
    k = Kit(out, spec)
    checked = check_voices(k)
    env: dict = {}

    def bind(lets: dict[str, str]) -> None:
        for var, src in lets.items():
            env[var] = k.evaluate(src, env)

    scenes = []
    for s in spec.rubric:
        bind(s.let)
        scenes.append({"id": s.id, "full": k.evaluate(s.audio, env), "positive": s.positive,
                       "negatives": dict(s.negatives),
                       "missing": None if s.missing is None else k.evaluate(s.missing, env)})
    r = build_rubric(out, scenes)
    env.clear()
    bases = []
    for b in spec.edit:
        bind(b.let)
        bases.append({"id": b.id, "kind": b.kind, "instruction": b.instruction,
                      "original": k.evaluate(b.original, env), "real": k.evaluate(b.real, env),
                      "wrong": {w: k.evaluate(src, env) for w, src in b.wrong.items()}})
    e = build_edits(out, bases)
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
    print(json.dumps(build(set_, out)))


if __name__ == "__main__":
    app()
