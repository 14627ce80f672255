"""Quoted words scored against the audio, not against a 1-best transcript.

Whisper tiny.en mishears synthetic voices ('could you pass the salt' -> 'can you pass this out'): a word
recall against its transcript then says "no" to words that were said. Here the recogniser's own decoder
scores the quoted words by teacher forcing (CTranslate2 `Whisper.align`, the call faster-whisper uses for
word times, on the model the `asr` tool has already loaded): the transcript with the stretch that best
matches the quote replaced by the quote (H1) against the transcript itself (H0, the beam's own choice).

    gap = (log P(H1 | audio) - log P(H0 | audio)) / tokens of the quote

A misheard but said sentence costs about 1-2 nats per token (the recogniser thought of something close);
words that were not said cost 4-6 (measured on espeak-ng / flite sentences against an unrelated sentence).
p = sigmoid((gap - FIT_MID) / FIT_SCALE), the midpoint between the two.
"""

from __future__ import annotations

import difflib
import itertools
import math
import threading
from typing import Any

import numpy as np
from pydantic import BaseModel

from audiomind.judges import evidence as ev

FIT_MID = -3.0  # nats per quoted token: halfway between a misheard (-1..-2) and an unsaid (-4..-6) sentence
FIT_SCALE = 0.5
WINDOW_S = 30.0  # Whisper's window
_lock = threading.Lock()


class WordFit(BaseModel):
    words: str
    gap_per_token: float
    p: float
    heard: str
    hypothesis: str
    span: tuple[float, float] | None = None
    model: str = "tiny.en"

    def why(self) -> str:
        return (f"teacher-forced Whisper score of the quote in place of '{ev._short(self.heard, 12)}': "
                f"{self.gap_per_token:+.2f} nats per token vs the transcript; "
                f"p = sigmoid((gap - {FIT_MID}) / {FIT_SCALE}) = {self.p:.2f}")


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


def stretches(quote: str, words: list[str], top: int = 3) -> list[tuple[int, int]]:
    """Candidate [i, j) stretches of the transcript words for the quote to stand in for: the `top` word
    stretches (up to 3 words longer than the quote) that match it best by character similarity of the
    joined, normalised words, and the `top` whole sentences that do (an empty stretch when nothing was
    heard)."""
    if not words:
        return [(0, 0)]
    q = " ".join(ev._norm_words(quote))
    norm = [" ".join(ev._norm_words(w)) for w in words]
    n = len(ev._norm_words(quote))

    def sim(i: int, j: int) -> float:
        return difflib.SequenceMatcher(a=q, b=" ".join(norm[i:j]), autojunk=False).ratio()

    scored = sorted(((sim(i, j), i, j) for i in range(len(words))
                     for j in range(i + 1, min(len(words), i + n + 3) + 1)), reverse=True)
    out = [(i, j) for _, i, j in scored[:top]]
    # single sentences, however long (a misheard sentence may have more words than the quote); never a run
    # of several (the quote would drop words that were said: the decoder may prefer an early end to them)
    ends = [k + 1 for k, w in enumerate(words) if w.rstrip().endswith((".", "?", "!"))]
    bounds = sorted({0, len(words), *ends})
    sents = sorted(itertools.pairwise(bounds), key=lambda ij: -sim(*ij))[:top]
    for ij in sents:
        if ij not in out:
            out.append(ij)
    return out


def _logprob(model: Any, tok: Any, enc: Any, n_frames: int, text: str) -> tuple[float, int]:
    ids = tok.encode(" " + text.strip()) if text.strip() else []
    res = model.model.align(enc, tok.sot_sequence + [tok.no_timestamps], [ids], n_frames)[0]
    probs = np.asarray(res.text_token_probs, dtype=float)
    return float(np.log(np.maximum(probs, 1e-9)).sum()), len(ids)


def fit(audio_path: str, quote: str, words: list[tuple[str, float, float]], duration_s: float,
        model_name: str = "tiny.en") -> WordFit | None:
    """Score `quote` against the audio. `words`: the transcript's (word, start, end); None when the model
    cannot be loaded or run."""
    try:
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        from audiomind import audio as aio
        from audiomind.tools import asr
    except Exception:  # noqa: BLE001 - no recogniser: the caller keeps the transcript check
        return None
    texts = [w for w, _, _ in words]
    cands = stretches(quote, texts)
    # the 30-s window around the best word stretch (the whole clip when it is shorter)
    if duration_s <= WINDOW_S or not words:
        t0 = 0.0
    else:
        i0 = cands[0][0]
        centre = words[i0][1] if i0 < len(words) else words[-1][1]
        t0 = max(0.0, min(duration_s - WINDOW_S, centre - 5.0))
    inside = [k for k, (_, a, b) in enumerate(words) if a >= t0 - 0.05 and b <= t0 + WINDOW_S + 0.05]
    lo, hi = (min(inside), max(inside) + 1) if inside else (0, 0)
    cands = list(dict.fromkeys((max(lo, min(i, hi)), max(lo, min(j, hi))) for i, j in cands))
    h0 = " ".join(texts[lo:hi])
    try:
        y = aio.load_cached(audio_path, sr=16000).astype(np.float32)
        y = y[int(t0 * 16000): int((t0 + WINDOW_S) * 16000)]
        with asr._model_lock(model_name), _lock:
            model = asr._model(model_name)
            tok = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en")
            feats = model.feature_extractor(y)
            n_frames = int(min(feats.shape[-1], model.feature_extractor.nb_max_frames))
            enc = model.encode(pad_or_trim(feats[:, : model.feature_extractor.nb_max_frames]))
            lp0, _ = _logprob(model, tok, enc, n_frames, h0)
            best = None
            for i, j in cands:
                h1 = " ".join(texts[lo:i] + [quote.strip()] + texts[j:hi])
                lp1, _ = _logprob(model, tok, enc, n_frames, h1)
                if best is None or lp1 > best[0]:
                    best = (lp1, i, j, h1)
            nq = len(tok.encode(" " + quote.strip()))
    except Exception:  # noqa: BLE001
        return None
    lp1, i, j, h1 = best
    gap = (lp1 - lp0) / max(1, nq)
    p = _sig((gap - FIT_MID) / FIT_SCALE)
    span = (words[i][1], words[j - 1][2]) if j > i else None
    return WordFit(words=quote, gap_per_token=round(gap, 3), p=round(p, 4), heard=" ".join(texts[i:j]),
                   hypothesis=h1, span=span, model=model_name)
