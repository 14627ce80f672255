"""What the offline judges know about a clip, read through the one reader layer
(`audiomind.reasoning.facts.facts_from`), and how a phrase ("a telephone ringing") is checked against it.

`perceive` runs one fixed perception pass per clip through the executor (so every call is on the
record): YAMNet tags and events, Silero VAD, BS.1770 loudness, signal statistics, energy events, and
Whisper ASR where there is speech; `speech_quality` (DNSMOS) too when that tool is installed. The judges
then read `Facts` per artifact from the session's record, exactly as the cascade and the verifiers do.
`tag_windows` adds onset-aligned tagging windows (a window that starts where a sound starts, so YAMNet's
0.96 s patches hold the sound instead of straddling it; the facts layer reads them as `TagsFact.windows`).

Phrases are matched to the 521 AudioSet labels by all-MiniLM-L6-v2 similarity: the labels within
`LABEL_BAND` of the best match (and above `LABEL_MIN_SIM`) form the phrase's label set. `identify` checks
a phrase against the tags of one window:
- support: the strongest of the phrase's labels there;
- contradiction: the strongest *specific* label there that is not the phrase's, not semantically close to
  it (cosine >= RELATED_SIM, of the phrase or its sounding thing) and not its kin in the AudioSet ontology
  (a parent or child, or a sibling in a narrow family: 'Glockenspiel' for a vibraphone, not 'Organ' for a piano). Labels that name no single source cannot
  contradict: the room/noise labels (`GENERIC`), AudioSet's "Source-ambiguous sounds" branch
  (`source_ambiguous()`: Plop, Ding, Beep, Clang, Sine wave, ... describe how a sound sounds, not what made
  it; they do contradict a phrase that itself names a shape, such as 'beeps') and the broad parents
  (`PARENT_LABELS`: Music, Animal, Vehicle, ... fit many specific sources);
- p = 0.5 + 0.45 (conf - contra (1 - conf)), conf = clip((support - 0.05) / 0.25), contra =
  clip((contradiction - 0.15) / 0.35): 0.95 when the phrase's class is clearly tagged, 0.05 when another
  specific class is and the phrase's is not, 0.5 (+- a small tie-break from the semantic similarity of
  the phrase to what was heard) when the tags neither confirm nor contradict: then the identity is
  "unconfirmed", and the judges say so instead of answering no.
A phrase no class is named after ('a few celesta notes') is placed by the WordNet gloss of its sounding word
(`audiomind.judges.lexicon`: 'celesta, a keyboard instrument: ...' lands in the keyboard family of the AudioSet
ontology). A tagged class of that family is weak support (at most 'unconfirmed', p <= 0.65; a confirmation
only when the class is the very kind WordNet names, a piccolo heard as a flute); a clearly tagged class of
another family (a violin) contradicts it. Without WordNet such a phrase stays 'unconfirmed'.
Speech phrases ("a woman says ...") are checked against voice activity and the transcript instead, since
YAMNet's speech classes carry no words; a verb of dialogue ('answers') is speech only when a person does it.
The English of a phrase (its sound's name, its quoted words, its speech words) is read by
`audiomind.language.phrases`, from the tables of audiomind/language/data/phrases.toml; this module matches
the readings to classes, senses and what was heard.
"""

from __future__ import annotations

import csv
import difflib
import functools
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from audiomind.judges import lexicon
from audiomind.language import phrases
from audiomind.reasoning.facts import Facts, Record, Span, TagWindow, facts_from
from audiomind.state import ToolCallRequest

LABEL_MIN_SIM = 0.5
LABEL_BAND = 0.2
RELATED_SIM = 0.45  # a label this close to the phrase is another name for it, never a contradiction
GLOSS_CONTRA_FROM = 0.3  # strength from which another family's class contradicts a phrase placed by its gloss
GENERIC_NAMED_SIM = 0.9  # a GENERIC label is a phrase's own only this close (the phrase names it)
PRESENT = 0.3  # strength at which a sound class counts as present
ABSENT = 0.15  # strength below which it counts as absent
# the reading of sound phrases is the reader's (audiomind/language/phrases.py); these names stay here for the judges
clean_phrase = phrases.clean_phrase
phrase_variants = phrases.phrase_variants
quoted_text = phrases.quoted_text
with_article = phrases.with_article
words_of = phrases.words_of
GENERIC = {"Silence", "Inside, small room", "Inside, large room or hall", "Inside, public space",
           "Outside, urban or manmade", "Outside, rural or natural", "Sound effect", "Speech synthesizer",
           "Narration, monologue", "Echo", "Reverberation", "Noise", "Environmental noise", "Static", "Hum",
           "Mains hum", "Distortion", "Sidetone", "Field recording", "Cacophony", "Vibration", "Throbbing",
           # sound reproduction (AudioSet's 'Channel, environment and background'): how a sound reached the
           # microphone, not what made it (a sonar ping sounds like 'Radio' to YAMNet)
           "Radio", "Television"}
