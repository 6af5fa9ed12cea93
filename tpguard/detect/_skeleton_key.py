"""What a numeric or identifier key is, and when a digit hit counts: the separators a skeleton
drops, :func:`is_numeric` and :func:`skeleton_key`, and the boundary and grouping rule of
:mod:`tpguard.detect._digits` (:func:`_digit_span`), which :class:`~tpguard.detect._digits.SkeletonIndex`
applies to every digit hit."""

from __future__ import annotations

import re

from ._normalize import digits_of

__all__ = ["is_numeric", "skeleton_key"]

_DASHES = "\\-\u058a\u05be\u1400\u1806\u2010-\u2015\u2212\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d"
_SEP = rf"[\s{_DASHES}_./:,()\[\]+#'\u2019]"
_SEP_CHARS = " -_./:,()[]+#'\u2019\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d"
_SEP_DELETE = dict.fromkeys(map(ord, _SEP_CHARS))
_SEP_BYTES = _SEP_CHARS[:14].encode("ascii")
#: kept characters → non-zero, separators → 0 (``compress`` keeps the offsets of the non-zero ones)
_KEEP_MASK = bytes(0 if c in _SEP_BYTES else 1 for c in range(256))
_SEP_RUN = re.compile(f"[{re.escape(_SEP_CHARS)}]+")
_SEP_ONE = re.compile(f"[{re.escape(_SEP_CHARS)}]")
_SEP_WIDE = re.compile(f"[{re.escape(_SEP_CHARS[14:])}]")  # the non-ASCII separators
_NUMERIC = re.compile(rf"(?:\d|{_SEP}|[$€£¥%*])+")
_ID_SHAPE = re.compile(rf"(?:[^\W_]|{_SEP})+")
_GROUP = re.compile(r"\d+")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_NON_ALNUM = re.compile(r"[\W_]+")
_THOUSANDS = frozenset({",", ".", "'", " ", "\u2019"})
_PHONE_DIGITS = 7


def is_numeric(key: str) -> bool:
    """True for a normalized key made of digits and separators only, with ≥ 4 digits."""
    return bool(_NUMERIC.fullmatch(key)) and len(digits_of(key)) >= 4


def skeleton_key(key: str) -> str | None:
    """The letters-and-digits skeleton of an identifier-like normalized key, else ``None``."""
    if _LETTER.search(key) is None or _DIGIT.search(key) is None or not _ID_SHAPE.fullmatch(key):
        return None
    if not all(_DIGIT.search(word) for word in key.split()):
        return None  # "type 2 diabetes" is words, not an identifier
    skel = _NON_ALNUM.sub("", key)
    return skel if len(skel) >= 4 else None


def _groupings(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(group lengths as written, group lengths with thousands groups joined)."""
    raw: list[int] = []
    joined: list[int] = []
    prev_end = -1
    for m in _GROUP.finditer(text):
        n = m.end() - m.start()
        gap = text[prev_end : m.start()] if prev_end >= 0 else ""
        raw.append(n)
        if joined and n == 3 and gap in _THOUSANDS:
            joined[-1] += n
        else:
            joined.append(n)
        prev_end = m.end()
    return tuple(raw), tuple(joined)


def _digit_by_digit(s: str, ns: int, ne: int) -> bool:
    """``4 4 1 7``: the hit is its digits one by one, each two one space apart, and the run ends
    there — no digit group one space before or after it (``3 4 4 1 7`` and ``4 4 1 7 2`` are other
    number sequences, a row of scores). O(length of the hit)."""
    text = s[ns:ne]
    if len(text) % 2 == 0 or not text[::2].isdigit() or text[1::2].strip(" "):
        return False
    return not ((ns >= 2 and s[ns - 1] == " " and s[ns - 2].isdigit())
                or (ne + 1 < len(s) and s[ne] == " " and s[ne + 1].isdigit()))


def _digit_span(s: str, ns: int, ne: int, length: int, raw: tuple[int, ...],
                joined: tuple[int, ...]) -> tuple[int, int] | None:
    """The text span of a digit hit if it obeys the boundary and grouping rules (:mod:`._digits`)."""
    if ne < len(s) and s[ne].isdigit():
        return None
    start = ns
    if ns > 0 and s[ns - 1].isdigit():  # inside a group: only after an international prefix
        j = ns
        while j > 0 and s[j - 1].isdigit():
            j -= 1
        k = ns - j
        if length < _PHONE_DIGITS:
            return None
        if j > 0 and s[j - 1] == "+" and k <= 3:
            start = j - 1
        elif s.startswith("00", j) and 3 <= k <= 5:
            start = j
        else:
            return None
    elif ns > 0 and s[ns - 1] == "+":
        start = ns - 1
    text = s[ns:ne]
    if not text.isdigit() and length < _PHONE_DIGITS:
        got_raw, got_joined = _groupings(text)
        if got_raw != raw and got_joined != joined and not _digit_by_digit(s, ns, ne):
            return None
    if start > 0 and s[start - 1] == "(" and ")" in s[start:ne]:  # "(415) 555-0199" whole
        start -= 1
    if ne < len(s) and s[ne] == ")" and "(" in s[start:ne]:
        ne += 1
    return start, ne
