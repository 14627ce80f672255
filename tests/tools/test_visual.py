"""visual_inspection tools: the PNG exists with the asked size, lives in the run's derived folder, is not
a derived audio artifact, states no claim, and draws what the audio holds by construction where the
reported plot box and axes say it is (a tone at its frequency row, beeps at their times)."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from audiomind import synth
from audiomind.tools import visual

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
BEEP_ONSETS = [0.5, 1.2, 1.9]  # synth.beeps(3): lead 0.5 s, beep 0.2 s, gap 0.5 s


def rgb(path: str) -> np.ndarray:
    import matplotlib.image as mpimg

    return mpimg.imread(path)[..., :3]  # (h, w, 3) floats in 0..1


def check_png(out: dict, tmp_path, width: int, height: int) -> np.ndarray:
    path = out["image_path"]
    assert path.startswith(str(tmp_path / "derived")) and path.endswith(".png")
    with open(path, "rb") as f:
        assert f.read(8) == PNG_MAGIC
    img = rgb(path)
    assert img.shape[:2] == (height, width)
    return img


@pytest.fixture(scope="session")
def tone1k(audio_dir, helpers):
    return helpers.write(synth.tone(1000.0, 2.0, amplitude=0.5), audio_dir / "tone1k.wav")


def test_spectrogram_png_draws_a_tone_at_its_frequency_row(tone1k, tool_runner, tmp_path):
    """The brightest row of the plot maps back (through plot_box_px and the mel axis) to 1 kHz within
    1.5 mel bands."""
    import librosa

    res = tool_runner(visual.spectrogram, {"n_mels": 64, "width_px": 800, "height_px": 400}, tone1k)
    out = res.output
    assert res.claims == [] and res.derived == []
    img = check_png(out, tmp_path, 800, 400)
    x0, y0, x1, y1 = out["plot_box_px"]
    plot = img[y0 + 2: y1 - 2, x0 + 2: x1 - 2].sum(axis=2)  # magma: brighter = louder
    row = int(np.argmax(plot.mean(axis=1))) + y0 + 2
    band = (y1 - row) / (y1 - y0) * 64 - 0.5  # fractional mel band index, band 0 at the bottom
    fax = out["frequency_axis"]
    centres = librosa.mel_frequencies(n_mels=64, fmin=fax["fmin_hz"], fmax=fax["fmax_hz"])
    f_est = float(np.interp(band, np.arange(64), centres))
    band_width_mel = float(np.diff(librosa.hz_to_mel(centres)).mean())
    assert abs(librosa.hz_to_mel(f_est) - librosa.hz_to_mel(1000.0)) <= 1.5 * band_width_mel
    assert out["time_axis_s"] == [0.0, 2.0] and fax["fmax_hz"] == 8000.0


def test_spectrogram_window_shows_the_beeps_at_their_times(beeps_clip, tool_runner, tmp_path):
    """A 0.3-2.5 s window: columns lit above the noise floor start at each beep onset within 0.07 s
    (16 ms hop, 64 ms window)."""
    res = tool_runner(visual.spectrogram, {"start_s": 0.3, "end_s": 2.5, "width_px": 1000}, beeps_clip)
    out = res.output
    img = check_png(out, tmp_path, 1000, 500)
    assert out["time_axis_s"] == [0.3, 2.5]
    x0, y0, x1, y1 = out["plot_box_px"]
    lit = img[y0 + 2: y1 - 2, x0: x1].sum(axis=2).max(axis=0) > 1.5
    starts = np.flatnonzero(np.diff(lit.astype(int)) == 1) + 1
    times = 0.3 + (starts + 0.5) / (x1 - x0) * 2.2
    assert len(times) == 3
    for t, truth in zip(times, BEEP_ONSETS):
        assert abs(t - truth) <= 0.07


def test_waveform_png_has_ink_exactly_where_the_beeps_are(beeps_clip, tool_runner, tmp_path):
    res = tool_runner(visual.waveform, {"width_px": 1240, "height_px": 300}, beeps_clip)
    out = res.output
    assert res.claims == [] and res.derived == []
    img = check_png(out, tmp_path, 1240, 300)
    (x0, y0, x1, y1), = out["plot_box_px"]
    t0, t1 = out["time_axis_s"]
    dark = img[y0 + 2: y1 - 2, x0 + 1: x1 - 1].sum(axis=2) < 1.5  # blue ink; grey zero line and white stay out
    extent = dark.sum(axis=0) / (y1 - y0 - 4)  # share of the panel height inked per column
    on = extent > 0.2  # beeps peak at 0.5: about half the panel
    starts = np.flatnonzero(np.diff(on.astype(int)) == 1) + 1
    ends = np.flatnonzero(np.diff(on.astype(int)) == -1) + 1
    px_s = (t1 - t0) / (x1 - x0 - 2)
    assert len(starts) == len(ends) == 3
    for s, e, truth in zip(starts, ends, BEEP_ONSETS):
        assert abs(t0 + s * px_s - truth) <= 3 * px_s + 0.01  # within a few pixels (10 ms fade-in)
        assert abs(t0 + e * px_s - (truth + 0.2)) <= 3 * px_s + 0.01
    assert 0.4 <= float(extent[on].max()) <= 0.6


def test_waveform_draws_one_panel_per_channel_with_their_levels(audio_dir, tool_runner, tmp_path):
    from audiomind import audio as aio

    y = np.stack([synth.tone(300, 1.0, 0.8), synth.tone(300, 1.0, 0.2)])
    path = aio.write_wav(audio_dir / "wave_stereo.wav", y, 16000)
    out = tool_runner(visual.waveform, {"width_px": 600, "height_px": 400}, path).output
    img = check_png(out, tmp_path, 600, 400)
    assert out["channels"] == 2 and len(out["plot_box_px"]) == 2
    heights = []
    for x0, y0, x1, y1 in out["plot_box_px"]:
        dark = img[y0 + 2: y1 - 2, x0 + 20: x1 - 20].sum(axis=2) < 1.5
        heights.append(dark.sum(axis=0).max() / (y1 - y0 - 4))
    assert heights[0] == pytest.approx(0.8, abs=0.06) and heights[1] == pytest.approx(0.2, abs=0.06)


def test_visual_arguments_and_windows_are_checked(beeps_clip, tool_runner):
    with pytest.raises(pydantic.ValidationError, match="end_s must be greater"):
        visual.SpectrogramArgs(start_s=2.0, end_s=1.0)
    with pytest.raises(pydantic.ValidationError, match="width_px"):
        visual.WaveformArgs(width_px=10)
    with pytest.raises(ValueError, match="past the end"):
        tool_runner(visual.waveform, {"start_s": 60.0}, beeps_clip)
