"""Every setting, typed, in one module: `AgentConfig` (how one agent is built and bounded) and `Settings`
(where this installation keeps optional model files, thread counts, the judges' default models).

The CLI (`ask`, `bench`, `trace replay`), the batch runner (it ships the config to Ray workers) and the
Python API all take an `AgentConfig`, so a setting is defined, validated and documented once.

`Settings` are the process's: models load once per process, whatever agent asks. Each field's environment
variable (`AUDIOMIND_` + the field name in capitals, an empty value counting as unset) is its documented
fallback; `settings()` returns the active settings (those installed with `use_settings`, else read from the
environment, at call time) and the modules that use a setting take it as a parameter with that fallback.
No other module in the package reads an `AUDIOMIND_*` variable (tests/test_settings.py checks it).

Importing a module here changes nothing in `os.environ`. The variables third-party libraries read (OpenMP,
the Hugging Face hub, tqdm) are set by one explicit call, `apply_process_env()`, at the start of the CLI,
the HTTP service and the MCP server (and of anything else that loads models: call it first).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "AUDIOMIND_"


class Settings(BaseSettings):
    """The process's settings; a field not given is read from its environment variable, else its default."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="forbid", frozen=True)

    cache: Path | None = Field(None, description="the embedded cache (unpacked models, tool results); None: "
                                                 "$XDG_CACHE_HOME/audiomind, else ~/.cache/audiomind")
    intra_op_threads: int = Field(2, ge=1, description="intra-op threads of the models that work on whole clips "
                                                       "(basic-pitch, DNSMOS, Whisper); `audiomind serve` sets "
                                                       "cores // (concurrency x workers) unless given")
    judge_llm: str = Field("rules", description="text model of a judge called as a tool (agent, MCP): a planner "
                                                "spec, or the transparent rules")
    judge_frontend: str = Field("cascade", description="audio front end of a judge called as a tool")
    clap_ckpt: Path | None = Field(None, description="CLAP checkpoint file for AURA's audio entailment (no "
                                                     "package ships the weights; unset: the term is skipped)")
    clap_backend: str | None = Field(None, description="laion | msclap; None: whichever package imports, laion "
                                                       "first")
    clap_amodel: str = Field("HTSAT-tiny", description="LAION-CLAP audio model (HTSAT-base for the music "
                                                       "checkpoints)")
    clap_version: str = Field("2023", description="msclap version")
    spice_dir: Path | None = Field(None, description="folder with the CoreNLP 3.6.0 jars SPICE needs (edit "
                                                     "judge; unset: a declared substitute)")
    fense_dir: Path | None = Field(None, description="folder with FENSE's echecker checkpoint, its encoder and "
                                                     "the SBERT model (edit judge; unset: a declared substitute)")
    fense_sbert: str = Field("paraphrase-TinyBERT-L6-v2", description="the SBERT folder inside fense_dir")
    wordnet_dir: Path | None = Field(None, description="WordNet 3.0 database folder, searched before "
                                                       "/usr/share/wordnet")
    demucs_repo: Path | None = Field(None, description="local folder of Demucs weights for `separate` (unset: "
                                                       "the Demucs download site, which needs network)")
    whisperx_align_dir: Path | None = Field(None, description="local WhisperX alignment model for `asr_align` "
                                                              "(the tool is unavailable without it)")
    pyannote_dir: Path | None = Field(None, description="local pyannote.audio pipeline (config.yaml) for "
                                                        "`diarize_pyannote` (the tool is unavailable without it)")
    model_cache: Path | None = Field(None, description="the model-call cache folder shared by runs (unset: "
                                                       "model-calls/ in the embedded cache, "
                                                       "~/.cache/audiomind/model-calls)")
    batch_poll_s: float | None = Field(None, gt=0, description="first wait between polls of a batch job (seconds; "
                                                               "unset: 10)")
    batch_poll_max_s: float | None = Field(None, gt=0, description="longest wait between polls of a batch job "
                                                                   "(seconds; unset: 300)")
    inputs_max_mb: float | None = Field(None, gt=0, description="the most MB the input copies of `serve` and `mcp` "
                                                                "may hold (unset: 2048)")
    inputs_max_age_h: float | None = Field(None, gt=0, description="hours an input copy of `serve` or `mcp` is kept "
                                                                   "after its last use (unset: 168)")

    @field_validator("clap_backend", mode="before")
    @classmethod
    def _backend(cls, v: Any) -> Any:
        return (v.strip().lower() or None) if isinstance(v, str) else v

    def cache_root(self) -> Path:
        """The embedded cache folder (not created here)."""
        if self.cache is not None:
            return self.cache
        return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")) / "audiomind"


def env_name(field: str) -> str:
    """The environment variable a `Settings` field falls back to."""
    if field not in Settings.model_fields:
        raise KeyError(f"no setting {field!r}")
    return ENV_PREFIX + field.upper()


