"""WordNet 3.0 read from its own data files (Debian's `wordnet-base`, /usr/share/wordnet, or
$AUDIOMIND_WORDNET_DIR): adjective antonyms ('hot' -> 'cold'; a satellite such as 'scorching' takes its head's),
noun hypernyms (what a noun is a kind of: a sound, a person, an amount, a city), synonyms, irregular forms and
whether a word is listed at all (a content word). Empty answers when WordNet is not installed (`audiomind
doctor` says so). The parsed tables are kept on disk (audiomind.language.wordnet_cache, filled by `audiomind models
install`): a process looks its words up there instead of parsing the files again.

This is the one reader of WordNet's files (and the one place that finds its folder): the judges' lexicon
(audiomind.judges.lexicon) reads through its primitives, `index` (a lemma's synsets), `tag_counts` (how often a
lemma's senses are tagged in WordNet's sense-tagged corpus), `noun_synset` (a noun synset's lemmas, hypernyms and
gloss) and `exception_lines` (the irregular forms)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path

from audiomind import config
from audiomind.language import wordnet_cache

WORDNET_DIRS = ("/usr/share/wordnet",)


def wordnet_dir(root: str | Path | None = None) -> Path | None:
    """`root`, else the setting `wordnet_dir` (env AUDIOMIND_WORDNET_DIR), else WORDNET_DIRS: the first that
    holds the adjective files."""
    env = root if root is not None else config.settings().wordnet_dir
    for d in ([env] if env else []) + list(WORDNET_DIRS):
        if (Path(d) / "data.adj").is_file() and (Path(d) / "index.adj").is_file():
            return Path(d)
    return None


def _entries(path: Path) -> Iterator[str]:
    """The lines of a WordNet index or data file, less its licence header (lines that start with a space)."""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith(" "):
            yield line


def _index(path: Path) -> dict[str, list[int]]:
    """A WordNet index file: lemma -> the offsets of its senses, most frequent first."""
    index: dict[str, list[int]] = {}
    for line in _entries(path):
        f = line.split()
        n_ptr = int(f[3])
        n_syn = int(f[4 + n_ptr])
        index[f[0]] = [int(x) for x in f[6 + n_ptr: 6 + n_ptr + n_syn]]
    return index


def _tag_counts(path: Path) -> dict[str, int]:
    """A WordNet index file: lemma -> how often its senses are tagged in WordNet's sense-tagged corpus (its
    `tagsense_cnt`); the lemmas never tagged are left out (they count 0)."""
    counts: dict[str, int] = {}
    for line in _entries(path):
        f = line.split()
        n = int(f[5 + int(f[3])])
        if n:
            counts[f[0]] = n
    return counts


def _adjective_synsets(d: Path) -> dict[int, tuple[list[str], list[tuple[str, int, int]]]]:
    """offset -> (words, pointers (symbol, target offset, target word number)) of data.adj."""
    synsets: dict[int, tuple[list[str], list[tuple[str, int, int]]]] = {}
    for line in _entries(d / "data.adj"):
        f = line.split(" | ")[0].split()
        offset, n_words = int(f[0]), int(f[3], 16)
        words = [f[4 + 2 * i].split("(")[0].lower() for i in range(n_words)]
        k = 4 + 2 * n_words
        n_ptr = int(f[k])
        ptrs = []
        for j in range(n_ptr):
            sym, tgt, _pos, st = f[k + 1 + 4 * j: k + 5 + 4 * j]
            ptrs.append((sym, int(tgt), int(st[2:], 16)))  # noqa: FURB166 (st = source+target word numbers)
        synsets[offset] = (words, ptrs)
    return synsets


def _noun_hypernyms(d: Path) -> dict[int, tuple[tuple[str, ...], tuple[int, ...]]]:
    """offset -> (lemmas, hypernym and instance-hypernym offsets) of data.noun."""
    synsets: dict[int, tuple[tuple[str, ...], tuple[int, ...]]] = {}
    for line in _entries(d / "data.noun"):
        f = line.split(" | ")[0].split()
        n_words = int(f[3], 16)
        lemmas = tuple(f[4 + 2 * i].lower() for i in range(n_words))
        k = 4 + 2 * n_words
        hyper = tuple(int(f[k + 2 + 4 * j]) for j in range(int(f[k])) if f[k + 1 + 4 * j] in ("@", "@i"))
        synsets[int(f[0])] = (lemmas, hyper)
    return synsets


def _synset_lemmas(d: Path, pos: str) -> dict[int, tuple[str, ...]]:
    """offset -> the synset's lemmas of data.<pos>."""
    synsets: dict[int, tuple[str, ...]] = {}
    for line in _entries(d / f"data.{pos}"):
        f = line.split(" | ")[0].split()
        synsets[int(f[0])] = tuple(f[4 + 2 * i].split("(")[0].lower() for i in range(int(f[3], 16)))
    return synsets


