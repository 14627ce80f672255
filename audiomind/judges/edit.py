"""Audio-edit evaluation (seed 000): difference/commonality reasoning in seven steps.

Inputs: the original audio, its description, the edit instruction and/or the target description, and the
edited audio. Output E = {overall quality, editing effectiveness, preservation}: a verdict and a score for
each, the seed's Edit_score and Faith_score, a synthesis with suggestions, and every step on the record.

The seven steps (the seed's chain of thought):
1-2. difference and commonality captions of the (original, edited) pair, from the front end with both
     clips in one request; the offline cascade derives them from tool evidence before/after (YAMNet classes
     and events, transcripts, loudness).
3-4. expected difference and commonality from the instruction (add: commonality = original caption;
     delete: the edited caption; replace: their intersection; free-form: the LLM, or the rule parser),
     restated as the "reference reminder" before any comparison.
5.   editing effectiveness: the expected change against the measured one (phrase presence before/after).
6.   preservation: what the edit should not touch (sound classes, transcript, loudness), and no unexpected sounds.
7.   synthesis with suggestions; overall quality from measurable signals (clipping, level, loudness, DNSMOS
     when the `speech_quality` tool is installed).
Edit_score and Faith_score follow Eqs. 2-3 of the seed exactly (weights below) from caption metrics of the
predicted vs the expected captions; metrics that cannot run here are replaced by declared substitutes, and
each score lists the substitutes it depends on.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges import evidence as ev
from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.judges.caption_metrics import CaptionScores, score_captions
from audiomind.judges.pairs import (
    background_captions,
    commonality_caption,
    difference_caption,
    join_caption,
    split_caption,
)
from audiomind.state import ModelSpec, Observation

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
    trace_path: str | None = None


# ---------------------------------------------------------------- step 3-4: expectations


_ADD = re.compile(r"^(?:please\s+)?(?:add|insert|include|overlay|mix\s+in|introduce|append|put)\s+(?P<x>.+?)"
                  r"(?:\s+(?:to|into|in|on|over|under|behind|at)\s+(?:the\s+)?(?:audio|clip|recording|track|"
                  r"background|beginning|end|start|middle|mix)\b.*)?$", re.IGNORECASE)
_DEL = re.compile(r"^(?:please\s+)?(?:remove|delete|erase|cut(?:\s+out)?|take\s+out|get\s+rid\s+of|mute|"
                  r"eliminate|drop|filter\s+out|suppress)\s+(?P<x>.+?)(?:\s+from\s+.*)?$", re.IGNORECASE)
_REP = re.compile(r"^(?:please\s+)?(?:replace|swap|change|turn|switch)\s+(?P<x>.+?)\s+(?:with|by|for|into|to)\s+"
                  r"(?P<y>.+)$", re.IGNORECASE)
_SUB = re.compile(r"^(?:please\s+)?substitute\s+(?P<y>.+?)\s+for\s+(?P<x>.+)$", re.IGNORECASE)


def _clean(s: str) -> str:
    return s.strip().strip(".!").strip()


def parse_instruction(instruction: str) -> tuple[str, list[str], list[str]] | None:
    """(operation, added, removed) from an imperative edit instruction, or None when it is free-form."""
    s = " ".join(instruction.strip().split())
    for rx, op in ((_SUB, "replace"), (_REP, "replace"), (_ADD, "add"), (_DEL, "delete")):
        m = rx.match(s)
        if m:
            if op == "replace":
                return op, [_clean(m.group("y"))], [_clean(m.group("x"))]
            if op == "add":
                return op, [_clean(m.group("x"))], []
            return op, [], [_clean(m.group("x"))]
    return None


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
    return EditExpectation(operation=op, added=added, removed=removed,  # type: ignore[arg-type]
                           expected_difference=difference_caption(op, added, removed),
                           expected_commonality=common, source=source, notes=notes)


# ---------------------------------------------------------------- steps 1-2 from tool evidence


def _speech_in(f: ev.ClipFacts | None) -> float:
    if f is None:
        return 0.0
    return max([f.strength(lab) for lab in ev.SPEECH_LABELS] + [0.0])


def _direction(before: float, after: float, resid: Residual) -> str:
    """Added or removed: the clip-level strengths when they differ clearly, else the residual's energy."""
    if after - before > 0.1:
        return "added"
    if before - after > 0.1:
        return "removed"
    return "added" if resid.direction in ("added", "changed") and after >= before else (
        "removed" if resid.direction == "removed" or after < before else "added")


