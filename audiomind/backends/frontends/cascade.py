"""`cascade`: the embedded front end. It "listens" by running a fixed, fast perception pass over the
embedded tools and renders what they found as a structured description (a template, no LLM). Its tool
calls are recorded like the planner's (issued_by = "frontend"), and it says what it cannot perceive.
It answers by verifying every choice against the facts on record (audiomind.reasoning.answer) and
reports a calibrated confidence with its reason."""

from __future__ import annotations

import concurrent.futures as cf
import time

from audiomind.artifacts import make_artifact
from audiomind.audio import AudioError, DecodeDeadline, decode_deadline, write_excerpt
from audiomind.backends.base import AnswerRequest, AnswerResult, ListenRequest, ListenResult
from audiomind.backends.deadline import Budget, current_budget
from audiomind.backends.spans import absolute_span, focus_on_span, without_time_phrase
from audiomind.language.analysis import analyse
from audiomind.language.question import Reader
from audiomind.language.text import MUSIC_TAG_WORDS
from audiomind.reasoning.answer import decide_from
from audiomind.reasoning.facts import Record, facts_from
from audiomind.reasoning.property_verifier import tools_for
from audiomind.state import Artifact, EvidenceItem, ModelSpec, ToolCall, ToolCallRequest, ToolCallStatus
from audiomind.tools.executor import ExecutionResult, ToolExecutor

FIRST_PASS = ("probe", "signal_stats", "tagging", "vad", "loudness", "count_events")
SPEECH_PASS = ("asr", "speaker_count")
SPEECH_MIN_S = 0.3  # Silero VAD speech (s) that calls for the speech pass
MUSIC_PASS = ("tempo", "key", "pitch")
PERCEPTION_MAX_S = 1800.0
"""The most of one clip the perception pass analyses: of a longer recording, its first PERCEPTION_MAX_S seconds,
as an excerpt artifact (derived from the clip, operation "excerpt") written one block at a time, and the
description, the open needs and the answer's rationale say so. Its tools hold their input whole in memory: a
10-hour clip taken whole held 4.5 GB and ran 133 s before the first answer step (issue 35); 30 minutes at
16 kHz is 115 MB. The planner can still window any stretch of the whole clip."""
CANNOT = (
    "The cascade front end cannot perceive emotion, intent, speaker identity (only distinct voices), spatial "
    "position, or fine-grained semantics beyond its tools' outputs."
)


