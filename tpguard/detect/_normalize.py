"""Text normalization with an exact way back to the original offsets.

Normalized form, in order: percent-escapes (``%20``, ``%C3%A9``) and HTML character references
(``&#32;``, ``&lt;``, ``&nbsp;``) decoded once; Unicode NFKC; case-folded; zero-width, soft-hyphen
and bidi marks removed; every run of whitespace collapsed to one space; look-alike letters of other
scripts and non-ASCII decimal digits folded to ASCII (:mod:`tpguard.detect._confusables`). Findings are
reported at offsets of the *original* text, so redaction rewrites exactly what the agent wrote.

Cost: O(n) for every input. ASCII text without escapes stays in C (``str.lower``, ``split``, ``join``).
A non-ASCII text's non-ASCII characters are gathered once (one ``re.sub`` in C cuts the ASCII runs
out) and every test of which kinds it holds — invisible marks, full-width forms, look-alikes,
whitespace of other scripts — runs on that short string. A text without escapes that is NFKC-normal
once its non-ASCII whitespace is a space (curly quotes, accented letters, a non-breaking space) stays
in C as well: case fold, then the ASCII path's whitespace pass. Otherwise a text whose non-ASCII
letters are few is normalized only where it needs it: each *run of non-ASCII letters* (with the word
around it) is one token of Python work — written in place when its normalized form keeps its length,
else mapped by a pass whose ASCII stretches between the tokens, whitespace runs included, are
lower-cased, collapsed and mapped in C. Only a text with escapes, or non-ASCII throughout, takes one
``re.finditer`` over every *irregular token* (a whitespace run other than one space, an escape, a
run of non-ASCII letters). Python work is per token, never per match. The offset map is a sorted
table of the irregular segments, built at most once per text (lazily for the whitespace-only
paths), and ``to_original`` is one ``bisect`` — O(log n). (The general path's token pass:
:mod:`tpguard.detect._norm_builder`; the character tables: :mod:`tpguard.detect._norm_tables`;
:class:`Normalized` and its offset map: :mod:`tpguard.detect._offset_map`.)
"""

from __future__ import annotations

import unicodedata
from itertools import accumulate

from ._confusables import fold
from ._norm_builder import _Builder
from ._norm_tables import (
    _ASCII_RUN,
    _DEL_INVISIBLE,
    _ESCAPE,
    _INVISIBLE,
    _INVISIBLE_RE,
    _IRREGULAR_SPLIT,
    _IRREGULAR_WS,
    _MARK_RE,
    _NON_DIGIT,
    _NOT_MARK_RE,
    _NOT_WIDE_RE,
    _WIDE,
    _WIDE_RE,
)
from ._offset_map import Normalized, _Segments, _split_segments

__all__ = ["digits_of", "normalize", "normalize_key"]

#: a text with more non-ASCII characters than one per this many takes the token pass (non-ASCII
#: throughout: a stretch between two tokens would be a few characters, its C calls all overhead)
_SPARSE = 8


def normalize_key(s: str) -> str:
    """The normalized form of an atom value, alias or variant (what the automata store)."""
    return " ".join(normalize(s).text.split())


#: every byte but the ASCII digits: what ``bytes.translate`` deletes from an ASCII text
_NON_DIGIT_BYTES = bytes(b for b in range(256) if not 0x30 <= b <= 0x39)


def digits_of(s: str) -> str:
    """ASCII digits of ``s`` (full-width and other Unicode decimal digits included). An ASCII text
    (``\\d`` matches only ``0-9`` there) keeps its digits by one ``bytes.translate``: a third of the
    regex ``sub``'s cost on a short window, and the fuzzy pass asks for one per candidate window."""
    if s.isascii():
        return s.encode("ascii").translate(None, _NON_DIGIT_BYTES).decode("ascii")
    d = _NON_DIGIT.sub("", s)
    return d if d.isascii() else "".join(str(unicodedata.digit(c)) for c in d)


def _non_ascii(text: str) -> str | None:
    """The non-ASCII characters of ``text`` in order, when they are few (at most one in
    ``_SPARSE``): its ASCII runs cut out by one ``re.sub`` in C (~1.5 ms for a 1 MB export with a
    few accents). ``None`` for a text that is non-ASCII throughout (counted by one ``encode``, in C),
    where the ``sub`` would cost a piece per run."""
    n_odd = len(text) - len(text.encode("ascii", "ignore"))
    return _ASCII_RUN.sub("", text) if n_odd * _SPARSE <= len(text) else None