def changed_labels(fo: ev.ClipFacts, fe: ev.ClipFacts, resid: Residual | None = None,
                   fr: ev.ClipFacts | None = None) -> tuple[list[str], list[str], list[str]]:
    """(added, removed, common) non-speech AudioSet labels. With a residual, what changed is what the
    residual contains (its direction, or the clip-level comparison, says added or removed); without one,
    clip-level presence before vs after."""
    lo = {k: v for k, v in fo.present_labels().items() if k not in ev.SPEECH_LABELS}
    le = {k: v for k, v in fe.present_labels().items() if k not in ev.SPEECH_LABELS}
    if resid is not None and resid.identical:
        return [], [], [lab for lab in lo if lab in le]
    if fr is not None and resid is not None:
        lr = [k for k in fr.present_labels() if k not in ev.SPEECH_LABELS]
        added, removed = [], []
        for lab in lr:
            (added if _direction(fo.strength(lab), fe.strength(lab), resid) == "added" else removed).append(lab)
        common = [lab for lab in lo if lab in le and fr.strength(lab) < ev.PRESENT]
        return added, removed, common
    added = [lab for lab, v in le.items() if fo.strength(lab) < ev.ABSENT or v - fo.strength(lab) >= 0.3]
    removed = [lab for lab, v in lo.items() if fe.strength(lab) < ev.ABSENT or v - fe.strength(lab) >= 0.3]
    common = [lab for lab in lo if lab in le and lab not in added and lab not in removed]
    return added, removed, common


def pair_captions(fo: ev.ClipFacts, fe: ev.ClipFacts, resid: Residual | None = None,
                  fr: ev.ClipFacts | None = None) -> tuple[str, str, dict[str, Any]]:
    """(difference caption, commonality caption, data) of an (original, edited) pair from tool facts."""
    added, removed, common = changed_labels(fo, fe, resid, fr)
    add_w = [ev.describe_label(x) for x in ev.merge_similar_labels(added)[:3]]
    rem_w = [ev.describe_label(x) for x in ev.merge_similar_labels(removed)[:3]]
    com_w = [ev.describe_label(x) for x in ev.merge_similar_labels(common)[:4]]
    extra = []
    speech: dict[str, Any] = {"original": fo.transcript, "edited": fe.transcript}
    speech_changed_in_residual = fr is not None and _speech_in(fr) >= ev.PRESENT
    if resid is not None and resid.identical:
        if fo.has_speech:
            com_w.insert(0, f"speech saying '{ev._short(fo.transcript)}'" if fo.transcript else "speech")
    elif fo.has_speech and fe.has_speech:
        sim = ev.transcript_similarity(fo.transcript, fe.transcript)
        speech["similarity"] = round(sim, 3)
        unchanged = (fr is not None and not speech_changed_in_residual) or sim >= 0.7 or not (
            fo.transcript and fe.transcript)
        if unchanged:
            com_w.insert(0, f"speech saying '{ev._short(fo.transcript)}'" if fo.transcript else "speech")
        else:
            extra.append(f"the speech changes from '{ev._short(fo.transcript, 8)}' to '{ev._short(fe.transcript, 8)}'")
    elif fe.has_speech:
        add_w.insert(0, f"speech saying '{ev._short(fe.transcript)}'" if fe.transcript else "speech")
    elif fo.has_speech:
        rem_w.insert(0, f"the speech ('{ev._short(fo.transcript, 8)}')" if fo.transcript else "the speech")
    dl = None
    if fo.lufs is not None and fe.lufs is not None:
        dl = round(fe.lufs - fo.lufs, 1)
        if abs(dl) >= 3:
            extra.append(f"the edited audio is {abs(dl):.0f} LU {'louder' if dl > 0 else 'quieter'}")
    op = "replace" if add_w and rem_w else "add" if add_w else "delete" if rem_w else "none"
    diff = difference_caption(op, add_w, rem_w) if op != "none" else ""
    if extra:
        tail = "; ".join(extra)
        diff = (diff.rstrip(".") + "; " + tail + ".") if diff else tail[0].upper() + tail[1:] + "."
    if not diff:
        diff = "There is no audible difference."
    comm = join_caption(com_w) or "nothing identifiable is shared"
    data = {"added_labels": added, "removed_labels": removed, "common_labels": common, "speech": speech,
            "loudness_change_lu": dl, "residual": resid.model_dump() if resid is not None else None,
            "residual_labels": fr.present_labels() if fr is not None else None}
    return diff, comm, data