class CascadeFrontEnd:
    name = "cascade"
    answers_from_evidence = True  # it hears only through its perception pass (so direct mode listens first)

    def __init__(self, executor: ToolExecutor, reader: Reader | None = None):
        self.executor = executor
        self.reader = reader  # the agent's question reader (None: the cached rule reader)
        self._excerpts: dict[tuple[str, str], Artifact] = {}  # (clip id, sha256) -> the excerpt it perceived

    def spec(self) -> ModelSpec:
        return ModelSpec(
            role="frontend", spec="cascade", kind="cascade", model=None,
            decoding={"first_pass": list(FIRST_PASS), "speech_pass": list(SPEECH_PASS), "music_pass": list(MUSIC_PASS)},
        )

    def _available(self, names: tuple[str, ...]) -> list[str]:
        reg, allowed = self.executor.registry, self.executor.allowed
        return [n for n in names if n in reg and reg.availability(n)[0] and (allowed is None or n in allowed)]

    def listen(self, request: ListenRequest) -> ListenResult:
        artifacts = request.artifacts
        budget = current_budget()  # the run's time budget: no tool starts once it is spent, none runs past it
        calls: list[ToolCall] = []
        ev = []
        derived: list[Artifact] = []
        notes: list[str] = []
        known = list(artifacts)
        wanted = self._available(tuple(tools_for(request.question, request.choices)))  # descriptors, only if asked
        for art in artifacts:
            heard, note = self._heard(art, known, budget)
            if heard is not art:
                derived.append(heard)
            if note:
                notes.append(note)
            first, second = self._perceive(heard.id, known, request.step, budget)
            for res in (first, second, self._run(wanted, heard.id, known, request.step, budget)):
                calls += res.tool_calls
                ev += res.evidence
                derived += res.artifacts
        excerpts = [a for a in derived if a.operation == "excerpt"]
        description = "\n".join([*notes, _describe([*artifacts, *excerpts], calls, ev)])
        failed = [c for c in calls if c.status not in (ToolCallStatus.ok, ToolCallStatus.cached)]
        return ListenResult(
            text=description,
            description=description,
            focus=f"targets requested: {request.prompt.splitlines()[0][:200] if request.prompt else ''}",
            provisional_answer=None,
            open_needs=[*notes, *(f"{c.tool} failed: {c.error}" for c in failed)],
            uncertainty="tool-based description; " + " ".join([*notes, CANNOT]),
            tool_calls=calls,
            evidence=ev,
            derived_artifacts=derived,
        )

    def _heard(self, art: Artifact, known: list[Artifact], budget: Budget | None) -> tuple[Artifact, str]:
        """(the artifact the perception pass analyses, a note saying what was left out): `art` itself, or for
        a clip longer than PERCEPTION_MAX_S an excerpt of its first PERCEPTION_MAX_S seconds, added to `known`
        (and remembered, so the answer reads its facts). Writing it stops at the run's deadline: then `art`
        is analysed as it is, and its tools are stopped by the same deadline."""
        if (art.duration_s or 0.0) <= PERCEPTION_MAX_S:
            return art, ""
        end = PERCEPTION_MAX_S
        num = max((int(a.id[1:]) for a in known if a.id[1:].isdigit()), default=-1) + 1
        path = self.executor.derived_dir / f"{art.id}_excerpt_0-{end:g}s.wav"
        expires = time.monotonic() + budget.remaining() if budget is not None else None
        try:
            with decode_deadline(expires):
                write_excerpt(art.path, path, 0.0, end)
            excerpt = make_artifact(f"a{num}", path, derived_from=art.id, operation="excerpt",
                                    parameters={"start_s": 0.0, "end_s": end, "reason": "perception length cap"})
        except (AudioError, DecodeDeadline, OSError) as exc:
            return art, (f"Could not cut the first {end:g} s of the {art.duration_s:.0f} s clip {art.id} for the "
                         f"perception pass ({type(exc).__name__}: {exc}); its tools ran on the whole clip.")
        known.append(excerpt)
        self._excerpts[(art.id, art.sha256)] = excerpt
        return excerpt, (f"Perception analysed only the first {end:g} s of the {art.duration_s:.0f} s clip "
                         f"{art.id} (excerpt {excerpt.id}): nothing after {end:g} s was heard.")

    def _perceive(self, artifact_id: str, known, step: int,
                  budget: Budget | None = None) -> tuple[ExecutionResult, ExecutionResult]:
        """(first pass, follow-up pass) on one artifact. The follow-up is the speech pass when Silero VAD
        hears >= 0.3 s of speech or speech is among the two top tags, plus the music pass when a top-5 tag
        is musical. VAD runs on its own beside the rest of the first pass, so when it already settles the
        speech question the speech pass starts at once instead of after the slowest first-pass tool (on a
        fresh process that is YAMNet with its imports, seconds later); the tools, their arguments and the
        order of the calls on record are the same either way."""
        first_tools = self._available(FIRST_PASS)
        speech = self._available(SPEECH_PASS)
        if "vad" not in first_tools or not speech:
            first = self._run(first_tools, artifact_id, known, step, budget)
            return first, self._run(self._follow(first, early_speech=False), artifact_id, known, step, budget)
        others = [t for t in first_tools if t != "vad"]
        with cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="cascade") as pool:
            rest_f = pool.submit(self._run, others, artifact_id, known, step, budget)
            vad = self._run(["vad"], artifact_id, known, step, budget)
            early = _speech_seconds(vad) >= SPEECH_MIN_S
            speech_f = pool.submit(self._run, speech, artifact_id, known, step, budget) if early else None
            first = _merged([vad, rest_f.result()], first_tools)
            follow = self._follow(first, early_speech=early)
            more = self._run(follow, artifact_id, known, step, budget)
            second = _merged([speech_f.result(), more], speech + follow) if speech_f is not None else more
        return first, second

    def _follow(self, first: ExecutionResult, *, early_speech: bool) -> list[str]:
        """The follow-up tools the first pass calls for (without the speech pass when it already ran)."""
        top_tags = [t.lower() for t in _tags(first)[:5]]
        follow: list[str] = []
        if not early_speech and (_speech_seconds(first) >= SPEECH_MIN_S or any("speech" in t for t in top_tags[:2])):
            follow += self._available(SPEECH_PASS)
        if any(w in t for t in top_tags for w in MUSIC_TAG_WORDS):
            follow += self._available(MUSIC_PASS)
        return follow

    def _run(self, tools: list[str], artifact_id: str, known, step: int, budget: Budget | None = None) -> ExecutionResult:
        if not tools:
            return ExecutionResult()
        reqs = [ToolCallRequest(tool=t, arguments={"artifact": artifact_id}, reason="cascade perception pass") for t in tools]
        return self.executor.run(reqs, known, step=step, issued_by="frontend", budget=budget)

    def answer(self, request: AnswerRequest) -> AnswerResult:
        """From what every front end gets (AnswerRequest): the facts read from the request's evidence and the
        tool calls that produced it, about the original clip; each choice verified against them."""
        if not request.choices:
            text, ids = _free_text_answer(request.evidence)
            return AnswerResult(text=text, rationale="free-text answer rendered from the evidence", cited_evidence_ids=ids)
        analysis = analyse(without_time_phrase(request.question), request.choices, self.executor.registry.available(),
                           self.reader)
        calls, evidence = request.tool_calls, request.evidence
        span = absolute_span(request.question, request.original.duration_s if request.original else None)
        if span is not None:  # a question about one stretch: its evidence comes from the calls on that stretch
            calls = focus_on_span(calls, span)
            kept = {c.id for c in calls}
            evidence = [e for e in evidence if e.source_type != "tool_call" or e.source_id in kept]
        heard = _excerpt_heard(self._excerpts.get((request.original.id, request.original.sha256)), request.original,
                               calls)
        facts = facts_from(Record(tool_calls=calls, evidence=evidence), heard or request.original)
        result = decide_from(facts, analysis)
        if heard is not None:  # the facts are those of the clip's first PERCEPTION_MAX_S seconds only
            lead = f"(from the first {heard.duration_s:.0f} s of the {request.original.duration_s:.0f} s clip, excerpt {heard.id})"
            result = result.model_copy(update={"rationale": f"{lead} {result.rationale}"})
        if result.choice_index is None:
            return AnswerResult(text="", rationale=result.rationale, confidence=0.0,
                                confidence_reason=result.confidence_reason, confidence_steps=result.confidence_steps)
        return AnswerResult(
            text=request.choices[result.choice_index],
            rationale=f"[{result.method}] {result.rationale}",
            cited_evidence_ids=result.cited_evidence_ids,
            confidence=result.confidence,
            confidence_reason=result.confidence_reason,
            confidence_steps=result.confidence_steps,
        )


