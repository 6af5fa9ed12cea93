"""Numbers and identifiers matched on their *skeleton*: separators between characters dropped.

The skeleton of a normalized text deletes every separator (space, any Unicode dash,
``_ . / : , ( ) [ ] + # '``), so ``(415) 555–0199``, ``415_555_0199`` and ``RX 88213`` become
``4155550199`` and ``rx88213`` (letters stay: they separate what they separate). One Aho–Corasick
automaton over the skeleton holds two kinds of keys:

* **digit keys** — numeric atoms (only digits and separators, ≥ 4 digits), stored as their digits.
  A hit counts only when it starts and ends on digit-group boundaries of the text (``14417`` never
  matches ``4417``) and when the *grouping rule* holds:

  1. the hit is one digit group of the text (``4417`` in ``card 4417``, ``4155550199``); or
  2. the text's groups have the atom's group lengths, either as written or after joining
     thousands groups (a group of exactly three digits after a single ``,`` ``.`` ``'`` or space)
     — ``415.555.0199`` for ``415-555-0199``, ``$1,250.00`` for ``1250.00``, ``4,417`` for
     ``4417``; or
  3. the atom has ≥ 7 digits (a phone, card, account or date-time): any grouping.

  4. the hit is written digit by digit, one space apart, as a run of its own (``card 4 4 1 7``;
     not ``3 4 4 1 7`` or ``4 4 1 7 2``: a longer run is another sequence).

  So ``$44.17``, ``4/4/17``, ``4.4.17``, ``44 17`` and ``44-17`` never match ``4417``: decimals, dates and
  other numbers never join into an atom shorter than 7 digits unless written in its own grouping.
  International forms: a hit of ≥ 7 digits may also start 1–3 digits into a group that follows
  ``+`` (``+14155550199``, ``tel:+1…``) or 3–5 digits into a group that starts with ``00``
  (``0014155550199``); an atom written with ``+CC`` is also found without it.
* **skeleton keys** — identifiers (letters *and* digits, every word holding a digit: ``RX-88213``,
  an IBAN, ``sk-live-…``), stored as their letters and digits. A hit counts when it starts and
  ends on a word boundary of the text: ``RX88213`` and ``rx 88213`` match, ``ARX88213`` and
  ``RX882134`` do not.

Cost: one ``translate`` and one automaton pass over the text (shared by every detector that scans
the same :class:`~tpguard.detect._normalize.Normalized`), then O(length of the hit) per hit; a hit's
text offsets come from a cursor that moves through the text once (:class:`_Locator`), not from a
per-character map. (What a key is, and the rule a digit hit obeys: :mod:`tpguard.detect._skeleton_key`;
here the index, the text's skeleton and the way back to its offsets.)
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Container
from itertools import compress
from operator import itemgetter
from typing import Any

import ahocorasick

from ._normalize import digits_of
from ._offset_map import Normalized
from ._skeleton_key import (
    _DIGIT,
    _KEEP_MASK,
    _PHONE_DIGITS,
    _SEP_BYTES,
    _SEP_DELETE,
    _SEP_ONE,
    _SEP_WIDE,
    _digit_span,
    _groupings,
    is_numeric,
    skeleton_key,
)

__all__ = ["SkeletonIndex"]

_CENTS = re.compile(r"[.,]00$")
_MANY_HITS = 16  # from this many skeleton hits, known ones are counted per distinct key in C
_SECOND = itemgetter(1)


# A key's automaton value is its row number (``STORE_INTS``); its row, one int64 of
# ``SkeletonIndex._rows``, packs its one entry (issue 33: at 100k atoms the 40k keys' value, entry and
# group tuples were ~12 MB of Python objects, and, made among the detector's temporaries, they kept
# their pools resident):
#   bits 0–11 the key's length · 12 an identifier (skeleton) key, else digits · 13–15 the entry's
#   method (``_METHODS``) · 16–35 its groupings (``SkeletonIndex._groupings``: (as written, joined),
#   each pair stored once) · 36– its atom.
# A key of several entries (or beyond those fields) has a negative row ``~i``: ``_general[i]`` is
# ``(length, entries)``, entries ``("d", atom, method, raw, joined)`` or ``("s", atom, method)``.
_LENGTH = (1 << 12) - 1
_IDENT = 1 << 12
_METHOD_SHIFT = 13
_GROUPS_SHIFT, _GROUPS = 16, (1 << 20) - 1
_ATOM_SHIFT = 36
_METHODS = ("exact", "alias", "masked", "semantic", "normalized")


class SkeletonIndex:
    """Digit and identifier keys of a detector's atoms; ``scan`` appends raw matches. Keys are
    added (:meth:`add`), then compiled once (:meth:`build`)."""

    def __init__(self) -> None:
        self._keys: dict[str, list[tuple[Any, ...]]] = {}
        self._automaton: Any = None
        self._rows: array[int] = array("q")
        self._general: list[tuple[int, tuple[tuple[Any, ...], ...]]] = []
        self._groupings: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def __bool__(self) -> bool:
        return bool(self._keys) or self._automaton is not None

    def add(self, idx: int, key: str, method: str) -> bool:
        """Index a normalized key if it is numeric or identifier-like. True when every occurrence
        of ``key`` itself in a text is a hit of the entry indexed here (its index key lies whole in
        its skeleton: a masked ``4111 **** 1111`` is indexed, but its digits are not contiguous
        there), so :meth:`scan` may count its exact occurrences as known."""
        if self._automaton is not None:
            raise RuntimeError("SkeletonIndex.add after build")
        if is_numeric(key):
            digits = digits_of(key)
            raw, joined = _groupings(key)
            self._add(digits, ("d", idx, method, raw, joined))
            if _CENTS.search(key) and len(digits) >= 6:  # "$1,250.00" is also "1250"
                self._add(digits[:-2], ("d", idx, method, raw[:-1], joined[:-1]))
            if key.startswith("+") and raw[0] <= 3 and len(digits) - raw[0] >= _PHONE_DIGITS:
                self._add(digits[raw[0] :], ("d", idx, method, raw[1:], joined[1:]))
            return digits in key.translate(_SEP_DELETE)
        skel = skeleton_key(key)
        if skel is not None:
            self._add(skel, ("s", idx, method))
            return skel in key.translate(_SEP_DELETE)
        return False

    def _add(self, key: str, entry: tuple[Any, ...]) -> None:
        self._keys.setdefault(key, []).append(entry)

    def build(self) -> None:
        """Compile the automaton and the keys' rows; the added keys are let go as it goes (the
        nodes reuse their memory). Equal groupings and general values are stored once: plain
        tuples of ints and strings, which the garbage collector does not track."""
        if not self._keys:
            return
        automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        rows, general = self._rows, self._general
        groupings: dict[tuple[tuple[int, ...], tuple[int, ...]], int] = {}
        shared: dict[Any, Any] = {}
        while self._keys:
            key, entries = self._keys.popitem()
            row = None
            if len(entries) == 1 and len(key) <= _LENGTH and entries[0][2] in _METHODS:
                kind, idx, method, *groups = entries[0]
                gid = groupings.setdefault(tuple(groups), len(groupings)) if kind == "d" else 0
                if gid <= _GROUPS and idx < 1 << (63 - _ATOM_SHIFT):
                    row = (idx << _ATOM_SHIFT | gid << _GROUPS_SHIFT | _METHODS.index(method) << _METHOD_SHIFT
                           | (_IDENT if kind == "s" else 0) | len(key))
            if row is None:
                frozen = tuple(shared.setdefault(e, e) for e in entries)
                general.append((len(key), shared.setdefault(frozen, frozen)))
                row = ~(len(general) - 1)
            automaton.add_word(key, len(rows))
            rows.append(row)
        automaton.make_automaton()
        self._keys = {}  # (an emptied dict keeps its table: 1 MB at 100k atoms)
        self._groupings = [tuple(map(shared.setdefault, pair, pair)) for pair in groupings]
        self._automaton = automaton

    def scan(self, norm: Normalized, emit: Any, known: dict[int, int] | None = None) -> None:
        """Call ``emit(idx, method, norm_start, norm_end)`` for every accepted hit.

        ``known`` counts, per atom, the exact occurrences of its self-covering keys (:meth:`add`)
        found in this text: each of them is a hit here. An atom with no more hit entries than
        that has every hit inside one of its exact occurrences, so its hits are not located (the
        common case of a phone number or an id written as registered costs no offset look-up)."""
        if self._automaton is None:
            return
        skel = _skeleton(norm)
        if not skel:
            return
        hits = list(self._automaton.iter(skel))
        skip: Container[int] = ()
        if hits and known:
            hits, skip = self._unknown_hits(hits, known)
        if not hits:
            return
        s = norm.text
        at = _Locator(norm).at
        rows, groupings = self._rows, self._groupings
        for end, row in hits:  # in the order of their end
            packed = rows[row]
            if packed < 0:
                length, entries = self._general[~packed]
                _emit_entries(s, at(end - length + 1), at(end) + 1, length,
                              tuple(e for e in entries if e[1] not in skip) if skip else entries, emit)
                continue
            length = packed & _LENGTH
            ns = at(end - length + 1)
            ne = at(end) + 1
            if packed & _IDENT:
                if _word_bounded(s, ns, ne):
                    emit(packed >> _ATOM_SHIFT, _METHODS[packed >> _METHOD_SHIFT & 7], ns, ne)
                continue
            raw, joined = groupings[packed >> _GROUPS_SHIFT & _GROUPS]
            span = _digit_span(s, ns, ne, length, raw, joined)
            if span is not None:
                emit(packed >> _ATOM_SHIFT, _METHODS[packed >> _METHOD_SHIFT & 7], *span)

    def _atoms(self, row: int) -> tuple[int, ...]:
        """The atom of each entry of the key at ``row``."""
        packed = self._rows[row]
        if packed >= 0:
            return (packed >> _ATOM_SHIFT,)
        return tuple(e[1] for e in self._general[~packed][1])

    def _unknown_hits(self, hits: list[tuple[int, int]], known: dict[int, int]) -> tuple[list[tuple[int, int]], set[int]]:
        """``(hits, skip)``: ``skip`` the atoms with no more hit entries than ``known`` occurrences,
        ``hits`` without those whose every entry's atom is in ``skip``. Many hits are counted and
        kept per distinct key (``Counter`` over their rows, in C): a text of one number repeated
        costs a few C loops, not a Python turn per hit."""
        if len(hits) < _MANY_HITS:
            return self._few_unknown_hits(hits, known)
        count: dict[int, int] = {}
        for row, n in Counter(map(_SECOND, hits)).items():
            for idx in self._atoms(row):
                count[idx] = count.get(idx, 0) + n
        skip = {idx for idx, n in count.items() if n <= known.get(idx, 0)}
        if not skip:
            return hits, skip
        keep = {row: not skip.issuperset(self._atoms(row)) for row in set(map(_SECOND, hits))}
        if all(keep.values()):
            return hits, skip
        return ([hit for hit in hits if keep[hit[1]]] if any(keep.values()) else []), skip

    def _few_unknown_hits(self, hits: list[tuple[int, int]],
                          known: dict[int, int]) -> tuple[list[tuple[int, int]], set[int]]:
        """:meth:`_unknown_hits` of a typical text's few hits: one pass each way."""
        rows = self._rows
        count: dict[int, int] = {}
        for _, row in hits:
            packed = rows[row]
            if packed >= 0:
                idx = packed >> _ATOM_SHIFT
                count[idx] = count.get(idx, 0) + 1
                continue
            for idx in self._atoms(row):
                count[idx] = count.get(idx, 0) + 1
        skip = {idx for idx, n in count.items() if n <= known.get(idx, 0)}
        if not skip:
            return hits, skip
        return [hit for hit in hits if not skip.issuperset(self._atoms(hit[1]))], skip


