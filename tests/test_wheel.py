"""`pip install` of a built wheel, used from outside the repository, still finds its tools/, prompts/
and examples (they are data inside the wheel) and answers a question."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(REPO)],
        check=True, timeout=600,
    )
    wheel = next((tmp / "dist").glob("audiomind-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("audiomind/_data/tools/") and n.endswith(".toml") for n in names)
    assert any(n.startswith("audiomind/_data/prompts/") and n.endswith(".md") for n in names)
    assert "audiomind/_data/trace.schema.json" in names
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(tmp / "site"), str(wheel)],
        check=True, timeout=600,
    )
    return tmp / "site"


def run_outside(wheel_site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(wheel_site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_wheel_carries_its_data(wheel_site, tmp_path):
    proc = run_outside(
        wheel_site, tmp_path, "-c",
        "import audiomind, audiomind.resources as r; print(audiomind.__file__); print(r.tools_dir()); "
        "print(r.prompts_dir()); print(r.examples_dir())",
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(line.startswith(str(wheel_site)) for line in lines), lines


def test_wheel_answers_offline_from_outside_the_repo(wheel_site, tmp_path):
    example = wheel_site / "audiomind" / "_data" / "examples" / "beeps.wav"
    proc = run_outside(
        wheel_site, tmp_path, "-m", "audiomind", "ask", str(example), "How many beeps are there in the recording?",
        "--choice", "3", "--choice", "4", "--choice", "5", "--choice", "6", "--trace-dir", str(tmp_path / "t"),
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Answer: 5" in proc.stdout
    assert list((tmp_path / "t").glob("*.json"))
