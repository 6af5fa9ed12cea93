"""The atoms' words and word pairs a :class:`~tpguard.detect._fuzzy_index.FuzzyIndex` scans, and their
look-ups (:class:`PairIndex`, the fuzzy index's base class: the vocabulary and its one-deletion
table, the postings of the word pairs, a word's near words, a text pair's postings, a posting's
groups); which values are fuzzy at all (:func:`fuzzy_eligible`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import ahocorasick

from ._fuzzy_gate import PairGate
from ._fuzzy_words import words
from ._normalize import digits_of
from ._skeleton_key import skeleton_key

__all__ = ["PairIndex", "fuzzy_eligible"]

_LETTERS = re.compile(r"[^\W\d_]")
_DIGITS = re.compile(r"\d")

_MEMO_SIZE = 65536
_MIN_EDIT_WORD = 3


def fuzzy_eligible(key: str) -> bool:
    """Word-like normalized values: ≥ 8 characters, ≥ 6 letters, letters outnumber digits; one
    word only if it has ≥ 10 letters and no digit; never an identifier (every word with a digit)."""
    if len(key) < 8:
        return False
    letters = len(_LETTERS.findall(key))
    digits = len(_DIGITS.findall(key))
    if len(key) < 8 or letters < 6 or digits >= letters or skeleton_key(key) is not None:
        return False
    return len(words(key)) > 1 or (digits == 0 and letters >= 10)


#: the atoms under one word pair: (atom, index of the pair in the atom)
_Posting = Sequence[tuple[int, int]]
#: a posting's atoms grouped by (pair index in the atom, the atom's pairs): the group's atoms, the
#: digits of each one's key, and whether any of them has digits (else the filter keeps them all)
_Group = tuple[int, int, tuple[int, ...], tuple[str, ...], bool]
#: a posting's groups, its atoms; when every atom has digits, an automaton of their digits and the
#: words the union of its places' widest windows reaches before and after the pair's first word
#: (else ``None``)
_Grouped = tuple[tuple[_Group, ...], tuple[int, ...], "ahocorasick.Automaton | None", int, int]


def _deletions(word: str) -> list[str]:
    return [word[:i] + word[i + 1 :] for i in range(len(word))]


class PairIndex:
    """The atoms' words and word pairs (see :mod:`tpguard.detect._fuzzy_index`), added atom by atom
    (:meth:`add`), and their memoized look-ups."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.keys: dict[int, tuple[str, str, int]] = {}  # atom → (key, its digits, its pairs)
        self._pair_keys: dict[int, tuple[tuple[int, int], ...]] = {}
        self._needed: dict[int, int] | None = None
        self._vocab: dict[str, int] = {}
        self._deletes: dict[str, tuple[int, ...]] = {}  # tuples: not traversed by the GC
        #: the atoms under each pair: lists while atoms are added, tuples once :meth:`freeze` ran
        self._pairs: dict[tuple[int, int], _Posting] = {}
        #: words that are the first (``_leads``) or second (``_follows``) word of some pair
        self._leads: set[int] = set()
        self._follows: set[int] = set()
        self._singles: dict[int, list[int]] = {}
        self._near: dict[str, tuple[int, ...]] = {}
        self._pair_memo: dict[tuple[str, str], tuple[_Posting, ...]] = {}
        self._gate: PairGate | None = None  # built at the first scan after an add
        self._groups: dict[int, tuple[_Posting, _Grouped]] = {}

    def __bool__(self) -> bool:
        return bool(self.keys)

    def _word_id(self, word: str) -> int:
        wid = self._vocab.get(word)
        if wid is None:
            wid = self._vocab[word] = len(self._vocab)
            if word.isalpha() and len(word) >= _MIN_EDIT_WORD:
                deletes = self._deletes
                for variant in (word, *_deletions(word)):
                    got = deletes.get(variant, ())
                    deletes[variant] = (*got, wid) if wid not in got else got
        return wid

    def add(self, idx: int, key: str) -> None:
        ids = [self._word_id(w) for w in words(key)]
        self.keys[idx] = (key, digits_of(key), max(0, len(ids) - 1))
        if len(ids) == 1:
            self._singles.setdefault(ids[0], []).append(idx)
        for k in range(len(ids) - 1):
            got = self._pairs.get((ids[k], ids[k + 1]), ())
            posting = got if isinstance(got, list) else list(got)  # a tuple: an add after freeze
            posting.append((idx, k))
            self._pairs[(ids[k], ids[k + 1])] = posting
            self._leads.add(ids[k])
            self._follows.add(ids[k + 1])
        self._pair_keys[idx] = tuple((ids[k], ids[k + 1]) for k in range(len(ids) - 1))
        self._needed = None
        self._gate = None
        self._groups.clear()
        self._pair_memo.clear()  # a new pair may be among the postings of a remembered one

    def _within_one_edit(self, word: str) -> tuple[int, ...]:
        """Vocabulary words within one edit of ``word`` (memoized)."""
        near = self._near.get(word)
        if near is None:
            found: set[int] = set()
            if word.isalpha() and len(word) >= _MIN_EDIT_WORD:
                deletes = self._deletes
                for variant in (word, *_deletions(word)):
                    hit = deletes.get(variant)
                    if hit:
                        found.update(hit)
            if len(self._near) >= _MEMO_SIZE:
                self._near.clear()
            near = self._near[word] = tuple(found)
        return near

    def _pair_postings(self, first: str, second: str) -> tuple[_Posting, ...]:
        """The postings of the indexed pairs two adjacent text words stand for, as written or within
        one edit, memoized per index by the two words (a text that repeats a pair looks it up
        once): only ``first`` as written when ``second`` is not a vocabulary word (then ``first``
        must start some pair), and the other way round; a pair as written costs one look-up."""
        memo = self._pair_memo
        got = memo.get((first, second))
        if got is not None:
            return got
        pairs, get, near = self._pairs, self._vocab.get, self._within_one_edit
        a, b = get(first), get(second)
        xs: tuple[int, ...] = ()
        ys: tuple[int, ...] = ()
        if b is None:
            if a is not None and a in self._leads:
                xs, ys = (a,), near(second)
        elif a is None:
            if b in self._follows:
                xs, ys = near(first), (b,)
        elif (a, b) in pairs:
            got = (pairs[(a, b)],)
        else:
            xs, ys = (a, *near(first)), (b, *near(second))
        if got is None:
            got = tuple(posting for x in xs for y in ys if (posting := pairs.get((x, y))))
        if len(memo) >= _MEMO_SIZE:
            memo.clear()
        memo[(first, second)] = got
        return got

    def _grouped(self, posting: _Posting) -> _Grouped:
        """A posting's atoms grouped by where the pair sits in them (they share a place and its
        window), memoized per posting until the next :meth:`add`; and the posting's prefilter
        (:meth:`_place`): a group's widest window, placed by a pair at word ``i``, runs from word
        ``max(0, i - k - 1)`` up to word ``i - k + npairs + 2`` (excluded)."""
        got = self._groups.get(id(posting))
        if got is not None and got[0] is posting:
            return got[1]
        groups: dict[tuple[int, int], tuple[list[int], list[str]]] = {}
        for idx, k in posting:
            _, key_digits, npairs = self.keys[idx]
            atoms, digits = groups.setdefault((k, npairs), ([], []))
            atoms.append(idx)
            digits.append(key_digits)
        out = tuple((k, n, tuple(a), tuple(d), any(d)) for (k, n), (a, d) in groups.items())
        grouped: _Grouped = (out, (), None, 0, 0)
        if all(all(g[3]) for g in out):  # every key has digits (else some atom is always kept)
            finder = ahocorasick.Automaton()
            for d in {d for g in out for d in g[3]}:
                finder.add_word(d, d)
            finder.make_automaton()
            grouped = (out, tuple(idx for idx, _ in posting), finder, max(k + 1 for k, *_ in out),
                       max(n - k + 2 for k, n, *_ in out))
        self._groups[id(posting)] = (posting, grouped)
        return grouped
