"""Build the real-recording set (evals/recordings/recordings.toml) from Debian packages.

    .venv/bin/python evals/recordings/build.py --out DIR [--debs DEB_DIR] [--only ID ...] [--package PKG ...]

For each package the TOML names, the .deb of exactly the listed version is taken from DEB_DIR (default
~/.cache/audiomind/debs) or fetched there with `apt-get download PKG=VERSION` (no root needed, nothing is
installed). Only the listed files are read out of the package's data archive (nothing is unpacked to
disk); an `opensfx.cat` entry is cut out of the catalogue by its index. Each clip is converted with ffmpeg
to 16 kHz mono 16-bit PCM WAV, cut at 10 s, with ffmpeg's bit-exact flags and no metadata, so a rebuild
writes byte-identical files.

Writes DIR/audio/<id>.wav, DIR/licences/<package>.copyright (the package's own copyright file) and
DIR/manifest.jsonl (one line per clip: the TOML row plus duration_s, sha256 of the WAV and of the source
file). Audio is never committed to the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "recordings.toml"
SR = 16000
MAX_S = 10.0
MIN_S = 0.5
CLASSES = ("animals", "instruments", "alarms_bells", "tools_vehicles", "voices", "human_sounds", "household",
           "environment")


class BuildError(RuntimeError):
    pass


def load_table(path: Path = TABLE) -> list[dict]:
    rows = tomllib.loads(path.read_text())["clip"]
    seen: set[str] = set()
    for r in rows:
        for key in ("id", "package", "version", "path", "licence", "class", "label", "accept"):
            if key not in r:
                raise BuildError(f"row {r.get('id', '?')}: missing field {key!r}")
        if r["id"] in seen:
            raise BuildError(f"duplicate id {r['id']!r}")
        seen.add(r["id"])
        if r["class"] not in CLASSES:
            raise BuildError(f"row {r['id']}: unknown class {r['class']!r} (known: {', '.join(CLASSES)})")
        if not r["accept"]:
            raise BuildError(f"row {r['id']}: empty accept list")
    return rows


def deb_name(package: str, version: str) -> str:
    """The file name `apt-get download` gives (an epoch's ':' is written '%3a')."""
    return f"{package}_{version.replace(':', '%3a')}_"


def find_or_fetch_deb(package: str, version: str, deb_dir: Path) -> Path:
    deb_dir.mkdir(parents=True, exist_ok=True)
    prefix = deb_name(package, version)
    found = sorted(p for p in deb_dir.glob(prefix + "*.deb"))
    if not found:
        proc = subprocess.run(["apt-get", "download", f"{package}={version}"], check=False, cwd=deb_dir,
                              capture_output=True, text=True, timeout=600)
        found = sorted(p for p in deb_dir.glob(prefix + "*.deb"))
        if proc.returncode != 0 or not found:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
            raise BuildError(f"could not download {package}={version} with apt-get ({tail[0]}); "
                             f"run 'apt-get update', or put the .deb in --debs")
    deb = found[0]
    got = subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True,
                         check=True).stdout.strip()
    if got != version:
        raise BuildError(f"{deb.name}: version {got}, the table wants {version}")
    return deb


def read_members(deb: Path, paths: set[str]) -> dict[str, bytes]:
    """The listed files (paths inside the package, no leading './') from the .deb's data archive."""
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    out: dict[str, bytes] = {}
    assert proc.stdout is not None
    with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
        for m in tar:
            name = m.name.removeprefix("./")
            if name in paths and m.isfile():
                f = tar.extractfile(m)
                assert f is not None
                out[name] = f.read()
    proc.wait(timeout=60)
    missing = paths - set(out)
    if missing:
        raise BuildError(f"{deb.name}: not in the package: {', '.join(sorted(missing))}")
    return out


def cat_entry(cat: bytes, index: int) -> tuple[str, bytes]:
    """(title, RIFF bytes) of entry `index` of an OpenTTD sound catalogue (.cat): a table of
    (offset, size) pairs, then per entry a length-prefixed title followed by a WAV file."""
    first = struct.unpack("<I", cat[:4])[0] & 0x7FFFFFFF
    if index < 0 or index >= first // 8:
        raise BuildError(f"catalogue has {first // 8} entries, not {index + 1}")
    off, size = struct.unpack("<II", cat[index * 8 : index * 8 + 8])
    off &= 0x7FFFFFFF
    n = cat[off]
    title = cat[off + 1 : off + 1 + n].rstrip(b"\0").decode("latin1")
    wav = cat[off + 1 + n : off + size]
    if wav[:4] != b"RIFF":
        raise BuildError(f"catalogue entry {index} is not a WAV file")
    return title, wav


