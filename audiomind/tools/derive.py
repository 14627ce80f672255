"""audio_derivation: transformations that write new audio (crop, gain, normalise, filter, resample,
channel split / mixdown, harmonic-percussive separation, denoising, Demucs source separation).

A derived clip is a new artifact with provenance (source artifact, operation, parameters), registered by
the executor. It is *not evidence by itself*: it only changes what a front end or a later tool hears.
So these tools make no claims; their output is metadata about the derived file (duration, rate,
channels, levels), which lets the planner check the transformation did what it asked for.

Every tool reads the source at its own sample rate and channel count and writes 16-bit PCM WAV at the
same rate and channel count, unless changing them is the point of the tool (resample, channel_split,
mixdown, separate's model rate is converted back).

Memory is bounded for long audio: crop reads only its window; gain, peak normalisation, resample,
channel_split and mixdown stream the file in BLOCK_S blocks (libsndfile formats; soxr's streaming
resampler), so an hour costs what a block costs. The tools that need the whole clip at once (filter's
zero-phase pass, loudness normalisation, hpss, denoise's floor estimate, separate), and the streaming ones
on a format libsndfile cannot read, refuse audio longer than MAX_WHOLE_CLIP_S with a message saying to crop
first.
"""

from __future__ import annotations

import math
import subprocess
import threading
from pathlib import Path
from typing import Literal

import numpy as np
import soundfile as sf
from pydantic import Field, model_validator

from audiomind import audio as audio_io
from audiomind import config
from audiomind.embedded import sessions
from audiomind.fsutil import atomic_path
from audiomind.tools.base import AudioInput, DerivedAudio, ToolArgs, ToolContext, ToolOutput, ToolResult

MIN_SAMPLES = 16  # a derived clip shorter than this is almost certainly a mistaken request
BLOCK_S = 30.0  # streamed tools read and write this much audio at a time
MAX_WHOLE_CLIP_S = 600.0  # a tool that holds the whole clip in memory takes at most this much audio


# ---- output models -----------------------------------------------------------------------------------
class DerivedClip(ToolOutput):
    """Metadata of a written clip (what the planner checks; never a claim about content)."""

    path: str = Field(description="the WAV file written")
    duration_s: float = Field(description="duration (s)")
    samples: int = Field(description="samples per channel")
    sample_rate: int = Field(description="sample rate (Hz)")
    channels: int = Field(description="number of channels")
    peak_dbfs: float | None = Field(description="sample peak (dBFS); None for digital silence")
    rms_dbfs: float | None = Field(description="RMS level (dBFS); None for digital silence")


class WrittenClip(DerivedClip):
    clipped_ratio: float = Field(description="share of samples beyond full scale, clipped on writing (0-1)")


class NormalizedClip(WrittenClip):
    lufs: float | None = Field(None, description="integrated loudness of the written clip (LUFS); mode=lufs only")


class ChannelClip(WrittenClip):
    channel: int = Field(description="source channel index (0 = left)")
    label: str = Field(description="left / right for stereo, ch<k> otherwise")


class HpssPart(WrittenClip):
    part: Literal["harmonic", "percussive"] = Field(description="which part this clip is")
    energy_share: float = Field(description="its energy as a share of the source's energy (0-1)")


class StemClip(WrittenClip):
    stem: str = Field(description="Demucs stem name (vocals, drums, bass, other, guitar, piano)")


class OneClipOutput(ToolOutput):
    """The output of a transformation that writes one clip (gain, filter, resample): that clip first."""

    derived: list[WrittenClip] = Field(description="the clip written")


class CropOutput(ToolOutput):
    derived: list[WrittenClip] = Field(description="the excerpt written")
    start_s: float = Field(description="excerpt start in the source (s, sample-exact)")
    end_s: float = Field(description="excerpt end in the source (s, sample-exact)")
    end_clamped: bool = Field(description="the requested end_s lay past the end and was clamped to it")


class GainOutput(OneClipOutput):
    gain_db: float = Field(description="gain applied (dB)")
    source_peak_dbfs: float | None = Field(description="sample peak of the source (dBFS); None when silent")


class NormalizeOutput(ToolOutput):
    mode: Literal["peak", "lufs"] = Field(description="what was normalised")
    source_peak_dbfs: float | None = Field(description="sample peak of the source (dBFS)")
    source_lufs: float | None = Field(None, description="integrated loudness of the source (LUFS); mode=lufs only")
    applied_gain_db: float = Field(description="the one gain applied to the whole clip (dB)")
    derived: list[NormalizedClip] = Field(description="the clip written")


class FilterOutput(OneClipOutput):
    kind: Literal["highpass", "lowpass", "bandpass", "bandstop"] = Field(description="filter type")
    edges_hz: list[float] = Field(description="band edge(s) (Hz)")
    design: str = Field(description="filter design")


