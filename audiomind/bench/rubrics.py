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

Two protocols (`RubricSettings`):

- "official" (the default of `audiomind bench rubrics`): MMAR's own `code/evaluation_rubrics.py` (ddlBoJack/MMAR,
  commit 3bce090), as it behaves: judge gpt-4o-2024-11-20 at temperature 0 with seed 42; five raters sent the
  same prompt; the lowest and the highest run dropped (the middle three kept); the prompt gives the question,
  the correct answer and the reference reasoning, each rubric criterion's name, scoring rule and score options,
  and the test-taker's reasoning followed by "The answer is X." (neither the options nor the rubric's notes:
  the official prompt shows neither; the wording here is the project's own); the reply is a JSON list with
  one {name, score, justification} per criterion, in rubric order, each score one of that criterion's options
  (a name that differs is accepted, as officially); an unusable reply is asked again, unchanged. A row
  without `answer_prediction` (or any other field the official script requires: id, question, answer,
  thinking, cue, choices, rubric, thinking_prediction, modality, category) is SKIPPED: it is in no total,
  as officially (the official "No prediction count" is the rows read minus the rows judged). Figures are
  (sum / n) * 100 printed to 2 places.
- "project": this module's earlier protocol: its own prompt (options shown, the rubric's notes, a
  {"scores": [...]} object, a reply retried with the reason it was refused), temperature 0.7, and a row
  without a prediction scored 0 and kept. Only by flag (`--protocol project`, or each setting on its own).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
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


OFFICIAL_JUDGE = "openai:gpt-4o-2024-11-20"
OFFICIAL_SEED = 42
OFFICIAL_RAW_TRIES = 20
"""The official scorer asks again up to 20 times in all when a reply cannot be used."""
REQUIRED_FIELDS = ("id", "question", "answer", "thinking", "cue", "choices", "rubric", THINKING_KEY, PREDICTION_KEY,
                   "modality", "category")
"""What the official script requires of a row before it judges it (a row lacking any is skipped)."""


class RubricSettings(BaseModel):
    """How MMAR-Rubrics is run; `official()` is what MMAR's own scorer does, `project()` the earlier protocol."""

    protocol: str = Field(default="official", description="prompt and reply format: official | project")
    judge: str = Field(default=OFFICIAL_JUDGE, description="backend spec of the judge model")
    temperature: float = 0.0
    seed: int | None = Field(default=OFFICIAL_SEED, description="sent with each request (OpenAI-compatible "
                             "judges; None: not sent)")
    runs: int = Field(default=5, ge=1, description="independent raters per correct item")
    keep: int = Field(default=3, ge=1, description="the middle runs averaged (5 runs, keep 3: min and max dropped)")
    missing: str = Field(default="skip", description="rows without a prediction: skip (official: in no total) | "
                         "zero (scored 0 and kept)")
    retries: int = Field(default=OFFICIAL_RAW_TRIES - 1, ge=0, description="asks again after an unusable reply")

    @classmethod
    def official(cls, **overrides: Any) -> RubricSettings:
        return cls(**overrides)

    @classmethod
    def project(cls, **overrides: Any) -> RubricSettings:
        return cls(**{"protocol": "project", "temperature": 0.7, "seed": None, "missing": "zero", "retries": 2,
                      **overrides})

    def check(self) -> RubricSettings:
        if self.protocol not in ("official", "project"):
            raise ValueError(f"protocol must be official or project, not {self.protocol!r}")
        if self.missing not in ("skip", "zero"):
            raise ValueError(f"missing must be skip or zero, not {self.missing!r}")
        if self.keep > self.runs:
            raise ValueError(f"keep ({self.keep}) cannot exceed runs ({self.runs})")
        return self


OFFICIAL_SYSTEM_PROMPT = (
    "You grade another model's answer to a question fairly and carefully, judging both its reasoning and its "
    "final answer. Hold to the ground truth you are given and apply the scoring rubric exactly as written."
)


