"""The fuzzy pass skips what an exact match already holds (issue 33): a place where an atom's value
occurs exactly is not aligned, and the findings stay the same — the exact match, the name inside
an e-mail address and a typo'd name elsewhere are all still reported."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from tpguard import PrivateAtom
from tpguard.detect import _fuzzy_index as fuzzy_index
from tpguard.detect.detector import Detector

NAME = PrivateAtom(id="n", type="person_name", value="Laurie Bates")
EMAIL = PrivateAtom(id="e", type="email", value="laurie.bates@example.com")
TEXT = ("Customer Laurie Bates (laurie.bates@example.com) called; later Lauri Bates wrote again, "
        "and Laurie Bates confirmed.")


@pytest.fixture
def aligned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every (key, span) the fuzzy pass hands to rapidfuzz."""
    calls: list[tuple[str, str]] = []
    real = fuzz.ratio

    def ratio(key: str, span: str, **kw: float) -> float:
        calls.append((key, span))
        return real(key, span, **kw)

    monkeypatch.setattr(fuzzy_index.fuzz, "ratio", ratio)
    return calls


def _spans(found: list) -> set[tuple[str, str, str]]:
    return {(f.atom_id, f.method, TEXT[f.start : f.end]) for f in found}


def test_an_exact_occurrence_is_not_aligned_and_every_finding_stays(aligned: list[tuple[str, str]]) -> None:
    found = Detector([NAME, EMAIL]).scan_text(TEXT)
    assert _spans(found) == {
        ("n", "exact", "Laurie Bates"),
        ("n", "fuzzy", "laurie.bates"),
        ("n", "fuzzy", "Lauri Bates"),
        ("e", "exact", "laurie.bates@example.com"),
    }
    assert [f.start for f in found if f.method == "exact" and f.atom_id == "n"] == [9, TEXT.rindex("Laurie Bates")]
    # the two exact occurrences of the name are never aligned; the e-mail and the typo are
    assert ("laurie bates", "laurie bates") not in aligned
    assert ("laurie.bates@example.com", "laurie.bates@example.com") not in aligned
    assert ("laurie bates", "laurie.bates") in aligned and ("laurie bates", "lauri bates") in aligned


def test_an_exact_occurrence_of_another_atom_is_still_aligned(aligned: list[tuple[str, str]]) -> None:
    # the name sits inside the e-mail's exact match: a match of another atom covers nothing
    found = Detector([NAME, EMAIL]).scan_text("write to laurie.bates@example.com today")
    assert {(f.atom_id, f.method) for f in found} == {("n", "fuzzy"), ("e", "exact")}
