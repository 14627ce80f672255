"""The OpenAI front end against servers that differ: one audio per request (vLLM), stream-only (DashScope),
reasoning models (no temperature), log-probabilities returned or refused. Each server is the loopback
stand-in (tests/backends/standins/openai_standin.py), which checks every request against the openai SDK's
own types; the front end talks to it through the real openai client."""

from __future__ import annotations

import json
import math

import pytest

from audiomind.backends.base import AnswerRequest, BackendError, ListenRequest
from audiomind.backends.cache import ModelCallCache
from audiomind.backends.frontends.choice_confidence import logprob_confidence, stated_confidence
from audiomind.backends.frontends.openai import OpenAIFrontEnd, is_reasoning_model
from audiomind.backends.policy import CallPolicy

from .conftest import artifact_for
from .standins.openai_standin import OpenAIStandin, Script, Token

LISTEN = json.dumps({"description": "a low steady tone", "focus": "tone", "provisional_answer": "1",
                     "open_needs": ["exact pitch"], "uncertainty": "low"})


@pytest.fixture
def standin_factory():
    made: list[OpenAIStandin] = []

    def make(**flags) -> OpenAIStandin:
        s = OpenAIStandin(**flags)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
        assert s.invalid == [], f"requests the openai SDK's types reject: {s.invalid}"


def _fe(s: OpenAIStandin, model: str = "Qwen/Qwen2.5-Omni-7B", **kw) -> OpenAIFrontEnd:
    kw.setdefault("base_delay_s", 0.01)
    kw.setdefault("max_retries", 1)
    return OpenAIFrontEnd(model, base_url=s.url, **kw)


def _listen(fe: OpenAIFrontEnd, arts):
    return fe.listen(ListenRequest(kind="perception", artifacts=arts, prompt="Listen.", prompt_id="t@0",
                                   question="What is it?"))


def _answer(fe: OpenAIFrontEnd, arts, choices=("2", "3", "4")):
    return fe.answer(AnswerRequest(original=arts[0], extra_originals=list(arts[1:]), question="How many?",
                                   choices=list(choices), evidence_summary="s", prompt="ANSWER PROMPT",
                                   prompt_id="final_answer@x"))


def _json_tokens(answer_tokens: list[Token], rationale: str = "r") -> list[Token]:
    """{"answer": "<answer tokens>", "rationale": "r"} as a tokenizer would cut it."""
    head = [Token('{"'), Token("answer"), Token('":'), Token(' "')]
    tail = [Token('",'), Token(' "'), Token("rationale"), Token('":'), Token(' "'), Token(rationale), Token('"}')]
    return head + answer_tokens + tail


def ln(p: float) -> float:
    return math.log(p)


# ---------------------------------------------------------------- vLLM: one audio part per request


def test_one_audio_server_refuses_three_windows_without_the_setting(standin_factory, clips):
    s = standin_factory(max_audio_parts=1)
    with pytest.raises(BackendError) as ei:
        _listen(_fe(s), [artifact_for(clips["long"])])
    assert "At most 1 audio" in str(ei.value)
    assert s.seen[0].audio_s == pytest.approx([30.0, 30.0, 10.0], abs=0.01) and s.seen[0].status == 400
    assert [a.start_s for a in ei.value.model_call.input_audio] == [0.0, 30.0, 60.0]  # a failure is recorded too


