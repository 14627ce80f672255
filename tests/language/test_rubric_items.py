"""The rule rubric reader (audiomind/language/rubric_items.py) and the rubric hard negatives
(audiomind/language/rubric_perturb.py): their English is data, every name the code asks for is in the data and
every row of the data is asked for, the reader imports no judge, and a new wording is a data row."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from audiomind.judges.rubric.decompose import SENSE, rule_decompose
from audiomind.language import rubric_items, rubric_perturb

MODULES = {rubric_items: ("P", "pattern", "_words", "_say"), rubric_perturb: ("_swap", "_any_of", "_say")}


def _names_asked(module) -> set[str]:
    """The names in the first argument of every call to the module's data accessors, and in `_data()[...][...]`."""
    tree = ast.parse(Path(module.__file__).read_text())
    calls = MODULES[module]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in calls and node.args:
            # (a constant name, or the names of a choice: `_say("count_one" if n == 1 else "count")`)
            names.update(c.value for c in ast.walk(node.args[0])
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            root = node.value
            while isinstance(root, ast.Subscript):
                root = root.value
            if isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "_data":
                names.add(node.slice.value)
    return names


@pytest.mark.parametrize("module", [rubric_items, rubric_perturb], ids=lambda m: m.__name__)
def test_every_name_the_code_asks_for_is_in_the_data_and_every_row_is_used(module):
    data = tomllib.loads(module.DATA.read_text(encoding="utf-8"))
    asked = _names_asked(module)
    sections = {k: v for k, v in data.items() if isinstance(v, dict) and k != "parts"}
    rows = {name for section in sections.values() for name in section}
    # a name asked for that no section has is a typo that fails only on its own path: catch it here
    missing = sorted(asked - set(data) - rows)
    assert missing == [], f"{module.__name__} asks for names its data file lacks: {missing}"
    # the patterns' table and the word lists: a row the code never names is dead data
    checked = {k: v for k, v in sections.items() if k in ("patterns", "words", "say")}
    unused = sorted(f"{s}.{n}" for s, table in checked.items() for n in table if n not in asked)
    assert unused == [], f"rows of {module.DATA.name} that no code reads: {unused}"


def test_every_pattern_compiles_with_its_parts_inserted():
    patterns = rubric_items._data()["patterns"]
    assert len(patterns) >= 60
    assert not [k for k, p in patterns.items() if "<<" in p.pattern], "a <<part>> was left unexpanded"
    assert rubric_items.pattern("female").search("his grandmother says")  # a word table inserted from the JSON


@pytest.mark.parametrize("module", [rubric_items, rubric_perturb], ids=lambda m: m.__name__)
def test_the_reader_imports_no_judge(module):
    tree = ast.parse(Path(module.__file__).read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module] + \
        [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith("audiomind.judges")], imported


def test_the_judges_call_the_reader():
    # the judges' names are the reader's functions with the judges' knowledge of sounds
    text = "A dog barks twice, then a man says 'hello'."
    assert [i.model_dump() for i in rule_decompose(text)] == \
        [i.model_dump() for i in rubric_items.rule_decompose(text, SENSE)]
    assert rubric_items.split_clauses(text, SENSE) == [("A dog barks twice", None), ("a man says 'hello'", "after")]
    # 'Before A, B': B happens before A; 'while': at the same time
    assert rubric_items.split_clauses("Before the bell rings, a man coughs; a gong sounds while rain falls.", SENSE) \
        == [("the bell rings", None), ("a man coughs", "before"), ("a gong sounds", None), ("rain falls", "with")]


def test_tools_an_items_wording_needs():
    assert rubric_items.tools_needed("Is 'hello' said by a female voice?") == ["pitch"]
    assert rubric_items.tools_needed("Is the music fast (a quick tempo)?") == ["tempo"]
    assert rubric_items.tools_needed("Does the man talk at a slow pace?") == ["pitch", "tempo"]
    assert rubric_items.tools_needed("Is the sound of 'rain' present?") == []
    assert rubric_items.tools_needed("Is the womanly figure there?") == []  # whole words only


def test_perturbations_by_kind():
    p = rubric_perturb.perturbed
    assert p("Twice a bell rings.", "count") == "Four times a bell rings."  # an adverb of times stays one
    assert p("A man says 'stop'.", "words") == "A man says 'nothing at all'."
    assert p("A woman says 'please close the door'.", "words") == "A woman says 'please open the window'."
    assert p("A busy signal beeps.", "sound") == "A siren beeps."  # the longest phrase first
    assert p("Telephone rings, then a man laughs.", "sound") == "Dog rings, then a man laughs."  # the capital kept
    assert p("A man speaks fast.", "tempo") is None  # tempo only where music is named
    assert p("A slow piano melody.", "tempo") == "A fast piano melody."
    assert p("A girl says 'the man left'.", "gender") == "A boy says 'the man left'."  # quoted words untouched
    assert p("Rain falls.", "order") is None


def _edited_copy(tmp_path: Path, module, old: str, new: str) -> Path:
    """A copy of the module's data file with one row added (`old` -> `new`)."""
    text = module.DATA.read_text(encoding="utf-8")
    assert text.count(old) == 1
    copy = tmp_path / module.DATA.name
    copy.write_text(text.replace(old, new), encoding="utf-8")
    return copy


def _clear() -> None:
    for cached in (rubric_perturb._data, rubric_perturb._any_of, rubric_items._data):
        cached.cache_clear()


def test_a_new_swap_or_need_is_a_row_of_data(tmp_path, monkeypatch):
    assert rubric_perturb.perturbed("A bell rings.", "sound") is None
    assert rubric_items.tools_needed("Does the audio get louder?") == []
    monkeypatch.setattr(rubric_perturb, "DATA", _edited_copy(
        tmp_path, rubric_perturb, 'music = "rain"\n', 'music = "rain"\nbell = "gong"\n'))
    monkeypatch.setattr(rubric_items, "DATA", _edited_copy(
        tmp_path, rubric_items, "[needs]\n", "[needs]\nloudness = '(?i)\\b(louder|quieter)\\b'\n"))
    _clear()
    try:
        assert rubric_perturb.perturbed("A bell rings.", "sound") == "A gong rings."
        assert rubric_items.tools_needed("Does the audio get louder?") == ["loudness"]
    finally:
        monkeypatch.undo()
        _clear()
    assert rubric_perturb.perturbed("A bell rings.", "sound") is None
