"""MSU-Bench (speaker-centric multi-speaker conversation understanding): read its per-task QA JSON files,
present the audio by the benchmark's own rules, score by letter match with its diagnostic error types.

Format (ASLP-lab/MSU-Bench, bench_evaluation_pipeline): one JSON file per (conversation segment, task),
at `<lang>/<scenario>/<QA_short|QA_long>/<segment>/level<N>/<task>.json` after the upstream merge step or
`.../4_qa_results/level<N>/<task>.json` in the generation samples, or
`annotations/<scenario><cn|en>/[QA_short|QA_long/]<segment>/level<N>/<task>.json` in the Hugging Face release
(ASLP-lab/MSU-Benchmark: annotations/, audio/, data/test.jsonl), where the folder gives scenario and language
(cn -> zh) and a `source_audio` that does not resolve falls back to `audio/<scenario><cn|en>/<segment>.wav`; the
release's flat data/test.jsonl is not read (its fields could not be checked here; the task files carry all).
Its `result` (or `qa_result`) list starts with `{"speaker_meta": {"spk_a": [seg, ...], "spk_b": [...]}}`, each seg holding `start_time`,
`end_time`, `transcript`, `spk_id`, `spk_index`, ...; then come the questions: `question`,
`question_type` (the speaker-referencing scheme: no_index, time_index, transcript_index, speaker_index,
complex_index; reverse_retrival / reverse_count are left out of the main scores, as in the paper),
optional `pair` {"left": "spk_a[0]", "right": "spk_b[0]"} for verification, `options` ["A. ...", ...],
letter `answer`, `answer_text`, and `rationale` naming what each option represents ("A. wrong speaker",
"B. hallucination", "C. unknown", "D. ground truth", or the same without letters, aligned with options).
The task comes from the file name (Chinese prompt names such as 说话人识别能力-说话人验证任务, or English
codes/names); the tier from the task (16 tasks, 5 capabilities, 2 tiers).

Both released versions are recognised (`version`: auto, interspeech, v1): the Interspeech 2026 release
(2,300 multiple-choice items, 16 tasks, two tiers: the tier comes from the task, as upstream) and the first
release (arXiv 2508.08155: four tiers, single-speaker static attributes, single-speaker dynamic attributes,
multi-speaker background, multi-speaker interaction; its files sit under level1..level4). "auto" reads a set
with any level3/level4 file as the first release, where the tier is the file's level and a task the 16-task
table does not name keeps its file name. summary.json says which version was read and how many items.

Audio selection (the benchmark's rules):
  - no_index + verification pair -> the two clips of the pair (left, right)
  - no_index, anything else      -> the target speaker's first registration snippet (spk_a[0])
  - level >= 2 with no_index     -> additionally the whole conversation
  - every other scheme           -> the whole conversation only
Clips are cut (numpy, 16 kHz mono) into a work directory. A BenchItem's `audio_path` is the first clip and
`extra_audio` the rest: the runner hands every clip to the agent, which ingests them as a0, a1, ... (with
provenance in the trace), sends them all to a model front end (several `input_audio` parts in one message, or
several Gemini parts) and lets the cascade listen to each; the question is prefixed with which artifact is
which clip ("a0 = Clip 1, ..."), as upstream labels each clip. Agents that take one audio input can be given
`pack="concat"`: one file holding the clips in order with 1 s of silence between them, and the question
prefixed with where each clip lies.

Scoring follows the upstream step 3 (summarize.py): the agent's answer becomes one letter, the question's
`reference_result`, and that letter must equal `answer` exactly (both read as upstream reads them: a bare
letter, else the first standalone capital letter). A letter that is not one of the options (e.g. "E" of A-D)
or no letter at all is `instruction_not_follow`; a wrong letter is classified by that option's rationale
(wrong_speaker / hallucination / unknown / other_wrong). Reverse retrieval / count questions are left out
unless `keep_reverse=true`. A question whose conversation audio is missing counts as instruction_not_follow
(`missing_audio=count`, step 3 over every task file) or is left out (`missing_audio=skip`, the full upstream
pipeline, whose step 2 writes no file without audio). Accuracy is reported by task, capability, tier, language x tier and
index scheme x tier, with the error-type shares per tier (the upstream summary's six views).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from audiomind import audio as audio_io
from audiomind.bench.items import BenchItem, ItemResult
from audiomind.bench.rows import refuse_if_strict
from audiomind.bench.runner import load_results
from audiomind.bench.tasks.base import BaseTask, TaskItems, TaskReport
from audiomind.fsutil import atomic_write_text, load_json_file
from audiomind.paths import MissingPathError, PathPolicyError, resolve_under

BENCHMARK = "msu"
SR = 16000

# code -> (tier, capability, label)
TASKS: dict[str, tuple[int, str, str]] = {
    "RSR": (1, "SID", "Reverse Speaker Retrieval"),
    "SR": (1, "SID", "Speaker Retrieval"),
    "SVS": (1, "SID", "Speaker-specific Viewpoint Summarization"),
    "SC": (1, "SID", "Speaker Counting"),
    "SV": (1, "SID", "Speaker Verification"),
    "AI": (1, "SAR", "Accent Identification"),
    "AR": (1, "SAR", "Age Recognition"),
    "GI": (1, "SAR", "Gender Identification"),
    "ER": (1, "SAR", "Emotion Recognition"),
    "SP": (1, "SAR", "Speaker Profiling"),
    "BI": (2, "DSR", "Background Inference"),
    "RII": (2, "DSR", "Role/Identity Identification"),
    "DAR": (2, "DSA", "Dialogue Act Recognition"),
    "QASI": (2, "DSA", "Q&A Structure Identification"),
    "EIR": (2, "DCR", "Emotion Interaction Reasoning"),
    "MSVS": (2, "DCR", "Multi-speaker Viewpoint Summarization"),
}
CAPABILITIES = {
    "SID": "Speaker Identification",
    "SAR": "Speaker Attribute Recognition",
    "DSR": "Dialogue Scene Reasoning",
    "DSA": "Dialogue Structure Analysis",
    "DCR": "Dialogue Contextual Reasoning",
}
# distinctive pieces of the upstream task-file names (Chinese prompt names and English spellings)
_TASK_KEYS: dict[str, tuple[str, ...]] = {
    "RSR": ("说话人反向检索", "反向检索", "reverse-speaker-retrieval", "reverse_speaker_retrieval", "reverse-retrieval",
            "reverse_retrieval"),
    "SR": ("说话人检索", "speaker-retrieval", "speaker_retrieval"),
    "SVS": ("说话人观点总结任务", "speaker-specific-viewpoint", "speaker-viewpoint", "speaker_viewpoint"),
    "SC": ("说话人计数", "speaker-counting", "speaker_counting"),
    "SV": ("说话人验证", "speaker-verification", "speaker_verification"),
    "AI": ("口音识别", "accent-identification", "accent_identification", "accent-recognition"),
    "AR": ("年龄段识别", "年龄识别", "age-recognition", "age_recognition"),
    "GI": ("性别识别", "gender-identification", "gender_identification", "gender-recognition"),
    "ER": ("说话人属性识别能力-情感识别", "情感识别", "emotion-recognition", "emotion_recognition"),
    "SP": ("说话人画像", "speaker-profiling", "speaker_profiling"),
    "BI": ("对话背景推理", "background-inference", "background_inference"),
    "RII": ("对话身份识别", "role-identification", "identity-identification", "role_identity"),
    "DAR": ("对话行为识别", "dialogue-act", "dialogue_act", "dialog-act"),
    "QASI": ("问答结构识别", "qa-structure", "qa_structure", "q&a-structure"),
    "EIR": ("多说话人情感交互", "emotion-interaction", "emotion_interaction"),
    "MSVS": ("多说话人观点总结", "multi-speaker-viewpoint", "multi_speaker_viewpoint"),
}
# The first release (arXiv 2508.08155): four tiers, the tier being the file's level.
V1_TIERS = {
    1: "Single-speaker static attribute understanding",
    2: "Single-speaker dynamic attribute understanding",
    3: "Multi-speaker background understanding",
    4: "Multi-speaker interaction understanding",
}
VERSIONS = {"interspeech": "Interspeech 2026 (2,300 items, 16 tasks, two tiers)",
            "v1": "first release (arXiv 2508.08155, four tiers)"}
INTERSPEECH_ITEMS = 2300
INDEX_SCHEMES = ("no_index", "time_index", "transcript_index", "speaker_index", "complex_index")
REVERSE_TYPES = ("reverse_count", "reverse_retrival", "reverse_retrieval")
ERROR_TYPES = ("wrong_speaker", "hallucination", "unknown", "instruction_not_follow")

_OPTION = re.compile(r"^\s*([A-Za-z])\s*[.)、．:：]\s*(.*)$", re.DOTALL)
_PAIR_REF = re.compile(r"^(spk_[A-Za-z0-9]+)\[(\d+)\]$")
_LEVEL = re.compile(r"level(\d+)", re.IGNORECASE)


# ---------------------------------------------------------------- reading


def classify_task(stem: str) -> str | None:
    """Task code from a task-file stem (a code itself, a Chinese prompt name or an English spelling).
    Longer keys are tried first so '多说话人观点总结' (MSVS) is not read as '说话人观点总结' (SVS)."""
    s = (stem or "").strip()
    if s.upper() in TASKS:
        return s.upper()
    low = s.lower()
    pairs = sorted(((k, code) for code, keys in _TASK_KEYS.items() for k in keys), key=lambda p: -len(p[0]))
    for key, code in pairs:
        if key.lower() in low:
            return code
    return None


def split_meta(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(speaker_meta, questions) from a task file's `result` / `qa_result` / `questions` list."""
    meta: dict[str, Any] = data.get("speaker_meta") or {}
    for key in ("result", "qa_result", "questions"):
        arr = data.get(key)
        if isinstance(arr, list) and arr:
            questions = []
            for entry in arr:
                if not isinstance(entry, dict):
                    continue
                if "speaker_meta" in entry and not questions:
                    meta = entry.get("speaker_meta") or meta
                elif "question" in entry or "options" in entry:
                    questions.append(entry)
            return meta, questions
    return meta, []


