"""The key automaton on ``ahocorasick_rs`` (:mod:`tpguard.detect._keys`, issue 33: memory) finds what the
pyahocorasick automaton before it found.

* the automata alone: every ``(key, start, end)`` of random keys in random texts — overlapping
  keys, keys inside keys, non-ASCII, astral characters, lone surrogates — equal (hypothesis);
* whole detectors: a detector whose key automaton is pyahocorasick (the code before, behind the
  same interface) and today's give equal findings — same atoms, spans, methods, scores, order — on
  generated and adversarial texts over the benchmark's customer records, on the realistic note and
  export, and on the bulk (many-hit) path;
* lone surrogates in keys and texts (the stand-ins), and a build that loses a key raises.
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Collection, Iterable
from unittest import mock

import ahocorasick
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compact_keys import _EXTRA, _GLUE, _PIECES, generated_texts, policy_atoms

from tpguard import PrivateAtom
from tpguard.benchmark.perf._adversarial import customer_export
from tpguard.benchmark.perf._realistic import REALISTIC_ATOMS, realistic_arguments
from tpguard.benchmark.perf._workload import make_atoms
from tpguard.detect import _indexes, _keys
from tpguard.detect._keys import KeyAutomaton
from tpguard.detect.detector import Detector


class PyKeys:
    """The key automaton as it was (pyahocorasick, ``STORE_INTS``), behind :class:`KeyAutomaton`'s
    interface: the reference the new one is held to."""

    def __init__(self, keys: Collection[str], pairs: Iterable[tuple[str, int]]) -> None:
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        self.values = array("i")
        self._lengths: list[int] = []
        for key, value in pairs:
            self._automaton.add_word(key, len(self.values))
            self.values.append(value)
            self._lengths.append(len(key))
        self._automaton.make_automaton()

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        return [(n, end + 1 - self._lengths[n], end + 1) for end, n in self._automaton.iter(text)]


def old_detector(atoms: list[PrivateAtom]) -> Detector:
    with mock.patch.object(_indexes, "KeyAutomaton", PyKeys):
        return Detector(atoms)


def _numbered(keys: list[str]) -> tuple[list[str], list[tuple[str, int]]]:
    keys = list(dict.fromkeys(keys))
    return keys, [(k, i * 7 - 3) for i, k in enumerate(keys)]


_CHARS = st.sampled_from(["a", "b", "ab", " ", "é", "e\u0301", "\u00a0", "\U0001f600", "\ud800", "\udfff",
                          "\U0010f800", "\U0010ffff", "\0", "ß", "İ"])
_KEYS = st.lists(st.lists(_CHARS, min_size=1, max_size=4).map("".join), min_size=1, max_size=12)
_TEXTS = st.lists(_CHARS, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_KEYS, _TEXTS)
def test_the_automata_report_the_same_occurrences(keys: list[str], text: str) -> None:
    keys, pairs = _numbered(keys)
    new, old = KeyAutomaton(keys, iter(pairs)), PyKeys(keys, iter(pairs))
    assert list(new.values) == list(old.values)
    got = new.matches(text)
    assert sorted(got) == sorted(old.matches(text))
    assert [end for _, _, end in got] == sorted(end for _, _, end in got)  # ordered by end
    for key, value in pairs:
        assert new.get(key) == value


_ATOMS = policy_atoms()
_NEW, _OLD = Detector(_ATOMS), old_detector(_ATOMS)


def _same(text: str, new: Detector = _NEW, old: Detector = _OLD) -> None:
    assert new.scan_text(text) == old.scan_text(text)


def test_findings_equal_the_pyahocorasick_detector_on_generated_texts() -> None:
    texts = generated_texts()
    assert sum(len(_OLD.scan_text(t)) for t in texts) > 1000
    for text in texts:
        _same(text)


_ODD = st.sampled_from(["\ud800", "\udc00x", "\U0010f800", "\U0010ffff", "\U0001f600", "\uff41", "&amp;",
                        "%20", "\u200b", "é", "e\u0301", "İ", "ß", "\u00a0", "\0", "\n\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_PIECES, st.one_of(_GLUE, _ODD)), max_size=12))
def test_findings_equal_on_adversarial_texts(parts: list[tuple[str, str]]) -> None:
    _same("".join(p + g for p, g in parts))


def test_findings_equal_on_the_realistic_note_export_and_bulk_texts() -> None:
    atoms = [*REALISTIC_ATOMS, *make_atoms(1000)]
    new, old = Detector(atoms), old_detector(atoms)
    export = customer_export(200_000)
    for text in (realistic_arguments()["note"], realistic_arguments(nonascii=True)["note"], export,
                 export.replace("a", "\uff41", 50), "4417 " * 20_000, "Maria Gonzalez, " * 5_000,
                 " ".join(a.value for a in atoms[:6]) * 300):
        found = old.scan_text(text)
        assert new.scan_text(text) == found
    assert old.scan_text(export)  # (the export names atoms of this policy)


def _constructed(value: str) -> PrivateAtom:
    """An atom that skips validation (``PrivateAtom`` rejects lone surrogates): the key automaton
    must still hold whatever key reaches it."""
    return PrivateAtom.model_construct(id="odd", type="person_name", value=value, aliases=[], masked=[],
                                       variants=[], severity=1.0)


def test_lone_surrogates_in_keys_and_texts() -> None:
    atoms = [_constructed("Zo\ud800e Smith"), *_EXTRA]
    new, old = Detector(atoms), old_detector(atoms)
    for text in ("hi Zo\ud800e Smith", "zo\ud800esmith \ud801", "Zo\U0010f800e Smith",
                 "Zo\U0010f000e Smith \ud800", "Maria Gonzalez \udfff Zo\ud800e Smith"):
        _same(text, new, old)
    assert [f.atom_id for f in new.scan_text("hi Zo\ud800e Smith")] == ["odd"]
    assert new.scan_text("Zo\U0010f800e Smith") == []  # a stand-in is not the surrogate


def test_a_key_the_library_cannot_read_fails_the_build() -> None:
    never = mock.patch.object(_keys, "_SURROGATE", mock.Mock(search=lambda key: None))
    for keys in (["abc", "x\ud800", "bcd"], ["abc", "bcd", "x\ud800"]):
        with never, pytest.raises(ValueError, match="stopped reading") as raised:
            KeyAutomaton(keys, iter([(k, i) for i, k in enumerate(keys)]))
        assert "\ud800" not in str(raised.value)


def test_a_detector_pickles_by_rebuilding() -> None:
    for det in (Detector(_EXTRA), Detector(_EXTRA, fuzzy=False, fuzzy_threshold=90.0, semantic=False)):
        copy = pickle.loads(pickle.dumps(det))
        assert (copy.fuzzy, copy.fuzzy_threshold, copy.semantic, copy.atoms) == (
            det.fuzzy, det.fuzzy_threshold, det.semantic, det.atoms)
        _same_findings(copy, det)


def _same_findings(copy: Detector, det: Detector) -> None:
    for text in ("call Maria Gonzalez at 415-555-0199", "Gonzalez, Maria \ud800 T2 diabetes", "rx 88213"):
        assert copy.scan_text(text) == det.scan_text(text)
