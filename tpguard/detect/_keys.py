"""The detector's key automaton: every key of a policy's atoms, found in one pass over a text.

An Aho–Corasick automaton that maps each key (a ``str``) to an ``int`` and reports every
occurrence of every key, overlapping ones included, as ``(key number, start, end)`` — ``end``
exclusive, offsets in characters. The automaton is ``ahocorasick_rs`` (the Rust ``aho-corasick``
crate) rather than pyahocorasick, for its memory (issue 33): the crate's contiguous NFA holds a
100k-atom policy's 243,704 keys in ~42 MiB where pyahocorasick's trie took ~91 MiB (1.9 million
nodes of 48 bytes), and it scans as fast or faster. The keys' ints are an ``array('i')`` indexed
by key number: 4 bytes a key, no Python object per key.

Lone surrogates. The crate works on UTF-8, which cannot hold a lone surrogate (``"\\ud800"``, which
a Python ``str`` can): ``ahocorasick_rs`` stops reading its keys at the first key that holds one,
without an error, and a text that holds one raises ``UnicodeEncodeError``. So each surrogate is
swapped for a stand-in, one code point of a block of 2,048 that no key uses, in the keys that hold
one (at build) and in a text that holds one (only then: the encoding error says so). In that text,
any character of the stand-ins' own block is moved to a second unused block, so it cannot pose as
a surrogate. Every swap is one character for one, the same in keys and text, and one-to-one: the
automaton finds what it would on the keys and text themselves, at the same offsets. (When a key held
a surrogate, a text with a character of the stand-ins' block is swapped too, found by a regex: no
policy that passes validation has such a key; ``PrivateAtom`` rejects lone surrogates.) The build
checks that the crate read every key and raises if not.

Cost: build O(total length of the keys); :meth:`KeyAutomaton.matches` O(len(text) + hits).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Collection, Iterable, Iterator

import ahocorasick_rs

__all__ = ["KeyAutomaton"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATES, _BLOCK = 0xD800, 2048


def _free_blocks(keys: Iterable[str]) -> tuple[int, int]:
    """The first code points of the two highest blocks of 2,048 code points that no character of
    ``keys`` lies in (the last two blocks of the supplementary private-use plane 16 unless keys
    use them)."""
    used = {ord(c) // _BLOCK for c in set("".join(k for k in keys if not k.isascii()))}
    used.add(_SURROGATES // _BLOCK)
    free = [b * _BLOCK for b in range(0x110000 // _BLOCK - 1, 0, -1) if b not in used][:2]
    if len(free) < 2:  # a policy whose keys touch every block of the code space
        raise ValueError("the policy's keys use every block of 2,048 code points: no stand-ins for lone surrogates")
    return free[0], free[1]


class KeyAutomaton:
    """Every occurrence of every key in a text; each key carries an int (``values[key number]``).

    ``KeyAutomaton(keys, pairs)``: ``keys`` every key (read once first, for the stand-ins of lone
    surrogates), ``pairs`` the ``(key, value)`` pairs in key-number order — consumed as the
    automaton is built, so a caller may free each key's data as it yields it. Values fit 32 signed
    bits."""

    __slots__ = ("_automaton", "_key_swap", "_swap", "_swapped", "values")

    def __init__(self, keys: Collection[str], pairs: Iterable[tuple[str, int]]) -> None:
        stand_in, moved = _free_blocks(keys)
        self._key_swap = {_SURROGATES + k: stand_in + k for k in range(_BLOCK)}
        self._swap = self._key_swap | {stand_in + k: moved + k for k in range(_BLOCK)}
        #: the stand-ins' block, once a key holds a stand-in (a text with one of its characters is swapped)
        self._swapped: re.Pattern[str] | None = None
        self.values = array("i")
        expected, read_all = len(keys), False

        def read() -> Iterator[str]:
            nonlocal read_all
            for key, value in pairs:
                if not key:
                    raise ValueError("an empty key")
                self.values.append(value)
                if not key.isascii() and _SURROGATE.search(key) is not None:
                    key = key.translate(self._key_swap)
                    self._swapped = re.compile(f"[{chr(stand_in)}-{chr(stand_in + _BLOCK - 1)}]")
                yield key
            read_all = True  # (the library asked for a key after the last one)

        self._automaton = ahocorasick_rs.AhoCorasick(read(), matchkind=ahocorasick_rs.MatchKind.Standard,
                                                     store_patterns=False)
        if not read_all:  # the crate stops at a key it cannot read, silently (the key is not named: private)
            raise ValueError(f"key automaton: the library stopped reading at key {len(self.values)} of {expected}")

    def __len__(self) -> int:
        return len(self.values)

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        """``(key number, start, end)`` of every occurrence of every key in ``text``, overlapping
        ones included, ordered by ``end``."""
        if self._swapped is not None and self._swapped.search(text):
            text = text.translate(self._swap)
        try:
            return self._automaton.find_matches_as_indexes(text, overlapping=True)
        except UnicodeEncodeError:  # a lone surrogate: swapped as in the keys (module docstring)
            return self._automaton.find_matches_as_indexes(text.translate(self._swap), overlapping=True)

    def get(self, key: str) -> int | None:
        """The value of ``key``, ``None`` if it is not a key (a search of ``key`` itself)."""
        for number, start, end in self.matches(key):
            if start == 0 and end == len(key):
                return self.values[number]
        return None
