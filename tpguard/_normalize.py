"""Text normalization with a way back to the original offsets.

Normalized form: Unicode NFKC, case-folded, zero-width characters removed, every run of whitespace
(non-breaking spaces included) collapsed to one space. Findings are reported at offsets of the
*original* text, so redaction can rewrite exactly what the agent wrote.

The common case — ASCII text — stays in C: ``str.lower`` keeps offsets, one ``re.sub`` collapses
whitespace, and the offset map is only built when something was found.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable

__all__ = ["Normalized", "digits_of", "normalize", "normalize_key"]

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_WS_RUN = re.compile(r"\s+")
_IRREGULAR_WS = re.compile(r"[^\S ]| {2,}")
_NON_DIGIT = re.compile(r"\D")


def normalize_key(s: str) -> str:
    """The normalized form of an atom value, alias or variant (what the automaton stores)."""
    s = unicodedata.normalize("NFKC", s.translate(_ZERO_WIDTH)).casefold()
    return " ".join(s.split())


def digits_of(s: str) -> str:
    """ASCII digits of ``s`` (full-width and other Unicode decimal digits included)."""
    d = _NON_DIGIT.sub("", s)
    return d if d.isascii() else "".join(str(unicodedata.digit(c)) for c in d)


class Normalized:
    """A normalized text plus ``to_original(start, end)`` mapping a normalized span back."""

    __slots__ = ("_map", "text")

    def __init__(self, text: str, mapper: Callable[[int, int], tuple[int, int]] | None) -> None:
        self.text = text
        self._map = mapper

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        return (start, end) if self._map is None else self._map(start, end)


def normalize(text: str) -> Normalized:
    if text.isascii():
        low = text.lower()
        # ASCII tab/newline/CR/VT/FF are exactly its non-printable whitespace: two C-speed checks
        # decide whether offsets can stay as they are.
        if "  " not in text and (text.isprintable() or _IRREGULAR_WS.search(text) is None):
            return Normalized(low, None)
        return _collapse_ascii(low)
    return _normalize_unicode(text)


def _collapse_ascii(low: str) -> Normalized:
    out = _WS_RUN.sub(" ", low)

    def mapper(start: int, end: int) -> tuple[int, int]:
        # Built lazily: only texts with a finding pay for the map.
        norm_starts: list[int] = []
        shifts: list[int] = []
        shift = 0
        for m in _WS_RUN.finditer(low):
            n = m.end() - m.start()
            if n > 1 or low[m.start()] != " ":
                norm_starts.append(m.start() - shift)
                shift += n - 1
                shifts.append(shift)

        def one(i: int) -> int:
            k = bisect_right(norm_starts, i) - 1
            if k < 0:
                return i
            if i == norm_starts[k]:  # the single space standing for a whole run
                return i + (shifts[k - 1] if k else 0)
            return i + shifts[k]

        return one(start), one(end - 1) + 1

    return Normalized(out, mapper)


def _normalize_unicode(text: str) -> Normalized:
    out: list[str] = []
    offsets: list[int] = []
    for i, ch in enumerate(text):
        if ord(ch) in _ZERO_WIDTH:
            continue
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                offsets.append(i)
            continue
        piece = ch.lower() if ch.isascii() else unicodedata.normalize("NFKC", ch).casefold()
        for c in piece:
            if c.isspace():
                if out and out[-1] != " ":
                    out.append(" ")
                    offsets.append(i)
            else:
                out.append(c)
                offsets.append(i)

    def mapper(start: int, end: int) -> tuple[int, int]:
        return offsets[start], offsets[end - 1] + 1

    return Normalized("".join(out), mapper)
