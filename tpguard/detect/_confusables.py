"""One-to-one folding of look-alike characters, applied after NFKC and case folding.

NFKC already folds full-width forms, ligatures and mathematical letters. What it leaves are
letters of other scripts that *look* Latin — Cyrillic ``а е о р с``, Greek ``ο ρ ν`` — and decimal
digits of other scripts (``٤٤١٧``). Both are folded here, each character to exactly one character,
so folding never moves an offset and the normalization offset map stays exact.

Why a small table and not a package: Unicode TR39's confusable *skeleton* (what
``confusable_homoglyphs``/``confusables`` implement) maps some characters to several characters
and others to nothing, which would break the one-to-one offset map redaction relies on; it also
folds Latin letters into each other (``rn`` → ``m``), which would make ordinary words collide. The
table below holds only lower-case Cyrillic/Greek/other letters whose lower *and* upper case forms
are visually a Latin letter (the text is case-folded first).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["FOLD", "fold"]

_LATIN_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "і": "i", "ї": "i", "ј": "j", "к": "k",
    "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "һ": "h", "ү": "y", "ɡ": "g",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    # Latin-script look-alikes and Armenian
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "օ": "o", "ս": "u", "ց": "g",
}


class _Fold(dict[int, int]):
    """``str.translate`` table: look-alike letters → Latin, any decimal digit → ASCII digit.

    Filled on first sight of each code point (a dict subclass with ``__missing__``), so importing
    costs nothing and each distinct character is classified once.
    """

    def __missing__(self, cp: int) -> int:
        ch = chr(cp)
        target = _LATIN_LOOKALIKES.get(ch)
        if target is not None:
            out = ord(target)
        elif cp > 0x7F and ch.isdecimal():
            out = ord("0") + unicodedata.decimal(ch)
        else:
            out = cp
        self[cp] = out
        return out


#: The folding table (pass to ``str.translate``); maps every character to exactly one character.
FOLD = _Fold()

#: a character :data:`FOLD` changes: a look-alike letter or a decimal digit other than ASCII's
_FOLDABLE = re.compile("[" + "".join(_LATIN_LOOKALIKES) + "]|(?![0-9])\\d")
_ASCII_RUN = re.compile("[\x00-\x7f]+")


def fold(s: str, odd: str | None = None) -> str:
    """``s.translate(FOLD)``, skipped when no character of ``s`` folds (``str.translate`` with a dict
    costs a look-up per character of a non-ASCII text). Every character that folds is non-ASCII, so
    the search runs over the non-ASCII characters only: cutting the ASCII runs out is one ``re.sub``
    in C whose cost is per run (~1.5 ms for a 1 MB export with a few accents, where ``_FOLDABLE``
    over the whole text, a class test and a ``\\d`` look-ahead a character, took ~40 ms). ``odd``: a
    string that holds every non-ASCII character of ``s``, when the caller has one."""
    if s.isascii():
        return s
    probe = _ASCII_RUN.sub("", s) if odd is None else odd
    return s.translate(FOLD) if _FOLDABLE.search(probe) is not None else s
