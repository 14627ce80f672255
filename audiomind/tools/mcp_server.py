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
records its provenance: the source's sha256, the operation and its parameters. A derived clip belongs to the
client session that made it: another session (another HTTP client) neither lists nor reads it. Images
(`spectrogram`, `waveform`) come back as MCP image content; no server-local path is handed out.

Hostile or careless input is refused before it costs anything: a path longer than MAX_PATH_CHARS is never
resolved, audio longer than the server's duration limit is refused after reading its header, a refused
call's arguments are kept in its trace only clipped (REFUSED_ARGUMENT_CHARS per value), and a run folder
that is full or read-only is one clear tool error (at start-up: one clear line), never a JSON-RPC internal
error. The agent itself is offered as the tool `ask` (question, choices, audio -> answer with its trace) when
the caller hands in a function that runs it (`audiomind mcp` does; this layer does not build agents).
"""

from __future__ import annotations

import base64
import copy
import errno
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audiomind.artifacts import make_artifact
from audiomind.audio import AudioError, probe
from audiomind.limits import (
    DurationCapError,
    InputFolder,
    check_clip,
    copy_into,
    fd_path,
    inputs_limits_from_env,
    open_confined,
)
from audiomind.paths import PathPolicyError, clip_text
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
from audiomind.tools import mcp_transport
from audiomind.tools.executor import ToolCache, ToolExecutor
from audiomind.tools.manifest import ToolManifest, ToolRegistry
from audiomind.tools.mcp_transport import EOF_GRACE_S  # noqa: F401 - the CLI's name
from audiomind.trace import write_trace

SERVER_NAME = "audiomind"
RESOURCE_SCHEME = "audiomind://derived/"
META_KEY = "audiomind/call"
PROVENANCE_KEY = "audiomind/provenance"
MAX_PATH_CHARS = 4096  # PATH_MAX: no real file has a longer name; resolving one costs time in its `..` parts
REFUSED_ARGUMENT_CHARS = 1000  # what a refused call's trace keeps of each argument value
DEFAULT_MAX_DURATION_S = 3 * 3600.0  # `mcp --max-duration`: audio longer than this is refused
MIN_FREE_BYTES = 16 * 1024 * 1024  # below this a run folder counts as full when a write fails
ASK_TOOL = "ask"
STATELESS = "stateless"  # an HTTP request outside any session
IMAGE_TOOLS = {"spectrogram", "waveform"}  # their PNG comes back as image content
log = logging.getLogger(__name__)


class ToolInputError(ValueError):
    """A call the server refuses before any tool runs (missing audio, a path outside the roots, ...)."""


class StorageFault(ToolInputError):
    """The server's run folder refused a write (full, read-only, no permission): said without its path."""


def storage_problem(exc: OSError, folder: Path | None = None) -> str:
    """One line for a refused write, naming the cause and never the server's path."""
    what = {errno.ENOSPC: "is full (no space left on device)", errno.EDQUOT: "is over its disk quota",
            errno.EROFS: "is on a read-only file system", errno.EACCES: "is not writable (permission denied)",
            errno.EPERM: "is not writable (operation not permitted)", errno.EFBIG: "refused a file this large",
            errno.ENAMETOOLONG: "refused a name this long"}.get(exc.errno or 0)
    if what is None and folder is not None:
        try:
            if shutil.disk_usage(folder).free < MIN_FREE_BYTES:
                what = "is full (no space left on device)"
        except OSError:
            pass
    return f"the server's run folder {what or f'refused a write ({exc.strerror or type(exc).__name__})'}"


def clipped_arguments(value: Any, limit: int = REFUSED_ARGUMENT_CHARS) -> Any:
    """`value` with every string (and key) cut to about `limit` characters and lists to 100 items: what a
    refused call's trace keeps of its arguments (a 10 MB argument must not become a 20 MB trace)."""
    if isinstance(value, str):
        return clip_text(value, limit)
    if isinstance(value, dict):
        return {clip_text(str(k), 200): clipped_arguments(v, limit) for k, v in list(value.items())[:100]}
    if isinstance(value, (list, tuple)):
        items = [clipped_arguments(v, limit) for v in value[:100]]
        return items + ([f"… ({len(value) - 100} more items)"] if len(value) > 100 else [])
    return value


