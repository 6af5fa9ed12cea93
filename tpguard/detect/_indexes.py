"""What a :class:`~tpguard.detect.detector.Detector` scans with, built once from its atoms
(:class:`Indexes`, the detector's base class): the key automaton, each key's entries packed into
one int (the build's key table and the packing below), the skeleton and fuzzy indexes, and the
per-atom tables a finding is made from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._digits import SkeletonIndex
from ._forms import _MIN_KEY, _joined, _swapped_names
from ._fuzzy_index import FuzzyIndex
from ._keys import KeyAutomaton
from ._normalize import normalize_key
from ._pair_index import fuzzy_eligible
from .findings import _PRIORITY

if TYPE_CHECKING:
    from ..policy.kb import PrivateAtom  # the atoms' shape only: detect sits below the policy
    from .presidio import PiiDetector

__all__ = ["Indexes"]


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


class Indexes:
    """The key automaton, skeleton and fuzzy indexes of a detector's atoms and its per-atom
    tables, built by the constructor (O(the keys' length)); :class:`~tpguard.detect.detector.Detector`
    scans with them."""

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
        #: the memo's texts that hold no atom (:attr:`Detector.known_clean`), kept and cleared with it
        self._clean: set[str] = set()
        self._compile()

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

    def _counts(self, value: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(covers, places)`` of the key of automaton ``value``: the atoms its hits count for."""
        if value < 0:
            return self._key_general[~value][4]
        one = (value >> _ATOM_SHIFT,)
        return (one if value & _COVERS else (), one if value & _PLACES else ())

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
