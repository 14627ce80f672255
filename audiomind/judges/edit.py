"""Audio-edit evaluation (seed 000): difference/commonality reasoning in seven steps.

Inputs: the original audio, its description, the edit instruction and/or the target description, and the
edited audio. Output E = {overall quality, editing effectiveness, preservation}: a verdict and a score for
each, the seed's Edit_score and Faith_score, a synthesis with suggestions, and every step on the record.

What changed is measured, not guessed from the two clips as wholes: `audiomind.judges.align` lines the
clips up (an offset per stretch, so an insertion or a cut moves the rest) and finds the stretches that were
added, removed or replaced, in place or by insertion and cut. What is new (edited minus the aligned
original) and what is gone are written as derived artifacts, and each changed stretch is heard by the tools
that can see it: YAMNet tags over a window that starts at the stretch's onset (on the difference signal and
on the clip), voice activity, and words where it is speech. All facts are read through the one reader layer
(`audiomind.reasoning.facts`).

The seven steps (the seed's chain of thought):
1-2. difference and commonality captions of the (original, edited) pair, from the front end with both
     clips in one request; offline, from the measured changes ("The edited audio adds a bell ringing after
     the announcement (at 4.98 s)"; an instructed sound the tags neither confirm nor contradict is
     "possibly" that sound) and from what the edited clip keeps of the original (its words, its sounds).
3-4. expected difference and commonality from the instruction (add: commonality = original caption;
     delete: the edited caption; replace: their intersection; free-form: the LLM, or the rule parser),
     restated as the "reference reminder" before any comparison.
5.   editing effectiveness: each instructed change looked for among the measured ones (identity from the
     evidence that can see it, the instructed place, a removed sound no longer heard).
6.   preservation: the original outside the instructed change kept sample for sample, no change the
     instruction did not ask for, the speech and the level kept.
7.   synthesis with suggestions; overall quality from measurable signals (clipping, level, loudness, DNSMOS
     when the `speech_quality` tool is installed).
Edit_score and Faith_score follow Eqs. 2-3 of the seed exactly (weights below) from caption metrics of the
predicted vs the expected captions; metrics that cannot run here are replaced by declared substitutes, and
each score lists the substitutes it depends on. Clips the alignment cannot line up (a regenerated edit) are
compared as wholes (tags, transcripts, level), and the result says so.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from audiomind.judges import evidence as ev
from audiomind.judges.align import SR, Alignment, Change, align
from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.judges.caption_metrics import CaptionScores, score_captions
from audiomind.judges.instruction import Position, read_edit_for_judge, read_instruction, split_position
from audiomind.judges.pairs import (
    background_captions,
    commonality_caption,
    difference_caption,
    join_caption,
    split_caption,
)
from audiomind.language import phrases
from audiomind.reasoning.facts import Facts, TagWindow
from audiomind.state import ModelSpec, Observation, ToolCallRequest

# Eq. 2 and Eq. 3 of the seed, with its weights (in proportion to each metric's LCC).
WEIGHTS = {"w_f": 0.48, "w_s": 0.52, "v_sp": 0.46, "v_me": 0.54, "u_sp": 0.48, "u_rl": 0.52, "z_sp": 0.53,
           "z_me": 0.47, "eps": 1e-6, "lambda_edit": 0.5, "lambda_faith": 0.5}
EDIT_SCORE_METRICS = {"difference": ["fense", "spider"], "commonality": ["spice", "meteor"]}
FAITH_SCORE_METRICS = {"commonality": ["spice", "rouge_l"], "difference": ["meteor", "rouge_l"]}


def _sigmoid_log(x: float) -> float:
    """sigmoid(log(x)) = x / (1 + x), for x > 0."""
    x = max(x, 1e-12)
    return 1.0 / (1.0 + math.exp(-math.log(x)))


def edit_score(d: CaptionScores, c: CaptionScores, w: dict[str, float] = WEIGHTS) -> float:
    """Eq. 2: sigmoid(log(w_f D_Fense + w_s D_Spider + eps exp(-lambda_edit (v_sp C_Spice + v_me C_Meteor))))."""
    x = (w["w_f"] * d.fense + w["w_s"] * d.spider
         + w["eps"] * math.exp(-w["lambda_edit"] * (w["v_sp"] * c.spice + w["v_me"] * c.meteor)))
    return _sigmoid_log(x)


def faith_score(d: CaptionScores, c: CaptionScores, w: dict[str, float] = WEIGHTS) -> float:
    """Eq. 3 as printed, sign included: -sigmoid(log(u_sp C_Spice + u_rl C_RougeL + eps exp(-lambda_faith
    (z_sp D_Meteor + z_me D_RougeL)))). Its range is (-1, 0) and it FALLS as the commonality captions agree
    more; `faith_agreement` = -faith_score is the same quantity with the sign that rises with preservation."""
    x = (w["u_sp"] * c.spice + w["u_rl"] * c.rouge_l
         + w["eps"] * math.exp(-w["lambda_faith"] * (w["z_sp"] * d.meteor + w["z_me"] * d.rouge_l)))
    return -_sigmoid_log(x)


# ---------------------------------------------------------------- result types


class AspectVerdict(BaseModel):
    label: str
    score: float = Field(ge=0.0, le=1.0)
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


class EditExpectation(BaseModel):
    """Steps 3-4: what the edit should change and keep."""

    operation: Literal["add", "delete", "replace", "free-form"]
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    expected_difference: str
    expected_commonality: str
    source: str = Field(description="rules, llm, or descriptions (original vs target)")
    notes: list[str] = Field(default_factory=list)
    unread: str | None = Field(default=None, description="words of the instruction the reading did not account "
                               "for, when they may hold an operation: effectiveness is then unverifiable (0.5)")


class EditJudgeResult(BaseModel):
    """E = {overall quality, editing effectiveness, preservation}, with the seed's scores and every step."""

    judge: Literal["edit"] = "edit"
    original: str
    edited: str
    original_description: str | None = None
    instruction: str | None = None
    target_description: str | None = None
    expectation: EditExpectation
    predicted_difference: str
    predicted_commonality: str
    captions_from: str
    difference_metrics: CaptionScores
    commonality_metrics: CaptionScores
    edit_score: float
    faith_score: float = Field(description="Eq. 3 exactly as printed (negative; lower = more agreement)")
    faith_agreement: float = Field(description="-faith_score: rises with commonality agreement")
    weights: dict[str, float] = Field(default_factory=lambda: dict(WEIGHTS))
    effectiveness: AspectVerdict
    preservation: AspectVerdict
    quality: AspectVerdict
    synthesis: str
    suggestions: list[str] = Field(default_factory=list)
    verdict: str
    steps: list[JudgeStep]
    substitutes: dict[str, str] = Field(default_factory=dict)
    affected_scores: dict[str, list[str]] = Field(
        default_factory=dict, description="score -> the substituted metrics it depends on")
    models: JudgeModels
    alignment: Alignment | None = None
    changes: list[dict[str, Any]] = Field(default_factory=list, description="what changed, where, as heard")
    unverifiable: list[str] = Field(default_factory=list,
                                    description="what the tools could not tell (e.g. an added sound's class)")
    p: float | None = Field(default=None, description="the verdict's probability that the edit does what was asked: "
                            "effectiveness.score through the edit judge's calibration table (0.5 when unverifiable)")
    calibration: str = Field(default="", description="the table (NAME@SHA12) and the raw score p came from")
    trace_path: str | None = None


# ---------------------------------------------------------------- step 3-4: expectations


def parse_instruction(instruction: str) -> tuple[str, list[str], list[str]] | None:
    """(operation, added, removed) from an edit instruction as a user writes it, or None when it is free-form
    (see `audiomind.judges.instruction`)."""
    return read_instruction(instruction)


def diff_descriptions(original: str, target: str, threshold: float = 0.75) -> tuple[str, list[str], list[str]]:
    """(operation, added, removed) from an original and a target description, clause by clause (MiniLM)."""
    from audiomind.embedded import text

    a, b = split_caption(original), split_caption(target)
    if not a or not b:
        return "free-form", [], []
    sim = text.similarity(a, b)
    added = [b[j] for j in range(len(b)) if sim[:, j].max() < threshold]
    removed = [a[i] for i in range(len(a)) if sim[i, :].max() < threshold]
    op = "replace" if added and removed else "add" if added else "delete" if removed else "free-form"
    return op, added, removed


def _remove_clauses(caption: str, phrases: list[str]) -> str:
    from audiomind.embedded import text

    clauses = split_caption(caption)
    if not clauses or not phrases:
        return caption
    sim = text.similarity(clauses, phrases)
    return join_caption([c for i, c in enumerate(clauses) if sim[i].max() < 0.6])


class _ExpectedOut(BaseModel):
    operation: str = "other"
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    expected_difference: str = ""
    expected_commonality: str = ""