# ---------------------------------------------------------------- the residual of sample-aligned pairs


class Residual(BaseModel):
    """edited - original, when the two clips are sample-aligned: what the edit changed, isolated."""

    aligned: bool
    identical: bool = False
    residual_db: float | None = Field(default=None, description="residual RMS relative to the louder clip, dB")
    direction: Literal["added", "removed", "changed"] | None = None
    energy_change_db: float | None = None
    artifact_id: str | None = None
    why: str = ""


def residual_analysis(session: JudgeSession) -> tuple[Residual, ev.ClipFacts | None]:
    """When both clips have the same length, tag their difference signal (a derived artifact with
    provenance): an added or removed sound is then heard alone, not masked by the rest of the mix. The
    energy of each clip where the residual is active says whether sound was added or removed."""
    import numpy as np

    from audiomind import audio as aio
    from audiomind.artifacts import make_artifact, next_artifact_id

    a0, a1 = session.state.artifact("a0"), session.state.artifact("a1")
    y0 = aio.load(a0.path, sr=16000, mono=True).astype(np.float64)
    y1 = aio.load(a1.path, sr=16000, mono=True).astype(np.float64)
    if abs(len(y0) - len(y1)) > 160:
        return Residual(aligned=False, why=f"durations differ ({len(y0) / 16000:.2f} s vs {len(y1) / 16000:.2f} s): "
                                           "no sample-level residual"), None
    n = min(len(y0), len(y1))
    r = y1[:n] - y0[:n]
    ref = max(float(np.sqrt(np.mean(y0[:n] ** 2))), float(np.sqrt(np.mean(y1[:n] ** 2))), 1e-9)
    rr = float(np.sqrt(np.mean(r ** 2)))
    rdb = round(20 * math.log10(max(rr, 1e-12) / ref), 1)
    if rdb < -50:
        return Residual(aligned=True, identical=True, residual_db=rdb,
                        why=f"the edited clip equals the original to {rdb} dB: nothing was changed"), None
    if rdb > -1.0:
        return Residual(aligned=False, residual_db=rdb,
                        why=f"the residual is as loud as the clips ({rdb} dB): the edit regenerated the whole clip, "
                            "so the clips are compared as wholes"), None
    frame = 400
    m = n // frame
    fr = np.sqrt(np.mean(r[: m * frame].reshape(m, frame) ** 2, axis=1))
    active = fr >= fr.max() * 10 ** (-30 / 20)
    e0 = float(np.sum(y0[: m * frame].reshape(m, frame)[active] ** 2))
    e1 = float(np.sum(y1[: m * frame].reshape(m, frame)[active] ** 2))
    edb = round(10 * math.log10(max(e1, 1e-12) / max(e0, 1e-12)), 2)
    direction = "added" if edb >= 1.5 else "removed" if edb <= -1.5 else "changed"
    path = Path(session.state.run.artifact_dir) / "residual_a1_minus_a0.wav"
    aio.write_wav(path, np.clip(r, -1, 1).astype(np.float32), 16000)
    art = make_artifact(next_artifact_id(session.state.artifacts), path, derived_from="a1", operation="residual",
                        parameters={"minus": "a0", "sample_rate": 16000})
    session.state.artifacts.append(art)
    res = Residual(aligned=True, residual_db=rdb, direction=direction, energy_change_db=edb, artifact_id=art.id,
                   why=f"sample-aligned pair: residual at {rdb} dB; where it is active the edited clip is {edb:+.1f} dB "
                       f"vs the original ({direction})")
    facts = ev.perceive(session, [art.id], asr=False, quality=False, tools=("tagging", "vad"),
                        rationale="what changed: tag the residual (edited - original) of the sample-aligned pair")
    return res, facts[art.id]


