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


# --- music generators (fluidsynth + General MIDI), used by the music/acoustic feature tools' tests -------------

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
_NOTE_PC = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def note_to_midi(name: str) -> int:
    """'C4' -> 60, 'F#3' -> 54, 'Bb4' -> 70 (scientific pitch notation, C4 = middle C)."""
    name = name.strip()
    pc = _NOTE_PC[name[0].upper()]
    rest = name[1:]
    while rest and rest[0] in "#b":
        pc += 1 if rest[0] == "#" else -1
        rest = rest[1:]
    return 12 * (int(rest) + 1) + pc


def chord_pitches(chord: str, octave: int = 4, bass: bool = True) -> list[int]:
    """MIDI pitches of a root-position chord: 'C' major, 'Am' minor, 'G7' dominant seventh, 'Bdim',
    with the root doubled an octave below as a bass note (so the root is unambiguous)."""
    i = 1 + (len(chord) > 1 and chord[1] in "#b")
    root = note_to_midi(chord[:i] + str(octave))
    quality = chord[i:]
    intervals = {"": [0, 4, 7], "m": [0, 3, 7], "7": [0, 4, 7, 10], "maj7": [0, 4, 7, 11], "m7": [0, 3, 7, 10],
                 "dim": [0, 3, 6], "aug": [0, 4, 8]}[quality]
    return ([root - 12] if bass else []) + [root + k for k in intervals]


def _vlq(n: int) -> bytes:
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def write_midi(notes: list[tuple[float, float, int, int]], out: str | Path, program: int = 0, channel: int = 0,
               bpm: float = 120.0) -> Path:
    """A format-0 Standard MIDI File from (start_s, duration_s, pitch, velocity) events (a tiny SMF writer,
    so no MIDI package is needed). Channel 9 is the General MIDI drum kit."""
    tpq = 480
    ticks_per_s = tpq * bpm / 60.0
    events: list[tuple[int, int, bytes]] = []  # (tick, order: offs before ons, message)
    for start, dur, pitch, vel in notes:
        on, off = round(start * ticks_per_s), round((start + dur) * ticks_per_s)
        events.append((on, 1, bytes([0x90 | channel, pitch, vel])))
        events.append((max(off, on + 1), 0, bytes([0x80 | channel, pitch, 0])))
    events.sort(key=lambda e: (e[0], e[1]))
    us_per_beat = round(60_000_000 / bpm)
    track = b"\x00\xff\x51\x03" + us_per_beat.to_bytes(3, "big")
    if channel != 9:
        track += b"\x00" + bytes([0xC0 | channel, program])
    last = 0
    for tick, _, msg in events:
        track += _vlq(tick - last) + msg
        last = tick
    track += b"\x00\xff\x2f\x00"
    data = b"MThd" + (6).to_bytes(4, "big") + (0).to_bytes(2, "big") + (1).to_bytes(2, "big") + tpq.to_bytes(2, "big")
    data += b"MTrk" + len(track).to_bytes(4, "big") + track
    out = Path(out)
    out.write_bytes(data)
    return out


def render_midi(midi: str | Path, out: str | Path, gain: float = 0.6, tail_s: float | None = None,
                peak: float | None = 0.5) -> Path:
    """Render a MIDI file with fluidsynth and the FluidR3 General MIDI soundfont to 16 kHz mono (reverb and
    chorus off, so note ends are where the MIDI says). `tail_s` trims the result to the given length; `peak`
    scales it to that peak amplitude (None keeps fluidsynth's level)."""
    if not SOUNDFONT.exists():
        raise SynthUnavailable(f"{SOUNDFONT} not found (apt-get install fluid-soundfont-gm)")
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run([_need("fluidsynth"), "-ni", "-q", "-R", "0", "-C", "0", "-g", str(gain), "-r", "44100",
                        "-F", str(raw), str(SOUNDFONT), str(midi)], check=True, capture_output=True)
        y = audio_io.load(raw, sr=SR, mono=True)
    if tail_s is not None:
        y = y[: int(tail_s * SR)]
    top = float(np.max(np.abs(y))) if len(y) else 0.0
    if peak is not None and top > 0:
        y = y * (peak / top)
    return audio_io.write_wav(out, y, SR)


