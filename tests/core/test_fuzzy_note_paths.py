"""The fuzzy pass's direct alignment (issue 33, items 2 and 3) gives the old code's findings:
``FuzzyIndex._verify`` tries each place's windows directly, without the old memos of a place's
windows and a widest window's outcome; the pair look-ups place small postings inline and keep each
place's pair indices as a bit mask; ``_unknown`` counts only the atoms with known occurrences.

The reference is the code of ``test_fuzzy_export_paths`` (``tpguard/detect/_fuzzy_index.py`` at fdfc457),
which this path must match on every text — places before the text's first word included (a pair of
an atom's middle at the start), where the aligned words' offsets wrap around the offset list."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzzy_export_paths import _ATOMS, _WORDS, _near_values, _old_pair_hits, _old_verify

from tpguard import PrivateAtom
from tpguard.benchmark.perf._realistic import REALISTIC_ATOMS, realistic_arguments
from tpguard.detect._fuzzy_index import FuzzyIndex
from tpguard.detect.detector import Detector


def _findings(detector: Detector, text: str) -> list[tuple]:
    return sorted((f.atom_id, f.method, f.start, f.end, round(f.score, 9)) for f in detector.scan_text(text))


def _reference(atoms: list[PrivateAtom], text: str) -> list[tuple]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FuzzyIndex, "_pair_hits", _old_pair_hits)
        mp.setattr(FuzzyIndex, "_verify", _old_verify)
        return _findings(Detector(atoms), text)


def _same(atoms: list[PrivateAtom], text: str) -> None:
    """The text's findings are the reference's."""
    assert _findings(Detector(atoms), text) == _reference(atoms, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_near_values(), _WORDS), min_size=1, max_size=14),
       st.sampled_from([", ", " ", "\n", "; ", " (", ") "]))
def test_a_few_places_are_aligned_as_the_old_code_aligned_them(parts: list[str], sep: str) -> None:
    _same(_ATOMS, sep.join(parts))


_NOTE = realistic_arguments()["note"]
_NOTE_WORDS = _NOTE.replace("(", " ( ").replace(")", " ) ").split()


@st.composite
def _note_variants(draw: st.DrawFn) -> str:
    """The realistic note with a few of its words dropped, doubled, cut short or typo'd: its name
    inside and outside the e-mail address, its abbreviated street, near misses of both."""
    words = list(_NOTE_WORDS)
    for _ in range(draw(st.integers(0, 6))):
        j = draw(st.integers(0, len(words) - 1))
        w = words[j]
        op = draw(st.sampled_from(["drop", "double", "typo", "cut", "street", "name"]))
        if op == "drop":
            del words[j]
        elif op == "double":
            words.insert(j, w)
        elif op == "typo" and len(w) > 3:
            k = draw(st.integers(0, len(w) - 1))
            words[j] = w[:k] + draw(st.sampled_from(["", "e", "x", "."])) + w[k + 1 :]
        elif op == "cut":
            words = words[j:] if draw(st.booleans()) else words[: j + 1]
        elif op == "street":
            words.insert(j, draw(st.sampled_from(["12 Oak Street", "12 Oak Stret", "21 Oak Street", "Oak St."])))
        elif op == "name":
            words.insert(j, draw(st.sampled_from(["Laurie Bates", "Lauri Bates", "Bates,", "laurie.bates",
                                                  "laurie.bates@example.co", "Laurie Bates Bates"])))
        if not words:
            words = ["Bates"]
    return " ".join(words)


@settings(max_examples=300, deadline=None)
@given(_note_variants())
def test_the_realistic_note_and_its_variants_give_the_old_findings(text: str) -> None:
    _same(list(REALISTIC_ATOMS), text)


def test_the_note_aligns_only_what_it_must() -> None:
    # the name inside the e-mail address is found; the abbreviated street is aligned, not found
    found = _findings(Detector(list(REALISTIC_ATOMS)), _NOTE)
    assert found == _reference(list(REALISTIC_ATOMS), _NOTE)
    fuzzy = [(atom, _NOTE[start:end]) for atom, method, start, end, _ in found if method == "fuzzy"]
    assert fuzzy == [("lb-name", "laurie.bates")]


def test_a_place_before_the_text_start_reads_the_same_windows() -> None:
    # "Wells Road" opens the text: the pair of the atoms' middle places them before word 0
    for text in ("Wells Road 117 and more", "Wells Road", "David Wells Road, 17 David Wels Road",
                 "Grove Lane Apt. 3 Oak Grov Lane"):
        _same(_ATOMS, text)
    # a long name without its short first word opens the text: the words from the text's start
    # reach the threshold, and so do they with the next word; the old code found the first
    long_name = [PrivateAtom(id="dr", type="person_name", value="Dr Margaret Anne Wellington Jordan")]
    text = "Margaret Anne Wellington Jordan is here"
    _same(long_name, text)
    assert [(f[0], text[f[2] : f[3]]) for f in _findings(Detector(long_name), text)] == [
        ("dr", "Margaret Anne Wellington Jordan")]