# broad AudioSet parents: they match a specific phrase only when they are its best match
PARENT_LABELS = {"Music", "Musical instrument", "Speech", "Animal", "Domestic animals, pets", "Wild animals",
                 "Livestock, farm animals, working animals", "Vehicle", "Mechanisms",
                 "Tools", "Sound effect", "Alarm", "Bell", "Wind instrument, woodwind instrument", "Brass instrument",
                 "Bowed string instrument", "Plucked string instrument", "Percussion", "Keyboard (musical)",
                 "Human voice", "Liquid", "Wood", "Glass", "Domestic sounds, home sounds", "Noise", "Environmental noise"}
SPEECH_LABELS = {"Speech", "Male speech, man speaking", "Female speech, woman speaking", "Child speech, kid speaking",
                 "Conversation", "Narration, monologue", "Speech synthesizer"}
# the speech words of the reader's tables (data/phrases.toml), for callers that search a text for one
SPEECH_VERBS = phrases.pattern("speech_words")
# AudioSet's "Source-ambiguous sounds" (generic impact, surface contact, deformable shell, onomatopoeia,
# other sourceless): in YAMNet's class map the run from "Bang" to "Pulse", plus three impact words listed
# elsewhere. They say how a sound sounds, not what made it.
_AMBIGUOUS_RUN = ("Bang", "Pulse")
_AMBIGUOUS_EXTRA = {"Thump, thud", "Thunk", "Whoosh, swoosh, swish", "Burst, pop", "Crack", "Chink, clink"}


# ---------------------------------------------------------------- reading the record


def record(session: Any) -> Record:
    """The session's tool calls and evidence, as the reader layer reads them."""
    return Record(tool_calls=session.state.tool_calls, evidence=session.state.evidence)


def read(session: Any, artifact_id: str) -> Facts:
    """All facts on the session's record about one artifact (the one reader: `facts_from`)."""
    return facts_from(record(session), session.state.artifact(artifact_id))


def call_ids(session: Any, artifact_id: str) -> list[str]:
    """The ids of the tool calls made on one artifact."""
    return [c.id for c in session.state.tool_calls
            if (c.arguments or c.requested_arguments or {}).get("artifact") == artifact_id]


FIRST_PASS = ("tagging", "vad", "loudness", "signal_stats", "count_events")


def perceive(session: Any, artifact_ids: list[str], *, asr: bool | list[str] = True, quality: bool = True,
             tools: tuple[str, ...] = FIRST_PASS, rationale: str = "") -> dict[str, Facts]:
    """Run the fixed perception pass on each artifact (parallel tool calls), then ASR (and DNSMOS) where
    there is speech; `asr` may list the artifacts to transcribe. Returns the facts of each artifact."""
    args = {"tagging": {"top_k": 25, "min_score": 0.02, "event_min_score": 0.3, "max_events": 30}}
    reqs = [ToolCallRequest(tool=t, arguments={"artifact": a, **args.get(t, {})}, reason="judge perception pass")
            for a in artifact_ids for t in tools if session.tool_available(t)]
    session.run_tools(reqs, rationale or f"perception pass over {', '.join(artifact_ids)}")
    facts = {a: read(session, a) for a in artifact_ids}
    second = []
    for a, f in facts.items():
        speechy = f.speech_s >= 0.3 or f.strength("Speech") >= 0.3
        want_asr = asr if isinstance(asr, bool) else a in asr
        if want_asr and speechy and session.tool_available("asr"):
            second.append(ToolCallRequest(tool="asr", arguments={"artifact": a}, reason="speech found: transcript"))
        if quality and speechy and session.tool_available("speech_quality"):
            second.append(ToolCallRequest(tool="speech_quality", arguments={"artifact": a},
                                          reason="speech found: DNSMOS quality"))
    if second:
        session.run_tools(second, "speech found: transcripts (and speech quality where available)")
        facts = {a: read(session, a) for a in artifact_ids}
    return facts


def onset_window(start_s: float, end_s: float, duration_s: float, pre_s: float = 0.02) -> tuple[float, float]:
    """An analysis window that starts at a sound's onset (less `pre_s`) and holds at least one full YAMNet
    patch (0.96 s), cut to the clip."""
    a = max(0.0, start_s - pre_s)
    b = min(duration_s, max(end_s + pre_s, a + 0.96))
    if b - a < 0.05:  # a sound at the very end: the window reaches back
        a = max(0.0, b - 0.96)
    return round(a, 3), round(b, 3)