def test_windows_mode_listens_once_per_window_and_merges_labelled(standin_factory, clips):
    s = standin_factory(max_audio_parts=1)
    s.script(LISTEN, LISTEN.replace("a low steady tone", "the same tone"), LISTEN.replace("low steady", "fading"))
    art = artifact_for(clips["long"])
    res = _listen(_fe(s, max_audio_parts=1, audio_parts="windows"), [art])

    assert [x.audio_s for x in s.seen] == [pytest.approx([30.0]), pytest.approx([30.0]), pytest.approx([10.0])]
    assert all(x.status == 200 for x in s.seen)
    assert res.description.splitlines() == ["[artifact a0, window 1: 0.0-30.0 s] a low steady tone",
                                            "[artifact a0, window 2: 30.0-60.0 s] the same tone",
                                            "[artifact a0, window 3: 60.0-70.0 s] a fading tone"]
    assert res.provisional_answer == "1" and res.open_needs == ["exact pitch"]
    assert "3 separate requests" in res.uncertainty
    mc = res.model_call
    assert mc.attempts == 3 and mc.decoding["audio_parts"] == "windows" and mc.decoding["max_audio_parts"] == 1
    assert "max_audio_parts=1" in mc.context_notes[0]
    assert [(a.artifact_id, a.sha256, a.start_s, a.end_s) for a in mc.input_audio] == [
        ("a0", art.sha256, 0.0, 30.0), ("a0", art.sha256, 30.0, 60.0), ("a0", art.sha256, 60.0, 70.0)]
    assert len(mc.input) == 3 and all("<input_audio: a0" in m.content for m in mc.input)
    assert mc.input_tokens is not None and mc.input_tokens > 25 * 70  # text and audio of 3 requests, summed
    assert mc.audio_input_tokens == 25 * 70  # 3 replies' audio tokens, summed
    assert len(res.windows) == 3


def test_answer_over_the_limit_is_one_call_with_the_windows_joined(standin_factory, clips):
    s = standin_factory(max_audio_parts=1)
    s.script('{"answer": "3", "rationale": "r"}')
    art = artifact_for(clips["long"])
    res = _answer(_fe(s, max_audio_parts=1, audio_parts="windows"), [art])

    assert len(s.seen) == 1 and s.seen[0].audio_s == pytest.approx([70.0], abs=0.01)
    texts = [p["text"] for p in s.bodies[0]["messages"][-1]["content"] if p["type"] == "text"]
    assert texts[1] == ("[one audio part of 70.0 s: 0.0-30.0 s = artifact a0 0.0-30.0 s; 30.0-60.0 s = artifact "
                        "a0 30.0-60.0 s; 60.0-70.0 s = artifact a0 60.0-70.0 s]")
    assert res.text == "3" and res.model_call.decoding["audio_parts"] == "concat"
    assert len(res.model_call.input_audio) == 3


def test_concat_mode_joins_two_clips_into_one_part_with_a_gap(standin_factory, clips):
    s = standin_factory(max_audio_parts=1)
    s.script(LISTEN)
    a0, a1 = artifact_for(clips["short"], "a0"), artifact_for(clips["other"], "a1")
    res = _listen(_fe(s, max_audio_parts=1, audio_parts="concat"), [a0, a1])

    assert len(s.seen) == 1 and s.seen[0].audio_s == pytest.approx([3.0 + 1.0 + 2.0], abs=0.01)
    label = [p["text"] for p in s.bodies[0]["messages"][-1]["content"] if p["type"] == "text"][1]
    assert label == ("[one audio part of 6.0 s, 1 s of silence between clips: 0.0-3.0 s = artifact a0 0.0-3.0 s; "
                     "4.0-6.0 s = artifact a1 0.0-2.0 s]")
    assert res.model_call.decoding["audio_parts"] == "concat"
    assert res.description == "a low steady tone"


def test_spare_parts_split_the_longest_clip_at_a_window(standin_factory, clips):
    s = standin_factory(max_audio_parts=2)
    s.script('{"answer": "3", "rationale": "r"}', '{"answer": "3", "rationale": "r"}')
    a0, a1 = artifact_for(clips["long"], "a0"), artifact_for(clips["short"], "a1")
    res = _answer(_fe(s, max_audio_parts=2), [a0])  # 3 windows, 2 parts: 0-60 s and 60-70 s
    assert s.seen[0].audio_s == pytest.approx([60.0, 10.0], abs=0.01)
    assert "a part of 60.0 s is longer than the 30 s window" in res.model_call.context_notes[0]
    _answer(_fe(s, max_audio_parts=2), [a0, a1])  # 4 segments, 2 parts: one per clip
    assert s.seen[1].audio_s == pytest.approx([70.0, 3.0], abs=0.01)


