"""One walk over a tool call's arguments into a :class:`~tpguard.detect._leaves.LeafTable` (issue 9, 1 & 5).

Read: dicts and other mappings (keys *and* values), lists, tuples, pydantic models (declared and
extra fields), dataclasses, strings, numbers, enums, dates, decimals, UUIDs, paths, and
``bytes``/``bytearray``/``memoryview`` (decoded as UTF-8, invalid bytes replaced). Refused — recorded
as a :class:`~tpguard.detect._limits.Problem`, never silently skipped: sets, deques, iterators and
generators (reading them would consume or reorder the caller's object), and any other object.
Nothing is read through ``str()`` of an unknown object, so a raising ``__str__`` cannot hurt.

The walk is iterative (an explicit stack: 10,000-deep nesting cannot raise ``RecursionError``),
detects cycles on the current path, and stops at the :class:`~tpguard.detect._limits.Limits`. Cost: O(values
visited + characters of the texts), bounded by ``max_leaves`` and ``max_total``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import uuid
from collections.abc import Collection, Container, Iterator, Mapping
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from ._leaves import CONST, LEAF, NODE, SKIPPED, Leaf, LeafTable, Node, join, new_leaf
from ._limits import DEFAULT_LIMITS, Limits, Problem

__all__ = ["MAX_DEPTH", "iter_leaves", "leaf_text", "replace_at", "to_jsonable", "walk"]

MAX_DEPTH = DEFAULT_LIMITS.max_depth
_TEXTLIKE = (_dt.date, _dt.time, _dt.timedelta, Decimal, uuid.UUID, PurePath)
_BYTES = (bytes, bytearray, memoryview)
_SCALARS = (str, int, float, enum.Enum, *_BYTES, *_TEXTLIKE)
_EXIT = object()
_FLAT_MAX = 64


class _Unreadable(Exception):
    pass


def leaf_text(value: Any) -> str | None:
    """The text of a scalar (``None`` for ``None``/bools); raises ``_Unreadable`` for a scalar
    whose text cannot be had (a 5,000-digit integer)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, int):
            return str(int(value))
        if isinstance(value, float):
            # Two decimals where the value has at most two (amounts): 1250.0 → "1250.00".
            return f"{value:.2f}" if round(value, 2) == value else repr(float(value))
        if isinstance(value, enum.Enum):
            inner = value.value
            if isinstance(inner, str | int | float) and not isinstance(inner, bool):
                return leaf_text(inner)
            return value.name
        if isinstance(value, _BYTES):
            return bytes(value).decode("utf-8", errors="replace")
        if isinstance(value, _TEXTLIKE):
            return str(value)
    except Exception as e:  # a value whose text cannot be made: refused, not skipped
        raise _Unreadable(type(value).__name__) from e
    raise _Unreadable(type(value).__name__)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, _SCALARS)


