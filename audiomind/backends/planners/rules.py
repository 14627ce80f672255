"""The offline planner `rules`: a transparent policy, not an LLM.

No capable instruction-tuned LLM ships on PyPI, so the embedded default plans with keyword rules and
MiniLM similarity between the question and the tool manifests (audiomind.language.analysis), and it
answers by matching evidence to choices (audiomind.reasoning.matcher). It drives the same graph and
writes the same decisions, with rationales, as any LLM planner; the trace names it `rules`.
"""

from __future__ import annotations

from audiomind.backends.spans import absolute_span, without_time_phrase
from audiomind.language.analysis import QuestionAnalysis, analyse
from audiomind.language.question import Reader
from audiomind.prompts import choices_block, load_prompt
from audiomind.state import (
    Action,
    EvidenceState,
    ModelCall,
    ModelSpec,
    PerceptionPrompt,
    Plan,
    PlannerDecision,
    RelistenRequest,
    ToolCallRequest,
    ToolCallStatus,
)
from audiomind.tools.manifest import ToolRegistry

SPAN_FALLBACK_TOOLS = ("asr", "tagging")  # what runs on a named stretch when the question's own tools cannot
DOUBT_BELOW = 0.5  # a provisional answer below this confidence, or a guess, asks for a second reading
DOUBT_BEAM = 8  # the second reading's beam (the first uses the tool's default, 5)
DOUBT_MAX_STRETCH_S = 120.0  # a second reading covers at most this much audio around the recognised words


def confidence_band(confidence: float) -> int:
    """0: doubtful (below DOUBT_BELOW), 1: an answer, 2: a confident answer (audiomind.state.CONFIDENT_AT)."""
    from audiomind.state import CONFIDENT_AT

    return 0 if confidence < DOUBT_BELOW else 1 if confidence < CONFIDENT_AT else 2


