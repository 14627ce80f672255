"""The generic task: any list of items, one JSON line each, scored by exact option match.

Rows are BenchItem fields, or simple rows {id, question, choices, answer, audio|audio_path, <metadata>...}
(scalar extra fields become metadata). Relative audio paths are taken from the audio folder (default: the
items file's folder) and every audio path must stay inside it (audiomind.paths). A bad row (malformed
JSON, a missing or mistyped field, a repeated id) or a refused audio path gives an item carrying its
'FILE:LINE: reason', committed as an error without running; `strict` refuses the file instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from audiomind.bench.items import BenchItem
from audiomind.bench.rows import check_rows, refuse_if_strict
from audiomind.bench.tasks.base import BaseTask, TaskItems
from audiomind.paths import MissingPathError, PathPolicyError, clip_text, resolve_under


def _extra_audio_problem(row: dict[str, Any]) -> str | None:
    extra = row.get("extra_audio")
    if extra is not None and not (isinstance(extra, list) and all(isinstance(a, str) and a.strip() for a in extra)):
        return '"extra_audio" must be a list of non-empty strings'
    if row.get("metadata") is not None and not isinstance(row["metadata"], dict):
        return '"metadata" must be an object'
    return None


def _item_audio(audio: str, root: Path) -> str:
    """An item's audio path under the policy: inside `root` (symlinks resolved), a regular file; a missing
    file is kept as its path (the runner records missing_audio); anything else raises PathPolicyError."""
    try:
        return str(resolve_under(audio, [root], base=root))
    except MissingPathError:
        return str(Path(audio) if Path(audio).is_absolute() else (root / audio).resolve())


def load_items(path: Path, audio_dir: Path | None, benchmark: str, strict: bool = False) -> list[BenchItem]:
    """Every row of the items file as a BenchItem (see the module doc); `strict` raises RowsError (a
    ValueError) listing the bad rows instead."""
    path = Path(path)
    root = Path(audio_dir) if audio_dir is not None else path.parent
    fields = set(BenchItem.model_fields) - {"error"}
    items = []
    for r in check_rows(path, audio_keys=("audio_path", "audio"), extra_checks=[_extra_audio_problem]):
        row = r.data or {}
        where = f"{path.name}:{r.line}"
        error = r.error
        data: dict[str, Any] = {}
        if error is None:
            audio = row.get("audio_path") or row.get("audio")
            data = {k: v for k, v in row.items() if k in fields}
            data.setdefault("benchmark", benchmark)
            data["id"] = r.item_id
            try:
                data["audio_path"] = _item_audio(audio, root)
                data["extra_audio"] = [_item_audio(a, root) for a in row.get("extra_audio") or []]
            except PathPolicyError as exc:
                error = f"{where}: audio path refused: {exc}"
            meta = dict(row.get("metadata") or {})
            meta.update({k: v for k, v in row.items() if k not in fields and k != "audio"
                         and isinstance(v, (str, int, float, bool))})
            data["metadata"] = meta
            data.setdefault("raw", row)
        if error is None:
            try:
                items.append(BenchItem.model_validate(data))
                continue
            except ValidationError as exc:
                e = exc.errors()[0]
                loc = ".".join(str(x) for x in e.get("loc", ())) or "row"
                error = f"{where}: {loc}: {e.get('msg', 'invalid')} ({len(exc.errors())} problem(s))"
        items.append(BenchItem(id=r.item_id, benchmark=benchmark, audio_path="",
                               question=clip_text(row.get("question") or "", 200) if isinstance(row.get("question"), str) else "",
                               raw=row if isinstance(row, dict) else {}, error=error))
    refuse_if_strict(path, [], strict, [it.error for it in items if it.error])
    return items


@dataclass
class ItemListTask(BaseTask):
    """Any item list (JSON lines): results.jsonl scored by exact option match (`default_score`).
    Option `benchmark`: the name recorded with each result (default "custom")."""

    name: ClassVar[str] = "items"
    description: ClassVar[str] = "any item list (BenchItem JSON lines, or id/question/choices/answer/audio rows)"
    source_help: ClassVar[str] = "items file (JSON lines)"

    benchmark: str = "custom"

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems:
        items = load_items(Path(source), audio_dir, self.benchmark, strict=strict)  # strict: the whole file
        if limit:
            items = items[:limit]
        return TaskItems(source=Path(source), items=items, audio_dir=audio_dir)

    def run_config(self, loaded: TaskItems) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "items": str(loaded.source.resolve())}
