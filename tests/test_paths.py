"""The one path policy (audiomind.paths.resolve_under) on real files: what is inside the roots resolves,
and each way out (`..`, an absolute path, a symlink), each non-regular file (FIFO, directory, device)
and a symlink loop is refused with its own exception and message, without opening anything."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from audiomind.paths import (
    MissingPathError,
    NotRegularFileError,
    OutsideRootsError,
    PathPolicyError,
    SymlinkLoopError,
    clip_text,
    resolve_under,
)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "a" / "root"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    inside = root / "sub" / "clip.wav"
    inside.write_bytes(b"RIFF-inside")
    secret = outside / "secret.txt"
    secret.write_text("SECRET\n")
    (root / "link_in.wav").symlink_to(inside)
    (root / "link_out.wav").symlink_to(secret)
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    os.mkfifo(root / "pipe.wav")
    return {"root": root, "inside": inside, "secret": secret, "tmp": tmp_path}


def test_inside_paths_resolve_to_their_real_file(tree):
    root = tree["root"]
    assert resolve_under(root / "sub" / "clip.wav", [root]) == tree["inside"].resolve()
    assert resolve_under("sub/clip.wav", [root], base=root) == tree["inside"].resolve()
    assert resolve_under("./sub/../sub/clip.wav", [root], base=root) == tree["inside"].resolve()
    assert resolve_under(root / "link_in.wav", [root]) == tree["inside"].resolve()  # a symlink that stays inside
    # several roots: any one will do
    assert resolve_under(tree["secret"], [root, tree["secret"].parent]) == tree["secret"].resolve()


@pytest.mark.parametrize("rel", ["../../outside/secret.txt", "sub/../../../outside/secret.txt",
                                 "../../../../../../../../etc/passwd"])
def test_dot_dot_escapes_are_refused(tree, rel):
    with pytest.raises(OutsideRootsError, match="outside the allowed folder"):
        resolve_under(rel, [tree["root"]], base=tree["root"])


def test_absolute_paths_outside_are_refused(tree):
    with pytest.raises(OutsideRootsError, match="outside the allowed folder") as exc:
        resolve_under(tree["secret"], [tree["root"]])
    assert exc.value.reason == "outside" and exc.value.path == str(tree["secret"])
    with pytest.raises(OutsideRootsError):
        resolve_under("/etc/passwd", [tree["root"]])
    # a missing file outside is still 'outside' (not 'missing'): the caller learns the real reason
    with pytest.raises(OutsideRootsError):
        resolve_under(tree["tmp"] / "outside" / "nope.wav", [tree["root"]])


def test_a_symlink_pointing_outside_is_refused(tree):
    with pytest.raises(OutsideRootsError, match=r"resolves to .*secret.txt"):
        resolve_under(tree["root"] / "link_out.wav", [tree["root"]])
    # a root that is itself a symlink is resolved too, so its real files count as inside
    alias = tree["tmp"] / "alias"
    alias.symlink_to(tree["root"], target_is_directory=True)
    assert resolve_under(alias / "sub" / "clip.wav", [alias]) == tree["inside"].resolve()


def test_non_regular_files_are_refused_without_blocking(tree):
    root = tree["root"]
    result: dict[str, BaseException] = {}

    def probe() -> None:
        try:
            resolve_under(root / "pipe.wav", [root])
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result["exc"] = exc

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "a FIFO must be refused by stat, never opened (opening one blocks)"
    assert isinstance(result["exc"], NotRegularFileError) and "FIFO" in str(result["exc"])
    with pytest.raises(NotRegularFileError, match="a directory"):
        resolve_under(root / "sub", [root])
    with pytest.raises(NotRegularFileError, match="a character device"):
        resolve_under("/dev/null", ["/dev"])


def test_symlink_loops_are_refused(tree):
    with pytest.raises(SymlinkLoopError, match="symlink loop"):
        resolve_under(tree["root"] / "loop1", [tree["root"]])


def test_a_nul_character_is_refused_not_a_crash(tree):
    with pytest.raises(PathPolicyError, match="NUL character"):
        resolve_under("sub/clip.wav\x00.txt", [tree["root"]], base=tree["root"])


def test_missing_inside_is_its_own_error(tree):
    with pytest.raises(MissingPathError, match="no such file") as exc:
        resolve_under(tree["root"] / "nope.wav", [tree["root"]])
    assert isinstance(exc.value, FileNotFoundError)  # callers may treat it as 'missing audio'


def test_every_refusal_is_a_value_error_with_its_own_reason(tree):
    root = tree["root"]
    reasons = set()
    for p in (tree["secret"], root / "pipe.wav", root / "loop1", root / "nope.wav"):
        with pytest.raises(PathPolicyError) as exc:
            resolve_under(p, [root])
        assert isinstance(exc.value, ValueError)
        reasons.add(exc.value.reason)
    assert reasons == {"outside", "not_regular", "symlink_loop", "missing"}
    with pytest.raises(OutsideRootsError, match="no folder is allowed"):
        resolve_under(tree["inside"], [])


def test_messages_never_echo_a_whole_input():
    long = "x" * 5000
    clipped = clip_text(long, 200)
    assert len(clipped) < 260 and clipped.startswith("x" * 100) and "4800 more characters" in clipped
    assert clip_text("short") == "short"
    with pytest.raises(PathPolicyError) as exc:
        resolve_under("/" + long, ["/nonexistent-root"])
    assert len(str(exc.value)) < 600
