"""MMAR: read `MMAR-meta.jsonl` + an audio folder, run the agent, write predictions the official
`code/evaluation.py` of ddlBoJack/MMAR scores unchanged, and score them the same way.

Official scoring, as that script does it (reimplemented here, rules cited rather than code copied):

- A text is tokenised as the SET of lower-cased `\\b\\w+\\b` regex matches (Unicode word characters, so
  punctuation, case, order and repetition never matter).
- A prediction is correct iff (1) every answer token occurs in the prediction, and (2) the prediction shares
  no token with the "incorrect tokens": the tokens of each other choice minus the answer's tokens, where a
  choice whose token set equals the answer's token set contributes nothing. An empty prediction is wrong.
- Consequences kept on purpose (they are the official behaviour): an option letter ("B") is wrong unless
  the answer's only token is that letter; a verbatim wrong choice whose tokens equal the answer's (e.g.
  "From near to far" vs "From far to near") counts as correct; extra words are fine unless they belong to
  another choice.
- Rows without an `answer_prediction` key are skipped (not counted in any total); accuracy is reported
  overall and per `modality`, `category` and `sub-category`, each as correct / rows scored.

Our predictions file keeps every input field of each meta row and adds `answer_prediction` (the chosen
option TEXT, never a letter) and `thinking_prediction` (the agent's rationale, for MMAR-Rubrics). An item
whose audio is missing gets no `answer_prediction` (the official script then skips it, as it would an
unanswered row); an item that ran but produced no answer gets "" (scored wrong).

Input is checked row by row (audiomind.bench.rows): a malformed line, a row without `id`, `question`,
`audio_path` or `choices`, a mistyped field or a repeated id, and an `audio_path` that leaves the audio
folder (audiomind.paths), are reported with file and line and committed as errored items (`input_error`;
no prediction, not scored) while the good rows run; `strict=True` refuses such a file instead.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.rows import Row, RowsError, check_rows, parse_lines, refuse_if_strict
from audiomind.bench.runner import load_results
from audiomind.bench.tasks.base import BaseTask, TaskItems, TaskReport
from audiomind.fsutil import atomic_write_text
from audiomind.paths import MissingPathError, PathPolicyError, resolve_under

PREDICTION_KEY = "answer_prediction"
THINKING_KEY = "thinking_prediction"
PREDICTIONS_FILE = "predictions.jsonl"
SCORES_FILE = "scores.json"

# The official script's fixed reporting order (other values are appended after these).
MODALITIES = ("sound", "music", "speech", "mix-sound-music", "mix-sound-speech", "mix-music-speech",
              "mix-sound-music-speech")
CATEGORIES = ("Signal Layer", "Perception Layer", "Semantic Layer", "Cultural Layer")
GROUP_FIELDS = ("modality", "category", "sub-category")

_WORD = re.compile(r"\b\w+\b")


# ---------------------------------------------------------------- the official match rule


def tokenize(text: str) -> set[str]:
    """Lower-cased set of `\\b\\w+\\b` tokens (the official normalisation)."""
    return set(_WORD.findall(text.lower()))


def string_match(answer: str, prediction: str, choices: list[str]) -> bool:
    """True when `prediction` is scored correct for `answer` among `choices` by MMAR's rule (module doc)."""
    pred = tokenize(prediction or "")
    gold = tokenize(answer)
    if not pred:
        return False
    incorrect: set[str] = set()
    for choice in choices:
        toks = tokenize(choice)
        if toks != gold:
            incorrect |= toks - gold
    return gold <= pred and pred.isdisjoint(incorrect)


# ---------------------------------------------------------------- meta -> items


