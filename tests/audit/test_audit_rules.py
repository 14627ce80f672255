"""Every audit rule against a trace that breaks exactly that rule (a real trace's JSON, edited), the
clean real traces (no findings), the claim-kind taxonomy against the real manifests, and the CLI's
exit codes and JSON output."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from audiomind.audit.audit import KIND_BY_NAME, RULES, Auditor, Severity, asked_kinds, boundary, claim_kinds
from audiomind.cli import app
from audiomind.tools.manifest import ToolRegistry

from .util import copy_run


@pytest.fixture(scope="module")
def auditor():
    return Auditor(ToolRegistry.load())


def rules_of(auditor, path):
    return {f.rule for f in auditor.audit_file(path).findings}


def ev_index(data, tool):
    return next(i for i, e in enumerate(data["evidence"]) if e["tool"] == tool)


def call_index(data, tool):
    return next(i for i, c in enumerate(data["tool_calls"]) if c["tool"] == tool)


# ---- clean real runs ----------------------------------------------------------------------------


def test_real_runs_are_clean(runs, auditor):
    """The default stack's own runs: every claim within its tool's boundary, every source present."""
    for run in runs.values():
        audit = auditor.audit_file(run.path)
        assert audit.findings == [], (run.name, [f.message for f in audit.findings])


# ---- one rule each ------------------------------------------------------------------------------

CASES = {
    "schema": ("beeps", lambda d: d["tool_calls"][0].__setitem__("status", "maybe"), Severity.error),
    "evidence-source-missing": ("beeps", lambda d: d["evidence"][0].__setitem__("source_id", "call_0000000000"),
                                Severity.error),
    "evidence-source-mismatch": ("beeps", lambda d: d["evidence"][ev_index(d, "probe")].__setitem__("tool", "vad"),
                                 Severity.error),
    "evidence-artifact-unknown": ("beeps", lambda d: d["evidence"][0].__setitem__("artifact_id", "a9"), Severity.error),
    "answer-cites-unknown": ("beeps", lambda d: d["final_answer"]["cited_evidence_ids"].append("ev_ffffffffff"),
                             Severity.error),
    "answer-without-evidence": ("beeps", lambda d: d["final_answer"].__setitem__("cited_evidence_ids", []),
                                Severity.warning),
    "answer-not-in-choices": ("beeps", lambda d: d["final_answer"].update(choice="7", choice_index=None, text="7"),
                              Severity.error),
    "answer-missing": ("beeps", lambda d: d.__setitem__("final_answer", None), Severity.error),
    "bound-hit": ("beeps", lambda d: d["outcome"].__setitem__("bound_hit", "max_steps"), Severity.warning),
    "outcome-not-answered": ("beeps", lambda d: d["outcome"].update(status="stopped", reason="planner stopped"),
                             Severity.warning),
    "outcome-missing": ("beeps", lambda d: d.__setitem__("outcome", None), Severity.error),
    "observation-call-missing": ("beeps", lambda d: d["observations"][0]["tool_call_ids"].append("call_bbbbbbbbbb"),
                                 Severity.error),
}


def _failed_call(d, status="error"):
    c = dict(d["tool_calls"][0])
    c.update(id="call_aaaaaaaaaa", tool="tagging", status=status, output=None, issued_by="planner",
             error="RuntimeError: model crashed" if status != "rejected" else "unknown tool 'taging'",
             cache_key=None, derived_artifact_ids=[])
    if status == "rejected":
        c.update(tool="taging", arguments=None, tool_version=None, category=None)
    d["tool_calls"].append(c)


def _relisten_rejected(d):
    o = dict(d["observations"][0])
    o.update(id="obs_cccccccccc", kind="relisten", artifact_ids=[], prompt="", text="", description="",
             tool_call_ids=[], uncertainty="re-listen rejected: unknown artifact ids ['a7']; known: ['a0']")
    d["observations"].append(o)


def _format_retry(d):
    ok = d["format_feedback"][0]
    d["format_feedback"] = [
        {"attempt": 1, "ok": False, "message": "the answer is not one of the choices", "answer_text": "five beeps"},
        {**ok, "attempt": 2},
    ]


def _model_call_retries(d):
    d["model_calls"].append({"id": "mc_dddddddddd", "role": "planner", "purpose": "decide", "backend": "openai:x",
                             "attempts": 2, "errors": ["attempt 1: 429 Too Many Requests"], "latency_s": 1.2,
                             "input_tokens": None, "output_tokens": None, "output": None})


CASES.update({
    "tool-call-failed": ("beeps", _failed_call, Severity.warning),
    "tool-call-rejected": ("beeps", lambda d: _failed_call(d, "rejected"), Severity.warning),
    "relisten-rejected": ("beeps", _relisten_rejected, Severity.warning),
    "format-check-failed": ("beeps", _format_retry, Severity.warning),
    "model-call-errors": ("beeps", _model_call_retries, Severity.info),
    # a printed confidence its ledger does not make (the ledger recomputes to what the run printed)
    "confidence-ledger": ("beeps", lambda d: d["final_answer"].update(confidence=round(1.0 - d["final_answer"][
        "confidence"], 3) if d["final_answer"]["confidence"] != 0.5 else 0.25), Severity.error),
})


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rule_fires_alone(rule, runs, edit, auditor):
    name, fn, severity = CASES[rule]
    path = edit(runs[name], fn)
    findings = auditor.audit_file(path).findings
    assert {f.rule for f in findings} == {rule}, [(f.rule, f.message) for f in findings]
    assert {f.severity for f in findings} == {severity}
    assert all(f.message for f in findings)


def test_rules_table_covers_every_rule_tested():
    tested = set(CASES) | {"evidence-source-failed", "boundary-violation", "answer-beyond-boundary",
                           "artifact-missing", "artifact-changed", "artifact-provenance", "artifact-relocated"}
    assert tested == set(RULES)


def test_evidence_from_a_failed_call(runs, edit, auditor):
    """Evidence citing a call that ended in error: the failed call itself is a finding too (it must be)."""
    def fn(d):
        i = call_index(d, "probe")
        d["tool_calls"][i].update(status="error", error="RuntimeError: boom", output=None)

    assert rules_of(auditor, edit(runs["beeps"], fn)) == {"evidence-source-failed", "tool-call-failed"}


def test_final_format_failure_is_an_error(runs, edit, auditor):
    def fn(d):
        d["format_feedback"][0].update(ok=False, message="the answer is not one of the choices")
        d["outcome"].update(status="failed", reason="format check failed")

    findings = auditor.audit_file(edit(runs["beeps"], fn)).findings
    by_rule = {f.rule: f.severity for f in findings}
    assert by_rule == {"format-check-failed": Severity.error, "outcome-not-answered": Severity.warning}


# ---- evidence boundaries ------------------------------------------------------------------------


def test_speaker_identity_claim_from_diarization(runs, edit, auditor):
    """The diarization tool may say S1 and S2 are different voices, never who they are."""
    def fn(d):
        d["evidence"][ev_index(d, "speaker_count")]["claim"] = "S1 is a woman named Alice; S2 is a man."

    findings = auditor.audit_file(edit(runs["weather"], fn)).findings
    assert {f.rule for f in findings} == {"boundary-violation"}
    (f,) = findings
    assert f.severity == Severity.error and "speaker_identity" in f.message
    assert "not for 'who a speaker is (name or identity)'" in f.message and f.path.startswith("evidence/")


def test_semantic_label_from_a_numeric_feature(runs, edit, auditor):
    """The loudness meter measures level; naming the source of the sound is beyond it."""
    def fn(d):
        d["evidence"][ev_index(d, "loudness")]["claim"] = "The telephone ringing gets louder between 0.5 and 3 s."

    findings = auditor.audit_file(edit(runs["beeps"], fn)).findings
    assert [(f.rule, f.severity) for f in findings] == [("boundary-violation", Severity.error)]
    assert "sound_source" in findings[0].message and "what makes the sound" in findings[0].message


def test_count_from_a_tagger(runs, edit, auditor):
    def fn(d):
        d["evidence"][ev_index(d, "tagging")]["claim"] = "The telephone rang 3 times."

    findings = auditor.audit_file(edit(runs["phone_ring"], fn)).findings
    assert [f.rule for f in findings] == ["boundary-violation"]
    assert "event_count" in findings[0].message and "how many times a sound occurs" in findings[0].message


def test_undeclared_but_category_compatible_claim_is_a_warning(runs, edit, auditor):
    """VAD (temporal_segmentation) counting sounds: its category could, its manifest does not say so."""
    def fn(d):
        d["evidence"][ev_index(d, "vad")]["claim"] = "There are 4 separate sound events."

    findings = auditor.audit_file(edit(runs["beeps"], fn)).findings
    assert [(f.rule, f.severity) for f in findings] == [("boundary-violation", Severity.warning)]


def test_answer_rationale_checked_against_cited_evidence(runs, edit, auditor):
    """A count answer that cites only the tagger's evidence: the tagger cannot support a count."""
    def fn(d):
        d["final_answer"]["cited_evidence_ids"] = [e["id"] for e in d["evidence"] if e["tool"] == "tagging"]

    findings = auditor.audit_file(edit(runs["beeps"], fn)).findings
    assert {f.rule for f in findings} == {"answer-beyond-boundary"}
    assert any(f.severity == Severity.error and "event_count" in f.message for f in findings)


