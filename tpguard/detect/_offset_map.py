"""A normalized text and its exact way back to the original offsets (:class:`Normalized`, made by
:func:`tpguard.detect._normalize.normalize`), and the segments of its offset map from a whitespace
split (:func:`_split_segments`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate, repeat
from operator import add

__all__ = ["Normalized"]

_Segments = tuple[list[int], list[int], list[int], list[int]]


class Normalized:
    """A normalized text plus ``to_original(start, end)`` mapping a normalized span back.

    The map is a table of *segments* where normalized and original text differ in length
    (normalized start, normalized length, original start, original length); between segments the
    two texts correspond character for character. A span starting or ending inside a segment is
    widened to the whole segment (``%20`` is redacted whole, never half). When invisible marks were
    removed first (:func:`_prepass`), the segments index the text without them and ``cuts`` — the
    offset in that text of every removed mark — takes an offset the rest of the way back.
    """

    __slots__ = ("_build", "_cache", "_cuts", "_segs", "text")

    def __init__(self, text: str, segs: _Segments | None = None,
                 build: Callable[[], _Segments] | None = None) -> None:
        self.text = text
        self._segs = segs
        self._build = build
        self._cuts: list[int] | None = None
        #: derived forms the detectors compute once per text and share (the skeleton text)
        self._cache: dict[str, object] = {}

    def _segments(self) -> _Segments | None:
        if self._segs is None and self._build is not None:
            self._segs = self._build()  # idempotent: a race only builds it twice
            self._build = None
        return self._segs

    @property
    def identity(self) -> bool:
        """True when every normalized offset is its original offset (an ASCII text without escapes
        or irregular whitespace): :meth:`to_original` need not be called."""
        if self._cuts is not None:
            return False
        segs = self._segments()
        return segs is None or not segs[0]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Original ``(start, end)`` of the normalized span ``[start, end)``; O(log n)."""
        segs = self._segments()
        if segs is None or not segs[0]:
            o_start, o_end = start, end
        else:
            ns, nl, os_, ol = segs
            k = bisect_right(ns, start) - 1
            if k < 0:
                o_start = start
            elif start < ns[k] + nl[k]:
                o_start = os_[k]
            else:
                o_start = os_[k] + ol[k] + start - ns[k] - nl[k]
            last = end - 1
            k = bisect_right(ns, last) - 1
            if k < 0:
                o_end = end
            elif last < ns[k] + nl[k]:
                o_end = os_[k] + ol[k]
            else:
                o_end = os_[k] + ol[k] + last - ns[k] - nl[k] + 1
            o_end = max(o_end, o_start)
        cuts = self._cuts
        if cuts is None or o_end <= o_start:
            return o_start, o_end
        # character i of the text without marks is character i + (marks cut at or before i); the
        # marks right after the span's last character go with it
        return o_start + bisect_right(cuts, o_start), o_end + bisect_right(cuts, o_end)

    def to_original_many(self, starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
        """:meth:`to_original` of many spans (``starts[k]``, ``ends[k]``), in C when only marks were
        cut (no segment): a text with a mark between every two digits has a hit every few
        characters."""
        if self._cuts is not None and not (self._segments() or ((),))[0]:
            cuts = self._cuts
            return (list(map(add, starts, map(bisect_right, repeat(cuts), starts))),
                    list(map(add, ends, map(bisect_right, repeat(cuts), ends))))
        pairs = list(map(self.to_original, starts, ends))
        return [p[0] for p in pairs], [p[1] for p in pairs]


def _split_segments(parts: list[str]) -> _Segments:
    """Segments of a capturing ``_IRREGULAR_SPLIT`` split (text and whitespace runs alternate), each
    run one space in the normalized text, run lengths in ``ol``; runs of one character included."""
    runs = list(map(len, parts[1::2]))
    plain = list(map(len, parts[0::2]))
    k = len(runs)
    os_ = list(accumulate(map(add, plain, [0, *runs])))[:k]
    ns = list(accumulate(map(add, plain, [0, *([1] * k)])))[:k]
    return ns, [1] * k, os_, runs