# ---------------------------------------------------------------- steps 5-7 from measurements


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def check_effectiveness(exp: EditExpectation, fo: ev.ClipFacts, fe: ev.ClipFacts, metric_fallback: float,
                        resid: Residual | None = None, fr: ev.ClipFacts | None = None) -> AspectVerdict:
    """Step 5: each expected addition must be present after and not before (or, for a sample-aligned pair,
    be what the residual contains, with the energy rising); each removal the reverse."""
    parts, checks, unverifiable = [], [], []
    identical = resid is not None and resid.identical
    for expected, phrases in (("added", exp.added), ("removed", exp.removed)):
        for phrase in phrases:
            if not ev.is_speech_phrase(phrase) and not ev.phrase_labels(phrase):
                unverifiable.append(phrase)
                continue
            po, wo = ev.presence(phrase, fo)
            pe, we = ev.presence(phrase, fe)
            if expected == "added":
                s_clip = _clamp((pe - po) / 0.4) * (1.0 if pe >= ev.PRESENT else pe / ev.PRESENT)
            else:
                gone = 1.0 if pe <= ev.ABSENT else _clamp(1 - (pe - ev.ABSENT) / ev.PRESENT)
                s_clip = gone * _clamp((po - pe) / 0.4) if po >= ev.PRESENT else 0.5 * gone
            check: dict[str, Any] = {"phrase": phrase, "expected": expected, "before": round(po, 3),
                                     "after": round(pe, 3), "clip_score": round(s_clip, 3), "before_evidence": wo,
                                     "after_evidence": we}
            s = s_clip
            if fr is not None and resid is not None:
                pr, wr = ev.presence(phrase, fr)
                d = _direction(po, pe, resid)
                s_res = _clamp(pr / ev.PRESENT) if d == expected else 0.0
                if expected == "removed" and pe >= ev.PRESENT:
                    s_res *= 0.5  # still clearly there after the edit: attenuated, not removed
                check.update({"residual": round(pr, 3), "residual_direction": resid.direction,
                              "residual_evidence": wr, "residual_score": round(s_res, 3)})
                s = max(s_clip, s_res)
            if expected == "removed" and po < ev.PRESENT and check.get("residual", 0.0) < ev.PRESENT:
                check["note"] = "not detected in the original: the removal cannot be confirmed"
            if identical:
                s = 0.0
                check["note"] = "the edited clip is identical to the original"
            check["score"] = round(s, 3)
            parts.append(s)
            checks.append(check)
    if not parts:
        score = 0.0 if identical else _clamp(metric_fallback)
        how = ("no expected change could be checked against tool evidence"
               + (f" ({', '.join(unverifiable)} name no AudioSet class)" if unverifiable else "")
               + ("; the edited clip is identical to the original" if identical else
                  f"; the score is the difference-caption similarity ({score:.2f})"))
        checks.append({"fallback": "difference caption similarity", "score": round(score, 3)})
    else:
        score = sum(parts) / len(parts)
        bits = []
        for c in checks:
            if "phrase" not in c:
                continue
            b = f"'{c['phrase']}' expected {c['expected']}: presence {c['before']:.2f} before, {c['after']:.2f} after"
            if "residual" in c:
                b += f", {c['residual']:.2f} in the residual ({c['residual_direction']})"
            if c.get("note"):
                b += f" ({c['note']})"
            bits.append(b)
        how = "; ".join(bits)
        if unverifiable:
            how += f"; not checkable with tools: {', '.join(unverifiable)}"
    label = "effective" if score >= 0.6 else "partial" if score >= 0.3 else "ineffective"
    return AspectVerdict(label=label, score=round(score, 3), text=f"Editing is {label}: {how}.",
                         data={"checks": checks, "unverifiable": unverifiable})


