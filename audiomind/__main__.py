from audiomind.cli import app

app()
