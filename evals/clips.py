"""Fresh synthetic clips for the latency benchmarks (startup_benchmark, serve_benchmark, overhead_benchmark).

A "new" clip must really be new: the tool cache is keyed by the audio's sha256, so every variant rotates
the flite voices/sentences and sounds differently and adds a faint seeded noise floor (no two variants
share a hash). Clips are speech + sounds + beeps like evals/tool_benchmark.py's, exactly `seconds` long.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

LINES = [
    ("slt", "Good morning, this is the weather report for the northern coast."),
    ("awb", "Thank you. It will be sunny with a light breeze until the evening."),
    ("rms", "Please remember to bring the blue folder to the meeting on Friday."),
    ("kal", "The train to the city leaves from platform four at nine fifteen."),
    ("slt", "I think we should leave early tomorrow to avoid the traffic."),
    ("awb", "That sounds sensible, the roads are always busy on Mondays."),
]
SOUNDS = ["phone-incoming-call", "bell", "dialog-warning", "message", "complete", "camera-shutter"]
QUESTIONS = [
    ("How many different people speak in this recording?", ["1", "2", "3", "4"]),
    ("What does the first speaker talk about?", ["The weather", "A meeting", "A train", "Traffic"]),
    ("How many beeps are there in the recording?", ["1", "2", "3", "4"]),
    ("Which sound is heard in the clip?", ["A telephone ringing", "A dog barking", "Rain falling", "A car engine"]),
]


def fresh_clip(seconds: float, out: Path, variant: int = 0, work: Path | None = None) -> Path:
    """Speech (two voices), a sound and beeps, then silence: `seconds` long; `variant` picks the content."""
    from audiomind import audio as aio
    from audiomind import synth

    work = work or out.parent / f".{out.stem}-parts"
    work.mkdir(parents=True, exist_ok=True)
    sr = synth.SR
    n_max = round(seconds * sr)
    parts: list[np.ndarray] = [synth.silence(0.3)]
    n, k, full = len(parts[0]), 0, False
    while not full and k < 12:
        voice, text = LINES[(variant + k) % len(LINES)]
        speech = aio.load(synth.speech(text, work / f"s{variant}-{k}.wav", voice=voice), sr=sr)
        sound = aio.load(synth.sound_file(SOUNDS[(variant + k) % len(SOUNDS)], work / f"fx{variant}-{k}.wav"), sr=sr)
        beeps = aio.load(synth.beeps(1 + (variant + k) % 3, work / f"b{variant}-{k}.wav", beep_s=0.12, gap_s=0.25,
                                     lead_s=0.1), sr=sr)
        for piece in (speech, synth.silence(0.4), sound * 0.5, synth.silence(0.3), beeps * 0.6, synth.silence(0.4)):
            if n + len(piece) > n_max:
                full = True
                break
            parts.append(np.asarray(piece, dtype=np.float32))
            n += len(piece)
        k += 1
    y = np.concatenate(parts)
    y = np.pad(y, (0, max(0, n_max - len(y))))[:n_max]
    y = y + np.random.default_rng(variant).standard_normal(len(y)).astype(np.float32) * 1e-4
    return aio.write_wav(out, y, sr)
