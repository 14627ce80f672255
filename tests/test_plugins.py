"""Registry[T] and the `audiomind.plugins` entry-point group.

The plugin tests install tests/data/plugin_pkg (a real package: pyproject + module) with
`pip install --no-deps --target SITE`, then run the real CLI in a subprocess with SITE on PYTHONPATH: the
plugin's tool, planner backend, benchmark task and judge (with the agent tool its spec declares) are seen
without anything under audiomind/ changing. A
second, broken plugin (a dist-info whose entry point raises after registering) is left out, its
registration taken back, and `audiomind doctor` reports it. The plugin's descriptor (a module and one
manifest carrying its vocabulary row and reliability) answers a question about a synthesised clip above
chance, with the competence stage naming the bank derived from the declarations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from audiomind.registry import Registry, RegistryError, UnknownNameError

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_SRC = ROOT / "tests" / "data" / "plugin_pkg"
BIN = Path(sys.executable).parent


# ---------------------------------------------------------------- Registry[T] itself


def test_register_by_call_decorator_and_lazy_target():
    reg: Registry[object] = Registry("widget")
    reg.register("path", "pathlib:PurePosixPath")  # lazy: imported on first get
    assert reg.target("path") == "pathlib:PurePosixPath"

    @reg.register("mine")
    class Mine:
        pass

    assert reg.names() == ["path", "mine"]
    from pathlib import PurePosixPath

    assert reg.get("path") is PurePosixPath and reg["mine"] is Mine
    assert "mine" in reg and "other" not in reg and len(reg) == 2
    assert reg.origin("mine") == "audiomind"


def test_unknown_names_and_taken_names_are_clear_errors():
    reg: Registry[int] = Registry("widget")
    reg.register("one", 1)
    with pytest.raises(UnknownNameError, match=r"^unknown widget 'two'; known: one$"):
        reg.get("two")
    with pytest.raises(ValueError):  # an UnknownNameError is a ValueError (and a KeyError) too
        reg["two"]
    with pytest.raises(RegistryError, match="'one' is already registered"):
        reg.register("one", 2)
    reg.register("one", 2, replace=True)
    assert reg.get("one") == 2
    with pytest.raises(RegistryError, match=r"must be 'package.module:attribute'"):
        reg.register("bad", "no_colon_here")


def test_builtin_registries_keep_their_names():
    from audiomind.backends.registry import REGISTRY as BACKENDS
    from audiomind.bench.tasks import REGISTRY as TASKS
    from audiomind.bench.tasks import task_class
    from audiomind.bench.tasks.mmar import MMARTask

    assert {"rules", "cascade", "openai", "replay"} <= set(BACKENDS)
    assert task_class("mmar") is MMARTask and TASKS.origin("mmar") == "audiomind"
    with pytest.raises(ValueError, match="unknown task 'nope'; known: mmar, msu"):
        task_class("nope")


def test_judge_registry_entries_resolve_to_their_function_tool_and_task():
    """Every judge's function, result model, agent tool and benchmark task exist under the names its entry gives."""
    import inspect

    from pydantic import BaseModel

    from audiomind.bench.tasks import task_names
    from audiomind.judges.tools import JUDGES
    from audiomind.tools.manifest import ToolRegistry

    tools = ToolRegistry.load()
    assert JUDGES.names() == ["edit", "rubric", "aura"]
    for name in JUDGES:
        entry = JUDGES[name]
        fn = entry.function()
        assert callable(fn) and issubclass(entry.result_model(), BaseModel), name
        assert inspect.signature(fn).return_annotation in (entry.result_model().__name__, entry.result_model()), name
        assert entry.tool_name in tools and entry.task in task_names(), name


