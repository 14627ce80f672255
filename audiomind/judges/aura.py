"""AURA (seed 002): a holistic score for free-form audio question answering.

S_LLM: an LLM reasons (chain of thought, 3-shot, prompts/judge_aura_score.md) and rates the response
against the reference in the context of the question on a 3-point scale, 1/2/3 -> 0, 0.5, 1.
S_AE: the question and response are rewritten into a declarative hypothesis (prompts/judge_aura_hypothesis.md)
whose CLAP text embedding is compared with the audio's CLAP embedding (cosine).
    paper mode:         S_AE = 1 if cosine >= 0.35 else 0;         S = (S_LLM + w S_AE) / (1 + w)
    two_threshold mode: S_AE = -1 / 0 / 1 below 0.25 / between / above 0.55 (the reference implementation);
                        S = (S_LLM + w S_AE + w) / (1 + 2w)
    w = 0.1. Without CLAP (no weights here) the entailment term is skipped with its reason and S = S_LLM,
    as the reference implementation does in its audio-off mode.
Offline, with no LLM configured, S_LLM comes from a transparent rule scorer declared as a substitute:
yes/no polarity, numbers and antonyms that contradict the reference force 1; otherwise the mean of the
content-word F1 and the (rescaled) MiniLM similarity of response and reference picks 3 (>= 0.6),
2 (>= 0.35) or 1. The hypothesis is then rewritten by rules.

`aqeval` scores (question, reference, response, audio, human score) rows and reports Pearson and
Spearman correlations with the human scores, as AQEval does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from audiomind.judges.base import JudgeModels, JudgeSession, JudgeStep
from audiomind.language import answers
from audiomind.state import ModelSpec

CATEGORY_SCORE = {1: 0.0, 2: 0.5, 3: 1.0}


class Entailment(BaseModel):
    status: Literal["ok", "skipped"]
    reason: str = ""
    backend: str | None = None
    cosine: float | None = None
    s_ae: float | None = None
    mode: str = "paper"
    thresholds: list[float] = Field(default_factory=list)


class AuraResult(BaseModel):
    judge: Literal["aura"] = "aura"
    question: str
    reference: str
    response: str
    audio: str | None = None
    llm_category: int = Field(ge=1, le=3)
    s_llm: float
    llm_reasoning: str
    llm_source: str
    rule_details: dict[str, Any] | None = None
    hypothesis: str
    hypothesis_source: str
    entailment: Entailment
    w: float
    mode: Literal["paper", "two_threshold"]
    raw: float
    score: float
    normalisation: str
    substitutes: dict[str, str] = Field(default_factory=dict)
    steps: list[JudgeStep]
    models: JudgeModels
    p: float | None = Field(default=None, description="the verdict's probability of 'correct': S through AURA's "
                            "calibration table")
    calibration: str = Field(default="", description="the table (NAME@SHA12) and the raw score p came from")
    trace_path: str | None = None


# ---------------------------------------------------------------- the rule substitutes


def rule_category(question: str, reference: str, response: str) -> tuple[int, str, dict[str, Any]]:
    """(1 | 2 | 3, reasoning, details): the offline substitute for the LLM's 3-point judgement."""
    from audiomind.embedded import text

    details: dict[str, Any] = {}
    qwords = set(answers.words(question))
    ref, resp = answers.read_answer(reference), answers.read_answer(response)
    rw, pw = list(ref.content), list(resp.content)
    # content words the question already contains carry half weight: repeating the question is not answering it
    def weight(w: str) -> float:
        return 0.5 if w in qwords else 1.0

    common = set(rw) & set(pw)
    prec = sum(weight(w) for w in pw if w in common) / max(1e-9, sum(weight(w) for w in pw)) if pw else 0.0
    rec = sum(weight(w) for w in rw if w in common) / max(1e-9, sum(weight(w) for w in rw)) if rw else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    sim = float(text.similarity([response], [reference])[0, 0]) if response.strip() and reference.strip() else 0.0
    sim_r = max(0.0, min(1.0, (sim - 0.3) / 0.6))
    c = 0.5 * f1 + 0.5 * sim_r
    details.update({"content_f1": round(f1, 3), "minilm_similarity": round(sim, 3), "combined": round(c, 3)})
    reasons = []
    if answers.is_yes_no_question(question):
        pr, pp = ref.polarity, resp.polarity
        details.update({"reference_polarity": pr, "response_polarity": pp})
        if pr and pp and pr != pp:
            return 1, f"yes/no question: the response says {pp!r}, the reference {pr!r}", details
        if pr and pp == pr:
            reasons.append(f"same yes/no polarity ({pr})")
            c = max(c, 0.6 if len(rw) <= 2 else c + 0.2)
    nr, np_ = set(ref.numbers), set(resp.numbers)
    if nr and np_:
        details.update({"reference_numbers": sorted(nr), "response_numbers": sorted(np_)})
        if not (nr & np_):
            return 1, f"the numbers differ: response {sorted(np_)} vs reference {sorted(nr)}", details
        reasons.append(f"same number(s) {sorted(nr & np_)}")
        c = max(c, 0.6)
    elif nr and not np_:
        reasons.append("the reference gives a number the response does not")
        c = min(c, 0.55)
    pair = answers.contradicting_antonyms(ref, resp)
    if pair is not None:
        a, b = pair
        details["antonym"] = [a, b]
        return 1, f"the response contradicts the reference ({a} / {b})", details
    cat = 3 if c >= 0.6 else 2 if c >= 0.35 else 1
    reasons.append(f"content-word F1 {f1:.2f}, MiniLM similarity {sim:.2f} -> combined {c:.2f}")
    return cat, "; ".join(reasons), details


