"""speech_and_speaker: what words are spoken and when (faster-whisper on CPU, int8, embedded models).

A transcript is evidence of words and their timing and of the spoken language. It says nothing about
who spoke, how many people spoke, how they felt, or which non-speech sounds occur.
"""

from __future__ import annotations

import math
import threading
from typing import Literal

from pydantic import Field

from audiomind.audio import check_deadline
from audiomind.embedded import models, sessions
from audiomind.state import Coverage
from audiomind.tools.base import Claim, ToolArgs, ToolContext, ToolOutput, ToolResult, coverage, plan_windows
from audiomind.tools.vad import FRAME_S, cached_speech_probabilities, segments_from_probs

SR = 16000
MAX_WORDS_IN_OUTPUT = 2000  # keep traces compact for long recordings
MAX_SEGMENT_CLAIMS = 60
VAD_THRESHOLD = 0.5
NO_SPEECH_PROB = 0.5  # Whisper's own no-speech estimate above which a VAD-silent segment is dropped
# One beam-search decode at temperature 0, no sampled fallback: Whisper's fallback samples at rising
# temperatures from an unseeded generator (ctranslate2 has no per-call seed), so the same clip gave different
# words from run to run ('One moment, please.' / 'one-moment plane'); a trace must be reproducible.
TEMPERATURE = 0.0
# What the fallback guarded against, checked instead: a segment whose text compresses this well (gzip) is a
# runaway repetition (Whisper's own compression_ratio_threshold), e.g. ' . . .' written on a synth bass.
MAX_COMPRESSION_RATIO = 2.4
LONG_WINDOW_S = 180.0  # a longer window is transcribed only where Silero VAD finds speech (see speech_pieces)
SPEECH_PAD_S = 1.0  # context kept either side of each speech segment in a long window
SPEECH_GAP_S = 2.0  # speech segments closer than this are transcribed together
PIECE_S = 30.0  # Whisper's own window: longer speech is cut into pieces of at most this


def _model(name: str):
    """One WhisperModel per embedded model name per process (loading costs ~0.5-1 s)."""

    def load():
        from faster_whisper import WhisperModel

        return WhisperModel(str(models.whisper_model_dir(name)), device="cpu", compute_type="int8",
                            cpu_threads=sessions.intra_op_threads())

    return sessions.get(f"whisper-{name}", load)


def _model_lock(name: str) -> threading.Lock:
    """Serialise use of one model: a thread pool must not share its single worker."""
    return sessions.lock(f"whisper-{name}")


class AsrArgs(ToolArgs):
    model: Literal["tiny.en", "base"] = Field(
        "tiny.en", description="embedded Whisper model: tiny.en (English only, fast) or base (multilingual)")
    language: str | None = Field(
        None, min_length=2, max_length=5,
        description="ISO language code to force (e.g. 'en'); None detects it (tiny.en is always 'en')")
    vad_filter: bool = Field(False, description="skip non-speech with Silero VAD before decoding")
    refine_with_vad: bool = Field(
        True, description="snap word edges that fall in silence to Silero VAD speech onsets/offsets and drop "
                          "segments Whisper itself marks as no-speech where the VAD finds no speech")
    skip_without_speech: bool = Field(
        True, description="do not run Whisper when Silero VAD finds no speech anywhere in the window (Whisper "
                          "is slow and invents words on tones, music and silence)")
    beam_size: int = Field(5, ge=1, le=10, description="beam search width")
    start_s: float = Field(0.0, ge=0.0, description="transcribe from this time (s)")
    end_s: float | None = Field(None, gt=0.0, description="transcribe up to this time (s); None = to the end")


class AsrWord(ToolOutput):
    word: str = Field(description="the word as Whisper wrote it (stripped)")
    start: float = Field(description="word start (s, artifact time)")
    end: float = Field(description="word end (s, artifact time)")
    probability: float = Field(description="Whisper's word probability (0-1)")


class AsrSegment(ToolOutput):
    start: float = Field(description="segment start (s, artifact time)")
    end: float = Field(description="segment end (s, artifact time)")
    text: str = Field(description="the segment's transcript")
    avg_logprob: float = Field(description="mean token log-probability of the segment")
    no_speech_prob: float = Field(description="Whisper's no-speech probability of the segment (0-1)")
    words: list[AsrWord] = Field(description="the segment's words with times")


