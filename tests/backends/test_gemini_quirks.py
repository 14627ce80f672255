"""The Gemini front end against a loopback Gemini API (tests/backends/standins/gemini_standin.py) that checks
each request against google-genai's own types: Files API uploads reused by content hash and deleted by
close(), the inline limit, decoding settings (thinking budget, seed, temperature not sent), thought tokens,
the served model, what the trace records of each call, the model-call cache, and the answer's confidence
from token log-probabilities (or as the model states it when the server refuses them)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from audiomind.backends.base import AnswerRequest, BackendError, ListenRequest
from audiomind.backends.frontends.gemini import INLINE_LIMIT_MB, GeminiFrontEnd
from audiomind.backends.policy import make_policy

from .conftest import artifact_for
from .standins.gemini_standin import GeminiStandIn

KEY = "AIzaTEST-not-a-real-key-0123456789"
LISTEN_JSON = json.dumps({"description": "a tone", "focus": "pitch", "provisional_answer": None,
                          "open_needs": [], "uncertainty": "low"})


@pytest.fixture
def gemini():
    s = GeminiStandIn(default_reply=LISTEN_JSON)
    yield s
    s.close()


def _fe(url: str, **kw) -> GeminiFrontEnd:
    kw.setdefault("base_delay_s", 0.01)
    return GeminiFrontEnd("gemini-2.5-flash", base_url=url, api_key=KEY, **kw)


def _listen(fe, arts):
    return fe.listen(ListenRequest(kind="perception", artifacts=arts, prompt="Describe the clip.",
                                   prompt_id="p@0", question="What is it?"))


def _answer(fe, arts, choices, prompt="Which one? Reply with JSON."):
    return fe.answer(AnswerRequest(original=arts[0], extra_originals=arts[1:], question="q", choices=choices,
                                   evidence_summary="s", prompt=prompt, prompt_id="final_answer@0"))


def _gen(req) -> dict:
    return req.body.get("generationConfig") or {}


def _budget(gen: dict) -> int | None:
    """thinkingConfig's budget (google-genai writes the nested key in snake_case; the API takes both)."""
    tc = gen.get("thinkingConfig") or {}
    assert set(tc) <= {"thinkingBudget", "thinking_budget"}
    return tc.get("thinkingBudget", tc.get("thinking_budget"))


def _file_uris(req) -> list[str]:
    """fileData parts' URIs (google-genai writes `fileData` with snake_case `file_uri` inside)."""
    out = []
    for p in req.body["contents"][0]["parts"]:
        fd = p.get("fileData") or p.get("file_data")
        if fd is not None:
            out.append(fd.get("fileUri") or fd.get("file_uri"))
    return out


# ---------------------------------------------------------------- Files API


def test_uploads_are_reused_by_content_hash_and_deleted_by_close(gemini, clips):
    fe = _fe(gemini.url, inline_limit_mb=0)  # every clip through the Files API
    a0, a1 = artifact_for(clips["short"], "a0"), artifact_for(clips["other"], "a1")
    _listen(fe, [a0])
    _listen(fe, [a0, a1])
    gemini.queue(json.dumps({"answer": "x", "rationale": "r"}))
    _answer(fe, [a0], [])
    assert gemini.uploads == 2  # one per distinct clip, not one per request
    uris = [_file_uris(r) for r in gemini.generations()]
    assert uris[0] == uris[1][:1] == uris[2] and len(set(uris[1])) == 2
    assert set(fe.uploaded.values()) == {f"files/{u.rsplit('/', 1)[-1]}" for u in uris[1]}
    assert gemini.invalid == []

    assert fe.close() == []
    assert gemini.deletes == 2 and gemini.files == {} and fe.uploaded == {}
    assert fe.close() == []  # nothing left to delete: no request
    assert gemini.deletes == 2

    _listen(fe, [a0])  # still usable after close: uploads again (the old file is gone)
    assert gemini.uploads == 3 and gemini.invalid == []
    fe.close()
    assert gemini.files == {}


