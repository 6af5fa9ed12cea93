"""The disclosure detector ``D(p_j, a_k)`` (ToolPrivacyBench, seed ``000_*`` §3.5, Appendix D.1).

Methods, cheapest first:

* ``exact`` / ``alias`` / ``semantic`` / ``masked`` — the atom's value, aliases, semantic variants and
  masked forms, found by one Aho–Corasick pass over the normalized text (so the cost of a scan
  barely depends on how many atoms are registered);
* ``normalized`` — the same keys matched only after normalization (:mod:`tpguard.detect._normalize`:
  percent-escapes and HTML entities decoded, NFKC, case-fold, invisible marks removed, whitespace
  collapsed, look-alike letters folded); a person-like name with its order swapped
  (``Gonzalez, Maria``); a multi-word key with its words run together (``MariaGonzalez``,
  ``BlueShield PPO``, ``hepatitisB``: :func:`_joined`, more keys of the same automaton); numbers and identifiers compared on their skeleton under the grouping
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

import re
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Container, Iterable
from functools import partial
from itertools import repeat
from operator import itemgetter, sub
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from . import _bulk
from ._digits import SkeletonIndex, is_numeric, skeleton_key
from ._fuzzy_index import FuzzyIndex, fuzzy_eligible
from ._keys import KeyAutomaton
from ._normalize import Normalized, normalize, normalize_key
from ._walk import iter_leaves

if TYPE_CHECKING:
    from ..policy.kb import PrivateAtom  # the atoms' shape only: detect sits below the policy
    from .presidio import PiiDetector

__all__ = ["METHODS", "Detector", "Finding", "Method", "is_detectable", "iter_leaves"]

Method = Literal["exact", "alias", "normalized", "fuzzy", "semantic", "masked", "pii"]
METHODS: tuple[str, ...] = Method.__args__  # type: ignore[attr-defined]
_PRIORITY = {m: i for i, m in enumerate(("exact", "alias", "masked", "normalized", "semantic", "fuzzy", "pii"))}

_NORMALIZED = _PRIORITY["normalized"]
_MANY = 16  # from this many counted hits, they are counted per distinct key in C
MEMO_LEN = 64  # texts up to this long are memoized per detector
_MEMO_SIZE = 4096
_MIN_KEY = 3
_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['.\-][^\W\d_]+)*")


def is_detectable(value: str) -> bool:
    """True iff the detector can find ``value``: its normalized form has ≥ 3 characters (shorter
    keys would match inside ordinary words and numbers, so they are not indexed). Pure, cheap."""
    return len(normalize_key(value)) >= _MIN_KEY


def _swapped_names(value: str) -> tuple[str, ...]:
    """``Gonzalez, Maria`` and ``Gonzalez Maria`` for a person-like value: 2–3 capitalized words
    of letters only (``Maria Gonzalez``, ``Anne-Marie de Wit`` is not: ``de`` is lower case)."""
    words = value.split()
    if not 2 <= len(words) <= 3 or not all(_NAME_WORD.fullmatch(w) and w[0].isupper() for w in words):
        return ()
    last, rest = words[-1], " ".join(words[:-1])
    return normalize_key(f"{last}, {rest}"), normalize_key(f"{last} {rest}")


#: multi-word keys of up to this many words are indexed with every subset of their spaces removed
#: (``2**(n-1) - 1`` joined forms: 7 at most); longer keys with all of them removed only
_JOIN_ALL_WORDS = 4
#: a joined form shorter than this is not indexed (``a b c`` → ``abc`` would match a word)
_MIN_JOINED = 6


def _joined(key: str) -> tuple[str, ...]:
    """The forms of a multi-word normalized key with its words run together: ``mariagonzalez``,
    ``blueshield ppo``, ``blue shieldppo``, ``blueshieldppo``, ``hepatitisb`` — every subset of its
    spaces removed for keys of up to ``_JOIN_ALL_WORDS`` words, all of them for longer ones.
    Numbers and identifiers get none: their skeleton already ignores spaces (:mod:`._digits`).
    Cost: O(len(key)) per form, at most 7 forms, built once with the automaton."""
    words = key.split(" ")
    n = len(words)
    if n < 2 or len(key) - n + 1 < _MIN_JOINED or not any(c.isalpha() for c in key):
        return ()
    if is_numeric(key) or skeleton_key(key) is not None:
        return ()
    if n > _JOIN_ALL_WORDS:
        return ("".join(words),)
    out = []
    for mask in range(1, 2 ** (n - 1)):  # bit k set: the space after word k is removed
        parts = [words[0]]
        for k in range(1, n):
            if mask >> (k - 1) & 1:
                parts[-1] += words[k]
            else:
                parts.append(words[k])
        out.append(" ".join(parts))
    return tuple(out)


def _count(counted: Iterable[tuple[tuple[tuple[int, ...], tuple[int, ...]], int]], known: dict[int, int],
           placed: dict[int, int]) -> None:
    """Add ``times`` accepted hits of each key to the ``known``/``placed`` counts of its atoms."""
    for (covers, places), times in counted:
        for idx in covers:
            known[idx] = known.get(idx, 0) + times
        for idx in places:
            placed[idx] = placed.get(idx, 0) + times


class Finding(NamedTuple):
    """One occurrence of a private atom in a tool call's arguments.

    ``start``/``end`` index the text of the leaf at ``path`` (for numbers, their decimal text).
    ``authorized`` is filled in by the guard (``None`` straight from the detector). A finding never
    carries the matched text, so logging one cannot leak the value. (A named tuple: the guard
    builds several per call, and tuples are the cheapest immutable records Python has.)
    """

    atom_id: str
    atom_type: str
    path: str
    method: Method
    start: int
    end: int
    score: float = 1.0
    free_text: bool = False
    severity: float = 1.0
    authorized: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


#: a :class:`Finding` from its 10 fields as one tuple, built in C (the named tuple's own
#: ``__new__`` is Python code, and a call builds a few findings per text)
new_finding = partial(tuple.__new__, Finding)


#: the build's table of keys: key → its entries, each ``atom << 3 | method code`` (``_METHOD_CODES``),
#: one as an int, several in a list — a 100k-atom policy's 243k keys as ints, not lists of named
#: tuples (the table's peak is what the process keeps resident: issue 33)
_Table = dict[str, "int | list[int]"]


def _put(table: _Table, key: str, entry: int) -> None:
    """Add ``entry`` to the entries of ``key``."""
    have = table.get(key)
    if have is None:
        table[key] = entry
    elif type(have) is int:
        table[key] = [have, entry]
    else:
        have.append(entry)  # type: ignore[union-attr]


def _entries(have: int | list[int] | None) -> list[int]:
    return [] if have is None else [have] if type(have) is int else have  # type: ignore[return-value]


def _shared(pool: dict[tuple[Any, ...], tuple[Any, ...]], value: tuple[Any, ...]) -> tuple[Any, ...]:
    """The one copy of ``value`` kept in ``pool`` (equal tuples stored once)."""
    return pool.setdefault(value, value)


# A key's automaton value is an int (:class:`~tpguard.detect._keys.KeyAutomaton`: 4 bytes a key in an
# ``array('i')``, no Python object per key). Issue 33: at 100k atoms the 243k keys' value tuples,
# entry tuples and atom ints were ~48 MB of the guard's ~300 MB.
# A key of one entry (almost all: each atom's value, aliases, swapped and joined forms) packs what
# a hit needs into its value, in 31 bits:
#   bits 0–5 its length · 6 left end is a word character · 7 right end is one · 8 it covers its
#   atom (``known``) · 9 it places its atom (``placed``) · 10–12 its method (``_METHOD_CODES``) ·
#   13–30 its atom.
# Any other key (several entries, longer than ``_LENGTH``, an atom past ``_MAX_ATOM``, other counts)
# has a negative value ``~i``: ``_key_general[i]`` is its value as a tuple ``(length, left_word,
# right_word, entries, counts)`` — the form every key had before, which :meth:`Detector._key_value`
# rebuilds for any value. (A policy past 262k atoms keeps its later atoms' keys in that form.)
_LENGTH = (1 << 6) - 1
_LEFT, _RIGHT = 1 << 6, 1 << 7
_COVERS, _PLACES = 1 << 8, 1 << 9
_COUNTS = _COVERS | _PLACES
_METHOD_SHIFT = 10
_ATOM_SHIFT = 13
_MAX_ATOM = (1 << (31 - _ATOM_SHIFT)) - 1
_METHOD_CODES = ("exact", "alias", "masked", "normalized", "semantic")
_METHOD_CODE = {m: i for i, m in enumerate(_METHOD_CODES)}
#: (method, priority) of each method code
_ENTRY_FIELDS = tuple((m, _PRIORITY[m]) for m in _METHOD_CODES)


def _key_automaton(table: _Table, covering: set[str], placing: _Table) -> tuple[KeyAutomaton, list[tuple[Any, ...]]]:
    """The key automaton and its general values (see above), from ``table``, which it empties as
    it goes (each key's entries freed as soon as the automaton has read the key).
    O(total length of the keys)."""
    general: list[tuple[Any, ...]] = []
    # General values as plain tuples of ints and strings, equal ones shared: the garbage collector
    # does not track such tuples (never a named tuple's), so full collections do not traverse them.
    shared: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def pairs() -> Iterable[tuple[str, int]]:
        while table:
            key, have = table.popitem()
            entries = _entries(have)
            length, left, right = len(key), key[0].isalnum(), key[-1].isalnum()
            covers = tuple(e >> 3 for e in entries) if key in covering else ()
            places = tuple(_entries(placing.get(key)))
            atom = entries[0] >> 3
            if (len(entries) == 1 and length <= _LENGTH and atom <= _MAX_ATOM and covers in ((), (atom,))
                    and places in ((), (atom,))):
                value = (atom << _ATOM_SHIFT | (entries[0] & 7) << _METHOD_SHIFT
                         | length | (_LEFT if left else 0) | (_RIGHT if right else 0)
                         | (_COVERS if covers else 0) | (_PLACES if places else 0))
            else:
                counts = _shared(shared, (covers, places)) if covers or places else None
                plain = _shared(shared, tuple(_shared(shared, (e >> 3, *_ENTRY_FIELDS[e & 7])) for e in entries))
                value = ~len(general)
                general.append((length, left, right, plain, counts))
            yield key, value

    return KeyAutomaton(table, pairs()), general


class _Info(dict[int, tuple[str, str]]):
    """Per atom index, the ``(id, type)`` every finding of the atom starts with, made at the atom's
    first finding (issue 33: a tuple per registered atom was 6.4 MB at 100k atoms; a detector's
    texts name a few). A look-up of a made entry is a plain dict look-up, in C."""

    __slots__ = ("_atoms",)

    def __init__(self, atoms: tuple[PrivateAtom, ...]) -> None:
        super().__init__()
        self._atoms = atoms

    def __missing__(self, idx: int) -> tuple[str, str]:
        atom = self._atoms[idx]
        made = self[idx] = (atom.id, atom.type)
        return made


class Detector:
    """Finds registered private atoms in tool-call arguments.

    ``Detector(atoms).scan(arguments, free_text_slots={"note"})`` → list of :class:`Finding`.
    Build once per set of atoms (O(their keys' length)); ``scan`` and ``scan_text`` are
    thread-safe.
    """

    def __init__(
        self,
        atoms: Iterable[PrivateAtom],
        *,
        fuzzy: bool = True,
        fuzzy_threshold: float = 88.0,
        semantic: bool = True,
        pii: PiiDetector | None = None,
    ) -> None:
        self.atoms: tuple[PrivateAtom, ...] = tuple(atoms)
        self.fuzzy = fuzzy
        self.fuzzy_threshold = fuzzy_threshold
        self.semantic = semantic
        self.pii = pii
        self.undetectable: tuple[str, ...] = ()
        self._automaton: KeyAutomaton | None = None
        self._key_general: list[tuple[Any, ...]] = []  # the keys' general values (``_key_automaton``)
        #: per atom index: its value, and the fields every finding of it starts with
        self._values = [a.value for a in self.atoms]
        #: the values, ``None`` for one whose every occurrence in a text with its own offsets is the
        #: value as written (no cased letter, its own normalized key): no comparison per occurrence
        self._bulk_values: list[str | None] = [
            None if a.value.lower() == a.value.upper() and normalize_key(a.value) == a.value else a.value
            for a in self.atoms]
        self._info = _Info(self.atoms)
        self._severity = [a.severity for a in self.atoms]
        self._skeleton = SkeletonIndex()
        self._fuzzy = FuzzyIndex(fuzzy_threshold)
        self._memo: dict[str, list[tuple[int, int, int, int, str, int, float]]] = {}
        #: the memo's texts that hold no atom (:attr:`known_clean`), kept and cleared with it
        self._clean: set[str] = set()
        self._compile()

    def __reduce__(self) -> tuple[Any, ...]:
        """A pickled detector is rebuilt from its atoms and options (the key automaton, in Rust,
        does not pickle and keeps no copy of its keys; the memo is a cache)."""
        return (partial(Detector, fuzzy=self.fuzzy, fuzzy_threshold=self.fuzzy_threshold, semantic=self.semantic,
                        pii=self.pii), (self.atoms,))

    # -- compilation --------------------------------------------------------------------------
    def _keys(self, atom: PrivateAtom) -> Iterable[tuple[str, str]]:
        yield atom.value, "exact"
        for a in atom.aliases:
            yield a, "alias"
        for m in atom.masked:
            yield m, "masked"
        if self.semantic:
            for v in atom.variants:
                yield v, "semantic"

    def _compile(self) -> None:
        table: _Table = {}
        covering: set[str] = set()  # keys whose exact occurrences are skeleton hits (SkeletonIndex.add)
        placing: _Table = {}  # a fuzzy atom's value key → the atoms it places (FuzzyIndex)
        joined: _Table = {}  # a key's words run together → the atoms it stands for (repeats possible)
        fuzzy: list[tuple[int, str]] = []  # (atom, normalized value) for the fuzzy index
        undetectable = []
        normalized = _METHOD_CODE["normalized"]
        for idx, atom in enumerate(self.atoms):
            norm_value, spaced = self._add_keys(idx, atom, table, covering)
            if norm_value is None:
                undetectable.append(atom.id)
                continue
            if " " in norm_value:
                for key in _swapped_names(atom.value):
                    _put(table, key, idx << 3 | normalized)
                    spaced.append(key)
            for key in spaced:
                for form in _joined(key):
                    _put(joined, form, idx)
            if self.fuzzy and fuzzy_eligible(norm_value):
                fuzzy.append((idx, norm_value))
                _put(placing, norm_value, idx)
        while joined:
            form, idxs = joined.popitem()
            have = {e >> 3 for e in _entries(table.get(form))}
            for i in sorted(set(_entries(idxs)) - have):
                _put(table, form, i << 3 | normalized)
        self.undetectable = tuple(undetectable)
        if table:  # (empties the table: the memory of its entries goes to the automaton's nodes)
            self._automaton, self._key_general = _key_automaton(table, covering, placing)
        # What lives on is built after the table's temporaries are gone, in the memory they held
        # (issue 33: built among them, it kept ~40 MB of half-empty pools resident at 100k atoms).
        del table, joined, placing, covering
        self._skeleton.build()  # (lets its keys go: the fuzzy index is built in their memory)
        for idx, norm_value in fuzzy:
            self._fuzzy.add(idx, norm_value)
        del fuzzy
        self._fuzzy.freeze()

    def _add_keys(self, idx: int, atom: PrivateAtom, table: _Table,
                  covering: set[str]) -> tuple[str | None, list[str]]:
        """Index one atom's keys; ``(its normalized value, its multi-word keys)``, the value
        ``None`` when no key is long enough to detect."""
        usable = False
        norm_value = ""
        spaced: list[str] = []
        for raw, method in self._keys(atom):
            key = normalize_key(raw)
            if method == "exact":
                norm_value = key
            if len(key) < _MIN_KEY:
                continue
            usable = True
            _put(table, key, idx << 3 | _METHOD_CODE[method])
            if self._skeleton.add(idx, key, method):
                covering.add(key)
            if method != "masked" and " " in key:
                spaced.append(key)
        return (norm_value if usable else None), spaced

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

    def _counts(self, value: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(covers, places)`` of the key of automaton ``value``: the atoms its hits count for."""
        if value < 0:
            return self._key_general[~value][4]
        one = (value >> _ATOM_SHIFT,)
        return (one if value & _COVERS else (), one if value & _PLACES else ())

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

    def _key_value(self, value: int) -> tuple[Any, ...]:
        """The automaton ``value`` of a key as a tuple ``(length, left_word, right_word, entries,
        counts)``: the general form (module comment at ``_LENGTH``), for :func:`_bulk.key_matches`
        and the tests."""
        if value < 0:
            return self._key_general[~value]
        atom = value >> _ATOM_SHIFT
        method, priority = _ENTRY_FIELDS[value >> _METHOD_SHIFT & 7]
        return (value & _LENGTH, bool(value & _LEFT), bool(value & _RIGHT), ((atom, method, priority),),
                self._counts(value) if value & _COUNTS else None)

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