POS = ("noun", "verb", "adj", "adv")


def _index_of(pos: str) -> Callable[[Path], dict]:
    return lambda d: _index(d / f"index.{pos}")


def _lemmas_of(pos: str) -> Callable[[Path], dict]:
    return lambda d: _synset_lemmas(d, pos)


def _tagged_of(pos: str) -> Callable[[Path], dict]:
    return lambda d: _tag_counts(d / f"index.{pos}")


TABLES: dict[str, Callable[[Path], dict]] = {
    **{f"index.{pos}": _index_of(pos) for pos in POS},
    "adj.synsets": _adjective_synsets,
    "noun.hypernyms": _noun_hypernyms,
    **{f"{pos}.lemmas": _lemmas_of(pos) for pos in POS},
    **{f"{pos}.tagged": _tagged_of(pos) for pos in POS},
}
"""The tables read from WordNet's files (name -> its parser), each kept in the disk cache (`wordnet_cache`)."""


@lru_cache(maxsize=16)
def _table(name: str) -> Mapping:
    """One of TABLES: a view of the disk cache (audiomind.language.wordnet_cache) when it is there, else parsed
    from the files (and stored for the next process). Empty when WordNet (or the table's file) is missing. Kept
    for the process, as the parsed tables always were."""
    d = wordnet_dir()
    if d is None:
        return {}
    return wordnet_cache.table(d, name, TABLES)


def warm() -> str:
    """The disk cache of the tables (what `audiomind models install` does; audiomind.warm)."""
    d = wordnet_dir()
    return "WordNet is not installed" if d is None else wordnet_cache.ensure(d, TABLES)


def reset() -> None:
    """Forget the tables this process read (tests: another WordNet folder or cache folder)."""
    for f in (_table, noun_ancestors, synonyms, listed, names_sound, _exceptions, exception_lines, noun_synset):
        f.cache_clear()
    wordnet_cache.reset()


def holds(pos: str) -> bool:
    """Whether the WordNet folder holds the index and data files of `pos` ('noun', 'verb', 'adj', 'adv')."""
    d = wordnet_dir()
    return d is not None and (d / f"index.{pos}").is_file() and (d / f"data.{pos}").is_file()


def index(pos: str) -> Mapping[str, list[int]]:
    """lemma -> the byte offsets of its `pos` synsets in data.<pos>, most frequent sense first; empty without
    WordNet."""
    return _table(f"index.{pos}")


def tag_counts(pos: str) -> Mapping[str, int]:
    """lemma -> how often its `pos` senses are tagged in WordNet's sense-tagged corpus (how common the word is as
    a noun, a verb...); a lemma that is not there counts 0."""
    return _table(f"{pos}.tagged")


@lru_cache(maxsize=8192)
def noun_synset(offset: int) -> tuple[tuple[str, ...], tuple[int, ...], str]:
    """(lemmas, hypernym and instance-hypernym offsets, gloss) of the data.noun line at byte `offset` (an offset
    of `index('noun')`); lemmas lower-case, their words separated by spaces ('music box'). Read from the file
    itself (glosses are not among the cached tables); empty when WordNet is missing."""
    d = wordnet_dir()
    if d is None or not (d / "data.noun").is_file():
        return (), (), ""
    with open(d / "data.noun", "rb") as f:
        f.seek(offset)
        line = f.readline().decode("utf-8", errors="replace")
    head, _, gloss = line.partition("|")
    fields = head.split()
    n_words = int(fields[3], 16)
    lemmas = tuple(fields[4 + 2 * i].replace("_", " ").lower() for i in range(n_words))
    k = 4 + 2 * n_words
    hyper = tuple(int(fields[k + 2 + 4 * j]) for j in range(int(fields[k]))
                  if fields[k + 1 + 4 * j] in ("@", "@i") and fields[k + 3 + 4 * j] == "n")
    return lemmas, hyper, gloss.strip()