def _word_bounded(s: str, ns: int, ne: int) -> bool:
    """``s[ns:ne]`` starts and ends on a word boundary."""
    return (ns == 0 or not s[ns - 1].isalnum()) and (ne == len(s) or not s[ne].isalnum())


def _emit_entries(s: str, ns: int, ne: int, length: int, entries: tuple[tuple[Any, ...], ...], emit: Any) -> None:
    """:meth:`SkeletonIndex.scan` of one hit at ``s[ns:ne]`` of a key with general ``entries``."""
    for entry in entries:
        if entry[0] == "s":
            if _word_bounded(s, ns, ne):
                emit(entry[1], entry[2], ns, ne)
            continue
        span = _digit_span(s, ns, ne, length, entry[3], entry[4])
        if span is not None:
            emit(entry[1], entry[2], *span)


def _skeleton(norm: Normalized) -> str:
    """The text without separators; ``""`` when it has no digit (every key holds one)."""
    skel = norm._cache.get("skeleton")
    if skel is None:
        text = norm.text
        if text.isascii():
            # bytes.translate is ~15× faster than str.translate for the common ASCII text
            b = text.encode("ascii")
            has_digit = len(b.translate(None, b"0123456789")) != len(b)
            skel = b.translate(None, _SEP_BYTES).decode("ascii") if has_digit else ""
        else:
            skel = _mixed_skeleton(text)
        norm._cache["skeleton"] = skel
    return skel  # type: ignore[return-value]


