"""Re-decide the answers of finished runs with the current answer code, from their traces: one row per item with
its confidence ledger, for measuring confidence stages and fitting calibration on development runs.

    .venv/bin/python evals/confidence/redecide.py RUNS_DIR --out ROWS.jsonl [--sets a,b] [--as-run]

RUNS_DIR holds one run folder per set (what evals/confidence/dev_runs.sh writes: RUNS_DIR/<set>/results.jsonl
and traces/). Each item's answer is decided again exactly as the final-answer node decides it: the cascade front
end's `answer` on the AnswerRequest built from the trace (the evidence on record and the tool calls behind it),
then the node's ledger and tool-failure stage. Perception is not repeated: the tool outputs are the trace's, so
re-deciding ~1,000 items takes a minute or two where the runs took most of an hour. `--as-run` reads the
printed answers and ledgers from the traces instead (no re-decision).

Each row: set, id, kind, group (`reasoning`/`perception`/the synthetic split), n_choices, correct, confidence,
method (the deciding check, from the rationale's leading '[method]'), and the ledger's steps as
(stage, space, op, input, output, inputs, parameters): enough to re-apply each step with other parameters.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

METHOD = re.compile(r"^\[([^\]]+)\]")


def _norm(s: str) -> str:
    return " ".join((s or "").casefold().split())


def _row(set_name: str, res: dict, text: str, rationale: str, confidence: float | None, steps: list) -> dict:
    m = METHOD.match(rationale or "")
    return {
        "set": set_name, "id": res["id"], "kind": (res.get("metadata") or {}).get("kind", "?"),
        "n_choices": res.get("n_choices"), "answer": res.get("answer"), "prediction": text,
        "correct": bool(text) and _norm(text) == _norm(str(res.get("answer") or "")),
        "confidence": confidence, "method": m.group(1) if m else ("guess" if "guess" in (rationale or "") else "?"),
        "steps": [{"stage": s.stage, "space": s.space, "op": s.op, "input": s.input, "output": s.output,
                   "inputs": s.parameters.inputs,
                   "parameters": s.parameters.model_dump(exclude_none=True, exclude={"inputs"})}
                  for s in steps],
    }


def redecide_set(run: Path, set_name: str, as_run: bool) -> list[dict]:
    from audiomind.backends.base import AnswerRequest
    from audiomind.backends.frontends.cascade import CascadeFrontEnd
    from audiomind.graph.nodes import answer_ledger, evidence_calls, with_tool_failures
    from audiomind.state import FinalAnswer
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry
    from audiomind.trace import load_trace

    fe = None if as_run else CascadeFrontEnd(ToolExecutor(ToolRegistry.load(), Path(tempfile.mkdtemp()), cache=None))
    rows = []
    for line in (run / "results.jsonl").read_text().splitlines():
        res = json.loads(line)
        if res.get("status") != "answered" or not res.get("trace_path"):
            continue
        st = load_trace(run / res["trace_path"])
        res["n_choices"] = len(st.question.choices)
        if fe is None:
            fa = st.final_answer
            if fa is None:
                continue
            rows.append(_row(set_name, res, fa.text, fa.rationale, fa.confidence, fa.confidence_steps))
            continue
        req = AnswerRequest(original=st.original, extra_originals=st.originals[1:], question=st.question.text,
                            choices=st.question.choices, evidence_summary=st.evidence_summary or "",
                            evidence=st.evidence, tool_calls=evidence_calls(st), prompt="(unused by the cascade)",
                            prompt_id="redecide")
        r = fe.answer(req)
        ans = FinalAnswer(text=r.text, rationale=r.rationale, cited_evidence_ids=r.cited_evidence_ids,
                          answered_by="cascade", confidence=r.confidence, confidence_reason=r.confidence_reason,
                          confidence_steps=r.confidence_steps)
        ans = with_tool_failures(ans.model_copy(update={"confidence_steps": answer_ledger(ans).steps}), st)
        rows.append(_row(set_name, res, ans.text, ans.rationale, ans.confidence, ans.confidence_steps))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sets", default="", help="comma-separated set names (default: every folder with results)")
    ap.add_argument("--as-run", action="store_true", help="the printed answers, not re-decided")
    a = ap.parse_args()
    wanted = {s for s in a.sets.split(",") if s}
    rows: list[dict] = []
    for run in sorted(p for p in a.runs.iterdir() if (p / "results.jsonl").is_file()):
        if wanted and run.name not in wanted:
            continue
        got = redecide_set(run, run.name, a.as_run)
        rows += got
        print(f"{run.name}: {len(got)} items, {sum(r['correct'] for r in got)} right", file=sys.stderr)
    a.out.write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