def official_user_prompt(row: dict[str, Any], prediction: str, reasoning: str) -> str:
    """The official prompt's content in the project's own words: ground truth (question, correct answer,
    reference reasoning), each criterion's name, rule and score options, the reply format (a JSON list, one
    object per criterion), and the submission: the reasoning followed by "The answer is X."."""
    rubric = row.get("rubric") or []
    criteria = "\n".join(
        f"Criterion {i}: {r.get('name', '')}\n  Rule: {r.get('scoring_point', '')}\n  Allowed scores: {r.get('choices')}"
        for i, r in enumerate(rubric, 1))
    shape = ",\n".join(
        f'  {{"name": {json.dumps(str(r.get("name", "")), ensure_ascii=False)}, "score": <one of {r.get("choices")}>, '
        '"justification": "<under 50 words, citing the submission>"}' for r in rubric)
    return (f"GROUND TRUTH\nQuestion: {row.get('question', '')}\nCorrect answer: {row.get('answer', '')}\n"
            f"Reference reasoning: {row.get('thinking', '')}\n\n"
            f"RUBRIC\nScore the submission on every criterion below and justify each score briefly.\n{criteria}\n\n"
            f"REPLY FORMAT\nReply with one valid JSON list and nothing before or after it, one object per "
            f"criterion in the order above:\n[\n{shape}\n]\n\n"
            f"SUBMISSION\nReasoning: {reasoning} The answer is {prediction}.")


def parse_official(text: str, rubric: list[dict[str, Any]]) -> RunScore:
    """A reply to the official prompt -> the run's score, checked as the official scorer checks it: a JSON
    list (the outermost [ {...} ] in the text), one entry per criterion in rubric order, each with a name and a
    numeric score among that criterion's options (a differing name is accepted); score = points / the sum
    of each criterion's highest option (0 when that sum is 0). Raises ValueError when it cannot be used."""
    start = text.find("[")
    while start != -1 and not text[start + 1:].lstrip().startswith("{"):
        start = text.find("[", start + 1)
    end = text.rfind("]")
    body = text[start:end + 1] if start != -1 and end > start and text[:end].rstrip().endswith("}") else text
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg})") from None
    if not isinstance(value, list):
        raise ValueError("the reply must be a JSON list")  # noqa: TRY004 - an unusable reply, asked again
    if len(value) != len(rubric):
        raise ValueError(f"the reply has {len(value)} entries for {len(rubric)} rubric criteria")
    points, reasons, available = [], [], 0.0
    for i, (entry, crit) in enumerate(zip(value, rubric), 1):
        if not isinstance(entry, dict) or "name" not in entry or "score" not in entry:
            raise ValueError(f"entry {i} needs a name and a score")
        score = entry["score"]
        if not isinstance(score, (int, float)):
            raise ValueError(f"entry {i}: score {score!r} is not a number")  # noqa: TRY004 - an unusable reply, asked again
        allowed = list(crit.get("choices") or [])
        if not allowed or score not in allowed:
            raise ValueError(f"entry {i}: score {score!r} is not one of {allowed}")
        points.append(float(score))
        reasons.append(str(entry.get("justification", ""))[:500])
        available += max(allowed)
    return RunScore(points=points, score=(sum(points) / available) if available else 0.0, reasons=reasons)


def official_trim(values: list[float]) -> tuple[float, list[float]]:
    """The official trimming: sorted, the lowest and the highest dropped when there are 3 or more; the mean."""
    xs = sorted(values)
    kept = xs[1:-1] if len(xs) >= 3 else xs
    return sum(kept) / len(kept), kept


def row_problem(row: dict[str, Any], missing: str = "skip") -> str | None:
    """Why a prediction row is not judged (skipped, in no total), or None. With missing="skip" (official) a
    row lacking any field the official script requires is skipped; with "zero" only a row without an id or a
    ground truth is. A prediction that is not a string is never judged."""
    if not isinstance(row, dict) or "id" not in row:
        return "not a row with an id"
    if missing == "skip":
        absent = [k for k in REQUIRED_FIELDS if k not in row]
        if absent:
            return "no " + ", ".join(absent)
    elif not isinstance(row.get("answer"), str):
        return "no answer"
    if PREDICTION_KEY in row and not isinstance(row[PREDICTION_KEY], str):
        return f"{PREDICTION_KEY} is not a string"
    return None


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