def expectations(instruction: str | None, original_description: str | None, target_description: str | None,
                 original_caption: str, llm: Any = None, session: JudgeSession | None = None) -> EditExpectation:
    """Steps 3-4 by the seed's rules; the LLM only where the instruction is free-form."""
    notes = []
    orig_desc = original_description or original_caption
    if not original_description:
        notes.append(f"no original description given: the front end's caption of the original is used "
                     f"('{original_caption}')")
    parsed = parse_instruction(instruction) if instruction else None
    source = "rules"
    unread = None
    if instruction and parsed is not None:  # a partial reading: operations read beside words that may hold more
        spec, why = read_edit_for_judge(instruction)
        if why and spec.operations:
            unread = why
            notes.append(f"effectiveness is unverifiable: {why}")
    if parsed is None and original_description and target_description:
        op, added, removed = diff_descriptions(original_description, target_description)
        parsed, source = ((op, added, removed), "descriptions") if op != "free-form" else (None, source)
    if parsed is None and llm is not None and (instruction or target_description):
        from audiomind.prompts import load_prompt

        prompt = load_prompt("judge_edit_expected").render(
            original_description=orig_desc, instruction=instruction or "(none)",
            target_description=target_description or "(none)")
        out, call, problem = llm.json("edit_expected", prompt, _ExpectedOut)
        if session is not None:
            session.add_model_call(call)
        if out is not None and out.expected_difference:
            op = out.operation.strip().lower()
            op = {"addition": "add", "deletion": "delete", "remove": "delete", "replacement": "replace"}.get(op, op)
            if op not in ("add", "delete", "replace"):
                op = "free-form"
            return EditExpectation(operation=op, added=out.added, removed=out.removed,  # type: ignore[arg-type]
                                   expected_difference=out.expected_difference,
                                   expected_commonality=out.expected_commonality or orig_desc,
                                   source="llm", notes=notes)
        notes.append(f"LLM expectation unusable ({problem}); rule fallback")
    if parsed is None:
        what = instruction or target_description or "(no instruction)"
        notes.append("the instruction is free-form and no LLM is configured: the expected difference is the "
                     "instruction itself, the expected commonality the original description")
        return EditExpectation(operation="free-form", expected_difference=f"The edited audio: {what}",
                               expected_commonality=orig_desc, source="rules", notes=notes)
    op, added, removed = parsed
    if op == "add":
        edited_desc = target_description or join_caption([orig_desc, *added])
    elif op == "delete":
        edited_desc = target_description or _remove_clauses(orig_desc, removed)
    else:
        edited_desc = target_description or join_caption([_remove_clauses(orig_desc, removed), *added])
    common = commonality_caption(op, orig_desc, edited_desc)
    if op == "replace" and not common:
        common = _remove_clauses(orig_desc, removed) or orig_desc
        notes.append("the two descriptions share no clause verbatim: the original description without the "
                     "replaced sound is the expected commonality")
    return EditExpectation(operation=op, added=added, removed=removed, unread=unread,  # type: ignore[arg-type]
                           expected_difference=difference_caption(op, added, removed),
                           expected_commonality=common, source=source, notes=notes)


# ---------------------------------------------------------------- steps 1-2 from tool evidence


# ---------------------------------------------------------------- where an edit should happen


# whether a place refers to speech ('after the man stops talking') is the reader's: `phrases.refers_to_speech`


# ---------------------------------------------------------------- what changed, with its evidence


class SideEvidence(BaseModel):
    """One side of a change (what is new, on the edited timeline; what is gone, on the original's) and what
    the tools heard in it: tags over a window that starts at its onset (on the difference signal, which holds
    that side alone, and on the clip itself), voice activity, and words where there is speech."""

    start_s: float
    end_s: float
    windows: list[str] = Field(default_factory=list, description="artifact:start-end of the tagged windows")
    heard: list[tuple[str, float]] = Field(default_factory=list)
    speech_share: float = 0.0
    words: str = ""


class ChangeEvidence(BaseModel):
    change: Change
    orig_energy: float = Field(0.0, description="energy of the original over the changed stretch")
    continues: str = Field("", description="where the gone sound goes on in what the edited clip kept (a partial "
                                           "removal), else ''")
    new: SideEvidence | None = None
    gone: SideEvidence | None = None
    matched: list[str] = Field(default_factory=list, description="the instructed phrases it carries out")
    description: str = ""


