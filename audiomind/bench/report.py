"""`audiomind bench report RUN_DIR`: a Markdown report with tables and PNG plots, from results.jsonl alone.

What it shows (the behaviour analysis follows Audio-Mind's: did the agent's tool use pay off?):
- outcome counts, accuracy overall and by every grouping field the items carry (modality, category,
  sub-category, ...; "partial" while items errored), tokens, cost per role and item (bench.prices.run_cost);
- tool use: mean planner-issued tool calls per question, share of zero-tool questions, re-listen rate, and
  accuracy by number of calls in bins 0, 1, 2-3, 4-5, 6+ (front-end tool calls of the cascade are reported
  separately: they are a fixed perception pass, not the planner's choice);
- latency: mean, percentiles and a histogram of per-item wall time;
- when results carry a `confidence`: selective accuracy (the accuracy of confident answers, those with
  confidence >= audiomind.state.CONFIDENT_AT, their share of the scored items, and the accuracy of the rest)
  and calibration bins (confidence range -> accuracy, count), overall and per category.
Accuracy counts only items the benchmark's scorer could judge (`correct` not None).

A judge task's run (edit-eval, rubric-judge, aura: audiomind.bench.tasks.judging) gets a judge section
instead of the selective / calibration tables (its `confidence` is the verdict's p of the positive side, not
an answer's confidence): edit-eval's mean Edit_score, Faith_score and effectiveness per operation (add /
delete / replace), and where items carry labels each score's accuracy, ROC-AUC, reliability bins (a
reliability diagram PNG), ECE, and the share and accuracy of decisive verdicts (p <= 0.2 or >= 0.8).

When the run holds the task's own score file (MMAR's scores.json), its official and strict numbers, the
order-swapped item count and the meta file's sha256 are shown too. `compare_runs` (`bench report RUN --compare
OTHER`) sets two runs of the same items side by side (e.g. agent and `--mode direct`): accuracy, paired outcomes.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from audiomind.bench.prices import RunCost, run_cost
from audiomind.bench.runner import RUN_FILE, atomic_write_text, read_results
from audiomind.fsutil import load_json_file
from audiomind.paths import markdown_text as _md
from audiomind.paths import visible

REPORT_FILE = "report.md"
REPORT_JSON = "report.json"
GROUP_KEYS = ("modality", "category", "sub-category", "task", "subtask", "subset", "split", "difficulty", "kind",
              "group", "condition")
SELECTIVE_KEYS = ("category",)
# Calibration bins over confidence: [lo, hi), the last one closed.
CAL_BINS: tuple[tuple[float, float], ...] = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.0))
TOOL_BINS: tuple[tuple[str, int, float], ...] = (
    ("0", 0, 0), ("1", 1, 1), ("2-3", 2, 3), ("4-5", 4, 5), ("6+", 6, math.inf))
# Bins over all tool calls of a question, the front end's included (the cascade's perception pass makes ~8).
ALL_TOOL_BINS: tuple[tuple[str, int, float], ...] = (
    ("0", 0, 0), ("1-4", 1, 4), ("5-8", 5, 8), ("9-12", 9, 12), ("13+", 13, math.inf))


class Acc(BaseModel):
    n: int = 0
    scored: int = 0
    correct: int = 0
    accuracy: float | None = Field(default=None, description="percent of scored items")


class Behaviour(BaseModel):
    items: int
    mean_tool_calls: float | None
    zero_tool_share: float | None = Field(description="percent of items with no planner tool call")
    relisten_rate: float | None = Field(description="percent of items with at least one re-listen")
    mean_relistens: float | None
    mean_frontend_tool_calls: float | None
    mean_steps: float | None
    by_tool_calls: dict[str, Acc]
    by_all_tool_calls: dict[str, Acc] = Field(default_factory=dict, description="accuracy by all tool calls of a "
                                              "question, the front end's included (ALL_TOOL_BINS)")


class Latency(BaseModel):
    n: int
    mean_s: float | None = None
    p50_s: float | None = None
    p90_s: float | None = None
    p99_s: float | None = None
    max_s: float | None = None


class Selective(BaseModel):
    """Selective accuracy at a confidence threshold, over scored items (percentages)."""

    threshold: float
    scored: int
    with_confidence: int = Field(description="scored items that carry a confidence")
    confident: int
    coverage: float | None = Field(default=None, description="percent of scored items answered confidently")
    confident_correct: int = 0
    confident_accuracy: float | None = None
    rest: int = Field(default=0, description="scored items below the threshold or without a confidence")
    rest_correct: int = 0
    rest_accuracy: float | None = None


class CalBin(BaseModel):
    label: str
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    correct: int = 0
    accuracy: float | None = Field(default=None, description="percent")
    mean_confidence: float | None = None


class SideBySide(BaseModel):
    """One group's accuracy in two runs (percent of each run's scored items)."""

    a: Acc
    b: Acc
    delta: float | None = Field(default=None, description="accuracy of run a minus run b, in points")


class Comparison(BaseModel):
    """Two runs of the same benchmark side by side (e.g. the agent and the direct baseline)."""

    a_dir: str
    b_dir: str
    a_label: str
    b_label: str
    overall: SideBySide
    groups: dict[str, dict[str, SideBySide]] = Field(default_factory=dict)
    paired: dict[str, int] = Field(default_factory=dict, description="items scored in both runs: both_right, "
                                   "only_a, only_b, both_wrong")
    only_in_a: int = 0
    only_in_b: int = 0


class TaskScores(BaseModel):
    """The task's own score file of the run (MMAR's scores.json), in brief."""

    file: str
    official_accuracy: float | None = None
    official_scored: int | None = None
    strict_accuracy: float | None = None
    strict_total: int | None = None
    strict_missing: int | None = None
    order_swapped_count: int | None = None
    meta_path: str | None = None
    meta_sha256: str | None = None


# ---------------------------------------------------------------- judge tasks (edit-eval, rubric-judge, aura)

DECISIVE_AT = (0.2, 0.8)
"""A verdict is decisive when its p is <= 0.2 or >= 0.8."""
RELIABILITY_BINS = 10
"""Equal-width bins of p for the reliability diagram and the ECE."""
JUDGE_SCORERS: dict[str, tuple[tuple[str, str, float | None, bool], ...]] = {
    # kind -> (scorer name, figure key, decision threshold or None (ranking only), p is a probability)
    "edit": (("effectiveness", "effectiveness", 0.6, True), ("Edit_score", "edit_score", None, False),
             ("Faith agreement (-Faith_score)", "faith_agreement", None, False)),
    "rubric": (("rubric score", "rubric_score", None, True), ("holistic p_yes", "holistic_p_yes", 0.5, True)),
    "aura": (("AURA S", "aura", 0.5, True),),
}
"""The scores each judge's report tables against the labels; the first is the verdict (its accuracy is the
task's own `correct`: the rubric judge decides at its threshold and only with a verifiable item)."""


