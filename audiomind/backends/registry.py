"""The backend registry: spec kinds -> factories. Turns the `--planner` / `--frontend` spec strings into
planners, front ends and LangChain chat models.

Spec forms (a model name may itself contain ':' and '/', so the base URL is split off at the LAST '@'):

    rules                                   offline rule planner (default planner)
    cascade                                 embedded audio front end (default front end)
    openai:MODEL                            api.openai.com (OPENAI_API_KEY)
    openai:MODEL@http://HOST:PORT/v1        any OpenAI-compatible server (vLLM, llama.cpp server, ...)
    gemini:MODEL[@BASE_URL]                 Gemini (GEMINI_API_KEY or GOOGLE_API_KEY)
    ollama:MODEL[@http://HOST:PORT]         Ollama (planner only; default http://127.0.0.1:11434)
    llamacpp:/path/model.gguf               a local GGUF through llama-cpp-python (planner only)
    replay:TRACE.json                       the recorded planner / front-end outputs of a trace

Every integration is imported lazily, so a missing extra is a clear BackendError at build time and
`audiomind doctor` (describe_backends) can say what is usable without importing anything heavy.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.backends.base import BackendError, FrontEnd, Planner
from audiomind.backends.openai_compat import openai_endpoint
from audiomind.backends.policy import DEFAULT_POLICY, CallPolicy
from audiomind.registry import BUILTIN, Registry
from audiomind.state import ModelSpec

Kind = Literal["rules", "cascade", "openai", "gemini", "ollama", "llamacpp", "replay"]
"""The built-in spec kinds; a plugin adds more to REGISTRY (`registries.backends.register(KIND, BackendKind(...))`)."""

SPEC_FORMS = (
    "rules | cascade | openai:MODEL | openai:MODEL@http://HOST:PORT/v1 | gemini:MODEL[@BASE_URL] | "
    "ollama:MODEL[@http://HOST:PORT] | llamacpp:/path/model.gguf | replay:TRACE.json"
)
OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"

_URL = re.compile(r"^https?://[^\s/@]+(?:/\S*)?$")
_HOSTPORT = re.compile(r"^[A-Za-z0-9.\-]+:\d{1,5}(?:/\S*)?$")


class BackendSpec(BaseModel):
    """A parsed backend spec string."""

    kind: str = Field(description="a registered spec kind: the built-in ones (Kind) or a plugin's")
    model: str | None = None
    base_url: str | None = None
    path: str | None = None
    raw: str = ""

    def __str__(self) -> str:
        return self.raw or self.kind


class BackendStatus(BaseModel):
    """One line of `audiomind doctor`: is this backend usable here, and why (never a key's value)."""

    name: str
    usable: bool
    why: str


def _bad(spec: str, problem: str) -> ValueError:
    plugged = _plugin_kinds()
    more = f" | {' | '.join(plugged)} (from plugins)" if plugged else ""
    return ValueError(f"bad backend spec {spec!r}: {problem}. Expected one of: {SPEC_FORMS}{more}")


def _plugin_kinds() -> list[str]:
    """Spec kinds a plugin registered (audiomind.plugins entry points), in registration order."""
    return [k for k in REGISTRY.names() if REGISTRY.origin(k) != BUILTIN]


def _split_url(spec: str, rest: str) -> tuple[str, str | None]:
    """MODEL[@URL] split at the last '@' when what follows it is a URL (or host:port)."""
    if "@" not in rest:
        return rest, None
    model, url = rest.rsplit("@", 1)
    url = url.strip()
    if _URL.match(url):
        return model, url.rstrip("/")
    if _HOSTPORT.match(url):
        return model, "http://" + url.rstrip("/")
    raise _bad(spec, f"{url!r} after '@' is not a URL like http://127.0.0.1:8000/v1")


def parse_spec(spec: str | BackendSpec) -> BackendSpec:
    """Parse a spec string; raise ValueError listing the accepted forms when it is not one of them."""
    if isinstance(spec, BackendSpec):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(str(spec), "empty spec")
    s = spec.strip()
    if s in REGISTRY and REGISTRY[s].argument is None:
        return BackendSpec(kind=s, raw=s)
    kind, sep, rest = s.partition(":")
    if not sep:
        raise _bad(s, f"unknown backend {kind!r}")
    kind = kind.strip().lower()
    rest = rest.strip()
    argument = REGISTRY[kind].argument if kind in REGISTRY else None
    if argument == "model":
        model, url = _split_url(s, rest)
        model = model.strip()
        if not model:
            raise _bad(s, f"{kind} needs a model name, e.g. {kind}:MODEL")
        return BackendSpec(kind=kind, model=model, base_url=url, raw=s)
    if argument == "path":
        if not rest:
            raise _bad(s, f"{kind} needs a file path")
        return BackendSpec(kind=kind, path=rest, raw=s)
    raise _bad(s, f"unknown backend {kind!r}")


def _import(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BackendError(f"{module} is not importable ({exc}); install it with: pip install {extra}") from exc


# ---------------------------------------------------------------- what each kind builds


@dataclass(frozen=True)
class BuildOptions:
    """What a factory may need besides the spec; each kind takes the fields it uses."""

    registry: Any = None  # ToolRegistry: the rules planner reads the manifests
    executor: Any = None  # ToolExecutor: the cascade listens through the run's executor
    timeout_s: float = 120.0
    max_retries: int = 3
    window_s: float | None = 30.0  # OpenAI-compatible audio servers (Qwen truncates ~30 s)
    gemini_window_s: float | None = None  # Gemini hears whole clips unless set
    temperature: float = 0.0
    max_tokens: int | None = None
    reader: Any = None  # the question reader (audiomind.backends.readers) of the rules planner and the cascade
    policy: CallPolicy = DEFAULT_POLICY  # retries, rate limit, model-call cache (audiomind.backends.policy)
    options: dict[str, Any] = field(default_factory=dict)  # the role's own settings (AgentConfig.*_options)


PlannerFactory = Callable[[BackendSpec, BuildOptions], Planner]
FrontendFactory = Callable[[BackendSpec, BuildOptions], FrontEnd]
ChatModelFactory = Callable[[BackendSpec, BuildOptions], "tuple[Any, dict]"]


@dataclass(frozen=True)
class BackendKind:
    """One spec kind: what it builds as a planner, as a front end, as a LangChain chat model, and what
    to say when it is asked for a role it does not fill."""

    planner: PlannerFactory | None = None
    frontend: FrontendFactory | None = None
    chat_model: ChatModelFactory | None = None
    not_planner: str = ""
    not_frontend: str = ""
    argument: Literal["model", "path"] | None = None  # KIND:MODEL[@URL], KIND:PATH, or the bare name
    per_run_frontend: bool = False  # made for each run (it works through that run's executor)


def _rules(bs: BackendSpec, o: BuildOptions) -> Planner:
    from audiomind.backends.planners.rules import RulesPlanner

    return RulesPlanner(o.registry, o.reader)


def _llm(bs: BackendSpec, o: BuildOptions) -> Planner:
    from audiomind.backends.planners.llm import LLMPlanner

    chat, facts = make_chat_model(bs, timeout_s=o.timeout_s, temperature=o.temperature, max_tokens=o.max_tokens)
    decoding: dict[str, Any] = {"temperature": o.temperature, "structured_output": "json_schema"}
    if o.max_tokens:
        decoding["max_tokens"] = o.max_tokens
    model_spec = ModelSpec(role="planner", spec=str(bs), kind=bs.kind, model=bs.model or bs.path,
                           base_url=bs.base_url if bs.kind != "llamacpp" else None, decoding=decoding)
    return LLMPlanner(chat, name=str(bs), spec=model_spec, policy=replace(o.policy, retries=o.max_retries),
                      endpoint=facts["endpoint"], secrets=facts["secrets"],
                      # an in-process GGUF is not a server that may hang: only the run's budget bounds it
                      timeout_s=None if bs.kind == "llamacpp" else o.timeout_s)


def _replay_planner(bs: BackendSpec, o: BuildOptions) -> Planner:
    from audiomind.backends.planners.replay import ReplayPlanner

    return ReplayPlanner(bs.path or "")


def _cascade(bs: BackendSpec, o: BuildOptions) -> FrontEnd:
    from audiomind.backends.frontends.cascade import CascadeFrontEnd

    return CascadeFrontEnd(o.executor, o.reader)


def _openai_frontend(bs: BackendSpec, o: BuildOptions) -> FrontEnd:
    from audiomind.backends.frontends.openai import OpenAIFrontEnd

    return OpenAIFrontEnd(bs.model or "", base_url=bs.base_url, name=str(bs), window_s=o.window_s,
                          timeout_s=o.timeout_s, policy=replace(o.policy, retries=o.max_retries), **o.options)


def _gemini_frontend(bs: BackendSpec, o: BuildOptions) -> FrontEnd:
    from audiomind.backends.frontends.gemini import GeminiFrontEnd

    return GeminiFrontEnd(bs.model or "", base_url=bs.base_url, name=str(bs), window_s=o.gemini_window_s,
                          timeout_s=o.timeout_s, policy=replace(o.policy, retries=o.max_retries), **o.options)


def _replay_frontend(bs: BackendSpec, o: BuildOptions) -> FrontEnd:
    from audiomind.backends.frontends.replay import ReplayFrontEnd

    return ReplayFrontEnd(bs.path or "", o.executor)


def _openai_chat(bs: BackendSpec, o: BuildOptions) -> tuple[Any, dict]:
    _import("langchain_openai", "langchain-openai")
    ep = openai_endpoint(bs.base_url)
    model = ep.chat_model(bs.model or "", timeout_s=o.timeout_s, temperature=o.temperature, max_tokens=o.max_tokens)
    return model, {"endpoint": ep.base_url, "secrets": [ep.api_key]}


def _gemini_chat(bs: BackendSpec, o: BuildOptions) -> tuple[Any, dict]:
    mod = _import("langchain_google_genai", "langchain-google-genai")
    key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    if not key:
        raise BackendError("GEMINI_API_KEY (or GOOGLE_API_KEY) is not set: export it to use gemini:MODEL")
    kwargs: dict[str, Any] = {"model": bs.model, "google_api_key": key, "temperature": o.temperature,
                              "timeout": o.timeout_s, "max_retries": 1, "max_output_tokens": o.max_tokens}
    if bs.base_url:
        kwargs["base_url"] = bs.base_url
    return mod.ChatGoogleGenerativeAI(**kwargs), {
        "endpoint": bs.base_url or "https://generativelanguage.googleapis.com", "secrets": [key]}


def _ollama_chat(bs: BackendSpec, o: BuildOptions) -> tuple[Any, dict]:
    mod = _import("langchain_ollama", "langchain-ollama")
    url = bs.base_url or os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_URL
    if not url.startswith("http"):
        url = "http://" + url
    model = mod.ChatOllama(model=bs.model, base_url=url, temperature=o.temperature, num_predict=o.max_tokens,
                           client_kwargs={"timeout": o.timeout_s})
    return model, {"endpoint": url, "secrets": []}


def _llamacpp_chat(bs: BackendSpec, o: BuildOptions) -> tuple[Any, dict]:
    path = Path(bs.path or "").expanduser()
    if not path.is_file():
        raise BackendError(f"llamacpp: no GGUF file at {path}")
    _import("llama_cpp", "'audiomind[llamacpp]' (llama-cpp-python; compiles llama.cpp, ~5 min)")
    from audiomind.backends.planners.llamacpp import LlamaCppChatModel

    return LlamaCppChatModel(model_path=str(path), temperature=o.temperature, max_tokens=o.max_tokens or 768), {
        "endpoint": str(path), "secrets": []}


_NO_AUDIO = ("cannot take audio input here: serve an audio model behind an OpenAI-compatible API and use "
             "openai:MODEL@http://HOST:PORT/v1, or use gemini:MODEL or cascade")

REGISTRY: Registry[BackendKind] = Registry("backend", group="backends")
for _name, _kind in {
    "rules": BackendKind(
        planner=_rules,
        not_frontend="rules is a planner, not an audio front end: use --frontend cascade or a model spec"),
    "cascade": BackendKind(
        frontend=_cascade, per_run_frontend=True,
        not_planner="cascade is an audio front end, not a planner: use --planner rules or an LLM spec"),
    "openai": BackendKind(planner=_llm, frontend=_openai_frontend, chat_model=_openai_chat, argument="model"),
    "gemini": BackendKind(planner=_llm, frontend=_gemini_frontend, chat_model=_gemini_chat, argument="model"),
    "ollama": BackendKind(planner=_llm, chat_model=_ollama_chat, not_frontend="ollama " + _NO_AUDIO,
                          argument="model"),
    "llamacpp": BackendKind(planner=_llm, chat_model=_llamacpp_chat, not_frontend="llamacpp " + _NO_AUDIO,
                            argument="path"),
    "replay": BackendKind(planner=_replay_planner, frontend=_replay_frontend, argument="path"),
}.items():
    REGISTRY.register(_name, _kind)
"""Spec kind -> what it builds (a BackendKind, or a 'module:attr' naming one). Every built-in factory imports
its integration lazily; a plugin registers its own kinds (audiomind/registry.py)."""


def kind_of(spec: str | BackendSpec) -> BackendKind:
    return REGISTRY[parse_spec(spec).kind]


def make_chat_model(spec: str | BackendSpec, *, timeout_s: float = 60, temperature: float = 0.0,
                    max_tokens: int | None = None) -> tuple[Any, dict]:
    """(LangChain chat model, facts for the LLMPlanner: endpoint, secrets). `max_tokens` caps replies
    (None: the backend's default; set it for small local models that may ramble inside a grammar)."""
    bs = parse_spec(spec)
    factory = REGISTRY[bs.kind].chat_model
    if factory is None:
        raise BackendError(f"{bs.raw or bs.kind} is not a chat-model backend")
    return factory(bs, BuildOptions(timeout_s=timeout_s, temperature=temperature, max_tokens=max_tokens))


def make_planner(spec: str | BackendSpec, *, registry: Any = None, timeout_s: float = 60,
                 max_retries: int = 3, max_tokens: int | None = None, reader: Any = None,
                 policy: CallPolicy = DEFAULT_POLICY) -> Planner:
    """A Planner for a spec: the rule planner, the replay planner, or an LLMPlanner over the kind's chat model."""
    bs = parse_spec(spec)
    kind = REGISTRY[bs.kind]
    if kind.planner is None:
        raise BackendError(kind.not_planner or f"{bs.kind} is not a planner")
    return kind.planner(bs, BuildOptions(registry=registry, timeout_s=timeout_s, max_retries=max_retries,
                                         max_tokens=max_tokens, reader=reader, policy=policy))


def make_frontend(spec: str | BackendSpec, *, executor: Any = None, window_s: float | None = 30.0,
                  timeout_s: float = 120, max_retries: int = 3,
                  gemini_window_s: float | None = None, reader: Any = None, policy: CallPolicy = DEFAULT_POLICY,
                  options: dict[str, Any] | None = None) -> FrontEnd:
    """A FrontEnd for a spec. `window_s` applies to OpenAI-compatible servers (Qwen truncates ~30 s);
    Gemini hears whole clips unless `gemini_window_s` is set."""
    bs = parse_spec(spec)
    kind = REGISTRY[bs.kind]
    if kind.frontend is None:
        raise BackendError(kind.not_frontend or f"{bs.kind} is not an audio front end")
    try:
        return kind.frontend(bs, BuildOptions(executor=executor, window_s=window_s, timeout_s=timeout_s,
                                              max_retries=max_retries, gemini_window_s=gemini_window_s,
                                              reader=reader, policy=policy, options=dict(options or {})))
    except TypeError as exc:  # a --frontend-option this front end does not take: one clear line
        if options and "unexpected keyword argument" in str(exc):
            raise BackendError(f"{bs}: {exc} (check --frontend-option: this front end takes other settings)") from exc
        raise


# ---------------------------------------------------------------- doctor


def _importable(module: str) -> tuple[bool, str]:
    if importlib.util.find_spec(module.split(".", maxsplit=1)[0]) is None:
        return False, f"{module} not installed"
    try:
        importlib.import_module(module)
        return True, f"{module} imports"
    except Exception as exc:  # noqa: BLE001 - report, never crash doctor
        return False, f"{module} fails to import: {type(exc).__name__}: {str(exc)[:160]}"


def _ollama_answers(url: str, timeout_s: float = 0.5) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/api/tags", timeout=timeout_s) as r:
            import json

            models = [m.get("name") for m in json.loads(r.read() or b"{}").get("models", [])]
            return True, f"answers at {url} ({len(models)} model(s){': ' + ', '.join(models[:5]) if models else ''})"
    except Exception as exc:  # noqa: BLE001
        return False, f"no server at {url} ({type(exc).__name__})"


def describe_backends() -> list[BackendStatus]:
    """What `doctor` prints: which integrations import, which keys are set (names only), what answers."""
    out: list[BackendStatus] = [BackendStatus(name="rules", usable=True, why="offline rule planner (built in)")]
    if importlib.util.find_spec("audiomind.backends.frontends.cascade") is not None:
        out.append(BackendStatus(name="cascade", usable=True,
                                 why="embedded front end (needs the embedded models: see `audiomind models`)"))
    else:
        out.append(BackendStatus(name="cascade", usable=False, why="audiomind.backends.frontends.cascade is missing"))

    ok_oa, why_oa = _importable("openai")
    ok_lco, why_lco = _importable("langchain_openai")
    has_key = bool(os.environ.get("OPENAI_API_KEY"))
    key_note = "OPENAI_API_KEY is set" if has_key else \
        "OPENAI_API_KEY not set (needed for api.openai.com; openai:MODEL@URL local servers work without)"
    from audiomind.backends.frontends.openai import AUDIO_MODELS, SHUT_DOWN_AUDIO_MODELS

    models = (f"audio front ends: {', '.join(f'openai:{m}' for m in AUDIO_MODELS)} (not the shut-down "
              f"{' / '.join(SHUT_DOWN_AUDIO_MODELS)}), or an OpenAI-compatible server such as vLLM serving "
              "Qwen2.5-Omni: openai:Qwen/Qwen2.5-Omni-7B@http://HOST:8000/v1")
    out.append(BackendStatus(name="openai", usable=ok_oa and ok_lco,
                             why=f"{why_oa}; {why_lco}; {key_note}; {models}"))

    ok_g, why_g = _importable("google.genai")
    ok_lcg, why_lcg = _importable("langchain_google_genai")
    gkey = "GEMINI_API_KEY" if os.environ.get("GEMINI_API_KEY") else (
        "GOOGLE_API_KEY" if os.environ.get("GOOGLE_API_KEY") else None)
    out.append(BackendStatus(
        name="gemini", usable=ok_g and ok_lcg and gkey is not None,
        why=f"{why_g}; {why_lcg}; " + (f"{gkey} is set" if gkey else "GEMINI_API_KEY / GOOGLE_API_KEY not set"),
    ))

    ok_lo, why_lo = _importable("langchain_ollama")
    url = os.environ.get("OLLAMA_HOST") or OLLAMA_DEFAULT_URL
    if not url.startswith("http"):
        url = "http://" + url
    up, why_up = _ollama_answers(url) if ok_lo else (False, "not probed")
    out.append(BackendStatus(name="ollama", usable=ok_lo and up, why=f"{why_lo}; {why_up}"))

    ok_ll, why_ll = _importable("llama_cpp")
    out.append(BackendStatus(
        name="llamacpp", usable=ok_ll,
        why=why_ll if ok_ll else f"{why_ll} (pip install 'audiomind[llamacpp]'; compiles llama.cpp, ~5 min)",
    ))
    if ok_ll:
        out += _gguf_planners()
    out.append(BackendStatus(name="replay", usable=True, why="re-runs a recorded trace's planner / front-end outputs"))
    for k in _plugin_kinds():
        try:
            kind = REGISTRY[k]
        except Exception as exc:  # noqa: BLE001 - a plugin's lazy target that does not import: report it
            out.append(BackendStatus(name=k, usable=False, why=f"from plugin {REGISTRY.origin(k)!r}: cannot be "
                                                                f"imported: {type(exc).__name__}: {str(exc)[:160]}"))
            continue
        roles = [r for r, f in (("planner", kind.planner), ("front end", kind.frontend)) if f is not None]
        out.append(BackendStatus(name=k, usable=True,
                                 why=f"from plugin {REGISTRY.origin(k)!r}: {' and '.join(roles) or 'no role'}"))
    return out


def _gguf_planners() -> list[BackendStatus]:
    """`llamacpp:<gguf>` for each GGUF of the embedded stack (SmolLM2): usable as the planner only when its
    context can hold the most compact planner prompt and a reply (never listed as usable when it cannot)."""
    from audiomind.embedded import models

    out = []
    for name in ("smollm2",):
        ok, where = models.check(name)
        if not ok:
            continue
        try:
            from audiomind.backends.planners.llamacpp import planner_fit
            from audiomind.tools.manifest import ToolRegistry

            fits, why = planner_fit(where, ToolRegistry.load().render_inventory())
        except Exception as exc:  # noqa: BLE001 - report, never crash doctor
            fits, why = False, f"cannot be read: {type(exc).__name__}: {str(exc)[:160]}"
        out.append(BackendStatus(name=f"llamacpp:{name}", usable=fits, why=why))
    return out
