"""notes: basic-pitch on a FluidR3 piano melody with known notes and onsets, and noise."""

from __future__ import annotations

import importlib.util

import pytest

from audiomind.tools.music.notes import notes

needs_basic_pitch = pytest.mark.skipif(
    importlib.util.find_spec("basic_pitch") is None,
    reason="basic-pitch (the notes model carrier) is not installed",
)


@needs_basic_pitch
def test_notes_exact_on_c4_e4_g4_c5(melody, tool_runner):
    res = tool_runner(notes, {}, melody)
    out = res.output
    assert out["sequence"] == ["C4", "E4", "G4", "C5"]  # exact: no missed, extra or wrong notes
    for n, start in zip(out["notes"], (0.5, 1.0, 1.5, 2.0)):
        assert abs(n["start_s"] - start) <= 0.05  # onsets within 50 ms
        assert n["end_s"] - n["start_s"] >= 0.3
    assert [n["pitch_midi"] for n in out["notes"]] == [60, 64, 67, 72]
    assert out["lowest"] == "C4" and out["highest"] == "C5"
    assert "C4 0.49" in res.claims[0].text or "C4 0.5" in res.claims[0].text


@needs_basic_pitch
def test_notes_window_and_range_filter(melody, noise, tool_runner):
    out = tool_runner(notes, {"start_s": 0.9, "end_s": 2.0}, melody).output
    assert {"E4", "G4"} <= set(out["sequence"]) and "C5" not in out["sequence"]  # C4 may still ring at 0.9 s
    assert all(n["start_s"] >= 0.9 for n in out["notes"])
    out = tool_runner(notes, {"max_note": "F4"}, melody).output
    assert out["sequence"] == ["C4", "E4"]
    assert tool_runner(notes, {}, noise).output["count"] == 0