def check_path_length(value: str, argument: str) -> None:
    """Refuse an over-long path before anything resolves it (resolving costs time in its `..` parts)."""
    try:
        from audiomind import paths as path_policy

        check = getattr(path_policy, "check_path_length", None)
    except ImportError:  # pragma: no cover
        check = None
    if check is not None:  # the shared policy, where it exists
        try:
            check(value)
        except PathPolicyError as exc:
            raise ToolInputError(f"{argument}: {exc}") from None
    if len(value) > MAX_PATH_CHARS or len(value.encode("utf-8", "surrogatepass")) > MAX_PATH_CHARS:
        raise ToolInputError(f"{argument}: the path is {len(value):,} characters long; at most {MAX_PATH_CHARS} "
                             "are accepted")


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
    return _client_schema(schema)


def _client_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema in the client's words: Python's `None` in descriptions is JSON's `null` (omit the
    argument), and internal artifact ids do not appear."""
    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (re.sub(r"\bNone\b", "null", v) if k == "description" and isinstance(v, str) else fix(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    return fix(schema)


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
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-mcp-{uuid.uuid4().hex[:8]}"


class ToolServer:
    """The MCP-independent core: which tools are offered, and how one call runs (blocking)."""

    def __init__(self, roots: list[str | Path], *, registry: ToolRegistry | None = None,
                 runs_dir: str | Path | None = None, use_cache: bool = True,
                 max_duration_s: float | None = DEFAULT_MAX_DURATION_S,
                 ask_agent: Callable[[str, str, list[str] | None], Any] | None = None,
                 inputs_max_mb: float | None = None, inputs_max_age_h: float | None = None):
        if not roots:
            raise ValueError("at least one allowed root folder is needed")
        self.roots = [Path(r).resolve() for r in roots]
        for r in self.roots:
            if not r.is_dir():
                raise ValueError(f"allowed root {r} is not a folder")
        self.registry = registry or ToolRegistry.load()
        try:
            self.runs_dir = Path(runs_dir).resolve() if runs_dir else Path(tempfile.mkdtemp(prefix="audiomind-mcp-"))
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            probe = Path(tempfile.mkstemp(dir=self.runs_dir, prefix=".write-check-")[1])  # writable at all?
            probe.unlink()
        except OSError as exc:
            where = f" {runs_dir}" if runs_dir else " (a new temporary folder)"
            why = storage_problem(exc).removeprefix("the server's run folder ")
            raise ValueError(f"--runs-dir{where} cannot be used: it {why}") from None
        self.cache = ToolCache() if use_cache else None
        self.max_duration_s = max_duration_s or None
        # the copies of the clips the calls named (traces name them): the folder bounded in size and age, by
        # the mechanism `serve` uses for its uploads (audiomind.limits.InputFolder; defaults from the env)
        env_mb, env_age_h = inputs_limits_from_env()
        self.inputs = InputFolder(self.runs_dir / "inputs", max_bytes=(inputs_max_mb or env_mb) * 1024 * 1024,
                                  max_age_s=(inputs_max_age_h or env_age_h) * 3600)
        self.inputs.prune()
        # the `ask` tool: (audio path, question, choices) -> the agent's AskResult; given by the caller (the CLI
        # builds the agent), so this layer does not depend on the agent's; None: no `ask` tool
        self.ask_agent = ask_agent
        self._agent_lock = threading.Lock()
        self._lock = threading.Lock()
        self._tools: dict[str, ToolManifest] | None = None
        # uri -> (artifact, provenance, the session that derived it)
        self.resources: dict[str, tuple[Artifact, dict[str, Any], str | None]] = {}

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
    def _artifact(self, value: Any, argument: str, artifact_id: str, session: str | None = None) -> Artifact:
        if not isinstance(value, str) or not value.strip():
            raise ToolInputError(f"{argument}: expected the path of an audio file (a string), got {clip_text(value, 80)}")
        check_path_length(value, argument)
        if value.startswith(RESOURCE_SCHEME):
            known = self.resources.get(value)
            if known is None or not _may_read(known[2], session):  # another session's clip: as if made up
                raise ToolInputError(f"{argument}: unknown resource {clip_text(value, 160)} (not derived in this "
                                     "session)")
            derived = known[0]
            return make_artifact(artifact_id, derived.path, operation="input",
                                 parameters={"resource": value, "derived_from_sha256": derived.sha256})
        # Opened once and checked as opened; the header (duration cap) is read and the bytes copied through that
        # descriptor into the run folder, and the call reads the copy: swapping the name for a symlink after
        # the check cannot reach outside the roots (audiomind.limits.open_confined, as `serve` does).
        suffix = Path(value).suffix.lower()
        suffix = suffix if re.fullmatch(r"\.[a-z0-9]{1,10}", suffix) else ""
        try:
            fd, _real = open_confined(value, self.roots)
        except PathPolicyError as exc:
            raise ToolInputError(f"{argument}: {_public(exc)}") from None
        name = fd_path(fd)
        try:
            if not check_clip(name, self.max_duration_s, shown=value):  # the header only: nothing is decoded
                probe(name)  # no cap: still refuse what is not audio before copying it
            os.lseek(fd, 0, os.SEEK_SET)
            inputs = self.runs_dir / "inputs"
            inputs.mkdir(exist_ok=True)
            path = copy_into(fd, inputs, suffix)
        except DurationCapError as exc:
            raise ToolInputError(
                f"{argument}: the audio is {exc.duration_s:,.1f} s long; this server accepts at most "
                f"{exc.limit_s:g} s (mcp --max-duration); crop a stretch of it first") from None
        except AudioError as exc:
            raise ToolInputError(f"{argument}: {str(exc).replace(name, value)}") from None
        except OSError as exc:
            raise StorageFault(storage_problem(exc, self.runs_dir) + "; the input could not be copied") from None
        finally:
            os.close(fd)
        try:  # the copy is named by its content: the artifact keeps the name the client gave
            return make_artifact(artifact_id, path, operation="input", parameters={"name": Path(value).name})
        except AudioError as exc:
            raise ToolInputError(f"{argument}: {_without_path(str(exc), path, value)}") from None

    def prepare(self, manifest: ToolManifest, arguments: dict[str, Any], session: str | None = None
                ) -> tuple[dict[str, Any], list[Artifact], dict[str, str]]:
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
                                         "the allowed folders (relative paths start at the first)")
                continue
            art = self._artifact(value, a.external, f"a{len(artifacts)}", session)
            artifacts.append(art)
            names[art.id] = a.external
            internal[a.internal] = art.id
        internal.update(args)  # everything else is validated by the executor against the argument model
        return internal, artifacts, names

    def call(self, name: str, arguments: dict[str, Any] | None, session: str | None = None) -> CallOutcome:
        """Run one tool call through a per-call executor and record it as a trace. Raises KeyError for an
        unknown tool, ToolInputError for a refused input and StorageFault when the run folder refuses a
        write; a tool failure is an outcome with an error."""
        manifest = self.tools()[name]
        internal, artifacts, names = self.prepare(manifest, arguments or {}, session)
        inputs = [a.path for a in artifacts]
        for p in inputs:  # copied just now (fresh: safe from pruning until here), kept while the call runs
            self.inputs.use(p)
        try:
            return self._call(name, arguments, session, manifest, internal, artifacts, names)
        finally:
            self.inputs.done(inputs)

    def _call(self, name: str, arguments: dict[str, Any] | None, session: str | None, manifest: ToolManifest,
              internal: dict[str, Any], artifacts: list[Artifact], names: dict[str, str]) -> CallOutcome:
        run_id = _run_id()
        run_dir = self.runs_dir / run_id
        started, t0 = utcnow(), time.monotonic()
        try:
            executor = ToolExecutor(self.registry, run_dir / "derived", cache=self.cache, allowed=set(self.tools()))
            res = executor.run([ToolCallRequest(tool=name, arguments=internal, reason="MCP tools/call")], artifacts,
                               step=0)
        except OSError as exc:
            raise StorageFault(storage_problem(exc, self.runs_dir)) from None
        call = res.tool_calls[0]
        ok = call.status in (ToolCallStatus.ok, ToolCallStatus.cached)
        error = None if ok else self.hide_roots(_readable(call.error or call.status.value, names, run_dir))
        if not ok and _storage_failure(call.error or ""):
            problem = _write_problem(self.runs_dir)
            if problem:
                raise StorageFault(f"{problem}; {name} could not write its output")
        recorded = arguments or {}
        if not ok:  # a refused call keeps only a clipped copy of what it was sent
            recorded = clipped_arguments(recorded)
            call = call.model_copy(update={
                "requested_arguments": clipped_arguments(call.requested_arguments),
                "arguments": None if call.arguments is None else clipped_arguments(call.arguments),
                "error": clip_text(call.error or "", 4000)})
            res.tool_calls[0] = call
        state = EvidenceState(
            run=RunInfo(run_id=run_id, started_at=started, finished_at=utcnow(),
                        wall_time_s=round(time.monotonic() - t0, 4), artifact_dir=str(run_dir), max_steps=1),
            question=Question(text=f"MCP tools/call {name}", audio_path=artifacts[0].path if artifacts else "",
                              metadata={"via": "mcp", "tool": name, "arguments": recorded}),
            artifacts=[*artifacts, *res.artifacts], tool_calls=res.tool_calls, evidence=res.evidence,
            outcome=Outcome(status="answered" if ok else "failed", reason="" if ok else clip_text(error or "", 4000)),
        )
        try:
            trace_path = write_trace(state, run_dir / "trace.json")
        except OSError as exc:
            raise StorageFault(storage_problem(exc, self.runs_dir) + "; the call's trace could not be written") from None
        derived: list[tuple[str, Artifact, dict[str, Any]]] = []
        token = uuid.uuid4().hex  # 128 random bits: a derived clip's URI cannot be guessed from another's
        by_id = {a.id: a for a in state.artifacts}
        for art in res.artifacts:
            source = by_id.get(art.derived_from or "")
            label = _resource_name(source, names, art, len(derived))
            uri = f"{RESOURCE_SCHEME}{run_id}-{token}/{label}"
            provenance = {
                "source_sha256": source.sha256 if source else None,
                "source": _client_name(source, names) if source else None,
                "operation": art.operation, "parameters": art.parameters, "tool": name, "tool_call_id": call.id,
                "sha256": art.sha256, "duration_s": art.duration_s, "sample_rate": art.sample_rate,
                "channels": art.channels, "run_id": run_id, "name": label,
            }
            self.resources[uri] = (art, provenance, session)
            derived.append((uri, art, provenance))
        aliases = {a.id: names[a.id] for a in artifacts}
        aliases.update({art.id: uri for uri, art, _ in derived})
        paths = {art.path: uri for uri, art, _ in derived}
        output = _client_view(call.output, aliases, paths) if ok and call.output is not None else None
        images = _images(name, call.output) if ok else []
        if images and output is not None:
            output["image_path"] = f"{name}.png (returned as image content; no server path is given out)"
        return CallOutcome(call=call, ok=ok, error=error, trace_path=trace_path, run_id=run_id, derived=derived,
                           claims=[_readable(e.claim, names) for e in res.evidence], inputs=[
                               {"argument": names[a.id], "name": _client_name(a, names), "sha256": a.sha256}
                               for a in artifacts], output=output, images=images)

    def hide_roots(self, text: str) -> str:
        """`text` with the allowed folders named by role (`<root>/a.wav`): a message never says where they are."""
        for r in sorted(self.roots, key=lambda p: -len(str(p))):
            text = text.replace(str(r), "<root>")
        return text

    def trace_ref(self, trace: Path | None) -> str | None:
        """A trace as a client is told of it: its path inside the run folder (`RUN/trace.json`,
        `ask/RUN.json`), never where that folder is on this machine (issue 35)."""
        if trace is None:
            return None
        try:
            return Path(trace).resolve().relative_to(self.runs_dir).as_posix()
        except ValueError:
            return Path(trace).name

    def read(self, uri: str, session: str | None = None) -> tuple[Artifact, dict[str, Any]]:
        known = self.resources.get(uri)
        if known is None or not _may_read(known[2], session):
            raise KeyError(uri)
        return known[0], known[1]

    def listed(self, session: str | None = None) -> list[tuple[str, Artifact, dict[str, Any]]]:
        """The derived clips this session made (and that still exist)."""
        if session == STATELESS:  # no session, nothing to list: a stateless client keeps the URIs it got
            return []
        return [(uri, art, prov) for uri, (art, prov, owner) in list(self.resources.items())
                if owner == session and Path(art.path).is_file()]

    # ---- the agent as a tool ----------------------------------------------------------------------------
    def ask(self, arguments: dict[str, Any], session: str | None = None) -> tuple[dict[str, Any], Path | None]:
        """Answer one question about one clip with the whole agent (planner, front end, tools); returns (the
        typed AskToolOutput as a dict, the trace path). Raises ToolInputError for a refused input."""
        from audiomind.inputs import choices_problem, question_problem

        try:
            args = AskToolArgs.model_validate(arguments or {})
        except Exception as exc:  # noqa: BLE001 - pydantic's message names the field
            raise ToolInputError(clip_text(str(exc), 600)) from None
        problem = question_problem(args.question) or choices_problem(args.choices or [])
        bad = next((i for i, ch in enumerate(args.question) if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
        if problem is None and bad is not None:  # refused as a choice would be: it could rewrite a terminal
            problem = (f"the question contains a control character (U+{ord(args.question[bad]):04X} at position "
                       f"{bad + 1}); write it on one line of plain text")
        if problem:
            raise ToolInputError(problem)
        if args.choices is not None and len(args.choices) == 1:
            raise ToolInputError("a multiple-choice question needs at least 2 choices (got 1)")
        if self.ask_agent is None:
            raise ToolInputError("this server offers no 'ask' tool")
        art = self._artifact(args.audio, "audio", "a0", session)
        self.inputs.use(art.path)  # kept while the run reads it (done() below)
        try:
            with self._agent_lock:  # one agent, one run at a time (its models are loaded once)
                result = self.ask_agent(art.path, args.question, args.choices or None)
        except AudioError as exc:
            raise ToolInputError(f"audio: {_without_path(str(exc), Path(art.path), args.audio)}") from None
        except OSError as exc:
            raise StorageFault(storage_problem(exc, self.runs_dir) + "; the run's trace could not be written") from None
        except ToolInputError:
            raise
        except Exception as exc:  # noqa: BLE001 - a model backend or the time budget: one line for the client
            raise ToolInputError("the agent's run failed: "
                                 + clip_text(self.hide_roots(_readable(str(exc), {}, self.runs_dir)), 400)) from None
        finally:
            self.inputs.done([art.path])
        st = result.state
        out = AskToolOutput(
            answer=result.answer, choice=result.choice, choice_index=result.choice_index,
            rationale=result.rationale, confidence=result.confidence, outcome=result.outcome.status,
            reason=result.outcome.reason, run_id=st.run.run_id,
            tools_called=[c.tool for c in st.tool_calls],
            evidence=[e.claim for e in st.evidence][:50])
        return out.model_dump(mode="json"), Path(result.trace_path) if result.trace_path else None


class AskToolArgs(BaseModel):
    audio: str = Field(description="path of an audio file inside an allowed root (relative paths start at the "
                                   f"first root), or the {RESOURCE_SCHEME}... URI of audio an earlier call derived")
    question: str = Field(description="the question about the audio")
    choices: list[str] | None = Field(None, max_length=26, description="answer options (2 or more); omit for an "
                                                                       "open question")


class AskToolOutput(BaseModel):
    answer: str = Field(description="the answer (the chosen option's text for a multiple-choice question)")
    choice: str | None = Field(description="the chosen option; null for an open question or no answer")
    choice_index: int | None = Field(description="0-based index of the chosen option; null when none")
    rationale: str = Field(description="why, citing evidence ids")
    confidence: float | None = Field(description="calibrated confidence (0-1) where the planner gives one")
    outcome: str = Field(description="answered, failed or stopped")
    reason: str = Field(description="why the run ended as it did (empty when answered)")
    run_id: str = Field(description="the run's id (its trace is on the server)")
    tools_called: list[str] = Field(description="the tools the agent called, in order")
    evidence: list[str] = Field(description="the evidence claims the run gathered (at most 50)")


def ask_description() -> str:
    return ("Answer a question about an audio clip with the whole audiomind agent: a planner chooses bounded "
            "tools, a front end listens, and the answer cites the evidence gathered. Give choices for a "
            "multiple-choice question.\n\nMay support: the answer to a question about the clip, with the "
            "evidence it rests on.\nMust not be used for: facts the evidence does not show; each evidence "
            "item is limited by the boundary of the tool that produced it.\nCategory: agent.")


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
    output: dict[str, Any] | None = None  # the output as the client sees it (its names, resource URIs)
    images: list[tuple[bytes, str]] | None = None  # (PNG bytes, MIME type) for image tools


def _readable(message: str, names: dict[str, str], run_dir: Path | None = None) -> str:
    """An executor message with internal artifact ids replaced by the argument names the client used, and the
    server's run folder left out."""
    for art_id, arg in names.items():
        message = re.sub(rf"\b{re.escape(art_id)}\b", repr(arg), message)
    if run_dir is not None:
        message = message.replace(str(run_dir) + os.sep, "").replace(str(run_dir), "(run folder)")
    return message


