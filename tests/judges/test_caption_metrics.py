"""Caption metrics: real pycocoevalcap scores where Java and the package are here, declared substitutes
for SPICE and FENSE (their files are absent), and the seed's Edit_score / Faith_score formulas."""

from __future__ import annotations

import math

import pytest

from audiomind.judges import caption_metrics as cm
from audiomind.judges.edit import WEIGHTS, edit_score, faith_score


@pytest.fixture(scope="module")
def report():
    cands = ["The edited audio adds a telephone ringing.", "There is no audible difference.", ""]
    refs = [["The edited audio adds a telephone ringing."], ["The edited audio adds a dog barking."], ["speech"]]
    return cm.score_captions(cands, refs, background=["The edited audio removes speech.", "rain and wind"])


def test_identical_captions_score_at_the_top(report):
    s = report.scores[0]
    assert s.bleu_1 == pytest.approx(1.0, abs=1e-3) and s.bleu_4 == pytest.approx(1.0, abs=1e-3)
    assert s.rouge_l == pytest.approx(1.0, abs=1e-3)
    assert s.meteor > 0.9
    assert s.cider_d > 1.0  # not degenerate: document frequencies include the background corpus
    assert s.spice == pytest.approx(1.0, abs=1e-3) and s.fense == pytest.approx(1.0, abs=1e-3)
    assert s.spider == pytest.approx((s.cider_d + s.spice) / 2, abs=1e-3)


def test_unrelated_caption_scores_low_and_empty_scores_zero(report):
    low, empty = report.scores[1], report.scores[2]
    assert low.bleu_1 < 0.3 and low.cider_d < 0.5 and low.spice < 0.3
    assert 0.0 <= low.fense < 0.7
    assert all(getattr(empty, m) == 0.0 for m in cm.METRICS)


def test_missing_metrics_are_declared_substitutes(report, monkeypatch):
    monkeypatch.delenv("AUDIOMIND_SPICE_DIR", raising=False)
    monkeypatch.delenv("AUDIOMIND_FENSE_DIR", raising=False)
    status = cm.metric_status()
    assert status["spice"].startswith("substitute") and status["fense"].startswith("substitute")
    assert set(report.substitutes) >= {"spice", "spider", "fense"}
    assert all(s.substitutes == report.substitutes for s in report.scores)
    assert "CIDEr-D" in report.details["cider_d"]


def test_spice_and_fense_dirs_without_their_files_stay_substitutes(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIOMIND_SPICE_DIR", str(tmp_path))
    monkeypatch.setenv("AUDIOMIND_FENSE_DIR", str(tmp_path))
    assert cm.spice_jars() is None and cm.fense_files() is None


def test_meteor_exact_substitute_follows_meteor_scoring():
    # identical 4-word strings: one chunk, penalty 0.5 * (1/4)^3
    assert cm.meteor_exact("a b c d", ["a b c d"]) == pytest.approx(1 - 0.5 * (1 / 4) ** 3)
    assert cm.meteor_exact("x y", ["a b"]) == 0.0


def test_python_tokenizer_drops_punctuation():
    assert cm._py_tokenize("A dog, barking!") == "a dog barking"


def test_edit_and_faith_scores_follow_the_seed_formulas():
    d = cm.CaptionScores(fense=0.8, spider=1.2, meteor=0.4, rouge_l=0.6)
    c = cm.CaptionScores(spice=0.5, meteor=0.3, rouge_l=0.7)
    x = 0.48 * 0.8 + 0.52 * 1.2 + 1e-6 * math.exp(-0.5 * (0.46 * 0.5 + 0.54 * 0.3))
    assert edit_score(d, c) == pytest.approx(x / (1 + x), rel=1e-9)
    y = 0.48 * 0.5 + 0.52 * 0.7 + 1e-6 * math.exp(-0.5 * (0.53 * 0.4 + 0.47 * 0.6))
    assert faith_score(d, c) == pytest.approx(-y / (1 + y), rel=1e-9)
    assert WEIGHTS["w_f"] + WEIGHTS["w_s"] == pytest.approx(1.0)
    # zero captions: only the epsilon term is left
    z = cm.CaptionScores()
    assert edit_score(z, z) == pytest.approx(1e-6, rel=1e-3)
