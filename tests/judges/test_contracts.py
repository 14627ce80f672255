"""The judges against OpenAI-compatible endpoints: a scripted chat server on loopback (started here)
answers what each judge asks (JSON for decomposition / filtering / verdicts / scores, single-word yes/no
with token log-probabilities); the tests check what the real clients sent and how the replies were used."""

from __future__ import annotations

import json
import math

import pytest

from audiomind.judges.aura import aura_score
from audiomind.judges.edit import judge_edit
from audiomind.judges.llm import p_yes_from_logprobs, parse_verdict
from audiomind.judges.rubric import judge_rubric
from audiomind.trace import load_trace, validate_trace_file

INSTR = "A woman says 'good morning everyone', then a telephone rings."
P_YES = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.4))


def test_p_yes_from_logprobs_and_verdict_parsing():
    content = [{"token": " Yes", "logprob": -0.1, "top_logprobs": [{"token": " Yes", "logprob": -0.1},
                                                                    {"token": "No", "logprob": -2.4},
                                                                    {"token": "yes", "logprob": -5.0}]}]
    p, how = p_yes_from_logprobs(content)
    assert p == pytest.approx((math.exp(-0.1) + math.exp(-5.0)) / (math.exp(-0.1) + math.exp(-5.0) + math.exp(-2.4)))
    assert "token 0" in how
    lead = [{"token": "The", "logprob": -0.2, "top_logprobs": []},
            {"token": "no", "logprob": -0.3, "top_logprobs": [{"token": "no", "logprob": -0.3}]}]
    assert p_yes_from_logprobs(lead)[0] == pytest.approx(0.0)
    assert p_yes_from_logprobs(None)[0] is None
    assert parse_verdict("<think>yes maybe</think> No.") == "no"
    assert parse_verdict('{"answer": "yes"}') == "yes"
    assert parse_verdict("unclear") == "unknown"


def _rubric_responder(h, with_logprobs=True):
    def respond(body: dict) -> dict:
        text = h.prompt_text(body)
        if "Decompose an instruction" in text:
            return h.chat_reply(json.dumps({"items": [
                {"question": "Does a woman speak?", "attribute": "speaker", "evidence": "A woman says"},
                {"question": "Does she say 'good morning everyone'?", "attribute": "speech_content",
                 "evidence": "'good morning everyone'"},
                {"question": "Does a telephone ring after the speech?", "attribute": "order",
                 "evidence": "then a telephone rings"},
                {"question": "Is there a dog?", "attribute": "sound_event", "evidence": "(none)"}]}))
        if "candidate yes/no rubric questions" in text:
            return h.chat_reply(json.dumps({"keep": [0, 1, 2], "dropped": [{"index": 3, "reason": "hallucinated"}]}))
        if "Answer with exactly one word" in text:
            lp = [("Yes", -0.1, [("Yes", -0.1), ("No", -2.4)])] if with_logprobs and body.get("logprobs") else None
            return h.chat_reply("Yes", lp)
        return h.chat_reply("{}")
    return respond


def test_rubric_with_an_openai_compatible_llm_uses_logprobs(scripted_chat, judge_helpers, rubric_clips, tmp_path):
    srv = scripted_chat(_rubric_responder(judge_helpers))
    r = judge_rubric(rubric_clips["woman_then_phone"], INSTR, llm=f"openai:judge-m@{srv.url}", trace_dir=tmp_path,
                     max_retries=1)
    assert r.decomposed_by.startswith("openai:judge-m")
    assert [i.question for i in r.items] == ["Does a woman speak?", "Does she say 'good morning everyone'?",
                                             "Does a telephone ring after the speech?"]
    assert r.dropped[0].drop_reason == "hallucinated"
    assert all(v.source == "logprobs" and v.p_yes == pytest.approx(P_YES, abs=1e-4) for v in r.verdicts)
    assert r.score == pytest.approx(P_YES, abs=1e-3) and r.aligned
    assert r.holistic is not None and r.holistic.source == "logprobs"
    yes_no = [q["body"] for q in srv.requests if "Answer with exactly one word" in judge_helpers.prompt_text(q["body"])]
    assert len(yes_no) == 4  # three items + the holistic baseline
    assert all(b["logprobs"] is True and b["top_logprobs"] >= 2 for b in yes_no)
    assert all("Evidence about the audio clip" in judge_helpers.prompt_text(b) for b in yes_no)
    assert all(not judge_helpers.audio_parts(b) for b in yes_no)  # a text LLM gets the cascade's evidence
    decompose = next(q["body"] for q in srv.requests if "Decompose" in judge_helpers.prompt_text(q["body"]))
    assert decompose.get("response_format", {}).get("type") == "json_schema"
    st = load_trace(r.trace_path)
    assert validate_trace_file(r.trace_path) == [] and len(st.model_calls) == 6
    assert st.run.models[0].kind == "openai" and st.run.models[0].decoding["yes_no"] == "logprobs"