_override: Settings | None = None
_from_env: tuple[tuple[tuple[str, str], ...], Settings] | None = None
_lock = threading.Lock()


def _settings_from_env() -> Settings:
    """`Settings()` from the environment, re-read when an `AUDIOMIND_*` variable changed since the last call;
    a bad value is one error naming its variable."""
    global _from_env
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX)))
    with _lock:
        if _from_env is not None and _from_env[0] == key:
            return _from_env[1]
    try:
        made = Settings()
    except ValidationError as exc:
        problems = "; ".join(f"{env_name(str(e['loc'][0]))}: {e['msg']} (got {e.get('input')!r})"
                             if e["loc"] and str(e["loc"][0]) in Settings.model_fields else e["msg"]
                             for e in exc.errors())
        raise ValueError(f"bad setting in the environment: {problems}") from None
    with _lock:
        _from_env = (key, made)
    return made


def settings() -> Settings:
    """The active settings: those installed by `use_settings`, else the environment's (read at call time)."""
    return _override if _override is not None else _settings_from_env()


@contextmanager
def use_settings(value: Settings | None = None, /, **changes: Any) -> Iterator[Settings]:
    """Install settings for the process for the duration of the block: `value` (default: the active ones)
    with `changes` applied; the previous ones come back afterwards."""
    global _override
    base = value if value is not None else settings()
    new = Settings.model_validate({**base.model_dump(), **changes}) if changes else base
    with _lock:
        previous, _override = _override, new
    try:
        yield new
    finally:
        with _lock:
            _override = previous


def env_setting(var: str) -> str | None:
    """The value behind an environment variable a tool manifest names (`needs.env`): an `AUDIOMIND_*` name
    is the matching setting (so an installed `Settings` counts), any other name the environment's value."""
    if var.upper().startswith(ENV_PREFIX):
        field = var[len(ENV_PREFIX):].lower()
        if field not in Settings.model_fields:
            return None
        value = getattr(settings(), field)
        return None if value is None else str(value)
    return os.environ.get(var)


# Variables third-party libraries read from the environment, and why; `apply_process_env` sets them (a
# value already in the environment wins). OpenMP reads its variables when its runtime loads (CTranslate2's
# with `import ctranslate2`, torch's with `import torch`), so the call comes before any model loads.
PROCESS_ENV: dict[str, str] = {
    # OpenMP threads that spin while they wait burn whole cores on a shared machine: on 2 busy cores a 10 s
    # Whisper transcription measured 2.5, 36 and 5 s spinning, 1.3-2.4 s passive.
    "OMP_WAIT_POLICY": "PASSIVE",
}
QUIET_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",  # the embedded stack never contacts a model hub
    "TRANSFORMERS_VERBOSITY": "error",  # model loaders' progress and warnings would bury a CLI answer
    "TQDM_DISABLE": "1",
}


def apply_process_env(*, quiet: bool = False) -> dict[str, str]:
    """Set `PROCESS_ENV` (and, with `quiet`, `QUIET_ENV`) where the environment has no value yet; returns
    what it set. Entry points call it first; importing a module never does."""
    wanted = {**PROCESS_ENV, **(QUIET_ENV if quiet else {})}
    set_now = {k: v for k, v in wanted.items() if k not in os.environ}
    os.environ.update(set_now)
    return set_now


COMMAND_GC_THRESHOLD = (50_000, 20, 10)
"""The collector's thresholds in an `audiomind` command (Python's defaults: 700, 10, 10). A command imports a large
library heap (langgraph, scipy, pydantic models) and then allocates steadily: with the defaults README command 1
spent 0.5-0.8 s of CPU in ~570 collections, most of it in full collections walking that heap; with these, 7
collections and 0.1 s. Cycles are still collected, less often."""
_command_gc = threading.Lock()
_command_gc_done = False


def command_gc() -> None:
    """The garbage collector set for an `audiomind` command, once (the CLI's entry callback calls it): the
    thresholds COMMAND_GC_THRESHOLD, and an exit handler, registered first so that it runs last, that freezes
    the heap (`gc.freeze`), so that the interpreter's final collection skips the objects still alive at exit
    instead of walking everything the command imported (0.4-0.5 s of CPU at the end of each `audiomind ask`;
    objects already unreachable then are left to the operating system, as at any exit). Only how often the
    collector runs changes before exit, so a long-lived command (`serve`, `bench`) is served as well."""
    global _command_gc_done
    import atexit
    import gc

    with _command_gc:
        if not _command_gc_done:
            gc.set_threshold(*COMMAND_GC_THRESHOLD)
            atexit.register(gc.freeze)
            _command_gc_done = True


RATE_LIMIT = re.compile(r"(\d+(?:\.\d+)?)?(?:/(\d+(?:\.\d+)?))?")
"""A rate limit as written: 'RPM', 'RPM/TPM' or '/TPM' (positive numbers)."""


