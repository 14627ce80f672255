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
- A percentage is (correct / total) * 100 printed to 2 places (`official_percent`): 23 of 160 is 14.37, where
  round(100 * 23 / 160, 2) would give 14.38.
- The official script crashes on a row it cannot read (a blank line, a prediction that is not a string, no
  `answer`, a modality or category outside its fixed tables, choices that are not strings); here such a row
  is named with its line and what is wrong (`PredictionRowsError`), and not scored: `score_file` refuses the
  file by default, or leaves those rows out and lists them (`malformed`) when asked to.

The published meta has four rows (lines 396, 596, 615 and 886) whose last option is an empty string "". They
run as published: the empty option stays in the row (predictions.jsonl, scoring: it has no tokens, so it
changes no verdict), the item records where it was (`empty_options`) and the agent is offered the other
options only, so it can never choose it.

Strict scoring, reported next to the official number (which stays exactly as above): every meta row with a
ground truth counts (a row without a prediction is wrong, not skipped), and a prediction is right only when it
IS the answer option (its text, case and runs of white space ignored): no letter, no extra words, and no
order-swapped neighbour. Order-swapped items are those where two options have the same word set ("From far to
near" / "From near to far"); the official rule cannot tell their options apart, so they are listed in
scores.json (23 of the 1,000 rows of the released meta, 20 of them with the answer among the look-alikes).
scores.json also records the sha256 of the meta file scored, so a number can be tied to the exact data.

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
from audiomind.paths import MissingPathError, PathPolicyError, clip_text, resolve_under

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


# ---------------------------------------------------------------- strict scoring


def _norm_option(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def strict_match(answer: str, prediction: str | None) -> bool:
    """True only when the prediction is the answer option itself (case and runs of white space ignored): no
    letter, no extra words, no other option with the same words in another order."""
    return bool(prediction and str(prediction).strip()) and _norm_option(prediction) == _norm_option(answer)


def swapped_options(choices: list[str]) -> list[list[str]]:
    """Groups of options that share one word set (the official rule cannot tell them apart), e.g.
    [["From far to near", "From near to far"]]; [] when every option has its own word set."""
    groups: dict[frozenset[str], list[str]] = {}
    for c in choices or []:
        groups.setdefault(frozenset(tokenize(str(c))), []).append(str(c))
    return [g for g in groups.values() if len(g) > 1]


def file_sha256(path: str | Path) -> str:
    import hashlib

    from audiomind.fsutil import MAX_INPUT_BYTES, open_input

    h = hashlib.sha256()
    with open_input(path) as f:  # a regular file only (a FIFO or /dev/zero is refused, never read)
        n = 0
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            n += len(block)
            if n > MAX_INPUT_BYTES:
                from audiomind.fsutil import InputFileError

                raise InputFileError(f"cannot read {Path(path).name}: more than the {MAX_INPUT_BYTES:,} bytes an "
                                     "input file may hold", path)
    return h.hexdigest()


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
    return check_rows(path, audio_keys=("audio_path",), require_choices=True, empty_choices_ok=True)


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
    empty = [n for n, c in enumerate(choices, start=1) if c == ""]
    if empty:  # published as is (MMAR has four such rows); never offered, so never chosen
        meta["empty_options"] = empty
        choices = [c for c in choices if c != ""]
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
    if result is None or result.get("status") in ("missing_audio", "error") or result.get("input_error"):
        return out  # an API failure is no answer: left out, as the official script leaves out rows without one
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


def official_percent(correct: int, total: int) -> float | None:
    """A percentage as the official script prints it: (correct / total) * 100 formatted to 2 places (the
    float of that text); None when total is 0 (the official script prints 0.00 there)."""
    if not total:
        return None
    return float(f"{(correct / total) * 100:.2f}")


class PredictionRowsError(RowsError):
    """A predictions file with rows the official script could not score (it would crash on them)."""


def prediction_row_problem(row: Any) -> str | None:
    """Why a prediction row cannot be scored as the official script scores it (it would crash), or None.
    A row without `answer_prediction` is fine: it is skipped, as officially."""
    if not isinstance(row, dict):
        return f"a row must be a JSON object, not {type(row).__name__}"
    if PREDICTION_KEY not in row:
        return None
    problems = []
    pred = row[PREDICTION_KEY]
    if not isinstance(pred, str):
        problems.append(f'"{PREDICTION_KEY}" must be a string, not '
                        f'{"null" if pred is None else type(pred).__name__}')
    if "answer" not in row:
        problems.append('missing "answer"')
    elif not isinstance(row["answer"], str):
        problems.append(f'"answer" must be a string, not {"null" if row["answer"] is None else type(row["answer"]).__name__}')
    for key, known in (("modality", MODALITIES), ("category", CATEGORIES)):
        if key not in row:
            problems.append(f'missing "{key}"')
        elif row[key] not in known:
            problems.append(f'unknown {key} {clip_text(repr(row[key]), 60)} (the official script knows '
                            f'{", ".join(known)})')
    choices = row.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        problems.append('"choices" must be a list of strings')
    sub = row.get("sub-category")
    if sub is not None and not isinstance(sub, str):
        problems.append(f'"sub-category" must be a string, not {type(sub).__name__}')
    return "; ".join(problems) or None


def read_prediction_rows(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """(the rows that can be scored, 'FILE:LINE: problem' for each that cannot). Every line counts: a blank
    line is a problem (the official script's json.loads fails on it), as is invalid JSON; a `.json` file
    holds one list of rows ('FILE:item N')."""
    from audiomind.fsutil import MAX_ROW_BYTES, InputFileError, input_lines, load_json_file, loads_json

    p = Path(path)
    good: list[dict[str, Any]] = []
    bad: list[str] = []
    entries: list[tuple[str, Any, str | None]] = []
    try:  # the bounded reader: a regular file under MAX_INPUT_BYTES, JSON of bounded depth and integer size
        if p.suffix == ".json":
            try:
                data = load_json_file(p)
            except InputFileError as exc:
                if exc.line is None:
                    raise
                raise PredictionRowsError(p, [f"{p.name}:{exc.line}: not valid JSON ({exc.reason})"]) from None
            if not isinstance(data, list):
                raise PredictionRowsError(p, [f"{p.name}: a .json predictions file must hold one list of rows"])
            entries = [(f"item {i}", v, None) for i, v in enumerate(data, start=1)]
        else:
            for n, raw in input_lines(p):  # streamed: one line at a time, a too-long line skipped unread
                if raw is None:
                    entries.append((str(n), None, f"the row is longer than {MAX_ROW_BYTES:,} bytes (not read)"))
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    entries.append((str(n), None, f"not UTF-8 text ({exc.reason} at byte {exc.start})"))
                    continue
                if not line.strip():
                    entries.append((str(n), None, "blank line"))
                    continue
                try:
                    entries.append((str(n), loads_json(line), None))
                except InputFileError as exc:
                    detail = f"{exc.reason}, column {exc.column}" if exc.column else str(exc)
                    entries.append((str(n), None, f"not valid JSON ({detail})"))
    except InputFileError as exc:
        raise PredictionRowsError(p, [str(exc)]) from None
    for where, value, problem in entries:
        problem = problem or prediction_row_problem(value)
        if problem:
            bad.append(f"{p.name}:{where}: {problem}")
        else:
            good.append(value)
    return good, bad


class GroupScore(BaseModel):
    correct: int = 0
    total: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    def as_dict(self) -> dict[str, Any]:
        return {"correct": self.correct, "total": self.total, "accuracy": official_percent(self.correct, self.total)}


class StrictScores(BaseModel):
    """Strict accuracy (percent): every row with a ground truth counts, a missing prediction is wrong, and only
    the answer option itself is right (see the module doc)."""

    total: int = Field(description="rows with a ground truth (a missing prediction counts as wrong)")
    missing: int = Field(description="of those, rows without an answer_prediction (counted wrong)")
    correct: int
    accuracy: float | None = Field(description="percent over total")
    modality: dict[str, dict[str, Any]] = Field(default_factory=dict)
    category: dict[str, dict[str, Any]] = Field(default_factory=dict)
    sub_category: dict[str, dict[str, Any]] = Field(default_factory=dict, alias="sub-category")

    model_config = {"populate_by_name": True}


class SwappedItem(BaseModel):
    """A row whose options include look-alikes: options with one word set in different orders."""

    id: str
    groups: list[list[str]] = Field(description="the options that share a word set, per group")
    answer: str | None
    answer_swapped: bool = Field(description="the answer is one of the look-alikes (the official rule then also "
                                             "credits its order-swapped neighbours)")
    prediction: str | None = None
    official: bool | None = Field(default=None, description="the official verdict; None: no prediction (skipped)")
    strict: bool = Field(default=False, description="the strict verdict (a missing prediction is wrong)")


class MMARScores(BaseModel):
    """Official-compatible accuracy (percent) overall and per modality / category / sub-category, the strict
    score beside it, the order-swapped items, and which meta file was scored."""

    rows: int = Field(description="rows read")
    scored: int = Field(description="rows with an answer_prediction (the official total)")
    no_prediction: int = Field(description="rows without an answer_prediction (skipped, as officially)")
    correct: int
    accuracy: float | None = Field(description="percent over scored rows")
    modality: dict[str, dict[str, Any]]
    category: dict[str, dict[str, Any]]
    sub_category: dict[str, dict[str, Any]] = Field(alias="sub-category")
    strict: StrictScores | None = Field(default=None, description="strict scoring next to the official one")
    order_swapped_count: int = Field(default=0, description="rows with options that share a word set")
    order_swapped: list[SwappedItem] = Field(default_factory=list)
    meta_path: str | None = Field(default=None, description="the meta file the predictions were scored against")
    meta_sha256: str | None = Field(default=None, description="its sha256 (None: no meta file was named)")
    predictions_sha256: str | None = Field(default=None, description="the sha256 of the predictions file scored")
    malformed: list[str] = Field(default_factory=list, description="'FILE:LINE: problem' for each row left out "
                                 "because the official script could not score it (it would crash)")
    errors: int = Field(default=0, description="items whose model calls failed (status error in results.jsonl): "
                        "written without a prediction, never scored as wrong")
    partial: bool = Field(default=False, description="errors remain: the accuracy covers only the items that ran")

    model_config = {"populate_by_name": True}


def _ordered(counts: dict[str, GroupScore], fixed: Iterable[str]) -> dict[str, dict[str, Any]]:
    keys = list(fixed) + sorted(k for k in counts if k not in fixed)
    return {k: counts.get(k, GroupScore()).as_dict() for k in keys}


def _add(groups: dict[str, dict[str, GroupScore]], row: dict[str, Any], ok: bool) -> None:
    for g in GROUP_FIELDS:
        value = row.get(g)
        if value is None and g == "sub-category":
            continue  # the official script only counts sub-categories that are present
        gs = groups[g][str(value)]
        gs.total += 1
        gs.correct += ok


def _prediction_text(row: dict[str, Any]) -> str | None:
    if PREDICTION_KEY not in row:
        return None
    pred = row[PREDICTION_KEY]
    return pred if isinstance(pred, str) else None  # not a usable prediction (never str() of a list)


def score_rows(rows: Iterable[dict[str, Any]], meta: Iterable[dict[str, Any]] | None = None) -> MMARScores:
    """Score prediction rows exactly as the official script counts them (see the module docstring), and
    strictly beside it. `meta`: the meta rows the predictions answer; given, the strict score counts every one
    of them (a meta row whose id no prediction row carries is wrong), else it counts the prediction rows."""
    rows = list(rows)
    n_rows = scored = correct = 0
    malformed: list[str] = []
    groups: dict[str, dict[str, GroupScore]] = {g: defaultdict(GroupScore) for g in GROUP_FIELDS}
    for i, row in enumerate(rows, start=1):
        problem = prediction_row_problem(row)
        if problem:
            malformed.append(f"row {i}: {problem}")
            continue
        n_rows += 1
        pred = _prediction_text(row)
        if pred is None or not isinstance(row.get("answer"), str):
            continue  # no prediction, or no ground truth to score it against
        ok = string_match(row["answer"], pred, list(row.get("choices") or []))
        scored += 1
        correct += ok
        _add(groups, row, ok)

    by_id = {str(r.get("id")): r for r in rows if isinstance(r, dict)}
    universe = list(meta) if meta is not None else rows
    s_total = s_missing = s_correct = 0
    s_groups: dict[str, dict[str, GroupScore]] = {g: defaultdict(GroupScore) for g in GROUP_FIELDS}
    swapped: list[SwappedItem] = []
    for m in universe:
        if not isinstance(m, dict) or not isinstance(m.get("answer"), str):
            continue
        row = by_id.get(str(m.get("id")), {}) if meta is not None else m
        pred = _prediction_text(row)
        ok = strict_match(m["answer"], pred)
        s_total += 1
        s_missing += pred is None
        s_correct += ok
        _add(s_groups, m, ok)
        choices = [str(c) for c in m.get("choices") or []]
        look_alikes = swapped_options(choices)
        if look_alikes:
            gold = tokenize(m["answer"])
            swapped.append(SwappedItem(
                id=str(m.get("id")), groups=look_alikes, answer=m["answer"],
                answer_swapped=any(tokenize(g[0]) == gold for g in look_alikes), prediction=pred,
                official=None if pred is None else string_match(m["answer"], pred, choices), strict=ok))
    strict = StrictScores(
        total=s_total, missing=s_missing, correct=s_correct,
        accuracy=official_percent(s_correct, s_total),
        modality=_ordered(s_groups["modality"], MODALITIES), category=_ordered(s_groups["category"], CATEGORIES),
        **{"sub-category": _ordered(s_groups["sub-category"], ())},
    )
    return MMARScores(
        rows=n_rows, scored=scored, no_prediction=n_rows - scored, correct=correct,
        accuracy=official_percent(correct, scored),
        modality=_ordered(groups["modality"], MODALITIES), category=_ordered(groups["category"], CATEGORIES),
        **{"sub-category": _ordered(groups["sub-category"], ())},
        strict=strict, order_swapped_count=len(swapped), order_swapped=swapped, malformed=malformed,
    )


def score_file(path: str | Path, meta: str | Path | None = None, *, skip_malformed: bool = False) -> MMARScores:
    """Score a predictions file; with `meta` (the meta file the predictions answer) the strict score counts
    every meta row, and the meta file's sha256 is recorded. A row the official script could not score is
    named with its line and what is wrong: the file is refused (`PredictionRowsError`), or with
    `skip_malformed` those rows are left out and listed in `malformed`."""
    rows, bad = read_prediction_rows(path)
    if bad and not skip_malformed:
        raise PredictionRowsError(path, bad)
    scores = score_rows(rows, load_meta(meta) if meta is not None else None)
    scores.malformed = bad
    scores.predictions_sha256 = file_sha256(path)
    if meta is not None:
        scores.meta_path = str(Path(meta).resolve())
        scores.meta_sha256 = file_sha256(meta)
    return scores


def score_run(predictions: str | Path, meta: str | Path | None) -> MMARScores:
    """A run's scores: its predictions file (every selected meta row, in order, so the strict score counts
    exactly the rows the run was given) with the sha256 of the meta file they were read from."""
    scores = score_file(predictions, skip_malformed=True)
    if meta is not None and Path(meta).is_file():
        scores.meta_path = str(Path(meta).resolve())
        scores.meta_sha256 = file_sha256(meta)
    return scores


def scores_table(scores: MMARScores, title: str = "MMAR accuracy") -> Any:
    """A rich Table: overall, then modality, category and sub-category rows (percent over n)."""
    from rich.table import Table

    t = Table(title=title)
    t.add_column("group")
    t.add_column("value")
    t.add_column("accuracy %", justify="right")
    t.add_column("correct / n", justify="right")

    def row(group: str, name: str, d: dict[str, Any]) -> None:
        from rich.markup import escape

        from audiomind.paths import visible

        acc = "-" if d["accuracy"] is None else f"{d['accuracy']:.2f}"  # a category from the file: shown, inert
        t.add_row(group, escape(visible(name)), acc, f"{d['correct']} / {d['total']}")

    row("overall", "all" if not scores.partial else f"all (partial: {scores.errors} errors)",
        {"accuracy": scores.accuracy, "correct": scores.correct, "total": scores.scored})
    if scores.strict is not None:
        st = scores.strict
        row("strict", "all (missing = wrong, exact option)", {"accuracy": st.accuracy, "correct": st.correct,
                                                              "total": st.total})
    for group, table in (("modality", scores.modality), ("category", scores.category),
                         ("sub-category", scores.sub_category)):
        for name, d in table.items():
            if d["total"]:
                row(group, name, d)
    notes = []
    if scores.no_prediction:
        notes.append(f"{scores.no_prediction} row(s) without answer_prediction skipped (as the official script does)")
    if scores.malformed:
        notes.append(f"{len(scores.malformed)} malformed row(s) not scored (listed in scores.json)")
    if scores.order_swapped_count:
        notes.append(f"{scores.order_swapped_count} order-swapped item(s) (options sharing a word set; listed in "
                     "scores.json)")
    if scores.meta_sha256:
        notes.append(f"meta sha256 {scores.meta_sha256}")
    if notes:
        t.caption = "; ".join(notes)
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
        finalize(loaded.rows, run_dir, meta=loaded.source)
        return {"predictions": Path(run_dir) / PREDICTIONS_FILE, "scores": Path(run_dir) / SCORES_FILE}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        path = Path(run_dir) / PREDICTIONS_FILE
        if not path.exists():
            return None
        scores = score_run(path, loaded.source)
        return TaskReport(data=scores.model_dump(by_alias=True),
                          table=scores_table(scores, title=f"MMAR accuracy ({run_dir})"))

    def run_config(self, loaded: TaskItems) -> dict[str, Any]:
        return {"benchmark": "mmar", "meta": str(loaded.source.resolve()),
                "audio_dir": str(Path(loaded.audio_dir or loaded.source.parent).resolve())}


def finalize(rows: list[Row] | list[dict[str, Any]], run_dir: str | Path, meta: str | Path | None = None) -> MMARScores:
    """predictions.jsonl + scores.json from what results.jsonl holds now (also after an interrupted run).
    Rows that are not JSON objects are left out (results.jsonl has their error). `meta`: the meta file the
    rows were read from (its sha256 goes into scores.json)."""
    run_dir = Path(run_dir)
    results = load_results(run_dir)
    data = [r.data if isinstance(r, Row) else r for r in rows]
    ids = [r.item_id if isinstance(r, Row) else str(r.get("id")) for r in rows]
    kept = [(d, i) for d, i in zip(data, ids) if isinstance(d, dict)]
    path = write_predictions([d for d, _ in kept], results, run_dir / PREDICTIONS_FILE, ids=[i for _, i in kept])
    scores = score_run(path, meta)
    scores.errors = sum(1 for i in ids if (results.get(i) or {}).get("status") == "error"
                        and not (results.get(i) or {}).get("input_error"))
    scores.partial = scores.errors > 0
    atomic_write_text(run_dir / SCORES_FILE, scores.model_dump_json(indent=2, by_alias=True) + "\n")
    return scores