class ResampleOutput(OneClipOutput):
    source_rate: int = Field(description="source sample rate (Hz)")
    target_rate: int = Field(description="new sample rate (Hz)")


class ChannelSplitOutput(ToolOutput):
    derived: list[ChannelClip] = Field(description="one mono clip per extracted channel")
    source_channels: int = Field(description="channels of the source")


class MixdownOutput(ToolOutput):
    derived: list[WrittenClip] = Field(description="the mono clip written")
    source_channels: int = Field(description="channels of the source")
    already_mono: bool = Field(description="the source had one channel")


class HpssOutput(ToolOutput):
    derived: list[HpssPart] = Field(description="the harmonic and percussive clips")
    n_fft: int = Field(description="STFT size used")


class DenoiseOutput(ToolOutput):
    derived: list[DerivedClip] = Field(description="the denoised clip written")
    filter: str = Field(description="the FFmpeg afftdn filter string applied")
    noise_floor_db: float = Field(description="afftdn noise floor used (dBFS)")
    noise_floor_estimated: bool = Field(description="the floor was estimated from the clip (not given)")
    source_rms_dbfs: float | None = Field(description="RMS level of the source (dBFS)")


class SeparateOutput(ToolOutput):
    derived: list[StemClip] = Field(description="one clip per stem written")
    model: str = Field(description="Demucs model used")
    device: str = Field(description="cpu or cuda")
    model_sources: list[str] = Field(description="every stem the model separates")


# ---- shared helpers -----------------------------------------------------------------------------------
def _source(ctx: ToolContext, artifact_id: str, tool: str = "", *, capped: bool = True
            ) -> tuple[AudioInput, np.ndarray, int]:
    """(input, samples as (channels, n) float32 at the artifact's own rate, that rate). The whole clip is
    decoded, so (when `capped`) audio longer than MAX_WHOLE_CLIP_S is refused first."""
    a = ctx.audio(artifact_id)
    if capped:
        _check_whole(a, artifact_id, tool)
    sr = int(a.artifact.sample_rate)
    y = a.samples(sr=sr, mono=False)
    if y.ndim == 1:
        y = y[None, :]
    return a, y, sr


def _check_whole(a: AudioInput, artifact_id: str, tool: str) -> None:
    duration = float(a.artifact.duration_s or 0.0)
    if duration > MAX_WHOLE_CLIP_S:
        raise ValueError(f"{tool or 'this tool'} holds the whole clip in memory and takes at most "
                         f"{MAX_WHOLE_CLIP_S:g} s of audio; {artifact_id} is {duration:,.1f} s long: crop the "
                         "stretch of interest first (crop reads only its window)")


def _streamable(a: AudioInput) -> bool:
    """libsndfile reads the file at the artifact's own rate: it can be streamed block by block."""
    return _sndfile_frames(a.path, int(a.artifact.sample_rate)) is not None


def _blocks(path: str, sr: int):
    """(channels, n) float32 blocks of BLOCK_S seconds, NaN/Inf zeroed as at ingest."""
    for block in sf.blocks(path, blocksize=max(1, int(BLOCK_S * sr)), dtype="float32", always_2d=True):
        yield audio_io.finite(block.T)


class _StreamWriter:
    """Writes (channels, n) blocks as 16-bit WAV (atomically) and measures what `_describe` reports."""

    def __init__(self, path: Path, sr: int, channels: int):
        self.path, self.sr, self.channels = path, sr, channels
        self.n = 0
        self.peak = 0.0
        self.sumsq = 0.0
        self.clipped = 0

    def __enter__(self):
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        self._file = sf.SoundFile(str(tmp), "w", samplerate=self.sr, channels=self.channels, subtype="PCM_16",
                                  format="WAV")
        return self

    def write(self, y: np.ndarray) -> None:
        y = y if y.ndim == 2 else y[None, :]
        if not y.size:
            return
        self.clipped += int(np.count_nonzero(np.abs(y) > 1.0))
        z = np.clip(y, -1.0, 1.0)
        self.peak = max(self.peak, float(np.max(np.abs(z))))
        self.sumsq += float(np.sum(np.square(z, dtype=np.float64)))
        self.n += y.shape[1]
        self._file.write(z.T)

    def __exit__(self, *exc) -> bool | None:
        self._file.close()
        if exc[0] is None and self.n < MIN_SAMPLES:
            exc = (ValueError, ValueError(f"would produce only {self.n} samples; nothing to write"), None)
            self._atomic.__exit__(*exc)
            raise exc[1]
        return self._atomic.__exit__(*exc)

    def meta(self) -> dict:
        total = self.n * self.channels
        return {"path": str(self.path), "duration_s": round(self.n / self.sr, 6), "samples": int(self.n),
                "sample_rate": int(self.sr), "channels": int(self.channels), "peak_dbfs": _dbfs(self.peak),
                "rms_dbfs": _dbfs(float(np.sqrt(self.sumsq / total)) if total else 0.0),
                "clipped_ratio": round(self.clipped / total, 6) if total else 0.0}


