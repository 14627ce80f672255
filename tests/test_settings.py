"""Settings: one typed model (`audiomind.config.Settings`) with the environment as its documented fallback, read
nowhere else; importing the package changes nothing in `os.environ`; the third-party variables come from one
explicit call at the entry points."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import audiomind
from audiomind import config
from audiomind.config import (
    AgentConfig,
    Settings,
    apply_process_env,
    env_name,
    env_setting,
    settings,
    use_settings,
)

PACKAGE_DIR = Path(audiomind.__file__).resolve().parent
REPO = PACKAGE_DIR.parent
DOC = REPO / "docs" / "CONFIG.md"
VAR = re.compile(r"^AUDIOMIND_[A-Z0-9_]+$")

# Environment variables the package names outside config.py that are not settings, and why.
NOT_SETTINGS = {
    "AUDIOMIND_SERVE_SETTINGS": "serve.py hands its ServeSettings (JSON) to the uvicorn worker processes it starts",
    "AUDIOMIND_API_KEY": "trace.py scrubs the values of secret-looking variables out of traces; it reads no setting",
}
# Modules that access os.environ with a key that is not a literal (a loop or a parameter), and why.
DYNAMIC_ENV_READS = {
    "audiomind.trace": "scrubs the values of a fixed list of secret variables out of traces",
    "audiomind.serve": "the ServeSettings hand-off to its worker processes, and the worker thread count it passes on",
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(p.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _is_environ(node: ast.AST) -> bool:
    return ast.unparse(node) in ("os.environ", "environ")


def test_every_setting_has_a_field_an_env_var_a_default_and_a_meaning():
    assert Settings.model_config["env_prefix"] == "AUDIOMIND_"
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} says nothing about what it is"
        assert env_name(name) == "AUDIOMIND_" + name.upper()
    with pytest.raises(KeyError, match="no setting"):
        env_name("no_such_setting")


def test_the_environment_is_the_fallback_read_at_call_time(monkeypatch, tmp_path):
    for name in Settings.model_fields:
        monkeypatch.delenv(env_name(name), raising=False)
    assert settings() == Settings()
    assert settings().intra_op_threads == 2 and settings().judge_llm == "rules" and settings().cache is None
    monkeypatch.setenv("AUDIOMIND_INTRA_OP_THREADS", "3")
    monkeypatch.setenv("AUDIOMIND_CLAP_BACKEND", " MSCLAP ")
    monkeypatch.setenv("AUDIOMIND_SPICE_DIR", str(tmp_path))
    monkeypatch.setenv("AUDIOMIND_JUDGE_LLM", "")  # empty counts as unset, as before
    s = settings()
    assert (s.intra_op_threads, s.clap_backend, s.spice_dir, s.judge_llm) == (3, "msclap", tmp_path, "rules")
    monkeypatch.setenv("AUDIOMIND_INTRA_OP_THREADS", "4")  # a change is seen by the next call
    assert settings().intra_op_threads == 4


def test_a_bad_value_is_one_error_naming_its_variable(monkeypatch):
    monkeypatch.setenv("AUDIOMIND_INTRA_OP_THREADS", "two")
    with pytest.raises(ValueError, match="AUDIOMIND_INTRA_OP_THREADS") as e:
        settings()
    assert "Traceback" not in str(e.value) and "/" not in str(e.value)
    with pytest.raises(ValueError):
        Settings(no_such_setting=1)  # a typo in code is an error, not a silent default


def test_installed_settings_win_over_the_environment_and_reach_the_modules(monkeypatch, tmp_path):
    from audiomind.embedded import models, sessions
    from audiomind.judges import caption_metrics, clap
    from audiomind.judges.base import default_models
    from audiomind.tools.manifest import ToolRegistry

    manifest = ToolRegistry.load().get("asr_align")
    folder_only = manifest.model_copy(update={"needs": manifest.needs.model_copy(update={"packages": []})})
    monkeypatch.setenv("AUDIOMIND_INTRA_OP_THREADS", "3")
    monkeypatch.setenv("AUDIOMIND_JUDGE_LLM", "ollama:from-env")
    monkeypatch.delenv("AUDIOMIND_WHISPERX_ALIGN_DIR", raising=False)
    cache = tmp_path / "cache"
    align = tmp_path / "align"
    align.mkdir()
    with use_settings(intra_op_threads=1, judge_llm="rules", cache=cache, clap_ckpt=tmp_path / "none.pt",
                      fense_dir=tmp_path, whisperx_align_dir=align) as s:
        assert settings() is s and s.judge_frontend == "cascade"
        assert sessions.intra_op_threads() == 1
        assert default_models().llm == "rules"
        assert models.cache_dir() == cache and cache.is_dir()
        assert caption_metrics.fense_files() is None  # no checkpoint in the folder
        st = clap.clap_status()
        assert not st.available and ("none.pt" in st.reason or "installed" in st.reason)
        assert env_setting("AUDIOMIND_WHISPERX_ALIGN_DIR") == str(align)
        # the manifest's `needs.env` is met by the installed setting (packages aside: whisperx is optional)
        assert folder_only.availability() == (True, "ok")
    ok, why = folder_only.availability()
    assert not ok and "AUDIOMIND_WHISPERX_ALIGN_DIR" in why
    assert sessions.intra_op_threads() == 3 and default_models().llm == "ollama:from-env"
    # explicit values beat both
    assert sessions.intra_op_threads(5) == 5
    assert default_models(Settings(judge_frontend="gemini:x")).frontend == "gemini:x"
    assert models.cache_dir(tmp_path / "explicit") == tmp_path / "explicit"


def test_env_setting_maps_manifest_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("AUDIOMIND_PYANNOTE_DIR", str(tmp_path))
    assert env_setting("AUDIOMIND_PYANNOTE_DIR") == str(tmp_path)
    assert env_setting("AUDIOMIND_NO_SUCH_SETTING") is None
    monkeypatch.setenv("SOME_THIRD_PARTY_DIR", "x")
    assert env_setting("SOME_THIRD_PARTY_DIR") == "x"


def test_apply_process_env_sets_only_what_is_missing(monkeypatch):
    for var in (*config.PROCESS_ENV, *config.QUIET_ENV):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # a value already there wins
    assert apply_process_env() == {}
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE" and "HF_HUB_OFFLINE" not in os.environ
    assert apply_process_env(quiet=True) == config.QUIET_ENV
    monkeypatch.delenv("OMP_WAIT_POLICY")
    assert apply_process_env() == {"OMP_WAIT_POLICY": "PASSIVE"}


_IMPORT_ALL = r"""
import importlib, json, os, sys
before = dict(os.environ)
failed = {}
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except ImportError as exc:  # an optional third-party package that is not installed here
        failed[name] = f"{type(exc).__name__}: {exc}"