def test_within_the_limit_nothing_changes(standin_factory, clips):
    s = standin_factory(max_audio_parts=3)
    s.script(LISTEN)
    res = _listen(_fe(s, max_audio_parts=3), [artifact_for(clips["long"])])
    assert s.seen[0].audio_s == pytest.approx([30.0, 30.0, 10.0], abs=0.01)
    assert "audio_parts" not in res.model_call.decoding and res.model_call.context_notes == []


# ---------------------------------------------------------------- DashScope: stream only


def test_stream_only_server_refuses_a_plain_request(standin_factory, clips):
    s = standin_factory(stream_only=True)
    with pytest.raises(BackendError) as ei:
        _listen(_fe(s, model="qwen-omni-turbo"), [artifact_for(clips["short"])])
    assert "only support stream mode" in str(ei.value)


def test_streamed_reply_is_one_completion_with_the_last_chunks_usage(standin_factory, clips):
    s = standin_factory(stream_only=True, served_model="qwen-omni-turbo-2025-03-26")
    s.script(LISTEN)
    fe = _fe(s, model="qwen-omni-turbo", stream=True)
    res = _listen(fe, [artifact_for(clips["short"])])

    body = s.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert res.description == "a low steady tone"
    mc = res.model_call
    assert mc.output["raw"] == LISTEN
    assert mc.audio_input_tokens == 75 and mc.input_tokens is not None and mc.input_tokens > 75
    assert mc.output_tokens == len(Script(LISTEN).token_list())
    assert (mc.served_model, mc.fingerprint, mc.finish_reason) == ("qwen-omni-turbo-2025-03-26", "fp_standin",
                                                                   "stop")
    assert mc.decoding["stream"] is True and fe.spec().decoding["stream"] is True


def test_streamed_answer_carries_logprobs(standin_factory, clips):
    s = standin_factory(stream_only=True)
    s.script(Script(tokens=_json_tokens([Token("3", ln(0.6), {"2": ln(0.3), "4": ln(0.1)})])))
    res = _answer(_fe(s, stream=True), [artifact_for(clips["short"])])
    assert res.text == "3" and res.confidence_source == "logprobs"
    assert res.confidence == pytest.approx(0.6, abs=1e-3)


# ---------------------------------------------------------------- reasoning models


def test_reasoning_model_gets_no_temperature_and_max_completion_tokens(standin_factory, clips):
    s = standin_factory(reasoning=True, logprobs=False)
    s.script('{"answer": "4", "rationale": "r"}')
    fe = _fe(s, model="o4-mini", max_tokens=256, reasoning_effort="low", seed=7)
    res = _answer(fe, [artifact_for(clips["short"])])

    body = s.bodies[0]
    assert "temperature" not in body and "max_tokens" not in body and "logprobs" not in body
    assert (body["max_completion_tokens"], body["reasoning_effort"], body["seed"]) == (256, "low", 7)
    assert res.model_call.decoding == {"temperature": None, "max_completion_tokens": 256, "seed": 7,
                                       "reasoning_effort": "low", "stream": False}
    assert res.model_call.reasoning_tokens == 5
    spec = fe.spec().decoding
    assert spec["temperature"] is None and spec["max_completion_tokens"] == 256 and spec["logprobs"] is False
    assert res.confidence is None and res.confidence_source is None


def test_temperature_is_a_setting_a_reasoning_server_holds_to(standin_factory, clips):
    s = standin_factory(reasoning=True, logprobs=False)
    with pytest.raises(BackendError) as ei:  # a gpt-5 behind a proxy whose name the front end cannot read
        _listen(_fe(s, model="my-deployment", logprobs=False), [artifact_for(clips["short"])])
    assert "temperature" in str(ei.value)
    s.script(LISTEN)
    res = _listen(_fe(s, model="my-deployment", temperature=None, logprobs=False), [artifact_for(clips["short"])])
    assert "temperature" not in s.bodies[-1] and res.model_call.decoding["temperature"] is None


