"""Strict YAML for policy files: no anchors or aliases, no duplicate or merge keys, bounded depth.

A policy file is data a person writes, so the YAML features that let a short file mean something
large or ambiguous are refused rather than expanded:

- **anchors and aliases** (``&a`` / ``*a``) — an alias bomb ("billion laughs") is a few hundred
  bytes that expand to gigabytes, and everything that later walks the tree (a tool's ``schema``
  included) hangs. Refused when the parser emits them, before any node is built.
- **duplicate keys** — YAML keeps the last silently (an atom with two ``value:`` keys); refused.
- **merge keys** (``<<``) — a second way to write duplicate keys; refused.
- **nesting deeper than** :data:`MAX_DEPTH` — refused before Python's recursion limit is reached.
- **integers past Python's int-string limit** (4,300 digits) — refused with a mark, not a
  ``ValueError`` from deep inside the constructor.

Scanning and parsing run in libyaml (PyYAML's ``CParser``) when PyYAML was built with it; the
composer that refuses anchors is PyYAML's own Python ``Composer`` fed with libyaml's events, because
libyaml's composer keeps anchors out of reach. Cost: linear in the file; a 200,000-atom file reads
in the time libyaml's own ``CSafeLoader`` takes (the implicit-tag resolver is memoized, see
:class:`_MemoResolver`).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent, ScalarEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode
from yaml.resolver import Resolver

__all__ = ["MAX_DEPTH", "WITH_LIBYAML", "RefusedError", "StrictLoader", "compose", "construct", "key_name"]

#: Deepest nesting of sequences and mappings a policy file may use (a JSON schema needs < 20).
MAX_DEPTH = 100
_MERGE_TAG = "tag:yaml.org,2002:merge"
_NO_ANCHOR: Any = None
_NO_ALIASES = "anchors and aliases are not allowed (write each value out in full)"


class RefusedError(yaml.MarkedYAMLError):
    """Valid YAML that a policy file may not use; ``problem`` says what, ``problem_mark`` where."""


class _StrictComposer(Composer):
    """PyYAML's composer with anchors, aliases and deep nesting refused at the event."""

    _depth = 0
    peek_event: Any  # from the parser this is mixed with

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        # PyYAML's compose_node without the anchor table and the path-resolver hooks (no path
        # resolvers are registered for safe loading), so it also costs less per node.
        event = self.peek_event()
        kind = type(event)
        if kind is AliasEvent or event.anchor is not None:
            raise RefusedError(None, None, _NO_ALIASES, event.start_mark)
        if kind is ScalarEvent:
            return self.compose_scalar_node(_NO_ANCHOR)
        if self._depth >= MAX_DEPTH:
            raise RefusedError(None, None, f"at most {MAX_DEPTH} levels of nesting are allowed", event.start_mark)
        self._depth += 1
        try:
            if kind is SequenceStartEvent:
                return self.compose_sequence_node(_NO_ANCHOR)
            return self.compose_mapping_node(_NO_ANCHOR)
        finally:
            self._depth -= 1


class _MemoResolver(Resolver):
    """The YAML 1.1 implicit resolver, memoized on the scalar's text.

    A policy file repeats a handful of plain scalars (``id``, ``type``, ``value``, ``true``) hundreds
    of thousands of times, and PyYAML's resolver runs a list of regular expressions for each; the
    answer depends only on the text, so it is kept (at most ``_MEMO`` entries per load).
    """

    _MEMO = 4096

    def __init__(self) -> None:
        super().__init__()
        self._memo: dict[str, str] = {}

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is not ScalarNode or not implicit[0]:
            return super().resolve(kind, value, implicit)
        tag = self._memo.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(self._memo) < self._MEMO:
                self._memo[value] = tag
        return tag


class _StrictConstructor(SafeConstructor):
    """PyYAML's safe constructor with duplicate and merge keys refused."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, "a mapping", node.start_mark)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                raise RefusedError(None, None, "merge keys (<<) are not allowed", key_node.start_mark)
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in mapping
            except TypeError:
                raise ConstructorError(None, None, "a key that is text or a number",
                                       key_node.start_mark) from None
            if duplicate:
                raise RefusedError(None, None, f"each key once (duplicate key {key_name(key)})",
                                   key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_int(self, node: ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # Python's int-string conversion limit (4,300 digits)
            raise RefusedError(None, None, "integers of at most 4300 digits",
                               node.start_mark) from None


_StrictConstructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:int", _StrictConstructor.construct_yaml_int
)


def key_name(key: Any) -> str:
    """A key as it may be printed: keys are field names, but cap what one could smuggle in."""
    text = str(key)
    return repr(text if len(text) <= 40 else text[:40] + "…")


WITH_LIBYAML: bool = bool(getattr(yaml, "__with_libyaml__", False))

if WITH_LIBYAML:
    from yaml._yaml import CParser

    class StrictLoader(CParser, _StrictComposer, _StrictConstructor, _MemoResolver):
        """libyaml's scanner and parser, then the strict Python composer and constructor."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _StrictComposer.__init__(self)
            _StrictConstructor.__init__(self)
            _MemoResolver.__init__(self)

        # CParser composes in C, out of reach of the anchor check: compose from its events here.
        check_node = _StrictComposer.check_node
        get_node = _StrictComposer.get_node
        get_single_node = _StrictComposer.get_single_node

else:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class StrictLoader(Reader, Scanner, Parser, _StrictComposer, _StrictConstructor, _MemoResolver):  # type: ignore[no-redef]
        """PyYAML's pure-Python scanner and parser, then the strict composer and constructor."""

        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            _StrictComposer.__init__(self)
            _StrictConstructor.__init__(self)
            _MemoResolver.__init__(self)


def compose(text: str) -> tuple[StrictLoader, Node | None]:
    """Parse ``text`` into its node tree (one document); raises :class:`yaml.YAMLError` with a mark."""
    loader = StrictLoader(text)
    try:
        return loader, loader.get_single_node()
    except BaseException:
        loader.dispose()
        raise


def construct(loader: StrictLoader, node: Node | None) -> Any:
    """Build the Python data of a node tree from :func:`compose` and release the loader."""
    try:
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
