"""The voice and the noise around it: how a sentence ends (rise, fall, level), which word is drawn out, at which
word another voice takes over, and how much background noise lies under a voice or sound.

- sentence_melody: f0 from the speech-melody tracker (`intonation.voiced_f0`: YIN, periodic frames). Voiced runs
  shorter than MIN_RUN_S, or further than an octave from the talker's median, are dropped (pink noise at 10-20 dB
  SNR passes the periodicity test only in short scattered runs). Utterances are split at voiced gaps of
  UTTERANCE_GAP_S or more. In each, the last voiced stretch is its voiced frames within the last TAIL_S seconds;
  its end is the median of the last END_S of them, its low point the 10th percentile. The end RISE_ST semitones
  or more above the low point is a rise (question intonation: read-aloud questions rise 3-6 st from the last
  stressed syllable); otherwise a start of the stretch FALL_ST or more above its end, or an end in the bottom
  tenth of the talker's own f0 range, is a fall (a statement ends at the bottom of the range); otherwise level.
  The clip's label is its last utterance's; every utterance is listed.
- drawn_out_word: the asr tool's word spans, trimmed to the frames that sound (ACTIVE_DB over the noise floor),
  against the length the word's letters predict: its phonemes estimated from the spelling (a digraph table:
  'th', 'ee', 'ough' count once; at least MIN_PHONES) times the talker's own seconds per phoneme (the median over
  its words, so a slow talker is not drawn out). The word STRETCH_RATIO times longer than predicted, and
  NEXT_RATIO times more stretched than any other word, is drawn out. Whisper's word times can give a stretched
  word's sound to its neighbour (a short function word); the span then names the neighbour.
- voice_change_word: for each recognised word after the first, the speech before it and from it on are compared:
  Resemblyzer d-vectors (`speaker.embed_windows`, level-normalised) and the voiced frames' f0 (semitones). The
  word with the largest change (the share of f0 variance a two-level fit split there explains + EMB_WEIGHT x the
  d-vector distance; short sides make d-vectors noisy, so f0 leads) is named when the two sides differ. When the
  f0 changes by F0_CHANGE_ST or more, the change is placed to the 10 ms frame (the best two-level split of the
  voiced frames) and the first word whose middle lies after it is named (Whisper's word edges drift). Differ:
  cosine below SAME_COS or an f0 jump of F0_CHANGE_ST semitones or more (a man and a woman differ by 5-12 st;
  one talker's sentence halves differ by less than 2.5).
- noise_level: 20 ms frame levels. Frames below SILENT_DBFS are digital silence (no noise). The pauses are the
  other frames within QUIET_DB of the quietest (QUIET_PCT percentile) in runs of PAUSE_S or more (the dips
  between syllables are shorter; a clean sentence has none); the noise floor is their power, the signal the
  mean power of the other frames that sound (the active level) minus that floor (power subtraction), and the SNR their ratio.
  No pause that holds sound: no noise. A floor below SILENT_DBFS (digital silence in the pauses) or an SNR of NONE_DB or more is no
  noise; FAINT_DB or more faint (heard in the pauses, well under the sound); MASKING_DB or more moderate; below
  it heavy (the noise is about as loud as the sound and masks it). Needs pauses: noise heard only under the
  sound reads as part of it.

Signal descriptors analyse at most MAX_S seconds (coverage says so); the word descriptors read the asr tool's
words through the run's executor (its cache answers when the perception pass transcribed the clip)."""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.language.text import SPELLING_DIGRAPHS
from audiomind.tools.base import Claim, CoveredOutput, ToolArgs, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import frame_db, runs, within_budget, words_of
from audiomind.tools.descriptors.intonation import HOP, SR, voiced_f0
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

MAX_S = 60.0
FPS = SR / HOP                # f0 frames per second (10 ms)

# sentence_melody
MIN_RUN_S = 0.03        # voiced runs shorter than this are noise passing the periodicity test
MAX_STEP_ST = 1.5       # an f0 step larger than this between 10 ms frames ends a run (speech glides are smoother)
UTTERANCE_GAP_S = 0.6   # a voiced gap this long ends an utterance (pauses inside a sentence are shorter)
TAIL_S = 0.6            # the last voiced stretch: an utterance's voiced frames within its last 0.6 s
END_S = 0.05            # the end of the melody: the median of the last 50 ms of voiced frames
RISE_ST = 2.0           # end this far above the stretch's low point: a rise
FALL_ST = 1.5           # stretch start this far above its end: a fall
MIN_UTTERANCE_VOICED_S = 0.2

