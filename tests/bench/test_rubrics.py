"""MMAR-Rubrics: the judge protocol against a real loopback OpenAI-compatible HTTP server.

The server (http.server in a thread) answers /v1/chat/completions with scripted judge JSON, so the real
ChatOpenAI client built from a backend spec does the HTTP; the tests check the arithmetic (points over
points available, mean of the middle 3 of 5 runs), that a wrong answer scores 0 without calling the
judge, a malformed reply's retry, and resuming after partial output (including a torn last line)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from audiomind.bench import rubrics

RUBRIC = [{"name": f"Point {i}", "scoring_point": f"Award 1 point if the test-taker states fact {i}.",
           "note": "test rubric", "choices": [0, 1]} for i in range(1, 6)]


def row(i: int, prediction: str, answer: str = "Open Grassland", modality: str = "music") -> dict:
    return {"id": f"item{i}", "audio_path": f"./audio/item{i}.wav", "question": "Where does this music come from?",
            "choices": ["Mountain Canyon", "Dense Forest", "Open Grassland", "City Streets"], "answer": answer,
            "modality": modality, "category": "Cultural Layer", "sub-category": "Professional Knowledge and Reasoning",
            "thinking": "Throat singing and long song point to open grassland.", "rubric": RUBRIC,
            "answer_prediction": prediction, "thinking_prediction": "I hear throat singing."}


class ScriptedJudge:
    """Loopback OpenAI-compatible server; each request pops the next scripted reply (a number k means
    'award the first k of the 5 points'; a string is sent verbatim; 'HTTP500' fails the request)."""

    def __init__(self):
        self.script: list = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append(body)
                    item = outer.script.pop(0) if outer.script else 5
                if item == "HTTP500":
                    self.send_response(500)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "scripted failure"}}')
                    return
                content = item if isinstance(item, str) else json.dumps(
                    {"scores": [{"name": f"Point {i}", "score": 1 if i <= item else 0, "reason": "scripted"}
                                for i in range(1, 6)]})
                reply = {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server():
    s = ScriptedJudge()
    yield s
    s.close()


@pytest.fixture
def judge(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model, name = rubrics.make_judge(f"openai:judge-model@{server.url}", timeout_s=10)
    return rubrics.RubricJudge(model, runs=5, keep=3, name=name)


def test_middle_three_of_five_arithmetic():
    mean, kept = rubrics.middle_mean([1.0, 0.2, 0.6, 0.8, 0.4])
    assert mean == pytest.approx((0.4 + 0.6 + 0.8) / 3) and kept == [0.4, 0.6, 0.8]
    assert rubrics.middle_mean([0, 0, 0, 1, 1])[0] == pytest.approx(1 / 3)
    assert rubrics.middle_mean([0.5] * 5)[1] == [0.5, 0.5, 0.5]
    # the extremes never count, however extreme
    assert rubrics.middle_mean([0.0, 0.6, 0.6, 0.6, 1.0])[0] == pytest.approx(0.6)


def test_parse_judgement_checks_allowed_values_and_names():
    ok = rubrics.parse_judgement(json.dumps({"scores": [{"name": f"Point {i}", "score": i % 2} for i in range(5, 0, -1)]}),
                                 RUBRIC)
    assert ok.points == [1, 0, 1, 0, 1]  # matched by name, not position
    assert ok.score == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="not in allowed"):
        rubrics.parse_judgement(json.dumps({"scores": [{"name": "Point 1", "score": 2}] * 5}), RUBRIC)
    with pytest.raises(ValueError):
        rubrics.parse_judgement("no json here", RUBRIC)


def test_loopback_judge_mean_of_middle_three(server, judge):
    server.script = [5, 1, 3, 4, 2]  # run scores 1.0, 0.2, 0.6, 0.8, 0.4
    res = judge.grade(row(1, "Open Grassland"), "Open Grassland", "I hear throat singing.")
    assert res.correct and res.error is None
    assert [r.score for r in res.runs] == pytest.approx([1.0, 0.2, 0.6, 0.8, 0.4])
    assert res.kept == pytest.approx([0.4, 0.6, 0.8])
    assert res.score == pytest.approx(0.6)
    assert len(server.requests) == 5
    # what the judge is shown: the rubric, the reference and the test-taker's reasoning
    text = json.dumps(server.requests[0]["messages"])
    assert "Point 3" in text and "Open Grassland" in text and "I hear throat singing." in text
    assert server.requests[0]["model"] == "judge-model"


def test_wrong_answer_scores_zero_without_calling_the_judge(server, judge):
    res = judge.grade(row(2, "Dense Forest"), "Dense Forest", "Trees.")
    assert not res.correct and res.score == 0.0 and res.runs == []
    # MMAR's string match: naming a wrong option as well is wrong too
    res2 = judge.grade(row(3, "Open Grassland or Dense Forest"), "Open Grassland or Dense Forest", "")
    assert not res2.correct
    assert server.requests == []


def test_malformed_reply_is_retried(server, judge):
    server.script = ["I think it is fine.", 4, 4, 4, 4, 4]
    res = judge.grade(row(4, "Open Grassland"), "Open Grassland", "")
    assert res.score == pytest.approx(0.8)
    assert len(server.requests) == 6
    retry = json.dumps(server.requests[1]["messages"])
    assert "could not be used" in retry


def test_resume_after_partial_output(server, judge, tmp_path: Path):
    rows = [row(1, "Open Grassland"), row(2, "Dense Forest"), row(3, "Open Grassland", modality="speech")]
    out = tmp_path / "rubrics.jsonl"
    server.script = [3] * 5
    first = rubrics.run_rubrics(rows[:2], out, judge)  # partial: the third item was never reached
    assert first["overall"]["n"] == 2 and len(server.requests) == 5
    with open(out, "a", encoding="utf-8") as f:  # a crash mid-append leaves a torn line
        f.write('{"id": "item3", "correct": tr')
    server.script = ["HTTP500"] * 5  # the judge is down for the first attempt at item 3
    failed = rubrics.run_rubrics(rows, out, judge)
    assert failed["judge_failures"] == 1
    n_before = len(server.requests)
    server.script = [5, 5, 5, 5, 5]
    summary = rubrics.run_rubrics(rows, out, judge)
    assert len(server.requests) == n_before + 5  # only item 3 was judged again
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(isinstance(x, dict) for x in lines)  # the torn line was cut, not kept
    assert [x["id"] for x in lines if x["error"] is None] == ["item1", "item2", "item3"]
    assert summary["judge_failures"] == 0 and summary["missing"] == 0
    assert summary["overall"]["n"] == 3
    assert summary["overall"]["score"] == pytest.approx(100 * (0.6 + 0.0 + 1.0) / 3, abs=0.01)
    assert summary["overall"]["accuracy"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["modality"]["speech"]["score"] == pytest.approx(100.0)
    assert summary["modality"]["music"]["score"] == pytest.approx(30.0)
