"""The disclosure detector ``D(p_j, a_k)`` (ToolPrivacyBench, seed ``000_*`` §3.5, Appendix D.1).

Methods, cheapest first:

* ``exact`` / ``alias`` / ``semantic`` / ``masked`` — the atom's value, aliases, semantic variants and
  masked forms, found by one Aho–Corasick pass over the normalized text (so the cost of a scan
  barely depends on how many atoms are registered);
* ``normalized`` — the same keys matched only after normalization (:mod:`tpguard.detect._normalize`:
  percent-escapes and HTML entities decoded, NFKC, case-fold, invisible marks removed, whitespace
  collapsed, look-alike letters folded); a person-like name with its order swapped
  (``Gonzalez, Maria``); a multi-word key with its words run together (``MariaGonzalez``,
  ``BlueShield PPO``, ``hepatitisB``: :func:`~tpguard.detect._forms._joined`, more keys of the same automaton); numbers and identifiers compared on their skeleton under the grouping
  rule of :mod:`tpguard.detect._digits` (``+1 (415) 555-0199`` and ``+14155550199`` match
  ``415-555-0199``, ``RX88213`` matches ``RX-88213``, but ``14417`` and ``$44.17`` never match
  ``4417``);
* ``fuzzy`` — rapidfuzz on candidates from a word-pair index (:mod:`tpguard.detect._fuzzy_index`) for
  word-like values (names, conditions, addresses: decided by the value's shape), every occurrence,
  and only when the digits of the matched text equal the atom's (``type 1 diabetes`` is not
  ``type 2 diabetes``);
* ``pii`` — optional: unregistered PII found by Presidio (:mod:`tpguard.detect.presidio`).

Matches must sit on token boundaries: a key never matches inside a longer word or number.
Cost of ``scan_text``: O(n) in the text (one normalization, two automaton passes, a word pass),
flat in the number of atoms; construction is O(total length of the atoms' keys, at most 8× for
multi-word keys with their joined forms). Repeats cost no Python per occurrence where a text is made
of them (issue 28: a text of many hits of a few keys is matched over columns, :mod:`tpguard.detect._bulk`;
fuzzy outcomes are memoized per distinct window).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Container, Iterable
from functools import partial
from itertools import repeat
from operator import itemgetter, sub
from typing import Any

from . import _bulk
from ._forms import is_detectable
from ._indexes import (
    _ATOM_SHIFT,
    _COVERS,
    _ENTRY_FIELDS,
    _LEFT,
    _METHOD_SHIFT,
    _PLACES,
    _RIGHT,
    Indexes,
)
from ._normalize import normalize
from ._offset_map import Normalized
from ._walk import iter_leaves
from .findings import _PRIORITY, METHODS, Finding, Method, new_finding

__all__ = ["METHODS", "Detector", "Finding", "Method", "is_detectable", "iter_leaves"]

_NORMALIZED = _PRIORITY["normalized"]
_MANY = 16  # from this many counted hits, they are counted per distinct key in C
MEMO_LEN = 64  # texts up to this long are memoized per detector
_MEMO_SIZE = 4096
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


def _count(counted: Iterable[tuple[tuple[tuple[int, ...], tuple[int, ...]], int]], known: dict[int, int],
           placed: dict[int, int]) -> None:
    """Add ``times`` accepted hits of each key to the ``known``/``placed`` counts of its atoms."""
    for (covers, places), times in counted:
        for idx in covers:
            known[idx] = known.get(idx, 0) + times
        for idx in places:
            placed[idx] = placed.get(idx, 0) + times



class Detector(Indexes):
    """Finds registered private atoms in tool-call arguments.

    ``Detector(atoms).scan(arguments, free_text_slots={"note"})`` → list of :class:`Finding`.
    Build once per set of atoms (O(their keys' length)); ``scan`` and ``scan_text`` are
    thread-safe.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        """A pickled detector is rebuilt from its atoms and options (the key automaton, in Rust,
        does not pickle and keeps no copy of its keys; the memo is a cache)."""
        return (partial(Detector, fuzzy=self.fuzzy, fuzzy_threshold=self.fuzzy_threshold, semantic=self.semantic,
                        pii=self.pii), (self.atoms,))

    # -- scanning -----------------------------------------------------------------------------
    def scan(self, arguments: Any, free_text_slots: Collection[str] = ()) -> list[Finding]:
        """All findings in ``arguments`` (any nesting); a leaf is free text when its key or path
        is in ``free_text_slots``."""
        out: list[Finding] = []
        if type(arguments) is dict:  # the common flat call: skip the generic walker
            for k, v in arguments.items():
                if type(v) is str:
                    if v:
                        out.extend(self.scan_text(v, path=k, free_text=k in free_text_slots))
                    continue
                for path, key, text in iter_leaves(v, str(k), 1):
                    free = key in free_text_slots or path in free_text_slots
                    out.extend(self.scan_text(text, path=path, free_text=free))
            return out
        for path, key, text in iter_leaves(arguments):
            free = key in free_text_slots or path in free_text_slots
            out.extend(self.scan_text(text, path=path, free_text=free))
        return out

    def scan_text(self, text: str, *, path: str = "", free_text: bool = False,
                  norm: Normalized | None = None, wanted: Container[int] | None = None) -> list[Finding]:
        """Findings in one text; ``norm`` is ``normalize(text)`` if the caller already has it.
        Offsets index ``text``. O(len(text)), flat in the number of atoms.

        ``wanted`` (atom indices): when given, the fuzzy pass aligns only those atoms — the other
        atoms' fuzzy findings may be missing, every other finding is the same (a fuzzy finding
        never overlaps another finding of its atom, so none of them hides one). A caller that
        needs only some atoms' findings (redact's second scan: the atoms it may have to withhold)
        passes them. Ignored for a text the memo keeps (it stores full scans) and with a PII
        detector (a missing fuzzy finding would let a PII finding through in its place)."""
        if len(text) <= MEMO_LEN:  # short values (ids, statuses, dates) repeat across calls
            raw = self._memo.get(text)
            if raw is None:
                raw = self._match(text, norm)
                if len(self._memo) >= _MEMO_SIZE:
                    self._memo.clear()
                    self._clean.clear()
                self._memo[text] = raw
                if not raw:
                    self._clean.add(text)
        else:
            raw = self._match(text, norm, wanted if self.pii is None else None)
        findings = self._resolve(raw, path, free_text) if raw else []
        if self.pii is not None:
            findings.extend(self.pii.scan_text(text, path=path, free_text=free_text, known=findings))
        return findings

    @property
    def known_clean(self) -> Container[str]:
        """The texts scanned before that hold no atom of this detector (memo hits on short texts):
        ``text in known_clean`` is one set look-up, no call. Not being in it means *unknown*, not
        *dirty*."""
        return self._clean

    def scan_leaf(self, text: str, path: str, free_text: bool) -> list[Finding]:
        """:meth:`scan_text` with positional arguments: the guard's per-leaf call. A memo hit (a
        key or a short value seen before: most leaves of a call) costs one dict look-up."""
        if self.pii is None and len(text) <= MEMO_LEN:
            raw = self._memo.get(text)
            if raw is not None:
                return self._resolve(raw, path, free_text) if raw else []
        return self.scan_text(text, path=path, free_text=free_text)

    def _match(self, text: str, norm: Normalized | None,
               wanted: Container[int] | None = None) -> list[tuple[int, int, int, int, str, int, float]]:
        """Every match in ``text`` (fuzzy ones of the ``wanted`` atoms only, when given: see
        :meth:`scan_text`); entries sort natively: (atom, start, −length, priority, method, end,
        score)."""
        raw: list[tuple[int, int, int, int, str, int, float]] = []
        if norm is None:
            norm = normalize(text)
        known: dict[int, int] = {}  # exact occurrences the skeleton pass will hit again
        placed: dict[int, int] = {}  # occurrences of a value the fuzzy pass will place again
        covered: set[tuple[int, int]] = set()  # (atom, normalized start) of those occurrences
        self._match_keys(text, norm, raw, known, placed, covered)
        if self._skeleton:
            def emit(idx: int, method: str, start: int, end: int) -> None:
                o_start, o_end = norm.to_original(start, end)
                m = "normalized" if method == "exact" else method
                raw.append((idx, o_start, o_start - o_end, _PRIORITY[m], m, o_end, 1.0))

            self._skeleton.scan(norm, emit, known)
        if self._fuzzy and len(norm.text) >= 6:
            self._match_fuzzy(norm, raw, placed, covered, wanted)
        if len(raw) > 1:
            raw.sort()
        return raw

    def _match_keys(self, text: str, norm: Normalized, raw: list, known: dict[int, int],
                    placed: dict[int, int], covered: set[tuple[int, int]] | None = None) -> None:
        """Matches of the keys on token boundaries. Per atom, ``known`` counts the matches of its
        self-covering keys (:meth:`SkeletonIndex.scan`), ``placed`` those of its fuzzy value
        (:meth:`FuzzyIndex.scan`): each is a place the later pass finds again, and ``covered``
        holds where each of those starts in the normalized text (not filled on the bulk path,
        whose hits are counted in C: the count rule alone applies there). O(n + hits), a
        few dozen instructions a hit (a text of nothing but one atom has one every five characters)."""
        s = norm.text
        n = len(s)
        values = self._values
        to_original = None if norm.identity else norm.to_original
        automaton = self._automaton
        if automaton is None:
            return
        hits = automaton.matches(s)
        key_values = automaton.values
        if len(hits) >= _bulk.BULK and self._match_bulk(text, norm, hits, key_values, raw, known, placed):
            return
        general = self._key_general
        counted: list[Any] = []  # the counts of the accepted hits of general keys that count
        for number, start, end in hits:
            packed = key_values[number]
            if packed < 0:
                self._general_hit(text, norm, start, end, general[~packed], raw, counted, covered)
                continue
            if packed & _LEFT and start > 0 and s[start - 1].isalnum():
                continue
            if packed & _RIGHT and end < n and s[end].isalnum():
                continue
            o_start, o_end = (start, end) if to_original is None else to_original(start, end)
            atom = packed >> _ATOM_SHIFT
            method, priority = _ENTRY_FIELDS[packed >> _METHOD_SHIFT & 7]
            if method == "exact" and text[o_start:o_end] != values[atom]:
                method, priority = "normalized", _NORMALIZED
            raw.append((atom, o_start, o_start - o_end, priority, method, o_end, 1.0))
            if packed & _COVERS:
                known[atom] = known.get(atom, 0) + 1
            if packed & _PLACES:
                placed[atom] = placed.get(atom, 0) + 1
                if covered is not None:
                    covered.add((atom, start))
        if counted:  # per distinct value (in C when many)
            _count(Counter(counted).items() if len(counted) > _MANY else zip(counted, repeat(1)), known, placed)


    def _general_hit(self, text: str, norm: Normalized, start: int, end: int, value: tuple[Any, ...], raw: list,
                     counted: list[Any], covered: set[tuple[int, int]] | None) -> None:
        """:meth:`_match_keys` for one hit (``norm.text[start:end]``) of a key with a general
        value (several entries: a key two atoms share, a joined form that is another atom's key)."""
        s = norm.text
        _, left_word, right_word, entries, counts = value
        if left_word and start > 0 and s[start - 1].isalnum():
            return
        if right_word and end < len(s) and s[end].isalnum():
            return
        o_start, o_end = (start, end) if norm.identity else norm.to_original(start, end)
        values = self._values
        for atom, method, priority in entries:
            if method == "exact" and text[o_start:o_end] != values[atom]:
                method, priority = "normalized", _NORMALIZED
            raw.append((atom, o_start, o_start - o_end, priority, method, o_end, 1.0))
        if counts:
            counted.append(counts)
            if covered is not None:
                for atom in counts[1]:
                    covered.add((atom, start))

    def _match_bulk(self, text: str, norm: Normalized, hits: list[tuple[int, int, int]], key_values: array[int],
                    raw: list, known: dict[int, int], placed: dict[int, int]) -> bool:
        """:meth:`_match_keys` of a text repeating a few keys (≥ ``_bulk.BULK`` hits of at most
        ``_bulk.MAX_KEYS`` keys): the hits checked in C by :func:`_bulk.key_matches`, on the keys'
        values as tuples; False (nothing done) for hits of more keys."""
        distinct = set(map(_FIRST, hits))
        if len(distinct) > _bulk.MAX_KEYS:
            return False
        value = {number: self._key_value(key_values[number]) for number in distinct}
        many = None if norm.identity else norm.to_original_many
        ends = list(map(sub, map(_THIRD, hits), repeat(1)))  # (the last offset of each hit)
        got = _bulk.key_matches(text, norm.text, ends, list(map(value.__getitem__, map(_FIRST, hits))),
                                self._bulk_values if many is None else self._values,
                                many, ("normalized", _NORMALIZED), raw)
        if got is None:
            return False
        _count(got, known, placed)
        return True


    def _match_fuzzy(self, norm: Normalized, raw: list, placed: dict[int, int],
                     covered: set[tuple[int, int]], wanted: Container[int] | None = None) -> None:
        """Fuzzy occurrences not overlapping a stronger match of the same atom (a score of 100
        is the key itself, which the automaton already found). ``placed``: the occurrences of each
        atom's value the key automaton found — each is one of the fuzzy pass's places (an alias or
        a swapped name places none, so it must not count: a typo elsewhere would go unaligned);
        ``covered``: where they start — a place there is not aligned (whatever it found would
        overlap the exact match, and ``emit`` would drop it)."""
        found: dict[int, list[tuple[int, int]]] | None = None
        priority = _PRIORITY["fuzzy"]

        def emit(idx: int, start: int, end: int, score: float) -> None:
            nonlocal found
            if score >= 1.0:
                return
            o_start, o_end = norm.to_original(start, end)
            if found is None:
                found = {}
                for r in sorted(raw):
                    found.setdefault(r[0], []).append((r[1], r[5]))
            spans = found.get(idx, ())
            k = bisect_left(spans, (o_start, o_start))
            if (k < len(spans) and spans[k][0] < o_end) or (k > 0 and spans[k - 1][1] > o_start):
                return
            raw.append((idx, o_start, o_start - o_end, priority, "fuzzy", o_end, score))

        self._fuzzy.scan(norm.text, emit, placed, covered, wanted=wanted)

    def _resolve(self, raw: list, path: str, free_text: bool) -> list[Finding]:
        """One finding per atom occurrence: overlapping matches of an atom keep the best one.
        ``raw`` is sorted (and shared through the memo: never mutated here)."""
        info, severity = self._info, self._severity
        if len(raw) >= _bulk.BULK:  # many matches without overlaps: the findings built in C
            built = _bulk.resolve(raw, info, severity, path, free_text, new_finding)
            if built is not None:
                return built
        out: list[Finding] = []
        last_atom, last_end = -1, -1
        for idx, start, _, _, method, end, score in raw:
            if idx == last_atom and start < last_end:
                continue
            atom_id, atom_type = info[idx]
            out.append(new_finding((atom_id, atom_type, path, method, start, end, score, free_text,
                                     severity[idx], None)))
            last_atom, last_end = idx, end
        return out
