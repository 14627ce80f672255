"""AQEval-style runner: AURA (and BLEU-4 / METEOR / ROUGE-L / FENSE as baselines) against human scores.

    .venv/bin/python evals/judges/run_aqeval.py --rows rows.jsonl [--llm openai:MODEL@URL]
        [--mode two_threshold]
rows.jsonl: {"question", "reference", "response", "audio" (optional), "human"} per line.
Without --rows, a small constructed set is scored: questions about clips that evals/judges/generate.py made,
each with a correct paraphrase (1.0), a vague or partial answer (0.5) and a wrong answer (0.0) - scores true
by construction, standing in for human ratings. Prints Pearson and Spearman per scorer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CONSTRUCTED = [
    ("How many beeps are there?", "Three beeps.",
     [("There are three beeps.", 1.0), ("Several beeps.", 0.5), ("There are five beeps.", 0.0)]),
    ("What sound can be heard?", "A telephone ringing.",
     [("A phone is ringing.", 1.0), ("Some electronic sound.", 0.5), ("A dog barking.", 0.0)]),
    ("Is the speaker male or female?", "Female.",
     [("The speaker is a woman.", 1.0), ("It is hard to tell.", 0.5), ("The speaker is a man.", 0.0)]),
    ("What does the speaker say?", "Good morning everyone.",
     [("She says good morning everyone.", 1.0), ("She greets people.", 0.5), ("She says goodbye.", 0.0)]),
    ("Which instrument plays the melody?", "A trumpet.",
     [("A trumpet plays it.", 1.0), ("A brass instrument.", 0.5), ("A violin.", 0.0)]),
    ("Is the music fast or slow?", "Fast.",
     [("The tempo is fast.", 1.0), ("Moderate.", 0.5), ("It is slow.", 0.0)]),
]


def constructed_rows():
    from audiomind.judges.aura import AQRow

    return [AQRow(question=q, reference=ref, response=resp, human=h) for q, ref, answers in CONSTRUCTED
            for resp, h in answers]


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    rows: Path | None = typer.Option(None, "--rows", help="rows.jsonl (default: the small constructed set)"),
    llm: str = typer.Option("rules", help="judge model spec (rules, openai:MODEL@URL, ...)"),
    mode: str = typer.Option("paper", help="AURA scoring mode: paper | two_threshold"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results" / "aqeval.json", "--out",
                             help="where the scores go (JSON)"),
) -> None:
    """AURA vs human scores (Pearson / Spearman), with BLEU-4 / METEOR / ROUGE-L / FENSE as baselines."""
    from audiomind.judges.aura import aqeval, load_rows

    if mode not in ("paper", "two_threshold"):
        raise typer.BadParameter("expected paper or two_threshold", param_hint="--mode")
    data = load_rows(rows) if rows else constructed_rows()
    res = aqeval(data, llm=llm, mode=mode, trace_dir=out.parent / "aqeval_traces")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))

if __name__ == "__main__":
    app()
