"""Typed tool outputs: every shipped manifest names a pydantic output model next to its tool, the executor
validates every result (fresh or cached) against it, and a tool whose output breaks its declared model
gives an `error` call with a readable message while the run goes on. `audiomind tools show` prints the
model's JSON schema, or says the output is untyped.

User tools come from a temporary --tools-dir (a manifest plus a module on sys.path), as a user would add
them; the shipped tools run on real generated audio."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from audiomind import synth
from audiomind.artifacts import ingest_original
from audiomind.cli import app
from audiomind.resources import tools_dir
from audiomind.state import ToolCallRequest, ToolCallStatus
from audiomind.tools.base import ToolOutput, typed_output
from audiomind.tools.events import CountEventsOutput
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ManifestError, ToolRegistry, load_manifest

MANIFEST_FILES = sorted(tools_dir().glob("*.toml"))
WIDE = {"COLUMNS": "300"}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _models_in(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The model and every model nested in its fields (lists, unions, dict values), each once."""
    import typing

    seen: list[type[BaseModel]] = []

    def walk(tp) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in seen:
                seen.append(tp)
                for f in tp.model_fields.values():
                    walk(f.annotation)
            return
        for arg in typing.get_args(tp):
            walk(arg)

    walk(model)
    return seen


# ---- every shipped manifest names a model that loads ------------------------------------------------------
@pytest.mark.parametrize("path", MANIFEST_FILES, ids=[p.stem for p in MANIFEST_FILES])
def test_every_shipped_manifest_names_an_output_model_next_to_its_tool(path: Path):
    m = load_manifest(path)
    assert m.output_model, f"{path.name} names no output_model"
    cls = m.output_class
    assert isinstance(cls, type) and issubclass(cls, ToolOutput)
    assert cls.__name__ == f"{_camel(m.name)}Output"
    assert m.output_model.split(":")[0] == m.entry.split(":")[0]  # defined in the tool's own module
    for model in _models_in(cls):  # unknown keys are an error, at every level
        assert model.model_config.get("extra") == "forbid", model.__name__
        for fname, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{fname} has no description"
    schema = cls.model_json_schema()
    assert schema["type"] == "object" and schema["properties"]
    assert m.availability() == m.availability()  # loading it is stable (cached)


