"""The fuzzy pass's word offsets (``tpguard.detect._fuzzy_index``): each word of a normalized text starts
at the offset computed from the split's piece lengths, for any text (the offsets replace a regex
over the words, and the words come from ``str.split()``, so the three must agree exactly)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import PrivateAtom
from tpguard.detect._fuzzy_words import _first_starts, _spaced, _split, _word_starts
from tpguard.detect._normalize import normalize

Redact = Callable[[PrivateAtom, str], str]

# every kind of whitespace ``str.split()`` splits on: normalization must leave only single spaces
_ALPHABET = st.sampled_from(list("ab Zé-.,:;!()@'\t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u1680\u2028\u3000\u200b\u2013x1"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_every_word_starts_where_its_offset_says(text: str) -> None:
    s = normalize(text).text
    spaced, words = _split(s)
    starts = _word_starts(spaced)
    assert len(starts) == len(words) and spaced == _spaced(s)
    assert [spaced[i : i + len(w)] for i, w in zip(starts, words, strict=True)] == words
    assert starts == sorted(set(starts))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=80), st.integers(0, 40))
def test_the_first_words_offsets_by_find_are_the_whole_texts(text: str, n: int) -> None:
    """``_first_starts`` (a note's few candidate words, issue 33 item 2) is a prefix of the C
    offsets of every word, repeated words and punctuation runs included."""
    spaced, words = _split(normalize(text).text)
    assert _first_starts(spaced, words, n) == _word_starts(spaced)[:n]


def test_a_typo_after_punctuation_runs_is_redacted_at_its_own_offsets(redact_body: Redact) -> None:
    name = PrivateAtom(id="n", type="person_name", value="Maria Gonzalez")
    out = redact_body(name, "Re: re: (fwd) -- ,, ask\tMaria  Gonzales,, about it")
    assert "Gonzales" not in out and "Maria" not in out
    assert out.startswith("Re: re: (fwd) -- ,, ask\t") and out.endswith(",, about it")
