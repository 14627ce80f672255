"""The listing commands under hostile manifests and careless invocations (the real CLI, as a subprocess with its
stdout a pipe): markup and terminal escapes in a tool's text are printed as text, never interpreted; a very long
cell is printed whole when piped; `--json` stays valid JSON whatever the text holds; unknown flags and a tool that
is not there are one error line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import cli

ESC_TITLE = "\x1b]0;pwned\x07"  # an OSC window-title sequence
ESC_CLEAR = "\x1b[2J"  # clear the screen
LONG = "x" * 3000


def _hostile_manifests(folder: Path) -> Path:
    folder.mkdir()
    (folder / "evil.toml").write_text(
        'name = "evil_tool"\nversion = "1"\ncategory = "metadata_validation"\n'
        f'function = "[bold red]markup[/] and {json.dumps(ESC_TITLE)[1:-1]} title {json.dumps(ESC_CLEAR)[1:-1]} '
        f'clear {LONG} END"\n'
        'supports = ["x"]\nnot_for = ["y"]\nentry = "audiomind.tools.metadata:probe"\ntimeout_s = 5\n'
        'example = { artifact = "a0" }\n')
    return folder


def test_markup_and_escapes_in_a_manifest_are_printed_as_text_and_whole(tmp_path):
    tools = _hostile_manifests(tmp_path / "tools")
    r = cli("tools", "list", "--tools-dir", str(tools), cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout  # no escape reaches the terminal
    assert "[bold red]markup[/]" in r.stdout  # markup shown literally, not interpreted
    row = next(line for line in r.stdout.splitlines() if "evil_tool" in line)
    assert LONG + " END" in row and "…" not in r.stdout  # the whole cell on its row, nothing cut


def test_json_listing_keeps_hostile_text_exact(tmp_path):
    tools = _hostile_manifests(tmp_path / "tools")
    r = cli("tools", "list", "--tools-dir", str(tools), "--json", cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    evil = next(t for t in json.loads(r.stdout)["tools"] if t["name"] == "evil_tool")
    assert ESC_TITLE in evil["does"] and ESC_CLEAR in evil["does"] and evil["does"].endswith(LONG + " END")
    assert "\x1b" not in r.stdout  # JSON escapes control characters (\u001b): nothing raw on the stream


def test_careless_invocations_are_one_clean_error(tmp_path):
    for args in (["tools", "list", "--jsn"], ["doctor", "--verbose"], ["--versoin"], ["models", "list", "extra"]):
        r = cli(*args, cwd=tmp_path, timeout=120)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stdout + r.stderr, args
    r = cli("tools", "show", "no_such_tool", cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "unknown tool" in r.stderr
