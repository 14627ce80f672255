"""The acoustic descriptors (audiomind/tools/descriptors/) on audio whose property is true by construction:
telephone band and muffling by filtering, reverberation by convolving with an exponential-decay impulse
response, echo by a delayed copy, clipping by overdrive, vibrato by frequency modulation, tremolo by amplitude
modulation, glides by chirps, pan trajectories by channel gains, silences and tempo trends by placement; each
also with noise added. The descriptors that read recognised words (word_loudness, spelled_letters,
speech_bursts) load Whisper and YAMNet and are marked slow."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, fftconvolve, sosfilt

from audiomind import audio as aio
from audiomind import synth
from audiomind.tools.descriptors.band import band_limits
from audiomind.tools.descriptors.clipping import clipping
from audiomind.tools.descriptors.modulation import pitch_modulation
from audiomind.tools.descriptors.room import room
from audiomind.tools.descriptors.stereo import pan_trajectory
from audiomind.tools.descriptors.timing import silence_map, tempo_trend

SR = synth.SR
NOISE = [None, 20.0]  # clean, and pink noise at 20 dB SNR (over the active part of the clean signal)


_noisy = synth.with_noise  # (x, snr dB or None for clean, seed, kind): noise over the active part


def _write(x: np.ndarray, path) -> str:
    x = np.asarray(x, dtype=np.float32)
    return str(aio.write_wav(path, x * (0.6 / max(float(np.max(np.abs(x))), 1e-9)), SR))


@pytest.fixture(scope="module")
def voice(audio_dir) -> np.ndarray:
    """A male flite voice (f0 ~100 Hz, energy up to 8 kHz), peak 0.5."""
    p = synth.say("The quick brown fox jumps over the lazy dog near the river bank today.", audio_dir / "d_fox.wav",
                  voice="flite:rms")
    y = aio.load(p, sr=SR)
    return (0.5 * y / np.max(np.abs(y))).astype(np.float32)


@pytest.fixture(scope="module")
def sentences(audio_dir) -> list[np.ndarray]:
    """Three sentences by three flite voices, their own leading and trailing silence trimmed, peak 0.5."""
    import librosa

    out = []
    for k, (text, v) in enumerate([("Please close the window before you leave.", "flite:slt"),
                                   ("The meeting starts at nine tomorrow.", "flite:awb"),
                                   ("Bring your own lunch on Friday.", "flite:rms")]):
        y = aio.load(synth.say(text, audio_dir / f"d_sent{k}.wav", voice=v), sr=SR)
        y, _ = librosa.effects.trim(y, top_db=40, frame_length=512, hop_length=128)  # silences only where placed
        out.append((0.5 * y / np.max(np.abs(y))).astype(np.float32))
    return out


# ---------------------------------------------------------------------------------------------- band limits

@pytest.mark.parametrize("snr", NOISE)
@pytest.mark.parametrize("kind,expected", [("full", "full"), ("telephone", "telephone"), ("muffled", "muffled")])
def test_band_limits_telephone_muffled_and_full_band_by_filtering(kind, expected, snr, voice, audio_dir, tool_runner):
    filters = {"full": None, "telephone": butter(6, [300, 3400], "bandpass", fs=SR, output="sos"),
               "muffled": butter(8, 1000, "lowpass", fs=SR, output="sos")}
    x = voice if filters[kind] is None else sosfilt(filters[kind], voice)
    out = tool_runner(band_limits, {}, _write(_noisy(x, snr), audio_dir / f"d_band_{kind}_{snr}.wav")).output
    assert out["label"] == expected, out
    if kind == "telephone":  # the edges read at 1/3-octave steps: within one band of 300 / 3400 Hz
        assert 125 <= out["low_edge_hz"] <= 400 and 2800 <= out["high_edge_hz"] <= 4500
    if kind == "muffled":
        assert out["high_edge_hz"] <= 1800


def test_band_limits_does_not_claim_full_band_when_white_noise_masks_the_highs(voice, audio_dir, tool_runner):
    """White noise at 20 dB SNR buries the voice above ~4 kHz: no band label that the noise cannot support."""
    x = _noisy(voice, 20.0, kind="white")
    out = tool_runner(band_limits, {}, _write(x, audio_dir / "d_band_white.wav")).output
    assert out["label"] in ("full", "band_limited")


# ---------------------------------------------------------------------------------------------- room

def _impulse_response(t60_s: float, seed: int = 1) -> np.ndarray:
    """A direct path plus exponentially decaying noise (60 dB down after t60_s), a synthetic room."""
    n = int(SR * t60_s * 1.2)
    t = np.arange(n) / SR
    h = 0.3 * np.random.default_rng(seed).standard_normal(n) * 10 ** (-3 * t / t60_s)
    h[0] = 1.0
    return h


@pytest.mark.parametrize("snr", [None, 25.0])
def test_room_dry_voice_is_dry_with_no_echo(snr, voice, audio_dir, tool_runner):
    out = tool_runner(room, {}, _write(_noisy(voice, snr), audio_dir / f"d_dry_{snr}.wav")).output
    assert out["label"] == "dry" and out["t60_s"] < 0.3 and not out["echoes"]


@pytest.mark.parametrize("snr", [None, 25.0])
@pytest.mark.parametrize("t60", [0.7, 1.2])
def test_room_reverberation_by_convolution_reads_its_decay_time(t60, snr, voice, audio_dir, tool_runner):
    x = fftconvolve(voice, _impulse_response(t60))
    out = tool_runner(room, {}, _write(_noisy(x, snr), audio_dir / f"d_rev_{t60}_{snr}.wav")).output
    assert out["label"] == "reverberant" and not out["echoes"]
    # a blind estimate: within 35% of the impulse response's T60 (the next word cuts long decays short)
    assert out["t60_s"] == pytest.approx(t60, rel=0.35)
    assert out["drr_db"] < 6.0  # a reverberant room: late energy close to the direct sound's


@pytest.mark.parametrize("snr", [None, 25.0])
@pytest.mark.parametrize("delay_s,gain", [(0.3, 0.6), (0.45, 0.5)])
def test_room_echo_by_delay_finds_the_delay(delay_s, gain, snr, voice, audio_dir, tool_runner):
    d = round(delay_s * SR)
    x = np.concatenate([voice, np.zeros(d)])
    x[d:] += gain * voice
    out = tool_runner(room, {}, _write(_noisy(x, snr), audio_dir / f"d_echo_{delay_s}_{snr}.wav")).output
    assert out["label"] == "echo"
    assert out["echoes"][0]["delay_s"] == pytest.approx(delay_s, abs=0.002)
    assert out["echoes"][0]["gain"] == pytest.approx(gain, abs=0.15)


# ---------------------------------------------------------------------------------------------- clipping

@pytest.mark.parametrize("snr", [None, 25.0])
@pytest.mark.parametrize("which,how", [(None, None), (1, "hard"), (2, "soft")])
def test_clipping_flags_only_the_overdriven_sentence(which, how, snr, sentences, audio_dir, tool_runner):
    gap = synth.silence(0.6)
    parts = [gap]
    for k, s in enumerate(sentences):
        if k == which:
            s = np.clip(8 * s, -0.9, 0.9) * 0.8 if how == "hard" else np.tanh(6 * s) * 0.7
        parts += [s, gap]
    x = _noisy(np.concatenate(parts), snr)
    path = aio.write_wav(audio_dir / f"d_clip_{which}_{how}_{snr}.wav", x, SR)  # levels kept as made
    out = tool_runner(clipping, {}, path).output
    assert len(out["segments"]) == 3
    assert [s["clipped"] for s in out["segments"]] == [k == which for k in range(3)]
    assert out["most_clipped"] == which
    if which is not None:
        seg = out["segments"][which]
        assert seg["crest_db"] < min(s["crest_db"] for k, s in enumerate(out["segments"]) if k != which)


def test_clipping_does_not_call_a_pure_tone_clipped(audio_dir, tool_runner):
    """A sine piles up near its peak like a clipped signal, but has no flat tops."""
    x = np.concatenate([synth.silence(0.3), synth.tone(440.0, 1.0, 0.5), synth.silence(0.3)])
    out = tool_runner(clipping, {}, aio.write_wav(audio_dir / "d_clip_tone.wav", x, SR)).output
    assert out["clipped"] is False


# ---------------------------------------------------------------------------------------------- stereo

@pytest.mark.parametrize("snr", [None, 20.0])
@pytest.mark.parametrize("path_,expected", [((-0.9, 0.9), "left_to_right"), ((0.9, -0.9), "right_to_left"),
                                           ((-0.7, -0.7), "steady_left"), ((0.0, 0.0), "steady_center"),
                                           ((0.6, 0.6), "steady_right")])
def test_pan_trajectory_by_channel_gains(path_, expected, snr, audio_dir, tool_runner):
    n = 4 * SR
    t = np.arange(n) / SR
    src = np.random.default_rng(3).standard_normal(n) * 0.2 * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    theta = (np.linspace(*path_, n) + 1) * np.pi / 4  # constant-power pan law, as synth.pan
    st = np.stack([np.cos(theta) * src, np.sin(theta) * src])
    if snr is not None:
        st = np.stack([_noisy(ch, snr, seed=k) for k, ch in enumerate(st)])
    path = aio.write_wav(audio_dir / f"d_pan_{expected}_{snr}.wav", st.astype(np.float32), SR)
    out = tool_runner(pan_trajectory, {}, path).output
    assert out["label"] == expected
    assert out["start_position"] == pytest.approx(path_[0] * 0.75, abs=0.3)  # quarter means of a linear sweep
    assert out["end_position"] == pytest.approx(path_[1] * 0.75, abs=0.3)


def test_pan_trajectory_of_a_mono_clip_says_mono(tone_clip, tool_runner):
    assert tool_runner(pan_trajectory, {}, tone_clip).output["label"] == "mono"


# ---------------------------------------------------------------------------------------------- modulation

def _held(kind: str, dur_s: float = 2.5) -> np.ndarray:
    t = np.arange(int(dur_s * SR)) / SR
    env = np.minimum(1, np.minimum(t / 0.05, (t[-1] - t) / 0.05))
    f = {"steady": 440 * np.ones_like(t), "vibrato": 440 * 2 ** (0.5 * np.sin(2 * np.pi * 5.5 * t) / 12),
         "vibrato_low": 220 * 2 ** (0.3 * np.sin(2 * np.pi * 6.5 * t) / 12), "tremolo": 440 * np.ones_like(t),
         "glide_up": 300 * 2 ** (t * 7 / 12 / dur_s), "glide_down": 600 * 2 ** (-t * 7 / 12 / dur_s)}[kind]
    y = 0.4 * np.sin(2 * np.pi * np.cumsum(f) / SR)
    if kind == "tremolo":
        y *= 1 - 0.25 * (1 + np.sin(2 * np.pi * 5 * t))
    return y * env


@pytest.mark.parametrize("snr", [None, 20.0])
@pytest.mark.parametrize("kind", ["steady", "vibrato", "vibrato_low", "tremolo", "glide_up", "glide_down"])
def test_pitch_modulation_by_construction(kind, snr, audio_dir, tool_runner):
    x = _noisy(_held(kind), snr, kind="white")
    out = tool_runner(pitch_modulation, {}, _write(x, audio_dir / f"d_mod_{kind}_{snr}.wav")).output
    assert out["label"] == kind.replace("_low", "")
    if kind == "vibrato":
        assert out["vibrato_rate_hz"] == pytest.approx(5.5, abs=0.3)
        assert out["vibrato_depth_st"] == pytest.approx(0.5, abs=0.15)  # YIN's 64 ms frames smooth it a little
    if kind.startswith("glide"):
        assert out["glide_semitones"] == pytest.approx(7 if kind == "glide_up" else -7, abs=0.7)
    if kind == "tremolo":
        assert out["tremolo_rate_hz"] == pytest.approx(5.0, abs=0.3)


# ---------------------------------------------------------------------------------------------- time structure

@pytest.mark.parametrize("snr", [None, 20.0])
@pytest.mark.parametrize("where,layout", [("middle", [(0, None), 2.0, (1, None)]),
                                          ("end", [(0, None), 0.4, (1, None), 3.0, (2, 0.6)]),
                                          ("beginning", [(2, 0.6), 3.0, (1, None), 0.4, (0, None)])])
def test_silence_map_places_the_longest_silence(where, layout, snr, sentences, audio_dir, tool_runner):
    """Sentences (or their first 0.6 s) and silences placed by construction; the longest silence's third of
    the clip is computed from the layout, not written by hand."""
    parts, t, longest = [], 0.0, None
    for item in layout:
        if isinstance(item, tuple):
            k, cut = item
            parts.append(sentences[k][: int(cut * SR)] if cut else sentences[k])
        else:
            parts.append(synth.silence(item))
            if longest is None or item > longest[1]:
                longest = (t, item)
        t += len(parts[-1]) / SR
    mid = (longest[0] + longest[1] / 2) / t
    assert where == ("beginning" if mid < 1 / 3 else "middle" if mid <= 2 / 3 else "end")  # the layout is right
    x = _noisy(np.concatenate(parts), snr)
    out = tool_runner(silence_map, {}, aio.write_wav(audio_dir / f"d_sil_{where}_{snr}.wav", x, SR)).output
    top = out["silences"][out["longest"]]
    assert top["where"] == where
    # 20 ms frames; a sentence's soft edges sink under the noise (up to 0.15 s)
    assert top["start_s"] == pytest.approx(longest[0], abs=0.15)
    assert top["length_s"] == pytest.approx(longest[1], abs=0.15)


def _clicks(intervals: list[float]) -> np.ndarray:
    times = np.concatenate([[0.3], 0.3 + np.cumsum(intervals)])
    x = np.zeros(int((times[-1] + 0.5) * SR), dtype=np.float32)
    click = synth.tone(1500.0, 0.03, 0.6)
    for t in times:
        a = int(t * SR)
        x[a:a + len(click)] += click[: len(x) - a]
    return x


@pytest.mark.parametrize("snr", [None, 20.0])
@pytest.mark.parametrize("kind,start,end", [("accelerating", 0.6, 0.3), ("decelerating", 0.3, 0.6),
                                            ("steady", 0.45, 0.45)])
@pytest.mark.parametrize("seed", [0, 5])
def test_tempo_trend_by_onset_spacing(kind, start, end, snr, seed, audio_dir, tool_runner):
    x = _noisy(_clicks(list(np.linspace(start, end, 16))), snr, seed=seed)
    out = tool_runner(tempo_trend, {}, aio.write_wav(audio_dir / f"d_tempo_{kind}_{snr}_{seed}.wav", x, SR)).output
    assert out["label"] == kind and out["onsets"] == 17
    assert out["start_bpm"] == pytest.approx(60 / start, rel=0.25) and out["end_bpm"] == pytest.approx(60 / end, rel=0.25)


def test_tempo_trend_of_a_drum_pattern_speeding_up(audio_dir, tool_runner):
    """Music-like material: the same drum pattern rendered at 90 then 120 BPM, back to back."""
    a = aio.load(synth.drum_pattern(90, 4.0, audio_dir / "d_drum90.wav"), sr=SR)
    b = aio.load(synth.drum_pattern(120, 4.0, audio_dir / "d_drum120.wav"), sr=SR)
    out = tool_runner(tempo_trend, {}, aio.write_wav(audio_dir / "d_drum_acc.wav", np.concatenate([a, b]), SR)).output
    assert out["label"] == "accelerating"


# ---------------------------------------------------------------------------------------------- word-level (slow)

@pytest.mark.slow
def test_word_loudness_finds_the_word_said_loudest(audio_dir, tool_runner):
    from audiomind.tools.descriptors.speech import word_loudness

    parts = []
    for w, g in [("apple", 0.12), ("river", 0.6), ("candle", 0.12)]:
        y = aio.load(synth.say(w, audio_dir / f"d_w_{w}.wav"), sr=SR)
        parts += [g * y / np.max(np.abs(y)), synth.silence(0.4)]
    x = _noisy(np.concatenate(parts), 25.0)
    out = tool_runner(word_loudness, {}, aio.write_wav(audio_dir / "d_loudword.wav", x, SR)).output
    top = out["words"][out["loudest"]]
    assert top["word"].strip(".,!?").lower() == "river"
    assert out["margin_db"] == pytest.approx(20 * np.log10(0.6 / 0.12), abs=4.0)


@pytest.mark.slow
@pytest.mark.parametrize("text,voice,word", [("My name is Kim, K, I, M.", "flite:slt", "kim"),
                                             ("Please spell the word house. H, O, U, S, E.", "espeak-ng:en-us", "house")])
def test_spelled_letters_joins_single_letters_into_the_word(text, voice, word, audio_dir, tool_runner):
    from audiomind.tools.descriptors.speech import spelled_letters

    out = tool_runner(spelled_letters, {}, synth.say(text, audio_dir / f"d_spell_{word}.wav", voice=voice)).output
    assert [r["word"] for r in out["runs"]] == [word]


@pytest.mark.slow
def test_spelled_letters_finds_none_in_ordinary_speech(sentences, audio_dir, tool_runner):
    from audiomind.tools.descriptors.speech import spelled_letters

    path = aio.write_wav(audio_dir / "d_nospell.wav", sentences[0], SR)
    assert tool_runner(spelled_letters, {}, path).output["runs"] == []


@pytest.mark.slow
def test_speech_bursts_finds_the_bell_between_sentences_and_the_words_after_it(audio_dir, helpers, tool_runner):
    from audiomind.tools.descriptors.speech import speech_bursts

    bell = helpers.freedesktop_sound("bell", audio_dir / "d_bell.wav")
    a = aio.load(synth.say("Good morning everyone.", audio_dir / "d_b1.wav"), sr=SR)
    b = aio.load(synth.say("The train to Boston is now boarding.", audio_dir / "d_b2.wav"), sr=SR)
    onset = len(a) / SR + 0.5
    x = np.concatenate([a, synth.silence(0.5), 0.5 * bell / np.max(np.abs(bell)), synth.silence(0.4), b])
    out = tool_runner(speech_bursts, {}, aio.write_wav(audio_dir / "d_bursts.wav", _noisy(x, 30.0), SR)).output
    assert len(out["bursts"]) == 1
    burst = out["bursts"][0]
    assert burst["start_s"] == pytest.approx(onset, abs=0.05)
    assert "boston" in burst["words_after"].lower() and "everyone" in burst["words_before"].lower()
    assert burst["labels"]  # tagged on an onset-aligned window
