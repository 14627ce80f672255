"""Audio whose content is true by construction, from Debian's generators (flite, espeak-ng, sox,
fluidsynth, the freedesktop sound theme). Used by the tests, the shipped examples and the synthetic
benchmark; every function writes a 16 kHz mono WAV and returns its path.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from audiomind import audio as audio_io

SR = 16000
FREEDESKTOP = Path("/usr/share/sounds/freedesktop/stereo")
FLITE_VOICES = ("slt", "awb", "rms", "kal")  # female, Scottish male, US male, US male (diphone)


class SynthUnavailable(RuntimeError):
    """A generator binary or sound file is missing (install the Debian packages in scripts/install.sh --dev)."""


def _need(exe: str) -> str:
    path = shutil.which(exe)
    if not path:
        raise SynthUnavailable(f"{exe} not found (apt-get install {exe})")
    return path


def _to_16k(src: Path, dst: Path, gain_db: float = 0.0) -> Path:
    y = audio_io.load(src, sr=SR, mono=True)
    if gain_db:
        y = y * (10 ** (gain_db / 20))
    return audio_io.write_wav(dst, y, SR)


def speech(text: str, out: str | Path, voice: str = "slt", engine: str = "flite") -> Path:
    """Speak `text` with flite (voices slt/awb/rms/kal) or espeak-ng (any espeak voice name)."""
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        if engine == "flite":
            subprocess.run([_need("flite"), "-voice", voice, "-t", text, "-o", str(raw)], check=True)
        else:
            subprocess.run([_need("espeak-ng"), "-v", voice, "-w", str(raw), text], check=True)
        return _to_16k(raw, out)


def tone(freq_hz: float, duration_s: float, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(duration_s * SR)) / SR
    y = amplitude * np.sin(2 * np.pi * freq_hz * t)
    ramp = min(len(y) // 10, int(0.01 * SR))
    if ramp:
        env = np.ones_like(y)
        env[:ramp] = np.linspace(0, 1, ramp)
        env[-ramp:] = np.linspace(1, 0, ramp)
        y = y * env
    return y.astype(np.float32)


def silence(duration_s: float) -> np.ndarray:
    return np.zeros(int(duration_s * SR), dtype=np.float32)


def beeps(count: int, out: str | Path, freq_hz: float = 1000.0, beep_s: float = 0.2, gap_s: float = 0.5,
          lead_s: float = 0.5) -> Path:
    """`count` separated sine beeps: a counting question with an exact answer."""
    parts = [silence(lead_s)]
    for _ in range(count):
        parts += [tone(freq_hz, beep_s), silence(gap_s)]
    parts.append(silence(lead_s))
    return audio_io.write_wav(out, np.concatenate(parts), SR)


def sound_file(name: str, out: str | Path, repeat: int = 1) -> Path:
    """A freedesktop theme sound (e.g. 'phone-incoming-call', 'bell', 'dialog-warning') as 16 kHz WAV."""
    src = FREEDESKTOP / f"{name}.oga"
    if not src.exists():
        raise SynthUnavailable(f"{src} not found (apt-get install sound-theme-freedesktop)")
    y = audio_io.load(src, sr=SR, mono=True)
    return audio_io.write_wav(out, np.concatenate([y] * repeat), SR)


def concat(paths: list[str | Path], out: str | Path, gap_s: float = 0.4) -> Path:
    """Concatenate clips with silent gaps (e.g. a conversation of several voices)."""
    parts: list[np.ndarray] = []
    for p in paths:
        parts += [audio_io.load(p, sr=SR, mono=True), silence(gap_s)]
    return audio_io.write_wav(out, np.concatenate(parts[:-1]), SR)


def mix(a: str | Path, b: str | Path, out: str | Path, b_gain_db: float = 0.0, offset_s: float = 0.0) -> Path:
    """Overlay clip b on clip a starting at offset_s (speech over a sound, etc.)."""
    ya = audio_io.load(a, sr=SR)
    yb = audio_io.load(b, sr=SR) * (10 ** (b_gain_db / 20))
    start = int(offset_s * SR)
    n = max(len(ya), start + len(yb))
    y = np.zeros(n, dtype=np.float32)
    y[: len(ya)] += ya
    y[start : start + len(yb)] += yb
    peak = float(np.max(np.abs(y))) or 1.0
    return audio_io.write_wav(out, y / max(peak, 1.0), SR)


def conversation(lines: list[tuple[str, str]], out: str | Path, gap_s: float = 0.5) -> Path:
    """Several flite voices taking turns: [(voice, text), ...]; speaker count is true by construction."""
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        clips = [speech(text, Path(tmp) / f"l{i}.wav", voice=voice) for i, (voice, text) in enumerate(lines)]
        return concat(clips, out, gap_s=gap_s)
