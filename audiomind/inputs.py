"""Checks on a question and its options before anything runs, shared by `ask`, the Python API and the
benchmark readers (which report them per row).

Why: a blank question gives the planner nothing to do, and an option holding a newline or another
control character is pasted verbatim into every prompt's lettered choices block, where it can forge a
line (e.g. a fake `ANSWER:` line) or break the format check's letter parsing.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from audiomind.paths import clip_text
from audiomind.prompts import MAX_CHOICES

# Cc: C0/C1 controls (newline, tab, NUL, ESC, DEL, ...); Zl/Zp: Unicode line and paragraph separators.
_BAD_CATEGORIES = {"Cc": "a control character", "Zl": "a line separator", "Zp": "a paragraph separator"}


def _bad_char(text: str) -> tuple[int, str, str] | None:
    for i, ch in enumerate(text):
        kind = _BAD_CATEGORIES.get(unicodedata.category(ch))
        if kind is not None:
            return i, ch, kind
    return None


def question_problem(question: Any) -> str | None:
    """Why `question` cannot be asked (not a string, empty or only whitespace); None when it can."""
    if not isinstance(question, str):
        return f"the question must be text, not {type(question).__name__}"
    if not question.strip():
        return "the question is empty (or only whitespace)"
    return None


def choices_problem(choices: Any) -> str | None:
    """Why `choices` cannot be offered (one option only, too many, not text, empty, or holding a newline or
    another control character); None when they can. An empty list means a free-text question."""
    if choices is None:
        return None
    if not isinstance(choices, list):
        return f"choices must be a list of strings, not {type(choices).__name__}"
    if len(choices) == 1:
        return "a multiple-choice question needs at least 2 choices (got 1)"
    if len(choices) > MAX_CHOICES:
        return f"at most {MAX_CHOICES} choices can be lettered (A..Z, AA..ZZ); got {len(choices)}"
    for n, c in enumerate(choices, start=1):
        if not isinstance(c, str):
            return f"choice {n} must be a string, not {type(c).__name__} ({clip_text(repr(c), 60)})"
        if not c.strip():
            return f"choice {n} is empty"
        bad = _bad_char(c)
        if bad is not None:
            i, ch, kind = bad
            return (f"choice {n} ({clip_text(repr(c), 80)}) contains {kind} ({ch!r} at position {i}); "
                    "options must be one line of printable text")
    return None


def check_question(question: Any, choices: Any = None) -> None:
    """Raise ValueError with one clear sentence when the question or its choices cannot be asked."""
    problem = question_problem(question) or choices_problem(choices)
    if problem:
        raise ValueError(problem)
