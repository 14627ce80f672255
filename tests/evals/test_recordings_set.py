"""The real-recording set as data (evals/recordings/recordings.toml, built by evals/recordings/build.py) and
the pieces of its comparison (compare.py) that need no model: every accepted name and every label-map
target is a YAMNet class, the catalogue reader cuts the right entry, the scoring counts what it should, and
the sound-icons clips build byte for byte (the recorded sha256 values are this environment's ffmpeg 5.1
output; another ffmpeg may resample to other samples, and the test then says which clip differs)."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
import struct
import sys
import wave
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REC = ROOT / "evals" / "recordings"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"recordings_{name}", REC / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


build = _load("build")
compare = _load("compare")

# icons-* clips as build.py wrote them from sound-icons 0.1-8 with ffmpeg 5.1.9 (Debian 12)
SHA256 = {
    "icons-canary-long": "f630641879a3a4b772f4c6c018fd80812d18076e10c45de9abf854acf11a2ba1",
    "icons-xylofon": "c02e95c61e57bebdb4a04466bcbf26a88c21cf6ab3e374e7d71f113372d431f3",
}


@pytest.fixture(scope="module")
def yamnet_names() -> set[str]:
    from audiomind.embedded import models

    try:
        _, class_map = models.yamnet_paths()
    except models.ModelUnavailable as e:
        pytest.skip(f"YAMNet class map not installed: {e}")
    with open(class_map, newline="") as f:
        return {row["display_name"] for row in csv.DictReader(f)}


def test_table_is_well_formed_and_large_enough():
    rows = build.load_table()
    assert len(rows) >= 100
    per_class = Counter(r["class"] for r in rows)
    for klass in ("animals", "instruments", "alarms_bells", "tools_vehicles", "voices"):
        assert per_class[klass] >= 5, per_class
    for r in rows:
        assert r["licence"] and r["version"] and r["label"]
        assert len(set(r["accept"])) == len(r["accept"]), r["id"]
        assert ("member" in r) == r["path"].endswith(".cat"), r["id"]
    # one version per package, so one .deb each
    versions = {(r["package"], r["version"]) for r in rows}
    assert len(versions) == len({p for p, _ in versions})


def test_accepted_names_and_map_targets_are_yamnet_classes(yamnet_names):
    for r in build.load_table():
        unknown = set(r["accept"]) - yamnet_names
        assert not unknown, (r["id"], unknown)
    targets = {n for names in compare.MAPS["musicnn"].values() for n in names}
    targets |= {n for names in compare.MAPS["birdnet"]["exact"].values() for n in names}
    targets |= {n for rule in compare.MAPS["birdnet"]["rule"] for n in rule["names"]}
    targets |= set(compare.MAPS["yamnet"]["generic"])
    assert targets - yamnet_names == set()


def test_birdnet_names_read_the_head_noun():
    assert compare.birdnet_names("Dog_Dog") == ["Dog"]
    assert compare.birdnet_names("Noise_Noise") == []
    assert compare.birdnet_names("Acris crepitans_Northern Cricket Frog") == ["Frog"]
    assert compare.birdnet_names("Passerella iliaca_Fox Sparrow") == ["Bird"]
    assert compare.birdnet_names("Columba palumbus_Common Wood-Pigeon") == ["Pigeon, dove"]
    assert compare.birdnet_names("Canis lupus_Gray Wolf") == ["Canidae, dogs, wolves"]


def test_scoring_and_fusion():
    rows = [{"id": "a", "class": "animals", "accept": ["Dog", "Bark"]},
            {"id": "b", "class": "animals", "accept": ["Cat"]},
            {"id": "c", "class": "instruments", "accept": ["Piano"]}]
    rk = {"a": [("Animal", 0.9), ("Dog", 0.8)], "b": [("Dog", 0.7), ("Music", 0.2), ("Bird", 0.1), ("Cat", 0.05)],
          "c": [("Piano", 0.3)]}
    tab = compare.table(rows, {"t": rk})["t"]
    assert tab["animals"] == {"clips": 2, "top1": 0, "top3": 1}
    assert tab["instruments"] == {"clips": 1, "top1": 1, "top3": 1}
    assert tab["all"] == {"clips": 3, "top1": 1, "top3": 2}
    base = [("Speech", 0.6), ("Music", 0.5), ("Singing", 0.4)]
    other = [("Piano", 0.9), ("Techno", 0.8)]
    assert compare.fuse(base, other, gate={"Animal"}) == base  # gate closed: unchanged
    fused = compare.fuse(base, other, gate={"Music"}, allowed={"Piano"})
    assert fused[0] == ("Piano", 0.9) and ("Techno", 0.8) not in fused


def test_catalogue_entry_is_cut_by_index():
    def wav(n: int) -> bytes:
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(b"\x01\x00" * n)
        return buf.getvalue()

    entries = [(b'"One". By A.\x00', wav(10)), (b'"Two". By B.\x00', wav(20))]
    header_len = 8 * len(entries)
    table, body, off = b"", b"", header_len
    for title, data in entries:
        blob = bytes([len(title)]) + title + data
        table += struct.pack("<II", off, len(blob))
        body += blob
        off += len(blob)
    cat = table + body
    title, data = build.cat_entry(cat, 1)
    assert title == '"Two". By B.' and data == entries[1][1]
    with pytest.raises(build.BuildError):
        build.cat_entry(cat, 2)


def test_sound_icons_clips_build_byte_for_byte(tmp_path):
    debs = tmp_path / "debs"
    try:
        first = build.build(tmp_path / "a", debs, packages={"sound-icons"}, quiet=True)
    except build.BuildError as e:
        if "apt-get" in str(e):
            pytest.skip(f"sound-icons could not be fetched here: {e}")
        raise
    second = build.build(tmp_path / "b", debs, packages={"sound-icons"}, quiet=True)
    assert [r["sha256"] for r in first] == [r["sha256"] for r in second]
    for r in first:
        path = tmp_path / "a" / r["audio"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == r["sha256"]
        with wave.open(str(path)) as w:
            assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
            assert build.MIN_S <= w.getnframes() / 16000 <= build.MAX_S
    got = {r["id"]: r["sha256"] for r in first if r["id"] in SHA256}
    assert got == SHA256
    assert (tmp_path / "a" / "licences" / "sound-icons.copyright").read_text().startswith("Format:")
