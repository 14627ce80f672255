"""The judges as benchmark tasks: `edit-eval`, `rubric-judge` and `aura` through the resumable batch runner.

Each task reads one JSON-lines file of judge inputs and runs the judge's own Python entry point on every row
(`audiomind.judges.edit.judge_edit`, `audiomind.judges.rubric.judge_rubric`, `audiomind.judges.aura.aura_score`)
as the runner's "agent", so a judge set gets what every benchmark gets: resume after a kill (one committed
line per item), `--workers` threads, `--ray`, one trace per item (the judge's own trace, the item id set on
it, at RUN_DIR/traces/<id>.json), run.json, summary.json and `bench report`.

Rows (paths relative to the source file's folder, or to --audio-dir, and they must stay inside it):

    edit-eval     id, original, edited, instruction, [original_description], [operation], [label]
    rubric-judge  id, audio, instruction, [label]
    aura          id, audio, question, response, reference, [label]

`label` (optional): the ground truth of the judge's verdict. edit-eval: true when the edited clip does what
the instruction asks (a real edit), false for a no-op or a wrong edit; rubric-judge: true when the audio
follows the instruction (both written true/false, yes/no or 1/0, in any case, as JSON or as a string); aura: a
number in [0, 1] (a human score; true/false read as 1/0). `operation` (add | delete | replace; `kind` is read
too, as the held-out sets name it) groups edit-eval's report; without it the operation the judge read from the
instruction is used. Other scalar fields are kept as metadata.
AURA scores a response against a reference answer (S_LLM rates the two), so a row without `reference` is
refused with that reason rather than scored against nothing.

What an item's result line holds: `prediction` the verdict (edit-eval: effective | partial | ineffective, the
measured effectiveness label; rubric-judge: aligned | misaligned; aura: correct | incorrect at S >= 0.5),
`confidence` the verdict's probability p of the positive side (effectiveness score, rubric score, AURA score;
not the answer's confidence of an agent run), `correct` the verdict against `label` when there is one. The
judge's other figures (Edit_score, Faith_score, holistic p_yes, the operation read, ...) are in its trace;
`judge_rows` reads them back, the task writes them to RUN_DIR/judgments.jsonl, and `bench report` tables them.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
)

from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.judge_rows import OPERATIONS, JudgeRow, judge_output, judge_rows, label_value  # noqa: F401
from audiomind.bench.rows import parse_lines, refuse_if_strict
from audiomind.bench.runner import RESULTS_FILE
from audiomind.bench.tasks.base import BaseTask, TaskItems, TaskReport
from audiomind.bench.tasks.item_list import _item_audio
from audiomind.fsutil import atomic_write_text
from audiomind.paths import PathPolicyError, clip_text

JUDGMENTS_FILE = "judgments.jsonl"

JudgeKind = Literal["edit", "rubric", "aura"]


# ---------------------------------------------------------------- rows


class _Row(BaseModel):
    """What every judge row has: an id and an optional label; other fields are kept (scalars as metadata)."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    id: str | int

    @field_validator("id")
    @classmethod
    def _id(cls, v: str | int) -> str:
        if isinstance(v, bool):
            raise ValueError("must be a string or an integer")  # noqa: TRY004 - pydantic reports ValueError
        v = str(v).strip()
        if not v:
            raise ValueError("is empty")
        return v


_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")


def _binary_label(v: Any) -> Any:
    """A true/false label as label files write it: a JSON boolean, 1 / 0 (a number or a string), or the words
    true / false and yes / no (any case); anything else (2, 0.5, "maybe") is refused, the value quoted in the row's error."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):
        return v == 1
    if isinstance(v, str) and v.strip().lower() in _TRUE + _FALSE:
        return v.strip().lower() in _TRUE
    raise ValueError(f"must be true/false, yes/no or 1/0, not {v!r}")


BinaryLabel = Annotated[StrictBool | None, BeforeValidator(_binary_label)]
"""edit-eval's and rubric-judge's label: the row's ground truth, read by `_binary_label`."""


def _non_empty(v: str) -> str:
    if not v.strip():
        raise ValueError("is empty")
    return v


