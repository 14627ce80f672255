"""Row-level reading of benchmark input files (MMAR's meta JSONL, `bench run` item lists).

Why: these files are large and written by others; one bad row must not refuse (or silently change) a
whole run. Every row is parsed and checked on its own; a bad one becomes a `Row` with an error message
naming the file and line ('MMAR-meta.jsonl:5: missing "id"'), which the caller records as an errored
item while the good rows run. `strict=True` callers refuse the file instead, with the same messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audiomind.inputs import choices_problem, question_problem
from audiomind.paths import clip_text

MAX_MESSAGES = 20
"""How many row messages a refusal prints before '… N more'."""


class RowsError(ValueError):
    """A file refused as a whole (--strict, or unreadable); `messages` are the per-row problems."""

    def __init__(self, path: str | Path, messages: list[str]):
        self.path = str(path)
        self.messages = list(messages)
        shown = "\n  ".join(self.messages[:MAX_MESSAGES])
        more = f"\n  … {len(self.messages) - MAX_MESSAGES} more" if len(self.messages) > MAX_MESSAGES else ""
        super().__init__(f"{Path(path).name}: {len(self.messages)} bad row(s), file refused:\n  {shown}{more}")


@dataclass
class Row:
    """One input row: its data when it parsed, the id to record it under, and why it is bad (or None)."""

    line: int
    data: dict[str, Any] | None
    item_id: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_lines(path: str | Path) -> list[tuple[int, Any, str | None]]:
    """(line number, parsed value or None, problem or None) for each non-blank line of a JSONL file; a `.json`
    file holding one list gives its elements, numbered from 1 ('item N' in messages).

    The file is read by the bounded reader every command uses (audiomind.fsutil: a regular file, never a FIFO
    or device, under MAX_INPUT_BYTES; JSON of bounded depth and integer size). In a JSONL file each line is
    on its own: a line that is not UTF-8, longer than MAX_ROW_BYTES, not JSON, too deeply nested or holding a
    huge integer is a problem of that row only (the caller names its file and line); the file as a whole is
    refused (RowsError) only when it cannot be read at all."""
    from audiomind.fsutil import MAX_ROW_BYTES, InputFileError, input_lines, load_json_file, loads_json

    p = Path(path)
    if p.suffix == ".json":
        try:
            data = load_json_file(p)
        except InputFileError as exc:
            where = f"{p.name}:{exc.line}" if exc.line else p.name
            raise RowsError(p, [f"{where}: {exc.reason if exc.line else exc}"]) from None
        if not isinstance(data, list):
            raise RowsError(p, [f"{p.name}: a .json meta file must hold one list of rows, not {type(data).__name__}"])
        return [(i, v, None) for i, v in enumerate(data, start=1)]
    out: list[tuple[int, Any, str | None]] = []
    try:
        for n, raw in input_lines(p):
            if raw is None:
                out.append((n, None, f"the row is longer than {MAX_ROW_BYTES:,} bytes (not read)"))
                continue
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append((n, None, f"not UTF-8 text ({exc.reason} at byte {exc.start} of the row)"))
                continue
            try:
                out.append((n, loads_json(line), None))
            except InputFileError as exc:
                why = f"not valid JSON ({exc.reason}, column {exc.column})" if exc.column is not None else str(exc)
                out.append((n, None, f"{why}: {clip_text(line.strip(), 80)}"))
    except InputFileError as exc:
        raise RowsError(p, [str(exc)]) from None
    return out


def _id_problem(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return f'"id" must be a string or an integer, not {type(value).__name__}'
    if isinstance(value, str) and not value.strip():
        return '"id" is empty'
    return None


def _text_problem(row: dict[str, Any], key: str) -> str | None:
    if key not in row or row[key] is None:
        return f'missing "{key}"'
    if not isinstance(row[key], str):
        return f'"{key}" must be a string, not {type(row[key]).__name__}'
    if not row[key].strip():
        return f'"{key}" is empty'
    return None


def _content_problems(data: dict[str, Any], audio_keys: tuple[str, ...], require_choices: bool,
                      empty_choices_ok: bool, extra_checks: Iterable[Any]) -> list[str]:
    """What is wrong with a row's question, audio path, choices and answer, then what `extra_checks` find."""
    problems: list[str] = []
    q_problem = _text_problem(data, "question")
    if q_problem is None:
        q_problem = question_problem(data["question"])
    if q_problem:
        problems.append(q_problem)
    present = [k for k in audio_keys if data.get(k) is not None]
    if not present:
        problems.append("missing " + " or ".join(f'"{k}"' for k in audio_keys))
    elif not isinstance(data[present[0]], str) or not data[present[0]].strip():
        problems.append(f'"{present[0]}" must be a non-empty string')
    if "choices" not in data or data["choices"] is None:
        if require_choices:
            problems.append('missing "choices" (a multiple-choice benchmark; it would silently run as free text)')
    else:
        c_problem = choices_problem([c for c in data["choices"] if not (empty_choices_ok and c == "")]
                                    if empty_choices_ok and isinstance(data["choices"], list) else data["choices"])
        if c_problem is None and require_choices and not data["choices"]:
            c_problem = '"choices" is empty (a multiple-choice benchmark)'
        if c_problem:
            problems.append(c_problem)
    if data.get("answer") is not None and not isinstance(data["answer"], str):
        problems.append(f'"answer" must be a string, not {type(data["answer"]).__name__}')
    for check in extra_checks:
        extra = check(data)
        if extra:
            problems.append(extra)
    return problems


