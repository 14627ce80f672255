"""Reading an edit instruction for the edit judge: the judge's view of `audiomind.language.edit`.

The reading itself is `EditSpec` (audiomind/language/edit.py): a list of add / delete / replace operations,
each with its sound and place, and the words the reading did and did not account for; its English phrases are
data (audiomind/language/data/edit_phrases.json). This module keeps the judge's older hand-off working on top
of it: `read_instruction` gives (operation, added, removed) with each place kept in its phrase, and
`split_position` reads a phrase's place as the judge's position checks expect it. `read_edit_for_judge` gives
the spec and, where the reading left content unread that matters, the reason a judge should abstain.
"""

from __future__ import annotations

from audiomind.language.edit import EditSpec, Position, Reading, read_edit
from audiomind.language.edit import split_position as _split_position

__all__ = ["EditSpec", "Position", "Reading", "read_edit", "read_edit_for_judge", "read_instruction", "split_position"]


def read_instruction(instruction: str) -> Reading | None:
    """(operation, added, removed) from an edit instruction, or None when it says no add, remove or replace.
    A compound instruction reads as one kind when its operations are all of it, else as 'replace' with every
    added and every removed sound ('lose the applause and add a bell' -> replace, [a bell], [the applause])."""
    return read_edit(instruction).legacy()


def read_edit_for_judge(instruction: str) -> tuple[EditSpec, str | None]:
    """(the reading, why a judge should abstain or None): a judge given a reason scores p = 0.5 and names it."""
    spec = read_edit(instruction)
    return spec, spec.abstain_reason()


def split_position(phrase: str) -> tuple[str, Position | None]:
    """('a bell ringing after the announcement') -> ('a bell ringing', Position(after, 'the announcement')), as
    the edit judge's position checks read it: a background place carries no reference (the judge decides what
    lies under it from what it hears), and a time ('at 3 seconds') is not one of its checks (None)."""
    core, pos = _split_position(phrase)
    if pos is None or pos.relation in ("time", "anywhere"):
        return (core, None) if pos is None else (phrase, None)
    if pos.relation == "background":
        pos = pos.model_copy(update={"reference": None})
    return core, pos
