"""Adjective antonyms from WordNet 3.0's own data files (Debian's `wordnet-base`, /usr/share/wordnet, or
$AUDIOMIND_WORDNET_DIR): 'hot' -> 'cold'. A satellite adjective ('scorching') takes the antonyms of its head
('hot'). Empty when WordNet is not installed (`audiomind doctor` says so)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

WORDNET_DIRS = ("/usr/share/wordnet",)


def wordnet_dir() -> Path | None:
    env = os.environ.get("AUDIOMIND_WORDNET_DIR")
    for d in ([env] if env else []) + list(WORDNET_DIRS):
        if (Path(d) / "data.adj").is_file() and (Path(d) / "index.adj").is_file():
            return Path(d)
    return None


@lru_cache(maxsize=1)
def _adjectives() -> tuple[dict[str, list[int]], dict[int, tuple[list[str], list[tuple[str, int, int]]]]]:
    """(lemma -> synset offsets, offset -> (words, pointers (symbol, target offset, target word number)))."""
    d = wordnet_dir()
    if d is None:
        return {}, {}
    index: dict[str, list[int]] = {}
    for line in (d / "index.adj").read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(" "):
            continue
        f = line.split()
        n_ptr = int(f[3])
        n_syn = int(f[4 + n_ptr])
        index[f[0]] = [int(x) for x in f[6 + n_ptr: 6 + n_ptr + n_syn]]
    synsets: dict[int, tuple[list[str], list[tuple[str, int, int]]]] = {}
    for line in (d / "data.adj").read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(" "):
            continue
        f = line.split(" | ")[0].split()
        offset, n_words = int(f[0]), int(f[3], 16)
        words = [f[4 + 2 * i].split("(")[0].lower() for i in range(n_words)]
        k = 4 + 2 * n_words
        n_ptr = int(f[k])
        ptrs = []
        for j in range(n_ptr):
            sym, tgt, _pos, st = f[k + 1 + 4 * j: k + 5 + 4 * j]
            ptrs.append((sym, int(tgt), int(st[2:], 16)))
        synsets[offset] = (words, ptrs)
    return index, synsets


def antonyms(word: str) -> set[str]:
    """The adjective antonyms of `word` (its own, or its head's when it is a satellite)."""
    index, synsets = _adjectives()
    out: set[str] = set()
    for off in index.get(word.lower(), []):
        words, ptrs = synsets.get(off, ([], []))
        heads = [off] + [t for sym, t, _ in ptrs if sym == "&"]
        for h in heads:
            for sym, tgt, wn in synsets.get(h, ([], []))[1]:
                if sym == "!" and tgt in synsets:
                    tw = synsets[tgt][0]
                    out.add(tw[wn - 1] if 0 < wn <= len(tw) else tw[0])
    return {w.replace("_", " ") for w in out}