def _adjectives() -> tuple[Mapping[str, list[int]], Mapping[int, tuple[list[str], list[tuple[str, int, int]]]]]:
    """(lemma -> synset offsets, offset -> (words, pointers (symbol, target offset, target word number)))."""
    return _table("index.adj"), _table("adj.synsets")


def antonyms(word: str) -> set[str]:
    """The adjective antonyms of `word` (its own, or its head's when it is a satellite)."""
    index, synsets = _adjectives()
    out: set[str] = set()
    for off in index.get(word.lower(), []):
        _, ptrs = synsets.get(off, ([], []))
        heads = [off] + [t for sym, t, _ in ptrs if sym == "&"]
        for h in heads:
            for sym, tgt, wn in synsets.get(h, ([], []))[1]:
                if sym == "!" and tgt in synsets:
                    tw = synsets[tgt][0]
                    out.add(tw[wn - 1] if 0 < wn <= len(tw) else tw[0])
    return {w.replace("_", " ") for w in out}


SOUND_HEADS = frozenset({"sound", "noise", "auditory_communication", "signal", "tone", "sound_property"})
"""Lemmas of the synsets under which WordNet files kinds of sound ('pip' -> tone, 'bark' -> cry -> utterance ->
auditory communication, 'knock' -> sound)."""
GENERIC_COUNTS = frozenset({"event", "happening", "occurrence", "instance", "time"})
"""Nouns that count whatever happens ('how many separate sound events'): a count of sound events answers them."""


def _noun_graph() -> tuple[Mapping[str, list[int]], Mapping[int, tuple[tuple[str, ...], tuple[int, ...]]]]:
    """(lemma -> every sense's offset, offset -> (lemmas, hypernym offsets)) of WordNet's nouns."""
    return _table("index.noun"), _table("noun.hypernyms")


def _noun_forms(word: str, index: Mapping[str, list[int]]) -> list[str]:
    """The index lemmas a noun may be a form of: itself, or its singular ('pips', 'boxes', 'cities')."""
    w = word.lower()
    return [x for x in (w, w[:-1] if w.endswith("s") else "", w[:-2] if w.endswith("es") else "",
                        w[:-3] + "y" if w.endswith("ies") else "") if x in index]


@lru_cache(maxsize=8192)
def noun_ancestors(word: str, senses: int | None = None) -> frozenset[str]:
    """Every lemma of every synset at or above a sense of the noun `word` (hypernyms and instance hypernyms),
    over its `senses` most frequent senses (all when None): 'paris' -> {'paris', 'national_capital',
    'capital', 'city', ...}; 'caller' -> {..., 'person', ...}. Empty when WordNet is missing or has no such
    noun."""
    index, synsets = _noun_graph()
    todo = [o for x in _noun_forms(word, index) for o in index[x][:senses]]
    seen: set[int] = set()
    lemmas: set[str] = set()
    while todo:
        o = todo.pop()
        if o in seen or o not in synsets:
            continue
        seen.add(o)
        lemmas.update(synsets[o][0])
        todo.extend(synsets[o][1])
    return frozenset(lemmas)


def _lemma_sets(pos: str) -> tuple[Mapping[str, list[int]], Mapping[int, tuple[str, ...]]]:
    """(lemma -> its senses' offsets, offset -> the synset's lemmas) of WordNet's `pos` ('noun', 'verb', 'adj',
    'adv')."""
    return _table(f"index.{pos}"), _table(f"{pos}.lemmas")


