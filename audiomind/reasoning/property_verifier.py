"""One verifier for every descriptor in the property vocabulary (`lexicon/properties.toml`).

Choices are mapped to (property, value): a vocabulary synonym inside the choice (whole words) names its value;
otherwise MiniLM similarity to the value's synonyms and description sentences does (best value at least
MIN_SIM and MARGIN above the property's next value), so a wording the vocabulary never listed reaches an existing measurement. When two or
more choices name different values of a measured property (or one does and the question is close to the
property's example questions) each choice is supported (+1) or contradicted (-1) by the measured value.

Questions that pick an item ('which word is said loudest?') are matched to a selector by MiniLM similarity to
its example questions; a choice is then matched against the picked item: its text, the words recognised in
its span, its ordinal among the items, its third of the clip, a time inside it.

`tools_for(question, choices)` says which descriptors a question needs, so the cascade runs them only then."""

from __future__ import annotations

import difflib
from typing import TypedDict

import numpy as np

from audiomind.language import cues
from audiomind.language.numbers import ordinals_in, time_named
from audiomind.language.text import ITEM_STOPWORDS, stem, words
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.property_facts import Item, PropertyRow, SelectorRow, vocabulary

MIN_SIM = 0.35         # MiniLM score (cosine: half the best phrase, half the best three) naming a value
MARGIN = 0.03          # ... by this much more than the property's next value
QUESTION_SIM = 0.62    # a question this close to a property's example questions asks about it (fit + 0.1)
ABOUT_SIM = 0.45       # ... and at least this close for choices mapped by MiniLM
LEXICAL_ABOUT_SIM = 0.3  # ... or this close when every choice uses the vocabulary's own words
SELECT_SIM = 0.55      # a selector question (its cues present) this close to the selector's examples
def _lexical(choice: str, row: PropertyRow) -> str | None:
    """The value whose longest synonym occurs in the choice (None when none does, or two values tie), else the
    value whose two ordered words occur in that order."""
    c = choice
    for value, (first, second) in row.ordered.items():
        a, b = cues.phrase_at(first, c), cues.phrase_at(second, c)
        if a is not None and b is not None and a < b and cues.phrase_at(second, cues.plain(c)[:a]) is None:
            return value
    best: dict[str, int] = {}
    for value, syns in row.values.items():
        for s in syns:
            if cues.phrase_at(s, c) is not None:
                best[value] = max(best.get(value, 0), len(s))
    if not best:
        return None
    top = sorted(best.items(), key=lambda kv: -kv[1])
    return top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else None


def _embed(texts: list[str]) -> np.ndarray:
    from audiomind.embedded.text import embed

    return embed(texts)


def _semantic(choices: list[str], row: PropertyRow) -> list[tuple[str | None, float]]:
    """(value, cosine) per choice by MiniLM against the value's synonyms (None below MIN_SIM or MARGIN)."""
    phrases = [(v, s) for v, syns in row.values.items() for s in syns]
    phrases += [(v, s) for v, sents in row.describe.items() for s in sents]
    pv = _embed([s for _, s in phrases])
    cv = _embed(list(choices))
    sims = cv @ pv.T
    rows = {v: [j for j, (vv, _) in enumerate(phrases) if vv == v] for v in row.values}
    out = []
    for i in range(len(choices)):
        per: dict[str, float] = {}
        for v, idx in rows.items():  # half the best phrase, half the mean of the best three
            top = np.sort(sims[i, idx])[-3:]
            per[v] = float(0.5 * top[-1] + 0.5 * top.mean())
        ranked = sorted(per.items(), key=lambda kv: -kv[1])
        best, second = ranked[0], ranked[1] if len(ranked) > 1 else (None, -1.0)
        named: str | None = best[0] if best[1] >= MIN_SIM and best[1] - second[1] >= MARGIN else None
        out.append((named, best[1]))
    return out