def tag_windows(session: Any, artifact_id: str, windows: list[tuple[float, float]], rationale: str) -> None:
    """Tag each (start, end) window of an artifact (the reader layer then lists them in `tags.windows`)."""
    seen = set()
    reqs = []
    for a, b in windows:
        if (a, b) in seen or b - a < 0.05:
            continue
        seen.add((a, b))
        reqs.append(ToolCallRequest(tool="tagging", arguments={
            "artifact": artifact_id, "start_s": a, "end_s": b, "top_k": 15, "min_score": 0.02,
            "event_min_score": 0.05, "max_events": 0}, reason=f"onset-aligned tags of {a:.2f}-{b:.2f} s"))
    if reqs and session.tool_available("tagging"):
        session.run_tools(reqs, rationale)


# ---------------------------------------------------------------- phrases and labels


@functools.lru_cache(maxsize=1)
def _labels() -> tuple[list[str], np.ndarray]:
    from audiomind.embedded import models, text

    _, class_map = models.yamnet_paths()
    with open(class_map, newline="") as f:
        labels = [row["display_name"] for row in csv.DictReader(f)]
    return labels, text.embed(labels)


@functools.lru_cache(maxsize=1)
def source_ambiguous() -> frozenset[str]:
    """AudioSet's source-ambiguous labels (see the module docstring)."""
    labels, _ = _labels()
    try:
        i, j = labels.index(_AMBIGUOUS_RUN[0]), labels.index(_AMBIGUOUS_RUN[1])
    except ValueError:
        return frozenset(_AMBIGUOUS_EXTRA)
    return frozenset([lab for lab in labels[i:j + 1] if lab != "Silence"] + [x for x in _AMBIGUOUS_EXTRA if x in labels])


def _head_noun(phrase: str) -> str | None:
    """The sounding thing of '<noun> <verb>' phrases ('a bell ringing' -> 'bell', 'the dog barks' -> 'dog')."""
    return phrases.head_noun(phrase)


# A material or a toy before an animal's name makes it a thing ('a rubber duck', 'a toy dog'): the modifier's
# most frequent WordNet sense is one of the reader's material kinds, or directly one of its thing hypernyms
# (data/phrases.toml).
_MATERIAL_KINDS = phrases.MATERIAL_KINDS
_THING_HYPERNYMS = phrases.THING_HYPERNYMS


@functools.lru_cache(maxsize=1024)
def names_animal(word: str) -> bool:
    """Does the word name an animal? Its most frequent WordNet sense is one; or that sense is a person and
    another is an animal, and the word is no name of a human sound ('a cuckoo' is a fool first, 'a whale' a
    large person; 'a kid' names 'Child speech'). A thing first ('a crane', 'a seal' the fastener) is no animal."""
    senses = lexicon.noun_senses(word)
    if not senses or not any("animal" in s.closure for s in senses):
        return False
    first = senses[0]
    if "animal" in first.closure:
        return True
    if first.is_person:  # the animal only where its name or its animal sense lands among AudioSet's animals
        labs = _named_labels(word)  # ('whale' -> Whale vocalization, 'cuckoo' -> a bird; 'man' lands nowhere)
        if labs:
            return _animal_branch(labs[0][0])
        g = lexicon.gloss_match(word, "animal")
        return g is not None and _animal_branch(g.label)
    return False


def _makes_thing(word: str) -> bool:
    senses = lexicon.noun_senses(word)
    return bool(senses) and (bool(_MATERIAL_KINDS & set(senses[0].closure)) or senses[0].hypernym in _THING_HYPERNYMS)


@functools.lru_cache(maxsize=512)
def sounding_animal(phrase: str) -> tuple[str, bool] | None:
    """The animal a phrase names as its sounding thing, so that its sound is placed by the animal and not by
    the verb: 'a cuckoo calls' is a bird, not a telephone call; 'a dolphin chatters' an animal, not a crowd's
    chatter; 'whale song' an animal, not a song. (word, True) for an animal; (word, False) when a material or
    a toy before it makes it a thing ('a rubber duck'); None when no animal is named. A compound WordNet knows
    is read whole first ('sea lion' an animal, 'dog whistle' and 'cuckoo clock' things)."""
    words = phrases.name_words(phrases.no_possessive(clean_phrase(phrase)))
    i = 0
    while i < len(words):
        if i + 1 < len(words) and lexicon.noun_senses(f"{words[i]} {words[i + 1]}"):
            pair = f"{words[i]} {words[i + 1]}"
            if names_animal(pair):
                return pair, True
            if names_animal(words[i]) or names_animal(words[i + 1]):
                return pair, False  # 'a dog whistle', 'a cuckoo clock'
            i += 2
            continue
        if names_animal(words[i]):
            return words[i], not (i > 0 and _makes_thing(words[i - 1]))
        i += 1
    return None


