"""Word knowledge the offline judges need beyond MiniLM's similarity of a phrase and a class name.

Two public resources, both read locally:
- the **AudioSet ontology** (`lexicon/audioset_ontology.json`, built by scripts/build_audioset_ontology.py
  from github.com/audioset/ontology, CC BY-SA 4.0): each class's parents and description, so a tagged
  'Mandolin' is known to be kin of a 'Zither' (both plucked string instruments) and not of a 'Violin, fiddle';
- **WordNet 3.0** (the Debian package `wordnet-base`, /usr/share/wordnet, or $AUDIOMIND_WORDNET_DIR): the
  glosses and hypernyms of a word that no AudioSet class is named after ('celesta': "a musical instrument
  consisting of graduated steel plates that are struck by hammers activated by a keyboard", a keyboard
  instrument), matched against the class descriptions; and whether a noun names a person ('the announcer
  answers' is speech, 'a piccolo answers it' is not).

WordNet is read through audiomind.language.wordnet, the one reader of its files (the documented WNDB format,
wndb(5), since Debian's package lacks the `lexnames` file that NLTK's reader requires): its index with each
lemma's sense-tagged counts, a noun synset's lemmas, hypernyms and gloss, and the irregular forms. Without
WordNet the judges work as before and `audiomind doctor` says what is missing.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
from pydantic import BaseModel, Field

from audiomind.language import wordnet
from audiomind.resources import data_dir

GLOSS_MIN_SIM = 0.55  # a gloss this close to a class description places the word in that class's family
_MAX_SENSES = 4


# ---------------------------------------------------------------- the AudioSet ontology


class OntologyClass(BaseModel):
    name: str
    description: str = ""
    parents: list[str] = Field(default_factory=list)
    yamnet: bool = False


@functools.lru_cache(maxsize=1)
def ontology() -> dict[str, OntologyClass]:
    """The AudioSet classes by (YAMNet display) name."""
    doc = json.loads((data_dir("lexicon") / "audioset_ontology.json").read_text())
    return {name: OntologyClass(name=name, **{k: v for k, v in c.items() if k != "mid"})
            for name, c in doc["classes"].items()}


@functools.lru_cache(maxsize=2048)
def ancestors(label: str) -> frozenset[str]:
    """Every class above `label` in the ontology (empty for an unknown label or a root)."""
    onto = ontology()
    out: set[str] = set()
    todo = list(onto[label].parents) if label in onto else []
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(onto[p].parents if p in onto else [])
    return frozenset(out)


@functools.lru_cache(maxsize=2048)
def depth(label: str) -> int:
    """Steps from the ontology's roots ('Music' 0, 'Musical instrument' 1, 'Plucked string instrument' 2)."""
    onto = ontology()
    if label not in onto or not onto[label].parents:
        return 0
    return 1 + min(depth(p) for p in onto[label].parents)


def kin(a: str, b: str, min_shared_depth: int = 2) -> bool:
    """Are two classes of one family: the same, one above the other, or children of a shared parent that is
    specific enough (depth >= 2: 'Plucked string instrument', 'Percussion'; not 'Musical instrument')?"""
    if a == b or a in ancestors(b) or b in ancestors(a):
        return True
    onto = ontology()
    pa = set(onto[a].parents) if a in onto else set()
    pb = set(onto[b].parents) if b in onto else set()
    return any(depth(p) >= min_shared_depth for p in pa & pb)


# ---------------------------------------------------------------- WordNet


class Sense(BaseModel):
    """One noun sense of a word in WordNet."""

    word: str
    lemmas: list[str]
    hypernym: str = Field("", description="the nearest hypernym's first lemma ('keyboard instrument')")
    closure: list[str] = Field(default_factory=list, description="first lemmas of every hypernym up the chain")
    gloss: str = ""

    @property
    def is_person(self) -> bool:
        return "person" in self.closure

    def text(self) -> str:
        """The sense as one line for the sentence encoder: word, kind and the gloss's first clause."""
        first = re.split(r";|\"", self.gloss)[0].strip()
        return f"{self.word}, a {self.hypernym}: {first}" if self.hypernym else f"{self.word}: {first}"


def mostly_adjective(word: str) -> bool:
    """Is the word used as an adjective more often than as a noun ('low', 'high'; not 'bass', 'celesta')?"""
    w = word.lower().replace(" ", "_")
    return wordnet.tag_counts("adj").get(w, 0) > wordnet.tag_counts("noun").get(w, 0)


def mostly_verb(word: str) -> bool:
    """Is a third-person form ('runs', 'pulls', 'fades') used as a verb clearly more often than its stem as a
    noun (twice as often in WordNet's tagged corpus, and at least 3 times)? 'birds', 'horns', 'waves' are not."""
    w = word.lower()
    stems = _verb_stems(w) if w.endswith("s") else []
    verb = max((wordnet.tag_counts("verb").get(x, 0) for x in stems), default=0)
    noun = max((wordnet.tag_counts("noun").get(x, 0) for x in stems), default=0)
    return verb >= 3 and verb >= 2 * noun


def verb_form(word: str) -> bool:
    """Is the word a third-person, -ing or -ed form of a WordNet verb ('scrapes', 'creaking', 'turned')?"""
    return any(x in wordnet.index("verb") for x in _verb_stems(word.lower()))


def _verb_stems(w: str) -> list[str]:
    """Candidate base forms of an inflected verb form ([] when it is none of -s, -ing, -ed)."""
    if w.endswith("ing") and len(w) > 5:
        return [w[:-3], w[:-3] + "e", w[:-4]]  # 'creaking', 'scraping', 'dripping'
    if w.endswith("ed") and len(w) > 4:
        return [w[:-2], w[:-1], w[:-3]]  # 'turned', 'shuffled', 'dropped'
    if w.endswith("s") and len(w) > 3:
        return [w[:-1]] + ([w[:-2]] if w.endswith("es") else []) + ([w[:-3] + "y"] if w.endswith("ies") else [])
    return []