def option_letters(options: list[str]) -> list[str]:
    """The letter of each option ("A. yes" -> "A"); positional A, B, ... where an option has none."""
    out = []
    for i, opt in enumerate(options or []):
        m = _OPTION.match(str(opt))
        out.append(m.group(1).upper() if m else chr(65 + i))
    return out


ANSWER_LETTERS = "ABCD"
"""The only letters the upstream grader reads in `answer` and `reference_result` (an "E" is no answer)."""
_UPSTREAM_LETTER = re.compile(r"(?<![A-Z])([ABCD])(?![A-Z])")
_UPSTREAM_OPTION = re.compile(r"\s*([A-Za-z])\s*[.)、]")


def normalize_letter(value: Any) -> str | None:
    """A letter as the upstream summary reads `answer` and `reference_result`: the value itself when it is one
    of A-D, else the first A-D standing alone (no capital letter beside it) in its upper-cased text; None when
    there is none."""
    if value is None:
        return None
    text = str(value).strip().upper()
    if len(text) == 1 and text in ANSWER_LETTERS:
        return text
    m = _UPSTREAM_LETTER.search(text)
    return m.group(1) if m else None


def upstream_letters(options: list[Any]) -> list[str]:
    """The allowed letters as upstream reads them: the leading letter of each option that has one ("A." "B)"
    "C、"), de-duplicated in order; positional A, B, ... only when no option has one."""
    found = [m.group(1).upper() for o in options or [] if (m := _UPSTREAM_OPTION.match(str(o or "")))]
    if not found and options:
        found = [chr(65 + i) for i in range(len(options))]
    return list(dict.fromkeys(found))


