"""CLAP text/audio embeddings for AURA's audio entailment: real loading code for LAION-CLAP (`laion_clap`)
and Microsoft CLAP (`msclap`), used only when a checkpoint and its package are present.

Neither package ships weights: LAION-CLAP loads a checkpoint file (e.g. 630k-audioset-best.pt, HTSAT-tiny;
music_audioset_epoch_15_esc_90.14.pt, HTSAT-base) and the roberta-base tokenizer from the Hugging Face
cache; msclap loads its checkpoint plus a GPT-2 text encoder the same way. Configure (`audiomind.config.
Settings`; the environment variable is the fallback):
    clap_ckpt     AUDIOMIND_CLAP_CKPT     path of the checkpoint file
    clap_backend  AUDIOMIND_CLAP_BACKEND  laion | msclap (default: whichever package imports, laion first)
    clap_amodel   AUDIOMIND_CLAP_AMODEL   LAION audio model (HTSAT-tiny default, HTSAT-base for the music checkpoints)
    clap_version  AUDIOMIND_CLAP_VERSION  msclap version (2023 default)
Where anything is missing, `clap_status()` says exactly what, and AURA records the entailment term as
skipped with that reason (it never substitutes another model for CLAP silently).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from audiomind import config
from audiomind.config import Settings
from audiomind.embedded import sessions


class ClapStatus(BaseModel):
    available: bool
    backend: str | None = None
    checkpoint: str | None = None
    reason: str = ""


def clap_status(settings: Settings | None = None) -> ClapStatus:
    """Can CLAP run here, with `settings` (default: the active ones)? (No model is loaded; see `load_clap`
    for load-time failures.)"""
    s = settings or config.settings()
    backend = s.clap_backend
    have = {"laion": importlib.util.find_spec("laion_clap") is not None,
            "msclap": importlib.util.find_spec("msclap") is not None}
    if backend is None:
        backend = "laion" if have["laion"] else "msclap" if have["msclap"] else None
    if backend is None:
        return ClapStatus(available=False, reason="neither laion_clap nor msclap is installed (optional extras; "
                                                  "both pull PyPI's torchaudio, which does not load beside the CPU "
                                                  "torch here)")
    if backend not in have:
        return ClapStatus(available=False, backend=backend, reason=f"unknown AUDIOMIND_CLAP_BACKEND {backend!r}")
    if not have[backend]:
        return ClapStatus(available=False, backend=backend, reason=f"{backend} is not installed")
    ckpt = str(s.clap_ckpt) if s.clap_ckpt is not None else None
    if not ckpt:
        return ClapStatus(available=False, backend=backend,
                          reason="no CLAP checkpoint configured (AUDIOMIND_CLAP_CKPT); no package ships the weights")
    if not Path(ckpt).expanduser().is_file():
        return ClapStatus(available=False, backend=backend, checkpoint=ckpt, reason=f"checkpoint {ckpt} not found")
    return ClapStatus(available=True, backend=backend, checkpoint=str(Path(ckpt).expanduser()), reason="ok")


class ClapModel:
    """Unit-normalised text and audio embeddings from one CLAP model, serialised by a lock."""

    def __init__(self, status: ClapStatus, settings: Settings | None = None):
        s = settings or config.settings()
        self.status = status
        self.lock = threading.Lock()
        ckpt = status.checkpoint or ""
        if status.backend == "laion":
            import laion_clap

            self.model = laion_clap.CLAP_Module(enable_fusion=False, amodel=s.clap_amodel, device="cpu")
            self.model.load_ckpt(ckpt)
            self.sr = 48000
        else:
            from msclap import CLAP

            self.model = CLAP(model_fp=ckpt, version=s.clap_version, use_cuda=False)
            self.sr = 44100

    @staticmethod
    def _norm(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=np.float32).reshape(-1)
        return v / (np.linalg.norm(v) + 1e-9)

    def embed_text(self, text: str) -> np.ndarray:
        with self.lock:
            if self.status.backend == "laion":
                e = self.model.get_text_embedding([text])
            else:
                e = self.model.get_text_embeddings([text]).detach().cpu().numpy()
        return self._norm(e[0])

    def embed_audio(self, path: str | Path) -> np.ndarray:
        with self.lock:
            if self.status.backend == "laion":
                from audiomind import audio as aio

                y = aio.load(path, sr=self.sr, mono=True).astype(np.float32)
                e = self.model.get_audio_embedding_from_data(x=y[None, :], use_tensor=False)
            else:
                e = self.model.get_audio_embeddings([str(path)]).detach().cpu().numpy()
        return self._norm(e[0])

    def cosine(self, text: str, audio_path: str | Path) -> float:
        return float(self.embed_text(text) @ self.embed_audio(audio_path))


def _load_clap() -> ClapModel:
    st = clap_status()
    if not st.available:
        raise RuntimeError(st.reason)
    try:
        return ClapModel(st)
    except Exception as exc:
        raise RuntimeError(f"{st.backend} CLAP failed to load from {st.checkpoint}: {type(exc).__name__}: {exc}") from exc


def load_clap() -> ClapModel:
    """The configured CLAP model, loaded once per process; raises RuntimeError with the reason if it cannot."""
    return sessions.get("clap", _load_clap)
