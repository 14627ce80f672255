"""Hard negatives for rubric benchmarks: attribute perturbation and instruction swapping."""

from __future__ import annotations

import pytest

from audiomind.judges.rubric.negatives import perturb_instruction, swap_instructions

pytestmark = pytest.mark.slow

INSTR = "A woman says 'good morning everyone', then a telephone rings."


def test_hard_negative_builders():
    assert perturb_instruction(INSTR, "gender")[0] == "A man says 'good morning everyone', then a telephone rings."
    assert perturb_instruction(INSTR, "order")[0].startswith("A telephone rings, then a woman says")
    assert perturb_instruction("Three short beeps.", "count")[0] == "Five short beeps."
    assert perturb_instruction("A trumpet plays a fast melody.", "tempo")[0] == "A trumpet plays a slow melody."
    assert perturb_instruction("Three short beeps.", "gender") is None
    perm = swap_instructions(["a", "b", "c", "d"], seed=3)
    assert sorted(perm) == [0, 1, 2, 3] and all(perm[i] != i for i in range(4))