def _animal_branch(label: str) -> bool:
    return label == "Animal" or "Animal" in lexicon.ancestors(label)


# human sounds that need a person: language, song and crowds ('a lark sings' is no 'Singing', 'a dolphin
# chatters' no crowd's 'Chatter'); a grunt, a scream or a whistle any animal makes ('Grunt' for a pig)
_PERSON_ONLY = {"Speech", "Singing", "Human group actions"}


def _animal_can_make(label: str) -> bool:
    """May a tagged class be an animal's sound? Its own branch, a shape word (AudioSet's source-ambiguous
    sounds: 'Squeak'), or a human vocal sound that needs no language or song; never an instrument, a
    machine or music ('Chime' for a chimpanzee, 'Song' for a whale)."""
    up = lexicon.ancestors(label) | {label}
    if "Animal" in up or "Source-ambiguous sounds" in up or label in source_ambiguous():
        return True
    return "Human sounds" in up and not up & _PERSON_ONLY and "Music" not in up


@functools.lru_cache(maxsize=512)
def phrase_labels(phrase: str) -> tuple[tuple[str, float], ...]:
    """The AudioSet labels that a phrase names (`_named_labels`), kept to what its sounding animal can make
    (AudioSet's Animal branch, or a shape word such as 'Squeak') where it names one, and clear of the Animal
    branch where a material or toy makes the animal a thing (see `sounding_animal`)."""
    # a room / channel label (GENERIC) names how a sound reached the microphone, never what made it: it is a
    # phrase's own label only when the phrase names it ('static', 'an echo'), not by a near miss of another
    # sense ('a recorder', the wind instrument, is no 'Field recording')
    out = tuple((lab, s) for lab, s in _named_labels(phrase) if lab not in GENERIC or s >= GENERIC_NAMED_SIM)
    animal = sounding_animal(phrase)
    if animal is None:
        return out
    if not animal[1]:
        return tuple((lab, s) for lab, s in out if not _animal_branch(lab))
    return tuple((lab, s) for lab, s in out if _animal_can_make(lab))


@functools.lru_cache(maxsize=512)
def _named_labels(phrase: str) -> tuple[tuple[str, float], ...]:
    """The AudioSet labels a phrase's words name: those within LABEL_BAND of its best match and above
    LABEL_MIN_SIM, best first (empty when nothing is close enough). The sounding thing alone ('bell' of 'a
    bell ringing') counts too where it is itself an AudioSet label (similarity >= 0.9)."""
    from audiomind.embedded import text

    labels, emb = _labels()
    sims = (text.embed(phrase_variants(phrase)) @ emb.T).max(axis=0)
    top_i = int(np.argmax(sims))
    top = float(sims[top_i])
    out: list[tuple[str, float]] = []
    if top >= LABEL_MIN_SIM:
        band = LABEL_BAND / 2 if top >= 0.8 else LABEL_BAND  # a confident, specific match keeps its close kin only
        keep = [i for i in np.where(sims >= max(LABEL_MIN_SIM, top - band))[0]
                if i == top_i or (labels[i] not in PARENT_LABELS and "music" not in labels[i].lower())]
        # ('piano' must not be satisfied by any 'Music' or by a genre label)
        out = [(labels[i], round(float(sims[i]), 3)) for i in sorted(keep, key=lambda i: -sims[i])[:8]]
    head = _head_noun(phrase)
    if head:
        hs = (text.embed([head]) @ emb.T)[0]
        h = int(np.argmax(hs))
        if not out and hs[h] >= LABEL_MIN_SIM:  # 'a camera shutter clicks': the sounding thing names the class
            keep = [i for i in np.where(hs >= max(LABEL_MIN_SIM, hs[h] - LABEL_BAND / 2))[0]
                    if i == h or labels[i] not in PARENT_LABELS]
            out = [(labels[i], round(float(hs[i]), 3)) for i in sorted(keep, key=lambda i: -hs[i])[:4]]
        elif hs[h] >= 0.9 and labels[h] not in {lab for lab, _ in out}:
            out.append((labels[h], round(float(hs[h]), 3)))
    return tuple(out)


# a word whose WordNet sense falls under one of these names a thing that sounds (not 'few', 'notes', 'pattern')
_SOURCE_KINDS = phrases.SOURCE_KINDS
_PLAIN_KNOWN = 0.6  # a phrase whose best class is this close is known to the sentence encoder: no gloss needed


