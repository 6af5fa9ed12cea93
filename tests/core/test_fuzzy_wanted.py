"""``FuzzyIndex.scan(..., wanted=...)`` aligns and emits only the atoms asked for, and finds each of
them exactly as a scan of every atom does (issue 33: a caller that needs a few atoms' occurrences,
such as a second scan of a redacted text, should not pay for the others')."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from tpguard import PrivateAtom
from tpguard.detect import _fuzzy_index as fuzzy_index
from tpguard.detect._fuzzy_index import FuzzyIndex
from tpguard.detect._normalize import normalize
from tpguard.detect.detector import Detector

_VALUES = ["17 David Wells Road", "117 David Wells Road", "23 David Wells Road", "9 David Wells Road",
           "12 Oak Grove Lane", "112 Oak Grove Lane", "David Wells Jordan", "Maria Gonzalez",
           "Mario Gonzales", "maria.gonzalez12@gmail.com", "john.baker7@gmail.com", "Blue Shield PPO",
           "Congestive heart failure"]
_ATOMS = [PrivateAtom(id=f"a{i}", type="note", value=v) for i, v in enumerate(_VALUES)]
_WORDS = st.sampled_from([
    "17", "117", "23", "9", "12", "112", "4", "David", "Davd", "Wells", "Wels", "Road", "Oak", "Grove",
    "Grov", "Lane", "Jordan", "Maria", "Mria", "Mario", "Gonzalez", "Gonzales", "Gonzlez",
    "maria.gonzalez12@gmail.com", "maria.gonzalez@gmail.com", "john.baker@gmail.com", "Blue",
    "Sheild", "Shield", "PPO", "Congestive", "congestiv", "heart", "failure", "see", ",", "\n", "and",
])


def _index() -> tuple[Detector, FuzzyIndex]:
    detector = Detector(_ATOMS)
    return detector, detector._fuzzy


def _emitted(index: FuzzyIndex, text: str, known: dict[int, int], covered: set[tuple[int, int]],
             wanted: set[int] | None) -> list[tuple[int, int, int, float]]:
    out: list[tuple[int, int, int, float]] = []
    index.scan(text, lambda *found: out.append(found), known, covered, wanted=wanted)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=30), st.sets(st.integers(0, len(_ATOMS) - 1)),
       st.dictionaries(st.integers(0, len(_ATOMS) - 1), st.integers(1, 2), max_size=4))
def test_a_wanted_scan_emits_exactly_the_full_scans_findings_of_its_atoms(
        words: list[str], wanted: set[int], known: dict[int, int]) -> None:
    _, index = _index()
    text = normalize(" ".join(words)).text
    covered = {(idx, text.find(normalize(_VALUES[idx]).text)) for idx in known
               if normalize(_VALUES[idx]).text in text}
    full = _emitted(index, text, known, covered, None)
    assert _emitted(index, text, known, covered, wanted) == [f for f in full if f[0] in wanted]


def test_an_atom_not_wanted_is_never_aligned(monkeypatch: pytest.MonkeyPatch) -> None:
    _, index = _index()
    text = normalize("call Mria Gonzalez at 117 Davd Wells Road").text
    aligned: list[str] = []
    real = fuzz.ratio

    def ratio(key: str, span: str, **kw: float) -> float:
        aligned.append(key)
        return real(key, span, **kw)

    monkeypatch.setattr(fuzzy_index.fuzz, "ratio", ratio)
    street = _VALUES.index("117 David Wells Road")
    got = _emitted(index, text, {}, set(), {street})
    assert [idx for idx, *_ in got] == [street]
    assert set(aligned) == {"117 david wells road"}
    assert _emitted(index, text, {}, set(), set()) == []
    assert {idx for idx, *_ in _emitted(index, text, {}, set(), None)} == {street, _VALUES.index("Maria Gonzalez")}
