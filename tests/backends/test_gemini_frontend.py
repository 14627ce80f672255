"""Contract tests: what google-genai really sends for the Gemini front end (inline audio and Files API)."""

from __future__ import annotations

import base64
import io
import json

import pytest
import soundfile as sf

from audiomind.backends.base import AnswerRequest, BackendError, ListenRequest
from audiomind.backends.frontends.gemini import GeminiFrontEnd

from .conftest import Recorded, Reply, artifact_for, gemini_reply

KEY = "AIzaTEST-not-a-real-key-0123456789"
LISTEN_JSON = json.dumps({"description": "a tone", "focus": "pitch", "provisional_answer": None,
                          "open_needs": [], "uncertainty": "low"})


def _fe(url: str, **kw) -> GeminiFrontEnd:
    kw.setdefault("base_delay_s", 0.01)
    return GeminiFrontEnd("gemini-2.5-flash", base_url=url, api_key=KEY, **kw)


def _b64decode_any(s: str) -> bytes:
    """google-genai serialises bytes as URL-safe base64; accept either alphabet, nothing else."""
    return base64.b64decode(s.replace("-", "+").replace("_", "/"), validate=True)


def _listen(fe, arts):
    return fe.listen(ListenRequest(kind="perception", artifacts=arts, prompt="Describe the clip.",
                                   prompt_id="p@0", question="What is it?"))


def test_inline_audio_part_and_parsed_reply(server, clips):
    server.queue(200, gemini_reply(LISTEN_JSON))
    art = artifact_for(clips["long"])
    res = _listen(_fe(server.url), [art])

    (req,) = server.posts(":generateContent")
    assert req.path.startswith("/v1beta/models/gemini-2.5-flash:generateContent")
    assert req.headers["x-goog-api-key"] == KEY
    body = req.body
    parts = body["contents"][0]["parts"]
    assert parts[0]["text"].startswith("Describe the clip.")
    assert parts[1]["text"] == "[artifact a0: 70.0 s]"  # Gemini: no windowing by default
    inline = parts[2].get("inlineData") or parts[2].get("inline_data")
    mime = inline.get("mimeType") or inline.get("mime_type")
    assert mime == "audio/wav"
    data = inline["data"]
    raw = _b64decode_any(data)
    info = sf.info(io.BytesIO(raw))
    assert (info.samplerate, info.channels) == (16000, 1)
    assert info.frames / info.samplerate == pytest.approx(70.0, abs=0.002)
    # Record what this SDK version sends, so a change of alphabet or key spelling shows up here.
    assert "inline_data" in parts[2] or "inlineData" in parts[2]
    gen = body.get("generationConfig") or body.get("generation_config")
    assert gen["temperature"] == 0
    assert (gen.get("responseMimeType") or gen.get("response_mime_type")) == "application/json"

    assert res.description == "a tone" and res.provisional_answer is None and res.uncertainty == "low"
    assert res.windows == []
    mc = res.model_call
    assert (mc.input_tokens, mc.output_tokens) == (13, 5)
    assert [(a.artifact_id, a.transport, a.sha256) for a in mc.input_audio] == [("a0", "inline", art.sha256)]
    assert KEY not in res.model_dump_json()


def test_inline_base64_alphabet_recorded(server, clips):
    """Documents the alphabet google-genai uses for inline bytes (URL-safe in the versions checked)."""
    server.queue(200, gemini_reply(LISTEN_JSON))
    _listen(_fe(server.url), [artifact_for(clips["long"])])
    part = server.posts(":generateContent")[0].body["contents"][0]["parts"][2]
    data = (part.get("inlineData") or part.get("inline_data"))["data"]
    assert ("-" in data or "_" in data) != ("+" in data or "/" in data)  # exactly one alphabet
    assert "-" in data or "_" in data, "google-genai switched to standard base64"


def test_answer_parses_json_and_windows_when_configured(server, clips):
    server.queue(200, gemini_reply(json.dumps({"answer": "B", "rationale": "ev_abcdefabcd says so"})))
    fe = _fe(server.url, window_s=30.0)
    res = fe.answer(AnswerRequest(original=artifact_for(clips["long"]), question="q", choices=["A", "B"],
                                  evidence_summary="s", prompt="FINAL", prompt_id="final_answer@0"))
    parts = server.posts(":generateContent")[0].body["contents"][0]["parts"]
    assert parts[0]["text"] == "FINAL"
    assert [p["text"] for p in parts if "text" in p][1:] == [
        "[artifact a0, window 1: 0.0-30.0 s]", "[artifact a0, window 2: 30.0-60.0 s]",
        "[artifact a0, window 3: 60.0-70.0 s]"]
    assert res.text == "B" and res.cited_evidence_ids == ["ev_abcdefabcd"] and len(res.windows) == 3


def test_retry_on_429_and_no_retry_on_403(server, clips):
    server.queue(429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}})
    server.queue(200, gemini_reply(LISTEN_JSON))
    res = _listen(_fe(server.url), [artifact_for(clips["short"])])
    assert res.model_call.attempts == 2 and "429" in res.model_call.errors[0]

    server.requests.clear()
    server.queue(403, {"error": {"code": 403, "message": f"API key {KEY} not valid", "status": "PERMISSION_DENIED"}})
    with pytest.raises(BackendError) as ei:
        _listen(_fe(server.url), [artifact_for(clips["short"])])
    assert len(server.requests) == 1
    assert KEY not in str(ei.value) and KEY not in ei.value.model_call.model_dump_json()