def check_preservation(exp: EditExpectation, fo: ev.ClipFacts, fe: ev.ClipFacts, pair: dict[str, Any],
                       resid: Residual | None = None, fr: ev.ClipFacts | None = None) -> AspectVerdict:
    """Step 6: untargeted sound classes kept, speech kept, no unexpected new sounds, no large level jump.
    With a residual, a sound the residual does not contain was not touched, however masked it is in the mix."""
    targets = exp.added + exp.removed
    target_labels = {lab for p in targets for lab, _ in ev.phrase_labels(p)}
    speech_targeted = any(ev.is_speech_phrase(p) for p in targets)
    comps: dict[str, float] = {}
    notes = []
    kept = {}

    def untouched(lab: str) -> float:
        return 1.0 - _clamp((fr.strength(lab) - ev.ABSENT) / ev.PRESENT) if fr is not None else 0.0

    # the time region of the targeted sounds in each clip: other labels heard there are other names of them
    env = {name: ev.envelope(ev.spans(f, target_labels)) for name, f in (("o", fo), ("e", fe), ("r", fr)) if f}

    def part_of_target(lab: str) -> bool:
        return any(ev.inside(ev.spans(f, [lab]), env.get(name)) for name, f in (("o", fo), ("e", fe), ("r", fr)) if f)

    for lab, s in fo.present_labels().items():
        if lab in ev.SPEECH_LABELS or lab in target_labels or part_of_target(lab):
            continue
        kept[lab] = round(max(_clamp(fe.strength(lab) / s), untouched(lab)), 3)
    if kept:
        comps["sound classes kept"] = sum(kept.values()) / len(kept)
        lost = [ev.describe_label(k) for k, v in kept.items() if v < 0.5]
        if lost:
            notes.append(f"weakened or lost: {', '.join(lost)}")
    if fo.has_speech and not speech_targeted:
        sim = ev.transcript_similarity(fo.transcript, fe.transcript) if (fo.transcript or fe.transcript) else (
            1.0 if fe.has_speech else 0.0)
        res_kept = 1.0 - _clamp((_speech_in(fr) - ev.ABSENT) / ev.PRESENT) if fr is not None else 0.0
        if resid is not None and resid.identical:
            res_kept = 1.0
        comps["speech kept"] = max(sim, res_kept)
        if comps["speech kept"] < 0.7:
            notes.append(f"speech changed (transcript similarity {sim:.2f}"
                         + (f", speech in the residual {_speech_in(fr):.2f}" if fr is not None else "") + ")")
    if exp.operation != "free-form" and not (resid is not None and resid.identical):
        changed = list(fr.present_labels()) if fr is not None else list(pair.get("added_labels", []))
        changed = [c for c in changed if c not in ev.SPEECH_LABELS and c not in target_labels]
        where = fr if fr is not None else fe
        target_spans = ev.spans(where, target_labels)
        target_env = env.get("r" if fr is not None else "e")
        unexpected = []
        if changed:
            from audiomind.embedded import text

            sims = text.similarity(changed, targets) if targets else None
            for i, lab in enumerate(changed):
                if sims is not None and sims[i].max() >= 0.45:
                    continue  # another name for a targeted sound
                lab_spans = ev.spans(where, [lab])
                if target_spans and (ev.overlaps(lab_spans, target_spans) or ev.inside(lab_spans, target_env)
                                     or not lab_spans):
                    continue  # heard where the targeted sound is (or not localised): part of the targeted change
                unexpected.append(lab)
        n_unexp = len(ev.merge_similar_labels(unexpected)) if unexpected else 0
        comps["no unexpected sounds"] = _clamp(1 - 0.25 * n_unexp)
        if unexpected:
            notes.append(f"unexpected new or changed sounds: {', '.join(ev.describe_label(u) for u in unexpected[:4])}")
    else:
        unexpected = []
    dl = pair.get("loudness_change_lu")
    if dl is not None:
        comps["level kept"] = 1.0 if abs(dl) <= 6 else _clamp(1 - (abs(dl) - 6) / 12)
        if abs(dl) > 6:
            notes.append(f"overall loudness changed by {dl:+.1f} LU")
    score = sum(comps.values()) / len(comps) if comps else 1.0
    label = "preserved" if score >= 0.75 else "partially preserved" if score >= 0.5 else "not preserved"
    body = ", ".join(f"{k} {v:.2f}" for k, v in comps.items()) or "nothing measurable to preserve"
    return AspectVerdict(label=label, score=round(score, 3),
                         text=f"Preservation: {label} ({body})" + (f"; {'; '.join(notes)}" if notes else "") + ".",
                         data={"components": {k: round(v, 3) for k, v in comps.items()}, "kept": kept,
                               "unexpected": unexpected})


