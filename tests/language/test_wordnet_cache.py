"""WordNet's parsed tables on disk (audiomind.language.wordnet_cache): built by `audiomind models install`
(audiomind.warm), looked up by a fresh process without parsing, parsed and stored again under a new key when the
WordNet files change, and never trusted when the file is broken (the answers stay those of the parsed files)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from audiomind import warm
from audiomind.language import wordnet, wordnet_cache

INDEX_ADJ = ["  1 license header lines start with a space", "cold a 1 1 ! 1 0 00002000", "hot a 1 1 ! 1 0 00001740"]
DATA_ADJ = ["  1 license header", "00001740 00 a 01 hot 0 001 ! 00002000 a 0101 | high in temperature",
            "00002000 00 a 01 cold 0 001 ! 00001740 a 0101 | low in temperature"]
INDEX_NOUN = ["  1 license header", "beep n 1 1 @ 1 0 00003000", "sound n 1 0 1 0 00004000"]
DATA_NOUN = ["  1 license header", "00003000 03 n 01 beep 0 001 @ 00004000 n 0000 | a short high tone",
             "00004000 03 n 01 sound 0 000 | what is heard"]


def _write(d: Path, name: str, lines: list[str]) -> None:
    (d / name).write_text("\n".join(lines) + "\n")


@pytest.fixture
def small_wordnet(tmp_path, monkeypatch):
    """A WordNet folder of four words and a cache folder of its own; the process forgets its tables before and
    after."""
    d = tmp_path / "wordnet"
    d.mkdir()
    for name, lines in (("index.adj", INDEX_ADJ), ("data.adj", DATA_ADJ), ("index.noun", INDEX_NOUN),
                        ("data.noun", DATA_NOUN)):
        _write(d, name, lines)
    monkeypatch.setenv("AUDIOMIND_WORDNET_DIR", str(d))
    monkeypatch.setenv("AUDIOMIND_CACHE", str(tmp_path / "cache"))
    wordnet.reset()
    yield d
    wordnet.reset()


def _answers() -> tuple:
    return (wordnet.antonyms("hot"), wordnet.antonyms("cold"), wordnet.names_sound("beeps"),
            wordnet.noun_ancestors("beep"), wordnet.listed("sounds"), wordnet.listed("until"))


EXPECTED = ({"cold"}, {"hot"}, True, frozenset({"beep", "sound"}), True, False)


def _no_parsing(monkeypatch) -> None:
    def parse(d: Path) -> dict:
        raise AssertionError("the tables should come from the disk cache")

    monkeypatch.setattr(wordnet, "TABLES", dict.fromkeys(wordnet.TABLES, parse))


def _table_files(cache: Path) -> list[Path]:
    return sorted((cache / wordnet_cache.FOLDER).glob("tables-*.sqlite"))


def test_warm_builds_the_cache_and_a_fresh_process_looks_words_up_in_it(small_wordnet, tmp_path):
    done = warm.warm(["wordnet"], out=lambda _: None)
    assert done["wordnet"] is not None
    [built] = _table_files(tmp_path / "cache")
    assert built == wordnet_cache.cache_file(small_wordnet)
    stamp = built.stat().st_mtime_ns
    code = ("from audiomind.language import wordnet as w\n"
            "def parse(d): raise SystemExit('parsed the WordNet files')\n"
            "w.TABLES = dict.fromkeys(w.TABLES, parse)\n"
            "print(sorted(w.antonyms('hot')), w.names_sound('beeps'), w.listed('sounds'), w.listed('until'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                         check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["['cold']", "True", "True", "False"]
    assert built.stat().st_mtime_ns == stamp  # read, not written again
    assert "kept" in wordnet.warm()  # a second install keeps it


def test_a_process_without_the_cache_parses_and_stores_it_for_the_next(small_wordnet, tmp_path, monkeypatch):
    assert _answers() == EXPECTED
    assert len(_table_files(tmp_path / "cache")) == 1
    wordnet.reset()
    _no_parsing(monkeypatch)
    assert _answers() == EXPECTED


def test_changed_wordnet_files_are_parsed_again_under_a_new_key(small_wordnet, tmp_path, monkeypatch):
    wordnet.warm()
    [old] = _table_files(tmp_path / "cache")
    _write(small_wordnet, "index.adj", [*INDEX_ADJ, "chilly a 1 1 & 1 0 00002100"])
    _write(small_wordnet, "data.adj", [*DATA_ADJ, "00002100 00 s 01 chilly 0 001 & 00002000 a 0000 | rather cold"])
    wordnet.reset()
    assert wordnet.antonyms("chilly") == {"hot"}  # a satellite takes its head's antonym: the new files were read
    [new] = _table_files(tmp_path / "cache")
    assert new != old and not old.exists()
    wordnet.reset()
    _no_parsing(monkeypatch)
    assert wordnet.antonyms("chilly") == {"hot"}


def test_a_broken_cache_file_is_not_trusted_and_is_replaced(small_wordnet, tmp_path):
    wordnet.warm()
    [path] = _table_files(tmp_path / "cache")
    path.write_bytes(b"not a database at all" * 100)
    wordnet.reset()
    assert _answers() == EXPECTED
    wordnet.reset()
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE name = 'key'").fetchone()[0] == wordnet_cache.key(small_wordnet)
    assert _answers() == EXPECTED


def test_an_unreadable_entry_found_mid_run_falls_back_to_the_parsed_tables(small_wordnet, tmp_path):
    wordnet.warm()
    [path] = _table_files(tmp_path / "cache")
    with sqlite3.connect(path) as con:
        con.execute("UPDATE t SET value = x'ff00' WHERE name = 'adj.synsets'")
    wordnet.reset()
    assert wordnet.listed("sounds") is True  # the file opened and answered
    assert _answers() == EXPECTED  # the adjectives' entries do not unmarshal: parsed instead
    with sqlite3.connect(path) as con:  # and the file was written again
        assert con.execute("SELECT count(*) FROM t WHERE value = x'ff00'").fetchone()[0] == 0


@pytest.mark.skipif(wordnet.wordnet_dir() is None, reason="WordNet is not installed (apt-get install wordnet-base)")
def test_the_stored_tables_answer_as_the_parsed_files_do(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIOMIND_CACHE", str(tmp_path / "cache"))
    words = ["hot", "scorching", "quiet", "pips", "barks", "chime", "caller", "dog", "price", "duration", "paris",
             "tuesday", "brought", "mice", "collect", "until", "whom", "cities", "cancelled", "quieter", "beeps"]

    def answers() -> list:
        return [(wordnet.antonyms(w), wordnet.noun_ancestors(w), wordnet.synonyms(w), wordnet.listed(w),
                 wordnet.names_person(w), wordnet.names_amount(w), wordnet.names_sound(w),
                 wordnet.names_kind_of("city", w), wordnet.names_kind_of("day", w)) for w in words]

    wordnet.reset()
    try:
        parsed = answers()  # no cache yet: parsed from the files (and stored)
        wordnet.reset()
        _no_parsing(monkeypatch)
        assert answers() == parsed
    finally:
        wordnet.reset()


def test_a_cache_folder_that_cannot_be_made_only_costs_the_parsing(small_wordnet, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AUDIOMIND_CACHE", str(blocker / "cache"))  # under a file: mkdir fails, even as root
    wordnet.reset()
    assert _answers() == EXPECTED
    assert wordnet.warm().startswith("could not store the tables")
