"""jsonparse (recovering JSON from model text) and call_with_retries (classification, backoff, record)."""

from __future__ import annotations

import socket
import time

import httpx
import openai
import pytest

from audiomind.backends.base import BackendError
from audiomind.backends.jsonparse import JSONExtractError, extract_json, extract_object
from audiomind.backends.retry import backoff_delay, call_with_retries, classify, redact

from .conftest import openai_chat, openai_error


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is: {"a": "x"} Hope that helps.', {"a": "x"}),
        ('<think>maybe {"a": 0}</think>\n{"a": 2}', {"a": 2}),
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'a': True, 'b': None}", {"a": True, "b": None}),
        ("\u201c\u201d", None),
        ('Example: {"x": 1}. Answer: {"action": "ANSWER", "rationale": "it\'s {fine}"}',
         {"action": "ANSWER", "rationale": "it's {fine}"}),
        ('[{"a": 1}]', {"a": 1}),
    ],
)
def test_extract_object(text, expected):
    if expected is None:
        with pytest.raises(JSONExtractError):
            extract_object(text)
    else:
        assert extract_object(text) == expected


def test_extract_errors_say_what_was_wrong():
    with pytest.raises(JSONExtractError, match="empty"):
        extract_json("   ")
    with pytest.raises(JSONExtractError, match="no JSON object"):
        extract_json("I would call the vad tool.")
    with pytest.raises(JSONExtractError, match="truncated"):
        extract_json('{"action": "CALL_TOOLS", "tool_calls": [{"tool": "vad"')
    with pytest.raises(JSONExtractError, match="expected a JSON object"):
        extract_object("[1, 2]")


def test_extract_from_content_blocks():
    assert extract_object([{"type": "text", "text": '{"a":'}, {"type": "text", "text": " 1}"}]) == {"a": 1}


class _Status(Exception):
    def __init__(self, code):
        super().__init__(f"status {code}")
        self.status_code = code


def test_classify():
    assert classify(_Status(429)) == ("rate_limit", True)
    assert classify(_Status(503)) == ("server", True)
    assert classify(_Status(401)) == ("client", False)
    assert classify(_Status(404)) == ("client", False)
    assert classify(httpx.ConnectError("refused")) == ("connection", True)
    assert classify(httpx.ReadTimeout("slow")) == ("timeout", True)
    assert classify(ValueError("bad")) == ("other", False)
    try:  # a wrapper around a transport error (what LangChain integrations raise) is still transient
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise RuntimeError("chat model failed") from inner
    except RuntimeError as wrapped:
        assert classify(wrapped) == ("connection", True)


def test_google_genai_errors_classified():
    from google.genai import errors

    assert classify(errors.APIError(429, {"error": {"message": "quota"}})) == ("rate_limit", True)
    assert classify(errors.ServerError(500, {"error": {"message": "x"}})) == ("server", True)
    assert classify(errors.ClientError(400, {"error": {"message": "x"}})) == ("client", False)


def test_backoff_bounded_and_jittered():
    for attempt in range(1, 10):
        d = backoff_delay(attempt, 1.0, 20.0)
        cap = min(20.0, 2 ** (attempt - 1))
        assert cap / 2 <= d <= cap
    assert len({round(backoff_delay(3, 1.0, 20.0), 6) for _ in range(20)}) > 1


def test_retries_record_every_failure_and_sleep_bounded():
    sleeps: list[float] = []
    n = {"i": 0}

    def flaky():
        n["i"] += 1
        if n["i"] < 3:
            raise _Status(500)
        return "ok"

    result, call = call_with_retries(flaky, role="planner", purpose="decide", backend="b", max_attempts=3,
                                     base_delay_s=1.0, max_delay_s=1.5, sleep=sleeps.append)
    assert result == "ok" and call.attempts == 3 and len(call.errors) == 2
    assert all("HTTP 500" in e for e in call.errors)
    assert len(sleeps) == 2 and all(0.5 <= s <= 1.5 for s in sleeps)


def test_non_retryable_fails_at_once():
    n = {"i": 0}

    def auth():
        n["i"] += 1
        raise _Status(401)

    with pytest.raises(BackendError, match="not retried") as ei:
        call_with_retries(auth, role="frontend", purpose="answer", backend="b", max_attempts=5, sleep=lambda s: None)
    assert n["i"] == 1 and ei.value.model_call.attempts == 1


def test_openai_sdk_against_closed_port_message():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    client = openai.OpenAI(base_url=url, api_key="EMPTY", max_retries=0, timeout=5)
    t0 = time.perf_counter()
    with pytest.raises(BackendError) as ei:
        call_with_retries(client.models.list, role="planner", purpose="p", backend="b",
                          max_attempts=3, base_delay_s=0.01, endpoint=url)
    assert time.perf_counter() - t0 < 5
    assert str(ei.value) == f"could not reach {url} after 3 attempts: Connection refused"


def test_retry_after_header_is_honoured(server):
    server.queue(429, openai_error(429, "slow down"), headers={"retry-after": "0.2"})
    server.queue(200, openai_chat("hi"))
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="EMPTY", max_retries=0, timeout=5)
    sleeps: list[float] = []
    resp, call = call_with_retries(
        lambda: client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}]),
        role="frontend", purpose="p", backend="b", base_delay_s=0.01, sleep=sleeps.append)
    assert sleeps == [pytest.approx(0.2)] and call.attempts == 2 and resp.choices[0].message.content == "hi"
    assert (call.input_tokens, call.output_tokens) == (11, 7)


def test_redact():
    s = ("Incorrect API key provided: sk-proj-abcdefghijklmnop. url https://x/?key=AIzaSyABCDEFGHIJKLMNOP "
         "Authorization: Bearer abcdefghijklmnopqrst secret-value-123")
    out = redact(s, secrets=["secret-value-123"])
    for leak in ("sk-proj-abcdefghijklmnop", "AIzaSyABCDEFGHIJKLMNOP", "abcdefghijklmnopqrst", "secret-value-123"):
        assert leak not in out
    assert redact("EMPTY key", secrets=["EMPTY"]) == "EMPTY key"