def _stream(ctx: ToolContext, a: AudioInput, source_id: str, stem: str, sr_out: int, channels_out: int,
            operation: str, parameters: dict, blocks) -> tuple[DerivedAudio, dict]:
    """Write the blocks `blocks` yields as a derived clip (bounded memory); the record and its metadata."""
    path = ctx.new_derived_path(f"{source_id}_{stem}")
    with _StreamWriter(path, sr_out, channels_out) as w:
        for block in blocks:
            w.write(block)
    return DerivedAudio(path=str(path), operation=operation, parameters=parameters, source_artifact=source_id), w.meta()


def _stream_peak(a: AudioInput) -> float:
    return max((float(np.max(np.abs(b))) for b in _blocks(a.path, int(a.artifact.sample_rate)) if b.size),
               default=0.0)


def _dbfs(x: float) -> float | None:
    return round(20 * math.log10(x), 2) if x > 0 else None


def _describe(path: Path, y: np.ndarray, sr: int) -> dict:
    """Metadata of a written clip (what the planner checks; never a claim about content)."""
    y2 = y if y.ndim == 2 else y[None, :]
    peak = float(np.max(np.abs(y2))) if y2.size else 0.0
    rms = float(np.sqrt(np.mean(np.square(y2, dtype=np.float64)))) if y2.size else 0.0
    return {
        "path": str(path),
        "duration_s": round(y2.shape[1] / sr, 6),
        "samples": int(y2.shape[1]),
        "sample_rate": int(sr),
        "channels": int(y2.shape[0]),
        "peak_dbfs": _dbfs(min(peak, 1.0)),
        "rms_dbfs": _dbfs(rms),
    }


def _emit(ctx: ToolContext, source_id: str, stem: str, y: np.ndarray, sr: int, operation: str,
          parameters: dict) -> tuple[DerivedAudio, dict]:
    """Write `y` ((channels, n) or (n,)) as WAV under the run's derived folder; returns the registration
    record and its metadata."""
    if y.shape[-1] < MIN_SAMPLES:
        raise ValueError(f"{operation} would produce only {y.shape[-1]} samples; nothing to write")
    clipped = float(np.mean(np.abs(y) > 1.0))
    path = ctx.new_derived_path(f"{source_id}_{stem}")
    audio_io.write_wav(path, np.asarray(y, dtype=np.float32), sr)
    meta = _describe(path, np.clip(y, -1.0, 1.0), sr)
    meta["clipped_ratio"] = round(clipped, 6)
    return DerivedAudio(path=str(path), operation=operation, parameters=parameters, source_artifact=source_id), meta


def _params(args: ToolArgs, **extra) -> dict:
    out = args.model_dump(mode="json", exclude={"artifact"})
    out.update(extra)
    return out


# ---- crop ----------------------------------------------------------------------------------------------
class CropArgs(ToolArgs):
    start_s: float = Field(0.0, ge=0.0, description="start of the excerpt in seconds")
    end_s: float | None = Field(None, gt=0.0, description="end of the excerpt in seconds (None = end of clip); "
                                                          "values past the end are clamped to it")

    @model_validator(mode="after")
    def _ordered(self) -> CropArgs:
        if self.end_s is not None and self.end_s <= self.start_s:
            raise ValueError("end_s must be greater than start_s")
        return self


def _sndfile_frames(path: str, sr: int) -> int | None:
    """Frame count when libsndfile reads the file at rate `sr` (then a crop reads only its window, no full
    decode of long audio); None when the file needs the FFmpeg path."""
    try:
        info = sf.info(path)
    except RuntimeError:  # not a libsndfile format (soundfile.LibsndfileError)
        return None
    return int(info.frames) if info.samplerate == sr else None


