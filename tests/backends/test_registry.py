"""Spec parsing through the backend registry, the factories, doctor's backend report, and the Ollama /
Gemini planners on the wire."""

from __future__ import annotations

import json

import pytest

from audiomind.backends.base import BackendError, FrontEnd, Planner
from audiomind.backends.registry import describe_backends, make_frontend, make_planner, parse_spec
from audiomind.state import Action

from .conftest import Recorded, Reply, artifact_for, gemini_reply, make_state


@pytest.mark.parametrize(
    "spec, kind, model, base_url, path",
    [
        ("rules", "rules", None, None, None),
        ("cascade", "cascade", None, None, None),
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None, None),
        ("openai:Qwen/Qwen2.5-Omni-7B@http://localhost:8000/v1", "openai", "Qwen/Qwen2.5-Omni-7B",
         "http://localhost:8000/v1", None),
        ("openai:org/model:q4@http://10.0.0.2:8080/v1/", "openai", "org/model:q4", "http://10.0.0.2:8080/v1", None),
        ("gemini:gemini-2.5-flash", "gemini", "gemini-2.5-flash", None, None),
        ("gemini:gemini-2.5-flash@http://127.0.0.1:9999", "gemini", "gemini-2.5-flash", "http://127.0.0.1:9999", None),
        ("ollama:qwen2.5:7b", "ollama", "qwen2.5:7b", None, None),
        ("ollama:qwen2.5:7b@http://127.0.0.1:11434", "ollama", "qwen2.5:7b", "http://127.0.0.1:11434", None),
        ("ollama:qwen2.5:7b@localhost:11434", "ollama", "qwen2.5:7b", "http://localhost:11434", None),
        ("llamacpp:/models/gemma.gguf", "llamacpp", None, None, "/models/gemma.gguf"),
        ("replay:traces/run.json", "replay", None, None, "traces/run.json"),
    ],
)
def test_parse_spec(spec, kind, model, base_url, path):
    bs = parse_spec(spec)
    assert (bs.kind, bs.model, bs.base_url, bs.path) == (kind, model, base_url, path)
    assert str(bs) == spec and parse_spec(bs) is bs


@pytest.mark.parametrize("spec", ["", "gpt-4o", "foo:bar", "openai:", "openai:@http://x:1/v1", "llamacpp:",
                                  "openai:m@not a url", "ollama:m@ftp://x"])
def test_bad_specs_list_the_forms(spec):
    with pytest.raises(ValueError) as ei:
        parse_spec(spec)
    assert "openai:MODEL@http://HOST:PORT/v1" in str(ei.value) and "llamacpp:/path/model.gguf" in str(ei.value)


def test_make_planner_and_frontend_factories(monkeypatch, server):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    p = make_planner(f"openai:m@{server.url}/v1", registry=None)
    assert isinstance(p, Planner) and p.spec().kind == "openai" and p.spec().base_url == f"{server.url}/v1"
    fe = make_frontend(f"openai:Qwen/Qwen2.5-Omni-7B@{server.url}/v1", executor=None, window_s=20.0)
    assert isinstance(fe, FrontEnd) and fe.spec().decoding["window_s"] == 20.0 and fe.spec().role == "frontend"
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        make_frontend("openai:gpt-4o-audio-preview", executor=None)
    with pytest.raises(BackendError, match="GEMINI_API_KEY"):
        make_frontend("gemini:gemini-2.5-flash", executor=None)
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaFAKE")
    g = make_frontend(f"gemini:gemini-2.5-flash@{server.url}", executor=None)
    assert g.spec().kind == "gemini" and g.window_s is None
    with pytest.raises(BackendError, match=r"no trace file at x.json"):
        make_planner("replay:x.json", registry=None)
    with pytest.raises(BackendError, match=r"no trace file at x.json"):
        make_frontend("replay:x.json", executor=None)
    with pytest.raises(BackendError, match="not a planner"):
        make_planner("cascade", registry=None)
    with pytest.raises(BackendError, match="cannot take audio"):
        make_frontend("ollama:qwen2.5:7b", executor=None)
    with pytest.raises(BackendError, match="no GGUF file"):
        make_planner("llamacpp:/nonexistent/model.gguf", registry=None)


def test_rules_and_cascade_factories(tmp_path):
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry

    registry = ToolRegistry.load()
    planner = make_planner("rules", registry=registry)
    assert isinstance(planner, Planner)
    fe = make_frontend("cascade", executor=ToolExecutor(registry, tmp_path / "derived", cache=None))
    assert isinstance(fe, FrontEnd)


