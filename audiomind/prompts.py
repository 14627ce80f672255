"""Prompt templates: one file each under `prompts/`, rendered with `$name` placeholders
(string.Template, so JSON braces in a prompt need no escaping). Every template's sha256 goes into the
trace, so a changed prompt is visible in any diff of two runs."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from string import Template

from pydantic import BaseModel

from audiomind.resources import prompts_dir


class PromptTemplate(BaseModel):
    name: str
    text: str
    sha256: str

    @property
    def id(self) -> str:
        """Stable id cited by observations: name@first 12 hex of the content hash."""
        return f"{self.name}@{self.sha256[:12]}"

    def render(self, **values: object) -> str:
        return Template(self.text).substitute({k: str(v) for k, v in values.items()})


@lru_cache(maxsize=None)
def load_prompt(name: str) -> PromptTemplate:
    path = prompts_dir() / f"{name}.md"
    if not path.exists():
        raise FileNotFoundError(f"no prompt template {name!r} at {path}")
    text = path.read_text(encoding="utf-8")
    return PromptTemplate(name=name, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())


def all_prompt_hashes() -> dict[str, str]:
    return {p.stem: load_prompt(p.stem).sha256 for p in sorted(prompts_dir().glob("*.md"))}


MAX_CHOICES = 26 + 26 * 26
"""Letters run A..Z, then AA..ZZ (as spreadsheet columns): 702 options at most."""


def choice_letter(index: int) -> str:
    """The letter(s) of option `index` (0 -> A, 25 -> Z, 26 -> AA, 27 -> AB, ...), so options beyond 26
    never become '[' or other punctuation."""
    if not 0 <= index < MAX_CHOICES:
        raise ValueError(f"choice index {index} has no letter (0..{MAX_CHOICES - 1})")
    if index < 26:
        return chr(65 + index)
    hi, lo = divmod(index - 26, 26)
    return chr(65 + hi) + chr(65 + lo)


def letter_index(letters: str) -> int | None:
    """The option index a letter label names (inverse of `choice_letter`, case-insensitive); None when
    `letters` is not one or two ASCII letters."""
    s = letters.strip().upper()
    if not (1 <= len(s) <= 2 and s.isascii() and s.isalpha()):
        return None
    if len(s) == 1:
        return ord(s) - 65
    return 26 + (ord(s[0]) - 65) * 26 + (ord(s[1]) - 65)


def choices_block(choices: list[str]) -> str:
    """How every prompt lists answer options: lettered, verbatim (the format check accepts either form)."""
    if not choices:
        return "Answer in free text."
    return "Choices:\n" + "\n".join(f"  {choice_letter(i)}. {c}" for i, c in enumerate(choices))