class RulesPlanner:
    name = "rules"

    def __init__(self, registry: ToolRegistry, reader: Reader | None = None):
        self.registry = registry
        self.reader = reader  # None: the cached rule reader (AgentConfig.reader chooses)
        self._analyses: dict[str, QuestionAnalysis] = {}

    def spec(self) -> ModelSpec:
        return ModelSpec(
            role="planner", spec="rules", kind="rules", model=None,
            decoding={"policy": "keyword rules + MiniLM (all-MiniLM-L6-v2) manifest similarity", "llm": False},
        )

    def analysis(self, state: EvidenceState) -> QuestionAnalysis:
        key = state.question.text + "\x00" + "\x00".join(state.question.choices)
        if key not in self._analyses:
            self._analyses[key] = analyse(without_time_phrase(state.question.text), state.question.choices,
                                          self.registry.available(), self.reader)
        return self._analyses[key]

    # ---- nodes ------------------------------------------------------------------------------------
    def perception_prompt(self, state: EvidenceState) -> tuple[PerceptionPrompt, ModelCall | None]:
        a = self.analysis(state)
        tpl = load_prompt("perception")
        text = tpl.render(
            question=state.question.text, choices_block=choices_block(state.question.choices),
            targets="; ".join(a.targets),
        )
        # an LLM reader's call is on the record with the plan it shaped, once (a rule reading makes none)
        call = a.frame.model_call if a.frame is not None else None
        if a.frame is not None:
            a.frame._model_call = None
        return PerceptionPrompt(prompt_id=tpl.id, text=text, auditory_targets=a.targets), call

    def plan(self, state: EvidenceState, inventory: str) -> tuple[Plan, ModelCall | None]:
        a = self.analysis(state)
        obs = state.observations[-1] if state.observations else None
        directly = []
        if obs and obs.provisional_answer:
            directly.append(f"front end's provisional answer: {obs.provisional_answer}")
        heard_focus = [f"front end's focus: {obs.focus}"] if obs and obs.focus.strip() else []
        open_needs = [f"front end's open need: {n}" for n in (obs.open_needs if obs else [])]
        verify = {
            "count_speakers": "the number of distinct voices",
            "count_events": "the exact number of separated events",
            "count_words": "how often the word occurs in the transcript",
            "speech_content": "the exact words spoken",
            "loudness_trend": "the direction of the loudness change",
            "loudness_compare": "the level of each sound",
            "pitch_compare": "the pitch of each sound",
            "pitch_contour": "the pitch of each note",
            "rate_compare": "the speech rate of each utterance",
            "rate_absolute": "syllables per second of voiced speech",
            "tempo": "the tempo in BPM",
            "key": "the mode (major/minor) and tonic",
            "order": "when each source starts and ends",
            "gender": "the median pitch of each voice",
            "side": "the level of each channel",
        }
        return (
            Plan(
                intent=f"{a.primary}: {state.question.text}",
                answer_format=(
                    f"exactly one of the {len(state.question.choices)} choices, verbatim"
                    if state.question.choices else "free text"
                ),
                focus=a.targets + heard_focus,
                candidate_operations=a.tools,
                claims_to_verify=[verify[i] for i in a.intents if i in verify and a.fit(i) >= 0.35] + open_needs,
                directly_answerable=directly,
                rationale=a.rationale + (f"; the front end's uncertainty: {obs.uncertainty}"
                                         if obs and obs.uncertainty.strip() else ""),
            ),
            None,
        )

    def decide(self, state: EvidenceState, inventory: str) -> tuple[PlannerDecision, ModelCall | None]:
        a = self.analysis(state)
        step = state.step
        attempted = {
            (c.tool, (c.arguments or c.requested_arguments).get("artifact", "a0"),
             (c.arguments or c.requested_arguments).get("model"))
            for c in state.tool_calls
        }
        wanted = [(t, self._arguments(t, a)) for t in a.tools]
        missing = [
            (t, args) for t, args in wanted
            if not any(tool == t and art == "a0" and (args.get("model") in (None, model)) for tool, art, model in attempted)
        ]
        if missing:
            calls = [ToolCallRequest(tool=t, arguments=args, reason=f"needed for {a.primary}") for t, args in missing]
            names = [t for t, _ in missing]
            return self._decision(
                step, Action.CALL_TOOLS,
                f"The question is about {'; '.join(a.targets)}; evidence from {', '.join(names)} is not yet on "
                f"record ({a.rationale}).",
                tool_calls=calls,
            ), None

        span_step = self._span_step(state)
        if span_step is not None:
            return span_step, None

        relisten = self._relisten_step(state)
        if relisten is not None:
            return relisten, None

        doubt = self._doubt_step(state)
        if doubt is not None:
            return doubt, None

        failed = [c for c in state.tool_calls if c.status not in (ToolCallStatus.ok, ToolCallStatus.cached)]
        useful = state.evidence or any(o.text.strip() for o in state.observations)
        if not useful:
            why = "; ".join(f"{c.tool}: {c.error}" for c in failed) or "no observation and no tool evidence"
            return self._decision(step, Action.STOP, "No usable evidence was gathered.", stop_reason=why), None
        have = sorted({c.tool for c in state.successful_calls()})
        return self._decision(
            step, Action.ANSWER,
            f"Evidence for {a.primary} is on record from {', '.join(have) or 'the front end'}"
            + (f"; failed calls: {', '.join(c.tool for c in failed)}" if failed else "")
            + ". No further tool is expected to add evidence.",
        ), None

    @staticmethod
    def _arguments(tool: str, a: QuestionAnalysis) -> dict:
        """Default arguments, except where the intent needs a specific model: language identification
        needs multilingual Whisper (tiny.en always says English)."""
        args: dict = {"artifact": "a0"}
        if tool == "asr" and a.fit("language") >= 0.5:
            args["model"] = "base"
        return args

    def _windowed(self, tool: str) -> bool:
        if tool not in self.registry or not self.registry.availability(tool)[0]:
            return False
        fields = self.registry.get(tool).args_model.model_fields
        return "start_s" in fields and "end_s" in fields

    def _span_step(self, state: EvidenceState) -> PlannerDecision | None:
        """A question that names a stretch of the recording by its time ('what is said around minute 37'): the
        question's tools that take a window (else asr and tagging) run once on that stretch of a0, so its
        evidence comes from there and their coverage in the trace names it."""
        span = absolute_span(state.question.text, state.original.duration_s)
        if span is None:
            return None
        a = self.analysis(state)
        tools = [t for t in a.tools if self._windowed(t)] or [t for t in SPAN_FALLBACK_TOOLS if self._windowed(t)]
        done = {c.tool for c in state.tool_calls
                if (c.arguments or c.requested_arguments).get("artifact", "a0") == "a0"
                and (c.arguments or c.requested_arguments).get("start_s") == span[0]
                and (c.arguments or c.requested_arguments).get("end_s") == span[1]}
        todo = [t for t in tools if t not in done]
        if not todo:
            return None
        calls = [ToolCallRequest(tool=t, arguments={**self._arguments(t, a), "start_s": span[0], "end_s": span[1]},
                                 reason=f"the question names {span[0]:.0f}-{span[1]:.0f} s") for t in todo]
        return self._decision(
            state.step, Action.CALL_TOOLS,
            f"The question names a stretch of the recording ({span[0]:.1f}-{span[1]:.1f} s); "
            f"{', '.join(todo)} analyse that stretch itself.",
            tool_calls=calls,
        )

    def _relisten_step(self, state: EvidenceState) -> PlannerDecision | None:
        """Crop to the explicit span the question names ('in the first 3 seconds', 'at the end of the
        clip'), then re-listen to the crop (once). An ordinal that names an item ('the first note') is no span."""
        span = self.analysis(state).time_span
        if span is None or "crop" not in self.registry or not self.registry.availability("crop")[0]:
            return None
        crops = [c for c in state.successful_calls("crop") if c.derived_artifact_ids]
        relistened = {aid for o in state.observations if o.kind == "relisten" for aid in o.artifact_ids}
        if not crops:
            dur = state.original.duration_s
            length = span.length_s or min(5.0, dur / 3)
            start, end = (0.0, min(dur, length)) if span.start_s == 0.0 else (max(0.0, dur - length), dur)
            if end - start >= dur * 0.95:
                return None
            return self._decision(
                state.step, Action.CALL_TOOLS,
                f"The question points at the {span.where} of the clip; a crop ({start:.1f}-{end:.1f} s) lets the "
                "front end listen to that part alone.",
                tool_calls=[ToolCallRequest(tool="crop", arguments={"artifact": "a0", "start_s": start, "end_s": end})],
            )
        target = crops[-1].derived_artifact_ids[0]
        if target in relistened:
            return None
        return self._decision(
            state.step, Action.RELISTEN, f"Re-listen to the crop {target} that isolates the {span.where} of the clip.",
            relisten=RelistenRequest(
                artifact_ids=[target], prompt=f"Describe what happens in this excerpt ({span.where} of the clip)."
            ),
        )

    def _doubt_step(self, state: EvidenceState) -> PlannerDecision | None:
        """Doubt drives the loop: when the answer the evidence gives so far is a guess or below DOUBT_BELOW,
        and it rests on what was said, a stronger recogniser (Whisper base, a wider beam) reads the stretch
        that holds the recognised words, once. The trace says why (the provisional decision's reason)."""
        if "asr" not in self.registry or not self.registry.availability("asr")[0] or not state.question.choices:
            return None
        if any((c.arguments or c.requested_arguments).get("model") == "base"
               and (c.arguments or c.requested_arguments).get("beam_size", 5) >= DOUBT_BEAM
               for c in state.tool_calls if c.tool == "asr"):
            return None  # read once already
        from audiomind.reasoning.answer import decide
        from audiomind.reasoning.facts import read_facts

        a = self.analysis(state)
        facts = read_facts(state)
        t = facts.transcript
        if t is None or not t.words or facts.speech is None:
            return None
        if a.frame is not None and (a.frame.blocking_step or a.frame.unaccounted):
            return None  # the doubt is in the reading of the question, which no re-hearing mends
        d = decide(state, a, facts)
        if d.choice_index is None or (d.method != "guess" and d.confidence >= DOUBT_BELOW):
            return None
        about_speech = ((a.frame is not None and a.frame.about_speech) or a.fit("speech_content") >= 0.3
                        or any(r.name == "transcript_match" for r in d.verifiers))
        if not about_speech:
            return None  # the answer does not rest on what was said
        dur = state.original.duration_s or facts.duration_s
        start = max(0.0, min(w.start_s for w in t.words) - 1.0)
        end = min(dur, max(w.end_s for w in t.words) + 1.0) if dur else max(w.end_s for w in t.words) + 1.0
        if end - start > DOUBT_MAX_STRETCH_S:
            return None
        if not self._reading_could_matter(state, a, facts, d, start, end):
            return None  # no second reading could change the choice or its confidence band: not worth its time
        call = ToolCallRequest(
            tool="asr", arguments={"artifact": "a0", "model": "base", "beam_size": DOUBT_BEAM,
                                   "start_s": round(start, 2), "end_s": round(end, 2)},
            reason=f"doubt: {d.confidence_reason} (confidence {d.confidence:.2f}); a second reading of the speech "
                   f"stretch {start:.1f}-{end:.1f} s by a stronger recogniser")
        return self._decision(
            state.step, Action.CALL_TOOLS,
            f"The evidence so far gives {state.question.choices[d.choice_index]!r} only as "
            f"{'a guess' if d.method == 'guess' else f'a low-confidence answer ({d.confidence:.2f})'}: "
            f"{d.confidence_reason}. Whisper base with beam {DOUBT_BEAM} re-reads the words at "
            f"{start:.1f}-{end:.1f} s; two readings that agree are evidence, one alone is not.",
            tool_calls=[call])

    @staticmethod
    def _reading_could_matter(state: EvidenceState, a: QuestionAnalysis, facts, d, start: float, end: float) -> bool:
        """Whether some outcome of the second reading would change the chosen choice or its confidence band
        (confidence_band): the answer is decided again with each outcome added as a reading of the stretch. The
        outcomes: the stronger recogniser hears a choice's words (the reading that favours that choice the most: a
        choice's recall is the best over the readings), or the same words as the first (two readings that agree).
        A question whose answer no reading moves (a count of voices; speech that already decides it) skips the
        second Whisper pass (2 s of a 2-core machine's time for a 7-s clip; the trials cost 0.1-0.3 s)."""
        from audiomind.reasoning.answer import decide_from
        from audiomind.reasoning.facts import TranscriptReading

        t = facts.transcript
        assert t is not None
        outcomes = [*state.question.choices, t.text]
        band = confidence_band(d.confidence)
        for text in dict.fromkeys(o for o in outcomes if o.strip()):
            reading = TranscriptReading(text=text, model="base", start_s=round(start, 2), end_s=round(end, 2))
            trial = facts.model_copy(deep=True)
            assert trial.transcript is not None
            trial.transcript.readings.append(reading)
            other = decide_from(trial, a)
            if other.choice_index != d.choice_index or confidence_band(other.confidence) != band:
                return True
        return False

    def _decision(self, step: int, action: Action, rationale: str, **kw) -> PlannerDecision:
        return PlannerDecision(step=step, action=action, rationale=rationale, planner=self.name, **kw)

    def summarize(self, state: EvidenceState) -> tuple[str, ModelCall | None]:
        return neutral_summary(state), None