# drawn_out_word
WORD_FRAME = 320        # 20 ms frames for word levels
ACTIVE_DB = 10.0        # a word's span is trimmed to frames this far over the noise floor
MIN_PHONES = 2          # a word predicts at least two phonemes' time (Whisper gives short words loose spans)
STRETCH_RATIO = 1.8     # a word this many times longer than its letters predict at the talker's rate is drawn out
NEXT_RATIO = 1.3        # ... and this many times more stretched than the next most stretched word
MIN_WORDS = 3

# voice_change_word
SAME_COS = 0.8          # d-vectors of two stretches of one talker (0.5-2 s each, noise at 12 dB) stay above this
F0_CHANGE_ST = 4.0      # a median-f0 jump this large is another voice
EMB_WEIGHT = 0.5        # d-vector distance weighs half as much as the share of f0 variance a change explains
MIN_SIDE_S = 0.3        # each side of a candidate change holds at least this much speech
MAX_WORDS = 60

# noise_level
QUIET_PCT, QUIET_DB = 5.0, 6.0  # pause frames: within 6 dB of the 5th percentile of the frames that sound...
PAUSE_S = 0.2           # ... in runs this long (the dips between syllables are shorter)
SILENT_DBFS = -70.0     # pauses below this are digital or near-digital silence: no noise
NONE_DB = 45.0          # SNR at or above this: no audible noise
FAINT_DB = 15.0         # ... at or above this: faint (heard in the pauses, far under the sound: speech at 15 dB SNR
                        #     is fully intelligible and sounds clear)
MASKING_DB = 3.0        # ... at or above this: moderate; below it the noise is about as loud as the sound and
                        #     masks parts of it (heavy)


class MelodyArgs(WindowArgs):
    pass


class UtteranceMelody(ToolOutput):
    start_s: float = Field(description="first voiced frame (s)")
    end_s: float = Field(description="last voiced frame (s)")
    label: Literal["rise", "fall", "level"] = Field(description="how its last voiced stretch ends")
    end_st: float = Field(description="f0 at the end (semitones re the talker's median)")
    low_st: float = Field(description="10th percentile of the last stretch's f0 (semitones)")
    start_st: float = Field(description="f0 at the start of the last stretch (semitones)")
    rise_st: float = Field(description="end minus low point (semitones)")
    fall_st: float = Field(description="start of the stretch minus its end (semitones)")


class SentenceMelodyOutput(CoveredOutput):
    label: Literal["rise", "fall", "level", "no_voice"] = Field(
        description=f"the last utterance's ending: rise (end >= {RISE_ST} st over the last stretch's low point), "
                    f"fall (start >= {FALL_ST} st over the end, or the end in the bottom of the talker's range), "
                    "level; no_voice: too little voiced speech")
    utterances: list[UtteranceMelody] = Field(description="each utterance (split at voiced gaps >= "
                                                          f"{UTTERANCE_GAP_S} s) with its ending")
    median_f0_hz: float | None = Field(description="the talker's median f0 (Hz)")
    range_st: tuple[float, float] | None = Field(description="the talker's 10th and 90th f0 percentiles (semitones)")
    analysed_s: AnalysedWindow


def clean_voiced(f0: np.ndarray, voiced: np.ndarray) -> tuple[np.ndarray, float]:
    """(voiced mask without short runs and octave outliers, the talker's median f0 in Hz; 0 when none)."""
    v = voiced.copy()
    st = 12 * np.log2(np.maximum(f0, 1.0))
    step = np.zeros(len(v), dtype=bool)
    step[1:] = np.abs(np.diff(st)) > MAX_STEP_ST
    for a, b in runs(voiced):
        cuts = [a, *(a + 1 + np.flatnonzero(step[a + 1:b])).tolist(), b]
        for c, d in itertools.pairwise(cuts):
            v[c:d] = (d - c) / FPS >= MIN_RUN_S
    if not v.any():
        return v, 0.0
    med = float(np.median(f0[v]))
    v &= np.abs(12 * np.log2(np.maximum(f0, 1.0) / med)) <= 12.0
    return v, (float(np.median(f0[v])) if v.any() else 0.0)