def test_reasoning_model_names():
    assert is_reasoning_model("o4-mini") and is_reasoning_model("gpt-5.4-mini") and is_reasoning_model("o3")
    assert not is_reasoning_model("gpt-5-chat-latest") and not is_reasoning_model("gpt-audio")
    assert not is_reasoning_model("Qwen/Qwen2.5-Omni-7B") and not is_reasoning_model("gpt-4o-mini")


# ---------------------------------------------------------------- confidence from log-probabilities


def test_answer_confidence_from_the_first_answer_tokens_top_logprobs(standin_factory, clips):
    s = standin_factory()
    s.script(Script(tokens=_json_tokens([Token("3", ln(0.8), {"2": ln(0.1), "4": ln(0.05), "three": ln(0.03)})])))
    fe = _fe(s)
    res = _answer(fe, [artifact_for(clips["short"])])

    body = s.bodies[0]
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0
    assert res.text == "3" and res.confidence_source == "logprobs"
    assert res.confidence == pytest.approx(0.8 / 0.95, abs=1e-3)
    assert "first answer token" in res.confidence_reason and "B 0.800" in res.confidence_reason
    assert res.model_call.decoding["logprobs"] is True and res.model_call.decoding["top_logprobs"] == 20


def test_listen_asks_for_no_logprobs(standin_factory, clips):
    s = standin_factory()
    s.script(LISTEN)
    _listen(_fe(s), [artifact_for(clips["short"])])
    assert "logprobs" not in s.bodies[0] and "top_logprobs" not in s.bodies[0]


def test_answer_by_letter_is_read_by_letter(standin_factory, clips):
    s = standin_factory()
    s.script(Script(tokens=_json_tokens([Token("B", ln(0.5), {"A": ln(0.25), "C": ln(0.25), " B": ln(0.1)})])))
    res = _answer(_fe(s), [artifact_for(clips["short"])], choices=["dog", "cat", "bird"])
    assert res.text == "B" and res.confidence_source == "logprobs"
    assert res.confidence == pytest.approx(0.6 / 1.1, abs=1e-3)  # "B" and " B" both mean B
    assert "by letter" in res.confidence_reason


def test_choices_sharing_a_first_token_are_told_apart_further_on(standin_factory, clips):
    s = standin_factory()
    s.script(Script(tokens=_json_tokens([Token("dog", ln(0.9), {"cat": ln(0.1)}),
                                         Token(" growling", ln(0.6), {" barking": ln(0.4)})])))
    res = _answer(_fe(s), [artifact_for(clips["short"])], choices=["dog barking", "dog growling", "cat"])
    assert res.text == "dog growling"
    assert res.confidence == pytest.approx(0.54, abs=1e-3)
    assert "first 2 answer tokens" in res.confidence_reason


def test_logprob_confidence_edge_cases():
    from openai.types.chat import ChatCompletion

    def completion(tokens: list[tuple[str, float, dict[str, float]]]) -> ChatCompletion:
        content = [{"token": t, "logprob": lp, "top_logprobs": [{"token": a, "logprob": x} for a, x in
                                                                {t: lp, **alts}.items()]} for t, lp, alts in tokens]
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": content},
                         "message": {"role": "assistant", "content": "".join(t for t, _, _ in tokens)}}]})

    bare = completion([("4", ln(0.5), {"3": ln(0.5)})])  # a bare reply: the answer is its first token
    assert logprob_confidence(bare, ["3", "4"], "4")[0] == pytest.approx(0.5)
    quoted = completion([('{"answer":', 0.0, {}), (' "4', ln(0.7), {' "3': ln(0.2), " 3": ln(0.1)})])
    assert logprob_confidence(quoted, ["3", "4"], "4")[0] == pytest.approx(0.7 / 0.9, abs=1e-3)  # ' 3' lacks the quote
    thought = completion([("<think>", 0.0, {}), ('"answer": "3', 0.0, {}), ("</think>", 0.0, {}),
                          ('{"answer": "', 0.0, {}), ("4", ln(0.9), {"3": ln(0.1)})])
    assert logprob_confidence(thought, ["3", "4"], "4")[0] == pytest.approx(0.9, abs=1e-3)  # not the thought's
    assert logprob_confidence(bare, ["3", "4"], "five") is None  # names no choice
    assert logprob_confidence(bare, [], "4") is None
    no_lp = bare.model_copy(update={"choices": [bare.choices[0].model_copy(update={"logprobs": None})]})
    assert logprob_confidence(no_lp, ["3", "4"], "4") is None