def load_meta(path: str | Path) -> list[dict[str, Any]]:
    """MMAR-meta.jsonl (or a JSON list) as dicts, in file order; a line that is not a JSON object refuses
    the file with every such line named (`RowsError`, a ValueError). Runs read rows one by one instead
    (`read_meta`)."""
    bad: list[str] = []
    rows: list[dict[str, Any]] = []
    for n, value, problem in parse_lines(path):
        if problem is None and not isinstance(value, dict):
            problem = f"a row must be a JSON object, not {type(value).__name__}"
        if problem is not None:
            bad.append(f"{Path(path).name}:{n}: {problem}")
        else:
            rows.append(value)
    if bad:
        raise RowsError(path, bad)
    return rows


def read_meta(path: str | Path) -> list[Row]:
    """Every meta row, checked on its own (see audiomind.bench.rows): a malformed line, a row without
    `id`, `question`, `audio_path` or `choices`, wrong types or a repeated id is a bad row with its file and
    line; the others are good."""
    return check_rows(path, audio_keys=("audio_path",), require_choices=True)


def resolve_audio(row: dict[str, Any], audio_dir: str | Path) -> Path:
    """Where a row's audio is: `audio_dir/<audio_path>` when audio_dir is the MMAR root (holding ./audio/),
    else `audio_dir/<file name>` when it is the audio folder itself; the latter when neither exists.

    The path must stay inside `audio_dir` (symlinks resolved) and be a regular file: anything else raises a
    `PathPolicyError` (never falling back to the bare file name), so no file outside the root is opened."""
    d = Path(audio_dir)
    rel = str(row.get("audio_path") or f"./audio/{row['id']}.wav")
    try:
        return resolve_under(d / rel, [d])
    except MissingPathError:
        pass
    flat = d / Path(rel).name
    try:
        return resolve_under(flat, [d])
    except MissingPathError:
        return flat.resolve()


def item_from_row(row: dict[str, Any], audio_dir: str | Path, *, item_id: str | None = None,
                  error: str | None = None, where: str = "") -> BenchItem:
    """The BenchItem of a meta row. A bad row (`error`) or a refused audio path gives an item that carries
    the reason and is committed as an error without running."""
    row = row or {}
    meta = {k: row.get(k) for k in (*GROUP_FIELDS, "language", "source") if k in row}
    meta = {k: v for k, v in meta.items() if v is None or isinstance(v, (str, int, float, bool))}
    audio = ""
    if error is None:
        try:
            audio = str(resolve_audio(row, audio_dir))
        except PathPolicyError as exc:
            error = f"{where + ': ' if where else ''}audio_path refused: {exc}"
    good = error is None
    choices = row.get("choices") if isinstance(row.get("choices"), list) else []
    return BenchItem(
        id=item_id if item_id is not None else str(row["id"]), benchmark="mmar", audio_path=audio,
        question=row["question"] if good else str(row.get("question") or ""),
        choices=list(choices) if good else [str(c) for c in choices],
        answer=row.get("answer") if isinstance(row.get("answer"), str) else None,
        metadata=meta, raw=row, error=error,
    )


def mmar_items(meta: str | Path, audio_dir: str | Path, *, ids: Iterable[str] | None = None,
               limit: int | None = None, strict: bool = False) -> tuple[list[Row], list[BenchItem]]:
    """The selected meta rows and their items, bad rows and refused audio paths included as items that
    carry their reason; `strict` raises RowsError listing them instead."""
    rows = read_meta(meta)
    if ids is not None:
        wanted = set(ids)
        rows = [r for r in rows if r.item_id in wanted or (r.data is not None and str(r.data.get("id")) in wanted)]
    if limit is not None:
        rows = rows[:limit]
    name = Path(meta).name
    items = [item_from_row(r.data or {}, audio_dir, item_id=r.item_id, error=r.error, where=f"{name}:{r.line}")
             for r in rows]
    refuse_if_strict(meta, [], strict, [it.error for it in items if it.error])
    return rows, items


