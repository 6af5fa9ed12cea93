"""The leaf table of one tool call, and everything read from it (issue 9, item 1; STYLE §11).

:func:`tpguard.detect._walk.walk` visits a call's arguments once and fills a :class:`LeafTable`: every text
the call carries — values *and* dict keys — is one :class:`Leaf` (raw path, last key, text,
free-text flag), every container one :class:`Node`. Detection reads the leaves; redaction
(:meth:`LeafTable.rebuild`), span rendering (:meth:`LeafTable.jsonable`) and the placeholder paths of
keys that are atoms (:meth:`LeafTable.display_paths`) read the same table. Each of those is one
pass, O(nodes + leaves): nothing re-walks the arguments or looks paths up per finding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import partial
from typing import Any, NamedTuple

from ._limits import Problem

__all__ = ["CONST", "LEAF", "NODE", "SKIPPED", "CallView", "Leaf", "LeafTable", "Node", "RebuildError", "join",
           "new_leaf"]

# kinds of a child reference ``(slot, kind, target, key_leaf)``
CONST, LEAF, NODE, SKIPPED = 0, 1, 2, 3


class RebuildError(ValueError):
    """The rewritten arguments cannot be built (two keys collide, a field cannot be replaced)."""


def join(path: str, seg: str | int) -> str:
    if isinstance(seg, int):
        return f"{path}[{seg}]"
    return f"{path}.{seg}" if path else seg


class Leaf(NamedTuple):
    """One text of the call. ``path`` is the *raw* argument path (internal: it may hold a key that
    is an atom — report :meth:`LeafTable.display_paths` instead). A named tuple: a call builds one
    per value and per key, and tuples are the cheapest records CPython builds."""

    value: Any
    text: str
    path: str
    key: str
    free_text: bool
    is_key: bool
    parent: int
    seg: str | int
    key_leaf: int


#: ``new_leaf((value, text, path, key, free_text, is_key, parent, seg, key_leaf))``: a :class:`Leaf`
#: built in C (the named tuple's own ``__new__`` is Python code; the walk builds one per text)
new_leaf = partial(tuple.__new__, Leaf)


class Node:
    """A container: ``kind`` is dict, mapping, list, tuple, model or dataclass; ``children`` are
    ``(slot, kind, target, key_leaf)`` in order (target: leaf index, node index or the value)."""

    __slots__ = ("children", "key_leaf", "kind", "obj", "parent", "path", "seg")

    def __init__(self, obj: Any, kind: str, path: str, parent: int, seg: str | int, key_leaf: int) -> None:
        self.obj = obj
        self.kind = kind
        self.path = path
        self.parent = parent
        self.seg = seg
        self.key_leaf = key_leaf
        self.children: list[tuple[Any, int, Any, int]] = []


class LeafTable:
    """Leaves and nodes of one call (``root`` is a child reference to the whole value)."""

    __slots__ = ("leaves", "nodes", "problem", "root")

    def __init__(self) -> None:
        self.leaves: list[Leaf] = []
        self.nodes: list[Node] = []
        self.problem: Problem | None = None
        self.root: tuple[Any, int, Any, int] = (None, CONST, None, -1)

    # -- redaction ------------------------------------------------------------------------------
    def rebuild(self, texts: Mapping[int, str]) -> Any:
        """The arguments with leaf ``i``'s text replaced by ``texts[i]`` (dict keys included).

        Containers on the way to a replaced leaf are copied; everything else — the caller's
        objects included — is shared. O(replaced leaves × depth + size of the copied containers).
        """
        _, kind, target, _ = self.root
        if kind == LEAF:
            return _retyped(self.leaves[target], texts[target]) if target in texts else self.leaves[target].value
        if kind != NODE or not texts:
            return self._value(self.root, texts, {})
        if len(self.nodes) == 1:  # a flat call: one container, nothing to order
            return self._build(self.nodes[0], texts, {})
        dirty: set[int] = set()
        for i in texts:
            n = self.leaves[i].parent
            while n >= 0 and n not in dirty:
                dirty.add(n)
                n = self.nodes[n].parent
        built: dict[int, Any] = {}
        for n in sorted(dirty, reverse=True):  # children have larger indices than their parents
            built[n] = self._build(self.nodes[n], texts, built)
        return built[target]

    def _value(self, ref: tuple[Any, int, Any, int], texts: Mapping[int, str], built: dict[int, Any]) -> Any:
        _, kind, target, _ = ref
        if kind == LEAF:
            return _retyped(self.leaves[target], texts[target]) if target in texts else self.leaves[target].value
        if kind == NODE:
            return built[target] if target in built else self.nodes[target].obj
        return target

    def _build(self, node: Node, texts: Mapping[int, str], built: dict[int, Any]) -> Any:
        kind = node.kind
        if kind in ("dict", "mapping"):
            out: dict[Any, Any] = {}
            leaves = self.leaves
            for slot, k, target, key_leaf in node.children:  # _value inlined: one call less per entry
                key = texts[key_leaf] if key_leaf in texts else slot
                if key in out:
                    raise RebuildError("two argument keys are the same after redaction")
                if k == LEAF:
                    out[key] = _retyped(leaves[target], texts[target]) if target in texts else leaves[target].value
                elif k == NODE:
                    out[key] = built[target] if target in built else self.nodes[target].obj
                else:
                    out[key] = target
            return out
        items = [self._value(ref, texts, built) for ref in node.children]
        if kind == "list":
            return items
        if kind == "tuple":
            make = getattr(type(node.obj), "_make", None)  # named tuples
            return make(items) if make is not None else type(node.obj)(items)
        changed = {ref[0]: v for ref, v in zip(node.children, items, strict=True)
                   if v is not self._original(ref)}
        if kind == "model":
            return node.obj.model_copy(update=changed)
        init = {f.name for f in dataclasses.fields(node.obj) if f.init}
        if not changed.keys() <= init:
            raise RebuildError("a dataclass field that cannot be replaced holds a private value")
        return dataclasses.replace(node.obj, **changed)

    def _original(self, ref: tuple[Any, int, Any, int]) -> Any:
        _, kind, target, _ = ref
        return self.leaves[target].value if kind == LEAF else self.nodes[target].obj if kind == NODE else target

    # -- rendering ------------------------------------------------------------------------------
    def jsonable(self, texts: Mapping[int, str]) -> Any:
        """A JSON-ready copy with leaf ``i`` shown as ``texts[i]`` (models and dataclasses become
        objects, bytes their decoded text, unread values ``<type>``). O(nodes + leaves)."""
        built: dict[int, Any] = {}
        for n in range(len(self.nodes) - 1, -1, -1):
            node = self.nodes[n]
            if node.kind in ("list", "tuple"):
                built[n] = [self._shown(ref, texts, built) for ref in node.children]
            else:
                built[n] = {texts[ref[3]] if ref[3] in texts else self._key_text(ref): self._shown(ref, texts, built)
                            for ref in node.children}
        return self._shown(self.root, texts, built)

    def _key_text(self, ref: tuple[Any, int, Any, int]) -> str:
        return self.leaves[ref[3]].text if ref[3] >= 0 else str(ref[0])

    def _shown(self, ref: tuple[Any, int, Any, int], texts: Mapping[int, str], built: dict[int, Any]) -> Any:
        _, kind, target, _ = ref
        if kind == LEAF:
            if target in texts:
                return texts[target]
            leaf = self.leaves[target]
            v = leaf.value
            return v if type(v) is str or type(v) is int or type(v) is float else leaf.text
        if kind == NODE:
            return built[target]
        if kind == SKIPPED:
            return f"<{type(target).__name__}>"
        return target if target is None or isinstance(target, bool) else ""

    # -- paths ----------------------------------------------------------------------------------
    def display_paths(self, labels: Mapping[int, str]) -> list[str]:
        """Every leaf's path with the keys in ``labels`` (key leaf index → placeholder) shown as
        their placeholder — in their own path and in the paths of everything under them."""
        if not labels:
            return [leaf.path for leaf in self.leaves]
        shown: list[str] = []
        for node in self.nodes:  # parents come before their children
            if node.parent < 0:
                shown.append(node.path)
            else:
                shown.append(join(shown[node.parent], labels.get(node.key_leaf, node.seg)))
        out = []
        for i, leaf in enumerate(self.leaves):
            if leaf.parent < 0:
                out.append(leaf.path)
                continue
            own = i if leaf.is_key else leaf.key_leaf
            out.append(join(shown[leaf.parent], labels.get(own, leaf.seg)))
        return out


def _retyped(leaf: Leaf, text: str) -> Any:
    """A rewritten leaf keeps its kind where it has one: bytes stay bytes."""
    v = leaf.value
    if isinstance(v, bytes | bytearray | memoryview):
        data = text.encode("utf-8")
        return bytearray(data) if isinstance(v, bytearray) else data
    return text


class CallView:
    """One decided call as spans see it: its table, findings per leaf index (authorization
    filled in) and, when a dict key held an atom, the display path of every leaf."""

    __slots__ = ("paths", "per_leaf", "table")

    def __init__(self, table: LeafTable, per_leaf: dict[int, list[Any]], paths: list[str] | None) -> None:
        self.table = table
        self.per_leaf = per_leaf
        self.paths = paths

    def path(self, i: int) -> str:
        return self.paths[i] if self.paths is not None else self.table.leaves[i].path