def test_stated_confidence_forms():
    assert stated_confidence('{"answer": "A", "confidence": 0.7}')[0] == pytest.approx(0.7)
    assert stated_confidence('{"answer": "A", "confidence": "85%"}')[0] == pytest.approx(0.85)
    assert stated_confidence('{"answer": "A", "confidence": 90}')[0] == pytest.approx(0.9)
    assert stated_confidence('{"answer": "A", "confidence": "high"}') is None
    assert stated_confidence('{"answer": "A", "confidence": 400}') is None
    assert stated_confidence('{"answer": "A"}') is None and stated_confidence("A") is None
    assert stated_confidence('I think A. {"confidence": 0.9}') is None  # prose is not a JSON reply
    assert stated_confidence('<think>x</think>```json\n{"answer": "A", "confidence": 0.6}\n```')[0] == 0.6


# ---------------------------------------------------------------- a server that refuses log-probabilities


def test_refused_logprobs_are_dropped_once_and_remembered(standin_factory, clips):
    s = standin_factory(reject_logprobs=True)
    s.script('{"answer": "3", "rationale": "r", "confidence": 0.7}', '{"answer": "2", "rationale": "r"}')
    fe = _fe(s)
    art = artifact_for(clips["short"])
    res = _answer(fe, [art])

    assert [("logprobs" in b, x.status) for b, x in zip(s.bodies, s.seen)] == [(True, 400), (False, 200)]
    assert res.text == "3" and res.confidence == pytest.approx(0.7) and res.confidence_source == "self_reported"
    mc = res.model_call
    assert mc.attempts == 2 and any("refused log-probabilities" in e for e in mc.errors)
    assert "logprobs" not in mc.decoding and fe.logprobs_refused and fe.spec().decoding["logprobs"] is False

    res2 = _answer(fe, [art])  # remembered: asked without at once
    assert len(s.seen) == 3 and "logprobs" not in s.bodies[2] and s.seen[2].status == 200
    assert res2.confidence is None and res2.confidence_source is None and res2.model_call.attempts == 1


def test_logprobs_off_by_setting(standin_factory, clips):
    s = standin_factory()
    s.script('{"answer": "3", "rationale": "r"}')
    res = _answer(_fe(s, logprobs=False), [artifact_for(clips["short"])])
    assert "logprobs" not in s.bodies[0] and res.confidence is None


# ---------------------------------------------------------------- the record and the cache


def test_the_call_record_names_audio_and_prompt_but_never_inlines_audio(standin_factory, clips):
    s = standin_factory(served_model="qwen2.5-omni-7b-served")
    s.script(Script(tokens=_json_tokens([Token("3", ln(0.9), {"2": ln(0.1)})])))
    art = artifact_for(clips["long"])
    fe = _fe(s, seed=3, max_tokens=64)
    res = _answer(fe, [art])

    mc = res.model_call
    assert s.bodies[0]["max_tokens"] == 64 and s.bodies[0]["seed"] == 3  # not OpenAI proper: max_tokens
    assert mc.decoding == {"temperature": 0.0, "max_tokens": 64, "seed": 3, "logprobs": True, "top_logprobs": 20,
                           "stream": False}
    (msg,) = mc.input
    assert msg.role == "user" and msg.content.startswith("ANSWER PROMPT\n[artifact a0, window 1: 0.0-30.0 s]")
    assert f"<input_audio: a0 30.0-60.0 s sha256:{art.sha256[:12]}>" in msg.content
    assert len(mc.model_dump_json()) < 20_000  # no base64 audio in the record
    assert [(a.start_s, a.end_s, a.duration_s, a.transport) for a in mc.input_audio] == [
        (0.0, 30.0, 30.0, "inline"), (30.0, 60.0, 30.0, "inline"), (60.0, 70.0, 10.0, "inline")]
    assert (mc.served_model, mc.fingerprint, mc.finish_reason) == ("qwen2.5-omni-7b-served", "fp_standin", "stop")
    assert mc.audio_input_tokens == 25 * 70
    spec = fe.spec().decoding
    assert spec["seed"] == 3 and spec["max_tokens"] == 64 and spec["max_audio_parts"] is None
    assert spec["audio_parts"] == "windows" and spec["logprobs"] is True and spec["top_logprobs"] == 20


