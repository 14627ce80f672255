"""all-MiniLM-L6-v2 in NumPy: the packaged sentence encoder without torch, transformers or
sentence-transformers.

The model is a 6-layer BERT (hidden 384, 12 heads, GELU feed-forward of 1536) followed by mean pooling
over the attention mask and L2 normalisation, exactly what sentence-transformers runs for this model
(modules.json: Transformer -> Pooling(mean) -> Normalize; max_seq_length 256). Weights come from the
carrier's model.safetensors (read with safetensors' NumPy loader), tokens from its tokenizer.json (the
`tokenizers` library, Rust). A fresh process loads it in well under a second, where importing
sentence-transformers (and with it transformers and torch) took 5-12 s on the 2-core reference machine;
embeddings agree with sentence-transformers' to float32 rounding (tests/embedded/test_minilm_numpy.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from audiomind.embedded.sessions import SMALL_MODEL_THREADS, blas_threads

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, float32 rounding): NumPy has no erf,
    and importing scipy.special for it cost a cold question 0.2-0.9 s."""
    a = np.abs(x)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    poly = ((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t + np.float32(1.421413741)) * t
             - np.float32(0.284496736)) * t + np.float32(0.254829592)) * t
    return np.copysign(1.0 - poly * np.exp(-a * a), x)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


WEIGHTS_FORMAT = 1
ALIGN = 16  # float32 values: every array of the prepared file starts on a 64-byte boundary


def _prepared(path: Path, layers: int) -> dict[str, np.ndarray]:
    """The arrays the encoder multiplies with, by name, from the carrier's safetensors: the query/key/value
    weights of a layer side by side and every dense weight transposed, C-contiguous."""
    from safetensors.numpy import load_file

    w = load_file(str(path))
    out = {"word": w["embeddings.word_embeddings.weight"], "position": w["embeddings.position_embeddings.weight"],
           "token_type0": w["embeddings.token_type_embeddings.weight"][0],
           "emb_ln.w": w["embeddings.LayerNorm.weight"], "emb_ln.b": w["embeddings.LayerNorm.bias"]}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")])
        out |= {
            f"{i}.qkv_w": np.ascontiguousarray(qkv_w.T),
            f"{i}.qkv_b": np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]),
            f"{i}.out_w": np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
            f"{i}.out_b": w[p + "attention.output.dense.bias"],
            f"{i}.ln1.w": w[p + "attention.output.LayerNorm.weight"], f"{i}.ln1.b": w[p + "attention.output.LayerNorm.bias"],
            f"{i}.up_w": np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
            f"{i}.up_b": w[p + "intermediate.dense.bias"],
            f"{i}.down_w": np.ascontiguousarray(w[p + "output.dense.weight"].T),
            f"{i}.down_b": w[p + "output.dense.bias"],
            f"{i}.ln2.w": w[p + "output.LayerNorm.weight"], f"{i}.ln2.b": w[p + "output.LayerNorm.bias"],
        }
    return out


def _cache_folder(path: Path, layers: int, cache: Path) -> Path:
    import hashlib

    st = path.stat()
    key = json.dumps([WEIGHTS_FORMAT, str(path.resolve()), st.st_size, st.st_mtime_ns, layers])
    return cache / hashlib.sha256(key.encode()).hexdigest()[:32]


def load_weights(path: Path, layers: int, cache: Path | None = None) -> dict[str, np.ndarray]:
    """`_prepared`'s arrays. With `cache` (a folder), they are kept there as one float32 .npy file and its index,
    keyed by the safetensors file's path, size and time: a later process maps that file (read-only, no copy)
    instead of reading 90 MB and transposing it again (0.4-0.5 s of a fresh process's first question, before any
    tool could start). The values are the same floats either way. A file that is missing, short or does not
    match its index is not used: the safetensors are read again and the file rewritten."""
    folder = _cache_folder(path, layers, cache) if cache is not None else None
    if folder is not None:
        try:
            index = json.loads((folder / "index.json").read_text())
            flat = np.load(folder / "weights.npy", mmap_mode="r")
            if flat.dtype != np.float32 or flat.ndim != 1 or flat.shape[0] != index["size"]:
                raise ValueError("the prepared weights do not match their index")
            return {name: flat[off: off + math.prod(shape)].reshape(shape) for name, off, shape in index["arrays"]}
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            pass
    arrays = _prepared(path, layers)
    if folder is not None and all(a.dtype == np.float32 for a in arrays.values()):
        try:
            _store(folder, arrays)
        except OSError:  # a read-only cache only costs the next process the reading
            pass
    return arrays