def _mixed_skeleton(text: str) -> str:
    """:func:`_skeleton` of a text with non-ASCII characters, in C whatever its script: the ASCII
    separators deleted from its UTF-8 bytes (a multi-byte sequence holds no ASCII byte, so no
    character is cut), then the few non-ASCII separators (a curly apostrophe, dashes) by a regex,
    only when the text has one. (The earlier per-stretch map cost a Python turn per ASCII stretch:
    9 µs for the realistic note's twin, 2 µs this way.)"""
    skel = text.encode("utf-8", "surrogatepass").translate(None, _SEP_BYTES).decode("utf-8", "surrogatepass")
    if _SEP_WIDE.search(skel):
        skel = _SEP_WIDE.sub("", skel)
    return skel if _DIGIT.search(skel) else ""


def _byte_image(text: str) -> bytes:
    """One byte per character of a non-ASCII ``text`` for :class:`_Locator`: ASCII as it is, a
    non-ASCII separator as a space, any other non-ASCII character as ``?`` (kept, like a letter).
    Which characters are separators is all the cursor reads, so it walks the image exactly as it
    walks an ASCII text's bytes."""
    image = text.encode("ascii", "replace")  # one "?" per non-ASCII code point (surrogates too)
    if not _SEP_WIDE.search(text):
        return image
    fixed = bytearray(image)
    for m in _SEP_WIDE.finditer(text):
        fixed[m.start()] = 32
    return bytes(fixed)


