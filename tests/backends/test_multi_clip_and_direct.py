"""Every clip of a multi-clip item reaches the front end, and the direct baseline.

- MSU-Bench as published: an MSU-style set (a tone "conversation" with speaker_meta registration snippets, a
  verification pair and a level-2 no_index question) run through `bench run --task msu` against a loopback
  OpenAI-compatible server that records each request: the captured perception and answer requests carry
  every clip as its own `input_audio` part (decoded, each lasts what its cut lasts), labelled a0, a1, ...; the
  trace holds each clip as an input artifact with its sha256; scoring is by letter with the upstream rules.
- The Gemini front end sends every clip as its own part; the cascade listens to each clip (tool calls on a0
  and a1, issued by the front end).
- `--mode direct`: the front end answers alone (no planner, no tools: one answer call on the original
  audio) through the same runner, traces and scoring; `bench report RUN --compare RUN_DIRECT` sets the agent
  and the baseline side by side per category.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from typer.testing import CliRunner

from audiomind import audio as aio
from audiomind.backends.base import AnswerRequest
from audiomind.bench.cli import bench_app
from audiomind.bench.runner import load_results
from audiomind.bench.tasks import msu

from .conftest import Recorded, Reply, artifact_for, gemini_reply, openai_chat

SR = 16000
REPO = Path(__file__).resolve().parents[2]


def _reply_content():
    """evals/throughput_benchmark.py's scripted replies: a valid answer for every planner and front-end call
    (the model always picks the first option offered)."""
    spec = importlib.util.spec_from_file_location("throughput_benchmark", REPO / "evals" / "throughput_benchmark.py")
    tb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tb)  # type: ignore[union-attr]
    return tb.reply_content


@pytest.fixture
def scripted(server):
    """The recording server, answering every chat completion like a model that picks the first option."""
    reply = _reply_content()
    server.default = lambda req: Reply(200, openai_chat(reply(req.body or {}), prompt_tokens=40, completion_tokens=9))
    return server


def _tone(seconds: float, freq: float) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


@pytest.fixture
def msu_set(tmp_path) -> dict:
    """A 6 s 'conversation' (three tones, one per turn) with speaker_meta, as MSU-Bench lays it out."""
    root = tmp_path / "msu"
    seg = root / "en" / "meeting" / "QA_short" / "seg0001"
    (seg / "wav").mkdir(parents=True)
    turns = [(0.2, 1.4, 300.0), (1.8, 3.4, 500.0), (3.9, 5.6, 700.0)]
    conv = np.zeros(6 * SR, dtype=np.float32)
    for a, b, f in turns:
        conv[round(a * SR): round(a * SR) + round((b - a) * SR)] = _tone(b - a, f)
    aio.write_wav(seg / "wav" / "part001.wav", conv, SR)

    def s(i: int, spk: str) -> dict:
        return {"start_time": turns[i][0], "end_time": turns[i][1], "transcript": "", "spk_id": spk}

    meta = {"spk_a": [s(0, "a"), s(2, "a")], "spk_b": [s(1, "b")]}
    verify = {"source_audio": "./wav/part001.wav", "result": [
        {"speaker_meta": meta},
        {"question": "Are the speakers in the two clips the same person?", "question_type": "no_index",
         "pair": {"left": "spk_a[0]", "right": "spk_b[0]"},
         "options": ["A. Yes, the same person", "B. No, different people", "C. Cannot tell"], "answer": "B",
         "rationale": ["A. wrong speaker", "B. ground truth", "C. unknown"]},
    ]}
    roles = {"source_audio": "./wav/part001.wav", "result": [
        {"speaker_meta": meta},
        {"question": "What is the role of the speaker in the snippet?", "question_type": "no_index",
         "options": ["A. Host", "B. Guest", "C. Unknown"], "answer": "A.",
         "rationale": ["ground truth", "wrong speaker", "unknown"]},
    ]}
    for rel, data in ((Path("level1") / "说话人识别能力-说话人验证任务.json", verify),
                      (Path("level2") / "多说话人对话场景推理能力-对话身份识别任务.json", roles)):
        (seg / rel).parent.mkdir(parents=True, exist_ok=True)
        (seg / rel).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return {"root": root, "turns": turns, "full_s": 6.0}


def _user_content(body: dict) -> list:
    """The content parts of the request's user message (a system message may come first)."""
    return next((m["content"] for m in body.get("messages", []) if isinstance(m.get("content"), list)), [])