class AgentConfig(BaseModel):
    """How an agent is built and bounded. Specs are strings (`rules`, `cascade`, `openai:MODEL@URL`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    planner: str = Field("rules", description="planner spec: rules | openai:MODEL[@URL] | gemini:MODEL | "
                                              "ollama:MODEL[@URL] | llamacpp:PATH.gguf | replay:TRACE.json")
    frontend: str = Field("cascade", description="front-end spec: cascade | openai:MODEL[@URL] | gemini:MODEL | "
                                                 "replay:TRACE.json")
    mode: Literal["agent", "direct"] = Field("agent", description="agent: the planner's evidence loop; direct: the "
                                            "baseline where the front end answers alone (no planner, no tools: one "
                                            "answer call on the original audio)")
    tools_dirs: tuple[str, ...] = Field((), description="extra folders of tool manifests")
    trace_dir: str = Field("traces", description="where traces (and each run's derived audio) are written")
    max_steps: int = Field(6, ge=1, le=100, description="evidence-loop decisions at most")
    time_budget_s: float = Field(600.0, gt=0, description="wall-clock budget of one question")
    format_retries: int = Field(2, ge=0, le=10, description="answer re-asks after a failed format check")
    window_s: float = Field(30.0, gt=0, description="audio longer than this goes to a model front end in windows")
    timeout_s: float = Field(120.0, gt=0, description="per model request")
    max_retries: int = Field(3, ge=0, le=20, description="retries of a failed model request (429, 5xx, timeouts)")
    use_cache: bool = Field(True, description="reuse cached tool results (keyed by tool, version, args, audio hash)")
    cache_dir: str | None = Field(None, description="tool-result cache folder (default: the embedded cache)")
    reader: str = Field("rules", description="question reader: rules (phrase tables, audiomind/language) | "
                                             "llm:PLANNER_SPEC (a text LLM fills the QuestionFrame through its JSON "
                                             "schema, e.g. llm:llamacpp:PATH.gguf or llm:openai:MODEL@URL)")
    max_duration_s: float | None = Field(None, gt=0, description="refuse audio longer than this (seconds) before "
                                                                 "anything decodes it; None: no limit")
    retry_after_cap_s: float = Field(120.0, gt=0, description="the longest a server's Retry-After is honoured "
                                     "(seconds); a longer one waits this long")
    rpm: float | None = Field(None, gt=0, description="client-side requests per minute, per model backend")
    tpm: float | None = Field(None, gt=0, description="client-side input tokens per minute, per model backend")
    rate_limits: dict[str, str] = Field(default_factory=dict, description="per backend spec (with or without "
                                        "@URL): 'RPM', 'RPM/TPM' or '/TPM'; overrides rpm/tpm for that backend")
    model_cache: Literal["use", "refresh", "off"] = Field(
        "off", description="the model-call cache (audiomind.backends.cache): use (read and write), refresh (ask "
        "again, keep the new reply), off. Benchmark runs turn it on")
    model_cache_dir: str | None = Field(None, description="model-call cache folder (default "
                                        "$AUDIOMIND_MODEL_CACHE or ~/.cache/audiomind/model-calls)")
    frontend_options: dict[str, Any] = Field(
        default_factory=dict, description="the model front end's own settings, passed to its constructor and "
        "recorded in its ModelSpec: decoding (temperature (null: not sent), max_tokens, seed, reasoning_effort, "
        "thinking_budget), audio transport (max_audio_parts, audio_parts, inline_limit_mb), stream, logprobs")

    def __hash__(self) -> int:  # frozen, with dict fields: hashed by value (graph.studio caches agents by config)
        return hash(self.model_dump_json())


    @field_validator("trace_dir", "cache_dir", "model_cache_dir", mode="before")
    @classmethod
    def _path_str(cls, v: Any) -> Any:
        return os.fspath(v) if isinstance(v, os.PathLike) else v

    @field_validator("rate_limits")
    @classmethod
    def _rate_limits(cls, v: dict[str, str]) -> dict[str, str]:
        for spec, text in v.items():  # RPM, RPM/TPM or /TPM (audiomind.backends.ratelimit.RateLimit.parse)
            if not RATE_LIMIT.fullmatch(text.strip()) or not text.strip().strip("/"):
                raise ValueError(f"bad rate limit {spec}={text!r}: expected RPM, RPM/TPM or /TPM")
        return v

    @field_validator("tools_dirs", mode="before")
    @classmethod
    def _path_strs(cls, v: Any) -> Any:
        return tuple(os.fspath(d) for d in v) if isinstance(v, (list, tuple)) else v

    def with_trace_dir(self, path: str | Path) -> AgentConfig:
        return self.model_copy(update={"trace_dir": str(path)})