class RelBin(BaseModel):
    lo: float
    hi: float
    n: int = 0
    mean_p: float | None = None
    positive_rate: float | None = Field(default=None, description="share of items labelled positive (0-1)")


class VerdictScores(BaseModel):
    """One judge score against binary labels (1 = the positive side: effective edit, aligned, correct)."""

    scorer: str
    threshold: float | None = Field(default=None, description="decision threshold (None: ranked only)")
    n: int
    positives: int
    negatives: int
    accuracy: float | None = Field(default=None, description="percent")
    roc_auc: float | None = None
    probability: bool = Field(default=False, description="the score is read as p(positive): calibration shown")
    ece: float | None = Field(default=None, description="expected calibration error over RELIABILITY_BINS bins")
    decisive: int = 0
    decisive_share: float | None = Field(default=None, description="percent of items with p <= 0.2 or >= 0.8")
    decisive_correct: int = 0
    decisive_accuracy: float | None = Field(default=None, description="percent")
    bins: list[RelBin] = Field(default_factory=list)


class OperationScores(BaseModel):
    """edit-eval, one edit operation: mean scores of the judged pairs (and the verdict's accuracy on labels)."""

    operation: str
    n: int
    edit_score: float | None = None
    faith_score: float | None = None
    effectiveness: float | None = None
    effective_share: float | None = Field(default=None, description="percent judged 'effective'")
    labelled: int = 0
    accuracy: float | None = Field(default=None, description="percent of labelled items")


class JudgeReport(BaseModel):
    kind: str
    judged: int = Field(description="items the judge answered")
    labelled: int = Field(description="answered items with a label")
    operations: list[OperationScores] = Field(default_factory=list)
    operation_source: dict[str, int] = Field(default_factory=dict, description="row | judge -> items")
    verdicts: list[VerdictScores] = Field(default_factory=list)
    correlation: dict[str, float | None] | None = Field(default=None, description="aura: Pearson / Spearman of "
                                                        "S against every label (graded human scores included)")
    plots: dict[str, str] = Field(default_factory=dict)


def roc_auc(scores: list[float], labels: list[bool]) -> float | None:
    """Mann-Whitney AUC (ties count half); None when one class is missing."""
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def reliability(ps: list[float], labels: list[bool], n_bins: int = RELIABILITY_BINS) -> tuple[list[RelBin], float | None]:
    """Equal-width bins of p ([lo, hi), the last closed): mean p and share of positives; and the ECE
    (sum over bins of n_b / N * |mean p - positive rate|)."""
    bins = []
    ece = 0.0
    for i in range(n_bins):
        lo, hi = i / n_bins, (i + 1) / n_bins
        idx = [j for j, p in enumerate(ps) if lo <= p and (p < hi or (i == n_bins - 1 and p <= hi))]
        if not idx:
            bins.append(RelBin(lo=lo, hi=hi))
            continue
        mp = statistics.fmean(ps[j] for j in idx)
        pr = sum(1 for j in idx if labels[j]) / len(idx)
        ece += len(idx) / len(ps) * abs(mp - pr)
        bins.append(RelBin(lo=lo, hi=hi, n=len(idx), mean_p=round(mp, 4), positive_rate=round(pr, 4)))
    return bins, (round(ece, 4) if ps else None)


def verdict_scores(name: str, ps: list[float], labels: list[bool], threshold: float | None, probability: bool,
                   decisions: list[bool] | None = None) -> VerdictScores:
    """A score against binary labels: accuracy (of `decisions`, else p >= threshold), ROC-AUC and, for a
    probability, the reliability bins, ECE and the decisive verdicts (p <= 0.2 or >= 0.8) with their accuracy."""
    n = len(ps)
    vs = VerdictScores(scorer=name, threshold=threshold, n=n, positives=sum(labels), negatives=n - sum(labels),
                       roc_auc=roc_auc(ps, labels), probability=probability)
    if decisions is None and threshold is not None:
        decisions = [p >= threshold for p in ps]
    if decisions is not None and n:
        vs.accuracy = round(100.0 * sum(d == y for d, y in zip(decisions, labels)) / n, 2)
    if probability and n:
        vs.bins, vs.ece = reliability(ps, labels)
        lo, hi = DECISIVE_AT
        dec = [(p >= hi) == y for p, y in zip(ps, labels) if p <= lo or p >= hi]
        vs.decisive, vs.decisive_correct = len(dec), sum(dec)
        vs.decisive_share = round(100.0 * len(dec) / n, 2)
        vs.decisive_accuracy = round(100.0 * sum(dec) / len(dec), 2) if dec else None
    return vs


