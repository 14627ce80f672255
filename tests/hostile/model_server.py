"""A loopback OpenAI-compatible server that plays a cooperative planner and audio front end, so whole `ask` and
`bench run` commands finish without loading any embedded model: the planner's structured requests are
answered by the shape of their JSON schema (perception prompt, plan, decision = ANSWER at once), a request
carrying audio gets a front-end reply, anything else a one-line summary. Asked for the model `m-toolfail`,
the planner's first decision is a tool call that fails (`crop` past the end of the clip)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FRONTEND_REPLY = {"answer": "yes", "rationale": "a steady tone is heard throughout", "confidence": 0.9,
                  "description": "a steady 440 Hz tone", "focus": "the tone", "provisional_answer": "yes",
                  "open_needs": [], "uncertainty": "low"}


def _reply_for(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    props = schema.get("properties") or {}
    if "action" in props and body.get("model") == "m-toolfail" and "-> error" not in json.dumps(body):
        # first decision of a run on the model named m-toolfail: a tool call that fails (a crop past the end)
        return json.dumps({"action": "CALL_TOOLS", "rationale": "crop the end", "relisten_artifact_ids": [],
                           "relisten_prompt": "", "stop_reason": "",
                           "tool_calls": [{"tool": "crop", "arguments": {"artifact": "a0", "start_s": 999.0},
                                           "reason": "look at the end"}]})
    if "action" in props:
        return json.dumps({"action": "ANSWER", "rationale": "the first listen settles it", "tool_calls": [],
                           "relisten_artifact_ids": [], "relisten_prompt": "", "stop_reason": ""})
    if "intent" in props:
        return json.dumps({"intent": "is a tone present", "answer_format": "one of the choices", "focus": ["tone"],
                           "candidate_operations": [], "claims_to_verify": [], "directly_answerable": ["tone"],
                           "rationale": "a single listen answers it"})
    if "prompt" in props:
        return json.dumps({"prompt": "Listen for a steady tone and describe it.", "auditory_targets": ["tone"]})
    text = json.dumps(body.get("messages", []))
    if "input_audio" in text:
        return json.dumps(FRONTEND_REPLY)
    return "A steady tone is heard in a0 throughout the clip."


class ModelServer:
    def __init__(self) -> None:
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                content = _reply_for(json.loads(raw or b"{}"))
                data = json.dumps({
                    "id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = self
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.spec = f"openai:m@{self.url}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