def midi_track(notes: list[tuple], out: str | Path, program: int = 0, channel: int = 0,
               gain: float = 0.6) -> Path:
    """Render (start_s, duration_s, pitch[, velocity]) notes with a General MIDI program (0 = piano,
    40 = violin, 73 = flute; channel 9 = drums). Pitch may be a MIDI number or a name like 'C4'."""
    events = [(float(n[0]), float(n[1]), note_to_midi(n[2]) if isinstance(n[2], str) else int(n[2]),
               int(n[3]) if len(n) > 3 else 100) for n in notes]
    end = max((s + d for s, d, _, _ in events), default=0.0) + 0.5
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        mid = write_midi(events, Path(tmp) / "track.mid", program=program, channel=channel)
        return render_midi(mid, out, gain=gain, tail_s=end)


def melody(note_names: list[str], out: str | Path, note_s: float = 0.5, gap_s: float = 0.0, lead_s: float = 0.5,
           program: int = 0) -> Path:
    """One note after another (e.g. ['C4', 'E4', 'G4', 'C5']), each note_s long: a melody true by
    construction (note i starts at lead_s + i * (note_s + gap_s))."""
    notes = [(lead_s + i * (note_s + gap_s), note_s, n, 100) for i, n in enumerate(note_names)]
    return midi_track(notes, out, program=program)


def triads(progression: list[str], out: str | Path, chord_s: float = 1.0, lead_s: float = 0.0, program: int = 0,
           octave: int = 4) -> Path:
    """Block chords one after another (e.g. ['C', 'F', 'G', 'C'] or ['Am', 'Dm', 'Em', 'Am']), each
    chord_s long, root-position with a bass note (see chord_pitches); chord i spans
    [lead_s + i * chord_s, lead_s + (i + 1) * chord_s)."""
    notes = [(lead_s + i * chord_s, chord_s * 0.95, p, 90)
             for i, c in enumerate(progression) for p in chord_pitches(c, octave)]
    return midi_track(notes, out, program=program)


def click_track(bpm: float, seconds: float, out: str | Path, freq_hz: float = 1500.0, click_s: float = 0.03,
                accent_every: int = 4, lead_s: float = 0.0) -> Path:
    """Short decaying sine clicks exactly every 60/bpm s (the first at lead_s), every `accent_every`-th one
    louder: a tempo question with an exact answer."""
    n = int(seconds * SR)
    y = np.zeros(n, dtype=np.float32)
    t = np.arange(int(click_s * SR)) / SR
    click = np.sin(2 * np.pi * freq_hz * t) * np.exp(-t / (click_s / 4))
    period = 60.0 / bpm
    k = 0
    while lead_s + k * period < seconds:
        start = round((lead_s + k * period) * SR)
        amp = 0.8 if accent_every and k % accent_every == 0 else 0.5
        seg = click[: max(0, n - start)]
        y[start : start + len(seg)] += amp * seg
        k += 1
    return audio_io.write_wav(out, y, SR)


def drum_pattern(bpm: float, seconds: float, out: str | Path, hats: str = "quarter") -> Path:
    """A General MIDI drum kit (channel 10) rock beat at `bpm`: kick on beats 1 and 3, snare on 2 and 4,
    closed hi-hat on every beat ('quarter') or every half beat ('eighth'); beat k at k * 60/bpm s."""
    period = 60.0 / bpm
    notes: list[tuple] = []
    k = 0
    while k * period < seconds - 0.05:
        t = k * period
        notes.append((t, 0.1, 36 if k % 2 == 0 else 38, 110))  # kick / acoustic snare
        notes.append((t, 0.1, 42, 70))  # closed hi-hat
        if hats == "eighth" and t + period / 2 < seconds:
            notes.append((t + period / 2, 0.1, 42, 55))
        k += 1
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        mid = write_midi([(s, d, p, v) for s, d, p, v in notes], Path(tmp) / "drums.mid", channel=9)
        return render_midi(mid, out, gain=0.8, tail_s=seconds)


# ---- generators for the verifiable synthetic benchmark (audiomind.bench.tasks.synthetic_generate) ----------


