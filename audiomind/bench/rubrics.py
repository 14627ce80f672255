"""MMAR-Rubrics: grade the reasoning behind each MMAR answer against the item's `rubric` with an LLM judge.

Each MMAR item carries a rubric: a list of {name, scoring_point, note, choices (the points it may give,
e.g. [0, 1])}. The judge reads the question, the choices, the reference answer and reasoning
(`thinking`), the test-taker's answer and reasoning (`answer_prediction` / `thinking_prediction`), and
awards each rubric point. Protocol:

- an item whose answer is wrong (MMAR's official string match) scores 0 and is not sent to the judge;
- otherwise the judge runs `runs` times independently (5); each run's score is the points awarded over
  the points available (0..1); the item's score is the mean of the middle `keep` runs (3: the lowest and
  the highest run are dropped), which damps a judge's occasional outlier;
- the benchmark score is the mean item score (x100), also by modality, category and sub-category.

Resumable: one JSON line per finished item in the output file (flush + fsync); a re-run skips items
already there, so a crash loses at most the item being judged.

The judge is any LangChain chat model, or a backend spec string (`openai:MODEL@http://HOST:PORT/v1`,
`gemini:MODEL`, ...) built through audiomind.backends.registry (ChatOpenAI for OpenAI-compatible servers).
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.bench.tasks.mmar import string_match
from audiomind.prompts import MAX_CHOICES, choice_letter

PREDICTION_KEY = "answer_prediction"
THINKING_KEY = "thinking_prediction"
GROUPS = ("modality", "category", "sub-category")

SYSTEM_PROMPT = (
    "You are a strict grader of audio-reasoning answers. You cannot hear the audio; judge only whether the "
    "test-taker's written answer and reasoning satisfy each rubric point, using the reference answer and "
    "reference reasoning as the truth. Award a point only when the test-taker's text clearly meets its "
    "scoring point; never for content that merely resembles it. Reply with one JSON object and nothing else."
)

USER_TEMPLATE = """Question: {question}
Choices:
{choices}
Reference answer: {answer}
Reference reasoning: {thinking}

Test-taker's answer: {prediction}
Test-taker's reasoning: {reasoning}

Rubric ({n} points to grade):
{rubric}

