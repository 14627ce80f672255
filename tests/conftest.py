"""Shared fixtures: audio made by Debian's generators (true by construction) and an isolated tool cache."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

SHARED_FROM_USER_CACHE = ("minilm-batches", "whisper-base", "yamnet")
"""What a test session takes from the user's cache (as `audiomind models install` left it): content-keyed or
unpacked model files, never a tool result, so no test sees a stale answer. Without them every session encoded
the fixed MiniLM tables again (the competence bank, the property phrases: ~10-30 s on 2 busy cores) and copied
Whisper base together (142 MB)."""


def _user_cache() -> Path:
    from audiomind import config

    return config.settings().cache_root()


def _seed(cache: Path, user: Path) -> None:
    for name in SHARED_FROM_USER_CACHE:
        src = user / name
        if not src.is_dir() or (cache / name).exists():
            continue
        try:
            if name == "minilm-batches":  # small files a session may add to: a copy keeps the user's untouched
                shutil.copytree(src, cache / name)
            else:  # model files, read only
                (cache / name).symlink_to(src, target_is_directory=True)
        except OSError:  # a cold cache only costs time
            pass


@pytest.fixture(autouse=True)
def isolated_model_cache(tmp_path_factory, monkeypatch):
    """Each test has a model-call cache of its own (bench runs cache model calls by default): no test answers
    from another test's replies."""
    monkeypatch.setenv("AUDIOMIND_MODEL_CACHE", str(tmp_path_factory.mktemp("model-calls")))


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Tool results and unpacked models go to a per-session cache, so tests never see stale results; the session
    starts with the user's embedding tables and unpacked models (SHARED_FROM_USER_CACHE)."""
    old = os.environ.get("AUDIOMIND_CACHE")
    user = _user_cache()
    cache = tmp_path_factory.mktemp("audiomind-cache")
    _seed(cache, user)
    os.environ["AUDIOMIND_CACHE"] = str(cache)
    yield
    if old is None:
        os.environ.pop("AUDIOMIND_CACHE", None)
    else:
        os.environ["AUDIOMIND_CACHE"] = old