def test_output_models_keep_the_tool_modules_light():
    """Importing every output model loads no heavy library (they are imported inside the tools)."""
    import subprocess
    import sys

    code = ("import sys\nfrom audiomind.tools.manifest import ToolRegistry\n"
            "[m.output_class for m in ToolRegistry.load().all()]\n"
            "print(sorted(k for k in ('librosa', 'torch', 'onnxruntime', 'faster_whisper', 'onnx', 'matplotlib')"
            " if k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_typed_output_reads_a_call_output_as_its_model():
    assert typed_output(None, CountEventsOutput) is None
    assert typed_output({}, CountEventsOutput) is None
    o = typed_output({"count": 1, "events": [{"start_s": 0.5, "end_s": 0.7, "peak_dbfs": -9.0}],
                      "events_truncated": False, "threshold_dbfs": -39.0, "threshold_from": "clip_peak",
                      "clip_peak_dbfs": -9.0, "noise_floor_dbfs": -200.0, "above_floor_db": 95.5,
                      "mean_inter_onset_s": None, "inter_onset_std_s": None, "events_per_s": 0.5,
                      "duration_s": 2.0}, CountEventsOutput)
    assert o.count == 1 and o.events[0].end_s == 0.7
    with pytest.raises(Exception, match="count"):
        typed_output({"count": "many"}, CountEventsOutput)


# ---- the shipped tools through the executor, on real audio ----------------------------------------------
@pytest.fixture(scope="module")
def shipped() -> ToolRegistry:
    return ToolRegistry.load()


@pytest.fixture(scope="module")
def stereo_clip(tmp_path_factory) -> Path:
    """Left: three beeps; right: a steady 300 Hz tone (1.5 s each side of silence around them)."""
    from audiomind import audio as aio

    root = tmp_path_factory.mktemp("typed")
    left = aio.load(synth.beeps(3, root / "b.wav"), sr=synth.SR)
    right = np.zeros_like(left)
    right[: int(1.5 * synth.SR)] = synth.tone(300.0, 1.5, 0.3)
    return aio.write_wav(root / "stereo.wav", np.stack([left, right]), synth.SR)


CHEAP_CALLS = [
    ("probe", {}), ("signal_stats", {}), ("count_events", {}), ("silence_intervals", {}), ("loudness", {}),
    ("spectral", {}), ("crop", {"start_s": 0.2, "end_s": 1.0}), ("gain", {"gain_db": -6.0}),
    ("normalize", {"mode": "lufs"}), ("filter", {"kind": "bandpass", "low_hz": 200.0, "high_hz": 2000.0}),
    ("resample", {"target_rate": 8000}), ("channel_split", {}), ("mixdown", {"mode": "side"}),
    ("hpss", {}), ("denoise", {}), ("spectrogram", {"width_px": 400, "height_px": 200}),
    ("waveform", {"width_px": 400, "height_px": 200}), ("key", {}), ("chords", {}), ("tempo", {}),
    ("pitch", {"end_s": 1.5}),
]


def test_real_tool_outputs_validate_against_their_models_through_the_executor(shipped, stereo_clip, tmp_path):
    a0 = ingest_original(stereo_clip)
    calls = [(t, a) for t, a in CHEAP_CALLS if shipped.availability(t)[0]]
    assert len(calls) >= 15
    ex = ToolExecutor(shipped, tmp_path / "derived", max_workers=2)
    res = ex.run([ToolCallRequest(tool=t, arguments=a) for t, a in calls], [a0], step=1)
    for call, (tool, _) in zip(res.tool_calls, calls):
        assert call.status == ToolCallStatus.ok, f"{tool}: {call.error}"
        model = shipped.get(tool).output_class
        typed = typed_output(call.output, model)
        assert isinstance(typed, model)
        assert call.output == typed.model_dump(mode="json")  # stored as the model's JSON dump
        json.dumps(call.output)  # JSON-ready, no numpy scalars
    by_tool = {c.tool: c for c in res.tool_calls}
    ce = typed_output(by_tool["count_events"].output, CountEventsOutput)
    # in the mono downmix the right channel's tone (0-1.5 s) joins the first two beeps into one sound
    assert ce.count == 2 and ce.events[-1].start_s == pytest.approx(1.9, abs=0.03)


def test_cached_results_are_validated_and_a_stale_entry_is_a_miss(shipped, tmp_path):
    clip = synth.beeps(2, tmp_path / "two.wav")
    a0 = ingest_original(clip)
    cache = ToolCache(tmp_path / "cache")
    ex = ToolExecutor(shipped, tmp_path / "derived", cache=cache)
    req = [ToolCallRequest(tool="count_events", arguments={})]
    first = ex.run(req, [a0], step=1).tool_calls[0]
    second = ex.run(req, [a0], step=2).tool_calls[0]
    assert first.status == ToolCallStatus.ok and second.status == ToolCallStatus.cached
    assert second.output == first.output and typed_output(second.output, CountEventsOutput).count == 2
    # an entry written before the model changed (a key the model no longer has, one it needs missing)
    entry = next((tmp_path / "cache").rglob(f"{first.cache_key}.json"))
    data = json.loads(entry.read_text())
    data["output"].pop("noise_floor_dbfs")
    data["output"]["old_key"] = 1
    entry.write_text(json.dumps(data))
    third = ex.run(req, [a0], step=3).tool_calls[0]
    assert third.status == ToolCallStatus.ok, third.error  # run again, not an error and not the stale output
    assert third.output == first.output
    assert "old_key" not in json.loads(entry.read_text())["output"]  # and the entry is rewritten


# ---- a user's tool that breaks its declared model ----------------------------------------------------------
USER_MODULE = "audiomind_test_typed_usertools"
USER_SOURCE = '''
from pydantic import BaseModel, ConfigDict, Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolResult


class TallyArgs(ToolArgs):
    honest: bool = Field(True, description="return an output that fits TallyOutput")


class TallyOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = Field(description="how many")
    unit: str = Field(description="of what")


def tally(args: TallyArgs, ctx: ToolContext) -> ToolResult:
    ctx.audio(args.artifact)
    if args.honest:
        out = {"count": 3, "unit": "beeps"}
    else:
        out = {"count": "three", "units": "beeps"}  # wrong type, misspelt key, required key missing
    return ToolResult(output=out, claims=[Claim(text=f"tally: {out['count']}")])


NOT_A_MODEL = 42
'''


def _user_manifest(name: str, output_model: str | None) -> str:
    text = (f'name = "{name}"\nversion = "1"\ncategory = "evaluation"\nfunction = "test tool {name}"\n'
            f'supports = ["nothing: a test tool"]\nnot_for = ["anything real"]\n'
            f'entry = "{USER_MODULE}:tally"\ncacheable = false\nexample = {{ artifact = "a0" }}\n')
    if output_model is not None:
        text += f'output_model = "{output_model}"\n'
    return text


USER_MANIFESTS = {
    "tally": f"{USER_MODULE}:TallyOutput",
    "tally_untyped": None,
    "tally_missing_model": f"{USER_MODULE}:NoSuchOutput",
    "tally_not_a_model": f"{USER_MODULE}:NOT_A_MODEL",
}


@pytest.fixture
def user_registry(tmp_path, monkeypatch) -> tuple[ToolRegistry, Path]:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / f"{USER_MODULE}.py").write_text(USER_SOURCE)
    (tmp_path / "manifests").mkdir()
    for name, model in USER_MANIFESTS.items():
        (tmp_path / "manifests" / f"{name}.toml").write_text(_user_manifest(name, model))
    monkeypatch.syspath_prepend(str(tmp_path / "code"))
    return ToolRegistry.load([tmp_path / "manifests"]), tmp_path / "manifests"


