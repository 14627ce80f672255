"""How speech is delivered and framed: whether the clip cuts into speech at its start or end (truncation), whether
the talker speaks fluently or hesitates (fluency), and how loud the voice is against the sound behind it
(speech_over_background).

- truncation: 10 ms frame levels. The speech level is the median of the frames Silero VAD holds as speech (the
  loud frames when it finds none); the noise floor the 10th percentile of all frames. The level of the 30 ms next
  to each edge (leaving out the first and last EDGE_SKIP_S, where an editor's ramp sits) is compared with both: an
  edge within EDGE_BELOW_SPEECH_DB of the speech level and EDGE_ABOVE_FLOOR_DB over the floor is inside a
  sounding word. A natural start or end also leaves time around the speech: a sentence that ends decays to the
  floor before the clip ends. The asr tool's word times are reported with the edges (a word running into the
  edge) and decide when the level is in between (within EDGE_GREY_DB of the threshold). On flite sentences cut
  inside a word the edge sits -3 to +5 dB from the speech level; whole sentences begin and end 20-40 dB below it.
- fluency: filled pauses from the asr tool's words (um, uh, er, erm, hmm, ...: recognisers often drop them) and
  from the signal: a voiced stretch of at least FILLER_MIN_S with a flat pitch (10-90% f0 range < FILLER_FLAT_ST)
  and a steady spectrum, outside any recognised word or no longer than that word allows (a held 'uhhh' or
  'mmm'). Silent pauses: stretches inside the speech (between its first and last active frame) below the
  speech activity threshold for at least SILENT_PAUSE_S and PAUSE_RATIO times the talker's own median gap. Any
  filled pause: filled_pauses; else any silent pause: silent_pauses; else fluent. Pauses between sentences count
  too (a recogniser's punctuation is not reliable enough to exclude them).
- speech_over_background: Silero speech probability per 32 ms; STFT frames (32 ms) where speech is present and
  where it is absent (but the clip is not silent). The background's mean power spectrum comes from the frames
  without speech (when the background never pauses, from the 20th percentile of each bin over the speech
  frames). The voice's power is what the speech frames hold above that spectrum in the bins they raise by more
  than MASK_DB (a binary-mask separation), less what the background frames themselves hold above it (its own
  fluctuation). voice-to-background ratio = 10 log10(voice power / background power): >= LOUDER_DB voice
  louder, <= -LOUDER_DB background louder, between: about equal; >= NO_BACKGROUND_DB: no background worth
  naming."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field

from audiomind.language.text import FILLERS, letters
from audiomind.tools.base import Claim, CoveredOutput, ToolContext, ToolOutput, ToolResult
from audiomind.tools.descriptors.common import frame_db, runs, speech_probability, within_budget, words_of
from audiomind.tools.fields import AnalysedWindow
from audiomind.tools.window import WindowArgs, excerpt

SR = 16000
MAX_S = 120.0                 # the stretch analysed at most (coverage says so); every step is linear in it

# truncation
LEVEL_FRAME = 160             # 10 ms frames
LEVEL_HOP = 80                # at a 5 ms hop for the edges
NEAR_SHARE = 0.6              # in noise: at speech level = 60% of the way from the floor to the speech level
QUIET_DB = 3.0                # at the floor: within this of it
ABRUPT_S = 0.02               # speech that rises from / falls to the floor this fast ...
BOUNDARY_BELOW_SPEECH_DB = 4.0  # ... at this close to the speech level over the 30 ms inside it was cut
EDGE_SKIP_S = 0.01            # an editor's fade at a cut (5 ms ramps) is left out
EDGE_S = 0.03                 # the edge level: the 30 ms after the skipped part
EDGE_BELOW_SPEECH_DB = 10.0   # an edge this close to the speech level is inside speech ...
EDGE_ABOVE_FLOOR_DB = 6.0     # ... and must stand this far over the noise floor
EDGE_GREY_DB = 3.0            # within this of the threshold the recognised words decide
WORD_AT_EDGE_S = 0.08         # a recognised word starting / ending this close to an edge runs into it

# fluency
FILLER_MIN_S = 0.3            # a voiced stretch this long ...
FILLER_FLAT_ST = 1.0          # ... with its 10-90% f0 range below this (semitones) ...
FILLER_FLUX = 0.6             # ... and a steady spectrum (mean log-mel change per 10 ms) is a held filler
SILENT_PAUSE_S = 0.6          # a silence inside the speech at least this long ...
PAUSE_RATIO = 3.0             # ... and this many times the talker's median gap is a silent stop
ACTIVE_BELOW_SPEECH_DB = 25.0  # frames within this of the speech level (and 8 dB over the floor) are speech

# speech over background
STFT_N = 512                  # 32 ms, one Silero window
SPEECH_P, NONSPEECH_P = 0.5, 0.2
SILENT_DBFS = -70.0           # a frame below this is digital silence, not background
MASK_DB = 3.0
LOUDER_DB = 6.0
NO_BACKGROUND_DB = 35.0
MIN_SPEECH_S = 0.3
WEAK_SPEECH_P = 0.15          # Silero's highest probability this high (< SPEECH_P): a buried voice, read at half of it


class DeliveryArgs(WindowArgs):
    pass


def _words(ctx: ToolContext, artifact: str) -> list[tuple[str, float, float, float]]:
    try:
        return words_of(ctx, artifact)[0]
    except Exception:  # noqa: BLE001 - the signal measurements stand without the recogniser
        return []


# ---------------------------------------------------------------------------------------------- truncation

class EdgeReading(ToolOutput):
    level_db: float = Field(description="level of the 30 ms next to the edge (dBFS)")
    re_speech_db: float = Field(description="that level relative to the speech level (dB)")
    re_floor_db: float = Field(description="that level relative to the noise floor (dB)")
    word_at_edge: str | None = Field(description="a recognised word running into the edge, if any")
    gap_s: float = Field(description="time between the edge and the nearest frame at speech level (s)")
    boundary_re_speech_db: float = Field(description="level of the 30 ms of speech next to that boundary re the speech level (dB)")
    ramp_s: float = Field(description="how long the speech nearest the edge takes to rise from / fall to the floor (s)")
    in_speech: bool = Field(description="the clip cuts into sounding speech here")


class TruncationOutput(CoveredOutput):
    label: Literal["complete", "cut_start", "cut_end", "cut_both", "no_speech"] = Field(
        description="where the clip cuts into speech: at its start, its end, both, or neither (complete)")
    speech_level_db: float | None = Field(description="median level of the speech frames (dBFS)")
    floor_db: float | None = Field(description="noise floor: 10th percentile of the 10 ms frame levels (dBFS)")
    start: EdgeReading | None = Field(description="the clip's first edge")
    end: EdgeReading | None = Field(description="the clip's last edge")
    analysed_s: AnalysedWindow


def _near(speech_db: float, floor: float) -> float:
    """The level above which a frame is at speech level: EDGE_BELOW_SPEECH_DB under the speech level, or
    NEAR_SHARE of the way from the floor to it when the floor is close (noise)."""
    return max(speech_db - EDGE_BELOW_SPEECH_DB, floor + NEAR_SHARE * (speech_db - floor))


def _edge(db: np.ndarray, speech_db: float, floor: float, at_start: bool,
          words: list[tuple[str, float, float, float]], dur: float) -> dict:
    """One edge of the clip (db: 10 ms frames at a 5 ms hop): inside speech when the clip's first / last 30 ms
    are at speech level, or when the speech nearest the edge rises from / falls to the floor within ABRUPT_S
    (a cut followed by silence or padding: natural speech swells and decays over tens of ms)."""
    hop_s = LEVEL_HOP / SR
    skip, k = int(EDGE_SKIP_S / hop_s), max(1, int(EDGE_S / hop_s))
    part = db[skip:skip + k] if at_start else db[len(db) - skip - k:len(db) - skip]
    level = float(10 * np.log10(np.mean(10 ** (part / 10)) + 1e-12))
    near = _near(speech_db, floor)
    seq = db if at_start else db[::-1]
    loud = np.flatnonzero(seq >= near)
    first_loud = int(loud[0]) if len(loud) else len(seq)
    quiet = np.flatnonzero(seq[:first_loud] <= floor + QUIET_DB)
    ramp_s = (first_loud - int(quiet[-1])) * hop_s if len(quiet) else 0.0
    gap_s = first_loud * hop_s
    word = None
    if words:
        w = words[0] if at_start else words[-1]
        if (w[1] if at_start else dur - w[2]) <= WORD_AT_EDGE_S:
            word = w[0]
    at_edge = level >= near and level >= floor + EDGE_ABOVE_FLOOR_DB
    # ... and the speech is at its full level right at that boundary (the 30 ms inside it), not swelling / decaying
    inner = seq[first_loud:first_loud + k]
    inner_db = float(10 * np.log10(np.mean(10 ** (inner / 10)) + 1e-12)) if len(inner) else floor
    # only at the end: speech onsets are often this abrupt by nature (flite's reach full level in 10-15 ms, as fast
    # as a cut with a 5 ms ramp), offsets decay
    abrupt = (not at_start and len(quiet) > 0 and ramp_s <= ABRUPT_S
              and inner_db >= speech_db - BOUNDARY_BELOW_SPEECH_DB)
    inside = at_edge or abrupt
    if not at_edge and abs(level - near) < EDGE_GREY_DB and words and not abrupt:
        inside = word is not None
    return {"level_db": round(level, 1), "re_speech_db": round(level - speech_db, 1),
            "re_floor_db": round(level - floor, 1), "word_at_edge": word, "gap_s": round(float(gap_s), 3),
            "ramp_s": round(float(ramp_s), 3), "boundary_re_speech_db": round(inner_db - speech_db, 1), "in_speech": bool(inside)}


def _speech_level(db: np.ndarray, prob10: np.ndarray, hop: int = LEVEL_FRAME) -> tuple[float, float, np.ndarray]:
    """(speech level, floor, active-speech mask) over level frames `hop` samples apart: the speech level is the
    median of the frames Silero holds as speech, the floor the median of those it holds as no speech (the 10th
    percentile of all frames when there are too few)."""
    ns = prob10 < NONSPEECH_P
    floor = float(np.median(db[ns])) if ns.sum() >= int(0.1 * SR / hop) else float(np.percentile(db, 10))
    sp = prob10 >= SPEECH_P
    ref = db[sp] if sp.sum() >= int(MIN_SPEECH_S * SR / hop) else db[db >= np.percentile(db, 70)]
    speech_db = float(np.median(ref))
    active = (db >= speech_db - ACTIVE_BELOW_SPEECH_DB) & (db >= floor + 8.0)
    return speech_db, floor, active


def _prob_per_frame(prob: np.ndarray, n_frames: int, hop: int) -> np.ndarray:
    from audiomind.tools.vad import WINDOW

    i = np.minimum((np.arange(n_frames) * hop + hop // 2) // WINDOW, len(prob) - 1)
    return prob[i] if len(prob) else np.zeros(n_frames)


def truncation(args: DeliveryArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    db = frame_db(y, LEVEL_FRAME, LEVEL_HOP)
    prob = _prob_per_frame(speech_probability(ctx, args.artifact, t0, len(y)), len(db), LEVEL_HOP)
    if (prob >= SPEECH_P).sum() < int(MIN_SPEECH_S * SR / LEVEL_HOP):
        out = {**base, "label": "no_speech", "speech_level_db": None, "floor_db": None, "start": None, "end": None}
        return ToolResult(output=out, claims=[Claim(text="No speech found (Silero VAD), so nothing is cut off.",
                                                    data={"label": "no_speech"})])
    speech_db, floor, _ = _speech_level(db, prob, LEVEL_HOP)
    words = [(w, a - t0, b - t0, p) for w, a, b, p in _words(ctx, args.artifact) if a >= t0 - 0.05 and b <= t1 + 0.05]
    dur = t1 - t0
    first = _edge(db, speech_db, floor, True, words, dur)
    last = _edge(db, speech_db, floor, False, words, dur)
    label = {(True, True): "cut_both", (True, False): "cut_start", (False, True): "cut_end",
             (False, False): "complete"}[(first["in_speech"], last["in_speech"])]
    out = {**base, "label": label, "speech_level_db": round(speech_db, 1), "floor_db": round(floor, 1),
           "start": first, "end": last}

    def said(e: dict, where: str) -> str:
        state = "cuts into speech" if e["in_speech"] else "is outside speech"
        return (f"the {where} {state} (edge {e['re_speech_db']:+.1f} dB re the speech level, {e['re_floor_db']:+.1f} dB "
                f"re the floor; the nearest speech {'rises' if where == 'start' else 'falls'} in {e['ramp_s'] * 1000:.0f} ms" + (f"; the word '{e['word_at_edge']}' runs into it" if e["word_at_edge"] else "") + ")")

    words_for = {"complete": "holds the speech whole (no cut at either end)", "cut_start": "starts in the middle of speech",
                 "cut_end": "stops in the middle of speech", "cut_both": "starts and stops in the middle of speech"}
    text = (f"The clip {words_for[label]}: {said(first, 'start')}, {said(last, 'end')}; an edge at speech level, "
            f"or speech rising from / falling to the floor within {ABRUPT_S * 1000:g} ms, is a cut.")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label})])


# ------------------------------------------------------------------------------------------------- fluency

class Pause(ToolOutput):
    start_s: float = Field(description="start (s)")
    end_s: float = Field(description="end (s)")
    source: Literal["asr", "signal"] = Field(description="heard as a word by the recogniser, or found in the signal")
    word: str | None = Field(description="the filler word recognised (asr)")


class FluencyOutput(CoveredOutput):
    label: Literal["fluent", "filled_pauses", "silent_pauses", "no_speech"] = Field(
        description="filled_pauses: any um / uh; else silent_pauses: any stop inside the speech; else fluent")
    filled: list[Pause] = Field(description="filled pauses (um, uh, er, held voiced stretches)")
    silent: list[Pause] = Field(description="silent stops inside the speech")
    median_gap_s: float = Field(description="the talker's median gap between stretches of speech (s)")
    longest_silence_s: float = Field(description="longest silence inside the speech (s)")
    analysed_s: AnalysedWindow


def _held_voicing(y: np.ndarray, active: np.ndarray, words: list[tuple[str, float, float, float]]) -> list[tuple[float, float]]:
    """Voiced stretches >= FILLER_MIN_S with flat pitch and a steady spectrum, not inside a recognised word long
    enough to hold them."""
    import librosa

    hop = LEVEL_FRAME
    f0 = librosa.yin(y, fmin=70, fmax=400, sr=SR, frame_length=1024, hop_length=hop, center=True)
    mel = np.log(librosa.feature.melspectrogram(y=y, sr=SR, n_fft=512, hop_length=hop, n_mels=40, center=True) + 1e-8)
    n = min(len(f0), mel.shape[1], len(active))
    from audiomind.tools.descriptors.intonation import periodicity

    r = periodicity(y, f0[:n], SR, 1024, hop)
    voiced = (r >= 0.7) & active[:n]
    flux = np.r_[0.0, np.sqrt(np.mean(np.diff(mel[:, :n], axis=1) ** 2, axis=0))]
    steady = voiced & (flux <= FILLER_FLUX * 2)
    found = []
    for a, b in runs(steady):
        if (b - a) * hop / SR < FILLER_MIN_S:
            continue
        st = 12 * np.log2(f0[a:b] / np.median(f0[a:b]))
        if np.percentile(st, 90) - np.percentile(st, 10) >= FILLER_FLAT_ST or float(np.mean(flux[a:b])) > FILLER_FLUX:
            continue
        s, e = a * hop / SR, b * hop / SR
        # a recognised word covering the stretch and long enough to hold it is that word's vowel, not a filler
        if any(ws <= s + 0.05 and we >= e - 0.05 and letters(w).replace("'", "") not in FILLERS and (we - ws) > 1.6 * (e - s)
               for w, ws, we, _ in words):
            continue
        found.append((s, e))
    return found


def fluency(args: DeliveryArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    db = frame_db(y, LEVEL_FRAME)
    prob = _prob_per_frame(speech_probability(ctx, args.artifact, t0, len(y)), len(db), LEVEL_FRAME)
    if (prob >= SPEECH_P).sum() < int(MIN_SPEECH_S * SR / LEVEL_FRAME):
        out = {**base, "label": "no_speech", "filled": [], "silent": [], "median_gap_s": 0.0, "longest_silence_s": 0.0}
        return ToolResult(output=out, claims=[Claim(text="No speech found (Silero VAD) to judge fluency.",
                                                    data={"label": "no_speech"})])
    _, _, active = _speech_level(db, prob)
    words = [(w, a - t0, b - t0, p) for w, a, b, p in _words(ctx, args.artifact) if a >= t0 - 0.05 and b <= t1 + 0.05]
    filled: list[dict[str, Any]] = [{"start_s": round(a + t0, 2), "end_s": round(b + t0, 2), "source": "asr", "word": w}
              for w, a, b, _ in words if letters(w).replace("'", "") in FILLERS]
    for a, b in _held_voicing(y, active, words):
        if not any(f["start_s"] - 0.1 <= a + t0 <= f["end_s"] + 0.1 for f in filled):
            filled.append({"start_s": round(a + t0, 2), "end_s": round(b + t0, 2), "source": "signal", "word": None})
    idx = np.flatnonzero(active)
    gaps = [(a, b) for a, b in runs(~active[idx[0]:idx[-1] + 1])] if len(idx) else []
    gaps = [(a + idx[0], b + idx[0]) for a, b in gaps]
    lens = np.array([(b - a) * LEVEL_FRAME / SR for a, b in gaps]) if gaps else np.zeros(0)
    med = float(np.median(lens)) if len(lens) else 0.0
    silent: list[dict[str, Any]] = [{"start_s": round(a * LEVEL_FRAME / SR + t0, 2), "end_s": round(b * LEVEL_FRAME / SR + t0, 2),
               "source": "signal", "word": None}
              for (a, b), n in zip(gaps, lens) if n >= SILENT_PAUSE_S and n >= PAUSE_RATIO * med]
    label = "filled_pauses" if filled else "silent_pauses" if silent else "fluent"
    out = {**base, "label": label, "filled": sorted(filled, key=lambda f: f["start_s"]), "silent": silent,
           "median_gap_s": round(med, 3), "longest_silence_s": round(float(lens.max()) if len(lens) else 0.0, 3)}
    parts = [f"{len(filled)} filled pause(s)" + (" at " + ", ".join(f"{f['start_s']:.2f} s" + (f" ('{f['word']}')" if f["word"] else "")
                                                                     for f in out["filled"][:6]) if filled else ""),
             f"{len(silent)} silent stop(s) of >= {SILENT_PAUSE_S:g} s" + (" at " + ", ".join(
                 f"{s['start_s']:.2f}-{s['end_s']:.2f} s" for s in silent[:6]) if silent else ""),
             f"longest silence inside the speech {out['longest_silence_s']:.2f} s, median gap {med:.2f} s"]
    words_for = {"fluent": "fluent", "filled_pauses": "hesitant, with filled pauses (um / uh)",
                 "silent_pauses": "hesitant, with silent stops"}
    text = f"The speech is {words_for[label]}: " + "; ".join(parts) + "."
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "filled": len(filled),
                                                                 "silent": len(silent)})])


# ----------------------------------------------------------------------------------- speech over background

class SpeechOverBackgroundOutput(CoveredOutput):
    label: Literal["voice_louder", "about_equal", "background_louder", "no_background", "no_speech"] = Field(
        description=f"voice-to-background ratio >= {LOUDER_DB:g} dB: voice louder; <= -{LOUDER_DB:g} dB: background "
                    f"louder; between: about equal; >= {NO_BACKGROUND_DB:g} dB: no background")
    ratio_db: float | None = Field(description="voice power over background power (dB)")
    voice_db: float | None = Field(description="estimated voice power during speech (dBFS)")
    background_db: float | None = Field(description="background power (dBFS)")
    speech_s: float = Field(description="seconds of speech frames measured")
    background_only_s: float = Field(description="seconds of frames holding background without speech")
    analysed_s: AnalysedWindow


def speech_over_background(args: DeliveryArgs, ctx: ToolContext) -> ToolResult:
    y, t0, t1 = excerpt(ctx, args, sr=SR, min_s=0.3)
    y, t1 = within_budget(ctx, y, t0, t1, MAX_S)
    base: dict[str, Any] = {"analysed_s": (round(t0, 3), round(t1, 3))}
    prob = speech_probability(ctx, args.artifact, t0, len(y))
    n = min(len(prob), len(y) // STFT_N)
    frames = y[: n * STFT_N].reshape(n, STFT_N).astype(np.float64)
    level = 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)
    fs = STFT_N / SR
    top = float(prob[:n].max()) if n else 0.0
    # a voice buried under louder sound barely moves Silero: its most speech-like frames stand for it
    sp_p = SPEECH_P if top >= SPEECH_P or top < WEAK_SPEECH_P else 0.5 * top
    sp = prob[:n] >= sp_p
    ns = (prob[:n] < min(NONSPEECH_P, 0.5 * sp_p)) & (level > SILENT_DBFS)
    if sp.sum() * fs < min(MIN_SPEECH_S, 0.1 if sp_p < SPEECH_P else MIN_SPEECH_S):
        out = {**base, "label": "no_speech", "ratio_db": None, "voice_db": None, "background_db": None,
               "speech_s": round(sp.sum() * fs, 2), "background_only_s": round(ns.sum() * fs, 2)}
        return ToolResult(output=out, claims=[Claim(text="No speech found (Silero VAD) to set against the background.",
                                                    data={"label": "no_speech"})])
    win = np.hanning(STFT_N)
    # power spectrum per frame, normalised so that summing the bins gives the frame's mean-square level
    P = np.abs(np.fft.rfft(frames * win, axis=1)) ** 2 / (np.sum(win ** 2) * STFT_N / 2)
    if ns.sum() * fs >= MIN_SPEECH_S:
        B = P[ns].mean(axis=0)
        own = P[ns]
    else:  # the background never pauses: its floor under the speech
        B = np.percentile(P[sp], 20, axis=0)
        own = None
    thr = 10 ** (MASK_DB / 10)

    def excess(Q: np.ndarray) -> float:
        return float(np.mean(np.sum(np.where(thr * B < Q, Q - B, 0.0), axis=1)))

    voice = max(excess(P[sp]) - (excess(own) if own is not None else 0.0), 1e-12)
    bg = max(float(B.sum()), 1e-12)
    ratio = 10 * np.log10(voice / bg)
    silent_bg = own is None and float(10 * np.log10(bg)) < SILENT_DBFS
    if ratio >= NO_BACKGROUND_DB or silent_bg:
        label = "no_background"
    elif ratio >= LOUDER_DB:
        label = "voice_louder"
    elif ratio <= -LOUDER_DB:
        label = "background_louder"
    else:
        label = "about_equal"
    out = {**base, "label": label, "ratio_db": round(ratio, 1), "voice_db": round(10 * np.log10(voice), 1),
           "background_db": round(10 * np.log10(bg), 1), "speech_s": round(sp.sum() * fs, 2),
           "background_only_s": round(ns.sum() * fs, 2)}
    words_for = {"voice_louder": "much louder than the background", "about_equal": "about as loud as the background",
                 "background_louder": "much quieter than the background", "no_background": "alone (no background to speak of)"}
    src = ("the frames without speech" if own is not None else "the quietest fifth of each band under the speech")
    text = (f"The voice is {words_for[label]}: voice {ratio:+.1f} dB re the background (background spectrum from {src}; "
            f"voice = what speech frames hold more than {MASK_DB:g} dB above it; +-{LOUDER_DB:g} dB bounds 'about equal').")
    return ToolResult(output=out, claims=[Claim(text=text, data={"label": label, "ratio_db": out["ratio_db"]})])
