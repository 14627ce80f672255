"""Question analysis for the offline stack: which kinds of evidence a question and its choices call for.

Transparent and written into the plan's rationale. Two signals, neither hinging on one wording:
- the question's meaning, by MiniLM similarity to many paraphrases per family of question (prototypes in
  data/families.toml, written as generic examples of each family, not copied from any benchmark);
- the choices' shape: numbers, times, days, comparatives, first/second, negations, languages, sides,
  genders, trend words. Choices carry as much signal as the question.
The cue words of both are patterns in data/cues.toml (audiomind.language.cues). Time focus comes only from explicit spans ("in the first 3 seconds", "at the end of the clip"), never from
an ordinal that refers to an item ("the first note").
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from audiomind.language import cues
from audiomind.language.frames import QuestionFrame
from audiomind.language.numbers import DAYS, count_in
from audiomind.language.question import Reader, read_question

FAMILIES_DATA = Path(__file__).parent / "data" / "families.toml"
SHAPES_DATA = Path(__file__).parent / "data" / "choice_shapes.toml"


class Named(Protocol):
    """Anything with a name (a tool manifest): the analysis needs only the names of the available tools."""

    name: str


@lru_cache(maxsize=1)
def _families() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    raw = tomllib.loads(FAMILIES_DATA.read_text(encoding="utf-8"))
    return {fam: (tuple(row["prototypes"]), tuple(row["tools"])) for fam, row in raw.items()}


# Families of questions, each with generic paraphrases (prototypes) and the tools whose evidence it needs
# (data/families.toml).
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = _families()

# how choices name a change of level over time (the loudness-trend verifier reads the same table)
TREND_WORDS: dict[str, re.Pattern[str]] = cues.section("trend")


class TimeSpan(BaseModel):
    start_s: float | None = Field(description="None = from the clip's start")
    end_s: float | None = Field(description="None = to the clip's end")
    where: str
    length_s: float | None = None


class QuestionAnalysis(BaseModel):
    question: str
    choices: list[str] = Field(default_factory=list)
    families: dict[str, float] = Field(default_factory=dict, description="family -> relevance 0..1")
    steps: list[str] = Field(default_factory=list, description="reasoning steps on top of perception")
    unsupported_step: str | None = Field(default=None, description="a step the policy cannot take, if any")
    time_span: TimeSpan | None = None
    tools: list[str] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    similar_tools: list[tuple[str, float]] = Field(default_factory=list)
    rationale: str = ""
    frame: QuestionFrame | None = Field(default=None, description="the typed reading of the question")

    @property
    def primary(self) -> str:
        return max(self.families, key=lambda f: self.families[f]) if self.families else "general"

    @property
    def intents(self) -> list[str]:
        return sorted(self.families, key=lambda k: -self.families[k])

    def fit(self, family: str) -> float:
        return self.families.get(family, 0.0)

    def asks(self, cue: str) -> bool:
        """Whether the question carries the cue `cue` (a pattern of data/cues.toml: 'order_cue', 'counting')."""
        return cues.has(cue, self.question)

    def choices_with(self, cue: str) -> list[bool]:
        """Per choice, whether it carries the cue `cue` ('male', 'left', 'nobody', ...)."""
        return [cues.has(cue, c) for c in self.choices]


def parse_number(text: str) -> int | None:
    """The integer a choice states ('3', 'three', 'Three speakers', 'twice'); None if it states none."""
    return count_in(text)


def is_numeric_choice(text: str) -> bool:
    """A choice that is a count: a number, optionally with a noun ('3', 'three beeps', 'Five times')."""
    t = text.lower().strip().rstrip(".")
    return count_in(t) is not None and len(re.findall(r"[a-z]+", t)) <= 3 and not cues.has("measure_unit", t)


def states_time(text: str) -> bool:
    """A choice that states a time or a length of time ('5 seconds', '00:06'), not a count ('6 times')."""
    return cues.has("time_unit", text)


@lru_cache(maxsize=1)
def _prototype_matrix():
    from audiomind.embedded.text import embed

    names, texts = [], []
    for fam, (protos, _) in FAMILIES.items():
        for p in protos:
            names.append(fam)
            texts.append(p)
    return names, embed(texts)


def _semantic_families(question: str) -> dict[str, float]:
    """Per family, the best cosine similarity between the question and the family's prototypes."""
    from audiomind.embedded.text import embed

    names, mat = _prototype_matrix()
    q = embed([question])[0]
    sims = mat @ q
    best: dict[str, float] = {}
    for fam, s in zip(names, sims):
        best[fam] = max(best.get(fam, -1.0), float(s))
    return best