@functools.lru_cache(maxsize=512)
def phrase_gloss(phrase: str) -> lexicon.GlossMatch | None:
    """Where a phrase that no AudioSet class is named after sits among the classes, by the WordNet gloss of
    its sounding word ('a few celesta notes' -> 'celesta, a keyboard instrument: ...' -> Harpsichord's family).
    None when the phrase is already matched by name, WordNet is missing, or no word of it names a sounding
    thing."""
    if is_speech_phrase(phrase):
        return None
    labs = phrase_labels(phrase)
    if labs and labs[0][1] >= _PLAIN_KNOWN:
        return None
    words = [w for w in phrases.name_words(clean_phrase(phrase)) if len(w) > 2]
    animal = sounding_animal(phrase)
    if animal is not None:  # the animal names the sound ('a cuckoo calls': not 'call', a telephone connection)
        word, alive = animal
        words = [word] if alive else [w for w in words if w not in word.split()]
        if alive:  # its animal senses only ('birds' are no meat)
            g = lexicon.gloss_match(word, "animal")
            if g is None or lexicon.depth(g.label) < 2:
                return None
            return None if labs and (g.label in {lab for lab, _ in labs} or g.similarity <= labs[0][1]) else g
    # a compound WordNet knows ('music box') is more specific than its words; else the closest single word
    for group in ([" ".join(words[i:i + 2]) for i in range(len(words) - 1)], words):
        best: lexicon.GlossMatch | None = None
        for w in group:
            senses = lexicon.noun_senses(w)
            # (its most frequent sense; 'a low line' has no sounding 'low', though WordNet knows a gear so named)
            if not senses or not _SOURCE_KINDS & set(senses[0].closure) or lexicon.mostly_adjective(w):
                continue
            m = lexicon.gloss_match(w)
            # a family as broad as 'Music' or 'Musical instrument' places nothing
            if m is not None and lexicon.depth(m.label) >= 2 and (best is None or m.similarity > best.similarity):
                best = m
        if best is not None:
            if labs and (best.label in {lab for lab, _ in labs} or best.similarity <= labs[0][1]):
                return None  # the name match agrees, or is the closer one: the gloss adds nothing
            return best
    return None


def phrase_anchors(phrase: str) -> tuple[str, ...]:
    """The classes a phrase is placed at: its gloss's class where the gloss places it (see `phrase_gloss`),
    else its named classes."""
    g = phrase_gloss(phrase)
    return (g.label,) if g is not None else tuple(lab for lab, _ in phrase_labels(phrase))


def related(phrase: str, label: str, anchors: tuple[str, ...] | None = None) -> bool:
    """Is a tagged class another name for what the phrase names, or of its family in the AudioSet ontology
    (a mandolin for a koto: both plucked string instruments)? Such a class never contradicts the phrase."""
    if label_similarity(phrase, label) >= RELATED_SIM:
        return True
    anchors = phrase_anchors(phrase) if anchors is None else anchors
    return any(lexicon.kin(label, a) for a in anchors)


@functools.lru_cache(maxsize=4096)
def label_similarity(phrase: str, label: str) -> float:
    """Cosine of a phrase (as written, and its sounding thing alone) and a label (MiniLM)."""
    from audiomind.embedded import text

    forms = [clean_phrase(phrase)] + ([h] if (h := _head_noun(phrase)) else [])
    return float(text.similarity(forms, [label]).max())


def is_speech_phrase(phrase: str) -> bool:
    """A phrase about speech: a speaking verb ("says", "talks", "voice") or quoted words. A verb of dialogue
    alone ('answers', 'replies') is speech unless WordNet says its subject is no person ('a piccolo')."""
    cues = phrases.speech_cues(phrase)
    if cues.quoted is not None:
        return True
    # 'counting in Spanish', 'a few words of Irish': something in a language is speech
    if any(lexicon.names_language(w) for w in cues.languages):
        return True
    if not cues.speech_words:
        return False
    if not cues.dialogue_only:
        return True
    return cues.subject is None or lexicon.names_person(cues.subject) is not False


def presence(phrase: str, facts: Facts) -> tuple[float, str]:
    """(how present the phrase is in the whole clip, 0..1, and which evidence says so)."""
    if is_speech_phrase(phrase):
        quoted = quoted_text(phrase)
        if quoted:
            r = word_recall(quoted, facts.text or "")
            return r, f"transcript recall of '{quoted}': {r:.2f} (transcript: '{(facts.text or '')[:80]}')"
        p = min(1.0, facts.speech_s / 1.0)
        return p, f"voice activity {facts.speech_s:.2f} s"
    labs = phrase_labels(phrase)
    if not labs:
        return 0.0, f"no AudioSet class is close to '{phrase}'"
    best, why = 0.0, ""
    for lab, sim in labs:
        s = facts.strength(lab)
        if s > best:
            best, why = s, f"{lab} (similarity {sim:.2f}) strength {s:.2f}"
    return best, why or f"none of {', '.join(lab for lab, _ in labs[:3])} detected"


