"""One spec per judge (audiomind.judges.spec): the built-in specs agree with their functions, tools and
options; and a judge added at run time as one spec file (its agent tool declared in it: no manifest file) is
at once an `audiomind judge` command, an MCP tool served to a real MCP client, and an HTTP route on a real
server."""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from audiomind.audio import write_wav
from audiomind.judges.spec import JUDGES, AudioSlot, JudgeOptions, JudgeSpec, JudgeTool
from audiomind.judges.specs.edit import EditArgs
from audiomind.judges.specs.rubric import RubricArgs
from audiomind.tools.manifest import ToolRegistry

AMPLITUDE = 0.5
PEAK_DB = 20 * math.log10(AMPLITUDE)  # -6.02 dBFS
PEAK_TOL_DB = 0.01  # 16-bit PCM rounds 0.5 to 16383 or 16384 / 32768: under 0.001 dB either way

# The whole judge, as a newcomer writes it: inputs, result, function, tool, spec (docs/EXTENDING.md).
PEAK_JUDGE = '''
"""A peak-level judge in one file."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from audiomind import audio as audio_io
from audiomind.judges.base import JudgeSession, JudgeStep
from audiomind.judges.spec import AudioSlot, JudgeArgs, JudgeSpec, JudgeTool
from audiomind.judges.tools import JUDGE_TRACE, Out, output_model
from audiomind.tools.base import Claim


class PeakArgs(JudgeArgs):
    limit_db: float = Field(-1.0, ge=-60.0, le=0.0, description="the highest sample peak (dBFS) that passes")


class PeakResult(BaseModel):
    judge: Literal["peak"] = "peak"
    audio: str
    peak_db: float
    limit_db: float
    passed: bool
    trace_path: str | None = None


def judge_peak(audio: str | Path, *, limit_db: float = -1.0, trace_dir: str | Path | None = "traces",
               write_trace: bool = True, registry: Any = None, cache: Any = None, executor: Any = None) -> PeakResult:
    session = JudgeSession("peak", f"Is the sample peak of a0 at most {limit_db} dBFS?", [audio],
                           trace_dir=trace_dir, registry=registry, cache=cache, executor=executor,
                           inputs={"audio": str(audio), "limit_db": limit_db})
    y = audio_io.load(audio, sr=audio_io.probe(audio).sample_rate)
    peak_db = float(20 * np.log10(max(float(np.max(np.abs(y))), 1e-10)))
    session.add(JudgeStep(number=1, name="peak", text=f"sample peak {peak_db:.2f} dBFS", data={"peak_db": peak_db}))
    result = PeakResult(audio=str(audio), peak_db=peak_db, limit_db=limit_db, passed=peak_db <= limit_db)
    verdict = "within the limit" if result.passed else "above the limit"
    return session.conclude(verdict, f"sample peak {peak_db:.2f} dBFS, limit {limit_db} dBFS", result,
                            write=write_trace)


PeakOutput = output_model("PeakOutput", {
    "peak_db": Out(float, "sample peak (dBFS)"),
    "passed": Out(bool, "the peak is at or below the limit"),
    "limit": Out(float, "the limit it was held to (dBFS)", "limit_db"),
    "judge_trace": JUDGE_TRACE,
}, __name__)


def peak_claims(r: PeakResult, args: Any) -> list[Claim]:
    return [Claim(text=f"Sample peak of {args.artifact}: {r.peak_db:.2f} dBFS "
                       f"({'within' if r.passed else 'above'} the {r.limit_db} dBFS limit).",
                  data={"peak_db": r.peak_db})]


PEAK = JudgeSpec(
    name="peak", summary="Is the sample peak of the audio within a limit?", args=PeakArgs,
    audio=(AudioSlot(name="audio", help="the audio to check", path_fields=("path",)),),
    run=judge_peak, result=PeakResult,
    tool=JudgeTool(
        function="Checks whether the sample peak of an audio artifact is at or below a limit in dBFS. Writes "
                 "its own trace.",
        supports=("whether the sample peak of the audio exceeds a level",),
        not_for=("perceived loudness (use loudness)", "what the audio contains"),
        output=PeakOutput, claims=peak_claims, example={"artifact": "a0", "limit_db": -3.0}),
    render=lambda r: [f"peak {r.peak_db:.2f} dBFS: {'passed' if r.passed else 'too loud'}"])
'''


