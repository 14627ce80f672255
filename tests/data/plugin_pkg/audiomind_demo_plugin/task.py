"""The plugin's benchmark task: "is this clip loud or quiet?", answered by the plugin's tool alone (the task
supplies its own runner through the `agent_factory` hook, as the judge tasks do: no model is loaded)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from audiomind.bench.tasks.item_list import ItemListTask
from audiomind.state import ToolCallRequest


@dataclass
class Outcome:
    status: str = "answered"
    reason: str | None = None


@dataclass
class Answer:
    outcome: Outcome
    answer: str
    rationale: str
    confidence: float | None
    confidence_reason: str
    state: Any = None
    choice_index: int | None = None


class PeakAgent:
    """Answers 'loud' when the clip's peak reaches `threshold_db` dBFS, else 'quiet', from peak_level's output."""

    def __init__(self, artifacts_dir: str, threshold_db: float) -> None:
        from audiomind.tools.executor import ToolExecutor
        from audiomind.tools.manifest import ToolRegistry

        self.threshold_db = threshold_db
        self.executor = ToolExecutor(ToolRegistry.load(), Path(artifacts_dir))

    def ask(self, audio_path: str, question: str, choices: list[str] | None = None, **_: Any) -> Answer:
        from audiomind.artifacts import make_artifact

        a0 = make_artifact("a0", audio_path, operation="input")
        res = self.executor.run([ToolCallRequest(tool="peak_level", arguments={"artifact": "a0"},
                                                 reason="how loud is it")], [a0], step=0)
        call = res.tool_calls[0]
        if not call.output:
            return Answer(Outcome("error", f"peak_level failed: {call.error}"), "", "", None, "")
        peak = call.output["peak_dbfs"]
        word = "loud" if peak >= self.threshold_db else "quiet"
        index = (choices or []).index(word) if word in (choices or []) else None
        return Answer(Outcome(), word, f"peak {peak} dBFS against {self.threshold_db} dBFS [{call.id}]", 1.0,
                      "a measured level", choice_index=index)


def make_agent(artifacts_dir: str, threshold_db: float) -> PeakAgent:
    return PeakAgent(artifacts_dir, threshold_db)


@dataclass
class LoudnessTask(ItemListTask):
    """Item list rows {id, audio, question, choices: [loud, quiet], answer}; option threshold_db."""

    name: ClassVar[str] = "demo-loudness"
    description: ClassVar[str] = "loud or quiet, by the demo plugin's peak_level tool"
    threshold_db: int = -12

    def agent_factory(self, run_dir: Path, default: Any = None) -> Any:
        return functools.partial(make_agent, str((Path(run_dir) / "artifacts").resolve()), float(self.threshold_db))