def convert(src: bytes, dst: Path) -> float:
    """ffmpeg: 16 kHz mono s16 WAV, at most MAX_S seconds, bit-exact and without metadata. Returns seconds."""
    with tempfile.NamedTemporaryFile(suffix=".src") as tmp:
        tmp.write(src)
        tmp.flush()
        cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", tmp.name, "-map_metadata", "-1",
               "-fflags", "+bitexact", "-flags:a", "+bitexact", "-ac", "1", "-ar", str(SR), "-t", str(MAX_S),
               "-c:a", "pcm_s16le", "-f", "wav", str(dst)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise BuildError(f"ffmpeg failed on {dst.name}: {proc.stderr.strip()[-300:]}")
    data = dst.read_bytes()
    i = data.find(b"data")
    if i < 0:
        raise BuildError(f"{dst.name}: no data chunk")
    n_bytes = struct.unpack("<I", data[i + 4 : i + 8])[0]
    return n_bytes / 2 / SR


def build(out: Path, deb_dir: Path, only: set[str] | None = None, packages: set[str] | None = None,
          quiet: bool = False) -> list[dict]:
    rows = load_table()
    if only:
        unknown = only - {r["id"] for r in rows}
        if unknown:
            raise BuildError(f"unknown ids: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["id"] in only]
    if packages:
        rows = [r for r in rows if r["package"] in packages]
    (out / "audio").mkdir(parents=True, exist_ok=True)
    (out / "licences").mkdir(parents=True, exist_ok=True)
    by_pkg: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        by_pkg[(r["package"], r["version"])].append(r)
    manifest: dict[str, dict] = {}
    for (pkg, ver), prow in sorted(by_pkg.items()):
        deb = find_or_fetch_deb(pkg, ver, deb_dir)
        copyright_path = f"usr/share/doc/{pkg}/copyright"
        files = read_members(deb, {r["path"] for r in prow} | {copyright_path})
        (out / "licences" / f"{pkg}.copyright").write_bytes(files[copyright_path])
        for r in prow:
            src = files[r["path"]]
            if "member" in r:
                title, src = cat_entry(src, int(r["member"]))
                if r.get("member_title") and f'"{r["member_title"]}"' not in title:
                    raise BuildError(f"{r['id']}: catalogue entry {r['member']} is {title[:60]!r}")
            dur = convert(src, out / "audio" / f"{r['id']}.wav")
            if dur < MIN_S:
                raise BuildError(f"{r['id']}: {dur:.2f} s is shorter than {MIN_S} s")
            wav = (out / "audio" / f"{r['id']}.wav").read_bytes()
            manifest[r["id"]] = {**r, "audio": f"audio/{r['id']}.wav", "duration_s": round(dur, 4),
                                 "sha256": hashlib.sha256(wav).hexdigest(),
                                 "source_sha256": hashlib.sha256(src).hexdigest(), "deb": deb.name}
        if not quiet:
            print(f"{pkg} {ver}: {len(prow)} clips", file=sys.stderr)
    ordered = [manifest[r["id"]] for r in rows]
    with open(out / "manifest.jsonl", "w") as f:
        f.writelines(json.dumps(m, sort_keys=True, ensure_ascii=False) + "\n" for m in ordered)
    return ordered


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="output folder (audio/, licences/, manifest.jsonl)")
    ap.add_argument("--debs", type=Path, default=Path(os.path.expanduser("~/.cache/audiomind/debs")),
                    help="where the .deb files are kept (fetched with apt-get download when absent)")
    ap.add_argument("--only", nargs="*", default=None, help="build only these clip ids")
    ap.add_argument("--package", nargs="*", default=None, help="build only the clips of these packages")
    a = ap.parse_args(argv)
    try:
        rows = build(a.out, a.debs, set(a.only) if a.only else None, set(a.package) if a.package else None)
    except BuildError as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 2
    total = sum(r["duration_s"] for r in rows)
    print(f"{len(rows)} clips, {total:.1f} s of audio, in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