def test_answer_text_checked_against_cited_evidence(runs, edit, auditor):
    """'A telephone ringing' resting on the event counter alone: a semantic label it cannot give."""
    def fn(d):
        d["final_answer"]["cited_evidence_ids"] = [e["id"] for e in d["evidence"] if e["tool"] == "count_events"]

    findings = auditor.audit_file(edit(runs["phone_ring"], fn)).findings
    assert {f.rule for f in findings} == {"answer-beyond-boundary"}
    assert all(f.severity == Severity.error for f in findings) and "sound_source" in findings[0].message


def test_front_end_observation_supports_what_it_heard(runs, edit, auditor):
    """An LALM's report is bounded by what it heard, not by a tool manifest: citing it is enough."""
    def fn(d):
        obs = d["observations"][0]["id"]
        d["evidence"].append({"id": "ev_eeeeeeeeee", "claim": "heard: a telephone rings twice", "source_type": "observation",
                              "source_id": obs, "tool": None, "category": None, "artifact_id": "a0",
                              "confidence": None, "data": {}})
        d["final_answer"]["cited_evidence_ids"] = ["ev_eeeeeeeeee"]

    assert auditor.audit_file(edit(runs["phone_ring"], fn)).findings == []


@pytest.mark.parametrize("text,kinds", [
    ("S1 is a woman named Alice.", {"speaker_identity"}),
    ("Speaker 2 was Bob", {"speaker_identity"}),
    ("The speaker sounds angry.", {"emotion"}),
    ('The speaker says "it is sunny today".', {"speech_content"}),
    ("2 distinct voices (voice-embedding clusters): S1 4.7 s", {"speaker_count"}),
    ("5 separate sound event(s) at 0.49-0.71 s", {"event_count"}),
    ("count_events gives the number of separated sound events = 5", {"event_count"}),
    ("Sound event (YAMNet): Telephone 0.0-1.5 s (score 0.75).", {"sound_source"}),
    ("Tempo 120 BPM; the key is A minor.", {"music_attributes"}),
    ("a major change in level", set()),
    ("Language assumed English.", {"language"}),
    ("Speech activity detected in 4 segment(s): 0.23-2.94 s", set()),
    ("Integrated loudness -18.2 LUFS, loudness range 5.2 LU.", set()),
    ('0.26-2.91 s: "Did the dog bark at the telephone?"', {"speech_content"}),  # quoted words are speech
])
def test_claim_kinds(text, kinds):
    assert {k.name for k in claim_kinds(text)} == kinds


