"""Real runs to audit: the shipped examples answered by the default offline stack (rules planner +
cascade front end), plus one run whose question points at a part of the clip, so the trace has a
derived artifact (crop) and a re-listen. Traces are copied before a test edits them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from audiomind.resources import examples_dir
from audiomind.state import EvidenceState

QUESTIONS = {q["id"]: q for q in map(json.loads, (examples_dir() / "questions.jsonl").read_text().splitlines())}


@dataclass
class Run:
    name: str
    path: Path
    state: EvidenceState

    def data(self) -> dict:
        return json.loads(self.path.read_text())


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Run]:
    from audiomind.api import AudioMind

    out = tmp_path_factory.mktemp("audit-traces")
    agent = AudioMind(trace_dir=out)
    made: dict[str, Run] = {}
    for name in ("beeps", "phone_ring", "weather"):
        q = QUESTIONS[name]
        r = agent.ask(examples_dir() / q["audio"], q["question"], q["choices"], item_id=name, ground_truth=q["answer"])
        made[name] = Run(name, Path(r.trace_path), r.state)
    # beeps.wav: 5 beeps starting at 0.5, 1.3, 2.1, 2.9, 3.7 s, so the first 2 s hold 2 of them
    r = agent.ask(examples_dir() / "beeps.wav", "How many beeps are there in the first 2 seconds?",
                  ["1", "2", "3", "4"], item_id="beeps_first2", ground_truth="2")
    made["crop"] = Run("crop", Path(r.trace_path), r.state)
    return made


@pytest.fixture
def edit(tmp_path):
    """edit(run, fn) -> path of a copy of the run's trace whose JSON `fn` changed in place."""
    counter = iter(range(1000))

    def _edit(run: Run, fn) -> Path:
        data = run.data()
        fn(data)
        p = tmp_path / f"{run.name}-{next(counter)}.json"
        p.write_text(json.dumps(data, indent=2))
        return p

    return _edit