def extract_letter(reply: str, allowed: list[str]) -> str | None:
    """One letter from a free-form reply, by upstream step 2's rule: the whole reply when it is one allowed
    letter; else the first allowed letter, in the order the options list them, that stands alone as a word
    anywhere in the upper-cased reply ("I think it is D, not A" gives A); else the first standalone A-D when
    allowed; None otherwise."""
    if not reply:
        return None
    text = reply.strip().upper()
    if len(text) == 1 and text in allowed:
        return text
    for letter in allowed:
        if re.search(rf"\b{re.escape(letter)}\b", text):
            return letter
    m = _UPSTREAM_LETTER.search(text)
    return m.group(1) if m and m.group(1) in allowed else None


def option_text(option: str) -> str:
    m = _OPTION.match(str(option))
    return (m.group(2) if m else str(option)).strip()


def resolve_ref(ref: str, speaker_meta: dict[str, Any]) -> dict[str, Any]:
    """A verification pair's `spk_a[0]`-style reference -> that registration segment."""
    m = _PAIR_REF.match((ref or "").strip())
    if not m:
        raise ValueError(f"bad pair reference {ref!r} (expected like 'spk_a[0]')")
    segs = speaker_meta.get(m.group(1))
    idx = int(m.group(2))
    if not isinstance(segs, list) or idx >= len(segs):
        raise KeyError(f"pair reference {ref!r} not in speaker_meta")
    return segs[idx]


def first_registration(speaker_meta: dict[str, Any]) -> dict[str, Any] | None:
    """The target speaker's first registration snippet: spk_a[0], else the first segment listed."""
    segs = speaker_meta.get("spk_a")
    if isinstance(segs, list) and segs:
        return segs[0]
    for v in speaker_meta.values():
        if isinstance(v, list) and v:
            return v[0]
    return None


@dataclass
class Clip:
    """One piece of audio to present: a [start, end] window of the conversation, or all of it (None)."""

    label: str
    start_s: float | None = None
    end_s: float | None = None


def audio_plan(question: dict[str, Any], speaker_meta: dict[str, Any], level: int) -> list[Clip]:
    """Which audio the benchmark presents for this question (see the module doc)."""
    qtype = str(question.get("question_type") or "").strip().lower()
    pair = question.get("pair")
    full = Clip("Full conversation audio")
    if qtype == "no_index" and isinstance(pair, dict) and pair.get("left") and pair.get("right"):
        clips = []
        for n, ref in ((1, pair["left"]), (2, pair["right"])):
            seg = resolve_ref(ref, speaker_meta)
            if seg.get("start_time") is None or seg.get("end_time") is None:
                raise ValueError(f"pair segment {ref} has no time")
            clips.append(Clip(f"Clip {n}", float(seg["start_time"]), float(seg["end_time"])))
        return clips + ([full] if level >= 2 else [])
    if qtype == "no_index":
        seg = first_registration(speaker_meta)
        if seg is None or seg.get("start_time") is None or seg.get("end_time") is None:
            raise ValueError("no_index question without a timed registration snippet in speaker_meta")
        return [Clip("Target speaker snippet", float(seg["start_time"]), float(seg["end_time"]))] + (
            [full] if level >= 2 else [])
    return [full]


@dataclass
class TaskFile:
    path: Path
    data: dict[str, Any]
    task: str
    level: int
    language: str
    scenario: str
    segment: str
    source_audio: Path | None
    speaker_meta: dict[str, Any] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)
    audio_error: str | None = None  # why `source_audio` was refused (outside the root, not a regular file, ...)


def _level(path: Path, data: dict[str, Any], task: str | None) -> int:
    for text in (str(path).replace("\\", "/"), str((data.get("_msu_meta") or {}).get("level", "")),
                 str(data.get("prompt_relpath", "")), str(data.get("prompt_file", ""))):
        m = _LEVEL.search(text)
        if m:
            return int(m.group(1))
    return TASKS[task][0] if task else 1


HF_ANNOTATIONS = "annotations"
_HF_FOLDER = re.compile(r"^(.+?)(cn|zh|en)$", re.IGNORECASE)


def hf_folder(path: Path, root: Path | None) -> tuple[str, str] | None:
    """(scenario, language) of a task file in the Hugging Face release layout, `annotations/<scenario><cn|en>/...`
    under the root (e.g. annotations/moviecn -> ("movie", "zh")), as upstream's merge step tags bench_cn / bench_en
    (cn -> zh); None for any other layout."""
    if root is None or root not in path.parents:
        return None
    rel = path.relative_to(root).parts
    if len(rel) < 3 or rel[0].lower() != HF_ANNOTATIONS or not (m := _HF_FOLDER.match(rel[1])):
        return None
    return m.group(1), ("en" if m.group(2).lower() == "en" else "zh")


HF_AUDIO = "audio"


def hf_audio(root: Path, folder: str, segment: str) -> Path | None:
    """Where the Hugging Face release keeps a conversation whose task file's `source_audio` does not resolve:
    `audio/<scenario><cn|en>/<segment>.wav`, or the segment's first three `__` parts (upstream's merge step cuts
    a sub-window suffix such as `__idx018-033__96.89-160.05` off a segment folder's name to find its WAV). Only a
    regular file inside the root is returned."""
    keys = dict.fromkeys([segment, "__".join(segment.split("__")[:3])])
    for key in keys:
        try:
            return resolve_under(root / HF_AUDIO / folder / f"{key}.wav", [root])
        except (MissingPathError, PathPolicyError):
            continue
    return None


def _language(path: Path, root: Path | None, data: dict[str, Any], questions: list[dict[str, Any]]) -> str:
    """The language as upstream's step 3 names it: the file's `_msu_meta.language` (set by the upstream merge
    step), else the first folder under the root when it is zh / cn ("zh") or en ("en"), else the Hugging Face
    `annotations/<scenario><cn|en>/` folder's suffix (the export writes it into `_msu_meta`, so upstream's step 3
    reads the same), else "unknown" (a raw sample folder says nothing upstream reads: the questions' script is
    not the conversation's language)."""
    lang = (data.get("_msu_meta") or {}).get("language")
    if lang:
        return str(lang)
    if root is not None and root in path.parents:
        first = path.relative_to(root).parts[0].lower()
        if first in ("zh", "cn"):
            return "zh"
        if first == "en":
            return "en"
    hf = hf_folder(path, root)
    return hf[1] if hf else "unknown"


