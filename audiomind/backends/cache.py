"""The model-call cache: a reply kept on disk, keyed on the whole request, so a re-run sends nothing.

The key is the sha256 of a canonical JSON of everything that decides the reply: the backend kind and model,
the base URL, the messages (audio by content hash and span, never the bytes or a file's upload name), the
decoding settings and the response schema. Entries are one file each (`<root>/<k[:2]>/<k>.json`), written
to a temporary file and renamed into place, so concurrent workers and a kill -9 never leave a torn entry: a
reader sees a whole entry or none. An entry that does not parse is treated as a miss and rewritten.

Modes: `use` reads and writes; `refresh` never reads but writes (asks the model again, keeps the new reply);
`off` does neither. The default folder is shared by runs: `$AUDIOMIND_MODEL_CACHE`, else model-calls/ in
the embedded cache (`~/.cache/audiomind/model-calls`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

CacheMode = Literal["use", "refresh", "off"]
FORMAT = 1  # bump when the entry layout changes (old entries then miss)


def default_cache_dir() -> Path:
    """Settings.model_cache ($AUDIOMIND_MODEL_CACHE), else model-calls/ in the embedded cache
    ($AUDIOMIND_CACHE, else $XDG_CACHE_HOME/audiomind or ~/.cache/audiomind)."""
    from audiomind.config import settings  # (config imports this module's policy users)

    st = settings()
    return Path(st.model_cache).expanduser() if st.model_cache else st.cache_root() / "model-calls"


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the request's canonical JSON (sorted keys, no spaces; unknown objects by str())."""
    text = json.dumps({"format": FORMAT, "request": request}, sort_keys=True, separators=(",", ":"), default=str,
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Codec:
    """How a backend's reply object becomes JSON and back (so a hit returns the same type as a call)."""

    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


class ModelCallCache:
    """Replies on disk by request key."""

    def __init__(self, root: str | Path | None = None, mode: CacheMode = "use"):
        self.root = Path(root).expanduser() if root else default_cache_dir()
        self.mode: CacheMode = mode

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry ({'reply', 'facts', 'backend', ...}) or None (a miss, a torn or foreign file)."""
        if self.mode != "use":
            return None
        try:
            with open(self._path(key), encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or "reply" not in entry:
            return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store atomically; a cache that cannot be written (read-only, full disk) is skipped silently: it
        saves money, it never decides an answer."""
        if self.mode == "off":
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({**entry, "key": key}, f, ensure_ascii=False, default=str)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            return
