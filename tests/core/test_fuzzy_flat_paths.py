"""The fuzzy pass at a large policy (issue 33, item 3: flat in atoms): the index's pair gate leaves
out the pairs only postings of more than ``_MAX_POSTING`` atoms hold (``gmail com``), which place
nothing, so the gated look-ups place exactly what the direct ones place."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzzy_gate import assert_gate_places_as_direct, index_of

from tpguard.detect import _fuzzy_index as fuzzy_index
from tpguard.detect._fuzzy_gate import PairGate
from tpguard.detect._fuzzy_index import FuzzyIndex

# "gmail com" and "oak street" are shared by several keys: with _MAX_POSTING = 2 below, the
# first (four keys) places nothing, the second (two keys) still does
_KEYS = ("maria gonzalez gmail com", "mario gonzales gmail com", "john smith gmail com", "joan smyth gmail com",
         "12 oak street", "14 oak street", "laurie bates example com")
_WORDS = st.sampled_from(["maria", "mria", "gonzalez", "gonzales", "john", "jon", "smith", "smyth", "gmail",
                          "gmal", "com", "cmo", "12", "14", "oak", "street", "stret", "laurie", "bates",
                          "example", "the", "a"])


def _index() -> FuzzyIndex:
    return index_of(_KEYS)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=2, max_size=14))
def test_the_gate_opens_only_the_pairs_that_place_candidates(words: list[str]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fuzzy_index, "_MAX_POSTING", 2)
        index = _index()
        at = [i for i, w in enumerate(words) if w in index._vocab]
        opened = list(index._new_gate().open_pairs(words, at))
        beside = sorted({i for p in at for i in (p - 1, p) if 0 <= i < len(words) - 1})
        assert opened == [i for i in beside
                          if any(len(posting) <= 2 for posting in index._pair_postings(words[i], words[i + 1]))]
        assert_gate_places_as_direct(index, words, at, mp)


def test_a_pair_only_large_postings_hold_is_not_opened() -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fuzzy_index, "_MAX_POSTING", 2)
        index = _index()
        words = "write to gmail com or oak street".split()
        at = [i for i, w in enumerate(words) if w in index._vocab]
        assert list(index._new_gate().open_pairs(words, at)) == [5]  # "oak street", not "gmail com"
        assert list(PairGate(index._pairs, index._vocab, index._within_one_edit)
                     .open_pairs(words, at)) == [2, 5]  # a gate of every pair opens both