class Identity(BaseModel):
    """Is the sound in one window what a phrase names? (see the module docstring for the rule)"""

    phrase: str
    p: float
    verdict: Literal["confirmed", "unconfirmed", "contradicted"]
    support: float = 0.0
    support_label: str | None = None
    contradiction: float = 0.0
    contradiction_label: str | None = None
    heard: list[tuple[str, float]] = Field(default_factory=list, description="what the window's tags say")
    why: str = ""


MUSIC_CONFUSED = ("YAMNet names the instrument right at top-1 on 12 of 29 real instrument clips at best "
                  "(evals/recordings/README.md)")
"""Why an instrument of the same family (children of one parent such as 'Bowed string instrument' or 'Brass
instrument') never contradicts a phrase of the Music branch: a violin tagged where a string section plays, a
trumpet where a French horn does, says little about the one named, so it leaves the identity open rather than
making it a confident no. A class of another family (a violin for a celesta) or of another branch (speech, a
dog, an engine) still contradicts it."""


@functools.lru_cache(maxsize=1024)
def in_music(label: str) -> bool:
    """The label lies in AudioSet's Music branch (an instrument, a genre, a bell: 'Music' is among its
    ancestors), not counting 'Music' itself."""
    return "Music" in lexicon.ancestors(label)


def _verdict(p: float) -> Literal["confirmed", "unconfirmed", "contradicted"]:
    return "confirmed" if p >= 0.7 else "contradicted" if p <= 0.3 else "unconfirmed"


def heard_labels(window: TagWindow | None, n: int = 5, min_strength: float = 0.05) -> list[tuple[str, float]]:
    """The strongest labels of a window that name something (no room/noise labels, no speech labels)."""
    if window is None:
        return []
    return [(lab, s) for lab, s in window.ranked() if lab not in GENERIC and s >= min_strength][:n]


def hears_silence(window: TagWindow | None) -> bool:
    """The tagger hears the window as silence: Silence >= 0.5 and nothing that names a source >= 0.1."""
    return window is not None and window.strength("Silence") >= 0.5 and not heard_labels(window, min_strength=0.1)


def _closeness(phrase: str, heard: list[tuple[str, float]]) -> float:
    """The tag-strength-weighted MiniLM closeness of what was heard to the phrase."""
    return sum(s * label_similarity(phrase, lab) for lab, s in heard) / sum(s for _, s in heard)