def test_concurrent_requests_upload_a_clip_once(gemini, clips):
    fe = _fe(gemini.url, inline_limit_mb=0)
    a0 = artifact_for(clips["short"])
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: _listen(fe, [a0]), range(6)))
    assert all(r.description == "a tone" for r in results)
    assert gemini.uploads == 1 and len(gemini.generations()) == 6
    with fe:
        pass  # the context manager closes
    assert gemini.deletes == 1


def test_a_file_still_processing_is_polled_until_active(clips):
    s = GeminiStandIn(default_reply=LISTEN_JSON, processing_polls=1)
    try:
        fe = _fe(s.url, inline_limit_mb=0)
        res = _listen(fe, [artifact_for(clips["short"])])
        assert res.description == "a tone" and s.file_gets == 1 and s.invalid == []
        fe.close()
    finally:
        s.close()


def test_close_reports_a_deletion_that_failed_and_tolerates_one_already_gone(gemini, clips):
    fe = _fe(gemini.url, inline_limit_mb=0, max_retries=0)
    a0, a1 = artifact_for(clips["short"], "a0"), artifact_for(clips["other"], "a1")
    _listen(fe, [a0, a1])
    names = sorted(fe.uploaded.values())
    del gemini.files[names[0].split("/")[1]]  # expired or deleted elsewhere: 404 on delete
    assert fe.close() == []
    assert gemini.deletes == 1

    _listen(fe, [a0])
    gemini.delete_status = 500
    failed = fe.close()
    assert len(failed) == 1 and failed[0].startswith(f"{next(iter(gemini.files.values()))['name']}: ")
    assert "500" in failed[0] and KEY not in failed[0]


# ---------------------------------------------------------------- inline limit


def test_inline_limit_defaults_to_100_mb_and_is_recorded(gemini, clips):
    fe = _fe(gemini.url)
    assert fe.inline_limit_mb == INLINE_LIMIT_MB == 100.0
    assert fe.spec().decoding["inline_limit_mb"] == 100.0
    res = _listen(fe, [artifact_for(clips["long"])])  # 70 s, ~3 MB of base64: inline under 100 MB
    assert [a.transport for a in res.model_call.input_audio] == ["inline"] and gemini.uploads == 0


def test_inline_limit_is_settable_and_moves_the_largest_clip_to_the_files_api(clips):
    # a server that takes 1 MB inline: the 70 s clip (2.2 MB of WAV) does not fit, the 2 s one does
    s = GeminiStandIn(default_reply=LISTEN_JSON, max_body_bytes=1024 * 1024)
    try:
        big, small = artifact_for(clips["long"], "a0"), artifact_for(clips["other"], "a1")
        with pytest.raises(BackendError, match="payload size exceeds"):
            _listen(_fe(s.url), [big, small])  # the default 100 MB believes it fits: the server says no
        fe = _fe(s.url, inline_limit_mb=1.0)
        res = _listen(fe, [big, small])
        assert [(a.artifact_id, a.transport) for a in res.model_call.input_audio] == [("a0", "file"),
                                                                                       ("a1", "inline")]
        body = s.generations()[-1]
        assert len(body.raw) < 1024 * 1024 and s.uploads == 1 and s.invalid == []
        parts = body.body["contents"][0]["parts"]
        kinds = [("fileData" in p or "file_data" in p, "inlineData" in p or "inline_data" in p)
                 for p in parts if "text" not in p]
        assert kinds == [(True, False), (False, True)]
        fe.close()
    finally:
        s.close()


# ---------------------------------------------------------------- decoding, usage, trace


