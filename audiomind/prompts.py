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


def choices_block(choices: list[str]) -> str:
    """How every prompt lists answer options: lettered, verbatim (the format check accepts either form)."""
    if not choices:
        return "Answer in free text."
    return "Choices:\n" + "\n".join(f"  {chr(65 + i)}. {c}" for i, c in enumerate(choices))