def tone_sequence(freqs_hz: list[float], out: str | Path, tone_s: float = 0.5, gap_s: float = 0.3,
                  lead_s: float = 0.4, amplitude: float = 0.5) -> Path:
    """Sine tones one after another (which is higher, rising or falling): tone i starts at
    lead_s + i * (tone_s + gap_s), so the pitch order is exact."""
    parts = [silence(lead_s)]
    for f in freqs_hz:
        parts += [tone(f, tone_s, amplitude), silence(gap_s)]
    parts[-1] = silence(lead_s)
    return audio_io.write_wav(out, np.concatenate(parts), SR)


def speech_stretched(text: str, out: str | Path, voice: str = "slt", stretch: float = 1.0) -> Path:
    """flite speech with its duration stretch (< 1 faster, > 1 slower): a speaking rate that is set, not guessed."""
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        subprocess.run([_need("flite"), "--setf", f"duration_stretch={stretch:g}", "-voice", voice, "-t", text,
                        "-o", str(raw)], check=True)
        return _to_16k(raw, out)


def trim_silence(src: str | Path, out: str | Path, threshold_db: float = -40.0) -> Path:
    """Cut leading and trailing near-silence (below threshold_db re the clip peak, 10 ms frames), so a clip
    placed at time t is audible from t (flite and the sound theme pad their files)."""
    y = audio_io.load(src, sr=SR, mono=True)
    frame = int(0.01 * SR)
    n = len(y) // frame
    if n == 0:
        return audio_io.write_wav(out, y, SR)
    rms = np.sqrt(np.mean(y[: n * frame].reshape(n, frame) ** 2, axis=1) + 1e-12)
    db = 20 * np.log10(rms / (rms.max() or 1.0))
    loud = np.flatnonzero(db > threshold_db)
    a, b = (loud[0] * frame, (loud[-1] + 1) * frame) if len(loud) else (0, len(y))
    return audio_io.write_wav(out, y[a:b], SR)


def gain_ramp(src: str | Path, out: str | Path, start_db: float, end_db: float, peak: float = 0.8) -> Path:
    """The clip with a gain moving linearly in dB from start_db to end_db over its length, then scaled to
    `peak`: a loudness trend by construction (0 -> 0 keeps it steady)."""
    y = audio_io.load(src, sr=SR, mono=True)
    y = y * (10 ** (np.linspace(start_db, end_db, len(y)) / 20))
    top = float(np.max(np.abs(y))) or 1.0
    return audio_io.write_wav(out, (y * (peak / top)).astype(np.float32), SR)


def place(clips: list[tuple[str | Path, float]], out: str | Path, total_s: float | None = None) -> Path:
    """Clips laid on a silent track at the given onsets (s): onset times and order are exact. The track
    lasts until the last clip ends, or total_s if longer; overlaps are summed (peak-limited to 1)."""
    ys = [(audio_io.load(p, sr=SR, mono=True), round(t * SR)) for p, t in clips]
    n = max((start + len(y) for y, start in ys), default=0)
    if total_s is not None:
        n = max(n, round(total_s * SR))
    track = np.zeros(n, dtype=np.float32)
    for y, start in ys:
        track[start : start + len(y)] += y
    top = float(np.max(np.abs(track))) if n else 0.0
    return audio_io.write_wav(out, track / max(top, 1.0), SR)


# ---- voices, channels, rates, levels and noise for the benchmark's conditions -------------------------------

ESPEAK_WPM = 175  # espeak-ng's default speaking rate


def say(text: str, out: str | Path, voice: str = "flite:slt", rate: float = 1.0) -> Path:
    """Speak `text` with a voice named 'flite:<voice>' or 'espeak-ng:<voice>[+variant]' (a bare name is a
    flite voice), at `rate` times the voice's normal speed (flite: duration_stretch = 1 / rate; espeak-ng:
    -s round(175 * rate) words per minute). 16 kHz mono."""
    engine, _, name = voice.partition(":") if ":" in voice else ("flite", "", voice)
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.wav"
        if engine == "flite":
            cmd = [_need("flite")]
            if rate != 1.0:
                cmd += ["--setf", f"duration_stretch={1.0 / rate:.4f}"]
            subprocess.run(cmd + ["-voice", name, "-t", text, "-o", str(raw)], check=True)
        elif engine == "espeak-ng":
            subprocess.run([_need("espeak-ng"), "-v", name, "-s", str(round(ESPEAK_WPM * rate)), "-w", str(raw), text],
                           check=True)
        else:
            raise ValueError(f"unknown speech engine {engine!r} (flite or espeak-ng)")
        y = audio_io.load(raw, sr=SR, mono=True)
        top = float(np.max(np.abs(y))) if y.size else 0.0
        if top > 0.97:  # resampling a near-full-scale voice can overshoot: keep the file unclipped
            y = y * (0.97 / top)
        return audio_io.write_wav(out, y, SR)


