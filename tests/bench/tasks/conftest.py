"""Shared by the task tests: the synthetic benchmark's sets, generated once per test session (real audio, no
models needed), and a loopback OpenAI-compatible model server for real, fast `bench run --task` runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SYN_SEED = 11
# items per kind: dev 2 (the tool re-measurements look at two variants per kind), the other splits 1
SYN_PER_KIND = {"dev": 2, "heldout_phrasing": 1, "heldout_condition": 1}


@pytest.fixture(scope="session")
def syn(tmp_path_factory) -> dict:
    """{"root", "seed", "rows": {split: rows}, "by_kind": {split: {kind: rows}}, "stems"}: one MMAR-format
    set per split under root/<split>/; heldout_condition also keeps its clean and noise components in stems/."""
    from audiomind.bench.tasks import synthetic_generate as sg

    root = tmp_path_factory.mktemp("synthetic-splits")
    stems = root / "stems"
    rows = {s: sg.generate(root / s, per_kind=n, seed=SYN_SEED, split=s,
                           stems_dir=stems if s == "heldout_condition" else None)
            for s, n in SYN_PER_KIND.items()}
    by_kind = {s: {k: [r for r in rs if r["kind"] == k] for k in sg.KINDS} for s, rs in rows.items()}
    return {"root": root, "seed": SYN_SEED, "rows": rows, "by_kind": by_kind, "stems": stems}


@pytest.fixture(scope="module")
def loopback_llm():
    """evals/throughput_benchmark.py's loopback server (no delay): real openai/langchain clients over HTTP; its
    model always picks the first option offered."""
    spec = importlib.util.spec_from_file_location("throughput_benchmark", REPO / "evals" / "throughput_benchmark.py")
    tb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tb)  # type: ignore[union-attr]
    server = tb.FakeLLMServer(delay_s=0.0).start()
    yield f"openai:x@{server.url}"
    server.close()
