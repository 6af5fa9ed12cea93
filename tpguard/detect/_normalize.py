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
paths), and ``to_original`` is one ``bisect`` — O(log n).
"""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from operator import add, ne

from ._confusables import fold

__all__ = ["Normalized", "digits_of", "normalize", "normalize_key"]

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
#: a text with more non-ASCII characters than one per this many takes the token pass (non-ASCII
#: throughout: a stretch between two tokens would be a few characters, its C calls all overhead)
_SPARSE = 8
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


def _split_segments(parts: list[str]) -> _Segments:
    """Segments of a capturing ``_IRREGULAR_SPLIT`` split (text and whitespace runs alternate), each
    run one space in the normalized text, run lengths in ``ol``; runs of one character included."""
    runs = list(map(len, parts[1::2]))
    plain = list(map(len, parts[0::2]))
    k = len(runs)
    os_ = list(accumulate(map(add, plain, [0, *runs])))[:k]
    ns = list(accumulate(map(add, plain, [0, *([1] * k)])))[:k]
    return ns, [1] * k, os_, runs


def _fold(s: str) -> str:
    """Normalize a decoded escape: NFKC, case fold, whitespace collapsed, invisibles dropped."""
    s = unicodedata.normalize("NFKC", s).casefold()
    return _WS_RUN.sub(" ", s.translate(_DEL_INVISIBLE))


class _Builder:
    """The general path: one ``finditer`` over irregular tokens, plain ASCII copied between them."""

    __slots__ = ("last_space", "n", "nfkc", "nl", "ns", "ol", "os", "pieces", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pieces: list[str] = []
        self.ns: list[int] = []
        self.nl: list[int] = []
        self.os: list[int] = []
        self.ol: list[int] = []
        self.n = 0
        self.last_space = False
        self.nfkc = unicodedata.is_normalized("NFKC", text)

    def run(self) -> Normalized:
        """Every irregular token of the text, plain ASCII copied between them."""
        text, pos = self.text, 0
        memo: dict[str, str | None] = {}  # a token → its normalized form (None: per character)
        for m in _TOKEN.finditer(text):
            s, e = m.span()
            if s > pos:
                self.plain(pos, text[pos:s].lower())
            self.token(m.lastgroup, m.group(), s, e, memo)
            pos = e
        if pos < len(text):
            self.plain(pos, text[pos:].lower())
        return self.done()

    def run_sparse(self) -> Normalized:
        """The same for a text without escapes or invisible marks whose non-ASCII letters are few:
        only the runs of non-ASCII letters are tokens (found by one ``search`` each, in C); the
        stretches between them, whitespace included, go through :meth:`stretch`. Same text, same
        segments as :meth:`run` (the token pattern's ``uni`` runs hold no whitespace, and a
        whitespace token never touches one, so the tokens of the two passes are the same)."""
        text, pos = self.text, 0
        memo: dict[str, str | None] = {}
        m = _UNI_START.search(text)
        while m is not None:
            p = m.start()
            # a letter right before the run is part of it (an accent composes with it)
            s = p - 1 if p > pos and text[p - 1] in _ASCII_LETTERS else p
            e = _UNI.match(text, s).end()  # type: ignore[union-attr]  # text[p] starts a run
            if s > pos:
                self.stretch(pos, text[pos:s])
            self.token("uni", text[s:e], s, e, memo)
            pos = e
            m = _UNI_START.search(text, e)
        if pos < len(text):
            self.stretch(pos, text[pos:])
        return self.done()

    def one_to_one(self) -> str | None:
        """The text lower-cased, each run of non-ASCII letters replaced by its normalized form —
        when every one of them keeps its length and holds no space (an accent, a curly quote; not
        ``ß`` → ``ss``, not a combining accent after its letter): then only whitespace moves offsets,
        as in an NFKC-normal text, and the whitespace pass of the ASCII path finishes it (its
        offset map has the runs of one character as segments of one character, which map as if
        they were not there). ``None``: some run changes length, :meth:`run_sparse` maps it."""
        text, pos = self.text, 0
        memo: dict[str, str | None] = {}
        pieces: list[str] = []
        m = _UNI_START.search(text)
        while m is not None:
            p = m.start()
            s = p - 1 if p > pos and text[p - 1] in _ASCII_LETTERS else p
            e = _UNI.match(text, s).end()  # type: ignore[union-attr]  # text[p] starts a run
            tok = text[s:e]
            rep = memo[tok] if tok in memo else memo.setdefault(tok, self.replacement("uni", tok))
            if rep is None or len(rep) != e - s or " " in rep:
                return None
            pieces.append(text[pos:s].lower())
            pieces.append(rep)
            pos = e
            m = _UNI_START.search(text, e)
        pieces.append(text[pos:].lower())
        return fold("".join(pieces))

    def done(self) -> Normalized:
        out = "".join(self.pieces)
        if not out.isascii():
            out = fold(out)
        return Normalized(out, (self.ns, self.nl, self.os, self.ol))

    def token(self, kind: str | None, tok: str, s: int, e: int, memo: dict[str, str | None]) -> None:
        """Append one irregular token ``tok`` = ``text[s:e]``."""
        if tok in memo:
            rep = memo[tok]
        else:  # a text that repeats its escapes, accents or whitespace decodes each once
            rep = memo[tok] = self.replacement(kind, tok)
        if rep is None:
            for i, c in enumerate(tok):
                self.emit(s + i, s + i + 1, c.casefold())
        elif kind == "uni" and tok[-1].isascii() and len(rep) != e - s:
            # the ASCII letters that end the word are themselves: only the run before them
            # is one segment (an accent composing with ``i`` in ``Mari\u0301a`` is not ``a``)
            k = len(tok) - len(tok.rstrip(_ALNUM))
            if rep.endswith(tok[-k:].lower()):
                self.emit(s, e - k, rep[:-k])
                self.emit(e - k, e, rep[-k:])
            else:
                self.emit(s, e, rep)
        else:
            self.emit(s, e, rep)

    def stretch(self, o_start: int, s: str) -> None:
        """Append a stretch without non-ASCII letters (ASCII, and whitespace of any kind) as
        :meth:`plain` and :meth:`emit` would, token by token, but in C: every whitespace run other
        than one space becomes one space, a segment where that changes the length; O(len(s)) with
        no Python per run (one capturing ``split``, ``accumulate`` and ``compress``)."""
        if self.last_space and s[0].isspace():  # after a token that ended with a space: cut
            k = len(s) - len(s.lstrip())
            self.emit(o_start, o_start + k, "")
            s, o_start = s[k:], o_start + k
            if not s:
                return
        low = s.lower()
        parts = _IRREGULAR_SPLIT.split(low)
        out = " ".join(parts[0::2]) if len(parts) > 1 else low
        if len(parts) > 1:
            ns, _, os_, runs = _split_segments(parts)
            keep = list(map(ne, runs, repeat(1)))  # a run of one character keeps its length
            if (keep[0] and not parts[0] and self.os and self.os[-1] + self.ol[-1] == o_start
                    and self.ns[-1] + self.nl[-1] == self.n):
                self.nl[-1] += 1  # a run right after a segment: merged with it, as emit does
                self.ol[-1] += runs[0]
                keep[0] = False
            self.ns.extend(map(add, compress(ns, keep), repeat(self.n)))
            self.os.extend(map(add, compress(os_, keep), repeat(o_start)))
            self.ol.extend(compress(runs, keep))
            self.nl.extend(repeat(1, len(self.ns) - len(self.nl)))
        self.pieces.append(out)
        self.n += len(out)
        self.last_space = out[-1] == " "

    def replacement(self, kind: str | None, tok: str) -> str | None:
        """The normalized form of one irregular token; ``None``: case-fold it character by
        character (a character that folds to several, ``ß`` → ``ss``, gets a segment of its own)."""
        if kind == "ws":
            return " " if any(c.isspace() for c in tok) else ""
        if kind == "pct":
            # a run of %XX decoded as UTF-8 in C, into one segment (its characters' segments would
            # merge into one anyway: they are adjacent); not UTF-8: kept as written
            try:
                return _fold(bytes.fromhex(tok.replace("%", "")).decode("utf-8"))
            except UnicodeDecodeError:
                return tok.lower()
        if kind == "ent":
            decoded = html.unescape(tok)
            return _fold(decoded) if decoded != tok else tok.lower()
        if self.nfkc:
            folded = tok.casefold()
            return folded if len(folded) == len(tok) else None
        # Not NFKC: the run at once (an accent composes with the letter before it); a segment
        # when that changes its length
        return _WS_RUN.sub(" ", unicodedata.normalize("NFKC", tok).casefold())

    def plain(self, o_start: int, s: str) -> None:
        """Append ASCII text copied as is (a single space may lead it: one after a space is cut)."""
        if self.last_space and s[0] == " ":
            self.emit(o_start, o_start + 1, "")
            s = s[1:]
            if not s:
                return
        self.pieces.append(s)
        self.n += len(s)
        self.last_space = s[-1] == " "

    def emit(self, o_start: int, o_end: int, rep: str) -> None:
        """Append ``rep`` for the original ``[o_start, o_end)``; a segment unless same length."""
        if rep.startswith(" ") and self.last_space:
            rep = rep[1:]
        if rep:
            self.pieces.append(rep)
            self.last_space = rep[-1] == " "
        if len(rep) != o_end - o_start:
            if self.os and self.os[-1] + self.ol[-1] == o_start and self.ns[-1] + self.nl[-1] == self.n:
                self.nl[-1] += len(rep)  # merge with the adjacent segment before
                self.ol[-1] += o_end - o_start
            else:
                self.ns.append(self.n)
                self.nl.append(len(rep))
                self.os.append(o_start)
                self.ol.append(o_end - o_start)
        self.n += len(rep)
