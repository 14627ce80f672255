"""The MCP server's path check against a client that swaps the file under it (issue 35): a thread swaps
ROOT/race.wav between a regular file and a symlink to a file outside every root while tool calls (and the
`ask` tool) name it. No call may ever read the outside file: each input is opened once and checked as
opened, and the run reads a copy made through that descriptor (audiomind.limits.open_confined), as `serve`
does (tests/hostile/test_serve_race.py). In-process (ToolServer), bounded to a few seconds."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from audiomind.tools.mcp_server import ToolInputError, ToolServer

from .conftest import write_tone

SECONDS = 3.0

pytestmark = pytest.mark.timeout(60)  # a regression hangs; it must not hang the suite


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _swapper(root: Path, outside: Path, stop: threading.Event, swaps: list[int]) -> None:
    """Swap ROOT/race.wav between the inside file (a hard link) and a symlink to `outside`, atomically."""
    race, link, regular = root / "race.wav", root / ".race.lnk", root / ".race.reg"
    while not stop.is_set():
        for p in (link, regular):
            p.unlink(missing_ok=True)
        os.symlink(outside, link)
        os.replace(link, race)
        os.link(root / "inside.wav", regular)
        os.replace(regular, race)
        swaps[0] += 1


@pytest.fixture
def race(tmp_path):
    """(server, inside sha, outside sha, start the swapper -> stop it): the inside clip lasts 1 s, the
    outside one 2 s, so a probe's duration also tells which file a call read."""
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    inside = write_tone(root / "inside.wav", seconds=1.0)
    outside = write_tone(elsewhere / "secret.wav", seconds=2.0)
    os.link(inside, root / "race.wav")
    recorded: list[tuple[str, str]] = []

    def agent(path: str, question: str, choices: list[str] | None):
        recorded.append((path, _sha(Path(path))))  # what the agent would read, read now
        raise ToolInputError("recorded")

    server = ToolServer([root], runs_dir=tmp_path / "runs", use_cache=False, ask_agent=agent)
    stop, swaps = threading.Event(), [0]
    thread = threading.Thread(target=_swapper, args=(root, outside, stop, swaps), daemon=True)
    thread.start()
    yield server, _sha(inside), _sha(outside), recorded, swaps
    stop.set()
    thread.join(5)


def test_a_tool_call_never_reads_a_file_swapped_in_after_the_check(race):
    server, inside, outside, _, swaps = race
    ok = refused = 0
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        try:
            out = server.call("probe", {"audio": "race.wav"})
        except ToolInputError as exc:  # the symlink was there when it was opened: refused, said why
            assert any(w in str(exc) for w in ("outside", "symlink", "no such file", "cannot be resolved")), str(exc)
            refused += 1
            continue
        assert out.ok, out.error
        assert out.inputs[0]["sha256"] == inside and out.inputs[0]["sha256"] != outside
        assert out.inputs[0]["name"] == "race.wav"  # named as the client named it, not by the copy's hash
        assert abs(out.call.output["duration_s"] - 1.0) < 0.01, out.call.output  # the 2 s file was never read
        ok += 1
    assert swaps[0] > 50 and ok > 10, (swaps[0], ok, refused)


def test_the_ask_tool_hands_the_agent_the_checked_file_only(race):
    server, inside, _outside, recorded, swaps = race
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        try:
            server.ask({"audio": "race.wav", "question": "Is there a tone?", "choices": ["yes", "no"]})
        except ToolInputError:
            pass
    assert swaps[0] > 50 and len(recorded) > 10, (swaps[0], len(recorded))
    assert {sha for _, sha in recorded} == {inside}
    assert all(str(server.runs_dir) in path for path, _ in recorded)  # a copy in the run folder, not the name
