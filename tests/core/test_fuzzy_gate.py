"""The fuzzy pass's pair gate (``tpguard.detect._fuzzy_gate``, issue 33): for any text, the pairs it lets
through are exactly the pairs whose look-up finds a posting — as written, within one edit on
either side, or both — so gating them in C drops no candidate; and the digit filter of a posting
counts its dropped places as places."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import PrivateAtom
from tpguard.detect import _fuzzy_index as fuzzy_index
from tpguard.detect._fuzzy_gate import PairGate
from tpguard.detect._fuzzy_index import FuzzyIndex
from tpguard.detect.detector import Detector

_KEYS = ("maria gonzalez", "mario gonzales", "john smith", "joan smyth", "12 oak street",
         "881 willow creek road", "blue shield ppo", "laurie bates example com")
_WORDS = st.sampled_from(["maria", "mria", "marie", "gonzalez", "gonzales", "gonzlez", "john", "jon",
                          "smith", "smyth", "12", "13", "oak", "street", "streets", "willow", "creek",
                          "road", "blue", "shield", "ppo", "laurie", "bates", "example", "com", "and",
                          "the", "a", "881"])


def index_of(keys: tuple[str, ...]) -> FuzzyIndex:
    """A frozen index holding ``keys`` (atom i holds keys[i]); test_fuzzy_flat_paths uses it too."""
    index = FuzzyIndex(88.0)
    for i, key in enumerate(keys):
        index.add(i, key)
    index.freeze()
    return index


def _index() -> FuzzyIndex:
    return index_of(_KEYS)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=2, max_size=12))
def test_the_gate_lets_through_exactly_the_pairs_that_find_a_posting(words: list[str]) -> None:
    index = _index()
    at = [i for i, w in enumerate(words) if w in index._vocab]
    gate = PairGate(index._pairs, index._vocab, index._within_one_edit)
    opened = list(gate.open_pairs(words, at))
    beside = sorted({i for p in at for i in (p - 1, p) if 0 <= i < len(words) - 1})
    assert opened == [i for i in beside if index._pair_postings(words[i], words[i + 1])]
    # a short text looks its pairs up one by one, a long one through the gate: the same places
    with pytest.MonkeyPatch.context() as mp:
        assert_gate_places_as_direct(index, words, at, mp)


def assert_gate_places_as_direct(index: FuzzyIndex, words: list[str], at: list[int],
                                 mp: pytest.MonkeyPatch) -> None:
    """The gated pair look-ups (a long text's path) place what the direct ones (a short text's) do."""
    gated: tuple[dict, list] = ({}, [])
    direct: tuple[dict, list] = ({}, [])
    mp.setattr(fuzzy_index, "_GATE_FROM", 0)
    mp.setattr(fuzzy_index, "_GATE_VOCAB", 0)
    index._pair_hits(words, at, *gated)
    mp.setattr(fuzzy_index, "_GATE_FROM", 10**9)
    index._pair_hits(words, at, *direct)
    assert gated == direct


def test_a_street_among_many_of_its_name_is_found_by_its_number() -> None:
    # 24 streets named "David Wells": the posting's digit filter keeps only the one whose number
    # is written, and a typo'd occurrence of it is still found beside an exact one
    atoms = [PrivateAtom(id=f"s{n}", type="street_address", value=f"{n} David Wells Road") for n in range(100, 124)]
    text = "ship to 117 David Wells Road, or else 117 Davd Wells Road, not 99 David Wells Road"
    found = Detector(atoms).scan_text(text)
    assert {(f.atom_id, f.method, text[f.start : f.end]) for f in found} == {
        ("s117", "exact", "117 David Wells Road"), ("s117", "fuzzy", "117 Davd Wells Road")}