def audio_root(path: Path, root: Path | None) -> Path:
    """The folder a task file's `source_audio` must stay inside: the benchmark root when known, else the
    conversation folder two levels above the task file (where the samples keep the audio)."""
    return root if root is not None else path.parent.parent


def _find_audio(path: Path, root: Path | None, hint: str | None) -> Path | None:
    """`source_audio` as given (absolute), else relative to the task file's folder or any folder above it
    up to the root (the samples keep it relative to the conversation folder two levels up). Only a regular
    file inside `audio_root` is accepted: anything else raises PathPolicyError (nothing outside is read)."""
    if not hint:
        return None
    if not isinstance(hint, str):
        raise PathPolicyError(f"source_audio must be a string, not {type(hint).__name__}")
    allowed = audio_root(path, root)
    h = Path(hint)
    if h.is_absolute():
        try:
            return resolve_under(h, [allowed])
        except MissingPathError:
            return None
    bases = [b for b in [path.parent, *path.parents] if b == allowed or allowed in b.parents]
    for base in bases:
        try:
            return resolve_under(base / h, [allowed])
        except MissingPathError:
            continue
    return None


def read_task_file(path: str | Path, root: str | Path | None = None, *, any_task: bool = False) -> TaskFile | None:
    """One task file, or None when it holds no questions or its task cannot be named (`any_task`: a first-
    release file keeps its file name as the task)."""
    path = Path(path).resolve()
    rootp = Path(root).resolve() if root else None
    data = load_json_file(path)  # bounded: a FIFO, device or huge file is refused (InputFileError)
    meta = data.get("_msu_meta") or {}
    stem = str(meta.get("task_stem") or path.stem.replace(".bak", ""))
    task = classify_task(stem)
    speaker_meta, questions = split_meta(data)
    if task is None and any_task and questions:
        task = stem
    if task is None or not questions:
        return None
    try:
        source_audio, audio_error = _find_audio(path, rootp, data.get("source_audio")), None
    except PathPolicyError as exc:
        source_audio, audio_error = None, f"{path.name}: source_audio refused: {exc}"
    rel = path.relative_to(rootp).parts if rootp and rootp in path.parents else path.parts
    level_idx = next((i for i, p in enumerate(rel) if _LEVEL.fullmatch(p)), None)
    segment = str(meta.get("segment") or (rel[level_idx - 1] if level_idx else path.parent.name))
    hf = hf_folder(path, rootp)
    if source_audio is None and audio_error is None and hf is not None and rootp is not None:
        source_audio = hf_audio(rootp, rel[1], segment)
    scenario = str(meta.get("scenario") or (hf[0] if hf else rel[1] if rootp and len(rel) > 4 else "unknown"))
    return TaskFile(path=path, data=data, task=task, level=_level(path, data, task),
                    language=_language(path, rootp, data, questions), scenario=scenario, segment=segment,
                    source_audio=source_audio, speaker_meta=speaker_meta, questions=questions,
                    audio_error=audio_error)


def detect_version(root: str | Path) -> str:
    """"v1" when any task file sits under level3 / level4 (only the first release has four tiers), else
    "interspeech"."""
    for p in Path(root).rglob("*.json"):
        rel = p.relative_to(root).parts if Path(root) in p.parents else p.parts
        if any((m := _LEVEL.fullmatch(part)) and int(m.group(1)) >= 3 for part in rel[:-1]):
            return "v1"
    return "interspeech"


def find_task_files(root: str | Path, version: str = "interspeech") -> list[TaskFile]:
    """Every readable task file under `root` (sorted by path); in a first-release set ("v1") also files whose
    task the 16-task table does not name."""
    root = Path(root).resolve()
    out = []
    for p in sorted(root.rglob("*.json")):
        if p.name.startswith(".") or (p.is_symlink() and root not in p.resolve().parents):
            continue  # hidden, or a link out of the benchmark's folder (never read: issue 35)
        try:
            tf = read_task_file(p, root, any_task=version == "v1")
        except (ValueError, AttributeError):  # not JSON / refused by the bounded reader / not an object
            continue
        if tf is not None:
            out.append(tf)
    return out


# ---------------------------------------------------------------- items


class _AudioCache:
    """Loads each conversation once per build and writes each distinct cut once (named by its content key)."""

    def __init__(self, work_dir: Path):
        self.dir = work_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self._loaded: dict[str, np.ndarray] = {}

    def samples(self, src: Path) -> np.ndarray:
        key = str(src)
        if key not in self._loaded:
            self._loaded[key] = audio_io.load(src, sr=SR, mono=True)
        return self._loaded[key]

    def cut(self, src: Path, start_s: float | None, end_s: float | None) -> Path:
        if start_s is None and end_s is None:
            return src
        key = hashlib.sha1(f"{src}|{start_s}|{end_s}".encode()).hexdigest()[:16]
        out = self.dir / f"{src.stem[:40]}-{key}.wav"
        if not out.exists():
            y = self.samples(src)
            a = max(0, round((start_s or 0.0) * SR))
            b = len(y) if end_s is None else min(len(y), round(end_s * SR))
            if b <= a:
                raise ValueError(f"empty cut {start_s}-{end_s} s of {src}")
            audio_io.write_wav(out, y[a:b], SR)
        return out

    def concat(self, paths: list[Path], gap_s: float = 1.0) -> tuple[Path, list[tuple[float, float]]]:
        key = hashlib.sha1("|".join(map(str, paths)).encode()).hexdigest()[:16]
        out = self.dir / f"packed-{key}.wav"
        spans, parts, t = [], [], 0.0
        for i, p in enumerate(paths):
            y = audio_io.load(p, sr=SR, mono=True)
            spans.append((round(t, 3), round(t + len(y) / SR, 3)))
            parts.append(y)
            t += len(y) / SR
            if i < len(paths) - 1:
                parts.append(np.zeros(int(gap_s * SR), dtype=np.float32))
                t += gap_s
        if not out.exists():
            audio_io.write_wav(out, np.concatenate(parts), SR)
        return out, spans


