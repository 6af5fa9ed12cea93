"""The digit skeleton and the fuzzy pass's spacing of a text with non-ASCII characters run on
``bytes.translate`` of its UTF-8 bytes (issue 33), and the skeleton's locator on a one-byte image:
the same strings and offsets as the one regex pass (the old code) over the whole text, whatever
the mix."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard.detect._digits import (
    _byte_image,
    _Locator,
    _mixed_skeleton,
    _skeleton,
    _skeleton_map,
)
from tpguard.detect._fuzzy_words import _PUNCT_RE, _spaced
from tpguard.detect._normalize import normalize
from tpguard.detect._skeleton_key import _DIGIT, _SEP_CHARS, _SEP_RUN

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


def test_long_mostly_ascii_and_dense_non_latin_texts_give_the_regex_strings() -> None:
    few = ("Laurie Bates, 12 Oak Street, 415-555-0199 \u201cVIP\u201d\n" * 200)
    many = "жж-1 " * 500
    for text in (few, many):
        assert _spaced(text) == _PUNCT_RE.sub(" ", text)
        assert _mixed_skeleton(text) == _SEP_RUN.sub("", text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=200), st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_locator_on_the_byte_image_agrees_with_the_map(text: str, picks: list[float]) -> None:
    """A non-ASCII text is located on its one-byte-per-character image (issue 33, item 2): the same
    offsets as the per-character map, for every separator the skeleton drops (the non-ASCII ones
    included) and any order of look-ups."""
    norm = normalize(text + "\u2019é1")  # non-ASCII, with a digit and a wide separator at least
    skel = _skeleton(norm)
    if not skel or norm.text.isascii():
        return
    positions = _skeleton_map(normalize(text + "\u2019é1"))  # built apart: the locator must not reuse it
    locate = _Locator(norm).at
    for x in picks:
        i = min(int(x * len(skel)), len(skel) - 1)
        assert locate(i) == positions[i]
    assert len(_byte_image(norm.text)) == len(norm.text)