class EditRow(_Row):
    original: str
    edited: str
    instruction: str
    original_description: str | None = None
    operation: Literal["add", "delete", "replace"] | None = None
    label: BinaryLabel = None

    _ne = field_validator("original", "edited", "instruction")(_non_empty)


class RubricRow(_Row):
    audio: str
    instruction: str
    label: BinaryLabel = None

    _ne = field_validator("audio", "instruction")(_non_empty)


class AuraRow(_Row):
    audio: str
    question: str
    response: str
    reference: str | None = Field(default=None, description="the reference answer AURA scores against "
                                  "(required in practice: a row without one is refused with that reason)")
    label: float | None = Field(default=None, ge=0.0, le=1.0)

    _ne = field_validator("audio", "question", "response")(_non_empty)

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, v: Any) -> Any:
        return float(v) if isinstance(v, bool) else v


def _label_text(label: bool | float | None) -> str | None:
    if label is None:
        return None
    if isinstance(label, bool):
        return "true" if label else "false"
    return f"{label:g}"


# ---------------------------------------------------------------- the judge as the runner's agent


class JudgeSpec(BaseModel):
    """How each item is judged (picklable: Ray ships it to its actors with the factory)."""

    kind: JudgeKind
    llm: str = "rules"
    frontend: str = "cascade"
    artifacts_dir: str = Field(description="the judge's trace_dir: derived clips go under it")
    cache_dir: str | None = Field(default=None, description="tool-result cache (None: every judgement pays its tools)")
    threshold: float = 0.75
    holistic: bool = True
    aggregation: Literal["geometric", "mean"] = "geometric"
    mode: Literal["paper", "two_threshold"] = "paper"
    w: float = 0.1
    timeout_s: float = 120.0


@dataclass
class JudgeAnswer:
    """What the runner reads from an answer (the shape of `AudioMind.ask`'s result it uses)."""

    outcome: Any
    answer: str
    rationale: str
    confidence: float | None
    confidence_reason: str
    state: Any
    choice_index: int | None = None


def verdict_of(kind: str, out: dict[str, Any]) -> tuple[str, float | None, str]:
    """(prediction, p of the positive verdict, what p is) from a judge's typed result (its trace output). p is
    the judge's calibrated probability (`p`, through its calibration table; 0.5 when it abstains) where the
    result has one, else its raw score; the verdict itself is the judge's own, taken on the raw score."""
    if kind == "edit":
        eff = out.get("effectiveness") or {}
        raw, verdict = eff.get("score"), str(eff.get("label") or "")
        what = "the measured editing-effectiveness score (effective at >= 0.6)"
    elif kind == "rubric":
        raw, verdict = out.get("score"), "aligned" if out.get("aligned") else "misaligned"
        what = f"the rubric score (aligned at >= {out.get('threshold')}, with a verifiable item)"
    else:
        raw = out.get("score")
        verdict = "correct" if raw is not None and raw >= 0.5 else "incorrect"
        what = "the AURA score S (correct at >= 0.5)"
    if out.get("p") is not None:
        return verdict, out["p"], f"p: {what}, calibrated ({out.get('calibration') or 'uncalibrated'})"
    return verdict, raw, f"p: {what}"


POSITIVE = {"edit": "effective", "rubric": "aligned", "aura": "correct"}