def check_rows(
    path: str | Path,
    *,
    audio_keys: tuple[str, ...] = ("audio_path",),
    require_choices: bool = False,
    extra_checks: Iterable[Any] = (),
    empty_choices_ok: bool = False,
) -> list[Row]:
    """Every row of `path`, checked: JSON object, `id` (string or integer, unique), non-empty `question`,
    an audio path under one of `audio_keys`, `choices` (required when `require_choices`: a list of at
    least 2 one-line strings; with `empty_choices_ok` an option that is exactly "" is allowed and not counted,
    as MMAR publishes four rows with a trailing ""), `answer` a string when given, plus `extra_checks`
    (row -> problem or None).
    Bad rows get an error 'FILE:LINE: problem; problem' and an id of their own ('FILE:LINE' when the row has
    no usable id, 'ID@FILE:LINE' for a repeated id), so they can be recorded without clobbering a good row."""
    p = Path(path)
    name = p.name
    rows: list[Row] = []
    first_line: dict[str, int] = {}
    for n, value, json_problem in parse_lines(p):
        where = f"{name}:{n}"
        problems: list[str] = []
        item_id: str | None = None
        data: dict[str, Any] | None = None
        if json_problem is not None:
            problems.append(json_problem)
        elif not isinstance(value, dict):
            problems.append(f"a row must be a JSON object, not {type(value).__name__} ({clip_text(json.dumps(value), 60)})")
        else:
            data = value
            if "id" not in data or data["id"] is None:
                problems.append('missing "id"')
            else:
                id_problem = _id_problem(data["id"])
                if id_problem:
                    problems.append(id_problem)
                else:
                    item_id = str(data["id"])
                    if item_id in first_line:
                        problems.append(f"duplicate id {clip_text(item_id, 80)!r} (first on line {first_line[item_id]})")
                    else:
                        first_line[item_id] = n
            problems += _content_problems(data, audio_keys, require_choices, empty_choices_ok, extra_checks)
        if not problems:
            rows.append(Row(line=n, data=data, item_id=str(item_id)))
            continue
        if item_id is not None and first_line.get(item_id) == n:
            rid = item_id  # its own, unique id: the error is recorded under it
        elif item_id is not None:
            rid = f"{item_id}@{where}"
        else:
            rid = where
        rows.append(Row(line=n, data=data, item_id=rid, error=f"{where}: " + "; ".join(problems)))
    taken = {r.item_id for r in rows if r.ok}
    for r in rows:  # a made-up id that happens to equal a real one gets a suffix
        if not r.ok and r.item_id in taken and first_line.get(r.item_id) != r.line:
            r.item_id = f"{r.item_id}#bad"
    return rows


def refuse_if_strict(path: str | Path, rows: list[Row], strict: bool, extra: Iterable[str] = ()) -> None:
    """Raise RowsError listing every bad row (and `extra` messages) when `strict` and any exists."""
    messages = [r.error for r in rows if r.error] + list(extra)
    if strict and messages:
        raise RowsError(path, messages)
