"""The grouping descriptors (audiomind/tools/descriptors/grouping.py) on audio whose property is true by
construction: evenly spaced notes with a lower, louder or longer note every 2nd / 3rd / 4th one or at irregular
places (numpy harmonic tones, noise-burst drums, fluidsynth piano and marimba), two kinds of sound placed ABAB,
AABB or AAAA BBBB (square vs sine tones, noise bursts vs tones, fluidsynth marimba vs organ), and two click
tracks in different registers together, one late by a fixed lag, or interleaved; each clean and in pink noise
at 15 dB SNR. The end-to-end questions through AudioMind(planner="rules", frontend="cascade") load MiniLM and
are marked slow."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.grouping import metre, sequence_pattern, sync

SR = synth.SR
NOISE = [None, 15.0]  # clean, and pink noise at 15 dB SNR over the active part
needs_fluidsynth = pytest.mark.skipif(shutil.which("fluidsynth") is None or not synth.SOUNDFONT.exists(),
                                      reason="fluidsynth and fluid-soundfont-gm are needed")


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _save(x: np.ndarray, path) -> str:
    return str(aio.write_wav(path, (0.6 * x / max(float(np.max(np.abs(x))), 1e-9)).astype(np.float32), SR))


def _note(hz: float, dur_s: float, amp: float = 1.0, decay_s: float = 0.25) -> np.ndarray:
    """A plucked harmonic tone: six partials at 1/k, 5 ms attack, exponential decay, 10 ms release."""
    t = np.arange(int(dur_s * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * hz * t) / k for k in range(1, 7))
    env = np.minimum(1, t / 0.005) * np.exp(-t / decay_s) * np.minimum(1, (t[-1] - t) / 0.01)
    return amp * y * env


def _burst(dur_s: float, amp: float, rng: np.random.Generator, decay_s: float = 0.05) -> np.ndarray:
    """A drum-like noise burst (white noise, 2 ms attack, exponential decay)."""
    t = np.arange(int(dur_s * SR)) / SR
    return amp * rng.standard_normal(len(t)) * np.minimum(1, t / 0.002) * np.exp(-t / decay_s)


def _place(events: list[np.ndarray], step_s: float, lead_s: float = 0.4, tail_s: float = 0.6) -> np.ndarray:
    """Events starting every step_s seconds (overlapping tails are summed)."""
    n = int((lead_s + step_s * len(events) + tail_s) * SR) + max(len(e) for e in events)
    y = np.zeros(n)
    for i, e in enumerate(events):
        a = int((lead_s + i * step_s) * SR)
        y[a:a + len(e)] += e
    return y


def _accents(period: int | None, n: int, irregular: tuple[int, ...] = (0, 2, 7, 8, 11, 15)) -> list[bool]:
    return [i in irregular for i in range(n)] if period is None else [i % period == 0 for i in range(n)]


# ------------------------------------------------------------------------------------------- metre

METRE = [(2, "duple"), (3, "triple"), (4, "quadruple"), (None, "irregular")]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("period,label", METRE)
def test_metre_of_a_low_note_every_nth(period, label, snr, tmp_path, tool_runner):
    """Evenly spaced notes (0.3 s), a low note (C3) where accented, higher ones (E4 / G4 in turn) elsewhere."""
    acc = _accents(period, 18)
    highs = [329.6, 392.0]
    notes = [_note(130.8 if a else highs[i % 2], 0.6) for i, a in enumerate(acc)]
    out = tool_runner(metre, None, _save(_noisy(_place(notes, 0.3), snr, seed=period or 1), tmp_path / "m.wav")).output
    assert out["label"] == label, out
    assert out["events"] == 18
    assert abs(out["beat_s"] - 0.3) <= 0.02  # onsets on a 10 ms grid
    if period:
        assert out["period_events"] == period and out["accent_by"] == "pitch" and out["regularity"] >= 0.9
        assert out["period_s"] == pytest.approx(0.3 * period, abs=0.06)


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("period,label", METRE)
def test_metre_of_a_louder_drum_hit_every_nth(period, label, snr, tmp_path, tool_runner):
    """Noise-burst drum hits every 0.25 s, 12 dB louder where accented: the accent is strength alone."""
    rng = np.random.default_rng(5)
    hits = [_burst(0.2, 1.0 if a else 0.25, rng) for a in _accents(period, 18)]
    out = tool_runner(metre, None, _save(_noisy(_place(hits, 0.25), snr, seed=7), tmp_path / "d.wav")).output
    assert out["label"] == label, out
    if period:
        assert out["accent_by"] == "strength", out


@pytest.mark.parametrize("snr", NOISE)
def test_metre_of_identical_events_is_unaccented(snr, tmp_path, tool_runner):
    notes = [_note(440.0, 0.5) for _ in range(16)]
    out = tool_runner(metre, None, _save(_noisy(_place(notes, 0.3), snr, seed=3), tmp_path / "u.wav")).output
    assert out["label"] == "unaccented", out


def test_metre_of_speech_like_noise_says_too_few_events(tmp_path, tool_runner):
    """A held tone has one onset: nothing to group."""
    out = tool_runner(metre, None, _save(_note(220.0, 3.0, decay_s=10.0), tmp_path / "h.wav")).output
    assert out["label"] == "too_few_events" and out["period_events"] is None


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("period,label,program", [(3, "triple", 0), (2, "duple", 12), (None, "irregular", 0)])
def test_metre_of_rendered_bass_and_chord_notes(period, label, program, snr, tmp_path, tool_runner):
    """fluidsynth piano / marimba: a bass note (D3) where accented, A4 / F4 elsewhere, 0.3 s apart."""
    acc = _accents(period, 16)
    notes = [(0.3 + 0.3 * i, 0.27, "D3" if a else ("A4" if i % 2 else "F4")) for i, a in enumerate(acc)]
    raw = synth.midi_track(notes, tmp_path / "raw.wav", program=program)
    out = tool_runner(metre, None, _save(_noisy(aio.load(raw, sr=SR), snr, seed=program), tmp_path / "f.wav")).output
    assert out["label"] == label, out


# ------------------------------------------------------------------------------------------- sequence_pattern

ORDERS = [("ABABABABAB", "alternating"), ("AABBAABBAABB", "pairs"), ("AAAAABBBBB", "blocks")]


def _square(hz: float, dur_s: float) -> np.ndarray:
    t = np.arange(int(dur_s * SR)) / SR
    return 0.5 * np.sign(np.sin(2 * np.pi * hz * t)) * np.minimum(1, np.minimum(t, t[-1] - t) / 0.005)


def _kinds(which: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if which == "square_sine":
        return {"A": _square(200.0, 0.2), "B": 0.5 * synth.tone(1200.0, 0.2, 1.0)}
    return {"A": _burst(0.2, 0.5, rng, decay_s=1.0), "B": 0.5 * synth.tone(500.0, 0.2, 1.0)}  # hiss vs beep


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kinds", ["square_sine", "noise_tone"])
@pytest.mark.parametrize("order,label", ORDERS)
def test_sequence_pattern_of_two_kinds(order, label, kinds, snr, tmp_path, tool_runner):
    k = _kinds(kinds, np.random.default_rng(2))
    y = _place([k[c] for c in order], 0.4)
    out = tool_runner(sequence_pattern, None, _save(_noisy(y, snr, seed=len(order)), tmp_path / "s.wav")).output
    assert out["label"] == label, out
    assert out["sequence"] == order  # A is the kind heard first


@pytest.mark.parametrize("snr", NOISE)
def test_sequence_pattern_of_one_kind(snr, tmp_path, tool_runner):
    y = _place([0.5 * synth.tone(800.0, 0.2, 1.0)] * 10, 0.4)
    out = tool_runner(sequence_pattern, None, _save(_noisy(y, snr, seed=9), tmp_path / "o.wav")).output
    assert out["label"] == "one_kind", out


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("order,label", ORDERS)
def test_sequence_pattern_of_marimba_and_organ(order, label, snr, tmp_path, tool_runner):
    """fluidsynth marimba (C5) and church organ (C3) notes, one every 0.45 s, rendered apart and placed."""
    parts = {}
    fade = np.minimum(1, (int(0.42 * SR) - np.arange(int(0.42 * SR))) / (0.03 * SR))  # 30 ms fade-out
    for c, (program, name) in {"A": (12, "C5"), "B": (19, "C3")}.items():
        parts[c] = aio.load(synth.midi_track([(0.0, 0.3, name)], tmp_path / f"{c}.wav", program=program), sr=SR)[
            : int(0.42 * SR)] * fade
    y = _place([parts[c] for c in order], 0.45)
    out = tool_runner(sequence_pattern, None, _save(_noisy(y, snr, seed=4), tmp_path / "mo.wav")).output
    assert out["label"] == label, out


# ------------------------------------------------------------------------------------------- sync

def _click(hz: float) -> np.ndarray:
    t = np.arange(int(0.06 * SR)) / SR
    return np.sin(2 * np.pi * hz * t) * np.minimum(1, t / 0.001) * np.exp(-t / 0.012)


def _tracks(high_offset_s: float, low_hz: float = 600.0, high_hz: float = 2800.0, beat_s: float = 0.5,
            n: int = 8) -> np.ndarray:
    y = np.zeros(int((0.5 + beat_s * n + 0.6) * SR))
    for i in range(n):
        for hz, off in ((low_hz, 0.0), (high_hz, high_offset_s)):
            a = int((0.5 + i * beat_s + off) * SR)
            y[a:a + int(0.06 * SR)] += _click(hz)
    return y


SYNC = [(0.0, "together", None), (0.06, "lagged", "high"), (-0.075, "lagged", "low"), (0.25, "alternating", None),
        (0.01, "together", None)]


@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("offset,label,late", SYNC)
def test_sync_of_two_click_tracks(offset, label, late, snr, tmp_path, tool_runner):
    out = tool_runner(sync, None, _save(_noisy(_tracks(offset), snr, seed=int(offset * 1000) + 100),
                                        tmp_path / "c.wav")).output
    assert out["label"] == label, out
    assert out["late"] == late
    assert out["low_events"] == 8 and out["high_events"] == 8
    if label == "lagged":  # onsets on a 5 ms grid
        assert abs(out["lag_ms"] - 1000 * offset) <= 10.0, out


def test_sync_of_one_stream(tmp_path, tool_runner):
    y = _tracks(0.0, low_hz=1000.0, high_hz=1000.0)
    out = tool_runner(sync, None, _save(y, tmp_path / "one.wav")).output
    assert out["label"] == "one_stream", out


@needs_fluidsynth
@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("offset,label", [(0.0, "together"), (0.07, "lagged"), (0.3, "alternating")])
def test_sync_of_two_rendered_marimbas(offset, label, snr, tmp_path, tool_runner):
    """fluidsynth marimba: C3 every 0.6 s and C6 at the same times shifted by `offset`."""
    notes = [(0.3 + 0.6 * i, 0.2, "C3") for i in range(8)] + [(0.3 + 0.6 * i + offset, 0.2, "C6") for i in range(8)]
    raw = synth.midi_track(notes, tmp_path / "raw.wav", program=12)
    out = tool_runner(sync, None, _save(_noisy(aio.load(raw, sr=SR), snr, seed=11), tmp_path / "mar.wav")).output
    assert out["label"] == label, out


# ------------------------------------------------------------------------------------------- cost, bounds

def test_a_long_clip_is_analysed_within_the_budget(tmp_path, tool_runner):
    """150 s of a waltz pattern: the first 120 s are analysed, in bounded time."""
    acc = _accents(3, 500)
    y = _place([_note(130.8 if a else 392.0, 0.5) for a in acc], 0.3)
    path = _save(y, tmp_path / "long.wav")
    t = time.perf_counter()
    out = tool_runner(metre, None, path).output
    assert time.perf_counter() - t < 30.0
    assert out["label"] == "triple" and out["analysed_s"][1] - out["analysed_s"][0] == pytest.approx(120.0, abs=0.01)


# ------------------------------------------------------------------------------------------- end to end (slow)

@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from audiomind import AudioMind

    return AudioMind(planner="rules", frontend="cascade", trace_dir=tmp_path_factory.mktemp("traces"))


def _confident_unless_by_likeness(r) -> None:
    """A choice mapped by the vocabulary's words answers at >= 0.7; one mapped by MiniLM similarity alone is a
    lean: a `fit` gap of the coverage stage lowered it, and it is not confident (< 0.7; such answers were right
    51% of the time on the development runs, docs/CONFIDENCE.md), as tests/reasoning/test_property_verifier.py
    holds."""
    by_similarity = "MiniLM similarity" in r.rationale
    if not by_similarity:
        assert r.confidence >= 0.7, r.rationale
        return
    cov = [s for s in r.state.final_answer.confidence_steps if s.stage == "coverage"]
    assert cov and cov[0].output < cov[0].input and any(k.startswith("fit") for k in cov[0].parameters.inputs)
    assert r.confidence < 0.7, r.rationale


@pytest.mark.slow
def test_a_metre_question_in_new_words(agent, tmp_path):
    acc = _accents(3, 18)
    y = _place([_note(110.0 if a else 440.0, 0.6) for a in acc], 0.3)
    path = _save(_noisy(y, 20.0, seed=1), tmp_path / "waltz.wav")
    choices = ["it goes one-two, one-two like soldiers marching", "it swings one-two-three like a waltz",
               "the strong notes land at random"]
    r = agent.ask(path, "How many beats are there in each bar of this figure?", choices=choices)
    assert r.choice == choices[1], r.rationale
    _confident_unless_by_likeness(r)
    assert "metre" in {c.tool for c in r.state.tool_calls}


@pytest.mark.slow
def test_a_sequence_question_in_new_words(agent, tmp_path):
    k = _kinds("square_sine", np.random.default_rng(2))
    path = _save(_noisy(_place([k[c] for c in "AABBAABBAABB"], 0.4), 20.0, seed=2), tmp_path / "pairs.wav")
    choices = ["the buzz and the whistle take turns one at a time", "each sound is doubled before the other comes",
               "all the buzzes, then all the whistles"]
    r = agent.ask(path, "What order do the buzz and the whistle come in?", choices=choices)
    assert r.choice == choices[1], r.rationale
    _confident_unless_by_likeness(r)
    assert "sequence_pattern" in {c.tool for c in r.state.tool_calls}


@pytest.mark.slow
def test_a_sync_question_in_new_words(agent, tmp_path):
    path = _save(_noisy(_tracks(0.07), 20.0, seed=3), tmp_path / "late.wav")
    choices = ["the two clicks are simultaneous", "the high click lags a little behind the low one",
               "the clicks interleave, one in each gap of the other"]
    r = agent.ask(path, "Do the bass click and the treble click sound in time?", choices=choices)
    assert r.choice == choices[1], r.rationale
    _confident_unless_by_likeness(r)
    assert "sync" in {c.tool for c in r.state.tool_calls}
