"""audiomind: auditable, agentic audio understanding."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["AskResult", "AudioMind", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from audiomind.api import AskResult, AudioMind


def __getattr__(name: str) -> Any:
    """`from audiomind import AudioMind` imports the agent (and LangGraph) only when it is asked for, so the
    CLI's `--help` and the commands that never build an agent start without it."""
    if name in ("AudioMind", "AskResult"):
        from audiomind import api

        return getattr(api, name)
    raise AttributeError(f"module 'audiomind' has no attribute {name!r}")