class JudgeAgent:
    """One judge per worker: `ask` runs the judge on an item and writes its trace where the runner wants it.

    The judge writes its own trace into `artifacts_dir` (its derived clips beside it); that trace, with the
    item id and label set on its question, is then written atomically at `trace_path` and the first copy
    removed, so RUN_DIR/traces/<id>.json is the one record of the item (under Ray the state travels back
    instead and the driver writes it)."""

    def __init__(self, spec: JudgeSpec):
        from audiomind.tools.executor import ToolCache
        from audiomind.tools.manifest import ToolRegistry

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        self.spec = spec
        self.registry = ToolRegistry.load()
        self.cache = ToolCache(Path(spec.cache_dir)) if spec.cache_dir else None

    def _judge(self, audio_path: str, question: str, extra_audio: list[str], inputs: dict[str, Any]) -> Any:
        s = self.spec
        common = {"trace_dir": s.artifacts_dir, "registry": self.registry, "timeout_s": s.timeout_s}
        if s.kind == "edit":
            from audiomind.judges.edit import judge_edit

            return judge_edit(audio_path, extra_audio[0], instruction=question,
                              original_description=inputs.get("original_description"), llm=s.llm,
                              frontend=s.frontend, cache=self.cache, **common)
        if s.kind == "rubric":
            from audiomind.judges.rubric import judge_rubric

            return judge_rubric(audio_path, question, llm=s.llm, frontend=s.frontend, threshold=s.threshold,
                                holistic=s.holistic, aggregation=s.aggregation, cache=self.cache, **common)
        from audiomind.judges.aura import aura_score

        return aura_score(question, inputs["reference"], inputs["response"], audio_path, llm=s.llm, w=s.w,
                          mode=s.mode, **common)

    def ask(self, audio_path: str, question: str, choices: list[str] | None = None, *, item_id: str | None = None,
            ground_truth: str | None = None, metadata: dict[str, Any] | None = None, write: bool = True,
            trace_path: str | Path | None = None, extra_audio: list[str] | None = None, **_: Any) -> JudgeAnswer:
        from audiomind.trace import load_trace, write_trace

        inputs = dict((metadata or {}).get("judge_inputs") or {})
        result = self._judge(audio_path, question, list(extra_audio or []), inputs)
        first = Path(result.trace_path)
        state = load_trace(first)
        state.question.item_id = item_id
        state.question.ground_truth = ground_truth
        state.question.metadata = {**state.question.metadata, "task_metadata": {
            k: v for k, v in (metadata or {}).items() if k != "judge_inputs"}}
        if write and trace_path is not None:
            write_trace(state, trace_path)
        first.unlink(missing_ok=True)
        out = result.model_dump(mode="json", exclude={"trace_path", "steps"})
        prediction, p, why = verdict_of(self.spec.kind, out)
        return JudgeAnswer(outcome=state.outcome, answer=prediction, rationale=str(getattr(result, "verdict", "")
                                                                                  or state.final_answer.text),
                           confidence=p, confidence_reason=why, state=state)


def make_judge_agent(spec: JudgeSpec) -> JudgeAgent:
    return JudgeAgent(spec)


# ---------------------------------------------------------------- the judge's figures, read back from traces


# ---------------------------------------------------------------- the tasks


def _scalar_extras(row: BaseModel, known: set[str]) -> dict[str, Any]:
    return {k: v for k, v in (row.model_extra or {}).items()
            if k not in known and isinstance(v, (str, int, float, bool)) and not isinstance(v, dict)}