def sentence_melody(args: MelodyArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    f0, _, voiced = voiced_f0(y)
    v, med = clean_voiced(f0, voiced)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    idx = np.flatnonzero(v)
    if len(idx) / FPS < MIN_UTTERANCE_VOICED_S:
        out = {**base, "label": "no_voice", "utterances": [], "median_f0_hz": None, "range_st": None}
        return ToolResult(output=out, claims=[Claim(text="Too little voiced speech to hear how a sentence ends.",
                                                    data={"label": "no_voice"})])
    st = 12 * np.log2(np.maximum(f0, 1.0) / med)
    lo, hi = float(np.percentile(st[idx], 10)), float(np.percentile(st[idx], 90))
    groups = np.split(idx, np.flatnonzero(np.diff(idx) >= UTTERANCE_GAP_S * FPS) + 1)
    utts: list[dict[str, Any]] = []
    for g in groups:
        if len(g) / FPS < MIN_UTTERANCE_VOICED_S:
            continue
        tail = g[g >= g[-1] - TAIL_S * FPS]
        n_end = max(2, int(END_S * FPS))
        end = float(np.median(st[tail[-n_end:]]))
        start = float(np.median(st[tail[:n_end]]))
        low = float(np.percentile(st[tail], 10))
        rise, fall = end - low, start - end
        label = "rise" if rise >= RISE_ST else "fall" if fall >= FALL_ST or end <= lo else "level"
        utts.append({"start_s": round(t0 + g[0] / FPS, 2), "end_s": round(t0 + g[-1] / FPS, 2), "label": label,
                     "end_st": round(end, 2), "low_st": round(low, 2), "start_st": round(start, 2),
                     "rise_st": round(rise, 2), "fall_st": round(fall, 2)})
    if not utts:
        out = {**base, "label": "no_voice", "utterances": [], "median_f0_hz": round(med, 1), "range_st": None}
        return ToolResult(output=out, claims=[Claim(text="No utterance holds enough voiced speech to hear its end.",
                                                    data={"label": "no_voice"})])
    label = utts[-1]["label"]
    out = {**base, "label": label, "utterances": utts, "median_f0_hz": round(med, 1),
           "range_st": (round(lo, 2), round(hi, 2))}
    words = {"rise": "rises at the end (as a question)", "fall": "falls at the end (as a statement)",
             "level": "ends level (neither rising nor falling)"}
    last = utts[-1]
    text = (f"The {'last of ' + str(len(utts)) + ' utterances' if len(utts) > 1 else 'utterance'} {words[label]}: "
            f"its last voiced stretch ends at {last['end_st']:+.1f} st re the talker's median {med:.0f} Hz, "
            f"{last['rise_st']:.1f} st above its low point and {last['fall_st']:.1f} st below its start "
            f"(rise >= {RISE_ST:g} st, fall >= {FALL_ST:g} st).")
    if len(utts) > 1:
        text += " Endings in order: " + ", ".join(u["label"] for u in utts) + "."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "endings": [u["label"] for u in utts]})])


# ------------------------------------------------------------------------------------------- word descriptors

class VoiceWordArgs(ToolArgs):
    pass


def _clean(w: str) -> str:
    return "".join(ch for ch in w if ch.isalnum() or ch in "'-").strip("-'")


def phonemes(word: str) -> int:
    """Phonemes a spelling predicts, roughly: letters with common digraphs and trigraphs counted once and a final
    silent 'e' dropped (at least MIN_PHONES). Digits count as a spoken number of about three phonemes each."""
    w = "".join(ch for ch in word.lower() if ch.isascii() and ch.isalnum())
    if w.isdigit():
        return max(MIN_PHONES, 3 * len(w))
    if len(w) > 3 and w.endswith("e") and w[-2] not in "aeiouy":
        w = w[:-1]
    n, i = 0, 0
    while i < len(w):
        step = next((len(d) for d in SPELLING_DIGRAPHS if w.startswith(d, i)), 1)
        n += 1
        i += step
    return max(MIN_PHONES, n)