def test_an_output_that_breaks_its_model_is_an_error_call_and_the_run_goes_on(user_registry, tmp_path):
    registry, _ = user_registry
    a0 = ingest_original(synth.beeps(3, tmp_path / "b3.wav"))
    reqs = [ToolCallRequest(tool="tally", arguments={"honest": False}),
            ToolCallRequest(tool="tally", arguments={"honest": True}),
            ToolCallRequest(tool="count_events", arguments={})]
    res = ToolExecutor(registry, tmp_path / "derived").run(reqs, [a0], step=1)
    bad, good, real = res.tool_calls
    assert bad.status == ToolCallStatus.error and bad.output is None
    assert bad.error.startswith("output does not match TallyOutput: ")
    for problem in ("count: Input should be a valid integer", "unit: Field required", "units: Extra inputs"):
        assert problem in bad.error
    assert good.status == ToolCallStatus.ok and good.output == {"count": 3, "unit": "beeps"}
    assert real.status == ToolCallStatus.ok and typed_output(real.output, CountEventsOutput).count == 3
    # no evidence from the broken call; the others' claims are evidence as usual
    assert {e.source_id for e in res.evidence} == {good.id, real.id}


def test_a_user_manifest_without_output_model_is_valid_and_untyped(user_registry, tmp_path):
    registry, manifests = user_registry
    m = registry.get("tally_untyped")
    assert m.output_model is None and m.output_class is None and m.availability() == (True, "ok")
    a0 = ingest_original(synth.beeps(1, tmp_path / "b1.wav"))
    res = ToolExecutor(registry, tmp_path / "derived").run(
        [ToolCallRequest(tool="tally_untyped", arguments={"honest": False})], [a0], step=1)
    assert res.tool_calls[0].status == ToolCallStatus.ok  # nothing declared, nothing enforced
    assert res.tool_calls[0].output == {"count": "three", "units": "beeps"}
    out = CliRunner().invoke(app, ["tools", "show", "tally_untyped", "--tools-dir", str(manifests)], env=WIDE)
    assert out.exit_code == 0, out.output
    assert "untyped output" in out.output


@pytest.mark.parametrize("name,why", [("tally_missing_model", "has no attribute 'NoSuchOutput'"),
                                      ("tally_not_a_model", "is not a pydantic BaseModel subclass")])
def test_an_output_model_that_cannot_be_loaded_names_the_manifest_file(name, why, user_registry, tmp_path):
    registry, manifests = user_registry
    m = registry.get(name)
    with pytest.raises(ManifestError, match=why) as exc:
        m.output_class  # noqa: B018
    assert str(manifests / f"{name}.toml") in str(exc.value)
    ok, reason = registry.availability(name)
    assert not ok and why in reason and f"{name}.toml" in reason
    a0 = ingest_original(synth.beeps(1, tmp_path / "b1.wav"))
    call = ToolExecutor(registry, tmp_path / "derived").run(
        [ToolCallRequest(tool=name, arguments={})], [a0], step=1).tool_calls[0]
    assert call.status == ToolCallStatus.rejected and why in call.error


# ---- audiomind tools show ----------------------------------------------------------------------------------
def test_tools_show_prints_the_output_model_and_its_schema():
    out = CliRunner().invoke(app, ["tools", "show", "count_events"], env=WIDE)
    assert out.exit_code == 0, out.output
    assert "output model: CountEventsOutput (audiomind.tools.events:CountEventsOutput)" in out.output
    for key in ("noise_floor_dbfs", "threshold_from", "mean_inter_onset_s", "EnergyEvent", "peak_dbfs"):
        assert key in out.output
    schema = CountEventsOutput.model_json_schema()
    assert set(schema["required"]) >= {"count", "events", "noise_floor_dbfs"}