def pan(y: np.ndarray, position: float) -> np.ndarray:
    """Mono -> (2, n) stereo with a constant-power pan law: position -1 is hard left, 0 centre, +1 hard right
    (left gain cos(theta), right gain sin(theta), theta = (position + 1) * pi / 4)."""
    theta = (float(np.clip(position, -1.0, 1.0)) + 1.0) * np.pi / 4
    return np.stack([np.cos(theta) * y, np.sin(theta) * y]).astype(np.float32)


def resample(y: np.ndarray, sr_from: int, sr_to: int) -> np.ndarray:
    """Polyphase resampling along the last axis (mono (n,) or (channels, n))."""
    if sr_from == sr_to:
        return y
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(int(sr_from), int(sr_to))
    return resample_poly(y, int(sr_to) // g, int(sr_from) // g, axis=-1).astype(np.float32)


def peak_dbfs(y: np.ndarray) -> float:
    """Sample peak in dB re full scale (1.0)."""
    top = float(np.max(np.abs(y))) if y.size else 0.0
    return 20 * np.log10(top) if top > 0 else -np.inf


def active_mask(y: np.ndarray, sr: int, frame_s: float = 0.02, floor_db: float = 30.0) -> np.ndarray:
    """Per-sample mask of the 'active' part of a clean signal: the frames (frame_s long) whose RMS is within
    floor_db of the loudest frame (channels pooled). What an SNR is measured over."""
    x = y if y.ndim == 1 else np.sqrt(np.mean(np.asarray(y, dtype=np.float64) ** 2, axis=0))
    frame = max(1, int(frame_s * sr))
    n = int(np.ceil(len(x) / frame))
    pad = np.zeros(n * frame)
    pad[: len(x)] = np.asarray(x, dtype=np.float64) ** 2
    rms = np.sqrt(pad.reshape(n, frame).mean(axis=1) + 1e-20)
    loud = 20 * np.log10(rms / (rms.max() or 1.0)) > -floor_db
    return np.repeat(loud, frame)[: len(x)]


def active_power(y: np.ndarray, sr: int, mask: np.ndarray | None = None) -> float:
    """Mean power (per channel, channels pooled) of y over the active mask of y (or the given mask)."""
    m = active_mask(y, sr) if mask is None else mask
    yy = np.asarray(y, dtype=np.float64)
    if yy.ndim == 1:
        return float(np.mean(yy[m] ** 2)) if m.any() else 0.0
    return float(np.mean(yy[:, m] ** 2)) if m.any() else 0.0


def snr_db(clean: np.ndarray, noise: np.ndarray, sr: int) -> float:
    """10 log10(active power of the clean signal / mean power of the noise)."""
    pn = float(np.mean(np.asarray(noise, dtype=np.float64) ** 2))
    return 10 * np.log10(active_power(clean, sr) / pn) if pn > 0 else np.inf


def with_noise(x: np.ndarray, snr_db: float | None, seed: int = 0, kind: str = "pink", sr: int = SR) -> np.ndarray:
    """x (mono or channels x samples) with `kind` noise added at `snr_db` dB under its active power, as float32;
    x unchanged (as float32) when `snr_db` is None. The same seed gives the same noise."""
    if snr_db is None:
        return np.asarray(x, dtype=np.float32)
    n = noise(kind, np.shape(x)[-1], np.random.default_rng(seed), sr)
    return (x + n * np.sqrt(active_power(x, sr) / 10 ** (snr_db / 10))).astype(np.float32)


def noise(kind: str, n: int, rng: np.random.Generator, sr: int = SR) -> np.ndarray:
    """Unit-RMS noise of n samples: 'white', 'pink' (1/f power) or 'babble' (six speech-band noise streams,
    each switched by a random syllable-rate envelope, summed: the fluctuating texture of a crowd with no
    intelligible words, so it never adds a talker or a word)."""
    if kind == "white":
        y = rng.standard_normal(n)
    elif kind in ("pink", "babble"):
        def pink() -> np.ndarray:
            spec = np.fft.rfft(rng.standard_normal(n))
            f = np.fft.rfftfreq(n, 1 / sr)
            spec[1:] /= np.sqrt(f[1:])
            spec[0] = 0
            return np.fft.irfft(spec, n)

        if kind == "pink":
            y = pink()
        else:
            from scipy.signal import butter, sosfilt

            sos = butter(4, [150, 3500], btype="bandpass", fs=sr, output="sos")
            t = np.arange(n) / sr
            y = np.zeros(n)
            for _ in range(6):
                rate = rng.uniform(3.0, 6.0)
                env = np.clip(np.sin(2 * np.pi * rate * t + rng.uniform(0, 2 * np.pi)), 0, None) ** 2
                slow = np.sin(2 * np.pi * rng.uniform(0.2, 0.6) * t + rng.uniform(0, 2 * np.pi)) > -0.3
                y += sosfilt(sos, pink()) * env * slow
    else:
        raise ValueError(f"unknown noise {kind!r} (white, pink, babble)")
    y = np.asarray(y, dtype=np.float64)
    return (y / (np.sqrt(np.mean(y ** 2)) or 1.0)).astype(np.float32)


def long_recording(out: str | Path, total_s: float, sentences: list[tuple[float, str]], sr: int = SR,
                   noise_dbfs: float = -45.0, beeps_every_s: float | None = 300.0, voice: str = "flite:slt",
                   seed: int = 0, block_s: float = 60.0) -> Path:
    """A long recording true by construction, written block by block (memory does not grow with its
    length): quiet pink-ish noise at `noise_dbfs` RMS throughout, a 0.5 s 880 Hz beep every `beeps_every_s`
    (distractors, never where a sentence is), and each (time s, text) sentence spoken there by `voice`.
    16-bit mono WAV at `sr` (another rate than 16 kHz exercises resampling)."""
    import soundfile as sf
    from scipy.signal import lfilter

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    placed: list[tuple[int, np.ndarray]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (at_s, text) in enumerate(sentences):
            y = audio_io.load(say(text, Path(tmp) / f"s{k}.wav", voice=voice), sr=sr, mono=True)
            placed.append((round(at_s * sr), 0.5 * y / max(float(np.max(np.abs(y))), 1e-9)))
    if beeps_every_s:
        beep = tone(880.0, 0.5, amplitude=0.2)
        beep = resample(beep, SR, sr) if sr != SR else beep
        for t in np.arange(beeps_every_s / 2, total_s, beeps_every_s):
            a = round(t * sr)
            if all(abs(a - s0) > 5 * sr and abs(a - (s0 + len(y))) > 5 * sr for s0, y in placed):
                placed.append((a, beep))
    rng = np.random.default_rng(seed)
    b_pink, a_pink = [0.049922035, -0.095993537, 0.050612699, -0.004408786], [1, -2.494956002, 2.017265875, -0.522189400]
    zi = np.zeros(3)
    gain = 10 ** (noise_dbfs / 20) / 0.09  # the filter's output RMS for unit white noise is about 0.09
    n_total, step = round(total_s * sr), round(block_s * sr)
    with sf.SoundFile(str(out), "w", samplerate=sr, channels=1, subtype="PCM_16", format="WAV") as f:
        for b0 in range(0, n_total, step):
            b1 = min(n_total, b0 + step)
            noise, zi = lfilter(b_pink, a_pink, rng.standard_normal(b1 - b0), zi=zi)
            block = gain * noise
            for s0, y in placed:
                lo, hi = max(b0, s0), min(b1, s0 + len(y))
                if lo < hi:
                    block[lo - b0 : hi - b0] += y[lo - s0 : hi - s0]
            f.write(np.clip(block, -1.0, 1.0).astype(np.float32))
    return out
