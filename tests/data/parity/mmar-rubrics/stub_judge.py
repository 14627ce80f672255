"""A deterministic rubric judge served as an OpenAI-compatible chat model on 127.0.0.1 (the grader's model for the
MMAR-Rubrics parity test; the parity target is the scorer's arithmetic, not the judge).

It reads the criterion names from the request (the official prompt and the project's both quote each name in
the JSON shape they ask for), and awards criterion k of rater r the point iff a hash of (the user message's
criterion names, k, r) is even, where r counts the requests seen so far with that same set of names (the five
raters of one item). The reply is a JSON list [{name, score, justification}], the official reply format."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_NAME = re.compile(r'"name": ("(?:[^"\\]|\\.)*")')


def award(names: list[str], rater: int) -> list[int]:
    key = "|".join(names)
    return [int(hashlib.sha256(f"{key}#{k}#{rater}".encode()).hexdigest(), 16) % 2 for k in range(len(names))]


class StubJudge:
    def __init__(self) -> None:
        self.seen: dict[str, int] = defaultdict(int)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = next(m["content"] for m in body["messages"] if m["role"] == "user")
                names = [json.loads(n) for n in _NAME.findall(user)]
                key = "|".join(names)
                with outer.lock:
                    outer.requests.append(body)
                    rater = outer.seen[key]
                    outer.seen[key] += 1
                content = json.dumps([{"name": n, "score": s, "justification": "stub"}
                                      for n, s in zip(names, award(names, rater))])
                data = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": body.get("model"),
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": content}}],
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":  # serve until killed (to run another scorer against it)
    import sys
    import time

    j = StubJudge()
    print(j.url, flush=True)
    sys.stdout.flush()
    while True:
        time.sleep(3600)
