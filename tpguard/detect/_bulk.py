"""The detector's many-hit paths, in C: a text that repeats a few keys thousands of times.

A text of nothing but one atom (``"4417 "`` a megabyte long: a finding every five characters) is
written to make the per-hit Python of :meth:`tpguard.detect.detector.Detector._match_keys` and
``_resolve`` the whole cost of a scan. When a text has at least :data:`BULK` key hits from at most
:data:`MAX_KEYS` distinct keys, the hits of each key are checked and turned into matches with
``map``/``compress``/``zip`` over columns — no Python code per hit — and the findings of a sorted
match list without overlaps are built the same way. Same results as the per-hit loops (a test holds
them equal); cost O(hits × distinct keys) in C, so the path is taken only for a few distinct keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress, repeat
from operator import add, and_, eq, is_, itemgetter, lt, not_, or_, sub
from typing import Any

__all__ = ["BULK", "MAX_KEYS", "key_matches", "resolve", "with_verdicts"]

#: hits (matches) from which the column paths are taken
BULK = 256
#: distinct keys the column path of the key hits handles (each costs one pass over the hits)
MAX_KEYS = 8

_ALNUM_BYTES = bytes(1 if chr(c).isalnum() else 0 for c in range(128))
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _word_mask(s: str) -> bytes:
    """1 for every alphanumeric character of ``s``, 0 otherwise, padded by a 0 at either end (so
    the character before offset ``i`` is at ``i`` and the one after ``j - 1`` at ``j + 1``)."""
    if s.isascii():
        mask = s.encode("ascii").translate(_ALNUM_BYTES + bytes(128))
    else:
        mask = bytes(map(str.isalnum, s))
    return b"\0" + mask + b"\0"


def key_matches(text: str, s: str, ends: list[int], vals: list[Any], values: Sequence[str | None],
                to_original: Callable[[list[int], list[int]], tuple[list[int], list[int]]] | None,
                normalized: tuple[str, int],
                raw: list[Any]) -> list[tuple[Any, int]] | None:
    """The raw matches of the key automaton's hits over ``s`` — their last offsets ``ends`` and
    their keys' values ``vals``, the hits of one key the same tuple ``(length, left_word,
    right_word, entries, counts)`` — on token boundaries, appended to ``raw`` as the per-hit loop
    would, and ``(counts, times)`` for every key whose accepted hits count; ``None`` (nothing
    appended) when the hits come from more than :data:`MAX_KEYS` distinct keys. (Columns, not
    ``(end, value)`` pairs: the detector's automaton values are ints it maps to these tuples, and
    a list of 200k new pairs cost more than the whole column path.)"""
    distinct = dict(zip(map(id, vals), vals, strict=True))
    if len(distinct) > MAX_KEYS:
        return None
    mask = _word_mask(s)
    counted: list[tuple[Any, int]] = []
    for value in distinct.values():
        length, left_word, right_word, entries, counts = value
        mine = list(compress(ends, map(is_, vals, repeat(value)))) if len(distinct) > 1 else ends
        starts = list(map(sub, mine, repeat(length - 1)))
        stops = list(map(add, mine, repeat(1)))
        bad: Any = None
        if left_word:
            bad = map(mask.__getitem__, starts)
        if right_word:
            after = map(mask.__getitem__, map(add, stops, repeat(1)))
            bad = after if bad is None else map(or_, bad, after)
        if bad is not None:
            keep = list(map(not_, bad))
            starts, stops = list(compress(starts, keep)), list(compress(stops, keep))
        if not starts:
            continue
        if to_original is not None:
            starts, stops = to_original(starts, stops)
        for atom, method, priority in entries:
            _append(raw, text, values[atom], atom, method, priority, starts, stops, normalized)
        if counts:
            counted.append((counts, len(starts)))
    return counted


def _append(raw: list[Any], text: str, value: str | None, atom: int, method: str, priority: int,
            starts: list[int], stops: list[int], normalized: tuple[str, int]) -> None:
    """``(atom, start, start - end, priority, method, end, 1.0)`` per match; an ``exact`` match
    that is not the value as written is ``normalized``. ``value`` is ``None`` when every match is
    the value as written (a value without letters that is its own key, on a text whose offsets are
    its own: ``4417``)."""
    if method != "exact" or value is None:
        raw.extend(zip(repeat(atom), starts, map(sub, starts, stops), repeat(priority), repeat(method),
                       stops, repeat(1.0)))
        return
    same = list(map(eq, map(text.__getitem__, map(slice, starts, stops)), repeat(value)))
    for flag, (m, p) in ((True, (method, priority)), (False, normalized)):
        sel = same if flag else list(map(not_, same))
        a, b = list(compress(starts, sel)), list(compress(stops, sel))
        raw.extend(zip(repeat(atom), a, map(sub, a, b), repeat(p), repeat(m), b, repeat(1.0)))


def resolve(raw: list[Any], info: Mapping[int, tuple[str, str]], severity: Sequence[float], path: str,
            free_text: bool, new_finding: Callable[[tuple[Any, ...]], Any]) -> list[Any] | None:
    """The findings of a sorted match list in which no two matches of one atom overlap (then each
    match is its own finding), built over columns; ``None`` when some do."""
    atoms = list(map(_FIRST, raw))
    starts = list(map(itemgetter(1), raw))
    stops = list(map(itemgetter(5), raw))
    if any(map(and_, map(eq, atoms[1:], atoms), map(lt, starts[1:], stops))):
        return None
    pairs = list(map(info.__getitem__, atoms))
    columns = (list(map(_FIRST, pairs)), list(map(_SECOND, pairs)), [path] * len(raw),
               list(map(itemgetter(4), raw)), starts, stops, list(map(itemgetter(6), raw)),
               [free_text] * len(raw), list(map(severity.__getitem__, atoms)))
    return Columns(map(new_finding, zip(*columns, repeat(None))), columns)


class Columns(list[Any]):
    """Findings that keep the columns they were built from: :func:`with_verdicts` rebuilds them
    with their verdict from the columns (one tuple each) instead of slicing every finding. Any change
    to the list drops the columns (they would no longer be its findings)."""

    __slots__ = ("columns",)

    def __init__(self, items: Any, columns: tuple[list[Any], ...]) -> None:
        super().__init__(items)
        self.columns: tuple[list[Any], ...] | None = columns


def _dropping(name: str) -> Callable[..., Any]:
    method = getattr(list, name)

    def changed(self: Columns, *args: Any, **kwargs: Any) -> Any:
        self.columns = None
        return method(self, *args, **kwargs)

    changed.__name__ = name
    return changed


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
              "remove", "clear", "sort", "reverse"):
    setattr(Columns, _name, _dropping(_name))


_HEAD = itemgetter(slice(0, 9))  # a finding's fields before ``authorized``
_VERDICT_KEY = itemgetter(0, 1, 3)  # atom id, atom type, method
_FEW = 16


def with_verdicts(found: list[Any], verdict: Callable[[Any], bool], new_finding: Callable[[tuple[Any, ...]], Any],
                  path: str | None = None) -> list[Any]:
    """``found`` with ``authorized`` set to ``verdict(f)`` (and at ``path`` if given). ``verdict``
    is asked once per distinct (atom id, atom type, method) — a text of one atom repeated asks once
    — and when one verdict covers every finding they are rebuilt in C."""
    if len(found) < _FEW:  # a typical call's few findings: one pass, no columns
        asked: dict[tuple[Any, ...], bool] = {}
        out = []
        for f in found:
            key = (f[0], f[1], f[3])
            ok = asked.get(key)
            if ok is None:
                ok = asked[key] = verdict(f)
            out.append(new_finding((f[0], f[1], f[2] if path is None else path, *f[3:9], ok)))
        return out
    verdicts = {key: verdict(f) for key, f in dict(zip(map(_VERDICT_KEY, found), found, strict=True)).items()}
    if path is None and len(set(verdicts.values())) == 1:
        ok = next(iter(verdicts.values()))
        if isinstance(found, Columns) and found.columns is not None:
            return list(map(new_finding, zip(*found.columns, repeat(ok))))
        return list(map(new_finding, map(add, map(_HEAD, found), repeat((ok,)))))
    if path is None:
        return [new_finding((*f[:9], verdicts[f[0], f[1], f[3]])) for f in found]
    return [new_finding((f[0], f[1], path, *f[3:9], verdicts[f[0], f[1], f[3]])) for f in found]
