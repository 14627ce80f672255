"""The tool inventory over the Model Context Protocol (the official `mcp` SDK, low-level server).

One MCP tool per usable manifest: its input schema is the tool's argument model with every artifact id
(`artifact`, `<x>_artifact`) replaced by an audio file (`audio`, `<x>_audio`: a path inside an allowed root,
or the URI of a derived resource this server returned); its description carries the manifest's function,
what its output may support and what it must not be used for; its output schema is the tool's output model
and every result carries it as structured content. Tools whose needs (packages, models) are missing here
are not listed.

Each call runs exactly as in an agent run: a fresh `ToolExecutor` over a small run folder (the audio as
artifacts made by `make_artifact`, with sha256 and provenance) validates the arguments, times the call,
uses the tool cache, validates the output against its model and registers derived audio; the call is
written as an ordinary trace (`<run folder>/trace.json`, readable by `audiomind trace show/audit`).
Derived audio (crop, filter, ...) comes back as MCP resources (`audiomind://derived/...`) whose `_meta`
records its provenance: the source's sha256, the operation and its parameters.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from audiomind.artifacts import make_artifact
from audiomind.audio import AudioError
from audiomind.paths import PathPolicyError, clip_text, resolve_under
from audiomind.state import (
    Artifact,
    EvidenceState,
    Outcome,
    Question,
    RunInfo,
    ToolCall,
    ToolCallRequest,
    ToolCallStatus,
    utcnow,
)
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolManifest, ToolRegistry
from audiomind.trace import write_trace

SERVER_NAME = "audiomind"
RESOURCE_SCHEME = "audiomind://derived/"
META_KEY = "audiomind/call"
PROVENANCE_KEY = "audiomind/provenance"


class ToolInputError(ValueError):
    """A call the server refuses before any tool runs (missing audio, a path outside the roots, ...)."""


@dataclass(frozen=True)
class AudioArg:
    """One audio argument of a tool: the internal artifact field and the name MCP clients use for it."""

    internal: str  # "artifact", "original_artifact"
    external: str  # "audio", "original_audio"
    required: bool


def audio_args(manifest: ToolManifest) -> list[AudioArg]:
    """The tool's artifact-id fields as audio arguments (`artifact` -> `audio`, `x_artifact` -> `x_audio`).
    One is optional only where the argument model's default is None (e.g. speaker_verify's other_artifact);
    a default id such as "a0" means nothing to an MCP client, so that argument is required."""
    out = []
    for name, field in manifest.args_model.model_fields.items():
        if name == "artifact" or name.endswith("_artifact"):
            external = "audio" if name == "artifact" else name[: -len("artifact")] + "audio"
            optional = not field.is_required() and field.default is None
            out.append(AudioArg(name, external, not optional))
    out.sort(key=lambda a: (a.internal != "artifact", a.internal))
    return out


def input_schema(manifest: ToolManifest) -> dict[str, Any]:
    """The argument model's JSON schema, audio arguments (file paths) in place of artifact ids."""
    schema = copy.deepcopy(manifest.argument_schema())
    props: dict[str, Any] = schema.get("properties", {})
    audio = {a.internal: a for a in audio_args(manifest)}
    required = [a.external for a in audio.values() if a.required]
    required += [r for r in schema.get("required", []) if r not in audio]
    new_props: dict[str, Any] = {}
    for a in audio.values():
        what = str(props.get(a.internal, {}).get("description", "the audio to analyse"))
        what = re.sub(r"^id of (the )?", "", what).replace(" artifact", "")
        desc = (f"{what}: path of an audio file inside an allowed root (relative paths start at the first root), "
                f"or the {RESOURCE_SCHEME}... URI of audio an earlier call derived")
        if a.required:
            new_props[a.external] = {"type": "string", "title": a.external.replace("_", " ").title(),
                                     "description": desc}
        else:
            new_props[a.external] = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                                     "title": a.external.replace("_", " ").title(), "description": desc}
    new_props.update({k: v for k, v in props.items() if k not in audio})
    schema["properties"] = new_props
    schema["required"] = required
    schema["type"] = "object"
    schema.pop("title", None)
    return schema


def output_schema(manifest: ToolManifest) -> dict[str, Any] | None:
    cls = manifest.output_class
    return cls.model_json_schema(mode="serialization") if cls is not None else None


