"""AQEval-style runner: AURA (and BLEU-4 / METEOR / ROUGE-L / FENSE as baselines) against human scores.

    .venv/bin/python evals/judges/run_aqeval.py --rows rows.jsonl [--llm openai:MODEL@URL]
        [--mode two_threshold]
rows.jsonl: {"question", "reference", "response", "audio", "human"} per line (audio relative to the rows file).
Without --rows, a small constructed set is scored: questions about clips made here with audiomind.synth and
generate.py's melody (three beeps, a telephone, a woman saying "good morning everyone", a fast trumpet melody),
each with a correct paraphrase (1.0), a vague or partial answer (0.5) and a wrong answer (0.0) - scores true
by construction, standing in for human ratings. Prints Pearson and Spearman per scorer.

The rows run as the runner's `aura` task (`audiomind bench run --task aura`: resumable, one AURA trace per
row, results.jsonl, judgments.jsonl) in the folder `--run-dir` (default: beside --out); the human score is
the row's label when it lies in [0, 1]. A row without audio is refused by the task (AURA's audio entailment
needs the clip), where the earlier in-process loop scored it without.
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


CLIPS = {  # question -> how its clip is made (true by construction)
    "How many beeps are there?": "beeps3",
    "What sound can be heard?": "phone",
    "Is the speaker male or female?": "morning",
    "What does the speaker say?": "morning",
    "Which instrument plays the melody?": "trumpet_fast",
    "Is the music fast or slow?": "trumpet_fast",
}


def make_clips(folder: Path) -> dict[str, Path]:
    import importlib.util

    from audiomind import synth

    spec = importlib.util.spec_from_file_location("judges_generate", Path(__file__).resolve().parent / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    return {"beeps3": synth.beeps(3, folder / "beeps3.wav"),
            "phone": synth.sound_file("phone-incoming-call", folder / "phone.wav", repeat=2),
            "morning": synth.speech("good morning everyone", folder / "morning.wav", voice="slt"),
            "trumpet_fast": gen.melody("trumpet", 160, folder / "trumpet_fast.wav")}


def constructed_source(path: Path) -> Path:
    """The constructed set as aura rows, its clips beside the rows file."""
    clips = make_clips(path.parent / "clips")
    rows = [{"id": f"c{i}", "audio": str(Path("clips") / clips[CLIPS[q]].name), "question": q, "reference": ref,
             "response": resp, "label": h, "human": h}
            for i, (q, ref, resp, h) in enumerate((q, ref, resp, h) for q, ref, answers in CONSTRUCTED
                                                  for resp, h in answers)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows_source(rows: Path, path: Path) -> Path:
    """A --rows file as aura rows: ids by line, audio relative to the rows file, label = human when in [0, 1]."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for i, line in enumerate(x for x in rows.read_text().splitlines() if x.strip()):
        r = json.loads(line)
        audio = r.get("audio")
        if audio and not Path(audio).is_absolute():
            audio = str((rows.parent / audio).resolve())
        h = r.get("human")
        out.append({**r, "id": r.get("id", f"r{i}"), "audio": audio,
                    **({"label": h} if isinstance(h, (int, float)) and 0 <= h <= 1 else {})})
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    rows: Path | None = typer.Option(None, "--rows", help="rows.jsonl (default: the small constructed set)"),
    llm: str = typer.Option("rules", help="judge model spec (rules, openai:MODEL@URL, ...)"),
    mode: str = typer.Option("paper", help="AURA scoring mode: paper | two_threshold"),
    out: Path = typer.Option(Path(__file__).resolve().parent / "results" / "aqeval.json", "--out",
                             help="where the scores go (JSON)"),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="the aura task's run folder (default: "
                                        "OUT's folder/aqeval_run); rerun to resume"),
) -> None:
    """AURA vs human scores (Pearson / Spearman), with BLEU-4 / METEOR / ROUGE-L / FENSE as baselines."""
    from audiomind.bench.runner import load_results
    from audiomind.bench.tasks.judging import run_judge_set
    from audiomind.judges.aura import correlations
    from audiomind.judges.caption_metrics import score_captions

    if mode not in ("paper", "two_threshold"):
        raise typer.BadParameter("expected paper or two_threshold", param_hint="--mode")
    run_dir = run_dir or out.parent / "aqeval_run"
    run_dir.mkdir(parents=True, exist_ok=True)
    source = (rows_source(rows, run_dir / "aura_source.jsonl") if rows
              else constructed_source(run_dir / "aura_source.jsonl"))
    _, judged = run_judge_set("aura", source, run_dir, options={"llm": llm, "mode": mode})
    src = {str(r["id"]): r for r in (json.loads(x) for x in source.read_text().splitlines() if x.strip())}
    results = load_results(run_dir)
    per = []
    for j in judged:
        if j.status != "answered" or not j.figures:
            print(f"{j.id}: not scored ({j.status}: {results.get(j.id, {}).get('error')})", file=sys.stderr)
            continue
        r = src[j.id]
        per.append({"question": r["question"], "response": r["response"], "reference": r["reference"],
                    "human": float(r["human"]), "aura": j.figures["aura"], "category": j.figures["category"],
                    "trace": str(run_dir / j.trace_path) if j.trace_path else None})
    human = [p["human"] for p in per]
    res: dict = {"n": len(per), "aura": correlations([p["aura"] for p in per], human), "rows": per}
    if per:
        rep = score_captions([p["response"] for p in per], [[p["reference"]] for p in per])
        for m in ("bleu_4", "meteor", "rouge_l", "fense"):
            res[m] = correlations([getattr(s, m) for s in rep.scores], human)
        res["metric_substitutes"] = rep.substitutes
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=2))


if __name__ == "__main__":
    app()