def _may_read(owner: str | None, session: str | None) -> bool:
    """A clip is read by the session that made it; one made outside any session by any sessionless request
    that holds its (unguessable) URI."""
    return owner == session


def _resource_name(source: Artifact | None, names: dict[str, str], art: Artifact, k: int) -> str:
    """A derived clip's name in the client's words: `<source file stem>_<operation>[_<k>].wav`."""
    stem = Path(_client_name(source, names)).stem if source is not None else "audio"
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:60] or "audio"
    return f"{stem}_{art.operation or 'derived'}{f'_{k}' if k else ''}{Path(art.path).suffix or '.wav'}"


def _public(exc: PathPolicyError) -> str:
    """A path refusal without the server's resolved path or allowed folders (the shared wording where the
    path policy has one)."""
    from audiomind import paths as path_policy

    public = getattr(path_policy, "public_message", None)
    if public is not None:
        return public(exc)
    return str(exc).split(": resolves to ")[0] + (": outside the allowed folders" if exc.reason == "outside" else "")


def _client_name(art: Artifact, names: dict[str, str]) -> str:
    """How a client knows an input: the file name it gave (or the resource it named)."""
    params = art.parameters or {}
    return str(params.get("resource") or params.get("name") or Path(art.path).name)


def _without_path(message: str, path: Path, given: str) -> str:
    """An audio error with the resolved server path replaced by what the client wrote."""
    return message.replace(str(path), given)