def _prepass(text: str, odd: str | None) -> tuple[str, list[int] | None, str | None]:
    """Invisible marks removed and full-width forms folded, in C (``split``, ``accumulate``, NFKC):
    ``(text, cuts, odd)``, ``cuts`` the offset in the new text of every removed mark (``None`` when
    there was none). A mark between every two digits or a text of full-width digits would otherwise
    cost the general path a token each. ``odd``: the text's non-ASCII characters (:func:`_non_ascii`)
    — every test of which kinds are present runs on it rather than on the whole text — and
    returned for the new text (``None``: not known). O(n)."""
    cuts = None
    if _INVISIBLE_RE.search(text if odd is None else odd) is not None:
        present = [c for c in _INVISIBLE if c in (text if odd is None else odd)]
        pieces = text.split(present[0]) if len(present) == 1 else _INVISIBLE_RE.split(text)
        cuts = list(accumulate(map(len, pieces[:-1])))
        text = "".join(pieces)
        odd = None if odd is None else odd.translate(_DEL_INVISIBLE)
    if _WIDE_RE.search(text if odd is None else odd) is not None:
        # only full-width forms beside ASCII: NFKC maps each to one ASCII character, in C
        if _NOT_WIDE_RE.search(text if odd is None else odd) is None:
            text = unicodedata.normalize("NFKC", text)
        else:
            text = text.translate(_WIDE)
        odd = None
    probe = text if odd is None else odd
    if cuts is None and _MARK_RE.search(probe) is not None and _NOT_MARK_RE.search(probe) is None:
        # ASCII and combining accents only: when NFKC composes every accent with the letter before
        # it, the composed text is the text with the accents cut (each composed letter stands where
        # its base letter stood), so the accents' offsets are the cuts
        composed = unicodedata.normalize("NFKC", text)
        pieces = _MARK_RE.split(text)
        if len(composed) == len(text) - len(pieces) + 1:
            return composed, list(accumulate(map(len, pieces[:-1]))), None
    return text, cuts, odd


def normalize(text: str) -> Normalized:
    """Normalize ``text`` (see the module docstring); O(n)."""
    if text.isascii():
        return _normalize(text)
    plain, cuts, odd = _prepass(text, _non_ascii(text))
    norm = _normalize(plain, odd)
    norm._cuts = cuts
    return norm


def _normalize(text: str, odd: str | None = None) -> Normalized:
    escapes = ("%" in text or "&" in text) and _ESCAPE.search(text) is not None
    if text.isascii() and not escapes:
        low = text.lower()
        # ASCII tab/newline/CR/VT/FF are exactly its non-printable whitespace: two C-speed checks
        # decide whether offsets can stay as they are.
        if "  " not in text and (text.isprintable() or _IRREGULAR_WS.search(text) is None):
            return Normalized(low)
        return Normalized(_collapse(low), build=lambda: _whitespace_segments(low))
    if odd is None and not text.isascii():
        odd = _non_ascii(text)
    spaced = text
    if not escapes and odd is not None:
        # whitespace of other scripts (a non-breaking space) becomes one space whatever it is: as a
        # space it is NFKC-normal, so a text whose other characters are stays on this path
        for c in {c for c in odd if c.isspace()}:
            spaced = spaced.replace(c, " ")
    if not escapes and unicodedata.is_normalized("NFKC", spaced):
        folded = spaced.casefold()
        if len(folded) == len(spaced):  # each character folds to one: only whitespace moves offsets
            # casefold maps character by character: the folded text's non-ASCII characters are
            # among the casefolded non-ASCII characters of the text
            return _spaces_only(fold(folded, None if odd is None else odd.casefold()))
    builder = _Builder(text)
    if escapes or odd is None:
        return builder.run()  # escapes, or non-ASCII text throughout: one pass over every token
    kept = builder.one_to_one()
    return builder.run_sparse() if kept is None else _spaces_only(kept)


def _spaces_only(low: str) -> Normalized:
    """A normalized text but for its whitespace, whose characters each stand where the original's
    did: collapsed, its offset map the whitespace runs (built when first needed)."""
    # the whitespace class test costs ~35 ns a character of a non-ASCII text: a printable text
    # (every whitespace character but the space is not printable) needs none
    if "  " not in low and (low.isprintable() or _IRREGULAR_WS.search(low) is None):
        return Normalized(low)
    return Normalized(_collapse(low), build=lambda: _whitespace_segments(low))


def _collapse(low: str) -> str:
    r"""``low`` with every whitespace run as one space, in C: ``str.split()`` splits on exactly the
    characters ``\s`` matches (both are ``str.isspace``), ``join`` puts one space between the
    words, and the runs at either end, which ``split()`` drops, come back as one space each.
    ~4× faster than ``re.sub`` over a 100 KB multi-line text (0.9 against 3.9 ms)."""
    out = " ".join(low.split())
    if not out:
        return " " if low else ""
    if low[0].isspace():
        out = " " + out
    if low[-1].isspace():
        out += " "
    return out


def _whitespace_segments(low: str) -> _Segments:
    """Segments of an ASCII text whose only irregularity is whitespace; O(n), C-level loops
    (one capturing ``split`` — text and runs alternate — its lengths and ``accumulate``: no
    Python code per whitespace run)."""
    return _split_segments(_IRREGULAR_SPLIT.split(low))