class DroppedSegment(ToolOutput):
    """A segment left out of the transcript: Whisper marked it as no-speech where Silero VAD found no speech
    either, or its text is a runaway repetition (Whisper's own failed-decode test)."""

    start: float = Field(description="segment start (s)")
    end: float = Field(description="segment end (s)")
    text: str = Field(description="what Whisper wrote for it")
    no_speech_prob: float = Field(description="Whisper's no-speech probability (0-1)")
    reason: Literal["no_speech", "repetition"] = Field(
        "no_speech", description="no_speech: Whisper and Silero VAD agree there is no speech; repetition: the text "
                                 f"compresses more than {MAX_COMPRESSION_RATIO:g}x (gzip), a runaway decode")
    compression_ratio: float | None = Field(None, description="gzip compression ratio of the text (repetition only)")


class LanguageCandidate(ToolOutput):
    code: str = Field(description="ISO language code")
    probability: float = Field(description="Whisper's language-detection probability (0-1)")


class AsrOutput(ToolOutput):
    text: str = Field(description="the whole transcript ('' when nothing was transcribed)")
    language: str | None = Field(description="ISO code of the language (detected or forced); None when "
                                             "Whisper was skipped without a forced language")
    language_probability: float | None = Field(description="Whisper's language probability; None when skipped")
    language_candidates: list[LanguageCandidate] = Field(
        default_factory=list, description="the 10 most probable languages by Whisper's detector (multilingual models "
                                          "detecting, not forced); lets a question's own candidates be compared")
    model: str = Field(description="embedded Whisper model (tiny.en or base)")
    segments: list[AsrSegment] = Field(description="transcript segments in time order")
    n_words: int = Field(description="words listed in the segments")
    words_truncated: bool = Field(description="words beyond the output cap were left out")
    window_s: tuple[float, float] = Field(description="transcribed window [start, end] (s)")
    skipped: str | None = Field(None, description="why Whisper was not run (no speech found by Silero VAD); "
                                                  "None when it ran")
    vad_max_prob: float | None = Field(None, description="highest Silero speech probability in the window; set "
                                                         "only when Whisper was skipped")
    timing_refined_with_vad: bool | None = Field(None, description="word edges snapped to Silero VAD; None "
                                                                   "when skipped")
    dropped_non_speech_segments: list[DroppedSegment] = Field(
        default_factory=list, description="segments left out: non-speech (Whisper and VAD agree) or a runaway "
                                          "repetition (see each one's reason)")
    coverage: Coverage | None = Field(None, description="the stretches Whisper transcribed (artifact time): the whole "
                                                        "window, or in a long window only Silero's speech")


def _r(x: float, nd: int = 3) -> float:
    return round(float(x), nd)


def _has_speech(probs, start: float, end: float, threshold: float = VAD_THRESHOLD) -> bool:
    fa, fb = int(start / FRAME_S), math.ceil(end / FRAME_S)
    return bool(len(probs[fa:fb]) and probs[fa:fb].max() >= threshold)


def _snap(probs, start: float, end: float, threshold: float = VAD_THRESHOLD) -> tuple[float, float]:
    """Whisper stretches a word over the silence before it (a known weakness of its cross-attention
    timing); move an edge that lies in VAD silence to the nearest speech frame inside the word."""
    fa, fb = int(start / FRAME_S), max(int(start / FRAME_S) + 1, math.ceil(end / FRAME_S))
    seg = probs[fa:fb]
    speech = [i for i, p in enumerate(seg) if p >= threshold]
    if not speech:
        return start, end
    new_start = start if seg[0] >= threshold else (fa + speech[0]) * FRAME_S
    new_end = end if seg[-1] >= threshold else min(end, (fa + speech[-1] + 1) * FRAME_S)
    return new_start, max(new_end, new_start)


def speech_pieces(probs, n_samples: int, pad_s: float = SPEECH_PAD_S, gap_s: float = SPEECH_GAP_S,
                  piece_s: float = PIECE_S) -> list[tuple[float, float]]:
    """[start, end] (s, window time) of what Whisper transcribes in a long window: Silero's speech segments
    padded by pad_s and joined across gaps under gap_s into pieces of at most piece_s, a new piece starting at a
    pause (never inside a segment) unless one segment alone is longer than piece_s. Pieces do not overlap."""
    duration = n_samples / SR
    pieces: list[list[float]] = []
    for x, y in segments_from_probs(probs, n_samples, VAD_THRESHOLD):
        a, b = max(0.0, x / SR - pad_s), min(duration, y / SR + pad_s)
        if pieces and a - pieces[-1][1] <= gap_s and b - pieces[-1][0] <= piece_s:
            pieces[-1][1] = max(pieces[-1][1], b)  # the same breath group: one piece
        elif pieces and a < pieces[-1][1]:
            pieces.append([pieces[-1][1], b])  # padding overlaps the previous piece: start where it ends
        else:
            pieces.append([a, b])
    return [w for a, b in pieces if b > a for w in plan_windows(a, b, piece_s)]