def _sounding_span(db: np.ndarray, floor: float, s: float, e: float) -> float:
    """Seconds from the first to the last frame of the span that sound (ACTIVE_DB over the floor)."""
    a, b = int(s * SR / WORD_FRAME), max(int(s * SR / WORD_FRAME) + 1, int(np.ceil(e * SR / WORD_FRAME)))
    act = np.flatnonzero(db[a:min(b, len(db))] >= floor + ACTIVE_DB)
    return float((act[-1] - act[0] + 1) * WORD_FRAME / SR) if len(act) else 0.0


class WordLength(ToolOutput):
    word: str = Field(description="the word as recognised")
    start_s: float = Field(description="word start (s)")
    end_s: float = Field(description="word end (s)")
    sounding_s: float = Field(description="seconds of its span that sound (trimmed to active frames)")
    phonemes: int = Field(description="phonemes its spelling predicts")
    stretch: float = Field(description="sounding time over the predicted time at the talker's rate")


class DrawnOutWordOutput(ToolOutput):
    words: list[WordLength] = Field(description="every recognised word with its stretch, in time order")
    drawn_out: int | None = Field(description=f"index of the word drawn out (stretch >= {STRETCH_RATIO} and "
                                               f">= {NEXT_RATIO} x any other word's); None when no word is")
    seconds_per_phoneme: float | None = Field(description="the talker's rate: median seconds per predicted phoneme")
    margin: float | None = Field(description="the most stretched word's stretch over the next different word's")
    model: str = Field(description="the ASR model whose word times were used")


def drawn_out_word(args: VoiceWordArgs, ctx: ToolContext) -> ToolResult:
    words, model = words_of(ctx, args.artifact)
    y = ctx.audio(args.artifact).samples(sr=SR)
    db = frame_db(y, WORD_FRAME)
    floor = float(np.percentile(db, 10)) if len(db) else -100.0
    rows: list[dict[str, Any]] = []
    for w, s, e, _ in words[:MAX_WORDS * 2]:
        if not _clean(w):
            continue
        rows.append({"word": _clean(w), "start_s": round(s, 3), "end_s": round(e, 3),
                     "sounding_s": round(_sounding_span(db, floor, s, e), 3), "phonemes": phonemes(w)})
    if len(rows) < MIN_WORDS:
        out: dict[str, Any] = {"words": [{**r, "stretch": 0.0} for r in rows], "drawn_out": None, "seconds_per_phoneme": None,
               "margin": None, "model": model}
        return ToolResult(output=out, claims=[Claim(
            text=f"Too few recognised words ({len(rows)} < {MIN_WORDS}) to say that one is drawn out.")])
    rate = float(np.median([r["sounding_s"] / r["phonemes"] for r in rows if r["sounding_s"] > 0] or [0.08]))
    rate = max(rate, 0.03)
    for r in rows:
        r["stretch"] = round(r["sounding_s"] / (rate * r["phonemes"]), 2)
    order = sorted(range(len(rows)), key=lambda i: -rows[i]["stretch"])
    top = order[0]
    other = next((i for i in order[1:] if rows[i]["word"].lower() != rows[top]["word"].lower()), None)
    margin = None if other is None else round(rows[top]["stretch"] / max(rows[other]["stretch"], 1e-3), 2)
    picked = top if rows[top]["stretch"] >= STRETCH_RATIO and (margin is None or margin >= NEXT_RATIO) else None
    out = {"words": rows, "drawn_out": picked, "seconds_per_phoneme": round(rate, 4), "margin": margin,
           "model": model}
    t = rows[top]
    if picked is not None:
        text = (f"'{t['word']}' ({t['start_s']:.2f}-{t['end_s']:.2f} s) is drawn out: {t['sounding_s']:.2f} s, "
                f"{t['stretch']:.1f} times what its {t['phonemes']} phonemes take at the talker's rate "
                f"({rate * 1000:.0f} ms per phoneme)" + (f", {margin:.1f} times the next word's stretch" if margin else "")
                + ".")
    else:
        text = (f"No word is clearly drawn out: the most stretched, '{t['word']}', is {t['stretch']:.1f} times its "
                f"predicted length (drawn out: >= {STRETCH_RATIO:g}, and {NEXT_RATIO:g} times the next word's).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"drawn_out": t["word"] if picked is not None else None,
                                                                 "stretch": t["stretch"]})])


class WordVoice(ToolOutput):
    word: str = Field(description="the word as recognised")
    start_s: float = Field(description="word start (s)")
    end_s: float = Field(description="word end (s)")
    change: float | None = Field(description="voice change if the new voice began here: share of the f0 variance "
                                             "a two-level fit explains + 0.5 x d-vector distance of the speech before "
                                             "and from here on (None: too little speech on a side)")


