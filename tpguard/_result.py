"""What a tool returned, read once against its acquisition scope (PrivacyPeek, seed ``001_*`` §3, §6).

:func:`inspect_result` walks a result once into a leaf table (:mod:`tpguard._walk`, with the guard's
:class:`~tpguard._limits.Limits`; a text that starts with ``[``/``{`` is parsed as JSON first) and
finds, by the tool's :class:`~tpguard.scope.ScopeBinding`:

* **whole-result** items — the request named a source, subject or part outside the scope;
* **records** — the dicts of the top-level record set (the root list, the list under
  ``records_key`` or under any root key, else the root dict itself as one record). A record is out
  when its subject, source, part or date (``*_key``) lies outside the scope, or — for a record of
  a set — when any of its texts carries a confidentiality marker. A record *field* is out when its
  key is not in the scope's fields (structural keys — id, subject, date, source, part — stay);
* **text** (outside a record set) — parts started by ``part_pattern`` whose name is not in
  ``parts`` (or whose header carries a marker), and paragraphs (blank-line separated) carrying a
  marker;
* **atoms** — every registered atom in the texts (the session's scanner: O(text), flat in atoms);
  when ``scope.atoms`` is set, an atom whose id and type are not listed is out of scope.

It returns findings (value-free), the filtered payload (records and fields dropped, parts and
paragraphs replaced by a placeholder line, out-of-scope atoms by their session placeholder) and the
values under ``atom_keys`` to register as tainted atoms. Cost: one walk, one marker search and one
scan per text — O(size of the result) — plus O(copied containers) to build the filtered payload.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ._bulk import with_verdicts
from ._leaves import CONST, LEAF, NODE, Leaf, LeafTable, Node
from ._limits import Limits, Problem
from ._walk import walk
from .detection import Finding, new_finding
from .redaction import Operator, rewrite_text
from .scope import AcquisitionScope, ScopeFinding

__all__ = ["ResultView", "inspect_result"]

PART_WITHHELD = "[tpguard: part withheld - outside this task's scope]"
PARA_WITHHELD = "[tpguard: confidential passage withheld]"
_PARA = re.compile(r"\n[ \t]*\n")
Scan = Callable[[str, str, bool], list[Finding]]


class _Everything:
    """Every key is a free-text slot: a result's texts are all rewritten in place."""

    def __contains__(self, _: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_ALL: Any = _Everything()


@functools.lru_cache(maxsize=64)
def _marker_re(markers: tuple[str, ...]) -> re.Pattern[str] | None:
    if not markers:
        return None
    alts = "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z])(?:{alts})(?![A-Za-z])")