def mmar_score(item: BenchItem, result: ItemResult) -> bool | None:
    """The runner's scorer for MMAR items: the official match; None when the item never ran (no audio, or
    its row or audio path was refused)."""
    if item.answer is None or result.status == "missing_audio" or result.input_error:
        return None
    return string_match(item.answer, result.prediction or "", item.choices)


# ---------------------------------------------------------------- predictions


def prediction_row(row: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """The meta row (every field kept, in order) plus answer/thinking predictions when the item ran."""
    out = dict(row)
    out.pop(PREDICTION_KEY, None)
    out.pop(THINKING_KEY, None)
    if result is None or result.get("status") == "missing_audio" or result.get("input_error"):
        return out
    out[PREDICTION_KEY] = result.get("prediction") or ""
    out[THINKING_KEY] = result.get("rationale") or ""
    return out


def write_predictions(rows: list[dict[str, Any]], results: dict[str, dict[str, Any]], path: str | Path,
                      ids: list[str] | None = None) -> Path:
    """predictions.jsonl in meta order (atomic rewrite; it is derived from results.jsonl). `ids` are the
    ids the rows' results were committed under (default: each row's own `id`)."""
    keys = ids if ids is not None else [str(r.get("id")) for r in rows]
    lines = [json.dumps(prediction_row(r, results.get(k)), ensure_ascii=False) for r, k in zip(rows, keys)]
    return atomic_write_text(Path(path), "\n".join(lines) + ("\n" if lines else ""))


# ---------------------------------------------------------------- scoring


class GroupScore(BaseModel):
    correct: int = 0
    total: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    def as_dict(self) -> dict[str, Any]:
        acc = self.accuracy
        return {"correct": self.correct, "total": self.total,
                "accuracy": None if acc is None else round(100.0 * acc, 2)}


class MMARScores(BaseModel):
    """Official-compatible accuracy (percent) overall and per modality / category / sub-category."""

    rows: int = Field(description="rows read")
    scored: int = Field(description="rows with an answer_prediction (the official total)")
    no_prediction: int = Field(description="rows without an answer_prediction (skipped, as officially)")
    correct: int
    accuracy: float | None = Field(description="percent over scored rows")
    modality: dict[str, dict[str, Any]]
    category: dict[str, dict[str, Any]]
    sub_category: dict[str, dict[str, Any]] = Field(alias="sub-category")

    model_config = {"populate_by_name": True}


def _ordered(counts: dict[str, GroupScore], fixed: Iterable[str]) -> dict[str, dict[str, Any]]:
    keys = [k for k in fixed] + sorted(k for k in counts if k not in fixed)
    return {k: counts.get(k, GroupScore()).as_dict() for k in keys}


def score_rows(rows: Iterable[dict[str, Any]]) -> MMARScores:
    """Score prediction rows exactly as the official script counts them (see the module docstring)."""
    n_rows = scored = correct = 0
    groups: dict[str, dict[str, GroupScore]] = {g: defaultdict(GroupScore) for g in GROUP_FIELDS}
    for row in rows:
        n_rows += 1
        if PREDICTION_KEY not in row or not isinstance(row.get("answer"), str):
            continue  # no prediction, or no ground truth to score it against
        pred = row[PREDICTION_KEY]
        ok = string_match(row["answer"], pred if isinstance(pred, str) else ("" if pred is None else str(pred)),
                          list(row.get("choices") or []))
        scored += 1
        correct += ok
        for g in GROUP_FIELDS:
            value = row.get(g)
            if value is None and g == "sub-category":
                continue  # the official script only counts sub-categories that are present
            gs = groups[g][str(value)]
            gs.total += 1
            gs.correct += ok
    return MMARScores(
        rows=n_rows, scored=scored, no_prediction=n_rows - scored, correct=correct,
        accuracy=round(100.0 * correct / scored, 2) if scored else None,
        modality=_ordered(groups["modality"], MODALITIES), category=_ordered(groups["category"], CATEGORIES),
        **{"sub-category": _ordered(groups["sub-category"], ())},
    )


def score_file(path: str | Path) -> MMARScores:
    return score_rows(load_meta(path))


def scores_table(scores: MMARScores, title: str = "MMAR accuracy") -> Any:
    """A rich Table: overall, then modality, category and sub-category rows (percent over n)."""
    from rich.table import Table

    t = Table(title=title)
    t.add_column("group")
    t.add_column("value")
    t.add_column("accuracy %", justify="right")
    t.add_column("correct / n", justify="right")

    def row(group: str, name: str, d: dict[str, Any]) -> None:
        acc = "-" if d["accuracy"] is None else f"{d['accuracy']:.2f}"
        t.add_row(group, name, acc, f"{d['correct']} / {d['total']}")

    row("overall", "all", {"accuracy": scores.accuracy, "correct": scores.correct, "total": scores.scored})
    for group, table in (("modality", scores.modality), ("category", scores.category),
                         ("sub-category", scores.sub_category)):
        for name, d in table.items():
            if d["total"]:
                row(group, name, d)
    if scores.no_prediction:
        t.caption = f"{scores.no_prediction} row(s) without answer_prediction skipped (as the official script does)"
    return t


# ---------------------------------------------------------------- the task


@dataclass
class MMARTask(BaseTask):
    """MMAR through the batch runner: official-format predictions.jsonl and scores.json per run.

    source: MMAR-meta.jsonl (or a JSON list); audio_dir: the MMAR root (holding audio/) or the audio folder
    itself (default: the meta file's folder)."""

    name: ClassVar[str] = "mmar"
    description: ClassVar[str] = ("MMAR (ddlBoJack/MMAR): predictions.jsonl the official evaluation.py scores "
                                  "unchanged, scores.json by modality / category / sub-category")
    source_help: ClassVar[str] = "MMAR meta file (MMAR-meta.jsonl)"

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False, ids: Iterable[str] | None = None) -> TaskItems:
        audio_dir = Path(audio_dir) if audio_dir is not None else Path(source).parent
        rows, items = mmar_items(source, audio_dir, ids=ids, limit=limit, strict=strict)
        return TaskItems(source=Path(source), items=items, rows=rows, audio_dir=audio_dir)

    def score(self, item: BenchItem, result: ItemResult) -> bool | None:
        return mmar_score(item, result)

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]:
        finalize(loaded.rows, run_dir)
        return {"predictions": Path(run_dir) / PREDICTIONS_FILE, "scores": Path(run_dir) / SCORES_FILE}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        path = Path(run_dir) / PREDICTIONS_FILE
        if not path.exists():
            return None
        scores = score_file(path)
        return TaskReport(data=scores.model_dump(by_alias=True),
                          table=scores_table(scores, title=f"MMAR accuracy ({run_dir})"))

    def run_config(self, loaded: TaskItems) -> dict[str, Any]:
        return {"benchmark": "mmar", "meta": str(loaded.source.resolve()),
                "audio_dir": str(Path(loaded.audio_dir or loaded.source.parent).resolve())}


def finalize(rows: list[Row] | list[dict[str, Any]], run_dir: str | Path) -> MMARScores:
    """predictions.jsonl + scores.json from what results.jsonl holds now (also after an interrupted run).
    Rows that are not JSON objects are left out (results.jsonl has their error)."""
    run_dir = Path(run_dir)
    results = load_results(run_dir)
    data = [r.data if isinstance(r, Row) else r for r in rows]
    ids = [r.item_id if isinstance(r, Row) else str(r.get("id")) for r in rows]
    kept = [(d, i) for d, i in zip(data, ids) if isinstance(d, dict)]
    path = write_predictions([d for d, _ in kept], results, run_dir / PREDICTIONS_FILE, ids=[i for _, i in kept])
    scores = score_file(path)
    atomic_write_text(run_dir / SCORES_FILE, scores.model_dump_json(indent=2, by_alias=True) + "\n")
    return scores