def _item_id(tf: TaskFile, qi: int, root: Path | None) -> str:
    rel = str(tf.path.relative_to(root)) if root and root in tf.path.parents else str(tf.path)
    digest = hashlib.sha1(rel.encode()).hexdigest()[:10]
    return f"msu-{tf.language}-{tf.task}-L{tf.level}-{digest}-q{qi:02d}"


def task_info(task: str, level: int, version: str) -> tuple[int, str, str]:
    """(tier, capability, label) of a task: from the 16-task table (Interspeech), or, in the first release,
    the tier is the file's level and the capability that tier's name."""
    if version == "v1":
        label = TASKS[task][2] if task in TASKS else task
        return level, f"T{level}", label
    return TASKS[task]


def build_items(source: str | Path | Iterable[TaskFile], work_dir: str | Path, *, keep_reverse: bool = False,
                pack: str = "separate", root: str | Path | None = None, version: str = "auto") -> list[BenchItem]:
    """BenchItems for every question: the presented clips cut into `work_dir`, the choices the option texts
    (letters stripped; the chosen index maps back to the letter), `answer` the letter.

    pack: "separate" (first clip in audio_path, the others in extra_audio) or "concat" (one file with the
    clips 1 s apart; the question says where each clip lies).
    """
    if pack not in ("separate", "concat"):
        raise ValueError("pack must be 'separate' or 'concat'")
    if version not in ("auto", *VERSIONS):
        raise ValueError(f"version must be auto, {' or '.join(VERSIONS)}")
    if isinstance(source, (str, Path)):
        rootp = Path(root or source).resolve()
        if version == "auto":
            version = detect_version(rootp)
        files = find_task_files(source, version)
    else:
        rootp = Path(root).resolve() if root else None
        files = list(source)
        if version == "auto":
            version = "v1" if any(tf.level >= 3 or tf.task not in TASKS for tf in files) else "interspeech"
    cache = _AudioCache(Path(work_dir))
    items = []
    for tf in files:
        for qi, q in enumerate(tf.questions):
            qtype = str(q.get("question_type") or "").strip().lower()
            if qtype in REVERSE_TYPES and not keep_reverse:
                continue
            options = [str(o) for o in q.get("options") or []]
            letters = option_letters(options)
            tier, capability, label = task_info(tf.task, tf.level, version)
            meta = {
                "task": tf.task, "task_label": label, "capability": capability,
                "tier": tier, "level": tf.level, "language": tf.language, "scenario": tf.scenario,
                "segment": tf.segment, "question_type": qtype,
                "index_scheme": qtype if qtype in INDEX_SCHEMES else "unknown_index",
                "letters": letters, "rationale": q.get("rationale"), "pack": pack, "version": version,
            }
            raw = {"file": str(tf.path), "question_index": qi, "question": q, "source_audio": str(tf.source_audio)}
            item_id = _item_id(tf, qi, rootp)
            base = {"id": item_id, "benchmark": BENCHMARK, "choices": [option_text(o) for o in options],
                        "answer": normalize_letter(q.get("answer")), "raw": raw}
            if tf.source_audio is None or not tf.source_audio.exists():  # missing (or refused: error says why)
                items.append(BenchItem(**base, audio_path=str(tf.source_audio or ""), question=str(q.get("question")),
                                       metadata={**meta, "clips": []}, error=tf.audio_error))
                continue
            plan = audio_plan(q, tf.speaker_meta, tf.level)
            paths = [cache.cut(tf.source_audio, c.start_s, c.end_s) for c in plan]
            clips_meta = [{"label": c.label, "start_s": c.start_s, "end_s": c.end_s, "path": str(p),
                           **({"artifact": f"a{n}"} if pack == "separate" else {})}
                          for n, (c, p) in enumerate(zip(plan, paths))]
            text = str(q.get("question") or "").strip()
            if pack == "concat" and len(paths) > 1:
                packed, spans = cache.concat(paths)
                where = "; ".join(f"{c.label}: {a:.2f}-{b:.2f} s" for c, (a, b) in zip(plan, spans))
                text = f"(This audio holds {len(paths)} clips one after another, 1 s apart. {where}.)\n{text}"
                items.append(BenchItem(**base, audio_path=str(packed), question=text,
                                       metadata={**meta, "clips": clips_meta, "packed_spans": spans}))
            else:
                if len(paths) > 1:  # every clip reaches the agent (a0, a1, ...); say which is which, as upstream
                    which = "; ".join(f"a{n} = {c.label}" for n, c in enumerate(plan))
                    text = f"(This question comes with {len(paths)} audio clips: {which}.)\n{text}"
                items.append(BenchItem(**base, audio_path=str(paths[0]), extra_audio=[str(p) for p in paths[1:]],
                                       question=text, metadata={**meta, "clips": clips_meta}))
    return items


# ---------------------------------------------------------------- scoring

def predicted_letter(item: BenchItem, result: ItemResult | dict[str, Any]) -> str | None:
    """The option letter the agent chose (what goes into `reference_result`): from the chosen index, else from
    its text (a bare letter, a 'Final answer: X' line, or an option's text verbatim). A bare letter that is no
    option's is returned as it is (scored instruction_not_follow); None when no letter can be read."""
    r = result if isinstance(result, dict) else result.model_dump()
    letters: list[str] = list(item.metadata.get("letters") or option_letters(item.raw.get("question", {}).get("options", [])))
    idx = r.get("choice_index")
    if isinstance(idx, int) and 0 <= idx < len(letters):
        return letters[idx]
    pred = str(r.get("prediction") or "").strip()
    if not pred:
        return None
    norm = pred.casefold()
    for letter, choice in zip(letters, item.choices):
        if norm == choice.strip().casefold():
            return letter  # the agent named an option by its text: that option's letter
    bare = pred.strip(" .)(").upper()
    if len(bare) == 1 and "A" <= bare <= "Z" and bare not in letters:
        return bare  # a bare letter that is no option's: kept, and scored instruction_not_follow
    allowed = upstream_letters(item.raw.get("question", {}).get("options", [])) or letters
    return extract_letter(pred, allowed)  # free text: upstream step 2's rule