@lru_cache(maxsize=1)
def _choice_shapes() -> list[dict]:
    return tomllib.loads(SHAPES_DATA.read_text(encoding="utf-8"))["shape"]


def _choice_families(q: str, choices: list[str]) -> dict[str, float]:
    """What the choices' shapes say about the question: evidence as strong as the wording."""
    cl = [c.lower() for c in choices]
    n = max(1, len(cl))
    share = lambda pred: sum(1 for c in cl if pred(c)) / n  # noqa: E731
    out: dict[str, float] = {}
    if share(states_time) >= 0.5:
        for fam in ("onset", "offset", "duration"):
            out[fam] = 0.5
    if share(lambda c: states_time(c) and cues.has("at_a_point", c)) >= 0.5:
        out["onset"] = 0.8  # 'after about 3 seconds', '2 s in': a point in time, not a length
    if share(is_numeric_choice) >= 0.6:
        out["count_events"] = 0.45
    if share(lambda c: any(d in c for d in DAYS)) >= 0.5:
        out["speech_content"] = 0.6
    for row in _choice_shapes():  # a share of the choices carrying one cue names a family (data)
        if share(lambda c, cue=row["cue"]: cues.has(cue, c)) >= row["share"]:
            out[row["family"]] = max(out.get(row["family"], 0.0), row["relevance"])
    trend_kinds = {k for c in cl for k, pat in TREND_WORDS.items() if pat.search(c)}
    if share(lambda c: any(pat.search(c) for pat in TREND_WORDS.values())) >= 0.6 and len(trend_kinds) >= 2:
        out["loudness_trend"] = max(out.get("loudness_trend", 0.0), 0.5)  # each choice names a different change
    return out


def _lexical_families(q: str) -> dict[str, float]:
    """Unambiguous cue words in the question (a floor under the semantic signal, never a ceiling)."""
    out: dict[str, float] = {}
    for fam, pat in cues.section("family_words").items():
        if pat.search(q):
            out[fam] = 0.5
    return out


def time_span(question: str) -> TimeSpan | None:
    """An explicit part of the clip the question points at: 'in the first 3 seconds', 'at the end of the
    recording'. Ordinals that refer to items ('the first note') are not time spans."""
    m = cues.search("time_span", question)
    if not m:
        return None
    if m.group(1):
        where, length = m.group(1), float(m.group(2))
        if where in ("first", "opening"):
            return TimeSpan(start_s=0.0, end_s=length, where=f"first {length:g} s", length_s=length)
        return TimeSpan(start_s=None, end_s=None, where=f"last {length:g} s", length_s=length)
    where = m.group(3)
    return TimeSpan(start_s=0.0 if where in ("beginning", "start") else None, end_s=None, where=where)


