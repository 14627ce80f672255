"""Audit rules over a trace: what an auditor must not have to find by reading JSON.

Each rule returns findings with a severity (info < warning < error) and a path into the trace
(`evidence/3`, `tool_calls/7`) so a reader or a CI log can go straight to the item.

The evidence-boundary rules are deliberately independent of the planner's own routing: a small
taxonomy of claim KINDS (speaker identity, emotion, speech content, speaker count, event count,
sound source, musical attributes, language), each recognised in claim text by patterns and tied to
the boundary categories that may support it. A tool may make a claim of a kind when its manifest's
`supports` names that kind; its `not_for` naming the kind is an explicit exclusion; otherwise its
category decides. So "S1 is a woman" from the diarization tool (not_for: identity, gender) and
"the siren gets louder" from the loudness meter (not_for: what makes the sound) are both errors,
and the final answer's rationale is checked the same way against the evidence it cites.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from audiomind.audit.timeline import MAX_TRACE_BYTES, OK_STATUSES, artifact_file, short
from audiomind.paths import clip_text
from audiomind.state import EvidenceItem, EvidenceState, ToolCallStatus, ToolCategory
from audiomind.tools.manifest import ToolManifest, ToolRegistry


class Severity(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Finding(BaseModel):
    rule: str
    severity: Severity
    message: str
    path: str = Field(default="", description="where in the trace, e.g. evidence/3 or final_answer")
    item_id: str | None = None


class TraceAudit(BaseModel):
    file: str
    run_id: str | None = None
    question: str | None = None
    findings: list[Finding] = Field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)


RULES: dict[str, str] = {
    "schema": "the file is not valid JSON or does not match the trace JSON Schema",
    "evidence-source-missing": "evidence cites a tool call or observation that is not in the trace",
    "evidence-source-failed": "evidence cites a tool call that was rejected or failed",
    "evidence-source-mismatch": "evidence names a tool/category other than the call it cites",
    "evidence-artifact-unknown": "evidence is about an artifact that is not in the trace",
    "boundary-violation": "a claim beyond the declared boundary (manifest supports/not_for, category) of its tool",
    "answer-cites-unknown": "the final answer cites an evidence id that is not in the trace",
    "answer-beyond-boundary": "the final answer makes a kind of claim that none of its cited evidence may support",
    "answer-without-evidence": "the final answer cites no evidence",
    "answer-not-in-choices": "a multiple-choice run whose final answer is not one of the choices",
    "answer-missing": "the run has no final answer",
    "format-check-failed": "a format check of the final answer failed",
    "tool-call-rejected": "a tool call was rejected by the executor",
    "tool-call-failed": "a tool call ended in error or timeout",
    "observation-call-missing": "an observation lists a tool call that is not in the trace",
    "relisten-rejected": "a re-listen asked only for artifacts that do not exist or are not derived",
    "artifact-missing": "an artifact's file is missing on disk",
    "artifact-relocated": "an artifact was found beside the moved trace, not at its recorded path",
    "artifact-changed": "an artifact's file no longer has the recorded sha256",
    "artifact-provenance": "a derived artifact names a parent or creating call that is not in the trace",
    "bound-hit": "the run hit its max_steps or time budget bound",
    "outcome-not-answered": "the run stopped or failed instead of answering",
    "outcome-missing": "the run has no outcome (it did not finish)",
    "model-call-errors": "a model request needed retries or recorded errors",
    "confidence-ledger": "the final answer's confidence ledger is missing or does not recompute its printed confidence",
}


# ---- claim kinds and evidence boundaries ---------------------------------------------------------


@dataclass(frozen=True)
class ClaimKind:
    name: str
    description: str
    claim: tuple[re.Pattern[str], ...]  # any match in claim text (quotes removed) => the claim is of this kind
    manifest: re.Pattern[str]  # matches a manifest supports / not_for entry about this kind
    categories: frozenset[ToolCategory]
    quoted: bool = False  # quoted text itself signals the kind (speech content)


def _p(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_NUM = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|single|several|multiple)"
_SOUNDS = (
    r"telephones?|phones?|ringtones?|ringing|alarms?|sirens?|dogs?|bark(?:s|ing|ed)?|cats?|meow\w*|birds?|"
    r"chirp\w*|cars?|engines?|vehicles?|traffic|trains?|horns?|rain(?:fall|ing)?|thunder|wind|water|"
    r"music(?:al)?|instruments?|pianos?|guitars?|drums?|violins?|flutes?|trumpets?|bells?|chimes?|beeps?|"
    r"whistl\w*|applause|clapping|laugh\w*|cough\w*|footsteps?|doors?|knock(?:s|ing)?|glass|typing|"
    r"keyboard|bab(?:y|ies)|crying|gunshots?|explosions?|fireworks?|insects?|crickets?|frogs?|cows?|"
    r"horses?|roosters?|ducks?|sheep|helicopters?|airplanes?|aircraft|motorcycles?|sirens?|buzz(?:er|ing)?"
)

KINDS: tuple[ClaimKind, ...] = (
    ClaimKind(
        "speaker_identity", "who a speaker is: name, gender, age, accent",
        (
            _p(r"\b(male|female|man|woman|men|women|boy|girl|child|gender|accent|identity|identified as|"
               r"named|elderly|old(er)? (man|woman|person)|young(er)? (man|woman|person))\b"),
            re.compile(r"\b(?:(?:[Tt]he\s+)?(?:[Ss]peaker|[Vv]oice|[Nn]arrator)(?:\s+(?:\d+|[A-Z]))?|S\d+)\s+(?:is|was)\s+"
                       r"(?:called\s+|named\s+)?[A-Z][a-z]{2,}\b"),
        ),
        _p(r"identity|who a speaker is|who speaks|who is speaking|gender|accent|\bage\b"),
        frozenset({ToolCategory.speech_and_speaker}),
    ),
    ClaimKind(
        "emotion", "emotion, mood, tone or intent of a speaker",
        (_p(r"\b(emotion\w*|angry|anger|happy|happiness|sad|sadness|joy\w*|fear\w*|afraid|excited|"
            r"frustrat\w*|anxious|upset|cheerful|mood|sarcas\w*|tone of voice)\b"),),
        _p(r"emotion|tone|intent|mood"),
        frozenset({ToolCategory.speech_and_speaker, ToolCategory.evaluation}),
    ),
    ClaimKind(
        "speech_content", "what is said: words, transcript",
        (_p(r"\b(says|said|saying|transcri\w*|spoken words?|utter\w*|mentions?|mentioned|words?)\b"),),
        _p(r"what is said|which words|what words|words are spoken|transcri|speech content|spoken words"),
        frozenset({ToolCategory.speech_and_speaker}),
        quoted=True,
    ),
    ClaimKind(
        "speaker_count", "how many speakers or voices",
        (
            _p(rf"\b{_NUM}\s+(distinct |different |separate |unique )?(speakers?|voices?|people|persons|talkers)\b"),
            _p(r"\bnumber of (distinct |different )?(speakers|voices|people)\b|\b(speaker|voice) count\b"),
        ),
        _p(r"how many (different |distinct )?(people|speakers|voices)|number of speakers|counting speakers"),
        frozenset({ToolCategory.speech_and_speaker}),
    ),
    ClaimKind(
        "event_count", "how many times a sound occurs",
        (
            _p(rf"\b{_NUM}\s+(separate |separated |distinct |individual |discrete )?(sound |audio |acoustic )?"
               r"(events?|beeps?|knocks?|rings?|barks?|clicks?|claps?|chimes?|bangs?|hits?|tones?|sounds|"
               r"occurrences|onsets)\b"),
            _p(r"\bnumber of (separated |separate |distinct )?(sound )?(events|beeps|sounds|occurrences)\b"),
            _p(r"\b(occurs|occurred|repeats|repeated|rang|sounded)\s+(\d+|once|twice|three|four|five)\b"),
        ),
        _p(r"how many (separate )?(sounds|times)|number of (events|sounds)|count(s|ing)? (the )?(events|sounds)"),
        frozenset({ToolCategory.temporal_segmentation}),
    ),
    ClaimKind(
        "sound_source", "what makes a sound (a semantic label)",
        (_p(rf"\b({_SOUNDS})\b"),),
        _p(r"which kinds? of sound|what (makes the sound|the sounds are|the audio contains|the sound is)|"
           r"sound (class|source)|non-speech sounds|what makes"),
        frozenset({ToolCategory.audio_tagging}),
    ),
    ClaimKind(
        "music_attributes", "tempo, key, chords, notes, pitch",
        (
            _p(r"\b\d+(\.\d+)?\s*bpm\b|\btempo\b|\bkey of\b|\bin the key\b|\bchords?\b|\bmelody\b|\bpitch\b"),
            re.compile(r"\b[A-G](?:#|♯|b|♭)?\s*(?:major|minor)\b|\bnotes? [A-G](?:#|b)?\d?\b"),
        ),
        _p(r"tempo|\bkey\b|chord|\bnotes?\b|pitch|melody|\bbpm\b|musical attributes"),
        frozenset({ToolCategory.acoustic_music_features}),
    ),
    ClaimKind(
        "language", "the spoken language",
        (_p(r"\b(language|english|french|spanish|german|chinese|mandarin|japanese|korean|italian|"
            r"portuguese|russian|arabic|hindi)\b"),),
        _p(r"language"),
        frozenset({ToolCategory.speech_and_speaker}),
    ),
)
KIND_BY_NAME = {k.name: k for k in KINDS}

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<![\w])'[^']*'(?![\w])|‘[^’]*’")
_QUOTED_WORDS = re.compile(r"\"\s*\w+[^\"]*\s\w+[^\"]*\"|“[^”]*\s[^”]*”")


def claim_kinds(text: str) -> list[ClaimKind]:
    """The kinds of claim a text makes. Quoted text is what someone said (or a choice being named),
    so it is removed first; a quoted phrase of two or more words is itself a speech-content claim."""
    bare = _QUOTED.sub(" ", text or "")
    found = []
    for kind in KINDS:
        if any(p.search(bare) for p in kind.claim) or (kind.quoted and _QUOTED_WORDS.search(text or "")):
            found.append(kind)
    return found


# The kind a question ASKS for (its presuppositions are not claims of the answer: "How many beeps?"
# asks for a count; that the sounds are beeps is given by the question).
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("speaker_count", _p(r"\bhow many (different |distinct |unique )?(speakers?|people|persons|voices|talkers)\b|"
                         r"\bnumber of (speakers|people|voices)\b")),
    ("event_count", _p(r"\bhow many\b|\bhow often\b|\bnumber of\b|\bcount\b")),
    ("speaker_identity", _p(r"\bwho (is|was) (speaking|talking|the speaker)\b|\b(gender|accent|age) of\b|"
                            r"\bmale or female\b|\b(man|woman) or a (man|woman)\b")),
    ("emotion", _p(r"\b(emotion\w*|feel|feeling|feels|mood|attitude|intent\w*)\b|\btone of (the )?(voice|speaker)\b|"
                   r"\bhow does the (speaker|person) sound\b")),
    ("speech_content", _p(r"\b(say|says|said|saying|mention|mentions|mentioned|word|words|talk(s|ing)? about|"
                          r"announce[sd]?|sentence|phrase)\b|\b(what|which) .{0,30}\b(is|was) (spoken|said)\b")),
    ("language", _p(r"\b(what|which) language\b")),
    ("music_attributes", _p(r"\b(tempo|bpm|key|chord|chords|pitch|melody|notes?)\b")),
    ("sound_source", _p(r"\b(source|what (sound|kind of sound|is making|makes)|which (sound|instrument|animal)|"
                        r"what instrument|what animal|what is (heard|playing))\b")),
)


def asked_kinds(question: str) -> list[ClaimKind]:
    names = [name for name, pat in _ASKS if pat.search(question or "")]
    if "event_count" in names and ("speaker_count" in names or "speech_content" in names):
        names.remove("event_count")  # "how many speakers" / "how many times is X said" are not sound counts
    return [KIND_BY_NAME[n] for n in names]


_ANY_CONTENT = _p(r"any claim about (what the audio contains|the content)")


@dataclass
class BoundaryVerdict:
    """supported: the manifest's `supports` names the kind; undeclared: the category allows it but
    the manifest does not say so (a warning); excluded: `not_for` names it; category: the tool's
    boundary category cannot support it at all."""

    level: str  # supported | undeclared | excluded | category | unknown
    why: str

    @property
    def allowed(self) -> bool:
        return self.level in ("supported", "undeclared", "unknown")


def boundary(kind: ClaimKind, manifest: ToolManifest | None, category: ToolCategory | None) -> BoundaryVerdict:
    """May a tool (its manifest, or just its recorded category) support a claim of this kind?"""
    if manifest is not None:
        for s in manifest.supports:
            if kind.manifest.search(s):
                return BoundaryVerdict("supported", f"{manifest.name} supports '{s}'")
        for s in manifest.not_for:
            if kind.manifest.search(s) or _ANY_CONTENT.search(s):
                return BoundaryVerdict("excluded", f"the {manifest.name} manifest says it is not for '{s}'")
        category = manifest.category
    if category is None:
        return BoundaryVerdict("unknown", "no manifest or category on record to check against")
    if category not in kind.categories:
        allowed = ", ".join(sorted(c.value for c in kind.categories))
        return BoundaryVerdict("category", f"category {category.value} cannot support {kind.description} "
                                           f"(only {allowed})")
    if manifest is None:
        return BoundaryVerdict("supported", f"category {category.value} may support {kind.description}")
    return BoundaryVerdict("undeclared", f"category {category.value} may support {kind.description}, but the "
                                         f"{manifest.name} manifest does not list it under `supports`")


# ---- the audit -----------------------------------------------------------------------------------


class Auditor:
    """Runs every rule over one trace; the tool registry gives the manifests (boundaries)."""

    def __init__(self, registry: ToolRegistry | None = None, check_files: bool = True, confine_files: bool = False,
                 allow: list[Path] | tuple[Path, ...] = (), outside: str | None = None):
        """Artifact files are read under `timeline.artifact_file`, the confinement every trace command shares:
        inside each trace's run folder and the `allow`ed folders, and elsewhere as `outside` says (default:
        "audio", any artifact file with an audio file name that decodes as audio; `confine_files`, as a server's
        viewer asks: "none"); any other recorded path (/etc/passwd, a FIFO, a loop) is reported, never read,
        and a file's own hash is never printed."""
        self.registry = registry if registry is not None else ToolRegistry.load()
        self.check_files = check_files
        self.confine_files = confine_files
        self.outside = outside or ("none" if confine_files else "audio")
        self.allow = list(allow)
        self._hash_cache: dict[tuple[str, float, int], str] = {}

    def manifest(self, tool: str | None) -> ToolManifest | None:
        return self.registry.get(tool) if tool and tool in self.registry else None

    # -- entry points
    def audit_file(self, path: str | Path) -> TraceAudit:
        from audiomind.fsutil import InputFileError, loads_json, read_input_text

        p = Path(path)
        result = TraceAudit(file=str(p))
        try:  # the bounded reader every command uses: no FIFO or device, a size cap, bounded nesting and integers
            text = read_input_text(p, MAX_TRACE_BYTES)
            data = loads_json(text)
        except InputFileError as exc:
            result.findings.append(Finding(rule="schema", severity=Severity.error, message=f"unreadable: {exc}"))
            return result
        problems = schema_problems(data)
        for prob in problems[:50]:
            where, _, msg = prob.partition(": ")
            result.findings.append(Finding(rule="schema", severity=Severity.error, message=msg or prob, path=where))
        try:
            st = EvidenceState.model_validate_json(text)
        except ValidationError as exc:
            if not problems:
                result.findings.append(Finding(rule="schema", severity=Severity.error, message=clip_text(exc, 500)))
            return result
        audited = self.audit_state(st, trace_file=p)
        audited.findings = result.findings + audited.findings
        audited.file = str(p)
        return audited

    def audit_state(self, st: EvidenceState, trace_file: Path | None = None) -> TraceAudit:
        out = TraceAudit(file=str(trace_file or ""), run_id=st.run.run_id, question=st.question.text)
        for rule in (
            self._evidence_sources, self._evidence_boundaries, self._answer, self._tool_calls,
            self._observations, self._format_checks, self._outcome, self._model_calls, self._confidence,
        ):
            out.findings.extend(rule(st))
        out.findings.extend(self._artifacts(st, trace_file))
        return out

    # -- rules
    def _evidence_sources(self, st: EvidenceState) -> Iterable[Finding]:
        calls = {c.id: c for c in st.tool_calls}
        obs = {o.id for o in st.observations}
        arts = {a.id for a in st.artifacts}
        for i, e in enumerate(st.evidence):
            path = f"evidence/{i}"
            if e.source_type == "tool_call":
                call = calls.get(e.source_id)
                if call is None:
                    yield Finding(rule="evidence-source-missing", severity=Severity.error, path=path, item_id=e.id,
                                  message=f"{e.id} cites tool call {e.source_id}, which is not in the trace: "
                                          f"'{short(e.claim, 100)}'")
                    continue
                if call.status not in OK_STATUSES:
                    yield Finding(rule="evidence-source-failed", severity=Severity.error, path=path, item_id=e.id,
                                  message=f"{e.id} cites {call.tool} call {call.id}, whose status is "
                                          f"{call.status.value}: a failed call produces no evidence")
                if (e.tool and e.tool != call.tool) or (e.category and call.category and e.category != call.category):
                    yield Finding(rule="evidence-source-mismatch", severity=Severity.error, path=path, item_id=e.id,
                                  message=f"{e.id} says it is from {e.tool} [{e.category.value if e.category else '?'}]"
                                          f" but cites call {call.id} of {call.tool} "
                                          f"[{call.category.value if call.category else '?'}]")
            elif e.source_id not in obs:
                yield Finding(rule="evidence-source-missing", severity=Severity.error, path=path, item_id=e.id,
                              message=f"{e.id} cites observation {e.source_id}, which is not in the trace")
            if e.artifact_id is not None and e.artifact_id not in arts:
                yield Finding(rule="evidence-artifact-unknown", severity=Severity.error, path=path, item_id=e.id,
                              message=f"{e.id} is about artifact {e.artifact_id}, which is not in the trace "
                                      f"(known: {', '.join(sorted(arts))})")

    def _evidence_boundaries(self, st: EvidenceState) -> Iterable[Finding]:
        calls = {c.id: c for c in st.tool_calls}
        for i, e in enumerate(st.evidence):
            if e.source_type != "tool_call":
                continue  # a front end's report is bounded by what it heard, not by a tool manifest
            call = calls.get(e.source_id)
            tool = e.tool or (call.tool if call else None)
            manifest = self.manifest(tool)
            category = e.category or (call.category if call else None)
            for kind in claim_kinds(e.claim):
                verdict = boundary(kind, manifest, category)
                if verdict.level in ("excluded", "category", "undeclared"):
                    yield Finding(
                        rule="boundary-violation",
                        severity=Severity.warning if verdict.level == "undeclared" else Severity.error,
                        path=f"evidence/{i}", item_id=e.id,
                        message=f"{e.id} from {tool} claims {kind.description} ({kind.name}): {verdict.why}. "
                                f"Claim: '{short(e.claim, 140)}'",
                    )

    def _answer(self, st: EvidenceState) -> Iterable[Finding]:
        fa = st.final_answer
        choices = st.question.choices
        if fa is None:
            if st.outcome is None or st.outcome.status == "answered":
                yield Finding(rule="answer-missing", severity=Severity.error, path="final_answer",
                              message="the run has no final answer")
            return
        if choices:
            in_choices = fa.choice is not None and fa.choice in choices and (
                fa.choice_index is None or (0 <= fa.choice_index < len(choices) and choices[fa.choice_index] == fa.choice)
            )
            if not in_choices:
                got = fa.choice if fa.choice is not None else fa.text
                yield Finding(rule="answer-not-in-choices", severity=Severity.error, path="final_answer",
                              message=f"answer {got!r} (choice_index {fa.choice_index}) is not one of the choices "
                                      f"{choices}")
        by_id = {e.id: e for e in st.evidence}
        cited: list[EvidenceItem] = []
        for eid in fa.cited_evidence_ids:
            if eid in by_id:
                cited.append(by_id[eid])
            else:
                yield Finding(rule="answer-cites-unknown", severity=Severity.error, path="final_answer/cited_evidence_ids",
                              item_id=eid, message=f"the final answer cites {eid}, which is not in the trace's evidence")
        if not fa.cited_evidence_ids:
            yield Finding(rule="answer-without-evidence", severity=Severity.warning, path="final_answer",
                          message="the final answer cites no evidence, so its support cannot be checked")
            return
        if not cited:
            return
        asked = asked_kinds(st.question.text)
        claimed = {k.name: ("rationale", k) for k in claim_kinds(fa.rationale)}
        if not any(k.name == "speech_content" for k in asked):  # else the answer is a quotation, not a claim
            for k in claim_kinds(fa.choice or fa.text):
                claimed.setdefault(k.name, ("answer", k))
        for k in asked:
            claimed.setdefault(k.name, ("question", k))
        for name, (where, kind) in claimed.items():
            verdicts = []
            for e in cited:
                if e.source_type == "observation":  # the front end heard it: its own boundary, not a tool's
                    verdicts.append((e.id, BoundaryVerdict("supported", "a front-end observation")))
                else:
                    verdicts.append((e.id, boundary(kind, self.manifest(e.tool), e.category)))
            if any(v.level in ("supported", "unknown") for _, v in verdicts):
                continue
            undeclared = [eid for eid, v in verdicts if v.level == "undeclared"]
            src = {"rationale": "its rationale claims", "answer": "the answer text claims",
                   "question": "the question asks for"}[where]
            if undeclared:
                sev, detail = Severity.warning, f"only evidence whose tool does not declare it: {', '.join(undeclared)}"
            else:
                sev = Severity.error if where in ("rationale", "answer") else Severity.warning
                detail = "none of the cited evidence may support it: " + "; ".join(
                    f"{eid} ({v.why})" for eid, v in verdicts[:4])
            yield Finding(rule="answer-beyond-boundary", severity=sev, path="final_answer",
                          message=f"{src} {kind.description} ({name}), but {detail}")

    def _confidence(self, st: EvidenceState) -> Iterable[Finding]:
        """The printed confidence recomputed from its ledger (audiomind.reasoning.ledger: within 1e-9)."""
        from audiomind.reasoning.ledger import problems

        fa = st.final_answer
        if fa is None:
            return
        for msg in problems(fa.confidence_steps, fa.confidence):
            missing = not fa.confidence_steps
            yield Finding(rule="confidence-ledger", severity=Severity.warning if missing else Severity.error,
                          path="final_answer/confidence_steps", message=msg)

    def _tool_calls(self, st: EvidenceState) -> Iterable[Finding]:
        for i, c in enumerate(st.tool_calls):
            if c.status == ToolCallStatus.rejected:
                yield Finding(rule="tool-call-rejected", severity=Severity.warning, path=f"tool_calls/{i}", item_id=c.id,
                              message=f"{c.tool} call ({c.issued_by}, step {c.step}) was rejected: {c.error}")
            elif c.status in (ToolCallStatus.error, ToolCallStatus.timeout):
                yield Finding(rule="tool-call-failed", severity=Severity.warning, path=f"tool_calls/{i}", item_id=c.id,
                              message=f"{c.tool} call ({c.issued_by}, step {c.step}) ended in {c.status.value}: {c.error}")

    def _observations(self, st: EvidenceState) -> Iterable[Finding]:
        calls = {c.id for c in st.tool_calls}
        for i, o in enumerate(st.observations):
            missing = [cid for cid in o.tool_call_ids if cid not in calls]
            if missing:
                yield Finding(rule="observation-call-missing", severity=Severity.error, path=f"observations/{i}",
                              item_id=o.id, message=f"{o.id} lists tool calls not in the trace: {', '.join(missing)}")
            if o.kind == "relisten" and not o.artifact_ids:
                yield Finding(rule="relisten-rejected", severity=Severity.warning, path=f"observations/{i}",
                              item_id=o.id, message=f"re-listen {o.id} heard nothing: {o.rejected or o.uncertainty or 'no artifacts'}")

    def _format_checks(self, st: EvidenceState) -> Iterable[Finding]:
        fbs = st.format_feedback
        for i, fb in enumerate(fbs):
            if fb.ok:
                continue
            final = i == len(fbs) - 1
            yield Finding(
                rule="format-check-failed", severity=Severity.error if final else Severity.warning,
                path=f"format_feedback/{i}",
                message=f"attempt {fb.attempt}: {fb.message} (answer {short(fb.answer_text, 80)!r})"
                        + ("; no later attempt passed" if final else "; a later attempt passed"),
            )

    def _outcome(self, st: EvidenceState) -> Iterable[Finding]:
        o = st.outcome
        if o is None:
            yield Finding(rule="outcome-missing", severity=Severity.error, path="outcome",
                          message="the run has no outcome: it was interrupted before `finish`")
            return
        if o.bound_hit:
            limit = f"{st.run.max_steps} steps" if o.bound_hit == "max_steps" else f"{st.run.time_budget_s:.0f} s"
            yield Finding(rule="bound-hit", severity=Severity.warning, path="outcome/bound_hit",
                          message=f"the run hit its {o.bound_hit} bound ({limit}) and answered with what it had")
        if o.status != "answered":
            yield Finding(rule="outcome-not-answered", severity=Severity.warning, path="outcome",
                          message=f"the run {o.status}: {o.reason or '(no reason given)'}")

    def _model_calls(self, st: EvidenceState) -> Iterable[Finding]:
        for i, m in enumerate(st.model_calls):
            if m.attempts > 1 or m.errors:
                yield Finding(rule="model-call-errors", severity=Severity.info, path=f"model_calls/{i}", item_id=m.id,
                              message=f"{m.role} {m.purpose} via {m.backend}: {m.attempts} attempt(s); "
                                      + "; ".join(short(e, 120) for e in m.errors[:3]))

    def _artifacts(self, st: EvidenceState, trace_file: Path | None) -> Iterable[Finding]:
        from audiomind.audio import sha256_file

        ids = {a.id for a in st.artifacts}
        calls = {c.id for c in st.tool_calls}
        for i, a in enumerate(st.artifacts):
            path = f"artifacts/{i}"
            if a.derived_from is not None and a.derived_from not in ids:
                yield Finding(rule="artifact-provenance", severity=Severity.error, path=path, item_id=a.id,
                              message=f"{a.id} is derived from {a.derived_from}, which is not in the trace")
            if a.created_by is not None and a.created_by not in calls:
                yield Finding(rule="artifact-provenance", severity=Severity.error, path=path, item_id=a.id,
                              message=f"{a.id} was created by call {a.created_by}, which is not in the trace")
            if not self.check_files:
                continue
            p, moved, reason = artifact_file(a, st, trace_file, self.allow, outside=self.outside)
            why = f"is not read ({reason})" if reason and reason != "audio file missing" else "is missing"
            if p is None:
                yield Finding(rule="artifact-missing", severity=Severity.error, path=path, item_id=a.id,
                              message=f"{a.id} ({'original' if a.derived_from is None else 'derived'}) {why}: "
                                      f"{clip_text(a.path, 200)}")
                continue
            if moved:
                yield Finding(rule="artifact-relocated", severity=Severity.info, path=path, item_id=a.id,
                              message=f"{a.id} is not at its recorded path; found beside the trace at {p}")
            try:
                stat = p.stat()
                key = (str(p), stat.st_mtime, stat.st_size)
                if key not in self._hash_cache:
                    self._hash_cache[key] = sha256_file(p)
            except OSError as exc:  # e.g. no permission: a finding, never a traceback
                yield Finding(rule="artifact-missing", severity=Severity.error, path=path, item_id=a.id,
                              message=f"{a.id} at {p} cannot be read: {exc.strerror or type(exc).__name__}")
                continue
            if self._hash_cache[key] != a.sha256:
                yield Finding(rule="artifact-changed", severity=Severity.error, path=path, item_id=a.id,
                              message=f"{a.id} at {p} does not have the sha256 the trace recorded "
                                      f"({a.sha256[:12]}…): the file changed after the run")