def judge_report(run_dir: str | Path, kind: str) -> JudgeReport:
    """The judge section of a judge task's run: per operation (edit-eval), and against the labels: accuracy,
    ROC-AUC, reliability bins, ECE and decisive verdicts of each score (JUDGE_SCORERS)."""
    from audiomind.bench.judge_rows import judge_rows

    rows = [r for r in judge_rows(run_dir, kind) if r.status == "answered"]
    binary = [r for r in rows if r.label in (0.0, 1.0)]
    rep = JudgeReport(kind=kind, judged=len(rows), labelled=sum(1 for r in rows if r.label is not None))
    if kind == "edit":
        rep.operation_source = dict(Counter(r.operation_from or "unknown" for r in rows))
        by: dict[str, list[Any]] = defaultdict(list)
        for r in rows:
            by[r.operation or "unknown"].append(r)
        from audiomind.bench.judge_rows import OPERATIONS

        names = [o for o in OPERATIONS if o in by] + sorted(k for k in by if k not in OPERATIONS)
        for name, rs in [(o, by[o]) for o in names] + ([("all", rows)] if rows else []):
            fig = [r.figures for r in rs]
            lab = [r for r in rs if r.correct is not None]
            rep.operations.append(OperationScores(
                operation=name, n=len(rs),
                edit_score=_mean([f["edit_score"] for f in fig if f.get("edit_score") is not None], 4),
                faith_score=_mean([f["faith_score"] for f in fig if f.get("faith_score") is not None], 4),
                effectiveness=_mean([f["effectiveness"] for f in fig if f.get("effectiveness") is not None], 4),
                effective_share=_pct(sum(1 for f in fig if f.get("effectiveness_label") == "effective"), len(rs)),
                labelled=len(lab), accuracy=_pct(sum(1 for r in lab if r.correct), len(lab))))
    for i, (name, key, thr, prob) in enumerate(JUDGE_SCORERS.get(kind, ())):
        have = [r for r in binary if r.figures.get(key) is not None]
        if not have:
            continue
        decisions = [r.prediction == {"edit": "effective", "rubric": "aligned", "aura": "correct"}[kind]
                     for r in have] if i == 0 else None
        rep.verdicts.append(verdict_scores(name, [float(r.figures[key]) for r in have],
                                           [r.label == 1.0 for r in have], thr, prob, decisions))
    if kind == "aura":
        from audiomind.judges.aura import correlations

        graded = [r for r in rows if r.label is not None and r.figures.get("aura") is not None]
        rep.correlation = correlations([float(r.figures["aura"]) for r in graded], [float(r.label or 0.0) for r in graded])
    return rep


def judge_table(rep: JudgeReport) -> Any:
    """The judge section as a rich table (printed after `bench run` of a judge task)."""
    from rich.table import Table

    t = Table("group", "measure", "value", title=f"{rep.kind} judge: {rep.judged} judged, {rep.labelled} labelled")
    for o in rep.operations:
        t.add_row(f"operation {o.operation} (n={o.n})", "Edit_score / Faith_score / effectiveness / effective %",
                  f"{_fmt4(o.edit_score)} / {_fmt4(o.faith_score)} / {_fmt4(o.effectiveness)} / {_fmt(o.effective_share)}"
                  + (f"; accuracy {_fmt(o.accuracy)}% of {o.labelled}" if o.labelled else ""))
    for v in rep.verdicts:
        t.add_row(v.scorer, "accuracy % / ROC-AUC / ECE / decisive % (their accuracy %)",
                  f"{_fmt(v.accuracy)} / {_fmt4(v.roc_auc)} / {_fmt4(v.ece)} / {_fmt(v.decisive_share)} "
                  f"({_fmt(v.decisive_accuracy)})")
    if rep.correlation:
        t.add_row("AURA S vs labels", "Pearson / Spearman",
                  f"{_fmt4(rep.correlation.get('pearson'))} / {_fmt4(rep.correlation.get('spearman'))}")
    return t


def _fmt4(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _judge_lines(rep: JudgeReport | None) -> list[str]:
    if rep is None:
        return []
    out = [f"## Judge: {_md(rep.kind)}", "",
           (f"Items judged: {rep.judged}; with a label: {rep.labelled}. Each item's figures come from its trace "
            "(the judge's typed result)."), ""]
    if rep.operations:
        src = ", ".join(f"{_md(k)}: {v}" for k, v in sorted(rep.operation_source.items()))
        out += [f"### Per operation (operation from: {src})", "",
                "| operation | n | Edit_score | Faith_score | effectiveness | effective % | labelled | accuracy % |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        out += [(f"| {_md(o.operation)} | {o.n} | {_fmt4(o.edit_score)} | {_fmt4(o.faith_score)} | "
                 f"{_fmt4(o.effectiveness)} | {_fmt(o.effective_share)} | {o.labelled} | {_fmt(o.accuracy)} |")
                for o in rep.operations]
        out += ["", ("Edit_score and Faith_score are the seed's Eqs. 2-3 (Faith_score as printed: negative, lower = "
                     "more agreement); effectiveness is the measured score of the instructed change (effective at "
                     ">= 0.6)."), ""]
    if rep.verdicts:
        lo, hi = DECISIVE_AT
        out += ["### Against the labels", "",
                (f"Decisive: p <= {lo:g} or p >= {hi:g}. ECE over {RELIABILITY_BINS} equal-width bins of p. "
                 "Accuracy of the first score is the judge's own verdict."), "",
                "| score | n (pos / neg) | threshold | accuracy % | ROC-AUC | ECE | decisive % | decisive accuracy % |",
                "|---|---|---:|---:|---:|---:|---:|---:|"]
        for v in rep.verdicts:
            out.append(f"| {v.scorer} | {v.n} ({v.positives} / {v.negatives}) | "
                       f"{'verdict' if v.threshold is None and v.accuracy is not None else _fmt(v.threshold)} | "
                       f"{_fmt(v.accuracy)} | {_fmt4(v.roc_auc)} | {_fmt4(v.ece)} | {_fmt(v.decisive_share)} | "
                       f"{_fmt(v.decisive_accuracy)} |")
        out.append("")
        for v in rep.verdicts:
            if v.probability:
                out += [f"Reliability of {v.scorer}:", "", "| p bin | n | mean p | positive rate |",
                        "|---|---:|---:|---:|"]
                out += [f"| {b.lo:.1f}-{b.hi:.1f} | {b.n} | {_fmt4(b.mean_p)} | {_fmt4(b.positive_rate)} |"
                        for b in v.bins if b.n]
                out.append("")
        if "reliability" in rep.plots:
            out += [f"![reliability diagram]({rep.plots['reliability']})", ""]
    if rep.correlation is not None:
        c = rep.correlation
        out += [(f"AURA S against every label (graded scores included): Pearson {_fmt4(c.get('pearson'))}, "
                 f"Spearman {_fmt4(c.get('spearman'))}."), ""]
    return out