# How upstream's step 3 reads a rationale: the first rule whose every keyword group matches (any keyword of a
# group) names the tag; Chinese rules are tried before English ones ("wrong speaker; unknown" is a wrong speaker).
_RATIONALE_RULES: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    ("hallucination", (("幻觉",),)),
    ("unknown", (("无法判断", "证据不足", "信息不足"),)),
    ("wrong_speaker", (("错",), ("说话人",))),
    ("ground_truth", (("正确", "标准答案", "参考答案"),)),
    ("wrong_speaker", (("wrong speaker", "wrong_speaker", "wrong-speaker"),)),
    ("hallucination", (("hallucination", "hallucinate"),)),
    ("unknown", (("unknown", "cannot determine", "insufficient"),)),
    ("ground_truth", (("ground truth", "ground_truth", "correct"),)),
)
_RATIONALE_LETTER = re.compile(r"^\s*([A-Za-z])\s*[.)、]\s*(.*)$")


def _rationale_tag(text: str) -> str:
    s = (text or "").strip().lower()
    for tag, groups in _RATIONALE_RULES:
        if all(any(k in s for k in group) for group in groups):
            return tag
    return "other"


def rationale_map(rationale: Any, letters: list[str]) -> dict[str, str]:
    """letter -> wrong_speaker | hallucination | unknown | ground_truth | other, from `rationale`
    (letter-prefixed entries, or entries aligned with the options)."""
    if not isinstance(rationale, list) or not rationale:
        return {}
    out: dict[str, str] = {}
    prefixed = [_RATIONALE_LETTER.match(str(r or "")) for r in rationale]
    if any(prefixed):
        for m in prefixed:
            if m:
                out[m.group(1).upper()] = _rationale_tag(m.group(2))
        return out
    for letter, r in zip(letters, rationale):
        out[letter] = _rationale_tag(str(r or ""))
    return out


def error_class(item: BenchItem, result: ItemResult | dict[str, Any] | None) -> str:
    """correct | wrong_speaker | hallucination | unknown | other_wrong | instruction_not_follow, as upstream's
    step 3 classes a question from its `reference_result`: no result (the item never ran: no audio, a refused
    row, a run not finished) is an empty one, so instruction_not_follow; the letter is read as upstream reads
    it (A-D only) and must be one of the options' letters."""
    letters = upstream_letters(item.raw.get("question", {}).get("options", [])) or list(item.metadata.get("letters") or [])
    pred = normalize_letter(predicted_letter(item, result)) if result is not None else None
    if pred is None or (letters and pred not in letters):
        return "instruction_not_follow"
    if item.answer and pred == item.answer:
        return "correct"
    tag = rationale_map(item.metadata.get("rationale"), letters).get(pred, "other")
    return tag if tag in ("wrong_speaker", "hallucination", "unknown") else "other_wrong"


def msu_score(item: BenchItem, result: ItemResult) -> bool | None:
    """The runner's scorer: letter match; None when the item never ran (missing audio)."""
    if item.answer is None or result.status == "missing_audio" or result.input_error:
        return None
    return error_class(item, result) == "correct"


@dataclass
class Bucket:
    total: int = 0
    correct: int = 0
    wrong_speaker: int = 0
    hallucination: int = 0
    unknown: int = 0
    other_wrong: int = 0
    instruction_not_follow: int = 0

    def add(self, cls: str) -> None:
        self.total += 1
        if cls == "correct":
            self.correct += 1
        else:
            setattr(self, cls, getattr(self, cls) + 1)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    @property
    def wrong(self) -> int:
        return self.total - self.correct

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("total", "correct", "wrong_speaker", "hallucination", "unknown",
                                           "other_wrong", "instruction_not_follow")}
        d["accuracy"] = round(self.accuracy, 4) if self.accuracy is not None else None
        w = self.wrong
        shares = {"wrong_speaker": self.wrong_speaker, "hallucination": self.hallucination,
                  "unknown": self.unknown + self.other_wrong,  # upstream folds other in
                  "instruction_not_follow": self.instruction_not_follow}
        d["error_share"] = {k: round(v / w, 4) if w else 0.0 for k, v in shares.items()}
        return d


MISSING_AUDIO_MODES = {
    "count": "a question whose conversation audio is missing counts as instruction_not_follow (upstream step 3 on "
             "every task file of the set, the unanswered ones with an empty reference_result)",
    "skip": "a task file whose conversation audio is missing is left out of every denominator (the full upstream "
            "pipeline: step 1 and step 2 drop such files, so step 3 never sees them)",
}


def summarize(items: Iterable[BenchItem], results: dict[str, dict[str, Any]], *,
              missing_audio: str = "count") -> dict[str, Any]:
    """Accuracy and error classes by task, capability, tier, language x tier, index scheme x tier, over EVERY
    question of the set, as upstream's step 3 counts them: a question that never ran (its audio missing or
    refused, its row refused, the run not finished) has no `reference_result` and counts as
    instruction_not_follow (`not_run` says how many); with no audio at all accuracy is 0 over N, not 0/0.
    missing_audio="skip" instead leaves out the questions whose conversation audio is missing, as the full
    upstream pipeline does (`missing_audio_skipped` says how many); other never-run questions still count."""
    if missing_audio not in MISSING_AUDIO_MODES:
        raise ValueError(f"missing_audio must be one of {', '.join(MISSING_AUDIO_MODES)}")
    views: dict[str, dict[str, Bucket]] = {v: defaultdict(Bucket) for v in
                                           ("task", "capability", "tier", "language", "index_scheme")}
    overall = Bucket()
    items = list(items)
    not_run = skipped = 0
    for it in items:
        r = results.get(it.id)
        if r is None or r.get("status") == "missing_audio" or r.get("input_error"):
            if missing_audio == "skip" and not it.metadata.get("clips"):  # no audio: upstream never scores it
                skipped += 1
                continue
            r = None
            not_run += 1
        cls = error_class(it, r)
        m = it.metadata
        tier = int(m.get("tier") or TASKS.get(str(m.get("task")), (0,))[0])
        overall.add(cls)
        views["task"][str(m.get("task"))].add(cls)
        views["capability"][str(m.get("capability"))].add(cls)
        views["tier"][f"tier{tier}"].add(cls)
        views["language"][f"{m.get('language')}/tier{tier}"].add(cls)
        views["index_scheme"][f"tier{tier}/{m.get('index_scheme')}"].add(cls)
    versions = sorted({str(it.metadata.get("version") or "interspeech") for it in items})
    return {"overall": overall.as_dict(),
            **{name: {k: b.as_dict() for k, b in sorted(v.items())} for name, v in views.items()},
            "version": versions[0] if len(versions) == 1 else versions,
            "version_label": "; ".join(VERSIONS.get(v, v) for v in versions),
            "items_in_set": len(items), "not_run": not_run, "missing_audio": missing_audio,
            "missing_audio_skipped": skipped}