def test_thinking_budget_seed_and_unsent_temperature_are_sent_and_recorded(gemini, clips):
    fe = _fe(gemini.url, thinking_budget=512, seed=7, temperature=None, max_output_tokens=256)
    res = _listen(fe, [artifact_for(clips["short"])])
    gen = _gen(gemini.generations()[0])
    assert _budget(gen) == 512
    assert gen["seed"] == 7 and gen["maxOutputTokens"] == 256 and "temperature" not in gen
    assert "responseLogprobs" not in gen  # a listen asks for none
    mc = res.model_call
    assert mc.decoding == {"max_output_tokens": 256, "seed": 7, "thinking_budget": 512,
                           "response_mime_type": "application/json"}
    spec = fe.spec().decoding
    assert (spec["thinking_budget"], spec["seed"], spec["temperature"], spec["max_output_tokens"]) == (512, 7,
                                                                                                      None, 256)

    fe0 = _fe(gemini.url, thinking_budget=0, max_tokens=64)  # 0 turns thinking off; max_tokens is an alias
    _listen(fe0, [artifact_for(clips["short"])])
    gen0 = _gen(gemini.generations()[1])
    assert _budget(gen0) == 0 and gen0["maxOutputTokens"] == 64
    assert gen0["temperature"] == 0
    assert gemini.invalid == []


def test_bad_settings_are_refused():
    with pytest.raises(BackendError, match="disagree"):
        GeminiFrontEnd("m", api_key=KEY, max_tokens=10, max_output_tokens=20)
    with pytest.raises(BackendError, match="thinking_budget"):
        GeminiFrontEnd("m", api_key=KEY, thinking_budget=-2)
    with pytest.raises(BackendError, match="top_logprobs"):
        GeminiFrontEnd("m", api_key=KEY, top_logprobs=21)


def test_thought_tokens_served_model_and_finish_reason_reach_the_call(clips):
    s = GeminiStandIn(default_reply=LISTEN_JSON, thoughts_tokens=120, model_version="gemini-2.5-flash-001")
    try:
        res = _listen(_fe(s.url), [artifact_for(clips["short"])])
        mc = res.model_call
        visible = mc.output_tokens - 120 if mc.output_tokens is not None else None
        assert visible is not None and visible > 0  # candidatesTokenCount, thoughts added on top
        assert mc.reasoning_tokens == 120
        assert (mc.input_tokens, mc.audio_input_tokens) == (40, 32)
        assert mc.served_model == "gemini-2.5-flash-001" and mc.finish_reason == "STOP"
    finally:
        s.close()


def test_the_call_records_its_messages_and_audio_by_hash(gemini, clips):
    from audiomind.prompts import evidence_rule

    a0 = artifact_for(clips["long"], "a0")
    fe = _fe(gemini.url, window_s=30.0)
    gemini.queue(json.dumps({"answer": "x", "rationale": "r"}))
    prompt = 'Which?\n<evidence id="evidence_summary" source="s">\nheard\n</evidence>'
    res = _answer(fe, [a0], [], prompt=prompt)
    mc = res.model_call
    assert [(a.artifact_id, a.sha256, a.start_s, a.end_s, a.transport) for a in mc.input_audio] == [
        ("a0", a0.sha256, 0.0, 30.0, "inline"), ("a0", a0.sha256, 30.0, 60.0, "inline"),
        ("a0", a0.sha256, 60.0, 70.0, "inline")]
    roles = [m.role for m in mc.input]
    if roles == ["system", "user"]:  # the prompt quotes evidence: the rule goes as system instruction
        assert mc.input[0].content == evidence_rule()
    assert roles[-1] == "user"
    user = mc.input[-1].content
    assert user.startswith(prompt) and "[audio: artifact a0 30.0-60.0 s, inline]" in user
    assert len(user) < 2000  # audio named, never inlined
    assert mc.output["raw"] == json.dumps({"answer": "x", "rationale": "r"})


def test_a_failed_call_keeps_what_was_sent(gemini, clips):
    fe = _fe(gemini.url, inline_limit_mb=0, thinking_budget=128)
    a0 = artifact_for(clips["short"])
    _listen(fe, [a0])
    gemini.files.clear()  # the upload vanished server-side: 403 on the next request, not retried
    with pytest.raises(BackendError) as ei:
        _listen(fe, [a0])
    mc = ei.value.model_call
    assert "403" in mc.errors[0] and mc.decoding["thinking_budget"] == 128
    assert [a.transport for a in mc.input_audio] == ["file"] and mc.input