@pytest.mark.parametrize("question,kinds", [
    ("How many beeps are there in the recording?", {"event_count"}),  # that they are beeps is given
    ("How many different speakers are in this conversation?", {"speaker_count"}),
    ('How many times does the speaker say the word "morning"?', {"speech_content"}),
    ("What does the speaker say about the weather?", {"speech_content"}),
    ("What is the source of the sound in this clip?", {"sound_source"}),
    ("How long does the tone last?", set()),
    ("What is the emotional tone of the speaker?", {"emotion"}),
    ("What is the tempo of this piece?", {"music_attributes"}),
    ("What language is being spoken?", {"language"}),
])
def test_asked_kinds(question, kinds):
    assert {k.name for k in asked_kinds(question)} == kinds


def test_boundaries_follow_the_manifests():
    reg = ToolRegistry.load()
    expect = [
        ("speaker_identity", "speaker_count", "excluded"), ("speaker_count", "speaker_count", "supported"),
        ("speaker_count", "asr", "excluded"), ("speech_content", "asr", "supported"),
        ("speech_content", "speaker_count", "excluded"), ("sound_source", "tagging", "supported"),
        ("sound_source", "loudness", "excluded"), ("sound_source", "count_events", "excluded"),
        ("event_count", "count_events", "supported"), ("event_count", "tagging", "excluded"),
        ("music_attributes", "tagging", "excluded"), ("language", "asr", "supported"),
    ]
    for kind, tool, level in expect:
        if tool in reg:
            assert boundary(KIND_BY_NAME[kind], reg.get(tool), None).level == level, (kind, tool)
    # a derived artifact is not evidence by itself: derivation tools support no content claim
    for m in reg.all():
        if m.category.value == "audio_derivation":
            assert all(not boundary(k, m, None).allowed for k in KIND_BY_NAME.values()), m.name