def crop(args: CropArgs, ctx: ToolContext) -> ToolResult:
    """Sample-exact excerpt [start_s, end_s): the derived duration is end_s - start_s to one sample."""
    a = ctx.audio(args.artifact)
    sr = int(a.artifact.sample_rate)
    n = _sndfile_frames(a.path, sr)
    full = None
    if n is None:
        _, full, sr = _source(ctx, args.artifact, "crop", capped=False)  # (a format libsndfile cannot read)
        n = full.shape[1]
    total = n / sr
    if args.start_s >= total:
        raise ValueError(f"start_s {args.start_s:g} s is at or past the end of {args.artifact} ({total:.3f} s)")
    end = total if args.end_s is None else min(args.end_s, total)
    i0, i1 = round(args.start_s * sr), min(n, round(end * sr))
    if full is None:
        y = audio_io.finite(sf.read(a.path, start=i0, stop=i1, dtype="float32", always_2d=True)[0].T)
    else:
        y = full[:, i0:i1]
    derived, meta = _emit(ctx, args.artifact, "crop", y, sr, "crop",
                          {"start_s": round(i0 / sr, 6), "end_s": round(i1 / sr, 6)})
    out = {"derived": [meta], "start_s": round(i0 / sr, 6), "end_s": round(i1 / sr, 6),
           "end_clamped": args.end_s is not None and args.end_s > total + 0.5 / sr}
    return ToolResult(output=out, derived=[derived])


# ---- gain / normalise ------------------------------------------------------------------------------------
class GainArgs(ToolArgs):
    gain_db: float = Field(..., ge=-60.0, le=40.0, description="gain to apply in dB (negative = quieter)")


def gain(args: GainArgs, ctx: ToolContext) -> ToolResult:
    """Multiply by 10^(gain_db/20). Samples pushed past full scale are clipped, and the share is reported."""
    a = ctx.audio(args.artifact)
    if _streamable(a):
        sr, g = int(a.artifact.sample_rate), np.float32(10 ** (args.gain_db / 20))
        peak = [0.0]

        def scaled():
            for b in _blocks(a.path, sr):
                peak[0] = max(peak[0], float(np.max(np.abs(b))) if b.size else 0.0)
                yield b * g

        derived, meta = _stream(ctx, a, args.artifact, f"gain{args.gain_db:+g}dB", sr, int(a.artifact.channels),
                                "gain", _params(args), scaled())
        return ToolResult(output={"derived": [meta], "gain_db": args.gain_db, "source_peak_dbfs": _dbfs(peak[0])},
                          derived=[derived])
    _, y, sr = _source(ctx, args.artifact, "gain")
    z = y * np.float32(10 ** (args.gain_db / 20))
    derived, meta = _emit(ctx, args.artifact, f"gain{args.gain_db:+g}dB", z, sr, "gain", _params(args))
    return ToolResult(output={"derived": [meta], "gain_db": args.gain_db,
                              "source_peak_dbfs": _dbfs(float(np.max(np.abs(y))))}, derived=[derived])


class NormalizeArgs(ToolArgs):
    mode: Literal["peak", "lufs"] = Field("peak", description="peak: scale the sample peak to target_peak_dbfs; "
                                                               "lufs: scale integrated loudness to target_lufs")
    target_peak_dbfs: float = Field(-1.0, ge=-60.0, le=0.0, description="peak target (mode=peak)")
    target_lufs: float = Field(-23.0, ge=-70.0, le=-5.0, description="loudness target, ITU-R BS.1770 (mode=lufs); "
                                                                     "-23 is EBU R 128")


def integrated_lufs(y: np.ndarray, sr: int) -> float:
    """BS.1770 integrated loudness of (channels, n) audio (more than five channels: of the downmix)."""
    import pyloudnorm as pyln

    x = y.T.astype(np.float64) if 1 <= y.shape[0] <= 5 else y.mean(axis=0)[:, None].astype(np.float64)
    if len(x) < int(0.4 * sr) + 1:  # gating needs at least one 400 ms block
        x = np.concatenate([x, np.zeros((int(0.4 * sr) + 1 - len(x), x.shape[1]))])
    return float(pyln.Meter(sr).integrated_loudness(x))


def normalize(args: NormalizeArgs, ctx: ToolContext) -> ToolResult:
    """One gain for the whole clip (no compression), chosen to hit a peak or loudness target."""
    a = ctx.audio(args.artifact)
    if args.mode == "peak" and _streamable(a):  # two streamed passes: the peak, then the scaled copy
        sr = int(a.artifact.sample_rate)
        peak = _stream_peak(a)
        if peak <= 0:
            raise ValueError(f"{args.artifact} is digitally silent; there is no level to normalise")
        g_db = args.target_peak_dbfs - 20 * math.log10(peak)
        g = np.float32(10 ** (g_db / 20))
        derived, meta = _stream(ctx, a, args.artifact, "norm_peak", sr, int(a.artifact.channels), "normalize",
                                _params(args, applied_gain_db=round(g_db, 3)), (b * g for b in _blocks(a.path, sr)))
        return ToolResult(output={"mode": "peak", "source_peak_dbfs": _dbfs(peak), "applied_gain_db": round(g_db, 3),
                                  "derived": [meta]}, derived=[derived])
    _, y, sr = _source(ctx, args.artifact, f"normalize (mode={args.mode})")
    peak = float(np.max(np.abs(y)))
    if peak <= 0:
        raise ValueError(f"{args.artifact} is digitally silent; there is no level to normalise")
    out: dict = {"mode": args.mode, "source_peak_dbfs": _dbfs(peak)}
    if args.mode == "peak":
        g_db = args.target_peak_dbfs - 20 * math.log10(peak)
    else:
        before = integrated_lufs(y, sr)
        if not math.isfinite(before):
            raise ValueError(f"{args.artifact} is below the -70 LUFS gate; loudness normalisation is undefined")
        g_db = args.target_lufs - before
        out["source_lufs"] = round(before, 2)
    z = y * np.float32(10 ** (g_db / 20))
    derived, meta = _emit(ctx, args.artifact, f"norm_{args.mode}", z, sr, "normalize",
                          _params(args, applied_gain_db=round(g_db, 3)))
    if args.mode == "lufs":
        meta["lufs"] = round(integrated_lufs(np.clip(z, -1, 1), sr), 2)
    out.update({"applied_gain_db": round(g_db, 3), "derived": [meta]})
    return ToolResult(output=out, derived=[derived])


