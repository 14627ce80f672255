"""Wording shared by the tools' claims and messages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def listed(items: Sequence[T], most: int, show: Callable[[T], str], sep: str = ", ") -> str:
    """The first `most` items shown and joined, then " (+N more)" when N were left out:
    `listed(events, 20, lambda e: f"{e['start_s']:.2f} s")` -> "0.50 s, 1.20 s (+3 more)"."""
    more = f" (+{len(items) - most} more)" if len(items) > most else ""
    return sep.join(show(x) for x in items[:most]) + more