def neutral_summary(state: EvidenceState) -> str:
    """Evidence by source, contradictions kept, no verdict: a deterministic rendering of the state. Every
    observation whole (description, focus, provisional answer, open needs, uncertainty), every tool claim,
    and the measurements derived from the tool outputs (the cascade's Facts.measured_lines)."""
    lines = [f"Question: {state.question.text}", "", "Front-end observations:"]
    for o in state.observations:
        if not o.artifact_ids:  # a rejected re-listen heard nothing
            continue
        body = o.description or o.text
        lines.append(f"- [{o.id}] {o.kind} by {o.frontend} on {', '.join(o.artifact_ids)}: {body.strip()}")
        if o.focus:
            lines.append(f"  focus: {o.focus}")
        if o.provisional_answer:
            lines.append(f"  provisional answer: {o.provisional_answer}")
        if o.open_needs:
            lines.append("  open needs: " + "; ".join(o.open_needs))
        if o.uncertainty:
            lines.append(f"  uncertainty: {o.uncertainty}")
    lines += ["", "Tool evidence (claim — source, boundary category):"]
    for e in state.evidence:
        lines.append(f"- [{e.id}] {e.claim} — {e.tool or e.source_type} ({e.category.value if e.category else 'n/a'})")
    measured = _measured_lines(state)
    if measured:
        lines += ["", f"Derived measurements on {state.original.id} (computed from the tool outputs above):"]
        lines += [f"- {m}" for m in measured]
    problems = [c for c in state.tool_calls if c.status.value in ("rejected", "error", "timeout")]
    if problems:
        lines += ["", "Calls that produced no evidence:"]
        lines += [f"- {c.tool} ({c.status.value}): {c.error}" for c in problems]
    contradictions = _numeric_contradictions(state)
    if contradictions:
        lines += ["", "Contradictions (kept, not resolved):"] + [f"- {c}" for c in contradictions]
    return "\n".join(lines)


def _measured_lines(state: EvidenceState) -> list[str]:
    from audiomind.reasoning.facts import read_facts

    if not state.artifacts or not state.tool_calls:
        return []
    return read_facts(state).measured_lines()


def _numeric_contradictions(state: EvidenceState) -> list[str]:
    """A front end's provisional count against the counts the tools measured (kept, not resolved)."""
    from audiomind.language.analysis import parse_number
    from audiomind.reasoning.facts import read_facts

    facts = read_facts(state)
    counts = {}
    if facts.events is not None:
        counts["count_events"] = facts.events.count
    if facts.speakers is not None:
        counts["speaker_count"] = facts.speakers.count
    out = []
    for o in state.observations:
        n = parse_number(o.provisional_answer) if o.provisional_answer else None
        for tool, value in counts.items():
            if n is not None and n != value:
                out.append(f"{o.id} suggests {n}, while {tool} counted {value}")
    return out