# ---- filters ---------------------------------------------------------------------------------------------
class FilterArgs(ToolArgs):
    kind: Literal["highpass", "lowpass", "bandpass", "bandstop"] = Field(
        ..., description="highpass keeps what is above low_hz; lowpass keeps what is below high_hz; bandpass "
                         "keeps low_hz..high_hz; bandstop removes low_hz..high_hz")
    low_hz: float | None = Field(None, gt=0.0, le=96000.0, description="lower edge (highpass/bandpass/bandstop)")
    high_hz: float | None = Field(None, gt=0.0, le=96000.0, description="upper edge (lowpass/bandpass/bandstop)")
    order: int = Field(4, ge=1, le=10, description="Butterworth order per pass (applied forward and backward: "
                                                   "zero phase, twice the attenuation in dB)")

    @model_validator(mode="after")
    def _edges(self) -> FilterArgs:
        need = {"highpass": ("low_hz",), "lowpass": ("high_hz",)}.get(self.kind, ("low_hz", "high_hz"))
        missing = [f for f in need if getattr(self, f) is None]
        if missing:
            raise ValueError(f"kind={self.kind} needs {' and '.join(missing)}")
        if len(need) == 2 and self.low_hz >= self.high_hz:  # type: ignore[operator]
            raise ValueError("low_hz must be below high_hz")
        return self


def filter_audio(args: FilterArgs, ctx: ToolContext) -> ToolResult:
    """Zero-phase Butterworth filter (scipy butter + sosfiltfilt), so event times do not shift."""
    from scipy import signal

    _, y, sr = _source(ctx, args.artifact, "filter (zero-phase)")
    nyq = sr / 2
    edges = {"highpass": [args.low_hz], "lowpass": [args.high_hz]}.get(args.kind, [args.low_hz, args.high_hz])
    if any(e >= nyq for e in edges):  # type: ignore[operator]
        raise ValueError(f"filter edge(s) {edges} Hz must be below the Nyquist frequency {nyq:g} Hz of {args.artifact}")
    btype = {"highpass": "highpass", "lowpass": "lowpass", "bandpass": "bandpass", "bandstop": "bandstop"}[args.kind]
    sos = signal.butter(args.order, edges[0] if len(edges) == 1 else edges, btype=btype, fs=sr, output="sos")
    padlen = min(3 * (2 * len(sos) + 1), y.shape[1] - 1)
    z = signal.sosfiltfilt(sos, y.astype(np.float64), axis=-1, padlen=padlen).astype(np.float32)
    derived, meta = _emit(ctx, args.artifact, args.kind, z, sr, "filter", _params(args))
    return ToolResult(output={"derived": [meta], "kind": args.kind, "edges_hz": edges,
                              "design": f"Butterworth order {args.order}, zero-phase (sosfiltfilt)"},
                      derived=[derived])


# ---- resample --------------------------------------------------------------------------------------------
class ResampleArgs(ToolArgs):
    target_rate: int = Field(..., ge=8000, le=192000, description="new sample rate in Hz")