after = dict(os.environ)
changed = {k: [before.get(k), after.get(k)] for k in set(before) | set(after) if before.get(k) != after.get(k)}
print(json.dumps({"changed": changed, "failed": failed}))
"""


def test_importing_every_module_leaves_the_environment_unchanged():
    names = [n for n in _modules() if not n.endswith("__main__")]
    env = {k: v for k, v in os.environ.items()
           if k not in (*config.PROCESS_ENV, *config.QUIET_ENV) and k != "TRANSFORMERS_VERBOSITY"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL, json.dumps(names)], check=False, env=env, capture_output=True,
                          text=True, timeout=240, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["changed"] == {}, f"importing the package changed the environment: {out['changed']}"
    # every module imported: a missing optional package would hide its module from this check
    assert out["failed"] == {}, out["failed"]


def test_no_module_but_config_reads_an_audiomind_variable():
    offenders = []
    for name, path in _modules().items():
        if name == "audiomind.config":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}"
            # the name of a variable as a literal (the way a module reads one); prose that mentions one is fine
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and VAR.match(node.value) and node.value not in NOT_SETTINGS):
                offenders.append(f"{where}: {node.value!r}")
            # os.environ / os.getenv with a key computed at run time: it could be any AUDIOMIND_* variable
            key = None
            if isinstance(node, ast.Call):
                f = node.func
                if ((isinstance(f, ast.Attribute) and _is_environ(f.value) and f.attr in ("get", "setdefault", "pop"))
                        or ast.unparse(f) in ("os.getenv", "getenv")) and node.args:
                    key = node.args[0]
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                key = node.slice
            elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
                key = node.left
            if key is not None and not isinstance(key, ast.Constant) and name not in DYNAMIC_ENV_READS:
                offenders.append(f"{where}: os.environ[{ast.unparse(key)}]")
    assert offenders == [], "read settings through audiomind.config.settings():\n" + "\n".join(offenders)


def test_the_settings_table_in_the_docs_matches_the_model():
    text = DOC.read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| `(AUDIOMIND_\w+)` \|", text, re.MULTILINE)}
    assert rows == {name: env_name(name) for name in Settings.model_fields}
    agent = text.split("## `AgentConfig`", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `(\w+)` \|", agent, re.MULTILINE)) == set(AgentConfig.model_fields)
    assert all(f"`{var}`" in text for var in (*config.PROCESS_ENV, *config.QUIET_ENV))
