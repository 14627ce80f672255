"""How sure an answering model is of its choice, from the model itself.

`logprob_confidence` reads the token log-probabilities a provider returned with the reply (OpenAI and vLLM:
`logprobs=True, top_logprobs=K`). It finds where the answer starts in the reply (after `"answer": "` in a
JSON reply, else the reply's first character), then walks the answer's tokens: at each token every listed
alternative that fits exactly one still-open choice adds its probability (times the probability of the
path so far) to that choice, and the walk stops once the answer's own tokens fit only one choice. Where
every choice begins with a different token (the usual case) that is the first answer token's
top-K mass per choice. The choices are matched verbatim, or by their letters (A, B, ...) when the reply
answers with a letter; the masses are normalised over the choices. Alternatives outside the top K count
as no choice, so the normalised value is an estimate from the K most likely tokens, and the reason says
how much of the probability the choices held.

`stated_confidence` keeps a confidence the reply states itself (a `confidence` key of a reply that is one
JSON object, read by shape as the answer is: replies.json_reply), which nothing but the model calibrates.
"""

from __future__ import annotations

import math
import re
from typing import Any

from audiomind.backends.frontends.replies import json_reply
from audiomind.prompts import choice_letter

_ANSWER_KEY = re.compile(r'"(?:answer|final_answer)"\s*:\s*"?')
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_LETTER = re.compile(r"\(?([A-Za-z])(?:[.):\]]|\s|$)")
MAX_WALK = 12  # answer tokens walked at most before the choices are called indistinguishable


def _fits(text: str, target: str) -> bool:
    """Whether answer text so far can still be (or already is) `target`: a prefix of it, or it whole
    followed by something that ends a word (a space followed by more words does not: "dog barking" is not
    the answer "dog")."""
    t, tg = text.lstrip().lower(), target.strip().lower()
    if not t:
        return True
    rest = t[len(tg):]
    return tg.startswith(t) or (t.startswith(tg) and not rest[0].isalnum()
                                and not (rest[0].isspace() and rest.strip()))


def _answer_offset(joined: str) -> int | None:
    """Where the answer begins in the reply's text: after the JSON answer key, else its first character
    (past any <think> block)."""
    think_end = max(joined.lower().rfind("</think>"), joined.lower().rfind("</thinking>"))
    m = _ANSWER_KEY.search(joined, joined.index(">", think_end) + 1 if think_end >= 0 else 0)
    if m:
        return m.end()
    thought = _THINK.match(joined.lstrip())
    start = len(joined) - len(joined.lstrip()) + (thought.end() if thought else 0)
    rest = joined[start:]
    return start + len(rest) - len(rest.lstrip()) if rest.strip() else None


def _targets(answer: str, choices: list[str]) -> tuple[list[str], str] | None:
    """The strings the answer is matched against (the choices verbatim, or their letters) and the mode."""
    a = answer.strip().lower()
    if not a:
        return None
    if any(a == c.strip().lower() for c in choices):
        return list(choices), "verbatim"
    m = _LETTER.match(answer.strip())
    letters = [choice_letter(i) for i in range(len(choices))]
    if m and m.group(1).upper() in letters:
        return letters, "letter"
    if any(_fits(a, c) or _fits(c, a) for c in choices if c.strip()):
        return list(choices), "verbatim"
    return None


def _walk(tokens: list[Any], index: int, prefix: str, targets: list[str]) -> tuple[dict[int, float], int, int] | None:
    """Probability mass per target from the answer's tokens starting at `tokens[index]` (whose text begins
    with `prefix`, not part of the answer); (mass, the target the answer took, tokens walked) or None."""
    mass = dict.fromkeys(range(len(targets)), 0.0)
    path_p, consumed = 1.0, ""
    open_ = set(range(len(targets)))
    for step, tok in enumerate(tokens[index:index + MAX_WALK]):
        lead = prefix if step == 0 else ""
        own = str(tok.token)
        alts = {str(a.token): float(a.logprob) for a in (getattr(tok, "top_logprobs", None) or [])}
        alts.setdefault(own, float(tok.logprob))
        own_text = consumed + own[len(lead):]
        own_fit = {i for i in open_ if _fits(own_text, targets[i])}
        for alt, lp in alts.items():
            if alt == own or not alt.startswith(lead) or not alt[len(lead):].strip():
                continue
            fit = {i for i in open_ if _fits(consumed + alt[len(lead):], targets[i])}
            if len(fit) == 1:  # another token that leads to one choice only (the answer's own path aside)
                mass[fit.pop()] += path_p * math.exp(lp)
        path_p *= math.exp(float(tok.logprob))
        consumed, open_ = own_text, own_fit
        if not open_:
            return None
        if len(open_) == 1 and consumed.strip():
            chosen = next(iter(open_))
            mass[chosen] += path_p
            return mass, chosen, step + 1
    return None


def logprob_confidence(completion: Any, choices: list[str], answer: str) -> tuple[float, str] | None:
    """(confidence, reason) of the chosen choice from the reply's token log-probabilities, or None when
    the reply carries none or its answer names no choice the tokens can tell apart."""
    if not choices:
        return None
    try:
        tokens = list(completion.choices[0].logprobs.content or [])
    except (AttributeError, IndexError, TypeError):
        return None
    targets = _targets(answer, choices) if tokens else None
    if not tokens or targets is None:
        return None
    joined = "".join(str(t.token) for t in tokens)
    offset = _answer_offset(joined)
    if offset is None or offset >= len(joined):
        return None
    index, pos = 0, 0
    while pos + len(str(tokens[index].token)) <= offset:  # the token the answer starts in
        pos += len(str(tokens[index].token))
        index += 1
    walked = _walk(tokens, index, joined[pos:offset], targets[0])
    if walked is None:
        return None
    mass, chosen, n = walked
    total = sum(mass.values())
    if total <= 0:
        return None
    conf = mass[chosen] / total
    k = max((len(getattr(t, "top_logprobs", None) or []) for t in tokens[index:index + n]), default=0)
    per = ", ".join(f"{choice_letter(i)} {mass[i]:.3f}" for i in range(len(choices)))
    how = "first answer token" if n == 1 else f"first {n} answer tokens (the choices share a beginning)"
    reason = (f"token log-probabilities of the {how}, matched to the choices {targets[1]}"
              f"{' by letter' if targets[1] == 'letter' else ''} over the top {k} alternatives: {per}; "
              f"the choices hold {total:.3f} of the probability; {choice_letter(chosen)} normalised over "
              f"them: {conf:.3f}")
    return round(min(1.0, max(0.0, conf)), 4), reason


def _as_probability(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    percent = isinstance(v, str) and v.strip().endswith("%")
    if isinstance(v, str):
        try:
            v = float(v.strip().rstrip("%"))
        except ValueError:
            return None
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    x = float(v)
    if percent or 1 < x <= 100:  # "85%" or 85: a percentage
        x /= 100
    return x if 0 <= x <= 1 else None


def stated_confidence(reply: str) -> tuple[float, str] | None:
    """(confidence, reason) when the reply's JSON object states a `confidence` (0-1, or a percentage)."""
    obj = json_reply(reply)  # shape only, as the answer itself is read: no object fished out of prose
    if obj is None:
        return None
    value = _as_probability(obj.get("confidence"))
    if value is None or not 0 <= value <= 1:
        return None
    return value, f"the model's own statement in its reply (confidence {obj.get('confidence')!r}), not calibrated"