def identify(phrase: str, window: TagWindow | None, *, speech_share: float = 0.0,
             transcript: str | None = None, events: list[Span] | None = None) -> Identity:
    """Check a phrase against one analysis window: tags for sounds (and the clip's own tag events of the
    phrase's labels over the same stretch, `events`); voice activity (share of the window that is speech) and
    the transcript for speech phrases."""
    if is_speech_phrase(phrase):
        quoted = quoted_text(phrase)
        if quoted:
            r = word_recall(quoted, transcript or "")
            p = round(min(0.95, max(0.05, 0.05 + 0.9 * r)), 3)
            return Identity(phrase=phrase, p=p, verdict=_verdict(p), support=r,
                            why=f"{r:.0%} of '{quoted}' heard there (transcript '{_short(transcript, 12)}')")
        p = round(min(0.95, max(0.05, 0.05 + 0.9 * min(1.0, speech_share / 0.5))), 3)
        return Identity(phrase=phrase, p=p, verdict=_verdict(p), support=speech_share,
                        why=f"voice activity over {speech_share:.0%} of it")
    labs = phrase_labels(phrase)
    if window is None:
        return Identity(phrase=phrase, p=0.5, verdict="unconfirmed", why="no tags of this stretch")
    gloss = phrase_gloss(phrase)
    if gloss is not None:
        return _identify_by_family(phrase, window, gloss, speech_share)
    own = {lab for lab, _ in labs}
    support, s_lab = max(((window.strength(lab), lab) for lab in own if window.strength(lab) > 0),
                         key=lambda t: t[0], default=(0.0, None))
    for e in events or []:
        if e.label in own and (e.score or 0.0) > support:
            support, s_lab = float(e.score or 0.0), f"{e.label} (tag event {e.start_s:.1f}-{e.end_s:.1f} s)"
    amb = source_ambiguous()
    # a phrase that itself names a sound's shape ('beeps', 'a click') is contradicted by another shape
    shape_phrase = bool(labs) and labs[0][0] in amb
    musical = bool(own) and all(in_music(lab) for lab in own)
    contra, c_lab = 0.0, None
    for lab, s in window.ranked():
        if s <= contra or lab in own or lab in GENERIC or lab in SPEECH_LABELS or lab in PARENT_LABELS:
            continue
        if musical and in_music(lab) and any(lexicon.kin(lab, o) for o in own):
            continue  # the tagger names one instrument of a family for another (MUSIC_CONFUSED)
        if lab in amb and not shape_phrase:
            continue
        # one shape word for another of the same branch ('Plop' for 'clicks', both onomatopoeia) is no contradiction
        if lab in amb and any(lexicon.kin(lab, o, min_shared_depth=1) for o in own):
            continue
        # another name for it, or its kin in a narrow family of the ontology: a parent ('Mallet percussion' for
        # a vibraphone) or a sibling the tagger confuses it with ('Glockenspiel'); siblings in a broad family
        # ('Organ' for a piano, both keyboards) stay distinct
        if label_similarity(phrase, lab) >= RELATED_SIM or any(lexicon.kin(lab, o, min_shared_depth=3)
                                                                for o in own):
            continue
        contra, c_lab = s, lab
    heard = heard_labels(window)
    # speech in a stretch that should be a sound: a contradiction the VAD sees
    if speech_share >= 0.5 and speech_share > contra:
        contra, c_lab = speech_share, "speech (voice activity)"
    conf = min(1.0, max(0.0, (support - 0.05) / 0.25))
    con = min(1.0, max(0.0, (contra - 0.15) / 0.35))
    p = 0.5 + 0.45 * (conf - con * (1 - conf))
    tie = ""
    if conf < 0.2 and con < 0.2 and heard:
        soft = _closeness(phrase, heard)
        p += max(-0.1, min(0.1, 0.4 * (soft - 0.3)))
        tie = f"; semantic closeness of what was heard {soft:.2f}"
    p = round(min(0.95, max(0.05, p)), 3)
    heard_s = ", ".join(f"{describe_label(lab)} {s:.2f}" for lab, s in heard) or "nothing specific"
    if not labs:
        why = f"no AudioSet class is close to '{phrase}'; heard: {heard_s}"
        p = 0.5
        if heard:  # what was heard may still be close in meaning: a nudge that never leaves 'unconfirmed'
            soft = _closeness(phrase, heard)
            p = round(0.5 + max(-0.1, min(0.1, 0.4 * (soft - 0.3))), 3)
            why += f"; semantic closeness of what was heard {soft:.2f}"
        # a sound that is not speech is still contradicted by a stretch that is speech (VAD or the speech tags)
        voice = max([speech_share] + [window.strength(lab) for lab in SPEECH_LABELS])
        if voice >= 0.5:
            p = round(max(0.05, 0.5 - 0.45 * min(1.0, (voice - 0.15) / 0.35)), 3)
            why += f"; the stretch is speech ({voice:.2f}), not '{phrase}'"
    else:
        why = (f"{s_lab or labs[0][0]} {support:.2f}"
               + (f", against {c_lab} {contra:.2f}" if c_lab else "") + f" (heard: {heard_s}{tie})")
    return Identity(phrase=phrase, p=p, verdict=_verdict(p), support=round(support, 3), support_label=s_lab,
                    contradiction=round(contra, 3), contradiction_label=c_lab, heard=heard, why=why)


def _identify_by_family(phrase: str, window: TagWindow, gloss: lexicon.GlossMatch, speech_share: float) -> Identity:
    """A phrase no class is named after, placed by its gloss: a tagged class of that family is weak support
    (the tagger has no class for the thing itself, so at most 'unconfirmed, leaning yes': p <= 0.65; up to a
    confirmation, 0.8, when the tagged class is the very kind WordNet names: a piccolo heard as a flute), a
    clearly tagged class of another family contradicts it as a named class's would."""
    anchors = (gloss.label,)
    amb = source_ambiguous()
    fam, f_lab = 0.0, None
    contra, c_lab = 0.0, None
    for lab, s in window.ranked():
        if lab in GENERIC or lab in SPEECH_LABELS or lab in amb:
            continue
        if lexicon.kin(lab, gloss.label) and lexicon.depth(lab) >= 2:
            if s > fam:
                fam, f_lab = s, lab
            continue
        if lab in PARENT_LABELS or s <= contra or related(phrase, lab, anchors):
            continue
        contra, c_lab = s, lab
    if speech_share >= 0.5 and speech_share > contra:
        contra, c_lab = speech_share, "speech (voice activity)"
    conf = min(1.0, max(0.0, (fam - 0.05) / 0.25))
    # the tagger has no class for the thing and names the nearest it has, weakly ('Clock 0.32' for castanet
    # clacks): another family contradicts it only from GLOSS_CONTRA_FROM up, fully from 0.6
    con = min(1.0, max(0.0, (contra - GLOSS_CONTRA_FROM) / (0.6 - GLOSS_CONTRA_FROM)))
    rise = 0.3 if gloss.kind_of and f_lab == gloss.label else 0.15
    p = round(min(0.95, max(0.05, 0.5 + rise * conf - 0.45 * con * (1 - conf))), 3)
    heard = heard_labels(window)
    heard_s = ", ".join(f"{describe_label(lab)} {s:.2f}" for lab, s in heard) or "nothing specific"
    why = (f"no AudioSet class is named after '{phrase}'; WordNet: '{gloss.sense}' -> the family of {gloss.label} "
           f"(similarity {gloss.similarity:.2f})"
           + (f"; {f_lab} of that family {fam:.2f}" if f_lab else "")
           + (f"; against {c_lab} {contra:.2f}" if c_lab else "") + f" (heard: {heard_s})")
    return Identity(phrase=phrase, p=p, verdict=_verdict(p), support=round(fam, 3), support_label=f_lab,
                    contradiction=round(contra, 3), contradiction_label=c_lab, heard=heard, why=why)