def rule_hypothesis(question: str, response: str) -> str:
    """Question + response -> a declarative sentence (rules: `audiomind.language.answers.hypothesis`)."""
    return answers.hypothesis(question, response)


# ---------------------------------------------------------------- the judge


class _ScoreOut(BaseModel):
    reasoning: str = ""
    score: int

    @classmethod
    def model_validate(cls, obj: Any, *a: Any, **k: Any):  # accept "3" or 3.0
        if isinstance(obj, dict) and "score" in obj:
            try:
                obj = {**obj, "score": round(float(str(obj["score"]).strip()))}
            except ValueError:
                pass
        return super().model_validate(obj, *a, **k)


class _HypOut(BaseModel):
    hypothesis: str


def combine(s_llm: float, s_ae: float | None, w: float, mode: str) -> tuple[float, float, str]:
    """(raw, normalised score, how)."""
    if s_ae is None:
        return s_llm, s_llm, "entailment skipped: S = S_LLM (the reference implementation's audio-off mode)"
    raw = s_llm + w * s_ae
    if mode == "two_threshold":
        return raw, (raw + w) / (1 + 2 * w), "S = (S_LLM + w S_AE + w) / (1 + 2w), S_AE in {-1, 0, 1}"
    return raw, raw / (1 + w), "S = (S_LLM + w S_AE) / (1 + w), S_AE in {0, 1}"


def aura_score(
    question: str,
    reference: str,
    response: str,
    audio: str | Path | None = None,
    *,
    llm: str = "rules",
    w: float = 0.1,
    mode: Literal["paper", "two_threshold"] = "paper",
    threshold: float = 0.35,
    thresholds: tuple[float, float] = (0.25, 0.55),
    trace_dir: str | Path | None = "traces",
    write_trace: bool = True,
    registry: Any = None,
    executor: Any = None,
    timeout_s: float = 120,
    max_retries: int = 3,
) -> AuraResult:
    """One AURA score; the run is written as a trace (with the audio as a0 when given)."""
    from audiomind.judges.clap import clap_status, load_clap
    from audiomind.prompts import load_prompt

    if mode not in ("paper", "two_threshold"):
        raise ValueError("mode must be 'paper' or 'two_threshold'")
    task = (f"Score the response to an audio question against the reference (AURA). Question: {question} "
            f"Reference: {reference} Response: {response}")
    session = JudgeSession("aura", task, [audio] if audio else [], trace_dir=trace_dir,
                           models=JudgeModels(llm=llm or "rules", frontend="clap"), registry=registry,
                           executor=executor, timeout_s=timeout_s, max_retries=max_retries,
                           inputs={"question": question, "reference": reference, "response": response,
                                   "audio": str(audio) if audio else None, "w": w, "mode": mode})
    st = clap_status()
    text_llm, _ = session.open_models(ModelSpec(role="frontend", spec=f"clap:{st.backend or 'none'}", kind="clap",
                                                model=st.checkpoint, decoding={"mode": mode, "w": w}), listen=False)
    add, substitutes = session.add, session.substitutes

    # 1. S_LLM
    cat = None
    reasoning, source, details = "", "", None
    if text_llm is not None:
        prompt = load_prompt("judge_aura_score").render(question=question, reference=reference, response=response)
        out, call, problem = text_llm.json("aura_score", prompt, _ScoreOut)
        session.add_model_call(call)
        if out is not None and out.score in (1, 2, 3):
            cat, reasoning, source = out.score, out.reasoning, text_llm.name
        else:
            session.note(f"LLM score unusable ({problem}); rule scorer instead")
    if cat is None:
        cat, reasoning, details = rule_category(question, reference, response)
        source = "rules (substitute)"
        substitutes["s_llm"] = ("no LLM: rule scorer (yes/no polarity, numbers, antonyms; content-word F1 + "
                                "MiniLM similarity)")
    s_llm = CATEGORY_SCORE[cat]
    add(JudgeStep(number=1, name="LLM correctness (3-point)", text=f"category {cat} -> S_LLM {s_llm}: {reasoning}",
                  data={"category": cat, "s_llm": s_llm, "source": source, **({"rule": details} if details else {})}))

    # 2. hypothesis
    hyp, hsource = "", ""
    if text_llm is not None:
        prompt = load_prompt("judge_aura_hypothesis").render(question=question, response=response)
        out, call, problem = text_llm.json("aura_hypothesis", prompt, _HypOut)
        session.add_model_call(call)
        if out is not None and out.hypothesis.strip():
            hyp, hsource = out.hypothesis.strip(), text_llm.name
    if not hyp:
        hyp, hsource = rule_hypothesis(question, response), "rules"
        if text_llm is None:
            substitutes["hypothesis"] = "no LLM: rule rewrite of question + response"
    add(JudgeStep(number=2, name="hypothesis", text=hyp, data={"source": hsource}))

    # 3. audio entailment
    thr = [threshold] if mode == "paper" else list(thresholds)
    if audio is None:
        ent = Entailment(status="skipped", reason="no audio given", mode=mode, thresholds=thr)
    elif not st.available:
        ent = Entailment(status="skipped", reason=st.reason, backend=st.backend, mode=mode, thresholds=thr)
    else:
        try:
            cos = load_clap().cosine(hyp, audio)
            if mode == "paper":
                s_ae = 1.0 if cos >= threshold else 0.0
            else:
                s_ae = -1.0 if cos < thresholds[0] else 0.0 if cos <= thresholds[1] else 1.0
            ent = Entailment(status="ok", backend=st.backend, cosine=round(cos, 4), s_ae=s_ae, mode=mode, thresholds=thr)
        except Exception as exc:  # noqa: BLE001 - a load failure is a recorded skip, not a crash
            ent = Entailment(status="skipped", reason=str(exc)[:300], backend=st.backend, mode=mode, thresholds=thr)
    add(JudgeStep(number=3, name="audio entailment (CLAP)",
                  text=(f"cosine {ent.cosine} -> S_AE {ent.s_ae}" if ent.status == "ok" else f"skipped: {ent.reason}"),
                  data=ent.model_dump()))

    # 4. combine
    raw, score, how = combine(s_llm, ent.s_ae, w, mode)
    add(JudgeStep(number=4, name="AURA score", text=f"{how}: raw {raw:.3f}, S_AURA {score:.3f}",
                  data={"raw": raw, "score": score, "w": w}))
    result = AuraResult(question=question, reference=reference, response=response,
                        audio=str(audio) if audio else None, llm_category=cat, s_llm=s_llm, llm_reasoning=reasoning,
                        llm_source=source, rule_details=details, hypothesis=hyp, hypothesis_source=hsource,
                        entailment=ent, w=w, mode=mode, raw=round(raw, 4), score=round(score, 4), normalisation=how,
                        substitutes=substitutes, steps=session.steps, models=session.models)
    from audiomind import calibration

    # the verdict's p: S through AURA's table (judges/data/: the identity until a labelled development set exists)
    cal = calibration.apply("judge_aura", result.score)
    result.p, result.calibration = cal.p, cal.note
    verdict = f"AURA {score:.3f} (S_LLM {s_llm}, category {cat}; entailment {ent.status}; p {cal.p:.3f}: {cal.note})"
    return session.conclude(verdict, f"{reasoning} | hypothesis: {hyp} | {how}", result, write=write_trace)