def _container(value: Any) -> tuple[str, list[tuple[Any, Any]]] | None:
    """``(kind, [(slot, child), …])`` for a container tpguard reads; ``None`` otherwise."""
    if isinstance(value, dict):
        return "dict", list(value.items())
    if isinstance(value, list):
        return "list", list(enumerate(value))
    if isinstance(value, tuple):
        return "tuple", list(enumerate(value))
    if isinstance(value, Mapping):
        return "mapping", list(value.items())
    fields = getattr(type(value), "model_fields", None)  # pydantic v2 model: declared + extra fields
    if isinstance(fields, dict) and hasattr(value, "model_copy"):
        items = [(name, getattr(value, name, None)) for name in fields]
        extra = getattr(value, "__pydantic_extra__", None) or {}
        return "model", items + list(extra.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "dataclass", [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    return None


def walk(arguments: Any, free_text: Collection[str] = (), limits: Limits = DEFAULT_LIMITS,
         clean: Container[str] | None = None) -> LeafTable:
    """The leaf table of ``arguments``. A leaf is free text when its last key or its path is in
    ``free_text``; a dict key is free text when its dict is. The first problem met is in
    ``table.problem`` (the walk goes on past depth, cycle and type problems, stops at size ones).

    ``clean`` — the key texts known to hold no atom (the guard's memo of keys it has already
    scanned, when nothing else would scan them) — lets the flat path leave those keys out of the
    leaves: they would only be scanned again. Their dict entries are rebuilt and rendered as is."""
    if type(arguments) is dict and len(arguments) <= _FLAT_MAX:
        table = _flat(arguments, free_text, limits, clean)
        if table is not None:
            return table
    return _Walker(free_text, limits).run(arguments)


def _flat(arguments: dict[Any, Any], free_text: Collection[str], limits: Limits,
          clean: Container[str] | None = None) -> LeafTable | None:
    """The common call — a small dict of str keys and str/number/bool/None values — without the
    stack; ``None`` sends anything else to the general walk. Same table as :class:`_Walker` (the
    key leaves first, then the value leaves), less the keys ``clean`` vouches for. O(keys + values)."""
    if 2 * len(arguments) + 1 > limits.max_leaves:
        return None
    max_text = limits.max_text
    leaves: list[Leaf] = []
    key_leaf: list[int] = []
    total = 0
    for k in arguments:
        if type(k) is not str or len(k) > max_text:
            return None
        total += len(k)
        if clean is not None and k in clean:
            key_leaf.append(-1)
        else:
            key_leaf.append(len(leaves))
            leaves.append(new_leaf((k, k, k, "", False, True, 0, k, -1)))
    refs: list[tuple[Any, int, Any, int]] = []
    for i, (k, v) in enumerate(arguments.items()):
        tv = type(v)
        if tv is str:
            text: str = v
        elif v is None or tv is bool:
            refs.append((k, CONST, v, key_leaf[i]))
            continue
        elif tv is int or tv is float:
            try:
                text = leaf_text(v)  # type: ignore[assignment]
            except _Unreadable:
                return None
        else:
            return None
        if len(text) > max_text:
            return None
        total += len(text)
        refs.append((k, LEAF, len(leaves), key_leaf[i]))
        leaves.append(new_leaf((v, text, k, k, k in free_text, False, 0, k, key_leaf[i])))
    if total > limits.max_total:
        return None
    t = LeafTable()
    node = Node(arguments, "dict", "", -1, "", -1)
    node.children = refs
    t.nodes.append(node)
    t.root = ("", NODE, 0, -1)
    t.leaves = leaves
    return t


class _Walker:
    """One walk: an explicit stack of ``(value, parent node, slot, segment, path, last key, depth,
    key leaf)`` entries, popped in document order."""

    def __init__(self, free_text: Collection[str], limits: Limits) -> None:
        self.t = LeafTable()
        self.free = free_text
        self.limits = limits
        self.count = 0
        self.total = 0
        self.active: set[int] = set()
        self.stack: list[tuple[Any, ...]] = []

    def note(self, problem: Problem) -> None:
        if self.t.problem is None:
            self.t.problem = problem

    def attach(self, parent: int, slot: Any, kind: int, target: Any, key_leaf: int) -> None:
        ref = (slot, kind, target, key_leaf)
        if parent < 0:
            self.t.root = ref
        else:
            self.t.nodes[parent].children.append(ref)

    def run(self, arguments: Any) -> LeafTable:
        stack = self.stack
        stack.append((arguments, -1, "", "", "", "", 0, -1))
        max_leaves = self.limits.max_leaves
        while stack:
            entry = stack.pop()
            value = entry[0]
            if value is _EXIT:
                self.active.discard(entry[1])
                continue
            self.count += 1
            if self.count > max_leaves:
                self.note(Problem.leaves(self.limits))
                break
            ok = self.scalar(entry) if _is_scalar(value) else self.container(entry)
            if not ok:
                break
        return self.t

    def scalar(self, entry: tuple[Any, ...]) -> bool:
        value, parent, slot, seg, path, last, _, key_leaf = entry
        try:
            text = leaf_text(value)
        except _Unreadable as e:
            self.note(Problem.unreadable(str(e)))
            self.attach(parent, slot, SKIPPED, value, key_leaf)
            return True
        if text is None:
            self.attach(parent, slot, CONST, value, key_leaf)
            return True
        if len(text) > self.limits.max_text:
            self.note(Problem.text_size(self.limits))
            self.attach(parent, slot, SKIPPED, value, key_leaf)
            return True
        self.total += len(text)
        if self.total > self.limits.max_total:
            self.note(Problem.total(self.limits))
            return False
        leaves = self.t.leaves
        self.attach(parent, slot, LEAF, len(leaves), key_leaf)
        free = last in self.free or path in self.free
        leaves.append(Leaf(value, text, path, last, free, False, parent, seg, key_leaf))
        return True

    def container(self, entry: tuple[Any, ...]) -> bool:
        value, parent, slot, seg, path, last, depth, key_leaf = entry
        problem = None
        shape: tuple[str, list[tuple[Any, Any]]] | None = None
        if id(value) in self.active:
            problem = Problem.cycle()
        elif depth >= self.limits.max_depth:
            problem = Problem.depth(self.limits)
        else:
            try:
                shape = _container(value)
            except Exception:  # a mapping or model whose items cannot be read
                shape = None
            if shape is None:
                problem = Problem.unreadable(type(value).__name__)
        if problem is not None or shape is None:
            self.note(problem or Problem.unreadable(type(value).__name__))
            self.attach(parent, slot, SKIPPED, value, key_leaf)
            return True
        kind, items = shape
        nodes = self.t.nodes
        n = len(nodes)
        self.attach(parent, slot, NODE, n, key_leaf)
        nodes.append(Node(value, kind, path, parent, seg, key_leaf))
        self.active.add(id(value))
        self.stack.append((_EXIT, id(value)))
        if kind in ("dict", "mapping"):
            pending = self.keyed(items, n, path, last in self.free or path in self.free, depth)
        elif kind in ("model", "dataclass"):
            pending = [(child, n, k, k, join(path, k), k, depth + 1, -1) for k, child in items]
        else:
            pending = [(child, n, k, k, join(path, k), last, depth + 1, -1) for k, child in items]
        if self.count > self.limits.max_leaves or self.total > self.limits.max_total:
            over = self.count > self.limits.max_leaves
            self.note(Problem.leaves(self.limits) if over else Problem.total(self.limits))
            return False
        self.stack.extend(reversed(pending))
        return True

    def keyed(self, items: list[tuple[Any, Any]], n: int, path: str, free_keys: bool,
              depth: int) -> list[tuple[Any, ...]]:
        """Children of a mapping; each key becomes a leaf of its own (scanned like a value)."""
        leaves = self.t.leaves
        pending = []
        for k, child in items:
            self.count += 1
            try:
                ktext = leaf_text(k)
            except _Unreadable as e:
                self.note(Problem.unreadable(f"dict key {e}"))
                ktext = None
            if ktext and len(ktext) > self.limits.max_text:
                self.note(Problem.text_size(self.limits))
                ktext = None
            key_leaf = -1
            if ktext:
                self.total += len(ktext)
                key_leaf = len(leaves)
                leaves.append(Leaf(k, ktext, join(path, ktext), "", free_keys, True, n, ktext, -1))
            seg = ktext if ktext is not None else f"<{type(k).__name__}>"
            pending.append((child, n, k, seg, join(path, seg), seg, depth + 1, key_leaf))
        return pending


# -- compatibility helpers (the benchmark's baselines and evidence use them) -----------------------
def iter_leaves(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, str, str]]:
    """``(path, last_key, text)`` of every non-empty value text (keys excluded), in order."""
    outer_key = path.rsplit(".", 1)[-1].split("[", 1)[0]
    for leaf in walk(value).leaves:
        if leaf.text and not leaf.is_key:
            p = leaf.path
            if path:
                p = path + p if not p or p.startswith("[") else f"{path}.{p}"
            yield p, leaf.key or outer_key, leaf.text


def replace_at(value: Any, replacements: Mapping[str, Any]) -> Any:
    """A copy of ``value`` with the value leaves at ``replacements``' paths replaced (one walk)."""
    if "" in replacements:
        return replacements[""]
    table = walk(value)
    texts = {i: replacements[leaf.path] for i, leaf in enumerate(table.leaves)
             if not leaf.is_key and leaf.path in replacements}
    return table.rebuild(texts)


def to_jsonable(value: Any) -> Any:
    """A JSON-ready copy of ``value`` (models and dataclasses become dicts)."""
    return walk(value).jsonable({})
