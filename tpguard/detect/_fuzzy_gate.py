"""Which adjacent text-word pairs can place a fuzzy candidate, decided in C for a whole text.

:class:`~tpguard.detect._fuzzy_index.FuzzyIndex` looks a pair of adjacent text words up as written or with
a word within one edit (its ``_pair_postings``). At a large policy nearly every word of a customer
export is a vocabulary word (its names, streets and domains are the atoms' own), so that look-up ran
once per word pair of the text in Python, most of them finding nothing (issue 33: 71 % of a 1 MB
check at 100k atoms). This gate answers "does this pair find anything?" for every pair at once:

* each text word gets two frozensets of *tagged* vocabulary word ids (memoized per word): as a
  first word, the second words of the indexed pairs it can start; as a second word, the words it
  can stand for (itself, those within one edit) — a handful;
* tags encode the look-up rules, so one ``isdisjoint`` per pair (a ``map`` in C, iterating the
  second word's handful) says exactly whether the look-up would find a posting — tag 0: both
  words are vocabulary words, each as written or within one edit; tag 1: the first as written,
  the second (not a vocabulary word) within one edit; tag 2: the first (not a vocabulary word)
  within one edit, the second as written.

Only the pairs that pass are looked up (in Python, as before). The index builds its gate from the
pairs whose posting places candidates (``FuzzyIndex._new_gate``: at most ``_MAX_POSTING`` atoms), so
``yahoo com`` on every line of an export is not opened to place nothing. Cost: O(words) in C per text plus
O(distinct new words × their pairs) to fill the memo; flat in atoms for a text whose pairs find
nothing. Memory: two sets per remembered word, cleared past ``_MEMO_WORDS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from itertools import chain, compress, islice
from operator import add, not_

__all__ = ["PairGate"]

_MEMO_WORDS = 8192
_NEXT = partial(add, 1)
_PREV = partial(add, -1)


class PairGate:
    """Built lazily from a fuzzy index's pairs; dropped (rebuilt) whenever a pair is added."""

    __slots__ = ("_ends", "_near", "_seconds", "_starts", "_vocab")

    def __init__(self, pairs: Iterable[tuple[int, int]], vocab: dict[str, int],
                 near: Callable[[str], tuple[int, ...]]) -> None:
        seconds: dict[int, list[int]] = {}
        for x, y in pairs:
            seconds.setdefault(x, []).append(y)
        # tuples: not traversed by the garbage collector's full collections
        self._seconds = {x: tuple(ys) for x, ys in seconds.items()}
        self._vocab, self._near = vocab, near
        self._starts: dict[str, frozenset[int]] = {}
        self._ends: dict[str, frozenset[int]] = {}

    def _sets(self, word: str) -> tuple[frozenset[int], frozenset[int]]:
        """The tagged second words ``word`` can start a pair towards, and the tagged words it can
        stand for as a second word (module docstring): ``4 * word id + tag``."""
        wid = self._vocab.get(word)
        near = self._near(word)
        seconds = self._seconds
        if wid is None:
            return (frozenset(4 * y + 2 for x in near for y in seconds.get(x, ())),
                    frozenset(4 * y + 1 for y in near))
        ids = (wid, *near)
        return (frozenset(chain((4 * y for x in ids for y in seconds.get(x, ())),
                                (4 * y + 1 for y in seconds.get(wid, ())))),
                frozenset((*(4 * y for y in ids), 4 * wid + 2)))

    def open_pairs(self, words: list[str], at: list[int]) -> Iterable[int]:
        """The first-word indices ``i`` of the pairs ``(words[i], words[i + 1])`` beside a
        vocabulary word (``at``: their indices) whose look-up finds a posting, in order.

        A text most of whose words are vocabulary words (a customer export at a large policy) is
        gated whole: every word's two sets, one ``isdisjoint`` per adjacent pair, all in C, with
        no list of the pairs beside a vocabulary word to build first (half the cost on a 1 MB
        export at 100k atoms). A pair of two words outside the vocabulary never opens (its first
        word's tags are 2, its second's 1), so the pairs opened are the same."""
        last = len(words) - 1
        if 2 * len(at) >= len(words):
            starts, ends = self._fill(set(words))
            return compress(range(last), map(not_, map(frozenset.isdisjoint, map(starts.__getitem__, words),
                                                        islice(map(ends.__getitem__, words), 1, None))))
        firsts = sorted({i for i in chain(at, map(_PREV, at)) if 0 <= i < last})
        if not firsts:
            return ()
        get = words.__getitem__
        lefts = list(map(get, firsts))
        rights = list(map(get, map(_NEXT, firsts)))
        starts, ends = self._fill({*lefts, *rights})
        return compress(firsts, map(not_, map(frozenset.isdisjoint, map(starts.__getitem__, lefts),
                                                  map(ends.__getitem__, rights))))

    def _fill(self, seen: set[str]) -> tuple[dict[str, frozenset[int]], dict[str, frozenset[int]]]:
        """The memos of start and end sets, holding every word of ``seen``."""
        # Thread-safe like the index's other memos: a full memo is replaced, not cleared (a scan
        # in another thread keeps reading the one it holds), and a word's end set is stored before
        # its start set, so a word found among the starts always has both.
        starts, ends = self._starts, self._ends
        new = seen.difference(starts)
        if new:
            if len(starts) + len(new) > _MEMO_WORDS:
                starts, ends = self._starts, self._ends = {}, {}
                new = seen
            for w in new:
                first, second = self._sets(w)
                ends[w] = second
                starts[w] = first
        return starts, ends