def _fmt4(x: float) -> str:
    return f"{x:.4f}"


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _tier_no(key: str) -> int:
    m = re.search(r"tier(\d+)", key)
    return int(m.group(1)) if m else 0


def write_summary_csvs(summary: dict[str, Any], out_dir: str | Path, model: str = "audiomind") -> list[Path]:
    """The upstream step-3 CSV files with upstream's columns and rows: summary_by_task.csv (the 16 tasks, in the
    taxonomy's order, with their tier), _capability (the 5 capabilities with their tier), _tier (tiers seen,
    by number), _language (language, tier), _index_scheme (every tier seen x all five schemes, with the
    scheme's share of the tier), _error_type (counts and shares per tier). Accuracies and shares are 4-place
    decimals, "0.0000" where nothing was counted. A first-release (v1) set adds its own task names."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    empty = Bucket().as_dict()

    def write(name: str, header: list[str], rows: list[list[Any]]) -> None:
        p = out / name
        with open(p, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows)
        written.append(p)

    def acc(d: dict[str, Any]) -> str:
        return _fmt4(_ratio(d["correct"], d["total"]))

    v1 = summary.get("version") == "v1"
    task_rows = [] if v1 else [[model, t, c, code, label, d["total"], d["correct"], acc(d)]
                               for code, (t, c, label) in TASKS.items() for d in [summary["task"].get(code, empty)]]
    known = set() if v1 else set(TASKS)
    task_rows += [[model, "", "", code, TASKS[code][2] if code in TASKS else code, d["total"], d["correct"], acc(d)]
                  for code, d in summary["task"].items() if code not in known]  # first-release tasks
    write("summary_by_task.csv", ["model", "tier", "capability", "task_code", "task_label", "total", "correct",
                                  "accuracy"], task_rows)
    if v1:
        caps = {f"T{n}": (n, label) for n, label in V1_TIERS.items()}
    else:
        caps = {c: (next(t for t, cap, _ in TASKS.values() if cap == c), label) for c, label in CAPABILITIES.items()}
    write("summary_by_capability.csv", ["model", "tier", "capability_code", "capability_label", "total", "correct",
                                        "accuracy"],
          [[model, tier, c, label, d["total"], d["correct"], acc(d)]
           for c, (tier, label) in caps.items() for d in [summary["capability"].get(c, empty)]])
    tiers = sorted((_tier_no(k), d) for k, d in summary["tier"].items())
    write("summary_by_tier.csv", ["model", "tier", "total", "correct", "accuracy"],
          [[model, t, d["total"], d["correct"], acc(d)] for t, d in tiers])
    langs = sorted((k.split("/", 1)[0], _tier_no(k), d) for k, d in summary["language"].items())
    write("summary_by_language.csv", ["model", "language", "tier", "total", "correct", "accuracy"],
          [[model, lang, t, d["total"], d["correct"], acc(d)] for lang, t, d in langs])
    idx_rows = []
    for t, td in tiers:
        for scheme in INDEX_SCHEMES:
            d = summary["index_scheme"].get(f"tier{t}/{scheme}", empty)
            idx_rows.append([model, t, scheme, d["total"], _fmt4(_ratio(d["total"], td["total"] or 1)), d["correct"],
                             acc(d)])
    write("summary_by_index_scheme.csv", ["model", "tier", "index_scheme", "total", "share_within_tier", "correct",
                                          "accuracy"], idx_rows)
    err_rows = []
    for t, d in tiers:
        wrong = d["wrong_speaker"] + d["hallucination"] + d["unknown"] + d["other_wrong"] + d["instruction_not_follow"]
        unknown = d["unknown"] + d["other_wrong"]
        err_rows.append([model, t, d["total"], d["correct"], wrong,
                         d["wrong_speaker"], _fmt4(_ratio(d["wrong_speaker"], wrong)),
                         d["hallucination"], _fmt4(_ratio(d["hallucination"], wrong)),
                         unknown, _fmt4(_ratio(unknown, wrong)),
                         d["instruction_not_follow"], _fmt4(_ratio(d["instruction_not_follow"], wrong))])
    write("summary_by_error_type.csv",
          ["model", "tier", "total", "correct", "total_wrong", "wrong_speaker_cnt", "wrong_speaker_share",
           "hallucination_cnt", "hallucination_share", "unknown_cnt", "unknown_share", "instruction_not_follow_cnt",
           "instruction_not_follow_share"], err_rows)
    return written


def write_reference_results(items: Iterable[BenchItem], results: dict[str, dict[str, Any]],
                            out_root: str | Path, root: str | Path) -> list[Path]:
    """Copies of the task files with each question's `reference_result` (the predicted letter, "" when
    none), mirrored under out_root, so the upstream step-3 summarize.py can read them unchanged."""
    root, out_root = Path(root).resolve(), Path(out_root)
    by_file: dict[str, dict[int, str]] = defaultdict(dict)
    tags: dict[str, dict[str, Any]] = {}
    for it in items:
        r = results.get(it.id)
        if r is not None:
            by_file[it.raw["file"]][int(it.raw["question_index"])] = predicted_letter(it, r) or ""
            m = it.metadata
            tags[it.raw["file"]] = {"language": m.get("language"), "scenario": m.get("scenario"),
                                    "level": f"level{m.get('level')}", "task_stem": Path(it.raw["file"]).stem}
    written = []
    for file, answers in by_file.items():
        src = Path(file)
        data = load_json_file(src)  # bounded, as every input file
        _, questions = split_meta(data)
        for qi, letter in answers.items():
            questions[qi]["reference_result"] = letter
        if "_msu_meta" not in data and hf_folder(src, root):  # the Hugging Face layout: say what upstream's merge says
            data["_msu_meta"] = tags[file]
        rel = src.relative_to(root) if root in src.parents else Path(src.name)
        dst = out_root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        written.append(dst)
    return written


# ---------------------------------------------------------------- the task

OUTPUT_DIR = "msu"
SUMMARY_FILE = "summary.json"
CLIPS_DIR = "inputs"


@dataclass
class MSUTask(BaseTask):
    """MSU-Bench through the batch runner: letter scoring with the benchmark's error classes.

    source: the benchmark root (its per-task QA JSON files; every `source_audio` must stay inside it); the
    presented clips are cut into `work_dir`
    (default: SOURCE/../msu-clips; `bench run` uses RUN_DIR/inputs). Options: `pack` ("separate": extra
    clips as extra_audio, every clip reaching the agent; "concat": one file, the question says where each clip
    lies), `keep_reverse` (also run the reverse-retrieval questions the paper leaves out), `version` (auto,
    interspeech, v1: which release the set is; auto reads a set with level3/level4 files as the first) and
    `missing_audio` (count: questions without audio count as instruction_not_follow; skip: they are left out, as
    the full upstream pipeline leaves them out)."""

    name: ClassVar[str] = "msu"
    description: ClassVar[str] = ("MSU-Bench (ASLP-lab): speaker-centric multi-speaker QA; accuracy and error "
                                  "classes by task, capability, tier, language and index scheme")
    source_help: ClassVar[str] = "MSU-Bench root (a folder of per-task QA JSON files)"

    pack: str = "separate"
    keep_reverse: bool = False
    version: str = "auto"
    missing_audio: str = "count"

    def load_items(self, source: Path, *, audio_dir: Path | None = None, work_dir: Path | None = None,
                   limit: int | None = None, strict: bool = False) -> TaskItems:
        root = Path(source)
        if not root.is_dir():
            raise ValueError(f"{root}: the MSU-Bench source is a folder of task files")
        if self.missing_audio not in MISSING_AUDIO_MODES:
            raise ValueError(f"missing_audio must be one of {', '.join(MISSING_AUDIO_MODES)}")
        clips = Path(work_dir) if work_dir is not None else root.resolve().parent / "msu-clips"
        items = build_items(root, clips, keep_reverse=self.keep_reverse, pack=self.pack, version=self.version)
        if not items:  # an empty or wrong folder is said, not run as 0 items that exit 0 (issue 35's probe)
            raise ValueError(f"{root.name}: no MSU-Bench task files found; this reads the per-task QA files under "
                             f"{HF_ANNOTATIONS}/<scenario><cn|en>/ (with the WAVs under {HF_AUDIO}/), not data/test.jsonl"
                             if (root / "data" / "test.jsonl").is_file() else
                             f"{root.name}: no MSU-Bench task files found (no readable *.json task file under it)")
        refuse_if_strict(root, [], strict, [it.error for it in items if it.error])
        if limit is not None:
            items = items[:limit]
        return TaskItems(source=root, items=items)

    def score(self, item: BenchItem, result: ItemResult) -> bool | None:
        return msu_score(item, result)

    def write_outputs(self, run_dir: Path, loaded: TaskItems) -> dict[str, Path]:
        """RUN_DIR/msu/: summary.json (every view), the upstream summary_by_*.csv files, and the task files
        with each question's `reference_result` (the predicted letter) under reference_results/, which the
        upstream step-3 summarize.py reads unchanged."""
        out = Path(run_dir) / OUTPUT_DIR
        results = load_results(run_dir)
        summary = summarize(loaded.items, results, missing_audio=self.missing_audio)
        atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        write_summary_csvs(summary, out)
        scored = [it for it in loaded.items if self.missing_audio == "count" or it.metadata.get("clips")]
        write_reference_results(scored, results, out / "reference_results", loaded.source)
        return {"summary": out / SUMMARY_FILE, "summary tables": out, "scored task files": out / "reference_results"}

    def report(self, run_dir: Path, loaded: TaskItems) -> TaskReport | None:
        summary = summarize(loaded.items, load_results(run_dir), missing_audio=self.missing_audio)
        return TaskReport(data=summary, table=summary_table(summary, title=f"MSU-Bench accuracy ({run_dir})"))


def summary_table(summary: dict[str, Any], title: str = "MSU-Bench accuracy") -> Any:
    """A rich Table: overall, then per tier, capability and task (accuracy %, correct / n, error classes)."""
    from rich.table import Table

    t = Table(title=title)
    for col in ("group", "value", "accuracy %", "correct / n", "wrong speaker", "hallucination", "unknown",
                "no letter"):
        t.add_column(col, justify="right" if col not in ("group", "value") else "left")

    def row(group: str, name: str, d: dict[str, Any]) -> None:
        acc = "-" if d.get("accuracy") is None else f"{100 * d['accuracy']:.2f}"
        t.add_row(group, name, acc, f"{d['correct']} / {d['total']}", str(d["wrong_speaker"]),
                  str(d["hallucination"]), str(d["unknown"] + d["other_wrong"]), str(d["instruction_not_follow"]))

    if summary.get("version_label"):
        t.caption = f"{summary['version_label']}: {summary.get('items_in_set', 0)} item(s) read"
    row("overall", "all", summary["overall"])
    for view in ("tier", "capability", "task"):
        for name, d in summary[view].items():
            if d["total"]:
                row(view, name, d)
    return t