def schema_problems(data: Any, *, owners: bool = False) -> list[str]:
    """JSON Schema problems of a parsed trace as 'where: message' lines ('where (item id): message' with
    `owners`, plus a line for a schema_version this audiomind does not read); [] means valid."""
    import jsonschema

    from audiomind.state import SCHEMA_VERSION
    from audiomind.trace import trace_json_schema

    validator = jsonschema.Draft202012Validator(trace_json_schema())
    out = []
    if owners and isinstance(data, dict) and data.get("schema_version") not in (None, SCHEMA_VERSION):
        out.append(f"schema_version: {clip_text(repr(data.get('schema_version')), 80)}, but this audiomind reads "
                   f"{SCHEMA_VERSION!r}")

    def owner_id(p: list) -> str:
        node: Any = data
        found = ""
        for part in p:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(node, dict) and isinstance(node.get("id"), str):
                found = node["id"]
        return f" ({clip_text(found, 80)})" if found and owners else ""

    for e in sorted(validator.iter_errors(data), key=lambda e: [str(x) for x in e.absolute_path]):
        where = "/".join(str(x) for x in e.absolute_path) or "(root)"
        # jsonschema's message repeats the offending value, which may be the whole file: keep ~200 characters
        out.append(f"{clip_text(where, 120)}{owner_id(list(e.absolute_path))}: {clip_text(e.message, 200)}")
    return out