@functools.lru_cache(maxsize=1024)
def names_language(word: str) -> bool:
    """Does one of the word's noun senses (any, not only the most frequent) name a language ('Spanish',
    'Irish', 'Tagalog')? False without WordNet."""
    index = wordnet.index("noun")
    return any("language" in lem for form in _base_forms(word) for off in index.get(form, [])
               for lem in _hypernym_lemmas(wordnet.noun_synset(off)[1]))


def _hypernym_lemmas(hyper: tuple[int, ...]) -> list[tuple[str, ...]]:
    """The lemmas of every hypernym up the chain from `hyper`, nearest first (at most 40 synsets)."""
    out: list[tuple[str, ...]] = []
    todo, seen = list(hyper), set[int]()
    while todo and len(seen) < 40:
        h = todo.pop(0)
        if h in seen:
            continue
        seen.add(h)
        lem, up, _ = wordnet.noun_synset(h)
        out.append(lem)
        todo.extend(up)
    return out


@functools.lru_cache(maxsize=1)
def _exceptions() -> dict[str, str]:
    """An irregular noun -> its base form (the first of its last line in noun.exc: 'geese' -> 'goose')."""
    return {form: bases[0] for form, bases in wordnet.exception_lines("noun") if bases}


def _base_forms(word: str) -> list[str]:
    w = word.lower().strip().replace(" ", "_")
    forms = [w]
    if w in _exceptions():
        forms.append(_exceptions()[w])
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) > len(suffix) + 2:
            forms.append(w[: -len(suffix)] + repl)
    return list(dict.fromkeys(forms))


@functools.lru_cache(maxsize=2048)
def noun_senses(word: str) -> tuple[Sense, ...]:
    """The noun senses of a word (or compound: 'music box'), most frequent first; empty without WordNet."""
    index = wordnet.index("noun")
    for form in _base_forms(word):
        offsets = index.get(form, [])
        if not offsets:
            continue
        out = []
        for off in offsets[:_MAX_SENSES]:
            lemmas, hyper, gloss = wordnet.noun_synset(off)
            closure = [lem[0] for lem in _hypernym_lemmas(hyper)]
            out.append(Sense(word=form.replace("_", " "), lemmas=list(lemmas),
                             hypernym=closure[0] if closure else "", closure=closure, gloss=gloss))
        return tuple(out)
    return ()


def names_person(noun: str) -> bool | None:
    """Does the noun's most frequent sense name a person ('announcer', 'woman', 'grandfather')? None when
    WordNet does not know the word (or is not installed)."""
    senses = noun_senses(noun)
    return senses[0].is_person if senses else None


# ---------------------------------------------------------------- glosses against the class descriptions


@functools.lru_cache(maxsize=1)
def _class_texts() -> tuple[list[str], np.ndarray, np.ndarray]:
    """YAMNet's classes, their names' embeddings and their 'name: description' embeddings."""
    from audiomind.embedded import text

    onto = ontology()
    names = [n for n, c in onto.items() if c.yamnet]
    return names, text.embed(names), text.embed([f"{n}: {onto[n].description}" for n in names])


class GlossMatch(BaseModel):
    """A word placed among the AudioSet classes through its WordNet sense."""

    word: str
    sense: str = Field(description="the sense used, as matched: 'celesta, a keyboard instrument: ...'")
    label: str = Field(description="the closest AudioSet class")
    similarity: float
    kind_of: bool = Field(False, description="the class is what WordNet says the thing is a kind of "
                                             "('piccolo' -> a flute -> Flute), not only its family")


@functools.lru_cache(maxsize=1024)
def gloss_match(word: str, kind: str | None = None) -> GlossMatch | None:
    """The AudioSet class closest to any noun sense of `word` (its gloss and hypernym against each class's
    name and description), when at least GLOSS_MIN_SIM close; None without WordNet or a close class. `kind`
    keeps the senses of that kind only ('animal': 'bird' the animal, not the meat)."""
    senses = tuple(s for s in noun_senses(word) if kind is None or kind in s.closure)
    if not senses:
        return None
    from audiomind.embedded import text

    names, name_emb, desc_emb = _class_texts()
    best: GlossMatch | None = None
    vecs = text.embed([s.text() for s in senses])
    for s, v in zip(senses, vecs):
        sims = np.maximum(name_emb @ v, desc_emb @ v)
        i = int(np.argmax(sims))
        if best is None or sims[i] > best.similarity:
            kind_of = bool(s.hypernym) and s.hypernym in [w.strip().lower() for w in names[i].split(",")]
            best = GlossMatch(word=word, sense=s.text(), label=names[i], similarity=round(float(sims[i]), 3),
                              kind_of=kind_of)
    return best if best is not None and best.similarity >= GLOSS_MIN_SIM else None


def doctor() -> dict[str, str]:
    """What `audiomind doctor` reports about the word knowledge."""
    d = wordnet.wordnet_dir()
    try:
        n = len(ontology())
        onto = f"ok ({n} AudioSet classes)"
    except (OSError, ValueError, FileNotFoundError) as e:
        onto = f"missing: {e}"
    if d is None:
        words = ("missing: apt-get install wordnet-base (or set AUDIOMIND_WORDNET_DIR); the judges then cannot "
                 "place words no AudioSet class is named after")
    elif not wordnet.holds("noun"):
        words = (f"missing: {d} holds no nouns; the judges then cannot place words no "
                 "AudioSet class is named after")
    else:
        words = f"ok ({d})"
    return {"audioset_ontology": onto, "wordnet": words}
