"""WordNet's parsed tables (audiomind.language.wordnet.TABLES) kept on disk, so that a fresh process looks words up
instead of parsing 25 MB of WordNet files first (1-2.5 s of CPU before the first question's answer, every process).

- where: an SQLite file in the embedded cache folder (AUDIOMIND_CACHE), `wordnet/tables-<key>.sqlite`, one row per
  table entry (its value marshalled); a process opens it read-only and fetches only the entries it looks up;
- key: the cache format, the WordNet folder and each of its index/data files' size and modification time (a
  changed or another WordNet is another key: its tables are parsed and stored anew, the old file removed);
- filled by `audiomind models install` (audiomind.warm's `wordnet` step); a process that finds no file for its key
  parses the tables (what every process did before) and stores them for the next one;
- a file that cannot be read (truncated, not a database, a wrong key inside) is never trusted: the process falls
  back to parsing, answers the same, and replaces the file. A read-only cache folder only costs the parsing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

FORMAT = 1
FOLDER = "wordnet"
POS = ("noun", "verb", "adj", "adv")
SOURCE_FILES = tuple(f"{kind}.{pos}" for kind in ("index", "data") for pos in POS)

Parsers = Mapping[str, Callable[[Path], dict]]
_MISSING = object()
_lock = threading.RLock()
_sources: dict[Path, _Parsed | _Store] = {}


def key(d: Path) -> str:
    """The cache key of the WordNet folder `d`: the format, the folder and its files' sizes and times."""
    files = []
    for name in SOURCE_FILES:
        try:
            st = (d / name).stat()
            files.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            files.append([name, None, None])
    return hashlib.sha256(json.dumps([FORMAT, marshal.version, str(d.resolve()), files]).encode()).hexdigest()


def cache_file(d: Path) -> Path:
    """Where the tables of the WordNet folder `d` are kept (in the embedded cache folder)."""
    from audiomind.embedded.models import cache_dir

    return cache_dir() / FOLDER / f"tables-{key(d)[:32]}.sqlite"


def _parse(d: Path, parsers: Parsers, name: str) -> dict:
    try:
        return parsers[name](d)
    except FileNotFoundError:  # a WordNet without that part (the adjectives alone): an empty table
        return {}


class _Parsed:
    """The tables parsed from the files, each on first use."""

    def __init__(self, d: Path, parsers: Parsers, tables: dict[str, dict] | None = None):
        self.d, self.parsers, self.tables = d, parsers, dict(tables or {})

    def table(self, name: str) -> Mapping:
        with _lock:
            if name not in self.tables:
                self.tables[name] = _parse(self.d, self.parsers, name)
            return self.tables[name]


class _Store:
    """The cache file, open read-only: tables as `_Stored` views."""

    def __init__(self, path: Path, expected_key: str):
        if not path.is_file():
            raise FileNotFoundError(path)
        self.con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        try:
            meta = dict(self.con.execute("SELECT name, value FROM meta").fetchall())
            if meta.get("key") != expected_key or meta.get("format") != FORMAT:
                raise ValueError("the cache file holds other tables")
        except BaseException:
            self.con.close()
            raise
        self.sizes = {k[len("size."):]: int(v) for k, v in meta.items() if k.startswith("size.")}
        self.views: dict[str, _Stored] = {}

    def table(self, name: str) -> Mapping:
        with _lock:
            if name not in self.views:
                if name not in self.sizes:
                    raise ValueError(f"the cache file has no table {name!r}")
                self.views[name] = _Stored(self, name, self.sizes[name])
            return self.views[name]

    def fetch(self, name: str, k: Any) -> Any:
        with _lock:
            row = self.con.execute("SELECT value FROM t WHERE name = ? AND key = ?", (name, k)).fetchone()
        return _MISSING if row is None else marshal.loads(row[0])

    def keys(self, name: str) -> list:
        with _lock:
            return [r[0] for r in self.con.execute("SELECT key FROM t WHERE name = ?", (name,))]


