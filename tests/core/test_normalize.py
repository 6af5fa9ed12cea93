"""Normalization: linear, and its offset map round-trips (hypothesis property + hand cases)."""

from __future__ import annotations

import pytest

from tpguard.detect._normalize import normalize, normalize_key

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

_ALPHABET = st.sampled_from(
    [*"ab 1-%&#;2\t\n\u00a0\u200b\u200e\u0430\u03bfßÅ\u0301ｍ٤ﬁ", "%20", "&lt;", "&#32;", "%C3%A9"]
)


@hypothesis.given(st.lists(_ALPHABET, max_size=40).map("".join))
@hypothesis.settings(max_examples=300, deadline=None)
def test_offset_map_round_trips(text: str) -> None:
    norm = normalize(text)
    n = len(norm.text)
    prev = (0, 0)
    for i in range(n):
        o_start, o_end = norm.to_original(i, i + 1)
        assert 0 <= o_start < o_end <= len(text)
        assert o_start >= prev[0] and o_end >= prev[1]  # monotone
        prev = (o_start, o_end)
    if n:
        assert norm.to_original(0, n) == (norm.to_original(0, 1)[0], norm.to_original(n - 1, n)[1])


@pytest.mark.parametrize(
    ("text", "norm", "span", "original"),
    [
        ("Maria%20Gonzalez", "maria gonzalez", (0, 14), "Maria%20Gonzalez"),
        ("x &lt;b&gt; y", "x <b> y", (2, 5), "&lt;b&gt;"),
        ("a \t\n b", "a b", (0, 3), "a \t\n b"),
        ("Straße 12", "strasse 12", (0, 7), "Straße"),
        ("Mari\u0301a", "maría", (3, 4), "i\u0301"),
        ("M\u0430ri\u0430", "maria", (0, 5), "M\u0430ri\u0430"),
        ("caf%C3%A9!", "café!", (3, 4), "%C3%A9"),
    ],
)
def test_examples(text: str, norm: str, span: tuple[int, int], original: str) -> None:
    n = normalize(text)
    assert n.text == norm
    s, e = n.to_original(*span)
    assert text[s:e] == original


def test_keys_and_texts_normalize_alike() -> None:
    assert normalize_key("  Maria\u00a0GONZALEZ ") == "maria gonzalez"
    assert normalize("Maria\u00a0GONZALEZ").text == normalize_key("Maria GONZALEZ")


def test_ascii_whitespace_runs_collapse_as_the_regex_would() -> None:
    # The ASCII path collapses runs with split/join; the offset map is built from a regex split, so
    # the two must agree for every ASCII whitespace character and at either end of the text.
    import re
    from itertools import product

    from tpguard.detect._normalize import _collapse

    pieces = ["a", "b c", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f", "\n \t"]
    for parts in product(pieces, repeat=3):
        low = "".join(parts)
        assert _collapse(low) == re.sub(r"\s+", " ", low), repr(low)
        norm = normalize(low)
        for start in range(len(norm.text)):
            o_start, o_end = norm.to_original(start, start + 1)
            assert low[o_start:o_end].strip() == norm.text[start].strip()