def _plot_reliability(path: Path, rep: JudgeReport) -> Path | None:
    probs = [v for v in rep.verdicts if v.probability and v.n]
    if not probs:
        return None
    plt = _plt()
    fig, (ax, axh) = plt.subplots(2, 1, figsize=(6, 6.4), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    ax.plot([0, 1], [0, 1], "k--", linewidth=1, label="perfect calibration")
    width = 1.0 / RELIABILITY_BINS / (len(probs) + 1)
    for k, v in enumerate(probs):
        pts = [b for b in v.bins if b.n]
        line, = ax.plot([b.mean_p for b in pts], [b.positive_rate for b in pts], "o-",
                        label=f"{v.scorer} (ECE {_fmt4(v.ece)}, AUC {_fmt4(v.roc_auc)})")
        axh.bar([b.lo + (k + 0.5) * width for b in v.bins], [b.n for b in v.bins], width=width, color=line.get_color())
    for x in DECISIVE_AT:
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
    ax.set(xlim=(0, 1), ylim=(-0.02, 1.02), ylabel="share labelled positive",
           title=f"Reliability of the {_label(rep.kind)} judge's verdicts (n={probs[0].n})")
    ax.legend(fontsize=8, loc="upper left")
    axh.set(xlabel="p (the verdict's probability of the positive side)", ylabel="items")
    return _save(plt, fig, path)


class Report(BaseModel):
    run_dir: str
    benchmarks: list[str]
    statuses: dict[str, int]
    overall: Acc
    groups: dict[str, dict[str, Acc]]
    behaviour: Behaviour
    latency: Latency
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cost: RunCost | None = Field(default=None, description="per role and item, unpriced backends, cache hits")
    config: dict[str, Any] = Field(default_factory=dict)
    plots: dict[str, str] = Field(default_factory=dict)
    selective: Selective | None = Field(default=None, description="present when results carry confidences")
    selective_by: dict[str, dict[str, Selective]] = Field(default_factory=dict)
    calibration: list[CalBin] = Field(default_factory=list)
    calibration_by: dict[str, dict[str, list[CalBin]]] = Field(default_factory=dict)
    ece: float | None = Field(default=None, description="expected calibration error of the answers' confidence "
                              "(RELIABILITY_BINS equal-width bins)")
    coverage_curve: list[tuple[float, float, float | None]] = Field(
        default_factory=list, description="(confidence threshold, coverage %, accuracy % of the answers at or above it)")
    task_scores: TaskScores | None = Field(default=None, description="the task's own score file, when the run has one")
    skipped_lines: int = Field(default=0, description="lines of results.jsonl left out: unreadable or not result rows")
    comparison: Comparison | None = Field(default=None, description="set side by side with another run")
    judge: JudgeReport | None = Field(default=None, description="a judge task's run (edit-eval, rubric-judge, aura)")


def task_scores(run_dir: Path) -> TaskScores | None:
    """The brief of RUN_DIR/scores.json (MMAR's official file), or None when the run has none."""
    path = run_dir / "scores.json"
    if not path.exists():
        return None
    d = load_json_file(path)  # the bounded reader (fsutil): a FIFO, a device or a huge file is one clear error
    if not isinstance(d, dict):
        return None
    strict = d["strict"] if isinstance(d.get("strict"), dict) else {}
    try:
        return TaskScores(file=path.name, official_accuracy=d.get("accuracy"), official_scored=d.get("scored"),
                          strict_accuracy=strict.get("accuracy"), strict_total=strict.get("total"),
                          strict_missing=strict.get("missing"), order_swapped_count=d.get("order_swapped_count"),
                          meta_path=d.get("meta_path"), meta_sha256=d.get("meta_sha256"))
    except ValidationError:  # a hand-made or hostile scores.json: not shown
        return None


def _acc(rows: list[dict[str, Any]]) -> Acc:
    scored = [r for r in rows if r.get("correct") is not None]
    correct = sum(1 for r in scored if r.get("correct"))
    return Acc(n=len(rows), scored=len(scored), correct=correct,
               accuracy=round(100.0 * correct / len(scored), 2) if scored else None)


def _mean(xs: list[float], digits: int = 3) -> float | None:
    return round(statistics.fmean(xs), digits) if xs else None


def percentile(xs: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return round(s[lo] + (s[hi] - s[lo]) * (k - lo), 3)


def tool_bin(n: int, bins: tuple[tuple[str, int, float], ...] = TOOL_BINS) -> str:
    for label, lo, hi in bins:
        if lo <= n <= hi:
            return label
    return bins[-1][0]


def _pct(k: int, n: int) -> float | None:
    return round(100.0 * k / n, 2) if n else None


def _confidence(r: dict[str, Any]) -> float | None:
    c = r.get("confidence")
    return None if c is None else float(c)


def selective(rows: Iterable[dict[str, Any]], threshold: float | None = None) -> Selective:
    """Accuracy of the confident answers (confidence >= threshold, default CONFIDENT_AT), their share of the
    scored items (coverage), and the accuracy of the rest (lower or no confidence)."""
    if threshold is None:
        from audiomind.state import CONFIDENT_AT

        threshold = CONFIDENT_AT
    scored = [r for r in rows if r.get("correct") is not None]
    conf = [r for r in scored if (c := _confidence(r)) is not None and c >= threshold]
    rest = [r for r in scored if not ((c := _confidence(r)) is not None and c >= threshold)]
    cc, rc = sum(1 for r in conf if r.get("correct")), sum(1 for r in rest if r.get("correct"))
    return Selective(threshold=threshold, scored=len(scored),
                     with_confidence=sum(1 for r in scored if _confidence(r) is not None),
                     confident=len(conf), coverage=_pct(len(conf), len(scored)), confident_correct=cc,
                     confident_accuracy=_pct(cc, len(conf)), rest=len(rest), rest_correct=rc,
                     rest_accuracy=_pct(rc, len(rest)))


def calibration(rows: Iterable[dict[str, Any]], bins: tuple[tuple[float, float], ...] = CAL_BINS) -> list[CalBin]:
    """Scored items by confidence bin ([lo, hi), the last bin closed) -> accuracy and count; items without a
    confidence are counted in a final "none" bin."""
    scored = [r for r in rows if r.get("correct") is not None]
    out: list[CalBin] = []
    for i, (lo, hi) in enumerate(bins):
        last = i == len(bins) - 1
        xs = [r for r in scored if (c := _confidence(r)) is not None and lo <= c and (c < hi or (last and c <= hi))]
        k = sum(1 for r in xs if r.get("correct"))
        mean = round(statistics.fmean(_confidence(r) or 0.0 for r in xs), 3) if xs else None
        out.append(CalBin(label=f"{lo:.1f}-{hi:.1f}", lo=lo, hi=hi, n=len(xs), correct=k, accuracy=_pct(k, len(xs)),
                          mean_confidence=mean))
    none = [r for r in scored if _confidence(r) is None]
    k = sum(1 for r in none if r.get("correct"))
    out.append(CalBin(label="none", n=len(none), correct=k, accuracy=_pct(k, len(none))))
    return out


def answer_calibration(rows: Iterable[dict[str, Any]]) -> tuple[float | None, list[tuple[float, float, float | None]]]:
    """(ECE of the answers' confidence, the coverage-accuracy curve): for each threshold 0, 0.1, ... 0.9 the
    share of scored answers at or above it and their accuracy."""
    scored = [(float(c), bool(r.get("correct"))) for r in rows
              if r.get("correct") is not None and (c := _confidence(r)) is not None]
    if not scored:
        return None, []
    _, ece = reliability([c for c, _ in scored], [y for _, y in scored])
    curve = []
    for t in [i / 10 for i in range(10)]:
        above = [y for c, y in scored if c >= t]
        curve.append((t, round(100.0 * len(above) / len(scored), 2), _pct(sum(above), len(above))))
    return ece, curve


def results(run_dir: str | Path) -> tuple[dict[str, dict[str, Any]], int]:
    """(runner.read_results's rows that are result rows, how many non-blank lines were left out: unreadable or not)."""
    from audiomind.bench.items import ItemResult

    rows, skipped = read_results(run_dir)
    out: dict[str, dict[str, Any]] = {}
    for key, row in rows.items():
        try:
            ItemResult.model_validate(row)
        except (ValidationError, ValueError, OverflowError):
            skipped += 1
        else:
            out[key] = row
    return out, skipped


def _by(rows: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    """Rows by the value of one of their metadata fields (rows without it left out)."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        v = (r.get("metadata") or {}).get(key)
        if v is not None and v != "":
            by[str(v)].append(r)
    return by


def run_config(run_dir: Path) -> dict[str, Any]:
    """The `config` recorded in RUN_DIR/run.json ({} when there is none)."""
    if not (run_dir / RUN_FILE).exists():
        return {}
    d = load_json_file(run_dir / RUN_FILE)
    return d["config"] if isinstance(d, dict) and isinstance(d.get("config"), dict) else {}


def run_label(run_dir: Path) -> str:
    """How a run is named in a comparison: its mode (agent / direct) and its folder name."""
    mode = run_config(run_dir).get("mode") or "agent"
    return f"{mode} ({run_dir.name})"


def _side(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> SideBySide:
    aa, bb = _acc(a), _acc(b)
    delta = round(aa.accuracy - bb.accuracy, 2) if aa.accuracy is not None and bb.accuracy is not None else None
    return SideBySide(a=aa, b=bb, delta=delta)


def compare_runs(run_a: str | Path, run_b: str | Path, group_keys: Iterable[str] = GROUP_KEYS) -> Comparison:
    """Two runs side by side: accuracy overall and per group value (every grouping field either run's items
    carry), and, over the items scored in both, how often each run alone was right."""
    run_a, run_b = Path(run_a), Path(run_b)
    ra, rb = results(run_a)[0], results(run_b)[0]
    rows_a, rows_b = list(ra.values()), list(rb.values())
    groups: dict[str, dict[str, SideBySide]] = {}
    for key in group_keys:
        by_a, by_b = _by(rows_a, key), _by(rows_b, key)
        if by_a or by_b:
            groups[key] = {k: _side(by_a.get(k, []), by_b.get(k, [])) for k in sorted(set(by_a) | set(by_b))}
    paired: Counter[str] = Counter()
    for i in set(ra) & set(rb):
        ca, cb = ra[i].get("correct"), rb[i].get("correct")
        if ca is None or cb is None:
            continue
        paired["both_right" if ca and cb else "only_a" if ca else "only_b" if cb else "both_wrong"] += 1
    return Comparison(a_dir=str(run_a), b_dir=str(run_b), a_label=run_label(run_a), b_label=run_label(run_b),
                      overall=_side(rows_a, rows_b), groups=groups,
                      paired={k: paired.get(k, 0) for k in ("both_right", "only_a", "only_b", "both_wrong")},
                      only_in_a=len(set(ra) - set(rb)), only_in_b=len(set(rb) - set(ra)))


def build_report(run_dir: str | Path, group_keys: Iterable[str] = GROUP_KEYS) -> Report:
    """The numbers of the report (no files written)."""
    run_dir = Path(run_dir)
    typed, skipped = results(run_dir)
    rows = list(typed.values())
    ran = [r for r in rows if r.get("status") != "missing_audio"]
    groups = {key: {k: _acc(v) for k, v in sorted(by.items())} for key in group_keys if (by := _by(rows, key))}
    calls = [int(r.get("tool_calls") or 0) for r in ran]
    bins: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in TOOL_BINS}
    all_bins: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in ALL_TOOL_BINS}
    for r in ran:
        bins[tool_bin(int(r.get("tool_calls") or 0))].append(r)
        all_calls = int(r.get("tool_calls") or 0) + int(r.get("frontend_tool_calls") or 0)
        all_bins[tool_bin(all_calls, ALL_TOOL_BINS)].append(r)
    behaviour = Behaviour(
        items=len(ran),
        mean_tool_calls=_mean([float(c) for c in calls]),
        zero_tool_share=round(100.0 * sum(1 for c in calls if c == 0) / len(calls), 2) if calls else None,
        relisten_rate=round(100.0 * sum(1 for r in ran if (r.get("relistens") or 0) > 0) / len(ran), 2) if ran else None,
        mean_relistens=_mean([float(r.get("relistens") or 0) for r in ran]),
        mean_frontend_tool_calls=_mean([float(r.get("frontend_tool_calls") or 0) for r in ran]),
        mean_steps=_mean([float(r.get("steps") or 0) for r in ran]),
        by_tool_calls={k: _acc(v) for k, v in bins.items()},
        by_all_tool_calls={k: _acc(v) for k, v in all_bins.items()},
    )
    times = [float(r.get("wall_time_s") or 0.0) for r in ran]
    latency = Latency(n=len(times), mean_s=_mean(times), p50_s=percentile(times, 50), p90_s=percentile(times, 90),
                      p99_s=percentile(times, 99), max_s=round(max(times), 3) if times else None)
    cost = run_cost(rows)
    config = run_config(run_dir)
    rep = Report(
        run_dir=str(run_dir), benchmarks=sorted({r.get("benchmark") or "" for r in rows} - {""}),
        statuses=dict(Counter(r.get("status", "?") for r in rows)), overall=_acc(rows), groups=groups,
        behaviour=behaviour, latency=latency,
        input_tokens=sum(int(r.get("input_tokens") or 0) for r in rows),
        output_tokens=sum(int(r.get("output_tokens") or 0) for r in rows),
        cost_usd=cost.cost_usd, cost=cost, config=config, task_scores=task_scores(run_dir), skipped_lines=skipped,
    )
    if config.get("judge"):  # a judge task: `confidence` is the verdict's p(positive), tabled in its own section
        rep.judge = judge_report(run_dir, str(config["judge"]))
    elif any(r.get("confidence") is not None for r in rows):
        rep.selective = selective(rows)
        rep.calibration = calibration(rows)
        rep.ece, rep.coverage_curve = answer_calibration(rows)
        for key in SELECTIVE_KEYS:
            by = _by(rows, key)
            if by:
                rep.selective_by[key] = {k: selective(v) for k, v in sorted(by.items())}
                rep.calibration_by[key] = {k: calibration(v) for k, v in sorted(by.items())}
    return rep


# ---------------------------------------------------------------- plots


def _plot_answer_calibration(path: Path, rep: Report) -> Path | None:
    """The answers' reliability diagram (accuracy per confidence bin against the diagonal) beside the
    coverage-accuracy curve."""
    bins = [b for b in rep.calibration if b.n and b.mean_confidence is not None and b.accuracy is not None]
    if not bins:
        return None
    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4))
    ax1.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    ax1.plot([b.mean_confidence for b in bins], [(b.accuracy or 0.0) / 100 for b in bins], marker="o",
             label=f"answers (ECE {rep.ece:.3f})")
    for b in bins:
        ax1.annotate(str(b.n), (b.mean_confidence, (b.accuracy or 0.0) / 100), textcoords="offset points", xytext=(4, 4))
    ax1.set(xlabel="confidence", ylabel="accuracy", xlim=(0, 1), ylim=(0, 1.05), title="reliability")
    ax1.legend(loc="upper left", fontsize=8)
    pts = [(cov, acc) for _, cov, acc in rep.coverage_curve if acc is not None]
    ax2.plot([c for c, _ in pts], [a for _, a in pts], marker="o")
    ax2.set(xlabel="coverage % (answers at or above a confidence threshold)", ylabel="accuracy %",
            title="coverage vs accuracy", xlim=(0, 105))
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    return path


def _label(text: str) -> str:
    """Text from the run's files as a plot label: control characters shown, `$` not taken for mathtext."""
    return visible(text).replace("$", r"\$")


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bar_accuracy(path: Path, title: str, table: dict[str, Acc], most: int = 40) -> Path:
    """Accuracy per group value, the `most` most scored ones (a run may carry any number of values)."""
    plt = _plt()
    names = sorted((k for k, a in table.items() if a.scored), key=lambda k: -table[k].scored)[:most]
    vals = [table[k].accuracy or 0.0 for k in names]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.55 * len(names) + 2.5), 4.2))
    bars = ax.bar(range(len(names)), vals, color="#4c72b0")
    for b, k in zip(bars, names):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 1, f"n={table[k].scored}", ha="center", fontsize=7)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([_label(k[:40]) for k in names], rotation=35, ha="right", fontsize=8)
    ax.set(ylim=(0, 108), ylabel="accuracy (%)", title=title)
    return _save(plt, fig, path)


