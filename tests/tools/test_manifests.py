"""Every manifest in tools/ is loadable and consistent with its code, and the planner's inventory is
rendered from exactly the available manifests (so what the planner reads cannot drift from what the
executor enforces). `audiomind tools list/show` present the same data."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from audiomind.cli import app
from audiomind.resources import tools_dir
from audiomind.state import ToolCategory
from audiomind.tools.base import ToolArgs
from audiomind.tools.manifest import ToolRegistry, load_manifest

MANIFEST_FILES = sorted(tools_dir().glob("*.toml"))
WIDE = {"COLUMNS": "300"}  # rich tables fold long cells at the default 80 columns


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return ToolRegistry.load()


def test_the_packaged_tools_folder_has_the_tool_families():
    names = {p.stem for p in MANIFEST_FILES}
    assert {"probe", "crop", "gain", "normalize", "filter", "resample", "channel_split", "mixdown", "hpss",
            "denoise", "separate", "spectrogram", "waveform"} <= names


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:  # "pyannote.audio" when "pyannote" itself is absent
        return False


@pytest.mark.parametrize("path", MANIFEST_FILES, ids=[p.stem for p in MANIFEST_FILES])
def test_manifest_loads_imports_and_its_example_validates(path: Path):
    m = load_manifest(path)
    assert m.name == path.stem  # one manifest per tool, named after it
    assert m.function.strip() and m.supports and m.not_for
    assert all(s.strip() for s in m.supports + m.not_for)
    assert re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", m.entry)
    assert m.timeout_s > 0
    missing = [p for p in m.needs.packages if not _installed(p)]
    if missing:  # the entry may need them; then the tool must be reported unavailable, naming one
        ok, why = m.availability()
        assert not ok and any(p in why for p in missing)
        pytest.skip(f"{m.name}: needs {missing}, not installed here")
    assert callable(m.callable)  # the entry point imports
    model = m.args_model
    assert isinstance(model, type) and issubclass(model, ToolArgs)
    args = model.model_validate(m.example)  # the shipped example is a valid call
    assert args.artifact == m.example.get("artifact", "a0")
    assert m.argument_schema()["type"] == "object"


@pytest.mark.parametrize("path", MANIFEST_FILES, ids=[p.stem for p in MANIFEST_FILES])
def test_derivation_flags_match_the_category(path: Path):
    """audio_derivation <=> derives_audio; derived audio and pictures live in a run's folder, so those
    tools are never cached across runs."""
    m = load_manifest(path)
    assert (m.category == ToolCategory.audio_derivation) == m.derives_audio
    if m.derives_audio or m.category == ToolCategory.visual_inspection:
        assert not m.cacheable
    if m.derives_audio:  # their boundary says so in words the planner reads
        assert any("not evidence" in s for s in m.not_for)


def _inventory_names(text: str) -> set[str]:
    return set(re.findall(r"^- (\S+) \[", text, flags=re.MULTILINE))


def test_inventory_lists_exactly_the_available_tools_with_their_boundaries(registry):
    text = registry.render_inventory()
    available = {m.name for m in registry.available()}
    unavailable = {m.name for m in registry.all()} - available
    assert _inventory_names(text) == available
    for m in registry.available():
        entry = m.inventory_entry()
        assert entry in text
        assert f"[{m.category.value}]" in entry and m.function in entry
        for s in m.supports + m.not_for:
            assert s in entry  # every supports / not_for string, verbatim
        if m.derives_audio:
            assert "not evidence by itself" in entry
    for name in unavailable:
        assert f"- {name} [" not in text
    # grouped under their category headings
    for cat in {m.category for m in registry.available()}:
        assert f"## {cat.value}" in text


def test_a_tool_with_a_missing_package_is_left_out_of_the_inventory(tmp_path):
    (tmp_path / "ghost.toml").write_text(
        'name = "ghost"\ncategory = "audio_tagging"\nfunction = "needs a package that is not installed"\n'
        'supports = ["GHOST-SUPPORT-MARKER"]\nnot_for = ["GHOST-NOTFOR-MARKER"]\n'
        'entry = "ghost_pkg_xyz.tool:run"\n[needs]\npackages = ["ghost_pkg_xyz"]\n'
    )
    reg = ToolRegistry.load([tmp_path])
    ok, why = reg.availability("ghost")
    assert not ok and "ghost_pkg_xyz" in why
    text = reg.render_inventory()
    assert "ghost" not in _inventory_names(text)
    assert "GHOST-SUPPORT-MARKER" not in text and "GHOST-NOTFOR-MARKER" not in text
    assert _inventory_names(text) == {m.name for m in reg.available()}


def test_a_user_manifest_folder_adds_a_tool_to_the_inventory(tmp_path, monkeypatch):
    (tmp_path / "my_user_tool_mod.py").write_text(
        "from audiomind.tools.base import ToolArgs, ToolContext, ToolResult\n"
        "class A(ToolArgs):\n    level: int = 1\n"
        "def run(args: A, ctx: ToolContext) -> ToolResult:\n    return ToolResult(output={'level': args.level})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mdir = tmp_path / "manifests"
    mdir.mkdir()
    (mdir / "my_tool.toml").write_text(
        'name = "my_tool"\ncategory = "evaluation"\nfunction = "a user tool"\nsupports = ["USER-MARKER"]\n'
        'not_for = ["anything else"]\nentry = "my_user_tool_mod:run"\nexample = { level = 2 }\n'
    )
    reg = ToolRegistry.load([mdir])
    assert reg.availability("my_tool") == (True, "ok")
    assert "my_tool" in _inventory_names(reg.render_inventory()) and "USER-MARKER" in reg.render_inventory()
    result = CliRunner().invoke(app, ["tools", "show", "my_tool", "--tools-dir", str(mdir)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "usable here: yes" in result.output and '"level"' in result.output


def test_a_duplicate_tool_name_is_refused(tmp_path):
    (tmp_path / "crop.toml").write_text((tools_dir() / "crop.toml").read_text())
    with pytest.raises(ValueError, match="duplicate tool name 'crop'"):
        ToolRegistry.load([tmp_path])


# ---- CLI --------------------------------------------------------------------------------------------------
def test_cli_tools_list_shows_every_tool_and_its_availability(registry):
    result = CliRunner().invoke(app, ["tools", "list"], env=WIDE)
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") >= 4}
    for m in registry.all():
        assert m.name in rows, m.name
        ok, why = registry.availability(m.name)
        cells = [c.strip() for c in rows[m.name].split("│")]
        assert cells[2] == m.category.value and cells[3] == ("yes" if ok else "no")
        if not ok:
            assert why[:40] in rows[m.name]  # the reason it is not usable


def test_cli_tools_show_crop_prints_boundary_schema_and_example(registry):
    result = CliRunner().invoke(app, ["tools", "show", "crop"], env=WIDE)
    assert result.exit_code == 0, result.output
    out = result.output
    m = registry.get("crop")
    assert "- crop [audio_derivation]" in out and "usable here: yes" in out
    assert "not evidence by itself" in out
    for field in ('"start_s"', '"end_s"', '"artifact"'):
        assert field in out  # the JSON schema of the arguments
    assert '"tool": "crop"' in out and '"start_s": 1.0' in out and '"end_s": 4.0' in out  # the example
    assert f"entry: {m.entry}" in out


def test_cli_tools_show_unavailable_and_unknown(registry):
    if not registry.availability("separate")[0]:
        result = CliRunner().invoke(app, ["tools", "show", "separate"], env=WIDE)
        assert result.exit_code == 0, result.output
        assert "usable here: no" in result.output and "demucs" in result.output
        assert '"tool": "separate"' in result.output  # the example is still shown
    result = CliRunner().invoke(app, ["tools", "show", "no_such_tool"], env=WIDE)
    assert result.exit_code == 2 and "unknown tool 'no_such_tool'" in result.output


def test_hub_tools_are_listed_unavailable_with_the_reason(monkeypatch, tmp_path):
    """WhisperX alignment and pyannote diarization: real loading code, but their packages pull a torchaudio that
    does not load here and their weights come from a hub, so they say exactly what is missing."""
    from audiomind.tools.manifest import ToolRegistry

    registry = ToolRegistry.load()
    for name, package, env in (("asr_align", "whisperx", "AUDIOMIND_WHISPERX_ALIGN_DIR"),
                               ("diarize_pyannote", "pyannote.audio", "AUDIOMIND_PYANNOTE_DIR")):
        manifest = registry.get(name)
        assert manifest.category.value == "speech_and_speaker"
        assert env in manifest.needs.env and package in manifest.needs.packages
        ok, why = manifest.availability()
        if not ok and "is not installed" in why:
            assert package.split(".")[0] in why
        monkeypatch.delenv(env, raising=False)
        ok, why = manifest.availability()
        assert not ok and (package.split(".")[0] in why or env in why)
        assert name not in registry.render_inventory() or registry.availability(name)[0]