Reply with JSON exactly like:
{{"scores": [{{"name": "<rubric point name>", "score": <one of that point's allowed values>, "reason": "<one sentence>"}}, ...]}}
with one entry per rubric point, in the order given."""


class RunScore(BaseModel):
    points: list[float] = Field(description="points awarded per rubric entry, in rubric order")
    score: float = Field(description="awarded / available, 0..1")
    reasons: list[str] = Field(default_factory=list)


class ItemRubricResult(BaseModel):
    """One committed line of the rubric output file."""

    id: str
    correct: bool
    score: float = Field(description="0 when wrong; else the mean of the middle runs (0..1)")
    runs: list[RunScore] = Field(default_factory=list)
    kept: list[float] = Field(default_factory=list, description="the run scores the mean was taken over")
    group: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    judge: str = ""
    wall_time_s: float = 0.0


def middle_mean(values: list[float], keep: int = 3) -> tuple[float, list[float]]:
    """Mean of the middle `keep` values after sorting (5 runs -> drop the lowest and the highest)."""
    if not values:
        raise ValueError("no run scores")
    xs = sorted(values)
    keep = max(1, min(keep, len(xs)))
    lo = (len(xs) - keep) // 2
    mid = xs[lo : lo + keep]
    return sum(mid) / len(mid), mid


def rubric_text(rubric: list[dict[str, Any]]) -> str:
    lines = []
    for i, r in enumerate(rubric, 1):
        allowed = r.get("choices") or [0, 1]
        lines.append(f"{i}. {r.get('name', f'point {i}')} (allowed scores: {allowed})\n"
                     f"   Scoring point: {r.get('scoring_point', '')}\n   Note: {r.get('note', '')}")
    return "\n".join(lines)


def judge_messages(row: dict[str, Any], prediction: str, reasoning: str) -> list[tuple[str, str]]:
    """(role, text) messages for one judge run."""
    choices = "\n".join(f"  {choice_letter(i)}. {c}" for i, c in enumerate((row.get("choices") or [])[:MAX_CHOICES]))
    user = USER_TEMPLATE.format(
        question=row.get("question", ""), choices=choices or "  (free answer)", answer=row.get("answer", ""),
        thinking=row.get("thinking") or "(none given)", prediction=prediction or "(no answer)",
        reasoning=reasoning or "(no reasoning given)", n=len(row.get("rubric") or []),
        rubric=rubric_text(row.get("rubric") or []),
    )
    return [("system", SYSTEM_PROMPT), ("user", user)]


def parse_judgement(text: str, rubric: list[dict[str, Any]]) -> RunScore:
    """The judge's JSON -> points per rubric entry (matched by name, else by position), each checked
    against that entry's allowed values; raises ValueError when the reply cannot be used."""
    from audiomind.backends.jsonparse import extract_object

    obj = extract_object(text)
    entries = obj.get("scores")
    if not isinstance(entries, list):
        raise ValueError("judge reply has no 'scores' list")  # noqa: TRY004 - an unusable reply, retried
    by_name = {str(e.get("name", "")).strip().casefold(): e for e in entries if isinstance(e, dict)}
    points, reasons = [], []
    for i, r in enumerate(rubric):
        e = by_name.get(str(r.get("name", "")).strip().casefold())
        if e is None and i < len(entries) and isinstance(entries[i], dict):
            e = entries[i]
        if e is None:
            raise ValueError(f"judge reply has no score for rubric point {i + 1} ({r.get('name')!r})")
        try:
            v = float(e.get("score"))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"rubric point {i + 1}: score {e.get('score')!r} is not a number") from exc
        allowed = [float(x) for x in (r.get("choices") or [0, 1])]
        if v not in allowed:
            raise ValueError(f"rubric point {i + 1}: score {v:g} not in allowed {allowed}")
        points.append(v)
        reasons.append(str(e.get("reason", ""))[:500])
    available = sum(max(float(x) for x in (r.get("choices") or [0, 1])) for r in rubric)
    return RunScore(points=points, score=(sum(points) / available) if available else 0.0, reasons=reasons)


def make_judge(spec: Any, *, temperature: float = 0.7, timeout_s: float = 120) -> tuple[Any, str]:
    """(LangChain chat model, its name). A spec string is built through audiomind.backends.registry;
    temperature > 0 so the independent runs are independent samples."""
    if not isinstance(spec, str):
        return spec, type(spec).__name__
    from audiomind.backends import registry

    bs = registry.parse_spec(spec)
    model, _facts = registry.make_chat_model(bs, timeout_s=timeout_s, temperature=temperature)
    return model, bs.raw


class RubricJudge:
    """Runs the judge `runs` times per correct item, retrying an unusable reply up to `retries` times."""

    def __init__(self, model: Any, *, runs: int = 5, keep: int = 3, retries: int = 2, name: str = ""):
        if runs < 1 or keep < 1 or keep > runs:
            raise ValueError("need 1 <= keep <= runs")
        self.model, self.runs, self.keep, self.retries = model, runs, keep, retries
        self.name = name or type(model).__name__

    def one_run(self, row: dict[str, Any], prediction: str, reasoning: str) -> RunScore:
        from audiomind.backends.jsonparse import message_text

        msgs = judge_messages(row, prediction, reasoning)
        last: Exception | None = None
        for _ in range(self.retries + 1):
            reply = self.model.invoke(msgs)
            try:
                return parse_judgement(message_text(getattr(reply, "content", reply)), row.get("rubric") or [])
            except ValueError as exc:  # includes JSONExtractError
                last = exc
                msgs = msgs + [("assistant", message_text(getattr(reply, "content", reply))),
                               ("user", f"That reply could not be used: {exc}. Reply again with only the JSON object.")]
        raise ValueError(f"judge reply unusable after {self.retries + 1} tries: {last}")

    def grade(self, row: dict[str, Any], prediction: str, reasoning: str) -> ItemRubricResult:
        t0 = time.monotonic()
        group = {k: row.get(k) for k in GROUPS}
        correct = bool(prediction) and string_match(str(row.get("answer", "")), prediction, list(row.get("choices") or []))
        if not correct:
            return ItemRubricResult(id=str(row["id"]), correct=False, score=0.0, group=group, judge=self.name,
                                    wall_time_s=round(time.monotonic() - t0, 3))
        if not row.get("rubric"):
            return ItemRubricResult(id=str(row["id"]), correct=True, score=0.0, group=group, judge=self.name,
                                    error="item has no rubric", wall_time_s=round(time.monotonic() - t0, 3))
        runs = [self.one_run(row, prediction, reasoning) for _ in range(self.runs)]
        score, kept = middle_mean([r.score for r in runs], self.keep)
        return ItemRubricResult(id=str(row["id"]), correct=True, score=round(score, 6), runs=runs,
                                kept=[round(k, 6) for k in kept], group=group, judge=self.name,
                                wall_time_s=round(time.monotonic() - t0, 3))


def load_done(path: str | Path) -> dict[str, dict[str, Any]]:
    """Committed lines of a rubric output file (last line per id wins; a torn last line is ignored)."""
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    if not p.exists():
        return out
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "id" in row and row.get("error") is None:
            out[str(row["id"])] = row
    return out


def _repair(path: Path) -> None:
    """Cut a torn last line so the next append starts on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def run_rubrics(
    rows: Iterable[dict[str, Any]],
    out_path: str | Path,
    judge: RubricJudge,
    *,
    workers: int = 1,
    on_result: Callable[[ItemRubricResult], None] | None = None,
) -> dict[str, Any]:
    """Grade prediction rows (MMAR meta rows with `answer_prediction` and, optionally,
    `thinking_prediction`), appending one line per item to out_path; items already there are skipped.
    A judge failure is committed with its error (and retried on the next run). Returns `summarize`."""
    rows = list(rows)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    _repair(out)
    done = load_done(out)
    todo = [r for r in rows if str(r["id"]) not in done]
    lock = threading.Lock()

    def commit(res: ItemRubricResult) -> None:
        with lock, open(out, "a", encoding="utf-8") as f:
            f.write(res.model_dump_json() + "\n")
            f.flush()
            os.fsync(f.fileno())
        if on_result:
            on_result(res)

    def task(row: dict[str, Any]) -> None:
        t0 = time.monotonic()
        try:
            res = judge.grade(row, str(row.get(PREDICTION_KEY) or ""), str(row.get(THINKING_KEY) or ""))
        except Exception as exc:  # noqa: BLE001 - one item's judge failure must not stop the rest
            res = ItemRubricResult(id=str(row["id"]), correct=True, score=0.0, judge=judge.name,
                                   group={k: row.get(k) for k in GROUPS}, error=f"{type(exc).__name__}: {exc}"[:1000],
                                   wall_time_s=round(time.monotonic() - t0, 3))
        commit(res)

    if workers <= 1:
        for row in todo:
            task(row)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(task, todo))
    return summarize(out, rows)


def summarize(out_path: str | Path, rows: Iterable[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Mean item score x100 overall and by modality / category / sub-category, over the graded items
    (restricted to `rows` when given); accuracy alongside; judge failures counted separately."""
    p = Path(out_path)
    lines = {}
    if p.exists():
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                d = json.loads(line)
            except json.JSONDecodeError:
                continue
            lines[str(d.get("id"))] = d
    wanted = {str(r["id"]) for r in rows} if rows is not None else None
    graded = [d for i, d in lines.items() if (wanted is None or i in wanted) and d.get("error") is None]
    failed = [i for i, d in lines.items() if (wanted is None or i in wanted) and d.get("error") is not None]

    def agg(ds: list[dict[str, Any]]) -> dict[str, Any]:
        return {"n": len(ds), "score": round(100 * statistics.fmean(d["score"] for d in ds), 2) if ds else None,
                "accuracy": round(statistics.fmean(1.0 if d["correct"] else 0.0 for d in ds), 4) if ds else None}

    groups: dict[str, dict[str, list[dict[str, Any]]]] = {g: defaultdict(list) for g in GROUPS}
    for d in graded:
        for g in GROUPS:
            groups[g][str((d.get("group") or {}).get(g))].append(d)
    return {"overall": agg(graded), "judge_failures": len(failed), "missing": (len(wanted) - len(graded) - len(failed))
            if wanted is not None else None,
            **{g: {k: agg(v) for k, v in sorted(groups[g].items())} for g in GROUPS}}


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """predictions.jsonl (MMAR meta rows + answer_prediction / thinking_prediction)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
