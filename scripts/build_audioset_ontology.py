"""Build `lexicon/audioset_ontology.json` from the AudioSet ontology (github.com/audioset/ontology,
ontology.json, CC BY-SA 4.0, Google Inc.): every class's name, description and direct parents, and which
classes YAMNet scores (its class map's mids). The offline judges use it to place a tagged class in its family
(a mandolin is a plucked string instrument, as a koto is) and to match a dictionary gloss of a word no class
is named after ('celesta') against the class descriptions.

    python scripts/build_audioset_ontology.py --ontology /path/to/ontology.json --commit d417d32
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[1]


def main(ontology: Path = typer.Option(..., "--ontology", help="ontology.json of audioset/ontology"),
         commit: str = typer.Option("", "--commit", help="the ontology repository's commit, for the record"),
         out: Path = typer.Option(ROOT / "lexicon" / "audioset_ontology.json", "--out")) -> None:
    from audiomind.embedded import models

    nodes = json.loads(ontology.read_text())
    by_id = {n["id"]: n for n in nodes}
    parents: dict[str, list[str]] = {n["id"]: [] for n in nodes}
    for n in nodes:
        for c in n["child_ids"]:
            parents[c].append(n["id"])
    _, class_map = models.yamnet_paths()
    with open(class_map, newline="") as f:
        yamnet = {row["mid"]: row["display_name"] for row in csv.DictReader(f)}
    classes = {}
    for n in nodes:
        name = yamnet.get(n["id"], n["name"])
        classes[name] = {"mid": n["id"], "description": n["description"].strip(),
                         "parents": [yamnet.get(p, by_id[p]["name"]) for p in parents[n["id"]]],
                         "yamnet": n["id"] in yamnet}
    missing = sorted(set(yamnet) - set(by_id))
    doc = {"source": "https://github.com/audioset/ontology ontology.json" + (f" at {commit}" if commit else ""),
           "license": "CC BY-SA 4.0 (Google Inc.); names, descriptions and the parent relation, unchanged",
           "yamnet_classes_without_node": [yamnet[m] for m in missing], "classes": classes}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=0, ensure_ascii=False, sort_keys=False) + "\n")
    print(json.dumps({"classes": len(classes), "yamnet": sum(c["yamnet"] for c in classes.values()),
                      "yamnet_without_node": len(missing), "out": str(out), "bytes": out.stat().st_size}))


if __name__ == "__main__":
    typer.run(main)