def resample(args: ResampleArgs, ctx: ToolContext) -> ToolResult:
    """High-quality resampling (soxr HQ); the derived file has exactly target_rate and the same duration
    (to one output sample)."""
    import soxr

    a = ctx.audio(args.artifact)
    if _streamable(a):
        sr, ch = int(a.artifact.sample_rate), int(a.artifact.channels)

        def converted():
            if sr == args.target_rate:
                yield from _blocks(a.path, sr)
                return
            stream = soxr.ResampleStream(sr, args.target_rate, ch, dtype="float32", quality="HQ")
            for b in _blocks(a.path, sr):
                yield stream.resample_chunk(np.ascontiguousarray(b.T), last=False).T
            yield stream.resample_chunk(np.zeros((0, ch), dtype=np.float32), last=True).T

        derived, meta = _stream(ctx, a, args.artifact, f"{args.target_rate}Hz", args.target_rate, ch, "resample",
                                _params(args, source_rate=sr), converted())
        return ToolResult(output={"derived": [meta], "source_rate": sr, "target_rate": args.target_rate},
                          derived=[derived])
    _, y, sr = _source(ctx, args.artifact, "resample")
    z = y if sr == args.target_rate else soxr.resample(y.T, sr, args.target_rate, quality="HQ").T
    derived, meta = _emit(ctx, args.artifact, f"{args.target_rate}Hz", z, args.target_rate, "resample",
                          _params(args, source_rate=sr))
    return ToolResult(output={"derived": [meta], "source_rate": sr, "target_rate": args.target_rate},
                      derived=[derived])


# ---- channels --------------------------------------------------------------------------------------------
def _channel_label(k: int, n: int) -> str:
    return ("left", "right")[k] if n == 2 else f"ch{k}"


class ChannelSplitArgs(ToolArgs):
    channels: list[int] | None = Field(None, description="channel indices to extract (0 = left); None = all",
                                       max_length=32)


def _wanted_channels(args: ChannelSplitArgs, n: int) -> list[int]:
    if n < 2:
        raise ValueError(f"{args.artifact} is mono (1 channel); there are no channels to split")
    wanted = list(range(n)) if args.channels is None else list(dict.fromkeys(args.channels))
    bad = [k for k in wanted if not 0 <= k < n]
    if bad:
        raise ValueError(f"channel index {bad} out of range: {args.artifact} has {n} channels (0..{n - 1})")
    return wanted


def channel_split(args: ChannelSplitArgs, ctx: ToolContext) -> ToolResult:
    """One mono artifact per channel, e.g. to ask what is on the left and what is on the right."""
    a = ctx.audio(args.artifact)
    if _streamable(a):  # one streamed pass per channel
        sr, n = int(a.artifact.sample_rate), int(a.artifact.channels)
        wanted = _wanted_channels(args, n)
        derived, metas = [], []
        for k in wanted:
            label = _channel_label(k, n)
            d, meta = _stream(ctx, a, args.artifact, label, sr, 1, "channel_split", {"channel": k, "label": label},
                              (b[k:k + 1] for b in _blocks(a.path, sr)))
            meta["channel"], meta["label"] = k, label
            derived.append(d)
            metas.append(meta)
        return ToolResult(output={"derived": metas, "source_channels": n}, derived=derived)
    _, y, sr = _source(ctx, args.artifact, "channel_split")
    n = y.shape[0]
    wanted = _wanted_channels(args, n)
    derived, metas = [], []
    for k in wanted:
        label = _channel_label(k, n)
        d, meta = _emit(ctx, args.artifact, label, y[k], sr, "channel_split", {"channel": k, "label": label})
        meta["channel"], meta["label"] = k, label
        derived.append(d)
        metas.append(meta)
    return ToolResult(output={"derived": metas, "source_channels": n}, derived=derived)


class MixdownArgs(ToolArgs):
    mode: Literal["mid", "side"] = Field("mid", description="mid: mean of all channels (mono mixdown); side: "
                                                            "(left - right) / 2, what differs between the two "
                                                            "channels of a stereo clip")


def mixdown(args: MixdownArgs, ctx: ToolContext) -> ToolResult:
    """Mono mixdown (mean of the channels) or the stereo side signal."""
    a = ctx.audio(args.artifact)
    if _streamable(a):
        sr, n = int(a.artifact.sample_rate), int(a.artifact.channels)
        if args.mode == "side" and n != 2:
            raise ValueError(f"mode=side needs a stereo artifact; {args.artifact} has {n} channel(s)")
        mix = ((lambda b: (b[0] - b[1]) / 2) if args.mode == "side" else (lambda b: b.mean(axis=0)))
        derived, meta = _stream(ctx, a, args.artifact, f"mix_{args.mode}", sr, 1, "mixdown",
                                _params(args, source_channels=n), (mix(b) for b in _blocks(a.path, sr)))
        return ToolResult(output={"derived": [meta], "source_channels": n, "already_mono": n == 1},
                          derived=[derived])
    _, y, sr = _source(ctx, args.artifact, "mixdown")
    n = y.shape[0]
    if args.mode == "side":
        if n != 2:
            raise ValueError(f"mode=side needs a stereo artifact; {args.artifact} has {n} channel(s)")
        z = (y[0] - y[1]) / 2
    else:
        z = y.mean(axis=0)
    derived, meta = _emit(ctx, args.artifact, f"mix_{args.mode}", z, sr, "mixdown", _params(args, source_channels=n))
    return ToolResult(output={"derived": [meta], "source_channels": n, "already_mono": n == 1},
                      derived=[derived])