def description(manifest: ToolManifest) -> str:
    """What a client model reads: the manifest's function and its evidence boundary."""
    lines = [
        manifest.function.strip(),
        "",
        "May support: " + "; ".join(manifest.supports) + ".",
        "Must not be used for: " + "; ".join(manifest.not_for) + ".",
    ]
    if manifest.derives_audio:
        lines.append("Output: derived audio, returned as an MCP resource with its provenance (source sha256, "
                     "operation, parameters); derived audio is not evidence by itself.")
    lines.append(f"Category: {manifest.category.value}; tool version {manifest.version}.")
    return "\n".join(lines)


def _run_id() -> str:
    return f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S')}-mcp-{uuid.uuid4().hex[:8]}"


class ToolServer:
    """The MCP-independent core: which tools are offered, and how one call runs (blocking)."""

    def __init__(self, roots: list[str | Path], *, registry: ToolRegistry | None = None,
                 runs_dir: str | Path | None = None, use_cache: bool = True):
        if not roots:
            raise ValueError("at least one allowed root folder is needed")
        self.roots = [Path(r).resolve() for r in roots]
        for r in self.roots:
            if not r.is_dir():
                raise ValueError(f"allowed root {r} is not a folder")
        self.registry = registry or ToolRegistry.load()
        self.runs_dir = Path(runs_dir).resolve() if runs_dir else Path(tempfile.mkdtemp(prefix="audiomind-mcp-"))
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        self.cache = ToolCache() if use_cache else None
        self._lock = threading.Lock()
        self._tools: dict[str, ToolManifest] | None = None
        self.resources: dict[str, tuple[Artifact, dict[str, Any]]] = {}  # uri -> (artifact, provenance)

    # ---- the inventory --------------------------------------------------------------------------------
    def tools(self) -> dict[str, ToolManifest]:
        """Usable tools by name (availability is checked once: it imports each entry point)."""
        with self._lock:
            if self._tools is None:
                self._tools = {m.name: m for m in sorted(self.registry.available(), key=lambda m: m.name)}
            return self._tools

    def tool_schema(self, name: str) -> dict[str, Any] | None:
        m = self.tools().get(name)
        return input_schema(m) if m is not None else None

    # ---- one call -------------------------------------------------------------------------------------
    def _artifact(self, value: Any, argument: str, artifact_id: str) -> Artifact:
        if not isinstance(value, str) or not value.strip():
            raise ToolInputError(f"{argument}: expected the path of an audio file (a string), got {clip_text(value, 80)}")
        if value.startswith(RESOURCE_SCHEME):
            known = self.resources.get(value)
            if known is None:
                raise ToolInputError(f"{argument}: unknown resource {clip_text(value, 160)} (not derived by this server)")
            derived, _ = known
            return make_artifact(artifact_id, derived.path, operation="input",
                                 parameters={"resource": value, "derived_from_sha256": derived.sha256})
        try:
            path = resolve_under(value, self.roots, base=self.roots[0])
        except PathPolicyError as exc:
            raise ToolInputError(f"{argument}: {exc}") from None
        try:
            return make_artifact(artifact_id, path, operation="input")
        except AudioError as exc:
            raise ToolInputError(f"{argument}: {exc}") from None

    def prepare(self, manifest: ToolManifest, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[Artifact],
                                                                                     dict[str, str]]:
        """(the executor's arguments, the input artifacts, artifact id -> the argument that named it)."""
        args = dict(arguments or {})
        audio = audio_args(manifest)
        for a in audio:
            if a.internal in args:
                raise ToolInputError(f"unknown argument {a.internal!r}: give the audio file as {a.external!r} "
                                     "(a path), not as an artifact id")
        artifacts: list[Artifact] = []
        names: dict[str, str] = {}
        internal: dict[str, Any] = {}
        for a in audio:
            value = args.pop(a.external, None)
            if value is None:
                if a.required:
                    raise ToolInputError(f"missing argument {a.external!r}: the path of an audio file inside "
                                         f"{', '.join(str(r) for r in self.roots)}")
                continue
            art = self._artifact(value, a.external, f"a{len(artifacts)}")
            artifacts.append(art)
            names[art.id] = a.external
            internal[a.internal] = art.id
        internal.update(args)  # everything else is validated by the executor against the argument model
        return internal, artifacts, names

    def call(self, name: str, arguments: dict[str, Any] | None) -> CallOutcome:
        """Run one tool call through a per-call executor and record it as a trace. Raises KeyError for an
        unknown tool and ToolInputError for a refused input; a tool failure is an outcome with an error."""
        manifest = self.tools()[name]
        internal, artifacts, names = self.prepare(manifest, arguments or {})
        run_id = _run_id()
        run_dir = self.runs_dir / run_id
        started, t0 = utcnow(), time.monotonic()
        executor = ToolExecutor(self.registry, run_dir / "derived", cache=self.cache, allowed=set(self.tools()))
        res = executor.run([ToolCallRequest(tool=name, arguments=internal, reason="MCP tools/call")], artifacts, step=0)
        call = res.tool_calls[0]
        ok = call.status in (ToolCallStatus.ok, ToolCallStatus.cached)
        error = None if ok else _readable(call.error or call.status.value, names)
        state = EvidenceState(
            run=RunInfo(run_id=run_id, started_at=started, finished_at=utcnow(),
                        wall_time_s=round(time.monotonic() - t0, 4), artifact_dir=str(run_dir), max_steps=1),
            question=Question(text=f"MCP tools/call {name}", audio_path=artifacts[0].path if artifacts else "",
                              metadata={"via": "mcp", "tool": name, "arguments": arguments or {}}),
            artifacts=[*artifacts, *res.artifacts], tool_calls=res.tool_calls, evidence=res.evidence,
            outcome=Outcome(status="answered" if ok else "failed", reason="" if ok else (error or "")),
        )
        trace_path = write_trace(state, run_dir / "trace.json")
        derived = []
        by_id = {a.id: a for a in state.artifacts}
        for art in res.artifacts:
            source = by_id.get(art.derived_from or "")
            uri = f"{RESOURCE_SCHEME}{run_id}/{art.id}/{Path(art.path).name}"
            provenance = {
                "source_sha256": source.sha256 if source else None,
                "source": names.get(art.derived_from or "", art.derived_from),
                "source_path": source.path if source else None,
                "operation": art.operation, "parameters": art.parameters, "tool": name, "tool_call_id": call.id,
                "sha256": art.sha256, "duration_s": art.duration_s, "sample_rate": art.sample_rate,
                "channels": art.channels, "run_id": run_id, "trace": str(trace_path),
            }
            self.resources[uri] = (art, provenance)
            derived.append((uri, art, provenance))
        return CallOutcome(call=call, ok=ok, error=error, trace_path=trace_path, run_id=run_id, derived=derived,
                           claims=[e.claim for e in res.evidence], inputs=[
                               {"argument": names[a.id], "path": a.path, "sha256": a.sha256} for a in artifacts])

    def read(self, uri: str) -> tuple[Artifact, dict[str, Any]]:
        if uri not in self.resources:
            raise KeyError(uri)
        return self.resources[uri]