def _prompt(body: dict) -> str:
    return _user_content(body)[0]["text"]


def _audio_parts(body: dict) -> list[tuple[str, float]]:
    """(label, seconds) of each input_audio part of a request, the label being the text part before it."""
    content = _user_content(body)
    out = []
    for i, p in enumerate(content):
        if isinstance(p, dict) and p.get("type") == "input_audio":
            raw = base64.b64decode(p["input_audio"]["data"], validate=True)
            info = sf.info(io.BytesIO(raw))
            out.append((content[i - 1]["text"], info.frames / info.samplerate))
    return out


def _with_audio(server) -> list[Recorded]:
    return [r for r in server.posts("/chat/completions") if _audio_parts(r.body)]


def test_msu_multi_clip_item_reaches_an_openai_compatible_front_end_whole(scripted, msu_set, tmp_path):
    spec = f"openai:m@{scripted.url}/v1"
    out = tmp_path / "run"
    res = CliRunner().invoke(bench_app, ["run", "--task", "msu", "--source", str(msu_set["root"]), "--out", str(out),
                                         "--planner", spec, "--frontend", spec, "--no-progress"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    results = load_results(out)
    items = {i.metadata["task"]: i for i in msu.build_items(msu_set["root"], tmp_path / "clips")}
    sv, rii = items["SV"], items["RII"]
    turns = msu_set["turns"]
    expected = {  # per item: the clips in order, with their lengths
        sv.id: [turns[0][1] - turns[0][0], turns[1][1] - turns[1][0]],  # the verification pair
        rii.id: [turns[0][1] - turns[0][0], msu_set["full_s"]],  # level 2: the snippet + the whole conversation
    }
    assert sv.question.startswith("(This question comes with 2 audio clips: a0 = Clip 1; a1 = Clip 2.)")
    assert rii.answer == "A"  # "A." read as upstream reads a letter

    for item_id, lengths in expected.items():
        trace = json.loads((out / results[item_id]["trace_path"]).read_text())
        inputs = [a for a in trace["artifacts"] if a["operation"] == "input"]
        assert [a["id"] for a in inputs] == [f"a{i}" for i in range(len(lengths))]
        assert len(trace["question"]["extra_audio"]) == len(lengths) - 1
        for a, path in zip(inputs, [trace["question"]["audio_path"], *trace["question"]["extra_audio"]]):
            assert a["sha256"] == aio.sha256_file(path) and a["path"] == str(Path(path).resolve())
        assert trace["observations"][0]["artifact_ids"] == [a["id"] for a in inputs]  # perception heard all
        # requests carrying this item's clips: a perception listen and the answer, each with every clip,
        # labelled a0, a1, ..., each part as long as its cut
        mine = [r for r in _with_audio(scripted) if len(_audio_parts(r.body)) == len(lengths) and all(
            secs == pytest.approx(want, abs=0.01) for (_, secs), want in zip(_audio_parts(r.body), lengths))]
        prompts = [_prompt(r.body) for r in mine]
        assert any('"provisional_answer"' in t for t in prompts), prompts  # the perception listen
        assert any(sv.question.splitlines()[-1] in t or rii.question.splitlines()[-1] in t
                   for t in prompts if '"provisional_answer"' not in t), prompts  # the answer
        for r in mine:
            labels = [label.split(":")[0] for label, _ in _audio_parts(r.body)]
            assert labels == [f"[artifact a{i}" for i in range(len(lengths))]
        assert results[item_id]["status"] == "answered"
        assert results[item_id]["correct"] == (msu.predicted_letter(items["SV"] if item_id == sv.id else rii,
                                                                    results[item_id]) == "B" if item_id == sv.id
                                               else True)
    summary = json.loads((out / "msu" / "summary.json").read_text())
    assert summary["version"] == "interspeech" and summary["items_in_set"] == 2


def test_official_letter_conventions(msu_set, tmp_path):
    from audiomind.bench.items import ItemResult

    items = {i.metadata["task"]: i for i in msu.build_items(msu_set["root"], tmp_path / "clips")}
    sv = items["SV"]
    assert msu.normalize_letter(" b ") == "B" and msu.normalize_letter("Final answer: C.") == "C"
    assert msu.error_class(sv, ItemResult(id=sv.id, status="answered", prediction="B")) == "correct"
    invalid = ItemResult(id=sv.id, status="answered", prediction="D")  # no option D: instruction not followed
    assert msu.predicted_letter(sv, invalid) == "D" and msu.error_class(sv, invalid) == "instruction_not_follow"
    assert msu.msu_score(sv, invalid) is False
    assert msu.error_class(sv, ItemResult(id=sv.id, status="answered", prediction="A")) == "wrong_speaker"


def test_first_release_four_tiers_recognised(msu_set, tmp_path):
    """A set with level3 / level4 files is the first release: the tier is the level, and a task the 16-task
    table does not name keeps its file name."""
    seg = msu_set["root"] / "en" / "meeting" / "QA_short" / "seg0001"
    (seg / "level4").mkdir()
    q = {"source_audio": "./wav/part001.wav", "result": [
        {"question": "Who interrupts whom?", "question_type": "time_index", "options": ["A. x", "B. y"],
         "answer": "A"}]}
    (seg / "level4" / "interruption-detection.json").write_text(json.dumps(q), encoding="utf-8")
    assert msu.detect_version(msu_set["root"]) == "v1"
    items = msu.build_items(msu_set["root"], tmp_path / "clips")
    by_task = {i.metadata["task"]: i for i in items}
    assert by_task["interruption-detection"].metadata["tier"] == 4
    assert by_task["SV"].metadata["tier"] == 1 and by_task["RII"].metadata["tier"] == 2
    assert {i.metadata["version"] for i in items} == {"v1"}
    s = msu.summarize(items, {})
    assert s["version"] == "v1" and s["items_in_set"] == 3
    forced = msu.build_items(msu_set["root"], tmp_path / "clips", version="interspeech")
    assert {i.metadata["task"] for i in forced} == {"SV", "RII"}  # unknown tasks are not read as Interspeech's


def test_gemini_front_end_sends_every_clip(server, clips):
    from audiomind.backends.frontends.gemini import GeminiFrontEnd

    server.queue(200, gemini_reply(json.dumps({"answer": "2", "rationale": "two tones"})))
    fe = GeminiFrontEnd("gemini-2.5-flash", base_url=server.url, api_key="AIzaTEST-not-a-real-key-0123456789",
                        base_delay_s=0.01)
    a0, a1 = artifact_for(clips["short"]), artifact_for(clips["other"], "a1")
    res = fe.answer(AnswerRequest(original=a0, extra_originals=[a1], question="How many tones?", choices=["1", "2"],
                                  evidence_summary="", prompt="Answer.", prompt_id="p@0"))
    parts = server.posts(":generateContent")[0].body["contents"][0]["parts"]
    audio = [p for p in parts if "inlineData" in p or "inline_data" in p]
    labels = [p["text"] for p in parts if "text" in p][1:]
    assert len(audio) == 2 and [x.split(":")[0] for x in labels] == ["[artifact a0", "[artifact a1"]
    assert res.text == "2"


# ---------------------------------------------------------------- the direct baseline


def _items(tmp_path: Path) -> Path:
    folder = tmp_path / "items"
    folder.mkdir()
    rows = []
    for i, (f, cat) in enumerate(((440.0, "tones"), (660.0, "tones"), (550.0, "pairs"))):
        aio.write_wav(folder / f"t{i}.wav", _tone(1.0, f), SR)
        row = {"id": f"t{i}", "audio": f"t{i}.wav", "question": "What is heard?",
               "choices": ["A steady tone", "Speech"], "answer": "A steady tone", "category": cat}
        if cat == "pairs":
            aio.write_wav(folder / "second.wav", _tone(0.5, 880.0), SR)
            row["extra_audio"] = ["second.wav"]
        rows.append(row)
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_direct_mode_makes_one_answer_call_through_the_same_runner(scripted, tmp_path):
    spec = f"openai:m@{scripted.url}/v1"
    items = _items(tmp_path)
    direct, agent = tmp_path / "direct", tmp_path / "agent"
    res = CliRunner().invoke(bench_app, ["run", "--items", str(items), "--out", str(direct), "--mode", "direct",
                                         "--frontend", spec, "--planner", spec, "--no-progress"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    posts = scripted.posts("/chat/completions")
    assert len(posts) == 3  # one answer call per item: no planner, no listening, no tools
    assert all(_audio_parts(p.body) for p in posts)
    pair = next(p for p in posts if len(_audio_parts(p.body)) == 2)  # the two-clip item: both clips, one call
    assert "direct baseline" in _prompt(pair.body)
    results = load_results(direct)
    assert all(r["status"] == "answered" and r["correct"] is True for r in results.values())
    assert all((r["tool_calls"], r["steps"], r["model_calls"]) == (0, 0, 1) for r in results.values())
    trace = json.loads((direct / results["t2"]["trace_path"]).read_text())
    assert trace["run"]["mode"] == "direct" and trace["decisions"] == [] and trace["tool_calls"] == []
    assert [m["role"] for m in trace["run"]["models"]] == ["frontend"]
    assert [c["purpose"] for c in trace["model_calls"]] == ["answer"] and trace["model_calls"][0]["input_tokens"] == 40
    assert json.loads((direct / "run.json").read_text())["config"]["mode"] == "direct"

    scripted.requests.clear()
    res = CliRunner().invoke(bench_app, ["run", "--items", str(items), "--out", str(agent), "--frontend", spec,
                                         "--planner", spec, "--no-progress"])
    assert res.exit_code == 0, res.output
    assert len(scripted.posts("/chat/completions")) > 3  # the agent plans, listens, decides, summarises

    rep = CliRunner().invoke(bench_app, ["report", str(agent), "--compare", str(direct), "--no-plots"])
    assert rep.exit_code == 0, rep.output
    assert "side by side" in rep.output and "direct (direct)" in rep.output
    md = (agent / "report.md").read_text()
    assert "## agent (agent) vs direct (direct)" in md
    assert "| category | pairs | 100.00 | 1 / 1 | 100.00 | 1 / 1 | +0.00 |" in md
    assert "| overall | all | 100.00 | 3 / 3 | 100.00 | 3 / 3 | +0.00 |" in md
    assert "both right 3" in md
    bad = CliRunner().invoke(bench_app, ["report", str(agent), "--compare", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2 and "not a run directory" in bad.output


@pytest.mark.slow
def test_cascade_listens_to_each_clip_and_answers_directly(tmp_path):
    """The cascade: every clip is heard (its perception pass runs on a0 and on a1); in direct mode that pass is
    all it does (no planner decision, no planner tool call) before its one answer."""
    from audiomind.api import AudioMind

    examples = REPO / "examples"
    q = ("How many beeps are there?", ["3", "4", "5", "6"])
    agent = AudioMind(planner="rules", frontend="cascade", trace_dir=str(tmp_path / "a"))
    r = agent.ask(examples / "beeps.wav", *q, extra_audio=[examples / "phone_ring.wav"])
    st = r.state
    assert [a.id for a in st.originals] == ["a0", "a1"] and st.observations[0].artifact_ids == ["a0", "a1"]
    heard = {c.arguments.get("artifact") for c in st.tool_calls if c.issued_by == "frontend" and c.arguments}
    assert heard == {"a0", "a1"}

    direct = AudioMind(planner="rules", frontend="cascade", mode="direct", trace_dir=str(tmp_path / "d"))
    d = direct.ask(examples / "beeps.wav", *q)
    ds = d.state
    assert d.outcome.status == "answered" and d.choice == "5"
    assert ds.run.mode == "direct" and ds.decisions == [] and ds.plan is None and ds.perception_prompt is None
    assert ds.tool_calls and all(c.issued_by == "frontend" for c in ds.tool_calls)
    assert [o.kind for o in ds.observations] == ["perception"] and len(ds.format_feedback) == 1
    assert Path(d.trace_path).is_file()