def test_rubric_with_an_audio_front_end_sends_the_clip(scripted_chat, judge_helpers, rubric_clips, tmp_path):
    srv = scripted_chat(_rubric_responder(judge_helpers))
    r = judge_rubric(rubric_clips["beeps3"], "Three short beeps.", frontend=f"openai:audio-m@{srv.url}",
                     trace_dir=tmp_path, max_retries=1)
    assert r.decomposed_by == "rules" and r.judged_by.startswith("openai:audio-m")
    bodies = [q["body"] for q in srv.requests]
    assert len(bodies) == len(r.verdicts) + 1
    for b in bodies:
        parts = judge_helpers.audio_parts(b)
        assert len(parts) == 1 and parts[0]["input_audio"]["format"] == "wav"
        assert b["logprobs"] is True
    assert all(v.p_yes == pytest.approx(P_YES, abs=1e-4) for v in r.verdicts)


def test_without_logprobs_p_yes_comes_from_the_verdict(scripted_chat, judge_helpers, rubric_clips, tmp_path):
    srv = scripted_chat(_rubric_responder(judge_helpers, with_logprobs=False))
    r = judge_rubric(rubric_clips["beeps3"], "Three short beeps.", frontend=f"openai:audio-m@{srv.url}",
                     trace_dir=tmp_path, holistic=False, max_retries=1)
    assert all(v.source == "verdict" and v.p_yes == 1.0 for v in r.verdicts)


@pytest.mark.slow
def test_edit_with_an_audio_front_end_and_an_llm(scripted_chat, judge_helpers, edit_pairs, tmp_path):
    def respond(body: dict) -> dict:
        text = judge_helpers.prompt_text(body)
        if "Clip a0 is the ORIGINAL" in text:
            return judge_helpers.chat_reply(json.dumps({
                "description": "The edited audio adds a telephone ringing.",
                "focus": "a woman saying the quick brown fox jumps over the lazy dog",
                "provisional_answer": None, "open_needs": [], "uncertainty": "low"}))
        if "judging an audio edit step by step" in text:
            return judge_helpers.chat_reply(json.dumps({
                "reference_reminder": "expected: adds a telephone ringing; keep the woman's speech",
                "effectiveness": {"label": "effective", "explanation": "The telephone was added as asked."},
                "preservation": {"label": "preserved", "explanation": "The speech is unchanged."},
                "overall_quality": {"label": "good", "explanation": "Clean mix."},
                "synthesis": "A clean, effective addition.", "suggestions": ["None."]}))
        return judge_helpers.chat_reply("{}")

    srv = scripted_chat(respond)
    p = edit_pairs["add"]
    r = judge_edit(p.original_path, p.edited_path, instruction=p.instruction, original_description=p.original_caption,
                   llm=f"openai:text-m@{srv.url}", frontend=f"openai:audio-m@{srv.url}", trace_dir=tmp_path,
                   max_retries=1)
    pair_req = next(q["body"] for q in srv.requests if "Clip a0 is the ORIGINAL" in judge_helpers.prompt_text(q["body"]))
    assert len(judge_helpers.audio_parts(pair_req)) == 2  # both clips in one request
    verdict_req = next(q["body"] for q in srv.requests
                       if "judging an audio edit step by step" in judge_helpers.prompt_text(q["body"]))
    vt = judge_helpers.prompt_text(verdict_req)
    assert "REFERENCE REMINDER" in vt and "The edited audio adds a telephone ringing." in vt
    assert not judge_helpers.audio_parts(verdict_req)
    assert r.predicted_difference == "The edited audio adds a telephone ringing."
    assert r.captions_from.startswith("openai:audio-m")
    assert r.effectiveness.label == "effective" and r.effectiveness.data["measured_label"] == "effective"
    assert r.synthesis.startswith("A clean, effective addition.") and r.suggestions == ["None."]
    assert r.difference_metrics.bleu_1 == pytest.approx(1.0, abs=1e-3)  # identical to the expected caption
    st = load_trace(r.trace_path)
    assert validate_trace_file(r.trace_path) == []
    assert {c.role for c in st.model_calls} == {"planner", "frontend"}
    assert st.observations[0].frontend.startswith("openai:audio-m") and st.observations[0].artifact_ids == ["a0", "a1"]


def test_aura_with_an_llm(scripted_chat, judge_helpers, tmp_path):
    def respond(body: dict) -> dict:
        text = judge_helpers.prompt_text(body)
        if "Rewrite a question about an audio clip" in text:
            return judge_helpers.chat_reply(json.dumps({"hypothesis": "A bell rings a few times."}))
        if "You are evaluating a response" in text:
            assert "Example 3" in text  # the few-shot examples travel with the prompt
            return judge_helpers.chat_reply(json.dumps({"reasoning": "Vague about the count.", "score": "2"}))
        return judge_helpers.chat_reply("{}")

    srv = scripted_chat(respond)
    r = aura_score("How many times does the bell ring?", "Three times.", "A few times.", None,
                   llm=f"openai:m@{srv.url}", trace_dir=tmp_path, max_retries=1)
    assert r.llm_category == 2 and r.s_llm == 0.5 and r.score == 0.5
    assert r.llm_source.startswith("openai:m") and r.hypothesis == "A bell rings a few times."
    assert "s_llm" not in r.substitutes and r.entailment.status == "skipped"
    assert len(srv.requests) == 2
