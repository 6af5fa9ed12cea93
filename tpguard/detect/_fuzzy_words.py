"""The words of a normalized text as the fuzzy index sees them — the runs between spaces and ASCII
punctuation (:func:`words`) — and where each starts, computed in C."""

from __future__ import annotations

import re
import string
from itertools import accumulate, compress, repeat
from operator import add

__all__ = ["words"]

_PUNCT = string.punctuation
_PUNCT_BYTES = bytes.maketrans(_PUNCT.encode("ascii"), b" " * len(_PUNCT))
_PUNCT_RE = re.compile(f"[{re.escape(_PUNCT)}]")


def _spaced(s: str) -> str:
    """``s`` with ASCII punctuation turned into spaces (offsets kept), in C whatever its script:
    a non-ASCII text is translated as UTF-8 bytes, whose multi-byte sequences hold no ASCII byte
    (no character is touched but ASCII punctuation, one byte each). The earlier per-stretch map cost a
    Python turn per ASCII stretch: 7.5 µs for the realistic note's twin, ~1.5 µs this way."""
    if s.isascii():
        return s.encode("ascii").translate(_PUNCT_BYTES).decode("ascii")
    return s.encode("utf-8", "surrogatepass").translate(_PUNCT_BYTES).decode("utf-8", "surrogatepass")


def _split(s: str) -> tuple[str, list[str]]:
    """``(spaced, words)`` of a normalized text: the text with ASCII punctuation turned into spaces,
    and its words, the runs between spaces. One ``str.split()`` in C: a normalized text holds no
    whitespace but single spaces, so the runs are exactly the non-empty pieces between them."""
    spaced = _spaced(s)
    return spaced, spaced.split()


def words(s: str) -> list[str]:
    """The words of a normalized text: runs between spaces and ASCII punctuation."""
    return _split(s)[1]


def _word_starts(spaced: str) -> list[int]:
    """Offset of every word of ``spaced`` (the non-empty pieces between single spaces), computed in
    C: piece ``j`` starts at the sum of the earlier pieces' lengths plus ``j``. (A regex
    ``finditer`` over the words costs a match object and a tuple per word of the text: a third of
    a 100 KB scan.) Only a scan that has candidates to verify needs them."""
    lens = list(map(len, spaced.split(" ")))
    return list(compress(accumulate(map(add, lens, repeat(1)), initial=0), lens))


def _first_starts(spaced: str, ws: list[str], n: int) -> list[int]:
    """:func:`_word_starts` of the first ``n`` words only, one ``str.find`` per word: between two
    words of ``spaced`` lie only spaces, so the next occurrence of a word at or after the end of
    the one before is where it starts. A note's candidates sit among its first few dozen words;
    this costs a third of the whole-text offsets there (~1.5 µs for 15 words of a 55-word note)."""
    starts = []
    pos = 0
    find = spaced.find
    for w in ws[:n]:
        pos = find(w, pos)
        starts.append(pos)
        pos += len(w)
    return starts