# ---------------------------------------------------------------- AQEval-style correlation


class AQRow(BaseModel):
    question: str
    reference: str
    response: str
    audio: str | None = None
    human: float


def correlations(pred: list[float], human: list[float]) -> dict[str, float | None]:
    from scipy import stats

    if len(pred) < 3 or len(set(pred)) < 2 or len(set(human)) < 2:
        return {"pearson": None, "spearman": None}
    return {"pearson": round(float(stats.pearsonr(pred, human)[0]), 4),
            "spearman": round(float(stats.spearmanr(pred, human)[0]), 4)}


def aqeval(rows: list[AQRow], *, llm: str = "rules", w: float = 0.1, mode: Literal["paper", "two_threshold"] = "paper",
           trace_dir: str | Path | None = None, baselines: bool = True) -> dict[str, Any]:
    """Score every row with AURA (and, as baselines, BLEU-4 / METEOR / ROUGE-L / the FENSE column against the
    reference); Pearson and Spearman against the human scores."""
    per = []
    for r in rows:
        res = aura_score(r.question, r.reference, r.response, r.audio, llm=llm, w=w, mode=mode, trace_dir=trace_dir,
                         write_trace=trace_dir is not None)
        per.append({"question": r.question, "response": r.response, "human": r.human, "aura": res.score,
                    "category": res.llm_category, "trace": res.trace_path})
    human = [p["human"] for p in per]
    out: dict[str, Any] = {"n": len(per), "aura": correlations([p["aura"] for p in per], human), "rows": per}
    if baselines and rows:
        from audiomind.judges.caption_metrics import score_captions

        rep = score_captions([r.response for r in rows], [[r.reference] for r in rows])
        for m in ("bleu_4", "meteor", "rouge_l", "fense"):
            out[m] = correlations([getattr(s, m) for s in rep.scores], human)
        out["metric_substitutes"] = rep.substitutes
    return out


def load_rows(path: str | Path) -> list[AQRow]:
    return [AQRow.model_validate(json.loads(x)) for x in Path(path).read_text().splitlines() if x.strip()]
