"""The rules planner's doubt step costs time only when a second reading could change the answer: the answer is
decided again with each outcome of the reading (a choice's words heard, the same words heard again) before Whisper
base is asked to read the speech again. (That a reading that could matter is still asked for: the 20-minute vault
recording in tests/reasoning/test_understanding.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from audiomind import AudioMind
from audiomind.backends.planners import rules
from audiomind.backends.planners.rules import DOUBT_BELOW, RulesPlanner, confidence_band
from audiomind.state import CONFIDENT_AT

pytestmark = pytest.mark.slow  # real Whisper, VAD and MiniLM
WEATHER = Path(__file__).resolve().parents[2] / "examples" / "weather.wav"
QUESTION = ("What does the first speaker talk about?", ["The weather", "A meeting", "A train", "Traffic"])


def test_confidence_bands():
    assert confidence_band(0.0) == confidence_band(DOUBT_BELOW - 0.01) == 0
    assert confidence_band(DOUBT_BELOW) == confidence_band(CONFIDENT_AT - 0.01) == 1
    assert confidence_band(CONFIDENT_AT) == confidence_band(1.0) == 2


def _second_readings(r) -> list:
    return [c for c in r.state.tool_calls if c.tool == "asr" and (c.arguments or {}).get("model") == "base"]


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    d = tmp_path_factory.mktemp("doubt")
    return AudioMind(trace_dir=str(d / "traces"), cache_dir=str(d / "tools"))


def test_no_second_reading_when_none_could_change_the_answer(agent, monkeypatch):
    """examples/weather.wav: tiny.en's transcript leaves the answer below DOUBT_BELOW, but no reading moves it;
    asking for the reading anyway (the old behaviour) gives the same choice in the same confidence band."""
    tried: list[bool] = []
    could = RulesPlanner.__dict__["_reading_could_matter"].__func__

    def spy(*args):
        tried.append(could(*args))
        return tried[-1]

    monkeypatch.setattr(rules.RulesPlanner, "_reading_could_matter", staticmethod(spy))
    skipped = agent.ask(str(WEATHER), *QUESTION)
    if not tried:
        pytest.skip(f"no doubt on this transcript (confidence {skipped.confidence}): nothing to decide")
    assert tried == [False] and not _second_readings(skipped)
    monkeypatch.setattr(rules.RulesPlanner, "_reading_could_matter", staticmethod(lambda *args: True))
    read = agent.ask(str(WEATHER), *QUESTION)
    assert len(_second_readings(read)) == 1  # what the doubt step used to ask for
    assert read.choice == skipped.choice
    assert confidence_band(read.confidence) == confidence_band(skipped.confidence)