# ---- harmonic / percussive ------------------------------------------------------------------------------
class HpssArgs(ToolArgs):
    margin: float = Field(1.0, ge=1.0, le=16.0, description="separation margin (librosa); above 1 leaves a "
                                                              "residual out of both parts for cleaner stems")
    kernel_size: int = Field(31, ge=3, le=255, description="median filter length in STFT frames/bins")


def hpss(args: HpssArgs, ctx: ToolContext) -> ToolResult:
    """Median-filtering harmonic/percussive separation (librosa.effects.hpss): two artifacts, sustained
    tones and transients (drums, clicks, knocks)."""
    import librosa

    _, y, sr = _source(ctx, args.artifact, "hpss")
    n_fft = 2048 if sr > 24000 else 1024
    S = librosa.stft(y, n_fft=n_fft)
    H, P = librosa.decompose.hpss(S, kernel_size=args.kernel_size, margin=args.margin)
    length = y.shape[1]
    parts = {"harmonic": librosa.istft(H, n_fft=n_fft, length=length),
             "percussive": librosa.istft(P, n_fft=n_fft, length=length)}
    total = float(np.sum(np.square(y, dtype=np.float64))) or 1.0
    derived, metas = [], []
    for name, z in parts.items():
        d, meta = _emit(ctx, args.artifact, name, z.astype(np.float32), sr, "hpss", _params(args, part=name))
        meta["part"] = name
        meta["energy_share"] = round(float(np.sum(np.square(z, dtype=np.float64))) / total, 4)
        derived.append(d)
        metas.append(meta)
    return ToolResult(output={"derived": metas, "n_fft": n_fft}, derived=derived)


# ---- denoise (ffmpeg afftdn) ----------------------------------------------------------------------------
class DenoiseArgs(ToolArgs):
    noise_reduction_db: float = Field(12.0, ge=0.01, le=97.0, description="afftdn nr: how much to reduce noise (dB)")
    noise_floor_db: float | None = Field(None, ge=-80.0, le=-20.0,
                                         description="afftdn nf: noise floor (dBFS); None = estimated from the "
                                                     "quietest 50 ms frames of the clip")
    track_noise: bool = Field(False, description="afftdn tn: adapt the floor while running (FFmpeg 5's tracker "
                                                 "barely reduces steady noise; off by default)")


NOISE_MARGIN_DB = 6.0  # afftdn removes the full nr when nf sits a few dB above the measured frame level


def estimate_noise_floor_db(y: np.ndarray, sr: int) -> float:
    """10th percentile of 50 ms frame RMS levels (digital silence left out) plus NOISE_MARGIN_DB, clamped
    to afftdn's nf range. Pauses between sounds set it; a clip without pauses gets a higher floor."""
    x = y.mean(axis=0) if y.ndim == 2 else y
    frame = max(1, int(0.05 * sr))
    n = len(x) // frame
    if n == 0:
        return -50.0
    rms = np.sqrt(np.mean(np.square(x[: n * frame].reshape(n, frame), dtype=np.float64), axis=1))
    level = 20 * np.log10(rms[rms > 10 ** (-90 / 20)]) if np.any(rms > 10 ** (-90 / 20)) else np.array([-90.0])
    return float(np.clip(np.percentile(level, 10) + NOISE_MARGIN_DB, -80.0, -20.0))


