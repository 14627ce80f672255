"""`audiomind judge edit|rubric|aura`: each judge alone from the shell. `--json` prints the whole typed
result; otherwise a short verdict. Every run writes a trace (path printed)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

judge_app = typer.Typer(help="Judges: audio-edit evaluation, dynamic rubric, AURA.", no_args_is_help=True)
from audiomind.cli_common import FRONTEND_HELP as FE_HELP  # noqa: E402
from audiomind.cli_common import PLANNER_HELP as LLM_HELP  # noqa: E402
from audiomind.cli_common import console  # noqa: E402
from audiomind.cli_common import fail as _fail  # noqa: E402
from audiomind.cli_common import quiet_libraries as _quiet  # noqa: E402


def _run(fn, *a, **k):
    from audiomind.audio import AudioError
    from audiomind.backends.base import BackendError

    try:
        return fn(*a, **k)
    except AudioError as exc:
        _fail(str(exc))
    except BackendError as exc:
        _fail(f"model backend failed: {exc}", code=3)
    except ValueError as exc:
        _fail(str(exc))
    except OSError as exc:  # --trace-dir full, read-only, unwritable, a name too long: one line, exit 4
        from audiomind.cli_report import EXIT_STORAGE, storage_line

        _fail(f"the judge's trace could not be written: {storage_line(exc)}", code=EXIT_STORAGE)


@judge_app.command("edit")
def edit_cmd(
    original: Path = typer.Argument(..., help="the original audio"),
    edited: Path = typer.Argument(..., help="the edited audio"),
    instruction: str | None = typer.Option(None, "--instruction", "-i", help="the edit instruction"),
    original_description: str | None = typer.Option(None, "--original-description", "-d",
                                                        help="caption of the original audio"),
    target_description: str | None = typer.Option(None, "--target-description", "-t",
                                                      help="caption the edited audio should fit"),
    llm: str = typer.Option("rules", help=LLM_HELP),
    frontend: str = typer.Option("cascade", help=FE_HELP),
    trace_dir: Path = typer.Option(Path("traces"), help="where the judge trace is written"),
    as_json: bool = typer.Option(False, "--json", help="print the whole result as JSON"),
) -> None:
    """Evaluate an audio edit: overall quality, editing effectiveness, preservation (seven steps)."""
    from audiomind.judges.edit import judge_edit

    _quiet()
    if not (instruction or target_description):
        _fail("give --instruction or --target-description")
    r = _run(judge_edit, original, edited, instruction=instruction, original_description=original_description,
             target_description=target_description, llm=llm, frontend=frontend, trace_dir=trace_dir)
    if as_json:
        print(json.dumps(r.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]Verdict:[/] {escape(r.verdict)}")
    console.print(f"[bold]Heard:[/] difference: {escape(r.predicted_difference)} | commonality: "
                  f"{escape(r.predicted_commonality)}")
    console.print(f"[bold]Expected:[/] difference: {escape(r.expectation.expected_difference)} | commonality: "
                  f"{escape(r.expectation.expected_commonality)}")
    console.print(f"[bold]Synthesis:[/] {escape(r.synthesis)}")
    console.print("[bold]Suggestions:[/] " + escape(" ".join(r.suggestions)))
    if r.substitutes:
        console.print("[dim]substitute metrics: " + escape("; ".join(f"{k}: {v}" for k, v in r.substitutes.items()))
                      + "[/]")
    console.print(f"[bold]Trace:[/] {r.trace_path}")


@judge_app.command("rubric")
def rubric_cmd(
    audio: Path = typer.Argument(..., help="the audio to judge"),
    instruction: str = typer.Argument(..., help="the instruction the audio should follow"),
    llm: str = typer.Option("rules", help=LLM_HELP),
    frontend: str = typer.Option("cascade", help=FE_HELP),
    threshold: float = typer.Option(0.75, min=0.0, max=1.0, help="aligned when the mean item p(yes) reaches this"),
    no_holistic: bool = typer.Option(False, "--no-holistic", help="skip the holistic baseline"),
    max_items: int = typer.Option(8, min=1, max=20),
    trace_dir: Path = typer.Option(Path("traces"), help="where the judge trace is written"),
    as_json: bool = typer.Option(False, "--json", help="print the whole result as JSON"),
) -> None:
    """Judge instruction following item by item (dynamic rubric), with the holistic baseline."""
    from audiomind.judges.rubric import judge_rubric

    _quiet()
    r = _run(judge_rubric, audio, instruction, llm=llm, frontend=frontend, threshold=threshold,
             holistic=not no_holistic, max_items=max_items, trace_dir=trace_dir)
    if as_json:
        print(json.dumps(r.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]{'Aligned' if r.aligned else 'Misaligned'}[/]: score {r.score:.3f} (threshold {r.threshold})")
    for v in r.verdicts:
        console.print(f"  [{'green' if v.p_yes >= 0.5 else 'red'}]{v.p_yes:.2f}[/] {escape(v.question)} "
                      f"[dim]({v.source}: {escape(v.explanation[:140])})[/]")
    for d in r.dropped:
        console.print(f"  [dim]dropped: {escape(d.question)} ({escape(d.drop_reason or '')})[/]")
    if r.holistic:
        console.print(f"[bold]Holistic baseline:[/] {r.holistic.verdict} (p_yes {r.holistic.p_yes:.3f})")
    console.print(f"[bold]Trace:[/] {r.trace_path}")


@judge_app.command("aura")
def aura_cmd(
    question: str = typer.Option(..., "--question", "-q"),
    reference: str = typer.Option(..., "--reference", "-r"),
    response: str = typer.Option(..., "--response", "-a", help="the answer to score"),
    audio: Path | None = typer.Option(None, "--audio", help="the audio (for CLAP entailment)"),
    llm: str = typer.Option("rules", help=LLM_HELP),
    mode: str = typer.Option("paper", help="paper (one threshold, 0.35) | two_threshold (0.25 / 0.55)"),
    w: float = typer.Option(0.1, min=0.0, max=1.0, help="weight of the entailment term"),
    trace_dir: Path = typer.Option(Path("traces"), help="where the judge trace is written"),
    as_json: bool = typer.Option(False, "--json", help="print the whole result as JSON"),
) -> None:
    """AURA score of a free-form answer against a reference answer."""
    from audiomind.judges.aura import aura_score

    _quiet()
    if mode not in ("paper", "two_threshold"):
        _fail("--mode must be paper or two_threshold")
    r = _run(aura_score, question, reference, response, audio, llm=llm, mode=mode, w=w, trace_dir=trace_dir)
    if as_json:
        print(json.dumps(r.model_dump(mode="json"), indent=2))
        return
    console.print(f"[bold]AURA:[/] {r.score:.3f} (category {r.llm_category}/3 by {escape(r.llm_source)})")
    console.print(f"[bold]Why:[/] {escape(r.llm_reasoning)}")
    console.print(f"[bold]Hypothesis:[/] {escape(r.hypothesis)}; entailment {r.entailment.status}"
                  + (f" ({escape(r.entailment.reason)})" if r.entailment.status == "skipped" else ""))
    console.print(f"[bold]Trace:[/] {r.trace_path}")
