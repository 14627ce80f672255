"""The synthetic task: read a generated split set, score it, and the evaluation table.

A set is one MMAR-format folder (SET/meta.jsonl + SET/audio/, written by
audiomind.bench.tasks.synthetic_generate); `bench run --task synthetic --source SET` runs it through the
batch runner like any task. Scoring is exact option match (an item that errored counts wrong). Its own
files: predictions.jsonl in MMAR's format (so MMAR's official script and the rubric judge read it
unchanged) and evaluation.json; its breakdown is the evaluation table: accuracy per kind and split, per
group (perception / needs_step), exact vs MMAR string match, selective accuracy, per held-out condition,
and calibration; `tabulate_splits` gives it over the three splits' runs (evals/synthetic/evaluate.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.report import calibration, selective
from audiomind.bench.rows import Row, check_rows, refuse_if_strict
from audiomind.bench.runner import load_results
from audiomind.bench.tasks import mmar
from audiomind.bench.tasks.base import BaseTask, TaskItems, TaskReport
from audiomind.bench.tasks.synthetic_generate import BENCHMARK, KINDS, META_FILE, SPLITS
from audiomind.fsutil import atomic_write_text
from audiomind.paths import MissingPathError, PathPolicyError, clip_text, resolve_under

PREDICTIONS_FILE = mmar.PREDICTIONS_FILE
EVALUATION_FILE = "evaluation.json"


# ---------------------------------------------------------------- reading a set and scoring


def load_rows(path: str | Path) -> list[dict[str, Any]]:
    """meta.jsonl rows as written (pass the file or the set's folder); tabulating only, no checks."""
    p = meta_path(path)
    from audiomind.fsutil import input_lines, loads_json

    return [loads_json(raw) for _n, raw in input_lines(p) if raw is not None and raw.strip()]  # bounded, streamed


def to_item(row: dict[str, Any], root: str | Path) -> BenchItem:
    """A BenchItem for the runner; `root` is the set's folder (the one holding meta.jsonl and audio/)."""
    meta = {k: row.get(k) for k in ("kind", "modality", "category", "sub-category", "language", "source")}
    c = row.get("construction") or {}
    kind = KINDS.get(row.get("kind", ""))
    meta.update(split=row.get("split") or c.get("split") or "dev", condition=c.get("condition", "clean"),
                group=kind.group if kind else None)
    return BenchItem(id=row["id"], benchmark=BENCHMARK, audio_path=str((Path(root) / row["audio_path"]).resolve()),
                     question=row["question"], choices=list(row["choices"]), answer=row["answer"], metadata=meta,
                     raw=row)


def load_items(path: str | Path, kinds: Iterable[str] | None = None, *, strict: bool = False) -> list[BenchItem]:
    """A set's items (pass its folder or its meta.jsonl), optionally only some kinds; see `read_set`."""
    return read_set(path, kinds, strict=strict)[1]


def read_set(path: str | Path, kinds: Iterable[str] | None = None, *, strict: bool = False
             ) -> tuple[list[Row], list[BenchItem]]:
    """The checked rows of a set and their items. Rows are read one by one (audiomind.bench.rows: an MMAR
    row needs id, question, audio_path and choices) and audio paths must stay inside the set's folder
    (audiomind.paths); a bad row or a refused path gives an item carrying its 'FILE:LINE: reason' (committed
    as an error, never asked), `strict` refuses the file instead (RowsError). `kinds` keeps those kinds
    (bad rows of no known kind are kept, so they are reported)."""
    p = meta_path(path)
    root = p.parent
    wanted = set(kinds) if kinds else None
    kept: list[Row] = []
    items: list[BenchItem] = []
    for r in check_rows(p, audio_keys=("audio_path",), require_choices=True):
        row = r.data if isinstance(r.data, dict) else None
        if wanted is not None and row is not None and row.get("kind") in KINDS and row.get("kind") not in wanted:
            continue
        kept.append(r)
        where = f"{p.name}:{r.line}"
        error = r.error
        audio = ""
        if error is None:
            try:
                audio = str(resolve_under(root / row["audio_path"], [root]))
            except MissingPathError:
                audio = str((root / row["audio_path"]).resolve())  # the runner records missing_audio
            except PathPolicyError as exc:
                error = f"{where}: audio_path refused: {exc}"
        if error is None:
            items.append(to_item(row, root).model_copy(update={"id": r.item_id, "audio_path": audio}))
        else:
            q = (row or {}).get("question")
            items.append(BenchItem(id=r.item_id, benchmark=BENCHMARK, audio_path="",
                                   question=clip_text(q, 200) if isinstance(q, str) else "", raw=row or {},
                                   error=error))
    refuse_if_strict(p, [], strict, [it.error for it in items if it.error])
    return kept, items


def meta_path(path: str | Path) -> Path:
    """A set's meta.jsonl, given the set's folder or the file itself."""
    p = Path(path)
    return p / META_FILE if p.is_dir() else p


def is_correct(item: BenchItem, prediction: str | None, choice_index: int | None = None) -> bool:
    """Exact option match (the agent answers with one choice verbatim), or by the chosen index."""
    if choice_index is not None and 0 <= choice_index < len(item.choices):
        return item.choices[choice_index] == item.answer
    return (prediction or "").strip().casefold() == (item.answer or "").strip().casefold()


def synthetic_score(item: BenchItem, result: ItemResult) -> bool | None:
    """The runner's scorer: exact option match; an item that ran into an error counts wrong; None when it
    never ran (missing audio, or its row or audio path was refused)."""
    if result.status == "missing_audio" or result.input_error:
        return None
    if result.status == "error":
        return False
    return is_correct(item, result.prediction, result.choice_index)


def random_baseline(rows: Iterable[dict[str, Any]]) -> float:
    """Expected accuracy of a uniformly random choice: the mean of 1 / number of choices."""
    xs = [1.0 / len(r["choices"]) for r in rows if r.get("choices")]
    return float(np.mean(xs)) if xs else 0.0


# ---------------------------------------------------------------- the evaluation table


def _acc_cell(pairs: list[tuple[bool, float]]) -> dict[str, Any]:
    n, k = len(pairs), sum(1 for c, _ in pairs if c)
    return {"n": n, "correct": k, "accuracy": round(100.0 * k / n, 2) if n else None,
            "random": round(100.0 * sum(b for _, b in pairs) / n, 2) if n else None}


def evaluation(rows_by_split: dict[str, list[dict[str, Any]]],
               results_by_split: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The evaluation's numbers from meta rows and results.jsonl lines, per split:
    accuracy per kind and split, per group (perception / needs_step) and overall; per split exact-match and
    MMAR string-match accuracy, selective accuracy (confident answers: confidence >= CONFIDENT_AT) and the
    random-choice baseline; accuracy per held-out condition family; calibration bins. Percentages. Items
    without a result, or never scored (missing audio), are left out."""
    per_kind: dict[str, dict[str, list[tuple[bool, float]]]] = {}
    per_group: dict[str, dict[str, list[tuple[bool, float]]]] = {}
    conditions: dict[str, list[tuple[bool, float]]] = {}
    splits: dict[str, Any] = {}
    pooled: list[dict[str, Any]] = []
    for split, rows in rows_by_split.items():
        results = results_by_split.get(split) or {}
        exact: list[tuple[bool, float]] = []
        string = 0
        scored_results: list[dict[str, Any]] = []
        for r in rows:
            res = results.get(r["id"])
            if res is None or res.get("correct") is None:
                continue
            ok, base = bool(res["correct"]), 1.0 / len(r["choices"])
            kind = KINDS.get(r["kind"])
            group = kind.group if kind else "other"
            for table, key in ((per_kind, r["kind"]), (per_group, group), (per_group, "overall")):
                table.setdefault(key, {}).setdefault(split, []).append((ok, base))
            if split == "heldout_condition":
                conditions.setdefault((r.get("construction") or {}).get("condition", "clean"), []).append((ok, base))
            exact.append((ok, base))
            string += mmar.string_match(r["answer"], res.get("prediction") or "", list(r["choices"]))
            scored_results.append(res)
        pooled += scored_results
        cell = _acc_cell(exact)
        cell["mmar_accuracy"] = round(100.0 * string / len(exact), 2) if exact else None
        cell["selective"] = selective(scored_results).model_dump()
        splits[split] = cell
    kinds_out = {}
    for kind in [k for k in KINDS if k in per_kind] + sorted(k for k in per_kind if k not in KINDS):
        cells = {s: _acc_cell(v) for s, v in per_kind[kind].items()}
        allp = [p for v in per_kind[kind].values() for p in v]
        kinds_out[kind] = {"group": KINDS[kind].group if kind in KINDS else "other", "splits": cells,
                           "random": _acc_cell(allp)["random"]}
    groups_out = {}
    for g in [x for x in ("perception", "needs_step", "other", "overall") if x in per_group]:
        allp = [p for v in per_group[g].values() for p in v]
        groups_out[g] = {"splits": {s: _acc_cell(v) for s, v in per_group[g].items()}, "random": _acc_cell(allp)["random"]}
    return {"kinds": kinds_out, "groups": groups_out, "splits": splits,
            "conditions": {c: _acc_cell(v) for c, v in sorted(conditions.items())},
            "selective": selective(pooled).model_dump(),
            "calibration": [b.model_dump() for b in calibration(pooled)]}


# ---------------------------------------------------------------- the task


@dataclass
class SyntheticTask(BaseTask):
    """One generated split set through the batch runner. Option `kinds`: comma-separated kinds to run
    (default: all)."""

    name: ClassVar[str] = "synthetic"
    description: ClassVar[str] = ("the verifiable synthetic benchmark (answers true by construction), one split "
                                  "set: accuracy per kind, group, condition; selective accuracy; calibration")
    source_help: ClassVar[str] = "synthetic split set (its folder or its meta.jsonl)"

    kinds: str = ""

    def kind_list(self) -> list[str] | None:
        names = [k.strip() for k in self.kinds.split(",") if k.strip()]
        unknown = [k for k in names if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
        return names or None

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems:
        rows, items = read_set(source, self.kind_list(), strict=strict)
        if limit is not None:
            rows, items = rows[:limit], items[:limit]
        return TaskItems(source=meta_path(source), items=items, rows=rows)

    def score(self, item: BenchItem, result: ItemResult) -> bool | None:
        return synthetic_score(item, result)

    def evaluation(self, run_dir: Path, loaded: TaskItems) -> dict[str, Any]:
        results = load_results(run_dir)
        by_split: dict[str, list[dict[str, Any]]] = {}
        for r in loaded.rows:
            if r.ok:
                by_split.setdefault(r.data.get("split") or "dev", []).append(r.data)
        return evaluation(by_split, dict.fromkeys(by_split, results))

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]:
        run_dir = Path(run_dir)
        mmar.write_predictions([r.data for r in loaded.rows if isinstance(r.data, dict)], load_results(run_dir),
                               run_dir / PREDICTIONS_FILE,
                               ids=[r.item_id for r in loaded.rows if isinstance(r.data, dict)])
        atomic_write_text(run_dir / EVALUATION_FILE, json.dumps(self.evaluation(run_dir, loaded), indent=2) + "\n")
        return {"predictions": run_dir / PREDICTIONS_FILE, "evaluation": run_dir / EVALUATION_FILE}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        from rich.text import Text

        ev = self.evaluation(run_dir, loaded)
        splits = [s for s in SPLITS if s in ev["splits"]]
        return TaskReport(data=ev, table=Text(render(ev, splits)))


def tabulate_splits(root: str | Path, run_root: str | Path, *, splits: Iterable[str] = SPLITS,
                    kinds: Iterable[str] | None = None
                    ) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], dict[str, dict[str, dict[str, Any]]]]:
    """The evaluation over the split sets ROOT/<split>/ from the runs in RUN_ROOT/<split>/ (each one
    `bench run --task synthetic`; a split not run yet has no results). Returns (evaluation, meta rows by
    split, results by split)."""
    wanted = set(kinds or ())
    rows_by: dict[str, list[dict[str, Any]]] = {}
    results_by: dict[str, dict[str, dict[str, Any]]] = {}
    for split in splits:
        set_dir = Path(root) / split
        if not (set_dir / META_FILE).exists():
            raise FileNotFoundError(f"no {set_dir / META_FILE}: generate the split sets first")
        rows_by[split] = [r for r in load_rows(set_dir) if not wanted or r.get("kind") in wanted]
        results_by[split] = load_results(Path(run_root) / split)
    return evaluation(rows_by, results_by), rows_by, results_by


# ---------------------------------------------------------------- the table as text


SPLIT_LABEL = {"dev": "dev", "heldout_phrasing": "held-out phrasing", "heldout_condition": "held-out condition"}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _cell(c: dict[str, Any] | None) -> str:
    if not c or not c.get("n"):
        return "-"
    return f"{c['accuracy']:5.1f} ({c['n']})"


def render(ev: dict[str, Any], splits: list[str]) -> str:
    """The evaluation as plain-text tables."""
    lines: list[str] = []
    head = f"{'kind':22s} {'step':4s} " + " ".join(f"{SPLIT_LABEL[s]:>19s}" for s in splits) + f" {'random':>7s}"
    lines += ["Accuracy % (n) per kind and split", head, "-" * len(head)]

    def row(name: str, step: str, d: dict[str, Any]) -> str:
        return (f"{name:22s} {step:4s} " + " ".join(f"{_cell(d['splits'].get(s)):>19s}" for s in splits)
                + f" {_pct(d.get('random')):>7s}")

    for group in ("perception", "needs_step", "other"):
        kinds = {k: d for k, d in ev["kinds"].items() if d["group"] == group}
        if not kinds:
            continue
        for k, d in kinds.items():
            lines.append(row(k, "yes" if group == "needs_step" else "", d))
        if group in ev["groups"]:
            lines.append(row(f"[{group}]", "", ev["groups"][group]))
        lines.append("")
    if "overall" in ev["groups"]:
        lines.append(row("OVERALL", "", ev["groups"]["overall"]))

    lines += ["", "Per split: exact match vs MMAR string match; selective accuracy (confident answers)",
              (f"{'split':19s} {'n':>5s} {'exact %':>8s} {'MMAR %':>7s} {'random %':>8s} {'conf. acc %':>11s} "
               f"{'coverage %':>10s} {'rest acc %':>10s}")]
    for s in splits:
        c = ev["splits"].get(s)
        if not c or not c["n"]:
            continue
        sel = c["selective"]
        lines.append(f"{SPLIT_LABEL[s]:19s} {c['n']:5d} {_pct(c['accuracy']):>8s} {_pct(c['mmar_accuracy']):>7s} "
                     f"{_pct(c['random']):>8s} {_pct(sel['confident_accuracy']):>11s} {_pct(sel['coverage']):>10s} "
                     f"{_pct(sel['rest_accuracy']):>10s}")
    sel = ev["selective"]
    lines.append(f"{'all splits':19s} {sel['scored']:5d} {'':>8s} {'':>7s} {'':>8s} {_pct(sel['confident_accuracy']):>11s} "
                 f"{_pct(sel['coverage']):>10s} {_pct(sel['rest_accuracy']):>10s}")
    lines.append(f"(confident: confidence >= {sel['threshold']:g}; {sel['with_confidence']} of {sel['scored']} "
                 "scored answers carry a confidence)")

    if ev["conditions"]:
        lines += ["", "Held-out conditions", f"{'condition':12s} {'n':>4s} {'accuracy %':>10s} {'random %':>8s}"]
        for name, c in ev["conditions"].items():
            lines.append(f"{name:12s} {c['n']:4d} {_pct(c['accuracy']):>10s} {_pct(c['random']):>8s}")

    lines += ["", "Calibration (all splits)", f"{'confidence':10s} {'n':>5s} {'accuracy %':>10s} {'mean conf':>9s}"]
    for b in ev["calibration"]:
        mean = "-" if b["mean_confidence"] is None else f"{b['mean_confidence']:.3f}"
        lines.append(f"{b['label']:10s} {b['n']:5d} {_pct(b['accuracy']):>10s} {mean:>9s}")
    return "\n".join(lines)