def map_choices(choices: list[str], row: PropertyRow) -> tuple[list[str | None], bool]:
    """Each choice's value of `row` (None: it names none), and whether every mapped choice was lexical."""
    lex = [_lexical(c, row) for c in choices]
    if all(v is not None for v in lex):
        return lex, True
    sem = _semantic(choices, row)
    # sentence embeddings barely register negation ('no wobble at all' sits next to 'wobble'), and a number
    # ('160 BPM', 'about 9 seconds') is a measurement, not a quality: such a choice names a value only through
    # the vocabulary's own words
    return [lv if lv is not None or cues.has("negation", c) or cues.has("numeric", c) else sv
            for c, lv, (sv, _) in zip(choices, lex, sem)], False


def _question_sim(question: str, prompts: list[str]) -> float:
    if not question.strip() or not prompts:
        return 0.0
    q = _embed([question])
    return float(np.max(q @ _embed(prompts).T))


def _families(question: str, choices: list[str]) -> dict[str, float]:
    from audiomind.language.analysis import analyse

    return analyse(question, choices, []).families


def _deferred(row: PropertyRow, families: dict[str, float]) -> bool:
    """Whether the question analysis places the question in a family the row's MiniLM-mapped choices defer to."""
    return any(families.get(f, 0.0) >= vocabulary().defer_at for f in row.defer)


def _rows_asked(question: str, choices: list[str], families: dict[str, float] | None = None
                ) -> list[tuple[PropertyRow, list[str | None], bool, float]]:
    """(row, mapped values, lexical, question similarity) of every property the choices speak about: at least
    two different values named by at least half of the choices, and a question about the property (MiniLM
    similarity to its example questions at least ABOUT_SIM, or LEXICAL_ABOUT_SIM when every choice uses the
    vocabulary's own words; a row's `about` raises both, and its `cues` must all occur in the question, for values
    that are common words such as numbers), unless MiniLM mapped a choice and the question analysis places the question in a
    family the row defers to (`families`: the analysis' relevances; computed here when not given) or the question
    is closer to the example questions of another property the choices speak about (with many properties, likeness
    maps a choice to one of them by chance: choices mapped by likeness alone are read for the property the
    question is most about)."""
    if not choices:
        return []
    candidates = []
    for row in vocabulary().property:
        if not all(cues.pattern_in(c, question) for c in row.cues):
            continue
        vals, lexical = map_choices(choices, row)
        named = [v for v in vals if v is not None]
        if len(set(named)) < 2 or 2 * len(named) < len(choices):
            continue
        candidates.append((row, vals, lexical, _question_sim(question, row.question)))
    nearest = max((c[3] for c in candidates), default=0.0)
    out = []
    for row, vals, lexical, qsim in candidates:
        if not lexical:
            families = _families(question, choices) if families is None else families
            if _deferred(row, families) or qsim < nearest:
                continue  # choices mapped by likeness alone speak of the property the question is most about
        if qsim >= max(LEXICAL_ABOUT_SIM if lexical else ABOUT_SIM, row.about or 0.0):
            out.append((row, vals, lexical, qsim))
    return out


def _selector_asked(question: str, choices: list[str] | None = None) -> list[tuple[SelectorRow, float]]:
    """Selectors whose cues all occur in the question and whose example questions it is close to (never for
    choices that are all numbers: a count is no item)."""
    if choices and all(cues.has("count_choice", c) for c in choices):
        return []
    rows = [(s, _question_sim(question, s.question)) for s in vocabulary().selector
            if all(cues.pattern_in(c, question) for c in s.cues)]
    return sorted([r for r in rows if r[1] >= SELECT_SIM], key=lambda r: -r[1])


def tools_for(question: str, choices: list[str]) -> list[str]:
    """The descriptors whose properties the question's choices (or its wording, for selectors) map to."""
    tools = [row.tool for row, *_ in _rows_asked(question, choices)]
    sel = _selector_asked(question, choices)
    if sel:
        tools.append(sel[0][0].tool)
    return list(dict.fromkeys(tools))


