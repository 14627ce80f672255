"""Compare taggers per class on the real-recording set (evals/recordings/recordings.toml).

    .venv/bin/python evals/recordings/compare.py --set DIR [--tf-scores SCORES.json] [--name NAME]

DIR is a folder written by build.py. YAMNet runs here, through the project's own tagger
(`audiomind.tools.tagging.patch_scores`, unchanged); the TensorFlow taggers (musicnn, BirdNET) run in their
own virtualenv (tf_taggers.py) and are read from SCORES.json when given. Each tagger's labels become
AudioSet class names through label_maps.toml, and a tagger's ranking is its distinct AudioSet names by
clip score. A clip is right at top-k when one of its row's `accept` names is among the first k.

Taggers (a "+" is a fusion of two, defined below in `FUSIONS`, each a fixed rule, not fitted to this set):
  yamnet          the tagging tool's clip ranking: mean over 0.96 s patches, ties broken by the max
  yamnet-max      by the highest patch score (what the tool reports as peak_tags)
  yamnet-specific the yamnet ranking without the ontology's branch heads and scene classes
                  (label_maps.toml [yamnet] generic: "Animal", "Music", "Vehicle", ...)
  tool specific_tags  what the tagging tool now reports as `specific_tags`: the yamnet ranking without the
                  classes of audiomind/language/data/words.toml `generic_labels` (the list the verifiers use)
  MTT_musicnn, MTT_vgg, birdnet    each alone
  yamnet+birdnet  when one of yamnet-specific's top 3 is an animal class, BirdNET's names join its
                  ranking at their BirdNET score (a name's score is the larger of the two)
  yamnet+musicnn  when one of yamnet-specific's top 3 is a music class, musicnn's instrument and voice
                  names join its ranking at their musicnn score

Prints the per-class table (right/clips and ratio, top-1 and top-3, per tagger) and writes
evals/recordings/results/<name>.json with the table, each clip's top-3 per tagger, and run facts.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
import tomllib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
MAPS = tomllib.loads((HERE / "label_maps.toml").read_text())

Ranking = list[tuple[str, float]]  # AudioSet names, best first, with the score that put them there


def yamnet_labels() -> list[str]:
    from audiomind.embedded import models

    _, class_map = models.yamnet_paths()
    with open(class_map, newline="") as f:
        return [row["display_name"] for row in csv.DictReader(f)]


# YAMNet class index ranges (AudioSet ontology order in the class map): animals 67-131, music 132-276
ANIMAL = range(67, 132)
MUSIC = range(132, 277)


def yamnet_rankings(rows: list[dict], set_dir: Path) -> tuple[dict[str, Ranking], dict[str, Ranking], dict]:
    import soundfile as sf

    from audiomind.tools.tagging import patch_scores

    labels = yamnet_labels()
    by_mean: dict[str, Ranking] = {}
    by_max: dict[str, Ranking] = {}
    t0 = time.perf_counter()
    for r in rows:
        y, sr = sf.read(str(set_dir / r["audio"]), dtype="float32")
        if sr != 16000:
            raise SystemExit(f"{r['id']}: {sr} Hz, expected 16000 (rebuild with build.py)")
        s = patch_scores(y)
        mean, peak = s.mean(axis=0), s.max(axis=0)
        order = np.lexsort((-peak, -mean))  # = the tagging tool's clip-level order
        by_mean[r["id"]] = [(labels[i], float(mean[i])) for i in order[:25]]
        order = np.lexsort((-mean, -peak))
        by_max[r["id"]] = [(labels[i], float(peak[i])) for i in order[:25]]
    return by_mean, by_max, {"yamnet_seconds": round(time.perf_counter() - t0, 1)}


def birdnet_names(label: str) -> list[str]:
    exact = MAPS["birdnet"]["exact"]
    if label in exact:
        return exact[label]
    common = label.split("_", 1)[-1]
    head = common.replace("-", " ").split()[-1]
    for rule in MAPS["birdnet"]["rule"]:
        if head in rule["words"]:
            return rule["names"]
    return ["Bird"]


def to_ranking(scores: dict[str, float], mapper: Callable[[str], list[str]]) -> Ranking:
    best: dict[str, float] = {}
    for label, score in scores.items():
        for name in mapper(label):
            best[name] = max(best.get(name, 0.0), score)
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))


def fuse(base: Ranking, other: Ranking, gate: set[str], allowed: set[str] | None = None) -> Ranking:
    """`base` with `other`'s names joined at their own score (the larger wins) when one of base's top 3 is
    in `gate`; only names in `allowed` join, when given."""
    if not any(name in gate for name, _ in base[:3]):
        return base
    merged = dict(base)
    for name, score in other:
        if allowed is None or name in allowed:
            merged[name] = max(merged.get(name, 0.0), score)
    return sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))


def right_at(ranking: Ranking, accept: list[str], k: int) -> bool:
    return any(name in accept for name, _ in ranking[:k])


def table(rows: list[dict], rankings: dict[str, dict[str, Ranking]]) -> dict:
    classes = sorted({r["class"] for r in rows}, key=lambda c: (-sum(r["class"] == c for r in rows), c))
    out: dict = {}
    for tagger, rk in rankings.items():
        per: dict = defaultdict(lambda: {"clips": 0, "top1": 0, "top3": 0})
        for r in rows:
            for key in (r["class"], "all"):
                per[key]["clips"] += 1
                per[key]["top1"] += right_at(rk[r["id"]], r["accept"], 1)
                per[key]["top3"] += right_at(rk[r["id"]], r["accept"], 3)
        out[tagger] = {c: dict(per[c]) for c in [*classes, "all"]}
    return out


def render(tab: dict) -> str:
    taggers = list(tab)
    classes = list(next(iter(tab.values())))
    head = f"{'class':<15}{'clips':>6} " + " ".join(f"{t:>22}" for t in taggers)
    lines = [head, f"{'':<22}" + " ".join(f"{'top-1':>11}{'top-3':>11}" for _ in taggers)]
    for c in classes:
        n = tab[taggers[0]][c]["clips"]
        cells = []
        for t in taggers:
            d = tab[t][c]
            cells.append(f"{d['top1']:>3} {d['top1'] / n:>5.2f}  {d['top3']:>3} {d['top3'] / n:>5.2f} ")
        lines.append(f"{c:<15}{n:>6} " + " ".join(f"{x:>22}" for x in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=Path, required=True, help="folder written by build.py")
    ap.add_argument("--tf-scores", type=Path, default=None, help="JSON written by tf_taggers.py")
    ap.add_argument("--name", default="compare", help="results/<name>.json")
    ap.add_argument("--out-dir", type=Path, default=HERE / "results")
    a = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows = [json.loads(line) for line in (a.set / "manifest.jsonl").read_text().splitlines()]
    by_mean, by_max, facts = yamnet_rankings(rows, a.set)
    generic = set(MAPS["yamnet"]["generic"])
    specific = {i: [(n, s) for n, s in rk if n not in generic] for i, rk in by_mean.items()}
    from audiomind.language.text import GENERIC_LABELS  # the tagging tool's own list (its specific_tags)

    tool_generic = {g.lower() for g in GENERIC_LABELS}
    tool = {i: [(n, s) for n, s in rk if n.lower() not in tool_generic] for i, rk in by_mean.items()}
    rankings: dict[str, dict[str, Ranking]] = {"yamnet": by_mean, "yamnet-max": by_max, "yamnet-specific": specific,
                                               "tool specific_tags": tool}
    if a.tf_scores:
        tf = json.loads(a.tf_scores.read_text())
        facts["tf"] = {"seconds": tf.get("seconds"), "versions": tf.get("versions")}
        labels = yamnet_labels()
        animal = {labels[i] for i in ANIMAL}
        music = {labels[i] for i in MUSIC}
        for name, m in tf["models"].items():
            mapper = birdnet_names if name == "birdnet" else (lambda t: MAPS["musicnn"].get(t, []))
            rankings[name] = {r["id"]: to_ranking(m["clips"][r["id"]], mapper) for r in rows}
        if "birdnet" in rankings:
            rankings["yamnet+birdnet"] = {i: fuse(specific[i], rankings["birdnet"][i], animal) for i in by_mean}
        if "MTT_musicnn" in rankings:
            sources = {n for names in MAPS["musicnn"].values() for n in names} & (music - {"Music"})
            instruments = {n for n in sources if not n.endswith("music") and n not in {"Techno", "Opera",
                           "Country", "Heavy metal"}}
            rankings["yamnet+musicnn"] = {i: fuse(specific[i], rankings["MTT_musicnn"][i], music, instruments)
                                          for i in by_mean}
    tab = table(rows, rankings)
    print(render(tab))
    result = {
        "set": {"clips": len(rows), "seconds": round(sum(r["duration_s"] for r in rows), 1),
                "packages": sorted({f"{r['package']} {r['version']}" for r in rows})},
        "table": tab,
        "clips": {r["id"]: {"class": r["class"], "label": r["label"], "accept": r["accept"],
                            **{t: [[n, round(s, 3)] for n, s in rk[r["id"]][:3]] for t, rk in rankings.items()}}
                  for r in rows},
        "facts": facts,
    }
    a.out_dir.mkdir(parents=True, exist_ok=True)
    clips = result.pop("clips")
    body = json.dumps(result, indent=1, ensure_ascii=False)[:-2]  # one clip per line keeps diffs readable
    lines = [f" {json.dumps(i)}: {json.dumps(c, ensure_ascii=False)}" for i, c in clips.items()]
    (a.out_dir / f"{a.name}.json").write_text(body + ',\n "clips": {\n' + ",\n".join(lines) + "\n }\n}\n")
    print(f"wrote {a.out_dir / (a.name + '.json')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
