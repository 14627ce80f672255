"""Shared helpers for tool tests: run a tool on a file without the executor, and session-scoped audio
whose content is true by construction (generated once per test session, a few seconds each)."""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from audiomind import artifacts, synth
from audiomind import audio as aio
from audiomind.state import Artifact
from audiomind.tools.base import ToolArgs, ToolContext, ToolResult

SR = synth.SR


def make_artifact(path: str | Path, artifact_id: str = "a0") -> Artifact:
    return artifacts.make_artifact(artifact_id, path)


def make_context(paths: dict[str, str | Path] | str | Path, tmp_path: Path) -> ToolContext:
    """A ToolContext over one file (as `a0`) or several ({artifact_id: path})."""
    if not isinstance(paths, dict):
        paths = {"a0": paths}
    artifacts = {aid: make_artifact(p, aid) for aid, p in paths.items()}
    return ToolContext(artifacts, Path(tmp_path) / "derived", {})


def run_tool(fn: Any, args: ToolArgs | dict[str, Any] | None, path: str | Path | dict[str, str | Path],
             tmp_path: Path) -> ToolResult:
    """Run tool `fn` on `path` (artifact `a0`, or a {id: path} dict); `args` may be the args model, a dict
    of its fields (validated against the model in fn's type hints, as the executor does) or None."""
    if not isinstance(args, ToolArgs):
        model = typing.get_type_hints(fn)["args"]
        args = model.model_validate(args or {})
    result = fn(args, make_context(path, tmp_path))
    assert isinstance(result, ToolResult)
    model = shipped_output_models().get(f"{fn.__module__}:{fn.__name__}")
    if model is not None:  # a shipped tool's real output must fit the output model its manifest names
        model.model_validate(result.output)
    return result


@functools.lru_cache(maxsize=1)
def shipped_output_models() -> dict[str, type]:
    """{manifest entry: output model class} of the shipped manifests."""
    from audiomind.tools.manifest import ToolRegistry

    return {m.entry: m.output_class for m in ToolRegistry.load().all() if m.output_class is not None}


def write(y: np.ndarray, path: Path) -> Path:
    return aio.write_wav(path, np.asarray(y, dtype=np.float32), SR)


def trimmed_speech(text: str, path: Path, voice: str = "slt", top_db: float = 40.0) -> np.ndarray:
    """flite speech with its own leading/trailing silence removed, so onsets are known exactly."""
    import librosa

    synth.speech(text, path, voice=voice)
    y = aio.load(path, sr=SR)
    y, _ = librosa.effects.trim(y, top_db=top_db, frame_length=512, hop_length=128)
    return y.astype(np.float32)


@dataclass(frozen=True)
class SpeechClip:
    """Speech between known stretches of silence: speech occupies [start_s, end_s]."""

    path: Path
    text: str
    voice: str
    start_s: float
    end_s: float
    duration_s: float


def speech_clip(text: str, path: Path, voice: str = "slt", lead_s: float = 1.0, tail_s: float = 1.0) -> SpeechClip:
    y = trimmed_speech(text, path.with_name(path.stem + "_raw.wav"), voice=voice)
    full = np.concatenate([synth.silence(lead_s), y, synth.silence(tail_s)])
    write(full, path)
    return SpeechClip(path, text, voice, lead_s, lead_s + len(y) / SR, len(full) / SR)


@pytest.fixture(scope="session")
def audio_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("audio")


@pytest.fixture(scope="session")
def fox_clip(audio_dir: Path) -> SpeechClip:
    """1.0 s silence + flite slt 'the quick brown fox jumps over the lazy dog' + 1.0 s silence."""
    return speech_clip("the quick brown fox jumps over the lazy dog", audio_dir / "fox.wav")


@pytest.fixture(scope="session")
def silence_clip(audio_dir: Path) -> Path:
    return write(synth.silence(3.0), audio_dir / "silence.wav")


@pytest.fixture(scope="session")
def tone_clip(audio_dir: Path) -> Path:
    """A steady 440 Hz sine at amplitude 0.3 (about -13.5 dBFS RMS), 3 s."""
    return write(synth.tone(440.0, 3.0, amplitude=0.3), audio_dir / "tone440.wav")


@pytest.fixture(scope="session")
def beeps_clip(audio_dir: Path) -> Path:
    """Three 0.2 s 1 kHz beeps with 0.5 s gaps after 0.5 s lead silence."""
    return synth.beeps(3, audio_dir / "beeps3.wav")


@pytest.fixture
def tool_runner(tmp_path: Path):
    """`tool_runner(fn, args, path)`: run_tool bound to this test's tmp_path (no conftest import needed)."""

    def _run(fn: Any, args: ToolArgs | dict[str, Any] | None, path: str | Path | dict[str, str | Path]) -> ToolResult:
        return run_tool(fn, args, path, tmp_path)

    return _run


def repeat_with_gaps(y: np.ndarray, path: Path, repeat: int, gap_s: float, lead_s: float = 0.5,
                     tail_s: float = 0.5) -> tuple[Path, list[float]]:
    """`repeat` copies of clip `y` with `gap_s` of digital silence between them; returns (path, onsets_s)
    where each onset is where a copy starts (its own leading silence, if any, included)."""
    parts, onsets, t = [synth.silence(lead_s)], [], lead_s
    for k in range(repeat):
        onsets.append(t)
        parts.append(np.asarray(y, dtype=np.float32))
        t += len(y) / SR
        if k + 1 < repeat:
            parts.append(synth.silence(gap_s))
            t += gap_s
    parts.append(synth.silence(tail_s))
    return write(np.concatenate(parts), path), onsets


def freedesktop_sound(name: str, path: Path, trim_db: float = 50.0) -> np.ndarray:
    """A freedesktop theme sound at 16 kHz mono, with its own leading/trailing near-silence trimmed."""
    import librosa

    synth.sound_file(name, path)
    y = aio.load(path, sr=SR)
    y, _ = librosa.effects.trim(y, top_db=trim_db, frame_length=512, hop_length=128)
    return y.astype(np.float32)


@pytest.fixture(scope="session")
def helpers():
    """The module-level helpers above as a fixture, so test files need not `import conftest` (whose module
    name is ambiguous when several test folders have one)."""
    from types import SimpleNamespace

    return SimpleNamespace(run_tool=run_tool, make_context=make_context, make_artifact=make_artifact, write=write,
                           trimmed_speech=trimmed_speech, speech_clip=speech_clip,
                           repeat_with_gaps=repeat_with_gaps, freedesktop_sound=freedesktop_sound, SR=SR)