def analyse(question: str, choices: list[str], available: Iterable[Named],
            reader: Reader | None = None) -> QuestionAnalysis:
    """Families with relevance, steps, explicit time span, and the tools their evidence needs; `frame` is
    the reading of `reader` (default: the rule reader)."""
    frame = read_question(question, list(choices), reader)
    q = question.lower()
    semantic = _semantic_families(question)
    lexical = _lexical_families(q)
    shaped = _choice_families(q, choices)
    families: dict[str, float] = {}
    into, lasting = cues.has("point_in_time", q), cues.has("lasting", q)
    starting = cues.has("starting", q) and not cues.has("stopping", q)
    length_named = cues.has("length_named", q)
    for fam in FAMILIES:
        s = semantic.get(fam, 0.0)
        sem = max(0.0, min(1.0, (s - 0.35) / 0.4))  # cosine 0.35 -> 0, 0.75 -> 1
        score = max(sem, lexical.get(fam, 0.0) * (0.6 + 0.8 * sem), shaped.get(fam, 0.0))
        if fam == "duration" and lasting and not into:
            score = max(score, 0.9)  # 'how long ... heard' is about a length, however close to 'when is it heard'
        if fam in ("onset", "offset") and lasting and not into:
            score = min(score, 0.3)
        if fam == "onset" and (into or starting):
            score = max(score, 0.95)  # 'how long until it starts' asks for an onset
        if fam == "duration" and starting and not length_named:
            score = min(score, 0.5)
        if lexical.get(fam) and shaped.get(fam):
            score = min(1.0, score + 0.2)
        if score >= 0.15:
            families[fam] = round(min(1.0, score), 3)
    # choices that are all of one measurable kind (genders, sides, languages, keys, tempi, points in time)
    # say what is asked more reliably than a wording that merely mentions a voice: what was said is then
    # secondary, unless the question asks about it in words
    if "speech_content" in families and not lexical.get("speech_content") and any(
            v >= 0.7 for f_, v in shaped.items() if f_ not in ("speech_content", "count_events")):
        families["speech_content"] = min(families["speech_content"], 0.5)
    if frame.about_speech:
        # 'which position does the voice announce?': a question built on a verb of saying asks what is said,
        # whatever shape its choices have (sides, days, genders are then words to hear, not measurements)
        families["speech_content"] = max(families.get("speech_content", 0.0), 0.85)
        for fam in shaped:
            if fam not in ("speech_content", "count_events", "count_words") and fam in families:
                families[fam] = min(families[fam], 0.3)
    steps = [name for name, pat in cues.section("steps").items() if pat.search(q)]
    day_choices = choices and sum(any(d in c.lower() for d in DAYS) for c in choices) >= max(2, len(choices) - 1)
    if day_choices and "day_offset" not in steps and cues.has("relative_day", q) and not cues.has("day_is_set", q):
        steps.append("day_offset")  # day choices + a relative word: a step from the spoken day
    unsupported = cues.search("unsupported_step", q)
    names = {m.name for m in available}
    tools: list[str] = []
    targets: list[str] = []
    top = max(families.values(), default=0.0)
    for fam, rel in sorted(families.items(), key=lambda kv: -kv[1]):
        if rel < max(0.5, top - 0.3):  # tools for the families the question is about, not for loose neighbours
            continue
        targets.append(fam.replace("_", " "))
        tools += [t for t in FAMILIES[fam][1] if t in names and t not in tools]
    if steps and any(s in ("before_voice", "after_voice") for s in steps):
        tools += [t for t in ("vad", "count_events") if t in names and t not in tools]
    if "not_mentioned" in steps or "day_offset" in steps or frame.about_speech or any(
            st.kind != "pause_length" for st in frame.steps):
        tools += [t for t in ("vad", "asr") if t in names and t not in tools]
    if any(st.kind == "pause_length" for st in frame.steps):
        tools += [t for t in ("vad",) if t in names and t not in tools]
    nearest = sorted(semantic.items(), key=lambda kv: -kv[1])[:3]
    rationale = (
        "families by relevance: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(families.items(), key=lambda kv: -kv[1])[:5])
        + f"; closest prototypes: {', '.join(f'{k} ({v:.2f})' for k, v in nearest)}"
        + (f"; choice shapes: {', '.join(shaped)}" if shaped else "")
        + (f"; steps: {', '.join(steps)}" if steps else "")
        + (f"; needs a step the policy cannot take ({unsupported.group(0)!r})" if unsupported else "")
        + f"; tools: {', '.join(tools) or 'none'}"
        + f"; reading: {frame.summary()}"
    )
    return QuestionAnalysis(
        question=question, choices=list(choices), families=families, steps=steps,
        unsupported_step=unsupported.group(0) if unsupported else None, time_span=time_span(question),
        tools=tools, targets=targets or ["the overall content: speech, sound events and music"],
        similar_tools=[], rationale=rationale, frame=frame,
    )
