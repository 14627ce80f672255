"""audiomind: auditable, agentic audio understanding."""

__version__ = "0.1.0"

from audiomind.api import AudioMind, AskResult  # noqa: E402

__all__ = ["AudioMind", "AskResult", "__version__"]
