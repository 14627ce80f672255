"""The NumPy MiniLM (audiomind.embedded.minilm) against sentence-transformers on the same packaged weights:
the same vectors to float32 rounding, for short, empty, accented, CJK and over-long (truncated) texts; and
embedding text never imports torch, transformers or sentence-transformers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from audiomind.embedded import models

pytestmark = pytest.mark.skipif(not models.check("minilm")[0], reason="MiniLM carrier package not installed")

TEXTS = [
    "How many different people speak in this recording?",
    "a dog barking",
    "",
    "Café naïve résumé — ünïcödé 日本語のテキスト",
    "The quick brown fox jumps over the lazy dog. " * 60,  # > 256 tokens: truncated like sentence-transformers
    "tempo",
    "What is the source of the sound in this clip? A telephone ringing",
]


@pytest.mark.slow
def test_numpy_minilm_matches_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    from audiomind.embedded.minilm import MiniLM

    ours = MiniLM(models.minilm_dir()).encode(TEXTS, normalize_embeddings=True, batch_size=3)
    ref = SentenceTransformer(str(models.minilm_dir()), device="cpu").encode(
        TEXTS, normalize_embeddings=True, show_progress_bar=False, batch_size=64)
    assert ours.shape == ref.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - ref).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_a_vector():
    from audiomind.embedded.minilm import MiniLM

    m = MiniLM(models.minilm_dir())
    one_by_one = np.stack([m.encode([t])[0] for t in TEXTS])
    assert np.abs(m.encode(TEXTS, batch_size=64) - one_by_one).max() < 1e-5


def test_text_embedding_imports_no_torch():
    code = (
        "import sys\n"
        "from audiomind.embedded import text\n"
        "text.similarity(['a dog barks'], ['dog', 'piano'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'sentence_transformers'})\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == ""


def test_large_batches_are_kept_on_disk_and_read_back(monkeypatch):
    from audiomind.embedded import text

    texts = [f"prototype sentence number {i} about sounds" for i in range(text.DISK_BATCH_MIN)]
    monkeypatch.setattr(text, "_cache", {})
    first = text.embed(texts)
    path = text._batch_file(texts)
    assert path.is_file()
    monkeypatch.setattr(text, "_cache", {})
    monkeypatch.setattr(text, "_model", lambda: pytest.fail("the batch should come from disk"))
    assert np.array_equal(text.embed(texts), first)


def test_prepared_weights_kept_on_disk_give_the_same_vectors_bit_for_bit(tmp_path):
    """A fresh process maps the prepared weights (audiomind.embedded.minilm.load_weights) instead of reading and
    transposing the safetensors again: the same floats, so the same embeddings to the bit; a short or mismatched
    file is not used (the safetensors are read again and the file rewritten)."""
    from audiomind.embedded.minilm import MiniLM

    plain = MiniLM(models.minilm_dir()).encode(TEXTS, batch_size=3)
    first = MiniLM(models.minilm_dir(), weights_cache=tmp_path).encode(TEXTS, batch_size=3)  # stores them
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "weights.npy").is_file() and (folder / "index.json").is_file()
    mapped = MiniLM(models.minilm_dir(), weights_cache=tmp_path)
    assert isinstance(mapped.word, np.memmap) or isinstance(mapped.word.base, np.memmap)
    assert np.array_equal(mapped.encode(TEXTS, batch_size=3), plain) and np.array_equal(first, plain)
    weights = folder / "weights.npy"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a file cut short
    again = MiniLM(models.minilm_dir(), weights_cache=tmp_path)
    assert not isinstance(again.word.base, np.memmap)  # read from the safetensors ...
    assert np.array_equal(again.encode(TEXTS, batch_size=3), plain)
    assert np.load(weights, mmap_mode="r").shape[0] > weights.stat().st_size // 8  # ... and the file rewritten