@functools.lru_cache(maxsize=64)
def _part_re(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


@dataclass
class ResultView:
    """One result as the guard read it (see the module docstring)."""

    payload: Any
    table: LeafTable | None = None
    problem: Problem | None = None
    scope: list[ScopeFinding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    whole: bool = False  # the whole result is out of scope
    filtered: Any = None  # the payload without out-of-scope items (built on demand)
    delivered: list[Finding] = field(default_factory=list)  # atoms left in the filtered payload
    taints: list[tuple[str, str, str]] = field(default_factory=list)  # (key, atom type, value)

    @property
    def out_of_scope(self) -> bool:
        return self.whole or bool(self.scope) or any(f.authorized is False for f in self.findings)


def _parse(result: Any, scope: AcquisitionScope | None) -> tuple[Any, bool]:
    if scope is None or not scope.binding.parse_json or not isinstance(result, str):
        return result, False
    head = result.lstrip()[:1]
    if head not in ("[", "{"):
        return result, False
    try:
        return json.loads(result), True
    except ValueError:
        return result, False


def _text_of(table: LeafTable, ref: tuple[Any, int, Any, int]) -> Any:
    _, kind, target, _ = ref
    if kind == LEAF:
        return table.leaves[target].text
    return target if kind == CONST else None


def _records(table: LeafTable, key: str | None) -> tuple[list[int], bool]:
    """Node indices of the top-level record set, and whether they are a set (not the root record)."""
    _, kind, target, _ = table.root
    if kind != NODE:
        return [], False
    nodes = table.nodes
    root = nodes[target]

    def dict_elements(n: int) -> list[int]:
        return [c[2] for c in nodes[n].children
                if c[1] == NODE and nodes[c[2]].kind in ("dict", "mapping", "model", "dataclass")]

    if root.kind in ("list", "tuple"):
        return dict_elements(target), True
    lists = [c for c in root.children if c[1] == NODE and nodes[c[2]].kind in ("list", "tuple")
             and (key is None or str(c[0]) == key)]
    found = [r for c in lists for r in dict_elements(c[2])]
    if found or key is not None:
        return found, True
    return [target], False


def inspect_result(
    result: Any, arguments: Any, scope: AcquisitionScope | None, *, scan: Scan, limits: Limits,
    placeholder: Operator, forbidden_atom: Callable[[Finding], bool], build: bool = True,
    deliver_all: bool = False,
) -> ResultView:
    """Read ``result`` once against ``scope`` (``None``: atoms only, for provenance). ``build``:
    make the filtered payload; ``deliver_all``: everything reaches the model (audit) — every atom
    found counts as delivered and every ``atom_keys`` value is tainted."""
    payload, is_json = _parse(result, scope)
    table = walk(payload, _ALL, limits)
    view = ResultView(payload, table, table.problem)
    if table.problem is not None:
        return view
    texts: dict[int, str] = {}
    drops: set[tuple[int, Any]] = set()
    dropped_nodes: set[int] = set()
    if scope is not None:
        _structure(view, table, scope, arguments, texts, drops, dropped_nodes)
    dropped_leaf = set() if deliver_all else _dropped_leaves(table, drops, dropped_nodes)
    whole = view.whole and not deliver_all
    _atoms(view, table, scan, forbidden_atom, placeholder, texts, dropped_leaf, whole, build, deliver_all)
    if scope is not None and scope.binding.atom_keys and not whole:
        _taints(view, table, scope, dropped_leaf, {} if deliver_all else texts)
    if build and not view.whole:
        view.filtered = rebuild_filtered(table, texts, drops) if texts or drops else payload
        if is_json and (texts or drops):
            view.filtered = dumps(view.filtered)
        elif is_json:
            view.filtered = result
    return view


def _structure(view: ResultView, table: LeafTable, scope: AcquisitionScope, arguments: Any,
               texts: dict[int, str], drops: set[tuple[int, Any]], dropped_nodes: set[int]) -> None:
    """Whole-result, record, field, part and paragraph verdicts (no atom scanning)."""
    _whole(view, scope, arguments)
    marker = None if scope.confidential else _marker_re(scope.markers)
    records, is_set = _records(table, scope.binding.records_key)
    in_record = _record_of(table, set(records)) if is_set else {}
    leaves = table.leaves
    for r in records:
        _record(view, table, scope, r, is_set, marker, drops, dropped_nodes, leaves)
    for i, leaf in enumerate(leaves):
        if leaf.is_key or in_record.get(leaf.parent, -1) >= 0 or _under(table, leaf, dropped_nodes):
            continue
        new = _text(view, scope, leaf, marker)
        if new is not None:
            texts[i] = new


def _atoms(view: ResultView, table: LeafTable, scan: Scan, forbidden_atom: Callable[[Finding], bool],
           placeholder: Operator, texts: dict[int, str], dropped_leaf: set[int], whole: bool,
           build: bool, deliver_all: bool) -> None:
    """One scan per text as read; a text the structure step rewrote is scanned again (only it)."""
    for i, leaf in enumerate(table.leaves):
        if not leaf.text:
            continue
        found = with_verdicts(scan(leaf.text, leaf.path, True), lambda f: not forbidden_atom(f), new_finding)
        view.findings.extend(found)
        if i in dropped_leaf or whole:
            continue
        if i in texts and not deliver_all:
            found = [f._replace(authorized=not forbidden_atom(f)) for f in scan(texts[i], leaf.path, True)]
        view.delivered.extend(found)
        bad = [f for f in found if f.authorized is False]
        if bad:
            if build:
                texts[i] = rewrite_text(texts.get(i, leaf.text), bad, placeholder)
            for f in bad:
                view.scope.append(ScopeFinding("atom", leaf.path, f"a {f.atom_type} value outside the scope"))


def _whole(view: ResultView, scope: AcquisitionScope, arguments: Any) -> None:
    b = scope.binding
    if not isinstance(arguments, dict):
        return
    for dim, arg in (("source", b.source_arg), ("subject", b.subject_arg), ("part", b.part_arg)):
        if arg and arguments.get(arg) not in (None, "", "*") and not isinstance(arguments[arg], list):
            if not scope.allows(dim, arguments[arg]):  # type: ignore[arg-type]
                view.whole = True
                view.scope.append(ScopeFinding(dim, arg, f"the result of a {dim} outside the scope"))  # type: ignore[arg-type]


def _record_of(table: LeafTable, records: set[int]) -> dict[int, int]:
    """Node index → the record it lies in (-1 outside every record). O(nodes)."""
    out: dict[int, int] = {}
    for n, node in enumerate(table.nodes):
        out[n] = n if n in records else (out.get(node.parent, -1) if node.parent >= 0 else -1)
    return out


def _under(table: LeafTable, leaf: Leaf, dropped: set[int]) -> bool:
    n = leaf.parent
    while n >= 0:
        if n in dropped:
            return True
        n = table.nodes[n].parent
    return False


def _record(view: ResultView, table: LeafTable, scope: AcquisitionScope, r: int, is_set: bool,
            marker: re.Pattern[str] | None, drops: set[tuple[int, Any]], dropped_nodes: set[int],
            leaves: list[Leaf]) -> None:
    b = scope.binding
    node = table.nodes[r]
    by_key = {str(c[0]): c for c in node.children}
    path = node.path or "result"
    reason = None
    for dim, key in (("subject", b.subject_key), ("source", b.source_key), ("part", b.part_key)):
        if key and key in by_key and not scope.allows(dim, _text_of(table, by_key[key])):  # type: ignore[arg-type]
            reason = (dim, f"a record of a {dim} outside the scope")
            break
    if reason is None and scope.has_window and b.date_key and b.date_key in by_key:
        from .scope import parse_day

        day = parse_day(_text_of(table, by_key[b.date_key]))
        if day is None or not scope.in_window(day):
            reason = ("window", "a record outside the time window")
    if reason is None and is_set and marker is not None and _marked(table, r, marker):
        reason = ("confidential", "a confidential-marked record")
    if reason is not None:
        view.scope.append(ScopeFinding(reason[0], path, reason[1]))  # type: ignore[arg-type]
        dropped_nodes.add(r)
        if is_set:
            drops.add((node.parent, node.seg))
        else:
            view.whole = True
        return
    src = _text_of(table, by_key[b.source_key]) if b.source_key and b.source_key in by_key else None
    allowed = scope.fields_for(src)
    if allowed is None:
        return
    ok = {f.casefold() for f in allowed} | {k.casefold() for k in b.structural_keys()}
    for slot, kind, target, _ in node.children:
        name = str(slot)
        if name.casefold() in ok:
            continue
        drops.add((r, slot))
        if kind == NODE:
            dropped_nodes.add(target)
        view.scope.append(ScopeFinding("field", f"{node.path}.{name}" if node.path else name,
                                       f"field {name} outside the purpose's fields"))


def _marked(table: LeafTable, r: int, marker: re.Pattern[str]) -> bool:
    stack = [r]
    while stack:
        node: Node = table.nodes[stack.pop()]
        for _, kind, target, _ in node.children:
            if kind == LEAF and marker.search(table.leaves[target].text):
                return True
            if kind == NODE:
                stack.append(target)
    return False


def _text(view: ResultView, scope: AcquisitionScope, leaf: Leaf, marker: re.Pattern[str] | None) -> str | None:
    """The text with out-of-scope parts and marked paragraphs replaced; None when unchanged."""
    text = leaf.text
    pattern = scope.binding.part_pattern
    has_parts = pattern is not None and scope.parts is not None
    if not has_parts and (marker is None or marker.search(text) is None):
        return None
    changed = False
    out: list[str] = []
    for n, (name, header, body) in enumerate(_parts(text, pattern) if has_parts else [(None, "", text)]):
        if name is not None and (not scope.allows("part", name)
                                 or (marker is not None and marker.search(header))):
            dim = "part" if not scope.allows("part", name) else "confidential"
            view.scope.append(ScopeFinding(dim, f"{leaf.path}#part{n}",  # type: ignore[arg-type]
                                           f"a {dim} part outside the scope"))
            out.append(PART_WITHHELD + "\n")
            changed = True
            continue
        out.append(header)
        if marker is not None and marker.search(body):
            paras = _PARA.split(body)
            seps = _PARA.findall(body)
            kept = []
            for k, para in enumerate(paras):
                if marker.search(para):
                    view.scope.append(ScopeFinding("confidential", f"{leaf.path}#para{k}",
                                                   "a confidential-marked passage"))
                    para = PARA_WITHHELD
                    changed = True
                kept.append(para + (seps[k] if k < len(seps) else ""))
            body = "".join(kept)
        out.append(body)
    return "".join(out) if changed else None


def _parts(text: str, pattern: str | None) -> Iterator[tuple[str | None, str, str]]:
    """``(name, header line, body)`` per part; the text before the first header has no name."""
    rx = _part_re(pattern or "")
    matches = list(rx.finditer(text))
    if not matches or matches[0].start() > 0:
        yield None, "", text[:matches[0].start()] if matches else text
    for k, m in enumerate(matches):
        end = matches[k + 1].start() if k + 1 < len(matches) else len(text)
        line_end = text.find("\n", m.end())
        line_end = end if line_end < 0 or line_end > end else line_end + 1
        name = m.groupdict().get("part") if rx.groupindex else (m.group(1) if rx.groups else m.group())
        yield (name or "").strip(), text[m.start():line_end], text[line_end:end]


def _dropped_leaves(table: LeafTable, drops: set[tuple[int, Any]], dropped_nodes: set[int]) -> set[int]:
    out: set[int] = set()
    gone = set(dropped_nodes)
    for n, node in enumerate(table.nodes):  # parents come first
        if n not in gone and node.parent in gone:
            gone.add(n)
    for n in gone | {p for p, _ in drops}:
        for slot, kind, target, key_leaf in table.nodes[n].children:
            if n in gone or (n, slot) in drops:
                if kind == LEAF:
                    out.add(target)
                if key_leaf >= 0:
                    out.add(key_leaf)
    return out


def _taints(view: ResultView, table: LeafTable, scope: AcquisitionScope, dropped: set[int],
            texts: dict[int, str]) -> None:
    keys = scope.binding.atom_keys
    known = {(f.path, f.start, f.end) for f in view.delivered}
    for i, leaf in enumerate(table.leaves):
        if leaf.is_key or i in dropped or i in texts or leaf.key not in keys:
            continue
        text = leaf.text.strip()
        if len(text) < 3 or (leaf.path, 0, len(leaf.text)) in known:
            continue
        view.taints.append((leaf.key, keys[leaf.key], text))


def rebuild_filtered(table: LeafTable, texts: dict[int, str], drops: set[tuple[int, Any]]) -> Any:
    """The payload with leaf texts replaced and ``(node, slot)`` children left out. Containers on
    the way are copied (a model or dataclass that loses a field becomes a dict); the rest is shared.
    O(replaced leaves × depth + copied containers)."""
    _, kind, target, _ = table.root
    if kind == LEAF:
        return texts.get(target, table.leaves[target].value)
    if kind != NODE:
        return target
    dirty: set[int] = set()
    starts = [table.leaves[i].parent for i in texts] + [n for n, _ in drops]
    for n in starts:
        while n >= 0 and n not in dirty:
            dirty.add(n)
            n = table.nodes[n].parent
    built: dict[int, Any] = {}

    def value(ref: tuple[Any, int, Any, int]) -> Any:
        _, k, t, _ = ref
        if k == LEAF:
            return texts[t] if t in texts else table.leaves[t].value
        if k == NODE:
            return built[t] if t in built else table.nodes[t].obj
        return t

    for n in sorted(dirty, reverse=True):
        node = table.nodes[n]
        kept = [ref for ref in node.children if (n, ref[0]) not in drops]
        if node.kind in ("list", "tuple"):
            items = [value(ref) for ref in kept]
            built[n] = items if node.kind == "list" else tuple(items)
        elif node.kind in ("dict", "mapping") or len(kept) < len(node.children):
            built[n] = {texts.get(ref[3], ref[0]) if ref[3] >= 0 else ref[0]: value(ref) for ref in kept}
        elif node.kind == "model":
            built[n] = node.obj.model_copy(update={ref[0]: value(ref) for ref in kept})
        else:
            built[n] = dataclasses.replace(node.obj, **{ref[0]: value(ref) for ref in kept})
    return built[target]


def dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, default=str)
