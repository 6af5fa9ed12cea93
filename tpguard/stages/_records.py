"""The records of a result and their verdicts (issue 28, item 3): found at any depth, their subject
and date keys matched the way fields are, and a record that cannot show it is in scope left out.

**Which dicts are records.** Every dict that is an element of a list (at any depth, lists of lists
included), every dict that carries a bound dimension key (``subject_key``, ``date_key``,
``source_key``, ``part_key``), and — outside every record — a dict that holds no records below it
(the root record of a single-record result, or an object beside a record set). A dict outside every
record that holds records below it without carrying a dimension key is a *wrapper*
(``{"data": {"records": [...]}}``): its own texts are read as text. A record inside another record
is *nested* and inherits the dimension values its enclosing records carry.

**Keys.** A record key stands for a bound key when it folds to it (:func:`tpguard.policy.scope.fold_key`:
case, ``_``, ``-``, spaces and camelCase aside — ``Patient``, ``patient id``), else when it is the
bound key with an identifying suffix (``patientId``, ``patient_id``, ``visit_date``; see
:func:`tpguard.policy.scope.key_tiers`). Every key of the chosen tier must be in scope.

**Verdicts.** A record is out when a subject, source or part it carries lies outside the scope; when
the scope names subjects and neither it nor an enclosing record carries a subject key; when a date
it carries lies outside the window or cannot be read; when the scope has a window and neither it
nor an enclosing record carries a date and it holds no records (a leaf record); and — for a record
that is not the result itself — when any of its texts carries a confidentiality marker. A field of
a record is out when its key is not in the scope's fields, unless it holds records or an enclosing
record already admitted the field it lies in (structural keys stay). Cost: O(nodes + children):
one pass bottom-up (which dicts hold records), one top-down (classify and decide), key folds cached.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ..detect._leaves import CONST, LEAF, NODE, LeafTable, Node
from ..policy.scope import AcquisitionScope, ScopeFinding, fold_key, key_tiers, parse_day

__all__ = ["DICTS", "Marker", "Records", "read_records"]

DICTS = frozenset({"dict", "mapping", "model", "dataclass"})
LISTS = frozenset({"list", "tuple"})
_DIMS = (("subject", "subject_key"), ("source", "source_key"), ("part", "part_key"), ("date", "date_key"))


class Marker:
    """Confidentiality markers, found case-insensitively after normalization: Unicode-compatible
    forms (full-width letters) and format characters (zero-width, bidi) do not hide a marker.
    ``search(text)`` is truthy when the text carries one. O(text): a long text is lower-cased once
    and searched for each marker's words with ``str.find`` before the bounded regex runs."""

    __slots__ = ("_lows", "_rx")

    def __init__(self, markers: tuple[str, ...]) -> None:
        lows = sorted({_normal(m).lower() for m in markers if m.strip()}, key=len, reverse=True)
        self._lows = tuple(lows)
        alts = "|".join(re.escape(m) for m in lows)
        self._rx = re.compile(rf"(?<![^\W\d_])(?:{alts})(?![^\W\d_])")

    def search(self, text: str) -> bool:
        low = (text if text.isascii() else _normal(text)).lower()
        if len(low) > _LONG and not any(m in low for m in self._lows):
            return False
        return self._rx.search(low) is not None


_LONG = 256
# A field outside the scope is named in messages and spans only when its name reads like a field
# name: a key that is a value (a CSV header cell, a record keyed by e-mail or date) is named by its
# position instead — digits, "@" and long keys never reach a message.
_PLAIN_FIELD = re.compile(r"[A-Za-z_][A-Za-z_ .-]{0,39}")
#: format characters (Unicode category Cf: soft hyphen, zero-width, bidi, tags) removed before
#: markers are matched
_FORMAT = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f\u202a-\u202e"
                     "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U0001bca0-\U0001bca3"
                     "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


def _normal(text: str) -> str:
    return _FORMAT.sub("", unicodedata.normalize("NFKC", text))


