"""The character classes and patterns normalization (:mod:`tpguard.detect._normalize`) tests a text
against: invisible marks, full-width forms and their 1:1 fold, combining accents, whitespace runs,
escapes, and the irregular tokens of the general path (:mod:`tpguard.detect._norm_builder`)."""

from __future__ import annotations

import re
import unicodedata

#: Invisible characters removed outright: zero-width, word joiners, soft hyphen, bidi marks.
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
_DEL_INVISIBLE = dict.fromkeys(map(ord, _INVISIBLE))
#: invisible marks → NUL, NUL → SOH: ``split("\0")`` cuts exactly where a mark was
_INVISIBLE_TO_NUL = {**dict.fromkeys(map(ord, _INVISIBLE), 0), 0: 1}
_WIDE_RE = re.compile("[\u3000\uff01-\uff5e]")


def _wide_table() -> dict[int, str]:
    """Full-width forms (and the ideographic space) whose NFKC case fold is one ASCII character:
    folded 1:1 by ``str.translate`` before anything else, so a text of full-width digits takes the
    ASCII path. ``％ ＆ ＃ ；`` stay as they are: folded first they could form an escape that NFKC
    after decoding never would (escapes are decoded once, as written)."""
    table = {}
    for cp in (0x3000, *range(0xFF01, 0xFF5F)):
        folded = unicodedata.normalize("NFKC", chr(cp)).casefold()
        if len(folded) == 1 and folded.isascii() and folded not in "%&#;":
            table[cp] = folded
    return table


_WIDE = _wide_table()
_MARK_RE = re.compile("[\u0300-\u036f]")
_NOT_MARK_RE = re.compile("[^\x00-\x7f\u0300-\u036f]")
#: a character that is neither ASCII nor one of :data:`_WIDE`'s full-width forms
_NOT_WIDE_RE = re.compile("[^\x00-\x7f" + "".join(map(chr, _WIDE)) + "]")
_WS_RUN = re.compile(r"\s+")
_IRREGULAR_WS = re.compile(r"[^\S ]| {2,}")
_IRREGULAR_SPLIT = re.compile(r"(\s{2,}|[^\S ])")
_ASCII_RUN = re.compile("[\x00-\x7f]+")
#: where a run of non-ASCII letters starts (whitespace is not one: the ASCII stretches collapse it)
_UNI_START = re.compile(rf"[^\x00-\x7f\s{_INVISIBLE}]")
#: a run of non-ASCII letters with the word around it: ``_TOKEN``'s ``uni`` group
_UNI = re.compile(rf"[A-Za-z]?(?:[^\x00-\x7f\s{_INVISIBLE}]+[A-Za-z0-9]*)+")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_TOKEN = re.compile(
    # whitespace other than one plain space (which stays in the ASCII copied between tokens)
    rf"(?P<ws>[\s{_INVISIBLE}]{{2,}}|[^\S ]|[{_INVISIBLE}])"
    r"|(?P<pct>(?:%[0-9A-Fa-f]{2})+)"
    r"|(?P<ent>(?:&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)+)"
    # a run of non-ASCII characters with the ASCII letter before it (a combining accent composes
    # with it under NFKC) and the rest of its word: an accent on every vowel is a token a word, not
    # a token a vowel (the classes are disjoint, so the match is linear)
    rf"|(?P<uni>{_UNI.pattern})"
)
_NON_DIGIT = re.compile(r"\D")
_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