def test_describe_backends_never_prints_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRET-VALUE-123456789")
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSECRETVALUE123456789")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing there: a quick, honest "no"
    rows = describe_backends()
    names = [r.name for r in rows]
    assert names[:2] == ["rules", "cascade"] and {"openai", "gemini", "ollama", "llamacpp", "replay"} <= set(names)
    text = json.dumps([r.model_dump() for r in rows])
    assert "SECRET" not in text
    by = {r.name: r for r in rows}
    assert "OPENAI_API_KEY is set" in by["openai"].why and by["openai"].usable
    assert by["gemini"].usable and "GEMINI_API_KEY is set" in by["gemini"].why
    assert not by["ollama"].usable and "no server at http://127.0.0.1:9" in by["ollama"].why
    assert by["replay"].usable and "recorded trace" in by["replay"].why


def test_ollama_planner_on_the_wire(server, clips):
    """ChatOllama (langchain-ollama) against a loopback server speaking the Ollama /api/chat protocol."""
    decision = {"action": "ANSWER", "rationale": "the observation suffices", "tool_calls": [],
                "relisten_artifact_ids": [], "relisten_prompt": "", "stop_reason": ""}

    def ollama(req: Recorded) -> Reply:
        if req.path == "/api/chat":
            return Reply(200, {"model": req.body["model"], "created_at": "2025-01-01T00:00:00Z",
                               "message": {"role": "assistant", "content": json.dumps(decision)},
                               "done": True, "done_reason": "stop", "prompt_eval_count": 99, "eval_count": 12})
        return Reply(404, {"error": "not found"})

    server.default = ollama
    planner = make_planner(f"ollama:qwen2.5:7b@{server.url}", registry=None)
    d, call = planner.decide(make_state([artifact_for(clips["short"])]), "- vad")
    assert d.action == Action.ANSWER and d.rationale == "the observation suffices"
    body = server.posts("/api/chat")[0].body
    assert body["model"] == "qwen2.5:7b"
    assert body["format"]["properties"]["action"]["enum"] == ["CALL_TOOLS", "RELISTEN", "ANSWER", "STOP"]
    assert body["options"]["temperature"] == 0
    assert (call.input_tokens, call.output_tokens) == (99, 12)


def test_gemini_planner_on_the_wire(server, clips, monkeypatch):
    """ChatGoogleGenerativeAI against the loopback server: the decision schema goes as a response schema."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaFAKEKEY0123456789")
    server.queue(200, gemini_reply(json.dumps({"action": "STOP", "rationale": "silence",
                                               "stop_reason": "the clip is silent"})))
    planner = make_planner(f"gemini:gemini-2.5-flash@{server.url}", registry=None)
    d, call = planner.decide(make_state([artifact_for(clips["short"])]), "- vad")
    assert d.action == Action.STOP and d.stop_reason == "the clip is silent"
    (req,) = server.posts(":generateContent")
    gen = req.body.get("generationConfig") or req.body.get("generation_config")
    assert (gen.get("responseMimeType") or gen.get("response_mime_type")) == "application/json"
    schema = gen.get("responseJsonSchema") or gen.get("response_json_schema") or gen.get("responseSchema")
    assert schema is not None and "action" in json.dumps(schema)
    assert "AIzaFAKEKEY0123456789" not in call.model_dump_json()


def test_registry_covers_every_kind_and_role():
    """Every spec kind is registered; each role it cannot fill says why (no if/elif chain to forget)."""
    from typing import get_args

    from audiomind.backends.registry import REGISTRY, Kind

    assert set(REGISTRY) == set(get_args(Kind))
    for name, kind in REGISTRY.items():
        assert kind.planner is not None or kind.not_planner, name
        assert kind.frontend is not None or kind.not_frontend, name
    assert [k for k, v in REGISTRY.items() if v.per_run_frontend] == ["cascade"]


def test_agent_takes_backend_instances_and_factories(tmp_path):
    """AudioMind(config, planner=<Planner>, frontend=<FrontEnd or factory>): no subclass, no swapping."""
    from audiomind.api import AudioMind
    from audiomind.backends.frontends.cascade import CascadeFrontEnd
    from audiomind.backends.planners.rules import RulesPlanner
    from audiomind.config import AgentConfig
    from audiomind.tools.executor import ToolExecutor
    from audiomind.tools.manifest import ToolRegistry

    registry = ToolRegistry.load()
    made = []

    def factory(executor):
        made.append(executor)
        return CascadeFrontEnd(executor)

    agent = AudioMind(AgentConfig(trace_dir=tmp_path, max_steps=2), planner=RulesPlanner(registry), frontend=factory)
    assert isinstance(agent.planner, RulesPlanner) and agent.config.planner == "rules"
    ex1, ex2 = (ToolExecutor(registry, tmp_path / n, cache=None) for n in ("r1", "r2"))
    assert agent.frontend_for(ex1).executor is ex1 and agent.frontend_for(ex2).executor is ex2 and made == [ex1, ex2]
    shared = CascadeFrontEnd(ex1)
    agent = AudioMind(trace_dir=tmp_path, frontend=shared)
    assert agent.frontend_for(ex2) is shared and agent.config.frontend == "cascade"
    assert AudioMind(trace_dir=tmp_path).frontend_for(ex1) is not AudioMind(trace_dir=tmp_path).frontend_for(ex1)