class ResultArgs(TypedDict):
    """The arguments of a VerifierResult (reasoning.verifiers builds it: this module stays below it)."""

    name: str
    fit: float
    reliability: float
    supports: list[float]
    reasons: list[str]
    reason: str
    ids: list[str]
    values: list[str | None] | None


def _result(name: str, fit: float, reliability: float, supports: list[float], reason: str,
            ids: list[str], values: list[str | None] | None = None) -> ResultArgs:
    return ResultArgs(name=name, fit=fit, reliability=reliability, supports=supports, reasons=[""] * len(supports),
                      reason=reason, ids=ids, values=values)


def property_results(f: Facts, a) -> list[ResultArgs]:
    """Verdicts (as VerifierResult arguments) for the measured properties the choices name, and for a selector
    question."""
    if not a.choices:
        return []
    out: list[ResultArgs] = []
    tools: list[str] = []
    for row, vals, lexical, qsim in _rows_asked(a.question, a.choices, a.families):
        fact = f.values.get(f"property:{row.name}")
        if fact is None or fact.value is None:
            continue
        truth = fact.value
        supports = [0.0 if v is None else (1.0 if v == truth else -1.0) for v in vals]
        # a wording mapped to a value by similarity alone fits loosely (the coverage stage's `fit` gap)
        fit = (0.85 + (0.1 if qsim >= QUESTION_SIM else 0.0)) if lexical else 0.45
        # values quoted: a value's name ('telephone') is no claim about a sound's source (audit.claim_kinds)
        named = ", ".join(f"{c!r} -> {v!r}" for c, v in zip(a.choices, vals) if v is not None)
        reason = (f"{row.tool} measures {row.name} = {truth!r} (output {fact.detail.get('raw')!r}); choices read as "
                  f"{named}"
                  + ("" if lexical else " (some by MiniLM similarity to the vocabulary)"))
        out.append(_result(f"property_{row.name}", fit, row.reliability, supports, reason, fact.evidence_ids,
                           [None if v is None else str(v) for v in vals]))
        tools.append(row.tool)
    out = _one_per_tool(out, tools)
    for sel, qsim in _selector_asked(a.question, a.choices)[:1]:
        fact = f.values.get(f"select:{sel.name}")
        if fact is None:
            continue
        r = _select(f, a, sel, qsim, fact)
        if r is not None:
            out.append(r)
    return out


def _one_per_tool(results: list[ResultArgs], tools: list[str]) -> list[ResultArgs]:
    """Verdicts of properties one tool measures together (an envelope's onset and offset) as one verdict: a
    choice is supported only when every property supports it, contradicted when any contradicts it, else
    unsupported ('an abrupt start and a gradual fade-out' needs both). Alone, each would support two of four
    choices and disagree with the other."""
    merged: list[ResultArgs] = []
    for tool in dict.fromkeys(tools):
        group = [r for r, t in zip(results, tools) if t == tool]
        if len(group) == 1:
            merged.append(group[0])
            continue
        supports = [min(r["supports"][i] for r in group) for i in range(len(group[0]["supports"]))]
        read = [r["values"] or [None] * len(supports) for r in group]
        values: list[str | None] = [None if any(v[i] is None for v in read) else " & ".join(str(v[i]) for v in read)
                                    for i in range(len(supports))]
        merged.append(_result(group[0]["name"], min(r["fit"] for r in group), min(r["reliability"] for r in group),
                              supports, "; ".join(r["reason"] for r in group),
                              list(dict.fromkeys(i for r in group for i in r["ids"])), values))
    return merged


def _heard(w: str, heard: set[str]) -> float:
    """1 for a word heard (or its stem); a close spelling of a longer word (an ASR slip) a little less."""
    if w in heard or stem(w) in {stem(h) for h in heard}:
        return 1.0
    if len(w) < 5:
        return 0.0
    best = max((difflib.SequenceMatcher(None, w, h).ratio() for h in heard), default=0.0)
    return best if best >= 0.8 else 0.0


