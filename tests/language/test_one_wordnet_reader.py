"""WordNet's database files are read in one place: audiomind/language/wordnet.py.

No other module names WordNet's index, data or exception files (the strings that open them: 'index.noun',
f'data.{pos}', 'noun.exc', f'{pos}.exc'), holds the WordNet folder ('/usr/share/wordnet') or resolves it itself
(a function `wordnet_dir`, or the setting `settings().wordnet_dir`). The check is on the source, by the AST; the
detector is itself checked against code that does read the files (the judges' lexicon before it read WordNet
through the reader), so that it cannot pass by finding nothing anywhere. The judges' lexicon answers from the
reader's primitives: its exceptions, index and glosses are the reader's.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import audiomind
from audiomind.judges import lexicon
from audiomind.language import wordnet

PACKAGE = Path(audiomind.__file__).resolve().parent
READER = "language/wordnet.py"

_POS = r"(?:noun|verb|adj|adv|\{\})"
# a string that is a WordNet file's name or path (no spaces: prose that mentions the files is not reading them)
_FILE_NAME = re.compile(rf"(?:\S*/)?(?:(?:index|data)\.{_POS}|{_POS}\.exc)")
_FOLDER = re.compile(r"\S*/usr/share/wordnet\S*")
_HINTS = ("index", "data", "exc", "wordnet")  # a module without these cannot name the files (the scan is quicker)


def _text(node: ast.expr) -> str | None:
    """A string constant, or an f-string with its placeholders written '{}'."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                       for v in node.values)
    return None


def wordnet_reading(source: str) -> list[str]:
    """What in `source` reads WordNet's files or resolves its folder: file names, the folder, a `wordnet_dir`
    function or the setting read through `settings()`."""
    found = []
    tree = ast.parse(source)
    skip = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = _text(node) if isinstance(node, ast.expr) else None
        if text is not None:
            if _FILE_NAME.fullmatch(text) or _FOLDER.fullmatch(text):
                found.append(f"line {node.lineno}: {text!r}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "wordnet_dir":
            found.append(f"line {node.lineno}: def wordnet_dir")
        elif (isinstance(node, ast.Attribute) and node.attr == "wordnet_dir" and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, (ast.Attribute, ast.Name))
              and getattr(node.value.func, "attr", getattr(node.value.func, "id", "")) == "settings"):
            found.append(f"line {node.lineno}: settings().wordnet_dir")
    return found


# what the judges' lexicon did before WordNet was read through the reader (its own folder and files)
OWN_READER = '''
WORDNET_DIRS = ("/usr/share/wordnet",)

def wordnet_dir(root=None):
    first = root if root is not None else config.settings().wordnet_dir
    for d in ([first] if first else []) + list(WORDNET_DIRS):
        if (Path(d) / "index.noun").is_file() and (Path(d) / "data.noun").is_file():
            return Path(d)

def _index(pos):
    with open(wordnet_dir() / f"index.{pos}", encoding="latin-1") as f:
        return f.read()

def _exceptions():
    return (wordnet_dir() / "noun.exc").read_text().splitlines()
'''


def test_the_detector_finds_code_that_reads_wordnet_itself():
    found = wordnet_reading(OWN_READER)
    for what in ("'/usr/share/wordnet'", "def wordnet_dir", "settings().wordnet_dir", "'index.noun'", "'data.noun'",
                 "'index.{}'", "'noun.exc'"):
        assert any(what in f for f in found), (what, found)
    for pos_exc in ('f"{pos}.exc"', '"verb.exc"', 'd / f"data.{pos}"'):
        assert wordnet_reading(f"x = {pos_exc}\n"), pos_exc


def test_the_detector_leaves_other_names_alone():
    harmless = ('x = ("index.html", "data.json", "noun phrase", "index", "data", "exchange.exc2", '
                'f"{name}.wav", f"{kind}.{pos}", "wordnet", "the noun index")\n'
                "from audiomind.language import wordnet\nd = wordnet.wordnet_dir()\n")
    assert wordnet_reading(harmless) == []


def test_the_reader_is_where_the_detector_finds_the_wordnet_files():
    assert wordnet_reading((PACKAGE / READER).read_text())  # the check looks where the files are read


def test_only_the_reader_reads_wordnet_files():
    offenders = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        rel = p.relative_to(PACKAGE).as_posix()
        source = p.read_text()
        if rel != READER and any(s in source for s in _HINTS) and (found := wordnet_reading(source)):
            offenders[rel] = found
    assert not offenders, ("WordNet's files are read (or its folder resolved) outside audiomind/language/wordnet.py; "
                           f"read them through it: {offenders}")


needs_wordnet = pytest.mark.skipif(not wordnet.holds("noun"), reason="WordNet (Debian wordnet-base) is not installed")


def test_the_lexicon_has_no_folder_of_its_own():
    """One front door: the judges find WordNet's folder through the reader, not through a name of their own."""
    assert not hasattr(lexicon, "wordnet_dir")


@needs_wordnet
def test_the_lexicon_answers_from_the_readers_primitives():
    geese = dict(wordnet.exception_lines("noun"))["geese"]
    assert geese == ("goose",)
    # a form with two lines ('aurar' -> 'eyir', then 'eyrir'): the lexicon takes the last line's base
    aurar = [bases for form, bases in wordnet.exception_lines("noun") if form == "aurar"]
    assert aurar == [("eyir",), ("eyrir",)]
    assert lexicon.noun_senses("aurar")[0].word == "eyrir"
    assert lexicon.noun_senses("geese")[0].word == "goose"
    offset = wordnet.index("noun")["celesta"][0]
    lemmas, hypernyms, gloss = wordnet.noun_synset(offset)
    assert lemmas == ("celesta",) and gloss.startswith("a musical instrument")
    assert wordnet.noun_synset(hypernyms[0])[0][0] == "keyboard instrument"
    celesta = lexicon.noun_senses("celesta")[0]
    assert (celesta.lemmas, celesta.gloss, celesta.hypernym) == (list(lemmas), gloss, "keyboard instrument")
    assert wordnet.tag_counts("adj")["low"] > wordnet.tag_counts("noun").get("low", 0)
    assert lexicon.mostly_adjective("low")
    assert "qwzxv" not in wordnet.tag_counts("noun") and wordnet.tag_counts("noun").get("qwzxv", 0) == 0


def test_doctor_says_the_judges_words_are_missing_when_the_folder_has_no_nouns(tmp_path, monkeypatch):
    # a WordNet folder of adjectives alone: the reader uses it (antonyms), the judges' nouns are not there
    (tmp_path / "index.adj").write_text("hot a 1 1 ! 1 0 00001740\n")
    (tmp_path / "data.adj").write_text("00001740 00 a 01 hot 0 000 | high in temperature\n")
    monkeypatch.setenv("AUDIOMIND_WORDNET_DIR", str(tmp_path))
    assert wordnet.wordnet_dir() == tmp_path and wordnet.holds("adj") and not wordnet.holds("noun")
    assert lexicon.doctor()["wordnet"].startswith(f"missing: {tmp_path} holds no nouns")
    (tmp_path / "index.noun").write_text("beep n 1 0 1 0 00003000\n")
    (tmp_path / "data.noun").write_text("00003000 03 n 01 beep 0 000 | a short high tone\n")
    assert lexicon.doctor()["wordnet"] == f"ok ({tmp_path})"
