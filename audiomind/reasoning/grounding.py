"""Whether a literal match of what was heard accounts for the whole question.

A check of what was said (transcript_match and its kin) finds a choice's words in what was recognised. That
answers a question about what was said; it checks nothing else the question asks. A question can pick among
the things said by something the transcript does not hold: 'what does the quieter voice in the background
say', 'which word did the second speaker replace', 'which dish did she refuse'. The reading of such a
question is only partly accounted for by the evidence that decided it, and its confidence must say so.

The question's topic words (the frame's words the reader placed as neither function, question, speech nor
operator words) that WordNet lists as content words (not 'until', 'and') are each accounted for by a literal
match when one of these holds:

- the word, or another form of it (the same Snowball stem), is in what was heard or in a choice: it locates
  what the question is about ('the train to Boston', 'the price of the tickets');
- a cue of what the deciding check reads matched it ('not in the spoken list' for a check of what was not
  said: data/cues.toml's speech_content and the question's steps);
- a WordNet synonym of it from its three most frequent senses (its base form: 'bring' for 'brought'; 'pick up'
  for 'collect') is in what was heard, unless that synonym is a light verb;
- its WordNet antonym is in what was heard: the question asks about the property the speech states from its
  other side ('until what hour is it open' over 'it closes at eight');
- it is a light verb ('go', 'want'; data/words.toml's light_verbs), whose meaning the question's other words
  carry, or a word a question uses to ask or to point at what was said as a whole ('select', 'according',
  'the following items'; asking_words);
- its most frequent WordNet sense is a kind of person ('caller', 'passenger'): it names who speaks;
- it names what the choices are: a WordNet ancestor of a choice's word ('city' for 'Paris', 'day' for
  'Tuesday', 'food' for 'pasta'), or an amount or a time when the choices are amounts ('price', 'time' for
  '9:30').

A literal match also says nothing of a chosen choice's words that were not heard: when most of its content
words (besides those of the question) were not heard, the choice's claim rests on what the recogniser missed
or on what the speech never said ('offering to close the window' over 'do you mind if I open the window'), and
the answer step caps the confidence as well (unheard_in_choice).

A topic word for which none holds is a condition the literal match did not check: the answer step caps the
confidence and names the word. No English lives here: the words come from the reading, the evidence, the
data tables and WordNet.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import snowballstemmer

from audiomind.language.frames import QuestionFrame
from audiomind.language.numbers import spoken_quantities
from audiomind.language.text import ASKING_WORDS, LIGHT_VERBS, content, words
from audiomind.language.wordnet import antonyms, listed, names_amount, names_kind_of, names_person, synonyms


@lru_cache(maxsize=1)
def _stemmer() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


def _stems(ws: list[str]) -> set[str]:
    return set(_stemmer().stemWords(ws))


@lru_cache(maxsize=1)
def _light() -> frozenset[str]:
    """The stems of the light verbs (data/words.toml)."""
    return frozenset(_stems(sorted(LIGHT_VERBS)))


@lru_cache(maxsize=1)
def _asking() -> frozenset[str]:
    """The stems of the words questions ask with (data/words.toml)."""
    return frozenset(_stems(sorted(ASKING_WORDS)))


def _said_in(texts: list[str]) -> Callable[[str], bool]:
    """A test of whether a word was said in `texts`: in some form (its Snowball stem), as a WordNet synonym from
    its three most frequent senses that is no light verb ('bring' for 'brought', 'pick up' for 'collect'), or
    as its antonym (the same property from its other side: 'open until' over 'closes at')."""
    said = [_stemmer().stemWords(words(t)) for t in texts]
    seen = {w for ws in said for w in ws}
    light = _light()

    def test(w: str) -> bool:
        if _stemmer().stemWord(w) in seen:
            return True
        for syn in synonyms(w):
            phrase = _stemmer().stemWords(syn.split())
            if phrase != [_stemmer().stemWord(w)] and not (len(phrase) == 1 and phrase[0] in light) and any(
                    phrase == ws[i:i + len(phrase)] for ws in said for i in range(len(ws))):
                return True
        return any(_stemmer().stemWord(x) in seen for x in antonyms(w))

    return test


def _content(ws: list[str]) -> list[str]:
    """The words WordNet lists as content words ('until', 'and' are not), once each, in order."""
    return [w for w in dict.fromkeys(ws) if w.isalpha() and listed(w) is not False]


def ungrounded(frame: QuestionFrame, heard: list[str], read: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The question's topic words that neither what was `heard` (texts of the recognitions), the choices, nor
    the words the deciding check's cues `read` account for, in order, once each (see the module's docstring)."""
    topic = [w for w in _content([w.word.removesuffix("'s") for w in frame.words if w.role == "topic"])
             if w not in read]
    if not topic:
        return []
    said = _said_in([*heard, *frame.choices])
    framing = _light() | _asking()
    choice_words = [w for c in frame.choices for w in words(c) if w.isalpha()]
    amounts = bool(frame.choices) and all(spoken_quantities(c) for c in frame.choices)
    return [w for w in topic
            if _stemmer().stemWord(w) not in framing and not said(w) and not names_person(w)
            and not (amounts and names_amount(w)) and not any(names_kind_of(w, c) for c in choice_words)]


def unheard_in_choice(choice: str, question: str, heard: list[str]) -> tuple[list[str], int]:
    """(the content words of `choice` that neither what was `heard` nor the question holds, how many content
    words the choice has). 'offering to close the window' over 'do you mind if I open the window': the act the
    choice names ('offering') was not heard, so a match of its other words does not say the choice holds."""
    framing = _light() | _stems(words(question))
    ws = [w for w in _content(content(choice)) if _stemmer().stemWord(w) not in framing]
    said = _said_in(heard)
    return [w for w in ws if not said(w)], len(ws)
