"""Leave the machine ready to answer: what `audiomind models install` does after installing the carriers, so
that a newcomer's first question costs what any later new question costs.

A first question after install used to take 19 s where the same question in the next process took 1.4 s (13 s
of it in `perceive`): the whole difference was work done once per machine, not per question. Done here, once:

- models: every embedded model located (Whisper base assembled from its two carrier parts into the cache,
  YAMNet unzipped) and its files read once, into the page cache (`models`);
- wordnet: WordNet's parsed tables stored in the cache folder (audiomind.language.wordnet_cache), so that a process
  looks words up instead of parsing WordNet's files (1-2.5 s of CPU per process) (`wordnet`);
- tables: the MiniLM embeddings of the fixed lists the reasoning compares a question with (the router's family
  prototypes, the competence bank, each property row's phrases), stored in the embedding disk cache
  (audiomind.embedded.text: kept per exact list), and MiniLM's prepared weights, which later processes map
  instead of reading and transposing the safetensors (audiomind.embedded.minilm.load_weights) (`tables`);
- questions: the shipped examples' questions (not README command 1's clip: its first answer stays a first)
  asked once through the agent with a throw-away tool cache, so numba compiles and caches the kernels the tools
  reach beyond compile_librosa_kernels and the verifiers' label tables are embedded (`questions`).

Run as `python -m audiomind.warm` (what `models.install` does, in a fresh process after pip); each
step is best effort and says what it did and how long it took; a failed step is reported, not fatal.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from audiomind.resources import examples_dir

EXAMPLES = examples_dir()  # the repository's examples/, or the wheel's audiomind/_data/examples
README_CLIP = "two_speakers.wav"  # README command 1's clip: not asked here
EXTRA_QUESTIONS = [  # other families than the examples' own questions, on the same clips
    ("weather.wav", "How many different people speak in this recording?", ["1", "2", "3", "4"]),
    ("weather.wav", "Is the speaker a man or a woman?", ["A man", "A woman"]),
    ("phone_ring.wav", "Which sound is heard in the clip?",
     ["A telephone ringing", "A dog barking", "Rain falling", "A car engine"]),
    ("beeps.wav", "Does the sound get louder or quieter over time?", ["Louder", "Quieter", "It stays the same"]),
]


def models() -> str:
    """Locate every embedded model (assembling and unpacking where needed) and read its files once."""
    from audiomind.embedded import models as catalog

    usable, size = 0, 0
    for name in catalog.CATALOG:
        ok, where = catalog.check(name)
        if not ok:
            continue
        usable += 1
        for loc in where.split(", "):
            path = Path(loc)
            for f in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
                with open(f, "rb") as fh:
                    while chunk := fh.read(1 << 22):
                        size += len(chunk)
    return f"{usable} of {len(catalog.CATALOG)} located, {size / 1e6:.0f} MB read"


def wordnet() -> str:
    """WordNet's tables into the disk cache (kept when the cache already holds this WordNet's)."""
    from audiomind.language.wordnet import warm as warm_wordnet

    return warm_wordnet()


def tables() -> str:
    """Embed the fixed lists a question is compared with, into the embedding disk cache."""
    from audiomind.language.analysis import _prototype_matrix
    from audiomind.reasoning.competence import _embedded
    from audiomind.reasoning.property_facts import vocabulary
    from audiomind.reasoning.property_verifier import _semantic

    n = len(_prototype_matrix()[0]) + len(_embedded()[1])
    rows = vocabulary().property
    for row in rows:
        _semantic(["warm-up"], row)
    return f"{n} prototypes and bank questions, {len(rows)} property rows"


def questions() -> str:
    """Ask the shipped examples' questions (not README command 1's) with a throw-away tool cache."""
    from audiomind import AudioMind

    asked = []
    for line in (EXAMPLES / "questions.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["audio"] != README_CLIP:
            asked.append((item["audio"], item["question"], item["choices"]))
    asked += EXTRA_QUESTIONS
    with tempfile.TemporaryDirectory(prefix="audiomind-warm-") as tmp:
        agent = AudioMind(trace_dir=str(Path(tmp) / "traces"), cache_dir=str(Path(tmp) / "tools"))
        for clip, question, choices in asked:
            agent.ask(str(EXAMPLES / clip), question, choices)
    return f"{len(asked)} questions on {len({c for c, _, _ in asked})} clips"


STEPS: list[tuple[str, Callable[[], str]]] = [("models", models), ("wordnet", wordnet), ("tables", tables),
                                              ("questions", questions)]


def warm(steps: list[str] | None = None, out: Callable[[str], None] = print) -> dict[str, float | None]:
    """Run the steps (all by default); {step: seconds, None where it failed}."""
    from audiomind import config

    config.apply_process_env()
    done: dict[str, float | None] = {}
    for name, step in STEPS:
        if steps is not None and name not in steps:
            continue
        t0 = time.perf_counter()
        try:
            what = step()
            done[name] = time.perf_counter() - t0
            out(f"warm {name}: {what} ({done[name]:.1f} s)")
        except Exception as exc:  # noqa: BLE001 - best effort: a cold cache only costs the first question time
            done[name] = None
            out(f"warm {name}: skipped ({type(exc).__name__}: {exc})")
    return done


if __name__ == "__main__":
    warm(sys.argv[1:] or None)
