"""Fuzzy candidates from a word index whose lookup cost does not grow with the atom count.

Eligibility is decided by the *value's shape* (:func:`fuzzy_eligible`): word-like values where
letters dominate — names, conditions, street addresses, e-mail addresses. Identifiers (every word
holding a digit), numbers and short values are never fuzzy, whatever the atom's type is called.

Index (built in O(total key length)):

* a vocabulary of atom words, and a symmetric-deletion table (SymSpell, one deletion) over its
  alphabetic words of ≥ 3 letters: a text word finds every vocabulary word within one edit
  (substitution, insertion, deletion, transposition) with ``len(word) + 1`` dictionary look-ups;
* multi-word atoms under each adjacent *pair* of their words; single-word atoms under their word.

Lookup for a text: its words are looked up exactly; each adjacent pair of text words of which one
is a vocabulary word is looked up with the other word as written or within one edit. A pair hit
places a candidate occurrence (atom, first text word); an occurrence with at least
all its pairs but one present (pairs shared by more than
``_MAX_POSTING`` atoms, like ``gmail com``, are not counted) is verified with rapidfuzz on exactly those text words.
Every occurrence is verified, so a text with the exact value and a typo'd one yields both, except
where the value itself occurs (the caller's ``covered``: nothing found there would be kept). Per-word
edit look-ups are memoized per index (prose repeats its words), and at a large index the pairs pass
a gate in C first (:mod:`tpguard.detect._fuzzy_gate`), so the cost per text word is a few dictionary
look-ups. Not yet flat in atoms on text made of the atoms' own words: on a 1 MB customer export whose
names, streets and domains are the policy's, ``check_result`` costs ~3.3x at 100k atoms what it
costs at 10, and ~2.4x with 99,990 atoms that share the export's words but never occur in it
(issue 33, docs/perf.md "perf-fuzzy": what is left is gating ~170k word pairs in C, ~14k street
places dropped by their digits one by one, and ~4,700 alignments).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from itertools import compress

from rapidfuzz import fuzz

from ._fuzzy_gate import PairGate
from ._fuzzy_words import _first_starts, _split, _word_starts
from ._normalize import digits_of
from ._pair_index import _DIGITS, PairIndex, _Group, _Posting

__all__ = ["FuzzyIndex"]

#: a scan whose candidates reach past this many words computes every word's offset in C
_FIND_STARTS = 24
#: A word pair shared by more atoms than this (``gmail com``) places no candidates: it says
#: little about which atom is meant, and iterating it would make lookups grow with the atoms.
_MAX_POSTING = 32
#: texts with at least this many vocabulary words pass their pairs through the gate
#: (:mod:`tpguard.detect._fuzzy_gate`); fewer are looked up one by one (the same pairs, found cheaper)
_GATE_FROM = 32
#: ... and only for an index of at least this many words: on a 1 MB export the gate costs 1.6x the
#: direct look-ups at 17 words, 1.07x at 1k, 0.84x at 5.5k (measured with a script outside the repo)
_GATE_VOCAB = 2048
#: postings of at least this many atoms are filtered by digits before alignment (for one or two
#: atoms the filter costs more than the alignment it could save)
_DIGIT_FILTER = 4

#: places a posting dropped for their digits: (its atoms, which of them were kept, first word)
_Doomed = list[tuple[tuple[int, ...], list[bool], int]]
#: candidate places (atom, first text word) → the pair indices of the atom they hit, as a bit mask
#: (bit ``k``: pair ``k``; an int, not a set: no allocation per pair hit)
_Hits = dict[tuple[int, int], int]
#: one scan's state: candidate places → pair indices hit, window digits by (first word, pairs),
#: places dropped for their digits (only those of atoms in the last item, ``known``)
_Scan = tuple[_Hits, dict[tuple[int, int], str], _Doomed, Mapping[int, int]]


class FuzzyIndex(PairIndex):
    """Word-pair index of a detector's fuzzy-eligible atoms (see the module docstring)."""

    def freeze(self) -> None:
        """The postings as tuples of ints, which the garbage collector stops tracking (a 100k-atom
        index's 80k lists were traversed by every full collection of the process), and the pair
        gate; call once the atoms are added (an :meth:`add` after it still works: the gate is
        rebuilt by the next scan)."""
        pairs = self._pairs
        for pair, posting in pairs.items():
            pairs[pair] = tuple(posting)
        self._pair_memo.clear()
        self._groups.clear()
        # built here, with the index, not by the first scan (a 100k-atom gate takes ~0.1 s)
        big = pairs and len(self._vocab) >= _GATE_VOCAB  # a small index never uses it (_pair_hits)
        self._gate = self._new_gate() if big else None

    def _new_gate(self) -> PairGate:
        """The gate of the pairs whose posting places candidates (at most ``_MAX_POSTING`` atoms):
        a pair only larger postings hold (``yahoo com``, ``gmail com``: one a line of a customer
        export, 14k of the 33k pairs the gate let through on the 1 MB export at 100k atoms) cost a
        look-up and a ``_place`` call each to place nothing."""
        pairs = self._pairs
        return PairGate([p for p, posting in pairs.items() if len(posting) <= _MAX_POSTING], self._vocab,
                        self._within_one_edit)

    def _pairs_needed(self) -> dict[int, int]:
        """Pair hits an occurrence needs: all its usable pairs but one (two adjacent typos)."""
        needed = self._needed
        if needed is None:
            pairs = self._pairs
            needed = {idx: max(1, sum(len(pairs[p]) <= _MAX_POSTING for p in keys) - 1)
                      for idx, keys in self._pair_keys.items()}
            self._needed = needed
        return needed

    def scan(self, s: str, emit: Callable[[int, int, int, float], None],
             known: Mapping[int, int] | None = None, covered: Container[tuple[int, int]] = (), *,
             wanted: Container[int] | None = None) -> None:
        """Call ``emit(idx, norm_start, norm_end, score)`` for every fuzzy occurrence in ``s``.

        ``wanted``: when given, only the atoms it holds are aligned and emitted (a caller that
        needs a few atoms' occurrences, e.g. a second scan of a redacted text); each of them is
        found exactly as without it — the rules below are per atom.

        ``known`` counts the occurrences of each atom's *value* the exact keys already found
        (each is one candidate place here; an alias or a swapped name places none, so it must not
        count): an atom with no more candidate places than that has nothing left to find, so its
        candidates are not aligned — the common case of a name written correctly costs no
        alignment. One more place than value occurrences, and every place of that atom is
        aligned, except the places ``covered`` names: ``(atom, offset in s)`` of the value's
        exact occurrences. Every window of such a place holds its first word, so whatever it
        found would overlap the exact match of the same atom (which the caller keeps instead): a
        name written once correctly and once inside an e-mail address aligns the e-mail only."""
        spaced, ws = _split(s)
        vocab = self._vocab
        hits: _Hits = {}
        doomed: _Doomed = []  # places dropped for their digits (still places)
        if len(ws) > 1:
            # indices of the text words that are atom words, found in C (a few per text)
            at = list(compress(range(len(ws)), map(vocab.__contains__, ws)))
            if at:
                self._pair_hits(ws, at, hits, doomed, known)
        if self._singles:
            near = self._within_one_edit
            for i, w in enumerate(ws):
                if len(w) >= 9:
                    for wid in near(w):
                        for idx in self._singles.get(wid, ()):
                            hits[(idx, i)] = hits.get((idx, i), 0) | 1
        if hits and wanted is not None:
            hits = {place: ks for place, ks in hits.items() if place[0] in wanted}
        if hits and known:
            hits = _unknown(hits, doomed, known)
        if hits:
            self._verify(s, spaced, ws, hits, emit, covered)

    def _pair_hits(
        self, words: list[str], at: list[int], hits: _Hits, doomed: _Doomed,
        known: Mapping[int, int] | None = None,
    ) -> None:
        """Adjacent text words, one of them a vocabulary word (``at``: their indices), the other
        as written or within one edit: each indexed pair places an occurrence (atom, first text
        word). Pairs without a vocabulary word are never looked at; the others pass
        :class:`~tpguard.detect._fuzzy_gate.PairGate` first (O(those pairs) in C), and only a pair that
        finds a posting costs a look-up in Python — a name word beside the next word of the prose,
        or a first and a last name no atom has together, cost none. A text with only a few
        vocabulary words (a note), or an index with a small vocabulary (whose pairs the memo of
        :meth:`_pair_postings` mostly answers), looks its pairs up directly: the gate costs more.
        ``known``: the atoms with known value occurrences, whose places dropped for their digits
        are kept in ``doomed`` (:meth:`_place`)."""
        postings, place = self._pair_postings, self._place
        ctx: _Scan = (hits, {}, doomed, known or {})
        if len(at) < _GATE_FROM or len(self._vocab) < _GATE_VOCAB:
            last = len(words) - 1
            memo = self._pair_memo.get  # a small policy's few words recur on every line: ``com``
            prev = -2
            for p in at:
                # (p - 1, p) unless p - 1 is a vocabulary word (then it was (prev, prev + 1)); (p, p + 1)
                for i in ((p - 1, p) if p > 0 and p - 1 != prev else (p,)):
                    if i < last:
                        pair = (words[i], words[i + 1])
                        got = memo(pair)
                        for posting in postings(*pair) if got is None else got:
                            if len(posting) < _DIGIT_FILTER:  # _place's first case, inline
                                for idx, k in posting:
                                    hits[(idx, i - k)] = hits.get((idx, i - k), 0) | 1 << k
                            else:
                                place(words, posting, i, ctx)
                prev = p
            return
        gate = self._gate
        if gate is None:
            gate = self._gate = self._new_gate()
        # only the pairs whose look-up finds a posting, decided for the whole text in C (a large
        # policy's vocabulary holds most words of a customer export: most pairs find nothing)
        for i in gate.open_pairs(words, at):
            for posting in postings(words[i], words[i + 1]):
                place(words, posting, i, ctx)

    def _place(self, words: list[str], posting: _Posting, i: int, ctx: _Scan) -> None:
        """Each atom of a pair's posting placed at its first word (``i - k``); a posting shared by
        more than ``_MAX_POSTING`` atoms places none. In a posting of several atoms, an atom whose
        digits do not occur among the digits of the place's widest window (one word more at
        either end) is not placed: it could not pass :meth:`_verify`'s digit rule (24 streets
        named "David Wells" differ by their number: 23 are dropped here, by one Aho-Corasick pass
        over the digits of the union of the posting's windows, then one ``map`` of substring tests
        in C per group of the posting when that pass finds one, :meth:`_grouped`). A dropped place still
        counts as a place for the known-occurrence rule of :meth:`scan`, which counts the places
        of the atoms in ``known`` only: the dropped places are kept (``doomed``) for a group
        holding one of those, and forgotten for any other (most of them, at a large policy: the
        street pair every line of a customer export hits)."""
        if len(posting) > _MAX_POSTING:
            return
        hits = ctx[0]
        if len(posting) < _DIGIT_FILTER:
            for idx, k in posting:
                hits[(idx, i - k)] = hits.get((idx, i - k), 0) | 1 << k
            return
        groups, all_atoms, finder, back, ahead = self._grouped(posting)
        if finder is not None:
            # One test for the whole posting first: the union of its groups' widest windows holds
            # each of them (its digits hold theirs), so a key whose digits it lacks is dropped by
            # its own group's window too; whether it holds any key's digits is one Aho-Corasick
            # pass over a few digits (a substring test per key cost 2.5 µs for a street's two
            # dozen atoms). At a large policy most postings end here: a customer export's street
            # pair, beside a number none of the street's atoms has.
            lo = i - back
            around = digits_of(" ".join(words[lo if lo > 0 else 0 : i + ahead]))
            if next(finder.iter(around), None) is None:
                known = ctx[3]
                if known and not known.keys().isdisjoint(all_atoms):
                    ctx[2].extend((g[2], [False] * len(g[2]), i - g[0]) for g in groups)
                return
        self._place_groups(words, groups, i, ctx)

    @staticmethod
    def _place_groups(words: list[str], groups: tuple[_Group, ...], i: int, ctx: _Scan) -> None:
        """:meth:`_place` of a posting's groups, each by the digits of its own widest window."""
        hits, digits, doomed, known = ctx
        for k, npairs, atoms, key_digits, filtered in groups:
            first = i - k
            kept: Iterable[int] = atoms
            if filtered:  # some atom of the group has digits ("" is in every window)
                around = digits.get((first, npairs))
                if around is None:  # every window _verify aligns lies inside this one
                    lo = max(0, first - 1)
                    around = digits[(first, npairs)] = digits_of(" ".join(words[lo : max(lo + 1, first + npairs + 2)]))
                keep = list(map(around.__contains__, key_digits))
                if not all(keep):
                    if known and not known.keys().isdisjoint(atoms):
                        doomed.append((atoms, keep, first))
                    if not any(keep):
                        continue
                    kept = compress(atoms, keep)
            bit = 1 << k
            for idx in kept:
                hits[(idx, first)] = hits.get((idx, first), 0) | bit

    def _verify(self, s: str, spaced: str, ws: list[str], hits: _Hits,
                emit: Callable[[int, int, int, float], None], covered: Container[tuple[int, int]]) -> None:
        """Align every candidate place with rapidfuzz: its windows in order — the aligned words,
        the aligned words and the next word, the previous word and the aligned words (an inserted
        middle initial) — the first to reach the threshold being the occurrence. A window is
        sliced only once its length can reach the threshold, and aligned only if its digits are
        the key's; each distinct (atom, window text) is scored once per scan (a digit pass and a
        ``fuzz.ratio``), and the wider windows' outcome once per distinct (atom, widest window,
        position) (:meth:`_wider`): a text that repeats a near miss (``Blue Shield Blue Shield
        …``), a swapped name or a few typos pays a slice and a look-up or two per further
        occurrence.

        (Until issue 33 the windows of a place, their texts and digits were memoized per place
        first, and the aligned words' digits per text: filling those memos cost more than it
        saved — a note's two places cost ~2x what they cost now, ``_verify`` on the 1 MB export
        at 100k absent atoms 95 against 61 ms.)"""
        last = len(ws) - 1
        keys = self.keys
        needed = self._pairs_needed()
        # only the places with enough pair hits are aligned (a small policy's e-mail address places
        # one on every line of an export by its domain pair alone: ~9,400 of them, 59 aligned)
        todo = [place for place, ks in hits.items() if ks.bit_count() >= needed.get(place[0], 1)]
        if not todo:
            return
        # the offsets of the words up to the widest window's last word and no further; a place
        # before the text's first word (a pair of the atom's middle at the text's start) reads
        # ``starts[-1]`` for its aligned words, so then the offsets reach as far as they did for
        # every place (the pre-issue-33 rule: the same windows, the same findings)
        widest = hits if min(first for _, first in todo) < 0 else todo
        reach = min(last, max(first + keys[idx][2] for idx, first in widest) + 1)
        starts = _first_starts(spaced, ws, reach + 1) if reach < _FIND_STARTS else _word_starts(spaced)
        cutoff = self.threshold
        least = cutoff / 100.0
        # a text without digits: every window's digits are "" (no digit pass per window)
        digits = digits_of if _DIGITS.search(s) else _no_digits
        scores: dict[tuple[int, str], float] = {}
        outcomes: dict[tuple[int, str, int, int], tuple[int, int, float] | None] = {}

        def score(idx: int, key: str, key_digits: str, w_start: int, w_end: int) -> float:
            """The window's score (0 under the threshold), once per distinct (atom, window text):
            0 when its length alone keeps it under the threshold (ratio = 2·matches / (len(key) +
            len(span)) ≤ 2·min / sum: most windows of a large index) or its digits differ."""
            n_key, n_span = len(key), w_end - w_start
            if 2 * min(n_key, n_span) < least * (n_key + n_span):
                return 0.0
            span = s[w_start:w_end]
            got = scores.get((idx, span))
            if got is None:
                got = scores[(idx, span)] = (fuzz.ratio(key, span, score_cutoff=cutoff)
                                             if digits(span) == key_digits else 0.0)
            return got

        for idx, first in todo:
            if covered and (idx, starts[first]) in covered:
                continue
            key, key_digits, npairs = keys[idx]
            # the aligned words first (for a place before the text: from ``starts[first]``, as
            # before): when they reach the threshold, the wider windows are never looked at (a
            # text of typo'd names, one after another, costs one slice and look-up a name)
            z = min(last, first + npairs)
            w_start, w_end = starts[first], starts[z] + len(ws[z])
            got = score(idx, key, key_digits, w_start, w_end)
            if got:
                emit(idx, w_start, w_end, got / 100.0)
                continue
            # then the wider windows, whose outcome depends only on the widest one's text and where
            # the place sits in it: computed once per distinct (atom, widest window, position), so
            # a text repeating a near miss (``Blue Shield Blue Shield …``) pays a slice and a look-up
            lo = first - 1 if first > 0 else 0
            hi = min(last, first + npairs + 1)
            base = starts[lo]
            memo = (idx, s[base : starts[hi] + len(ws[hi])], first - lo, hi - first)
            if memo in outcomes:
                found = outcomes[memo]
            else:
                found = outcomes[memo] = self._wider(idx, first, z, starts, ws, base, score)
            if found is not None:
                emit(idx, base + found[0], base + found[1], found[2])

    def _wider(self, idx: int, first: int, z: int, starts: list[int], ws: list[str], base: int,
               score: Callable[[int, str, str, int, int], float]) -> tuple[int, int, float] | None:
        """The first of a place's wider windows to reach the threshold, as ``(start - base, end -
        base, score)``, or ``None``: the aligned words and the next word, then the previous word
        and the aligned words (an inserted middle initial); for a place before the text's first
        word, the aligned words from word 0 first (:meth:`_verify` tried them from
        ``starts[first]``)."""
        key, key_digits, npairs = self.keys[idx]
        last = len(ws) - 1
        a = first if first > 0 else 0
        z1 = z if z > 0 else 0
        z2 = min(last, z1 + 1) if first + npairs >= 0 else 0
        end1 = starts[z1] + len(ws[z1])
        wins = ((starts[a], end1),) if first < 0 else ()
        for w_start, w_end in (*wins, (starts[a], starts[z2] + len(ws[z2])), (starts[a - 1 if a else 0], end1)):
            got = score(idx, key, key_digits, w_start, w_end)
            if got:
                return w_start - base, w_end - base, got / 100.0
        return None


def _unknown(hits: _Hits, doomed: _Doomed, known: Mapping[int, int]) -> _Hits:
    """``hits`` without the places of atoms that have no more places (kept or ``doomed``) than
    known value occurrences (:meth:`FuzzyIndex.scan`). Only the atoms with known occurrences are
    counted, and the dropped places only for them (one ``isdisjoint`` per dropped group)."""
    places: dict[int, int] = {}  # the places of each atom with known occurrences
    count, get = places.get, known.get
    for idx, _ in hits:
        if get(idx):
            places[idx] = count(idx, 0) + 1
    if not places:
        return hits
    if doomed:
        need = places.keys()
        dropped = {(idx, first) for atoms, keep, first in doomed if not need.isdisjoint(atoms)
                   for idx, kept in zip(atoms, keep, strict=True) if not kept and idx in need}
        for idx, _ in dropped:
            places[idx] += 1
    done = {idx for idx, n in places.items() if n <= known[idx]}
    return {k: v for k, v in hits.items() if k[0] not in done} if done else hits


def _no_digits(span: str) -> str:
    """The digits of a window of a text without digits."""
    return ""