def _pick(items: list[Item], chosen: list[Item], question: str) -> Item | None:
    """The chosen item the question is about: of several, the one whose tags the question names best."""
    if not chosen:
        return None
    if len(chosen) == 1 or not any(i.labels for i in chosen):
        return chosen[0]
    labels = [i.labels[0][0] if i.labels else "" for i in chosen]
    sims = (_embed([question]) @ _embed([lab or "silence" for lab in labels]).T)[0]
    return chosen[int(np.argmax(sims))]


def _select(f: Facts, a, sel: SelectorRow, qsim: float, fact):
    items = [Item.model_validate(i) for i in fact.detail.get("items", [])]
    chosen = [Item.model_validate(i) for i in fact.value or []]
    pick = _pick(items, chosen, a.question)
    if pick is None:
        return None
    heard_text = pick.text or ""
    if pick.start_s is not None and pick.end_s is not None and f.transcript is not None and not pick.text:
        heard_text = " ".join(w.text for w in f.transcript.words_in(pick.start_s, pick.end_s, pad_s=0.1))
    heard = set(words(heard_text))
    scores = []
    for c in a.choices:
        s = 0.0
        cw = [stem(w) for w in words(c) if w not in ITEM_STOPWORDS] or words(c)
        if cw and heard:
            s = max(s, sum(_heard(w, heard) for w in cw) / len(cw))
        if pick.text and len(cw) == 1 and len(pick.text) >= 3:
            # one word against one picked word: the word itself decides, a near spelling ('watr' for 'water',
            # a misheard letter) counts for less, so 'house' beats 'horse' when 'house' was spelled
            exact = words(pick.text) == [cw[0]] or [stem(w) for w in words(pick.text)] == [cw[0]]
            ratio = difflib.SequenceMatcher(None, "".join(words(pick.text)).replace("'", ""), cw[0]).ratio()
            s = 1.0 if exact else 0.7 * ratio if ratio >= 0.6 else 0.0
        if pick.where and cues.places_in(c, pick.where):
            s = max(s, 1.0)
        ords = ordinals_in(c)
        if ords and len(items) >= 2:
            s = max(s, 1.0 if ords[0] == pick.ordinal else 0.0)
        if cues.has("last_word", c) and len(items) >= 2 and pick.ordinal == len(items):
            s = max(s, 1.0)
        sec = time_named(c)
        if sec is not None and pick.start_s is not None and pick.end_s is not None:
            s = max(s, 1.0 if pick.start_s - 0.5 <= sec <= pick.end_s + 0.5 else 0.0)
        scores.append(s)
    best = int(np.argmax(scores))
    ranked = sorted(scores, reverse=True)
    if ranked[0] < 0.5 or (len(ranked) > 1 and ranked[0] - ranked[1] < 0.25):
        return None
    supports = [1.0 if i == best else (-1.0 if s < 0.3 else 0.0) for i, s in enumerate(scores)]
    what = (f"'{pick.text}'" if pick.text else f"the item at {pick.start_s:.2f}-{pick.end_s:.2f} s"
            + (f" (words: '{heard_text}')" if heard_text else "") if pick.start_s is not None else "the item")
    reason = (f"{sel.tool} picks {what} for {sel.name.replace('_', ' ')}"
              + (f", in the {pick.where} of the clip" if pick.where else "")
              + f" (item {pick.ordinal} of {len(items)})")
    fit = min(1.0, 0.5 + (qsim - SELECT_SIM) * 2 + 0.3)
    # the recognised words a choice was matched against are the transcript's evidence too
    ids = list(fact.evidence_ids) + (f.transcript.evidence_ids if f.transcript is not None else [])
    return _result(f"select_{sel.name}", fit, sel.reliability, supports, reason, ids)