def _merged(results: list[ExecutionResult], order: list[str]) -> ExecutionResult:
    """Several executor results as one, calls in `order` (by tool name) and each call's evidence and
    artifacts with it, as one executor run of those tools would have listed them."""
    rank = {name: i for i, name in enumerate(order)}
    calls = sorted((c for r in results for c in r.tool_calls), key=lambda c: rank.get(c.tool, len(rank)))
    pos: dict[str | None, int] = {c.id: i for i, c in enumerate(calls)}  # an artifact may name no creating call
    evidence = sorted((e for r in results for e in r.evidence), key=lambda e: pos.get(e.source_id, len(pos)))
    artifacts = sorted((a for r in results for a in r.artifacts), key=lambda a: pos.get(a.created_by, len(pos)))
    return ExecutionResult(tool_calls=calls, evidence=evidence, artifacts=artifacts)


def _excerpt_heard(excerpt: Artifact | None, original: Artifact, calls: list[ToolCall]) -> Artifact | None:
    """The excerpt whose facts answer for `original`: the one its perception pass analysed, unless the record
    holds no call on it (another run's) or the tools that succeeded on it also succeeded on the whole clip
    (the planner ran them there: the whole clip's facts are the fuller ones)."""
    if excerpt is None:
        return None

    def done(artifact_id: str) -> set[str]:
        return {c.tool for c in calls if (c.arguments or {}).get("artifact") == artifact_id
                and c.status in (ToolCallStatus.ok, ToolCallStatus.cached)}

    on_excerpt = done(excerpt.id)
    return excerpt if on_excerpt and not on_excerpt <= done(original.id) else None


def _speech_seconds(result: ExecutionResult) -> float:
    from audiomind.tools.base import typed_output
    from audiomind.tools.vad import VadOutput

    for c in result.tool_calls:
        if c.tool == "vad" and c.output:
            out = typed_output(c.output, VadOutput)
            return float(out.speech_s) if out is not None else 0.0
    return 0.0


def _tags(result: ExecutionResult) -> list[str]:
    from audiomind.tools.base import typed_output
    from audiomind.tools.tagging import TaggingOutput

    for c in result.tool_calls:
        if c.tool == "tagging" and c.output:
            out = typed_output(c.output, TaggingOutput)
            return [t.label for t in out.tags] if out is not None else []
    return []


def _describe(artifacts, calls: list[ToolCall], evidence) -> str:
    """A structured description: one line per tool, in perception order, with evidence ids."""
    lines = []
    for art in artifacts:
        lines.append(f"Artifact {art.id}: {art.duration_s:.2f} s, {art.sample_rate} Hz, {art.channels} ch.")
    order = {name: i for i, name in enumerate(FIRST_PASS + SPEECH_PASS + MUSIC_PASS)}
    for c in sorted(calls, key=lambda c: order.get(c.tool, 99)):
        claims = [e for e in evidence if e.source_id == c.id]
        if c.status in (ToolCallStatus.ok, ToolCallStatus.cached):
            for e in claims:
                lines.append(f"- {c.tool}: {e.claim} [{e.id}]")
        else:
            lines.append(f"- {c.tool}: not available ({c.status.value}: {c.error})")
    for art in artifacts:
        measured = facts_from(Record(tool_calls=calls, evidence=evidence), art).measured_lines()
        if measured:
            lines.append(f"Measured on {art.id} (derived from the tool outputs above):")
            lines += [f"- {m}" for m in measured]
    return "\n".join(lines)


def _free_text_answer(evidence: list[EvidenceItem]) -> tuple[str, list[str]]:
    claims = evidence[:6]
    return ("; ".join(e.claim for e in claims) or "No evidence was gathered.", [e.id for e in claims])
