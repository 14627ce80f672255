"""Hard negatives for rubric benchmarks: attribute perturbation of an instruction by rules (gender, count,
order, tempo, sound, quoted words; the reading and the swap tables are `audiomind.language.rubric_perturb`'s)
and instruction swapping (a derangement)."""

from __future__ import annotations

import random

from audiomind.language.rubric_perturb import KINDS, perturbed


def perturb_instruction(instruction: str, kind: str | None = None, seed: int = 0) -> tuple[str, str] | None:
    """Attribute perturbation by rules: (perturbed instruction, what changed), or None when no rule applies.
    Kinds: gender, count, order, tempo, sound, words (tried in a seeded order when kind is None)."""
    rng = random.Random(seed)
    kinds = [kind] if kind else rng.sample(list(KINDS), len(KINDS))
    for k in kinds:
        out = perturbed(instruction, k)
        if out and out != instruction:
            return out, k
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
