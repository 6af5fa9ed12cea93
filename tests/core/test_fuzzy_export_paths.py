"""The fuzzy pass's cheaper paths for a long text at a large policy (issue 33, item 3) give the old
code's findings: the posting-wide digit prefilter of ``FuzzyIndex._place`` (one Aho-Corasick pass
over the digits of the union of a posting's windows), dropped places kept only for atoms with
known occurrences, the direct pair look-ups reading the pair memo inline, the pair gate of a text made
mostly of vocabulary words, only the places with enough pair hits aligned (``_verify``), and
``digits_of`` of an ASCII text by ``bytes.translate``.

The reference below is the code these replaced (``tpguard/detect/_fuzzy_index.py`` and
``tpguard/detect/_normalize.py`` at fdfc457), kept verbatim but for names."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Container
from itertools import compress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from tpguard import PrivateAtom
from tpguard.detect import _fuzzy_index as fuzzy_index
from tpguard.detect import _fuzzy_words as fuzzy_words
from tpguard.detect._fuzzy_gate import PairGate
from tpguard.detect._fuzzy_index import FuzzyIndex
from tpguard.detect._normalize import digits_of
from tpguard.detect.detector import Detector

_NON_DIGIT = re.compile(r"\D")


def _old_digits_of(s: str) -> str:
    d = _NON_DIGIT.sub("", s)
    return d if d.isascii() else "".join(str(unicodedata.digit(c)) for c in d)


def _old_pair_hits(self: FuzzyIndex, words: list[str], at: list[int], hits: dict, doomed: list,
                   known: object = None) -> None:
    postings = self._pair_postings
    ctx = (hits, {}, doomed)
    last = len(words) - 1
    prev = -2
    for p in at:
        for i in ((p - 1, p) if p > 0 and p - 1 != prev else (p,)):
            if i < last:
                for posting in postings(words[i], words[i + 1]):
                    _old_place(self, words, posting, i, ctx)
        prev = p


def _old_place(self: FuzzyIndex, words: list[str], posting: tuple, i: int, ctx: tuple) -> None:
    if len(posting) > fuzzy_index._MAX_POSTING:
        return
    hits = ctx[0]
    if len(posting) < fuzzy_index._DIGIT_FILTER:
        for idx, k in posting:
            hits.setdefault((idx, i - k), set()).add(k)
        return
    digits, doomed = ctx[1], ctx[2]
    groups: dict[tuple[int, int], tuple[list[int], list[str]]] = {}
    for idx, k in posting:
        _, key_digits, npairs = self.keys[idx]
        atoms, ds = groups.setdefault((k, npairs), ([], []))
        atoms.append(idx)
        ds.append(key_digits)
    for (k, npairs), (atom_list, key_digits) in groups.items():
        atoms = tuple(atom_list)
        first = i - k
        around = digits.get((first, npairs))
        if around is None:
            lo = max(0, first - 1)
            around = digits[(first, npairs)] = _old_digits_of(" ".join(words[lo : max(lo + 1, first + npairs + 2)]))
        keep = list(map(around.__contains__, key_digits))
        kept = atoms
        if not all(keep):
            doomed.append((atoms, keep, first))
            kept = tuple(compress(atoms, keep))
        for idx in kept:
            hits.setdefault((idx, first), set()).add(k)


def _old_verify(self: FuzzyIndex, s: str, spaced: str, ws: list[str], hits: dict, emit: Callable,
                covered: Container) -> None:
    last = len(ws) - 1
    keys = self.keys
    reach = min(last, max(first + keys[idx][2] for idx, first in hits) + 1)
    starts = fuzzy_index._first_starts(spaced, ws, reach + 1) if reach < fuzzy_index._FIND_STARTS \
        else fuzzy_index._word_starts(spaced)
    needed = self._pairs_needed()
    outcomes: dict = {}
    state = ({}, {} if fuzzy_index._DIGITS.search(s) else _OLD_NO_DIGITS, {})
    for (idx, first), ks in hits.items():
        if len(ks) < needed.get(idx, 1) or (covered and (idx, starts[first]) in covered):
            continue
        npairs = self.keys[idx][2]
        z = min(last, first + npairs)
        a_start, a_end = starts[first], starts[z] + len(ws[z])
        score = _old_aligned(self, idx, s[a_start:a_end], state)
        if score:
            emit(idx, a_start, a_end, score)
            continue
        lo = first - 1 if first > 0 else 0
        hi = min(last, first + npairs + 1)
        base = starts[lo]
        memo = (idx, s[base : starts[hi] + len(ws[hi])], first - lo, hi - first)
        if memo in outcomes:
            got = outcomes[memo]
        else:
            got = outcomes[memo] = _old_align(self, idx, first, s, ws, starts, base, state, last)
        if got is not None:
            emit(idx, base + got[0], base + got[1], got[2])


def _old_aligned(self: FuzzyIndex, idx: int, span: str, state: tuple) -> float:
    """The score of the aligned words' text (0 when under the threshold, too long or short, or
    its digits differ): the first window ``_old_align`` tries, memoized by text."""
    key, key_digits, _ = self.keys[idx]
    _, digits, scores = state
    score = scores.get((idx, span))
    if score is None:
        n_key, n_span = len(key), len(span)
        got = digits.get(span)
        if got is None:
            got = digits[span] = digits_of(span)
        if got != key_digits or 2 * min(n_key, n_span) < self.threshold / 100.0 * (n_key + n_span):
            score = 0.0
        else:
            score = fuzz.ratio(key, span, score_cutoff=self.threshold)
        scores[(idx, span)] = score
    return score / 100.0


def _old_align(self: FuzzyIndex, idx: int, first: int, s: str, ws: list[str], starts: list[int], base: int,
               state: tuple, last: int) -> tuple[int, int, float] | None:
    """The best of a place's windows — the aligned words, then one word more at either end (an
    inserted middle initial) — as ``(start - base, end - base, score)``, or ``None``. ``last``
    is the index of the text's last word (``starts`` may stop at the widest window's)."""
    key, key_digits, npairs = self.keys[idx]
    places, digits, scores = state
    # Candidates of one place share its windows (24 streets named "David Wells" differ only by
    # their number): each place's windows, their text and digits are computed once, and a
    # candidate whose digits none of them has is dropped with one set lookup.
    place = places.get((first, npairs))
    if place is None:
        wins = []
        for a, z in ((first, first + npairs), (first, first + npairs + 1), (first - 1, first + npairs)):
            z = max(0, min(last, z))  # the last word of the window
            start, end = starts[max(0, a)], starts[z] + len(ws[z])
            text = s[start:end]
            got = digits.get(text)
            if got is None:
                got = digits[text] = digits_of(text)
            wins.append((start, end, text, got))
        place = places[(first, npairs)] = (wins, {w[3] for w in wins})
    if key_digits not in place[1]:
        return None  # digits must agree
    # ratio = 2·matches / (len(key) + len(span)) ≤ 2·min / sum: spans whose length alone keeps
    # them under the threshold are not aligned (most candidates of a many-atom index).
    reach = self.threshold / 100.0
    n_key = len(key)
    for start, end, span, span_digits in place[0]:
        n_span = end - start
        if 2 * min(n_key, n_span) < reach * (n_key + n_span) or span_digits != key_digits:
            continue  # too long or short to reach the threshold, or other digits
        score = scores.get((idx, span))
        if score is None:
            score = scores[(idx, span)] = fuzz.ratio(key, span, score_cutoff=self.threshold)
        if score:
            return start - base, end - base, score / 100.0
    return None


class _OldNoDigits(dict[str, str]):
    """The digits of every window of a text without digits: ``""``, no look-up stored."""

    def get(self, key: str, default: str | None = None) -> str:  # type: ignore[override]
        return ""


_OLD_NO_DIGITS = _OldNoDigits()


# Postings of many atoms that differ by their numbers (the digit filter and its prefilter), a
# posting mixing them with an atom without digits (no prefilter), names and e-mail addresses.
_ATOMS = [
    *(PrivateAtom(id=f"dw{n}", type="street_address", value=f"{n} David Wells Road") for n in (17, 117, 1170, 23, 8905, 9)),
    *(PrivateAtom(id=f"og{n}", type="street_address", value=f"{n} Oak Grove Lane") for n in (12, 112, 5, 905, 89)),
    *(PrivateAtom(id=f"oga{n}", type="street_address", value=f"{n} Oak Grove Lane Apt. 3") for n in (12, 40)),
    PrivateAtom(id="name-dw", type="person_name", value="David Wells Jordan"),
    PrivateAtom(id="name-mg", type="person_name", value="Maria Gonzalez"),
    PrivateAtom(id="mail-mg", type="email", value="maria.gonzalez12@gmail.com"),
    PrivateAtom(id="mail-jb", type="email", value="john.baker7@gmail.com"),
]
_WORDS = st.sampled_from([
    "17", "117", "1170", "23", "8905", "89", "05", "9", "12", "112", "5", "905", "40", "3", "7", "4",
    "David", "Davd", "Wells", "Wels", "Road", "Rd", "Oak", "Oka", "Grove", "Grov", "Lane", "Apt.",
    "Jordan", "Maria", "Mria", "Gonzalez", "Gonzales", "maria.gonzalez12@gmail.com",
    "maria.gonzalez@gmail.com", "john.baker7@gmail.com", "john.baker@gmail.com", "gmail.com",
    "see", "ticket", ",", "\n", "and", "at",
])


_VALUES = [a.value for a in _ATOMS]


@st.composite
def _near_values(draw: st.DrawFn) -> str:
    """An atom's value, maybe with one letter dropped or changed and its number changed: the near
    misses the digit filter and its prefilter decide on."""
    value = draw(st.sampled_from(_VALUES))
    words = value.split(" ")
    if draw(st.booleans()):
        j = draw(st.integers(0, len(words) - 1))
        w = words[j]
        if len(w) > 3 and w.isalpha():
            k = draw(st.integers(0, len(w) - 1))
            words[j] = w[:k] + draw(st.sampled_from(["", "e", "x"])) + w[k + 1 :]
    if draw(st.booleans()):
        words = [draw(st.sampled_from(["4", "17", "1", "905", "3", "89 05"])) if w.isdigit() else w for w in words]
    return " ".join(words)


def _findings(detector: Detector, text: str) -> list[tuple]:
    return sorted((f.atom_id, f.method, f.start, f.end, round(f.score, 9)) for f in detector.scan_text(text))


def _reference(text: str) -> list[tuple]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(FuzzyIndex, "_pair_hits", _old_pair_hits)
        mp.setattr(FuzzyIndex, "_verify", _old_verify)
        return _findings(Detector(_ATOMS), text)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=40))
def test_the_fuzzy_pass_finds_what_the_old_code_found(words: list[str]) -> None:
    text = " ".join(words)
    expected = _reference(text)
    assert _findings(Detector(_ATOMS), text) == expected  # the direct look-ups (a small policy)
    with pytest.MonkeyPatch.context() as mp:  # the gate, dense or not by the text's words
        mp.setattr(fuzzy_index, "_GATE_FROM", 0)
        mp.setattr(fuzzy_index, "_GATE_VOCAB", 0)
        assert _findings(Detector(_ATOMS), text) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_near_values(), _WORDS), min_size=1, max_size=12),
       st.sampled_from([", ", " ", "\n", "; "]))
def test_near_misses_of_the_values_are_found_as_the_old_code_found_them(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    expected = _reference(text)
    assert _findings(Detector(_ATOMS), text) == expected
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fuzzy_index, "_GATE_FROM", 0)
        mp.setattr(fuzzy_index, "_GATE_VOCAB", 0)
        assert _findings(Detector(_ATOMS), text) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_near_values(), _WORDS), min_size=1, max_size=12),
       st.sets(st.integers(0, len(_ATOMS) - 1), max_size=6))
def test_the_places_dropped_for_their_digits_are_kept_for_every_known_atom(parts: list[str], known: set[int]) -> None:
    # the known-occurrence rule counts the dropped places of the atoms with known occurrences:
    # the new code keeps exactly the old code's for those (and may forget the others)
    index = Detector(_ATOMS)._fuzzy
    words = fuzzy_words.words(" ".join(parts).lower())
    at = [i for i, w in enumerate(words) if w in index._vocab]
    counts = dict.fromkeys(known, 1)
    old: tuple[dict, list] = ({}, [])
    new: tuple[dict, list] = ({}, [])
    _old_pair_hits(index, words, at, *old)
    index._pair_hits(words, at, *new, counts)

    def dropped(doomed: list) -> set[tuple[int, int]]:
        return {(idx, first) for atoms, keep, first in doomed
                for idx, kept in zip(atoms, keep, strict=True) if not kept and idx in known}

    # the new code keeps a place's pair indices as a bit mask, the old one as a set
    assert new[0] == {place: sum(1 << k for k in ks) for place, ks in old[0].items()}
    assert dropped(new[1]) == dropped(old[1])


def test_a_street_beside_other_numbers_is_found_and_counted_as_the_old_code_did() -> None:
    # the exact street once (a known occurrence), a typo'd one, and the same street beside numbers
    # none of its atoms has: the dropped places still count for the known atom
    text = ("ship to 117 David Wells Road, or 117 Davd Wells Road; not 4 David Wells Road, "
            "nor 89 05 David Wells Road, 112 Oak Grove Lane Apt. 3, 7 Oak Grove Lane")
    found = _findings(Detector(_ATOMS), text)
    assert found == _reference(text)
    assert any(f[:2] == ("dw117", "fuzzy") and text[f[2] : f[3]] == "117 Davd Wells Road" for f in found)


def test_a_mostly_vocabulary_text_opens_the_same_pairs_either_way() -> None:
    index = Detector(_ATOMS)._fuzzy
    words = "17 david wells road 23 oak grove lane maria gonzales davd wells rd see".split()
    at = [i for i, w in enumerate(words) if w in index._vocab]
    assert 2 * len(at) >= len(words)  # the dense path
    gate = PairGate(index._pairs, index._vocab, index._within_one_edit)
    opened = list(gate.open_pairs(words, at))
    assert opened == [i for i in range(len(words) - 1) if index._pair_postings(words[i], words[i + 1])]
    sparse = words + ["see"] * len(words)  # the same pairs among many words outside the vocabulary
    assert list(gate.open_pairs(sparse, at)) == opened


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789 abc-.\u0663\uff14\u00b2\u00e9"), max_size=30))
def test_digits_of_is_the_regex_pass(s: str) -> None:
    assert digits_of(s) == _old_digits_of(s)