def make_settings_judge(settings: RubricSettings, *, timeout_s: float = 120) -> RubricJudge:
    """The RubricJudge `settings` describe: its backend built from the spec at the settings' temperature, with
    the seed bound to every request where the backend takes one (OpenAI-compatible servers)."""
    settings.check()
    model, name = make_judge(settings.judge, temperature=settings.temperature, timeout_s=timeout_s)
    if settings.seed is not None and settings.judge.split(":", 1)[0] == "openai":
        model = model.bind(seed=settings.seed)
    return RubricJudge(model, runs=settings.runs, keep=settings.keep, retries=settings.retries, name=name,
                       protocol=settings.protocol)


class RubricJudge:
    """Runs the judge `runs` times per correct item, retrying an unusable reply up to `retries` times.
    protocol "project" (this class's default): the project's prompt, a refused reply answered with the reason;
    "official": the official prompt's content and reply format, the same prompt sent again, trimming as
    officially (see the module doc)."""

    def __init__(self, model: Any, *, runs: int = 5, keep: int = 3, retries: int = 2, name: str = "",
                 protocol: str = "project"):
        if runs < 1 or keep < 1 or keep > runs:
            raise ValueError("need 1 <= keep <= runs")
        if protocol not in ("official", "project"):
            raise ValueError(f"protocol must be official or project, not {protocol!r}")
        self.model, self.runs, self.keep, self.retries = model, runs, keep, retries
        self.protocol = protocol
        self.name = name or type(model).__name__

    def one_run(self, row: dict[str, Any], prediction: str, reasoning: str) -> RunScore:
        from audiomind.backends.jsonparse import message_text

        rubric = row.get("rubric") or []
        if self.protocol == "official":
            msgs = [("system", OFFICIAL_SYSTEM_PROMPT), ("user", official_user_prompt(row, prediction, reasoning))]
        else:
            msgs = judge_messages(row, prediction, reasoning)
        last: Exception | None = None
        for _ in range(self.retries + 1):
            reply = self.model.invoke(msgs)
            text = message_text(getattr(reply, "content", reply))
            try:
                return parse_official(text, rubric) if self.protocol == "official" else parse_judgement(text, rubric)
            except ValueError as exc:  # includes JSONExtractError
                last = exc
                if self.protocol == "project":
                    retry = f"That reply could not be used: {exc}. Reply again with only the JSON object."
                    msgs = [*msgs, ("assistant", text), ("user", retry)]
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
        if self.protocol == "official" and self.keep == max(1, self.runs - 2):
            score, kept = official_trim([r.score for r in runs])
        else:
            score, kept = middle_mean([r.score for r in runs], self.keep)
        return ItemRubricResult(id=str(row["id"]), correct=True, score=score, runs=runs,
                                kept=kept, group=group, judge=self.name,
                                wall_time_s=round(time.monotonic() - t0, 3))