@dataclass
class Records:
    """What :func:`read_records` decided: the records (node indices, parents first), the nodes and
    ``(node, slot)`` children to drop, and which nodes lie inside a record of a set."""

    records: list[int] = field(default_factory=list)
    drops: set[tuple[int, Any]] = field(default_factory=set)
    dropped_nodes: set[int] = field(default_factory=set)
    in_set: set[int] = field(default_factory=set)  # nodes inside a record that is not the result
    whole: bool = False
    findings: list[ScopeFinding] = field(default_factory=list)


def _key_index(scope: AcquisitionScope) -> dict[str, list[tuple[str, int]]]:
    """Folded key → ``(dimension, tier)`` for every bound dimension key."""
    b = scope.binding
    out: dict[str, list[tuple[str, int]]] = {}
    for dim, attr in _DIMS:
        bound = getattr(b, attr)
        if bound:
            for tier, names in enumerate(key_tiers(bound, dim)):
                for name in names:
                    out.setdefault(name, []).append((dim, tier))
    return out


def _hits(node: Node, index: dict[str, list[tuple[str, int]]]) -> dict[str, list[tuple[Any, int, Any, int]]]:
    """The children that stand for each dimension's key (the best tier present)."""
    best: dict[str, tuple[int, list[tuple[Any, int, Any, int]]]] = {}
    for ref in node.children:
        for dim, tier in index.get(fold_key(ref[0]), ()):
            have = best.get(dim)
            if have is None or tier < have[0]:
                best[dim] = (tier, [ref])
            elif tier == have[0]:
                have[1].append(ref)
    return {dim: refs for dim, (_, refs) in best.items()}


def _text_of(table: LeafTable, ref: tuple[Any, int, Any, int]) -> Any:
    _, kind, target, _ = ref
    if kind == LEAF:
        return table.leaves[target].text
    return target if kind == CONST else None


@dataclass
class _Walk:
    table: LeafTable
    scope: AcquisitionScope
    marker: Marker | None
    transparent: int
    out: Records
    structural: frozenset[str]
    index: dict[str, list[tuple[str, int]]]
    hits: list[dict[str, list[Any]]]
    below: list[bool]
    approved: set[int]


def read_records(table: LeafTable, scope: AcquisitionScope, marker: Marker | None,
                 transparent: int = -1) -> Records:
    """Find and decide the records of ``table`` (see the module docstring). ``transparent``: a
    node that only joins prose and record blocks (its children count as the result's top)."""
    nodes = table.nodes
    out = Records()
    _, kind, _, _ = table.root
    if kind != NODE or not nodes:
        return out
    b = scope.binding
    index = _key_index(scope)
    hits = [_hits(n, index) if n.kind in DICTS and index else {} for n in nodes]
    below = [False] * len(nodes)  # holds a record candidate strictly below it
    for n in range(len(nodes) - 1, -1, -1):
        node = nodes[n]
        p = node.parent
        if p >= 0 and (below[n] or (node.kind in DICTS and (hits[n] or nodes[p].kind in LISTS))):
            below[p] = True
    approved: set[int] = set()  # nodes under a field an enclosing record admitted by name
    w = _Walk(table, scope, marker, transparent, out,
              frozenset(fold_key(k) for k in b.structural_keys()), index, hits, below, approved)
    enclosing = [-1] * len(nodes)  # the closest record a node lies in (itself for a record)
    present: dict[int, frozenset[str]] = {}  # dims a record or its enclosing records carry
    dead: set[int] = set()
    for n, node in enumerate(nodes):
        p = node.parent
        up = enclosing[p] if p >= 0 else -1
        if p >= 0 and (p in dead or p in out.dropped_nodes):
            dead.add(n)
            enclosing[n] = up
            continue
        if p >= 0 and p in approved:
            approved.add(n)
        if p >= 0 and p in out.in_set:
            out.in_set.add(n)
        top = p < 0 or p == transparent
        in_list = p >= 0 and p != transparent and nodes[p].kind in LISTS
        if node.kind in DICTS and (hits[n] or in_list or (up < 0 and not below[n])):
            enclosing[n] = n
            out.records.append(n)
            dims = present.get(up, frozenset()) | frozenset(hits[n])
            present[n] = dims
            _decide(w, n, node, hits[n], dims, top, below[n], n in approved)
        else:
            enclosing[n] = up
    return out