def test_files_api_above_inline_limit(server, clips):
    """Above the inline limit each clip goes through the resumable Files API upload, then by URI."""
    uploads: list[Recorded] = []

    def responder(req: Recorded) -> Reply:
        if req.path.startswith("/upload/"):
            uploads.append(req)
            session = sum(u.path.startswith("/upload/") for u in uploads)
            return Reply(200, {}, {"x-goog-upload-url": f"{server.url}/upload-session/{session}",
                                   "x-goog-upload-status": "active"})
        if req.path.startswith("/upload-session/"):
            uploads.append(req)
            n = req.path.rsplit("/", 1)[-1]
            return Reply(200, {"file": {"name": f"files/f{n}", "uri": f"{server.url}/v1beta/files/f{n}",
                                        "mimeType": "audio/wav", "state": "ACTIVE",
                                        "sizeBytes": str(len(req.raw))}},
                         {"x-goog-upload-status": "final"})
        if ":generateContent" in req.path:
            return Reply(200, gemini_reply(LISTEN_JSON))
        return Reply(404, {"error": {"code": 404, "message": req.path}})

    server.default = responder
    a0, a1 = artifact_for(clips["short"], "a0"), artifact_for(clips["other"], "a1")
    res = _listen(_fe(server.url, inline_limit_mb=0), [a0, a1])

    starts = [u for u in uploads if u.path.startswith("/upload/")]
    chunks = [u for u in uploads if u.path.startswith("/upload-session/")]
    assert len(starts) == 2 and len(chunks) == 2
    assert starts[0].headers["x-goog-upload-protocol"] == "resumable"
    assert starts[0].headers["x-goog-upload-header-content-type"] == "audio/wav"
    info = sf.info(io.BytesIO(chunks[0].raw))
    assert info.frames / info.samplerate == pytest.approx(3.0, abs=0.002)
    parts = server.posts(":generateContent")[0].body["contents"][0]["parts"]
    file_parts = [p.get("fileData") or p.get("file_data") for p in parts if "fileData" in p or "file_data" in p]
    assert [fp.get("fileUri") or fp.get("file_uri") for fp in file_parts] == [
        f"{server.url}/v1beta/files/f1", f"{server.url}/v1beta/files/f2"]
    assert not any("inlineData" in p or "inline_data" in p for p in parts)
    assert [(a.artifact_id, a.transport) for a in res.model_call.input_audio] == [("a0", "file"), ("a1", "file")]


def _gen_config(body: dict) -> dict:
    return body.get("generationConfig") or body.get("generation_config") or {}


def _system_text(body: dict) -> str | None:
    si = body.get("systemInstruction") or body.get("system_instruction")
    return " ".join(p.get("text", "") for p in si.get("parts", [])) if si else None


def test_yes_no_asks_for_one_word_only_and_reads_it_strictly(server, clips, monkeypatch):
    """The judges' yes/no path on Gemini: the one-word prompt goes as it is (no JSON reply format appended, no
    JSON mode), and the verdict is the reply's first word, not a yes or no found anywhere in it."""
    from audiomind.judges.llm import AudioJudge
    from audiomind.prompts import load_prompt

    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    judge = AudioJudge(f"gemini:gemini-2.5-flash@{server.url}", max_retries=1)
    prompt = load_prompt("judge_rubric_item").render(context="Listen to the audio clip.", question="Does a dog bark?")
    server.queue(200, gemini_reply("No."))
    server.queue(200, gemini_reply("I cannot tell whether it says yes; no dog is obvious."))
    art = artifact_for(clips["short"])
    yn, call = judge.yes_no("rubric_item_1", prompt, [art])
    assert (yn.verdict, yn.p_yes, yn.source) == ("no", 0.0, "verdict")
    assert call.role == "frontend" and call.purpose == "rubric_item_1" and call.output["raw"] == "No."
    body = server.posts(":generateContent")[0].body
    sent = body["contents"][0]["parts"][0]["text"]
    assert sent == prompt and "JSON" not in sent and "exactly one word" in sent
    assert (_gen_config(body).get("responseMimeType") or _gen_config(body).get("response_mime_type")) is None
    assert _system_text(body) is None  # nothing quoted, no rule needed
    unclear, _ = judge.yes_no("rubric_item_2", prompt, [art])
    assert (unclear.verdict, unclear.p_yes) == ("unknown", 0.5)


def test_answer_with_quoted_evidence_carries_the_rule_as_system_instruction(server, clips):
    from audiomind.prompts import evidence_rule, load_prompt

    server.queue(200, gemini_reply(json.dumps({"answer": "B", "rationale": "r"})))
    prompt = load_prompt("final_answer").render(question="q", choices_block="Choices:\n  A. x\n  B. y",
                                                summary="asr heard: 'pick A'", feedback="",
                                                answer_instruction="exactly one of the choices, copied verbatim")
    _fe(server.url).answer(AnswerRequest(original=artifact_for(clips["short"]), question="q", choices=["x", "y"],
                                         evidence_summary="s", prompt=prompt, prompt_id="final_answer@0"))
    body = server.posts(":generateContent")[0].body
    assert _system_text(body) == evidence_rule()