def dropped_segment(s, probs, rel: float, offset: float) -> dict | None:
    """Why a decoded segment is no speech, in artifact time, or None to keep it: Whisper and Silero agree
    there is no speech, or its text is a runaway repetition (compressing beyond Whisper's own 2.4x)."""
    s_start, s_end = s.start + rel, s.end + rel
    where = {"start": _r(s_start + offset, 2), "end": _r(s_end + offset, 2), "text": s.text.strip(),
             "no_speech_prob": _r(s.no_speech_prob)}
    if probs is not None and s.no_speech_prob > NO_SPEECH_PROB and not _has_speech(probs, s_start, s_end):
        return {**where, "reason": "no_speech"}
    if s.compression_ratio > MAX_COMPRESSION_RATIO:
        return {**where, "reason": "repetition", "compression_ratio": _r(s.compression_ratio, 2)}
    return None


def _transcribe(args: AsrArgs, language: str | None, clip, probs, rel: float, offset: float,
                n_words: int, segments: list, dropped: list):
    """Whisper on `clip` (starting `rel` s into the window, which starts at `offset` s of the artifact);
    segments and dropped segments appended in artifact time; returns (info, words so far)."""
    check_deadline("ASR")  # an abandoned call stops before its next piece (audiomind.audio.decode_deadline)
    with _model_lock(args.model):
        model = _model(args.model)
        seg_iter, info = model.transcribe(
            clip,
            language=language,
            beam_size=args.beam_size,
            word_timestamps=True,
            vad_filter=args.vad_filter,
            temperature=TEMPERATURE,
            condition_on_previous_text=False,  # fewer runaway repetitions on long or odd audio
        )
        raw_segments = list(seg_iter)
    for s in raw_segments:
        s_start, s_end = s.start + rel, s.end + rel  # window time (probs are per window frame)
        drop = dropped_segment(s, probs, rel, offset)
        if drop is not None:
            dropped.append(drop)
            continue
        words = []
        for w in s.words or []:
            if n_words >= MAX_WORDS_IN_OUTPUT:
                break
            ws, we = (w.start + rel, w.end + rel)
            if probs is not None:
                ws, we = _snap(probs, ws, we)
            words.append({"word": w.word.strip(), "start": _r(ws + offset, 2), "end": _r(we + offset, 2),
                          "probability": _r(w.probability)})
            n_words += 1
        seg_start, seg_end = s_start, s_end
        if probs is not None and s.words:
            seg_start, seg_end = _snap(probs, s_start, s_end)
        segments.append({
            "start": _r(seg_start + offset, 2),
            "end": _r(seg_end + offset, 2),
            "text": s.text.strip(),
            "avg_logprob": _r(s.avg_logprob),
            "no_speech_prob": _r(s.no_speech_prob),
            "words": words,
        })
    return info, n_words


