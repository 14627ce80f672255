"""Trace files: the evidence state serialized with a schema version, written atomically, with a JSON
Schema generated from the same pydantic models. Secrets never reach disk: any value of a known API-key
environment variable is redacted before writing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from audiomind.fsutil import atomic_write
from audiomind.paths import clip_text
from audiomind.state import SCHEMA_VERSION, EvidenceState, ModelMessage

SECRET_ENV_VARS = (
    "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN", "AUDIOMIND_API_KEY",
)


def redact(text: str) -> str:
    for var in SECRET_ENV_VARS:
        value = os.environ.get(var)
        if value and len(value) >= 8:
            text = text.replace(value, "[redacted]")
    return text


_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


def model_messages(messages: Any) -> list[ModelMessage]:
    """A model request's messages as the trace records them (`ModelCall.input`): LangChain messages,
    OpenAI-style dicts or a bare prompt string, each as (role, text). Non-text parts (audio, images) are
    named, never inlined: `[input_audio]`."""

    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            out = []
            for part in content:
                if isinstance(part, str):
                    out.append(part)
                elif isinstance(part, dict):
                    out.append(part["text"] if isinstance(part.get("text"), str) else f"[{part.get('type', 'part')}]")
            return "\n".join(out)
        return "" if content is None else str(content)

    if isinstance(messages, str):
        return [ModelMessage(role="user", content=messages)]
    out = []
    for m in messages or []:
        if isinstance(m, dict):
            role, content = str(m.get("role", "user")), m.get("content")
        else:
            kind = str(getattr(m, "type", "user"))
            role, content = _ROLES.get(kind, kind), getattr(m, "content", m)
        out.append(ModelMessage(role=role, content=text_of(content)))
    return out


def dump_trace(state: EvidenceState) -> str:
    return redact(state.model_dump_json(indent=2))


def write_trace(state: EvidenceState, path: str | Path) -> Path:
    """Atomic, durable write (audiomind.fsutil: temp file in the same folder, fsync, rename, fsync the
    folder): a killed run leaves the old file or the new one, never half."""
    return atomic_write(path, dump_trace(state))


def load_trace(path: str | Path) -> EvidenceState:
    """A trace file as its state, read by the bounded reader (audiomind.fsutil: a regular file under
    MAX_INPUT_BYTES; a FIFO, a device or a huge file is an InputFileError, never a hang or a memory blow-up)."""
    from audiomind.fsutil import read_input_bytes

    return EvidenceState.model_validate_json(read_input_bytes(path))


def trace_json_schema() -> dict[str, Any]:
    """The JSON Schema of a trace file. `schema_version` is required: a file without it cannot say which
    layout it follows (the model gives it a default only so a graph can start from a bare question)."""
    schema = EvidenceState.model_json_schema(mode="serialization")
    required = list(schema.get("required", []))
    if "schema_version" not in required:
        schema["required"] = ["schema_version", *required]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://audiomind.dev/schema/trace-{SCHEMA_VERSION}.json",
        "title": f"audiomind trace (schema {SCHEMA_VERSION})",
        **schema,
    }


def write_schema(path: str | Path) -> Path:
    p = Path(path)
    p.write_text(json.dumps(trace_json_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return p


def validate_trace_file(path: str | Path) -> list[str]:
    """JSON Schema errors as 'path: message' lines; an empty list means valid."""
    import jsonschema

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(trace_json_schema())
    return [  # a message repeats the offending value (maybe the whole file): ~200 characters at most
        f"{'/'.join(str(x) for x in err.absolute_path) or '(root)'}: {clip_text(err.message, 200)}"
        for err in sorted(validator.iter_errors(data), key=lambda e: [str(x) for x in e.absolute_path])
    ]