# ---- artifacts on disk ----------------------------------------------------------------------------


def test_artifact_missing_changed_and_relocated(runs, tmp_path, auditor):
    run = runs["crop"]
    assert any(a.derived_from for a in run.state.artifacts)
    moved = copy_run(run, tmp_path / "moved")
    data = json.loads(moved.read_text())
    # the copy still points at the original folder: relocate it by removing the recorded files' folder name
    for a in data["artifacts"][1:]:
        a["path"] = str(tmp_path / "gone" / run.state.run.artifact_dir.split("/")[-1] / a["path"].split("/")[-1])
    data["run"]["artifact_dir"] = str(tmp_path / "gone" / run.state.run.artifact_dir.split("/")[-1])
    moved.write_text(json.dumps(data))
    findings = auditor.audit_file(moved).findings
    assert {f.rule for f in findings} == {"artifact-relocated"} and all(f.severity == Severity.info for f in findings)

    # changed: one byte of the copied derived clip
    derived = next((tmp_path / "moved").glob("*.artifacts/*.wav"))
    raw = bytearray(derived.read_bytes())
    raw[-1] ^= 0xFF
    derived.write_bytes(bytes(raw))
    assert {f.rule for f in auditor.audit_file(moved).findings} == {"artifact-relocated", "artifact-changed"}

    # missing
    shutil.rmtree(derived.parent)
    findings = auditor.audit_file(moved).findings
    assert {f.rule for f in findings} == {"artifact-missing"} and findings[0].severity == Severity.error


def test_artifact_provenance(runs, edit, auditor):
    def fn(d):
        d["artifacts"][1]["derived_from"] = "a7"

    assert rules_of(auditor, edit(runs["crop"], fn)) == {"artifact-provenance"}


# ---- CLI -----------------------------------------------------------------------------------------


def test_cli_audit_exit_codes_and_json(runs, edit, tmp_path):
    runner = CliRunner()
    clean = runs["beeps"].path
    warn = edit(runs["beeps"], lambda d: d["outcome"].__setitem__("bound_hit", "max_steps"))
    bad = edit(runs["beeps"], lambda d: d["evidence"][0].__setitem__("source_id", "call_0000000000"))

    r = runner.invoke(app, ["trace", "audit", str(clean)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["trace", "audit", str(warn)])
    assert r.exit_code == 0 and "bound-hit" in r.output
    r = runner.invoke(app, ["trace", "audit", str(warn), "--fail-on", "warning"])
    assert r.exit_code == 1
    r = runner.invoke(app, ["trace", "audit", str(bad), "--json"])
    assert r.exit_code == 1
    payload = json.loads(r.output)
    assert payload["summary"]["by_rule"] == {"evidence-source-missing": 1}
    assert payload["traces"][0]["findings"][0]["path"] == "evidence/0"
    r = runner.invoke(app, ["trace", "audit", str(bad), "--fail-on", "never"])
    assert r.exit_code == 0
    # a folder: every trace in it (recursively), derived-artifact folders skipped
    folder = tmp_path / "batch"
    folder.mkdir()
    for p in (clean, warn, bad):
        shutil.copy(p, folder / p.name)
    r = runner.invoke(app, ["trace", "audit", str(folder), "--json"])
    assert r.exit_code == 1 and json.loads(r.output)["summary"]["traces"] == 3
    r = runner.invoke(app, ["trace", "audit", str(tmp_path / "nothing-here")])
    assert r.exit_code == 2
    r = runner.invoke(app, ["trace", "audit", str(clean), "--fail-on", "sometimes"])
    assert r.exit_code == 2