@pytest.fixture(scope="module")
def peak(tmp_path_factory) -> Iterator[dict[str, Path]]:
    """The peak judge registered at run time (its one file, imported when first looked up) and a clip whose
    peak is AMPLITUDE."""
    base = tmp_path_factory.mktemp("peak-judge")
    (base / "peak_judge_for_tests.py").write_text(textwrap.dedent(PEAK_JUDGE))
    root = base / "root"
    root.mkdir()
    sr = 16000
    t = np.arange(sr) / sr
    write_wav(root / "tone.wav", (AMPLITUDE * np.sin(2 * np.pi * 440 * t)).astype(np.float32), sr)
    sys.path.insert(0, str(base))
    JUDGES.register("peak", "peak_judge_for_tests:PEAK")  # lazy, as a plugin registers: imported on first lookup
    assert "peak" in JUDGES.names() and "peak_judge_for_tests" not in sys.modules
    try:
        yield {"base": base, "root": root, "clip": root / "tone.wav"}
    finally:
        JUDGES.unregister("peak")
        sys.modules.pop("peak_judge_for_tests", None)
        sys.path.remove(str(base))


# ---------------------------------------------------------------- the built-in specs


def test_builtin_specs_agree_with_their_functions_tools_and_options():
    registry = ToolRegistry.load()
    from audiomind.judges.tools import tool_args_model

    assert JUDGES.names()[:3] == ["edit", "rubric", "aura"]
    for name in ("edit", "rubric", "aura"):
        spec = JUDGES[name]
        params = inspect.signature(spec.function()).parameters
        missing = [f for f in [s.name for s in spec.audio] + list(spec.args.model_fields) if f not in params]
        assert not missing, (name, missing)  # every input reaches the function
        manifest = registry.get(spec.tool_name)  # the manifest: derived from the spec (no tools/*.toml)
        assert manifest.args_model is tool_args_model(spec), name
        assert manifest.output_class is spec.tool.output and manifest.category.value == "evaluation", name
        assert manifest.function == spec.tool.function and manifest.timeout_s == spec.tool.timeout_s, name
        assert set(spec.options()) <= set(JudgeOptions.model_fields)
    assert "frontend" not in JUDGES["aura"].options() and "cache" not in JUDGES["aura"].options()
    assert {"llm", "frontend", "cache", "executor", "timeout_s"} <= set(JUDGES["rubric"].options())
    assert RubricArgs.model_fields["aggregation"].default == "geometric"
    with pytest.raises(ValidationError, match="aggregation"):
        RubricArgs(instruction="a beep", aggregation="median")
    with pytest.raises(ValidationError, match="instruction or the target description"):
        EditArgs(original_description="a dog")
    edit_args = registry.get("judge_edit").args_model
    assert list(edit_args.model_fields)[:2] == ["artifact", "original_artifact"]
    assert edit_args(instruction="x").artifact == "a1" and edit_args(instruction="x").original_artifact == "a0"


def test_options_are_typed_and_a_spec_refuses_a_name_used_twice():
    with pytest.raises(ValidationError, match="ToolCache"):
        JudgeOptions(cache="a folder")
    with pytest.raises(ValidationError, match="ToolRunner"):
        JudgeOptions(executor=object())
    with pytest.raises(ValidationError, match="timeout_s"):
        JudgeOptions(timeout_s=0)
    with pytest.raises(ValidationError, match=r"used twice"):
        JudgeSpec(name="x", summary="x", args=RubricArgs, audio=(AudioSlot(name="instruction", help="x"),),
                  run="audiomind.judges.rubric:judge_rubric", result="audiomind.judges.rubric:RubricJudgeResult")
    with pytest.raises(ValidationError, match="claims"):  # a tool says what its output claims
        JudgeTool(function="x", supports=("x",), not_for=("y",), output=JudgeOptions)


