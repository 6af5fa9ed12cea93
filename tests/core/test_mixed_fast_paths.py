"""The digit skeleton and the fuzzy pass's spacing of a text with a few non-ASCII characters take
the ASCII stretches between them on ``bytes.translate`` (issue 33): the same strings as the one
regex pass over the whole text, whatever the mix."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard._digits import _DIGIT, _SEP_CHARS, _SEP_RUN, _mixed_skeleton
from tpguard._fuzzy_index import _PUNCT_RE, _spaced

# ASCII letters, digits and every separator/punctuation, a few non-ASCII letters, separators,
# quotes and digits (Arabic-Indic, fullwidth), so runs fall beside, inside and between them
ALPHABET = ("abcXYZ0123456789 -_./:,()[]+#'!?@\"" + _SEP_CHARS
            + "éüßж\u201c\u201d\u00a0\u0663\uff15日本")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=300))
def test_mixed_skeleton_is_the_regex_pass(text: str) -> None:
    if text.isascii():
        text += "é"  # _skeleton takes bytes.translate for pure ASCII; this helper is the other path
    expected = _SEP_RUN.sub("", text) if _DIGIT.search(text) else ""
    assert _mixed_skeleton(text) == expected


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=300))
def test_spaced_is_the_regex_pass(text: str) -> None:
    assert _spaced(text) == _PUNCT_RE.sub(" ", text)


def test_long_mostly_ascii_text_takes_the_split_and_dense_text_the_regex() -> None:
    few = ("Laurie Bates, 12 Oak Street, 415-555-0199 \u201cVIP\u201d\n" * 200)
    many = "жж-1 " * 500
    for text in (few, many):
        assert _spaced(text) == _PUNCT_RE.sub(" ", text)
        assert _mixed_skeleton(text) == _SEP_RUN.sub("", text)
