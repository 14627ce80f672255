"""Build the competence bank: what each deciding check of the answer step was built for.

    .venv/bin/python evals/competence/build.py [--write]

Reads evals/competence/kinds.toml (check -> the kinds it was built for; questions about what was said), the
synthetic generator's `dev` wording bank, the retired blind sets' TOML files and the property vocabulary's
example questions, and writes audiomind/reasoning/data/competence.json: one entry (check, question, source) per question, plus the anchors
of the shrink (audiomind/reasoning/competence.py).

The anchor `familiar` is measured, not chosen: the 10th percentile of the similarity of the generator's
*held-out* wordings (never in the bank) to the bank of the check that decides their kind. A new wording of a
kind the policy was built for is that close to its bank nine times in ten. Prints the held-out similarity
percentiles and how many held-out wordings the shrink would touch.
"""

from __future__ import annotations

import json
import string
import sys
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from audiomind.embedded.text import embed
from audiomind.reasoning import competence

KINDS = Path(__file__).with_name("kinds.toml")
PHRASINGS = ROOT / "audiomind" / "bench" / "tasks" / "synthetic_phrasings.toml"
UNSEEN = ROOT / "evals" / "unseen"
VOCABULARY = ROOT / "lexicon" / "properties.toml"


def filled(template: str, slots: dict) -> list[str]:
    """A template's questions with every slot table that fills it (the template itself when it has none)."""
    if not any(f for _, f, _, _ in string.Formatter().parse(template) if f):
        return [template]
    out = []
    for tables in slots.values():
        for s in tables:
            try:
                out.append(template.format(**s))
            except KeyError:
                continue
    if not out:  # slots the generator fills in code ('the word "{word}"'): the slot's name stands in
        out = [template.format(**{f: f for _, f, _, _ in string.Formatter().parse(template) if f})]
    return list(dict.fromkeys(out))


def wordings(bank: str) -> dict[str, list[str]]:
    """kind -> the generator's questions of one wording bank ('dev' or 'heldout')."""
    data = tomllib.loads(PHRASINGS.read_text())
    return {kind: [q for t in v[bank].get("questions", []) for q in filled(t, v[bank].get("slots", {}))]
            for kind, v in data.items() if bank in v}


def entries(table: dict) -> list[dict]:
    out = []
    dev = wordings("dev")
    for kind, checks in table["synthetic"].items():
        out += [{"check": c, "question": q, "source": f"synthetic/{kind}"} for c in checks for q in dev[kind]]
    sets: dict[str, list[dict]] = {}
    for key, checks in table["development"].items():
        name, kind = key.split("/")
        if name not in sets:
            sets[name] = tomllib.loads((UNSEEN / f"{name}.toml").read_text())["item"]
        qs = [it["question"] for it in sets[name] if it["kind"] == kind]
        if not qs:
            raise SystemExit(f"kinds.toml: no items of kind {key}")
        out += [{"check": c, "question": q, "source": key} for c in checks for q in qs]
    said = table.get("said", {})
    out += [{"check": c, "question": q, "source": "said/forms"} for c in said.get("checks", [])
            for q in said.get("questions", [])]
    vocab = tomllib.loads(VOCABULARY.read_text())
    for group, prefix in (("property", "property_"), ("selector", "select_")):
        for row in vocab.get(group, []):
            out += [{"check": prefix + row["name"], "question": q, "source": f"lexicon/{row['name']}"}
                    for q in row.get("question", [])]
    return out


def heldout_similarities(table: dict, bank: list[dict]) -> np.ndarray:
    """Each held-out wording's similarity to the bank questions of the checks that decide its kind."""
    held = wordings("heldout")
    sims: list[float] = []
    for kind, checks in table["synthetic"].items():
        if not held.get(kind):
            continue  # a kind whose questions are built in code (no held-out wording bank)
        mine = embed([e["question"] for e in bank if e["check"] in checks])
        sims += list((embed(held[kind]) @ mine.T).max(1))
    return np.array(sims)


def familiar_anchor(table: dict, bank: list[dict]) -> float:
    """The 10th percentile of the held-out wordings' similarity to their checks' banks."""
    return round(float(np.percentile(heldout_similarities(table, bank), 10)), 3)


def main(argv: list[str]) -> None:
    table = tomllib.loads(KINDS.read_text())
    bank = entries(table)
    sims_a = heldout_similarities(table, bank)
    familiar = familiar_anchor(table, bank)
    width = float(table["anchors"]["width"])
    pct = {p: round(float(np.percentile(sims_a, p)), 3) for p in (1, 5, 10, 25, 50)}
    touched = float(np.mean(sims_a < familiar))
    print(json.dumps({"entries": len(bank), "checks": len({e["check"] for e in bank}),
                      "heldout_wordings": len(sims_a), "heldout_similarity_percentiles": pct,
                      "familiar": familiar, "unfamiliar": round(familiar - width, 3),
                      "heldout_share_shrunk": round(touched, 3)}, indent=1))
    if "--write" in argv:
        out = competence.Bank(name="competence-" + table.get("name", "v1"), familiar=familiar, width=width,
                              note="built by evals/competence/build.py from evals/competence/kinds.toml",
                              entries=[competence.Entry(**e) for e in bank])
        competence.DATA.write_text(out.model_dump_json(indent=1) + "\n")
        print(f"wrote {competence.DATA.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
