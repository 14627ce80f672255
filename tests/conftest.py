"""Shared fixtures: audio made by Debian's generators (true by construction) and an isolated tool cache."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Tool results and unpacked models go to a per-session cache, so tests never see stale results."""
    old = os.environ.get("AUDIOMIND_CACHE")
    os.environ["AUDIOMIND_CACHE"] = str(tmp_path_factory.mktemp("audiomind-cache"))
    yield
    if old is None:
        os.environ.pop("AUDIOMIND_CACHE", None)
    else:
        os.environ["AUDIOMIND_CACHE"] = old
