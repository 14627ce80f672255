"""Descriptors read against the recognised words (the asr tool's word times): loudness per spoken word, short
sounds next to speech, and letters spelled out.

- word_loudness: the RMS level of each word's stretch (20 ms frames; the mean power of its loudest half, so
  loose word boundaries matter less) and the loudest word with its margin over the next.
- speech_bursts: stretches of sound (active 20 ms frames, 12 dB over the noise floor) no longer than
  `max_burst_s` that lie mostly outside every recognised word, each tagged by the tagger on a window starting
  at its onset (YAMNet's 0.96 s patch then holds the sound instead of straddling it), with the words just
  before and just after it.
- spelled_letters: runs of >= 3 single-letter tokens (Whisper writes 'C-A-T', 'C, A, T' or 'C. A. T.') joined
  into the word they spell."""

from __future__ import annotations

import re

import numpy as np
from pydantic import Field

from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import active_frames, frame_db, runs, tags_at, words_of

SR = 16000
FRAME = 320
LETTER_NAMES = {"bee": "b", "see": "c", "sea": "c", "dee": "d", "gee": "g", "aitch": "h", "jay": "j", "kay": "k",
                "el": "l", "em": "m", "en": "n", "oh": "o", "pee": "p", "cue": "q", "queue": "q", "are": "r",
                "ess": "s", "tee": "t", "tea": "t", "you": "u", "vee": "v", "ex": "x", "why": "y", "zed": "z",
                "zee": "z", "double-u": "w"}
MAX_LETTER_GAP_S = 1.2


class WordArgs(ToolArgs):
    pass


class WordLevel(ToolOutput):
    word: str = Field(description="the word as recognised")
    start_s: float = Field(description="word start (s)")
    end_s: float = Field(description="word end (s)")
    level_dbfs: float = Field(description="mean power of the loudest half of the word's 20 ms frames (dBFS)")


class WordLoudnessOutput(ToolOutput):
    words: list[WordLevel] = Field(description="every recognised word with its level, in time order")
    loudest: int | None = Field(description="index of the loudest word")
    quietest: int | None = Field(description="index of the quietest word")
    margin_db: float | None = Field(description="loudest word's level minus the next loudest different word's")
    model: str = Field(description="the ASR model whose word times were used")


def _clean(w: str) -> str:
    return re.sub(r"[^\w'-]", "", w).strip("-'")