# ---------------------------------------------------------------- a real installed plugin


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """SITE with the demo plugin installed (built from a copy, so no build files land in tests/data) and a
    broken plugin beside it: a dist-info whose entry point registers a task, then raises."""
    work = tmp_path_factory.mktemp("plugin")
    src = work / "src"
    shutil.copytree(PLUGIN_SRC, src)
    site = work / "site"
    proc = _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
                 "--target", str(site), str(src)], dict(os.environ), work, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (site / "audiomind_demo_plugin" / "tools" / "peak_level.toml").is_file()
    (site / "audiomind_broken_plugin.py").write_text(textwrap.dedent('''
        def register(registries):
            registries.tasks.register("broken-task", "audiomind_broken_plugin:Nothing")
            raise RuntimeError("this plugin is broken on purpose")
    '''))
    info = site / "audiomind_broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: audiomind-broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[audiomind.plugins]\nbroken = audiomind_broken_plugin:register\n")
    return site


@pytest.fixture(scope="module")
def plugin_env(plugin_site) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(plugin_site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["NO_COLOR"] = "1"
    return env


def test_plugin_tool_appears_in_tools_list(plugin_env, tmp_path):
    proc = _run([str(BIN / "audiomind"), "tools", "list", "--json"], plugin_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tools = {t["name"]: t for t in json.loads(proc.stdout)["tools"]}
    assert tools["peak_level"]["usable"] is True, tools["peak_level"]
    assert tools["peak_level"]["category"] == "acoustic_music_features"
    assert "asr" in tools  # the packaged tools are still there


RMS_TOL_DB = 0.01  # the judge reads the 16-bit file back: quantisation moves the RMS of a -9 dBFS tone by ~1e-4 dB


def test_plugin_judge_is_a_command_and_an_agent_tool(plugin_env, tmp_path):
    """The plugin registers only a JudgeSpec: its tool (manifest derived from the spec) is listed and runs
    through the real executor, and `audiomind judge demo-level` runs the same judge."""
    from audiomind import audio as audio_io
    from audiomind.synth import SR, tone

    y = tone(440.0, 1.0, amplitude=0.5)
    rms_db = 20 * np.log10(np.sqrt(np.mean(np.square(y, dtype=np.float64))))  # about -9.09 dBFS (faded ends)
    clip = audio_io.write_wav(tmp_path / "tone.wav", y, SR)
    listed = _run([str(BIN / "audiomind"), "tools", "list", "--json"], plugin_env, tmp_path)
    assert listed.returncode == 0, listed.stderr[-3000:]
    tools = {t["name"]: t for t in json.loads(listed.stdout)["tools"]}
    assert tools["judge_demo-level"]["usable"] is True and tools["judge_demo-level"]["category"] == "evaluation"
    script = textwrap.dedent(f'''
        import json
        from audiomind.artifacts import make_artifact
        from audiomind.state import ToolCallRequest
        from audiomind.tools.executor import ToolExecutor
        from audiomind.tools.manifest import ToolRegistry
        ex = ToolExecutor(ToolRegistry.load(), {str(tmp_path / "derived")!r})
        res = ex.run([ToolCallRequest(tool="judge_demo-level", arguments={{"artifact": "a0", "floor_db": -20}})],
                     [make_artifact("a0", {str(clip)!r})], step=0)
        call = res.tool_calls[0]
        print(json.dumps({{"status": call.status.value, "error": call.error, "output": call.output,
                          "claims": [e.claim for e in res.evidence]}}))
    ''')
    proc = _run([sys.executable, "-c", script], plugin_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == "ok", out["error"]
    assert set(out["output"]) == {"rms_db", "passed", "judge_trace"} and out["output"]["passed"] is True
    assert abs(out["output"]["rms_db"] - rms_db) < RMS_TOL_DB
    assert Path(out["output"]["judge_trace"]).is_file() and out["claims"][0].startswith("RMS level of a0")
    cli = _run([str(BIN / "audiomind"), "judge", "demo-level", str(clip), "--floor-db", "-6", "--json",
                "--trace-dir", str(tmp_path / "traces")], plugin_env, tmp_path)
    assert cli.returncode == 0, cli.stderr[-3000:]
    verdict = json.loads(cli.stdout)
    assert verdict["passed"] is False and abs(verdict["rms_db"] - rms_db) < RMS_TOL_DB


@pytest.fixture(scope="module")
def bad_judge_env(tmp_path_factory) -> dict[str, str]:
    """A plugin that loads but whose judges cannot be tools: one names a spec that does not exist, one declares a
    tool under a name a built-in judge has."""
    site = tmp_path_factory.mktemp("bad-judge-site")
    pkg = site / "audiomind_badjudge_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        def register(registries):
            registries.judges.register("ghost", "audiomind_badjudge_plugin.nowhere:SPEC")
            registries.judges.register("aura-again", "audiomind_badjudge_plugin.again:SPEC")
    '''))
    (pkg / "again.py").write_text(textwrap.dedent('''
        from audiomind.judges.specs.aura import SPEC as AURA
        from audiomind.judges.tools import JUDGE_TRACE, output_model

        TOOL = AURA.tool.model_copy(update={"name": "judge_aura",
                                            "output": output_model("AgainOutput", {"judge_trace": JUDGE_TRACE})})
        SPEC = AURA.model_copy(update={"name": "aura-again", "tool": TOOL})
    '''))
    info = site / "audiomind_badjudge_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: audiomind-badjudge-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[audiomind.plugins]\nbadjudge = audiomind_badjudge_plugin:register\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_a_plugin_judge_that_cannot_be_a_tool_is_left_out_and_reported(bad_judge_env, tmp_path):
    listed = _run([str(BIN / "audiomind"), "tools", "list", "--json"], bad_judge_env, tmp_path)
    assert listed.returncode == 0, listed.stderr[-3000:]
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert names.count("judge_aura") == 1 and {"judge_edit", "judge_rubric"} <= set(names)
    assert "judge_ghost" not in names and "judge_aura-again" not in names
    doctor = _run([str(BIN / "audiomind"), "doctor", "--json"], bad_judge_env, tmp_path)
    assert doctor.returncode == 0, doctor.stderr[-3000:]
    rows = {r["name"]: r for r in json.loads(doctor.stdout)["rows"] if r["kind"] == "plugin"}
    assert rows["badjudge"]["usable"] and "judges: ghost, aura-again" in rows["badjudge"]["detail"]
    assert not rows["badjudge:judge ghost"]["usable"] and "nowhere" in rows["badjudge:judge ghost"]["detail"]
    assert "tool name 'judge_aura' is taken: left out" in rows["badjudge:judge aura-again"]["detail"]


def test_a_plugin_judge_that_does_not_load_leaves_the_other_judges_their_command_and_route(bad_judge_env,
                                                                                           tmp_path):
    """`audiomind judge --help` lists the judges that load, and the service gets a route for each of them and
    none for the one whose spec does not import (it used to crash both)."""
    helped = _run([str(BIN / "audiomind"), "judge", "--help"], bad_judge_env, tmp_path)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert all(name in helped.stdout for name in ("edit", "rubric", "aura")) and "ghost" not in helped.stdout
    routes = _run([str(BIN / "python"), "-c",
                   ("from audiomind.serve import create_app\n"
                   "print(sorted(r.path for r in create_app().routes if r.path.startswith('/v1/judge/')))")],
                  bad_judge_env, tmp_path)
    assert routes.returncode == 0, routes.stderr[-3000:]
    assert all(f"/v1/judge/{n}" in routes.stdout for n in ("edit", "rubric", "aura"))
    assert "/v1/judge/ghost" not in routes.stdout


def test_plugin_planner_backend_and_broken_plugin_in_process(plugin_env, tmp_path):
    """The plugin's spec kind parses and builds a planner; the broken plugin is reported and taken back."""
    script = textwrap.dedent('''
        import json
        from audiomind.backends.registry import REGISTRY, describe_backends, make_planner, parse_spec
        from audiomind.backends.planners.rules import RulesPlanner
        from audiomind.bench.tasks import task_names
        from audiomind.registry import plugin_status
        from audiomind.tools.manifest import ToolRegistry
        spec = parse_spec("demo-rules")
        planner = make_planner("demo-rules", registry=ToolRegistry.load())
        try:
            parse_spec("nonesuch")
        except ValueError as exc:
            unknown = str(exc)
        print(json.dumps({
            "kind": spec.kind, "planner": type(planner).__name__, "origin": REGISTRY.origin("demo-rules"),
            "is_rules": isinstance(planner, RulesPlanner), "unknown": unknown,
            "doctor": [b.model_dump() for b in describe_backends() if b.name == "demo-rules"],
            "tasks": task_names(), "plugins": [p.model_dump() for p in plugin_status()]}))
    ''')
    proc = _run([sys.executable, "-c", script], plugin_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["kind"] == "demo-rules" and out["origin"] == "demo" and out["is_rules"]
    assert "demo-rules (from plugins)" in out["unknown"]
    assert out["doctor"][0]["usable"] and "planner" in out["doctor"][0]["why"]
    assert "demo-loudness" in out["tasks"] and "broken-task" not in out["tasks"]  # taken back
    plugins = {p["name"]: p for p in out["plugins"]}
    assert plugins["demo"]["ok"] and plugins["demo"]["added"] == {
        "tools": ["demo"], "backends": ["demo-rules"], "tasks": ["demo-loudness"], "judges": ["demo-level"]}
    assert not plugins["broken"]["ok"] and "broken on purpose" in plugins["broken"]["detail"]


def test_plugin_benchmark_task_runs_through_bench_run(plugin_env, tmp_path):
    from audiomind import audio as audio_io
    from audiomind.synth import SR, silence, tone

    rows = []
    for i, amp in enumerate([0.9, 0.02, 0.5, 0.01]):
        y = audio_io.write_wav(tmp_path / f"c{i}.wav", np.concatenate(
            [silence(0.2), tone(440.0, 0.6, amplitude=amp), silence(0.2)]), SR)
        rows.append({"id": f"c{i}", "audio": y.name, "question": "Is this clip loud or quiet?",
                     "choices": ["loud", "quiet"], "answer": "loud" if amp >= 0.25 else "quiet"})
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    proc = _run([str(BIN / "audiomind"), "bench", "run", "--task", "demo-loudness", "--source", str(items),
                 "--out", str(out), "--json"], plugin_env, tmp_path)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in results}
    assert [by_id[f"c{i}"]["prediction"] for i in range(4)] == ["loud", "quiet", "loud", "quiet"]
    assert all(r["correct"] is True for r in results)
    # the rationale carries the measured peak: 20 log10(0.9) = -0.92 dBFS (tolerance 0.05 dB)
    peak = float(by_id["c0"]["rationale"].split()[1])
    assert abs(peak - (-0.92)) < 0.05


def test_doctor_reports_the_plugins(plugin_env, tmp_path):
    proc = _run([str(BIN / "audiomind"), "doctor", "--json"], plugin_env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {r["name"]: r for r in json.loads(proc.stdout)["rows"] if r["kind"] == "plugin"}
    assert rows["demo"]["usable"] and "tasks: demo-loudness" in rows["demo"]["detail"]
    assert not rows["broken"]["usable"] and "RuntimeError: this plugin is broken on purpose" in rows["broken"]["detail"]


# ---------------------------------------------------------------- a descriptor in two files


def _shape_clip(shape: str, f0: float, seconds: float = 1.5, snr_db: float | None = None, seed: int = 0):
    t = np.arange(int(16000 * seconds)) / 16000
    y = {"sine": np.sin(2 * np.pi * f0 * t), "square": np.sign(np.sin(2 * np.pi * f0 * t)),
         "sawtooth": 2 * ((t * f0) % 1) - 1}[shape] * 0.4
    if snr_db is not None:
        rms = float(np.sqrt(np.mean(y ** 2)))
        y = y + np.random.default_rng(seed).normal(0.0, rms / 10 ** (snr_db / 20), len(y))
    return y.astype(np.float32)


def test_the_plugin_descriptor_meets_the_reliability_its_manifest_states():
    """The construction cases the manifest's [reliability] names: 3 shapes x 4 pitches, clean and in noise."""
    import importlib.util
    import tomllib
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location(
        "demo_waveform", PLUGIN_SRC / "audiomind_demo_plugin" / "waveform.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # pydantic resolves the output model's annotations through it
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
    right = 0
    cases = [(s, f, n) for s in ("sine", "square", "sawtooth") for f in (110, 220, 440, 880) for n in (None, 20)]
    for shape, f0, snr in cases:
        y = _shape_clip(shape, f0, snr_db=snr, seed=f0)
        ctx = SimpleNamespace(audio=lambda _a, y=y: SimpleNamespace(samples=lambda sr, mono: y))
        right += mod.waveform_shape(mod.WaveformShapeArgs(), ctx).output["label"] == shape
    manifest = tomllib.loads((PLUGIN_SRC / "audiomind_demo_plugin" / "tools" / "waveform_shape.toml").read_text())
    assert right == len(cases) == 24
    assert manifest["reliability"]["value"] <= 0.1 ** (1 / right) and "24 of 24" in manifest["reliability"]["measured_on"]


def test_a_plugin_descriptor_in_two_files_answers_above_chance_without_regenerating_anything(plugin_env, tmp_path):
    """The plugin's descriptor is a module and one manifest (tool, [reliability], [[vocabulary.property]]): a
    question only it can answer, about a real clip, is answered right with a confidence above chance, and the
    ledger's competence step names the bank derived from the declarations, this descriptor's among them."""
    from audiomind import audio as audio_io

    question = "Which waveform is this synthesizer tone?"
    choices = ["a pure sine wave", "a square wave", "a sawtooth wave"]
    clips = {shape: audio_io.write_wav(tmp_path / f"{shape}.wav", _shape_clip(shape, 220.0), 16000)
             for shape in ("square", "sawtooth")}
    script = textwrap.dedent(f'''
        import json
        from audiomind import AudioMind
        from audiomind.reasoning import competence
        agent = AudioMind(planner="rules", frontend="cascade", trace_dir={str(tmp_path / "traces")!r},
                          cache_dir={str(tmp_path / "cache")!r})
        out = {{}}
        for shape, clip in {json.dumps({k: str(v) for k, v in clips.items()})}.items():
            r = agent.ask(clip, {question!r}, {choices!r})
            trace = json.load(open(r.trace_path))
            out[shape] = {{"choice_index": r.choice_index, "confidence": r.confidence, "rationale": r.rationale,
                          "reason": r.confidence_reason, "steps": trace["final_answer"]["confidence_steps"]}}
        b = competence.bank()
        out["bank"] = {{"name": b.name, "sha256": b.sha256,
                       "waveform": [d.model_dump() for d in b.declarations if d.check == "property_waveform"]}}
        print(json.dumps(out))
    ''')
    proc = _run([sys.executable, "-c", script], plugin_env, tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    bank = out["bank"]
    assert bank["name"] == "declared-" + bank["sha256"][:12]
    [decl] = bank["waveform"]
    assert "What shape is the waveform of the tone?" in decl["examples"]
    assert decl["not_for"][0] == "what instrument or source makes the sound"
    for shape, want in (("square", 1), ("sawtooth", 2)):
        r = out[shape]
        assert r["choice_index"] == want, r
        assert "waveform_shape measures waveform" in r["rationale"], r["rationale"]
        assert r["confidence"] > 1 / len(choices), r["reason"]
        [step] = [s for s in r["steps"] if s["stage"] == "competence"]
        assert step["parameters"]["table"] == bank["name"] and step["parameters"]["sha256"] == bank["sha256"]
        assert step["parameters"]["inputs"]["check"] == "property_waveform"
        assert step["output"] > 1 / len(choices)
