"""Hard negatives for rubric benchmarks: attribute perturbation of an instruction by rules (gender, count,
order, tempo, sound, quoted words) and instruction swapping (a derangement)."""

from __future__ import annotations

import random
import re

from audiomind.judges import evidence as ev
from audiomind.judges.rubric.decompose import FEMALE, MALE, MUSIC, NUM_WORDS, NUMBERS

_GENDER_SWAP = {"woman": "man", "man": "woman", "women": "men", "men": "women", "female": "male", "male": "female",
                "girl": "boy", "boy": "girl", "she": "he", "he": "she", "her": "his", "his": "her", "lady": "gentleman",
                "gentleman": "lady"}
_TEMPO_SWAP = {"fast": "slow", "slow": "fast", "quick": "slow", "upbeat": "slow", "slowly": "quickly",
               "quickly": "slowly", "calm": "energetic", "energetic": "calm"}
_SOUND_SWAP = {"telephone": "dog", "phone": "dog", "beeps": "knocks", "beep": "knock", "paper": "glass",
               "crumpling": "shattering", "crumples": "shatters", "crumpled": "shattered", "trumpet": "violin",
               "violin": "trumpet", "flute": "guitar", "saxophone": "piano", "drums": "bells", "busy signal": "siren",
               "piano": "saxophone", "music": "rain"}


def perturb_instruction(instruction: str, kind: str | None = None, seed: int = 0) -> tuple[str, str] | None:
    """Attribute perturbation by rules: (perturbed instruction, what changed), or None when no rule applies.
    Kinds: gender, count, order, tempo, sound, words (tried in a seeded order when kind is None)."""
    rng = random.Random(seed)
    kinds = [kind] if kind else rng.sample(["gender", "count", "order", "tempo", "sound", "words"], 6)
    for k in kinds:
        out = _perturb(instruction, k)
        if out and out != instruction:
            return out, k
    return None


def _swap_words(text: str, table: dict[str, str]) -> str:
    keys = sorted(table, key=len, reverse=True)
    rx = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b", re.IGNORECASE)

    def rep(m: re.Match) -> str:
        w = table[m.group(1).lower()]
        return w.capitalize() if m.group(1)[0].isupper() else w

    return rx.sub(rep, text)


def _perturb(s: str, k: str) -> str | None:
    quoted = ev.quoted_text(s)
    outside = s.replace(quoted, "\x00") if quoted else s
    if k == "gender" and (FEMALE.search(outside) or MALE.search(outside)):
        return _swap_words(outside, _GENDER_SWAP).replace("\x00", quoted or "")
    if k == "tempo" and MUSIC.search(outside) and re.search(r"\b(" + "|".join(_TEMPO_SWAP) + r")\b", outside, re.IGNORECASE):
        return _swap_words(outside, _TEMPO_SWAP).replace("\x00", quoted or "")
    if k == "count":
        m = re.search(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|twice|thrice|once|\d+)\b", outside, re.IGNORECASE)
        if m:
            w = m.group(1).lower()
            n = int(w) if w.isdigit() else NUMBERS[w]
            new = NUM_WORDS.get(n + 2, str(n + 2))
            if w in ("once", "twice", "thrice"):
                new = f"{NUM_WORDS.get(n + 2, n + 2)} times"
            return (outside[:m.start()] + (new.capitalize() if m.group(1)[0].isupper() else new)
                    + outside[m.end():]).replace("\x00", quoted or "")
    if k == "order":
        parts = re.split(r"(,?\s*\b(?:then|followed by)\b\s*)", s.rstrip("."), maxsplit=1, flags=re.IGNORECASE)
        if len(parts) == 3:
            a, _, b = parts
            return f"{b[0].upper() + b[1:]}, then {a[0].lower() + a[1:]}."
    if k == "sound":
        keys = sorted(_SOUND_SWAP, key=len, reverse=True)
        m = re.search(r"\b(" + "|".join(re.escape(x) for x in keys) + r")\b", outside, re.IGNORECASE)
        if m:  # one sound swapped: a fine-grained mismatch, not a different scene
            w = _SOUND_SWAP[m.group(1).lower()]
            w = w.capitalize() if m.group(1)[0].isupper() else w
            return (outside[:m.start()] + w + outside[m.end():]).replace("\x00", quoted or "")
    if k == "words" and quoted:
        alt = {"good morning everyone": "see you tomorrow", "the train leaves at nine": "the shop opens at ten",
               "please close the door": "please open the window"}.get(quoted.lower())
        words = quoted.split()
        new_q = alt or " ".join(reversed(words)) if len(words) > 1 else "nothing at all"
        return s.replace(quoted, new_q)
    return None


def swap_instructions(instructions: list[str], seed: int = 0) -> list[int]:
    """Instruction swapping: a derangement (no item keeps its own instruction), as indices."""
    n = len(instructions)
    if n < 2:
        raise ValueError("swapping needs at least two instructions")
    rng = random.Random(seed)
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if all(perm[i] != i and instructions[perm[i]] != instructions[i] for i in range(n)):
            return perm
