"""Records inside a text result: JSON, NDJSON, CSV and markdown tables (issue 28, item 3).

A tool result is often text that *holds* records: JSON after a BOM or a prefix line ("Found 3
visits:"), in a ```` ```json ```` fence, one JSON object per line (NDJSON), JSON as bytes, a CSV
export or a markdown table. :func:`read_structured` finds them so the acquisition scope applies to
the records (subjects, window, fields) instead of scanning them as prose. It returns a
:class:`Structured`: the payload to walk — the records alone, or a tuple of text segments and
record blocks when prose surrounds them — and :meth:`Structured.render` writes a filtered payload
back as the same kind of text (JSON stays JSON, a table stays a table, bytes stay bytes).

What is read (the first that applies): fenced blocks (```` ```json ````, ```` ```ndjson ````, an
unlabelled fence holding JSON, ```` ```csv ````) → bare JSON starting at a line's first ``[``/``{``
(the first :data:`MAX_STARTS` such lines are tried), followed by more values (NDJSON) → markdown
tables (a header row and a ``|---|`` separator) → one CSV block (``,``, ``;`` or tab; a header
row of unique, non-empty names and at least one row of the same width). Header row = keys. Cost:
O(size of the text) — fences and separators are found with ``str.find`` (at most
:data:`MAX_CANDIDATES` of each are looked at), line starts with one regex scan, JSON is tried at
most :data:`MAX_STARTS` times, CSV rows are read by :mod:`csv`. What is not read as records stays
text: a scope with record dimensions then says it could not be applied (fail closed).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MAX_STARTS", "Structured", "read_structured"]

Kind = Literal["json", "ndjson", "csv", "markdown"]
#: at most this many line starts with ``[``/``{`` are tried as JSON (prose may start lines so)
MAX_STARTS = 8
#: at most this many fenced blocks or tables are read from one text
MAX_BLOCKS = 256
#: at most this many fences or table separators are looked at (bounds the work on adversarial text)
MAX_CANDIDATES = 1024
_BOM = "\ufeff"
_SEP = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*\r?")
_START = re.compile(r"\n[ \t]*[\[{]")
_JSON_LANGS = frozenset({"", "json", "ndjson", "jsonl", "json5"})
_DECODER = json.JSONDecoder()
_MAX_HEADER = 80


@dataclass(frozen=True, slots=True)
class _Block:
    start: int
    end: int
    kind: Kind
    data: Any
    delimiter: str = ","
    header: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Structured:
    """Records found in a text, with the prose around them (see the module docstring)."""

    text: str
    blocks: tuple[_Block, ...]
    as_bytes: bool = False

    @property
    def wrapped(self) -> bool:
        """Prose around the records: the payload is a tuple of segments, not the records alone."""
        b = self.blocks
        return len(b) != 1 or bool(self.text[:b[0].start].strip() or self.text[b[0].end:].strip())

    @property
    def payload(self) -> Any:
        if not self.wrapped:
            return self.blocks[0].data
        out: list[Any] = []
        at = 0
        for b in self.blocks:
            out += [self.text[at:b.start], b.data]
            at = b.end
        out.append(self.text[at:])
        return tuple(out)

    def render(self, filtered: Any) -> str | bytes:
        """``filtered`` (the payload with items removed or rewritten) as text of the same kinds."""
        if not self.wrapped:
            text = _render(self.blocks[0], filtered)
        else:
            parts = list(filtered)
            text = "".join(parts[k] if k % 2 == 0 else _render(self.blocks[k // 2], parts[k])
                           for k in range(len(parts)))
        return text.encode("utf-8") if self.as_bytes else text


def read_structured(result: Any) -> Structured | None:
    """The records held in a text (or UTF-8 bytes) result, else ``None``."""
    as_bytes = isinstance(result, bytes | bytearray)
    if as_bytes:
        try:
            result = bytes(result).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(result, str) or not result:
        return None
    text = result[1:] if result.startswith(_BOM) else result
    blocks = _fenced(text) or _bare_json(text) or _tables(text) or _csv(text)
    return Structured(text, tuple(blocks), as_bytes) if blocks else None


# -- JSON ---------------------------------------------------------------------------------------
def _json_values(text: str, pos: int, end: int) -> tuple[Any, int, Kind] | None:
    """One JSON array/object at ``pos``, and any more that follow it (NDJSON), up to ``end``."""
    try:
        first, at = _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's limit
        return None
    if not isinstance(first, dict | list) or at > end:
        return None
    values = [first]
    while True:
        nxt = _skip_ws(text, at, end)
        if nxt >= end or text[nxt] not in "[{":
            break
        try:
            value, after = _DECODER.raw_decode(text, nxt)
        except (ValueError, RecursionError):
            break
        if after > end:
            break
        values.append(value)
        at = after
    if len(values) == 1:
        return first, at, "json"
    return values, at, "ndjson"


def _skip_ws(text: str, at: int, end: int) -> int:
    while at < end and text[at] in " \t\r\n":
        at += 1
    return at


def _bare_json(text: str) -> list[_Block]:
    """JSON at the first of :data:`MAX_STARTS` lines whose first non-blank is ``[``/``{``."""
    tries = 0
    for opener in _line_starts(text, "[{"):
        got = _json_values(text, opener, len(text))
        if got is not None:
            return [_Block(opener, got[1], got[2], got[0])]
        tries += 1
        if tries >= MAX_STARTS:
            break
    return []


def _line_starts(text: str, chars: str) -> Iterator[int]:
    """Positions of ``[``/``{`` that only blanks precede on their line, in order (one C-level
    regex scan for a newline, blanks and a bracket — no Python loop over the brackets)."""
    if "[" not in text and "{" not in text:
        return
    first = len(text) - len(text.lstrip(" \t"))
    if text[first:first + 1] and text[first] in chars:
        yield first
    for m in _START.finditer(text):
        yield m.end() - 1


def _fenced(text: str) -> list[_Block]:
    """```` ```lang ```` fences holding JSON, NDJSON or CSV; a forward scan (linear)."""
    out: list[_Block] = []
    at = 0
    for _ in range(MAX_CANDIDATES):
        if len(out) >= MAX_BLOCKS:
            break
        open_ = text.find("```", at)
        if open_ < 0:
            break
        line_end = text.find("\n", open_ + 3)
        if line_end < 0:
            break
        close = text.find("```", line_end)
        if close < 0:
            break
        lang = text[open_ + 3:line_end].strip().casefold()
        body_start, body_end = line_end + 1, close
        block = None
        if lang in _JSON_LANGS:
            pos = _skip_ws(text, body_start, body_end)
            got = _json_values(text, pos, body_end) if pos < body_end and text[pos] in "[{" else None
            if got is not None and not text[got[1]:body_end].strip():
                block = _Block(pos, got[1], got[2], got[0])
        elif lang in ("csv", "tsv"):
            found = _csv(text[body_start:body_end])
            if found and not text[body_start + found[0].end:body_end].strip():
                b = found[0]
                block = _Block(body_start + b.start, body_start + b.end, b.kind, b.data, b.delimiter,
                               b.header)
        if block is not None:
            out.append(block)
        at = close + 3
    return out


# -- markdown tables ----------------------------------------------------------------------------
def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]


def _tables(text: str) -> list[_Block]:
    out: list[_Block] = []
    at = text.find("---") if "|" in text else -1
    for _ in range(MAX_CANDIDATES):
        if at < 0 or len(out) >= MAX_BLOCKS:
            break
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        block = _table_at(text, line_start, line_end) if _SEP.fullmatch(text, line_start, line_end) else None
        if block is not None:
            out.append(block)
            line_end = block.end
        at = text.find("---", line_end)
    return out


def _table_at(text: str, sep_start: int, sep_end: int) -> _Block | None:
    """The table whose separator line is ``text[sep_start:sep_end]`` (its header is the line above)."""
    head_end = sep_start - 1
    if head_end < 0:
        return None
    head_start = text.rfind("\n", 0, head_end) + 1
    header = text[head_start:head_end]
    keys = _cells(header)
    if "|" not in header or not _good_header(keys):
        return None
    rows: list[dict[str, str]] = []
    end = sep_end
    at = sep_end + 1
    while at < len(text):
        nl = text.find("\n", at)
        nl = len(text) if nl < 0 else nl
        line = text[at:nl]
        if "|" not in line or not line.strip():
            break
        rows.append(dict(zip(keys, _fit(_cells(line), len(keys)), strict=True)))
        end, at = nl, nl + 1
    return _Block(head_start, end, "markdown", rows, header=tuple(keys))


def _fit(cells: list[str], n: int) -> list[str]:
    """A row's cells to the header's width: extra cells joined into the last, missing ones empty."""
    if len(cells) > n:
        return [*cells[:n - 1], " | ".join(cells[n - 1:])]
    return cells + [""] * (n - len(cells))


def _good_header(keys: list[str]) -> bool:
    return (len(keys) >= 2 and all(keys) and len(set(keys)) == len(keys)
            and all(len(k) <= _MAX_HEADER for k in keys))


# -- CSV ----------------------------------------------------------------------------------------
def _csv(text: str) -> list[_Block]:
    """The first CSV block: a header within the first three lines, then rows of the same width."""
    offset = 0
    at = 0
    for _ in range(3):
        nl = text.find("\n", at)
        line = text[at:] if nl < 0 else text[at:nl + 1]
        if not line:
            break
        delim = max((",", ";", "\t"), key=line.count)
        if line.count(delim) >= 1:
            block = _csv_from(text, offset, delim)
            if block is not None:
                return [block]
        offset = at = at + len(line)
    return []


def _csv_from(text: str, offset: int, delim: str) -> _Block | None:
    lengths: list[int] = []

    def lines() -> Iterator[str]:
        for line in io.StringIO(text[offset:], newline=""):
            lengths.append(len(line))
            yield line

    reader = csv.reader(lines(), delimiter=delim)
    try:
        keys = [k.strip() for k in next(reader)]
    except (StopIteration, csv.Error):
        return None
    if not _good_header(keys):
        return None
    rows: list[dict[str, str]] = []
    used = reader.line_num
    try:
        for row in reader:
            if len(row) != len(keys):
                break
            rows.append(dict(zip(keys, row, strict=True)))
            used = reader.line_num
    except csv.Error:
        pass
    if not rows:
        return None
    return _Block(offset, offset + sum(lengths[:used]), "csv", rows, delim, tuple(keys))


# -- writing back -------------------------------------------------------------------------------
def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _render(block: _Block, data: Any) -> str:
    if block.kind == "json":
        return _dumps(data)
    if block.kind == "ndjson":
        return "\n".join(_dumps(v) for v in data)
    rows = [r for r in data if isinstance(r, dict)]
    keys = list(dict.fromkeys(k for r in rows for k in r)) or list(block.header)
    if block.kind == "markdown":
        lines = ["| " + " | ".join(str(k) for k in keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(str(r.get(k, "")).replace("|", "\\|") for k in keys) + " |"
                  for r in rows]
        return "\n".join(lines)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=block.delimiter, lineterminator="\n")
    writer.writerow(keys)
    writer.writerows([r.get(k, "") for k in keys] for r in rows)
    return buf.getvalue()