class PairEvidence(BaseModel):
    """Everything steps 1-2 and 5-6 read about the pair."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    alignment: Alignment
    changes: list[ChangeEvidence] = Field(default_factory=list)
    added_id: str | None = None
    removed_id: str | None = None
    kept_orig: list[tuple[float, float]] = Field(default_factory=list, description="original spans kept (s)")
    kept_edit: list[tuple[float, float]] = Field(default_factory=list, description="edited spans that are kept (s)")
    energy: dict[str, float] = Field(default_factory=dict)


CHANGE_TAIL_S = 0.1


def change_window(start: float, end: float, duration_s: float) -> tuple[float, float]:
    """The tagging window of a changed stretch: from its onset (`ev.onset_window`), but never reaching more
    than CHANGE_TAIL_S past its end. A short changed sound (a 0.3 s chime) is tagged alone (the tagger pads the
    window with silence) instead of with the speech that follows it filling the rest of a 0.96 s patch."""
    a, b = ev.onset_window(start, end, duration_s)
    if a >= start - 0.05:  # (a sound at the very end keeps the window that reaches back)
        b = min(b, max(end + CHANGE_TAIL_S, a + 0.05))
    return a, round(b, 3)


def _windows_of(f: Facts, start: float, end: float) -> TagWindow | None:
    return f.tags.window(*change_window(start, end, f.duration_s)) if f.tags is not None else None


def analyse_pair(session: JudgeSession, fo: Facts, fe: Facts) -> tuple[PairEvidence, dict[str, Facts]]:
    """Align the clips, write what was added and what was removed as derived artifacts (with provenance), and
    let the tools hear each changed stretch: VAD over the difference signals, tags over onset-aligned windows
    (difference signal and clip), ASR where a stretch is speech. Returns the evidence and the facts read."""
    import numpy as np

    from audiomind import audio as aio
    from audiomind.artifacts import make_artifact, next_artifact_id

    a0, a1 = session.state.artifact("a0"), session.state.artifact("a1")
    y0 = aio.load(a0.path, sr=SR, mono=True).astype(np.float64)
    y1 = aio.load(a1.path, sr=SR, mono=True).astype(np.float64)
    al, added, removed = align(y0, y1)
    pe = PairEvidence(alignment=al)
    pe.kept_edit = [(a, b) for a, b, _ in al.pieces]
    pe.kept_orig = [(round(a - off, 3), round(b - off, 3)) for a, b, off in al.pieces]
    pe.energy = {"original": float(np.sum(y0 ** 2)), "edited": float(np.sum(y1 ** 2))}
    facts: dict[str, Facts] = {}
    if not al.aligned or al.identical or not al.changes:
        return pe, facts
    out_dir = Path(session.state.run.artifact_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = {}
    need_new = any(c.kind in ("added", "replaced") for c in al.changes)
    need_gone = any(c.kind in ("removed", "replaced") for c in al.changes)
    for name, sig, parent, other, need in (("added", added, "a1", "a0", need_new), ("removed", removed, "a0", "a1", need_gone)):
        if not need:
            continue
        path = out_dir / f"residual_{name}_{parent}.wav"
        aio.write_wav(path, np.clip(sig, -1, 1).astype(np.float32), SR)
        art = make_artifact(next_artifact_id(session.state.artifacts), path, derived_from=parent, operation="residual",
                            parameters={"what": f"{name} material ({parent} minus the aligned {other})",
                                        "offsets_s": al.offsets_s, "sample_rate": SR})
        session.state.artifacts.append(art)
        ids[name] = art.id
    pe.added_id, pe.removed_id = ids.get("added"), ids.get("removed")
    session.note(f"What changed: {al.why}" + "".join(f"; {c.kind} {c.start_s:.2f}-{c.end_s:.2f} s ({c.how})"
                                                       for c in al.changes[:8]),
                 data={"alignment": al.model_dump(), "artifacts": ids})
    # voice activity over the difference signals; tags over onset-aligned windows of each side
    reqs = [ToolCallRequest(tool="vad", arguments={"artifact": aid}, reason=f"is the {name} material speech?")
            for name, aid in ids.items() if session.tool_available("vad")]
    if reqs:
        session.run_tools(reqs, "what changed: voice activity in the added and removed material")
    spans_new = [(c.start_s, c.end_s) for c in al.changes if c.kind in ("added", "replaced") and c.end_s > c.start_s]
    spans_gone = [(c.orig_start_s, c.orig_end_s) for c in al.changes if c.kind in ("removed", "replaced")
                  and c.orig_start_s is not None and c.orig_end_s is not None]
    for aid, spans, dur in ((ids.get("added"), spans_new, fe.duration_s), ("a1", spans_new, fe.duration_s),
                            (ids.get("removed"), spans_gone, fo.duration_s), ("a0", spans_gone, fo.duration_s)):
        if aid and spans:
            ev.tag_windows(session, aid, [change_window(a, b, dur) for a, b in spans],
                           f"what changed: tags over windows that start where each changed stretch starts ({aid})")
    for aid in set(ids.values()) | {"a0", "a1"}:
        facts[aid] = ev.read(session, aid)
    # words where a changed stretch is speech
    asr = []
    for c in al.changes:
        for name, (a, b) in (("added", (c.start_s, c.end_s)), ("removed", (c.orig_start_s, c.orig_end_s))):
            aid = ids.get(name)
            if aid is None or a is None or b is None or b - a < 0.2:
                continue
            if (name == "added" and c.kind == "removed") or (name == "removed" and c.kind == "added"):
                continue
            if ev.speech_share(facts[aid], a, b) >= 0.5 and session.tool_available("asr"):
                asr.append(ToolCallRequest(tool="asr", arguments={"artifact": aid, "start_s": round(a, 3),
                                                                  "end_s": round(b, 3)},
                                           reason=f"the {name} material at {a:.2f}-{b:.2f} s is speech: its words"))
    if asr:
        session.run_tools(asr, "what changed: the words of changed speech")
    for c in al.changes:
        ce = ChangeEvidence(change=c)
        if c.orig_start_s is not None and c.orig_end_s is not None:
            ce.orig_energy = float(np.sum(y0[int(c.orig_start_s * SR):int(c.orig_end_s * SR)] ** 2))
            ce.continues = _continues(y0, removed, c, pe.kept_orig, fo)
        rep = c.kind == "replaced"
        if c.kind in ("added", "replaced") and c.end_s > c.start_s:
            ce.new = _side(session, facts, ids.get("added"), "a1", c.start_s, c.end_s, replaced=rep)
        if c.kind in ("removed", "replaced") and c.orig_start_s is not None and c.orig_end_s is not None:
            ce.gone = _side(session, facts, ids.get("removed"), "a0", c.orig_start_s, c.orig_end_s, replaced=rep)
        pe.changes.append(ce)
    return pe, facts


ADJACENT_S = 0.15
ADJACENT_DBFS = -45.0
ADJACENT_COS = 0.8


def _spectrum(y: Any) -> Any:
    import numpy as np

    n = 512
    if len(y) < n:
        y = np.pad(y, (0, n - len(y)))
    frames = [np.abs(np.fft.rfft(np.hanning(n) * y[i:i + n])) for i in range(0, len(y) - n + 1, 160)]
    return np.mean(frames, axis=0)


def _continues(y0: Any, removed: Any, c: Change, kept: list[tuple[float, float]], fo: Facts) -> str:
    """Kept original material right next to a gone stretch (within ADJACENT_S, louder than ADJACENT_DBFS, not
    speech) that sounds like the gone material's own edge there (cosine of their mean magnitude spectra >=
    ADJACENT_COS): the removed sound was cut short, not removed."""
    import numpy as np

    out = []
    edges = ((c.orig_start_s - ADJACENT_S, c.orig_start_s, (c.orig_start_s, c.orig_start_s + ADJACENT_S)),
             (c.orig_end_s, c.orig_end_s + ADJACENT_S, (c.orig_end_s - ADJACENT_S, c.orig_end_s)))
    for a, b, (ga, gb) in edges:
        for ka, kb in kept:
            x0, x1 = max(a, ka), min(b, kb)
            if x1 - x0 < 0.03:
                continue
            seg = y0[int(x0 * SR):int(x1 * SR)]
            rms = 10 * np.log10(float(np.mean(seg ** 2)) + 1e-20)
            if rms < ADJACENT_DBFS or ev.speech_share(fo, x0, x1) >= 0.5:
                continue
            gone = removed[int(max(0.0, ga) * SR):int(gb * SR)]
            if len(gone) < 160:
                continue
            sa, sb = _spectrum(seg), _spectrum(gone)
            cos = float(sa @ sb / (np.linalg.norm(sa) * np.linalg.norm(sb) + 1e-20))
            if cos >= ADJACENT_COS:
                out.append(f"{x0:.2f}-{x1:.2f} s at {rms:.0f} dBFS, spectrum cosine {cos:.2f} with the removed edge")
    return "; ".join(out)


def _side(session: JudgeSession, facts: dict[str, Facts], diff_id: str | None, clip_id: str, a: float,
          b: float, replaced: bool = False) -> SideEvidence:
    """One side of a change as heard. A replaced stretch's difference signal holds the new sound minus the old
    one (both at once), so what it is, is heard from the clip itself there."""
    side = SideEvidence(start_s=round(a, 3), end_s=round(b, 3))
    best: TagWindow | None = None
    for aid in ((clip_id, diff_id) if replaced else (diff_id, clip_id)):
        if aid is None or aid not in facts:
            continue
        w = _windows_of(facts[aid], a, b)
        if w is not None:
            side.windows.append(f"{aid}:{w.start_s:.2f}-{w.end_s:.2f}")
            best = best or w
    side.heard = ev.heard_labels(best, n=6)
    if diff_id is not None and diff_id in facts:
        side.speech_share = round(ev.speech_share(facts[diff_id], a, b), 3)
        rec = ev.record(session)
        calls = [c for c in rec.successful_calls("asr") if (c.arguments or {}).get("artifact") == diff_id
                 and abs(float((c.arguments or {}).get("start_s") or 0) - round(a, 3)) < 1e-3]
        if calls:
            from audiomind.tools.asr import AsrOutput
            from audiomind.tools.base import typed_output

            side.words = (typed_output(calls[-1].output, AsrOutput).text or "").strip()
    return side


def identity(phrase: str, side: SideEvidence | None, facts: dict[str, Facts], diff_id: str | None,
             clip_id: str, other: tuple[str, float, float] | None = None) -> ev.Identity:
    """The phrase against one side of a change: the better of its difference-signal window and its clip window.
    For a replaced stretch (`other`: the other clip and its span there) only the clip window is read (the
    difference signal there is the new sound minus the old one), and speech the other clip has over the same
    stretch is kept material, no evidence against the phrase."""
    if side is None:
        return ev.Identity(phrase=phrase, p=0.0, verdict="contradicted", why="nothing there")
    out: ev.Identity | None = None
    for aid in ((clip_id,) if other is not None else (diff_id, clip_id)):
        if aid is None or aid not in facts:
            continue
        w = _windows_of(facts[aid], side.start_s, side.end_s)
        share = side.speech_share if aid == diff_id else ev.speech_share(facts[aid], side.start_s, side.end_s)
        if other is not None and other[0] in facts:
            share = max(0.0, share - ev.speech_share(facts[other[0]], other[1], other[2]))
        idn = ev.identify(phrase, w, speech_share=share, transcript=side.words)
        if out is None or idn.p > out.p:
            out = idn
    return out or ev.identify(phrase, None, speech_share=side.speech_share, transcript=side.words)


# ---------------------------------------------------------------- steps 1-2 from the evidence


def _describe(side: SideEvidence | None) -> str:
    """A caption phrase for what the tools heard in one side of a change (named by its own tags)."""
    if side is None:
        return "nothing"
    if side.speech_share >= 0.5:
        return f"speech saying '{ev._short(side.words, 8)}'" if side.words else "speech"
    amb = ev.source_ambiguous()
    present = [lab for lab, s in side.heard if s >= ev.PRESENT and lab not in amb and lab not in ev.SPEECH_LABELS]
    # the most specific class heard names it ('a cowbell', not 'a music' when both are present)
    specific = [lab for lab in present if lab not in ev.PARENT_LABELS] or present
    if specific:
        name = ev.describe_label(specific[0])
        return phrases.in_caption(name)  # ('applause', 'a cowbell': the mass nouns of data/phrases.toml)
    if side.heard:
        return f"a sound ({', '.join(ev.describe_label(lab) for lab, _ in side.heard[:2])})"
    return "a sound"


# an unconfirmed identity below this leans to 'no' (halfway from an open 0.5 to 'contradicted' at 0.3: what the
# tags name contradicts it clearly more than anything supports it): the caption then says what was heard
# rather than 'possibly <the instructed sound>'
LEANS_NO = 0.4


def _named(phrase: str, idn: ev.Identity, side: SideEvidence | None) -> str:
    """What a caption calls one side: the instructed phrase when the tools confirm it, 'possibly ...' when
    they neither confirm nor contradict it and lean to neither side, else what the tools heard."""
    phrase = phrases.caption_case(phrase)  # ('removes possibly the chiselling')
    if idn.verdict == "confirmed":
        return phrase
    if idn.verdict == "unconfirmed" and idn.p >= LEANS_NO:
        return f"possibly {phrase}"
    return _describe(side)


def _relation_text(c: Change, pe: PairEvidence, fe: Facts) -> str:
    """Where a new stretch sits relative to the rest, in words."""
    speech = [s for s in fe.speech_segments if not (s.start_s >= c.start_s - 0.05 and s.end_s <= c.end_s + 0.05)]
    if speech:
        if c.start_s >= max(s.end_s for s in speech) - 0.15:
            return "after the speech"
        if c.end_s <= min(s.start_s for s in speech) + 0.15:
            return "before the speech"
        if not any(min(c.end_s, s.end_s) - max(c.start_s, s.start_s) > 0.1 for s in speech):
            return "in a pause between two parts of the speech"  # inside the speech's span, over none of it
        return "during the speech"
    other = [p for p in pe.kept_edit if p[1] - p[0] > 0.05]
    if other and c.start_s >= max(b for _, b in other) - 0.15:
        return "at the end"
    if other and c.end_s <= min(a for a, _ in other) + 0.15:
        return "at the start"
    return ""


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def check_position(pos: Position | None, c: Change, pe: PairEvidence, fe: Facts) -> tuple[bool | None, str]:
    """(satisfied, how) for an instructed position; None when the instruction gives none or it cannot be
    checked."""
    if pos is None:
        return None, ""
    tol = 0.15
    other = [p for p in pe.kept_edit if p[1] - p[0] > 0.05 and not (p[0] >= c.start_s - 0.05 and p[1] <= c.end_s + 0.05)]
    if pos.relation == "background":
        # what it should lie under: kept material, inside its own span too, and the edited clip's speech when
        # the reference is a voice (a bed mixed under a whole voice leaves no stretch unchanged)
        under = [p for p in pe.kept_edit if p[1] - p[0] > 0.05]
        if not pos.reference or phrases.refers_to_speech(pos.reference) or ev.is_speech_phrase(pos.reference):
            under += [(s.start_s, s.end_s) for s in fe.speech_segments]
        inter = min(c.end_s - c.start_s, sum(max(0.0, min(b, c.end_s) - max(a, c.start_s)) for a, b in _merged(under)))
        ok = inter >= 0.5 * max(1e-3, c.end_s - c.start_s)
        return ok, f"under the rest for {inter:.2f} s of {c.end_s - c.start_s:.2f} s"
    if pos.relation in ("start", "end", "middle"):
        if not other:
            return None, "nothing else to place it against"
        first, last = min(a for a, _ in other), max(b for _, b in other)
        ok = {"start": c.start_s <= first + tol, "end": c.start_s >= last - tol,
              "middle": first < c.start_s and c.end_s < last}[pos.relation]
        return ok, f"at {c.start_s:.2f} s; the rest spans {first:.2f}-{last:.2f} s"
    ref = pos.reference or ""
    if phrases.refers_to_speech(ref) or ev.is_speech_phrase(ref):
        spans = [(s.start_s, s.end_s) for s in fe.speech_segments
                 if not (s.start_s >= c.start_s - 0.05 and s.end_s <= c.end_s + 0.05)]
        what = "the speech"
    else:
        labels = [lab for lab, _ in ev.phrase_labels(ref)] if ref else []
        spans = [s for s in ev.spans(fe, labels) if not (s[0] >= c.start_s - 0.05 and s[1] <= c.end_s + 0.05)]
        what = f"'{ref}'"
    if not spans:
        return None, f"{what} is not found to place it against"
    if pos.relation == "after":
        end = max(b for _, b in spans)
        return c.start_s >= end - tol, f"starts at {c.start_s:.2f} s; {what} ends at {end:.2f} s"
    start = min(a for a, _ in spans)
    return c.end_s <= start + tol, f"ends at {c.end_s:.2f} s; {what} starts at {start:.2f} s"


def check_removed_position(pos: Position | None, c: Change, fo: Facts) -> tuple[bool | None, str]:
    """(satisfied, how) for where an instruction says the removed sound was ('the pickaxe at the very start',
    'the cough after the speech'), on the original's timeline against the rest of its material (voice activity
    and sound events outside the removed stretch); None when it gives no place or cannot be checked."""
    if pos is None or pos.relation == "background" or c.orig_start_s is None or c.orig_end_s is None:
        return None, ""
    a, b, tol = c.orig_start_s, c.orig_end_s, 0.15

    def outside(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x, y) for x, y in spans if y - x > 0.05 and not (a - 0.05 <= (x + y) / 2 <= b + 0.05)]

    speech = outside([(s.start_s, s.end_s) for s in fo.speech_segments])
    if pos.relation in ("start", "end", "middle"):
        other = speech + outside([(e.start_s, e.end_s) for e in fo.nonspeech_events()])
        if not other:
            return None, "nothing else in the original to place it against"
        first, last = min(x for x, _ in other), max(y for _, y in other)
        ok = {"start": a <= first + tol, "end": b >= last - tol, "middle": first < a and b < last}[pos.relation]
        return ok, f"removed at {a:.2f}-{b:.2f} s; the rest of the original spans {first:.2f}-{last:.2f} s"
    ref = pos.reference or ""
    if phrases.refers_to_speech(ref) or ev.is_speech_phrase(ref):
        spans, what = speech, "the speech"
    else:
        labels = [lab for lab, _ in ev.phrase_labels(ref)] if ref else []
        spans, what = outside(ev.spans(fo, labels)), f"'{ref}'"
    if not spans:
        return None, f"{what} is not found in the original to place it against"
    if pos.relation == "after":
        end = max(y for _, y in spans)
        return a >= end - tol, f"removed from {a:.2f} s; {what} ends at {end:.2f} s in the original"
    start = min(x for x, _ in spans)
    return b <= start + tol, f"removed up to {b:.2f} s; {what} starts at {start:.2f} s in the original"


# ---------------------------------------------------------------- a level change asked for
#
# 'make it quieter', 'turn it up': no sound is added, removed or replaced, so the reader calls the instruction
# free-form, and the alignment finds the edited clip the original sample for sample at another gain ("nothing was
# changed"). What such an edit is checked against is the measured change of level: the direction asked for, by an
# audible amount. The cue words are the reader's (`phrases.requested_level`: the level cues of
# audiomind/language/data/phrases.toml).

LEVEL_AUDIBLE_LU = 1.0
"""A level change smaller than this is not a change (loudness measurement spread on the same material)."""
LEVEL_FULL_LU = 6.0
"""A level change of this size or more in the asked direction fully carries out 'quieter' / 'louder'."""


def requested_level(instruction: str | None) -> int | None:
    """-1 (quieter), +1 (louder) or None: the whole-clip level change an instruction asks for (the reader's)."""
    return phrases.requested_level(instruction)


def level_change(pe: PairEvidence, fo: Facts, fe: Facts) -> tuple[float | None, str]:
    """(the edited clip's level minus the original's, in LU, and how it was measured): integrated loudness
    (ITU-R BS.1770) of both clips, else the alignment's fitted gain (dB) where the clips align."""
    lo, le = _lufs(fo), _lufs(fe)
    if lo is not None and le is not None:
        return le - lo, f"integrated loudness {lo:.1f} -> {le:.1f} LUFS ({le - lo:+.1f} LU)"
    gain = getattr(pe.alignment, "gain_db", None)
    if pe.alignment.aligned and gain is not None:
        return float(gain), f"aligned sample for sample at {gain:+.1f} dB"
    return None, "no loudness measured on one of the clips"


def check_level(direction: int, pe: PairEvidence, fo: Facts, fe: Facts, phrase: str) -> dict[str, Any]:
    """One effectiveness check for a level change asked for: 0 when the level did not move audibly or moved the
    other way, else |change| / LEVEL_FULL_LU (capped at 1)."""
    delta, how = level_change(pe, fo, fe)
    want = "quieter" if direction < 0 else "louder"
    if delta is None:
        return {"phrase": phrase, "expected": f"level {want}", "score": 0.0, "evidence": how}
    moved = delta * direction
    score = 0.0 if moved < LEVEL_AUDIBLE_LU else _clamp(moved / LEVEL_FULL_LU)
    verdict = (f"{abs(delta):.1f} LU {want}" if moved >= LEVEL_AUDIBLE_LU else
               f"{abs(delta):.1f} LU the other way" if moved <= -LEVEL_AUDIBLE_LU else "no audible level change")
    return {"phrase": phrase, "expected": f"level {want}", "score": round(score, 3), "level_change_lu": round(delta, 2),
            "evidence": f"{verdict}: {how}"}


# ---------------------------------------------------------------- step 5: effectiveness


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def _at(c: Change, side: str) -> str:
    if side == "gone" and c.kind == "removed":
        return f"at {c.orig_start_s:.2f} s" if c.orig_start_s is not None else ""
    return f"at {c.start_s:.2f} s"


def check_effectiveness(exp: EditExpectation, pe: PairEvidence, facts: dict[str, Facts], fo: Facts, fe: Facts,
                        metric_fallback: float, level: int | None = None,
                        level_phrase: str = "") -> AspectVerdict:
    """Step 5: each instructed change is looked for among the measured changes: an addition among what is new
    (its identity from the tags of its own onset-aligned windows, or voice activity and words for speech; its
    place against the instructed position), a removal among what is gone (and the removed sound no longer
    heard in the edited clip), a replacement as both on one stretch. Score per instructed change:
    (0.4 + 0.6 p_identity), x 0.25 in the wrong place, x 0.5 when a removed sound is still heard in what was
    kept or goes on right next to the removed stretch (cut short), 0 when nothing matching changed; a
    replacement is the mean of its two halves. A level change asked for (`level`: -1 quieter, +1 louder, from
    `requested_level`) is one more check, against the measured change of loudness (`check_level`)."""
    checks: list[dict[str, Any]] = []
    unverifiable: list[str] = []
    al = pe.alignment
    dn, dg = pe.added_id, pe.removed_id
    if al.identical:
        for expected, phrases in (("added", exp.added), ("removed", exp.removed)):
            for ph in phrases:
                checks.append({"phrase": ph, "expected": expected, "score": 0.0,
                               "note": "the edited clip is identical to the original"})
    elif not al.aligned:
        for expected, phrases in (("added", exp.added), ("removed", exp.removed)):
            for ph in phrases:
                core, _ = split_position(ph)
                po, wo = ev.presence(core, fo)
                pn, wn = ev.presence(core, fe)
                s = (_clamp((pn - po) / 0.4) * (1.0 if pn >= ev.PRESENT else pn / ev.PRESENT) if expected == "added"
                     else _clamp((po - pn) / 0.4) if po >= ev.PRESENT else 0.5 * (1.0 if pn <= ev.ABSENT else 0.0))
                checks.append({"phrase": ph, "expected": expected, "score": round(s, 3), "before": round(po, 3),
                               "after": round(pn, 3), "evidence": f"whole clips (not alignable): before {wo}; after {wn}"})
    else:
        for expected, phrases in (("added", exp.added), ("removed", exp.removed)):
            for ph in phrases:
                core, pos = split_position(ph)
                side_name = "new" if expected == "added" else "gone"
                best: dict[str, Any] | None = None
                also: dict[int, float] = {}
                for k, ce in enumerate(pe.changes):
                    side = ce.new if side_name == "new" else ce.gone
                    if side is None:
                        continue
                    ch = ce.change
                    other = None
                    if ch.kind == "replaced" and ch.orig_start_s is not None and ch.orig_end_s is not None:
                        other = (("a0", ch.orig_start_s, ch.orig_end_s) if side_name == "new"
                                 else ("a1", ch.start_s, ch.end_s))
                    idn = identity(core, side, facts, dn if side_name == "new" else dg,
                                   "a1" if side_name == "new" else "a0", other=other)
                    also[k] = idn.p
                    ok, where = (check_position(pos, ce.change, pe, fe) if side_name == "new"
                                 else check_removed_position(pos, ce.change, fo))
                    s = (0.4 + 0.6 * idn.p) * (0.25 if ok is False else 1.0)
                    note = ""
                    if expected == "removed" and idn.verdict != "contradicted":
                        left = _still_heard(core, pe, fe)
                        if left:
                            s *= 0.5
                            note = f"still heard in the kept part of the edited clip ({left})"
                        elif ce.continues:
                            s *= 0.5
                            note = f"cut short, not removed: it goes on in what was kept ({ce.continues})"
                    cand = {"phrase": ph, "expected": expected, "score": round(s, 3), "change": k,
                            "at_s": ce.change.start_s if side_name == "new" else ce.change.orig_start_s,
                            "identity": idn.verdict, "p_identity": idn.p, "identity_evidence": idn.why,
                            "position": None if ok is None else ("as instructed" if ok else "not as instructed"),
                            "position_evidence": where, **({"note": note} if note else {})}
                    if best is None or cand["score"] > best["score"]:
                        best = cand
                if best is None:
                    best = {"phrase": ph, "expected": expected, "score": 0.0,
                            "note": f"nothing was {'added' if expected == 'added' else 'removed'}"}
                else:
                    pe.changes[best["change"]].matched.append(ph)
                    for k, p_id in also.items():  # more of the same sound (its further rings or beeps)
                        if k != best["change"] and p_id >= best["p_identity"] - 0.1 and p_id > 0.3:
                            pe.changes[k].matched.append(ph)
                    if best["identity"] == "unconfirmed":
                        unverifiable.append(f"what '{core}' is (the tags neither confirm nor contradict it)")
                checks.append(best)
    if level is not None:  # an identical-but-for-gain pair is exactly what 'make it quieter' should give
        checks.append(check_level(level, pe, fo, fe, level_phrase or ("quieter" if level < 0 else "louder")))
    parts = [c["score"] for c in checks]  # (a replacement: the mean of its two halves)
    if parts:
        score = sum(parts) / len(parts)
    else:
        score = 0.0 if al.identical else _clamp(metric_fallback)
        checks.append({"fallback": "difference caption similarity", "score": round(score, 3)})
    bits = []
    for c in checks:
        if "phrase" not in c:
            continue
        b = f"'{c['phrase']}' expected {c['expected']}: "
        if "identity" in c:
            b += (f"{c['identity']} {_at(pe.changes[c['change']].change, 'new' if c['expected'] == 'added' else 'gone')}"
                  f" ({c['identity_evidence']})")
            if c.get("position"):
                b += f", placed {c['position']} ({c['position_evidence']})"
        elif "evidence" in c:
            b += c["evidence"]
        if c.get("note"):
            b += f" ({c['note']})"
        bits.append(b + f" -> {c['score']:.2f}")
    how = "; ".join(bits) or ("no expected change could be checked against tool evidence; the score is the "
                              f"difference-caption similarity ({score:.2f})")
    if exp.unread:  # the judge abstains: what it measured is kept, the verdict is p = 0.5 and says why
        unverifiable.append(f"the instruction was read only in part ({exp.unread})")
        return AspectVerdict(label="unverifiable", score=0.5, text=f"Editing is unverifiable: {exp.unread}; "
                             f"measured for the part read: {how} ({score:.2f}).",
                             data={"checks": checks, "unverifiable": unverifiable, "measured_score": round(score, 3)})
    label = "effective" if score >= 0.6 else "partial" if score >= 0.3 else "ineffective"
    return AspectVerdict(label=label, score=round(score, 3), text=f"Editing is {label}: {how}.",
                         data={"checks": checks, "unverifiable": unverifiable})


def _still_heard(phrase: str, pe: PairEvidence, fe: Facts) -> str:
    """Where the edited clip still has the phrase's sound in material it kept from the original (tag events
    outside every new stretch), else ''."""
    labels = [lab for lab, _ in ev.phrase_labels(phrase)]
    new = [(ce.change.start_s, ce.change.end_s) for ce in pe.changes if ce.new is not None]
    left = [s for s in fe.tag_spans(labels) if (s.score or 0) >= ev.PRESENT and not _inside(s.start_s, s.end_s, new)]
    return "; ".join(f"{s.label} {s.start_s:.2f}-{s.end_s:.2f} s ({s.score:.2f})" for s in left[:3])


# ---------------------------------------------------------------- steps 1-2: captions from the changes


def pair_captions(exp: EditExpectation, pe: PairEvidence, facts: dict[str, Facts], fo: Facts, fe: Facts,
                  eff: AspectVerdict) -> tuple[str, str, dict[str, Any]]:
    """(difference caption, commonality caption, data) from the measured changes: each change said once, named
    by the instructed phrase only where the tools confirm it ('possibly' where they cannot tell), with its time
    and place."""
    al = pe.alignment
    by_change: dict[int, list[dict[str, Any]]] = {}
    for c in eff.data.get("checks", []):
        if "change" in c:
            by_change.setdefault(c["change"], []).append(c)
    sentences = []
    for k, ce in enumerate(pe.changes):
        c = ce.change
        mine = by_change.get(k, [])
        if ce.matched and not mine:
            continue  # more of an instructed sound already said (its further rings or beeps)
        add = next((m for m in mine if m["expected"] == "added"), None)
        rem = next((m for m in mine if m["expected"] == "removed"), None)

        def name(m: dict[str, Any] | None, side: SideEvidence | None) -> str:
            if m is None:
                return _describe(side)
            core, _ = split_position(m["phrase"])
            return _named(core, ev.Identity(phrase=core, p=m["p_identity"], verdict=m["identity"]), side)

        def place(m: dict[str, Any] | None, c: Change = c) -> str:
            if m is not None and m.get("position") == "as instructed":
                _, pos = split_position(m["phrase"])
                return f" {pos.words}" if pos else ""
            rel = _relation_text(c, pe, fe)
            return f" {rel}" if rel else ""

        def tail(text: str, rest: str) -> str:
            return text + rest if rest else text.rstrip(",")

        if c.kind == "replaced" and (ce.new is not None and ce.gone is not None):
            sentences.append(f"replaces {name(rem, ce.gone).rstrip(',')} with "
                             f"{tail(name(add, ce.new), place(add))} (at {c.start_s:.2f} s)")
        elif ce.new is not None:
            sentences.append(f"adds {tail(name(add, ce.new), place(add))} (at {c.start_s:.2f} s)")
        elif ce.gone is not None:
            part = "part of " if rem is not None and ("cut short" in rem.get("note", "") or "still heard" in
                                                      rem.get("note", "")) else ""
            # (where it was only for a removal asked alone: half a replacement is no better for its place)
            where = _removed_place(rem, c, fo) if not exp.added else ""
            sentences.append(f"removes {part}{name(rem, ce.gone).rstrip(',')}{where} "
                             f"(at {ce.gone.start_s:.2f} s)")
    if al.identical and abs(al.gain_db) >= LEVEL_AUDIBLE_LU:  # the same samples at another gain
        diff = (f"The edited audio is the original {abs(al.gain_db):.1f} dB "
                f"{'quieter' if al.gain_db < 0 else 'louder'}.")
    elif al.identical:
        diff = "There is no audible difference."
    elif not al.aligned:
        diff = _whole_clip_difference(fo, fe)
    elif sentences:
        diff = "The edited audio " + "; it also ".join(sentences) + "."
    else:
        diff = "There is no audible difference."
    comm = _commonality(pe, fo)
    data = {"alignment": al.model_dump(),
            "changes": [{"kind": ce.change.kind, "at_s": ce.change.start_s, "end_s": ce.change.end_s,
                         "orig_s": [ce.change.orig_start_s, ce.change.orig_end_s], "matched": ce.matched,
                         "new_heard": ce.new.heard if ce.new else None, "gone_heard": ce.gone.heard if ce.gone else None,
                         "new_speech_share": ce.new.speech_share if ce.new else None,
                         "words": (ce.new.words if ce.new else "") or (ce.gone.words if ce.gone else "")}
                        for ce in pe.changes],
            "residual_artifacts": {"added": pe.added_id, "removed": pe.removed_id}}
    return diff, comm, data


def _removed_place(m: dict[str, Any] | None, c: Change, fo: Facts) -> str:
    """Where a removed sound was, in words, when the instruction placed it: its own words when it was there,
    else where it was in the original ('at the end' for 'the bell at the start' removed from the end)."""
    if m is None or not m.get("position"):
        return ""
    _, pos = split_position(m["phrase"])
    if pos is None:
        return ""
    if m["position"] == "as instructed":
        return f" {pos.words}"
    for rel in ("start", "end", "middle"):
        ok, _ = check_removed_position(Position(relation=rel, words=""), c, fo)
        if ok:
            return {"start": " at the start", "end": " at the end", "middle": " in the middle"}[rel]
    return ""


def unlocated(caption: str) -> str:
    """A difference caption without its '(at 4.98 s)' locators: what the caption metrics score (the expected
    captions carry no times, and a timestamp is no caption wording; the times stay in the caption shown and in
    the changes)."""
    return re.sub(r"\s*\(at \d+(?:\.\d+)? s\)", "", caption)


def _whole_clip_difference(fo: Facts, fe: Facts) -> str:
    skip = ev.SPEECH_LABELS | ev.GENERIC
    lo, le = fo.present_labels(ev.PRESENT, skip), fe.present_labels(ev.PRESENT, skip)
    added = [ev.describe_label(x) for x in ev.merge_similar_labels([k for k in le if fo.strength(k) < ev.ABSENT])[:3]]
    removed = [ev.describe_label(x) for x in ev.merge_similar_labels([k for k in lo if fe.strength(k) < ev.ABSENT])[:3]]
    extra = []
    if fo.has_speech and fe.has_speech and fo.text and fe.text and ev.transcript_similarity(fo.text, fe.text) < 0.7:
        extra.append(f"the speech changes from '{ev._short(fo.text, 8)}' to '{ev._short(fe.text, 8)}'")
    op = "replace" if added and removed else "add" if added else "delete" if removed else "none"
    diff = difference_caption(op, added, removed) if op != "none" else ""
    if extra:
        diff = (diff.rstrip(".") + "; " + "; ".join(extra) + ".") if diff else extra[0][0].upper() + extra[0][1:] + "."
    return diff or "The edited audio is regenerated; no difference in sound classes or words is measured."


def _inside(a: float, b: float, spans: list[tuple[float, float]], share: float = 0.5) -> bool:
    inter = sum(max(0.0, min(b, y) - max(a, x)) for x, y in spans)
    return inter >= share * max(1e-3, b - a)


def _commonality(pe: PairEvidence, fo: Facts) -> str:
    """What the edited clip keeps of the original: its words and sound classes inside the kept stretches."""
    al = pe.alignment
    kept = [(0.0, fo.duration_s)] if al.identical else pe.kept_orig
    if not al.aligned and not al.identical:
        return ev.clip_caption(fo)
    gone_spans = [(ce.gone.start_s, ce.gone.end_s) for ce in pe.changes if ce.gone is not None]
    parts = []
    if fo.transcript is not None and fo.transcript.words:
        words = [w.text for w in fo.transcript.words if _inside(w.start_s, w.end_s, kept, 0.5)]
        if words:
            parts.append(f"speech saying '{ev._short(' '.join(words))}'")
    elif fo.has_speech and any(_inside(s.start_s, s.end_s, kept) for s in fo.speech_segments):
        parts.append("speech")
    labels = []
    for lab in fo.present_labels(ev.PRESENT, ev.SPEECH_LABELS | ev.GENERIC):
        sp = ev.spans(fo, [lab])
        if sp and not any(_inside(a, b, kept) for a, b in sp):
            continue
        if sp and gone_spans and all(_inside(a, b, gone_spans) for a, b in sp):
            continue
        labels.append(lab)
    parts += [ev.describe_label(x) for x in ev.merge_similar_labels(labels)[:4]]
    return ev._join(parts) or "nothing identifiable is shared"


# ---------------------------------------------------------------- step 6: preservation


def check_preservation(exp: EditExpectation, pe: PairEvidence, fo: Facts, fe: Facts,
                       level: int | None = None) -> AspectVerdict:
    """Step 6: the original outside the instructed change is kept sample for sample (energy share, from the
    alignment), no change the instruction did not ask for, the speech kept (unless targeted), the level kept."""
    comps: dict[str, float] = {}
    notes: list[str] = []
    al = pe.alignment
    targets = [split_position(p)[0] for p in exp.added + exp.removed]
    speech_targeted = any(ev.is_speech_phrase(p) for p in targets)
    unexpected: list[str] = []
    if al.identical:
        comps["original kept"] = 1.0
    elif al.aligned:
        e0 = max(pe.energy.get("original", 0.0), 1e-20)
        gone_targeted = sum(ce.orig_energy for ce in pe.changes if ce.gone is not None and ce.matched)
        kept_e = al.kept_share * e0
        comps["original kept"] = _clamp(kept_e / max(e0 - gone_targeted, 1e-20))
        if comps["original kept"] < 0.9:
            notes.append(f"only {comps['original kept']:.0%} of the untargeted original is kept")
        for ce in pe.changes:
            if not ce.matched and ce.change.energy_db >= -45:
                side = ce.new or ce.gone
                unexpected.append(f"{ce.change.kind} {_describe(side)} at {ce.change.start_s:.2f} s")
        if exp.operation != "free-form":
            comps["no unexpected changes"] = _clamp(1 - 0.25 * len(unexpected))
            if unexpected:
                notes.append("changes the instruction did not ask for: " + "; ".join(unexpected[:4]))
        if fo.has_speech and not speech_targeted:
            lost = sum(ce.gone.end_s - ce.gone.start_s for ce in pe.changes
                       if ce.gone is not None and ce.gone.speech_share >= 0.5)
            comps["speech kept"] = _clamp(1 - lost / max(fo.speech_s, 0.3))
            if comps["speech kept"] < 0.9:
                notes.append(f"{lost:.2f} s of the original speech is gone")
    else:
        skip = ev.SPEECH_LABELS | ev.GENERIC
        kept = {lab: _clamp(fe.strength(lab) / s) for lab, s in fo.present_labels(ev.PRESENT, skip).items()
                if not any(lab in [x for x, _ in ev.phrase_labels(t)] for t in targets)}
        if kept:
            comps["sound classes kept"] = sum(kept.values()) / len(kept)
        if fo.has_speech and not speech_targeted:
            comps["speech kept"] = ev.transcript_similarity(fo.text, fe.text) if (fo.text or fe.text) else (
                1.0 if fe.has_speech else 0.0)
        notes.append("not alignable: whole-clip comparison")
    lo = fo.loudness.integrated_lufs if fo.loudness else None
    le = fe.loudness.integrated_lufs if fe.loudness else None
    if lo is not None and le is not None and level is not None:
        notes.append(f"overall loudness changed by {le - lo:+.1f} LU, as a level change was asked for")
    elif lo is not None and le is not None:
        dl = le - lo
        comps["level kept"] = 1.0 if abs(dl) <= 6 else _clamp(1 - (abs(dl) - 6) / 12)
        if abs(dl) > 6:
            notes.append(f"overall loudness changed by {dl:+.1f} LU")
    score = sum(comps.values()) / len(comps) if comps else 1.0
    label = "preserved" if score >= 0.75 else "partially preserved" if score >= 0.5 else "not preserved"
    body = ", ".join(f"{k} {v:.2f}" for k, v in comps.items()) or "nothing measurable to preserve"
    return AspectVerdict(label=label, score=round(score, 3),
                         text=f"Preservation: {label} ({body})" + (f"; {'; '.join(notes)}" if notes else "") + ".",
                         data={"components": {k: round(v, 3) for k, v in comps.items()}, "unexpected": unexpected})


# ---------------------------------------------------------------- step 7: overall quality


def _lufs(f: Facts) -> float | None:
    return f.loudness.integrated_lufs if f.loudness is not None else None


def _sig_mos(f: Facts) -> float | None:
    q = f.values.get("speech_quality")
    if q is None:
        return None
    for key in ("sig_mos", "ovrl_mos", "p808_mos"):
        if isinstance(q.detail.get(key), (int, float)):
            return float(q.detail[key])
    return None


def check_quality(fo: Facts, fe: Facts) -> AspectVerdict:
    """Overall quality of the edited clip from measurable signals, compared with the original."""
    penalties: dict[str, float] = {}
    notes = []
    clip_e = fe.signal.clipping_ratio if fe.signal else 0.0
    clip_o = fo.signal.clipping_ratio if fo.signal else 0.0
    peak = fe.signal.peak_dbfs if fe.signal else None
    lufs = _lufs(fe)
    if clip_e > 0.001:
        penalties["clipping"] = 0.4
        notes.append(f"{100 * clip_e:.2f}% clipped samples" + (" (the original had none)" if clip_o <= 0.001 else ""))
    elif (peak or -100) >= -0.1:
        penalties["no headroom"] = 0.1
        notes.append(f"peak at {peak} dBFS")
    if lufs is None or lufs < -45:
        penalties["very quiet"] = 0.3
        notes.append("very quiet or silent" + (f" ({lufs} LUFS)" if lufs is not None else ""))
    elif lufs > -5:
        penalties["very loud"] = 0.2
        notes.append(f"very loud ({lufs} LUFS)")
    comps = {"signal": _clamp(1 - sum(penalties.values()))}
    # SIG (speech distortion), not OVRL/BAK: an intended added sound is 'background noise' to DNSMOS
    mos, mos_o = _sig_mos(fe), _sig_mos(fo)
    if mos is not None and mos_o is not None:
        # relative: synthetic or telephone-band originals score low in absolute terms
        comps["dnsmos"] = _clamp(1 - max(0.0, mos_o - mos) / 1.0)
        notes.append(f"DNSMOS speech signal MOS {mos:.2f} (original {mos_o:.2f})")
    elif mos is not None:
        comps["dnsmos"] = _clamp((mos - 1) / 3)
        notes.append(f"DNSMOS speech signal MOS {mos:.2f}")
    score = sum(comps.values()) / len(comps)
    label = "good" if score >= 0.8 else "fair" if score >= 0.5 else "poor"
    level = f"{lufs} LUFS, peak {peak} dBFS" if lufs is not None else "no loudness measured"
    if mos is None:
        notes.append("no speech-quality model ran (DNSMOS needs the speech_quality tool and speech)")
    return AspectVerdict(label=label, score=round(score, 3),
                         text=f"Overall quality: {label} ({level}; {'; '.join(notes)}).",
                         data={"penalties": penalties, "components": {k: round(v, 3) for k, v in comps.items()},
                               "lufs": lufs, "peak_dbfs": peak, "clipping_ratio": clip_e, "dnsmos": mos})


def suggestions_for(eff: AspectVerdict, pres: AspectVerdict, qual: AspectVerdict, exp: EditExpectation) -> list[str]:
    out = []
    for c in eff.data.get("checks", []):
        if "phrase" not in c or c["score"] >= 0.6:
            continue
        if c.get("note", "").startswith("nothing was"):
            out.append(f"{'Add' if c['expected'] == 'added' else 'Remove'} '{c['phrase']}': no such change was made.")
        elif c.get("position") == "not as instructed":
            out.append(f"Place '{split_position(c['phrase'])[0]}' {split_position(c['phrase'])[1].words} "
                       f"({c['position_evidence']}).")
        elif c.get("identity") == "contradicted":
            out.append(f"The {'added' if c['expected'] == 'added' else 'removed'} sound is not "
                       f"'{split_position(c['phrase'])[0]}' ({c['identity_evidence']}).")
        elif c["expected"] == "removed":
            out.append(f"Remove '{c['phrase']}' more thoroughly" + (f": {c['note']}." if c.get("note") else "."))
        else:
            out.append(f"Make '{c['phrase']}' clearly audible in the edited audio.")
    if pres.score < 0.75:
        if pres.data.get("unexpected"):
            out.append("Avoid changes the instruction did not ask for: " + "; ".join(pres.data["unexpected"][:3]) + ".")
        if pres.data.get("components", {}).get("speech kept", 1.0) < 0.7:
            out.append("Keep the original speech intact outside the edited region.")
        if pres.data.get("components", {}).get("level kept", 1.0) < 1.0:
            out.append("Match the overall loudness of the original.")
        if pres.data.get("components", {}).get("original kept", 1.0) < 0.75:
            out.append("Preserve the untargeted parts of the original.")
    if "clipping" in qual.data.get("penalties", {}):
        out.append("Lower the mix gain to remove clipping.")
    if "very quiet" in qual.data.get("penalties", {}):
        out.append("The edited audio is nearly silent: check the output gain.")
    if not out and exp.operation == "free-form":
        out.append("State the edit as an add/remove/replace instruction (or configure an LLM) for a checkable "
                   "expectation.")
    return out or ["No change needed."]


# ---------------------------------------------------------------- the judge


class _AspectOut(BaseModel):
    label: str = ""
    explanation: str = ""


class _VerdictOut(BaseModel):
    reference_reminder: str = ""
    effectiveness: _AspectOut = Field(default_factory=_AspectOut)
    preservation: _AspectOut = Field(default_factory=_AspectOut)
    overall_quality: _AspectOut = Field(default_factory=_AspectOut)
    synthesis: str = ""
    suggestions: list[str] = Field(default_factory=list)


def _affected(substitutes: dict[str, str]) -> dict[str, list[str]]:
    def dep(spec: dict[str, list[str]]) -> list[str]:
        return sorted({f"{side}.{m}" for side, ms in spec.items() for m in ms if m in substitutes})

    return {"edit_score": dep(EDIT_SCORE_METRICS), "faith_score": dep(FAITH_SCORE_METRICS)}


def _measurements(fo: Facts, fe: Facts, pe: PairEvidence | None = None) -> str:
    def one(name: str, f: Facts) -> str:
        labs = ", ".join(f"{k} {v:.2f}" for k, v in list(f.present_labels(ev.PRESENT, ev.GENERIC).items())[:8]) or "none"
        sig = f.signal
        return (f"{name}: {f.duration_s:.2f} s, {_lufs(f)} LUFS, peak {sig.peak_dbfs if sig else None} dBFS, clipped "
                f"{sig.clipping_ratio if sig else None}, speech {f.speech_s:.2f} s, transcript "
                f"'{ev._short(f.text, 20)}', sound classes: {labs}"
                + (f", speech signal MOS {_sig_mos(f):.2f}" if _sig_mos(f) is not None else ""))

    out = one("original", fo) + "\n" + one("edited", fe)
    if pe is not None:
        out += "\nalignment: " + pe.alignment.why
        for ce in pe.changes:
            c = ce.change
            out += (f"\nchange: {c.kind} at {c.start_s:.2f}-{c.end_s:.2f} s (edited)"
                    + (f", {c.orig_start_s:.2f}-{c.orig_end_s:.2f} s (original)" if c.orig_start_s is not None else "")
                    + (f"; new: {_describe(ce.new)}" if ce.new else "") + (f"; gone: {_describe(ce.gone)}" if ce.gone else ""))
    return out


def judge_edit(
    original: str | Path,
    edited: str | Path,
    *,
    instruction: str | None = None,
    original_description: str | None = None,
    target_description: str | None = None,
    llm: str = "rules",
    frontend: str = "cascade",
    trace_dir: str | Path | None = "traces",
    write_trace: bool = True,
    cache: Any = None,
    registry: Any = None,
    executor: Any = None,
    timeout_s: float = 120,
    max_retries: int = 3,
) -> EditJudgeResult:
    """Evaluate one edit; the run is written as a trace (the result's `trace_path`)."""
    from audiomind.judges.caption_metrics import prewarm
    from audiomind.prompts import load_prompt

    if not (instruction or target_description):
        raise ValueError("give the edit instruction or the target description (or both)")
    prewarm()  # the METEOR JVM loads while the clips are perceived
    inputs = {"original": str(original), "edited": str(edited), "instruction": instruction,
              "original_description": original_description, "target_description": target_description}
    task = (f"Evaluate the audio edit of a0 (original) into a1 (edited). Instruction: {instruction or '(none)'}; "
            f"original description: {original_description or '(none)'}; target description: "
            f"{target_description or '(none)'}. Judge overall quality, editing effectiveness and preservation.")
    session = JudgeSession("edit", task, [original, edited], trace_dir=trace_dir,
                           models=JudgeModels(llm=llm or "rules", frontend=frontend or "cascade"), registry=registry,
                           cache=cache, executor=executor, inputs=inputs, timeout_s=timeout_s, max_retries=max_retries)
    text_llm, audio = session.open_models(ModelSpec(
        role="frontend", spec="cascade", kind="cascade",
        decoding={"judge": "edit", "tools": ["tagging", "vad", "loudness", "signal_stats", "count_events", "asr",
                                             "speech_quality"]}))
    add = session.add

    # measurable facts of both clips (quality and the checks need them whatever the front end), through the
    # one reader layer; the edited clip is transcribed only where it is not the original sample for sample
    import numpy as np

    from audiomind import audio as aio

    al_probe, _, _ = align(aio.load(session.state.artifact("a0").path, sr=SR, mono=True).astype(np.float64),
                           aio.load(session.state.artifact("a1").path, sr=SR, mono=True).astype(np.float64))
    asr_for = ["a0"] if al_probe.aligned else ["a0", "a1"]
    facts = ev.perceive(session, ["a0", "a1"], asr=asr_for,
                        rationale="steps 1-2 and quality: perception pass over both clips")
    fo, fe = facts["a0"], facts["a1"]
    pe, change_facts = analyse_pair(session, fo, fe)
    change_facts = {**change_facts, "a0": ev.read(session, "a0"), "a1": ev.read(session, "a1")}
    fo, fe = change_facts["a0"], change_facts["a1"]
    if not pe.alignment.changes:
        session.note(pe.alignment.why, data=pe.alignment.model_dump())
    # expectations first (the captions name an instructed sound only where the tools confirm it)
    exp = expectations(instruction, original_description, target_description, ev.clip_caption(fo), text_llm, session)
    level = requested_level(instruction) if exp.operation == "free-form" else None
    level_phrase = " ".join((instruction or "").split())
    eff_measured = check_effectiveness(exp, pe, change_facts, fo, fe, metric_fallback=0.0, level=level,
                                       level_phrase=level_phrase)
    pair_data: dict[str, Any]
    diff_c, comm_c, pair_data = pair_captions(exp, pe, change_facts, fo, fe, eff_measured)
    tool_ids = [c.id for c in session.state.tool_calls]

    # steps 1-2
    if audio is None:
        captions_from = "cascade (tool evidence before/after)"
        session.add_observation(Observation(
            kind="perception", frontend="cascade", artifact_ids=["a0", "a1"], prompt_id="judge_edit_pair:cascade",
            prompt="difference and commonality captions derived from tool evidence of both clips",
            text=f"difference: {diff_c}\ncommonality: {comm_c}", description=diff_c, focus=comm_c,
            uncertainty="tool-based captions: the clips are aligned sample for sample and each changed stretch is "
                        "heard by AudioSet tags over onset-aligned windows, voice activity and transcripts; an "
                        "instructed sound the tags neither confirm nor contradict is called 'possibly' that sound",
            tool_call_ids=tool_ids))
    else:
        tpl = load_prompt("judge_edit_pair")
        prompt = tpl.render(original_id="a0", edited_id="a1")
        lr = audio.listen(prompt, tpl.id, [session.state.artifact("a0"), session.state.artifact("a1")], task,
                          reply_format="judge_edit_pair_format")
        session.add_model_call(lr.model_call)
        diff_c = lr.description.strip() or lr.text.strip()
        comm_c = lr.focus.strip() or "(no commonality caption given)"
        captions_from = f"{audio.name} (both clips in one request)"
        session.add_observation(Observation(
            kind="perception", frontend=audio.name, artifact_ids=["a0", "a1"], prompt_id=tpl.id, prompt=prompt,
            text=lr.text, description=diff_c, focus=comm_c, uncertainty=lr.uncertainty, windows=lr.windows,
            latency_s=lr.model_call.latency_s if lr.model_call else 0.0))
    add(JudgeStep(number=1, name="difference caption", text=diff_c,
                  data={"from": captions_from, **({"evidence": pair_data} if audio is None else {})}))
    add(JudgeStep(number=2, name="commonality caption", text=comm_c, data={"from": captions_from}))

    # steps 3-4 (computed above; restated here, before any comparison)
    reminder = (f"Reference reminder: the edit should produce this difference: \"{exp.expected_difference}\" and "
                f"preserve this commonality: \"{exp.expected_commonality}\".")
    add(JudgeStep(number=3, name="expected difference", text=exp.expected_difference,
                  data={"operation": exp.operation, "added": exp.added, "removed": exp.removed, "source": exp.source,
                        "notes": exp.notes}))
    add(JudgeStep(number=4, name="expected commonality (reference reminder)", text=reminder,
                  data={"expected_commonality": exp.expected_commonality}))

    # caption metrics and the seed's scores
    rep = score_captions([unlocated(diff_c), comm_c], [[exp.expected_difference], [exp.expected_commonality]],
                         background=background_captions())
    d_m, c_m = rep.scores
    es, fs = edit_score(d_m, c_m), faith_score(d_m, c_m)
    affected = _affected(rep.substitutes)
    if rep.substitutes:
        session.note("Substitute metrics: " + "; ".join(f"{k}: {v}" for k, v in rep.substitutes.items())
                     + f". Edit_score depends on {affected['edit_score'] or 'none of them'}; Faith_score on "
                     f"{affected['faith_score'] or 'none of them'}.",
                     data={"substitutes": rep.substitutes, "affected_scores": affected, "details": rep.details})

    # steps 5-7
    eff = eff_measured if eff_measured.data.get("checks") and "fallback" not in eff_measured.data["checks"][-1] else (
        check_effectiveness(exp, pe, change_facts, fo, fe, metric_fallback=d_m.fense, level=level,
                            level_phrase=level_phrase))
    pres = check_preservation(exp, pe, fo, fe, level=level)
    qual = check_quality(fo, fe)
    sugg = suggestions_for(eff, pres, qual, exp)
    score_note = (f"Edit_score {es:.3f}, Faith_score {fs:.3f} (Eq. 2-3"
                  + (f"; substitutes: {', '.join(sorted(rep.substitutes))}" if rep.substitutes else "") + ")")
    synthesis = (f"{qual.text} {eff.text} {pres.text} {score_note}.")
    if text_llm is not None:
        prompt = load_prompt("judge_edit_verdict").render(
            original_description=original_description or "(none)", instruction=instruction or "(none)",
            target_description=target_description or "(none)", predicted_difference=diff_c,
            predicted_commonality=comm_c, expected_difference=exp.expected_difference,
            expected_commonality=exp.expected_commonality, measurements=_measurements(fo, fe, pe),
            metrics=json.dumps({"difference": d_m.model_dump(exclude={"substitutes"}),
                                "commonality": c_m.model_dump(exclude={"substitutes"}),
                                "edit_score": round(es, 4), "faith_score": round(fs, 4)}))
        out, call, problem = text_llm.json("edit_verdict", prompt, _VerdictOut)
        session.add_model_call(call)
        if out is not None and out.effectiveness.label and out.preservation.label:
            eff = eff.model_copy(update={"label": out.effectiveness.label.strip().lower(),
                                         "text": out.effectiveness.explanation or eff.text,
                                         "data": {**eff.data, "measured_label": eff.label}})
            pres = pres.model_copy(update={"label": out.preservation.label.strip().lower(),
                                           "text": out.preservation.explanation or pres.text,
                                           "data": {**pres.data, "measured_label": pres.label}})
            if out.overall_quality.label:
                qual = qual.model_copy(update={"label": out.overall_quality.label.strip().lower(),
                                               "text": out.overall_quality.explanation or qual.text,
                                               "data": {**qual.data, "measured_label": qual.label}})
            synthesis = (out.synthesis or synthesis) + f" [{score_note}]"
            sugg = out.suggestions or sugg
            if out.reference_reminder:
                session.note(f"LLM restated the reference: {out.reference_reminder}")
        else:
            session.note(f"LLM verdict unusable ({problem}); the measured verdicts stand")
    add(JudgeStep(number=5, name="editing effectiveness", text=eff.text, data={"label": eff.label, "score": eff.score,
                                                                                **eff.data}))
    add(JudgeStep(number=6, name="preservation", text=pres.text, data={"label": pres.label, "score": pres.score,
                                                                        **pres.data}))
    add(JudgeStep(number=7, name="synthesis", text=synthesis + " Suggestions: " + " ".join(sugg),
                  data={"quality": qual.model_dump(), "edit_score": es, "faith_score": fs, "suggestions": sugg}))

    verdict = (f"effectiveness {eff.label} ({eff.score:.2f}); preservation {pres.label} ({pres.score:.2f}); "
               f"quality {qual.label} ({qual.score:.2f}); Edit_score {es:.3f}; Faith_score {fs:.3f}")
    from audiomind import calibration

    # the verdict's p: the effectiveness score through the edit judge's table (judges/data/), as the answer step does
    cal = calibration.apply("judge_edit", eff.score, abstain=eff.label == "unverifiable")
    verdict += f"; p {cal.p:.3f} ({cal.note})"
    result = EditJudgeResult(p=cal.p, calibration=cal.note,
        original=str(original), edited=str(edited), original_description=original_description,
        instruction=instruction, target_description=target_description, expectation=exp,
        predicted_difference=diff_c, predicted_commonality=comm_c, captions_from=captions_from,
        difference_metrics=d_m, commonality_metrics=c_m, edit_score=round(es, 4), faith_score=round(fs, 4),
        faith_agreement=round(-fs, 4), effectiveness=eff, preservation=pres, quality=qual, synthesis=synthesis,
        suggestions=sugg, verdict=verdict, steps=session.steps, substitutes=rep.substitutes, affected_scores=affected,
        models=session.models, alignment=pe.alignment, changes=pair_data.get("changes", []),
        unverifiable=eff.data.get("unverifiable", []))
    return session.conclude(verdict, synthesis, result, write=write_trace)