def _reason(w: _Walk, hits: dict[str, list[Any]], dims: frozenset[str], group: bool) -> tuple[str, str] | None:
    """Why a record is out of scope by its subject, source, part or date (None: it is not)."""
    scope, table = w.scope, w.table
    b = scope.binding
    for dim, key in (("subject", b.subject_key), ("source", b.source_key), ("part", b.part_key)):
        refs = hits.get(dim)
        if key and refs and not all(scope.allows(dim, _text_of(table, r)) for r in refs):  # type: ignore[arg-type]
            return dim, f"a record of a {dim} outside the scope"
    if b.subject_key and scope.subjects is not None and "subject" not in dims:
        return "subject", "a record without its subject key"
    if scope.has_window and b.date_key:
        refs = hits.get("date")
        if refs:
            days = [parse_day(_text_of(table, r)) for r in refs]
            if any(d is None or not scope.in_window(d) for d in days):
                return "window", "a record outside the time window"
        elif "date" not in dims and not group:
            return "window", "a record without a date"
    return None


def _decide(w: _Walk, n: int, node: Node, hits: dict[str, list[Any]], dims: frozenset[str],
            top: bool, group: bool, approved: bool) -> None:
    out, table = w.out, w.table
    reason = _reason(w, hits, dims, group)
    is_set = not top
    if reason is None and is_set and w.marker is not None and n not in out.in_set and _marked(table, n, w.marker):
        reason = ("confidential", "a confidential-marked record")
    path = node.path or "result"
    if reason is not None:
        out.findings.append(ScopeFinding(reason[0], path, reason[1]))  # type: ignore[arg-type]
        out.dropped_nodes.add(n)
        if is_set:
            out.drops.add((node.parent, node.seg))
        else:
            out.whole = True
        return
    if is_set:
        out.in_set.add(n)
    if not approved:
        _fields(w, n, node, hits)


def _fields(w: _Walk, n: int, node: Node, hits: dict[str, list[Any]]) -> None:
    b, table, out = w.scope.binding, w.table, w.out
    src_refs = hits.get("source") if b.source_key else None
    src = _text_of(table, src_refs[0]) if src_refs else None
    allowed = w.scope.fields_for(src)
    if allowed is None:
        return
    ok = {fold_key(f) for f in allowed} | w.structural
    keep = {id(r) for refs in hits.values() for r in refs}
    for position, ref in enumerate(node.children):
        slot, kind, target, _ = ref
        if fold_key(slot) in ok or id(ref) in keep:
            if kind == NODE:
                _approve(w, target)
            continue
        if kind == NODE and _holds_records(w, target):
            continue
        out.drops.add((n, slot))
        if kind == NODE:
            out.dropped_nodes.add(target)
        name = str(slot) if _PLAIN_FIELD.fullmatch(str(slot)) else f"#{position + 1}"
        out.findings.append(ScopeFinding("field", f"{node.path}.{name}" if node.path else name,
                                         f"field {name} outside the purpose's fields"))


def _approve(w: _Walk, node: int) -> None:
    w.approved.add(node)


def _holds_records(w: _Walk, node: int) -> bool:
    return w.below[node] or bool(w.hits[node])


def _marked(table: LeafTable, r: int, marker: Marker) -> bool:
    stack = [r]
    while stack:
        node: Node = table.nodes[stack.pop()]
        for _, kind, target, _ in node.children:
            if kind == LEAF and marker.search(table.leaves[target].text):
                return True
            if kind == NODE:
                stack.append(target)
    return False
