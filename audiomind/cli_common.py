"""What every command group shares: consoles, the one-line error exit, quiet model loaders, spec help."""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.markup import escape

console = Console()
err = Console(stderr=True)

PLANNER_HELP = "rules (offline default) | openai:MODEL[@BASE_URL] | gemini:MODEL | ollama:MODEL[@URL] | llamacpp:/path.gguf"
FRONTEND_HELP = "cascade (offline default) | openai:MODEL[@BASE_URL] (e.g. vLLM Qwen2.5-Omni) | gemini:MODEL"


def fail(message: str, code: int = 2) -> None:
    """A user-fixable error: one red line on stderr, a non-zero exit, never a traceback."""
    err.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def quiet_libraries() -> None:
    """Model loaders print progress bars; a CLI answer should not be buried under them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
