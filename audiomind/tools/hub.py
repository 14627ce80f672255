"""Hub-loaded speech tools: WhisperX forced alignment and pyannote.audio diarization.

Their weights come from a model hub, which this offline stack never contacts: each tool loads from a
local folder a user prepared (the settings `whisperx_align_dir` / `pyannote_dir`, env
AUDIOMIND_WHISPERX_ALIGN_DIR / AUDIOMIND_PYANNOTE_DIR) and is listed as
unavailable, with the reason, where the package or the folder is missing. Both packages pull PyPI's
torchaudio, which does not load beside torch 2.13.0+cpu, so they are optional extras, never the default.
"""

from __future__ import annotations

import threading
from pathlib import Path

from pydantic import Field

from audiomind import config
from audiomind.config import Settings
from audiomind.embedded import sessions
from audiomind.tools.base import Claim, TimeSpan, ToolArgs, ToolContext, ToolOutput, ToolResult

_lock = threading.Lock()  # one hub model runs at a time (they are large, and GPU memory is shared)


def _local_dir(setting: str, what: str, settings: Settings | None = None) -> Path:
    """The folder a `Settings` field names (default: the active settings), which must exist."""
    folder = getattr(settings or config.settings(), setting)
    if not folder or not Path(folder).is_dir():
        raise RuntimeError(f"{what} weights are loaded from a local folder only: set {config.env_name(setting)} "
                           "to a prepared copy")
    return Path(folder)


def _device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


class AlignArgs(ToolArgs):
    language: str = Field("en", min_length=2, max_length=5, description="language of the speech (ISO code)")
    model: str = Field("tiny.en", description="embedded Whisper model for the transcript to align")
    device: str = Field("auto", pattern="^(auto|cpu|cuda)$")


class AlignedWord(ToolOutput):
    word: str = Field(description="the word")
    start: float = Field(description="word start (s) by wav2vec2 forced alignment")
    end: float = Field(description="word end (s)")
    score: float = Field(description="alignment score (0-1)")


class AsrAlignOutput(ToolOutput):
    text: str = Field(description="the Whisper transcript that was aligned ('' without speech)")
    words: list[AlignedWord] = Field(description="aligned words in time order")
    language: str | None = Field(None, description="language of the alignment model; None when there was no "
                                                   "speech to align")


def _align_model(language: str, device: str):
    def load():
        import whisperx

        return whisperx.load_align_model(
            language_code=language, device=device,
            model_dir=str(_local_dir("whisperx_align_dir", "WhisperX")),
        )

    return sessions.get(f"whisperx-align:{language}:{device}", load, keep=4)


def asr_align(args: AlignArgs, ctx: ToolContext) -> ToolResult:
    """Whisper transcript (embedded faster-whisper), then WhisperX's wav2vec2 forced alignment for word
    times that do not drift over silence."""
    import whisperx

    from audiomind.tools.asr import AsrArgs, asr

    transcript = asr(AsrArgs(artifact=args.artifact, model=args.model, language=args.language), ctx).output
    segments = [{"start": s["start"], "end": s["end"], "text": s["text"]} for s in transcript.get("segments", [])]
    if not segments:
        return ToolResult(output={"words": [], "text": ""}, claims=[Claim(text="No speech to align.")])
    device = _device(args.device)
    with _lock:
        model, metadata = _align_model(args.language, device)
        aligned = whisperx.align(segments, model, metadata, ctx.audio(args.artifact).samples(sr=16000), device)
    words = [
        {"word": w["word"], "start": round(w["start"], 3), "end": round(w["end"], 3), "score": round(w.get("score", 0), 3)}
        for seg in aligned["segments"] for w in seg.get("words", []) if "start" in w
    ]
    claims = [Claim(text="Aligned words (WhisperX): " + ", ".join(f"{w['word']} {w['start']:.2f}-{w['end']:.2f} s" for w in words[:40]))]
    return ToolResult(output={"text": transcript.get("text", ""), "words": words, "language": args.language}, claims=claims)


class PyannoteArgs(ToolArgs):
    min_speakers: int | None = Field(None, ge=1, le=20)
    max_speakers: int | None = Field(None, ge=1, le=20)
    device: str = Field("auto", pattern="^(auto|cpu|cuda)$")


class DiarizationTurn(TimeSpan):
    speaker: str = Field(description="pyannote's anonymous speaker label (SPEAKER_00, ...)")


class DiarizePyannoteOutput(ToolOutput):
    count: int = Field(description="number of distinct voices")
    turns: list[DiarizationTurn] = Field(description="who-spoke-when turns in time order")


def _pipeline(device: str):
    def load():
        import torch
        from pyannote.audio import Pipeline

        folder = _local_dir("pyannote_dir", "pyannote.audio")
        config = folder / "config.yaml"
        if not config.exists():
            raise RuntimeError(f"{config} not found: AUDIOMIND_PYANNOTE_DIR must hold a pipeline config.yaml")
        pipeline = Pipeline.from_pretrained(str(config))
        return pipeline.to(torch.device(device))

    return sessions.get(f"pyannote:{device}", load, keep=2)


def diarize_pyannote(args: PyannoteArgs, ctx: ToolContext) -> ToolResult:
    """Neural diarization: who-spoke-when turns and the number of distinct voices (not who they are)."""
    import torch

    y = ctx.audio(args.artifact).samples(sr=16000)
    with _lock:
        annotation = _pipeline(_device(args.device))(
            {"waveform": torch.from_numpy(y).unsqueeze(0), "sample_rate": 16000},
            min_speakers=args.min_speakers, max_speakers=args.max_speakers,
        )
    turns = [
        {"speaker": spk, "start_s": round(seg.start, 3), "end_s": round(seg.end, 3)}
        for seg, _, spk in annotation.itertracks(yield_label=True)
    ]
    speakers = sorted({t["speaker"] for t in turns})
    return ToolResult(
        output={"count": len(speakers), "turns": turns},
        claims=[Claim(text=f"{len(speakers)} distinct voice(s) by pyannote diarization, {len(turns)} turn(s).",
                      data={"count": len(speakers)})],
    )
