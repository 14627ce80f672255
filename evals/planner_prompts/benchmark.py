"""Planner prompts built for cost and caching (issue 33 point 4): input tokens per item and the prefix that
consecutive decide prompts share. A benchmark, not a test:

    .venv/bin/python evals/planner_prompts/benchmark.py [--items 4] [--json out.json]

Runs the whole agent (AudioMind: perception prompt, perception, plan, the evidence loop, summary, answer)
on a few MMAR items (question, choices and modality from the repository's copy of the MMAR meta,
tests/data/parity/mmar/MMAR-meta.jsonl.xz; the audio is a shipped examples/ clip of the same modality, as
MMAR's own audio is not in the repository) with the LLM planner AND the audio front end both talking HTTP to
a loopback OpenAI-compatible stand-in (`StandIn`). The stand-in answers every planner role with valid JSON,
the decide calls of an item by a fixed script (call two tools, call two more, among them a crop, answer),
the front end with an LALM-like observation and an answer; the tools really run.

Tokens are counted as 4 characters a token (audiomind's own estimate_tokens; tiktoken is installed but has no
encoding files offline), over the text of every message the planner sent (system and user). The stand-in
reports that count as `usage.prompt_tokens`, so the trace's ModelCall.input_tokens carry it too.

Printed per item: the planner's requests and input tokens (by role), the bytes of its decide prompts, and the
prefix share of consecutive decide prompts: the longest common prefix of the two request texts (every
message as 'role\\ncontent\\n', in order) over the length of the later one; then the mean, and whether the
static part (the system message of the plan and decide requests) is byte-identical across the run's calls
and items. Targets: <= 20,000 planner input tokens per item (the issue measured 48,314 before this change)
and >= 90% prefix share.
"""

from __future__ import annotations

import itertools
import json
import lzma
import os
import re
import statistics
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

META = ROOT / "tests" / "data" / "parity" / "mmar" / "MMAR-meta.jsonl.xz"
CLIPS = {"speech": "weather.wav", "sound": "phone_ring.wav", "music": "beeps.wav"}
TARGET_TOKENS, TARGET_SHARE = 20_000, 0.90
BEFORE_TOKENS = 48_314  # issue 33 point 4: planner input tokens per MMAR item before this change
CHARS_PER_TOKEN = 4

# The decide script of every item: (action, tool calls); the plan names the first three tools.
SCRIPT: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    ("CALL_TOOLS", [("count_events", {"artifact": "a0"}), ("loudness", {"artifact": "a0"})]),
    ("CALL_TOOLS", [("crop", {"artifact": "a0", "start_s": 0.0, "end_s": 2.0}), ("spectral", {"artifact": "a0"})]),
    ("ANSWER", []),
]
PLAN_TOOLS = ["count_events", "loudness", "spectral"]


def tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def request_tokens(messages: list[dict[str, Any]]) -> int:
    """A request's input tokens: every message's text (system, user), 4 characters a token."""
    return sum(tokens(content_text(m.get("content"))) for m in messages)


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def request_text(messages: list[dict[str, Any]]) -> str:
    """A request as one text: every message as 'role\\ncontent\\n', in order (what a prefix cache sees)."""
    return "".join(f"{m['role']}\n{content_text(m.get('content'))}\n" for m in messages)


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on a[:k] == b[:k]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class StandIn:
    """A loopback OpenAI-compatible chat server: planner roles by their response_format's schema name, the
    audio front end by its input_audio parts. Records every request (path, body)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.decides: dict[str, int] = {}
        self.lock = threading.Lock()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with standin.lock:
                    standin.requests.append(body)
                    text = standin.reply(body)
                n = request_tokens(body.get("messages", []))
                out = json.dumps({
                    "id": f"chatcmpl-{len(standin.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": n, "completion_tokens": tokens(text),
                              "total_tokens": n + tokens(text)}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def question_of(body: dict[str, Any]) -> str:
        text = "\n".join(content_text(m.get("content")) for m in body["messages"])
        m = re.search(r"^Question: (.*)$", text, re.MULTILINE)
        return m.group(1) if m else ""

    def reply(self, body: dict[str, Any]) -> str:
        msgs = body.get("messages", [])
        audio = any(isinstance(m.get("content"), list) and any(p.get("type") == "input_audio" for p in m["content"])
                    for m in msgs)
        text = "\n".join(content_text(m.get("content")) for m in msgs)
        if audio:  # the audio front end: a first listen, or the final answer
            if "provisional_answer" in text:
                return json.dumps({
                    "description": "The clip opens with a short lead-in, then the main sound continues with two "
                                   "louder passages around the middle and a softer ending; a second layer enters "
                                   "after a few seconds and stays in the background until the end. The texture "
                                   "is steady, the level changes twice, and nothing is cut off at either edge.",
                    "focus": "the passages the question asks about are the two louder ones in the middle",
                    "provisional_answer": None,
                    "open_needs": ["how many distinct events there are", "where the level changes"],
                    "uncertainty": "medium: the background layer masks the softer ending"})
            choices = re.findall(r"^\s+[A-Z]{1,2}\. (.*)$", text, re.MULTILINE)
            return json.dumps({"answer": choices[0] if choices else "unknown", "rationale": "stand-in"})
        rf = body.get("response_format") or {}
        name = (rf.get("json_schema") or {}).get("name") if rf.get("type") == "json_schema" else None
        if name == "PerceptionPromptOut":
            return json.dumps({"prompt": f"Listen to the clip and report what you hear about: "
                                         f"{self.question_of(body)} Say how certain you are.",
                               "auditory_targets": ["the main sound", "changes in level", "background"]})
        if name == "PlanOut":
            return json.dumps({"intent": self.question_of(body), "answer_format": "one of the choices",
                               "focus": ["the main sound"], "candidate_operations": PLAN_TOOLS,
                               "claims_to_verify": ["how many distinct events there are"],
                               "directly_answerable": [], "rationale": "measure, then look closer"})
        if name == "DecisionOut":
            q = self.question_of(body)
            i = self.decides.get(q, 0)
            self.decides[q] = i + 1
            action, calls = SCRIPT[min(i, len(SCRIPT) - 1)]
            return json.dumps({"action": action, "rationale": f"scripted step {i + 1}",
                               "tool_calls": [{"tool": t, "arguments": a, "reason": "scripted"} for t, a in calls],
                               "relisten_artifact_ids": [], "relisten_prompt": "", "stop_reason": ""})
        return ("Summary: the front end reports a lead-in, two louder passages and a softer ending (obs); "
                "count_events and loudness measured the events and the level (their evidence ids); the crop and "
                "the spectral measure describe the first two seconds. Open: the background layer.")


def mmar_items(n: int) -> list[dict[str, Any]]:
    """The first items of each modality in turn (speech, sound, music, ...), n in all."""
    with lzma.open(META, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    by_mod: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_mod.setdefault(r.get("modality") or "sound", []).append(r)
    order = ["speech", "sound", "music"] + sorted(m for m in by_mod if m not in ("speech", "sound", "music"))
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < n and k < len(rows):
        for mod in order:
            if len(out) < n and k < len(by_mod.get(mod, [])):
                out.append(by_mod[mod][k])
        k += 1
    return out


def clip_for(modality: str) -> Path:
    key = next((k for k in CLIPS if k in modality), "sound")
    return ROOT / "examples" / CLIPS[key]


def planner_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if not any(isinstance(m.get("content"), list) for m in r.get("messages", []))]


def role_of(body: dict[str, Any]) -> str:
    rf = body.get("response_format") or {}
    name = (rf.get("json_schema") or {}).get("name") if rf.get("type") == "json_schema" else None
    return {"PerceptionPromptOut": "perception_prompt", "PlanOut": "plan", "DecisionOut": "decide"}.get(
        name or "", "summarize")


def measure(items: list[dict[str, Any]], keep_texts: bool = False) -> dict[str, Any]:
    """Every item run through the agent against the stand-in; per item its planner requests' figures (and,
    with keep_texts, the text of each decide request)."""
    from audiomind.api import AudioMind

    os.environ.pop("OPENAI_API_KEY", None)
    standin = StandIn()
    rows: list[dict[str, Any]] = []
    systems: set[str] = set()
    recorded_ok = True
    try:
        with tempfile.TemporaryDirectory() as tmp:
            agent = AudioMind(planner=f"openai:bench-planner@{standin.url}", frontend=f"openai:bench-audio@{standin.url}",
                              trace_dir=tmp, model_cache="off", use_cache=False)
            for item in items:
                start = len(standin.requests)
                result = agent.ask(clip_for(item.get("modality") or ""), item["question"], item["choices"],
                                   item_id=item["id"], write=False)
                reqs = planner_requests(standin.requests[start:])
                texts = [request_text(r["messages"]) for r in reqs]
                roles = [role_of(r) for r in reqs]
                decide = [t for t, role in zip(texts, roles) if role == "decide"]
                shares = [common_prefix(a, b) / len(b) for a, b in itertools.pairwise(decide)]
                for r, role in zip(reqs, roles):
                    if role in ("plan", "decide") and r["messages"][0]["role"] == "system":
                        systems.add(content_text(r["messages"][0]["content"]))
                # ModelCall.input records what was sent: the decide calls' messages, as the server got them
                sent = [[(m["role"], content_text(m["content"])) for m in r["messages"]]
                        for r, role in zip(reqs, roles) if role == "decide"]
                traced = [[({"human": "user", "ai": "assistant"}.get(m.role, m.role), m.content) for m in c.input]
                          for c in result.state.model_calls if c.role == "planner" and c.purpose == "decide"]
                recorded_ok &= sent == traced
                rows.append({
                    "item": item["id"], "modality": item.get("modality"), "outcome": result.outcome.status,
                    "planner_requests": len(reqs),
                    "tokens": sum(request_tokens(r["messages"]) for r in reqs),
                    "tokens_by_role": {role: sum(request_tokens(r["messages"]) for r, x in zip(reqs, roles) if x == role)
                                       for role in dict.fromkeys(roles)},
                    "decide_bytes": [len(t.encode()) for t in decide],
                    "decide_prefix_share": shares,
                    "trace_input_tokens": sum(c.input_tokens or 0 for c in result.state.model_calls
                                              if c.role == "planner"),
                    **({"decide_texts": decide} if keep_texts else {}),
                })
    finally:
        standin.close()
    return {"items": rows, "static_parts": len(systems),
            "static_bytes": sorted(len(s.encode()) for s in systems), "model_call_input_matches": recorded_ok}


def report(res: dict[str, Any]) -> bool:
    rows = res["items"]
    print(f"{'item':34} {'mod':7} {'req':>3} {'tokens':>7}  {'decide prompt bytes':28} prefix share (consecutive decides)")
    for r in rows:
        print(f"{r['item'][:34]:34} {str(r['modality'])[:7]:7} {r['planner_requests']:3d} {r['tokens']:7,d}  "
              f"{', '.join(f'{b:,}' for b in r['decide_bytes']):28} "
              f"{', '.join(f'{s:.1%}' for s in r['decide_prefix_share'])}")
    per_item = statistics.mean(r["tokens"] for r in rows)
    shares = [s for r in rows for s in r["decide_prefix_share"]]
    by_role: dict[str, list[int]] = {}
    for r in rows:
        for role, n in r["tokens_by_role"].items():
            by_role.setdefault(role, []).append(n)
    print()
    print("planner input tokens per item, by role (mean): " + ", ".join(
        f"{role} {statistics.mean(v):,.0f}" for role, v in by_role.items()))
    print(f"planner input tokens per item: mean {per_item:,.0f}, max {max(r['tokens'] for r in rows):,} "
          f"(before: {BEFORE_TOKENS:,}; target <= {TARGET_TOKENS:,}; 4 chars/token)")
    print(f"decide prompt prefix share: mean {statistics.mean(shares):.1%}, min {min(shares):.1%} "
          f"(target >= {TARGET_SHARE:.0%})")
    print(f"static part (plan/decide system message): {res['static_parts']} distinct text(s) across all calls and "
          f"items, {', '.join(f'{b:,}' for b in res['static_bytes'])} bytes")
    print(f"ModelCall.input of every decide call equals the messages the server received: "
          f"{res['model_call_input_matches']}")
    ok = (max(r["tokens"] for r in rows) <= TARGET_TOKENS and min(shares) >= TARGET_SHARE
          and res["static_parts"] == 1 and res["model_call_input_matches"])
    print("targets met" if ok else "TARGETS MISSED")
    return ok


def main(argv: list[str]) -> int:
    n = int(argv[argv.index("--items") + 1]) if "--items" in argv else 4
    res = measure(mmar_items(n))
    ok = report(res)
    if "--json" in argv:
        Path(argv[argv.index("--json") + 1]).write_text(json.dumps(res, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