@dataclass
class JudgeTask(BaseTask):
    """Shared by the three judge tasks. Options: `llm` (judge text model spec, default the rules), `frontend`
    (judge audio front end, default the cascade), `cache` (tool results cached on disk under RUN_DIR/tool-cache,
    shared by items with the same audio)."""

    kind: ClassVar[str] = ""
    row_model: ClassVar[type[_Row]] = _Row
    audio_fields: ClassVar[tuple[str, ...]] = ()
    question_field: ClassVar[str] = "instruction"
    input_fields: ClassVar[tuple[str, ...]] = ()

    llm: str = "rules"
    frontend: str = "cascade"
    cache: bool = False

    def spec(self, run_dir: Path) -> JudgeSpec:
        return JudgeSpec(kind=self.kind, llm=self.llm, frontend=self.frontend,  # type: ignore[arg-type]
                         artifacts_dir=str((run_dir / "artifacts").resolve()),
                         cache_dir=str((run_dir / "tool-cache").resolve()) if self.cache else None)

    def agent_factory(self, run_dir: Path, default: Any = None) -> Any:
        """The runner's agent factory for this task (picklable, for Ray): a judge, not an AudioMind agent."""
        return functools.partial(make_judge_agent, self.spec(Path(run_dir)))

    def _check_row(self, row: Any) -> str | None:
        return None

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems:
        source = Path(source)
        root = Path(audio_dir) if audio_dir is not None else source.parent
        items: list[BenchItem] = []
        seen: dict[str, int] = {}
        known = set(self.row_model.model_fields)
        for line, value, problem in parse_lines(source):
            where = f"{source.name}:{line}"
            rid = where
            error = problem
            row = None
            if error is None and not isinstance(value, dict):
                error = f"a row must be a JSON object, not {type(value).__name__}"
            if error is None:
                try:
                    row = self.row_model.model_validate(value)
                except ValidationError as exc:
                    error = "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ())) or 'row'}: {e.get('msg')}"
                                      for e in exc.errors()[:5])
                    raw_id = value.get("id")
                    if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) and str(raw_id).strip():
                        rid = str(raw_id).strip()
            if row is not None:
                rid = row.id
                error = self._check_row(row)
            if rid in seen:
                error = (error + "; " if error else "") + f"duplicate id {clip_text(rid, 80)!r} (first on line {seen[rid]})"
                rid = f"{rid}@{where}"
            else:
                seen[rid] = line
            if error is None and row is not None:
                try:
                    paths = [_item_audio(getattr(row, k), root) for k in self.audio_fields]
                except PathPolicyError as exc:
                    error = f"audio path refused: {exc}"
            if error is not None or row is None:
                items.append(BenchItem(id=rid, benchmark=self.name, audio_path="", question="",
                                       raw=value if isinstance(value, dict) else {}, error=f"{where}: {error}"))
                continue
            meta = _scalar_extras(row, known)
            if getattr(row, "operation", None):
                meta["operation"] = row.operation
            meta["judge_inputs"] = {k: getattr(row, k) for k in self.input_fields}
            items.append(BenchItem(id=row.id, benchmark=self.name, audio_path=paths[0], extra_audio=paths[1:],
                                   question=getattr(row, self.question_field), answer=_label_text(row.label),
                                   metadata=meta, raw=row.model_dump(mode="json")))
        refuse_if_strict(source, [], strict, [it.error for it in items if it.error])
        if limit:
            items = items[:limit]
        return TaskItems(source=source, items=items, audio_dir=audio_dir)

    def score(self, item: BenchItem, result: ItemResult) -> bool | None:
        """The verdict against the label: None without a label, for a graded label strictly between 0 and 1,
        or when the judge did not answer."""
        y = label_value(item.answer)
        if y is None or y not in (0.0, 1.0) or result.status != "answered" or result.input_error:
            return None
        return (result.prediction == POSITIVE[self.kind]) == (y == 1.0)

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]:
        run_dir = Path(run_dir)
        if not (run_dir / RESULTS_FILE).exists():
            return {}
        order = {it.id: i for i, it in enumerate(loaded.items)}
        rows = sorted(judge_rows(run_dir, self.kind), key=lambda r: order.get(r.id, len(order)))
        path = atomic_write_text(run_dir / JUDGMENTS_FILE, "".join(r.model_dump_json() + "\n" for r in rows))
        return {"judgments": path}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        from audiomind.bench.report import judge_report, judge_table

        rep = judge_report(Path(run_dir), self.kind)
        return TaskReport(data=rep.model_dump(mode="json"), table=judge_table(rep))

    def run_config(self, loaded: TaskItems) -> dict[str, Any]:
        return {"source": str(loaded.source.resolve()), "judge": self.kind, "judge_llm": self.llm,
                "judge_frontend": self.frontend, "judge_options": self.options()}


@dataclass
class EditEvalTask(JudgeTask):
    """Audio-edit evaluation over (original, edited, instruction) pairs."""

    name: ClassVar[str] = "edit-eval"
    description: ClassVar[str] = "the audio-edit judge over (original, edited, instruction) rows"
    source_help: ClassVar[str] = "edit pairs file (JSON lines: id, original, edited, instruction)"
    kind: ClassVar[str] = "edit"
    row_model: ClassVar[type[_Row]] = EditRow
    audio_fields: ClassVar[tuple[str, ...]] = ("original", "edited")
    input_fields: ClassVar[tuple[str, ...]] = ("original_description",)