@dataclass
class CallOutcome:
    call: ToolCall
    ok: bool
    error: str | None
    trace_path: Path
    run_id: str
    derived: list[tuple[str, Artifact, dict[str, Any]]]
    claims: list[str]
    inputs: list[dict[str, Any]]


def _readable(message: str, names: dict[str, str]) -> str:
    """An executor message with internal artifact ids replaced by the argument names the client used."""
    for art_id, arg in names.items():
        message = re.sub(rf"\b{re.escape(art_id)}\b", repr(arg), message)
    return message


# ---- the MCP face --------------------------------------------------------------------------------------
def build_server(core: ToolServer):
    """A low-level `mcp.server.Server` over `core`: tools/list, tools/call, resources/list, resources/read."""
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import INVALID_PARAMS

    async def list_tools(ctx, params) -> types.ListToolsResult:
        tools = await anyio.to_thread.run_sync(core.tools)
        return types.ListToolsResult(tools=[
            types.Tool(
                name=m.name,
                title=m.name.replace("_", " "),
                description=description(m),
                input_schema=input_schema(m),
                output_schema=output_schema(m),
                annotations=types.ToolAnnotations(
                    title=m.name.replace("_", " "), read_only_hint=not m.derives_audio, destructive_hint=False,
                    idempotent_hint=True, open_world_hint=False),
                _meta={"audiomind/manifest": {"category": m.category.value, "version": m.version,
                                              "supports": m.supports, "not_for": m.not_for,
                                              "derives_audio": m.derives_audio, "timeout_s": m.timeout_s}},
            )
            for m in tools.values()
        ])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        tools = await anyio.to_thread.run_sync(core.tools)
        if params.name not in tools:
            known = ", ".join(sorted(tools))
            raise MCPError(code=INVALID_PARAMS, message=f"unknown tool {params.name!r}; available tools: {known}")
        try:
            out = await anyio.to_thread.run_sync(core.call, params.name, dict(params.arguments or {}))
        except ToolInputError as exc:
            return types.CallToolResult(content=[types.TextContent(text=f"error: {exc}")], is_error=True)
        meta = {META_KEY: {
            "tool_call_id": out.call.id, "status": out.call.status.value,
            "cache_hit": out.call.status == ToolCallStatus.cached, "duration_s": out.call.duration_s,
            "tool_version": out.call.tool_version, "cache_key": out.call.cache_key, "run_id": out.run_id,
            "trace": str(out.trace_path), "inputs": out.inputs, "claims": out.claims,
        }}
        if not out.ok:
            return types.CallToolResult(
                content=[types.TextContent(text=f"error: {params.name} {out.call.status.value}: {out.error}")],
                is_error=True, _meta=meta)
        output = out.call.output or {}
        content: list[Any] = [types.TextContent(text=json.dumps(output, ensure_ascii=False))]
        if out.claims:
            content.append(types.TextContent(text="Evidence:\n" + "\n".join(f"- {c}" for c in out.claims)))
        for uri, art, prov in out.derived:
            content.append(types.ResourceLink(
                uri=uri, name=Path(art.path).name, title=f"{prov['operation']} of {Path(str(prov['source_path'])).name}",
                description=(f"derived audio: {prov['operation']} {json.dumps(prov['parameters'])} of "
                             f"{Path(str(prov['source_path'])).name} (sha256 {str(prov['source_sha256'])[:12]}…); "
                             f"{art.duration_s:.3f} s, {art.sample_rate} Hz, {art.channels} ch"),
                mime_type="audio/wav", size=Path(art.path).stat().st_size, _meta={PROVENANCE_KEY: prov}))
        return types.CallToolResult(content=content, structured_content=output, is_error=False, _meta=meta)

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=Path(art.path).name, mime_type="audio/wav", size=Path(art.path).stat().st_size,
                           description=f"{prov['operation']} of {prov['source']}", _meta={PROVENANCE_KEY: prov})
            for uri, (art, prov) in list(core.resources.items()) if Path(art.path).is_file()
        ])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            art, prov = core.read(str(params.uri))
        except KeyError:
            raise MCPError(code=-32002, message=f"unknown resource {params.uri}") from None
        data = await anyio.Path(art.path).read_bytes()
        return types.ReadResourceResult(contents=[types.BlobResourceContents(
            uri=str(params.uri), mime_type="audio/wav", blob=base64.b64encode(data).decode("ascii"),
            _meta={PROVENANCE_KEY: prov})])

    roots = ", ".join(str(r) for r in core.roots)
    return Server(
        SERVER_NAME,
        version=_version(),
        title="audiomind audio tools",
        instructions=(
            "Bounded audio-analysis tools with typed outputs. Give audio as a file path inside the allowed "
            f"folder(s) {roots}. Each tool's description says what its output may support and what it must "
            "not be used for; stay inside those boundaries. Derived audio comes back as audiomind:// resources "
            "that later calls accept as audio."),
        get_tool_input_schema=core.tool_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _version() -> str:
    try:
        import importlib.metadata

        return importlib.metadata.version("audiomind")
    except Exception:  # noqa: BLE001 - a checkout without metadata
        return "0"


def serve_stdio(core: ToolServer) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(core)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


def serve_http(core: ToolServer, port: int, host: str = "127.0.0.1") -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only; DNS-rebinding protection on)."""
    import uvicorn

    app = build_server(core).streamable_http_app(host=host)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