# ---------------------------------------------------------------- model-call cache


def test_cached_reply_sends_nothing_and_its_key_does_not_name_the_upload(gemini, clips, tmp_path):
    policy = make_policy(cache_mode="use", cache_dir=str(tmp_path / "mc"))
    a0 = artifact_for(clips["short"])
    first = _fe(gemini.url, inline_limit_mb=0, policy=policy)
    gemini.queue(json.dumps({"answer": "B", "rationale": "r"}), alternatives=[{"A": 0.25, "B": 0.75}])
    r1 = _answer(first, [a0], ["A", "B"])
    first.close()
    assert gemini.uploads == 1 and len(gemini.generations()) == 1 and not r1.model_call.cache_hit

    second = _fe(gemini.url, inline_limit_mb=0, policy=policy)  # a new run: new uploads would get new names
    r2 = _answer(second, [a0], ["A", "B"])
    assert r2.model_call.cache_hit and r2.model_call.cache_key == r1.model_call.cache_key
    assert gemini.uploads == 1 and len(gemini.generations()) == 1  # nothing uploaded, nothing asked
    assert (r2.text, r2.confidence, r2.confidence_source) == ("B", r1.confidence, "logprobs")
    assert r2.model_call.input_audio == r1.model_call.input_audio and r2.model_call.decoding == r1.model_call.decoding
    assert second.close() == [] and gemini.deletes == 1


# ---------------------------------------------------------------- confidence


def test_confidence_from_logprobs_is_the_choice_share_of_the_choices(gemini, clips):
    fe = _fe(gemini.url)
    gemini.queue(json.dumps({"answer": "B", "rationale": "r"}),
                 alternatives=[{"A": 0.2, "B": 0.7, "C": 0.05, "I": 0.05}])
    res = _answer(fe, [artifact_for(clips["short"])], ["A", "B", "C"])
    gen = _gen(gemini.generations()[0])
    assert gen["responseLogprobs"] is True and gen["logprobs"] == 5  # top_logprobs, Gemini's default here
    assert res.confidence_source == "logprobs"
    assert res.confidence == pytest.approx(0.7 / 0.95, abs=1e-4)  # "I" fits no choice: not counted
    assert "first answer token" in res.confidence_reason and "A 0.200, B 0.700, C 0.050" in res.confidence_reason
    assert res.model_call.decoding["logprobs"] == 5 and res.model_call.output["confidence"]["source"] == "logprobs"


def test_confidence_over_multi_token_choices_and_a_token_carrying_the_quote(gemini, clips):
    fe = _fe(gemini.url)
    art = [artifact_for(clips["short"])]
    # "a dog barking" vs "a cat meowing": the first token is shared, the second decides
    text = json.dumps({"answer": "a dog barking", "rationale": "r"})
    gemini.queue(text, alternatives=[{"a": 0.9, "the": 0.1}, {" dog": 0.6, " cat": 0.3}])
    res = _answer(fe, art, ["a dog barking", "a cat meowing"])
    assert res.confidence_source == "logprobs" and res.confidence == pytest.approx(0.6 / 0.9, abs=1e-4)
    assert "first 2 answer tokens" in res.confidence_reason

    # a tokenizer that glues the opening quote to the answer: '"B' with alternatives '"A', '"B'
    text = '{"answer": "B", "rationale": "r"}'
    gemini.queue(text, alternatives=[{"A": 0.3, "B": 0.6}], tokens=['{"answer": ', '"B', '", "rationale": "r"}'])
    res = _answer(fe, art, ["A", "B"])
    assert res.confidence == pytest.approx(0.6 / 0.9, abs=1e-4)

    # choices where one is a prefix of another: the closing quote decides
    text = json.dumps({"answer": "dog", "rationale": "r"})
    gemini.queue(text, alternatives=[{"dog": 1.0}, {'"': 0.8, " barking": 0.2}])
    res = _answer(fe, art, ["dog", "dog barking"])
    assert res.confidence == pytest.approx(0.8, abs=1e-4)
    assert gemini.invalid == []


