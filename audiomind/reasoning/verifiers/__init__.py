"""Evidence-to-choice verifiers: each scores *every* choice against the facts it can see.

A verifier returns, per choice, support in [-1, 1] (+1 the facts say this choice is true, -1 they
contradict it, 0 they say nothing) with the evidence ids and a reason, plus how well the question fits
it (`fit`, from the question analysis) and how reliable its kind of evidence is (`reliability`). The
answer step (audiomind.reasoning.answer) combines them. A verifier never reads a tool's output directly:
only facts (audiomind.reasoning.facts); it never reads English either: the cues, claims and word tables
it asks about live in audiomind.language.

One module per family: `transcript` (what was said), `counts`, `time`, `compare` (two things), `voice`
(gender, presence, side, rate, language), `music` (tempo, loudness trend, contour, key), `order`,
`category` (tags, the least specific); `base` holds the result models and the shared helpers. `VERIFIERS`
is the order the answer step combines them in; `REGISTRY` holds them by name (a plugin adds its own with
`registries.group("verifiers").register(NAME, fn)`, after the built-ins). Each check declares its domain beside
its code (`base.declare`; the executed steps' in `derived`), read by audiomind.reasoning.competence.
"""

from __future__ import annotations

from audiomind.language.analysis import QuestionAnalysis
from audiomind.reasoning.facts import Facts
from audiomind.reasoning.verifiers import derived  # noqa: F401 - declares the executed steps' domains
from audiomind.reasoning.verifiers.base import (
    DOMAINS,
    Domain,
    Verdict,
    Verifier,
    VerifierResult,
    _result,
    declare,
)
from audiomind.reasoning.verifiers.category import verify_category
from audiomind.reasoning.verifiers.compare import degenerate_transcript, verify_compare
from audiomind.reasoning.verifiers.counts import MIN_TALK_S, counted_noun, verify_count
from audiomind.reasoning.verifiers.music import (
    verify_key,
    verify_loudness_trend,
    verify_pitch_contour,
    verify_tempo,
)
from audiomind.reasoning.verifiers.order import verify_order, verify_relative_order
from audiomind.reasoning.verifiers.time import choice_seconds, verify_time
from audiomind.reasoning.verifiers.transcript import (
    SOUND_AT,
    SOUND_MARGIN,
    verify_day_offset,
    verify_readings_agree,
    verify_transcript,
)
from audiomind.reasoning.verifiers.voice import (
    FAST_RATIO,
    FEMALE_MIN_HZ,
    MALE_MAX_HZ,
    NORMAL_SYL_PER_S,
    NORMAL_WORDS_PER_S,
    SIDE_DB,
    SLOW_RATIO,
    verify_gender,
    verify_language,
    verify_presence,
    verify_rate_absolute,
    verify_side,
)
from audiomind.registry import Registry

__all__ = [
    "DOMAINS",
    "FAST_RATIO",
    "FEMALE_MIN_HZ",
    "MALE_MAX_HZ",
    "MIN_TALK_S",
    "NORMAL_SYL_PER_S",
    "NORMAL_WORDS_PER_S",
    "REGISTRY",
    "SIDE_DB",
    "SLOW_RATIO",
    "SOUND_AT",
    "SOUND_MARGIN",
    "VERIFIERS",
    "Domain",
    "Verdict",
    "Verifier",
    "VerifierResult",
    "choice_seconds",
    "counted_noun",
    "declare",
    "degenerate_transcript",
    "run_verifiers",
    "verify_category",
    "verify_compare",
    "verify_count",
    "verify_day_offset",
    "verify_gender",
    "verify_key",
    "verify_language",
    "verify_loudness_trend",
    "verify_order",
    "verify_pitch_contour",
    "verify_presence",
    "verify_rate_absolute",
    "verify_readings_agree",
    "verify_relative_order",
    "verify_side",
    "verify_tempo",
    "verify_time",
    "verify_transcript",
]

# The order the answer step combines them in: its sums, the lead among equally weighted verifiers and the order
# of the cited evidence follow it.
VERIFIERS: tuple[Verifier, ...] = (
    verify_day_offset, verify_transcript, verify_readings_agree, verify_count, verify_tempo, verify_time, verify_compare, verify_gender,
    verify_presence, verify_side, verify_rate_absolute, verify_loudness_trend, verify_pitch_contour, verify_key,
    verify_language, verify_order, verify_relative_order, verify_category,
)


REGISTRY: Registry[Verifier] = Registry("verifier", group="verifiers")
"""Verifier name -> function: the built-ins in VERIFIERS order, then any a plugin registers."""
for _v in VERIFIERS:
    REGISTRY.register(_v.__name__.removeprefix("verify_"), _v)


def run_verifiers(f: Facts, a: QuestionAnalysis) -> list[VerifierResult]:
    out = []
    for name in REGISTRY.names():
        r = REGISTRY.get(name)(f, a)
        if r is not None and len(r.verdicts) == len(a.choices):
            out.append(r)
    from audiomind.reasoning.property_verifier import property_results  # descriptors: lexicon/properties.toml
    out += [_result(a=a, **r) for r in property_results(f, a) if len(r["supports"]) == len(a.choices)]
    return out