# ---------------------------------------------------------------- a judge registered at run time


def test_a_runtime_spec_is_a_cli_command(peak, tmp_path):
    from audiomind.cli import app

    runner = CliRunner()
    listing = runner.invoke(app, ["judge", "-h"], env={"COLUMNS": "200"})
    assert listing.exit_code == 0 and "peak" in listing.output and "sample peak" in listing.output
    out = runner.invoke(app, ["judge", "peak", str(peak["clip"]), "--limit-db", "-3", "--json",
                              "--trace-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["judge"] == "peak" and data["passed"] is True
    assert abs(data["peak_db"] - PEAK_DB) < PEAK_TOL_DB
    trace = json.loads(Path(data["trace_path"]).read_text())
    assert trace["final_answer"]["text"] == "within the limit"
    short = runner.invoke(app, ["judge", "peak", str(peak["clip"]), "--limit-db", "-10", "--trace-dir", str(tmp_path)])
    assert short.exit_code == 0 and "too loud" in short.output and "Trace:" in short.output
    bounded = runner.invoke(app, ["judge", "peak", str(peak["clip"]), "--limit-db", "5"])
    assert bounded.exit_code == 2  # the args field's bound (le=0) is the option's range


def test_a_runtime_spec_is_an_mcp_tool(peak, tmp_path):
    mcp = pytest.importorskip("mcp")
    import anyio

    from audiomind.tools.mcp_server import ToolServer, build_server

    registry = ToolRegistry.load()  # the judge's tool: derived from its spec, beside the packaged tools
    assert registry.get("judge_peak").example == {"artifact": "a0", "limit_db": -3.0}
    core = ToolServer([peak["root"]], registry=registry, runs_dir=tmp_path / "runs", use_cache=False)

    async def main() -> None:
        with anyio.fail_after(180):
            async with mcp.Client(build_server(core), read_timeout_seconds=120) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert "judge_peak" in tools
                schema = tools["judge_peak"].input_schema
                assert set(schema["properties"]) == {"audio", "limit_db"} and schema["required"] == ["audio"]
                assert schema["properties"]["limit_db"]["maximum"] == 0.0
                assert list(tools["judge_peak"].output_schema["properties"]) == ["peak_db", "passed", "limit",
                                                                                 "judge_trace"]
                assert "Must not be used for: perceived loudness" in tools["judge_peak"].description
                res = await client.call_tool("judge_peak", {"audio": "tone.wav", "limit_db": -10})
                assert not res.is_error, res.content
                assert res.structured_content["passed"] is False
                assert res.structured_content["limit"] == -10  # read from the result's limit_db (its source)
                assert Path(res.structured_content["judge_trace"]).name.endswith(".json")
                assert abs(res.structured_content["peak_db"] - PEAK_DB) < PEAK_TOL_DB
                bad = await client.call_tool("judge_peak", {"audio": "tone.wav", "limit_db": 3})
                assert bad.is_error and "limit_db" in " ".join(getattr(c, "text", "") for c in bad.content)

    anyio.run(main)


@contextlib.contextmanager
def _running(app) -> Iterator[str]:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_a_runtime_spec_is_an_http_route(peak, tmp_path):
    from audiomind.config import AgentConfig
    from audiomind.serve import ServeSettings, create_app

    settings = ServeSettings(agent=AgentConfig(trace_dir=str(tmp_path / "traces")), roots=[str(peak["root"])],
                             warmup=False)
    with _running(create_app(settings)) as url, httpx.Client(base_url=url, timeout=120) as client:
        spec = client.get("/openapi.json").json()
        route = spec["paths"]["/v1/judge/peak"]["post"]
        ok = route["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok["$ref"] == "#/components/schemas/PeakResultResponse"
        assert route["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
        r = client.post("/v1/judge/peak", data={"path": "tone.wav", "limit_db": "-3"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["passed"] is True and abs(body["peak_db"] - PEAK_DB) < PEAK_TOL_DB
        assert body["audio"] == "tone.wav" and body["trace_path"] is None  # no server path handed out
        assert client.get(body["trace_url"]).json()["final_answer"]["text"] == "within the limit"
        upload = client.post("/v1/judge/peak", data={"limit_db": "-10"},
                             files={"audio": ("t.wav", peak["clip"].read_bytes(), "audio/wav")})
        assert upload.status_code == 200 and upload.json()["passed"] is False
        assert client.post("/v1/judge/peak", data={"path": "tone.wav", "limit_db": "3"}).status_code == 422
        typo = client.post("/v1/judge/peak", data={"audio_path": "tone.wav"})
        assert typo.status_code == 400 and "unknown form field(s): 'audio_path'" in typo.json()["detail"]
        gone = client.post("/v1/judge/nope", data={})
        assert gone.status_code == 404 and "peak" in gone.json()["detail"]


# ---------------------------------------------------------------- a judge tool's output, read from the result


def test_output_fields_are_read_from_the_result_by_name_path_or_function():
    from audiomind.judges.tools import JUDGE_TRACE, Out, many, output_model, project

    class Item(BaseModel):
        question: str
        explanation: str
        extra: int = 0  # not in the output: left out

    class Expectation(BaseModel):
        operation: str

    class Result(BaseModel):
        score: float
        items: list[Item]
        expectation: Expectation
        maybe: Item | None = None
        trace_path: str | None
        unused: str = "x"

    item_out = output_model("ItemOut", {"question": Out(str, "the question"),
                                        "why": Out(str, "the first words", lambda v: v.explanation[:3])})
    out_model = output_model("Output", {
        "score": Out(float, "the score"), "entries": Out(many(item_out), "the items", "items"),
        "operation": Out(str, "the operation", "expectation.operation"), "maybe": Out(item_out | None, "optional"),
        "judge_trace": JUDGE_TRACE})
    r = Result(score=0.5, items=[Item(question="a?", explanation="because", extra=3)],
               expectation=Expectation(operation="add"), trace_path="t.json")
    out = project(r, out_model)
    assert out == {"score": 0.5, "entries": [{"question": "a?", "why": "bec"}], "operation": "add", "maybe": None,
                   "judge_trace": "t.json"}
    assert out_model.model_validate(out).model_dump() == out  # what the executor checks
    with_maybe = project(r.model_copy(update={"maybe": Item(question="b?", explanation="since")}), out_model)
    assert with_maybe["maybe"] == {"question": "b?", "why": "sin"}
    schema = out_model.model_json_schema()
    assert list(schema["properties"]) == ["score", "entries", "operation", "maybe", "judge_trace"]
    assert schema["properties"]["judge_trace"]["description"] == "the judge's own trace file"
    assert schema["additionalProperties"] is False and "sources" not in schema["properties"]
    with pytest.raises(AttributeError, match="nope"):
        project(r, output_model("Bad", {"nope": Out(int, "a field the result does not have")}))


def test_a_tool_example_that_does_not_fit_its_arguments_is_an_error():
    from audiomind.judges.specs.aura import SPEC as AURA
    from audiomind.judges.tools import tool_manifest

    assert tool_manifest(AURA).example["question"] == "How many beeps are there?"
    wrong = AURA.model_copy(update={"tool": AURA.tool.model_copy(update={"example": {"artifact": "a0", "w": 2}})})
    with pytest.raises(ValueError, match="example does not fit"):
        tool_manifest(wrong)