def _client_view(value: Any, aliases: dict[str, str], paths: dict[str, str]) -> Any:
    """A tool output as a client sees it: internal artifact ids ("a0", "a1 [0.0-5.0 s]") become the argument
    names it used, and derived files' server paths their resource URIs."""
    if isinstance(value, str):
        if value in paths:
            return paths[value]
        head, _, rest = value.partition(" ")
        if head in aliases:
            return aliases[head] + (" " + rest if rest else "")
        return value
    if isinstance(value, dict):
        return {k: _client_view(v, aliases, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_client_view(v, aliases, paths) for v in value]
    return value


def _images(tool: str, output: dict[str, Any] | None) -> list[tuple[bytes, str]]:
    if tool not in IMAGE_TOOLS or not output or not isinstance(output.get("image_path"), str):
        return []
    return [(Path(output["image_path"]).read_bytes(), "image/png")]


def _storage_failure(error: str) -> bool:
    """A tool error that is a refused write in disguise (libsndfile says only 'System error')."""
    return any(s in error for s in ("System error", "No space left", "Errno 28", "Read-only file system",
                                    "Errno 30", "Disk quota"))


def _write_problem(folder: Path) -> str | None:
    """Why `folder` takes no more files (full, read-only, ...), or None when it still does."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".write-check-")
        try:
            os.write(fd, b"\0" * 65536)
        finally:
            os.close(fd)
            os.unlink(name)
        if shutil.disk_usage(folder).free < MIN_FREE_BYTES:
            return storage_problem(OSError(errno.ENOSPC, "No space left on device"))
    except OSError as exc:
        return storage_problem(exc, folder)
    return None


# ---- the MCP face --------------------------------------------------------------------------------------
def _session_of(ctx: Any) -> str:
    """Who may list and read a derived clip: on stdio the one client of this process; on streamable HTTP
    the session (its Mcp-Session-Id), or, for a request without a session (the stateless protocol), no
    one but whoever holds the clip's URI (it carries 128 random bits), and no listing."""
    request = getattr(ctx, "request", None)
    if request is None:
        return "stdio"
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{sid}" if sid else STATELESS


def _ask_tool() -> Any:
    """The `ask` tool (the whole agent) as MCP lists it."""
    import mcp_types as types

    return types.Tool(
        name=ASK_TOOL, title="ask the audiomind agent", description=ask_description(),
        input_schema=_client_schema(AskToolArgs.model_json_schema()),
        output_schema=AskToolOutput.model_json_schema(mode="serialization"),
        annotations=types.ToolAnnotations(title="ask the audiomind agent", read_only_hint=True,
                                          destructive_hint=False, idempotent_hint=False, open_world_hint=False),
        _meta={"audiomind/manifest": {"category": "agent"}})


def _manifest_tool(m: ToolManifest) -> Any:
    """One inventory tool as MCP lists it: its schemas, hints and manifest boundaries."""
    import mcp_types as types

    return types.Tool(
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


def _refused(message: str) -> Any:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=f"error: {message}")], is_error=True)