def _word_level(db: np.ndarray, s: float, e: float) -> float:
    a, b = int(s * SR / FRAME), max(int(s * SR / FRAME) + 1, int(np.ceil(e * SR / FRAME)))
    seg = np.sort(db[a:min(b, len(db))])
    if not len(seg):
        return -100.0
    top = seg[len(seg) // 2:]
    return float(10 * np.log10(np.mean(10 ** (top / 10))))


def word_loudness(args: WordArgs, ctx: ToolContext) -> ToolResult:
    words, model = words_of(ctx, args.artifact)
    y = ctx.audio(args.artifact).samples(sr=SR)
    db = frame_db(y, FRAME)
    rows = [{"word": w, "start_s": round(s, 3), "end_s": round(e, 3), "level_dbfs": round(_word_level(db, s, e), 2)}
            for w, s, e, _ in words if _clean(w)]
    if not rows:
        out = {"words": [], "loudest": None, "quietest": None, "margin_db": None, "model": model}
        return ToolResult(output=out, claims=[Claim(text="No words were recognised, so no word is louder than another.")])
    order = sorted(range(len(rows)), key=lambda i: -rows[i]["level_dbfs"])
    top = order[0]
    other = next((i for i in order[1:] if _clean(rows[i]["word"]).lower() != _clean(rows[top]["word"]).lower()), None)
    margin = None if other is None else round(rows[top]["level_dbfs"] - rows[other]["level_dbfs"], 2)
    out = {"words": rows, "loudest": top, "quietest": order[-1], "margin_db": margin, "model": model}
    text = (f"The loudest recognised word is '{_clean(rows[top]['word'])}' at {rows[top]['start_s']:.2f} s "
            f"({rows[top]['level_dbfs']:.1f} dBFS" + (f", {margin:.1f} dB above the next" if margin is not None else "")
            + f"); the quietest is '{_clean(rows[order[-1]]['word'])}' ({rows[order[-1]]['level_dbfs']:.1f} dBFS).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"loudest": _clean(rows[top]["word"]), "margin_db": margin})])


class SpelledRun(ToolOutput):
    letters: list[str] = Field(description="the letters in order")
    word: str = Field(description="the letters joined: the word they spell")
    start_s: float = Field(description="first letter's start (s)")
    end_s: float = Field(description="last letter's end (s)")


class SpelledLettersOutput(ToolOutput):
    runs: list[SpelledRun] = Field(description="runs of >= 3 spelled letters, in time order")
    model: str = Field(description="the ASR model whose tokens were read")


def _letter_tokens(words: list[tuple[str, float, float, float]]) -> list[tuple[str | None, float, float, bool]]:
    """(letter or None, start, end, is a letter name) per token; a word 'C-A-T' is split into its letters
    (sharing its times evenly)."""
    out = []
    for w, s, e, _ in words:
        parts = [p for p in re.split(r"[-.\s,]+", w.strip()) if p]
        if len(parts) > 1 and all(len(p) == 1 and p.isalpha() for p in parts):
            step = (e - s) / len(parts)
            out += [(p.lower(), s + k * step, s + (k + 1) * step, False) for k, p in enumerate(parts)]
            continue
        tok = re.sub(r"[^\w]", "", w).lower() if re.fullmatch(r"\W*\w\W*", w) else re.sub(r"[^\w-]", "", w).lower()
        if len(tok) == 1 and tok.isalpha():
            out.append((tok, s, e, False))
        elif tok in LETTER_NAMES:
            out.append((LETTER_NAMES[tok], s, e, True))
        else:
            out.append((None, s, e, False))
    return out


def spelled_letters(args: WordArgs, ctx: ToolContext) -> ToolResult:
    words, model = words_of(ctx, args.artifact)
    toks = _letter_tokens(words)
    found, cur = [], []

    def flush() -> None:
        while cur and cur[-1][3]:
            cur.pop()  # a letter name ends no run ('... T, you see')
        while cur and cur[0][3]:
            cur.pop(0)
        if len(cur) >= 3 and sum(not t[3] for t in cur) >= 2:
            letters = [t[0] for t in cur]
            found.append({"letters": letters, "word": "".join(letters), "start_s": round(cur[0][1], 3),
                          "end_s": round(cur[-1][2], 3)})
        cur.clear()

    for t in toks:
        if t[0] is None or (cur and t[1] - cur[-1][2] > MAX_LETTER_GAP_S):
            flush()
        if t[0] is not None:
            cur.append(t)
    flush()
    out = {"runs": found, "model": model}
    if found:
        text = "Letters spelled out: " + "; ".join(f"{'-'.join(r['letters']).upper()} = '{r['word']}' at "
                                                   f"{r['start_s']:.2f}-{r['end_s']:.2f} s" for r in found) + "."
    else:
        text = "No word is spelled out letter by letter in the recognised speech (no run of 3 or more single letters)."
    return ToolResult(output=out, claims=[Claim(text=text, data={"words": [r["word"] for r in found]})])


class BurstArgs(ToolArgs):
    max_burst_s: float = Field(1.5, ge=0.05, le=5.0, description="longest sound counted as a short sound (s)")
    max_bursts: int = Field(8, ge=1, le=30, description="tag at most this many bursts")


class Burst(ToolOutput):
    start_s: float = Field(description="onset (s)")
    end_s: float = Field(description="end (s)")
    peak_dbfs: float = Field(description="loudest 20 ms frame (dBFS)")
    labels: list[tuple[str, float]] = Field(description="tags of an onset-aligned window: (AudioSet class, strength)")
    words_before: str = Field(description="up to 4 recognised words just before it")
    words_after: str = Field(description="up to 8 recognised words just after it")


class SpeechBurstsOutput(ToolOutput):
    bursts: list[Burst] = Field(description="short sounds outside the recognised words, in time order")
    words: int = Field(description="recognised words")
    model: str = Field(description="the ASR model whose word times were used")


def speech_bursts(args: BurstArgs, ctx: ToolContext) -> ToolResult:
    words, model = words_of(ctx, args.artifact)
    y = ctx.audio(args.artifact).samples(sr=SR)
    dur = len(y) / SR
    db = frame_db(y, FRAME)
    act, _ = active_frames(db, 12.0, -55.0)
    spans: list[list[int]] = []
    for a, b in runs(act):
        if spans and (a - spans[-1][1]) * FRAME / SR < 0.08:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    found = []
    for a, b in spans:
        s, e = a * FRAME / SR, b * FRAME / SR
        if e - s > args.max_burst_s or e - s < 0.04:
            continue
        inside = sum(max(0.0, min(e, we + 0.03) - max(s, ws - 0.03)) for _, ws, we, _ in words)
        if inside > 0.3 * (e - s):
            continue
        found.append((s, e, float(db[a:b].max())))
    found = found[: args.max_bursts]
    out_b = []
    for s, e, peak in found:
        labels = tags_at(ctx, args.artifact, s, min(dur, max(e, s + 0.96)))
        before = " ".join(_clean(w) for w, ws, we, _ in words if we <= s + 0.03)[-60:].split()[-4:]
        after = [_clean(w) for w, ws, we, _ in words if ws >= e - 0.03][:8]
        out_b.append({"start_s": round(s, 3), "end_s": round(e, 3), "peak_dbfs": round(peak, 1), "labels": labels,
                      "words_before": " ".join(before), "words_after": " ".join(after)})
    out = {"bursts": out_b, "words": len(words), "model": model}
    if out_b:
        text = "Short sounds outside the recognised speech: " + "; ".join(
            f"{b['start_s']:.2f}-{b['end_s']:.2f} s" + (f" ({b['labels'][0][0]} {b['labels'][0][1]:.2f})" if b["labels"] else "")
            + (f", followed by '{b['words_after']}'" if b["words_after"] else "") for b in out_b) + "."
    else:
        text = "No short sound outside the recognised speech."
    return ToolResult(output=out, claims=[Claim(text=text, data={"bursts": len(out_b)})])