@lru_cache(maxsize=4)
def exception_lines(pos: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The lines of WordNet's <pos>.exc file, in order: (an irregular form, its base forms) ('geese', ('goose',));
    a form may have several lines ('aurar': 'eyir', then 'eyrir'). Empty when WordNet or the file is missing."""
    d = wordnet_dir()
    path = d / f"{pos}.exc" if d else None
    if path is None or not path.is_file():
        return ()
    return tuple((form, tuple(bases)) for form, *bases in
                 (line.split() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
                  if line.strip()))


@lru_cache(maxsize=1)
def _exceptions() -> dict[str, set[str]]:
    """Irregular forms -> their base forms, from WordNet's *.exc files ('brought' -> {'bring'}, 'mice' ->
    {'mouse'})."""
    out: dict[str, set[str]] = {}
    for pos in POS:
        for form, bases in exception_lines(pos):
            out.setdefault(form, set()).update(bases)
    return out


@lru_cache(maxsize=8192)
def synonyms(word: str, senses: int = 3) -> frozenset[str]:
    """The word, its irregular base forms ('brought' -> 'bring'), and every lemma that shares one of their
    `senses` most frequent noun, verb, adjective or adverb synsets, multi-word lemmas with spaces ('collect' ->
    'pick up', 'gather'). Just the word and its base forms when WordNet is missing."""
    w = word.lower()
    forms = {w, *_exceptions().get(w, ())}
    out = set(forms)
    for pos in ("noun", "verb", "adj", "adv"):
        index, synsets = _lemma_sets(pos)
        for f in forms:
            for o in index.get(f, [])[:senses]:
                out.update(x.replace("_", " ") for x in synsets.get(o, ()))
    return frozenset(out)


_DETACH = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("er", ""),
           ("er", "e"), ("est", ""), ("est", "e"))
"""WordNet's own detachment rules (morphy), by suffix: 'cities' -> 'city', 'cancelled' -> 'cancell' / ...,
'quieter' -> 'quiet'."""


@lru_cache(maxsize=8192)
def listed(word: str) -> bool | None:
    """Whether WordNet lists the word, or a base form of it (its exception lists, then its detachment rules),
    as a noun, verb, adjective or adverb: content words are listed; articles, prepositions, conjunctions and
    pronouns ('until', 'and', 'whom') are not. None when WordNet is missing."""
    if wordnet_dir() is None:
        return None
    w = word.lower()
    forms = {w, *_exceptions().get(w, ())}
    forms |= {w[: -len(a)] + b for a, b in _DETACH if w.endswith(a) and len(w) - len(a) >= 2}
    forms |= {f[:-1] for f in forms if len(f) > 3 and f[-1] == f[-2]}  # 'cancell' -> 'cancel', 'stopp' -> 'stop'
    return any(f in _lemma_sets(pos)[0] for pos in ("noun", "verb", "adj", "adv") for f in forms)


AMOUNT_HEADS = frozenset({"measure", "quantity", "time_period", "time", "value", "number", "amount", "magnitude",
                          "property", "rate", "outgo", "expenditure"})
"""Lemmas under which WordNet files nouns that name an amount or a time ('price' -> value, 'duration' ->
time_period)."""


def names_person(word: str) -> bool:
    """Whether the most frequent sense of the noun `word` is a kind of person ('caller', 'passenger'; not
    'dog', whose rarer senses are)."""
    return "person" in noun_ancestors(word, 1)


def names_amount(word: str) -> bool:
    """Whether the most frequent sense of the noun `word` is an amount or a time (AMOUNT_HEADS: 'price',
    'time', 'duration', 'speed')."""
    return bool(noun_ancestors(word, 1) & AMOUNT_HEADS)


def names_kind_of(category: str, word: str) -> bool:
    """Whether the noun `category` names what `word` is: a WordNet ancestor of some sense of it, or the head of
    one ('city' of 'paris', 'day' of 'tuesday' through 'calendar_day', 'capital' through 'national_capital')."""
    c = category.lower()
    forms = {c, *_noun_forms(c, _noun_graph()[0])}
    return any(a in forms or a.rsplit("_", 1)[-1] in forms for a in noun_ancestors(word.lower()))


@lru_cache(maxsize=4096)
def names_sound(word: str) -> bool | None:
    """Whether some sense of a noun is a kind of sound (a hypernym in SOUND_HEADS): 'pips', 'barks', 'knocks',
    'rings' yes; 'instruments', 'guests', 'dropouts' no. None when WordNet is missing or has no such noun."""
    index, _ = _noun_graph()
    if not index:
        return None
    forms = _noun_forms(word, index)
    if not forms:
        return None
    if any(x in GENERIC_COUNTS or x in _audioset_names() for x in forms):
        return True  # a generic count, or a noun an AudioSet class is named after ('chime', 'bell', 'car')
    return bool(noun_ancestors(word) & SOUND_HEADS)


@lru_cache(maxsize=1)
def _audioset_names() -> frozenset[str]:
    """The one-word names of AudioSet classes, lower-cased ('Chime', 'Bell', 'Car'; the ontology in lexicon/):
    WordNet files 'chime' only as an instrument, yet a chime is what a listener counts."""
    import json

    from audiomind.resources import data_dir

    try:
        doc = json.loads((data_dir("lexicon") / "audioset_ontology.json").read_text())
    except (OSError, ValueError):
        return frozenset()
    names = {part.strip().lower() for name in doc.get("classes", {}) for part in name.split(",")}
    return frozenset(n for n in names if n and " " not in n)