def _call_result(name: str, out: CallOutcome) -> Any:
    """A finished tool call as MCP's result: the output as JSON text and structured content, images, the
    evidence claims, a resource link per derived clip, and the call's record in the result's _meta."""
    import mcp_types as types

    meta = {META_KEY: {
        "tool_call_id": out.call.id, "status": out.call.status.value,
        "cache_hit": out.call.status == ToolCallStatus.cached, "duration_s": out.call.duration_s,
        "tool_version": out.call.tool_version, "cache_key": out.call.cache_key, "run_id": out.run_id,
        "trace": f"{out.run_id}/{Path(out.trace_path).name}", "inputs": out.inputs, "claims": out.claims,
    }}
    if not out.ok:
        return types.CallToolResult(
            content=[types.TextContent(text=f"error: {name} {out.call.status.value}: {out.error}")],
            is_error=True, _meta=meta)
    output = out.output or {}
    content: list[Any] = [types.TextContent(text=json.dumps(output, ensure_ascii=False))]
    for data, mime in out.images or []:
        content.append(types.ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
    if out.claims:
        content.append(types.TextContent(text="Evidence:\n" + "\n".join(f"- {c}" for c in out.claims)))
    for uri, art, prov in out.derived:
        content.append(types.ResourceLink(
            uri=uri, name=prov["name"], title=f"{prov['operation']} of {prov['source']}",
            description=(f"derived audio: {prov['operation']} {json.dumps(prov['parameters'])} of "
                         f"{prov['source']} (sha256 {str(prov['source_sha256'])[:12]}…); "
                         f"{art.duration_s:.3f} s, {art.sample_rate} Hz, {art.channels} ch"),
            mime_type="audio/wav", size=Path(art.path).stat().st_size, _meta={PROVENANCE_KEY: prov}))
    return types.CallToolResult(content=content, structured_content=output, is_error=False, _meta=meta)


def build_server(core: ToolServer):
    """A low-level `mcp.server.Server` over `core`: tools/list, tools/call, resources/list, resources/read."""
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import INVALID_PARAMS

    ask_tool = _ask_tool()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        tools = await anyio.to_thread.run_sync(core.tools)
        return types.ListToolsResult(tools=[*([ask_tool] if core.ask_agent else []),
                                            *[_manifest_tool(m) for m in tools.values()]])

    async def call_ask(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            out, trace = await anyio.to_thread.run_sync(core.ask, dict(params.arguments or {}), _session_of(ctx))
        except ToolInputError as exc:
            return _refused(str(exc))
        text = f"{out['answer']}\n\nWhy: {out['rationale']}" if out["answer"] else f"no answer: {out['reason']}"
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=out,
                                    is_error=out["outcome"] == "failed",
                                    _meta={META_KEY: {"run_id": out["run_id"], "trace": core.trace_ref(trace)}})

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        tools = await anyio.to_thread.run_sync(core.tools)
        if params.name == ASK_TOOL and core.ask_agent is not None:
            return await call_ask(ctx, params)
        if params.name not in tools:
            known = ", ".join([*([ASK_TOOL] if core.ask_agent else []), *sorted(tools)])
            raise MCPError(code=INVALID_PARAMS, message=f"unknown tool {params.name!r}; available tools: {known}")
        try:
            out = await anyio.to_thread.run_sync(core.call, params.name, dict(params.arguments or {}),
                                                 _session_of(ctx))
        except ToolInputError as exc:
            return _refused(str(exc))
        except OSError as exc:  # a write the executor does not guard (the cache, a derived folder)
            return _refused(storage_problem(exc, core.runs_dir))
        return _call_result(params.name, out)

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=prov["name"], mime_type="audio/wav", size=Path(art.path).stat().st_size,
                           description=f"{prov['operation']} of {prov['source']}", _meta={PROVENANCE_KEY: prov})
            for uri, art, prov in core.listed(_session_of(ctx))
        ])

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            art, prov = core.read(str(params.uri), _session_of(ctx))
        except KeyError:
            raise MCPError(code=-32002, message=f"unknown resource {params.uri}") from None
        data = await anyio.Path(art.path).read_bytes()
        return types.ReadResourceResult(contents=[types.BlobResourceContents(
            uri=str(params.uri), mime_type="audio/wav", blob=base64.b64encode(data).decode("ascii"),
            _meta={PROVENANCE_KEY: prov})])

    roots = ", ".join(repr(r.name or str(r)) for r in core.roots)  # by name: where they are is not said
    return Server(
        SERVER_NAME,
        version=_version(),
        title="audiomind audio tools",
        instructions=(
            "Bounded audio-analysis tools with typed outputs. Give audio as a file path inside the allowed "
            f"folder(s) {roots}, relative to the first. Each tool's description says what its output may support and what it must "
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
    """The MCP server over stdio (audiomind.tools.mcp_transport)."""
    mcp_transport.serve_stdio(core, build_server)


def serve_http(core: ToolServer, port: int, host: str = "127.0.0.1") -> None:
    """The MCP server over streamable HTTP on loopback (audiomind.tools.mcp_transport)."""
    mcp_transport.serve_http(core, build_server, port, host)
