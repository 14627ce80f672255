"""A count of interruptions ('how many times does it cut out?', 'how many brief gaps') is a count of the breaks
between sound events, not of the events: a steady buzz cut twice is three bursts and two cut-outs. Counted on
real count_events output of a real signal with two 0.2 s cuts."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from audiomind.language.analysis import analyse
from audiomind.language.claims import counted_noun
from audiomind.reasoning.facts import EventsFact, Facts, Span
from audiomind.reasoning.verifiers import run_verifiers


@pytest.mark.parametrize("question,what", [
    ("The steady buzz is interrupted by short cut-outs. How many times does it cut out?", "gaps"),
    ("How many brief gaps break up this held chord?", "gaps"),
    ("Count the moments where the sound briefly disappears. How many are there?", "gaps"),
    ("How many times does the bell ring?", "events"),
    ("How many beeps do you hear before the silence?", "events"),
    ('How many times does the word "disappear" occur?', "words"),
])
def test_what_a_count_question_counts(question, what):
    assert counted_noun(question) == what


def _count_supports(facts: Facts, question: str, choices: list[str]) -> tuple[str, list[float]]:
    r = next(r for r in run_verifiers(facts, analyse(question, choices, [])) if r.name.startswith("count_"))
    return r.name, [v.support for v in r.verdicts]


def test_two_cuts_in_three_bursts_are_two_interruptions():
    facts = Facts(duration_s=3.0, events=EventsFact(count=3, events=[
        Span(start_s=0.0, end_s=0.9), Span(start_s=1.1, end_s=1.9), Span(start_s=2.1, end_s=3.0)]))
    name, supports = _count_supports(facts, "How many times does it cut out?", ["once", "twice", "three times"])
    assert name == "count_gaps" and supports == [-0.6, 1.0, -0.6]


def test_on_real_count_events_output(tmp_path):
    from audiomind import artifacts
    from audiomind.tools.base import ToolContext
    from audiomind.tools.events import CountEventsArgs, count_events

    sr = 16000
    t = np.arange(int(3.0 * sr)) / sr
    y = 0.5 * np.sign(np.sin(2 * np.pi * 110 * t))  # a buzz
    for start in (0.9, 1.9):  # two 0.2 s cut-outs
        y[int(start * sr): int((start + 0.2) * sr)] = 0.0
    path = tmp_path / "buzz.wav"
    sf.write(path, y.astype(np.float32), sr)
    ctx = ToolContext({"a0": artifacts.make_artifact("a0", path)}, tmp_path / "derived", {})
    out = count_events(CountEventsArgs(artifact="a0"), ctx).output
    events = [Span(start_s=e["start_s"], end_s=e["end_s"]) for e in out["events"]]
    facts = Facts(duration_s=3.0, events=EventsFact(count=len(events), events=events))
    _, supports = _count_supports(facts, "How many brief gaps break up the buzz?", ["none", "one", "two", "three"])
    assert supports.index(1.0) == 2, (events, supports)