@pytest.mark.parametrize("stream", [False, True])
def test_a_cached_answer_keeps_its_logprob_confidence(standin_factory, clips, tmp_path, stream):
    s = standin_factory()
    s.script(Script(tokens=_json_tokens([Token("3", ln(0.75), {"2": ln(0.25)})])))
    policy = CallPolicy(retries=0, cache=ModelCallCache(tmp_path / "cache", "use"))
    art = artifact_for(clips["short"])
    first = _answer(_fe(s, policy=policy, stream=stream), [art])
    again = _answer(_fe(s, policy=policy, stream=stream), [art])

    assert len(s.seen) == 1  # the second answer sent nothing
    assert again.model_call.cache_hit and not first.model_call.cache_hit
    assert again.model_call.cache_key == first.model_call.cache_key
    assert (again.text, again.confidence, again.confidence_source) == ("3", pytest.approx(0.75), "logprobs")
    assert again.model_call.input == first.model_call.input and again.model_call.input_audio


def test_cache_key_changes_with_the_span_and_the_decoding(standin_factory, clips, tmp_path):
    s = standin_factory()
    policy = CallPolicy(retries=0, cache=ModelCallCache(tmp_path / "cache", "use"))
    art = artifact_for(clips["long"])
    keys = {_answer(_fe(s, policy=policy, **kw), [art]).model_call.cache_key
            for kw in ({}, {"window_s": 20.0}, {"seed": 1}, {"logprobs": False})}
    assert len(keys) == 4 and len(s.seen) == 4


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="audio_parts"):
        OpenAIFrontEnd("m", base_url="http://127.0.0.1:9/v1", audio_parts="split")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_audio_parts"):
        OpenAIFrontEnd("m", base_url="http://127.0.0.1:9/v1", max_audio_parts=0)


def test_shut_down_audio_models_are_refused_with_their_replacements(monkeypatch):
    from audiomind.backends import registry

    monkeypatch.setattr(registry, "_importable", lambda module: (False, "not imported here"))  # doctor, fast
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key-000000")
    with pytest.raises(BackendError, match="openai:gpt-audio or openai:gpt-audio-mini"):
        OpenAIFrontEnd("gpt-4o-audio-preview-2025-06-03")
    fe = OpenAIFrontEnd("gpt-audio", max_tokens=100)
    assert fe.spec().decoding["temperature"] == 0.0 and fe.spec().decoding["max_completion_tokens"] == 100
    # a local server may serve anything under that name
    OpenAIFrontEnd("gpt-4o-audio-preview", base_url="http://127.0.0.1:9/v1")
    (row,) = [b for b in registry.describe_backends() if b.name == "openai"]
    assert "openai:gpt-audio, openai:gpt-audio-mini" in row.why and "gpt-4o-audio-preview" in row.why


def test_request_body_is_what_an_answer_sends(standin_factory, clips):
    s = standin_factory(extra_keys=frozenset({"top_k"}))
    s.script(Script(tokens=_json_tokens([Token("3", ln(0.9), {"2": ln(0.1)})])))
    fe = _fe(s, model="o3-mini", max_audio_parts=1, seed=2, extra_body={"top_k": 5})
    art = artifact_for(clips["long"])
    body, windows, decoding = fe.request_body("ANSWER PROMPT", [art], logprobs=True)
    _answer(fe, [art])
    assert body == s.bodies[0] and len(windows) == 3
    assert decoding == {"temperature": None, "seed": 2} and "temperature" not in body and body["top_k"] == 5
