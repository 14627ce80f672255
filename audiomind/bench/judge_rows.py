"""A judge task's committed items read back as typed rows: verdict, label and the judge's figures (from each
item's trace). Read by the judge tasks (audiomind.bench.tasks.judging) and by `bench report`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.bench.runner import load_results
from audiomind.fsutil import load_json_file
from audiomind.paths import resolve_under

OPERATIONS = ("add", "delete", "replace")


def label_value(answer: str | None) -> float | None:
    """An item's label as stored in `ItemResult.answer` ("true" / "false" / a number) -> 1.0 / 0.0 / the number."""
    if answer is None:
        return None
    a = str(answer).strip().lower()
    if a in ("true", "false"):
        return 1.0 if a == "true" else 0.0
    try:
        return float(a)
    except ValueError:
        return None


class JudgeRow(BaseModel):
    """One judged item: its verdict, label and the judge's figures (from the item's trace)."""

    id: str
    kind: str
    status: str
    label: float | None = None
    prediction: str | None = None
    p: float | None = Field(default=None, description="the verdict's probability of the positive side")
    correct: bool | None = None
    operation: str | None = Field(default=None, description="edit-eval: the row's operation, else the judge's reading")
    operation_from: str | None = None
    figures: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    trace_path: str | None = None


def _figures(kind: str, out: dict[str, Any]) -> dict[str, Any]:
    if kind == "edit":
        exp = out.get("expectation") or {}
        return {"edit_score": out.get("edit_score"), "faith_score": out.get("faith_score"),
                "faith_agreement": out.get("faith_agreement"),
                "effectiveness": (out.get("effectiveness") or {}).get("score"),
                "effectiveness_label": (out.get("effectiveness") or {}).get("label"),
                "preservation": (out.get("preservation") or {}).get("score"),
                "quality": (out.get("quality") or {}).get("score"), "operation_read": exp.get("operation"),
                "predicted_difference": out.get("predicted_difference"),
                "predicted_commonality": out.get("predicted_commonality"),
                "expected_difference": exp.get("expected_difference"), "unverifiable": out.get("unverifiable") or []}
    if kind == "rubric":
        hol = out.get("holistic") or {}
        return {"rubric_score": out.get("score"), "mean_p": out.get("mean_p"), "aligned": out.get("aligned"),
                "threshold": out.get("threshold"), "holistic_p_yes": hol.get("p_yes") if hol else None,
                "items": [{"q": v.get("question"), "p": v.get("p_yes")} for v in out.get("verdicts") or []],
                "unverifiable": out.get("unverifiable") or []}
    ent = out.get("entailment") or {}
    return {"aura": out.get("score"), "category": out.get("llm_category"), "s_llm": out.get("s_llm"),
            "llm_source": out.get("llm_source"), "entailment": ent.get("status"), "cosine": ent.get("cosine")}


def judge_output(trace: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The judge's typed result recorded in a trace (its `judge_<kind>` call's output), or None."""
    for call in reversed(trace.get("tool_calls") or []):
        if call.get("tool") == f"judge_{kind}" and isinstance(call.get("output"), dict):
            return call["output"]
    return None


def judge_rows(run_dir: str | Path, kind: str) -> list[JudgeRow]:
    """Every committed item of a judge run, in commit order, with the judge's figures read from its trace."""
    run_dir = Path(run_dir)
    rows: list[JudgeRow] = []
    for r in load_results(run_dir).values():
        meta = dict(r.get("metadata") or {})
        meta.pop("judge_inputs", None)
        row = JudgeRow(id=r["id"], kind=kind, status=r.get("status", "?"), label=label_value(r.get("answer")),
                       prediction=r.get("prediction"), p=r.get("confidence"), correct=r.get("correct"),
                       metadata=meta, trace_path=r.get("trace_path"))
        if r.get("trace_path") and isinstance(r["trace_path"], str):
            try:  # a row names its trace: read only inside the run folder, by the bounded reader (fsutil)
                out = judge_output(load_json_file(resolve_under(r["trace_path"], [run_dir], base=run_dir)), kind)
                row.figures = _figures(kind, out) if out is not None else {}
            except (OSError, ValueError, TypeError, AttributeError):  # refused, unreadable or not a judge's trace
                row.figures = {}
        if kind == "edit":
            given = meta.get("operation") or (meta.get("kind") if meta.get("kind") in OPERATIONS else None)
            if given:
                row.operation, row.operation_from = str(given), "row"
            elif row.figures.get("operation_read"):
                row.operation, row.operation_from = str(row.figures["operation_read"]), "judge"
        rows.append(row)
    return rows
