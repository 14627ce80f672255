"""Captioning metrics for judge captions: BLEU-1..4, METEOR, ROUGE-L, CIDEr-D, SPICE, SPIDEr, FENSE.

Real implementations wherever their files are here:
- BLEU, ROUGE-L, CIDEr-D: pycocoevalcap (pure Python). CIDEr-D is corpus-relative (document frequencies
  over the references scored together), so a single caption pair is scored together with a background
  corpus of captions (declared in `details`); on one pair alone it is 0 by construction.
- METEOR 1.5: pycocoevalcap's jar on Java (one process per Python process, ~10 s to start).
- Tokenisation: Stanford PTBTokenizer (the jar pycocoevalcap ships), fed on stdin so nothing is written
  into the package folder; a Python tokenizer with the same punctuation list where Java is missing.
- SPICE: the SPICE 1.0 jar pycocoevalcap ships, when Stanford CoreNLP 3.6.0 jars are found in
  AUDIOMIND_SPICE_DIR (they are not shipped by anything on PyPI; SPICE would otherwise download them).
- FENSE: SBERT (paraphrase-TinyBERT-L6-v2) similarity with the fluency-error detector penalty, when
  AUDIOMIND_FENSE_DIR holds the detector checkpoint, its encoder and the SBERT model.

Every metric that cannot run is replaced by a declared substitute, named in `CaptionScores.substitutes`
(metric -> what was computed instead) so every score it affects can say so:
- METEOR without Java: METEOR's F-mean and fragmentation penalty with the exact-match module only.
- SPICE without CoreNLP: content-word F1 (stop words removed, light stemming): SPICE's object/attribute
  tuple F-score without the scene-graph parse. SPIDEr = (CIDEr-D + SPICE) / 2 then uses it too.
- FENSE without its detector: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (the packaged
  model), with no fluency penalty.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from audiomind import config
from audiomind.config import Settings
from audiomind.embedded import sessions

METRICS = ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "meteor", "rouge_l", "cider_d", "spice", "spider", "fense")

# pycocoevalcap's PTBTokenizer drops these tokens after tokenising
_PUNCT = {"''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"}

_STOP = {"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there", "here", "then", "than", "so", "such", "while", "which", "who", "whom", "whose", "what", "when", "where", "into", "onto", "over", "under", "up", "down", "out", "off", "again", "also", "very", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "do", "does", "did", "doing", "has", "have", "had", "having", "not", "no", "nor", "only", "own", "same", "too", "just", "both", "each", "few", "more", "most", "other", "some", "any", "all", "i", "you", "he", "she", "we", "they", "them", "his", "her", "their", "our", "your", "my", "me", "him", "us", "one", "clip", "clips", "audio", "audios", "sound", "sounds", "recording"}

SPICE_SUBSTITUTE = "content-word F1 (stop words removed, light stemming) in place of SPICE: CoreNLP 3.6.0 jars not found"
FENSE_SUBSTITUTE = "all-MiniLM-L6-v2 cosine similarity in place of FENSE: fluency-error detector not found"
METEOR_SUBSTITUTE = "METEOR F-mean + fragmentation penalty with exact matching only: Java not found"


class CaptionScores(BaseModel):
    """Scores of one candidate caption against its reference caption(s)."""

    bleu_1: float = 0.0
    bleu_2: float = 0.0
    bleu_3: float = 0.0
    bleu_4: float = 0.0
    meteor: float = 0.0
    rouge_l: float = 0.0
    cider_d: float = 0.0
    spice: float = 0.0
    spider: float = 0.0
    fense: float = 0.0
    substitutes: dict[str, str] = Field(
        default_factory=dict, description="metric -> the declared substitute computed in its place")


class MetricsReport(BaseModel):
    scores: list[CaptionScores]
    substitutes: dict[str, str] = Field(default_factory=dict)
    details: dict[str, str] = Field(default_factory=dict, description="how each metric was computed")


# ---------------------------------------------------------------- availability


def _java() -> str | None:
    return shutil.which("java")


def _coco_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("pycocoevalcap")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def spice_jars(settings: Settings | None = None) -> tuple[Path, Path] | None:
    """(corenlp jar, corenlp models jar) from the setting `spice_dir` (env AUDIOMIND_SPICE_DIR), or None."""
    root = (settings or config.settings()).spice_dir
    if not root:
        return None
    d = Path(root).expanduser()
    core, models = d / "stanford-corenlp-3.6.0.jar", d / "stanford-corenlp-3.6.0-models.jar"
    if core.is_file() and models.is_file():
        return core, models
    return None


def fense_files(settings: Settings | None = None) -> dict[str, Path] | None:
    """FENSE's parts in AUDIOMIND_FENSE_DIR: an echecker checkpoint (*.ckpt, from the FENSE release), the
    encoder it names (a Hugging Face folder with that name, e.g. bert-base-uncased/) and the SBERT model
    folder paraphrase-TinyBERT-L6-v2/ (or any SBERT folder named in AUDIOMIND_FENSE_SBERT); the settings
    `fense_dir` and `fense_sbert`."""
    s = settings or config.settings()
    root = s.fense_dir
    if not root:
        return None
    d = Path(root).expanduser()
    ckpts = sorted(d.glob("echecker*.ckpt")) or sorted(d.glob("*.ckpt"))
    sbert = d / s.fense_sbert
    if not ckpts or not sbert.is_dir():
        return None
    return {"echecker": ckpts[0], "sbert": sbert, "root": d}


def metric_status() -> dict[str, str]:
    """metric -> 'real: ...' or 'substitute: ...' on this machine (no model is loaded)."""
    java = _java() is not None
    coco = _coco_dir() is not None
    out = {}
    for m in ("bleu_1", "bleu_2", "bleu_3", "bleu_4", "rouge_l", "cider_d"):
        out[m] = "real: pycocoevalcap" if coco else "substitute: pycocoevalcap not installed"
    out["meteor"] = "real: METEOR 1.5 (pycocoevalcap jar, Java)" if java and coco else "substitute: " + METEOR_SUBSTITUTE
    out["spice"] = ("real: SPICE 1.0 + CoreNLP 3.6.0" if java and coco and spice_jars()
                    else "substitute: " + SPICE_SUBSTITUTE)
    out["spider"] = "(CIDEr-D + SPICE) / 2" + ("" if out["spice"].startswith("real") else ", with the SPICE substitute")
    out["fense"] = "real: FENSE (SBERT + fluency-error detector)" if fense_files() else "substitute: " + FENSE_SUBSTITUTE
    return out


# ---------------------------------------------------------------- tokenisation


def _py_tokenize(text: str) -> str:
    text = text.lower().replace("\n", " ")
    toks = re.findall(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]", text)
    return " ".join(t for t in toks if t not in _PUNCT and re.search(r"[a-z0-9]", t))


_tok_lock = threading.Lock()


def tokenize(texts: list[str]) -> tuple[list[str], str]:
    """(lower-cased tokenised captions without punctuation, how). PTBTokenizer on stdin where Java exists."""
    coco = _coco_dir()
    java = _java()
    clean = [" ".join(t.replace("\n", " ").replace("\r", " ").split()) for t in texts]
    if coco is not None and java is not None and clean:
        jar = coco / "tokenizer" / "stanford-corenlp-3.4.1.jar"
        try:
            with _tok_lock:
                proc = subprocess.run(
                    [java, "-cp", str(jar), "edu.stanford.nlp.process.PTBTokenizer", "-preserveLines", "-lowerCase"],
                    input="\n".join(clean) + "\n", capture_output=True, text=True, timeout=120,
                    check=False,
                )
            lines = proc.stdout.split("\n")
            if proc.returncode == 0 and len(lines) >= len(clean):
                out = [" ".join(w for w in line.rstrip().split(" ") if w and w not in _PUNCT) for line in lines[: len(clean)]]
                return out, "Stanford PTBTokenizer (pycocoevalcap jar)"
        except (OSError, subprocess.SubprocessError):
            pass
    return [_py_tokenize(t) for t in clean], "Python tokenizer (PTB punctuation list; Java unavailable)"


# ---------------------------------------------------------------- METEOR


class _Meteor:
    """One METEOR 1.5 process (pycocoevalcap's jar over stdio), shared and serialised by a lock."""

    def __init__(self) -> None:
        from pycocoevalcap.meteor.meteor import Meteor

        with contextlib.redirect_stdout(io.StringIO()):
            self.m = Meteor()
        self.lock = threading.Lock()

    def score(self, cands: list[str], refs: list[list[str]]) -> list[float]:
        gts = {i: [r.replace("|||", " ") or "none" for r in rs] for i, rs in enumerate(refs)}
        res = {i: [c.replace("|||", " ") or "none"] for i, c in enumerate(cands)}
        with self.lock:
            _, scores = self.m.compute_score(gts, res)
        return [float(s) for s in scores]


def _load_meteor() -> _Meteor | None:
    if _java() is None or _coco_dir() is None:
        return None
    try:
        return _Meteor()
    except Exception:  # noqa: BLE001 - reported as a substitute
        return None


def _meteor() -> _Meteor | None:
    """The METEOR process, started once per process (None where it cannot run here)."""
    return sessions.get("meteor", _load_meteor)


_prewarm_lock = threading.Lock()
_prewarmed: list[threading.Thread] = []


def prewarm() -> None:
    """Start the METEOR JVM (about 10 s: the JVM and its paraphrase tables) in a background thread, once per
    process, so a judge's perception pass runs while it loads; the first real score waits on its lock."""
    with _prewarm_lock:
        if _prewarmed:
            return

        def warm() -> None:
            m = _meteor()
            if m is not None:
                with contextlib.suppress(Exception):
                    m.score(["a bell rings"], [["a bell rings"]])

        t = threading.Thread(target=warm, name="meteor-prewarm", daemon=True)
        _prewarmed.append(t)
        t.start()


def meteor_exact(cand: str, refs: list[str], alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> float:
    """METEOR's scoring with the exact-match module only (Lavie & Agarwal 2007 parameters), max over refs."""
    best = 0.0
    c = cand.split()
    for ref in refs:
        r = ref.split()
        if not c or not r:
            continue
        used = [False] * len(r)
        align: list[tuple[int, int]] = []
        for i, w in enumerate(c):
            for j, v in enumerate(r):
                if not used[j] and v == w:
                    used[j] = True
                    align.append((i, j))
                    break
        m = len(align)
        if m == 0:
            continue
        p, rec = m / len(c), m / len(r)
        fmean = p * rec / (alpha * p + (1 - alpha) * rec)
        chunks = 1
        for (i0, j0), (i1, j1) in itertools.pairwise(align):
            if not (i1 == i0 + 1 and j1 == j0 + 1):
                chunks += 1
        penalty = gamma * (chunks / m) ** beta
        best = max(best, fmean * (1 - penalty))
    return best


# ---------------------------------------------------------------- SPICE (real) and its substitute


def _stem(w: str) -> str:
    for suf in ("ing", "edly", "ed", "ies", "es", "s", "ly"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            w = w[: -len(suf)]
            if suf == "ies":
                w += "y"
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":  # running -> runn -> run
        w = w[:-1]
    return w


def content_words(tokens: str) -> list[str]:
    return [_stem(w) for w in tokens.split() if w not in _STOP]


def content_f1(cand: str, refs: list[str]) -> float:
    """SPICE substitute: F1 of content-word multisets (max over references)."""
    c = Counter(content_words(cand))
    best = 0.0
    for ref in refs:
        r = Counter(content_words(ref))
        if not c or not r:
            continue
        overlap = sum((c & r).values())
        if overlap == 0:
            continue
        p, rec = overlap / sum(c.values()), overlap / sum(r.values())
        best = max(best, 2 * p * rec / (p + rec))
    return best


def spice_real(cands: list[str], refs: list[list[str]]) -> list[float]:
    """SPICE 1.0 F-scores through its jar, with CoreNLP 3.6.0 from AUDIOMIND_SPICE_DIR; run from a private
    folder (links to the jars) so neither the package folder nor the network is touched."""
    import json

    from audiomind.embedded.models import cache_dir

    jars = spice_jars()
    coco = _coco_dir()
    java = _java()
    if jars is None or coco is None or java is None:
        raise RuntimeError("SPICE needs Java, pycocoevalcap and CoreNLP 3.6.0 jars in AUDIOMIND_SPICE_DIR")
    root = cache_dir() / "spice"
    lib = root / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    for src in [coco / "spice" / "spice-1.0.jar"]:
        dst = root / src.name
        if not dst.exists():
            os.symlink(src, dst)
    for src in list((coco / "spice" / "lib").glob("*.jar")) + list(jars):
        dst = lib / src.name
        if not dst.exists():
            os.symlink(src, dst)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        inp, out = Path(tmp) / "in.json", Path(tmp) / "out.json"
        inp.write_text(json.dumps([{"image_id": i, "test": c, "refs": r} for i, (c, r) in enumerate(zip(cands, refs))]))
        subprocess.run([java, "-jar", "-Xmx8G", "spice-1.0.jar", str(inp), "-out", str(out), "-subset", "-silent"],
                       cwd=root, check=True, capture_output=True, timeout=600)
        results = json.loads(out.read_text())
    by_id = {int(r["image_id"]): r for r in results}
    return [float(by_id[i]["scores"]["All"]["f"]) if not math.isnan(float(by_id[i]["scores"]["All"]["f"])) else 0.0
            for i in range(len(cands))]


# ---------------------------------------------------------------- FENSE (real) and its substitute


def _fense_models():
    """(sbert, tokenizer, echecker, lock) from AUDIOMIND_FENSE_DIR, loaded once per process."""
    return sessions.get("fense", _load_fense)


def _load_fense():
    """(sbert, tokenizer, echecker, lock) from AUDIOMIND_FENSE_DIR; the layout of the FENSE release."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    files = fense_files()
    if files is None:
        raise RuntimeError("FENSE files not found in AUDIOMIND_FENSE_DIR")
    state = torch.load(files["echecker"], map_location="cpu", weights_only=False)
    model_type, num_classes = state["model_type"], int(state["num_classes"])
    enc_dir = files["root"] / model_type
    if not enc_dir.is_dir():
        raise RuntimeError(f"FENSE error detector encoder folder {enc_dir} not found")

    class EChecker(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(enc_dir))
            self.dropout = torch.nn.Dropout(0.2)
            self.clf = torch.nn.Linear(self.encoder.config.hidden_size, num_classes)

        def forward(self, **batch):  # the [CLS] state through a linear layer, as in FENSE
            h = self.encoder(**batch).last_hidden_state[:, 0, :]
            return self.clf(self.dropout(h))

    checker = EChecker()
    checker.load_state_dict(state["state_dict"], strict=False)
    checker.eval()
    tok = AutoTokenizer.from_pretrained(str(enc_dir))
    sbert = SentenceTransformer(str(files["sbert"]), device="cpu")
    return sbert, tok, checker, threading.Lock()


def fense_real(cands: list[str], refs: list[list[str]], penalty: float = 0.9, threshold: float = 0.9) -> list[float]:
    """FENSE: mean SBERT cosine to the references, times (1 - penalty) where the fluency-error probability of
    the candidate exceeds `threshold` (FENSE's defaults)."""
    import torch

    sbert, tok, checker, lock = _fense_models()

    def prep(s: str) -> str:
        return re.sub(r"[^\w\s]", "", s).lower()

    out = []
    with lock, torch.no_grad():
        for c, rs in zip(cands, refs):
            ce = sbert.encode([prep(c)], normalize_embeddings=True)
            re_ = sbert.encode([prep(r) for r in rs], normalize_embeddings=True)
            sim = float((ce @ re_.T).mean())
            batch = tok([prep(c)], return_tensors="pt", truncation=True, max_length=64, padding=True)
            err = float(torch.sigmoid(checker(**batch))[0, -1])
            out.append(sim * (1 - penalty) if err > threshold else sim)
    return out


def sbert_similarity(cands: list[str], refs: list[list[str]]) -> list[float]:
    """FENSE substitute: mean cosine of all-MiniLM-L6-v2 embeddings (candidate vs each reference)."""
    from audiomind.embedded import text

    out = []
    for c, rs in zip(cands, refs):
        if not c.strip() or not any(r.strip() for r in rs):
            out.append(0.0)
            continue
        out.append(float(np.mean(text.similarity([c], [r for r in rs if r.strip()])[0])))
    return out


# ---------------------------------------------------------------- CIDEr-D with a background corpus


def cider_d(cands: list[str], refs: list[list[str]], background: list[str] | None = None) -> list[float]:
    """CIDEr-D (pycocoevalcap's scorer: clipping, Gaussian length penalty, x10) of each candidate. The
    document frequencies come from the references scored together plus `background` captions (each added
    as its own reference set and never scored), so one pair alone is not degenerate."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    scorer = CiderScorer(n=4, sigma=6.0)
    for c, rs in zip(cands, refs):
        scorer.cook_append(c, rs)
    for b in background or []:
        scorer.cook_append(b, [b])
    with contextlib.redirect_stdout(io.StringIO()):
        _, scores = scorer.compute_score()
    return [max(0.0, float(s)) for s in scores[: len(cands)]]


# ---------------------------------------------------------------- the entry point


def score_captions(
    cands: list[str], refs: list[list[str]], background: list[str] | None = None, *, need_meteor: bool = True
) -> MetricsReport:
    """All metrics for each (candidate, references) pair; missing metrics are declared substitutes."""
    if len(cands) != len(refs):
        raise ValueError("one list of references per candidate is needed")
    raw = list(cands) + [r for rs in refs for r in rs] + list(background or [])
    toks, how = tokenize(raw)
    tc = toks[: len(cands)]
    pos = len(cands)
    tr: list[list[str]] = []
    for rs in refs:
        tr.append([t or "none" for t in toks[pos: pos + len(rs)]])
        pos += len(rs)
    tb = [t for t in toks[pos:] if t]
    details = {"tokenizer": how}
    substitutes: dict[str, str] = {}
    n = len(cands)
    empty = [not c.strip() for c in tc]

    from pycocoevalcap.bleu.bleu_scorer import BleuScorer
    from pycocoevalcap.rouge.rouge import Rouge

    bleu = np.zeros((n, 4))
    for i, (c, rs) in enumerate(zip(tc, tr)):
        if empty[i]:
            continue
        bs = BleuScorer(n=4)
        bs += (c, rs)
        with contextlib.redirect_stdout(io.StringIO()):
            _, per = bs.compute_score(option="closest", verbose=0)
        bleu[i] = [float(per[k][0]) for k in range(4)]
    details["bleu"] = "pycocoevalcap BLEU (closest reference length), sentence level"
    rouge = Rouge()
    rl = [0.0 if empty[i] else float(rouge.calc_score([tc[i]], tr[i])) for i in range(n)]
    details["rouge_l"] = "pycocoevalcap ROUGE-L (beta 1.2)"
    cd = cider_d([c or "none" for c in tc], tr, tb)
    cd = [0.0 if empty[i] else cd[i] for i in range(n)]
    details["cider_d"] = (f"pycocoevalcap CIDEr-D; document frequencies over the {n} scored reference set(s)"
                          + (f" plus {len(tb)} background captions" if tb else ""))

    meteor: list[float]
    m = _meteor() if need_meteor else None
    if m is not None:
        try:
            meteor = m.score([c or "none" for c in tc], tr)
            details["meteor"] = "METEOR 1.5 (pycocoevalcap jar)"
        except Exception as exc:  # noqa: BLE001
            m = None
            details["meteor_error"] = f"{type(exc).__name__}: {exc}"[:200]
    if m is None:
        meteor = [meteor_exact(c, rs) for c, rs in zip(tc, tr)]
        substitutes["meteor"] = METEOR_SUBSTITUTE if need_meteor else "METEOR exact-match only (METEOR not requested)"
    meteor = [0.0 if empty[i] else meteor[i] for i in range(n)]

    spice: list[float] | None = None
    if spice_jars() is not None:
        try:
            spice = spice_real([c or "none" for c in cands], [list(r) for r in refs])
            details["spice"] = "SPICE 1.0 with CoreNLP 3.6.0 (AUDIOMIND_SPICE_DIR)"
        except Exception as exc:  # noqa: BLE001
            details["spice_error"] = f"{type(exc).__name__}: {exc}"[:200]
    if spice is None:
        spice = [content_f1(c, rs) for c, rs in zip(tc, tr)]
        substitutes["spice"] = SPICE_SUBSTITUTE
        substitutes["spider"] = "SPIDEr computed with the SPICE substitute"
    spice = [0.0 if empty[i] else spice[i] for i in range(n)]

    fense: list[float] | None = None
    if fense_files() is not None:
        try:
            fense = fense_real(list(cands), [list(r) for r in refs])
            details["fense"] = "FENSE (SBERT + fluency-error detector, AUDIOMIND_FENSE_DIR)"
        except Exception as exc:  # noqa: BLE001
            details["fense_error"] = f"{type(exc).__name__}: {exc}"[:200]
    if fense is None:
        fense = sbert_similarity(list(cands), [list(r) for r in refs])
        substitutes["fense"] = FENSE_SUBSTITUTE
    fense = [0.0 if empty[i] else fense[i] for i in range(n)]

    scores = []
    for i in range(n):
        scores.append(CaptionScores(
            bleu_1=round(bleu[i, 0], 4), bleu_2=round(bleu[i, 1], 4), bleu_3=round(bleu[i, 2], 4),
            bleu_4=round(bleu[i, 3], 4), meteor=round(meteor[i], 4), rouge_l=round(rl[i], 4),
            cider_d=round(cd[i], 4), spice=round(spice[i], 4), spider=round((cd[i] + spice[i]) / 2, 4),
            fense=round(fense[i], 4), substitutes=dict(substitutes),
        ))
    return MetricsReport(scores=scores, substitutes=substitutes, details=details)