def denoise(args: DenoiseArgs, ctx: ToolContext) -> ToolResult:
    """FFmpeg's FFT denoiser (afftdn) on the source file, same rate and channels, 16-bit WAV out."""
    a = ctx.audio(args.artifact)
    sr, ch = int(a.artifact.sample_rate), int(a.artifact.channels)
    _check_whole(a, args.artifact, "denoise")
    y = a.samples(sr=sr, mono=False)
    estimated = args.noise_floor_db is None
    nf = estimate_noise_floor_db(y, sr) if estimated else float(args.noise_floor_db)  # type: ignore[arg-type]
    path = ctx.new_derived_path(f"{args.artifact}_denoise")
    filt = f"afftdn=nr={args.noise_reduction_db:g}:nf={nf:.1f}:tn={1 if args.track_noise else 0}"
    cmd = [audio_io.ffmpeg_binary(), "-v", "error", "-nostdin", "-y", "-i", a.path, "-af", filt,
           "-ar", str(sr), "-ac", str(ch), "-c:a", "pcm_s16le", "-f", "wav", str(path)]
    proc = subprocess.run(cmd, capture_output=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg afftdn failed: {proc.stderr.decode(errors='replace').strip()[:300]}")
    z = audio_io.load(path, sr=sr, mono=False)
    meta = _describe(path, z if z.ndim == 2 else z[None, :], sr)
    src_rms = float(np.sqrt(np.mean(np.square(y, dtype=np.float64))))
    derived = DerivedAudio(path=str(path), operation="denoise",
                           parameters=_params(args, noise_floor_db=round(nf, 1), filter=filt),
                           source_artifact=args.artifact)
    return ToolResult(output={"derived": [meta], "filter": filt, "noise_floor_db": round(nf, 1),
                              "noise_floor_estimated": estimated, "source_rms_dbfs": _dbfs(src_rms)},
                      derived=[derived])


# ---- Demucs source separation (optional; needs the demucs package and its weights) -----------------------
DEMUCS_REPO_ENV = config.env_name("demucs_repo")  # a local folder of Demucs weights (no hub download offline)
Stem = Literal["vocals", "drums", "bass", "other", "guitar", "piano"]


class SeparateArgs(ToolArgs):
    model: Literal["htdemucs", "htdemucs_ft", "htdemucs_6s", "hdemucs_mmi", "mdx_extra", "mdx_extra_q"] = Field(
        "htdemucs", description="pretrained Demucs model (htdemucs_6s adds guitar and piano)")
    stems: list[Stem] | None = Field(None, description="stems to write (None = every stem of the model)",
                                     max_length=6)
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto uses a GPU when one is visible "
                                                                       "(CPU works, several times slower)")
    shifts: int = Field(1, ge=0, le=10, description="random-shift test-time augmentation passes")
    overlap: float = Field(0.25, ge=0.0, le=0.9, description="overlap between separation segments")


_demucs_lock = threading.Lock()


def _load_demucs(name: str, device: str, repo: Path | None = None):
    from demucs.pretrained import get_model

    repo = repo if repo is not None else config.settings().demucs_repo
    try:
        model = get_model(name, repo=repo)
    except Exception as exc:
        where = f"local repo {repo}" if repo else "the Demucs download site (needs network)"
        raise RuntimeError(f"Demucs model {name!r} could not be loaded from {where}: {exc}; set "
                           f"{DEMUCS_REPO_ENV} to a folder holding its weights") from exc
    model.to(device)
    model.eval()
    return model


def _demucs_model(name: str, device: str):
    """A pretrained Demucs model, loaded once per process (from the setting `demucs_repo`, env
    AUDIOMIND_DEMUCS_REPO, when set); the two
    most recently used stay loaded."""
    return sessions.get(f"demucs:{name}:{device}", lambda: _load_demucs(name, device), keep=2)


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device=cuda was asked for but no GPU is visible")
    return device


def separate(args: SeparateArgs, ctx: ToolContext) -> ToolResult:
    """Demucs music source separation: one artifact per stem, at the source's rate and channel count."""
    import soxr
    import torch
    from demucs.apply import apply_model

    device = _resolve_device(args.device)
    _, y, sr = _source(ctx, args.artifact, "separate")
    with _demucs_lock:  # one separation at a time: the model is large and GPU memory is shared
        model = _demucs_model(args.model, device)
        sources = list(model.sources)
        wanted = sources if args.stems is None else list(dict.fromkeys(args.stems))
        missing = [s for s in wanted if s not in sources]
        if missing:
            raise ValueError(f"model {args.model} has no stem(s) {missing}; it separates {sources}")
        msr, mch = int(model.samplerate), int(model.audio_channels)
        x = y if sr == msr else soxr.resample(y.T, sr, msr, quality="HQ").T
        if x.shape[0] != mch:  # mono (or other layouts) in: the model wants its own channel count
            x = np.repeat(x.mean(axis=0, keepdims=True), mch, axis=0)
        wav = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
        ref = wav.mean(0)
        mean, std = ref.mean(), ref.std() + 1e-8
        with torch.no_grad():
            est = apply_model(model, ((wav - mean) / std)[None].to(device), shifts=args.shifts, split=True,
                              overlap=args.overlap, progress=False, device=device)[0]
        est = (est * std + mean).cpu().numpy()
    derived, metas = [], []
    for stem in wanted:
        z = est[sources.index(stem)]
        z = z if msr == sr else soxr.resample(z.T, msr, sr, quality="HQ").T
        if z.shape[0] != y.shape[0]:  # back to the source's channel count
            z = np.repeat(z.mean(axis=0, keepdims=True), y.shape[0], axis=0)
        z = z[:, : y.shape[1]]
        d, meta = _emit(ctx, args.artifact, stem, z, sr, "separate",
                        _params(args, stem=stem, device=device))
        meta["stem"] = stem
        derived.append(d)
        metas.append(meta)
    return ToolResult(output={"derived": metas, "model": args.model, "device": device, "model_sources": sources},
                      derived=derived)