def check_quality(fo: ev.ClipFacts, fe: ev.ClipFacts) -> AspectVerdict:
    """Overall quality of the edited clip from measurable signals, compared with the original."""
    penalties: dict[str, float] = {}
    notes = []
    if (fe.clipping_ratio or 0) > 0.001:
        penalties["clipping"] = 0.4
        notes.append(f"{100 * fe.clipping_ratio:.2f}% clipped samples"
                     + (" (the original had none)" if (fo.clipping_ratio or 0) <= 0.001 else ""))
    elif (fe.peak_dbfs or -100) >= -0.1:
        penalties["no headroom"] = 0.1
        notes.append(f"peak at {fe.peak_dbfs} dBFS")
    if fe.lufs is None or fe.lufs < -45:
        penalties["very quiet"] = 0.3
        notes.append("very quiet or silent" + (f" ({fe.lufs} LUFS)" if fe.lufs is not None else ""))
    elif fe.lufs > -5:
        penalties["very loud"] = 0.2
        notes.append(f"very loud ({fe.lufs} LUFS)")
    base = _clamp(1 - sum(penalties.values()))
    comps = {"signal": base}
    mos = None
    if fe.quality:
        # SIG (speech distortion), not OVRL/BAK: an intended added sound is 'background noise' to DNSMOS
        for key in ("sig_mos", "SIG", "ovrl_mos", "OVRL", "mos", "p808_mos"):
            if isinstance(fe.quality.get(key), (int, float)):
                mos = float(fe.quality[key])
                break
        mos_o = None
        for key in ("sig_mos", "SIG", "ovrl_mos", "OVRL", "mos", "p808_mos"):
            if fo.quality and isinstance(fo.quality.get(key), (int, float)):
                mos_o = float(fo.quality[key])
                break
        if mos is not None and mos_o is not None:
            # relative: synthetic or telephone-band originals score low in absolute terms
            comps["dnsmos"] = _clamp(1 - max(0.0, mos_o - mos) / 1.0)
            notes.append(f"DNSMOS speech signal MOS {mos:.2f} (original {mos_o:.2f})")
        elif mos is not None:
            comps["dnsmos"] = _clamp((mos - 1) / 3)
            notes.append(f"DNSMOS speech signal MOS {mos:.2f}")
    score = sum(comps.values()) / len(comps)
    label = "good" if score >= 0.8 else "fair" if score >= 0.5 else "poor"
    level = f"{fe.lufs} LUFS, peak {fe.peak_dbfs} dBFS" if fe.lufs is not None else "no loudness measured"
    if mos is None:
        notes.append("no speech-quality model ran (DNSMOS needs the speech_quality tool and speech)")
    return AspectVerdict(label=label, score=round(score, 3),
                         text=f"Overall quality: {label} ({level}; {'; '.join(notes)}).",
                         data={"penalties": penalties, "components": {k: round(v, 3) for k, v in comps.items()},
                               "lufs": fe.lufs, "peak_dbfs": fe.peak_dbfs, "clipping_ratio": fe.clipping_ratio,
                               "dnsmos": mos})


def suggestions_for(eff: AspectVerdict, pres: AspectVerdict, qual: AspectVerdict, exp: EditExpectation) -> list[str]:
    out = []
    for c in eff.data.get("checks", []):
        if "phrase" not in c or c["score"] >= 0.6:
            continue
        if c["expected"] == "added":
            out.append(f"Make '{c['phrase']}' clearly audible in the edited audio (its presence rose only from "
                       f"{c['before']:.2f} to {c['after']:.2f}); mix it louder or longer.")
        else:
            out.append(f"Remove '{c['phrase']}' more thoroughly: it is still detected ({c['after']:.2f}).")
    if pres.score < 0.75:
        unexpected = pres.data.get("unexpected") or []
        if unexpected:
            out.append("Avoid introducing sounds the instruction did not ask for: "
                       + ", ".join(ev.describe_label(u) for u in unexpected[:3]) + ".")
        if pres.data.get("components", {}).get("speech kept", 1.0) < 0.7:
            out.append("Keep the original speech intact outside the edited region.")
        if pres.data.get("components", {}).get("level kept", 1.0) < 1.0:
            out.append("Match the overall loudness of the original.")
        if pres.data.get("components", {}).get("sound classes kept", 1.0) < 0.75:
            out.append("Preserve the untargeted sounds of the original.")
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


