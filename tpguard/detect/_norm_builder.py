"""The general path of normalization (:class:`_Builder`): irregular tokens — escapes, runs of
non-ASCII letters, whitespace other than one space — each normalized once, with the segments of the
offset map; the ASCII between them copied (see :mod:`tpguard.detect._normalize`)."""

from __future__ import annotations

import html
import unicodedata
from itertools import compress, repeat
from operator import add, ne

from ._confusables import fold
from ._norm_tables import (
    _ALNUM,
    _ASCII_LETTERS,
    _DEL_INVISIBLE,
    _IRREGULAR_SPLIT,
    _TOKEN,
    _UNI,
    _UNI_START,
    _WS_RUN,
)
from ._offset_map import Normalized, _split_segments


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