def _norm_words(s: str) -> list[str]:
    """Words with spelled numbers as digits (Whisper writes 'platform 2' for 'platform two')."""
    return phrases.norm_words(s)


def word_recall(expected: str, heard: str) -> float:
    """Share of the expected words found in order (difflib matching blocks over word lists)."""
    e, h = _norm_words(expected), _norm_words(heard)
    if not e:
        return 0.0
    sm = difflib.SequenceMatcher(a=e, b=h, autojunk=False)
    return sum(b.size for b in sm.get_matching_blocks()) / len(e)


def transcript_similarity(a: str | None, b: str | None) -> float:
    wa, wb = _norm_words(a or ""), _norm_words(b or "")
    if not wa and not wb:
        return 1.0
    return difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).ratio()


def spans(f: Facts, labels: set[str] | list[str]) -> list[tuple[float, float]]:
    """Time spans of the YAMNet events of any of `labels` in a clip."""
    return [(s.start_s, s.end_s) for s in f.tag_spans(labels)]


def overlaps(a: list[tuple[float, float]], b: list[tuple[float, float]], min_share: float = 0.5) -> bool:
    """Does any span of `a` overlap any span of `b` by at least `min_share` of the shorter one?"""
    for s0, e0 in a:
        for s1, e1 in b:
            inter = min(e0, e1) - max(s0, s1)
            if inter > 0 and inter >= min_share * max(1e-6, min(e0 - s0, e1 - s1)):
                return True
    return False


def speech_share(f: Facts, start_s: float, end_s: float) -> float:
    """Share of [start_s, end_s] that voice activity covers."""
    if end_s <= start_s:
        return 0.0
    inter = sum(max(0.0, min(end_s, s.end_s) - max(start_s, s.start_s)) for s in f.speech_segments)
    return min(1.0, inter / (end_s - start_s))


def words_within(f: Facts, start_s: float, end_s: float) -> str:
    """The words the transcript places (by their middle) inside [start_s, end_s]."""
    if f.transcript is None:
        return ""
    return " ".join(w.text for w in f.transcript.words_in(start_s, end_s))


def merge_similar_labels(labels: list[str], threshold: float = 0.7) -> list[str]:
    """Keep the first of each group of near-synonymous labels (Telephone / Telephone bell ringing)."""
    from audiomind.embedded import text

    kept: list[str] = []
    for lab in labels:
        if kept and float((text.embed([lab]) @ text.embed(kept).T).max()) >= threshold:
            continue
        kept.append(lab)
    return kept


def describe_label(label: str) -> str:
    """A caption-friendly form of an AudioSet label ('Crumpling, crinkling' -> 'crumpling'; 'Roaring cats
    (lions, tigers)' -> 'roaring cats', never a half-open bracket)."""
    first = label.split(",", maxsplit=1)[0].strip()
    if first.count("(") > first.count(")"):
        first = first.split("(")[0].strip()
    return first.lower()


def clip_caption(f: Facts, max_labels: int = 4) -> str:
    """A one-sentence caption of a clip from its facts (the cascade's 'description' of one clip)."""
    parts = []
    labels = merge_similar_labels(list(f.present_labels(PRESENT, SPEECH_LABELS | GENERIC)))[:max_labels]
    if f.has_speech:
        parts.append(f"speech saying '{_short(f.text)}'" if f.text else "speech")
    parts += [describe_label(lab) for lab in labels]
    if not parts:
        return "near silence" if (f.signal.rms_dbfs if f.signal else -100) < -50 else "unidentified sound"
    return _join(parts)


def _short(s: str | None, n: int = 12) -> str:
    w = (s or "").strip().split()
    return " ".join(w[:n]) + (" ..." if len(w) > n else "")


def _join(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def span_text(s: Span | tuple[float, float]) -> str:
    a, b = (s.start_s, s.end_s) if isinstance(s, Span) else s
    return f"{a:.2f}-{b:.2f} s"