def _store(folder: Path, arrays: dict[str, np.ndarray]) -> None:
    import io

    from audiomind.fsutil import atomic_write

    entries: list[tuple[str, int, list[int]]] = []
    off = 0
    for name, a in arrays.items():
        entries.append((name, off, list(a.shape)))
        off += -(-a.size // ALIGN) * ALIGN
    flat = np.zeros(off, dtype=np.float32)
    for name, start, _ in entries:
        flat[start: start + arrays[name].size] = arrays[name].ravel()
    buf = io.BytesIO()
    np.save(buf, flat, allow_pickle=False)
    atomic_write(folder / "weights.npy", buf.getvalue())
    atomic_write(folder / "index.json", json.dumps({"size": off, "arrays": entries}))


class MiniLM:
    """A BERT sentence encoder with sentence-transformers' `encode` signature (the part used here)."""

    def __init__(self, model_dir: str | Path, *, max_seq_length: int = MAX_SEQ_LENGTH,
                 weights_cache: str | Path | None = None):
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        cfg = json.loads((model_dir / "config.json").read_text())
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
            raise ValueError(f"{model_dir} is not a GELU BERT model (config: {cfg.get('model_type')}, "
                             f"{cfg.get('hidden_act')})")
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_seq_length = min(max_seq_length, int(cfg["max_position_embeddings"]))
        a = load_weights(model_dir / "model.safetensors", self.layers,
                         Path(weights_cache) if weights_cache is not None else None)
        self.word, self.position, self.token_type0 = a["word"], a["position"], a["token_type0"]
        self.emb_ln = (a["emb_ln.w"], a["emb_ln.b"])
        self.blocks: list[dict[str, Any]] = [{
            "qkv_w": a[f"{i}.qkv_w"], "qkv_b": a[f"{i}.qkv_b"], "out_w": a[f"{i}.out_w"], "out_b": a[f"{i}.out_b"],
            "ln1": (a[f"{i}.ln1.w"], a[f"{i}.ln1.b"]), "up_w": a[f"{i}.up_w"], "up_b": a[f"{i}.up_b"],
            "down_w": a[f"{i}.down_w"], "down_b": a[f"{i}.down_b"], "ln2": (a[f"{i}.ln2.w"], a[f"{i}.ln2.b"]),
        } for i in range(self.layers)]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_seq_length)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states, (batch, hidden), for padded ids and their 0/1 mask."""
        b, n = ids.shape
        h, d = self.heads, self.hidden // self.heads
        x = self.word[ids] + self.position[:n][None] + self.token_type0
        x = _layer_norm(x, *self.emb_ln, self.eps)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(d))
        x = x.reshape(b * n, self.hidden)  # every dense layer is one (b*n, in) @ (in, out) product
        for blk in self.blocks:
            qkv = x @ blk["qkv_w"] + blk["qkv_b"]  # (b*n, 3 * hidden)
            qkv = qkv.reshape(b, n, 3, h, d).transpose(2, 0, 3, 1, 4)  # (3, b, h, n, d)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias  # (b, h, n, n)
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, self.hidden)
            ln1_w, ln1_b = blk["ln1"]
            x = _layer_norm(ctx @ blk["out_w"] + blk["out_b"] + x, ln1_w, ln1_b, self.eps)
            up = x @ blk["up_w"] + blk["up_b"]
            up = 0.5 * up * (1.0 + _erf(up / np.float32(math.sqrt(2.0))))
            ln2_w, ln2_b = blk["ln2"]
            x = _layer_norm(up @ blk["down_w"] + blk["down_b"] + x, ln2_w, ln2_b, self.eps)
        x = x.reshape(b, n, self.hidden)
        m = mask[..., None].astype(np.float32)
        return (x * m).sum(1) / np.clip(m.sum(1), 1e-9, None)

    def encode(self, sentences: list[str], *, normalize_embeddings: bool = True, batch_size: int = 64,
               **_ignored) -> np.ndarray:
        """Embeddings (len(sentences), hidden) as float32; sentences are batched by length so padding
        stays short. BLAS runs on SMALL_MODEL_THREADS (1) meanwhile: these products are small, and on the
        busy 2-core machine OpenBLAS's spinning second thread made encoding 5-10x slower."""
        if not sentences:
            return np.zeros((0, self.hidden), dtype=np.float32)
        with blas_threads(SMALL_MODEL_THREADS):
            return self._encode(sentences, normalize_embeddings, batch_size)

    def _encode(self, sentences: list[str], normalize_embeddings: bool, batch_size: int) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(sentences))
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(encodings), self.hidden), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            n = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), n), dtype=np.int64)
            mask = np.zeros((len(idx), n), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encodings[i].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            out[idx] = self._forward(ids, mask)
        if normalize_embeddings:
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out
