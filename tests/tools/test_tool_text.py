"""tools.text.listed: the "first N, then (+k more)" wording the tools' claims and messages share."""

from __future__ import annotations

from audiomind.tools.text import listed


def test_listed_shows_all_when_within_the_limit():
    assert listed([1.5, 2.25], 3, lambda t: f"{t:.2f} s") == "1.50 s, 2.25 s"
    assert listed([], 3, str) == ""


def test_listed_counts_what_it_leaves_out():
    spans = [(i, i + 0.5) for i in range(25)]
    text = listed(spans, 20, lambda s: f"{s[0]:.2f}-{s[1]:.2f} s")
    assert text.startswith("0.00-0.50 s, 1.00-1.50 s, ")
    assert text.count(" s,") == 19 and "19.00-19.50 s (+5 more)" in text and "20.00" not in text


def test_listed_takes_a_separator():
    assert listed(["a: bad", "b: worse", "c: worst", "d"], 2, str, sep="; ") == "a: bad; b: worse (+2 more)"
