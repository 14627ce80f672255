"""Prompt templates: one file each under `prompts/`, rendered with `$name` placeholders
(string.Template, so JSON braces in a prompt need no escaping). Every template's sha256 goes into the
trace, so a changed prompt is visible in any diff of two runs.

Untrusted text stays data: everything heard (transcripts, captions, tags, observations, tool claims)
reaches a model only inside an evidence block, `<evidence id=... source=...>...</evidence>`, with its
content escaped so it can neither close the block nor open another. A template marks where heard text
goes by putting the placeholder inside such a block; `render` escapes those values itself. Code that
lists evidence builds the blocks with `evidence_block`. A request that carries blocks also carries the
rule of `prompts/evidence_rule.md` as its system instruction (`evidence_rule`, `has_evidence`).
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
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
        """The template with `values` filled in; a value whose placeholder sits inside an evidence block
        of the template is escaped (heard text stays data)."""
        quoted = _block_placeholders(self.text)
        return Template(self.text).substitute(
            {k: escape_evidence(str(v)) if k in quoted else str(v) for k, v in values.items()})


@cache
def load_prompt(name: str) -> PromptTemplate:
    path = prompts_dir() / f"{name}.md"
    if not path.exists():
        raise FileNotFoundError(f"no prompt template {name!r} at {path}")
    text = path.read_text(encoding="utf-8")
    return PromptTemplate(name=name, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())


# ---------------------------------------------------------------- untrusted text as data

_BLOCK = re.compile(r"<evidence\b[^>]*>.*?</evidence>", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(?:\{([_a-z][_a-z0-9]*)\}|([_a-z][_a-z0-9]*))", re.IGNORECASE)
_OPEN = re.compile(r"<evidence\s", re.IGNORECASE)


def _block_placeholders(text: str) -> set[str]:
    """The placeholder names that appear inside an evidence block of a template."""
    return {a or b for block in _BLOCK.findall(text) for a, b in _PLACEHOLDER.findall(block)}


def escape_evidence(text: str) -> str:
    """Content of an evidence block: `&`, `<` and `>` as entities, so no heard text can close the block
    (`</evidence>`) or open one of its own."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: object) -> str:
    return escape_evidence(str(value)).replace('"', "&quot;").replace("\n", " ")


def evidence_block(content: str, **attrs: object) -> str:
    """`<evidence k="v" ...>` + escaped content + `</evidence>`; attributes with a None value are left out
    (an attribute named `from_` is written `from`)."""
    head = " ".join(f'{k.rstrip("_")}="{_attr(v)}"' for k, v in attrs.items() if v is not None and v != "")
    return f"<evidence {head}>\n{escape_evidence(content.strip())}\n</evidence>"


def has_evidence(text: str) -> bool:
    """Whether a prompt carries an evidence block (then its request carries the evidence rule)."""
    return bool(_OPEN.search(text or ""))


def evidence_rule() -> str:
    """The system instruction that goes with every request carrying evidence blocks."""
    return load_prompt("evidence_rule").text.strip()


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