def _plot_tools(path: Path, b: Behaviour) -> Path:
    """Questions and accuracy by tool calls per question: the planner's own calls, and all calls (the front
    end's perception pass included: on the default stack the cascade makes ~8 while the planner may make none)."""
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    panels = [("planner tool calls per question", b.by_tool_calls),
              ("all tool calls per question (front end included)", b.by_all_tool_calls)]
    panels = [(x, d) for x, d in panels if d]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (xlabel, by) in zip(axes[0], panels):
        labels = list(by)
        counts = [by[k].n for k in labels]
        accs = [by[k].accuracy for k in labels]
        ax.bar(labels, counts, color="#dd8452", alpha=0.75, label="questions")
        ax.set(xlabel=xlabel, ylabel="questions")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax2 = ax.twinx()
        xs = [i for i, a in enumerate(accs) if a is not None]
        ax2.plot(xs, [accs[i] for i in xs], "o-", color="#4c72b0", label="accuracy")
        ax2.set(ylim=(0, 105), ylabel="accuracy (%)")
    fig.suptitle("Tool calls vs accuracy")
    return _save(plt, fig, path)


def _plot_latency(path: Path, times: list[float]) -> Path:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    if times:
        ax.hist(times, bins=min(30, max(5, len(times) // 2)), color="#55a868")
        for q, style in ((50, "--"), (90, ":")):
            v = percentile(times, q)
            if v is not None:
                ax.axvline(v, color="k", linestyle=style, linewidth=1, label=f"p{q} {v:.2f} s")
        ax.legend()
    ax.set(xlabel="wall time per item (s)", ylabel="items", title="Latency distribution")
    return _save(plt, fig, path)


# ---------------------------------------------------------------- markdown


def _fmt(x: float | None, suffix: str = "") -> str:
    return "-" if x is None else f"{x:.2f}{suffix}"


def _acc_table(title: str, table: dict[str, Acc]) -> list[str]:
    lines = [f"| {title} | n | scored | correct | accuracy % |", "|---|---:|---:|---:|---:|"]
    for k, a in table.items():
        lines.append(f"| {_md(k)} | {a.n} | {a.scored} | {a.correct} | {_fmt(a.accuracy)} |")
    return lines


def _selective_lines(rep: Report) -> list[str]:
    sel = rep.selective
    if sel is None:
        return []
    out = ["## Selective accuracy", "",
           (f"A confident answer has confidence >= {sel.threshold:g}; coverage is their share of the scored items. "
            f"{sel.with_confidence} of {sel.scored} scored items carry a confidence."), "",
           "| group | scored | confident | coverage % | confident accuracy % | rest | rest accuracy % |",
           "|---|---:|---:|---:|---:|---:|---:|"]

    def row(name: str, s: Selective) -> str:
        return (f"| {name} | {s.scored} | {s.confident} | {_fmt(s.coverage)} | {_fmt(s.confident_accuracy)} | "
                f"{s.rest} | {_fmt(s.rest_accuracy)} |")

    out.append(row("**all**", sel))
    for key, table in rep.selective_by.items():
        out += [row(f"{key}: {_md(name)}", s) for name, s in table.items()]
    out += ["", "## Calibration", "", "| group | confidence | n | correct | accuracy % | mean confidence |",
            "|---|---|---:|---:|---:|---:|"]

    def bins(name: str, cal: list[CalBin]) -> list[str]:
        return [f"| {name} | {b.label} | {b.n} | {b.correct} | {_fmt(b.accuracy)} | {_fmt(b.mean_confidence)} |"
                for b in cal if b.n]

    out += bins("**all**", rep.calibration)
    for key, cals in rep.calibration_by.items():
        for name, cal in cals.items():
            out += bins(f"{key}: {_md(name)}", cal)
    if rep.ece is not None:
        out += ["", f"Expected calibration error (ECE, {RELIABILITY_BINS} equal-width bins): {rep.ece:.4f}.", "",
                "| answers with confidence >= | coverage % | accuracy % |", "|---:|---:|---:|"]
        out += [f"| {t:g} | {_fmt(cov)} | {_fmt(acc)} |" for t, cov, acc in rep.coverage_curve]
        if "calibration" in rep.plots:
            out += ["", f"![reliability and coverage]({rep.plots['calibration']})"]
    return out + [""]


def _task_score_lines(ts: TaskScores | None) -> list[str]:
    if ts is None:
        return []
    out = [f"## Official and strict scores ({ts.file})", "", "| measure | value |", "|---|---:|",
           f"| official accuracy % (rows with a prediction) | {_fmt(ts.official_accuracy)} |"]
    if ts.official_scored is not None:
        out.append(f"| rows scored officially | {ts.official_scored} |")
    if ts.strict_total is not None:
        out += [f"| strict accuracy % (missing = wrong, exact option) | {_fmt(ts.strict_accuracy)} |",
                f"| rows scored strictly (missing predictions) | {ts.strict_total} ({ts.strict_missing or 0}) |"]
    if ts.order_swapped_count is not None:
        out.append(f"| order-swapped items (options sharing a word set) | {ts.order_swapped_count} |")
    out.append(f"| meta sha256 | {_md(ts.meta_sha256 or 'not recorded')} |")
    if ts.meta_path:
        out.append(f"| meta file | {_md(ts.meta_path)} |")
    return out + [""]


def comparison_lines(c: Comparison | None) -> list[str]:
    """The side-by-side section of a report (or [] without a comparison)."""
    if c is None:
        return []

    def cells(sb: SideBySide) -> str:
        return (f"{_fmt(sb.a.accuracy)} | {sb.a.correct} / {sb.a.scored} | {_fmt(sb.b.accuracy)} | "
                f"{sb.b.correct} / {sb.b.scored} | {'-' if sb.delta is None else f'{sb.delta:+.2f}'}")

    out = [f"## {_md(c.a_label)} vs {_md(c.b_label)}", "",
           f"Run a: {_md(c.a_dir)}; run b: {_md(c.b_dir)}. Accuracy is over each run's scored items.", "",
           "| group | value | a accuracy % | a correct / scored | b accuracy % | b correct / scored | a - b |",
           "|---|---|---:|---:|---:|---:|---:|", f"| overall | all | {cells(c.overall)} |"]
    for key, table in c.groups.items():
        out += [f"| {key} | {_md(name)} | {cells(sb)} |" for name, sb in table.items()]
    p = c.paired
    out += ["", f"Items scored in both runs: {sum(p.values())}; both right {p.get('both_right', 0)}, only a right "
            f"{p.get('only_a', 0)}, only b right {p.get('only_b', 0)}, both wrong {p.get('both_wrong', 0)}."
            + (f" Items only in a: {c.only_in_a}; only in b: {c.only_in_b}." if c.only_in_a or c.only_in_b else ""),
            ""]
    return out


def render_markdown(rep: Report) -> str:
    out = [f"# Benchmark report: {_md(Path(rep.run_dir).name)}", ""]  # every text from the run's files: _md
    if rep.benchmarks:
        out.append(f"Benchmark(s): {_md(', '.join(rep.benchmarks))}  ")
    if rep.config:
        keys = ("mode", "planner", "frontend", "workers", "max_steps", "meta", "audio_dir")
        cfg = ", ".join(f"{k}={_md(rep.config[k])}" for k in keys if k in rep.config)
        if cfg:
            out.append(f"Configuration: {cfg}  ")
    o = rep.overall
    partial = f" (partial: {rep.statuses['error']} errors, not scored)" if rep.statuses.get("error") else ""
    out += [f"Items: {o.n}; scored: {o.scored}; correct: {o.correct}; **accuracy: {_fmt(o.accuracy, ' %')}**{partial}", ""]
    out += [f"**{rep.skipped_lines} line(s) of results.jsonl were left out**: unreadable or not result rows.", ""
            ] if rep.skipped_lines else []
    out += ["## Outcomes", "", "| status | items |", "|---|---:|"]
    out += [f"| {_md(k)} | {v} |" for k, v in sorted(rep.statuses.items())]
    tokens = rep.input_tokens + rep.output_tokens
    cost = _md((rep.cost or RunCost()).line())
    out += ["", f"Tokens: {rep.input_tokens:,} in + {rep.output_tokens:,} out = {tokens:,}; {cost}", ""]
    out += _task_score_lines(rep.task_scores)
    out += _judge_lines(rep.judge)
    out += comparison_lines(rep.comparison)
    for key, table in rep.groups.items():
        out += [f"## Accuracy by {key}", ""] + _acc_table(key, table) + [""]
        if key in rep.plots:
            out += [f"![accuracy by {key}]({rep.plots[key]})", ""]
    b = rep.behaviour
    out += [
        "## Tool use and accuracy", "",
        "| measure | value |", "|---|---:|",
        f"| questions that ran | {b.items} |",
        f"| mean planner tool calls per question | {_fmt(b.mean_tool_calls)} |",
        f"| questions with zero planner tool calls | {_fmt(b.zero_tool_share, ' %')} |",
        f"| re-listen rate (questions with >= 1 re-listen) | {_fmt(b.relisten_rate, ' %')} |",
        f"| mean re-listens per question | {_fmt(b.mean_relistens)} |",
        f"| mean front-end tool calls per question | {_fmt(b.mean_frontend_tool_calls)} |",
        f"| mean evidence-loop decisions per question | {_fmt(b.mean_steps)} |", "",
    ] + _acc_table("planner tool calls", b.by_tool_calls) + [""] + (
        _acc_table("all tool calls (front end included)", b.by_all_tool_calls) + [""] if b.by_all_tool_calls else [])
    if "tools" in rep.plots:
        out += [f"![tool calls vs accuracy]({rep.plots['tools']})", ""]
    out += _selective_lines(rep)
    lat = rep.latency
    out += ["## Latency", "", "| n | mean s | p50 s | p90 s | p99 s | max s |", "|---:|---:|---:|---:|---:|---:|",
            (f"| {lat.n} | {_fmt(lat.mean_s)} | {_fmt(lat.p50_s)} | {_fmt(lat.p90_s)} | {_fmt(lat.p99_s)} | "
             f"{_fmt(lat.max_s)} |"), ""]
    if "latency" in rep.plots:
        out += [f"![latency]({rep.plots['latency']})", ""]
    return "\n".join(out)


def write_report(run_dir: str | Path, group_keys: Iterable[str] = GROUP_KEYS, plots: bool = True,
                 compare: str | Path | None = None) -> Path:
    """RUN_DIR/report.md (+ report.json and PNG plots under RUN_DIR/plots/); returns the report path. With
    `compare` (another run directory of the same items) the two runs are set side by side."""
    run_dir = Path(run_dir)
    rep = build_report(run_dir, group_keys)
    if compare is not None:
        rep.comparison = compare_runs(run_dir, compare, group_keys)
    if plots:
        pdir = run_dir / "plots"
        pdir.mkdir(parents=True, exist_ok=True)
        for key, table in rep.groups.items():
            if any(a.scored for a in table.values()):
                name = f"accuracy_by_{key.replace('-', '_')}.png"
                _bar_accuracy(pdir / name, f"Accuracy by {key}", table)
                rep.plots[key] = f"plots/{name}"
        _plot_tools(pdir / "tool_calls_vs_accuracy.png", rep.behaviour)
        rep.plots["tools"] = "plots/tool_calls_vs_accuracy.png"
        times = [float(r.get("wall_time_s") or 0) for r in results(run_dir)[0].values()
                 if r.get("status") != "missing_audio"]
        _plot_latency(pdir / "latency.png", times)
        rep.plots["latency"] = "plots/latency.png"
        if rep.ece is not None and _plot_answer_calibration(pdir / "calibration.png", rep) is not None:
            rep.plots["calibration"] = "plots/calibration.png"
        if rep.judge is not None and _plot_reliability(pdir / "reliability.png", rep.judge) is not None:
            rep.judge.plots["reliability"] = "plots/reliability.png"
    atomic_write_text(run_dir / REPORT_JSON, rep.model_dump_json(indent=2) + "\n")
    return atomic_write_text(run_dir / REPORT_FILE, render_markdown(rep) + "\n")