class _Stored(Mapping):
    """A read-only mapping whose entries are fetched from the cache file on first look-up (and remembered). A
    file that fails to read switches this process to the parsed tables (and rewrites the file)."""

    def __init__(self, store: _Store, name: str, size: int):
        self.store, self.name, self.size = store, name, size
        self.memo: dict[Any, Any] = {}
        self.fallback: Mapping | None = None

    def _lookup(self, k: Any) -> Any:
        if self.fallback is not None:
            return self.fallback.get(k, _MISSING)
        try:
            return self.memo[k]
        except KeyError:
            pass
        except TypeError:
            return _MISSING  # unhashable: in no table
        try:
            value = self.store.fetch(self.name, k)
        except (sqlite3.Error, ValueError, EOFError, TypeError):
            self.fallback = _replace_broken(self.store).table(self.name)
            return self.fallback.get(k, _MISSING)
        self.memo[k] = value
        return value

    def __getitem__(self, k: Any) -> Any:
        value = self._lookup(k)
        if value is _MISSING:
            raise KeyError(k)
        return value

    def get(self, k: Any, default: Any = None) -> Any:
        value = self._lookup(k)
        return default if value is _MISSING else value

    def __contains__(self, k: object) -> bool:
        return self._lookup(k) is not _MISSING

    def __len__(self) -> int:
        return len(self.fallback) if self.fallback is not None else self.size

    def __iter__(self) -> Iterator:
        if self.fallback is not None:
            return iter(self.fallback)
        try:
            return iter(self.store.keys(self.name))
        except sqlite3.Error:
            self.fallback = _replace_broken(self.store).table(self.name)
            return iter(self.fallback)


def _replace_broken(store: _Store) -> _Parsed:
    """The parsed tables of the WordNet folder whose cache file `store` failed to read; the file is rebuilt."""
    with _lock:
        for d, source in list(_sources.items()):
            if source is store:
                parsers = _parsers_of.get(d)
                if parsers is not None:
                    _sources[d] = build(d, parsers)
                    return _sources[d]  # type: ignore[return-value]
        raise RuntimeError("a WordNet cache file that belongs to no folder")


_parsers_of: dict[Path, Parsers] = {}


def write(path: Path, tables: Mapping[str, Mapping], cache_key: str) -> None:
    """Store `tables` in a new SQLite file at `path` (atomically: a reader sees the old file or the whole new
    one), and remove the folder's other table files (older keys)."""
    from audiomind.fsutil import atomic_path

    with atomic_path(path) as tmp:
        con = sqlite3.connect(tmp)
        try:
            con.execute("PRAGMA journal_mode = OFF")
            con.execute("PRAGMA synchronous = OFF")
            con.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value) WITHOUT ROWID")
            con.execute("CREATE TABLE t (name TEXT, key, value BLOB, PRIMARY KEY (name, key)) WITHOUT ROWID")
            for name, table in tables.items():
                con.executemany("INSERT INTO t VALUES (?, ?, ?)",
                                ((name, k, marshal.dumps(v)) for k, v in table.items()))
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [("key", cache_key), ("format", FORMAT),
                             *((f"size.{name}", len(table)) for name, table in tables.items())])
            con.commit()
        finally:
            con.close()
    for old in path.parent.glob("tables-*.sqlite"):
        if old != path:
            with contextlib.suppress(OSError):
                old.unlink()


def build(d: Path, parsers: Parsers) -> _Parsed:
    """Parse every table of the WordNet folder `d` and store them in its cache file (best effort: an unwritable
    cache folder only costs the next process the parsing); the parsed tables."""
    tables = {name: _parse(d, parsers, name) for name in parsers}
    with contextlib.suppress(OSError, sqlite3.Error):
        write(cache_file(d), tables, key(d))
    return _Parsed(d, parsers, tables)


def _source(d: Path, parsers: Parsers) -> _Parsed | _Store:
    with _lock:
        source = _sources.get(d)
        if source is None:
            _parsers_of[d] = parsers
            try:
                source = _Store(cache_file(d), key(d))
            except (sqlite3.Error, ValueError, OSError):  # OSError: also an uncreatable cache folder
                source = build(d, parsers)  # absent, stale or unreadable: parsed, and stored for the next process
            _sources[d] = source
        return source


def table(d: Path, name: str, parsers: Parsers) -> Mapping:
    """The table `name` of the WordNet folder `d`: from its cache file, else parsed (and stored)."""
    try:
        return _source(d, parsers).table(name)
    except (sqlite3.Error, ValueError):  # a file that reads but lacks the table: parsed, and the file replaced
        with _lock:
            _sources[d] = build(d, parsers)
            return _sources[d].table(name)


def ensure(d: Path, parsers: Parsers) -> str:
    """What `audiomind models install` does: the cache file of `d`, built unless it is there and readable."""
    try:
        path = cache_file(d)
        store = _Store(path, key(d))
        if set(store.sizes) == set(parsers):
            store.con.close()
            return f"kept {path}"
        store.con.close()
    except (sqlite3.Error, ValueError, OSError):
        pass
    build(d, parsers)
    try:
        path = cache_file(d)
    except OSError as exc:
        return f"could not store the tables ({exc})"
    return f"built {path}" if path.is_file() else f"could not write {path}"


def reset() -> None:
    """Forget this process's open files and parsed tables (tests)."""
    with _lock:
        for source in _sources.values():
            if isinstance(source, _Store):
                source.con.close()
        _sources.clear()
        _parsers_of.clear()