def test_an_answer_outside_the_choices_gets_no_logprob_confidence(gemini, clips):
    fe = _fe(gemini.url)
    gemini.queue(json.dumps({"answer": "D", "rationale": "r", "confidence": 0.9}), alternatives=[{"D": 0.9}])
    res = _answer(fe, [artifact_for(clips["short"])], ["A", "B"])
    assert (res.confidence, res.confidence_source) == (0.9, "self_reported")


def test_refused_logprobs_are_asked_once_then_a_stated_confidence_is_self_reported(clips):
    s = GeminiStandIn(logprobs="refuse")
    try:
        fe = _fe(s.url)
        art = [artifact_for(clips["short"])]
        s.queue(json.dumps({"answer": "A", "rationale": "r", "confidence": 0.8}))
        res = _answer(fe, art, ["A", "B"])
        assert (res.text, res.confidence, res.confidence_source) == ("A", 0.8, "self_reported")
        assert "Logprobs is not enabled" in res.model_call.errors[0] and res.model_call.attempts == 2
        assert "responseLogprobs" not in _gen(s.generations()[1])
        s.queue(json.dumps({"answer": "B", "rationale": "r"}))
        res2 = _answer(fe, art, ["A", "B"])
        assert (res2.confidence, res2.confidence_source) == (None, None)
        assert len(s.generations()) == 3  # the refusal is remembered: no second 400
        assert "responseLogprobs" not in _gen(s.generations()[2])
    finally:
        s.close()


def test_logprobs_off_asks_for_none(gemini, clips):
    fe = _fe(gemini.url, logprobs=False)
    gemini.queue(json.dumps({"answer": "A", "rationale": "r", "confidence": "75%"}))
    res = _answer(fe, [artifact_for(clips["short"])], ["A", "B"])
    assert "responseLogprobs" not in _gen(gemini.generations()[0])
    assert res.confidence == pytest.approx(0.75) and res.confidence_source == "self_reported"
    assert fe.spec().decoding["logprobs"] is False


def test_a_benchmark_run_deletes_its_uploads_when_it_ends(tmp_path, monkeypatch):
    """Direct mode through the batch runner, every clip through the Files API: each clip is uploaded once per
    worker's front end and every upload is deleted when the run ends (the runner closes its agents)."""
    from functools import partial

    import numpy as np

    from audiomind import audio as aio
    from audiomind.api import AudioMind
    from audiomind.bench.items import BenchItem
    from audiomind.bench.runner import run_batch
    from audiomind.config import AgentConfig

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    server = GeminiStandIn(default_reply=json.dumps({"answer": "A steady tone", "rationale": "a tone"}))
    try:
        items = []
        for i in range(3):
            t = np.arange(8000) / 16000
            path = aio.write_wav(tmp_path / f"g{i}.wav", (0.3 * np.sin(2 * np.pi * (300 + 50 * i) * t)).astype(
                np.float32), 16000)
            items.append(BenchItem(id=f"g{i}", benchmark="unit", audio_path=str(path), question="What is heard?",
                                   choices=["A steady tone", "Speech"], answer="A steady tone"))
        cfg = AgentConfig(planner="rules", frontend=f"gemini:gemini-2.5-flash@{server.url}", mode="direct",
                          trace_dir=str(tmp_path / "art"), frontend_options={"inline_limit_mb": 0})
        summary = run_batch(items, tmp_path / "run", partial(AudioMind, cfg), workers=2, progress=False)
        assert summary.statuses == {"answered": 3}
        assert 3 <= server.uploads <= 3 * 2 and server.deletes == server.uploads
    finally:
        server.close()