def asr(args: AsrArgs, ctx: ToolContext) -> ToolResult:
    audio = ctx.audio(args.artifact)
    y = audio.samples(sr=SR, mono=True)
    a = min(int(args.start_s * SR), len(y))
    b = len(y) if args.end_s is None else min(int(args.end_s * SR), len(y))
    if b <= a:
        raise ValueError(f"empty time range {args.start_s}-{args.end_s} s (clip is {len(y) / SR:.2f} s)")
    offset = a / SR
    window = (offset, b / SR)
    language = args.language
    if args.model == "tiny.en":
        if language not in (None, "en"):
            raise ValueError("tiny.en only transcribes English; use model='base' for other languages")
        language = "en"
    long_window = (b - a) / SR > LONG_WINDOW_S
    need_probs = args.refine_with_vad or args.skip_without_speech or long_window
    probs = cached_speech_probabilities(audio.path, y, a, b) if need_probs else None
    vad_max = float(probs.max()) if probs is not None and len(probs) else None
    pieces = speech_pieces(probs, b - a) if long_window and probs is not None else [(0.0, (b - a) / SR)]
    if (args.skip_without_speech and vad_max is not None and vad_max < VAD_THRESHOLD) or not pieces:
        out = {"text": "", "language": language, "language_probability": None, "model": args.model,
               "segments": [], "n_words": 0, "words_truncated": False,
               "window_s": [_r(offset, 2), _r(b / SR, 2)], "skipped": "no speech found by Silero VAD",
               "vad_max_prob": _r(vad_max) if vad_max is not None else None,
               "coverage": coverage([], window, 0, None, "Whisper was not run: Silero VAD found no speech")}
        return ToolResult(output=out, claims=[Claim(
            text=(f"No words were transcribed between {offset:.2f} and {b / SR:.2f} s: Silero VAD found no speech "
                  f"(highest speech probability {vad_max or 0.0:.2f}), so Whisper was not run."),
            data={"window_s": out["window_s"], "vad_max_prob": out["vad_max_prob"]},
        )])
    probs_for_words = probs if args.refine_with_vad else None
    segments: list[dict] = []
    dropped: list[dict] = []
    n_words = 0
    info = None
    for rel_a, rel_b in pieces:
        clip = y[a + round(rel_a * SR) : a + round(rel_b * SR)]
        piece_info, n_words = _transcribe(args, language, clip, probs_for_words, rel_a, offset, n_words,
                                          segments, dropped)
        info = info or piece_info
    note = None
    if long_window:
        speech_s = sum(q - p for p, q in pieces)
        note = (f"the window is longer than {LONG_WINDOW_S:g} s, so Whisper ran only where Silero VAD found speech "
                f"(+-{SPEECH_PAD_S:g} s, pieces of at most {PIECE_S:g} s): {len(pieces)} piece(s), {speech_s:.1f} s of "
                f"{(b - a) / SR:.1f} s; the rest had no speech by Silero")
    cov = coverage([(offset + p, offset + q) for p, q in pieces], window, len(pieces),
                   PIECE_S if long_window else None, note)
    text = " ".join(s["text"] for s in segments if s["text"]).strip()
    out = {
        "text": text,
        "language": info.language,
        "language_probability": _r(info.language_probability),
        "language_candidates": [{"code": c, "probability": _r(p)} for c, p in (info.all_language_probs or [])[:10]]
        if args.model != "tiny.en" and args.language is None else [],
        "model": args.model,
        "segments": segments,
        "n_words": sum(len(s["words"]) for s in segments),
        "words_truncated": n_words >= MAX_WORDS_IN_OUTPUT,
        "window_s": [_r(offset, 2), _r(b / SR, 2)],
        "timing_refined_with_vad": args.refine_with_vad,
        "dropped_non_speech_segments": dropped,
        "coverage": cov,
    }

    claims: list[Claim] = []
    if not text:
        claims.append(Claim(
            text=f"No words were transcribed between {offset:.2f} and {b / SR:.2f} s (Whisper {args.model}).",
            data={"window_s": out["window_s"]},
        ))
        return ToolResult(output=out, claims=claims)

    all_words = [w for s in segments for w in s["words"]]
    word_conf = sum(w["probability"] for w in all_words) / len(all_words) if all_words else None
    span = (segments[0]["start"], segments[-1]["end"])
    if all_words:
        span = (all_words[0]["start"], all_words[-1]["end"])
    claims.append(Claim(
        text=f'Transcript ({span[0]:.2f}-{span[1]:.2f} s, Whisper {args.model}): "{text}"',
        confidence=_r(word_conf) if word_conf is not None else None,
        data={"text": text, "start_s": span[0], "end_s": span[1]},
    ))
    if args.model == "tiny.en" and args.language is None:
        lang_text = "Language assumed English (the tiny.en model transcribes English only; not detected)."
        lang_conf = None
    else:
        lang_text = (f"Spoken language: {info.language} "
                     f"({'forced' if args.language else f'detected, p={info.language_probability:.2f}'}).")
        lang_conf = None if args.language else _r(info.language_probability)
    claims.append(Claim(text=lang_text, confidence=lang_conf, data={"language": info.language}))
    if len(segments) > 1:
        for s in [s for s in segments if s["text"]][:MAX_SEGMENT_CLAIMS]:
            claims.append(Claim(
                text=f'{s["start"]:.2f}-{s["end"]:.2f} s: "{s["text"]}"',
                confidence=_r(math.exp(s["avg_logprob"])),
                data={"start_s": s["start"], "end_s": s["end"], "text": s["text"]},
            ))
    return ToolResult(output=out, claims=claims)