def _json_lines(path: Path) -> Iterator[Any]:
    """The JSON values of a JSON Lines file this command wrote earlier, read by the bounded reader (a FIFO, a
    device or a file over the input cap refused: InputFileError); a line that does not parse (a torn last
    line, a line over the row cap) is left out."""
    from audiomind.fsutil import input_lines, loads_json

    for _n, raw in input_lines(path):
        if raw is None:
            continue
        try:
            yield loads_json(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue


def load_done(path: str | Path) -> dict[str, dict[str, Any]]:
    """Committed lines of a rubric output file (last line per id wins; a torn last line is ignored)."""
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    if not p.exists():
        return out
    for row in _json_lines(p):
        if isinstance(row, dict) and "id" in row and row.get("error") is None:
            out[str(row["id"])] = row
    return out


def _repair(path: Path) -> None:
    """Cut a torn last line so the next append starts on a fresh line."""
    if not path.exists():
        return
    from audiomind.fsutil import read_input_bytes

    data = read_input_bytes(path)  # a regular file under the input cap (a FIFO or device is refused)
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def run_rubrics(
    rows: Iterable[dict[str, Any]],
    out_path: str | Path,
    judge: RubricJudge,
    *,
    workers: int = 1,
    on_result: Callable[[ItemRubricResult], None] | None = None,
    missing: str = "zero",
) -> dict[str, Any]:
    """Grade prediction rows (MMAR meta rows with `answer_prediction` and, optionally,
    `thinking_prediction`), appending one line per item to out_path; items already there are skipped.
    A judge failure is committed with its error (and retried on the next run). Returns `summarize`.
    `missing`: "skip" (official) leaves out, in every total, a row lacking a field the official script
    requires (a row without a prediction above all); "zero" (this function's earlier default) scores a row
    without a prediction 0 and keeps it."""
    rows, skipped = split_rows(rows, missing)
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
    return summarize(out, rows, skipped=skipped)


def split_rows(rows: Iterable[Any], missing: str = "zero") -> tuple[list[dict[str, Any]], list[str]]:
    """(the rows to judge, 'ID: why' for each row skipped); see `row_problem`."""
    keep, skipped = [], []
    for n, r in enumerate(rows, start=1):
        why = row_problem(r, missing)
        if why is None:
            keep.append(r)
        else:
            skipped.append(f"{r.get('id') if isinstance(r, dict) and 'id' in r else f'row {n}'}: {why}")
    return keep, skipped


def official_figure(total: float, n: int) -> float | None:
    """(total / n) * 100 to 2 places, as the official scorer prints its score and accuracy; None when n is 0."""
    return float(f"{(total / n) * 100:.2f}") if n else None


def summarize(out_path: str | Path, rows: Iterable[dict[str, Any]] | None = None,
              skipped: list[str] | None = None) -> dict[str, Any]:
    """Mean item score x100 overall and by modality / category / sub-category, over the graded items
    (restricted to `rows` when given); accuracy alongside (a fraction; `acc`: percent as the official scorer
    prints it); judge failures counted separately; `skipped`: the rows left out of every total, and
    `no_prediction`: rows given minus rows judged (the official "No prediction count")."""
    p = Path(out_path)
    lines = {}
    if p.exists():
        for d in _json_lines(p):
            if isinstance(d, dict):
                lines[str(d.get("id"))] = d
    wanted = {str(r["id"]) for r in rows} if rows is not None else None
    graded = [d for i, d in lines.items() if (wanted is None or i in wanted) and d.get("error") is None]
    failed = [i for i, d in lines.items() if (wanted is None or i in wanted) and d.get("error") is not None]

    def agg(ds: list[dict[str, Any]]) -> dict[str, Any]:
        n, total, right = len(ds), 0.0, 0
        for d in ds:  # accumulated in file order, as the official scorer accumulates
            total += d["score"]
            right += bool(d["correct"])
        return {"n": n, "score": official_figure(total, n), "acc": official_figure(right, n),
                "correct": right, "accuracy": round(right / n, 4) if n else None}

    groups: dict[str, dict[str, list[dict[str, Any]]]] = {g: defaultdict(list) for g in GROUPS}
    for d in graded:
        for g in GROUPS:
            groups[g][str((d.get("group") or {}).get(g))].append(d)
    skipped = list(skipped or [])
    return {"overall": agg(graded), "judge_failures": len(failed), "missing": (len(wanted) - len(graded) - len(failed))
            if wanted is not None else None, "skipped": len(skipped), "skipped_rows": skipped[:50],
            "no_prediction": (len(wanted) + len(skipped) - len(graded)) if wanted is not None else None,
            **{g: {k: agg(v) for k, v in sorted(groups[g].items())} for g in GROUPS}}


SETTINGS_FILE = "settings.json"
RESULTS_FILE = "evaluated.jsonl"
SUMMARY_FILE = "summary.json"


def settings_clash(out_dir: str | Path, settings: RubricSettings) -> str | None:
    """Why `out_dir` cannot be resumed with `settings` (its lines were judged under other settings), or None;
    the settings are recorded there the first time."""
    from audiomind.fsutil import atomic_write_text

    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / SETTINGS_FILE
    mine = settings.model_dump()
    if path.exists():
        try:
            from audiomind.fsutil import load_json_file

            theirs = load_json_file(path)
        except ValueError:  # not JSON, or refused by the bounded reader (InputFileError is a ValueError)
            theirs = None
        if theirs != mine:
            diff = sorted(k for k in mine if not isinstance(theirs, dict) or theirs.get(k) != mine[k])
            return (f"{d.name} holds rows judged with other settings ({', '.join(diff)} differ); use another "
                    "--out folder, or the same settings to resume")
        return None
    atomic_write_text(path, json.dumps(mine, indent=2) + "\n")
    return None


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """predictions.jsonl (MMAR meta rows + answer_prediction / thinking_prediction)."""
    from audiomind.fsutil import input_lines, loads_json

    return [loads_json(raw) for _n, raw in input_lines(path) if raw is not None and raw.strip()]
