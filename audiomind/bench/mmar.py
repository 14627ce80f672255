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
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.runner import PriceTable, RunSummary, atomic_write_text, load_results, run_batch

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
    """MMAR-meta.jsonl (or a JSON list) as dicts, in file order."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    if p.suffix == ".json":
        data = json.loads(text)
        return list(data)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def resolve_audio(row: dict[str, Any], audio_dir: str | Path) -> Path:
    """Where a row's audio is: `audio_dir/<audio_path>` when audio_dir is the MMAR root (holding ./audio/),
    else `audio_dir/<file name>` when it is the audio folder itself; the latter when neither exists."""
    d = Path(audio_dir)
    rel = str(row.get("audio_path") or f"./audio/{row['id']}.wav")
    as_root = (d / rel).resolve()
    flat = (d / Path(rel).name).resolve()
    if as_root.is_file():
        return as_root
    return flat


def item_from_row(row: dict[str, Any], audio_dir: str | Path) -> BenchItem:
    meta = {k: row.get(k) for k in (*GROUP_FIELDS, "language", "source") if k in row}
    return BenchItem(
        id=str(row["id"]), benchmark="mmar", audio_path=str(resolve_audio(row, audio_dir)),
        question=row["question"], choices=list(row.get("choices") or []), answer=row.get("answer"),
        metadata=meta, raw=row,
    )


def mmar_score(item: BenchItem, result: ItemResult) -> bool | None:
    """The runner's scorer for MMAR items: the official match; None when the item never ran (no audio)."""
    if item.answer is None or result.status == "missing_audio":
        return None
    return string_match(item.answer, result.prediction or "", item.choices)


# ---------------------------------------------------------------- predictions


def prediction_row(row: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """The meta row (every field kept, in order) plus answer/thinking predictions when the item ran."""
    out = dict(row)
    out.pop(PREDICTION_KEY, None)
    out.pop(THINKING_KEY, None)
    if result is None or result.get("status") == "missing_audio":
        return out
    out[PREDICTION_KEY] = result.get("prediction") or ""
    out[THINKING_KEY] = result.get("rationale") or ""
    return out


def write_predictions(rows: list[dict[str, Any]], results: dict[str, dict[str, Any]], path: str | Path) -> Path:
    """predictions.jsonl in meta order (atomic rewrite; it is derived from results.jsonl)."""
    lines = [json.dumps(prediction_row(r, results.get(str(r["id"]))), ensure_ascii=False) for r in rows]
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
        if PREDICTION_KEY not in row:
            continue
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


# ---------------------------------------------------------------- the whole benchmark


def run_mmar(
    meta: str | Path,
    audio_dir: str | Path,
    run_dir: str | Path,
    make_agent: Callable[[], Any],
    *,
    workers: int = 1,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    ray_address: str | None = None,
    progress: bool = True,
    prices: PriceTable | None = None,
    retry_statuses: Iterable[str] = (),
    config: dict[str, Any] | None = None,
) -> tuple[RunSummary, MMARScores]:
    """Run (or resume) MMAR into RUN_DIR, then write predictions.jsonl and scores.json for the selection."""
    rows = load_meta(meta)
    if ids is not None:
        wanted = set(ids)
        rows = [r for r in rows if str(r["id"]) in wanted]
    if limit is not None:
        rows = rows[:limit]
    items = [item_from_row(r, audio_dir) for r in rows]
    run_dir = Path(run_dir)
    cfg = {"benchmark": "mmar", "meta": str(Path(meta).resolve()), "audio_dir": str(Path(audio_dir).resolve()),
           **(config or {})}
    summary = run_batch(items, run_dir, make_agent, workers=workers, ray_address=ray_address, progress=progress,
                        prices=prices, score=mmar_score, retry_statuses=tuple(retry_statuses), config=cfg)
    scores = finalize(rows, run_dir)
    return summary, scores


def finalize(rows: list[dict[str, Any]], run_dir: str | Path) -> MMARScores:
    """predictions.jsonl + scores.json from what results.jsonl holds now (also after an interrupted run)."""
    run_dir = Path(run_dir)
    results = load_results(run_dir)
    path = write_predictions(rows, results, run_dir / PREDICTIONS_FILE)
    scores = score_file(path)
    atomic_write_text(run_dir / SCORES_FILE, scores.model_dump_json(indent=2, by_alias=True) + "\n")
    return scores