class VoiceChangeWordOutput(ToolOutput):
    words: list[WordVoice] = Field(description="every recognised word, in time order")
    first_new: int | None = Field(description="index of the first word in the new voice; None when the voice does "
                                              "not change")
    cosine: float | None = Field(description="d-vector cosine of the speech before and after the best change")
    f0_jump_st: float | None = Field(description="median f0 after minus before the best change (semitones)")
    model: str = Field(description="the ASR model whose word times were used")


def voice_change_word(args: VoiceWordArgs, ctx: ToolContext) -> ToolResult:
    from audiomind.tools.speaker import embed_windows

    heard, model = words_of(ctx, args.artifact)
    words = [(_clean(w), s, e) for w, s, e, _ in heard if _clean(w)][:MAX_WORDS]
    y = ctx.audio(args.artifact).samples(sr=SR)
    rows: list[dict[str, Any]] = [{"word": w, "start_s": round(s, 3), "end_s": round(e, 3), "change": None}
                                  for w, s, e in words]
    base: dict[str, Any] = {"words": rows, "first_new": None, "cosine": None, "f0_jump_st": None, "model": model}
    if len(words) < 2:
        return ToolResult(output=base, claims=[Claim(text="Too few recognised words to place a change of voice.")])
    a0, b0 = words[0][1], words[-1][2]
    seg = y[int(a0 * SR):int(b0 * SR)]
    f0, _, voiced = voiced_f0(seg) if len(seg) > SR // 10 else (np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool))
    v, med = clean_voiced(f0, voiced) if len(f0) else (voiced, 0.0)
    cands, chunks = [], []
    for k in range(1, len(words)):
        t = words[k][1]
        if t - a0 < MIN_SIDE_S or b0 - t < MIN_SIDE_S:
            continue
        cands.append(k)
        chunks += [y[int(a0 * SR):int(t * SR)], y[int(t * SR):int(b0 * SR)]]
    if not cands:
        return ToolResult(output=base, claims=[Claim(text="The speech is too short to compare two voices.")])
    emb = embed_windows(chunks)
    st = 12 * np.log2(np.maximum(f0, 1.0) / med) if med > 0 else np.zeros(len(f0))
    vi = np.flatnonzero(v)
    total = float(np.var(st[vi]) * len(vi)) if len(vi) >= 10 else 0.0
    scored = []
    for j, k in enumerate(cands):
        cos = float(emb[2 * j] @ emb[2 * j + 1])
        cut = (words[k][1] - a0) * FPS
        lo, hi = st[vi[vi < cut]], st[vi[vi >= cut]]
        jump = float(np.median(hi) - np.median(lo)) if min(len(lo), len(hi)) >= 5 else None
        # share of the f0 variance a change of voice here explains (a two-level fit of the voiced frames)
        explained = (1 - (np.var(lo) * len(lo) + np.var(hi) * len(hi)) / total) if jump is not None and total else 0.0
        score = float(explained) + (1 - cos) * EMB_WEIGHT
        rows[k]["change"] = round(score, 3)
        scored.append((score, k, cos, jump))
    _, k, cos, jump = max(scored)
    # the f0 change placed to the frame (Whisper's word edges drift by a word's part): the best two-level split
    # of the voiced frames, and the first word whose middle lies after it
    if len(vi) >= 20:
        x = st[vi]
        c1, c2 = np.cumsum(x), np.cumsum(x * x)
        m = np.arange(5, len(x) - 5)
        left = c2[m - 1] - c1[m - 1] ** 2 / m
        right = (c2[-1] - c2[m - 1]) - (c1[-1] - c1[m - 1]) ** 2 / (len(x) - m)
        cut = int(m[int(np.argmin(left + right))])
        fjump = float(np.median(x[cut:]) - np.median(x[:cut]))
        t_cut = a0 + vi[cut] / FPS
        after = [i for i in range(1, len(words)) if (words[i][1] + words[i][2]) / 2 >= t_cut]
        if abs(fjump) >= F0_CHANGE_ST and after:
            k, jump = after[0], fjump
            cos = next((c for _, kk, c, _ in scored if kk == k), cos)
    changed = cos < SAME_COS or (jump is not None and abs(jump) >= F0_CHANGE_ST)
    out = {**base, "first_new": k if changed else None, "cosine": round(cos, 3),
           "f0_jump_st": None if jump is None else round(jump, 2)}
    f0_txt = f", median f0 {jump:+.1f} st" if jump is not None else ""
    if changed:
        text = (f"The voice changes at '{words[k][0]}' ({words[k][1]:.2f} s): the speech before and from it on "
                f"differ (voice embedding cosine {cos:.2f}{f0_txt}; another voice: cosine < {SAME_COS:g} or f0 jump "
                f">= {F0_CHANGE_ST:g} st).")
    else:
        text = (f"No change of voice: the likeliest place, before '{words[k][0]}', keeps the voice (cosine {cos:.2f}"
                f"{f0_txt}).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"first_new": words[k][0] if changed else None})])


# ----------------------------------------------------------------------------------------------- noise level

class NoiseLevelArgs(WindowArgs):
    pass


class NoiseLevelOutput(CoveredOutput):
    label: Literal["none", "faint", "moderate", "heavy", "silent"] = Field(
        description=f"none: SNR >= {NONE_DB} dB or pauses below {SILENT_DBFS} dBFS; faint: >= {FAINT_DB} dB; "
                    f"moderate: >= {MASKING_DB} dB; heavy: below; silent: nothing sounds")
    snr_db: float | None = Field(description="signal (active level, noise power subtracted) over the "
                                             "noise floor (dB)")
    noise_floor_dbfs: float = Field(description="power of the pauses (dBFS; -100 when no pause holds sound)")
    pause_s: float = Field(description=f"seconds of pauses that hold sound (quiet runs >= {PAUSE_S} s)")
    signal_dbfs: float = Field(description="mean power of the frames that sound outside the pauses (dBFS)")
    analysed_s: AnalysedWindow


def noise_level(args: NoiseLevelArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.5)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    frames = frame_db(y, WORD_FRAME)
    db = np.sort(frames)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    sounding = db[db >= SILENT_DBFS]
    if not len(sounding):
        sounding = db[-1:]
    quiet = (frames >= SILENT_DBFS) & (frames <= np.percentile(sounding, QUIET_PCT) + QUIET_DB)
    pause = np.zeros(len(frames), dtype=bool)
    for a, b in runs(quiet):
        if (b - a) * WORD_FRAME / SR >= PAUSE_S:
            pause[a:b] = True
    pause_s = float(pause.sum() * WORD_FRAME / SR)
    noise = float(np.mean(10 ** (frames[pause] / 10))) if pause.any() else 1e-10
    active = (frames >= SILENT_DBFS) & ~pause
    loud = float(np.mean(10 ** (frames[active] / 10))) if active.any() else noise
    floor_db, sig_db = 10 * np.log10(noise + 1e-12), 10 * np.log10(loud + 1e-12)
    base |= {"noise_floor_dbfs": round(float(floor_db), 1), "signal_dbfs": round(float(sig_db), 1), "pause_s": round(pause_s, 2)}
    if sig_db < SILENT_DBFS:
        out = {**base, "label": "silent", "snr_db": None}
        return ToolResult(output=out, claims=[Claim(text=f"Nothing sounds above {SILENT_DBFS:g} dBFS.",
                                                    data={"label": "silent"})])
    snr = 10 * np.log10(max(loud - noise, 1e-12) / max(noise, 1e-12))
    snr = float(min(snr, 99.0))
    if floor_db < SILENT_DBFS or snr >= NONE_DB:
        label = "none"
    else:
        label = "faint" if snr >= FAINT_DB else "moderate" if snr >= MASKING_DB else "heavy"
    out = {**base, "label": label, "snr_db": round(snr, 1)}
    words = {"none": "no background noise", "faint": "faint background noise", "moderate": "moderate background noise",
             "heavy": "heavy background noise that masks the sound"}[label]
    text = (f"There is {words}: the pauses sit at {floor_db:.1f} dBFS and the sound at {sig_db:.1f} dBFS, an SNR of "
            f"{snr:.1f} dB (none >= {NONE_DB:g} dB or pauses below {SILENT_DBFS:g} dBFS, faint >= {FAINT_DB:g}, "
            f"moderate >= {MASKING_DB:g}, heavy below).")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "snr_db": out["snr_db"]})])