#: cursor steps one look-up may take before the whole offset map is built instead
_LOCATE_STEPS = 16


class _Locator:
    """Text offset of skeleton character ``i`` (:meth:`at`) for the few hits of one scan, without
    the per-character offset map: a cursor ``(p, k)`` — ``k`` kept characters in ``text[:p]`` —
    moves towards ``i`` one block at a time. A block of ``need`` characters (the kept characters
    still missing) is counted by one ``bytes.translate`` in C; when all of them are kept the
    character is found, else only the block's separators are still missing, so the blocks shrink
    with the separators' density. Hits come in the order of their end and a hit's start lies a key
    length before it, so the cursor moves forward through the text and back by at most one key.
    A non-ASCII text is walked on its :func:`_byte_image` (one byte per character). A look-up that
    needs more than ``_LOCATE_STEPS`` blocks (a text dense with separators) uses
    :func:`_skeleton_map` (O(n), once per text). The map holds one ``int`` per character (~30 k
    instructions for a 200-character note); the cursor allocates a few short slices per hit."""

    __slots__ = ("b", "k", "map", "norm", "p")

    def __init__(self, norm: Normalized) -> None:
        self.norm = norm
        self.map: list[int] | None = norm._cache.get("skeleton_map")  # type: ignore[assignment]
        text = norm.text
        self.b = b"" if self.map is not None else text.encode("ascii") if text.isascii() else _byte_image(text)
        self.p = self.k = 0

    def at(self, i: int) -> int:
        if self.map is not None:
            return self.map[i]
        b, p, k = self.b, self.p, self.k
        for _ in range(_LOCATE_STEPS):
            if i >= k:  # forward: char i is the (i + 1 - k)-th kept character from p
                need = i + 1 - k
                q = p + need
                got = len(b[p:q].translate(None, _SEP_BYTES))
                if got == need:  # [p, q) all kept: char i is at q - 1
                    self.p, self.k = q, i + 1
                    return q - 1
                p, k = q, k + got
            else:  # backward: k - i kept characters lie between char i and p
                need = k - i
                q = p - need
                got = len(b[q:p].translate(None, _SEP_BYTES))
                if got == need:  # [q, p) all kept: char i is at q
                    self.p, self.k = q, i
                    return q
                p, k = q, k - got
        self.map = _skeleton_map(self.norm)
        return self.map[i]


def _skeleton_map(norm: Normalized) -> list[int]:
    """Text offset of every skeleton character (``positions[i]`` for skeleton offset ``i``),
    cached on ``norm``. O(n) in C: the text translated to a keep-mask (separators 0), then
    ``compress`` over ``range`` — no regex, no Python code per character or per separator run.
    :class:`_Locator` uses it for non-ASCII texts and texts dense with separators."""
    cached = norm._cache.get("skeleton_map")
    if cached is None:
        text = norm.text
        if text.isascii():
            mask: Any = text.encode("ascii").translate(_KEEP_MASK)
        else:  # one 32-bit code point per character; separators (only they) become 0
            kept = _SEP_ONE.sub("\0", text.replace("\0", "\1"))
            mask = memoryview(kept.encode("utf-32-le", "surrogatepass")).cast("I")
        cached = norm._cache["skeleton_map"] = list(compress(range(len(text)), mask))
    return cached  # type: ignore[return-value]