# ---- many files ----------------------------------------------------------------------------------


def trace_files(path: str | Path) -> list[Path]:
    """Trace JSON files at a path: the file itself, or every *.json under a folder (recursively),
    skipping derived-artifact folders, hidden temp files and symlinks that lead out of the folder (a
    folder of traces from elsewhere may hold `x.json -> ~/.ssh/id_rsa`: never read, never rendered)."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        return []
    inside = os.path.realpath(p)
    return sorted(
        f for f in p.rglob("*.json")
        if f.is_file()  # a FIFO or device named *.json would block its reader; a symlink loop never resolves
        and not f.name.startswith(".")
        and not any(part.endswith(".artifacts") for part in f.relative_to(p).parts[:-1])
        and f.name != "trace.schema.json"
        and (not f.is_symlink() or os.path.commonpath([inside, os.path.realpath(f)]) == inside)
    )


def audit_paths(paths: Iterable[str | Path], registry: ToolRegistry | None = None,
                check_files: bool = True) -> list[TraceAudit]:
    auditor = Auditor(registry, check_files=check_files)
    return [auditor.audit_file(f) for p in paths for f in trace_files(p)]


def exit_code(audits: list[TraceAudit], fail_on: str) -> int:
    """0 when no finding is at or above `fail_on` (info | warning | error | never), else 1."""
    if fail_on == "never":
        return 0
    threshold = Severity(fail_on).rank
    return 1 if any(f.severity.rank >= threshold for a in audits for f in a.findings) else 0


def audits_json(audits: list[TraceAudit]) -> dict[str, Any]:
    by_rule: dict[str, int] = {}
    for a in audits:
        for f in a.findings:
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    return {
        "traces": [a.model_dump(mode="json") for a in audits],
        "summary": {
            "traces": len(audits),
            "with_findings": sum(1 for a in audits if a.findings),
            "by_severity": {s.value: sum(a.count(s) for a in audits) for s in Severity},
            "by_rule": dict(sorted(by_rule.items())),
        },
    }