@dataclass
class RubricJudgeTask(JudgeTask):
    """The dynamic rubric judge over (audio, instruction) rows. Options: `threshold` (default 0.75), `holistic`
    (the single-question baseline too, default true), `aggregation` (geometric, the default, or mean: how the
    items' p(yes) become the score; docs/JUDGES.md "Rubric aggregation" has the measured difference); `cache`
    defaults to true (an audio's positive and its negatives share one perception pass)."""

    name: ClassVar[str] = "rubric-judge"
    description: ClassVar[str] = "the dynamic rubric judge over (audio, instruction) rows"
    source_help: ClassVar[str] = "rubric items file (JSON lines: id, audio, instruction)"
    kind: ClassVar[str] = "rubric"
    row_model: ClassVar[type[_Row]] = RubricRow
    audio_fields: ClassVar[tuple[str, ...]] = ("audio",)

    cache: bool = True
    threshold: float = 0.75
    holistic: bool = True
    aggregation: str = "geometric"

    def __post_init__(self) -> None:
        from audiomind.judges.rubric.judge import AGGREGATIONS

        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"task option aggregation={self.aggregation!r}: expected {' or '.join(AGGREGATIONS)}")
        try:
            self.threshold = float(self.threshold)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"task option threshold={self.threshold!r}: expected a number") from exc
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"task option threshold={self.threshold}: expected a number in [0, 1]")

    def spec(self, run_dir: Path) -> JudgeSpec:
        return super().spec(run_dir).model_copy(update={"threshold": self.threshold, "holistic": self.holistic,
                                                        "aggregation": self.aggregation})


@dataclass
class AuraTask(JudgeTask):
    """AURA over (audio, question, response, reference) rows. Options: `mode` (paper | two_threshold), `w`."""

    name: ClassVar[str] = "aura"
    description: ClassVar[str] = "AURA over (audio, question, response, reference) rows"
    source_help: ClassVar[str] = "AURA rows file (JSON lines: id, audio, question, response, reference)"
    kind: ClassVar[str] = "aura"
    row_model: ClassVar[type[_Row]] = AuraRow
    audio_fields: ClassVar[tuple[str, ...]] = ("audio",)
    question_field: ClassVar[str] = "question"
    input_fields: ClassVar[tuple[str, ...]] = ("response", "reference")

    mode: str = "paper"
    w: float = 0.1

    def __post_init__(self) -> None:
        if self.mode not in ("paper", "two_threshold"):
            raise ValueError(f"task option mode={self.mode!r}: expected paper or two_threshold")
        try:
            self.w = float(self.w)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"task option w={self.w!r}: expected a number") from exc
        if not (0.0 <= self.w <= 1.0) or math.isnan(self.w):
            raise ValueError(f"task option w={self.w}: expected a number in [0, 1]")

    def _check_row(self, row: Any) -> str | None:
        if not (row.reference or "").strip():
            return ('no "reference": AURA rates a response against a reference answer (S_LLM), so a row '
                    "without one cannot be scored")
        return None

    def spec(self, run_dir: Path) -> JudgeSpec:
        return super().spec(run_dir).model_copy(update={"mode": self.mode, "w": self.w})


def run_judge_set(task_name: str, source: str | Path, run_dir: str | Path, *, options: dict[str, Any] | None = None,
                  audio_dir: str | Path | None = None, limit: int | None = None, workers: int = 1,
                  ray_address: str | None = None, progress: bool = True) -> tuple[Any, list[JudgeRow]]:
    """Run (or resume) a judge set as `bench run --task TASK` does, from Python (the evals/judges scripts):
    (the run's summary, every committed item's JudgeRow in source order). Bad rows are committed as errors."""
    from audiomind.bench.tasks import make_task, run_task

    task = make_task(task_name, options or {})
    loaded = task.load_items(Path(source), audio_dir=Path(audio_dir) if audio_dir else None, limit=limit)
    summary, _ = run_task(task, loaded, run_dir, None, workers=workers, ray_address=ray_address, progress=progress,
                          config={"caller": "run_judge_set"})
    order = {it.id: i for i, it in enumerate(loaded.items)}
    rows = [r for r in judge_rows(run_dir, task.kind) if r.id in order]  # type: ignore[attr-defined]
    return summary, sorted(rows, key=lambda r: order[r.id])
