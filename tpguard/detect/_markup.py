"""Exit text as a person reads it: markup tags removed, with a map back to the text as written.

A recipient reads ``<b>hepatitis</b> B`` as "hepatitis B" and ``hepa<i></i>titis`` as "hepatitis":
the tags split a value for a scanner that reads the source but not for a reader. :func:`visible`
finds tags, comments, declarations and processing instructions with one regular expression and
``re.split``. It is hand-written rather than :class:`html.parser.HTMLParser` because the exit stage
is on the hot path: a first version built on the parser (a Python method call per token) rendered
1 MB of ordinary HTML in ~0.3 s and 1 MB of bare tags in ~0.5 s, several times the scan itself;
``re.split`` does both in ~20–50 ms. Tags that break a line in a browser (``p``, ``br``,
``li``, ``td``, …) become one space, every other tag and comment becomes nothing. A tag ends at its
first ``>`` (an attribute value holding ``>`` ends it early: the rest reads as text, which the
scan of the written text covers anyway). Character references are kept as
written — the normalizer decodes them (``&#104;epatitis``) and keeps its own offset map — and so is
everything between tags. :meth:`Visible.span` maps a span of the rendered text back to the text as
written, so a redaction rewrites what the recipient would have read.

Markdown (what a model's answer usually is) is read the same way: ``*``, ``~`` and backtick
markers that touch a word are removed (``hepa**titis**`` reads "hepatitis").

Only a text that holds something tag-shaped (``<`` then a letter, ``/``, ``!`` or ``?``) or a
marker touching a word is rendered (``str`` membership tests first: plain text costs ~nothing);
the exit stage scans both the written and the rendered text (attribute values and comments are
visible in the source a mail client shows), so rendering only adds findings.

Cost: O(len(text)) in ``re`` for the split and the join, O(tags) list work; the offsets are summed
once, when a first span is mapped, and each span then costs O(log tags).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, chain

__all__ = ["Visible", "visible"]

_HTML_SHAPED = re.compile(r"<[A-Za-z/!?]")
_TAG = r"<(?:/?([A-Za-z][A-Za-z0-9-]*)|[!?])[^<>]*>"
#: Markdown emphasis, strike-through and code markers that touch a word (``hepa**titis**``,
#: ``**Bob**``): CommonMark renders them without a character. Written charset-first so ``re``
#: skips to the next marker (a lookbehind first would be tried at every position: ~7x slower);
#: ``_`` is left alone (inside a word it is not emphasis), and so is ``2 * 3``.
_MARK = r"[*~`](?<=\w[*~`])[*~`]*|[*~`]+(?=\w)"
_MARKED = re.compile(_MARK)
#: each splits a text into text, tag, name (group 2; ``""`` for a Markdown marker), text, …; a tag
#: ends at its first ``>`` with no ``<`` inside, so each attempt stops at the next ``<`` and the
#: scan stays linear
_SPLIT_HTML = re.compile(f"({_TAG})")
_SPLIT_MARKS = re.compile(f"({_MARK})()")
_SPLIT_BOTH = re.compile(f"({_TAG}|{_MARK})")
#: elements a browser lays out on their own line (or cell): their tags read as a break
_BREAKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "ul",
})


class Visible:
    """A text as rendered: ``text``, read from the written text's pieces between tags (``texts``),
    each followed by what its tag reads as (``seps``: one space for a break, else nothing). The
    offsets that map it back are summed only when a span is mapped (most texts need none)."""

    __slots__ = ("_index", "seps", "tags", "text", "texts")

    def __init__(self, texts: list[str], tags: list[str], seps: list[str]) -> None:
        self.texts, self.tags, self.seps = texts, tags, seps
        self.text = "".join(chain.from_iterable(zip(texts[:-1], seps, strict=True))) + texts[-1]
        self._index: tuple[list[int], list[int]] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The written span ``[start', end')`` that the rendered ``[start, end)`` was read from."""
        return self._at(start, last=False), self._at(max(start, end - 1), last=True)

    def _at(self, i: int, *, last: bool) -> int:
        if self._index is None:
            rendered = [0, *accumulate(map(len, chain.from_iterable(zip(self.texts[:-1], self.seps, strict=True))))][::2]
            written = [0, *accumulate(map(len, chain.from_iterable(zip(self.texts[:-1], self.tags, strict=True))))][::2]
            self._index = rendered, written
        rendered, written = self._index
        k = bisect_right(rendered, i) - 1
        off = i - rendered[k]
        if off < len(self.texts[k]):
            return written[k] + off + last
        tag = written[k] + len(self.texts[k])  # inside the space a break tag reads as
        return tag + len(self.tags[k]) if last else tag


def visible(text: str) -> Visible | None:
    """``text`` as rendered, or ``None`` when it holds no markup (nothing to render).
    Cost: two passes of ``re`` over the text and O(tags) list work."""
    html = "<" in text and _HTML_SHAPED.search(text) is not None
    marks = ("*" in text or "~" in text or "`" in text) and _MARKED.search(text) is not None
    if not (html or marks):
        return None
    split = _SPLIT_BOTH if html and marks else _SPLIT_HTML if html else _SPLIT_MARKS
    parts = split.split(text)  # text, tag, name, text, tag, name, …, text
    if len(parts) == 1:
        return None
    names = parts[2::3]
    seps = ["" if n is None or n.lower() not in _BREAKS else " " for n in names]
    return Visible(parts[0::3], parts[1::3], seps)
