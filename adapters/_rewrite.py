"""Rewriting a blocked call where the model will read it again (issue 31; :mod:`tpguard.stages.feedback`).

Framework-neutral helpers of the two adapters that rewrite memory (LangChain's middleware, the
smolagents step callback): the text of a model's reply may repeat the call it made (a local model
writes ``<tool_call>{…}</tool_call>``, OpenAI-style replies keep raw ``tool_calls`` in
``additional_kwargs``), so every string leaf the placeholder call changed is replaced there too,
raw and JSON-escaped. O(reply text × changed leaves).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["changed_leaves", "placed_arguments", "rewrite_text"]


def placed_arguments(original: Mapping[str, Any], checked: Mapping[str, Any],
                     placeholder: Mapping[str, Any]) -> dict[str, Any]:
    """``original`` with every item the guard checked replaced by its placeholder item, in the
    original order. The placeholder call keeps ``checked``'s shape and order but may rename a key
    that held an atom, so items are paired by position: a merge by key would keep the raw key."""
    by_key = dict(zip(checked, placeholder.items(), strict=False))
    return dict(by_key.get(k, (k, v)) for k, v in original.items())


def changed_leaves(old: Any, new: Any) -> Iterator[tuple[str, str]]:
    """``(old text, new text)`` of every string leaf that differs between two argument trees of
    the same shape (a placeholder call keeps the shape; keys may change, values are compared)."""
    if isinstance(old, str) and isinstance(new, str):
        if old != new and old:
            yield old, new
    elif isinstance(old, Mapping) and isinstance(new, Mapping):
        for (ko, vo), (kn, vn) in zip(old.items(), new.items(), strict=False):
            yield from changed_leaves(ko, kn)
            yield from changed_leaves(vo, vn)
    elif isinstance(old, list | tuple) and isinstance(new, list | tuple):
        for vo, vn in zip(old, new, strict=False):
            yield from changed_leaves(vo, vn)


def rewrite_text(text: str, pairs: list[tuple[str, str]]) -> str:
    """``text`` with each changed leaf replaced (as written, and as a JSON string body)."""
    for old, new in pairs:
        text = text.replace(old, new)
        escaped = json.dumps(old)[1:-1]
        if escaped != old:
            text = text.replace(escaped, json.dumps(new)[1:-1])
    return text
