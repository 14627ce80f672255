"""count_events / silence_intervals: counts and times of separated sounds placed by construction."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools.events import CountEventsArgs, count_events, silence_intervals

ONSET_TOL_S = 0.03  # event edges are resolved to the 5 ms hop plus half a 20 ms window


@pytest.mark.parametrize("n", range(1, 9))
def test_count_events_counts_1_to_8_beeps_exactly(n, audio_dir, tool_runner):
    path = synth.beeps(n, audio_dir / f"ev_beeps{n}.wav")
    out = tool_runner(count_events, {}, path).output
    assert out["count"] == n
    truth = [0.5 + k * (0.2 + 0.5) for k in range(n)]  # lead 0.5 s, beep 0.2 s, gap 0.5 s
    for ev, t in zip(out["events"], truth):
        assert abs(ev["start_s"] - t) <= ONSET_TOL_S and abs(ev["end_s"] - (t + 0.2)) <= ONSET_TOL_S
    if n > 1:
        assert abs(out["mean_inter_onset_s"] - 0.7) <= ONSET_TOL_S


@pytest.mark.parametrize("gap_s", [0.3, 0.5, 0.75, 1.0])
def test_count_events_exact_for_gaps_0_3_to_1_0_s(gap_s, audio_dir, tool_runner):
    path = synth.beeps(5, audio_dir / f"ev_gap{gap_s}.wav", gap_s=gap_s, freq_hz=600.0, beep_s=0.15)
    out = tool_runner(count_events, {}, path).output
    assert out["count"] == 5
    assert abs(out["mean_inter_onset_s"] - (0.15 + gap_s)) <= ONSET_TOL_S


@pytest.mark.parametrize(
    "name,repeat,gap_s",
    [("bell", 3, 0.5), ("bell", 5, 0.3), ("dialog-warning", 2, 1.0), ("message", 4, 0.3),
     ("complete", 3, 0.6), ("phone-incoming-call", 2, 0.5), ("camera-shutter", 3, 0.4)],
)
def test_count_events_counts_repeated_freedesktop_sounds_exactly(name, repeat, gap_s, audio_dir, helpers,
                                                                   tool_runner):
    y = helpers.freedesktop_sound(name, audio_dir / f"fd_{name}.wav")
    path, onsets = helpers.repeat_with_gaps(y, audio_dir / f"fd_{name}_{repeat}_{gap_s}.wav", repeat, gap_s)
    out = tool_runner(count_events, {}, path).output
    assert out["count"] == repeat
    for ev, t in zip(out["events"], onsets):
        assert abs(ev["start_s"] - t) <= ONSET_TOL_S


def test_count_events_merges_gaps_shorter_than_min_gap(audio_dir, tool_runner):
    """Two beeps 0.05 s apart are one event with the default min_gap_s=0.1 and two with min_gap_s=0.02."""
    path = synth.beeps(2, audio_dir / "ev_close.wav", gap_s=0.05)
    assert tool_runner(count_events, {}, path).output["count"] == 1
    assert tool_runner(count_events, {"min_gap_s": 0.02}, path).output["count"] == 2


def test_count_events_split_dip_separates_back_to_back_sounds(audio_dir, helpers, tool_runner):
    """Two tones joined by a 0.1 s stretch 20 dB quieter (above the -30 dB threshold): one event by
    default, two with split_dip_db=12."""
    y = np.concatenate([synth.silence(0.3), synth.tone(800, 0.3, 0.5), synth.tone(800, 0.1, 0.05),
                        synth.tone(800, 0.3, 0.5), synth.silence(0.3)])
    path = helpers.write(y, audio_dir / "ev_dip.wav")
    assert tool_runner(count_events, {}, path).output["count"] == 1
    assert tool_runner(count_events, {"split_dip_db": 12.0}, path).output["count"] == 2


def test_count_events_none_in_silence(silence_clip, tool_runner):
    res = tool_runner(count_events, {}, silence_clip)
    assert res.output["count"] == 0 and res.claims[0].text.startswith("No separate sound events")


def test_count_events_claims_stay_within_boundary(beeps_clip, tool_runner):
    res = tool_runner(count_events, {}, beeps_clip)
    assert res.output["count"] == 3 and res.claims[0].data["count"] == 3
    low = " ".join(c.text for c in res.claims).lower()
    assert "beep" not in low and "tone" not in low  # counts and times, not what the sounds are


def test_count_events_args_are_bounded():
    with pytest.raises(pydantic.ValidationError):
        CountEventsArgs(threshold_db=5.0)
    with pytest.raises(pydantic.ValidationError):
        CountEventsArgs(min_gap_s=-0.1)


def test_silence_intervals_between_beeps_within_0_03_s(beeps_clip, tool_runner):
    """3 beeps (0.2 s) after 0.5 s lead, 0.5 s gaps, 0.5 s tail: 4 silences (lead, 2 gaps, gap + tail)."""
    out = tool_runner(silence_intervals, {}, beeps_clip).output
    truth = [(0.0, 0.5), (0.7, 1.2), (1.4, 1.9), (2.1, 3.1)]
    assert out["n_intervals"] == len(truth)
    for iv, (s, e) in zip(out["intervals"], truth):
        assert abs(iv["start_s"] - s) <= ONSET_TOL_S and abs(iv["end_s"] - e) <= ONSET_TOL_S
    assert abs(out["longest"]["end_s"] - out["longest"]["start_s"] - 1.0) <= 2 * ONSET_TOL_S


def test_silence_intervals_whole_clip_and_none(silence_clip, tone_clip, tool_runner):
    out = tool_runner(silence_intervals, {}, silence_clip).output
    assert out["n_intervals"] == 1 and out["silence_ratio"] == 1.0
    assert tool_runner(silence_intervals, {}, tone_clip).output["n_intervals"] == 0