def _measurements(fo: ev.ClipFacts, fe: ev.ClipFacts) -> str:
    def one(name: str, f: ev.ClipFacts) -> str:
        labs = ", ".join(f"{k} {v:.2f}" for k, v in list(f.present_labels().items())[:8]) or "none"
        return (f"{name}: {f.duration_s:.2f} s, {f.lufs} LUFS, peak {f.peak_dbfs} dBFS, clipped "
                f"{f.clipping_ratio}, speech {f.speech_s:.2f} s, transcript '{ev._short(f.transcript, 20)}', "
                f"sound classes: {labs}" + (f", speech quality {f.quality}" if f.quality else ""))

    return one("original", fo) + "\n" + one("edited", fe)


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
    from audiomind.prompts import load_prompt

    if not (instruction or target_description):
        raise ValueError("give the edit instruction or the target description (or both)")
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

    # measurable facts of both clips (quality and the checks need them whatever the front end)
    facts = ev.perceive(session, ["a0", "a1"], rationale="steps 1-2 and quality: perception pass over both clips")
    fo, fe = facts["a0"], facts["a1"]
    resid, fr = residual_analysis(session)
    session.note(resid.why, data=resid.model_dump())
    pair_data: dict[str, Any]
    diff_c, comm_c, pair_data = pair_captions(fo, fe, resid, fr)
    tool_ids = [i for f in (fo, fe, fr) if f is not None for i in f.call_ids]

    # steps 1-2
    if audio is None:
        captions_from = "cascade (tool evidence before/after)"
        session.add_observation(Observation(
            kind="perception", frontend="cascade", artifact_ids=["a0", "a1"], prompt_id="judge_edit_pair:cascade",
            prompt="difference and commonality captions derived from tool evidence of both clips",
            text=f"difference: {diff_c}\ncommonality: {comm_c}", description=diff_c, focus=comm_c,
            uncertainty="tool-based captions: only AudioSet classes, voice activity, transcripts and loudness are "
                        "perceived", tool_call_ids=tool_ids))
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

    # steps 3-4
    exp = expectations(instruction, original_description, target_description, ev.clip_caption(fo), text_llm, session)
    reminder = (f"Reference reminder: the edit should produce this difference: \"{exp.expected_difference}\" and "
                f"preserve this commonality: \"{exp.expected_commonality}\".")
    add(JudgeStep(number=3, name="expected difference", text=exp.expected_difference,
                  data={"operation": exp.operation, "added": exp.added, "removed": exp.removed, "source": exp.source,
                        "notes": exp.notes}))
    add(JudgeStep(number=4, name="expected commonality (reference reminder)", text=reminder,
                  data={"expected_commonality": exp.expected_commonality}))

    # caption metrics and the seed's scores
    rep = score_captions([diff_c, comm_c], [[exp.expected_difference], [exp.expected_commonality]],
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
    eff = check_effectiveness(exp, fo, fe, metric_fallback=d_m.fense, resid=resid, fr=fr)
    pres = check_preservation(exp, fo, fe, pair_data, resid=resid, fr=fr)
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
            expected_commonality=exp.expected_commonality, measurements=_measurements(fo, fe),
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
    result = EditJudgeResult(
        original=str(original), edited=str(edited), original_description=original_description,
        instruction=instruction, target_description=target_description, expectation=exp,
        predicted_difference=diff_c, predicted_commonality=comm_c, captions_from=captions_from,
        difference_metrics=d_m, commonality_metrics=c_m, edit_score=round(es, 4), faith_score=round(fs, 4),
        faith_agreement=round(-fs, 4), effectiveness=eff, preservation=pres, quality=qual, synthesis=synthesis,
        suggestions=sugg, verdict=verdict, steps=session.steps, substitutes=rep.substitutes, affected_scores=affected,
        models=session.models)
    return session.conclude(verdict, synthesis, result, write=write_trace)
