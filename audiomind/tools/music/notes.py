"""notes: note events (onset, offset, pitch) by the basic-pitch ONNX model.

The model (Spotify, Apache-2.0) is carried by the `basic-pitch` package, installed --no-deps; its note
decoding is ported here so neither TensorFlow nor its MIDI dependencies are needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from audiomind.embedded import sessions
from audiomind.tools.base import Claim, CoveredOutput, TimeSpan, ToolContext, ToolResult
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.music.common import MAX_LISTED, midi_name
from audiomind.tools.text import listed
from audiomind.tools.window import WindowArgs, excerpt

# basic-pitch (ICASSP 2022) constants: 22.05 kHz input, 2 s windows (43844 samples) with 30 overlapping
# 256-sample frames, 88 piano-key note bins starting at A0 (MIDI 21).
BP_SR = 22050
BP_HOP = 256
BP_WINDOW = BP_SR * 2 - BP_HOP
BP_OVERLAP_FRAMES = 30
BP_OVERLAP = BP_OVERLAP_FRAMES * BP_HOP
BP_STEP = BP_WINDOW - BP_OVERLAP
BP_MIDI_OFFSET = 21
BP_MAX_FREQ_IDX = 87
BP_ENERGY_TOL = 11
BP_BATCH = 8


def basic_pitch_model_path() -> Path:
    """The ONNX model inside the `basic-pitch` wheel (located without importing the package, whose
    __init__ probes for TensorFlow/CoreML and logs warnings)."""
    spec = importlib.util.find_spec("basic_pitch")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("package 'basic-pitch' is not installed (pip install --no-deps basic-pitch)")
    path = Path(next(iter(spec.submodule_search_locations))) / "saved_models" / "icassp_2022" / "nmp.onnx"
    if not path.exists():
        raise RuntimeError(f"basic-pitch is installed but has no ONNX model at {path}")
    return path


def _bp_session():
    """The basic-pitch ONNX session, loaded once per process (onnxruntime's run() is thread-safe)."""
    return sessions.get("basic-pitch", lambda: sessions.onnx_session(basic_pitch_model_path()))


def basic_pitch_activations(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(note activations, onset activations, frame times s) for 22.05 kHz mono audio, windowed and
    unwrapped as basic_pitch.inference.run_inference does; times are exact for the kept frames."""
    sess = _bp_session()
    n = len(y)
    padded = np.concatenate([np.zeros(BP_OVERLAP // 2, dtype=np.float32), y.astype(np.float32)])
    starts = list(range(0, len(padded), BP_STEP))
    windows = np.zeros((len(starts), BP_WINDOW, 1), dtype=np.float32)
    for i, s in enumerate(starts):
        chunk = padded[s : s + BP_WINDOW]
        windows[i, : len(chunk), 0] = chunk
    notes, onsets = [], []
    for b in range(0, len(windows), BP_BATCH):
        note, onset = sess.run(
            ["StatefulPartitionedCall:1", "StatefulPartitionedCall:2"],
            {"serving_default_input_2:0": windows[b : b + BP_BATCH]},
        )
        notes.append(note)
        onsets.append(onset)
    half = BP_OVERLAP_FRAMES // 2

    def unwrap(parts: list[np.ndarray]) -> np.ndarray:  # drop half the overlap at each end, then concatenate
        arr = np.concatenate(parts)[:, half:-half, :]
        return arr.reshape(-1, arr.shape[2])

    note_act, onset_act = unwrap(notes), unwrap(onsets)
    keep = notes[0].shape[1] - 2 * half  # frames kept per window (142 of 172)
    n_frames = min(len(note_act), int(np.floor(n * (BP_SR // BP_HOP) / BP_SR)))
    idx = np.arange(n_frames)
    times = (idx // keep) * BP_STEP / BP_SR + (idx % keep) * BP_HOP / BP_SR
    return note_act[:n_frames], onset_act[:n_frames], times


def _infer_onsets(onsets: np.ndarray, frames: np.ndarray, n_diff: int = 2) -> np.ndarray:
    diffs = []
    for n in range(1, n_diff + 1):
        padded = np.concatenate([np.zeros((n, frames.shape[1])), frames])
        diffs.append(padded[n:, :] - padded[:-n, :])
    frame_diff = np.min(diffs, axis=0)
    frame_diff[frame_diff < 0] = 0
    frame_diff[:n_diff, :] = 0
    top = np.max(frame_diff)
    if top > 0:
        frame_diff = np.max(onsets) * frame_diff / top
    return np.max([onsets, frame_diff], axis=0)


def decode_notes(
    frames: np.ndarray,
    onsets: np.ndarray,
    onset_thresh: float,
    frame_thresh: float,
    min_note_len: int,
    min_midi: int | None = None,
    max_midi: int | None = None,
    melodia_trick: bool = True,
) -> list[tuple[int, int, int, float]]:
    """basic-pitch's polyphonic note decoding (note_creation.output_to_notes_polyphonic, Apache-2.0),
    ported: onset peaks start notes that last while the frame activation stays above frame_thresh; the
    'melodia trick' then picks up sustained notes without a clear onset. Returns (start frame, end frame,
    MIDI pitch, mean activation)."""
    from audiomind.embedded.dsp import scipy_signal

    signal = scipy_signal()
    frames, onsets = frames.astype(np.float64).copy(), onsets.astype(np.float64).copy()
    n_frames = frames.shape[0]
    if max_midi is not None:
        frames[:, max_midi - BP_MIDI_OFFSET + 1 :] = 0
        onsets[:, max_midi - BP_MIDI_OFFSET + 1 :] = 0
    if min_midi is not None:
        frames[:, : max(0, min_midi - BP_MIDI_OFFSET)] = 0
        onsets[:, : max(0, min_midi - BP_MIDI_OFFSET)] = 0
    onsets = _infer_onsets(onsets, frames)
    peaks = np.zeros(onsets.shape)
    where = signal.argrelmax(onsets, axis=0)
    peaks[where] = onsets[where]
    on_t, on_f = np.where(peaks >= onset_thresh)
    remaining = frames.copy()
    events: list[tuple[int, int, int, float]] = []

    def clear(i: int, f: int) -> None:
        remaining[i, f] = 0
        if f < BP_MAX_FREQ_IDX:
            remaining[i, f + 1] = 0
        if f > 0:
            remaining[i, f - 1] = 0

    for start, f in zip(on_t[::-1], on_f[::-1]):  # backwards in time
        if start >= n_frames - 1:
            continue
        i, k = start + 1, 0
        while i < n_frames - 1 and k < BP_ENERGY_TOL:
            k = k + 1 if remaining[i, f] < frame_thresh else 0
            i += 1
        i -= k
        if i - start <= min_note_len:
            continue
        remaining[start:i, f] = 0
        if f < BP_MAX_FREQ_IDX:
            remaining[start:i, f + 1] = 0
        if f > 0:
            remaining[start:i, f - 1] = 0
        events.append((int(start), int(i), int(f) + BP_MIDI_OFFSET, float(np.mean(frames[start:i, f]))))
    if melodia_trick:
        while np.max(remaining) > frame_thresh:
            i_mid, f = (int(v) for v in np.unravel_index(np.argmax(remaining), remaining.shape))
            remaining[i_mid, f] = 0
            i, k = i_mid + 1, 0
            while i < n_frames - 1 and k < BP_ENERGY_TOL:
                k = k + 1 if remaining[i, f] < frame_thresh else 0
                clear(i, f)
                i += 1
            i_end = i - 1 - k
            i, k = i_mid - 1, 0
            while i > 0 and k < BP_ENERGY_TOL:
                k = k + 1 if remaining[i, f] < frame_thresh else 0
                clear(i, f)
                i -= 1
            i_start = i + 1 + k
            if i_end - i_start <= min_note_len:
                continue
            events.append(
                (int(i_start), int(i_end), int(f) + BP_MIDI_OFFSET, float(np.mean(frames[i_start:i_end, f])))
            )
    return events


def merge_reonsets(
    events: list[tuple[int, int, int, float]], frames: np.ndarray, rise: float = 0.05
) -> list[tuple[int, int, int, float]]:
    """Join a note to the same-pitch note that ends where it starts when the frame activation does not rise
    at the join: an onset leaking in from another note while this one still rings, not a re-attack."""
    merged: list[list] = []
    for a, b, m, amp in sorted(events, key=lambda e: (e[2], e[0])):
        if merged and merged[-1][2] == m and 0 <= a - merged[-1][1] <= 1 and a > 0:
            f = m - BP_MIDI_OFFSET
            if float(frames[a : a + 3, f].max()) <= float(frames[a - 1, f]) + rise:
                pa, pb = merged[-1][0], merged[-1][1]
                merged[-1][3] = (merged[-1][3] * (pb - pa) + amp * (b - a)) / max(1, b - pa)
                merged[-1][1] = b
                continue
        merged.append([a, b, m, amp])
    return [(a, b, m, amp) for a, b, m, amp in merged]


class NotesArgs(WindowArgs):
    onset_threshold: float = Field(0.5, ge=0.05, le=0.95, description="onset activation that starts a note")
    frame_threshold: float = Field(0.3, ge=0.05, le=0.95, description="frame activation that keeps a note on")
    min_note_ms: float = Field(127.7, ge=20.0, le=2000.0, description="drop notes shorter than this (ms)")
    min_note: str | None = Field(
        None, pattern=r"^[A-Ga-g][#b]?-?\d$", description="lowest note kept, e.g. 'C2'"
    )
    max_note: str | None = Field(
        None, pattern=r"^[A-Ga-g][#b]?-?\d$", description="highest note kept, e.g. 'C7'"
    )
    melodia_trick: bool = Field(True, description="also recover sustained notes without a detected onset")
    merge_reonsets: bool = Field(
        True,
        description="join a same-pitch note that starts where another ends without "
        "a new attack (an onset leaking in from a different note)",
    )


def _parse_note(name: str | None) -> int | None:
    if name is None:
        return None
    import librosa

    return round(librosa.note_to_midi(name))


class NoteEvent(TimeSpan):
    pitch_midi: int = Field(description="MIDI pitch number (60 = C4)")
    note: str = Field(description="note name (scientific pitch, e.g. C4)")
    activation: float = Field(description="mean basic-pitch frame activation over the note (0-1)")


class NotesOutput(CoveredOutput):
    count: int = Field(description="notes transcribed (exact)")
    notes: list[NoteEvent] = Field(description="notes by onset (at most 200)")
    notes_truncated: bool = Field(description="more notes than listed")
    sequence: list[str] = Field(description="note names by onset")
    max_polyphony: int = Field(description="most notes sounding at once")
    lowest: str | None = Field(description="lowest note; None without notes")
    highest: str | None = Field(description="highest note; None without notes")
    model: str = Field(description="transcription model")
    window_s: AnalysedWindow


def notes(args: NotesArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=BP_SR, min_s=0.2)
    frames, onsets, times = basic_pitch_activations(y)
    min_len = round(args.min_note_ms / 1000 * (BP_SR / BP_HOP))
    events = decode_notes(
        frames,
        onsets,
        args.onset_threshold,
        args.frame_threshold,
        min_len,
        _parse_note(args.min_note),
        _parse_note(args.max_note),
        args.melodia_trick,
    )
    if args.merge_reonsets:
        events = merge_reonsets(events, frames)
    found: list[dict[str, Any]] = []
    for a, b, m, amp in events:
        end_t = times[b] if b < len(times) else times[-1] + BP_HOP / BP_SR
        found.append(
            {
                "start_s": round(float(times[a]) + t0, 3),
                "end_s": round(float(end_t) + t0, 3),
                "pitch_midi": m,
                "note": midi_name(m),
                "activation": round(amp, 3),
            }
        )
    found.sort(key=lambda n: (n["start_s"], n["pitch_midi"]))
    # maximum number of notes sounding at once (sweep over start/end events)
    marks = sorted([(n["start_s"], 1) for n in found] + [(n["end_s"], -1) for n in found])
    cur = poly = 0
    for _, d in marks:
        cur += d
        poly = max(poly, cur)
    out: dict[str, Any] = {
        "count": len(found),
        "notes": found[:MAX_LISTED],
        "notes_truncated": len(found) > MAX_LISTED,
        "sequence": [n["note"] for n in found[:MAX_LISTED]],
        "max_polyphony": poly,
        "lowest": min(found, key=lambda n: n["pitch_midi"])["note"] if found else None,
        "highest": max(found, key=lambda n: n["pitch_midi"])["note"] if found else None,
        "model": "basic-pitch ICASSP 2022 (ONNX)",
        "window_s": [round(t0, 3), round(t1, 3)],
    }
    if not found:
        return ToolResult(
            output=out,
            claims=[
                Claim(
                    text=(
                        f"No pitched note events found between {t0:.2f} and {t1:.2f} s (basic-pitch, onset threshold "
                        f"{args.onset_threshold:g}, frame threshold {args.frame_threshold:g})."
                    ),
                    data={"count": 0},
                )
            ],
        )
    shown = listed(found, 24, lambda n: f"{n['note']} {n['start_s']:.2f}-{n['end_s']:.2f} s")
    return ToolResult(
        output=out,
        claims=[
            Claim(
                text=(
                    f"{len(found)} note event(s) transcribed (basic-pitch): {shown}; at most {poly} sounding at "
                    f"once; range {out['lowest']}-{out['highest']}."
                ),
                confidence=round(float(np.mean([n["activation"] for n in found])), 3),
                data={
                    "count": len(found),
                    "notes": [[n["start_s"], n["end_s"], n["note"]] for n in found[:MAX_LISTED]],
                },
            )
        ],
    )
